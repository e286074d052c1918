"""The voice: formants, harmonics, consonant noise, codas, vibrato, singers, speech, calls.

Measured on the rendered audio: LPC formants (autocorrelation method), harmonic levels
from the spectrum, noise bands, an autocorrelation f0 track.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest
from scipy import linalg, signal

from soundscape.errors import InstrumentError
from soundscape.music.instruments import load_instrument
from soundscape.music.model_params import check_params
from soundscape.sound.synth import params_of, render_note
from soundscape.sound.synth import voice as model
from soundscape.text import prosody

RATE = 16000


def sing(lyric, hz=131.0, *, duration=1.0, articulation="sing", performer=None, seed=0,
         rate=RATE, velocity=1.0):
    return render_note(load_instrument("voice"), hz=hz, velocity=velocity, duration=duration,
                       articulation=articulation, sample_rate=rate,
                       rng=np.random.default_rng(seed), lyric=lyric, performer=performer)


def lpc_formants(x: np.ndarray, rate: int, count: int = 3) -> list[float]:
    """The lowest ``count`` formants (Hz) by autocorrelation LPC of order 2 + rate/1000."""
    order = int(2 + rate / 1000)
    x = signal.lfilter([1.0, -0.97], [1.0], x) * np.hamming(x.size)
    r = np.correlate(x, x, "full")[x.size - 1:x.size + order]
    a = linalg.solve_toeplitz(r[:order], -r[1:order + 1])
    roots = [z for z in np.roots(np.concatenate([[1.0], a])) if z.imag > 0]
    found = sorted(np.angle(z) * rate / (2 * np.pi) for z in roots
                   if -np.log(abs(z)) * rate / np.pi < 500)
    return [f for f in found if f > 90][:count]


def harmonic_levels_db(x: np.ndarray, rate: int, f0: float, count: int = 4) -> np.ndarray:
    """Levels of harmonics 1..count (dB, the fundamental at 0)."""
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size)))
    freqs = np.fft.rfftfreq(x.size, 1.0 / rate)
    peaks = [spectrum[(freqs > (k - 0.3) * f0) & (freqs < (k + 0.3) * f0)].max()
             for k in range(1, count + 1)]
    return 20.0 * np.log10(np.array(peaks) / peaks[0])


def band_share(x: np.ndarray, rate: int, low: float, high: float, *, above: float = 500.0):
    """Share of the energy above ``above`` Hz that lies in [low, high]."""
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size))) ** 2
    freqs = np.fft.rfftfreq(x.size, 1.0 / rate)
    return spectrum[(freqs >= low) & (freqs <= high)].sum() / spectrum[freqs >= above].sum()


def f0_track(x: np.ndarray, rate: int, *, hop_s: float = 0.005, window_s: float = 0.04,
             low: float = 70.0, high: float = 700.0) -> np.ndarray:
    """Fundamental per hop by the autocorrelation peak (parabolic interpolation); NaN where
    the frame is silent or has no clear period."""
    n, hop = int(window_s * rate), int(hop_s * rate)
    shortest, longest = int(rate / high), int(rate / low)
    out = []
    for start in range(0, x.size - n, hop):
        seg = x[start:start + n] - np.mean(x[start:start + n])
        ac = np.correlate(seg, seg, "full")[n - 1:]
        lag = shortest + int(np.argmax(ac[shortest:longest]))
        y0, y1, y2 = ac[lag - 1:lag + 2]
        if ac[0] < 1e-9 or y1 < 0.3 * ac[0]:  # silence or no period: unvoiced
            out.append(np.nan)
            continue
        bend = y0 - 2 * y1 + y2
        out.append(rate / (lag + (np.clip(0.5 * (y0 - y2) / bend, -1, 1) if bend < 0 else 0)))
    return np.array(out)


def rms_db(x: np.ndarray) -> float:
    return 10.0 * np.log10(np.mean(x ** 2) + 1e-30)


@pytest.mark.parametrize("vowel", ["a", "e", "i", "o", "u", "ɛ", "ɑ", "ə"])
def test_sustained_vowel_formants_within_ten_percent_of_the_table(vowel):
    audio = sing(vowel, hz=110.0)
    found = lpc_formants(audio[int(0.4 * RATE):int(0.9 * RATE)], RATE)
    table = [row[0] for row in params_of(load_instrument("voice"))["vowels"][vowel][:3]]
    for measured, target in zip(found, table, strict=True):
        assert abs(measured / target - 1.0) < 0.10, f"{vowel}: {found} against {table}"


def test_the_voice_is_rich_in_harmonics():
    """Not a sine: [i] on 262 Hz has its 2nd harmonic 10-28 dB down; [a] has most of its
    energy outside the fundamental and a centroid far above it."""
    i_levels = harmonic_levels_db(sing("i", 262.0)[int(0.3 * RATE):int(0.8 * RATE)], RATE, 262.0)
    assert -28.0 < i_levels[1] < -10.0
    a = sing("a", 262.0)[int(0.3 * RATE):int(0.8 * RATE)]
    spectrum = np.abs(np.fft.rfft(a * np.hanning(a.size))) ** 2
    freqs = np.fft.rfftfreq(a.size, 1.0 / RATE)
    fundamental = spectrum[(freqs > 0.7 * 262) & (freqs < 1.3 * 262)].sum()
    assert 1.0 - fundamental / spectrum.sum() > 0.6
    assert np.sum(freqs * spectrum) / np.sum(spectrum) > 2.5 * 262.0


@pytest.mark.parametrize(("onset", "low", "high", "share"), [
    ("s", 4000.0, 8000.0, 0.6),       # alveolar sibilant: high
    ("ɕ", 2500.0, 5000.0, 0.55),      # alveolo-palatal: lower
    ("x", 700.0, 3000.0, 0.6),        # velar: low
])
def test_fricative_noise_lies_in_its_band(onset, low, high, share):
    rate = 22050
    audio = sing(f"{onset} a", 131.0, rate=rate)
    noise = audio[int(0.01 * rate):int(0.09 * rate)]
    assert band_share(noise, rate, low, high) > share
    assert rms_db(noise) > rms_db(audio[int(0.4 * rate):int(0.8 * rate)]) - 30.0  # audible


def test_aspirated_stop_waits_longer_for_the_voice():
    """pʰ: burst then aspiration (VOT ~70 ms) before voicing; p: voicing soon after."""
    def voicing_onset(lyric):
        audio = sing(lyric, 131.0)
        lows = signal.sosfilt(signal.butter(4, 400, fs=RATE, output="sos"), audio)
        level = np.convolve(lows ** 2, np.ones(80) / 80, "same")
        return np.argmax(level > 0.3 * level.max()) / RATE
    assert voicing_onset("pʰ a") - voicing_onset("p a") > 0.04


def test_stop_coda_is_a_closure_without_release():
    audio = sing("l u k", 131.0, duration=1.0)
    vowel = rms_db(audio[int(0.4 * RATE):int(0.7 * RATE)])
    assert rms_db(audio[int(0.955 * RATE):int(1.0 * RATE)]) < vowel - 35.0  # closed
    assert rms_db(audio[int(1.0 * RATE):]) < vowel - 35.0                  # and not released


def test_nasal_coda_is_a_low_murmur():
    audio = sing("m j ɐ ŋ", 131.0, duration=1.0)
    vowel = audio[int(0.4 * RATE):int(0.7 * RATE)]
    murmur = audio[int(0.86 * RATE):int(0.98 * RATE)]
    assert band_share(murmur, RATE, 90, 500, above=90) > 0.8
    assert band_share(vowel, RATE, 90, 500, above=90) < 0.5
    assert rms_db(murmur) < rms_db(vowel) - 3.0


def test_vibrato_has_the_singers_rate_and_depth_after_a_delay():
    voice = load_instrument("voice")
    singer = model.traits(params_of(voice), "gong.1")
    assert 5.0 <= singer.vibrato_hz <= 6.5
    track = f0_track(sing("a", 220.0, duration=2.5, performer="gong.1"), RATE)
    cents = 1200.0 * np.log2(track / 220.0)
    steady = cents[int((singer.vibrato_delay_s + 0.3) / 0.005):int(2.3 / 0.005)]
    wave = (steady - steady.mean()) * np.hanning(steady.size)
    spectrum = np.abs(np.fft.rfft(wave, 1 << 14))
    rate = np.fft.rfftfreq(1 << 14, 0.005)[np.argmax(spectrum)]
    assert abs(rate - singer.vibrato_hz) < 0.25
    depth = np.sqrt(2.0) * np.std(steady)
    assert 0.7 * singer.vibrato_cents < depth < 1.4 * singer.vibrato_cents
    early = cents[int(0.03 / 0.005):int(singer.vibrato_delay_s / 0.005)]
    assert np.std(early) < 0.5 * np.std(steady)  # the vibrato sets in after its delay


def test_each_singer_a_distinct_voice():
    params = params_of(load_instrument("voice"))
    a, b = model.traits(params, "gong.1"), model.traits(params, "gong.2")
    assert a == model.traits(params, "gong.1")  # stable (crc32, not Python's hash)
    assert a.vibrato_hz != b.vibrato_hz and a.tract_scale != b.tract_scale
    assert a.vibrato_phase != b.vibrato_phase
    one = sing("a", 131.0, performer="gong.1")
    two = sing("a", 131.0, performer="gong.2")
    f1 = [lpc_formants(x[int(0.4 * RATE):int(0.9 * RATE)], RATE)[1] for x in (one, two)]
    assert abs(f1[0] / f1[1] - b.tract_scale / a.tract_scale) < 0.03  # a longer tract: lower


def thawed(value):
    """A writable copy of read-only parameters (mappings and tuples)."""
    if isinstance(value, Mapping):
        return {k: thawed(v) for k, v in value.items()}
    return [thawed(v) for v in value] if isinstance(value, tuple | list) else value


def test_a_singer_fixed_in_the_table_keeps_his_traits():
    params = thawed(params_of(load_instrument("voice")))
    params["singers"] = {"dashi": {"vibrato_hz": 5.5, "tract_scale": 1.0}}
    model.validate(params)
    singer = model.traits(params, "dashi")
    assert (singer.vibrato_hz, singer.tract_scale) == (5.5, 1.0)
    params["singers"] = {"dashi": {"vibrato_rate": 5.5}}
    with pytest.raises(model.ParamError, match=r"singers\.dashi\.vibrato_rate"):
        model.validate(params)


def test_same_seed_same_bytes_and_a_han_lyric_reads_by_default():
    assert sing("鹿", seed=4).tobytes() == sing("鹿", seed=4).tobytes()
    assert sing("鹿", seed=4).tobytes() == sing("l u k", seed=4).tobytes()  # middle-chinese
    assert sing("鹿", seed=4).tobytes() != sing("鹿", seed=5).tobytes()


@pytest.mark.parametrize(("lyric", "falls"), [("k a n 51", True), ("l a j 35", False)])
def test_speech_follows_the_tone(lyric, falls):
    audio = sing(lyric, 130.0, duration=0.5, articulation="speak")
    track = f0_track(audio, RATE)
    voiced = track[int(0.15 / 0.005):int(0.42 / 0.005)]
    change = 12.0 * np.log2(np.nanmean(voiced[-5:]) / np.nanmean(voiced[:5]))
    assert (change < -3.0) if falls else (change > 1.5)


def test_spoken_syllables_last_as_the_prosody_says():
    """Four open syllables: the three non-final ones equal, the last lengthened (Klatt's
    rule), the closures of their stops where the prosody puts the syllables' starts."""
    audio = sing("p a 33 | p a 33 | p a 33 | p a 33", 130.0, duration=1.0, articulation="speak")
    level = np.array([rms_db(audio[i:i + 80]) for i in range(0, int(1.0 * RATE), 80)])
    closed = level < level.max() - 30.0
    starts = np.flatnonzero(np.diff(closed.astype(int)) == 1) * 80 / RATE
    expected = np.cumsum(prosody.syllable_seconds([False] * 4))[:3]  # 0.234 s apart
    assert np.allclose(starts, expected, atol=0.03), (starts, expected)


