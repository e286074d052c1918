"""The persistent cache of sequenced Performances: keyed by all the inputs, a hit is the same
Performance, a damaged entry is a miss, and it stays bounded."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import pytest

from soundscape.performance import Event, Marker, Performance, Source
from soundscape.sequence import cache
from soundscape.sequence.cache import cache_dir, cached_performance, performance_key


def _performance(velocity: float = 0.5) -> Performance:
    sources = {"e": Source("e", "jiangu", "建鼓", "drum", "east", (10.0, 0.0, 1.5))}
    return Performance.build([Event(1.0, 0.25, "e", None, velocity, "strike", "m1")],
                             [Marker(0.0, "section", "右設樂", "she yue", "s1")], sources)


def test_the_cache_folder_is_soundscape_performances_under_the_users_cache(monkeypatch,
                                                                           tmp_path):
    monkeypatch.setattr(cache.sys, "platform", "linux")
    monkeypatch.setitem(__import__("sys").modules, "platformdirs", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("SOUNDSCAPE_CACHE_DIR", raising=False)
    assert cache_dir() == tmp_path / "soundscape" / "performances"


def test_the_cache_folder_follows_the_note_caches_folder_when_set(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SOUNDSCAPE_CACHE_DIR", str(tmp_path / "own"))
    assert cache_dir() == tmp_path / "own" / "performances"


def test_reading_the_cache_imports_none_of_the_sequencer():
    """A render of a part sequenced before reads the cache through the package: the planner
    (and the sequencer's modules under it) is imported only when one of its names is used."""
    code = ("import sys; from soundscape.sequence import cache; "
            "assert 'soundscape.sequence.planner' not in sys.modules, 'imported'; "
            "from soundscape import sequence; from soundscape.sequence import planner; "
            "assert sequence.perform_from_file is planner.perform_from_file; "
            "assert sorted(sequence.__all__) == sorted(planner.__all__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_sequencing_and_reading_back_run_with_the_collector_paused(monkeypatch, tmp_path):
    """Each full collection the rite's tens of thousands of new objects set off walked every
    one made so far: sequencing the whole rite took 1.65-2.19 s with it, 1.47-1.50 s without
    (the same Performance to the byte)."""
    from soundscape.sequence import planner

    seen = []

    def watching(function):
        def watched(*args, **kwargs):
            seen.append((function.__name__, gc.isenabled()))
            return function(*args, **kwargs)
        return watched

    monkeypatch.setattr(planner, "_placed", watching(planner._placed))
    monkeypatch.setattr(cache.pickle, "loads", watching(cache.pickle.loads))
    performance, found = cached_performance(
        "k", lambda: planner.perform_from_file(seed=0, from_section="s10", to_section="s10"),
        folder=tmp_path)
    again, found_again = cached_performance("k", lambda: pytest.fail("made again"),
                                            folder=tmp_path)
    assert (found, found_again) == (False, True) and again == performance
    assert {name for name, _ in seen} == {"_placed", "loads"}
    assert not any(running for _, running in seen)
    assert gc.isenabled()


def test_the_key_follows_the_cue_sheet_bytes_the_durations_and_the_options(tmp_path):
    sheet, durations = tmp_path / "a.toml", tmp_path / "d.toml"
    sheet.write_bytes(b"[text]\nid = 'x'\n")
    durations.write_bytes(b"")
    key = performance_key(sheet, None, seed=0, from_section="s18")
    assert performance_key(sheet, None, seed=0, from_section="s18") == key
    assert performance_key(sheet, None, seed=1, from_section="s18") != key
    assert performance_key(sheet, None, seed=0, from_section="s19") != key
    assert performance_key(sheet, durations, seed=0, from_section="s18") != key
    sheet.write_bytes(b"[text]\nid = 'y'\n")
    assert performance_key(sheet, None, seed=0, from_section="s18") != key


def test_a_hit_is_the_same_performance_without_making_it_again(tmp_path):
    made = []

    def make():
        made.append(1)
        return _performance()

    first, found = cached_performance("k1", make, folder=tmp_path)
    assert not found
    second, found = cached_performance("k1", make, folder=tmp_path)
    assert found and len(made) == 1
    assert second.to_dict() == first.to_dict()


@pytest.mark.parametrize("damage", [b"", b"junk", b"soundscape performance cache 1\nk1\nxx",
                                    b"soundscape performance cache 1\nk2\n"])
def test_a_damaged_or_foreign_entry_is_a_miss_and_is_written_anew(tmp_path, damage):
    (tmp_path / "k1.pickle").write_bytes(damage)
    found_perf, found = cached_performance("k1", lambda: _performance(0.7), folder=tmp_path)
    assert not found and found_perf.events[0].velocity == 0.7
    again, found = cached_performance("k1", lambda: _performance(0.1), folder=tmp_path)
    assert found and again.events[0].velocity == 0.7


def test_the_cache_keeps_the_most_recently_used_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    for i in range(5):
        cached_performance(f"k{i}", _performance, folder=tmp_path)
        os.utime(tmp_path / f"k{i}.pickle", (i, i))  # the order they were used in
    cached_performance("k0", _performance, folder=tmp_path)  # made again: now the newest
    assert sorted(p.stem for p in tmp_path.glob("*.pickle")) == ["k0", "k3", "k4"]


def test_a_cache_that_cannot_be_written_still_gives_the_performance(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    performance, found = cached_performance("k1", _performance, folder=blocker / "sub")
    assert not found and performance.events[0].velocity == 0.5


def test_the_package_digest_is_kept_and_follows_an_edit(tmp_path, monkeypatch):
    """The digest of the package's and instruments' files is read back while their sizes
    and mtimes are unchanged (no file read), and worked out again after an edit; a file
    changed just now keeps no memo."""
    from pathlib import Path

    instruments = tmp_path / "instruments"
    instruments.mkdir()
    own = instruments / "a.toml"
    own.write_text("id = 'a'\n")
    os.utime(own, ns=(10**18, 10**18))
    monkeypatch.setattr(cache, "bundled_dir", lambda name: instruments)
    monkeypatch.setattr(cache, "cache_dir", lambda: tmp_path / "performances")
    monkeypatch.setattr(cache, "_SETTLE_NS", 0)  # a checkout's files may be new
    read: list[Path] = []
    real = Path.read_bytes

    def reading(self):
        read.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", reading)

    def digest() -> bytes:
        cache._package_digest.cache_clear()
        read.clear()
        return cache._package_digest()

    try:
        first = digest()
        assert own in read  # worked out from the bytes
        assert digest() == first and not read  # the memo: no file read
        own.write_text("id = 'b'\n")  # the same size
        later = time.time_ns() + 3600 * 10**9  # changed as it was read: no memo kept
        os.utime(own, ns=(later, later))
        second = digest()
        assert second != first and own in read
        assert digest() == second and own in read
        os.utime(own, ns=(12 * 10**17, 12 * 10**17))
        assert digest() == second and own in read
        assert digest() == second and not read
    finally:
        cache._package_digest.cache_clear()


def test_slotted_dataclasses_are_pickled_as_their_fields_and_read_back_equal():
    import dataclasses
    import pickle

    from soundscape.music.tuning import default_tuning

    pitch = default_tuning().pitch("林鍾")
    event = Event(1.0, 0.25, "e", pitch, 0.5, "strike", "m1", lyric="鹿")
    assert cache._init_fields(Event) == tuple(f.name for f in dataclasses.fields(Event))
    assert cache._init_fields(Performance) is None  # not slotted: pickled as before

    @dataclasses.dataclass(frozen=True, slots=True)
    class Later:
        a: int
        b: int = dataclasses.field(init=False, default=2)

    assert cache._init_fields(Later) is None  # a field __init__ does not take
    sources = {"e": Source("e", "jiangu", "建鼓", "drum", "east", (10.0, 0.0, 1.5))}
    performance = Performance.build([event], [Marker(0.0, "section", "右設樂", "she yue",
                                                     "s1")], sources)
    data = cache._dumps(performance)
    assert b"_dataclass_setstate" not in data
    again = pickle.loads(data)
    assert again == performance and again.events[0].pitch == pitch
