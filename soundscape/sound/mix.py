"""The streaming mix: an accumulator of the frames not yet handed out, emitted in blocks.

Heard notes are added as they come (events sorted by onset); frames before the
next onset (less the spatialiser's guard) can no longer change and are handed
out in fixed blocks, so it holds the longest ring plus the longest delay, never
the whole rite.
"""

from __future__ import annotations

from collections import deque

import numpy as np

__all__ = ["MIX_FRAMES", "Accumulator"]

#: Frames panned per piece (16 float32 channels: 256 KiB, in cache).
MIX_FRAMES = 4096


class Accumulator:
    """The frames not yet handed out, from absolute frame ``base`` on, in chunks.

    Chunks of ``chunk`` frames (the block size) are added as notes reach
    further and handed out whole as blocks, so growing never copies what is
    there and a block costs no copy.
    """

    def __init__(self, channels: int, chunk: int) -> None:
        self.base = 0
        self.extent = 0
        self.channels = channels
        self.chunk = chunk
        self._chunks: deque[np.ndarray] = deque()
        self._first = 0  # absolute frame where _chunks[0] begins (≤ base)

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
        while self._first + len(self._chunks) * self.chunk < end:
            self._chunks.append(np.zeros((self.chunk, self.channels), dtype=np.float32))
        at = start
        while at < end:
            index, offset = divmod(at - self._first, self.chunk)
            n = min(self.chunk - offset, end - at)
            self._chunks[index][offset:offset + n, column:column + data.shape[1]] += \
                data[at - start:at - start + n]
            at += n

    def take(self, frames: int) -> np.ndarray:
        """The next ``frames`` frames (a whole chunk when aligned: the usual case)."""
        out = self.take_added(frames)
        return np.zeros((frames, self.channels), dtype=np.float32) if out is None else out

    def take_added(self, frames: int) -> np.ndarray | None:
        """The next ``frames`` frames as ``take``, or None where no note was added to them:
        no block of zeros is made, to be summed with what sounds (a standing listener's
        notes are on lines: his buses' accumulators hold only the long ones)."""
        if not self._chunks:  # the first chunk, if any, holds frame ``base``
            self.base += frames
            self._first = self.base
            return None
        if frames == self.chunk and self.base == self._first:
            out = self._chunks.popleft()
            self._first += frames
        else:  # the last, shorter block
            out = np.zeros((frames, self.channels), dtype=np.float32)
            at = self.base
            while at < self.base + frames and self._chunks:
                index, offset = divmod(at - self._first, self.chunk)
                if index >= len(self._chunks):
                    break
                n = min(self.chunk - offset, self.base + frames - at)
                out[at - self.base:at - self.base + n] = self._chunks[index][offset:offset + n]
                at += n
            while self._chunks and self._first + self.chunk <= self.base + frames:
                self._chunks.popleft()
                self._first += self.chunk
            if not self._chunks:
                self._first = self.base + frames
        self.base += frames
        return out
