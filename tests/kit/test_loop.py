"""Loop-safe rendering: the seam, the calibration level, files of at most 16 channels."""

from __future__ import annotations

import os

import numpy as np
import pyloudnorm
import pytest
import soundfile

from soundscape.kit import KitError
from soundscape.kit.loop import _FramesFile, _wrap, channel_groups, render_loop, seam_steps
from soundscape.kit.speakers import channel_mask, layout_from_text, panner_for
from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import Listener
from soundscape.sound import directio
from soundscape.sound.audiofile import read_wav_channel_mask
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks
from tests.sound.pagecache import resident_pages

FS = 48000
HERE = Listener((0.0, 0.0, 1.5), "north")
QUIET = Surroundings(ground=False, hall=False)


def ringing_voice(event, source, *, sample_rate, rng):
    """A 440 Hz partial ringing 4 s (τ = 0.8 s) with a little noise: a bell-like ring."""
    t = np.arange(round(4.0 * sample_rate)) / sample_rate
    return (0.3 * np.sin(2 * np.pi * 440 * t) + 0.01 * rng.normal(size=t.size)) \
        * np.exp(-t / 0.8)


def steady(length=6.0, every=0.5):
    """Strokes every ``every`` s, half a period off the ends: the seam falls mid-ring."""
    sources = {"b": Source("b", "bianzhong", "鐘", "bell", "east", (5.0, 10.0, 1.5))}
    events = [Event((i + 0.5) * every, 0.2, "b", None, 0.8, "strike", "c")
              for i in range(round(length / every))]
    return Performance.build(events, [], sources)


def test_tail_is_wrapped_so_the_seam_steps_no_more_than_elsewhere(tmp_path):
    perf = steady()
    result = render_loop(perf, tmp_path / "loop.wav", length_s=6.0, listener=HERE,
                         panner=make_panner("stereo"), voice=ringing_voice, surroundings=QUIET)
    audio, rate = soundfile.read(result.files[0])
    assert rate == FS and audio.shape == (6 * FS, 2)
    seam, inside = seam_steps(audio, FS)
    # the steps between ring windows elsewhere (a quarter of the steps are stroke onsets)
    assert seam <= np.percentile(inside, 75)
    # the same render cut at 6 s without the wrap: the ring of the last strokes is gone,
    # so the first window is silent and the seam steps more than any stroke onset
    raw = np.concatenate(list(render_blocks(
        perf, listener=HERE, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=ringing_voice, surroundings=QUIET, block_frames=FS)))
    cut_seam, cut_inside = seam_steps(raw[:6 * FS], FS)
    assert cut_seam > cut_inside.max() + 10.0
    assert seam < cut_seam - 30.0


def test_wrapped_loop_holds_all_the_rendered_energy(tmp_path):
    perf = steady()
    result = render_loop(perf, tmp_path / "loop.wav", length_s=6.0, listener=HERE,
                         panner=make_panner("stereo"), voice=ringing_voice, surroundings=QUIET,
                         bits="float")
    audio, _ = soundfile.read(result.files[0])
    raw = np.concatenate(list(render_blocks(
        perf, listener=HERE, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=ringing_voice, surroundings=QUIET, block_frames=FS)))
    assert len(raw) > 6 * FS + FS  # the tail runs more than a second past the end
    folded = np.zeros((6 * FS, 2))
    for start in range(0, len(raw), 6 * FS):
        piece = raw[start:start + 6 * FS]
        folded[:len(piece)] += piece
    gain = 10 ** (result.gain_db / 20)
    np.testing.assert_allclose(audio, folded * gain, atol=1e-6)


