"""Place the orchestra of the 設樂 on the site, from the cue sheet's layout.

Each layout entry says where one rack or drum stands relative to a place or
to another entry (``east_of``, ``west_of``, ``north_of``, ``south_of``,
``between``, ``on``), which way it faces and, for drums, which face is struck.
The rules that turn the words into metres, all with spacings from
``soundscape/data/site.toml``:

- ``X east_of A`` (and the other three): X stands beyond A's edge in that
  direction, ``gap`` clear, level with A's middle. When the text puts further
  entries between X and A (應鼙 east of a 建鼓 that is itself west of the
  阼階), room is left for them.
- ``between`` [A, B]: at the midpoint.
- ``on`` A, ``side``: leaning on that side of A, ``lean`` off it (鼗倚於頌磬西紘).
- Nothing on the ground comes within ``hall_clearance`` of the hall's edge: an
  entry that would is moved south (the walk in front of the steps).
- Facing: as written; else the struck face; else that of the entry it is
  measured from (皆南陳: the racks south of 笙磬 face as it does); else north.
- Racks hang across their facing, one bell or stone for each pitch of the
  instrument file's ``pitches`` (one 堵 of 16: the twelve 律 and four 清聲),
  spread evenly along the rack in that order, member 0 (the lowest) at the
  north (or west) end, the head of a 南陳 line; ``member_for(pitch)`` finds
  the one that sounds a pitch. Drum bodies lie along the normal of the struck
  face.

A user's ``[layout."<id>"]`` overrides (site.layout_overrides) move one entry
after all the others are placed, so nothing else moves with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from soundscape.errors import SiteError, TuningError
from soundscape.geometry import Vec3
from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import parse_name
from soundscape.performance import Source
from soundscape.site.courtyard import COMPASS, Site, compass

__all__ = ["RELATIONS", "PlacedInstrument", "place", "sources"]


RELATIONS = ("east_of", "west_of", "north_of", "south_of", "between", "on")
_DIRECTION = {"east_of": "east", "west_of": "west", "north_of": "north", "south_of": "south"}
_OPPOSITE = {"east_of": "west_of", "west_of": "east_of",
             "north_of": "south_of", "south_of": "north_of"}
_TOUCH = 1e-6  # metres: footprints closer than this overlap


@dataclass(frozen=True, slots=True)
class PlacedInstrument:
    """One rack, drum or set of pipes standing in the courtyard.

    Attributes
    ----------
    id : str
        The layout id (``east.shengqing``).
    name : str
        Chinese display name, with its group (``東縣 笙磬``).
    roman : str
        Romanised label: the layout id with spaces (``east shengqing``).
    instrument : str
        Instrument file id (``bianqing``, ``jiangu`` …).
    group : str
    position : Vec3, metres
        The middle of the rack or drum body at its sounding height.
    facing : Vec3
        Unit vector of its front (the players' side).
    struck_face : Vec3 or None
        Outward unit normal of the struck face (drums), else None.
    axis : Vec3
        Unit vector along the rack (from member 0 on) or the drum body.
    length, depth : float, metres
        Extent along and across ``axis``.
    members : tuple of Vec3
        Where each bell or stone hangs (one entry for single instruments).
    kind : str
        ``rack``, ``drum`` or ``thing``.
    relation : str
        The cue sheet's relation word (``east_of`` … ``on``).
    basis : str
        How it was placed (the relation, or the override that moved it).
    quote : str
        The passage of the 設樂 that places it.
    pitches : tuple of str
        The 律 name each member sounds, in member order (empty for an
        instrument without a pitch set: a drum, the 鑮, the pipes).
    """

    id: str
    name: str
    roman: str
    instrument: str
    group: str
    position: Vec3
    facing: Vec3
    struck_face: Vec3 | None
    axis: Vec3
    length: float
    depth: float
    members: tuple[Vec3, ...]
    kind: str
    relation: str
    basis: str
    quote: str = ""
    pitches: tuple[str, ...] = ()

    def member_for(self, pitch_name: str) -> Vec3:
        """Where the bell or stone that sounds ``pitch_name`` hangs, metres.

        Parameters
        ----------
        pitch_name : str
            A 律 name with its octave prefix (``清黃鍾``); variant spellings are
            accepted (``清黄钟``, ``清黃``).

        Returns
        -------
        Vec3
            The member sounding that pitch; for an instrument without a pitch set
            (one body: the 鑮, a drum) its only member.

        Raises
        ------
        SiteError
            Naming the rack, the pitch and the rack's pitches, when no member
            sounds it.
        """
        if not self.pitches:
            return self.members[0]
        wanted = _pitch_key(pitch_name)
        for name, where in zip(self.pitches, self.members, strict=True):
            if wanted is not None and _pitch_key(name) == wanted:
                return where
        raise SiteError(f"layout {self.id!r} ({self.name}): no bell or stone sounds "
                        f"{pitch_name!r}; its pitches (`pitches` of the instrument file "
                        f"{self.instrument}.toml): {', '.join(self.pitches)}")

    def member_position(self, index: int) -> Vec3:
        """Where bell or stone ``index`` (0 = the north or west end) hangs, metres."""
        if not 0 <= index < len(self.members):
            raise SiteError(f"layout {self.id!r}: member {index} out of range "
                            f"0..{len(self.members) - 1}")
        return self.members[index]

    @property
    def half_extent(self) -> tuple[float, float]:
        """Half the east-west and north-south size of its footprint, metres."""
        return _half_extent(self.axis, self.length, self.depth)

    def to_source(self) -> Source:
        """The ``performance.Source`` the sequencer and renderers use."""
        return Source(id=self.id, instrument=self.instrument, name=self.name, roman=self.roman,
                      group=self.group, position=self.position, facing=self.facing,
                      struck_face=self.struck_face, cue=self.id)


def sources(placed: Mapping[str, PlacedInstrument]) -> dict[str, Source]:
    """``Source`` objects for every placed instrument, by id."""
    return {id_: item.to_source() for id_, item in placed.items()}


def place(layout: Iterable[Any], site: Site) -> dict[str, PlacedInstrument]:
    """Place every layout entry on ``site``.

    Parameters
    ----------
    layout : iterable of layout entries
        Objects with ``id``, ``name``, ``instrument``, ``group``, ``relation``,
        ``of`` and optional ``side``, ``facing``, ``struck_face``, ``quote``
        (``soundscape.cuesheet.LayoutItem`` or anything shaped like it).
    site : Site
        Places, spacings, instrument sizes and the user's layout overrides.

    Returns
    -------
    dict
        Layout id → PlacedInstrument, in the layout's order.

    Raises
    ------
    SiteError
        Unknown relation, anchor or instrument; a loop of anchors; an override
        naming no entry; an instrument inside the hall platform, outside the
        walls, or overlapping another instrument or a stair.
    """
    entries = {entry.id: entry for entry in layout}
    _check_entries(entries, site)
    placed: dict[str, PlacedInstrument] = {}
    for id_ in _order(entries):
        placed[id_] = _place_one(entries[id_], entries, placed, site)
    for id_, move in site.layout_overrides.items():
        placed[id_] = _apply_override(placed[id_], move)
    _check_positions(placed, site)
    return {id_: placed[id_] for id_ in entries}


# Checks and order ----------------------------------------------------------

def _anchors(entry: Any) -> tuple[str, ...]:
    return tuple(entry.of) if isinstance(entry.of, list | tuple) else (entry.of,)


def _check_entries(entries: Mapping[str, Any], site: Site) -> None:
    for id_, entry in entries.items():
        key = f"layout {id_!r}"
        if entry.relation not in RELATIONS:
            raise SiteError(f"{key}: relation {entry.relation!r}, accepted: {', '.join(RELATIONS)}")
        anchors = _anchors(entry)
        if len(anchors) != (2 if entry.relation == "between" else 1):
            raise SiteError(f"{key}: of={entry.of!r}: 'between' needs two ids, others one")
        for anchor in anchors:
            if anchor not in entries and anchor not in site.places:
                raise SiteError(f"{key}: of={anchor!r} is neither a layout id nor a place id")
        if entry.instrument not in site.instruments:
            raise SiteError(f"{key}: instrument {entry.instrument!r} has no size in the site "
                            f"data; known: {', '.join(site.instruments)}")
        if entry.relation == "on" and not getattr(entry, "side", ""):
            raise SiteError(f"{key}: relation 'on' needs a side ({', '.join(COMPASS)})")
    for id_, move in site.layout_overrides.items():
        if id_ not in entries:
            raise SiteError(f"{move.source}: layout.{id_} names no layout entry; "
                            f"known: {', '.join(entries)}")


def _order(entries: Mapping[str, Any]) -> list[str]:
    """Entries after the entries they are measured from."""
    done: list[str] = []

    def visit(id_: str, chain: tuple[str, ...]) -> None:
        if id_ in done:
            return
        if id_ in chain:
            raise SiteError(f"layout {id_!r}: anchors loop: {' → '.join((*chain, id_))}")
        for anchor in _anchors(entries[id_]):
            if anchor in entries:
                visit(anchor, (*chain, id_))
        done.append(id_)

    for id_ in entries:
        visit(id_, ())
    return done


# Pitches -------------------------------------------------------------------

def _pitch_key(name: str) -> tuple[str, int] | None:
    """The canonical (律, octave) of a pitch name, or None when it names no pitch."""
    try:
        return parse_name(name)
    except TuningError:
        return None


# Geometry ------------------------------------------------------------------

def _half_extent(axis: Vec3, length: float, depth: float) -> tuple[float, float]:
    ax, ay = abs(axis[0]), abs(axis[1])
    return ax * length / 2 + ay * depth / 2, ay * length / 2 + ax * depth / 2


def _along(half: tuple[float, float], direction: Vec3) -> float:
    return abs(direction[0]) * half[0] + abs(direction[1]) * half[1]


def _word(entry: Any, name: str) -> str:
    return getattr(entry, name, "") or ""


def _orientation(entry: Any, entries: Mapping[str, Any], placed: Mapping[str, PlacedInstrument],
                 kind: str) -> tuple[Vec3, Vec3 | None, Vec3]:
    """Facing, struck-face normal and body axis of one entry."""
    key = f"layout {entry.id!r}"
    struck = compass(_word(entry, "struck_face"), key=f"{key}.struck_face") \
        if _word(entry, "struck_face") else None
    if _word(entry, "facing"):
        facing = compass(_word(entry, "facing"), key=f"{key}.facing")
    elif struck is not None:
        facing = struck
    elif entry.relation != "between" and _anchors(entry)[0] in placed:
        facing = placed[_anchors(entry)[0]].facing
    else:
        facing = COMPASS["north"]
    if kind == "drum" and struck is None:
        struck = facing
    return facing, struck, _axis(kind, facing, struck)


def _axis(kind: str, facing: Vec3, struck: Vec3 | None) -> Vec3:
    if kind == "drum":
        return struck if struck is not None else facing
    if kind == "rack":
        across = (facing[1], -facing[0], 0.0)  # perpendicular to the facing
        # member 0 at the north (or west) end: point the axis south (or east)
        if across[1] > 0 or (across[1] == 0 and across[0] < 0):
            across = (-across[0], -across[1], 0.0)
        return (across[0] + 0.0, across[1] + 0.0, 0.0)
    return facing


def _place_one(entry: Any, entries: Mapping[str, Any], placed: Mapping[str, PlacedInstrument],
               site: Site) -> PlacedInstrument:
    size = site.instruments[entry.instrument]
    facing, struck, axis = _orientation(entry, entries, placed, size.kind)
    half = _half_extent(axis, size.length, size.depth)
    gap = site.spacing["gap"]
    anchors = [_anchor(a, placed, site) for a in _anchors(entry)]
    if entry.relation == "between":
        (x0, y0), _ = anchors[0]
        (x1, y1), _ = anchors[1]
        x, y = (x0 + x1) / 2, (y0 + y1) / 2
        basis = f"between {' and '.join(_anchors(entry))}"
    else:
        side = _DIRECTION.get(entry.relation) or _word(entry, "side")
        direction = compass(side, key=f"layout {entry.id!r}.side")
        (ax, ay), anchor_half = anchors[0]
        if entry.relation == "on":
            distance = (_along(anchor_half, direction) + site.spacing["lean"]
                        + _along(half, direction))
        else:
            distance = (_along(anchor_half, direction) + gap
                        + _room_between(entry, entries, site, direction)
                        + _along(half, direction))
        x, y = ax + direction[0] * distance, ay + direction[1] * distance
        basis = f"{entry.relation} {entry.of}"
        if entry.relation == "on":
            basis += f" ({side} side)"
    clearance = -site.spacing["hall_clearance"] - half[1]
    if y > clearance:
        y = clearance
        basis += ", kept clear of the hall"
    return _placed(entry, site, (x, y, size.height), facing, struck, axis, basis)


def _anchor(id_: str, placed: Mapping[str, PlacedInstrument],
            site: Site) -> tuple[tuple[float, float], tuple[float, float]]:
    """Centre (x, y) and half-extent (east-west, north-south) of a layout entry or place."""
    if id_ in placed:
        item = placed[id_]
        return item.position[:2], item.half_extent
    spot = site.place_info(id_)
    size = spot.size or (0.0, 0.0)
    return spot.position[:2], (size[0] / 2, size[1] / 2)


def _room_between(entry: Any, entries: Mapping[str, Any], site: Site, direction: Vec3) -> float:
    """Room for the entries the text puts between this one and its anchor."""
    room = 0.0
    for other in entries.values():
        if other.of == entry.id and other.relation == _OPPOSITE.get(entry.relation):
            size = site.instruments[other.instrument]
            kind_axis = _axis(size.kind, *_orientation(other, entries, {}, size.kind)[:2])
            room += 2 * _along(_half_extent(kind_axis, size.length, size.depth), direction)
            room += site.spacing["gap"]
    return room


def _placed(entry: Any, site: Site, position: Vec3, facing: Vec3, struck: Vec3 | None,
            axis: Vec3, basis: str) -> PlacedInstrument:
    size = site.instruments[entry.instrument]
    # 東縣/西縣 name a side's hanging set; one hung between the steps is on neither side
    # (鄉飲酒's 磬階間: 大夫而特縣)
    prefix = "" if entry.relation == "between" else site.group_names.get(entry.group, "")
    pitches = load_instrument(entry.instrument).pitches if size.kind == "rack" else ()
    return PlacedInstrument(
        id=entry.id, name=f"{prefix} {entry.name}".strip(), roman=entry.id.replace(".", " "),
        instrument=entry.instrument, group=entry.group, position=position, facing=facing,
        struck_face=struck, axis=axis, length=size.length, depth=size.depth,
        members=_members(position, axis, size.length, len(pitches) or 1), kind=size.kind,
        relation=entry.relation, basis=basis, quote=getattr(entry, "quote", "") or "",
        pitches=pitches)


def _members(centre: Vec3, axis: Vec3, length: float, count: int) -> tuple[Vec3, ...]:
    """Evenly spaced hanging points, member 0 at the start of ``axis``."""
    out = []
    for index in range(count):
        offset = ((index + 0.5) / count - 0.5) * length
        out.append((centre[0] + axis[0] * offset, centre[1] + axis[1] * offset, centre[2]))
    return tuple(out)


def _apply_override(item: PlacedInstrument, move: Any) -> PlacedInstrument:
    position = tuple(move.absolute.get(axis, item.position[i]) + move.shift[i]
                     for i, axis in enumerate("xyz"))
    facing, struck = item.facing, item.struck_face
    key = f"{move.source}: layout.{item.id}"
    if move.facing:
        facing = compass(move.facing, key=f"{key}.facing")
        if item.kind == "drum" and not move.struck_face:
            struck = facing
    if move.struck_face:
        struck = compass(move.struck_face, key=f"{key}.struck_face")
    axis = _axis(item.kind, facing, struck)
    return PlacedInstrument(
        item.id, item.name, item.roman, item.instrument, item.group, position, facing, struck,
        axis, item.length, item.depth, _members(position, axis, item.length, len(item.members)),
        item.kind, item.relation, f"moved by {move.source}", item.quote, item.pitches)


def _check_positions(placed: Mapping[str, PlacedInstrument], site: Site) -> None:
    """Refuse instruments under the hall, outside the walls, or on top of each other."""
    blocks = [(f"place {spot.id!r}", spot.position[:2], (spot.size[0] / 2, spot.size[1] / 2))
              for spot in site.places.values() if spot.size and spot.position[2] == 0]
    moved_last = sorted(placed, key=lambda id_: id_ in site.layout_overrides)
    note = site.overrides_note()
    for id_ in moved_last:
        item = placed[id_]
        x, y, z = item.position
        move = site.layout_overrides.get(id_)
        key = f"{move.source}: layout.{id_}" if move else f"layout {id_!r}"
        where = f"({x:.2f}, {y:.2f}, {z:.2f}) m"
        if not all(math.isfinite(v) for v in item.position) or z < 0:
            raise SiteError(f"{key}: {where} is not a position above ground{note}")
        if not site.in_courtyard(x, y):
            raise SiteError(f"{key}: {where} is outside the courtyard walls{note}")
        if site.on_hall(x, y) and z < site.hall.height:
            raise SiteError(f"{key}: {where} is inside the hall platform{note}")
        for name, centre, half in blocks:
            if _overlap(item.position[:2], item.half_extent, centre, half):
                raise SiteError(f"{key}: {where} overlaps {name}{note}")
        blocks.append((f"layout {id_!r}", item.position[:2], item.half_extent))


def _overlap(c0: tuple[float, float], h0: tuple[float, float],
             c1: tuple[float, float], h1: tuple[float, float]) -> bool:
    return (abs(c0[0] - c1[0]) < h0[0] + h1[0] - _TOUCH
            and abs(c0[1] - c1[1]) < h0[1] + h1[1] - _TOUCH)
