"""The streaming renderer: determinism, streaming equivalence, interruption, motion, stems."""

from __future__ import annotations

import contextlib
import errno
import functools
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile

from soundscape.errors import RenderError
from soundscape.performance import Event, Marker, Performance, Source
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound import directio
from soundscape.sound.audiofile import read_wav_cues
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_audio, render_blocks
from tests.conftest import problems

FS = 48000
NORTH = Listener((0.0, 0.0, 1.5), "north")


def noise_voice(event, source, *, sample_rate, rng):
    n = round(0.3 * sample_rate)
    return rng.normal(0, 0.2, n) * np.exp(-np.arange(n) / (0.1 * sample_rate))


def scene(n_events=8, spacing=0.5, *, distinct=False):
    """Events alternating west and east; ``distinct``: each its own velocity (no cache hits)."""
    sources = {"w": Source("w", "bianzhong", "鐘", "bells", "west", (-10.0, 0.0, 1.5)),
               "e": Source("e", "jiangu", "鼓", "drum", "east", (10.0, 0.0, 1.5),
                           struck_face=(-1.0, 0.0, 0.0))}
    events = [Event(0.1 + spacing * i, 0.25, "we"[i % 2], None,
                    0.9 - 0.001 * i if distinct else 0.9, "strike", "c")
              for i in range(n_events)]
    markers = [Marker(0.0, "section", "右設樂", "she yue", "s1"),
               Marker(1.5, "music", "奏肆夏", "zou sixia", "m1")]
    return Performance.build(events, markers, sources)


def blocks_of(perf, *, listener=NORTH, block_frames=FS, layout="stereo", seed=0):
    return np.concatenate(list(render_blocks(
        perf, listener=listener, panner=make_panner(layout), sample_rate=FS, seed=seed,
        voice=noise_voice, surroundings=Surroundings(), block_frames=block_frames)))


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_blas_keeps_its_threads_between_blocks_and_after_unfinished_renders():
    from threadpoolctl import ThreadpoolController

    def blocks():
        return render_blocks(scene(), listener=NORTH, panner=make_panner("stereo"),
                             sample_rate=FS, seed=0, voice=noise_voice,
                             surroundings=Surroundings(), block_frames=FS // 4)

    with ThreadpoolController().limit(limits=2, user_api="blas"):
        own = _blas_threads()
        if not own or set(own) != {2}:
            pytest.skip("no BLAS whose threads threadpoolctl can set")
        first, second = blocks(), blocks()
        next(first)
        assert _blas_threads() == own  # the consumer runs with the process's own
        next(second)
        next(first)  # interleaved, then both left unfinished
        del first, second
        assert _blas_threads() == own


def test_a_render_off_the_main_thread_is_the_same_bits():
    # a Dask worker renders on a thread of its own: its products must run on one BLAS
    # thread as the main thread's do (they differed by ~4e-9 in hoa3's 3rd orders)
    import threading

    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court
    from soundscape.sound.panning import Ambisonic

    court = Surroundings(court=load_court(load_site()))
    made = {}

    def render(name):
        try:
            made[name] = np.concatenate(list(render_blocks(
                scene(), listener=NORTH, panner=Ambisonic(3), sample_rate=FS, seed=0,
                voice=noise_voice, surroundings=court, block_frames=FS)))
        except BaseException as error:  # raised below, in the test's thread
            made[name] = error

    with threadpool_at(2):
        render("main")
        worker = threading.Thread(target=render, args=("worker",))
        worker.start()
        worker.join()
    for result in made.values():
        if isinstance(result, BaseException):
            raise result
    assert made["worker"].tobytes() == made["main"].tobytes()


@contextlib.contextmanager
def threadpool_at(threads: int):
    """The BLAS libraries at ``threads`` (a test of one-thread products needs more to
    differ from), or skip where threadpoolctl cannot set them."""
    from threadpoolctl import ThreadpoolController

    with ThreadpoolController().limit(limits=threads, user_api="blas"):
        if set(_blas_threads()) != {threads}:
            pytest.skip("no BLAS whose threads threadpoolctl can set")
        yield


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    perf = scene()
    paths = []
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        result = render_audio(perf, tmp_path / f"{name}.wav", listener=NORTH, seed=seed,
                              voice=noise_voice)
        paths.append(result.files[0])
    a, b, c = (p.read_bytes() for p in paths)
    assert a == b
    assert a != c


@pytest.mark.parametrize("layout", ["stereo", "hoa3"])
def test_block_size_does_not_change_the_audio(layout):
    perf = scene()
    small = blocks_of(perf, block_frames=4801, layout=layout)
    large = blocks_of(perf, block_frames=3 * FS, layout=layout)
    assert small.shape == large.shape
    assert np.array_equal(small, large)


def test_output_covers_ring_and_delay():
    perf = scene(n_events=1)
    out = blocks_of(perf)
    assert len(out) >= round((0.1 + 0.3 + 10.0 / 343.0) * FS)
    assert np.abs(out[-200:]).max() < 1e-3 * np.abs(out).max()


def test_a_part_cut_before_the_end_ends_at_the_cut_faded_out():
    """A part cut while sounds were still to come (a section's music, the bed) ends at the
    cut, its last PART_FADE_S times cos² of the render that runs on (which ran on into
    digital silence after the music stopped mid-phrase); before the fade, the same."""
    from soundscape.sound.render import PART_FADE_S

    whole = scene(n_events=16, spacing=0.4)
    part = whole.between(0.0, 5.05)  # events at 0.1 … 6.1 s: those after 5.05 s left out
    assert part.info.cut_at == 5.05 and whole.between(0.0, 9.0).info.cut_at is None
    faded = blocks_of(part, block_frames=4800)
    rung = np.concatenate(list(render_blocks(
        part, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=Surroundings(), block_frames=4800,
        fade_at_cut=False)))
    end, fade = round(5.05 * FS), round(PART_FADE_S * FS)
    assert len(faded) == end and len(rung) > end
    assert np.array_equal(faded[:end - fade], rung[:end - fade])
    k = np.arange(fade) + 0.5
    envelope = np.cos(0.5 * np.pi * k / fade) ** 2
    assert np.allclose(faded[end - fade:], rung[end - fade:end] * envelope[:, None],
                       atol=1e-7)
    assert np.abs(faded[-48:]).max() < 1e-4 * np.abs(faded).max()


def test_a_cut_of_a_cut_keeps_the_earlier_cut_on_its_clock():
    whole = scene(n_events=16, spacing=0.4)
    part = whole.between(1.0, 5.05).between(0.5, 10.0)
    assert part.info.cut_at == pytest.approx(3.55)
    assert whole.between(1.0, 20.0).info.cut_at is None


@pytest.mark.parametrize("layout", ["stereo", "hoa3", "binaural"])
def test_note_cache_changes_nothing_but_the_work(layout):
    perf = scene(12)
    calls = []

    def counting(event, source, *, sample_rate, rng):
        calls.append(event.source)
        return noise_voice(event, source, sample_rate=sample_rate, rng=rng)

    cached = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner(layout), sample_rate=FS, seed=5,
        voice=counting, surroundings=Surroundings(), block_frames=FS)))
    assert 2 <= len(calls) <= 6  # ≤ 3 variants for each of the two repeated notes
    calls.clear()
    uncached = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner(layout), sample_rate=FS, seed=5,
        voice=counting, surroundings=Surroundings(), block_frames=FS, cache_bytes=0)))
    assert len(calls) == 12
    assert np.array_equal(cached, uncached)


