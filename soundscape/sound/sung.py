"""Sung lines in a render: a singer's legato notes made as one voice, then cut into his events.

The sequencer joins each singer's notes into lines (``sequence.singing``: inside a phrase a
note ends where the next begins; a breath, an event of its own, lies between phrases). Here
the notes of one line (one source's ``sing`` events that follow each other without a gap)
are made together by ``synth.sung_line.render_line`` — the voicing runs on across the
syllables, the pitch glides from note to note — and each event's dry note is its own part of
that line: from its onset to the next one's, plus ``FADE_S`` faded out over the next one's
start, which fades in as much (the two add up to the line exactly; a walking listener, who
hears each part from where he stands at its onset, hears no click at the seams). So every
sample still belongs to the event (and cue) that caused it.

A line is made once (its few latest are kept) and seeded by the render's seed, the singer,
the line's cue and which of the singer's lines in that cue it is (and its notes): each 終,
each singer, a new performance; a part of the rite cut at its sections
(``Performance.between``) sings it as the whole rite does, and so does a rite whose other
cues were edited (a line moved in time is the same line: the disk cache keeps it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from soundscape.errors import RenderError
from soundscape.performance import Event, Performance, Source
from soundscape.sound.synth.sung_line import SungNote

__all__ = ["FADE_S", "SungLines"]

#: The seam between two events of a line: the first fades out as the second fades in.
FADE_S = 0.005
#: Two notes of one singer with no more than this between them are one line.
_JOINED_S = 1e-6
#: Lines kept made (a line's events come close together in a render).
_KEPT = 8


class SungLines:
    """Every sung line of a performance, and each line's audio cut into its events.

    Parameters
    ----------
    performance : Performance
    sung : callable Source → bool
        Whether a source's ``sing`` events are made as lines (its model sings lines).
    """

    def __init__(self, performance: Performance, sung: Callable[[Source], bool]) -> None:
        by_source: dict[str, list[Event]] = {}
        for event in performance.events:
            if event.articulation == "sing" and sung(performance.sources[event.source]):
                by_source.setdefault(event.source, []).append(event)
        self.lines: list[tuple[Event, ...]] = []
        self._where: dict[tuple[str, float], tuple[int, int]] = {}
        for events in by_source.values():
            events.sort(key=lambda e: e.time)
            line = [events[0]]
            for event in events[1:]:
                if event.time - line[-1].end > _JOINED_S:
                    self._add(line)
                    line = []
                line.append(event)
            self._add(line)
        self._made: OrderedDict[tuple, np.ndarray] = OrderedDict()
        # which of its singer's lines in its cue each line is: with the cue, what tells the
        # lines (each 終) apart, and the same wherever the cue falls on the clock
        self._nth: list[int] = []
        seen: dict[tuple[str, str], int] = {}
        for made in self.lines:
            own = (made[0].source, made[0].cue)
            self._nth.append(seen.get(own, 0))
            seen[own] = self._nth[-1] + 1

    def _add(self, line: list[Event]) -> None:
        for k, event in enumerate(line):
            self._where[(event.source, event.time)] = (len(self.lines), k)
        self.lines.append(tuple(line))

    def find(self, event: Event) -> tuple[int, int] | None:
        """(line number, place in it) of a sung event, or None."""
        return self._where.get((event.source, event.time))

    def groups(self, events: Sequence[Event]) -> list[tuple[int, ...]]:
        """The indices in ``events`` of each line's events (lines of two or more)."""
        found: dict[int, list[int]] = {}
        for index, event in enumerate(events):
            where = self._where.get((event.source, event.time))
            if where is not None:
                found.setdefault(where[0], []).append(index)
        return [tuple(group) for group in found.values() if len(group) > 1]

    def key(self, event: Event) -> tuple:
        """What the event's part of its line depends on: the whole line and its place in it."""
        number, k = self._where[(event.source, event.time)]
        line = self.lines[number]
        start = line[0].time
        notes = tuple((round(e.time - start, 9), float(e.duration), float(_hz(e)),
                       float(e.velocity), e.phones or e.lyric) for e in line)
        return ("line", event.source, (line[0].cue, self._nth[number]), notes, k)

    @staticmethod
    def notes(line: tuple[Event, ...]) -> list[SungNote]:
        """The line's events as the model's notes, in seconds from its first onset."""
        start = line[0].time
        return [SungNote(e.time - start, e.end - start, _hz(e), e.velocity,
                         e.phones or e.lyric) for e in line]

    def part(self, event: Event, sample_rate: int,
             make: Callable[[tuple[Event, ...]], np.ndarray]) -> np.ndarray:
        """The event's part of its line at ``sample_rate``; ``make(line)`` makes the line
        (mono from its first onset) when it is not kept."""
        number, k = self._where[(event.source, event.time)]
        line = self.lines[number]
        audio = self._made.get((number, sample_rate))
        if audio is None:
            audio = self._made[(number, sample_rate)] = make(line)
            if len(self._made) > _KEPT:
                self._made.popitem(last=False)
        else:
            self._made.move_to_end((number, sample_rate))
        origin = round(line[0].time * sample_rate)
        a = round(event.time * sample_rate) - origin
        if k + 1 == len(line):
            part = audio[a:].copy()
        else:
            fade = max(1, round(FADE_S * sample_rate))
            b = round(line[k + 1].time * sample_rate) - origin
            part = audio[a:b + fade].copy()
            tail = part[b - a:]
            tail *= np.cos(0.5 * np.pi * (np.arange(tail.size) + 0.5) / fade) ** 2
        if k:
            fade = max(1, round(FADE_S * sample_rate))
            head = part[:fade]
            head *= np.sin(0.5 * np.pi * (np.arange(head.size) + 0.5) / fade) ** 2
        return part


def _hz(event: Event) -> float:
    """The pitch of a sung event (the sequencer gives every sung note one)."""
    if event.pitch is None:
        raise RenderError(f"the sung event of {event.source} at {event.time:g} s has no pitch")
    return event.pitch.hz
