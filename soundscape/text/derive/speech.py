"""Speech cues: the words the text gives people to say, found by ``data/speech.toml``.

The 經文 reports speech without marks: 「司射…告于公曰為政請射」. Each 曰 opens words
that end where the narration resumes: a narrative word, someone else named acting
(「取矢不索弟子自西方應」), or the next 曰 and its subject (「以我安卿大夫皆對曰」). The
speaker of each 曰 is the one named just before it (「卿大夫皆對曰」, 「君曰」), else the
subject of its clause, not one spoken to (告於公, 命上射), else the previous speaker of
the step (下曰留上曰揚: the same 大射正), else the step's actor. One of a pair (大夫與大夫,
士與大夫為耦) or presented to (獻公曰) is no subject; a step cut at such a name is spoken by
the exchange's leader (大夫與大夫命上射曰: the 司射). Of several named back to back before
皆對曰, the first answers (賓諸公卿大夫皆對曰). A request the narration reports (「擯者請賓」)
is the words 請X; the one asked (請射於公) is its addressee; one made again 如初 is his who
made it first. 許諾 is the answer 諾.

Where the edition prints quotation marks (「」), they bound the words: the words after a
曰 are the quotation that opens right after it, whole (禮記·投壺: 主人請曰 is followed by
某有枉矢哨壺請以樂賓 in its marks, 賓 included, and 曰 by 辟 alone), a request the
narration reports ends at the edition's next punctuation mark, and 請X曰「…」 is the
verb that brings the words, not a request of its own. Where the text names no one before
曰, the words are the last speaker's in the step, unless his words answered the one who
leads the exchange (the last to ask, order or announce): then the leader speaks again
(投壺: after the 勝者's 敬養, 慶禮曰 三馬既備請慶多馬 is the 司射's, as 孔疏 says). One
named by what he does (酌者曰, 當飲者…曰) says his own words.

Words offered as alternatives (留/揚/方) are a cue each in one step; the sequencer
chooses among them by the outcome (``[outcome]``). Words the archery speaks itself, with
its own timing and the real tally, are left to it. Every cue quotes its words and gives
their offsets.

An edition that punctuates but prints no quotation marks bounds the words after 曰： by its
punctuation: they end at the first sentence's end where the narration resumes, unless the
next sentence opens with a word only a speaker uses (臣受賜矣。臣請贊執爵者), and at a mark
whose clause holds the next 曰.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from soundscape.cuesheet import SpeechCue, Step
from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text import glossary
from soundscape.text.source import Text

__all__ = ["answer_starts", "printed_marks", "speech_cues"]


@functools.cache
def _rules() -> dict[str, Any]:
    return read_toml(data_dir() / "speech.toml", CueSheetError)


@dataclass(frozen=True, slots=True)
class _Marks:
    """:class:`Printed` in one step's characters."""

    quotes: tuple[tuple[int, int], ...]
    breaks: frozenset[int]
    stops: frozenset[int] = frozenset()

    def quote_at(self, at: int) -> tuple[int, int] | None:
        return next((q for q in self.quotes if q[0] == at), None)


_LEADS = ("request", "command", "announce")


@dataclass(frozen=True, slots=True)
class _Words:
    start: int  # offsets in the step's characters
    end: int
    kind: str
    speaker: str
    to: str


