"""The Performance: the one contract between the sequencer and every renderer.

A Performance is a flat, time-sorted list of sound events, the ritual markers,
the placed sources the events sound from (and where they move), the pieces they
belong to (with their basis: surviving melody or reconstruction), and what the
sequencer decided: the sections, the music and the shooting rounds. Every
time-bearing thing is a typed field, so one method (:meth:`Performance.between`)
cuts and shifts all of them. Times are seconds from the start of the
performance; renderers convert at their own file edge.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import json
import math
import operator
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from soundscape import validate
from soundscape.errors import PerformanceError
from soundscape.fileio import read_json, write_text
from soundscape.geometry import Vec3
from soundscape.music.instruments import list_instruments
from soundscape.music.pitch import Pitch
from soundscape.music.tuning import HUANGZHONG_RANGE_HZ, LU
from soundscape.text.reading import READINGS
from soundscape.validate import shown

__all__ = ["Event", "Info", "Marker", "MusicSpan", "Performance", "PieceInfo", "Round",
           "SectionSpan", "Shot", "SideCount", "Source", "Turn", "TurnTally", "Vec3",
           "takes_no_time"]

SCHEMA_VERSION = 2

BASES = ("surviving", "reconstruction")
MARKER_KINDS = ("section", "step", "music", "voice", "shot", "speech")
#: The fastest tempo a music span may say it was played at (beats a minute).
MAX_BPM = 1000.0
#: What holds the clock of a music span: the rite (until a step) or the music (its length).
BOUNDS = ("rite", "music")
SIDES = ("right", "left")
#: Where an arrow lands: in the 鵠, on the 侯 cloth, or short, over or beside (a miss).
OUTCOMES = ("hu", "hou", "liu", "yang", "fang")


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

    def __post_init__(self) -> None:
        for name in ("facing", "struck_face"):
            vector = getattr(self, name)
            if vector is not None and not math.hypot(*vector) > 1e-9:
                raise PerformanceError(f"source {self.id!r}: {name}={vector!r} must be a "
                                       "direction (a vector longer than 0)")

    def position_at(self, time: float) -> Vec3:
        """Where the source stands at ``time`` seconds."""
        where = self.position
        for start, position in self.moves:
            if start > time:
                break
            where = position
        return where

    def shifted(self, start: float, stop: float) -> Source:
        """The source on a clock where ``start`` is 0, for the span up to ``stop``: it
        stands where it stood at ``start``, and keeps the moves made inside the span."""
        later = tuple((t - start, where) for t, where in self.moves if start < t < stop)
        return replace(self, position=self.position_at(start), moves=later)


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
        The sung or spoken character, one per note or syllable.
    phones : str or None
        The syllable's sounds in the reading the performance uses, IPA phones
        separated by spaces (``"l u k"``); None lets the voice model read ``lyric``.
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
    phones: str | None = None

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

    def __reduce__(self) -> tuple[Callable[..., Event], tuple]:
        # pickled by position and read back unchecked (``_event``): it was checked when made
        return _event, _EVENT_FIELDS(self)


_EVENT_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(Event)))
_EVENT_SETTERS = tuple(getattr(Event, f.name).__set__ for f in dataclasses.fields(Event))


def _event(*fields: Any) -> Event:
    """An Event from all its fields in order, unchecked: for an event made from a checked
    one (read back from the Performance cache, moved in a cut). A frozen dataclass's
    ``__init__`` (and its unpickling ``__setstate__``) sets each field through
    ``object.__setattr__`` and then checks it: the whole rite's 28 900 events unpickled in
    0.15 s, this way in 0.09 s."""
    event = object.__new__(Event)
    for set_field, value in zip(_EVENT_SETTERS, fields, strict=True):
        set_field(event, value)
    return event


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


def _moved(items: tuple, kind: type, start: float, stop: float) -> tuple:
    """The ``kind`` items (events or markers, whose first field is ``time``) in ``[start,
    stop)`` on a clock where ``start`` is 0: ``replace(item, time=…)``, made by position
    (``replace`` walks the fields for every item: s32's 16 000 events took 0.26 s); an
    event unchecked (``_event``: its time moves back by no more than it is, nothing else)."""
    rest = operator.attrgetter(*(f.name for f in dataclasses.fields(kind)[1:]))
    make = _event if kind is Event else kind
    return tuple(make(item.time - start, *rest(item)) for item in items
                 if start <= item.time < stop)


@dataclass(frozen=True, slots=True)
class PieceInfo:
    """A piece as the performance uses it, with what it rests on.

    ``basis`` is ``surviving`` (with its source) or ``reconstruction`` (with the
    rules and evidence it rests on); ``note`` says which. ``unplayed``: the piece's
    parts no instrument of the rite plays, ``part (instrument)`` (騶虞's 鼙 in the 鄉射,
    which places none), so that a silent part is said, not lost. ``sung_octaves``: the
    octaves the singers move its song by (鹿鳴 -1: tenors sing the 詩譜's notes an octave
    down), so that a score names the sung notes as the score of the piece prints them.
    """

    id: str
    title: str
    basis: str
    note: str
    unplayed: tuple[str, ...] = ()
    sung_octaves: int = 0

    def __post_init__(self) -> None:
        if self.basis not in BASES:
            raise PerformanceError(
                f"piece {self.id!r}: basis={self.basis!r}, accepted: {', '.join(BASES)}")


@dataclass(frozen=True, slots=True)
class SectionSpan:
    """A section of the rite (右…) on the clock: from its first step's start to its last
    step's end."""

    id: str
    name: str
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class MusicSpan:
    """A music cue as played: when it starts and stops, what holds the clock (``rite``: it
    plays until a step, 樂闋; ``music``: the rite waits for it), and the tempo it was
    played at (beats a minute; None in a Performance saved before it was kept)."""

    cue: str
    piece: str
    start: float
    end: float
    bound: str
    tempo_bpm: float | None = None

    def __post_init__(self) -> None:
        if self.tempo_bpm is not None and not 0 < self.tempo_bpm <= MAX_BPM:
            raise PerformanceError(f"music {self.cue!r}: tempo_bpm={self.tempo_bpm!r} must be "
                                   f"> 0 and ≤ {MAX_BPM:g}")


@dataclass(frozen=True, slots=True)
class Shot:
    """One arrow, simulated.

    Times in seconds, lengths in metres. ``outcome``: ``hu`` (in the 鵠), ``hou`` (the 侯
    cloth outside it), ``liu`` / ``yang`` / ``fang`` (short, over, beside: a miss).
    ``called``: the 獲者 calls 獲. ``stroke``: the drum stroke aimed at (round 3,
    bound shots), ``offset`` = release − nearest stroke. ``counted``: a 算 is laid.
    ``side``: ``right`` for the 上射, ``left`` for the 下射.
    """

    turn: int
    pair: str
    archer: str
    archer_name: str
    role: str
    arrow: int
    target: str
    release: float
    origin: Vec3
    impact: Vec3
    distance: float
    flight: float
    arrival: float
    outcome: str
    called: bool
    bound: bool
    stroke: float | None
    offset: float | None
    on_beat: bool | None
    counted: bool
    side: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise PerformanceError(f"shot {self.turn}.{self.arrow}: outcome={self.outcome!r}, "
                                   f"accepted: {', '.join(OUTCOMES)}")
        if self.side not in SIDES:
            raise PerformanceError(f"shot {self.turn}.{self.arrow}: side={self.side!r}, "
                                   f"accepted: {', '.join(SIDES)}")


@dataclass(frozen=True, slots=True)
class TurnTally:
    """The 八算 of one turn: taken, laid right (上射) and left (下射), returned (餘算)."""

    turn: int
    pair: str
    taken: int
    right: int
    left: int
    returned: int


@dataclass(frozen=True, slots=True)
class SideCount:
    """A side's 算 counted as the 釋獲者 does: 純 (pairs) and 奇, bundles of 十純."""

    total: int
    chun: int
    qi: int
    bundles: int
    loose_chun: int


@dataclass(frozen=True, slots=True)
class Turn:
    """One pair's (or the 司射's) turn at the mark: who, when, and its drum 節 and strokes."""

    index: int
    pair: str
    name: str
    start: float
    jie: tuple[float, ...] = ()
    strokes: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class Round:
    """A shooting round as shot: its turns, arrows, tallies (rounds 2–3), the
    announcement, and the 節 of the music it was shot to (round 3)."""

    number: int
    name: str
    start: float
    end: float
    tolerance_s: float
    turns: tuple[Turn, ...]
    shots: tuple[Shot, ...]
    tallies: tuple[TurnTally, ...] = ()
    right: SideCount | None = None
    left: SideCount | None = None
    announcement: str | None = None
    jie: tuple[float, ...] = ()

    @property
    def strokes(self) -> tuple[float, ...]:
        """Every drum stroke a release may sit on."""
        return tuple(s for turn in self.turns for s in turn.strokes)

    def shifted(self, start: float) -> Round:
        """The round on a clock where ``start`` is 0."""
        def times(values):
            return tuple(v - start for v in values)

        def shot(s: Shot) -> Shot:
            return replace(s, release=s.release - start, arrival=s.arrival - start,
                           stroke=None if s.stroke is None else s.stroke - start)

        return replace(
            self, start=self.start - start, end=self.end - start, jie=times(self.jie),
            turns=tuple(replace(t, start=t.start - start, jie=times(t.jie),
                                strokes=times(t.strokes)) for t in self.turns),
            shots=tuple(shot(s) for s in self.shots))


@dataclass(frozen=True, slots=True)
class Info:
    """What was performed and how: the text, the cue sheet, the seed, the tuning, the
    reading of the words, ``offset``: where this clock's 0 stands on the whole rite's, and
    ``site``: the site it was sequenced on, for ``site.courtyard.load_site(rite=…)`` (a
    bundled rite's id, ``generic`` for a rite with no data, ``""`` the 大射's; None in a file
    saved before it was recorded), so a saved Performance is heard where it was played;
    ``cut_at``: where a part was cut off before the rite's own end, on this clock (what
    began there or later left out; None: nothing was), where a render fades it out."""

    title: str = ""
    text: str = ""
    cue_sheet: str = ""
    seed: int = 0
    tuning: str = ""
    huangzhong_hz: float = 0.0
    reading: str = ""
    offset: float = 0.0
    site: str | None = None
    cut_at: float | None = None


def takes_no_time(asked: str) -> str:
    """What is said where ``asked`` (sections, a programme's span) takes no time on the day:
    the 大射's s01–s04 are made ready before it, so a render, a loop or a table of them
    would be empty."""
    return (f"{asked} takes no time in the performance (made ready before the rite's day): "
            "nothing to hear; `soundscape sections` gives each section's length")


@dataclass(frozen=True)
class Performance:
    """Events and markers sorted by time, with the sources and pieces they refer to, and
    the sections, music and rounds the sequencer laid on the clock."""

    events: tuple[Event, ...]
    markers: tuple[Marker, ...]
    sources: Mapping[str, Source]
    pieces: Mapping[str, PieceInfo] = field(default_factory=dict)
    info: Info = field(default_factory=Info)
    sections: tuple[SectionSpan, ...] = ()
    music: tuple[MusicSpan, ...] = ()
    rounds: tuple[Round, ...] = ()

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
        self._check_references()

    def _check_references(self) -> None:
        """Every key names its own item, every music span a known piece and a bound the
        sequencer gives, every arrow and tally a turn of its round, and the sections stand
        once each, in the order of the clock."""
        for name, table in (("sources", self.sources), ("pieces", self.pieces)):
            for key, item in table.items():
                if item.id != key:
                    raise PerformanceError(f"{name}[{key!r}]: id={item.id!r} must be its key "
                                           f"{key!r}")
        for i, span in enumerate(self.music):
            if span.piece not in self.pieces:
                raise PerformanceError(f"music[{i}]: piece={span.piece!r} is not among the "
                                       f"pieces; known: {', '.join(self.pieces) or 'none'}")
            if span.bound not in BOUNDS:
                raise PerformanceError(f"music[{i}]: bound={span.bound!r}, accepted: "
                                       f"{', '.join(BOUNDS)}")
        for i, shoot in enumerate(self.rounds):
            turns = {turn.index for turn in shoot.turns}
            stray = next((turn for turn in (*(s.turn for s in shoot.shots),
                                            *(t.turn for t in shoot.tallies))
                          if turn not in turns), None)
            if stray is not None:
                raise PerformanceError(f"rounds[{i}]: turn={stray!r} of a shot or tally "
                                       f"is not among the round's turns "
                                       f"{sorted(turns) or 'none'}")
        seen: set[str] = set()
        for i, section in enumerate(self.sections):
            if section.id in seen:
                raise PerformanceError(f"sections[{i}]: id={section.id!r} stands twice")
            seen.add(section.id)
            if i and section.start < self.sections[i - 1].start:
                raise PerformanceError(f"sections[{i}]: start={section.start!r} is before the "
                                       f"start of {self.sections[i - 1].id!r}; accepted: "
                                       "sections in the order of the clock")

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

    @property
    def heard_until(self) -> float:
        """Seconds of it a listener hears: to its cut where a part was cut before the rite's
        own end (a render ends there), else its ``duration``."""
        cut = self.info.cut_at
        return self.duration if cut is None else min(cut, self.duration)

    def section(self, name: str) -> SectionSpan:
        """The span of a performed section named by id (``s18``), name (``樂賓``) or heading
        (``右樂賓``); PerformanceError naming the performed sections (id and name) if none."""
        from soundscape.text.hanzi import canonical  # OpenCC: not for every reader of a file

        # 右樂賓 names the section 樂賓, and the reverse; 乐宾 as 樂賓 (as derive reads)
        heading = canonical(name.removeprefix("右"))
        for span in self.sections:
            if name == span.id:
                return span
        named = [s for s in self.sections if heading == canonical(s.name.removeprefix("右"))]
        if len(named) > 1:  # the text repeats a heading (取矢視算 ends two rounds)
            raise PerformanceError(f"section {name!r} names {len(named)} sections: "
                                   f"{', '.join(s.id for s in named)}; give one by its id")
        if named:
            return named[0]
        performed = ", ".join(f"{s.id} {s.name}" for s in self.sections) or "none"
        raise PerformanceError(f"section {name!r} is not in this performance; performed: "
                               f"{performed}")

    def cut(self, first: str | None = None, last: str | None = None) -> Performance:
        """The part from the start of section ``first`` to the end of section ``last``
        (each an id, name or heading, see :meth:`section`; None: the first or last
        performed), on its own clock: the one place a rite is cut by its sections."""
        if first is None and last is None:
            return self
        if not self.sections:
            raise PerformanceError("this performance has no sections to cut by")
        begin = self.section(first) if first is not None else self.sections[0]
        end = self.section(last) if last is not None else self.sections[-1]
        if self.sections.index(begin) > self.sections.index(end):
            raise PerformanceError(f"section {first!r} ({begin.id}) comes after {last!r} "
                                   f"({end.id}); accepted: a first section at or before the "
                                   "last")
        # to the last section is to the rite's end: its last sounds, as the whole rite's
        return self.between(begin.start, math.inf if end is self.sections[-1] else end.end)

    def between(self, start: float, stop: float, *, carry: bool = True) -> Performance:
        """The part in ``[start, stop)`` on its own clock (``start`` becomes 0): events,
        markers, sections, music and rounds that begin in it, and every source where it
        stands at ``start`` with the moves it makes inside the span. With ``carry``, the
        place's own sounds still going at ``start`` (the bed's overlapping segments) go on
        from 0 as sounds of what is left of them: dropped, they left a part's first 2 s in
        digital silence (a kit's loop, whose ring comes back at its start, carries none)."""
        def inside(items):
            return [item for item in items if start <= item.start < stop]

        ends = [stop] if self.events and self.events[-1].time >= stop else []  # sorted
        if self.info.cut_at is not None:
            ends.append(self.info.cut_at)
        carried = self._going_on(start) if carry and start > 0 else ()
        return Performance(
            carried + _moved(self.events, Event, start, stop),
            _moved(self.markers, Marker, start, stop),
            {k: s.shifted(start, stop) for k, s in self.sources.items()}, self.pieces,
            replace(self.info, offset=self.info.offset + start,
                    cut_at=min(ends) - start if ends else None),
            tuple(replace(s, start=s.start - start, end=s.end - start)
                  for s in inside(self.sections)),
            tuple(replace(m, start=m.start - start, end=m.end - start)
                  for m in inside(self.music)),
            tuple(r.shifted(start) for r in inside(self.rounds)))

    def _going_on(self, start: float) -> tuple[Event, ...]:
        """The place's sounds begun in the ``PLACE_SPAN_S`` before ``start`` and still
        sounding there, from 0 for what is left of them."""
        first = bisect.bisect_left(self.events, start - PLACE_SPAN_S,
                                   key=operator.attrgetter("time"))
        return tuple(replace(e, time=0.0, duration=e.end - start)
                     for e in self.events[first:bisect.bisect_left(
                         self.events, start, key=operator.attrgetter("time"))]
                     if e.end > start and self.sources[e.source].group == "place")

    # JSON -----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (schema version 2)."""
        return {
            "schema": SCHEMA_VERSION,
            "info": asdict(self.info),
            "sections": [asdict(s) for s in self.sections],
            "music": [asdict(m) for m in self.music],
            "rounds": [asdict(r) for r in self.rounds],
            "pieces": {k: asdict(v) for k, v in self.pieces.items()},
            "sources": {k: asdict(v) for k, v in self.sources.items()},
            "markers": [asdict(m) for m in self.markers],
            "events": [asdict(e) for e in self.events],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "performance"
                  ) -> Performance:
        """Rebuild a Performance from ``to_dict`` output, checking every field (type, finite
        and bounded number, list lengths, span order); errors name ``source`` and the field."""
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA_VERSION:
            schema = data.get("schema") if isinstance(data, Mapping) else data
            raise PerformanceError(f"{source}: performance schema={shown(schema)}, accepted: "
                                   f"{SCHEMA_VERSION}")
        fields = {"events": tuple[Event, ...], "markers": tuple[Marker, ...],
                  "sources": dict[str, Source], "pieces": dict[str, PieceInfo], "info": Info,
                  "sections": tuple[SectionSpan, ...], "music": tuple[MusicSpan, ...],
                  "rounds": tuple[Round, ...]}
        missing = sorted(set(fields) - set(data))
        if missing:
            raise PerformanceError(f"{source}: no {missing[0]!r}; a performance holds "
                                   f"{', '.join(fields)}")
        try:
            parts = {key: _typed(hint, data[key], key) for key, hint in fields.items()}
            for name in ("sections", "music", "rounds"):
                for i, span in enumerate(parts[name]):
                    if span.start > span.end:
                        raise PerformanceError(f"{name}[{i}]: start={span.start!r} must not "
                                               f"be after end={span.end!r}")
            _check_info(parts["info"])
            for i, event in enumerate(parts["events"]):
                if event.pitch is not None:
                    _check_pitch(event.pitch, f"events[{i}].pitch")
            instruments = set(list_instruments())
            for key, item in parts["sources"].items():
                # ids, never paths: they name stems and are looked up as instrument files
                for name, value in (("", key), (".id", item.id)):
                    if not validate.ID.fullmatch(value):
                        validate.ident(value, key=f"sources[{key!r}]{name}", where="",
                                       error=PerformanceError)
                if item.instrument not in instruments:  # midi said "no GM program", no file
                    validate.ident(item.instrument, key=f"sources[{key!r}].instrument",
                                   where="", error=PerformanceError, known=instruments)
                times = [t for t, _ in item.moves]
                if times != sorted(times):
                    raise PerformanceError(f"sources[{key!r}].moves: times {times} must "
                                           "increase")
            # ids that name files (`midi --split`: SECTION.mid, NN-CUE.mid), never paths
            named = [(f"sections[{i}].id", span.id) for i, span in enumerate(parts["sections"])]
            named += [(f"music[{i}].{name}", getattr(span, name))
                      for i, span in enumerate(parts["music"]) for name in ("cue", "piece")]
            named += [(f"pieces[{key!r}]", key) for key in parts["pieces"]]
            for name, value in named:
                if not validate.ID.fullmatch(value):
                    validate.ident(value, key=name, where="", error=PerformanceError)
            return cls(**parts)
        except (PerformanceError, ValueError) as error:  # Pitch raises ValueError
            where = str(error).removeprefix(": ")  # validate's WHERE is the key path here
            raise PerformanceError(f"{source}: {where}") from None

    def save_json(self, path: str | Path) -> Path:
        """Write the performance as JSON, atomically."""
        return write_text(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=1))

    @classmethod
    def load_json(cls, path: str | Path) -> Performance:
        """Read a performance written by ``save_json``; any problem names the file."""
        data = read_json(path, PerformanceError)
        if not isinstance(data, dict):
            raise PerformanceError(f"{path}: not a performance (a JSON object written by "
                                   "`soundscape sequence -o`)")
        return cls.from_dict(data, source=str(path))


