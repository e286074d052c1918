"""The sequencer: cue sheet + site + repertoire + tuning → one timed Performance.

The rite runs on one clock (:mod:`soundscape.sequence.timeline`). Music holds that clock
in the two ways the text implies:

- **music-bound** (``stop = "length"``: 歌鹿鳴三終, 管新宮三終, 奏陔, 驁): the piece
  has its own length and the rite waits for it;
- **rite-bound** (``stop`` a step: 奏肆夏 … 樂闋): the piece fills the span from its
  start step to the step where 樂闋 stands, repeating by whole phrases, and ends
  on the first phrase end at or after that step, which waits for it.

Music-bound cues that start at one step play one after another in the sheet's order
(a 記 variant that follows the rite's music: 勺, then 房中之樂).

The shoots of :mod:`soundscape.sequence.archery` stand where ``data/sequence.toml`` says
in the text; the steps that narrate a shoot are stretched over its simulated
length. In the third round the 節 of 貍首 fall evenly (間若一) and every counted
arrow leaves on a drum (不鼓不釋), except the duke's (不以樂志).

The clock's questions are answered by three small planners over one checked settings
object (:mod:`~soundscape.sequence.settings`): the music (:mod:`~soundscape.sequence
.music_plan`), the shoots (:mod:`~soundscape.sequence.shooting`) and the moves of people
(:mod:`~soundscape.sequence.people`); this module asks them in order at each step and
makes the Performance from what they decided.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from soundscape import validate
from soundscape.cuesheet import (
    CueSheet,
    Step,
    again,
    bundled_path,
    load,
    performed,
    performed_again,
)
from soundscape.errors import CueSheetError, PerformanceError, SiteError
from soundscape.malloc import collector_paused
from soundscape.music.tuning import Tuning, default_tuning
from soundscape.performance import Event, Info, Marker, Performance, SectionSpan
from soundscape.sequence import archery
from soundscape.sequence.actions import load_actions
from soundscape.sequence.music_plan import MusicPlan
from soundscape.sequence.people import People, standing_where_heard
from soundscape.sequence.players import Players, build_players
from soundscape.sequence.settings import load_settings
from soundscape.sequence.shooting import Shooting
from soundscape.sequence.speech import (
    check_quotes,
    one_at_a_time,
    phrase_phones,
    speech_events,
    speech_markers,
    step_speech_seconds,
)
from soundscape.sequence.timeline import Durations, TimedStep, time_steps
from soundscape.site.courtyard import Site, load_site, site_of
from soundscape.text import gloss
from soundscape.text.hanzi import mentions
from soundscape.text.reading import (
    DEFAULT_READING,
    READINGS,
    ReadingError,
    read,
)
from soundscape.text.source import BUNDLED_NAME

__all__ = ["SequenceOptions", "perform", "perform_from_file"]

#: The longest a sequenced rite may run, seconds: a day (the 大射 runs about 2½ hours);
#: beyond it a sheet asks for more than any rite, and its Performance for more than a
#: render can hold.
MAX_RITE_S = 24 * 3600.0
#: How long 無算樂 may be asked to play (seconds): up to ten hours.
WUSUAN_SECONDS = (1.0, 36000.0)


@dataclass(frozen=True)
class SequenceOptions:
    """What a user may change about the sequencing without editing the cue sheet.

    Parameters
    ----------
    durations : Durations
        Seconds per action, pace and participants (``data/durations.toml``).
    zhong : str or None
        What one 終 of a song is: ``song`` (鄭注: three whole songs, the default of the
        piece) or ``stanza`` (the three stanzas once).
    reading : str
        How the words are pronounced (``soundscape.text.reading.READINGS``).
    wusuan_seconds : float or None
        How long 無算樂 plays; None takes the piece's own length.
    roster : mapping or None
        Archery roster counts (``sanou``, ``qing_pairs``, ``dafu_pairs``, ``zhongou``).
    archery : ArcheryConfig or None
        None → the bundled ``data/archery.toml``.
    soundscape : bool
        Also the sounds between the music: the actions of the rite and the place
        (``data/actions.toml``); False gives the music and the archery alone.
    variants : tuple of str
        Variants the rite's 記 names to play (``cuesheet.performed``); the 記 itself is
        never performed.
    """

    durations: Durations = field(default_factory=Durations.load)
    zhong: str | None = None
    reading: str = DEFAULT_READING
    wusuan_seconds: float | None = None
    roster: Mapping[str, int] | None = None
    archery: archery.ArcheryConfig | None = None
    soundscape: bool = True
    variants: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.wusuan_seconds is not None:
            validate.number(self.wusuan_seconds, key="wusuan_seconds", where="sequence options",
                            error=PerformanceError, low=WUSUAN_SECONDS[0],
                            high=WUSUAN_SECONDS[1], unit="seconds")


class _Planner:
    """Answers the clock's questions (how long must this step take, when may it start) by
    asking the people, the music and the shoots, in that order."""

    def __init__(self, sheet: CueSheet, site: Site, tuning: Tuning, seed: int,
                 options: SequenceOptions, players: Players) -> None:
        self.settings = load_settings()
        self.people = People(sheet, site, players, self.settings)
        self.music = MusicPlan(sheet, tuning, players, seed=seed, zhong=options.zhong,
                               wusuan_seconds=options.wusuan_seconds,
                               singers=self.settings.singers)
        self.shooting = Shooting(sheet, site, seed=seed, settings=self.settings,
                                 durations=options.durations, music=self.music,
                                 players=players, config=options.archery,
                                 roster=options.roster)
        self.sheet = sheet
        self.site = site
        self.durations = options.durations
        self.actions = load_actions().saying(sheet.speech, sheet.steps)

    def hold(self, step: Step, start: float) -> float:
        """How long ``step`` must last: its narration of a shoot, the music-bound cues it
        starts (one after another, in sheet order), the shoot or count it holds."""
        self.people.at_step(step, start)
        needed = self.shooting.stretched(step)
        shoot = self.shooting.shoot_at(step)
        after = 0.0
        for cue in self.sheet.music_at(step.id):
            shot_to = shoot is not None and cue.kind == "she"
            played = self.music.start(cue, start + after, arranged_by_shoot=shot_to)
            self.people.music_starts(cue.kind, played.start)
            if shoot is not None and shot_to:
                shoot.music = played
            elif played.end is not None:
                after += played.end
                needed = max(needed, after)
        # one doer's own doings around his arrows, his walks between them included: the
        # 誘射 walks to his mark bowing on the way before his first arrow, and back after
        lead, after = self.actions.around_shooting(step, self.site, self.durations) \
            if self.durations.repeats(step) <= 1 else (0.0, 0.0)
        shot = self.shooting.at_step(
            step, start, lead=lead if shoot is not None and shoot.number == 0 else 0.0)
        return max(needed, shot + after if shot else 0.0)

    def tells(self, step: Step) -> float:
        """How long one doer's step takes by what its text tells him to do (his action, then
        the others it names, walked between): 0 for a step that narrates a shoot, whose
        round times it (``hold``, called before)."""
        if self.shooting.stretched(step) or self.shooting.shoot_at(step) is not None:
            return 0.0
        return self.actions.told_seconds(step, self.site, self.durations)

    def approach(self, step: Step, climbs: Mapping[str, float]) -> float:
        """How long one doer walks to his own 升 or 降 and on from it (``climbs``:
        ``ActionSounds.climb_walks``): 0 for a step the walking pairs' archers do, heard in
        their turn walks (``Shooting.told_by_walks``: its round is shot by then)."""
        return 0.0 if step.id in self.shooting.told_by_walks() else climbs.get(step.id, 0.0)

    def wait(self, step: Step, clock: float) -> float:
        """The earliest ``step`` may start: when the music it stops has ended (樂闋)."""
        return self.music.wait(step, clock)


@collector_paused()  # the rite's tens of thousands of events and takes all live on
def perform(sheet: CueSheet, *, site: Site, tuning: Tuning, seed: int,
            options: SequenceOptions | None = None) -> Performance:
    """Sequence the whole rite of ``sheet`` into one Performance.

    Parameters
    ----------
    sheet : CueSheet
    site : Site
    tuning : Tuning
    seed : int
        Seeds the archery (rosters, releases, hits); the same seed gives the same bytes.
    options : SequenceOptions, optional
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PerformanceError(f"seed={seed!r} must be a whole number >= 0")
    options = options or SequenceOptions()
    sheet = performed(sheet, options.variants)  # the 記 apart, chosen variants in place
    repeated = again(sheet)
    sheet = performed_again(sheet)  # what a 如初 stands for, done again
    if options.reading not in READINGS:
        raise PerformanceError(f"reading={options.reading!r}, accepted: {', '.join(READINGS)}")
    if options.soundscape:  # the words are said: each one the voice can say, before any work
        check_quotes(sheet.speech, options.reading, str(sheet.path) if sheet.path else None)
    players = _placed(sheet, site)
    planner = _Planner(sheet, site, tuning, seed, options, players)
    # the rite's own words, else (a sheet of the 大射 under another id) the 大射's, whose
    # site it is played on; a generic rite has none
    preparation = _preparation_steps(sheet, planner.settings.preparation.get(
        site_of(sheet.text.id, sheet.layout) or BUNDLED_NAME))
    talk = step_speech_seconds(sheet.speech, options.reading, planner.settings.speech) \
        if options.soundscape else {}
    on_the_clock = [s for s in sheet.steps if s.id not in preparation]
    climbs = planner.actions.climb_walks(on_the_clock, site=site, durations=options.durations,
                                         seed=seed) if options.soundscape else {}
    timed = time_steps(on_the_clock, options.durations,
                       place_of=_place_of(site), hold=planner.hold, wait=planner.wait,
                       speak=lambda step: talk.get(step.id, 0.0),
                       tells=planner.tells if options.soundscape else lambda step: 0.0,
                       approach=lambda step: planner.approach(step, climbs))
    _within_bound(sheet, timed, options.durations)
    times = {t.id: t for t in timed}
    times.update({id_: TimedStep(id_, sheet.step(id_).section, 0.0, 0.0) for id_ in preparation})
    shooting = planner.shooting
    events = _pronounced(planner.music.events() + shooting.events()
                         + planner.people.fuhou_events(times, tuning), options.reading)
    shot = bool(shooting.shot())
    sources = {**players.sources, **(shooting.sources if shot else {})}  # none idle
    markers = _markers(sheet, times, planner, preparation, repeated)
    if options.soundscape:
        end = max((e.end for e in events), default=0.0)
        end = max([end, *(t.end for t in timed)]) + 10.0
        made, sounds, track = planner.actions.events(
            sheet.steps, times, site=site, durations=options.durations, seed=seed, end=end,
            shots=shooting.shots_at(), quiet=shooting.told_by_walks())
        walkers, walks = planner.actions.turn_walks(
            shooting.turn_walks(times), site=site, durations=options.durations, seed=seed)
        made.update(walkers)
        sounds += walks
        speakers, said = speech_events(sheet.speech, times, track, site=site,
                                       settings=planner.settings.speech, tuning=tuning,
                                       reading=options.reading, shots=shooting.shots_at(),
                                       seed=seed)
        sources.update(made)
        sources.update(speakers)
        events += sounds + _pronounced(said, options.reading)
    events = one_at_a_time(events, sources)  # one phrase at a time, whoever speaks
    sources = standing_where_heard(sources, events)  # a cut starts each where he stands
    if options.soundscape:
        markers += speech_markers(sheet.speech, [e for e in events if e.source in speakers])
    pieces = planner.music.pieces()
    info = Info(sheet.text.title, sheet.text.id, str(sheet.path) if sheet.path else "", seed,
                tuning.name, tuning.huangzhong_hz, options.reading, site=site.rite)
    return Performance.build(events, markers, sources, pieces=pieces, info=info,
                             sections=_sections(sheet, times), music=planner.music.spans(),
                             rounds=shooting.rounds())


