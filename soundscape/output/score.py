"""MusicXML scores through music21: the one module that talks to music21.

Two entry points: :func:`write_piece_score` (one piece, every part of it) and
:func:`write_performance_score` (a full score: a staff per placed source, or per part
its players share, rehearsal marks at the ritual markers, its staff the one its system
fits on A4, :func:`full_score_size`). Each note carries, as lyric lines under it, the sung
character (if any), its 律 name, its 工尺 syllable (熊朋來's key, where it has
one) and its deviation from 12-TET in cents.

Pitches are written as every MusicXML reader reads them: the nearest semitone in
``<alter>`` (a whole number, as music21 writes it) and the cents in lyric line 4.
MuseScore 3 rejects a decimal ``<alter>`` ("invalid alter") and drops the sharp
with it; MuseScore 4 and Dorico read one as tuning, so ``cents_in_alter=True``
writes the decimal value (semitones, e.g. ``1.0196``) for them. Notes are spelled on
the same keys as the MIDI file's MTS key map (one key per 律), so one spelled pitch
is one 律.

The credits (title, subtitle, the melody's basis as composer, the basis note) are
written by this module, laid out on the page so that MuseScore puts each in its own
place. A path ending in ``.mxl`` gets compressed MusicXML (a zip with
``META-INF/container.xml``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
import sys
import unicodedata
import xml.etree.ElementTree as ET
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import music21

from soundscape.errors import RenderError, TuningError
from soundscape.fileio import write_bytes, write_set
from soundscape.music.pitch import Pitch
from soundscape.music.tuning import LU, Tuning, to_gongche
from soundscape.output import mts
from soundscape.output.midi import SPLITS as MIDI_SPLITS
from soundscape.output.midi import load_programs, music_only, program_for, tempo_map_of
from soundscape.output.midi import parts as split_parts
from soundscape.output.tempo_map import TICKS_PER_BEAT
from soundscape.performance import Event, Marker, Performance, PieceInfo, Source

__all__ = [
    "QUANTUM_BEATS",
    "SPLITS",
    "Bar",
    "Credits",
    "bars",
    "basis_line",
    "beat_rests",
    "full_score_size",
    "lu_letter",
    "performance_score",
    "wrap",
    "write_performance_score",
    "write_piece_score",
    "write_split_scores",
]

#: Performance scores: onsets and lengths on a grid of half a beat, eighth notes (the
#: pieces lay their notes on beats and halves; the players' own lags, tens of milliseconds,
#: fall within it).
QUANTUM_BEATS = 0.5

# A4 and its margins, in mm: in tenths, a fortieth of the staff (music21's: 7 mm).
_PAGE_MM = (210.0, 297.0, 15.0)  # width, height, margin
#: How ``write_split_scores`` splits the rite: by piece or section as ``midi --split``
#: does, or a part per staff of the full score.
SPLITS = (*MIDI_SPLITS, "part")

#: Staff height (mm) of a piece's score (music21's) and of a performance score, whose
#: dozen staves a 7 mm staff spread over a page a system (Gould, *Behind Bars*: 5-6 mm
#: for a full score of this size); a performance score with more staves takes a smaller
#: staff, down to the least a full score is printed with (Gould: 3.5 mm), so that its
#: system fits the page. The page stays A4: MuseScore 3 (Debian's 3.2) draws a score on
#: A3 with its staves 1.41 times the size asked (the page's width over A4's), and the
#: whole rite's systems then ran 65 mm past the page.
PIECE_STAFF_MM, PERFORMANCE_STAFF_MM, LEAST_STAFF_MM = 7.0, 5.0, 3.5
# MuseScore 3's vertical layout, in spaces (a quarter of the staff; measured on its pages
# of s32): a staff and the least distance to the next 10.5, the lyric lines under a staff
# 3 each beyond the 4.7 that distance holds, the marks and texts over a system at most 16.
_STAFF_SP, _GAP_SP, _LYRIC_SP, _LYRIC_FREE_SP, _HEAD_SP = 10.5, 6.5, 3.0, 4.7, 16.0
# Credit line widths in half-width characters (a Han character counts two and is 1 em wide,
# Latin letters are narrower): the note (left, 8 pt: ≤ 280 pt) and the basis (right, 10 pt:
# ≤ 210 pt) fit side by side in the 510 pt between the margins.
_NOTE_WIDTH, _BASIS_WIDTH = 70, 42
_TITLE_TENTHS = 90  # the title (20 pt) and subtitle (11 pt) lines
_SUBTITLE_WIDTH, _SUBTITLE_LINE_TENTHS = 88, 26  # 11 pt lines between the margins
_MARK_WIDTH = 30  # rehearsal marks wrapped: one near the right margin mostly stays on the page
_MAX_NOTE_LINES = 35  # 700 tenths of 8 pt lines: the music starts in the page's top half
_MXL_CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container>
  <rootfiles>
    <rootfile full-path="score.musicxml" media-type="application/vnd.recordare.musicxml+xml"/>
  </rootfiles>
</container>
"""
_HEADER = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE score-partwise PUBLIC '
           '"-//Recordare//DTD MusicXML 4.0 Partwise//EN" '
           '"http://www.musicxml.org/dtds/partwise.dtd">\n')


@dataclass(frozen=True, slots=True)
class Credits:
    """What the first page says above the music.

    Parameters
    ----------
    title : str
    subtitle : str
        Mode and tuning, or the part of the rite.
    basis : str
        Printed where a composer would be: what the music rests on, e.g.
        ``melody: surviving, the 風雅十二詩譜 score of 鹿鳴 (小雅, 黃鍾清宮)``.
    notes : tuple of (label, note)
        The full basis note of each piece: printed in small type when they fit beside the
        basis (``_MAX_NOTE_LINES``), else pointed to; always kept in the file's
        ``<miscellaneous>`` fields.
    """

    title: str
    subtitle: str
    basis: str
    notes: tuple[tuple[str, str], ...]


def basis_line(basis: str, note: str) -> str:
    """``melody: surviving, …`` / ``melody: reconstruction, …``: the basis and the first
    clause of its note (the note's own leading label dropped)."""
    label = re.match(r"(Surviving melody|Reconstruction)((?:, [a-z]+)*)[.:]\s*", note)
    rest = note[label.end():] if label else note
    qualifier = label.group(2) if label else ""
    clause = _first_clause(rest)
    if clause.lower().startswith(basis):
        return f"melody: {clause[0].lower()}{clause[1:]}"
    return f"melody: {basis}{qualifier}, {clause}" if clause else f"melody: {basis}{qualifier}"


def _first_clause(text: str) -> str:
    """Text up to the first comma, semicolon or full stop outside brackets."""
    depth = 0
    for index, char in enumerate(text):
        depth += char in "(（《「"
        depth -= char in ")）》」"
        stop = char in ",;" or (char == "." and text[index + 1:index + 2] in ("", " "))
        if depth == 0 and stop:
            return text[:index]
    return text


