"""Commentary and translation in an edition of the Yili, found so that they can be set aside.

Editions mix the 經文 with what others wrote about it; a cue derived from a
commentary's quotation or from a modern translation would be invented. This
module finds those parts as spans of the source (:class:`Aside`); the marks
it knows are in ``data/editions.toml``:

- blocks under a heading line 【题解】, 【注释】, 【译文】 (modern editions). A
  注釋 or 譯文 block runs to the next block heading or the end. A 題解 block
  runs to a 【原文】 heading, else to the first paragraph that carries a
  numbered note mark such as （1） (the 經文 of an annotated edition), else it
  is one paragraph;
- 疏 paragraphs opened by ``[疏]``. One runs to the end of its line; where the
  edition breaks lines inside a paragraph (the next line opens with ○, as in
  ○釋曰), it runs on to the line before the 經文 resumes, the line that a
  bracketed note (…) follows. Without paragraph breaks the border is not
  marked, so a few 經文 lines there may be set aside with the 疏;
- title lines of the book (``儀禮卷第四``, ``鄕飮酒禮第四　儀禮　鄭氏注``, the count of
  characters ending a 卷), kind 卷題;
- an edition's apparatus (``[apparatus]``): comment lines (``# src: LIJI 40.01.01 …``, the
  Kanseki Repository's 禮記), outline headings (``** 41 投壺``, kind 卷題: a title line) and
  paragraph numbers at a line's start (``41.6``), kind 版記;
- a line opening with a commentary's label (注：, 鄭注：, 疏：, 按：, 【注】 …: ``[commentary]
  label_line``), kind 注, to its end;
- 鄭注 labelled 注 inside the 經's lines, up to the label (音義, 疏) of the bracketed note
  that follows it (``[labelled]``: the Kanseki 四庫全書 禮記注疏); the labels are 版記;
- 鄭注 run on after the 經文 in the same paragraph (注疏 editions without
  brackets). The 疏 that follows the paragraph names what it explains by first
  and last characters: 「"A"至"B"。○注"C"至"D"」. The paragraph from C (else
  from the end of B) to its end is the 注. A paragraph no 疏 follows keeps its 注.

Notes in brackets (【…】, （…）) are not asides: :mod:`soundscape.text.source` ties
them to the passage they follow.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from dataclasses import dataclass

from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text import gloss
from soundscape.text.hanzi import is_han, normalise

__all__ = ["Aside", "find_asides", "note_call", "rules"]

_CLOSING = "》〉」』”’）)。．，、；：！？"
_NUMBERED_NOTE = re.compile(r"[（(]\s*\d{1,3}\s*[）)]")
_OPEN, _CLOSE = "[“「\"]", "[”」\"]"
_LEMMA = re.compile(
    rf"\s*(?:{_OPEN}([^”」\"]+){_CLOSE}(?:至{_OPEN}([^”」\"]+){_CLOSE})?)?[。.]?\s*"
    rf"(?:○?\s*注{_OPEN}([^”」\"]+){_CLOSE}(?:至{_OPEN}([^”」\"]+){_CLOSE})?)?")


@dataclass(frozen=True, slots=True)
class Aside:
    """A span of the source that is not 經文.

    Attributes
    ----------
    kind : 題解 (introduction), 注釋 (numbered notes), 譯文 (translation),
        疏 (sub-commentary), 注 (鄭注 run on after the 經文) or 卷題 (the book's title lines)
    start, end : int, offsets in the source string (end exclusive)
    line : int, 1-based line where it starts
    """

    kind: str
    start: int
    end: int
    line: int


@functools.cache
def rules() -> dict:
    """The edition marks (``data/editions.toml``)."""
    return read_toml(data_dir() / "editions.toml")


@functools.cache
def note_call() -> re.Pattern:
    """A note's call printed without brackets (①, ⑴, ¹ …: ``[notes] call``)."""
    return re.compile(rules()["notes"]["call"])


def _lines(original: str, start: int) -> list[tuple[int, int]]:
    """(start, end) of each line from ``start``, newline excluded."""
    spans, position = [], start
    for line in original[start:].splitlines(keepends=True):
        spans.append((position, position + len(line.rstrip("\r\n"))))
        position += len(line)
    return spans


def _block_kind(line: str) -> str | None:
    match = re.fullmatch(r"[【\[〔]?\s*(\S+?)\s*[】\]〕]?", line.strip())
    if not match:
        return None
    return next((kind for kind, words in rules()["blocks"].items()
                 if match.group(1) in words), None)


def _intro_end(original: str, lines: list[tuple[int, int]], head: int, stop: int,
               resumes: bool) -> int:
    """Index of the line after a 題解 that starts at line ``head`` (see the module doc)."""
    if resumes:
        return stop
    for index in range(head + 1, stop):
        line = original[slice(*lines[index])]
        if _NUMBERED_NOTE.search(line) or note_call().search(line):
            return index
    first = next((i for i in range(head + 1, stop) if original[slice(*lines[i])].strip()),
                 head)
    return first + 1


def _blocks(original: str, lines: list[tuple[int, int]], first_line: int) -> list[Aside]:
    heads = [(i, kind) for i, span in enumerate(lines)
             if (kind := _block_kind(original[slice(*span)]))]
    asides = []
    for n, (index, kind) in enumerate(heads):
        if kind == "text":  # the heading line itself is the edition's (【原文】), not the rite's
            asides.append(Aside("版記", *lines[index], first_line + index))
            continue
        following = heads[n + 1] if n + 1 < len(heads) else (len(lines), "")
        stop = following[0]
        if kind == "題解":
            stop = _intro_end(original, lines, index, stop, following[1] == "text")
        asides.append(Aside(kind, lines[index][0], lines[stop - 1][1], first_line + index))
    return asides


def _opens_note(line: str) -> bool:
    """True if ``line`` holds a bracketed note after some text (經文 … （注）."""
    openers = rules()["notes"]["brackets"]
    stripped = line.strip()
    return any(c in openers for c in stripped[:1]) or any(
        c in openers and any(is_han(h) for h in stripped[:i]) for i, c in enumerate(stripped))


def _last_commentary_line(original: str, lines: list[tuple[int, int]], index: int) -> int:
    """The last line of a 疏 that starts on line ``index`` (see the module doc)."""
    text = [original[slice(*span)] for span in lines]
    if index + 1 >= len(lines) or not text[index + 1].startswith(
            rules()["commentary"]["continues"]):
        return index
    while index + 1 < len(lines):
        line = text[index + 1]
        after = text[index + 2] if index + 2 < len(lines) else ""
        if not line.strip() or line[0].isspace() or _opens_note(line) or (
                after.strip()[:1] in rules()["notes"]["brackets"] and after.strip()):
            return index
        index += 1
    return index


def _han(s: str) -> str:
    return "".join(c for c in normalise(s) if is_han(c))


def _run_on_note(original: str, paragraph: tuple[int, int], lemma: str) -> int | None:
    """Where the 鄭注 starts in ``paragraph``, from the lemma of the 疏 after it, or None."""
    text = original[slice(*paragraph)]
    if any(c in rules()["notes"]["brackets"] for c in text):
        return None  # the edition brackets its notes: nothing runs on
    match = _LEMMA.match(lemma)
    assert match is not None  # every part of the pattern is optional: it always matches
    first, last, note_first = (match.group(i) for i in (1, 2, 3))
    positions = [i for i, c in enumerate(normalise(text)) if is_han(c)]
    chars = _han(text)
    end = 0
    if first:
        start = chars.find(_han(first))
        if start < 0:
            return None
        last = _han(last or first)
        found = chars.find(last, start)
        if found < 0:
            return None
        end = found + len(last)
    if note_first:
        end = chars.find(_han(note_first), end)
        if end < 0:
            return None
    if not (first or note_first) or end >= len(chars):
        return None
    start = positions[end - 1] + 1 if end else positions[0]
    while start < positions[end] and text[start] in _CLOSING:  # 》。 end the 經文
        start += 1
    return paragraph[0] + start


def _commentaries(original: str, lines: list[tuple[int, int]], first_line: int,
                  blocks: list[Aside]) -> list[Aside]:
    marks = re.compile("|".join(map(re.escape, rules()["commentary"]["marks"])))
    found: list[Aside] = []
    starts = [span[0] for span in lines]
    for match in marks.finditer(original, lines[0][0] if lines else len(original)):
        if any(a.start <= match.start() < a.end for a in blocks) or (
                found and match.start() < max(a.end for a in found[-2:])):
            continue  # found grows in text order: only its last entries can cover this
        index = bisect.bisect_right(starts, match.start()) - 1
        last = _last_commentary_line(original, lines, index)
        found.append(Aside("疏", match.start(), lines[last][1], first_line + index))
        before = index - 1
        while before >= 0 and not original[slice(*lines[before])].strip():
            before -= 1
        if before < 0 or original[lines[index][0]:match.start()].strip():
            continue  # the 疏 does not open its paragraph: no paragraph before it to split
        paragraph = lines[before]
        if any(a.start < paragraph[1] and paragraph[0] < a.end for a in (*blocks, *found)):
            continue
        note = _run_on_note(original, paragraph, original[match.end():lines[last][1]])
        if note is not None:
            found.append(Aside("注", note, paragraph[1], first_line + before))
    return found


@functools.cache
def _title_line() -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in rules()["titles"]["lines"]))