def test_repeated_notes_keep_some_variation_and_land_on_the_sample_grid():
    sources = {"w": Source("w", "bianzhong", "鐘", "bells", "west", (-10.0, 0.0, 1.5))}
    times = [0.1 + 0.5 * i + (i % 4) * 0.3 / FS for i in range(9)]  # off the sample grid
    perf = Performance.build([Event(t, 0.25, "w", None, 0.9, "strike", "c") for t in times],
                             [], sources)
    out = blocks_of(perf)
    onset = round(times[0] * FS)
    first = next(i for i in range(len(out)) if out[i].any())
    renderings: list[np.ndarray] = []
    for t in times:  # repeats are one of three renderings (to -60 dB), on the grid
        segment = out[first + round(t * FS) - onset:][:FS // 4]
        if not any(np.allclose(segment, r, rtol=0, atol=1e-3 * np.abs(r).max())
                   for r in renderings):
            renderings.append(segment)
    assert 2 <= len(renderings) <= 3


def _levels(out, start_s, stop_s):
    part = out[round(start_s * FS):round(stop_s * FS)]
    return np.sum(part[:, 0] ** 2), np.sum(part[:, 1] ** 2)


def test_walking_listener_turns_around():
    sources = {"w": Source("w", "bianzhong", "鐘", "bells", "west", (-10.0, 0.0, 1.5))}
    events = [Event(t, 0.25, "w", None, 0.9, "strike", "c") for t in (0.2, 3.2)]
    perf = Performance.build(events, [], sources)
    path = ListenerPath(((0.0, (0, 0, 1.5), "north"), (1.0, (0, 0, 1.5), "east"),
                         (2.0, (0, 0, 1.5), "south")))
    out = blocks_of(perf, listener=path)
    left, right = _levels(out, 0.2, 0.6)
    assert left > 10 * right  # facing north, the west is on the left
    left, right = _levels(out, 3.2, 3.6)
    assert right > 10 * left  # facing south, it is on the right


def test_moving_source_and_event_position_override():
    sources = {"v": Source("v", "voice", "人", "caller", "voice", (-10.0, 0.0, 1.5),
                           moves=((2.0, (10.0, 0.0, 1.5)),))}
    events = [Event(0.2, 0.25, "v", None, 0.9, "call", "c"),
              Event(3.0, 0.25, "v", None, 0.9, "call", "c"),
              Event(6.0, 0.25, "v", None, 0.9, "call", "c", position=(-10.0, 0.0, 1.5))]
    out = blocks_of(Performance.build(events, [], sources))
    first, second, third = _levels(out, 0.2, 0.6), _levels(out, 3.0, 3.4), _levels(out, 6, 6.4)
    assert first[0] > 10 * first[1]
    assert second[1] > 10 * second[0]
    assert third[0] > 10 * third[1]


def test_stems_sum_to_the_stereo_mix(tmp_path):
    perf = scene()
    mix = render_audio(perf, tmp_path / "mix.wav", listener=NORTH, voice=noise_voice,
                       bits="float")
    stems = render_audio(perf, tmp_path / "st.wav", listener=NORTH, voice=noise_voice,
                         bits="float", layout="stems")
    assert [p.name for p in stems.files] == ["st.bianzhong.wav", "st.jiangu.wav"]
    total = sum(soundfile.read(p, always_2d=True)[0] for p in stems.files)
    stereo = soundfile.read(mix.files[0], always_2d=True)[0]
    assert np.abs(total - stereo).max() < 1e-6
    assert stems.report.gain_db == pytest.approx(mix.report.gain_db)


def test_stems_share_one_files_staging_memory(tmp_path, monkeypatch):
    """Each output file is staged for the disk in memory (``directio.STAGE_BYTES``, so that
    the disk has several requests at a time); the stems' files share that memory, not one
    each, down to ``directio.MIN_STAGE_BYTES``."""
    staged: dict[str, int] = {}
    init = directio.DirectWriter.__init__

    def recording(self, path, stage_bytes=directio.STAGE_BYTES):
        init(self, path, stage_bytes)
        staged[Path(path).name] = len(self._stage)

    monkeypatch.setattr(directio.DirectWriter, "__init__", recording)
    perf = scene()
    render_audio(perf, tmp_path / "mix.wav", listener=NORTH, voice=noise_voice)
    render_audio(perf, tmp_path / "st.wav", listener=NORTH, voice=noise_voice, layout="stems")
    outputs = {name: size for name, size in staged.items() if name.endswith(".wav")}
    mix = [size for name, size in outputs.items() if "mix" in name]
    stems = [size for name, size in outputs.items() if "st." in name]
    assert mix == [directio.STAGE_BYTES] and len(stems) == 2
    assert stems == [directio.STAGE_BYTES // 2] * 2
    assert staged["raw.f32"] == directio.STAGE_BYTES  # pass 1's file, alone


@pytest.mark.parametrize("layout", ["foa", "hoa3", "ring8", "5.1", "binaural"])
def test_layouts_write_their_channel_counts(tmp_path, layout):
    result = render_audio(scene(4), tmp_path / "x.wav", listener=NORTH, voice=noise_voice,
                          layout=layout, bits="16")
    expected = {"foa": 4, "hoa3": 16, "ring8": 8, "5.1": 6, "binaural": 2}[layout]
    assert soundfile.info(result.files[0]).channels == expected


def test_markers_are_cues_and_sidecar(tmp_path):
    result = render_audio(scene(), tmp_path / "m.wav", listener=NORTH, voice=noise_voice,
                          sample_rate=44100)
    cues = read_wav_cues(result.files[0])
    assert [(c.frame, c.label) for c in cues] == [(0, "右設樂 | she yue"),
                                                 (66150, "奏肆夏 | zou sixia")]
    assert "奏肆夏" in result.sidecar.read_text(encoding="utf-8")


def test_a_gain_given_is_applied_as_it_is_not_normalised(tmp_path):
    """A section rendered alone was always normalised on its own, so a quiet one's bed came
    up by 30 dB; --gain renders it at a given level (the whole rite's), limiter kept."""
    normal = render_audio(scene(), tmp_path / "a.wav", listener=NORTH, voice=noise_voice,
                          bits="float")
    given = normal.report.gain_db - 12.0
    quiet = render_audio(scene(), tmp_path / "b.wav", listener=NORTH, voice=noise_voice,
                         bits="float", gain_db=given)
    assert quiet.report.gain_db == given and quiet.report.limiter_db == 0
    a, b = (soundfile.read(r.files[0])[0] for r in (normal, quiet))
    np.testing.assert_allclose(b, a * 10 ** (-12.0 / 20), rtol=1e-5, atol=1e-9)
    assert abs(quiet.report.output_lufs - (normal.report.output_lufs - 12.0)) < 0.01
    assert quiet.report.target_lufs == pytest.approx(quiet.report.output_lufs, abs=0.01)
    with pytest.raises(RenderError, match=r"gain_db=99.0, accepted: a finite number from -70"):
        render_audio(scene(), tmp_path / "c.wav", listener=NORTH, voice=noise_voice,
                     gain_db=99.0)


def test_bad_options_name_value_and_accepted(tmp_path):
    with pytest.raises(RenderError, match=r"sample rate=22050.*44100, 48000, 96000"):
        render_audio(scene(), tmp_path / "x.wav", listener=NORTH, sample_rate=22050,
                     voice=noise_voice)
    with pytest.raises(RenderError, match=r"layout='quad'.*stereo"):
        render_audio(scene(), tmp_path / "x.wav", listener=NORTH, layout="quad",
                     voice=noise_voice)
    assert list(tmp_path.iterdir()) == []


def test_interrupt_in_the_middle_leaves_nothing(tmp_path):
    calls = []

    def voice(event, source, *, sample_rate, rng):
        calls.append(event)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return noise_voice(event, source, sample_rate=sample_rate, rng=rng)

    with pytest.raises(KeyboardInterrupt):
        render_audio(scene(distinct=True), tmp_path / "out.wav", listener=NORTH, voice=voice)
    assert list(tmp_path.iterdir()) == []


def test_killed_render_leaves_no_output_file(tmp_path):
    script = textwrap.dedent(f"""
        import time, numpy as np, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from tests.sound.test_render import scene, noise_voice, NORTH
        from soundscape.sound.render import render_audio
        def slow(event, source, *, sample_rate, rng):
            time.sleep(0.2)
            return noise_voice(event, source, sample_rate=sample_rate, rng=rng)
        render_audio(scene(40, distinct=True), {str(tmp_path / 'out.wav')!r}, listener=NORTH,
                     voice=slow)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not any(p.name.startswith(".out.render-") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, "render never started"
        time.sleep(0.05)
    time.sleep(0.5)  # half-way through the events
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "out.wav").exists()
    assert not any(p.suffix == ".wav" for p in tmp_path.iterdir())
    # the dead run's staging folder (raw samples, part files) is the next run's to remove
    left = [p.name for p in tmp_path.iterdir()]
    assert left and all(name.startswith(f".out.render-{proc.pid}-") for name in left)
    render_audio(scene(2), tmp_path / "other.wav", listener=NORTH, voice=noise_voice)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "other.wav", "other.wav.loudness.json", "other.wav.markers.txt"]


def test_ctrl_c_with_a_helper_process_prints_no_traceback_and_leaves_nothing(tmp_path):
    """The child sets its own Ctrl-C handling: started from a background job, it inherits
    SIGINT ignored (and Python then installs no KeyboardInterrupt), which once made this
    test fail wherever the suite ran in the background."""
    made = tmp_path.parent / f"{tmp_path.name}.notes"  # who made each note (pids), outside
    script = textwrap.dedent(f"""
        import os, signal, time, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever we inherited
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from tests.sound.test_render import scene, noise_voice, NORTH
        from soundscape.sound.render import render_audio
        def slow(event, source, *, sample_rate, rng):
            with open({str(made)!r}, "a") as log:
                log.write(f"{{os.getpid()}}\\n")
            time.sleep(0.1)
            return noise_voice(event, source, sample_rate=sample_rate, rng=rng)
        try:
            render_audio(scene(80, spacing=0.05, distinct=True), {str(tmp_path / 'out.wav')!r},
                         listener=NORTH, voice=slow, workers=2)
        except KeyboardInterrupt:
            sys.exit(130)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True,
                            start_new_session=True)

    def helper_at_work() -> bool:  # a note made by a process other than the main one
        pids = made.read_text().split() if made.exists() else []
        return any(pid != str(proc.pid) for pid in pids)

    deadline = time.monotonic() + 60  # bounds a failure only
    while not helper_at_work():
        assert proc.poll() is None and time.monotonic() < deadline, "helper never started"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole process group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert list(tmp_path.iterdir()) == []



def test_cli_renders_a_section_with_walking_listener(tmp_path, soundscape_cli):
    walk = tmp_path / "walk.toml"
    walk.write_text('[[waypoint]]\ntime = 0\nplace = "men"\n\n'
                    '[[waypoint]]\ntime = 40\nplace = "zhongting"\nfacing = "north"\n',
                    encoding="utf-8")
    out = tmp_path / "part.flac"  # no --format: the ending says FLAC
    code, err = soundscape_cli("render", "--from", "s09", "--to", "s09", "--path", str(walk),
                               "--layout", "foa", "--bits", "16", "--rate", "44100", "--quiet",
                               "--out", str(out), cwd=tmp_path)
    assert code == 0, err
    info = soundfile.info(out)
    assert (info.channels, info.samplerate, info.format) == (4, 44100, "FLAC")
    assert out.with_suffix(".mid").is_file()
    assert problems(err) == []  # --quiet: no bar, no report (the data line and stages stay)


@pytest.mark.parametrize(("args", "message"), [
    (["--layout", "quad"], "--layout 'quad', accepted: a layout name (stereo"),
    (["--listener", "1,2"], "coordinates must be x,y,z"),
    (["--listener", "0,0,1.5", "--facing", "up"], "facing='up'"),
    (["--format", "flac", "--bits", "float", "--out", "x.flac"], "accepted: wav/16"),
    (["--format", "flac"], "--format flac does not match --out"),
    (["--out", "x.ogg"], "ending '.ogg' is not an output format; accepted: .wav (wav), "
                         ".flac (flac)"),
    (["--seed", "-1"], "-1 is not in the range 0<=x<=9223372036854775807"),
    (["--target", "nan"], "--target nan, accepted: a finite number from -70 to 0"),
    (["--target", "inf"], "--target inf, accepted"),
    (["--target", "1e308"], "--target 1e+308, accepted"),
    (["--gain", "nan"], "--gain nan, accepted: a finite number from -70 to 70"),
    (["--gain", "80"], "--gain 80.0, accepted: a finite number from -70 to 70"),
    (["--gain", "6", "--layout", "adm"], "--layout adm is delivered at a loudness target: "
                                        "give --target, not --gain"),
    (["--listener", "0,0,1.5", "--facing", "nan"], "--facing 'nan', accepted"),
    (["--listener", "0,0,1.5", "--facing", "inf"], "--facing 'inf', accepted"),
    (["--layout", "30,30"], "--layout '30,30': speakers 1 and 2 stand in the same direction"),
    (["--layout", "nan,inf"], "--layout 'nan,inf': speaker 1 azimuth nan"),
    (["--layout", ",".join(str(a) for a in range(360))], "360 loudspeakers, accepted: 2 to 64"),
    (["--layout", "7"], "--layout '7', accepted: a layout name (stereo, binaural, foa, hoa3, "
                        "ring8, 5.1, 7.1, 7.1.4, stems, adm, atmos) or 2 to 64"),
    (["--layout", "hoa3", "--out", "x.flac"], "format=flac holds 1 to 8 channels; this layout "
                                              "has 16: use wav"),
    (["--sample-rate", "22050"], "'22050' is not one of '44100', '48000', '96000'"),
    (["--rate", "1000000000"], "is not one of '44100', '48000', '96000'"),
])
def test_cli_bad_options_exit_2_with_message(tmp_path, soundscape_cli, monkeypatch, args,
                                             message):
    from soundscape.cli._common import Sequencing

    def never(*_args, **_kwargs):
        raise AssertionError("bad options must be refused before sequencing")

    monkeypatch.setattr(Sequencing, "perform", never)
    monkeypatch.setattr(Sequencing, "perform_cached", never)
    code, err = soundscape_cli("render", "--from", "s10", "--to", "s10",
                               "--out", str(tmp_path / "x.wav"), *args, cwd=tmp_path)
    assert code == 2
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_cli_help_lists_the_layouts():
    from click.testing import CliRunner

    from soundscape.cli.render import command

    result = CliRunner().invoke(command, ["--help"], terminal_width=200)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "stereo, binaural, foa, hoa3, ring8, 5.1, 7.1, 7.1.4, stems" in text
    assert "--sample-rate" in text


@functools.cache
def _section_s10():
    from soundscape.sequence.planner import perform_from_file

    return perform_from_file(None, from_section="s10", to_section="s10")


def _sequence_once(monkeypatch):
    """The fault tests render s10, sequenced once (a fixed, short performance)."""
    from soundscape.cli._common import Sequencing

    monkeypatch.setattr(Sequencing, "perform", lambda *_a, **_k: _section_s10())
    monkeypatch.setattr(Sequencing, "perform_cached", lambda *_a, **_k: (_section_s10(), True))


def test_a_part_sequenced_before_is_read_from_the_cache_not_sequenced_again(
        tmp_path, soundscape_cli, monkeypatch):
    from soundscape.sequence import planner

    monkeypatch.setenv("SOUNDSCAPE_CACHE_DIR", str(tmp_path / "cache"))
    made = []
    real = planner.perform_from_file
    monkeypatch.setattr(planner, "perform_from_file",
                        lambda *a, **k: made.append(1) or real(*a, **k))

    def midi(name: str, *more: str) -> tuple[bytes, str]:
        code, err = soundscape_cli("render", "--from", "s10", "--to", "s10", "--format",
                                   "midi", "-o", name, *more, cwd=tmp_path)
        assert code == 0, err
        return (tmp_path / name).read_bytes(), err

    first, err = midi("a.mid")
    assert len(made) == 1 and "sequencing the rite" in err
    again, err = midi("b.mid")
    assert len(made) == 1 and "sequencing" not in err  # read back, the same MIDI bytes
    assert again == first
    assert list((tmp_path / "cache" / "performances").glob("*.pickle"))
    fresh, _ = midi("c.mid", "--no-cache")  # neither read nor written with --no-cache
    assert len(made) == 2 and fresh == first


def _old_outputs(folder: Path) -> dict[str, bytes]:
    folder.mkdir(exist_ok=True)
    old = {"x.wav": b"old audio", "x.mid": b"old midi"}
    for name, data in old.items():
        (folder / name).write_bytes(data)
    return old


def test_a_full_disk_is_one_line_naming_the_output_and_keeps_the_old_outputs(
        tmp_path, soundscape_cli, monkeypatch):
    from soundscape.sound.audiofile import BlockWriter

    _sequence_once(monkeypatch)
    old = _old_outputs(tmp_path / "out")

    def full(self, block):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(BlockWriter, "_put", full)
    code, err = soundscape_cli("render", "-o", "out/x.wav", "--quiet", "--jobs", "1",
                               cwd=tmp_path)
    assert code == 2
    assert problems(err) == ["error: out/x.wav: no space left on the device; free some space "
                             "or write elsewhere"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == old


def test_a_disk_that_fills_under_the_output_is_one_line_and_keeps_the_old_outputs(
        tmp_path, soundscape_cli, monkeypatch):
    """The output is written by libsndfile through a callback into ``directio``: the full
    disk must come out as the one line, not as a traceback cffi prints from the callback."""
    from soundscape.sound import directio

    _sequence_once(monkeypatch)
    old = _old_outputs(tmp_path / "out")
    real = directio.DirectWriter._write_direct

    def full(self, chunk, offset):
        if self.name.endswith(".wav") and offset > 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.name)
        return real(self, chunk, offset)

    monkeypatch.setattr(directio.DirectWriter, "_write_direct", full)
    unraisable: list = []  # where cffi sends an error raised in a callback
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    code, err = soundscape_cli("render", "-o", "out/x.wav", "--quiet", "--jobs", "1",
                               cwd=tmp_path)
    assert code == 2
    assert problems(err) == ["error: out/x.wav: no space left on the device; free some space "
                             "or write elsewhere"]
    assert not unraisable and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == old


def test_a_read_only_file_system_is_one_line_naming_the_output(tmp_path, soundscape_cli,
                                                               monkeypatch):
    _sequence_once(monkeypatch)
    old = _old_outputs(tmp_path / "out")
    real_mkdir = os.mkdir

    def read_only(path, *args, **kwargs):  # as a read-only mount answers
        if ".render-" in str(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", read_only)
    code, err = soundscape_cli("render", "-o", "out/x.wav", "--quiet", cwd=tmp_path)
    assert code == 2
    [line] = problems(err)
    assert line.startswith("error: out/x.wav: ") and "read-only" in line.lower()
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == old


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders anyway "
                    "(the injected EROFS test covers this)")
def test_a_read_only_folder_is_one_line_naming_the_output(tmp_path, soundscape_cli,
                                                          monkeypatch):
    _sequence_once(monkeypatch)
    old = _old_outputs(tmp_path / "out")
    (tmp_path / "out").chmod(0o555)
    try:
        code, err = soundscape_cli("render", "-o", "out/x.wav", "--quiet", cwd=tmp_path)
    finally:
        (tmp_path / "out").chmod(0o755)
    assert code == 2
    assert problems(err) == ["error: out/x.wav: permission denied"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == old


def test_a_libsndfile_write_error_names_the_output(tmp_path, monkeypatch):
    def failing(self, data):
        raise soundfile.LibsndfileError(0x1, prefix="Error writing: ")

    monkeypatch.setattr(soundfile.SoundFile, "write", failing)  # FLAC goes through write
    with pytest.raises(RenderError, match=f"^{tmp_path / 'x.flac'}: Error writing: "):
        render_audio(scene(2), tmp_path / "x.flac", listener=NORTH, voice=noise_voice,
                     file_format="flac")
    assert list(tmp_path.iterdir()) == []


def test_too_little_free_space_is_refused_before_rendering(tmp_path, monkeypatch):
    import shutil

    from soundscape.sound import render

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(render.shutil, "disk_usage",
                        lambda _path: usage._replace(free=100 << 20))
    perf = scene()
    perf_long = Performance.build([*perf.events, Event(3600.0, 0.25, "w", None, 0.9, "strike",
                                                       "c")], [], perf.sources)
    with pytest.raises(RenderError, match=r"^x\.wav: not enough free space for this render: "
                                          r"it needs about 2\.\d GiB .*, 100 MiB free"):
        render_audio(perf_long, tmp_path / "x.wav", listener=NORTH, voice=noise_voice)
    assert list(tmp_path.iterdir()) == []
    # an hour of stereo at 48 kHz, 24-bit: float32 scratch and the WAV
    assert render.space_needed(3600, 48000, 2, "24") == pytest.approx(
        (3600 + 30) * 48000 * 2 * (4 + 3))


def test_the_midi_and_the_audio_are_replaced_together(tmp_path, soundscape_cli,
                                                      monkeypatch):
    from soundscape.sound import render

    _sequence_once(monkeypatch)
    old = _old_outputs(tmp_path / "out")

    def failing(*_args, **_kwargs):
        raise RenderError("the audio failed")

    monkeypatch.setattr(render, "render_audio", failing)
    code, err = soundscape_cli("render", "-o", "out/x.wav", "--quiet", cwd=tmp_path)
    assert code == 2 and "the audio failed" in err
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == old  # no new MIDI


@pytest.mark.parametrize(("waypoints", "message"), [
    ('time = 0\nplace = "men"\n\n[[waypoint]]\ntime = -5.0\nplace = "men"',
     "waypoint[1]: time = -5.0 is not after waypoint[0]'s 0.0"),
    ('time = 0\nplace = "nowhere"', "waypoint[0]: place: place 'nowhere' is unknown"),
    ('time = 0\nposition = [1, 2]', "waypoint[0]: position = [1, 2], accepted: [x, y, z]"),
    ('time = 0\nplace = "men"\nfacing = "up"', "waypoint[0]: facing='up'"),
])
def test_cli_bad_walk_names_file_and_waypoint(tmp_path, soundscape_cli, waypoints,
                                              message):
    walk = tmp_path / "walk.toml"
    walk.write_text(f"[[waypoint]]\n{waypoints}\n", encoding="utf-8")
    code, err = soundscape_cli("render", "--from", "s10", "--to", "s10", "--path", str(walk),
                               "--out", str(tmp_path / "x.wav"), cwd=tmp_path)
    assert code == 2
    assert f"{walk}: {message}" in err
    assert not (tmp_path / "x.wav").exists()


@pytest.mark.parametrize("listener", [NORTH, ListenerPath(((0.0, (0, 0, 1.5), "north"),
                                                           (3.0, (0, 0, 1.5), "east")))])
def test_a_helper_process_changes_nothing_but_the_speed(listener):
    perf = scene(30, spacing=0.2)
    alone = blocks_of(perf, listener=listener)
    helped = np.concatenate(list(render_blocks(
        perf, listener=listener, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=Surroundings(), block_frames=FS, workers=2)))
    assert np.array_equal(alone, helped)


@pytest.mark.parametrize("slow", ["helper", "main"])
def test_a_note_goes_to_whoever_claims_it_first_and_the_bytes_stay(monkeypatch, slow):
    """A slow helper leaves the notes it has not started to the main process, which makes
    them itself (and later ones while it waits); a slow main process gets them from the
    helper. Same bytes either way."""
    from soundscape.sound import helper

    claim, taken = helper._Claims.claim, []

    def slow_claim(self, index, who):
        if who == (helper._HELPER if slow == "helper" else helper._MAIN):
            time.sleep(0.02)
        won = claim(self, index, who)
        if won and who == helper._MAIN:
            taken.append(index)
        return won

    monkeypatch.setattr(helper._Claims, "claim", slow_claim)  # the fork inherits it
    perf = scene(120, spacing=0.05, distinct=True)  # the helper starts 50 events ahead
    alone = blocks_of(perf, listener=NORTH)
    helped = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=Surroundings(), block_frames=FS, workers=2)))
    assert np.array_equal(alone, helped)
    if slow == "helper":
        assert taken


