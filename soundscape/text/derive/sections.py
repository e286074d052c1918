"""The rite's parts: its sections, and the 記 kept apart.

With ``右…`` headings (the 江永 text) the headings close the sections. Without them (the
《四部叢刊》 print, plain 經文) a section opens at the words that open a unit of the rite
(``data/sections.toml``): a **mark** (a time of day 厥明 / 羹定, a stage 無算爵, the mats
spread for the musicians, 笙入 / 間歌 / 合樂, a conditional proceeding 若命曰) opens one
wherever it stands; an **opener** (a cup washed for a new 獻 / 酢 / 酬, a cup raised, the
lord taking up a cup for a 旅, an officer beginning a task: 司射適次, 司馬命…) opens one
once the running section holds ``min_chars`` characters. The rule is measured against the
headings of the bundled 大射 by ``bench/bench_derive.py``.

The 記, the supplement of variant rules after the rite, starts at the first 記 of the
經文 (after the last ``右…`` heading, where there are headings; not a cited ``…記曰``) and
is one section of part ``記``: never performed, its music cues become variants.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re

from soundscape.cuesheet import Section
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text.derive.formulas import rules
from soundscape.text.hanzi import PART_NUMERALS
from soundscape.text.source import Text

__all__ = ["boundaries", "ji_start", "sections_of"]

_NAME_CHARS = 8


@functools.cache
def _rule() -> tuple[re.Pattern, re.Pattern, int]:
    """The marks and the openers (one pattern each) and the openers' minimum section."""
    table = read_toml(data_dir() / "sections.toml")

    def joined(group: dict[str, list[str]]) -> re.Pattern:
        return re.compile("|".join(f"(?:{p})" for patterns in group.values() for p in patterns))

    return joined(table["marks"]), joined(table["openers"]), table["min_chars"]


def ji_start(chars: str, after: int = 0) -> int | None:
    """Offset of the 記 in ``chars`` (the first 記 at or past ``after`` that is not cited:
    ``鄉射記曰``, ``禮記``), or None if the text has none."""
    table = rules()["ji"]
    for found in re.finditer(re.escape(table["mark"]), chars):
        at = found.start()
        cited = (at > 0 and chars[at - 1] in table["cited_after"]) or \
            chars[at + 1:at + 2] in tuple(table["cited_before"])
        if at > 0 and at >= after and not cited:
            return at
    return None


def boundaries(chars: str, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets in ``chars[start:end]`` where a section opens by the rule (``start`` first).

    A mark opens a section wherever it starts; an opener only ``min_chars`` or more after
    the last opening.
    """
    end = len(chars) if end is None else end
    marks, openers, minimum = _rule()
    candidates = sorted({(m.start(), True) for m in marks.finditer(chars, start, end)}
                        | {(m.start(), False) for m in openers.finditer(chars, start, end)})
    found = [start]
    for offset, is_mark in candidates:
        if offset > found[-1] and (is_mark or offset - found[-1] >= minimum):
            found.append(offset)
    return found


def sections_of(text: Text, headed: Text | None = None) -> list[Section]:
    """Sections from the ``右…`` headings, else by the rule; the 記 last, apart.

    A text without headings whose rite's own text has them (``headed``: the 大射 in 江永's
    print) names the sections the rule cuts after the headings they align with: the
    section that opens where a heading's section opens takes its name, the later ones the
    rule cuts inside it ``name（二）``, ``name（三）`` … (else their opening words)."""
    chars = text.chars
    # with 右 headings the rite runs to its last one: a 記 before it is no supplement
    ji = ji_start(chars, after=text.headings[-1].end if text.headings else 0)
    body_end = ji if ji is not None else len(chars)
    sections: list[Section] = []

    def add(name: str, span: tuple[int, int], part: str = "") -> None:
        sections.append(Section(f"s{len(sections) + 1:02d}", name, span, part=part))

    if text.headings:
        start = 0
        for heading in text.headings:
            if start < heading.end <= body_end:
                add(heading.name, (start, heading.end))
                start = heading.end
        if start < body_end:
            add("全文" if not sections else "餘", (start, body_end))
    elif body_end:
        opens = boundaries(chars, 0, body_end)
        ends = [*opens[1:], body_end]
        named = _aligned_names(chars, opens, headed) if headed and headed.headings else {}
        for a, b in zip(opens, ends, strict=True):
            add(named.get(a) or chars[a:min(b, a + _NAME_CHARS)]
                + ("…" if b - a > _NAME_CHARS else ""), (a, b))
    if ji is not None:
        add("記", (ji, len(chars)), part="記")
    return sections


def _aligned_names(chars: str, opens: list[int], headed: Text) -> dict[int, str]:
    """Offset of a section's opening → the name of the heading's section it falls in (see
    :func:`sections_of`); the two texts are aligned character by character."""
    blocks = difflib.SequenceMatcher(None, headed.chars, chars,
                                     autojunk=False).get_matching_blocks()
    starts = [0, *(h.end for h in headed.headings[:-1])]
    parts: dict[int, int] = {}
    named = {}
    for at in opens:
        there = next((x + at - y for x, y, n in blocks if y <= at < y + n), None)
        if there is None:
            continue  # not in the headed text (its words differ here): the opening words
        k = bisect.bisect_right(starts, there) - 1
        parts[k] = 1 if there == starts[k] else parts.get(k, 1) + 1
        if parts[k] - 2 < len(PART_NUMERALS):
            named[at] = headed.headings[k].name + (
                f"（{PART_NUMERALS[parts[k] - 2]}）" if parts[k] > 1 else "")
    return named
