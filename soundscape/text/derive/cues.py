"""Music and voice cues from the formulas found by :mod:`soundscape.text.derive`.

Music: a cue starts at the step of its formula. 金奏 stops at the next step
where 樂闋 stands (before any other music starts), else it runs its length;
歌, 管, 笙 and 合樂 run their length (N終); the shooting 節 stops at the last
卒射 of its section; 無算樂 lasts to the end of its section. Conditions the
text states in the same section (間若一, 不鼓不釋, 不以樂志) go with the 射 cue.

Voice: 諾以宮/商 and 舉旌/偃旌以宮/商 give cues where they stand. Where the text
repeats a procedure without restating the degrees (負侯許諾, 命去侯如初,
射…如初 after the flags were first named), the cues of the first occurrence
are repeated, quoting the later passage and naming the first in ``as_in``.
"""

from __future__ import annotations

import bisect
import collections

from soundscape.cuesheet import STOP_LENGTH, LayoutItem, MusicCue, Section, Step, VoiceCue
from soundscape.text import glossary
from soundscape.text.derive.formulas import Unit, patterns, rules
from soundscape.text.source import Text

__all__ = ["music_cues", "voice_cues"]


class _Steps:
    """The steps in text order, found by offset or id in logarithmic or constant time."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.starts = [s.span[0] for s in steps]
        self.index = {s.id: i for i, s in enumerate(steps)}
        self.by_section: dict[str, list[Step]] = {}
        for step in steps:
            self.by_section.setdefault(step.section, []).append(step)

    def of(self, unit: Unit) -> Step:
        """The step whose span holds the unit's first character."""
        return self.steps[bisect.bisect_right(self.starts, unit.start) - 1]


def _performers(kind: str, layout: list[LayoutItem]) -> tuple[tuple[str, ...], tuple]:
    table = rules()["kind"][kind]
    performers = list(table["performers"])
    for instrument in table["instruments"]:
        placed = [i.id for i in layout if i.instrument == instrument]
        performers += placed or [instrument]
    return tuple(performers), ()


def _forces(chars: str) -> tuple[tuple[str, int], ...]:
    match = patterns()["forces"].search(chars)
    if not match:
        return ()
    numerals = rules()["numerals"]
    forces = [("gong", numerals[match.group(1)])]
    if match.group(2):
        forces.append(("se", numerals[match.group(2)]))
    return tuple(forces)


def _note_after(text: Text, note_offsets: list[int], end: int) -> str:
    at = bisect.bisect_left(note_offsets, end)
    return text.notes[at].text if at < len(note_offsets) and note_offsets[at] <= end + 4 else ""


def _stop(kind: str, start: Step, steps: _Steps, stops: list[int], starts: list[int]) -> str:
    """The stop of a cue starting at ``start``; ``stops`` and ``starts`` are sorted indexes."""
    index = steps.index[start.id]
    if kind == "jinzou":
        later = bisect.bisect_right(starts, index)
        later_music = starts[later] if later < len(starts) else len(steps.steps)
        first = bisect.bisect_right(stops, index)
        if first < len(stops) and stops[first] < later_music:
            return steps.steps[stops[first]].id
        return STOP_LENGTH
    section_steps = steps.by_section[start.section]
    if kind == "she":
        shots = [s for s in section_steps if "卒射" in s.quote and "告" not in s.quote
                 and steps.index[s.id] > index]
        return shots[-1].id if shots else STOP_LENGTH
    if kind == "wusuan":
        return section_steps[-1].id
    return STOP_LENGTH


def music_cues(text: Text, sections: list[Section], steps: list[Step],
               units: dict[str, list[Unit]], layout: list[LayoutItem]) -> list[MusicCue]:
    """Music cues for every music formula, in text order."""
    found = _Steps(steps)
    music_units = [(s, u) for s in sections for u in units[s.id] if u.role == "music"]
    stops = sorted(found.index[found.of(u).id] for s in sections for u in units[s.id]
                   if u.role == "stop")
    starts = sorted(found.index[found.of(u).id] for _, u in music_units)
    note_offsets = [n.offset for n in text.notes]
    cues: list[MusicCue] = []
    count: collections.Counter[str] = collections.Counter()
    for section, unit in music_units:
        kind, piece = unit.info["kind"], unit.info["piece"]
        step = found.of(unit)
        chars = text.chars[section.span[0]:section.span[1]]
        conditions = tuple(c for c in rules()["conditions"] if c in chars) \
            if kind == "she" else ()
        performers, _ = _performers(kind, layout)
        forces = _forces(chars) if kind in ("ge", "he") else ()
        count[piece] += 1
        cues.append(MusicCue(
            piece if count[piece] == 1 else f"{piece}_{count[piece]}", piece, kind, performers,
            unit.info["repeats"], step.id, _stop(kind, step, found, stops, starts), conditions,
            text.quote(unit.start, unit.end), (unit.start, unit.end), forces=forces,
            note=_note_after(text, note_offsets, unit.end)))
    return cues


def voice_cues(text: Text, steps: list[Step], units: dict[str, list[Unit]]) -> list[VoiceCue]:
    """Voice cues: stated answers and flag calls, and their 如初 repetitions."""
    words = glossary.load()
    found = _Steps(steps)
    cues: list[VoiceCue] = []
    first: dict[str, list[VoiceCue]] = {}
    flagged_sections: set[str] = set()

    def add(unit: Unit, actor: str, what: str, degree: str, as_in: str = "") -> VoiceCue:
        step = found.of(unit)
        cue = VoiceCue(f"{actor}_{what}_{len(cues) + 1:02d}", actor, what, degree, step.id,
                       step.place, text.quote(unit.start, unit.end), (unit.start, unit.end),
                       as_in=as_in)
        cues.append(cue)
        return cue

    def repeat(unit: Unit, kind: str) -> None:
        for model in first.get(kind, []):
            add(unit, model.actor, model.what, model.degree, as_in=model.id)

    ordered = [u for section_units in units.values() for u in section_units]
    for index, unit in enumerate(ordered):
        step = found.of(unit)
        actor = words.id_of("actor", step.actor) or ""
        if unit.role == "voice" and actor:
            kind = "answer" if unit.info["what"] == "answer" else "flag"
            cue = add(unit, actor, unit.info["what"], unit.info["degree"])
            if kind == "flag":
                flagged_sections.add(step.section)
            if all(c.id != cue.id for c in first.get(kind, [])) and (
                    kind not in first or first[kind][-1].step == step.id
                    or _same_passage(first[kind], step, found)):
                first.setdefault(kind, []).append(cue)
        elif unit.role == "implied":
            repeat(unit, "answer")
        elif unit.role == "command" and unit.info["again"] and unit.info["order"] == "去侯":
            following = ordered[index + 1] if index + 1 < len(ordered) else None
            if following is None or following.role != "implied":
                repeat(unit, "answer")
        elif unit.role == "mark" and "flag" in first and step.section not in flagged_sections:
            flagged_sections.add(step.section)
            repeat(unit, "flag")
    return cues


def _same_passage(models: list[VoiceCue], step: Step, steps: _Steps) -> bool:
    """True if ``step`` follows the first model's step within a few steps of one section."""
    head = steps.steps[steps.index[models[0].step]]
    return head.section == step.section and steps.index[step.id] - steps.index[head.id] <= 3
