"""The rite's parts: its sections, and the 記 kept apart.

With ``右…`` headings (the 江永 text) the headings close the sections. Without them (the
《四部叢刊》 print, plain 經文) a section opens where one of the officers who conduct the
rite begins a new proceeding with a verb of preparation, motion or command (主人洗,
司射適次, 小臣請媵爵者, 賓醉 …), once the running section holds ``min_chars``
characters (``data/derive_rules.toml`` ``[sections]``). The rule is measured against the
headings of the bundled 大射 by ``bench/bench_derive.py``.

The 記, the supplement of variant rules after the rite, starts at the first 記 of the
經文 and is one section of part ``記``: never performed, its music cues become variants.
"""

from __future__ import annotations

import functools
import re

from soundscape.cuesheet import Section
from soundscape.text.derive.formulas import alternation, rules
from soundscape.text.source import Text

__all__ = ["boundaries", "ji_start", "sections_of"]

_NAME_CHARS = 8


@functools.cache
def _opening() -> re.Pattern:
    table = rules()["sections"]
    return re.compile(f"(?:{alternation(tuple(table['openers']))})"
                      f"(?:{alternation(tuple(table['verbs']))})")


def ji_start(chars: str) -> int | None:
    """Offset of the 記 in ``chars``, or None if the text has none."""
    found = chars.find(rules()["ji"]["mark"])
    return found if found > 0 else None


def boundaries(chars: str, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets in ``chars[start:end]`` where a section opens by the rule (``start`` first)."""
    end = len(chars) if end is None else end
    minimum = rules()["sections"]["min_chars"]
    found = [start]
    for match in _opening().finditer(chars, start, end):
        if match.start() - found[-1] >= minimum:
            found.append(match.start())
    return found


def sections_of(text: Text) -> list[Section]:
    """Sections from the ``右…`` headings, else by the rule; the 記 last, apart."""
    chars = text.chars
    ji = ji_start(chars)
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
        for a, b in zip(opens, [*opens[1:], body_end], strict=True):
            add(chars[a:min(b, a + _NAME_CHARS)] + ("…" if b - a > _NAME_CHARS else ""),
                (a, b))
    if ji is not None:
        add("記", (ji, len(chars)), part="記")
    return sections
