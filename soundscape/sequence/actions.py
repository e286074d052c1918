"""The sounds between the music: what the rite's people do, and the place itself.

Every step is something its actor does. The actor first walks to the step's
place (the clock already timed the walk: ``TimedStep.walk``) and is heard as
footsteps on the floor under them, cut into short pieces so the sound moves;
then the action makes the sounds ``data/actions.toml`` gives it (a bow's robe,
a cup set down, wine poured, arrows gathered), at the actor's place and the
height the table says, once per participant where the step goes round (辯).
The place is a diffuse bed (air, trees, distant life) from sources beyond the
courtyard's corners, birds, cicadas and crickets calling from trees and walls around
it by the hour, and torches that burn from the step that lights them; every segment
and call is its own rendering, so the place never repeats. Every sound is traced to
its step (``Event.cue``).
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from soundscape.cuesheet import SpeechCue, Step
from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.geometry import Vec3
from soundscape.music.instruments import load_instrument
from soundscape.performance import Event, Shot, Source
from soundscape.resources import data_dir
from soundscape.sequence.timeline import Durations, StepLike, TimedStep
from soundscape.site.courtyard import Site
from soundscape.text import glossary
from soundscape.text.derive import (
    names_a_thing,
    negated,
    paid_for,
    place_mentions,
    without_names,
)
from soundscape.text.hanzi import mentions, normalise

__all__ = ["ActionSounds", "TurnWalk", "load_actions", "shooting_words"]

_UP = (0.0, 0.0, 1.0)


@dataclass(frozen=True)
class _Sound:
    instrument: str
    articulation: str
    velocity: float
    at: float
    duration: float
    height: float


@dataclass(frozen=True)
class _Doing:
    """An action a step's text names: where it stands in the text (0–1), its word, where
    it is heard, and where its doer is when it begins and when it ends (the two ends of
    the stairs for 升 and 降, else where it is heard)."""

    fraction: float
    word: str
    point: Vec3
    begin: Vec3
    end: Vec3


@dataclass(frozen=True)
class TurnWalk:
    """A walk a text tells and the others do likewise (亦如之): an archer of a pair going up
    to his mark or coming down from it. ``text`` names what he does on the way and where
    (出次西面揖當階北面揖及階揖升堂揖當物北面揖及物揖) as ``actor``'s (上射), from ``start``
    (a site place); ``side_m``: how far east of the places he keeps (the pair walk side by
    side, 上射在左); he leaves at ``begin`` at his pace, done by ``end`` if given (quicker in
    proportion where that is too soon). Heard as step ``cue``'s, from a source of the
    ``walker``'s own (else the actor's)."""

    cue: str
    actor: str
    text: str
    start: str
    begin: float
    end: float | None = None
    side_m: float = 0.0
    walker: tuple[str, str] | None = None  # who walks (id, name: sanou.2.shang, 次耦上射)


@dataclass(frozen=True)
class _Told:
    """What a turn walk's words are read as: a step of its actor with no action of its own."""

    id: str
    actor: str
    quote: str
    action: str = ""
    section: str = ""
    place: str | None = None


#: A name after these is where a doer goes or whom he speaks to, not another doer (告於公).
_TOWARDS = ("於", "于")
#: The creatures' calls are drawn a minute at a time, each minute and species from its own
#: generator: a step made longer (the night later, the rite's end) leaves the calls before
#: it as they were (one generator for all drew every call anew).
_CALL_WINDOW_S = 60.0

