"""ADM: the rite's sources as audio objects, their metadata (ITU-R BS.2076) and the chunks of an
ADM BWF (ITU-R BS.2088 / EBU Tech 3285 ``bext``, BS.2076 ``axml`` and ``chna``).

The plan (``plan_objects``) turns a Performance heard by a standing listener into
``AdmObject``s: one per placed source that sounds. When there would be more than the limits
(``MAX_OBJECTS`` objects, ``MAX_CHANNELS`` − the bed's channels), some sources take turns
on shared objects (``AdmTurn``): each object carries one source at a time, from the start of
its stretch of sound to its end, and is handed to another no sooner than its notes have
rung out (its instrument's ``ring_s`` and ``HANDOVER_S``; else ``TURN_GAP_S``), its blocks
moving it to each source's place as its turn begins, so every sound keeps its own place.
The walkers go first (their steps, robes and words), then the standing sources heard
least: the fewest that fit. Only when sources sounding at once are more than the limits do
the walkers take turns (with the standing sources that fit their gaps) and the standing
sources left merge with their nearest neighbour until they fit, each merged object naming
its members.

The listener's frame: azimuth 0 is the listener place's facing, positive to the left,
elevation up (docs/architecture.md, which is also ADM's polar convention); distance is
normalised by ``MAX_DISTANCE_M`` (the loudspeakers' radius) and clipped at 1: see there.

Positions over time: a block per move of the source (``Source.moves``) and per event whose own
position (a walker's step) lies more than ``MOVE_M`` from where the object stands; a rack's
members (within a metre or two of it) stay on the rack's place. Each block jumps to its place
(``jumpPosition``, interpolation 0), as the renderer's sources do.

``chunks`` gives the bytes: ``bext`` (description, originator ``soundscape``, a date and time
from ``SOURCE_DATE_EPOCH`` or the epoch, never the wall clock, so same inputs give same bytes;
time reference: where the part starts on the whole rite's clock), ``chna`` and ``axml``.

Two shapes of master (``PROFILES``). ``ebu`` (``render --layout adm``): polar positions in the
listener's frame and a third-order AmbiX bed, for any BS.2076 renderer (EBU ``ear``, IEM,
SPAT). ``dolby`` (``render --layout atmos``): the Dolby Atmos Master ADM Profile v1.0 (Dolby
Laboratories, 22 July 2019), which Dolby's tools ingest: beds only on its room-centric
channels (here 7.0.2, its tables 8, 10 and 16) and objects only in Cartesian room coordinates
(its table 11), each polar place mapped by ITU-R BS.2127-0 §10 (``room_position``); every
object block timed, its first jump at once and the later ones over 250 samples; objects
numbered from ``AO_100B`` (its table 17); ``dialogue`` 2 in every audioContent (table 20);
stream formats naming their pack (table 5). HOA is not among its types.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import math
import os
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from soundscape.errors import InstrumentError, RenderError
from soundscape.music.instruments import load_instrument
from soundscape.performance import Performance
from soundscape.site.listeners import Listener
from soundscape.sound.panning import Ambisonic, Panner, Vbap

__all__ = ["BED_INSTRUMENTS", "BED_ORDER", "DOLBY_BED", "DOLBY_LOUDEST_LUFS", "HANDOVER_S",
           "MASTER_LAYOUTS", "MAX_CHANNELS", "MAX_DISTANCE_M", "MAX_OBJECTS", "MOVE_M",
           "PROFILES", "TURN_GAP_S", "AdmBlock", "AdmObject", "AdmTurn", "SourceGroup", "axml",
           "bed_channels", "bed_panner", "bed_tracks", "bext", "carrier", "check_target",
           "chna", "group_bed", "group_name", "group_places", "group_sources", "hoa_channels",
           "plan_objects", "room_position", "source_tracks"]

#: Dolby Atmos ADM BWF limits (Dolby Atmos Master ADM Profile): channels and objects.
MAX_CHANNELS = 128
MAX_OBJECTS = 118
#: The courtyard's ambience goes in a third-order AmbiX bed, not in objects.
BED_INSTRUMENTS = ("ambience",)
BED_ORDER = 3
#: Distance 1 in the file (the loudspeakers' radius; ``absoluteDistance`` of every pack). A
#: BS.2127 renderer widens a source nearer than 1 over the listener ("distance-based extent":
#: EBU ``ear`` played a source at 30°, distance 0.05, loudest in the surrounds), so sources
#: farther than this are points on the array, their distance in their level and delay, and
#: only one nearer than 2 m, around the listener as in the court, spreads. Metres per block in
#: the ``.adm.json``.
MAX_DISTANCE_M = 2.0
#: An event's own position farther than this from the object's place moves the object.
MOVE_M = 2.5
#: An object carrying sources in turn is handed to the next no sooner than this after its
#: source's last event ends, and a source's sound falls into stretches (turns) where it is
#: silent this long, where its instrument gives no ``ring_s``: its notes have rung out by
#: then (the 鑮's notes, the longest, end at most 10.3 s after their events: the first 40
#: strokes of the bundled 大射, measured) and reached the listener.
TURN_GAP_S = 20.0
#: Where the instrument gives its ``ring_s``, the gap is that and this: the sound crosses
#: the court (140 m) in under half a second.
HANDOVER_S = 1.0
#: The masters' ``--layout`` names and their shapes (see the module): an EBU master and a
#: Dolby Atmos master.
MASTER_LAYOUTS = {"adm": "ebu", "atmos": "dolby"}
PROFILES = tuple(MASTER_LAYOUTS.values())
#: The Dolby master's bed: Dolby's 7.0.2 channels (the profile's table 16; no LFE: nothing in
#: the rite is sent to one), each its speaker label, channel name and room position (tables
#: 8 and 10: X right, Y front, Z up), then where the render pans to it: that position in polar
#: as ITU-R BS.2127-0 §10 maps it (``room_position``'s inverse), the mapping every object's
#: place goes through, so a wall's echo in the bed and an object heard from that wall meet.
DOLBY_BED = (
    ("RC_L", "RoomCentricLeft", (-1, 1, 0), (30.0, 0.0)),
    ("RC_R", "RoomCentricRight", (1, 1, 0), (-30.0, 0.0)),
    ("RC_C", "RoomCentricCenter", (0, 1, 0), (0.0, 0.0)),
    ("RC_Lss", "RoomCentricLeftSideSurround", (-1, 0, 0), (70.0, 0.0)),
    ("RC_Rss", "RoomCentricRightSideSurround", (1, 0, 0), (-70.0, 0.0)),
    ("RC_Lrs", "RoomCentricLeftRearSurround", (-1, -1, 0), (110.0, 0.0)),
    ("RC_Rrs", "RoomCentricRightRearSurround", (1, -1, 0), (-110.0, 0.0)),
    ("RC_Lts", "RoomCentricLeftTopSurround", (-1, 0, 1), (70.0, 30.0)),
    ("RC_Rts", "RoomCentricRightTopSurround", (1, 0, 1), (-70.0, 30.0)),
)
#: Dolby Atmos deliveries are this loud or quieter (Universal Music's Dolby Atmos asset
#: specification: integrated loudness at most -18.0 LKFS, true peak at most -1.0 dBTP).
DOLBY_LOUDEST_LUFS = -18.0
#: Dolby's objects are numbered from here (the profile's table 17: AO_1001 … AO_100A are beds').
_DOLBY_FIRST_OBJECT = 0x100B
#: A Dolby object's later blocks move over 250 samples at 48 kHz (the profile's table 11),
#: written as the profile writes it (MediaInfo's check takes no other spelling).
_DOLBY_MOVE = "0.005208"
PROGRAMME_NAME = "大射儀 The Great Archery Rite (Yili)"
OBJECTS_CONTENT = "禮樂之聲 The sounds of the rite (objects)"
BED_CONTENT = "庭之境 The courtyard's ambience (HOA bed)"
#: The objects' echoes (the court's early images, or without a court the hall front's) and
#: the court's late reverberation.
COURT_CONTENT = "庭之響 The court's echoes and reverberation (HOA bed)"
#: One bed for both (they share one frame and one HOA decoder: rendering their sum is the sum
#: of their renderings): 16 tracks, not 32, to meter, limit and write.
BED_AND_COURT_CONTENT = "庭之境・庭之響 Ambience, echoes and reverberation (HOA bed)"
#: Names longer than this draw a conformance warning ("is long") from MediaInfo's ADM checks
#: (MediaInfo 24.12; 64 characters, Chinese or Latin, pass): an object of many merged
#: sources is named for its first (its members in a comment and in ``.adm.json``).
MAX_NAME = 64


@dataclass(frozen=True, slots=True)
class AdmBlock:
    """An object's place from ``time`` (s) on: azimuth and elevation (degrees, listener's
    frame), distance (0–1 of ``MAX_DISTANCE_M``) and metres."""

    time: float
    azimuth: float
    elevation: float
    distance: float
    metres: float


@dataclass(frozen=True, slots=True)
class AdmTurn:
    """A source's stretch of sound on a shared object: from its first event's start to its
    last event's end (s)."""

    source: str
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class SourceGroup:
    """What one object (or one of the kit page's stems) carries: its sources, and when they
    take turns on it, their turns in time order (empty: its sources all along, one source
    or several merged)."""

    sources: tuple[str, ...]
    turns: tuple[AdmTurn, ...] = ()


