"""Time writing MIDI for a rite-sized performance and MusicXML scores, against music21.

Run: ``.venv/bin/python bench/bench_midi.py`` (the sequencer's whole rite, seed 0: MIDI
of the whole rite in one file and split per section and per piece, MusicXML of 鹿鳴 and
of the section 樂賓 s18). ``--whole-score`` also
times the whole rite's MusicXML (~11 minutes, 1.5 GB: music21 lays out every bar of
every part).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import music21

from soundscape import sequence
from soundscape.music import repertoire
from soundscape.music.tuning import Tuning
from soundscape.output import midi, score
from soundscape.performance import Performance
from soundscape.site.listeners import Listener


def _rite() -> Performance:
    return sequence.perform_from_file()


def _timed(label: str, action) -> float:
    """Run ``action``; print its wall and CPU time (CPU is the figure to compare on a
    shared machine: wall time grows with the load, CPU time much less)."""
    start, cpu = time.perf_counter(), time.process_time()
    action()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{label:<62} {seconds:8.2f} s wall {cpu:8.2f} s CPU", flush=True)
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--whole-score", action="store_true",
                        help="also time the whole rite's MusicXML (slow)")
    whole_score = parser.parse_args().whole_score
    performance = _rite()
    listener = Listener((0.0, 0.0, 1.6), "north")
    print(f"{len(performance.events)} events, {performance.duration / 60:.1f} minutes")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        for mode in midi.TUNING_MODES:
            _timed(f"soundscape write_midi ({mode})",
                   lambda mode=mode: midi.write_midi(performance, out / f"{mode}.mid",
                                                     listener=listener, tuning_mode=mode))
        for by in midi.SPLITS:
            _timed(f"soundscape write_split (one file per {by})",
                   lambda by=by: midi.write_split(performance, out / by, by=by,
                                                  listener=listener))
        _timed("music21 writing the same notes as MIDI (12-TET)",
               lambda: _music21_midi(performance, out / "m21.mid"))
        piece = repertoire.load_piece("luming")
        _timed("soundscape write_piece_score (鹿鳴 MusicXML)",
               lambda: score.write_piece_score(piece, out / "luming.musicxml",
                                               tuning=Tuning.sanfen_sunyi()))
        section = sequence.perform_from_file(from_section="s18", to_section="s18")
        _timed(f"soundscape write_performance_score (s18 樂賓, {len(section.events)} notes, "
               f"{section.duration / 60:.1f} min)",
               lambda: score.write_performance_score(section, out / "s18.musicxml"))
        if whole_score:
            _timed("soundscape write_performance_score (whole rite)",
                   lambda: score.write_performance_score(performance, out / "rite.musicxml"))


if __name__ == "__main__":
    main()
