"""The ADM BWF master: each object's sound in a track of its own, the courtyard's ambience in a
third-order ambisonic bed, with the ADM metadata (``soundscape.sound.adm``). In the Dolby
Atmos Master ADM Profile (``profile="dolby"``, ``render --layout atmos``) the bed is Dolby's
room-centric 7.0.2 instead, rendered by VBAP at the directions BS.2127 gives its channels
(``adm.bed_panner``), and the objects' places are written in room coordinates: what follows
holds for both, with "AmbiX" read as "the bed".

Objects carry the *direct sound as heard at the listener*: the dry note along its direct path
and its floor reflection (which arrives from below the source, a few degrees off), with the
1/r spreading, the air's absorption and the delay applied, but not panned. EBU's and Dolby's
renderers apply no distance gain (``distance`` in the metadata only places the object), so a
dry source at 1 m would play every source as loud as if it stood at 1 m; this way the ADM
rendered to loudspeakers matches the project's own render of that layout (tested with EBU
``ear-render``). The hall's reflection and the court's echoes (``Surroundings.court``:
early images from the walls, the late tail) are left out of the objects (they come from
the walls, not the source); the bed, the ambience, is heard in the court as given (its own
early images). The court's late reverberation of every sound (``tail.Tail``: every lined
note sent to its court zone's late tail at the listener, ``_CourtBed``) is added to that
bed: one third-order AmbiX bed of 16 tracks for both (``ACO_1002``, named for both; the
court's alone, ``ACO_1003``, where no ambience sounds). They share the frame and the HOA
decoder, so rendering their sum is the sum of their renderings, and 16 tracks fewer are
metered, limited and written (s09: 56 → 40). The objects' stream makes the tail from the same
dry notes, and the ambience's stream sends its notes to it (``_Sends``), so one tail is
convolved for both and no note is synthesised twice. The court's early images (up to
``early_ms``) of the objects, every early path but the direct one and the floor's, are
added to that bed too.

Three streams are rendered side by side through ``render.render_blocks``: the ambience
(AmbiX of the ambience sources only, drawn first, so that its sends reach the court bed
before the objects' stream takes it), the objects (one mono stem per object; the court bed
is a taker of its buses that adds nothing to their mix, its blocks kept beside it: the
objects' buses are as wide as the objects) and, with a court, the objects' early images
(AmbiX, ``Surroundings.walls_only``; without a court, the hall front's echo where the
listener hears it), whose dry notes the objects' stream hands over as it mixes them
(``notes.NoteHandoff``): on the main thread, that stream is drawn on a thread of its own a
block behind the others (``_in_step``: the same bits as in turn). Each stream's voice keeps
only its own sources, so every event keeps its index, and its variant, as in the project's
other renders; the dry notes
come from, and go to, the disk cache the other layouts share (``store``). Both are mastered
together to a loudness target, with a true-peak limiter on every track. The EBU master is
measured on its tracks (BS.1770, each object weight 1, plus the bed's W: what a
constant-power renderer's loudspeakers add up to for sources that do not cohere); the Dolby
master on its own 5.1 render, as Dolby Atmos deliveries are (``_loudness_measure``). Every
thread allocates from glibc's main arena (``malloc.one_arena``, which ``render_blocks`` asks
for): a heap per thread held 350 MiB more on s09.

The file: RIFF (BW64 with ``ds64`` past 4 GiB), ``fmt`` PCM 24-bit, ``bext``, ``chna``,
``data``, ``axml``, and the ``cue``/``labl`` markers as ``render`` writes them.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import queue
import struct
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from soundscape.errors import RenderError
from soundscape.fileio import atomic_path, write_text
from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import Listener
from soundscape.sound import adm
from soundscape.sound.audiofile import Cue, SampleWriter, _pack24, write_sidecar
from soundscape.sound.directio import DirectWriter
from soundscape.sound.diskcache import NoteStore
from soundscape.sound.loudness import Downmix
from soundscape.sound.mastering import Mastering, master
from soundscape.sound.notes import CACHE_BYTES, NoteHandoff, SynthVoice, Voice
from soundscape.sound.panning import ChannelTerms, make_panner
from soundscape.sound.propagation import Surroundings, paths
from soundscape.sound.render import (
    _SPACE_MARGIN,
    RenderResult,
    _check_space,
    at_the_cut,
    one_blas_thread,
    render_blocks,
    space_needed,
)
from soundscape.sound.staging import Staging
from soundscape.sound.tail import Tail

__all__ = ["ObjectTrack", "render_adm"]

_BEXT_LEVELS = struct.calcsize("<256s32s32s10s8sQH64s")  # offset of LoudnessValue in bext
_RIFF_MAX = 0xFFFFFFFF
#: The bed's share of the render's note cache (its segments are long and each its own: few
#: come back): the ambience's and the objects' streams together keep what one render keeps
#: (s18: 1.36 GB peak with a cache each); the early images' stream keeps as much again (its
#: notes are handed over by the objects' stream: it keeps those that come back).
_BED_CACHE_BYTES = 16 << 20
#: What the objects' stream may hold handed over for the early images' stream, which asks
#: for each note a block or so later (a note let go is made again).
_HANDOFF_BYTES = 32 << 20
#: Each profile's ``--layout``, its bed in words, and the bed's name in ``.adm.json``.
_LAYOUT_OF = {profile: layout for layout, profile in adm.MASTER_LAYOUTS.items()}
_BED_WORDS = {"ebu": "a 3rd-order ambisonic bed", "dolby": "a 7.0.2 bed"}
_BED_NAME = {"ebu": "AmbiX order 3", "dolby": "7.0.2 (Dolby room-centric)"}
#: What each profile's loudness is measured on (``_loudness_measure``), in its report.
_MEASURED_ON = {"ebu": "the tracks: each object weight 1, the bed's W",
                "dolby": "the master's 5.1 render (0+5+0 VBAP): L R C 1, Ls Rs 1.41"}


class ObjectTrack:
    """A one-channel 'panner': every path of a note goes into the object's own track."""

    channels = ("object",)

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        return ChannelTerms(np.ones(1))

    def loudness_weights(self) -> np.ndarray:
        return np.ones(1)


