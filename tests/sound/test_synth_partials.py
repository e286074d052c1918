"""``damped_partials`` (every struck model's modes) against the plain computations it
replaces: a two-pole resonator's impulse response per partial, cut at 1.5 × its T60,
and the glide's decaying sine written out partial by partial; the closed-form band-pass
against scipy's design; the notes' own ``sosfilt`` against scipy's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal

from soundscape.sound.synth._common import (
    _bandpass_sos,
    bandpass_sos,
    damped_partials,
    frames_for,
    sosfilt,
)

RATE = 48000


def plain_partials(freqs, amps, t60s, frames, glide=0.0, glide_s=0.05):
    out = np.zeros(frames)
    for freq, amp, t60 in zip(freqs, amps, t60s, strict=True):
        if freq >= 0.45 * RATE or amp == 0.0:
            continue
        n = min(frames, frames_for(1.5 * t60, RATE))
        if glide:  # the partial on the glide's clock, decay and all, cut by that clock
            t = np.arange(frames) / RATE
            travel = t + glide * glide_s * (1.0 - np.exp(-t / glide_s))
            live = travel * RATE < frames_for(1.5 * t60, RATE)
            out[live] += amp * 10.0 ** (-3.0 * travel[live] / t60) \
                * np.sin(2 * np.pi * freq * travel[live])
            continue
        omega, r = 2 * np.pi * freq / RATE, 10.0 ** (-3.0 / (t60 * RATE))
        impulse = np.zeros(n)
        impulse[0] = 1.0
        out[:n] += amp * signal.lfilter([0.0, r * math.sin(omega)],
                                        [1.0, -2 * r * math.cos(omega), r * r], impulse)
    return out


# A bell's modes (long and short, one above 0.45 × the rate, one silent), cut inside a
# block, on a block's edge (1.5 × 512/48000 s) and by the note's end.
FREQS = np.array([131.0, 262.7, 415.0, 1234.5, 22000.0, 700.0, 990.0])
AMPS = np.array([1.0, 0.5, 0.3, 0.2, 0.9, 0.0, 0.25])
T60S = np.array([4.0, 2.5, 0.9, 0.3, 1.0, 1.0, 512 / RATE / 1.5 * 7])


@pytest.mark.parametrize("frames", [1, 300, 512, 20000, frames_for(6.0, RATE)])
def test_the_block_sum_is_each_partials_resonator(frames):
    expected = plain_partials(FREQS, AMPS, T60S, frames)
    got = damped_partials(FREQS, AMPS, T60S, frames=frames, sample_rate=RATE)
    assert got.shape == (frames,)
    # The block sum is one float32 product: its rounding is relative to what still sounds
    # (each block's start values), not to the stroke's peak, so the ring keeps its decay
    # down to the cut, 90 dB and more under the onset. The envelope of the longest partial
    # one block (512 samples) early bounds what sounds in a block.
    early = np.maximum(np.arange(frames) / RATE - 512 / RATE, 0.0)
    envelope = np.sum(AMPS) * 10.0 ** (-3.0 * early / np.max(T60S))
    assert np.all(np.abs(got - expected) <= 1e-6 * envelope)


def test_the_cut_is_where_it_was():
    """A partial stops after 1.5 × its T60 (90 dB down), to the sample."""
    t60 = 0.01
    n = frames_for(1.5 * t60, RATE)
    got = damped_partials(np.array([1000.0]), np.array([1.0]), np.array([t60]),
                          frames=4 * n, sample_rate=RATE)
    assert np.all(got[n:] == 0.0)
    assert got[n - 1] != 0.0


def test_the_glide_sums_the_same_sines():
    freqs, amps, t60s = FREQS[:4], AMPS[:4], T60S[:4] * 0.3
    frames = frames_for(1.0, RATE)
    expected = plain_partials(freqs, amps, t60s, frames, glide=0.2)
    got = damped_partials(freqs, amps, t60s, frames=frames, sample_rate=RATE, glide=0.2)
    # The low partials are read off their clock by cubic interpolation (error under 3e-6).
    assert np.max(np.abs(got - expected)) <= 3e-6 * np.sum(amps)


@pytest.mark.parametrize(("low", "high", "rate"), [(40.0, 900.0, 12000), (100.0, 3000.0, 48000),
                                                  (2000.0, 9000.0, 48000), (30.0, 30000.0, 48000),
                                                  (5000.0, 5200.0, 24000)])
def test_the_closed_form_band_is_scipys(low, high, rate):
    """``bandpass_sos`` (a 建鼓 stroke's own band) is the filter scipy designs, to 1e-10 at
    every frequency, the Nyquist clipping included."""
    _, ours = signal.sosfreqz(bandpass_sos(low, high, rate), 2048, fs=rate)
    _, theirs = signal.sosfreqz(_bandpass_sos(low, high, rate), 2048, fs=rate)
    assert np.max(np.abs(ours - theirs)) < 1e-10


def test_the_notes_sosfilt_is_scipys():
    x = np.random.default_rng(3).standard_normal(5000)
    sos = _bandpass_sos(100.0, 3000.0, RATE)
    assert np.array_equal(sosfilt(sos, x), signal.sosfilt(sos, x))
