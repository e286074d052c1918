"""Fixtures shared by the test modules."""

import sys

import pytest


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
