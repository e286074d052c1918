"""The voice model against stronger candidates, measured as a voice scientist would.

The same sung line (鹿鳴 呦呦鹿鳴 食野之苹, 大師, Middle Chinese, the tenor's octave) and the
same spoken request (「請射于公」, 賓者) are made by

- ``klatt``: the project's voice (KLGLOTT88 source through Klatt's cascade; ``voice``,
  ``sung_line``), exactly as the render makes it;
- ``world``: the WORLD vocoder's synthesis (M. Morise, F. Yokomori & K. Ozawa, "WORLD: a
  vocoder-based high-quality speech synthesis system for real-time applications", IEICE
  Trans. Inf. & Syst. E99-D(7):1877-1884, 2016; the PyPI package ``pyworld``) driven by the
  same plan: the same f0 track, and per 5 ms frame a spectral envelope that is the same
  tract's response times the KLGLOTT88 pulse's spectral envelope and tilt, with the
  breath and aspiration as WORLD's aperiodicity;
- ``klattgrid``: Praat's KlattGrid (D. Weenink's implementation of Klatt & Klatt 1990 in
  Praat; praat-parselmouth) given the same formant, bandwidth, pitch, voicing, aspiration,
  breathiness, open-phase and tilt tracks.

and, as prosody modifiers of the only voice there is (the Klatt voice made on one pitch, the
track's median), ``psola`` (Praat's Manipulation, overlap-add) and ``world-resynth`` (WORLD's
DIO + StoneMask, CheapTrick and D4C analysis, then synthesis on the track).

Consonant bursts and frication are the project's in all three (added after the engine), so
the comparison is of the voice source and its synthesis. Measured with Praat
(parselmouth): F1-F3 of six sustained vowels against Peterson & Barney (1952) and
Hillenbrand et al. (1995) (men), local jitter and shimmer, HNR (cc), H1-H2 and H1-A3 (dB),
how far Praat's f0 is from the track the engine was given (cents), and the CPU seconds per
second of voice of the engine alone.

Run: ``.venv/bin/python bench/bench_voicemodel.py [--out docs] [--engines klatt,world,…]``
(writes ``voicemodel_line.png`` and ``voicemodel_speech.png``; needs ``pyworld`` for world).
``--flutter`` measures the speaking voice's f0 wander without and with Klatt & Klatt's flutter.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy import signal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from soundscape.fileio import atomic_path
from soundscape.music.instruments import load_instrument
from soundscape.music.register import octave_shift, sung_pitch
from soundscape.music.repertoire import load_piece
from soundscape.music.tuning import default_tuning
from soundscape.output.fonts import families
from soundscape.sound.synth import glottal, klatt, params_of, sung_line, voice
from soundscape.sound.synth._common import db_to_gain, frames_for
from soundscape.sound.synth.sung_line import SungNote
from soundscape.text import prosody
from soundscape.text.reading import checked, phrase_contours, read

RATE = 24000  # the voice bus's working rate (48 kHz renders make the voice at 24 kHz)
SINGER = "gong.dashi"
SPEAKER = "binzhe"
#: Men, F1-F3 (Hz): G. E. Peterson & H. L. Barney, JASA 24:175-184 (1952), Table II;
#: e and o: J. Hillenbrand et al., JASA 97(5):3099-3111 (1995), Table V.
MALE_VOWELS = {"i": (270, 2290, 3010), "u": (300, 870, 2240), "ɔ": (570, 840, 2410),
               "ɑ": (730, 1090, 2440), "e": (476, 2089, 2691), "o": (497, 910, 2459)}


@dataclass
class Parts:
    """What every engine is given: the plan's tracks at the working rate."""

    params: dict
    plan: object
    f0: np.ndarray            # Hz per sample, the track the source should follow
    av: np.ndarray            # voicing per sample (0..1)
    ah: np.ndarray            # aspiration per sample (0..1)
    poles: np.ndarray         # (frames, R, 2) smoothed, 10 ms frames
    zero: np.ndarray          # (frames, 2)
    source: dict              # the articulation's source row
    singer: voice.Traits
    levels: np.ndarray | None  # the notes' velocities per sample (a line), or None


