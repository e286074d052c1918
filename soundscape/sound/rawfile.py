"""Pass 1's raw float32 file, kept without its silent columns.

Each block pass 1 keeps is stored as the columns that hold a sample other than +0, side by
side frame by frame (float32, little-endian); a :class:`Layout` records where each block
starts (frame and byte) and which columns it holds. A column left out reads back as +0, the
bits it held: the file reads back exactly as written. An ADM master's object tracks are
silent in most blocks (s18: 20.7 of its 41 columns sound in an average block), so its raw
file, and pass 2's reading of it, shrink by half; a stereo or ambisonic render's columns all
sound, and its file is what it was, read back as it was; so is a block with fewer than a
quarter of its columns silent (``_LEAVE_OUT``: a 5.1 render's silent LFE is not worth the
copies).

Written and read past the page cache (``directio``): the file is written once, read once
(pass 2) and then only around the limiter's work.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from soundscape.sound import directio

__all__ = ["Layout", "RawWriter", "chunks", "read"]

_FIRST_FRAMES = 64  # a column sounding here needs no scan of the rest (most sounding ones)
#: The share of a block's columns that must be silent for them to be left out. Leaving
#: columns out costs a copy each way (a 5.1 block of one second with its LFE silent: 0.32 ms
#: gathered, 0.33 ms placed, where all six as they are need neither), and saves 4 bytes a
#: silent sample written and read back (~4 ns of this machine's disk): on a whole rite's
#: 9 078 blocks ~6 s of CPU for 1.7 GB less written and read. An ADM master's blocks have
#: about half their columns silent (s18); a 5.1 or 7.1.4 render's, at most its LFE (1 in 6,
#: 1 in 12).
_LEAVE_OUT = 0.25


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each kept block is in the raw file.

    ``starts`` (blocks + 1): each block's first frame, then the frame count; ``offsets``
    (blocks + 1): each block's first byte, then the file's length; ``columns`` (blocks,
    width): which columns each block stores."""

    width: int
    starts: np.ndarray
    offsets: np.ndarray
    columns: np.ndarray

    @property
    def frames(self) -> int:
        return int(self.starts[-1])


class RawWriter:
    """Writes blocks (frames, width) of float32 to ``path``, each without its all-zero
    columns where at least ``_LEAVE_OUT`` of them are; ``layout()`` says where they went."""

    def __init__(self, path: str | Path) -> None:
        self._out = directio.DirectWriter(path)
        self._starts, self._offsets = [0], [0]
        self._columns: list[np.ndarray] = []
        self._width: int | None = None

    def write(self, block: np.ndarray) -> None:
        block = np.asarray(block, dtype="<f4")
        if self._width is None:
            self._width = block.shape[1]
        if block.shape[1] != self._width:
            raise ValueError(f"{self._out.name}: a block of {block.shape[1]} columns after "
                             f"blocks of {self._width}")
        columns = stored_columns(block)
        kept = block if columns.all() else _gathered(block, columns)
        if kept.size:
            self._out.write(np.ascontiguousarray(kept).data)
        self._starts.append(self._starts[-1] + len(block))
        self._offsets.append(self._offsets[-1] + kept.nbytes)
        self._columns.append(columns)

    def layout(self) -> Layout:
        width = self._width or 0
        return Layout(width, np.array(self._starts, dtype=np.int64),
                      np.array(self._offsets, dtype=np.int64),
                      np.array(self._columns, dtype=bool).reshape(-1, width))

    def close(self) -> None:
        self._out.close()

    def __enter__(self) -> RawWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def stored_columns(block: np.ndarray) -> np.ndarray:
    """Per column of float32 ``block`` (frames, width): whether it is stored. A column is
    left out only if every sample's bits are zero (a −0 or a NaN sounds: a left-out column
    reads back as +0 exactly), and only where at least ``_LEAVE_OUT`` of the columns are.
    The first frames settle most columns that sound; the block is scanned whole only if
    enough of the others could be silent."""
    bits = block.view(np.uint32)
    columns = np.any(bits[:_FIRST_FRAMES], axis=0)
    if (~columns).sum() >= _LEAVE_OUT * len(columns):
        # every column's bits or-ed in one pass down the block: a third of the time of
        # reading the unsettled columns apart (strided), measured on a master's 33
        columns = np.bitwise_or.reduce(bits, axis=0) != 0
    if (~columns).sum() < _LEAVE_OUT * len(columns):
        columns[:] = True  # too few to be worth the copies: every column, as it is
    return columns


