"""The voice's shortcuts taken for speed give the bytes of the plain computation they replace."""

import itertools

import numpy as np
import pytest
from scipy import signal

from soundscape.sound.iir import sosfilt_rows
from soundscape.sound.synth import glottal, klatt, voice
from soundscape.sound.synth._common import interp_knots, sample_times


def cascade_frame_by_frame(x, poles, zero, hop, rate):
    """The cascade as first made in blocks: coefficients for every frame, one filter call
    per run of equal frames' coefficients, the time-invariant tail filtered whole."""
    signals = np.array(np.atleast_2d(x), dtype=float)
    sos = klatt._sections(poles, zero, rate)
    changing = np.flatnonzero(np.any(sos != sos[:1], axis=(0, 2)))
    varying = int(changing[-1]) + 1 if changing.size else 0
    if varying:
        part_sos = sos[:, :varying]
        frames, size = part_sos.shape[0], signals.shape[1]
        rows = part_sos.reshape(frames, -1)
        edges = [0, *(np.flatnonzero(np.any(rows[1:] != rows[:-1], axis=1)) + 1).tolist(),
                 frames]
        runs = [(a, b) for a, b in itertools.pairwise(edges)
                if a * hop < (size if b == frames else min(size, b * hop))]
        carries = klatt._carries(part_sos[[a for a, _ in runs]])
        state = np.zeros((signals.shape[0], varying, 2))
        for r, (a, b) in enumerate(runs):
            start, end = a * hop, size if b == frames else min(size, b * hop)
            if r:
                state = (carries[r - 1] @ state[..., None])[..., 0]
            done, state = sosfilt_rows(part_sos[a], signals[:, start:end], state)
            signals[:, start:end] = done
    if varying < sos.shape[1]:
        tail = sos[0, varying:]
        signals, _ = sosfilt_rows(tail, signals, np.zeros((signals.shape[0], tail.shape[0], 2)))
    return signals.reshape(np.shape(x))


@pytest.mark.parametrize("size", [800, 760, 1000])  # the frames end with, before, after x
def test_the_cascade_worked_per_run_is_the_cascade_worked_per_frame(size):
    """Coefficients worked out once per run of equal frames (found on Hz and bandwidth):
    the same bytes as coefficients for every frame, with a zero and poles that move,
    hold and move back."""
    rate, hop, frames = 8000, 40, 20
    x = np.random.default_rng(2).standard_normal((2, size))
    poles = np.tile([[650.0, 80.0], [1080.0, 90.0], [2650.0, 120.0], [270.0, 100.0],
                     [3500.0, 300.0]], (frames, 1, 1))
    poles[5:9, 0, 0] = np.linspace(650.0, 300.0, 4)
    poles[9:14, 0, 0] = 300.0
    poles[14:, 1, 0] = 1500.0
    zero = np.tile([270.0, 100.0], (frames, 1))
    zero[10:12] = [1000.0, 100.0]
    got = klatt.cascade(x, poles, zero, hop=hop, sample_rate=rate)
    assert got.tobytes() == cascade_frame_by_frame(x, poles, zero, hop, rate).tobytes()
    still = np.tile(poles[:1], (frames, 1, 1))  # nothing moves: one pass of every section
    got = klatt.cascade(x[0], still, zero[:1].repeat(frames, 0), hop=hop, sample_rate=rate)
    want = cascade_frame_by_frame(x[0], still, zero[:1].repeat(frames, 0), hop, rate)
    assert got.tobytes() == want.tobytes()


def test_the_tilt_in_place_is_lfilters_bytes():
    rate = 24000
    x = np.random.default_rng(3).standard_normal(5000)
    g2 = 10.0 ** (-6.0 / 10.0)
    cos_w = np.cos(2.0 * np.pi * 3000.0 / rate)
    p = (1.0 - g2 * cos_w) / (1.0 - g2)
    pole = p - np.sqrt(p * p - 1.0)
    want = signal.lfilter([1.0 - pole], [1.0, -pole], x)
    assert glottal.tilt(x, 6.0, rate).tobytes() == want.tobytes()
    mine = x.copy()
    done = glottal.tilt(mine, 6.0, rate, overwrite=True)
    assert done.tobytes() == want.tobytes() and np.shares_memory(done, mine)


