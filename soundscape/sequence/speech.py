"""The spoken words of the rite: each speech cue said by its speaker, from where he stands.

A cue is one phrase (one event, its characters as the lyric, their phones in the
chosen reading), said when its step begins and the speaker has reached the step's
place. It is spoken, or called out (a raised voice: higher, louder, slower) when the
one spoken to stands further than ``[speech] call_beyond_m`` away, or when no one is
named and the words command or announce (the voice model raises the pitch of a call).
A phrase lasts what its syllables do by the prosody's rules (``text.prosody``: checked
syllables short, the last lengthened, a call slower).

One person says one phrase at a time: a phrase waits until the same speaker's last one
has ended and he has taken a breath (``one_at_a_time``); and the phrases of one step are
said in turn, in the text's order, each after the last has ended and a pause (禮記·投壺's
主人 and 賓 exchange five phrases in one step: request, refusal, request … consent).
Where the text offers words as alternatives for what an arrow did (大射正: 下曰留 上曰揚
左右曰方, ``data/speech.toml [outcome]``), the one that fits each simulated arrow of the
one spoken to is said, after it lands; an arrow in the 侯 needs no report (鄭注: 若不中,
使君當知而改其度).
A count the text leaves to the game (禮記·投壺: 「某賢於某若干純」, 奇則曰「奇」, 均則曰「左右鈞」,
``data/speech.toml [count]``) is said as the count simulated for its step (the seed's), in the
words the archery announces a tally with; its alternatives are said only as that count.
Numbers: ``data/sequence.toml [speech]``.

A phrase reaches the voice as its phones (``phrase_phones``). Words it cannot say (letters,
a character the reading cannot read) used to be found only by the render, naming the
voice's data file; ``check_quotes`` finds them when the rite is sequenced, by that same
reading, at the quote's line in the cue sheet.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from soundscape import validate
from soundscape.cuesheet import SpeechCue, key_line
from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.geometry import Vec3
from soundscape.music.tuning import Tuning
from soundscape.performance import Event, Marker, Shot, Source
from soundscape.resources import data_dir
from soundscape.sequence.archery import MISS_OUTCOMES, announcement
from soundscape.sequence.settings import SpeechSettings
from soundscape.sequence.timeline import TimedStep
from soundscape.site.courtyard import Site
from soundscape.text import gloss, glossary, prosody
from soundscape.text.hanzi import is_han, mentions
from soundscape.text.reading import ReadingError, checked, phrase_contours, read, syllable

__all__ = ["PHRASED", "check_quotes", "one_at_a_time", "phrase_phones", "phrase_seconds",
           "speech_events", "speech_markers", "step_speech_seconds", "unsayable"]

_RAISED_UNNAMED = ("command", "announce")
#: Articulations that are a person's speech (a sung note is not a phrase).
PHRASED = ("speak", "call")


@functools.cache
def _report() -> dict[str, Any]:
    """``data/speech.toml [outcome]``: words that report an arrow, and when; each word's
    outcome must be one of the archery's misses."""
    path = data_dir() / "speech.toml"
    report = dict(read_toml(path, CueSheetError).get("outcome", {}))
    for word, outcome in report.get("words", {}).items():
        validate.choice(outcome, MISS_OUTCOMES, key=f"outcome.words.{word}", where=str(path),
                        error=CueSheetError)
    validate.number(report.get("reaction_s", 0.0), key="outcome.reaction_s", where=str(path),
                    error=CueSheetError, low=0.0, high=10.0, unit="seconds")
    return report


@functools.cache
def _count() -> dict[str, Any]:
    """``data/speech.toml [count]``: the placeholder of a count the game gives, its
    alternatives, and the game (arrows a side, the chance an arrow enters)."""
    path = data_dir() / "speech.toml"
    count = dict(read_toml(path, CueSheetError).get("count", {}))
    if not count:
        return {}
    validate.number(count.get("arrows"), key="count.arrows", where=str(path),
                    error=CueSheetError, low=1, high=99, unit="arrows a side")
    validate.number(count.get("enters"), key="count.enters", where=str(path),
                    error=CueSheetError, low=0.0, high=1.0, unit="probability")
    return count


def _counted_steps(cues: Iterable[SpeechCue]) -> set[str]:
    """The steps whose words hold a count the game gives (the placeholder 若干)."""
    mark = _count().get("placeholder")
    return {c.step for c in cues if mark and mentions(c.quote, mark)}


def _is_alternative(cue: SpeechCue, counted: set[str]) -> bool:
    """Words said only as a count's (奇, 左右鈞 beside 「某賢於某若干純」)."""
    return cue.step in counted and cue.quote in _count().get("alternatives", ())


def simulated_count(step: str, seed: int) -> tuple[int, int]:
    """(right, left): the 算 each side's arrows earn in ``step``'s game, drawn from
    ``seed`` and the step (the same seed, the same count)."""
    count = _count()
    rng = np.random.default_rng([seed, zlib.crc32(step.encode("utf-8"))])
    arrows, enters = int(count["arrows"]), float(count["enters"])
    return int(rng.binomial(arrows, enters)), int(rng.binomial(arrows, enters))


