"""A persistent cache of sequenced Performances, so a verb that must start fast (``play``)
does not sequence the rite again (seconds for the whole rite) when nothing it reads changed.

An entry is keyed by a SHA-256 of everything sequencing reads: the cue sheet's bytes, the
durations table's, the package's own files (its code and ``soundscape/data``), the
instrument files, the options (seed, sections, variants …), and the versions of the
package, Python and numpy (whose generators the simulation draws from). Any change gives
a new key; old entries are pruned, the least recently used first.

The folder is ``soundscape/performances`` under the user's cache folder (``platformdirs``
where installed, else ``$XDG_CACHE_HOME`` or ``~/.cache``; ``~/Library/Caches`` on macOS,
``%LOCALAPPDATA%`` on Windows), or ``performances`` in ``$SOUNDSCAPE_CACHE_DIR`` when that
is set (beside the note cache's ``notes``). Entries are pickles: the user's own cache,
written by this module (as trusted as the user's other files); a file that does not start
with its key's header, or does not unpickle to a Performance, is a miss and is written anew.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import io
import os
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path

from soundscape.fileio import write_bytes
from soundscape.malloc import collector_paused
from soundscape.performance import Performance
from soundscape.resources import bundled_dir

__all__ = ["MAX_ENTRIES", "cache_dir", "cached_performance", "performance_key"]

#: Entries kept (a whole rite is ~20 MB pickled; a section far less).
MAX_ENTRIES = 24
_MAGIC = b"soundscape performance cache 1\n"
#: A stamp of the package's files is kept only when none changed this long before (ns).
_SETTLE_NS = 2_000_000_000


def cache_dir() -> Path:
    """``…/soundscape/performances`` under the user's cache folder (see the module), or
    ``performances`` in ``$SOUNDSCAPE_CACHE_DIR`` when set (the note cache's folder)."""
    own = os.environ.get("SOUNDSCAPE_CACHE_DIR")
    if own:
        return Path(own).expanduser() / "performances"
    try:
        from platformdirs import user_cache_dir
    except ImportError:
        user_cache_dir = None
    if user_cache_dir is not None:
        root = Path(user_cache_dir("soundscape", appauthor=False))
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Caches" / "soundscape"
    elif os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        root = Path(os.environ["LOCALAPPDATA"]) / "soundscape" / "Cache"
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "soundscape"
    return root / "performances"


@functools.cache
def _package_digest() -> bytes:
    """SHA-256 of the package's files (code and data) and the bundled instruments, by path
    and bytes (about 3 MB), once per process.

    Listing and hashing them took 30 ms of a ``play``'s start; the digest is kept beside
    the entries with a stamp of each file's path, size and mtime (5 ms), and worked out
    from the bytes again when the stamp differs; none is kept while a file is newer than
    ``_SETTLE_NS`` (two edits of one size within a tick of the file system's clock would
    leave the same stamp)."""
    import numpy

    # the package's files are hashed below (its version with them): importing the package's
    # top would import the render's layer from the sequencer's
    head = f"{sys.version} numpy {numpy.__version__}".encode()
    package = Path(__file__).resolve().parents[1]
    roots = (package, bundled_dir("instruments"))
    began = time.time_ns()
    files = [(root, relative) for root in roots for relative in _files(root)]
    stamp, newest = hashlib.sha256(head), 0
    for root, relative in files:
        try:
            found = os.stat(os.path.join(root, relative))
        except OSError:  # gone while listed: no memo this time
            newest = began
            continue
        stamp.update(f"{relative}\0{found.st_size}\0{found.st_mtime_ns}\0".encode())
        newest = max(newest, found.st_mtime_ns)
    memo = cache_dir() / "package.digest"
    with contextlib.suppress(OSError, ValueError):
        kept, digest = memo.read_text(encoding="ascii").split()
        if kept == stamp.hexdigest():
            return bytes.fromhex(digest)
    whole = hashlib.sha256(head)
    for root, relative in files:
        whole.update(relative.encode() + b"\0")
        whole.update(Path(root, relative).read_bytes())
    if newest < began - _SETTLE_NS:  # no file changed as it was read (see the docstring)
        with contextlib.suppress(OSError):
            write_bytes(memo, f"{stamp.hexdigest()} {whole.hexdigest()}\n".encode())
    return whole.digest()


def _files(root: Path) -> list[str]:
    """The files under ``root`` (no ``__pycache__``), as sorted relative POSIX paths."""
    found = []
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if name != "__pycache__"]
        here = Path(folder).relative_to(root)
        found += [(here / name).as_posix() for name in names]
    return sorted(found)


