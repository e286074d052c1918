"""Lines: a standing listener hears each place's notes mixed dry and filtered once per chunk,
as if each note had been heard on its own."""

from __future__ import annotations

from dataclasses import replace

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


def test_long_notes_go_on_lines_even_from_a_place_of_their_own():
    """A note of ``LONG_S`` or more at a place no other note sounds from goes on a line (heard
    whole it was held through all its paths at once); a short one there is heard alone; both
    sound as heard alone."""
    from soundscape.sound.buses import Buses

    short, long = (0.25, (2.0, 30.0, 1.2)), (LONG_S, (-3.0, 40.0, 1.2))
    base = _scene(durations=(0.25,))
    events = [*base.events, *(Event(0.3 + i, duration, "e", None, 0.6, "strike", "c",
                                    position=place)
                              for i, (duration, place) in enumerate((short, long)))]
    perf = Performance.build(events, [], base.sources)
    buses = Buses(perf, NORTH, panner=make_panner("stereo"), surroundings=Surroundings(),
                  sample_rate=FS, seed=3, voice=noise_voice, cache_bytes=0, channels=2,
                  block_frames=FS)
    on_own = {perf.events[i].duration: buses.lined(i)
              for i in range(len(perf.events)) if perf.events[i].position is not None}
    assert on_own == {0.25: False, LONG_S: True}
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


def _places(order):
    """Four places heard in four channels, each with its notes and its FIR per channel:
    ``a`` and ``b`` overlap on channel 1 (stems), ``c`` has a response long enough for a
    larger FFT, and ``d`` has three paths mixed into every channel (``mix``)."""
    rng = np.random.default_rng(11)
    chunk, start = 4096, 3
    gains = rng.uniform(-1.0, 1.0, (3, 4)).astype(np.float32)
    paths = rng.normal(0.0, 0.3, (3, 200)).astype(np.float32)
    made = {"a": (impulse_filter(rng.normal(0.0, 0.3, (2, 300)).astype(np.float32), start,
                                 chunk), 0),
            "b": (impulse_filter(rng.normal(0.0, 0.3, (2, 300)).astype(np.float32), start,
                                 chunk), 1),
            "c": (impulse_filter(rng.normal(0.0, 0.05, (2, 6000)).astype(np.float32), start,
                                 chunk), 2),
            "d": (impulse_filter(paths, start, chunk), 0)}
    made["d"][0].mix = gains
    assert made["c"][0].n_fft > made["a"][0].n_fft == made["d"][0].n_fft
    notes = {place: [(onset, rng.normal(0.0, 1.0, length).astype(np.float32))
                     for onset, length in ((50 + 700 * i, 3000), (2000 + 900 * i, 9000))]
             for i, place in enumerate(order)}
    firs = {place: np.fft.irfft(f.spectrum, f.n_fft)[:, :f.taps] for place, (f, _) in made.items()}
    firs["d"] = np.einsum("pc,pt->ct", gains.astype(float), paths.astype(float))
    want = np.zeros((20000, 4))
    for place, (_, column) in made.items():
        dry = np.zeros(16000)
        for onset, mono in notes[place]:
            dry[onset:onset + len(mono)] += mono
        for c, fir in enumerate(firs[place]):
            echo = np.convolve(dry, fir)
            want[start:start + len(echo), column + c] += echo[:20000 - start]
    lines = Lines(None, None, 4, make_filter=lambda point, face: made[point][0], chunk=chunk)
    for place in order:
        for onset, mono in notes[place]:
            lines.add(onset, mono, place, None, made[place][1])
    return _take_all(lines, lines.extent), want


@pytest.mark.parametrize("order", ["dacb", "cbad", "abcd"])
def test_lines_of_two_ffts_stems_and_mixed_paths_sum_as_their_firs(order):
    """However the lines fall (the first FFT size in every channel or in some, three lines
    in one FFT batch, channels shared by two lines' stems), each channel is the sum of every
    line's FIR of its notes (float32 rounding)."""
    out, want = _places(order)
    n = min(len(out), len(want))
    assert n > 16000
    assert np.abs(out[:n] - want[:n]).max() < 2e-6 * np.abs(want).max()


