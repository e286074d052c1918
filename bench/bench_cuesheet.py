"""Time loading a cue sheet against its length: loading is linear.

Run: ``.venv/bin/python bench/bench_cuesheet.py [--max 35000] [--runs 2]``.

The bundled 大射 sheet (558 steps) with its ``[[step]]`` entries copied under new ids
until the sheet has 2k … 35k steps (35,083 is the sheet ``derive`` writes for a whole
annotated Yili of 1.4 MB). Each row prints the best CPU time (process time, so other work
on a shared machine does not count) of ``cuesheet.loads`` and the time per 1,000 steps: a
linear load keeps that column flat. (Issue 29 measured 41 s for 16,000 steps and 235 s
for the 35,083-step sheet: each key's line was found by scanning every header of the
sheet, for every key of every entry.)
"""

from __future__ import annotations

import argparse
import re
import time

from soundscape import cuesheet

SIZES = (2_000, 4_000, 8_000, 16_000, 35_083)


def sheet_of(steps: int) -> str:
    """The bundled sheet with its steps copied (new ids) until it has ``steps`` steps."""
    text = cuesheet.bundled_path().read_text(encoding="utf-8")
    entries = re.findall(r"\[\[step\]\]\n(?:(?!\n\[\[).)*", text, re.S)
    extra, copy = [], 0
    while len(entries) + len(extra) < steps:
        for entry in entries:
            extra.append(re.sub(r'id = "([^"]+)"', lambda m, c=copy: f'id = "{m[1]}.c{c}"',
                                entry, count=1))
        copy += 1
    return text + "\n" + "\n\n".join(extra[:steps - len(entries)]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=SIZES[-1])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    print(f"{'steps':>7} {'load s (cpu)':>13} {'s per 1k steps':>15}")
    for size in (s for s in SIZES if s <= args.max):
        raw = sheet_of(size)
        best = float("inf")
        for _ in range(args.runs):
            start = time.process_time()
            sheet = cuesheet.loads(raw, source="bench.toml")
            best = min(best, time.process_time() - start)
        assert len(sheet.steps) == size
        print(f"{size:>7} {best:>13.2f} {best / size * 1000:>15.3f}")


if __name__ == "__main__":
    main()
