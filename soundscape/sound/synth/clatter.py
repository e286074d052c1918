"""Bamboo shafts knocking together: arrows gathered, a bundle laid on the 楅.

A bamboo arrow is a free-free bar: its bending modes stand at 1 : 2.756 : 5.404
: 8.933 : 13.34 of the first (Euler–Bernoulli beam, free ends; e.g. Fletcher &
Rossing, *The Physics of Musical Instruments*, ch. 2; docs/sources.md A10.3). Two shafts meeting at
random points excite random mixes of those modes, damped fast by the wood and
the hand; a bronze head touching another rings briefly high (``head``). Events
come as a Poisson train (``events_per_s`` over ``duration``), with ``burst``
extra events packed into the first ``burst_s`` (a bundle landing, the shafts
settling), and the first event knocks the ``surface`` it lands on.

Each articulation is a table ``[params.<articulation>]``: ``events_per_s``,
``burst``, ``burst_s``, ``modes`` (``[ratio of hz, T60 s, level dB]``), ``head``
and ``surface`` (``[Hz, T60 s, level dB]`` rows), ``head_chance`` (share of
events with a head's clink), ``contact_s``. The output is normalised to peak
``velocity``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import (
    abs_peak,
    cancel_dc,
    damped_partials,
    db_to_gain,
    frames_for,
)

__all__ = ["render"]


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """Knocks over ``duration`` seconds; ``hz`` is the shafts' first bending mode."""
    row = params[articulation]
    modes = np.asarray(row["modes"], dtype=float).reshape(-1, 3)
    head = np.asarray(row.get("head", []), dtype=float).reshape(-1, 3)
    surface = np.asarray(row.get("surface", []), dtype=float).reshape(-1, 3)
    onsets = np.sort(np.concatenate([
        [0.0], rng.uniform(0.0, row["burst_s"], int(row["burst"])),
        rng.uniform(0.0, duration, rng.poisson(row["events_per_s"] * duration))]))
    ring = 1.5 * max(0.05, *modes[:, 1], *head[:, 1], *surface[:, 1])
    frames = frames_for(max(duration, float(onsets[-1])) + ring, sample_rate)
    out = np.zeros(frames)
    for i, onset in enumerate(onsets):
        start = round(onset * sample_rate)
        n = frames_for(ring, sample_rate)
        weights = rng.uniform(0.0, 1.0, len(modes)) ** 2  # where the shafts touch
        knock = damped_partials(hz * modes[:, 0] * rng.uniform(0.9, 1.1),
                                db_to_gain(modes[:, 2]) * weights, modes[:, 1], frames=n,
                                sample_rate=sample_rate)
        if head.size and rng.uniform() < row["head_chance"]:
            knock += damped_partials(head[:, 0] * rng.uniform(0.95, 1.05),
                                     db_to_gain(head[:, 2]), head[:, 1], frames=n,
                                     sample_rate=sample_rate)
        if i == 0 and surface.size:
            knock += damped_partials(surface[:, 0], db_to_gain(surface[:, 2]), surface[:, 1],
                                     frames=n, sample_rate=sample_rate)
        knock = cancel_dc(knock, contact_s=row["contact_s"], sample_rate=sample_rate)
        level = 1.0 if i == 0 else rng.uniform(0.3, 0.9)
        out[start:start + n] += knock[:frames - start] * level
    peak = abs_peak(out)
    return out * (velocity / peak) if peak > 0 else out