#: A saved pitch's octave (倍 −1 … 清 +1 from the 正 octave at 黃鍾) and Hz: the sequencer's
#: notes lie well within (a key past MIDI's 0-127 is still refused by the MIDI writer); an
#: octave of 100 had made a name of 100 倍 and key −1140.
PITCH_OCTAVES, PITCH_HZ = (-4, 4), (16.0, 20000.0)


def _check_pitch(pitch: Pitch, key: str) -> None:
    """A canonical 律, an octave and Hz in range (MIDI and scores need all three)."""
    if pitch.lu not in LU:
        validate.fail(PerformanceError, "", f"{key}.lu", pitch.lu, "a canonical 律 name",
                      ", ".join(LU))
    validate.whole(pitch.octave, key=f"{key}.octave", where="", error=PerformanceError,
                   low=PITCH_OCTAVES[0], high=PITCH_OCTAVES[1])
    validate.number(pitch.hz, key=f"{key}.hz", where="", error=PerformanceError,
                    low=PITCH_HZ[0], high=PITCH_HZ[1], unit="Hz")


def _check_info(info: Info) -> None:
    """The reading is one the sequencer knows and 黃鍾 a pitch it tunes to (0: a file
    saved before it was recorded): both are reported with the render and compared by
    `play`; a part's cut is on its clock."""
    if info.reading not in ("", *READINGS):
        validate.fail(PerformanceError, "", "info.reading", info.reading,
                      "a reading of the words", ", ".join(READINGS))
    if info.cut_at is not None:
        validate.number(info.cut_at, key="info.cut_at", where="", low=0.0, unit="s",
                        error=PerformanceError)
    if info.huangzhong_hz != 0:
        validate.number(info.huangzhong_hz, key="info.huangzhong_hz", where="",
                        low=HUANGZHONG_RANGE_HZ[0], high=HUANGZHONG_RANGE_HZ[1], unit="Hz",
                        error=PerformanceError)
    if info.site:  # a site is looked up by it: the error names this file, not the rites'
        from soundscape.text.derive.rites import rite_ids  # (70 ms: only when there is one)

        validate.choice(info.site, (*rite_ids(), _GENERIC_SITE), key="info.site", where="",
                        error=PerformanceError)