def _within_bound(sheet: CueSheet, timed: Sequence[TimedStep], durations: Durations) -> None:
    """Refuse a rite whose steps run past ``MAX_RITE_S``, naming the step that passes it and
    what times the steps (before the sounds of its actions and words are made): every value
    of a durations table may be in range and their sum not (3 600 s an action: 25 hours)."""
    late = next((t for t in timed if t.end > MAX_RITE_S), None)
    if late is not None:
        raise CueSheetError(
            f"{sheet.path or 'the cue sheet'}:{sheet.step(late.id).line}: step {late.id!r} "
            f"ends at {late.end:.0f} s, past the {MAX_RITE_S:.0f} s a rite may run "
            f"(accepted: a rite of at most {MAX_RITE_S / 3600:g} hours; the 大射 runs 2½); "
            f"the steps are timed by {durations.source} (seconds an action, paces, "
            "participants) and the pieces' tempi")


def _placed(sheet: CueSheet, site: Site) -> Players:
    """The orchestra placed by the sheet's 設樂; a layout entry the site cannot hold is
    named at its line in the sheet."""
    try:
        return build_players(sheet, site)
    except SiteError as error:
        named = re.match(r"layout '([^']+)'", str(error))
        ids = {item.id: item for item in sheet.layout}
        if named is None or named[1] not in ids:
            raise
        raise SiteError(f"{sheet.path or 'cue sheet'}:{ids[named[1]].line}: {error}") from None


