"""Audio files: streaming writer (WAV 16/24-bit/float, FLAC) with ritual markers.

Files are written block by block through soundfile into a temporary file
beside the destination and renamed only when complete
(``soundscape.fileio.atomic_path``), so an interrupted render leaves nothing. soundfile
writes through a ``directio.DirectWriter`` (its virtual I/O), past the page cache.

Markers go where a DAW looks for them: in WAV, a ``cue `` chunk with one cue
point per marker and a ``LIST``/``adtl`` chunk of ``labl`` names (UTF-8); in
FLAC, Vorbis comments ``CHAPTERnnn=HH:MM:SS.mmm`` and ``CHAPTERnnnNAME=label``
(the chapter convention ffmpeg and players read); for every format also a
sidecar ``<file>.markers.txt`` in Audacity's label-track format (start, end,
label, tab-separated), which Audacity, Reaper and others import.

Channel layouts: WAVs are WAVE_FORMAT_EXTENSIBLE with the layout's
``dwChannelMask`` (0, "no speaker positions", for ambisonics and custom rings);
FLACs whose layout is not the one FLAC implies for their channel count carry
the ``WAVEFORMATEXTENSIBLE_CHANNEL_MASK`` comment (FLAC holds at most 8 channels);
docs/sources.md A7.8.
"""

from __future__ import annotations

import contextlib
import functools
import struct
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import mutagen.flac
import numpy as np
import soundfile

from soundscape.errors import RenderError
from soundscape.fileio import atomic_path, write_text
from soundscape.sound.directio import STAGE_BYTES, DirectWriter

__all__ = ["FLAC_MAX_CHANNELS", "FORMATS", "SUBTYPES", "BlockWriter", "Cue", "SampleWriter",
           "append_wav_cues", "check_channels", "open_writer", "pack_samples",
           "read_wav_channel_mask", "read_wav_cues", "sample_writer", "set_wav_channel_mask",
           "subtype_for", "write_audio", "write_sidecar"]

FORMATS = ("wav", "flac")
_RIFF_LIMIT = 0xFFFFFFFF - (1 << 24)  # bytes of audio a RIFF WAV can hold, with room for chunks
#: ``--bits`` → soundfile subtype per format.
SUBTYPES = {("wav", "16"): "PCM_16", ("wav", "24"): "PCM_24", ("wav", "float"): "FLOAT",
            ("flac", "16"): "PCM_16", ("flac", "24"): "PCM_24"}
FLAC_MAX_CHANNELS = 8
# The layout FLAC implies for 1…8 channels (FLAC format, "Channels"), as speaker masks.
_FLAC_IMPLIED_MASKS = (0x4, 0x3, 0x7, 0x33, 0x37, 0x3F, 0x70F, 0x63F)


@dataclass(frozen=True, slots=True)
class Cue:
    """A marker at a frame of the file.

    Parameters
    ----------
    frame : int >= 0, samples
    label : str
    """

    frame: int
    label: str


def subtype_for(file_format: str, bits: str) -> str:
    """The soundfile subtype for a format and ``--bits`` (16, 24, float)."""
    try:
        return SUBTYPES[(file_format, str(bits))]
    except KeyError:
        accepted = ", ".join(f"{f}/{b}" for f, b in SUBTYPES)
        raise RenderError(f"format={file_format!r} bits={bits!r}, accepted: {accepted}") from None


def check_channels(file_format: str, channels: int) -> None:
    """Refuse a channel count the format cannot hold (FLAC: 1 to 8)."""
    if file_format == "flac" and channels > FLAC_MAX_CHANNELS:
        raise RenderError(f"format=flac holds 1 to {FLAC_MAX_CHANNELS} channels; this layout "
                          f"has {channels}: use wav")