def _gongche(pitch: Pitch) -> str | None:
    try:
        return to_gongche(pitch)
    except TuningError:
        return None


def _first_bar(part: music21.stream.Part) -> music21.stream.Measure:
    first = part.getElementsByClass(music21.stream.Measure).first()
    if first is None:
        raise RenderError(f"score part {part.id!r} has no bars")
    return first


def _chord(notes: list[music21.note.GeneralNote]) -> music21.chord.Chord:
    """A chord of pitched notes (the callers make one only when every note has a pitch)."""
    return music21.chord.Chord([n for n in notes if isinstance(n, music21.note.Note)])


def _child(parent: ET.Element, path: str) -> ET.Element:
    """``parent``'s element at ``path``, which the MusicXML music21 writes has."""
    found = parent.find(path)
    if found is None:
        raise RenderError(f"the MusicXML that music21 wrote has no <{path}> in <{parent.tag}>")
    return found


def _note(pitch: Pitch | None, beats: float, keys: mts.KeyMap, lyric: str | None,
          spelled: dict, *, full: bool = True, octaves: int = 0,
          line: tuple[str, str] | None = None) -> music21.note.GeneralNote:
    """A music21 note (or unpitched stroke) with its lines under it: the sung character,
    its 律 (``lu_letter``), its 工尺 (``full`` only) and its cents from 12-TET, whole
    (``+12``); records the spelled cents. ``octaves``: the note sounds so many octaves
    from ``pitch`` (a song sung lower), its lines name ``pitch`` as notated. ``line``: a
    stroke's place and notehead on a shared percussion staff (``("F5", "x")``)."""
    if pitch is None:
        stroke = music21.note.Unpitched(quarterLength=beats)
        if line is not None:
            stroke.displayStep = cast(music21.common.types.StepName, line[0][0])
            stroke.displayOctave = int(line[0][1:])
            stroke.notehead = line[1]
        if lyric:
            stroke.addLyric(lyric, applyRaw=True)
        return stroke
    key = keys.key(pitch.moved(octaves))
    note = music21.note.Note(_spelled(key, pitch.lu, keys.huangzhong_key), quarterLength=beats)
    if note.pitch.alter == 0:
        note.pitch.accidental = None  # music21 marks a MIDI key's natural; notation needs none
    cents = keys.offset_cents(pitch)
    where = (note.pitch.step, int(note.pitch.alter), note.pitch.octave)
    if abs(spelled.setdefault(where, cents) - cents) > 0.05:
        raise RenderError(f"{pitch.name} and another pitch are both spelled {note.nameWithOctave}")
    lines = [lyric or "", lu_letter(pitch.name), (_gongche(pitch) or "") if full else "",
             f"{cents:+.0f}"]
    for number, text in enumerate(lines, start=1):
        if text:
            note.addLyric(text, lyricNumber=number, applyRaw=True)  # "-45": no hyphen
    return note


_LETTERS = "CDEFGAB"
_NATURAL = (0, 2, 4, 5, 7, 9, 11)  # semitones of C D E F G A B above C
#: Letters each 律 stands above 黃鍾 (黃 大 太 夾 姑 仲 蕤 林 夷 南 無 應: a scale on 黃鍾
#: as do: 1 ♭2 2 ♭3 3 4 ♯4 5 ♭6 6 ♭7 7), so that no two 律 share a letter and accidental.
_DEGREES = (0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6)
_GONG = (0, 2, 4, 6, 7, 9, 11)  # 黃 太 姑 蕤 林 南 應: the 黃鍾宮 scale


def _spelled(key: int, lu: str, huangzhong_key: int) -> music21.pitch.Pitch:
    """MIDI ``key`` spelled as the 律 ``lu`` stands above 黃鍾 (on ``huangzhong_key``): a
    黃鍾 on C♯ reads D♭ E♭ F G A♭ B♭ C, one letter a 律, where music21's own spelling of
    each key mixed sharps and flats (G G♯ for 應鍾 清黃鍾)."""
    letter, alter = _letter(_tonic(huangzhong_key % 12), LU.index(lu))
    if abs(alter) > 1:  # 大呂 on a D♭ 黃鍾 is E𝄫 by degree: a player reads D
        letter = (letter + (1 if alter > 0 else -1)) % 7
        alter = (key - _NATURAL[letter] + 6) % 12 - 6
    octave = (key - _NATURAL[letter] - alter) // 12 - 1
    spelled = music21.pitch.Pitch(_LETTERS[letter] + ("#" * alter if alter > 0 else "-" * -alter))
    spelled.octave = octave
    return spelled


def _letter(tonic: tuple[int, int], index: int) -> tuple[int, int]:
    """(letter, alter) of the 律 ``index`` steps above a 黃鍾 spelled ``tonic``."""
    letter = (tonic[0] + _DEGREES[index]) % 7
    semitones = (_NATURAL[tonic[0]] + tonic[1] + index) % 12
    return letter, (semitones - _NATURAL[letter] + 6) % 12 - 6


@functools.cache
def _tonic(pitch_class: int) -> tuple[int, int]:
    """黃鍾's spelling (letter, alter) on ``pitch_class``: the one whose 黃鍾宮 scale needs
    the fewest accidentals (C♯ → D♭: five flats, not seven sharps)."""
    spellings = [(letter, (pitch_class - _NATURAL[letter] + 6) % 12 - 6) for letter in range(7)]
    return min((s for s in spellings if abs(s[1]) <= 1), key=lambda s: (
        sum(abs(_letter(s, i)[1]) for i in _GONG), abs(s[1]), s[1] < 0))


#: Octave prefixes of a 律's name: 清 an octave up, 倍 an octave down.
_OCTAVE_WORDS = ("清", "倍")


def lu_letter(name: str) -> str:
    """The 律 as the 詩譜 print it, by its first character (黃 南 蕤 …), with 清 or 倍
    before it for the octave: 清太簇 → 清太, 林鍾 → 林, 倍黃鍾 → 倍黃. One or two characters,
    so neighbouring notes' names stay apart on the page."""
    octave = name[0] if name[:1] in _OCTAVE_WORDS else ""
    return octave + name[len(octave):len(octave) + 1]


@dataclass(frozen=True, slots=True)
class Bar:
    """A bar of a piece's score, in beats from the piece's start: one phrase of its melody
    (the 鼗 and 鼙 before the music are a bar of their own), and the stanza it opens."""

    start: float
    beats: float
    stanza: str | None = None


