"""Arrange a piece: its notes as timed parts by role, in seconds from the piece's start.

:func:`arrange` lays the piece's phrases on a clock at its tempo, for a number
of 終 in a reading (one 終 = the whole song, or one stanza), or for as long as a
span allows (stopping on a phrase or stanza end), and derives every part from
that: the melody notes with their pitches and lyrics, the 鑮 on each phrase
end, the 建鼓 beat, the 鼗 and 鼙 before the music, and for a shooting piece
the drum pattern in each 節 and the stroke that closes it. The sequencer adds
the piece's start time and maps each part to its performers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from soundscape.errors import RepertoireError
from soundscape.music.pitch import Pitch
from soundscape.music.repertoire import Part, Piece, PieceNote
from soundscape.music.tuning import LU, Tuning

__all__ = ["Arrangement", "PlayedPhrase", "TimedNote", "arrange"]


@dataclass(frozen=True, slots=True)
class TimedNote:
    """One sound of a part.

    Parameters
    ----------
    time : float >= 0, seconds from the piece's start
    duration : float > 0, seconds
    part : str
        ``Part.id`` of the piece.
    role : str
        The part's role (``melody``, ``phrase_end`` …).
    instrument : str
        Instrument id.
    pitch : Pitch or None
        None for unpitched strokes.
    velocity : float in (0, 1]
    articulation : str
    lyric : str or None
        The sung character (melody parts with lyrics).
    phrase : int
        Index into ``Arrangement.phrases`` of the phrase it belongs to; -1 before the music.
    """

    time: float
    duration: float
    part: str
    role: str
    instrument: str
    pitch: Pitch | None
    velocity: float
    articulation: str
    lyric: str | None = None
    phrase: int = -1


@dataclass(frozen=True, slots=True)
class PlayedPhrase:
    """One phrase as played.

    Parameters
    ----------
    index : int
        Index into ``Piece.phrases``.
    zhong : int
        Which 終 it belongs to (0-based).
    stanza : int
        Which stanza of the piece (0-based).
    start, end : float, seconds from the piece's start
        Onset of its first note and end of its last note.
    """

    index: int
    zhong: int
    stanza: int
    start: float
    end: float


@dataclass(frozen=True)
class Arrangement:
    """A piece arranged: timed parts, phrase boundaries, 終 spans and 節 times.

    Attributes
    ----------
    piece : str
        Piece id.
    reading : str
        What one 終 was (``song`` or ``stanza``).
    tempo_bpm : float, beats per minute
    music_start : float, seconds
        When the first note sounds (after the 鼗 and 鼙).
    parts : mapping of part id → tuple of TimedNote
        Each sorted by time.
    instruments : mapping of part id → instrument id
    phrases : tuple of PlayedPhrase
        In playing order.
    zhong : tuple of (start, end), seconds
        Each 終 played, from its first note to its end (its closing drum stroke for a
        shooting piece).
    jie : tuple of float, seconds
        The 節: the closing drum stroke of each pass (shooting pieces; else empty).
    heard : int
        How many of the first 節 are heard before shooting.
    """

    piece: str
    reading: str
    tempo_bpm: float
    music_start: float
    parts: Mapping[str, tuple[TimedNote, ...]]
    instruments: Mapping[str, str]
    phrases: tuple[PlayedPhrase, ...]
    zhong: tuple[tuple[float, float], ...]
    jie: tuple[float, ...] = ()
    heard: int = 0

    @property
    def phrase_ends(self) -> tuple[float, ...]:
        """Seconds at which each played phrase ends: where rite-bound music may stop."""
        return tuple(p.end for p in self.phrases)

    @property
    def shooting_jie(self) -> tuple[float, ...]:
        """The 節 that carry a 拾 (after the ``heard`` ones)."""
        return self.jie[self.heard:]

    @property
    def end(self) -> float:
        """Seconds from the piece's start to the end of the last 終."""
        return self.zhong[-1][1]

    def notes(self) -> tuple[TimedNote, ...]:
        """Every sound of every part, sorted by time then part id."""
        return tuple(sorted((n for part in self.parts.values() for n in part),
                            key=lambda n: (n.time, n.part)))

    def by_role(self, role: str) -> tuple[TimedNote, ...]:
        """The sounds of all parts with ``role``, sorted by time."""
        return tuple(n for n in self.notes() if n.role == role)


