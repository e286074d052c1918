"""Plucked silk strings (瑟) by the extended Karplus-Strong algorithm.

Jaffe & Smith's extensions (docs/sources.md A4.1, [S44]): a noise burst shaped by a
pick-direction lowpass, a pick-position comb and a velocity-dependent lowpass
excites a delay loop of one period; the loop's two-point average damps the upper
harmonics, a per-note loss ``rho`` makes the fundamental ring ``t60_s`` (scaled with
pitch), and the fractional part of the period is taken by linear interpolation
(not the allpass of the original: its taps all lie a full period back, so the loop
runs one period at a time as numpy vector operations). High notes keep their
ring through decay stretching (a lighter damping filter). A few broad resonances of
the long hollow body colour the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import signal

from soundscape.sound.synth._common import db_to_gain, frames_for

__all__ = ["loop_taps", "render"]


def t60_of(params: Mapping[str, Any], hz: float) -> float:
    """T60 (s) of the fundamental at ``hz``: longer in the bass (docs/sources.md A4.2 EST)."""
    return params["t60_s"] * (params["t60_ref_hz"] / hz) ** params["t60_pitch_exponent"]


def loop_taps(hz: float, t60: float, sample_rate: int) -> tuple[int, np.ndarray]:
    """Delay ``N`` and the three feedback taps at ``N, N+1, N+2`` samples.

    The taps are a damping lowpass ``(1 − S) + S z⁻¹`` (delay ≈ ``S``), a linear
    interpolator (delay ``d``) and a loss ``rho ≤ 1``, chosen so the fundamental
    loses 60 dB in ``t60`` seconds. ``S`` is ½ (the classic average) unless that
    alone would damp the fundamental too fast, as for high notes at low sample
    rates; then ``S`` shrinks (Jaffe & Smith's decay stretching) and ``rho = 1``.
    The loop gain never exceeds 1, so the loop is stable.
    """
    omega = 2.0 * math.pi * hz / sample_rate
    target = 10.0 ** (-3.0 / (hz * t60))  # loop gain per period at the fundamental
    interp_gain = 1.0
    for _ in range(2):  # the interpolator's loss depends on d, d on S: settle in two passes
        needed = min(1.0, target / interp_gain)
        stretch = 0.5
        if math.sqrt((1.0 + math.cos(omega)) / 2.0) < needed:
            quarter = (1.0 - needed**2) / (2.0 * (1.0 - math.cos(omega)))
            stretch = (1.0 - math.sqrt(max(0.0, 1.0 - 4.0 * quarter))) / 2.0
        period = sample_rate / hz
        delay = math.floor(period - stretch)
        frac = period - stretch - delay
        interp_gain = abs((1.0 - frac) + frac * np.exp(-1j * omega))
    taps = np.convolve([1.0 - stretch, stretch], [1.0 - frac, frac])
    gain = abs(np.sum(taps * np.exp(-1j * omega * np.arange(3))))
    return delay, taps * min(1.0, target / gain)


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One pluck, ringing for ``max(duration, 1.5 × T60)`` seconds.

    Parameters
    ----------
    hz : float > 0, Hz
        The string's pitch; must be below sample_rate / 4.
    velocity : float in (0, 1]
        Pluck strength: level, and brightness through the dynamic lowpass.
    """
    t60 = t60_of(params, hz)
    delay, taps = loop_taps(hz, t60, sample_rate)
    frames = frames_for(max(duration, 1.5 * t60), sample_rate)
    excitation = _excitation(params, delay, velocity, sample_rate, rng)
    pad = delay + 2
    y = np.zeros(pad + frames + delay)
    y[pad:pad + delay] = excitation
    for start in range(pad + delay, pad + frames, delay):
        stop = start + delay
        y[start:stop] = (taps[0] * y[start - delay:stop - delay]
                         + taps[1] * y[start - delay - 1:stop - delay - 1]
                         + taps[2] * y[start - delay - 2:stop - delay - 2])
    string = y[pad:pad + frames]
    return velocity * _body(params, string, sample_rate)


def _excitation(params: Mapping[str, Any], delay: int, velocity: float, sample_rate: int,
                rng: np.random.Generator) -> np.ndarray:
    """One period of shaped noise (the comb may double a sample; in practice |x| < 1)."""
    noise = rng.uniform(-1.0, 1.0, delay)
    p = params["pick_direction"]
    noise = signal.lfilter([1.0 - p], [1.0, -p], noise)
    lag = max(1, round(params["pick_position"] * delay))
    combed = noise.copy()
    combed[lag:] -= noise[:-lag]
    bandwidth = params["level_bandwidth_hz"] * velocity
    r_level = math.exp(-math.pi * bandwidth / sample_rate)
    shaped = signal.lfilter([1.0 - r_level], [1.0, -r_level], combed)
    return shaped - shaped.mean()  # the loop keeps DC almost forever: start without any


def _body(params: Mapping[str, Any], string: np.ndarray, sample_rate: int) -> np.ndarray:
    """The string plus band-passed copies at the body resonances, kept within |x| ≤ 1."""
    out = string.copy()
    total = 1.0
    for row in params["body"]:
        b, a = signal.iirpeak(row["hz"], row["q"], fs=sample_rate)
        gain = float(db_to_gain(row["gain_db"]))
        out += gain * signal.lfilter(b, a, string)
        total += gain
    return out / total