@contextlib.contextmanager
def open_writer(path: str | Path, *, sample_rate: int, channels: int, file_format: str,
                bits: str, cues: Sequence[Cue] = (), frames: int = 0,
                channel_mask: int | None = None,
                stage_bytes: int = STAGE_BYTES) -> Iterator[soundfile.SoundFile]:
    """Open a streaming writer; on clean exit the file (with its cues) is renamed into place.

    Parameters
    ----------
    path : path
        Destination.
    sample_rate : int, Hz
    channels : int
    file_format : str
        ``wav`` or ``flac``.
    bits : str
        ``16``, ``24`` or ``float`` (WAV only).
    cues : sequence of Cue
        Written into a WAV as cue and label chunks.
    frames : int, samples
        Expected length. A WAV that would pass 4 GiB is written as RF64 (the
        64-bit WAV) instead, without cue chunks (the sidecar still has them).
    channel_mask : int or None
        WAVE_FORMAT_EXTENSIBLE speaker mask of the channels (``panning.wav_channel_mask``);
        None writes a plain WAV and no FLAC mask comment.
    stage_bytes : int
        Bytes staged before each write to the disk (``directio.DirectWriter``): several
        files written side by side share ``directio.STAGE_BYTES``.

    Yields
    ------
    SampleWriter
        Call ``.write(block)`` with float arrays ``(frames, channels)`` in [-1, 1], or
        ``.write(block, scale)`` to write them times ``scale``.
    """
    subtype = subtype_for(file_format, bits)
    check_channels(file_format, channels)
    width = {"PCM_16": 2, "PCM_24": 3, "FLOAT": 4}[subtype]
    major = "WAVEX" if file_format == "wav" and channel_mask is not None else file_format.upper()
    if file_format == "wav" and frames * channels * width > _RIFF_LIMIT:
        major = "RF64"
    with atomic_path(path) as tmp:
        with _HeldErrors(tmp, stage_bytes) as file, _closed_unsynced(soundfile.SoundFile(
                file, "w", samplerate=sample_rate, channels=channels, subtype=subtype,
                format=major)) as out, sample_writer(out, subtype) as writer:
            yield writer
        if file_format == "wav" and channel_mask is not None:
            set_wav_channel_mask(tmp, channel_mask)
        if major in ("WAV", "WAVEX") and cues:
            append_wav_cues(tmp, cues)
        if file_format == "flac":
            _tag_flac(tmp, cues, sample_rate=sample_rate, channels=channels,
                      channel_mask=channel_mask)


def write_audio(path: str | Path, audio: np.ndarray, sample_rate: int, *, bits: str,
                file_format: str = "wav", channel_mask: int | None = None) -> Path:
    """Write ``audio`` (frames, or frames × channels) whole through :func:`open_writer`:
    atomically, the same bytes every time (no PEAK chunk's timestamp), a full disk an
    ``OSError`` naming ``path``, the layout's ``channel_mask`` in the WAV."""
    block = np.asarray(audio, dtype=np.float32)
    block = block[:, None] if block.ndim == 1 else block
    with open_writer(path, sample_rate=sample_rate, channels=block.shape[1],
                     file_format=file_format, bits=bits, frames=len(block),
                     channel_mask=channel_mask) as writer:
        writer.write(block)
    return Path(path)


@contextlib.contextmanager
def _closed_unsynced(out: soundfile.SoundFile) -> Iterator[soundfile.SoundFile]:
    """``out``, closed on exit by libsndfile's ``sf_close`` alone. ``SoundFile.close`` first
    calls ``sf_write_sync``, an ``fsync`` that waits until the whole file is on the disk
    (4.9 s for a whole rite's 2.6 GB stereo WAV, measured): no other file the project
    writes is forced out, and the rename (``atomic_path``) already keeps a failed run from
    leaving a half-written file."""
    try:
        yield out
    finally:
        try:
            handle, close = out._file, soundfile._snd.sf_close
        except AttributeError:  # pragma: no cover - a soundfile without them
            out.close()
        else:
            if handle is not None:
                out._file = None
                if close(handle):
                    _raise_held(out)
                    raise RenderError(f"{out.name}: closing failed (is the disk full?)")


class _HeldErrors(DirectWriter):
    """The file libsndfile writes through (its virtual I/O): an error is held for the caller
    and libsndfile told that nothing was written. Raised inside the callback, cffi would
    print it and give libsndfile 0 all the same, and the caller would know only that bytes
    went missing."""

    error: OSError | None = None

    def write(self, data) -> int:
        if self.error is not None:
            return 0
        try:
            return super().write(data)
        except OSError as error:
            self.error = error
            return 0


def _raise_held(out: soundfile.SoundFile) -> None:
    """Raise the error the file under ``out`` held back, if it holds one (a full disk)."""
    if isinstance(out.name, _HeldErrors) and out.name.error is not None:
        raise out.name.error


