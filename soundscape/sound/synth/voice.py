"""Sung, spoken and called voice: a glottal source through a Klatt cascade vocal tract.

Source (``glottal``): KLGLOTT88 pulses (Klatt & Klatt 1990) with jitter, shimmer, spectral
tilt and breath noise. Tract (``klatt``): Klatt's (1980) cascade of a nasal pole-zero pair
and five formants, updated every 5 ms; frication and stop bursts are band-passed noise added
beside it, as Klatt's parallel branch does. Vowel formants, consonants (manner, place,
voicing, aspiration), places (F2 locus, burst and noise bands), timing and singers' traits
are data in ``instruments/voice.toml`` with their sources.

``lyric`` is the syllable's phones, space separated (``"l u k"``, as
``soundscape.text.reading.Syllable.lyric`` gives them), optionally with a tone in Chao
letters (``"m j ɐ ŋ 33"``); several syllables are separated by ``|``. A lyric of Han
characters is read in ``reading.DEFAULT_READING``. None sings [a].

Articulations: ``sing`` (held song with vibrato that sets in after a delay), ``speak``
(speech: each syllable as long as the prosody says — checked short, the last lengthened —
its tone a pitch target approached as in qTA, over a falling phrase line: ``text.prosody``),
``call`` (a raised voice across the courtyard: pressed phonation, brighter, louder, quick
attack, a scoop up into the pitch; a phrase is spoken on the call's pitch).

Each ``performer`` has a voice of his own: vibrato rate, depth, delay and phase,
vocal-tract length, breathiness, jitter, open quotient and speaking pitch, drawn from
``zlib.crc32`` of his id within ``[params.traits]`` (or fixed in ``[params.singers.<id>]``).
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from soundscape.errors import InstrumentError
from soundscape.sound.synth import glottal, klatt
from soundscape.sound.synth._common import (
    bandpass,
    db_to_gain,
    frames_for,
    interp_knots,
    sample_times,
    smooth_noise,
    upsample,
    working_rate,
)
from soundscape.sound.synth.params import ParamError
from soundscape.text import prosody
from soundscape.text.hanzi import is_han
from soundscape.text.reading import phrase_contours, read

__all__ = ["WORKING_HZ", "Traits", "flutter_cents", "render", "speech_slots", "syllables", "traits",
           "validate"]

#: The voice holds next to nothing above 8 kHz: made at 20 kHz or more (then upsampled).
WORKING_HZ = 20000
ARTICULATIONS = ("sing", "speak", "call")
_NASAL_POLE = (270.0, 100.0)  # Klatt 1980: FNP 270 Hz; an oral sound has FNZ = FNP
_TAIL_S = 0.06                # after the voicing stops, the tract rings out
_FLUTTER_HZ = (12.7, 7.1, 4.7)  # Klatt & Klatt 1990: the three sines of f0 flutter


# -- validation -----------------------------------------------------------------------------
def validate(params: Mapping[str, Any]) -> None:
    """What the schema cannot say (names that refer to other tables, what a consonant's
    manner needs, which keys a singer may fix, ranges in order); ParamError names the key."""
    for glide, vowel in params["glides"].items():  # the schema has checked their types
        if vowel not in params["vowels"]:
            raise ParamError(f"glides.{glide}", f"= {vowel!r} must name a vowel of [vowels]")
    for place, row in params["places"].items():
        for band in ("burst", "noise"):
            if not row[band][0] < row[band][1]:
                raise ParamError(f"places.{place}.{band}", f"= {row[band]!r} must be [low Hz, "
                                 "high Hz] with low < high")
    accepted = [f.name for f in fields(Traits)]
    drawn = [name for name in accepted if name != "vibrato_phase"]
    for key, value in params["traits"].items():
        if key not in drawn:
            raise ParamError(f"traits.{key}", "is not a trait; accepted: " + ", ".join(drawn))
        if value[0] > value[1]:
            raise ParamError(f"traits.{key}", f"= {value!r} must be [low, high] with "
                             "low <= high")
    for singer, row in params["singers"].items():
        for key in row:
            if key not in accepted:
                raise ParamError(f"singers.{singer}.{key}", "is not a trait; accepted: "
                                 + ", ".join(accepted))
    for phone, row in params["consonants"].items():
        where = f"consonants.{phone}"
        place = row["place"]
        if place not in params["places"]:
            raise ParamError(f"{where}.place", f"= {place!r} must name a [places] table")
        for needs, key in (("nasal", "zero_hz"), ("nasal", "murmur"), ("lateral", "murmur")):
            if row["manner"] == needs and key not in row:
                raise ParamError(f"{where}.{key}", f"is missing; a {needs} needs it")


# -- singers ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Traits:
    """One performer's voice (see ``[params.traits]``)."""

    vibrato_hz: float
    vibrato_cents: float
    vibrato_delay_s: float
    vibrato_phase: float
    tract_scale: float
    breath_db: float
    jitter_scale: float
    open_quotient: float
    speech_semitones: float


