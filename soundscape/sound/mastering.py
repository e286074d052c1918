"""Mastering: two streaming passes that bring a render to its loudness target under a ceiling.

Pass 1 writes the rendered blocks to a raw float32 file (each without its silent
columns, ``rawfile``) while a BS.1770 meter, a true-peak meter and each block's
sample peak are taken. Pass 2 reads it back in
blocks, applies the gain to the target and a true-peak limiter, and writes the
final file(s) while metering them (filtering only near the limiter's work and
following pass 1's meter elsewhere, since K-weighting is linear). When the
limiter has work, what it takes off the loudness is guessed from pass 1's
measurements (``likely_gain``) and the file written at that gain; if it misses the
target by ``SETTLE_LU``, dry runs — reading, limiting and metering only around the
blocks loud enough for it, and taking pass 1's hops elsewhere — settle the gain
and the file is written again. Where the guess expects heavy limiting (a quiet part
brought up by 30 dB), the dry runs settle the gain before the file is written once.
File I/O and metering run on background threads (pass 1's, with two workers, in a
process) beside the rendering and the limiter; with two workers pass 2's limiter runs
ahead in a process of its own, which sends its gains (not samples) and measures the true
peak inside its runs.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import math
import mmap
import multiprocessing
import os
import queue
import signal
import struct
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import numpy as np
from tqdm import tqdm

from soundscape.errors import RenderError
from soundscape.malloc import releasing_now_and_then
from soundscape.sound import directio, rawfile
from soundscape.sound.audiofile import BlockWriter
from soundscape.sound.loudness import (
    Downmix,
    LoudnessMeter,
    LoudnessReport,
    MeterSnapshot,
    TruePeakLimiter,
    TruePeakMeter,
    integrated_loudness,
    sample_peak,
)

__all__ = ["HEAVY_DB", "LIMITER_MARGIN_DB", "MAX_STEP_DB", "MIN_SLOPE", "ROUGH_GUESS_DB",
           "ROUGH_SLOPE", "SAME_GAIN_DB", "SETTLE_LU", "Mastering", "likely_gain", "master",
           "measurement", "settle_gain"]

#: The limiter aims this far under the ceiling (gain ripple), dB.
LIMITER_MARGIN_DB = 0.1
#: A limited output this close to the loudness target is kept, LU.
SETTLE_LU = 0.2
#: Least loudness a dB of gain is taken to add under the limiter when settling (LU/dB):
#: it bounds a step at five times the error.
MIN_SLOPE = 0.2
#: LU a dB of gain adds where the guess expects heavy limiting, for the first step of
#: settling (the rite's quiet spans brought up ~30 dB: 0.4-0.5 measured).
ROUGH_SLOPE = 0.5
#: Largest step of the gain from one dry run to the next, while the target is not
#: bracketed (dB): a step of five errors may not run off where the output levels out.
MAX_STEP_DB = 6.0
#: Gains closer than this are one gain to settling (a jump of the output across the
#: target is not bisected any finer), dB.
SAME_GAIN_DB = 0.02
#: A first guess this far above the gain that ignores the limiter expects heavy limiting,
#: where ``likely_gain``'s one-hop dip is too short a model: the gain is settled by dry
#: runs before the file is written, not after (dB).
ROUGH_GUESS_DB = 1.0
#: Where turning down every hop of a loud block by its own excess asks this much more gain
#: than its loudest hop's dip alone, limiting is heavy and that guess is taken (dB): the
#: rite's quiet spans 0.6-7.0 dB, the whole rite and its spans with music 0.00-0.03.
HEAVY_DB = 0.25


@dataclass(frozen=True, slots=True)
class Mastering:
    """How to master a render.

    Parameters
    ----------
    sample_rate : int, Hz
    width : int
        Channels of the raw render (all stems side by side).
    per_file : int
        Channels of each output file (``width`` is a multiple of it).
    weights : ndarray (per_file,), or (channels,) of ``downmix``
        BS.1770 channel weights of the measured signal.
    measure : callable
        Block → what the meters and the limiter look at (the block, or the stems' sum).
    block_frames : int, samples
    target_lufs : float, LUFS
    ceiling_dbtp : float, dBTP
    progress : bool
        Show a tqdm bar for pass 2 (pass 1's is the renderer's).
    stage : callable or None
        ``stage(text)`` → a context manager around each pass (a log line per stage).
    workers : int >= 1
        2: pass 1's writing and metering run in a process of their own.
    gain_db : float or None, dB
        A gain given (a part at the level of the whole rite's render): applied as it is,
        through the limiter, instead of the gain to ``target_lufs``.
    downmix : Downmix or None
        The render the loudness is measured on (an Atmos master's 5.1), instead of what
        ``measure`` gives (the true peak and the limiter look at that still).
    """

    sample_rate: int
    width: int
    per_file: int
    weights: np.ndarray
    measure: Callable[[np.ndarray], np.ndarray]
    block_frames: int
    target_lufs: float
    ceiling_dbtp: float
    progress: bool = False
    stage: Callable[[str], contextlib.AbstractContextManager] | None = None
    workers: int = 1
    gain_db: float | None = None
    downmix: Downmix | None = None

    def loudness_meter(self) -> LoudnessMeter:
        return LoudnessMeter(self.sample_rate, self.weights, self.downmix)

    def step(self, text: str) -> contextlib.AbstractContextManager:
        return self.stage(text) if self.stage is not None else contextlib.nullcontext()


def measurement(per_file: int, buses: int) -> Callable[[np.ndarray], np.ndarray]:
    """What the meters and the limiter look at: the block, or the sum of the stems."""
    if not buses:
        return lambda block: block
    return lambda block: block.reshape(len(block), buses, per_file).sum(axis=1)


def master(blocks: Iterator[np.ndarray], raw: Path, how: Mastering,
           open_outputs: Callable[[int], contextlib.AbstractContextManager[list]]
           ) -> tuple[LoudnessReport, int]:
    """Run both passes: ``blocks`` through ``raw`` into the writers ``open_outputs(frames)``
    yields (one per file); returns the loudness report and the frames written."""
    with how.step("render pass 1 of 2: rendering and metering"):
        first = _pass_one(blocks, raw, how.measure,
                          how.loudness_meter(), separate=how.workers > 1,
                          block_bytes=4 * how.width * how.block_frames)
    frames, peak = first.frames, first.peak
    measured = first.meter.integrated()
    gain_db = how.target_lufs - measured if math.isfinite(measured) else 0.0
    if how.gain_db is not None:
        gain_db = how.gain_db
    limiter_ceiling = how.ceiling_dbtp - LIMITER_MARGIN_DB
    limit = peak.peak_dbtp + gain_db > limiter_ceiling

    def write(gain: float, again: bool = False) -> tuple[float, float, float]:
        with how.step(f"render pass 2 of 2{' written again, at the settled gain' if again else ''}"
                      f": gain {gain:+.1f} dB, limiter, writing"), \
                open_outputs(frames) as writers, \
                tqdm(total=round(frames / how.sample_rate, 1), unit="s", desc="pass 2",
                     disable=not how.progress, leave=False) as bar:
            return _pass_two(raw, how, gain, limiter_ceiling, limit=limit, write=writers,
                             reference=first, bar=bar)

    if not limit:  # gain only: BS.1770 loudness and true peak scale exactly with it
        _, _, limited = write(gain_db)
        output_lufs, output_peak = measured + gain_db, peak.peak_dbtp + gain_db
    elif how.gain_db is not None:  # the gain given, limited where it must be: written once
        output_lufs, output_peak, limited = write(gain_db)
    else:
        # What the limiter takes off the loudness is known only by limiting: the file is
        # written at a first guess, metered as it is written; only if that misses the
        # target do dry runs, limiting and metering around the loud blocks alone (a dry
        # run measures what the write does, tested), settle the gain for a second write
        # (if it lands 0.05 LU nearer). A guess expecting heavy limiting is settled by dry
        # runs before the one write.
        known: dict[float, float] = {}  # output loudness by gain, written or dry-run

        def loudness_at(gain: float) -> float:
            if gain not in known:
                known[gain] = _dry_run(raw, how, gain, limiter_ceiling, first)
            return known[gain]

        def settled(gain: float, first_slope: float = 1.0) -> float:
            with how.step("settling the gain under the limiter (dry runs around the loud "
                          "blocks)"):
                return settle_gain(loudness_at, gain, how.target_lufs, known=known,
                                   first_slope=first_slope)

        guess = likely_gain(first, gain_db, how.target_lufs, limiter_ceiling)
        # under heavy limiting the guess is rough: a write at it would likely be wasted;
        # settled before the write, its loudness is known, and another try would not land
        rough = guess - gain_db > ROUGH_GUESS_DB
        gain_db = settled(guess, ROUGH_SLOPE) if rough else guess
        output_lufs, output_peak, limited = write(gain_db)
        known[gain_db] = output_lufs
        if not rough and abs(output_lufs - how.target_lufs) >= SETTLE_LU:
            better = settled(gain_db)  # from the written gain's loudness on
            if abs(known[better] - how.target_lufs) < abs(output_lufs - how.target_lufs) - 0.05:
                gain_db = better
                output_lufs, output_peak, limited = write(gain_db, again=True)
    # with a gain given, the level it aims at stands for the target in the report
    target = (how.target_lufs if how.gain_db is None or not math.isfinite(measured)
              else measured + how.gain_db)
    return LoudnessReport(measured, target, gain_db, output_lufs,
                          peak.peak_dbtp + gain_db, output_peak, how.ceiling_dbtp,
                          limited), frames


@dataclass(frozen=True, slots=True)
class _PassOne:
    """What pass 1 measured: frames, the loudness meter with a snapshot after each
    block (for pass 2 to follow), the true-peak meter, and each block's sample peak
    (of what the limiter looks at: where it may act, at a given gain)."""

    frames: int
    meter: LoudnessMeter
    snapshots: list[MeterSnapshot]
    peak: TruePeakMeter
    peaks: np.ndarray
    stored: rawfile.Layout

    def __reduce__(self):
        """Pickled (from the keeping process) with the snapshots as four arrays, not one
        object each: a whole rite's thousands took ~1 s to pickle and ~0.5 s to unpickle
        (py-spy), at the end of pass 1, while the render waits."""
        shots = self.snapshots
        return _unpacked, (self.frames, self.meter, np.array([s.state for s in shots]),
                           np.array([s.partial for s in shots]),
                           [s.partial_count for s in shots], [s.hops for s in shots],
                           self.peak, self.peaks, self.stored)


def _unpacked(frames: int, meter: LoudnessMeter, states: np.ndarray, partials: np.ndarray,
              partial_counts: list[int], hops: list[int], peak: TruePeakMeter,
              peaks: np.ndarray, stored: rawfile.Layout) -> _PassOne:
    return _PassOne(frames, meter, [MeterSnapshot(*shot) for shot in zip(
        states, partials, partial_counts, hops, strict=True)], peak, peaks, stored)


def _pass_one(blocks: Iterator[np.ndarray], raw: Path, measure: Callable,
              meter: LoudnessMeter, *, separate: bool = False, block_bytes: int = 0
              ) -> _PassOne:
    """Pass 1: write the blocks as raw float32 while metering loudness and true peak.

    Writing and metering run beside the rendering: on a background thread (file
    writes, numpy and the K-weighting filters release the GIL), or with
    ``separate`` in a forked process of their own (the rendering's process is
    the busier one), which reads blocks of up to ``block_bytes`` from shared
    memory. Either way the same code meters the same blocks.
    """
    keeper = _Keeper(raw, measure, meter)
    with (_KeepingProcess(keeper, block_bytes) if separate else _KeepingThread(keeper)
          ) as worker:
        for block in blocks:
            worker.write(block)
    assert worker.result is not None, "set when the worker's with block ends without error"
    return worker.result


class _Keeper:
    """Pass 1's work on each block: raw float32 samples to ``raw`` (its sounding columns,
    ``rawfile``), the loudness meter and its snapshot, the true-peak meter and the block's
    sample peak.

    A block is written on a thread of the keeper's own while it is metered (the file's
    writes wait for the disk, past the page cache, and let go of the GIL), and ``keep``
    returns once both are done: the block's memory is then the caller's again (a slot of
    shared memory, ``_Slots``). On the ADM master of s18 (41 tracks, 26 of them metered,
    7 GB of raw file before its silent columns were left out) the keeping process held up
    the render (1.5 s of its main thread waiting for a free slot, py-spy); with the write
    beside the meters, none."""

    def __init__(self, raw: Path, measure: Callable, meter: LoudnessMeter) -> None:
        self.raw, self.measure, self.meter = raw, measure, meter
        self.peak, self.frames = TruePeakMeter(), 0
        self.snapshots: list[MeterSnapshot] = []
        self.peaks: list[float] = []
        self._out: rawfile.RawWriter | None = None
        self._writing: ThreadPoolExecutor | None = None

    def __enter__(self) -> _Keeper:
        self._out = rawfile.RawWriter(self.raw)  # closed by __exit__
        self._writing = ThreadPoolExecutor(1, thread_name_prefix="raw-writer")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._writing is not None:
            self._writing.shutdown()
        if self._out is not None:
            self._out.close()

    def keep(self, block: np.ndarray) -> None:
        assert self._out is not None and self._writing is not None, \
            "keep() inside the keeper's with block"
        written = self._writing.submit(self._out.write, block)
        try:
            measured = self.measure(block)
            self.meter.add(measured)
            self.snapshots.append(self.meter.snapshot())
            peak = sample_peak(measured)  # once: the true-peak meter's bound too
            self.peak.add(measured, bound=peak)
            self.peaks.append(peak)
            self.frames += len(block)
        finally:
            written.result()  # the write's own error names the file

    def result(self) -> _PassOne:
        assert self._out is not None, "result() once the keeper's with block has begun"
        return _PassOne(self.frames, self.meter, self.snapshots, self.peak,
                        np.array(self.peaks), self._out.layout())


class _KeepingThread:
    """Keeps the blocks on a background thread."""

    def __init__(self, keeper: _Keeper) -> None:
        self._keeper = keeper
        self._stack = contextlib.ExitStack()
        self.result: _PassOne | None = None

    def __enter__(self) -> _KeepingThread:
        self._stack.enter_context(self._keeper)
        self._writer = self._stack.enter_context(BlockWriter(self._keeper.keep))
        return self

    def write(self, block: np.ndarray) -> None:
        self._writer.write(block)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stack.__exit__(kind, error, trace)
        if kind is None:
            self.result = self._keeper.result()


def _keep_in_process(conn, other, keeper: _Keeper, slots: _Slots, parent: int) -> None:
    """The keeping process: keep each block handed over (``_Slots``) until the end, then
    send the result. ``parent``: the main process's pid, taken there (read here, it was the
    new parent's where the main process was killed before this one first ran, and this
    one waited for ever).

    Its heap's free pages go back to the system now and then (``releasing_now_and_then``):
    its heap is the render's at the fork, and the chunks free there, once this process
    writes in them, are pages of its own that the raised thresholds
    (``malloc.reuse_freed_memory``) would keep (s18 in hoa3: 40 of its 103 MiB heap free,
    its PSS 118 MiB; 72 with the trims).

    A block comes in its slot (freed once kept) or, if larger than a slot, whole through
    the pipe. An error is sent back (the main process raises it); when the main process
    stops early (Ctrl-C, an error) it says so, and when it is killed this one is orphaned:
    either way this one just ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # and so is the command's SIGTERM
    other.close()  # so the pipe reports EOF if the main process dies
    with contextlib.suppress(EOFError, BrokenPipeError, ConnectionResetError):
        try:
            release = releasing_now_and_then()
            with keeper:
                while (block := slots.take(conn, parent)) is not None:
                    keeper.keep(block)
                    slots.free.release()
                    release()
            answer: _PassOne | BaseException = keeper.result()
        except _Stopped:
            return
        except BaseException as error:
            answer = error
            slots.flags[_FAILED] = 1
        conn.send(answer)


