"""Derive a cue sheet from a text of the Yili.

The rules are the formulas the Yili uses wherever music is made or called
(:mod:`soundscape.text.derive.formulas`), not facts of one chapter, and the 設樂
clauses of the orchestra layout (:mod:`soundscape.text.derive.layout`); cues are
made from them in :mod:`soundscape.text.derive.cues`. Each cue quotes the passage it
came from; nothing is made up where no formula matched.

Steps: each section is cut at every named actor who acts (not one spoken to:
``揖賓``) and around every formula, so every character of the section belongs
to exactly one step.
"""

from __future__ import annotations

import itertools
import re

from soundscape.cuesheet import SCHEMA_VERSION, CueSheet, Section, Step, TextInfo
from soundscape.text import glossary
from soundscape.text.derive.cues import music_cues, voice_cues
from soundscape.text.derive.formulas import Unit, alternation, find_units, rules
from soundscape.text.derive.layout import derive_layout
from soundscape.text.source import Text

__all__ = ["derive", "sections_of"]


# --------------------------------------------------------------------- steps

def _actor_starts(chars: str) -> list[tuple[int, int, str]]:
    """(start, end, term) of each actor named as the one who acts."""
    words = glossary.load()
    terms = words.terms_longest_first("actor")
    markers = rules()["object_markers"]
    found, position = [], 0
    while position < len(chars):
        term = next((t for t in terms if chars.startswith(t, position)), None)
        if term is None:
            position += 1
            continue
        end = position + len(term)
        before = chars[position - 1] if position else ""
        if (not before or before not in markers) and not chars.startswith("之", end):
            found.append((position, end, term))
        position = end
    return found


def _cuts(chars: str, base: int, units: list[Unit]) -> list[int]:
    """Offsets (in ``chars``) where a new step begins, 0 included."""
    actors = {start: end for start, end, _ in _actor_starts(chars)}
    cuts = set(actors) | {0}
    particles = rules()["particles"]
    for unit in units:
        if unit.role == "mark":
            continue
        start = unit.start - base
        owner = max((c for c in cuts if c < start), default=None)
        between = chars[actors[owner]:start] if owner in actors else None
        if between is None or between.strip(particles):
            cuts.add(start)
        cuts.add(unit.end - base)
    return sorted(c for c in cuts if c < len(chars))


def _action(chars: str, unit: Unit | None) -> str:
    """The step's action: fixed by its formula, else the first action word outside names."""
    words = glossary.load()
    if unit is not None:
        fixed = {"music": {"ge": "歌", "he": "歌", "sheng": "奏", "guan": "管"}
                 .get(unit.info.get("kind"), "奏"),
                 "stop": "樂闋", "command": "命", "implied": "許諾",
                 "voice": {"answer": "許諾", "raise_flag": "舉旌",
                           "lower_flag": "偃旌"}.get(unit.info.get("what"))}
        if unit.role in fixed:
            return fixed[unit.role]
    for term in words.terms_longest_first("actor"):  # 射 in 司射 is a name, not shooting
        chars = chars.replace(term, "　" * len(term))
    terms = words.terms_longest_first("action")
    for position in range(len(chars)):
        for term in terms:
            if chars.startswith(term, position):
                return words.name("action", words.id_of("action", term))
    return "other"


def _place(chars: str) -> str:
    words = glossary.load()
    places = alternation(words.terms_longest_first("place"))
    preps = alternation(tuple(rules()["place_prepositions"]))
    match = re.search(rf"(?:{preps})({places})", chars)
    return words.id_of("place", match.group(1)) if match else ""


def _steps(text: Text, section: Section, units: list[Unit]) -> list[Step]:
    start, end = section.span
    chars = text.chars[start:end]
    cuts = [*_cuts(chars, start, units), len(chars)]
    actor_at = {s: term for s, _, term in _actor_starts(chars)}
    steps, actor = [], ""
    for number, (a, b) in enumerate(itertools.pairwise(cuts), start=1):
        unit = next((u for u in units if start + a <= u.start < start + b and u.role != "mark"),
                    None)
        piece = chars[a:b]
        if a in actor_at:
            actor = glossary.load().name("actor", glossary.load().id_of("actor", actor_at[a]))
        named = actor if a in actor_at or unit is None or unit.role != "music" else ""
        steps.append(Step(f"{section.id}.{number:02d}", section.id, named,
                          _action(piece, unit), _place(piece), text.quote(start + a, start + b),
                          (start + a, start + b)))
    return steps


# -------------------------------------------------------------------- sheet

def sections_of(text: Text) -> list[Section]:
    """Sections from the ``右…`` headings; a text without headings is one section."""
    sections, start = [], 0
    for heading in text.headings:
        if heading.end > start:
            sections.append(Section(f"s{len(sections) + 1:02d}", heading.name,
                                    (start, heading.end)))
            start = heading.end
    if start < len(text.chars):
        name = "全文" if not sections else "餘"
        sections.append(Section(f"s{len(sections) + 1:02d}", name, (start, len(text.chars))))
    return sections


def derive(text: Text, *, text_id: str = "text", title: str = "") -> CueSheet:
    """The cue sheet of ``text``: sections, steps, layout, music and voice cues."""
    sections = sections_of(text)
    units_by_section = {s.id: find_units(text.chars[s.span[0]:s.span[1]], s.span[0])
                        for s in sections}
    steps = [step for s in sections for step in _steps(text, s, units_by_section[s.id])]
    layout = derive_layout(text, sections)
    music = music_cues(text, sections, steps, units_by_section, layout)
    voices = voice_cues(text, steps, units_by_section)
    info = TextInfo(text_id, title, " ".join(text.header), len(text.chars))
    return CueSheet(SCHEMA_VERSION, info, tuple(sections), tuple(steps), tuple(layout),
                    tuple(music), tuple(voices))