def test_the_main_process_makes_later_notes_while_the_helper_makes_the_one_it_needs(
        monkeypatch):
    """A helper slow at making notes: the main process, waiting for the one in hand, makes
    the last notes queued (the helper skips them). Same bytes as one process."""
    from soundscape.sound import buses, helper

    main_pid, compute, made_ahead = os.getpid(), buses.Buses.compute, []
    make_a_later_note = helper.NoteHelper._make_a_later_note

    def slow_in_the_helper(self, index):
        if os.getpid() != main_pid:
            time.sleep(0.03)
        return compute(self, index)

    def counted(self):
        made = make_a_later_note(self)
        made_ahead.append(made)
        return made

    monkeypatch.setattr(buses.Buses, "compute", slow_in_the_helper)  # the fork inherits it
    monkeypatch.setattr(helper.NoteHelper, "_make_a_later_note", counted)
    perf = scene(120, spacing=0.05, distinct=True)
    alone = blocks_of(perf, listener=NORTH)
    helped = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=Surroundings(), block_frames=FS, workers=2)))
    assert np.array_equal(alone, helped)
    assert any(made_ahead)


@pytest.mark.skipif(not Path("/proc/sys/fs/pipe-max-size").exists(), reason="Linux pipes")
def test_the_helpers_notes_come_through_a_pipe_as_wide_as_the_system_allows(monkeypatch):
    """A note of a few hundred KiB goes in one write, not 64 KiB at a time as the main
    process's receiving thread gets the GIL (whole rite: 5.6 s of the helper's time in
    sending, 2.2 s with the wider pipe)."""
    import fcntl

    from soundscape.sound import helper

    widths, widen = [], helper._widen

    def measured(end):
        widen(end)
        widths.append(fcntl.fcntl(end.fileno(), fcntl.F_GETPIPE_SZ))

    monkeypatch.setattr(helper, "_widen", measured)
    perf = scene(20, distinct=True)
    list(render_blocks(perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS,
                       seed=0, voice=noise_voice, surroundings=Surroundings(),
                       block_frames=FS, workers=2))
    assert widths == [int(Path("/proc/sys/fs/pipe-max-size").read_text())]
    assert widths[0] > 64 << 10


