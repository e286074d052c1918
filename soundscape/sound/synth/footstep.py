"""Footsteps: one note is a walk of ``duration`` seconds, step after step, on a surface.

A step has two parts (Ekimov & Sabatier 2006, JASA 120(2):762–768): the force
normal to the floor gives the low band (below about 500 Hz: the heel's thump,
then the ball of the foot ``toe_delay_s`` later, ``toe_db`` softer), and the
tangential (friction) force gives the high band above 500 Hz (the sole's scuff).
Each articulation is a table ``[params.<articulation>]`` for one surface and gait:

- ``steps_per_s``: cadence (a walk, or the hurried 趨);
- ``thump_low``, ``thump_high``: the thump's band as ratios of ``hz``; ``thump_s``:
  its decay (T60);
- ``modes``: resonances of the surface as ``[ratio of hz, T60 s, level dB]`` (a
  wooden floor's boards, a stone slab; none for beaten earth), set ringing by the
  heel's push, a Hann pulse lasting ``contact_s`` (needed where there are modes): an
  ideal push, one sample, started every step with a jump to its peak, a click up to the
  Nyquist frequency that a heel does not make;
- ``scuff_db``, ``scuff_s``, ``scuff_low_hz``, ``scuff_high_hz``: the friction burst;
- ``grit_db``, ``grit_count``: grains of soil or sand crushed under the foot,
  a few tiny clicks within the first 40 ms (Cook's PhISEM idea: a walk on
  gravel is a random train of particle collisions, Cook 2002);
- ``jitter``: relative spread of step times and ±dB of step levels.

``hz`` sets the thump's band and the surface modes (a heavier walker, a larger
board: lower). The output is normalised to peak ``velocity``; it has no DC (noise
bursts band-passed, the floor driven by each footfall's push and release).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import signal

from soundscape.sound.synth._common import (
    abs_peak,
    bandpass,
    db_to_gain,
    frames_for,
    noise_burst,
)
from soundscape.sound.synth.params import ParamError

__all__ = ["render", "validate"]

_SIGNS = (-1.0, 1.0)
#: The floor's ringing counts as over once decayed by this (−180 dB).
_RING_LEFT = 1e-9


def validate(params: Mapping[str, Any]) -> None:
    """A surface with modes says how long the heel's push lasts (``contact_s``)."""
    for name, row in params.items():
        if isinstance(row, Mapping) and row.get("modes") and "contact_s" not in row:
            raise ParamError(f"{name}.contact_s", "is missing: a surface with modes needs "
                             "the heel's contact time (s), the push that sets them ringing")


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """Steps for ``duration`` seconds (at least one) on the articulation's surface.

    Every footfall (heel, then ball) drops its excitations into three buffers for the
    whole walk (thump noise, scuff noise, grit clicks), each band-passed only where its
    bursts and their ring sound (``sosfilt_spans``); the surface rings the same after
    every footfall, so its ringing is worked out once and added at each.
    """
    row = params[articulation]
    modes = np.asarray(row.get("modes", []), dtype=float).reshape(-1, 3)
    falls, gains = _footfalls(row, duration=duration, rng=rng)
    tail = 1.5 * max(row["thump_s"], row["scuff_s"], *modes[:, 1]) + 0.05
    frames = frames_for(max(duration, float(falls[-1]) + tail), sample_rate)
    starts = np.round(falls * sample_rate).astype(int)
    thump, width = _bursts(starts, gains, row["thump_s"], frames, sample_rate, rng)
    out = bandpass(thump, hz * row["thump_low"], hz * row["thump_high"], sample_rate,
                   spans=(starts, width))
    scuff, width = _bursts(starts, gains, row["scuff_s"], frames, sample_rate, rng)
    out += bandpass(scuff, row["scuff_low_hz"], row["scuff_high_hz"], sample_rate,
                    spans=(starts, width)) * db_to_gain(row["scuff_db"])
    out += _grit(row, starts, gains, frames=frames, sample_rate=sample_rate, rng=rng)
    if modes.size:
        # The floor's modes, driven by each footfall's push and release (a first
        # difference: the drive has no area, so the ringing has no DC): one footfall's
        # ringing, added at each footfall (the floor is linear).
        floor = _floor(modes, hz, sample_rate, frames, row["contact_s"])
        for start, gain in zip(starts.tolist(), gains.tolist(), strict=True):
            n = min(floor.size, frames - start)
            out[start:start + n] += gain * floor[:n]
    peak = abs_peak(out)
    return out * (velocity / peak) if peak > 0 else out


