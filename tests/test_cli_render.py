"""``soundscape render`` writes the MIDI in a niced forked process while the audio renders
(``_Aside``): the same result, the work's own error, nothing left behind on a failure."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from soundscape.cli.render import _Aside
from soundscape.errors import RenderError

_PARENT = os.getpid()


def _where() -> tuple[int, int]:
    return os.getpid(), os.nice(0)


def test_the_work_runs_in_another_process_at_the_lowest_priority():
    with _Aside(_where) as aside:
        pid, niceness = aside.result()
    assert pid != os.getpid()
    assert niceness == 19


def test_a_render_stopped_at_once_ends_its_aside_without_a_traceback(capfd):
    """The forked process took the command's SIGTERM handler: stopped while it started, it
    raised the command's _Terminated there and printed its traceback above the one-line
    error (5 runs in 10 on a full disk)."""
    import signal
    import time

    from soundscape.cli import _terminate

    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        for _ in range(20):
            with _Aside(time.sleep, 5) as aside:
                process = aside._process
                aside._stop(wait=False)
            assert process.exitcode == -signal.SIGTERM  # ended by the signal, quietly
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert "Traceback" not in capfd.readouterr().err


def test_without_aside_the_work_runs_here_when_asked():
    with _Aside(_where, aside=False) as aside:
        assert aside.result() == (os.getpid(), os.nice(0))


def _fails_away(value: int) -> int:
    if os.getpid() != _PARENT:
        raise OSError("the forked process's failure")
    return value


def _fails(value: int) -> int:
    raise RenderError(f"bad value {value}")


def test_a_failure_there_is_done_again_here_and_raises_its_own_error():
    with _Aside(_fails_away, 7) as aside:
        assert aside.result() == 7  # made here after it failed there
    with _Aside(_fails, 7) as aside, pytest.raises(RenderError, match="bad value 7"):
        aside.result()


def _forever() -> None:
    while True:
        time.sleep(0.05)


def test_a_failed_render_stops_the_process():
    with pytest.raises(ValueError), _Aside(_forever) as aside:
        process = aside._process
        assert process is not None and process.is_alive()
        raise ValueError("the render failed")
    assert not process.is_alive() and aside._process is None


def test_the_midi_written_aside_is_the_midi_written_here(tmp_path):
    from soundscape.cli.render import _midi_and_count
    from soundscape.output import midi
    from soundscape.performance import Event, Performance, Source
    from soundscape.site.listeners import Listener

    sources = {"e": Source("e", "jiangu", "建鼓", "drum", "east", (10.0, 0.0, 1.5))}
    performance = Performance.build([Event(1.0, 0.25, "e", None, 0.5, "strike", "m1"),
                                     Event(2.0, 0.25, "e", None, 0.7, "strike", "m1")],
                                    [], sources)
    listener = Listener((0.0, 0.0, 1.5), (0.0, 1.0, 0.0))
    with _Aside(_midi_and_count, performance, tmp_path / "a.mid", listener) as aside:
        path, notes = aside.result()
    here = midi.write_midi(performance, tmp_path / "b.mid", listener=listener)
    assert path == tmp_path / "a.mid" and notes == midi.note_count(here) == 2
    assert path.read_bytes() == here.read_bytes()


def test_sigterm_stops_a_render_as_ctrl_c_does_leaving_nothing(tmp_path):
    """``timeout`` and service managers send SIGTERM: the render stops with 143 and its
    hidden folder (MIDI, the raw samples) goes, as with Ctrl-C; it was left behind."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "SOUNDSCAPE_CACHE": "off",
           "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    earlier = tmp_path / "x.wav"
    earlier.write_bytes(b"an earlier render")
    proc = subprocess.Popen([sys.executable, "-m", "soundscape", "render", "--from", "s18",
                             "--to", "s18", "--quiet", "-o", str(earlier)], cwd=tmp_path,
                            env=env, stderr=subprocess.PIPE, text=True)

    def raw_samples_written() -> bool:  # pass 1 is under way in the hidden folder
        return any(path.stat().st_size > 0 for path in tmp_path.glob(".x.render-*/**/*.f32"))

    deadline = time.monotonic() + 300  # bounds a failure only
    while not raw_samples_written():
        assert proc.poll() is None and time.monotonic() < deadline, "pass 1 never began"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.rstrip().endswith("Terminated.") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.wav"]
    assert earlier.read_bytes() == b"an earlier render"


@pytest.mark.parametrize("layout, companion", [
    ("stereo", "x.mid"), ("stereo", "x.wav.loudness.json"), ("stereo", "x.wav.markers.txt"),
    ("stems", "x.bianqing.wav")])
def test_a_folder_where_an_output_goes_is_named_before_the_render(
        soundscape_cli, tmp_path, layout, companion):
    """A folder named as one of the files a render writes failed the render at its end,
    naming the .wav; it is refused before pass 1, by its own name, and nothing is left."""
    (tmp_path / companion).mkdir()
    code, err = soundscape_cli("render", "--from", "s45", "--to", "s45", "--layout", layout,
                               "-o", "x.wav", cwd=tmp_path)
    assert code != 0 and err.rstrip().endswith(f"{companion}: is a folder, not a file"), err
    assert "render pass 1" not in err
    assert [p.name for p in tmp_path.iterdir()] == [companion]


def test_an_error_in_the_staging_folder_names_the_output(tmp_path):
    from soundscape.sound.staging import Staging

    staged = Staging(tmp_path, "x")
    inner = staged.folder / ".x.render-1-00000000" / "x.wav.loudness.json"
    shown = staged.shown(IsADirectoryError(21, "is a folder", str(inner)), tmp_path / "x.wav")
    assert shown.filename == str(tmp_path / "x.wav.loudness.json")
    bare = staged.shown(OSError(28, "no space left"), tmp_path / "x.wav")
    assert bare.filename == str(tmp_path / "x.wav")


def test_quiet_reports_no_stage_and_a_verb_after_it_reports_again(tmp_path, soundscape_cli):
    """``render --quiet`` printed "sequencing the rite …" and its time; the quiet ends with
    the command (one process may run several, as the tests do)."""
    from soundscape.cli._common import QUIET

    args = ("render", "--no-cache", "--format", "midi", "--from", "s21", "--to", "s21")
    code, err = soundscape_cli(*args, "--quiet", "-o", str(tmp_path / "q.mid"), cwd=tmp_path)
    assert code == 0 and (tmp_path / "q.mid").exists(), err
    assert "sequencing" not in err and "…" not in err and "data:" in err, err
    assert not QUIET.is_set()
    code, err = soundscape_cli(*args, "-o", str(tmp_path / "loud.mid"), cwd=tmp_path)
    assert code == 0 and "sequencing the rite" in err, err
