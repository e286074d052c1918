"""The site of a rite: units, named places, performers' and listeners' places.

Coordinates are metres, x east, y north, z up, with the origin at the middle
of the front (south) edge of the hall (堂) at ground level. The data lives in
``soundscape/data/site.toml`` (the 大射's 射宮, every length with its unit) and,
for the other rites, in ``soundscape/data/sites/<rite>.toml`` (named by the rite's
``site`` key in ``data/rites.toml``), which replaces the tables and places that differ
(鄉射 in the 序 with one 侯 at 五十弓, 燕禮 in the lord's 寢, 鄉飲酒 in the 庠) and drops
those the rite has not. ``load_site`` reads them, applies a user's override file and
checks that every place is possible.

Units follow the texts: 尺 (its length in metres is a parameter, 0.231 m by
default: the Eastern Zhou bronze ruler, docs/sources.md M6.2), 貍步 =
弓 = 步 = 6 尺 (鄭注 on 張侯: 則此貍步六尺明矣), 寸, 丈, 筵 = 9 尺, and metres.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

from soundscape import validate
from soundscape.errors import SiteError
from soundscape.fileio import read_toml
from soundscape.geometry import Vec3
from soundscape.resources import data_dir

__all__ = [
    "CHI_M",
    "COMPASS",
    "ENCLOSURE_KEYS",
    "GENERIC",
    "UNITS",
    "Enclosure",
    "Hall",
    "InstrumentSize",
    "LayoutOverride",
    "Phase",
    "Place",
    "Placement",
    "Site",
    "Target",
    "compass",
    "load_site",
    "parse_length",
    "rite_site_file",
    "site_of",
    "to_metres",
]


#: Default length of the 尺 in metres (docs/sources.md M6.2: 23.1 cm).
CHI_M = 0.231

#: Units: name → (factor, base), base "尺" (scaled by the 尺 length) or "m".
UNITS: Mapping[str, tuple[float, str]] = MappingProxyType({
    "尺": (1.0, "尺"), "chi": (1.0, "尺"),
    "寸": (0.1, "尺"), "cun": (0.1, "尺"),
    "丈": (10.0, "尺"), "zhang": (10.0, "尺"),
    "筵": (9.0, "尺"), "yan": (9.0, "尺"),
    "弓": (6.0, "尺"), "gong": (6.0, "尺"),
    "步": (6.0, "尺"), "bu": (6.0, "尺"),
    "貍步": (6.0, "尺"), "狸步": (6.0, "尺"), "libu": (6.0, "尺"),
    "m": (1.0, "m"), "cm": (0.01, "m"),
})

#: Compass words to horizontal unit vectors.
COMPASS: Mapping[str, Vec3] = MappingProxyType({
    "north": (0.0, 1.0, 0.0), "south": (0.0, -1.0, 0.0),
    "east": (1.0, 0.0, 0.0), "west": (-1.0, 0.0, 0.0),
})

#: Longest length accepted anywhere in a site (m): the courtyard is about 100 m deep.
LONGEST_M = 1000.0
#: Accepted length of one 尺 (m): wide bounds around CHI_M, so that a mistyped unit
#: (cm for m) is caught while any historical 尺 fits.
CHI_RANGE_M = (0.1, 1.0)
_TERM = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:/\d+)?)\s*([^\s\d.+\-/]+)")
_DATA_FILE = "site.toml"


# Units ---------------------------------------------------------------------

def to_metres(value: float, unit: str, *, chi_m: float = CHI_M) -> float:
    """Convert ``value`` in ``unit`` to metres.

    Parameters
    ----------
    value : float
    unit : str
        A key of ``UNITS`` (尺, 寸, 丈, 筵, 弓, 步, 貍步, m, cm or their romanised names).
    chi_m : float > 0, metres
        Length of one 尺.
    """
    try:
        factor, base = UNITS[unit]
    except KeyError:
        raise SiteError(f"unit {unit!r} is unknown; accepted: {', '.join(UNITS)}") from None
    return value * factor * (chi_m if base == "尺" else 1.0)


def parse_length(spec: Any, *, chi_m: float = CHI_M, key: str = "length") -> float:
    """A length written with its unit, in metres.

    Parameters
    ----------
    spec : str or mapping
        ``"12 尺"``, ``"-90 貍步"``, a sum such as ``"2 丈 2 尺 5 寸 1/3 寸"``, or
        ``{ value = 12, unit = "尺" }``.
    chi_m : float > 0, metres
        Length of one 尺.
    key : str
        Where the value was written, for the error message.

    Raises
    ------
    SiteError
        When the unit is missing or unknown or the number is not finite.
    """
    if isinstance(spec, Mapping):
        if set(spec) != {"value", "unit"} or not _is_number(spec["value"]):
            raise SiteError(f"{key}: {dict(spec)!r} must be {{ value = <number>, unit = <unit> }}")
        if spec["unit"] not in UNITS:
            raise SiteError(f"{key}: unit {spec['unit']!r} is unknown; "
                            f"accepted: {', '.join(UNITS)}")
        metres = to_metres(float(spec["value"]), spec["unit"], chi_m=chi_m)
    elif isinstance(spec, str):
        metres = _parse_terms(spec, chi_m=chi_m, key=key)
    else:
        raise SiteError(f"{key}: {spec!r} has no unit; write e.g. \"12 尺\" or "
                        f"{{ value = 12, unit = \"尺\" }} (units: {', '.join(UNITS)})")
    if not (math.isfinite(metres) and abs(metres) <= LONGEST_M):
        raise SiteError(f"{key}: {validate.shown(spec)} must be a length between "
                        f"-{LONGEST_M:g} m and {LONGEST_M:g} m")
    return metres


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parse_terms(text: str, *, chi_m: float, key: str) -> float:
    position, total = 0, 0.0
    stripped = text.strip()
    while position < len(stripped):
        match = _TERM.match(stripped, position)
        if match is None:
            raise SiteError(f"{key}: {text!r} is not a length with units; write e.g. "
                            f"\"12 尺\" or \"2 丈 2 尺 5 寸\" (units: {', '.join(UNITS)})")
        number, unit = match.groups()
        if unit not in UNITS:
            raise SiteError(f"{key}: unit {unit!r} in {text!r} is unknown; "
                            f"accepted: {', '.join(UNITS)}")
        try:
            value = float(Fraction(number))
        except (ZeroDivisionError, OverflowError, ValueError):  # ValueError: past 4300 digits
            raise SiteError(f"{key}: {validate.shown(text)}: {validate.shown(number)} is not a "
                            f"number of at most {LONGEST_M:g} m (a fraction needs a divisor "
                            "other than 0)") from None
        total += to_metres(value, unit, chi_m=chi_m)
        position = match.end()
    if not stripped:
        raise SiteError(f"{key}: empty length; write e.g. \"12 尺\"")
    return total


def compass(word: Any, *, key: str) -> Vec3:
    """The unit vector of a compass word (north, south, east, west)."""
    try:
        return COMPASS[str(word).strip().lower()]
    except KeyError:
        raise SiteError(f"{key}: facing {word!r} is unknown; accepted: "
                        f"{', '.join(COMPASS)}") from None


# Plain types ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Place:
    """A named place.

    Attributes
    ----------
    id, name, roman : str
        Id in code, Chinese name as the text says it, romanised label.
    position : Vec3, metres
    facing : Vec3 or None
        Where someone at the place faces, when the text says.
    size : (float, float) or None, metres
        East-west and north-south extent of its footprint (stairs, basin, tent).
    note : str
        Where the place comes from (text, commentary or estimate).
    """

    id: str
    name: str
    roman: str
    position: Vec3
    facing: Vec3 | None = None
    size: tuple[float, float] | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where someone is and which way they face (position in metres, unit facing)."""

    position: Vec3
    facing: Vec3


