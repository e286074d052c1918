"""Pitch of every note of every set, measured from the rendered audio (spectral peaks)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from soundscape.errors import InstrumentError
from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import Tuning, default_tuning
from soundscape.sound.synth import bell_tones, params_of, render_note

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


def bell_strokes(instrument, a_hz: float, **keywords) -> dict[str, np.ndarray]:
    """One bell struck 正鼓 (A) and 側鼓 (B)."""
    return {art: render_note(instrument, hz=a_hz, velocity=0.8, duration=1.0,
                             articulation=art, sample_rate=RATE,
                             rng=np.random.default_rng(1), **keywords) for art in "AB"}


@pytest.mark.parametrize("tuning", [default_tuning(), Tuning.equal("zeng")],
                         ids=["sanfen-convention", "equal-zeng"])
def test_every_bell_b_tone_is_the_third_above_in_the_sets_tuning(tuning):
    """Each B-tone is the 律 a major or minor third up as the tuning gives it (黃鍾's B is
    姑洗: 81/64 in 三分損益, 407.8 cents, not a just 5/4), measured bell by bell."""
    bells = load_instrument("bianzhong")
    assert len(params_of(bells)["b_steps"]) == len(bells.pitches) == 16
    for name in bells.pitches:
        steps = params_of(bells)["b_steps"][name]
        assert steps in (3, 4)
        want = tuning.step(name, steps).hz
        b = bell_strokes(bells, tuning.pitch(name).hz, pitch=name, tuning=tuning)["B"]
        error = cents(peak_hz(b, want, search_cents=60), want)
        assert abs(error) < 3.0, f"{name}: B-tone {error:+.2f} cents off {want:.2f} Hz"


def test_huangzhong_b_tone_is_guxian_not_a_just_third():
    bells = load_instrument("bianzhong")
    b = bell_strokes(bells, default_tuning().pitch("黃鍾").hz)["B"]
    measured = peak_hz(b, 330.0, search_cents=60)
    assert abs(cents(measured, 331.12)) < 2.0  # 姑洗 = 261.63 × 81/64
    assert abs(cents(measured, 327.03)) > 15.0  # 261.63 × 5/4


MIXED_THIRDS = {"黃鍾": 1.25, "太簇": 1.19, "姑洗": 1.2, "清黄钟": 1.26}


def mixed_bells(tmp_path):
    """The rack with some bells measured as plain ratios (``b_ratios`` outranks b_steps)."""
    text = Path(load_instrument("bianzhong").path).read_text(encoding="utf-8")
    table = "".join(f'"{name}" = {ratio}\n' for name, ratio in MIXED_THIRDS.items())
    path = tmp_path / "mixed.toml"
    path.write_text(text.replace('id = "bianzhong"', 'id = "mixed"') + "\n[params.b_ratios]\n"
                    + table, encoding="utf-8")
    return load_instrument(path)


@pytest.mark.parametrize("tuning", [default_tuning(), Tuning.equal("zeng")],
                         ids=["by-hz-default", "by-name-zeng"])
def test_a_set_given_mixed_thirds_sounds_each_bells_own_interval(tmp_path, tuning):
    """Each bell's own b_ratio (by pitch name, variants accepted), the rest on the tuning."""
    bells = mixed_bells(tmp_path)
    expected = {"黃鍾": 1.25, "太簇": 1.19, "姑洗": 1.2, "清黃鍾": 1.26,
                "南呂": tuning.step("南呂", 3).hz / tuning.pitch("南呂").hz}
    for name, ratio in expected.items():
        keywords = {} if tuning == default_tuning() else {"pitch": name, "tuning": tuning}
        a_hz = tuning.pitch(name).hz
        strokes = bell_strokes(bells, a_hz, **keywords)
        interval = cents(peak_hz(strokes["B"], a_hz * ratio, search_cents=60),
                         peak_hz(strokes["A"], a_hz, search_cents=100))
        want = 1200.0 * math.log2(ratio)
        assert abs(interval - want) < 5.0, f"{name}: {interval:.1f} cents, want {want:.1f}"


