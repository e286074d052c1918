"""Large files written and read past the kernel's page cache (``O_DIRECT``).

A render writes gigabytes once (pass 1's raw float32 file, the output file) and reads the
raw file once. Through the page cache every byte is first copied into a page of the
kernel's, and a page the kernel has not used lately can cost far more than the copy: on a
virtual machine that hands free memory back to its host (virtio-balloon free page
reporting) each one is new to the guest. Measured on the project's 2-core machine with
``dd`` (3 GB): written through the cache 12 s of system time, written direct 0.2 s; read
through the cache where its pages were not already, 5.0 s, direct 0.1 s
(``bench/bench_directio.py``). Direct I/O moves the bytes between the
process's own (reused) buffers and the disk.

Direct I/O wants the file offset, the length and the buffer aligned (:data:`ALIGN`).
:class:`DirectWriter` stages what it is given in an aligned buffer and writes it a buffer
at a time; :func:`read_at` reads the aligned stretch around what is asked for. Where
``O_DIRECT`` is missing (not Linux) or refused (a file system without it, such as an old
tmpfs), the same calls read and write through the cache: the bytes are the same.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

import numpy as np

__all__ = ["ALIGN", "MIN_STAGE_BYTES", "STAGE_BYTES", "DirectFile", "DirectWriter",
           "is_direct", "read_at"]

#: Alignment of offsets, lengths and buffers (the largest logical block size in use).
ALIGN = 4096
#: Bytes a writer stages before a write to the disk, and a bulk read asks for at once. The
#: kernel hands the disk requests of up to its ``max_sectors_kb`` (4 MiB on the project's
#: virtual disk) and sends a longer one as several side by side. Pass 2 reads the raw file
#: while it writes the output, and in 1 MiB writes and reads of four blocks the writer waited
#: on each write in turn: a whole rite's pass 2 (``bench/bench_mastering.py --pass2``, the
#: limiter on) took 9.9–10.7 s in stereo and 24.1–26.5 s in 5.1, and 7.5–8.3 s and
#: 19.1–20.6 s in 8 MiB (the same bytes; `dd` alone wrote as fast in 1 MiB as in 8 MiB: it
#: is the reads beside the writes that queue).
STAGE_BYTES = 8 << 20
#: What a writer stages at least where several share :data:`STAGE_BYTES` (a render's stems).
MIN_STAGE_BYTES = 1 << 20
_O_DIRECT = getattr(os, "O_DIRECT", 0)


def aligned_bytes(count: int) -> np.ndarray:
    """A uint8 array of ``count`` bytes whose first byte sits on an :data:`ALIGN` boundary."""
    spare = np.empty(count + ALIGN, dtype=np.uint8)
    skip = -spare.ctypes.data % ALIGN
    return spare[skip:skip + count]


def _open(path: str | Path, flags: int) -> tuple[int, bool]:
    """``os.open`` with ``O_DIRECT`` if it can be had; (fd, whether it is direct)."""
    if _O_DIRECT:
        with contextlib.suppress(OSError):
            return os.open(path, flags | _O_DIRECT, 0o666), True
    return os.open(path, flags, 0o666), False


def is_direct(fd: int) -> bool:
    """Whether the open file ``fd`` bypasses the page cache."""
    return bool(_O_DIRECT and fcntl.fcntl(fd, fcntl.F_GETFL) & _O_DIRECT)


def _through_cache(fd: int) -> None:
    """Turn ``O_DIRECT`` off on ``fd`` (a file system that opens it but refuses its writes)."""
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_O_DIRECT)


def _pwrite(fd: int, chunk: np.ndarray, offset: int, name: str) -> None:
    """All of the aligned ``chunk`` at ``offset``; through the cache from the first write
    the file system refuses direct (EINVAL); errors name the file."""
    done = 0
    while done < len(chunk):
        try:
            done += os.pwrite(fd, chunk[done:].data, offset + done)
        except OSError as error:
            if error.errno != errno.EINVAL or not is_direct(fd):
                raise OSError(error.errno, error.strerror, name) from None
            _through_cache(fd)


class DirectWriter:
    """A binary file written mostly front to back, past the page cache.

    Bytes are staged in an aligned buffer and written ``stage_bytes`` at a time; a
    write before what is staged (a header filled in at the end) goes through the cache.
    ``close`` writes the staged rest padded to :data:`ALIGN` and cuts the file to its
    length. It has what libsndfile's virtual I/O asks of a file (``write``, ``seek``,
    ``tell``, ``read``), so soundfile can write through it.
    """

    def __init__(self, path: str | Path, stage_bytes: int = STAGE_BYTES) -> None:
        self.name = str(path)
        self._fd, _ = _open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        self._stage = aligned_bytes(max(ALIGN, stage_bytes - stage_bytes % ALIGN))
        self._base = 0  # file offset of the stage's first byte (aligned)
        self._staged = 0  # bytes of the stage in use
        self._pos = self._size = 0
        self._plain: int | None = None  # for writes before the stage

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        count = len(view)
        before = min(count, max(0, self._base - self._pos))
        written = 0
        while written < before:
            try:
                written += os.pwrite(self._plain_fd(), view[written:before],
                                     self._pos + written)
            except OSError as error:  # named, as the direct writes' are
                raise OSError(error.errno, error.strerror, self.name) from None
        done = before
        while done < count:
            at = self._pos + done - self._base
            if at > self._staged:  # a seek past the end: the gap reads as zeros
                gap = min(at, len(self._stage))
                self._stage[self._staged:gap] = 0
                self._staged = gap
            if at >= len(self._stage):
                self._flush()
                continue
            take = min(count - done, len(self._stage) - at)
            self._stage[at:at + take] = np.frombuffer(view[done:done + take], dtype=np.uint8)
            done += take
            self._staged = max(self._staged, at + take)
        self._pos += count
        self._size = max(self._size, self._pos)
        return count

    def _flush(self) -> None:
        """Write the stage's whole aligned part and keep the rest at its front."""
        whole = self._staged - self._staged % ALIGN
        self._write_direct(self._stage[:whole], self._base)
        rest = self._staged - whole
        self._stage[:rest] = self._stage[whole:self._staged]
        self._base += whole
        self._staged = rest

    def _write_direct(self, chunk: np.ndarray, offset: int) -> None:
        _pwrite(self._fd, chunk, offset, self.name)

    def _plain_fd(self) -> int:
        if self._plain is None:
            self._plain = os.open(self.name, os.O_WRONLY)
        return self._plain

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        start = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}[whence]
        if start + offset < 0:
            raise OSError(errno.EINVAL, "negative seek position", self.name)
        self._pos = start + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def fileno(self) -> int:
        return self._fd

    def read(self, count: int = -1) -> bytes:
        """What has been written at the position (staged or on the disk)."""
        count = self._size - self._pos if count < 0 else min(count, self._size - self._pos)
        out = bytearray(max(0, count))
        end = self._pos + len(out)
        if self._pos < self._base:
            got = read_at(self.name, self._pos, min(end, self._base) - self._pos)
            out[:len(got)] = got.tobytes()
        lo, hi = max(self._pos, self._base), min(end, self._base + self._staged)
        if lo < hi:
            out[lo - self._pos:hi - self._pos] = self._stage[lo - self._base:hi - self._base].data
        self._pos = end
        return bytes(out)

    def close(self) -> None:
        """Write what is staged and cut the file to the bytes written."""
        if self._fd < 0:
            return
        try:
            if self._staged:
                padded = -(-self._staged // ALIGN) * ALIGN
                self._stage[self._staged:padded] = 0
                self._write_direct(self._stage[:padded], self._base)
            os.ftruncate(self._fd, self._size)
        finally:
            os.close(self._fd)
            self._fd = -1
            if self._plain is not None:
                os.close(self._plain)
                self._plain = None

    def __str__(self) -> str:
        return self.name

    def __enter__(self) -> DirectWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def read_at(path: str | Path, offset: int, count: int) -> np.ndarray:
    """Up to ``count`` bytes of ``path`` from ``offset`` (fewer at its end), read past the
    page cache: the aligned stretch around them, as a uint8 view into it."""
    fd, _ = _open(path, os.O_RDONLY)
    try:
        return _pread(fd, offset, count)
    finally:
        os.close(fd)


def _pread(fd: int, offset: int, count: int) -> np.ndarray:
    lo = offset - offset % ALIGN
    buffer = aligned_bytes(-(-(offset + count) // ALIGN) * ALIGN - lo)
    got = 0
    while got < len(buffer):
        try:
            step = os.preadv(fd, [buffer[got:].data], lo + got)
        except OSError as error:
            if error.errno != errno.EINVAL or not is_direct(fd):
                raise
            _through_cache(fd)
            continue
        if not step:
            break
        got += step
    return buffer[offset - lo:max(offset - lo, min(got, offset - lo + count))]


class DirectFile:
    """A new file of ``size`` bytes, zeros until written, read and written at any offset past
    the page cache. A write that does not start or end on :data:`ALIGN` reads the page it
    shares with its neighbours first and writes it whole; ``close`` cuts what a last page's
    padding added."""

    def __init__(self, path: str | Path, size: int) -> None:
        self.name, self.size = str(path), size
        self._fd, _ = _open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL)
        os.ftruncate(self._fd, size)

    def read(self, offset: int, count: int) -> np.ndarray:
        """Up to ``count`` bytes from ``offset`` (fewer at the file's end)."""
        return _pread(self._fd, offset, max(0, min(count, self.size - offset)))

    def fileno(self) -> int:
        return self._fd

    def write(self, offset: int, data) -> None:
        view = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        lo, end = offset - offset % ALIGN, offset + len(view)
        hi = -(-end // ALIGN) * ALIGN
        buffer = aligned_bytes(hi - lo)
        if offset != lo:
            buffer[:ALIGN] = self._page(lo)
        if end != hi and (hi - ALIGN != lo or offset == lo):
            buffer[-ALIGN:] = self._page(hi - ALIGN)
        buffer[offset - lo:end - lo] = view
        _pwrite(self._fd, buffer, lo, self.name)

    def _page(self, at: int) -> np.ndarray:
        """The page at ``at`` as it is on the disk, zeros past the file's end."""
        page = np.zeros(ALIGN, dtype=np.uint8)
        got = self.read(at, ALIGN)
        page[:len(got)] = got
        return page

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.ftruncate(self._fd, self.size)
            finally:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> DirectFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
