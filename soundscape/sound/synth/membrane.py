"""Drums: membrane modes with a pitch glide and a noisy attack; the 鼗's pellets.

A stroke excites the modes of the head(s) (``[[params.modes]]``: ratio to the
lowest mode, level, T60 scale). The lowest mode rings ``t60_s``; a mode at ``r``
times it rings ``r ** -t60_ratio_exponent`` as long (docs/sources.md A3.2: the lowest
component decays slowest). A hard stroke stretches the head, so all modes start
up to ``glide`` (relative, at velocity 1, ∝ velocity²) sharp and relax with time
constant ``glide_s``. Band-passed noise (``thud_*``) gives the stick's impact.

A head radiates its volume acceleration, whose time integral over a stroke is
zero (the head starts and ends at rest): the stick's push, a pulse lasting the
contact time ``contact_s``, carries the area the ringing modes leave over. So
each stroke has no DC and little below its lowest mode; ``render_note`` then
high-passes whatever remains under 20 Hz.

Articulations: ``strike`` (near the centre), ``rim`` (near the edge: each mode
shifted by its ``rim_db``, a brighter, shorter sound), and ``shake`` for pellet
drums: ``pellet_rate_hz`` impacts per second with jittered times and levels
(docs/sources.md A3.3), each a short stroke of the same modes.

No two strokes alike (``[params.scatter]``, optional). A player's strokes scatter:

- the force, normal in dB about the note's velocity (``force_db``);
- the striking point, anywhere in the ring ``strike_radius`` (or ``rim_radius``,
  fractions of the head's radius; each band of radius alike: the player aims near the
  centre) at any angle θ: a mode
  ``shape = [m, n]``, ``J_m(j_mn ρ) cos mθ`` on an ideal membrane (docs/sources.md
  A3.1), is excited in proportion to its shape there, and the note (the sound in one
  direction, θ = 0) has it with that sign and size, against its level in the file,
  which holds at the middle of the ring, θ = 0 (a stroke left of the centre sets the
  (1,1) modes swinging the other way from one right of it);
- the stick's contact time, ``contact_s`` at velocity 1 and ∝ force^(−1/5) as a
  Hertzian contact gives (Fletcher & Rossing §18.2; docs/sources.md A3.4): each mode is
  excited as a half-sine pulse of that length drives it, so a harder stroke is brighter;
- the head's tension rise: the glide grows with the square of the lowest mode's
  amplitude (tension modulation), so force and striking point move the pitch track;
- the hands (``hand_contact``, ``hand_force_db``): they take turns, each on its side of
  the centre, the other stick resting longer and its arm striking softer;
- a bounce (``bounce``): on a share of the strokes the stick comes down again, later and
  weaker; the head is linear, so the stroke is added again, delayed and scaled;
- the head's wander (``drift_cents``, ``drift_s``): its tension follows the hide's warmth
  and moisture, slowly (``stroke_course``), and every mode moves with it.

Where a drum's strokes land follows the player, not chance: a player spreads his strokes
over the playing zone and does not strike the same spot twice running. Given the stroke's
``place`` in the unit square (``strike_places``: a seeded low-discrepancy sequence over
one drum's strokes in order, golden ratio and R2; docs/sources.md A3.4), the radius is its first
coordinate (linear over the ring) and the angle its second (within the striking hand's
half of the head when ``stroke_course`` names the hand), so neighbouring strokes land far
apart and a run of strokes covers the head evenly; without one the point is drawn.

And every drum is its own: a performer's drum sounds ``tuning_spread`` (relative,
uniform, by a stable hash of who plays it) from the nominal pitch (hides differ).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import signal, special

from soundscape.sound.synth._common import (
    bandpass_sos,
    cancel_dc,
    damped_partials,
    db_to_gain,
    frames_for,
    noise_burst,
    sosfilt,
)

__all__ = ["Stroke", "own_tuning", "render", "render_stroke", "strike_places", "stroke_course"]


def mode_table(params: Mapping[str, Any], *, hz: float,
               articulation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frequencies (Hz), linear levels and T60s (s) of the modes of one stroke at the
    file's levels (the middle of the striking range, velocity 1)."""
    rows = params["modes"]
    ratios = np.array([row["ratio"] for row in rows])
    levels = np.array([row["amp_db"] + (row.get("rim_db", 0.0) if articulation == "rim" else 0.0)
                       for row in rows])
    scales = np.array([row.get("t60_scale", 1.0) for row in rows])
    t60s = params["t60_s"] * ratios ** -params["t60_ratio_exponent"] * scales
    if articulation == "rim":
        t60s = t60s * 0.6  # the edge is stiffer and damped by the hoop (EST)
    return hz * ratios, db_to_gain(levels), t60s


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None, performer: str | None = None,
           place: tuple[float, ...] | None = None) -> np.ndarray:
    """One drum stroke (``strike``, ``rim``) or a pellet-drum shake lasting ``duration``.

    Parameters
    ----------
    hz : float > 0, Hz
        The lowest mode of the head (of the nominal drum: ``performer``'s own is
        ``tuning_spread`` from it).
    velocity : float in (0, 1]
    duration : float > 0, seconds
        The least length of a stroke (it rings out), the length of a ``shake``.
    performer : str or None
        Who plays (which drum): each drum its own tuning.
    place : (u, v) or (u, v, hand, wander), or None
        Where the stroke lands in the drum's sequence (``strike_places``), and with which
        hand and at what wander of the head (``stroke_course``); None: drawn.
    """
    hz = hz * own_tuning(params, performer)
    if articulation == "shake":
        return _shake(params, hz=hz, velocity=velocity, duration=duration,
                      sample_rate=sample_rate, rng=rng)
    return render_stroke(params, hz=hz, velocity=velocity, articulation=articulation,
                         sample_rate=sample_rate, rng=rng, min_s=duration,
                         stroke=Stroke.drawn(params, velocity, articulation, rng, place))


