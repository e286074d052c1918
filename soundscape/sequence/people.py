"""Where the people of the rite stand: the 工 moved by the words of the text and by the
music they play, and every voice standing where it is heard.

A voice sounds from a point (the 負侯's 商 answer at the 乏, a command said at the step's
place); that point is also where the person stands until the next, so the source's
``moves`` say it. A part of the rite (:meth:`Performance.cut`) then begins with each
person where the whole rite has him at that time, for every renderer (an ADM object, a
caption's direction) and not only for the sounds that carry their own point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace

from soundscape.cuesheet import CueSheet, Step
from soundscape.music.tuning import Tuning
from soundscape.performance import Event, Source
from soundscape.sequence.players import Players
from soundscape.sequence.settings import SequenceSettings
from soundscape.sequence.timeline import TimedStep
from soundscape.site.courtyard import Site
from soundscape.text.hanzi import mentions

__all__ = ["STEP_M", "People", "standing_where_heard"]

# Which phase of the 工 a kind of music puts them in (site.performer_position).
_GONG_PHASE = {"ge": "ge", "guan": "guan"}

#: A voice heard further than this from where its source stands has walked there (metres;
#: well below the paces of data/durations.toml, well above rounding).
STEP_M = 0.01


def standing_where_heard(sources: Mapping[str, Source], events: Iterable[Event]
                         ) -> dict[str, Source]:
    """``sources`` with every voice (instrument ``voice``) moved, from each of its sounds
    made away from where it stands, to that sound's point; other sources as they are."""
    heard: dict[str, list[Event]] = {}
    for event in events:
        if event.position is not None and sources[event.source].instrument == "voice":
            heard.setdefault(event.source, []).append(event)
    return {key: _walked(source, sorted(heard[key], key=lambda e: e.time))
            if key in heard else source for key, source in sources.items()}


def _walked(source: Source, events: list[Event]) -> Source:
    """The source with a move to each sound's point it is not already standing at; moves of
    its own (the 工 changing places) keep their times and hold from then on."""
    own, moves, here, i = list(source.moves), [], source.position, 0
    for event in events:
        while i < len(own) and own[i][0] <= event.time:
            moves.append(own[i])
            here = own[i][1]
            i += 1
        point = event.position  # standing_where_heard passes only events with one
        if point is not None and math.dist(here, point) > STEP_M:
            here = (point[0], point[1], point[2])
            moves.append((event.time, here))
    moves += own[i:]
    return replace(source, moves=tuple(moves)) if len(moves) != len(own) else source


class People:
    """The moves of the 工 (by the words of the text, and as the music they play starts)
    and the 負侯's answers from their 侯 and 乏."""

    def __init__(self, sheet: CueSheet, site: Site, players: Players,
                 settings: SequenceSettings) -> None:
        self.sheet, self.site, self.players, self.settings = sheet, site, players, settings

    def at_step(self, step: Step, start: float) -> None:
        """The 工 move where the step's words move them (sequence.toml [[gong_move]])."""
        for move in self.settings.gong_moves:
            if mentions(step.quote, move.at):
                self.players.move_gong(start, move.phase, self.site)

    def music_starts(self, kind: str, start: float) -> None:
        """Singing (歌) and piping (管) put the 工 in their phase when the music starts."""
        if kind in _GONG_PHASE:
            self.players.move_gong(start, _GONG_PHASE[kind], self.site)

    def fuhou_events(self, times: Mapping[str, TimedStep], tuning: Tuning) -> list[Event]:
        """The 負侯's answers: 宮 from each target, then 商 from its 乏 (又諾以商 至乏聲止)."""
        timing = self.settings.timing
        events = []
        for voice in self.sheet.voices:
            if voice.actor != "fuhou" or voice.step not in times:
                continue
            pitch = tuning.degree(gong=timing.mode_gong, degree=voice.degree)
            walking = voice.degree == "商"
            for target in self.site.targets.values():
                where = self.site.place(target.fa if walking else target.id)
                events.append(Event(
                    times[voice.step].start,
                    timing.voice_walk_call_s if walking else timing.voice_call_s,
                    f"voice.fuhou.{target.id}", pitch, 0.8, "call", voice.id, lyric="諾",
                    position=(where[0], where[1], self.site.people["standing_mouth"])))
        return events
