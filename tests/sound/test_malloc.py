"""The malloc tuning the soundscape command applies before rendering."""

from __future__ import annotations

import gc
import platform

import pytest

from soundscape.malloc import collector_paused, reuse_freed_memory


def test_the_collector_is_paused_inside_and_left_as_it_was_found():
    """Off inside, nested or not; on again after, an error or not; left off if it was off."""
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner one found it off
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), collector_paused():
        _ = 1 / 0
    assert gc.isenabled()

    @collector_paused()
    def state() -> bool:
        return gc.isenabled()

    assert state() is False and state() is False and gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


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


#: A process that frees 48 MiB (kept in the heap: the thresholds), forks a child, then
#: writes 48 MiB anew in the same place, and prints the KiB the child then holds alone.
_FREED_THEN_FORKED = """
import multiprocessing, sys
from pathlib import Path
import numpy as np
from soundscape import malloc

def private_kib():
    rollup = Path("/proc/self/smaps_rollup").read_text().splitlines()
    return sum(int(line.split()[1]) for line in rollup if line.startswith("Private_"))

def child(conn):
    before = private_kib()
    conn.recv()  # the parent has written its new blocks
    conn.send(private_kib() - before)

if sys.argv[1] == "released":
    assert malloc.reuse_freed_memory()
else:  # the thresholds alone
    mallopt = malloc._mallopt()
    assert mallopt(malloc._M_MMAP_THRESHOLD, malloc._MMAP_THRESHOLD_MAX)
    assert mallopt(malloc._M_TRIM_THRESHOLD, malloc._TRIM_THRESHOLD)
blocks = [np.ones(1 << 17) for _ in range(48)]
del blocks
context = multiprocessing.get_context("fork")
ours, theirs = context.Pipe()
process = context.Process(target=child, args=(theirs,))
process.start()
blocks = [np.ones(1 << 17) for _ in range(48)]
ours.send(True)
print(ours.recv())
process.join()
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_memory_kept_for_reuse_is_given_back_before_a_fork_and_not_left_to_it():
    """With the thresholds raised, freed blocks stay in the heap; a fork shared their
    pages, and when the parent wrote there again each page was copied for it and the
    child left holding the old one (pass 2's forked process grew to 574 MiB on s32 in
    hoa3). Given back before each fork, the child holds nothing of them."""
    import subprocess
    import sys

    def child_kib(how: str) -> int:
        done = subprocess.run([sys.executable, "-c", _FREED_THEN_FORKED, how],
                              capture_output=True, text=True, check=True, timeout=120)
        return int(done.stdout)

    assert child_kib("kept") > 40 << 10
    assert child_kib("released") < 8 << 10


def test_free_pages_are_given_back_once_an_interval_has_passed(monkeypatch):
    """``releasing_now_and_then``: a trim when ``every_s`` has passed on its clock since the
    last one (or since it was made), none before."""
    from soundscape import malloc

    now, trims = [100.0], []
    monkeypatch.setattr(malloc, "release_freed_memory", lambda: trims.append(now[0]))
    maybe = malloc.releasing_now_and_then(2.0, clock=lambda: now[0])
    for moment in (100.5, 101.9, 102.0, 103.0, 103.99, 104.0, 110.0, 110.1):
        now[0] = moment
        maybe()
    assert trims == [102.0, 104.0, 110.0]


def test_a_render_gives_free_pages_back_as_it_goes(monkeypatch):
    """``render_blocks`` asks after every block it hands out whether it is time to trim."""
    import numpy as np

    from soundscape.sound import render
    from soundscape.sound.panning import make_panner
    from soundscape.sound.propagation import Surroundings
    from tests.sound.test_render import FS, NORTH, noise_voice, scene

    asked = []
    monkeypatch.setattr(render, "releasing_now_and_then", lambda: lambda: asked.append(1))
    blocks = list(render.render_blocks(
        scene(6), listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=Surroundings(), block_frames=FS // 4))
    assert len(blocks) > 4 and len(asked) == len(blocks)
    assert np.concatenate(blocks).any()
