"""A layout for a rite with music that has no 設樂 and no bundled data.

A chapter of another classic (禮記·投壺) or a user's own rite names its instruments in
passing (鼓：半魯鼓) and its players by their family (弦者, 大師), and sets out no 設樂.
Every instrument it names, and every instrument the kind of its music needs (the 射節's
drums: ``derive_rules.toml [kind.she]``), is placed by its family's rule
(``data/generic_layout.toml``), the same rule for every text: no rite has code of its own.
Each entry quotes the passage that names the instrument (else the music that needs it) and
states the rule in its ``note``.
"""

from __future__ import annotations

import functools
import re

from soundscape.cuesheet import LayoutItem
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text import glossary
from soundscape.text.derive.formulas import Unit, rules
from soundscape.text.source import Text

__all__ = ["NOTE", "by_family", "generic_layout", "is_placeable"]

#: How a layout entry placed by a family rule begins its ``note`` (the site chooser reads it).
NOTE = "generic layout"


@functools.cache
def _table() -> dict:
    return read_toml(data_dir() / "generic_layout.toml")


def _family(instrument: str) -> dict | None:
    return next((f for f in _table()["family"].values() if instrument in f["instruments"]),
                None)


@functools.cache
def _word_patterns() -> dict[str, re.Pattern]:
    """Instrument id → a pattern of the words that name it as a thing."""
    words = glossary.load()
    extra = _table()["words"]
    found = {}
    for instrument in words.ids("instrument"):
        terms = [re.escape(t) for t in words.terms_longest_first("instrument")
                 if words.id_of("instrument", t) == instrument]
        if instrument in extra:
            entry = extra[instrument]
            terms.append(rf"{re.escape(entry['word'])}(?![{entry['not_before']}])")
        found[instrument] = re.compile("|".join(terms))
    return found


def generic_layout(text: Text, music: list[Unit]) -> list[LayoutItem]:
    """The layout of ``text`` by family rules: the instruments it names, then those the
    kinds of its ``music`` formulas need (``derive_rules.toml [kind.*] instruments``)."""
    table = _table()
    kinds = glossary.load()
    wanted: dict[str, tuple[tuple[int, int], str]] = {}
    for instrument, pattern in _word_patterns().items():
        m = pattern.search(text.chars)
        if m and _family(instrument):
            wanted[instrument] = ((m.start(), m.end()), "named by the text here")
    for unit in music:
        kind = unit.info["kind"]
        for instrument in rules()["kind"][kind]["instruments"]:
            if instrument not in wanted and _family(instrument):
                note = table["not_named"].format(kind=kinds.name("kind", kind), kind_id=kind)
                wanted[instrument] = ((unit.start, unit.end), note)
    placed: list[LayoutItem] = []
    rows: dict[str, str] = {}
    for instrument, (span, why) in sorted(wanted.items(), key=lambda w: w[1][0]):
        placed.append(by_family(instrument, text.quote(*span), span, why, rows))
    return placed


def is_placeable(instrument: str) -> bool:
    """Whether a family rule places ``instrument`` (the 工's 瑟 and voices are seated)."""
    return _family(instrument) is not None


def by_family(instrument: str, quote: str, span: tuple[int, int], why: str,
              rows: dict[str, str]) -> LayoutItem:
    """``instrument`` placed by its family's rule. ``rows`` (anchor → the last entry placed
    at it, updated) makes one whose anchor is taken stand south of the last entry there
    (皆南陳: the 設樂's racks stand in a row southward)."""
    family = _family(instrument)
    if family is None:
        raise KeyError(instrument)
    of = tuple(family["of"]) if isinstance(family["of"], list) else family["of"]
    anchor = family["relation"] + ":" + ("|".join(of) if isinstance(of, tuple) else of)
    relation, rule = family["relation"], family["rule"]
    if anchor in rows:
        relation, of = "south_of", rows[anchor]
        rule += "; south of the entry already there (皆南陳)"
    id_ = f"{family['group']}.{instrument}"
    rows[anchor] = id_
    return LayoutItem(id_, glossary.load().name("instrument", instrument), instrument,
                      family["group"], relation, of, quote, span,
                      facing=family.get("facing", ""), struck_face=family.get("struck_face", ""),
                      note=f"{NOTE} ({why}): {rule}")