class BlockWriter:
    """Converts and writes blocks on background threads, beside the caller's work.

    numpy (on large arrays), file writes and cffi calls release the GIL, so the
    conversion and the disk run on other cores: with a ``convert``, ``converters``
    threads convert the next blocks while another writes this one, in order (packing
    24-bit samples and the kernel's copy of a whole rite each take seconds). The
    caller must not change a block after handing it over. At most two blocks more
    than there are converters wait; errors surface at the next ``write`` or at the end.

    Parameters
    ----------
    sink : callable
        Writes one converted block.
    convert : callable or None
        Block → what ``sink`` takes; None hands the block over as it is.
    converters : int >= 1
        Threads converting blocks side by side (each ``convert`` call on its own block).
    name : str
        Its threads' name (``name``, ``name-converter``), for profiles.
    """

    _QUEUE = 3

    def __init__(self, sink: Callable[[Any], object],
                 convert: Callable[[Any], Any] | None = None, *, converters: int = 1,
                 name: str = "audio-writer") -> None:
        self._sink, self._convert = sink, convert
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._converter = (ThreadPoolExecutor(converters, thread_name_prefix=f"{name}-converter")
                           if convert is not None else None)
        self._queue = self._QUEUE + (converters - 1 if convert is not None else 0)
        self._pending: deque[Future] = deque()

    def write(self, block) -> None:
        """Queue ``block`` (an array, or whatever ``convert`` or ``sink`` takes) to be
        converted and written."""
        while len(self._pending) >= self._queue:
            self._pending.popleft().result()
        if self._converter is None or self._convert is None:
            self._pending.append(self._pool.submit(self._put, block))
        else:  # written in order: one writing thread, each waiting for its conversion
            converted = self._converter.submit(self._convert, block)
            self._pending.append(self._pool.submit(lambda: self._put(converted.result())))

    def _put(self, converted) -> None:
        self._sink(converted)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type | None, *_: object) -> None:
        try:
            while self._pending:
                future = self._pending.popleft()
                if kind is None:
                    future.result()
                else:  # already failing (or Ctrl-C): wait, but let that error through
                    future.exception()
        finally:
            self._pool.shutdown(cancel_futures=True)
            if self._converter is not None:
                self._converter.shutdown(cancel_futures=True)


class SampleWriter(BlockWriter):
    """A ``BlockWriter`` of float samples: ``write(block, scale)`` writes ``block × scale``.

    The product is taken in float64 by the conversion, on its thread, in the same pass
    as the conversion's own scaling: a float32 block read back from a file need not be
    scaled first (a pass over the block less), and the samples are those of scaling it
    in float64 and then converting (the conversions scale by powers of two, which are
    exact). Two threads convert (``CONVERTERS``): with one, packing a whole rite's
    24-bit samples was the slowest thread of mastering's pass 2 (py-spy), the others
    waiting on it."""

    CONVERTERS = 2

    def __init__(self, sink: Callable[[Any], object],
                 convert: Callable[[Any], Any] | None = None, *,
                 converters: int = CONVERTERS) -> None:
        super().__init__(sink, convert, converters=converters)

    def write(self, block: np.ndarray, scale: float = 1.0) -> None:
        super().write((block, scale))


def sample_writer(out: soundfile.SoundFile, subtype: str) -> SampleWriter:
    """A ``SampleWriter`` of float samples in [-1, 1] to an open ``soundfile.SoundFile``.

    Integer samples are rounded to the nearest step and clipped to full scale
    (libsndfile's own float conversion rounds WAV samples down, a −½ step bias;
    its FLAC conversion rounds to nearest, like this). For WAV and RF64 the
    samples are packed into the file's little-endian bytes by numpy and written
    with libsndfile's ``sf_write_raw`` (libsndfile still writes the header,
    sizes and chunks): numpy packs 24-bit samples several times faster than
    libsndfile converts floats, which matters for 16-channel files. Float WAVs
    are written without libsndfile's PEAK chunk, whose timestamp would make the
    same render give different bytes (a float RF64, past 4 GiB, goes through
    soundfile's ``write`` and may carry one). soundfile reaches these functions
    only through its private ``_snd``/``_ffi``; without them, samples go
    through the public ``write``.
    """
    # libsndfile writes an RF64 PEAK chunk regardless, with peaks only its own write tracks
    packable = out.format in ("WAV", "WAVEX") or (out.format == "RF64" and subtype != "FLOAT")
    raw = _raw_writer(out) if packable else None
    if raw is None:
        convert = _CONVERTERS[subtype]
        return SampleWriter(out.write, lambda scaled: convert(*scaled))
    if subtype == "FLOAT":
        soundfile._snd.sf_command(out._file, _SFC_SET_ADD_PEAK_CHUNK, soundfile._ffi.NULL,
                                  _SF_FALSE)
    pack = _PACKERS[subtype]
    return SampleWriter(raw, lambda scaled: pack(*scaled))


