"""Mastering: the dry runs measure what the write measures; skipping quiet blocks changes
no sample."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import multiprocessing
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from soundscape.errors import RenderError
from soundscape.sound import directio, mastering
from soundscape.sound.loudness import LoudnessMeter, TruePeakLimiter, TruePeakMeter
from soundscape.sound.mastering import (
    Mastering,
    _dry_run,
    _pass_one,
    _pass_two,
    _Slots,
    measurement,
)
from tests.sound.pagecache import resident_pages, skip_without_direct_io

RATE = 48000
BLOCK = RATE // 2
CEILING_DB = -1.1


class _Keep:
    """A writer that keeps what it is given (times its scale, as the sample writers do)."""

    def __init__(self) -> None:
        self.blocks: list[np.ndarray] = []

    def write(self, block: np.ndarray, scale: float = 1.0) -> None:
        self.blocks.append(np.multiply(block, scale, dtype=np.float64))


def _signal() -> np.ndarray:
    """A quiet bed with loud strokes in the first, a middle and the last block."""
    rng = np.random.default_rng(7)
    x = 0.01 * rng.standard_normal((20 * RATE, 2))
    t = np.arange(int(0.4 * RATE)) / RATE
    stroke = (np.sin(2 * np.pi * 90 * t) * np.exp(-t / 0.08))[:, None] * [0.4, 0.3]
    for at in (0.1, 9.3, 19.55):
        start = int(at * RATE)
        x[start:start + len(t)] += stroke[:len(x) - start]
    return x.astype(np.float32)


def _master(tmp_path):
    x = _signal()
    how = Mastering(RATE, 2, 2, np.ones(2), measurement(2, 0), BLOCK, -23.0, -1.0)
    raw = tmp_path / "raw.f32"
    first = _pass_one(iter([x[i:i + BLOCK] for i in range(0, len(x), BLOCK)]), raw,
                      how.measure, LoudnessMeter(RATE, how.weights))
    return x, how, raw, first


@pytest.mark.parametrize("stage_blocks", [1, 3, 1000])
def test_the_limiters_runs_are_read_many_blocks_at_once_and_handed_out_block_by_block(
        tmp_path, monkeypatch, stage_blocks):
    """``_scaled_blocks`` reads a run ``directio.STAGE_BYTES`` at a time and gives it out a
    block at a time: the blocks, and their bits, of reading each block alone, whether a
    read holds one block, three, or the whole run, and to a last block cut short by the
    file's end."""
    x, how, raw, first = _master(tmp_path)
    monkeypatch.setattr(directio, "STAGE_BYTES", stage_blocks * 4 * 2 * BLOCK)
    gain = 10 ** (9.0 / 20)
    frames = len(x) - BLOCK // 3  # a file that ends within a block
    first = dataclasses.replace(first, frames=frames)
    for lo, hi in ((0, 7 * BLOCK), (5 * BLOCK, frames)):
        got = list(mastering._scaled_blocks(raw, how, gain, lo, hi, first))
        alone = [mastering._scaled(raw, how, gain, start, min(start + BLOCK, hi), first)
                 for start in range(lo, hi, BLOCK)]
        assert [len(block) for block in got] == [len(block) for block in alone]
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(
            got, alone, strict=True))
    assert len(alone[-1]) == BLOCK - BLOCK // 3


@pytest.mark.parametrize("gain_db", [9.0, 14.0])
def test_a_dry_run_measures_the_loudness_the_write_measures(tmp_path, gain_db):
    _, how, raw, first = _master(tmp_path)
    out = _Keep()
    written, _, reduction = _pass_two(raw, how, gain_db, CEILING_DB, limit=True, write=[out],
                                      reference=first)
    assert reduction > 2  # the strokes were limited
    dry = _dry_run(raw, how, gain_db, CEILING_DB, first)
    assert dry == pytest.approx(written, abs=1e-6)
    unlimited = first.meter.integrated() + gain_db
    assert abs(unlimited - written) > 0.05  # so the limiter's loss was measured, not assumed