@dataclass(frozen=True, slots=True)
class AdmObject:
    """One audio object: its number (1 …, its track), Chinese and English names, the sources
    it carries (more than one when grouped or shared), its blocks (the first at 0 s) and,
    when it is shared, its sources' turns in time order (empty: its sources all along)."""

    number: int
    name: str
    roman: str
    sources: tuple[str, ...]
    blocks: tuple[AdmBlock, ...]
    turns: tuple[AdmTurn, ...] = ()


def hoa_channels(order: int = BED_ORDER) -> int:
    return (order + 1) ** 2


def check_target(profile: str, target_lufs: float) -> None:
    """Refuse a Dolby master louder than Dolby Atmos deliveries may be."""
    if profile == "dolby" and target_lufs > DOLBY_LOUDEST_LUFS:
        raise RenderError(f"--layout atmos: --target {target_lufs:g} LUFS, accepted: "
                          f"{DOLBY_LOUDEST_LUFS:g} or quieter (Dolby Atmos deliveries)")


def bed_channels(profile: str = "ebu") -> int:
    """The bed's tracks in a master of ``profile``: 16 (AmbiX order 3) or 9 (Dolby's 7.0.2)."""
    return len(DOLBY_BED) if profile == "dolby" else hoa_channels()


def bed_panner(profile: str = "ebu") -> Panner:
    """How the bed is rendered: third-order AmbiX, or VBAP over Dolby's 7.0.2 channels at
    their BS.2127 directions (``DOLBY_BED``)."""
    if profile != "dolby":
        return Ambisonic(BED_ORDER)
    return Vbap(tuple(az for *_, (az, _) in DOLBY_BED), tuple(c[0] for c in DOLBY_BED),
                elevations_deg=tuple(el for *_, (_, el) in DOLBY_BED))


