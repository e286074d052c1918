"""Batch renders: many renders at once on a local process pool, or on a Dask cluster.

A ``Job`` is everything one render needs (picklable), so it runs the same in this
process, in a pool worker or on a Dask worker: same inputs, same bytes, whatever the
executor (each render's notes are seeded from the job's seed alone).

Executors: ``serial`` (this process), ``local`` (a ``ProcessPoolExecutor`` of
``workers`` processes) and ``dask://HOST:PORT`` (a ``dask.distributed`` scheduler; the
optional ``dask`` extra). Jobs are handed out longest first.

Dry notes are shared between the renders a process makes: ``SharedVoice`` keeps the
instrument models' notes in a per-process cache keyed by what the note depends on (the
renderer's note key: instrument, pitch, velocity, duration, articulation, phones or
lyric, and the performer for models that sound different per performer; the sample
rate and the state of the note's seeded generator), so a worker rendering the same music
from three places or in four layouts synthesises each note once.

A pool worker dies with the process that made the pool (a ``kit`` or ``batch`` killed,
even by SIGKILL): Linux's ``PR_SET_PDEATHSIG`` sends it SIGTERM, elsewhere a thread
watching its parent does; a job in hand is unwound first, so its temporary file goes too.
Only the first SIGTERM counts: the kernel sends the parent-death signal again each time
the worker is handed on to another of its dying parent's threads, and a second one must
not cut the unwinding short.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import hashlib
import multiprocessing
import os
import signal
import socket
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from soundscape.kit import KitError
from soundscape.performance import Event, Performance, Source, takes_no_time
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.propagation import REFERENCE_DB
from soundscape.sound.render import SynthVoice

__all__ = ["Job", "SharedVoice", "run_jobs"]

_SHARED_BYTES = 256 << 20


class SharedVoice:
    """``SynthVoice`` with a per-process LRU cache of dry notes (see module); ``shares``
    False: a render with no other to share its notes with keeps none (the same notes)."""

    _cache: ClassVar[OrderedDict[tuple, np.ndarray]] = OrderedDict()  # one per process
    _bytes: ClassVar[int] = 0

    def __init__(self, reference_db: float = REFERENCE_DB, *, shares: bool = True) -> None:
        self.voice = SynthVoice(reference_db)
        self.reference_db = reference_db
        self.shares = shares

    def key(self, event: Event, source: Source) -> tuple:
        """The renderer's note key of the wrapped voice (with the performer where the
        model sounds different per performer), so its own caches split notes alike."""
        return self.voice.key(event, source)

    def variants(self, source: Source) -> int:
        """The renderings per note key of the wrapped voice (one for a singer), so the
        renderer picks the same rendering of each note as ``soundscape render`` does."""
        return self.voice.variants(source)

    def made_at(self, source: Source, sample_rate: int) -> int:
        """The rate the wrapped voice makes ``source``'s notes at, so the renderer mixes them
        on the same buses as ``soundscape render`` does."""
        return self.voice.made_at(source, sample_rate)

    def bind(self, performance, seed: int) -> SharedVoice:
        """The wrapped voice bound to one render, as ``soundscape render`` binds it (a
        singer's notes made as lines: ``soundscape.sound.sung``)."""
        bound = SharedVoice(self.reference_db, shares=self.shares)
        bound.voice = self.voice.bind(performance, seed)
        return bound

    def stored_as(self, key: tuple) -> tuple | None:
        """What the wrapped voice's note of ``key`` depends on besides the key (the disk
        cache's name for it: the same notes as ``soundscape render``'s)."""
        return self.voice.stored_as(key)

    def keeps(self, key: tuple) -> bool:
        """Whether the renderer's note cache keeps notes of ``key`` (the wrapped voice's say)."""
        return self.voice.keeps(key)

    def repeats(self, instrument_id: str) -> bool:
        """Whether notes of ``instrument_id`` may repeat (the wrapped voice's say)."""
        return self.voice.repeats(instrument_id)

    def __call__(self, event: Event, source: Source, *, sample_rate: int,
                 rng: np.random.Generator) -> np.ndarray:
        if not self.shares:
            return np.asarray(self.voice(event, source, sample_rate=sample_rate, rng=rng),
                              dtype=float)
        state = hashlib.blake2b(repr(rng.bit_generator.state).encode(), digest_size=16).digest()
        key = (self.reference_db, self.voice.bells, self.key(event, source), sample_rate,
               state)
        cache = SharedVoice._cache
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        note = np.asarray(self.voice(event, source, sample_rate=sample_rate, rng=rng),
                          dtype=float)
        note.setflags(write=False)
        cache[key] = note
        SharedVoice._bytes += note.nbytes
        while SharedVoice._bytes > _SHARED_BYTES and len(cache) > 1:
            SharedVoice._bytes -= cache.popitem(last=False)[1].nbytes
        return note


@dataclass(frozen=True)
class Job:
    """One render: a Performance heard by a listener in a layout, to ``path``.

    ``kind``: ``loop`` (``loop.render_loop``, for the kit), ``render``
    (``render.render_audio``, what ``soundscape render`` writes) or ``adm``
    (``adm_render.render_adm``, the ADM BWF master). ``options`` go to
    that function (levels, bits …). ``performance`` may instead be ``make``, a picklable
    callable that sequences it in the worker (tuning and reading hypotheses). ``court``: the
    hypothesis of the court's walls it is heard in (``soundscape/data/court.toml``, or
    ``none``), as ``render --court``; the bundled site's court.
    """

    name: str
    path: Path
    listener: Listener | ListenerPath
    layout: Any
    kind: str = "loop"
    performance: Performance | None = None
    make: Callable[[], Performance] | None = None
    seed: int = 0
    sample_rate: int = 48000
    options: dict[str, Any] = field(default_factory=dict)
    court: str = "bare"

    def size(self) -> int:
        return len(self.performance.events) if self.performance is not None else 0

    def __call__(self, workers: int = 1) -> Any:
        """Render the job; ``workers`` 2: upcoming notes made in a helper process, for a
        job that has the machine to itself, and so no other render to share its notes with
        (the whole rite's loop: the shared notes took some 550 MiB in its helper). The same
        bytes either way."""
        from soundscape.kit.speakers import channel_mask, panner_for

        if self.performance is not None:
            performance = self.performance
        elif self.make is not None:
            performance = self.make()
            if performance.duration == 0:  # s01–s04: an empty render crashed pass 1
                asked = " to ".join(dict.fromkeys(
                    s for s in (getattr(self.make, "from_section", None),
                                getattr(self.make, "to_section", None)) if s))
                raise KitError(f"render {self.name}: "
                               + takes_no_time(f"section {asked}" if asked else "it"))
        else:
            raise KitError(f"job {self.name}: give it a performance or a make() for one")
        voice = SharedVoice(shares=workers == 1)
        surroundings = surroundings_of(self.court)
        if self.kind == "loop":
            from soundscape.kit.loop import render_loop
            return render_loop(performance, self.path, listener=self.listener,
                               panner=panner_for(self.layout), sample_rate=self.sample_rate,
                               seed=self.seed, voice=voice,
                               channel_mask=channel_mask(self.layout),
                               surroundings=surroundings, workers=workers, **self.options)
        if self.kind == "adm":
            from soundscape.sound.adm_render import render_adm
            if not isinstance(self.listener, Listener):
                raise KitError(f"job {self.name}: an ADM master is heard from a standing "
                               "listener (its objects need one frame), not a walk")
            return render_adm(performance, self.path, listener=self.listener, seed=self.seed,
                              voice=voice, workers=workers, **self.options)
        from soundscape.sound.render import render_audio
        return render_audio(performance, self.path, listener=self.listener, layout=self.layout,
                            sample_rate=self.sample_rate, seed=self.seed, voice=voice,
                            surroundings=surroundings, workers=workers, **self.options)


def surroundings_of(court: str):
    """The air and surfaces of a job: the bundled site's walled court under hypothesis
    ``court``, or (``none``) the floor and the hall's front alone (``render --court``)."""
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court
    from soundscape.sound.propagation import Surroundings

    return Surroundings() if court == "none" else Surroundings(court=load_court(load_site(),
                                                                               court))


def _run(job: Job, workers: int = 1) -> Any:
    return job(workers)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_in_job = False  # whether this pool worker is running a job (then a signal unwinds it)
_ending = False  # whether this pool worker has taken its SIGTERM


def _die_with_parent(parent: int) -> None:
    """Pool worker initializer: SIGTERM this worker when ``parent`` dies, and on SIGTERM
    end (unwinding a job in hand, so its temporary files are removed)."""
    signal.signal(signal.SIGTERM, _on_term)
    try:
        asked = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (AttributeError, OSError):  # no prctl (not Linux): watch instead
        asked = -1
    if asked != 0:
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(128 + signal.SIGTERM)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)


