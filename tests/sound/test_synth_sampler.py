"""Sample-based instruments: a tiny recorded tone, played back at other pitches."""

from __future__ import annotations

import math

import numpy as np
import pytest
import soundfile

from soundscape.errors import InstrumentError
from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import params_of, render_note

FILE_RATE = 44100


def write_sampler(folder, *, root_hz=220.0, seconds=1.0):
    t = np.arange(round(seconds * FILE_RATE)) / FILE_RATE

    def tone(hz):
        return 0.5 * np.exp(-t / 0.5) * (np.sin(2 * np.pi * hz * t)
                                         + 0.3 * np.sin(2 * np.pi * 2 * hz * t))

    soundfile.write(folder / "low.flac", tone(root_hz), FILE_RATE)
    soundfile.write(folder / "high.wav", np.stack([tone(2 * root_hz)] * 2, axis=1), FILE_RATE)
    text = f"""
id = "museum_bell"
name = "館藏鐘"
roman = "museum bell (samples)"
family = "bell"
model = "sampler"
articulations = ["A"]
loudness_db = 90.0
range_hz = [100.0, 1000.0]
sources = ["test recording"]

[params]
gain_db = -3.0

[[params.samples]]
file = "low.flac"
root_hz = {root_hz}

[[params.samples]]
file = "high.wav"
root_hz = {2 * root_hz}
"""
    path = folder / "museum_bell.toml"
    path.write_text(text, encoding="utf-8")
    return path


def peak_hz(audio, sample_rate):
    size = 1 << 20
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(audio.size), size))
    i = int(np.argmax(spectrum))
    a, b, c = np.log(spectrum[i - 1:i + 2])
    return (i + 0.5 * (a - c) / (a - 2 * b + c)) * sample_rate / size


@pytest.mark.parametrize(("hz", "sample_rate"), [(330.0, 48000), (261.63, 22050), (700.0, 48000)])
def test_sampler_plays_the_asked_pitch(tmp_path, hz, sample_rate):
    instrument = load_instrument(write_sampler(tmp_path))
    audio = render_note(instrument, hz=hz, velocity=1.0, duration=2.0, articulation="A",
                        sample_rate=sample_rate, rng=np.random.default_rng(0))
    error = 1200 * math.log2(peak_hz(audio, sample_rate) / hz)
    assert abs(error) < 5.0, f"{hz} Hz played {error:+.2f} cents off"
    assert np.max(np.abs(audio)) <= 1.0


def test_sampler_picks_the_nearest_root_and_keeps_the_ring(tmp_path):
    instrument = load_instrument(write_sampler(tmp_path))
    near_high = render_note(instrument, hz=400.0, velocity=1.0, duration=5.0, articulation="A",
                            sample_rate=FILE_RATE, rng=np.random.default_rng(0))
    # The 440 Hz root is read at 400/440: the 1 s recording lasts 1.1 s.
    assert near_high.size == pytest.approx(FILE_RATE * 440 / 400, abs=2)


def test_sampler_fades_at_the_end_of_a_short_note(tmp_path):
    instrument = load_instrument(write_sampler(tmp_path))
    audio = render_note(instrument, hz=220.0, velocity=1.0, duration=0.2, articulation="A",
                        sample_rate=FILE_RATE, rng=np.random.default_rng(0))
    assert audio.size == math.ceil(0.25 * FILE_RATE)
    assert abs(audio[-1]) < 1e-3


def test_missing_sample_file_names_the_key(tmp_path):
    path = write_sampler(tmp_path)
    (tmp_path / "high.wav").unlink()
    with pytest.raises(InstrumentError, match=r"museum_bell.toml: params.samples\[1\].file"):
        load_instrument(path)


def test_a_note_far_below_its_root_reads_out_only_what_it_keeps(tmp_path, monkeypatch):
    """Played at 1/50 of its root, a 1 s sample would be 50 s long: only the note's frames
    (its duration and release) are read out, the same values as before."""
    from soundscape.sound.synth import sampler

    instrument = load_instrument(write_sampler(tmp_path, root_hz=10000.0))
    asked = []
    interp = np.interp
    monkeypatch.setattr(sampler.np, "interp", lambda x, *a: asked.append(len(x)) or interp(x, *a))
    params = params_of(instrument)
    audio = sampler.render(params, hz=200.0, velocity=1.0, duration=0.5, articulation="A",
                           sample_rate=FILE_RATE, rng=np.random.default_rng(0))
    assert audio.size == math.ceil(0.55 * FILE_RATE)
    assert max(asked) <= audio.size + 1  # not 50 × 44 100
    _, rate, data = min(params["decoded"], key=lambda s: s[0])
    step = 200.0 / 10000.0 * rate / FILE_RATE
    whole = interp(np.arange(audio.size) * step, np.arange(data.size), data)
    fade = math.ceil(0.5 * FILE_RATE)
    gain = 10 ** (-3.0 / 20)
    np.testing.assert_array_equal(audio[:fade], (whole * gain)[:fade])


def test_samples_holding_more_than_their_bound_are_refused_from_their_headers(tmp_path,
                                                                             monkeypatch):
    """A small file can hold hours of silence (a FLAC of 30 min: 657 kB, 2.6 GiB decoded)."""
    from soundscape.sound.synth import sampler

    path = write_sampler(tmp_path)  # 2 × 44 100 frames
    monkeypatch.setattr(sampler, "MOST_FRAMES", 60000)
    with pytest.raises(InstrumentError, match=r"params.samples\[1\].file.*high.wav'?: the "
                                              r"samples up to it hold 88200 frames; accepted: "
                                              r"at most 60000 in all"):
        params_of(load_instrument(path))


def test_a_sample_file_without_audio_is_refused(tmp_path):
    path = write_sampler(tmp_path)
    soundfile.write(tmp_path / "low.flac", np.zeros(0), FILE_RATE, format="WAV")  # by content
    with pytest.raises(InstrumentError, match=r"params.samples\[0\].file.*low.flac'? holds "
                                              r"no audio"):
        params_of(load_instrument(path))


def test_a_sample_decoded_a_block_at_a_time_is_the_whole_files_mean(tmp_path, monkeypatch):
    from soundscape.sound.synth import sampler

    monkeypatch.setattr(sampler, "_BLOCK", 1000)  # blocks of 1 000 of 44 100 frames
    instrument = load_instrument(write_sampler(tmp_path))
    whole, _ = soundfile.read(tmp_path / "high.wav", dtype="float64", always_2d=True)
    high = max(params_of(instrument)["decoded"], key=lambda s: s[0])[2]
    np.testing.assert_array_equal(high, whole.mean(axis=1))
