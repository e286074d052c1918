"""Programmes: named selections of the rite, each heard from one or more places (zones).

A programme file (``soundscape/data/programmes.toml`` by default; format in
docs/kit.md) lists ``[[programme]]`` tables. Each chooses its part of the rite with
exactly one of:

- nothing: the whole rite;
- ``from`` / ``to``: sections (id like ``s18`` or name like ``樂賓``);
- ``round``: a shooting round (0 誘射 … 3 三射用樂);
- ``music``: a music cue id, or ``"all"``: an excerpt of ``excerpt_s`` seconds from the
  start of every music cue, one after another with ``gap_s`` of silence between;
- ``each_music = true``: one programme per music cue (ids ``<id>.<cue>``),

and its zones with ``listeners`` (place ids) and/or ``walk`` (waypoints ``{time,
place}``: a walking listener). ``calibration_lufs`` and ``ceiling_dbtp`` may be given
per programme or at the top of the file.

The loop point: a programme loops from its end into its beginning, so where it begins
on a sound (a music cue's first stroke), the loop point would fall on that onset. Its
first part therefore opens ``lead_s`` (default 1 s) before its first sound, on the rite's
own moment just before it (the bed, and whatever the rite does there), at the latest time
no more than ``LEAD_REACH_S`` earlier from which nothing but the bed starts for
``lead_s`` (``lead_in``): the loop point falls where nothing starts, and the part's
first sound is heard as it is in the rite, after what comes before it.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from soundscape import validate
from soundscape.errors import PerformanceError
from soundscape.fileio import read_toml
from soundscape.kit import KitError
from soundscape.performance import Performance, Source, takes_no_time
from soundscape.resources import data_dir
from soundscape.site.listeners import Listener, ListenerPath, listener_at

__all__ = ["LEAD_REACH_S", "Programme", "Zone", "cut", "default_path", "expand",
           "first_sound", "lead_in", "load_programmes", "spans"]

_KEYS = {"id", "title", "description", "from", "to", "round", "music", "excerpt_s", "gap_s",
         "lead_s", "each_music", "listeners", "walk", "calibration_lufs", "ceiling_dbtp"}
#: How far before its part a programme may open to find its quiet lead (s).
LEAD_REACH_S = 10.0
_MAX_PROGRAMMES = 500


@dataclass(frozen=True, slots=True)
class Zone:
    """Where a programme is heard: a place id, or ``walk`` with its waypoints."""

    id: str
    waypoints: tuple[tuple[float, str], ...] = ()

    def listener(self, site) -> Listener | ListenerPath:
        if not self.waypoints:
            return listener_at(site, self.id)
        seated = [(time, listener_at(site, place)) for time, place in self.waypoints]
        return ListenerPath(tuple((time, ear.position, ear.direction) for time, ear in seated))


@dataclass(frozen=True, slots=True)
class Programme:
    """One programme (see module). ``where`` is ``FILE:[[programme]] N`` for messages."""

    id: str
    title: str
    description: str = ""
    from_section: str | None = None
    to_section: str | None = None
    round: int | None = None
    music: str | None = None
    excerpt_s: float = 70.0
    gap_s: float = 2.0
    lead_s: float = 1.0
    each_music: bool = False
    zones: tuple[Zone, ...] = (Zone("gong_wei"),)
    calibration_lufs: float = -23.0
    ceiling_dbtp: float = -1.0
    where: str = ""


def default_path() -> Path:
    return data_dir() / "programmes.toml"


def load_programmes(path: str | Path | None = None, *, places: set[str] | None = None
                    ) -> tuple[Programme, ...]:
    """Read and check a programme file (None → the bundled one).

    ``places``: the listener place ids accepted (None: not checked here).
    """
    path = Path(path) if path is not None else default_path()
    data = read_toml(path, KitError)
    top = {"calibration_lufs": -23.0, "ceiling_dbtp": -1.0}
    for key in top:
        if key in data:
            top[key] = _level(data[key], key, str(path))
    entries = data.get("programme", [])
    validate.size(entries, key="programme", where=str(path), error=KitError, kind=list,
                  least=1, most=_MAX_PROGRAMMES)
    programmes = [_programme(entry, f"{path}: [[programme]] {i + 1}", top, places)
                  for i, entry in enumerate(entries)]
    ids = [p.id for p in programmes]
    for p in programmes:
        if ids.count(p.id) > 1:
            raise KitError(f"{p.where}: id={p.id!r} is given twice; ids must differ")
    return tuple(programmes)


def _level(value: Any, key: str, where: str) -> float:
    low, high = (-70.0, 0.0) if key == "calibration_lufs" else (-20.0, 0.0)
    return validate.number(value, key=key, where=where, error=KitError, low=low, high=high,
                           unit="LUFS" if key == "calibration_lufs" else "dBTP")


def _programme(entry: Any, where: str, top: dict[str, float], places: set[str] | None
               ) -> Programme:
    validate.size(entry, key="programme", where=where, error=KitError, kind=dict, least=1)
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        validate.fail(KitError, where, "key", unknown[0], "a programme key",
                      ", ".join(sorted(_KEYS)))
    pid = validate.ident(entry.get("id"), key="id", where=where, error=KitError)
    kinds = [k for k in ("from", "round", "music", "each_music") if k in entry]
    if "to" in entry and "from" not in entry:
        kinds.append("to")
    if len(kinds) > 1:
        raise KitError(f"{where}: id={pid!r} chooses its part twice ({', '.join(kinds)}); "
                       "give one of from/to, round, music, each_music")
    fields: dict[str, Any] = {
        "id": pid, "where": where,
        "title": validate.text(entry.get("title", pid), key="title", where=where,
                               error=KitError, longest=200),
        "description": validate.text(entry.get("description", ""), key="description",
                                     where=where, error=KitError, empty_ok=True, longest=2000),
    }
    for key in ("from", "to"):
        if key in entry:
            fields[f"{key}_section"] = validate.text(entry[key], key=key, where=where,
                                                     error=KitError, longest=40)
    if "round" in entry:
        fields["round"] = validate.whole(entry["round"], key="round", where=where,
                                         error=KitError, low=0, high=3)
    if "music" in entry:
        fields["music"] = validate.ident(entry["music"], key="music", where=where,
                                         error=KitError)
    if "each_music" in entry:
        fields["each_music"] = validate.choice(entry["each_music"], (True, False),
                                               key="each_music", where=where, error=KitError)
    for key, low, high in (("excerpt_s", 5.0, 3600.0), ("gap_s", 0.0, 60.0),
                           ("lead_s", 0.0, LEAD_REACH_S)):
        if key in entry:
            fields[key] = validate.number(entry[key], key=key, where=where, error=KitError,
                                          low=low, high=high, unit="s")
    for key, default in top.items():
        fields[key] = _level(entry[key], key, where) if key in entry else default
    fields["zones"] = _zones(entry, where, places)
    return Programme(**fields)


def _zones(entry: dict, where: str, places: set[str] | None) -> tuple[Zone, ...]:
    listeners = entry.get("listeners", [] if "walk" in entry else ["gong_wei"])
    validate.size(listeners, key="listeners", where=where, error=KitError, kind=list,
                  most=32)
    zones = [Zone(validate.ident(p, key="listeners", where=where, error=KitError,
                                 known=places)) for p in listeners]
    if "walk" in entry:
        walk = validate.size(entry["walk"], key="walk", where=where, error=KitError,
                             kind=list, least=1, most=1000)
        points: list[tuple[float, str]] = []
        for i, point in enumerate(walk):
            key = f"walk[{i}]"
            validate.size(point, key=key, where=where, error=KitError, kind=dict, least=2)
            time = validate.number(point.get("time"), key=f"{key}.time", where=where,
                                   error=KitError, low=0.0, high=24 * 3600.0, unit="s")
            if points and time <= points[-1][0]:
                validate.fail(KitError, where, f"{key}.time", time,
                              f"after walk[{i - 1}]'s {points[-1][0]:g} s")
            place = validate.ident(point.get("place"), key=f"{key}.place", where=where,
                                   error=KitError, known=places)
            points.append((time, place))
        zones.append(Zone("walk", tuple(points)))
    if not zones:
        raise KitError(f"{where}: no listeners and no walk; give listeners = [\"gong_wei\"]")
    ids = [z.id for z in zones]
    if len(set(ids)) != len(ids):
        raise KitError(f"{where}: listeners {ids} repeat")
    return tuple(zones)


def expand(programmes: tuple[Programme, ...], performance: Performance
           ) -> tuple[Programme, ...]:
    """``each_music`` programmes made one per music cue of ``performance``."""
    out = []
    for p in programmes:
        if not p.each_music:
            out.append(p)
            continue
        for span in performance.music:
            piece = performance.pieces.get(span.piece)
            title = f"{p.title}: {piece.title if piece else span.piece} ({span.cue})"
            out.append(replace(p, id=f"{p.id}.{span.cue}", title=title, music=span.cue,
                               each_music=False, excerpt_s=span.end - span.start))
    return tuple(out)


def fitting(programmes: tuple[Programme, ...], performance: Performance, site
            ) -> tuple[tuple[Programme, ...], list[str]]:
    """The programmes (written for the 大射: the bundled file) that another rite can play,
    and a note on each left out: a programme whose round, music or sections the rite does not
    perform (燕禮 shoots no round 3), a zone at a place its site lacks (the 鄉射's one 侯 has no
    大侯之乏); a programme with no zone left is left out."""
    kept, notes = [], []
    for programme in programmes:
        try:
            spans(programme, performance)
        except KitError as error:
            reason = str(error).removeprefix(f"{programme.where} id={programme.id!r}: ")
            notes.append(f"{programme.id}: left out: {reason}")
            continue
        zones = tuple(z for z in programme.zones if all(
            place in site.places for place in ([t[1] for t in z.waypoints] or [z.id])))
        lost = [z.id for z in programme.zones if z not in zones]
        if lost:
            notes.append(f"{programme.id}: {'left out' if not zones else 'zones left out'}: "
                         f"{', '.join(lost)} (not on this rite's site)")
        if zones:
            kept.append(replace(programme, zones=zones))
    return tuple(kept), notes


def spans(programme: Programme, performance: Performance) -> list[tuple[float, float]]:
    """The parts of ``performance`` the programme plays, in seconds on its clock."""
    where = f"{programme.where} id={programme.id!r}"
    if programme.round is not None:
        for r in performance.rounds:
            if r.number == programme.round:
                return [(r.start, r.end)]
        raise KitError(f"{where}: round={programme.round} was not shot in this performance; "
                       f"shot: {[r.number for r in performance.rounds]}")
    if programme.music is not None:
        cues = {m.cue: m for m in performance.music}
        if programme.music == "all":
            return [(m.start, min(m.end, m.start + programme.excerpt_s))
                    for m in performance.music]
        if programme.music not in cues:
            raise KitError(f"{where}: music={programme.music!r} is not played; accepted: all, "
                           f"{', '.join(cues)}")
        span = cues[programme.music]
        return [(span.start, min(span.end, span.start + programme.excerpt_s))]
    if programme.from_section or programme.to_section:
        first = _section(performance, programme.from_section, where) \
            if programme.from_section else performance.sections[0]
        last = _section(performance, programme.to_section, where) \
            if programme.to_section else performance.sections[-1]
        if last.end <= first.start:
            index = [s.id for s in performance.sections]
            if index.index(first.id) <= index.index(last.id):  # s01–s04: before the day
                raise KitError(f"{where}: " + takes_no_time(f"from={first.id} to={last.id}"))
            raise KitError(f"{where}: from={first.id} comes after to={last.id}")
        return [(first.start, last.end)]
    # the rite ends with its last section; the bed's last segments ring on past it, so
    # the loop wraps them over its beginning instead of fading out to silence at its end
    return [(0.0, performance.sections[-1].end if performance.sections
             else performance.duration)]


def lead_in(performance: Performance, parts: list[tuple[float, float]], quiet_s: float
            ) -> list[tuple[float, float]]:
    """``parts`` with the first opening earlier, so that nothing but the bed (sources of
    group ``place``) starts in the first ``quiet_s`` of the loop (see module): the latest
    such opening no more than ``LEAD_REACH_S`` before the part and not before the rite's
    start; the part as it is when it opens so already or no such opening exists."""
    if not parts or quiet_s <= 0:
        return parts
    start, stop = parts[0]
    onsets = _onsets(performance)
    at = bisect.bisect_left(onsets, start)
    if (onsets[at] if at < len(onsets) else math.inf) - start >= quiet_s:
        return parts
    earliest = max(0.0, start - LEAD_REACH_S)
    while True:  # quiet_s before each onset from the part's first one back
        opening = onsets[at] - quiet_s
        if opening < earliest:
            return parts
        if at == 0 or onsets[at - 1] < opening:
            return [(opening, stop), *parts[1:]]
        at -= 1


def first_sound(performance: Performance, start: float) -> float:
    """Seconds from ``start`` to the first sound of ``performance`` at or after it that is
    not the bed (where a loop opening at ``start`` restarts); 0 when there is none."""
    onsets = _onsets(performance)
    at = bisect.bisect_left(onsets, start)
    return onsets[at] - start if at < len(onsets) else 0.0


def _onsets(performance: Performance) -> list[float]:
    """Onsets of every sound but the bed's (sources of group ``place``), in order."""
    return sorted(e.time for e in performance.events
                  if performance.sources[e.source].group != "place")