def _on_term(signum: int, _frame: Any) -> None:
    # the first ends us; the rest would interrupt the unwinding (a temporary file left, or a
    # SystemExit that escapes the job and leaves the worker waiting for work that never
    # comes): ignored, and one that tripped before that returns here at once
    global _ending
    if _ending:
        return
    _ending = True
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _in_job:
        raise SystemExit(128 + signum)  # caught in _run_in_worker, after the job unwound
    os._exit(128 + signum)


def _run_in_worker(job: Job) -> Any:
    global _in_job
    _in_job = True
    try:
        return job()
    except SystemExit as stop:  # told to end: the job's `finally`s have run
        os._exit(stop.code if isinstance(stop.code, int) else 1)
    finally:
        _in_job = False


def run_jobs(jobs: Sequence[Job], *, executor: str = "local", workers: int = 2,
             progress: Callable[[Job], None] | None = None) -> list[Any]:
    """Run ``jobs``; results in the order of ``jobs``."""
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i].size())
    results: list[Any] = [None] * len(jobs)
    if executor == "serial" or (executor == "local" and (workers == 1 or len(jobs) == 1)):
        # a lone local job has the cores to itself: a helper process makes its notes
        helpers = min(workers, 2) if executor == "local" else 1
        for i in order:
            results[i] = _run(jobs[i], helpers)
            if progress:
                progress(jobs[i])
        return results
    if executor == "local":
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(
                workers, mp_context=context, initializer=_die_with_parent,
                initargs=(os.getpid(),)) as pool:
            futures = {pool.submit(_run_in_worker, jobs[i]): i for i in order}
            for future in concurrent.futures.as_completed(futures):
                results[futures[future]] = future.result()
                if progress:
                    progress(jobs[futures[future]])
        return results
    if executor.startswith("dask://"):
        return _run_dask(jobs, order, executor.removeprefix("dask://"), progress)
    raise KitError(f"--executor {executor!r}, accepted: local, serial, dask://HOST:PORT")


