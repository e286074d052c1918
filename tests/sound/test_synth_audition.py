"""`soundscape audition`: files written, and the programme each instrument plays."""

from __future__ import annotations

import numpy as np
import soundfile
from click.testing import CliRunner

from soundscape.cli.audition import command, demo_notes
from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import default_tuning


def test_audition_writes_wav_and_spectrogram(tmp_path):
    result = CliRunner().invoke(command, ["pi", "tao", "--out", str(tmp_path),
                                          "--sample-rate", "16000", "--seed", "3"])
    assert result.exit_code == 0, result.output
    for ident in ("pi", "tao"):
        audio, rate = soundfile.read(tmp_path / f"{ident}.wav")
        assert rate == 16000 and audio.ndim == 1 and 0 < np.max(np.abs(audio)) <= 1.0
        assert (tmp_path / f"{ident}.png").stat().st_size > 10_000


def test_bell_programme_is_each_bell_a_then_b():
    bells = load_instrument("bianzhong")
    notes = demo_notes(bells, tuning=default_tuning(), gong="黃鍾")
    assert len(notes) == 2 * len(bells.pitches)
    for a, b, name in zip(notes[::2], notes[1::2], bells.pitches, strict=True):
        assert (a.articulation, b.articulation) == ("A", "B")
        assert a.hz == b.hz == default_tuning().pitch(name).hz and b.time > a.time
        assert a.pitch == b.pitch == name  # each bell its own B interval, whatever the tuning


def test_drum_roll_grows_from_soft_to_loud():
    notes = [n for n in demo_notes(load_instrument("jiangu"), tuning=default_tuning(),
                                   gong="黃鍾") if n.articulation == "strike"]
    velocities = [n.velocity for n in notes]
    assert velocities == sorted(velocities) and velocities[0] < 0.2 and velocities[-1] == 1.0


def test_se_plays_the_mode_on_the_chosen_gong():
    notes = demo_notes(load_instrument("se"), tuning=default_tuning(), gong="林鍾")
    tuning = default_tuning()
    allowed = {tuning.degree(gong="林鍾", degree=d).lu for d in ("宮", "商", "角", "徵", "羽")}
    assert {tuning.nearest(n.hz)[0].lu for n in notes} == allowed


def test_bad_gong_is_a_clean_error(tmp_path):
    result = CliRunner().invoke(command, ["pi", "--out", str(tmp_path), "--gong", "黃鼓"])
    assert result.exit_code == 2 and "'黃鼓' is not one of '黃鍾'" in result.output
