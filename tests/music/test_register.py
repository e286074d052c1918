"""Register: voice ranges from data and the octave a part sings a notated melody in."""

import numpy as np
import pytest

from soundscape.errors import RepertoireError
from soundscape.music.register import PARTS, octave_shift, rule, sung_pitch, voice_part
from soundscape.music.repertoire import load_piece
from soundscape.music.tuning import default_tuning


def melody(piece_id):
    tuning = default_tuning()
    return [tuning.pitch(note.name) for note in load_piece(piece_id).notes]


def test_ranges_are_ordered_and_sourced():
    tenor, baritone, bass = (voice_part(p) for p in PARTS)
    assert bass.low_hz < baritone.low_hz < tenor.low_hz
    assert bass.high_hz < baritone.high_hz < tenor.high_hz
    assert all("Hugill" in voice_part(p).source for p in PARTS)
    assert "熊朋來" in rule() and "median" in rule()


def test_luming_for_a_tenor_is_sung_an_octave_down_inside_his_range():
    notes = melody("luming")
    assert np.median([p.hz for p in notes]) > voice_part("tenor").high_hz  # as notated: too high
    shift = octave_shift(notes, "tenor")
    assert shift == -1
    sung = [sung_pitch(p, "tenor", shift=shift) for p in notes]
    assert voice_part("tenor").holds(float(np.median([p.hz for p in sung])))
    assert all(voice_part("tenor").holds(p.hz) for p in sung)


def test_a_sung_pitch_keeps_its_lu_and_moves_whole_octaves():
    qing_huang = default_tuning().pitch("清黃鍾")
    sung = sung_pitch(qing_huang, "tenor", shift=-1)
    assert (sung.lu, sung.octave, sung.hz) == (qing_huang.lu, 0, qing_huang.hz / 2)
    assert sung.name == "黃鍾"
    alone = sung_pitch(default_tuning().pitch("清太簇"), "bass")
    assert voice_part("bass").holds(alone.hz)


def test_the_shift_keeps_most_notes_in_range_before_centring_the_median():
    # A melody with a wide span: the median rule alone would drop its low notes out.
    hz = [100.0, 110.0] + [300.0] * 3
    shift = octave_shift(hz, "bass")
    moved = np.array(hz) * 2.0 ** shift
    low, high = voice_part("bass").low_hz, voice_part("bass").high_hz
    best = min(np.count_nonzero((np.array(hz) * 2.0 ** s < low) | (np.array(hz) * 2.0 ** s > high))
               for s in range(-3, 4))
    assert np.count_nonzero((moved < low) | (moved > high)) == best


def test_unknown_part_and_empty_melody_are_named():
    with pytest.raises(RepertoireError, match="soprano"):
        voice_part("soprano")
    with pytest.raises(RepertoireError, match="no notes"):
        octave_shift([], "tenor")