def traits(params: Mapping[str, Any], performer: str | None) -> Traits:
    """The performer's traits: fixed in ``[params.singers]``, else from crc32 of the id;
    no performer gets the middle of every range."""
    fixed = params["singers"].get(performer, {}) if performer else {}
    values = {}
    for key, (low, high) in params["traits"].items():
        share = 0.5 if performer is None else _unit(performer, key)
        values[key] = fixed.get(key, low + share * (high - low))
    phase = 0.0 if performer is None else 2.0 * math.pi * _unit(performer, "vibrato_phase")
    return Traits(vibrato_phase=fixed.get("vibrato_phase", phase), **values)


def _unit(performer: str, trait: str) -> float:
    """A stable number in [0, 1) for a performer's trait (zlib.crc32, same on every run)."""
    return zlib.crc32(f"{performer}/{trait}".encode()) / 2.0 ** 32


# -- lyrics -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Syllable:
    onset: tuple[str, ...]
    medials: tuple[str, ...]
    nucleus: str
    coda: tuple[str, ...]
    tone: tuple[int, ...] | None


def syllables(params: Mapping[str, Any], lyric: str | None) -> list[_Syllable]:
    """The lyric's syllables, each split into onset, medials, nucleus and coda."""
    if lyric is None or not lyric.strip():
        return [_Syllable((), (), "a", (), None)]
    if all(is_han(c) or not c.isalnum() for c in lyric) and any(is_han(c) for c in lyric):
        said = read(lyric)
        return [_split(params, syl.phones, contour, lyric)
                for syl, contour in zip(said, phrase_contours(said), strict=True)]
    out = []
    for part in lyric.split("|"):
        tokens = part.split()
        tones = [t for t in tokens if t.isdigit()]
        phones = [t for t in tokens if not t.isdigit()]
        if not phones or len(tones) > 1:
            raise InstrumentError(f"voice: lyric {lyric!r}: each syllable needs phones and at "
                                  "most one tone (Chao digits), e.g. 'l u k' or 'm j ɐ ŋ 33'")
        out.append(_split(params, phones, tuple(int(d) for d in tones[0]) if tones else None,
                          lyric))
    return out


def _split(params: Mapping[str, Any], phones, tone, lyric: str) -> _Syllable:
    kinds = [_kind(params, p, lyric) for p in phones]
    vowels = [i for i, k in enumerate(kinds) if k == "vowel"]
    glides = [i for i, k in enumerate(kinds) if k == "glide"]
    if not vowels and not glides:
        raise InstrumentError(f"voice: lyric {lyric!r}: syllable {' '.join(phones)!r} has no "
                              "vowel or glide to sing on")
    n = vowels[0] if vowels else glides[0]
    nucleus = phones[n] if vowels else params["glides"][phones[n]]
    before = list(phones[:n])
    onset = tuple(p for p in before if _kind(params, p, lyric) == "consonant")
    medials = tuple(p for p in before if _kind(params, p, lyric) == "glide")
    return _Syllable(onset, medials, nucleus, tuple(phones[n + 1:]), tone)


def _kind(params: Mapping[str, Any], phone: str, lyric: str) -> str:
    for kind, table in (("vowel", "vowels"), ("glide", "glides"), ("consonant", "consonants")):
        if phone in params[table]:
            return kind
    known = sorted([*params["vowels"], *params["glides"], *params["consonants"]])
    raise InstrumentError(f"voice: lyric {lyric!r}: phone {phone!r} is not in "
                          f"instruments/voice.toml; accepted: {' '.join(known)}")