@dataclass(frozen=True, slots=True)
class Hall:
    """The 堂: width, depth of the open hall (堂深), overall depth, height, 序 at ±xu_x (m)."""

    width: float
    depth: float
    total_depth: float
    height: float
    xu_x: float


#: The heights of the walls that close the 庭 (``[enclosure]`` of site.toml).
ENCLOSURE_KEYS = ("side_wall_height", "gate_height", "hall_wall_height", "xu_height")


@dataclass(frozen=True, slots=True)
class Enclosure:
    """The walls around the 庭 (metres): where they stand and how high their tops are.

    The court is the box ``west ≤ x ≤ east``, ``gate ≤ y ≤ north`` with an open sky; its
    floor is the ground (z = 0). ``north`` is the hall's back wall (the 室 and 房), whose top
    is ``north_top`` above the ground (the hall's height and the wall's); the 序 stand at
    ``±xu_x`` on the hall, from its front edge (y = 0) to ``north``, from the hall floor
    (``hall_floor``) to ``xu_top``.
    """

    west: float
    east: float
    gate: float
    north: float
    side_top: float
    gate_top: float
    north_top: float
    xu_x: float
    hall_floor: float
    xu_top: float

    @property
    def size(self) -> tuple[float, float]:
        """East-west and north-south extent of the court, metres."""
        return self.east - self.west, self.north - self.gate


@dataclass(frozen=True, slots=True)
class Target:
    """A 侯 and its measures (metres): 侯道, 侯中 side, 躬+舌 band, height of the lower rope.

    ``unit`` is the unit the text measures its 侯道 in (貍步 in the 大射, 弓 in the 鄉射);
    its 乏 is the place ``fa_<id>``.
    """

    id: str
    distance: float
    hou_zhong: float
    band: float
    bottom: float
    unit: str = "貍步"

    @property
    def fa(self) -> str:
        """The id of the place of its shelter (乏)."""
        return f"fa_{self.id}"

    @property
    def top(self) -> float:
        """Height of the upper rope."""
        return self.bottom + 2 * self.band + self.hou_zhong

    @property
    def gu(self) -> tuple[float, float]:
        """Heights of the lower and upper edges of the 鵠 (a third of the 侯中, centred)."""
        middle = self.bottom + self.band + self.hou_zhong / 2
        return middle - self.hou_zhong / 6, middle + self.hou_zhong / 6

    @property
    def centre_height(self) -> float:
        """Height of the middle of the 鵠."""
        return self.bottom + self.band + self.hou_zhong / 2


