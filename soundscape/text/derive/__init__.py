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

import bisect
import dataclasses
import functools
import itertools
import re
from collections.abc import Sequence

from soundscape.cuesheet import (
    EDITION_LONGEST,
    NAME_LONGEST,
    SCHEMA_VERSION,
    CueSheet,
    Section,
    Step,
    TextInfo,
)
from soundscape.text import glossary
from soundscape.text.derive import rites
from soundscape.text.derive.cues import (
    _Steps,
    music_cues,
    voice_cues,
    walked_out,
    wusuan_ways,
)
from soundscape.text.derive.formulas import Unit, alternation, find_units, played_orders, rules
from soundscape.text.derive.generic import generic_layout
from soundscape.text.derive.layout import derive_layout, with_sheng_forces
from soundscape.text.derive.repeats import with_repeats
from soundscape.text.derive.sections import sections_of
from soundscape.text.derive.speech import Printed, answer_starts, printed_marks, speech_cues
from soundscape.text.source import Text
from soundscape.validate import CONTROL

__all__ = ["derive", "edition_of", "place_mentions", "sections_of", "unscored_music"]


# --------------------------------------------------------------------- steps

@functools.cache
def _term_pattern(category: str) -> re.Pattern:
    """The glossary's terms of ``category`` as one regex, longest first (greedy, left to right)."""
    return re.compile(alternation(glossary.load().terms_longest_first(category)))


@functools.cache
def _place_pattern() -> re.Pattern:
    places = alternation(glossary.load().terms_longest_first("place"))
    preps = alternation(tuple(rules()["place_prepositions"]))
    # not a place that a facing follows (於堂西面: the 堂, facing west)
    return re.compile(rf"(?:{preps})({places})(?!面)")


def _actor_starts(chars: str) -> list[tuple[int, int, str]]:
    """(start, end, term) of each actor named as the one who acts: not an object (揖賓), not
    an owner (公之), not a condition's (若飲公則侍射者: the 侍射者 acts)."""
    markers, then = rules()["object_markers"], rules()["condition_then"]
    actors = _term_pattern("actor")
    found = []
    for match in actors.finditer(chars):
        start, end = match.span()
        if (start and chars[start - 1] in markers) or chars.startswith("之", end):
            continue
        if chars.startswith(then, end) and actors.match(chars, end + len(then)):
            continue
        found.append((start, end, match.group(0)))
    return found


def _cuts(chars: str, base: int, units: list[Unit],
          actor_starts: list[tuple[int, int, str]],
          printed: Printed) -> list[int]:
    """Offsets (in ``chars``, which start at ``base`` in the text) where a new step begins,
    0 included; never inside words the edition prints in quotation marks (``printed``): a
    name said is no one acting (「請以樂賓」)."""
    actor_starts = [a for a in actor_starts if not printed.inside(base + a[0])]
    actors = {start: end for start, end, _ in actor_starts}
    cuts = sorted(set(actors) | {0} | {a for a in answer_starts(chars)
                                       if not printed.inside(base + a)})
    particles = rules()["particles"]
    for unit in units:
        if not _cuts_step(unit):
            continue
        start = unit.start - base
        before = bisect.bisect_left(cuts, start)
        owner = cuts[before - 1] if before else None
        between = chars[actors[owner]:start] if owner in actors else None
        for cut in ((start,) if between is None or between.strip(particles) else ()) + (
                unit.end - base,):
            at = bisect.bisect_left(cuts, cut)
            if at == len(cuts) or cuts[at] != cut:
                cuts.insert(at, cut)
    return [c for c in cuts if c < len(chars)]


def _cuts_step(unit: Unit) -> bool:
    """Whether a formula is a step of its own: not a 如初 mark, nor an order to play (said
    within someone's words: 命弦者曰請奏貍首), nor the music such an order is."""
    return unit.role not in ("mark", "order") and not unit.info.get("ordered")


_FIXED_ACTIONS = {"music": {"ge": "歌", "he": "歌", "sheng": "奏", "guan": "管"},
                  "voice": {"answer": "許諾", "raise_flag": "舉旌", "lower_flag": "偃旌"}}
_ROLE_ACTIONS = {"stop": "樂闋", "command": "命", "implied": "許諾"}


def _action(chars: str, unit: Unit | None, unsaid: str | None = None) -> str:
    """The step's action: fixed by its formula, else the first action word outside names
    and, unless it is the speaking itself (``spoken_actions``), outside the words said
    (``unsaid``: ``chars`` with them blanked)."""
    words = glossary.load()
    if unit is not None:
        if unit.role == "music":
            return _FIXED_ACTIONS["music"].get(unit.info.get("kind", ""), "奏")
        if unit.role == "voice" and unit.info.get("what") in _FIXED_ACTIONS["voice"]:
            return _FIXED_ACTIONS["voice"][unit.info["what"]]
        if unit.role in _ROLE_ACTIONS:
            return _ROLE_ACTIONS[unit.role]
    # 射 in 司射 is a name, not shooting: blank out the names first
    blanked = without_names(chars)
    spoken = rules()["spoken_actions"]
    for match in _term_pattern("action").finditer(blanked):
        if negated(blanked, match.start()) or names_a_thing(chars, match.start()):
            continue
        name = words.name("action", words.known_id("action", match.group(0)))
        if unsaid is None or unsaid[match.start()] == chars[match.start()] or name in spoken:
            return name
    return "other"


