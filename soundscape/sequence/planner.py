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
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from soundscape import validate
from soundscape.cuesheet import (
    STOP_LENGTH,
    CueSheet,
    MusicCue,
    Step,
    bundled_path,
    load,
    performed,
)
from soundscape.errors import CueSheetError, PerformanceError, RepertoireError, SiteError
from soundscape.fileio import read_toml
from soundscape.music.arrange import Arrangement, arrange
from soundscape.music.register import octave_shift, sung_pitch
from soundscape.music.repertoire import Piece, load_piece
from soundscape.music.tuning import Tuning, default_tuning
from soundscape.performance import (
    Event,
    Info,
    Marker,
    MusicSpan,
    Performance,
    PieceInfo,
    SectionSpan,
)
from soundscape.resources import data_dir
from soundscape.sequence import archery, archery_events
from soundscape.sequence.actions import load_actions
from soundscape.sequence.ensemble import load_ensemble
from soundscape.sequence.players import Players, build_players, printed_pattern, wusuan_turn
from soundscape.sequence.singing import join_lines, one_throat
from soundscape.sequence.speech import (
    one_at_a_time,
    speech_events,
    speech_markers,
    step_speech_seconds,
)
from soundscape.sequence.timeline import Durations, TimedStep, time_steps
from soundscape.site.courtyard import Site, load_site, site_of
from soundscape.text import gloss
from soundscape.text.reading import (
    DEFAULT_READING,
    READINGS,
    ReadingError,
    phrase_contours,
    read,
    syllable,
)

__all__ = ["SequenceOptions", "perform", "perform_from_file"]

# Which phase of the 工 a kind of music puts them in (site.performer_position).
_GONG_PHASE = {"ge": "ge", "guan": "guan"}


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


@dataclass
class _Played:
    """A music cue on the clock: its start, and its arrangement once it is known."""

    cue: MusicCue
    piece: Piece
    start: float
    arrangement: Arrangement | None = None
    end: float | None = None  # seconds from start where the music stops


@dataclass
class _Round:
    """A shoot laid on the text: where it starts, which steps narrate it, where 算 are counted."""

    number: int
    steps: tuple[Step, ...]
    count_step: str | None
    split_at_pair: str | None = None
    start: float = 0.0
    split: float | None = None  # when the later section of a two-section round begins
    result: archery.RoundResult | None = None
    music: _Played | None = None

    def parts(self) -> list[tuple[Step, ...]]:
        """The round's steps by section, in order."""
        sections: dict[str, list[Step]] = {}
        for step in self.steps:
            sections.setdefault(step.section, []).append(step)
        return [tuple(steps) for steps in sections.values()]


def _settings() -> dict[str, Any]:
    return read_toml(data_dir() / "sequence.toml", CueSheetError)


def _rounds(sheet: CueSheet, specs: Iterable[Mapping[str, Any]]) -> dict[str, _Round]:
    """The shoots found in the text, keyed by the step where each starts. A spec names the
    sections to look in (all, without ``sections``), may start after the first step
    holding ``after`` (the 司射's command of the round), and ends at the last (or, with
    ``end = "first"``, the first) step holding ``until``."""
    found = {}
    for spec in specs:
        steps = [s for sec in sheet.sections if any(n in sec.name for n in spec["sections"])
                 for s in sheet.steps_in(sec.id)] if "sections" in spec else list(sheet.steps)
        begin = next((i for i, s in enumerate(steps) if spec.get("after", "") in s.quote), None)
        starts = [i for i, s in enumerate(steps) if spec["at"] in s.quote
                  and begin is not None and i >= begin]
        if not starts:
            continue
        first = starts[0]
        ends = [i for i, s in enumerate(steps) if spec["until"] in s.quote and i >= first]
        last = (ends[0] if spec.get("end") == "first" else ends[-1]) if ends else first
        span = tuple(steps[first:last + 1])
        count = None
        if "count_at" in spec:  # a quote, or its spellings in the editions (視筭, 視算)
            words = [spec["count_at"]] if isinstance(spec["count_at"], str) else spec["count_at"]
            later = sheet.steps[sheet.step_index(span[-1].id) + 1:]
            count = next((s.id for s in later if any(w in s.quote for w in words)), None)
        found[span[0].id] = _Round(spec["number"], span, count, spec.get("split_at_pair"))
    return found


