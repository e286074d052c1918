"""The disk cache: dry notes kept between renders, so a render after an edit remakes only
what the edit changed.

A dry note (``notes.DryNotes``) is a pure function of its model's code, its instrument file,
the event fields of its key (``notes.note_key``), the rate, the seed and the variant: the
same in every render that asks for it. So it is kept on disk under a digest of all of
those (``NoteStore.name``) and read back instead of remade. Entries are bit-identical to
remade notes (the float32 samples themselves).

Where: ``$SOUNDSCAPE_CACHE_DIR`` if set, else the user's cache folder
(``$XDG_CACHE_HOME/soundscape``, ``~/.cache/soundscape``; ``~/Library/Caches`` on macOS,
``%LOCALAPPDATA%`` on Windows), subfolder ``notes/``. How big: ``$SOUNDSCAPE_CACHE``, a size
(``8G``, ``500M``; default 8 GiB: a whole rite's notes fit), or ``off``; the least recently
used entries go first.

Files are untrusted: each is a small header (magic, the entry's own digest, its length,
a CRC-32 of the samples) and the raw float32 samples; nothing is unpickled, and
a file that does not check out is a miss (and removed). Two renders may share the folder:
an entry is written to a temporary file in its own folder and renamed into place (the
same bits whoever writes it), a reader takes a file vanishing under it as a miss, and
eviction runs under an exclusive lock (``.lock``). A hit touches the file's mtime: the
order of use that eviction follows.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import struct
import sys
import tempfile
import threading
import time
import zlib
from multiprocessing.sharedctypes import RawArray
from pathlib import Path

import numpy as np

from soundscape.errors import RenderError

__all__ = ["CACHE_DIR_ENV", "CACHE_ENV", "DEFAULT_BYTES", "NoteStore", "cache_root",
           "code_version", "from_env", "limit_from_env"]

#: ``off``, or the cache's bound as a size (``2G``, ``500M``, ``1048576``).
CACHE_ENV = "SOUNDSCAPE_CACHE"
#: The cache's folder instead of the user's cache folder (the tests point it elsewhere).
CACHE_DIR_ENV = "SOUNDSCAPE_CACHE_DIR"
DEFAULT_BYTES = 8 << 30
#: Header: magic, digest of the entry's name (16 bytes), sample count, CRC-32 of the samples
#: (against a file cut short or damaged; half the time of a BLAKE2b checksum, which took 4 %
#: of a warm render's busy time).
_MAGIC = b"SSNOTE2\0"
_HEADER = struct.Struct("<8s16sQI")
#: After eviction the cache holds at most this share of its bound (room for a render).
_LOW_WATER = 0.9
#: ``from soundscape.x import a, b`` (also in parentheses over lines) and ``import soundscape.x``.
_FROM = re.compile(r"^\s*from\s+(soundscape[\w.]*)\s+import\s+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^\s*import\s+(soundscape[\w.]*)", re.M)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
#: A stamp of files (sizes, mtimes) is kept only when none changed this long before it was
#: taken (ns): file systems' clocks tick coarsely (``code_version``).
SETTLE_NS = 2_000_000_000
#: Modules whose source is the notes' code: these and every soundscape module they import.
_ROOTS = ("soundscape.sound.notes", "soundscape.sound.sung", "soundscape.sound.synth")
#: Package data only the sequencer or the outputs read (a note is made from its event):
#: editing them keeps the notes.
_NOT_NOTES = frozenset({"durations.toml", "sequence.toml", "sections.toml", "derive_rules.toml",
                        "drum_patterns.toml", "editions.toml", "ensemble.toml",
                        "midi_programs.toml", "programmes.toml", "rites.toml", "fonts",
                        "pieces", "speech.toml", "archery.toml", "actions.toml", "site.toml",
                        "sites", "timeline.toml"})


def limit_from_env() -> int | None:
    """The cache's bound in bytes from ``$SOUNDSCAPE_CACHE`` (None: ``off``)."""
    text = os.environ.get(CACHE_ENV, "").strip()
    if not text:
        return DEFAULT_BYTES
    if text.lower() in ("off", "0", "no", "false"):
        return None
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if found is None:
        raise RenderError(f"${CACHE_ENV}={text!r}: accepted: off, or a size like 2G, 500M, "
                          "1048576 (bytes)")
    return int(float(found[1]) * _UNITS[found[2].upper()])


