"""Files in and out: TOML read with located errors; outputs written atomically.

An output goes to a temporary file beside the target and is then renamed, so a
failure or an interrupt never leaves a half-written file at the destination.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from soundscape.errors import SoundscapeError

__all__ = ["atomic_path", "read_toml", "write_bytes", "write_text"]


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; rename it onto ``target`` on success.

    The temporary file keeps the target's suffix so that writers which infer the
    format from the name (soundfile, matplotlib) still work.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=f".part{target.suffix}",
                               dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp makes the file private (0600); give it the mode a plain open() would
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` as UTF-8 to ``target`` atomically and return the path."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


def write_bytes(target: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically and return the path."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return Path(target)


def read_toml(path: str | os.PathLike[str],
              error: type[SoundscapeError] = SoundscapeError) -> dict[str, Any]:
    """Parse the TOML file ``path``; problems raise ``error`` as ``FILE:LINE: …``.

    Parameters
    ----------
    path : path-like
    error : SoundscapeError subclass
        The error of the concern reading the file (SiteError, InstrumentError …).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as problem:
        raise error(f"{path}: no such file") from problem
    except UnicodeDecodeError as problem:
        raise error(f"{path}: not UTF-8 text (byte {problem.start}); TOML files are "
                    "UTF-8") from problem
    except OSError as problem:
        raise error(f"{path}: cannot be read: {problem.strerror or problem}") from problem
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        line = re.search(r"line (\d+)", str(problem))
        raise error(f"{path}:{line.group(1) if line else 1}: not valid TOML: "
                    f"{problem}") from problem