class _Planner:
    """Answers the clock's questions (how long must this step take, when may it start)
    and remembers what it decided, so the events can be made afterwards."""

    def __init__(self, sheet: CueSheet, site: Site, tuning: Tuning, seed: int,
                 options: SequenceOptions, players: Players) -> None:
        self.sheet, self.site, self.tuning, self.seed = sheet, site, tuning, seed
        self.options, self.players = options, players
        self.settings = _settings()
        # the rite's archery (鄉射: one 侯, its pairs, 騶虞's 五節) and where its rounds stand
        self.config = options.archery or archery.load_config(rite=sheet.text.id)
        self.roster = archery.build_roster(config=self.config, counts=options.roster,
                                           rng=np.random.default_rng([seed, 0]))
        self.rounds = _rounds(sheet, self.config.data.get("round", self.settings["round"]))
        self.counts = {r.count_step: r for r in self.rounds.values() if r.count_step}
        self.played: dict[str, _Played] = {}
        self.stretch: dict[str, float] = {}
        self.count_events: list[Event] = []
        self.archery_sources = (archery_events.archery_sources(site, config=self.config)
                                if self.rounds else {})
        self.ensemble = load_ensemble()

    # -- the clock's questions -------------------------------------------------------
    def hold(self, step: Step, start: float) -> float:
        for move in self.settings["gong_move"]:
            if move["at"] in step.quote:
                self.players.move_gong(start, move["phase"], self.site)
        needed = self.stretch.get(step.id, 0.0)
        shoot = self.rounds.get(step.id)
        after = 0.0  # music-bound cues of one step play one after another, in sheet order
        for cue in self.sheet.music_at(step.id):
            shot_to = shoot is not None and cue.kind == "she"
            played = self._start(cue, start + after, arranged_by_shoot=shot_to)
            if shot_to:
                shoot.music = played
            elif played.end is not None:
                after += played.end
                needed = max(needed, after)
        if shoot is not None:
            needed = max(needed, self._shoot(shoot, start))
        if step.id in self.counts:
            needed = max(needed, self._count(self.counts[step.id], start))
        return needed

    def wait(self, step: Step, clock: float) -> float:
        earliest = 0.0
        for played in self.played.values():
            if played.cue.stop == step.id and played.end is None:
                self._fill(played, clock - played.start)
                earliest = max(earliest, played.start + played.end)
        return earliest

    # -- music ---------------------------------------------------------------------
    def _start(self, cue: MusicCue, start: float, *, arranged_by_shoot: bool) -> _Played:
        with self._about(cue):
            return self._arrange_start(cue, start, arranged_by_shoot=arranged_by_shoot)

    @contextlib.contextmanager
    def _about(self, cue: MusicCue) -> Iterator[None]:
        """A problem with a cue's piece, told at the cue's line in the sheet."""
        where = f"{self.sheet.path or 'cue sheet'}:{cue.line}"
        try:
            yield
        except (RepertoireError, CueSheetError) as error:
            if str(error).startswith(where):
                raise
            raise CueSheetError(f"{where}: music {cue.id!r}: {error}") from None

    def _arrange_start(self, cue: MusicCue, start: float, *,
                       arranged_by_shoot: bool) -> _Played:
        piece = printed_pattern(load_piece(cue.piece), cue)  # a pattern the edition prints
        # a shooting 節 where no shoot of the text is found (data/archery.toml, sequence.toml
        # [[round]]) is played at its length, its 節 evenly, with no arrows
        unshot = piece.jie is not None and not arranged_by_shoot and cue.kind == "she"
        if piece.jie is not None and not arranged_by_shoot and cue.stop != STOP_LENGTH \
                and not unshot:
            raise RepertoireError(
                f"piece {piece.id!r} is a shooting piece (its 節 are counted by the shots), so "
                f"it cannot stop at step {cue.stop!r}; accepted: kind = \"she\" at a shoot, "
                "or stop = \"length\"")
        played = _Played(cue, piece, start)
        self.played[cue.id] = played
        if cue.kind in _GONG_PHASE:
            self.players.move_gong(start, _GONG_PHASE[cue.kind], self.site)
        if arranged_by_shoot:
            return played
        if piece.fill_seconds is not None:  # a selection played for a set time (無算樂)
            played.arrangement = arrange(piece, tuning=self.tuning,
                                         fill_seconds=self.options.wusuan_seconds)
        elif cue.stop == STOP_LENGTH or unshot:
            played.arrangement = arrange(piece, tuning=self.tuning,
                                         repeats=piece.zhong.count if unshot else cue.repeats,
                                         reading=self._reading(piece))
        if played.arrangement is not None:
            played.end = played.arrangement.end
        return played

    def _reading(self, piece: Piece) -> str | None:
        return self.options.zhong if self.options.zhong in piece.zhong.readings else None

    def _fill(self, played: _Played, span: float) -> None:
        """Arrange a rite-bound piece to the first phrase end at or after ``span`` seconds."""
        longest = max((sum(n.beats for n in phrase) for phrase in played.piece.phrases),
                      default=1.0) * 60.0 / played.piece.tempo_bpm
        with self._about(played.cue):
            arrangement = arrange(played.piece, tuning=self.tuning,
                                  fill_seconds=max(span, 0.0) + 2 * longest + 1.0)
        ends = [e for e in arrangement.phrase_ends if e >= span - 1e-9]
        played.arrangement = arrangement
        played.end = ends[0] if ends else arrangement.phrase_ends[-1]

    # -- archery ---------------------------------------------------------------------
    def _shoot(self, shoot: _Round, start: float) -> float:
        """Simulate the shoot from ``start``; stretch its narrating steps over it."""
        shoot.start = start
        rng = np.random.default_rng([self.seed, 1, shoot.number])
        jie = None
        if shoot.number == 3:
            jie = self._jie(shoot, start)
        shoot.result = archery.simulate_round(shoot.number, archers=self.roster, jie_times=jie,
                                              site=self.site, rng=rng, config=self.config,
                                              start=start)
        music_end = start + shoot.music.end if shoot.music and shoot.music.end else start
        end = max(shoot.result.end, music_end) + self.settings["timing"]["after_round_s"]
        parts = shoot.parts()
        split = next((t.start for t in shoot.result.turns if t.pair is not None
                      and t.pair.id == shoot.split_at_pair), None)
        if split is not None and len(parts) > 1:
            # the first section narrates the turns before that pair, the rest the others
            shoot.split = split
            self._spread([s for part in parts[:-1] for s in part], split - start)
            self._spread(parts[-1], end - split)
        else:
            self._spread(shoot.steps, end - start)
        return self.stretch[shoot.steps[0].id]

    def _spread(self, steps: Iterable[Step], length: float) -> None:
        """Stretch ``steps`` (never shrink them) so that together they last ``length`` s."""
        steps = list(steps)
        own = [self.options.durations.step_seconds(s) for s in steps]
        factor = max(1.0, length / max(sum(own), 1e-9))
        for step, seconds in zip(steps, own, strict=True):
            self.stretch[step.id] = seconds * factor

    def _jie(self, shoot: _Round, start: float) -> list[float]:
        """The drum 節 of round three, evenly spaced: 貍首 played on, 7 節 a pair (大射);
        騶虞, 5 (鄉射). The piece's own heard 節 must be the rite's."""
        heard = int(self.config.number("music", "heard_jie"))
        per_turn = heard + int(self.config.number("music", "shot_jie"))
        turns = len(self.roster)
        if shoot.music is None:
            return list(archery.even_jie_times(start, turns, config=self.config))
        played = shoot.music
        if played.piece.jie is not None and played.piece.jie.heard != heard:
            raise PerformanceError(
                f"{self.config.source}: music.heard_jie = {heard}, but piece "
                f"{played.piece.id!r} hears {played.piece.jie.heard} 節 first; accepted: the same")
        played.arrangement = arrange(played.piece, tuning=self.tuning, repeats=per_turn * turns)
        played.end = played.arrangement.end
        return [start + t for t in played.arrangement.jie]

    def _count(self, shoot: _Round, start: float) -> float:
        if shoot.result is None:
            return 0.0
        events = archery_events.count_events(
            shoot.result, start=start, sources=self.archery_sources, tuning=self.tuning,
            cue_ids=self._cue_ids(shoot), config=self.config, gong=self._gong())
        self.count_events += events
        return max((e.end for e in events), default=start) - start

    def _cue_ids(self, shoot: _Round, part: int = 0) -> dict[str, str]:
        """Which cue-sheet entries the sounds of one section of the round trace to."""
        steps = shoot.parts()[part]
        ids = {"shoot": steps[0].id, "tally": steps[0].id}
        sections = {s.section for s in steps}
        for voice in self.sheet.voices:
            if voice.actor == "huozhe" and self.sheet.step(voice.step).section in sections:
                ids.setdefault(voice.what, voice.id)
        if shoot.count_step:
            ids["announce"] = shoot.count_step
        return ids

    def shots_at(self) -> dict[str, tuple]:
        """Step id → the arrows of the simulated round that step narrates."""
        return {step.id: shoot.result.shots for shoot in self.rounds.values()
                if shoot.result is not None for step in shoot.steps}

    def _gong(self) -> str:
        return self.settings["timing"]["mode_gong"]

    # -- events ----------------------------------------------------------------------
    def music_events(self) -> list[Event]:
        events = []
        for played in self.played.values():
            if played.arrangement is None:
                continue
            with self._about(played.cue):
                notes = [(note, self.players.assign(played.cue, note))
                         for note in _with_sheng(played, self.players.names(played.cue, "sheng"))
                         if _sounds(played, note)]
            takes = self.ensemble.perform(
                played.arrangement, notes, kind=played.cue.kind, seed=self.seed,
                cue=played.cue.id, sources=[s for _, group in notes for s in group])
            shift = self._sung_octaves(played)
            sung = []  # the singers' notes, with their phrases: joined into lines below
            for (note, _), group in zip(notes, takes, strict=True):
                for take in group:
                    voice = self.players.sources[take.source].instrument == "voice"
                    pitch = note.pitch
                    if voice and pitch is not None:
                        pitch = sung_pitch(pitch, self._singers(), shift=shift)
                    event = Event(
                        played.start + take.time, take.duration, take.source, pitch,
                        take.velocity, note.articulation, played.cue.id, played.piece.id,
                        note.lyric if voice else None,
                        self.players.position(take.source, note))
                    if voice and note.articulation == "sing":
                        sung.append((event, note.phrase))
                    else:
                        events.append(event)
            events += join_lines(sung, self.ensemble.breath, seed=self.seed)
        return one_throat(events)  # across pieces too: songs that follow without a rest

    def _singers(self) -> str:
        return self.settings["register"]["singers"]

    def _sung_octaves(self, played: _Played) -> int:
        """The octaves the 工 move a piece's song by to sing it in their register."""
        sung = [n.pitch for n in played.arrangement.notes()
                if n.instrument == "voice" and n.pitch is not None]
        return octave_shift(sung, self._singers()) if sung else 0

    def archery_events(self) -> list[Event]:
        events = list(self.count_events)
        for shoot in self.rounds.values():
            if shoot.result is None:
                continue
            sounds = archery_events.round_events(shoot.result, sources=self.archery_sources,
                                          tuning=self.tuning, cue_ids=self._cue_ids(shoot),
                                          config=self.config, gong=self._gong())
            if shoot.split is not None:
                sounds = _retrace(sounds, shoot.split, self._cue_ids(shoot),
                                  self._cue_ids(shoot, -1))
            events += sounds + self._extra_strokes(shoot)
        return events

    def _extra_strokes(self, shoot: _Round) -> list[Event]:
        """Drum strokes the shooters loose on that the arrangement does not already sound."""
        if shoot.music is None or shoot.music.arrangement is None:
            return []
        played = shoot.music
        drums = [n for n in played.arrangement.notes() if n.instrument == "jiangu"]
        heard = [played.start + n.time for n in drums]
        model = drums[-1]
        source = self.players.assign(played.cue, model)[0]
        extra = [t for t in shoot.result.strokes if min(abs(t - h) for h in heard) > 0.03]
        return [Event(t, model.duration, source, None, model.velocity, model.articulation,
                      played.cue.id, played.piece.id) for t in extra]

    def voice_events(self, times: Mapping[str, TimedStep]) -> list[Event]:
        """The 負侯's answers: 宮 from each target, then 商 from its 乏 (又諾以商 至乏聲止)."""
        timing = self.settings["timing"]
        events = []
        for voice in self.sheet.voices:
            if voice.actor != "fuhou" or voice.step not in times:
                continue
            pitch = self.tuning.degree(gong=self._gong(), degree=voice.degree)
            walking = voice.degree == "商"
            for target in self.site.targets.values():
                where = self.site.place(target.fa if walking else target.id)
                events.append(Event(
                    times[voice.step].start, timing["voice_walk_call_s" if walking
                                                     else "voice_call_s"],
                    f"voice.fuhou.{target.id}", pitch, 0.8, "call", voice.id,
                    lyric="諾",
                    position=(where[0], where[1], self.site.people["standing_mouth"])))
        return events


