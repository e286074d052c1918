"""MusicXML scores through music21: the one module that talks to music21.

Two entry points: :func:`write_piece_score` (one piece, its melody with lyrics)
and :func:`write_performance_score` (parts per placed source, rehearsal marks at
the ritual markers). Each note carries, as lyric lines under it, the sung
character (if any), its 律 name, its 工尺 syllable (熊朋來's key, where it has
one) and its deviation from 12-TET in cents. The basis of each piece
(surviving or reconstruction) goes into the score's credits.

music21 10.5 writes ``<alter>`` as a whole number and so drops the cents; after
export, every ``<alter>`` is rewritten with the decimal value (semitones, e.g.
``-0.32``) of the pitch it spells. Notes are spelled on the same keys as the
MIDI file's MTS key map (one key per 律), so one spelled pitch is one 律.
"""

from __future__ import annotations

import contextlib
import io
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path

import music21

from soundscape.errors import RenderError, TuningError
from soundscape.fileio import write_bytes
from soundscape.music.pitch import Pitch
from soundscape.music.tuning import Tuning, to_gongche
from soundscape.output import mts
from soundscape.output.midi import load_programs, program_for
from soundscape.performance import Performance

__all__ = ["QUANTUM_S", "write_performance_score", "write_piece_score"]

QUANTUM_S = 0.25  # performance scores: onsets and lengths on a 1/4 s grid (♩ = 60)


def _gongche(pitch: Pitch) -> str | None:
    try:
        return to_gongche(pitch)
    except TuningError:
        return None


def _note(pitch: Pitch | None, beats: float, keys: mts.KeyMap, lyric: str | None,
          spelled: dict) -> music21.note.GeneralNote:
    """A music21 note (or unpitched stroke) with its lyric lines; records the spelled cents."""
    if pitch is None:
        note = music21.note.Unpitched(quarterLength=beats)
        if lyric:
            note.addLyric(lyric)
        return note
    key = keys.key(pitch)
    note = music21.note.Note(key, quarterLength=beats)
    cents = keys.offset_cents(pitch)
    where = (note.pitch.step, int(note.pitch.alter), note.pitch.octave)
    if abs(spelled.setdefault(where, cents) - cents) > 0.05:
        raise RenderError(f"{pitch.name} and another pitch are both spelled {note.nameWithOctave}")
    lines = [lyric or "", pitch.name, _gongche(pitch) or "", f"{cents:+.1f}¢"]
    for number, text in enumerate(lines, start=1):
        if text:
            note.addLyric(text, lyricNumber=number)
    return note


def _credits(score: music21.stream.Score, title: str, lines: Iterable[str]) -> None:
    score.insert(0, music21.metadata.Metadata(title=title))
    y = 1500
    for text in lines:
        score.insert(0, music21.text.TextBox(text, 100, y))
        y -= 40


def write_piece_score(piece, path: str | Path, *, tuning: Tuning) -> Path:
    """Write one piece as MusicXML.

    Parameters
    ----------
    piece : soundscape.music.repertoire.Piece
        Uses ``id``, ``title``, ``mode``, ``basis``, ``basis_note``, ``tempo_bpm``
        and ``notes`` (``PieceNote(name, beats, lyric)``).
    path : path-like
    tuning : Tuning
    """
    pitches = [tuning.pitch(n.name) for n in piece.notes]
    keys = mts.key_map(pitches)
    spelled: dict = {}
    part = music21.stream.Part(id=piece.id)
    part.partName = f"{piece.title} {piece.mode}"
    part.append(music21.tempo.MetronomeMark(number=piece.tempo_bpm))
    for note, pitch in zip(piece.notes, pitches, strict=True):
        part.append(_note(pitch, float(note.beats), keys, note.lyric, spelled))
    score = music21.stream.Score([part])
    _credits(score, f"{piece.title} ({piece.id})", [
        f"{piece.mode}; {tuning.name}, 黃鍾 = {tuning.huangzhong_hz:.2f} Hz",
        f"basis: {piece.basis}", piece.basis_note])
    return _export(score, path, spelled)


