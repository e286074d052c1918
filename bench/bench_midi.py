"""Time writing MIDI for a rite-sized performance and a piece's MusicXML, against music21.

Run: ``.venv/bin/python bench/bench_midi.py`` (uses the sequencer's whole rite when it is
available, else a synthetic rite of the same order: 60 minutes, 14 sources).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import music21

from soundscape import midi, repertoire, score
from soundscape.performance import Event, Performance, Source
from soundscape.spatial import Listener
from soundscape.tuning import Tuning


def _rite() -> Performance:
    try:
        from soundscape import sequence
        return sequence.perform_from_file()
    except ImportError:
        tuning = Tuning.sanfen_sunyi()
        names = [n.name for n in repertoire.load_piece("luming").notes]
        sources = {f"s{i}": Source(f"s{i}", "bianqing", f"磬{i}", f"qing {i}", "east",
                                   (float(i), 6.0, 1.0)) for i in range(14)}
        events = [Event(0.25 * k, 0.5, f"s{k % 14}", tuning.pitch(names[k % len(names)]), 0.7,
                        "strike", "m") for k in range(14400)]
        return Performance.build(events, [], sources)


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