def _pronounced(events: list[Event], reading: str) -> list[Event]:
    """Every sung character or spoken phrase with its phones in ``reading`` (a phrase's
    syllables separated by ``|``, each with its tone as Chao digits); words the reading
    cannot read keep none, and the voice reads the characters itself. A sung character
    is read in its song's words (``_sung``): 樂 is joy in 「和樂且湛」."""
    sung = _sung(events, reading)
    phones: dict[str, str | None] = {}
    for lyric in {e.lyric for e in events if e.lyric}:
        try:
            phones[lyric] = phrase_phones(lyric, reading)  # as check_quotes read it
        except ReadingError:
            phones[lyric] = None
    return [replace(e, phones=sung[i] if i in sung else phones[e.lyric]) if e.lyric else e
            for i, e in enumerate(events)]


def _sung(events: list[Event], reading: str) -> dict[int, str]:
    """Event index → phones of each sung character, read in the words of its line: one
    voice's characters in a piece's cue, in time order, read as one text, so each
    character's sense comes from the words around it (``text.senses``)."""
    lines: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(events):
        if e.piece and e.articulation == "sing" and e.lyric and len(e.lyric) == 1:
            lines.setdefault((e.cue, e.source), []).append(i)
    read_as: dict[str, tuple | None] = {}
    out: dict[int, str] = {}
    for line in lines.values():
        line.sort(key=lambda i: events[i].time)
        text = "".join(events[i].lyric or "" for i in line)
        if text not in read_as:
            try:
                read_as[text] = read(text, reading)
            except ReadingError:  # each character is then read alone, as before
                read_as[text] = None
        said = read_as[text]
        if said is not None and len(said) == len(line):
            out.update((i, s.lyric) for i, s in zip(line, said, strict=True))
    return out