def _parselmouth_f0(audio: np.ndarray, rate: int = RATE) -> tuple[np.ndarray, np.ndarray]:
    """Praat's f0 track (times s, Hz; unvoiced frames dropped)."""
    import parselmouth

    pitch = parselmouth.Sound(audio, rate).to_pitch(time_step=0.005, pitch_floor=60.0,
                                                    pitch_ceiling=400.0)
    hz = pitch.selected_array["frequency"]
    return pitch.xs()[hz > 0], hz[hz > 0]


@pytest.mark.parametrize(("lyric", "shape"), [
    ("ɣ j u 33", "level"),     # 平 (潘 & 張 2013: 33)
    ("ts ɑ 35", "rise"),       # 上 35
    ("dʑʱ j a 51", "fall"),    # 去 51
    ("k ʊ ŋ 55", "level"),     # Mandarin 1
    ("j u 35", "rise"),        # Mandarin 2
    ("ʂ ɤ 51", "fall"),        # Mandarin 4
    ("m a 214", "dip"),        # Mandarin 3, phrase-final
])
def test_a_spoken_syllable_follows_its_tone_in_praats_f0(lyric, shape):
    """The middle syllable of a phrase between two level 33s, its f0 by Praat over its
    second half (the first carries over from 33: qTA): a rise or a fall of more than 1.5
    semitones the tone's way, a level within 1, a dip down then up."""
    audio = sing(f"a 33 | {lyric} | a 33", 120.0, duration=1.2, articulation="speak")
    bounds = model.speech_slots(model.syllables(params_of(load_instrument("voice")),
                                                f"a 33 | {lyric} | a 33"), 1.2, "speak")
    t, hz = _parselmouth_f0(audio)
    start = bounds[1] + (0.04 if shape == "dip" else 0.5 * (bounds[2] - bounds[1]))
    semis = 12.0 * np.log2(hz[(t > start) & (t < bounds[2] - 0.03)] / 120.0)
    first, last = np.median(semis[:3]), np.median(semis[-3:])  # past any octave slip
    if shape == "rise":
        assert last - first > 1.5, semis
    elif shape == "fall":
        assert last - first < -1.5, semis
    elif shape == "level":
        assert abs(last - first) < 1.0, semis
    else:
        low = np.min(semis)
        assert first - low > 1.0 and last - low > 2.0, semis