def test_a_dry_run_in_two_processes_measures_what_one_does(tmp_path):
    _, how, raw, first = _master(tmp_path)
    two = dataclasses.replace(how, workers=2)
    runs = list(mastering._runs(np.flatnonzero(mastering._loud_blocks(
        first.peaks, 10 ** (14.0 / 20), CEILING_DB)), 1, 2, len(first.peaks)))
    assert len(runs) == 3  # split between the processes
    assert _dry_run(raw, two, 14.0, CEILING_DB, first) == _dry_run(raw, how, 14.0, CEILING_DB,
                                                                   first)


def test_an_error_in_a_dry_runs_helper_process_reaches_the_caller(tmp_path, monkeypatch):
    _, how, raw, first = _master(tmp_path)
    honest = mastering._meter_runs

    def fails_late(raw, how, gain, ceiling_db, reference, runs):
        if runs[0][0] > 0:  # the later runs: the helper's
            raise RenderError("the helper's runs failed")
        return honest(raw, how, gain, ceiling_db, reference, runs)

    monkeypatch.setattr(mastering, "_meter_runs", fails_late)
    with pytest.raises(RenderError, match="helper's runs failed"):
        _dry_run(raw, dataclasses.replace(how, workers=2), 14.0, CEILING_DB, first)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("gain_db", [9.0, 14.0, 30.0])
def test_writing_the_blocks_out_of_the_limiters_reach_straight_changes_no_sample(
        tmp_path, gain_db, workers):
    """Only the runs of blocks near a loud one go through the limiter (some or all of them,
    by the gain): the same samples as limiting the whole stream, with the limiter's gains
    made here or (two workers) in a process of their own."""
    x, how, raw, first = _master(tmp_path)
    how = dataclasses.replace(how, workers=workers)
    out = _Keep()
    _pass_two(raw, how, gain_db, CEILING_DB, limit=True, write=[out], reference=first)
    limiter = TruePeakLimiter(CEILING_DB, RATE, 2)
    gain = 10 ** (gain_db / 20)
    scaled = x.astype(np.float64) * gain
    plain = np.concatenate([limiter.process(scaled[i:i + BLOCK])
                            for i in range(0, len(x), BLOCK)] + [limiter.flush()])
    assert np.array_equal(np.concatenate(out.blocks), plain)


@pytest.mark.parametrize("gain_db", [9.0, 30.0])
def test_the_limiters_gains_made_in_a_process_write_and_measure_what_one_does(
        tmp_path, monkeypatch, gain_db):
    """With two workers the limiter's gains are made in a forked process (another core):
    the same samples, loudness, true peak and reduction as made by pass 2's own thread."""
    _, how, raw, first = _master(tmp_path)
    pids = tmp_path / "pids"
    honest = mastering._run_gains

    def noted(*args):
        for item in honest(*args):
            with open(pids, "a") as f:
                f.write(f"{os.getpid()}\n")
            yield item

    monkeypatch.setattr(mastering, "_run_gains", noted)
    results, outs = [], []
    for workers in (1, 2):
        pids.unlink(missing_ok=True)
        outs.append(_Keep())
        results.append(_pass_two(raw, dataclasses.replace(how, workers=workers), gain_db,
                                 CEILING_DB, limit=True, write=[outs[-1]], reference=first))
        made_in = set(pids.read_text().split())
        assert (made_in == {str(os.getpid())}) == (workers == 1)
    assert results[0] == results[1]
    assert results[0][2] > 2  # the strokes were limited
    written = np.concatenate(outs[0].blocks)
    assert np.array_equal(written, np.concatenate(outs[1].blocks))
    # the true peak, measured inside the runs on the limiter's side and around them by
    # pass 2's meter, is the whole output's, to the bit
    whole = TruePeakMeter()
    whole.add(written)
    assert results[0][1] == whole.peak_dbtp


def test_an_error_in_the_limiters_process_is_raised_and_ends_it(tmp_path, monkeypatch):
    _, how, raw, first = _master(tmp_path)
    honest = mastering._run_gains

    def fails_late(*args):
        items = honest(*args)
        yield next(items)
        raise RenderError("the limiter's process failed")

    monkeypatch.setattr(mastering, "_run_gains", fails_late)
    before = set(multiprocessing.active_children())
    with pytest.raises(RenderError, match="limiter's process failed"):
        _pass_two(raw, dataclasses.replace(how, workers=2), 14.0, CEILING_DB, limit=True,
                  write=[_Keep()], reference=first)
    assert set(multiprocessing.active_children()) == before