def test_loop_is_at_its_calibration_level(tmp_path):
    result = render_loop(steady(), tmp_path / "loop.wav", length_s=6.0, listener=HERE,
                         panner=make_panner("stereo"), voice=ringing_voice, surroundings=QUIET,
                         calibration_lufs=-30.0, ceiling_dbtp=-1.0)
    audio, _ = soundfile.read(result.files[0])
    assert pyloudnorm.Meter(FS).integrated_loudness(audio) == pytest.approx(-30.0, abs=0.2)
    assert result.output_lufs == pytest.approx(-30.0, abs=0.01)
    assert 20 * np.log10(np.abs(audio).max()) <= -1.0


def test_true_peak_ceiling_lowers_the_level_and_says_so(tmp_path):
    result = render_loop(steady(), tmp_path / "loop.wav", length_s=6.0, listener=HERE,
                         panner=make_panner("stereo"), voice=ringing_voice, surroundings=QUIET,
                         calibration_lufs=-3.0, ceiling_dbtp=-6.0)
    audio, _ = soundfile.read(result.files[0])
    assert result.output_peak_dbtp == pytest.approx(-6.0, abs=0.01)
    assert result.output_lufs < -3.0
    assert pyloudnorm.Meter(FS).integrated_loudness(audio) == pytest.approx(
        result.output_lufs, abs=0.2)


def test_wide_feed_split_into_files_of_16_channels_with_a_map(tmp_path):
    ring = ",".join(f"{a}:0" for a in range(0, 360, 18))  # 20 loudspeakers
    layout = layout_from_text(ring)
    result = render_loop(steady(2.0), tmp_path / "ring.wav", length_s=2.0, listener=HERE,
                         panner=panner_for(layout), voice=ringing_voice, surroundings=QUIET)
    assert [p.name for p in result.files] == ["ring.ch01-16.wav", "ring.ch17-20.wav"]
    assert [soundfile.info(p).channels for p in result.files] == [16, 4]
    assert result.channel_map[16] == (1, 1, "CH17")
    # extensible WAVs, "no speaker positions" however the feed is split
    assert [read_wav_channel_mask(p) for p in result.files] == [0, 0]
    assert [g.stop - g.start for g in channel_groups(33)] == [16, 16, 1]


@pytest.mark.parametrize(("layout", "mask"), [("stereo", 0x3), ("5.1", 0x3F)])
def test_loop_carries_the_channel_mask_of_its_layout(tmp_path, layout, mask):
    speakers = layout_from_text(layout)
    result = render_loop(steady(2.0), tmp_path / "loop.wav", length_s=2.0, listener=HERE,
                         panner=panner_for(speakers), voice=ringing_voice, surroundings=QUIET,
                         channel_mask=channel_mask(speakers))
    assert read_wav_channel_mask(result.files[0]) == mask
    assert soundfile.info(result.files[0]).format == "WAVEX"


def test_loop_length_out_of_range_is_refused(tmp_path):
    with pytest.raises(KitError, match="loop length"):
        render_loop(steady(), tmp_path / "x.wav", length_s=0.1, listener=HERE,
                    panner=make_panner("stereo"), voice=ringing_voice)


def bed_voice(event, source, *, sample_rate, rng):
    """Steady noise for the event's length, faded in and out over 4 s (as the bed is)."""
    n = round(event.duration * sample_rate)
    ramp = np.clip(np.minimum(np.arange(n), n - 1 - np.arange(n)) / (4.0 * sample_rate), 0, 1)
    return 0.05 * rng.normal(size=n) * ramp