#: ``site.courtyard.GENERIC``, the site of a rite with no data (site lies above this layer).
_GENERIC_SITE = "generic"


#: The longest a sound of the place lasts (the bed's segments: 8.19 s; a cricket's 9.5 s):
#: how far before a cut ``between`` looks for those still going.
PLACE_SPAN_S = 30.0

#: Largest magnitude of any number in a saved Performance (seconds, metres, Hz …): the
#: whole rite is 9,000 s in a courtyard of 100 m; far beyond, arithmetic overflows.
MAX_NUMBER = 1e7
_LONGEST = 100_000  # characters of any text in it


def _typed(hint: Any, value: Any, key: str) -> Any:
    """``value`` (parsed JSON) as the type ``hint`` (a field's annotation), checked; errors
    name ``key`` (``events[3].position``) with the value and what is accepted. The first
    pass names nothing (``key`` None: no strings made for 400,000 values); a value that
    fails is found again by a second pass that names it."""
    check = _checker(hint)
    try:
        return check(value, None)
    except (PerformanceError, ValueError):
        return check(value, key)


@functools.cache
def _checker(hint: Any) -> Callable[[Any, str | None], Any]:
    """A function checking and converting values of the annotation ``hint``, made once per
    type (a whole rite's Performance has 400,000 values): the fast path is a type test,
    messages are made only for a value that fails."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = _checker(next(a for a in args if a is not type(None)))
        return lambda value, key: None if value is None else inner(value, key)
    if hint is float:
        def number(value: Any, key: Any) -> float:
            if type(value) in (float, int) and -MAX_NUMBER <= value <= MAX_NUMBER:
                return float(value)  # NaN and inf fail the comparison
            return validate.number(value, key=key, where="", error=PerformanceError,
                                   low=-MAX_NUMBER, high=MAX_NUMBER)
        return number
    if hint is int:
        def integer(value: Any, key: Any) -> int:
            return validate.whole(value, key=key, where="", low=-2**63, high=2**63,
                                  error=PerformanceError)
        return integer
    if hint is bool:
        def flag(value: Any, key: Any) -> bool:
            if type(value) is not bool:
                validate.fail(PerformanceError, "", key, value, "true or false")
            return value
        return flag
    if hint is str:
        def text(value: Any, key: Any) -> str:
            if type(value) is str and len(value) <= _LONGEST:
                return value
            return validate.text(value, key=key, where="", error=PerformanceError,
                                 empty_ok=True, longest=_LONGEST)
        return text
    if origin is tuple:
        return _sequence_checker(args)
    if origin is dict:
        item = _checker(args[1])

        def table(value: Any, key: Any) -> dict[str, Any]:
            if type(value) is not dict:
                validate.fail(PerformanceError, "", key, value, "a table")
            return {name: item(v, key and f"{key}[{name!r}]") for name, v in value.items()}
        return table
    return _record_checker(hint)


def _sequence_checker(args: tuple[Any, ...]) -> Callable[[Any, str | None], tuple]:
    """A list of any length of one type (``tuple[X, ...]``) or of fixed types (a Vec3)."""
    if len(args) == 2 and args[1] is Ellipsis:
        item = _checker(args[0])

        def sequence(value: Any, key: Any) -> tuple:
            if type(value) is not list:
                validate.fail(PerformanceError, "", key, value, "a list")
            if key is None:
                return tuple(item(v, None) for v in value)
            return tuple(item(v, f"{key}[{i}]") for i, v in enumerate(value))
        return sequence
    items = [_checker(a) for a in args]

    def fixed(value: Any, key: Any) -> tuple:
        if type(value) is not list or len(value) != len(items):
            validate.fail(PerformanceError, "", key, value, f"a list of {len(items)} items")
        return tuple(check(v, key and f"{key}[{i}]")
                     for i, (check, v) in enumerate(zip(items, value, strict=True)))
    return fixed


def _record_checker(cls: type) -> Callable[[Any, str | None], Any]:
    """A dataclass from a JSON object: known keys only, each typed, the required ones there."""
    hints = typing.get_type_hints(cls)
    checks = {name: _checker(hint) for name, hint in hints.items()}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}

    def record(value: Any, key: Any) -> Any:
        if type(value) is not dict:
            validate.fail(PerformanceError, "", key, value, "a table")
        if not value.keys() <= checks.keys():
            name = next(n for n in value if n not in checks)
            validate.fail(PerformanceError, key, name, value[name], "a known key",
                          ", ".join(hints))
        if not required <= value.keys():
            name = sorted(required - value.keys())[0]
            raise PerformanceError(f"{key}: no {name!r}; accepted keys: {', '.join(hints)}")
        fields = {name: checks[name](v, key and f"{key}.{name}") for name, v in value.items()}
        try:
            return cls(**fields)
        except ValueError as error:  # its own checks (a pitch's Hz, an event's velocity)
            raise PerformanceError(f"{key}: {error}") from None
    return record
