"""Benchmark the ADM master against the hoa3 render of the same part (issue 30's budget).

The budget: an ADM BWF master (``--layout adm``) renders in no more than the time of the
third-order ambisonic render of the same part, under 1 GiB. Each run is the command as a
user types it, in its own process with the caches off (``--no-cache``,
``SOUNDSCAPE_CACHE=off``: neither reads a note the other made)::

    soundscape render --quiet --seed 0 --no-cache --from S --to S --layout adm|hoa3 -o F

alternated ``--runs`` times (ADM first), each timed by its wall clock, with the peak of the
summed PSS of the command and every process it forks (sampled every 0.3 s from ``/proc``:
Linux). Prints every run, the median of each layout, their ratio, and whether the ADM
runs wrote the same bytes (they must)::

    .venv/bin/python bench/bench_adm.py                    # s18, two runs each
    .venv/bin/python bench/bench_adm.py --from s09 --to s09 --runs 3
    .venv/bin/python bench/bench_adm.py --from s01 --to s45  # the whole rite: ~140 GB free

Measured: docs/render.md, "2026-12-04, fourth".
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def tree_pss_mib(pid: int) -> float:
    """Summed PSS (MiB) of ``pid`` and its descendants, now (0 for what has gone)."""
    total, todo = 0, [pid]
    while todo:
        here = todo.pop()
        try:
            for line in Path(f"/proc/{here}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
            for task in os.listdir(f"/proc/{here}/task"):
                todo += [int(c) for c in
                         Path(f"/proc/{here}/task/{task}/children").read_text().split()]
        except OSError:  # gone meanwhile
            continue
    return total / 1024


def run(layout: str, span: tuple[str, str], out: Path) -> dict:
    """One render: wall seconds, peak summed PSS, the output's SHA-256 (ADM)."""
    command = [sys.executable, "-m", "soundscape", "render", "--quiet", "--seed", "0",
               "--no-cache", "--from", span[0], "--to", span[1], "--layout", layout,
               "-o", str(out)]
    env = dict(os.environ, SOUNDSCAPE_CACHE="off")
    peak, done = 0.0, threading.Event()
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.3):
            peak = max(peak, tree_pss_mib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{err}")
    digest = hashlib.sha256(out.read_bytes()).hexdigest() if layout == "adm" else None
    for made in out.parent.glob(f"{out.name}*"):
        made.unlink()
    out.with_suffix(".mid").unlink(missing_ok=True)
    return {"layout": layout, "wall_s": wall, "peak_pss_mib": peak, "sha256": digest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="first", default="s18")
    parser.add_argument("--to", dest="last", default="s18")
    parser.add_argument("--runs", type=int, default=2, choices=range(1, 11))
    parser.add_argument("--folder", type=Path, default=None,
                        help="where the renders are written (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        runs = []
        for number in range(args.runs):
            for layout in ("adm", "hoa3"):
                result = run(layout, (args.first, args.last), Path(tmp) / f"{layout}.wav")
                runs.append(result)
                print(f"run {number + 1} {layout:5s} {result['wall_s']:7.1f} s  "
                      f"{result['peak_pss_mib']:6.0f} MiB", flush=True)
    median = {layout: statistics.median(r["wall_s"] for r in runs if r["layout"] == layout)
              for layout in ("adm", "hoa3")}
    peak = max(r["peak_pss_mib"] for r in runs if r["layout"] == "adm")
    same = len({r["sha256"] for r in runs if r["layout"] == "adm"}) == 1
    print(f"{args.first}–{args.last}: ADM {median['adm']:.1f} s, hoa3 {median['hoa3']:.1f} s "
          f"(medians): {median['adm'] / median['hoa3']:.2f}× (budget ≤ 1×); ADM peak "
          f"{peak:.0f} MiB (budget < 1024); ADM runs {'the same' if same else 'NOT the same'} "
          "bytes")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