# -- the score of one note: per-frame tract, voicing and aspiration; noise events ----------------
class _Plan:
    """Per-frame parameters painted segment by segment (times in seconds)."""

    def __init__(self, params: Mapping[str, Any], frames: int, scale: float, vowel) -> None:
        self.params, self.step, self.scale = params, params["frame_s"], scale
        self._scaled = np.array([1.0 / scale, 1.0])  # a row [Hz, bandwidth] as the tract has it
        self._frames = frames
        higher = np.asarray(params["higher_poles"], dtype=float)
        self.poles = np.zeros((frames, 6 + len(higher), 2))
        self.poles[:, :5] = np.asarray(vowel, dtype=float) * [1.0 / scale, 1.0]
        self.poles[:, 5] = _NASAL_POLE
        self.poles[:, 6:] = higher * [1.0 / scale, 1.0]
        self.zero = np.tile(_NASAL_POLE, (frames, 1))
        self.voicing = np.zeros(frames)
        self.aspiration = np.zeros(frames)
        self.noises: list[tuple[float, float, tuple[float, float], float]] = []
        self.steady: list[tuple[float, float]] = []

    def hold_after(self, t: float) -> None:
        """The tract stays as it is at ``t`` while the voice dies away."""
        a = self.frame(t)
        if 0 < a < self.voicing.size:
            self.poles[a:] = self.poles[a - 1]
            self.zero[a:] = self.zero[a - 1]

    def smooth_tract(self, seconds: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
        """Poles and zero averaged over ``seconds``: the tongue and lips move, they do not
        jump, and a jump would ring in the resonators."""
        frames = max(1, round(seconds / self.step))
        kernel = np.ones(frames) / frames

        def smooth(track: np.ndarray) -> np.ndarray:
            """np.convolve(mode="same") down each column of the padded track, all at once."""
            flat = track.reshape(track.shape[0], -1)
            padded = np.concatenate([np.repeat(flat[:1], frames, 0), flat,
                                     np.repeat(flat[-1:], frames, 0)])
            lead, out = frames + (frames - 1) // 2, np.zeros_like(flat)
            for k in reversed(range(frames)):  # convolve's order: the earliest frame first
                out += kernel[k] * padded[lead - k:lead - k + flat.shape[0]]
            return out.reshape(track.shape)

        return smooth(self.poles), smooth(self.zero)

    def frame(self, t: float) -> int:
        return min(self._frames, max(0, round(float(t) / self.step)))

    def tract(self, t0: float, t1: float, rows, zero_hz: float | None = None) -> None:
        a, b = self.frame(t0), self.frame(t1)
        self.poles[a:b, :5] = np.asarray(rows, dtype=float) * self._scaled
        self.zero[a:b] = _NASAL_POLE if zero_hz is None else (zero_hz / self.scale, 100.0)

    def move(self, t0: float, t1: float, rows_from, rows_to) -> None:
        """Formants glide linearly from one target to another over [t0, t1)."""
        a, b = self.frame(t0), self.frame(t1)
        if b <= a:
            return
        w = _open_linspace(0.0, 1.0, b - a)[:, None, None]
        start = np.asarray(rows_from, dtype=float)
        self.poles[a:b, :5] = (start + w * (np.asarray(rows_to, dtype=float) - start)) \
            * self._scaled
        self.zero[a:b] = _NASAL_POLE

    def level(self, track: str, t0: float, t1: float, v0: float, v1: float | None = None) -> None:
        a, b = self.frame(t0), self.frame(t1)
        getattr(self, track)[a:b] = v0 if v1 is None else _open_linspace(v0, v1, b - a)


def _open_linspace(start: float, stop: float, num: int) -> np.ndarray:
    """``np.linspace(start, stop, num, endpoint=False)``'s values (its own arithmetic)
    without its ~10 µs of argument handling: a plan paints a hundred of them a line."""
    y = np.arange(max(num, 0), dtype=float)
    if num > 0:
        delta = float(stop) - float(start)
        step = delta / num
        if step == 0:  # numpy's way for denormal steps
            y /= num
            y *= delta
        else:
            y *= step
    y += start
    return y


def _consonant_rows(params: Mapping[str, Any], phone: str, vowel_rows) -> list[list[float]]:
    """The tract during a consonant: its murmur, or low F1 and the place's F2 locus."""
    row = params["consonants"][phone]
    if "murmur" in row:
        return row["murmur"]
    rows = [list(r) for r in vowel_rows]
    rows[0][0] = 250.0
    rows[1][0] = params["places"][row["place"]]["locus_hz"]
    return rows


def _onset(plan: _Plan, phone: str, t: float, speed: float, target) -> tuple[float, float]:
    """Paint one onset consonant from ``t``; return when the vowel's voicing starts and when
    the formants reach the vowel."""
    params = plan.params
    row, timing = params["consonants"][phone], params["timing"]
    place = params["places"][row["place"]]
    held = _consonant_rows(params, phone, target)
    manner, voiced = row["manner"], row.get("voiced", False)
    if manner in ("nasal", "lateral"):
        end = t + speed * timing[f"{manner}_s"]
        plan.tract(t, end, held, row.get("zero_hz"))
        plan.level("voicing", t, end, params[f"{manner}_voicing"])
        plan.move(end, end + timing["transition_s"], held, target)
        return end, end + timing["transition_s"]
    if manner == "fricative":
        end = t + speed * timing["fricative_s"]
        plan.tract(t, end, held)
        if row["place"] == "glottal":
            plan.level("aspiration", t, end, 1.0)
        else:
            plan.noises.append((t, end - t, tuple(place["noise"]), place["noise_db"]))
        if voiced:
            plan.level("voicing", t, end, 0.4)
        plan.move(end, end + timing["transition_s"], held, target)
        return end, end + timing["transition_s"]
    closure = speed * timing["closure_s"] * (0.8 if manner == "affricate" else 1.0)
    frication = speed * timing["affricate_s"] if manner == "affricate" else 0.0
    plan.tract(t, t + closure + frication, held)
    if voiced:
        plan.level("voicing", t, t + closure, 0.15)  # the voice bar under the closure
    release = t + closure
    plan.noises.append((release, timing["burst_s"], tuple(place["burst"]), -6.0))
    if frication:
        plan.noises.append((release, frication, tuple(place["noise"]), place["noise_db"]))
        release += frication
    vot = timing["vot_aspirated_s" if row.get("aspirated") else
                 "vot_breathy_s" if row.get("breathy") else "vot_plain_s"] * speed
    settled = release + timing["transition_s"] + vot
    plan.move(release, settled, held, target)
    if row.get("breathy"):
        plan.level("voicing", release, release + vot, 0.5, 1.0)
        plan.level("aspiration", release, release + vot, 0.6, 0.2)
    else:
        plan.level("aspiration", release, release + vot, 0.8 if row.get("aspirated") else 0.3)
    return release + vot, settled


def _coda(plan: _Plan, syl: _Syllable, start: float, end: float, vowel) -> float:
    """Paint the coda in [start, end); return when the nucleus's steady part ends."""
    params = plan.params
    timing = params["timing"]
    if not syl.coda:
        return end
    phone = syl.coda[0]
    if phone in params["glides"]:
        target = params["vowels"][params["glides"][phone]]
        plan.move(start, end, vowel, target)
        plan.level("voicing", start, end, 1.0)
        return start
    row = params["consonants"][phone]
    if row["manner"] in ("nasal", "lateral"):
        held = _consonant_rows(params, phone, vowel)
        plan.move(start, start + timing["transition_s"], vowel, held)
        plan.tract(start + timing["transition_s"], end, held, row.get("zero_hz"))
        murmur = params[f"{row['manner']}_voicing"]
        plan.level("voicing", start, start + timing["transition_s"], 1.0, murmur)
        plan.level("voicing", start + timing["transition_s"], end, murmur)
        return start
    # -p/-t/-k: the closure is made and not released.
    closing = end - timing["stop_coda_s"]
    plan.move(closing - timing["transition_s"], closing, vowel,
              _consonant_rows(params, phone, vowel))
    plan.level("voicing", closing - timing["transition_s"], closing, 1.0, 0.0)
    plan.level("voicing", closing, end, 0.0)
    return closing - timing["transition_s"]


def _syllable(plan: _Plan, syl: _Syllable, t0: float, t1: float, speed: float) -> None:
    """Paint one syllable over its slot [t0, t1)."""
    params = plan.params
    timing = params["timing"]
    vowel = params["vowels"][syl.nucleus]
    first = params["vowels"][params["glides"][syl.medials[0]]] if syl.medials else vowel
    t = voiced_from = t0
    for phone in syl.onset:
        voiced_from, t = _onset(plan, phone, t, speed, first)
    if syl.medials:  # held a moment, then glide by glide into the vowel
        targets = [params["vowels"][params["glides"][g]] for g in syl.medials] + [vowel]
        plan.tract(t, t + 0.3 * timing["glide_s"] * speed, targets[0])
        t += 0.3 * timing["glide_s"] * speed
        for here, there in itertools.pairwise(targets):
            plan.move(t, t + timing["glide_s"] * speed, here, there)
            t += timing["glide_s"] * speed
    coda_len = min(timing["coda_share"] * (t1 - voiced_from), timing["coda_max_s"])
    if syl.coda and params["consonants"].get(syl.coda[0], {}).get("manner") in (
            "stop", "affricate", "fricative"):
        coda_len = timing["stop_coda_s"] + timing["transition_s"]
    coda_start = max(t, t1 - coda_len)
    plan.tract(t, coda_start, vowel)
    steady_end = _coda(plan, syl, coda_start, t1, vowel)
    plan.level("voicing", voiced_from, steady_end, 1.0)
    plan.steady.append((t, steady_end))


# -- pitch ------------------------------------------------------------------------------------
def _pitch(params: Mapping[str, Any], hz: float, articulation: str, singer: Traits,
           sylls: list[_Syllable], slots: np.ndarray, frames: int, sample_rate: int,
           rng: np.random.Generator) -> np.ndarray:
    t = sample_times(frames, sample_rate)
    cents = 2.0 * smooth_noise(rng, frames=frames, rate_hz=4.0, sample_rate=sample_rate)
    speaking = articulation == "speak" or (articulation == "call" and len(sylls) > 1)
    if speaking:  # on his own habitual pitch, around the one given
        cents = cents + 100.0 * (prosody.pitch_semitones(t, slots, [s.tone for s in sylls])
                                 + singer.speech_semitones)
    elif articulation == "sing":
        depth = singer.vibrato_cents * np.clip((t - singer.vibrato_delay_s) / 0.25, 0.0, 1.0)
        start = singer.vibrato_phase + rng.uniform(0.0, 2.0 * math.pi)
        cents = cents + depth * np.sin(2.0 * np.pi * singer.vibrato_hz * t + start)
    if articulation == "call":
        cents = cents - params["call_scoop_cents"] * np.exp(-t / params["call_scoop_s"])
        if speaking:  # a phrase called out is raised above the speaking pitch it is given
            cents = cents + 100.0 * params["call_raise_semitones"]
    flutter = params["source"][articulation].get("flutter_percent", 0.0)
    if flutter > 0.0:
        cents = cents + flutter_cents(t, flutter, rng)
    return hz * np.exp2(cents / 1200.0)  # exp2: the same to an ulp as 2.0 ** x, twice as fast


def flutter_cents(t: np.ndarray, percent: float, rng: np.random.Generator) -> np.ndarray:
    """Klatt & Klatt (1990)'s f0 flutter at times ``t`` (s), in cents: f0 wanders by
    ΔF0/F0 = FL/5000 · Σ sin(2π f t + φ) over three slow sines (12.7, 7.1, 4.7 Hz), FL the
    ``percent``; the phases are drawn, so each phrase wanders its own way."""
    phases = rng.uniform(0.0, 2.0 * math.pi, len(_FLUTTER_HZ))
    # it moves slowly (12.7 Hz at most): worked out every millisecond, then interpolated
    every = max(1, round(0.001 / (t[1] - t[0]))) if t.size > 1 else 1
    coarse = t[::every] if t[-1] == t[::every][-1] else np.append(t[::every], t[-1])
    wander = sum(np.sin(2.0 * math.pi * hz * coarse + phase)
                 for hz, phase in zip(_FLUTTER_HZ, phases, strict=True))
    return np.interp(t, coarse, 1200.0 * np.log2(1.0 + percent / 5000.0 * wander))


def speech_slots(sylls: list[_Syllable], duration: float, articulation: str) -> np.ndarray:
    """Where each spoken syllable begins, and the last ends (s): their lengths by the
    prosody's rules (checked syllables short, the last lengthened; ``text.prosody``),
    scaled to fill ``duration``."""
    checked = [bool(s.coda) and s.coda[0] in ("p", "t", "k") for s in sylls]
    lengths = prosody.syllable_seconds(checked, "call" if articulation == "call" else "speak")
    return np.concatenate([[0.0], np.cumsum(lengths)]) * (duration / float(np.sum(lengths)))


# -- render -----------------------------------------------------------------------------------
def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None, performer: str | None = None) -> np.ndarray:
    """One sung note, one spoken phrase or one call, ``duration`` seconds, then released.

    Parameters
    ----------
    hz : float > 0, Hz
        The sung pitch; for speech, the middle of the speaker's contour.
    velocity : float in (0, 1]
    lyric : str or None
        Phones (``"l u k"``, syllables separated by ``|``, tones as Chao digits) or Han
        characters (read in the default reading); None sings [a].
    performer : str or None
        The singer or speaker: his own vibrato, tract length and voice quality.
    """
    rate, factor = working_rate(sample_rate, WORKING_HZ)
    out = upsample(_voice(params, hz=hz, duration=duration, articulation=articulation,
                          sample_rate=rate, rng=rng, lyric=lyric, performer=performer), factor)
    if articulation == "call":
        out *= db_to_gain(params["call_level_db"])
    peak = float(np.max(np.abs(out)))
    return velocity * (out if peak <= 0.99 else out * (0.99 / peak))


