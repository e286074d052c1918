"""Pitch of every note of every set, measured from the rendered audio (spectral peaks)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import Tuning, default_tuning
from soundscape.sound.synth import render_note

RATE = 22050


def peak_hz(audio: np.ndarray, near_hz: float, *, start_s: float = 0.0, length_s: float = 1.0,
            sample_rate: int = RATE, search_cents: float = 150.0) -> float:
    """The strongest spectral peak within ``search_cents`` of ``near_hz`` (Hann window,
    zero-padded FFT, parabolic interpolation on log magnitude)."""
    start = round(start_s * sample_rate)
    segment = audio[start:start + round(length_s * sample_rate)]
    size = 1 << 20
    spectrum = np.abs(np.fft.rfft(segment * np.hanning(segment.size), size))
    freqs = np.fft.rfftfreq(size, 1.0 / sample_rate)
    lo, hi = near_hz * 2 ** (-search_cents / 1200), near_hz * 2 ** (search_cents / 1200)
    band = np.flatnonzero((freqs >= lo) & (freqs <= hi))
    i = band[np.argmax(spectrum[band])]
    a, b, c = np.log(spectrum[i - 1:i + 2] + 1e-300)
    shift = 0.5 * (a - c) / (a - 2 * b + c)
    return float(freqs[i] + shift * (freqs[1] - freqs[0]))


def cents(measured: float, expected: float) -> float:
    return 1200.0 * math.log2(measured / expected)


def render(instrument_id: str, hz: float, articulation: str, *, duration: float = 1.0,
           lyric: str | None = None, seed: int = 1) -> np.ndarray:
    return render_note(load_instrument(instrument_id), hz=hz, velocity=0.8, duration=duration,
                       articulation=articulation, sample_rate=RATE,
                       rng=np.random.default_rng(seed), lyric=lyric)


@pytest.mark.parametrize("tuning", [default_tuning(), Tuning.equal("zeng")],
                         ids=["sanfen-convention", "equal-zeng"])
@pytest.mark.parametrize("instrument_id", ["bianzhong", "bianqing"])
def test_every_member_of_a_set_sounds_its_tuned_pitch(instrument_id, tuning):
    instrument = load_instrument(instrument_id)
    for name in instrument.pitches:
        hz = tuning.pitch(name).hz
        audio = render(instrument_id, hz, instrument.articulations[0])
        error = cents(peak_hz(audio, hz, length_s=0.8), hz)
        assert abs(error) < 5.0, f"{instrument_id} {name} {hz:.2f} Hz off by {error:+.2f} cents"


def b_interval(instrument, a_hz: float, ratio: float, **pitch) -> float:
    """The measured A-tone → B-tone interval of one bell, cents."""
    strokes = {art: render_note(instrument, hz=a_hz, velocity=0.8, duration=1.0,
                                articulation=art, sample_rate=RATE,
                                rng=np.random.default_rng(1), **pitch) for art in "AB"}
    a_tone = peak_hz(strokes["A"], a_hz, search_cents=100)
    b_tone = peak_hz(strokes["B"], a_hz * ratio, search_cents=60)
    return cents(b_tone, a_tone)


@pytest.mark.parametrize(("name", "ratio"), [
    ("黃鍾", 1.25), ("姑洗", 1.2), ("林鍾", 1.25), ("夷則", 1.2), ("清太簇", 1.25)])
def test_bell_b_tone_is_the_published_third_above_the_a_tone(name, ratio):
    """Shen's major (1.25, 386.3 cents) or minor (1.2, 315.6 cents) third, bell by bell."""
    bells = load_instrument("bianzhong")
    assert bells.params["b_ratios"].get(name, bells.params["b_ratio"]) == ratio
    interval = b_interval(bells, default_tuning().pitch(name).hz, ratio)
    assert abs(interval - 1200.0 * math.log2(ratio)) < 5.0, f"{name}: {interval:.1f} cents"


MIXED_THIRDS = {"黃鍾": 1.25, "太簇": 1.19, "姑洗": 1.2, "清黄钟": 1.26}


def mixed_bells(tmp_path):
    text = Path(load_instrument("bianzhong").path).read_text(encoding="utf-8")
    head, rest = text.split("[params.b_ratios]", 1)
    rest = rest[rest.index("[[params.partials]]"):]
    table = "".join(f'"{name}" = {ratio}\n' for name, ratio in MIXED_THIRDS.items())
    path = tmp_path / "mixed.toml"
    path.write_text(head.replace('id = "bianzhong"', 'id = "mixed"') + "[params.b_ratios]\n"
                    + table + "\n" + rest, encoding="utf-8")
    return load_instrument(path)


@pytest.mark.parametrize("tuning", [default_tuning(), Tuning.equal("zeng")],
                         ids=["by-hz-default", "by-name-zeng"])
def test_a_set_given_mixed_thirds_sounds_each_bells_own_interval(tmp_path, tuning):
    """Each bell's own b_ratio (by pitch name, variants accepted), the rest the default."""
    bells = mixed_bells(tmp_path)
    expected = {"黃鍾": 1.25, "太簇": 1.19, "姑洗": 1.2, "清黃鍾": 1.26, "南呂": 1.2}
    for name, ratio in expected.items():
        pitch = {} if tuning == default_tuning() else {"pitch": name}
        interval = b_interval(bells, tuning.pitch(name).hz, ratio, **pitch)
        want = 1200.0 * math.log2(ratio)
        assert abs(interval - want) < 5.0, f"{name}: {interval:.1f} cents, want {want:.1f}"


def test_each_stroke_drives_its_own_tone():
    a_hz = default_tuning().pitch("林鍾").hz
    b_hz = a_hz * load_instrument("bianzhong").params["b_ratios"]["林鍾"]
    for stroke, own, other in (("A", a_hz, b_hz), ("B", b_hz, a_hz)):
        audio = render("bianzhong", a_hz, stroke)
        spectrum = np.abs(np.fft.rfft(audio[:RATE] * np.hanning(RATE)))
        level = {f: spectrum[round(f)] for f in (own, other)}  # 1 Hz bins
        ratio_db = 20 * np.log10(level[own] / level[other])
        assert ratio_db > 12.0, f"stroke {stroke}: own tone only {ratio_db:.1f} dB above the other"


@pytest.mark.parametrize(
    ("instrument_id", "articulation", "gong", "octaves"),
    [("se", "pluck", "倍黃鍾", 3), ("guan", "blow", "黃鍾", 2), ("sheng", "blow", "黃鍾", 2),
     ("voice", "sing", "倍黃鍾", 2), ("voice", "call", "倍林鍾", 1)],
)
def test_scales_of_range_instruments(instrument_id, articulation, gong, octaves):
    instrument = load_instrument(instrument_id)
    low, high = instrument.range_hz
    scale = [p for p in default_tuning().scale(gong=gong, octaves=octaves) if low <= p.hz <= high]
    assert len(scale) >= 5
    for pitch in scale:
        audio = render(instrument_id, pitch.hz, articulation, lyric="鳴")
        error = cents(peak_hz(audio, pitch.hz, start_s=0.15, length_s=0.8), pitch.hz)
        assert abs(error) < 5.0, f"{instrument_id} {pitch.name} off by {error:+.2f} cents"


def test_bo_rings_at_its_default_pitch_when_given_none():
    bo = load_instrument("bo")
    audio = render_note(bo, hz=None, velocity=1.0, duration=0.5, articulation="A",
                        sample_rate=RATE, rng=np.random.default_rng(0))
    assert abs(cents(peak_hz(audio, bo.default_hz), bo.default_hz)) < 5.0