def read(path: str | Path, layout: Layout, start: int, stop: int) -> np.ndarray:
    """Frames ``start…stop-1`` (within the file) as float32 (frames, width)."""
    first = int(np.searchsorted(layout.starts, start, side="right")) - 1
    last = max(first + 1, int(np.searchsorted(layout.starts, stop, side="left")))
    base = int(layout.offsets[first])
    data = directio.read_at(path, base, int(layout.offsets[last]) - base)
    whole = layout.columns[first:last].all()
    if whole:  # every column stored: the file's bytes are the frames as they are
        lo = start - int(layout.starts[first])
        return data.view("<f4").reshape(-1, layout.width)[lo:lo + stop - start]
    out = np.zeros((stop - start, layout.width), dtype=np.float32)
    for block in range(first, last):
        begin, end = int(layout.starts[block]), int(layout.starts[block + 1])
        columns = layout.columns[block]
        if not columns.any():
            continue
        at = int(layout.offsets[block]) - base
        stored = data[at:at + (end - begin) * 4 * int(columns.sum())].view("<f4").reshape(
            end - begin, -1)
        lo, hi = max(start, begin), min(stop, end)
        _placed(out[lo - start:hi - start], stored[lo - begin:hi - begin], columns)
    return out


def chunks(path: str | Path, layout: Layout, chunk_frames: int
           ) -> Iterator[tuple[int, np.ndarray]]:
    """The whole file ``chunk_frames`` at a time, as (first frame, frames); the next
    ``_AHEAD`` chunks are read on threads of their own while this one is used."""
    starts = iter(range(0, layout.frames, chunk_frames))
    with ThreadPoolExecutor(_AHEAD, thread_name_prefix="raw-reader") as pool:
        pending: collections.deque = collections.deque()

        def ask() -> None:
            if (start := next(starts, None)) is not None:
                pending.append((start, pool.submit(
                    read, path, layout, start, min(start + chunk_frames, layout.frames))))

        for _ in range(_AHEAD):
            ask()
        while pending:
            start, chunk = pending.popleft()
            ask()
            yield start, chunk.result()


#: Chunks read at once: a chunk's reading and the placing of its columns take about as long
#: as its packing and writing (the ADM master of s18, py-spy).
_AHEAD = 2
#: Frames ``_placed`` moves at a time (a stretch of both arrays in the cache).
_PLACED_FRAMES = 2048


def _gathered(block: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``block``'s ``columns`` side by side (a copy)."""
    return np.take(block, np.flatnonzero(columns), axis=1)


def _placed(out: np.ndarray, stored: np.ndarray, columns: np.ndarray) -> None:
    """The inverse of ``_gathered``: ``stored``'s columns into ``out``'s ``columns``, a
    stretch of frames at a time (both in the cache: half the time of the whole at once).
    Columns side by side go as one slice each run: an Atmos master's blocks store two or
    three runs (the objects that sound together, the bed; s18), placed in half the time of
    one index over all. Where most columns stand alone, the one index is quicker."""
    where = np.flatnonzero(columns)
    runs = _runs(where)
    by_index = 2 * len(runs) > len(where)
    for at in range(0, len(out), _PLACED_FRAMES):
        frames = slice(at, at + _PLACED_FRAMES)
        if by_index:
            out[frames, where] = stored[frames]
            continue
        for first, past, index in runs:
            out[frames, first:past] = stored[frames, index:index + past - first]


def _runs(where: np.ndarray) -> list[tuple[int, int, int]]:
    """The ascending column numbers ``where`` as runs of neighbours: (first, past the last,
    index of the first in ``where``)."""
    starts = np.flatnonzero(np.diff(where, prepend=-2) != 1)
    stops = np.append(starts[1:], len(where))[:len(starts)]
    return [(int(where[a]), int(where[b - 1]) + 1, int(a))
            for a, b in zip(starts, stops, strict=True)]