#: ITU-R BS.2127-0 §10: the azimuths of a 0+5+0 layout and the room's points they map to
#: (X, Y), anticlockwise; between two, the place follows a constant-power pan of the pair.
_SECTORS = ((0.0, (0.0, 1.0)), (30.0, (-1.0, 1.0)), (110.0, (-1.0, -1.0)),
            (250.0, (1.0, -1.0)), (330.0, (1.0, 1.0)), (360.0, (0.0, 1.0)))
#: Elevation of the top layer, and where BS.2127 puts it in the room (45°: Z = 1 at the wall).
_EL_TOP, _EL_TOP_ROOM = 30.0, 45.0


def room_position(azimuth: float, elevation: float, distance: float
                  ) -> tuple[float, float, float]:
    """A polar position (degrees, positive left and up; distance 0–1) as ITU-R BS.2127-0 §10
    places it in the Cartesian room (X right, Y front, Z up; the walls at ±1): what a Dolby
    master's objects carry."""
    if abs(elevation) > _EL_TOP:
        room_el = _EL_TOP_ROOM + (90 - _EL_TOP_ROOM) * (abs(elevation) - _EL_TOP) / (90 - _EL_TOP)
        z = math.copysign(distance, elevation)
        across = distance * math.tan(math.radians(90 - room_el))
    else:
        z = distance * math.tan(math.radians(_EL_TOP_ROOM * elevation / _EL_TOP))
        across = distance
    az = azimuth % 360.0
    k = next(i for i in range(len(_SECTORS) - 1) if az <= _SECTORS[i + 1][0])
    (right_az, right), (left_az, left) = _SECTORS[k], _SECTORS[k + 1]
    half = (left_az - right_az) / 2
    toward_left = 0.5 + 0.5 * math.tan(math.radians(az - right_az - half)) / math.tan(
        math.radians(half))
    share = math.atan2(toward_left, 1 - toward_left) * 2 / math.pi
    x, y = (across * (r + (le - r) * share) for r, le in zip(right, left, strict=True))
    return x, y, z


def plan_objects(performance: Performance, listener: Listener, *,
                 max_objects: int = MAX_OBJECTS,
                 max_channels: int = MAX_CHANNELS - hoa_channels()) -> tuple[AdmObject, ...]:
    """The objects of ``performance`` heard by ``listener`` (see the module)."""
    if not isinstance(listener, Listener):
        raise RenderError("layout adm: objects are placed in a standing listener's frame; a "
                          "walking listener (--path) has none: give --listener")
    tracks = _tracks(performance)
    objects = []
    for number, group in enumerate(group_sources(performance, min(max_objects, max_channels)),
                                   start=1):
        named = [performance.sources[sid] for sid in group.sources]
        objects.append(AdmObject(number, group_name(group, [s.name for s in named]),
                                 group_name(group, [s.roman for s in named]), group.sources,
                                 _blocks(group_places(group, tracks), listener), group.turns))
    return tuple(objects)


def group_name(group: SourceGroup, names: list[str]) -> str:
    """A group's name from its sources' (``names``, in its order): ``a + b`` merged; ``a /
    b`` in turn, or past ``MAX_NAME`` ``a / 37 more`` (dozens may take turns on one; each
    is in ``sources`` and ``turns``)."""
    if not group.turns:
        return " + ".join(names)
    joined = " / ".join(names)
    return joined if len(joined) <= MAX_NAME else f"{names[0]} / {len(names) - 1} more"


def group_places(group: SourceGroup, tracks: dict) -> list[tuple[float, tuple]]:
    """Where a group stands over time, (time, point) from 0 s: its source's track; its
    members' centroid, merged; in turn, each turn's source where it is as the turn starts,
    then its moves within the turn."""
    if group.turns:
        return _turn_places(group.turns, tracks)
    if len(group.sources) == 1:
        return tracks[group.sources[0]]
    return [(0.0, _centroid([tracks[m][0][1] for m in group.sources]))]


def carrier(groups: Sequence[SourceGroup | AdmObject]) -> Callable[[str, float], int | None]:
    """(source, time of one of its events) → the index in ``groups`` of the one that
    carries it: the source's own or merged group, or the shared one whose turn the time
    falls in (None: none carries the source)."""
    own = {sid: k for k, group in enumerate(groups) if not group.turns for sid in group.sources}
    turns: dict[str, list[tuple[float, int]]] = {}
    for k, group in enumerate(groups):
        for turn in group.turns:
            turns.setdefault(turn.source, []).append((turn.start, k))
    for found in turns.values():
        found.sort()

    def carrying(source: str, time: float) -> int | None:
        if source not in turns:
            return own.get(source)
        found = turns[source]  # the turn of the stretch it falls in: the last begun
        return found[bisect.bisect_right(found, (time, math.inf)) - 1][1]
    return carrying


