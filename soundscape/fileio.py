"""Files in and out: inputs read safely with located errors; outputs written atomically.

Every loader reads a user's file through :func:`read_bytes`, :func:`read_text` or
:func:`read_toml`: only regular files are opened (a FIFO or a device is refused at
once instead of blocking forever), a file larger than its kind's limit is refused
before it is read, and TOML nested deeper than :data:`MAX_DEPTH` is refused instead
of exhausting the parser's stack. An integer longer than Python reads from text (4,300
digits) is refused with its line, in TOML and JSON alike. Files handed to a library
that opens them itself (a sample to soundfile) are checked with :func:`regular_file`
first.

An output goes to a temporary file beside the target and is then renamed, so a
failure or an interrupt never leaves a half-written file at the destination; files that
belong together are renamed all or none (:func:`replace_all`). A folder made for an output
goes again if the write fails (:func:`made_folder`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from soundscape.errors import SoundscapeError

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "atomic_path",
    "atomic_paths",
    "held",
    "made_folder",
    "make_folder",
    "parse_toml",
    "process_alive",
    "read_bytes",
    "read_json",
    "read_text",
    "read_toml",
    "recorded",
    "refuse_folders",
    "regular_file",
    "remove_made",
    "replace_all",
    "replace_set",
    "undo_interrupted",
    "write_bytes",
    "write_set",
    "write_text",
    "write_texts",
]

#: Largest input file read (bytes): a whole annotated Yili is about 1 MB.
MAX_BYTES = 64 * 1024 * 1024
#: Deepest nesting of arrays and tables accepted in a TOML file.
MAX_DEPTH = 32


@contextlib.contextmanager
def _part(target: Path) -> Iterator[Path]:
    """A hidden temporary file beside ``target`` (its suffix kept), removed on leaving."""
    _remove_dead_parts(target)
    try:  # named by this process, so that the next run can tell a killed one's leftovers
        fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.{os.getpid()}-",
                                   suffix=f".part{target.suffix}", dir=target.parent)
    except OSError as error:  # name the file asked for, not the hidden one
        raise OSError(error.errno, error.strerror, str(target)) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
    except OSError as error:  # a write's (no name) or the hidden file's: name the target
        if error.filename is not None and Path(error.filename) != tmp_path:
            raise
        raise OSError(error.errno, error.strerror, str(target)) from None
    finally:
        tmp_path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; rename it onto ``target`` on success.

    The temporary file keeps the target's suffix so that writers which infer the
    format from the name (soundfile, matplotlib) still work.
    """
    with atomic_paths(target) as (part,):
        yield part


@contextlib.contextmanager
def atomic_paths(*targets: str | os.PathLike[str]) -> Iterator[tuple[Path, ...]]:
    """:func:`atomic_path` for files that belong together: none is renamed onto its
    target until every one has been written, and then all are or none
    (:func:`replace_all`), so a failure while making or placing the second leaves the
    first as it was; a folder made for them goes again. The renames keep a journal in the
    first target's folder: a process killed among them is undone by the next write there
    (the old set back whole)."""
    paths = [Path(target) for target in targets]
    with contextlib.ExitStack() as stack:
        for folder in dict.fromkeys(path.parent for path in paths):
            stack.enter_context(made_folder(folder))
            _undo_dead_sets(folder)  # before the dead parts go: a killed set's old files'
            # second names are among them
        parts = tuple(stack.enter_context(_part(path)) for path in paths)
        yield parts
        for part in parts:  # mkstemp makes a file private (0600): a plain open()'s mode
            os.chmod(part, 0o666 & ~_umask())
        journal = paths[0].parent / f".{os.getpid()}-{secrets.token_hex(4)}{JOURNAL}"
        replace_all(list(zip(parts, paths, strict=True)), journal=journal)