def _with_sheng(played: _Played, sheng: bool = False) -> Iterator:
    """The arrangement's notes; in a 合樂 the 笙 also play the 瑟's line (鄉飲酒禮: 乃合樂
    周南關雎…, 鄭注: 合樂謂歌樂與衆聲俱作: song, 瑟 and 笙 together); in 無算樂, where the cue
    names 笙 (``sheng``), each stanza is 合 or 間 (``players.wusuan_turn``)."""
    for note in played.arrangement.notes():
        turn = wusuan_turn(played.cue, played.arrangement, note, sheng)
        if turn != "間" or note.instrument not in ("voice", "se"):
            yield note
        if (played.cue.kind == "he" or turn) and note.instrument == "se":
            yield replace(note, part="sheng", instrument="sheng", articulation="blow")


def _sounds(played: _Played, note) -> bool:
    """Whether an arranged note is played: everything before the music stops, and the
    closing 節 stroke on it."""
    if note.time >= played.end - 1e-9 and note.role != "jie":
        return False
    return note.time <= played.end + 1e-9


def _retrace(events: list[Event], split: float, before: Mapping[str, str],
             after: Mapping[str, str]) -> list[Event]:
    """Credit the sounds made from ``split`` on to the later section's cues."""
    moved = {before[role]: after[role] for role in before if role in after}
    return [replace(e, cue=moved.get(e.cue, e.cue)) if e.time >= split else e for e in events]


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
    if options.reading not in READINGS:
        raise PerformanceError(f"reading={options.reading!r}, accepted: {', '.join(READINGS)}")
    players = _placed(sheet, site)
    planner = _Planner(sheet, site, tuning, seed, options, players)
    preparation = _preparation_steps(sheet, planner.settings["preparation"])
    talk = step_speech_seconds(sheet.speech, options.reading, planner.settings["speech"]) \
        if options.soundscape else {}
    timed = time_steps([s for s in sheet.steps if s.id not in preparation], options.durations,
                       place_of=_place_of(site), hold=planner.hold, wait=planner.wait,
                       speak=lambda step: talk.get(step.id, 0.0))
    _within_bound(sheet, timed)
    times = {t.id: t for t in timed}
    times.update({id_: TimedStep(id_, sheet.step(id_).section, 0.0, 0.0) for id_ in preparation})
    events = _pronounced(planner.music_events() + planner.archery_events()
                         + planner.voice_events(times), options.reading)
    shot = any(r.result is not None for r in planner.rounds.values())
    sources = {**players.sources, **(planner.archery_sources if shot else {})}  # none idle
    markers = _markers(sheet, times, planner, preparation)
    if options.soundscape:
        end = max((e.end for e in events), default=0.0)
        end = max([end, *(t.end for t in timed)]) + 10.0
        made, sounds, track = load_actions().events(
            sheet.steps, times, site=site, durations=options.durations, seed=seed, end=end)
        speakers, said = speech_events(sheet.speech, times, track, site=site,
                                       settings=planner.settings["speech"], tuning=tuning,
                                       reading=options.reading, shots=planner.shots_at())
        sources.update(made)
        sources.update(speakers)
        events += sounds + _pronounced(said, options.reading)
    events = one_at_a_time(events, sources)  # one phrase at a time, whoever speaks
    if options.soundscape:
        markers += speech_markers(sheet.speech, [e for e in events if e.source in speakers])
    pieces = {p.piece.id: PieceInfo(p.piece.id, p.piece.title, p.piece.basis,
                                    p.piece.basis_note) for p in planner.played.values()}
    info = Info(sheet.text.title, sheet.text.id, str(sheet.path) if sheet.path else "", seed,
                tuning.name, tuning.huangzhong_hz, options.reading)
    return Performance.build(events, markers, sources, pieces=pieces, info=info,
                             sections=_sections(sheet, times), music=_music(planner),
                             rounds=_rounds_shot(planner))