def _raw_writer(out: soundfile.SoundFile) -> Callable[[np.ndarray], None] | None:
    """A writer of sample bytes through libsndfile's ``sf_write_raw``, if reachable."""
    try:
        snd, ffi, handle = soundfile._snd, soundfile._ffi, out._file
        write_raw, _ = snd.sf_write_raw, snd.sf_command  # sample_writer needs both
    except AttributeError:
        return None

    def write(data: np.ndarray) -> None:
        written = write_raw(handle, ffi.from_buffer(data), data.nbytes)
        if written != data.nbytes:
            _raise_held(out)
            raise RenderError(f"{out.name}: wrote {written} of {data.nbytes} bytes "
                              f"({snd.sf_strerror(handle)!r}); is the disk full?")
    return write


def _steps(block: np.ndarray, bits: int, scale: float = 1.0) -> np.ndarray:
    """Samples times ``scale`` as whole ``bits``-bit steps (float), rounded and clipped to
    full scale (float64, or the block's float type when ``scale`` is 1)."""
    if not np.issubdtype(block.dtype, np.floating):
        block = block.astype(float)
    full = 2.0 ** (bits - 1)
    y = (block * block.dtype.type(full) if scale == 1.0 else
         np.multiply(block, scale * full, dtype=np.float64))
    np.clip(y, -full, full - 1, out=y)
    return np.rint(y, out=y)


def _to_int(block: np.ndarray, bits: int, dtype: type, scale: float = 1.0) -> np.ndarray:
    """Whole steps left-justified in ``dtype``: libsndfile takes integers as full-scale
    values of their own width (an int32 written to a 24-bit file keeps its top 24 bits)."""
    y = _steps(block, bits, scale)
    shift = 8 * np.dtype(dtype).itemsize - bits
    if shift:
        y *= y.dtype.type(2**shift)
    return y.astype(dtype)


#: Added to a float64 whole number under 2^31 in size, leaves it as the two's-complement
#: int32 in the low 4 bytes of the float (1.5 × 2^52: every sum has a unit step).
_INT_IN_FLOAT = 1.5 * 2.0**52


