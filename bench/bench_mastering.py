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
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import tempfile
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("render", type=Path)
    parser.add_argument("--target", type=float, default=-23.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
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