class _Only:
    """A voice that sounds only the sources ``keep`` accepts (silence, no work, for the rest);
    the inner voice's ``key`` and ``made_at`` show through."""

    def __init__(self, voice: Voice, keep: Callable[[Source], bool]) -> None:
        self._voice, self._keep = voice, keep

    def __call__(self, event, source: Source, **kwargs) -> np.ndarray:
        return self._voice(event, source, **kwargs) if self._keep(source) else np.zeros(0)

    def sounds(self, source: Source) -> bool:
        """Whether this voice sounds ``source`` (``DryNotes``: the others' silence is not
        their notes, and must not reach the disk cache the streams share)."""
        return self._keep(source)

    def bind(self, performance, seed: int) -> _Only:
        """The inner voice bound for one render (``SynthVoice.bind``), still sounding only
        the sources ``keep`` accepts."""
        bind = getattr(self._voice, "bind", None)
        return self if bind is None else _Only(bind(performance, seed), self._keep)

    def __getattr__(self, name: str):
        return getattr(self._voice, name)

    def __setattr__(self, name: str, value) -> None:
        if name == "store":  # DryNotes gives the voice the disk cache of its sung lines
            setattr(self._voice, name, value)
        else:
            super().__setattr__(name, value)


class _CourtBed(Tail):
    """The court's late tail in the bed, whatever the column (object) a note is sent from.

    It is a taker of the objects' buses (they send it every note and wait for its guard),
    but its channels do not widen their mix: ``take`` gives the buses nothing to add
    and keeps its block in ``made``, one per block the objects' stream yields
    (``_with_court``). The objects' buses are then as wide as the objects, not 16 wider:
    every bus's mix, lines and upsampler were carrying the bed's zeros."""

    def __init__(self, surroundings: Surroundings, listener: Listener, sample_rate: int,
                 seed: int, rates: tuple[int, ...], width: int, profile: str) -> None:
        from soundscape.sound.buses import Upsampler  # the buses import the tail

        assert surroundings.court is not None, "a court bed needs a court"
        super().__init__(surroundings.court, listener, adm.bed_panner(profile),
                         adm.bed_channels(profile), sample_rate, surroundings.air, seed, rates,
                         upsampler=Upsampler)
        self.width = width
        self.made: collections.deque[np.ndarray] = collections.deque()

    def send(self, rate: int, time: float, mono: np.ndarray, point, column: int) -> None:
        super().send(rate, time, mono, point, 0)

    def take(self, frames: int) -> np.ndarray:
        self.made.append(super().take(frames))
        return np.broadcast_to(np.float32(0), (frames, self.width))  # no memory, adds nothing


