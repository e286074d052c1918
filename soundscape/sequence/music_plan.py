"""The music of the rite on its clock: when each music cue starts, how long it plays (its
own length, or filled to the step where 樂闋 stands), and its notes as played and sung.

The planner asks at each step (:meth:`MusicPlan.start`) and, at each step that may stop
music, when it may begin (:meth:`MusicPlan.wait`); the events are made afterwards from
what was decided (:meth:`MusicPlan.events`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace

from soundscape.cuesheet import STOP_LENGTH, CueSheet, MusicCue, Step
from soundscape.errors import CueSheetError, RepertoireError
from soundscape.music.arrange import Arrangement, arrange
from soundscape.music.register import song_octaves, sung_pitch
from soundscape.music.repertoire import Piece, load_piece
from soundscape.music.tuning import Tuning
from soundscape.performance import Event, MusicSpan, PieceInfo
from soundscape.sequence.ensemble import load_ensemble
from soundscape.sequence.players import Players, printed_pattern, wusuan_turn
from soundscape.sequence.singing import join_lines, one_throat

__all__ = ["MusicPlan", "Played"]


@dataclass
class Played:
    """A music cue on the clock: its start, and its arrangement once it is known."""

    cue: MusicCue
    piece: Piece
    start: float
    arrangement: Arrangement | None = None
    end: float | None = None  # seconds from start where the music stops

    def arranged(self) -> tuple[Arrangement, float]:
        """Its arrangement and where the music stops, once both are decided."""
        if self.arrangement is None or self.end is None:
            raise CueSheetError(f"line {self.cue.line}: music {self.cue.id!r} never stops "
                                f"(its stop {self.cue.stop!r} was never reached)")
        return self.arrangement, self.end


class MusicPlan:
    """The music cues started so far, in the order they started (see the module)."""

    def __init__(self, sheet: CueSheet, tuning: Tuning, players: Players, *, seed: int,
                 zhong: str | None, wusuan_seconds: float | None, singers: str) -> None:
        self.sheet, self.tuning, self.players, self.seed = sheet, tuning, players, seed
        self.zhong, self.wusuan_seconds, self.singers = zhong, wusuan_seconds, singers
        self.played: dict[str, Played] = {}
        self.ensemble = load_ensemble()

    # -- the clock -------------------------------------------------------------------
    def start(self, cue: MusicCue, start: float, *, arranged_by_shoot: bool) -> Played:
        """Start ``cue`` at ``start``; a music-bound cue is arranged at once (its length
        is then ``end``), a rite-bound one when its stop step comes, a shooting piece
        ``arranged_by_shoot`` by the shoot (:meth:`to_shoot`)."""
        with self.about(cue):
            piece = printed_pattern(load_piece(cue.piece), cue)  # a pattern the edition prints
            # a shooting 節 where no shoot of the text is found (data/archery.toml,
            # sequence.toml [[round]]) is played at its length, its 節 evenly, no arrows
            unshot = piece.jie is not None and not arranged_by_shoot and cue.kind == "she"
            if piece.jie is not None and not arranged_by_shoot and cue.stop != STOP_LENGTH \
                    and not unshot:
                raise RepertoireError(
                    f"piece {piece.id!r} is a shooting piece (its 節 are counted by the shots), "
                    f"so it cannot stop at step {cue.stop!r}; accepted: kind = \"she\" at a "
                    "shoot, or stop = \"length\"")
            played = Played(cue, piece, start)
            self.played[cue.id] = played
            if arranged_by_shoot:
                return played
            if piece.fill_seconds is not None:  # a selection played for a set time (無算樂)
                played.arrangement = arrange(piece, tuning=self.tuning,
                                             fill_seconds=self.wusuan_seconds)
            elif cue.stop == STOP_LENGTH or unshot:
                played.arrangement = arrange(
                    piece, tuning=self.tuning,
                    repeats=piece.zhong.count if unshot else cue.repeats,
                    reading=self.zhong if self.zhong in piece.zhong.readings else None)
            if played.arrangement is not None:
                played.end = played.arrangement.end
            return played

    def wait(self, step: Step, clock: float) -> float:
        """The earliest ``step`` may start: after the first phrase end of each rite-bound
        piece it stops, at or after ``clock`` (樂闋: the piece is filled to it)."""
        earliest = 0.0
        for played in self.played.values():
            if played.cue.stop == step.id and played.end is None:
                self._fill(played, clock - played.start)
                earliest = max(earliest, played.start + played.arranged()[1])
        return earliest

    def to_shoot(self, played: Played, repeats: int) -> tuple[float, ...]:
        """Arrange a shooting piece over ``repeats`` 節 (the shoot's turns); the 節 times
        from the piece's start."""
        played.arrangement = arrange(played.piece, tuning=self.tuning, repeats=repeats)
        played.end = played.arrangement.end
        return played.arrangement.jie

    @contextlib.contextmanager
    def about(self, cue: MusicCue) -> Iterator[None]:
        """A problem with a cue's piece, told at the cue's line in the sheet."""
        where = f"{self.sheet.path or 'cue sheet'}:{cue.line}"
        try:
            yield
        except (RepertoireError, CueSheetError) as error:
            if str(error).startswith(where):
                raise
            raise CueSheetError(f"{where}: music {cue.id!r}: {error}") from None

    def _fill(self, played: Played, span: float) -> None:
        """Arrange a rite-bound piece to the first phrase end at or after ``span`` seconds."""
        longest = max((sum(n.beats for n in phrase) for phrase in played.piece.phrases),
                      default=1.0) * 60.0 / played.piece.tempo_bpm
        with self.about(played.cue):
            arrangement = arrange(played.piece, tuning=self.tuning,
                                  fill_seconds=max(span, 0.0) + 2 * longest + 1.0)
        ends = [e for e in arrangement.phrase_ends if e >= span - 1e-9]
        played.arrangement = arrangement
        played.end = ends[0] if ends else arrangement.phrase_ends[-1]

    # -- what was decided ------------------------------------------------------------
    def spans(self) -> tuple[MusicSpan, ...]:
        """Each cue that sounded, as played, with the tempo it was arranged at."""
        return tuple(MusicSpan(p.cue.id, p.piece.id, p.start, p.start + p.end,
                               "rite" if p.cue.stop != STOP_LENGTH else "music",
                               p.arranged()[0].tempo_bpm)
                     for p in self.played.values() if p.end is not None)

    def pieces(self) -> dict[str, PieceInfo]:
        """The pieces started, with their basis and the parts the rite has no instrument for."""
        held = {s.instrument for s in self.players.sources.values()}
        return {p.piece.id: PieceInfo(
            p.piece.id, p.piece.title, p.piece.basis, p.piece.basis_note,
            tuple(f"{part.id} ({part.instrument})" for part in p.piece.parts
                  if part.instrument not in held),
            self._sung_octaves(p) if p.arrangement is not None else 0)
            for p in self.played.values()}

    def events(self) -> list[Event]:
        """Every note played and sung, by the players the cues name, as they breathe."""
        events = []
        for played in self.played.values():
            if played.arrangement is None:
                continue
            with self.about(played.cue):
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
                        pitch = sung_pitch(pitch, self.singers, shift=shift)
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

    def _sung_octaves(self, played: Played) -> int:
        """The octaves the 工 move a piece's song by to sing it in their register."""
        return song_octaves(played.arranged()[0].notes(), self.singers)


def _with_sheng(played: Played, sheng: bool = False) -> Iterator:
    """The arrangement's notes; in a 合樂 the 笙 also play the 瑟's line (鄉飲酒禮: 乃合樂
    周南關雎…, 鄭注: 合樂謂歌樂與衆聲俱作: song, 瑟 and 笙 together); in 無算樂, where the cue
    names 笙 (``sheng``), each stanza is 合 or 間 (``players.wusuan_turn``)."""
    arrangement = played.arranged()[0]
    for note in arrangement.notes():
        turn = wusuan_turn(played.cue, arrangement, note, sheng)
        if turn != "間" or note.instrument not in ("voice", "se"):
            yield note
        if (played.cue.kind == "he" or turn) and note.instrument == "se":
            yield replace(note, part="sheng", instrument="sheng", articulation="blow")


def _sounds(played: Played, note) -> bool:
    """Whether an arranged note is played: everything before the music stops, and the
    closing 節 stroke on it."""
    end = played.arranged()[1]
    if note.time >= end - 1e-9 and note.role != "jie":
        return False
    return note.time <= end + 1e-9
