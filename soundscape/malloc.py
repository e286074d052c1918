"""Keep freed memory for reuse: renders allocate many block-sized arrays.

glibc hands every allocation above its mmap threshold (128 KiB at first) to a
fresh ``mmap`` and returns it to the system when freed, so each numpy array of
a block (a second of stereo is 384 KiB) costs page faults and zeroing again.
Raising the mmap and trim thresholds keeps such blocks in the heap for the
next one. Measured on a shared 2-core machine: a loudness-meter block
2.9 → 1.3 ms; the whole-rite stereo render 64 s → 57–62 s (single runs), with
peak RSS 766 → 772 MiB. Elsewhere than glibc this does nothing.

Python's own cyclic collector is paused while a rite's objects are made in bulk
(``collector_paused``).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import os
import time
from collections.abc import Callable, Iterator

__all__ = ["collector_paused", "one_arena", "release_freed_memory", "releasing_now_and_then",
           "reuse_freed_memory"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD_MAX = 32 << 20  # glibc's ceiling on 64-bit systems
_TRIM_THRESHOLD = 64 << 20


def reuse_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process (and its forks).

    Returns
    -------
    bool
        Whether glibc accepted both settings (False off glibc).
    """
    global _RELEASING
    mallopt = _mallopt()
    raised = bool(mallopt and mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)
                  and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    if raised and not _RELEASING:  # what is kept is not handed to a fork
        os.register_at_fork(before=release_freed_memory)
        _RELEASING = True
    return raised


_RELEASING = False  # release_freed_memory runs before each fork


_M_ARENA_MAX = -8


def one_arena() -> bool:
    """Let every thread of this process (and its forks) allocate from glibc's main arena.

    glibc gives each thread that allocates its own arena; with the thresholds above, each
    keeps its freed blocks, so a render whose buses run on threads holds a heap per thread.
    The ADM master (``adm_render``: two streams of buses, wide blocks) measured on s09:
    the render's process 1405 → 1053 MiB PSS (``MALLOC_ARENA_MAX=1``), CPU time unchanged;
    every render calls it (``render_blocks``; docs/render.md, "Threads and memory").
    Returns whether glibc accepted it (False off glibc)."""
    mallopt = _mallopt()
    return bool(mallopt and mallopt(_M_ARENA_MAX, 1))


def release_freed_memory() -> bool:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim(0)``).

    Called before a fork: a free page the parent still holds is shared with the child, and
    when the parent reuses it the page is copied, the child left the only owner of the old
    one; a page given back is shared with no one. Returns whether glibc did (False off
    glibc)."""
    trim = _glibc("malloc_trim", ctypes.c_size_t)
    if trim is None:
        return False
    trim(0)
    return True


#: How often a render gives its free pages back (``releasing_now_and_then``), seconds.
RELEASE_EVERY_S = 2.0


def releasing_now_and_then(every_s: float = RELEASE_EVERY_S,
                           clock: Callable[[], float] = time.monotonic) -> Callable[[], None]:
    """A call that gives the heap's free pages back (``release_freed_memory``) when
    ``every_s`` seconds have passed on ``clock`` since it last did (or since it was made).

    For a render's loop: the raised thresholds keep what a burst of large arrays leaves free
    (the whole rite in hoa3 kept ~300 MiB free in its heap after its first 20 s), and it is
    then resident for the rest of the render. A trim takes ~10 ms there, so every 2 s costs
    about 0.5 % of a core; the pages it gives back that are reused are faulted in again,
    which measured within the noise (s18 in hoa3, three runs each: 33.4 and 32.8 s of CPU).
    """
    last = clock()

    def maybe() -> None:
        nonlocal last
        now = clock()
        if now - last >= every_s:
            release_freed_memory()
            last = clock()

    return maybe


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside (a context or, as ``@collector_paused()``,
    a function), on again after if it was: while tens of thousands of objects are made
    that all live on, each full collection they set off walks every one made so far. The
    whole rite's sequencing (34 514 events) took 1.65-2.19 s with it on and 1.37-1.54 s
    off, the same Performance to the byte; reading one back, 0.17 s against 0.11 s."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def _mallopt():
    """glibc's ``mallopt(int, int)``, or None off glibc."""
    return _glibc("mallopt", ctypes.c_int, ctypes.c_int)


@functools.cache
def _glibc(name: str, *argtypes):
    """The C library's function ``name`` taking ``argtypes``, or None off glibc; looked up
    once (``find_library`` runs ``ldconfig``, ~3 ms: too slow for every fork)."""
    try:
        function = ctypes.CDLL(ctypes.util.find_library("c"))[name]
    except (OSError, AttributeError, TypeError):
        return None
    function.argtypes = argtypes
    return function
