"""What moving work between a render's processes costs, alone (docs/render.md, "Three
processes"): the helper's notes (through the shared-memory ring), its requests (bare
indices), pass 1's blocks to the keeping process (slots), and the keeper's result::

    .venv/bin/python bench/bench_traffic.py

Notes are s18's sizes (1 560 of them, median 241 KiB: lognormal around it, at most
1.8 MiB). CPU is each process's own (``resource``), so a loaded machine swells the
wall times more than these.
"""

from __future__ import annotations

import multiprocessing
import pickle
import resource
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from soundscape.sound import helper, mastering
from soundscape.sound.loudness import LoudnessMeter

_FORK = multiprocessing.get_context("fork")


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def notes(count: int = 1560) -> None:
    rng = np.random.default_rng(0)
    sizes = np.clip(rng.lognormal(np.log(241 << 10), 0.7, count), 4096, 1800 << 10) // 4
    ring = helper._Ring(_FORK, helper.NoteHelper._RING_BYTES)
    ours, theirs = _FORK.Pipe(duplex=False)
    helper._widen(theirs)

    def serve() -> None:
        made = [np.ones(int(n), np.float32) for n in sizes[:50]]
        for index in range(count):
            helper._send(theirs, (index, (0, made[index % 50], None)), ring)
        theirs.close()

    got = 0

    def receive() -> None:
        nonlocal got
        incoming = helper._Incoming(ours)
        while True:
            try:
                got += helper._receive(incoming, ring)[1][1].nbytes
            except EOFError:
                return

    start, mine, theirs_cpu = time.perf_counter(), _cpu(resource.RUSAGE_SELF), \
        _cpu(resource.RUSAGE_CHILDREN)
    process = _FORK.Process(target=serve)
    process.start()
    theirs.close()
    thread = threading.Thread(target=receive)
    thread.start()
    thread.join()
    process.join()
    print(f"notes: {count} ({got / 2**20:.0f} MiB) in {time.perf_counter() - start:.2f} s; "
          f"CPU: receiving {_cpu(resource.RUSAGE_SELF) - mine:.2f} s, sending (and "
          f"forking) {_cpu(resource.RUSAGE_CHILDREN) - theirs_cpu:.2f} s")


def requests(count: int = 40_000) -> None:
    ours, theirs = _FORK.Pipe(duplex=False)

    def drain() -> None:
        theirs.close()
        for _ in helper._requested(ours):
            pass

    process = _FORK.Process(target=drain)
    before = _cpu(resource.RUSAGE_CHILDREN)
    process.start()
    ours.close()
    start = time.process_time()
    for index in range(count):
        helper._ask_for(theirs, [index])
    helper._ask_for(theirs, [helper._STOP])
    sent = time.process_time() - start
    process.join()
    print(f"requests: {1e6 * sent / count:.1f} µs CPU an index sending, "
          f"{1e6 * (_cpu(resource.RUSAGE_CHILDREN) - before) / count:.1f} µs reading")


class _Idle:
    """A keeper that keeps nothing: only the handing over is timed."""

    def __enter__(self) -> _Idle:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def keep(self, block: np.ndarray) -> None:
        pass

    def result(self) -> None:
        return None


def blocks(count: int = 3000) -> None:
    block = np.ones((48000, 2), np.float32)
    start, before = time.process_time(), _cpu(resource.RUSAGE_CHILDREN)
    with mastering._KeepingProcess(_Idle(), block.nbytes) as keeping:
        for _ in range(count):
            keeping.write(block)
    print(f"pass 1 blocks (1 s of stereo): {1e6 * (time.process_time() - start) / count:.0f}"
          f" µs CPU a block handing over, "
          f"{1e6 * (_cpu(resource.RUSAGE_CHILDREN) - before) / count:.0f} µs taking")


def result(count: int = 6000) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        keeper = mastering._Keeper(Path(scratch) / "raw.f32", lambda b: b,
                                   LoudnessMeter(48000, np.ones(2)))
        with keeper:
            for _ in range(count):
                keeper.keep(np.zeros((48000, 2), np.float32))
        made = keeper.result()
    start = time.perf_counter()
    data = pickle.dumps(made)
    middle = time.perf_counter()
    pickle.loads(data)
    print(f"pass 1's result ({count} blocks): {len(data) / 2**20:.1f} MiB, pickled in "
          f"{middle - start:.3f} s, unpickled in {time.perf_counter() - middle:.3f} s")


if __name__ == "__main__":
    notes()
    requests()
    blocks()
    result()
