"""Every model: finite output, peak ≤ 1 at velocity 1, ring after the note, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from soundscape.errors import InstrumentError
from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import render_note

RATE = 22050
# The instruments of docs/architecture.md (others, e.g. archery sounds, test themselves).
OURS = ("bianzhong", "bo", "bianqing", "jiangu", "pi", "tao", "se", "guan", "sheng", "voice")
# A bell's side stroke needs a note some bell has as its B-tone (tests/sound/test_strokes.py).
CASES = [(i, a) for i in OURS for a in load_instrument(i).articulations if a != "side"]


def pitches_to_try(instrument) -> list[float | None]:
    if instrument.range_hz is None:
        return [None]
    low, high = instrument.range_hz
    return [low, (low * high) ** 0.5, min(high, 0.2 * RATE)]


def note(instrument, hz, articulation, seed, *, duration=0.6, velocity=1.0):
    return render_note(instrument, hz=hz, velocity=velocity, duration=duration,
                       articulation=articulation, sample_rate=RATE,
                       rng=np.random.default_rng(seed), lyric="鳴")


@pytest.mark.parametrize(("instrument_id", "articulation"), CASES)
def test_finite_unclipped_and_at_least_as_long_as_the_note(instrument_id, articulation):
    instrument = load_instrument(instrument_id)
    for hz in pitches_to_try(instrument):
        for seed in range(3):
            audio = note(instrument, hz, articulation, seed)
            assert audio.dtype == np.float64 and audio.ndim == 1
            assert np.all(np.isfinite(audio)), f"{instrument_id} {hz}: NaN or inf"
            peak = float(np.max(np.abs(audio)))
            assert 0.01 < peak <= 1.0, f"{instrument_id} {articulation} {hz} Hz: peak {peak:.3f}"
            assert audio.size >= 0.6 * RATE
            # The note ends in silence: no cut-off ring.
            assert np.max(np.abs(audio[-RATE // 1000:])) < 0.01 * peak


@pytest.mark.parametrize(("instrument_id", "articulation"), CASES)
def test_same_seed_same_samples(instrument_id, articulation):
    instrument = load_instrument(instrument_id)
    hz = pitches_to_try(instrument)[1]
    first = note(instrument, hz, articulation, 7)
    assert np.array_equal(first, note(instrument, hz, articulation, 7))
    assert not np.array_equal(first, note(instrument, hz, articulation, 8))


@pytest.mark.parametrize(("instrument_id", "articulation"), CASES)
def test_softer_is_quieter(instrument_id, articulation):
    instrument = load_instrument(instrument_id)
    hz = pitches_to_try(instrument)[1]
    loud = np.sqrt(np.mean(note(instrument, hz, articulation, 1) ** 2))
    soft = np.sqrt(np.mean(note(instrument, hz, articulation, 1, velocity=0.25) ** 2))
    assert soft < 0.5 * loud


def test_struck_sounds_ring_past_a_short_note():
    bell = load_instrument("bianzhong")
    audio = note(bell, 262.0, "A", 0, duration=0.1)
    assert audio.size > 2 * RATE
    assert np.max(np.abs(audio[RATE:RATE + RATE // 10])) > 0.05 * np.max(np.abs(audio))


def test_bad_note_arguments_raise():
    bell = load_instrument("bianzhong")
    with pytest.raises(InstrumentError, match="articulation 'pluck' not accepted; accepted: A, B"):
        note(bell, 262.0, "pluck", 0)
    with pytest.raises(InstrumentError, match="no default_hz"):
        note(load_instrument("se"), None, "pluck", 0)
    with pytest.raises(InstrumentError, match=r"velocity=1\.5"):
        note(bell, 262.0, "A", 0, velocity=1.5)
