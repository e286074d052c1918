"""Staging: a run writes all its outputs into one hidden folder, then moves them into place.

A render writes several files (the audio, its stems, markers, the loudness
report and, from the command line, the MIDI). They are written into a hidden
folder beside the destination, ``.<stem>.render-<pid>-<random>``, and moved
into the destination folder (renames on one file system) only when every one
is complete, so a run that fails or is interrupted leaves the previous outputs
as they were. The folder also holds the run's scratch files (pass 1's raw
samples).

A run killed outright (``kill -9``, a power cut) cannot remove its folder. The
next run in that folder removes every staging folder whose owning process (the
pid in its name) no longer exists and that belongs to the same user; a folder
whose pid is alive, possibly reused by another process, is left alone. A run killed
among its final renames left a set of new and old files: the folder keeps the moves'
journal and the old files' second names, and the next run puts the old set back first.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path
from types import TracebackType

from soundscape.fileio import (
    make_folder,
    process_alive,
    remove_made,
    replace_all,
    undo_interrupted,
)

__all__ = ["Staging", "remove_stale"]

_PATTERN = re.compile(r"^\..+\.render-(\d+)-[0-9a-f]{8}$")


def remove_stale(folder: Path) -> list[Path]:
    """Remove the staging folders in ``folder`` left by dead processes; return them."""
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return removed
    for entry in entries:
        match = _PATTERN.match(entry.name)
        if match is None or not entry.is_dir() or entry.is_symlink():
            continue
        if entry.stat().st_uid != os.getuid() or process_alive(int(match.group(1))):
            continue
        undo_interrupted(entry)  # killed among its final renames: the old set back whole
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


class Staging:
    """A hidden folder beside the outputs; on success its files move into ``destination``.

    Parameters
    ----------
    destination : path
        The folder the outputs go to (created if missing).
    stem : str
        Names the staging folder (the main output's stem).

    Use as a context manager: write outputs as ``stage.folder / name`` and scratch
    files under ``stage.scratch``; on a clean exit every regular file directly in
    ``stage.folder`` replaces its namesake in ``destination``; the folder is removed
    either way.
    """

    def __init__(self, destination: str | Path, stem: str) -> None:
        self.destination = Path(destination)
        self.stem = stem
        self.folder = self.destination / f".{stem}.render-{os.getpid()}-{secrets.token_hex(4)}"
        self.scratch = self.folder / "scratch"
        self._made: list[Path] = []  # the folders __enter__ made, gone if the run fails

    def __enter__(self) -> Staging:
        self._made = make_folder(self.destination)
        try:
            remove_stale(self.destination)
            self.scratch.mkdir(parents=True)
        except BaseException:
            remove_made(self._made)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        placed = False
        try:
            if kind is None:
                shutil.rmtree(self.scratch)
                replace_all([(staged, self.destination / staged.name)
                             for staged in sorted(self.folder.iterdir())
                             if staged.is_file() and not staged.name.startswith(".")],
                            aside=self.folder)  # the set placed whole, or the old one kept
                placed = True
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            if not placed:
                remove_made(self._made)

    def final(self, staged: Path) -> Path:
        """Where a file written in the staging folder ends up."""
        return self.destination / Path(staged).name

    def shown(self, error: OSError, default: Path) -> OSError:
        """``error`` naming the output it was about (``default`` where it names no file),
        not the hidden staging folder's copy (nested stagings write the same names)."""
        where = Path(error.filename) if error.filename else default
        if where == self.folder or self.folder in where.parents:
            staged_in = where.parent
            if staged_in != self.folder and _PATTERN.match(staged_in.name):
                staged_in = staged_in.parent  # a staging folder within (a render's own)
            output = staged_in == self.folder and where != self.scratch
            where = self.final(where) if output else default  # else scratch, or the folder
        return OSError(error.errno, error.strerror, str(where))