def write_performance_score(performance: Performance, path: str | Path) -> Path:
    """Write a performance as MusicXML: a part per sounding source, rehearsal marks at markers.

    Times are placed on a ``QUANTUM_S`` grid at ♩ = 60 (a quarter note is a
    second); a note is held at most until the next onset in its part, and
    simultaneous notes of one part form a chord.
    """
    pitches = [e.pitch for e in performance.events if e.pitch is not None]
    keys = mts.key_map(pitches)
    spelled: dict = {}
    programs = load_programs()
    parts = []
    for source in performance.sources.values():
        events = [e for e in performance.events if e.source == source.id]
        if not events:
            continue
        part = music21.stream.Part(id=source.id)
        part.partName = f"{source.name} {source.roman}"
        part.insert(0, _instrument(source, programs))
        if not parts:
            part.insert(0, music21.tempo.MetronomeMark(number=60))
            for marker in performance.markers:
                part.insert(_grid(marker.time), music21.expressions.RehearsalMark(
                    f"{marker.text} {marker.gloss}"))
        groups = _chords(events)
        for index, (onset, group) in enumerate(groups):
            stop = groups[index + 1][0] if index + 1 < len(groups) else None
            length = max(_grid(max(e.duration for e in group)), QUANTUM_S)
            if stop is not None:
                length = min(length, stop - onset)
            notes = [_note(e.pitch, length, keys, e.lyric, spelled) for e in group]
            part.insert(onset, notes[0] if len(notes) == 1 or any(e.pitch is None for e in group)
                        else music21.chord.Chord(notes))
        parts.append(part)
    score = music21.stream.Score(parts)
    bases = [f"{p.title} ({p.id}): {p.basis}. {p.note}" for p in performance.pieces.values()]
    _credits(score, str(performance.meta.get("title", "大射儀")), bases)
    return _export(score, path, spelled)


def _instrument(source, programs) -> music21.instrument.Instrument:
    """The part's instrument, with the GM program our MIDI files use, so notation programs
    play each part with the same family of sound (bells, marimba, choir …)."""
    found = music21.instrument.Instrument(source.roman)
    found.midiProgram = program_for(programs, source).program
    return found


def _grid(seconds: float) -> float:
    return round(seconds / QUANTUM_S) * QUANTUM_S


def _chords(events: Sequence) -> list[tuple[float, list]]:
    groups: dict[float, list] = {}
    for event in events:
        groups.setdefault(_grid(event.time), []).append(event)
    return sorted(groups.items())


_ACCIDENTALS = {-2: "flat-flat", -1: "flat", 0: "natural", 1: "sharp", 2: "double-sharp"}


def _show_accidental(note: ET.Element, whole: int) -> None:
    """Give a retuned note an explicit accidental: readers (music21, MuseScore) need one to
    accept a fractional ``<alter>``, and it tells the player the note is not the plain key."""
    if note.find("accidental") is not None:
        return
    children = list(note)
    after = max(i for i, child in enumerate(children) if child.tag in ("pitch", "duration",
                                                                       "tie", "voice", "type",
                                                                       "dot"))
    accidental = ET.Element("accidental")
    accidental.text = _ACCIDENTALS[whole]
    note.insert(after + 1, accidental)


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


def _export(score: music21.stream.Score, path: str | Path, spelled: dict) -> Path:
    """Export with music21, then write the decimal ``<alter>`` of every pitch."""
    root = ET.fromstring(_music21_xml(score))
    _make_deterministic(root)
    for note in root.iter("note"):
        pitch = note.find("pitch")
        if pitch is None:
            continue
        step, octave = pitch.findtext("step"), int(pitch.findtext("octave"))
        alter = pitch.find("alter")
        whole = round(float(alter.text)) if alter is not None else 0
        cents = spelled.get((step, whole, octave))
        if cents is None or abs(cents) < 0.005:
            continue
        if alter is None:
            alter = ET.Element("alter")
            pitch.insert(1, alter)
        alter.text = f"{whole + cents / 100:.4f}".rstrip("0").rstrip(".")
        _show_accidental(note, whole)
    body = ET.tostring(root, encoding="unicode")
    header = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE score-partwise PUBLIC '
              '"-//Recordare//DTD MusicXML 4.0 Partwise//EN" '
              '"http://www.musicxml.org/dtds/partwise.dtd">\n')
    return write_bytes(path, (header + body + "\n").encode("utf-8"))
