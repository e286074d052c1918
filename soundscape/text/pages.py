"""The print's own marks in a transcription made page by page, and the pages it lacks.

Transcriptions such as the Kanseki Repository's (``docs/rites.md``) keep the print's
page markers (``<pb:KR1d0026_SBCK_004-1a>``) and end every printed line with ``¶``. Both
are the book's, not the rite's: they are left out of the passage and of quotes, so a
sentence broken across lines or pages reads as one.

A page is missing when the edition's own numbering skips it, or when its marker is followed
by no character of text before the next marker. An edition that numbers leaves and sides
(1a, 1b, 2a …) skips a page when a side is passed over; one that marks only one side of
every leaf (the Kanseki Repository's 《禮記》 `tls` edition marks one page per passage: 1a,
2a … 13a) numbers its pages by leaf, and skips one only when a leaf number is passed over.
Missing pages after the last character of text are the book's blank end, not a gap. The
marks are configured in ``data/editions.toml`` (``[print]``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from soundscape.errors import TextError
from soundscape.text.commentary import rules
from soundscape.text.hanzi import is_han
from soundscape.validate import shown

__all__ = ["Gap", "Print", "read_print", "without_marks"]


@dataclass(frozen=True, slots=True)
class Gap:
    """Pages missing from the print, where the text resumes after them.

    Attributes
    ----------
    pages : the missing pages, in order (``("14a", "14b")``)
    at : int, offset in the source where the text resumes (the next page's marker)
    line : int, 1-based line of that marker
    """

    pages: tuple[str, ...]
    at: int
    line: int

    def describe(self) -> str:
        names = self.pages[0] if len(self.pages) == 1 else f"{self.pages[0]}–{self.pages[-1]}"
        return f"page{'s' if len(self.pages) > 1 else ''} {names} missing before line {self.line}"


@dataclass(frozen=True, slots=True)
class Print:
    """The print marks of a source: spans to leave out (offsets in the source) and gaps."""

    marks: tuple[tuple[int, int], ...]
    gaps: tuple[Gap, ...]


@functools.cache
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    table = rules()["print"]
    line_end = re.escape(table["line_end"])
    return re.compile(table["page_marker"]), re.compile(rf"{line_end}(?:\r?\n)?")


def without_marks(s: str) -> str:
    """``s`` without page markers and line-end marks."""
    marker, line_end = _patterns()
    return line_end.sub("", marker.sub("", s))


def _page_name(ordinal: int) -> str:
    return f"{ordinal // 2 + 1}{'ab'[ordinal % 2]}"


#: The highest leaf number a page marker may carry: a chapter of the 儀禮 takes dozens of
#: leaves, a whole 四部叢刊 print a few thousand. A number past it (a typo, or a hostile
#: file) would have every "missing" page between listed: 2.2 GB for one of 20 000 000.
MOST_LEAVES = 100_000


def read_print(original: str, start: int, *, source: str = "text") -> Print:
    """The page markers and line-end marks of ``original`` from ``start``, and its gaps; a
    marker past :data:`MOST_LEAVES` is refused (TextError naming ``source`` and the line)."""
    marker, line_end = _patterns()
    markers = list(marker.finditer(original, start))
    marks = sorted([m.span() for m in markers] + [m.span() for m in line_end.finditer(
        original, start)])
    for m in markers:
        if len(m.group(1)) > len(str(MOST_LEAVES)) or int(m.group(1)) > MOST_LEAVES:
            line = original.count("\n", 0, m.start()) + 1
            raise TextError(f"{source}:{line}: page marker {shown(m.group(0))}; accepted: a "
                            f"leaf from 1 to {MOST_LEAVES}")
    return Print(tuple(marks), tuple(_gaps(original, markers)))


def _has_text(s: str) -> bool:
    return any(is_han(c) for c in s)


def _gaps(original: str, markers: list[re.Match]) -> list[Gap]:
    gaps: list[Gap] = []
    missing: list[str] = []
    previous = None
    # an edition that marks one side of each leaf only numbers its pages by leaf
    stride = 1 if len({m.group(2) for m in markers}) > 1 else 2
    for index, m in enumerate(markers):
        ordinal = (int(m.group(1)) - 1) * 2 + (m.group(2) == "b")
        if previous is not None and ordinal > previous + stride:
            missing += [_page_name(o) for o in range(previous + stride, ordinal, stride)]
        previous = max(ordinal, previous if previous is not None else ordinal)
        end = markers[index + 1].start() if index + 1 < len(markers) else len(original)
        if not _has_text(original[m.end():end]):
            missing.append(_page_name(ordinal))
            continue
        if missing:
            line = original.count("\n", 0, m.start()) + 1
            gaps.append(Gap(tuple(dict.fromkeys(missing)), m.start(), line))
            missing = []
    return gaps  # pages missing after the last text are the book's blank end
