"""Score derived speech cues against the hand-checked list ``speech_gold.toml``.

Per rite: ``recall`` is the share of the listed phrases a cue covers at all (its span
overlaps the words); ``exact`` the share said by a cue with exactly the words (or a reading
the entry accepts) and the right speaker (alternatives: each one a cue of that speaker in
one step). Words the archery speaks (``archery = true``) count as right only when no cue
says them again. Used by tests/text/test_derive_speech.py and bench/bench_derive.py.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from soundscape.cuesheet import CueSheet
from soundscape.text import glossary
from soundscape.text.hanzi import normalise
from soundscape.text.source import Text

GOLD = Path(__file__).with_name("speech_gold.toml")


@dataclass(frozen=True)
class Score:
    rite: str
    listed: int
    recalled: int
    exact: int
    wrong: tuple[str, ...]  # one line per entry not exactly right

    @property
    def recall(self) -> float:
        return self.recalled / self.listed

    @property
    def exactness(self) -> float:
        return self.exact / self.listed


def gold(rite: str) -> list[dict]:
    entries = tomllib.loads(GOLD.read_text(encoding="utf-8"))["speech"]
    return [e for e in entries if e["rite"] == rite]


def _who(name: str) -> str:
    return glossary.load().id_of("actor", name) or name


def _span(text: Text, entry: dict) -> tuple[int, int]:
    passage = normalise(entry["passage"])
    at = text.chars.find(passage)
    if at < 0:
        raise ValueError(f"speech_gold.toml: passage {entry['passage']!r} not in {entry['rite']}")
    inner = passage.find(normalise(entry["words"]))
    start = at + inner
    return start, start + len(entry["words"])


def score(rite: str, text: Text, sheet: CueSheet, entries: list[dict] | None = None) -> Score:
    """``entries``: the rite's listed phrases to score (all by default)."""
    entries = gold(rite) if entries is None else entries
    recalled = exact = 0
    wrong = []
    for entry in entries:
        a, b = _span(text, entry)
        near = [c for c in sheet.speech if c.span[0] < b and a < c.span[1]]
        said = [(text.chars[c.span[0]:c.span[1]], _who(c.speaker)) for c in near]
        if entry.get("archery"):
            recalled += 1
            exact += not near
            if near:
                wrong.append(f"{rite}: {entry['words']} is the archery's, said again: {said}")
            continue
        recalled += bool(near)
        speaker = _who(entry["speaker"])
        if "alternatives" in entry:
            step = near[0].step if near else None
            got = {normalise(c.quote) for c in sheet.speech
                   if c.step == step and _who(c.speaker) == speaker}
            ok = bool(near) and set(entry["alternatives"]) <= got
        else:
            forms = {normalise(entry["words"]), *map(normalise, entry.get("accept", ()))}
            ok = any(words in forms and who == speaker for words, who in said)
        exact += ok
        if not ok:
            wrong.append(f"{rite}: {entry['speaker']}「{entry['words']}」 got {said}")
    return Score(rite, len(entries), recalled, exact, tuple(wrong))