def _voice(params: Mapping[str, Any], *, hz: float, duration: float, articulation: str,
           sample_rate: int, rng: np.random.Generator, lyric: str | None,
           performer: str | None) -> np.ndarray:
    """The note at ``sample_rate``, its held vowel at ``level_rms``."""
    singer = traits(params, performer)
    sylls = syllables(params, lyric)
    source = dict(params["source"][articulation])
    speaking = articulation == "speak" or (articulation == "call" and len(sylls) > 1)
    frames = frames_for(duration + params["release_s"] + _TAIL_S, sample_rate)
    plan = _Plan(params, frames_for(frames / sample_rate, round(1.0 / params["frame_s"])),
                 singer.tract_scale, params["vowels"][sylls[0].nucleus])
    slots = speech_slots(sylls, duration, articulation) if speaking \
        else np.linspace(0.0, duration, len(sylls) + 1)
    for syl, t0, t1 in zip(sylls, slots[:-1], slots[1:], strict=True):
        _syllable(plan, syl, t0, t1, 0.8 if speaking else 1.0)
    plan.hold_after(duration)
    f0 = _pitch(params, hz, articulation, singer, sylls, slots, frames, sample_rate, rng)
    voicing, breath = glottal.source(
        f0, open_quotient=source["open_quotient"] + singer.open_quotient,
        tilt_db=source["tilt_db"], jitter_percent=source["jitter_percent"] * singer.jitter_scale,
        shimmer_db=source["shimmer_db"], sample_rate=sample_rate, rng=rng)
    av, ah = _sample_tracks(plan, params, articulation, duration, frames, sample_rate)
    return through_tract(plan, params, voicing, breath, av, ah,
                         breath_db=source["breath_db"] + singer.breath_db,
                         sample_rate=sample_rate, rng=rng)