def _pack24(block: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``block × scale`` as little-endian 3-byte samples, interleaved, as a ``(samples, 3)``
    uint8 array.

    Rounded and clipped as ``_steps`` does (IEEE round-half-even, as ``np.rint``), in
    float64, where the rounding is one addition (``_INT_IN_FLOAT``) that also leaves the
    integer's bytes in place: no ``rint`` and no cast to int32 (two passes of four). Each
    float's low 3 bytes are then moved out in one pass (``_put_low_bytes``). A long block
    goes in pieces of ``_PACK_SAMPLES`` (its float64 pieces stay in the core's cache). On
    a big-endian machine, the plain way."""
    if sys.byteorder != "little":
        four = _steps(block, 24, scale).astype("<i4").reshape(-1).view(np.uint8).reshape(-1, 4)
        return np.ascontiguousarray(four[:, :3])
    frames = np.asarray(block)
    frames = frames.reshape(len(frames), -1) if frames.ndim != 2 else frames
    per = max(1, frames.shape[1])
    packed = np.empty(3 * frames.size + 5, dtype=np.uint8)  # + room for the last spill
    full = 2.0**23
    step = max(1, _PACK_SAMPLES // per)
    for row in range(0, len(frames), step):
        y = np.multiply(frames[row:row + step], scale * full, dtype=np.float64)
        np.clip(y, -full, full - 1, out=y)
        y += _INT_IN_FLOAT
        _put_low_bytes(packed, row * per, y.reshape(-1).view(np.uint64))
    return packed[:3 * frames.size].reshape(-1, 3)


#: Samples ``_pack24`` converts at a time (a stereo second's float64 is 768 KiB; a longer
#: block in one go took 1.6 times as long a sample).
_PACK_SAMPLES = 1 << 17


def _put_low_bytes(packed: np.ndarray, first: int, words: np.ndarray) -> None:
    """The low 3 bytes of each little-endian uint64 of ``words`` into ``packed``, 3 bytes
    per word from word ``first`` on; up to 5 bytes after the last word's are overwritten.

    One copy of whole words into a view of ``packed`` whose items overlap (a stride of 3
    bytes): each word's store puts its low bytes in place and spills junk into the next
    item's, which that item's store, made after it, overwrites. It takes numpy's copy
    storing the items in order, which ``_stores_in_order`` checks once; if they were not,
    3 strided byte-column copies (2.2 times the time of the one copy on a block of stereo)."""
    if _stores_in_order():
        np.ndarray(len(words), np.uint64, packed, 3 * first, (3,))[...] = words
        return
    columns = words.view(np.uint8).reshape(-1, 8)
    for byte in range(3):
        packed[3 * first + byte:3 * (first + len(words)):3] = columns[:, byte]


@functools.cache
def _stores_in_order() -> bool:
    """Whether numpy's copy into overlapping items stores them first to last (``_low_bytes``
    needs it), tried once on words long enough for its vector loops."""
    words = np.random.default_rng(0).integers(0, 2**64 - 1, 4096, dtype=np.uint64,
                                              endpoint=True)
    packed = np.zeros(len(words) * 3 + 5, dtype=np.uint8)
    np.ndarray(len(words), np.uint64, packed, 0, (3,))[...] = words
    return bool(np.array_equal(packed[:-5].reshape(-1, 3),
                               words.view(np.uint8).reshape(-1, 8)[:, :3]))


def _scaled(block: np.ndarray, scale: float) -> np.ndarray:
    return block if scale == 1.0 else np.multiply(block, scale, dtype=np.float64)


#: Block, scale → what libsndfile's write (converters) or sf_write_raw (packers) takes.
_CONVERTERS = {
    "PCM_16": lambda block, scale: _to_int(block, 16, np.int16, scale),
    "PCM_24": lambda block, scale: _to_int(block, 24, np.int32, scale),
    "FLOAT": lambda block, scale: np.asarray(_scaled(block, scale), dtype=np.float32),
}
_PACKERS = {
    "PCM_16": lambda block, scale: _steps(block, 16, scale).astype("<i2"),
    "PCM_24": _pack24,
    "FLOAT": lambda block, scale: np.ascontiguousarray(_scaled(block, scale), dtype="<f4"),
}


def pack_samples(block: np.ndarray, bits: str, scale: float = 1.0) -> np.ndarray:
    """``block × scale`` as a WAV's little-endian sample bytes (``bits`` 16, 24 or float),
    rounded and clipped exactly as the files of a render are written (a stream's frames)."""
    return _PACKERS[SUBTYPES[("wav", str(bits))]](block, scale)


_SFC_SET_ADD_PEAK_CHUNK = 0x1050  # sndfile.h
_SF_FALSE = 0


def _fmt_offset(f) -> int:
    """File offset of the ``fmt `` chunk's body in an open RIFF/RF64 WAV."""
    header = f.read(12)
    if header[:4] not in (b"RIFF", b"RF64") or header[8:12] != b"WAVE":
        raise RenderError(f"{f.name}: not a RIFF or RF64 WAVE file")
    pos = 12
    while True:
        f.seek(pos)
        head = f.read(8)
        if len(head) < 8:
            raise RenderError(f"{f.name}: no fmt chunk")
        tag, size = head[:4], struct.unpack("<I", head[4:])[0]
        if tag == b"fmt ":
            return pos + 8
        pos += 8 + size + size % 2


def set_wav_channel_mask(path: str | Path, mask: int) -> None:
    """Write ``mask`` into the ``dwChannelMask`` of a WAVE_FORMAT_EXTENSIBLE file's fmt chunk
    (libsndfile writes a guess from the channel count: quad for four ambisonic channels)."""
    with open(path, "r+b") as f:
        body = _fmt_offset(f)
        f.seek(body)
        fmt = f.read(24)
        if struct.unpack("<H", fmt[:2])[0] != _WAVE_FORMAT_EXTENSIBLE:
            raise RenderError(f"{path}: not WAVE_FORMAT_EXTENSIBLE; cannot set a channel mask")
        f.seek(body + 20)
        f.write(struct.pack("<I", mask))


def read_wav_channel_mask(path: str | Path) -> int | None:
    """The ``dwChannelMask`` of a WAV, None for a plain (not extensible) one."""
    with open(path, "rb") as f:
        f.seek(_fmt_offset(f))
        fmt = f.read(24)
    if struct.unpack("<H", fmt[:2])[0] != _WAVE_FORMAT_EXTENSIBLE:
        return None
    return struct.unpack("<I", fmt[20:24])[0]


_WAVE_FORMAT_EXTENSIBLE = 0xFFFE


def _tag_flac(path: Path, cues: Sequence[Cue], *, sample_rate: int, channels: int,
              channel_mask: int | None) -> None:
    """Markers as CHAPTERnnn Vorbis comments, and the channel mask if FLAC does not imply it."""
    flac = mutagen.flac.FLAC(path)
    for i, cue in enumerate(cues, start=1):
        milliseconds = round(cue.frame * 1000 / sample_rate)
        hours, rest = divmod(milliseconds, 3_600_000)
        minutes, rest = divmod(rest, 60_000)
        flac[f"CHAPTER{i:03d}"] = f"{hours:02d}:{minutes:02d}:{rest / 1000:06.3f}"
        flac[f"CHAPTER{i:03d}NAME"] = cue.label
    if channel_mask is not None and channel_mask != _FLAC_IMPLIED_MASKS[channels - 1]:
        flac["WAVEFORMATEXTENSIBLE_CHANNEL_MASK"] = f"0x{channel_mask:04X}"
    flac.save()


def append_wav_cues(path: str | Path, cues: Sequence[Cue]) -> None:
    """Append ``cue `` and ``LIST``/``adtl``/``labl`` chunks to a RIFF WAV and fix its size."""
    points = b"".join(struct.pack("<II4sIII", i + 1, cue.frame, b"data", 0, 0, cue.frame)
                      for i, cue in enumerate(cues))
    cue_chunk = _chunk(b"cue ", struct.pack("<I", len(cues)) + points)
    labels = b"".join(_chunk(b"labl", struct.pack("<I", i + 1) + cue.label.encode() + b"\0")
                      for i, cue in enumerate(cues))
    list_chunk = _chunk(b"LIST", b"adtl" + labels)
    with open(path, "r+b") as f:
        if f.read(4) != b"RIFF":
            raise RenderError(f"{path}: not a RIFF WAV file; cannot add cue chunks")
        end = f.seek(0, 2)
        if end % 2:
            f.write(b"\0")  # RIFF chunks start on even offsets
            end += 1
        f.write(cue_chunk + list_chunk)
        size = end + len(cue_chunk) + len(list_chunk) - 8
        f.seek(4)
        f.write(struct.pack("<I", size))


def _chunk(tag: bytes, body: bytes) -> bytes:
    pad = b"\0" if len(body) % 2 else b""
    return tag + struct.pack("<I", len(body)) + body + pad


def read_wav_cues(path: str | Path) -> list[Cue]:
    """Read back the cue points and their labels from a WAV (for checks and tools)."""
    data = Path(path).read_bytes()
    frames: dict[int, int] = {}
    labels: dict[int, str] = {}
    pos = 12
    while pos + 8 <= len(data):
        tag, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        body = data[pos + 8:pos + 8 + size]
        if tag == b"cue ":
            for k in range(struct.unpack("<I", body[:4])[0]):
                ident, position = struct.unpack("<II", body[4 + 24 * k:12 + 24 * k])
                frames[ident] = position
        elif tag == b"LIST" and body[:4] == b"adtl":
            sub = 4
            while sub + 8 <= len(body):
                sub_size = struct.unpack("<I", body[sub + 4:sub + 8])[0]
                if body[sub:sub + 4] == b"labl":
                    ident = struct.unpack("<I", body[sub + 8:sub + 12])[0]
                    labels[ident] = body[sub + 12:sub + 8 + sub_size].rstrip(b"\0").decode()
                sub += 8 + sub_size + sub_size % 2
        pos += 8 + size + size % 2
    return [Cue(frames[i], labels.get(i, "")) for i in sorted(frames)]


def write_sidecar(path: str | Path, cues: Sequence[Cue], *, sample_rate: int) -> Path:
    """Write ``<path>.markers.txt``: Audacity labels ``start<TAB>end<TAB>label`` in seconds."""
    lines = [f"{c.frame / sample_rate:.6f}\t{c.frame / sample_rate:.6f}\t"
             f"{' '.join(c.label.split())}" for c in cues]
    target = Path(path).with_name(Path(path).name + ".markers.txt")
    return write_text(target, "\n".join(lines) + ("\n" if lines else ""))

