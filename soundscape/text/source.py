"""Load a source text: its passage, headings, notes and what is set aside.

A text is read as UTF-8. Lines at the top starting with ``#`` are its header
(the edition). What is not 經文 is set aside before anything is derived:
bracketed notes (【…】 鄭注, （…） notes and note numbers) become
notes (:class:`Note`) tied to the offset they follow; introductions, numbered-note
blocks, translations, 疏 paragraphs and run-on 注 become asides
(:mod:`soundscape.text.commentary`). ``右…`` headings close the passage before them:
at the start of a line, or inline after a sentence end, and never where 右 is
the right hand or side (右手, 右顧, 右挾之 …: ``data/editions.toml``). What
remains is the passage: its Han characters, normalised
(:func:`soundscape.text.hanzi.normalise`; punctuation and spaces dropped), form
``Text.chars``, the string every character offset in a cue sheet refers to.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from pathlib import Path

from soundscape.errors import TextError
from soundscape.fileio import read_bytes, read_toml
from soundscape.resources import data_dir
from soundscape.text import commentary, encoding, pages
from soundscape.text.commentary import Aside
from soundscape.text.hanzi import in_context, is_han, normalise, normalise_char
from soundscape.text.pages import Gap

__all__ = ["Aside", "Gap", "Heading", "Note", "Text", "header_end", "is_han", "load",
           "load_bundled", "normalise", "parse"]

BUNDLED_NAME = "dashe"
#: Bytes of a text file: a chapter of the Yili with 鄭注 and 賈疏 is under 100 kB (the 大射
#: of the 注疏: 64 kB), and deriving takes ~30 s a megabyte, so 4 MiB is a whole book's room
#: and two minutes' wait at most.
TEXT_BYTES = 4 << 20
# Quotation marks (opening → closing), and the marks that may stand between a passage's last
# character and the closing mark of a quotation it opens (「…賓。」, “…宾！”).
_QUOTATIONS = {"“": "”", "「": "」", "『": "』"}
_SENTENCE_END = "。．！？，；：…”」』"


@dataclasses.dataclass(frozen=True, slots=True)
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


@dataclasses.dataclass(frozen=True, slots=True)
class Note:
    """A note (鄭注 or 記) tied to the passage it follows.

    Attributes
    ----------
    offset : int, offset in ``Text.chars`` of the character the note follows (end of passage)
    text : the note as written
    after : up to 12 characters of the passage before the note, for readers
    opener : the bracket it was printed in (（, 【, 〔 …), where it was read from a print
    """

    offset: int
    text: str
    after: str
    opener: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class Text:
    """A source text: passage characters, their origin, headings, notes and asides.

    Attributes
    ----------
    source : where it was read from (a path, or ``bundled:dashe``)
    header : the ``#`` header lines, without the ``#``
    original : the text as read (header included)
    chars : the normalised Han characters of the passage; cue spans index this
    origin : for each index of ``chars``, its index in ``original``
    headings : section headings, in text order
    notes : notes, in text order
    asides : commentary and translation set aside (not in ``chars``), in text order
    hidden : spans of ``original`` left out of quotes (notes, asides and print marks),
        sorted and disjoint
    gaps : pages missing from the print (``Gap.at`` is then an offset in ``chars``)
    encoding : the encoding the file was read in (``utf-8``, ``gb18030``, ``big5hkscs`` …)
    """

    source: str
    header: tuple[str, ...]
    original: str
    chars: str
    origin: tuple[int, ...]
    headings: tuple[Heading, ...]
    notes: tuple[Note, ...]
    asides: tuple[Aside, ...] = ()
    hidden: tuple[tuple[int, int], ...] = ()
    gaps: tuple[Gap, ...] = ()
    encoding: str = "utf-8"

    def quote(self, start: int, end: int) -> str:
        """The passage ``chars[start:end]`` as written in the source, notes and asides left out."""
        if not 0 <= start < end <= len(self.chars):
            raise IndexError(f"span [{start}, {end}] outside the text (0..{len(self.chars)})")
        first, last = self.origin[start], self.origin[end - 1] + 1
        return self._visible(first, self._closed(first, last))

    def _visible(self, first: int, last: int) -> str:
        """``original[first:last]`` without its hidden spans (notes, asides, print marks)."""
        pieces, position = [], first
        # hidden is sorted and disjoint: start at the first span that ends after `first`
        at = bisect.bisect_right(self.hidden, first, key=lambda span: span[1])
        while at < len(self.hidden) and self.hidden[at][0] < last:
            a, b = self.hidden[at]
            pieces.append(self.original[position:max(a, position)])
            position, at = b, at + 1
        pieces.append(self.original[position:last])
        return "".join(pieces)

    def _closed(self, first: int, last: int) -> int:
        """``last``, or past the marks right after it that close a quotation the passage
        opens (公曰：“命某為賓 + 。”): a quote never leaves a “ or 「 dangling. Only the
        passage's own marks count, not those of a note inside it."""
        text = self._visible(first, last)
        if sum(text.count(o) - text.count(c) for o, c in _QUOTATIONS.items()) <= 0:
            return last
        end = last
        while end < len(self.original):
            i = bisect.bisect_left(self.hidden, (end, end))  # hidden: sorted, disjoint
            if i < len(self.hidden) and self.hidden[i][0] == end:  # a note between: （65）。”
                end = self.hidden[i][1]
            elif self.original[end] in _SENTENCE_END:
                end += 1
                if self.original[end - 1] in _QUOTATIONS.values():
                    last = end
            else:
                break
        return last

    def line_of(self, offset: int) -> int:
        """1-based line in the source of the character at ``offset`` of ``chars``."""
        return self.original.count("\n", 0, self.origin[offset]) + 1

    def notes_between(self, start: int, end: int) -> tuple[Note, ...]:
        """The notes whose offset lies in ``[start, end]`` (a note at ``end`` follows the span)."""
        return tuple(n for n in self.notes if start <= n.offset <= end)

    def aside_text(self, aside: Aside) -> str:
        """What ``aside`` holds, as written."""
        return self.original[aside.start:aside.end]