def bars(arrangement, piece) -> list[Bar]:
    """The bars of one 終 of ``arrangement``: each phrase a bar of its own length (5-beat
    phrases are 5/4, not forced into 4/4), the first bar of each stanza labelled, and what
    the 終 holds after its last phrase (a 節's closing stroke) a bar of its own."""
    beat = arrangement.tempo_bpm / 60.0
    found: list[Bar] = []
    if arrangement.music_start > 0:
        found.append(Bar(0.0, _beats(arrangement.music_start * beat)))
    phrases = [p for p in arrangement.phrases if p.zhong == 0]
    seen: set[int] = set()
    for index, phrase in enumerate(phrases):
        stop = phrases[index + 1].start if index + 1 < len(phrases) else phrase.end
        label = None
        if phrase.stanza not in seen:
            seen.add(phrase.stanza)
            labels = piece.stanza_labels
            label = labels[phrase.stanza] if phrase.stanza < len(labels) else None
        found.append(Bar(_beats(phrase.start * beat), _beats((stop - phrase.start) * beat),
                         label))
    end, last = _beats(arrangement.zhong[0][1] * beat), found[-1].start + found[-1].beats
    if end > last:  # the 節's closing stroke (貍首, 騶虞: the arrow is loosed on it)
        found.append(Bar(last, end - last))
    return found


def _beats(value: float) -> float:
    """Beats on a 1/8-beat grid (the arrangement's times are whole beats and halves)."""
    return round(value * 8) / 8


def write_piece_score(piece, path: str | Path, *, tuning: Tuning,
                      cents_in_alter: bool = False) -> Path:
    """Write one 終 of a piece, every part of it, as MusicXML (``.mxl``: compressed).

    Parts as the arrangement plays them (肆夏: bells, 鑮, 建鼓, 鼗, 朔鼙, 應鼙, stones),
    barred by phrase, stanzas marked; under each pitched note its 律 and its cents from
    12-TET (``_note``), the words and 工尺 under the first melody part.

    Parameters
    ----------
    piece : soundscape.music.repertoire.Piece
    path : path-like
    tuning : Tuning
    cents_in_alter : bool
        Write decimal ``<alter>`` (for tuning-aware readers; MuseScore 3 rejects it).
    """
    from soundscape.music.arrange import arrange

    arrangement = arrange(piece, tuning=tuning, repeats=1)
    layout = bars(arrangement, piece)
    pitches = [n.pitch for part in arrangement.parts.values() for n in part if n.pitch]
    sung = _sung_octaves(arrangement)
    keys = mts.key_map(pitches + [p.moved(sung) for p in pitches])
    spelled: dict = {}
    programs = load_programs()
    lead = next(p.id for p in piece.parts if p.role == "melody")
    words = iter(n.lyric for n in piece.notes)
    parts: list[music21.stream.Part] = []
    for spec in piece.parts:
        notes = [n for n in arrangement.parts[spec.id] if n.time < arrangement.zhong[0][1]]
        if not notes:
            continue
        if spec.id == lead:  # the words go under the first melody part, note by note
            notes = [replace(n, lyric=n.lyric or next(words, None)) for n in notes]
        voice = spec.instrument == "voice"
        part = _piece_part(spec, notes, layout, arrangement.tempo_bpm / 60.0, keys, spelled,
                           programs, full=spec.id == lead, marks=not parts,
                           octaves=sung if voice else 0,
                           clef=music21.clef.Treble8vbClef() if voice and sung == -1 else None)
        if not parts:
            _first_bar(part).insert(0, music21.tempo.MetronomeMark(number=piece.tempo_bpm))
        parts.append(part)
    note = piece.basis_note
    if piece.songs:  # a selection's 終 is a stanza: say what the rest is, and where
        note = (f"This score shows one 終 of the selection ({piece.stanza_labels[0]}); each of "
                "its songs has a score of its own: "
                + ", ".join(f"soundscape score {song} ({title})" for song, title in piece.songs)
                + f". {note}")
    credits = Credits(
        title=f"{piece.title} {getattr(piece, 'roman', '')}".strip(),
        subtitle=f"{piece.mode}; {tuning.name}, 黃鍾 = {tuning.huangzhong_hz:.2f} Hz; "
                 "under the notes: words, 律, 工尺, cents from 12-TET",
        basis=basis_line(piece.basis, piece.basis_note), notes=((piece.title, note),))
    return write_bytes(path, _exported(music21.stream.Score(parts), credits,
                                       spelled if cents_in_alter else None,
                                       compressed=_is_mxl(path)))


def _sung_octaves(arrangement) -> int:
    """The octaves the rite's 工 (``data/sequence.toml`` singers) move the piece's song by,
    as the sequencer does: 鹿鳴 an octave down for tenors (docs/voice.md, Register)."""
    from soundscape.music.register import song_octaves
    from soundscape.sequence.settings import load_settings

    return song_octaves(arrangement.notes(), load_settings().singers)


def _piece_part(spec, notes, layout: list[Bar], per_second: float, keys, spelled: dict,
                programs, *, full: bool, marks: bool, octaves: int = 0,
                clef: music21.clef.Clef | None = None) -> music21.stream.Part:
    """One part of a piece's score: a measure per bar, a time signature where the bar's
    length changes, a double bar line at each stanza and (``marks``: the top part) its
    rehearsal mark; a percussion clef for strokes, else ``clef`` or the clef that suits
    the range. ``octaves``: the part sounds so many octaves from the notes (``_note``)."""
    part = music21.stream.Part(id=spec.id)
    name = _PART_NAMES.get(spec.id) or _INSTRUMENT_NAMES.get(spec.instrument, spec.instrument)
    part.partName, part.partAbbreviation = f"{name} {spec.id}", name
    part.insert(0, _instrument(spec.instrument, programs, part.partName))
    metre = None
    placed = 0
    for number, bar in enumerate(layout, start=1):
        measure = music21.stream.Measure(number=number)
        if bar.beats != metre:
            metre = bar.beats
            measure.timeSignature = _metre(bar.beats)
        if bar.stanza and number > 1:
            measure.leftBarline = music21.bar.Barline("light-light")
        if bar.stanza and marks:
            measure.insert(0, music21.expressions.RehearsalMark(bar.stanza))
        inside = [n for n in notes if bar.start <= _beats(n.time * per_second)
                  < bar.start + bar.beats]
        _fill(measure, inside, bar, per_second, keys, spelled, full, octaves)
        part.append(measure)
        placed += len(inside)
    if placed != len(notes):  # a note outside every bar would be dropped without a word
        raise RenderError(f"the score of part {spec.id} has bars for {placed} of its "
                          f"{len(notes)} notes")
    first = _first_bar(part)
    if all(n.pitch is None for n in notes):
        first.insert(0, music21.clef.PercussionClef())
    else:
        first.insert(0, clef or music21.clef.bestClef(part, recurse=True))
    return part


def _metre(beats: float) -> music21.meter.TimeSignature:
    """n/4 for whole beats, n/8 for half beats (a phrase of 4½ beats is 9/8)."""
    if beats == int(beats):
        return music21.meter.TimeSignature(f"{int(beats)}/4")
    return music21.meter.TimeSignature(f"{round(beats * 2)}/8")


