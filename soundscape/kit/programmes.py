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

Wording: ``title`` and ``description`` may hold placeholders (``PLACEHOLDERS``: ``{rite}``,
``{length}``, ``{pieces}`` …), checked when the file is read and filled for the rite the
kit is built for (``fill``); ``{{`` and ``}}`` are literal braces, and any other brace is
text. A ``[programme.rite.ID]`` table gives a bundled rite its own ``title``,
``description`` and ``from``/``to`` (``for_rite``): the 燕禮 sings for its guest in s16–s18,
not in the 大射's s18.

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
import functools
import math
import re
from collections.abc import Callable
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

__all__ = ["LEAD_REACH_S", "PLACEHOLDERS", "Programme", "Zone", "cut", "default_path",
           "expand", "fill", "first_sound", "for_rite", "lead_in", "load_programmes",
           "loop_length", "spans", "spoken_length"]

_KEYS = {"id", "title", "description", "from", "to", "round", "music", "excerpt_s", "gap_s",
         "lead_s", "each_music", "listeners", "walk", "calibration_lufs", "ceiling_dbtp", "rite"}
#: The keys a ``[programme.rite.ID]`` table may give.
_RITE_KEYS = ("title", "description", "from", "to")
#: What a title or description may say in braces, filled for the rite (``fill``).
PLACEHOLDERS = ("rite", "rite_en", "rite_length", "length", "music_count", "pieces",
                "pieces_basis", "sections", "place", "excerpt_s", "gap_s")
# {{ and }} are literal braces; a brace around anything but a lower-case name is text
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([a-z_]+)\}")
_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
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
    rites: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # ``[programme.rite.ID]``


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
    named = f"{where} id={pid!r}"
    fields: dict[str, Any] = {
        "id": pid, "where": where,
        "title": _wording(entry.get("title", pid), "title", named),
        "description": _wording(entry.get("description", ""), "description", named),
        "rites": _rites(entry.get("rite", {}), named, kinds),
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


def _wording(value: Any, key: str, where: str) -> str:
    """A title or description whose placeholders are all known (see module)."""
    text = validate.text(value, key=key, where=where, error=KitError,
                         empty_ok=not key.endswith("title"),
                         longest=200 if key.endswith("title") else 2000)
    for found in _PLACEHOLDER.finditer(text):
        if found[1] is not None and found[1] not in PLACEHOLDERS:
            raise KitError(f"{where}: {key}={validate.shown(text)}: {{{found[1]}}} is not a "
                           f"placeholder; accepted: {', '.join(f'{{{p}}}' for p in PLACEHOLDERS)}"
                           " ({{ and }} for a brace)")
    return text


def _rites(table: Any, where: str, kinds: list[str]) -> tuple:
    """The ``[programme.rite.ID]`` tables: a bundled rite's own wording and sections."""
    from soundscape.text.derive.rites import rite_ids

    validate.size(table, key="rite", where=where, error=KitError, kind=dict)
    found = []
    for rite_id, own in table.items():
        validate.ident(rite_id, key="rite", where=where, error=KitError, known=rite_ids())
        validate.size(own, key=f"rite.{rite_id}", where=where, error=KitError, kind=dict,
                      least=1)
        for key in own:
            validate.choice(key, _RITE_KEYS, key=f"rite.{rite_id}", where=where, error=KitError)
            if key in ("from", "to") and not {"from", "to"} & set(kinds):
                raise KitError(f"{where}: rite.{rite_id}.{key}: the programme chooses no "
                               "sections; give from/to on the programme too")
        found.append((rite_id, tuple((key, _own(value, f"rite.{rite_id}.{key}", where))
                                     for key, value in own.items())))
    return tuple(found)


def _own(value: Any, key: str, where: str) -> str:
    """One value of a ``[programme.rite.ID]`` table: wording, or a section (``from``/``to``)."""
    if key.endswith(("title", "description")):
        return _wording(value, key, where)
    return validate.text(value, key=key, where=where, error=KitError, longest=40)


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
            named = _literal(f"{piece.title if piece else span.piece} ({span.cue})")
            title = f"{p.title}: {named}"
            out.append(replace(p, id=f"{p.id}.{span.cue}", title=title, music=span.cue,
                               each_music=False, excerpt_s=span.end - span.start))
    return tuple(out)


def for_rite(programme: Programme, rite_id: str) -> Programme:
    """The programme as its ``[programme.rite.ID]`` table gives it for the rite ``rite_id``
    (the performance's ``info.text``); as it is for a rite with none."""
    own = dict(dict(programme.rites).get(rite_id, ()))
    fields: dict[str, Any] = {
        "from_section" if key == "from" else "to_section" if key == "to" else key: value
        for key, value in own.items()}
    return replace(programme, **fields) if fields else programme


def fill(programme: Programme, performance: Performance, site) -> Programme:
    """The programme with the placeholders of its title and description filled for
    ``performance`` heard on ``site`` (each value worked out only if used)."""
    values = _values(programme, performance, site)

    def said(found: re.Match) -> str:
        if found[1] is None:  # {{ or }}
            return found[0][0]
        return values[found[1]]() if found[1] in values else found[0]

    def filled(text: str) -> str:
        return _PLACEHOLDER.sub(said, text)

    return replace(programme, title=filled(programme.title),
                   description=filled(programme.description))


def _values(programme: Programme, performance: Performance, site
            ) -> dict[str, Callable[[], str]]:
    """What each of ``PLACEHOLDERS`` says for the programme in ``performance``."""
    def own() -> list[tuple[float, float]]:
        return spans(programme, performance)

    whole = Programme("rite", "rite")
    return {
        "rite": lambda: performance.info.title or performance.info.text,
        "rite_en": lambda: (_english_names().get(performance.info.text)
                            or performance.info.title or performance.info.text),
        "rite_length": lambda: spoken_length(loop_length(whole, performance)),
        "length": lambda: spoken_length(loop_length(programme, performance)),
        "music_count": lambda: _number(len(performance.music)),
        "pieces": lambda: _pieces(performance, own(), basis=False),
        "pieces_basis": lambda: _pieces(performance, own(), basis=True),
        "sections": lambda: _sections_named(performance, own()),
        "place": lambda: _place(site, programme.zones[0]),
        "excerpt_s": lambda: f"{programme.excerpt_s:g}",
        "gap_s": lambda: f"{programme.gap_s:g}",
    }


def _literal(text: str) -> str:
    """``text`` as a title says it literally (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


@functools.cache
def _english_names() -> dict[str, str]:
    """The bundled rites' English names (the bundled programme file's ``[rite_en]``)."""
    return dict(read_toml(default_path(), KitError).get("rite_en", {}))


def loop_length(programme: Programme, performance: Performance) -> float:
    """The programme's loop in seconds: its parts, the lead and the gaps."""
    parts = lead_in(performance, spans(programme, performance), programme.lead_s)
    return sum(stop - start for start, stop in parts) + programme.gap_s * (len(parts) - 1)


