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
