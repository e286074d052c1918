"""Streaming loudness: BS.1770-4 integrated loudness, true peak, and a true-peak limiter.

Long renders never sit in memory, so the meters here take the signal block by
block and keep only what BS.1770 needs: the filter state and one mean square
per 100 ms hop (a three-hour rite is ~10⁵ numbers). The K-weighting filters are
those of ITU-R BS.1770-4 (2015), Annex 1, Tables 1 and 2 (``k_weighting``), and
``tests/sound/test_loudness.py`` checks the meter against pyloudnorm's public
``Meter.integrated_loudness``. True peak is the maximum of the 4× oversampled
signal (BS.1770-4 Annex 2, a polyphase FIR).

Targets (docs/sources.md A8): EBU R 128 −23 LUFS, maximum true peak −1 dBTP.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import convolve1d, minimum_filter1d, uniform_filter1d
from scipy.signal import firwin

from soundscape.sound.iir import sosfilt_within

__all__ = ["Downmix", "LoudnessMeter", "LoudnessReport", "MeterSnapshot", "TruePeakLimiter",
           "TruePeakMeter", "integrated_loudness", "k_weighting", "sample_peak",
           "true_peak_envelope"]

_OVERSAMPLE = 4
_FILTER_MARGIN = 16  # base-rate samples the ×4 polyphase filter reaches on either side
_MERGE = 256  # loud spans closer than this many samples are oversampled together
_FOLD = 64  # frames a row of _column_peaks's first reduction
# A −400 dB tone at Nyquist added before K-weighting: an IIR recursion fed exact zeros
# (the silences of a rite) decays into a denormal limit cycle that runs ~30× slower;
# this keeps its state normal and adds nothing measurable (BS.1770 gates at −70 LUFS).
_DENORMAL_GUARD = 1e-20
#: A channel's filter state under this (the guard's own steady state is ~5e-22) rings only
#: from the guard: fed zeros, it is not filtered (``LoudnessMeter._live``).
_SETTLED = 1e-18
#: Frames a ``Downmix`` product at most: OpenBLAS gives small products one thread (33 tracks
#: into 5 channels, measured: 2 000 frames ran on one thread, a 48 000-frame block on two).
_MIX_FRAMES = 1024


class LoudnessMeter:
    """BS.1770-4 integrated loudness of a signal fed in blocks.

    Parameters
    ----------
    sample_rate : int, Hz
    weights : array_like (channels,)
        Channel weights G_i (1 for L/R/C, 1.41 for surrounds, 0 to leave a channel out).
    downmix : Downmix or None
        What is measured is the blocks' render to ``channels`` (a 5.1 render of an Atmos
        master), not the blocks themselves.
    """

    def __init__(self, sample_rate: int, weights: np.ndarray,
                 downmix: Downmix | None = None) -> None:
        weights = np.asarray(weights, dtype=float)
        self._used = np.flatnonzero(weights)  # channels with weight 0 are not filtered at all
        self.weights = weights[self._used]
        if downmix is not None and downmix.matrices.shape[2] != len(weights):
            raise ValueError(f"a downmix to {downmix.matrices.shape[2]} channels, "
                             f"{len(weights)} weights")
        self._downmix = None if downmix is None else downmix.only(self._used)
        self._frame = 0  # the next sample's frame on the signal's clock (the downmix's)
        self._sos = k_weighting(sample_rate)
        self._state = np.zeros((len(self.weights), len(self._sos), 2))
        self._hop = round(0.1 * sample_rate)
        self._partial = np.zeros(len(self.weights))  # sum of squares of the unfinished hop
        self._partial_count = 0
        self._hops: list[np.ndarray] = []  # mean square per finished hop, (channels,) each

    def add(self, block: np.ndarray) -> None:
        """Feed the next ``(frames, channels)`` block."""
        block = np.asarray(block)
        guard = _guard(len(block))
        if self._downmix is None:
            live = self._live(block)
            columns = self._used[live]

            def stretch(start: int, stop: int) -> np.ndarray:
                return block[start:stop, columns].T
        else:  # its channels, rows already: all filtered (the bed sounds in every block)
            live, mixed = np.arange(len(self._used)), self._downmix.rows(block, self._frame)

            def stretch(start: int, stop: int) -> np.ndarray:
                return mixed[:, start:stop]
        self._frame += len(block)
        state = self._state[live]  # a copy (fancy index): put back below
        start = 0
        # a hop's stretch at a time (the rest of the unfinished one first): its channels,
        # filtered, squared and summed while they are in the cache (a whole block's rows,
        # gathered column by column, were most of the meter's time on a master's dozens of
        # tracks); the same bits as filtering the block whole and summing its hops
        while start < len(block):
            stop = min(len(block), start + self._hop - self._partial_count)
            rows = np.empty((len(live), stop - start))
            np.add(stretch(start, stop), guard[start:stop], out=rows)
            sosfilt_within(self._sos, rows, state)
            self._partial += self._all(live, np.square(rows, out=rows).sum(axis=1))
            self._partial_count += stop - start
            if self._partial_count == self._hop:
                self._hops.append(self._partial / self._hop)
                self._partial, self._partial_count = np.zeros(len(self.weights)), 0
            start = stop
        if len(live) == len(self._used):
            self._state = state
        else:
            self._state = self._state.copy()
            self._state[live] = state

    def _live(self, block: np.ndarray) -> np.ndarray:
        """The channels (indices into the metered ones) to filter: all but those fed exact
        zeros whose filter already rings below ``_SETTLED`` (the guard's alone). Such a
        channel's K-weighted power, under 10⁻³⁶, is 10⁻²⁹ of the absolute gate's, far under
        the last bit of any gated hop's sum, so it is counted as 0 and its state kept (when
        it sounds again, that state moves only the last bits of its first quiet samples;
        docs/render.md, "Metering costs"). An EBU ADM master's object tracks are silent
        in three blocks of four (s18): most of its K-weighting."""
        settled = np.abs(self._state).max(axis=(1, 2)) < _SETTLED
        if not settled.any():  # (a pass over the block costs 0.6 ms: stereo's 9 078 blocks)
            return np.arange(len(self._used))
        return np.flatnonzero(_nonzero_columns(block)[self._used] | ~settled)

    def _all(self, live: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """Per-channel ``sums`` of the ``live`` channels, with 0 for the others."""
        if len(live) == len(self._used):
            return sums
        out = np.zeros((len(self._used), *sums.shape[1:]))
        out[live] = sums
        return out

    def snapshot(self) -> MeterSnapshot:
        """Where the meter stands now (to be followed later by a scaled copy)."""
        return MeterSnapshot(self._state.copy(), self._partial.copy(), self._partial_count,
                             len(self._hops))

    def follow(self, reference: LoudnessMeter, upto: MeterSnapshot, gain: float) -> None:
        """Advance as if fed ``gain`` × the signal that took ``reference`` to ``upto``.

        K-weighting is linear, so its output is the reference's times ``gain`` and
        each hop's mean square the reference's times gain²: nothing is filtered.
        Valid when this meter's state is ``gain`` × the reference's at the same
        frame (it has been fed ``gain`` × the same signal long enough for the
        filter to forget any difference).
        """
        self._hops.extend(hop * gain**2 for hop in reference._hops[len(self._hops):upto.hops])
        self._state = upto.state * gain
        self._partial = upto.partial * gain**2
        self._partial_count = upto.partial_count
        self._frame = upto.hops * self._hop + upto.partial_count

    def resumed(self, at: MeterSnapshot, gain: float) -> LoudnessMeter:
        """A meter standing where this one stood at ``at``, as if fed ``gain`` × its signal,
        but with no finished hops: it meters a stretch from there (its hops are that
        stretch's, to be put in place of this meter's from ``at.hops`` on)."""
        meter = copy.copy(self)  # its filter and weights; the state is set anew below
        meter._state = at.state * gain
        meter._partial = at.partial * gain**2
        meter._partial_count = at.partial_count
        meter._frame = at.hops * self._hop + at.partial_count
        meter._hops = []
        return meter

    def __getstate__(self) -> dict:
        """The finished hops pickled as one array, not one each (pass 1's keeping process
        sends a whole rite's tens of thousands)."""
        return {**self.__dict__, "_hops": self.hops}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _hops=list(state["_hops"]))

    def __copy__(self) -> LoudnessMeter:  # shares the hops list, as before __getstate__
        meter = object.__new__(type(self))
        meter.__dict__.update(self.__dict__)
        return meter

    @property
    def hops(self) -> np.ndarray:
        """Mean square of each finished 100 ms hop, ``(hops, channels)`` (K-weighted)."""
        return np.array(self._hops).reshape(-1, len(self.weights))

    def integrated(self) -> float:
        """Gated integrated loudness in LUFS (−inf for silence or less than 400 ms)."""
        return integrated_loudness(self.hops, self.weights)


