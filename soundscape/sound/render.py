"""Render a Performance heard from a place to loudness-normalised audio files.

The public face of the render path; each concern lives in its own module:

- ``notes``: the voice that renders an event's dry note, and the note caches;
- ``spatialise``: a dry note along its propagation paths, panned (the heard note);
- ``helper``: a forked process computing heard notes ahead (two cores);
- ``mix``: the streaming accumulator, handing out finished blocks;
- ``mastering``: the two loudness passes, the limiter, the final files;
- ``staging``: a run's files written apart and moved into place together;
- ``audiofile``: the streaming writers, channel masks and markers.

Events come sorted by onset; each event's heard note is added into the mix,
and frames that can no longer change are handed out in blocks, so memory does
not grow with the length of the rite. The outputs appear only when all are
complete.

Determinism: the same Performance, options and seed give the same bytes,
whatever the block size or cache size (a cached result is bit-identical to a
recomputed one).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import json
import math
import shutil
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile
from threadpoolctl import ThreadpoolController
from tqdm import tqdm

from soundscape.errors import RenderError
from soundscape.fileio import refuse_folders, write_text
from soundscape.malloc import one_arena, releasing_now_and_then
from soundscape.performance import Event, Performance
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.audiofile import (
    FORMATS,
    Cue,
    check_channels,
    open_writer,
    subtype_for,
    write_sidecar,
)
from soundscape.sound.buses import Buses
from soundscape.sound.directio import MIN_STAGE_BYTES, STAGE_BYTES
from soundscape.sound.diskcache import NoteStore, from_env
from soundscape.sound.helper import NoteHelper
from soundscape.sound.loudness import LoudnessReport
from soundscape.sound.mastering import Mastering, master, measurement
from soundscape.sound.notes import CACHE_BYTES, NoteHandoff, SynthVoice, Voice
from soundscape.sound.panning import Panner, make_panner, wav_channel_mask
from soundscape.sound.propagation import Surroundings
from soundscape.sound.spatialise import HeardNote
from soundscape.sound.staging import Staging
from soundscape.sound.tail import Tail

__all__ = ["CACHE_BYTES", "SAMPLE_RATES", "RenderResult", "SynthVoice", "Voice", "frozen",
           "output_files", "render_audio", "render_blocks", "space_needed"]

SAMPLE_RATES = (44100, 48000, 96000)

#: A part cut off before the rite's end fades out over its last seconds (an excerpt's
#: fade: long enough not to be heard as a cut, short beside any section).
PART_FADE_S = 3.0


def render_blocks(performance: Performance, *, listener: Listener | ListenerPath,
                  panner: Panner, sample_rate: int, seed: int, voice: Voice,
                  surroundings: Surroundings, block_frames: int, stems: tuple[str, ...] = (),
                  progress: bool = False, cache_bytes: int = CACHE_BYTES, workers: int = 1,
                  stem_of: Callable[[Event], str] | None = None,
                  tail: Callable[[tuple[int, ...]], Tail | None] | None = None,
                  store: NoteStore | None = None, notes_to: NoteHandoff | None = None,
                  notes_from: NoteHandoff | None = None, fade_at_cut: bool = True,
                  ) -> Generator[np.ndarray, None, None]:
    """Render a Performance at the listener, yielding ``(frames, channels)`` blocks in order.

    A part cut off before the rite's own end (``Info.cut_at``: the music or the bed was
    still going) ends there, faded out over its last ``PART_FADE_S``, as an excerpt does:
    it stopped mid-phrase and then went on ringing into digital silence.

    The process allocates from one glibc arena from then on (``malloc.one_arena``: the
    buses' threads kept a heap of freed blocks each), and the objects that exist when the
    render starts are left out of the cyclic collector until it ends (``frozen``).

    Parameters
    ----------
    performance : Performance
    listener : Listener or ListenerPath
    panner : Panner
        Made for the air of ``surroundings`` (``make_panner(layout, speed_of_sound=…)``).
    sample_rate : int, Hz
    seed : int
        Picks each event's variant and seeds each variant's generator (see ``notes``).
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
        Bound of all the note caches (dry and spatialised, shared by the buses);
        0 recomputes every note (same output, slower).
    stem_of : callable or None
        Event → the stem its note goes to (None: its source's instrument); the ADM
        master's objects, which a source may take in turns.
    tail : callable or None
        The buses' rates → the late tail the lined notes are sent to, instead of the
        court's own (the ADM master's court bed: ``adm_render``).
    workers : int >= 1
        2: a forked helper process computes upcoming notes (same output, faster
        on two cores; the voice then also runs in the helper).
    store : NoteStore or None
        The disk cache of dry notes (``soundscape.sound.diskcache``; same output); None:
        none.
    notes_to, notes_from : NoteHandoff or None
        Hand each event's dry note to another render of the same events drawn beside this
        one, block by block (``notes_to``), or take them from one (``notes_from``; same
        output: a note not handed over is made). The ADM master's streams.
    fade_at_cut : bool
        End a cut part at its cut, faded (False: everything rings out; a kit's loop,
        whose ring is added back at its start).
    """
    one_arena()  # before the buses' threads: one heap, not one kept per thread
    blocks = _one_blas_thread(_blocks(
        performance, listener=listener, panner=panner, sample_rate=sample_rate, seed=seed,
        voice=voice, surroundings=surroundings, block_frames=block_frames, stems=stems,
        progress=progress, cache_bytes=cache_bytes, workers=workers, stem_of=stem_of,
        tail=tail, store=store, notes_to=notes_to, notes_from=notes_from))
    return at_the_cut(blocks, performance, sample_rate) if fade_at_cut else blocks


def at_the_cut(blocks: Generator[np.ndarray, None, None], performance: Performance,
               sample_rate: int) -> Generator[np.ndarray, None, None]:
    """``blocks`` of ``performance`` ended at its cut (``Info.cut_at``), faded out over the
    last ``PART_FADE_S`` before it; as they are where the part was not cut."""
    cut = performance.info.cut_at
    if cut is None:
        return blocks
    return _faded_out(blocks, round(cut * sample_rate), round(PART_FADE_S * sample_rate))


def _faded_out(blocks: Generator[np.ndarray, None, None], end: int, fade: int
               ) -> Generator[np.ndarray, None, None]:
    """``blocks`` up to frame ``end``, the ``fade`` frames before it faded out (cos²: a
    smooth start and end); the rest is never made."""
    base = 0
    with contextlib.closing(blocks):
        for block in blocks:
            if base >= end:
                return
            block = block[:end - base]
            first = max(base, end - fade)
            if first < base + len(block):
                k = np.arange(first, base + len(block)) - (end - fade) + 0.5
                block[first - base:] *= (np.cos(0.5 * np.pi * k / max(1, fade)) ** 2
                                         ).astype(block.dtype)[:, None]
            yield block
            base += len(block)


def _one_blas_thread(blocks: Generator[np.ndarray, None, None]
                     ) -> Generator[np.ndarray, None, None]:
    """``blocks``, each made with one BLAS thread (the products are small and many, and
    OpenBLAS's idle threads spin, taking the other core from the helper; the forked helper
    inherits the limit). The limit holds only while a block is made: held across a
    ``yield``, it bound the consumer's code too, and a generator left unfinished, or two
    interleaved, left the process at one thread for good. The libraries are found once:
    ``ThreadpoolController.limit`` looks them all up again each time (15 s of a whole
    rite's thread time, py-spy)."""
    libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    try:
        while True:
            with _one_thread(libraries):
                block = next(blocks, None)
            if block is None:
                return
            yield block
    finally:
        with _one_thread(libraries):
            blocks.close()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """The BLAS libraries at one thread, then as they were. Held on the main thread, the
    process-wide count binds the products of every other thread too."""
    with _one_thread(ThreadpoolController().select(user_api="blas").lib_controllers):
        yield


@contextlib.contextmanager
def _one_thread(libraries) -> Iterator[None]:
    """``libraries`` (threadpoolctl's) at one thread each, then as they were.

    Off the main thread (a Dask worker's) the count threadpoolctl sets does not bind the
    products made there: a render differed from the same render on the main thread by
    ~4e-9 in its 3rd-order channels, and is the same bits with OpenBLAS's count set for the
    calling thread too (``openblas_set_num_threads_local``, OpenBLAS 0.3.27 on)."""
    before = [library.num_threads for library in libraries]
    for library in libraries:
        library.set_num_threads(1)
    local = [] if threading.current_thread() is threading.main_thread() else [
        setter for library in libraries if library.internal_api == "openblas"
        and (setter := _thread_setter(library.filepath)) is not None]
    local_before = [setter(1) for setter in local]
    try:
        yield
    finally:
        for setter, threads in zip(local, local_before, strict=True):
            setter(threads)
        for library, threads in zip(libraries, before, strict=True):
            library.set_num_threads(threads)


@functools.cache
def _thread_setter(path: str) -> Callable[[int], int] | None:
    """OpenBLAS's ``openblas_set_num_threads_local`` in the library at ``path`` (the calling
    thread's count; returns the one before), or None where it lacks it."""
    try:
        setter = ctypes.CDLL(path).openblas_set_num_threads_local
    except (OSError, AttributeError):
        return None
    setter.restype, setter.argtypes = ctypes.c_int, [ctypes.c_int]
    return setter


def _blocks(performance: Performance, *, listener: Listener | ListenerPath, panner: Panner,
            sample_rate: int, seed: int, voice: Voice, surroundings: Surroundings,
            block_frames: int, stems: tuple[str, ...], progress: bool, cache_bytes: int,
            workers: int, stem_of: Callable[[Event], str] | None,
            tail: Callable[[tuple[int, ...]], Tail | None] | None,
            store: NoteStore | None, notes_to: NoteHandoff | None,
            notes_from: NoteHandoff | None) -> Generator[np.ndarray, None, None]:
    width = len(panner.channels)
    columns = {name: i * width for i, name in enumerate(stems)}
    buses = Buses(performance, listener, panner=panner, surroundings=surroundings,
                  sample_rate=sample_rate, seed=seed, voice=voice, cache_bytes=cache_bytes,
                  channels=width * max(1, len(stems)), block_frames=block_frames, tail=tail,
                  store=store, handoff=notes_from)
    bar = tqdm(total=round(performance.duration, 1), unit="s", disable=not progress,
               desc="render", leave=False)
    helper = None
    base = 0  # output frames handed out
    release = releasing_now_and_then()  # what bursts of large arrays leave free
    try:
        with bar, frozen():
            helper = NoteHelper(buses) if workers > 1 and performance.events else None
            # the first block's notes, made by both processes before any later ones
            first = _first_needed(performance, buses, block_frames, sample_rate)
            if helper is not None:
                helper.share(first)
            for index, event in enumerate(performance.events):
                onset = round(event.time * sample_rate)
                while onset - buses.guard(base + block_frames) - base >= block_frames:
                    if helper is not None:  # keep it busy while the blocks are metered
                        helper.schedule(index)
                    yield buses.take(block_frames)
                    base += block_frames
                    release()
                if helper is not None and index >= first:
                    helper.schedule(index)
                key = buses.key(index)
                note: np.ndarray | HeardNote | None
                if helper is not None and helper.has(index):
                    note = helper.take(index)
                else:
                    note = buses.compute(index)
                if note is None:  # silent: nothing to add or keep
                    continue
                buses.keep(key, note)
                if notes_to is not None and (dry := buses.dry(key, note)) is not None:
                    rate, _, (dry_key, variant, *_) = key
                    notes_to.give(rate, dry_key, variant, dry)
                stem = (performance.sources[event.source].instrument if stem_of is None
                        else stem_of(event))
                buses.add(index, note, columns.get(stem, 0))
                bar.update(round(event.time, 1) - bar.n)
            total = max(buses.extent, math.ceil(performance.duration * sample_rate))
            while base < total:
                frames = min(block_frames, total - base)
                yield buses.take(frames)
                base += frames
                release()
    finally:
        buses.close()
        if helper is not None:
            helper.close()
        if store is not None:  # its first scan evicts past the bound: not cut off at exit
            store.settle()


@contextlib.contextmanager
def frozen() -> Iterator[Callable[[], None]]:
    """Every object made so far out of the cyclic collector's reach while the render's
    forked processes (the note helper, pass 1's keeper) live: a collection walks every
    object it tracks and writes in each one's header, so each page of them the parent
    shared with a fork at ``fork()`` was copied, in one process or the other, at the
    next full collection. The objects that exist then stay alive through a render (the
    performance, the buses, the modules); those made later are collected as before.
    Nested: only the outermost lets go (``gc.unfreeze``). Gives ``gc.freeze``, to freeze
    what is made inside as well: ``soundscape play`` reads a rite back (~40 000 objects)
    and cuts it, and each collection its first block set off walked them all again (the
    whole rite from 鹿鳴: 0.64 → 0.5 s to the first audio)."""
    outermost = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield gc.freeze
    finally:
        if outermost:
            gc.unfreeze()


def _first_needed(performance: Performance, buses: Buses, block_frames: int,
                  sample_rate: int) -> int:
    """How many events the first block waits for (those before it and its guard)."""
    horizon = block_frames + buses.guard(block_frames)
    return next((index for index, event in enumerate(performance.events)
                 if round(event.time * sample_rate) - horizon >= 0), len(performance.events))


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
                 gain_db: float | None = None,
                 block_s: float = 1.0, progress: bool = False, workers: int = 1,
                 stage: Callable[[str], contextlib.AbstractContextManager] | None = None,
                 store: NoteStore | str | None = "env") -> RenderResult:
    """Render a Performance heard by ``listener`` to ``path``, loudness-normalised.

    All its files (audio, stems, markers, loudness report) are written in a staging
    folder beside ``path`` and moved into place together when complete
    (``soundscape.sound.staging``); free space is checked first.

    Parameters
    ----------
    performance : Performance
    path : path
        Destination (``.wav`` or ``.flac``); stems go beside it as ``<stem>.<instrument><ext>``.
    listener : Listener or ListenerPath
    layout : str or tuple of float
        A name of ``panning.LAYOUTS`` (stereo, binaural, foa, hoa3, ring8, 5.1, 7.1,
        7.1.4, stems) or 2 to ``panning.MAX_SPEAKERS`` loudspeaker azimuths in degrees.
    sample_rate : int, Hz
        44100, 48000 or 96000.
    seed : int
    voice : Voice or None
        None → ``SynthVoice`` (the instrument models).
    surroundings : Surroundings or None
        Air and reflections; None → 20 °C, 50 %, floor and hall reflections.
    file_format : str
        ``wav`` or ``flac`` (FLAC: at most 8 channels).
    bits : str
        ``16``, ``24`` or ``float``.
    target_lufs : float, LUFS
        Integrated loudness of the file (BS.1770; ambisonics: of W), −70 to 0.
    ceiling_dbtp : float, dBTP
        True-peak ceiling (4× oversampled), −20 to 0.
    gain_db : float or None, dB
        A gain to apply instead of the one to ``target_lufs`` (−70 to 70): a part rendered
        at the level it has in the whole rite (that render's ``gain_db``), not normalised
        on its own. The limiter still keeps ``ceiling_dbtp``.
    block_s : float, seconds
        Streaming block length, 0.01 to 10 (pass 1 keeps a small loudness-meter
        snapshot per block, so very short blocks on a very long rite cost memory).
    progress : bool
        Show progress bars (both passes).
    workers : int >= 1
        2: a helper process computes notes alongside (same bytes, faster on two cores).
    stage : callable or None
        ``stage(text)`` → a context manager around each pass, for a log line per stage
        where there is no terminal for the bars.
    store : NoteStore, None or "env"
        The disk cache of dry notes (same bytes, faster when notes are already there):
        ``"env"`` as ``$SOUNDSCAPE_CACHE`` says (``diskcache.from_env``; docs/render.md),
        None for none.
    """
    if isinstance(store, str) and store != "env":
        raise RenderError(f"store={store!r}, accepted: a NoteStore, None or 'env'")
    _check_numbers(sample_rate=sample_rate, target_lufs=target_lufs,
                   ceiling_dbtp=ceiling_dbtp, block_s=block_s,
                   **({} if gain_db is None else {"gain_db": gain_db}))
    if file_format not in FORMATS:
        raise RenderError(f"format={file_format!r}, accepted: {', '.join(FORMATS)}")
    subtype_for(file_format, bits)  # fail now, not after the render
    path = Path(path)
    surroundings = surroundings or Surroundings()
    panner = make_panner(layout, speed_of_sound=surroundings.air.speed_of_sound)
    stems = _stems(performance, layout)
    block_frames = max(1, round(block_s * sample_rate))
    per_file = len(panner.channels)
    check_channels(file_format, per_file)
    how = Mastering(sample_rate, per_file * max(1, len(stems)), per_file,
                    panner.loudness_weights(), measurement(per_file, len(stems)), block_frames,
                    target_lufs, ceiling_dbtp, progress=progress, stage=stage, workers=workers,
                    gain_db=gain_db)
    cues = [Cue(round(m.time * sample_rate), f"{m.text} | {m.gloss}")
            for m in performance.markers]
    refuse_folders(*output_files(performance, path, layout))
    staged = Staging(path.parent, path.stem)
    try:
        with staged:
            _check_space(path, performance.duration, sample_rate, how.width, bits)
            store = from_env() if isinstance(store, str) else store
            if store is not None:  # the notes kept must not take the render's room
                store.keep_free = max(store.keep_free, _SPACE_MARGIN + space_needed(
                    performance.duration, sample_rate, how.width, bits))
            targets = _stem_paths(staged.folder / path.name, stems) or (
                staged.folder / path.name,)

            stage_bytes = max(MIN_STAGE_BYTES, STAGE_BYTES // len(targets))  # shared

            @contextlib.contextmanager
            def open_outputs(frames: int) -> Iterator[list]:
                with contextlib.ExitStack() as stack:
                    yield [stack.enter_context(open_writer(
                        target, sample_rate=sample_rate, channels=per_file,
                        file_format=file_format, bits=bits, cues=cues, frames=frames,
                        channel_mask=wav_channel_mask(panner), stage_bytes=stage_bytes))
                        for target in targets]

            blocks = render_blocks(performance, listener=listener, panner=panner,
                                   sample_rate=sample_rate, seed=seed,
                                   voice=voice or SynthVoice(surroundings.reference_db),
                                   surroundings=surroundings, block_frames=block_frames,
                                   stems=stems, progress=progress, workers=workers,
                                   store=store)
            with frozen():  # pass 1's keeper is forked first, then the note helper
                report, frames = master(blocks, staged.scratch / "raw.f32", how,
                                        open_outputs)
            sidecar = write_sidecar(staged.folder / path.name, cues, sample_rate=sample_rate)
            measured = {key: value if not isinstance(value, float) or math.isfinite(value)
                        else None for key, value in asdict(report).items()}  # silence: None
            report_file = write_text(staged.folder / f"{path.name}.loudness.json", json.dumps(
                {**measured, "layout": layout if isinstance(layout, str) else list(layout),
                 "sample_rate": sample_rate, "seed": seed, "seconds": frames / sample_rate,
                 # which part of which text: `play` takes this gain only for the same part
                 "text": performance.info.text, "offset": performance.info.offset,
                 "duration": performance.duration,
                 "reading": performance.info.reading, "tuning": performance.info.tuning,
                 "huangzhong_hz": performance.info.huangzhong_hz or None,
                 "court": _court_report(surroundings),
                 "files": [t.name for t in targets]}, indent=1, ensure_ascii=False,
                allow_nan=False))
    except OSError as error:  # name the output, not the hidden file it was being written as
        raise staged.shown(error, path) from None
    except soundfile.SoundFileError as error:  # libsndfile's own (a failed FLAC write)
        raise RenderError(f"{path}: {error}") from None
    return RenderResult(tuple(staged.final(t) for t in targets), staged.final(sidecar),
                        staged.final(report_file), report, frames / sample_rate,
                        tuple(panner.channels))


#: Accepted ranges of render_audio's numbers (finite, inclusive).
_RANGES = {"target_lufs": (-70.0, 0.0), "ceiling_dbtp": (-20.0, 0.0), "block_s": (0.01, 10.0),
           "gain_db": (-70.0, 70.0)}
_TAIL_S = 30.0  # seconds allowed past the last event for rings and echoes (space estimate)
_SPACE_MARGIN = 64 << 20  # bytes kept free besides the render's own


def _check_numbers(*, sample_rate: int, **values: float) -> None:
    if isinstance(sample_rate, bool) or sample_rate not in SAMPLE_RATES:
        raise RenderError(f"sample rate={sample_rate!r}, accepted: "
                          f"{', '.join(map(str, SAMPLE_RATES))}")
    for name, value in values.items():
        low, high = _RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and low <= value <= high):
            raise RenderError(f"{name}={value!r}, accepted: a finite number from {low:g} to "
                              f"{high:g}")


def space_needed(seconds: float, sample_rate: int, channels: int, bits: str) -> int:
    """Bytes a render of ``seconds`` needs at its peak: pass 1's raw float32 samples and the
    finished audio, both in the destination folder during pass 2 (FLAC needs less)."""
    frames = math.ceil((seconds + _TAIL_S) * sample_rate)
    width = {"16": 2, "24": 3, "float": 4}[str(bits)]
    return frames * channels * (4 + width)


def _check_space(path: Path, seconds: float, sample_rate: int, channels: int,
                 bits: str) -> None:
    need = space_needed(seconds, sample_rate, channels, bits) + _SPACE_MARGIN
    free = shutil.disk_usage(path.parent).free
    if free < need:
        # the file's name, not its folder: that is the hidden staging folder of a render
        raise RenderError(f"{path.name}: not enough free space for this render: it needs "
                          f"about {_size(need)} (temporary samples and the finished audio), "
                          f"{_size(free)} free; free some space or write elsewhere")


def _court_report(surroundings: Surroundings) -> dict | None:
    """The court hypothesis a render was heard in (its report names it), or None."""
    court = surroundings.court
    if court is None:
        return None
    return {"hypothesis": court.name, "name": court.hypothesis.name,
            "note": court.hypothesis.note}


def _size(nbytes: float) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.0f} MiB"


def output_files(performance: Performance, path: str | Path,
                 layout: str | tuple[float, ...]) -> tuple[Path, ...]:
    """Every file :func:`render_audio` writes for ``path``: the audio (a file per
    instrument with layout "stems"), its markers and its loudness report."""
    path = Path(path)
    audio = _stem_paths(path, _stems(performance, layout)) or (path,)
    return (*audio, *(path.with_name(path.name + companion)
                      for companion in (".markers.txt", ".loudness.json")))


def _stems(performance: Performance, layout: str | tuple[float, ...]) -> tuple[str, ...]:
    """The instruments that get a file each (layout "stems"), else none."""
    if layout != "stems":
        return ()
    return tuple(sorted({performance.sources[e.source].instrument
                         for e in performance.events}))


def _stem_paths(path: Path, stems: tuple[str, ...]) -> tuple[Path, ...]:
    return tuple(path.with_name(f"{path.stem}.{name}{path.suffix}") for name in stems)
