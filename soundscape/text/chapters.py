"""The chapters of a book: where each begins, by the title lines that number it.

An edition of the Yili is printed as a book: a file may hold several chapters (鄉飲酒禮第四,
鄉射禮第五 …), each opened by its title lines (卷題, :mod:`soundscape.text.commentary`). A
chapter begins at the first title line that numbers it: by the chapter's own title (X第N,
鄕射禮第五　儀禮　鄭氏注, 大射儀第七) where the book prints one, else by its 卷 (儀禮卷第五). A
注疏 edition prints one chapter over several 卷 (大射, 卷第十六 to 卷第十八) under one
chapter title, and a 卷 is named again at its end (儀禮卷第四 after the 鄉飲酒禮): neither
begins a chapter.

:func:`one` gives a chapter as a text of its own: the others are blanked (their
characters become spaces, their line breaks stay), so every line number and offset of the
chapter is the book's.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass

from soundscape.text.commentary import rules
from soundscape.text.hanzi import normalise
from soundscape.text.source import Text, header_end, parse

__all__ = ["Chapter", "chapters", "numeral_value", "one"]

_DIGITS = "一二三四五六七八九十百"
_NUMERAL = f"[{_DIGITS}]+"
# 鄕射禮第五 (not 卷第五, and not a section's 第一節 or 第十一章: the whole number, then no 節)
_BY_TITLE = re.compile(f"(?<!卷)第({_NUMERAL})(?![{_DIGITS}節节章段])")
_BY_JUAN = re.compile(f"卷第({_NUMERAL})")


@dataclass(frozen=True, slots=True)
class Chapter:
    """A chapter of a book.

    Attributes
    ----------
    number : its number as printed in Chinese (四, 七, 十六)
    title : the title line that begins it, as printed
    line : int, 1-based line of that title
    start, end : offsets in the book's text (``end`` exclusive: the next chapter's start)
    """

    number: str
    title: str
    line: int
    start: int
    end: int

    @property
    def value(self) -> int:
        """The number as an integer (十六 → 16)."""
        return numeral_value(self.number)

    def is_named(self, asked: str) -> bool:
        """Whether ``asked`` names this chapter: its number (7, 七: 七 is not 十七), words
        of its title (大射, 大射儀, 大射仪), or the line of its title (``line 11``: a book
        that prints a chapter twice)."""
        asked = asked.strip()
        if by_line := re.fullmatch("line *([0-9]{1,9})", asked, re.IGNORECASE):  # not 5000
            return int(by_line[1]) == self.line
        if re.fullmatch("[0-9]{1,9}", asked):
            return int(asked) == self.value
        if re.fullmatch(_NUMERAL, asked):
            return numeral_value(asked) == self.value
        return bool(asked) and normalise(asked) in normalise(self.title)


def chapters(book: Text) -> list[Chapter]:
    """The chapters of ``book`` in order; none where no title line numbers one."""
    line_end = rules()["print"]["line_end"]
    titles = [(aside, normalise(book.aside_text(aside)))
              for aside in book.asides if aside.kind == "卷題"]
    pattern = (_BY_TITLE if any(_BY_TITLE.search(words) for _, words in titles)
               else _BY_JUAN)
    begun: list[tuple[str, str, int, int]] = []
    for aside, words in titles:
        match = pattern.search(words)
        if match and (not begun or match.group(1) != begun[-1][0]):
            title = book.aside_text(aside).replace(line_end, "").strip()
            begun.append((match.group(1), title, aside.line, aside.start))
    # a title with none of the rite's words after it before the next (a table of contents,
    # a title line printed twice) begins no chapter: the next title that has them does
    begun = [b for b, after in zip(begun, _ends(begun, book), strict=True)
             if _holds_words(book, b[3], after)]
    ends = _ends(begun, book)
    return [Chapter(number, title, line, start, end)
            for (number, title, line, start), end in zip(begun, ends, strict=True)]


def _ends(begun: list[tuple[str, str, int, int]], book: Text) -> list[int]:
    """Where each begun chapter ends: the next one's start, the last at the book's end."""
    return [start for *_, start in begun[1:]] + [len(book.original)] * bool(begun)


def _holds_words(book: Text, start: int, end: int) -> bool:
    """Whether any character of the rite stands in ``book.original[start:end]``."""
    i = bisect.bisect_left(book.origin, start)
    return i < len(book.origin) and book.origin[i] < end


def one(book: Text, chapter: Chapter) -> Text:
    """``chapter`` of ``book`` as a text of its own: the book's header kept, the rest
    outside the chapter blanked, so that its lines and offsets stay the book's."""
    header = header_end(book.original)
    blank = re.compile(r"[^\n]")
    original = (book.original[:header]
                + blank.sub(" ", book.original[header:chapter.start])
                + book.original[chapter.start:chapter.end]
                + blank.sub(" ", book.original[chapter.end:]))
    return dataclasses.replace(parse(original, source=book.source), encoding=book.encoding)


def numeral_value(numeral: str) -> int:
    """A Chinese number as an integer: 七 → 7, 十六 → 16, 二十 → 20, 一百一十 → 110."""
    digits = "一二三四五六七八九"
    total = current = 0
    for char in numeral:
        if char in digits:
            current = digits.index(char) + 1
        else:  # 十 or 百: multiplies what stands before it (one if nothing does)
            total += (current or 1) * (10 if char == "十" else 100)
            current = 0
    return total + current
