"""Fixtures shared by the test modules."""

import os
import sys

import pytest


@pytest.fixture(autouse=True, scope="session")
def _note_cache_of_its_own(tmp_path_factory):
    """The disk cache of notes (``soundscape.sound.diskcache``) in the session's own folder:
    the suite never reads or fills the user's (child processes inherit it)."""
    before = os.environ.get("SOUNDSCAPE_CACHE_DIR")
    os.environ["SOUNDSCAPE_CACHE_DIR"] = str(tmp_path_factory.mktemp("note-cache"))
    yield
    if before is None:
        os.environ.pop("SOUNDSCAPE_CACHE_DIR", None)
    else:
        os.environ["SOUNDSCAPE_CACHE_DIR"] = before


def problems(err: str) -> list[str]:
    """The lines of a run's stderr other than its report: the data line (``data: …``)
    and the progress of its stages (``… …`` and ``…: done in N s``)."""
    return [line for line in err.splitlines()
            if not (line.startswith("data: ") or line.endswith(" …") or ": done in " in line)]


@pytest.fixture
def soundscape_cli(monkeypatch, capsys):
    """Run ``soundscape ARGS…`` in-process through the real entry point, in folder ``cwd``;
    returns (exit code, stderr)."""
    from soundscape.cli import main

    def run(*args: str, cwd) -> tuple[int, str]:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(sys, "argv", ["soundscape", *args])
        try:
            main()
            code = 0
        except SystemExit as stop:
            code = stop.code
        return code, capsys.readouterr().err

    return run
