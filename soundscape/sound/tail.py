"""The court's late tail as a send bus: the sources' dry notes, convolved once per render.

Every note a standing listener hears from a standing source (a note on a line, ``lines``)
is also sent, dry, to the tail of the court zone nearest its source (``Court.zone``: the
hall, the court by the hall, its middle, the targets): scaled to the late energy its own
place sends the listener (over the zone's, in the 1 kHz band) and shifted by the difference
of their direct paths. Each zone's sends are one line whose filter is the zone's late tail
at the listener (``court.tail``: decorrelated per output channel), so the whole late sound
of a render costs one forward FFT per zone and one inverse per channel per chunk, whatever
the number of notes. A note heard on its own (an event with its own position, a walking
listener's every note: ``send_heard``) is sent too, as a lined note is: its dry note, which
the heard note carries. A walking listener hears each zone's tail from where he is when the
note is sent, on a grid of ``WALK_CELL_M`` metres and ``WALK_TURN_DEG`` degrees of facing: a
zone's tail per cell it is heard from (a late field changes slowly across a court of 140 m).
It runs at ``tail_rate_hz`` (8 kHz: the late sound has crossed 100 m or more of air,
docs/site.md) and is brought up to the output's rate like a bus. A send is only added to
its zone's stream at its bus's rate (``_Stream``); each stream is brought down to the
tail's rate once a chunk, where it sounds, when the tail is taken (on the buses' threads,
not the render's main thread). The decimator is an FIR at each bus's rate and poles at the
tail's that every bus shares (``_decimator``), so the poles are part of each zone's tail
response (``Tail.response``), heard in its FFT, and no stream runs a recursion.

The early paths (up to ``early_ms``) are the spatialiser's; the tail holds the rest.
"""

from __future__ import annotations

import functools
import math
import weakref

import numpy as np
from scipy import signal
from scipy.linalg import blas

from soundscape.errors import RenderError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.court import BANDS, Court, stable_seed, tail
from soundscape.sound.lines import Lines, first_chunks, impulse_filter
from soundscape.sound.panning import Panner
from soundscape.sound.propagation import Air
from soundscape.sound.spatialise import GUARD

__all__ = ["WALK_CELL_M", "WALK_TURN_DEG", "Tail", "diffuse_weights", "kept_decimators_text",
           "tail_factor"]

#: Directions averaged for a layout's diffuse-field weights (``diffuse_weights``).
_DIRECTIONS = 512
#: How far (s) the late energy that sets a source's send level is summed (most of it).
_LEVEL_S = 1.5
_KHZ = BANDS.index(1000.0)
#: The decimator's pass band, as a fraction of the tail's Nyquist frequency.
_PASS = 0.9
#: y ← a·x + y on float32 (BLAS's, in place on a block's slice: ``_Stream.add``).
_axpy = blas.saxpy
#: Tail-rate frames a send is counted to ring after its last sample, for the render's extent
#: (``Tail.extent``; the decimator's poles ring in the tail's response, ``_poles_ring``).
_RING = 48
#: Bus frames per block of a stream's sends (``_Stream``: a whole number of tail frames):
#: 2 s at 48 kHz, 6 s at 16 kHz.
_BLOCK = 98304
#: The order of the decimator's low-pass (``_decimator``): its FIR in polyphase form
#: (``_polyphase``) reaches this many tail-rate frames back.
_ORDER = 8
#: Input frames per row of the tail's upsampler's product (the buses' ``Upsampler``, its
#: ``group``): 8 frames (48 outputs at 8 → 48 kHz) took 1.3–1.4 ms CPU per stereo chunk of
#: 28 672 frames against 32 frames' 1.9–2.0 (min of 9; 4, 6 or 12 frames: the same ±0.1 ms).
_UP_GROUP = 8
#: Tail-rate frames convolved at a time: 7.2 s at 8 kHz (a lines' ``CHUNK``), a 98 304-point
#: FFT with the 4.5 s tail: 22 % less FFT time per frame than 3.6 s in 65 536 points (s18's
#: tail 8 % less CPU, ``bench/bench_tail.py``). A take hears at most one chunk ahead of its
#: last frame (``guard``): the render keeps no more of the rite in flight than with two
#: chunks of 3.6 s, as the guard counted them before.
TAIL_CHUNK = 57344
#: A walking listener's grid (m) and facing step (degrees) for the tail he hears.
WALK_CELL_M = 10.0
WALK_TURN_DEG = 30.0


