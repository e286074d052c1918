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
  wooden floor's boards, a stone slab; none for beaten earth);
- ``scuff_db``, ``scuff_s``, ``scuff_low_hz``, ``scuff_high_hz``: the friction burst;
- ``grit_db``, ``grit_count``: grains of soil or sand crushed under the foot,
  a few tiny clicks within the first 40 ms (Cook's PhISEM idea: a walk on
  gravel is a random train of particle collisions, Cook 2002);
- ``jitter``: relative spread of step times and ±dB of step levels.

``hz`` sets the thump's band and the surface modes (a heavier walker, a larger
board: lower). The output is normalised to peak ``velocity``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import (
    bandpass,
    cancel_dc,
    damped_partials,
    db_to_gain,
    frames_for,
    noise_burst,
    number,
)
from soundscape.sound.synth.params import ParamError

__all__ = ["render", "validate"]

_FIELDS = {
    "steps_per_s": (0.2, 6.0), "thump_low": (0.05, 20.0), "thump_high": (0.1, 40.0),
    "thump_s": (0.005, 1.0), "toe_delay_s": (0.0, 0.5), "toe_db": (-60.0, 0.0),
    "scuff_db": (-120.0, 0.0), "scuff_s": (0.001, 1.0), "scuff_low_hz": (100.0, 20000.0),
    "scuff_high_hz": (200.0, 24000.0), "grit_db": (-120.0, 0.0), "grit_count": (0, 64),
    "jitter": (0.0, 0.3),
}


def validate(params: Mapping[str, Any]) -> None:
    """Check every articulation table; raise ParamError naming the key."""
    for name, row in articulation_tables(params).items():
        check_fields(row, _FIELDS, name)
        check_modes(row.get("modes", []), f"{name}.modes")


def articulation_tables(params: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The ``[params.<articulation>]`` tables; ParamError when there are none."""
    tables = {k: v for k, v in params.items() if isinstance(v, Mapping)}
    if not tables:
        raise ParamError("params", "needs one table per articulation, e.g. [params.earth]")
    return tables


def check_fields(row: Mapping[str, Any], fields: Mapping[str, tuple[float, float]],
                 where: str) -> None:
    """Each field present and in its range; ParamError names ``where.field``."""
    for key, (low, high) in fields.items():
        try:
            number(row, key, low=low, high=high)
        except ParamError as error:
            raise ParamError(f"{where}.{error.key}", error.message) from None


def check_modes(modes: Any, where: str, *, first: tuple[float, float] = (0.01, 100.0)) -> None:
    """A list of ``[ratio (or Hz, in the range first), T60 s, level dB]`` rows."""
    low, high = first
    if not isinstance(modes, list) or not all(
            isinstance(m, list) and len(m) == 3
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in m)
            and low <= m[0] <= high and 0.001 <= m[1] <= 5 and -120 <= m[2] <= 0
            for m in modes):
        raise ParamError(where, f"= {modes!r} must be a list of [{low}-{high}, T60 "
                         "0.001-5 s, level -120-0 dB]")


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """Steps for ``duration`` seconds (at least one) on the articulation's surface."""
    row = params[articulation]
    count = max(1, round(duration * row["steps_per_s"]))
    period = 1.0 / row["steps_per_s"]
    times = np.arange(count) * period
    times[1:] += rng.uniform(-1.0, 1.0, count - 1) * row["jitter"] * period
    levels = db_to_gain(rng.uniform(-1.0, 1.0, count) * 20.0 * row["jitter"])
    step_s = row["toe_delay_s"] + 3.0 * max(row["thump_s"], row["scuff_s"],
                                            *[m[1] for m in row.get("modes", [[0, 0, 0]])])
    out = np.zeros(frames_for(max(duration, float(times[-1]) + step_s), sample_rate))
    for time, level in zip(times, levels, strict=True):
        sound = _step(row, hz=hz, sample_rate=sample_rate, rng=rng) * level
        start = round(time * sample_rate)
        out[start:start + sound.size] += sound[:out.size - start]
    peak = float(np.max(np.abs(out)))
    return out * (velocity / peak) if peak > 0 else out


def _step(row: Mapping[str, Any], *, hz: float, sample_rate: int,
          rng: np.random.Generator) -> np.ndarray:
    """One footfall: heel, then ball of the foot; each a thump, the surface, a scuff, grit."""
    heel = _footfall(row, hz=hz, sample_rate=sample_rate, rng=rng)
    ball = _footfall(row, hz=hz * 1.3, sample_rate=sample_rate, rng=rng)
    delay = round(row["toe_delay_s"] * sample_rate)
    out = np.zeros(max(heel.size, delay + ball.size))
    out[:heel.size] += heel
    out[delay:delay + ball.size] += ball * db_to_gain(row["toe_db"])
    return out


def _footfall(row: Mapping[str, Any], *, hz: float, sample_rate: int,
              rng: np.random.Generator) -> np.ndarray:
    modes = np.asarray(row.get("modes", []), dtype=float).reshape(-1, 3)
    ring = max([row["thump_s"], row["scuff_s"], *modes[:, 1]]) * 1.5
    frames = frames_for(ring + 0.05, sample_rate)
    out = np.zeros(frames)
    thump = noise_burst(rng, frames=frames, decay_s=row["thump_s"], sample_rate=sample_rate)
    out[:thump.size] += bandpass(thump, hz * row["thump_low"], hz * row["thump_high"],
                                 sample_rate)
    if modes.size:
        out += damped_partials(hz * modes[:, 0], db_to_gain(modes[:, 2]) * 0.3, modes[:, 1],
                               frames=frames, sample_rate=sample_rate)
    scuff = noise_burst(rng, frames=frames, decay_s=row["scuff_s"], sample_rate=sample_rate)
    out[:scuff.size] += bandpass(scuff, row["scuff_low_hz"], row["scuff_high_hz"],
                                 sample_rate) * db_to_gain(row["scuff_db"])
    grit = db_to_gain(row["grit_db"])
    for _ in range(int(row["grit_count"])):
        at = round(rng.uniform(0.0, 0.04) * sample_rate)
        click = noise_burst(rng, frames=frames, decay_s=0.002, sample_rate=sample_rate)
        click = bandpass(click, 2000.0, 9000.0, sample_rate)[:frames - at]
        out[at:at + click.size] += click * grit * rng.uniform(0.3, 1.0)
    return cancel_dc(out, contact_s=0.004, sample_rate=sample_rate)
