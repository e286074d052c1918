"""Where the data lives: the user's project folder first, then the bundled copy.

``instruments/`` and ``cues/`` are top-level folders of the repository so that
people can edit them; the wheel carries them as ``soundscape/_bundled/…``.
A *project folder* is the working directory or its nearest ancestor holding a
``soundscape.toml`` (any content), or a ``pyproject.toml`` naming the project
``soundscape`` (a checkout). Its ``cues/`` and ``instruments/`` are used instead of
the bundled ones, each folder on its own: so after ``pip install .`` an edit to
``cues/dashe.toml`` or a new ``instruments/tao2.toml`` in the checkout counts.
Package-internal data (texts, pieces, tables) lives in ``soundscape/data``.
"""

from __future__ import annotations

import functools
from pathlib import Path

from soundscape.errors import SoundscapeError
from soundscape.fileio import read_toml

__all__ = ["PROJECT_MARKER", "bundled_dir", "data_dir", "project_dir", "repo_root"]

_PACKAGE = Path(__file__).resolve().parent
#: The file that makes a folder a soundscape project folder.
PROJECT_MARKER = "soundscape.toml"


def repo_root() -> Path | None:
    """The checkout this package runs from, or None when installed as a wheel."""
    root = _PACKAGE.parent
    return root if (root / "pyproject.toml").is_file() else None


def project_dir(start: Path | None = None) -> Path | None:
    """The project folder at or above ``start`` (default: the working directory), or None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_MARKER).is_file() or _names_soundscape(folder / "pyproject.toml"):
            return folder
    return None


def _names_soundscape(pyproject: Path) -> bool:
    try:  # read again only when the file changed: a checkout's took 2 ms a call, 24 a play
        stat = pyproject.stat()
    except OSError:
        return False
    return _names_soundscape_as(pyproject, stat.st_dev, stat.st_ino, stat.st_size,
                                stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _names_soundscape_as(pyproject: Path, *stamp: int) -> bool:
    """``_names_soundscape`` of the file as ``stamp`` (device, inode, size, mtime) finds it."""
    try:  # through fileio: a FIFO named pyproject.toml must not block every command
        data = read_toml(pyproject)
    except SoundscapeError:
        return False
    project = data.get("project")
    return isinstance(project, dict) and project.get("name") == "soundscape"


def bundled_dir(name: str) -> Path:
    """The folder of editable data ``name`` ('instruments' or 'cues'): the project
    folder's if it has one, else the copy installed with the package."""
    project = project_dir()
    if project is not None and (project / name).is_dir():
        return project / name
    installed = _PACKAGE / "_bundled" / name
    if installed.is_dir():
        return installed
    root = repo_root()
    if root is not None and (root / name).is_dir():
        return root / name
    raise FileNotFoundError(f"bundled data folder {name!r} not found beside {_PACKAGE}")


def data_dir() -> Path:
    """The package-internal data folder (texts, pieces, tables)."""
    return _PACKAGE / "data"
