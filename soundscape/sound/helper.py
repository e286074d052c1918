"""The helper process: a forked process computing heard notes ahead of the mix (two cores)."""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
from typing import TYPE_CHECKING

from soundscape.sound.spatialise import HeardNote, heard_bytes

if TYPE_CHECKING:
    from soundscape.sound.buses import Buses

__all__ = ["NoteHelper"]


def _serve(conn, other, heard: Buses) -> None:
    """The helper process: compute the notes asked for, in order, until told to stop.

    When the main process stops early (Ctrl-C, an error, killed) it closes its end
    while a note may be in hand: the helper then just ends, without a traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    other.close()  # so the pipe reports EOF if the main process dies
    heard.forget_in_helper()
    with contextlib.suppress(EOFError, BrokenPipeError, ConnectionResetError):
        while (index := conn.recv()) is not None:
            try:
                note = heard.compute(index)
            except BaseException as error:  # handed to the main process, which raises it
                conn.send((index, error))
                return
            conn.send((index, note))


class NoteHelper:
    """A forked process computing notes the cache lacks, ``_AHEAD`` events ahead.

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

    def __init__(self, heard: Buses) -> None:
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, self._conn, heard),
                                        daemon=True)
        self._process.start()
        child.close()
        self.heard = heard
        self._next = 0
        self._in_flight = 0
        self._ready_bytes = 0
        self._ready: dict[int, HeardNote | None] = {}
        self._keys: dict[int, tuple] = {}  # index → key, of notes asked for, not used yet

    def schedule(self, index: int) -> None:
        """Collect finished notes; hand out the events entering the window after ``index``."""
        while self._conn.poll():
            self._receive()
        stop = min(len(self.heard.performance.events), index + self._AHEAD)
        self._next = max(self._next, index + self._LEAD)  # left behind: main's to do
        while (self._next < stop and self._in_flight < self._IN_FLIGHT
               and self._ready_bytes < self._READY_BYTES):
            ahead = self._next
            self._next += 1
            key = self.heard.key(ahead)
            if not (self.heard.static and (self.heard.cached(key)
                                           or key in self._keys.values())):
                self._conn.send(ahead)
                self._in_flight += 1
                self._keys[ahead] = key

    def has(self, index: int) -> bool:
        return index in self._keys

    def take(self, index: int) -> HeardNote | None:
        """The note of event ``index`` (asked for earlier), waiting for it if needed."""
        while index not in self._ready:
            self._receive()
        del self._keys[index]
        note = self._ready.pop(index)
        self._ready_bytes -= heard_bytes(note)
        return note

    def _receive(self) -> None:
        done, note = self._conn.recv()
        self._in_flight -= 1
        if isinstance(note, BaseException):
            raise note
        self._ready[done] = note
        self._ready_bytes += heard_bytes(note)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(None)
        self._conn.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.terminate()
