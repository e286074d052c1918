"""WAV/FLAC writing, cue and label chunks, marker sidecar, atomic output."""

from __future__ import annotations

import shutil
import subprocess
import time

import numpy as np
import pytest
import soundfile

from soundscape.errors import RenderError
from soundscape.sound.audiofile import Cue, open_writer, read_wav_cues, subtype_for, write_sidecar

CUES = [Cue(0, "右設樂 | she yue"), Cue(4801, "奏肆夏 | zou sixia"), Cue(9000, "命 | ming")]


@pytest.mark.parametrize(("bits", "subtype"), [("16", "PCM_16"), ("24", "PCM_24"),
                                               ("float", "FLOAT")])
@pytest.mark.parametrize("channels", [1, 2, 16])
def test_wav_round_trip_with_cues(tmp_path, bits, subtype, channels):
    rng = np.random.default_rng(channels)
    data = rng.uniform(-0.5, 0.5, (9601, channels))  # odd frame count: chunk padding
    path = tmp_path / "a.wav"
    with open_writer(path, sample_rate=48000, channels=channels, file_format="wav",
                     bits=bits, cues=CUES) as out:
        for i in range(0, len(data), 1000):
            out.write(data[i:i + 1000])
    info = soundfile.info(path)
    assert (info.subtype, info.channels, info.samplerate, info.frames) == (
        subtype, channels, 48000, len(data))
    back, _ = soundfile.read(path, always_2d=True)
    assert np.abs(back - data).max() < 2.0**-14
    assert read_wav_cues(path) == CUES
    riff_size = int.from_bytes(path.read_bytes()[4:8], "little")
    assert riff_size == path.stat().st_size - 8


def test_flac_and_sidecar(tmp_path):
    path = tmp_path / "a.flac"
    with open_writer(path, sample_rate=96000, channels=2, file_format="flac", bits="24",
                     cues=CUES) as out:
        out.write(np.zeros((960, 2)))
    assert soundfile.info(path).format == "FLAC"
    sidecar = write_sidecar(path, CUES, sample_rate=96000)
    assert sidecar.name == "a.flac.markers.txt"
    lines = sidecar.read_text(encoding="utf-8").splitlines()
    assert lines[1] == "0.050010\t0.050010\t奏肆夏 | zou sixia"


def test_interrupted_writer_leaves_nothing(tmp_path):
    path = tmp_path / "a.wav"
    with pytest.raises(KeyboardInterrupt), open_writer(
            path, sample_rate=48000, channels=2, file_format="wav", bits="24") as out:
        out.write(np.zeros((100, 2)))
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_bad_bits_names_accepted():
    with pytest.raises(RenderError, match=r"bits='8'.*wav/16"):
        subtype_for("wav", "8")
    with pytest.raises(RenderError, match="flac/24"):
        subtype_for("flac", "float")


def test_wav_past_4_gib_becomes_rf64(tmp_path, monkeypatch):
    import soundscape.sound.audiofile as audiofile
    monkeypatch.setattr(audiofile, "_RIFF_LIMIT", 1000)  # pretend 1000 bytes is the limit
    path = tmp_path / "big.wav"
    with open_writer(path, sample_rate=48000, channels=2, file_format="wav", bits="16",
                     cues=CUES, frames=300) as out:
        out.write(np.zeros((300, 2)))
    assert soundfile.info(path).format == "RF64"
    assert soundfile.read(path)[0].shape == (300, 2)


