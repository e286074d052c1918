"""The audition spectrogram: a dB colour bar, every note named, a plain title."""

import warnings

import numpy as np

from soundscape.cli.audition import DemoNote, spectrogram_figure


def test_spectrogram_has_a_db_scale_and_names_every_note():
    rate = 8000
    time = np.arange(2 * rate) / rate
    audio = 0.5 * np.sin(2 * np.pi * 440 * time)
    notes = [DemoNote(0.0, 0.9, 261.6, 0.8, "A", pitch="黃鍾"),
             DemoNote(1.0, 0.9, 311.1, 0.8, "B", pitch="黃鍾"),
             DemoNote(1.5, 0.4, None, 0.5, "center")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph warns
        figure = spectrogram_figure(audio, sample_rate=rate, title="編鐘 bianzhong", notes=notes)
        figure.canvas.draw()
    whole, detail, bar = figure.axes
    assert detail.get_title() == "the first 4 s in detail"
    assert [t.get_text() for t in whole.texts] == ["黃鍾 A", "黃鍾 B", "center v=0.5"]
    assert "dB" in bar.get_ylabel()
    ticks = [t.get_text() for t in bar.get_yticklabels()]
    assert ticks[0] == "-90" and ticks[-1] == "0"
    assert whole.get_title() == "編鐘 bianzhong"


def test_the_se_plays_its_scale_named_by_lu_and_hz_and_the_bells_title_names_their_set():
    """The 瑟's audition was labelled in Hz alone; the bells' title did not say whether their
    tones were the tuning's or the Zeng bells' measured ones (--bells zeng)."""
    from soundscape.cli.audition import _bells_said, _note_name, demo_notes
    from soundscape.music.instruments import load_instrument
    from soundscape.music.tuning import default_tuning

    tuning = default_tuning()
    notes = demo_notes(load_instrument("se"), tuning=tuning, gong="黃鍾")
    assert all(n.pitch and tuning.pitch(n.pitch).hz == n.hz for n in notes)
    assert _note_name(notes[5]) == f"{notes[5].pitch} {notes[5].hz:.0f} Hz"
    assert "黃鍾 262 Hz" in {_note_name(n) for n in notes}
    bells = load_instrument("bianzhong")
    assert "Zeng bells measure (--bells zeng)" in _bells_said(bells, "zeng")
    assert "--bells zeng:" in _bells_said(bells, "ideal")
    assert _bells_said(load_instrument("se"), "zeng") == ""