def _outcomes() -> dict[str, str]:
    """Word → the arrow's outcome it reports (``archery.MISS_OUTCOMES``)."""
    return dict(_report().get("words", {}))


@functools.lru_cache(maxsize=4096)  # the check reads each quote first: read once
def phrase_phones(words: str, reading: str) -> str:
    """The phones the voice is given for ``words`` in ``reading``: one character's
    syllable, or a phrase's syllables separated by ``|``, each with its tone as said together
    (Chao digits: 3 3 → 2 3). Characters that are not Han are passed over; one the reading
    cannot read raises ``ReadingError``."""
    if len(words) == 1:
        return syllable(words, reading).lyric
    said = read(words, reading)
    return " | ".join(f"{s.lyric} {''.join(map(str, c))}"
                      for s, c in zip(said, phrase_contours(said), strict=True))


def unsayable(words: str, reading: str) -> str:
    """What of ``words`` the voice cannot say in ``reading`` ("" when it says them all as
    ``phrase_phones`` gives them): letters or figures, which the reading passes over (a
    phrase of none but them reached the voice as they are and stopped the render), no Han
    character at all, or characters the reading cannot read."""
    foreign = "".join(c if c.isalnum() and not is_han(c) else " " for c in words).split()
    if foreign:
        return f"{', '.join(map(repr, foreign))} " + (
            "is not a Han character" if len(foreign) == 1 else "are not Han characters")
    if not any(is_han(c) for c in words):
        return "it holds no Han character"
    try:
        phrase_phones(words, reading)
    except ReadingError as error:
        unread = [c for c in dict.fromkeys(words) if is_han(c) and not _reads(c, reading)]
        return f"it does not read {', '.join(map(repr, unread)) or 'them'} ({error})"
    return ""


def _reads(character: str, reading: str) -> bool:
    try:
        syllable(character, reading)
    except ReadingError:
        return False
    return True


def check_quotes(cues: Iterable[SpeechCue], reading: str, path: str | None) -> None:
    """Refuse the first speech cue whose ``quote`` the voice cannot say in ``reading``
    (``unsayable``), at the quote's line of the cue sheet at ``path``, before any sound is
    made of the rite."""
    for cue in cues:
        problem = unsayable(cue.quote, reading)
        if problem:
            line = key_line(path, "speech", cue.line, "quote") if path else cue.line
            raise CueSheetError(
                f"{path or 'the cue sheet'}:{line}: speech {cue.id!r} "
                f"quote={validate.shown(cue.quote)} cannot be said in the {reading} reading: "
                f"{problem}; accepted: Han characters the {reading} reading reads (spaces and "
                "punctuation are passed over)")


def phrase_seconds(words: str, reading: str, *, raised: bool) -> float:
    """How long ``words`` take said in ``reading`` (spoken, or called when ``raised``);
    characters the reading cannot read count as open syllables."""
    try:
        stops = [checked(s) for s in read(words, reading)]
    except ReadingError:
        stops = []
    stops = stops or [False] * max(1, sum(1 for c in words if not c.isspace()))
    return prosody.phrase_seconds(stops, "call" if raised else "speak")


def step_speech_seconds(cues: Iterable[SpeechCue], reading: str,
                        settings: SpeechSettings) -> dict[str, float]:
    """Step id → the least time its words need once the speaker is there: the pause, then
    each phrase said in turn (as a call, the slower way, since who stands where is known
    only later). Words said on an arrow's outcome are left to the arrows."""
    out: dict[str, float] = {}
    gap = prosody.gap_seconds()
    cues = list(cues)
    counted = _counted_steps(cues)
    for cue in cues:
        if cue.quote in _outcomes() or _is_alternative(cue, counted):
            continue
        before = out.get(cue.step, settings.pause_s - gap)
        out[cue.step] = before + gap + phrase_seconds(cue.quote, reading, raised=True)
    return out


@dataclass(frozen=True, slots=True)
class _Said:
    cue: SpeechCue
    time: float
    words: str