#: The steps of the sequence: the radius (what moves a stroke's sound most) by the golden
#: ratio, whose points k and k + n lie farthest apart for every n of any 1-D sequence
#: (the three-distance theorem); the angle by the second step of Roberts' R2 (1/g², g the
#: plastic number, g³ = g + 1; Roberts 2018), so the points also cover the square evenly.
_STEPS = np.array([2.0 / (1.0 + np.sqrt(5.0)), 1.0 / 1.324717957244746 ** 2])


def strike_places(count: int, offset: tuple[float, float] = (0.5, 0.5)) -> np.ndarray:
    """Where ``count`` successive strokes of one drum land: a Weyl sequence (``_STEPS``)
    from ``offset`` (one drum's seed), rows (u, v) in [0, 1)² for ``Stroke.drawn``."""
    k = np.arange(1, count + 1)[:, None]
    return (np.asarray(offset, dtype=float) + k * _STEPS) % 1.0


def stroke_course(times: np.ndarray, words: tuple[int, ...],
                  wander_s: float = 600.0) -> np.ndarray:
    """One drum's strokes at sorted onsets ``times`` (s), seeded by four 32-bit ``words``
    (the first two place the sequence, the last two draw the wander):
    rows (u, v, count, wander) for ``Stroke.drawn``. (u, v) as ``strike_places``; the
    count is the stroke's place in the drum's sequence (the hands take turns); the wander
    is the head's tension, which moves with the hide's warmth and moisture, slowly and
    back towards its mean: an Ornstein–Uhlenbeck process in units of its standard
    deviation with time constant ``wander_s`` (s), so strokes minutes apart ring at
    other pitches and strokes seconds apart at one."""
    times = np.asarray(times, dtype=float)
    places = strike_places(times.size, (words[0] / 2.0 ** 32, words[1] / 2.0 ** 32))
    steps = np.random.default_rng([words[2], words[3]]).standard_normal(times.size)
    keep = np.exp(-np.maximum(np.diff(times, prepend=times[:1]), 0.0) / wander_s)
    wander = np.empty(times.size)
    level = 0.0
    for k, (kept, step) in enumerate(zip(keep, steps, strict=True)):
        # The first stroke finds the head anywhere in its spread (kept is 1: variance 1).
        level = kept * level + np.sqrt(1.0 - kept * kept) * step if k else step
        wander[k] = level
    return np.column_stack([places, np.arange(times.size), wander])


