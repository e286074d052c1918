"""Benchmark the ADM master against the hoa3 render of the same part (issue 30's budget).

The budget: an ADM BWF master (``--layout adm``) renders in no more than the time of the
third-order ambisonic render of the same part, under 1 GiB. Each run is the command as a
user types it, in its own process with the caches off (``--no-cache``,
``SOUNDSCAPE_CACHE=off``: neither reads a note the other made)::

    soundscape render --quiet --seed 0 --no-cache --from S --to S --layout adm|hoa3 -o F

alternated ``--runs`` times (ADM first), each timed by its wall clock, with the peak of the
summed PSS of the command and every process it forks (sampled every 0.3 s from ``/proc``,
as ``bench_kit.py`` samples the kit: Linux). Prints every run, the median of each layout,
their ratio, and whether the ADM runs wrote the same bytes (they must)::

    .venv/bin/python bench/bench_adm.py                    # s18, two runs each
    .venv/bin/python bench/bench_adm.py --master atmos     # the Dolby Atmos master instead
    .venv/bin/python bench/bench_adm.py --from s09 --to s09 --runs 3
    .venv/bin/python bench/bench_adm.py --from s01 --to s45  # the whole rite: ~500 GiB free

Measured: docs/render.md, "2026-12-04, fourth".
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench_kit import run as run_command


def run(layout: str, span: tuple[str, str], out: Path) -> dict:
    """One render: wall seconds, peak summed PSS (``bench_kit.run``), the output's SHA-256
    (ADM)."""
    command = [sys.executable, "-m", "soundscape", "render", "--quiet", "--seed", "0",
               "--no-cache", "--from", span[0], "--to", span[1], "--layout", layout,
               "--target", "-23", "-o", str(out)]
    timed = run_command(command, dict(os.environ, SOUNDSCAPE_CACHE="off"))
    digest = hashlib.sha256(out.read_bytes()).hexdigest() if layout != "hoa3" else None
    for made in out.parent.glob(f"{out.name}*"):
        made.unlink()
    out.with_suffix(".mid").unlink(missing_ok=True)
    os.sync()  # the disk trims the deleted gigabytes as the file system commits: not in
    # the next run's time (one s18 render's pass 2 took 20.6 s, its usual 5, in that trim)
    return {"layout": layout, "wall_s": timed["wall_s"],
            "peak_pss_mib": timed["peak_pss_mib"], "sha256": digest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="first", default="s18")
    parser.add_argument("--to", dest="last", default="s18")
    parser.add_argument("--runs", type=int, default=2, choices=range(1, 11))
    parser.add_argument("--master", choices=("adm", "atmos"), default="adm",
                        help="the master's layout: adm (EBU, HOA bed) or atmos (Dolby's "
                             "profile, 7.0.2 bed)")
    parser.add_argument("--folder", type=Path, default=None,
                        help="where the renders are written (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        runs = []
        for number in range(args.runs):
            for layout in (args.master, "hoa3"):
                result = run(layout, (args.first, args.last), Path(tmp) / f"{layout}.wav")
                runs.append(result)
                print(f"run {number + 1} {layout:5s} {result['wall_s']:7.1f} s  "
                      f"{result['peak_pss_mib']:6.0f} MiB", flush=True)
    median = {layout: statistics.median(r["wall_s"] for r in runs if r["layout"] == layout)
              for layout in (args.master, "hoa3")}
    peak = max(r["peak_pss_mib"] for r in runs if r["layout"] == args.master)
    same = len({r["sha256"] for r in runs if r["layout"] == args.master}) == 1
    master = median[args.master]
    print(f"{args.first}–{args.last}: {args.master} {master:.1f} s, hoa3 "
          f"{median['hoa3']:.1f} s (medians): {master / median['hoa3']:.2f}× (budget ≤ 1×); peak "
          f"{peak:.0f} MiB (budget < 1024); ADM runs {'the same' if same else 'NOT the same'} "
          "bytes")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