def _footfalls(row: Mapping[str, Any], *, duration: float,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Times (s) and gains of every heel and ball of the walk, jittered."""
    count = max(1, round(duration * row["steps_per_s"]))
    period = 1.0 / row["steps_per_s"]
    heels = np.arange(count) * period
    heels[1:] += rng.uniform(-1.0, 1.0, count - 1) * row["jitter"] * period
    levels = db_to_gain(rng.uniform(-1.0, 1.0, count) * 20.0 * row["jitter"])
    times = np.concatenate([heels, heels + row["toe_delay_s"]])
    gains = np.concatenate([levels, levels * db_to_gain(row["toe_db"])])
    order = np.argsort(times, kind="stable")
    return times[order], gains[order]


def _bursts(starts: np.ndarray, gains: np.ndarray, decay_s: float, frames: int,
            sample_rate: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """White noise bursts decaying 60 dB in ``decay_s``, one per footfall, and the length
    of one (each is zero past it)."""
    out = np.zeros(frames)
    burst = noise_burst(rng, frames=frames, decay_s=decay_s, sample_rate=sample_rate)
    twice = np.concatenate([burst, burst])  # the burst turned by any shift: a slice of it
    # each footfall's sign drawn as rng.choice((-1, 1)) draws it (integers(0, 2)), all at
    # once (the same draws as one at a time)
    signs = rng.integers(0, 2, len(starts)).tolist()
    term = np.empty(burst.size)
    for k, (start, gain, sign) in enumerate(zip(starts.tolist(), gains.tolist(), signs,
                                                strict=True)):
        # the next footfall another stretch of the noise: the burst turned 97 samples more
        # (np.roll's)
        shift = -97 * k % burst.size
        n = min(burst.size, frames - start)
        out[start:start + n] += np.multiply(twice[shift:shift + n], _SIGNS[sign] * gain,
                                            out=term[:n])
    return out, burst.size


def _grit(row: Mapping[str, Any], starts: np.ndarray, gains: np.ndarray, *, frames: int,
          sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """Grains crushed under each footfall: clicks within its first 40 ms, 2-9 kHz."""
    count = int(row["grit_count"])
    if count == 0 or row["grit_db"] <= -120.0:
        return np.zeros(frames)
    at = (starts[:, None] + rng.uniform(0.0, 0.04, (starts.size, count)) * sample_rate)
    clicks = np.zeros(frames)
    np.add.at(clicks, np.minimum(at.astype(int), frames - 1).ravel(),
              (gains[:, None] * rng.uniform(0.3, 1.0, at.shape)
               * rng.choice((-1.0, 1.0), at.shape)).ravel())
    spread = int(0.04 * sample_rate) + 1  # the clicks of a footfall lie within 40 ms of it
    return bandpass(clicks, 2000.0, 9000.0, sample_rate, spans=(starts, spread)) \
        * db_to_gain(row["grit_db"]) * 4.0


def _floor(modes: np.ndarray, hz: float, sample_rate: int, frames: int,
           contact_s: float) -> np.ndarray:
    """The floor's ringing after one footfall of unit gain: the heel's push and release
    (a Hann pulse of unit area lasting ``contact_s``, less itself a sample later: the drive
    has no area) through each mode's resonator, at most ``frames`` long and cut once the
    longest mode has decayed by ``_RING_LEFT``. The pulse's spectrum, 1 at 0 Hz, falls
    past ~1/``contact_s``: a mode under it rings as its level says, and the onset rises
    over the contact instead of in one sample."""
    push = np.hanning(max(1, frames_for(contact_s, sample_rate)) + 2)[1:-1]
    push /= push.sum()
    pulse = np.zeros(min(frames, _ring_frames(float(np.max(modes[:, 1])), sample_rate)
                         + push.size + 1))
    pulse[:push.size] += push[:pulse.size]
    pulse[1:push.size + 1] -= push[:pulse.size - 1]
    out = np.zeros(pulse.size)
    for ratio, t60, level in modes:
        # the difference scales a mode by its ω per sample: undo that, level as given
        unit = sample_rate / (2.0 * np.pi * hz * ratio)
        out += _resonate(pulse, hz * ratio, t60, sample_rate) * (db_to_gain(level) * 0.3 * unit)
    return out


def _ring_frames(t60: float, sample_rate: int) -> int:
    """Samples a resonator of ``t60`` s takes to decay by ``_RING_LEFT``."""
    return frames_for(t60 * math.log(_RING_LEFT) / math.log(1e-3), sample_rate)


def _resonate(drive: np.ndarray, freq: float, t60: float, sample_rate: int) -> np.ndarray:
    """``drive`` through a two-pole resonator at ``freq`` ringing ``t60`` seconds."""
    if freq >= 0.45 * sample_rate:
        return np.zeros(drive.size)
    omega = 2.0 * np.pi * freq / sample_rate
    r = 10.0 ** (-3.0 / (t60 * sample_rate))
    return signal.lfilter([0.0, r * np.sin(omega)], [1.0, -2.0 * r * np.cos(omega), r * r],
                          drive)
