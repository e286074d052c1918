"""Staging: a run's outputs replace the old ones together; dead runs' folders are removed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from soundscape.sound.staging import Staging, remove_stale


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