# -- the plans (mirroring sung_line._line and voice._voice up to the engine) -----------------
def line_parts(notes: list[SungNote], rng: np.random.Generator,
               performer: str = SINGER) -> Parts:
    params = params_of(load_instrument("voice"))
    singer = voice.traits(params, performer)
    end = notes[-1].end
    frames = frames_for(end + params["release_s"] + voice._TAIL_S, RATE)
    sylls = [voice.syllables(params, n.lyric) for n in notes]
    plan = voice._Plan(params, frames_for(frames / RATE, round(1.0 / params["frame_s"])),
                       singer.tract_scale, params["vowels"][sylls[0][0].nucleus])
    for note, syls in zip(notes, sylls, strict=True):
        slots = np.linspace(note.start, note.end, len(syls) + 1)
        for syl, t0, t1 in zip(syls, slots[:-1], slots[1:], strict=True):
            voice._syllable(plan, syl, t0, t1, 1.0)
    plan.hold_after(end)
    f0, _ = sung_line.pitch_track(params, notes, frames=frames, sample_rate=RATE, rng=rng,
                                  performer=performer)
    av, ah = sung_line._tracks(plan, params, end, frames, RATE)
    poles, zero = plan.smooth_tract()
    poles[..., 0] = np.minimum(poles[..., 0], 0.45 * RATE)
    return Parts(params, plan, f0, av, ah, poles, zero, dict(params["source"]["sing"]), singer,
                 sung_line._levels(notes, frames, RATE))


def speech_parts(lyric: str, duration: float, rng: np.random.Generator, hz: float = 120.0,
                 performer: str = SPEAKER) -> Parts:
    params = params_of(load_instrument("voice"))
    singer = voice.traits(params, performer)
    sylls = voice.syllables(params, lyric)
    frames = frames_for(duration + params["release_s"] + voice._TAIL_S, RATE)
    plan = voice._Plan(params, frames_for(frames / RATE, round(1.0 / params["frame_s"])),
                       singer.tract_scale, params["vowels"][sylls[0].nucleus])
    slots = voice.speech_slots(sylls, duration, "speak")
    for syl, t0, t1 in zip(sylls, slots[:-1], slots[1:], strict=True):
        voice._syllable(plan, syl, t0, t1, 0.8)
    plan.hold_after(duration)
    f0 = voice._pitch(params, hz, "speak", singer, sylls, slots, frames, RATE, rng)
    av, ah = voice._sample_tracks(plan, params, "speak", duration, frames, RATE)
    poles, zero = plan.smooth_tract()
    poles[..., 0] = np.minimum(poles[..., 0], 0.45 * RATE)
    return Parts(params, plan, f0, av, ah, poles, zero, dict(params["source"]["speak"]), singer,
                 None)