def replace_all(moves: list[tuple[Path, Path]], aside: Path | None = None, *,
                journal: Path | None = None) -> None:
    """Rename each ``(source, target)`` of ``moves``, all of them or none.

    A target that is a folder is refused before anything moves. Each rename is atomic (a
    target is always its old file or its new one, never missing). Before the renames, each
    target's old file gets a second name, a hard link (in ``aside``, else beside it, named
    as a part of this process's, so that a later run removes it once this one is gone); if
    a rename fails, the ones placed are undone from those links and the error names the
    target it failed on. Where the file system has no hard links, a target is replaced
    without one and cannot be undone. One move is a plain atomic rename. The moves are
    written to ``journal`` (default: ``aside``'s :data:`JOURNAL`, if ``aside``) until all
    are made, so that a process killed among them can be undone (:func:`undo_interrupted`).
    """
    refuse_folders(*(target for _, target in moves))
    if len(moves) == 1:
        _rename(*moves[0])
        return
    # (target, whether it was there, a second name of its old file)
    kept: list[tuple[Path, bool, Path | None]] = []
    placed = 0
    if journal is None and aside is not None:
        journal = aside / JOURNAL
    try:
        for _, target in moves:
            kept.append((target, os.path.lexists(target), _second_name(target, aside)))
        if journal is not None:  # a run killed among the renames is undone by the next
            try:
                write_text(journal, json.dumps([[str(s), str(t), e, None if o is None else str(o)]
                                                for (s, _), (t, e, o) in zip(moves, kept,
                                                                              strict=True)]))
            except OSError as error:  # (a full disk) name the files, not the hidden journal
                raise OSError(error.errno, error.strerror, str(moves[0][1])) from None
        for source, target in moves:
            _rename(source, target)
            placed += 1
        if journal is not None:
            journal.unlink()
    except BaseException:
        for target, existed, old in reversed(kept[:placed]):
            _put_back(target, existed, old)
        if journal is not None:  # undone here: nothing for the next run to undo
            journal.unlink(missing_ok=True)
        raise
    finally:
        for _, _, old in kept:
            if old is not None:
                old.unlink(missing_ok=True)


#: The moves :func:`replace_all` is making, kept in its ``aside`` folder until all are made
#: (an :func:`atomic_paths` set's in its first file's folder, ``.<pid>-<8 hex>`` before it).
JOURNAL = ".moves.json"
_SET_JOURNAL = re.compile(r"\.(\d+)-[0-9a-f]{8}" + re.escape(JOURNAL))


def undo_interrupted(aside: Path) -> bool:
    """Undo the renames of a :func:`replace_all` killed among them (its journal is still in
    ``aside``, the folder its old files' second names are in): each target whose new file
    was placed gets its old file back, or goes if there was none. True if there was one."""
    return _undo(aside / JOURNAL)


def _undo_dead_sets(folder: Path) -> None:
    """Undo the renames of :func:`atomic_paths` sets whose process died among them (their
    journals in ``folder``, named by the process): a kill -9 there left a new SVG beside
    an old PNG."""
    try:
        names = [n for n in os.listdir(folder) if _SET_JOURNAL.fullmatch(n)]
    except OSError:
        return
    for name in names:
        pid = int(_SET_JOURNAL.fullmatch(name).group(1))  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            if (folder / name).lstat().st_uid == os.getuid() and not process_alive(pid):
                _undo(folder / name)


def _undo(journal: Path) -> bool:
    """Undo the moves ``journal`` lists whose source is gone (moved onto its target), and
    remove the sources never moved. A journal that is not a list of moves, or names a file
    outside its target's folder and the journal's, is left alone: it is not to be trusted."""
    try:
        moves = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(moves, list) or not all(_a_move(move, journal.parent) for move in moves):
        return False
    for source, target, existed, old in reversed(moves):
        if not os.path.lexists(source):  # moved onto its target
            _put_back(Path(target), existed, None if old is None else Path(old))
        else:  # a new file never placed, and its target's old file kept as it is
            for path in (source, old):
                if path is not None:
                    Path(path).unlink(missing_ok=True)
    journal.unlink(missing_ok=True)
    return True


def _a_move(move: Any, journal_folder: Path) -> bool:
    """Whether ``move`` is a journal's ``[source, target, existed, old]``, the new file and
    the old one's second name each beside its target or the journal."""
    if not (isinstance(move, list) and len(move) == 4 and isinstance(move[0], str)
            and isinstance(move[1], str) and isinstance(move[2], bool)
            and (move[3] is None or isinstance(move[3], str))):
        return False
    beside = (Path(move[1]).parent, journal_folder)
    return Path(move[0]).parent in beside and (move[3] is None or Path(move[3]).parent in beside)