@dataclass(frozen=True, slots=True)
class Printed:
    """What an edition prints between the characters: ``quotes``, the spans of ``chars``
    its quotation marks enclose (outermost pairs), ``breaks``, the offsets of ``chars``
    that a punctuation mark stands before, and ``stops``, those a sentence's end stands
    before (。). All empty for an unpunctuated 經文."""

    quotes: tuple[tuple[int, int], ...] = ()  # sorted
    breaks: tuple[int, ...] = ()  # sorted
    stops: tuple[int, ...] = ()  # sorted

    def within(self, start: int, end: int, reach: int) -> _Marks:
        """The quotations opening in ``[start, end)`` and the breaks in ``(start, reach]``,
        as offsets from ``start`` (found by bisection: a long punctuated text stays linear)."""
        first = bisect.bisect_left(self.quotes, (start, -1))
        last = bisect.bisect_left(self.quotes, (end, -1))
        quoted = tuple((a - start, b - start) for a, b in self.quotes[first:last])
        low = bisect.bisect_right(self.breaks, start)
        reach = max([reach, *(b + start for _, b in quoted)])
        high = bisect.bisect_right(self.breaks, reach)
        stops = self.stops[bisect.bisect_right(self.stops, start):
                           bisect.bisect_right(self.stops, reach)]
        return _Marks(quoted, frozenset(b - start for b in self.breaks[low:high]),
                      frozenset(b - start for b in stops))

    def with_words(self, spans: Iterable[tuple[int, int]]) -> Printed:
        """These marks with ``spans`` (words found said: an unpunctuated text prints no
        quotation marks) as quotations too, kept as outermost pairs."""
        outer: list[tuple[int, int]] = []
        for a, b in sorted({*self.quotes, *spans}):
            if outer and a < outer[-1][1]:
                outer[-1] = (outer[-1][0], max(outer[-1][1], b))
            else:
                outer.append((a, b))
        return Printed(tuple(outer), self.breaks, self.stops)

    def unsaid(self, chars: str, start: int) -> str:
        """``chars`` (at offset ``start`` of the text) with the quoted words blanked: an
        action named in words said is no one's action (司射誓之曰公射大侯 does not shoot)."""
        out = list(chars)
        first = max(bisect.bisect_left(self.quotes, (start, -1)) - 1, 0)
        for a, b in self.quotes[first:]:
            if a >= start + len(chars):
                break
            for at in range(max(a, start), min(b, start + len(chars))):
                out[at - start] = "　"
        return "".join(out)

    def inside(self, at: int) -> bool:
        """Whether offset ``at`` stands inside a quotation (after its first character)."""
        found = bisect.bisect_left(self.quotes, (at, -1)) - 1
        return found >= 0 and self.quotes[found][0] < at < self.quotes[found][1]


def printed_marks(text: Text) -> Printed:
    """The quotation marks and punctuation ``text``'s edition prints in its passage."""
    marks = _rules()["printed"]
    pairs = {a: b for a, b in marks["quotes"]}
    closers = set(pairs.values())
    stops = set(marks["breaks"])
    ends = set(marks["sentence_ends"])
    first = text.origin[0] if text.origin else len(text.original)
    hidden = iter(text.hidden)
    skip = next(hidden, None)
    quotes, breaks, sentences, stack, colons = [], set(), set(), [], []
    at = 0  # the index in chars of the next character after the position
    for position in range(first, len(text.original)):
        while skip is not None and skip[1] <= position:
            skip = next(hidden, None)
        if skip is not None and skip[0] <= position:
            continue  # notes, asides and print marks are not the passage's
        while at < len(text.origin) and text.origin[at] < position:
            at += 1
        char = text.original[position]
        if char in pairs:
            stack.append((char, at))
            breaks.add(at)
        elif char in closers and stack and pairs[stack[-1][0]] == char:
            _, opened = stack.pop()
            if not stack and at > opened:
                quotes.append((opened, at))
            breaks.add(at)
        elif char in stops:
            breaks.add(at)
            if char in ends:
                sentences.add(at)
            if char in marks["opens"] and not stack:
                colons.append(at)
    breaks_in, stops_in = tuple(sorted(breaks)), tuple(sorted(sentences))
    quoted = {a for a, _ in quotes}
    for at in colons:  # 曰： with no quotation mark: the words its punctuation bounds
        if at and text.chars[at - 1] in _rules()["said"] and at not in quoted:
            quotes.append((at, _unquoted_end(text.chars, at, breaks_in, stops_in)))
    return Printed(tuple(sorted(quotes)), breaks_in, stops_in)


def _unquoted_end(chars: str, start: int, breaks: tuple[int, ...],
                  stops: tuple[int, ...]) -> int:
    """Where words after 曰： end in an edition that prints no quotation mark for them: at
    the first sentence's end where the narration resumes (「曰：左右卒投，請數。二筭為純」),
    unless the next sentence speaks as the speaker does (「曰：臣受賜矣。臣請贊執爵者」); at
    a mark whose clause holds the next 曰 (「奇則曰奇，均則曰左右鈞」)."""
    rules = _rules()
    goes_on = tuple(rules["printed"]["continues"])
    limit = min(len(chars), start + rules["printed"]["longest"])
    found = bisect.bisect_right(breaks, start)
    for i in range(found, len(breaks)):
        b = breaks[i]
        if b >= limit:
            break
        nxt = breaks[i + 1] if i + 1 < len(breaks) else len(chars)
        if any(c in chars[b:nxt] for c in rules["said"]):
            return b
        j = bisect.bisect_left(stops, b)
        if j < len(stops) and stops[j] == b and not chars.startswith(goes_on, b):
            return b
    return limit


