"""Streaming spatial render of a Performance to an audio file.

How it streams: events come sorted by onset. Each event's note is rendered
(mono, at 1 m), sent along its propagation paths (``propagation.paths``) and
panned (``panning``), and added into an accumulator that holds only the
frames not yet written — the longest ring plus the longest delay, never the
whole rite. Frames before the next onset (less a small guard) can no longer
change and are handed out in fixed blocks, so peak memory does not grow with
the length of the rite.

Filtering is done per event in the frequency domain, on one FFT of the note:
each path multiplies it by its ISO 9613-1 air magnitude at every bin, its
exact (fractional) delay as a linear phase, and, for binaural, the Brown &
Duda head-shadow response; gain-only panners (ambisonics, VBAP) get one
inverse FFT per path and a gain matrix, the others one per channel.

Loudness is two passes, both streaming: pass 1 renders to a raw float32 file
in a temporary folder beside the destination while a BS.1770 meter and a
true-peak meter run; pass 2 reads it back in blocks, applies the gain to the
target and a true-peak limiter, and writes the final file while metering it
(filtering only near the limiter's work and following pass 1's meter
elsewhere, since K-weighting is linear). If the limiter took the loudness
more than 0.2 LU off the target, dry runs of pass 2 (measure only) correct the
gain and the file is written again. File I/O, metering and sample packing run
on background threads beside the rendering. The destination appears only when
complete.

Notes repeat (four 瑟 in unison, a song sung three times, drum strokes of one
velocity), so they are cached. A note is keyed by its instrument, pitch,
velocity, duration, articulation and lyric, plus a *variant* in
0…``_VARIANTS``−1 picked by a stable hash of (seed, event index): repeats keep
some natural variation, and each variant's generator is seeded by a stable
hash of (seed, key, variant). Onsets are rounded to the sample grid, so a
note's spatialised output for a standing listener depends only on the key,
the variant and the source point: it is computed once and added again at
every repeat. Dry notes are cached too (reused by a walking listener and at a
new point). Both caches are LRU bounded in bytes, so memory stays flat.

Determinism: the same Performance, options and seed give the same bytes,
whatever the block size or cache size (a cached result is bit-identical to a
recomputed one).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import multiprocessing
import signal
import tempfile
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import scipy.fft
from tqdm import tqdm

from soundscape.errors import RenderError
from soundscape.fileio import write_text
from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.audiofile import (
    FORMATS,
    BlockWriter,
    Cue,
    open_writer,
    subtype_for,
    write_sidecar,
)
from soundscape.sound.loudness import (
    LoudnessMeter,
    LoudnessReport,
    MeterSnapshot,
    TruePeakLimiter,
    TruePeakMeter,
)
from soundscape.sound.panning import Panner, head_shadow, make_panner
from soundscape.sound.propagation import Air, Surroundings, absorption_on_grid, paths

__all__ = ["CACHE_BYTES", "SAMPLE_RATES", "RenderResult", "SynthVoice", "Voice",
           "render_audio", "render_blocks"]

SAMPLE_RATES = (44100, 48000, 96000)
#: A note voice: (event, source, *, sample_rate, rng) → mono float array at 1 m, amplitude
#: relative to ``Surroundings.reference_db`` (1.0 = 94 dB SPL). It may depend only on the
#: source, the event's pitch, velocity, duration, articulation and lyric, and the rng
#: (notes are cached by those).
Voice = Callable[..., np.ndarray]
#: Default bound of the note caches, bytes (spatialised notes; dry notes get a quarter).
CACHE_BYTES = 192 << 20

_TAIL_FLOOR = 1e-5  # −100 dB
_MIX_FRAMES = 4096  # frames panned per piece (16 float32 channels: 256 KiB, in cache)
_GUARD = 64  # samples of room before and after each filtered note (zero-phase air filter)
_DB_TO_NEPER = math.log(10) / 20  # amplitude dB → natural log
_LIMITER_MARGIN_DB = 0.1  # the limiter aims this far under the ceiling (gain ripple)
_SETTLE_LU = 0.2  # a limited output this close to the loudness target is kept
_VARIANTS = 3  # renderings kept per repeated note: some variation, few syntheses


class SynthVoice:
    """The default voice: ``synth.render_note`` scaled by the instrument's level at 1 m.

    Parameters
    ----------
    reference_db : float, dB SPL
        Level that maps to amplitude 1.0 (must match ``Surroundings.reference_db``).
    """

    def __init__(self, reference_db: float = 94.0) -> None:
        self.reference_db = reference_db
        self._instruments: dict[str, object] = {}

    def __call__(self, event: Event, source: Source, *, sample_rate: int,
                 rng: np.random.Generator) -> np.ndarray:
        from soundscape.music.instruments import load_instrument
        from soundscape.sound import synth

        if source.instrument not in self._instruments:
            self._instruments[source.instrument] = load_instrument(source.instrument)
        instrument = self._instruments[source.instrument]
        note = synth.render_note(
            instrument, hz=None if event.pitch is None else event.pitch.hz,
            velocity=event.velocity, duration=event.duration,
            articulation=event.articulation, sample_rate=sample_rate, rng=rng,
            lyric=event.lyric, pitch=None if event.pitch is None else event.pitch.name)
        return note * 10 ** ((instrument.loudness_db - self.reference_db) / 20)


class _Accumulator:
    """The frames not yet handed out, from absolute frame ``base`` on, in chunks.

    Chunks of ``chunk`` frames (the block size) are added as notes reach
    further and handed out whole as blocks, so growing never copies what is
    there and a block costs no copy.
    """

    def __init__(self, channels: int, chunk: int) -> None:
        self.base = 0
        self.extent = 0
        self.channels = channels
        self.chunk = chunk
        self._chunks: deque[np.ndarray] = deque()
        self._first = 0  # absolute frame where _chunks[0] begins (≤ base)

    def add(self, start: int, data: np.ndarray, column: int = 0,
            mix: np.ndarray | None = None) -> None:
        """Add ``data`` (frames, k) at absolute frame ``start``, channels ``column…column+k``;
        with ``mix`` (paths, k), add ``data @ mix`` (``data`` then has one column per path)."""
        if start < self.base:  # only the guard before frame 0 can fall here
            data = data[self.base - start:]
            start = self.base
        if mix is None:
            self._add(start, data, column)
        else:  # in cache-sized pieces from the note's start (so whatever the block size)
            for i in range(0, len(data), _MIX_FRAMES):
                self._add(start + i, data[i:i + _MIX_FRAMES] @ mix, column)
        self.extent = max(self.extent, start + len(data))

    def _add(self, start: int, data: np.ndarray, column: int) -> None:
        end = start + len(data)
        while self._first + len(self._chunks) * self.chunk < end:
            self._chunks.append(np.zeros((self.chunk, self.channels), dtype=np.float32))
        at = start
        while at < end:
            index, offset = divmod(at - self._first, self.chunk)
            n = min(self.chunk - offset, end - at)
            self._chunks[index][offset:offset + n, column:column + data.shape[1]] += \
                data[at - start:at - start + n]
            at += n

    def take(self, frames: int) -> np.ndarray:
        """The next ``frames`` frames (a whole chunk when aligned: the usual case)."""
        if frames == self.chunk and self.base == self._first:
            out = (self._chunks.popleft() if self._chunks
                   else np.zeros((frames, self.channels), dtype=np.float32))
            self._first += frames
        else:  # the last, shorter block
            out = np.zeros((frames, self.channels), dtype=np.float32)
            at = self.base
            while at < self.base + frames and self._chunks:
                index, offset = divmod(at - self._first, self.chunk)
                if index >= len(self._chunks):
                    break
                n = min(self.chunk - offset, self.base + frames - at)
                out[at - self.base:at - self.base + n] = self._chunks[index][offset:offset + n]
                at += n
            while self._chunks and self._first + self.chunk <= self.base + frames:
                self._chunks.popleft()
                self._first += self.chunk
            if not self._chunks:
                self._first = self.base + frames
        self.base += frames
        return out


def _fft_size(n: int) -> int:
    """Smallest 2^k or 3·2^k ≥ n (few distinct sizes, so the air tables cache well)."""
    power = 1 << max(0, (n - 1).bit_length())
    return 3 * power // 4 if 3 * power // 4 >= n else power


class _Spatialiser:
    """Turns one mono note into its multichannel contribution at the listener."""

    def __init__(self, panner: Panner, surroundings: Surroundings, sample_rate: int) -> None:
        self.panner = panner
        self.surroundings = surroundings
        self.sample_rate = sample_rate
        self.channels = len(panner.channels)

    def __call__(self, mono: np.ndarray, source_point, listener: Listener,
                 struck_face) -> tuple[int, np.ndarray, np.ndarray | None]:
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
        start = math.floor(first) - _GUARD
        length = len(mono) + math.ceil(last) - start + _GUARD
        n_fft = _fft_size(length)
        grid = _grid(self.surroundings.air, n_fft, fs)
        spectrum = scipy.fft.rfft(mono, n_fft)  # float32: half the work
        per_channel = any(t.delays_s is not None or t.shadow is not None for _, t, _ in arrivals)
        responses = []
        for path, terms, delays in arrivals:
            lead = float(delays.min())
            air = np.exp(grid.alpha * np.float32(-path.distance * _DB_TO_NEPER)) * path.gain
            responses.append((spectrum * air * grid.delay(lead - start),
                              terms, delays - lead))
        if not per_channel:
            signals = np.stack([scipy.fft.irfft(r, n_fft)[:length] for r, _, _ in responses],
                               axis=1)
            return (start, np.ascontiguousarray(signals),
                    np.stack([t.gains for _, t, _ in responses]).astype(np.float32))
        total = np.zeros((self.channels, len(spectrum)), dtype=np.complex64)
        for response, terms, extra in responses:
            for ch in range(self.channels):
                channel = response * terms.gains[ch]
                if extra[ch] > 0:
                    channel *= grid.delay(extra[ch])
                if terms.shadow is not None:
                    channel *= grid.shadow(terms.shadow[ch])
                total[ch] += channel
        # a compact frame-major copy: adds fast, and the cache counts all its bytes
        out = scipy.fft.irfft(total, n_fft, axis=1)[:, :length].T
        return start, np.ascontiguousarray(out), None


class _ByteLru:
    """A least-recently-used cache bounded by the bytes of its arrays."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit = limit_bytes
        self.size = 0
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def get(self, key: Hashable):
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key: Hashable, value: object, nbytes: int) -> None:
        if nbytes > self.limit:
            return
        self._items[key] = (value, nbytes)
        self.size += nbytes
        while self.size > self.limit:
            _, (_, dropped) = self._items.popitem(last=False)
            self.size -= dropped


