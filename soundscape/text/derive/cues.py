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
import functools

from soundscape.cuesheet import SINGERS, STOP_LENGTH, LayoutItem, MusicCue, Section, Step, VoiceCue
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text import glossary
from soundscape.text.derive.formulas import Unit, patterns, rules
from soundscape.text.derive.notation import pattern_condition
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
        return self.at(unit.start)

    def at(self, offset: int) -> Step:
        """The step whose span holds the character at ``offset``."""
        return self.steps[bisect.bisect_right(self.starts, offset) - 1]


def _rank(layout: list[LayoutItem], rank: str) -> str:
    """The host's rank: the rite's, else the lord's where the 設樂 hangs bells."""
    table = rules()["rank"]
    if rank or not layout:
        return rank
    lord = any(i.instrument in table["lord_instruments"] for i in layout)
    return table["lord"] if lord else table["other"]


def _performers(kind: str, layout: list[LayoutItem], piece: str = "",
                rank: str = "") -> tuple[tuple[str, ...], tuple]:
    table = rules()["kind"][kind]
    performers = list(table["performers"])
    instruments = table["instruments"]
    lower = rules()["by_rank"].get(piece)
    if lower and rank in lower["ranks"]:  # 陔 of a 大夫 or 士: the drum alone
        instruments = lower["instruments"]
    for instrument in instruments:
        placed = [i.id for i in layout if i.instrument == instrument]
        # an instrument the 設樂 does not place is named by its id only where nothing is
        # placed at all (the sequencer's default layout) or where it is a 工's (瑟)
        unplaced = [instrument] if not layout or instrument in SINGERS else []
        performers += placed or unplaced
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


def _upper(index: int, bounds: list[int], total: int) -> int:
    """The first of ``bounds`` (sorted step indexes) after ``index``, else ``total``."""
    at = bisect.bisect_right(bounds, index)
    return bounds[at] if at < len(bounds) else total


def _stop(cue: Unit, start: Step, steps: _Steps, marks: dict[str, list[int]]) -> str:
    """The step where the music of ``cue`` (starting at ``start``) stops, or ``length``.

    金奏 stops at the first 樂闋 before other music starts; 陔 is the rhythm of the
    guest's going out (鄭注: 陔之言戒也, played as he leaves), so it stops where he is
    out (出, 門外) within a few steps; the shooting 節 at the last 卒射 before the arrows
    are collected (命取矢) or other music starts; 無算樂 with its section.
    """
    kind, index, total = cue.info["kind"], steps.index[start.id], len(steps.steps)
    if cue.info["piece"] in rules()["walking"]["pieces"]:
        out = walked_out(start, steps)
        if out is None:
            return STOP_LENGTH
        after = steps.index[out.id] + 1
        if after < total and steps.steps[after].span[0] <= cue.start < steps.steps[after].span[1]:
            after += 1  # 賓出奏陔: the music's own words come after his going out
        return steps.steps[after].id if after < total else STOP_LENGTH
    if kind == "jinzou":
        later_music = _upper(index, marks["starts"], total)
        first = _upper(index, marks["stops"], total)
        return steps.steps[first].id if first < later_music else STOP_LENGTH
    if kind == "she":
        upper = min(_upper(index, marks["collect"], total), _upper(index, marks["starts"], total))
        shots = [s for s in steps.steps[index + 1:upper]
                 if "卒射" in s.quote and "告" not in s.quote]
        return shots[-1].id if shots else STOP_LENGTH
    if kind == "wusuan":  # to the end of its section, or until the next music (奏陔)
        last = steps.index[steps.by_section[start.section][-1].id]
        return steps.steps[max(index, min(last, _upper(index, marks["starts"], total) - 1))].id
    return STOP_LENGTH


def walking_start(step: Step, steps: _Steps) -> Step:
    """Where music that is the rhythm of a walk begins: at its step, or at the going out
    that the text names just before it (鄉飲酒禮 賓出奏陔: 鄭注 quotes 鄉射禮 賓降及階陔作賓出 —
    the 陔 sounds as he goes)."""
    index = steps.index[step.id]
    before = steps.steps[index - 1] if index else None
    walking = rules()["walking"]
    if before is not None and before.section == step.section and before.action in walking[
            "out_actions"]:
        return before
    return step


def walked_out(start: Step, steps: _Steps) -> Step | None:
    """The step where the walker of walking music goes out (its action 出), from ``start``
    within ``[walking] within_steps``; the music lasts to its end (the walk to the gate)."""
    walking = rules()["walking"]
    index = steps.index[start.id]
    last = min(len(steps.steps), index + 1 + walking["within_steps"])
    return next((s for s in steps.steps[index:last] if s.action in walking["out_actions"]),
                None)


