"""Which bundled rite a text is, by its content: any edition, any glyphs, notes or none.

A text is compared with each bundled rite's own text (:mod:`soundscape.text.derive.rites`)
on four features, each a similarity in [0, 1]:

- ``title``: the rite's name (燕禮, 鄉射 …) stands in the title line (the file's header,
  its 卷題 lines, or the first characters of the 經文);
- ``incipit``: the opening characters of the 經文 (燕禮小臣戒與者 …);
- ``steps``: the sequence of the actors who act, step after step (公, 小臣, 賓 …);
- ``music``: the sequence of the pieces the music formulas name (鹿鳴, 四牡 …).

Only Han characters count, normalised (:func:`soundscape.text.hanzi.normalise`), so
punctuation, line breaks and variant glyphs do not; sequence similarities are
:class:`difflib.SequenceMatcher` ratios, which tolerate a few missing or extra items (a
page the print lacks, a variant the normaliser does not unify). The score is the weighted
mean of the features (``[recognise]`` in ``data/derive_rules.toml``); a rite is recognised
when its score reaches the threshold and leads the next rite by the margin.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from soundscape.errors import TextError
from soundscape.text import chapters, glossary
from soundscape.text.derive import rites
from soundscape.text.derive.formulas import find_units, rules
from soundscape.text.hanzi import is_han, normalise
from soundscape.text.source import Text, parse

__all__ = ["FEATURES", "Fingerprint", "Recognition", "chapter_of", "fingerprint", "lacking",
           "only_the_rite", "recognise", "unmatched", "without"]

FEATURES = ("title", "incipit", "steps", "music")


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a text is compared by: its title line, incipit, actors and pieces in order."""

    title_line: str
    incipit: str
    actors: tuple[str, ...]
    pieces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Recognition:
    """The best bundled rite for a text (``rite`` None when none is sure enough).

    ``scores`` holds every rite's score, best first; ``features`` the best rite's
    per-feature similarities.
    """

    rite: str | None
    score: float
    features: dict[str, float]
    scores: tuple[tuple[str, float], ...]
    threshold: float
    margin: float

    def describe(self) -> str:
        """One line: which rite and how sure, or why none."""
        best, score = self.scores[0]
        parts = ", ".join(f"{k} {v:.2f}" for k, v in self.features.items())
        runner = (f"; next {rites.rite(self.scores[1][0]).title} ({self.scores[1][0]}) "
                  f"{self.scores[1][1]:.2f}" if len(self.scores) > 1 else "")
        name = f"{rites.rite(best).title} ({best})"
        if self.rite is not None:
            return (f"recognised {name}: score {score:.2f} ≥ threshold {self.threshold:.2f} "
                    f"({parts}){runner}")
        why = (f"below the threshold {self.threshold:.2f}" if score < self.threshold
               else f"not {self.margin:.2f} ahead of the next")
        return f"not a bundled rite: best {name} scores {score:.2f}, {why} ({parts}){runner}"


def _config() -> dict:
    return rules()["recognise"]


def fingerprint(text: Text) -> Fingerprint:
    """The features of ``text`` (its normalised characters, notes and asides apart)."""
    config = _config()
    chars = text.chars
    title_lines = [*text.header, *(text.aside_text(a) for a in text.asides if a.kind == "卷題")]
    head = "".join(c for c in chars[:config["title_chars"]] if is_han(c))
    incipit = "".join(c for c in chars if is_han(c))[:config["incipit_chars"]]
    return Fingerprint(" ".join([*title_lines, head]), incipit, _actors(chars),
                       tuple(u.info["piece"] for u in find_units(chars, 0)
                             if u.role == "music"))


def _actors(chars: str) -> tuple[str, ...]:
    """The actor ids of the text in order, each where it is named as the one who acts."""
    from soundscape.text.derive import _actor_starts

    words = glossary.load()
    return tuple(words.known_id("actor", term) for _, _, term in _actor_starts(chars))


@functools.cache
def _bundled(rite_id: str) -> Fingerprint:
    return fingerprint(rites.load_rite_text(rite_id))


