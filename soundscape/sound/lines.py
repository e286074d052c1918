"""Lines: the dry notes of a source standing in one place, mixed first, heard once per chunk.

For a standing listener, everything between a standing source and the ear is one
fixed filter (each path's air, delay, panning gains and head shadow: the
spatialiser's transfer function). So the notes from one place are added dry, at
their onsets, to that place's *line*, and the line is filtered once per chunk of
``CHUNK`` frames by overlap-save (an FFT of the chunk, times the place's filter),
whatever the number of notes on it: four 瑟 of a song cost four filters a chunk, not
one long FFT per note, and no heard note is stored. The lines of one FFT size keep the
same span of their inverse FFTs, so their filtered spectra are summed per output
channel and inverted once per channel (seven lines of 貍首 in stereo: two inverse FFTs,
not fourteen), straight into the ``(frames, channels)`` array handed out. Transforms run on
one thread: the buses already run on threads of their own beside the helper process (two
FFT threads each were ~10 % slower, measured); pocketfft's SIMD lanes transform four rows
at once, so two or three lines left over are transformed with rows of zeros beside them, and
two chunks are heard together where the second's notes are all in (stereo's inverse: four
rows, one pass, where one chunk has two).

The filter's impulse response is the transfer function's, on an FFT grid twice
its length, kept past the last arrival for as long as the chunk's FFT has room
(``TAIL`` samples at least: the fractional delays' sinc tails), the second half
of that tail under a half-Hann taper; the zero-phase air filter rings within
``GUARD`` before the first arrival. Chunks fall on fixed frames, so the
output does not depend on the render's block size.

The first chunk is heard in pieces (``first_chunks``: 1024 frames, then doubling, summing to
one ``CHUNK``), each with the same FFT (the last ``size`` of its outputs are valid whatever
the size): the first sound of a render then waits for the notes of a fraction of a second,
not of a whole chunk (``soundscape play``), and every later chunk falls on the frames, and
has the bits, it has without them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.fft

from soundscape.site.listeners import Listener
from soundscape.sound.notes import ByteLru
from soundscape.sound.spatialise import GUARD, Spatialiser, fft_size

__all__ = ["CHUNK", "FIRST_CHUNK", "Lines", "first_chunks", "impulse_filter"]

#: Frames a line is filtered at a time (at its bus's rate): 2^16 less 8192, so a response of up
#: to 8192 taps (every place of the whole rite heard from the duke's seat, measured; longer
#: ones take a larger FFT) fills a 65 536-point FFT (21 % less FFT time per output frame than
#: 16 384 frames in 24 576 points, measured).
CHUNK = 57344
#: Samples of the response kept at least past the last arrival (sinc tails, tapered).
TAIL = 2048
#: Bound of the kept filters' spectra (one per place; stereo 512 KiB each, two rows).
FILTER_BYTES = 16 << 20
#: Bound of the kept filters' impulse responses (stereo 64 KiB a place, an eighth of its
#: spectrum): a place heard again after its spectrum was dropped costs a forward FFT of its
#: response, not the response made again (the whole rite in stereo made 2 443 filters for
#: 400 places, 11.5 s of the render's main thread, with the spectra alone kept).
IMPULSE_BYTES = 16 << 20
#: Bound of the filters folded per output channel that a bus's lines keep between chunks
#: (``_folded``: hoa3's are 16 rows, 4 MiB at 65 536 points, where the place's own filter has
#: its 4–15 paths). A line past it folds its filter again for each chunk it is heard in (the
#: same bits): the bells and stones of 陔夏 held 24 at once on one bus, 96 MiB.
FOLDED_BYTES = 32 << 20
#: Frames of the first piece of the first chunk (a multiple of the upsampler's group, 64).
FIRST_CHUNK = 1024
#: Rows of float32 that pocketfft transforms at once (its SIMD lanes: at 65 536 points one
#: row alone takes ~550 µs, four together ~250 µs each, measured).
LANES = 4
_ZERO = np.float32(0.0)
_ZERO_PAIR = np.complex64(0.0)
_SERIALS = itertools.count()


def first_chunks(chunk: int, first: int = FIRST_CHUNK) -> tuple[int, ...]:
    """The sizes the first ``chunk`` frames are heard in: ``first``, doubling, and the rest
    (never shorter than the piece before it), summing to ``chunk``."""
    sizes: list[int] = []
    size = first
    while sum(sizes) + 2 * size <= chunk:  # room for this piece and a last one as long
        sizes.append(size)
        size *= 2
    return (*sizes, chunk - sum(sizes))


class _Impulse:
    """A place's filter as an impulse response: its rows (paths or channels, ``taps``), the
    first tap's frame after the dry one (``start``) and what ``_Filter`` keeps besides."""

    def __init__(self, spatialiser: Spatialiser, point, listener: Listener, face) -> None:
        _, self.start, last = spatialiser.arrivals(point, listener, face)
        # the response runs to the last arrival, then the fractional delays' sinc tails
        # for as long as the chunk's FFT has room (at least TAIL), tapered at the end
        self.n_fft = fft_size(CHUNK + math.ceil(last) - self.start + TAIL)
        self.taps = self.n_fft - CHUNK + 1
        self.reach = math.ceil(last) + GUARD  # frames after a dry frame that it is heard
        grid = fft_size(2 * self.taps)
        rows, self.mix = spatialiser.response(point, listener, face, grid)
        # its own copy: a slice would hold the whole inverse transform (twice the taps)
        self.rows = scipy.fft.irfft(rows, grid, axis=1)[:, :self.taps].copy()
        fade = (self.taps - (math.ceil(last) - self.start)) // 2
        self.rows[:, -fade:] *= np.hanning(2 * fade)[fade:]

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + (0 if self.mix is None else self.mix.nbytes)