def own_tuning(params: Mapping[str, Any], performer: str | None) -> float:
    """The factor of ``performer``'s drum on the nominal pitch (1 for none, or no spread)."""
    spread = params.get("scatter", {}).get("tuning_spread", 0.0)
    if performer is None or spread == 0.0:
        return 1.0
    word = int.from_bytes(hashlib.blake2b(performer.encode("utf-8"), digest_size=4).digest(),
                          "little")
    return 1.0 + spread * (2.0 * word / 0xFFFFFFFF - 1.0)


@dataclass(frozen=True, slots=True)
class Stroke:
    """One stroke as played: force (velocity units), striking radius (fraction of the
    head's; None: the file's levels, no scatter), the radius the file's levels hold at,
    and the angle (rad) from the direction the note is heard in."""

    force: float
    radius: float | None
    reference: float | None
    angle: float = 0.0
    contact: float = 1.0  # the stick's contact time against the file's ``contact_s``
    detune: float = 1.0  # the head's pitch at this stroke against its own tuning
    bounce: tuple[float, float] = (0.0, 0.0)  # a second contact: (delay s, level)

    @classmethod
    def drawn(cls, params: Mapping[str, Any], velocity: float, articulation: str,
              rng: np.random.Generator, place: tuple[float, ...] | None = None) -> Stroke:
        """The stroke a player makes for ``velocity``: the force drawn from
        ``[params.scatter]``, the point at ``place`` (u, v in [0, 1): radius linear over
        the ring, angle) or, without one, drawn too; a ``place`` of ``stroke_course``
        also names the hand (its stick, its side of the head) and the head's wander."""
        scatter = params.get("scatter")
        if scatter is None:
            return cls(velocity, None, None)
        low, high = scatter["rim_radius" if articulation == "rim" else "strike_radius"]
        force = velocity * float(db_to_gain(rng.normal(0.0, scatter["force_db"])))
        u, v = (rng.uniform(), rng.uniform()) if place is None else place[:2]
        radius = float(low + u * (high - low))  # EST: each band of radius alike
        bounce = _bounce(scatter, rng)
        if place is None or len(place) < 4:
            return cls(force, radius, 0.5 * (low + high), float(2.0 * np.pi * v),
                       bounce=bounce)
        hand, wander = int(place[2]) % 2, float(place[3])
        # Each hand strikes its own side of the centre (θ within ±π/2 of its side).
        angle = float(np.pi * (v - 0.5 + hand))
        if hand:  # the other stick: its own mass and tip, its own arm
            force *= float(db_to_gain(-scatter.get("hand_force_db", 0.0)))
        contact = scatter.get("hand_contact", 1.0) if hand else 1.0
        detune = 2.0 ** (scatter.get("drift_cents", 0.0) * wander / 1200.0)
        return cls(force, radius, 0.5 * (low + high), angle, contact, detune, bounce)


def render_stroke(params: Mapping[str, Any], *, hz: float, velocity: float,
                  articulation: str, sample_rate: int, rng: np.random.Generator,
                  min_s: float = 0.0, stroke: Stroke | None = None) -> np.ndarray:
    """One stroke as ``stroke`` plays it (None: the file's levels at ``velocity``), ringing
    at least ``min_s`` seconds."""
    stroke = stroke or Stroke(velocity, None, None)
    freqs, amps, t60s = mode_table(params, hz=hz * stroke.detune, articulation=articulation)
    thud = db_to_gain(params["thud_db"])
    scale = velocity / (float(np.sum(amps)) + thud)  # the file's stroke peaks ≤ velocity
    contact, lowest = params["contact_s"], 1.0
    if stroke.radius is not None and stroke.reference is not None:
        shapes = _shape_levels(params, stroke.radius, stroke.reference, stroke.angle)
        contact = params["contact_s"] * stroke.contact * min(stroke.force, 1.5) ** -0.2
        amps = amps * shapes * _pulse(freqs, contact) / _pulse(freqs, params["contact_s"])
        lowest = abs(float(shapes[0]))
        scale *= stroke.force / velocity
    frames = frames_for(max(min_s, 1.5 * float(np.max(t60s))), sample_rate)
    out = damped_partials(freqs, amps * scale, t60s, frames=frames, sample_rate=sample_rate,
                          glide=params.get("glide", 0.0) * (stroke.force * lowest) ** 2,
                          glide_s=params.get("glide_s", 0.05))
    noise = noise_burst(rng, frames=frames, decay_s=params["thud_s"], sample_rate=sample_rate)
    high = params["thud_high_hz"] * params["contact_s"] / contact  # shorter contact, brighter
    # its band moves with every stroke: designed in closed form, not by scipy (2.6 ms)
    band = bandpass_sos(params["thud_low_hz"], high, sample_rate)
    out[:noise.size] += sosfilt(band, noise) * (thud * scale)
    out = cancel_dc(out, contact_s=contact, sample_rate=sample_rate)
    delay, level = stroke.bounce
    lag = round(delay * sample_rate)
    if level > 0.0 and 0 < lag < frames:  # the head's linear: a second, weaker stroke,
        out[lag:] += level * out[:-lag]  # push and all (no area left over: no infrasound)
    return out


