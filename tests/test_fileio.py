"""Atomic output: a failure never leaves a file, or a temporary, at the destination."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from soundscape import fileio
from soundscape.errors import SoundscapeError
from soundscape.fileio import (
    MAX_DEPTH,
    atomic_path,
    atomic_paths,
    parse_toml,
    read_bytes,
    read_text,
    read_toml,
    replace_set,
    write_set,
    write_text,
    write_texts,
)
from tests.killing import killed_among_renames


def test_write_text_replaces_atomically(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    write_text(target, "一")
    write_text(target, "二")
    assert target.read_text(encoding="utf-8") == "二"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


def test_failure_leaves_nothing(tmp_path):
    target = tmp_path / "out.wav"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        assert tmp.suffix == ".wav"
        tmp.write_bytes(b"half")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_failure_keeps_the_previous_file(tmp_path):
    target = write_text(tmp_path / "a.txt", "old")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("new")
        raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_files_that_belong_together_are_all_written_or_none(tmp_path):
    """A failure while making the second file (the timeline after the Performance) left
    the first one new and the second old."""
    first, second = write_text(tmp_path / "a.json", "old"), write_text(tmp_path / "b.png", "old")
    with pytest.raises(RuntimeError), atomic_paths(first, second) as (one, two):
        one.write_text("new")
        raise RuntimeError("the picture failed")
    assert (first.read_text(), second.read_text()) == ("old", "old")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.png"]
    with atomic_paths(first, second) as (one, two):
        one.write_text("new")
        two.write_text("new")
    assert (first.read_text(), second.read_text()) == ("new", "new")


def test_texts_that_belong_together_are_all_written_or_none(tmp_path):
    """scala's .kbm failing left the new .scl; archery's second round failing, the first."""
    first = write_text(tmp_path / "u.scl", "old")
    (tmp_path / "u.kbm").mkdir()  # the second cannot be written
    with pytest.raises(OSError):
        write_texts({first: "new", tmp_path / "u.kbm": "new"})
    assert first.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["u.kbm", "u.scl"]
    assert write_texts({first: "新", tmp_path / "x.kbm": "二"}) == [first, tmp_path / "x.kbm"]
    assert (first.read_text(encoding="utf-8"), (tmp_path / "x.kbm").read_text()) == ("新", "二")


def _full_at_second(path):
    """A writer that fills the disk part-way through a set: the second file fails."""
    path.write_text("half")
    raise OSError(28, "No space left on device")


def test_a_failed_write_removes_the_folders_it_made(tmp_path):
    """`archery -o new/x` on a full disk left the empty new/x behind; `midi --split
    section -o DIR` left DIR."""
    folder = tmp_path / "new" / "x"
    with pytest.raises(OSError), \
            atomic_paths(folder / "round0.json", folder / "round0.csv") as (json_, csv):
        json_.write_text("{}")
        _full_at_second(csv)
    with pytest.raises(OSError):
        write_set(folder, {"a.mid": lambda path: path.write_text("a"), "b.mid": _full_at_second},
                  record=".set", error=SoundscapeError, what="a test's files")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "keep").mkdir()  # a folder the user had is kept, empty or not
    with pytest.raises(OSError):
        write_set(tmp_path / "keep", {"a.mid": _full_at_second}, record=".set",
                  error=SoundscapeError, what="a test's files")
    assert [p.name for p in tmp_path.iterdir()] == ["keep"]
    assert list((tmp_path / "keep").iterdir()) == []


def test_a_set_of_files_drops_what_the_last_run_wrote_and_this_one_did_not(tmp_path):
    for name in ("01-a.mid", "02-b.mid", "mine.mid"):
        (tmp_path / name).write_text(name)
    replace_set(tmp_path, ["01-a.mid", "02-b.mid"], record=".set")
    assert replace_set(tmp_path, ["01-a.mid"], record=".set") == [tmp_path / "02-b.mid"]
    # the user's own file stays, though the last two runs did not write it
    assert sorted(p.name for p in tmp_path.iterdir()) == [".set", "01-a.mid", "mine.mid"]
    assert (tmp_path / ".set").read_text() == "01-a.mid\n"


def test_a_set_of_a_kind_removes_only_files_of_that_kind(tmp_path):
    """A record edited or copied by hand (`notes.txt` listed in `.soundscape.sections`) had
    `midi --split` remove the user's notes."""
    for name in ("s01.mid", "notes.txt"):
        (tmp_path / name).write_text(name)
    (tmp_path / ".set").write_text("s01.mid\nnotes.txt\n")
    assert replace_set(tmp_path, [], record=".set", kinds=(".mid",)) == [tmp_path / "s01.mid"]
    assert (tmp_path / "notes.txt").read_text() == "notes.txt"


