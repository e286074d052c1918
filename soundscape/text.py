"""Load a source text and normalise its characters.

A text is read as UTF-8. Lines at the top starting with ``#`` are its header
(the edition). Commentary in 【…】 is set aside as notes tied to the offset it
follows; lines of the form ``右…`` are section headings closing the passage
before them. What remains is the passage: its Han characters, normalised
(variants unified, punctuation and spaces dropped), form ``Text.chars``, the
string every character offset in a cue sheet refers to.

Normalisation converts simplified forms with OpenCC (``s2t``) and then applies
a small domain table (``data/variants.toml``) for the variants OpenCC leaves
apart (鑮/鎛, 鼓/鼔, 算/筭, 貍/狸, 簜/荡, 間/閒). It maps one character to one
character, so offsets survive it.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import opencc

from soundscape.errors import TextError
from soundscape.resources import data_dir

__all__ = ["Heading", "Note", "Text", "is_han", "load", "load_bundled", "normalise",
           "parse"]

_NOTE = re.compile(r"【([^】]*)】")
_HEADING = re.compile(r"^右([^\s【】]{1,20})(?=\s|【|$)")
BUNDLED_NAME = "dashe"


@dataclass(frozen=True, slots=True)
class Heading:
    """A ``右…`` section heading.

    Attributes
    ----------
    name : the heading without 右 (e.g. 設樂)
    end : int, offset in ``Text.chars`` where the section it closes ends
    line : int, 1-based line of the heading in the source
    """

    name: str
    end: int
    line: int


@dataclass(frozen=True, slots=True)
class Note:
    """A note (鄭注 or 記) tied to the passage it follows.

    Attributes
    ----------
    offset : int, offset in ``Text.chars`` of the character the note follows (end of passage)
    text : the note as written
    after : up to 12 characters of the passage before the note, for readers
    """

    offset: int
    text: str
    after: str


@dataclass(frozen=True, slots=True)
class Text:
    """A source text: passage characters, their origin, headings and notes.

    Attributes
    ----------
    source : where it was read from (a path, or ``bundled:dashe``)
    header : the ``#`` header lines, without the ``#``
    original : the text as read (header included)
    chars : the normalised Han characters of the passage; cue spans index this
    origin : for each index of ``chars``, its index in ``original``
    headings : section headings, in text order
    notes : notes, in text order
    """

    source: str
    header: tuple[str, ...]
    original: str
    chars: str
    origin: tuple[int, ...]
    headings: tuple[Heading, ...]
    notes: tuple[Note, ...]

    def quote(self, start: int, end: int) -> str:
        """The passage ``chars[start:end]`` as written in the source, notes left out."""
        if not 0 <= start < end <= len(self.chars):
            raise IndexError(f"span [{start}, {end}] outside the text (0..{len(self.chars)})")
        written = self.original[self.origin[start]:self.origin[end - 1] + 1]
        return _NOTE.sub("", written)

    def line_of(self, offset: int) -> int:
        """1-based line in the source of the character at ``offset`` of ``chars``."""
        return self.original.count("\n", 0, self.origin[offset]) + 1

    def notes_between(self, start: int, end: int) -> tuple[Note, ...]:
        """The notes whose offset lies in ``[start, end]`` (a note at ``end`` follows the span)."""
        return tuple(n for n in self.notes if start <= n.offset <= end)


def is_han(char: str) -> bool:
    """True for a CJK ideograph (unified, extension A–G or compatibility)."""
    code = ord(char)
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF
            or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3134F)


@functools.cache
def _variant_tables() -> tuple[dict[str, str], dict[str, str]]:
    with open(data_dir() / "variants.toml", "rb") as handle:
        raw = tomllib.load(handle)
    return dict(raw["before"]), dict(raw["after"])


@functools.cache
def _converter() -> opencc.OpenCC:
    return opencc.OpenCC("s2t")


@functools.cache
def _normalise_char(char: str) -> str:
    if not is_han(char):
        return char
    before, after = _variant_tables()
    char = before.get(char, char)
    converted = _converter().convert(char)
    if len(converted) != 1:  # never let a conversion shift offsets
        converted = char
    return after.get(converted, converted)


def normalise(s: str) -> str:
    """Unify character variants in ``s``, one character for one (same length).

    >>> normalise("乐人宿县于阼阶东")
    '樂人宿縣於阼階東'
    """
    return "".join(_normalise_char(c) for c in s)


def parse(original: str, *, source: str) -> Text:
    """Build a :class:`Text` from a whole file's contents.

    Raises
    ------
    TextError
        If the text holds no Han characters outside the header and notes.
    """
    header: list[str] = []
    chars: list[str] = []
    origin: list[int] = []
    headings: list[Heading] = []
    notes: list[Note] = []
    position = 0
    in_header = True
    for number, line in enumerate(original.splitlines(keepends=True), start=1):
        stripped = line.strip()
        if in_header and stripped.startswith("#"):
            header.append(stripped.lstrip("#").strip())
        elif stripped:
            in_header = False
            heading = _HEADING.match(stripped)
            if heading:
                headings.append(Heading(normalise(heading.group(1)), len(chars), number))
                body_start = line.index(stripped) + len(heading.group(0))
                _scan(line[body_start:], position + body_start, chars, origin, notes)
            else:
                _scan(line, position, chars, origin, notes)
        position += len(line)
    if not chars:
        raise TextError(f"{source}: holds no Chinese text (only header, notes or blank lines); "
                        "expected the 經文 in Han characters")
    return Text(source, tuple(header), original, "".join(chars), tuple(origin),
                tuple(headings), tuple(notes))


def _scan(segment: str, base: int, chars: list[str], origin: list[int],
          notes: list[Note]) -> None:
    """Append the Han characters of ``segment`` (at ``base`` in the source) and its notes."""
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "【":
            close = segment.find("】", index)
            close = len(segment) if close < 0 else close
            passage = "".join(chars[-12:])
            notes.append(Note(len(chars), segment[index + 1:close], passage))
            index = close + 1
            continue
        if is_han(char):
            chars.append(_normalise_char(char))
            origin.append(base + index)
        index += 1


def load(path: str | Path) -> Text:
    """Read and parse the text file at ``path`` (UTF-8, a BOM is allowed).

    Raises
    ------
    TextError
        If the file cannot be read, is not UTF-8, is empty or holds no Chinese text.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise TextError(f"{path}: cannot read the text: {error.strerror or error}") from error
    if not raw.strip():
        raise TextError(f"{path}: the file is empty; expected the 經文 as UTF-8 text")
    try:
        original = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise TextError(f"{path}:{line}: byte {raw[error.start]:#04x} at offset {error.start} "
                        "is not UTF-8; save the text as UTF-8 (GB18030/Big5 are not read)"
                        ) from error
    return parse(original, source=str(path))


def bundled_path() -> Path:
    """The path of the bundled 大射 text."""
    return data_dir() / "texts" / f"{BUNDLED_NAME}.txt"


def load_bundled() -> Text:
    """The bundled 大射儀 經文 with 鄭玄's notes from ``dashe_notes.toml``."""
    text = load(bundled_path())
    with open(data_dir() / "texts" / f"{BUNDLED_NAME}_notes.toml", "rb") as handle:
        raw = tomllib.load(handle)
    notes = tuple(Note(n["offset"], n["text"], n["after"]) for n in raw["note"])
    return Text(f"bundled:{BUNDLED_NAME}", text.header, text.original, text.chars,
                text.origin, text.headings, notes)
