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

import difflib
import functools
import re

from soundscape.cuesheet import Section
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text.derive.formulas import rules
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
    print) is cut where those headings fall in it, the two texts aligned character by
    character: each section keeps the heading's name and number (``s18`` is 樂賓 in any
    edition; a section whose words a print lost is left out, its number with it)."""
    chars = text.chars
    # with 右 headings the rite runs to its last one: a 記 before it is no supplement
    ji = ji_start(chars, after=text.headings[-1].end if text.headings else 0)
    body_end = ji if ji is not None else len(chars)
    sections: list[Section] = []

    def add(name: str, span: tuple[int, int], part: str = "", number: int = 0) -> None:
        number = number or (int(sections[-1].id[1:]) + 1 if sections else 1)
        sections.append(Section(f"s{number:02d}", name, span, part=part))

    if text.headings:
        start = 0
        for heading in text.headings:
            if start < heading.end <= body_end:
                add(heading.name, (start, heading.end))
                start = heading.end
        if start < body_end:
            add("全文" if not sections else "餘", (start, body_end))
    elif body_end and headed is not None and headed.headings:
        for number, name, span in _aligned_sections(chars, body_end, headed):
            add(name, span, number=number)
    elif body_end:
        opens = boundaries(chars, 0, body_end)
        for a, b in zip(opens, [*opens[1:], body_end], strict=True):
            add(chars[a:min(b, a + _NAME_CHARS)] + ("…" if b - a > _NAME_CHARS else ""), (a, b))
    if ji is not None:
        add("記", (ji, len(chars)), part="記")
    return sections


#: The shortest run of characters the two texts share that aligns them: a shorter one is
#: a coincidence (an excerpt's title line matched a character here and there of 戒百官).
_ALIGNED_RUN = 8


def _aligned_sections(chars: str, end: int, headed: Text
                      ) -> list[tuple[int, str, tuple[int, int]]]:
    """(number, name, span in ``chars[:end]``) of each of ``headed``'s sections, cut where
    its headings fall once the two texts are aligned character by character (runs of
    ``_ALIGNED_RUN`` or more): a section none of whose words the text holds (a print's lost
    pages, the rest of the rite around an excerpt) is left out, its number with it; the first
    opens at 0 and the last closes at ``end``, so nothing of the text is lost."""
    blocks = [b for b in difflib.SequenceMatcher(None, headed.chars, chars[:end],
                                                 autojunk=False).get_matching_blocks()
              if b.size >= _ALIGNED_RUN]

    def there(at: int) -> int:  # where ``at`` of the headed text stands in ``chars``
        for x, y, n in blocks:
            if at < x + n:
                return y + max(at - x, 0)
        return end

    starts = [0, *(h.end for h in headed.headings[:-1])]
    ends = [*starts[1:], len(headed.chars)]
    held = [(k, h.name, there(a)) for k, (h, a, b) in enumerate(zip(
        headed.headings, starts, ends, strict=True)) if any(x < b and x + n > a
                                                             for x, _, n in blocks)]
    opens = [0, *(at for _, _, at in held[1:]), end]
    return [(k + 1, name, (a, b)) for (k, name, _), a, b in zip(held, opens, opens[1:],
                                                                 strict=False) if b > a]