def test_a_set_record_removes_only_plain_files_of_its_own_folder(tmp_path):
    """The record is a file anyone can edit: names out of the folder, folders and links
    in it are left alone."""
    folder, outside = tmp_path / "parts", tmp_path / "keep.txt"
    folder.mkdir()
    outside.write_text("keep")
    (folder / "sub").mkdir()
    (folder / "link").symlink_to(outside)
    (folder / ".set").write_text(f"../keep.txt\n{outside}\nsub\nlink\n.set\n\n..\n")
    assert replace_set(folder, [], record=".set") == []
    assert outside.read_text() == "keep"
    assert sorted(p.name for p in folder.iterdir()) == [".set", "link", "sub"]


def test_output_gets_the_usual_file_mode(tmp_path):
    mask = os.umask(0o022)
    try:
        target = write_text(tmp_path / "out.txt", "一")
    finally:
        os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o644


def test_read_toml_names_file_line_and_accepts_the_concerns_error(tmp_path):
    from soundscape.errors import SiteError
    from soundscape.fileio import read_toml

    good = tmp_path / "good.toml"
    good.write_text('"宮" = 1\n', encoding="utf-8")
    assert read_toml(good) == {"宮": 1}
    bad = tmp_path / "bad.toml"
    bad.write_text("a = 1\nb = = 2\n", encoding="utf-8")
    with pytest.raises(SiteError, match=r"bad.toml:2: not valid TOML"):
        read_toml(bad, SiteError)
    with pytest.raises(SiteError, match=r"missing.toml: no such file"):
        read_toml(tmp_path / "missing.toml", SiteError)
    latin = tmp_path / "latin.toml"
    latin.write_bytes("a = 'é'\n".encode("latin-1"))
    with pytest.raises(SiteError, match=r"latin.toml: not UTF-8"):
        read_toml(latin, SiteError)


# -- reading: only regular files, bounded size and nesting ------------------------------------
def _in_time(call, seconds=5.0):
    """Run ``call`` on a thread; fail (instead of hanging the suite) if it blocks."""
    import concurrent.futures

    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(call).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "sheet.toml"
    os.mkfifo(fifo)

    def read():
        with pytest.raises(SoundscapeError, match=r"sheet\.toml: not a regular file") as caught:
            read_toml(fifo)
        return caught

    assert _in_time(read)


def test_folder_device_missing_and_non_utf8_named(tmp_path):
    for bad, message in ((tmp_path, "not a regular file"), ("/dev/zero", "not a regular file"),
                         (tmp_path / "none.toml", "no such file")):
        with pytest.raises(SoundscapeError, match=message):
            read_text(bad)
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"a = '\xe9'")
    with pytest.raises(SoundscapeError, match=r"latin\.toml: not UTF-8 text \(byte 5\)"):
        read_toml(latin)


def test_size_limit(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 101)
    assert read_bytes(big, limit=101) == b"x" * 101
    with pytest.raises(SoundscapeError, match=r"big\.txt: 101 bytes is larger than the 100"):
        read_bytes(big, limit=100)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deep_nesting_is_a_clear_error(depth):
    raw = "title = 'x'\n\nvalue = " + "[" * depth + "]" * depth + "\n"
    with pytest.raises(SoundscapeError, match=rf"deep\.toml:3: .*nested more than {MAX_DEPTH}"):
        parse_toml(raw, "deep.toml")


def test_nesting_up_to_the_limit_loads():
    raw = "value = " + "[" * MAX_DEPTH + "]" * MAX_DEPTH
    data = parse_toml(raw, "ok.toml")
    for _ in range(MAX_DEPTH - 1):
        data = data["value"] if isinstance(data, dict) else data[0]
    assert data == [[]]


def test_bad_toml_names_file_and_line():
    with pytest.raises(SoundscapeError, match=r"bad\.toml:2: not valid TOML"):
        parse_toml("a = 1\nb = = 2\n", "bad.toml")


