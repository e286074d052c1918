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

from soundscape.cuesheet import STOP_LENGTH, LayoutItem, MusicCue, Section, Step, VoiceCue
from soundscape.text import glossary
from soundscape.text.derive.formulas import Unit, patterns, rules
from soundscape.text.source import Text

__all__ = ["music_cues", "voice_cues"]


def _step_of(steps: list[Step], unit: Unit) -> Step:
    return next(s for s in steps if s.span[0] <= unit.start < s.span[1])


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


def _note_after(text: Text, end: int) -> str:
    return next((n.text for n in text.notes if end <= n.offset <= end + 4), "")


def _stop(kind: str, start: Step, steps: list[Step], section_steps: list[Step],
          stops: list[Step], starts: list[int]) -> str:
    index = steps.index(start)
    if kind == "jinzou":
        later_music = min((i for i in starts if i > index), default=len(steps))
        stop = next((s for s in stops if index < steps.index(s) < later_music), None)
        return stop.id if stop else STOP_LENGTH
    if kind == "she":
        shots = [s for s in section_steps if "卒射" in s.quote and "告" not in s.quote
                 and steps.index(s) > index]
        return shots[-1].id if shots else STOP_LENGTH
    if kind == "wusuan":
        return section_steps[-1].id
    return STOP_LENGTH


def music_cues(text: Text, sections: list[Section], steps: list[Step],
               units: dict[str, list[Unit]], layout: list[LayoutItem]) -> list[MusicCue]:
    """Music cues for every music formula, in text order."""
    music_units = [(s, u) for s in sections for u in units[s.id] if u.role == "music"]
    stops = [_step_of(steps, u) for s in sections for u in units[s.id] if u.role == "stop"]
    starts = [steps.index(_step_of(steps, u)) for _, u in music_units]
    cues: list[MusicCue] = []
    for section, unit in music_units:
        kind, piece = unit.info["kind"], unit.info["piece"]
        step = _step_of(steps, unit)
        section_steps = [s for s in steps if s.section == section.id]
        chars = text.chars[section.span[0]:section.span[1]]
        conditions = tuple(c for c in rules()["conditions"] if c in chars) \
            if kind == "she" else ()
        performers, _ = _performers(kind, layout)
        forces = _forces(chars) if kind in ("ge", "he") else ()
        count = sum(1 for c in cues if c.piece == piece)
        cues.append(MusicCue(
            piece if count == 0 else f"{piece}_{count + 1}", piece, kind, performers,
            unit.info["repeats"], step.id,
            _stop(kind, step, steps, section_steps, stops, starts), conditions,
            text.quote(unit.start, unit.end), (unit.start, unit.end), forces=forces,
            note=_note_after(text, unit.end)))
    return cues


def voice_cues(text: Text, steps: list[Step], units: dict[str, list[Unit]]) -> list[VoiceCue]:
    """Voice cues: stated answers and flag calls, and their 如初 repetitions."""
    words = glossary.load()
    cues: list[VoiceCue] = []
    first: dict[str, list[VoiceCue]] = {}
    flagged_sections: set[str] = set()

    def add(unit: Unit, actor: str, what: str, degree: str, as_in: str = "") -> VoiceCue:
        step = _step_of(steps, unit)
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
        step = _step_of(steps, unit)
        actor = words.id_of("actor", step.actor) or ""
        if unit.role == "voice" and actor:
            kind = "answer" if unit.info["what"] == "answer" else "flag"
            cue = add(unit, actor, unit.info["what"], unit.info["degree"])
            if kind == "flag":
                flagged_sections.add(step.section)
            if all(c.id != cue.id for c in first.get(kind, [])) and (
                    kind not in first or first[kind][-1].step == step.id
                    or _same_passage(first[kind], step, steps)):
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


def _same_passage(models: list[VoiceCue], step: Step, steps: list[Step]) -> bool:
    """True if ``step`` follows the first model's step within a few steps of one section."""
    head = next(s for s in steps if s.id == models[0].step)
    return head.section == step.section and steps.index(step) - steps.index(head) <= 3