def _in_turn(performance: Performance, tracks: dict, sources: list[str],
             limit: int) -> tuple[list[str], list[list[AdmTurn]]]:
    """The sources that keep a group of their own (merged later if they must), and the
    shared groups' turns of the others (see the module). Sources go in turn walkers first,
    then the standing ones, each kind the least heard first, as few as fit ``limit``: each
    source added takes one group of its own away and adds at most one shared group (its
    stretches never overlap one another), so the count only falls as more go in turn, and
    the fewest are found by bisection. Where not even all in turn fit (too many sound at
    once), the walkers go in turn (they cannot merge) and with them each standing source
    that fits the gaps they leave without another shared group; the standing ones left
    are merged, the nearest first."""
    gaps = {sid: _gap(performance.sources[sid].instrument) for sid in sources}
    stretches = _stretches(performance, gaps)
    # seconds heard to the microsecond: sums of float times differ in their last bits
    heard = {sid: round(sum(end - start for start, end in stretches[sid]), 6)
             for sid in sources}
    order = sorted(sources, key=lambda sid: (len(tracks[sid]) == 1, heard[sid], sid))

    def shared(pool: Sequence[str]) -> list[list[AdmTurn]]:
        return _taken_in_turn([AdmTurn(sid, start, end) for sid in pool
                               for start, end in stretches[sid]], gaps)

    if len(shared(order)) > limit:
        # the walkers (who cannot merge), and each standing source that fits the gaps
        # their shared groups leave: no group more; the rest merge
        pool = [sid for sid in order if len(tracks[sid]) > 1]
        count = len(shared(pool))
        for sid in order[len(pool):]:
            if len(shared([*pool, sid])) == count:
                pool.append(sid)
    else:
        low, high = 1, len(order)  # over the limit with none in turn; within it with all
        while low < high:
            middle = (low + high) // 2
            if len(sources) - middle + len(shared(order[:middle])) <= limit:
                high = middle
            else:
                low = middle + 1
        pool = order[:low]
    in_turn = set(pool)
    return [sid for sid in sources if sid not in in_turn], shared(pool)


@functools.cache
def _gap(instrument: str) -> float:
    """Seconds after a source's last event that its shared object waits before it takes
    another's sound: its instrument's ``ring_s`` and ``HANDOVER_S``, else ``TURN_GAP_S`` (an
    instrument not bundled, or one whose ring is not measured)."""
    try:
        ring = load_instrument(instrument).ring_s
    except InstrumentError:
        return TURN_GAP_S
    return TURN_GAP_S if ring is None else ring + HANDOVER_S


def _stretches(performance: Performance, gaps: dict[str, float]) -> dict[str, list[tuple]]:
    """Each source of ``gaps``' stretches of sound, (start, end) s in time order: its events
    split where it is silent for longer than its gap."""
    found: dict[str, list[list[float]]] = {}
    for event in performance.events:  # in time order
        gap = gaps.get(event.source)
        if gap is None:
            continue
        own = found.setdefault(event.source, [])
        end = event.time + event.duration
        if own and event.time <= own[-1][1] + gap:
            own[-1][1] = max(own[-1][1], end)
        else:
            own.append([event.time, end])
    return {sid: [(start, end) for start, end in own] for sid, own in found.items()}


def _taken_in_turn(turns: list[AdmTurn], gaps: dict[str, float]) -> list[list[AdmTurn]]:
    """``turns`` shared out among the fewest objects, each free its source's gap (``gaps``)
    after its last turn ends (in order of their starts, each takes a free object, or a new
    one when none is: the most that sound at once, which no sharing can undercut), a source
    going back to the object it last had when that one is free (fewer moves), else to the
    free object of the lowest number; deterministic."""
    objects: list[list[AdmTurn]] = []
    busy: list[tuple[float, int]] = []  # (free from, object)
    free: list[int] = []  # sorted
    last: dict[str, int] = {}
    for turn in sorted(turns, key=lambda turn: (turn.start, turn.source)):
        while busy and busy[0][0] <= turn.start:
            bisect.insort(free, heapq.heappop(busy)[1])
        again = last.get(turn.source)
        if again is not None and again in free:
            free.remove(again)
            taken = again
        elif free:
            taken = free.pop(0)
        else:
            taken = len(objects)
            objects.append([])
        objects[taken].append(turn)
        last[turn.source] = taken
        heapq.heappush(busy, (turn.end + gaps[turn.source], taken))
    return objects


def _turn_places(turns: Sequence[AdmTurn], tracks: dict) -> list[tuple[float, tuple]]:
    """A shared group's places (``group_places``); the first from 0 s."""
    places: list[tuple[float, tuple]] = []
    for turn in turns:
        track = tracks[turn.source]
        # where it stands as its turn starts (a track begins at 0 s)
        places.append((turn.start, next(point for when, point in reversed(track)
                                        if when <= turn.start)))
        places.extend((when, point) for when, point in track
                      if turn.start < when <= turn.end)
    return [(0.0, places[0][1]), *places[1:]]


def source_tracks(performance: Performance) -> dict[str, list[tuple[float, tuple]]]:
    """Each sounding source's places in metres: (time, point) from 0 s, a new one per move
    or far step (the objects' blocks, before the listener's frame; the kit page's stems)."""
    return _tracks(performance)


