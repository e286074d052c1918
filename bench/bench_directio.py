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

``--pass-two READ WRITE`` times instead what pass 2 asks of the disk, with no computing:
reading a raw file of READ GB past the cache (``read_at``, as ``rawfile.chunks`` does)
while a ``DirectWriter`` writes WRITE GB of output beside it, on two threads. Its wall time
is the floor of a render's pass 2 (a render's raw file holds its sounding columns as
float32, 4 bytes a sample; its 24-bit output, channels × 3 bytes × frames)::

    .venv/bin/python bench/bench_directio.py --pass-two 2.5 4.5   # s18's Atmos master

Measured 2026-12-04 on the project's 2-core virtual machine: docs/render.md, "2026-12-04,
third: the kernel's copy into the page cache".
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import threading
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
    parser.add_argument("--pass-two", type=float, nargs=2, metavar=("READ", "WRITE"),
                        help="Read READ GB past the cache while writing WRITE GB beside it.")
    args = parser.parse_args()
    if args.pass_two:
        pass_two(args.dir, *args.pass_two)
        return
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


#: Bytes of one read (pass 2 reads four of pass 1's one-second blocks at a time) and of one
#: write (their 24-bit samples).
READ_BYTES, WRITE_BYTES = 8 << 20, 19 << 20


def pass_two(where: Path, read_gb: float, write_gb: float) -> None:
    """Time reading ``read_gb`` of a raw file while ``write_gb`` is written beside it."""
    data = np.random.default_rng(0).integers(0, 256, WRITE_BYTES, dtype=np.uint8)
    with tempfile.TemporaryDirectory(dir=where) as folder:
        raw, out = Path(folder) / "raw.f32", Path(folder) / "out.wav"
        with directio.DirectWriter(raw) as f:  # pass 1's file, not timed
            for _ in range(max(1, round(read_gb * 1e9 / len(data)))):
                f.write(data.data)

        def read() -> None:
            at = 0
            while len(directio.read_at(raw, at, READ_BYTES)):
                at += READ_BYTES

        def write() -> None:
            with directio.DirectWriter(out) as f:
                for _ in range(max(1, round(write_gb * 1e9 / len(data)))):
                    f.write(data.data)

        def both() -> None:
            reader = threading.Thread(target=read)
            reader.start()
            write()
            reader.join()

        print(f"pass 2's disk work in {folder}: {raw.stat().st_size / 1e9:.2f} GB read, "
              f"{write_gb:.2f} GB written")
        _timed("read and write, side by side", both)


if __name__ == "__main__":
    main()