def _finish(parts: Parts, out: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """As the project does after the tract: the held vowel to its level, then the bursts and
    frication, then the notes' velocities."""
    params = parts.params
    out = out * params["level_rms"] / voice._steady_rms(out, parts.plan.steady, RATE)
    out = out + voice._noises(parts.plan.noises, params["level_rms"], out.size, RATE, rng)
    return out * parts.levels if parts.levels is not None else out


# -- the engines -----------------------------------------------------------------------------
def engine_klatt(parts: Parts, rng: np.random.Generator) -> np.ndarray:
    """The project's model, step for step as ``sung_line._line`` / ``voice._voice``."""
    params, source, singer = parts.params, parts.source, parts.singer
    voicing, breath = glottal.source(
        parts.f0, open_quotient=source["open_quotient"] + singer.open_quotient,
        tilt_db=source["tilt_db"], jitter_percent=source["jitter_percent"] * singer.jitter_scale,
        shimmer_db=source["shimmer_db"], sample_rate=RATE, rng=rng)
    frames = parts.f0.size
    noise = parts.av * db_to_gain(source["breath_db"] + singer.breath_db) * breath \
        + parts.ah * db_to_gain(params["aspiration_db"]) * rng.standard_normal(frames)
    noise *= voice._noise_to_voice(parts.poles, parts.zero, voicing, parts.plan, RATE, rng)
    hop = round(params["frame_s"] * RATE)
    return klatt.cascade(parts.av * voicing + noise, parts.poles, parts.zero, hop=hop,
                         sample_rate=RATE)


def _tract_power(poles: np.ndarray, zero: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """|H(f)|² of Klatt's cascade (antiresonator, resonators) per frame: (frames, bins)."""
    sos = klatt._sections(poles, zero, RATE)                      # (frames, S, 6)
    z = np.exp(-2j * np.pi * freqs / RATE)                         # (bins,)
    num = sos[..., 0, None] + sos[..., 1, None] * z + sos[..., 2, None] * z * z
    den = sos[..., 3, None] + sos[..., 4, None] * z + sos[..., 5, None] * z * z
    return np.prod(np.abs(num / den) ** 2, axis=1)


_NU = np.linspace(0.0, 400.0, 40001)


def _pulse_envelope() -> np.ndarray:
    """The upper envelope of |Ĝ(ν)|, Ĝ the Fourier transform of one KLGLOTT88 flow-derivative
    pulse 2x − 3x² over x in [0, 1) (ν: cycles per open phase), in closed form."""
    w = 2 * np.pi * _NU[1:]
    e = np.exp(-1j * w)
    # ∫0^1 x e^{-iwx} dx and ∫0^1 x² e^{-iwx} dx
    i1 = (1j * e) / w + (e - 1) / w ** 2
    i2 = (1j * e) / w + 2 * e / w ** 2 - 2j * (e - 1) / w ** 3
    g = np.concatenate([[0.0], np.abs(2 * i1 - 3 * i2)])
    return np.maximum.accumulate(g[::-1])[::-1]  # upper envelope: never rising


_PULSE = _pulse_envelope()


_WORLD_ENVELOPE_CPU: list[float] = []  # the envelope's share of each WORLD run


def engine_world(parts: Parts, rng: np.random.Generator, frame_ms: float = 5.0) -> np.ndarray:
    """WORLD's synthesis on the same f0 and the same tract (see the module's docstring)."""
    import pyworld

    start = time.process_time()
    params, source, singer = parts.params, parts.source, parts.singer
    size = parts.f0.size
    fft = pyworld.get_cheaptrick_fft_size(RATE)
    freqs = np.arange(fft // 2 + 1) * RATE / fft
    times = np.arange(int(size / (RATE * frame_ms / 1000)) + 1) * frame_ms / 1000
    at = np.minimum((times * RATE).astype(int), size - 1)
    f0 = parts.f0[at].astype(float)
    # the same perturbation as the KLGLOTT88 source, once a frame (WORLD has none)
    f0 *= 1.0 + rng.normal(0.0, source["jitter_percent"] * singer.jitter_scale / 100, f0.size)
    shimmer = 10.0 ** (rng.normal(0.0, source["shimmer_db"], f0.size) / 20.0)
    av, ah = parts.av[at], parts.ah[at]
    k = np.minimum((times / params["frame_s"]).astype(int), parts.poles.shape[0] - 1)
    tract = _tract_power(parts.poles[k], parts.zero[k], freqs)
    oq = source["open_quotient"] + singer.open_quotient
    pulse = oq * np.interp(freqs[None, :] * oq / np.maximum(f0[:, None], 1.0), _NU, _PULSE)
    tilt = np.abs(signal.freqz(*_tilt_ba(source["tilt_db"]), worN=freqs, fs=RATE)[1]) ** 2
    periodic = (av[:, None] * shimmer[:, None] * pulse) ** 2 * tilt * tract
    # the noise is heard at its level against the held vowel, as the project sets it
    ref = min(parts.plan.frame(parts.plan.steady[0][0] + 0.03) * 2, f0.size - 1)
    gain = periodic[ref].sum() / max(tract[ref].sum(), 1e-30) / max(av[ref], 1e-3) ** 2
    noise_level = (av * db_to_gain(source["breath_db"] + singer.breath_db)) ** 2 \
        + (ah * db_to_gain(params["aspiration_db"])) ** 2
    noise = noise_level[:, None] * gain * tract
    sp = periodic + noise + 1e-16
    ap = np.sqrt(np.clip(noise / sp, 1e-6, 1.0))
    voiced = av > 0.05
    _WORLD_ENVELOPE_CPU.append(time.process_time() - start)
    out = pyworld.synthesize(np.where(voiced, f0, 0.0), np.ascontiguousarray(sp),
                             np.ascontiguousarray(ap), RATE, frame_ms)
    return np.pad(out, (0, max(0, size - out.size)))[:size]


def _tilt_ba(tilt_db: float) -> tuple[np.ndarray, np.ndarray]:
    """glottal.tilt's one-pole low-pass as (b, a)."""
    if tilt_db <= 0:
        return np.array([1.0]), np.array([1.0])
    g2 = 10.0 ** (-tilt_db / 10.0)
    cos_w = math.cos(2.0 * math.pi * 3000.0 / RATE)
    p = (1.0 - g2 * cos_w) / (1.0 - g2)
    pole = p - math.sqrt(p * p - 1.0)
    return np.array([1.0 - pole]), np.array([1.0, -pole])


def engine_klattgrid(parts: Parts, rng: np.random.Generator) -> np.ndarray:
    """Praat's KlattGrid on the same tracks (10 ms points; pitch every 5 ms)."""
    from parselmouth.praat import call

    params, source, singer = parts.params, parts.source, parts.singer
    size = parts.f0.size
    end = size / RATE
    grid = call("Create KlattGrid", "v", 0.0, end, 6, 1, 1, 6, 1, 1, 1)
    step = params["frame_s"]
    times = np.arange(parts.poles.shape[0]) * step
    times = times[times < end]
    for t in np.arange(0.0, end, 0.005):
        call(grid, "Add pitch point", float(t), float(parts.f0[min(size - 1, int(t * RATE))]))
    for n in range(5):
        for t, (hz, bw) in zip(times, parts.poles[:times.size, n], strict=True):
            call(grid, "Add oral formant frequency point", n + 1, float(t), float(hz))
            call(grid, "Add oral formant bandwidth point", n + 1, float(t), float(bw))
    for n, (hz, bw) in enumerate(parts.poles[0, 6:9], start=6):  # F6 only (the grid has six)
        if n == 6:
            call(grid, "Add oral formant frequency point", n, 0.0, float(hz))
            call(grid, "Add oral formant bandwidth point", n, 0.0, float(bw))
    call(grid, "Add nasal formant frequency point", 1, 0.0, float(parts.poles[0, 5, 0]))
    call(grid, "Add nasal formant bandwidth point", 1, 0.0, float(parts.poles[0, 5, 1]))
    for t, (hz, bw) in zip(times, parts.zero[:times.size], strict=True):
        call(grid, "Add nasal antiformant frequency point", 1, float(t), float(hz))
        call(grid, "Add nasal antiformant bandwidth point", 1, float(t), float(bw))
    breath = source["breath_db"] + singer.breath_db
    for t in times:
        i = min(size - 1, int(t * RATE))
        av = float(parts.av[i])
        call(grid, "Add voicing amplitude point", float(t), 90.0 + 20 * math.log10(max(av, 1e-4)))
        ah = float(parts.ah[i])
        call(grid, "Add aspiration amplitude point", float(t),
             90.0 + params["aspiration_db"] + 20 * math.log10(max(ah, 1e-4)))
        call(grid, "Add breathiness amplitude point", float(t),
             90.0 + breath + 20 * math.log10(max(av, 1e-4)))
    call(grid, "Add open phase point", 0.0, source["open_quotient"] + singer.open_quotient)
    call(grid, "Add power1 point", 0.0, 2.0)  # flow x^2 - x^3: KLGLOTT88 (Praat's default 3, 4)
    call(grid, "Add power2 point", 0.0, 3.0)
    # no tilt point: Praat's own tilt (6 dB at 3 kHz) took F3's peak down so far that Burg
    # found no F3 (1.6 kHz for [ɑ], against 2.45 kHz without it)
    call(grid, "Add flutter point", 0.0, 0.25)  # Klatt & Klatt 1990's FL: a slow f0 wander
    sound = call(grid, "To Sound")
    out = sound.values[0]
    if sound.sampling_frequency != RATE:
        out = signal.resample_poly(out, RATE, int(sound.sampling_frequency))
    return np.pad(out, (0, max(0, size - out.size)))[:size]


def _monotone(parts: Parts, rng: np.random.Generator) -> np.ndarray:
    """The Klatt voice on one pitch (the track's median): the "recording" a resynthesis
    would start from."""
    flat = Parts(**{**parts.__dict__, "f0": np.full_like(parts.f0, np.median(parts.f0))})
    return _finish(flat, engine_klatt(flat, rng), rng)


def engine_psola(parts: Parts, rng: np.random.Generator) -> np.ndarray:
    """Praat's PSOLA (Manipulation, overlap-add) putting the track on the monotone voice."""
    import parselmouth
    from parselmouth.praat import call

    sound = parselmouth.Sound(_monotone(parts, rng), RATE)
    manipulation = call(sound, "To Manipulation", 0.01, 75, 600)
    end = parts.f0.size / RATE
    tier = call("Create PitchTier", "f0", 0.0, end)
    for t in np.arange(0.0, end, 0.005):
        call(tier, "Add point", float(t), float(parts.f0[min(parts.f0.size - 1, int(t * RATE))]))
    call([tier, manipulation], "Replace pitch tier")
    out = call(manipulation, "Get resynthesis (overlap-add)").values[0]
    return np.pad(out, (0, max(0, parts.f0.size - out.size)))[:parts.f0.size]


def engine_world_resynth(parts: Parts, rng: np.random.Generator,
                         frame_ms: float = 5.0) -> np.ndarray:
    """WORLD's analysis (DIO + StoneMask, CheapTrick, D4C) of the monotone voice and its
    synthesis on the track: WORLD as a prosody modifier."""
    import pyworld

    x = _monotone(parts, rng).astype(np.float64)
    f0, times = pyworld.dio(x, RATE, frame_period=frame_ms, f0_floor=70.0, f0_ceil=600.0)
    f0 = pyworld.stonemask(x, f0, times, RATE)
    sp = pyworld.cheaptrick(x, f0, times, RATE)
    ap = pyworld.d4c(x, f0, times, RATE)
    at = np.minimum((times * RATE).astype(int), parts.f0.size - 1)
    target = np.where(f0 > 0, parts.f0[at], 0.0)
    out = pyworld.synthesize(target, sp, ap, RATE, frame_ms)
    return np.pad(out, (0, max(0, parts.f0.size - out.size)))[:parts.f0.size]


ENGINES = {"klatt": engine_klatt, "world": engine_world, "klattgrid": engine_klattgrid,
           "psola": engine_psola, "world-resynth": engine_world_resynth}


def make(engine: str, parts_of, seed: int) -> tuple[np.ndarray, Parts, float]:
    """(audio at RATE, the parts, CPU seconds the engine took)."""
    rng = np.random.default_rng(seed)
    parts = parts_of(rng)
    start = time.process_time()
    raw = ENGINES[engine](parts, rng)
    cpu = time.process_time() - start
    return _finish(parts, raw, rng), parts, cpu


# -- the material ----------------------------------------------------------------------------
def luming_notes(count: int = 8) -> tuple[list[SungNote], list[tuple[float, str]]]:
    """鹿鳴's first line (呦呦鹿鳴 食野之苹), legato, in the tenor's octave."""
    piece, tuning = load_piece("luming"), default_tuning()
    notes = piece.notes[:count]
    shift = octave_shift([tuning.pitch(n.name) for n in piece.notes], "tenor")
    beat = 60.0 / piece.tempo_bpm
    syllables = read("".join(n.lyric for n in notes), "middle-chinese")
    out, labels, t = [], [], 0.0
    for n, syl in zip(notes, syllables, strict=True):
        hz = sung_pitch(tuning.pitch(n.name), "tenor", shift=shift).hz
        out.append(SungNote(t, t + n.beats * beat, hz, 0.8, syl.lyric))
        labels.append((t, f"{n.lyric} [{syl.ipa}]"))
        t += n.beats * beat
    return out, labels


def request_lyric() -> tuple[str, float, list[tuple[float, str]]]:
    syllables = read("請射于公", "middle-chinese")
    lyric = " | ".join(f"{s.lyric} {''.join(map(str, c))}"
                       for s, c in zip(syllables, phrase_contours(syllables), strict=True))
    duration = prosody.phrase_seconds([checked(s) for s in syllables], "speak")
    params = params_of(load_instrument("voice"))
    bounds = voice.speech_slots(voice.syllables(params, lyric), duration, "speak")
    labels = [(t, f"{s.character} [{s.ipa}]") for t, s in zip(bounds, syllables, strict=False)]
    return lyric, duration, labels


# -- the measures ----------------------------------------------------------------------------
def praat_f0_error(audio: np.ndarray, parts: Parts) -> tuple[float, float, float]:
    """Praat's f0 (cc, 5 ms) against the track the engine was given, over frames where the
    plan voices fully: (median |cents|, 95th percentile |cents|, share of those frames
    Praat calls voiced)."""
    import parselmouth

    pitch = parselmouth.Sound(audio, RATE).to_pitch_cc(time_step=0.005, pitch_floor=70.0,
                                                      pitch_ceiling=600.0)
    hz = pitch.selected_array["frequency"]
    at = np.minimum((pitch.xs() * RATE).astype(int), parts.f0.size - 1)
    full = parts.av[at] > 0.95
    voiced = full & (hz > 0)
    cents = np.abs(1200 * np.log2(hz[voiced] / parts.f0[at][voiced]))
    return (float(np.median(cents)), float(np.percentile(cents, 95)),
            float(voiced.sum() / max(full.sum(), 1)))


def praat_hnr(audio: np.ndarray, parts: Parts) -> float:
    """Mean HNR (cc, 10 ms) over frames where the plan voices fully."""
    import parselmouth

    harm = parselmouth.Sound(audio, RATE).to_harmonicity_cc(time_step=0.01, minimum_pitch=75.0)
    values = harm.values[0]
    at = np.minimum((harm.xs() * RATE).astype(int), parts.f0.size - 1)
    keep = (parts.av[at] > 0.95) & (values > -100)
    return float(np.mean(values[keep]))


def harmonics_db(seg: np.ndarray, f0: float, formant3: float) -> tuple[float, float]:
    """(H1 − H2, H1 − A3) in dB: harmonic peaks of a Hann-windowed spectrum; A3 the
    strongest harmonic within 15 % of F3."""
    spec = 20 * np.log10(np.abs(np.fft.rfft(seg * np.hanning(seg.size), 1 << 16)) + 1e-12)
    freqs = np.fft.rfftfreq(1 << 16, 1 / RATE)

    def peak(lo: float, hi: float) -> float:
        band = (freqs >= lo) & (freqs <= hi)
        return float(spec[band].max())

    h1 = peak(0.8 * f0, 1.2 * f0)
    h2 = peak(1.8 * f0, 2.2 * f0)
    a3 = peak(0.85 * formant3, 1.15 * formant3)
    return h1 - h2, h1 - a3


def sustained(engine: str, vowel: str, hz: float = 110.0, seed: int = 0) -> dict:
    """A 2 s sung vowel (a one-note line) measured: F1-F3 (Burg), jitter, shimmer, HNR,
    H1-H2, H1-A3, and the engine's CPU per second of voice."""
    import parselmouth
    from parselmouth.praat import call

    notes = [SungNote(0.0, 2.0, hz, 0.8, vowel)]
    audio, parts, cpu = make(engine, lambda rng: line_parts(notes, rng), seed)
    seg = audio[int(0.3 * RATE):int(1.9 * RATE)]
    sound = parselmouth.Sound(seg, RATE)
    formant = sound.to_formant_burg(max_number_of_formants=5, maximum_formant=5000)
    times = np.linspace(0.2, 1.4, 25)
    found = [float(np.nanmedian([formant.get_value_at_time(i, t) for t in times]))
             for i in (1, 2, 3)]
    points = call(sound, "To PointProcess (periodic, cc)", 75, 500)
    jitter = call(points, "Get jitter (local)", 0, 0, 0.0001, 0.02, 1.3)
    shimmer = call([sound, points], "Get shimmer (local)", 0, 0, 0.0001, 0.02, 1.3, 1.6)
    hnr = call(sound.to_harmonicity_cc(0.01, 75, 0.1, 1.0), "Get mean", 0, 0)
    mid = seg[int(0.5 * RATE):int(0.5 * RATE) + 8192]
    h1h2, h1a3 = harmonics_db(mid, float(np.median(parts.f0[int(0.8 * RATE):int(0.8 * RATE)
                                                            + 8192])), found[2])
    return {"formants": found, "jitter": 100 * jitter, "shimmer": 100 * shimmer, "hnr": hnr,
            "h1h2": h1h2, "h1a3": h1a3, "cpu_per_s": cpu / (audio.size / RATE)}


def spectrogram(panels, path: Path) -> None:
    """One spectrogram per engine, Praat's f0 over it in cyan."""
    import parselmouth

    plt.rcParams["font.family"] = families()
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 3.4 * len(panels)), dpi=90)
    for ax, (title, audio, labels) in zip(np.atleast_1d(axes), panels, strict=True):
        ax.specgram(audio + 1e-9, NFFT=1024, Fs=RATE, noverlap=768, cmap="magma", vmin=-120)
        ax.set_ylim(0, 8000)
        ax.set_ylabel("Hz")
        ax.set_title(title, fontsize=10)
        pitch = parselmouth.Sound(audio, RATE).to_pitch_cc(time_step=0.005, pitch_floor=70,
                                                          pitch_ceiling=600)
        hz = pitch.selected_array["frequency"]
        hz[hz == 0] = np.nan
        twin = ax.twinx()
        twin.plot(pitch.xs(), hz, color="cyan", lw=1.0)
        twin.set_ylim(60, 400)
        twin.set_ylabel("f0 (Hz)", color="cyan")
        for t, text in labels:
            ax.axvline(t, color="white", lw=0.5, alpha=0.5)
            ax.text(t + 0.02, 7400, text, color="white", fontsize=8)
    np.atleast_1d(axes)[-1].set_xlabel("time (s)")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def vowels(engine: str) -> None:
    print("sustained vowels sung on 110 Hz by 大師 (one-note line, seed 0), Praat:")
    rows = {v: sustained(engine, v) for v in MALE_VOWELS}
    worst = max(abs(f / p - 1) for v, r in rows.items()
                for f, p in zip(r["formants"], MALE_VOWELS[v], strict=True))
    print(f"  {engine}: worst F1-F3 off the table {100 * worst:.1f} %")
    for v, r in rows.items():
        off = [f"{100 * (f / p - 1):+.0f}" for f, p in zip(r["formants"], MALE_VOWELS[v],
                                                           strict=True)]
        print(f"    [{v}] F1-F3 {[round(f) for f in r['formants']]} ({', '.join(off)} %)  "
              f"jitter {r['jitter']:.2f} %  shimmer {r['shimmer']:.2f} %  "
              f"HNR {r['hnr']:.1f} dB  H1-H2 {r['h1h2']:+.1f} dB  H1-A3 {r['h1a3']:+.1f} dB"
              f"  CPU {1000 * r['cpu_per_s']:.0f} ms/s")
    for key in ("jitter", "shimmer", "hnr", "h1h2", "h1a3"):
        values = [r[key] for r in rows.values()]
        print(f"    {key}: median {np.median(values):.2f} (range {min(values):.2f}–"
              f"{max(values):.2f})")


def line_and_speech(engines: list[str], out: Path | None) -> None:
    notes, line_labels = luming_notes()
    lyric, duration, speech_labels = request_lyric()
    panels_line, panels_speech = [], []
    print("the line 呦呦鹿鳴 食野之苹 (大師) and 「請射于公」 (賓者), seed 1:")
    for engine in engines:
        for name, parts_of, panels, labels in (
                ("line", lambda rng: line_parts(notes, rng), panels_line, line_labels),
                ("speech", lambda rng: speech_parts(lyric, duration, rng), panels_speech,
                 speech_labels)):
            cpus = []
            for _ in range(3):
                audio, parts, cpu = make(engine, parts_of, 1)
                cpus.append(cpu)
            med, p95, share = praat_f0_error(audio, parts)
            hnr = praat_hnr(audio, parts)
            seconds = audio.size / RATE
            if engine == "world":
                print(f"  (world: of which the envelope and aperiodicity "
                      f"{1000 * min(_WORLD_ENVELOPE_CPU[-3:]) / seconds:.0f} ms per second, "
                      "pyworld.synthesize the rest)")
            print(f"  {engine:9s} {name:6s}: f0 off its track median {med:.1f} cents, 95th "
                  f"pct {p95:.1f}; voiced {100 * share:.0f} % of the fully voiced frames; HNR "
                  f"{hnr:.1f} dB; engine CPU {1000 * min(cpus) / seconds:.0f} ms per second "
                  f"of voice ({seconds:.1f} s)")
            panels.append((f"{engine}: {name}", audio, labels))
    if out is not None:
        spectrogram(panels_line, out / "voicemodel_line.png")
        spectrogram(panels_speech, out / "voicemodel_speech.png")
        print(f"wrote {out / 'voicemodel_line.png'}, {out / 'voicemodel_speech.png'}")


def flutter_report(seeds: int = 8, rate: int = 16000) -> None:
    """Praat's f0 wander (detrended by a parabola, SD in cents) of the held 公 of 「請射于公」
    and of a held spoken [a 33], without and with the flutter (median over seeds)."""
    import parselmouth

    base = params_of(load_instrument("voice"))
    lyric, duration, labels = request_lyric()

    def wander(audio: np.ndarray, t0: float, t1: float) -> float:
        pitch = parselmouth.Sound(audio, rate).to_pitch_cc(time_step=0.005, pitch_floor=70,
                                                          pitch_ceiling=400)
        hz, x = pitch.selected_array["frequency"], pitch.xs()
        keep = (x > t0) & (x < t1) & (hz > 0)
        cents = 1200 * np.log2(hz[keep])
        return float(np.std(cents - np.polyval(np.polyfit(x[keep], cents, 2), x[keep])))

    for flutter in (0.0, 25.0):
        params = dict(base)
        params["source"] = {k: dict(v) for k, v in base["source"].items()}
        for articulation in ("speak", "call"):
            params["source"][articulation]["flutter_percent"] = flutter
        gong, held = [], []
        for seed in range(seeds):
            def say(text, seconds, seed=seed, params=params):
                return voice.render(params, hz=120.0, velocity=0.8, duration=seconds,
                                    articulation="speak", sample_rate=rate,
                                    rng=np.random.default_rng(seed), lyric=text,
                                    performer=SPEAKER)
            gong.append(wander(say(lyric, duration), labels[3][0] + 0.08, duration - 0.05))
            held.append(wander(say("a 33", 1.5), 0.2, 1.4))
        print(f"flutter {flutter:.0f} %: 公 f0 wander {np.median(gong):.1f} cents, a held "
              f"spoken [a] {np.median(held):.1f} cents (detrended SD, median of {seeds})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--engines", default="klatt,world,klattgrid")
    parser.add_argument("--no-png", action="store_true")
    parser.add_argument("--no-vowels", action="store_true", help="only the line and speech")
    parser.add_argument("--flutter", action="store_true",
                        help="only the speech's f0 wander without and with the flutter")
    args = parser.parse_args()
    if args.flutter:
        flutter_report()
        return
    engines = args.engines.split(",")
    for engine in [] if args.no_vowels else engines:
        vowels(engine)
    line_and_speech(engines, None if args.no_png else args.out)


if __name__ == "__main__":
    main()
