"""Where bundled data lives, in a checkout and in an installed wheel.

``instruments/`` and ``cues/`` are top-level folders of the repository so that
people can edit them; the wheel carries them as ``soundscape/_bundled/…``.
Package-internal data (texts, pieces, tables) lives in ``soundscape/data``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["bundled_dir", "data_dir", "repo_root"]

_PACKAGE = Path(__file__).resolve().parent


def repo_root() -> Path | None:
    """The checkout this package runs from, or None when installed as a wheel."""
    root = _PACKAGE.parent
    return root if (root / "pyproject.toml").is_file() else None


def bundled_dir(name: str) -> Path:
    """The folder of top-level data ``name`` ('instruments' or 'cues')."""
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
