"""Benchmark an edit: a render after changing one step, against a render from nothing.

Copies the cue sheet and makes one step take another action (by default step ``s18.08``
立, 3 s, becomes 揖, 2.5 s: one cue's duration), then, each render in its own process
(``soundscape render … --jobs 2 --quiet``) with its own note cache folder
(``$SOUNDSCAPE_CACHE_DIR``):

1. **prime**: the original sheet, into an empty cache (also the cost of writing the cache:
   compare with ``--no-cache``, run 4);
2. **warm**: the edited sheet, with the cache run 1 filled;
3. **cold**: the edited sheet, into another empty cache;
4. **uncached**: the edited sheet with ``--no-cache`` (what a render cost before the cache).

``--quick`` runs 1 and 2 only (a whole rite: two renders, not four).

Prints each run's wall and CPU time (the render and its helper) and the notes read and
made, the ratio warm/cold, and whether the warm and cold WAVs are the same bytes (they
must be). ``--profile FILE`` writes a cProfile of the warm run's main process::

    .venv/bin/python bench/bench_edit.py                       # s18
    .venv/bin/python bench/bench_edit.py --from s01 --to s30   # the whole rite
    .venv/bin/python bench/bench_edit.py --profile /tmp/warm.prof

Measured: docs/render.md, "The cache".
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def edited_sheet(sheet: Path, step: str, action: str, out: Path) -> Path:
    """A copy of ``sheet`` whose step ``step`` has action ``action``."""
    text = sheet.read_text(encoding="utf-8")
    block = re.search(rf'\[\[step\]\]\nid = "{re.escape(step)}"\n(?:(?!\[\[).*\n)*', text)
    if block is None:
        sys.exit(f"{sheet}: no step {step!r}")
    old = block[0]
    new = re.sub(r'^action = ".*"$', f'action = "{action}"', old, count=1, flags=re.M)
    if new == old:
        sys.exit(f"{sheet}: step {step!r} already has action {action!r}")
    out.write_text(text.replace(old, new, 1), encoding="utf-8")
    return out


def run(name: str, sheet: Path, out: Path, cache: Path | None, span: list[str],
        profile: Path | None = None) -> dict:
    """One render in its own process: wall and CPU seconds, the cache's line."""
    env = dict(os.environ, SOUNDSCAPE_CACHE_DIR=str(cache or out.parent / "unused"))
    command = [sys.executable, *(["-m", "cProfile", "-o", str(profile)] if profile else []),
               "-m", "soundscape", "render", "--cues", str(sheet), *span, "--jobs", "2",
               "-o", str(out)]
    if cache is None:
        command.append("--no-cache")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{name}: render failed:\n{done.stderr}")
    line = next((x for x in done.stderr.splitlines() if x.startswith("note cache")), "")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{name:9s} wall {wall:7.1f} s  cpu {cpu:7.1f} s  {line}", flush=True)
    return {"wall": wall, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="first", default="s18")
    parser.add_argument("--to", dest="last", default="s18")
    parser.add_argument("--step", default="s18.08", help="the step edited")
    parser.add_argument("--action", default="揖", help="its new action")
    parser.add_argument("--profile", type=Path, default=None,
                        help="cProfile of the warm run's main process")
    parser.add_argument("--skip-uncached", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="prime and warm only: the ratio warm/prime (a whole rite in two "
                             "renders; no byte check)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the warm cache in this folder (reused if it exists)")
    args = parser.parse_args()
    span = ["--from", args.first, "--to", args.last]
    with tempfile.TemporaryDirectory(prefix="bench-edit-") as folder:
        tmp = Path(folder)
        sheet = ROOT / "cues" / "dashe.toml"
        edited = edited_sheet(sheet, args.step, args.action, tmp / "edited.toml")
        warm_cache, cold_cache = args.keep or tmp / "warm", tmp / "cold"
        prime = run("prime", sheet, tmp / "prime.wav", warm_cache, span)
        warm = run("warm", edited, tmp / "warm.wav", warm_cache, span, args.profile)
        if args.quick:
            print(f"warm after editing {args.step} to {args.action} / prime: wall "
                  f"{warm['wall'] / prime['wall']:.3f}, cpu {warm['cpu'] / prime['cpu']:.3f}")
            return
        cold = run("cold", edited, tmp / "cold.wav", cold_cache, span)
        if not args.skip_uncached:
            run("uncached", edited, tmp / "uncached.wav", None, span)
            assert filecmp.cmp(tmp / "cold.wav", tmp / "uncached.wav", shallow=False)
        same = filecmp.cmp(tmp / "warm.wav", tmp / "cold.wav", shallow=False)
        print(f"warm/cold after editing {args.step} to {args.action}: wall "
              f"{warm['wall'] / cold['wall']:.3f}, cpu {warm['cpu'] / cold['cpu']:.3f}; "
              f"warm and cold WAVs {'the same bytes' if same else 'DIFFER'}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