def _within_bound(sheet: CueSheet, timed: list[TimedStep]) -> None:
    """Refuse a rite whose steps run past ``MAX_RITE_S``, naming the step that passes it
    (before the sounds of its actions and words are made)."""
    late = next((t for t in timed if t.end > MAX_RITE_S), None)
    if late is not None:
        raise CueSheetError(
            f"{sheet.path or 'the cue sheet'}:{sheet.step(late.id).line}: step {late.id!r} "
            f"ends at {late.end:.0f} s, past the {MAX_RITE_S:.0f} s a rite may run "
            f"(accepted: a rite of at most {MAX_RITE_S / 3600:g} hours; the 大射 runs 2½)")


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
            said = read(lyric, reading)  # a phrase's tones as said together (3 3 → 2 3)
            phones[lyric] = syllable(lyric, reading).lyric if len(lyric) == 1 else " | ".join(
                f"{s.lyric} {''.join(map(str, c))}"
                for s, c in zip(said, phrase_contours(said), strict=True))
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
    out = {}
    for line in lines.values():
        line.sort(key=lambda i: events[i].time)
        text = "".join(events[i].lyric for i in line)
        if text not in read_as:
            try:
                read_as[text] = read(text, reading)
            except ReadingError:  # each character is then read alone, as before
                read_as[text] = None
        said = read_as[text]
        if said is not None and len(said) == len(line):
            out.update((i, s.lyric) for i, s in zip(line, said, strict=True))
    return out