@pytest.mark.parametrize("bits", ["16", "24", "float"])
@pytest.mark.parametrize("file_format", ["wav", "rf64"])
def test_packed_wav_samples_round_to_nearest_and_pack_exactly(tmp_path, monkeypatch, bits,
                                                              file_format):
    """numpy-packed WAV/RF64 samples (sf_write_raw) are the bytes soundfile writes from the
    same integers, each within half a step of the input; float WAVs carry no PEAK chunk
    (its timestamp would change the bytes of the same render)."""
    import soundscape.sound.audiofile as audiofile
    if file_format == "rf64":
        monkeypatch.setattr(audiofile, "_RIFF_LIMIT", 1000)
    rng = np.random.default_rng(7)
    data = rng.uniform(-1.2, 1.2, (5000, 16))  # past full scale: clipped alike
    data[:4] = [[1.0] * 16, [-1.0] * 16, [0.5 / 2**23] * 16, [-1.5 / 2**15] * 16]

    def write(path):
        with open_writer(path, sample_rate=48000, channels=16, file_format="wav",
                         bits=bits, cues=CUES, frames=len(data)) as out:
            out.write(data[:3001])
            out.write(data[3001:].astype(np.float32))
        return path.read_bytes()

    packed = write(tmp_path / "packed.wav")
    with soundfile.SoundFile(tmp_path / "probe.wav", "w", 48000, 2, "PCM_24") as probe:
        assert audiofile._raw_writer(probe) is not None  # the packed path was taken above
    monkeypatch.setattr(audiofile, "_raw_writer", lambda out: None)
    public = write(tmp_path / "public.wav")
    back, _ = soundfile.read(tmp_path / "packed.wav", always_2d=True)
    assert soundfile.info(tmp_path / "packed.wav").format == file_format.upper()
    if bits == "float":  # (float RF64 goes through soundfile's write either way)
        assert np.array_equal(back, data.astype(np.float32))
        if file_format == "wav":
            assert b"PEAK" not in packed and b"PEAK" in public
        return
    assert packed == public
    step = {"16": 2.0**-15, "24": 2.0**-23}[bits]
    # within half a step (plus float32 rounding for the block given as float32)
    assert np.abs(back - np.clip(data, -1.0, 1.0 - step)).max() <= step / 2 + 2.0**-24


def test_writer_thread_errors_surface_but_never_mask_the_callers():
    from soundscape.sound.audiofile import BlockWriter

    def full_disk(data):
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"), BlockWriter(full_disk) as w:
        w.write(np.zeros(3))
    with pytest.raises(KeyboardInterrupt), BlockWriter(full_disk) as w:
        w.write(np.zeros(3))
        raise KeyboardInterrupt


def test_a_writer_converting_on_its_own_thread_writes_in_order_and_raises_its_errors():
    from soundscape.sound.audiofile import BlockWriter

    written = []

    def slow_first(block):  # the first conversion finishes last
        if block[0] == 0:
            time.sleep(0.2)
        if block[0] == 99:
            raise ValueError("cannot convert block 99")
        return block * 2

    with BlockWriter(written.append, slow_first) as w:
        for i in range(10):
            w.write(np.full(3, i))
    assert [int(b[0]) for b in written] == [2 * i for i in range(10)]
    with pytest.raises(ValueError, match="block 99"), BlockWriter(written.append, slow_first) as w:
        w.write(np.full(3, 99))


def test_overlapping_stores_keep_their_order_here():
    """numpy stores the items of a copy first to last on this machine: 24-bit packing takes
    the one-copy way (the other is tested to give the same bytes)."""
    from soundscape.sound import audiofile

    assert audiofile._stores_in_order()


def test_two_converters_convert_side_by_side_and_write_in_order():
    """Each conversion waits until another runs beside it: only two converting threads get
    through (one would time out), and the blocks are still written in order."""
    import threading

    from soundscape.sound.audiofile import BlockWriter

    both = threading.Barrier(2, timeout=10)
    written = []

    def convert(block):
        both.wait()
        return block * 2

    with BlockWriter(written.append, convert, converters=2) as w:
        for i in range(12):
            w.write(np.full(3, i))
    assert [int(b[0]) for b in written] == [2 * i for i in range(12)]
    both = threading.Barrier(2, timeout=0.5)
    with pytest.raises(threading.BrokenBarrierError), \
            BlockWriter(written.append, convert, converters=1) as w:
        for i in range(2):
            w.write(np.full(3, i))


def test_soundfile_private_names_the_writer_uses_are_there(tmp_path):
    """audiofile reaches libsndfile through soundfile's private ``_snd``/``_ffi`` (raw
    writes, no PEAK chunk); soundfile is pinned below the next minor release for that, and
    this fails first when a release moves them (check it before raising the pin)."""
    import soundfile

    with soundfile.SoundFile(tmp_path / "x.wav", "w", samplerate=8000, channels=1) as f:
        assert f._file is not None
    for name in ("sf_write_raw", "sf_command", "sf_strerror"):
        assert callable(getattr(soundfile._snd, name))
    assert callable(soundfile._ffi.from_buffer) and soundfile._ffi.NULL is not None


