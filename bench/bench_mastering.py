"""CPU of mastering's two passes (pass 1's keeper, pass 2's gain, limiter and writing).

Run: ``.venv/bin/python bench/bench_mastering.py RENDER.wav [--target LUFS] [--repeat R]``
with a stereo render of this project (e.g. ``soundscape render --from s18 --to s18 -o
x.wav``). Its samples divided by the gain in its ``.loudness.json`` stand for the raw
render; they go in one-second blocks through ``mastering.master`` with one worker (both
passes in this process, so ``time.process_time`` counts every thread), each pass timed
(min of ``--repeat`` runs), and the file written and the report are hashed (sha256), to
check that a change made only for speed keeps them. ``--target -16`` makes the limiter
work on a section the −23 LUFS default leaves unlimited. A/B: run it from two checkouts
(``PYTHONPATH=<checkout>``) on the same WAV.

``--pass2 FOLDER`` times pass 2 alone, as the render runs it: pass 1 is run once (the WAV
read in blocks, so a whole rite's fits; its raw file and measurements kept in FOLDER for
the next runs, of either checkout), then pass 2 ``--repeat`` times, reading the raw file
past the page cache as the render does (``directio``), each after the last one's output is
deleted and the disk has trimmed it (``sync``: the file system discards freed blocks), with
glibc's malloc set as the command sets it, and ``--workers`` (2 by default, as the
command's ``--jobs 2``: the limiter's gains made in a process of their own, whose CPU the
user and system times count). It prints wall, user and system CPU of each run and each
thread's CPU (Linux: /proc), so the thread that bounds the wall shows on a busy machine
too. E.g. the whole rite: ``--pass2 /tmp/p2 --target -21 rite.wav`` (a render's output is
limited already: a target 2 dB over it makes the limiter work again).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import pickle
import resource
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import soundfile

from soundscape.sound import mastering
from soundscape.sound.audiofile import open_writer

RATE, BLOCK = 48000, 48000


def raw_blocks(render: Path) -> list[np.ndarray]:
    """The render's samples over its gain, float32, in one-second blocks."""
    gain_db = json.loads(Path(f"{render}.loudness.json").read_text())["gain_db"]
    x, rate = soundfile.read(render, dtype="float32", always_2d=True)
    if rate != RATE:
        raise SystemExit(f"{render}: {rate} Hz, this bench takes {RATE}")
    x *= np.float32(10 ** (-gain_db / 20))
    return [x[i:i + BLOCK] for i in range(0, len(x), BLOCK)]


def run(blocks: list[np.ndarray], target: float, folder: Path) -> tuple[dict, str]:
    """CPU seconds per pass and a digest of the file and the report."""
    times: dict[str, float] = {}

    @contextlib.contextmanager
    def stage(text: str):
        start = time.process_time()
        yield
        key = text.split(":")[0]
        times[key] = times.get(key, 0.0) + time.process_time() - start

    width = blocks[0].shape[1]
    how = mastering.Mastering(RATE, width, width, np.ones(width), mastering.measurement(width, 0),
                              BLOCK, target, -1.0, stage=stage)
    out = folder / "out.wav"

    @contextlib.contextmanager
    def outputs(frames: int):
        with open_writer(out, sample_rate=RATE, channels=width, file_format="wav", bits="24",
                         frames=frames) as writer:
            yield [writer]

    report, _ = mastering.master(iter(blocks), folder / "raw.f32", how, outputs)
    digest = hashlib.sha256(out.read_bytes() + repr(report).encode()).hexdigest()[:16]
    return times, digest


def _first_pass(render: Path, folder: Path) -> tuple[mastering._PassOne, int]:
    """Pass 1 on the render's samples over its gain (kept in ``folder`` for later runs)."""
    raw, kept = folder / "raw.f32", folder / "pass1.pickle"
    width = soundfile.info(render).channels
    if kept.exists() and raw.exists():
        return pickle.loads(kept.read_bytes()), width
    gain_db = json.loads(Path(f"{render}.loudness.json").read_text())["gain_db"]
    down = np.float32(10 ** (-gain_db / 20))
    blocks = (block * down for block in soundfile.blocks(render, blocksize=BLOCK,
                                                         dtype="float32", always_2d=True))
    first = mastering._pass_one(blocks, raw, mastering.measurement(width, 0),
                                mastering.LoudnessMeter(RATE, np.ones(width)))
    kept.write_bytes(pickle.dumps(first))
    return first, width


