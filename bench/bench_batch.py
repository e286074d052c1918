"""Benchmark: a batch of 8 renders (``soundscape batch``) against 8 sequential
``soundscape render`` calls of the same renders, and a check that both wrote the same
audio bytes.

The 8 renders: one part of the rite (default ``s09``, 主人獻公, with 乃奏肆夏) heard
from four places in two layouts (stereo and 5.1). ``soundscape render`` sequences the
rite and writes MIDI on every call and uses its helper process (``--jobs 2``); the batch
runs ``--jobs`` worker processes that sequence each hypothesis once per worker and
share the synthesised dry notes between the renders a worker makes.

Run: ``python bench/bench_batch.py [--section s09] [--jobs 2]`` (minutes; two cores).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLACES = ("gong_wei", "bin_wei", "zhongting", "men")
LAYOUTS = ("stereo", "5.1")


def _soundscape() -> str:
    found = Path(sys.executable).with_name("soundscape")
    return str(found) if found.exists() else shutil.which("soundscape") or "soundscape"


def _plan(folder: Path, section: str) -> Path:
    lines = ['out = "batch"', "[defaults]", f'from = "{section}"', f'to = "{section}"']
    for place in PLACES:
        for layout in LAYOUTS:
            lines += ["[[render]]", f'id = "{place}.{layout}"', f'listener = "{place}"',
                      f'layout = "{layout}"']
    path = folder / "plan.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--section", default="s09")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tool = _soundscape()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        folder = Path(tmp)
        batch_s = _timed([tool, "batch", str(_plan(folder, args.section)), "--jobs",
                          str(args.jobs)], folder)
        print(f"soundscape batch --jobs {args.jobs}: {batch_s:.1f} s", flush=True)
        calls_s = 0.0
        for place in PLACES:
            for layout in LAYOUTS:
                calls_s += _timed([tool, "render", "--from", args.section, "--to",
                                   args.section, "--listener", place, "--layout", layout,
                                   "--quiet", "--out", f"alone/{place}.{layout}.wav"], folder)
        same = all((folder / "batch" / f"{p}.{x}.wav").read_bytes()
                   == (folder / "alone" / f"{p}.{x}.wav").read_bytes()
                   for p in PLACES for x in LAYOUTS)
    print(f"8 renders of {args.section} ({len(PLACES)} places × {', '.join(LAYOUTS)}):")
    print(f"  soundscape batch --jobs {args.jobs}: {batch_s:7.1f} s")
    print(f"  8 × soundscape render:        {calls_s:7.1f} s")
    print(f"  speed-up {calls_s / batch_s:.2f}×; same audio bytes: {same}")


if __name__ == "__main__":
    main()
