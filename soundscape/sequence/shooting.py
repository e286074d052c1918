"""The shoots of the rite on its clock: where each stands in the text (``Shoot``), the
round simulated when its first step comes (:func:`soundscape.sequence.archery
.simulate_round`: a :class:`~soundscape.performance.Round`), the steps that narrate it
stretched over it, the 算 counted at its count step, and its sounds.

In the third round the 節 of 貍首 (騶虞 in the 鄉射) fall evenly (間若一) and every
counted arrow leaves on a drum (不鼓不釋), except the duke's (不以樂志).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from soundscape.cuesheet import CueSheet, Step
from soundscape.errors import PerformanceError
from soundscape.performance import Event, Round, Shot, Source
from soundscape.sequence import archery, archery_events
from soundscape.sequence.actions import TurnWalk
from soundscape.sequence.music_plan import MusicPlan, Played
from soundscape.sequence.players import Players
from soundscape.sequence.settings import RoundSpec, SequenceSettings, round_specs
from soundscape.sequence.timeline import Durations, TimedStep
from soundscape.site.courtyard import Site
from soundscape.text.hanzi import mentions

__all__ = ["Shoot", "Shooting", "find_shoots"]


@dataclass
class Shoot:
    """A shoot laid on the text: the steps that narrate it, where its 算 are counted, and
    once shot, when it started, where its later part begins, the round as shot and the
    music it was shot to."""

    spec: RoundSpec
    steps: tuple[Step, ...]
    count_step: str | None
    start: float = 0.0
    split: float | None = None  # when the later part of a round told in two begins
    round: Round | None = None
    music: Played | None = None

    @property
    def number(self) -> int:
        return self.spec.number

    def shot(self) -> Round:
        """The round as shot (the shoot has been shot: see ``Shooting.shot``)."""
        if self.round is None:
            raise PerformanceError(f"round {self.number} was never shot")
        return self.round

    def parts(self) -> list[tuple[Step, ...]]:
        """The shoot's steps, as one part or, for a round told in two, split after the step
        holding the spec's ``split_after``."""
        words = self.spec.split_after
        cut = next((i + 1 for i, step in enumerate(self.steps)
                    if words is not None and mentions(step.quote, words)), len(self.steps))
        return [part for part in (self.steps[:cut], self.steps[cut:]) if part]


def find_shoots(sheet: CueSheet, specs: Iterable[RoundSpec]) -> dict[str, Shoot]:
    """The shoots found in the text, keyed by the step where each starts (see
    :class:`~soundscape.sequence.settings.RoundSpec`)."""
    found = {}
    steps = sheet.steps
    for spec in specs:
        begin = next((i for i, s in enumerate(steps) if mentions(s.quote, spec.after)), None)
        if begin is None:
            continue
        first = next((i for i in range(begin, len(steps)) if mentions(steps[i].quote, spec.at)),
                     None)
        if first is None:
            continue
        last = next((i for i in range(first, len(steps)) if mentions(steps[i].quote, spec.until)),
                    first)
        span = tuple(steps[first:last + 1])
        count = None
        if spec.count_at:
            count = next((s.id for s in steps[last + 1:] if mentions(s.quote, spec.count_at)),
                         None)
        found[span[0].id] = Shoot(spec, span, count)
    return found