class _Stopped(Exception):
    """The main process stopped pass 1 early, or died."""


_FAILED, _STOPPING = 0, 1  # flags in shared memory: the keeper failed, the main process stops
_BLOCK, _PIPED, _END = 0, 1, 2  # what a slot holds


class _Slots:
    """Blocks handed to a forked process through shared memory, not pickled through a pipe
    (one copy of a whole rite's 3.5 GB of stereo instead of pickling, the pipe's two
    copies and unpickling).

    Slots are used in turn, each with a header saying what it holds (a block, its shape
    and type; a block too large that follows through the pipe; the end); ``free`` counts
    the slots kept and not yet refilled, ``filled`` those handed over and not yet taken.
    So the main thread hands a block over without a system call that lets go of the GIL:
    a pipe's poll and write did, twice a block, and the main thread then waited for the
    GIL behind the bus threads (s18: 1.8 s of the main thread's 47, py-spy).
    """

    COUNT = 8
    _HEAD = struct.Struct("<qqq8s")  # what, frames, channels (-1: a 1-D block), dtype

    def __init__(self, context, block_bytes: int) -> None:
        self.size = block_bytes
        self.memory = mmap.mmap(-1, max(1, block_bytes) * self.COUNT)  # shared with the fork
        self.heads = mmap.mmap(-1, self._HEAD.size * self.COUNT)
        self.flags = mmap.mmap(-1, 2)
        self.free = context.Semaphore(self.COUNT)
        self.filled = context.Semaphore(0)
        self._next = 0  # each process's own: the next slot it fills, or takes

    def hand(self, block: np.ndarray | None, conn, wait: Callable[[], None]) -> None:
        """Hand ``block`` (None: the end) over in the next slot (``wait()`` between tries
        for a free one); a block larger than a slot follows through ``conn``."""
        while not self.free.acquire(timeout=0.5):
            wait()
        slot = self._next
        self._next = (slot + 1) % self.COUNT
        if block is None:
            head = (_END, 0, 0, b"")
        else:
            shape = (block.shape[0], block.shape[1] if block.ndim == 2 else -1)
            head = (_BLOCK if block.nbytes <= self.size else _PIPED, *shape,
                    block.dtype.str.encode())
            if head[0] == _BLOCK:
                self.view(slot, block.shape, block.dtype.str)[...] = block
        self._HEAD.pack_into(self.heads, slot * self._HEAD.size, *head)
        self.filled.release()
        if head[0] == _PIPED:  # after: the keeper reads it once it sees the slot
            conn.send(block)

    def take(self, conn, parent: int) -> np.ndarray | None:
        """In the keeping process: the next block (None at the end); ``_Stopped`` if the
        main process stops early or dies (``parent`` no longer ours)."""
        while not self.filled.acquire(timeout=0.5):
            if os.getppid() != parent:
                raise _Stopped
        if self.flags[_STOPPING]:
            raise _Stopped
        slot = self._next
        self._next = (slot + 1) % self.COUNT
        what, frames, channels, dtype = self._HEAD.unpack_from(self.heads,
                                                               slot * self._HEAD.size)
        if what == _END:
            return None
        if what == _PIPED:
            return conn.recv()
        shape = (frames,) if channels < 0 else (frames, channels)
        return self.view(slot, shape, dtype.rstrip(b"\0").decode())

    def stop(self) -> None:
        """Tell the keeper to stop (no free slot needed)."""
        self.flags[_STOPPING] = 1
        self.filled.release()

    def view(self, slot: int, shape: tuple, dtype: str) -> np.ndarray:
        return np.ndarray(shape, dtype, self.memory, offset=slot * self.size)