def _stable_ints(*parts: object) -> list[int]:
    """Four 32-bit words from a hash of ``repr(parts)`` (stable across runs, unlike hash())."""
    digest = hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=16).digest()
    return [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]


def _note_key(event: Event, source: Source) -> tuple:
    """What a note's dry sound depends on (see ``Voice``): the instrument, not which of
    its players (four 瑟 in unison share their renderings; where they stand is in the
    heard-cache key)."""
    pitch = None if event.pitch is None else (event.pitch.name, float(event.pitch.hz))
    return (source.instrument, pitch, float(event.velocity),
            float(event.duration), event.articulation, event.lyric)


class _Notes:
    """Dry notes (mono float32 at 1 m, tail trimmed), rendered once per key and variant."""

    def __init__(self, voice: Voice, sample_rate: int, seed: int, cache_bytes: int) -> None:
        self.voice = voice
        self.sample_rate = sample_rate
        self.seed = seed
        self.cache = _ByteLru(cache_bytes)

    def __call__(self, event: Event, source: Source, key: tuple, variant: int) -> np.ndarray:
        mono = self.cache.get((key, variant))
        if mono is None:
            rng = np.random.default_rng(_stable_ints(self.seed, key, variant))
            raw = np.asarray(self.voice(event, source, sample_rate=self.sample_rate, rng=rng),
                             dtype=float)
            mono = _trim_tail(raw).astype(np.float32)
            self.cache.put((key, variant), mono, mono.nbytes)
        return mono