def _put_back(target: Path, existed: bool, old: Path | None) -> None:
    """``target`` as it was before a move onto it: its old file from its second name."""
    with contextlib.suppress(OSError):
        if old is not None:
            os.replace(old, target)
        elif not existed:
            target.unlink(missing_ok=True)


@contextlib.contextmanager
def made_folder(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """``folder``, made (with its missing parents) for a write; if the write fails, the
    folders made here go again, each if still empty: a full disk left an empty ``-o``
    folder behind, where the user had none."""
    folder = Path(folder)
    missing = make_folder(folder)
    try:
        yield folder
    except BaseException:
        remove_made(missing)
        raise


def make_folder(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; return those it made, deepest first."""
    missing = [path for path in (folder, *folder.parents) if not os.path.lexists(path)]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except BaseException:  # a file in the way, or a full disk, part of the way down
        remove_made(missing)
        raise
    return missing


def remove_made(folders: Iterable[Path]) -> None:
    """Remove each of ``folders`` (deepest first) that is still an empty folder."""
    for path in folders:
        with contextlib.suppress(OSError):  # not empty (another run's files): kept
            path.rmdir()


@contextlib.contextmanager
def held(folder: str | os.PathLike[str], error: type[SoundscapeError], what: str
         ) -> Iterator[None]:
    """Hold ``folder`` (made if missing, and removed again if the write fails; a lock on
    the folder itself, no file left in it)
    while a run writes a set of files there: a second run into it is refused at once,
    ``error`` saying ``what`` is being written (waiting could hang; two runs interleaved
    left a set of both). The lock goes with the process, however it ends."""
    import fcntl

    folder = Path(folder)
    missing = make_folder(folder)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # the other run's folder: not ours to remove
            raise error(f"{folder}: another run is writing {what} there; run again when it "
                        "has ended, or write elsewhere") from None
        try:
            yield
        except BaseException:  # while still held: no other run is writing there yet
            remove_made(missing)
            raise
    finally:
        os.close(fd)  # closing lets the lock go


def refuse_folders(*targets: str | os.PathLike[str]) -> None:
    """Raise IsADirectoryError naming the first of ``targets`` that is a folder: a file
    is to be written there (checked before a long run, not after it)."""
    for target in map(Path, targets):
        if target.is_dir() and not target.is_symlink():
            raise IsADirectoryError(errno.EISDIR, "is a folder, where a file was to be "
                                    "written", str(target))


def _rename(source: Path, target: Path) -> None:
    try:
        os.replace(source, target)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(target)) from None


def _second_name(target: Path, aside: Path | None) -> Path | None:
    """A hard link to ``target``'s file, named as a part of this process's; None where
    there is no file, or the file system has no hard links."""
    if not os.path.lexists(target) or target.is_symlink():
        return None
    old = (aside or target.parent) / (f".{target.stem}.{os.getpid()}-{secrets.token_hex(4)}"
                                      f".part{target.suffix}")
    try:
        os.link(target, old)
    except OSError as error:
        if error.errno in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EMLINK,
                           errno.EOPNOTSUPP):
            return None  # no hard links here (FAT, exFAT, some network file systems)
        raise
    return old


def write_texts(texts: Mapping[Path, str]) -> list[Path]:
    """Write each text as UTF-8 to its path, all of them or none (:func:`atomic_paths`)."""
    paths = list(texts)
    with atomic_paths(*paths) as parts:
        for part, path in zip(parts, paths, strict=True):
            part.write_text(texts[path], encoding="utf-8")
    return paths


def replace_set(folder: str | os.PathLike[str], names: Iterable[str], *, record: str,
                kinds: tuple[str, ...] = ()) -> list[Path]:
    """Remove from ``folder`` the files an earlier run wrote there (listed in the hidden
    file ``record``) that this run, which wrote ``names``, did not; then record ``names``.

    A folder of per-piece or per-round files then holds this run's set only, and a file
    the user put there is never touched: only names this function recorded are removed,
    and only regular files inside ``folder`` at that (a name may be ``sub/file``; no
    absolute paths, ``..`` or links are followed), and only of the set's ``kinds`` (name
    endings; none: any) — a record edited or copied by hand removed the notes listed in
    it. A subfolder left empty goes too. Returns the removed files.
    """
    folder, names = Path(folder), sorted(set(names))
    removed = []
    for name in sorted(set(recorded(folder, record)) - set(names) - {record}):
        path = folder / name
        if (not _inside(folder, name) or path.is_symlink() or not path.is_file()
                or (kinds and not name.endswith(kinds))):
            continue
        path.unlink(missing_ok=True)  # another run into the folder may have been first
        removed.append(path)
        with contextlib.suppress(OSError):  # a subfolder it emptied (not empty: kept)
            for parent in path.relative_to(folder).parents[:-1]:
                (folder / parent).rmdir()
    write_text(folder / record, "".join(f"{name}\n" for name in names))
    return sorted(removed)


def write_set(folder: str | os.PathLike[str], writers: Mapping[str, Callable[[Path], object]],
              *, record: str, error: type[SoundscapeError], what: str,
              kinds: tuple[str, ...] = ()) -> list[Path]:
    """Write a folder's set of files, each ``name`` by ``writers[name](path)``: the folder
    held while it is written (:func:`held`, ``error`` saying ``what`` is written), the files
    placed all or none (:func:`atomic_paths`), and those of the last set written with
    ``record`` that this one lacks removed (:func:`replace_set`, of ``kinds`` only)."""
    written = [Path(folder) / name for name in writers]
    with held(folder, error, what):
        with atomic_paths(*written) as staged:
            for write, part in zip(writers.values(), staged, strict=True):
                write(part)
        replace_set(folder, list(writers), record=record, kinds=kinds)
    return written


def recorded(folder: str | os.PathLike[str], record: str) -> list[str]:
    """The names :func:`replace_set` recorded in ``folder`` (none if unreadable)."""
    try:
        return (Path(folder) / record).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _inside(folder: Path, name: str) -> bool:
    """Whether ``name`` is a relative path that stays in ``folder``, through no link."""
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or any(p in ("", ".", "..") for p in parts):
        return False
    return not any((folder / Path(*parts[:i])).is_symlink() for i in range(1, len(parts)))


def _remove_dead_parts(target: Path) -> None:
    """Remove the hidden files :func:`atomic_path` began for ``target`` in processes that
    are gone (killed with SIGKILL, or the machine stopped): a killed ``play -o x.wav`` left
    ``.x.<pid>-….part.wav`` beside it for good."""
    # mkstemp's 8 characters exactly: another target's name (a.5-b.wav) must not match
    pattern = re.compile(rf"\.{re.escape(target.stem)}\.(\d+)-[a-z0-9_]{{8}}\.part"
                         rf"{re.escape(target.suffix)}")
    try:
        names = [name for name in os.listdir(target.parent) if pattern.fullmatch(name)]
    except OSError:
        return
    for name in names:
        pid = int(pattern.fullmatch(name).group(1))  # type: ignore[union-attr]
        path = target.parent / name
        with contextlib.suppress(OSError):
            if path.lstat().st_uid == os.getuid() and not process_alive(pid):
                path.unlink()


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (someone else's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` as UTF-8 to ``target`` atomically and return the path."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


def write_bytes(target: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically and return the path."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return Path(target)


def regular_file(path: str | os.PathLike[str],
                 error: type[SoundscapeError] = SoundscapeError) -> Path:
    """``path`` if it is (or links to) a regular file; else ``error`` naming it."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError as problem:
        raise error(f"{path}: no such file") from problem
    except OSError as problem:
        raise error(f"{path}: cannot be read: {problem.strerror or problem}") from problem
    if not stat.S_ISREG(mode):
        raise error(f"{path}: not a regular file (a folder, FIFO or device); give a file")
    return path


def read_bytes(path: str | os.PathLike[str], error: type[SoundscapeError] = SoundscapeError,
               *, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); else ``error`` naming it.

    The file is opened without blocking and checked after opening, so a FIFO
    (which would wait forever for a writer) or a device is refused at once.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as problem:
        raise error(f"{path}: no such file") from problem
    except OSError as problem:
        raise error(f"{path}: cannot be read: {problem.strerror or problem}") from problem
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{path}: not a regular file (a folder, FIFO or device); give a file")
        raise error(f"{path}: {info.st_size} bytes is larger than the {limit} accepted")
    with os.fdopen(fd, "rb") as stream:
        try:
            data = stream.read(limit + 1)
        except OSError as problem:
            raise error(f"{path}: cannot be read: {problem.strerror or problem}") from problem
    if len(data) > limit:
        raise error(f"{path}: larger than the {limit} bytes accepted")
    return data


def read_text(path: str | os.PathLike[str], error: type[SoundscapeError] = SoundscapeError,
              *, limit: int = MAX_BYTES) -> str:
    """The UTF-8 text of the regular file ``path``; else ``error`` naming it."""
    data = read_bytes(path, error, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(f"{path}: not UTF-8 text (byte {problem.start}); the file must be "
                    "UTF-8") from problem


def read_toml(path: str | os.PathLike[str],
              error: type[SoundscapeError] = SoundscapeError) -> dict[str, Any]:
    """Parse the TOML file ``path``; problems raise ``error`` as ``FILE:LINE: …``.

    Parameters
    ----------
    path : path-like
    error : SoundscapeError subclass
        The error of the concern reading the file (SiteError, InstrumentError …).
    """
    return parse_toml(read_text(path, error), str(path), error)


def read_json(path: str | os.PathLike[str],
              error: type[SoundscapeError] = SoundscapeError) -> Any:
    """Parse the JSON file ``path``; problems raise ``error`` as ``FILE:LINE: …``."""
    raw = read_text(path, error)
    try:
        data = json.loads(raw)
        too_deep = _depth(data) > MAX_DEPTH
    except json.JSONDecodeError as problem:
        raise error(f"{path}:{problem.lineno}: not valid JSON: {problem.msg}") from None
    except ValueError:  # only int() raises a plain ValueError here: too many digits
        _too_long(raw, str(path), error)
    except RecursionError:
        too_deep = True
    if too_deep:
        raise error(f"{path}: arrays or objects nested more than {MAX_DEPTH} deep "
                    f"(accepted: up to {MAX_DEPTH} levels)")
    return data


def parse_toml(raw: str, source: str,
               error: type[SoundscapeError] = SoundscapeError) -> dict[str, Any]:
    """Parse TOML text read from ``source``; bad or too deeply nested TOML raises ``error``."""
    try:  # a byte-order mark (some editors save one) is not TOML's, nor an error of the user's
        data = tomllib.loads(raw.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as problem:
        line = re.search(r"line (\d+)", str(problem))
        raise error(f"{source}:{line.group(1) if line else 1}: not valid TOML: "
                    f"{problem}") from problem
    except ValueError:  # only int() raises a plain ValueError here: too many digits
        _too_long(raw, source, error)
    except RecursionError:
        data = None
    if data is None or _depth(data) > MAX_DEPTH:
        raise error(f"{source}:{_deep_line(raw)}: arrays or tables nested more than "
                    f"{MAX_DEPTH} deep (accepted: up to {MAX_DEPTH} levels)")
    return data


def _too_long(raw: str, source: str, error: type[SoundscapeError]) -> NoReturn:
    """Raise ``error`` at the line of the first integer past Python's digit limit."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d[\d_]{{{limit},}}", raw)
    line = raw.count("\n", 0, found.start()) + 1 if found else 1
    digits = len(found.group().replace("_", "")) if found else limit + 1
    raise error(f"{source}:{line}: a {digits}-digit integer is too long to read "
                f"(accepted: integers of at most {limit} digits)")


def _depth(value: Any) -> int:
    """How deeply arrays and tables nest in parsed TOML (iterative: no recursion)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict)
                                                      else item))
    return deepest


def _deep_line(raw: str) -> int:
    """The line where brackets first nest past MAX_DEPTH (strings on one line skipped)."""
    level = 0
    for number, line in enumerate(raw.splitlines(), start=1):
        line = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|#.*", "", line)
        for char in line:
            level += char in "[{"
            level -= char in "]}"
            if level > MAX_DEPTH:
                return number
    return 1