def header_end(original: str) -> int:
    """The offset where the body starts, after the ``#`` lines at the top."""
    return _header(original)[1]


def _header(original: str) -> tuple[list[str], int]:
    """The ``#`` lines at the top and the offset where the body starts."""
    header, position = [], 0
    for line in original.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if stripped:
            header.append(stripped.lstrip("#").strip())
        position += len(line)
    return header, position


def _heading_at(reading: str, index: int) -> tuple[str, int] | None:
    """(name, end) of a ``右…`` heading whose 右 stands at ``index``, else None."""
    rules = commentary.rules()["headings"]
    line_start = reading.rfind("\n", 0, index) + 1
    before = reading[line_start:index]
    line_end = commentary.rules()["print"]["line_end"]
    if not before.strip() and reading[:line_start].rstrip().endswith(line_end):
        before = pages.without_marks(reading[max(0, line_start - 80):line_start]).rstrip()
        before = before.rsplit("\n", 1)[-1] or " "  # a printed line broke the sentence
    spaced = before[-1:].isspace()
    before = before.rstrip()
    if before and not (before[-1] in rules["after"] or (spaced and is_han(before[-1]))):
        return None  # inside a sentence: after a comma, or glued to the word before it
    end = index + 1
    while end < len(reading) and is_han(reading[end]) and end - index <= 20:
        end += 1
    name = reading[index + 1:end]
    if not name or normalise_char(name[0]) in rules["not_first"]:
        return None
    if reading[end:end + 1] in ("。", "．"):
        return name, end + 1
    if end < len(reading) and not (reading[end].isspace() or reading[end] == "【"):
        return None  # runs on into a sentence (右挾之，…)
    return name, end


def _closing(original: str, index: int, opener: str) -> int:
    """Offset of the bracket closing the note opened at ``index`` (nested ones counted)."""
    closer, depth = commentary.rules()["notes"]["brackets"][opener], 0
    for position in range(index, len(original)):
        char = original[position]
        depth += (char == opener) - (char == closer)
        if depth == 0:
            return position
    line_end = original.find("\n", index)
    return len(original) if line_end < 0 else line_end  # unclosed: the note ends with its line


