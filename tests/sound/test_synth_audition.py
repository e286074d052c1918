"""`soundscape audition`: files written, and the programme each instrument plays."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile
from click.testing import CliRunner

from soundscape.cli.audition import command, demo_notes, render_demo
from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import default_tuning


def test_audition_writes_wav_and_spectrogram(tmp_path):
    result = CliRunner().invoke(command, ["pi", "tao", "--out", str(tmp_path),
                                          "--sample-rate", "44100", "--seed", "3"])
    assert result.exit_code == 0, result.output
    for ident in ("pi", "tao"):
        audio, rate = soundfile.read(tmp_path / f"{ident}.wav")
        assert rate == 44100 and audio.ndim == 1 and 0 < np.max(np.abs(audio)) <= 1.0
        assert (tmp_path / f"{ident}.png").stat().st_size > 10_000


def test_an_unknown_id_after_good_ones_writes_nothing(tmp_path, soundscape_cli):
    """`audition pu nosuch` wrote pu.wav and pu.png, then refused nosuch."""
    code, err = soundscape_cli("audition", "pi", "nosuch", "--out", "out", cwd=tmp_path)
    assert code == 2 and "'nosuch'" in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_path_is_no_instrument(tmp_path, soundscape_cli):
    """`audition ../x` and `audition /etc/passwd` opened the file the name led to."""
    code, err = soundscape_cli("audition", "/etc/passwd", "--out", "out", cwd=tmp_path)
    assert code == 2 and "'/etc/passwd' unknown; bundled: " in err, err
    assert not (tmp_path / "out").exists()


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


def test_actions_and_the_place_play_each_articulation_at_its_length():
    for ident, seconds in (("footstep", 3.0), ("ambience", 12.0), ("vessel", 0.4)):
        instrument = load_instrument(ident)
        notes = demo_notes(instrument, tuning=default_tuning(), gong="黃鍾")
        assert [n.articulation for n in notes] == list(instrument.articulations)
        assert all(n.duration == seconds and n.hz is None for n in notes)
        assert [n.time for n in notes] == pytest.approx(
            [i * (seconds + 1.0) for i in range(len(notes))])


def test_audition_passes_bells_and_tuning_on(tmp_path, monkeypatch):
    from soundscape.cli import audition

    seen = []
    real = audition.render_demo

    def spy(instrument, notes, **keywords):
        seen.append(keywords)
        return real(instrument, notes[:2], **keywords)

    monkeypatch.setattr(audition, "render_demo", spy)
    result = CliRunner().invoke(command, ["pi", "--out", str(tmp_path), "--bells", "zeng",
                                          "--tuning", "equal"])
    assert result.exit_code == 0, result.output
    assert seen[0]["bells"] == "zeng" and seen[0]["tuning"].name == "十二平均律"
    refused = CliRunner().invoke(command, ["pi", "--out", str(tmp_path), "--bells", "qing"])
    assert refused.exit_code == 2 and "'qing' is not one of 'ideal', 'zeng'" in refused.output


def test_zeng_bells_sound_off_the_tuning_in_the_audition():
    """The 南呂 bell (F, Braun's norm tone: +19 cents off the classes' mean, and its
    own scatter) sounds off the ideal pitch under zeng, on it when ideal."""
    bells = load_instrument("bianzhong")
    tuning = default_tuning()
    note = next(n for n in demo_notes(bells, tuning=tuning, gong="黃鍾")
                if n.pitch == "南呂" and n.articulation == "A")
    note = type(note)(0.0, note.duration, note.hz, note.velocity, "A", pitch="南呂")
    heard = {}
    for choice in ("ideal", "zeng"):
        audio = render_demo(bells, [note], sample_rate=44100, seed=0, tuning=tuning,
                            bells=choice)[:22050] * np.hanning(22050)
        spectrum = np.abs(np.fft.rfft(audio, 1 << 20))
        freqs = np.fft.rfftfreq(1 << 20, 1 / 44100)
        near = (freqs > 420) & (freqs < 465)
        heard[choice] = freqs[near][np.argmax(spectrum[near])]
    ideal = tuning.pitch("南呂").hz
    assert abs(1200 * np.log2(heard["ideal"] / ideal)) < 2.0
    assert abs(1200 * np.log2(heard["zeng"] / ideal)) > 5.0