class _Filter:
    """A place's filter for a chunk: what ``_Line`` needs of the transfer function."""

    def __init__(self, impulse: _Impulse) -> None:
        self.start, self.n_fft, self.taps = impulse.start, impulse.n_fft, impulse.taps
        self.reach, self.mix = impulse.reach, impulse.mix
        self.spectrum = scipy.fft.rfft(impulse.rows, self.n_fft, axis=1).astype(np.complex64)
        # the spectrum's rows that sound: all (``impulse_filter`` leaves out rows of zeros)
        self.sounding_rows = np.arange(len(self.spectrum))

    @property
    def nbytes(self) -> int:
        return self.spectrum.nbytes + (0 if self.mix is None else self.mix.nbytes)


def impulse_filter(rows: np.ndarray, start: int, chunk: int = CHUNK) -> _Filter:
    """A line's filter from an impulse response: ``rows`` (channels, taps), its first tap
    ``start`` samples after the dry frame (the court's late tail, ``sound.tail``), for lines
    heard ``chunk`` frames at a time."""
    made = _Filter.__new__(_Filter)
    made.start = start
    made.n_fft = fft_size(chunk + rows.shape[1])
    made.taps = made.n_fft - chunk + 1
    made.reach = start + rows.shape[1]
    made.mix = None
    made.spectrum = scipy.fft.rfft(rows, made.n_fft, axis=1).astype(np.complex64)
    made.sounding_rows = np.flatnonzero(rows.any(axis=1))  # the tail's LFE row is zeros
    return made


def _reached(mix: np.ndarray) -> np.ndarray:
    """The output channels that a filter's paths reach: those with a gain in ``mix`` (paths,
    channels). A loudspeaker layout's panning leaves the others silent: of s18's lines'
    channels, 7.1.4's reached 55 %, 5.1's 67 % (its LFE none). (A filter per channel says
    which of its rows sound: all, or, for the court's tail, all but the LFE's zeros:
    ``impulse_filter``.)"""
    return np.flatnonzero(mix.any(axis=0))


def _folded(spectrum: np.ndarray, mix: np.ndarray | None, reached: np.ndarray) -> np.ndarray:
    """A filter's rows per output channel it reaches (``reached``, as ``_reached`` finds
    them): ``spectrum``'s per-path rows summed by the paths' channel gains ``mix`` (paths,
    channels), or ``spectrum`` as it is (already per channel).

    Made once per line, so that a chunk costs a product per channel, not one per path and a
    matrix product over them (hoa3 from the walled court: 4–15 paths into 16 channels).
    The gains are real: a real product over the spectrum's (re, im) pairs makes the complex
    one's sums with half its multiplications (the same bits, measured; 0.95 → 0.68 ms for 8
    paths at 65 536 points). A channel no path reaches would be a row of zeros: it is left
    out (a row's sums do not depend on the rows beside it: the same bits)."""
    if mix is None:
        return spectrum.astype(np.complex64, copy=False)
    pairs = np.ascontiguousarray(spectrum, dtype=np.complex64).view(np.float32)
    gains = mix[:, reached].T.astype(np.float32)
    return (gains @ pairs).view(np.complex64)