def arrange(piece: Piece, *, tuning: Tuning, tempo_bpm: float | None = None,
            reading: str | None = None, repeats: int | None = None,
            fill_seconds: float | None = None) -> Arrangement:
    """Lay a piece out in time, part by part.

    Parameters
    ----------
    piece : Piece
    tuning : Tuning
        Makes the pitches (``tuning.pitch(name)``).
    tempo_bpm : float > 0, beats per minute, optional
        Default: the piece's own.
    reading : str, optional
        What one 終 is: ``song`` (the whole song) or ``stanza``; must be one of the
        piece's readings. Default: the piece's.
    repeats : int >= 1, optional
        How many 終 (for a shooting piece: how many 節). Default: the piece's count.
    fill_seconds : float > 0, seconds, optional
        Instead of ``repeats``: play 終 after 終 and stop on the last phrase end (or
        stanza end, if the piece says so) at or before this time from the piece's start;
        at least one phrase (or stanza) is played. Default: the piece's own fill time
        for a selection, else unused. Not for shooting pieces, which count 節.

    Returns
    -------
    Arrangement

    Raises
    ------
    RepertoireError
        For an unknown reading, a bad count, tempo or fill time.
    """
    reading = piece.zhong.reading if reading is None else reading
    if reading not in piece.zhong.readings:
        raise RepertoireError(f"piece {piece.id!r}: reading {reading!r}; "
                              f"accepted: {', '.join(piece.zhong.readings)}")
    tempo = piece.tempo_bpm if tempo_bpm is None else tempo_bpm
    if not tempo > 0:
        raise RepertoireError(f"piece {piece.id!r}: tempo_bpm={tempo!r} must be > 0")
    if fill_seconds is None and repeats is None:
        fill_seconds = piece.fill_seconds
    if fill_seconds is not None:
        if repeats is not None or piece.jie is not None or not fill_seconds > 0:
            raise RepertoireError(
                f"piece {piece.id!r}: fill_seconds={fill_seconds!r} must be > 0, without "
                "repeats, and not for a shooting piece (its 節 are counted)")
    elif repeats is None:
        repeats = piece.zhong.count
    elif isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise RepertoireError(f"piece {piece.id!r}: repeats={repeats!r} must be an integer >= 1")

    beat = 60.0 / tempo
    clock = _Clock(piece, beat)
    played, timed = clock.run(_units(piece, reading, repeats), fill_seconds)
    parts = {part.id: tuple(sorted(_part_notes(part, piece, clock, played, timed, tuning),
                                   key=lambda n: n.time))
             for part in piece.parts}
    return Arrangement(
        piece=piece.id, reading=reading, tempo_bpm=tempo, music_start=piece.intro_beats * beat,
        parts=parts, instruments={p.id: p.instrument for p in piece.parts},
        phrases=tuple(played), zhong=clock.zhong_spans(played),
        jie=tuple(clock.jie), heard=piece.jie.heard if piece.jie else 0)


def _units(piece: Piece, reading: str, repeats: int | None) -> Iterator[tuple[int, ...]]:
    """The phrase indices of each 終, in order; endless when ``repeats`` is None."""
    cycle = (tuple(range(len(piece.phrases))),) if reading == "song" else piece.stanza_phrases
    count = 0
    while repeats is None or count < repeats:
        yield cycle[count % len(cycle)]
        count += 1


class _Clock:
    """Walks the phrases in time; records the 節 of a shooting piece."""

    def __init__(self, piece: Piece, beat: float):
        self.piece, self.beat = piece, beat
        self.stanza_of = {i: s for s, idx in enumerate(piece.stanza_phrases) for i in idx}
        self.jie: list[float] = []
        self.closes: dict[int, float] = {}  # 終 → end of its closing stroke

    def run(self, units: Iterator[tuple[int, ...]], fill: float | None
            ) -> tuple[list[PlayedPhrase], list[list[tuple[float, PieceNote]]]]:
        piece, beat = self.piece, self.beat
        played: list[PlayedPhrase] = []
        timed: list[list[tuple[float, PieceNote]]] = []
        cut = 0  # how many phrases to keep when filling a span
        beats = piece.intro_beats  # the clock counts beats, so equal spans stay exactly equal
        for zhong, unit in enumerate(units):
            if zhong:
                beats += piece.zhong.rest_beats
            for index in unit:
                if fill is not None and beats * beat >= fill and cut:
                    return played[:cut], timed[:cut]
                notes = []
                for note in piece.phrases[index]:
                    notes.append((beats * beat, note))
                    beats += note.beats
                end = beats * beat
                played.append(PlayedPhrase(index, zhong, self.stanza_of[index], notes[0][0], end))
                timed.append(notes)
                if fill is not None and (end <= fill or not cut) and self._may_stop(index):
                    cut = len(played)
            if piece.jie is not None:
                self.jie.append(beats * beat)
                beats += piece.jie.close_beats
                self.closes[zhong] = beats * beat
        return played, timed

    def _may_stop(self, index: int) -> bool:
        if self.piece.end_on == "phrase":
            return True
        return index == self.piece.stanza_phrases[self.stanza_of[index]][-1]

    def zhong_spans(self, played: list[PlayedPhrase]) -> tuple[tuple[float, float], ...]:
        spans: dict[int, list[float]] = {}
        for phrase in played:
            span = spans.setdefault(phrase.zhong, [phrase.start, phrase.end])
            span[1] = self.closes.get(phrase.zhong, phrase.end)
        return tuple((a, b) for a, b in spans.values())