def test_a_silent_line_sounds_exact_zeros():
    """A chunk whose lines hold only silent notes is +0.0 in every sample: the filtered
    zeros' signs (a negative gain times +0 is −0) do not reach the output."""
    rng = np.random.default_rng(5)
    fir = rng.normal(0.0, 0.3, (2, 300)).astype(np.float32)
    lines = Lines(None, None, 2, make_filter=lambda point, face: impulse_filter(fir, 0, 4096),
                  chunk=4096)
    lines.add(0, np.zeros(30000, np.float32), "here", None, 0)
    out = _take_all(lines, lines.extent)
    assert out.shape[0] > 30000 and not out.any() and not np.signbit(out).any()


def _counting(monkeypatch):
    """scipy.fft's rfft and irfft, counted: the rows of each call."""
    import scipy.fft
    counts: dict[str, list[int]] = {"rfft": [], "irfft": []}
    for name in counts:
        own = getattr(scipy.fft, name)

        def counted(x, *args, _own=own, _name=name, **kwargs):
            counts[_name].append(x.shape[1] if kwargs.get("axis") == 0 else x.shape[0])
            return _own(x, *args, **kwargs)
        monkeypatch.setattr(scipy.fft, name, counted)
    return counts


def _two_places(tight):
    """Two places sounding in every chunk of 4096 frames (two lines, stereo), their notes
    added in time order: all before the first chunk, or (``tight``) each only before the
    chunk it starts in is heard, as a render whose guard reaches one chunk ahead."""
    rng = np.random.default_rng(13)
    chunk = 4096
    made = {place: impulse_filter(rng.normal(0.0, 0.3, (2, 300)).astype(np.float32), 4, chunk)
            for place in "ab"}
    notes = sorted((onset, place, rng.normal(0.0, 1.0, 1500).astype(np.float32))
                   for place in "ab" for onset in range(0, 40000, 1000 + 300 * (place == "b")))
    lines = Lines(None, None, 2, make_filter=lambda point, face: made[point], chunk=chunk)
    out = []
    for onset, place, mono in notes:
        while tight and onset >= lines.next_chunk + lines.next_size():
            out.append(lines.chunk())
        lines.add(onset, mono, place, None, 0)
    return lines, out, notes