def without_names(chars: str) -> str:
    """``chars`` with every actor's name blanked, offsets kept (射 in 司射 is no shooting)."""
    return _term_pattern("actor").sub(lambda m: "　" * len(m.group(0)), chars)


def negated(chars: str, at: int) -> bool:
    """Whether the action word at ``at`` of ``chars`` (normalised) is not done: a negation
    goes before it (工不興, 不拜酒, 不降不執弓)."""
    return at > 0 and chars[at - 1] in rules()["negations"]


def paid_for(chars: str, at: int, word: str) -> bool:
    """Whether the action ``word`` at ``at`` of ``chars`` (normalised) is what a courtesy
    before it is paid for (辭洗, 辭降, 拜洗: another's doing, declined or bowed for)."""
    objects = rules()["courtesy_objects"]
    return at > 0 and word in objects.get(chars[at - 1], ())


def names_a_thing(chars: str, at: int) -> bool:
    """Whether the action word at ``at`` of ``chars`` (normalised) names a thing or a place,
    not a doing, by the word before it (設洗於阼階東南, 立於洗南, 適洗: the basin)."""
    return chars[:at].endswith(_thing_markers())


@functools.cache
def _thing_markers() -> tuple[str, ...]:
    return tuple(rules()["thing_markers"])


def place_mentions(chars: str) -> list[tuple[int, str]]:
    """(offset, place id) of each place ``chars`` (normalised) names after a word that goes
    before a place (適次, 當物, 立於物間): where a step's actor is as the text goes on."""
    words = glossary.load()
    return [(m.start(1), words.known_id("place", m.group(1)))
            for m in _place_pattern().finditer(chars)]


def _place(chars: str) -> str:
    match = _place_pattern().search(chars)
    return glossary.load().known_id("place", match.group(1)) if match else ""


def _steps(text: Text, section: Section, units: list[Unit], printed: Printed) -> list[Step]:
    start, end = section.span
    chars = text.chars[start:end]
    actor_starts = [a for a in _actor_starts(chars) if not printed.inside(start + a[0])]
    cuts = [*_cuts(chars, start, units, actor_starts, printed), len(chars)]
    actor_at = {s: term for s, _, term in actor_starts}
    unit_at: dict[int, Unit] = {}  # step index → its first formula (not a 如初 mark)
    for formula in units:
        if _cuts_step(formula):
            unit_at.setdefault(bisect.bisect_right(cuts, formula.start - start) - 1, formula)
    words = glossary.load()
    steps, actor = [], ""
    for number, (a, b) in enumerate(itertools.pairwise(cuts), start=1):
        unit = unit_at.get(number - 1)
        piece = chars[a:b]
        if a in actor_at:
            actor = words.name("actor", words.known_id("actor", actor_at[a]))
        named = actor if a in actor_at or unit is None or unit.role != "music" else ""
        steps.append(Step(f"{section.id}.{number:02d}", section.id, named,
                          _action(piece, unit, printed.unsaid(piece, start + a)), _place(piece),
                          text.quote(start + a, start + b),
                          (start + a, start + b)))
    return steps


# -------------------------------------------------------------------- sheet