def _fill(measure, notes, bar: Bar, per_second: float, keys, spelled: dict,
          full: bool, octaves: int = 0) -> None:
    """The bar's notes at their beats (held at most to the next onset or the bar line),
    simultaneous ones a chord, rests between (:func:`beat_rests`)."""
    onsets: dict[float, list] = {}
    for note in notes:
        onsets.setdefault(_beats(note.time * per_second) - bar.start, []).append(note)
    at = 0.0
    times = sorted(onsets)
    for index, onset in enumerate(times):
        for rest, length in beat_rests(at, onset, bar.beats):
            measure.insert(rest, music21.note.Rest(quarterLength=length))
        stop = times[index + 1] if index + 1 < len(times) else bar.beats
        group = onsets[onset]
        length = min(max(_beats(max(n.duration for n in group) * per_second), 0.125),
                     stop - onset)
        made = [_note(n.pitch, length, keys, n.lyric if full else None, spelled,
                      full=full, octaves=octaves) for n in group]
        pitched = all(n.pitch is not None for n in group) and len(made) > 1
        measure.insert(onset, _chord(made) if pitched else made[0])
        at = onset + length
    for rest, length in beat_rests(at, bar.beats, bar.beats):
        measure.insert(rest, music21.note.Rest(quarterLength=length))


#: The instruments' names on the parts (as the text names them).
_INSTRUMENT_NAMES = {"bianzhong": "編鐘", "bo": "鑮", "bianqing": "編磬", "jiangu": "建鼓",
                     "pi": "鼙", "tao": "鼗", "se": "瑟", "guan": "管", "sheng": "笙",
                     "voice": "歌"}
#: Parts of one instrument in a piece, named apart (the text's 朔鼙 and 應鼙; the 建鼓 of
#: the 節, struck once at the 節's close), so that each staff keeps its own name on every
#: system, where MusicXML prints the short name.
_PART_NAMES = {"shuopi": "朔鼙", "yingpi": "應鼙", "jie": "建鼓 節"}


def write_performance_score(performance: Performance, path: str | Path, *,
                            cents_in_alter: bool = False,
                            notice: Callable[[str], None] | None = None) -> Path:
    """Write a performance as MusicXML (``.mxl``: compressed), the full score of
    :func:`performance_score`."""
    return write_bytes(path, performance_score(performance, cents_in_alter=cents_in_alter,
                                               compressed=_is_mxl(path), notice=notice))


def write_split_scores(performance: Performance, folder: str | Path, *, by: str,
                       cents_in_alter: bool = False,
                       notice: Callable[[str], None] | None = None) -> list[Path]:
    """Write a full score per piece played or per section that plays music (the parts of
    ``midi.parts``: ``NN-CUE.musicxml`` or ``SECTION.musicxml``) into ``folder``, each with
    only the staves that play in it, so that each fits its page where the whole rite's
    22 staves do not; or (``by="part"``) each staff of the full score on its own, the part
    its players play from (``NN-SOURCE.musicxml``, NN its place in the full score).

    Every score is made before any is written, and the set is placed whole or not at all;
    scores an earlier split of this kind wrote there and this one does not are removed,
    other files (the MIDI split's) are left alone; a second split into the folder while
    this one writes is refused. ``notice`` is told, by file, where a system does not fit.
    """
    scores: dict[str, bytes] = {}
    for name, part, staff in _split(performance, by):
        scores[name] = performance_score(
            part, cents_in_alter=cents_in_alter, staff=staff,
            notice=None if notice is None else functools.partial(_told, notice, name))
    return write_set(folder, {name: functools.partial(Path.write_bytes, data=data)
                              for name, data in scores.items()},
                     record=f".soundscape.{by}-scores", error=RenderError,
                     what=f"scores by {by}", kinds=(".musicxml",))


def _split(performance: Performance, by: str
           ) -> Iterator[tuple[str, Performance, int | None]]:
    """The scores a split writes: (file name, the part of the rite, the staff it keeps or
    None for all). By part: each staff of the full score on its own, for its players, named
    by its place in the full score and its first player's id (ids are never paths)."""
    if by == "part":
        played = music_only(performance)
        for index, staff in enumerate(_staves(played, _beats_of(tempo_map_of(played)))):
            yield f"{index + 1:02d}-{staff.sources[0].id}.musicxml", performance, index
        return
    for name, part in split_parts(performance, by):
        if music_only(part).events:  # a section without music has no score
            yield f"{Path(name).stem}.musicxml", part, None


def _beats_of(tmap) -> Callable[[float], float]:
    """Seconds → beats of the tempo map ``tmap``, on the notation grid."""
    return lambda seconds: _on_grid(tmap.tick(seconds) / TICKS_PER_BEAT)


def _told(notice: Callable[[str], None], name: str, said: str) -> None:
    notice(f"{name}: {said}")