def test_two_chunks_are_heard_with_one_fft_call_each_way_and_the_same_bits(monkeypatch):
    """Past the first chunk's pieces, a chunk whose notes are all in is transformed with the
    one before: half the calls, stereo's inverse FFTs four rows at once, and every bit as
    when each chunk is heard alone."""
    lines, out, _ = _two_places(tight=True)
    alone = np.concatenate([*out, _take_all(lines, lines.extent)])
    lines, out, _ = _two_places(tight=False)
    counts = _counting(monkeypatch)
    assert not out
    pieces = len(lines._first)
    chunks = []
    while lines.next_chunk < lines.extent:
        chunks.append(lines.chunk())
    # each its own array, not a strided view of both (numpy reads those a frame at a time)
    assert all(chunk.flags.c_contiguous for chunk in chunks)
    together = np.concatenate(chunks)
    assert np.array_equal(together, alone)
    assert not np.signbit(together[together == 0.0]).any()  # no −0 (summed from zero)
    whole = len(together) // 4096 - 1  # whole chunks after the first one's pieces
    assert whole >= 8
    # each pair of whole chunks: one forward call of 2 + 2 lines, one inverse of 2 + 2
    # channels (an odd last one alone); the first chunk's pieces one by one
    assert counts["irfft"] == [2] * pieces + [4] * (whole // 2) + [2] * (whole % 2)
    assert len(counts["rfft"]) == len(counts["irfft"])


def test_a_late_note_into_the_chunk_heard_ahead_has_it_heard_again():
    """A note added after its chunk was heard with the one before (out of time order) is
    heard all the same: the bits of hearing each chunk in turn with every note in."""
    late = (2 * 4096 + 500, "a", np.full(700, 0.25, np.float32))  # in the third chunk
    want_lines, _, _ = _two_places(tight=False)
    want_lines.add(late[0], late[2], late[1], None, 0)
    want = _take_all(want_lines, want_lines.extent)
    lines, _, _ = _two_places(tight=False)
    out = [lines.chunk() for _ in range(len(lines._first) + 1)]  # the first whole one
    assert lines._kept  # the next heard with it
    lines.add(late[0], late[2], late[1], None, 0)
    assert not lines._kept
    got = np.concatenate([*out, _take_all(lines, want_lines.extent)])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("ahead", [False, True])
def test_a_chunk_no_line_sounds_in_is_none_and_no_zeros_are_made(ahead):
    """Two notes twelve chunks apart: the chunks between them, where no line sounds, come as
    None from ``sounding_chunk`` (``chunk`` gives their zeros), whether the second note is
    in from the start (``ahead``: chunks are heard two at a time) or added just before its
    chunk is heard; the chunks that sound are the same samples either way."""
    fir = impulse_filter(np.full((2, 64), 0.1, np.float32), 4, 4096)
    late = 12 * 4096 + 7

    def lines_with_first_note():
        lines = Lines(None, None, 2, make_filter=lambda point, face: fir, chunk=4096)
        lines.add(100, np.ones(900, np.float32), "a", None, 0)
        if ahead:
            lines.add(late, np.ones(900, np.float32), "a", None, 0)
        return lines

    want, got = lines_with_first_note(), lines_with_first_note()
    nones, chunks = 0, []
    while got.next_chunk < 14 * 4096:
        if not ahead and got.next_chunk <= late < got.next_chunk + got.next_size():
            for lines in (want, got):
                lines.add(late, np.ones(900, np.float32), "a", None, 0)
        size = got.next_size()
        expected, chunk = want.chunk(), got.sounding_chunk()
        if chunk is None:
            nones += 1
            assert len(expected) == size and not expected.any()
            chunk = np.zeros_like(expected)
        assert np.array_equal(chunk, expected)
        chunks.append(chunk)
    assert nones >= 8
    assert np.concatenate(chunks)[late:late + 900].any()


def test_a_place_whose_spectrum_was_dropped_is_heard_again_from_its_kept_response(monkeypatch):
    """With room for one place's spectrum, two places that take turns, each falling silent for
    longer than a chunk (its line ends), come back from their kept impulse responses (an FFT,
    not the response made again), to the bit."""
    from soundscape.sound import lines

    turns = Performance.build(
        [replace(e, time=e.time + 2.5 * (i // 2)) for i, e in enumerate(_scene().events[:8])],
        [], _scene().sources)
    made = []
    plain = lines._Impulse.__init__

    def counted(self, *args):
        made.append(args[1])
        plain(self, *args)

    whole = _render(turns, NORTH)
    monkeypatch.setattr(lines._Impulse, "__init__", counted)
    monkeypatch.setattr(lines, "FILTER_BYTES", 600 << 10)  # one stereo spectrum (512 KiB)
    squeezed = _render(turns, NORTH)
    assert sorted(made) == [(-10.0, 4.0, 1.5), (7.0, 9.0, 1.5)]  # each place's once
    assert np.array_equal(squeezed, whole)
    monkeypatch.setattr(lines, "IMPULSE_BYTES", 0)  # none kept: made again as they return
    made.clear()
    assert np.array_equal(_render(turns, NORTH), whole) and len(made) >= 6


def test_lines_past_the_folded_bound_fold_their_filter_each_chunk_to_the_same_bits(monkeypatch):
    """In hoa3 a place's few paths are folded into 16 channels' filters, 16 rows a line. With
    room for one line's, four places sounding together keep one folded between chunks and
    fold the others' again each chunk they are heard in: never more than the bound kept,
    every bit as when all are kept."""
    from soundscape.sound import lines

    points = [(-10.0, 4.0, 1.5), (7.0, 9.0, 1.5), (3.0, -6.0, 1.5), (-4.0, 12.0, 1.5)]
    sources = {f"p{i}": Source(f"p{i}", "bianzhong", "鐘", "bells", "west", point)
               for i, point in enumerate(points)}
    events = [Event(0.05 + 0.07 * i, 0.8, f"p{i % 4}", None, 0.5 + 0.01 * (i % 5), "strike",
                    "c") for i in range(40)]
    four = Performance.build(events, [], sources)
    folds, kept = [], []
    plain_fold, plain_folded = lines._folded, lines.Lines.folded

    def counted_fold(spectrum, mix, reached):
        folds.append(mix is not None)
        return plain_fold(spectrum, mix, reached)

    def watched(self, line):
        got = plain_folded(self, line)
        kept.append(self._folded_bytes)
        return got

    monkeypatch.setattr(lines, "_folded", counted_fold)
    monkeypatch.setattr(lines.Lines, "folded", watched)
    whole = _render(four, NORTH, "hoa3")
    all_kept = sum(folds)
    assert all_kept >= 4 and max(kept) >= 4 * 16 * (65536 // 2 + 1) * 8  # every line's kept
    bound = 16 * (65536 // 2 + 1) * 8  # one line's 16 rows at 65 536 points
    monkeypatch.setattr(lines, "FOLDED_BYTES", bound)
    folds.clear()
    kept.clear()
    squeezed = _render(four, NORTH, "hoa3")
    assert np.array_equal(squeezed, whole)
    assert max(kept) <= bound and sum(folds) > 2 * all_kept  # folded again, chunk by chunk


@pytest.mark.parametrize("paths", [1, 4, 15])
def test_a_folded_filter_is_each_channels_paths_summed_by_their_gains(paths):
    """The real product over (re, im) pairs is each channel's Σ gain × path spectrum."""
    from soundscape.sound.lines import _folded, _reached

    rng = np.random.default_rng(paths)
    spectrum = (rng.normal(size=(paths, 4097)) + 1j * rng.normal(size=(paths, 4097))
                ).astype(np.complex64)
    mix = rng.normal(size=(paths, 16)).astype(np.float32)
    mix[:, [3, 9]] = 0.0  # channels no path reaches (a loudspeaker layout's panning)
    folded = _folded(spectrum, mix, _reached(mix))
    want = np.einsum("pc,pk->ck", mix.astype(np.float64), spectrum.astype(np.complex128))
    reached = [c for c in range(16) if c not in (3, 9)]
    assert folded.dtype == np.complex64 and folded.shape == (14, 4097)
    assert np.abs(folded - want[reached]).max() < 1e-5 * np.abs(want).max()
    # a row's sums do not depend on the rows beside it: the bits of the full fold's rows
    full = (mix.T @ spectrum.view(np.float32)).view(np.complex64)
    assert np.array_equal(folded, full[reached])
    assert _folded(spectrum, None, np.arange(paths)) is spectrum  # per channel: itself


def test_channels_a_line_does_not_reach_are_not_multiplied_and_sound_exact_zeros(monkeypatch):
    """In 5.1 no path reaches the LFE, and a place ahead reaches few of the others: those
    channels' products are not made (a line's multiplications are its reached channels'),
    the output is the bits of the render that multiplied every channel, and a channel no
    line reaches is +0.0 in every sample."""
    from soundscape.sound import lines as lines_module

    perf = _scene()
    plain = _render(perf, NORTH, "5.1")
    reached = []
    own_reached = lines_module._reached
    monkeypatch.setattr(lines_module, "_reached",
                        lambda mix: reached.append(own_reached(mix)) or reached[-1])
    again = _render(perf, NORTH, "5.1")
    assert np.array_equal(plain, again)
    assert reached and all(3 not in found for found in reached)  # never the LFE
    assert any(len(found) < 5 for found in reached)  # a place that few channels hear
    assert not plain[:, 3].any() and not np.signbit(plain[:, 3]).any()
    # every channel multiplied: the fold's rows and the products as before this change
    monkeypatch.setattr(lines_module, "_reached", lambda mix: np.arange(mix.shape[1]))
    assert np.array_equal(_render(perf, NORTH, "5.1"), plain)


def test_an_impulse_filters_rows_of_zeros_are_not_multiplied_and_sound_exact_zeros():
    """The court's tail has no LFE: its impulse filter's row of zeros is left out of the
    products (``sounding_rows``), the channel is +0.0 in every sample, and the others have
    the bits they have with every row multiplied."""
    rng = np.random.default_rng(17)
    rows = rng.normal(0.0, 0.3, (3, 300)).astype(np.float32)
    rows[1] = 0.0
    made = impulse_filter(rows, 2, 4096)
    assert list(made.sounding_rows) == [0, 2]

    def render(sounding_rows):
        made.sounding_rows = sounding_rows
        lines = Lines(None, None, 3, make_filter=lambda point, face: made, chunk=4096)
        for onset in range(0, 20000, 1700):
            lines.add(onset, rng.normal(0.0, 1.0, 2500).astype(np.float32), "here", None, 0)
        return _take_all(lines, lines.extent)

    state = rng.bit_generator.state
    skipped = render(np.array([0, 2]))
    rng.bit_generator.state = state
    every = render(np.arange(3))
    assert skipped.shape[0] > 20000 and skipped[:, [0, 2]].any()
    assert np.array_equal(skipped, every)
    assert not skipped[:, 1].any() and not np.signbit(skipped[:, 1]).any()
