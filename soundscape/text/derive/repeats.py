"""A repeated procedure the text abbreviates with 如初 ("as at first").

The 大射's third round restates its 取矢視算 and 飲不勝者 in a few lines (司射命設豐實觶如初
…, 不勝者執弛弓升飲如初): the procedure is the one the second round sets out step by step,
done again. A section whose name repeats an earlier section's, and whose steps say 如初,
takes that earlier section's steps as what its 如初 steps perform again (``Step.as_in``),
so the rite spends the time the procedure takes and makes its sounds, each traced to the
step that states it.

Which earlier steps each 如初 step stands for: every step of the later section is placed
against the earlier section, in order, at the first step sharing at least half as many
character pairs with it as the one sharing most (its anchor); the later steps cut the
earlier ones there, and a 如初 step takes the run from its anchor to the next step's (the
first, from the start). A step that restates its procedure (no 如初) takes nothing: the
text gave it its own words.

A section that repeats no earlier name (a text without headings names its sections by their
opening words) may still say a procedure again: where its 如初 steps say the words that open
one of the procedures of ``derive_rules.toml`` ``[[procedure]]`` (設豐 for the 飲不勝者), the
earlier steps from the first saying them through the next saying its closing words (徹豐)
stand for the earlier section.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from soundscape.cuesheet import MOST_REPEATED, Section, Step
from soundscape.text.derive.formulas import rules
from soundscape.text.hanzi import normalise

__all__ = ["MARK", "with_repeats"]

#: The words that say a step is done as before.
MARK = "如初"


def with_repeats(sections: Sequence[Section], steps: Sequence[Step]) -> list[Step]:
    """``steps`` with ``as_in`` set on the 如初 steps of each repeated section."""
    by_section: dict[str, list[Step]] = {}
    for step in steps:
        by_section.setdefault(step.section, []).append(step)
    first_of: dict[str, str] = {}
    repeats: dict[str, tuple[str, ...]] = {}
    done: list[Step] = []  # the steps of the sections before, in order
    for section in sections:
        earlier = first_of.setdefault(section.name, section.id)
        later = by_section.get(section.id, [])
        if any(MARK in s.quote for s in later):
            procedure = (by_section.get(earlier, []) if earlier != section.id
                         else _bracketed(later, [s for s in done if s.id not in repeats]))
            if procedure:
                repeats.update(_repeated(later, procedure))
        done.extend(later)
    return [dataclasses.replace(s, as_in=repeats[s.id]) if repeats.get(s.id) else s
            for s in steps]


def _repeated(later: list[Step], earlier: list[Step]) -> dict[str, tuple[str, ...]]:
    """Each 如初 step of ``later`` → the steps of ``earlier`` it performs again: the later
    steps cut the earlier ones at their anchors, each taking the run from its own."""
    bounds, start = [], 0
    for step in later:
        anchor = _anchor(step.quote, earlier, start)
        bounds.append(start if anchor < 0 else anchor)  # none: where the last one ended
        start = bounds[-1] + (anchor >= 0)
    bounds[0] = 0  # the first takes what comes before its anchor too
    bounds.append(len(earlier))
    return {step.id: tuple(s.id for s in earlier[bounds[k]:bounds[k + 1]])
            for k, step in enumerate(later) if MARK in step.quote}


def _bracketed(later: list[Step], earlier: list[Step]) -> list[Step]:
    """The earlier steps of the procedure whose opening words ``later``'s 如初 steps say:
    from the first earlier step saying them through the next saying its closing words;
    none where no procedure is said, opened or closed (within ``MOST_REPEATED`` steps)."""
    said = " ".join(normalise(s.quote) for s in later if MARK in s.quote)
    quotes = [normalise(s.quote) for s in earlier]
    for procedure in rules().get("procedure", []):
        if procedure["opens"] not in said:
            continue
        first = next((k for k, q in enumerate(quotes) if procedure["opens"] in q), None)
        if first is None:
            continue
        last = next((k for k in range(first, min(first + MOST_REPEATED, len(quotes)))
                     if procedure["closes"] in quotes[k]), None)
        if last is not None:
            return earlier[first:last + 1]
    return []


def _anchor(quote: str, earlier: list[Step], start: int) -> int:
    """The index, from ``start`` on, of the first earlier step sharing at least half as
    many character pairs with ``quote`` (its 如初 left out) as the one sharing most (如初
    points back to where a procedure was first done, not where it is named last); -1
    where none shares any."""
    own = _pairs(quote.replace(MARK, ""))
    shared = [len(own & _pairs(s.quote)) for s in earlier[start:]]
    best = max(shared, default=0)
    if best == 0:
        return -1
    return start + next(i for i, n in enumerate(shared) if 2 * n >= best)


def _pairs(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}
