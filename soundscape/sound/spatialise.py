"""Spatialisation: one dry note turned into its channels at the listener, and the heard notes.

Filtering is done per note in the frequency domain, on one FFT of the note:
each propagation path (``propagation.paths``) multiplies it by its ISO 9613-1
air magnitude at every bin, its exact (fractional) delay as a linear phase,
and, for binaural, the Brown & Duda head-shadow response; gain-only panners
(ambisonics, VBAP) get one inverse FFT per path and a gain matrix, the others
one per channel. These transfer functions are the same for every note of a
source that stands still, heard by a listener who does too: they are kept, so
a note costs one FFT and its inverse ones. A note from where no other sounded (a
step of a walk, an arrow landing) needs its own: on a fine grid they are summed
over the paths by matrix products (``_Grid.summed``: the air drawn as a parabola
a block of bins, within 1e-4 of ISO 9613-1's), not path by path and bin by bin.

A *heard note* is an event's note at the listener: ``(start, signals, mix, dry)``
(see ``Spatialiser.__call__``; ``dry``: its dry note, which the court's late tail is sent,
as a lined note is, ``tail.Tail.send_heard``), or None when it is silent. Onsets are rounded to
the sample grid, so for a standing listener a heard note depends only on its
key (``HeardNotes.key``: the dry note's key and variant, the source point and
struck face): it is computed once and added again at every repeat.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.fft

from soundscape.performance import Performance
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.notes import ByteLru, DryNotes, EventVariants, event_variants
from soundscape.sound.panning import Panner, head_shadow
from soundscape.sound.propagation import Air, Surroundings, absorption_on_grid, paths

__all__ = ["GUARD", "RESPONSE_BYTES", "HeardNote", "HeardNotes", "Spatialiser", "fft_size",
           "heard_bytes"]

#: Samples of room before and after each filtered note (zero-phase air filter).
GUARD = 64
#: Bound of the kept transfer functions (one per source place, listener and FFT size).
RESPONSE_BYTES = 8 << 20
#: Places whose arrivals a spatialiser keeps.
ARRIVALS = 256
#: A note at the listener (``Spatialiser.__call__``): (start frame relative to the onset,
#: signals (frames, k) float32, mix (k, channels) or None).
Heard = tuple[int, np.ndarray, np.ndarray | None]
#: A heard note: ``Heard`` and the dry note it was heard from (float32, from the onset; None
#: where nothing takes it: a render without the court's tail).
HeardNote = tuple[int, np.ndarray, np.ndarray | None, np.ndarray | None]
#: Events whose heard-note keys are kept (the helper works at most a few hundred ahead).
_KEYS_KEPT = 2048

_DB_TO_NEPER = math.log(10) / 20  # amplitude dB → natural log
#: Bins of the fine table of a phase ramp (``_Grid.delay``).
_FINE = 256
#: Widest block of bins (Hz) over which the air is drawn as a parabola (``_Grid.summed``):
#: its worst error lies at 50-110 Hz, where α bends most (nitrogen's relaxation): for a
#: path of 90 m, 9e-6 of the air there at 62.5 Hz a block, 6e-5 (5e-4 dB) at 125 Hz,
#: 5e-4 at 250 Hz; 1e-8 above 1 kHz. Blocks have 64 to ``_FINE`` bins: a grid coarser
#: than that (a note under ~0.5 s) is made as before, its response cheap anyway.
_SMOOTH_HZ = 100.0
#: Fewest bins of a block of ``_Grid.summed`` (fewer: more coarse phases than it saves).
_FEWEST = 64
#: A note whose response would be larger is made a row at a time, response and inverse
#: transform (the same bits: each row's are its own): a 25 s note heard through 16 paths
#: held its response, their product with the spectrum and the inverse transforms at once,
#: 134 MB each; four rows at a time still raised the helper's RSS by up to 197 MiB, and at
#: this size one row's transform is faster than four side by side (0.14 against 0.21 s for
#: twelve rows of 1 572 864 points: four columns are read with a stride).
_AT_ONCE_BYTES = 16 << 20


def fft_size(n: int) -> int:
    """Smallest 2^k or 3·2^k ≥ n (few distinct sizes, so the air tables cache well)."""
    power = 1 << max(0, (n - 1).bit_length())
    return 3 * power // 4 if 3 * power // 4 >= n else power


class Spatialiser:
    """Turns one mono note into its multichannel contribution at the listener."""

    def __init__(self, panner: Panner, surroundings: Surroundings, sample_rate: int) -> None:
        self.panner = panner
        self.surroundings = surroundings
        self.sample_rate = sample_rate
        self.channels = len(panner.channels)
        self._responses = ByteLru(RESPONSE_BYTES)
        # the arrivals per (source point, listener, face), the least recent dropped past ARRIVALS:
        # the spatialiser's own (a cache on the class kept every spatialiser of a process
        # alive, each with up to RESPONSE_BYTES of responses)
        self._arrivals: dict[tuple, tuple] = {}

    def __call__(self, mono: np.ndarray, source_point, listener: Listener,
                 struck_face) -> Heard:
        """The note heard by ``listener``, for an onset at frame 0.

        Returns
        -------
        start : int, samples
            Frame of the first output sample, relative to the onset.
        signals : ndarray (frames, k), float32
            The channels (``mix`` None), or one filtered signal per path.
        mix : ndarray (k, channels) or None
            For gain-only panners: per-path channel gains (output = signals @ mix);
            keeping k ≤ 3 paths instead of 16 channels keeps the cache small.
        """
        arrivals, start, last = self.arrivals(source_point, listener, struck_face)
        length = len(mono) + math.ceil(last) - start + GUARD
        n_fft = fft_size(length)
        count = self.channels if self._per_channel(arrivals) else len(arrivals)
        if count * (n_fft // 2 + 1) * 8 > _AT_ONCE_BYTES:
            return start, *self._a_row_at_a_time(mono, source_point, listener, struck_face,
                                                 n_fft, length, count)
        response, mix = self.response(source_point, listener, struck_face, n_fft)
        spectrum = scipy.fft.rfft(mono, n_fft)  # float32: half the work
        # frame-major (adds fast) straight from inverse transforms along the first axis: the
        # same bits as along the last and a transposed copy, a fifth less time; its first
        # ``length`` frames are contiguous (``keep`` makes them compact)
        out = scipy.fft.irfft(response.T * spectrum[:, None], n_fft, axis=0)[:length]
        return start, out, mix

    def _a_row_at_a_time(self, mono: np.ndarray, source_point, listener: Listener,
                         struck_face, n_fft: int, length: int, count: int
                         ) -> tuple[np.ndarray, np.ndarray | None]:
        """A long note's ``count`` rows made one at a time, response and inverse transform:
        each row's are its own, so the bits are those of all at once."""
        spectrum = scipy.fft.rfft(mono, n_fft)
        out = np.empty((length, count), np.float32)
        mix = None
        for row in range(count):
            response, mix = self.response(source_point, listener, struck_face, n_fft,
                                          slice(row, row + 1))
            np.multiply(response[0], spectrum, out=response[0])
            out[:, row] = scipy.fft.irfft(response[0], n_fft)[:length]
        return out, mix

    def arrivals(self, source_point, listener: Listener, struck_face) -> tuple:
        """Each path with its panning terms and delays (samples) per channel; the first
        output frame (``start``, relative to the onset) and the latest delay (kept: every
        note of a standing source asks again)."""
        key = (source_point, listener, struck_face)
        found = self._arrivals.pop(key, None)  # put back last: the least recently asked go
        if found is None:
            if len(self._arrivals) >= ARRIVALS:
                del self._arrivals[next(iter(self._arrivals))]
            found = self._arrivals_of(source_point, listener, struck_face)
        self._arrivals[key] = found
        return found

    def _arrivals_of(self, source_point, listener: Listener, struck_face) -> tuple:
        fs = self.sample_rate
        c = self.surroundings.air.speed_of_sound
        arrivals = []
        for path in paths(source_point, listener.position, surroundings=self.surroundings,
                          struck_face=struck_face):
            azimuth, elevation, _ = listener.direction_to(path.point)
            terms = self.panner.terms(azimuth, elevation)
            delays = path.distance / c * fs + (
                np.zeros(self.channels) if terms.delays_s is None else terms.delays_s * fs)
            arrivals.append((path, terms, delays))
        first = min(float(d.min()) for _, _, d in arrivals)
        last = max(float(d.max()) for _, _, d in arrivals)
        return arrivals, math.floor(first) - GUARD, last

    def response(self, source_point, listener: Listener, struck_face, n_fft: int,
                 rows: slice | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """The transfer functions on an ``n_fft`` grid: one row per channel (``mix`` None)
        or per path (with ``mix``, the per-path channel gains), from the onset to ``start``.

        The same for every note of a source standing still for a standing listener, so
        it is kept (``RESPONSE_BYTES``): a note then costs one FFT and an inverse FFT
        per row. ``rows``: only those rows (not kept), ``mix`` whole.
        """
        key = (source_point, listener, struck_face, n_fft)
        kept = self._responses.get(key) if rows is None else None
        if kept is not None:
            return kept
        arrivals, start, _ = self.arrivals(source_point, listener, struck_face)
        grid = _grid(self.surroundings.air, n_fft, self.sample_rate)
        made = (self._summed if grid.block else self._exact)(
            arrivals, start, grid, self._per_channel(arrivals), rows or slice(None))
        if rows is None:
            self._responses.put(key, made, made[0].nbytes)
        return made

    def _per_channel(self, arrivals: list) -> bool:
        """Whether a response has a row per channel, not per path: when the head needs it,
        or when there are no more channels than paths (stereo: two, not three, and a smaller
        note to cache)."""
        return self.channels <= len(arrivals) or any(
            t.delays_s is not None or t.shadow is not None for _, t, _ in arrivals)

    def _summed(self, arrivals: list, start: int, grid: _Grid, per_channel: bool,
                rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray | None]:
        """The response by ``_Grid.summed``: a matrix product a row (a channel, or a path
        for a gain-only panner) in place of a phase ramp, an air and their product per
        path and channel.

        The head shadow (1 + jαw)·pole is linear in the path's α: a channel is pole ×
        (Σ of the paths + jw × Σ of the paths weighted by their α), two rows of one
        product."""
        nepers = [-path.distance * _DB_TO_NEPER for path, _, _ in arrivals]
        if not per_channel:  # a path's delay is its nearest channel's (gain-only: all one)
            return (np.concatenate([grid.summed([float(delays.min()) - start], [neper],
                                                np.array([[path.gain]]))
                                    for neper, (path, _, delays) in zip(
                                        nepers[rows], arrivals[rows], strict=True)]),
                    np.stack([t.gains for _, t, _ in arrivals]).astype(np.float32))
        channels = range(self.channels)[rows]
        total = np.empty((len(channels), grid.n_fft // 2 + 1), dtype=np.complex64)
        shadowed = any(t.shadow is not None for _, t, _ in arrivals)
        for row, ch in enumerate(channels):
            gains = [path.gain * float(t.gains[ch]) for path, t, _ in arrivals]
            weights = [gains] + ([[g * (1.0 if t.shadow is None else float(t.shadow[ch]))
                                   for g, (_, t, _) in zip(gains, arrivals, strict=True)]]
                                 if shadowed else [])
            made = grid.summed([float(d[ch]) - start for _, _, d in arrivals], nepers,
                               np.array(weights))
            # no shadow is α = 1: (1 + jw)·pole = 1
            total[row] = (grid.shadow_pole * (made[0] + 1j * grid.shadow_w * made[1])
                          if shadowed else made[0])
        return total, None

    def _exact(self, arrivals: list, start: int, grid: _Grid, per_channel: bool,
               rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray | None]:
        """The response path by path and channel by channel: each an air (an exp of every
        bin), a phase ramp (``_Grid.delay``), their product, weighted and summed (a short
        note's grid, too coarse for ``_Grid.summed``'s parabolas)."""
        mix = (None if per_channel else
               np.stack([t.gains for _, t, _ in arrivals]).astype(np.float32))
        if not per_channel:  # a path's delay is its nearest channel's (gain-only: all one)
            arrivals = arrivals[rows]
        airs = [np.exp(grid.alpha * np.float32(-path.distance * _DB_TO_NEPER)) * path.gain
                for path, _, _ in arrivals]
        if not per_channel:
            return (np.stack([air * grid.delay(float(delays.min()) - start)
                              for air, (_, _, delays) in zip(airs, arrivals, strict=True)]),
                    mix)
        # each channel of each path delayed by its own arrival, in one phase ramp
        channels = range(self.channels)[rows]
        total = np.zeros((len(channels), grid.n_fft // 2 + 1), dtype=np.complex64)
        for air, (_, terms, delays) in zip(airs, arrivals, strict=True):
            for row, ch in enumerate(channels):
                channel = air * grid.delay(float(delays[ch]) - start)
                channel *= np.float32(terms.gains[ch])
                if terms.shadow is not None:
                    channel *= grid.shadow(terms.shadow[ch])
                total[row] += channel
        return total, None


@dataclass(frozen=True)
class _Grid:
    """Per-FFT-size tables: air absorption α (dB/m) and the head-shadow pieces per bin.

    The tables of every bin are made when first asked for: a fine grid's responses
    (``summed``) need only its ``knots``, and only binaural ones the head shadow's pieces;
    made at once, the kept grids of a whole rite's long notes held 23 MiB in the note
    helper, and their α in float64 (``absorption_on_grid``) 12 more."""

    air: Air
    sample_rate: int
    n_fft: int
    #: Bins of a block of ``summed`` (0: too coarse a grid for it) and α (dB/m) at every
    #: half block, to the end of the last block.
    block: int
    knots: np.ndarray

    @functools.cached_property
    def alpha(self) -> np.ndarray:
        """α (dB/m) at every bin."""
        return absorption_on_grid(self.air, self.n_fft, self.sample_rate).astype(np.float32)

    @functools.cached_property
    def _shadow(self) -> tuple[np.ndarray, np.ndarray]:
        freqs = np.fft.rfftfreq(self.n_fft, 1.0 / self.sample_rate)
        pole = head_shadow(0.0, freqs, speed_of_sound=self.air.speed_of_sound)  # 1/(1 + jw) …
        w = (1 / pole - 1).imag  # … gives back w = ω/(2ω0)
        return w.astype(np.float32), pole.astype(np.complex64)

    @property
    def shadow_w(self) -> np.ndarray:
        """w = ω/(2ω0) at every bin (the head shadow's, ``head_shadow``)."""
        return self._shadow[0]

    @property
    def shadow_pole(self) -> np.ndarray:
        """1/(1 + jw) at every bin."""
        return self._shadow[1]

    def delay(self, samples: float) -> np.ndarray:
        """e^(−jωd): a delay of ``samples`` (fractional) as a linear phase.

        Bin k = q·B + r has the phase of r plus that of q·B: a table of ``B`` fine and
        one of ``len/B`` coarse phases (each a short complex exponential in float64), and
        one complex64 product per bin. A note whose source stands where no other did needs
        its own response, one phase ramp per path and channel: cos and sin of every bin
        took most of a whole rite's ~6 s of responses. Exact to float32 rounding (the
        angle of a far bin is taken in float64, not float32)."""
        bins = self.n_fft // 2 + 1
        step = -2.0 * np.pi * float(samples) / self.n_fft
        fine = np.exp(1j * step * np.arange(_FINE)).astype(np.complex64)
        coarse = np.exp(1j * (step * _FINE) * np.arange(-(-bins // _FINE)))
        return np.multiply.outer(coarse.astype(np.complex64), fine).reshape(-1)[:bins]

    def summed(self, delays: list[float], nepers: list[float],
               weights: np.ndarray) -> np.ndarray:
        """Σ_t weights[i, t] · air_t · e^(−jωd_t) over terms t, a row i each: the terms'
        delays (samples), air (α in dB/m times this as nepers) and real weights.

        Bin k = q·B + r (B = ``block``): the phase ramp is a coarse phase (q·B) times a
        fine one (r), as in ``delay``; the air, smooth in frequency, is the parabola
        through its values at the block's start, middle and end (``knots``; off by < 3e-5
        of itself: ``_SMOOTH_HZ``). So a row is Σ_t Σ_n c_tqn · f_tr · (r/B)^n, n = 0..2,
        with c = weight × the parabola's coefficients × the coarse phase and f the fine
        phases: one matrix product (blocks × 3 terms) @ (3 terms × B) a row, where a term
        at a time made, weighted and summed a phase ramp and an air (an exp) of every
        bin, at two to four times the cost (float32 sums: ~1e-5 of the largest row).
        BLAS's matrix product: the render runs it on one thread (``render_blocks``)."""
        bins, fine_n = self.n_fft // 2 + 1, self.block
        blocks = -(-bins // fine_n)
        step = -2.0 * np.pi * np.asarray(delays, dtype=float)[:, None] / self.n_fft
        fine = np.exp(1j * step * np.arange(fine_n)).astype(np.complex64)
        coarse = np.exp(1j * (step * fine_n) * np.arange(blocks))
        air = np.exp(self.knots * np.asarray(nepers, dtype=float)[:, None])
        start, middle, end = air[:, 0:-1:2], air[:, 1::2], air[:, 2::2]
        curve = 2.0 * (start - 2.0 * middle + end)
        left = np.stack([start * coarse, (end - start - curve) * coarse, curve * coarse],
                        axis=2)  # (terms, blocks, 3)
        left = (weights[:, None, :, None] * left.transpose(1, 0, 2)[None]).astype(
            np.complex64)  # (rows, blocks, terms, 3)
        t = np.arange(fine_n, dtype=np.float32) / fine_n
        right = fine[:, None, :] * np.stack([np.ones_like(t), t, t * t])[None]
        out = left.reshape(len(weights) * blocks, -1) @ right.reshape(-1, fine_n)
        return out.reshape(len(weights), blocks * fine_n)[:, :bins]

    def shadow(self, alpha: float) -> np.ndarray:
        """Brown & Duda head shadow (1 + jαw)/(1 + jw) on this grid (see ``head_shadow``)."""
        return (1 + 1j * np.float32(alpha) * self.shadow_w) * self.shadow_pole


@functools.lru_cache(maxsize=32)
def _grid(air: Air, n_fft: int, sample_rate: int) -> _Grid:
    bins = n_fft // 2 + 1
    block = _FINE
    while block > _FEWEST and block * sample_rate / n_fft > _SMOOTH_HZ:
        block //= 2
    block *= block * sample_rate / n_fft <= _SMOOTH_HZ
    knots = air.absorption_db_per_m(
        np.arange(2 * -(-bins // max(block, 1)) + 1) * (block / 2 * sample_rate / n_fft))
    return _Grid(air, sample_rate, n_fft, block, knots)


def heard_bytes(note: HeardNote | np.ndarray | None) -> int:
    """Bytes a heard note (with its dry note) or a dry one holds (what the caches count)."""
    if note is None:
        return 0
    if isinstance(note, np.ndarray):
        return note.nbytes
    return note[1].nbytes + (0 if note[3] is None else note[3].nbytes)


class HeardNotes:
    """Event ``index`` → its heard note (made for that event: a standing listener's notes that
    repeat go on lines, dry, ``buses.Buses.lined``).

    ``compute`` is a pure function of the index (given the performance,
    listener, seed and options), so any process computes the same bits. With ``dry`` a
    heard note carries its dry note (the court's tail is sent it); without, None.
    """

    def __init__(self, performance: Performance, listener: Listener | ListenerPath,
                 spatialiser: Spatialiser, dry_notes: DryNotes, seed: int,
                 variants: EventVariants | None = None, *,
                 dry: bool = True) -> None:
        self.performance = performance
        self.listener = listener
        self.spatialiser = spatialiser
        self.dry_notes = dry_notes
        self.seed = seed
        self.dry = dry
        self._keys: dict[int, tuple] = {}
        self._variants = variants  # each event's (``notes.event_variants``), made when first asked

    def key(self, index: int) -> tuple:
        """What event ``index``'s heard note depends on: note key, variant, source point,
        struck face (worked out once per event: the render asks up to three times, within
        the few hundred events its helper works ahead)."""
        found = self._keys.get(index)
        if found is None:
            found = self._keys[index] = self._key(index)
            if len(self._keys) > _KEYS_KEPT:
                del self._keys[next(iter(self._keys))]  # the oldest asked for
        return found

    def _key(self, index: int) -> tuple:
        event = self.performance.events[index]
        source = self.performance.sources[event.source]
        if self._variants is None:
            self._variants = event_variants(self.performance, self.dry_notes, self.seed)
        variant = self._variants[index]
        point = tuple(float(v) for v in (event.position or source.position_at(event.time)))
        return (self.dry_notes.key(event, source), variant, point, source.struck_face)

    def compute(self, index: int) -> HeardNote | None:
        event = self.performance.events[index]
        source = self.performance.sources[event.source]
        key, variant, point, face = self.key(index)
        mono = self.dry_notes(event, source, key, variant)
        if mono.size == 0:
            return None
        return (*self.spatialiser(mono, point, self.listener.at(event.time), face),
                mono if self.dry else None)
