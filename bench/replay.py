"""What the replay benchmarks share (``bench_lines.py``, ``bench_tail.py``): a render run with
some calls recorded, the recorded calls read back, and a version of a module loaded from a
file, so two versions can be fed the same calls in one process."""

from __future__ import annotations

import importlib.util
import pickle
import sys
from collections.abc import Iterator


def run_soundscape(cli: list[str], out) -> None:
    """Run ``soundscape *cli`` in this process (with its calls patched to record into
    ``out``), closing ``out`` however it ends."""
    from soundscape.cli import main

    sys.argv = ["soundscape", *cli]
    try:
        main()
    finally:
        out.close()


def load(path: str, name: str):
    """The module in file ``path``, loaded as ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def recorded(ops: str) -> Iterator:
    """The calls pickled one after another in file ``ops``."""
    with open(ops, "rb") as source:
        while True:
            try:
                yield pickle.load(source)
            except EOFError:
                return