def _trim_tail(mono: np.ndarray) -> np.ndarray:
    """Drop the ring below −100 dB of the note's peak (under any 16-bit floor): less to filter."""
    loud = np.flatnonzero(np.abs(mono) > _TAIL_FLOOR * np.abs(mono).max(initial=0.0))
    return mono[:loud[-1] + 1] if loud.size else mono[:0]


@dataclass(frozen=True)
class _Grid:
    """Per-FFT-size tables: air absorption α (dB/m), ω (rad/sample), the head-shadow pieces."""

    alpha: np.ndarray
    omega: np.ndarray
    shadow_w: np.ndarray
    shadow_pole: np.ndarray

    def delay(self, samples: float) -> np.ndarray:
        """e^(−jωd): a delay of ``samples`` (fractional) as a linear phase.

        Built from cos and sin, which are vectorised; numpy's complex exp is ~20× slower.
        """
        angle = self.omega * np.float32(samples)
        out = np.empty(len(angle), dtype=np.complex64)
        out.real = np.cos(angle)
        out.imag = -np.sin(angle)
        return out

    def shadow(self, alpha: float) -> np.ndarray:
        """Brown & Duda head shadow (1 + jαw)/(1 + jw) on this grid (see ``head_shadow``)."""
        return (1 + 1j * np.float32(alpha) * self.shadow_w) * self.shadow_pole