def performance_score(performance: Performance, *, cents_in_alter: bool = False,
                      compressed: bool = False,
                      notice: Callable[[str], None] | None = None,
                      staff: int | None = None) -> bytes:
    """A performance as MusicXML: a part per source that plays music (the sounds of
    the actions, the place and the spoken words are left to the audio), rehearsal marks
    at the ritual markers.

    Times are in beats of the MIDI file's tempo map (``midi.tempo_map_of``: each piece in
    its own tempo, the rite's clock between, a tempo mark at each change), onsets and
    lengths on a ``QUANTUM_BEATS`` grid, so a piece's notes read as the beats they were
    laid on; a note is held at most until the next onset in its part, and simultaneous
    notes of one part form a chord. Rehearsal marks read ``中文 | English``. ``notice`` is
    told where the system does not fit an A4 page even at ``LEAST_STAFF_MM``. ``staff``:
    that staff of the full score alone (counted from 0), its players' part, with the
    tempo and rehearsal marks.
    """
    markers = performance.markers
    performance = music_only(performance)
    tmap = tempo_map_of(performance)
    beats = _beats_of(tmap)

    pitches = [e.pitch for e in performance.events if e.pitch is not None]
    keys = mts.key_map(pitches)
    spelled: dict = {}
    programs = load_programs()
    parts: list[music21.stream.Part] = []
    staves = _staves(performance, beats)
    if staff is not None:
        staves = [staves[staff]]
    for one, short in zip(staves, _abbreviations(staves), strict=True):
        sources, notes = one.sources, one.notes
        part = music21.stream.Part(id=sources[0].id)
        part.partName = one.name or _staff_name(sources)
        part.partAbbreviation = short  # the name every later system prints
        part.insert(0, _instrument(sources[0].instrument, programs, sources[0].roman))
        if one.key:
            part.insert(notes[0][0], music21.expressions.TextExpression(one.key))
        if not parts:
            for segment in tmap.segments:  # printed whole, played exact (<sound tempo>)
                bpm = round(6e7 / segment.tempo, 1)
                part.insert(segment.tick / TICKS_PER_BEAT, music21.tempo.MetronomeMark(
                    number=round(bpm), numberSounding=bpm))
            for beat, mark in _marks(markers, beats):
                part.insert(beat, mark)
                if staff is None and isinstance(mark, music21.expressions.TextExpression):
                    # a small text begins its system: in a system's last bar it ran off
                    # the page's right edge (MuseScore 3 reads no alignment for it)
                    part.insert(math.floor(beat / 4) * 4,
                                music21.layout.SystemLayout(isNew=True))
        for onset, length, written in notes:
            part.insert(onset, _sounding(written, length, keys, spelled))
        if all(w[0] is None for _, _, written in notes for w in written):  # strokes: not
            part.insert(0, music21.clef.PercussionClef())  # noteheads on a treble staff
        parts.append(part)
    # rests where a part is silent (music21 fills its gaps with hidden ones: empty bars),
    # every part to the end of the last whole 4/4 bar, so the last bar is full and holds
    # the last thing written (a tempo mark where the music has ended)
    end = max((max(math.ceil(p.highestTime / 4), math.floor(p.highestOffset / 4) + 1) * 4
               for p in parts), default=0)
    # and four bars past the last small text, whose words run on to the right: in the last
    # bar they ran past the page's edge (MuseScore 3 reads no alignment for them)
    texts = parts[0].getElementsByClass(music21.expressions.TextExpression) if parts else []
    end = max([end, *(math.floor(t.offset / 4) * 4 + _STEP_BEATS for t in texts)])
    for part in parts:
        for start, stop in _silences(part, end):
            for at, length in beat_rests(start, stop):
                part.insert(at, music21.note.Rest(quarterLength=length))
    score = music21.stream.Score(parts)
    for first, last, name in _brackets(staves):
        score.insert(0, music21.layout.StaffGroup(parts[first:last + 1], name=name,
                                                  symbol="bracket", barTogether=False))
    staff_mm, fits = full_score_size([_lyric_lines(one.notes) for one in staves])
    if not fits and notice is not None:
        notice(f"the full score's {len(staves)} staves do not fit an A4 page even at "
               f"{LEAST_STAFF_MM:g} mm: its systems will run past the page in MuseScore; "
               "score a part of the rite (--from/--to) or each section (--split section) "
               "to read it")
    return _exported(score, _performance_credits(performance),
                     spelled if cents_in_alter else None, staff_mm, compressed=compressed)


def _sounding(written: Sequence[Written], length: float, keys: mts.KeyMap,
              spelled: dict) -> music21.note.GeneralNote:
    """What sounds at one onset of a staff: a note or stroke, a chord of notes, or the
    strokes of a shared percussion staff together (each on its line)."""
    made = [_note(pitch, length, keys, lyric, spelled, octaves=octaves, line=line)
            for pitch, octaves, lyric, line in written]
    if len(made) == 1:
        return made[0]
    if all(w[0] is None for w in written):
        if all(w[3] is not None for w in written):
            return music21.percussion.PercussionChord(cast(list[music21.note.NotRest], made),
                                                      quarterLength=length)
        return made[0]  # one source's strokes at one onset: one stroke
    return _chord(made)


def _lyric_lines(notes: Sequence[Notated]) -> int:
    """The most lines under any note of a staff (its character, 律, 工尺, cents)."""
    return max((sum(map(bool, (lyric, *(("律", "工尺", "cents") if pitch else ()))))
                for _, _, written in notes for pitch, _, lyric, _ in written), default=0)


def full_score_size(lyric_lines: Sequence[int]) -> tuple[float, bool]:
    """The staff height (mm) of a full score on A4 whose staves carry so many lyric lines
    each, and whether its system fits the page there: ``PERFORMANCE_STAFF_MM`` where it
    fits, else the staff that fits it, down to ``LEAST_STAFF_MM``. A system taller than
    its page runs off it (s32's 26 staves at 5 mm went 12 mm past A4)."""
    spaces = _HEAD_SP - _GAP_SP + sum(_STAFF_SP + max(0.0, _LYRIC_SP * n - _LYRIC_FREE_SP)
                                      for n in lyric_lines)
    fitting = 4 * (_PAGE_MM[1] - 2 * _PAGE_MM[2]) / spaces  # the staff whose system fits
    staff_mm = min(PERFORMANCE_STAFF_MM, math.floor(fitting * 10) / 10)
    return max(LEAST_STAFF_MM, staff_mm), staff_mm >= LEAST_STAFF_MM


def _silences(part: music21.stream.Part, end: float) -> list[tuple[float, float]]:
    """Where ``part`` plays nothing, from 0 to ``end`` (beats)."""
    silences, at = [], 0.0
    for start, stop in sorted((float(n.offset), float(n.offset + n.quarterLength))
                              for n in part.notes):
        if start > at:
            silences.append((at, start))
        at = max(at, stop)
    return [*silences, (at, end)] if at < end else silences


def beat_rests(start: float, stop: float, bar: float = 4.0) -> Iterator[tuple[float, float]]:
    """The rests (onset, length in beats) of a silence in bars of ``bar`` beats (offsets
    from a bar line), as a player reads them, each showing the beat (Gould, *Behind
    Bars*): what is left of a beat first, then a whole bar's rest from its first beat, a
    half rest from an odd beat (the first, third …), else a quarter, the part of a beat
    last. One rest for a silence gave an eighth note, then a double-dotted half rest."""
    at = start
    while at < stop:
        beat = at % bar
        if beat % 1:
            length = min(math.floor(at) + 1.0, stop) - at
        elif beat == 0 and at + bar <= stop:
            length = bar
        elif beat % 2 == 0 and beat + 2 <= bar and at + 2 <= stop:
            length = 2.0
        else:
            length = min(1.0, stop - at)
        yield at, length
        at += length


#: A staff's note: onset and length in beats, and what sounds there, each (its pitch as
#: written, the octaves it sounds from there, its lyric, its line and notehead on a
#: percussion staff that several sources share, else None).
Written = tuple[Pitch | None, int, str | None, tuple[str, str] | None]
Notated = tuple[float, float, tuple[Written, ...]]


@dataclass(frozen=True)
class Staff:
    """A staff of the full score: its sources (players), its notes, and for a shared
    percussion staff its own name, the name later systems print and its key."""

    sources: tuple[Source, ...]
    notes: tuple[Notated, ...]
    name: str | None = None
    short: str | None = None
    key: str | None = None


#: The shooting on one percussion staff, as a percussion score writes a kit: the strokes
#: of the archery's sources (bows, arrow, targets, tally; the voices keep their staves),
#: each source on its own line or space from the top line down, instruments in this
#: order, each instrument its own notehead. A staff each took 7 of s32's 20 staves for
#: 200 arrows and 187 other strokes.
_KIT_GROUP = "archery"
_KIT_HEADS = {"bow": ("x", "×"), "arrow": ("triangle", "△"), "target": ("normal", "●"),
              "tally": ("diamond", "◇")}