def _ratio(a, b) -> float:
    if not a and not b:
        return 0.0  # nothing to compare is no evidence
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def _features(found: Fingerprint, rite_id: str) -> dict[str, float]:
    ref = _bundled(rite_id)
    names = rites.rite(rite_id).table.get("names", [rites.rite(rite_id).title])
    title = float(any(normalise(n) in normalise(found.title_line) for n in names))
    return {"title": title, "incipit": _ratio(found.incipit, ref.incipit),
            "steps": _ratio(found.actors, ref.actors), "music": _ratio(found.pieces, ref.pieces)}


def recognise(text: Text) -> Recognition:
    """The bundled rite ``text`` is, with its score; ``rite`` None below the threshold."""
    config = _config()
    weights = config["weights"]
    found = fingerprint(text)
    features = {r: _features(found, r) for r in rites.rite_ids()}
    total = sum(weights[f] for f in FEATURES)
    scores = sorted(((r, sum(weights[f] * v[f] for f in FEATURES) / total)
                     for r, v in features.items()), key=lambda s: -s[1])
    best, score = scores[0]
    ahead = len(scores) < 2 or score - scores[1][1] >= config["margin"]
    sure = score >= config["threshold"] and ahead
    return Recognition(best if sure else None, score, features[best], tuple(scores),
                       config["threshold"], config["margin"])


def unmatched(text: Text, rite_id: str) -> list[tuple[int, int]]:
    """Spans of ``text.chars`` that the rite's own text does not hold: commentary, a
    translation or an edition's apparatus read as the rite, or a passage the edition has
    and the bundled text lacks.

    The two texts are aligned character by character. A line of at least ``[recognise]
    unmatched_line`` characters most of which the rite's text does not hold is a span whole
    (a translation's paragraph, even where it quotes a few of the rite's words); in the
    other lines, the runs of at least ``unmatched_run`` characters are. Variant glyphs, a
    missing page, the few characters editions differ by, and a character the alignment gave
    to a neighbouring line, are not reported.
    """
    least, line = _config()["unmatched_run"], _config()["unmatched_line"]
    held = [False] * len(text.chars)
    for _, start, size in _matching(text.chars, rite_id):
        held[start:start + size] = [True] * size
    spans: list[tuple[int, int]] = []
    for first, last in _lines_of(text):
        if last - first >= line and 2 * held[first:last].count(False) > last - first:
            spans.append((first, last))
            continue
        for is_held, group in itertools.groupby(range(first, last), held.__getitem__):
            run = list(group)
            if not is_held and len(run) >= least:
                spans.append((run[0], run[-1] + 1))
    return _joined(spans)


def lacking(text: Text, rite_id: str) -> list[tuple[str, int]]:
    """The runs of the rite's own text that ``text`` does not hold (a page the print lost,
    an omission, the rest of an excerpt), each at least ``[recognise] unmatched_run``
    characters: ``(the run's characters, where in text.chars it falls)``."""
    ref = rites.load_rite_text(rite_id).chars
    least = _config()["unmatched_run"]
    runs, covered, at = [], 0, 0
    for start, found, size in _matching(text.chars, rite_id):
        if start - covered >= least:
            runs.append((ref[covered:start], at))
        covered, at = max(covered, start + size), found + size
    return runs


@functools.lru_cache(maxsize=2)
def _matching(chars: str, rite_id: str) -> tuple[tuple[int, int, int], ...]:
    """The blocks in which ``chars`` and the rite's own text match (``difflib``), made
    once for :func:`unmatched` and :func:`lacking` both."""
    ref = rites.load_rite_text(rite_id).chars
    return tuple(SequenceMatcher(None, ref, chars, autojunk=False).get_matching_blocks())


def _lines_of(text: Text) -> list[tuple[int, int]]:
    """``(first, end)`` of the characters of each line of ``text`` that holds any."""
    breaks = [i for i, c in enumerate(text.original) if c == "\n"]
    lines = [bisect.bisect_left(breaks, at) for at in text.origin]
    return [(group[0], group[-1] + 1) for group in
            (list(g) for _, g in itertools.groupby(range(len(lines)), lines.__getitem__))]


