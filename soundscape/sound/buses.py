"""Buses: notes made, heard and mixed at the rate their sound needs, then brought up together.

A model whose sound holds nothing above some frequency says so (``WORKING_HZ``: the
voice 20 kHz, the courtyard's bed 16 kHz; see ``synth.working_hz``). Its notes are
rendered, spatialised and mixed at the lowest whole fraction of the output rate that
is still at least that (16 kHz of a 48 kHz render), on a bus of their own, and the
bus's mix is upsampled once, block by block, into the output. The spatialiser's
FFTs and the heard notes of such a bus are a third of their size at 48 kHz. Notes a
model says never repeat (``REPEATS = False``: the bed's segments and the calls, each its
own rendering) are not kept.

The upsampler is the same polyphase Kaiser low-pass the models use
(``synth._common.upsample``), run as a causal FIR across blocks; its delay is
taken off where notes are placed, so a bus's onsets land where the output's do.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import signal

from soundscape.errors import RenderError
from soundscape.performance import Performance
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.lines import CHUNK, Lines
from soundscape.sound.mix import Accumulator
from soundscape.sound.notes import ByteLru, DryNotes, NoteHandoff, Voice, event_variants
from soundscape.sound.panning import Panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.spatialise import GUARD, HeardNote, HeardNotes, Spatialiser
from soundscape.sound.tail import Tail

__all__ = ["LONG_S", "Bus", "Buses", "Upsampler"]

#: Notes at least this long (s) go on lines even from a place of their own: heard whole, a
#: run of footsteps of 25 s heard through 15 paths was held at once in both processes (its
#: paths, 58 MiB, and its 16 channels in the mix, 77 MiB), where a line holds its dry note
#: and hears it a chunk at a time.
LONG_S = 10.0

#: Zero crossings of the upsampler's low-pass on each side (resample_poly's own: 10).
_HALF_TAPS = 10
#: Input samples per row of the upsampler's product: a row of ``_GROUP + 20`` samples makes
#: ``_GROUP·factor`` outputs (``_GROUP + 19`` and ``_GROUP·(factor − 1)`` with phase 0 apart),
#: so a smaller group wastes less of the banded matrix (28 products an output sample, not 52
#: with 32) and its band fits the cache. With phase 0 apart, the buses' upsamplers' thread
#: CPU replaying the first 300 calls of s18 (its real blocks, ×2 and ×3), min of 9 on a
#: loaded machine: ×3 0.178 s with 8 against 0.435 with 12 (another run 0.154 against
#: 0.172; 6: 0.158, 10: 0.170), ×2 0.164 against 0.148 (noise's size).
_GROUP = 8
#: Up to this many columns, ``sounding`` asks each column on its own.
_FEW_COLUMNS = 4
#: Up to this factor the upsampler's phase 0 is made apart (``Upsampler``).
_APART_UP_TO = 3
#: The upsampler multiplies only the columns that sound when fewer than 1/_SCATTER of them
#: do, and every column otherwise: a silent column's product is +0 to the bit, and placing
#: the others' into a block of zeros costs about six columns' products (12 columns ×3–×6,
#: 8 192 frames: 1.6–1.9 ms against 1.2–1.3 ms with the LFE multiplied, measured).
_SCATTER = 2
#: Frames ``sounding`` looks at first.
_FIRST_FRAMES = 256
#: Input frames brought up at a time (``Upsampler.feed``): a chunk of the lines (57 344
#: frames) at once made its whole output and the product's rows before it (the court
#: tail's at ×6 and 16 channels: 22 MiB each, and the windows' copy 13 MiB) while the
#: output waited 7 s of blocks to be handed out.
PIECE = 8192


def sounding(block: np.ndarray) -> np.ndarray:
    """Which columns of ``(frames, channels)`` are not all zero. Most blocks sound in every
    column from their first frames, which a look at those tells (0.01 ms); the columns
    silent there are asked each on its own, as a column's own ``any()`` reads it faster than
    ``any(axis=0)`` reads every column (a stereo chunk: 0.15 against 1.25 ms; 7.1.4's 8 192
    frames with the LFE silent: 0.02 against 0.17 ms); past a few such columns the strided
    reads cost more."""
    first = np.asarray(block[:_FIRST_FRAMES].any(axis=0))
    if first.all():
        return first
    quiet = np.flatnonzero(~first)
    if len(quiet) > _FEW_COLUMNS:
        return np.asarray(block.any(axis=0))
    for column in quiet:  # a loudspeaker layout's LFE: every block of 7.1.4 asked it alone
        first[column] = block[:, column].any()
    return first


class Upsampler:
    """A stream of ``(frames, channels)`` blocks at ``factor`` times their rate.

    A causal polyphase FIR (Kaiser β 5, ``2·10·factor + 1`` taps, as
    ``scipy.signal.resample_poly``): output sample ``f·n + p`` is phase ``p``'s 21 taps
    against the input's last 21 samples. The input is cut into groups of ``_GROUP``
    samples; each group's ``_GROUP·factor`` outputs are one row of the product of the
    groups' windows (the group and the 20 samples before it) with a banded matrix of
    the taps. One BLAS product per block with a small inner size wins over 21 taps per
    sample in a loop: 2.5× faster than one window per sample, which copied each input
    sample 21 times (measured on 16 384 stereo frames × 3). Each block continues the
    last; the bus feeds it blocks of one size (``CHUNK``), so its bits do not depend on
    the render's blocks. It lags its input by ``delay`` input samples.

    The windows are cut from each channel's row (its history, then the block), and a few
    channels are interleaved into the output one column at a time: numpy's transposed copy
    of a ``(2, n)`` product runs its inner loop over the two channels (1.14 against 0.18 ms
    for 57 344 stereo frames × 3). Only the columns that sound are multiplied (the rows of
    the product change the bits of BLAS's sums: a column's bits are the same with or
    without a silent one beside it).

    Up to ×3 (``_APART_UP_TO``) phase 0 is kept out of the product: it is the centre tap
    alone (its others fall on the sinc's zeros), the input scaled, and the band then has
    ``factor − 1`` phases of 20 taps: a third (×3) or half (×2) of the products gone.
    Replaying s18's first 300 calls (its real blocks), thread CPU, min of 15 on a loaded
    machine: ×3 0.401 → 0.162 s, ×2 0.165 → 0.141 s (with ``_GROUP`` 8, not 12). ×6 (the
    court's tail) gains nothing (the strided copies of five phases into the output cost
    what the product saves) and keeps the full band and its bits. Against the full band,
    s18's 24-bit output moves by one step in 0.23 % of its samples (float32 rounding).

    ``group`` sets the input samples per row (the court's tail: 8 at ×6, ``tail._UP_GROUP``);
    the bits depend on it (the order of BLAS's sums), not on anything else.
    """

    delay = _HALF_TAPS

    def __init__(self, factor: int, channels: int, group: int = _GROUP) -> None:
        self.factor = factor
        self.group = group
        self._queue: deque[np.ndarray | int] = deque()  # pieces fed, not yet brought up
        taps = factor * signal.firwin(2 * _HALF_TAPS * factor + 1, 1.0 / factor,
                                      window=("kaiser", 5.0))
        width = 2 * _HALF_TAPS + 1
        phases = np.zeros((width, factor))
        for phase in range(factor):
            own = taps[phase::factor]
            phases[:len(own), phase] = own
        # phase 0 is the centre tap alone: its other taps fall on the sinc's zeros (|h| <
        # 4e-17, under float32's rounding of any sum they join), so where it is made apart
        # its outputs are the input HALF_TAPS samples back, scaled; the other phases have
        # a tap fewer (they meet the input's last 2·HALF_TAPS samples)
        self._apart = factor <= _APART_UP_TO
        self._centre = np.float32(taps[_HALF_TAPS * factor])
        if self._apart:
            phases, width = phases[:-1, 1:], width - 1
        # row j of a window meets input sample n − width + 1 + j (oldest first); a group's
        # output n is the window's rows n…n + width − 1 against the reversed phases
        band = np.zeros((group + width - 1, group * phases.shape[1]))
        for n in range(group):
            band[n:n + width, n * phases.shape[1]:(n + 1) * phases.shape[1]] = phases[::-1]
        self._band = band.astype(np.float32)
        self._history = np.zeros((2 * _HALF_TAPS, channels), dtype=np.float32)

    def __call__(self, block: np.ndarray) -> np.ndarray:
        out = self.sounding(block)
        if out is None:
            return np.zeros((len(block) * self.factor, block.shape[1]), dtype=np.float32)
        return out

    def feed(self, block: np.ndarray | int) -> None:
        """Queue ``block`` (read only until it is brought up; an int: that many frames of
        silence) to be brought up ``PIECE`` frames at a time (``next``), as it is handed out.

        The pieces fall on fixed frames of what is fed (a lines' chunk), so the bits do not
        depend on the render's blocks; against a whole chunk at once, BLAS's sums over rows
        of another count move some outputs by one float32 step (measured: at most 1.2e-6
        on unit noise)."""
        frames = block if isinstance(block, int) else len(block)
        for at in range(0, frames, PIECE):
            size = min(PIECE, frames - at)
            self._queue.append(size if isinstance(block, int) else block[at:at + size])

    @property
    def fed(self) -> bool:
        """Whether pieces fed are waiting to be brought up."""
        return bool(self._queue)

    def next(self) -> tuple[np.ndarray | None, int]:
        """The next piece fed, brought up (``sounding``: None where all zeros), and its
        output frames."""
        piece = self._queue.popleft()
        return self.sounding(piece), (piece if isinstance(piece, int) else len(piece)
                                      ) * self.factor

    def sounding(self, block: np.ndarray | int) -> np.ndarray | None:
        """The next output, as ``self(block)``, or None where it is all zeros (the block and
        the history silent): no block of zeros made, to be skipped in the sums. An int
        ``block``: that many frames of silence."""
        history = self._history
        if isinstance(block, int):
            if not history.any():  # silence in, silence out; the history stays zeros
                return None
            block = np.zeros((block, history.shape[1]), dtype=np.float32)
        frames, channels = block.shape
        if frames < len(history):
            self._history = np.concatenate([history, block])[frames:].astype(np.float32)
        else:
            self._history = block[frames - len(history):].astype(np.float32)
        live = np.flatnonzero(sounding(block) | history.any(axis=0))
        if not len(live):
            return None
        if _SCATTER * len(live) < channels:  # only the columns that sound (a master's objects)
            out = np.zeros((frames * self.factor, channels), dtype=np.float32)
            out[:, live] = self._product(history[:, live], block[:, live])
            return out
        return self._product(history, block)

    def _product(self, history: np.ndarray, block: np.ndarray) -> np.ndarray:
        frames, channels = block.shape
        factor, old, group = self.factor, len(history), self.group
        groups = -(-frames // group)
        # each channel's history and block in a row, then zeros to a whole group (they only
        # reach outputs past the block: the filter is causal); each window is the samples
        # before its group that its phases reach (20, or 19 without phase 0), then the group
        rows = np.empty((channels, old + groups * group), np.float32)
        rows[:, :old] = history.T
        rows[:, old:old + frames] = block.T
        rows[:, old + frames:] = 0.0
        reach = len(self._band) - group
        windows = sliding_window_view(rows[:, old - reach:], reach + group, axis=1)[:, ::group]
        made = (windows.reshape(-1, reach + group) @ self._band).reshape(channels, -1)
        if self._apart:
            return self._with_phase_0(made, rows[:, _HALF_TAPS:_HALF_TAPS + frames])
        made = made[:, :frames * factor]
        if channels > _FEW_COLUMNS:
            return np.ascontiguousarray(made.T)
        interleaved = np.empty((frames * factor, channels), np.float32)
        for column in range(channels):
            interleaved[:, column] = made[column]
        return interleaved

    def _with_phase_0(self, made: np.ndarray, centred: np.ndarray) -> np.ndarray:
        """The output from the other phases' product ``made`` (a row per channel, each
        output's phases in turn) and phase 0's input (``centred``, a row per channel)."""
        channels, frames = centred.shape
        factor = self.factor
        out = np.empty((frames, factor, channels), np.float32)
        if channels > _FEW_COLUMNS:
            np.multiply(centred.T, self._centre, out=out[:, 0])
            out[:, 1:] = made[:, :frames * (factor - 1)].reshape(
                channels, frames, factor - 1).transpose(1, 2, 0)
        else:  # a phase of a column at a time: long strided loops, not loops of 2 or 3
            for column in range(channels):
                np.multiply(centred[column], self._centre, out=out[:, 0, column])
                for phase in range(1, factor):
                    out[:, phase, column] = made[column, phase - 1:frames * (factor - 1):
                                                 factor - 1]
        return out.reshape(frames * factor, channels)


class Bus:
    """The notes of one rate: their mix, and the way up to the output.

    For a standing listener the notes are added dry to their places' lines
    (``lines.Lines``), heard once per chunk; for a walking one each note is heard on
    its own (``HeardNotes``) and added to the accumulator.

    Parameters
    ----------
    heard : HeardNotes
        Made for this bus's rate (its spatialiser's and dry notes' ``sample_rate``).
    factor : int >= 1
        Output rate / this bus's rate (1: the output's own bus).
    channels : int
        Width of the mix (the panner's channels, times the stems).
    block_frames : int > 0, output samples
    """

    def __init__(self, heard: HeardNotes, factor: int, channels: int,
                 block_frames: int) -> None:
        self.heard = heard
        self.factor = factor
        self.rate = heard.spatialiser.sample_rate
        self.channels = channels
        # a low bus is mixed and brought up CHUNK frames at a time, whatever the blocks
        self.accumulator = Accumulator(channels, CHUNK if factor > 1
                                       else max(1, block_frames // factor))
        self.lines = (Lines(heard.spatialiser, heard.listener, channels)
                      if isinstance(heard.listener, Listener) else None)
        self._up = Upsampler(factor, channels) if factor > 1 else None
        self._lag = 0 if self._up is None else self._up.delay
        self._ready = _Made()  # output frames made
        self._heard = _Made()  # lines' frames made

    def guard(self, frame: int) -> int:
        """Output samples before an onset that a note of this bus may still change, when the
        output is taken up to ``frame`` (near the start the chunks are short: ``lines``)."""
        at = frame // self.factor + self._lag + GUARD + 2
        size = self.lines.size_at(at) if self.lines is not None else CHUNK
        after = self.lines.size_at(at + size) if self.lines is not None else CHUNK
        frames = (GUARD + self._lag + 2 + (size if self.lines is not None else 0)
                  + (after if self._up is not None else 0))
        return frames * self.factor

    @property
    def extent(self) -> int:
        """Output samples up to the end of the last note added."""
        lines = 0 if self.lines is None else self.lines.extent
        return max(self.accumulator.extent, lines) * self.factor

    def add(self, time: float, note: HeardNote, column: int) -> None:
        """Mix a heard note whose event starts at ``time`` seconds."""
        start, signals, mix, _ = note
        onset = round(time * self.rate)
        self.accumulator.add(onset + start - self._lag, signals, mix=mix, column=column)

    def add_dry(self, time: float, mono: np.ndarray, point, face, column: int) -> None:
        """Add a dry note, sounding at ``point`` from ``time`` seconds, to its place's line."""
        assert self.lines is not None, "a standing listener's bus"
        self.lines.add(round(time * self.rate) - self._lag, mono, point, face, column)

    def busy(self, frames: int) -> bool:
        """Whether taking ``frames`` makes frames (hears a chunk of the lines, brings one up),
        rather than handing out frames made before."""
        if self._up is not None:
            return len(self._ready) < frames
        return self.lines is not None and len(self._heard) < frames

    def take(self, frames: int) -> np.ndarray:
        """The next ``frames`` output samples of this bus (a new array)."""
        return summed(self.parts(frames), frames, self.channels)

    def parts(self, frames: int) -> list[Parts]:
        """The next ``frames`` output samples as the sum of the parts of these streams (in
        this order: the accumulator's, then the lines' of an output-rate bus; a low bus's
        upsampled mix): they are summed with the other buses' in one pass (``summed``), not
        added into a block of zeros, nor glued into a block each. Views of what was made,
        to be read before the next ``parts`` and never written."""
        if self._up is None:
            return self._mixed(frames)
        while len(self._ready) < frames:
            if not self._up.fed:
                self._up.feed(self._block(CHUNK if self.lines is None
                                          else self.lines.next_size()))
            self._ready.append(*self._up.next())
        return [self._ready.parts(frames)]

    def _block(self, frames: int) -> np.ndarray | int:
        """The next ``frames`` frames at this bus's rate, to be read only: the lines' chunk
        itself where only it sounds; ``frames`` where nothing does."""
        streams = [stream for stream in self._mixed(frames) if stream]
        if not streams:
            return frames
        if len(streams) == 1 and len(streams[0]) == 1 and len(streams[0][0][1]) == frames:
            return streams[0][0][1]
        return summed(streams, frames, self.channels)

    def _mixed(self, frames: int) -> list[Parts]:
        """The next ``frames`` frames at this bus's rate: the accumulator's (if a note was added
        to them), then the lines'."""
        added = self.accumulator.take_added(frames)
        streams = [[] if added is None else [(0, added)]]
        if self.lines is not None:
            while len(self._heard) < frames:
                size = self.lines.next_size()
                chunk = self.lines.sounding_chunk()
                self._heard.append(None if chunk is None or silent(chunk) else chunk, size)
            streams.append(self._heard.parts(frames))
        return streams


#: Where a stream sounds in a block: (first frame, rows), in order, not overlapping; the
#: frames in no part are silent.
Parts = list[tuple[int, np.ndarray]]


def silent(block: np.ndarray) -> bool:
    """Whether ``block`` is all zeros (most blocks that sound do from their first frames)."""
    return not block[:_FIRST_FRAMES].any() and not block.any()


def summed(streams: list[Parts], frames: int, channels: int) -> np.ndarray:
    """The sum of ``streams`` over ``frames`` frames, in their order (a new array), as adding
    each into a block of zeros would make it: what sounds nowhere is not added (0 + x is x;
    the lines and the upsampler never give a −0), and the first two streams that cover the
    block are added in one pass into it (the copy of the first is the first add)."""
    rest = iter([stream for stream in streams if stream])
    out = None
    for stream in rest:
        if not _covers(stream, frames):
            out = np.zeros((frames, channels), dtype=np.float32)
            _add(out, stream)
            break
        out = np.empty((frames, channels), dtype=np.float32)
        second = next(rest, None)
        if second is None:
            for at, rows in stream:
                out[at:at + len(rows)] = rows
        elif _covers(second, frames):
            _add_two(out, stream, second)
        else:
            for at, rows in stream:
                out[at:at + len(rows)] = rows
            _add(out, second)
        break
    if out is None:
        return np.zeros((frames, channels), dtype=np.float32)
    for stream in rest:
        _add(out, stream)
    return out


def _covers(stream: Parts, frames: int) -> bool:
    """Whether ``stream``'s parts cover every frame of the block."""
    at = 0
    for start, rows in stream:
        if start != at:
            return False
        at += len(rows)
    return at == frames


def _add(out: np.ndarray, stream: Parts) -> None:
    for at, rows in stream:
        part = out[at:at + len(rows)]
        np.add(part, rows, out=part)


def _add_two(out: np.ndarray, first: Parts, second: Parts) -> None:
    """``out = first + second`` where both cover it, split where either's parts meet."""
    one, two = iter(first), iter(second)
    (a_at, a), (b_at, b) = next(one), next(two)
    at = 0
    while at < len(out):
        end = min(a_at + len(a), b_at + len(b))
        np.add(a[at - a_at:end - a_at], b[at - b_at:end - b_at], out=out[at:end])
        at = end
        if end == a_at + len(a) and at < len(out):
            a_at, a = next(one)
        if end == b_at + len(b) and at < len(out):
            b_at, b = next(two)


class _Made:
    """Frames made and not handed out yet, as the pieces they were made in (None: a silent
    piece): a block is handed out as views of the pieces it lies in (``parts``), not glued
    (gluing each piece to the rest before it copied the whole 3.6 s piece)."""

    def __init__(self) -> None:
        self._pieces: deque[tuple[np.ndarray | None, int]] = deque()
        self._at = 0  # frames of the first piece handed out
        self._frames = 0

    def __len__(self) -> int:
        return self._frames

    def append(self, piece: np.ndarray | None, frames: int | None = None) -> None:
        """Add a piece made next (None: ``frames`` silent frames)."""
        frames = len(piece) if piece is not None else frames
        if frames:
            self._pieces.append((piece, frames))
            self._frames += frames

    def parts(self, frames: int) -> Parts:
        """The next ``frames`` frames (all made) where they sound, as views of the pieces."""
        out: Parts = []
        at = 0
        while at < frames:
            piece, length = self._pieces[0]
            n = min(length - self._at, frames - at)
            if piece is not None:
                out.append((at, piece[self._at:self._at + n]))
            at += n
            self._at += n
            if self._at == length:
                self._pieces.popleft()
                self._at = 0
        self._frames -= frames
        return out


def _parts(taker: Bus | Tail, frames: int) -> list[Parts]:
    """A taker's next ``frames`` output samples as streams of parts (a tail's: its block)."""
    return taker.parts(frames) if isinstance(taker, Bus) else [[(0, taker.take(frames))]]


def _parts_taken(takers: deque[Bus | Tail], frames: int) -> dict[int, list[Parts]]:
    """``_parts`` of each taker this thread takes from ``takers`` (the others' threads take
    from it too: ``popleft`` is atomic) until none is left, by its id."""
    made: dict[int, list[Parts]] = {}
    while True:
        try:
            taker = takers.popleft()
        except IndexError:
            return made
        made[id(taker)] = _parts(taker, frames)


def _recurring_places(performance: Performance) -> frozenset:
    """The events' own positions that more than one event sounds from (a rack's members)."""
    counts = Counter(event.position for event in performance.events
                     if event.position is not None)
    return frozenset(place for place, count in counts.items() if count > 1)


class Buses:
    """Every bus of a render, and the bus of each event (the rate its source's notes need).

    It answers for the notes of all buses at once (``key``, ``cached``, ``compute``), so
    the helper process serves them all. For a standing listener a note goes dry to its
    place's line (its key: the dry note's), but for a short one at a place of its own (``lined``);
    that one and every note of a walking listener is heard on its own. Only dry notes are
    kept: a heard note is made for one event.
    """

    def __init__(self, performance: Performance, listener: Listener | ListenerPath, *,
                 panner: Panner, surroundings: Surroundings, sample_rate: int, seed: int,
                 voice: Voice, cache_bytes: int, channels: int, block_frames: int,
                 tail: Callable[[tuple[int, ...]], Tail | None] | None = None,
                 store=None, handoff: NoteHandoff | None = None) -> None:
        self.performance = performance
        self.channels = channels
        bind = getattr(voice, "bind", None)
        if bind is not None:  # notes that depend on the events around them: sung lines
            voice = bind(performance, seed)
        self._lines = getattr(voice, "lines", None)  # a bound voice's sung lines
        made_at = getattr(voice, "made_at", None)
        sounding = {event.source for event in performance.events}
        self._rate_of = {id_: sample_rate if made_at is None
                         else made_at(performance.sources[id_], sample_rate)
                         for id_ in sounding}
        self.by_rate: dict[int, Bus] = {}
        rates = sorted(set(self._rate_of.values()) | {sample_rate}, reverse=True)
        # one cache for the dry notes of every bus; none of the notes that never repeat
        # (the place's: DryNotes.kept)
        kept = ByteLru(cache_bytes)
        variants = None  # each event's, worked out once for all buses
        for rate in rates:
            if rate <= 0 or sample_rate % rate:
                raise RenderError(f"notes made at {rate} Hz cannot join a {sample_rate} Hz "
                                  "render: a voice's made_at must be a whole fraction of it")
            dry = DryNotes(voice, rate, seed, kept.part(("dry", rate)), store, handoff)
            variants = variants or event_variants(performance, dry, seed)
            heard = HeardNotes(performance, listener, Spatialiser(panner, surroundings, rate),
                               dry, seed, variants)
            self.by_rate[rate] = Bus(heard, sample_rate // rate, channels, block_frames)
        self.static = isinstance(listener, Listener)
        self._recurring = _recurring_places(performance)
        # the court's late sound: a send bus for every note (a walker's: from where he is), or
        # ``tail``'s, given the buses' rates (the ADM master's court bed)
        self.tail = (tail(tuple(self.by_rate)) if tail is not None else
                     Tail(surroundings.court, listener, panner, channels, sample_rate,
                          surroundings.air, seed, tuple(self.by_rate), upsampler=Upsampler)
                     if surroundings.court is not None else None)
        for bus in self.by_rate.values():  # a heard note's dry note is the tail's send
            bus.heard.dry = self.tail is not None
        self._pool: ThreadPoolExecutor | None = None

    def guard(self, frame: int) -> int:
        """Output samples before an onset that a note may still change, when the output is
        taken up to ``frame`` (every bus's, and the tail's)."""
        return max([bus.guard(frame) for bus in self.by_rate.values()]
                   + ([self.tail.guard(frame)] if self.tail is not None else []))

    def bus(self, index: int) -> Bus:
        return self.by_rate[self._rate_of[self.performance.events[index].source]]

    def lined(self, index: int) -> bool:
        """Whether event ``index``'s note goes dry to a line: a standing listener's note from
        a source's own place or from a place heard again (a stone or bell of a rack), or one
        of ``LONG_S`` or more wherever it is; a short action placed on its own, at a step of
        a walk or where an arrow lands, is heard alone: its line would hold one note."""
        event = self.performance.events[index]
        return self.static and (event.duration >= LONG_S or event.position is None
                                or event.position in self._recurring)

    def key(self, index: int) -> tuple:
        """Event ``index``'s note key: its bus's rate, whether it is lined, and the dry
        note's (key, variant) if so, else the heard note's key."""
        bus = self.bus(index)
        key = bus.heard.key(index)
        lined = self.lined(index)
        return bus.rate, lined, (key[:2] if lined else key)

    def together(self) -> list[tuple[int, ...]]:
        """Indices of the events whose notes are made together (a sung line's parts, cut
        from one rendering of the line): the helper gives each group to one process."""
        return [] if self._lines is None else self._lines.groups(self.performance.events)

    def cached(self, key: tuple) -> bool:
        rate, lined, own = key
        return lined and own in self.by_rate[rate].heard.dry_notes.cache

    def compute(self, index: int) -> np.ndarray | HeardNote | None:
        """Event ``index``'s dry note (lined: from the dry notes' cache, if there) or heard
        note; None if silent."""
        heard = self.bus(index).heard
        if not self.lined(index):
            return heard.compute(index)
        event = self.performance.events[index]
        key, variant = heard.key(index)[:2]
        mono = heard.dry_notes(event, self.performance.sources[event.source], key, variant)
        return mono if mono.size else None

    def keep(self, key: tuple, note) -> None:
        """Cache a dry note computed elsewhere (the helper's) unless it is there."""
        rate, lined, own = key
        dry_notes = self.by_rate[rate].heard.dry_notes
        if lined and own not in dry_notes.cache and dry_notes.keeps(own[0]):
            dry_notes.cache.put(own, note, note.nbytes)

    def add(self, index: int, note, column: int) -> None:
        """Mix event ``index``'s note (from ``compute`` or the helper)."""
        bus = self.bus(index)
        event = self.performance.events[index]
        if self.lined(index):
            point, face = bus.heard.key(index)[2:]
            bus.add_dry(event.time, note, point, face, column)
            if self.tail is not None:
                self.tail.send(bus.rate, event.time, note, point, column)
        else:
            bus.add(event.time, note, column)
            if self.tail is not None:  # heard on its own: its own place, or a walker's
                self.tail.send_heard(bus.rate, event.time, note, bus.heard.key(index)[2],
                                     column)

    def dry(self, key: tuple, note) -> np.ndarray | None:
        """The dry note of a note from ``compute`` or the helper, ``key`` its ``key``: the
        note itself where lined; a heard note's own dry note where the buses have a tail."""
        return note if key[1] else note[3]

    def forget_in_helper(self) -> None:
        """In the helper process: keep no notes (the main process keeps what it is sent)."""
        for bus in self.by_rate.values():
            bus.heard.dry_notes.cache.limit = 0

    @property
    def extent(self) -> int:
        """Output samples up to the end of the last note added to any bus."""
        return max([bus.extent for bus in self.by_rate.values()]
                   + ([self.tail.extent] if self.tail is not None else []))

    def take(self, frames: int) -> np.ndarray:
        """The next ``frames`` output samples: every bus, brought up to the output rate.

        The buses are independent, so those that have frames to make are mixed on two
        threads (their FFTs and upsampling release the GIL): a thread of their own and this
        one each take the next that is left until none is (a fixed half each kept this one
        waiting: s18's Atmos objects, 9.5 s of buses there against 5.8 s here); the rest
        hand out what they made before (most blocks: a low bus makes 3.6 s at a time). Two
        threads fill the two cores a render has (its note helper shares them), and each
        trip to a thread costs GIL handovers (``submit``: the main thread spent 5 % of a
        whole rite there with a thread per bus, py-spy); alone, a busy one works here. Each
        bus makes the same samples on either thread, and they are summed in a fixed order."""
        takers: list[Bus | Tail] = [*self.by_rate.values(),
                                    *([self.tail] if self.tail is not None else [])]
        busy = deque(taker for taker in takers if taker.busy(frames))
        made = {}
        if len(busy) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1)
            away = self._pool.submit(_parts_taken, busy, frames)
            made.update(_parts_taken(busy, frames))
            made.update(away.result())
        streams = [stream for taker in takers for stream in
                   (made[id(taker)] if id(taker) in made else _parts(taker, frames))]
        return summed(streams, frames, self.channels)

    def close(self) -> None:
        """Stop the buses' threads."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