def spoken_length(seconds: float) -> str:
    """A length as a title says it: to the quarter hour from about an hour (``2½ hours``),
    to 5 minutes from 20 minutes, to the minute, or to 5 seconds under a minute."""
    minutes = seconds / 60.0
    if minutes >= 52.5:
        hours, quarter = divmod(round(minutes / 15.0), 4)
        plural = "" if (hours, quarter) == (1, 0) else "s"
        return f"{hours}{('', '¼', '½', '¾')[quarter]} hour{plural}"
    if minutes >= 19.5:
        return f"{5 * round(minutes / 5.0)} minutes"
    if seconds >= 57.5:
        return f"{_number(round(minutes))} minute{'' if round(minutes) == 1 else 's'}"
    return f"{_number(max(5, 5 * round(seconds / 5.0)))} seconds"


def _number(count: int) -> str:
    """A count as prose writes it: words to ten, figures above."""
    return _WORDS[count] if 0 <= count < len(_WORDS) else str(count)


def _pieces(performance: Performance, parts: list[tuple[float, float]], *, basis: bool) -> str:
    """The pieces whose music begins in ``parts``, in order, each once (``鹿鳴, 新宮``);
    with ``basis``, each run of one basis followed by it (``鹿鳴 (surviving), 新宮
    (reconstruction)``)."""
    heard: list[str] = []
    for span in performance.music:
        if span.piece not in heard and any(a <= span.start < b for a, b in parts):
            heard.append(span.piece)
    if not heard:
        return "no music"
    runs: list[tuple[str, list[str]]] = []
    for piece in (performance.pieces[p] for p in heard):
        kind = piece.basis if basis else ""
        if runs and runs[-1][0] == kind:
            runs[-1][1].append(piece.title)
        else:
            runs.append((kind, [piece.title]))
    return ", ".join(", ".join(titles) + (f" ({kind})" if kind else "") for kind, titles in runs)


def _sections_named(performance: Performance, parts: list[tuple[float, float]]) -> str:
    """The sections ``parts`` play: ``s18 樂賓``, or ``s01 戒百官 to s45 賓出公入``."""
    played = [s for start, stop in parts for s in _sections(performance, start, stop)]
    if not played:
        return "no section"
    first, last = played[0], played[-1]
    return (f"{first.id} {first.name}" if first.id == last.id
            else f"{first.id} {first.name} to {last.id} {last.name}")


def _place(site, zone: Zone) -> str:
    """A zone's place (a walk's first) as English says it: ``the duke's seat``."""
    info = site.place_info(zone.waypoints[0][1] if zone.waypoints else zone.id)
    english = info.roman.split(",", 1)[-1].strip()  # ``zhong ting, mid-court``
    if not english:
        return info.name
    return english if english.startswith(("the ", "a ")) else f"the {english}"  # the gate


def fitting(programmes: tuple[Programme, ...], performance: Performance, site
            ) -> tuple[tuple[Programme, ...], list[str]]:
    """The programmes (the bundled file's, for every bundled rite) that this rite can play,
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