def through_tract(plan: _Plan, params: Mapping[str, Any], voicing: np.ndarray,
                  breath: np.ndarray, av: np.ndarray, ah: np.ndarray, *, breath_db: float,
                  sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """The voicing and its noises (breath at ``breath_db``, aspiration where ``ah`` is
    above 0) through the plan's tract, the held vowel at ``level_rms``, with the bursts
    and frication beside it."""
    frames = voicing.size
    poles, zero = plan.smooth_tract()
    poles[..., 0] = np.minimum(poles[..., 0], 0.45 * sample_rate)  # the highest, at low rates
    # aspiration sounds in about 1 % of a line's samples: its noise is drawn only there
    spots = np.concatenate([a + np.flatnonzero(ah[a:b]) for a, b in _live(
        plan.aspiration, _centres(plan), sample_times(frames, sample_rate))])
    aspiration = ah[spots] * db_to_gain(params["aspiration_db"]) \
        * rng.standard_normal(spots.size)
    # the noises' gain against the voice taken into the breath's scaling (no pass of its own)
    to_voice = _noise_to_voice(poles, zero, voicing, plan, sample_rate, rng)
    noise = _scaled_by(breath, av, db_to_gain(breath_db) * to_voice)
    aspiration *= to_voice
    noise[spots] += aspiration
    hop = round(params["frame_s"] * sample_rate)
    excitation = np.multiply(av, voicing, out=voicing)  # the voicing is not needed after
    excitation += noise
    out = klatt.cascade(excitation, poles, zero, hop=hop, sample_rate=sample_rate,
                        overwrite=True)
    out *= params["level_rms"] / _steady_rms(out, plan.steady, sample_rate, scratch=noise)
    _add_noises(out, plan.noises, params["level_rms"], sample_rate, rng)
    return out


def _scaled_by(x: np.ndarray, track: np.ndarray, gain: float, block: int = 8192) -> np.ndarray:
    """``x`` times ``track · gain`` in ``x``'s own array: the values of ``(track * gain) *
    x`` without a temporary of a line's length (a few blocks of ``block`` samples)."""
    scaled = np.empty(min(block, x.size))
    for a in range(0, x.size, block):
        part = scaled[:min(block, x.size - a)]
        np.multiply(track[a:a + block], gain, out=part)
        x[a:a + block] *= part
    return x


def _noise_to_voice(poles: np.ndarray, zero: np.ndarray, voicing: np.ndarray, plan: _Plan,
                    sample_rate: int, rng: np.random.Generator) -> float:
    """The gain that makes noise of RMS r sound at r against the held vowel: the tract passes
    voice and white noise differently, so both are measured through the held vowel's tract
    (60 ms probes, the first 20 ms left to settle)."""
    start_s = plan.steady[0][0] if plan.steady else 0.0
    k = min(plan.frame(start_s + 0.03), poles.shape[0] - 1)
    start = round(start_s * sample_rate)
    n, settle = round(0.06 * sample_rate), round(0.02 * sample_rate)
    probe = np.stack([voicing[start:start + n], rng.standard_normal(n)])
    if probe.shape[1] < n:
        probe = np.stack([voicing[:n], probe[1]])
    through = klatt.cascade(probe, poles[k:k + 1], zero[k:k + 1], hop=n,
                            sample_rate=sample_rate)[:, settle:]
    gains = np.sqrt(np.mean(through ** 2, axis=1) / np.mean(probe[:, settle:] ** 2, axis=1))
    return float(gains[0] / max(gains[1], 1e-12))


def _sample_tracks(plan: _Plan, params: Mapping[str, Any], articulation: str, duration: float,
                   frames: int, sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """Voicing and aspiration per sample, with the attack and the release."""
    attack = params["call_attack_s" if articulation == "call" else "attack_s"]
    return ramped_tracks(plan, sample_times(frames, sample_rate), sample_rate,
                         attack_s=attack, release_at=duration, release_s=params["release_s"])


def ramped_tracks(plan: _Plan, t: np.ndarray, sample_rate: int, *, attack_s: float,
                  release_at: float, release_s: float) -> tuple[np.ndarray, np.ndarray]:
    """The plan's voicing and aspiration at the sample times ``t``: the voicing under a
    linear attack over ``attack_s``, both under a linear release of ``release_s`` from
    ``release_at``."""
    centres = _centres(plan)
    hop = round(plan.step * sample_rate)
    av = interp_knots(t, centres, plan.voicing, hop)
    ah = np.zeros(t.size)  # np.interp's values, worked out only where they are not 0
    for a, b in _live(plan.aspiration, centres, t):
        ah[a:b] = np.interp(t[a:b], centres, plan.aspiration)
    # the attack is under 1 only in its first attack_s, the release only after
    # ``release_at``: only the ramps are multiplied (a product by exactly 1 changes nothing)
    head = min(t.size, math.ceil(attack_s * sample_rate) + 2)
    av[:head] *= np.clip(t[:head] / attack_s, 0.0, 1.0)
    tail = min(t.size, max(0, math.floor(release_at * sample_rate) - 2))
    release = np.clip(1.0 - (t[tail:] - release_at) / release_s, 0.0, 1.0)
    av[tail:] *= release
    ah[tail:] *= release
    return av, ah


def _centres(plan: _Plan) -> np.ndarray:
    """The times of the plan's frames (s)."""
    return np.arange(plan.voicing.size) * plan.step


def _live(track: np.ndarray, centres: np.ndarray, t: np.ndarray) -> list[tuple[int, int]]:
    """Ranges [a, b) of the rising sample times ``t`` outside which ``np.interp(t, centres,
    track)`` is 0: a frame that is not 0 reaches from the frame before it to the one after
    (the last one to the end), a sample more either side."""
    live = np.flatnonzero(track)
    if live.size == 0:
        return [(0, 0)]
    before = np.searchsorted(t, centres[np.maximum(live - 1, 0)]) - 1
    after = np.searchsorted(t, centres[np.minimum(live + 1, track.size - 1)], side="right") + 1
    after[live == track.size - 1] = t.size
    out: list[list[int]] = []
    for a, b in zip(np.maximum(before, 0).tolist(), np.minimum(after, t.size).tolist(),
                    strict=True):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _steady_rms(out: np.ndarray, steady: list[tuple[float, float]], sample_rate: int, *,
                scratch: np.ndarray | None = None) -> float:
    """The RMS of ``out`` over the held parts (all of it if none), worked out in ``scratch``
    (an array that may be overwritten) if given and long enough."""
    parts = [out[round(a * sample_rate):round(b * sample_rate)] for a, b in steady if b > a]
    size = sum(p.size for p in parts)
    if size:  # the held parts' squares side by side (np.mean of their concatenation)
        held, at = np.empty(size) if scratch is None or scratch.size < size \
            else scratch[:size], 0
        for part in parts:
            np.square(part, out=held[at:at + part.size])
            at += part.size
    else:
        held = np.square(out)
    rms = float(np.sqrt(np.mean(held)))
    return rms if rms > 0 else 1.0


def _noises(noises, level_rms: float, frames: int, sample_rate: int,
            rng: np.random.Generator) -> np.ndarray:
    """Bursts and frication: band-passed noise with short ramps, at ``dB`` to the vowel."""
    out = np.zeros(frames)
    _add_noises(out, noises, level_rms, sample_rate, rng)
    return out


def _add_noises(out: np.ndarray, noises, level_rms: float, sample_rate: int,
                rng: np.random.Generator) -> None:
    """``out += _noises(...)``, with the same values, without an array of ``out``'s length:
    the noises that overlap are summed first (in their order), then added."""
    frames, made = out.size, []
    for start_s, length_s, (low, high), level_db in noises:
        start, n = round(start_s * sample_rate), frames_for(length_s, sample_rate)
        n = min(n, frames - start)
        if n <= 0:
            continue
        ramp = np.minimum(1.0, np.minimum(np.arange(n), np.arange(n)[::-1]) /
                          max(1.0, 0.004 * sample_rate))
        band = bandpass(rng.standard_normal(n + 256), low, high, sample_rate)[256:]
        gain = level_rms * db_to_gain(level_db) / max(float(np.std(band)), 1e-12)
        made.append((start, band * ramp * gain))
    for group in _overlapping([(start, start + len(values)) for start, values in made]):
        a, b = min(made[k][0] for k in group), max(made[k][0] + made[k][1].size for k in group)
        total = np.zeros(b - a)
        for k in group:  # in the noises' order, as one array of them all sums them
            start, values = made[k]
            total[start - a:start - a + values.size] += values
        out[a:b] += total


def _overlapping(spans: list[tuple[int, int]]) -> list[list[int]]:
    """The indices of ``spans`` [a, b) in groups that overlap, each group in index order."""
    groups: list[list[int]] = []
    end = -1
    for k in sorted(range(len(spans)), key=lambda k: spans[k][0]):
        if groups and spans[k][0] < end:
            groups[-1].append(k)
            end = max(end, spans[k][1])
        else:
            groups.append([k])
            end = spans[k][1]
    return [sorted(group) for group in groups]