def group_sources(performance: Performance, limit: int,
                  what: str = "layout adm") -> list[SourceGroup]:
    """The sounding sources other than the bed in at most ``limit`` groups, as the objects
    are (see the module): one each; past the limit, turns on shared ones; where too many
    sound at once for that, the walkers in turn (with the standing sources that fit their
    gaps) and the other standing ones merged, the nearest first.
    ``what`` the groups are for, in the error where the walkers alone need them all."""
    tracks = _tracks(performance)
    sources = [sid for sid in sorted(tracks) if not _is_bed(performance, sid)]
    own, shared = (_in_turn(performance, tracks, sources, limit) if len(sources) > limit
                   else (sources, []))
    if len(shared) + bool(own) > limit:
        raise RenderError(
            f"{what}: its walkers' sounds need {len(shared)} objects at once (too close in "
            f"time to take turns), and its standing sources one at least: more than the "
            f"{limit} it may hold")
    merged = _group([[sid] for sid in own], tracks, limit - len(shared)) if own else []
    return [*(SourceGroup(tuple(members)) for members in merged),
            *(SourceGroup(tuple(dict.fromkeys(turn.source for turn in turns)), tuple(turns))
              for turns in shared)]


def group_bed(performance: Performance, limit: int) -> list[SourceGroup]:
    """The sounding sources of the bed (the courtyard's ambience, standing), the nearest
    merged to at most ``limit`` groups (the kit page's ambience stems)."""
    tracks = _tracks(performance)
    return [SourceGroup(tuple(members)) for members in
            _group([[sid] for sid in sorted(tracks) if _is_bed(performance, sid)], tracks,
                   limit)]


def _is_bed(performance: Performance, source_id: str) -> bool:
    return performance.sources[source_id].instrument in BED_INSTRUMENTS


def _tracks(performance: Performance) -> dict[str, list[tuple[float, tuple]]]:
    """Each sounding source's places: (time, point) from 0 s, a new one per move or far step
    (a "move" to where it stands is none: a kit programme's cuts give every source one at
    each join, and those made the whole orchestra of ``music`` walkers)."""
    tracks: dict[str, list[tuple[float, tuple]]] = {}
    moves = {sid: list(s.moves) for sid, s in performance.sources.items()}
    for event in performance.events:
        source = performance.sources[event.source]
        track = tracks.setdefault(event.source, [(0.0, tuple(source.position))])
        while moves[event.source] and moves[event.source][0][0] <= event.time:
            _moved(track, *moves[event.source].pop(0))
        if event.position is not None and _distance(event.position, track[-1][1]) > MOVE_M:
            track.append((event.time, tuple(event.position)))
    for sid, track in tracks.items():  # moves after the last event still move the object
        for when, point in moves[sid]:
            _moved(track, when, point)
    return tracks


def _moved(track: list[tuple[float, tuple]], when: float, point: Sequence[float]) -> None:
    """``track`` goes on to ``point`` at ``when`` (not before its last place), if it is not
    there already."""
    if tuple(point) != track[-1][1]:
        track.append((max(when, track[-1][0]), tuple(point)))


def _group(groups: list[list[str]], tracks: dict, limit: int) -> list[list[str]]:
    """Merge the two nearest groups of standing sources until ``limit`` (≥ 1) remain
    (deterministic: ties go to the first pair in id order)."""
    while len(groups) > limit:
        _, i, j = min((_distance(_centroid([tracks[s][0][1] for s in groups[i]]),
                                 _centroid([tracks[s][0][1] for s in groups[j]])), i, j)
                      for i in range(len(groups)) for j in range(i + 1, len(groups)))
        groups[i] = groups[i] + groups[j]
        del groups[j]
    return groups


def _blocks(places: list[tuple[float, tuple]], listener: Listener) -> tuple[AdmBlock, ...]:
    blocks: list[AdmBlock] = []
    for when, point in places:
        azimuth, elevation, distance = listener.direction_to(point)
        block = AdmBlock(round(when, 5), round(float(azimuth), 3), round(float(elevation), 3),
                         round(min(1.0, float(distance) / MAX_DISTANCE_M), 5),
                         round(float(distance), 3))
        if blocks and block.time == blocks[-1].time:
            blocks[-1] = block
        elif not blocks or _place(block) != _place(blocks[-1]):
            blocks.append(block)
    return tuple(blocks)


def _place(block: AdmBlock) -> tuple[float, float, float]:
    return block.azimuth, block.elevation, block.distance


def _distance(a: Sequence[float], b: Sequence[float]) -> float:
    return math.dist(tuple(a), tuple(b))


def _centroid(points: list[tuple]) -> tuple:
    return tuple(sum(p[k] for p in points) / len(points) for k in range(3))


# ---- the chunks ----------------------------------------------------------------------------

def _time(seconds: float) -> str:
    """BS.2076 timecode hh:mm:ss.zzzzz."""
    total = round(seconds * 100000)
    hours, rest = divmod(total, 3600 * 100000)
    minutes, rest = divmod(rest, 60 * 100000)
    return f"{hours:02d}:{minutes:02d}:{rest // 100000:02d}.{rest % 100000:05d}"


def _object_id(number: int, profile: str) -> str:
    return f"AO_{(_DOLBY_FIRST_OBJECT - 1 if profile == 'dolby' else 0x1000) + number:04X}"


