"""Keep freed memory for reuse: renders allocate many block-sized arrays.

glibc hands every allocation above its mmap threshold (128 KiB at first) to a
fresh ``mmap`` and returns it to the system when freed, so each numpy array of
a block (a second of stereo is 384 KiB) costs page faults and zeroing again.
Raising the mmap and trim thresholds keeps such blocks in the heap for the
next one. Measured on a shared 2-core machine: a loudness-meter block
2.9 → 1.3 ms; the whole-rite stereo render 64 s → 57–62 s (single runs), with
peak RSS 766 → 772 MiB. Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

__all__ = ["one_arena", "release_freed_memory", "reuse_freed_memory"]

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
