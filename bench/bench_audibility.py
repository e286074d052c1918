"""Each action sound as a person beside the doer hears it over the place's bed (issue 25).

Sequences the rite (seed 0), takes ``--per-class`` events of every action and archery
class (instrument and articulation), evenly spread over the rite, and measures each with
``soundscape.sound.audibility.over_bed``: the event alone and the place's sounds alone,
rendered through the court (``--court``) at a listener 1 m from where the sound is made,
compared octave by octave over the sound's body: in its own octave where it stands
farthest over the place (of those carrying its energy), and in its loudest octave; over the
bed with the creatures' calls, and over the bed alone. Prints per class the median and
lowest margin over both and how many are under 6 dB (the goal: none); then, for each
masker, each of those with its time, band and the place's level, and the distributions::

    .venv/bin/python bench/bench_audibility.py                 # 12 a class, ~4 min
    .venv/bin/python bench/bench_audibility.py --per-class 4 --cues cues/xiangshe.toml

A benchmark, not a test: every event is three short renders (itself, the bed, the calls).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

GOAL_DB = 6.0
GROUPS = ("action", "archery")


def classes(performance) -> dict[tuple[str, str], list[int]]:
    """Event indexes of each action and archery class, in time order."""
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, event in enumerate(performance.events):
        source = performance.sources[event.source]
        if source.group in GROUPS:
            found[(source.instrument, event.articulation)].append(i)
    return dict(sorted(found.items()))


def spread(indexes: list[int], count: int) -> list[int]:
    """``count`` of ``indexes`` evenly spread (the first and the last among them)."""
    if count >= len(indexes):
        return list(indexes)
    return [indexes[round(k * (len(indexes) - 1) / max(count - 1, 1))] for k in range(count)]


def main() -> None:
    from soundscape.sequence.planner import perform_from_file
    from soundscape.site.courtyard import load_site
    from soundscape.sound.audibility import over_bed_and_calls
    from soundscape.sound.court import load_court

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=12, help="events a class (12)")
    parser.add_argument("--cues", default=None, help="a cue sheet (the bundled 大射's)")
    parser.add_argument("--court", default="bare", help="bare, damped or none")
    parser.add_argument("--distance", type=float, default=1.0, help="metres (1)")
    args = parser.parse_args()
    performance = perform_from_file(args.cues, seed=0)
    site = load_site(rite=performance.info.site or None)  # where it was sequenced
    court = None if args.court == "none" else load_court(site, args.court)
    heard = {calls: [] for calls in (True, False)}
    for (instrument, articulation), indexes in classes(performance).items():
        picked = spread(indexes, args.per_class)
        for with_calls, alone in over_bed_and_calls(performance, picked, site=site, court=court,
                                                    distance=args.distance):
            heard[True].append((instrument, articulation, with_calls))
            heard[False].append((instrument, articulation, alone))
        values = np.array([h.margin_db for *_, h in heard[True][-len(picked):]])
        print(f"{instrument} {articulation}: {len(indexes)} events, {values.size} measured, "
              f"over the place median {np.median(values):+.1f} dB, lowest "
              f"{values.min():+.1f} dB, {int(np.sum(values < GOAL_DB))} under "
              f"{GOAL_DB:.0f} dB", flush=True)
    for calls, found in heard.items():
        over = "the bed and the calls" if calls else "the bed"
        for instrument, articulation, h in found:
            if h.margin_db < GOAL_DB:
                event = performance.events[h.index]
                print(f"  under {over}: {instrument} {articulation} at "
                      f"{event.time / 60:.1f} min, {h.band_hz:.0f} Hz octave: "
                      f"{h.action_db:.1f} dB SPL against {h.bed_db:.1f}")
        for name, values in (("in its own octave", [h.margin_db for *_, h in found]),
                             ("in its loudest octave",
                              [h.loudest_margin_db for *_, h in found])):
            print(f"over {over}, all {len(values)}, {name}: median {np.median(values):+.1f} "
                  f"dB, 10th percentile {np.percentile(values, 10):+.1f} dB, lowest "
                  f"{min(values):+.1f} dB, "
                  f"{int(np.sum(np.array(values) < GOAL_DB))} under {GOAL_DB:.0f} dB  "
                  f"(goal: none)")

if __name__ == "__main__":
    main()