class _Sends(Tail):
    """The ambience stream's tail: it hears the ambience's notes as that stream's buses do
    (ambisonic, in the court) and sends them on to the one court bed (``_CourtBed``); it adds
    nothing to the ambience's mix, and that stream waits for the court bed's guard."""

    def __init__(self, court_bed: _CourtBed, surroundings: Surroundings, listener: Listener,
                 sample_rate: int, seed: int, rates: tuple[int, ...]) -> None:
        from soundscape.sound.buses import Upsampler

        assert surroundings.court is not None, "sends to a court bed need a court"
        super().__init__(surroundings.court, listener, court_bed.panner,
                         court_bed.lines.channels, sample_rate, surroundings.air, seed, rates,
                         upsampler=Upsampler)
        self.court_bed = court_bed

    def send(self, rate: int, time: float, mono: np.ndarray, point, column: int) -> None:
        self.court_bed.send(rate, time, mono, point, 0)

    def guard(self, frame: int) -> int:
        return self.court_bed.guard(frame)

    @property
    def extent(self) -> int:
        return self.court_bed.extent

    def busy(self, frames: int) -> bool:
        return False

    def take(self, frames: int) -> np.ndarray:
        return np.broadcast_to(np.float32(0), (frames, self.lines.channels))


def render_adm(performance: Performance, path: str | Path, *, listener: Listener,
               sample_rate: int = 48000, seed: int = 0, voice: Voice | None = None,
               surroundings: Surroundings | None = None, target_lufs: float = -18.0,
               ceiling_dbtp: float = -1.0, block_s: float = 1.0, progress: bool = False,
               workers: int = 1, stage: Callable[[str], contextlib.AbstractContextManager]
               | None = None, store: NoteStore | None = None,
               profile: str = "ebu") -> RenderResult:
    """Render ``performance`` heard by ``listener`` as an ADM BWF at ``path`` (24-bit WAV),
    with its markers, loudness report and ``<path>.adm.json`` (the objects and their blocks,
    read by ``show --adm-osc``). Arguments as ``render.render_audio``'s (``store``: the disk
    cache of dry notes, shared with the other layouts' renders; None: none); ``profile``:
    ``ebu`` or ``dolby`` (the Dolby Atmos Master ADM Profile: ``adm``'s module)."""
    layout = _LAYOUT_OF.get(profile)
    if layout is None:
        raise RenderError(f"ADM profile {profile!r}, accepted: {', '.join(adm.PROFILES)}")
    if sample_rate != 48000:
        raise RenderError(f"layout {layout}: sample rate {sample_rate}, accepted: 48000 (ADM "
                          "BWF deliveries are 48 kHz)")
    path = Path(path)
    if path.suffix.lower() != ".wav":
        raise RenderError(f"layout {layout}: {path} must end in .wav (an ADM BWF)")
    adm.check_target(profile, target_lufs)
    surroundings = surroundings or Surroundings()
    voice = voice or SynthVoice(surroundings.reference_db)
    is_bed = {sid for sid, s in performance.sources.items()
              if s.instrument in adm.BED_INSTRUMENTS}
    bed = any(e.source in is_bed for e in performance.events)
    court = surroundings.court is not None
    # the objects' echoes (the court's, or the hall front's without one) are mixed into the
    # ambience's bed, and the court's late tail too (one bed: 16 tracks, or Dolby's 9)
    echoes = court or _hall_heard(performance, listener, surroundings, is_bed)
    bed_width = adm.bed_channels(profile) if bed or echoes else 0
    bed_panner = adm.bed_panner(profile)
    objects = adm.plan_objects(performance, listener,
                               max_channels=adm.MAX_CHANNELS - bed_width)
    if not objects:
        raise RenderError("layout adm: nothing sounds in this part of the rite")
    carried = {sid for o in objects for sid in o.sources}
    width = len(objects) + bed_width
    block_frames = max(1, round(block_s * sample_rate))
    weights, downmix = _loudness_measure(objects, bed_panner, bed_width, sample_rate, profile)
    object_stems = tuple(f"object.{o.number}" for o in objects)
    how = Mastering(sample_rate, width, width, weights, lambda block: block, block_frames,
                    target_lufs, ceiling_dbtp, progress=progress, stage=stage, workers=workers,
                    downmix=downmix)
    cues = [Cue(round(m.time * sample_rate), f"{m.text} | {m.gloss}")
            for m in performance.markers]
    seconds = performance.duration
    with Staging(path.parent, path.stem) as staged:
        _check_space(path, seconds, sample_rate, width, "24")
        if store is not None:  # the notes kept must not take the master's room
            store.keep_free = max(store.keep_free, _SPACE_MARGIN + space_needed(
                seconds, sample_rate, width, "24"))
        target = staged.folder / path.name
        # one court bed for both streams: the objects' buses make it and take its blocks,
        # the ambience's buses send their notes to it too (``_Sends``: the court's late tail
        # of every sound in one tail, its responses made once)
        courts: list[_CourtBed] = []
        made_at = getattr(voice, "made_at", None)
        rates = tuple({sample_rate} | ({made_at(performance.sources[e.source], sample_rate)
                                       for e in performance.events} if made_at else set()))

        def court_bed(_: tuple[int, ...]) -> _CourtBed:
            if not courts:
                courts.append(_CourtBed(surroundings, listener, sample_rate, seed, rates,
                                        len(objects), profile))
            return courts[0]

        # (stream, first column, width), in the order they are drawn: the ambience's first,
        # so that its sends for a block reach the court bed before the objects' stream takes
        # it; the court bed's blocks, added to the ambience's columns, after the objects' stream
        # has made them (``_made``)
        streams: list[tuple[Iterator[np.ndarray], int, int]] = []
        handoff = NoteHandoff(_HANDOFF_BYTES) if echoes else None
        if bed:
            streams.append((render_blocks(
                performance, listener=listener, panner=bed_panner,
                sample_rate=sample_rate, seed=seed, voice=_Only(voice, lambda s: s.id in is_bed),
                surroundings=surroundings, block_frames=block_frames, store=store,
                cache_bytes=_BED_CACHE_BYTES,  # a few dozen long segments: no helper
                tail=(lambda own: _Sends(court_bed(own), surroundings, listener, sample_rate,
                                         seed, own)) if court else None),
                len(objects), bed_width))
        streams.append((render_blocks(
            performance, listener=listener, panner=ObjectTrack(), sample_rate=sample_rate,
            seed=seed, voice=_Only(voice, lambda s: s.id in carried),
            surroundings=_objects(surroundings), block_frames=block_frames,
            stems=object_stems, stem_of=_object_of(objects),
            progress=progress, workers=workers, store=store,
            cache_bytes=CACHE_BYTES - _BED_CACHE_BYTES if bed else CACHE_BYTES,
            tail=court_bed if court else None, notes_to=handoff), 0, len(objects)))
        if court:  # made by the objects' stream, which ends at a cut: so does the bed
            streams.append((at_the_cut(_made(courts), performance, sample_rate),
                            len(objects), bed_width))
        if echoes:
            # the objects' early images off the walls and the hall, in the bed: drawn after
            # the objects' stream, which hands it each event's dry note as it mixes it
            # (``handoff``): no note is made twice, nor read back from the disk
            streams.append((render_blocks(
                performance, listener=listener, panner=bed_panner,
                sample_rate=sample_rate, seed=seed, voice=_Only(voice, lambda s: s.id in carried),
                surroundings=replace(surroundings, walls_only=True),
                block_frames=block_frames, store=store, cache_bytes=_BED_CACHE_BYTES,
                tail=lambda _: None, notes_from=handoff), len(objects), bed_width))
        contents = _bed_contents(bed, court, echoes)
        held = ", ".join(words for _, words in contents)
        head = [(b"bext", adm.bext(
                    f"{adm.PROGRAMME_NAME.split(' ', 1)[1]}: ADM BWF, {len(objects)} objects"
                    f"{f' and {_BED_WORDS[profile]} ({held})' if bed_width else ''}"
                    f"; seed {seed}",
                    time_reference=round(performance.info.offset * sample_rate),
                    coding_history=f"A=PCM,F={sample_rate},W=24,M=ADM,T=soundscape\r\n")),
                (b"chna", adm.chna(objects, bed=bed, court=echoes, profile=profile))]

        @contextlib.contextmanager
        def open_outputs(frames: int) -> Iterator[list]:
            with _bw64(target, channels=width, sample_rate=sample_rate, head=head) as writer:
                yield [writer]

        holds = [key for key, _ in contents]
        # the early images beside, on a thread, only when this is the main thread: the
        # one-thread limit held there binds every thread's products (``_in_step``); a Dask
        # worker's thread draws them in turn, each block at one thread (``_one_thread``)
        beside = echoes and threading.current_thread() is threading.main_thread()
        blocks = _side_by_side(streams, width, len(streams) - 1 if beside else None)
        report, frames = master(blocks, staged.scratch / "raw.f32", how, open_outputs)
        _finish(target, [
            (b"axml", adm.axml(objects, bed=bed, court=echoes, seconds=frames / sample_rate,
                               loudness_lufs=report.output_lufs,
                               true_peak_dbtp=report.output_peak_dbtp, profile=profile)),
            *_cue_chunks(cues)], loudness=(report.output_lufs, report.output_peak_dbtp))
        sidecar = write_sidecar(target, cues, sample_rate=sample_rate)
        plan = write_text(staged.folder / f"{path.name}.adm.json", json.dumps(
            {"frame": "azimuth 0 = the listener's facing, positive left; elevation up; "
                      f"distance 1 = {adm.MAX_DISTANCE_M:g} m",
             "max_distance_m": adm.MAX_DISTANCE_M,
             "profile": profile,
             "bed": _BED_NAME[profile] if bed_width else None,
             "bed_holds": holds,
             "objects": [asdict(o) for o in objects]}, indent=1, ensure_ascii=False))
        report_file = write_text(staged.folder / f"{path.name}.loudness.json", json.dumps(
            {**asdict(report), "layout": layout, "sample_rate": sample_rate, "seed": seed,
             "seconds": frames / sample_rate, "objects": len(objects), "bed_channels": bed_width,
             "bed_holds": holds, "measured_on": _MEASURED_ON[profile],
             "files": [path.name, plan.name]}, indent=1, ensure_ascii=False))
    names = tuple(f"object {o.number}" for o in objects) + bed_panner.channels[:bed_width]
    return RenderResult((staged.final(target),), staged.final(sidecar),
                        staged.final(report_file), report, frames / sample_rate, names)