def _nonzero_columns(block: np.ndarray) -> np.ndarray:
    """``np.any(block, axis=0)``; for float32, from the bits of every column or-ed in one
    pass down the block (a sample is nonzero where its bits but the sign's are: half the
    time of ``any``'s reduction across the rows, a master's 33 columns)."""
    if block.dtype != np.float32 or not block.flags.c_contiguous:
        return np.any(block, axis=0)
    return np.bitwise_or.reduce(block.view(np.uint32), axis=0) & 0x7FFFFFFF != 0


@functools.lru_cache(maxsize=8)
def _guard(frames: int) -> np.ndarray:
    """±_DENORMAL_GUARD alternating, ``frames`` long (the meter's blocks are mostly one size)."""
    guard = np.full(frames, _DENORMAL_GUARD)
    guard[1::2] = -_DENORMAL_GUARD
    return guard


def integrated_loudness(hops: np.ndarray, weights: np.ndarray) -> float:
    """BS.1770-4 gated loudness (LUFS) of K-weighted mean squares per 100 ms hop,
    ``(hops, channels)``: 400 ms blocks overlapping by 75 %, the −70 LUFS absolute gate
    and the −10 LU relative gate; −inf for silence or less than 400 ms."""
    if len(hops) < 4:
        return -math.inf
    blocks = (hops[:-3] + hops[1:-2] + hops[2:-1] + hops[3:]) / 4
    power = blocks @ weights
    with np.errstate(divide="ignore"):
        level = -0.691 + 10 * np.log10(power)
    above = level >= -70.0  # absolute gate
    if not above.any():
        return -math.inf
    relative = -0.691 + 10 * math.log10(power[above].mean()) - 10.0
    gated = above & (level > relative)
    return -0.691 + 10 * math.log10(power[gated].mean())