@functools.lru_cache(maxsize=32)
def _grid(air: Air, n_fft: int, sample_rate: int) -> _Grid:
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    omega = 2 * np.pi * np.arange(len(freqs)) / n_fft
    shadow_w = head_shadow(0.0, freqs)  # 1/(1 + jw) at α = 0 …
    w = (1 / shadow_w - 1).imag  # … gives back w = ω/(2ω0)
    return _Grid(absorption_on_grid(air, n_fft, sample_rate).astype(np.float32),
                 omega.astype(np.float32), w.astype(np.float32),
                 shadow_w.astype(np.complex64))


class _Hearing:
    """Event ``index`` → its note at the listener: (start, signals, mix) or None if silent.

    A pure function of the index (given the performance, listener, seed and
    options), so any process computes the same bits.
    """

    def __init__(self, performance: Performance, listener: Listener | ListenerPath,
                 spatialise: _Spatialiser, notes: _Notes, seed: int) -> None:
        self.performance = performance
        self.listener = listener
        self.spatialise = spatialise
        self.notes = notes
        self.seed = seed
        self.static = isinstance(listener, Listener)

    def place(self, index: int) -> tuple:
        """The heard-cache key of event ``index``: note key, variant, source point, face."""
        event = self.performance.events[index]
        source = self.performance.sources[event.source]
        variant = _stable_ints(self.seed, index)[0] % _VARIANTS
        point = tuple(float(v) for v in (event.position or source.position_at(event.time)))
        return (_note_key(event, source), variant, point, source.struck_face)

    def __call__(self, index: int) -> tuple | None:
        event = self.performance.events[index]
        source = self.performance.sources[event.source]
        key, variant, point, face = self.place(index)
        mono = self.notes(event, source, key, variant)
        if mono.size == 0:
            return None
        return self.spatialise(mono, point, self.listener.at(event.time), face)


def _nbytes(note: tuple | None) -> int:
    return 0 if note is None else note[1].nbytes