def test_pass_two_hands_on_the_raw_blocks_a_few_at_a_time_with_the_same_samples(
        tmp_path, monkeypatch):
    """Away from the limiter, pass 2 reads and writes ``_read_blocks`` of pass 1's blocks
    at once (``directio.STAGE_BYTES`` of them, at least ``_READ_BLOCKS``: fewer hand-overs
    between its threads, fewer and longer requests to the disk): the same samples, and the
    same loudness as block by block."""
    x, how, raw, first = _master(tmp_path)
    gain = 10 ** (9.0 / 20)
    blocks = len(first.peaks)
    whole = _Keep()  # 20 s of stereo: less than STAGE_BYTES, one read
    _pass_two(raw, how, 9.0, CEILING_DB, limit=False, write=[whole], reference=first)
    assert len(whole.blocks) == 1
    assert np.array_equal(whole.blocks[0], np.multiply(x, gain, dtype=np.float64))
    monkeypatch.setattr(directio, "STAGE_BYTES", 1)  # the fewest blocks a read takes
    out = _Keep()
    _pass_two(raw, how, 9.0, CEILING_DB, limit=False, write=[out], reference=first)
    assert len(out.blocks) == -(-blocks // mastering._READ_BLOCKS) < blocks
    assert np.array_equal(np.concatenate(out.blocks), np.multiply(x, gain, dtype=np.float64))
    limited = _Keep()  # at 9 dB the limiter has runs: whole chunks between them
    written, _, _ = _pass_two(raw, how, 9.0, CEILING_DB, limit=True, write=[limited],
                              reference=first)
    assert len(limited.blocks) < blocks
    meter = LoudnessMeter(RATE, how.weights)
    meter.add(np.concatenate(limited.blocks))
    assert written == pytest.approx(meter.integrated(), abs=1e-9)


def _master_with(tmp_path, monkeypatch, target, *, guess=True):
    """``master`` on the signal: its report, the gains of its dry runs and its writes."""
    x = _signal()
    how = Mastering(RATE, 2, 2, np.ones(2), measurement(2, 0), BLOCK, target, -1.0)
    honest, calls, writes = mastering._dry_run, [], []

    def counted(*args):
        calls.append(args[2])
        return honest(*args)

    @contextlib.contextmanager
    def outputs(frames):
        writes.append(_Keep())
        yield [writes[-1]]

    monkeypatch.setattr(mastering, "_dry_run", counted)
    if not guess:  # from the gain that ignores the limiter
        monkeypatch.setattr(mastering, "likely_gain", lambda first, gain_db, *_: gain_db)
    report, _ = mastering.master(iter([x[i:i + BLOCK] for i in range(0, len(x), BLOCK)]),
                                 tmp_path / "raw.f32", how, outputs)
    meter = LoudnessMeter(RATE, how.weights)
    meter.add(np.concatenate(writes[-1].blocks))
    assert meter.integrated() == pytest.approx(report.output_lufs, abs=0.01)
    return report, calls, writes


def test_a_write_that_misses_the_target_is_settled_by_dry_runs_and_written_again(
        tmp_path, monkeypatch):
    """Written first at the gain that ignores the limiter (2.3 LU short: 12 dB of limiting),
    then dry runs settle the gain within SETTLE_LU, and the file is written again."""
    report, calls, writes = _master_with(tmp_path, monkeypatch, -14.0, guess=False)
    assert report.limiter_db > 0 and len(writes) == 2 and len(calls) >= 2
    assert abs(report.output_lufs - report.target_lufs) < mastering.SETTLE_LU


def test_a_write_at_a_first_guess_that_lands_needs_no_dry_run(tmp_path, monkeypatch):
    report, calls, writes = _master_with(tmp_path, monkeypatch, -23.0)
    assert report.limiter_db > 0 and len(writes) == 1 and not calls
    assert abs(report.output_lufs - report.target_lufs) < mastering.SETTLE_LU


def test_a_first_guess_expecting_heavy_limiting_is_settled_before_the_one_write(
        tmp_path, monkeypatch):
    """At 12 dB of limiting the first guess is 2.6 dB over the gain that ignores the limiter:
    a dry run measures it before the file is written, once (a guess 0.5 LU short was
    written, then settled by two dry runs and written again: a quiet part of the rite wrote
    1 200 s twice)."""
    report, calls, writes = _master_with(tmp_path, monkeypatch, -14.0)
    assert report.limiter_db > 10 and len(writes) == 1 and len(calls) == 1
    assert report.gain_db == calls[0]
    assert abs(report.output_lufs - report.target_lufs) < mastering.SETTLE_LU


@pytest.mark.parametrize("slope", [0.3, 0.45, 1.0])
def test_settling_follows_the_slope_the_limiter_leaves(slope):
    """Output loudness growing ``slope`` LU a dB (heavy limiting: ~0.4), 2 LU short at the
    first guess (the rite's quiet spans: 1.1-2.7): the gain lands within SETTLE_LU in three
    dry runs or fewer (stepping by the error alone took five and missed at 0.3 and 0.45)."""
    tried = []

    def loudness_at(gain: float) -> float:
        tried.append(gain)
        return -25.0 + slope * (gain - 20.0)

    settled = mastering.settle_gain(loudness_at, 20.0, -23.0)
    assert len(tried) <= 3
    assert abs(loudness_at(settled) + 23.0) < mastering.SETTLE_LU


def test_settling_crosses_a_plateau_the_gating_makes():
    """The rite's span 6 000-7 200 s brought up ~30 dB: its limited output measured at these
    gains stands still from 28.5 to 30.4 dB, then climbs. Stepping by the error stalled on
    the plateau and wrote the span 0.8 LU short of the target; settling from every output
    measured lands it within SETTLE_LU."""
    measured = ((26.93, -24.54), (28.47, -23.85), (30.37, -23.85), (33.11, -23.25),
                (33.64, -23.02), (34.63, -22.53), (40.0, -20.0))
    gains, lufs = zip(*measured, strict=True)
    tried = []

    def loudness_at(gain: float) -> float:
        tried.append(gain)
        return float(np.interp(gain, gains, lufs))

    settled = mastering.settle_gain(loudness_at, 26.93, -23.0)
    assert len(tried) <= 6
    assert abs(loudness_at(settled) + 23.0) < mastering.SETTLE_LU


def test_settling_under_heavy_limiting_starts_along_its_slope():
    """The rite's span 9 600-10 800 s brought up ~30 dB, its limited output as measured at
    four gains: the first step along ROUGH_SLOPE (0.5 LU a dB) lands it in two dry runs,
    the first by the error in four."""
    measured = ((30.04, -25.66), (32.69, -24.51), (35.49, -23.00), (36.20, -22.62))
    gains, lufs = zip(*measured, strict=True)
    tried = []

    def loudness_at(gain: float) -> float:
        tried.append(gain)
        return float(np.interp(gain, gains, lufs))

    for slope, runs in ((mastering.ROUGH_SLOPE, 2), (1.0, 4)):
        tried.clear()
        settled = mastering.settle_gain(loudness_at, 30.04, -23.0, first_slope=slope)
        assert len(tried) == runs
        assert abs(loudness_at(settled) + 23.0) < mastering.SETTLE_LU


def test_settling_stops_where_the_output_levels_out():
    """An output that levels out 1 LU under the target is not chased up by 5 errors a step
    (it ran to +75 dB, then +145): it stops after two steps that moved nothing, each step at
    most MAX_STEP_DB."""
    tried = []

    def levelling(gain: float) -> float:
        tried.append(gain)
        return -24.0 - 3.0 * math.exp(-(gain - 20.0) / 3.0)

    settled = mastering.settle_gain(levelling, 20.0, -23.0)
    assert len(tried) < 8
    assert max(tried) <= 20.0 + len(tried) * mastering.MAX_STEP_DB
    assert settled == max(tried)  # the best it found


def test_settling_leaves_out_outputs_that_are_not_numbers():
    known = {20.0: float("nan"), 21.0: -24.0}
    settled = mastering.settle_gain(lambda gain: -24.0 + 0.5 * (gain - 21.0), 21.0, -23.0,
                                    known=known)
    assert math.isfinite(settled) and abs(settled - 23.0) < 0.5


@pytest.mark.parametrize("target", [-23.0, -18.0, -14.0])
def test_the_first_guess_lands_within_settling_of_the_target(tmp_path, target):
    """likely_gain, from pass 1's measurements alone, lands within SETTLE_LU of the target
    where the gain that ignores the limiter is 0.4, 1.7 and 2.3 LU short (2 to 12 dB of
    limiting): the file is then written once, with at most one dry run. The loudest hop of
    each loud block turned down alone missed by 0.22 and 0.49 LU at -18 and -14 LUFS."""
    _, how, raw, first = _master(tmp_path)
    naive = target - first.meter.integrated()
    guess = mastering.likely_gain(first, naive, target, CEILING_DB)
    assert abs(_dry_run(raw, how, naive, CEILING_DB, first) - target) > mastering.SETTLE_LU
    assert abs(_dry_run(raw, how, guess, CEILING_DB, first) - target) < mastering.SETTLE_LU


def test_under_light_limiting_the_first_guess_is_the_loudest_hops_dip(tmp_path):
    """Where every hop of a loud block turned down by its own excess asks less than
    HEAVY_DB more gain (0.09 dB here, at -21 LUFS), the guess is the one-hop dip's to the
    bit: a render limited lightly (the whole rite) keeps the gain, and so the bytes, it
    had. That guess measures -21.004 LUFS here, the other -20.94."""
    *_, first = _master(tmp_path)
    naive = -21.0 - first.meter.integrated()
    power = first.meter.hops @ first.meter.weights
    edges = [0, *(snapshot.hops for snapshot in first.snapshots)]
    one_hop, every_hop = (mastering._guessed(model(power, edges), first.peaks, power, naive,
                                             -21.0, CEILING_DB, 20)
                          for model in (mastering._one_hop, mastering._every_hop))
    assert 0 < every_hop - one_hop < mastering.HEAVY_DB
    assert mastering.likely_gain(first, naive, -21.0, CEILING_DB) == one_hop


def _blocks():
    x = _signal()
    return iter([x[i:i + BLOCK] for i in range(0, len(x), BLOCK)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pass_one_in_a_process_of_its_own_keeps_what_the_thread_keeps(tmp_path, dtype):
    """Blocks through shared memory (float32, as rendered), and, when larger than a slot
    (float64 here), whole through the pipe."""
    def blocks():
        return (block.astype(dtype) for block in _blocks())

    thread = _pass_one(blocks(), tmp_path / "a.f32", lambda b: b, LoudnessMeter(RATE, [1, 1]))
    process = _pass_one(blocks(), tmp_path / "b.f32", lambda b: b,
                        LoudnessMeter(RATE, [1, 1]), separate=True, block_bytes=4 * 2 * BLOCK)
    assert (tmp_path / "a.f32").read_bytes() == (tmp_path / "b.f32").read_bytes()
    assert process.frames == thread.frames == len(_signal())
    assert process.meter.integrated() == thread.meter.integrated()
    assert np.array_equal(process.meter.hops, thread.meter.hops)
    assert [s.hops for s in process.snapshots] == [s.hops for s in thread.snapshots]
    assert np.array_equal(process.peaks, thread.peaks)
    assert process.peak.peak == thread.peak.peak


def test_pass_one_waits_for_free_slots_and_keeps_every_block_in_order(tmp_path):
    """Far more blocks than slots: each slot is refilled only once it is kept."""
    x = _signal().astype(np.float32)
    small = [x[i:i + 997] for i in range(0, len(x), 997)]
    assert len(small) > 4 * _Slots.COUNT
    process = _pass_one(iter(small), tmp_path / "b.f32", lambda b: b,
                        LoudnessMeter(RATE, [1, 1]), separate=True, block_bytes=4 * 2 * 997)
    assert np.array_equal(np.fromfile(tmp_path / "b.f32", "<f4").reshape(-1, 2), x)
    assert np.array_equal(process.peaks, [np.abs(b).max() for b in small])


def test_pass_ones_keeping_process_gives_free_pages_back_as_it_goes(tmp_path, monkeypatch):
    """The keeping process asks after every block it keeps whether it is time to give its
    heap's free pages back (its heap is the render's at the fork): a byte a question, written
    from the fork to a file."""
    from soundscape.sound import mastering

    asked = tmp_path / "asked"

    def ask() -> None:
        with asked.open("ab") as out:
            out.write(b"1")

    monkeypatch.setattr(mastering, "releasing_now_and_then", lambda: ask)
    blocks = list(_blocks())
    _pass_one(iter(blocks), tmp_path / "b.f32", lambda b: b, LoudnessMeter(RATE, [1, 1]),
              separate=True, block_bytes=4 * 2 * BLOCK)
    assert len(blocks) > 2 and asked.read_bytes() == b"1" * len(blocks)
    # on its own thread it shares the render's heap, which the render trims itself
    asked.unlink()
    _pass_one(iter(blocks), tmp_path / "a.f32", lambda b: b, LoudnessMeter(RATE, [1, 1]))
    assert not asked.exists()


def test_pass_ones_result_pickles_as_a_few_arrays_and_comes_back_the_same(tmp_path):
    """The keeper sends its result once, at the end of pass 1, while the render waits: a
    block's snapshot (10 floats and 2 counts of stereo) and each 100 ms hop (2 floats)
    cost about their numbers' bytes, not an object each (over 600 bytes a block)."""
    import pickle

    x = _signal().astype(np.float32)
    small = [x[i:i + RATE // 10] for i in range(0, len(x), RATE // 10)]  # a hop a block
    result = _pass_one(iter(small), tmp_path / "a.f32", lambda b: b,
                       LoudnessMeter(RATE, [1, 1]))
    data = pickle.dumps(result)
    back = pickle.loads(data)
    assert len(data) < 8 * (12 + 2 + 1) * len(small) + 8 * 2 * len(result.meter.hops) + 4096
    assert np.array_equal(back.meter.hops, result.meter.hops)
    assert back.meter.integrated() == result.meter.integrated()
    for ours, theirs in zip(back.snapshots, result.snapshots, strict=True):
        assert np.array_equal(ours.state, theirs.state)
        assert np.array_equal(ours.partial, theirs.partial)
        assert (ours.partial_count, ours.hops) == (theirs.partial_count, theirs.hops)
    assert np.array_equal(back.peaks, result.peaks) and back.frames == result.frames


def test_pass_one_hands_blocks_over_without_a_word_down_the_pipe(tmp_path, monkeypatch):
    """Blocks that fit a slot are handed over in shared memory alone: the main process
    writes nothing to the pipe (each write let go of the GIL) until it asks for the
    result."""
    from multiprocessing.connection import Connection

    sent, send = [], Connection.send

    def counted(self, obj):
        sent.append(obj)  # the fork's own list: only this process's sends are seen here
        return send(self, obj)

    monkeypatch.setattr(Connection, "send", counted)
    blocks = [block.astype(np.float32) for block in _blocks()]
    process = _pass_one(iter(blocks), tmp_path / "b.f32", lambda b: b,
                        LoudnessMeter(RATE, [1, 1]), separate=True, block_bytes=4 * 2 * BLOCK)
    assert process.frames == len(_signal())
    assert sent == []


def test_a_keeping_process_told_to_stop_early_ends_by_itself(tmp_path, monkeypatch):
    """The blocks fail half way (an error, Ctrl-C): the keeper is told and ends on its own
    (exit code 0), not terminated."""
    made = []
    init = mastering._KeepingProcess.__init__

    def kept(self, *args):
        init(self, *args)
        made.append(self._process)

    def failing():
        yield from itertools.islice(_blocks(), 3)
        raise KeyboardInterrupt

    monkeypatch.setattr(mastering._KeepingProcess, "__init__", kept)
    with pytest.raises(KeyboardInterrupt):
        _pass_one(failing(), tmp_path / "b.f32", lambda b: b, LoudnessMeter(RATE, [1, 1]),
                  separate=True, block_bytes=4 * 2 * BLOCK)
    (process,) = made
    assert process.exitcode == 0


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")
@pytest.mark.parametrize("keeper_starts_late", [False, True])
def test_a_keeping_process_whose_main_process_is_killed_ends(tmp_path, keeper_starts_late):
    """Killed mid pass 1 (e.g. for memory), the main process tells the keeper nothing: the
    keeper, orphaned, ends rather than wait for blocks for ever. Also where the main
    process is killed before the keeper first runs (a busy machine): the keeper took its
    new parent for the main process and waited for ever (CI, once)."""
    import signal
    import subprocess
    import time

    late = textwrap.dedent("""
        import time
        from soundscape.sound import mastering
        first_run = mastering._keep_in_process
        def late(*args):
            time.sleep(1.5)  # the main process is killed meanwhile
            first_run(*args)
        mastering._keep_in_process = late
        """) if keeper_starts_late else ""
    script = late + textwrap.dedent(f"""
        import itertools, multiprocessing, sys
        import numpy as np
        from soundscape.sound.loudness import LoudnessMeter
        from soundscape.sound.mastering import _pass_one
        def blocks():
            for i in itertools.count():
                if i == 2:
                    (keeper,) = multiprocessing.active_children()
                    print(keeper.pid, flush=True)
                yield np.zeros(({BLOCK}, 2), np.float32)
        _pass_one(blocks(), sys.argv[1], lambda b: b, LoudnessMeter({RATE}, [1, 1]),
                  separate=True, block_bytes={4 * 2 * BLOCK})
        """)
    main = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "raw.f32")],
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    keeper = int(main.stdout.readline())
    main.send_signal(signal.SIGKILL)
    main.wait()
    deadline = time.monotonic() + 60
    try:
        while _running(keeper):
            assert time.monotonic() < deadline, "the orphaned keeper never ended"
            time.sleep(0.05)
    finally:  # not left behind waiting for ever where the test fails
        if _running(keeper):
            with contextlib.suppress(ProcessLookupError):
                os.kill(keeper, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether process ``pid`` is there and not a zombie (Linux /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_an_error_in_the_keeping_process_is_raised_naming_the_file(tmp_path):
    missing = tmp_path / "gone" / "raw.f32"
    with pytest.raises(OSError, match="gone"):
        _pass_one(_blocks(), missing, lambda b: b, LoudnessMeter(RATE, [1, 1]), separate=True)


def test_the_raw_file_is_written_and_read_past_the_page_cache(tmp_path):
    """Pass 1 writes its raw file, and pass 2 reads it, without the page cache (on this
    project's machine each page the kernel took for them cost more than the copy itself):
    none of the file's pages are resident after either pass, and a second write reads the
    same samples from the disk."""
    skip_without_direct_io(tmp_path)
    _, how, raw, first = _master(tmp_path)
    assert raw.stat().st_size > 1 << 20
    assert not resident_pages(raw).any()
    written = []
    for _ in range(2):
        out = _Keep()
        _pass_two(raw, how, 9.0, CEILING_DB, limit=True, write=[out], reference=first)
        written.append(np.concatenate(out.blocks))
    assert not resident_pages(raw).any()
    assert np.array_equal(written[0], written[1])


@pytest.mark.parametrize("target, workers", [(-30.0, 1), (-30.0, 2), (-14.0, 1)])
def test_columns_silent_in_pass_1_are_written_as_silence(tmp_path, target, workers):
    """Columns silent in a block are left out of pass 1's raw file (``rawfile``) and come back
    as zeros: unlimited, each written sample is the signal's times the gain; limited (−14
    LUFS), a silent stretch stays silent. Either way the raw file is smaller than the frames."""
    x = np.zeros((20 * RATE, 3), dtype=np.float32)
    x[:, :2] = _signal()
    x[:10 * RATE, 1] = 0.0  # silent for the first half
    x[9 * RATE:11 * RATE, 2] = 0.05  # one column sounds only in the middle
    how = Mastering(RATE, 3, 3, np.ones(3), measurement(3, 0), BLOCK, target, -1.0,
                    workers=workers)
    keep = _Keep()

    @contextlib.contextmanager
    def outputs(frames):
        keep.blocks.clear()
        yield [keep]

    raw = tmp_path / "raw.f32"
    report, frames = mastering.master(iter([x[i:i + BLOCK] for i in range(0, len(x), BLOCK)]),
                                      raw, how, outputs)
    written = np.concatenate(keep.blocks)
    assert frames == len(x) and written.shape == x.shape
    assert raw.stat().st_size <= 0.7 * x.nbytes
    assert not written[x == 0].any()
    assert (report.limiter_db > 0) == (target == -14.0)
    if not report.limiter_db:
        gain = 10 ** (report.gain_db / 20)
        np.testing.assert_array_equal(written, np.multiply(x, gain, dtype=np.float64))