def speech_cues(text: Text, steps: Iterable[Step],
                printed: Printed | None = None) -> list[SpeechCue]:
    """The speech cues of ``steps`` (in text order), ids ``speech_001`` …; ``printed``:
    the edition's quotation marks and punctuation (:func:`printed_marks`, found if None)."""
    rules = _rules()
    printed = printed_marks(text) if printed is None else printed
    cues: list[SpeechCue] = []
    lead = ""  # who leads the exchange: the last to ask, order or announce
    first: dict[str, str] = {}  # who first asked each request
    narrated = ""  # the step before's text: how words that open a step are said
    for step in steps:
        start, end = step.span
        own = text.chars[start:end]
        if any(w in own for w in rules["skip"]["containing"]) and any(
                who in own for who in rules["skip"]["by"]):
            continue  # the archery speaks the tally it simulates
        # words may run on past the step (the steps are cut at every actor who acts, and
        # words name actors: 「大夫與大夫士御於大夫」); only those begun in it are its own
        marks = printed.within(start, end, end + rules["reach"])
        chars = text.chars[start:max([end + rules["reach"], *(b + start for _, b in marks.quotes)])]
        found, lead = _said(chars, step.actor, end - start, marks, lead,
                            _names_before(text.chars, start), narrated)
        narrated = own
        asked, lead = _asked(chars, step.actor, found, end - start, marks, lead, first)
        found += asked
        for words in sorted(found, key=lambda w: w.start):
            said = chars[words.start:words.end]
            if said in rules["skip"]["words"] or not words.speaker:
                continue  # the archery's own words; words nobody is named to say
            a, b = start + words.start, start + words.end
            cues.append(SpeechCue(f"speech_{len(cues) + 1:03d}", words.speaker, words.kind,
                                  step.id, text.quote(a, b), (a, b), words.to))
    return cues


# ------------------------------------------------------------------ names

@functools.cache
def _names() -> dict[str, str]:
    """Every name a speaker goes by → the name a cue gives him (the glossary's actors,
    then ``[speakers]``)."""
    words = glossary.load()
    names = {t: words.name("actor", words.known_id("actor", t)) for t in words.term_index("actor")}
    names.update(_rules()["speakers"])
    return names


@functools.cache
def _name_pattern() -> re.Pattern:
    return re.compile("|".join(sorted(map(re.escape, _names()), key=len, reverse=True)))


def _names_before(chars: str, at: int) -> str:
    """The names that end right at ``at``, back to back (賓 before 諸公卿大夫皆對曰)."""
    longest = max(map(len, _names()))
    start = at
    while True:
        window = max(0, start - longest)
        hit = next((m for m in _named(chars[window:start]) if window + m[1] == start), None)
        if hit is None:
            return chars[start:at]
        start = window + hit[0]


def _named(chars: str) -> list[tuple[int, int, str]]:
    """(start, end, term) of each name in ``chars``, longest first, left to right."""
    return [(m.start(), m.end(), m.group(0)) for m in _name_pattern().finditer(chars)]


@functools.cache
def _next_said() -> re.Pattern:
    """The next 曰 with whoever says it or is told (命下射曰, 卿大夫皆對曰, 上曰)."""
    names = "|".join(sorted(map(re.escape, [*_names(), *_rules()["subjects"]]), key=len,
                            reverse=True))
    return re.compile(rf"(?:(?:{names})(?:及|與)?)*(?:(?:告於|告于|命|謂)(?:{names}))?"
                      rf"[皆又亦興]*[對應]?曰")


def answer_starts(chars: str) -> list[int]:
    """Where someone the steps do not name as an actor answers (「弟子自西方應曰」, 「相者
    對曰」): derive opens a step there, so the answer is said after the words it answers."""
    return [m.start() for m in _answer_pattern().finditer(chars)]


