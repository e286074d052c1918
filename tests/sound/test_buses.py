"""Buses: notes made at a lower rate land where full-rate notes land, at the same level."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest
from scipy import signal

from soundscape.music.instruments import list_instruments, load_instrument
from soundscape.music.tuning import Tuning, parse_name
from soundscape.performance import Event, Performance, Source
from soundscape.sound.buses import Buses, Upsampler, _Made, sounding, summed
from soundscape.sound.notes import SynthVoice
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks
from soundscape.sound.synth import render_note
from tests.sound.test_render import FS, NORTH

TONE_HZ = 1000.0


def test_upsampler_streams_in_any_blocks_as_in_one():
    rng = np.random.default_rng(3)
    low = rng.normal(0.0, 0.3, (4000, 2)).astype(np.float32)
    whole = Upsampler(3, 2)(low)
    up = Upsampler(3, 2)
    cuts = [0, 1, 700, 701, 2333, 4000]
    pieces = np.concatenate([up(low[a:b]) for a, b in itertools.pairwise(cuts)])
    assert whole.shape == (12000, 2)
    assert np.allclose(pieces, whole, atol=1e-6)


def test_an_upsampler_brings_up_what_it_is_fed_a_piece_at_a_time():
    """A chunk fed (``feed``) comes up ``PIECE`` input frames at a time (``next``), each the
    bits of ``sounding`` on that piece in turn; silence fed as a count comes up as None."""
    from soundscape.sound.buses import PIECE

    rng = np.random.default_rng(4)
    chunk = rng.normal(0.0, 0.3, (2 * PIECE + 100, 16)).astype(np.float32)
    fed, by_hand = Upsampler(3, 16), Upsampler(3, 16)
    fed.feed(chunk)
    fed.feed(PIECE + 5)
    made = []
    while fed.fed:
        made.append(fed.next())
    assert [frames for _, frames in made] == [3 * PIECE, 3 * PIECE, 300, 3 * PIECE, 15]
    expected = [by_hand.sounding(piece) for piece in
                (chunk[:PIECE], chunk[PIECE:2 * PIECE], chunk[2 * PIECE:], PIECE, 5)]
    for (up, _), want in zip(made[:4], expected[:4], strict=True):
        assert up is not None and np.array_equal(up, want)  # the last sounds: the ringing
    assert made[4][0] is None and expected[4] is None


@pytest.mark.parametrize("factor", [2, 3])
def test_upsampler_is_the_polyphase_filter_it_states(factor):
    """Sample for sample scipy's upfirdn with resample_poly's Kaiser taps: the same causal
    filter, so the same lag (float32 rounding apart)."""
    low = np.random.default_rng(4).normal(0.0, 1.0, (1000, 2)).astype(np.float32)
    taps = factor * signal.firwin(20 * factor + 1, 1.0 / factor, window=("kaiser", 5.0))
    want = signal.upfirdn(taps, low.astype(float), up=factor, axis=0)[:len(low) * factor]
    got = Upsampler(factor, 2)(low)
    assert np.max(np.abs(got - want)) < 2e-5


@pytest.mark.parametrize(("factor", "channels", "silent"),
                         [(2, 1, 1), (3, 2, 1), (6, 2, 1), (3, 4, 1), (2, 6, 1), (6, 12, 1),
                          (3, 12, 9)])
def test_upsampler_streams_odd_blocks_and_silent_columns_as_the_polyphase_filter(
        factor, channels, silent):
    """Blocks shorter than its history, of odd sizes, a silent block between and silent
    columns (a 7.1.4 bus's LFE; most of a master's objects): still the causal filter sample
    for sample, history carried across blocks; a silent column gives +0.0 in every sample,
    and the others the bits they have without it."""
    rng = np.random.default_rng(5)
    low = rng.normal(0.0, 1.0, (3000, channels)).astype(np.float32)
    low[1000:1500] = 0.0  # a silent stretch across blocks
    low[:, channels - silent:] = 0.0  # silent columns
    taps = factor * signal.firwin(20 * factor + 1, 1.0 / factor, window=("kaiser", 5.0))
    want = signal.upfirdn(taps, low.astype(float), up=factor, axis=0)[:len(low) * factor]
    up = Upsampler(factor, channels)
    cuts = [0, 1, 8, 27, 60, 1001, 1010, 1499, 2345, 3000]
    got = np.concatenate([up(low[a:b]) for a, b in itertools.pairwise(cuts)])
    assert got.shape == (len(low) * factor, channels) and got.dtype == np.float32
    assert np.max(np.abs(got - want)) < 2e-5
    quiet = got[:, channels - silent:]
    assert not quiet.any() and not np.signbit(quiet).any()
    if channels > silent:
        alone = Upsampler(factor, channels - silent)
        without = np.concatenate([alone(low[a:b, :channels - silent])
                                  for a, b in itertools.pairwise(cuts)])
        assert np.array_equal(got[:, :channels - silent], without)


@pytest.mark.parametrize("quiet", [[3], [0, 5], [1, 2, 4, 6, 7, 8, 10]])
def test_sounding_finds_columns_that_start_late_and_those_that_never_do(quiet):
    """Columns silent at the start of a block are read to its end (one by one when few, all
    at once when many): one that sounds only in its last frame sounds, a silent one does
    not."""
    block = np.random.default_rng(7).normal(0.0, 1.0, (8192, 12)).astype(np.float32)
    block[:, quiet] = 0.0
    block[-1, quiet[0]] = -0.0  # a signed zero is silence
    late = quiet[-1]
    block[-1, late] = 1e-30
    want = np.ones(12, dtype=bool)
    want[quiet] = False
    want[late] = True
    assert np.array_equal(sounding(block), want)


@pytest.mark.parametrize(("silent", "multiplied"), [(1, 12), (5, 12), (7, 5), (11, 1)])
def test_an_upsampler_multiplies_every_column_unless_most_are_silent(
        monkeypatch, silent, multiplied):
    """A few silent columns (7.1.4's LFE) are multiplied with the rest, their zeros cheaper
    than placing the others' products into a block of zeros; with most silent (a master's
    objects), only those that sound are."""
    widths = []
    plain = Upsampler._product

    def watched(self, history, block):
        widths.append(block.shape[1])
        return plain(self, history, block)
    monkeypatch.setattr(Upsampler, "_product", watched)
    low = np.random.default_rng(6).normal(0.0, 1.0, (4096, 12)).astype(np.float32)
    low[:, 12 - silent:] = 0.0
    Upsampler(3, 12)(low)
    assert widths == [multiplied]


def test_upsampler_keeps_a_tone_and_delays_it_by_its_stated_lag():
    low_rate, factor = 16000, 3
    t = np.arange(8000) / low_rate
    low = np.sin(2 * np.pi * TONE_HZ * t).astype(np.float32)[:, None]
    out = Upsampler(factor, 1)(low)[:, 0]
    t_out = np.arange(len(out)) / (low_rate * factor) - Upsampler.delay / low_rate
    expected = np.sin(2 * np.pi * TONE_HZ * t_out)
    middle = slice(2000, 20000)
    assert np.max(np.abs(out[middle] - expected[middle])) < 2e-3  # gain 1, lag exact
    spectrum = np.abs(np.fft.rfft(out[middle] * np.hanning(18000)))
    freqs = np.fft.rfftfreq(18000, 1 / (low_rate * factor))
    image = spectrum[(freqs > 8500)].max()  # the images at 15 and 17 kHz are filtered off
    assert 20 * np.log10(image / spectrum.max()) < -40


def test_frames_made_are_handed_out_as_views_of_their_pieces():
    """A block inside one piece is a view of that piece; one across two is a view of each
    (nothing is glued or copied); together they hand out every frame once, in order."""
    rng = np.random.default_rng(6)
    pieces = [rng.normal(size=(n, 2)).astype(np.float32) for n in (100, 100, 50)]
    whole = np.concatenate(pieces)
    made = _Made()
    made.append(pieces[0])
    first = made.parts(60)
    assert [(at, len(rows)) for at, rows in first] == [(0, 60)]
    assert np.shares_memory(first[0][1], pieces[0]) and np.array_equal(first[0][1], whole[:60])
    made.append(pieces[1])
    across = made.parts(60)  # 40 of the first, 20 of the second
    assert [(at, len(rows)) for at, rows in across] == [(0, 40), (40, 20)]
    assert np.shares_memory(across[0][1], pieces[0])
    assert np.shares_memory(across[1][1], pieces[1]) and len(made) == 80
    assert np.array_equal(np.concatenate([rows for _, rows in across]), whole[60:120])
    made.append(pieces[2])
    rest = made.parts(130)  # 80 of the second piece, all of the third
    assert np.array_equal(np.concatenate([rows for _, rows in rest]), whole[120:])
    assert len(made) == 0


class _Taker:
    """A bus that always has frames to make: a block of ``value``, and the thread it ran on."""

    def __init__(self, value: float) -> None:
        self.value = value
        self.threads: list[str] = []

    def busy(self, frames: int) -> bool:
        return True

    def take(self, frames: int) -> np.ndarray:
        self.threads.append(threading.current_thread().name)
        return np.full((frames, 2), self.value, np.float32)


def test_busy_buses_are_made_on_two_threads_one_of_them_the_calling_one():
    """Four busy takers: each made once a block, by the caller or one other thread (one
    hand-over a block, two cores' worth of threads), and the sum is theirs, in order."""
    takers = [_Taker(1.0), _Taker(2.0), _Taker(4.0), _Taker(8.0)]
    buses = _buses(takers)
    try:
        for _ in range(3):
            assert np.array_equal(buses.take(10), np.full((10, 2), 15.0, np.float32))
    finally:
        buses.close()
    assert all(len(taker.threads) == 3 for taker in takers)
    threads = {name for taker in takers for name in taker.threads}
    assert threading.current_thread().name in threads and len(threads) <= 2


class _Slow(_Taker):
    """A taker whose block waits until the ``others`` have made theirs (30 s at most)."""

    def __init__(self, value: float, others: list[_Taker]) -> None:
        super().__init__(value)
        self.others, self.waited_out = others, False

    def take(self, frames: int) -> np.ndarray:
        pause = threading.Event()  # never set: a pause between looks
        for _ in range(3000):
            if all(other.threads for other in self.others):
                break
            pause.wait(0.01)
        else:
            self.waited_out = True
        return super().take(frames)


def test_a_slow_bus_leaves_the_others_to_the_other_thread():
    """Whichever thread makes a slow bus, the other makes every other busy one meanwhile
    (a fixed half each kept the render's thread waiting on its helper)."""
    others = [_Taker(2.0), _Taker(4.0), _Taker(8.0)]
    for first in range(4):  # the slow one first, second, ... in the buses' order
        for other in others:
            other.threads = []
        slow = _Slow(1.0, others)
        buses = _buses([*others[:first], slow, *others[first:]])
        try:
            assert np.array_equal(buses.take(10), np.full((10, 2), 15.0, np.float32))
        finally:
            buses.close()
        assert not slow.waited_out, first


def _buses(takers: list[_Taker]) -> Buses:
    """Buses of three buses and a tail (only what ``take`` needs)."""
    buses = Buses.__new__(Buses)
    buses.by_rate = {48000: takers[0], 24000: takers[1], 16000: takers[2]}
    buses.tail, buses._pool, buses.channels = takers[3], None, 2
    return buses


class _ToneVoice:
    """A 1 kHz burst; with ``factor`` > 1 it asks for notes made at a lower rate."""

    def __init__(self, factor: int) -> None:
        self.factor = factor
        self.rates: list[int] = []

    def __call__(self, event, source, *, sample_rate, rng):
        self.rates.append(sample_rate)
        n = round(0.2 * sample_rate)
        return np.sin(2 * np.pi * TONE_HZ * np.arange(n) / sample_rate) * np.hanning(n)

    def made_at(self, source, sample_rate):
        return sample_rate // self.factor


def _render(voice, block_frames=FS):
    sources = {"s": Source("s", "bianzhong", "鐘", "bells", "west", (-8.0, 6.0, 1.5))}
    events = [Event(0.3, 0.2, "s", None, 0.9, "strike", "c"),
              Event(1.7, 0.2, "s", None, 0.8, "strike", "c")]
    perf = Performance.build(events, [], sources)
    return np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=voice, surroundings=Surroundings(), block_frames=block_frames)))