def diffuse_weights(panner: Panner) -> np.ndarray:
    """Each channel's share of a diffuse field's energy: its squared gain averaged over
    directions spread evenly on the sphere (a Fibonacci lattice)."""
    i = np.arange(_DIRECTIONS) + 0.5
    elevation = np.degrees(np.arcsin(1 - 2 * i / _DIRECTIONS))
    azimuth = np.degrees(np.pi * (1 + 5 ** 0.5) * i) % 360 - 180
    gains = np.array([panner.terms(float(a), float(e)).gains
                      for a, e in zip(azimuth, elevation, strict=True)])
    return (gains ** 2).mean(axis=0)


class Tail:
    """The late tail of a render heard by a standing listener (see the module docstring).

    Parameters
    ----------
    court : Court
    listener : Listener or ListenerPath
        A walker hears the tail from his grid cell at each send (``WALK_CELL_M``).
    panner : Panner
    channels : int
        Width of the mix (the panner's channels, times the stems).
    sample_rate : int, Hz
        The output's.
    air : Air
    seed : int
    rates : tuple of int
        The rates of the buses that send to it (each a whole multiple of the tail's).
    upsampler : type
        ``buses.Upsampler`` (given, not imported: the buses import this module): brings the
        tail up to the output's rate, in rows of ``_UP_GROUP`` frames.
    """

    def __init__(self, court: Court, listener: Listener | ListenerPath, panner: Panner,
                 channels: int, sample_rate: int, air: Air, seed: int,
                 rates: tuple[int, ...] = (), *, upsampler) -> None:
        factor = tail_factor(sample_rate, rates, court.model.tail_rate_hz)
        if sample_rate % factor:
            raise RenderError(f"a {sample_rate} Hz render has no tail rate near "
                              f"{court.model.tail_rate_hz} Hz that its buses divide")
        self.factor = factor
        self.rate = sample_rate // factor
        self.court = court
        self.walk: ListenerPath | None = None
        self.listener: Listener
        if isinstance(listener, Listener):
            self.listener = listener
        else:
            self.walk, self.listener = listener, listener.at(0.0)
        self.speed = air.speed_of_sound
        self.alpha = np.asarray(air.absorption_db_per_m(np.asarray(BANDS)))
        self.weights = diffuse_weights(panner)
        self.panner = panner
        self.seed = seed
        # its lines ask the tail for filters through a weak reference: a tail and its lines
        # are freed when the render is done, not when the cyclic collector next runs (a
        # kit's 64 court responses in one process kept ~8 MiB each meanwhile)
        self.lines = Lines(None, self.listener, channels, make_filter=_weakly(self._filter),
                           chunk=TAIL_CHUNK)
        self._up = upsampler(factor, channels, group=_UP_GROUP) if factor > 1 else None
        self._lag = 0 if self._up is None else self._up.delay
        self._ready = np.zeros((0, channels), dtype=np.float32)
        self._routes: dict[tuple, tuple] = {}
        #: each zone's (and ear's) sends per column, one stream per bus rate
        self._streams: dict[tuple, dict[int, _Stream]] = {}
        self._flushed = 0  # tail-rate frame up to which the sends are brought down
        self.output_rate = sample_rate
        self._energy: dict[tuple, float] = {}

    # What a source sends ------------------------------------------------------

    def response(self, zone, ear: Listener | None = None) -> tuple[int, np.ndarray]:
        """The zone's tail at the listener (``ear``: a walker's, where he is): (first
        sample, (frames, width) from it) at ``rate``, for a sound made at the zone's point
        at sample 0, through the poles of the decimator that brings the sends down to it."""
        ear = ear or self.listener
        late = self.court.late(zone, ear.position, alpha_db_per_m=self.alpha,
                               speed=self.speed)
        ir = tail(*late, rate=self.rate, length_s=self.court.model.tail_s,
                  weights=self.weights, diffusion_ms=self.court.hypothesis.diffusion_ms,
                  seed=stable_seed(self.seed, zone, ear.position),
                  pan=functools.partial(self._pan, ear))
        heard = np.flatnonzero(np.abs(ir).max(axis=1) > 0)
        first = int(heard[0]) if len(heard) else 0
        if self.factor == 1:
            return first, ir[first:]
        # the decimator's poles, shared by every bus (``_decimator``): heard here, once,
        # not run on each stream a chunk (its ring fits the FFT's room: 142 of 4 961 frames)
        ring = np.zeros((_poles_ring(self.factor), ir.shape[1]))
        return first, signal.sosfilt(_polyphase(self.factor)[1], np.vstack([ir[first:], ring]),
                                     axis=0)

    def _pan(self, ear: Listener, point) -> np.ndarray:
        """An image's gains per channel (the panner's, from where it stands; gain-only)."""
        azimuth, elevation, _ = ear.direction_to(point)
        return self.panner.terms(azimuth, elevation).gains

    def _filter(self, heard, face):
        del face  # the tail is omnidirectional
        zone, ear = heard
        first, ir = self.response(zone, ear)
        return impulse_filter(ir.T.astype(np.float32), first, TAIL_CHUNK)

    def ear(self, time: float) -> Listener:
        """Where the tail is heard from at ``time``: the listener, or a walker's grid cell
        and facing step then."""
        if self.walk is None:
            return self.listener
        here = self.walk.at(time)
        x, y, z = here.position
        turn = math.radians(WALK_TURN_DEG)
        facing = round(math.atan2(here.direction[1], here.direction[0]) / turn) * turn
        return Listener((round(x / WALK_CELL_M) * WALK_CELL_M,
                         round(y / WALK_CELL_M) * WALK_CELL_M, z),
                        (math.cos(facing), math.sin(facing), 0.0))

    def _late_energy(self, point, ear: Listener) -> float:
        found = self._energy.get((point, ear.position))
        if found is None:
            images = self.court.images(point, ear.position,
                                       reach_m=_LEVEL_S * self.speed)
            late = ~self.court.split(images, self.speed)
            d = images.distance[late]
            p = images.amplitude[late, _KHZ] * 10.0 ** (-self.alpha[_KHZ] * d / 20) / d
            found = self._energy[(point, ear.position)] = float((p ** 2).sum())
        return found

    def route(self, point, ear: Listener | None = None) -> tuple[tuple, float, float]:
        """Where a note from ``point`` goes: its zone's point, its send gain and delay (s)
        (heard from ``ear``: the listener unless a walker's)."""
        ear = ear or self.listener
        found = self._routes.get((point, ear))
        if found is None:
            _, zone = self.court.zone(point)
            at = np.asarray(ear.position)
            own, theirs = self._late_energy(tuple(point), ear), self._late_energy(zone, ear)
            gain = math.sqrt(own / theirs) if theirs > 0 else 0.0
            delay = (np.linalg.norm(np.subtract(point, at))
                     - np.linalg.norm(np.subtract(zone, at))) / self.speed
            found = self._routes[(point, ear)] = (zone, gain, float(delay))
        return found

    def send(self, rate: int, time: float, mono: np.ndarray, point, column: int) -> None:
        """Send a dry note (at ``rate``, sounding at ``point`` from ``time`` s) to its zone.

        It is only added, times its gain, to the zone's stream of sends at its bus's rate
        (``_Stream``): the stream is brought down to the tail's rate a chunk at a time, where
        it sounds, when the tail is taken (``_flush``, on the buses' threads)."""
        ear = self.ear(time)
        zone, gain, delay = self.route(point, ear)
        if gain == 0 or not mono.size:
            return
        streams = self._streams.setdefault(((zone, ear), column), {})
        stream = streams.get(rate)
        if stream is None:
            stream = streams[rate] = _Stream(self.factor // self._ratio(rate), self.factor)
        stream.add(round((time + delay) * rate), mono, gain)

    def send_heard(self, rate: int, time: float, note, point, column: int) -> None:
        """Send a note heard on its own (``spatialise.HeardNote`` at ``rate``, its event at
        ``time`` s, from ``point``) as ``send`` sends a lined note: its dry note, which it
        carries, so that it has the tail the same note on a line has. (Its heard channels
        projected on the direct sound's panning gains, sent before, carried the early
        reflections from near that direction too: at the gate the tail started late, EDT
        +20 %, docs/site.md.)"""
        dry = note[3]
        assert dry is not None, "a heard note for the tail carries its dry note (dry=True)"
        self.send(rate, time, dry, point, column)

    def _ratio(self, rate: int) -> int:
        if (self.factor * rate) % self.output_rate:
            raise RenderError(f"notes made at {rate} Hz cannot be sent to a {self.rate} Hz tail")
        return self.output_rate // rate

    def _flush(self, until: int) -> None:
        """Bring every zone's streams of sends down to the tail's rate up to frame ``until``
        and add them to the zone's line."""
        start = self._flushed
        if until <= start:
            return
        for key, streams in list(self._streams.items()):
            low = None
            for stream in streams.values():  # each bus's, in the order they first sent
                part = stream.take(start, until)
                if part is not None:
                    low = part if low is None else np.add(low, part, out=low)
            zone, column = key
            if low is not None:
                self.lines.add(start - self._lag, low, zone, None, column)
            elif self.walk is not None and not any(s.spans for s in streams.values()):
                del self._streams[key]  # a cell the walker has left
        self._flushed = until

    # What it gives back -------------------------------------------------------

    def guard(self, frame: int) -> int:
        """Output samples before an onset that a send may still change, when the output is
        taken up to ``frame``: up to the end of the last chunk that take hears (short near
        the start: ``lines``), the upsampler's lag, the decimator's reach, and a send's lead
        (a source nearer the listener than its zone's point is sent early; a heard note's
        guard). The chunks fall on fixed frames, so the take hears the one that holds its
        last frame and no later one: at most one chunk ahead."""
        width, depth = self.court.enclosure.size
        lead = math.ceil(math.hypot(width, depth) / self.speed * self.output_rate)
        end = self._chunk_end(frame // self.factor)
        return (end + self._lag + 4 + 1 + GUARD) * self.factor - frame + lead

    def _chunk_end(self, frame: int) -> int:
        """The tail frame after the lines' chunk that holds tail frame ``frame``."""
        end = 0
        for size in first_chunks(self.lines.size):
            end += size
            if frame < end:
                return end
        return (frame // self.lines.size + 1) * self.lines.size

    @property
    def extent(self) -> int:
        """Output samples up to the end of the last send's tail."""
        pending = max((stream.end for streams in self._streams.values()
                       for stream in streams.values()), default=0)
        return max(self.lines.extent, pending + round(self.court.model.tail_s * self.rate)
                   ) * self.factor

    def busy(self, frames: int) -> bool:
        """Whether taking ``frames`` hears a chunk (else it hands out frames made before)."""
        return len(self._ready) < frames

    def take(self, frames: int) -> np.ndarray:
        """The next ``frames`` output samples of the tail.

        Only the frames handed out are joined across chunks, not what is left of the last
        chunk made (7.2 s of output copied a chunk for a block of 1 s), and a chunk is brought
        up a piece at a time (``Upsampler.feed``) as the blocks need it."""
        parts, have = [], 0
        while have + len(self._ready) < frames:
            if len(self._ready):
                parts.append(self._ready)
                have += len(self._ready)
            if self._up is None or not self._up.fed:  # a chunk heard
                self._flush(self.lines.next_chunk + self._lag + self.lines.next_size())
                chunk = self.lines.chunk()
                if self._up is None:
                    self._ready = chunk
                    continue
                self._up.feed(chunk)  # brought up a piece at a time
            up, size = self._up.next()
            self._ready = (np.zeros((size, self._ready.shape[1]), np.float32) if up is None
                           else up)
        parts.append(self._ready[:frames - have])
        self._ready = self._ready[frames - have:]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


class _Stream:
    """One zone's sends from one bus, summed dry at the bus's rate (``down`` times the
    tail's), and the FIR part of its decimator: brought down a chunk at a time (``take``)
    where they sound.

    A send costs what adding it costs (its samples times its gain, as a line's note):
    overlapping notes (four 瑟 ringing 2.8 s, notes 0.7 s apart) are filtered once, as their
    sum. The decimator is an FIR at the bus's rate and poles at the tail's (``_decimator``),
    and the poles are the tail's to hear (``Tail.response`` holds them): what a stream gives
    is the FIR's output alone, every ``down``-th sample, which rings ``_ORDER`` frames past
    a send's last sample and not a sample more. So it is computed only where a send sounds
    (``spans``), each stretch from where it is asked, with no state carried between takes,
    and silence costs nothing. It is read ``lead`` bus frames ahead, so that the whole
    low-pass comes out on time."""

    def __init__(self, down: int, factor: int) -> None:
        self.down = down
        self.filtered = factor > 1  # an 8 kHz render's tail runs at its buses' rate
        self.lead = _lead(down, factor) if self.filtered else 0
        self.reach = _ORDER if self.filtered else 0
        self.block = _BLOCK // down  # tail frames per block
        #: the sends' sum in blocks of ``block`` tail frames (block i: bus frames
        #: ``lead + i·block·down`` on, ``block·down`` of them): never grown or moved,
        #: dropped whole when spent
        self.blocks: dict[int, np.ndarray] = {}
        #: tail-rate frames [first, last) the sends' filtered sound reaches
        self.spans: list[tuple[int, int]] = []
        self.end = 0  # tail-rate frame after the last send's last sample (and ``_RING``)
        self._phases = _reversed_phases(down, factor) if self.filtered else ()

    def add(self, onset: int, mono: np.ndarray, gain: float) -> None:
        """Add ``mono`` times ``gain`` from bus frame ``onset``."""
        size = self.block * self.down
        start = onset - self.lead  # from the first block's start
        stop = start + len(mono)
        for index in range(start // size, (stop - 1) // size + 1):
            block = self.blocks.get(index)
            if block is None:
                block = self.blocks[index] = np.zeros(size, dtype=np.float32)
            at = index * size
            lo, hi = max(start, at), min(stop, at + size)
            part = block[lo - at:hi - at]
            added = _axpy(mono[lo - start:hi - start], part, a=gain)  # in place, one pass
            if added is not part:  # a copy (never for a block's slice): keep its sum
                part[:] = added
        # tail frame m hears bus frames lead + m·down − k for k ≤ _ORDER·down
        last = -(-stop // self.down)  # the tail frame after its last sample's
        self.spans.append((-(-start // self.down), last + self.reach))
        self.end = max(self.end, last + _RING)

    def take(self, start: int, until: int) -> np.ndarray | None:
        """Tail-rate frames ``start``…``until`` (None when silent); forget what is spent.
        Stretches are taken in order, each from where the last ended."""
        out = None
        spans = _merged(self.spans)
        for first, last in spans:
            a, b = max(first, start), min(last, until)
            if b <= a:
                continue
            if out is None:
                out = np.zeros(until - start, dtype=np.float32)
            if not self.filtered:
                out[a - start:b - start] = self._columns(a, b)[0]
                continue
            out[a - start:b - start] = _low_pass(self._columns(a - self.reach, b),
                                                 self._phases)
        self.spans = [span for span in spans if span[1] > until]
        for index in [i for i in self.blocks if (i + 1) * self.block <= until - self.reach]:
            del self.blocks[index]
        return out

    def _columns(self, lo: int, hi: int) -> np.ndarray:
        """Tail frames ``lo``…``hi`` of the sends' sum, each frame's ``down`` bus frames a
        column, one row per phase (row j: bus frames ``lead + m·down + j``), read into double
        precision (exactly) in one pass from the blocks: zeros where there are none."""
        down = self.down
        size = self.block
        columns = np.empty((down, hi - lo))
        for index in range(lo // size, (hi - 1) // size + 1):
            block = self.blocks.get(index)
            at = index * size
            a, b = max(lo, at), min(hi, at + size)
            if block is None:
                columns[:, a - lo:b - lo] = 0.0
            else:
                columns[:, a - lo:b - lo] = block[(a - at) * down:(b - at) * down].reshape(
                    -1, down).T
        return columns


def _weakly(method):
    """``method`` called through a weak reference to its object (which owns the caller)."""
    found = weakref.WeakMethod(method)

    def call(*args):
        bound = found()
        assert bound is not None, "called after its object was freed"
        return bound(*args)
    return call


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` in order, those that meet or overlap joined."""
    out: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


def _low_pass(columns: np.ndarray, phases: tuple[np.ndarray, ...]) -> np.ndarray:
    """The decimator's FIR on ``columns`` (``_Stream._columns``: its ``_ORDER`` frames
    before the first output's, then one per output), every ``down``-th sample: for each
    phase j of the FIR's taps (j, j + down, …), the column of input samples it meets
    convolved with them. Only the whole windows are summed (``np.correlate``'s "valid":
    each output the same sum, oldest sample first, as ``np.convolve`` made it; 5 % faster
    than convolving the strided columns and cutting the full result)."""
    down = len(phases)
    frames = columns.shape[1] - _ORDER
    # the first phase's sum is the start (0 + x is x but for a zero's sign, which the
    # tail's sums from zero settle), not added into zeros: one pass less
    w = np.correlate(columns[0], phases[0], "valid")[:frames]
    for j, taps in enumerate(phases[1:], 1):
        # output m meets input (m + _ORDER − k)·down − j: rows m … m + len(taps) − 1 of
        # column −j mod down, against the taps from the last (k = len − 1) to the first
        w += np.correlate(columns[-j % down], taps, "valid")[:frames]
    return w


@functools.lru_cache(maxsize=8)
def _poles_ring(factor: int) -> int:
    """Tail frames after an impulse until the decimator's poles (``_polyphase``) ring 120 dB
    under their peakx."""
    poles = _polyphase(factor)[1]
    impulse = np.zeros(64 * _ORDER * 4)
    impulse[0] = 1.0
    response = np.abs(signal.sosfilt(poles, impulse))
    return int(np.flatnonzero(response > response.max() * 1e-6)[-1]) + 1


@functools.lru_cache(maxsize=8)
def _elliptic(factor: int) -> np.ndarray:
    """The output-rate bus's low-pass before keeping every ``factor``-th sample: elliptic,
    8th order, 0.1 dB ripple to 0.9 of the tail's Nyquist frequency (3.6 kHz at 8 kHz), 24
    dB down at its Nyquist frequency, 62 dB from 4.5 kHz (what folds into 3.5–4 kHz is a
    late tail that crossed 100 m of air, docs/site.md; the Kaiser FIR before it was 6 dB
    down at 4 kHz). Its sections."""
    return signal.ellip(_ORDER, 0.1, 70.0, _PASS / factor, output="sos")


@functools.lru_cache(maxsize=16)
def _decimator(down: int, factor: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The low-pass before keeping every ``down``-th sample of a bus (``down`` divides the
    tail's ``factor``): an FIR at the bus's rate and poles at the tail's, those of the
    output-rate bus's elliptic low-pass (``_polyphase``), shared by every bus, so that the
    tail's response holds them once (``Tail.response``) and no stream runs them. The
    output-rate bus's FIR is the elliptic's own; another bus's is the one nearest it, on
    time (``_fitted``); at the tail's own rate it is the poles' inverse (nothing filtered).

    Returns the FIR's taps (``_ORDER · down + 1``), the poles' sections at the tail's rate
    (numerators 1) and the lead in bus samples: the elliptic's group delay at 1 kHz (1.8
    tail frames: a late arrival heard with the early paths' would otherwise meet them a
    quarter period late at 1 kHz, 3 dB off in the court's EDT window at the gate), to the
    nearest sample of the output-rate bus, then of this one."""
    fir, poles = _polyphase(factor)
    if down == factor:
        return fir, poles, _lead(down, factor)
    if down == 1:  # already at the tail's rate: the poles undone, on time
        return np.real(np.poly(_tail_poles(factor))), poles, 0
    own, lead = _lead(down, factor), _lead(factor, factor)
    # the fit is late by what the rounding takes off: every bus's sends come down on time
    kept = _kept_decimators().get((down, factor))
    return (_fitted(down, factor, own / down - lead / factor) if kept is None else kept,
            poles, own)


@functools.lru_cache(maxsize=16)
def _lead(down: int, factor: int) -> int:
    """``_decimator``'s lead in bus samples (without its fit)."""
    if down == 1:
        return 0
    rate = 2.0 * factor  # in units of the tail's Nyquist frequency, where 1 kHz is 1/4 of 8 kHz
    # a cascade's delay is the sum of its sections': one transfer function of the whole
    # elliptic is too ill-conditioned at factor 24 (96 kHz), where it gave −6.7 for 43.6
    delay = sum(float(signal.group_delay((section[:3], section[3:]), w=[0.25], fs=rate)[1][0])
                for section in _elliptic(factor))
    lead = round(delay)  # at the output's rate
    return lead if down == factor else round(lead * down / factor)


#: The grid ``_fitted`` fits on: points per tail Nyquist frequency, and the weights of the
#: pass band (to ``_PASS``), the stop band (from 4.5 kHz of 4 on) and what lies between.
_FIT_POINTS = 2000
_FIT_STOP = 1.125
_FIT_WEIGHTS = (1.0, 30.0, 0.05)


def _fitted(down: int, factor: int, late: float) -> np.ndarray:
    """The FIR (``_ORDER · down + 1`` taps) that, with the shared poles at the tail's rate,
    comes nearest the output-rate bus's elliptic low-pass ``late`` tail frames later
    (complex response: gain and phase) up to this bus's Nyquist frequency: weighted least
    squares, the stop band 30 times the pass band's weight. The poles' images at this rate
    are what its taps cancel (Bellanger's FIR has as many taps for the same reason). At 16
    and 24 kHz of a 48 kHz render: within 0.01 dB of the elliptic to 3.6 kHz, 61 dB down
    from 4.5 kHz."""
    grid = np.linspace(0.0, down, _FIT_POINTS * down + 1)  # in tail Nyquist frequencies
    _, want = signal.sosfreqz(_elliptic(factor), worN=grid, fs=2.0 * factor)
    want = want * np.exp(-1j * np.pi * grid * late)
    delay = np.exp(-1j * np.pi * grid / down)  # z⁻¹ at this bus's rate
    poles = np.polyval(np.real(np.poly(_tail_poles(factor)))[::-1], delay ** down)
    basis = delay[:, None] ** np.arange(_ORDER * down + 1) / poles[:, None]
    pass_, stop, between = _FIT_WEIGHTS
    weight = np.where(grid <= _PASS, pass_, np.where(grid >= _FIT_STOP, stop, between))
    system = basis * weight[:, None]
    taps, *_ = np.linalg.lstsq(np.vstack([system.real, system.imag]),
                               np.concatenate([(want * weight).real, (want * weight).imag]),
                               rcond=None)
    return taps


#: ``_fitted``'s taps for the buses of the bundled instruments at 44.1, 48 and 96 kHz
_KEPT_FILE = "decimators.toml"


@functools.cache
def _kept_decimators() -> dict[tuple[int, int], np.ndarray]:
    """``data/decimators.toml``: ``_fitted``'s taps by (down, factor), fitted once
    (``python -m soundscape.sound.tail`` writes the file anew). Kept rather than fitted at
    every start (least squares over 12 000-32 000 equations: 0.05-0.1 s before the first
    audio), and the same taps on every machine (another LAPACK may round a fit's last bits
    otherwise). A float is written as the shortest text that reads back to it, so the taps
    read back bit for bit; the tests fit them anew and compare."""
    raw = read_toml(data_dir() / _KEPT_FILE, RenderError)
    return {(int(fir["down"]), int(fir["factor"])): np.array(fir["taps"], dtype=float)
            for fir in raw["fir"]}


def kept_decimators_text() -> str:
    """``data/decimators.toml`` anew: the fit of every (down, factor) that the bundled
    instruments' buses and the court's tail rate give at 44.1, 48 and 96 kHz."""
    from threadpoolctl import threadpool_limits

    from soundscape.music.instruments import list_instruments, load_instrument
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court
    from soundscape.sound.synth import made_at

    lines = ["# The court tail's decimators (soundscape/sound/tail.py, _fitted): the taps of the",
             "# FIR that brings a bus `down` times the tail's rate down to it, for a tail",
             "# `factor` times under the output's rate; fitted once and kept bit for bit.",
             "# Written by",
             "#   python -m soundscape.sound.tail > soundscape/data/decimators.toml", ""]
    instruments = [load_instrument(id_) for id_ in list_instruments()]
    for sample_rate in (44100, 48000, 96000):
        rates = tuple(sorted({made_at(i, sample_rate) for i in instruments} | {sample_rate}))
        factor = tail_factor(sample_rate, rates, load_court(load_site()).model.tail_rate_hz)
        for down in sorted({factor * rate // sample_rate for rate in rates}):
            if down in (1, factor):  # not fitted (``_decimator``)
                continue
            own, lead = _lead(down, factor), _lead(factor, factor)
            with threadpool_limits(1):  # as a render fits (one BLAS thread): the same bits
                taps = _fitted(down, factor, own / down - lead / factor)
            bus = sample_rate * down // factor
            lines += [f"[[fir]]  # {sample_rate} Hz output, a {bus} Hz bus",
                      f"down = {down}", f"factor = {factor}",
                      "taps = [", *(f"  {float(tap)!r}," for tap in taps), "]", ""]
    return "\n".join(lines)


def tail_factor(sample_rate: int, rates: tuple[int, ...], tail_rate_hz: int) -> int:
    """The tail's rate as a fraction of ``sample_rate``: a whole fraction of every bus's
    (``rates``), near ``tail_rate_hz``."""
    step = math.lcm(*(sample_rate // rate for rate in rates)) if rates else 1
    return max(step, round(sample_rate / tail_rate_hz / step) * step)


def _tail_poles(factor: int) -> np.ndarray:
    """The poles of ``_polyphase``'s sections at the tail's rate."""
    return np.concatenate([np.roots([1.0, a1, a2]) for *_, a1, a2 in _polyphase(factor)[1]])


@functools.lru_cache(maxsize=8)
def _polyphase(factor: int) -> tuple[np.ndarray, np.ndarray]:
    """``_elliptic(factor)`` as an FIR at the output's rate and poles at the tail's
    (Bellanger's polyphase IIR decimator): each section's pole pair p, p* is cancelled by
    the zeros of Σₖ pᵏ z⁻ᵏ (k < factor), which leaves the poles pᶠᵃᶜᵗᵒʳ, p*ᶠᵃᶜᵗᵒʳ in
    z⁻ᶠᵃᶜᵗᵒʳ: a recursion on the kept samples alone. Returns the FIR's taps and the poles'
    sections at the tail's rate (numerators 1)."""
    fir = np.ones(1)
    poles = []
    for b0, b1, b2, _, a1, a2 in _elliptic(factor):
        pair = np.roots([1.0, a1, a2])
        cancel = np.ones(1, dtype=complex)
        for pole in pair:
            cancel = np.convolve(cancel, pole ** np.arange(factor))
        fir = np.convolve(fir, np.convolve([b0, b1, b2], cancel.real))
        poles.append([1.0, 0.0, 0.0, *np.real(np.poly(pair ** factor))])
    return fir, np.array(poles)


@functools.lru_cache(maxsize=16)
def _reversed_phases(down: int, factor: int) -> tuple[np.ndarray, ...]:
    """``_decimator``'s taps by phase (j, j + down, …), each reversed (what ``np.correlate``
    slides)."""
    fir = _decimator(down, factor)[0]
    return tuple(fir[j::down][::-1].copy() for j in range(down))


if __name__ == "__main__":
    print(kept_decimators_text())
