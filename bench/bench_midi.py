"""Time writing MIDI for a rite-sized performance and a piece's MusicXML, against music21.

Run: ``.venv/bin/python bench/bench_midi.py`` (the sequencer's whole rite, seed 0).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import music21

from soundscape import midi, repertoire, score, sequence
from soundscape.performance import Performance
from soundscape.spatial import Listener
from soundscape.tuning import Tuning


def _rite() -> Performance:
    return sequence.perform_from_file()


def _timed(label: str, action) -> float:
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    print(f"{label:<52} {seconds:8.3f} s")
    return seconds


def _music21_midi(performance: Performance, path: Path) -> None:
    part = music21.stream.Part()
    for event in performance.events:
        if event.pitch is not None:
            note = music21.note.Note(event.pitch.nearest_midi()[0],
                                     quarterLength=event.duration)
            part.insert(event.time, note)
    music21.stream.Score([part]).write("midi", fp=str(path))


def main() -> None:
    performance = _rite()
    listener = Listener((0.0, 0.0, 1.6), "north")
    print(f"{len(performance.events)} events, {performance.duration / 60:.1f} minutes")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        for mode in midi.TUNING_MODES:
            _timed(f"soundscape write_midi ({mode})",
                   lambda mode=mode: midi.write_midi(performance, out / f"{mode}.mid",
                                                     listener=listener, tuning_mode=mode))
        _timed("music21 writing the same notes as MIDI (12-TET)",
               lambda: _music21_midi(performance, out / "m21.mid"))
        piece = repertoire.load_piece("luming")
        _timed("soundscape write_piece_score (鹿鳴 MusicXML)",
               lambda: score.write_piece_score(piece, out / "luming.musicxml",
                                               tuning=Tuning.sanfen_sunyi()))


if __name__ == "__main__":
    main()