def _preparation_steps(sheet: CueSheet, day_begins: str | None) -> set[str]:
    """The steps before the first one holding the words that begin the rite's day."""
    if day_begins is None:
        return set()
    first = next((i for i, s in enumerate(sheet.steps) if mentions(s.quote, day_begins)), 0)
    return {s.id for s in sheet.steps[:first]}


def _place_of(site: Site):
    def where(place: str):
        try:
            return site.place(place)
        except (KeyError, ValueError):
            return None
    return where


def _markers(sheet: CueSheet, times: Mapping[str, TimedStep], planner: _Planner,
             preparation: set[str], repeated: Mapping[str, tuple[Step, Step]]
             ) -> list[Marker]:
    """Markers as ``中文`` text and an English gloss (``text.gloss``), in full. The
    preparation, done before the day, is one marker at 0 s, not a pile of its steps; a
    step performed again (``repeated``: copy id → the 如初 step, the step) says so."""
    english = gloss.load()
    before = [s for s in sheet.sections if sheet.steps_in(s.id)
              and all(t.id in preparation for t in sheet.steps_in(s.id))]
    markers = [_before_the_day(sheet, before, english)] if before else []
    for section in sheet.sections:
        steps = sheet.steps_in(section.id)
        if steps and section not in before:
            markers.append(Marker(min(times[s.id].start for s in steps), "section",
                                  f"右{section.name}", english.section(section.name), section.id))
    for step in sheet.steps:
        if step.id not in preparation:
            said = english.step(step.actor, step.action, step.place, step.quote)
            if step.id in repeated:
                ruchu, original = repeated[step.id]
                said = f"As at first (如初, {ruchu.id}; {original.id}): {said}"
            markers.append(Marker(times[step.id].start, "step", step.quote, said, step.id,
                                  step.quote))
    for played in planner.music.played.values():
        if played.end is None:
            continue
        piece = played.piece
        name = piece.roman or piece.id
        markers.append(Marker(played.start, "music", played.cue.quote,
                              f"{name} begins ({piece.basis})", played.cue.id, played.cue.quote))
        markers.append(Marker(played.start + played.end, "music", f"{piece.title} 止",
                              f"{name} ends", played.cue.id))
    for shoot in planner.shooting.shot():
        markers.append(Marker(shoot.start, "shot", archery.ROUND_NAMES[shoot.number],
                              english.rounds.get(shoot.number, f"round {shoot.number}"),
                              shoot.steps[0].id, shoot.steps[0].quote))
    return markers