class _Line:
    """One place's dry notes (each as it was added, from its absolute onset frame) and its
    filter.

    The notes are kept as they come and summed into a chunk's FFT input only when it is
    heard: a buffer of the line's samples, grown and copied as notes came and went, cost
    the render's main thread a tenth of its time (``Bus.add_dry``). Each sample of the
    input is summed from zero in the order the notes were added, as the buffer summed it,
    so the bits are the buffer's."""

    def __init__(self, response: _Filter, column: int, chunk: int = CHUNK) -> None:
        self.chunk = chunk
        self.start, self.n_fft, self.taps = response.start, response.n_fft, response.taps
        self.reach = response.reach
        # the filter per output channel (``folded``) is the place's own where that is per
        # channel; else its paths' channel gains are folded in, kept while the line sounds
        # if its bus has room (``Lines.folded``), folded again for each chunk if not (the
        # place's filter stays per path: a dozen paths take less memory than 16 channels)
        self.response: _Filter | None = response
        self.folded = response.spectrum if response.mix is None else None
        self.rows = len(response.spectrum) if response.mix is None else response.mix.shape[1]
        # the channels it sounds in, and their rows of ``folded`` (a fold holds only those)
        if response.mix is None:
            self.reached = self.folded_rows = response.sounding_rows
        else:
            self.reached = _reached(response.mix)
            self.folded_rows = np.arange(len(self.reached))
        self.column = column
        self.serial = next(_SERIALS)  # lines are summed in the order they were made
        self.notes: list[tuple[int, np.ndarray]] = []  # (onset, samples), in added order
        self.end = 0  # absolute frame after the last note's last sample

    def add(self, onset: int, mono: np.ndarray) -> None:
        """Add a dry note whose first sample is at absolute frame ``onset``."""
        self.notes.append((onset, mono))
        self.end = max(self.end, onset + len(mono))

    def segment(self, chunk_start: int, size: int,
                forget: bool = True) -> list[tuple[int, np.ndarray]] | None:
        """The dry frames the chunk of ``size`` frames from ``chunk_start`` hears (the
        ``n_fft`` before its end: ``CHUNK + taps − 1`` for a whole chunk): each note's part
        in them, (offset, samples) in added order, or None when none is there; then (with
        ``forget``) forget the notes no later chunk (as long or longer) hears."""
        first = chunk_start - self.start - (self.n_fft - size)
        if first >= self.end:
            return None
        last = first + self.n_fft
        parts = []
        for onset, mono in self.notes:
            lo, hi = max(first, onset), min(last, onset + len(mono))
            if hi > lo:
                parts.append((lo - first, mono[lo - onset:hi - onset]))
        if forget:
            self.forget(chunk_start, size)
        # parts that are all zeros (rare: 13 of 4 931 in s18) are transformed all the same:
        # their exact zeros add nothing to the sums, and reading every part to find them
        # costs more than their FFTs
        return parts or None

    def forget(self, chunk_start: int, size: int) -> None:
        """Forget the notes no chunk after the one of ``size`` frames from ``chunk_start``
        (as long or longer) hears."""
        spent = chunk_start - self.start - (self.n_fft - size) + size
        self.notes = [note for note in self.notes if note[0] + len(note[1]) > spent]

    def done(self, chunk_start: int, size: int) -> bool:
        return chunk_start - self.start - (self.n_fft - size) >= self.end


