"""Atomic output: a failure never leaves a file, or a temporary, at the destination."""

import os

import pytest

from soundscape.fileio import atomic_path, write_text


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
