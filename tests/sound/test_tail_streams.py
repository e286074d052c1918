"""The court's tail sums its sends dry, per zone and bus, and brings each sum down once a
chunk (``tail._Stream``): a send only adds samples, and the stream is what the notes
brought down one by one sum to. The decimator's poles are shared by every bus and heard
in the tail's response (``Tail.response``), so a stream runs its FIR alone."""

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
from soundscape.sound.court import load_court, source_point, stable_seed
from soundscape.sound.court import tail as court_tail
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Air
from soundscape.sound.tail import Tail, _decimator, _elliptic, _Stream

FS = 48000
FACTOR = 6  # 48 kHz to the tail's 8 kHz


def _one_by_one(notes, down: int, frames: int) -> tuple[np.ndarray, float]:
    """Each note (onset, samples, gain) through the decimator's FIR on its own, every
    ``down``-th sample from its lead, summed; and the largest note's peak there."""
    fir, _, lead = _decimator(down, FACTOR)
    total = np.zeros(frames * down + lead + 1)
    peak = 0.0
    for onset, mono, gain in notes:
        own = np.zeros(len(total))
        own[onset:onset + len(mono)] = mono.astype(np.float32) * np.float32(gain)
        low = np.convolve(own, fir)[:len(total)]
        peak = max(peak, float(np.abs(low).max()))
        total += low
    return total[lead::down][:frames], peak


