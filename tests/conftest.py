"""Fixtures shared by the test modules."""

import sys

import pytest


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