@dataclass(frozen=True, slots=True)
class InstrumentSize:
    """How an instrument of one kind takes up space (metres).

    ``kind`` is ``rack`` (hangs along a frame across its facing), ``drum`` (body
    along the normal of its struck face) or ``thing``. How many bells or stones
    hang on a rack is not a size: it is the pitch set of the instrument file
    (``orchestra.place`` hangs one member per pitch).
    """

    kind: str
    length: float
    depth: float
    height: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class Phase:
    """Where the 工 are during one part of the rite, in lines (see site.toml). The words
    of the text that move them into it are ``data/sequence.toml``'s ``[[gong_move]]``."""

    id: str
    name: str
    place: str
    facing: Vec3
    head: Vec3
    per_line: int
    spacing: float
    line_spacing: float
    mouth: float
    note: str = ""


@dataclass(frozen=True, slots=True)
class LayoutOverride:
    """A user's move of one placed instrument: absolute x/y/z or shifts (m), new facing."""

    key: str
    source: str
    absolute: Mapping[str, float] = field(default_factory=dict)
    shift: Vec3 = (0.0, 0.0, 0.0)
    facing: str | None = None
    struck_face: str | None = None


@dataclass(frozen=True)
class Site:
    """The measured courtyard; build it with ``load_site``.

    Attributes
    ----------
    chi_m : float, metres per 尺
    hall : Hall
    stairs : (width, run), metres
    courtyard_width : float, metres
    spacing : mapping name → metres (``gap``, ``hall_clearance``, ``lean``)
    places : mapping id → Place
    targets : mapping id → Target
    instruments : mapping instrument id → InstrumentSize
    performers : tuple of (id, Chinese name), in rank order
    phases : mapping phase id → Phase
    listeners : mapping id → (facing Vec3, ear height m, note)
    group_names : mapping layout group → Chinese prefix (``east`` → 東縣)
    layout_overrides : mapping layout id → LayoutOverride (applied by ``orchestra.place``)
    source : str
        The files it was read from.
    overridden : mapping dotted key → file
        Every key a user's override file set (``spacing.gap`` → its path).
    people : mapping → metres
        Heights of the people of the rite: ``standing_mouth``, ``seated_mouth``,
        ``standing_ear`` (every voice and listener without a place of its own uses them).
    name : str
        What the site is, as the data names it (``射宮``, ``州序`` …).
    rite : str
        The rite whose site file was read over the 大射's, or ``""``.
    enclosure : Enclosure or None
        The walls around the 庭 (``[enclosure]``), for the court's echoes.
    """

    chi_m: float
    hall: Hall
    stairs: tuple[float, float]
    courtyard_width: float
    spacing: Mapping[str, float]
    places: Mapping[str, Place]
    targets: Mapping[str, Target]
    instruments: Mapping[str, InstrumentSize]
    performers: tuple[tuple[str, str], ...]
    phases: Mapping[str, Phase]
    listeners: Mapping[str, tuple[Vec3, float, str]]
    group_names: Mapping[str, str] = field(default_factory=dict)
    layout_overrides: Mapping[str, LayoutOverride] = field(default_factory=dict)
    source: str = ""
    overridden: Mapping[str, str] = field(default_factory=dict)
    people: Mapping[str, float] = field(default_factory=dict)
    name: str = ""
    rite: str = ""
    enclosure: Enclosure | None = None

    # Units -------------------------------------------------------------

    def metres(self, value: float, unit: str = "尺") -> float:
        """``value`` in ``unit`` (尺, 貍步, 步, 弓 …) as metres with this site's 尺."""
        return to_metres(value, unit, chi_m=self.chi_m)

    def in_units(self, metres: float, unit: str = "貍步") -> float:
        """``metres`` expressed in ``unit``."""
        return metres / to_metres(1.0, unit, chi_m=self.chi_m)

    def overrides_note(self, shaping: tuple[str, ...] | None = None) -> str:
        """The override keys that shape the orchestra's layout (or, given, the tables in
        ``shaping``), for an error message.

        Returns
        -------
        str
            ``" (site override <file> sets spacing.gap, …)"``, or ``""`` when no
            override file changed a spacing, size or place.
        """
        keys: dict[str, list[str]] = {}
        for key, path in self.overridden.items():
            if key.split(".", 1)[0] in (shaping or _SHAPES_LAYOUT):
                keys.setdefault(path, []).append(key)
        return "".join(f" (site override {path} sets {', '.join(names)})"
                       for path, names in keys.items())

    # Places ------------------------------------------------------------

    def place(self, id_: str) -> Vec3:
        """The position of place ``id_`` in metres."""
        return self.place_info(id_).position

    def place_info(self, id_: str) -> Place:
        """The ``Place`` named ``id_`` (raises SiteError naming the known ids)."""
        try:
            return self.places[id_]
        except KeyError:
            raise SiteError(f"place {id_!r} is unknown; known: {', '.join(self.places)}") from None

    def facing(self, id_: str) -> Vec3 | None:
        """The facing the text gives for place ``id_``, or None."""
        return self.place_info(id_).facing

    @property
    def gate_y(self) -> float:
        """The y of the gate (the south limit of the courtyard), metres."""
        return self.place("men")[1]

    def on_hall(self, x: float, y: float) -> bool:
        """Whether ground point (x, y) lies under the hall platform."""
        return abs(x) < self.hall.width / 2 and 0 < y < self.hall.total_depth

    def floor_at(self, x: float, y: float) -> float:
        """The height of the floor one stands on at (x, y), metres: the hall's on the hall
        (its front edge too), else the ground. A target's place is its centre, in the air."""
        on_hall = abs(x) < self.hall.width / 2 and 0 <= y < self.hall.total_depth
        return self.hall.height if on_hall else 0.0

    def in_courtyard(self, x: float, y: float) -> bool:
        """Whether (x, y) lies within the walls (hall platform included)."""
        north = self.hall.total_depth + self.stairs[1]
        return abs(x) <= self.courtyard_width / 2 and self.gate_y <= y <= north

    # People ------------------------------------------------------------

    def performer_position(self, who: str, phase: str) -> Placement:
        """Where one of the 工 is during ``phase``, and which way they face.

        Parameters
        ----------
        who : str
            ``dashi`` (大師), ``shaoshi`` (少師), ``shanggong.1`` … ``shanggong.4``,
            or the Chinese name.
        phase : str
            ``ge`` (on the mats 西階上少東 while they sing), ``guan`` (below at 鼓北
            for 管新宮), ``zuo`` (seated 東坫之東南 afterwards).

        Returns
        -------
        Placement
            The voice's position (mouth height) and facing.
        """
        index = self._performer_index(who)
        spec = self._phase(phase)
        line, slot = divmod(index, spec.per_line)
        in_line = min(spec.per_line, len(self.performers) - line * spec.per_line)
        along = ((in_line - 1) / 2 - slot) * spec.spacing
        back = -line * spec.line_spacing
        base = self.place(spec.place)
        position = tuple(base[i] + spec.head[i] * along + spec.facing[i] * back
                         for i in range(3))
        return Placement((position[0], position[1], position[2] + spec.mouth), spec.facing)

    def performer_positions(self, phase: str) -> dict[str, Placement]:
        """Every performer's placement during ``phase``, by id."""
        return {who: self.performer_position(who, phase) for who, _ in self.performers}

    def listener(self, id_: str) -> Placement:
        """A listener's head at place ``id_``: ear height above its floor, and facing.

        Places listed under ``[listeners]`` in the data say the facing and ear
        height (the duke seated at ``gong_wei`` faces west); any other place
        gives a standing listener (``people.standing_ear``) facing the place's facing or north.
        """
        x, y, z = self.place(id_)
        if id_ in self.listeners:
            facing, ear, _ = self.listeners[id_]
        else:
            facing, ear = self.facing(id_) or COMPASS["north"], self.people["standing_ear"]
        return Placement((x, y, z + ear), facing)

    def _performer_index(self, who: str) -> int:
        for index, (id_, name) in enumerate(self.performers):
            if who in (id_, name):
                return index
        known = ", ".join(id_ for id_, _ in self.performers)
        raise SiteError(f"performer {who!r} is unknown; known: {known}")

    def _phase(self, phase: str) -> Phase:
        for spec in self.phases.values():
            if phase in (spec.id, spec.name, spec.name.split()[0]):
                return spec
        raise SiteError(f"phase {phase!r} is unknown; known: {', '.join(self.phases)}")


