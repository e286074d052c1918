"""A sung line: one singer's phrase made as one continuous voice, and the breath before it.

The voice model (``voice``) makes one note at a time; a singer does not. Here the notes of a
phrase (``SungNote``: onset, end, pitch, level, syllable) go through one glottal source and
one vocal tract, so:

- **the voicing runs on across syllables** wherever no closure or voiceless sound breaks it
  (each syllable is painted on the line's tract by ``voice``'s own syllable rules), and one
  throat never sounds two pitches at once;
- **the pitch glides** from note to note in the time a voice needs for the interval: at
  most the maximum speed of pitch change that Y. Xu & X. Sun measured ("Maximum speed of
  pitch change and how it may relate to speech", JASA 111(3):1399–1413, 2002: rises
  10.8 + 5.6·d, falls 8.9 + 6.2·d semitones a second for an interval of d semitones, so
  about 0.1 s for a few semitones), slower by a drawn slack; a raised-cosine path that
  starts a share ``glide_lead`` of its time before the new note's onset;
- **intonation lives**: each note's pitch is off its target by the singer's own tendency
  (sharp or flat, drawn per singer) plus a drift that wanders as a random walk over the
  phrase (reset at each breath, when the singer takes his reference again) plus a fresh
  scatter per note; the model of M. Mauch, K. Frieler & S. Dixon ("Intonation in
  unaccompanied singing: accuracy, drift, and a model of reference pitch memory", JASA
  136(1):401–411, 2014: errors of a note against its target, a drift that accumulates over a
  song, a reference kept in memory), with sizes chosen so the median error is the ~15–20
  cents measured in trained singers;
- **the vibrato wanders**: each note's vibrato sets in after the singer's delay (with its own
  scatter) and ramps in; its rate and depth wander slowly within the note and differ from
  note to note around the singer's own (E. Prame, "Measurements of the vibrato rate of ten
  singers", JASA 96(4):1979–1984, 1994: rate 5.5–6.5 Hz, varying between notes and rising
  toward a note's end;
  "Vibrato extent and intonation in professional Western lyric singing", JASA 102(1):616–621,
  1997: extent varying along a note); the phase runs on through the line, and a note's
  vibrato fades as the voice leaves it, so the pitch never jumps.

``inhale`` makes the breath a singer takes between phrases: turbulent noise through an open,
relaxed tract ([ə] with wide bandwidths), rising and falling with the flow.

Every random draw comes from the ``rng`` the caller gives (one per line: a line sung again
is a new performance when the caller seeds it anew). Figures: ``instruments/voice.toml``
``[params.line]``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from soundscape.errors import InstrumentError
from soundscape.sound.synth import glottal, klatt, voice
from soundscape.sound.synth._common import (
    db_to_gain,
    frames_for,
    interp_knots,
    sample_times,
    smooth_noise,
    upsample,
    working_rate,
)

__all__ = ["SungNote", "glide_seconds", "inhale", "pitch_track", "render_line"]

_CONTROL_HZ = 1000  # the pitch's own rate (Hz) before it is brought to the samples


@dataclass(frozen=True, slots=True)
class SungNote:
    """One note of a line, in seconds from the line's start.

    Parameters
    ----------
    start : float >= 0
        Its onset.
    end : float > start
        When it gives way to the next note (legato: the next one's onset) or, for the last,
        when it is released.
    hz : float > 0
        Its target pitch.
    velocity : float in (0, 1]
    lyric : str or None
        The syllable's phones (as ``voice`` takes them); None sings [a].
    """

    start: float
    end: float
    hz: float
    velocity: float
    lyric: str | None = None

    def __post_init__(self) -> None:
        if not (0.0 <= self.start < self.end and self.hz > 0 and 0 < self.velocity <= 1):
            raise InstrumentError(f"voice: sung note {self!r}: needs 0 <= start < end, hz > 0 "
                                  "and velocity in (0, 1]")


# -- the pitch of a line ------------------------------------------------------------------------
def glide_seconds(line: Mapping[str, Any], semitones: float) -> float:
    """The fastest a voice moves ``semitones`` (signed: up > 0), Xu & Sun (2002)."""
    d = abs(semitones)
    if d == 0:
        return 0.0
    a, b = line["glide_rise" if semitones > 0 else "glide_fall"]
    return d / (a + b * d)


def note_errors(line: Mapping[str, Any], count: int, bias: float,
                rng: np.random.Generator) -> np.ndarray:
    """Cents each note is off its target: the singer's bias, a drift that walks over the
    phrase from 0, and a fresh scatter per note."""
    drift = np.cumsum(rng.normal(0.0, line["drift_cents"], count))
    drift -= drift[0]
    return bias + drift + rng.normal(0.0, line["scatter_cents"], count)


def pitch_track(params: Mapping[str, Any], notes: Sequence[SungNote], *, frames: int,
                sample_rate: int, rng: np.random.Generator, performer: str | None = None
                ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """f0 (Hz per sample) of the whole line, and what it was made of (per note: the
    intonation error in cents, the glide into it in seconds, the vibrato rate in Hz and
    depth in cents, its onset in seconds) for the measurements."""
    line, singer = params["line"], voice.traits(params, performer)
    # the pitch moves slowly (glides of 40 ms and more, a 6 Hz vibrato): worked out on a
    # 1 ms grid, then brought to the samples
    every = max(1, sample_rate // _CONTROL_HZ)
    rate_in, count = sample_rate / every, -(-frames // every) + 1
    hz = _control_track(line, singer, notes, count, rate_in, rng, performer)
    return interp_knots(sample_times(frames, sample_rate), np.arange(count) / rate_in, hz[0],
                        every), hz[1]


def _control_track(line, singer, notes, frames, sample_rate, rng, performer):
    t = np.arange(frames) / sample_rate
    ref = notes[0].hz
    low, high = line["bias_cents"]
    bias = 0.0 if performer is None else low + voice._unit(performer, "intonation") * (high - low)
    errors = note_errors(line, len(notes), bias, rng)
    targets = np.array([1200.0 * math.log2(n.hz / ref) for n in notes]) + errors
    # the notes' targets joined by glides around each onset
    begins, glides = np.zeros(len(notes)), np.zeros(len(notes))
    for k in range(1, len(notes)):
        interval = (targets[k] - targets[k - 1]) / 100.0
        slack = 1.0 + abs(rng.normal(0.0, line["glide_slack"]))  # never faster than the limit
        glides[k] = glide_seconds(line, interval) * slack
        begins[k] = max(notes[k].start - line["glide_lead"] * glides[k], notes[k - 1].start)
    cents = targets[np.maximum(np.searchsorted(begins[1:], t, side="right"), 0)]
    for k in range(1, len(notes)):
        a = min(frames, round(begins[k] * sample_rate))
        b = min(frames, a + max(1, round(glides[k] * sample_rate)))
        shape = 0.5 - 0.5 * np.cos(np.pi * np.arange(b - a) / max(b - a, 1))
        cents[a:b] = targets[k - 1] + (targets[k] - targets[k - 1]) * shape
    leaving = [*begins[1:], math.inf]  # the vibrato of a note fades as the voice leaves it
    # the vibrato: phase runs on through the line; rate and depth wander within each note
    rates = singer.vibrato_hz + rng.normal(0.0, line["vibrato_rate_sd_hz"], len(notes))
    depths = singer.vibrato_cents * np.exp(rng.normal(0.0, line["vibrato_depth_sd"], len(notes)))
    delays = np.maximum(0.05, singer.vibrato_delay_s
                        + rng.normal(0.0, line["vibrato_delay_sd_s"], len(notes)))
    rate = np.interp(t, [n.start for n in notes], rates)
    for k, note in enumerate(notes):  # the rate quickens into the end of a note (Prame 1994)
        end = min(leaving[k], note.end)
        a, b = round(note.start * sample_rate), min(frames, round(end * sample_rate))
        rate[a:b] += line["vibrato_end_rise_hz"] * np.clip(
            (t[a:b] - (end - 0.5)) / 0.5, 0.0, 1.0)
    rate *= 1.0 + line["vibrato_rate_wander"] * smooth_noise(
        rng, frames=frames, rate_hz=2.0, sample_rate=sample_rate)
    ramp = line["vibrato_ramp_s"]
    depth = np.zeros(frames)
    for k, note in enumerate(notes):
        a = min(frames, round(note.start * sample_rate))
        b = frames if math.isinf(leaving[k]) else min(frames, round((leaving[k] + ramp / 2)
                                                                    * sample_rate))
        u = t[a:b]
        rise = np.clip((u - note.start - delays[k]) / ramp, 0.0, 1.0)
        fall = np.clip(1.0 - (u - leaving[k]) / (ramp / 2), 0.0, 1.0)
        depth[a:b] += depths[k] * rise * fall
    depth *= np.maximum(0.0, 1.0 + line["vibrato_depth_wander"] * smooth_noise(
        rng, frames=frames, rate_hz=1.5, sample_rate=sample_rate))
    phase = 2.0 * np.pi * np.cumsum(rate) / sample_rate + singer.vibrato_phase \
        + rng.uniform(0.0, 2.0 * np.pi)
    cents += depth * np.sin(phase)
    cents += 2.0 * smooth_noise(rng, frames=frames, rate_hz=4.0, sample_rate=sample_rate)
    made = {"error_cents": errors, "glide_s": glides, "vibrato_hz": rates,
            "vibrato_cents": depths, "onset_s": np.array([n.start for n in notes])}
    return (ref * np.exp2(cents / 1200.0), made)


# -- the line ----------------------------------------------------------------------------------
def render_line(params: Mapping[str, Any], notes: Sequence[SungNote], *, sample_rate: int,
                rng: np.random.Generator, performer: str | None = None) -> np.ndarray:
    """The line at ``sample_rate``, from the first note's onset (time 0) to the end of its
    release; the held vowels at ``level_rms`` times each note's velocity."""
    if not notes:
        raise InstrumentError("voice: a sung line needs at least one note")
    if any(b.start < a.end - 1e-9 for a, b in itertools.pairwise(notes)):
        raise InstrumentError("voice: the notes of a sung line must not overlap (one throat, "
                              "one pitch at a time)")
    rate, factor = working_rate(sample_rate, voice.WORKING_HZ)
    out = upsample(_line(params, notes, rate, rng, performer), factor)
    peak = max(float(np.max(out)), -float(np.min(out)))  # |out|'s peak without |out|
    return out if peak <= 0.99 else out * (0.99 / peak)


def _line(params: Mapping[str, Any], notes: Sequence[SungNote], sample_rate: int,
          rng: np.random.Generator, performer: str | None) -> np.ndarray:
    singer = voice.traits(params, performer)
    source = params["source"]["sing"]
    end = notes[-1].end
    frames = frames_for(end + params["release_s"] + voice._TAIL_S, sample_rate)
    sylls = [voice.syllables(params, n.lyric) for n in notes]
    plan = voice._Plan(params, frames_for(frames / sample_rate, round(1.0 / params["frame_s"])),
                       singer.tract_scale, params["vowels"][sylls[0][0].nucleus])
    for note, syls in zip(notes, sylls, strict=True):
        slots = np.linspace(note.start, note.end, len(syls) + 1).tolist()
        for syl, t0, t1 in zip(syls, slots[:-1], slots[1:], strict=True):
            voice._syllable(plan, syl, t0, t1, 1.0)
    plan.hold_after(end)
    f0, _ = pitch_track(params, notes, frames=frames, sample_rate=sample_rate, rng=rng,
                        performer=performer)
    voicing, breath = glottal.source(
        f0, open_quotient=source["open_quotient"] + singer.open_quotient,
        tilt_db=source["tilt_db"], jitter_percent=source["jitter_percent"] * singer.jitter_scale,
        shimmer_db=source["shimmer_db"], sample_rate=sample_rate, rng=rng)
    t = sample_times(frames, sample_rate)
    av, ah = voice.ramped_tracks(plan, t, sample_rate, attack_s=params["attack_s"],
                                 release_at=end, release_s=params["release_s"])
    out = voice.through_tract(plan, params, voicing, breath, av, ah,
                              breath_db=source["breath_db"] + singer.breath_db,
                              sample_rate=sample_rate, rng=rng)
    _apply_levels(out, notes, t)
    return out


def _levels(notes: Sequence[SungNote]) -> tuple[list[float], list[float]]:
    """Each note's velocity, moving from note to note over 60 ms: (times, levels) to
    interpolate."""
    times, levels = [0.0], [notes[0].velocity]
    for before, note in itertools.pairwise(notes):
        times += [note.start - 0.03, note.start + 0.03]
        levels += [before.velocity, note.velocity]
    return times, levels


def _apply_levels(out: np.ndarray, notes: Sequence[SungNote], t: np.ndarray) -> None:
    """``out *= np.interp(t, *_levels(notes))``, in place and with the same values: a held
    note's samples by its level (np.interp's value on a flat segment, exactly), np.interp
    only over the 60 ms moves between notes (over all of it if the moves overlap)."""
    times, levels = _levels(notes)
    if np.any(np.diff(times) <= 0.0):
        out *= np.interp(t, times, levels)
        return
    moves = np.searchsorted(t, times[1:]).reshape(-1, 2).tolist()  # [first, after] samples
    held = 0
    for note, (a, b) in zip(notes, [*moves, [t.size, t.size]], strict=True):
        out[held:a] *= note.velocity
        out[a:b] *= np.interp(t[a:b], times, levels)
        held = b


# -- the breath ----------------------------------------------------------------------------------
def inhale(params: Mapping[str, Any], *, duration: float, velocity: float, sample_rate: int,
           rng: np.random.Generator, performer: str | None = None) -> np.ndarray:
    """A quick inhalation of ``duration`` seconds: noise through the open, relaxed tract
    (the singer's own tract length), its flow rising and falling, at ``inhale_db`` against
    the sung vowel's level."""
    line = params["line"]
    rate, factor = working_rate(sample_rate, voice.WORKING_HZ)
    frames = frames_for(duration, rate)
    singer = voice.traits(params, performer)
    rows = np.asarray(params["vowels"]["ə"], dtype=float) * [1.0 / singer.tract_scale,
                                                             line["inhale_bandwidth"]]
    higher = np.asarray(params["higher_poles"], dtype=float) * [1.0 / singer.tract_scale, 1.0]
    tract = np.concatenate([rows, [voice._NASAL_POLE], higher])
    hop = round(params["frame_s"] * rate)
    count = -(-frames // hop)
    poles = np.tile(tract, (count, 1, 1))
    zero = np.tile(voice._NASAL_POLE, (count, 1))
    noise = np.diff(glottal.white(rng, frames + 1))  # turbulence: rising toward the highs
    out = klatt.cascade(noise, poles, zero, hop=hop, sample_rate=rate, overwrite=True)
    out *= params["level_rms"] * db_to_gain(line["inhale_db"]) / max(
        float(np.sqrt(np.mean(out ** 2))), 1e-12)
    out *= _flow(frames, rate)
    return velocity * upsample(out, factor)


def _flow(frames: int, sample_rate: int) -> np.ndarray:
    """The breath's flow over ``frames`` samples, quicker in than out: sin(π u^0.8)^1.5
    over u in [0, 1], worked out every millisecond and drawn straight between (two powers
    and a sine per sample took half an inhalation's time; off the exact curve by < 3e-4 of
    its peak over half a second, the usual breath, < 2e-3 over 0.1 s). Under 0.1 s: every
    sample."""
    every = max(1, sample_rate // _CONTROL_HZ)
    if frames < 100 * every:
        u = np.arange(frames) / max(frames - 1, 1)
        return np.sin(np.pi * u ** 0.8) ** 1.5
    count = -(-max(frames - 1, 1) // every) + 1  # knots every ``every`` samples, to the end
    u = np.minimum(np.arange(count) * every / max(frames - 1, 1), 1.0)
    knots = np.sin(np.pi * u ** 0.8) ** 1.5
    return interp_knots(sample_times(frames, sample_rate),
                        np.arange(count) * every / sample_rate, knots, every)
