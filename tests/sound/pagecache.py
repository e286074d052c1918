"""The page cache, seen from a test: which of a file's pages it holds (Linux ``mincore``),
and whether a folder's file system takes ``O_DIRECT``."""

from __future__ import annotations

import ctypes
import mmap
import os
import sys

import numpy as np
import pytest

from soundscape.sound import directio


def skip_without_direct_io(folder) -> None:
    """Skip unless files in ``folder`` can be opened past the page cache (Linux, and a file
    system that takes ``O_DIRECT``; elsewhere ``directio`` goes through the cache)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the page cache is looked at with Linux's mincore")
    with directio.DirectWriter(folder / ".direct-probe") as f:
        direct = directio.is_direct(f.fileno())
    (folder / ".direct-probe").unlink()
    if not direct:
        pytest.skip("this file system refuses O_DIRECT: the files go through the cache")


def resident_pages(path) -> np.ndarray:
    """Per page of ``path``: whether it is in the page cache."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    size, page = path.stat().st_size, mmap.PAGESIZE
    vec = (ctypes.c_ubyte * -(-size // page))()
    fd = os.open(path, os.O_RDONLY)
    try:
        base = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if base in (None, ctypes.c_void_p(-1).value):
            pytest.skip("mmap failed")
        try:
            failed = libc.mincore(base, size, vec)
        finally:
            libc.munmap(base, size)
    finally:
        os.close(fd)
    if failed:
        pytest.skip(f"mincore failed (errno {ctypes.get_errno()})")
    return np.frombuffer(bytes(vec), dtype=np.uint8) & 1