@functools.cache
def _answer_pattern() -> re.Pattern:
    actors = set(glossary.load().term_index("actor"))
    others = sorted((n for n in _rules()["speakers"] if n not in actors), key=len, reverse=True)
    return re.compile(rf"(?:{'|'.join(map(re.escape, others))})(?:自[^曰]{{1,3}})?[皆興]*[對應]曰")


# ------------------------------------------------------------------ 曰

_OBJECT = ("命", "令", "請", "告於", "告于", "於", "于", "謂", "之", "與", "及", "作", "比")
# Before a name that is not the subject (the one presented to: 獻公曰; 之 is left out, for
# 四方之賓 is the 賓).
_TOLD = (*(o for o in _OBJECT if o != "之"), "獻")


def _said(chars: str, actor: str, own: int, marks: _Marks, lead: str,
          prior: str = "", narrated: str = "") -> tuple[list[_Words], str]:
    """The words after each 曰 in the first ``own`` characters (the step's), with who
    says them to whom; and who leads the exchange after them. ``prior``: the names just
    before the step; ``narrated``: the step before's text, whose verb says how words that
    open the step are said (…升命取矢如初 | 曰取矢不索: a command). Where the step's actor
    is named only as one told or paired, the leader of the exchange speaks (大夫與大夫命上射
    曰: the 司射, who leads the 比耦)."""
    rules = _rules()
    out: list[_Words] = []
    clause = 0  # where the narration before the next 曰 begins
    for mark in (i for i, c in enumerate(chars[:own]) if c in rules["said"]):
        if mark < clause:
            continue
        before = chars[clause:mark]
        named = _speaker(before, "" if clause else prior) or _agent(before)
        speaker = named or _unnamed(out, lead) or (
            lead if lead and _not_subject(before, actor) else actor)
        to = _addressee(before) or (out[-1].to if out and not named else "")
        same = not named and out and out[-1].speaker == speaker
        opens = not clause and not before  # the step begins with 曰
        kind = (_kind(before, "") or (_kind(narrated, "") if opens else "")
                or (out[-1].kind if same else "say"))  # 下曰留上曰揚: as 留
        quote = marks.quote_at(mark + 1)
        stop = quote[1] if quote else _end(chars, mark + 1, marks)
        if stop > mark + 1:
            out.append(_Words(mark + 1, stop, kind, speaker, "" if to == speaker else to))
            lead = speaker if _leads(kind, chars[mark + 1:stop]) else lead
        clause = stop
    return out, lead


def _unnamed(out: list[_Words], lead: str) -> str:
    """Who says words the text names no one for: the last speaker of the step, unless his
    words answered the leader of the exchange, who then speaks again."""
    if not out:
        return ""
    last = out[-1].speaker
    return last if not lead or last == lead else lead


def _leads(kind: str, words: str) -> bool:
    """Whether words ask, order or announce (by the verb that brings them, or a 請 or 命
    in them: 「為政請射」), so that their speaker leads the exchange."""
    return kind in _LEADS or any(w in words for w in _rules()["lead_words"])


def _agent(before: str) -> str:
    """One named by what he does (酌者, 當飲者), first in the narration before 曰, when
    no one of the names is: the words' speaker."""
    found = re.match(_rules()["agent"], before)
    return found.group(0) if found else ""


def _end(chars: str, start: int, marks: _Marks | None = None) -> int:
    """Where words beginning at ``start`` end; ``marks``: the edition's punctuation,
    where it prints it (:func:`_printed_end`)."""
    rules = _rules()
    ends = [(e, rules["min_chars"]) for e in rules["ends"]] + [
        (e, 2) for e in rules["ends_late"]]
    stop = len(chars)
    nxt = _next_said().search(chars, start)
    if nxt is not None:
        stop = nxt.start()
        if marks is not None:  # 「請以樂賓。賓曰」: the mark parts the words from the subject
            stop = max([stop, *(b for b in marks.breaks if nxt.start() < b < nxt.end())])
    if marks is not None:
        stop = _printed_end(chars, start, stop, marks)
    for at, _, term in _named(chars[start:stop]):
        after = chars[start + at + len(term):start + at + len(term) + 1]
        told = chars[:start + at].endswith(_OBJECT)  # 御於大夫遂: 大夫 does not act
        if at and after and after in rules["acting"] and not told:
            stop = start + at
            break
    held = start  # words up to here are a request's object, whole
    for i in range(start + 1, stop):
        if chars[i - 1] == rules["request"]["word"]:
            held = max(held, _asked_for(chars, i, stop))
            continue  # 請坐, 請降: the verb of a request is not narration
        if i < held:
            continue
        if any(chars.startswith(e, i) and i - start >= least for e, least in ends):
            return i
        if chars[i - 1] in rules["ends_after"]:
            return i
    return stop


