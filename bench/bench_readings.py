"""Benchmark: how many sung and spoken syllables a change to the readings changes, and what
reading the songs costs.

``dump OUT.json`` writes every syllable's reading (IPA and tone, both readings): the
twelve surviving songs (風雅十二詩譜) as the planner reads them (before the context
readings each character alone, now each voice's line as one text; ``--alone`` forces the
old way), and every spoken phrase of the four rites' cue sheets and the archery's words.
``compare OLD.json NEW.json`` counts the syllables whose reading changed, and whose phones
changed (what a singer hears: the melody sets the pitch), character by character.

Run on two checkouts (the old first-reading code has no ``read`` in the line):

    PYTHONPATH=/work/main python bench/bench_readings.py dump --alone /tmp/old.json
    PYTHONPATH=$PWD python bench/bench_readings.py dump /tmp/new.json
    python bench/bench_readings.py compare /tmp/old.json /tmp/new.json
    PYTHONPATH=$PWD python bench/bench_readings.py time
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter

SONGS = ("luming", "simu", "huanghuangzhehua", "yuli", "nanyoujiayu", "nanshanyoutai",
         "guanju", "getan", "juaner", "quechao", "caifan", "caipin")
RITES = ("dashe", "xiangyinjiu", "xiangshe", "yan")
ARCHERY = ("毋射獲毋獵獲", "不貫不釋", "不鼓不釋", "無射獲無獵獲", "右賢於左", "左賢於右", "左右鈞")
READINGS = ("middle-chinese", "mandarin")


def _songs() -> list[tuple[str, str]]:
    from soundscape.music.repertoire import load_piece

    return [(s, "".join(n.lyric or "" for n in load_piece(s).notes)) for s in SONGS]


def dump(out: str, alone: bool) -> None:
    from soundscape import cuesheet
    from soundscape.resources import bundled_dir
    from soundscape.text.hanzi import is_han
    from soundscape.text.reading import read, syllable

    rows: dict[str, list] = {}
    for reading in READINGS:
        found = []
        for piece, lyric in _songs():
            said = [syllable(c, reading) for c in lyric] if alone else read(lyric, reading)
            found += [("sung", piece, c, s.ipa + s.tone) for c, s in zip(lyric, said, strict=True)]
        quotes = [cue.quote for rite in RITES
                  for cue in cuesheet.load(bundled_dir("cues") / f"{rite}.toml").speech]
        for quote in [*quotes, *ARCHERY]:
            han = [c for c in quote if is_han(c)]
            found += [("spoken", quote, c, s.ipa + s.tone)
                      for c, s in zip(han, read(quote, reading), strict=True)]
        rows[reading] = found
    with open(out, "w", encoding="utf-8") as f:
        json.dump(rows, f, ensure_ascii=False)


def compare(old_path: str, new_path: str) -> None:
    with open(old_path, encoding="utf-8") as f:
        old = json.load(f)
    with open(new_path, encoding="utf-8") as f:
        new = json.load(f)

    def phones(said: str) -> str:
        return re.sub(r"[平上去入0-9]$", "", said)

    for reading in READINGS:
        pairs = list(zip(old[reading], new[reading], strict=True))
        for kind in ("sung", "spoken"):
            mine = [(a, b) for a, b in pairs if a[0] == kind]
            changed = [(a, b) for a, b in mine if a[3] != b[3]]
            heard = [(a, b) for a, b in changed if phones(a[3]) != phones(b[3])]
            print(f"{reading} {kind}: {len(mine)} syllables, {len(changed)} changed reading, "
                  f"{len(heard)} changed phones")
            counts = Counter((a[2], f"{a[3]}→{b[3]}") for a, b in changed)
            print("   " + "; ".join(f"{c} {k} ×{n}" for (c, k), n in counts.items()))


def timed() -> None:
    from soundscape.text.reading import read

    lyrics = [lyric for _, lyric in _songs()]
    for reading in READINGS:
        read("鹿", reading)   # the tables and the packages loaded: only the reading is timed
        for run in ("cold", "warm"):
            start = time.perf_counter()
            for lyric in lyrics:
                read(lyric * 3, reading)     # a piece's three 終 in one voice's line
            print(f"{reading} {run}: {1000 * (time.perf_counter() - start):.0f} ms "
                  "(the twelve songs, three 終 each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("--alone", action="store_true", help="each sung character read alone")
    c = sub.add_parser("compare")
    c.add_argument("old")
    c.add_argument("new")
    sub.add_parser("time")
    args = parser.parse_args()
    if args.what == "dump":
        dump(args.out, args.alone)
    elif args.what == "compare":
        compare(args.old, args.new)
    else:
        timed()


if __name__ == "__main__":
    main()
