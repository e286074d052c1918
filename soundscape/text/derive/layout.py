"""The orchestra layout (設樂) read from its clauses.

The Yili sets out the hanging instruments in short clauses that this module
reads in order: an anchor (``縣於阼階東``, ``西階之西``), an instrument with
its facing (``笙磬西面``), a neighbour of the last one (``其南笙鐘``), an
instrument at a place or beside the last one with its struck face
(``建鼓在阼階西南鼓``, ``應鼙在其東南鼓``), one between others
(``簜在建鼓之間``) and one leaning on another (``鼗倚於頌磬西紘``).

A rack named by ``其…`` after a rack with a facing shares that facing: the
text gives the facing once for the row it sets out (``皆南陳``). Each item
carries the first note (鄭注) that follows its clause within the passage.
"""

from __future__ import annotations

import bisect
import re

from soundscape.cuesheet import LayoutItem, Section
from soundscape.text import glossary
from soundscape.text.derive.formulas import rules
from soundscape.text.source import Text

__all__ = ["derive_layout", "with_sheng_forces"]

_DIRECTION = {"東": "east", "西": "west", "南": "south", "北": "north"}
_SIDE_OF_PLACE = {"zuojie": "east", "xijie": "west"}
# The 設樂 is a run of short clauses: it ends where this many characters pass without one
# (the longest gap in the 大射's 設樂 is the 皆南陳 of a few characters).
_GAP = 20
_GROUP_OF_INSTRUMENT = {"jiangu": "drums", "pi": "drums", "tao": "drums", "guan": "pipes"}


def _clauses() -> list[tuple[str, re.Pattern]]:
    words = glossary.load()
    inst = "|".join(map(re.escape, words.terms_longest_first("layout_name")))
    place = "|".join(map(re.escape, words.terms_longest_first("place")))
    d = "[東西南北]"
    return [
        ("anchor", re.compile(rf"縣於({place})之?({d})")),
        ("anchor", re.compile(rf"({place})之({d})")),
        ("between", re.compile(rf"({inst})在({inst})之間")),
        ("on", re.compile(rf"({inst})倚於({inst})({d})紘")),
        ("at_prev", re.compile(rf"一?({inst})在其({d})(?:({d})(鼓|面))?")),
        ("at_place", re.compile(rf"一?({inst})在({place})之?({d})(?:({d})(鼓|面))?")),
        ("prev", re.compile(rf"其({d})({inst})")),
        ("facing", re.compile(rf"一?({inst})({d})面")),
    ]