def wusuan_ways(note: str) -> tuple[str, ...]:
    """How 無算樂 is played by the 鄭注 on it: 間 (the 笙 alone in turn) and/or 合."""
    return tuple(w for w in rules()["kind"]["wusuan"]["wusuan_ways"] if w in note)


def _conditions(text: Text, cue: Unit, start: Step, stop: str, steps: _Steps,
                collect: list[int]) -> tuple[str, ...]:
    """Conditions of shooting to music stated between the last collection of arrows and
    the end of the shooting (不鼓不釋 is said before 奏X以射)."""
    index = steps.index[start.id]
    before = bisect.bisect_left(collect, index)
    begin = steps.steps[collect[before - 1]].span[0] if before else 0
    end = steps.steps[steps.index[stop]].span[1] if stop in steps.index else cue.end
    return tuple(c for c in rules()["conditions"] if c in text.chars[begin:end])


class _Forces:
    """The statements of the 工's forces (工四人二瑟) in the text, found in one scan."""

    def __init__(self, text: Text) -> None:
        found = list(patterns()["forces"].finditer(text.chars))
        self.ends = [m.end() for m in found]
        self.forces = [_forces(m.group(0)) for m in found]

    def before(self, offset: int) -> tuple[tuple[str, int], ...]:
        """The forces of the last statement that ends by ``offset``."""
        at = bisect.bisect_right(self.ends, offset)
        return self.forces[at - 1] if at else ()


def scored() -> set[str]:
    """The piece ids that have a score in the repertoire."""
    return {p.stem for p in (data_dir() / "pieces").glob("*.toml") if not p.stem.startswith("_")}


def _variant(text: Text, ji: Section, unit: Unit) -> str:
    """The name of a 記 line's variant: its condition 若…則 (若以樂納賓, 若舞), else 記 and
    the formula (記:有房中之樂: a 若 with no 則 before the formula is another line's)."""
    table = rules()["ji"]
    head = max(ji.span[0], unit.start - table["condition_reach"])
    at = text.chars.rfind(table["condition"], head, unit.start)
    then = text.chars.find(table["then"], at, unit.end) if at >= 0 else -1
    if then < 0:
        return f"記:{text.chars[unit.start:unit.end]}"
    return text.chars[at:then]


def _run(cue: MusicCue, rite_cues: list[MusicCue], steps: _Steps) -> list[MusicCue]:
    """The rite's run of music that ``cue`` opens: it and the cues of its kind that follow
    it in its section (歌鹿鳴, 四牡, 皇皇者華), up to other music."""
    section = steps.steps[steps.index[cue.start]].section
    run = [cue]
    for later in rite_cues[rite_cues.index(cue) + 1:]:
        if later.kind != cue.kind or steps.steps[steps.index[later.start]].section != section:
            break
        run.append(later)
    return run


def _after(cue: MusicCue, rite_cues: list[MusicCue], steps: _Steps) -> str:
    """The step after the rite's run of music that ``cue`` opens; else ""."""
    following = steps.index[_run(cue, rite_cues, steps)[-1].start] + 1
    return steps.steps[following].id if following < len(steps.steps) else ""


def _replaces(text: Text, unit: Unit, anchor: str, rite_cues: list[MusicCue],
              steps: _Steps) -> tuple[str, ...]:
    """The rite's cues a 記 variant plays in place of (``data/derive_rules.toml`` [ji]).

    1. Where the rite has the same piece (升歌鹿鳴): the rite's run that piece opens (its
       四牡 and 皇皇者華 too: 鄭注 on 大射, 歌鹿鳴三終而不歌四牡皇皇者華).
    2. Where the variant's words name the entry of another kind (笙入): the rite's first
       run of that kind after the anchor (the 笙's 南陔 白華 華黍 for 下管新宮).
    3. Where the 記 goes on with 遂 to music of a kind (遂合鄉樂; 鄭注: 言遂者，不間也):
       the rite's music after the anchor before its first cue of that kind (the 間歌).
    """
    table = rules()["ji"]
    same = next((c for c in rite_cues if c.piece == unit.info["piece"]), None)
    if same:
        return tuple(c.id for c in _run(same, rite_cues, steps))
    if not anchor:
        return ()
    later = [c for c in rite_cues if steps.index[c.start] >= steps.index[anchor]]
    gone: list[MusicCue] = []
    for words, kind in table["enters"].items():
        first = next((c for c in later if c.kind == kind), None)
        if words in text.chars[unit.start:unit.end] and first:
            gone += _run(first, rite_cues, steps)
    on = unit.end + len(table["straight_on"])
    if text.chars.startswith(table["straight_on"], unit.end):
        kind = next((k for w, k in table["straight_to"].items()
                     if text.chars.startswith(w, on)), None)
        to = next((i for i, c in enumerate(later) if c.kind == kind), 0)
        gone += later[:to]
    ids = {c.id for c in gone}
    return tuple(c.id for c in rite_cues if c.id in ids)