def test_a_killed_runs_hidden_file_is_removed_by_the_next_write(tmp_path):
    """A ``play -o x.wav`` killed with SIGKILL left ``.x.….part.wav`` (63 MB) for good; a
    running process's, or another target's, stays."""

    dead = subprocess.Popen(["true"])
    dead.wait()
    left = tmp_path / f".x.{dead.pid}-abc12345.part.wav"
    running = tmp_path / f".x.{os.getpid()}-def45678.part.wav"
    other = tmp_path / f".y.{dead.pid}-abc12345.part.wav"
    # a live write of the target x.5-b.wav, whose name also begins ".x.5-"
    alike = tmp_path / f".x.{dead.pid}-b.{os.getpid()}-ghi90123.part.wav"
    for path in (left, running, other, alike):
        path.write_bytes(b"half")
    with atomic_path(tmp_path / "x.wav") as tmp:
        assert tmp.name.startswith(f".x.{os.getpid()}-") and tmp.name.endswith(".part.wav")
        tmp.write_bytes(b"whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, other.name,
                                                                  alike.name, "x.wav"])


def test_a_set_is_placed_whole_or_not_at_all(tmp_path, monkeypatch):
    """atomic_paths renamed its files one by one, the last first: a rename failing on the
    first left the last new. What was placed is undone and its old file restored; a
    folder where a file was to go is refused before anything moves."""
    import soundscape.fileio as fileio

    first, second = write_text(tmp_path / "p.json", "old"), write_text(tmp_path / "p.png", "old")
    real = os.replace

    def failing(source, target):
        if Path(source).name.startswith(".p.") and str(source).endswith(".part.json"):
            raise OSError(28, "No space left on device")
        real(source, target)

    monkeypatch.setattr(fileio.os, "replace", failing)
    with pytest.raises(OSError, match=r"p\.json"), atomic_paths(first, second) as (one, two):
        one.write_text("new")
        two.write_text("new")
    assert (first.read_text(), second.read_text()) == ("old", "old")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "p.png"]
    monkeypatch.setattr(fileio.os, "replace", real)
    (tmp_path / "q.png").mkdir()
    with pytest.raises(IsADirectoryError, match=r"q\.png"), \
            atomic_paths(first, tmp_path / "q.png") as (one, two):
        one.write_text("new")
    assert first.read_text() == "old"


_PLAN = """
with fileio.atomic_paths(folder / "plan.svg", folder / "plan.png") as (svg, png):
    svg.write_bytes(b"new svg")
    png.write_bytes(b"new png")
"""


def test_a_set_killed_among_its_renames_is_undone_by_the_next_write_there(tmp_path):
    """kill -9 between an atomic_paths set's renames left a new SVG beside an old PNG for
    good (the plan's pair, a MIDI split). The next write into the folder puts the old set
    back whole and leaves no hidden file behind."""
    for name in ("plan.svg", "plan.png"):
        (tmp_path / name).write_bytes(b"old " + name.encode())
    killed_among_renames(_PLAN, tmp_path)
    assert (tmp_path / "plan.svg").read_bytes() == b"new svg"  # the mixed set it left
    assert (tmp_path / "plan.png").read_bytes() == b"old plan.png"
    fileio.write_text(tmp_path / "notes.txt", "another output")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {
        "plan.svg": b"old plan.svg", "plan.png": b"old plan.png", "notes.txt": b"another output"}


def test_a_journal_that_names_files_elsewhere_is_left_alone(tmp_path):
    """A set's journal is a file in the user's folder: one that would move a file from
    another folder onto a target is not followed."""
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere.txt").write_text("keep", encoding="utf-8")
    target = tmp_path / "out" / "plan.svg"
    target.write_text("mine", encoding="utf-8")
    journal = tmp_path / "out" / ".999999999-0123abcd.moves.json"
    journal.write_text(json.dumps([[str(tmp_path / "out" / ".gone"), str(target), True,
                                    str(tmp_path / "elsewhere.txt")]]), encoding="utf-8")
    fileio.write_text(tmp_path / "out" / "notes.txt", "x")
    assert target.read_text(encoding="utf-8") == "mine"
    assert (tmp_path / "elsewhere.txt").read_text(encoding="utf-8") == "keep"