class _KeepingProcess:
    """Keeps the blocks in a forked process (same code, another core)."""

    def __init__(self, keeper: _Keeper, block_bytes: int) -> None:
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._slots = _Slots(context, block_bytes)
        self._process = context.Process(target=_keep_in_process,
                                        args=(child, self._conn, keeper, self._slots,
                                              os.getpid()),
                                        daemon=True)
        self._process.start()
        child.close()
        self.result: _PassOne | None = None

    def __enter__(self) -> _KeepingProcess:
        return self

    def write(self, block: np.ndarray) -> None:
        if self._slots.flags[_FAILED]:  # it only answers early to report an error
            self._answer()
        try:
            self._slots.hand(block, self._conn, self._check)
        except (BrokenPipeError, ConnectionResetError):
            self._answer()

    def _check(self) -> None:
        """While waiting for a slot: raise what the process reports, or that it is gone."""
        if self._conn.poll() or not self._process.is_alive():
            self._answer()

    def _answer(self) -> _PassOne:
        try:
            answer = self._conn.recv()
        except EOFError:
            raise RenderError("pass 1's metering process ended without a word (killed?)"
                              ) from None
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def __exit__(self, kind: type | None, *_: object) -> None:
        try:
            if kind is None:
                self._slots.hand(None, self._conn, self._check)
                self.result = self._answer()
            else:
                self._slots.stop()
        finally:
            self._conn.close()
            self._process.join(timeout=5)
            if self._process.is_alive():
                self._process.terminate()
            self._slots.memory.close()