def _object_of(objects: Sequence[adm.AdmObject]) -> Callable[[Event], str]:
    """Event → the stem of the object that carries it (``object.N``; "" for the bed's)."""
    carrying = adm.carrier(objects)

    def stem_of(event: Event) -> str:
        k = carrying(event.source, event.time)
        return "" if k is None else f"object.{objects[k].number}"
    return stem_of


def _loudness_measure(objects: Sequence[adm.AdmObject], bed_panner, bed_width: int,
                      sample_rate: int, profile: str) -> tuple[np.ndarray, Downmix | None]:
    """What BS.1770 measures of the master: its channel weights, and the render it measures
    (none: the tracks themselves). EBU: the tracks, each object 1 and the AmbiX bed's W (for
    sources that do not cohere, what a constant-power renderer's loudspeakers add up to).
    Dolby: the master's 5.1 render, the measure Dolby Atmos deliveries are held to
    (Universal Music's specification), over L R C Ls Rs: each object where 0+5+0's VBAP puts
    its place of the moment (a later block's move taken at its start), each bed channel by
    its direction; an object and its echoes in the bed add as they do in that render."""
    if profile != "dolby":
        bed = bed_panner.loudness_weights() if bed_width else np.zeros(0)
        return np.concatenate([np.ones(len(objects)), bed]), None
    five = make_panner("5.1")
    weights = five.loudness_weights()
    heard = np.flatnonzero(weights)  # the LFE is not measured

    def gains(azimuth: float, elevation: float) -> np.ndarray:
        return five.terms(azimuth, elevation).gains[heard]

    bed = [gains(az, el) for *_, (az, el) in adm.DOLBY_BED][:bed_width]
    starts = sorted({round(b.time * sample_rate) for o in objects for b in o.blocks} | {0})
    matrices = []
    for start in starts:
        placed = [next(b for b in reversed(o.blocks) if round(b.time * sample_rate) <= start)
                  for o in objects]
        matrices.append([gains(b.azimuth, b.elevation) for b in placed] + bed)
    return weights[heard], Downmix(np.array(starts), np.array(matrices, np.float32))


