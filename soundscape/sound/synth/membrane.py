"""Drums: membrane modes with a pitch glide and a noisy attack; the 鼗's pellets.

A stroke excites the modes of the head(s) (``[[params.modes]]``: ratio to the
lowest mode, level, T60 scale). The lowest mode rings ``t60_s``; a mode at ``r``
times it rings ``r ** -t60_ratio_exponent`` as long (docs/sources.md A3.2: the lowest
component decays slowest). A hard stroke stretches the head, so all modes start
up to ``glide`` (relative, at velocity 1, ∝ velocity²) sharp and relax with time
constant ``glide_s``. Band-passed noise (``thud_*``) gives the stick's impact.

A head radiates its volume acceleration, whose time integral over a stroke is
zero (the head starts and ends at rest): the stick's push, a pulse lasting the
contact time ``contact_s``, carries the area the ringing modes leave over. So
each stroke has no DC and little below its lowest mode; ``render_note`` then
high-passes whatever remains under 20 Hz.

Articulations: ``strike`` (near the centre), ``rim`` (near the edge: each mode
shifted by its ``rim_db``, a brighter, shorter sound), and ``shake`` for pellet
drums: ``pellet_rate_hz`` impacts per second with jittered times and levels
(docs/sources.md A3.3), each a short stroke of the same modes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import signal

from soundscape.sound.synth._common import (
    bandpass,
    cancel_dc,
    damped_partials,
    db_to_gain,
    frames_for,
    noise_burst,
)

__all__ = ["render"]


def mode_table(params: Mapping[str, Any], *, hz: float,
               articulation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frequencies (Hz), linear levels and T60s (s) of the modes of one stroke."""
    rows = params["modes"]
    ratios = np.array([row["ratio"] for row in rows])
    levels = np.array([row["amp_db"] + (row.get("rim_db", 0.0) if articulation == "rim" else 0.0)
                       for row in rows])
    scales = np.array([row.get("t60_scale", 1.0) for row in rows])
    t60s = params["t60_s"] * ratios ** -params["t60_ratio_exponent"] * scales
    if articulation == "rim":
        t60s = t60s * 0.6  # the edge is stiffer and damped by the hoop (EST)
    return hz * ratios, db_to_gain(levels), t60s


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One drum stroke (``strike``, ``rim``) or a pellet-drum shake lasting ``duration``.

    Parameters
    ----------
    hz : float > 0, Hz
        The lowest mode of the head.
    velocity : float in (0, 1]
    duration : float > 0, seconds
        The least length of a stroke (it rings out), the length of a ``shake``.
    """
    if articulation == "shake":
        return _shake(params, hz=hz, velocity=velocity, duration=duration,
                      sample_rate=sample_rate, rng=rng)
    return _stroke(params, hz=hz, velocity=velocity, articulation=articulation,
                   sample_rate=sample_rate, rng=rng, min_s=duration)


def _stroke(params: Mapping[str, Any], *, hz: float, velocity: float, articulation: str,
            sample_rate: int, rng: np.random.Generator, min_s: float = 0.0) -> np.ndarray:
    freqs, amps, t60s = mode_table(params, hz=hz, articulation=articulation)
    thud = db_to_gain(params["thud_db"])
    scale = velocity / (float(np.sum(amps)) + thud)
    frames = frames_for(max(min_s, 1.5 * float(np.max(t60s))), sample_rate)
    out = damped_partials(freqs, amps * scale, t60s, frames=frames, sample_rate=sample_rate,
                          glide=params.get("glide", 0.0) * velocity**2,
                          glide_s=params.get("glide_s", 0.05))
    noise = noise_burst(rng, frames=frames, decay_s=params["thud_s"], sample_rate=sample_rate)
    out[:noise.size] += bandpass(noise, params["thud_low_hz"], params["thud_high_hz"],
                                 sample_rate) * (thud * scale)
    return cancel_dc(out, contact_s=params["contact_s"], sample_rate=sample_rate)


def _shake(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    rate = params["pellet_rate_hz"]
    count = max(1, round(duration * rate))
    times = np.arange(count) / rate + rng.uniform(-1.0, 1.0, count) * params["pellet_jitter_s"]
    times = np.clip(times, 0.0, None)
    levels = db_to_gain(-rng.uniform(0.0, params["pellet_level_jitter_db"], count))
    # Pellets on a twisted drum strike harder mid-twist: ±1.5 dB at the twist rate (EST §3.3).
    levels = levels * db_to_gain(1.5 * np.sin(np.pi * rate / 4.0 * times))
    levels = levels / max(1.0, float(np.max(levels)))
    ring = _stroke(params, hz=hz, velocity=1.0, articulation="strike", sample_rate=sample_rate,
                   rng=rng)
    train = np.zeros(frames_for(float(times.max()), sample_rate) + 1)
    np.add.at(train, np.round(times * sample_rate).astype(int), levels)
    out = signal.fftconvolve(train, ring)
    # Overlapping rings add up: bound the peak by the most impacts within one ring length.
    starts = np.sort(np.round(times * sample_rate))
    overlap = int(np.max(np.searchsorted(starts, starts + ring.size) - np.arange(count)))
    return out * (velocity / overlap)