def test_each_stroke_drives_its_own_tone():
    bells = load_instrument("bianzhong")
    a_hz, b_hz = bell_tones(bells, hz=default_tuning().pitch("林鍾").hz, pitch="林鍾")
    for stroke, own, other in (("A", a_hz, b_hz), ("B", b_hz, a_hz)):
        audio = render("bianzhong", a_hz, stroke)
        spectrum = np.abs(np.fft.rfft(audio[:RATE] * np.hanning(RATE)))
        level = {f: spectrum[round(f)] for f in (own, other)}  # 1 Hz bins
        ratio_db = 20 * np.log10(level[own] / level[other])
        assert ratio_db > 12.0, f"stroke {stroke}: own tone only {ratio_db:.1f} dB above the other"


# Braun's Bellstab means (cents from equal temperament) less their mean, 姑洗 = C.
BRAUN_MEAN = -465.2 / 12


def unscattered_bells(tmp_path):
    text = Path(load_instrument("bianzhong").path).read_text(encoding="utf-8")
    assert "scatter_cents = 14.7" in text
    path = tmp_path / "even.toml"
    path.write_text(text.replace('id = "bianzhong"', 'id = "even"').replace(
        "scatter_cents = 14.7", "scatter_cents = 0.0"), encoding="utf-8")
    return load_instrument(path)


@pytest.mark.parametrize(("name", "braun"), [("南呂", -19.5), ("太簇", -58.0), ("姑洗", -31.6)])
def test_zeng_bells_sound_brauns_class_deviation(tmp_path, name, braun):
    """Without the single-bell scatter, a zeng bell's A-tone sits off the tuning by the
    measured class mean less the mean of all classes (南呂 = F: Braun's norm tone)."""
    bells = unscattered_bells(tmp_path)
    hz = default_tuning().pitch(name).hz
    a = bell_strokes(bells, hz, pitch=name, bells="zeng")["A"]
    error = cents(peak_hz(a, hz, search_cents=80), hz)
    assert abs(error - (braun - BRAUN_MEAN)) < 1.0, f"{name}: {error:+.2f} cents"


def test_zeng_scatter_is_per_bell_bounded_and_deterministic():
    bells = load_instrument("bianzhong")
    tuning = default_tuning()
    offsets = []
    for name in bells.pitches:
        hz = tuning.pitch(name).hz
        ideal = bell_tones(bells, hz=hz, pitch=name)
        zeng = bell_tones(bells, hz=hz, pitch=name, bells="zeng")
        assert zeng == bell_tones(bells, hz=hz, pitch=name, bells="zeng")
        offsets += [cents(z, i) for z, i in zip(zeng, ideal, strict=True)]
    offsets = np.array(offsets)
    # class means −19.5 … −58 less −38.8, then ±2 × 14.7 cents of scatter
    assert np.all(offsets < 19.3 + 29.4 + 0.1) and np.all(offsets > -19.3 - 29.4 - 0.1)
    assert 8.0 < np.std(offsets) < 30.0
    # two bells' B-tones on the same 律 (黃鍾's and 大呂's: 姑洗) scatter differently
    b_huang = bell_tones(bells, hz=tuning.pitch("黃鍾").hz, pitch="黃鍾", bells="zeng")[1]
    b_da = bell_tones(bells, hz=tuning.pitch("大呂").hz, pitch="大呂", bells="zeng")[1]
    assert abs(cents(b_huang, b_da)) > 0.5
    # and the sound follows: the measured A-tone is the zeng tone
    hz = tuning.pitch("清太簇").hz
    a_hz = bell_tones(bells, hz=hz, pitch="清太簇", bells="zeng")[0]
    a = bell_strokes(bells, hz, pitch="清太簇", bells="zeng")["A"]
    assert abs(cents(peak_hz(a, a_hz, search_cents=80), a_hz)) < 2.0


