"""The 瑟's fast paths equal the plain filters they replace: the loop run k periods a
step equals the recursion run by ``lfilter``, and the folded body cascade equals the
string plus its band-passed copies, then the 20 Hz high-pass."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import params_of, render_note
from soundscape.sound.synth._common import db_to_gain, infrasound_highpass
from soundscape.sound.synth.string import _excitation, body_filter, loop_taps, ring, t60_of

RATE = 48000


def plain_ring(excitation: np.ndarray, taps: np.ndarray, frames: int) -> np.ndarray:
    """The loop as one recursive filter: y[n] = x[n] + Σ taps[j] y[n − N − j]."""
    delay = excitation.size
    feedback = np.zeros(delay + 3)
    feedback[0], feedback[delay:] = 1.0, -taps
    drive = np.zeros(frames)
    drive[:min(delay, frames)] = excitation[:frames]
    return signal.lfilter([1.0], feedback, drive)


def plain_body(params, string: np.ndarray) -> np.ndarray:
    """The body as three parallel resonators over their total gain, then the high-pass."""
    out, total = string.copy(), 1.0
    for row in params["body"]:
        b, a = signal.iirpeak(row["hz"], row["q"], fs=RATE)
        gain = float(db_to_gain(row["gain_db"]))
        out += gain * signal.lfilter(b, a, string)
        total += gain
    return signal.sosfilt(infrasound_highpass(RATE), out / total)


@pytest.mark.parametrize("hz", [82.0, 262.0, 1397.0, 11000.0])
@pytest.mark.parametrize("frames", [3, 400, 9000])
def test_the_loop_a_block_of_periods_a_step_is_the_recursion(hz, frames):
    params = params_of(load_instrument("se"))
    delay, taps = loop_taps(hz, t60_of(params, hz), RATE)
    excitation = np.random.default_rng(1).uniform(-1.0, 1.0, delay)
    expected = plain_ring(excitation, taps, frames)
    got = ring(excitation, taps, frames)
    assert got.shape == (frames,)
    assert np.max(np.abs(got - expected)) <= 1e-12 * np.max(np.abs(expected))


def test_the_folded_body_is_the_parallel_resonators_then_the_high_pass():
    params = params_of(load_instrument("se"))
    rows = tuple((r["hz"], r["q"], r["gain_db"]) for r in params["body"])
    rng = np.random.default_rng(2)
    string = rng.uniform(-1.0, 1.0, RATE) * np.exp(-np.arange(RATE) / 8000.0)
    expected = plain_body(params, string)
    got = signal.sosfilt(body_filter(rows, RATE), string)
    assert np.max(np.abs(got - expected)) <= 1e-9 * np.max(np.abs(expected))


def test_a_pluck_is_the_plain_loop_body_and_high_pass():
    """A whole note, 262 Hz: render_note's output against the plain filters on the
    same excitation (the same seed draws the same noise)."""
    se = load_instrument("se")
    params = params_of(se)
    note = render_note(se, hz=262.0, velocity=0.7, duration=0.2, articulation="pluck",
                       sample_rate=RATE, rng=np.random.default_rng(3))
    delay, taps = loop_taps(262.0, t60_of(params, 262.0), RATE)
    excitation = _excitation(params, delay, 0.7, RATE, np.random.default_rng(3))
    expected = plain_body(params, 0.7 * plain_ring(excitation, taps, note.size))
    assert np.max(np.abs(note - expected)) <= 1e-9 * np.max(np.abs(expected))