def test_the_helpers_notes_come_through_shared_memory_not_the_pipe(monkeypatch):
    """The main process reads only where each note lies from the pipe (a few dozen bytes
    and its pickle's header), never its samples: they are copied once out of the ring.
    Same bytes as one process."""
    from soundscape.sound import helper

    reads, read = [], helper._Incoming.read

    def counted(self, size):
        reads.append(size)
        return read(self, size)

    monkeypatch.setattr(helper._Incoming, "read", counted)  # the receiving thread's
    perf = scene(20, distinct=True)
    helped = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=Surroundings(), block_frames=FS, workers=2)))
    assert np.array_equal(blocks_of(perf), helped)
    assert reads and max(reads) < 1024  # a 0.3 s note is 56 KiB of float32 or more


def two_lengths_voice(event, source, *, sample_rate, rng):
    """Every other event 0.1 s long, the rest 0.6 s (by the velocity's last digit)."""
    n = round((0.6 if round(event.velocity * 1000) % 2 else 0.1) * sample_rate)
    return rng.normal(0, 0.2, n) * np.exp(-np.arange(n) / (0.1 * sample_rate))


def test_notes_larger_than_the_free_ring_go_down_the_pipe(monkeypatch):
    """A ring of 100 000 bytes: a 0.6 s note (over 100 000 bytes) never fits and comes
    through the pipe, a 0.1 s one does when there is room (the first always). The bytes
    are the same as one process's. The helper makes every note asked of it: on a loaded
    machine the main process otherwise claimed them all before the helper started, and
    nothing came through either way."""
    from soundscape.sound import helper

    taken, take = [], helper._Ring.take
    claim = helper._Claims.claim

    def helper_first(self, index, who):
        if who == helper._MAIN and self._owner[index] == helper._FREE:
            return False  # left to the helper, which the main process then waits for
        return claim(self, index, who)

    def counted(self, offset, size):
        taken.append(size)
        return take(self, offset, size)

    big, read = [], helper._Incoming.read

    def seen(self, size):
        if size > 1024:
            big.append(size)
        return read(self, size)

    monkeypatch.setattr(helper.NoteHelper, "_RING_BYTES", 100_000)
    monkeypatch.setattr(helper._Ring, "take", counted)
    monkeypatch.setattr(helper._Incoming, "read", seen)
    monkeypatch.setattr(helper._Claims, "claim", helper_first)
    perf = scene(40, spacing=0.05, distinct=True)
    alone, helped = (np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=two_lengths_voice, surroundings=Surroundings(), block_frames=FS,
        workers=workers))) for workers in (1, 2))
    assert np.array_equal(alone, helped)
    assert taken and big  # both ways used
    # nothing larger than the ring went into it, the larger notes came by the pipe; a short
    # note may come by the pipe too, when the main process has not yet freed room for it
    assert max(taken) < 100_000 < max(big)