def _titles(original: str, lines: list[tuple[int, int]], first_line: int) -> list[Aside]:
    """Title lines of the book (卷 and chapter titles, character counts): not the rite."""
    line_end = rules()["print"]["line_end"]
    pattern = _title_line()
    return [Aside("卷題", a, b, first_line + index) for index, (a, b) in enumerate(lines)
            if pattern.fullmatch(normalise(original[a:b].replace(line_end, "").strip()))]


@functools.cache
def _apparatus_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern, re.Pattern]:
    table = rules()["apparatus"]
    return (re.compile(table["comment"]),
            re.compile(f"{table['outline']}|{table['section_heading']}"),
            re.compile(table["paragraph_number"]), re.compile(table["heading_number"]))


@functools.cache
def _section_names() -> frozenset[str]:
    """The names 江永 gives the rite's sections, normalised."""
    return frozenset(map(normalise, gloss.load().sections))


class _Reach:
    """The asides found so far, asked in log time whether one holds an offset or meets a
    span (a text of thousands of labelled lines asked of each one took minutes)."""

    def __init__(self, asides: list[Aside]) -> None:
        spans = sorted((a.start, a.end) for a in asides)
        self.starts = [a for a, _ in spans]
        self.ends = list(itertools.accumulate((b for _, b in spans), max))  # furthest so far

    def holds(self, offset: int) -> bool:
        """Whether an aside starts at or before ``offset`` and ends after it."""
        i = bisect.bisect_right(self.starts, offset) - 1
        return i >= 0 and offset < self.ends[i]

    def meets(self, start: int, end: int) -> bool:
        """Whether an aside overlaps ``[start, end)``."""
        i = bisect.bisect_left(self.starts, end) - 1
        return i >= 0 and start < self.ends[i]


