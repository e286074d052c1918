"""Lines: a standing listener hears each place's notes mixed dry and filtered once per chunk,
as if each note had been heard on its own."""

from __future__ import annotations

import numpy as np
import pytest

from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import ListenerPath
from soundscape.sound.buses import LONG_S
from soundscape.sound.lines import CHUNK, Lines, impulse_filter
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks
from tests.sound.test_render import FS, NORTH, noise_voice


def _scene(durations=(0.25,)):
    """Two places, notes overlapping on each, some across chunk boundaries."""
    sources = {"w": Source("w", "bianzhong", "鐘", "bells", "west", (-10.0, 4.0, 1.5)),
               "e": Source("e", "jiangu", "鼓", "drum", "east", (7.0, 9.0, 1.5),
                           struck_face=(-1.0, 0.0, 0.0))}
    events = [Event(0.05 + 0.11 * i, durations[i % len(durations)], "we"[i % 2], None,
                    0.5 + 0.01 * (i % 7), "strike", "c") for i in range(24)]
    return Performance.build(events, [], sources)


def _render(perf, listener, layout="stereo", block_frames=FS):
    return np.concatenate(list(render_blocks(
        perf, listener=listener, panner=make_panner(layout), sample_rate=FS, seed=3,
        voice=noise_voice, surroundings=Surroundings(), block_frames=block_frames)))


@pytest.mark.parametrize("layout", ["stereo", "binaural", "hoa3"])
def test_lines_sound_as_each_note_heard_alone(layout):
    """A path that stands still is heard note by note; the standing listener by lines."""
    still = ListenerPath(((0.0, NORTH.position, NORTH.facing),))
    lined, alone = _render(_scene(), NORTH, layout), _render(_scene(), still, layout)
    n = min(len(lined), len(alone))
    assert n > CHUNK  # the notes cross chunk boundaries
    assert _error_db(lined[:n], alone[:n], 0, 16000) < -55
    # only the top octave's fractional delays differ (a sinc cut, against a circular one)
    assert _error_db(lined[:n], alone[:n], 0, FS / 2) < -30
    assert np.abs(alone[n:]).max(initial=0.0) < 1e-3 * np.abs(alone).max()


def _error_db(lined, alone, low_hz, high_hz):
    """Energy of the difference in a band, against the note-by-note render's, in dB."""
    freqs = np.fft.rfftfreq(len(alone), 1 / FS)
    band = (freqs >= low_hz) & (freqs <= high_hz)
    error = np.abs(np.fft.rfft(lined - alone, axis=0)[band]) ** 2
    signal = np.abs(np.fft.rfft(alone, axis=0)[band]) ** 2
    return 10 * np.log10(error.sum() / signal.sum())


def test_long_notes_are_heard_whole_and_the_rest_lined():
    perf = _scene(durations=(0.25, LONG_S))
    still = ListenerPath(((0.0, NORTH.position, NORTH.facing),))
    lined, alone = _render(perf, NORTH), _render(perf, still)
    n = min(len(lined), len(alone))
    assert _error_db(lined[:n], alone[:n], 0, 16000) < -55


def test_lines_do_not_depend_on_the_block_size():
    assert np.array_equal(_render(_scene(), NORTH, block_frames=4801),
                          _render(_scene(), NORTH, block_frames=3 * FS))


def _take_all(lines, until):
    out = []
    while lines.next_chunk < until:
        out.append(lines.chunk())
    return np.concatenate(out)


def test_a_line_filters_the_sum_of_its_notes_however_they_come():
    """Notes overlapping, one across several chunks, one added after a later one, one all
    zeros: the line's output is the FIR of their sum, sample for sample (float32 rounding),
    on its own columns; the silent note changes no bit."""
    rng = np.random.default_rng(7)
    chunk, start = 4096, 5
    fir = rng.normal(0.0, 0.3, (2, 300)).astype(np.float32)
    notes = [(100, rng.normal(0.0, 1.0, 900)), (600, rng.normal(0.0, 1.0, 9000)),
             (5000, rng.normal(0.0, 1.0, 700)), (40, rng.normal(0.0, 1.0, 50)),
             (3000, np.zeros(2000)), (12000, rng.normal(0.0, 1.0, 3))]
    dry = np.zeros(16000)
    for onset, mono in notes:
        dry[onset:onset + len(mono)] += mono.astype(np.float32)

    def render(kept):
        lines = Lines(None, None, 3, make_filter=lambda point, face: impulse_filter(
            fir, start, chunk), chunk=chunk)
        for onset, mono in kept:
            lines.add(onset, mono.astype(np.float32), "here", None, 1)
        return _take_all(lines, lines.extent)

    out = render(notes)
    assert not out[:, 0].any()
    for c in range(2):
        want = np.convolve(dry, fir[c].astype(float))
        n = min(len(want), len(out) - start)
        assert n > 12000 + 3 + 299 - 1  # the last note's last echo
        error = np.abs(out[start:start + n, 1 + c] - want[:n])
        assert np.max(error, initial=np.abs(out[:start, 1 + c]).max()) < 1e-5 * np.abs(want).max()
    assert np.array_equal(out, render([note for note in notes if note[1].any()]))