def test_the_ring_places_arrays_in_turn_wraps_and_refuses_what_is_not_free():
    """Arrays at 64-byte boundaries one after another; one that would pass the end starts
    the next lap, and only once the main process has released enough of the last."""
    from soundscape.sound.helper import _Ring

    ring = _Ring(multiprocessing.get_context("fork"), 1024)
    notes = [np.full(75, i, np.float32) for i in range(5)]  # 300 bytes: 320 in the ring
    bytes_of = [memoryview(note).cast("B") for note in notes]
    assert ring.place(bytes_of[:1]) == ([0], 320)
    assert ring.place(bytes_of[1:3]) == ([320, 640], 960)
    assert ring.place(bytes_of[3:4]) is None  # 64 bytes left in this lap, none before
    ring.release(320)  # the first copied out: the next lap starts where it was
    assert ring.place(bytes_of[3:4]) == ([0], 1344)
    assert ring.place(bytes_of[4:5]) is None
    for offset, note in [(320, notes[1]), (640, notes[2]), (0, notes[3])]:
        assert np.array_equal(ring.take(offset, 300).view(np.float32), note)


def test_the_helper_reads_requests_split_across_reads():
    """Bare 8-byte indices, however the pipe cuts them, until the stop; an end without
    it is EOF (the main process died)."""
    from soundscape.sound import helper

    ours, theirs = multiprocessing.Pipe(duplex=False)
    wanted = [3, 70_000, 2**40]
    data = b"".join(helper._INDEX.pack(i) for i in [*wanted, helper._STOP])
    requested = helper._requested(ours)
    os.write(theirs.fileno(), data[:13])  # an index and 5 bytes of the next
    assert next(requested) == 3
    os.write(theirs.fileno(), data[13:19])
    assert next(requested) == 70_000
    os.write(theirs.fileno(), data[19:])
    assert list(requested) == wanted[2:]
    helper._ask_for(theirs, [7])
    theirs.close()
    requested = helper._requested(ours)
    assert next(requested) == 7
    with pytest.raises(EOFError):
        next(requested)


