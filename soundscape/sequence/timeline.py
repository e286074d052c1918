"""The ritual clock: every step of the cue sheet gets a start time and a duration.

A step's own duration comes from the editable table ``data/durations.toml``
(seconds per action, repeated once per participant where the text says the
action goes round: 辯, 皆 …) plus the time its actor needs to walk to the
step's place at a documented pace, and no less than its words take (``speak``). Music
and archery can hold the clock: the
caller passes ``hold(step, start)``, the least time a step must take (the rite
waits for a song of three 終), and ``wait(step, start)``, the earliest time a
step may begin (樂闋 falls on a phrase end).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from soundscape import validate
from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.geometry import Vec3
from soundscape.resources import data_dir
from soundscape.text import glossary
from soundscape.text.hanzi import mentions

__all__ = ["Durations", "StepLike", "TimedStep", "time_steps"]

#: Ranges of a durations table (docs/cuesheet.md): seconds of one action, walking pace,
#: people of one rank, repeat markers.
ACTION_SECONDS = (0.0, 3600.0)
PACE_M_S = (0.1, 10.0)
PARTICIPANTS = (0, 1000)
MARKERS = 16
_TABLES = ("schema", "action", "pace", "repeat", "participants")


class StepLike(Protocol):
    """What the clock reads of a cue-sheet step."""

    # read-only (properties): a frozen cue-sheet Step is one
    @property
    def id(self) -> str: ...
    @property
    def section(self) -> str: ...
    @property
    def actor(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def place(self) -> str | None: ...
    @property
    def quote(self) -> str: ...


def _known_actions(actions: Mapping[str, float], where: str) -> None:
    """Refuse an action name no step can carry: a step's action is the canonical term of
    the glossary's [action] table (or ``other``), so 答拜 (timed as 拜) or a typo would be
    read and never used."""
    words = glossary.load()
    canonical = {words.name("action", i): i for i in words.ids("action")}
    for name in actions:
        if name in canonical:
            continue
        alias = words.id_of("action", name)
        hint = (f"{name} is a step's {words.name('action', alias)} (the glossary's action "
                f"{alias}): give that" if alias is not None else
                "accepted: other or a glossary action ("
                f"{', '.join(n for n in canonical if n != 'other')})")
        raise CueSheetError(f"{where}: action.{name} is no action a step carries; {hint}")


@dataclass(frozen=True, slots=True)
class Durations:
    """Seconds per action, walking paces and the number of participants.

    Parameters
    ----------
    actions : mapping of action → seconds
        Must hold ``other``, used for any action not listed.
    walk, hurry : float > 0, metres per second
        Formal walking pace and the 趨 pace.
    repeat_markers : tuple of str
        Characters that make a step go round every participant (辯 …).
    participants : mapping of rank → count
        卿, 大夫, 士, 三耦, 眾耦, 工 …
    source : str
        Where the table came from, for messages.
    """

    actions: Mapping[str, float]
    walk: float
    hurry: float
    repeat_markers: tuple[str, ...]
    participants: Mapping[str, int]
    source: str = "durations.toml"

    def __post_init__(self) -> None:
        if "other" not in self.actions:
            raise CueSheetError(f"{self.source}: [action] needs an 'other' entry (seconds)")
        where, error = self.source, CueSheetError
        _known_actions(self.actions, where)
        for name, seconds in self.actions.items():
            validate.number(seconds, key=f"action.{name}", where=where, error=error,
                            low=ACTION_SECONDS[0], high=ACTION_SECONDS[1], unit="seconds")
        for name in ("walk", "hurry"):
            validate.number(getattr(self, name), key=f"pace.{name}", where=where, error=error,
                            low=PACE_M_S[0], high=PACE_M_S[1], unit="m/s")
        for rank, count in self.participants.items():
            validate.whole(count, key=f"participants.{rank}", where=where, error=error,
                           low=PARTICIPANTS[0], high=PARTICIPANTS[1])
        validate.size(list(self.repeat_markers), key="repeat.markers", where=where, error=error,
                      kind=list, most=MARKERS)
        for i, marker in enumerate(self.repeat_markers):
            validate.text(marker, key=f"repeat.markers[{i}]", where=where, error=error,
                          longest=8)

    @classmethod
    def load(cls, path: str | Path | None = None) -> Durations:
        """Read a durations table (the bundled one when ``path`` is None)."""
        path = Path(path) if path is not None else data_dir() / "durations.toml"
        return cls.from_dict(read_toml(path, CueSheetError), source=str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "durations") -> Durations:
        """Build from parsed TOML (``action``, ``pace``, ``repeat``, ``participants``)."""
        for key in data:
            validate.choice(key, _TABLES, key="table", where=source, error=CueSheetError)
        if data.get("schema", 1) != 1 or isinstance(data.get("schema"), bool):
            validate.fail(CueSheetError, source, "schema", data["schema"], "supported", "1")

        def table(key: str, required: bool = True) -> Mapping[str, Any]:
            if key not in data and not required:
                return {}
            if key not in data:
                raise CueSheetError(f"{source}: missing table [{key}]")
            return validate.size(data[key], key=key, where=source, error=CueSheetError,
                                 kind=dict)

        pace, repeat = table("pace"), table("repeat", required=False)
        for key in ("walk", "hurry"):
            if key not in pace:
                raise CueSheetError(f"{source}: missing key pace.{key} (m/s)")
        markers = validate.size(repeat.get("markers", []), key="repeat.markers", where=source,
                                error=CueSheetError, kind=list, most=MARKERS)
        return cls(actions=dict(table("action")), walk=pace["walk"], hurry=pace["hurry"],
                   repeat_markers=tuple(markers),
                   participants=dict(table("participants", required=False)), source=source)

    def replace(self, **changes: Any) -> Durations:
        """A copy with some fields changed; ``actions``/``participants`` are merged."""
        merged = {
            "actions": {**self.actions, **changes.pop("actions", {})},
            "participants": {**self.participants, **changes.pop("participants", {})},
        }
        fields = {name: getattr(self, name) for name in self.__slots__}
        return Durations(**{**fields, **merged, **changes})

    def action_seconds(self, action: str) -> float:
        """Seconds one performance of ``action`` takes."""
        return float(self.actions.get(action, self.actions["other"]))

    def pace_of(self, step: StepLike) -> float:
        """How fast the step's actor walks, m/s: hurried where its text says 趨."""
        return self.hurry if mentions(step.quote, "趨") else self.walk

    def step_seconds(self, step: StepLike) -> float:
        """A step's own time: its action, once per participant where it goes round."""
        return self.action_seconds(step.action) * self.repeats(step)

    def unmatched_ranks(self, steps: Iterable[StepLike]) -> list[str]:
        """The ranks of ``participants`` that no step going round names (a misspelt rank
        changes nothing, silently)."""
        going_round = [step.quote for step in steps
                       if any(mentions(step.quote, mark) for mark in self.repeat_markers)]
        return [rank for rank in self.participants
                if not any(mentions(quote, rank) for quote in going_round)]

    def repeats(self, step: StepLike) -> int:
        """How many times the step's action is done: once per participant when it goes round."""
        if not any(mentions(step.quote, mark) for mark in self.repeat_markers):
            return 1
        counts = [n for rank, n in self.participants.items() if mentions(step.quote, rank)]
        return max(counts, default=1) or 1


