"""Time ``derive`` against the size of the text, and measure the section rule.

Run: ``.venv/bin/python bench/bench_derive.py [--max 1000000] [--list]``.

1. **Time against size.** Three inputs, cut to 5k … 1M characters: (a) the bundled 大射
   經文 with its 右 headings removed, repeated (one long headingless text, the case
   that was cubic); (b) the four bundled 《四部叢刊》 chapters (鄉飲酒, 鄉射, 燕禮,
   大射: 鄭注 inline, page markers, line-end marks, the 記) repeated, so the largest size
   is about a whole Yili with its notes (~1 MB); (c) the bundled 大射 numbered paragraph
   by paragraph with a 注： line after each, repeated (every line an aside or a number).
   Each row prints the best CPU time (process time, so that other work on a shared machine
   does not count) of a few runs of parse + derive and the time per 10k characters: a
   linear derive keeps that column flat.
2. **Sections without headings.** The rule of ``soundscape.text.derive.sections``
   (``data/sections.toml``) on the bundled 大射 with its headings removed, against the 44
   boundaries its headings give: precision, recall and F1, exact (the boundary on the
   heading's character) and within 3 characters; for all 44, and separately for the first
   22 (戒百官 … 初射, the half the rule's patterns were checked on) and the last 22 (取矢 …
   無算爵, held out).
   The same rule on the 《四部叢刊》 大射 (``KR1d0026_007``, another edition, pages lost),
   against the headings carried over to it by aligning the two texts (``difflib``).
3. **The other chapters** (``--list``): the sections the rule finds in 鄉飲酒禮, 鄉射禮 and
   燕禮 (no headings in the Kanseki transcription), each with its first and last words.
4. **Speech** (``--speech``, or ``--only speech``): per bundled rite, the recall and the
   exactness of the derived speech cues against the hand-checked list
   ``tests/text/speech_gold.toml`` (words exactly, by the right speaker), and the entries
   not exactly right; and the same for the held-out 《禮記·投壺》 (``touhu``), derived as a
   user's own text (no rite's data), also with its quotation marks taken out (the words
   found by its punctuation alone).
5. **Recognising the rite** (``--recognise``, or ``--only recognise``): each bundled rite in
   a second edition (tests/text/test_derive_editions.py: notes, punctuation and headings
   stripped, glyphs swapped), the Kanseki 大射 and a passage of the 燕禮: the score of every
   rite (soundscape.text.derive.recognise), the one recognised and the per-feature
   similarities.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import time
from pathlib import Path

# the hand-checked speech list and the second editions live with the tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from soundscape import text
from soundscape.resources import data_dir
from soundscape.text.derive import derive
from soundscape.text.derive.sections import boundaries, ji_start

CHAPTERS = ("KR1d0026_004", "KR1d0026_005", "KR1d0026_006", "KR1d0026_007")
#: Texts of no bundled rite with speech in the hand-checked list: 《禮記·投壺》 (the Kanseki
#: Repository's punctuated print, its words in 「」: tests/text/editions/README.md).
HELD_OUT = {"touhu": Path(__file__).resolve().parent.parent / "tests" / "text" / "editions"
            / "KR1d0052_041.txt"}
SIZES = (5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_000_000)


def _repeat(s: str, size: int) -> str:
    return (s * (size // len(s) + 1))[:size]


def _best(raw: str, runs: int) -> tuple[float, int]:
    """Best CPU time of parse + derive (process time: the machine may be shared)."""
    best, chars = float("inf"), 0
    for _ in range(runs):
        start = time.process_time()
        loaded = text.parse(raw, source="<bench>")
        derive(loaded)
        best = min(best, time.process_time() - start)
        chars = len(loaded.chars)
    return best, chars


def timing(largest: int) -> None:
    headingless = text.load_bundled().chars
    folder = data_dir() / "texts" / "kanseki"
    edition = "".join((folder / f"{c}.txt").read_text(encoding="utf-8") for c in CHAPTERS)
    # the 大射 numbered paragraph by paragraph, each with its 注 on a line of its own: every
    # line an aside or a paragraph number (the filters of commentary.find_asides were
    # quadratic in them: 29.5 s for 1.8 MB before, 0.9 s after)
    lined = "".join(f"{n} {line}\n注：鄭注之文。\n" for n, line in enumerate(
        text.load_bundled().original.splitlines()) if line and not line.startswith("右"))
    for label, source in (("大射 經文 without headings", headingless),
                          ("四部叢刊 chapters 4-7 with 鄭注 and page marks", edition),
                          ("大射 numbered by paragraph, a 注： line after each", lined)):
        print(f"\n{label}")
        print(f"{'source chars':>12} {'經文 chars':>10} {'CPU s':>8} {'s per 10k':>10}")
        for size in (s for s in SIZES if s <= largest):
            seconds, chars = _best(_repeat(source, size), 3 if size <= 80_000 else 1)
            print(f"{size:>12,} {chars:>10,} {seconds:>8.3f} {seconds / size * 1e4:>10.4f}")


def _scores(found: list[int], truth: list[int], tolerance: int) -> tuple[float, float, float]:
    hits = [f for f in found if any(abs(f - t) <= tolerance for t in truth)]
    recalled = [t for t in truth if any(abs(f - t) <= tolerance for f in found)]
    precision = len(hits) / len(found) if found else 0.0
    recall = len(recalled) / len(truth)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def sections() -> None:
    bundled = text.load_bundled()
    truth = [h.end for h in bundled.headings][:-1]  # the last heading closes the text
    found = boundaries(bundled.chars)[1:]
    split = truth[len(truth) // 2 - 1]  # the last boundary of the first half
    halves = (("all", found, truth),
              ("first half", [f for f in found if f <= split], [t for t in truth if t <= split]),
              ("held-out half", [f for f in found if f > split], [t for t in truth if t > split]))
    print(f"\nsections of 大射 without headings: rule {len(found)} boundaries, "
          f"headings {len(truth)}")
    for tolerance in (0, 3):
        for name, f, t in halves:
            precision, recall, f1 = _scores(f, t, tolerance)
            print(f"  within {tolerance} characters, {name:<13} ({len(f):>2} found, "
                  f"{len(t):>2} true): precision {precision:.2f}, recall {recall:.2f}, "
                  f"F1 {f1:.2f}")
    print_edition(bundled, truth)


def print_edition(bundled: text.Text, truth: list[int]) -> None:
    """The rule on the 《四部叢刊》 大射, against the headings aligned onto it."""
    printed = text.load(data_dir() / "texts" / "kanseki" / f"{CHAPTERS[-1]}.txt").chars
    blocks = difflib.SequenceMatcher(None, bundled.chars, printed,
                                     autojunk=False).get_matching_blocks()
    carried = [b + t - a for t in truth for a, b, n in blocks if a <= t < a + n]
    found = boundaries(printed)[1:]
    precision, recall, f1 = _scores(found, carried, 0)
    print(f"  the 《四部叢刊》 大射 ({len(truth) - len(carried)} heading(s) on its lost pages), "
          f"exact ({len(found)} found, {len(carried)} true): precision {precision:.2f}, "
          f"recall {recall:.2f}, F1 {f1:.2f}")


def other_chapters() -> None:
    folder = data_dir() / "texts" / "kanseki"
    for chapter in CHAPTERS[:-1]:
        loaded = text.load(folder / f"{chapter}.txt")
        chars = loaded.chars
        body_end = ji_start(chars) or len(chars)
        opens = boundaries(chars, 0, body_end)
        print(f"\n{chapter}: {len(opens)} sections before the 記")
        for a, b in zip(opens, [*opens[1:], body_end], strict=True):
            print(f"  {a:>5} {b - a:>4}  {chars[a:min(b, a + 14)]} … {chars[max(a, b - 10):b]}")


def speech() -> None:
    """Recall and exactness of the speech cues per rite (tests/text/speech_gold.toml)."""
    from soundscape.text.derive import rites
    from tests.text.speech_gold import score

    print("\nspeech against the hand-checked list (tests/text/speech_gold.toml)")
    print(f"  {'rite':<12} {'listed':>6} {'recall':>7} {'exact':>7}")
    wrong = []
    for rite in (*rites.rite_ids(), *HELD_OUT):
        if rite in HELD_OUT:  # a text of no bundled rite, derived as a user's own
            loaded = text.load(HELD_OUT[rite])
            result = score(rite, loaded, derive(loaded, text_id=rite))
        else:
            loaded = rites.load_rite_text(rite)
            result = score(rite, loaded, derive(loaded, text_id=rite, rite=rite))
        print(f"  {rite:<12} {result.listed:>6} {result.recall:>7.2f} {result.exactness:>7.2f}")
        wrong += result.wrong
    # the same print with its quotation marks taken out: the words found by punctuation
    raw = HELD_OUT["touhu"].read_text(encoding="utf-8").translate(str.maketrans("", "", "「」『』"))
    loaded = text.parse(raw, source="touhu without 「」")
    result = score("touhu", loaded, derive(loaded, text_id="touhu"))
    print(f"  {'touhu no 「」':<11} {result.listed:>6} {result.recall:>7.2f} "
          f"{result.exactness:>7.2f}")
    wrong += [f"(no 「」) {line}" for line in result.wrong]
    for line in wrong:
        print(f"    not exact: {line}")


def recognition() -> None:
    """The recognition scores of each rite in a second edition, and of two other texts."""
    import tempfile

    from soundscape.text.derive import rites
    from soundscape.text.derive.recognise import recognise
    from tests.text.test_derive_editions import second_edition

    print("\nrecognising the rite (scores of dashe, xiangyinjiu, xiangshe, yan)")
    with tempfile.TemporaryDirectory() as folder:
        cases = []
        for rite in rites.rite_ids():
            path = Path(folder) / f"{rite}.txt"
            path.write_text(second_edition(rite), encoding="utf-8")
            cases.append((f"{rite} (second edition)", path))
        cases.append(("KR1d0026_007 (大射, 四部叢刊)",
                      data_dir() / "texts" / "kanseki" / "KR1d0026_007.txt"))
        passage = second_edition("yan").replace("\n", "")
        at = passage.index("工四人")
        path = Path(folder) / "passage.txt"
        path.write_text(passage[at - 30:at + 600], encoding="utf-8")
        cases.append(("燕禮 passage (630 characters)", path))
        for name, path in cases:
            found = recognise(text.load(path))
            scores = " ".join(f"{s:.2f}" for _, s in sorted(found.scores,
                                                               key=lambda s: rites.rite_ids()
                                                               .index(s[0])))
            print(f"  {name:<32} {scores}  → {found.rite or 'none'}")
            print(f"  {'':<32} {', '.join(f'{k} {v:.2f}' for k, v in found.features.items())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=1_000_000,
                        help="largest size in characters (default 1000000)")
    parser.add_argument("--list", action="store_true",
                        help="list the sections found in the other three chapters")
    parser.add_argument("--speech", action="store_true",
                        help="also score the speech cues against the hand-checked list")
    parser.add_argument("--recognise", action="store_true",
                        help="also show how each rite is recognised in a second edition")
    parser.add_argument("--only", choices=("speech", "recognise"),
                        help="run only this part")
    args = parser.parse_args()
    if args.only is None:
        sections()
        if args.list:
            other_chapters()
        timing(args.max)
    if args.speech or args.only == "speech":
        speech()
    if args.recognise or args.only == "recognise":
        recognition()


if __name__ == "__main__":
    main()