def failing_voice(event, source, *, sample_rate, rng):
    if event.velocity < 0.88:
        raise RenderError("this note cannot be played")
    return noise_voice(event, source, sample_rate=sample_rate, rng=rng)


def test_an_error_in_the_helper_process_reaches_the_caller():
    perf = scene(30, distinct=True)
    with pytest.raises(RenderError, match="cannot be played"):
        list(render_blocks(perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS,
                           seed=0, voice=failing_voice, surroundings=Surroundings(),
                           block_frames=FS, workers=2))


_MAIN_PID = os.getpid()


def failing_ahead(event, source, *, sample_rate, rng):
    """Fails in the helper only, on the notes well ahead of the main process."""
    if os.getpid() != _MAIN_PID and event.time > 2.0:
        raise RenderError("phone 'hello' cannot be said")
    return noise_voice(event, source, sample_rate=sample_rate, rng=rng)


def test_the_helpers_error_is_raised_even_when_more_notes_are_asked_for_first(monkeypatch):
    """The helper sends its error with the note and ends; the main process, asking for
    more notes before it reached that one, said only "the render's helper process ended
    without a word (killed?)" (a speech quote of Latin letters, --jobs 2). The helper makes
    every note (the main process claims none), so a busy machine cannot let the main
    process make the failing one first."""
    from soundscape.sound import helper as helper_module

    claim = helper_module._Claims.claim
    monkeypatch.setattr(helper_module._Claims, "claim",  # the fork inherits it
                        lambda self, index, who: who == helper_module._HELPER
                        and claim(self, index, who))
    with pytest.raises(RenderError, match="cannot be said"):
        list(render_blocks(scene(300, spacing=0.1, distinct=True), listener=NORTH,
                           panner=make_panner("stereo"), sample_rate=FS, seed=0,
                           voice=failing_ahead, surroundings=Surroundings(),
                           block_frames=FS // 10, workers=2))


@pytest.mark.parametrize("helper_makes", [True, False])
def test_a_helper_process_killed_mid_render_is_an_error_not_a_hang(monkeypatch, helper_makes):
    """Killed while it makes notes the main process waits for, or while the main process
    claims every note itself and needs none of the helper's: an error either way."""
    from soundscape.sound import helper as helper_module

    if not helper_makes:
        claim = helper_module._Claims.claim
        monkeypatch.setattr(helper_module._Claims, "claim",  # the fork inherits it
                            lambda self, index, who: who == helper_module._MAIN
                            and claim(self, index, who))
    blocks = render_blocks(scene(300, spacing=0.1, distinct=True), listener=NORTH,
                           panner=make_panner("stereo"), sample_rate=FS, seed=0,
                           voice=noise_voice, surroundings=Surroundings(),
                           block_frames=FS // 10, workers=2)
    next(blocks)
    (helper,) = multiprocessing.active_children()
    os.kill(helper.pid, signal.SIGKILL)
    with pytest.raises(RenderError, match="helper process ended"):
        list(blocks)


def test_the_synth_voice_passes_performer_and_phones(monkeypatch):
    from soundscape.sound import synth
    from soundscape.sound.notes import SynthVoice, note_key

    calls = []

    def recording(instrument, **kwargs):
        calls.append((instrument.id, kwargs["performer"], kwargs["lyric"]))
        return np.ones(10)

    monkeypatch.setattr(synth, "render_note", recording)
    singers = [Source(who, "voice", "工", "singer", "west", (0.0, 0.0, 1.6))
               for who in ("gong.dashi", "gong.shaoshi")]
    se = Source("se.1", "se", "瑟", "zither", "west", (0.0, 0.0, 1.0))
    sung = Event(1.0, 0.5, "gong.dashi", None, 0.8, "sing", "c", lyric="呦", phones="j ə w")
    spoken = Event(2.0, 0.5, "gong.dashi", None, 0.8, "sing", "c", lyric="諾")
    voice = SynthVoice()
    rng = np.random.default_rng(0)
    voice(sung, singers[0], sample_rate=FS, rng=rng)
    voice(spoken, singers[0], sample_rate=FS, rng=rng)
    assert calls == [("voice", "gong.dashi", "j ə w"), ("voice", "gong.dashi", "諾")]
    # two singers are two voices; two 瑟 players in unison share one rendering
    assert voice.key(sung, singers[0]) != voice.key(sung, singers[1])
    assert voice.key(sung, singers[0])[-1] == "gong.dashi"
    plucked = Event(1.0, 0.5, "se.1", None, 0.8, "pluck", "c")
    other_se = Source("se.2", "se", "瑟", "zither", "west", (1.0, 0.0, 1.0))
    assert voice.key(plucked, se) == voice.key(plucked, other_se) == note_key(plucked, se)


def test_progress_covers_both_passes(tmp_path, soundscape_cli, monkeypatch, capsys):
    _sequence_once(monkeypatch)
    # stderr is not a terminal here: a plain line as each stage starts and ends
    code, err = soundscape_cli("render", "-o", "out/x.wav", cwd=tmp_path)
    assert code == 0, err
    for stage in ("render pass 1 of 2: rendering and metering",
                  "render pass 2 of 2: gain "):
        lines = [line for line in err.splitlines() if line.startswith(stage)]
        # start, done (pass 2 again after settling the gain under the limiter, if it must)
        assert lines and len(lines) % 2 == 0
        assert all(a.endswith(" …") and ": done in " in b
                   for a, b in zip(lines[::2], lines[1::2], strict=True))
    # on a terminal: a tqdm bar for each pass
    render_audio(scene(2), tmp_path / "bars.wav", listener=NORTH, voice=noise_voice,
                 progress=True)
    bars = capsys.readouterr().err
    assert "render:" in bars and "pass 2:" in bars


def test_the_report_says_which_reading_and_tuning_the_performance_used(tmp_path):
    import json
    from dataclasses import replace

    from soundscape.performance import Info

    rite = replace(scene(), info=Info(reading="mandarin", tuning="三分損益"))
    result = render_audio(rite, tmp_path / "r.wav", listener=NORTH, voice=noise_voice)
    report = json.loads(result.report_file.read_text(encoding="utf-8"))
    assert (report["reading"], report["tuning"]) == ("mandarin", "三分損益")
    # which part of which text: `play` takes the gain of this part only
    assert (report["text"], report["offset"], report["duration"]) == (
        rite.info.text, rite.info.offset, rite.duration)


def test_the_report_of_silence_is_json(tmp_path):
    """A silent render's loudness is -inf: JSON has no such number (it wrote -Infinity,
    which strict readers refuse); it is null."""
    import json

    def silence(event, source, *, sample_rate, rng):
        return np.zeros(round(0.05 * sample_rate))

    result = render_audio(scene(), tmp_path / "s.wav", listener=NORTH, voice=silence)
    report = json.loads(result.report_file.read_text(encoding="utf-8"),
                        parse_constant=lambda name: pytest.fail(f"{name} in the report"))
    assert report["measured_lufs"] is None
    # said in words: "measured -inf LUFS" left a user of a text without music guessing
    assert result.report.text().startswith("loudness: the render is silent")
    assert report["gain_db"] == 0.0


def test_notes_are_made_with_one_blas_thread_in_the_render_and_its_helper():
    """OpenBLAS's idle threads spin: two of them took a third of a render's CPU."""
    from threadpoolctl import threadpool_info

    def counting_voice(event, source, *, sample_rate, rng):
        threads = max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return np.full(round(0.05 * sample_rate), 0.01 * threads)  # the count, as a level

    for workers in (1, 2):
        blocks = list(render_blocks(scene(40, spacing=0.05, distinct=True), listener=NORTH,
                                    panner=make_panner("stereo"), sample_rate=FS, seed=0,
                                    voice=counting_voice, surroundings=Surroundings(),
                                    block_frames=FS, workers=workers))
        level = np.abs(np.concatenate(blocks)).max()
        assert level > 0
        # the same render with every note at the level of one thread
        assert np.isclose(level, np.abs(np.concatenate(list(render_blocks(
            scene(40, spacing=0.05, distinct=True), listener=NORTH,
            panner=make_panner("stereo"), sample_rate=FS, seed=0,
            voice=lambda e, s, *, sample_rate, rng: np.full(round(0.05 * sample_rate), 0.01),
            surroundings=Surroundings(), block_frames=FS, workers=1)))).max())


def _private_kib_copied_by_a_collection_in_a_fork() -> int:
    """KiB a forked child makes its own by one full collection (Linux ``smaps_rollup``)."""
    import gc

    def private_kib() -> int:
        rollup = Path(f"/proc/{os.getpid()}/smaps_rollup").read_text().splitlines()
        return sum(int(line.split()[1]) for line in rollup if line.startswith("Private_"))

    def child(conn) -> None:
        before = private_kib()
        gc.collect()
        conn.send(private_kib() - before)

    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    process = context.Process(target=child, args=(theirs,))
    process.start()
    copied = ours.recv()
    process.join()
    return copied


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="Linux /proc")
def test_objects_frozen_for_the_forks_are_not_copied_by_their_collections():
    """A full collection writes in every object it tracks: a fork's collection copied each
    page of the parent's objects it shared (the note helper and pass 1's keeper)."""
    from soundscape.sound.render import frozen

    objects = [[i] for i in range(400_000)]  # ~40 MiB of tracked objects
    assert _private_kib_copied_by_a_collection_in_a_fork() > 20 << 10
    with frozen():
        assert _private_kib_copied_by_a_collection_in_a_fork() < 4 << 10
    del objects


def test_a_render_freezes_its_objects_while_it_lasts_and_lets_only_its_own_go(monkeypatch):
    import gc

    from soundscape.sound import render

    arenas = []
    monkeypatch.setattr(render, "one_arena", lambda: arenas.append(True))

    def freeze_voice(event, source, *, sample_rate, rng):  # the state, as a level
        return np.full(round(0.05 * sample_rate), 0.01 * (gc.get_freeze_count() > 0))

    def rendered(voice) -> np.ndarray:
        return np.concatenate(list(render_blocks(
            scene(20, spacing=0.05, distinct=True), listener=NORTH,
            panner=make_panner("stereo"), sample_rate=FS, seed=0, voice=voice,
            surroundings=Surroundings(), block_frames=FS, workers=2)))

    every_note_frozen = rendered(lambda e, s, *, sample_rate, rng: np.full(
        round(0.05 * sample_rate), 0.01))
    assert gc.get_freeze_count() == 0
    # every note, whichever process made it, made while frozen
    assert np.array_equal(rendered(freeze_voice), every_note_frozen)
    assert gc.get_freeze_count() == 0  # let go after
    assert arenas == [True, True]  # one heap for each render's threads
    gc.freeze()  # the caller's own: kept
    try:
        assert np.array_equal(rendered(freeze_voice), every_note_frozen)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_section_begins_in_its_place_not_in_digital_silence():
    """s18 alone began with 2.0 s of zeros (the bed's segments under way were dropped);
    now its first sound is the bed at the duke's seat, as far in as it travels (62 ms)."""
    from soundscape.sequence import perform_from_file
    from soundscape.site.courtyard import load_site
    from soundscape.sound.render import SynthVoice

    part = perform_from_file(seed=0, from_section="s18", to_section="s18")
    seat = load_site().listener("gong_wei")
    blocks = render_blocks(part, listener=Listener(seat.position, seat.facing),
                           panner=make_panner("stereo"), sample_rate=FS, seed=0,
                           voice=SynthVoice(), surroundings=Surroundings(),
                           block_frames=FS // 2)
    first = next(blocks)
    blocks.close()
    sounding = np.flatnonzero(np.abs(first).max(axis=1) > 1e-6)
    assert len(sounding) and sounding[0] < 0.1 * FS
    assert np.sqrt(np.mean(first[FS // 4:] ** 2)) > 1e-5  # raw: -90 dBFS before the gain