def _thread_cpu() -> dict[int, float]:
    """CPU seconds of each of this process's threads so far (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/self/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
            seconds[int(task)] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds


class _ThreadWatch:
    """Each thread's CPU over a ``with`` block, by name (the pass's pool threads end with
    it, so they are sampled while it runs); ``used``: (seconds, name), largest first."""

    def __enter__(self) -> _ThreadWatch:
        self.before, self.seen, self.names = _thread_cpu(), {}, {}
        self.done = threading.Event()
        self.watcher = threading.Thread(target=self._watch, name="watcher")
        self.watcher.start()
        return self

    def _watch(self) -> None:
        while not self.done.wait(0.02):
            self.seen.update(_thread_cpu())
            self.names.update((t.native_id, t.name) for t in threading.enumerate()
                              if t.native_id is not None)

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.watcher.join()
        self.seen.update(_thread_cpu())
        self.used = sorted(((cpu - self.before.get(tid, 0.0), self.names.get(tid, str(tid)))
                            for tid, cpu in self.seen.items()
                            if tid != self.watcher.native_id), reverse=True)


def _usage() -> tuple[float, float]:
    """User and system CPU seconds of this process and its ended children (pass 2's
    limiter process, with two workers)."""
    me, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return me.ru_utime + children.ru_utime, me.ru_stime + children.ru_stime


def pass_two(render: Path, folder: Path, target: float, repeat: int, workers: int = 2) -> None:
    """Time pass 2 alone (see the module's doc)."""
    from soundscape.malloc import one_arena, reuse_freed_memory

    reuse_freed_memory()  # as the soundscape command does
    one_arena()
    folder.mkdir(parents=True, exist_ok=True)
    first, width = _first_pass(render, folder)
    how = mastering.Mastering(RATE, width, width, np.ones(width), mastering.measurement(width, 0),
                              BLOCK, target, -1.0, workers=workers)
    ceiling = how.ceiling_dbtp - mastering.LIMITER_MARGIN_DB
    gain_db = target - first.meter.integrated()
    limit = first.peak.peak_dbtp + gain_db > ceiling
    if limit:
        gain_db = mastering.likely_gain(first, gain_db, target, ceiling)
    loud = mastering._loud_blocks(first.peaks, 10 ** (gain_db / 20), ceiling)
    print(f"gain {gain_db:+.2f} dB, limiter {'on' if limit else 'off'}, "
          f"{int(loud.sum())} of {len(loud)} blocks loud")
    out = folder / "out.wav"
    for _ in range(repeat):
        # the last run's output deleted, and the disk's trim of it waited for (the file
        # system discards freed blocks as it commits): not in this run's time
        out.unlink(missing_ok=True)
        os.sync()
        with _ThreadWatch() as threads:
            start, used = time.monotonic(), _usage()
            with open_writer(out, sample_rate=RATE, channels=width, file_format="wav",
                             bits="24", frames=first.frames) as writer:
                report = mastering._pass_two(folder / "raw.f32", how, gain_db, ceiling,
                                             limit=limit, write=[writer], reference=first)
            wall, now = time.monotonic() - start, _usage()
        print(f"pass 2: wall {wall:.2f} s, user {now[0] - used[0]:.2f} s, "
              f"system {now[1] - used[1]:.2f} s (with the helper process's); threads: "
              + ", ".join(f"{name} {cpu:.2f}" for cpu, name in threads.used if cpu >= 0.01))
    digest = hashlib.sha256()
    with open(out, "rb") as f:
        while chunk := f.read(64 << 20):
            digest.update(chunk)
    digest.update(repr(report).encode())
    print(f"output + report sha256 {digest.hexdigest()[:16]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("render", type=Path)
    parser.add_argument("--target", type=float, default=-23.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pass2", type=Path, metavar="FOLDER",
                        help="time pass 2 alone, its raw file and pass 1 kept in FOLDER")
    parser.add_argument("--workers", type=int, default=2,
                        help="--pass2: mastering's workers (2, as the render's --jobs 2)")
    args = parser.parse_args()
    if args.pass2 is not None:
        pass_two(args.render, args.pass2, args.target, args.repeat, args.workers)
        return
    blocks = raw_blocks(args.render)
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):
            times, digest = run(blocks, args.target, Path(folder))
            best = {k: min(v, best.get(k, v)) for k, v in times.items()}
    rite = 9060 / (len(blocks) * BLOCK / RATE)  # the whole rite's seconds of audio
    for stage, seconds in best.items():
        print(f"{stage}: {seconds:.3f} s CPU ({seconds * rite:.1f} s at this rate per rite)")
    print(f"output + report sha256 {digest}")


if __name__ == "__main__":
    main()
