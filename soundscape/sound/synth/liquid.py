"""Wine poured: bubbles in the stream, and the cup's air column rising as it fills.

A liquid sounds mostly through the bubbles it traps: each rings at its Minnaert
frequency f = 3.26 m·Hz / r (radius r; Minnaert 1933, Phil. Mag. 16:235–248)
with damping d = 0.13 f + 0.0072 f^1.5 per second, and its pitch rises as it
nears the surface, f(t) = f₀ (1 + ξ d t) (van den Doel 2005, "Physically based
models for liquid sounds", ACM Trans. Applied Perception 2(4):534–546). A pour
is a Poisson stream of bubbles (``bubbles_per_s``) with radii log-uniform in
``radius_mm``; the splash noise of the stream is filtered by the air column
left in the cup, a quarter-wave resonance c / 4L that rises as the depth L
falls from ``depth_m[0]`` to ``depth_m[1]`` over ``duration`` (the rising pitch
of a vessel being filled). ``depth_m = [0, 0]`` is a pour onto open ground (the
祭's libation): no column, splatter only.

Each articulation is a table ``[params.<articulation>]`` with ``bubbles_per_s``,
``radius_mm = [least, most]``, ``rise`` (ξ), ``splash_db``, ``depth_m``,
``fade_s``. ``hz`` is unused but for the instrument's nominal pitch; the output
is normalised to peak ``velocity``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import signal

from soundscape.physics import speed_of_sound
from soundscape.sound.synth._common import (
    abs_peak,
    attack_release,
    bandpass,
    db_to_gain,
    frames_for,
    sample_times,
)

__all__ = ["render"]

_SOUND_M_S = speed_of_sound()
_MINNAERT = 3.26  # m·Hz: f = 3.26 / r for an air bubble in water near the surface


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """``duration`` seconds of pouring, faded in and out over ``fade_s``."""
    row = params[articulation]
    frames = frames_for(duration + 0.1, sample_rate)
    out = _bubbles(row, duration=duration, frames=frames, sample_rate=sample_rate, rng=rng)
    out += _splash(row, duration=duration, frames=frames, sample_rate=sample_rate, rng=rng)
    out *= attack_release(frames, attack_s=row["fade_s"], release_s=row["fade_s"],
                          hold_s=max(duration - row["fade_s"], row["fade_s"]),
                          sample_rate=sample_rate)
    peak = abs_peak(out)
    return out * (velocity / peak) if peak > 0 else out


def _bubbles(row: Mapping[str, Any], *, duration: float, frames: int, sample_rate: int,
             rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(frames)
    count = rng.poisson(row["bubbles_per_s"] * duration)
    low, high = np.log(np.asarray(row["radius_mm"], dtype=float) / 1000.0)
    for onset, radius in zip(rng.uniform(0.0, duration, count),
                             np.exp(rng.uniform(low, high, count)), strict=True):
        f0 = _MINNAERT / radius
        if f0 >= 0.45 * sample_rate:
            continue
        damping = 0.13 * f0 + 0.0072 * f0**1.5
        n = min(frames_for(7.0 / damping, sample_rate), frames - round(onset * sample_rate))
        t = sample_times(n, sample_rate)
        # worked in place, the same products and sums as f0 (1 + rise·damping·t) and
        # 2π Σ freq / rate: no new arrays for a bubble's few thousand samples
        phase = np.multiply(row["rise"] * damping, t)
        phase += 1.0
        phase *= f0
        np.cumsum(phase, out=phase)
        phase *= 2.0 * np.pi
        phase /= sample_rate
        np.sin(phase, out=phase)
        start = round(onset * sample_rate)
        # Larger bubbles are louder (amplitude ∝ radius, van den Doel 2005).
        level = np.multiply(-damping, t)
        np.exp(level, out=level)
        level *= radius * 1000.0
        level *= phase
        out[start:start + n] += level
    peak = abs_peak(out)
    return out / peak if peak > 0 else out


def _splash(row: Mapping[str, Any], *, duration: float, frames: int, sample_rate: int,
            rng: np.random.Generator) -> np.ndarray:
    """The stream's noise, through the cup's rising air column (or plain, on the ground)."""
    noise = bandpass(rng.standard_normal(frames), 300.0, 8000.0, sample_rate)
    first, last = row["depth_m"]
    if first > 0.0:
        noise = _air_column(noise, first, last, duration=duration, sample_rate=sample_rate)
    # Its level against the bubbles' peak of 1: splash_db at four standard deviations.
    return noise * (db_to_gain(row["splash_db"]) / 4.0 / max(float(np.std(noise)), 1e-12))


def _air_column(noise: np.ndarray, first: float, last: float, *, duration: float,
                sample_rate: int) -> np.ndarray:
    """A resonator at c / 4L as the depth L goes from ``first`` to ``last``, in 20 ms
    pieces (the column changes slowly), its state carried across."""
    piece = max(1, round(0.02 * sample_rate))
    out = np.zeros(noise.size)
    state = np.zeros(2)
    for start in range(0, noise.size, piece):
        depth = first + (last - first) * min(1.0, start / sample_rate / max(duration, 1e-9))
        centre = min(_SOUND_M_S / (4.0 * max(depth, 0.005)), 0.4 * sample_rate)
        b, a = signal.iirpeak(centre, 8.0, fs=sample_rate)
        out[start:start + piece], state = signal.lfilter(b, a, noise[start:start + piece],
                                                         zi=state)
    return out