@dataclass(frozen=True, slots=True)
class TimedStep:
    """A step on the clock."""

    id: str
    section: str
    start: float
    duration: float
    walk: float = 0.0
    held: bool = False

    @property
    def end(self) -> float:
        """When the next step may begin, seconds."""
        return self.start + self.duration


@dataclass
class _Walkers:
    """Where each actor last stood, to time walking from place to place."""

    place_of: Callable[[str], Vec3 | None]
    last: dict[str, Vec3] = field(default_factory=dict)

    def seconds(self, step: StepLike, durations: Durations) -> float:
        where = self.place_of(step.place) if step.place else None
        if where is None or not step.actor:
            return 0.0
        before = self.last.get(step.actor)
        self.last[step.actor] = where
        if before is None:
            return 0.0
        return math.dist(before[:2], where[:2]) / durations.pace_of(step)


def _no_hold(step: StepLike, start: float) -> float:
    return 0.0


#: The caller's own step type: its ``hold``, ``wait`` and ``speak`` take the steps it gives.
_Step = TypeVar("_Step", bound=StepLike)


def time_steps(
    steps: Iterable[_Step],
    durations: Durations,
    *,
    place_of: Callable[[str], Vec3 | None] = lambda place: None,
    hold: Callable[[_Step, float], float] = _no_hold,
    wait: Callable[[_Step, float], float] = _no_hold,
    scale: Mapping[str, float] | None = None,
    speak: Callable[[_Step], float] = lambda step: 0.0,
    tells: Callable[[_Step], float] = lambda step: 0.0,
    approach: Callable[[_Step], float] = lambda step: 0.0,
) -> tuple[TimedStep, ...]:
    """Put the steps on one clock, in order.

    Parameters
    ----------
    steps : iterable of StepLike
        In text order.
    durations : Durations
    place_of : callable, place id → position in metres or None
        For walking times; unknown places add no walking.
    hold : callable (step, start) → seconds
        The least time the step must take (music the rite waits for, a round of shooting).
        Called in order, once per step, with the step's start time.
    wait : callable (step, start) → seconds
        The earliest time the step may start (a piece must reach its phrase end first).
    scale : mapping of step id → factor, optional
        Stretch particular steps (for tests and what-if timing).
    speak : callable, step → seconds
        How long the step's words take once its actor has arrived (the step lasts at
        least its walk and then that long, so its speaker ends before the next step).
    tells : callable, step → seconds
        How long what its text tells its doer to do takes once he has arrived (his own
        action, then the others it names with his walks between them); called after
        ``hold``. The step lasts at least its walk and then that long.
    approach : callable, step → seconds
        How long its doer walks before his action from where the rite has put him, where
        that is more than the walk between the places steps name (his own 升 or 降: to
        the stairs and on); the step's walk is the longer of the two, and what ``hold``
        asks of the step is counted from when that longer walk is done.
    """
    walkers = _Walkers(place_of)
    clock = 0.0
    timed = []
    for step in steps:
        start = max(clock, wait(step, clock))
        walked = walkers.seconds(step, durations)
        walk = max(walked, approach(step))
        own = durations.step_seconds(step) * (scale or {}).get(step.id, 1.0)
        needed = hold(step, start)
        own = max(own, speak(step), tells(step))
        # a hold is the step's own time: the walk the clock did not know comes before it
        duration = max(own + walk, needed + walk - walked)
        timed.append(TimedStep(step.id, step.section, start, duration, walk, needed > own + walk))
        clock = start + duration
    return tuple(timed)
