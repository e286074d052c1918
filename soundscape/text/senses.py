"""Which sense, and so which reading, a character has where it is written.

A character with several 廣韻 readings for several senses (樂 music 五角切, joy 盧各切,
to love 五教切) is read by the words around it, per occurrence, from the table
``soundscape/data/readings/senses.toml``: each of its words (樂 in 「請以樂」, 夫 in
「大夫」) names the reading by its 反切 and the source that gives that sense there. The
rule: of the table's words for the character that the text holds at that place, the
longest wins (a tie goes to the one listed first); where none does, the character's
``default`` (with its ``why``). A word may mark which of its characters it reads when the
character occurs twice in it (``以[樂]樂``).

Text and words are matched in their standard forms (``choices.toml`` ``[variants]``, then
``hanzi.normalise_char``), one character for one, so 賔 matches a word written 賓.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from soundscape import validate
from soundscape.errors import TextError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text.hanzi import normalise_char

__all__ = ["Sense", "choose", "table"]

_FILE = ("readings", "senses.toml")


@dataclass(frozen=True, slots=True)
class Sense:
    """The reading one occurrence gets: its 廣韻 反切 and 音韻地位 (tshet-uinh 描述), its
    Mandarin pinyin (tone digit), and why: the word that matched ("" for the default)
    with its source, or the default's reason."""

    character: str
    fanqie: str
    position: str
    pinyin: str
    word: str
    why: str


@dataclass(frozen=True, slots=True)
class _Word:
    text: str       # standard forms
    at: int         # which of its characters the word reads
    fanqie: str
    source: str


@dataclass(frozen=True, slots=True)
class _Entry:
    character: str
    readings: dict[str, tuple[str, str]]   # 反切 → (描述, pinyin)
    default: str
    why: str
    words: tuple[_Word, ...]


def _where() -> str:
    return str(data_dir().joinpath(*_FILE))


@functools.cache
def _variants() -> dict[str, str]:
    return read_toml(data_dir() / "readings" / "choices.toml", error=TextError)["variants"]


@functools.cache
def _standard(char: str) -> str:
    return normalise_char(_variants().get(char, char))


@functools.cache
def table() -> dict[str, _Entry]:
    """The table by standard form of each character (and of each of its ``forms``)."""
    raw = read_toml(data_dir().joinpath(*_FILE), error=TextError)
    out: dict[str, _Entry] = {}
    for char, row in raw.items():
        entry = _entry(char, row)
        for form in (char, *row.get("forms", ())):
            out[_standard(form)] = entry
    return out


def _entry(char: str, row: dict) -> _Entry:
    import tshet_uinh

    where = _where()
    key = f"{char}"
    if not isinstance(row, dict):
        validate.fail(TextError, where, key, row, "a table with default, why, pinyin, words")
    listed = {e.反切: e.音韻地位.描述 for form in (char, *row.get("forms", ()))
              for e in tshet_uinh.資料.query字頭(form) if e.反切}
    pinyin = row.get("pinyin")
    if not isinstance(pinyin, dict) or not pinyin:
        validate.fail(TextError, where, f"{key}.pinyin", pinyin,
                      "a table 反切 = pinyin (tone digit), one per reading used")
    for fanqie, said in pinyin.items():
        if fanqie not in listed:
            validate.fail(TextError, where, f"{key}.pinyin.{fanqie}", fanqie,
                          f"one of the 廣韻 反切 of {char}: {', '.join(listed)}")
        if not (isinstance(said, str) and said[:-1].isalpha() and said[-1:] in "12345"):
            validate.fail(TextError, where, f"{key}.pinyin.{fanqie}", said,
                          "pinyin with a tone digit 1-5, e.g. yue4")
    readings = {f: (listed[f], p) for f, p in pinyin.items()}
    default = validate.choice(row.get("default"), list(readings), key=f"{key}.default",
                              where=where, error=TextError)
    why = validate.text(row.get("why"), key=f"{key}.why", where=where, error=TextError)
    words = []
    for n, item in enumerate(row.get("words", [])):
        words.append(_word(char, item, readings, f"{key}.words[{n}]"))
    seen = [w.text for w in words]
    for w in words:
        if seen.count(w.text) > 1:
            validate.fail(TextError, where, f"{key}.words", w.text, "each word once")
    return _Entry(char, readings, default, why, tuple(words))


def _word(char: str, item: dict, readings: dict, key: str) -> _Word:
    where = _where()
    written = validate.text(item.get("word"), key=f"{key}.word", where=where, error=TextError)
    fanqie = validate.choice(item.get("reading"), list(readings), key=f"{key}.reading",
                             where=where, error=TextError)
    source = validate.text(item.get("source"), key=f"{key}.source", where=where,
                           error=TextError)
    marked = written.find("[")
    plain = written.replace("[", "").replace("]", "")
    text = "".join(_standard(c) for c in plain)
    target = _standard(char)
    if marked >= 0:
        at = marked
    elif text.count(target) == 1:
        at = text.index(target)
    else:
        validate.fail(TextError, where, f"{key}.word", written,
                      f"a word holding {char} once, or marking it as [{char}]")
    if text[at] != target:
        validate.fail(TextError, where, f"{key}.word", written, f"{char} at the marked place")
    return _Word(text, at, fanqie, source)


def choose(text: str | Sequence[str]) -> list[Sense | None]:
    """Per character of ``text``: the sense the table gives it there, None for a character
    the table does not hold (its reading is chosen as before)."""
    standard = "".join(_standard(c) for c in text)
    entries = table()
    out: list[Sense | None] = []
    for i, char in enumerate(standard):
        entry = entries.get(char)
        out.append(None if entry is None else _at(entry, standard, i, text[i]))
    return out


def _at(entry: _Entry, text: str, i: int, written: str) -> Sense:
    best = None
    for word in entry.words:
        start = i - word.at
        if start >= 0 and text[start:start + len(word.text)] == word.text and (
                best is None or len(word.text) > len(best.text)):
            best = word
    fanqie = entry.default if best is None else best.fanqie
    position, pinyin = entry.readings[fanqie]
    if best is None:
        return Sense(written, fanqie, position, pinyin, "", entry.why)
    return Sense(written, fanqie, position, pinyin, best.text, best.source)