def _hall_heard(performance: Performance, listener: Listener, surroundings: Surroundings,
                is_bed: set[str]) -> bool:
    """Whether, without a court, the listener hears any object's sound off the hall's front
    (``propagation.paths``: both ends south of it), from where each sound is made."""
    front = replace(surroundings, walls_only=True)
    points = {event.position or performance.sources[event.source].position_at(event.time)
              for event in performance.events if event.source not in is_bed}
    return any(path.gain > 0 for point in points
               for path in paths(point, listener.position, surroundings=front))


def _bed_contents(bed: bool, court: bool, echoes: bool) -> list[tuple[str, str]]:
    """What the bed holds: (its key in ``bed_holds``, its words in ``bext``)."""
    return [(key, words) for key, words, there in (
        ("ambience", "ambience", bed),
        ("court", "court echoes and reverberation", court),
        ("hall front", "hall front echo", echoes and not court)) if there]


def _objects(surroundings: Surroundings) -> Surroundings:
    """What an object carries: the direct path and the floor's, not the walls'."""
    return replace(surroundings, hall=False, court=None)


def _in_step(streams: list[Iterator[np.ndarray]], beside: int | None
             ) -> Iterator[tuple[np.ndarray | None, ...]]:
    """Each step's block of every stream (None for one that has ended), as
    ``itertools.zip_longest``; stream ``beside`` is drawn on a thread of its own, a step behind
    the others: its block k is made while they make block k + 1, and only once they have made
    theirs of step k (the objects' stream hands the early images' stream its notes). The BLAS
    libraries stay at one thread meanwhile, as every block's products are made (set here, on
    the main thread, where the process-wide count binds every thread's products): the same
    bits as in turn."""
    if beside is None:
        yield from itertools.zip_longest(*streams)
        return
    others = [s for i, s in enumerate(streams) if i != beside]
    gate, stop = threading.Semaphore(0), threading.Event()
    made: queue.SimpleQueue[np.ndarray | BaseException | None] = queue.SimpleQueue()

    def draw() -> None:
        try:
            while gate.acquire() and not stop.is_set():
                block = next(streams[beside], None)
                made.put(block)
                if block is None:
                    return
        except BaseException as error:  # raised in the consumer's thread
            made.put(error)

    def taken() -> np.ndarray | None:
        block = made.get()
        if isinstance(block, BaseException):
            raise block
        return block

    thread = threading.Thread(target=draw, name="adm-beside", daemon=True)
    with one_blas_thread():
        thread.start()
        try:
            yield from _lagged(others, beside, gate, taken)
        finally:
            stop.set()
            gate.release()
            thread.join()
            close = getattr(streams[beside], "close", None)
            if close is not None:
                close()