# Loading -------------------------------------------------------------------

def load_site(*, chi_m: float = CHI_M, overrides: str | Path | None = None,
              rite: str | None = None) -> Site:
    """Read the bundled site (the rite's, when named), apply a user's override file, check it.

    Parameters
    ----------
    chi_m : float > 0, metres
        Length of one 尺; every length in 尺-based units scales with it.
    overrides : path or None
        A TOML file with the same tables as ``soundscape/data/site.toml``
        (``[places.<id>]``, ``[targets.<id>]``, ``[spacing]``, ``[hall]``,
        ``[stairs]``, ``[courtyard]``, ``[instruments.<id>]``) whose keys replace
        the bundled ones, and ``[layout."<layout id>"]`` tables that move placed
        instruments (``x``/``y``/``z`` or ``dx``/``dy``/``dz``, ``facing``,
        ``struck_face``). Every length needs its unit.
    rite : str or None
        A bundled rite id (``soundscape rites``): its site file (``rite_site_file``) is
        read over the 大射's before the overrides; None, or a rite without one (the
        大射), gives the 大射's 射宮.

    Raises
    ------
    SiteError
        Naming the file and key: unknown place or table, missing or unknown
        unit, impossible position (inside the hall platform, outside the walls,
        below ground, a target not between hall and gate).
    """
    validate.number(chi_m, key="chi_m", where="site", error=SiteError, low=CHI_RANGE_M[0],
                    high=CHI_RANGE_M[1], unit=f"metres (default {CHI_M})")
    data_path = data_dir() / _DATA_FILE
    data = read_toml(data_path, SiteError)
    origin = {f"places.{id_}": str(data_path) for id_ in data["places"]}
    layout: dict[str, LayoutOverride] = {}
    set_by: dict[str, str] = {}
    defined: dict[str, str] = {}
    source = str(data_path)
    rite_file = rite_site_file(rite) if rite is not None else None
    if rite_file is not None:
        _merge_rite(data, read_toml(rite_file, SiteError), str(rite_file), origin, defined)
        source = f"{data_path} + {rite_file}"
    if overrides is not None:
        user = read_toml(Path(overrides), SiteError)
        layout = _merge(data, user, str(overrides), origin, set_by, chi_m)
        source = f"{source} + {overrides}"
    site = _build(data, origin, {**defined, **set_by}, layout, chi_m, source, str(data_path))
    site = replace(site, overridden=MappingProxyType(set_by), name=str(data.get("name", "")),
                   rite=rite if rite is not None and rite_file is not None else "")
    _check_places(site, origin)  # once overridden holds the user's keys only (not the rite's)
    return site