def test_the_whole_rite_loops_its_bed_without_a_dip(tmp_path):
    from soundscape.kit.programmes import Programme, cut, spans
    from soundscape.performance import SectionSpan

    # a 60 s rite with only its bed: 30 s segments every 26 s, the last ringing on past it
    sources = {"bed": Source("bed", "ambience", "境", "bed", "place", (60.0, 60.0, 3.0))}
    events = [Event(t, 30.0, "bed", None, 0.5, "day", "bed") for t in (0.0, 26.0, 52.0)]
    rite = Performance.build(events, [], sources, sections=(SectionSpan("s1", "x", 0.0, 60.0),))
    (part,) = spans(Programme("rite", "rite"), rite)
    assert part == (0.0, 60.0) and rite.duration == 82.0

    def levels(length):
        loop, _ = cut(rite, [(0.0, length)])
        result = render_loop(loop, tmp_path / "bed.wav", length_s=length, listener=HERE,
                             panner=make_panner("stereo"), voice=bed_voice,
                             surroundings=QUIET, bits="float")
        audio = soundfile.read(result.files[0])[0].mean(axis=1)
        half = audio[:len(audio) // FS * FS].reshape(-1, FS // 2)  # 0.5 s windows
        db = 10 * np.log10((half**2).mean(axis=1) + 1e-20)
        return np.concatenate([db[-4:], db[:4]]) - np.median(db)  # 2 s either side

    seam = levels(60.0)
    assert seam.min() > -3.0  # the last segment's ring fills the first one's fade-in
    # looped at the bed's own end instead, it fades out to silence and in again
    dip = levels(82.0)
    assert dip.min() < -20.0


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads Linux's /proc")
def test_the_raw_loop_is_held_in_a_file_not_in_the_process(tmp_path):
    """The whole rite's raw loop is 3.5 GB in stereo: its frames must live on the disk, not
    in the process (a memory map's resident pages are the process's own), and where the
    file system takes O_DIRECT not in the page cache either."""
    frames, width = 120 * FS, 16  # 369 MB of float32
    block = np.full((FS, width), 0.25, dtype=np.float32)
    with _FramesFile(tmp_path / "loop.f32", frames, width) as loop:
        before = _resident_bytes()
        _wrap(iter([block] * 121), loop)  # one second past the end: added at the start
        grown = _resident_bytes() - before
        assert np.all(loop[:FS] == 0.5) and np.all(loop[FS:frames] == 0.25)
        assert grown < 64 << 20, f"the process grew {grown >> 20} MiB holding the loop"
        if directio.is_direct(loop._file.fileno()):
            assert resident_pages(tmp_path / "loop.f32").sum() < 16


def test_the_loop_file_reads_zeros_until_written_and_only_runs_of_frames(tmp_path):
    with _FramesFile(tmp_path / "loop.f32", 10, 3) as loop:
        assert len(loop) == 10 and np.all(loop[:] == 0) and loop[:].dtype == np.float32
        loop[2:4] = np.arange(6, dtype=float).reshape(2, 3)
        loop[3:5] += 1.0
        assert loop[1:6].tolist() == [[0, 0, 0], [0, 1, 2], [4, 5, 6], [1, 1, 1], [0, 0, 0]]
        assert loop[8:20].shape == (2, 3)
        with pytest.raises(ValueError, match="step 1"):
            loop[::2]


def test_a_full_disk_names_the_loop_and_a_killed_loops_scratch_is_removed(tmp_path,
                                                                          monkeypatch):
    """The error named `.loop.loop-3wld9ufv/loop.f32`, and a loop killed by SIGKILL left
    its scratch folder (224 MB) for good."""
    import errno
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()  # a process id that no longer runs
    left = tmp_path / f".loop.loop.render-{dead.pid}-0123abcd"
    (left / "scratch").mkdir(parents=True)
    (left / "scratch" / "loop.f32").write_bytes(b"\0" * 4096)
    real = directio.DirectFile.write

    def full(self, offset, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.name)

    monkeypatch.setattr(directio.DirectFile, "write", full)
    with pytest.raises(OSError) as error:
        render_loop(steady(2.0), tmp_path / "loop.wav", length_s=2.0, listener=HERE,
                    panner=make_panner("stereo"), voice=ringing_voice, surroundings=QUIET)
    assert error.value.filename == str(tmp_path / "loop.wav")
    assert list(tmp_path.iterdir()) == []  # the dead run's scratch, and its own, are gone
    monkeypatch.setattr(directio.DirectFile, "write", real)
