"""CPU of the spatialiser on the notes heard alone (steps of walks, arrows landing, targets).

Run: ``PYTHONPATH=. .venv/bin/python bench/bench_heard.py [--from S --to S] [--repeat R]
[--layout L]``. Sequences the rite (seed 0), builds the render's ``Buses`` (the walled court
``bare``, the listener at ``gong_wei``) and makes the dry note of every event that is not
``Buses.lined`` first (not timed); then times, with ``time.process_time`` on one BLAS
thread (as the render), a fresh ``Spatialiser`` turning each into its heard note (its
responses made anew: min of ``--repeat`` runs), and hashes what it gives (sha256 of
start, signals and mix): the same hash is the same sound to the bit.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections import Counter

import numpy as np
from threadpoolctl import threadpool_limits

from soundscape import sequence
from soundscape.cli._common import surroundings_for
from soundscape.site.courtyard import load_site
from soundscape.site.listeners import listener_at
from soundscape.sound.buses import Buses
from soundscape.sound.notes import SynthVoice
from soundscape.sound.panning import make_panner
from soundscape.sound.spatialise import Spatialiser, fft_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="from_section")
    parser.add_argument("--to", dest="to_section")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layout", default="stereo")
    args = parser.parse_args()
    performance = sequence.perform_from_file(seed=0, from_section=args.from_section,
                                             to_section=args.to_section)
    site = load_site()
    surroundings = surroundings_for(site, "bare")
    listener = listener_at(site, "gong_wei", None)
    panner = make_panner(args.layout)
    buses = Buses(performance, listener, panner=panner, surroundings=surroundings,
                  sample_rate=48000, seed=0, voice=SynthVoice(surroundings.reference_db),
                  cache_bytes=1 << 30, channels=len(panner.channels), block_frames=48000)
    jobs = []
    for index, event in enumerate(performance.events):
        if buses.lined(index):
            continue
        heard = buses.bus(index).heard
        key, variant, point, face = heard.key(index)
        mono = heard.dry_notes(event, performance.sources[event.source], key, variant)
        if mono.size:
            jobs.append((heard.spatialiser.sample_rate, mono, point, listener.at(event.time),
                         face))
    sizes = Counter((rate, fft_size(len(mono))) for rate, mono, *_ in jobs)
    print(f"{len(jobs)} notes heard alone, {sum(len(j[1]) / j[0] for j in jobs):.0f} s of "
          f"dry sound; (rate, FFT size ~): {sizes.most_common(6)}")
    best, digest = float("inf"), ""
    with threadpool_limits(1, user_api="blas"):
        for _ in range(args.repeat):
            spatialisers = {rate: Spatialiser(panner, surroundings, rate)
                            for rate in {job[0] for job in jobs}}
            hashed = hashlib.sha256()
            start = time.process_time()
            for rate, mono, point, heard_by, face in jobs:
                onset, signals, mix = spatialisers[rate](mono, point, heard_by, face)
                hashed.update(np.int64(onset).tobytes())
                hashed.update(signals.tobytes())
                if mix is not None:
                    hashed.update(mix.tobytes())
            best = min(best, time.process_time() - start)
            digest = hashed.hexdigest()[:16]
    print(f"spatialiser cpu {best:.3f} s, {1e3 * best / max(len(jobs), 1):.2f} ms/note  "
          f"sha256 {digest}")


if __name__ == "__main__":
    main()
