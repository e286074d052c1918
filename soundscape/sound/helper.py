"""The helper process: a forked process computing heard notes ahead of the mix (two cores)."""

from __future__ import annotations

import contextlib
import math
import mmap
import multiprocessing
import os
import pickle
import signal
import struct
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from soundscape.errors import RenderError
from soundscape.malloc import release_freed_memory, releasing_now_and_then
from soundscape.sound.spatialise import HeardNote, heard_bytes

if TYPE_CHECKING:
    from soundscape.sound.buses import Buses

__all__ = ["NoteHelper"]

_GONE = "the render's helper process ended without a word (killed?)"
#: A note's claim (one byte per event, shared): not started, or who makes it.
_FREE, _HELPER, _MAIN = 0, 1, 2
#: The helper's answer for a note the main process took back before it was started.
_TAKEN_BACK = "taken back"
#: A note larger than this, once sent, leaves the helper's heap with free pages to give back.
_TRIM_AFTER_BYTES = 4 << 20


def _widen(end) -> None:
    """Give a pipe the largest buffer an unprivileged process may (Linux: 1 MiB, not 64 KiB),
    so the helper hands over a note of a few hundred KiB in one write instead of waiting,
    64 KiB at a time, for the main process's receiving thread to get the GIL and read."""
    with contextlib.suppress(ImportError, AttributeError, OSError, ValueError):  # elsewhere:
        import fcntl  # as it is

        size = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        fcntl.fcntl(end.fileno(), fcntl.F_SETPIPE_SZ, size)


_ALIGN = 64  # each array at a cache line


