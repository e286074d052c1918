"""A process killed with SIGKILL between the renames of a set of files: it places the first
file of the set and is killed as it comes to the second, leaving the set mixed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_KILLED_AT_THE_SECOND_RENAME = """
import os, signal, sys
from pathlib import Path
from soundscape import fileio

real, renames = fileio._rename, []
def rename(source, target):
    if Path(target).name.startswith("."):  # the journal
        return real(source, target)
    if renames:
        os.kill(os.getpid(), signal.SIGKILL)  # kill -9, one file placed, the other not
    renames.append(target)
    real(source, target)
fileio._rename = rename
folder = Path(sys.argv[1])
"""


def killed_among_renames(writes: str, folder: Path) -> None:
    """Run ``writes`` (Python writing a set of files into ``folder``, given as ``folder``)
    in a process of its own, killed at the set's second rename."""
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", _KILLED_AT_THE_SECOND_RENAME + writes,
                          str(folder)], env=env, capture_output=True, timeout=120)
    assert run.returncode == -9, run.stderr.decode(errors="replace")[-2000:]