def _preparation_steps(sheet: CueSheet, names: Iterable[str]) -> set[str]:
    sections = {s.id for s in sheet.sections if s.name in set(names)}
    return {s.id for s in sheet.steps if s.section in sections}


def _place_of(site: Site):
    def where(place: str):
        try:
            return site.place(place)
        except (KeyError, ValueError):
            return None
    return where


def _markers(sheet: CueSheet, times: Mapping[str, TimedStep], planner: _Planner,
             preparation: set[str]) -> list[Marker]:
    """Markers as ``中文`` text and an English gloss (``text.gloss``), in full. The
    preparation, done before the day, is one marker at 0 s, not a pile of its steps."""
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
            markers.append(Marker(times[step.id].start, "step", step.quote,
                                  english.step(step.actor, step.action, step.place, step.quote),
                                  step.id, step.quote))
    for played in planner.played.values():
        if played.end is None:
            continue
        piece = played.piece
        name = piece.roman or piece.id
        markers.append(Marker(played.start, "music", played.cue.quote,
                              f"{name} begins ({piece.basis})", played.cue.id, played.cue.quote))
        markers.append(Marker(played.start + played.end, "music", f"{piece.title} 止",
                              f"{name} ends", played.cue.id))
    for shoot in planner.rounds.values():
        if shoot.result is not None:
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