_KIT_LINES = ("F5", "E5", "D5", "C5", "B4", "A4", "G4", "F4", "E4")
_KIT_NAME = ("射 the shooting", "射")


def _staves(performance: Performance, beats: Callable[[float], float]) -> list[Staff]:
    """A staff per playing source, its notes; sources of one instrument that play the
    same notes (the four 瑟 of a song, the three 負侯 answering together) share one, as a
    full score writes doubled parts, each note held as long as the longest of them holds
    it (players let a phrase's last note go a little apart): a staff each took 26
    staves for s32, a system taller than the page. The archery's strokes share one
    percussion staff (``_KIT_HEADS``)."""
    by_source: dict[str, list[Event]] = {}
    for event in performance.events:
        by_source.setdefault(event.source, []).append(event)
    playing = [s for s in performance.sources.values() if s.id in by_source]
    kit = _kit_lines([s for s in playing if all(e.pitch is None for e in by_source[s.id])])
    staves: dict[tuple, list[tuple[Source, tuple[Notated, ...]]]] = {}
    for source in playing:
        if source.id in kit:  # notated together below
            staves.setdefault(("kit",), []).append((source, ()))
            continue
        notes = _notated(by_source[source.id], beats, performance.pieces)
        played = tuple((onset, written) for onset, _, written in notes)
        staves.setdefault((source.instrument, played), []).append((source, notes))
    made = []
    for group, players in staves.items():
        members = tuple(source for source, _ in players)
        if group == ("kit",):
            events = sorted((e for s in members for e in by_source[s.id]), key=lambda e: e.time)
            made.append(Staff(members, _notated(events, beats, performance.pieces, kit),
                              *_KIT_NAME, key=_kit_key(members, kit)))
        else:
            made.append(Staff(members, _held_longest([n for _, n in players])))
    return made


#: Brackets of the full score, by where the players stand (their source ids' first word):
#: the east and west racks below the hall (設樂), the musicians on it, the shooting's
#: officials and sounds; a bracket joins two or more staves side by side.
_BRACKETS = {"east": "東 east", "west": "西 west", "gong": "工 musicians", "voice": "射 shooting",
             "archery": "射 shooting"}


def _brackets(staves: Sequence[Staff]) -> list[tuple[int, int, str]]:
    """The brackets (first staff, last staff, name) over runs of staves whose players
    stand together (``_BRACKETS``)."""
    runs: list[list] = []
    for index, staff in enumerate(staves):
        name = _BRACKETS.get(staff.sources[0].id.split(".")[0])
        if runs and name is not None and runs[-1][2] == name:
            runs[-1][1] = index
        else:
            runs.append([index, index, name])
    return [(first, last, name) for first, last, name in runs
            if name is not None and last > first]


def _kit_lines(playing: Sequence[Source]) -> dict[str, tuple[str, str]]:
    """The line and notehead of each archery source (of ``playing``, those that only
    strike) on the shared staff (none where fewer than two play: a lone one keeps its own
    staff)."""
    members = sorted((s for s in playing if s.group == _KIT_GROUP and s.instrument in _KIT_HEADS),
                     key=lambda s: list(_KIT_HEADS).index(s.instrument))
    if len(members) < 2 or len(members) > len(_KIT_LINES):
        return {}
    return {s.id: (line, _KIT_HEADS[s.instrument][0])
            for s, line in zip(members, _KIT_LINES, strict=False)}


def _kit_key(members: Sequence[Source], kit: Mapping[str, tuple[str, str]]) -> str:
    """The shared staff's key: ``top line down: 上射之物弓 × · … · 中算 ◇``."""
    ordered = sorted(members, key=lambda s: _KIT_LINES.index(kit[s.id][0]))
    named = [f"{s.name.replace(' ', '')} {_KIT_HEADS[s.instrument][1]}" for s in ordered]
    return "top line down: " + " · ".join(named)


def _held_longest(parts: Sequence[Sequence[Notated]]) -> tuple[Notated, ...]:
    """The notes that ``parts`` (the same onsets and pitches) play, each as long as the
    longest holds it."""
    return tuple((onset, max(notes[1] for notes in same), written)
                 for same in zip(*parts, strict=True) for onset, _, written in same[:1])


def _notated(events: Sequence[Event], beats: Callable[[float], float],
             pieces: Mapping[str, PieceInfo],
             kit: Mapping[str, tuple[str, str]] | None = None) -> tuple[Notated, ...]:
    """One staff's notes on the grid: simultaneous ones together, each held at most
    until the next onset; ``kit``: each source's line and notehead on a shared
    percussion staff (one stroke a line at an onset)."""
    groups = _chords(events, beats)
    notes = []
    for index, (onset, group) in enumerate(groups):
        length = max(beats(max(e.end for e in group)) - onset, QUANTUM_BEATS)
        if index + 1 < len(groups):
            length = min(length, groups[index + 1][0] - onset)
        written = tuple((*_as_written(e, pieces), e.lyric, kit.get(e.source) if kit else None)
                        for e in group)
        notes.append((onset, length, tuple(dict.fromkeys(written)) if kit else written))
    return tuple(notes)


def _players(sources: Sequence[Source]) -> str:
    """The Chinese names of a staff's players, their shared first words said once:
    工 大師、少師; 工 上工一–上工四."""
    words = [s.name.split(" ") for s in sources]
    common = 0
    while all(len(w) > common + 1 and w[common] == words[0][common] for w in words):
        common += 1
    own = [" ".join(w[common:]) for w in words]
    listed = "、".join(own) if len(own) <= 3 else f"{own[0]}–{own[-1]}"
    return f"{' '.join(words[0][:common])} {listed}".strip()


def _staff_name(sources: Sequence[Source]) -> str:
    """A staff's name on the first system: ``中文 roman``; a shared staff's players and how
    many play (``工 上工一–上工四 4 × se``)."""
    if len(sources) == 1:
        return f"{sources[0].name} {sources[0].roman.replace('_', ' ')}"
    return f"{_players(sources)} {len(sources)} × {sources[0].instrument}"


def _abbreviations(staves: Sequence[Staff]) -> list[str]:
    """The name each later system prints, one per staff and no two alike: the players';
    where two staves share it, their sides (建鼓 east, 建鼓 west), then a number (建鼓 west 2)."""
    names = [staff.short or _players(staff.sources) for staff in staves]
    alike = Counter(names)
    names = [name if alike[name] == 1 else f"{name} {staff.sources[0].roman.split()[0]}"
             for name, staff in zip(names, staves, strict=True)]
    alike, seen = Counter(names), Counter[str]()
    numbered = []
    for name in names:
        seen[name] += 1
        numbered.append(f"{name} {seen[name]}" if alike[name] > 1 and seen[name] > 1 else name)
    return numbered


#: Markers a player finds their place by: rehearsal marks, ``中文 | English``.
_LANDMARKS = ("section", "music", "shot")
_STEP_WIDTH, _STEP_LINES = 24, 3  # 12 Han characters a line, three lines at most
_STEP_BEATS = 16  # a small text at most every four 4/4 bars