def cache_root() -> Path:
    """The cache's folder (``notes/`` lies in it): ``$SOUNDSCAPE_CACHE_DIR``, else the user's."""
    own = os.environ.get(CACHE_DIR_ENV)
    if own:
        return Path(own).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "soundscape"


def from_env() -> NoteStore | None:
    """The render's store as the environment says (None when ``$SOUNDSCAPE_CACHE`` is off)."""
    limit = limit_from_env()
    return None if limit is None else NoteStore(cache_root() / "notes", limit)


@functools.cache
def code_version(roots: tuple[str, ...] = _ROOTS) -> str:
    """The package version and a hash of the notes' code and data: the source of every
    soundscape module ``roots`` import (found by reading their imports; by default the
    models, ``notes`` and ``sung``), and the package data they may read; an edit of any of
    them makes every entry a miss.

    Reading and hashing those files took 0.07 s CPU, once per process: most of what a
    warm ``soundscape play`` spends before its first note. So the version is kept beside
    the cache with a stamp of the files it read and the paths it looked for
    (``_stamped``): a path, size and mtime per file, a few milliseconds to check; any
    change there (an edit, a file added where an import looked, a model added) and it is
    worked out again from the bytes. A file changed within ``SETTLE_NS`` of the reading
    keeps no memo (two edits of the same size within one tick of the file system's clock
    leave the same stamp: git's "racily clean" files)."""
    named = hashlib.blake2b(repr(roots).encode(), digest_size=8).hexdigest()
    memo = cache_root() / "code" / f"{named}.txt"
    with contextlib.suppress(OSError, ValueError):
        stamp, version, *paths = memo.read_text(encoding="utf-8").splitlines()
        if paths and _stamped(paths)[0] == stamp:
            return version
    began = time.time_ns()
    version, paths = _code_version(roots)
    stamp, newest = _stamped(paths)
    if newest < began - SETTLE_NS:
        with contextlib.suppress(OSError):
            from soundscape.fileio import write_text

            write_text(memo, "\n".join([stamp, version, *paths]) + "\n")
    return version


def _code_version(roots: tuple[str, ...]) -> tuple[str, list[str]]:
    """The version from the files' bytes, and every path it depends on (read or looked for)."""
    import soundscape
    from soundscape.resources import data_dir

    digest = hashlib.blake2b(soundscape.__version__.encode(), digest_size=16)
    sources, looked = _walk(roots)
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    data = data_dir()
    for path in _data_files(data):
        digest.update(str(path.relative_to(data)).encode() + b"\0" + path.read_bytes())
    version = f"{soundscape.__version__}+{digest.hexdigest()}"
    return version, [str(path) for path in looked]


def _data_files(data: Path) -> list[Path]:
    return [path for path in sorted(data.rglob("*"))
            if path.is_file() and path.relative_to(data).parts[0] not in _NOT_NOTES]


def _stamped(paths: list[str]) -> tuple[str, int]:
    """A digest of each path's size and mtime (or its absence), the package version and
    the package data's files (by listing); and the newest mtime (ns)."""
    import soundscape
    from soundscape.resources import data_dir

    digest = hashlib.blake2b(soundscape.__version__.encode(), digest_size=16)
    data = data_dir()
    newest = 0
    for path in [*paths, *map(str, _data_files(data))]:
        try:
            stat = os.stat(path)
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
            newest = max(newest, stat.st_mtime_ns)
        except OSError:
            digest.update(f"{path}\0absent\n".encode())
    return digest.hexdigest(), newest


def _source_files(roots: tuple[str, ...] = _ROOTS) -> list[Path]:
    return _walk(roots)[0]