def test_low_buses_and_the_courts_tail_bring_their_chunks_up_a_piece_at_a_time(monkeypatch):
    """Chunks longer than ``PIECE`` are fed whole and brought up in pieces, by the buses and
    by the court's tail (its own upsampler), as the blocks need them."""
    from soundscape.site.courtyard import load_site
    from soundscape.sound import buses
    from soundscape.sound.court import load_court

    fed, brought = [], []
    feed, sounding = buses.Upsampler.feed, buses.Upsampler.sounding
    monkeypatch.setattr(buses.Upsampler, "feed", lambda self, block: fed.append(
        (self.factor, block if isinstance(block, int) else len(block))) or feed(self, block))
    monkeypatch.setattr(buses.Upsampler, "sounding", lambda self, block: brought.append(
        block if isinstance(block, int) else len(block)) or sounding(self, block))
    sources = {"s": Source("s", "bianzhong", "鐘", "bells", "west", (-8.0, 6.0, 1.5))}
    perf = Performance.build([Event(0.3 + 0.4 * i, 0.2, "s", None, 0.9, "strike", "c")
                              for i in range(8)], [], sources)
    out = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=_ToneVoice(3), block_frames=FS,
        surroundings=Surroundings(court=load_court(load_site())))))
    assert out.any()
    factors = {factor for factor, frames in fed if frames > buses.PIECE}
    assert 3 in factors and max(factors) > 3  # the bus at a third, and the tail lower still
    assert max(brought) == buses.PIECE


