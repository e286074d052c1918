"""The place's beds: segments that join at constant power, decorrelated, at their level;
crickets at their chirp and pulse rates; torches that crackle; the hours differ."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import ambience, render_note

RATE = 16000


def segment(articulation: str, *, duration: float = 12.0, seed: int = 0,
            velocity: float = 1.0) -> np.ndarray:
    return render_note(load_instrument("ambience"), hz=None, velocity=velocity,
                       duration=duration, articulation=articulation, sample_rate=RATE,
                       rng=np.random.default_rng(seed), lyric=f"bed.test.{seed}")


def rms_db(audio: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(audio**2))))


def band_db(audio: np.ndarray, low: float, high: float) -> float:
    sos = signal.butter(4, [low, high], btype="bandpass", fs=RATE, output="sos")
    return rms_db(signal.sosfilt(sos, audio))


def test_a_segment_lasts_its_duration_and_fades_in_and_out():
    bed = segment("day")
    assert bed.size == 12 * RATE
    fade = load_instrument("ambience").params["day"]["fade_s"]
    assert abs(bed[0]) < 1e-3 and abs(bed[-1]) < 1e-3
    assert rms_db(bed[:RATE // 4]) < rms_db(bed[5 * RATE:7 * RATE]) - 12.0
    assert rms_db(bed[round(fade * RATE):round(fade * RATE) + RATE]) > \
        rms_db(bed[5 * RATE:7 * RATE]) - 6.0


def test_consecutive_segments_overlapped_by_the_fade_keep_constant_power():
    """sin in, cos out: two independent segments overlapping by fade_s sum to the same
    power through the join (no dip, no bump)."""
    fade = load_instrument("ambience").params["night"]["fade_s"]
    first, second = segment("night", seed=1), segment("night", seed=2)
    step = first.size - round(fade * RATE)
    mix = np.zeros(step + second.size)
    mix[:first.size] += first
    mix[step:] += second
    envelope = ambience._fades(first.size, fade=round(fade * RATE))
    join = slice(step, first.size)
    assert np.allclose(envelope[join] ** 2 + envelope[:first.size - step] ** 2, 1.0,
                       atol=1e-9)
    windows = [rms_db(mix[i:i + RATE]) for i in range(step - 3 * RATE, first.size + 2 * RATE,
                                                      RATE // 2)]
    assert max(windows) - min(windows) < 3.0, windows  # crickets and wind vary a little


def test_segments_of_different_tags_are_decorrelated():
    a, b = segment("day", seed=1), segment("day", seed=2)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.05
    assert np.array_equal(a, segment("day", seed=1))


@pytest.mark.parametrize("hour", ["morning", "day", "evening", "night", "torch"])
def test_level_is_velocity_times_a_tenth_of_full_scale(hour):
    """RMS of the segment's middle = velocity x 0.1 (-20 dBFS) within the gusts' sway."""
    loud, soft = segment(hour, velocity=1.0, seed=5), segment(hour, velocity=0.5, seed=5)
    middle = slice(4 * RATE, 8 * RATE)
    assert rms_db(loud[middle]) == pytest.approx(-20.0, abs=3.0)
    assert rms_db(loud[middle]) - rms_db(soft[middle]) == pytest.approx(6.0, abs=0.5)
    assert np.max(np.abs(loud)) <= 1.0


def test_the_hours_differ_crickets_come_with_the_evening():
    day, night = segment("day"), segment("night")
    crickets = (band_db(night, 4200, 5000) - rms_db(night)) - (band_db(day, 4200, 5000)
                                                              - rms_db(day))
    assert crickets > 10.0
    assert band_db(day, 40, 300) - rms_db(day) > band_db(night, 40, 300) - rms_db(night) + 6.0


def test_a_cricket_chirps_at_its_rate_in_pulses_at_its_pulse_rate():
    params = load_instrument("ambience").params
    quiet = {key: -120.0 for key in ("wind_db", "leaves_db", "bird_db", "life_db", "knock_db",
                                     "flame_db", "crackle_db")}
    one = {**params["night"], **quiet, "crickets": 1, "chirps_per_s": 2.0}
    audio = ambience.render({"night": one}, hz=1000.0, velocity=1.0, duration=20.0,
                            articulation="night", sample_rate=RATE,
                            rng=np.random.default_rng(0))
    env = np.abs(signal.hilbert(audio))
    chirps = signal.resample_poly(env, 1, 80)  # 200 Hz envelope
    lags = np.correlate(chirps - chirps.mean(), chirps - chirps.mean(), "full")[chirps.size:]
    period = (np.argmax(lags[60:140]) + 60) / 200.0  # the first repeat: 0.3 to 0.7 s
    assert 1.0 / period == pytest.approx(2.0, rel=0.16)  # each cricket within ±15 %
    pulses = np.abs(np.fft.rfft(env - env.mean()))
    freqs = np.fft.rfftfreq(env.size, 1.0 / RATE)
    near = (freqs > 20) & (freqs < 45)
    assert freqs[near][np.argmax(pulses[near])] == pytest.approx(30.0, abs=1.0)


def test_a_torch_roars_low_and_crackles():
    torch = segment("torch", duration=8.0)
    middle = torch[2 * RATE:6 * RATE]
    assert np.max(np.abs(middle)) / np.sqrt(np.mean(middle**2)) > 5.0  # pops stand out
    assert band_db(middle, 80, 1000) > band_db(middle, 3000, 7000)