def _lagged(others: list[Iterator[np.ndarray]], beside: int, gate: threading.Semaphore,
            taken: Callable[[], np.ndarray | None]) -> Iterator[tuple[np.ndarray | None, ...]]:
    """The steps of ``_in_step``: the others' blocks of step k held until the stream beside
    has made its block k (``taken``), which it may start once ``gate`` is released."""
    behind, ended = None, False
    for step in itertools.zip_longest(*others):
        gate.release()
        if behind is not None:
            block = None if ended else taken()
            ended = block is None
            yield _with(behind, beside, block)
        behind = step
    while True:  # the others have ended: the last step, then the stream beside to its end
        if behind is None:
            gate.release()
        block = None if ended else taken()
        ended = block is None
        if behind is None and ended:
            return
        yield _with(behind or (None,) * len(others), beside, block)
        behind = None


def _with(blocks: tuple, at: int, block: np.ndarray | None) -> tuple:
    return (*blocks[:at], block, *blocks[at:])


def _side_by_side(streams: Sequence[tuple[Iterator[np.ndarray], int, int]], width: int,
                  beside: int | None = None) -> Iterator[np.ndarray]:
    """The streams' blocks as one ``width`` wide, each stream added at its (first column,
    width), drawn in the order given; a stream that ends first is silent. Streams share
    their columns whole or not at all (the bed's three).

    The streams of one span are summed apart, in their order, and written into the block
    once, plus 0: the same bits as adding each into a block of zeros (``0 + a`` is ``a`` but
    for a −0, and ``((a + b) + c) + 0`` is ``((0 + a) + b) + c`` for every sign of zero), for
    one pass over the wide block where there were five (s18: 3.6 s of the render's thread)."""
    spans = {(column, wide) for _, column, wide in streams}
    columns = [c for column, wide in spans for c in range(column, column + wide)]
    assert len(columns) == len(set(columns)), "streams share their columns whole or not at all"
    whole = len(columns) == width
    for blocks in _in_step([stream for stream, _, _ in streams], beside):
        frames = max(len(b) for b in blocks if b is not None)
        sums: dict[tuple[int, int], np.ndarray] = {}
        own: set[tuple[int, int]] = set()  # spans whose sum is an array of this function's
        for block, (_, column, wide) in zip(blocks, streams, strict=True):
            if block is None:
                continue
            if len(block) < frames:  # a stream's last block: silent after it
                block = np.concatenate([block, np.zeros((frames - len(block), wide),
                                                        dtype=np.float32)])
            span = (column, wide)
            if span not in sums:
                sums[span] = block
            elif span in own:
                np.add(sums[span], block, out=sums[span])
            else:
                sums[span] = np.add(sums[span], block, dtype=np.float32)
                own.add(span)
        out = (np.empty if whole and len(sums) == len(spans) else np.zeros)(
            (frames, width), dtype=np.float32)
        for (column, wide), summed in sums.items():
            np.add(summed, np.float32(0), out=out[:, column:column + wide])
        yield out


