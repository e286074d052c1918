"""Decay times measured from rendered audio, against the numbers in the instrument files."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import params_of, render_note, without_infrasound
from soundscape.sound.synth.string import t60_of

RATE = 16000


def measured_t60(audio: np.ndarray, hz: float, *, sample_rate: int = RATE,
                 fit_db: float = 30.0) -> float:
    """T60 of the partial at ``hz``: a line fitted to its STFT level (dB) over the first
    ``fit_db`` of decay after the attack."""
    window = 2048 if hz > 100 else 4096
    freqs, times, z = signal.stft(audio, fs=sample_rate, nperseg=window, noverlap=window * 3 // 4)
    band = np.abs(freqs - hz) <= max(0.03 * hz, freqs[1])
    level = 20 * np.log10(np.abs(z[band]).max(axis=0) + 1e-12)
    first = int(np.argmax(level)) + 1
    usable = np.flatnonzero(level[first:] > level[first] - fit_db) + first
    slope = np.polyfit(times[usable], level[usable], 1)[0]
    return -60.0 / slope


def expected_modal_t60(params, hz: float) -> float:
    """T60 of the lowest mode as docs/instruments.md states the modal data."""
    return params["t60_s"] * (params["t60_ref_hz"] / hz) ** params["t60_pitch_exponent"]


@pytest.mark.parametrize(("instrument_id", "hz"),
                         [("bianzhong", 196.0), ("bianzhong", 523.0), ("bianzhong", 1400.0),
                          ("bo", 110.0), ("bianqing", 300.0), ("bianqing", 900.0)])
def test_modal_fundamental_decay(instrument_id, hz):
    instrument = load_instrument(instrument_id)
    audio = render_note(instrument, hz=hz, velocity=1.0, duration=0.2,
                        articulation=instrument.articulations[0], sample_rate=RATE,
                        rng=np.random.default_rng(3))
    expected = expected_modal_t60(params_of(instrument), hz)
    got = measured_t60(audio, hz)
    assert abs(got / expected - 1) < 0.2, f"T60 {got:.2f} s, data says {expected:.2f} s"


def test_bell_upper_partials_die_sooner():
    params = params_of(load_instrument("bianzhong"))
    audio = render_note(load_instrument("bianzhong"), hz=300.0, velocity=1.0, duration=0.2,
                        articulation="A", sample_rate=RATE, rng=np.random.default_rng(3))
    for ratio in (2.81, 4.1):
        expected = expected_modal_t60(params, 300.0) * ratio ** -params["t60_ratio_exponent"]
        got = measured_t60(audio, 300.0 * ratio)
        assert abs(got / expected - 1) < 0.2, f"partial {ratio}: {got:.2f} s vs {expected:.2f} s"
    assert measured_t60(audio, 300.0 * 4.1) < 0.5 * measured_t60(audio, 300.0)


@pytest.mark.parametrize("instrument_id", ["jiangu", "pi"])
def test_drum_lowest_mode_decay(instrument_id):
    drum = load_instrument(instrument_id)
    # A soft stroke: the glide (∝ velocity²) is then negligible.
    audio = render_note(drum, hz=None, velocity=0.2, duration=0.1, articulation="strike",
                        sample_rate=RATE, rng=np.random.default_rng(4))
    got = measured_t60(audio, drum.default_hz, fit_db=25.0)
    expected = params_of(drum)["t60_s"]
    assert abs(got / expected - 1) < 0.2, f"{instrument_id}: {got:.2f} s vs {expected:.2f} s"


@pytest.mark.parametrize("hz", [110.0, 330.0, 880.0])
def test_se_fundamental_decay(hz):
    se = load_instrument("se")
    # 48 kHz, the render rate: at low rates the loop's interpolation damps high notes more.
    audio = render_note(se, hz=hz, velocity=1.0, duration=0.1, articulation="pluck",
                        sample_rate=48000, rng=np.random.default_rng(5))
    params = params_of(se)
    expected = params["t60_s"] * (params["t60_ref_hz"] / hz) ** params["t60_pitch_exponent"]
    assert expected == pytest.approx(t60_of(params, hz))
    got = measured_t60(audio, hz, sample_rate=48000, fit_db=25.0)
    assert abs(got / expected - 1) < 0.2, f"se {hz} Hz: {got:.2f} s vs {expected:.2f} s"


def test_hard_drum_stroke_starts_sharp_and_glides_down():
    from soundscape.sound.synth.membrane import Stroke, render_stroke

    drum = load_instrument("jiangu")
    # A hard stroke at the middle of the striking ring (the file's glide; strokes scatter
    # about it: tests/sound/test_strokes.py).
    middle = sum(params_of(drum)["scatter"]["strike_radius"]) / 2
    audio = without_infrasound(render_stroke(
        params_of(drum), hz=60.0, velocity=1.0, articulation="strike", sample_rate=RATE,
        rng=np.random.default_rng(4), min_s=0.1, stroke=Stroke(1.0, middle, middle)), RATE)
    # Zero crossings of the low-passed signal give the instantaneous period of the lowest mode.
    sos = signal.butter(4, 70.0, fs=RATE, output="sos")
    low = signal.sosfiltfilt(sos, audio)
    crossings = np.flatnonzero(np.diff(np.signbit(low)))
    periods = np.diff(crossings[::2]) / RATE
    # The first period holds the stick's push and the high-pass's onset: skip it.
    early, late = 1 / np.mean(periods[1:4]), 1 / np.median(periods[20:30])
    assert early > late * 1.02, f"no glide: {early:.1f} Hz then {late:.1f} Hz"
    assert late == pytest.approx(60.0, rel=0.01)