#: The site of a rite with no site of its own: a hall and its court (``sites/generic.toml``).
GENERIC = "generic"


def site_of(text_id: str, layout: Iterable[Any] = ()) -> str | None:
    """The site a cue sheet is played on, for ``load_site(rite=…)``: its bundled rite's
    (the sheet's ``[text] id``); the generic hall and court (:data:`GENERIC`) for a sheet
    whose layout derive placed by family rules (a rite with no data of its own); else None,
    the 大射's."""
    from soundscape.text.derive.generic import NOTE
    from soundscape.text.derive.rites import rite_ids

    if text_id in rite_ids():
        return text_id
    if any(str(getattr(item, "note", "")).startswith(NOTE) for item in layout):
        return GENERIC
    return None


def rite_site_file(rite: str) -> Path | None:
    """The site file of bundled rite ``rite`` (its ``site`` key in ``data/rites.toml``), or
    None when the rite is held on the 大射's site.

    Raises
    ------
    SiteError
        If the rite is unknown (the message lists the rites) or its ``site`` is not a
        file under ``soundscape/data/sites/``.
    """
    from soundscape.errors import TextError
    from soundscape.text.derive.rites import rite as bundled_rite

    if rite == GENERIC:
        return data_dir() / _RITE_FOLDER / f"{GENERIC}.toml"
    try:
        entry = bundled_rite(rite).table.get("site")
    except TextError as error:
        raise SiteError(str(error)) from None
    if entry is None:
        return None
    folder = (data_dir() / _RITE_FOLDER).resolve()
    path = (data_dir() / str(entry)).resolve()
    if path.parent != folder or path.suffix != ".toml":
        raise SiteError(f"{data_dir() / 'rites.toml'}: rite.{rite}.site = {entry!r}; accepted: "
                        f"a .toml file in {folder}")
    return path


#: Where the rites' site files live (under the package data).
_RITE_FOLDER = "sites"
#: A rite's site file: flat tables merge key by key; entry tables add or replace whole
#: entries by id; ``drop`` removes places, targets and listeners the rite has not.
_RITE_FLAT = ("hall", "stairs", "courtyard", "spacing", "people", "performers", "enclosure")
_RITE_ENTRIES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "places": (),  # x, y, z or `from`: checked where the places are built
    "instruments": ("kind", "length", "depth", "height"),
    "targets": ("distance", "hou_zhong", "band", "bottom"),
    "listeners": ("facing", "ear"),
})
_RITE_KEYS = ("schema", "name", "roman", "note", "drop", *_RITE_FLAT, *_RITE_ENTRIES)
_DROPPABLE = ("places", "targets", "listeners")


def _merge_rite(data: dict[str, Any], rite: dict[str, Any], path: str, origin: dict[str, str],
                defined: dict[str, str]) -> None:
    """Fold a rite's site file into the 大射's ``data``; note in ``defined`` each key it sets."""
    for key in rite:
        if key not in _RITE_KEYS:
            raise SiteError(f"{path}: key {key!r} is unknown; accepted: {', '.join(_RITE_KEYS)}")
    drop = rite.get("drop", [])
    if not isinstance(drop, list) or not all(isinstance(id_, str) for id_ in drop):
        raise SiteError(f"{path}: drop = {validate.shown(drop)} must be a list of ids")
    for id_ in drop:
        tables = [table for table in _DROPPABLE if id_ in data[table]]
        if not tables:
            raise SiteError(f"{path}: drop: {id_!r} is not a place, target or listener of "
                            f"the 大射's site; known places: {', '.join(data['places'])}")
        for table in tables:
            del data[table][id_]
        origin.pop(f"places.{id_}", None)
    for table in _RITE_FLAT:
        for key, value in _table(rite, table, path).items():
            _check_key(path, f"{table}.{key}", key, data[table])
            data[table][key] = value
            defined[f"{table}.{key}"] = path
    for table, needed in _RITE_ENTRIES.items():
        for id_, entry in _table(rite, table, path).items():
            if not isinstance(entry, dict):
                raise SiteError(f"{path}: {table}.{id_} must be a table")
            missing = [key for key in needed if key not in entry]
            if missing:
                raise SiteError(f"{path}: {table}.{id_} needs {', '.join(missing)}")
            data[table][id_] = dict(entry)
            defined.update({f"{table}.{id_}.{name}": path for name in entry})
            if table in ("places", "targets"):
                origin[f"places.{id_}"] = path
    if "name" in rite:
        data["name"] = rite["name"]


