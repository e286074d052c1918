"""Speech cues: the words the text gives people to say, found by ``data/speech.toml``.

The 經文 reports speech without marks: 「司射…告于公曰為政請射」. A step's words
follow 曰 and end where the narration resumes (a narrative verb) or before the
subject of the next 曰; 請X is a request, 許諾 the reply 諾. The speaker is the
step's actor; the addressee is the one named after 告/命/請 (告於公曰 → 公).
Words the archery speaks itself, with its own timing and the real tally, are left
to it. Every cue quotes its words and gives their offsets.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from soundscape.cuesheet import SpeechCue, Step
from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text import glossary
from soundscape.text.source import Text

__all__ = ["speech_cues"]


@functools.cache
def _rules() -> dict[str, Any]:
    return read_toml(data_dir() / "speech.toml", CueSheetError)


def speech_cues(text: Text, steps: Iterable[Step]) -> list[SpeechCue]:
    """The speech cues of ``steps`` (in text order), ids ``speech_001`` …"""
    found: list[tuple[Step, int, int, str, str]] = []
    for step in steps:
        start, end = step.span
        chars = text.chars[start:end]
        found += [(step, start + a, start + b, kind, to) for a, b, kind, to in _said(chars)]
        found += [(step, start + a, start + b, kind, to) for a, b, kind, to in
                  _asked(chars, step)]
    rules = _rules()
    cues = []
    for step, a, b, kind, to in sorted(found, key=lambda f: f[1]):
        words = text.chars[a:b]
        if words in rules["skip"]["words"] or any(w in text.chars[step.span[0]:step.span[1]]
                                                   for w in rules["skip"]["containing"]):
            continue
        speaker = _speaker(text.chars[step.span[0]:a]) or step.actor
        if not speaker:
            continue  # words nobody is named to say (若命曰…): not placed
        cues.append(SpeechCue(f"speech_{len(cues) + 1:03d}", speaker, kind, step.id,
                              text.quote(a, b), (a, b), to))
    return cues


def _said(chars: str) -> list[tuple[int, int, str, str]]:
    """Words after 曰 in one step's characters: (start, end, kind, addressee)."""
    rules = _rules()
    marks = [i for i, c in enumerate(chars) if c in rules["said"]]
    out = []
    for n, mark in enumerate(marks):
        start = mark + 1
        stop = marks[n + 1] if n + 1 < len(marks) else len(chars)
        if n + 1 < len(marks):  # leave the next 曰's subject to it
            stop -= next((len(s) for s in rules["subjects"]
                          if chars[start:stop].endswith(s) and stop - len(s) > start), 0)
        stop = _cut(chars, start, stop, rules["ends"], rules["min_chars"])
        if stop > start:
            before = chars[:mark]
            out.append((start, stop, _kind(before), _addressee(before)))
    return out


def _asked(chars: str, step: Step) -> list[tuple[int, int, str, str]]:
    """請X (a request, when the step says no 曰) and 許諾 (the reply 諾)."""
    rules = _rules()
    out = []
    request = rules["request"]
    at = chars.find(request["word"])
    if at >= 0 and "曰" not in chars:
        stop = _cut(chars, at + 1, min(len(chars), at + 1 + request["max_chars"]),
                    request["ends"], 1)
        if stop > at + 1:
            out.append((at, stop, "request", _addressee(chars[:at])))
    reply = rules["reply"]
    if step.actor not in reply["skip_actors"]:
        for word in reply["words"]:
            at = chars.find(word)
            if at >= 0:
                say = at + word.index(reply["say"])
                out.append((say, say + len(reply["say"]), "reply", ""))
    return out


def _cut(chars: str, start: int, stop: int, ends: list[str], least: int) -> int:
    """Where the words from ``start`` end: before the first of ``ends`` at least
    ``least`` characters in, or at ``stop``."""
    for i in range(start + least, stop):
        if any(chars.startswith(end, i) for end in ends):
            return i
    return stop


def _kind(before: str) -> str:
    """How words are said, from the last verb of the kinds table before them."""
    kinds = _rules()["kinds"]
    found = [(before.rfind(verb), kind) for verb, kind in kinds.items() if verb in before]
    return max(found)[1] if found else "say"


# An actor named right after these is spoken to, a place (立於公後) or a companion
# (司射與司馬交於階前), not the speaker.
_NOT_SPEAKING = ("命", "告", "於", "于", "謂", "之", "與")


def _speaker(before: str) -> str:
    """The one who speaks: the last actor named before the one spoken to (告於X曰,
    命X曰) or before 曰 itself; "" when the step names none."""
    words = glossary.load()
    lead = _lead(before)
    head = before[:lead[0]] if lead else before
    found = [(i + len(t), len(t), t) for t in words.term_index("actor") for i in _all(head, t)
             if not head[:i].endswith(_NOT_SPEAKING)]
    if not found:
        return ""
    return words.name("actor", words.id_of("actor", max(found)[2]))


def _all(text: str, term: str) -> list[int]:
    out, at = [], text.find(term)
    while at >= 0:
        out.append(at)
        at = text.find(term, at + 1)
    return out


_LEADS = ("告於", "告于", "請於", "請于", "命", "謂")


def _lead(before: str) -> tuple[int, str] | None:
    """The last verb that names the one spoken to, with that one's actor term."""
    words = glossary.load()
    best = None
    for lead in _LEADS:
        at = before.rfind(lead)
        rest = before[at + len(lead):] if at >= 0 else ""
        term = max((t for t in words.term_index("actor") if rest.startswith(t)), key=len,
                   default="")
        if term and (best is None or at > best[0]):
            best = (at, term)
    return best


def _addressee(before: str) -> str:
    """The one spoken to: the actor named right after the last 告於/命/請於/謂."""
    lead = _lead(before)
    if lead is None:
        return ""
    words = glossary.load()
    return words.name("actor", words.id_of("actor", lead[1]))
