"""Time sequencing the whole bundled rite: cue sheet → Performance.

Run: ``.venv/bin/python bench/bench_sequence.py``. Reports the best of three runs, the
events per second, the peak Python memory (tracemalloc) and, as a peer in the same run,
the time to write the same Performance as JSON (what ``soundscape sequence`` also does).
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

from soundscape import sequence


def _best_of(runs: int, action) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    seconds, performance = _best_of(3, sequence.perform_from_file)
    tracemalloc.start()
    sequence.perform_from_file()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    with tempfile.TemporaryDirectory() as folder:
        json_seconds, _ = _best_of(3, lambda: performance.save_json(Path(folder) / "p.json"))
    events = len(performance.events)
    print(f"whole rite: {performance.duration / 60:.1f} min, {events} events, "
          f"{len(performance.markers)} markers")
    print(f"sequence (best of 3)      {seconds:7.2f} s   {events / seconds:9.0f} events/s")
    print(f"peak Python memory        {peak / 2**20:7.1f} MiB")
    print(f"peer: save_json (best of 3) {json_seconds:5.2f} s   "
          f"ratio sequence/json = {seconds / json_seconds:.2f}")


if __name__ == "__main__":
    main()