class Shooting:
    """The rite's archery (鄉射: one 侯, its pairs, 騶虞's 五節) and its shoots."""

    def __init__(self, sheet: CueSheet, site: Site, *, seed: int, settings: SequenceSettings,
                 durations: Durations, music: MusicPlan, players: Players,
                 config: archery.ArcheryConfig | None = None,
                 roster: Mapping[str, int] | None = None) -> None:
        self.sheet, self.site, self.seed, self.settings = sheet, site, seed, settings
        self.durations, self.music, self.players = durations, music, players
        self.config = config or archery.load_config(rite=sheet.text.id)
        self.roster = archery.build_roster(config=self.config, counts=roster,
                                           rng=np.random.default_rng([seed, 0]))
        specs = (round_specs(self.config.data["round"], str(self.config.source))
                 if "round" in self.config.data else settings.rounds)
        self.shoots = find_shoots(sheet, specs)
        self._position = {step.id: i for i, step in enumerate(sheet.steps)}
        self.counts = {s.count_step: s for s in self.shoots.values() if s.count_step}
        self.stretch: dict[str, float] = {}
        self.count_events: list[Event] = []
        self.sources: dict[str, Source] = (
            archery_events.archery_sources(site, config=self.config) if self.shoots else {})

    # -- the clock -------------------------------------------------------------------
    def shoot_at(self, step: Step) -> Shoot | None:
        """The shoot that starts at ``step``, if any."""
        return self.shoots.get(step.id)

    def stretched(self, step: Step) -> float:
        """How long a step that narrates a shoot must last (0: as long as it takes)."""
        return self.stretch.get(step.id, 0.0)

    def at_step(self, step: Step, start: float, *, lead: float = 0.0) -> float:
        """Shoot the round that starts at ``step``, or count the 算 of the round whose count
        step it is; how long the step must then last (0 if neither). ``lead``: what the
        step's doer does before his first arrow takes that long (his first release comes
        one release's time after it, or the round's own first release if that is later)."""
        needed = 0.0
        shoot = self.shoots.get(step.id)
        if shoot is not None:
            needed = max(needed, self._shoot(shoot, start, lead))
        if step.id in self.counts:
            needed = max(needed, self._count(self.counts[step.id], start))
        return needed

    def _shoot(self, shoot: Shoot, start: float, lead: float = 0.0) -> float:
        """Simulate the shoot from ``start`` (its first release at least ``lead`` and one
        release's time later); stretch its narrating steps over it."""
        shoot.start = start
        rng = np.random.default_rng([self.seed, 1, shoot.number])
        jie = self._jie(shoot, start) if shoot.number == 3 else None
        later = max(0.0, lead + self.config.number("timing", "shot_interval_s")
                    - self.config.number("timing", "first_release_s")) if lead > 0 else 0.0
        shoot.round = archery.simulate_round(shoot.number, archers=self.roster,
                                             jie_times=jie, site=self.site, rng=rng,
                                             config=self.config, start=start + later,
                                             drum=self._drum(shoot, start))
        music_end = start + shoot.music.end if shoot.music and shoot.music.end else start
        end = max(shoot.round.end, music_end) + self.settings.timing.after_round_s
        parts = shoot.parts()
        split = next((t.start for t in shoot.round.turns
                      if t.pair == shoot.spec.split_at_pair), None)
        if split is not None and len(parts) > 1:
            # the first part narrates the turns before that pair, the later one the others
            shoot.split = split
            self._spread(parts[0], split - start)
            self._spread(parts[1], end - split)
        else:
            self._spread(shoot.steps, end - start)
        return self.stretch[shoot.steps[0].id]

    def _spread(self, steps: Iterable[Step], length: float) -> None:
        """Stretch ``steps`` (never shrink them) so that together they last ``length`` s."""
        steps = list(steps)
        own = [self.durations.step_seconds(s) for s in steps]
        factor = max(1.0, length / max(sum(own), 1e-9))
        for step, seconds in zip(steps, own, strict=True):
            self.stretch[step.id] = seconds * factor

    def _jie(self, shoot: Shoot, start: float) -> list[float]:
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
        return [start + t for t in self.music.to_shoot(played, per_turn * turns)]

    @staticmethod
    def _drum(shoot: Shoot, start: float) -> list[float]:
        """The 建鼓 strokes of the shoot's music (arranged by ``_jie``), seconds."""
        played = shoot.music
        if shoot.number != 3 or played is None or played.arrangement is None:
            return []
        return [start + n.time for n in played.arrangement.notes() if n.instrument == "jiangu"]

    def _count(self, shoot: Shoot, start: float) -> float:
        if shoot.round is None:
            return 0.0
        events = archery_events.count_events(
            shoot.round, start=start, sources=self.sources, tuning=self.music.tuning,
            cue_ids=self._cue_ids(shoot), config=self.config,
            gong=self.settings.timing.mode_gong)
        self.count_events += events
        return max((e.end for e in events), default=start) - start

    def _cue_ids(self, shoot: Shoot, part: int = 0) -> dict[str, str]:
        """Which cue-sheet entries the sounds of one part of the shoot trace to: the 獲者's
        voice cues the text names in the part's own steps (衆皆繼射 … 如初), else those it
        names since what came before (the last shoot, or the part before: 司射作射如初
        before the arrows), whatever the edition's sections."""
        parts = shoot.parts()
        steps = parts[part]
        where = self._position
        first, last = where[steps[0].id], where[steps[-1].id]
        before = parts[parts.index(steps) - 1][-1] if parts.index(steps) else None
        since = where[before.id] + 1 if before else max(
            (where[s.steps[-1].id] + 1 for s in self.shoots.values()
             if where[s.steps[-1].id] < first), default=0)
        calls = [v for v in self.sheet.voices if v.actor == "huozhe"]
        ids = {"shoot": steps[0].id, "tally": steps[0].id}
        for low, high in ((first, last), (since, first - 1)):
            for voice in calls:
                if low <= where[voice.step] <= high:
                    ids.setdefault(voice.what, voice.id)
        if shoot.count_step:
            ids["announce"] = shoot.count_step
        return ids

    # -- the pairs' walks ---------------------------------------------------------------
    def turn_walks(self, times: Mapping[str, TimedStep]) -> list[TurnWalk]:
        """Every walking pair's walks, turn by turn (``[turn_walk]`` of the archery data):
        up to its marks from where it waits, leaving as the pair before comes down (the two
        cross at the steps: 與升射者相左交於階前) and at its marks ``settle_s`` before its
        first arrow; down again after its last arrow lands. The first pair of a round goes
        up in the steps before it: its own (上射…升, walked as they tell), or, told in
        another's (司射作射如初一耦揖升如初: ``first_up``), when that step begins."""
        spec = self.config.data.get("turn_walk")
        if not spec or not [s for s in self.shot() if s.number >= 1]:
            return []
        archery.place_of(self.site, spec["from"])  # where they wait: a place of the site
        groups, settle = set(spec["groups"]), float(spec["settle_s"])
        after = float(spec["after_s"])
        half = archery.release_point(self.site, "xia", config=self.config)[0] - \
            archery.place_of(self.site, "wu")[0]
        walks = []
        for shoot in self.shot():
            if shoot.number < 1:
                continue
            done = None  # when the turn before was over
            for turn in shoot.shot().turns:
                shots = [s for s in shoot.shot().shots if s.turn == turn.index]
                first = min(s.release for s in shots)
                last = max(s.arrival for s in shots) + after
                pair = next((p for p in self.roster if p.id == turn.pair), None)
                if pair is not None and pair.group in groups:
                    cue = self._turn_cue(shoot, turn.start, turn.index)
                    up = (cue, done) if done is not None else self._first_up(shoot, spec,
                                                                             times)
                    for archer, actor, side in ((pair.shang, "上射", -half),
                                                (pair.xia, "下射", half)):
                        walker = (archer.id, archer.name)
                        if up is not None:
                            walks.append(TurnWalk(up[0], actor, spec["up"], spec["from"],
                                                  up[1], first - settle, side, walker))
                        walks.append(TurnWalk(cue, actor, spec["down"], "wu", last,
                                              side_m=side, walker=walker))
                done = last
        return walks

    def _first_up(self, shoot: Shoot, spec: Mapping[str, Any],
                  times: Mapping[str, TimedStep]) -> tuple[str, float] | None:
        """The step before ``shoot`` (since the shoot before it) that tells its first pair
        going up in another's words (``first_up``: 一耦揖升) and when it begins, if any."""
        words = spec.get("first_up")
        if not words:
            return None
        where = self._position
        begin = max((where[s.steps[-1].id] + 1 for s in self.shoots.values()
                     if where[s.steps[-1].id] < where[shoot.steps[0].id]), default=0)
        told = next((step for step in self.sheet.steps[begin:where[shoot.steps[0].id]]
                     if mentions(step.quote, words) and step.id in times), None)
        return (told.id, times[told.id].start) if told is not None else None

    def told_by_walks(self) -> set[str]:
        """The steps narrating a round whose doers are the walking pairs' archers (上射降二等,
        上射於左與升射者相左…適次): heard as the turn walks of every pair, not once at
        the time a step's share of the round falls."""
        spec = self.config.data.get("turn_walk")
        if not spec:
            return set()
        actors = set(spec.get("told_by", []))
        return {step.id for shoot in self.shot() if shoot.number >= 1
                for step in shoot.steps if step.actor in actors}

    def _turn_cue(self, shoot: Shoot, start: float, index: int) -> str:
        """The step a turn's walks trace to: the first of its part for the pair the text
        tells of, the last (三耦卒射亦如之, 衆皆繼射) for the pairs that do likewise."""
        later = shoot.split is not None and start >= shoot.split
        part = shoot.parts()[-1 if later else 0]
        told = index == 0 or (later and start == shoot.split)
        return part[0].id if told else part[-1].id

    # -- what was decided ------------------------------------------------------------
    def shot(self) -> list[Shoot]:
        """The shoots that were shot, in the order of the text."""
        return [s for s in self.shoots.values() if s.round is not None]

    def shots_at(self) -> dict[str, tuple[Shot, ...]]:
        """Step id → the arrows of the simulated round that step narrates."""
        return {step.id: shoot.shot().shots for shoot in self.shot() for step in shoot.steps}

    def rounds(self) -> tuple[Round, ...]:
        """The rounds as shot, each with the 節 of the music it was shot to."""
        return tuple(replace(s.shot(), jie=tuple(s.music.start + t
                                                for t in s.music.arrangement.jie)
                             if s.music and s.music.arrangement else ())
                     for s in self.shot())

    def events(self) -> list[Event]:
        """The arrows, calls, flags and tallies of every round, and the counts."""
        events = list(self.count_events)
        for shoot in self.shot():
            sounds = archery_events.round_events(
                shoot.shot(), sources=self.sources, tuning=self.music.tuning,
                cue_ids=self._cue_ids(shoot), config=self.config,
                gong=self.settings.timing.mode_gong)
            if shoot.split is not None:
                sounds = _retrace(sounds, shoot.split, self._cue_ids(shoot),
                                  self._cue_ids(shoot, -1))
            events += sounds + self._extra_strokes(shoot)
        return events

    def _extra_strokes(self, shoot: Shoot) -> list[Event]:
        """Drum strokes the shooters loose on that the arrangement does not already sound."""
        played = shoot.music
        if played is None or played.arrangement is None:
            return []
        drums = [n for n in played.arrangement.notes() if n.instrument == "jiangu"]
        heard = [played.start + n.time for n in drums]
        model = drums[-1]
        source = self.players.assign(played.cue, model)[0]
        extra = [t for t in shoot.shot().strokes if min(abs(t - h) for h in heard) > 0.03]
        return [Event(t, model.duration, source, None, model.velocity, model.articulation,
                      played.cue.id, played.piece.id) for t in extra]


def _retrace(events: list[Event], split: float, before: Mapping[str, str],
             after: Mapping[str, str]) -> list[Event]:
    """Credit the sounds made from ``split`` on to the later part's cues."""
    moved = {before[role]: after[role] for role in before if role in after}
    return [replace(e, cue=moved.get(e.cue, e.cue)) if e.time >= split else e for e in events]