@pytest.fixture(scope="module")
def params():
    from soundscape.music.instruments import load_instrument
    from soundscape.sound import synth

    return synth.params_of(load_instrument("voice"))


@pytest.mark.parametrize("rate", [24000, 22050])  # 22050: frames fall between samples
def test_the_aspiration_worked_where_it_sounds_is_np_interp_everywhere(params, rate):
    """Aspiration at the first frame, in the middle and at the last frame: the sparse
    track is np.interp's (with the release), and 0 elsewhere."""
    frames = 60
    plan = voice._Plan(params, frames, 1.0, params["vowels"]["a"])
    plan.voicing[:] = 1.0
    plan.aspiration[0:2] = 0.8
    plan.aspiration[20:23] = [0.3, 0.6, 0.2]
    plan.aspiration[-1] = 0.5
    size = round(frames * plan.step * rate) + 17
    t = sample_times(size, rate)
    _, ah = voice.ramped_tracks(plan, t, rate, attack_s=0.02, release_at=0.45, release_s=0.5)
    want = interp_knots(t, np.arange(frames) * plan.step, plan.aspiration,
                        round(plan.step * rate))
    tail = max(0, int(np.floor(0.45 * rate)) - 2)  # the release leaves the last frame sounding
    want[tail:] *= np.clip(1.0 - (t[tail:] - 0.45) / 0.5, 0.0, 1.0)
    assert ah.tobytes() == want.tobytes()
    ranges = voice._live(plan.aspiration, np.arange(frames) * plan.step, t)
    inside = np.zeros(size, dtype=bool)
    for a, b in ranges:
        inside[a:b] = True
    assert not np.any(ah[~inside]) and np.count_nonzero(inside) < size


def test_the_noises_added_in_place_are_the_noises_added_whole(params):
    """Bursts and frication that overlap (listed out of order), and one cut at the end."""
    rate, frames = 24000, 24000
    noises = [(0.30, 0.05, (2000.0, 6000.0), -6.0), (0.10, 0.02, (1000.0, 4000.0), -6.0),
              (0.11, 0.08, (3000.0, 8000.0), -10.0), (0.12, 0.01, (500.0, 2000.0), -3.0),
              (0.98, 0.10, (4000.0, 9000.0), -12.0)]
    out = np.random.default_rng(4).standard_normal(frames)
    want = out + voice._noises(noises, 0.2, frames, rate, np.random.default_rng(5))
    voice._add_noises(out, noises, 0.2, rate, np.random.default_rng(5))
    assert out.tobytes() == want.tobytes()


def test_the_breath_scaled_in_place_and_the_held_rms_in_scratch_are_the_same_values():
    rng = np.random.default_rng(6)
    x, track = rng.standard_normal(20000), rng.random(20000)
    want = (track * 0.03) * x
    got = voice._scaled_by(x, track, 0.03, block=3000)
    assert got.tobytes() == want.tobytes() and np.shares_memory(got, x)
    steady = [(0.1, 0.3), (0.35, 0.35), (0.5, 0.8)]
    plain = voice._steady_rms(x, steady, 24000)
    assert voice._steady_rms(x, steady, 24000, scratch=np.empty(x.size)) == plain
    held = np.concatenate([x[2400:7200], x[12000:19200]])
    assert plain == float(np.sqrt(np.mean(held ** 2)))


def test_the_plans_own_linspace_is_numpys():
    rng = np.random.default_rng(8)
    for k in range(2000):
        a, b = rng.normal(0.0, 100.0, 2)
        a, b = (0.0, 1.0) if k % 7 == 0 else (a, a) if k % 5 == 0 else (a, b)
        n = int(rng.integers(0, 40))
        got = voice._open_linspace(a, b, n)
        assert got.tobytes() == np.linspace(a, b, n, endpoint=False).tobytes()