def _printed_end(chars: str, start: int, stop: int, marks: _Marks) -> int:
    """Where words said without quotation marks end by the edition's punctuation, before
    ``stop``: at a sentence's end, where the narration resumes (「請降。司射比耦」, 「左右卒投，
    請數。二筭為純」, 「請以樂賓。賓曰」), unless the next sentence speaks as the speaker does
    (「臣受賜矣。臣請贊執爵者」); at any mark whose clause holds the next 曰 (「奇則曰奇，均則
    曰」, 「曰賜灌；勝者跪曰」)."""
    goes_on = tuple(_rules()["printed"]["continues"])
    ends = [s for s in marks.stops if start < s <= stop and not chars.startswith(goes_on, s)]
    said = _rules()["said"]
    for b in sorted(b for b in marks.breaks if start < b < stop):
        nxt = min((chars.find(c, b) for c in said if c in chars[b:]), default=-1)
        if nxt >= 0 and not any(b < c < nxt for c in marks.breaks):
            ends.append(b)
            break
    return min([stop, *ends])


def _asked_for(chars: str, at: int, stop: int) -> int:
    """Where the object of a 請 at ``at`` ends when it is one named by what he does (請贊
    執爵者, 請致者: up to its 者, within the request's length), else ``at``."""
    request = _rules()["request"]
    found = chars.find(request["agent_end"], at, min(stop, at + request["max_chars"]))
    return found + 1 if found >= 0 else at


def _speaker(before: str, prior: str = "") -> str:
    """Who says the words after ``before`` (the narration since the last words): the one
    named right before 曰 (卿大夫皆對曰; of several named together before 皆, the first:
    賓諸公卿大夫皆對曰, with ``prior``, the names just before the step), else the last one
    named neither as spoken to nor as one of a pair."""
    names = _names()
    found = _named(before)
    if not found:
        return ""
    start, end, term = found[-1]
    if re.fullmatch(r"[皆又亦興]*[對應]?", before[end:]) and not _told(before, start, term):
        if "皆" in before[end:]:
            return names[_first_of_list(prior + before[:end])]
        return names[term]
    subjects = [t for s, e, t in found if _subject(before, found, s, e, t)]
    return names[subjects[-1]] if subjects else ""


def _told(before: str, start: int, term: str) -> bool:
    """Whether the one named at ``start`` is spoken to, presented to or commanded there
    (告於公, 獻公, 命上射), not a subject; 之 before a name makes it no object (四方之賓)."""
    return before[:start].endswith(_TOLD) and not (
        before[:start].endswith("命") and term in _rules()["never_told"])


def _subject(before: str, found: list[tuple[int, int, str]], start: int, end: int,
             term: str) -> bool:
    """Whether the one named at ``start`` may be the subject of what follows: not told,
    not a modifier (大夫之耦), not one of a pair (士與大夫為耦, 大夫與大夫: the next one named
    follows 與; the pairs are what the 司射 makes in 比耦, not who speaks)."""
    if _told(before, start, term) or before.startswith("之", end):
        return False
    later = [s for s, _, _ in found if s >= end]
    return not (later and before[:later[0]].endswith(tuple(_rules()["paired"])))


def _first_of_list(before: str) -> str:
    """The first of the names that end ``before`` back to back (or joined by 及)."""
    found = _named(before)
    at, first = len(before), found[-1][2]
    for start, end, term in reversed(found):
        if end != at and before[end:at] not in _rules()["joined"]:
            break
        at, first = start, term
    return first


def _not_subject(before: str, actor: str) -> bool:
    """Whether the step's actor is named in ``before`` only as one told or paired (the
    step was cut at a name that is not who acts: 大夫與大夫命上射曰)."""
    found = _named(before)
    at = [(s, e, t) for s, e, t in found if _names()[t] == actor]
    return bool(at) and not any(_subject(before, found, *f) for f in at)


