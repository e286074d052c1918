"""The Performance: the one contract between the sequencer and every renderer.

A Performance is a flat, time-sorted list of sound events, the ritual markers,
the placed sources the events sound from, and the pieces they belong to (with
their basis: surviving melody or reconstruction). Times are absolute seconds
from the start of the performance; renderers convert at their own file edge.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from soundscape.errors import PerformanceError
from soundscape.fileio import write_text
from soundscape.music.pitch import Pitch

__all__ = ["Event", "Marker", "Performance", "PieceInfo", "Source", "Vec3"]

SCHEMA_VERSION = 1

Vec3 = tuple[float, float, float]

BASES = ("surviving", "reconstruction")
MARKER_KINDS = ("section", "step", "music", "voice", "shot")


@dataclass(frozen=True, slots=True)
class Source:
    """A placed instrument or voice.

    Parameters
    ----------
    id : str
        Unique key, e.g. ``east.shengzhong`` or ``voice.fuhou.dahou``.
    instrument : str
        The instrument file id in ``instruments/`` (``bianzhong``, ``jiangu`` …).
    name : str
        Chinese display name, e.g. ``東縣 笙鐘``.
    roman : str
        Romanised or English display name, e.g. ``east rack, sheng zhong bells``.
    group : str
        The group it belongs to (``east``, ``west``, ``gong`` musicians, ``voice`` …).
    position : Vec3, metres
        Where it stands at time 0 (x east, y north, z up; origin in ``site``).
    facing : Vec3
        Unit vector of where it faces (its front; for chimes and bells, the audience side).
    struck_face : Vec3 or None
        Outward unit normal of a drum's struck face; None for non-drums.
    moves : tuple of (time s, Vec3)
        Later positions: from each time on, the source stands at that position.
    cue : str
        The cue-sheet entry that placed it (layout id or voice cue id).
    """

    id: str
    instrument: str
    name: str
    roman: str
    group: str
    position: Vec3
    facing: Vec3 = (0.0, 1.0, 0.0)
    struck_face: Vec3 | None = None
    moves: tuple[tuple[float, Vec3], ...] = ()
    cue: str = ""

    def position_at(self, time: float) -> Vec3:
        """Where the source stands at ``time`` seconds."""
        where = self.position
        for start, position in self.moves:
            if start > time:
                break
            where = position
        return where


@dataclass(frozen=True, slots=True)
class Event:
    """One sound.

    Parameters
    ----------
    time : float >= 0, seconds
        Onset.
    duration : float > 0, seconds
        Nominal length (how long the note is held); a bell or drum rings on after it.
    source : str
        ``Source.id`` it sounds from.
    pitch : Pitch or None
        The 律 and frequency; None for unpitched sounds (the model's own pitch is used).
    velocity : float in (0, 1]
        Loudness of the stroke, breath or voice.
    articulation : str
        How it is played: ``A``/``B`` (bell centre/side strike), ``strike``, ``rim``,
        ``shake``, ``pluck``, ``blow``, ``sing``, ``call`` …
    cue : str
        The cue-sheet id that caused it (music cue, voice cue or step).
    piece : str or None
        Piece id in the repertoire, if the event belongs to a piece.
    lyric : str or None
        The sung character, one per note.
    position : Vec3 or None, metres
        Where this particular sound is made when it differs from the source's place
        (one bell of a rack, an arrow hitting a target).
    """

    time: float
    duration: float
    source: str
    pitch: Pitch | None
    velocity: float
    articulation: str
    cue: str
    piece: str | None = None
    lyric: str | None = None
    position: Vec3 | None = None

    def __post_init__(self) -> None:
        if not (self.time >= 0 and math.isfinite(self.time)):
            raise PerformanceError(f"event at {self.source!r}: time={self.time!r} must be >= 0")
        if not (self.duration > 0 and math.isfinite(self.duration)):
            raise PerformanceError(
                f"event at {self.source!r} t={self.time:.3f}: duration={self.duration!r} "
                "must be > 0")
        if not 0 < self.velocity <= 1:
            raise PerformanceError(
                f"event at {self.source!r} t={self.time:.3f}: velocity={self.velocity!r} "
                "must be in (0, 1]")

    @property
    def end(self) -> float:
        """Nominal end time in seconds."""
        return self.time + self.duration


@dataclass(frozen=True, slots=True)
class Marker:
    """A ritual marker: a section, a step, the start or end of music, a call, a shot.

    Parameters
    ----------
    time : float >= 0, seconds
    kind : str
        One of ``MARKER_KINDS``.
    text : str
        Chinese label, e.g. ``右設樂`` or ``奏肆夏``.
    gloss : str
        Romanised or English label for players that show only Latin-1.
    ref : str
        The cue-sheet id (section, step or cue).
    quote : str
        The passage of the text it comes from.
    """

    time: float
    kind: str
    text: str
    gloss: str
    ref: str
    quote: str = ""

    def __post_init__(self) -> None:
        if self.kind not in MARKER_KINDS:
            raise PerformanceError(
                f"marker {self.ref!r}: kind={self.kind!r}, accepted: {', '.join(MARKER_KINDS)}")


@dataclass(frozen=True, slots=True)
class PieceInfo:
    """A piece as the performance uses it, with what it rests on.

    ``basis`` is ``surviving`` (with its source) or ``reconstruction`` (with the
    rules and evidence it rests on); ``note`` says which.
    """

    id: str
    title: str
    basis: str
    note: str

    def __post_init__(self) -> None:
        if self.basis not in BASES:
            raise PerformanceError(
                f"piece {self.id!r}: basis={self.basis!r}, accepted: {', '.join(BASES)}")


@dataclass(frozen=True)
class Performance:
    """Events and markers sorted by time, with the sources and pieces they refer to."""

    events: tuple[Event, ...]
    markers: tuple[Marker, ...]
    sources: Mapping[str, Source]
    pieces: Mapping[str, PieceInfo] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for event in self.events:
            if event.source not in self.sources:
                raise PerformanceError(
                    f"event at t={event.time:.3f}: unknown source {event.source!r}; "
                    f"known: {', '.join(sorted(self.sources)) or 'none'}")
            if event.piece is not None and event.piece not in self.pieces:
                raise PerformanceError(
                    f"event at t={event.time:.3f}: unknown piece {event.piece!r}")
        times = [e.time for e in self.events]
        if times != sorted(times):
            raise PerformanceError("events must be sorted by time")
        if [m.time for m in self.markers] != sorted(m.time for m in self.markers):
            raise PerformanceError("markers must be sorted by time")

    @classmethod
    def build(cls, events: Iterable[Event], markers: Iterable[Marker],
              sources: Mapping[str, Source], **kwargs: Any) -> Performance:
        """Sort events and markers (stably, by time) and build the Performance."""
        return cls(tuple(sorted(events, key=lambda e: e.time)),
                   tuple(sorted(markers, key=lambda m: m.time)), dict(sources), **kwargs)

    @property
    def duration(self) -> float:
        """Seconds from 0 to the last nominal event end or marker."""
        ends = [e.end for e in self.events] + [m.time for m in self.markers]
        return max(ends, default=0.0)

    def between(self, start: float, stop: float) -> Performance:
        """The events and markers in ``[start, stop)``, shifted so ``start`` becomes 0."""
        def shift(item):
            return replace(item, time=item.time - start)
        return Performance(
            tuple(shift(e) for e in self.events if start <= e.time < stop),
            tuple(shift(m) for m in self.markers if start <= m.time < stop),
            self.sources, self.pieces, {**self.meta, "offset": start})

    # JSON -----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (schema version 1)."""
        return {
            "schema": SCHEMA_VERSION,
            "meta": dict(self.meta),
            "pieces": {k: asdict(v) for k, v in self.pieces.items()},
            "sources": {k: asdict(v) for k, v in self.sources.items()},
            "markers": [asdict(m) for m in self.markers],
            "events": [asdict(e) for e in self.events],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Performance:
        """Rebuild a Performance from ``to_dict`` output."""
        if data.get("schema") != SCHEMA_VERSION:
            raise PerformanceError(
                f"performance schema={data.get('schema')!r}, accepted: {SCHEMA_VERSION}")
        try:
            sources = {k: _source(v) for k, v in data["sources"].items()}
            events = tuple(_event(e) for e in data["events"])
            markers = tuple(Marker(**m) for m in data["markers"])
            pieces = {k: PieceInfo(**v) for k, v in data["pieces"].items()}
        except (KeyError, TypeError) as error:
            raise PerformanceError(f"performance JSON is malformed: {error}") from error
        return cls(events, markers, sources, pieces, data.get("meta", {}))

    def save_json(self, path: str | Path) -> Path:
        """Write the performance as JSON, atomically."""
        return write_text(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=1))

    @classmethod
    def load_json(cls, path: str | Path) -> Performance:
        """Read a performance written by ``save_json``."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise PerformanceError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from error
        return cls.from_dict(data)


def _vec(value: Any) -> Vec3 | None:
    return None if value is None else (float(value[0]), float(value[1]), float(value[2]))


def _source(data: Mapping[str, Any]) -> Source:
    moves = tuple((float(t), _vec(p)) for t, p in data.get("moves", ()))
    return Source(**{**data, "position": _vec(data["position"]), "facing": _vec(data["facing"]),
                     "struck_face": _vec(data.get("struck_face")), "moves": moves})


def _event(data: Mapping[str, Any]) -> Event:
    pitch = data.get("pitch")
    return Event(**{**data, "pitch": None if pitch is None else Pitch(**pitch),
                    "position": _vec(data.get("position"))})