_GREETING_S = 5.0  # a scheduler greets a new connection at once
_GREETING_MAX = 64 << 10  # its handshake is about 60 bytes


def _greets_like_dask(host: str, port: int) -> None:
    """Raise OSError unless the peer greets a new connection as a Dask comm does: at once,
    with one small message (an 8-byte total length, a frame count, the frames' lengths,
    then the frames). ``distributed`` itself would read a stranger's first bytes as a
    length and allocate it (exabytes) or wait for ever on a silent one."""
    with socket.create_connection((host, port), timeout=_GREETING_S) as conn:
        deadline = time.monotonic() + _GREETING_S
        size = struct.unpack("<Q", _receive(conn, 8, deadline))[0]
        if not 16 <= size <= _GREETING_MAX:
            raise OSError(f"its first message claims {size} bytes: no Dask handshake")
        body = _receive(conn, size, deadline)
        frames = struct.unpack("<Q", body[:8])[0]
        if not 1 <= frames <= 16 or 8 + 8 * frames > size or sum(struct.unpack(
                f"<{frames}Q", body[8:8 + 8 * frames])) != size - 8 - 8 * frames:
            raise OSError("its first message is no Dask handshake")


def _receive(conn: socket.socket, count: int, deadline: float) -> bytes:
    data = b""
    while len(data) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"it said nothing Dask-like within {_GREETING_S:g} s")
        conn.settimeout(left)
        try:
            chunk = conn.recv(count - len(data))
        except TimeoutError:  # socket.timeout
            raise TimeoutError(f"it said nothing Dask-like within {_GREETING_S:g} s") from None
        if not chunk:
            raise OSError("it closed the connection without a Dask handshake")
        data += chunk
    return data


def _run_dask(jobs: Sequence[Job], order: list[int], address: str,
              progress: Callable[[Job], None] | None) -> list[Any]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise KitError("--executor dask://… needs dask.distributed: pip install "
                       "'soundscape[dask]'") from None
    results: list[Any] = [None] * len(jobs)
    host, _, port = address.rpartition(":")
    try:
        if not port.isdigit() or len(port) > 5 or not 0 < int(port) < 65536:
            raise OSError("the address is not HOST:PORT")
        _greets_like_dask(host, int(port))
        client = Client(f"tcp://{address}", timeout="10s")
    except OSError as error:  # TimeoutError and socket.timeout too
        raise KitError(f"--executor dask://{address}: no Dask scheduler answers "
                       f"({error}); accepted: the address of a running Dask scheduler"
                       ) from None
    with client:
        futures = {client.submit(_run, jobs[i], pure=False, key=f"{jobs[i].name}-{i}"): i
                   for i in order}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if progress:
                progress(jobs[futures[future]])
    return results