def _object_xml(obj: AdmObject, seconds: float, profile: str = "ebu") -> tuple[str, str, str]:
    """(audioObject, its formats, its track UID) elements."""
    n = obj.number
    pack, channel = f"AP_0003{0x1000 + n:04X}", f"AC_0003{0x1000 + n:04X}"
    stream, track, uid = f"AS_0003{0x1000 + n:04X}", f"AT_0003{0x1000 + n:04X}_01", \
        f"ATU_{n:08X}"
    label = _label(obj)
    members = "" if len(obj.sources) == 1 and not obj.turns else (
        f"<!-- in turn: {escape(', '.join(_turn_words(turn) for turn in obj.turns))} -->"
        if obj.turns else f"<!-- grouped: {escape(', '.join(obj.sources))} -->")
    blocks = []
    for k, block in enumerate(obj.blocks):
        end = obj.blocks[k + 1].time if k + 1 < len(obj.blocks) else seconds
        timing = (f' rtime="{_time(block.time)}" duration="{_time(max(0.0, end - block.time))}"'
                  if len(obj.blocks) > 1 or profile == "dolby" else "")
        blocks.append(
            f'<audioBlockFormat audioBlockFormatID="AB_0003{0x1000 + n:04X}_{k + 1:08X}"'
            f'{timing}>{_position_xml(block, profile)}<jumpPosition interpolationLength='
            f'"{_DOLBY_MOVE if profile == "dolby" and k else 0}">1</jumpPosition>'
            f'</audioBlockFormat>')
    obj_xml = (f'<audioObject audioObjectID="{_object_id(n, profile)}" audioObjectName='
               f'{quoteattr(label)} start="00:00:00.00000" duration="{_time(seconds)}">'
               f'{members}<audioPackFormatIDRef>{pack}</audioPackFormatIDRef>'
               f'<audioTrackUIDRef>{uid}</audioTrackUIDRef></audioObject>')
    distance = "" if profile == "dolby" else f' absoluteDistance="{MAX_DISTANCE_M:g}"'
    formats = (
        f'<audioPackFormat audioPackFormatID="{pack}" audioPackFormatName={quoteattr(label)} '
        f'typeLabel="0003" typeDefinition="Objects"{distance}>'
        f'<audioChannelFormatIDRef>{channel}'
        f'</audioChannelFormatIDRef></audioPackFormat>'
        f'<audioChannelFormat audioChannelFormatID="{channel}" audioChannelFormatName='
        f'{quoteattr(label)} typeLabel="0003" typeDefinition="Objects">{"".join(blocks)}'
        f'</audioChannelFormat>'
        + _stream_xml(stream, channel, track, label, pack if profile == "dolby" else None))
    return obj_xml, formats, _uid_xml(uid, track, pack)


def _label(obj: AdmObject) -> str:
    """The object's name in the file, "Chinese | English", at most ``MAX_NAME`` long."""
    label = f"{obj.name} | {obj.roman}"
    if len(label) <= MAX_NAME:
        return label
    joined = " / " if obj.turns else " + "  # in turn, or merged
    first = obj.name.split(joined)[0], obj.roman.split(joined)[0]
    more = f"{joined}{len(obj.sources) - 1} more"
    label = f"{first[0]}{more} | {first[1]}{more}"
    return label if len(label) <= MAX_NAME else label[:MAX_NAME - 1] + "…"


def _turn_words(turn: AdmTurn) -> str:
    """A turn as the object's comment lists it: its source, from when to when."""
    return f"{turn.source} {_time(turn.start)}–{_time(turn.end)}"


def _position_xml(block: AdmBlock, profile: str) -> str:
    """A block's place: polar in the listener's frame, or (Dolby) Cartesian in the room."""
    if profile != "dolby":
        return (f'<position coordinate="azimuth">{block.azimuth:g}</position>'
                f'<position coordinate="elevation">{block.elevation:g}</position>'
                f'<position coordinate="distance">{block.distance:g}</position>')
    x, y, z = room_position(block.azimuth, block.elevation, block.distance)
    return "<cartesian>1</cartesian>" + "".join(
        f'<position coordinate="{axis}">{round(value, 5) + 0.0:.5f}</position>'
        for axis, value in zip("XYZ", (x, y, z), strict=True))


def _stream_xml(stream: str, channel: str, track: str, label: str,
                pack: str | None = None) -> str:
    """A track's stream and track formats; ``pack``: the stream names its pack too (Dolby's
    profile asks it, table 5; BS.2076-2 forbids it for PCM, and EBU ``ear`` refuses it)."""
    named = "" if pack is None else f"<audioPackFormatIDRef>{pack}</audioPackFormatIDRef>"
    return (f'<audioStreamFormat audioStreamFormatID="{stream}" audioStreamFormatName='
            f'{quoteattr(label)} formatLabel="0001" formatDefinition="PCM">'
            f'<audioChannelFormatIDRef>{channel}</audioChannelFormatIDRef>{named}'
            f'<audioTrackFormatIDRef>{track}</audioTrackFormatIDRef></audioStreamFormat>'
            f'<audioTrackFormat audioTrackFormatID="{track}" audioTrackFormatName='
            f'{quoteattr(label)} formatLabel="0001" formatDefinition="PCM">'
            f'<audioStreamFormatIDRef>{stream}</audioStreamFormatIDRef></audioTrackFormat>')


def _uid_xml(uid: str, track: str, pack: str, sample_rate: int = 48000) -> str:
    return (f'<audioTrackUID UID="{uid}" sampleRate="{sample_rate}" bitDepth="24">'
            f'<audioTrackFormatIDRef>{track}</audioTrackFormatIDRef>'
            f'<audioPackFormatIDRef>{pack}</audioPackFormatIDRef></audioTrackUID>')


