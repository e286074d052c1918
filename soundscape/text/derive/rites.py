"""The bundled rites: which text each is read from, its cue sheet, its default layout.

``data/rites.toml`` lists the rites of the Yili with music (大射儀, 鄉飲酒禮, 鄉射禮,
燕禮). Where a text does not set out its instruments (鄉飲酒 names its 磬 only in the 記,
燕禮 says only 樂人縣), the rite's ``layout`` entries fill in the 設樂, each quoting
the passage it rests on; 燕禮 takes the lord's hangings as the 大射 sets them out
(``layout_as``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from soundscape.cuesheet import LayoutItem
from soundscape.errors import TextError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text.hanzi import normalise
from soundscape.text.source import Note, Text, load

__all__ = ["Rite", "default_layout", "load_rite_text", "note_after", "rite", "rite_ids"]


@dataclass(frozen=True, slots=True)
class Rite:
    """A bundled rite: id, title, chapter, rank of its host, its text file, its table."""

    id: str
    title: str
    chapter: str
    rank: str
    text: Path
    table: dict


@functools.cache
def _table() -> dict:
    return read_toml(data_dir() / "rites.toml")["rite"]


def rite_ids() -> tuple[str, ...]:
    """The ids of the bundled rites, in file order."""
    return tuple(_table())


def rite(rite_id: str) -> Rite:
    """The bundled rite ``rite_id``.

    Raises
    ------
    TextError
        If no rite has that id (the message lists them).
    """
    table = _table().get(rite_id) if isinstance(rite_id, str) else None
    if table is None:
        raise TextError(f"rite {rite_id!r} unknown; known: {', '.join(rite_ids())}")
    return Rite(rite_id, table["title"], table["chapter"], table["rank"],
                data_dir() / table["text"], table)


@functools.cache  # a Text is frozen: derive asks for the rite's own text on every call
def load_rite_text(rite_id: str) -> Text:
    """The text of a bundled rite (the 大射 with 鄭玄's notes from its notes table)."""
    chosen = rite(rite_id)
    text = load(chosen.text)
    if "notes" not in chosen.table:
        return text
    raw = read_toml(data_dir() / chosen.table["notes"])
    notes = tuple(Note(n["offset"], n["text"], n["after"]) for n in raw["note"])
    return Text(f"bundled:{rite_id}", text.header, text.original, text.chars, text.origin,
                text.headings, notes, text.asides, text.hidden, text.gaps)


@functools.cache
def note_after(rite_id: str, words: str) -> str:
    """The note (鄭注) the rite's own text sets right after the first ``words``, else ""."""
    text = load_rite_text(rite_id)
    at = text.chars.find(normalise(words))
    if at < 0:
        return ""
    end = at + len(normalise(words))
    return next((n.text for n in text.notes if end <= n.offset <= end + 1), "")


def _span(text: Text, quote: str, rite_id: str) -> tuple[int, int] | None:
    """Where ``quote`` stands in ``text``; in another edition (other glyphs the normaliser
    does not unify, a word more or less) the longest run of it, of at least
    ``_LEAST`` characters, that the text has; None where the text lacks it (an excerpt
    derived with --rite)."""
    wanted = normalise(quote)
    at = text.chars.find(wanted)
    if at >= 0:
        return at, at + len(wanted)
    for size in range(len(wanted) - 1, _LEAST - 1, -1):
        for start in range(len(wanted) - size + 1):
            at = text.chars.find(wanted[start:start + size])
            if at >= 0:
                return at, at + size
    return None


_LEAST = 3  # characters of a layout quote that identify its passage in another edition


def _placed(text: Text, quote: str, rite_id: str, note: str) -> tuple[str, tuple[int, int], str]:
    """(quote, span, note) of a layout entry in ``text``: where the text lacks the rite's
    passage, the entry is kept (the rite is forced) at the text's first character, and the
    note says which passage of the rite's own text it rests on."""
    span = _span(text, quote, rite_id)
    if span is not None:
        return text.quote(*span), span, note
    if not text.chars:
        raise TextError(f"{text.source}: holds no text to place rite {rite_id!r}'s layout in")
    lacks = f"not in this text: the rite's own text says 「{quote}」"
    return text.quote(0, 1), (0, 1), f"{note} ({lacks})" if note else lacks


def default_layout(rite_id: str, text: Text, derived: list[LayoutItem],
                   lord: list[LayoutItem] | None = None) -> list[LayoutItem]:
    """``derived`` completed by the rite's default entries (those whose id it lacks).

    ``lord`` is the layout named by ``layout_as`` (the 大射's), re-quoted to this text.
    """
    table = rite(rite_id).table
    items = list(derived)
    if lord is not None and not items:
        quote, span, note = _placed(text, table["layout_quote"], rite_id, table["layout_note"])
        items = [LayoutItem(i.id, i.name, i.instrument, i.group, i.relation, i.of,
                            quote, span, side=i.side, facing=i.facing,
                            struck_face=i.struck_face, note=note)
                 for i in lord]
    have = {i.id for i in items}
    for entry in table.get("layout", []):
        if entry["id"] in have:
            continue
        quote, span, note = _placed(text, entry["quote"], rite_id, entry.get("note", ""))
        of = tuple(entry["of"]) if isinstance(entry["of"], list) else entry["of"]
        items.append(LayoutItem(entry["id"], entry["name"], entry["instrument"], entry["group"],
                                entry["relation"], of, quote, span,
                                facing=entry.get("facing", ""),
                                struck_face=entry.get("struck_face", ""), note=note))
    return items
