"""No note carries DC or infrasound: energy below 20 Hz at least 40 dB under the total."""

from __future__ import annotations

import numpy as np
import pytest

from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import render_note

RATE = 16000
STROKES = [("jiangu", "strike"), ("jiangu", "rim"), ("pi", "strike"), ("pi", "rim"),
           ("tao", "strike"), ("tao", "shake"), ("bo", "A"), ("bianzhong", "A"),
           ("bianzhong", "B"), ("bianqing", "strike"), ("se", "pluck"), ("target", "leather"),
           ("target", "cloth"), ("target", "ground"), ("bow", "release"), ("tally", "take"),
           ("footstep", "earth"), ("footstep", "wood"), ("robe", "kneel"),
           ("vessel", "jue_wood"), ("pour", "cup"), ("shafts", "lay"), ("pu", "strike"),
           ("ambience", "day"), ("torch", "torch")]


def below_20_hz_db(audio: np.ndarray) -> float:
    """Energy under 20 Hz relative to the total, dB (zero-padded: 0.25 Hz bins)."""
    padded = np.concatenate([audio, np.zeros(4 * RATE)])
    power = np.abs(np.fft.rfft(padded)) ** 2
    freqs = np.fft.rfftfreq(padded.size, 1.0 / RATE)
    return float(10 * np.log10(power[freqs < 20.0].sum() / power.sum()))


def stroke(instrument_id: str, articulation: str, *, velocity: float = 1.0,
           seed: int = 0) -> np.ndarray:
    instrument = load_instrument(instrument_id)
    hz = None if instrument.default_hz else 262.0  # its own pitch, else 黃鍾
    duration = 8.0 if instrument.model == "ambience" else 0.5  # a bed: a whole segment
    return render_note(instrument, hz=hz, velocity=velocity, duration=duration,
                       articulation=articulation, sample_rate=RATE,
                       rng=np.random.default_rng(seed))


@pytest.mark.parametrize(("instrument_id", "articulation"), STROKES)
def test_a_stroke_has_no_infrasound_and_no_dc(instrument_id, articulation):
    audio = stroke(instrument_id, articulation)
    assert below_20_hz_db(audio) < -40.0
    # DC: the mean is a vanishing fraction of the RMS
    assert abs(audio.mean()) < 1e-4 * np.sqrt(np.mean(audio**2))


def test_a_drum_roll_piles_up_no_infrasound():
    """Strokes' DC adds up coherently in a roll: sixteen 建鼓 strokes, soft to loud,
    with the 鼙 answering, stay 40 dB clear under 20 Hz."""
    mix = np.zeros(12 * RATE)
    for i in range(16):
        start = round(i * 0.45 * RATE)
        note = stroke("jiangu", "strike", velocity=0.3 + 0.7 * i / 15, seed=i)
        mix[start:start + note.size] += note[:mix.size - start]
        answer = stroke("pi", "strike", velocity=0.6, seed=100 + i)
        start += RATE // 5
        mix[start:start + answer.size] += answer[:mix.size - start]
    assert below_20_hz_db(mix) < -40.0
    assert abs(mix.mean()) < 1e-4 * np.sqrt(np.mean(mix**2))


@pytest.mark.parametrize("hour", ["morning", "day", "evening", "night"])
def test_the_bed_which_never_stops_keeps_well_clear_of_infrasound(hour):
    """The bed sounds under everything, between the pieces it is most of the mix: its
    wind's skirt (24 dB an octave under 40 Hz) keeps it 50 dB clear under 20 Hz, so the
    whole rite's mix stays 40 dB clear (a 12 dB skirt gave −41 dB here, −38 in the rite)."""
    assert below_20_hz_db(stroke("ambience", hour)) < -50.0
