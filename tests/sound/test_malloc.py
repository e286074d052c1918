"""The malloc tuning the soundscape command applies before rendering."""

from __future__ import annotations

import platform

import pytest

from soundscape.malloc import reuse_freed_memory


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's")
def test_glibc_accepts_the_thresholds():
    assert reuse_freed_memory() is True


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's")
def test_glibc_accepts_one_arena():
    """In a process of its own: the limit holds for the rest of the process that sets it."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c",
                           "from soundscape.malloc import one_arena; print(one_arena())"],
                          capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "True"
