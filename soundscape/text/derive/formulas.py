"""The formulas of the Yili that name music and calls, found in a section's text.

``奏X`` (金奏), ``奏X以射`` (the shooting 節), ``(升)歌X…(N終)``, ``(下)管X(N終)``
or ``下管X笙入N成``, ``笙入…樂X…``, ``間歌X笙Y…``, ``合樂X…``, ``無算樂``, ``入驁``,
the 記's ``舞則X`` and ``有X`` (勺, 房中之樂), ``樂闋`` (the music stops), the
answers ``諾以宮/商``, the flag calls ``舉旌以宮 / 偃旌以商``, the orders
``命去侯 / 命取矢`` and the repetitions ``…如初``. An order to play (``曰奏X``) is not
the playing. Tables live in ``data/derive_rules.toml``.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text import glossary

__all__ = ["Unit", "alternation", "find_units", "patterns", "played_orders", "rules"]


@dataclass(frozen=True, slots=True)
class Unit:
    """A formula found in a section: its span (in ``Text.chars``), kind and details.

    ``role`` is ``music``, ``stop`` (樂闋), ``voice``, ``command`` (命去侯 …),
    ``implied`` (負侯許諾 without a degree), ``mark`` (a 如初 of shooting,
    which does not cut a step) or ``order`` (曰奏X, an order to play: neither cuts a
    step; :func:`played_orders` makes it the playing where the text plays X nowhere after).
    """

    start: int
    end: int
    role: str
    info: dict = field(default_factory=dict, compare=False)


@functools.cache
def rules() -> dict:
    """The derivation tables (``data/derive_rules.toml``)."""
    return read_toml(data_dir() / "derive_rules.toml")


def alternation(terms: tuple[str, ...]) -> str:
    return "|".join(re.escape(t) for t in terms)


@functools.cache
def patterns() -> dict[str, re.Pattern]:
    words = glossary.load()
    piece = alternation(words.terms_longest_first("piece"))
    degree = alternation(tuple(words.name("degree", i) for i in words.ids("degree")))
    numeral = "".join(rules()["numerals"])
    return {
        "piece": re.compile(piece),
        "command_zou": re.compile(rf"(?<=[曰命])(?:請)?奏({piece})(間若一)?"),
        "begins": re.compile(rf"({piece})作"),
        "she": re.compile(rf"(?:乃)?奏({piece})以射"),
        "zou": re.compile(rf"(?:乃)?奏({piece})"),
        "sheng_in": re.compile(r"笙入.{0,15}?(?:樂|奏)"),
        "ge": re.compile(r"(?:乃|遂)?(?:升)?歌"),
        "jiange": re.compile(r"(?:乃|遂)?間歌"),
        "he": re.compile(r"(?:乃|遂)?合(?:鄉)?樂"),
        # 管X三終; 燕禮 記 下管新宮笙入三成 (鄭注: 管之入三成，謂三終也)
        "guan": re.compile(rf"(?:乃|下)?管({piece})(?:([{numeral}])終|笙入([{numeral}])成)?"),
        "has": re.compile(rf"{rules()['ji']['has']}({piece})"),
        "dance": re.compile(rf"舞則({piece})"),
        "wusuan": re.compile(r"無算樂"),
        "ao": re.compile(r"入(驁)"),
        "que": re.compile(r"樂闋"),
        "answer": re.compile(rf"(?:又)?(?:許)?諾以({degree})"),
        "raise": re.compile(rf"舉旌以({degree})"),
        "lower": re.compile(rf"偃旌以({degree})"),
        "command": re.compile(r"命(去侯|取矢)(?:如初)?"),
        "implied": re.compile(r"負侯(?:者)?(?:皆)?許諾(?!以[宮商角徵羽])(?:如初)?"),
        "shoot_again": re.compile(r"(?:射|獲)皆?如初"),
        "forces": re.compile(rf"工([{numeral}])人(?:([{numeral}])瑟)?"),
    }


# ------------------------------------------------------------------ formulas

def _pieces_after(chars: str, position: int) -> list[tuple[int, int, str]]:
    """Consecutive piece names from ``position`` (fillers like 周南 allowed between)."""
    words = glossary.load()
    fillers = rules()["list_fillers"]
    found: list[tuple[int, int, str]] = []
    while True:
        filler = next((f for f in fillers if chars.startswith(f, position)), None)
        while filler:  # 鄉樂周南 …: any number of fillers, in any order
            position += len(filler)
            filler = next((f for f in fillers if chars.startswith(f, position)), None)
        match = patterns()["piece"].match(chars, position)
        if not match:
            return found
        found.append((match.start(), match.end(), words.known_id("piece", match.group(0))))
        position = match.end()


def _repeat_after(chars: str, position: int) -> tuple[int, int]:
    """(repeats, end) for an ``N終`` at ``position``, else (1, position)."""
    numerals = rules()["numerals"]
    if position + 1 < len(chars) and chars[position] in numerals and chars[position + 1] == "終":
        return numerals[chars[position]], position + 2
    return 1, position


def _music(kind: str, piece: str, start: int, end: int, repeats: int = 1, **info) -> Unit:
    return Unit(start, end, "music", {"kind": kind, "piece": piece, "repeats": repeats, **info})


def _list_units(kind: str, start: int, chars: str, position: int) -> list[Unit]:
    """One unit per piece of a list; the first unit includes the formula's head.

    Songs of the 鄉樂 (歌鄉樂周南關雎 …) are sung and played together: kind 合樂 (鄭注 on
    燕禮 遂歌鄉樂: 鄉樂者風也…謂之鄉樂, as the 合樂 of the 鄉飲酒).
    """
    if chars.startswith(rules()["xiangyue"], position):
        kind = "he"
    pieces = _pieces_after(chars, position)
    units = []
    for index, (p_start, p_end, piece) in enumerate(pieces):
        repeats, end = _repeat_after(chars, p_end) if index == len(pieces) - 1 else (1, p_end)
        units.append(_music(kind, piece, start if index == 0 else p_start, end, repeats))
    return units


def find_units(chars: str, base: int) -> list[Unit]:
    """Every formula in one section's characters; spans are offset by ``base``."""
    p = patterns()
    words = glossary.load()
    units: list[Unit] = []
    starts: list[int] = []  # the taken spans, disjoint and sorted by start
    ends: list[int] = []

    def take(start: int, end: int) -> bool:
        """Take [start, end) unless it overlaps a span already taken."""
        at = bisect.bisect_left(starts, end)  # spans from `at` on start at or after `end`
        if at and ends[at - 1] > start:
            return False
        starts.insert(at, start)
        ends.insert(at, end)
        return True

    def add(found: list[Unit]) -> None:
        for unit in found:
            if take(unit.start, unit.end):
                units.append(unit)

    for m in p["command_zou"].finditer(chars):
        if take(m.start(), m.end()):  # an order to play, not the playing (played_orders)
            units.append(Unit(m.start(), m.end(), "order", _order(chars, m)))
    for m in p["she"].finditer(chars):
        add([_music("she", words.known_id("piece", m.group(1)), m.start(), m.end())])
    for m in p["he"].finditer(chars):  # before 笙入: 笙入立于縣中西面乃合樂 is one 合樂
        add(_list_units("he", m.start(), chars, m.end()))
    for m in p["sheng_in"].finditer(chars):
        add(_list_units("sheng", m.start(), chars, m.end()))
    for m in p["jiange"].finditer(chars):
        add(_alternating(chars, m.start(), m.end()))
    for m in p["ge"].finditer(chars):
        if m.start() == 0 or chars[m.start() - 1] != "間":
            add(_list_units("ge", m.start(), chars, m.end()))
    for m in p["guan"].finditer(chars):
        repeats = rules()["numerals"].get(m.group(2) or m.group(3) or "一")
        add([_music("guan", words.known_id("piece", m.group(1)), m.start(), m.end(), repeats)])
    for m in p["zou"].finditer(chars):
        piece = words.known_id("piece", m.group(1))
        add([_music(rules()["zou_kind"].get(piece, "jinzou"), piece, m.start(), m.end())])
    for m in p["begins"].finditer(chars):  # 陔作: the music ordered (命奏陔) begins
        piece = words.known_id("piece", m.group(1))
        add([_music(rules()["zou_kind"].get(piece, "jinzou"), piece, m.start(), m.end())])
    for m in p["dance"].finditer(chars):  # 若舞則勺: a 頌 sung to the dance (鄭注)
        add([_music("ge", words.known_id("piece", m.group(1)), m.start(), m.end())])
    for m in p["has"].finditer(chars):  # 有房中之樂: music the rite may have (記)
        add([_music(rules()["ji"]["has_kind"], words.known_id("piece", m.group(1)), m.start(),
                    m.end())])
    for m in p["wusuan"].finditer(chars):
        add([_music("wusuan", "wusuanyue", m.start(), m.end())])
    for m in p["ao"].finditer(chars):
        add([_music("jinzou", "aoxia", m.start(), m.end())])
    for m in p["que"].finditer(chars):
        add([Unit(m.start(), m.end(), "stop")])
    for name, what in (("answer", "answer"), ("raise", "raise_flag"), ("lower", "lower_flag")):
        for m in p[name].finditer(chars):
            add([Unit(m.start(), m.end(), "voice", {"what": what, "degree": m.group(1)})])
    for m in p["command"].finditer(chars):
        add([Unit(m.start(), m.end(), "command", {"order": m.group(1),
                                                  "again": m.group(0).endswith("如初")})])
    for m in p["implied"].finditer(chars):
        add([Unit(m.start(), m.end(), "implied")])
    for m in p["shoot_again"].finditer(chars):
        units.append(Unit(m.start(), m.end(), "mark"))
    units.sort(key=lambda u: u.start)
    return [Unit(u.start + base, u.end + base, u.role, u.info) for u in units]