def _marks(markers: Sequence[Marker], beats: Callable[[float], float]
           ) -> list[tuple[float, music21.base.Music21Object]]:
    """Rehearsal marks at the sections, music and shots; the other markers (steps, words,
    calls) as one small text every four bars at most, their words only, at the first one's
    beat, cut to three lines: a mark each stacked a bar's six steps into a tower over the
    system (s06, bar 14), and a text a bar, each wider than its bar, climbed over the next
    ones off the page (s32). The markers keep every word (MIDI, cue sheet)."""
    made: list[tuple[float, music21.base.Music21Object]] = []
    steps: list[tuple[float, list[str]]] = []  # each text's beat and words
    for marker in sorted(markers, key=lambda m: m.time):
        beat = beats(marker.time)
        if marker.kind in _LANDMARKS:
            made.append((beat, music21.expressions.RehearsalMark(
                "\n".join(wrap(f"{marker.text} | {marker.gloss}", _MARK_WIDTH)))))
        elif steps and beat < steps[-1][0] + _STEP_BEATS:
            steps[-1][1].append(marker.text)
        else:
            steps.append((beat, [marker.text]))
    for beat, said in steps:
        lines = wrap("、".join(dict.fromkeys(said)), _STEP_WIDTH)
        if len(lines) > _STEP_LINES:
            lines = [*lines[:_STEP_LINES - 1], lines[_STEP_LINES - 1][:-1] + "…"]
        text = music21.expressions.TextExpression("\n".join(lines))
        cast(music21.style.TextStyle, text.style).fontSize = 8
        text.placement = "above"
        made.append((beat, text))
    return made


def _as_written(event: Event, pieces: Mapping[str, PieceInfo]) -> tuple[Pitch | None, int]:
    """``event``'s pitch as its piece's score writes it, and the octaves it sounds from
    there: a song the 工 sing an octave down names 南, the 詩譜's note with its 工尺, not
    倍南, which has none."""
    piece = pieces.get(event.piece or "") if event.articulation == "sing" else None
    if event.pitch is None or piece is None or not piece.sung_octaves:
        return event.pitch, 0
    return event.pitch.moved(-piece.sung_octaves), piece.sung_octaves


def _performance_credits(performance: Performance) -> Credits:
    played = {e.piece for e in performance.events}
    pieces = [p for p in performance.pieces.values() if p.id in played]
    names = list(dict.fromkeys(f"{s.id} 右{s.name}" for s in (performance.sections[:1]
                                                            + performance.sections[-1:])))
    span = f"{' – '.join(names)}; " if names else ""
    return Credits(
        title=performance.info.title or "大射儀",
        subtitle=f"{span}each piece in its own tempo, the rite between at about ♩ = 60 "
                 "(a tempo mark at each change); cents from 12-TET under each note",
        basis="\n".join(f"{p.title}: {basis_line(p.basis, p.note)}" for p in pieces),
        notes=tuple((p.title, p.note) for p in pieces))


def _instrument(instrument: str, programs, name: str) -> music21.instrument.Instrument:
    """The part's instrument, with the GM program our MIDI files use, so notation programs
    play each part with the same family of sound (bells, marimba, choir …)."""
    found = music21.instrument.Instrument(name)
    found.midiProgram = program_for(programs, instrument, who=f"part {name!r}").program
    return found


def _on_grid(beats: float) -> float:
    return round(beats / QUANTUM_BEATS) * QUANTUM_BEATS


def _chords(events: Sequence, beats) -> list[tuple[float, list]]:
    """The events by onset on the grid (``beats(seconds)``), in time order."""
    groups: dict[float, list] = {}
    for event in events:
        groups.setdefault(beats(event.time), []).append(event)
    return sorted(groups.items())


def _make_deterministic(root: ET.Element) -> None:
    """Number the parts P1, P2 … and their instruments P1-I1 … (music21 uses random ids)
    and drop the export date."""
    names = {part.get("id"): f"P{i}" for i, part in enumerate(root.iter("score-part"), 1)}
    for element in (*root.iter("score-part"), *root.iter("part")):
        element.set("id", names[element.get("id")])
    instruments = {e.get("id"): f"{part.get('id')}-I{i}" for part in root.iter("score-part")
                   for i, e in enumerate(part.iter("score-instrument"), 1)}
    for tag in ("score-instrument", "midi-instrument", "instrument"):
        for element in root.iter(tag):
            element.set("id", instruments[element.get("id")])
    for encoding in root.iter("encoding"):
        for date in encoding.findall("encoding-date"):
            encoding.remove(date)


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