class Lines:
    """The lines of one bus, for a standing listener; output in chunks of ``CHUNK`` frames.

    Past the first chunk's pieces, two whole chunks are heard at once when the notes of the
    second are all in (a note added since starts after its end), the first handed out and
    the second kept for the next ``chunk``: their lines' forward FFTs are one call (rows
    left over from each fill a lane together), and in stereo so are their channels' inverse
    FFTs (four rows, one pass of pocketfft's SIMD lanes, where each chunk alone has two:
    ~1.05 ms a call either way). A lane computes as a row alone, so the bits are those of
    one chunk at a time. Notes come in time order (the render adds them so); one that still
    reaches the kept chunk makes it heard again. The guard (``Bus.guard``) is unchanged:
    only notes already added are heard early. s18's lines, replayed: 4.73 → 4.12 s CPU."""

    def __init__(self, spatialiser: Spatialiser | None, listener: Listener, channels: int,
                 make_filter=None, chunk: int = CHUNK) -> None:
        self.size = chunk  # frames heard at a time (another than CHUNK: make_filter's own)
        self.spatialiser = spatialiser
        self._make_filter = make_filter  # (point, face) → _Filter, instead of the spatialiser
        self.listener = listener
        self.channels = channels
        self._lines: dict[tuple, _Line] = {}
        self._folded_bytes = 0  # of the lines' folded filters kept (``folded``)
        # a place's filter outlives its line (a line ends when its place falls silent), and
        # its impulse response outlives its spectrum
        self._filters = ByteLru(FILTER_BYTES)
        self._impulses = ByteLru(IMPULSE_BYTES)
        self._first = first_chunks(chunk)  # the first chunk's pieces
        self._heard = 0  # chunks (pieces) heard
        self.next_chunk = 0  # absolute frame of the next chunk to hear
        self.extent = 0
        self._latest = -math.inf  # the latest onset added
        # the next chunk, heard with the last ([] when none is; [None] when it is silent)
        self._kept: list[np.ndarray | None] = []
        self._kept_end = 0  # absolute frame after the kept chunk

    def next_size(self, ahead: int = 0) -> int:
        """Frames of the chunk after the next ``ahead`` ones (a piece of the first, or
        ``size``)."""
        index = self._heard + ahead
        return self._first[index] if index < len(self._first) else self.size

    def size_at(self, frame: int) -> int:
        """Frames of the chunk that holds ``frame`` (a piece of the first, or ``size``)."""
        start = 0
        for size in self._first:
            start += size
            if frame < start:
                return size
        return self.size

    def add(self, onset: int, mono: np.ndarray, point, face, column: int) -> None:
        """Add a dry note at absolute frame ``onset`` to the line of its place."""
        key = (point, face, column)
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = _Line(self._filter(point, face), column, self.size)
        line.add(onset, mono)
        self.extent = max(self.extent, line.end + line.reach)
        self._latest = max(self._latest, onset)
        if self._kept and onset < self._kept_end - line.start:
            self._kept = []  # a note the kept chunk does not hear: heard again, in turn

    def folded(self, line: _Line) -> np.ndarray:
        """``line``'s filter per output channel: kept while it sounds, within ``FOLDED_BYTES``
        of them a bus; else made for this chunk."""
        if line.folded is not None:
            return line.folded
        assert line.response is not None, "a line's filter is kept or its place's is"
        folded = _folded(line.response.spectrum, line.response.mix, line.reached)
        if self._folded_bytes + folded.nbytes <= FOLDED_BYTES:
            line.folded, line.response = folded, None
            self._folded_bytes += folded.nbytes
        return folded

    def _end(self, key: tuple) -> None:
        """The line of ``key`` is done: it goes, and its folded filter's bytes are free."""
        line = self._lines.pop(key)
        if line.response is None and line.folded is not None:  # kept, so counted
            self._folded_bytes -= line.folded.nbytes

    def _filter(self, point, face) -> _Filter:
        found = self._filters.get((point, face))
        if found is None:
            if self._make_filter is not None:
                found = self._make_filter(point, face)
            else:
                found = _Filter(self._impulse(point, face))
            self._filters.put((point, face), found, found.nbytes)
        return found

    def _impulse(self, point, face) -> _Impulse:
        found = self._impulses.get((point, face))
        if found is None:
            assert self.spatialiser is not None, "lines without a filter maker hear paths"
            found = _Impulse(self.spatialiser, point, self.listener, face)
            self._impulses.put((point, face), found, found.nbytes)
        return found

    def chunk(self) -> np.ndarray:
        """The next chunk of every line, mixed: ``(next_size(), channels)`` (zeros where no
        line sounds)."""
        size = self.next_size()
        out = self.sounding_chunk()
        return np.zeros((size, self.channels), dtype=np.float32) if out is None else out

    def sounding_chunk(self) -> np.ndarray | None:
        """``chunk()``, or None where no line sounds in it (no block of zeros is made).

        The lines of one FFT size are transformed together, with the next chunk's when its
        notes are all in."""
        size, following = self.next_size(), self.next_size(1)
        at = self.next_chunk
        self.next_chunk += size
        self._heard += 1
        kept, self._kept = self._kept, []
        if kept:  # heard with the chunk before: only its lines' bookkeeping
            for key, line in list(self._lines.items()):
                line.forget(at, size)
                if line.done(at + size, following):
                    self._end(key)
            return kept[0]
        sounding = self._sounding(at, size, following)
        end = at + size + following  # after the next chunk
        if not (sounding and size == following == self.size and self._latest >= end + GUARD):
            return self._mixed([(sounding, size)])[0]
        # every note added later starts after the next chunk's last frame it hears (a
        # line's first output frame is at most GUARD before its onset)
        ahead = self._sounding(at + size, following, None)
        if not ahead or not _in_order(ahead, sounding):
            return self._mixed([(sounding, size)])[0]
        out, kept_next = self._mixed([(sounding, size), (ahead, following)])
        self._kept, self._kept_end = [kept_next], end
        return out

    def _sounding(self, at: int, size: int, following: int | None) -> dict:
        """The lines sounding in the chunk of ``size`` frames from ``at``, with their parts,
        per FFT size; with the ``following`` chunk's size, the lines forget what no later
        chunk hears and those done go."""
        sounding: dict[int, list[tuple[_Line, list[tuple[int, np.ndarray]]]]] = {}
        for key, line in list(self._lines.items()):
            segment = line.segment(at, size, forget=following is not None)
            if segment is not None:
                sounding.setdefault(line.n_fft, []).append((line, segment))
            if following is not None and line.done(at + size, following):
                self._end(key)
        return sounding

    def _mixed(self, chunks: list[tuple[dict, int]]) -> list[np.ndarray | None]:
        """Each chunk of ``chunks`` ((sounding, size), all of one size when more than one),
        mixed (None where no line sounds): the forward FFTs of one FFT size in one call, and
        so the inverse ones."""
        channels = self.channels
        outs: list[np.ndarray | None] = [None] * len(chunks)
        n_ffts = dict.fromkeys(n_fft for sounding, _ in chunks for n_fft in sounding)
        for n_fft in n_ffts:
            groups = [sounding.get(n_fft) for sounding, _ in chunks]
            spectra = self._spectra(n_fft, [m for members in groups if members for m in members])
            total = np.empty((len(chunks) * channels, n_fft // 2 + 1), dtype=np.complex64)
            used = self._summed(groups, spectra, total)
            # the last ``size`` outputs are free of the circular wrap (size ≤ n_fft − taps + 1)
            whole = [index for index, rows in enumerate(used)
                     if rows is not None and outs[index] is None and len(rows) == channels]
            # stereo's together (2 + 2 rows, one pass of the lanes), others one by one (16
            # channels fill four lanes already)
            for batch in ([whole] if channels == 2 else [[index] for index in whole]):
                if not batch:
                    continue
                # inverted along the columns of a (frames, channels) array: no interleaving
                # after (stereo: 1.20 → 1.11 ms a chunk, 16 channels 6.0 → 5.4, measured)
                size = chunks[batch[0]][1]
                signals = scipy.fft.irfft(
                    total[batch[0] * channels:(batch[-1] + 1) * channels].T, n_fft,
                    axis=0)[n_fft - size:]
                if len(batch) == 1:  # from zero, as summed into zeros: never a −0
                    outs[batch[0]] = np.add(signals, _ZERO, out=signals)
                    continue
                # each chunk its own array, a frame's two samples one complex: a strided
                # (frames, 2) view costs numpy a loop of two a frame wherever it is read
                # (57 344 frames: 0.8 ms to copy or add, where this takes 0.04)
                frames = signals.view(np.complex64)
                for at, index in enumerate(batch):
                    outs[index] = np.add(frames[:, at], _ZERO_PAIR).view(np.float32).reshape(
                        size, channels)
            rest = [(index, rows) for index, rows in enumerate(used)
                    if rows is not None and index not in whole]
            if not rest:
                continue
            signals = scipy.fft.irfft(np.concatenate(
                [total[index * channels + rows] for index, rows in rest]), n_fft, axis=1)
            at = 0
            for index, rows in rest:
                size = chunks[index][1]
                out = outs[index]
                if out is None:
                    out = outs[index] = np.zeros((size, channels), dtype=np.float32)
                for channel in rows:  # a column at a time (16: 2.5 for 4.8 ms)
                    out[:, channel] += signals[at, n_fft - size:]
                    at += 1
        return outs

    def _spectra(self, n_fft: int, members) -> np.ndarray:
        """The spectra of the lines' segments, one row each (and rows of zeros to fill
        pocketfft's lanes)."""
        # a buffer kept per bus saved only ~3 µs a row (of ~300 for its FFT) for up to 2 MiB
        # held per bus (s18's peak RSS +10 MiB, measured): made afresh, as before
        segments = np.empty((_padded(len(members)), n_fft), dtype=np.float32)
        for row, (_, parts) in zip(segments, members, strict=False):
            # from zero, in the notes' order: the first part is 0 + part (as added to zeros:
            # a −0 made +0), and only the frames it leaves are zeroed
            offset, part = parts[0]
            row[:offset] = 0.0
            np.add(part, _ZERO, out=row[offset:offset + len(part)])
            row[offset + len(part):] = 0.0
            for offset, part in parts[1:]:
                row[offset:offset + len(part)] += part
        segments[len(members):] = 0.0
        return scipy.fft.rfft(segments, axis=1)

    def _summed(self, groups, spectra: np.ndarray,
                total: np.ndarray) -> list[np.ndarray | None]:
        """Per chunk of ``groups`` (its lines of one FFT size, or None), the output channels
        its lines sound in; its rows of ``total`` (chunks × channels, n_fft // 2 + 1) made
        the sum of their filtered spectra per channel (unused channels: any values).

        The inverse FFT is linear and every line of this size keeps the same span of it, so
        the lines' filtered spectra are summed per output channel first: one inverse FFT per
        channel, not one per line and path. A channel's sum starts as its first line's
        product, not from zero (0 + x is x but for the sign of a zero, which the output's
        own sum from zero settles). A line sounding in both chunks heard together is
        multiplied into both while its filter's path is in the cache (its filter is read
        from memory once: s18's lines, 13 % of their CPU was their filters' products), each
        chunk's lines summed in that chunk's order (the lines', as made). A line's channels
        that its paths do not reach (``_reached``) add nothing and are not multiplied; one
        that no line of the chunk reaches is zeros, so that a chunk's channels are inverted
        together as before."""
        channels = self.channels
        used = np.zeros((len(groups), channels), dtype=bool)  # in its lines' channels
        summed = np.zeros_like(used)  # a line's product is in it
        heard: dict[int, list] = {}  # id(line): (line, (chunk, spectrum), …), as made
        row = 0
        for index, members in enumerate(groups):
            for line, _ in members or ():
                heard.setdefault(id(line), [line]).append((index, spectra[row]))
                row += 1
        product = np.empty(total.shape[1], dtype=np.complex64)
        for line, *chunks in sorted(heard.values(), key=lambda found: found[0].serial):
            folded = self.folded(line)
            lo = line.column
            for index, _ in chunks:
                used[index, lo:lo + line.rows] = True
            for row, channel in zip(line.folded_rows, lo + line.reached, strict=True):
                filtered = folded[row]
                for index, spectrum in chunks:
                    into = total[index * channels + channel]
                    if summed[index, channel]:
                        np.multiply(filtered, spectrum, out=product)
                        np.add(into, product, out=into)
                    else:  # the first line in this channel: its product
                        np.multiply(filtered, spectrum, out=into)
                        summed[index, channel] = True
        total[np.flatnonzero(used & ~summed)] = 0.0  # rows in chunk-major order, as ``used``
        return [np.flatnonzero(taken) if members else None
                for taken, members in zip(used, groups, strict=True)]


def _padded(rows: int) -> int:
    """Rows to transform for ``rows``: pocketfft transforms ``LANES`` rows at once (SIMD),
    four at 65 536 points in the time of ~1.8 alone, so rows left over one by one are made
    a lane's with rows of zeros when there are two or three (a group of three lines:
    1.76 → 1.04 ms; of two: 1.11 → 0.97, of six 2.47 → 2.19, measured). A lane computes as
    a row alone: the same bits."""
    return rows + (-rows % LANES if rows % LANES >= 2 else 0)

def _in_order(ahead: dict, sounding: dict) -> bool:
    """Whether ``ahead``'s FFT sizes come in the order ``_mixed`` takes them in (``sounding``'s,
    then the others): each chunk's sizes are added into its output in its own order (most
    chunks have one)."""
    order = [n_fft for n_fft in dict.fromkeys([*sounding, *ahead]) if n_fft in ahead]
    return order == list(ahead)