def _order(chars: str, m: re.Match) -> dict:
    """What an order to play says: the piece, its kind by the order's own words (the 射節
    where it says 間若一; the strings where it is given to them, 命弦者; else as 奏X is),
    and where the music begins (after the answer 諾 that follows, if one does)."""
    table = rules()["orders"]
    piece = glossary.load().id_of("piece", m.group(1))
    told = chars[max(0, m.start() - table["told_reach"]):m.start()]
    if m.group(2):
        kind = table["evenly"]
    elif any(f"命{who}" in told for who in table["strings"]):
        kind = table["strings_kind"]
    else:
        kind = rules()["zou_kind"].get(piece, "jinzou")
    answer = chars.find(table["answer"], m.end(), m.end() + table["answer_reach"])
    return {"kind": kind, "piece": piece, "repeats": 1,
            "at": answer + len(table["answer"]) if answer >= 0 else m.start()}


def played_orders(units: dict[str, list[Unit]]) -> dict[str, list[Unit]]:
    """``units`` (per section, in text order) with each order to play that the text never
    follows by the playing of its piece (投壺: 命弦者曰請奏貍首間若一 大師曰諾, and the
    throwing begins) made the music itself; an order followed by the playing (大射: 命大師曰
    奏貍首間若一 … 乃奏貍首以射) stays an order."""
    ordered = [u for section in units.values() for u in section]
    out: dict[str, list[Unit]] = {}
    for section, found in units.items():
        kept = []
        for unit in found:
            if unit.role == "order" and not any(
                    u.role == "music" and u.info["piece"] == unit.info["piece"]
                    and u.start > unit.start for u in ordered):
                unit = Unit(unit.start, unit.end, "music", {**unit.info, "ordered": True})
            kept.append(unit)
        out[section] = kept
    return out


def _alternating(chars: str, start: int, position: int) -> list[Unit]:
    """間歌: 歌 and 笙 take turns, one piece each (間歌魚麗笙由庚歌南有嘉魚 …)."""
    units: list[Unit] = []
    kind, head = "ge", start
    words = glossary.load()
    while True:
        if chars.startswith("笙", position):
            kind, head, position = "sheng", position, position + 1
        elif chars.startswith("歌", position):
            kind, head, position = "ge", position, position + 1
        match = patterns()["piece"].match(chars, position)
        if not match:
            return units
        units.append(_music(kind, words.known_id("piece", match.group(0)), head, match.end()))
        position = head = match.end()