def settle_gain(loudness_at: Callable[[float], float], gain_db: float, target: float,
                *, known: dict[float, float] | None = None, first_slope: float = 1.0,
                tries: int = 8, tolerance: float = SETTLE_LU) -> float:
    """The gain (dB) whose limited output lands nearest ``target`` LUFS, by dry runs.

    Limiting makes output loudness grow more slowly than the gain (~0.4 LU a dB under
    heavy limiting), and gating makes it stand still over a dB or two and then jump, so
    each next gain comes from every output measured so far (``known`` ones too, gain →
    LUFS; ``_next_gain``; from one output, a step along ``first_slope``). It stops within
    ``tolerance``, after ``tries`` dry runs, where the next gain is within
    ``SAME_GAIN_DB`` of one tried (a jump across the target), or where the output stood
    still over the last two steps (a level it cannot reach). Returns the best gain tried.
    Stepping by the error alone took four dry runs to come within 0.23 LU of the target on
    a quiet span of the rite brought up 30 dB, and stalled 0.8 LU short on another's
    plateau (docs/render.md, "Metering costs").
    """
    points = {gain: lufs for gain, lufs in (known or {}).items() if math.isfinite(lufs)}
    flat = 0  # steps in a row over which the output stood still
    for _ in range(tries):
        lufs = loudness_at(gain_db)
        if not math.isfinite(lufs):
            break
        if points:
            before = min(points, key=lambda gain: abs(gain - gain_db))
            rise = (lufs - points[before]) / (gain_db - before) if gain_db != before else 1.0
            flat = flat + 1 if rise < MIN_SLOPE / 4 else 0
        points[gain_db] = lufs
        if abs(target - lufs) < tolerance or flat >= 2:
            break
        step = _next_gain(points, target, first_slope)
        if min(abs(step - gain) for gain in points) < SAME_GAIN_DB:
            break
        gain_db = step
    if not points:
        return gain_db
    return min(points, key=lambda gain: abs(target - points[gain]))


def _next_gain(points: dict[float, float], target: float, first_slope: float = 1.0) -> float:
    """The gain to try next, from the outputs measured at ``points`` (gain → finite LUFS):
    between the nearest gains either side of the target once it is bracketed (interpolated,
    or halfway where that would land within a tenth of the bracket of an end), else a step
    from the one nearest the target along the slope to the next nearest (with one point,
    ``first_slope``), the slope held within ``[MIN_SLOPE, 1]`` and the step within
    ``MAX_STEP_DB``."""
    below = [gain for gain, lufs in points.items() if lufs < target]
    above = [gain for gain, lufs in points.items() if lufs > target]
    if below and above:
        low, high = max(below), min(above)
        width = high - low
        guess = low + (target - points[low]) * width / (points[high] - points[low])
        inside = min(low, high) + 0.1 * abs(width) <= guess <= max(low, high) - 0.1 * abs(width)
        return guess if inside else (low + high) / 2
    nearest, *rest = sorted(points, key=lambda gain: abs(target - points[gain]))
    slope = first_slope
    if rest:
        other = rest[0]
        slope = (points[nearest] - points[other]) / (nearest - other)
        slope = min(1.0, max(MIN_SLOPE, slope))
    step = (target - points[nearest]) / slope
    return nearest + min(MAX_STEP_DB, max(-MAX_STEP_DB, step))