def _hoa_formats() -> str:
    """The AmbiX pack (ACN order, SN3D): ``hoa_channels()`` channels, shared by the beds."""
    pack = "AP_00041001"
    channels, formats = [], []
    for acn in range(hoa_channels()):
        order = math.isqrt(acn)
        degree = acn - order * order - order
        channel, stream = f"AC_0004{0x1001 + acn:04X}", f"AS_0004{0x1001 + acn:04X}"
        track, label = f"AT_0004{0x1001 + acn:04X}_01", f"ACN{acn}"
        channels.append(f"<audioChannelFormatIDRef>{channel}</audioChannelFormatIDRef>")
        formats.append(
            f'<audioChannelFormat audioChannelFormatID="{channel}" audioChannelFormatName='
            f'"{label}" typeLabel="0004" typeDefinition="HOA"><audioBlockFormat '
            f'audioBlockFormatID="AB_0004{0x1001 + acn:04X}_00000001"><order>{order}</order>'
            f'<degree>{degree}</degree><normalization>SN3D</normalization></audioBlockFormat>'
            f'</audioChannelFormat>' + _stream_xml(stream, channel, track, label))
    return (f'<audioPackFormat audioPackFormatID="{pack}" audioPackFormatName='
            f'"AmbiX order {BED_ORDER}" typeLabel="0004" typeDefinition="HOA">'
            f'{"".join(channels)}</audioPackFormat>' + "".join(formats))


def _dolby_formats() -> str:
    """Dolby's 7.0.2 bed pack (``DOLBY_BED``): DirectSpeakers channels by speaker label and
    room position, each one block with no timing (the profile's tables 7–10)."""
    pack = _bed_pack("dolby")
    channels, formats = [], []
    for k, (label, name, (x, y, z), _) in enumerate(DOLBY_BED):
        channel, stream, track = (f"AC_0001{0x1001 + k:04X}", f"AS_0001{0x1001 + k:04X}",
                                  _bed_track(k, "dolby"))
        channels.append(f"<audioChannelFormatIDRef>{channel}</audioChannelFormatIDRef>")
        formats.append(
            f'<audioChannelFormat audioChannelFormatID="{channel}" audioChannelFormatName='
            f'"{name}" typeLabel="0001" typeDefinition="DirectSpeakers"><audioBlockFormat '
            f'audioBlockFormatID="AB_0001{0x1001 + k:04X}_00000001"><speakerLabel>{label}'
            f'</speakerLabel><cartesian>1</cartesian><position coordinate="X">{x}</position>'
            f'<position coordinate="Y">{y}</position><position coordinate="Z">{z}</position>'
            f'</audioBlockFormat></audioChannelFormat>'
            + _stream_xml(stream, channel, track, name, pack))
    return (f'<audioPackFormat audioPackFormatID="{pack}" audioPackFormatName="7.0.2" '
            f'typeLabel="0001" typeDefinition="DirectSpeakers">{"".join(channels)}'
            f'</audioPackFormat>' + "".join(formats))


def _bed_pack(profile: str) -> str:
    return "AP_00011001" if profile == "dolby" else "AP_00041001"


def _bed_track(k: int, profile: str) -> str:
    """The bed's ``k``-th track format."""
    return f"AT_000{1 if profile == 'dolby' else 4}{0x1001 + k:04X}_01"


def _bed_id(first_track: int, profile: str) -> str:
    return f"AO_{0x1001 if profile == 'dolby' else 0x1000 + first_track:04X}"


def _bed_xml(first_track: int, seconds: float, name: str, profile: str = "ebu"
             ) -> tuple[str, str]:
    """A bed named ``name`` on tracks ``first_track`` …: (its audioObject, its track UIDs).
    A Dolby master's bed is its first object, ``AO_1001``."""
    pack, count = _bed_pack(profile), bed_channels(profile)
    uids = "".join(_uid_xml(f"ATU_{first_track + k:08X}", _bed_track(k, profile), pack)
                   for k in range(count))
    obj = (f'<audioObject audioObjectID="{_bed_id(first_track, profile)}" audioObjectName='
           f'{quoteattr(name)} start="00:00:00.00000" duration="{_time(seconds)}">'
           f'<audioPackFormatIDRef>{pack}</audioPackFormatIDRef>'
           + "".join(f"<audioTrackUIDRef>ATU_{first_track + k:08X}</audioTrackUIDRef>"
                     for k in range(count)) + "</audioObject>")
    return obj, uids


def bed_tracks(objects: int, *, bed: bool, court: bool) -> dict[str, int]:
    """The first track (1 …) of the one bed, if any: the ambience's (``"bed"``), the
    court's echoes and reverberation (``"court"``; without a court, the hall front's echo) or
    the two mixed (``"both"``), after the objects."""
    key = "both" if bed and court else "bed" if bed else "court" if court else None
    return {} if key is None else {key: objects + 1}