def _table(data: Mapping[str, Any], name: str, path: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise SiteError(f"{path}: {name} must be a table")
    return value


_MERGEABLE = ("places", "targets", "instruments")
_FLAT = ("spacing", "hall", "stairs", "courtyard", "enclosure")
_PLACE_KEYS = ("x", "y", "z", "dx", "dy", "dz", "facing")
_LAYOUT_KEYS = ("x", "y", "z", "dx", "dy", "dz", "facing", "struck_face")
_KINDS = ("rack", "drum", "thing")
#: Tables whose values move or size the placed orchestra (Site.overrides_note).
_SHAPES_LAYOUT = ("spacing", "instruments", "places", "stairs", "hall", "courtyard")
#: Tables whose values move the places or the walls they are checked against.
_SHAPES_PLACES = ("places", "targets", "stairs", "hall", "courtyard")
#: Lengths that cannot be negative: (table, name or None for all) → (least, may equal it?).
#: A gap of 0 would let racks and drums touch; a rack, drum or hall has a size.
_AT_LEAST: Mapping[tuple[str, str | None], tuple[float, bool]] = MappingProxyType({
    ("spacing", "gap"): (0.0, False), ("spacing", "hall_clearance"): (0.0, True),
    ("spacing", "lean"): (0.0, True),
    ("hall", None): (0.0, False), ("stairs", None): (0.0, False),
    ("courtyard", None): (0.0, False), ("enclosure", None): (0.0, False),
    ("instruments", "length"): (0.0, False), ("instruments", "depth"): (0.0, False),
    ("instruments", "height"): (0.0, True),
    ("targets", "hou_zhong"): (0.0, False), ("targets", "band"): (0.0, True),
    ("targets", "bottom"): (0.0, True),
})


def _merge(data: dict[str, Any], user: dict[str, Any], path: str, origin: dict[str, str],
           set_by: dict[str, str], chi_m: float) -> dict[str, LayoutOverride]:
    """Fold the user's tables into ``data``, note in ``set_by`` every key it sets;
    return the layout moves."""
    accepted = (*_MERGEABLE, *_FLAT, "layout")
    for table, value in user.items():
        if table not in accepted:
            raise SiteError(f"{path}: table [{table}] is unknown; accepted: {', '.join(accepted)}")
        if not isinstance(value, dict):
            raise SiteError(f"{path}: {table} must be a table")
    for table in _FLAT:
        for key, value in user.get(table, {}).items():
            _check_key(path, f"{table}.{key}", key, data[table])
            parse_length(value, chi_m=chi_m, key=f"{path}: {table}.{key}")
            data[table][key] = value
            set_by[f"{table}.{key}"] = path
    for table in _MERGEABLE:
        for id_, entry in user.get(table, {}).items():
            _merge_entry(data, table, id_, entry, path, chi_m)
            set_by.update({f"{table}.{id_}.{name}": path for name in entry})
            if table == "places":
                origin[f"places.{id_}"] = path
            if table == "targets":
                origin[f"places.{id_}"] = path
    return {id_: _layout_override(id_, entry, path, chi_m)
            for id_, entry in user.get("layout", {}).items()}


def _check_key(path: str, key: str, name: str, known: Mapping[str, Any]) -> None:
    if name not in known:
        raise SiteError(f"{path}: {key} is unknown; known: {', '.join(known)}")


def _merge_entry(data: dict[str, Any], table: str, id_: str, entry: Any, path: str,
                 chi_m: float) -> None:
    key = f"{table}.{id_}"
    _check_key(path, key, id_, data[table])
    if not isinstance(entry, dict):
        raise SiteError(f"{path}: {key} must be a table")
    base = data[table][id_]
    allowed = _PLACE_KEYS if table == "places" else tuple(base)
    for name, value in entry.items():
        if name not in allowed:
            raise SiteError(f"{path}: {key}.{name} cannot be set; accepted: {', '.join(allowed)}")
        if name in ("dx", "dy", "dz") and "from" not in base:
            raise SiteError(f"{path}: {key}.{name}: place {id_!r} is not measured from another "
                            "place; set x, y or z instead")
        if name == "facing":
            compass(value, key=f"{path}: {key}.facing")
        elif name == "kind" and value not in _KINDS:
            raise SiteError(f"{path}: {key}.kind = {value!r} is unknown; accepted: "
                            f"{', '.join(_KINDS)}")
        elif name not in ("kind", "note"):
            parse_length(value, chi_m=chi_m, key=f"{path}: {key}.{name}")
        base[name] = value


def _layout_override(id_: str, entry: Any, path: str, chi_m: float) -> LayoutOverride:
    key = f"layout.{id_}"
    if not isinstance(entry, dict):
        raise SiteError(f"{path}: {key} must be a table")
    for name in entry:
        if name not in _LAYOUT_KEYS:
            raise SiteError(f"{path}: {key}.{name} cannot be set; "
                            f"accepted: {', '.join(_LAYOUT_KEYS)}")
    for name in ("facing", "struck_face"):
        if name in entry:
            compass(entry[name], key=f"{path}: {key}.{name}")
    absolute = {axis: parse_length(entry[axis], chi_m=chi_m, key=f"{path}: {key}.{axis}")
                for axis in ("x", "y", "z") if axis in entry}
    dx, dy, dz = (parse_length(entry.get(f"d{axis}", "0 m"), chi_m=chi_m,
                               key=f"{path}: {key}.d{axis}") for axis in "xyz")
    shift = (dx, dy, dz)
    return LayoutOverride(id_, path, MappingProxyType(absolute), shift,
                          entry.get("facing"), entry.get("struck_face"))


def _build(data: dict[str, Any], origin: dict[str, str], set_by: dict[str, str],
           layout: dict[str, LayoutOverride], chi_m: float, source: str,
           data_path: str) -> Site:
    def length(value: Any, key: str) -> float:
        where = f"{set_by.get(key, data_path)}: {key}"
        metres = parse_length(value, chi_m=chi_m, key=where)
        _check_bound(metres, value, key, where)
        return metres

    hall = Hall(*(length(data["hall"][k], f"hall.{k}")
                  for k in ("width", "depth", "total_depth", "height", "xu_x")))
    stairs = (length(data["stairs"]["width"], "stairs.width"),
              length(data["stairs"]["run"], "stairs.run"))
    spacing = {k: length(v, f"spacing.{k}") for k, v in data["spacing"].items()}
    def target(id_: str, t: dict[str, Any]) -> Target:
        distance, hou_zhong, band, bottom = (
            length(t[k], f"targets.{id_}.{k}") for k in ("distance", "hou_zhong", "band", "bottom"))
        return Target(id_, distance, hou_zhong, band, bottom, _unit_of(t["distance"]))

    def instrument(id_: str, spec: dict[str, Any]) -> InstrumentSize:
        long, deep, high = (length(spec[k], f"instruments.{id_}.{k}")
                            for k in ("length", "depth", "height"))
        return InstrumentSize(spec["kind"], long, deep, high, spec.get("note", ""))

    targets = {id_: target(id_, t) for id_, t in data["targets"].items()}
    places = _build_places(data["places"], targets, origin, chi_m)
    instruments = {id_: instrument(id_, spec) for id_, spec in data["instruments"].items()}
    performers = tuple(zip(data["performers"]["members"], data["performers"]["names"],
                           strict=True))
    for id_, p in data["performers"]["phases"].items():
        _phase_keys(id_, p, source)
    phases = {id_: Phase(id_, p["name"], p["place"], compass(p["facing"], key=id_),
                         compass(p["head"], key=id_), p["per_line"],
                         length(p["spacing"], f"performers.phases.{id_}.spacing"),
                         length(p["line_spacing"], f"performers.phases.{id_}.line_spacing"),
                         length(p["mouth"], f"performers.phases.{id_}.mouth"), p.get("note", ""))
              for id_, p in data["performers"]["phases"].items()}
    listeners = {id_: (compass(v["facing"], key=f"listeners.{id_}"),
                       length(v["ear"], f"listeners.{id_}.ear"), v.get("note", ""))
                 for id_, v in data["listeners"].items()}
    site = Site(chi_m, hall, stairs, length(data["courtyard"]["width"], "courtyard.width"),
                MappingProxyType(spacing), MappingProxyType(places), MappingProxyType(targets),
                MappingProxyType(instruments), performers, MappingProxyType(phases),
                MappingProxyType(listeners), MappingProxyType(dict(data["groups"])),
                MappingProxyType(layout), source, MappingProxyType(set_by),
                MappingProxyType({k: length(v, f"people.{k}") for k, v in data["people"].items()}))
    return replace(site, enclosure=_enclosure(site, data.get("enclosure", {}), length, data_path))


def _enclosure(site: Site, raw: Mapping[str, Any], length, data_path: str) -> Enclosure:
    """The walls of the 庭: where from the site's measures, how high from ``[enclosure]``."""
    missing = [key for key in ENCLOSURE_KEYS if key not in raw]
    if missing:
        raise SiteError(f"{data_path}: [enclosure] needs {', '.join(missing)}")
    unknown = [key for key in raw if key not in ENCLOSURE_KEYS]
    if unknown:
        raise SiteError(f"{data_path}: enclosure.{unknown[0]} is unknown; accepted: "
                        f"{', '.join(ENCLOSURE_KEYS)}")
    top = {key: length(raw[key], f"enclosure.{key}") for key in ENCLOSURE_KEYS}
    half = site.courtyard_width / 2
    hall = site.hall
    return Enclosure(-half, half, site.gate_y, hall.depth, top["side_wall_height"],
                     top["gate_height"], hall.height + top["hall_wall_height"], hall.xu_x,
                     hall.height, hall.height + top["xu_height"])


#: The keys of a performer phase (``[performers.phases.<id>]``).
_PHASE_KEYS = ("name", "place", "facing", "head", "per_line", "spacing", "line_spacing",
               "mouth", "note")


def _phase_keys(id_: str, phase: Any, source: str) -> None:
    """A phase says where the 工 sit, not when they move there (data/sequence.toml
    [[gong_move]] holds the words of the text that move them)."""
    if not isinstance(phase, dict):
        raise SiteError(f"{source}: performers.phases.{id_} must be a table")
    unknown = [k for k in phase if k not in _PHASE_KEYS]
    if unknown:
        raise SiteError(f"{source}: performers.phases.{id_}.{unknown[0]} is unknown; accepted: "
                        f"{', '.join(_PHASE_KEYS)} (the words that move the 工 are "
                        "sequence.toml's [[gong_move]])")


def _unit_of(spec: Any) -> str:
    """The unit a length is written in (``"50 弓"`` → 弓); ``m`` for a sum of several."""
    if isinstance(spec, Mapping):
        return str(spec["unit"])
    units = [match[2] for match in _TERM.finditer(str(spec))]
    return units[0] if len(set(units)) == 1 else "m"


def _check_bound(metres: float, value: Any, key: str, where: str) -> None:
    """Refuse a negative (or, where a size or gap must be positive, zero) length."""
    table, name = key.split(".", 1)[0], key.rsplit(".", 1)[-1]
    bound = _AT_LEAST.get((table, name)) or _AT_LEAST.get((table, None))
    if bound is None:
        return
    least, may_equal = bound
    if metres < least or (metres == least and not may_equal):
        sign = ">=" if may_equal else ">"
        raise SiteError(f"{where} = {value!r} ({metres:.3f} m) must be {sign} {least:g} m")


def _build_places(raw: Mapping[str, Any], targets: Mapping[str, Target],
                  origin: Mapping[str, str], chi_m: float) -> dict[str, Place]:
    places: dict[str, Place] = {}

    def build(id_: str, chain: tuple[str, ...]) -> Place:
        if id_ in places:
            return places[id_]
        if id_ in chain:
            raise SiteError(f"places.{id_}: 'from' loops: {' → '.join((*chain, id_))}")
        entry = raw[id_]
        key = f"{origin[f'places.{id_}']}: places.{id_}"

        def length(name: str, default: float) -> float:
            if name not in entry:
                return default
            return parse_length(entry[name], chi_m=chi_m, key=f"{key}.{name}")

        if "from" in entry:
            if entry["from"] not in raw:
                raise SiteError(f"{key}.from: place {entry['from']!r} is unknown")
            base = build(entry["from"], (*chain, id_)).position
            # an axis given outright (z = "0 尺": on the ground below it), else moved by d·
            x, y, z = (length(axis, 0.0) if axis in entry else b + length(f"d{axis}", 0.0)
                       for axis, b in zip("xyz", base, strict=True))
            position = (x, y, z)
        elif id_ in targets:
            target = targets[id_]
            position = (length("x", 0.0), length("y", -target.distance),
                        length("z", target.centre_height))
        else:
            missing = [axis for axis in "xyz" if axis not in entry]
            if missing:
                raise SiteError(f"{key}: needs {', '.join(missing)} (or 'from')")
            position = (length("x", 0.0), length("y", 0.0), length("z", 0.0))
        size = entry.get("size")
        if size is not None and (not isinstance(size, list) or len(size) != 2):
            raise SiteError(f"{key}.size = {size!r} must be [east-west, north-south] lengths")
        place = Place(
            id_, entry.get("name", id_), entry.get("roman", id_), position,
            compass(entry["facing"], key=f"{key}.facing") if "facing" in entry else None,
            None if size is None else (parse_length(size[0], chi_m=chi_m, key=f"{key}.size"),
                                       parse_length(size[1], chi_m=chi_m, key=f"{key}.size")),
            entry.get("note", ""))
        places[id_] = place
        return place

    for id_ in raw:
        build(id_, ())
    return {id_: places[id_] for id_ in raw}


def _check_places(site: Site, origin: Mapping[str, str]) -> None:
    """Refuse places that cannot be: below ground, outside the walls, under the hall.

    The file a place was written in may not be the one to blame (an override that narrowed
    the courtyard), so each error ends with the override keys that move places or walls."""
    note = site.overrides_note(_SHAPES_PLACES)
    if site.gate_y >= 0:
        raise SiteError(f"{origin['places.men']}: places.men: the gate must be south of the "
                        f"hall{note}")
    for id_ in site.targets:
        distance = -site.place(id_)[1]
        if not 0 < distance < -site.gate_y:
            raise SiteError(
                f"{origin[f'places.{id_}']}: targets.{id_}.distance (places.{id_}.y): "
                f"{distance:.2f} m from the hall must lie between the hall (0) and the gate "
                f"({-site.gate_y:.2f} m){note}")
    for id_, place in site.places.items():
        x, y, z = place.position
        key = f"{origin[f'places.{id_}']}: places.{id_}"
        where = f"({x:.2f}, {y:.2f}, {z:.2f}) m"
        if z < 0:
            raise SiteError(f"{key}: {where} is below the ground (z must be >= 0){note}")
        if id_ != "men" and not site.in_courtyard(x, y):
            raise SiteError(f"{key}: {where} is outside the courtyard (|x| <= "
                            f"{site.courtyard_width / 2:.2f} m, y from the gate "
                            f"{site.gate_y:.2f} m to the back of the hall){note}")
        if z < site.hall.height - 1e-9 and site.on_hall(x, y):
            raise SiteError(f"{key}: {where} is inside the hall platform; a place on the hall "
                            f"needs z >= {site.hall.height:.2f} m{note}")
