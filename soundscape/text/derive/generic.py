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

from soundscape.cuesheet import LayoutItem, MusicCue
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text import glossary
from soundscape.text.source import Text

__all__ = ["generic_layout"]


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


def generic_layout(text: Text, music: list[MusicCue]) -> list[LayoutItem]:
    """The layout of ``text`` by family rules: the instruments it names, then those its
    ``music`` (derived with no layout: performers are instrument ids) needs."""
    table = _table()
    kinds = glossary.load()
    wanted: dict[str, tuple[tuple[int, int], str]] = {}
    for instrument, pattern in _word_patterns().items():
        m = pattern.search(text.chars)
        if m and _family(instrument):
            wanted[instrument] = ((m.start(), m.end()), "named by the text here")
    for cue in music:
        for performer in cue.performers:
            if performer not in wanted and _family(performer):
                note = table["not_named"].format(kind=kinds.name("kind", cue.kind),
                                                 kind_id=cue.kind)
                wanted[performer] = (cue.span, note)
    items = []
    words = glossary.load()
    for instrument, (span, why) in sorted(wanted.items(), key=lambda w: w[1][0]):
        family = _family(instrument)
        of = tuple(family["of"]) if isinstance(family["of"], list) else family["of"]
        name = words.name("instrument", instrument)
        items.append(LayoutItem(
            f"{family['group']}.{instrument}", name, instrument, family["group"],
            family["relation"], of, text.quote(*span), span,
            facing=family.get("facing", ""), struck_face=family.get("struck_face", ""),
            note=f"generic layout ({why}): {family['rule']}"))
    return items
