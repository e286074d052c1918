"""Plucked silk strings (瑟) by the extended Karplus-Strong algorithm.

Jaffe & Smith's extensions (docs/sources.md A4.1, [S44]): a noise burst shaped by a
pick-direction lowpass, a pick-position comb and a velocity-dependent lowpass
excites a delay loop of one period; the loop's two-point average damps the upper
harmonics, a per-note loss ``rho`` makes the fundamental ring ``t60_s`` (scaled with
pitch), and the fractional part of the period is taken by linear interpolation
(not the allpass of the original: its taps all lie a full period back, so the loop
runs a block of periods at a time as one numpy convolution). High notes keep their
ring through decay stretching (a lighter damping filter). A few broad resonances of
the long hollow body colour the result; their filter carries the 20 Hz high-pass
every note gets, in one cascade.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import signal
from scipy.linalg import block_diag

from soundscape.sound.synth._common import (
    db_to_gain,
    frames_for,
    infrasound_highpass,
    ring_frames,
    sosfilt,
)

__all__ = ["INFRASOUND_FREE", "body_filter", "loop_taps", "render", "ring"]

#: Notes leave ``render`` high-passed at 20 Hz (``render_note`` need not do it again).
INFRASOUND_FREE = True

#: Periods the loop fills per numpy call: its recursion substituted into itself this
#: many times (taps at lags kN…kN+2k). Measured fastest at 4 (numpy's convolution
#: slows past 11 taps); any k gives the same samples up to rounding.
PERIODS_A_STEP = 4


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
    excitation = velocity * _excitation(params, delay, velocity, sample_rate, rng)
    # Loop and body are linear and time-invariant: the body (and high-pass) on the one
    # period of excitation, until its ring is over, then the loop, not the body on the
    # whole ringing note (their filters are the costlier part)
    body = body_filter(_rows(params), sample_rate)
    drive = np.zeros(min(frames, delay + _body_ring(body)))
    drive[:min(delay, drive.size)] = excitation[:drive.size]
    return ring(sosfilt(body, drive), taps, frames, delay)


#: The body's ring on the excitation counts as over once decayed by this: the loop then
#: sustains what is left, up to ~1e3 times at its harmonics (−260 dB).
_BODY_LEFT = 1e-13


@functools.lru_cache(maxsize=64)
def _body_ring_cached(key: bytes) -> int:
    return ring_frames(np.frombuffer(key).reshape(-1, 6), _BODY_LEFT)


def _body_ring(sos: np.ndarray) -> int:
    """Samples the body's filter rings after its input ends (``_BODY_LEFT``)."""
    return _body_ring_cached(np.ascontiguousarray(sos, dtype=float).tobytes())


def ring(drive: np.ndarray, taps: np.ndarray, frames: int, delay: int | None = None
         ) -> np.ndarray:
    """The loop's first ``frames`` samples: ``y[n] = x[n] + taps[0] y[n−N] + taps[1]
    y[n−N−1] + taps[2] y[n−N−2]`` for the input ``x = drive`` (zero past it), ``N =
    delay`` (default ``drive.size``: one period of excitation).

    The same as ``lfilter([1], [1, 0…, −taps], drive padded)`` up to rounding, run
    ``PERIODS_A_STEP`` (k) periods at a time: substituted into itself, ``y = Σ_{j<k} T^j x
    + T^k y`` (``T``: the feedback), which reads ``y`` only at least kN back, so a block
    of kN comes from one convolution with the taps convolved k times, plus the input's
    own ``Σ T^j x`` (worked out once over the input's length).
    """
    delay = drive.size if delay is None else delay
    k = PERIODS_A_STEP
    block = k * delay
    pad = block + 2 * k  # zeros before the first sample: T^k y reads back that far
    y = np.zeros(pad + frames + block)
    given = _fed(drive[:frames], taps, delay, k)  # Σ_{j<k} T^j x, from sample 0
    y[pad:pad + min(frames, given.size)] = given[:frames]
    end = pad + frames
    substituted = functools.reduce(np.convolve, [taps] * k)[::-1].copy()
    for at in range(pad, end, block):  # np.correlate, the thinner call: kernel reversed
        y[at:at + block] += np.correlate(y[at - block - 2 * k:at], substituted, "valid")
    return y[pad:end]


def _fed(drive: np.ndarray, taps: np.ndarray, delay: int, k: int) -> np.ndarray:
    """``Σ_{j<k} T^j x``: the input through the loop's first ``k − 1`` round trips, each
    ``delay`` samples later and through the taps once more."""
    out = np.zeros(drive.size + (k - 1) * (delay + 2))
    out[:drive.size] = drive
    passed = drive
    for j in range(1, k):
        passed = np.convolve(passed, taps)
        out[j * delay:j * delay + passed.size] += passed
    return out


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


def _rows(params: Mapping[str, Any]) -> tuple[tuple[float, float, float], ...]:
    """The body resonances as (hz, q, gain_db) rows (hashable, for the filter cache)."""
    return tuple((float(row["hz"]), float(row["q"]), float(row["gain_db"]))
                 for row in params["body"])


@functools.lru_cache(maxsize=64)
def body_filter(rows: tuple[tuple[float, float, float], ...], sample_rate: int) -> np.ndarray:
    """Second-order sections of the body and the 20 Hz high-pass, in one cascade.

    The body is the string plus band-passed copies at its resonances (``iirpeak``,
    gain ``g_i``), over ``1 + Σ g_i`` to stay within |x| ≤ 1: ``(1 + Σ g_i B_i/A_i) /
    (1 + Σ g_i)``, one rational filter whose poles are the resonators'. Its zeros
    crowd near z = 1 with the poles, where the roots of the product polynomial
    lose half the digits; they are taken instead as the eigenvalues of the parallel
    sum's state-space form ``A − B C / D`` (the same filter to ~1e-12, not 1e-7).
    """
    blocks: list[np.ndarray] = []
    inputs: list[np.ndarray] = []
    outputs: list[np.ndarray] = []
    poles: list[complex] = []
    direct, total = 1.0, 1.0
    for hz, q, gain_db in rows:
        b, a = signal.iirpeak(hz, q, fs=sample_rate)
        gain = float(db_to_gain(gain_db))
        state, into, out, through = signal.tf2ss(b, a)
        blocks.append(state)
        inputs.append(into)
        outputs.append(gain * out)
        direct += gain * float(through[0, 0])
        total += gain
        poles.extend(np.roots(a))
    if not blocks:
        return infrasound_highpass(sample_rate)
    state = block_diag(*blocks)
    zeros = np.linalg.eigvals(state - np.vstack(inputs) @ np.hstack(outputs) / direct)
    body = signal.zpk2sos(zeros, np.asarray(poles), direct / total)
    return np.vstack([body, infrasound_highpass(sample_rate)])
