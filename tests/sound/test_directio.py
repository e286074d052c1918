"""Files written and read past the page cache (soundscape.sound.directio)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import soundfile

from soundscape.sound import directio
from soundscape.sound.audiofile import open_writer
from tests.sound.pagecache import resident_pages, skip_without_direct_io


def _writes(rng: np.random.Generator, count: int) -> list[bytes]:
    """Writes of every awkward size: empty, a byte, unaligned, larger than the stage."""
    sizes = [0, 1, 3, 4095, 4096, 4097, directio.STAGE_BYTES + 5, 12345]
    sizes += [int(n) for n in rng.integers(1, 200_000, count)]
    return [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes]


@pytest.mark.parametrize("stage", [directio.STAGE_BYTES, directio.MIN_STAGE_BYTES,
                                   3 * directio.ALIGN + 5, 100],
                         ids=["stage", "least-stage", "odd-stage", "tiny-stage"])
@pytest.mark.parametrize("direct", [True, False], ids=["direct", "through-the-cache"])
def test_a_direct_writer_writes_the_bytes_a_plain_file_would(tmp_path, monkeypatch, direct,
                                                              stage):
    """Appends of any size, a header filled in afterwards (before what is staged and within
    it), a seek past the end: the same bytes and length as an ordinary file, with or
    without O_DIRECT, whatever it stages (a stage off the alignment is cut down to it, to
    one aligned page at least)."""
    if not direct:
        monkeypatch.setattr(directio, "_O_DIRECT", 0)
    rng = np.random.default_rng(7)
    writes = _writes(rng, 40)
    with open(tmp_path / "plain", "wb") as plain, \
            directio.DirectWriter(tmp_path / "direct", stage) as ours:
        for f in (plain, ours):
            f.write(b"HEAD" + bytes(60))
            for data in writes:
                assert f.write(data) == len(data)
            end = f.tell()
            f.seek(4)
            f.write(b"size")  # long since written to the disk
            f.seek(end - 10)
            f.write(b"0123456789abc")  # over the end of what is staged
            f.seek(5000, os.SEEK_END)
            f.write(b"tail")
        assert plain.tell() == ours.tell()
    assert (tmp_path / "direct").read_bytes() == (tmp_path / "plain").read_bytes()


def test_a_direct_writer_reads_back_what_it_has_written(tmp_path):
    """libsndfile may read what it wrote: staged bytes and bytes on the disk alike."""
    data = np.random.default_rng(1).integers(0, 256, 3 * directio.STAGE_BYTES // 2,
                                             dtype=np.uint8).tobytes()
    with directio.DirectWriter(tmp_path / "f") as f:
        f.write(data)
        for at in (0, 5, directio.STAGE_BYTES - 3, len(data) - 100):
            f.seek(at)
            assert f.read(200) == data[at:at + 200]


def test_reading_at_any_offset_gives_the_files_bytes(tmp_path):
    data = np.random.default_rng(2).integers(0, 256, 50_001, dtype=np.uint8).tobytes()
    (tmp_path / "f").write_bytes(data)
    for offset, count in [(0, 50_001), (1, 4095), (4095, 2), (4096, 4096), (49_000, 5000),
                          (50_001, 10), (60_000, 10)]:
        assert directio.read_at(tmp_path / "f", offset, count).tobytes() == \
            data[offset:offset + count]


def test_a_file_system_that_opens_direct_files_but_refuses_their_writes(tmp_path, monkeypatch):
    """Some file systems accept O_DIRECT at open and fail the write with EINVAL: the writer
    turns it off and writes through the cache."""
    real = os.pwrite
    refused = []

    def pwrite(fd, data, offset):
        if directio.is_direct(fd):
            refused.append(offset)
            raise OSError(22, "Invalid argument")
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    data = bytes(range(256)) * 50_000
    with directio.DirectWriter(tmp_path / "f") as f:
        f.write(data)
    if not refused:
        pytest.skip("O_DIRECT is not had here at all")
    assert (tmp_path / "f").read_bytes() == data


def test_an_audio_file_is_written_past_the_page_cache(tmp_path):
    """The render's output goes to the disk without filling the page cache, and reads back
    as written, header (sizes, channel mask) and cues included."""
    skip_without_direct_io(tmp_path)
    rate, frames = 48_000, 48_000 * 6
    x = np.random.default_rng(3).uniform(-0.5, 0.5, (frames, 4)).astype(np.float32)
    path = tmp_path / "out.wav"
    with open_writer(path, sample_rate=rate, channels=4, file_format="wav", bits="24",
                     channel_mask=0x33) as writer:
        for start in range(0, frames, 10_007):
            writer.write(x[start:start + 10_007])
    resident = resident_pages(path)  # the header's pages (filled in and read afterwards,
    assert len(resident) > 800 and resident.sum() < len(resident) // 8  # with read-ahead)
    back, read_rate = soundfile.read(path, dtype="float32")
    assert read_rate == rate and back.shape == x.shape
    assert np.abs(back - x).max() <= 2.0**-23


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "through-the-cache"])
def test_a_direct_file_reads_and_writes_any_stretch_as_an_array_would(tmp_path, monkeypatch,
                                                                       direct):
    """Writes that start and end anywhere (within a page, across pages, at the file's end)
    leave their neighbours as they were; the file is its size again when closed."""
    if not direct:
        monkeypatch.setattr(directio, "_O_DIRECT", 0)
    rng = np.random.default_rng(4)
    size = 5 * directio.ALIGN + 123
    expected = np.zeros(size, dtype=np.uint8)
    with directio.DirectFile(tmp_path / "f", size) as f:
        assert not f.read(0, size).any()
        for offset, count in [(0, 10), (10, 4086), (4000, 200), (4100, 30), (size - 7, 7),
                              (3 * directio.ALIGN, directio.ALIGN), (1, size - 2)]:
            data = rng.integers(0, 256, count, dtype=np.uint8)
            f.write(offset, data)
            expected[offset:offset + count] = data
            for at, n in [(0, size), (offset, count), (max(0, offset - 5), count + 10)]:
                assert np.array_equal(f.read(at, n), expected[at:at + n])
    assert (tmp_path / "f").read_bytes() == expected.tobytes()


def test_a_failed_write_names_the_file(tmp_path, monkeypatch):
    """A full disk under the raw file names it (pass 1's keeper passes the error on as it
    is)."""
    def full(fd, data, offset):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)
    with pytest.raises(OSError, match=r"raw\.f32") as raised, \
            directio.DirectWriter(tmp_path / "raw.f32") as f:
        f.write(bytes(3 * directio.STAGE_BYTES))
    assert raised.value.errno == 28