def axml(objects: Sequence[AdmObject], *, bed: bool, seconds: float, court: bool = False,
         loudness_lufs: float | None = None, true_peak_dbtp: float | None = None,
         profile: str = "ebu") -> bytes:
    """The ``axml`` chunk's body: the EBU Core document holding the audioFormatExtended;
    ``court``: the court's echoes and reverberation in the bed (``ACO_1003`` alone, with the
    ambience ``ACO_1002``, named for both); ``profile``: one of ``PROFILES``."""
    parts = [_object_xml(obj, seconds, profile) for obj in objects]
    firsts = bed_tracks(len(objects), bed=bed, court=court)
    kind = "7.0.2 bed" if profile == "dolby" else "HOA bed"
    names = {"bed": ("ACO_1002", BED_CONTENT), "court": ("ACO_1003", COURT_CONTENT),
             "both": ("ACO_1002", BED_AND_COURT_CONTENT)}
    names = {key: (cid, name.replace("HOA bed", kind)) for key, (cid, name) in names.items()}
    beds = {key: _bed_xml(first, seconds, names[key][1], profile)
            for key, first in firsts.items()}
    contents = [("ACO_1001", OBJECTS_CONTENT, [_object_id(o.number, profile) for o in objects])]
    contents += [(*names[key], [_bed_id(first, profile)]) for key, first in firsts.items()]
    dolby = profile == "dolby"
    if dolby:  # its contents are numbered in order (ACO_1001 + i), its beds' with them
        contents = [(f"ACO_{0x1001 + k:04X}", name, refs)
                    for k, (_, name, refs) in enumerate(contents)]
    # Dolby's profile takes neither the loudness's method nor a content's language
    method = "" if dolby else ' loudnessMethod="ITU-R BS.1770"'
    language = "" if dolby else ' audioContentLanguage="zh"'
    loudness = "" if loudness_lufs is None else (
        f'<loudnessMetadata{method}><integratedLoudness>'
        f'{loudness_lufs:.1f}</integratedLoudness>'
        + ("" if true_peak_dbtp is None else f"<maxTruePeak>{true_peak_dbtp:.1f}</maxTruePeak>")
        + "</loudnessMetadata>")
    programme = (f'<audioProgramme audioProgrammeID="APR_1001" audioProgrammeName='
                 f'{quoteattr(PROGRAMME_NAME)} audioProgrammeLanguage="zh" '
                 f'start="00:00:00.00000" end="{_time(seconds)}">{loudness}'
                 + "".join(f"<audioContentIDRef>{c}</audioContentIDRef>" for c, _, _ in contents)
                 + "</audioProgramme>")
    # Dolby's profile: every content "mixed" (music, speech and the place), kind undefined
    dialogue = '<dialogue mixedContentKind="0">2</dialogue>' if dolby else ""
    content_xml = "".join(
        f'<audioContent audioContentID="{cid}" audioContentName={quoteattr(name)}{language}>'
        + "".join(f"<audioObjectIDRef>{o}</audioObjectIDRef>" for o in refs) + dialogue
        + "</audioContent>" for cid, name, refs in contents)
    frame = (f"<!-- listener frame: azimuth 0 = the listener place's facing, positive to the "
             f"left; elevation up; distance 1 = {MAX_DISTANCE_M:g} m. Objects carry the direct "
             f"sound at the listener (distance, air and floor applied). -->")
    if dolby:
        frame = frame.replace("-->", "Positions: that frame's polar places in the room by "
                              "ITU-R BS.2127-0 section 10 (X right, Y front, Z up). -->")
    bed_formats = "" if not beds else _dolby_formats() if profile == "dolby" else _hoa_formats()
    body = (programme + content_xml + "".join(p[0] for p in parts)
            + "".join(b[0] for b in beds.values()) + "".join(p[1] for p in parts)
            + bed_formats + "".join(p[2] for p in parts)
            + "".join(b[1] for b in beds.values()))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<ebuCoreMain xmlns="urn:ebu:metadata-schema:ebuCore_2016" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" xml:lang="en"><coreMetadata><format>'
            f'<audioFormatExtended version="ITU-R_BS.2076-2">{frame}{body}'
            '</audioFormatExtended></format></coreMetadata></ebuCoreMain>\n').encode()


def chna(objects: Sequence[AdmObject], *, bed: bool, court: bool = False,
         profile: str = "ebu") -> bytes:
    """The ``chna`` chunk's body: each track's UID, track format and pack format."""
    rows = [(o.number, f"ATU_{o.number:08X}", f"AT_0003{0x1000 + o.number:04X}_01",
             f"AP_0003{0x1000 + o.number:04X}") for o in objects]
    for first in bed_tracks(len(objects), bed=bed, court=court).values():
        rows += [(first + k, f"ATU_{first + k:08X}", _bed_track(k, profile), _bed_pack(profile))
                 for k in range(bed_channels(profile))]
    body = struct.pack("<HH", len(rows), len(rows))
    for index, uid, track, pack in rows:
        body += struct.pack("<H12s14s11sx", index, uid.encode(), track.encode(), pack.encode())
    return body


def bext(description: str, *, time_reference: int, loudness_lufs: float | None = None,
         true_peak_dbtp: float | None = None, coding_history: str = "") -> bytes:
    """The ``bext`` chunk's body (EBU Tech 3285 v2). Date and time: ``SOURCE_DATE_EPOCH``
    (the reproducible-builds convention) if set, else 1970-01-01 00:00:00: never the clock."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "0")
    try:
        stamp = time.gmtime(int(epoch))
    except (ValueError, OverflowError):
        raise RenderError(f"SOURCE_DATE_EPOCH={epoch!r}, accepted: whole seconds since "
                          "1970-01-01") from None

    def level(value: float | None) -> int:
        return 0x7FFF if value is None else round(value * 100)

    return struct.pack(
        "<256s32s32s10s8sQH64s5h180s",
        description.encode("ascii", "replace")[:256], b"soundscape", b"",
        time.strftime("%Y-%m-%d", stamp).encode(),
        time.strftime("%H:%M:%S", stamp).encode(), time_reference, 2, b"",
        level(loudness_lufs), 0x7FFF, level(true_peak_dbtp), 0x7FFF, 0x7FFF, b""
    ) + coding_history.encode()