def _made(courts: list[_CourtBed]) -> Generator[np.ndarray, None, None]:
    """The court bed's blocks, each made as the objects' stream yields the block beside it."""
    while courts and courts[0].made:
        yield courts[0].made.popleft()


def _chunk(tag: bytes, body: bytes) -> bytes:
    return tag + struct.pack("<I", len(body)) + body + (b"\0" if len(body) % 2 else b"")


@contextlib.contextmanager
def _bw64(path: Path, *, channels: int, sample_rate: int,
          head: list[tuple[bytes, bytes]]) -> Iterator[SampleWriter]:
    """Write the header (RIFF, a JUNK chunk the size of a ds64, fmt, ``head``) and stream
    24-bit samples into ``data``; ``_finish`` adds the chunks after it and the sizes."""
    with atomic_path(path) as tmp, DirectWriter(tmp) as f:  # past the page cache
        f.write(b"RIFF\0\0\0\0WAVE" + _chunk(b"JUNK", bytes(28)))
        f.write(_chunk(b"fmt ", struct.pack("<HHIIHH", 1, channels, sample_rate,
                                            sample_rate * channels * 3, channels * 3, 24)))
        for tag, body in head:
            f.write(_chunk(tag, body))
        f.write(b"data\0\0\0\0")
        with SampleWriter(f.write, lambda scaled: _pack24(*scaled)) as writer:
            yield writer