class _Reader:
    """State while reading the clauses: the pending anchor and the items so far."""

    def __init__(self, text: Text, passage_end: int) -> None:
        self.text, self.passage_end = text, passage_end
        self.words = glossary.load()
        self.anchor: tuple[str, str] | None = None
        self.items: list[LayoutItem] = []
        self.sides: dict[str, str] = {}
        self.of_place: set[str] = set()
        self.note_offsets = [n.offset for n in text.notes]

    def add(self, name: str, span: tuple[int, int], relation: str, of, *, side_hint: str,
            facing: str = "", struck: str = "", side: str = "") -> None:
        words = self.words
        instrument = words.known_id("instrument", name)
        group = _GROUP_OF_INSTRUMENT.get(instrument, side_hint or "drums")
        base = f"{side_hint or group}.{words.known_id('layout_name', name)}"
        id_, n = base, 2
        while id_ in self.sides:
            id_, n = f"{base}_{n}", n + 1
        at = bisect.bisect_left(self.note_offsets, span[1])
        note = (self.text.notes[at].text if at < len(self.note_offsets)
                and self.note_offsets[at] <= self.passage_end else "")
        self.items.append(LayoutItem(id_, name, instrument, group, relation, of,
                                     self.text.quote(*span), span, side=side, facing=facing,
                                     struck_face=struck, note=note))
        self.sides[id_] = side_hint
        if isinstance(of, str) and of in {p for p in words.ids("place")}:
            self.of_place.add(id_)

    def last_named(self, name: str) -> LayoutItem | None:
        return next((i for i in reversed(self.items) if i.name == name), None)

    def read(self, kind: str, m: re.Match, span: tuple[int, int]) -> None:
        words, g = self.words, m.groups()
        prev = self.items[-1] if self.items else None
        face = {"鼓": "struck", "面": "facing"}
        if kind == "anchor":
            self.anchor = (words.known_id("place", g[0]), g[1])
        elif kind == "facing" and self.anchor:
            place, direction = self.anchor
            self.add(g[0], span, f"{_DIRECTION[direction]}_of", place,
                     side_hint=_SIDE_OF_PLACE.get(place, ""), facing=_DIRECTION[g[1]])
            self.anchor = None
        elif kind == "prev" and prev:
            self.add(g[1], span, f"{_DIRECTION[g[0]]}_of", prev.id, side_hint=self.sides[prev.id],
                     facing=prev.facing if prev.group not in ("drums", "pipes") else "")
        elif kind in ("at_prev", "at_place") and (prev or kind == "at_place"):
            if kind == "at_prev" and prev is not None:
                of, direction, extra = prev.id, g[1], g[2:]
                side_hint = self.sides[prev.id]
            else:
                of, direction, extra = words.known_id("place", g[1]), g[2], g[3:]
                side_hint = _SIDE_OF_PLACE.get(of, "")
            where = face.get(extra[1] or "", "")
            self.add(g[0], span, f"{_DIRECTION[direction]}_of", of, side_hint=side_hint,
                     facing=_DIRECTION[extra[0]] if where == "facing" else "",
                     struck=_DIRECTION[extra[0]] if where == "struck" else "")
        elif kind == "between":
            named = [i for i in self.items if i.name == g[1]]
            anchored = [i for i in named if i.id in self.of_place] or named
            if len(anchored) >= 2:
                self.add(g[0], span, "between", (anchored[0].id, anchored[1].id), side_hint="")
        elif kind == "on":
            host = self.last_named(g[1])
            if host:
                self.add(g[0], span, "on", host.id, side_hint=self.sides[host.id],
                         side=_DIRECTION[g[2]])


def derive_layout(text: Text, sections: list[Section]) -> list[LayoutItem]:
    """The layout items of the first section that hangs the instruments (``縣於…``)."""
    for section in sections:
        start, end = section.span
        chars = text.chars[start:end]
        begin = chars.find("縣於")
        if begin < 0:
            continue
        reader = _Reader(text, end)
        clauses = _clauses()
        position = last = begin
        while position < len(chars) and position - last <= _GAP:
            for kind, pattern in clauses:
                m = pattern.match(chars, position)
                if m:
                    reader.read(kind, m, (start + m.start(), start + m.end()))
                    position = last = m.end()
                    break
            else:
                position += 1
        return reader.items
    return []


# Side by side across the facing: players facing west or east stand in a north–south row.
_ROW = {"west": "south", "east": "south", "north": "east", "south": "east", "": "east"}


def with_sheng_forces(text: Text, layout: list[LayoutItem]) -> list[LayoutItem]:
    """``layout`` with its 笙 multiplied where the text states the 笙's forces (三笙一和):
    the first 笙 stays, the others and the 和 stand beside it, each quoting the statement."""
    table = rules()["sheng_forces"]
    found = re.search(table["pattern"], text.chars)
    sheng = next((i for i in layout if i.instrument == "sheng"), None)
    if found is None or sheng is None:
        return layout
    numerals = rules()["numerals"]
    he = numerals[found.group(2)]
    players = [(f"{sheng.id}_{n}", sheng.name) for n in range(2, numerals[found.group(1)] + 1)]
    players += [("he" if he == 1 else f"he_{n}", table["he_name"]) for n in range(1, he + 1)]
    quote, span = text.quote(*found.span()), found.span()
    added, previous = [], sheng
    for id_, name in players:
        item = LayoutItem(id_, name, "sheng", sheng.group,
                          f"{_ROW[sheng.facing]}_of", previous.id, quote, span,
                          facing=sheng.facing, note=sheng.note)
        added.append(item)
        previous = item
    at = layout.index(sheng) + 1
    return [*layout[:at], *added, *layout[at:]]