def test_a_checked_syllable_is_shorter_than_an_open_one():
    """入聲: 鹿 l u k against 龍 l u ŋ in the same place of a phrase, voicing measured."""
    def voiced_s(middle):
        audio = sing(f"a 33 | {middle} | a 33", 120.0, articulation="speak",
                     duration=prosody.phrase_seconds([False, middle.endswith("k 3"), False]))
        t, _ = _parselmouth_f0(audio)
        return t

    closed, opened = voiced_s("l u k 3"), voiced_s("l u ŋ 33")
    assert closed[-1] < opened[-1] - 0.04  # the whole phrase is shorter by the short syllable
    params = params_of(load_instrument("voice"))
    short = model.speech_slots(model.syllables(params, "a 33 | l u k 3 | a 33"), 1.0, "speak")
    long = model.speech_slots(model.syllables(params, "a 33 | l u ŋ 33 | a 33"), 1.0, "speak")
    assert np.diff(short)[1] < 0.85 * np.diff(long)[1]


def test_a_call_is_louder_and_brighter_than_song():
    sung, called = sing("a", 196.0), sing("a", 196.0, articulation="call")
    held = slice(int(0.3 * RATE), int(0.8 * RATE))
    assert rms_db(called[held]) > rms_db(sung[held]) + 2.0
    tilt = [harmonic_levels_db(x[held], RATE, 196.0, 12)[-4:].mean() for x in (sung, called)]
    assert tilt[1] > tilt[0] + 3.0  # pressed phonation: upper harmonics stronger