def _music(planner: _Planner) -> tuple[MusicSpan, ...]:
    return tuple(MusicSpan(p.cue.id, p.piece.id, p.start, p.start + p.end,
                           "rite" if p.cue.stop != STOP_LENGTH else "music")
                 for p in planner.played.values() if p.end is not None)


def _rounds_shot(planner: _Planner):
    return tuple(r.result.record([r.music.start + t for t in r.music.arrangement.jie]
                                 if r.music and r.music.arrangement else ())
                 for r in planner.rounds.values() if r.result is not None)


def perform_from_file(cues: str | Path | None = None, *, seed: int = 0,
                      from_section: str | None = None, to_section: str | None = None,
                      site: Site | None = None, tuning: Tuning | None = None,
                      options: SequenceOptions | None = None) -> Performance:
    """Load a cue sheet (None → the bundled 大射 sheet) and sequence it.

    ``from_section`` / ``to_section`` (section id like ``s18`` or name like 樂賓)
    cut the performance to those sections, times shifted so the first starts at 0.
    """
    sheet = performed(load(cues if cues is not None else bundled_path()),
                      options.variants if options else ())
    rite = site_of(sheet.text.id, sheet.layout)  # its site: 鄉射 in the 序, else generic
    performance = perform(sheet, site=site or load_site(rite=rite),
                          tuning=tuning or default_tuning(),
                          seed=seed, options=options)
    if from_section is None and to_section is None:
        return performance
    return cut(performance, sheet, from_section, to_section)


def cut(performance: Performance, sheet: CueSheet, from_section: str | None,
        to_section: str | None) -> Performance:
    """The part of ``performance`` from the start of one section to the end of another."""
    first = _section_id(sheet, from_section) if from_section else sheet.sections[0].id
    last = _section_id(sheet, to_section) if to_section else sheet.sections[-1].id
    if sheet.sections.index(sheet.section(first)) > sheet.sections.index(sheet.section(last)):
        raise CueSheetError(f"--from {from_section!r} comes after --to {to_section!r}")
    return performance.between(performance.section(first).start,
                               performance.section(last).end)


def _section_id(sheet: CueSheet, name: str) -> str:
    try:
        return sheet.section(name).id
    except (KeyError, CueSheetError):
        known = ", ".join(f"{s.id} {s.name}" for s in sheet.sections)
        raise CueSheetError(f"section {name!r} is not in the cue sheet; known: {known}") from None