def _onset_ms(channel):
    envelope = np.abs(signal.hilbert(channel))
    return 1000 * np.argmax(envelope > 0.5 * envelope.max()) / FS


def test_a_low_rate_note_lands_where_and_as_loud_as_a_full_rate_one():
    full_voice, low_voice = _ToneVoice(1), _ToneVoice(3)
    full, low = _render(full_voice), _render(low_voice)
    assert set(full_voice.rates) == {FS} and set(low_voice.rates) == {FS // 3}
    for ch in range(2):
        first = slice(0, FS)  # the first note only
        assert abs(_onset_ms(low[first, ch]) - _onset_ms(full[first, ch])) < 0.1
        level = 10 * np.log10(np.sum(low[:, ch] ** 2) / np.sum(full[:, ch] ** 2))
        assert abs(level) < 0.1
    n = min(len(low), len(full))  # onsets on both grids: the same wave, sample by sample
    assert np.max(np.abs(low[:n] - full[:n])) < 0.01 * np.max(np.abs(full))


@pytest.mark.parametrize("block_frames", [4801, 3 * FS])
def test_a_low_rate_bus_gives_the_same_samples_whatever_the_blocks(block_frames):
    assert np.array_equal(_render(_ToneVoice(3), block_frames), _render(_ToneVoice(3)))


@pytest.mark.parametrize(("instrument", "sample_rate", "rate"), [
    ("ambience", 48000, 16000), ("voice", 48000, 24000), ("se", 48000, 48000),
    ("ambience", 44100, 22050), ("voice", 96000, 24000), ("bianzhong", 48000, 24000),
    ("jiangu", 44100, 14700), ("jiangu", 48000, 12000)])
def test_models_that_need_less_are_made_at_a_whole_fraction_of_the_rate(
        instrument, sample_rate, rate):
    source = Source("x", instrument, "x", "x", "x", (0.0, 0.0, 0.0))
    assert SynthVoice().made_at(source, sample_rate) == rate


@pytest.mark.parametrize("instrument", [
    i for i in list_instruments() if load_instrument(i).working_hz is not None])
def test_an_instrument_made_at_a_lower_rate_holds_next_to_nothing_above_half_of_it(instrument):
    """Its ``working_hz`` is a claim about its notes: at 48 kHz, at most −45 dB of a note's
    energy lies above ``working_hz / 2``, for every member of a set (else its own pitch, else
    both ends of its range), every articulation, soft and hard."""
    found = load_instrument(instrument)
    tuning = Tuning.sanfen_sunyi()
    if found.pitches:
        pitches = [(tuning.hz_of(*parse_name(name)), name) for name in found.pitches]
    elif found.default_hz:
        pitches = [(found.default_hz, None)]
    else:
        pitches = [(hz, None) for hz in found.range_hz]
    # A bell's side stroke is a B stroke of another bell of the set (tested as B).
    articulations = [a for a in found.articulations if a != "side"]
    for (hz, name), articulation, velocity in itertools.product(
            pitches, articulations, (0.3, 1.0)):
        x = render_note(found, hz=hz, velocity=velocity, duration=0.5, articulation=articulation,
                        sample_rate=FS, rng=np.random.default_rng(0), pitch=name)
        power = np.abs(np.fft.rfft(x)) ** 2
        above = power[np.fft.rfftfreq(len(x), 1 / FS) > found.working_hz / 2].sum()
        assert 10 * np.log10(above / power.sum()) < -45.0, (name or hz, articulation, velocity)


def _into_zeros(streams, frames, channels):
    """The sum as it was made: each stream's parts added, in order, into a block of zeros."""
    out = np.zeros((frames, channels), np.float32)
    for stream in streams:
        for at, rows in stream:
            out[at:at + len(rows)] += rows
    return out


@pytest.mark.parametrize("spans", [
    (((0, 100),), ((0, 100),)),  # one piece each
    (((0, 37), (37, 100)), ((0, 81), (81, 100))),  # pieces that meet at other frames
    (((0, 37), (37, 100)), ((0, 37), (37, 100))),  # at the same frames
    (((0, 100),), ((10, 50),)),  # the second with silent frames (gaps)
    (((20, 100),), ((0, 100),)),  # the first with a gap
    (((0, 30), (60, 100)), ((0, 100),)),  # a silent piece in the middle of the first
])
def test_streams_are_summed_in_one_pass_to_the_bits_of_adding_them_into_zeros(spans):
    """Buses' streams of parts (views of pieces that meet anywhere, silent gaps skipped) sum to
    the same bits as adding each into a block of zeros in order (float32 sums do not
    associate: the order is kept), in a new array that shares no memory with a part."""
    rng = np.random.default_rng(7)
    streams = [[(a, (rng.normal(size=(b - a, 2)) * 10.0 ** rng.integers(-4, 4, (1, 2)))
                 .astype(np.float32)) for a, b in stream]
               for stream in (*spans, ((0, 64), (64, 100)))]  # a third after the two first
    got = summed(streams, 100, 2)
    assert np.array_equal(got, _into_zeros(streams, 100, 2))
    assert not any(np.shares_memory(got, rows) for stream in streams for _, rows in stream)
    alone = summed(streams[:1], 100, 2)
    assert np.array_equal(alone, _into_zeros(streams[:1], 100, 2))
    assert not np.shares_memory(alone, streams[0][0][1])


def test_streams_with_nothing_sounding_sum_to_zeros():
    assert np.array_equal(summed([[], []], 30, 3), np.zeros((30, 3), np.float32))


def test_silent_pieces_are_handed_out_as_gaps_not_zeros():
    """A silent piece (None) takes its frames but gives no part."""
    made = _Made()
    piece = np.ones((50, 2), np.float32)
    made.append(piece)
    made.append(None, 40)
    made.append(2 * piece)
    parts = made.parts(120)  # 50 sounding, 40 silent, 30 sounding
    assert [(at, len(rows)) for at, rows in parts] == [(0, 50), (90, 30)]
    assert np.shares_memory(parts[0][1], piece)  # a view, not a copy
    assert len(made) == 20
    rest = made.parts(20)
    assert [(at, len(rows)) for at, rows in rest] == [(0, 20)]
    assert np.array_equal(rest[0][1], 2 * piece[:20])


@pytest.mark.parametrize("factor", [2, 3])
def test_an_upsampler_gives_none_for_silence_and_the_ringing_of_what_sounded(factor):
    """``sounding``: None where the block and what it remembers are silent (an int block:
    that many silent frames, no block of zeros made); after a sound, the filter's ringing,
    as a block of zeros brings it up; a silent stretch within a block gives zeros there."""
    rng = np.random.default_rng(8)
    loud = rng.normal(size=(500, 2)).astype(np.float32)
    up, ref = Upsampler(factor, 2), Upsampler(factor, 2)
    assert up.sounding(300) is None and up.sounding(np.zeros((300, 2), np.float32)) is None
    assert ref(np.zeros((600, 2), np.float32)).shape == (600 * factor, 2)
    assert np.array_equal(up.sounding(loud), ref(loud))
    ringing = up.sounding(30)  # the history still sounds
    assert ringing is not None and np.array_equal(ringing, ref(np.zeros((30, 2), np.float32)))
    assert ringing[:10 * factor].any()
    assert up.sounding(30) is None  # rung out: the 20 remembered frames are zeros
    assert not ref(np.zeros((30, 2), np.float32)).any()


@pytest.mark.parametrize("factor", [2, 3, 6])
def test_the_upsamplers_phase_0_is_its_centre_tap_alone(factor):
    """Phase 0's other taps fall on the sinc's zeros (< 4e-17), so up to ×3, where it is made
    apart from the band, its outputs are exactly the input 10 samples back times the centre
    tap, block after block; ×6 keeps the full band, which agrees to float32 rounding."""
    taps = factor * signal.firwin(20 * factor + 1, 1.0 / factor, window=("kaiser", 5.0))
    others = np.delete(taps[::factor], Upsampler.delay)
    assert np.max(np.abs(others)) < 4e-17
    low = np.random.default_rng(9).normal(0.0, 1.0, (2000, 2)).astype(np.float32)
    up = Upsampler(factor, 2)
    got = np.concatenate([up(low[a:b]) for a, b in itertools.pairwise([0, 7, 900, 2000])])
    want = np.zeros_like(low)
    want[Upsampler.delay:] = low[:-Upsampler.delay] * np.float32(taps[10 * factor])
    if factor <= 3:
        assert np.array_equal(got[::factor], want)
    else:
        assert np.max(np.abs(got[::factor] - want)) < 1e-6