def test_bad_lyrics_are_named():
    with pytest.raises(InstrumentError, match="phone 'q'"):
        sing("q a")
    with pytest.raises(InstrumentError, match="at most one tone"):
        sing("a 35 51")


def test_audition_sings_luming_in_a_tenors_octave_then_calls_and_speaks():
    from soundscape.cli.audition import demo_notes
    from soundscape.music.register import voice_part
    from soundscape.music.tuning import default_tuning

    notes = list(demo_notes(load_instrument("voice"), tuning=default_tuning(), gong="黃鍾"))
    sung = [n for n in notes if n.articulation == "sing"]
    assert all(voice_part("tenor").holds(n.hz) for n in sung)
    assert [n.articulation for n in notes[-3:]] == ["call", "call", "speak"]


def test_made_at_half_rate_and_brought_up_to_48_khz():
    """At 48 kHz the voice is made at 24 kHz and upsampled: same harmonics, right pitch,
    nothing above 12 kHz, and the same seed gives the same bytes."""
    high = sing("a", 196.0, rate=48000, seed=3)
    assert high.size == 2 * sing("a", 196.0, rate=24000, seed=3).size
    assert high.tobytes() == sing("a", 196.0, rate=48000, seed=3).tobytes()
    held = high[int(0.3 * 48000):int(0.8 * 48000)]
    low = sing("a", 196.0, rate=24000, seed=3)[int(0.3 * 24000):int(0.8 * 24000)]
    assert np.allclose(harmonic_levels_db(held, 48000, 196.0, 8),
                       harmonic_levels_db(low, 24000, 196.0, 8), atol=1.0)
    track = f0_track(high[::2], 24000)[40:160]
    assert abs(1200 * np.log2(np.nanmedian(track) / 196.0)) < 10.0
    assert band_share(held, 48000, 12500, 24000, above=100) < 1e-4