def _covered(lines: list[tuple[int, int]], asides: list[Aside]) -> list[bool]:
    """For each line, whether it opens inside an aside already found."""
    reach = _Reach(asides)
    return [reach.holds(a) for a, _ in lines]


def _punctuated(original: str, lines: list[tuple[int, int]], covered: list[bool]) -> bool:
    """Whether the edition punctuates: its long lines carry sentence marks (not counting
    the lines already set aside, whose labels 注： and 按： are marks)."""
    table = rules()["apparatus"]
    marks = set(table["sentence_marks"])
    long_lines = [original[a:b] for (a, b), aside in zip(lines, covered, strict=True)
                  if not aside and sum(map(is_han, original[a:b])) >= table["punctuated_line"]]
    marked = sum(not marks.isdisjoint(line) for line in long_lines)
    return bool(long_lines) and marked >= table["punctuated_share"] * len(long_lines)


def _bare_headings(original: str, lines: list[tuple[int, int]], asides: list[Aside]
                   ) -> set[int]:
    """The lines that hold a section heading alone, after a number or none (誘射, 1. 誘射).

    A candidate is a short line of Han characters alone that the rite's words follow (not
    a line set aside: a fragment of the 經文 between two notes printed on lines of their
    own is followed by its note). Where the edition punctuates, every candidate is a
    heading; else those that are 江永's names, where enough of them are lines of their own.
    """
    table = rules()["apparatus"]
    number = _apparatus_patterns()[3]
    covered = _covered(lines, asides)
    candidates: dict[int, str] = {}
    following = None  # the next line that is not blank, walking back from the end
    for index in range(len(lines) - 1, -1, -1):
        line = original[slice(*lines[index])]
        words = line[m.end():].strip() if (m := number.match(line)) else line.strip()
        if (0 < len(words) <= table["heading_longest"] and all(map(is_han, words))
                and not words.startswith("右")  # 右… headings close their section: source's
                and following is not None and not covered[following]):
            candidates[index] = normalise(words)
        if line.strip():
            following = index
    if _punctuated(original, lines, covered):
        return set(candidates)
    named = {index for index, words in candidates.items() if words in _section_names()}
    enough = len({candidates[index] for index in named}) >= table["heading_names_least"]
    return named if enough else set()


def _apparatus(original: str, lines: list[tuple[int, int]], first_line: int,
               asides: list[Aside]) -> list[Aside]:
    """The edition's own apparatus: comment lines (版記), outline headings and section
    headings, numbered or not (卷題), and the paragraph numbers that open a line (版記).
    None of it is the rite's."""
    comment, outline, number, _ = _apparatus_patterns()
    headings = _bare_headings(original, lines, asides)
    found = []
    for index, (a, b) in enumerate(lines):
        line = original[a:b]
        if comment.match(line):
            found.append(Aside("版記", a, b, first_line + index))
        elif outline.match(line) or index in headings:
            found.append(Aside("卷題", a, b, first_line + index))
        elif (m := number.match(line)) and m.end() > m.start():
            found.append(Aside("版記", a + m.start(), a + m.end(), first_line + index))
    return found