def _walk(roots: tuple[str, ...]) -> tuple[list[Path], list[Path]]:
    """The source files of ``roots`` and every module they import, and every path looked
    at for them (found or not, and the model folders' own ``*.py``)."""
    package = Path(__file__).resolve().parents[1]  # soundscape/
    todo, seen, files, looked = list(roots), set(), [], set()
    while todo:
        module = todo.pop()
        if module in seen or not module.startswith("soundscape"):
            continue
        seen.add(module)
        parts = module.split(".")[1:]
        candidates = [p for p in ((package / Path(*parts)).with_suffix(".py") if parts else None,
                                  package.joinpath(*parts, "__init__.py")) if p]
        looked.update(candidates)
        found = [p for p in candidates if p.is_file()]
        if not found:
            continue
        files.append(found[0])
        if module in roots and found[0].name == "__init__.py":  # the models, loaded by name
            models = sorted(found[0].parent.glob("*.py"))
            looked.update(models)
            looked.add(found[0].parent)  # a model added or removed: the folder's mtime
            todo += [f"{module}.{p.stem}" for p in models]
        text = found[0].read_text(encoding="utf-8")
        for origin, names in _FROM.findall(text):
            todo += [origin, *(f"{origin}.{name}" for name in re.findall(r"\w+", names))]
        todo += _IMPORT.findall(text)
    return sorted(set(files)), sorted(looked)


#: What the cache leaves free on its disk at least (a render raises it to what it will write):
#: the notes are a convenience, the render's files are not (a whole rite's cold render filled
#: a disk with 3.3 GB free: its 4.6 GiB of notes beside the 6.1 GB of the render's own).
KEEP_FREE = 1 << 30


