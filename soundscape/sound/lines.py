"""Lines: the dry notes of a source standing in one place, mixed first, heard once per chunk.

For a standing listener, everything between a standing source and the ear is one
fixed filter (each path's air, delay, panning gains and head shadow: the
spatialiser's transfer function). So the notes from one place are added dry, at
their onsets, to that place's *line*, and the line is filtered once per chunk of
``CHUNK`` frames by overlap-save (an FFT of the chunk and one inverse FFT per
row), whatever the number of notes on it: four 瑟 of a song cost four filters a
chunk, not one long FFT per note, and no heard note is stored.

The filter's impulse response is the transfer function's, on an FFT grid twice
its length, cut ``GUARD`` samples after the last arrival with a half-Hann taper
(the fractional delays' sinc tails; the zero-phase air filter rings within
``GUARD`` either side of each arrival). Chunks fall on fixed frames, so the
output does not depend on the render's block size.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft

from soundscape.site.listeners import Listener
from soundscape.sound.spatialise import GUARD, Spatialiser, _fft_size

__all__ = ["CHUNK", "Lines"]

#: Frames a line is filtered at a time (at its bus's rate).
CHUNK = 16384


class _Line:
    """One place's dry notes, from absolute frame ``origin`` on, and its filter."""

    def __init__(self, spatialiser: Spatialiser, point, listener: Listener, face,
                 column: int) -> None:
        _, self.start, last = spatialiser._arrivals(point, listener, face)
        self.taps = math.ceil(last) - self.start + 2 * GUARD  # impulse response length
        grid = _fft_size(2 * self.taps)
        rows, self.mix = spatialiser._response(point, listener, face, grid)
        response = scipy.fft.irfft(rows, grid, axis=1)[:, :self.taps]
        response[:, -GUARD:] *= np.hanning(2 * GUARD)[GUARD:]
        self.n_fft = _fft_size(CHUNK + self.taps - 1)
        self.filter = scipy.fft.rfft(response, self.n_fft, axis=1).astype(np.complex64)
        self.column = column
        self.origin = 0
        self.data = np.zeros(0, dtype=np.float32)
        self.end = 0  # absolute frame after the last note's last sample

    def add(self, onset: int, mono: np.ndarray) -> None:
        """Add a dry note whose first sample is at absolute frame ``onset``."""
        stop = onset + len(mono)
        if not self.data.size:
            self.origin = onset
        elif onset < self.origin:  # before what is kept (a note placed early by a bus's lag)
            self.data = np.concatenate([np.zeros(self.origin - onset, np.float32), self.data])
            self.origin = onset
        if stop - self.origin > len(self.data):
            grown = np.zeros(max(stop - self.origin, 2 * len(self.data)), dtype=np.float32)
            grown[:len(self.data)] = self.data
            self.data = grown
        self.data[onset - self.origin:stop - self.origin] += mono
        self.end = max(self.end, stop)

    def heard(self, chunk_start: int) -> np.ndarray | None:
        """The chunk from ``chunk_start`` as heard, ``(CHUNK, channels or rows)``, or None when
        silent; then forget what no later chunk needs."""
        first = chunk_start - self.start - self.taps + 1  # dry frames this chunk hears
        if first >= self.end:
            return None
        segment = self._dry(first, CHUNK + self.taps - 1)
        self._drop_before(first + CHUNK)
        if not segment.any():
            return None
        spectrum = scipy.fft.rfft(segment, self.n_fft)
        out = scipy.fft.irfft(self.filter * spectrum, self.n_fft, axis=1)
        rows = out[:, self.taps - 1:self.taps - 1 + CHUNK].T
        return rows @ self.mix if self.mix is not None else rows

    def done(self, chunk_start: int) -> bool:
        return chunk_start - self.start - self.taps + 1 >= self.end

    def _dry(self, first: int, frames: int) -> np.ndarray:
        out = np.zeros(frames, dtype=np.float32)
        lo, hi = max(first, self.origin), min(first + frames, self.origin + len(self.data))
        if hi > lo:
            out[lo - first:hi - first] = self.data[lo - self.origin:hi - self.origin]
        return out

    def _drop_before(self, frame: int) -> None:
        cut = min(max(0, frame - self.origin), len(self.data))
        if cut >= CHUNK:  # seldom: a copy only when a chunk's worth is spent
            self.data = self.data[cut:].copy()
            self.origin += cut


class Lines:
    """The lines of one bus, for a standing listener; output in chunks of ``CHUNK`` frames."""

    def __init__(self, spatialiser: Spatialiser, listener: Listener, channels: int) -> None:
        self.spatialiser = spatialiser
        self.listener = listener
        self.channels = channels
        self._lines: dict[tuple, _Line] = {}
        self.next_chunk = 0  # absolute frame of the next chunk to hear
        self.extent = 0

    def add(self, onset: int, mono: np.ndarray, point, face, column: int) -> None:
        """Add a dry note at absolute frame ``onset`` to the line of its place."""
        key = (point, face, column)
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = _Line(self.spatialiser, point, self.listener, face,
                                            column)
        line.add(onset, mono)
        self.extent = max(self.extent, line.end + line.start + line.taps)

    def chunk(self) -> np.ndarray:
        """The next chunk of every line, mixed: ``(CHUNK, channels)``."""
        out = np.zeros((CHUNK, self.channels), dtype=np.float32)
        at = self.next_chunk
        for key, line in list(self._lines.items()):
            heard = line.heard(at)
            if heard is not None:
                out[:, line.column:line.column + heard.shape[1]] += heard
            if line.done(at + CHUNK):
                del self._lines[key]
        self.next_chunk += CHUNK
        return out