def _notes(rng, down: int) -> list[tuple[int, np.ndarray, float]]:
    """Four 瑟-like notes 0.7 s apart ringing 2.8 s, then, after a silence, two that
    overlap, at odd onsets and gains."""
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
    per-note filterings' sum; the FIR runs only where they sound and its ``_ORDER`` frames
    after, and the silence between is zeros."""
    filtered = []
    low_pass = tail_module._low_pass

    def counted(columns, phases):
        low = low_pass(columns, phases)
        filtered.append(len(low))
        return low

    monkeypatch.setattr(tail_module, "_low_pass", counted)
    notes = _notes(np.random.default_rng(1), down)
    stream = _Stream(down, FACTOR)
    for onset, mono, gain in notes:
        stream.add(onset, mono, gain)
    frames = 13 * 8000
    cuts = (0, 1000, 5000, 20000, 40000, 41000, 70000, 96000, frames)
    parts = [stream.take(a, b) for a, b in itertools.pairwise(cuts)]
    ours = np.concatenate([np.zeros(b - a, np.float32) if p is None else p
                           for p, (a, b) in zip(parts, itertools.pairwise(cuts), strict=True)])
    expected, peak = _one_by_one(notes, down, frames)
    assert np.max(np.abs(ours - expected)) < 1e-6 * peak
    # the FIR ran over the two sounding stretches and its reach after each, no more
    _, _, lead = _decimator(down, FACTOR)
    order = tail_module._ORDER
    first_end = -(-(notes[3][0] + len(notes[3][1]) - lead) // down) + order
    second = -(-(notes[4][0] - lead) // down)
    assert not ours[first_end:second].any()
    assert ours[first_end - 1] != 0 and ours[second] != 0
    sounding = (first_end - -(-(notes[0][0] - lead) // down)
                + -(-(notes[5][0] + len(notes[5][1]) - lead) // down) + order - second)
    assert sum(filtered) == sounding
    assert parts[-1] is None  # past the last send's reach: nothing filtered, nothing returned


@pytest.mark.parametrize("down", [6, 3, 2])
def test_a_stream_then_the_shared_poles_is_the_whole_low_pass(down):
    """Pieces of one signal at odd offsets, read in uneven stretches, then the poles at the
    tail's rate (which the tail's response holds) give the bus's whole low-pass (its FIR
    over the poles in z⁻ᵈᵒʷⁿ) every ``down``-th sample; at the output's rate that is the
    elliptic filter itself."""
    fir, poles, lead = _decimator(down, FACTOR)
    x = np.random.default_rng(0).standard_normal(20000 * down).astype(np.float32)
    stream = _Stream(down, FACTOR)
    for start in range(0, len(x), 7001):  # from the lead on: the first frame hears it
        stream.add(lead + start, x[start:start + 7001], 1.0)
    low = np.concatenate([stream.take(a, b) for a, b in ((0, 3000), (3000, 11000),
                                                          (11000, 19000))])
    ours = signal.sosfilt(poles, low.astype(float))
    denominator = np.zeros(tail_module._ORDER * down + 1)
    denominator[::down] = np.poly(np.concatenate([np.roots(s[3:]) for s in poles])).real
    expected = signal.lfilter(fir, denominator, x.astype(float))[::down][:19000]
    # the FIR's output is single precision, and the poles raise its rounding near 3.7 kHz
    # (their gain: -20 to +37 dB): 1e-5 of this signal's peak of 4 or so
    assert np.max(np.abs(ours - expected)) < 3e-5
    if down == FACTOR:
        elliptic = signal.sosfilt(_elliptic(FACTOR), x.astype(float))[::down][:19000]
        assert np.max(np.abs(ours - elliptic)) < 3e-5


@pytest.mark.parametrize("down", [3, 2])
def test_every_bus_brings_its_sends_down_as_the_output_rate_bus_does(down):
    """The 16 and 24 kHz buses' decimators share the 48 kHz bus's poles; their FIRs are
    fitted to its response, on time: their responses after their leads are within 55 dB of
    its own up to 3.6 kHz (with their own elliptic filters, as before: -3 dB at 3.5 kHz,
    10 µs later at 1 kHz), and they keep out what would fold into the tail's band (60 dB
    from 4.5 kHz)."""
    fir, poles, lead = _decimator(down, FACTOR)
    denominator = np.zeros(tail_module._ORDER * down + 1)
    denominator[::down] = np.poly(np.concatenate([np.roots(s[3:]) for s in poles])).real
    hz = np.linspace(20.0, 3600.0, 400)
    _, ours = signal.freqz(fir, denominator, worN=hz, fs=8000 * down)
    _, theirs = signal.sosfreqz(_elliptic(FACTOR), worN=hz, fs=FS)
    ours = ours * np.exp(2j * np.pi * hz * lead / (8000 * down))
    theirs = theirs * np.exp(2j * np.pi * hz * _decimator(FACTOR, FACTOR)[2] / FS)
    assert 20 * np.log10(np.max(np.abs(ours - theirs))) < -55.0
    stop = np.linspace(4500.0, 4000.0 * down, 2000)
    _, kept_out = signal.freqz(fir, denominator, worN=stop, fs=8000 * down)
    assert 20 * np.log10(np.max(np.abs(kept_out))) < -60.0


def test_the_tails_response_holds_the_decimators_poles(tail):
    """The zone's response is the court's tail (``court.tail``) through the shared poles,
    rung out 120 dB down, and it still fits the chunk's FFT (98 304 points)."""
    made, point = tail
    zone = made.route(point)[0]
    first, ir = made.response(zone)
    late = made.court.late(zone, made.listener.position, alpha_db_per_m=made.alpha,
                           speed=made.speed)
    plain = court_tail(*late, rate=made.rate, length_s=made.court.model.tail_s,
                       weights=made.weights, diffusion_ms=made.court.hypothesis.diffusion_ms,
                       seed=stable_seed(made.seed, zone, made.listener.position),
                       pan=lambda point: made._pan(made.listener, point))[first:]
    poles = _decimator(FACTOR, FACTOR)[1]
    assert len(ir) > len(plain)
    expected = signal.sosfilt(poles, np.vstack([plain, np.zeros((len(ir) - len(plain), 2))]),
                              axis=0)
    assert np.allclose(ir, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    rung = signal.sosfilt(poles, np.r_[1.0, np.zeros(len(ir) - len(plain) + 50)])
    assert np.abs(rung[len(ir) - len(plain):]).max() < 1e-6 * np.abs(rung).max()
    assert made._filter((zone, made.listener), None).n_fft == 98304


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

    def counted(columns, phases):
        calls.append(len(phases))
        return low_pass(columns, phases)

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
    made (here the one before the first send's): it reads zeros there (``_columns`` fills
    only the gaps, not the whole window)."""
    rng = np.random.default_rng(3)
    stream = _Stream(down, FACTOR)
    onset = stream.block * down + stream.lead + 5
    mono = rng.standard_normal(3000).astype(np.float32)
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
    stream = _Stream(6, FACTOR)
    stream.add(10 + stream.lead, mono, 0.5)
    block = stream.blocks[0]
    stream.add(60 + stream.lead, mono, 0.25)
    assert stream.blocks[0] is block
    expected = np.zeros(200, np.float32)
    expected[10:110] += mono * np.float32(0.5)
    expected[60:160] += mono * np.float32(0.25)
    assert np.allclose(block[:200], expected, rtol=1e-6, atol=0)
    monkeypatch.setattr(tail_module, "_axpy", lambda x, y, a: y + np.float32(a) * x)
    stream.add(stream.lead, mono, 1.0)
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


def test_the_kept_decimators_are_the_fits_of_today_and_the_taps_the_streams_run():
    """``data/decimators.toml`` keeps ``_fitted``'s taps (least squares: 0.05-0.1 s of a
    start) for every bus of the bundled instruments at 44.1, 48 and 96 kHz: the same
    (down, factor)s the code gives now, each within rounding of a fit made now, and the
    very taps ``_decimator`` hands the streams."""
    import tomllib

    kept = tail_module._kept_decimators()
    fitted = tomllib.loads(tail_module.kept_decimators_text())["fir"]
    assert {(fir["down"], fir["factor"]) for fir in fitted} == set(kept)
    assert len(kept) >= 9
    for fir in fitted:
        key = (fir["down"], fir["factor"])
        taps = np.array(fir["taps"])
        assert kept[key].shape == taps.shape == (tail_module._ORDER * key[0] + 1,)
        assert np.abs(kept[key] - taps).max() <= 1e-12 * np.abs(taps).max()
        assert _decimator(*key)[0].tobytes() == kept[key].tobytes()
    not_kept = (5, 10)  # another court's tail rate, another instrument's bus: fitted
    assert not_kept not in kept
    assert _decimator(*not_kept)[0].shape == (tail_module._ORDER * 5 + 1,)


@pytest.mark.parametrize("factor", [6, 12, 16, 24, 32])
def test_the_decimators_lead_is_the_elliptics_delay_at_every_factor(factor):
    """The lead was the group delay of the elliptic as one transfer function: ill-conditioned
    from factor 16 on, it gave −7 samples at factor 24 (96 kHz) on one machine for 44, so
    the 96 kHz fits and renders hung on the machine's rounding. It is the sum of the
    sections' delays now: the phase slope of the cascade at 1 kHz, within rounding."""
    sos, rate = tail_module._elliptic(factor), 2.0 * factor
    at = np.array([0.25 - 1e-5, 0.25 + 1e-5])
    _, response = signal.sosfreqz(sos, worN=at, fs=rate)
    phase = np.unwrap(np.angle(response))
    slope = -(phase[1] - phase[0]) / (2 * np.pi * (at[1] - at[0]) / rate)
    assert abs(tail_module._lead(factor, factor) - slope) <= 0.5 + 1e-6