@functools.cache
def _songs(piece: str) -> frozenset[str]:
    """The songs of a selection piece (房中之樂: the 周南 and 召南), else none."""
    path = data_dir() / "pieces" / f"{piece}.toml"
    return frozenset(read_toml(path).get("songs", [])) if path.is_file() else frozenset()


def _anchor(text: Text, ji: Section, unit: Unit, steps: _Steps,
            rite_cues: list[MusicCue]) -> str:
    """The step of the rite a 記 variant applies at.

    1. The rite's cue of the same piece (升歌鹿鳴: in place of the rite's 鹿鳴).
    2. A selection of songs the rite sings follows the last of them (房中之樂, the 周南
       and 召南, after the 鄉樂).
    3. Where the rite has the words that lead to it in the 記 (up to six characters after
       its condition: 賓及庭 before 奏肆夏 finds 賓入及庭), the longest such words nearest
       the formula, down to two characters; where the rite plays music at those words, the
       variant follows that music and the pieces of its kind after it (下管新宮 after the
       升歌 鹿鳴…; 勺 after the 鄉樂: 鄭注 既合鄉樂，萬舞而奏之).
    4. Else none.
    """
    same = next((c for c in rite_cues if c.piece == unit.info["piece"]), None)
    if same:
        return same.start
    selection = _songs(unit.info["piece"])  # read once, not once per cue
    songs = [c for c in rite_cues if c.piece in selection]
    if songs:
        return _after(songs[-1], songs[-1:], steps)
    lead = text.chars[max(ji.span[0], unit.start - 6):unit.start]
    lead = lead.rsplit(rules()["ji"]["then"], 1)[-1]
    for size in range(min(4, len(lead)), 1, -1):
        for at in range(len(lead) - size, -1, -1):  # nearest the formula first
            found = text.chars.find(lead[at:at + size], 0, ji.span[0])
            if found >= 0:
                step = steps.steps[bisect.bisect_right(steps.starts, found) - 1].id
                music = next((c for c in rite_cues if c.start == step), None)
                return _after(music, rite_cues, steps) if music else step
    return ""


def music_cues(text: Text, sections: list[Section], steps: list[Step],
               units: dict[str, list[Unit]], layout: list[LayoutItem],
               rank: str = "") -> list[MusicCue]:
    """Music cues for every music formula with a score, in text order (the 記's as variants).

    ``rank`` is the host's (大夫 …) where the rite is known; else it is read from the 設樂.
    """
    rank = _rank(layout, rank)
    found = _Steps(steps)
    scored_ids = scored()
    music_units = [(s, u) for s in sections for u in units[s.id]
                   if u.role == "music" and u.info["piece"] in scored_ids]
    marks = {"stops": sorted(found.index[found.of(u).id] for s in sections for u in units[s.id]
                             if u.role == "stop"),
             "starts": sorted(found.index[found.of(u).id] for _, u in music_units),
             "collect": sorted(found.index[found.of(u).id] for s in sections for u in units[s.id]
                               if u.role == "command" and u.info["order"] == "取矢")}
    note_offsets = [n.offset for n in text.notes]
    stated = _Forces(text)
    printed = pattern_condition(text)  # a drum pattern the edition prints, for the 射節
    cues: list[MusicCue] = []
    count: collections.Counter[str] = collections.Counter()
    for section, unit in music_units:
        kind, piece = unit.info["kind"], unit.info["piece"]
        step = found.at(unit.info.get("at", unit.start))  # an order's music: after its 諾
        if piece in rules()["walking"]["pieces"]:
            step = walking_start(step, found)
        stop = _stop(unit, step, found, marks)
        conditions = (_conditions(text, unit, step, stop, found, marks["collect"])
                      + printed if kind == "she" else ())
        note = _note_after(text, note_offsets, unit.end)
        if kind == "wusuan":  # 間 and 合 as the 鄭注 on 無算樂 says
            conditions = wusuan_ways(note)
        performers, _ = _performers(kind, layout, piece, rank)
        forces = (stated.before(unit.start) if kind in ("ge", "he", "wusuan", "she")
                  else ())
        variant = anchor = ""
        replaces: tuple[str, ...] = ()
        if section.part == "記":
            rite_cues = [c for c in cues if not c.variant]
            variant = _variant(text, section, unit)
            anchor = _anchor(text, section, unit, found, rite_cues)
            replaces = _replaces(text, unit, anchor, rite_cues, found)
        count[piece] += 1
        cues.append(MusicCue(
            piece if count[piece] == 1 else f"{piece}_{count[piece]}", piece, kind, performers,
            unit.info["repeats"], step.id, stop, conditions,
            text.quote(unit.start, unit.end), (unit.start, unit.end), forces=forces,
            note=note, variant=variant, anchor=anchor,
            replaces=replaces))
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