class _Ring:
    """Shared memory the helper writes its notes' samples into, used in turn: only where
    they lie goes down the pipe, and the main process copies them out once. Through the
    pipe a note was copied into the kernel and out again, 1 MiB at a time, and the helper
    waited, note in hand, whenever the receiving thread had not yet emptied the pipe.

    The helper places arrays after the last ones (``place``); the main process copies
    them out in the same order (``take``) and then marks the bytes up to their end as
    free (``release``): both count bytes from the start, so the ring never needs a lock
    beyond the one guarding that count."""

    def __init__(self, context, size: int) -> None:
        self.size = size
        self.memory = mmap.mmap(-1, size)  # shared with the fork
        self._released = context.Value("Q", 0)  # bytes the main process is done with
        self._head = 0  # the helper's: bytes placed (or skipped at the end of a lap)

    def place(self, views: list[memoryview]) -> tuple[list[int], int] | None:
        """In the helper: copy ``views`` (bytes) in, each at a cache line; their offsets
        and the running end to release once they are taken, or None if there is no room."""
        spans = [-(-view.nbytes // _ALIGN) * _ALIGN for view in views]
        start = self._head
        if start % self.size + sum(spans) > self.size:  # past the end: start the next lap
            start += self.size - start % self.size
        end = start + sum(spans)
        with self._released.get_lock():
            released = self._released.value
        if end - released > self.size:
            return None
        offsets, at = [], start % self.size
        for view, span in zip(views, spans, strict=True):
            self.memory[at:at + view.nbytes] = view
            offsets.append(at)
            at += span
        self._head = end
        return offsets, end

    def take(self, offset: int, size: int) -> np.ndarray:
        """In the main process: a copy of ``size`` bytes at ``offset`` (memory of its own)."""
        data = np.empty(size, np.uint8)
        data[:] = np.frombuffer(self.memory, np.uint8, size, offset)
        return data

    def release(self, end: int) -> None:
        """In the main process: the bytes up to ``end`` are free (unless a helper killed
        while it held the lock keeps it: it needs no more room, and this thread must not
        hang but see the pipe's end)."""
        lock = self._released.get_lock()
        if lock.acquire(timeout=1.0):
            try:
                self._released.value = end
            finally:
                lock.release()


#: An answer's head: the ring's end to release (0: its arrays follow down the pipe), the
#: event's index (of a pickle: how many parts it has), a heard note's start, its form.
_HEAD = struct.Struct("<QqqB")
#: Each item of a note sent as it is: its offset in the ring, rows, columns, dtype (``f``
#: float32, ``d`` float64, ``-`` None: no array), dimensions (1 or 2).
_ARRAY = struct.Struct("<QQQcB")
#: Forms of an answer: a pickle; a dry note (one vector); ``_HEARD + n``: a heard note,
#: its start and ``n`` items, each a matrix or None (signals, mix, …).
_PICKLED, _DRY, _HEARD = 0, 1, 2
_NONE = b"-"


def _send(end, answer, ring: _Ring | None = None) -> None:
    """Write ``answer`` to the pipe ``end``: its arrays in ``ring`` if there is room, else
    following down the pipe as they are, each written from its own memory. A note (a dry
    one, or a heard one) goes with its arrays' shapes in a few packed bytes, anything else
    (an error, a note of other arrays) as a pickle of protocol 5 whose arrays go the same
    way: pickling a note and unpickling it took ~170 µs of CPU in all (s18, loaded),
    a tenth of what the helper's traffic cost. ``Connection.send`` copied a note into its
    pickle and the receiver copied it twice more; the pipes took a tenth of a whole rite's
    render (py-spy)."""
    index, note = answer
    form, start, items = _form(note)
    arrays = [item for item in items if item is not None]
    if form == _PICKLED:
        buffers: list[pickle.PickleBuffer] = []
        header = pickle.dumps(answer, protocol=5, buffer_callback=buffers.append)
        views = [b.raw() for b in buffers]
    else:
        views = [memoryview(array.reshape(-1).view(np.uint8).data) for array in arrays]
    placed = ring.place(views) if ring is not None and views else None
    ring_end, offsets = (0, [0] * len(views)) if placed is None else (placed[1], placed[0])
    if form == _PICKLED:
        sizes = [len(header), *(v.nbytes for v in views)]
        head = _HEAD.pack(ring_end, len(sizes), 0, _PICKLED) + struct.pack(
            f"<{len(sizes)}Q{len(offsets)}Q", *sizes, *offsets) + header
    else:
        at = iter(offsets)
        head = _HEAD.pack(ring_end, index, start, form) + b"".join(
            _ARRAY.pack(0, 0, 0, _NONE, 0) if item is None else
            _ARRAY.pack(next(at), item.shape[0], item.shape[-1] if item.ndim == 2 else 0,
                        item.dtype.char.encode(), item.ndim)
            for item in items)
    _write(end, head)
    if placed is None:  # the arrays follow
        for view in views:
            _write(end, view)


def _form(note) -> tuple[int, int, list[np.ndarray | None]]:
    """(form, start, items) of a note sent as it is, else (``_PICKLED``, 0, [])."""
    if _plain(note) and note.ndim == 1:
        return _DRY, 0, [note]
    if (type(note) is tuple and len(note) >= 2 and type(note[0]) is int
            and _plain(note[1]) and all(item is None or _plain(item) for item in note[2:])):
        return _HEARD + len(note) - 1, note[0], list(note[1:])
    return _PICKLED, 0, []


def _plain(array) -> bool:
    """Whether ``array`` is a C-contiguous float32 or float64 ndarray of one or two
    dimensions (what the receiver rebuilds from its shape alone)."""
    return (type(array) is np.ndarray and 1 <= array.ndim <= 2 and array.flags.c_contiguous
            and (array.dtype == np.float32 or array.dtype == np.float64))


def _write(end, data) -> None:
    view = memoryview(data).cast("B")
    while view.nbytes:
        view = view[os.write(end.fileno(), view):]


def _receive(incoming: _Incoming, ring: _Ring | None = None):
    """Read one answer written by ``_send``: each array copied out of the ring (which it
    then frees) or read from the pipe, straight into memory of its own."""
    ring_end, index, start, form = _HEAD.unpack(incoming.read(_HEAD.size))
    assert ring is not None or not ring_end, "only a helper given a ring places notes in it"
    if form == _PICKLED:
        count = index
        sizes = struct.unpack(f"<{count}Q", incoming.read(8 * count))
        offsets = struct.unpack(f"<{count - 1}Q", incoming.read(8 * (count - 1)))
        header = incoming.read(sizes[0])
        buffers = _buffers(incoming, ring, ring_end, offsets, sizes[1:])
        return pickle.loads(header, buffers=buffers)
    count = 1 if form == _DRY else form - _HEARD
    described = list(_ARRAY.iter_unpack(incoming.read(_ARRAY.size * count)))
    present = [(offset, (rows, columns) if ndim == 2 else (rows,), np.dtype(char.decode()))
               for offset, rows, columns, char, ndim in described if char != _NONE]
    datas = iter(_buffers(incoming, ring, ring_end, [offset for offset, _, _ in present],
                          [math.prod(shape) * dtype.itemsize for _, shape, dtype in present]))
    arrays = iter([np.frombuffer(next(datas), dtype).reshape(shape)
                   for _, shape, dtype in present])
    items = [None if char == _NONE else next(arrays) for _, _, _, char, _ in described]
    if form == _DRY:
        return index, items[0]
    return index, (start, *items)


def _buffers(incoming: _Incoming, ring: _Ring | None, ring_end: int, offsets, sizes
             ) -> list:
    """The arrays' bytes: copied out of the ring (then freed), or read from the pipe."""
    if not ring_end:
        return [incoming.read(size) for size in sizes]
    assert ring is not None, "only a helper given a ring places notes in it"
    buffers = [ring.take(offset, size) for offset, size in zip(offsets, sizes, strict=True)]
    ring.release(ring_end)
    return buffers


class _Incoming:
    """The receiving end of the answers' pipe, read 64 KiB at a time: a note's few hundred
    bytes (where it lies in the ring, its pickle's header) in one system call, not four
    (each lets go of the GIL, which the main thread may then wait to get back)."""

    _CHUNK = 1 << 16

    def __init__(self, end) -> None:
        self.end = end
        self._pending = bytearray()

    def read(self, size: int) -> bytearray:
        """``size`` bytes (EOFError at the pipe's end); a large array read straight into
        memory of its own."""
        if size > self._CHUNK:
            data = bytearray(size)
            had = len(self._pending)
            data[:had] = self._pending
            self._pending.clear()
            _fill(self.end, memoryview(data)[had:])
            return data
        while len(self._pending) < size:
            got = os.read(self.end.fileno(), self._CHUNK)
            if not got:
                raise EOFError
            self._pending += got
        data = self._pending[:size]
        del self._pending[:size]
        return data


def _fill(end, view: memoryview) -> None:
    """``view`` filled from the pipe (EOFError at its end)."""
    while view.nbytes:
        got = os.readv(end.fileno(), [view])
        if got == 0:
            raise EOFError
        view = view[got:]


_INDEX = struct.Struct("<q")
_STOP = -1  # the request that ends the helper


def _ask_for(end, indices: list[int]) -> None:
    """Send requests: bare 8-byte indices, all of a call in one write (``Connection.send``
    of each pickled index took twice the CPU, ``bench/bench_traffic.py``)."""
    _write(end, struct.pack(f"<{len(indices)}q", *indices))


def _requested(end):
    """The indices asked for, in order, until ``_STOP`` (EOFError if the pipe ends first)."""
    pending = b""
    while True:
        got = os.read(end.fileno(), 1 << 12)
        if not got:
            raise EOFError
        pending += got
        whole = len(pending) - len(pending) % _INDEX.size
        for index, in _INDEX.iter_unpack(pending[:whole]):
            if index == _STOP:
                return
            yield index
        pending = pending[whole:]


class _Claims:
    """Who makes each event's note, in memory both processes share: the first to claim it.

    Events made together (``together``: a sung line's, whose parts are cut from one
    rendering of the line) go to one process: the first to claim one of them claims them
    all, and each is then that process's to make (the other would render the line again).
    """

    def __init__(self, context, events: int, together: Sequence[tuple[int, ...]] = ()) -> None:
        self._owner = mmap.mmap(-1, max(1, events))  # zeros: all _FREE
        self._lock = context.Lock()
        self._with = {index: group for group in together for index in group}

    def grouped(self, index: int) -> bool:
        return index in self._with

    def claim(self, index: int, who: int) -> bool:
        with self._lock:
            owner = self._owner[index]
            if owner != _FREE:
                return owner == who and index in self._with
            for member in self._with.get(index, (index,)):
                self._owner[member] = who
            return True


def _serve(requests, answers, main_ends, heard: Buses, claims: _Claims, ring: _Ring
           ) -> None:
    """The helper process: compute the notes asked for, in order, until told to stop; a
    note the main process took back (claimed first) is answered ``_TAKEN_BACK``.

    When the main process stops early (Ctrl-C, an error, killed) it closes its end
    while a note may be in hand: the helper then just ends, without a traceback.

    After a large note (``_TRIM_AFTER_BYTES``: a long note heard through many channels, and
    the arrays that made it) the heap's free pages go back to the system: the raised
    thresholds (``malloc.reuse_freed_memory``) would keep them, and the helper's heap held
    50–100 MiB free between such notes in hoa3 (docs/render.md); between them, every 2 s
    (``releasing_now_and_then``), as the render's process and pass 1's keeper do.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # and so is the command's SIGTERM
    for end in main_ends:  # so the pipes report EOF if the main process dies
        end.close()
    heard.forget_in_helper()
    release = releasing_now_and_then()
    with contextlib.suppress(EOFError, BrokenPipeError, ConnectionResetError):
        for index in _requested(requests):
            if not claims.claim(index, _HELPER):
                _send(answers, (index, _TAKEN_BACK))
                continue
            try:
                note = heard.compute(index)
            except BaseException as error:  # handed to the main process, which raises it
                _send(answers, (index, error))
                return
            _send(answers, (index, note), ring)
            if heard_bytes(note) > _TRIM_AFTER_BYTES:
                del note  # its arrays are freed before the heap is trimmed
                release_freed_memory()
            else:
                release()


class NoteHelper:
    """A forked process computing notes the cache lacks, ``_AHEAD`` events ahead.

    The helper walks the events from ``_LEAD`` to ``_AHEAD`` events ahead of the
    main process, taking each note that is neither cached nor already asked for
    while it has fewer than ``_IN_FLIGHT`` to do and less than ``_READY_BYTES``
    finished and waiting; when the main process catches up with it, the notes
    skipped are the main process's to compute, and so is a note asked for that the
    helper has not started yet (whoever claims a note first makes it: ``_Claims``).
    So the helper can have 16 notes queued, and the main process never waits for a
    note behind others in the helper's queue (with 4 queued and no taking back, the
    helper idled whenever the main process was busy for long); and while it waits for
    the note the helper is making, it makes the last one queued instead of idling.
    On a whole rite (``render_blocks``, ``--jobs 2``, one run each) that took the
    render from 73.1 to 63.9 s. A note is the same bits whoever computes it, so the
    output does not depend on the split.

    A thread of the main process takes the finished notes off the pipe as they come:
    a note is larger than the pipe holds, so without it the helper would wait, note
    in hand, until the main process next looked (on a 3 000 s cut it was busy 63 % of
    the render then, 77 % with the thread).
    """

    _LEAD = 50
    _AHEAD = 400
    _IN_FLIGHT = 16
    _READY_BYTES = 32 << 20
    #: The shared memory notes come through (``_Ring``): several notes' worth (the receiving
    #: thread copies each out as it comes; on the whole rite 16 434 notes of 16 441 came
    #: through it); a note larger than what is free goes down the pipe.
    _RING_BYTES = 8 << 20

    def __init__(self, heard: Buses) -> None:
        context = multiprocessing.get_context("fork")
        their_requests, self._requests = context.Pipe(duplex=False)
        self._answers, their_answers = context.Pipe(duplex=False)
        _widen(their_answers)
        self._claims = _Claims(context, len(heard.performance.events), heard.together())
        self._ring = _Ring(context, self._RING_BYTES)
        self._process = context.Process(
            target=_serve, args=(their_requests, their_answers,
                                 (self._requests, self._answers), heard, self._claims,
                                 self._ring),
            daemon=True)
        self._process.start()
        their_requests.close()
        their_answers.close()
        self.heard = heard
        self._next = 0
        self._in_flight = 0
        self._ready_bytes = 0
        self._ready: dict[int, np.ndarray | HeardNote | BaseException | None] = {}
        self._keys: dict[int, tuple] = {}  # index → key, of notes asked for, not used yet
        self._asked: Counter[tuple] = Counter()  # those keys (looked up per event: no scan)
        self._arrived = threading.Condition()
        self._ended = False  # the helper's pipe closed
        self._receiver = threading.Thread(target=self._receive, name="note-receiver",
                                          daemon=True)
        self._receiver.start()

    def schedule(self, index: int) -> None:
        """Hand out the events entering the window after ``index``; a helper gone before
        it was told to stop is an error (the main process may need none of its notes, but
        a render whose helper died, e.g. killed for memory, is not to be trusted)."""
        lead = min(len(self.heard.performance.events), index + self._LEAD)
        if lead > self._next:  # left behind: main's to do
            self._leave(lead)
        self._ask(index + self._AHEAD)

    def _leave(self, stop: int) -> None:
        """The events from ``_next`` up to ``stop``, not asked for, are this process's to
        make; but those made together with others (a sung line's parts) whose group the
        helper has claimed are asked of it all the same (here its line would be made again,
        and the helper has it made), and the other groups are claimed here."""
        asked = [index for index in range(self._next, stop)
                 if self._claims.grouped(index) and not self._claims.claim(index, _MAIN)]
        self._next = stop
        for index in asked:
            key = self._keys[index] = self.heard.key(index)
            self._asked[key] += 1
        if asked:
            with self._arrived:
                self._in_flight += len(asked)
            try:
                _ask_for(self._requests, asked)
            except OSError:  # BrokenPipeError and the like: it is gone
                raise self._gone() from None

    def share(self, stop: int) -> None:
        """Ask for the notes of events 1 to ``stop`` (at most ``_IN_FLIGHT``) now, before the
        first ``schedule``: the notes the first block waits for, made by both processes
        (the main process makes event 0 on, and while it waits for one the helper has,
        the last of these no one has started: ``take``). A stream's first audio waited
        for the main process to make them all (``soundscape play``)."""
        self._next = max(self._next, 1)
        self._ask(stop)

    def _ask(self, stop: int) -> None:
        """Ask for the notes from ``_next`` up to ``stop`` that are not in hand (as far as
        the limits on notes in flight and finished bytes allow)."""
        if self._ended:
            raise self._gone()
        stop = min(len(self.heard.performance.events), stop)
        asked: list[int] = []
        while (self._next < stop and self._in_flight < self._IN_FLIGHT
               and self._ready_bytes < self._READY_BYTES):
            ahead = self._next
            self._next += 1
            key = self.heard.key(ahead)
            if not (self.heard.static and (key in self._asked or self.heard.cached(key))):
                with self._arrived:
                    self._in_flight += 1
                self._keys[ahead] = key
                self._asked[key] += 1
                asked.append(ahead)
        if asked:
            try:
                _ask_for(self._requests, asked)
            except OSError:  # BrokenPipeError and the like: it is gone
                raise self._gone() from None

    def has(self, index: int) -> bool:
        return index in self._keys

    def take(self, index: int) -> np.ndarray | HeardNote | None:
        """The note of event ``index`` (asked for earlier): made here if the helper has not
        started it (it then skips it), else the helper's. While the helper is still making
        it, this process makes the latest note asked for that the helper has not started,
        rather than wait."""
        key = self._keys.pop(index)
        self._asked[key] -= 1
        if not self._asked[key]:
            del self._asked[key]
        if index not in self._ready and self._claims.claim(index, _MAIN):
            return self.heard.compute(index)
        while self._waiting_for(index) and self._make_a_later_note():
            pass
        with self._arrived:
            while index not in self._ready:
                if self._ended:
                    raise self._gone(locked=True)
                self._arrived.wait()
            note = self._ready.pop(index)
            if isinstance(note, BaseException):
                raise note
            self._ready_bytes -= heard_bytes(note)
        return note

    def _gone(self, *, locked: bool = False) -> BaseException:
        """Why the helper ended: the error it sent with a note (it stops after one: a
        phone the voice cannot say, a file the cache could not read), else that it is gone
        (killed). Its error was lost when the main process asked for more notes first."""
        with contextlib.nullcontext() if locked else self._arrived:
            error = next((n for n in self._ready.values() if isinstance(n, BaseException)),
                         None)
        return error if error is not None else RenderError(_GONE)

    def _waiting_for(self, index: int) -> bool:
        with self._arrived:
            return index not in self._ready and not self._ended

    def _make_a_later_note(self) -> bool:
        """Make the latest note asked for that no one has started; False if there is none
        (the helper works in order: once it has started one, it has all those before; a
        sung line's part it claimed with the line's first may not be started yet)."""
        for later in reversed(self._keys):
            if later in self._ready:  # made (here or by the helper), waiting to be taken
                continue
            if not self._claims.claim(later, _MAIN):
                if self._claims.grouped(later):
                    continue
                return False
            note = self.heard.compute(later)
            with self._arrived:
                self._ready[later] = note
                self._ready_bytes += heard_bytes(note)
            return True
        return False

    def _receive(self) -> None:
        """The receiving thread: each finished note into ``_ready``, until the pipe ends."""
        incoming = _Incoming(self._answers)
        while True:
            try:
                done, note = _receive(incoming, self._ring)
            except (EOFError, OSError):
                with self._arrived:
                    self._ended = True
                    self._arrived.notify_all()
                return
            with self._arrived:
                self._in_flight -= 1
                if isinstance(note, str) and note == _TAKEN_BACK:
                    continue
                self._ready[done] = note
                if not isinstance(note, BaseException):
                    self._ready_bytes += heard_bytes(note)
                self._arrived.notify_all()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            _ask_for(self._requests, [_STOP])
        self._requests.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._receiver.join(timeout=5)
        self._answers.close()
