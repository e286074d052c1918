"""Cue sheets: the types, and TOML load, validation and save.

A cue sheet (``cues/*.toml``, documented in ``docs/cuesheet.md``) lists the
sections of a text, the ritual steps inside them, the orchestra layout (設樂),
the music cues and the voice cues, each quoting its passage with its span in
``soundscape.text.source.Text.chars``. :func:`load` validates everything once and
reports ``FILE:LINE: what is wrong, the bad value, what is accepted``; after
that the sheet is trusted.

Every entry (section, step, layout item, music and voice cue) read by
:func:`load` carries ``line``, the 1-based line of its ``[[table]]`` header in
the file (0 when made in code), so that later modules can report
``f"{sheet.path}:{cue.line}: …"`` about an entry. ``line`` is not part of
equality and is not saved.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit

from soundscape import fileio, validate
from soundscape.errors import CueSheetError
from soundscape.resources import bundled_dir, data_dir
from soundscape.text import glossary
from soundscape.text.hanzi import normalise

__all__ = [
    "DIRECTIONS",
    "GROUPS",
    "PARTS",
    "RELATIONS",
    "SCHEMA_VERSION",
    "SPEECH_KINDS",
    "CueSheet",
    "LayoutItem",
    "MusicCue",
    "Section",
    "SpeechCue",
    "Step",
    "TextInfo",
    "VoiceCue",
    "bundled_path",
    "dumps",
    "key_line",
    "load",
    "loads",
    "performed",
    "save",
    "too_many",
    "variants",
]

SCHEMA_VERSION = 1
DIRECTIONS = ("north", "south", "east", "west")
GROUPS = ("east", "west", "drums", "pipes")
#: Parts of a text: the rite itself ("") and the 記, its supplement of variant rules.
PARTS = ("", "記")
RELATIONS = ("east_of", "west_of", "north_of", "south_of", "between", "on")
STOP_LENGTH = "length"
_shown = validate.shown  # a bad value, cut to one short line
#: Performers the sequencer seats besides the layout ids: all the 工 (singers and 瑟
#: players), or only the 瑟 players.
SINGERS = ("gong", "se")
#: Bounds of the numbers a sheet gives (docs/cuesheet.md): 終 of one cue, players in a
#: force, characters of the text.
REPEATS = (1, 12)
FORCES = (1, 64)
CHARS = (1, 10_000_000)
#: Most entries of each table a sheet may hold: far above any rite's (the 大射 has 45
#: sections, 558 steps, 8 music cues; 燕禮 26 music cues; the sheet derived from a whole
#: annotated Yili of 1.4 MB has 35,083 steps), and within a minute's sequencing (it grows
#: faster than the sheet: 20 000 steps took 4 s, 100 000 two minutes).
MOST = {"section": 2_000, "step": 40_000, "layout": 500, "music": 200, "voice": 10_000,
        "speech": 50_000}
#: Characters of a speech cue's quote: the words are spoken, about four a second.
SPOKEN = 1_000
#: Characters of a section's name: a heading or its opening words (names of 100 000
#: characters were read, and the timeline's drawing of them ran past five minutes).
NAME_LONGEST = 200
#: The longest edition note a cue sheet may carry (the bundled 大射's is 160 characters).
EDITION_LONGEST = 2000

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class TextInfo:
    """Which text the sheet was derived from: ``id``, ``title``, ``edition``, ``chars`` (length)."""

    id: str
    title: str
    edition: str
    chars: int


@dataclass(frozen=True, slots=True)
class Section:
    """A section of the rite, closed in the text by its ``右…`` heading ``name``.

    ``part`` is ``""`` for the rite itself and ``"記"`` for the supplement after it: its
    steps are never performed; its music cues are variants (``MusicCue.variant``).
    """

    id: str
    name: str
    span: Span
    line: int = field(default=0, compare=False)
    part: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    """A ritual step: who does what, where the text says, from which characters.

    ``actor`` is the Chinese term (``""`` if no one is named yet), ``action`` a
    term of the glossary's action vocabulary or ``"other"``, ``place`` a place
    id or ``""``. ``as_in``: the earlier steps this one performs again where the text
    says 如初 (a repeated section that abbreviates its procedure), in order.
    """

    id: str
    section: str
    actor: str
    action: str
    place: str
    quote: str
    span: Span
    line: int = field(default=0, compare=False)
    as_in: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LayoutItem:
    """One instrument of the 設樂: where it stands relative to a place or another item.

    ``of`` is a place id or layout id, or a pair of them for ``between``;
    ``side``, ``facing`` and ``struck_face`` are directions or ``""``.
    """

    id: str
    name: str
    instrument: str
    group: str
    relation: str
    of: str | tuple[str, str]
    quote: str
    span: Span
    side: str = ""
    facing: str = ""
    struck_face: str = ""
    note: str = ""
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class MusicCue:
    """A piece performed: what, how, by whom, how often, from which step to which.

    ``stop`` is a step id (music bound to the rite) or ``"length"`` (the rite
    waits for its ``repeats`` 終). ``forces`` holds player counts the text
    gives (e.g. ``(("gong", 6), ("se", 4))``). A 記 ``variant`` plays at its
    ``anchor`` in the rite in place of the rite's cues it ``replaces`` (ids).
    """

    id: str
    piece: str
    kind: str
    performers: tuple[str, ...]
    repeats: int
    start: str
    stop: str
    conditions: tuple[str, ...]
    quote: str
    span: Span
    forces: tuple[tuple[str, int], ...] = ()
    note: str = ""
    line: int = field(default=0, compare=False)
    variant: str = ""
    anchor: str = ""
    replaces: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VoiceCue:
    """A called or sung answer: who, what, on which 五聲 degree, at which step.

    ``as_in`` names the voice cue this one repeats when the text says 如初.
    """

    id: str
    actor: str
    what: str
    degree: str
    step: str
    place: str
    quote: str
    span: Span
    as_in: str = ""
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class SpeechCue:
    """Words the text gives someone to say: who says them (``speaker``, as the text
    names them), to whom (``to``, when the text says), how (``kind``: ``request`` 請,
    ``reply`` 諾/對, ``command`` 命/誓, ``announce`` 告, ``say`` 曰), at which step.
    ``quote`` is the words as printed, ``span`` their offsets."""

    id: str
    speaker: str
    kind: str
    step: str
    quote: str
    span: Span
    to: str = ""
    line: int = field(default=0, compare=False)


SPEECH_KINDS = ("request", "reply", "command", "announce", "say")


@dataclass(frozen=True, slots=True)
class CueSheet:
    """A whole cue sheet; ``path`` is where it was read from (not compared)."""

    schema: int
    text: TextInfo
    sections: tuple[Section, ...]
    steps: tuple[Step, ...]
    layout: tuple[LayoutItem, ...]
    music: tuple[MusicCue, ...]
    voices: tuple[VoiceCue, ...]
    path: str = field(default="", compare=False)
    speech: tuple[SpeechCue, ...] = ()

    def section(self, id_or_name: str) -> Section:
        """The section with this id or heading name (KeyError if none)."""
        for section in self.sections:
            if id_or_name in (section.id, section.name):
                return section
        raise KeyError(f"no section {id_or_name!r} in {self.path or 'the cue sheet'}")

    def step(self, id_: str) -> Step:
        """The step with this id (KeyError if none)."""
        return _by_id(self.steps, id_, "step", self.path)

    def section_of(self, step_id: str) -> Section:
        """The section that holds step ``step_id``."""
        return self.section(self.step(step_id).section)

    def steps_in(self, section_id: str) -> tuple[Step, ...]:
        """The steps of one section, in text order."""
        return tuple(s for s in self.steps if s.section == section_id)

    def step_index(self, step_id: str) -> int:
        """Position of a step in text order."""
        return self.steps.index(self.step(step_id))

    def layout_item(self, id_: str) -> LayoutItem:
        """The layout entry with this id (KeyError if none)."""
        return _by_id(self.layout, id_, "layout entry", self.path)

    def music_cue(self, id_: str) -> MusicCue:
        """The music cue with this id (KeyError if none)."""
        return _by_id(self.music, id_, "music cue", self.path)

    def voice(self, id_: str) -> VoiceCue:
        """The voice cue with this id (KeyError if none)."""
        return _by_id(self.voices, id_, "voice cue", self.path)

    def music_at(self, step_id: str) -> tuple[MusicCue, ...]:
        """Music cues that start at a step."""
        return tuple(m for m in self.music if m.start == step_id)

    def speech_at(self, step_id: str) -> tuple[SpeechCue, ...]:
        """Speech cues at a step."""
        return tuple(s for s in self.speech if s.step == step_id)

    def voices_at(self, step_id: str) -> tuple[VoiceCue, ...]:
        """Voice cues at a step."""
        return tuple(v for v in self.voices if v.step == step_id)


def _by_id(entries: tuple, id_: str, what: str, path: str) -> Any:
    for entry in entries:
        if entry.id == id_:
            return entry
    raise KeyError(f"no {what} {id_!r} in {path or 'the cue sheet'}")


def variants(sheet: CueSheet) -> tuple[str, ...]:
    """The named variants of a sheet (its 記's music lines), in text order."""
    return tuple(dict.fromkeys(m.variant for m in sheet.music if m.variant))


def performed(sheet: CueSheet, chosen: tuple[str, ...] = ()) -> CueSheet:
    """The sheet as the rite is performed: without its 記, with the ``chosen`` variants.

    The 記's steps are never performed (they are rules, not a second rite). A chosen
    variant's music starts at its ``anchor`` in the rite and runs its length, in place of
    the rite's cue of the same piece there and of the cues it names in ``replaces``;
    variants not chosen are left out. A variant is named as any edition prints it
    (simplified or traditional, variant glyphs).

    Raises
    ------
    CueSheetError
        For a variant the sheet does not name, or one with no anchor in the rite.
    """
    known = variants(sheet)
    spelt = {normalise(name): name for name in known}  # 若以乐纳宾 is 若以樂納賓
    chosen = tuple(spelt.get(normalise(name), name) for name in chosen)
    for name in chosen:
        if name not in known:
            raise CueSheetError(f"{sheet.path or 'the cue sheet'}: variant {name!r} unknown; "
                                f"accepted: {', '.join(known) or 'none (no 記 music)'}")
    ji = {s.id for s in sheet.sections if s.part == "記"}
    if not ji and not known:
        return sheet
    extra = []
    for cue in sheet.music:
        if cue.variant in chosen and cue.variant:
            if not cue.anchor:
                raise CueSheetError(f"{sheet.path or 'the cue sheet'}:{cue.line}: variant "
                                    f"{cue.variant!r} cue {cue.id!r} has no anchor in the rite")
            extra.append(dataclasses.replace(cue, start=cue.anchor, stop=STOP_LENGTH))
    replaced = {(c.start, c.piece) for c in extra}
    dropped = {id_ for c in extra for id_ in c.replaces}
    music = [c for c in sheet.music if not c.variant and (c.start, c.piece) not in replaced
             and c.id not in dropped]
    steps = tuple(s for s in sheet.steps if s.section not in ji)
    order = {s.id: i for i, s in enumerate(steps)}
    music = sorted(music + extra, key=lambda c: order[c.start])
    kept = set(order)
    return dataclasses.replace(
        sheet, sections=tuple(s for s in sheet.sections if s.id not in ji), steps=steps,
        music=tuple(music), voices=tuple(v for v in sheet.voices if v.step in kept),
        speech=tuple(v for v in sheet.speech if v.step in kept))


def again(sheet: CueSheet) -> dict[str, tuple[Step, Step]]:
    """The steps performed again (``Step.as_in``): each copy's id (``s34.02.r01`` … for
    the steps ``s34.02`` names) → (the 如初 step, the step it repeats)."""
    copies = {}
    for step in sheet.steps:
        for k, named in enumerate(step.as_in, start=1):
            copies[f"{step.id}.r{k:02d}"] = (step, sheet.step(named))
    return copies


def performed_again(sheet: CueSheet) -> CueSheet:
    """The sheet with each 如初 step followed by the steps it performs again: copies in its
    section, under their own ids (:func:`again`), quoting the passage that states them.

    Raises
    ------
    CueSheetError
        Where a copy's id is already a step's.
    """
    copies = again(sheet)
    if not copies:
        return sheet
    taken = {s.id for s in sheet.steps} & set(copies)
    if taken:
        clash = sheet.step(min(taken))
        raise CueSheetError(f"{sheet.path or 'the cue sheet'}:{clash.line}: step id "
                            f"{clash.id!r} is the id of a step performed again "
                            f"(as_in of {copies[clash.id][0].id!r}); give it another")
    by_step: dict[str, list[Step]] = {}
    for copy_id, (step, original) in copies.items():
        by_step.setdefault(step.id, []).append(dataclasses.replace(
            original, id=copy_id, section=step.section, as_in=()))
    steps = [done for s in sheet.steps for done in (s, *by_step.get(s.id, ()))]
    return dataclasses.replace(sheet, steps=tuple(steps))


def bundled_path() -> Path:
    """The path of the bundled 大射 cue sheet, ``cues/dashe.toml``."""
    return bundled_dir("cues") / "dashe.toml"


# --------------------------------------------------------------------- loading

class _Locator:
    """Line numbers of ``[[table]]`` entries and their keys in the raw TOML (each found by
    bisection in the sorted header lines: loading stays linear in the sheet's length)."""

    def __init__(self, raw: str) -> None:
        self.lines = raw.splitlines()
        self.headers: dict[str, list[int]] = {}
        for number, line in enumerate(self.lines, start=1):
            match = re.match(r"\s*\[\[?\s*([A-Za-z_]+)\s*\]\]?", line)
            if match:
                self.headers.setdefault(match.group(1), []).append(number)
        self.every = sorted(n for numbers in self.headers.values() for n in numbers)

    def line(self, table: str, index: int | None = None, key: str | None = None) -> int:
        if index is None:
            start, end = 1, (self.every[0] if self.every else len(self.lines) + 1)
        else:
            numbers = self.headers.get(table, [])
            if index >= len(numbers):
                return 1
            start = numbers[index]
            after = bisect.bisect_right(self.every, start)
            end = self.every[after] if after < len(self.every) else len(self.lines) + 1
        if key is not None:
            pattern = re.compile(rf"\s*\"?{re.escape(key)}\"?\s*=")
            for number in range(start, end):
                if pattern.match(self.lines[number - 1]):
                    return number
        return start


class _Checker:
    """Reads one table entry, turning every type or value problem into a CueSheetError."""

    def __init__(self, source: str, locator: _Locator, table: str, index: int | None,
                 entry: Any) -> None:
        self.source, self.locator, self.table, self.index = source, locator, table, index
        if not isinstance(entry, dict):
            self.fail(None, f"[[{table}]] entry must be a table, not {_shown(entry)}")
        self.entry = entry

    def fail(self, key: str | None, message: str) -> None:
        raise CueSheetError(f"{self.at(key)}: {message}")

    def at(self, key: str | None) -> str:
        """``FILE:LINE`` of ``key`` in this entry (of its header when None)."""
        return f"{self.source}:{self.locator.line(self.table, self.index, key)}"

    def line(self) -> int:
        """The line of this entry's ``[[table]]`` header."""
        return self.locator.line(self.table, self.index)

    def where(self) -> str:
        id_ = self.entry.get("id") if isinstance(self.entry, dict) else None
        label = f" {id_!r}" if isinstance(id_, str) else ""
        return f"{self.table}{label}"

    def keys(self, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
        for key in required:
            if key not in self.entry:
                self.fail(None, f"{self.where()} lacks key {_shown(key)}; required: "
                                f"{', '.join(required)}")
        for key in self.entry:
            if key not in required and key not in optional:
                self.fail(key, f"{self.where()} has unknown key {_shown(key)}; accepted: "
                               f"{', '.join(required + optional)}")

    def string(self, key: str, *, default: str | None = None, choices: Any = None,
               empty_ok: bool = False, longest: int = 100_000) -> str:
        if key not in self.entry and default is not None:
            return default
        if key not in self.entry:
            self.fail(None, f"{self.where()} lacks key {key!r}")
        value = self.entry[key]
        if value == "" and (empty_ok or default == ""):
            return value
        if not (isinstance(value, str) and value and len(value) <= longest
                and not validate.CONTROL.search(value)):  # the line is
            validate.text(value, key=f"{self.where()} {key}", where=self.at(key),  # looked up
                          error=CueSheetError, longest=longest)  # only for a value that fails
        if choices is not None and value not in choices:
            shown = ", ".join(sorted(choices)) if len(choices) <= 40 else \
                f"one of {len(choices)} known values (see docs/cuesheet.md)"
            self.fail(key, f"{self.where()} {key}={_shown(value)} is unknown; "
                           f"accepted: {shown}")
        return value

    def integer(self, key: str, bounds: tuple[int, int]) -> int:
        value = self.entry[key]
        if type(value) is int and bounds[0] <= value <= bounds[1]:
            return value
        return validate.whole(value, key=f"{self.where()} {key}", where=self.at(key),
                              error=CueSheetError, low=bounds[0], high=bounds[1])

    def strings(self, key: str, *, choices: Any = None) -> tuple[str, ...]:
        value = self.entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail(key, f"{self.where()} {key}={_shown(value)} must be a list of non-empty "
                           "strings")
        for index, item in enumerate(value):
            if choices is not None and item not in choices:
                self.fail(key, f"{self.where()} {key} has unknown {_shown(item)}; accepted: "
                               f"{', '.join(sorted(choices))}")
            if choices is not None and item in value[:index]:  # each plays the part again
                self.fail(key, f"{self.where()} {key} names {_shown(item)} twice; accepted: "
                               "each at most once")
        return tuple(value)

    def span(self, text_length: int, within: Span | None = None) -> Span:
        value = self.entry["span"]
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            self.fail("span", f"{self.where()} span={_shown(value)} must be [start, end], two "
                              "integers")
        start, end = value
        if not 0 <= start < end <= text_length:
            self.fail("span", f"{self.where()} span={_shown(value)} must satisfy "
                              f"0 ≤ start < end ≤ {text_length} (the text's length)")
        if within is not None and not (within[0] <= start and end <= within[1]):
            self.fail("span", f"{self.where()} span={_shown(value)} lies outside its section "
                              f"{list(within)}")
        return start, end


def load(path: str | Path) -> CueSheet:
    """Read and validate the cue sheet at ``path``.

    Raises
    ------
    CueSheetError
        ``FILE:LINE: …`` for unreadable files, bad TOML, or any invalid entry.
    """
    path = Path(path)
    return loads(fileio.read_text(path, CueSheetError), source=str(path))


def key_line(path: str | Path, table: str, header: int, key: str) -> int:
    """The line of ``key`` in the ``[[table]]`` entry whose header is line ``header`` of the
    sheet at ``path`` (the header's where it is not found): for a message about an entry
    found after loading (a ``quote`` the voice cannot say), read again only then."""
    try:
        locator = _Locator(fileio.read_text(Path(path), CueSheetError))
    except CueSheetError:  # gone or changed since: the header's line still says which entry
        return header
    numbers = locator.headers.get(table, [])
    return locator.line(table, numbers.index(header), key) if header in numbers else header


def too_many(counts: Mapping[str, int]) -> tuple[str, int] | None:
    """The first table of ``counts`` (entries per table) with more entries than a sheet
    holds, and that bound (:data:`MOST`); None when every table fits."""
    for table, most in MOST.items():
        if counts.get(table, 0) > most:
            return table, most
    return None


def loads(raw: str, *, source: str = "<cue sheet>") -> CueSheet:
    """Parse and validate cue-sheet TOML held in a string (see :func:`load`)."""
    data = fileio.parse_toml(raw, source, CueSheetError)
    locator = _Locator(raw)
    top = _Checker(source, locator, "top", None, data)
    top.keys(("schema", "text"), ("section", "step", "layout", "music", "voice", "speech"))
    if top.entry["schema"] != SCHEMA_VERSION or isinstance(top.entry["schema"], bool):
        top.fail("schema", f"schema={_shown(top.entry['schema'])} is not supported; "
                           f"accepted: {SCHEMA_VERSION}")
    for key in ("section", "step", "layout", "music", "voice", "speech"):
        if not isinstance(data.get(key, []), list):
            top.fail(key, f"{key} must be an array of tables [[{key}]], not {_shown(data[key])}")
    info = _text_info(_Checker(source, locator, "text", 0, data["text"]))

    over = too_many({table: len(data.get(table, [])) for table in MOST})
    if over is not None:  # bound what a sheet may ask for, before any work
        table, most = over
        _Checker(source, locator, table, most, {}).fail(
            None, f"[[{table}]] entry {most + 1} of {len(data[table])}: a sheet holds at "
                  f"most {most} [[{table}]] entries")

    def checkers(table: str) -> list[_Checker]:
        return [_Checker(source, locator, table, i, e) for i, e in enumerate(data.get(table, []))]

    for table in ("section", "step"):  # nothing to perform without them
        if not data.get(table):
            top.fail(None, f"the sheet has no [[{table}]] entries; a sheet needs at least one "
                           "(docs/cuesheet.md; `soundscape derive TEXT` makes a sheet)")
    sections = tuple(_section(c, info.chars) for c in checkers("section"))
    _unique(checkers("section"), "section")
    section_spans = {s.id: s.span for s in sections}
    step_checks = checkers("step")
    steps = tuple(_step(c, info.chars, section_spans) for c in step_checks)
    _unique(step_checks, "step")
    _repeated_steps(step_checks, steps)
    layout_checks = checkers("layout")
    _unique(layout_checks, "layout")
    layout_ids = {c.entry.get("id") for c in layout_checks}
    layout = tuple(_layout(c, info.chars, layout_ids) for c in layout_checks)
    _anchor_loops(layout_checks, layout)
    step_order = {s.id: i for i, s in enumerate(steps)}
    music_checks = checkers("music")
    _unique(music_checks, "music")
    music = tuple(_music(c, info.chars, layout_ids, step_order) for c in music_checks)
    _replaced_cues(music_checks, music)
    _ji_steps(music_checks, music, sections, steps)
    voice_checks = checkers("voice")
    _unique(voice_checks, "voice")
    voice_ids = {c.entry.get("id") for c in voice_checks}
    voices = tuple(_voice(c, info.chars, step_order, voice_ids) for c in voice_checks)
    speech_checks = checkers("speech")
    _unique(speech_checks, "speech")
    speech = tuple(_speech(c, info.chars, step_order) for c in speech_checks)
    return CueSheet(SCHEMA_VERSION, info, sections, steps, layout, music, voices, source,
                    speech)


def _unique(checks: list[_Checker], table: str) -> None:
    """Each entry's id is an id (never a path: ids name files, e.g. ``midi --split``) and is
    its table's only one."""
    seen: set[str] = set()
    for check in checks:
        id_ = check.string("id")
        if not validate.ID.fullmatch(id_):
            validate.ident(id_, key=f"{check.table} id", where=check.at("id"),
                           error=CueSheetError)
        if id_ in seen:
            check.fail("id", f"{table} id {id_!r} is used twice; ids must be unique")
        seen.add(id_)


def _text_info(c: _Checker) -> TextInfo:
    c.keys(("id", "chars"), ("title", "edition"))
    return TextInfo(c.string("id"), c.string("title", default="", longest=NAME_LONGEST),
                    c.string("edition", default="", longest=EDITION_LONGEST),
                    c.integer("chars", CHARS))


def _section(c: _Checker, length: int) -> Section:
    c.keys(("id", "name", "span"), ("part",))
    return Section(c.string("id"), c.string("name", longest=NAME_LONGEST), c.span(length),
                   line=c.line(),
                   part=c.string("part", default="", choices=PARTS))


def _step(c: _Checker, length: int, sections: dict[str, Span]) -> Step:
    c.keys(("id", "section", "actor", "action", "quote", "span"), ("place", "as_in"))
    words = glossary.load()
    section = c.string("section", choices=sections)
    actor = c.string("actor", empty_ok=True)
    if actor and normalise(actor) not in words.term_index("actor"):
        c.fail("actor", f"step {_shown(c.entry['id'])} actor={_shown(actor)} is not a known actor; "
                        "accepted: a term of the glossary's [actor] table or \"\"")
    return Step(c.string("id"), section, actor, c.string("action", choices=_actions(words)),
                c.string("place", default="", choices=_places(words)),
                c.string("quote"), c.span(length, sections[section]), line=c.line(),
                as_in=c.strings("as_in"))


#: Steps one 如初 may perform again (a section's procedure: the 大射's longest is 25).
MOST_REPEATED = 64


def _repeated_steps(checks: list[_Checker], steps: tuple[Step, ...]) -> None:
    """Each ``as_in`` names earlier steps, each once, at most ``MOST_REPEATED``, none
    itself performing others again (a repetition is of what the text states)."""
    earlier: set[str] = set()
    repeats = {s.id for s in steps if s.as_in}
    for check, step in zip(checks, steps, strict=True):
        if len(step.as_in) > MOST_REPEATED:
            check.fail("as_in", f"{check.where()} as_in names {len(step.as_in)} steps; "
                                f"accepted: at most {MOST_REPEATED}")
        for index, named in enumerate(step.as_in):
            if named not in earlier or named in repeats:
                check.fail("as_in", f"{check.where()} as_in has {_shown(named)}; accepted: "
                                    "the id of an earlier step that has no as_in itself")
            if named in step.as_in[:index]:
                check.fail("as_in", f"{check.where()} as_in names {_shown(named)} twice; "
                                    "accepted: each at most once")
        earlier.add(step.id)


@functools.cache
def _actions(words: glossary.Glossary) -> frozenset[str]:
    """The action names of the glossary (once, not per step: sheets have 35,000 steps)."""
    return frozenset(words.name("action", i) for i in words.ids("action"))


@functools.cache
def _places(words: glossary.Glossary) -> frozenset[str]:
    return frozenset(words.ids("place"))


def _layout(c: _Checker, length: int, layout_ids: set) -> LayoutItem:
    c.keys(("id", "name", "instrument", "group", "relation", "of", "quote", "span"),
           ("side", "facing", "struck_face", "note"))
    words = glossary.load()
    relation = c.string("relation", choices=RELATIONS)
    targets = set(words.ids("place")) | {i for i in layout_ids if isinstance(i, str)}
    of = c.entry["of"]
    if relation == "between":
        if not (isinstance(of, list) and len(of) == 2 and all(isinstance(o, str) for o in of)):
            c.fail("of", f"{c.where()} of={_shown(of)}: 'between' needs a list of two place or "
                         "layout ids")
        of = tuple(of)
    elif not isinstance(of, str):
        c.fail("of", f"{c.where()} of={_shown(of)} must be one place or layout id")
    for target in (of if isinstance(of, tuple) else (of,)):
        if target not in targets or target == c.entry["id"]:
            c.fail("of", f"{c.where()} of={_shown(target)} is not a place id or another layout id; "
                         f"places: {', '.join(words.ids('place'))}")
    return LayoutItem(
        c.string("id"), c.string("name"),
        c.string("instrument", choices=set(words.ids("instrument"))),
        c.string("group", choices=GROUPS), relation, of, c.string("quote"), c.span(length),
        side=c.string("side", default="", choices=DIRECTIONS),
        facing=c.string("facing", default="", choices=DIRECTIONS),
        struck_face=c.string("struck_face", default="", choices=DIRECTIONS),
        note=c.string("note", default=""), line=c.line())


def _music(c: _Checker, length: int, layout_ids: set, steps: dict[str, int]) -> MusicCue:
    c.keys(("id", "piece", "kind", "performers", "repeats", "start", "stop", "quote", "span"),
           ("conditions", "forces", "note", "variant", "anchor", "replaces"))
    words = glossary.load()
    performers = set(SINGERS) | {i for i in layout_ids if isinstance(i, str)}
    if not layout_ids:  # no 設樂 in the text: derive names the instruments it will need
        performers |= set(words.ids("instrument"))
    start = c.string("start", choices=steps)
    stop = c.string("stop", choices=[*steps, STOP_LENGTH])
    if stop != STOP_LENGTH and steps[stop] <= steps[start]:  # the music stops as it begins
        where = "is" if stop == start else "comes before"
        c.fail("stop", f"{c.where()} stop={_shown(stop)} {where} its start {_shown(start)}; "
                       "accepted: a later step id or \"length\"")
    forces = c.entry.get("forces", {})
    if not isinstance(forces, dict) or not all(k in SINGERS for k in forces):
        c.fail("forces", f"{c.where()} forces={_shown(forces)} must be a table of "
                         f"player counts; accepted keys: {', '.join(SINGERS)}")
    for key, count in forces.items():
        validate.whole(count, key=f"{c.where()} forces.{key}", where=c.at("forces"),
                       error=CueSheetError, low=FORCES[0], high=FORCES[1])
    return MusicCue(
        c.string("id"), _piece(c, words), c.string("kind", choices=set(words.ids("kind"))),
        c.strings("performers", choices=performers), c.integer("repeats", REPEATS),
        start, stop, c.strings("conditions"), c.string("quote"), c.span(length),
        forces=tuple(forces.items()), note=c.string("note", default=""), line=c.line(),
        variant=c.string("variant", default=""),
        anchor=c.string("anchor", default="", choices=[*steps, ""]),
        replaces=c.strings("replaces"))


def _replaced_cues(checks: list[_Checker], music: tuple[MusicCue, ...]) -> None:
    """A variant replaces cues of the rite: ids of music cues that are no variant."""
    rite = {m.id for m in music if not m.variant}
    for check, cue in zip(checks, music, strict=True):
        if cue.replaces and not cue.variant:
            check.fail("replaces", f"{check.where()} replaces={_shown(list(cue.replaces))}: "
                                   "only a variant (a 記 cue) replaces the rite's cues")
        for id_ in cue.replaces:
            if id_ not in rite:
                check.fail("replaces", f"{check.where()} replaces {_shown(id_)}, not a music "
                                       f"cue of the rite; accepted: {', '.join(sorted(rite))}")


def _ji_steps(checks: list[_Checker], music: tuple[MusicCue, ...],
              sections: tuple[Section, ...], steps: tuple[Step, ...]) -> None:
    """The 記's steps are never performed (``performed``): a cue of the rite starts and
    stops at steps of the rite, and a variant is anchored at one."""
    ji = {s.section for s in steps} & {s.id for s in sections if s.part == "記"}
    in_ji = {s.id: s.section for s in steps if s.section in ji}
    for check, cue in zip(checks, music, strict=True):
        keys = (("anchor", cue.anchor),) if cue.variant else (("start", cue.start),
                                                              ("stop", cue.stop))
        for key, step in keys:
            if step in in_ji:
                check.fail(key, f"{check.where()} {key}={_shown(step)} is a step of the 記 "
                                f"(section {in_ji[step]}), which is never performed; accepted: "
                                "a step of the rite (a 記 line plays as a variant at its anchor)")


def _piece(c: _Checker, words: glossary.Glossary) -> str:
    """A piece of the glossary that has a score in the repertoire (else nothing to play)."""
    piece = c.string("piece", choices=set(words.ids("piece")))
    scored = sorted(p.stem for p in (data_dir() / "pieces").glob("*.toml")
                    if not p.name.startswith("_"))
    if piece not in scored:
        c.fail("piece", f"{c.where()} piece={piece!r} has no score in the repertoire, so it "
                        f"cannot be played; accepted: {', '.join(scored)}")
    return piece


def _anchor_loops(checks: list[_Checker], layout: tuple[LayoutItem, ...]) -> None:
    """Refuse layout entries measured, through others, from themselves."""
    anchors = {item.id: (item.of if isinstance(item.of, tuple) else (item.of,))
               for item in layout}
    for check, item in zip(checks, layout, strict=True):
        todo, seen = list(anchors[item.id]), set()
        while todo:
            anchor = todo.pop()
            if anchor == item.id:
                check.fail("of", f"{check.where()} of={item.of!r}: the layout anchors loop "
                                 f"back to {item.id!r}; accepted: a place or an entry that "
                                 "is not measured from this one")
            if anchor in anchors and anchor not in seen:
                seen.add(anchor)
                todo.extend(anchors[anchor])


def _voice(c: _Checker, length: int, steps: dict[str, int], voice_ids: set) -> VoiceCue:
    c.keys(("id", "actor", "what", "degree", "step", "quote", "span"), ("place", "as_in"))
    words = glossary.load()
    degrees = {words.name("degree", i) for i in words.ids("degree")}
    as_in = c.string("as_in", default="", choices={i for i in voice_ids if isinstance(i, str)})
    if as_in == c.entry["id"]:
        c.fail("as_in", f"{c.where()} as_in={as_in!r} must name another voice cue")
    return VoiceCue(
        c.string("id"), c.string("actor", choices=set(words.ids("actor"))),
        c.string("what", choices=set(words.ids("voice_what"))),
        c.string("degree", choices=degrees), c.string("step", choices=steps),
        c.string("place", default="", choices=set(words.ids("place"))),
        c.string("quote"), c.span(length), as_in=as_in, line=c.line())


def _speech(c: _Checker, length: int, steps: dict[str, int]) -> SpeechCue:
    c.keys(("id", "speaker", "kind", "step", "quote", "span"), ("to",))
    for key in ("speaker", "to"):  # a person's title (相者, 司射 …): a voice is named by it
        who = c.string(key, default="")
        if len(who) > 16 or any(unicodedata.category(ch)[0] in "CZ" for ch in who):
            c.fail(key, f"{c.where()} {key}={_shown(who)} must be a title of at most 16 "
                        "characters, without spaces or control characters")
    quote = c.string("quote")
    if len(quote) > SPOKEN:  # spoken at a speaking pace: hours, where the rite's take seconds
        c.fail("quote", f"{c.where()} quote is {len(quote)} characters long; accepted: at most "
                        f"{SPOKEN} (the rite's longest is 30)")
    return SpeechCue(c.string("id"), c.string("speaker"),
                     c.string("kind", choices=set(SPEECH_KINDS)),
                     c.string("step", choices=steps), quote, c.span(length),
                     c.string("to", default=""), line=c.line())


# ---------------------------------------------------------------------- saving
#
# Saving goes through tomlkit so that saving over a sheet updates it in place: the
# user's comments, blank lines and key order stay; entries are matched by id.

def _rows(sheet: CueSheet) -> dict[str, list[list[tuple[str, Any]]]]:
    """Every entry as ``(key, value)`` pairs in the saved key order (optional keys when set)."""
    return {
        "section": [[("id", s.id), ("name", s.name), ("span", s.span), *_optional(part=s.part)]
                    for s in sheet.sections],
        "step": [[("id", s.id), ("section", s.section), ("actor", s.actor),
                  ("action", s.action), *_optional(place=s.place),
                  ("quote", s.quote), ("span", s.span), *_optional(as_in=s.as_in)]
                 for s in sheet.steps],
        "layout": [[("id", i.id), ("name", i.name), ("instrument", i.instrument),
                    ("group", i.group), ("relation", i.relation), ("of", i.of),
                    *_optional(side=i.side, facing=i.facing, struck_face=i.struck_face),
                    ("quote", i.quote), ("span", i.span), *_optional(note=i.note)]
                   for i in sheet.layout],
        "music": [[("id", m.id), ("piece", m.piece), ("kind", m.kind),
                   ("performers", m.performers), *_optional(forces=dict(m.forces)),
                   ("repeats", m.repeats), ("start", m.start), ("stop", m.stop),
                   *_optional(conditions=m.conditions),
                   ("quote", m.quote), ("span", m.span), *_optional(note=m.note),
                   *_optional(variant=m.variant, anchor=m.anchor, replaces=m.replaces)]
                  for m in sheet.music],
        "voice": [[("id", v.id), ("actor", v.actor), ("what", v.what),
                   ("degree", v.degree), ("step", v.step), *_optional(place=v.place),
                   *_optional(as_in=v.as_in), ("quote", v.quote), ("span", v.span)]
                  for v in sheet.voices],
        "speech": [[("id", s.id), ("speaker", s.speaker), *_optional(to=s.to),
                    ("kind", s.kind), ("step", s.step), ("quote", s.quote), ("span", s.span)]
                   for s in sheet.speech],
    }


def _optional(**values: Any) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in values.items() if v]


def _toml(value: Any) -> Any:
    """A value as tomlkit writes it: tuples as arrays, mappings as inline tables."""
    if isinstance(value, dict):
        inline = tomlkit.inline_table()
        inline.update({k: _toml(v) for k, v in value.items()})
        return inline
    if isinstance(value, tuple | list):
        return [_toml(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    """A value as TOML reads it back: tuples as lists."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _text_pairs(sheet: CueSheet) -> list[tuple[str, Any]]:
    return [("id", sheet.text.id), ("title", sheet.text.title),
            ("edition", sheet.text.edition), ("chars", sheet.text.chars)]


def _fresh(sheet: CueSheet) -> str:
    doc = tomlkit.document()
    doc["schema"] = sheet.schema
    doc["text"] = {key: value for key, value in _text_pairs(sheet)}
    for table, rows in _rows(sheet).items():
        entries = tomlkit.aot()
        for pairs in rows:
            entry = tomlkit.table()
            for key, value in pairs:
                entry[key] = _toml(value)
            entries.append(entry)
        if rows:
            doc[table] = entries
    return tomlkit.dumps(doc)


def _updated(sheet: CueSheet, original: str) -> str | None:
    """``original`` with the sheet's values set in place, comments and layout kept; None
    when its entries differ in shape (an entry added, removed or moved, a key added or
    dropped), which is written afresh instead."""
    doc = tomlkit.parse(original)
    shapes = {"text": [_text_pairs(sheet)], **_rows(sheet)}
    for table, rows in shapes.items():
        found = doc.get(table, [])
        found = [found] if isinstance(found, dict) else list(found)
        if len(found) != len(rows) or any(
                entry.get("id") != dict(pairs)["id"]
                or set(entry) != {k for k, v in pairs if v != "" or k in entry}
                for entry, pairs in zip(found, rows, strict=True)):
            return None
        for entry, pairs in zip(found, rows, strict=True):
            for key, value in pairs:
                if key in entry and entry[key].unwrap() != _plain(value):
                    entry[key] = _toml(value)
    if set(doc) - {"schema", *shapes}:
        return None
    doc["schema"] = sheet.schema
    return tomlkit.dumps(doc)


def dumps(sheet: CueSheet, *, original: str | None = None) -> str:
    """The sheet as TOML text, in a fixed key order (optional keys only when set).

    With ``original``, the text of an earlier version of the sheet whose entries have the
    same ids in the same order and the same keys: that text with the new values, its
    comments, blank lines and key order kept. Otherwise a fresh document.
    """
    return (original is not None and _updated(sheet, original)) or _fresh(sheet)


def save(sheet: CueSheet, path: str | Path, *, header: str = "") -> Path:
    """Write ``sheet`` to ``path`` atomically.

    Over an existing, valid cue sheet of the same shape the file is updated in place, its
    comments kept (see :func:`dumps`); otherwise it is written afresh, starting with the
    existing file's leading ``#`` lines, or ``header`` as ``#`` comments for a new file.
    """
    path = Path(path)
    text = file_text(sheet, original=_earlier(path), header=header)
    # a sheet that would not load (a quote past its bound) is never written over a good one
    loads(text, source=f"{path} (not written)")
    return fileio.write_text(path, text)


def file_text(sheet: CueSheet, *, original: str | None = None, header: str = "") -> str:
    """The text :func:`save` writes: ``original`` (a valid sheet's text) updated in place,
    or afresh under its leading ``#`` lines, or under ``header`` as ``#`` comments."""
    text = None if original is None else _updated(sheet, original)
    if text is not None:
        return text
    if original is not None:
        comments = "".join(f"{line}\n" for line in
                           itertools.takewhile(lambda line: line.startswith("#"),
                                               original.splitlines()))
    else:
        comments = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comments + ("\n" if comments else "") + _fresh(sheet)


def _earlier(path: Path) -> str | None:
    """The text of the valid cue sheet already at ``path``, or None."""
    if not path.is_file():
        return None
    try:
        raw = fileio.read_text(path, CueSheetError)
        loads(raw, source=str(path))
    except CueSheetError:
        return None
    return raw