def _finish(path: Path, tail: list[tuple[bytes, bytes]], *,
            loudness: tuple[float, float]) -> None:
    """Size the data chunk, append ``tail`` after it, fill the bext levels, and size the
    file: RIFF, or BW64 with a ds64 (in the JUNK's room) past 4 GiB."""
    with open(path, "r+b") as f:
        chunks = _chunk_offsets(f)
        data_at, data_size = chunks[b"data"][0], f.seek(0, 2) - chunks[b"data"][0] - 8
        if data_size % 2:
            f.write(b"\0")
        for tag, body in tail:
            f.write(_chunk(tag, body))
        riff_size = f.tell() - 8
        f.seek(chunks[b"bext"][0] + 8 + _BEXT_LEVELS)
        f.write(struct.pack("<hhh", round(loudness[0] * 100), 0x7FFF, round(loudness[1] * 100)))
        if riff_size <= _RIFF_MAX and data_size <= _RIFF_MAX:
            f.seek(4)
            f.write(struct.pack("<I", riff_size))
            f.seek(data_at + 4)
            f.write(struct.pack("<I", data_size))
            return
        frames = data_size // struct.unpack("<H", _read_at(f, chunks[b"fmt "][0] + 20, 2))[0]
        f.seek(0)
        f.write(b"BW64" + struct.pack("<I", _RIFF_MAX))
        f.seek(chunks[b"JUNK"][0])
        f.write(b"ds64" + struct.pack("<IQQQI", 28, riff_size, data_size, frames, 0))
        f.seek(data_at + 4)
        f.write(struct.pack("<I", _RIFF_MAX))


def _read_at(f, offset: int, size: int) -> bytes:
    f.seek(offset)
    return f.read(size)


def _chunk_offsets(f) -> dict[bytes, tuple[int, int]]:
    """The header's chunks up to ``data``: tag → (offset, size)."""
    found, pos = {}, 12
    while True:
        tag, size = struct.unpack("<4sI", _read_at(f, pos, 8))
        found[tag] = (pos, size)
        if tag == b"data":
            return found
        pos += 8 + size + size % 2


def _cue_chunks(cues: list[Cue]) -> list[tuple[bytes, bytes]]:
    """``cue `` and ``LIST``/``adtl``/``labl`` as ``audiofile.append_wav_cues`` writes them."""
    if not cues:
        return []
    points = b"".join(struct.pack("<II4sIII", i + 1, c.frame, b"data", 0, 0, c.frame)
                      for i, c in enumerate(cues))
    labels = b"".join(_chunk(b"labl", struct.pack("<I", i + 1) + c.label.encode() + b"\0")
                      for i, c in enumerate(cues))
    return [(b"cue ", struct.pack("<I", len(cues)) + points), (b"LIST", b"adtl" + labels)]
