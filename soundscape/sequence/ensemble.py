"""Players who breathe: the timing and dynamics of an ensemble, drawn with the seed.

An arrangement gives every note on an even beat; real players do not sound
together to the sample. Three layers, each from ``data/ensemble.toml``:

- the shared beat **leans** inside each phrase (faster at its start, slower into
  its end), with the phrase's first and last moments fixed, so the rite's clock
  (樂闋 on a phrase end, the 終 the rite waits for) is untouched;
- a **leader** (大師 for song, the 建鼓 for 金奏) sounds each beat with his own
  small unevenness, and every other player follows him with a habitual lag of
  their own plus a fresh deviation on every note;
- **dynamics**: each note's velocity and held length vary a little.

Shooting music keeps its 建鼓 exactly on the beat, the 節 where the archery put
them and the pattern's strokes (the first shooter of a 拾 looses on one of them);
only the other parts breathe around them.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.music.arrange import Arrangement, TimedNote
from soundscape.resources import data_dir

__all__ = ["Ensemble", "Take", "load_ensemble"]

_FIXED_ROLES = ("jie",)  # notes whose times other things depend on


@dataclass(frozen=True, slots=True)
class Take:
    """One player's sounding of one note: its onset (seconds from the piece's start),
    held length and velocity."""

    source: str
    time: float
    duration: float
    velocity: float


@dataclass(frozen=True)
class Ensemble:
    """The ensemble rules (see the module docstring); build with :func:`load_ensemble`."""

    lean: float
    leaders: Mapping[str, tuple[str, ...]]
    timing: Mapping[str, float]
    dynamics: Mapping[str, float]
    breath: Mapping[str, float] = field(default_factory=dict)  # singers' breaths: [breath]

    def leader(self, kind: str, sources: Sequence[str]) -> str | None:
        """The source that leads music of ``kind`` among ``sources``."""
        return next((s for s in self.leaders.get(kind, ()) if s in sources), None)

    def perform(self, arrangement: Arrangement, notes: Sequence[tuple[TimedNote, tuple[str, ...]]],
                *, kind: str, sources: Sequence[str], seed: int, cue: str) -> list[list[Take]]:
        """Every player's take of every note, in the order of ``notes``.

        ``notes`` pairs each arranged note with the sources that sound it; ``sources``
        are every source of the cue (to find the leader). Deterministic in ``seed``
        and ``cue``.
        """
        rng = np.random.default_rng([seed, 0x5E, zlib.crc32(cue.encode())])
        leader = self.leader(kind, sources)
        bias = {s: 0.0 if s == leader else
                self.timing["follower_lag"] + rng.normal(0.0, self.timing["follower_bias"])
                for s in sorted({s for _, group in notes for s in group})}
        phrases = [(p.start, p.end) for p in arrangement.phrases]
        beat_jitter: dict[float, float] = {}
        takes: list[list[Take]] = []
        together: dict[float, list[tuple[int, int]]] = {}
        for note, group in notes:
            if note.role in _FIXED_ROLES or (arrangement.jie and note.instrument == "jiangu"):
                takes.append([Take(s, note.time, note.duration, note.velocity) for s in group])
                continue
            beat = round(_lean(note.time, phrases, self.lean), 6)
            if beat not in beat_jitter:
                beat_jitter[beat] = rng.normal(0.0, self.timing["leader_jitter"])
            takes.append([Take(s, beat + beat_jitter[beat] + bias[s] + (
                0.0 if s == leader else rng.normal(0.0, self.timing["note_jitter"])),
                self._length(note.duration, rng), self._velocity(note.velocity, rng))
                for s in group])
            together.setdefault(beat, []).extend((len(takes) - 1, k) for k in range(len(group)))
        for members in together.values():  # everyone on one beat, whichever note they play
            onsets = _apart([max(takes[i][k].time, 0.0) for i, k in members],
                            self.timing["min_gap"])
            for (i, k), onset in zip(members, onsets, strict=True):
                takes[i][k] = replace(takes[i][k], time=onset)
        return takes

    def _velocity(self, velocity: float, rng: np.random.Generator) -> float:
        # in whole steps of velocity_step_db around the note's own velocity
        steps = round(float(rng.normal(0.0, self.dynamics["velocity_sd_db"]))
                      / self.dynamics["velocity_step_db"])
        varied = velocity * 10.0 ** (steps * self.dynamics["velocity_step_db"] / 20.0)
        return min(max(varied, 0.05), 1.0)

    def _length(self, duration: float, rng: np.random.Generator) -> float:
        varied = duration * max(0.5, 1.0 + rng.normal(0.0, self.dynamics["length_sd"]))
        return max(_step(varied, self.dynamics["length_step"]), self.dynamics["length_step"])


def _step(value: float, step: float) -> float:
    return round(value / step) * step if step > 0 else value


def _lean(time: float, phrases: Sequence[tuple[float, float]], lean: float) -> float:
    """``time`` on the leaning beat: inside a phrase [a, b], u ↦ u − lean·u·(1 − u)
    (tempo 1+lean… at the start, slower toward the end); outside phrases unchanged."""
    for start, end in phrases:
        if start <= time < end and end > start:
            u = (time - start) / (end - start)
            return start + (end - start) * (u - lean * u * (1.0 - u))
    return time


def _apart(onsets: list[float], gap: float) -> list[float]:
    """Move onsets that fall closer than ``gap`` apart (in time order) just far enough."""
    order = sorted(range(len(onsets)), key=lambda i: onsets[i])
    placed = list(onsets)
    for previous, current in itertools.pairwise(order):
        if placed[current] - placed[previous] < gap:
            placed[current] = placed[previous] + gap
    return placed


def load_ensemble(path: Any = None) -> Ensemble:
    """Read ``data/ensemble.toml`` (or ``path``) and check its numbers."""
    path = path or data_dir() / "ensemble.toml"
    data = read_toml(path, CueSheetError)
    try:
        lean = float(data["tempo"]["lean"])
        timing = {k: float(v) for k, v in data["timing"].items()}
        dynamics = {k: float(v) for k, v in data["dynamics"].items()}
        leaders = {k: tuple(v) for k, v in data["leader"].items()}
        breath = {k: float(v) for k, v in data["breath"].items()}
    except (KeyError, TypeError, ValueError) as error:
        raise CueSheetError(f"{path}: missing or malformed key: {error}") from error
    if not 0.0 <= lean < 0.5:
        raise CueSheetError(f"{path}: tempo.lean={lean!r} must be in [0, 0.5)")
    for name in ("leader_jitter", "follower_lag", "follower_bias", "note_jitter", "min_gap"):
        if not 0.0 <= timing.get(name, -1.0) <= 0.2:
            raise CueSheetError(f"{path}: timing.{name}={timing.get(name)!r} must be "
                                "seconds in [0, 0.2]")
    for name in ("velocity_sd_db", "velocity_step_db", "length_sd", "length_step"):
        if not 0.0 <= dynamics.get(name, -1.0) <= 6.0:
            raise CueSheetError(f"{path}: dynamics.{name}={dynamics.get(name)!r} must be "
                                "in [0, 6]")
    for name, most in (("low_s", 2.0), ("high_s", 2.0), ("min_note_s", 2.0),
                       ("max_group_s", 30.0)):
        if not 0.0 < breath.get(name, -1.0) <= most:
            raise CueSheetError(f"{path}: breath.{name}={breath.get(name)!r} must be "
                                f"seconds in (0, {most:g}]")
    if breath["low_s"] > breath["high_s"] or not 0.0 < breath.get("velocity", -1.0) <= 1.0:
        raise CueSheetError(f"{path}: breath: low_s <= high_s and velocity in (0, 1] "
                            f"needed; got {breath!r}")
    return Ensemble(lean, leaders, timing, dynamics, breath)

