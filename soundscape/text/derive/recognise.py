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

import functools
from dataclasses import dataclass
from difflib import SequenceMatcher

from soundscape.errors import TextError
from soundscape.text import chapters, glossary
from soundscape.text.derive import rites
from soundscape.text.derive.formulas import find_units, rules
from soundscape.text.hanzi import is_han, normalise
from soundscape.text.source import Text

__all__ = ["FEATURES", "Fingerprint", "Recognition", "chapter_of", "fingerprint", "recognise",
           "unmatched"]

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
    """Spans of ``text.chars`` that the rite's own text does not hold, aligned character by
    character, each at least ``[recognise] unmatched_run`` characters long: commentary,
    a translation or an edition's apparatus read as the rite, or a passage the edition
    has and the bundled text lacks. Variant glyphs, a missing page, a few characters the
    editions differ by are not reported."""
    ref = rites.load_rite_text(rite_id).chars
    least = _config()["unmatched_run"]
    blocks = SequenceMatcher(None, ref, text.chars, autojunk=False).get_matching_blocks()
    spans, covered = [], 0
    for _, start, size in blocks:  # the last block is (len, len, 0): it closes the final gap
        if start - covered >= least:
            spans.append((covered, start))
        covered = max(covered, start + size)
    return spans


def chapter_of(book: Text, chapter: str | None = None, rite: str | None = None) -> Text:
    """The one chapter of ``book`` to derive (:mod:`soundscape.text.chapters`): the one
    ``chapter`` names (its number or title words), else the one recognised as ``rite``,
    else the book itself where it holds one chapter or none.

    Raises
    ------
    TextError
        If the book holds several chapters and none or more than one is chosen so, or a
        chapter is asked of a book whose title lines number none; the message lists the
        chapters (line, title, the rite each is recognised as).
    """
    found = chapters.chapters(book)
    if chapter is None and len(found) <= 1:
        return book
    if chapter is not None:
        picked = [c for c in found if c.is_named(chapter)]
    else:
        picked = [c for c in found if recognise(chapters.one(book, c)).rite == rite]
    if len(picked) == 1:
        return chapters.one(book, picked[0])
    if not found:
        raise TextError(f"{book.source}: --chapter {chapter}: no title line numbers a chapter "
                        "here (鄉射禮第五, 儀禮卷第五 …); the file is one text: derive it without "
                        "--chapter")
    listed = "; ".join(
        f"line {c.line} {c.title} (--chapter {c.value}"
        + (f", {r}" if (r := recognise(chapters.one(book, c)).rite) else "") + ")"
        for c in found)
    if chapter is not None:
        why = f"--chapter {chapter} names {'none' if not picked else 'more than one'} of them"
    elif rite is not None:
        why = f"{'none' if not picked else len(picked)} recognised as {rite}"
    else:
        why = "derive reads one"
    raise TextError(f"{book.source}: holds {len(found)} chapters: {listed}; {why}: choose "
                    "one with --chapter N (its number, or words of its title), or --rite ID")
