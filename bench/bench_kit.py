"""Benchmark: a museum kit's build, its wall time and the peak memory of all its processes.

Runs ``soundscape kit --programme P --layout L -o <temporary folder>`` as a user runs it
and samples the summed proportional set size (PSS) of the command and every process under
it (its pool workers, the render's note helper) every 0.3 s: PSS splits the pages a forked
process shares with its parent, so the sum is the memory the build really holds (RSS
would count them twice). The note cache is off (``SOUNDSCAPE_CACHE=off``), as in
``bench_render.py``. Issue 27 asks the whole rite's kit (the default ``rite`` programme,
one zone, stereo) to stay under 1.5 GiB.

Run: ``python bench/bench_kit.py`` (the whole rite: about two minutes on two cores),
``--programme yuebin --layout 5.1``. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_render import _pss_kib

TARGET_MIB = 1536


def _tree(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    found, i = [pid], 0
    while i < len(found):
        for task in Path(f"/proc/{found[i]}/task").glob("*"):
            with contextlib.suppress(OSError):  # the task or the process has just ended
                found += [int(child) for child in (task / "children").read_text().split()]
        i += 1
    return found


def run(command: list[str], env: dict[str, str], every_s: float = 0.3) -> dict:
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    peak, at, per_process = 0, 0.0, []
    while process.poll() is None:
        sizes = [(pid, _pss_kib(pid)) for pid in _tree(process.pid)]
        if sum(size for _, size in sizes) > peak:
            peak, at, per_process = (sum(size for _, size in sizes),
                                     time.perf_counter() - start, sizes)
        time.sleep(every_s)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode})")
    return {"wall_s": time.perf_counter() - start, "peak_pss_mib": peak / 1024,
            "peak_at_s": at, "per_process_mib": [size / 1024 for _, size in per_process]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programme", default="rite")
    parser.add_argument("--layout", default="stereo")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    soundscape = Path(sys.executable).with_name("soundscape")
    env = {**os.environ, "SOUNDSCAPE_CACHE": "off"}
    with tempfile.TemporaryDirectory(prefix="bench-kit-") as folder:
        command = [str(soundscape) if soundscape.exists() else shutil.which("soundscape")
                   or "soundscape", "kit", "--programme", args.programme, "--layout",
                   args.layout, "--jobs", str(args.jobs), "-o", folder]
        result = run(command, env)
        written = sum(path.stat().st_size for path in Path(folder).rglob("*") if path.is_file())
    print(f"$ SOUNDSCAPE_CACHE=off {' '.join(command[1:-1])} <folder>")
    print(f"  {result['wall_s']:.1f} s wall, {written / 1e9:.2f} GB written")
    print(f"  peak summed PSS {result['peak_pss_mib']:.0f} MiB at {result['peak_at_s']:.0f} s "
          f"(per process: {', '.join(f'{m:.0f}' for m in result['per_process_mib'])} MiB); "
          f"issue 27's bound for the whole rite's kit: {TARGET_MIB} MiB")


if __name__ == "__main__":
    main()