def likely_gain(reference: _PassOne, gain_db: float, target: float, ceiling_db: float,
                *, steps: int = 20) -> float:
    """A first guess (dB) of the gain whose limited output lands on ``target`` LUFS, from
    pass 1's measurements alone: the file is written at it, and dry runs settle the gain
    only if the write misses; a guess over ``ROUGH_GUESS_DB`` above ``gain_db`` (heavy
    limiting) is settled by dry runs before the file is written.

    At a gain, each block whose sample peak tops the ceiling has its loudest 100 ms hop
    turned down by as much as the peak tops it (the limiter's dip around a peak lasts
    about one hop); the gain is stepped by the error of that estimate. On the whole rite
    it picks +12.30 dB, where the file written measures −23.01 LUFS. Under heavy limiting
    one hop is too short a model: a loud note keeps topping the ceiling hop after hop as
    it dies away, and each of those hops is turned down too (``_every_hop``). Where that
    model asks more than ``HEAVY_DB`` over the one-hop dip, its guess is taken: on the
    rite's quiet spans brought up 24-28 dB, 0.04-0.7 dB from the gain the dry runs settle
    (the one-hop dip: 0.6-6.9 dB under it), docs/render.md "Metering costs".
    """
    power = reference.meter.hops @ reference.meter.weights
    edges = [0, *(snapshot.hops for snapshot in reference.snapshots)]
    one_hop = _guessed(_one_hop(power, edges), reference.peaks, power, gain_db, target,
                       ceiling_db, steps)
    every_hop = _guessed(_every_hop(power, edges), reference.peaks, power, gain_db, target,
                         ceiling_db, steps)
    return every_hop if every_hop - one_hop > HEAVY_DB else one_hop


def _guessed(turn_down: Callable[[np.ndarray, int, float], None], peaks: np.ndarray,
             power: np.ndarray, gain_db: float, target: float, ceiling_db: float,
             steps: int) -> float:
    """The gain whose hops' ``power``, each block's turned down by ``turn_down(scaled,
    block, turned)`` where its sample peak tops the ceiling by 1/``turned``, measure
    ``target`` (within 0.01 LU, or after ``steps`` steps by the error)."""
    for _ in range(steps):
        gain = 10 ** (gain_db / 20)
        turned = np.minimum(1.0, 10 ** (ceiling_db / 20) / np.maximum(peaks * gain, 1e-30))
        scaled = power * gain**2
        for block in np.flatnonzero(turned < 1.0):
            turn_down(scaled, int(block), turned[block])
        estimate = integrated_loudness(scaled[:, None], np.ones(1))
        if not math.isfinite(estimate) or abs(target - estimate) < 0.01:
            break
        gain_db += target - estimate
    return gain_db


def _one_hop(power: np.ndarray, edges: list[int]) -> Callable[[np.ndarray, int, float], None]:
    """A block's loudest hop turned down by its peak's excess (a block without hops: none)."""
    loudest = [first + int(np.argmax(power[first:last])) if last > first else -1
               for first, last in itertools.pairwise(edges)]

    def turn_down(scaled: np.ndarray, block: int, turned: float) -> None:
        if loudest[block] >= 0:
            scaled[loudest[block]] *= turned ** 2
    return turn_down


def _every_hop(power: np.ndarray, edges: list[int]) -> Callable[[np.ndarray, int, float], None]:
    """Each hop of a block turned down by its own excess, its peak taken as the block's
    times the square root of its power's share of the loudest hop's (one crest factor a
    block): the loudest by the block's excess, those 6 dB quieter by 6 dB less."""
    shares = [power[first:last] / top if (top := power[first:last].max(initial=0.0)) > 0
              else None for first, last in itertools.pairwise(edges)]

    def turn_down(scaled: np.ndarray, block: int, turned: float) -> None:
        share = shares[block]
        if share is not None:
            hops = slice(edges[block], edges[block + 1])
            scaled[hops] *= np.minimum(1.0, turned**2 / np.maximum(share, 1e-30))
    return turn_down


