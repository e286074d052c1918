"""``soundscape play``: a WAV stream that parses, starts where asked, equals a render's frames
at the stored gain, comes block by block while the rite is still rendering, and refuses bad
input with one clear line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import wave
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile

from soundscape.performance import Event, Marker, Performance, Source
from soundscape.sequence.planner import perform_from_file
from soundscape.site.listeners import Listener
from soundscape.sound.audiofile import pack_samples
from soundscape.sound.loudness import TruePeakLimiter, true_peak_envelope
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_audio, render_blocks
from soundscape.sound.stream import UNKNOWN_SIZE, WavStream, played

FS = 48000
NORTH = Listener((0.0, 0.0, 1.5), "north")
ROOT = Path(__file__).resolve().parents[1]


def noise_voice(event, source, *, sample_rate, rng):
    n = round(0.3 * sample_rate)
    return event.velocity * rng.normal(0, 0.2, n) * np.exp(-np.arange(n) / (0.1 * sample_rate))


def strokes(times=(1.0, 3.0, 5.0), *, velocity=0.5):
    """Drum strokes 10 m east of the listener at ``times``; a music marker at 3 s."""
    sources = {"e": Source("e", "jiangu", "建鼓", "drum", "east", (10.0, 0.0, 1.5),
                           struck_face=(-1.0, 0.0, 0.0))}
    events = [Event(t, 0.25, "e", None, velocity, "strike", "m1") for t in times]
    markers = [Marker(0.0, "section", "右設樂", "she yue", "s1"),
               Marker(3.0, "music", "奏肆夏", "zou sixia", "m1")]
    return Performance.build(events, markers, sources)


def rendered(perf, *, block_frames, voice=noise_voice):
    return render_blocks(perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS,
                         seed=0, voice=voice, surroundings=Surroundings(),
                         block_frames=block_frames)


class _Pipe(io.BytesIO):
    """A pipe's end: bytes that cannot be sought back into."""

    def seekable(self) -> bool:
        return False


# --- the WAV stream --------------------------------------------------------------------

