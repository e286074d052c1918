"""The malloc tuning the soundscape command applies before rendering."""

from __future__ import annotations

import platform

import pytest

from soundscape.malloc import reuse_freed_memory


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's")
def test_glibc_accepts_the_thresholds():
    assert reuse_freed_memory() is True