def performance_key(cues: Path, durations: Path | None, **options: object) -> str:
    """The cache key of sequencing ``cues`` with ``durations`` and ``options`` (their repr,
    sorted by name): a hex SHA-256."""
    digest = hashlib.sha256(_package_digest())
    for path in (cues, durations):  # a file (its length, then its bytes) or none
        data = Path(path).read_bytes() if path is not None else None
        digest.update(b"\0none\0" if data is None else b"\0file %d\0" % len(data) + data)
    digest.update(repr(sorted(options.items())).encode())
    return digest.hexdigest()


def cached_performance(key: str, make: Callable[[], Performance], *,
                       folder: Path | None = None) -> tuple[Performance, bool]:
    """The Performance stored under ``key``, or ``make()``'s, stored; and whether it was
    found. A cache that cannot be written (read-only, full) is skipped silently: the
    Performance is the same either way."""
    folder = folder or cache_dir()
    path = folder / f"{key}.pickle"
    header = _MAGIC + key.encode() + b"\n"
    found = _load(path, header)
    if found is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: pruned last
        return found, True
    performance = make()
    with contextlib.suppress(OSError):
        write_bytes(path, header + _dumps(performance))
        _prune(folder)
    return performance, False


def _dumps(performance: Performance) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(performance)
    return out.getvalue()


class _Pickler(pickle.Pickler):
    """Pickles a frozen slotted dataclass (an Event, its Pitch, a Marker …) as its class and
    its fields, read back through its ``__init__``: dataclasses' own ``__setstate__`` looks
    up the class's fields for every object, and took a third of reading a whole rite back
    (~40 000 of them; now 0.26 s instead of 0.38 s CPU, writing 0.19 s instead of 0.39 s)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._fields: dict[type, tuple[str, ...] | None] = {}  # of each class met

    def reducer_override(self, obj):
        cls = type(obj)
        if cls not in self._fields:  # a class with a reduction of its own keeps it (an Event)
            self._fields[cls] = None if "__reduce__" in cls.__dict__ else _init_fields(cls)
        names = self._fields[cls]
        if names is None:
            return NotImplemented
        return cls, tuple([getattr(obj, name) for name in names])


def _init_fields(cls: type) -> tuple[str, ...] | None:
    """The fields a slotted dataclass's ``__init__`` takes, in order, when they are all it
    has (no InitVar, ClassVar or field left out of ``__init__``); else None."""
    if not (dataclasses.is_dataclass(cls) and isinstance(cls, type)
            and "__slots__" in cls.__dict__):
        return None
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__) or not all(f.init for f in fields):
        return None
    return tuple(f.name for f in fields)


def _load(path: Path, header: bytes) -> Performance | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(header):
        return None
    try:
        found = _loads(data[len(header):])
    except Exception:  # a truncated or foreign file: a miss, written anew
        return None
    return found if isinstance(found, Performance) else None


@collector_paused()
def _loads(data: bytes) -> object:
    """``pickle.loads`` with the cyclic collector paused (a rite's ~40 000 objects)."""
    return pickle.loads(data)


def _prune(folder: Path) -> None:
    """Keep the ``MAX_ENTRIES`` most recently used entries."""
    entries = sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[MAX_ENTRIES:]:
        with contextlib.suppress(OSError):
            old.unlink()
