"""CPU of the instruments' and actions' notes as a render makes them, per model.

Run: ``.venv/bin/python bench/bench_notes.py [--from S --to S] [--every N] [--repeat R]``.
Sequences the rite (seed 0), binds the render's own ``SynthVoice`` and makes each distinct
(note key, variant) of the events of the models below once, through ``DryNotes`` at the
rate the buses make it (``made_at``) with no cache: the same notes by the same path as a
render with ``SOUNDSCAPE_CACHE=off`` (which makes each once and keeps it in memory).
``--every N`` takes every N-th distinct note of each model (a sample, for a quick run).
Each model's notes are timed with ``time.process_time`` (one BLAS thread, as the render;
min of ``--repeat`` runs), and their bytes hashed (sha256 of the float32 notes in order),
to check that a change made only for speed keeps them.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections import defaultdict

from threadpoolctl import threadpool_limits

from soundscape import sequence
from soundscape.malloc import reuse_freed_memory
from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, event_variants

#: The models of the instruments and the actions (not the voice, the bed or the calls).
MODELS = ("modal", "membrane", "string", "reed", "pipe", "impact", "footstep", "cloth", "arrow",
          "bowstring", "clatter", "tally", "vessel", "liquid", "sampler")


def notes_by_model(performance, voice, sample_rate: int, every: int):
    """{model: [(dry, event, source, key, variant)]}: each distinct note once, in order."""
    dries: dict[int, DryNotes] = {}
    variants = None
    out: dict[str, list] = defaultdict(list)
    seen = set()
    for index, event in enumerate(performance.events):
        source = performance.sources[event.source]
        model = voice._instrument(source.instrument).model
        rate = voice.made_at(source, sample_rate)
        dry = dries.get(rate)
        if dry is None:
            dry = dries[rate] = DryNotes(voice, rate, 0, ByteLru(0))
        if variants is None:
            variants = event_variants(performance, dry, 0)
        if model not in MODELS:
            continue
        key = dry.key(event, source)
        if (rate, key, variants[index]) in seen:
            continue
        seen.add((rate, key, variants[index]))
        out[model].append((dry, event, source, key, variants[index]))
    return {model: notes[::every] for model, notes in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="from_section")
    parser.add_argument("--to", dest="to_section")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--sample-rate", type=int, default=48000)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    reuse_freed_memory()  # as the soundscape command does: no page faults the render has not
    performance = sequence.perform_from_file(seed=0, from_section=args.from_section,
                                             to_section=args.to_section)
    voice = SynthVoice().bind(performance, 0)
    found = notes_by_model(performance, voice, args.sample_rate, args.every)
    for notes in found.values():  # imports and one-off tables out of the timing
        dry, event, source, key, variant = notes[0]
        dry(event, source, key, variant)
    with threadpool_limits(1, user_api="blas"):  # as the render makes its notes
        _timed(found, args)


def _timed(found, args) -> None:
    wanted = args.models.split(",")
    total = 0.0
    whole = hashlib.sha256()
    print(f"{'model':10s} {'notes':>6s} {'audio s':>8s} {'cpu s':>7s} {'ms/note':>8s}  sha256")
    for model in sorted(found, key=lambda m: (m not in wanted, m)):
        if model not in wanted:
            continue
        notes = found[model]
        best = float("inf")
        for _ in range(args.repeat):
            digest, audio = hashlib.sha256(), 0.0
            start = time.process_time()
            for dry, event, source, key, variant in notes:
                mono = dry(event, source, key, variant)
                digest.update(mono.tobytes())
                audio += mono.size / dry.sample_rate
            best = min(best, time.process_time() - start)
        total += best
        whole.update(digest.digest())
        print(f"{model:10s} {len(notes):6d} {audio:8.1f} {best:7.2f} "
              f"{1e3 * best / len(notes):8.2f}  {digest.hexdigest()[:16]}")
    print(f"{'all':10s} {'':6s} {'':8s} {total:7.2f} {'':8s}  {whole.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