# The analog prototypes whose bilinear transforms at 48 kHz give BS.1770-4's Tables 1 and 2
# to ~1e-9 (fitted by libebur128, src/ebur128.c; checked in tests/sound/test_loudness.py):
# stage 1, a high shelf (+4 dB above ~1.7 kHz, the head's acoustic effect); stage 2, the
# RLB high-pass.
_SHELF_HZ, _SHELF_DB, _SHELF_Q = 1681.974450955533, 3.999843853973347, 0.7071752369554196
_SHELF_VB_EXPONENT = 0.4996667741545416
_HIGHPASS_HZ, _HIGHPASS_Q = 38.13547087602444, 0.5003270373238773


@functools.cache
def k_weighting(sample_rate: int) -> np.ndarray:
    """BS.1770-4 K-weighting as two biquads (scipy ``sos`` rows b0 b1 b2 1 a1 a2).

    At 48 kHz these are the standard's published coefficients (ITU-R BS.1770-4,
    Annex 1, Table 1: b = 1.53512485958697, −2.69169618940638, 1.19839281085285,
    a = −1.69065929318241, 0.73248077421585; Table 2: b = 1, −2, 1, a =
    −1.99004745483398, 0.99007225036621); at other rates the same analog filters
    are transformed bilinearly (the standard gives 48 kHz only). docs/sources.md A8.
    """
    k = math.tan(math.pi * _SHELF_HZ / sample_rate)
    vh = 10 ** (_SHELF_DB / 20)
    vb = vh**_SHELF_VB_EXPONENT
    a0 = 1 + k / _SHELF_Q + k * k
    shelf = [(vh + vb * k / _SHELF_Q + k * k) / a0, 2 * (k * k - vh) / a0,
             (vh - vb * k / _SHELF_Q + k * k) / a0,
             1.0, 2 * (k * k - 1) / a0, (1 - k / _SHELF_Q + k * k) / a0]
    k = math.tan(math.pi * _HIGHPASS_HZ / sample_rate)
    a0 = 1 + k / _HIGHPASS_Q + k * k
    highpass = [1.0, -2.0, 1.0, 1.0, 2 * (k * k - 1) / a0, (1 - k / _HIGHPASS_Q + k * k) / a0]
    return np.array([shelf, highpass])


@dataclass(frozen=True, eq=False)
class Downmix:
    """A render of a block's tracks to the channels a loudness measure hears, by a matrix
    that changes as the tracks' sources move: ``matrices[k]`` (tracks, channels) from frame
    ``starts[k]`` (the first 0) to the next. A 5.1 render of an Atmos master, whose tracks
    add where they sound together (an object's direct sound and its echoes in the bed), as
    no weight per track can foresee."""

    starts: np.ndarray  # (changes,) int, rising
    matrices: np.ndarray  # (changes, tracks, channels) float32

    def only(self, channels: np.ndarray) -> Downmix:
        """The same render to ``channels`` alone."""
        return Downmix(self.starts, np.ascontiguousarray(self.matrices[:, :, channels]))

    def rows(self, block: np.ndarray, first: int) -> np.ndarray:
        """``(channels, frames)``: ``block`` (frames, tracks), whose first frame is
        ``first``, rendered by matrix products (a float32 block's in single precision: far
        finer than any loudness, and it reads the block once), ``_MIX_FRAMES`` at most each:
        OpenBLAS splits larger ones among its threads, whose spinning then took a core's
        worth from the render (the bits are the same either way: each output sums its
        tracks whole, in one thread)."""
        dtype = np.result_type(block.dtype, np.float32)
        out = np.empty((self.matrices.shape[2], len(block)), dtype)
        ends = np.append(self.starts[1:], np.iinfo(np.int64).max) - first  # each matrix's
        start = 0
        while start < len(block):
            change = int(np.searchsorted(ends, start, side="right"))
            stop = min(len(block), start + _MIX_FRAMES, int(ends[change]))
            np.matmul(self.matrices[change].T.astype(dtype, copy=False), block[start:stop].T,
                      out=out[:, start:stop])
            start = stop
        return out