def speech_events(cues: Iterable[SpeechCue], times: Mapping[str, TimedStep],
                  track: Sequence[tuple[float, str, Vec3]], *, site: Site,
                  settings: SpeechSettings, tuning: Tuning, reading: str,
                  shots: Mapping[str, Sequence[Shot]] | None = None, seed: int = 0
                  ) -> tuple[dict[str, Source], list[Event]]:
    """The sources (one per speaker) and events (one per phrase) of ``cues``; a phrase is
    pitched on the 律 of ``tuning`` nearest the speaking voice (a call is raised above
    it by the voice model). ``shots`` (step id → the arrows of the round that step
    narrates) choose among words offered as alternatives; ``seed`` draws a count the
    text leaves to the game (:func:`simulated_count`)."""
    words = glossary.load()
    sources: dict[str, Source] = {}
    events = []
    mouth = site.people["standing_mouth"]
    outcomes = _outcomes()
    gap = prosody.gap_seconds()
    turn: dict[str, float] = {}  # step id → when its last phrase ends and a pause passed
    for said in _planned(cues, times, shots or {}, settings, seed):
        cue = said.cue
        here = _where(track, cue.speaker, said.time, site)
        there = _where(track, cue.to, said.time, site) if cue.to else None
        raised = (math.dist(here[:2], there[:2]) > settings.call_beyond_m if there
                  else cue.kind in _RAISED_UNNAMED)
        who = words.id_or_pinyin("actor", cue.speaker)
        source = f"speech.{who}"
        point = (here[0], here[1], here[2] + mouth)
        sources.setdefault(source, Source(source, "voice", cue.speaker, f"{who} (speaking)",
                                          "speech", point, (0.0, 1.0, 0.0), cue=cue.id))
        pitch, _ = tuning.nearest(settings.hz)  # the voice model raises a call
        length = phrase_seconds(said.words, reading, raised=raised)
        time = said.time
        if cue.quote not in outcomes:  # one step's words in turn: an answer after its question
            time = max(time, turn.get(cue.step, -math.inf))
            turn[cue.step] = time + length + gap
        events.append(Event(time, length,
                            source, pitch,
                            settings.call_velocity if raised else settings.velocity,
                            "call" if raised else "speak", cue.id, lyric=said.words,
                            position=point))
    return sources, one_at_a_time(events, sources)


def _planned(cues: Iterable[SpeechCue], times: Mapping[str, TimedStep],
             shots: Mapping[str, Sequence[Shot]], settings: SpeechSettings,
             seed: int = 0) -> list[_Said]:
    """When each phrase is wanted: at its step (after the walk and a pause), or, for words
    that report an arrow, once each arrow of the one spoken to has landed; a count the
    game gives in its words (the text's own alternative where it has one: 左右鈞)."""
    outcomes = _outcomes()
    reaction = float(_report().get("reaction_s", 0.0))
    cues = list(cues)
    counted = _counted_steps(cues)
    out = []
    reported: set[str] = set()
    for cue in cues:
        timed = times.get(cue.step)
        if timed is None or _is_alternative(cue, counted):
            continue
        at = timed.start + timed.walk + settings.pause_s
        if cue.step in counted and mentions(cue.quote, _count()["placeholder"]):
            words = announcement(*simulated_count(cue.step, seed))
            own = next((c for c in cues if c.step == cue.step and c.quote == words), cue)
            out.append(_Said(own, at, words))
            continue
        if cue.quote not in outcomes:
            out.append(_Said(cue, at, cue.quote))
            continue
        if cue.step in reported:
            continue
        reported.add(cue.step)
        offered = {outcomes[c.quote]: c for c in cues
                   if c.step == cue.step and c.quote in outcomes}
        for shot in shots.get(cue.step, ()):
            if shot.archer_name == cue.to and shot.outcome in offered:
                chosen = offered[shot.outcome]
                out.append(_Said(chosen, shot.arrival + reaction,
                                 chosen.quote))
    return sorted(out, key=lambda s: s.time)


def one_at_a_time(events: Iterable[Event], sources: Mapping[str, Source]) -> list[Event]:
    """``events`` with every phrase (speech or a call) of one person starting only after his
    previous phrase has ended and he has paused (``prosody.gap_seconds``); the person is
    the source's name (司射 speaks from his own place and in the rounds alike)."""
    gap = prosody.gap_seconds()
    free: dict[str, float] = {}
    out = []
    for event in sorted(events, key=lambda e: e.time):
        source = sources.get(event.source)
        if source is None or source.instrument != "voice" or \
                event.articulation not in PHRASED:
            out.append(event)
            continue
        start = max(event.time, free.get(source.name, -math.inf))
        if start > event.time:
            event = replace(event, time=start)
        free[source.name] = event.end + gap
        out.append(event)
    return sorted(out, key=lambda e: e.time)


def speech_markers(cues: Iterable[SpeechCue], events: Iterable[Event]) -> list[Marker]:
    """A marker where each phrase is said: ``speaker：words`` and an English line saying
    who speaks to whom (the words themselves are the text's; no translation is offered).
    A report said once per arrow has a marker each time."""
    english = gloss.load()
    by_id = {cue.id: cue for cue in cues}

    def who(term: str) -> str:
        name = english.actors.get(term, ("", False))[0]
        return f"{name} ({term})" if name else term

    markers = []
    for event in sorted(events, key=lambda e: e.time):
        cue = by_id.get(event.cue)
        if cue is None:
            continue
        how = "calls out" if event.articulation == "call" else "says"
        to = f" to {who(cue.to)}" if cue.to else ""
        words = event.lyric or cue.quote  # a count is said as the game gave it
        markers.append(Marker(event.time, "speech", f"{cue.speaker}：{words}",
                              f"{who(cue.speaker)} {how}{to}: 「{words}」", cue.id,
                              words))
    return markers


def _where(track: Sequence[tuple[float, str, Vec3]], actor: str, time: float,
           site: Site) -> Vec3:
    """Where ``actor`` stands at ``time``: his last place on the track, else the court."""
    last = None
    for when, who, point in track:
        if when > time:
            break
        if who == actor:
            last = point
    return last or site.place("zhongting")
