"""The tempo map of a MIDI file: each piece in its own tempo and metre, the rite's clock
between them, every time still exact.

A Performance keeps absolute seconds. For notation and DAWs, beats and bars must mean
something, so the map is a list of segments: while a piece plays, its own beat
(``Piece.tempo_bpm`` of the repertoire, the tempo the sequencer laid its notes on) in
bars of ``PIECE_METRE`` counted from the piece's start; between pieces, the rite's clock
at about ``CLOCK_BPM``, its tempo stretched so that the gap holds whole bars and the next
piece starts on a bar line. A piece's last bar is completed before the clock resumes,
unless the next piece starts first (then the metre changes mid-bar).

Seconds become ticks through the segment they fall in, rounding absolute ticks (never
deltas), so any time read back through the map is within half a tick of the original:
at most ``max_error_s``: half a tick, 0.39 ms at the slowest tempo (the clock stretched to
40 bpm; pieces play at 44–72 bpm) with 1920 ticks per beat.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass

import mido

__all__ = ["CLOCK_BPM", "PIECE_METRE", "TICKS_PER_BEAT", "Segment", "TempoMap", "build"]

TICKS_PER_BEAT = 1920
CLOCK_BPM = 60.0  # between pieces: a beat is about a second, four to the bar
PIECE_METRE = (4, 4)  # the sources give no metre: bars of four of the piece's beats


@dataclass(frozen=True, slots=True)
class Segment:
    """From ``tick`` (= ``second``) on: ``tempo`` µs per beat, bars of ``metre``."""

    tick: int
    second: float
    tempo: int
    metre: tuple[int, int]
    label: str

    def tick_at(self, seconds: float) -> int:
        return self.tick + round((seconds - self.second) * 1e6 / self.tempo * TICKS_PER_BEAT)

    def second_at(self, tick: int) -> float:
        return self.second + (tick - self.tick) * self.tempo / 1e6 / TICKS_PER_BEAT


class TempoMap:
    """Segments in time order; converts seconds to ticks and back."""

    __slots__ = ("_starts", "segments")

    def __init__(self, segments: Iterable[Segment]) -> None:
        self.segments = tuple(segments)
        self._starts = [s.second for s in self.segments]

    def tick(self, seconds: float) -> int:
        """The tick of ``seconds`` (rounded within its segment)."""
        index = max(0, bisect.bisect_right(self._starts, seconds) - 1)
        return self.segments[index].tick_at(seconds)

    def snap(self, start: float, end: float, grid: int) -> tuple[float, float]:
        """``start`` and ``end`` moved to the nearest 1/``grid`` of the beat (counted from
        each one's segment start), at least one step apart, as seconds that convert back
        to those very ticks."""
        def tick(seconds: float) -> tuple[Segment, int]:
            segment = self.segments[max(0, bisect.bisect_right(self._starts, seconds) - 1)]
            return segment, segment.tick + round((segment.tick_at(seconds) - segment.tick)
                                                 / step) * step
        step = TICKS_PER_BEAT // grid
        (first, on), (last, off) = tick(start), tick(end)
        if off <= on:
            last, off = first, on + step
        return first.second_at(on), last.second_at(off)

    def messages(self) -> list[tuple[int, mido.MetaMessage]]:
        """``(tick, set_tempo / time_signature)`` at every segment start."""
        found = []
        for segment in self.segments:
            found.append((segment.tick, mido.MetaMessage("set_tempo", tempo=segment.tempo)))
            found.append((segment.tick, mido.MetaMessage(
                "time_signature", numerator=segment.metre[0], denominator=segment.metre[1])))
        return found

    def max_error_s(self) -> float:
        """Largest rounding error of a time through the map: half the longest tick."""
        return max(s.tempo for s in self.segments) / 1e6 / TICKS_PER_BEAT / 2


def build(music: Iterable[tuple[float, float, float | None, str]], end: float) -> TempoMap:
    """The map for music spans ``(start s, end s, bpm or None, label)`` over ``[0, end]``.

    A span without a tempo (a piece the repertoire does not know) runs on the clock.
    """
    spans = sorted((start, stop, bpm, label) for start, stop, bpm, label in music
                   if bpm is not None and stop > start)
    segments: list[Segment] = []
    tick, second = 0, 0.0
    for index, (start, stop, bpm, label) in enumerate(spans):
        tick, second = _clock(segments, tick, second, start)
        tempo = round(6e7 / bpm)
        bar_s = PIECE_METRE[0] * 4 / PIECE_METRE[1] * tempo / 1e6
        following = spans[index + 1][0] if index + 1 < len(spans) else math.inf
        until = min(second + math.ceil((stop - second) / bar_s - 1e-9) * bar_s, following)
        if until <= second:  # the next piece starts with this one: it takes over
            continue
        segments.append(Segment(tick, second, tempo, PIECE_METRE, label))
        tick = segments[-1].tick_at(until)
        second = segments[-1].second_at(tick)
    _clock(segments, tick, second, max(end, second + 1.0) if not segments else end)
    return TempoMap(segments)


def _clock(segments: list[Segment], tick: int, second: float, until: float
           ) -> tuple[int, float]:
    """Append the clock from ``second`` to ``until`` in whole bars (4/4, or one short bar
    for a gap under four seconds), its beat stretched to fit; return where it ends."""
    gap = until - second
    if gap <= 1e-6:
        return tick, second
    beats = max(1, round(gap * CLOCK_BPM / 60.0))
    if beats >= 4:
        beats = 4 * max(1, round(gap * CLOCK_BPM / 240.0))
    metre = (4, 4) if beats % 4 == 0 else (beats, 4)
    segments.append(Segment(tick, second, max(1, round(gap / beats * 1e6)), metre, "clock"))
    end_tick = tick + beats * TICKS_PER_BEAT
    return end_tick, segments[-1].second_at(end_tick)