def _section(performance: Performance, name: str, where: str):
    try:
        return performance.section(name)
    except PerformanceError as error:
        raise KitError(f"{where}: {error}") from None


def cut(performance: Performance, parts: list[tuple[float, float]], gap_s: float = 0.0
        ) -> tuple[Performance, float]:
    """The parts one after another (``gap_s`` of silence between), and the loop length.

    One part is ``Performance.between``; several are laid end to end, each source standing
    where it stood at the start of each part.
    """
    pieces, offset = [], 0.0
    for start, stop in parts:
        part = performance.between(start, stop, carry=False)  # the loop's ring comes back
        pieces.append((offset, replace(part, sections=_sections(performance, start, stop))))
        offset += stop - start + gap_s
    if len(pieces) == 1:
        return pieces[0][1], offset - gap_s
    return _joined(pieces, performance), offset


def _sections(performance: Performance, start: float, stop: float) -> tuple:
    """The sections that overlap ``[start, stop)``, cut to it and shifted (a part that
    begins inside a section still shows which one)."""
    return tuple(replace(s, start=max(s.start, start) - start, end=min(s.end, stop) - start)
                 for s in performance.sections
                 if s.start < stop and (s.end > start or s.start >= start))


def _joined(pieces: list[tuple[float, Performance]], whole: Performance) -> Performance:
    def later(item, at):
        return replace(item, time=item.time + at)

    def span(item, at):
        return replace(item, start=item.start + at, end=item.end + at)

    sources = {k: _moving(k, pieces) for k in whole.sources}
    first = pieces[0][1]
    return Performance.build(
        [later(e, at) for at, p in pieces for e in p.events],
        [later(m, at) for at, p in pieces for m in p.markers], sources,
        pieces=whole.pieces, info=first.info,
        sections=_once_each([span(s, at) for at, p in pieces for s in p.sections]),
        music=tuple(span(m, at) for at, p in pieces for m in p.music),
        rounds=tuple(r.shifted(-at) for at, p in pieces for r in p.rounds))


def _once_each(sections: list) -> tuple:
    """The joined excerpts' sections, each id once: two excerpts of one section in a row (鹿鳴
    and 新宮, both in s18) are one span; an id that comes back later is ``id.2``, ``id.3`` …
    (a Performance holds each section once: the `music` programme stopped on s18 twice)."""
    joined: list = []
    taken: dict[str, int] = {}
    for section in sections:
        if joined and joined[-1].id == section.id:
            joined[-1] = replace(joined[-1], end=max(joined[-1].end, section.end))
            continue
        taken[section.id] = taken.get(section.id, 0) + 1
        again = taken[section.id]
        joined.append(replace(section, id=f"{section.id}.{again}") if again > 1 else section)
    return tuple(joined)


def _moving(key: str, pieces: list[tuple[float, Performance]]) -> Source:
    """A source of the joined parts: where it stands in each part, from that part's start."""
    first = pieces[0][1].sources[key]
    moves = list(first.moves)
    for at, part in pieces[1:]:
        source = part.sources[key]
        moves.append((at, source.position))
        moves.extend((at + t, where) for t, where in source.moves)
    return replace(first, moves=tuple(moves))