def _labelled(original: str, start: int, first_line: int) -> list[Aside]:
    """鄭注 labelled 注 run on in the 經's lines, and the labels of the bracketed notes (see
    ``[labelled]``); nothing in a text without such a label."""
    table = rules()["labelled"]
    brackets = rules()["notes"]["brackets"]
    label = re.compile("|".join(map(re.escape, table["labels"])))
    openers = "".join(map(re.escape, brackets))
    if not re.search(rf"(?:{label.pattern})[{openers}]", original[start:]):
        return []  # the edition labels no note: nothing to read (and no scan)
    closers = "".join(map(re.escape, brackets.values()))
    tokens = re.compile(rf"[{openers}]|[{closers}]|(?P<label>{label.pattern})(?=[{openers}])"
                        rf"|(?P<note>{re.escape(table['note'])})")
    marks: list[tuple[int, int, bool]] = []  # (start, end, is a label), outside brackets
    depth = 0
    for token in tokens.finditer(original, start):
        if token.group(0) in brackets:
            depth += 1
        elif token.lastgroup is None:
            depth = max(0, depth - 1)
        elif depth == 0:
            marks.append((token.start(), token.end(), token.lastgroup == "label"))
    if not any(is_label for *_, is_label in marks):
        return []

    breaks = [m.start() for m in re.finditer("\n", original[start:])]

    def line(at: int) -> int:
        return first_line + bisect.bisect_left(breaks, at - start)

    found_asides = [Aside("版記", a, b, line(a)) for a, b, is_label in marks if is_label]
    for (a, _, is_label), (b, _, next_is_label) in itertools.pairwise(marks):
        if not is_label and next_is_label:
            found_asides.append(Aside("注", a, b, line(a)))
    return found_asides


@functools.cache
def _label_line() -> re.Pattern:
    return re.compile(rules()["commentary"]["label_line"], re.MULTILINE)  # ^: a line's start


def _labelled_lines(original: str, lines: list[tuple[int, int]], first_line: int
                    ) -> list[Aside]:
    """Lines that open with a commentary's label (注：, 疏：, 按：, 【注】 …): the whole line."""
    pattern = _label_line()
    return [Aside("注", a, b, first_line + index) for index, (a, b) in enumerate(lines)
            if pattern.match(original, a, b)]


@functools.cache
def _block_label() -> re.Pattern:
    """A block's word as a label opening a line with more after it: 【译文】…, 译文：…"""
    words = "|".join(sorted((re.escape(w) for ws in rules()["blocks"].values() for w in ws),
                            key=len, reverse=True))
    space = r"[^\S\n]*"  # within the line
    label = (rf"^{space}(?:[【\[〔［]{space}(?P<b>{words}){space}[】\]〕］]{space}[：:]?"
             rf"|(?P<c>{words}){space}[：:])(?={space}\S)")
    return re.compile(label, re.MULTILINE)  # ^: a line's start


def _block_labels(original: str, lines: list[tuple[int, int]], first_line: int
                  ) -> list[Aside]:
    """Lines that open with a block's label (译文：…, 【注释】…): that block's kind to the
    line's end; the 經文's own label (原文：, 【經】) alone, the line being the rite's."""
    pattern = _block_label()
    kinds = {w: kind for kind, words in rules()["blocks"].items() for w in words}
    found = []
    for index, (a, b) in enumerate(lines):
        if match := pattern.match(original, a, b):
            kind = kinds[match.group("b") or match.group("c")]
            end = match.end() if kind == "text" else b
            found.append(Aside("版記" if kind == "text" else kind, a, end, first_line + index))
    return found


def find_asides(original: str, start: int = 0) -> list[Aside]:
    """The asides of ``original`` from offset ``start`` (after the header), in order."""
    lines = _lines(original, start)
    first_line = original.count("\n", 0, start) + 1
    blocks = _blocks(original, lines, first_line)
    asides = blocks + _commentaries(original, lines, first_line, blocks)
    reach = _Reach(asides)
    asides += [t for t in _labelled_lines(original, lines, first_line)
               if not reach.meets(t.start, t.end)]
    for found in (_labelled(original, start, first_line),
                  _block_labels(original, lines, first_line)):
        reach = _Reach(asides)
        asides += [t for t in found if not reach.holds(t.start)]
    reach = _Reach(blocks)
    asides += [t for t in _titles(original, lines, first_line) if not reach.holds(t.start)]
    reach = _Reach(asides)
    asides += [t for t in _apparatus(original, lines, first_line, asides)
               if not reach.holds(t.start)]
    return sorted(asides, key=lambda a: a.start)