#: Punctuation a line may not begin with (it hangs past the width instead) or end with (it
#: goes down to the next line with what it opens): the CJK line-breaking rule (kinsoku).
_NO_LINE_START = frozenset("，。、；：！？）」』〕】》〉,.;:!?)")
_NO_LINE_END = frozenset("（「『〔【《〈(")


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` half-width characters (a Han character counts two),
    broken at spaces or between Han characters; paragraphs (``\\n``) kept; a closing
    mark hangs at a line's end rather than begin the next, an opening one goes down."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for token in re.findall(r"[\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]|\S+|\s+",
                                paragraph):
            if (_width(line + token) > width and line.strip()
                    and token not in _NO_LINE_START):
                opening = line[-1] if line[-1] in _NO_LINE_END and line[:-1].strip() else ""
                lines.append(line[:len(line) - len(opening)].rstrip())
                line = opening + ("" if token.isspace() else token)
            else:
                line += token
        lines.append(line.rstrip())
    return lines


def _credit(kind: str, x: int, y: int, justify: str, words: Iterable[tuple[str, int]]
            ) -> ET.Element:
    """A first-page ``<credit>`` of ``kind``; ``words`` are (text, font size) runs."""
    credit = ET.Element("credit", page="1")
    ET.SubElement(credit, "credit-type").text = kind
    for index, (text, size) in enumerate(words):
        attributes = {"font-size": str(size), "{http://www.w3.org/XML/1998/namespace}space":
                      "preserve"}
        if index == 0:
            attributes = {"default-x": str(x), "default-y": str(y), "justify": justify,
                          **attributes}
        ET.SubElement(credit, "credit-words", attributes).text = text
    return credit


def _set_credits(root: ET.Element, credits: Credits, staff_mm: float = PIECE_STAFF_MM
                 ) -> None:
    """Title, page layout at ``staff_mm`` a staff, credits and creator, replacing what
    music21 wrote. Tenths are a fortieth of the staff: the page's are scaled from 7 mm's."""
    for old in root.findall("credit"):
        root.remove(old)
    _child(root, "work/work-title").text = credits.title
    _child(root, "movement-title").text = credits.title
    identification = _child(root, "identification")
    for creator in identification.findall("creator"):
        identification.remove(creator)
    creator = ET.Element("creator", type="composer")
    creator.text = credits.basis
    identification.insert(0, creator)
    if credits.notes:
        fields = ET.SubElement(identification, "miscellaneous")
        for label, note in credits.notes:
            ET.SubElement(fields, "miscellaneous-field", name=f"basis of {label}").text = note
    defaults = _child(root, "defaults")
    scale = PIECE_STAFF_MM / staff_mm
    _child(defaults, "scaling/millimeters").text = f"{staff_mm:g}"
    page_w, page_h, margin = (int(mm / staff_mm * 40) for mm in _PAGE_MM)
    layout = ET.Element("page-layout")
    ET.SubElement(layout, "page-height").text = str(page_h)
    ET.SubElement(layout, "page-width").text = str(page_w)
    margins = ET.SubElement(layout, "page-margins", type="both")
    for side in ("left", "right", "top", "bottom"):
        ET.SubElement(margins, f"{side}-margin").text = str(margin)
    defaults.insert(list(defaults).index(_child(defaults, "scaling")) + 1, layout)
    basis, note_lines = wrap(credits.basis, _BASIS_WIDTH), _note_lines(credits.notes)
    subtitle = wrap(credits.subtitle, _SUBTITLE_WIDTH)  # one line ran off both edges
    # MuseScore 3 hangs composer and lyricist text from the bottom of the title frame and
    # sizes the frame by the credits' lowest default-y: both go at the block's foot.
    top = page_h - margin
    foot = top - round(scale * (_TITLE_TENTHS + _SUBTITLE_LINE_TENTHS * max(0, len(subtitle) - 1)
                                + max(len(basis) * 25, len(note_lines) * 20)))
    made = [
        _credit("title", page_w // 2, top, "center",
                [(credits.title, 20), ("\n" + "\n".join(subtitle), 11)]),
    ]
    if credits.basis:
        made.append(_credit("composer", page_w - margin, foot, "right",
                            [("\n".join(basis), 10)]))
    if note_lines:
        made.append(_credit("lyricist", margin, foot, "left", [("\n".join(note_lines), 8)]))
    at = list(root).index(defaults) + 1
    root[at:at] = made


def _note_lines(notes: tuple[tuple[str, str], ...]) -> list[str]:
    """The basis notes wrapped for the page (one alone without its label), or, when they
    would take more than ``_MAX_NOTE_LINES``, where to read them in full."""
    if not notes:
        return []
    text = notes[0][1] if len(notes) == 1 else "\n".join(f"{a}: {b}" for a, b in notes)
    lines = wrap(text, _NOTE_WIDTH)
    if len(lines) <= _MAX_NOTE_LINES:
        return lines
    return wrap("The basis notes of " + ", ".join(a for a, _ in notes) + " are in full in this "
                "file's <miscellaneous> fields and in `soundscape pieces`.", _NOTE_WIDTH)


def _cents_in_alter(root: ET.Element, spelled: dict) -> None:
    """Decimal ``<alter>`` (semitones + cents/100) for readers that take it as tuning."""
    for note in root.iter("note"):
        pitch = note.find("pitch")
        if pitch is None:
            continue
        step, octave = _child(pitch, "step").text, int(_child(pitch, "octave").text or "")
        alter = pitch.find("alter")
        whole = round(float(alter.text or "")) if alter is not None else 0
        cents = spelled.get((step, whole, octave))
        if cents is None or abs(cents) < 0.005:
            continue
        if alter is None:
            alter = ET.Element("alter")
            pitch.insert(1, alter)
        alter.text = f"{whole + cents / 100:.4f}".rstrip("0").rstrip(".")
        if note.find("accidental") is None:
            _hidden_accidental(note, whole)


#: Elements a <note> may hold after <accidental> (MusicXML 4.0 order).
_AFTER_ACCIDENTAL = ("time-modification", "stem", "notehead", "notehead-text", "staff",
                     "beam", "notations", "lyric", "play", "listen")


def _hidden_accidental(note: ET.Element, whole: int) -> None:
    """The written semitone's accidental, not printed: a decimal <alter> alone is no
    accidental music21 knows ("incorrect accidental 0.0587"); with one it keeps the
    decimal as the pitch's alter, and a reader that prints accidentals shows none."""
    accidental = ET.Element("accidental", {"print-object": "no"})
    accidental.text = {0: "natural", 1: "sharp", -1: "flat"}[whole]
    children = list(note)
    at = next((i for i, child in enumerate(children) if child.tag in _AFTER_ACCIDENTAL),
              len(children))
    note.insert(at, accidental)


def _music21_xml(score: music21.stream.Score) -> bytes:
    """music21's MusicXML of ``score``, without its "out of midi channels" warnings.

    A rite has more parts than MIDI has channels; music21 then gives the extra parts
    channel 1 (MusicXML lets parts share a channel) and writes a warning to stderr for
    each, which would read as a fault. Any other message still goes to stderr.
    """
    exporter = music21.musicxml.m21ToXml.GeneralObjectExporter(score)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        text = exporter.parse()
    for line in said.getvalue().splitlines(keepends=True):
        if "out of midi channels" not in line:
            sys.stderr.write(line)
    return text


def _exported(score: music21.stream.Score, credits: Credits, spelled: dict | None,
              staff_mm: float = PIECE_STAFF_MM, *, compressed: bool = False) -> bytes:
    """Export with music21, set the credits (and decimal alters if ``spelled``) on A4 at
    ``staff_mm`` a staff: plain or (``compressed``, ``.mxl``) compressed MusicXML."""
    score.insert(0, music21.metadata.Metadata(title=credits.title))
    root = ET.fromstring(_music21_xml(score))
    _make_deterministic(root)
    _set_credits(root, credits, staff_mm)
    for sound in root.iter("sound"):  # music21 writes 59.6 as 59.60000000000001
        if sound.get("tempo"):
            sound.set("tempo", f"{round(float(sound.get('tempo', '')), 3):g}")
    for direction in root.iter("direction"):  # MuseScore 3 misplaces an unplaced tempo mark
        direction.set("placement", direction.get("placement", "above"))
    if spelled is not None:
        _cents_in_alter(root, spelled)
    ET.indent(root, space="  ")
    data = (_HEADER + ET.tostring(root, encoding="unicode") + "\n").encode("utf-8")
    return _compressed(data) if compressed else data


def _is_mxl(path: str | Path) -> bool:
    return Path(path).suffix.lower() == ".mxl"


def _compressed(xml: bytes) -> bytes:
    """Compressed MusicXML: ``mimetype`` stored first, the container, the score; fixed
    timestamps so the same score gives the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data, method in (
                ("mimetype", b"application/vnd.recordare.musicxml", zipfile.ZIP_STORED),
                ("META-INF/container.xml", _MXL_CONTAINER.encode(), zipfile.ZIP_DEFLATED),
                ("score.musicxml", xml, zipfile.ZIP_DEFLATED)):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            archive.writestr(info, data)
    return buffer.getvalue()