def _before_the_day(sheet: CueSheet, sections: list, english: gloss.English) -> Marker:
    """One marker at 0 s for the sections done before the rite's day, saying when."""
    def when(name: str) -> str:
        said = english.before.get(name)
        return f"{english.section(name).lower()} ({said})" if said else english.section(name)
    return Marker(0.0, "section", " ".join(f"右{s.name}" for s in sections),
                  "Before the day: " + "; ".join(when(s.name) for s in sections),
                  sections[0].id, "".join(t.quote for s in sections for t in sheet.steps_in(s.id)))


def _sections(sheet: CueSheet, times: Mapping[str, TimedStep]) -> tuple[SectionSpan, ...]:
    spans = []
    for section in sheet.sections:
        steps = [times[s.id] for s in sheet.steps_in(section.id)]
        if steps:
            spans.append(SectionSpan(section.id, section.name, min(t.start for t in steps),
                                     max(t.end for t in steps)))
    return tuple(spans)


def perform_from_file(cues: str | Path | None = None, *, seed: int = 0,
                      from_section: str | None = None, to_section: str | None = None,
                      site: Site | None = None, tuning: Tuning | None = None,
                      options: SequenceOptions | None = None) -> Performance:
    """Load a cue sheet (None → the bundled 大射 sheet) and sequence it.

    ``from_section`` / ``to_section`` (section id like ``s18``, name like 樂賓 or heading
    like 右樂賓) cut the performance to those sections (:meth:`Performance.cut`), times
    shifted so the first starts at 0.
    """
    sheet = performed(load(cues if cues is not None else bundled_path()),
                      options.variants if options else ())
    rite = site_of(sheet.text.id, sheet.layout)  # its site: 鄉射 in the 序, else generic
    performance = perform(sheet, site=site or load_site(rite=rite),
                          tuning=tuning or default_tuning(),
                          seed=seed, options=options)
    return performance.cut(from_section, to_section)
