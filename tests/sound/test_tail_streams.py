"""The court's tail sums its sends dry, per zone and bus, and brings each sum down once a
chunk (``tail._Stream``): a send only adds samples, and the stream is what the notes
brought down one by one (from rest, each with its ring) sum to."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import signal

from soundscape.site.courtyard import load_site
from soundscape.site.listeners import Listener
from soundscape.sound import tail as tail_module
from soundscape.sound.buses import Upsampler
from soundscape.sound.court import load_court, source_point
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Air
from soundscape.sound.tail import Tail, _decimator, _ring, _Stream

FS = 48000


def _one_by_one(notes, down: int, frames: int) -> tuple[np.ndarray, float]:
    """Each note (onset, samples, gain) through the elliptic decimator on its own, from rest
    and to its end, every ``down``-th sample from its lead, summed; and the largest note's
    peak there."""
    sos, lead = _decimator(down)
    total = np.zeros(frames * down + lead)
    peak = 0.0
    for onset, mono, gain in notes:
        own = np.zeros(len(total))
        own[onset:onset + len(mono)] = mono.astype(np.float32) * np.float32(gain)
        low = signal.sosfilt(sos, own)
        peak = max(peak, float(np.abs(low).max()))
        total += low
    return total[lead::down][:frames], peak


def _notes(rng, down: int) -> list[tuple[int, np.ndarray, float]]:
    """Four 瑟-like notes 0.7 s apart ringing 2.8 s, then, after a silence longer than the
    ring, two that overlap, at odd onsets and gains."""
    rate = 8000 * down
    t = np.arange(round(2.8 * rate)) / rate
    notes = []
    for k, onset in enumerate([101, 101 + round(0.7 * rate), 101 + round(1.4 * rate),
                               103 + round(2.1 * rate), 7 + 8 * rate, 7 + round(8.3 * rate)]):
        ring = np.sin(2 * np.pi * (220 + 50 * k) * t) * np.exp(-t / 0.6)
        noise = 0.1 * rng.standard_normal(len(t))
        notes.append((onset, (ring + noise).astype(np.float32), float(0.3 + 0.2 * k)))
    return notes


@pytest.mark.parametrize("down", [6, 3, 2])
def test_a_stream_is_the_sum_of_its_notes_brought_down_one_by_one(down, monkeypatch):
    """Overlapping notes summed and brought down once, read in uneven stretches, are the
    per-note filterings' sum within the rings' cut (120 dB under the largest note's peak);
    the filter runs only where they sound and ring, and the silence between is zeros."""
    filtered = []
    low_pass = tail_module._low_pass

    def counted(padded, down_, zi=None):
        low, state = low_pass(padded, down_, zi)
        filtered.append(len(low))
        return low, state

    monkeypatch.setattr(tail_module, "_low_pass", counted)
    notes = _notes(np.random.default_rng(1), down)
    stream = _Stream(down)
    for onset, mono, gain in notes:
        stream.add(onset, mono, gain)
    frames = 13 * 8000
    cuts = (0, 1000, 5000, 20000, 40000, 41000, 70000, 96000, frames)
    parts = [stream.take(a, b) for a, b in itertools.pairwise(cuts)]
    ours = np.concatenate([np.zeros(b - a, np.float32) if p is None else p
                           for p, (a, b) in zip(parts, itertools.pairwise(cuts), strict=True)])
    expected, peak = _one_by_one(notes, down, frames)
    assert np.max(np.abs(ours - expected)) < 1e-6 * peak
    # the filter ran over the two sounding stretches and their rings, no more
    _, lead = _decimator(down)
    first_end = -(-(notes[3][0] + len(notes[3][1]) - lead) // down) + _ring(down)
    second = (notes[4][0] - lead) // down
    assert not ours[first_end:second].any()
    sounding = (first_end - (notes[0][0] - lead) // down
                + -(-(notes[5][0] + len(notes[5][1]) - lead) // down) + _ring(down) - second)
    assert sum(filtered) == sounding
    assert parts[-1] is None  # after the last ring: nothing filtered, nothing returned


@pytest.fixture(scope="module")
def tail():
    site = load_site()
    seat = site.listener("gong_wei")
    air = Air()
    panner = make_panner("stereo", speed_of_sound=air.speed_of_sound)
    made = Tail(load_court(site, "bare"), Listener(seat.position, seat.facing), panner, 2, FS,
                air, 0, (FS, FS // 3), upsampler=Upsampler)
    return made, source_point(site, "gong_xi")


def test_a_send_does_no_filtering_and_the_take_brings_the_sum_down(tail, monkeypatch):
    """``Tail.send`` only adds the note to its zone's stream (no filtering on the render's
    main thread: before, each send was low-passed on its own there); taking the tail brings
    the streams down and hears them."""
    made, point = tail
    calls = []
    low_pass = tail_module._low_pass

    def counted(*args):
        calls.append(args[1])
        return low_pass(*args)

    monkeypatch.setattr(tail_module, "_low_pass", counted)
    note = np.random.default_rng(2).standard_normal(FS // 2).astype(np.float32)
    for k in range(4):
        made.send(FS, 0.2 + 0.7 * k, note, point, 0)
        made.send(FS // 3, 0.3 + 0.7 * k, note[:FS // 6], point, 0)
    assert calls == []
    out = made.take(6 * FS)
    assert sorted(set(calls)) == [2, 6]  # one stream per bus: 16 kHz and 48 kHz
    assert np.abs(out).max() > 0


@pytest.mark.parametrize("down", [6, 2])
def test_a_send_just_past_a_blocks_start_hears_silence_before_it(down):
    """The decimator reaches ``_ORDER · down`` frames before a stretch, into a block no send
    made (here the one before the first send's): it reads zeros there (``_input`` fills only
    the gaps, not the whole window)."""
    rng = np.random.default_rng(3)
    onset = tail_module._BLOCK + 5
    mono = rng.standard_normal(3000).astype(np.float32)
    stream = _Stream(down)
    stream.add(onset, mono, 0.8)
    assert list(stream.blocks) == [1]
    frames = (onset + len(mono)) // down + 400
    ours = stream.take(0, frames)
    expected, peak = _one_by_one([(onset, mono, 0.8)], down, frames)
    assert np.max(np.abs(ours - expected)) < 1e-6 * peak


def test_a_send_is_added_into_its_blocks_in_place(monkeypatch):
    """A send is added into the stream's blocks where they are (BLAS's axpy: no scaled copy
    of the note); were axpy to hand back a copy, its sum is kept all the same."""
    mono = np.arange(1, 101, dtype=np.float32)
    stream = _Stream(6)
    stream.add(10, mono, 0.5)
    block = stream.blocks[0]
    stream.add(60, mono, 0.25)
    assert stream.blocks[0] is block
    expected = np.zeros(200, np.float32)
    expected[10:110] += mono * np.float32(0.5)
    expected[60:160] += mono * np.float32(0.25)
    assert np.allclose(block[:200], expected, rtol=1e-6, atol=0)
    monkeypatch.setattr(tail_module, "_axpy", lambda x, y, a: y + np.float32(a) * x)
    stream.add(0, mono, 1.0)
    expected[0:100] += mono
    assert np.allclose(block[:200], expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize("channels", [2, 16])
def test_the_tails_upsampler_is_the_buses_filter(channels):
    """The tail brings its chunks up with the buses' upsampler in rows of its own
    (``_UP_GROUP``: 8 frames, not the buses' 12): sample for sample the causal Kaiser filter
    (scipy's upfirdn), over odd blocks, a silent stretch and a silent column (exact zeros),
    and the buses' output to float32 rounding."""
    factor = 6
    rng = np.random.default_rng(6)
    low = rng.normal(0.0, 1.0, (4000, channels)).astype(np.float32)
    low[1000:1500] = 0.0
    low[:, -1] = 0.0
    taps = factor * signal.firwin(20 * factor + 1, 1.0 / factor, window=("kaiser", 5.0))
    want = signal.upfirdn(taps, low.astype(float), up=factor, axis=0)[:len(low) * factor]
    ours = Upsampler(factor, channels, group=tail_module._UP_GROUP)
    buses = Upsampler(factor, channels)
    cuts = [0, 1, 8, 27, 1001, 1010, 1499, 2345, 4000]
    got = np.concatenate([ours(low[a:b]) for a, b in itertools.pairwise(cuts)])
    theirs = np.concatenate([buses(low[a:b]) for a, b in itertools.pairwise(cuts)])
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) < 2e-5
    assert not got[:, -1].any()
    assert np.max(np.abs(got - theirs)) < 4 * np.finfo(np.float32).eps * np.abs(want).max()
    assert ours.delay == buses.delay


def test_the_tail_brings_its_chunks_up_in_its_own_rows(tail):
    made, _ = tail
    assert isinstance(made._up, Upsampler)
    assert (made._up.factor, made._up.group) == (made.factor, tail_module._UP_GROUP)


def test_a_take_within_the_guard_hears_every_send_and_looks_one_chunk_ahead():
    """Taken block by block as the render takes it (a block once the next send's onset is
    past its end and its guard), the tail is, bit for bit, what it is with every send made
    first: no send reaches a frame already heard. And the guard reaches no further than the
    end of the chunk that holds the block's last frame (one chunk, where it was two)."""
    site = load_site()
    seat = site.listener("gong_wei")
    air = Air()
    panner = make_panner("stereo", speed_of_sound=air.speed_of_sound)
    court = load_court(site, "bare")

    def made() -> Tail:
        return Tail(court, Listener(seat.position, seat.facing), panner, 2, FS, air, 0,
                    (FS, FS // 3), upsampler=Upsampler)

    rng = np.random.default_rng(9)
    points = [source_point(site, name) for name in ("gong_xi", "men")]
    sends = []
    for k, time in enumerate(np.sort(rng.uniform(0.0, 24.0, 40))):
        rate = FS if k % 2 else FS // 3
        mono = rng.standard_normal(round(0.3 * rate)).astype(np.float32)
        sends.append((rate, float(time), mono, points[k % 2]))
    block, total = 4800, 36 * FS
    live, ahead = made(), made()
    width, depth = court.enclosure.size
    lead = math.ceil(math.hypot(width, depth) / air.speed_of_sound * FS)
    heard, guards, base = [], [], 0
    for rate, time, mono, point in sends:
        while round(time * FS) - live.guard(base + block) - base >= block:
            guards.append(live.guard(base + block))
            heard.append(live.take(block))
            base += block
        live.send(rate, time, mono, point, 0)
        ahead.send(rate, time, mono, point, 0)
    while base < total:
        heard.append(live.take(block))
        base += block
    first = np.concatenate([ahead.take(block) for _ in range(total // block)])
    assert np.abs(first).max() > 0
    assert np.concatenate(heard).tobytes() == first.tobytes()
    assert len(guards) > 2 * tail_module.TAIL_CHUNK * live.factor // block
    assert max(guards) <= (tail_module.TAIL_CHUNK + 200) * live.factor + lead
    assert min(guards) < lead + 200 * live.factor  # near a chunk's end: little ahead