def _addressee(before: str) -> str:
    """The one spoken to: named right after the last 告於/命/請於/謂/獻 of ``before``."""
    best = None
    for start, _, term in _named(before):
        if before[:start].endswith(("告於", "告于", "命", "請於", "請于", "謂", "獻")):
            best = term
    return _names()[best] if best else ""


def _kind(before: str, default: str = "say") -> str:
    """How words are said, from the last verb of the kinds table before them."""
    kinds = _rules()["kinds"]
    found = [(before.rfind(verb), kind) for verb, kind in kinds.items() if verb in before]
    return max(found)[1] if found else default


# ------------------------------------------------------------------ 請 and 許諾

def _asked(chars: str, actor: str, said: list[_Words], own: int, marks: _Marks,
           lead: str, first: dict[str, str]) -> tuple[list[_Words], str]:
    """請X the narration reports (outside any words said) and 許諾 (the answer 諾), in
    the first ``own`` characters; and who leads the exchange after them. ``first``: who
    first asked each request so far (updated): one asked again 如初 is his again."""
    rules = _rules()
    inside = [(w.start, w.end) for w in said]
    out: list[_Words] = []
    request = rules["request"]
    for at in (i for i, c in enumerate(chars[:own]) if c == request["word"]):
        if any(a <= at < b for a, b in inside):
            continue
        stop, to = _request_end(chars, at, marks)
        asked = chars[at:stop]
        if stop <= at + 1 or any(c in asked for c in rules["said"]) or \
                request["repeat"] in asked:
            continue  # 請賓曰「…」: the verb of the words; 請主人亦如之: the same again
        earlier = [w for w in [*said, *out] if w.end <= at]
        if earlier:  # words before it in the step: the narration since them names him
            last = max(earlier, key=lambda w: w.end)
            before = chars[last.end:at]
            speaker = _speaker(before) or _agent(before) or _unnamed([last], lead) or actor
        else:
            before = chars[:at]
            speaker = _speaker(before) or actor
        if any(a in before for a in request["again"]) and asked in first:
            speaker = first[asked]  # 如初請致者: as the first time, by the one who asked
        first.setdefault(asked, speaker)
        out.append(_Words(at, stop, "request", speaker, to or _addressee(before)))
        lead = speaker
    reply = rules["reply"]
    if actor not in reply["skip_actors"]:
        for word in reply["words"]:
            at = chars.find(word, 0, own)
            if at >= 0 and not any(b == at for _, b in inside):  # 對曰…許諾: one answer
                say = at + word.index(reply["say"])
                out.append(_Words(say, say + len(reply["say"]), "reply", actor, ""))
    return out, lead


def _request_end(chars: str, at: int, marks: _Marks) -> tuple[int, str]:
    """Where a request 請X ends, and the one asked (請射於公公許 → 請射, 公); at the
    edition's next punctuation mark or quotation, where it prints them."""
    request = _rules()["request"]
    acting = _rules()["acting"]
    limit = min(len(chars), at + 1 + request["max_chars"])
    names = _names()
    for i in range(at + 2, limit + 1):
        rest = chars[i:]
        if i in marks.breaks:
            return i, ""
        if i == len(chars) or any(rest.startswith(e) for e in request["ends"]):
            return i, ""
        if rest[:1] in request["to_marks"]:
            hit = _name_pattern().match(rest, 1)
            if hit and (hit.end() == len(rest) or rest[hit.end()] in request["after_to"]
                        or _acts(rest, hit.end())):
                return i, names[hit.group(0)]
        hit = _name_pattern().match(rest)
        if hit and hit.end() < len(rest) and rest[hit.end()] in acting:
            return i, ""
        if rest[:1] in request["numerals"] and _name_pattern().match(rest, 1):
            return i, ""  # 請媵爵者，二大夫媵爵
    return limit, ""


def _acts(rest: str, at: int) -> bool:
    """Whether someone named at ``at`` of ``rest`` acts there (公許, 賓禮辭)."""
    hit = _name_pattern().match(rest, at)
    return hit is not None and rest[hit.end():hit.end() + 1] in _rules()["request"]["after_to"]