def _write(path, layout, *, file_format="wav", cues=CUES, bits="24"):
    from soundscape.sound.panning import make_panner, wav_channel_mask

    panner = make_panner(layout)
    channels = len(panner.channels)
    with open_writer(path, sample_rate=48000, channels=channels, file_format=file_format,
                     bits=bits, cues=cues, channel_mask=wav_channel_mask(panner)) as out:
        out.write(np.full((9600, channels), 0.25))
    return path


@pytest.mark.parametrize(("layout", "mask"), [
    ("stereo", 0x3), ("binaural", 0x3), ("5.1", 0x3F), ("7.1", 0x63F), ("7.1.4", 0x2D63F),
    ("foa", 0), ("hoa3", 0), ("ring8", 0)])
@pytest.mark.parametrize("bits", ["16", "24", "float"])
def test_wavs_carry_their_layouts_channel_mask(tmp_path, layout, mask, bits):
    from soundscape.sound.audiofile import read_wav_channel_mask

    path = _write(tmp_path / "a.wav", layout, bits=bits)
    assert read_wav_channel_mask(path) == mask
    assert [(c.frame, c.label) for c in read_wav_cues(path)] == [(c.frame, c.label)
                                                                 for c in CUES]
    back, _ = soundfile.read(path, always_2d=True)
    assert np.abs(back - 0.25).max() < 2.0**-14


_FFPROBE = shutil.which("ffprobe")


@pytest.mark.skipif(_FFPROBE is None, reason="ffprobe (Debian: ffmpeg) is not installed")
@pytest.mark.parametrize(("layout", "file_format", "expected"), [
    ("stereo", "wav", "stereo"), ("5.1", "wav", "5.1"), ("7.1", "wav", "7.1"),
    ("7.1.4", "wav", "FL+FR+FC+LFE+BL+BR+SL+SR+TFL+TFR+TBL+TBR"),  # ffmpeg ≥ 6 says 7.1.4
    ("foa", "wav", "unknown"), ("7.1", "flac", "7.1")])
def test_ffprobe_reads_the_channel_layout(tmp_path, layout, file_format, expected):
    path = _write(tmp_path / f"a.{file_format}", layout, file_format=file_format)
    probe = subprocess.run([_FFPROBE, "-v", "error", "-show_entries", "stream=channel_layout",
                            "-of", "default=nw=1:nk=1", str(path)],
                           capture_output=True, text=True, check=True)
    assert expected in probe.stdout.strip() or probe.stdout.strip() == "7.1.4"


def test_flac_carries_the_markers_as_chapters(tmp_path):
    import mutagen.flac

    path = _write(tmp_path / "a.flac", "stereo", file_format="flac",
                  cues=[*CUES, Cue(48000 * 3725 + 48, "樂闋 | the music ends")])
    tags = mutagen.flac.FLAC(path).tags
    assert tags["CHAPTER001"] == ["00:00:00.000"] and tags["CHAPTER001NAME"] == [CUES[0].label]
    assert tags["CHAPTER002"] == ["00:00:00.100"]  # frame 4801 at 48 kHz: 100.02 ms
    assert tags["CHAPTER004"] == ["01:02:05.001"] and tags["CHAPTER004NAME"] == [
        "樂闋 | the music ends"]
    assert "WAVEFORMATEXTENSIBLE_CHANNEL_MASK" not in tags  # FLAC implies stereo


def test_flac_says_when_its_channels_are_not_loudspeakers(tmp_path):
    import mutagen.flac

    tags = mutagen.flac.FLAC(_write(tmp_path / "a.flac", "ring8", file_format="flac")).tags
    assert tags["WAVEFORMATEXTENSIBLE_CHANNEL_MASK"] == ["0x0000"]


def test_flac_refuses_more_than_eight_channels(tmp_path):
    with pytest.raises(RenderError, match="format=flac holds 1 to 8 channels; this layout has "
                                          "16: use wav"):
        _write(tmp_path / "a.flac", "hoa3", file_format="flac")
    assert list(tmp_path.iterdir()) == []


