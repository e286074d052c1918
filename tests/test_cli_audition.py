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


def test_the_whole_view_reaches_as_high_as_the_sound_does():
    """A tone under 8 kHz keeps the 0-8 kHz view; noise to 15.5 kHz 40 dB under a loud tone
    (a torch's pops over its roar) raises it to 16 kHz: the kHz bands within 60 dB of the
    loudest are in view."""
    rate = 48000
    rng = np.random.default_rng(0)
    tone = 0.5 * np.sin(2 * np.pi * 440 * np.arange(2 * rate) / rate)
    spectrum = np.fft.rfft(rng.standard_normal(2 * rate))
    spectrum[np.fft.rfftfreq(2 * rate, 1 / rate) > 15500] = 0
    noise = np.fft.irfft(spectrum, 2 * rate)
    noise *= 0.01 * np.sqrt(np.mean(tone**2) / np.mean(noise**2))
    tops = [spectrogram_figure(audio, sample_rate=rate, title="t", notes=[]).axes[0]
            .get_ylim()[1] for audio in (tone, tone + noise)]
    assert tops == [8000.0, 16000.0]


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