def _part_notes(part: Part, piece: Piece, clock: _Clock, played: list[PlayedPhrase],
                timed: list[list[tuple[float, PieceNote]]], tuning: Tuning
                ) -> Iterator[TimedNote]:
    beat = clock.beat
    stroke = TimedNote(0.0, part.length * beat, part.id, part.role, part.instrument,
                       None if part.pitch is None else tuning.pitch(part.pitch),
                       part.velocity, part.articulation)
    if part.role in ("start", "call", "answer"):
        yield replace(stroke, time=part.at * beat)
    elif part.role == "melody":
        side = _side_lu(part, piece, tuning)
        for k, notes in enumerate(timed):
            for time, note in notes:
                pitch = _pitch(tuning, note.name, part.octave)
                yield replace(stroke, time=time, duration=note.beats * beat, pitch=pitch,
                              lyric=note.lyric if part.lyrics else None, phrase=k,
                              articulation="side" if pitch.lu in side else stroke.articulation)
    elif part.role == "phrase_end":
        for k, notes in enumerate(timed):
            time, note = notes[-1]
            yield replace(stroke, time=time, duration=note.beats * beat, phrase=k,
                          pitch=stroke.pitch or _pitch(tuning, note.name, part.octave))
    elif part.role == "beat":
        for k, phrase in enumerate(played):
            steps = math.ceil((phrase.end - phrase.start) / (part.every * beat) - 1e-9)
            for j in range(steps):
                yield replace(stroke, time=phrase.start + j * part.every * beat, phrase=k)
    elif part.role == "pattern":
        yield from _pattern(part, piece, clock, played, stroke)
    elif part.role == "jie":
        for time in clock.jie:
            yield replace(stroke, time=time)


def _pattern(part: Part, piece: Piece, clock: _Clock, played: list[PlayedPhrase],
             stroke: TimedNote) -> Iterator[TimedNote]:
    """The strokes of ``part.symbol`` in each 節, one per beat, the last one beat before the 節."""
    assert piece.jie is not None
    strokes = piece.jie.pattern.strokes
    last_phrase = {p.zhong: k for k, p in enumerate(played)}
    for zhong, time in enumerate(clock.jie):
        for i, symbol in enumerate(strokes):
            if symbol == part.symbol:
                yield replace(stroke, time=time - (len(strokes) - i) * clock.beat,
                              phrase=last_phrase[zhong])


def _side_lu(part: Part, piece: Piece, tuning: Tuning) -> frozenset[str]:
    """The 律 a melody part takes on a bell's 側鼓: its ``side`` 聲 of the piece's mode
    (the 宮 is the 律 the mode's name starts with: 黃鍾清宮 → 黃鍾)."""
    if not part.side:
        return frozenset()
    gong = next((lu for lu in LU if piece.mode.startswith(lu)), None)
    if gong is None:
        raise RepertoireError(f"piece {piece.id!r}: part {part.id!r} takes {'、'.join(part.side)} "
                              f"on the 側鼓, but its mode {piece.mode!r} names no 宮 律 first; "
                              f"accepted: a mode starting with one of {' '.join(LU)}")
    return frozenset(tuning.degree(gong=gong, degree=d).lu for d in part.side)


def _pitch(tuning: Tuning, name: str, octave: int) -> Pitch:
    pitch = tuning.pitch(name)
    if octave:
        moved = pitch.octave + octave
        pitch = Pitch(pitch.lu, moved, tuning.hz_of(pitch.lu, moved))
    return pitch
