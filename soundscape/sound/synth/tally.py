"""Tally sticks (算, 籌): short wooden clicks at the 中.

A counting stick struck against others rings in the modes of a free-free bar
(ratios 1 : 2.756 : 5.404 of the first bending mode, Euler–Bernoulli beam),
decaying in a few tens of milliseconds (wood and bamboo damp fast). ``lay`` is
one stick laid down (one 算 per counted hit), ``count`` a 純 taken into the hand
(two sticks, ``pair_gap_s`` apart), ``take`` a handful (八算 taken or the 餘算
returned: ``handful`` clicks scattered over ``handful_s``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import abs_peak, damped_partials, frames_for

__all__ = ["render"]

_BAR_MODES = np.array([1.0, 2.756, 5.404])


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """Clicks for ``articulation`` (``lay``, ``count``, ``take``); ``hz`` the stick's mode."""
    if articulation == "take":
        onsets = np.sort(rng.uniform(0.0, params["handful_s"], int(params["handful"])))
    elif articulation == "count":
        onsets = np.array([0.0, params["pair_gap_s"]])
    else:
        onsets = np.array([0.0])
    ring = 1.5 * params["t60_s"]
    frames = frames_for(max(duration, float(onsets[-1]) + ring), sample_rate)
    out = np.zeros(frames)
    amps = np.array([1.0, 0.5, 0.25])
    scale = velocity / float(np.sum(amps))
    for onset in onsets:
        stick = hz * (1.0 + float(rng.uniform(-1.0, 1.0)) * params["spread"])
        click = damped_partials(stick * _BAR_MODES, amps * scale * float(rng.uniform(0.6, 1.0)),
                                params["t60_s"] / np.sqrt(_BAR_MODES),
                                frames=frames_for(ring, sample_rate), sample_rate=sample_rate)
        start = round(onset * sample_rate)
        out[start:start + click.size] += click[:frames - start]
    peak = abs_peak(out)
    # Overlapping clicks of a handful can add up: bring the peak back to velocity.
    return out * (velocity / peak) if peak > velocity else out