def test_rf64_carries_the_channel_mask_too(tmp_path, monkeypatch):
    from soundscape.sound import audiofile

    monkeypatch.setattr(audiofile, "_RIFF_LIMIT", 1000)  # pretend 1000 bytes is the limit
    path = tmp_path / "big.wav"
    with open_writer(path, sample_rate=48000, channels=8, file_format="wav", bits="24",
                     frames=9600, channel_mask=0x63F) as out:
        out.write(np.zeros((9600, 8)))
    assert soundfile.info(path).format == "RF64"
    assert audiofile.read_wav_channel_mask(path) == 0x63F


@pytest.mark.parametrize(("byteorder", "in_order"), [("little", True), ("little", False),
                                                     ("big", True)])
def test_24_bit_packing_rounds_half_to_even_and_clips_as_the_plain_way(byteorder, in_order,
                                                                      monkeypatch):
    """The float trick (little-endian machines; its bytes moved out by overlapping stores,
    or by byte columns where those would not keep order) and the plain int32 way (others)
    give the same bytes, ties and clipping included."""
    from soundscape.sound import audiofile

    monkeypatch.setattr(audiofile.sys, "byteorder", byteorder)
    monkeypatch.setattr(audiofile, "_stores_in_order", lambda: in_order)
    x = np.random.default_rng(3).uniform(-1.2, 1.2, (1000, 2))
    x[:6, 0] = np.array([0.5, 1.5, -0.5, -2.5, 2**23 - 0.5, -(2**23) - 3]) / 2**23
    plain = audiofile._steps(x, 24).astype("<i4").reshape(-1).view(np.uint8).reshape(-1, 4)
    packed = audiofile._pack24(x)
    assert np.array_equal(packed, plain[:, :3])
    first = packed[0::2][:6]  # channel 0's samples
    values = (first[:, 0].astype(int) | first[:, 1].astype(int) << 8
              | first[:, 2].astype(int) << 16)
    values = np.where(values >= 2**23, values - 2**24, values)
    assert values.tolist() == [0, 2, 0, -2, 2**23 - 1, -(2**23)]


@pytest.mark.parametrize(("file_format", "bits"), [("wav", "16"), ("wav", "24"),
                                                   ("wav", "float"), ("flac", "16"),
                                                   ("flac", "24")])
def test_a_float32_block_written_with_a_scale_is_the_float64_product_written(
        tmp_path, file_format, bits):
    """Pass 2 hands the writers pass 1's float32 samples and the gain: the bytes are those
    of scaling them in float64 first (the conversions' own scaling is by powers of two)."""
    raw = np.random.default_rng(5).uniform(-0.3, 0.3, (4801, 2)).astype(np.float32)
    gain = 10 ** (15.1 / 20)
    scaled, product = tmp_path / f"s.{file_format}", tmp_path / f"p.{file_format}"
    for path, write in ((scaled, lambda out: out.write(raw, gain)),
                        (product, lambda out: out.write(np.multiply(raw, gain,
                                                                    dtype=np.float64)))):
        with open_writer(path, sample_rate=48000, channels=2, file_format=file_format,
                         bits=bits) as out:
            write(out)
    assert np.array_equal(soundfile.read(scaled, dtype="float64")[0],
                          soundfile.read(product, dtype="float64")[0])
    if file_format == "wav":
        assert scaled.read_bytes() == product.read_bytes()
    clipped = soundfile.read(scaled, dtype="float64")[0]
    assert np.abs(clipped).max() > 0.9  # the gain reached the file (0.3 x 5.7 clips)


@pytest.mark.parametrize("file_format", ["wav", "flac"])
def test_a_written_file_is_closed_without_forcing_it_to_disk(tmp_path, monkeypatch,
                                                             file_format):
    # SoundFile.close flushes (sf_write_sync: an fsync of the whole file, seconds for a
    # rite); the writer closes with sf_close alone, and the file is whole all the same
    synced = []
    monkeypatch.setattr(soundfile.SoundFile, "flush", lambda self: synced.append(self.name))
    block = np.linspace(-0.5, 0.5, 4800, dtype=np.float32).reshape(-1, 2)
    path = tmp_path / f"x.{file_format}"
    with open_writer(path, sample_rate=48000, channels=2, file_format=file_format,
                     bits="24", cues=[Cue(100, "一")]) as writer:
        writer.write(block)
    assert synced == []
    audio, rate = soundfile.read(path, dtype="float32")
    assert rate == 48000 and audio.shape == block.shape
    assert np.max(np.abs(audio - block)) <= 2.0 ** -23