@dataclass(frozen=True)
class ActionSounds:
    """The table of ``data/actions.toml``; :meth:`events` makes the sounds of a timed rite."""

    walk: Mapping[str, Any]
    start: Mapping[str, str]
    by_action: Mapping[str, tuple[tuple[_Sound, int], ...]]
    by_word: Mapping[str, _Sound]
    bed: Mapping[str, Any]
    torch: Mapping[str, Any]
    creatures: Mapping[str, Any]
    stairs: Mapping[str, Any]
    #: The words said in each step's text, by the step's first offset: (start, end) within
    #: its normalised quote (``saying``).
    said: Mapping[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def saying(self, speech: Iterable[SpeechCue], steps: Iterable[Step]) -> ActionSounds:
        """This table knowing which of each step's words are said (the sheet's speech cues):
        射 said (告於公曰左右卒射) is no shooting of the one who says it."""
        starts = {step.id: step.span[0] for step in steps}
        said: dict[int, list[tuple[int, int]]] = {}
        for cue in speech:
            if cue.step in starts:
                start = starts[cue.step]
                said.setdefault(start, []).append((cue.span[0] - start, cue.span[1] - start))
        return replace(self, said={k: tuple(v) for k, v in said.items()})

    def _said(self, step: StepLike) -> tuple[tuple[int, int], ...]:
        """The spans of the step's normalised quote that are words said (``saying``)."""
        span = getattr(step, "span", None)
        return self.said.get(span[0], ()) if span else ()

    def _shooting_words(self, step: Step, text: str) -> tuple[int, int] | None:
        """``shooting_words`` of the step's normalised ``text``, its words said left out."""
        return shooting_words(text, self._said(step))

    def events(self, steps: Iterable[Step], times: Mapping[str, TimedStep], *, site: Site,
               durations: Durations, seed: int, end: float,
               shots: Mapping[str, Sequence[Shot]] | None = None,
               quiet: Iterable[str] = ()
               ) -> tuple[dict[str, Source], list[Event], list[tuple[float, str, Vec3]]]:
        """The sources and events of the actions of ``steps`` and of the place, up to
        ``end`` seconds, and the track of where each actor stands from when
        (``(time, actor, floor point)``, in time order). ``shots``: step id → the arrows
        of the round it narrates (its actions are heard before, between and after them
        as its text puts them). ``quiet``: steps whose doers move as they tell but are
        heard elsewhere (a round's archers, in their turn walks)."""
        made = _Made()
        track = self._people(made, steps, times, site=site, durations=durations, seed=seed,
                             shots=shots or {}, quiet=set(quiet), climbs={})
        self._place_bed(made, steps, times, site, end, seed)
        return made.sources, made.events, sorted(track, key=lambda entry: entry[0])

    def climb_walks(self, steps: Sequence[Step], *, site: Site, durations: Durations,
                    seed: int) -> dict[str, float]:
        """Step id → the seconds one doer's own 升 or 降 needs before it, for what his text has
        him do first and his walk to the stairs from where the rite has put him, and after
        it on to the step's place: what the clock gives the step's walk (``time_steps``'s
        ``approach``), which by itself knows only the places steps name (司馬正又袒執弓升:
        from his place in the court, some 20 m). Where people are does not depend on when,
        so a clock of one second a step tells it (a step of no time is skipped by both)."""
        anytime = {step.id: TimedStep(step.id, step.section, 0.0, 1.0) for step in steps}
        climbs: dict[str, float] = {}
        self._people(_Made(), steps, anytime, site=site, durations=durations, seed=seed,
                     shots={}, quiet=set(), climbs=climbs)
        return climbs

    def _people(self, made: _Made, steps: Iterable[Step], times: Mapping[str, TimedStep], *,
                site: Site, durations: Durations, seed: int,
                shots: Mapping[str, Sequence[Shot]], quiet: set[str],
                climbs: dict[str, float]) -> list[tuple[float, str, Vec3]]:
        """The doers' sounds of ``steps`` into ``made`` (``quiet`` steps' nowhere), the
        track of where each stands from when, and each climb's walks into ``climbs``."""
        unheard = _Made()
        track: list[tuple[float, str, Vec3]] = []
        where: dict[str, Vec3] = {}
        for step in steps:
            timed = times.get(step.id)
            if timed is None or timed.duration <= 0:
                continue
            actor = step.actor or "衆"
            here = where.get(actor) or self._first_place(actor, site)
            rng = np.random.default_rng([seed, 9, zlib.crc32(step.id.encode())])
            heard = unheard if step.id in quiet else made
            climb = self._own_climb(step, site, durations)
            level = self.walk["hall_above_m"]
            done = climb is not None and (here[2] > level) != (climb[0][2] > level)
            climb = None if done else climb  # down already (or up): his text lost him
            # a climb the step puts nowhere else leaves him at its end, on the stairs
            there = _place(site, step.place) or (here if climb is None else climb[1])
            own = durations.step_seconds(step)
            start = timed.start + timed.walk
            ahead: list[_Doing] = []
            leave = timed.start  # when he sets off for the stairs
            if climb is not None:  # what his text has him do before he climbs, done first
                ahead = self._ahead_of_climb(step, site, here)
                table = _timetable(_costs(ahead, here, durations.pace_of(step), durations),
                                   timed.start, math.inf)
                moves: list[tuple[float, Vec3]] = []
                here = self._go(heard, step, actor, here, ahead, table, rng, moves, site)
                track += [(t, actor, point) for t, point in moves]
                leave = table[-1][2] if table else timed.start
                climbs[step.id] = leave - timed.start + _climb_walk(
                    here, there, climb, durations.pace_of(step))
            if climb is None:
                if timed.walk > 0 and math.dist(here[:2], there[:2]) > 0.5:
                    self._footsteps(heard, step, actor, here, there, timed.start, timed.walk,
                                    rng, site)
                way = [(start, there)]
            else:
                way = self._climbing(heard, step, actor, here, there, climb, leave,
                                     max(start - leave, 0.0), own, durations, rng, site)
            track += [(t, actor, point) for t, point in way]
            begin = max(start, way[-1][0])  # where he is once down or up and there
            moved = self._act(heard, step, actor, way[-1][1], begin, own, durations, rng, site,
                              lasts=max(max(own, timed.duration - timed.walk) - (begin - start),
                                        0.0),
                              held=_loosed(shots.get(step.id, ())),
                              climbed=climb is not None or done, done_ahead=len(ahead))
            track += [(t, actor, point) for t, point in moved]
            where[actor] = moved[-1][1] if moved else way[-1][1]
        return track

    # -- people ------------------------------------------------------------------------
    def _first_place(self, actor: str, site: Site) -> Vec3:
        place = self.start.get(actor, self.start["default"])
        return _place(site, place) or site.place(place)

    def _climbing(self, made, step: Step, actor: str, here: Vec3, there: Vec3,
                  climb: tuple[Vec3, Vec3], leave: float, walk: float, own: float,
                  durations: Durations, rng, site: Site) -> list[tuple[float, Vec3]]:
        """One doer's own 升 or 降, heard halfway up the stairs: where the step puts him off
        them (賓降釋弓於堂西), to the first stair, up or down, and on to the place, all in
        the walk the clock gave the step and his action's own time (quicker in proportion
        where that is short); else to the first stair in that walk, and up or down in his
        action's own time. Returns his moves (when he arrives, where)."""
        first, last = climb
        middle = _halfway(first, last)
        stone = self.walk["velocity"] * _vary(rng)
        if _off_the_stairs(there, climb):
            pace = durations.pace_of(step)
            legs = [(math.dist(here, first) / pace, 0.0), (0.0, own),
                    (math.dist(last, there) / pace, 0.0)]
            (l0, a0, _), (_, a1, d1), (l2, a2, _) = _timetable(
                legs, leave, leave + walk + own)
            for (leave, arrive), (frm, to) in (((l0, a0), (here, first)),
                                               ((l2, a2), (last, there))):
                if arrive - leave >= 0.5 and math.dist(frm[:2], to[:2]) > 0.5:
                    self._footsteps(made, step, actor, frm, to, leave, arrive - leave, rng,
                                    site)
            made.add(actor, self.walk["instrument"], step.id, a1, max(d1 - a1, 0.5),
                     self.walk["stairs"], stone, middle)
            return [(a0, first), (d1, last), (a2, there)]
        if walk > 0 and math.dist(here[:2], first[:2]) > 0.5:
            self._footsteps(made, step, actor, here, first, leave, walk, rng,
                            site)
        start = leave + walk
        made.add(actor, self.walk["instrument"], step.id, start, max(own, 0.5),
                 self.walk["stairs"], stone, middle)
        return [(start, first), (start + own, last)]

    def _footsteps(self, made, step: StepLike, actor: str, here: Vec3, there: Vec3,
                   start: float, seconds: float, rng, site: Site) -> None:
        """A walk from ``here`` to ``there`` in ``seconds`` from ``start``, heard in pieces
        that move with the walker, on the floor under him; from the court to the hall or
        back by his stairs (their stone counted twice its length: a slower gait)."""
        here, there = _floor(here, site, self.walk["hall_above_m"]), _floor(
            there, site, self.walk["hall_above_m"])
        level = self.walk["hall_above_m"]
        if (here[2] > level) != (there[2] > level):
            foot, top = self._stairs("", 0, step.actor, site)
            first, last = (foot, top) if there[2] > level else (top, foot)
            lengths = [math.dist(here, first), 2 * math.dist(first, last),
                       math.dist(last, there)]
            share = [seconds * d / max(sum(lengths), 1e-9) for d in lengths]
            self._footsteps(made, step, actor, here, first, start, share[0], rng, site)
            made.add(actor, self.walk["instrument"], step.id, start + share[0],
                     max(share[1], 0.5), self.walk["stairs"],
                     self.walk["velocity"] * _vary(rng),
                     _halfway(first, last))
            self._footsteps(made, step, actor, last, there, start + share[0] + share[1],
                            share[2], rng, site)
            return
        if seconds <= 0 or math.dist(here[:2], there[:2]) < 0.05:
            return
        pieces = max(1, math.ceil(seconds / self.walk["piece_s"]))
        length = seconds / pieces
        for i in range(pieces):
            middle = (i + 0.5) / pieces
            point = tuple(a + (b - a) * middle for a, b in zip(here, there, strict=True))
            on_hall = point[2] > self.walk["hall_above_m"]
            surface = self.walk["hall" if on_hall else "ground"]
            if mentions(step.quote, "趨"):
                surface += self.walk["hurried_suffix"]
            made.add(actor, self.walk["instrument"], step.id, start + i * length,
                     length, surface, self.walk["velocity"] * _vary(rng), point)

    def _act(self, made, step: Step, actor: str, place: Vec3, start: float, own: float,
             durations: Durations, rng, site: Site, lasts: float,
             held: tuple[float, float] | None = None,
             climbed: bool = False, done_ahead: int = 0) -> list[tuple[float, Vec3]]:
        """The step's own action in its ``own`` seconds (once per participant where it goes
        round), and the others its text names where the text puts them in all the time it
        ``lasts`` (a step held by the music it starts lasts the music). One doer walks
        between the places his text names (次 → 階 → 物), heard as footsteps; where his
        arrows are ``held`` (first release, last arrival), what his text says before his
        shooting is done, at its own pace, before the first arrow, and what it says after
        卒射 after the last has landed. ``climbed``: his own 升 or 降 is heard already
        (:meth:`_climbing`), and the first ``done_ahead`` of the others before it
        (:meth:`_ahead_of_climb`). Returns his moves (when he arrives, where)."""
        moved: list[tuple[float, Vec3]] = []
        if step.action in _STAIRS and not climbed:  # a company: where the step puts it
            made.add(actor, self.walk["instrument"], step.id, start, max(own, 0.5),
                     self.walk["stairs"], self.walk["velocity"] * _vary(rng), place)
        times = durations.repeats(step)
        sounds = list(self.by_action.get(step.action, ()))
        sounds += [(s, 1) for word, s in self.by_word.items() if mentions(step.quote, word)]
        also = self._also(step, site, place)[done_ahead:]
        slot, span = own / max(times, 1), lasts / max(times, 1)
        text = normalise(step.quote)
        found = self._shooting_words(step, text) if held and times <= 1 and start <= held[0] \
            else None
        ahead = _before(also, self._own_at(step)) if times <= 1 and (
            found is None or held is None) else []
        if ahead:  # what his text has him do before his own action, done first (袒決遂執弓…出)
            table = _timetable(_costs(ahead, place, durations.pace_of(step), durations), start,
                               math.inf)
            place = self._go(made, step, actor, place, ahead, table, rng, moved, site)
            lasts, start = max(lasts - (table[-1][2] - start), own), table[-1][2]
            also = also[len(ahead):]
        for k in range(max(times, 1)):
            for sound, count in sounds:
                for n in range(count):
                    at = start + k * slot + slot * min(sound.at + n * 0.4, 0.95)
                    point = (place[0], place[1], place[2] + sound.height)
                    made.add(actor, sound.instrument, step.id, at, sound.duration,
                             sound.articulation, sound.velocity * _vary(rng), point)
        room = slot / (len(also) + 1)
        if times > 1:  # a company going round: each does them in his share, where he is
            for k in range(times):
                for doing in also:
                    self._also_one(made, step, actor, doing.point,
                                   start + k * span + span * doing.fraction, room, doing.word,
                                   rng)
            return moved
        if found is None or held is None:  # where the text says it, in the step's time
            parts = [(also, False, start, start + lasts)]
        else:  # timed for it: before his first release, on his arrows, after the last lands
            (first, last), a, b = held, found[0] / len(text), found[1] / len(text)
            parts = [([d for d in also if d.fraction < a], True, start + own, first),
                     ([d for d in also if a <= d.fraction <= b], True, first, last),
                     ([d for d in also if d.fraction > b], True, last + 1.0,
                      max(start + lasts, last + 3.0))]
        pace = durations.pace_of(step)
        here = place
        for doings, paced, begin, end in parts:
            costs = _costs(doings, here, pace, durations)
            table = _timetable(costs, begin, end) if paced else _as_told(
                costs, [begin + (end - begin) * d.fraction for d in doings], begin)
            if table and table[-1][2] > max(end, begin) + 1e-6:  # not kept by the step's end:
                table = _timetable(costs, begin, end)  # all of it quicker in proportion
            here = self._go(made, step, actor, here, doings, table, rng, moved, site)
        return moved

    def _go(self, made, step: StepLike, actor: str, here: Vec3, doings: Sequence[_Doing],
            table: Sequence[tuple[float, float, float]], rng,
            moved: list[tuple[float, Vec3]], site: Site) -> Vec3:
        """One doer's ``doings`` on their timetable (leave, arrive, done each): the walk
        to each, heard where it is long enough, then the doing; appends his moves to
        ``moved`` and returns where he ends."""
        for doing, (leave, at, done) in zip(doings, table, strict=True):
            if at - leave >= 0.5:  # walks there, heard
                self._footsteps(made, step, actor, here, doing.begin, leave, at - leave, rng,
                                site)
            if doing.end != here:
                here = doing.end
                moved.append((at, here))
            self._also_one(made, step, actor, doing.point, at, done - at, doing.word, rng)
        return here

    def turn_walks(self, walks: Iterable[TurnWalk], *, site: Site, durations: Durations,
                   seed: int) -> tuple[dict[str, Source], list[Event]]:
        """The sources and events of archers walking up to their marks and down again, turn
        by turn (the text tells it of the first pair, and says 亦如之 of the others): each
        walk's words done one after another at the walkers' pace, from where the text puts
        them, then on to the last place it names; quicker in proportion where they must
        be at their marks sooner."""
        made = _Made()
        for walk in walks:
            step = _Told(walk.cue, walk.actor, walk.text)
            start = _place(site, walk.start)
            if start is None:
                raise CueSheetError(f"turn walk of {walk.actor} ({walk.cue}): no place "
                                    f"{walk.start!r} on the site")
            doings = [_aside(d, walk.side_m) for d in self._also(step, site, start)]
            last = self._place_named(walk.text, site, -1)
            here, pace = _aside_point(start, walk.side_m), durations.pace_of(step)
            costs = _costs(doings, here, pace, durations)
            if last is not None:  # on to the last place the text names (…適次)
                there = _aside_point(last, walk.side_m)
                end_of = doings[-1].end if doings else here
                doings.append(_Doing(1.0, "", there, there, there))
                costs.append((math.dist(end_of, there) / pace, 0.0))
            rng = np.random.default_rng([seed, 10, zlib.crc32(
                f"{walk.cue}/{walk.actor}/{walk.begin:.3f}".encode())])
            table = _timetable(costs, walk.begin, walk.begin + sum(map(sum, costs))
                               if walk.end is None else walk.end)
            self._go(made.as_(walk.walker), step, walk.actor, here, doings, table, rng, [],
                     site)
        return made.sources, made.events

    def _place_named(self, text: str, site: Site, which: int) -> Vec3 | None:
        """Where the ``which``-th place ``text`` names is (0 the first, -1 the last)."""
        found = [place for _, place in place_mentions(normalise(text))]
        return _place(site, found[which]) if found else None

    @staticmethod
    def _own_word(step: StepLike, found: list[tuple[int, str]]) -> int | None:
        """Which of ``found`` (``words_in``'s) is the step's own action: the first that is it,
        or holds it, or is held in it (拜 said as 答拜)."""
        return next((i for i, (_, word) in enumerate(found) if step.action and (
            step.action in word or word in step.action)), None)

    def _own_at(self, step: StepLike) -> float:
        """Where in the step's text (0–1) its own action is named: as ``_also`` finds it
        among the words with a sound, else (命, 告: no sound of their own; or no mention of
        it done) its first mention outside the names that is done (``_done``: 射 in 司射 is
        none, nor 降 in 不降, nor 降 in 辭降); 0 if there is none."""
        text = normalise(step.quote)
        found = self.words_in(text)
        own = self._own_word(step, found)
        if own is not None:
            return found[own][0] / max(len(text), 1)
        named = without_names(text)
        at = next((m.start() for m in re.finditer(re.escape(step.action), named)
                   if _done(text, m.start(), step.action)), 0) if step.action else 0
        return at / max(len(text), 1)

    def _ahead_of_climb(self, step: Step, site: Site, here: Vec3) -> list[_Doing]:
        """The doings his text names before his own 升 or 降 (司馬正又袒執弓升: he bares his
        arm and takes his bow, then climbs; 主人受爵降: he receives the cup, then goes down),
        where he stands: the first of ``_also``'s."""
        return _before(self._also(step, site, here), self._own_at(step))

    def _own_climb(self, step: Step, site: Site, durations: Durations
                   ) -> tuple[Vec3, Vec3] | None:
        """Where one doer's own 升 or 降 begins and ends (the foot and the top of the stairs
        his text names, else his own), or None: another action, or a company (皆升)."""
        if step.action not in _STAIRS or durations.repeats(step) > 1:
            return None
        text = normalise(step.quote)
        foot, top = self._stairs(text, max(text.find(step.action), 0), step.actor, site)
        return (foot, top) if step.action == "升" else (top, foot)

    def around_shooting(self, step: Step, site: Site, durations: Durations
                        ) -> tuple[float, float]:
        """How long one doer's step takes before its shooting and after its 卒射 (0, 0 if
        it narrates none): his own action, then each action his text names before his first
        射, and those after, with his walks between their places (誘射: 入於次…西面揖當階北面揖
        及階揖升堂揖當物北面揖及物揖 is some 60 s, where the round gave 12)."""
        text = normalise(step.quote)
        found = self._shooting_words(step, text)
        here = _place(site, step.place)
        if found is None or here is None:
            return 0.0, 0.0
        pace = durations.pace_of(step)
        before, after = durations.step_seconds(step), 0.0
        for doing in self._also(step, site, here):
            seconds = math.dist(here, doing.begin) / pace + durations.action_seconds(doing.word)
            if doing.fraction < found[0] / len(text):
                before += seconds
            elif doing.fraction > found[1] / len(text) and "卒射" in text[:found[1]]:
                after += seconds  # what he does once done shooting (not after 命…射)
            here = doing.end
        return before, after

    def told_seconds(self, step: Step, site: Site, durations: Durations) -> float:
        """How long one doer's step takes by what its text tells him to do: his own action,
        then each action it names after it, with his walks between their places (司正降自西階
        南面坐取觶升酌散降南面坐奠觶興…再拜稽首左還南面坐取觶洗南面反奠於其所北面立 is some
        80 s, where its 降 gave 5 and the rest was heard at one instant); 0 for a company
        going round (each does his share in its time) and for one shooting
        (``around_shooting``)."""
        text = normalise(step.quote)
        if durations.repeats(step) > 1 or self._shooting_words(step, text) is not None:
            return 0.0
        here = _place(site, step.place) or self._place_named(text, site, 0)
        doings = self._also(step, site, here or _NOWHERE)
        if here is None:  # where he is is not said: from his first doing
            here = doings[0].begin if doings else _NOWHERE
        costs = _costs(doings, here, durations.pace_of(step), durations)
        return durations.step_seconds(step) + sum(walk + act for walk, act in costs)

    def _also(self, step: StepLike, site: Site, place: Vec3) -> list[_Doing]:
        """The actions a step's text names for its actor after its own, each with where it
        stands in the text (0–1) and where he is then (the last place the text has put him
        in: 當物…揖 at the 物; else the step's ``place``): 司射入於次…揖…揖…升堂揖…誘射…降
        was one step, heard as nothing but its arrows for 45 s; 主人洗…升酌…降…坐奠…再拜稽首
        only as its washing."""
        text = normalise(step.quote)
        found = self.words_in(text)
        own = self._own_word(step, found)
        after = found[own][0] if own is not None else 0
        if own is not None:
            del found[own]  # the step's own action, sounded above
        # only the actor's: the text goes on to another (…至再拜賓答再拜: the 賓's bows; 公答拜
        # 媵爵者…: any name, the one bowed to too, as the text runs on unpunctuated), not at
        # one he goes or speaks to (告於公, 請射於公; but 受於公者拜: those who received from
        # him) nor one in words said
        words = glossary.load()
        mine = words.id_of("actor", step.actor) if step.actor else None
        said = self._said(step)
        other = next((m.start() for m in _actors(words.terms_longest_first("actor")).finditer(
            text, after) if words.id_of("actor", m.group()) != mine
            and (text[m.start() - 1:m.start()] not in _TOWARDS or text.startswith("者", m.end()))
            and not any(lo <= m.start() < hi for lo, hi in said)), len(text))
        length = max(len(text), 1)
        mentioned = sorted([*((at, _place(site, pid)) for at, pid in place_mentions(text)
                              if text[max(at - 2, 0):at] not in ("升自", "降自")),  # which
                            *self._on_the_stairs(text, step.actor, site,  # stairs, not where
                                                 up=place[2] > self.walk["hall_above_m"])],
                           key=lambda m: m[0])

        def where(at: int) -> Vec3:
            return next((p for m, p in reversed(mentioned) if m < at and p is not None), place)

        doings = []
        for at, word in found:
            if at >= other:
                break
            if word in _STAIRS:  # heard halfway up, from one end of the stairs to the other
                foot, top = self._stairs(text, at, step.actor, site)
                ends = (foot, top) if word == "升" else (top, foot)
                doings.append(_Doing(at / length, word, self._stairs_at(text, at, step.actor,
                                                                         site), *ends))
            else:
                point = where(at)
                doings.append(_Doing(at / length, word, point, point, point))
        return doings

    def _stairs(self, text: str, at: int, actor: str, site: Site) -> tuple[Vec3, Vec3]:
        """The foot and the top of the stairs a 升 or 降 at ``at`` climbs (or a bare 階
        names): those the text names right after it (升自西階, 降自阼階), else the actor's
        (the lord's and the host's the east stairs, everyone else's the west)."""
        named = re.match(r"自(西|阼|東|北)階", text[at + 1:at + 6])
        side = {"西": "west", "阼": "east", "東": "east", "北": "north"}.get(
            named.group(1) if named else "",
            "east" if actor in self.stairs["east_actors"] else "west")
        foot = site.place(self.stairs[side])
        hall = site.hall.height
        top_y = site.hall.total_depth - 0.6 if side == "north" else 0.6  # onto the hall
        return foot, (foot[0], top_y, hall)

    def _on_the_stairs(self, text: str, actor: str, site: Site, up: bool
                       ) -> list[tuple[int, Vec3]]:
        """Where the text puts its actor without a place word: at their top after 升, at
        their foot after 降, and at a bare 階 (當階, 及階) at the foot, or at the top when he
        is on the hall (``up``: where the step found him; 北面揖及階揖降 after shooting)."""
        found = []
        for match in re.finditer(r"(?<![西阼東北])階|升|降", text):
            if _likeness(text, match.start()):
                continue
            foot, top = self._stairs(text, match.start(), actor, site)
            if match.group() != "階":
                up = match.group() == "升"
            found.append((match.start() + (0 if match.group() == "階" else 1),
                          top if up else foot))
        return found

    def _stairs_at(self, text: str, at: int, actor: str, site: Site) -> Vec3:
        """Where a climb at ``at`` is heard: halfway up its stairs."""
        return _halfway(*self._stairs(text, at, actor, site))

    def words_in(self, text: str) -> list[tuple[int, str]]:
        """(offset, word) of each action ``text`` (normalised) names that has a sound, the
        stairs' included; not one after 如, a likeness (降如升射之儀: no 升), nor one that
        names a thing or place (設洗於阼階東南, 立於洗南: ``derive.names_a_thing``), nor one
        not done (工不興, 不拜酒: ``derive.negated``), nor another's that a courtesy is paid
        for (主人辭降, 賓拜洗: ``derive.paid_for``)."""
        return [(m.start(), m.group()) for m in _action_words(tuple(self.by_action)).finditer(
            text) if _done(text, m.start(), m.group())]

    def _also_one(self, made, step: StepLike, actor: str, place: Vec3, at: float, room: float,
                  word: str, rng) -> None:
        """One action the text names within a step, at ``at``, in ``room`` seconds."""
        if word in _STAIRS:
            made.add(actor, self.walk["instrument"], step.id, at, _climb(room),
                     self.walk["stairs"], self.walk["velocity"] * _vary(rng), place)
            return
        for sound, count in self.by_action.get(word, ()):
            for n in range(count):
                point = (place[0], place[1], place[2] + sound.height)
                made.add(actor, sound.instrument, step.id, at + n * 0.4 * min(room, 2.5),
                         sound.duration, sound.articulation, sound.velocity * _vary(rng),
                         point)

    # -- the place -----------------------------------------------------------------------
    def _place_bed(self, made, steps: Iterable[Step], times: Mapping[str, TimedStep],
                   site: Site, end: float, seed: int) -> None:
        bed, steps = self.bed, list(steps)
        lit = [s for s in steps if mentions(s.quote, bed["night_from"]) and s.id in times]
        night = min((times[s.id].start for s in lit), default=math.inf)
        ambience = load_instrument(bed["instrument"])
        corners = bed["corners"]
        for corner, (x, y) in enumerate(corners):
            point = (float(x), float(y), float(bed["height"]))
            # the corners' segments are staggered evenly, so the bed renews every few
            # seconds: the first segment of corner k ends k/n of a period early
            fade = float(ambience.raw_params[self._hour(0.0, night)]["fade_s"])
            length = fade + (bed["segment_s"] - fade) * corner / len(corners) \
                if corner else bed["segment_s"]
            t, k = 0.0, 0
            while t < end:
                hour = self._hour(t, night)
                fade = float(ambience.raw_params[hour]["fade_s"])
                # every segment its own tag, so its own rendering: the bed never repeats
                made.add_place(f"place.bed.{corner}", "bed", bed["instrument"], t, length,
                               hour, bed["velocity"][hour], point,
                               tag=f"bed.{corner}.{hour}.{k}")
                t += length - fade
                length, k = bed["segment_s"], k + 1
        self._place_creatures(made, night, end, seed)
        torch = self.torch
        fade = float(load_instrument(torch["instrument"]).raw_params[torch["articulation"]][
            "fade_s"])
        for step in lit:
            for words, place in torch["places"].items():
                if not mentions(step.quote, words):
                    continue
                x, y, z = site.place(place)
                great = mentions(step.quote, f"{torch['great']}於{words}")
                velocity = torch["great_velocity" if great else "velocity"]
                t, k = times[step.id].start, 0
                while t < end:
                    made.add_place(f"place.torch.{place}", step.id, torch["instrument"], t,
                                   bed["segment_s"], torch["articulation"], velocity,
                                   (x, y, z + torch["height"]), tag=f"torch.{place}.{k}")
                    t, k = t + bed["segment_s"] - fade, k + 1

    def _place_creatures(self, made, night: float, end: float, seed: int) -> None:
        """Each species' calls, a Poisson process by the hour, each at a random spot of its
        kind, with its own length and velocity; every call its own tag (own rendering)."""
        table = self.creatures
        for species in table["species"]:
            spots = table[species["spots"]]
            short, long = species["seconds"]
            soft, loud = species["velocity"]
            name = species["articulation"]
            # a Poisson process whose rate follows the hour (thinning: candidates at the
            # highest rate, each kept with the odds of its own hour's rate), begun anew
            # each minute (it has no memory)
            most = max(float(v) for v in species["per_min"].values()) / 60.0
            if most <= 0:
                continue
            for window in range(math.ceil(end / _CALL_WINDOW_S)):
                rng = np.random.default_rng([seed, 11, zlib.crc32(name.encode()), window])
                t = window * _CALL_WINDOW_S
                stop, k = min(t + _CALL_WINDOW_S, end), 0
                while True:
                    t += rng.exponential(1.0 / most)
                    if t >= stop:
                        break
                    if rng.uniform() * most >= float(
                            species["per_min"][self._hour(t, night)]) / 60:
                        continue
                    spot = int(rng.integers(len(spots)))
                    x, y, z = (float(v) for v in spots[spot])
                    made.add_place(f"place.{species['spots']}.{spot}", "place",
                                   table["instrument"], t, float(rng.uniform(short, long)),
                                   name, float(rng.uniform(soft, loud)), (x, y, z),
                                   tag=f"{name}.{window}.{k}")
                    k += 1

    def _hour(self, t: float, night: float) -> str:
        bed = self.bed
        if t >= night:
            return bed["night"]
        if t >= night - bed["evening_before_night_s"]:
            return bed["evening"]
        return bed["first"] if t < bed["day_after_s"] else bed["day"]


class _Made:
    """The sources and events made so far; one source per actor and instrument."""

    def __init__(self) -> None:
        self.sources: dict[str, Source] = {}
        self.events: list[Event] = []
        self._words = glossary.load()
        self._walker: tuple[str, str] | None = None

    def as_(self, walker: tuple[str, str] | None) -> _Made:
        """This, adding under ``walker``'s id and name (one archer of many 上射), if given."""
        if walker is None:
            return self
        made = copy.copy(self)  # the same sources and events
        made._walker = walker
        return made

    def add(self, actor: str, instrument: str, cue: str, time: float, duration: float,
            articulation: str, velocity: float, point: Vec3) -> None:
        who = self._words.id_or_pinyin("actor", actor)
        if self._walker is not None:
            who, actor = self._walker
        source = f"action.{who}.{instrument}"
        if source not in self.sources:
            self.sources[source] = Source(source, instrument, f"{actor} {instrument}",
                                          f"{who} ({instrument})", "action", point, _UP,
                                          cue=cue)
        self.events.append(Event(max(time, 0.0), max(duration, 0.05), source, None,
                                 min(max(velocity, 0.05), 1.0), articulation, cue,
                                 position=point))

    def add_place(self, source: str, cue: str, instrument: str, time: float, duration: float,
                  articulation: str, velocity: float, point: Vec3, *, tag: str) -> None:
        if source not in self.sources:
            self.sources[source] = Source(source, instrument, "境", source, "place", point,
                                          _UP, cue=cue)
        self.events.append(Event(time, duration, source, None, velocity, articulation, cue,
                                 lyric=tag))


_STAIRS = ("升", "降")  # going up or down the stairs: stone steps


@functools.cache
def _action_words(actions: tuple[str, ...]) -> re.Pattern:
    """The table's action words and the stairs', longest first (再拜稽首 before 拜)."""
    words = sorted({*actions, *_STAIRS}, key=lambda w: (-len(w), w))
    return re.compile("|".join(re.escape(w) for w in words))


@functools.cache
def _actors(terms: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(re.escape(t) for t in terms))


def _done(text: str, at: int, word: str) -> bool:
    """Whether the action ``word`` at ``at`` of ``text`` (normalised) is done there: not a
    likeness (如), a thing or place named, a negation's, nor another's paid a courtesy."""
    return not (_likeness(text, at) or names_a_thing(text, at) or negated(text, at)
                or paid_for(text, at, word))


def _likeness(text: str, at: int) -> bool:
    """Whether the action word at ``at`` follows 如: a likeness, not a doing (降如升射之儀)."""
    return at > 0 and text[at - 1] == "如"


def _timetable(doings: Sequence[tuple[float, float]], begin: float, end: float
               ) -> list[tuple[float, float, float]]:
    """When each of one doer's doings (walk there, then do it: seconds each) leaves, arrives
    and is done, one after another from ``begin``, at their own pace where they fit before
    ``end``, else all quicker in proportion."""
    total = sum(walk + act for walk, act in doings)
    factor = min(1.0, max(end - begin, 0.0) / total) if total > 0 else 1.0
    times, clock = [], begin
    for walk, act in doings:
        leave, arrive = clock, clock + walk * factor
        clock = arrive + act * factor
        times.append((leave, arrive, clock))
    return times


def _as_told(doings: Sequence[tuple[float, float]], times: Sequence[float], begin: float
             ) -> list[tuple[float, float, float]]:
    """One doer's doings (walk there, then do it: seconds each) at the ``times`` the text
    puts them: each walk leaves at its pace to arrive then, or as soon as he is done with
    the last (from ``begin``), arriving later rather than quicker; (leave, arrive, done)
    each."""
    table, free = [], begin
    for (walk, act), at in zip(doings, times, strict=True):
        leave = max(free, at - walk)
        table.append((leave, leave + walk, leave + walk + act))
        free = leave + walk + act
    return table


#: Where a doer is when his step names no place and its text none: walks are reckoned
#: between the places it does name.
_NOWHERE: Vec3 = (0.0, 0.0, 0.0)


def _before(doings: list[_Doing], own_at: float) -> list[_Doing]:
    """The first of ``doings`` (``_also``'s, in the text's order), those the text names
    before the step's own action (at ``own_at`` of it, 0–1)."""
    return list(itertools.takewhile(lambda doing: doing.fraction < own_at, doings))


def _off_the_stairs(there: Vec3, climb: tuple[Vec3, Vec3]) -> bool:
    """Whether a climb's step puts its doer more than a metre from either end of it."""
    return min(math.dist(end[:2], there[:2]) for end in climb) > 1.0


def _climb_walk(here: Vec3, there: Vec3, climb: tuple[Vec3, Vec3], pace: float) -> float:
    """Seconds of walking at ``pace`` around a climb (``_climbing``'s legs): from ``here``
    to its first stair, and from its last on to ``there`` where the step puts him."""
    first, last = climb
    metres = math.dist(here, first) if math.dist(here[:2], first[:2]) > 0.5 else 0.0
    if _off_the_stairs(there, climb):
        metres += math.dist(last, there)
    return metres / pace


def _halfway(a: Vec3, b: Vec3) -> Vec3:
    return (a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2


def _floor(point: Vec3, site: Site, level: float) -> Vec3:
    """The floor under ``point``: the hall's, where it is over the hall above ``level``,
    else the court's (a place with a height, a target's 侯, is walked to on the ground)."""
    x, y, z = point
    hall = site.hall
    on_hall = z > level and abs(x) <= hall.width / 2 and 0.0 <= y <= hall.total_depth
    return x, y, hall.height if on_hall else 0.0


def _costs(doings: Sequence[_Doing], here: Vec3, pace: float, durations: Durations
           ) -> list[tuple[float, float]]:
    """Each doing's walk from where the one before left him (at ``pace``) and its own time."""
    starts = [here, *(d.end for d in doings)][:len(doings)]
    return [(math.dist(p, d.begin) / pace, durations.action_seconds(d.word) if d.word else 0.0)
            for p, d in zip(starts, doings, strict=True)]


def _aside_point(point: Vec3, east: float) -> Vec3:
    return point[0] + east, point[1], point[2]


def _aside(doing: _Doing, east: float) -> _Doing:
    """A doing ``east`` metres east of where the text puts it (one of a pair side by side)."""
    return replace(doing, point=_aside_point(doing.point, east),
                   begin=_aside_point(doing.begin, east), end=_aside_point(doing.end, east))


def _climb(room: float) -> float:
    """How long a climb of the stairs within a step sounds, in ``room`` seconds."""
    return min(max(room, 0.5), 3.0)


def _loosed(shots: Sequence[Shot]) -> tuple[float, float] | None:
    """When a step's arrows fly: the first release and the last arrival, or None."""
    if not shots:
        return None
    return min(s.release for s in shots), max(s.arrival for s in shots)


def shooting_words(text: str, said: Iterable[tuple[int, int]] = ()) -> tuple[int, int] | None:
    """Where a step's text (normalised) narrates its shooting: from its first 射 or 發 that
    is no name (司射) nor in words said (``said``: spans of ``text``; 曰左右卒射) to the end
    of its 卒射, else of its last 射 or 發 (誘射射三侯將乘矢…再發卒射 of 司射入於次…北面揖
    及階揖降如升射之儀: 如升射之儀 is after); None if none."""
    blanked = without_names(text)
    for start, end in said:
        blanked = blanked[:start] + "　" * (end - start) + blanked[end:]
    shot = [m.span() for m in re.finditer("射|發", blanked)]
    if not shot:
        return None
    first = shot[0][0]
    done = blanked.find("卒射", first)
    return first, done + 2 if done >= 0 else shot[-1][1]


def _vary(rng) -> float:
    """A little difference from one doing to the next (±2 dB, rounded so notes repeat)."""
    return round(float(np.exp(rng.normal(0.0, 0.12))) * 16) / 16


def _place(site: Site, place: str | None) -> Vec3 | None:
    """Where one stands at ``place``: on its floor (大史在干侯之東北: by the target, not at
    its centre 2.4 m up)."""
    if not place:
        return None
    try:
        x, y, _ = site.place(place)
    except (KeyError, ValueError):
        return None
    return (x, y, site.floor_at(x, y))


def load_actions(path: Any = None) -> ActionSounds:
    """Read ``data/actions.toml`` (or ``path``)."""
    path = path or data_dir() / "actions.toml"
    data = read_toml(path, CueSheetError)
    try:
        counts = {k: int(v) for k, v in data.get("counts", {}).items()}
        by_action: dict[str, list[tuple[_Sound, int]]] = {}
        for row in data["sound"]:
            sound = _sound(row)
            for action in row["action"]:
                by_action.setdefault(action, []).append((sound, counts.get(action, 1)
                                                         if row.get("per") else 1))
        by_word = {row["word"]: _sound(row) for row in data.get("cue_word", [])}
        return ActionSounds(dict(data["walk"]), dict(data["start"]),
                            {k: tuple(v) for k, v in by_action.items()}, by_word,
                            dict(data["bed"]), dict(data["torch"]), dict(data["creatures"]),
                            dict(data["stairs"]))
    except (KeyError, TypeError, ValueError) as error:
        raise CueSheetError(f"{path}: missing or malformed key: {error}") from error


def _sound(row: Mapping[str, Any]) -> _Sound:
    sound = _Sound(str(row["instrument"]), str(row["articulation"]), float(row["velocity"]),
                   float(row["at"]), float(row["duration"]), float(row["height"]))
    if not (0 < sound.velocity <= 1 and 0 <= sound.at <= 1 and 0 < sound.duration <= 60
            and 0 <= sound.height <= 5):
        raise ValueError(f"sound {dict(row)}: velocity in (0, 1], at in [0, 1], duration in "
                         "(0, 60] s, height in [0, 5] m")
    return sound