def parse(original: str, *, source: str) -> Text:
    """Build a :class:`Text` from a whole file's contents.

    Raises
    ------
    TextError
        If the text holds no Han characters outside the header, notes and asides.
    """
    header, body = _header(original)
    asides = commentary.find_asides(original, body)
    printed = pages.read_print(original, body, source=source)
    reading = in_context(original)
    brackets = commentary.rules()["notes"]["brackets"]
    column_break = commentary.rules()["print"]["column_break"]
    chars: list[str] = []
    origin: list[int] = []
    headings: list[Heading] = []
    notes: list[Note] = []
    calls = [m.span() for m in commentary.note_call().finditer(original, body)]
    hidden = [(a.start, a.end) for a in asides] + list(printed.marks) + calls
    pending = sorted(hidden, reverse=True)  # spans to skip, the next one last
    index = body
    line = counted = 0  # lines counted up to `counted`, so headings cost no rescans
    note_end = -1  # where the last note closed, to join a note continued on the next line
    while index < len(original):
        while pending and pending[-1][1] <= index:
            pending.pop()  # passed over inside a note
        if pending and pending[-1][0] <= index:
            index = pending.pop()[1]
            continue
        char = original[index]
        if char in brackets:
            close = _closing(original, index, char)
            inside = original[index + 1:close].replace(column_break, "")
            if _emendation(char, inside):
                index += 1  # read as text: the closing bracket is passed over as a mark
                continue
            if any(is_han(c) for c in inside):
                if (notes and notes[-1].offset == len(chars)
                        and _continues(original, note_end, index)):
                    notes[-1] = dataclasses.replace(notes[-1], text=notes[-1].text + inside)
                else:
                    notes.append(Note(len(chars), inside, "".join(chars[-12:]), char))
                note_end = close + 1
            hidden.append((index, close + 1))
            index = close + 1
            continue
        entity = _entity().match(original, index) if char == "&" else None
        if entity:
            table = commentary.rules()["print"]
            chars.append(normalise_char(table["entities"].get(entity.group(0),
                                                              table["unknown_char"])))
            origin.append(index)
            index = entity.end()
            continue
        heading = _heading_at(reading, index) if char == "右" else None
        if heading:
            line += original.count("\n", counted, index)
            counted = index
            headings.append(Heading(normalise(heading[0]), len(chars), line + 1))
            index = heading[1]
            continue
        if is_han(char):
            chars.append(normalise_char(reading[index]))
            origin.append(index)
        index += 1
    if not chars:
        kinds = sorted({a.kind for a in asides})
        raise TextError(f"{source}: holds no Chinese text of the rite (only header, notes, "
                        "commentary, titles or blank lines"
                        + (f"; set aside: {', '.join(kinds)}" if kinds else "")
                        + "); expected the 經文 in Han characters")
    gaps = tuple(Gap(g.pages, bisect.bisect_left(origin, g.at), g.line) for g in printed.gaps
                 if g.at < origin[-1])
    return Text(source, tuple(header), original, "".join(chars), tuple(origin),
                tuple(headings), tuple(notes), tuple(asides), _merged(hidden), gaps)


def _emendation(opener: str, inside: str) -> bool:
    """Whether a bracket holds an editor's correction to read as text (editions.toml
    ``[notes] emendation``: a few Han characters alone), not a note. A note's number
    (〔一〕, 〔十二〕: ``not_emendation``) and a commentary's label (〔注〕, 〔疏〕) are not."""
    table = commentary.rules()["notes"]
    most = table.get("emendation", {}).get(opener, 0)
    return (0 < len(inside) <= most and all(is_han(c) for c in inside)
            and not set(inside) <= set(table["not_emendation"]))


def _merged(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """``spans`` sorted, with overlapping and nested ones joined (print marks inside notes),
    empty ones dropped (a quote's walk over them would not move)."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return tuple(merged)


@functools.cache
def _entity() -> re.Pattern:
    return re.compile(commentary.rules()["print"]["entity"])


def _continues(original: str, after: int, before: int) -> bool:
    """True if only a line break and print marks stand between two notes: one note printed
    over two lines, each line's part in its own brackets."""
    between = original[after:before]
    return "\n" in between and not pages.without_marks(between).strip()


def load(path: str | Path) -> Text:
    """Read and parse the text file at ``path``: UTF-8 (a BOM allowed), UTF-16/32 with a
    BOM, GB18030 or Big5 (:mod:`soundscape.text.encoding`; ``Text.encoding`` says which).

    Raises
    ------
    TextError
        If the file cannot be read, is in none of those encodings, is empty or holds no
        Chinese text.
    """
    path = Path(path)
    raw = read_bytes(path, TextError, limit=TEXT_BYTES)
    if not raw.strip():
        raise TextError(f"{path}: the file is empty; expected the 經文 as UTF-8 text")
    try:
        original, name = encoding.decode(raw)
    except encoding.NotText as error:
        raise TextError(f"{path}: is {error.kind}, not a text file; export or save its text "
                        "as plain text (UTF-8) and derive that") from error
    except encoding.Undecodable as error:
        line = raw.count(b"\n", 0, error.offset) + 1
        raise TextError(f"{path}:{line}: byte {raw[error.offset]:#04x} at offset "
                        f"{error.offset}: {error}; save the text as UTF-8") from error
    return dataclasses.replace(parse(original, source=str(path)), encoding=name)


def bundled_path() -> Path:
    """The path of the bundled 大射 text."""
    return data_dir() / "texts" / f"{BUNDLED_NAME}.txt"


def load_bundled() -> Text:
    """The bundled 大射儀 經文 with 鄭玄's notes from ``dashe_notes.toml``."""
    text = load(bundled_path())
    raw = read_toml(data_dir() / "texts" / f"{BUNDLED_NAME}_notes.toml")
    notes = tuple(Note(n["offset"], n["text"], n["after"]) for n in raw["note"])
    return Text(f"bundled:{BUNDLED_NAME}", text.header, text.original, text.chars,
                text.origin, text.headings, notes, text.asides, text.hidden, text.gaps)
