"""Notes synthesized per second, per instrument and model.

Run: ``.venv/bin/python bench/bench_synth.py [--notes 40] [--sample-rate 48000] [ids…]``.
Each instrument plays ``--notes`` notes of 0.5 s (its first articulation, pitches
spread over its set or range, velocity 0.8), timed with ``time.process_time`` (the
CPU this process spends: steadier than the wall clock on a shared machine); a model
whose notes are long by nature plays notes of its own length (a walk of 3 s, a pour of
2 s, a 30 s bed segment), as many as make the same seconds of audio (at least two).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from soundscape.music.instruments import list_instruments, load_instrument
from soundscape.music.tuning import default_tuning
from soundscape.sound.synth import render_note

#: Note length by model, seconds (default 0.5).
NOTE_S = {"footstep": 3.0, "cloth": 1.5, "liquid": 2.0, "clatter": 1.5, "ambience": 30.0}


def pitches(instrument, count: int) -> list[float | None]:
    tuning = default_tuning()
    if instrument.pitches:
        hz = [tuning.pitch(name).hz for name in instrument.pitches]
    elif instrument.range_hz is not None and instrument.default_hz is None:
        low, high = instrument.range_hz
        hz = list(np.geomspace(low, high, 8))
    else:
        hz = [None]
    return [hz[i % len(hz)] for i in range(count)]


def bench(instrument_id: str, *, notes: int, sample_rate: int) -> tuple[str, float, float]:
    """(model, notes per second, seconds of audio per second of compute)."""
    instrument = load_instrument(instrument_id)
    rng = np.random.default_rng(0)
    articulation = instrument.articulations[0]
    length = NOTE_S.get(instrument.model, 0.5)
    notes = max(2, round(notes * 0.5 / length))
    # One untimed note first: imports and one-off tables (pypinyin's dictionary) load here.
    render_note(instrument, hz=pitches(instrument, 1)[0], velocity=0.8, duration=0.5,
                articulation=articulation, sample_rate=sample_rate, rng=rng, lyric="鳴")
    audio_s = 0.0
    start = time.process_time()
    for hz in pitches(instrument, notes):
        out = render_note(instrument, hz=hz, velocity=0.8, duration=length,
                          articulation=articulation, sample_rate=sample_rate, rng=rng,
                          lyric="鳴")
        audio_s += out.size / sample_rate
    elapsed = time.process_time() - start
    return instrument.model, notes / elapsed, audio_s / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=40)
    parser.add_argument("--sample-rate", type=int, default=48000)
    parser.add_argument("instruments", nargs="*")
    args = parser.parse_args()
    print(f"{'instrument':<12} {'model':<10} {'notes/s':>9} {'ms/note':>8} {'audio s/s':>10}")
    for ident in args.instruments or list_instruments():
        model, rate, realtime = bench(ident, notes=args.notes, sample_rate=args.sample_rate)
        print(f"{ident:<12} {model:<10} {rate:9.1f} {1000 / rate:8.2f} {realtime:10.1f}")


if __name__ == "__main__":
    main()
