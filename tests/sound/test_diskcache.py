"""The disk cache of dry notes: hits, misses, what invalidates an entry, its bound, corrupt
files, two processes at once, and a render after an edit: the same bytes as a cold one."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from soundscape.errors import RenderError
from soundscape.music.instruments import load_instrument
from soundscape.music.pitch import Pitch
from soundscape.performance import Event, Performance, Source
from soundscape.resources import bundled_dir
from soundscape.site.listeners import Listener
from soundscape.sound import diskcache
from soundscape.sound.diskcache import NoteStore
from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks

RATE = 24000
SE = Source("se.0", "se", "瑟", "se", "west", (-4.0, 2.0, 1.0))
PLUCK = Event(0.0, 0.5, "se.0", Pitch("黃鍾", 0, 261.6), 0.6, "pluck", "c1")


def notes(store, voice=None):
    """Dry notes at ``RATE`` with an empty memory cache (so only the disk can hit)."""
    return DryNotes(voice or SynthVoice(), RATE, 3, ByteLru(0), store)


def test_a_note_made_once_is_read_back_bit_for_bit(tmp_path):
    store = NoteStore(tmp_path, 1 << 30)
    made = notes(store)(PLUCK, SE, notes(None).key(PLUCK, SE), 1)
    assert store.stats == {"hits": 0, "misses": 1, "writes": 1}
    again = notes(store)(PLUCK, SE, notes(None).key(PLUCK, SE), 1)
    assert store.stats == {"hits": 1, "misses": 1, "writes": 1}
    assert again.dtype == np.float32 and np.array_equal(again, made)
    other = notes(store)(PLUCK, SE, notes(None).key(PLUCK, SE), 2)  # another variant
    assert store.stats["misses"] == 2 and not np.array_equal(other, made)
    assert np.array_equal(made, notes(None)(PLUCK, SE, notes(None).key(PLUCK, SE), 1))


def test_an_edited_instrument_file_or_model_code_is_a_miss(tmp_path, monkeypatch):
    store = NoteStore(tmp_path / "cache", 1 << 30)
    own = tmp_path / "se.toml"
    shutil.copy(bundled_dir("instruments") / "se.toml", own)

    def voice():
        made = SynthVoice()
        made._instruments["se"] = load_instrument(own)
        return made

    key = notes(None).key(PLUCK, SE)
    first = notes(store, voice())(PLUCK, SE, key, 0)
    notes(store, voice())(PLUCK, SE, key, 0)
    assert store.stats["hits"] == 1
    text = own.read_text(encoding="utf-8")
    level = next(line for line in text.splitlines() if line.startswith("loudness_db"))
    own.write_text(text.replace(level, "loudness_db = 60.0", 1), encoding="utf-8")
    louder = notes(store, voice())(PLUCK, SE, key, 0)
    assert store.stats == {"hits": 1, "misses": 2, "writes": 2}
    assert not np.array_equal(louder, first)
    # the code: the name holds the code version, which reads the models' source
    package = Path(diskcache.__file__).resolve().parents[1]
    sources = {p.relative_to(package).as_posix() for p in diskcache._source_files()}
    assert {"sound/synth/string.py", "sound/synth/sung_line.py", "sound/notes.py",
            "sound/sung.py", "text/reading.py"} <= sources
    name = store.name("note", 1)
    monkeypatch.setattr(diskcache, "code_version", lambda: "0.1.0+edited")
    assert store.name("note", 1) != name


def test_the_bound_evicts_the_least_recently_used(tmp_path):
    note = np.arange(25_000, dtype=np.float32)  # 100 kB
    entry = note.nbytes + diskcache._HEADER.size
    store = NoteStore(tmp_path, 4 * entry)
    names = [store.name("n", i) for i in range(6)]
    for i, name in enumerate(names[:4]):
        store.put(name, note + i)
        os.utime(store._path(name), ns=(i * 10**9, i * 10**9))  # written in this order
    assert store.get(names[0]) is not None  # used now: the most recent
    store.settle()  # the first put's scan of the folder is done
    store.put(names[4], note + 4)  # over the bound: down to 90 % of it, oldest first
    assert store.scan() <= 4 * entry
    kept = [store.get(name) is not None for name in names[:5]]
    assert kept == [True, False, False, True, True]


def test_a_write_does_not_wait_for_the_scan_of_the_folder(tmp_path, monkeypatch):
    """The first write of a process counts what the folder holds on a thread of its own (a
    full cache: 0.6 s, before a stream's first audio); the bound holds once it is done."""
    note = np.arange(25_000, dtype=np.float32)  # 100 kB
    entry = note.nbytes + diskcache._HEADER.size
    for i in range(3):  # an earlier render's entries
        NoteStore(tmp_path, 10 * entry).put(NoteStore.name("old", i), note)
    store = NoteStore(tmp_path, 4 * entry)
    scanning, finish = threading.Event(), threading.Event()
    scan = store.scan

    def slow_scan():
        scanning.set()
        finish.wait()
        return scan()

    monkeypatch.setattr(store, "scan", slow_scan)
    for i in range(3):  # 6 entries in all, over the bound of 4
        store.put(store.name("new", i), note + i)
    assert scanning.wait(60) and not finish.is_set()  # written while the scan waits
    assert len(list(tmp_path.rglob("*.note"))) == 6
    finish.set()
    store.settle()
    assert store.scan() <= 4 * entry  # evicted down to 90 % of the bound once counted


def test_a_corrupt_or_foreign_file_is_a_miss_and_goes(tmp_path):
    store = NoteStore(tmp_path, 1 << 30)
    note = np.linspace(-1, 1, 1000, dtype=np.float32)
    name = store.name("n", 0)
    store.put(name, note)
    path = store._path(name)
    good = path.read_bytes()
    broken = {
        "truncated": good[:-7],
        "a flipped bit": good[:-100] + bytes([good[-100] ^ 1]) + good[-99:],
        "another entry's": (store.put(store.name("n", 1), note[::-1].copy()),
                            store._path(store.name("n", 1)).read_bytes())[1],
        "a pickle": b"\x80\x04\x95" + bytes(200),
        "empty": b"",
    }
    for what, raw in broken.items():
        path.write_bytes(raw)
        assert store.get(name) is None, what
        assert not path.exists(), what
    assert store.stats["misses"] == len(broken)
    store.put(name, note)
    assert np.array_equal(store.get(name), note)


def test_the_size_comes_from_the_environment(monkeypatch, tmp_path):
    for text, limit in (("", diskcache.DEFAULT_BYTES), ("500M", 500 << 20), ("2G", 2 << 30),
                        ("1048576", 1 << 20), ("off", None), ("OFF", None)):
        monkeypatch.setenv(diskcache.CACHE_ENV, text)
        assert diskcache.limit_from_env() == limit, text
    monkeypatch.setenv(diskcache.CACHE_ENV, "lots")
    with pytest.raises(RenderError, match=r"SOUNDSCAPE_CACHE='lots'.*off, or a size"):
        diskcache.limit_from_env()
    monkeypatch.setenv(diskcache.CACHE_ENV, "1G")
    monkeypatch.setenv(diskcache.CACHE_DIR_ENV, str(tmp_path))
    assert diskcache.from_env().folder == tmp_path / "notes"
    monkeypatch.delenv(diskcache.CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert diskcache.cache_root() == tmp_path / "xdg" / "soundscape"


def _writer(folder: str, limit: int, start, rounds: int) -> None:
    """Write and read back the same entries as the other process, under a bound that
    makes both evict while the other reads."""
    store = NoteStore(folder, limit)
    start.wait()
    for _ in range(rounds):
        for i in range(40):
            name = store.name("shared", i)
            expected = np.full(2000 + 10 * i, i, dtype=np.float32)
            found = store.get(name)
            if found is None:
                store.put(name, expected)
            elif not np.array_equal(found, expected):
                raise AssertionError(f"entry {i} read back wrong")
    # as a render does when it ends: its first scan (a daemon thread) evicts past the bound;
    # on a busy machine it could still be running when the process ended, the cache left
    # over two bounds' worth
    store.settle()


def test_two_processes_share_the_cache(tmp_path):
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    limit = 20 * 8000  # half the entries: both evict all along
    workers = [context.Process(target=_writer, args=(str(tmp_path), limit, start, 15))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0]
    store = NoteStore(tmp_path, limit)
    # each writer evicts from its own scan: what the other wrote since may sit over the bound
    # until the next eviction (seen: 2 runs in 8), never a second bound's worth
    assert 0 < store.scan() <= 2 * limit
    assert not list(tmp_path.rglob("*.tmp"))  # every write renamed into place or gone
    for i in range(40):
        found = store.get(store.name("shared", i))
        assert found is None or np.array_equal(found, np.full(2000 + 10 * i, i, np.float32))


def _rite(shift: float = 0.0, longer: float = 0.0, more: bool = False) -> Performance:
    """A few seconds of a rite: 瑟 plucks, a stone, a sung line; ``longer`` makes the
    third pluck longer, ``shift`` moves everything after it later (an edited step) and
    ``more`` adds a pluck before them (every later event's index moves)."""
    sources = {"se.0": SE,
               "qing": Source("qing", "bianqing", "磬", "qing", "east", (5.0, 3.0, 1.2)),
               "gong.0": Source("gong.0", "voice", "工", "gong", "gong", (0.0, 4.0, 1.5))}
    events = []
    for k in range(6):
        later = shift if k > 2 else 0.0
        duration = 0.5 + (longer if k == 2 else 0.0)
        events.append(Event(0.2 + 0.6 * k + later, duration, "se.0",
                            Pitch("黃鍾", 0, 261.6 * (1.5 if k % 2 else 1)), 0.6, "pluck", "c1"))
    if more:
        events.append(Event(1.45, 0.3, "se.0", Pitch("姑洗", 0, 329.6), 0.5, "pluck", "c1"))
    events.append(Event(2.5 + shift, 1.0, "qing", Pitch("黃鍾", 0, 261.6), 0.7, "strike",
                        "c2"))
    events += [Event(2.0 + shift + 0.5 * k, 0.5, "gong.0", Pitch("黃鍾", 0, 196.0), 0.7,
                     "sing", "c3", None, "呦", phones="j ə w") for k in range(3)]
    return Performance.build(events, [], sources)


def _render(performance, store, workers=1) -> np.ndarray:
    return np.concatenate(list(render_blocks(
        performance, listener=Listener((0.0, -6.0, 1.5), "north"),
        panner=make_panner("stereo"), sample_rate=48000, seed=5, voice=SynthVoice(),
        surroundings=Surroundings(), block_frames=48000, workers=workers, store=store)))


def test_a_render_after_an_edit_reads_the_rest_and_gives_the_cold_bytes(tmp_path):
    warm = NoteStore(tmp_path / "warm", 1 << 30)
    _render(_rite(), warm)
    made = warm.stats["writes"]
    assert made >= 5  # the plucks (two pitches × their variants), the stone, the line
    edited = _rite(shift=0.37, longer=0.37, more=True)
    cold = NoteStore(tmp_path / "cold", 1 << 30)
    from_cold = _render(edited, cold)
    before = dict(warm.stats)
    from_warm = _render(edited, warm, workers=2)  # the helper reads and writes it too
    read, remade = (warm.stats[k] - before[k] for k in ("hits", "writes"))
    assert np.array_equal(from_warm, from_cold)
    assert np.array_equal(from_warm, _render(edited, None))
    assert remade == 2  # the pluck made longer, the new one; the rest moved, and is kept
    assert read == cold.stats["writes"] - 2


def test_a_render_ends_within_its_caches_bound(tmp_path, monkeypatch):
    """A render waits, as it ends, for its store's first scan of the folder (a thread of its
    own, which evicts past the bound): a short render used to end while it ran, and left
    the cache over its bound until the next render wrote a note."""
    import threading

    scanned = threading.Event()
    scan = NoteStore.scan

    def slow_scan(self):
        found = scan(self)
        scanned.wait(30)  # until the render has ended (or a while)
        return found

    monkeypatch.setattr(NoteStore, "scan", slow_scan)
    store = NoteStore(tmp_path / "small", 1)  # every note passes the bound
    waited = []
    settle = NoteStore.settle
    monkeypatch.setattr(NoteStore, "settle",
                        lambda self: waited.append(True) or scanned.set() or settle(self))
    _render(_rite(), store)
    assert waited and store.stats["writes"] >= 5
    assert NoteStore.scan(store) <= 1  # evicted, after the render's first scan


def test_render_reads_its_notes_back_and_no_cache_leaves_it_alone(tmp_path, soundscape_cli,
                                                                  monkeypatch):
    from tests.sound.test_render import _sequence_once

    _sequence_once(monkeypatch)  # s10, sequenced once
    monkeypatch.setenv(diskcache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    lines = []
    for name in ("cold", "warm"):
        code, err = soundscape_cli("render", "--jobs", "2", "-o", f"{name}.wav", cwd=tmp_path)
        assert code == 0, err
        lines.append(next(line for line in err.splitlines() if line.startswith("note cache")))
    made = int(lines[0].split(" made")[0].rsplit(" ", 1)[1])
    read = int(lines[1].split(" notes read")[0].rsplit(" ", 1)[1])
    assert made > 10 and read >= made and lines[1].endswith(", 0 made (0 kept)")
    assert (tmp_path / "cold.wav").read_bytes() == (tmp_path / "warm.wav").read_bytes()
    monkeypatch.setenv(diskcache.CACHE_DIR_ENV, str(tmp_path / "other"))
    code, err = soundscape_cli("render", "--no-cache", "-o", "none.wav", cwd=tmp_path)
    assert code == 0 and "note cache" not in err
    assert not (tmp_path / "other").exists()
    assert (tmp_path / "none.wav").read_bytes() == (tmp_path / "cold.wav").read_bytes()


def test_the_cache_leaves_its_disk_the_room_a_render_reserved(tmp_path, monkeypatch):
    """A note is not kept when writing it would leave less than ``keep_free`` on the disk
    (a cold whole rite once filled a disk: the notes grew beside the render's own files);
    it is kept again when there is room, and a render reserves what it will write."""
    store = NoteStore(tmp_path / "notes", 1 << 30)
    name = "ab" * 16
    note = np.ones(1000, dtype=np.float32)
    total, free = 100 << 30, 5 << 30
    monkeypatch.setattr(diskcache.shutil, "disk_usage",
                        lambda _: shutil._ntuple_diskusage(total, total - free, free))
    store.keep_free = 6 << 30
    store.put(name, note)
    assert store.get(name) is None
    store.keep_free = 4 << 30
    store.put(name, note)
    assert np.array_equal(store.get(name), note)


def test_the_code_version_is_kept_with_a_stamp_of_its_files(tmp_path, monkeypatch):
    """Worked out from the bytes once, then read back while no file it read (or looked for)
    changed; a stamp that differs is worked out anew; a file changed just now keeps no
    memo (two edits of one size within a tick of the clock would look alike)."""
    monkeypatch.setenv(diskcache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(diskcache, "SETTLE_NS", 0)  # a checkout's files may be new
    worked: list[tuple] = []
    real = diskcache._code_version

    def counting(roots):
        worked.append(roots)
        return real(roots)

    monkeypatch.setattr(diskcache, "_code_version", counting)
    diskcache.code_version.cache_clear()
    try:
        first = diskcache.code_version()
        diskcache.code_version.cache_clear()
        assert diskcache.code_version() == first and len(worked) == 1  # the memo
        memo = next((tmp_path / "cache" / "code").glob("*.txt"))
        _, version, *paths = memo.read_text(encoding="utf-8").splitlines()
        package = Path(diskcache.__file__).resolve().parents[1]
        assert version == first and str(package / "sound" / "notes.py") in paths
        assert str(package / "sound" / "synth") in paths  # a model added: its folder
        memo.write_text("\n".join(["0" * 32, "0.1.0+stale", *paths]) + "\n")
        diskcache.code_version.cache_clear()
        assert diskcache.code_version() == first and len(worked) == 2
    finally:
        diskcache.code_version.cache_clear()
    own, absent = tmp_path / "x.py", tmp_path / "y.py"
    own.write_text("a")
    os.utime(own, ns=(10**18, 10**18))
    before = diskcache._stamped([str(own), str(absent)])
    own.write_text("b")  # one size, another mtime
    assert diskcache._stamped([str(own), str(absent)])[0] != before[0]
    os.utime(own, ns=(10**18, 10**18))
    assert diskcache._stamped([str(own), str(absent)]) == before
    absent.write_text("")  # a module added where an import looked
    assert diskcache._stamped([str(own), str(absent)])[0] != before[0]
    # a file changed as it was read (its mtime not before the reading): no memo kept
    monkeypatch.setattr(diskcache, "_code_version", lambda roots: ("0.1.0+new", [str(own)]))
    later = time.time_ns() + 3600 * 10**9
    os.utime(own, ns=(later, later))
    diskcache.code_version.cache_clear()
    try:
        assert diskcache.code_version(("soundscape.x",)) == "0.1.0+new"
    finally:
        diskcache.code_version.cache_clear()
    assert len(list((tmp_path / "cache" / "code").glob("*.txt"))) == 1


def test_a_store_that_can_keep_nothing_says_why(tmp_path):
    """SOUNDSCAPE_CACHE_DIR naming a file: renders kept no note and said only "0 kept"."""
    (tmp_path / "file").write_text("")
    assert NoteStore(tmp_path / "file" / "notes", 1 << 20).unusable() == \
        "its folder cannot be made (Not a directory)"
    assert NoteStore(tmp_path / "notes", 1 << 20).unusable() is None