def _joined(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans that touch made one (a translation's paragraphs in a row are one run)."""
    joined: list[tuple[int, int]] = []
    for start, end in spans:
        if joined and joined[-1][1] == start:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def without(text: Text, spans: list[tuple[int, int]]) -> Text:
    """``text`` with the characters ``spans`` of its ``chars`` cover blanked, with what
    stands between them on their line (their notes and marks): read as no one's words. The
    lines between keep what they hold (a 右 heading between two paragraphs of a
    translation), and line breaks stay, so every line number is the file's."""
    original = list(text.original)
    for start, end in spans:
        first = text.origin[start]
        for index in range(start, end):
            at = text.origin[index]
            if "\n" in text.original[first:at]:
                first = at  # a new line: what lay between is not the run's
            original[first:at + 1] = " " * (at + 1 - first)
            first = at + 1
    return dataclasses.replace(parse("".join(original), source=text.source),
                               encoding=text.encoding)


def only_the_rite(text: Text, rite_id: str) -> tuple[Text, list[tuple[int, int]]]:
    """``text`` without what :func:`unmatched` finds, and those spans.

    Raises
    ------
    TextError
        If that would leave none of the text: it is not the rite.
    """
    spans = unmatched(text, rite_id)
    if not spans:
        return text, spans
    if sum(end - start for start, end in spans) >= len(text.chars):
        raise TextError(f"{text.source}: none of its {len(text.chars)} characters is in "
                        f"{rites.rite(rite_id).title}'s own text: it is not that rite; "
                        "drop_unmatched (--drop-unmatched) would leave nothing")
    return without(text, spans), spans


def chapter_of(book: Text, chapter: str | None = None, rite: str | None = None
               ) -> tuple[Text, chapters.Chapter | None]:
    """The one chapter of ``book`` to derive (:mod:`soundscape.text.chapters`), with the
    chapter (None: the book itself): the one ``chapter`` names (its number or title
    words), else the one recognised as ``rite``, else the book itself where it holds one
    chapter or none.

    Raises
    ------
    TextError
        If the book holds several chapters and none or more than one is chosen so, or a
        chapter is asked of a book whose title lines number none; the message lists the
        chapters (line, title, the rite each is recognised as).
    """
    found = chapters.chapters(book)
    if chapter is None and len(found) <= 1:
        return book, None
    if not found:
        raise TextError(f"{book.source}: --chapter {chapter}: no title line numbers a chapter "
                        "here (鄉射禮第五, 儀禮卷第五 …); the file is one text: derive it without "
                        "--chapter")
    texts = {c: chapters.one(book, c) for c in found}
    rites_of = {c: recognise(texts[c]).rite for c in found}
    if chapter is not None:
        picked = [c for c in found if c.is_named(chapter)]
    elif rite is not None:
        picked = [c for c in found if rites_of[c] == rite]
    else:
        picked = []  # a book and no choice: refused, its chapters listed
    if len(picked) == 1:
        return texts[picked[0]], picked[0]
    numbers = Counter(c.value for c in found)

    def choice(c: chapters.Chapter) -> str:  # a number printed twice is chosen by line
        return f'"line {c.line}"' if numbers[c.value] > 1 else str(c.value)

    listed = "; ".join(f"line {c.line} {c.title} (--chapter {choice(c)}"
                       + (f", {rites_of[c]}" if rites_of[c] else "") + ")" for c in found)
    if chapter is not None:
        why = f"--chapter {chapter} names {'none' if not picked else 'more than one'} of them"
    elif rite is not None:
        why = f"{'none' if not picked else len(picked)} recognised as {rite}"
    else:
        why = "derive reads one"
    raise TextError(f"{book.source}: holds {len(found)} chapters: {listed}; {why}: choose "
                    "one with --chapter N (its number, words of its title, or \"line L\", "
                    "the line of its title), or --rite ID")