@pytest.mark.parametrize("bits", ["16", "24"])
def test_a_wav_stream_has_unknown_sizes_and_parses_frame_for_frame(bits):
    samples = np.random.default_rng(1).uniform(-0.9, 0.9, (5000, 2))
    pipe = _Pipe()
    stream = WavStream(pipe, channels=2, sample_rate=FS, bits=bits)
    for block in np.array_split(samples, 7):
        stream.write(block)
    stream.close()
    data = pipe.getvalue()
    assert int.from_bytes(data[4:8], "little") == UNKNOWN_SIZE  # RIFF size: not known
    assert int.from_bytes(data[40:44], "little") == UNKNOWN_SIZE  # data size: not known
    with wave.open(io.BytesIO(data)) as reader:  # the standard library reads it to the end
        assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (
            2, int(bits) // 8, FS)
        frames = reader.readframes(10**9)
    assert frames == pack_samples(samples, bits).tobytes()
    read, rate = soundfile.read(io.BytesIO(data), dtype="float64")  # and libsndfile too
    assert rate == FS and read.shape == samples.shape
    assert np.max(np.abs(read - samples)) <= 2.0 ** (1 - int(bits))


def test_a_wav_stream_to_a_file_gets_its_sizes_at_the_end(tmp_path):
    path = tmp_path / "x.wav"
    with open(path, "wb") as out:
        stream = WavStream(out, channels=6, sample_rate=FS, bits="24", channel_mask=0x3F)
        stream.write(np.zeros((1234, 6)))
        stream.close()
    info = soundfile.info(path)
    assert (info.frames, info.channels, info.subtype) == (1234, 6, "PCM_24")


# --- the frames: a render's, at the gain ----------------------------------------------------

@pytest.mark.parametrize("bits", ["16", "24"])
def test_streamed_frames_are_the_rendered_files_frames_bit_for_bit(tmp_path, bits):
    """The gain a render's report gives, applied by the stream, makes that render's file:
    every frame the same integer (the limiter idle in both)."""
    perf = strokes(times=tuple(0.2 + 0.37 * i for i in range(12)))
    result = render_audio(perf, tmp_path / "x.wav", listener=NORTH, voice=noise_voice,
                          bits=bits)
    assert result.report.limiter_db == 0.0  # the equality holds where no limiter acts
    gain_db = json.loads(result.report_file.read_text())["gain_db"]
    limiter = TruePeakLimiter(-1.1, FS, 2)
    pipe = _Pipe()
    stream = WavStream(pipe, channels=2, sample_rate=FS, bits=bits)
    for samples in played(rendered(perf, block_frames=4800), gain_db=gain_db, limiter=limiter):
        stream.write(samples)
    assert limiter.gain_reduction_db == 0.0
    dtype = "int16" if bits == "16" else "int32"
    streamed, _ = soundfile.read(io.BytesIO(pipe.getvalue()), dtype=dtype)
    offline, _ = soundfile.read(result.files[0], dtype=dtype)
    assert streamed.shape == offline.shape
    assert np.array_equal(streamed, offline)


def test_streamed_frames_are_render_blocks_times_the_gain():
    perf = strokes(times=tuple(0.2 + 0.37 * i for i in range(12)))
    gain_db = 7.25
    stream = np.concatenate(list(played(rendered(perf, block_frames=4800), gain_db=gain_db)))
    offline = np.concatenate(list(rendered(perf, block_frames=FS)))  # another block size
    # pass 1 keeps float32; pass 2 multiplies in float64 (bit for bit, not within a tolerance)
    expected = np.multiply(offline.astype(np.float32), 10 ** (gain_db / 20), dtype=np.float64)
    assert np.array_equal(stream, expected)


def test_the_limiter_keeps_the_ceiling_and_touches_nothing_far_from_the_peaks():
    perf = strokes(times=(0.5, 2.5, 4.5), velocity=1.0)
    raw = np.concatenate(list(rendered(perf, block_frames=FS))).astype(np.float32)
    gain_db = 40.0  # far over full scale: the limiter must act
    ceiling_db = -1.1
    limiter = TruePeakLimiter(ceiling_db, FS, 2)
    out = np.concatenate(list(played(rendered(perf, block_frames=4800), gain_db=gain_db,
                                     limiter=limiter)))
    plain = np.multiply(raw, 10 ** (gain_db / 20), dtype=np.float64)
    assert out.shape == plain.shape
    assert limiter.gain_reduction_db > 10
    assert true_peak_envelope(out).max() <= 10 ** (ceiling_db / 20) * 1.0001
    over = np.flatnonzero(true_peak_envelope(plain) > 10 ** (ceiling_db / 20))
    near = np.zeros(len(plain), bool)
    for i in over:  # the gain reaches one limiter reach on either side of a loud sample
        near[max(0, i - limiter.reach):i + limiter.reach + 1] = True
    assert (~near).sum() > len(plain) // 2
    assert np.array_equal(out[~near], plain[~near])


def test_the_first_block_comes_before_the_later_notes_are_made():
    """Streaming, not rendering all first: when the first samples come out, the notes of the
    last minute have not been made."""
    made: list[float] = []

    def recording(event, source, *, sample_rate, rng):
        made.append(event.time)
        return noise_voice(event, source, sample_rate=sample_rate, rng=rng)

    perf = strokes(times=tuple(0.05 + 0.5 * i for i in range(240)))  # two minutes of strokes
    blocks = played(rendered(perf, block_frames=4800, voice=recording), gain_db=0.0)
    try:
        first = next(blocks)
    finally:
        blocks.close()  # a render left open would hold its one-BLAS-thread limit until GC
    assert first.shape == (4800, 2)
    assert made and max(made) < 10.0 < perf.duration - 60.0


class _Slow:
    """A voice whose notes are made at 16 kHz (as the voices and the bed are), recording
    the onsets it was asked for."""

    def __init__(self) -> None:
        self.made: list[float] = []

    def __call__(self, event, source, *, sample_rate, rng):
        self.made.append(event.time)
        return noise_voice(event, source, sample_rate=sample_rate, rng=rng)

    def made_at(self, source, sample_rate):
        return sample_rate // 3


def _court_render(perf, voice, block_frames):
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court

    surroundings = Surroundings(court=load_court(load_site(), "bare"))
    return render_blocks(perf, listener=Listener((0.0, -20.0, 1.5), "north"),
                         panner=make_panner("stereo",
                                            speed_of_sound=surroundings.air.speed_of_sound),
                         sample_rate=FS, seed=0, voice=voice, surroundings=surroundings,
                         block_frames=block_frames)


def test_first_chunks_are_short_and_make_one_chunk():
    from soundscape.sound.lines import CHUNK, first_chunks
    from soundscape.sound.tail import TAIL_CHUNK

    for chunk in (CHUNK, TAIL_CHUNK):
        sizes = first_chunks(chunk)
        assert sum(sizes) == chunk and sizes[0] == 1024
        assert list(sizes) == sorted(sizes) and all(size % 64 == 0 for size in sizes)


def test_the_first_block_of_a_court_render_waits_for_a_second_of_notes_not_seven():
    """A 16 kHz bus and the court's 8 kHz tail used to hand out nothing before the notes
    of 7.2 s were made (two whole chunks); their first chunk is now heard in short pieces."""
    voice = _Slow()
    perf = strokes(times=tuple(0.25 * i for i in range(1, 80)))
    blocks = _court_render(perf, voice, 4800)
    try:
        next(blocks)
    finally:
        blocks.close()
    assert max(voice.made) < 1.5


def test_short_first_chunks_leave_the_frames_independent_of_the_block_size():
    perf = strokes(times=tuple(0.3 + 0.41 * i for i in range(30)))
    small = np.concatenate(list(_court_render(perf, _Slow(), 4800)))
    large = np.concatenate(list(_court_render(perf, _Slow(), 3 * FS)))
    assert np.abs(small).max() > 0
    assert np.array_equal(small, large)


def test_cues_are_found_by_id_by_words_and_by_piece_in_chinese():
    from soundscape.performance import MusicSpan, PieceInfo, SectionSpan
    from soundscape.sound.stream import cue_time

    perf = Performance(
        (), (Marker(0.0, "section", "右樂賓", "music for the guests", "s18"),
             Marker(88.0, "step", "乃歌鹿鳴三終", "they sing", "s18.09"),
             Marker(88.0, "music", "乃歌鹿鳴三終", "Lu ming begins", "luming"),
             Marker(699.5, "step", "乃管新宮三終", "they play the pipes", "s18.18")),
        {}, {"luming": PieceInfo("luming", "鹿鳴", "surviving", "")},
        sections=(SectionSpan("s18", "樂賓", 0.0, 873.0),),
        music=(MusicSpan("luming", "luming", 88.0, 618.5, "music"),))
    for name, expected in (("s18", 0.0), ("樂賓", 0.0), ("右樂賓", 0.0), ("s18.09", 88.0),
                           ("乃歌鹿鳴三終", 88.0), ("luming", 88.0), ("鹿鳴", 88.0),
                           ("《鹿鳴》", 88.0), ("乃管新宮三終", 699.5)):
        assert cue_time(perf, name) == expected, name


@pytest.mark.parametrize(("text", "seconds"), [("90", 90.0), ("90.5", 90.5), ("1:30", 90.0),
                                                ("1:02:30", 3750.0), ("0:00.25", 0.25)])
def test_start_times_read_as_seconds_or_clock(text, seconds):
    from soundscape.sound.stream import parse_time

    assert parse_time(text) == seconds


@pytest.mark.parametrize("text", ["-1", "1:60", "1:60:00", "inf", "", "abc", "1e999", "1::2"])
def test_bad_start_times_are_refused(text):
    from soundscape.errors import RenderError
    from soundscape.sound.stream import parse_time

    with pytest.raises(RenderError, match="accepted: seconds not below 0"):
        parse_time(text)


# --- the command line -------------------------------------------------------------------

@pytest.fixture
def scene_cli(soundscape_cli, monkeypatch, tmp_path):
    """``soundscape play`` on the drum strokes (sequencing replaced by the scene)."""
    from soundscape.cli._common import Sequencing

    monkeypatch.setattr(Sequencing, "perform_cached",
                        lambda *_a, **_k: (strokes(), True))
    return lambda *args: soundscape_cli("play", "--listener", "0,0,1.5", "--no-reflections",
                                        "--jobs", "1", *args, cwd=tmp_path)


def _onset_s(path: Path, after: float = 0.0) -> float:
    samples, rate = soundfile.read(path)
    level = np.abs(samples).max(axis=1)
    start = round(after * rate)
    return (start + int(np.argmax(level[start:] > 0.01 * level.max()))) / rate


@pytest.mark.parametrize(("args", "first_stroke"), [
    ((), 1.0),                               # the part's start: the stroke at 1 s
    (("--at", "奏肆夏"), 0.0),                # the music marker at 3 s, by its words
    (("--at", "m1", "--start", "1.5"), 0.5),  # its id, 1.5 s in: the stroke at 5 s
    (("--start", "0:02.5"), 0.5),            # 2.5 s from the start: the stroke at 3 s
])
def test_play_starts_where_asked(scene_cli, tmp_path, args, first_stroke):
    code, err = scene_cli(*args, "--gain", "0", "-o", str(tmp_path / "x.wav"))
    assert code == 0, err
    travel = 10.0 / Surroundings().air.speed_of_sound  # 10 m of air to the listener
    onset = _onset_s(tmp_path / "x.wav")
    assert abs(onset - (first_stroke + travel)) < 0.002, (onset, first_stroke + travel)
    assert "first audio after" in err and "x real time" in err


def test_play_takes_the_gain_of_a_renders_report(scene_cli, tmp_path):
    loud = tmp_path / "x.wav.loudness.json"
    loud.write_text(json.dumps({"gain_db": -6.0, "sample_rate": 48000, "layout": "stereo"}))
    code, err = scene_cli("--loudness", str(loud), "-o", str(tmp_path / "a.wav"))
    assert code == 0, err
    assert f"gain -6.00 dB ({loud})" in err
    code, err = scene_cli("--gain", "0", "-o", str(tmp_path / "b.wav"))
    assert code == 0, err
    a, _ = soundfile.read(tmp_path / "a.wav")
    b, _ = soundfile.read(tmp_path / "b.wav")
    loudest = np.unravel_index(np.argmax(np.abs(b)), b.shape)  # the right: the drum is east
    assert a[loudest] / b[loudest] == pytest.approx(10 ** (-6 / 20), rel=1e-4)


@pytest.mark.parametrize("off", ["--no-cache", "SOUNDSCAPE_CACHE=off"])
def test_no_cache_reads_no_cache_of_the_sequenced_rite(scene_cli, monkeypatch, tmp_path, off):
    """With the caches off, play read the sequenced rite's cache all the same."""
    from soundscape.cli._common import Sequencing

    monkeypatch.setattr(Sequencing, "perform", lambda *_a, **_k: strokes())
    monkeypatch.setattr(Sequencing, "perform_cached",
                        lambda *_a, **_k: pytest.fail("the cache of sequenced rites was read"))
    if off.startswith("SOUNDSCAPE"):
        monkeypatch.setenv("SOUNDSCAPE_CACHE", "off")
    code, err = scene_cli(*([off] if off.startswith("--") else []), "--gain", "0", "-o",
                          str(tmp_path / "x.wav"))
    assert code == 0 and "performance" in err and "(sequenced, no cache)" in err, err


def test_the_default_report_of_another_part_is_not_taken(scene_cli, tmp_path):
    """output/dashe.wav's report is a render of some part: its gain is taken only for that
    part (its text, start and length), else the calibration's."""
    beside = tmp_path / "output" / "dashe.wav.loudness.json"
    beside.parent.mkdir()
    part = strokes()
    mine = {"text": part.info.text, "offset": part.info.offset, "duration": part.duration}
    for other, taken in (({}, True), ({"offset": part.info.offset + 60.0}, False),
                         ({"duration": part.duration * 2}, False), ({"text": "yan"}, False)):
        beside.write_text(json.dumps({"gain_db": -6.0, **mine, **other}))
        code, err = scene_cli("-o", str(tmp_path / "a.wav"))
        assert code == 0, err
        said = " ".join(err.split())
        assert ("gain -6.00 dB (output/dashe.wav.loudness.json)" in said) is taken, said
        assert ("is a render of another part" in said) is not taken, said
        assert ("the calibration" in said) is not taken, said
        if "offset" in other:  # seconds as a reader takes them, not a float's 16 digits
            assert (f"offset {part.info.offset + 60.0:.1f} s, here {part.info.offset:.1f} s"
                    in said), said


def test_a_stopped_or_failed_play_leaves_the_file_as_it_was(scene_cli, tmp_path, monkeypatch):
    """The WAV is written beside its target and renamed when complete."""
    from soundscape.sound import stream

    target = tmp_path / "x.wav"
    target.write_bytes(b"an earlier take")

    def fail(self, samples):
        raise OSError(28, "No space left on device")  # as a full disk's write

    monkeypatch.setattr(stream.WavStream, "write", fail)
    code, err = scene_cli("--gain", "0", "-o", str(target))
    assert code == 2 and f"error: {target}: no space left on the device" in err, err
    assert target.read_bytes() == b"an earlier take"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.wav"]


@pytest.mark.parametrize(("args", "message"), [
    (["--at", "nosuch"],
     "cue 'nosuch' is not in the part played; known: section s1 右設樂; music m1 奏肆夏"),
    (["--start", "-1"], "--start '-1', accepted: seconds not below 0"),
    (["--start", "1:75"], "--start '1:75', accepted"),
    (["--start", "nan"], "--start 'nan', accepted"),
    (["--start", "99"], "is past the end of the part played"),
    (["--at", "m1", "--start", "3"], "--at m1 at 3.0 s, --start 3 s) is past the end"),
    (["--gain", "nan"], "--gain nan, accepted: a finite number from -70 to 70"),
    (["--ceiling", "3"], "--ceiling 3.0, accepted: a finite number from -20 to 0"),
    (["--layout", "stems"], "--layout stems is a render's"),
    (["--layout", "adm"], "--layout adm is a render's"),
    (["--layout", "atmos"], "--layout atmos is a render's"),
    (["-o", "x.mp3"], "--out 'x.mp3': play writes a WAV stream"),
    (["--gain", "1", "--loudness", "r.json"], "give --gain or --loudness, not both"),
    (["--loudness", "r.json"], "r.json: gain_db=None: not a render's loudness report"),
    (["--loudness", "big.json"], "big.json: gain_db=1e+308: not a render's loudness report "
                                 "(a <out>.loudness.json written beside a render, with a "
                                 "gain_db from -70 to 70)"),
    (["-o", ""], "--out '': play writes a WAV stream"),
])
def test_bad_input_is_one_line_with_what_is_accepted(scene_cli, tmp_path, args, message):
    (tmp_path / "r.json").write_text('{"integrated": -23}')
    (tmp_path / "big.json").write_text('{"gain_db": 1e308}')
    code, err = scene_cli(*args, "-o", str(tmp_path / "x.wav")) if "-o" not in args else \
        scene_cli(*args)
    assert code == 2
    assert message in " ".join(err.split()), err
    assert "Traceback" not in err


def test_no_sound_card_is_a_clear_error(scene_cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # as where it is not installed
    code, err = scene_cli("--gain", "0")
    assert code == 2
    assert "no sound card output here" in err and "-o - | ffplay -" in err


def test_the_sound_card_gets_the_same_frames_as_float32(scene_cli, monkeypatch, tmp_path):
    """Through sounddevice (a stand-in here: this machine has no sound card), the frames
    go to the device as float32 at the rate and width asked, the same as the file's."""
    import types

    opened: list[dict] = []
    written: list[np.ndarray] = []

    class OutputStream:
        def __init__(self, **kwargs):
            opened.append(kwargs)

        def start(self):
            pass

        def write(self, data):
            written.append(data.copy())

        def stop(self):
            pass

        def close(self):
            pass

    fake = types.SimpleNamespace(OutputStream=OutputStream, PortAudioError=OSError)
    monkeypatch.setitem(sys.modules, "sounddevice", fake)
    code, err = scene_cli("--gain", "0")
    assert code == 0, err
    assert opened == [{"samplerate": FS, "channels": 2, "dtype": "float32", "device": None}]
    card = np.concatenate(written)
    assert card.dtype == np.float32
    code, err = scene_cli("--gain", "0", "--bits", "float", "-o", str(tmp_path / "f.wav"))
    assert code == 0, err
    wav, _ = soundfile.read(tmp_path / "f.wav", dtype="float32")
    assert np.array_equal(card, wav)


def test_a_section_streams_through_a_pipe_while_it_renders(tmp_path):
    """The real rite through a real pipe: the header and the first block are read while the
    command still runs (it cannot end: the rest of the section does not fit in the pipe);
    then the whole stream parses, as long as the section, and a second run takes the
    Performance from the cache and streams the same bytes."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "SOUNDSCAPE_CACHE_DIR": str(tmp_path / "cache" / "soundscape"),  # both caches
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "soundscape", "play", "--from", "s36", "--to", "s36",
               "-o", "-"]
    runs = []
    for _ in range(2):
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=tmp_path) as process:
            head = process.stdout.read(44 + 4800 * 6)  # header, then 0.1 s of 24-bit stereo
            still_running = process.poll() is None
            rest = process.stdout.read()
            err = process.stderr.read().decode()
        assert process.returncode == 0, err
        assert still_running
        runs.append((head + rest, err))
    (first, err1), (second, err2) = runs
    assert "sequenced, now cached" in err1 and "from the cache" in err2
    assert first == second
    with wave.open(io.BytesIO(first)) as reader:
        assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (2, 3,
                                                                                         FS)
        frames = len(reader.readframes(10**9)) // 6
    section = perform_from_file(seed=0).section("s36")  # the next one's cut off, faded
    assert abs(frames / FS - (section.end - section.start)) < 0.01
    assert list((tmp_path / "cache" / "soundscape" / "performances").glob("*.pickle"))


# --- a fast start: the first block's notes shared, the court's tails kept ---------------


def test_the_first_blocks_notes_are_shared_with_the_helper_and_no_later_ones(monkeypatch,
                                                                             tmp_path):
    """With a helper process, the notes the first block waits for are asked of it at once
    (events 1 on; the main process makes event 0 and takes the last ones back while it
    waits), and nothing beyond them is asked or made until they are all in (the helper
    used to start 50 events ahead while the main process made all of them)."""
    from soundscape.sound import helper as helper_module

    asked: list[int] = []
    log = tmp_path / "made.txt"
    seen: dict[str, list] = {}
    real_ask, real_schedule = helper_module.NoteHelper._ask, helper_module.NoteHelper.schedule

    def ask(self, stop):
        before = set(self._keys)
        real_ask(self, stop)
        asked.extend(index for index in self._keys if index not in before)

    def schedule(self, index):
        if not seen:  # the first block's notes are all in: what was asked and made by then
            seen["asked"] = list(asked)
            seen["made"] = sorted(float(line.split()[1]) for line in (
                log.read_text().splitlines() if log.exists() else ()))
        real_schedule(self, index)

    monkeypatch.setattr(helper_module.NoteHelper, "_ask", ask)
    monkeypatch.setattr(helper_module.NoteHelper, "schedule", schedule)

    def recording(event, source, *, sample_rate, rng):
        with open(log, "a") as file:  # both processes: which onsets were made
            file.write(f"{os.getpid()} {event.time!r}\n")
        return noise_voice(event, source, sample_rate=sample_rate, rng=rng)

    times = (*(0.01 * i for i in range(1, 9)), *(1.0 + 0.5 * i for i in range(60)))
    perf = strokes(times=times)  # each stroke its own note (no two alike: none cached)
    perf = Performance.build([replace(event, velocity=0.2 + 0.01 * i)
                              for i, event in enumerate(perf.events)], perf.markers,
                             perf.sources)
    blocks = render_blocks(perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS,
                           seed=0, voice=recording, surroundings=Surroundings(),
                           block_frames=4800, workers=2)
    try:
        next(blocks)
    finally:
        blocks.close()
    assert seen["asked"] == list(range(1, 8))  # the first block's other notes, only them
    assert seen["made"] == list(times[:8])  # each made once, by one process or the other
    assert len(asked) > len(seen["asked"])  # then the helper goes on ahead


def _tail_render(perf, store, *, block_frames=4800):
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court
    from soundscape.sound.tailstore import stored_tail

    surroundings = Surroundings(court=load_court(load_site(), "bare"))
    listener = Listener((0.0, -20.0, 1.5), "north")
    panner = make_panner("stereo", speed_of_sound=surroundings.air.speed_of_sound)
    return render_blocks(perf, listener=listener, panner=panner, sample_rate=FS, seed=0,
                         voice=noise_voice, surroundings=surroundings,
                         block_frames=block_frames,
                         tail=stored_tail(surroundings, listener, panner, channels=2,
                                          sample_rate=FS, seed=0, store=store))


def test_the_courts_tails_kept_on_disk_give_the_same_frames(tmp_path, monkeypatch):
    """The zones' tails made by a first stream are read back by the next (none made again),
    and both give the frames of a render whose tails are made afresh, bit for bit."""
    from soundscape.sound import tailstore
    from soundscape.sound.diskcache import NoteStore

    tails: list[tailstore.StoredTail] = []
    real_init = tailstore.StoredTail.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        tails.append(self)

    monkeypatch.setattr(tailstore.StoredTail, "__init__", init)
    perf = strokes(times=tuple(0.3 + 0.41 * i for i in range(12)))
    fresh = np.concatenate(list(_tail_render(perf, None)))
    store = NoteStore(tmp_path, 1 << 30)
    first = np.concatenate(list(_tail_render(perf, store)))
    second = np.concatenate(list(_tail_render(perf, store, block_frames=FS)))
    (made, read) = tails
    assert made.made >= 1 and made.read == 0
    assert read.read == made.made and read.made == 0
    assert np.abs(fresh).max() > 0
    assert np.array_equal(first, fresh) and np.array_equal(second, fresh)


def test_a_tail_kept_for_another_listener_panner_or_seed_is_not_read(tmp_path):
    from soundscape.site.courtyard import load_site
    from soundscape.sound.buses import Upsampler
    from soundscape.sound.court import load_court
    from soundscape.sound.diskcache import NoteStore
    from soundscape.sound.tailstore import StoredTail

    surroundings = Surroundings(court=load_court(load_site(), "bare"))
    store = NoteStore(tmp_path, 1 << 30)

    def tail(listener=NORTH, layout="stereo", seed=0):
        panner = make_panner(layout, speed_of_sound=surroundings.air.speed_of_sound)
        return StoredTail(surroundings.court, listener, panner, len(panner.channels), FS,
                          surroundings.air, seed, (FS,), upsampler=Upsampler, store=store)

    zone = surroundings.court.zones[0][1]
    names = {tail().entry(zone, NORTH),
             tail(listener=Listener((0.0, -20.0, 1.5), "north")).entry(
                 zone, Listener((0.0, -20.0, 1.5), "north")),
             tail().entry(zone, Listener((0.0, 0.0, 1.5), "east")),
             tail(layout="binaural").entry(zone, NORTH),
             tail(seed=1).entry(zone, NORTH)}
    assert len(names) == 5
    assert tail().entry(zone, NORTH) in names  # and the same inputs, the same name
