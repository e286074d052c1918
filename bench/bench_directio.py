"""Benchmark writing and reading a render-sized file through the page cache and past it.

A render writes its raw float32 file and its output once and reads the raw file once;
``soundscape.sound.directio`` does it with ``O_DIRECT``. This writes ``--gb`` of float32
blocks (the size of pass 1's, 16 channels) through a plain file and through a
``DirectWriter``, then reads each back as pass 2 does (plain ``np.fromfile`` against
``directio.read_at``; the plain file's pages are still in the cache, as pass 1 left them for
pass 2 when it wrote through the cache), then the file written past the cache through it
(pages the kernel must find), and prints the wall and system CPU time of each, one after
the other, in the folder given (the disk a render would write to)::

    .venv/bin/python bench/bench_directio.py                 # 3 GB in the current folder
    .venv/bin/python bench/bench_directio.py --gb 1 --dir /tmp

Measured 2026-12-04 on the project's 2-core virtual machine: docs/render.md, "2026-12-04,
third: the kernel's copy into the page cache".
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from soundscape.sound import directio

BLOCK_FRAMES, CHANNELS = 9600, 16


def _timed(name: str, work: Callable[[], None]) -> None:
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    work()
    after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - start
    print(f"{name:28s} wall {wall:6.2f} s  user {after.ru_utime - before.ru_utime:6.2f} s  "
          f"system {after.ru_stime - before.ru_stime:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=3.0, help="Bytes to write, in GB.")
    parser.add_argument("--dir", type=Path, default=Path.cwd(), help="Folder to write in.")
    args = parser.parse_args()
    block = np.random.default_rng(0).standard_normal((BLOCK_FRAMES, CHANNELS)
                                                     ).astype("<f4")
    blocks = max(1, round(args.gb * 1e9 / block.nbytes))
    read_bytes = 4 * block.nbytes
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        plain, direct = Path(folder) / "plain.f32", Path(folder) / "direct.f32"

        def write_plain() -> None:
            with open(plain, "wb") as f:
                for _ in range(blocks):
                    f.write(block.data)

        def write_direct() -> None:
            with directio.DirectWriter(direct) as f:
                for _ in range(blocks):
                    f.write(block.data)

        def read_plain(path: Path) -> None:
            with open(path, "rb") as f:
                while np.fromfile(f, dtype="<f4", count=read_bytes // 4).size:
                    pass

        def read_direct() -> None:
            at = 0
            while len(directio.read_at(direct, at, read_bytes)):
                at += read_bytes

        print(f"{blocks * block.nbytes / 1e9:.2f} GB in {folder}")
        _timed("write, through the cache", write_plain)
        _timed("write, past it (O_DIRECT)", write_direct)
        _timed("read, through the cache", lambda: read_plain(plain))
        _timed("read, past it (O_DIRECT)", read_direct)
        _timed("read, through the cache, of", lambda: read_plain(direct))
        print("  the file written past it (its pages not in the cache)")


if __name__ == "__main__":
    main()