def _serve(conn, other, hear: _Hearing) -> None:
    """The helper process: compute the notes asked for, in order, until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    other.close()  # so the pipe reports EOF if the main process dies
    while True:
        try:
            index = conn.recv()
        except EOFError:
            return
        if index is None:
            return
        try:
            note = hear(index)
        except BaseException as error:  # handed to the main process, which raises it
            conn.send((index, error))
            return
        conn.send((index, note))


class _Helper:
    """A forked process computing notes the cache lacks, ``_AHEAD`` events ahead (two cores).

    The helper walks the events from ``_LEAD`` to ``_AHEAD`` events ahead of the
    main process, taking each note that is neither cached nor already asked for
    while it has fewer than ``_IN_FLIGHT`` to do and less than ``_READY_BYTES``
    finished and waiting; when the main process catches up with it, the notes
    skipped are the main process's to compute. So both work and the main
    process seldom waits. A note is the same bits whoever computes it, so the
    output does not depend on the split.
    """

    _LEAD = 50
    _AHEAD = 400
    _IN_FLIGHT = 4
    _READY_BYTES = 64 << 20

    def __init__(self, hear: _Hearing, heard: _ByteLru) -> None:
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, self._conn, hear),
                                        daemon=True)
        self._process.start()
        child.close()
        self.hear = hear
        self.heard = heard
        self._next = 0
        self._in_flight = 0
        self._ready_bytes = 0
        self._ready: dict[int, tuple | None] = {}
        self._places: dict[int, tuple] = {}  # index → place, of notes asked for, not used yet

    def schedule(self, index: int) -> None:
        """Collect finished notes; hand out the events entering the window after ``index``."""
        while self._conn.poll():
            self._receive()
        stop = min(len(self.hear.performance.events), index + self._AHEAD)
        self._next = max(self._next, index + self._LEAD)  # left behind: main's to do
        while (self._next < stop and self._in_flight < self._IN_FLIGHT
               and self._ready_bytes < self._READY_BYTES):
            ahead = self._next
            self._next += 1
            place = self.hear.place(ahead)
            if not (self.hear.static and (place in self.heard
                                          or place in self._places.values())):
                self._conn.send(ahead)
                self._in_flight += 1
                self._places[ahead] = place

    def has(self, index: int) -> bool:
        return index in self._places

    def take(self, index: int) -> tuple | None:
        """The note of event ``index`` (asked for earlier), waiting for it if needed."""
        while index not in self._ready:
            self._receive()
        del self._places[index]
        note = self._ready.pop(index)
        self._ready_bytes -= _nbytes(note)
        return note

    def _receive(self) -> None:
        done, note = self._conn.recv()
        self._in_flight -= 1
        if isinstance(note, BaseException):
            raise note
        self._ready[done] = note
        self._ready_bytes += _nbytes(note)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(None)
        self._conn.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.terminate()


def render_blocks(performance: Performance, *, listener: Listener | ListenerPath,
                  panner: Panner, sample_rate: int, seed: int, voice: Voice,
                  surroundings: Surroundings, block_frames: int, stems: tuple[str, ...] = (),
                  progress: bool = False, cache_bytes: int = CACHE_BYTES, workers: int = 1
                  ) -> Iterator[np.ndarray]:
    """Render a Performance at the listener, yielding ``(frames, channels)`` blocks in order.

    Parameters
    ----------
    performance : Performance
    listener : Listener or ListenerPath
    panner : Panner
    sample_rate : int, Hz
    seed : int
        Picks each event's variant and seeds each variant's generator (see module notes).
    voice : Voice
        Renders one event as mono at 1 m (see ``Voice``).
    surroundings : Surroundings
    block_frames : int > 0, samples
        Size of the yielded blocks (the last may be shorter).
    stems : tuple of str
        Instrument ids: when given, each instrument gets its own block of the
        panner's channels, in this order (``stems`` layout).
    progress : bool
        Show a tqdm bar (seconds of the performance).
    cache_bytes : int >= 0, bytes
        Bound of the spatialised-note cache (the dry-note cache gets a quarter of
        it); 0 recomputes every note (same output, slower).
    workers : int >= 1
        2: a forked helper process computes upcoming notes (same output, faster
        on two cores; the voice then also runs in the helper).
    """
    spatialise = _Spatialiser(panner, surroundings, sample_rate)
    hear = _Hearing(performance, listener, spatialise,
                    _Notes(voice, sample_rate, seed, cache_bytes // 4), seed)
    heard = _ByteLru(cache_bytes if hear.static else 0)
    width = spatialise.channels
    buses = {name: i * width for i, name in enumerate(stems)}
    accumulator = _Accumulator(width * max(1, len(stems)), block_frames)
    bar = tqdm(total=round(performance.duration, 1), unit="s", disable=not progress,
               desc="render", leave=False)
    helper = _Helper(hear, heard) if workers > 1 and performance.events else None
    try:
        with bar:
            for index, event in enumerate(performance.events):
                onset = round(event.time * sample_rate)
                while onset - _GUARD - accumulator.base >= block_frames:
                    if helper is not None:  # keep it busy while the blocks are metered
                        helper.schedule(index)
                    yield accumulator.take(block_frames)
                if helper is not None:
                    helper.schedule(index)
                place = hear.place(index)
                if helper is not None and helper.has(index):
                    note = helper.take(index)
                else:
                    note = heard.get(place) or hear(index)
                if note is None:  # silent: nothing to add or keep
                    continue
                if place not in heard:
                    heard.put(place, note, _nbytes(note))
                start, signals, mix = note
                accumulator.add(onset + start, signals, mix=mix,
                                column=buses.get(performance.sources[event.source].instrument, 0))
                bar.update(round(event.time, 1) - bar.n)
            total = max(accumulator.extent, math.ceil(performance.duration * sample_rate))
            while accumulator.base < total:
                yield accumulator.take(min(block_frames, total - accumulator.base))
    finally:
        if helper is not None:
            helper.close()


@dataclass(frozen=True, slots=True)
class RenderResult:
    """What ``render_audio`` wrote.

    Parameters
    ----------
    files : tuple of Path
        The audio file(s) (one per stem for the ``stems`` layout).
    sidecar : Path
        The marker file (Audacity labels).
    report_file : Path
        The loudness report (JSON).
    report : LoudnessReport
    seconds : float, seconds
        Length of the audio.
    channels : tuple of str
        Channel names of each file.
    """

    files: tuple[Path, ...]
    sidecar: Path
    report_file: Path
    report: LoudnessReport
    seconds: float
    channels: tuple[str, ...]


def render_audio(performance: Performance, path: str | Path, *,
                 listener: Listener | ListenerPath, layout: str | tuple[float, ...] = "stereo",
                 sample_rate: int = 48000, seed: int = 0, voice: Voice | None = None,
                 surroundings: Surroundings | None = None, file_format: str = "wav",
                 bits: str = "24", target_lufs: float = -23.0, ceiling_dbtp: float = -1.0,
                 block_s: float = 1.0, progress: bool = False, workers: int = 1
                 ) -> RenderResult:
    """Render a Performance heard by ``listener`` to ``path``, loudness-normalised.

    Parameters
    ----------
    performance : Performance
    path : path
        Destination (``.wav`` or ``.flac``); stems go beside it as ``<stem>.<instrument><ext>``.
    listener : Listener or ListenerPath
    layout : str or tuple of float
        ``stereo``, ``binaural``, ``foa``, ``hoa3``, ``ring8``, ``5.1``, ``stems`` or
        loudspeaker azimuths in degrees (VBAP).
    sample_rate : int, Hz
        44100, 48000 or 96000.
    seed : int
    voice : Voice or None
        None → ``SynthVoice`` (the instrument models).
    surroundings : Surroundings or None
        Air and reflections; None → 20 °C, 50 %, floor and hall reflections.
    file_format : str
        ``wav`` or ``flac``.
    bits : str
        ``16``, ``24`` or ``float``.
    target_lufs : float, LUFS
        Integrated loudness of the file (BS.1770; ambisonics: of W).
    ceiling_dbtp : float, dBTP
        True-peak ceiling (4× oversampled).
    block_s : float, seconds
        Streaming block length (pass 1 keeps a small loudness-meter snapshot per
        block, so very short blocks on a very long rite cost memory).
    progress : bool
        Show progress bars.
    workers : int >= 1
        2: a helper process computes notes alongside (same bytes, faster on two cores).
    """
    if sample_rate not in SAMPLE_RATES:
        raise RenderError(f"sample rate={sample_rate!r}, accepted: "
                          f"{', '.join(map(str, SAMPLE_RATES))}")
    if file_format not in FORMATS:
        raise RenderError(f"format={file_format!r}, accepted: {', '.join(FORMATS)}")
    subtype_for(file_format, bits)  # fail now, not after the render
    path = Path(path)
    panner = make_panner(layout)
    stems = (tuple(sorted({performance.sources[e.source].instrument for e in performance.events}))
             if layout == "stems" else ())
    surroundings = surroundings or Surroundings()
    block_frames = max(1, round(block_s * sample_rate))
    measure = _measurement(panner, len(stems))
    width = len(panner.channels) * max(1, len(stems))
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.stem}.render-") as tmp:
        raw = Path(tmp) / "raw.f32"
        blocks = render_blocks(performance, listener=listener, panner=panner,
                               sample_rate=sample_rate, seed=seed,
                               voice=voice or SynthVoice(surroundings.reference_db),
                               surroundings=surroundings, block_frames=block_frames,
                               stems=stems, progress=progress, workers=workers)
        first = _pass_one(blocks, raw, measure,
                          LoudnessMeter(sample_rate, panner.loudness_weights()))
        frames, peak = first.frames, first.peak
        measured = first.meter.integrated()
        gain_db = target_lufs - measured if math.isfinite(measured) else 0.0
        limiter_ceiling = ceiling_dbtp - _LIMITER_MARGIN_DB
        limit = peak.peak_dbtp + gain_db > limiter_ceiling
        targets = _stem_paths(path, stems) if stems else (path,)
        cues = [Cue(round(m.time * sample_rate), f"{m.text} | {m.gloss}")
                for m in performance.markers]

        def write(gain: float) -> tuple[float, float, float]:
            with contextlib.ExitStack() as stack:
                writers = [stack.enter_context(open_writer(
                    target, sample_rate=sample_rate, channels=len(panner.channels),
                    file_format=file_format, bits=bits, cues=cues, frames=frames))
                    for target in targets]
                return _finish(raw, width, gain, limiter_ceiling, sample_rate, measure,
                               panner, block_frames, limit=limit, write=writers,
                               reference=first)

        output_lufs, output_peak, limited = write(gain_db)
        if limit and not abs(target_lufs - output_lufs) < _SETTLE_LU:
            # The limiter took off more than the tolerance: settle the gain by dry runs
            # (rare: limiting touches only the peaks), then write again.
            gain_db = _settle_gain(lambda g: _finish(
                raw, width, g, limiter_ceiling, sample_rate, measure, panner, block_frames,
                limit=True, write=None, reference=first)[0], gain_db, target_lufs,
                first=output_lufs)
            output_lufs, output_peak, limited = write(gain_db)
        if not limit:  # gain only: BS.1770 loudness and true peak scale exactly with it
            output_lufs, output_peak = measured + gain_db, peak.peak_dbtp + gain_db
    report = LoudnessReport(measured, target_lufs, gain_db, output_lufs,
                            peak.peak_dbtp + gain_db, output_peak, ceiling_dbtp, limited)
    sidecar = write_sidecar(path, cues, sample_rate=sample_rate)
    report_file = write_text(path.with_name(path.name + ".loudness.json"), json.dumps(
        {**asdict(report), "layout": layout if isinstance(layout, str) else list(layout),
         "sample_rate": sample_rate, "seed": seed, "seconds": frames / sample_rate,
         "files": [t.name for t in targets]}, indent=1, ensure_ascii=False))
    return RenderResult(tuple(targets), sidecar, report_file, report, frames / sample_rate,
                        tuple(panner.channels))


@dataclass(frozen=True, slots=True)
class _PassOne:
    """What pass 1 measured: frames, the loudness meter with a snapshot after each
    block (for pass 2 to follow), and the true-peak meter."""

    frames: int
    meter: LoudnessMeter
    snapshots: list[MeterSnapshot]
    peak: TruePeakMeter


def _pass_one(blocks: Iterator[np.ndarray], raw: Path, measure: Callable,
              meter: LoudnessMeter) -> _PassOne:
    """Pass 1: write the blocks as raw float32 while metering loudness and true peak.

    Writing and metering run on a background thread (file writes, numpy and
    the K-weighting filters release the GIL), beside the rendering.
    """
    peak, snapshots, frames = TruePeakMeter(), [], 0
    with open(raw, "wb") as out:
        def keep(block: np.ndarray) -> None:
            out.write(memoryview(np.ascontiguousarray(block, dtype="<f4")))
            measured = measure(block)
            meter.add(measured)
            snapshots.append(meter.snapshot())
            peak.add(measured)

        with BlockWriter(keep) as worker:
            for block in blocks:
                worker.write(block)
                frames += len(block)
    return _PassOne(frames, meter, snapshots, peak)


def _settle_gain(loudness_at: Callable[[float], float], gain_db: float, target: float,
                 *, tries: int = 5, tolerance: float = _SETTLE_LU,
                 first: float | None = None) -> float:
    """The gain (dB) whose limited output lands nearest ``target`` LUFS, by dry runs.

    Limiting makes output loudness grow more slowly than the gain, and gating
    can make it jump, so: step up by the error until the target is bracketed,
    then bisect; return the best gain tried. ``first`` is the loudness already
    measured at ``gain_db``, if any (saves one run).
    """
    tried: dict[float, float] = {}
    low = high = None
    for attempt in range(tries):
        error = target - (first if attempt == 0 and first is not None
                          else loudness_at(gain_db))
        tried[gain_db] = abs(error)
        if abs(error) < tolerance or not math.isfinite(error):
            break
        if error > 0:
            low = gain_db
        else:
            high = gain_db
        gain_db = (low + high) / 2 if low is not None and high is not None else gain_db + error
    return min(tried, key=tried.get)


def _measurement(panner: Panner, buses: int) -> Callable[[np.ndarray], np.ndarray]:
    """What the meters and the limiter look at: the block, or the sum of the stems."""
    width = len(panner.channels)
    if not buses:
        return lambda block: block
    return lambda block: block.reshape(len(block), buses, width).sum(axis=1)


def _stem_paths(path: Path, stems: tuple[str, ...]) -> tuple[Path, ...]:
    return tuple(path.with_name(f"{path.stem}.{name}{path.suffix}") for name in stems)


def _finish(raw: Path, width: int, gain_db: float, ceiling_db: float, sample_rate: int,
            measure: Callable[[np.ndarray], np.ndarray], panner: Panner, block_frames: int,
            *, limit: bool, write: list | None, reference: _PassOne
            ) -> tuple[float, float, float]:
    """Pass 2: gain, limiter, (optional) write; returns output LUFS, true peak, limiter dB.

    Without ``limit`` only the gain is applied: loudness and true peak scale
    exactly with it, so the caller takes them from pass 1 (NaN returned here).
    Dry runs (``write`` None) measure loudness only. The loudness meter filters
    only around where the limiter acted; elsewhere the output is the raw signal
    times the gain, so it follows pass 1's meter (``LoudnessMeter.follow``).
    """
    gain = 10 ** (gain_db / 20)
    per_file = len(panner.channels)

    def emit(block: np.ndarray) -> None:
        for i, writer in enumerate(write or ()):
            writer.write(block[:, i * per_file:(i + 1) * per_file])

    if not limit:
        for block in _read_raw(raw, width, block_frames, scale=np.float32(gain)):
            emit(block)
        return math.nan, math.nan, 0.0
    limiter = TruePeakLimiter(ceiling_db, sample_rate, width, key=measure)
    meter = LoudnessMeter(sample_rate, panner.loudness_weights())
    peak = TruePeakMeter()
    settle = sample_rate // 2  # unlimited frames after which K-weighting forgets the limiter
    clean = settle
    aligned = _Realign(block_frames)
    index = 0

    def finished(blocks: list[tuple[np.ndarray, bool]]) -> None:
        nonlocal clean, index
        for block, touched in blocks:
            measured = measure(block)
            clean = 0 if touched else clean
            if clean >= settle:
                meter.follow(reference.meter, reference.snapshots[index], gain)
            else:
                meter.add(measured)
                clean += 0 if touched else len(block)
            if write is not None:
                peak.add(measured)
            emit(block)
            index += 1

    for block in _read_raw(raw, width, block_frames, scale=np.float64(gain)):
        out = limiter.process(block)
        finished(aligned.push(out, limiter.touched))
    out = limiter.flush()
    finished(aligned.push(out, limiter.touched) + aligned.rest())
    return meter.integrated(), peak.peak_dbtp, limiter.gain_reduction_db


def _read_raw(raw: Path, width: int, block_frames: int, *, scale: float
              ) -> Iterator[np.ndarray]:
    """Pass 1's raw float32 file times ``scale`` (its type sets the output's), in pass 1's
    blocks; the next block is read and scaled on a thread while this one is used."""
    with open(raw, "rb") as f, ThreadPoolExecutor(1, thread_name_prefix="raw-reader") as pool:
        def read() -> np.ndarray:
            block = np.fromfile(f, dtype="<f4", count=block_frames * width)
            # in scale's precision whatever numpy's promotion rules (they changed in 2.0)
            return block.reshape(-1, width).astype(type(scale), copy=False) * scale

        pending = pool.submit(read)
        while (block := pending.result()).size:
            pending = pool.submit(read)
            yield block


class _Realign:
    """Re-cuts the limiter's output (late by its look-ahead) at pass 1's block edges,
    each block flagged if the limiter turned down any chunk that went into it."""

    def __init__(self, block_frames: int) -> None:
        self.size = block_frames
        self._chunks: list[tuple[np.ndarray, bool]] = []
        self._frames = 0

    def push(self, chunk: np.ndarray, touched: bool) -> list[tuple[np.ndarray, bool]]:
        if len(chunk):
            self._chunks.append((chunk, touched))
            self._frames += len(chunk)
        blocks = []
        while self._frames >= self.size:
            blocks.append(self._take(self.size))
        return blocks

    def rest(self) -> list[tuple[np.ndarray, bool]]:
        return [self._take(self._frames)] if self._frames else []

    def _take(self, frames: int) -> tuple[np.ndarray, bool]:
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
