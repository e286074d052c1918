"""Staging: a run's outputs replace the old ones together; dead runs' folders are removed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from soundscape.sound.staging import Staging, remove_stale
from tests.killing import killed_among_renames


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid  # reaped: no such process (unless reused within the test: unlikely)


def test_only_folders_of_dead_processes_are_removed(tmp_path):
    dead = tmp_path / f".x.render-{_dead_pid()}-0123abcd"
    alive = tmp_path / f".x.render-{os.getpid()}-0123abcd"
    old_style = tmp_path / ".x.render-k2j4h5g6"  # no pid: cannot be proven dead
    lookalike = tmp_path / f"x.render-{_dead_pid()}-0123abcd"  # not hidden: not ours
    for folder in (dead, alive, old_style, lookalike):
        (folder / "scratch").mkdir(parents=True)
        (folder / "scratch" / "raw.f32").write_bytes(b"\0" * 64)
    assert remove_stale(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (alive, old_style, lookalike))


def test_outputs_move_in_together_on_success(tmp_path):
    (tmp_path / "a.wav").write_bytes(b"old")
    with Staging(tmp_path, "a") as staged:
        (staged.folder / "a.wav").write_bytes(b"new")
        (staged.folder / "a.mid").write_bytes(b"midi")
        (staged.scratch / "raw.f32").write_bytes(b"scratch")
        assert (tmp_path / "a.wav").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.mid", "a.wav"]
    assert (tmp_path / "a.wav").read_bytes() == b"new"
    assert staged.final(staged.folder / "a.mid") == tmp_path / "a.mid"


def test_nothing_moves_when_the_run_fails(tmp_path):
    (tmp_path / "a.wav").write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), Staging(tmp_path, "a") as staged:
        (staged.folder / "a.mid").write_bytes(b"midi")
        raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir()] == ["a.wav"]
    assert (tmp_path / "a.wav").read_bytes() == b"old"


def test_a_failed_run_removes_the_folder_it_made(tmp_path):
    """`render -o new/x.wav` failing part-way left the empty new/ behind."""
    with pytest.raises(OSError), Staging(tmp_path / "new" / "sub", "x") as staged:
        (staged.folder / "x.wav").write_bytes(b"half")
        raise OSError(28, "No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_a_rename_that_fails_midway_leaves_the_old_set(tmp_path, monkeypatch):
    """The outputs moved in one by one: a rename failing on the third left the first two
    new beside an old third (a new WAV with the old loudness report). Now the ones
    placed are undone and the old files come back; the error names the output."""
    import soundscape.fileio as fileio

    for name in ("a.wav", "a.wav.loudness.json", "a.wav.markers.txt"):
        (tmp_path / name).write_bytes(b"old " + name.encode())
    real = os.replace

    def failing(source, target):
        if str(source).endswith("markers.txt") and ".render-" in str(source):
            raise OSError(5, "Input/output error")
        real(source, target)

    monkeypatch.setattr(fileio.os, "replace", failing)
    with pytest.raises(OSError, match=r"a\.wav\.markers\.txt"), Staging(tmp_path, "a") as staged:
        for name in ("a.wav", "a.wav.loudness.json", "a.wav.markers.txt", "a.mid"):
            (staged.folder / name).write_bytes(b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.wav", "a.wav.loudness.json", "a.wav.markers.txt"]
    assert all(p.read_bytes() == b"old " + p.name.encode() for p in tmp_path.iterdir())


_STAGED = """
from soundscape.sound.staging import Staging
with Staging(folder, "x") as staged:
    for name in ("x.mid", "x.wav"):
        (staged.folder / name).write_bytes(b"new " + name.encode())
"""


def test_a_run_killed_among_its_renames_is_undone_by_the_next(tmp_path):
    """kill -9 between the renames left the new MIDI beside the old audio for good."""
    for name in ("x.mid", "x.wav"):
        (tmp_path / name).write_bytes(b"old " + name.encode())
    killed_among_renames(_STAGED, tmp_path)
    assert (tmp_path / "x.mid").read_bytes() == b"new x.mid"  # the mixed set it left
    assert (tmp_path / "x.wav").read_bytes() == b"old x.wav"
    removed = remove_stale(tmp_path)  # what the next run into the folder does first
    assert len(removed) == 1
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {
        "x.mid": b"old x.mid", "x.wav": b"old x.wav"}