class NoteStore:
    """Dry notes on disk, keyed by name (``name``), bounded in bytes, least recently used
    evicted. Safe to share between processes (see the module docstring); counts its hits,
    misses and writes in memory a forked helper shares (``stats``).

    Parameters
    ----------
    folder : path
        Made when first written to.
    limit_bytes : int >= 0
        Bound of the files' total size.
    """

    def __init__(self, folder: str | os.PathLike[str], limit_bytes: int) -> None:
        self.folder = Path(folder)
        self.limit = int(limit_bytes)
        #: Bytes the cache leaves free on its disk (a render reserves what it will write).
        self.keep_free = KEEP_FREE
        self._owner = os.getpid()
        # hits, misses, writes: one row per process (this one's, a forked helper's)
        self._counts = RawArray("q", 6)
        self._size: int | None = None  # bytes on disk when last scanned, plus those written
        self._pending = 0  # bytes written while the first scan runs
        self._scan: threading.Thread | None = None
        self._size_lock = threading.Lock()
        self._size_pid = os.getpid()  # the process the lock and the scan belong to

    # Names ----------------------------------------------------------------------

    @staticmethod
    def name(*parts: object) -> str:
        """The entry name of a note that depends on ``parts`` (and on ``code_version``):
        a hex digest of their ``repr`` (stable across runs for numbers, strings, tuples)."""
        text = repr((code_version(), parts)).encode("utf-8")
        return hashlib.blake2b(text, digest_size=16).hexdigest()

    def _path(self, name: str) -> Path:
        return self.folder / name[:2] / f"{name}.note"

    # Reading and writing --------------------------------------------------------

    def get(self, name: str) -> np.ndarray | None:
        """The note kept under ``name``, or None (absent, vanished, or not what it should
        be: then it is removed)."""
        path = self._path(name)
        try:
            with open(path, "rb") as file:
                raw = file.read()
        except OSError:  # absent, or evicted by another render as we looked
            self._count(1)
            return None
        mono = _decode(raw, name)
        if mono is None:
            with contextlib.suppress(OSError):
                path.unlink()
            self._count(1)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: the last to be evicted
        self._count(0)
        return mono

    def put(self, name: str, mono: np.ndarray) -> None:
        """Keep ``mono`` (1-D float32) under ``name``: written beside it, then renamed into
        place. A failure to write (disk full, read-only) only loses the entry."""
        mono = np.ascontiguousarray(mono, dtype="<f4")
        if mono.ndim != 1:
            raise ValueError(f"a note is 1-D, not {mono.shape}")
        payload = mono.tobytes()
        header = _HEADER.pack(_MAGIC, bytes.fromhex(name), mono.size, zlib.crc32(payload))
        path = self._path(name)
        if self._free() - len(payload) < self.keep_free:  # the render's files come first
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(header)
                    file.write(payload)
                os.replace(tmp, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        except OSError:
            return
        self._count(2)
        self._grew(len(header) + len(payload))

    def _grew(self, nbytes: int) -> None:
        """Count ``nbytes`` written and evict past the bound. A process's first count starts
        a scan of the folder on a thread of its own (20 000 entries take 0.6 s, which a
        stream's first audio need not wait for); bytes written meanwhile are added to what
        it finds (an entry it saw as well is counted twice: eviction comes that much early)."""
        with self._counting():
            if self._size is None:
                self._pending += nbytes
                if self._scan is None:
                    self._scan = threading.Thread(target=self._scanned, daemon=True,
                                                  name="note cache scan")
                    self._scan.start()
                return
            self._size += nbytes
            over = self._size > self.limit
        if over:
            self.evict()

    def _counting(self) -> threading.Lock:
        """The lock of this process's count (a forked helper counts anew: the parent's lock
        may have been held when it forked, and its scan is not the helper's)."""
        if self._size_pid != os.getpid():
            self._size, self._pending, self._scan = None, 0, None
            self._size_lock, self._size_pid = threading.Lock(), os.getpid()
        return self._size_lock

    def _scanned(self) -> None:
        size = self.scan()
        with self._counting():
            self._size, self._pending = size + self._pending, 0
            over = self._size > self.limit
        if over:
            self.evict()

    def settle(self) -> None:
        """Wait for this process's first scan, if one runs (then the bound holds)."""
        scan = self._scan
        if scan is not None and self._size_pid == os.getpid():
            scan.join()

    def _free(self) -> int:
        """Free bytes on the cache's disk (its folder's, or the nearest that exists)."""
        folder = self.folder
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        try:
            return shutil.disk_usage(folder).free
        except OSError:
            return 0

    # Bounds ---------------------------------------------------------------------

    def scan(self) -> int:
        """Bytes of all entries now on disk."""
        return sum(size for _, size, _ in self._entries())

    def evict(self) -> int:
        """Remove the least recently used entries until the cache holds at most 90 % of
        its bound (another render's evicting at the same time waits for this one);
        returns the bytes left."""
        with self._lock():
            entries = sorted(self._entries(), key=lambda entry: entry[2])  # oldest first
            size = sum(size for _, size, _ in entries)
            target = self.limit * _LOW_WATER if size > self.limit else size
            for path, nbytes, _ in entries:
                if size <= target:
                    break
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                size -= nbytes
        with self._counting():
            self._size = size
        return size

    def _entries(self):
        """(path, bytes, mtime) of each entry; files that vanish while listed are skipped."""
        if not self.folder.is_dir():
            return
        with os.scandir(self.folder) as shards:
            for shard in shards:
                if not shard.is_dir(follow_symlinks=False):
                    continue
                with contextlib.suppress(FileNotFoundError), os.scandir(shard.path) as files:
                    for entry in files:
                        if not entry.name.endswith(".note"):
                            continue
                        with contextlib.suppress(FileNotFoundError):
                            stat = entry.stat(follow_symlinks=False)
                            yield Path(entry.path), stat.st_size, stat.st_mtime_ns

    @contextlib.contextmanager
    def _lock(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "a+b") as file:
            try:
                import fcntl
            except ImportError:  # not POSIX: eviction is then not exclusive (files vanish
                yield            # under a reader at worst, which reads that as a miss)
                return
            fcntl.flock(file.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(file.fileno(), fcntl.LOCK_UN)

    # Counts ---------------------------------------------------------------------

    def unusable(self) -> str | None:
        """Why no note can be kept here (its folder cannot be made or written), or None: a
        render that kept none says why, not only "0 kept"."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return f"its folder cannot be made ({error.strerror or error})"
        if not os.access(self.folder, os.W_OK | os.X_OK):
            return "its folder is not writable"
        return None

    def _count(self, what: int) -> None:
        self._counts[what + (0 if os.getpid() == self._owner else 3)] += 1

    @property
    def stats(self) -> dict[str, int]:
        """Hits, misses and writes so far, of this process and its forked helper."""
        counts = list(self._counts)
        return {name: counts[i] + counts[i + 3]
                for i, name in enumerate(("hits", "misses", "writes"))}


def _decode(raw: bytes, name: str) -> np.ndarray | None:
    """The samples of an entry's bytes, or None when they are not a sound entry of ``name``."""
    if len(raw) < _HEADER.size:
        return None
    magic, digest, count, checksum = _HEADER.unpack_from(raw)
    payload = memoryview(raw)[_HEADER.size:]
    if (magic != _MAGIC or digest != bytes.fromhex(name) or len(payload) != 4 * count
            or zlib.crc32(payload) != checksum):
        return None
    return np.frombuffer(payload, dtype="<f4").astype(np.float32, copy=False)