@pytest.mark.parametrize(("edit", "key"), [
    (lambda p: p["timing"].pop("closure_s"), r"timing\.closure_s"),
    (lambda p: p["consonants"]["m"].update(place="lips"), r"consonants\.m\.place"),
    (lambda p: p["glides"].update(j="q"), r"glides\.j"),
    (lambda p: p["vowels"].update(a=[[650, 80]]), r"vowels\.a"),
    (lambda p: p["source"]["call"].update(open_quotient=2.0), r"source\.call\.open_quotient"),
    (lambda p: p["source"]["speak"].update(flutter_percent=150.0),
     r"source\.speak\.flutter_percent"),
])
def test_bad_parameters_name_their_key(edit, key):
    """Refused, naming the key, by the checks a voice file's [params] meet when it loads (the
    model's schema) or before its first note (the model's own validate)."""
    params = thawed(params_of(load_instrument("voice")))
    edit(params)
    with pytest.raises((InstrumentError, model.ParamError), match=key):
        check_params(params, "voice", model.ARTICULATIONS, "voice.toml")
        model.validate(params)


def test_a_called_phrase_is_raised_above_its_speaking_pitch():
    said = f0_track(sing("a 33 | a 33", 120.0, duration=0.8, articulation="speak"), RATE)
    called = f0_track(sing("a 33 | a 33", 120.0, duration=0.8, articulation="call"), RATE)
    rise = 12.0 * np.log2(np.nanmedian(called[30:140]) / np.nanmedian(said[30:140]))
    raise_by = params_of(load_instrument("voice"))["call_raise_semitones"]
    assert abs(rise - raise_by) < 1.0


def test_each_speaker_speaks_on_his_own_pitch_and_sings_on_the_note():
    params = params_of(load_instrument("voice"))
    a, b = (model.traits(params, who) for who in ("speech.binzhe", "speech.gong"))
    said = [f0_track(sing("a 33", 120.0, duration=0.6, articulation="speak", performer=who),
                     RATE)[20:100] for who in ("speech.binzhe", "speech.gong")]
    apart = 12.0 * np.log2(np.nanmedian(said[1]) / np.nanmedian(said[0]))
    assert abs(apart - (b.speech_semitones - a.speech_semitones)) < 0.5
    sung = f0_track(sing("a", 196.0, performer="speech.gong"), RATE)[40:160]
    assert abs(1200.0 * np.log2(np.nanmedian(sung) / 196.0)) < 10.0
