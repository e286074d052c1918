"""Cloth and mats: robes rustling in a bow, knees set on a mat (席), a thing handed over.

Rustle is friction of fabric on fabric: many tiny stick-slip events, each a short
noise grain, whose density follows the movement (Cook's PhISEM, Computer Music
Journal 21(3), 1997: random particle events filtered by the material's
resonance). Here the grains come as a Poisson train whose rate follows a raised
sine swell over ``duration`` (the movement's speed), each grain band-passed
between ``band_low`` and ``band_high`` × ``hz`` (silk and hemp: mostly above 1 kHz).
A ``thump`` (ratio of ``hz``, decay, level) adds a body meeting something soft:
knees on a rush mat, a palm on a sleeve; ``crackle_db`` adds the mat's dry
straw (sparser, brighter grains at the thump).

Each articulation is a table ``[params.<articulation>]`` with ``grain_rate_hz``
(grains per second at the swell's top), ``grain_s`` (grain decay), ``band_low``,
``band_high``, ``swell`` (fraction of ``duration`` the swell takes to rise),
``thump_ratio``, ``thump_s``, ``thump_db`` (against the rustle's peak), ``thump_at``
(fraction of ``duration``), ``crackle_db``, ``crackle_count``. The output is normalised to peak
``velocity``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import (
    abs_peak,
    bandpass,
    cancel_dc,
    db_to_gain,
    frames_for,
    noise_burst,
)

__all__ = ["render"]


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """``duration`` seconds of the articulation's movement (``hz``: the rustle's scale)."""
    row = params[articulation]
    frames = frames_for(duration + 0.3, sample_rate)
    out = _rustle(row, hz=hz, duration=duration, frames=frames, sample_rate=sample_rate,
                  rng=rng)
    start = round(row["thump_at"] * duration * sample_rate)
    thump = noise_burst(rng, frames=frames - start, decay_s=row["thump_s"],
                        sample_rate=sample_rate)
    band = bandpass(thump, hz * row["thump_ratio"] * 0.5, hz * row["thump_ratio"] * 2.0,
                    sample_rate)
    out[start:start + band.size] += band * db_to_gain(row["thump_db"])
    crackle = db_to_gain(row["crackle_db"])
    for _ in range(int(row["crackle_count"])):
        at = start + round(rng.uniform(0.0, 0.15) * sample_rate)
        grain = noise_burst(rng, frames=max(1, frames - at), decay_s=0.003,
                            sample_rate=sample_rate)
        grain = bandpass(grain, 2500.0, 10000.0, sample_rate)
        out[at:at + grain.size] += grain * crackle * rng.uniform(0.3, 1.0)
    out = cancel_dc(out, contact_s=0.005, sample_rate=sample_rate)
    peak = abs_peak(out)
    return out * (velocity / peak) if peak > 0 else out


def _rustle(row: Mapping[str, Any], *, hz: float, duration: float, frames: int,
            sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """Poisson grains under a swell that rises over ``swell`` × duration and falls back."""
    count = rng.poisson(row["grain_rate_hz"] * duration * 0.5)
    # Grain times drawn from the swell's shape (sin² over the movement) by rejection.
    times = rng.uniform(0.0, duration, 4 * count + 4)
    keep = rng.uniform(0.0, 1.0, times.size) < _swell(times / duration, row["swell"])
    times = times[keep][:count]
    at = np.round(times * sample_rate).astype(int)
    weights = rng.uniform(0.2, 1.0, times.size) * rng.choice((-1.0, 1.0), times.size)
    grain = noise_burst(rng, frames=frames, decay_s=row["grain_s"], sample_rate=sample_rate)
    grains = np.zeros(frames + grain.size)  # the train convolved with the grain: a few
    for start, weight in zip(at.tolist(), weights.tolist(), strict=True):  # hundred copies
        grains[start:start + grain.size] += weight * grain  # of a short grain, no more
    rustle = bandpass(grains[:frames], hz * row["band_low"], hz * row["band_high"],
                      sample_rate)
    peak = abs_peak(rustle)
    return rustle / peak if peak > 0 else rustle  # the thump and crackle are relative to it


def _swell(phase: np.ndarray, rise: float) -> np.ndarray:
    """Movement speed over the note: sin² up over ``rise``, held, sin² down at the end."""
    up = np.clip(phase / rise, 0.0, 1.0)
    down = np.clip((1.0 - phase) / rise, 0.0, 1.0)
    return np.sin(0.5 * np.pi * np.minimum(up, down)) ** 2