def test_unknown_bell_set_is_refused():
    with pytest.raises(InstrumentError, match="bells='qing' not accepted; accepted: ideal, zeng"):
        render_note(load_instrument("bianzhong"), hz=262.0, velocity=0.5, duration=0.1,
                    articulation="A", sample_rate=RATE, rng=np.random.default_rng(0),
                    bells="qing")


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


def test_the_render_voice_sounds_the_chosen_bell_set():
    """SynthVoice(bells=…), what `soundscape render --bells` builds, passes the set on."""
    from soundscape.performance import Event, Source
    from soundscape.sound.notes import SynthVoice

    tuning = default_tuning()
    source = Source("east.shengzhong", "bianzhong", "笙鐘", "shengzhong", "east", (0.0, 0.0, 0.0))
    event = Event(0.0, 0.5, source.id, tuning.pitch("南呂"), 0.8, "A", cue="test")
    bells = load_instrument("bianzhong")
    for choice in ("ideal", "zeng"):
        audio = SynthVoice(bells=choice)(event, source, sample_rate=RATE,
                                         rng=np.random.default_rng(0))
        want = bell_tones(bells, hz=event.pitch.hz, pitch="南呂", bells=choice)[0]
        assert abs(cents(peak_hz(audio, want, search_cents=80), want)) < 1.0


@pytest.mark.parametrize("tuning", [default_tuning(), Tuning.equal(440.0)],
                         ids=["sanfen-convention", "equal-440"])
def test_the_renders_voice_strikes_a_bells_b_tone_in_the_performances_tuning(tuning):
    """The render's voice reckons a bell's B-tone (a step of the tuning) in the tuning the
    performance was sequenced in, not the default: 黃鍾's B is 姑洗, 400 cents up in equal
    temperament and 407.8 in 三分損益."""
    from dataclasses import replace

    from soundscape.music.pitch import Pitch
    from soundscape.performance import Event, Info, Performance, Source
    from soundscape.sound.notes import SynthVoice

    bells = Source("b", "bianzhong", "鐘", "bells", "east", (0.0, 0.0, 1.5))
    event = Event(0.0, 1.0, "b", Pitch("黃鍾", 0, tuning.pitch("黃鍾").hz), 0.8, "B", "c")
    performance = replace(Performance.build([event], [], {"b": bells}),
                          info=Info(tuning=tuning.name, huangzhong_hz=tuning.huangzhong_hz))
    voice = SynthVoice().bind(performance, seed=0)
    note = voice(event, bells, sample_rate=RATE, rng=np.random.default_rng(1))
    want = tuning.step("黃鍾", 4).hz
    error = cents(peak_hz(note, want, search_cents=60), want)
    assert abs(error) < 3.0, f"B-tone {error:+.2f} cents off {want:.2f} Hz ({tuning.name})"


def test_only_the_notes_the_tuning_shapes_are_cached_by_it():
    """A bell's note is kept apart per temperament (its B-tone is a step of it); a drum's,
    a footstep's or a voice's is the same note in any temperament, kept once."""
    from dataclasses import replace

    from soundscape.performance import Info, Performance
    from soundscape.sound.notes import SynthVoice

    def voice(tuning):
        rite = replace(Performance.build([], [], {}),
                       info=Info(tuning=tuning.name, huangzhong_hz=tuning.huangzhong_hz))
        return SynthVoice().bind(rite, seed=0)

    sanfen, equal = voice(default_tuning()), voice(Tuning.equal(default_tuning().huangzhong_hz))
    for unshaped in ("jiangu", "footstep", "voice"):
        assert sanfen.stored_as((unshaped,)) == equal.stored_as((unshaped,)), unshaped
    assert sanfen.stored_as(("bianzhong",)) != equal.stored_as(("bianzhong",))