def _bounce(scatter: Mapping[str, Any], rng: np.random.Generator) -> tuple[float, float]:
    """Whether the stick comes down again (``bounce.share`` of the strokes), how soon and how
    hard: (delay s, level against the stroke); (0, 0) for none. Three draws for every
    stroke of a drum that bounces, none for one that does not."""
    bounce = scatter.get("bounce")
    if bounce is None:
        return 0.0, 0.0
    draws = rng.uniform(size=3)
    if draws[0] >= bounce["share"]:
        return 0.0, 0.0
    low_ms, high_ms = bounce["ms"]
    low_db, high_db = bounce["db"]
    return (float(low_ms + draws[1] * (high_ms - low_ms)) / 1000.0,
            float(db_to_gain(low_db + draws[2] * (high_db - low_db))))


def _shape_levels(params: Mapping[str, Any], radius: float, reference: float,
                  angle: float) -> np.ndarray:
    """Each mode's excitation at (``radius``, ``angle``) against at (``reference``, 0): its
    shape ``J_m(j_mn ρ) cos mθ``, signed (rows without ``shape`` keep their level)."""
    out = []
    for row in params["modes"]:
        if "shape" not in row:
            out.append(1.0)
            continue
        m, n = (int(v) for v in row["shape"])
        zero = _bessel_zero(m, n)
        out.append(float(special.jv(m, zero * radius)) * np.cos(m * angle)
                   / max(abs(float(special.jv(m, zero * reference))), 1e-3))
    return np.array(out)


@functools.cache
def _bessel_zero(m: int, n: int) -> float:
    """The n-th zero of J_m."""
    return float(special.jn_zeros(m, n)[-1])


def _pulse(freqs: np.ndarray, contact_s: float) -> np.ndarray:
    """The spectrum of a half-sine force pulse lasting ``contact_s``, 1 at 0 Hz."""
    x = 2.0 * freqs * contact_s
    near = np.abs(1.0 - x * x) < 1e-6
    return np.where(near, np.pi / 4.0,
                    np.abs(np.cos(np.pi * x / 2.0)) / np.where(near, 1.0, np.abs(1.0 - x * x)))


def _shake(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    rate = params["pellet_rate_hz"]
    count = max(1, round(duration * rate))
    times = np.arange(count) / rate + rng.uniform(-1.0, 1.0, count) * params["pellet_jitter_s"]
    times = np.clip(times, 0.0, None)
    levels = db_to_gain(-rng.uniform(0.0, params["pellet_level_jitter_db"], count))
    # Pellets on a twisted drum strike harder mid-twist: ±1.5 dB at the twist rate (EST §3.3).
    levels = levels * db_to_gain(1.5 * np.sin(np.pi * rate / 4.0 * times))
    levels = levels / max(1.0, float(np.max(levels)))
    ring = render_stroke(params, hz=hz, velocity=1.0, articulation="strike",
                         sample_rate=sample_rate, rng=rng)
    train = np.zeros(frames_for(float(times.max()), sample_rate) + 1)
    np.add.at(train, np.round(times * sample_rate).astype(int), levels)
    out = signal.fftconvolve(train, ring)
    # Overlapping rings add up: bound the peak by the most impacts within one ring length.
    starts = np.sort(np.round(times * sample_rate))
    overlap = int(np.max(np.searchsorted(starts, starts + ring.size) - np.arange(count)))
    return out * (velocity / overlap)
