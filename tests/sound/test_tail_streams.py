"""The court's tail sums its sends dry, per zone and bus, and brings each sum down once a
chunk (``tail._Stream``): a send only adds samples, and the stream is what the notes
brought down one by one (from rest, each with its ring) sum to."""

from __future__ import annotations

import itertools

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
