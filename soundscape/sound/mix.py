"""The streaming mix: an accumulator of the frames not yet handed out, emitted in blocks.

Heard notes are added as they come (events sorted by onset); frames before the
next onset (less the spatialiser's guard) can no longer change and are handed
out in fixed blocks, so it holds the longest ring plus the longest delay, never
the whole rite.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIX_FRAMES", "Accumulator"]

#: Frames panned per piece (16 float32 channels: 256 KiB, in cache).
MIX_FRAMES = 4096


class Accumulator:
    """The frames not yet handed out, from absolute frame ``base`` on, in chunks.

    Chunks of ``chunk`` frames (the block size), on a grid from frame 0, are made where
    notes are added and handed out whole as blocks, so growing never copies what is there,
    a block costs no copy, and a block no note reached costs nothing (``take_added``).
    """

    def __init__(self, channels: int, chunk: int) -> None:
        self.base = 0
        self.extent = 0
        self.channels = channels
        self.chunk = chunk
        self._chunks: dict[int, np.ndarray] = {}  # by index on the grid (frame // chunk)

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
            for i in range(0, len(data), MIX_FRAMES):
                self._add(start + i, data[i:i + MIX_FRAMES] @ mix, column)
        self.extent = max(self.extent, start + len(data))

    def _add(self, start: int, data: np.ndarray, column: int) -> None:
        end = start + len(data)
        at = start
        while at < end:
            index, offset = divmod(at, self.chunk)
            chunk = self._chunks.get(index)
            if chunk is None:
                chunk = self._chunks[index] = np.zeros((self.chunk, self.channels),
                                                       dtype=np.float32)
            n = min(self.chunk - offset, end - at)
            chunk[offset:offset + n, column:column + data.shape[1]] += \
                data[at - start:at - start + n]
            at += n

    def take_added(self, frames: int) -> np.ndarray | None:
        """The next ``frames`` frames, or None where no note was added to their
        chunks: no block of zeros is made, to be summed with what sounds (a standing
        listener's notes are on lines: his buses' accumulators hold only the long ones)."""
        start, end = self.base, self.base + frames
        self.base = end
        first, offset = divmod(start, self.chunk)
        if frames == self.chunk and not offset:
            return self._chunks.pop(first, None)
        held = [index for index in range(first, (end - 1) // self.chunk + 1)
                if index in self._chunks]
        if not held:
            return None
        out = np.zeros((frames, self.channels), dtype=np.float32)
        for index in held:  # the part of each chunk in the block; those wholly taken go
            begin = index * self.chunk
            lo, hi = max(start, begin), min(end, begin + self.chunk)
            out[lo - start:hi - start] = self._chunks[index][lo - begin:hi - begin]
            if begin + self.chunk <= end:
                del self._chunks[index]
        return out