@dataclass(frozen=True, slots=True)
class MeterSnapshot:
    """A ``LoudnessMeter``'s filter state, unfinished hop and count of finished hops."""

    state: np.ndarray
    partial: np.ndarray
    partial_count: int
    hops: int


def true_peak_envelope(x: np.ndarray) -> np.ndarray:
    """Per-sample true peak: max |x| of the 4× oversampled signal over channels and phases.

    Parameters
    ----------
    x : ndarray (frames, channels)

    Returns
    -------
    ndarray (frames,), linear amplitude
    """
    rows = np.ascontiguousarray(np.asarray(x, dtype=float).T)  # filtering along rows is fastest
    envelope = np.zeros(len(x))
    for phase in _polyphase():
        np.maximum(envelope, np.abs(convolve1d(rows, phase, axis=1, mode="constant")).max(axis=0),
                   out=envelope)
    return envelope


def _loud_true_peak(x: np.ndarray, ceiling: float) -> np.ndarray:
    """``true_peak_envelope`` where it may top ``ceiling``; 0, or at most ``ceiling``,
    elsewhere (the limiter's gain is 1 wherever the true peak is at most the ceiling).

    Only the spans near samples over half the ceiling are looked at (6 dB under it, the
    true peak cannot reach it: see TruePeakMeter), and in them only the frames the
    filter's overshoot bound lets top it (``_reaching``) are oversampled: that is what
    keeps the limiter cheap."""
    floor = ceiling / 2.0
    magnitude = _channel_peak(x)
    envelope = np.zeros(len(x))
    # the filter's reach of each sample over the floor, widened so nearby loud spans
    # merge into one (fewer calls)
    starts, stops = _runs(magnitude > floor, _FILTER_MARGIN + _MERGE // 2, 0)
    for lo, hi in zip(starts.tolist(), stops.tolist(), strict=True):
        a, b = max(0, lo - _FILTER_MARGIN), min(len(x), hi + _FILTER_MARGIN)
        # only the channels loud here: a quieter one's true peak stays under 2 × floor (the
        # same bound), so it changes no gain (an ADM master's tracks are mostly silent)
        span = x[a:b]
        loud_channels = np.flatnonzero(_column_peaks(span) > floor)
        if len(loud_channels) < x.shape[1]:
            span = span[:, loud_channels]
        # and of its frames only those whose true peak may top the ceiling (elsewhere
        # the gain is 1 whatever it is); the bound over all channels holds for these
        wanted = _reaching(magnitude[a:b], ceiling, lo - a, hi - a)
        envelope[lo:hi] = _envelope_at(span, *wanted)[lo - a:hi - a]
    return envelope


def _column_peaks(x: np.ndarray) -> np.ndarray:
    """Per channel, max |x| over the frames.

    numpy reduces ``(frames, channels)`` along the frames a row at a time, a loop as wide as
    the channels (16 channels, 48 000 frames: 3.3 ms); folded into rows of ``_FOLD`` frames
    the first reduction runs ``_FOLD × channels`` wide, then ``_FOLD`` rows are left (0.22
    ms, measured). Max and min are exact: the same values either way."""
    frames, channels = x.shape
    whole = frames // _FOLD * _FOLD
    if not whole or not x.flags.c_contiguous:
        if channels >= 4:
            return np.maximum(x.max(axis=0), -x.min(axis=0))
        return np.array([max(float(column.max()), -float(column.min())) for column in x.T])
    rows = x[:whole].reshape(-1, _FOLD * channels)
    top = rows.max(axis=0).reshape(_FOLD, channels).max(axis=0)
    bottom = rows.min(axis=0).reshape(_FOLD, channels).min(axis=0)
    if whole < frames:
        top = np.maximum(top, x[whole:].max(axis=0))
        bottom = np.minimum(bottom, x[whole:].min(axis=0))
    return np.maximum(top, -bottom)


def _channel_peak(x: np.ndarray) -> np.ndarray:
    """Per frame, max |x| over the channels (column by column: numpy's reduction along a
    short last axis is several times slower)."""
    peak = np.abs(x[:, 0])
    for channel in range(1, x.shape[1]):
        np.maximum(peak, np.abs(x[:, channel]), out=peak)
    return peak


def _reaching(magnitude: np.ndarray, floor: float, lo: int, hi: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """The stretches ``[start, stop)`` of frames ``lo…hi-1`` whose true peak may top
    ``floor``, given each frame's largest |sample| over the channels (``_channel_peak``).

    A frame's 4× oversampled values are sums of samples within ``_FILTER_MARGIN`` of it
    times one phase of the filter, so none tops the largest of those samples times the
    phase's sum of |taps| (``_overshoot``, 2.25): frames farther than that from every
    sample over ``floor / _overshoot()`` are under ``floor``, exactly (whatever the
    signal). Stretches whose reaches would overlap are merged."""
    return _runs(magnitude > floor / _overshoot(), _FILTER_MARGIN, 2 * _FILTER_MARGIN, lo, hi)


def _runs(over: np.ndarray, widen: int, apart: int, lo: int = 0, hi: int | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """The runs ``[start, stop)`` of True in ``over``, each widened by ``widen`` on either
    side and cut to ``lo…hi-1``, merged unless more than ``apart`` frames apart (what a
    maximum filter of width ``2 widen + 1`` and a threshold give, with ``apart`` 0,
    without filtering every frame)."""
    hi = len(over) if hi is None else hi
    edges = np.flatnonzero(np.diff(over, prepend=False, append=False))
    starts = np.maximum(edges[::2] - widen, lo)
    stops = np.minimum(edges[1::2] + widen, hi)
    some = stops > starts
    starts, stops = starts[some], stops[some]
    if not len(starts):
        return starts, stops
    gaps = np.flatnonzero(starts[1:] - stops[:-1] > apart)
    return starts[np.r_[0, gaps + 1]], stops[np.r_[gaps, len(stops) - 1]]


def _envelope_at(x: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``true_peak_envelope(x)`` on the stretches ``[start, stop)``, 0 elsewhere.

    The stretches are cut out with the filter's reach on either side (silence beyond
    the ends of ``x``, as ``true_peak_envelope`` has; stretches closer than two reaches
    are one, see ``_reaching``) and oversampled in one call: each frame's value is made
    of the same samples by the same sums, so the numbers are those of the whole ``x``'s
    envelope, bit for bit."""
    envelope = np.zeros(len(x))
    if not len(starts):
        return envelope
    cuts = [(max(0, lo - _FILTER_MARGIN), min(len(x), hi + _FILTER_MARGIN))
            for lo, hi in zip(starts.tolist(), stops.tolist(), strict=True)]
    oversampled = true_peak_envelope(x[cuts[0][0]:cuts[0][1]] if len(cuts) == 1 else
                                     np.concatenate([x[a:b] for a, b in cuts]))
    offset = 0
    for (a, b), lo, hi in zip(cuts, starts.tolist(), stops.tolist(), strict=True):
        envelope[lo:hi] = oversampled[offset + lo - a:offset + hi - a]
        offset += b - a
    return envelope


def sample_peak(x: np.ndarray) -> float:
    """max |x|, the sample peak (two flat reductions: cheaper than abs, which copies)."""
    if x.size == 0:
        return 0.0
    return max(float(x.max()), -float(x.min()))


@functools.cache
def _overshoot() -> float:
    """The largest sum of |taps| of a phase of the ×4 filter (2.25), a hair over (so a
    sum's rounding cannot top it): no oversampled value is larger than this times the
    largest sample it is made of."""
    return max(float(np.abs(phase).sum()) for phase in _polyphase()) * (1.0 + 1e-9)


@functools.cache
def _polyphase() -> tuple[np.ndarray, ...]:
    """The four phases of a 96-tap ×4 interpolation low-pass (BS.1770-4 Annex 2 uses 48)."""
    taps = firwin(24 * _OVERSAMPLE, 1 / _OVERSAMPLE, window=("kaiser", 5.0)) * _OVERSAMPLE
    return tuple(taps[p::_OVERSAMPLE] for p in range(_OVERSAMPLE))


def _times(block: np.ndarray, scale: float) -> np.ndarray:
    """``block × scale`` in float64 (no copy of a float64 block when ``scale`` is 1)."""
    if scale == 1.0:
        return np.asarray(block, dtype=float)
    return np.multiply(block, scale, dtype=float)


def _after(context: np.ndarray, block: np.ndarray, scale: float) -> np.ndarray:
    """``context`` followed by ``block × scale``, in float64 (one pass over the block)."""
    x = np.empty((len(context) + len(block), block.shape[1]))
    x[:len(context)] = context
    np.multiply(block, scale, out=x[len(context):], dtype=np.float64)
    return x


class TruePeakMeter:
    """Maximum true peak of a signal fed in blocks.

    Each frame is measured once, with the filter's reach of real samples on
    either side (silence before the start and after the end), so the result
    equals ``true_peak_envelope`` of the whole signal whatever the blocks.

    Only frames near samples within 6 dB of the largest true peak so far are
    oversampled (on the channels that have such samples): the overshoot
    between samples of real audio stays well under 6 dB (a 4× interpolator's
    worst case for music is ~3 dB), so quieter stretches cannot hold the
    maximum. This saves most of the work on long and many-channel renders. Of
    those frames, only the ones whose true peak the filter's overshoot bound lets
    top the peak so far are oversampled (``_reaching``: the others cannot change
    it, whatever the signal), a third of them on a rendered section.
    """

    def __init__(self, context: np.ndarray | None = None) -> None:
        # context + frames not yet measured; ``context``: the reach of frames before the
        # first (silence by default), not measured
        self._tail: np.ndarray | None = (None if context is None else
                                         np.asarray(context, dtype=float)[-_FILTER_MARGIN:])
        self._peak = 0.0
        self._fed = 0  # frames fed
        self._elsewhere = (0, 0)

    def add(self, block: np.ndarray, *, scale: float = 1.0, bound: float | None = None,
            elsewhere: tuple[int, int] = (0, 0)) -> None:
        """Feed the next ``(frames, channels)`` block, times ``scale`` (in float64).

        ``bound``, if known (pass 1 measured each block), is at least the sample peak of
        the scaled block: it spares looking for it. ``elsewhere``: frames ``[start, stop)``
        of the stream (counted from the first fed) whose true peak is measured elsewhere
        (pass 2's limiter process), left out here (they stay context for their neighbours).
        """
        block = np.asarray(block)
        if elsewhere[1] > elsewhere[0]:
            self._elsewhere = elsewhere
        start, self._fed = self._fed, self._fed + len(block)
        if self._tail is None:
            self._tail = np.zeros((_FILTER_MARGIN, block.shape[1]))  # silence before
        if bound is None:
            bound = sample_peak(block) * abs(scale)
        if 2.0 * max(bound, sample_peak(self._tail)) <= self._peak:
            # nothing here is within 6 dB of the peak (_scan would skip it all): keep
            # only the context the next block needs, without copying this one
            self._tail = np.concatenate([self._tail, _times(block[-2 * _FILTER_MARGIN:], scale)]
                                        )[-2 * _FILTER_MARGIN:]
            return
        columns = self._candidates(block, scale)
        if columns is not None and len(block) > 2 * _FILTER_MARGIN:
            # only the channels that may be within 6 dB of the peak are scanned (the same
            # scan: _scan's own test drops the rest); the context is kept for all
            x = _after(self._tail[:, columns], block[:, columns], scale)
            self._scan_here(x, _FILTER_MARGIN, len(x) - _FILTER_MARGIN, start - len(self._tail))
            self._tail = np.concatenate([self._tail, _times(block[-2 * _FILTER_MARGIN:], scale)]
                                        )[-2 * _FILTER_MARGIN:]
            return
        x = _after(self._tail, block, scale)
        final = len(x) - _FILTER_MARGIN  # later frames need the next block's samples
        if final > _FILTER_MARGIN:
            self._scan_here(x, _FILTER_MARGIN, final, start - (len(x) - len(block)))
            self._tail = x[final - _FILTER_MARGIN:]
        else:
            self._tail = x

    def _candidates(self, block: np.ndarray, scale: float) -> np.ndarray | None:
        """The channels whose samples (this block's or the context's) may reach within
        6 dB of the peak so far; None when that is all of them (or there are few)."""
        if block.shape[1] < 4 or not len(block):
            return None
        top = _column_peaks(block).astype(float) * abs(scale)
        assert self._tail is not None, "add() keeps the context before asking"
        top = np.maximum(top, np.abs(self._tail).max(axis=0, initial=0.0))
        columns = np.flatnonzero(2.0 * top * (1.0 + 1e-9) > self._peak)
        return columns if len(columns) < block.shape[1] else None

    def _scan_here(self, x: np.ndarray, lo: int, hi: int, first: int) -> None:
        """``_scan`` of frames ``lo…hi-1`` of ``x`` (whose frame 0 is the stream's frame
        ``first``) but those measured elsewhere."""
        a, b = (min(max(edge - first, lo), hi) for edge in self._elsewhere)
        for start, stop in ((lo, a), (b, hi)) if b > a else ((lo, hi),):
            if stop > start:
                self._scan(x, start, stop)

    def _scan(self, x: np.ndarray, lo: int, hi: int) -> None:
        """Measure frames ``lo…hi-1`` of ``x``, which holds the reach on either side
        (``x[lo - _FILTER_MARGIN:hi + _FILTER_MARGIN]``).

        The frames within two reaches of the samples within 6 dB of the peak so far, on
        the channels that have such samples, are measured; of these only the ones whose
        true peak may top that peak (``_reaching``: the others cannot change it) are
        oversampled."""
        both = x[lo - _FILTER_MARGIN:hi + _FILTER_MARGIN]
        rows = np.abs(both.T, order="C")  # channels as rows: fast reductions
        loud = 2.0 * rows[:, _FILTER_MARGIN:_FILTER_MARGIN + hi - lo].max(axis=1) > self._peak
        if not loud.any():
            return
        if not loud.all():
            rows, both = rows[loud], both[:, loud]
        magnitude = rows.max(axis=0)
        near = np.flatnonzero(2.0 * magnitude[_FILTER_MARGIN:_FILTER_MARGIN + hi - lo]
                              > self._peak)
        # in ``both``'s frames, where lo is _FILTER_MARGIN
        first = max(_FILTER_MARGIN, near[0] - _FILTER_MARGIN)
        last = min(_FILTER_MARGIN + hi - lo, near[-1] + 3 * _FILTER_MARGIN + 1)
        starts, stops = _reaching(magnitude, self._peak, first, last)
        if len(starts):
            self._peak = max(self._peak, float(_envelope_at(both, starts, stops).max()))

    def include(self, peak: float) -> None:
        """Count ``peak``, the true peak of frames measured elsewhere (``add``'s
        ``elsewhere``): it is the peak so far if larger, which spares scanning what cannot
        top it."""
        self._peak = max(self._peak, peak)

    #: Frames on either side of a frame that its true peak depends on.
    REACH = _FILTER_MARGIN

    @property
    def measured_peak(self) -> float:
        """The largest true peak (linear) of the frames measured so far: all but the last
        ``REACH`` fed (they wait for the frames after them)."""
        return self._peak

    @property
    def peak(self) -> float:
        """The largest true peak (linear) of everything fed, silence assumed after it."""
        if self._tail is None:
            return 0.0
        end = np.concatenate([self._tail, np.zeros((_FILTER_MARGIN, self._tail.shape[1]))])
        envelope = true_peak_envelope(end)[_FILTER_MARGIN:-_FILTER_MARGIN]
        return max(self._peak, float(envelope.max(initial=0.0)))

    @property
    def peak_dbtp(self) -> float:
        """The peak in dBTP (−inf for silence)."""
        peak = self.peak
        return 20 * math.log10(peak) if peak > 0 else -math.inf


class TruePeakLimiter:
    """A look-ahead limiter that keeps the 4× oversampled peak under a ceiling.

    The required gain min(1, ceiling / true peak) is spread by a minimum filter
    over ±``window_s`` and then smoothed by a moving average of the same width,
    so the gain is down before a peak arrives and never above what it needs at
    the peak. Output lags input by the look-ahead; ``flush`` returns the rest.
    The same gain goes to every channel, so the spatial image is kept.

    The window is 50 ms, not the few ms of a fast limiter: a gain that dips and
    recovers within 10 ms modulates a drum stroke into sidebands reaching down to
    0 Hz (with 5 ms, the limited 貍首 held 5 dB more energy under 20 Hz than the
    render fed to it); a 100 ms dip keeps its sidebands within a few Hz of the
    drum's own partials.

    Parameters
    ----------
    ceiling_db : float, dBTP
    sample_rate : int, Hz
    channels : int
    window_s : float, seconds
        Attack / hold half-width (50 ms).
    key : callable or None
        Maps the buffer to the signal whose peak is limited (for stems: their
        sum); None → the signal itself.
    """

    def __init__(self, ceiling_db: float, sample_rate: int, channels: int,
                 window_s: float = 0.05,
                 key: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        self.ceiling = 10 ** (ceiling_db / 20)
        self._key = key or (lambda x: x)
        self._width = 2 * int(window_s * sample_rate) + 1
        self._reach = self.reach_of(sample_rate, window_s)  # samples of context on each side
        self._buffer = np.zeros((self._reach, channels))  # past context (silence before start)
        self.gain_reduction_db = 0.0
        self.touched = False  # whether the last samples returned were turned down

    @property
    def reach(self) -> int:
        """Samples on either side of a sample that its gain depends on (also the lag)."""
        return self._reach

    @staticmethod
    def reach_of(sample_rate: int, window_s: float = 0.05) -> int:
        """``reach`` of a limiter at ``sample_rate`` with ``window_s``."""
        return 2 * int(window_s * sample_rate) + 1 + _FILTER_MARGIN

    def process(self, block: np.ndarray) -> np.ndarray:
        """Feed a block; return the limited samples that are now final."""
        self._buffer = np.concatenate([self._buffer, block])
        return self._emit(len(self._buffer) - self._reach)

    def gains(self, block: np.ndarray) -> tuple[int, np.ndarray | None]:
        """``process`` without its product: how many frames are now final and their gain
        (None: 1 throughout). ``process``'s samples are those frames of what was fed
        (after the ``resume`` context) times ``gain[:, None]`` (or as fed), bit for bit:
        another process can limit from the gains alone."""
        self._buffer = np.concatenate([self._buffer, block])
        return self._final_gain(len(self._buffer) - self._reach)

    def resume(self, context: np.ndarray) -> None:
        """Start again after a gap, ``context`` being the ``reach`` samples before the next
        block (what precedes the stream's start is silence)."""
        self._buffer = np.asarray(context, dtype=float)[-self._reach:]

    def flush(self) -> np.ndarray:
        """Return the samples still held back (call once at the end)."""
        pending = len(self._buffer) - self._reach
        silence = np.zeros((self._reach, self._buffer.shape[1]))
        self._buffer = np.concatenate([self._buffer, silence])
        return self._emit(self._reach + pending)

    def _emit(self, stop: int) -> np.ndarray:
        x, start = self._buffer, self._reach
        frames, gain = self._final_gain(stop)
        if gain is None:
            return x[start:start + frames].copy()
        return x[start:start + frames] * gain[:, None]

    def _final_gain(self, stop: int) -> tuple[int, np.ndarray | None]:
        """The gain of the buffer's frames ``reach…stop-1`` (None: 1 throughout), which are
        then let go of (the buffer keeps the context for the next ones)."""
        start = self._reach
        if stop <= start:
            return 0, None
        x = self._buffer
        self.touched = False
        self._buffer = x[stop - self._reach:]
        key = self._key(x)
        if 2.0 * sample_peak(key) < self.ceiling:
            # the sample peak is 6 dB under the ceiling, so the true peak is under it too
            # (see TruePeakMeter): nothing to limit, skip the oversampling
            return stop - start, None
        peak = _loud_true_peak(key, self.ceiling)
        if float(peak.max(initial=0.0)) <= self.ceiling:  # loud, but the gain would be 1
            return stop - start, None
        gain = self._gain(peak)[start:stop]
        low = float(gain.min())
        if low >= 1.0:  # a sample times 1.0 is itself
            return stop - start, None
        self.touched = True
        self.gain_reduction_db = max(self.gain_reduction_db, -20 * math.log10(low))
        return stop - start, gain

    def _gain(self, peak: np.ndarray) -> np.ndarray:
        """The gain for a true-peak envelope: min(1, ceiling / peak), spread by the minimum
        filter and smoothed by the moving average. Both filters reach ``width // 2`` each
        way, so the gain is 1 farther than ``2 × (width // 2)`` from every sample over the
        ceiling: they run only on the spans around those."""
        gain = np.ones(len(peak))
        over = np.flatnonzero(peak > self.ceiling)
        reach = 2 * (self._width // 2)
        cuts = np.flatnonzero(np.diff(over) > 2 * reach) + 1
        for first, last in zip(over[np.r_[0, cuts]], over[np.r_[cuts - 1, len(over) - 1]],
                               strict=True):
            lo, hi = max(0, first - reach), min(len(peak), last + reach + 1)
            a, b = max(0, lo - reach), min(len(peak), hi + reach)  # what the filters read
            need = np.minimum(1.0, self.ceiling / np.maximum(peak[a:b], 1e-30))
            spread = uniform_filter1d(minimum_filter1d(need, self._width), self._width)
            gain[lo:hi] = spread[lo - a:hi - a]
        return gain


@dataclass(frozen=True, slots=True)
class LoudnessReport:
    """What the loudness pass measured and did.

    Parameters
    ----------
    measured_lufs : float, LUFS
        Integrated loudness of the raw render.
    target_lufs : float, LUFS
    gain_db : float, dB
        Gain applied before the limiter.
    output_lufs : float, LUFS
        Integrated loudness of the file written.
    raw_peak_dbtp, output_peak_dbtp : float, dBTP
        True peaks before (with the gain) and after the limiter.
    ceiling_dbtp : float, dBTP
    limiter_db : float, dB
        Largest gain reduction of the limiter.
    """

    measured_lufs: float
    target_lufs: float
    gain_db: float
    output_lufs: float
    raw_peak_dbtp: float
    output_peak_dbtp: float
    ceiling_dbtp: float
    limiter_db: float

    def text(self) -> str:
        """A short human-readable report."""
        if not math.isfinite(self.measured_lufs):  # a rite with no music, words or place
            return ("loudness: the render is silent (nothing in the part played makes a "
                    "sound: no music, words, actions or place); written as silence, no gain")
        return (f"loudness: measured {self.measured_lufs:.1f} LUFS, gain {self.gain_db:+.1f} dB "
                f"→ {self.output_lufs:.1f} LUFS (target {self.target_lufs:.1f}); true peak "
                f"{self.output_peak_dbtp:.1f} dBTP (ceiling {self.ceiling_dbtp:.1f}, limiter "
                f"{self.limiter_db:.1f} dB at most, {self.raw_peak_dbtp:.1f} dBTP before it)")