def derive(text: Text, *, text_id: str = "text", title: str = "",
           rite: str | None = None) -> CueSheet:
    """The cue sheet of ``text``: sections, steps, layout, music and voice cues.

    ``rite`` (a bundled rite id, :mod:`soundscape.text.derive.rites`) completes the 設樂
    with the rite's default layout where the text does not set it out, and names sections
    cut by the rule after the rite's own headings (the 大射's); a text with neither
    a 設樂 nor a rite has its instruments placed by family rules
    (:mod:`soundscape.text.derive.generic`).
    """
    sections = sections_of(text, rites.load_rite_text(rite) if rite is not None else None)
    units_by_section = played_orders({
        s.id: find_units(text.chars[s.span[0]:s.span[1]], s.span[0]) for s in sections})
    printed = printed_marks(text)  # the quotation marks and punctuation, where printed
    steps = [step for s in sections for step in _steps(text, s, units_by_section[s.id], printed)]
    # words said are no one acting, printed in quotation marks or not: cut again around the
    # words found said (the 司射's oath 公射大侯，大夫射參，士射干… was three steps)
    said = printed.with_words(cue.span for cue in speech_cues(text, steps, printed))
    steps = [step for s in sections for step in _steps(text, s, units_by_section[s.id], said)]
    layout = derive_layout(text, sections)
    rank = ""
    if rite is not None:
        lord = rites.rite(rite).table.get("layout_as")
        layout = rites.default_layout(rite, text, layout, _layout_of(lord) if lord else None)
        rank = rites.rite(rite).rank
    if rite is None and not layout:  # no 設樂, no rite's data: the family rules place them
        layout = generic_layout(text, [u for found in units_by_section.values() for u in found
                                       if u.role == "music"])
    layout = with_sheng_forces(text, layout)
    music = music_cues(text, sections, steps, units_by_section, layout, rank)
    if rite is not None:  # an edition without the 鄭注: the rite's own note on 無算樂
        music = [dataclasses.replace(m, conditions=wusuan_ways(rites.note_after(rite, "無算樂")))
                 if m.kind == "wusuan" and not m.conditions and not m.note else m for m in music]
    steps = with_repeats(sections, _to_the_gate(steps, music))
    voices = voice_cues(text, steps, units_by_section)
    speech = speech_cues(text, steps, printed)
    info = TextInfo(text_id, _loadable(title, NAME_LONGEST),
                    _loadable(edition_of(text.header), EDITION_LONGEST), len(text.chars))
    return CueSheet(SCHEMA_VERSION, info, tuple(sections), tuple(steps), tuple(layout),
                    tuple(music), tuple(voices), speech=tuple(speech))


def _loadable(words: str, longest: int) -> str:
    """``words`` as a sheet loads them: control characters (a text's form feed, a file
    name's escape) as spaces, at most ``longest`` characters (a header of many lines)."""
    plain = CONTROL.sub(" ", words)
    return plain if len(plain) <= longest else plain[:longest - 1] + "…"


_ORG = re.compile(r"\+(TITLE|DATE|PROPERTY):\s*(\S+)?\s*(.*)")


def edition_of(header: Sequence[str]) -> str:
    """The sheet's ``edition``: the text's header lines, one line; an Org header (the Kanseki
    Repository's ``-*- mode: mandoku-view; -*-``, ``+TITLE:``, ``+PROPERTY: JUAN 5`` …) as
    a reader would cite it: 儀禮 卷5 (Kanseki Repository KR1d0026, base edition SBCK, file …,
    2015-09-10)."""
    kept, org = [], {}
    for line in header:
        found = _ORG.fullmatch(line.strip())
        if found is None:
            if not re.fullmatch(r"-\*-.*-\*-", line.strip()):  # an editor's mode line
                kept.append(line)
            continue
        key, first, rest = found.groups()
        if key == "PROPERTY":
            org[first] = rest.strip()
        else:
            org[key] = " ".join(p for p in (first, rest.strip()) if p)
    if org:
        cited = [f"Kanseki Repository {org['ID']}" if "ID" in org else "",
                 f"base edition {org['BASEEDITION']}" if "BASEEDITION" in org else "",
                 f"file {org['FILE'].rstrip('.')}" if "FILE" in org else "",
                 org.get("DATE", "")[:10]]
        title = " ".join(p for p in (org.get("TITLE", ""),
                                     f"卷{org['JUAN']}" if "JUAN" in org else "") if p)
        cited_as = ", ".join(p for p in cited if p)
        kept.insert(0, f"{title} ({cited_as})".strip() if cited_as else title)
    return " ".join(kept)


def _to_the_gate(steps: list[Step], music) -> list[Step]:
    """``steps`` with the going out of walking music's walker (賓出, 遂出) given the gate
    where it names no place: the music lasts his walk there (``[walking]``)."""
    walking = rules()["walking"]
    ids = {s.id: i for i, s in enumerate(steps)}
    out = list(steps)
    for cue in music:
        if cue.piece not in walking["pieces"] or cue.variant:
            continue
        found = _Steps(out)
        gone = walked_out(out[ids[cue.start]], found)
        if gone is not None and not gone.place:
            out[ids[gone.id]] = dataclasses.replace(gone, place=walking["gate"])
    return out


def _layout_of(rite_id: str) -> list:
    """The 設樂 as the text of rite ``rite_id`` sets it out."""
    text = rites.load_rite_text(rite_id)
    return derive_layout(text, sections_of(text))


def unscored_music(text: Text) -> list[tuple[str, int, str]]:
    """(piece id, line, quote) of each music formula whose piece has no score: derive
    leaves them out of the sheet (勺 and the like), and says so."""
    from soundscape.text.derive.cues import scored

    found = []
    for section in sections_of(text):
        for unit in find_units(text.chars[section.span[0]:section.span[1]], section.span[0]):
            if unit.role == "music" and unit.info["piece"] not in scored():
                found.append((unit.info["piece"], text.line_of(unit.start),
                              text.quote(unit.start, unit.end)))
    return found