def _pass_two(raw: Path, how: Mastering, gain_db: float, ceiling_db: float, *, limit: bool,
              write: list, reference: _PassOne, bar: tqdm | None = None
              ) -> tuple[float, float, float]:
    """Pass 2: gain, limiter, writing; returns output LUFS, true peak, limiter dB.

    Without ``limit`` only the gain is applied: loudness and true peak scale
    exactly with it, so the caller takes them from pass 1 (NaN returned here).
    The loudness meter filters only around where the limiter acted; elsewhere the
    output is the raw signal times the gain, so it follows pass 1's meter
    (``LoudnessMeter.follow``). Only the runs of blocks within the limiter's reach of
    a block that pass 1's peaks show loud go through the limiter (resumed from the
    samples before each run); the rest is written as it is read.
    """
    gain = 10 ** (gain_db / 20)
    per_file, measure = how.per_file, how.measure

    def emit(block: np.ndarray, scale: float) -> None:
        for i, writer in enumerate(write):
            writer.write(block[:, i * per_file:(i + 1) * per_file], scale)
        if bar is not None:
            bar.update(len(block) / how.sample_rate)

    if not limit:  # the writers scale the raw samples as they convert them
        for _, chunk in _read_raw(raw, reference.stored, how.block_frames):
            emit(chunk, gain)
        return math.nan, math.nan, 0.0
    meter = how.loudness_meter()
    peak = TruePeakMeter()
    settle = how.sample_rate // 2  # unlimited frames after which K-weighting forgets the limiter
    clean = settle
    index = 0
    elsewhere: dict[int, tuple[int, int]] = {}  # block → frames measured by _run_gains

    def finished(blocks: list[tuple[np.ndarray, bool, float, float]]) -> None:
        """Meter and write each (block, whether the limiter touched it, its scale, the true
        peak of a run's inner frames or 0): a raw block comes as read, with the gain as its
        scale, and is scaled only where the meters need its samples. The true peak of a
        limited run but its ends (``_inner``) is measured on the limiter's side."""
        nonlocal clean, index
        for chunk, touched, scale, elsewhere_peak in blocks:  # pass 1's blocks when read raw
            if elsewhere_peak:  # of a run's frames left out below: it counts, and it spares
                peak.include(elsewhere_peak)  # scanning what cannot top it
            for start in range(0, len(chunk), how.block_frames):
                block = chunk[start:start + how.block_frames]
                # the limiter only turns down, so pass 1's sample peak times the gain bounds
                # the block's (the margin covers the stems' sum, taken in float32 there)
                bound = float(reference.peaks[index]) * gain * (1.0 + 1e-6)
                clean = 0 if touched else clean
                inner = elsewhere.get(index, (0, 0))  # the true peak the limiter's side has
                if clean >= settle:
                    meter.follow(reference.meter, reference.snapshots[index], gain)
                    peak.add(measure(block), scale=scale, bound=bound, elsewhere=inner)
                else:
                    measured = measure(block if scale == 1.0 else
                                       np.multiply(block, scale, dtype=np.float64))
                    meter.add(measured)
                    clean += 0 if touched else len(block)
                    peak.add(measured, bound=bound, elsewhere=inner)
                index += 1
            emit(chunk, scale)

    # only the runs of blocks within the limiter's reach of a loud one go through it (its
    # output elsewhere is the input, exactly); the limiter's gains made beside this (with
    # two workers in a process of its own, ahead: its Python does not wait on this one's
    # GIL), the meters and the writing on a thread beside it
    reach = math.ceil(TruePeakLimiter.reach_of(how.sample_rate) / how.block_frames)
    runs = dict(_runs(np.flatnonzero(_loud_blocks(reference.peaks, gain, ceiling_db)),
                      reach, reach, len(reference.peaks)))
    starts, size = sorted(runs), how.block_frames
    reduction = 0.0
    elsewhere.update((i, _inner(first, last, how, reference.frames))
                     for first, last in runs.items() for i in range(first, last))
    with _limiter_gains(raw, how, gain, ceiling_db, reference, sorted(runs.items())
                        ) as gains, BlockWriter(finished, name="pass2-meter") as worker:
        last = 0

        def limited(scaled: np.ndarray | None, after: bool = False
                    ) -> list[tuple[np.ndarray, bool, float, float]]:
            """The next limited blocks once ``scaled`` (or, ``after``, the look-ahead past
            the run) has gone in."""
            nonlocal reduction
            if scaled is not None:
                lagged.push(scaled)
            frames, g, reduction, run_peak = next(gains)
            blocks = aligned.push(lagged.take(frames, g), g is not None)
            return _as_scaled(blocks + aligned.rest() if after else blocks, run_peak or 0.0)

        for first, chunk in _read_raw(raw, reference.stored, size):
            count = -(-len(chunk) // size)
            if first >= last and bisect.bisect_left(starts, first) == bisect.bisect_left(
                    starts, first + count):  # no run here: the chunk goes on whole
                worker.write([(chunk, False, gain, 0.0)])
                continue
            for i in range(first, first + count):
                block = chunk[(i - first) * size:(i - first + 1) * size]
                if i in runs:  # a run starts
                    last = runs[i]
                    lagged, aligned = _Lagged(), _Realign(size)
                if i >= last:
                    worker.write([(block, False, gain, 0.0)])
                    continue
                worker.write(limited(np.multiply(block, gain, dtype=np.float64)))
                if i == last - 1:  # the limiter's look-ahead past the run: its last frames
                    worker.write(limited(None, after=True))
    return meter.integrated(), peak.peak_dbtp, reduction


def _run_gains(raw: Path, how: Mastering, gain: float, ceiling_db: float, reference: _PassOne,
               runs: list[tuple[int, int]]
               ) -> Iterator[tuple[int, tuple[int, np.ndarray] | None, float, float | None]]:
    """For each run of blocks ``[first, last)``, in order, the limiter's gains block by
    block, resumed from the samples before the run, and then for its look-ahead past the
    run (``TruePeakLimiter.gains``, as ``_turned``), with the limiter's largest reduction
    so far (dB) and, with the last, the true peak of the limited run but its ends
    (``_inner``: pass 2's meter leaves them out)."""
    limiter = TruePeakLimiter(ceiling_db, how.sample_rate, how.width, key=how.measure)
    size, reach = how.block_frames, limiter.reach
    top = 0.0  # the runs' largest true peak so far: what a run's need not be scanned under
    for first, last in runs:
        lo, hi = first * size, min(last * size, reference.frames)
        limiter.resume(_scaled(raw, how, gain, lo - reach, lo, reference))
        lagged, peak = _Lagged(), _RunPeak(top)
        for scaled in _scaled_blocks(raw, how, gain, lo, hi, reference):
            lagged.push(scaled)
            frames, gains = _turned(*limiter.gains(scaled))
            peak.add(how.measure(lagged.take(frames, gains)))
            yield frames, gains, limiter.gain_reduction_db, None
        frames, gains = _turned(*limiter.gains(_scaled(raw, how, gain, hi, hi + reach,
                                                       reference)))
        peak.add(how.measure(lagged.take(frames, gains)))
        top = max(top, peak.peak)
        yield frames, gains, limiter.gain_reduction_db, peak.peak


def _inner(first: int, last: int, how: Mastering, frames: int) -> tuple[int, int]:
    """The frames of the run of blocks ``[first, last)`` whose output true peak the limiter's
    side measures (``_RunPeak``): all but the ``TruePeakMeter.REACH`` at either end, whose
    neighbours outside the run pass 2's meter has."""
    lo, hi = first * how.block_frames, min(last * how.block_frames, frames)
    lo, hi = lo + TruePeakMeter.REACH, hi - TruePeakMeter.REACH
    return (lo, hi) if hi > lo else (0, 0)


class _RunPeak:
    """The true peak of a limited run's frames fed in order, but the first and last
    ``TruePeakMeter.REACH`` (``_inner``), or ``floor`` if larger."""

    def __init__(self, floor: float = 0.0) -> None:
        self._head: list[np.ndarray] = []
        self._meter: TruePeakMeter | None = None
        self._floor = floor  # a true peak measured before: only what tops it matters

    def add(self, x: np.ndarray) -> None:
        if not len(x):
            return
        if self._meter is None:  # the first frames: the context of the next
            self._head.append(x)
            head = np.concatenate(self._head)
            if len(head) < TruePeakMeter.REACH:
                return
            self._meter = TruePeakMeter(context=head[:TruePeakMeter.REACH])
            self._meter.include(self._floor)
            x = head[TruePeakMeter.REACH:]
        if len(x):
            self._meter.add(x)

    @property
    def peak(self) -> float:
        """The run's true peak, or the floor if larger."""
        return self._floor if self._meter is None else self._meter.measured_peak


@contextlib.contextmanager
def _limiter_gains(raw: Path, how: Mastering, gain: float, ceiling_db: float,
                   reference: _PassOne, runs: list[tuple[int, int]]
                   ) -> Iterator[Iterator[tuple[int, tuple[int, np.ndarray] | None, float,
                                                float | None]]]:
    """``_run_gains``, made here as they are asked for (one worker), or with two workers in
    a forked process, ahead (``_MadeAhead``)."""
    made = _run_gains(raw, how, gain, ceiling_db, reference, runs)
    if how.workers < 2 or not runs:
        yield made
        return
    with _MadeAhead(made) as ahead:
        yield ahead


class _MadeAhead:
    """The items of an iterator made in a forked process, ahead of their use (up to
    ``AHEAD`` waiting here), received by a thread. An error there is raised here, at
    the item it stopped at; leaving the ``with`` block early ends the process."""

    AHEAD = 32

    def __init__(self, items: Iterator) -> None:
        context = multiprocessing.get_context("fork")
        self._conn, theirs = context.Pipe(duplex=False)
        self._process = context.Process(target=_send_all, args=(items, theirs, self._conn),
                                        daemon=True)
        self._process.start()
        theirs.close()
        self._queue: queue.Queue = queue.Queue(self.AHEAD)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="limiter-gains",
                                        daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._done.is_set():
            try:
                item = self._conn.recv()
            except (EOFError, OSError):
                item = RenderError("the limiter's helper process ended without a word "
                                   "(killed?)")
            while not self._done.is_set():
                with contextlib.suppress(queue.Full):
                    self._queue.put(item, timeout=0.5)
                    break
            if item is None or isinstance(item, BaseException):
                return

    def __iter__(self) -> _MadeAhead:
        return self

    def __next__(self):
        item = self._queue.get()
        if item is None:
            raise StopIteration
        if isinstance(item, BaseException):
            raise item
        return item

    def __enter__(self) -> _MadeAhead:
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        if self._process.is_alive():  # stopped early: the items are not wanted
            self._process.terminate()
        self._process.join(timeout=5)
        self._thread.join(timeout=5)
        self._conn.close()


def _send_all(items: Iterator, conn, other) -> None:
    """The forked process of ``_MadeAhead``: each item through ``conn``, then None (or
    the error that stopped it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # and so is the command's SIGTERM
    other.close()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        try:
            for item in items:
                conn.send(item)
            answer: BaseException | None = None
        except BaseException as error:  # handed to the main process, which raises it
            answer = error
        conn.send(answer)


def _as_scaled(blocks: list[tuple[np.ndarray, bool]], elsewhere_peak: float = 0.0
               ) -> list[tuple[np.ndarray, bool, float, float]]:
    """The limiter's blocks for ``finished``: their samples are scaled already; the first
    carries ``elsewhere_peak`` (a run's true peak from ``_run_gains``, or 0)."""
    return [(block, touched, 1.0, elsewhere_peak if not i else 0.0)
            for i, (block, touched) in enumerate(blocks)]


def _scaled(raw: Path, how: Mastering, gain: float, start: int, stop: int,
            reference: _PassOne) -> np.ndarray:
    """Frames ``start…stop-1`` of the raw file times ``gain``, in float64 (silence outside it)."""
    out = np.zeros((stop - start, how.width))
    lo, hi = max(0, start), min(stop, reference.frames)
    if hi > lo:
        np.multiply(rawfile.read(raw, reference.stored, lo, hi), gain,
                    out=out[lo - start:hi - start], dtype=np.float64)
    return out


def _scaled_blocks(raw: Path, how: Mastering, gain: float, lo: int, hi: int,
                   reference: _PassOne) -> Iterator[np.ndarray]:
    """``_scaled`` of frames ``lo…hi-1`` a block at a time (the last may be shorter), read
    up to ``directio.STAGE_BYTES`` of the raw file at once (a read a block queued behind
    pass 2's larger reads and writes); a block at least (float64 here: a wide master's
    four would be 63 MB)."""
    size = how.block_frames
    span = size * max(1, _blocks_staged(how.width, size))
    for at in range(lo, hi, span):
        scaled = _scaled(raw, how, gain, at, min(at + span, hi), reference)
        for start in range(0, len(scaled), size):
            yield scaled[start:start + size]


def _loud_blocks(peaks: np.ndarray, gain: float, ceiling_db: float) -> np.ndarray:
    """Per block: whether, at ``gain``, its sample peak is within 6 dB of the ceiling (only
    there can the true peak reach it: see TruePeakMeter)."""
    return 2.0 * gain * peaks >= 10 ** (ceiling_db / 20)


def _dry_run(raw: Path, how: Mastering, gain_db: float, ceiling_db: float,
             reference: _PassOne) -> float:
    """Integrated loudness (LUFS) of the limited output at ``gain_db``, without writing it.

    Away from the loud blocks the output is the raw signal times the gain, whose 100 ms
    hops are pass 1's times gain²; around each run of loud blocks (with the limiter's
    reach before and after, and the K-weighting's settling after), the raw samples are
    read, limited and metered, and their hops put in place of pass 1's. With two
    workers a forked process meters half of the runs (they are independent).
    """
    gain = 10 ** (gain_db / 20)
    size, reach = how.block_frames, TruePeakLimiter.reach_of(how.sample_rate)
    loud = np.flatnonzero(_loud_blocks(reference.peaks, gain, ceiling_db))
    hops = reference.meter.hops * gain**2
    # the limiter reaches ``reach`` either side of a loud block; the K-weighting has
    # forgotten the limiter's work half a second later (then pass 1's hops hold again)
    before, after = math.ceil(reach / size), math.ceil((reach + how.sample_rate // 2) / size)
    runs = list(_runs(loud, before, after, len(reference.peaks)))
    metered = _meter_runs_in_two if how.workers > 1 and len(runs) > 1 else _meter_runs
    for start, stretch in metered(raw, how, gain, ceiling_db, reference, runs):
        stretch = stretch[:len(hops) - start]
        hops[start:start + len(stretch)] = stretch
    return integrated_loudness(hops, reference.meter.weights)


def _meter_runs(raw: Path, how: Mastering, gain: float, ceiling_db: float,
                reference: _PassOne, runs: list[tuple[int, int]]
                ) -> list[tuple[int, np.ndarray]]:
    """For each run of blocks ``[first, last)``: the hops of its limited output (from the
    limiter's look-ahead past it), and the index of the first."""
    limiter = TruePeakLimiter(ceiling_db, how.sample_rate, how.width, key=how.measure)
    size, reach = how.block_frames, limiter.reach
    metered = []
    for first, last in runs:
        lo, hi = first * size, min(last * size, reference.frames)
        limiter.resume(_scaled(raw, how, gain, lo - reach, lo, reference))
        meter = (reference.meter.resumed(reference.snapshots[first - 1], gain) if first
                 else how.loudness_meter())
        # block by block (memory stays bounded), then the limiter's look-ahead past the
        # run (silence after the end), which makes it give out the run's last frames
        for scaled in itertools.chain(_scaled_blocks(raw, how, gain, lo, hi, reference),
                                      [_scaled(raw, how, gain, hi, hi + reach, reference)]):
            meter.add(how.measure(limiter.process(scaled)))
        metered.append((reference.snapshots[first - 1].hops if first else 0, meter.hops))
    return metered


def _meter_runs_in_two(raw: Path, how: Mastering, gain: float, ceiling_db: float,
                       reference: _PassOne, runs: list[tuple[int, int]]
                       ) -> list[tuple[int, np.ndarray]]:
    """``_meter_runs``, the later runs (half of the blocks) in a forked process."""
    blocks = np.cumsum([last - first for first, last in runs])
    half = max(1, min(len(runs) - 1, int(np.searchsorted(blocks, blocks[-1] / 2))))
    context = multiprocessing.get_context("fork")
    mine, theirs = context.Pipe()

    def serve() -> None:
        mine.close()
        try:
            answer: list[tuple[int, np.ndarray]] | BaseException = _meter_runs(
                raw, how, gain, ceiling_db, reference, runs[half:])
        except BaseException as error:  # handed to the main process, which raises it
            answer = error
        with contextlib.suppress(BrokenPipeError):
            theirs.send(answer)

    process = context.Process(target=serve, daemon=True)
    process.start()
    theirs.close()
    try:
        metered = _meter_runs(raw, how, gain, ceiling_db, reference, runs[:half])
        try:
            later = mine.recv()
        except EOFError:
            raise RenderError("a dry run's helper process ended without a word (killed?)"
                              ) from None
        if isinstance(later, BaseException):
            raise later
        return metered + later
    finally:
        mine.close()
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()


def _runs(indices: np.ndarray, before: int, after: int, count: int
          ) -> Iterator[tuple[int, int]]:
    """Merged ranges ``[index − before, index + after]`` (half-open, within 0…count)."""
    run: tuple[int, int] | None = None
    for index in indices:
        lo, hi = max(0, int(index) - before), min(count, int(index) + after + 1)
        if run is not None and lo <= run[1]:
            run = (run[0], max(run[1], hi))
            continue
        if run is not None:
            yield run
        run = (lo, hi)
    if run is not None:
        yield run


def _read_raw(raw: Path, stored: rawfile.Layout, block_frames: int
              ) -> Iterator[tuple[int, np.ndarray]]:
    """Pass 1's raw file, ``_read_blocks`` of pass 1's blocks at a time, as (index of the
    first block, their frames); the next two are read on threads while these are used
    (``rawfile.chunks``)."""
    frames = block_frames * _read_blocks(stored.width, block_frames)
    for start, chunk in rawfile.chunks(raw, stored, frames):
        yield start // block_frames, chunk


def _read_blocks(width: int, block_frames: int) -> int:
    """Pass 1's blocks pass 2 reads and hands on at a time: those of ``directio.STAGE_BYTES``
    of float32 (a few requests side by side on the disk), and never fewer than
    ``_READ_BLOCKS``: each hand-over between its threads (reading, limiting, metering,
    converting, writing) wakes one, and a whole rite's ~9000 blocks one at a time made
    ~45 000 of them."""
    return max(_READ_BLOCKS, _blocks_staged(width, block_frames))


def _blocks_staged(width: int, block_frames: int) -> int:
    """Pass 1's blocks of ``width`` float32 tracks in ``directio.STAGE_BYTES`` (maybe 0)."""
    return directio.STAGE_BYTES // (4 * max(1, width) * block_frames)


#: The fewest of pass 1's blocks pass 2 reads at a time (``_read_blocks``).
_READ_BLOCKS = 4


class _Lagged:
    """A limited run's scaled samples, held until the limiter's gains for them come."""

    def __init__(self) -> None:
        self._queue = _Realign(1)

    def push(self, scaled: np.ndarray) -> None:
        self._queue.push_only(scaled)

    def take(self, frames: int, turned: tuple[int, np.ndarray] | None) -> np.ndarray:
        """The next ``frames`` frames, those from ``turned``'s first on times its gains
        (``_turned``; as they are for None), as the limiter gives them out."""
        x, _ = self._queue.take(frames) if frames else (np.zeros((0, 0)), False)
        if turned is None:
            return x
        first, gain = turned
        out = np.array(x)  # x × 1.0 is x: only the frames turned down are multiplied
        out[first:first + len(gain)] *= gain[:, None]
        return out


def _turned(frames: int, gain: np.ndarray | None
            ) -> tuple[int, tuple[int, np.ndarray] | None]:
    """``TruePeakLimiter.gains``'s answer with only the stretch of gains under 1 (its first
    frame and gains): what crosses to pass 2's main process is a few thousand frames,
    not a block."""
    if gain is None:
        return frames, None
    under = np.flatnonzero(gain < 1.0)
    return frames, (int(under[0]), gain[under[0]:under[-1] + 1].copy())


class _Realign:
    """Re-cuts the limiter's output (late by its look-ahead) at pass 1's block edges,
    each block flagged if the limiter turned down any chunk that went into it."""

    def __init__(self, block_frames: int) -> None:
        self.size = block_frames
        self._chunks: list[tuple[np.ndarray, bool]] = []
        self._frames = 0

    def push(self, chunk: np.ndarray, touched: bool) -> list[tuple[np.ndarray, bool]]:
        self.push_only(chunk, touched)
        blocks = []
        while self._frames >= self.size:
            blocks.append(self.take(self.size))
        return blocks

    def push_only(self, chunk: np.ndarray, touched: bool = False) -> None:
        """Hold ``chunk`` without cutting blocks off."""
        if len(chunk):
            self._chunks.append((chunk, touched))
            self._frames += len(chunk)

    def rest(self) -> list[tuple[np.ndarray, bool]]:
        return [self.take(self._frames)] if self._frames else []

    def take(self, frames: int) -> tuple[np.ndarray, bool]:
        """The next ``frames`` held (at most as many as are), and whether any was touched."""
        parts, touched, need = [], False, frames
        while need:
            chunk, flag = self._chunks[0]
            part = chunk[:need]
            parts.append(part)
            touched |= flag
            need -= len(part)
            if len(part) == len(chunk):
                self._chunks.pop(0)
            else:
                self._chunks[0] = (chunk[len(part):], flag)
        self._frames -= frames
        return (parts[0] if len(parts) == 1 else np.concatenate(parts)), touched
