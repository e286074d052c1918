"""The spoken words of the rite: each speech cue said by its speaker, from where he stands.

A cue is one phrase (one event, its characters as the lyric, their phones in the
chosen reading), said when its step begins and the speaker has reached the step's
place. It is spoken, or called out (a raised voice: higher, louder, slower) when the
one spoken to stands further than ``[speech] call_beyond_m`` away, or when no one is
named and the words command or announce (the voice model raises the pitch of a call).
Numbers: ``data/sequence.toml [speech]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from soundscape.cuesheet import SpeechCue
from soundscape.geometry import Vec3
from soundscape.music.tuning import Tuning
from soundscape.performance import Event, Marker, Source
from soundscape.sequence.timeline import TimedStep
from soundscape.site.courtyard import Site
from soundscape.text import gloss, glossary

__all__ = ["speech_events", "speech_markers"]

_RAISED_UNNAMED = ("command", "announce")


def speech_events(cues: Iterable[SpeechCue], times: Mapping[str, TimedStep],
                  track: Sequence[tuple[float, str, Vec3]], *, site: Site,
                  settings: Mapping[str, Any], tuning: Tuning
                  ) -> tuple[dict[str, Source], list[Event]]:
    """The sources (one per speaker) and events (one per phrase) of ``cues``; a phrase is
    pitched on the 律 of ``tuning`` nearest the speaking voice (a call is raised above
    it by the voice model)."""
    words = glossary.load()
    sources: dict[str, Source] = {}
    events = []
    mouth = site.people["standing_mouth"]
    for cue in cues:
        timed = times.get(cue.step)
        if timed is None:
            continue
        start = timed.start + timed.walk + settings["pause_s"]
        here = _where(track, cue.speaker, start, site)
        there = _where(track, cue.to, start, site) if cue.to else None
        raised = (math.dist(here[:2], there[:2]) > settings["call_beyond_m"] if there
                  else cue.kind in _RAISED_UNNAMED)
        syllables = sum(1 for c in cue.quote if not c.isspace())
        length = syllables * settings["call_syllable_s" if raised else "syllable_s"]
        who = words.id_of("actor", cue.speaker) or "u" + "_".join(
            f"{ord(c):x}" for c in cue.speaker)
        source = f"speech.{who}"
        point = (here[0], here[1], here[2] + mouth)
        sources.setdefault(source, Source(source, "voice", cue.speaker, f"{who} (speaking)",
                                          "speech", point, (0.0, 1.0, 0.0), cue=cue.id))
        pitch, _ = tuning.nearest(settings["hz"])  # the voice model raises a call
        events.append(Event(start, length, source, pitch,
                            settings["call_velocity" if raised else "velocity"],
                            "call" if raised else "speak", cue.id, lyric=cue.quote,
                            position=point))
    return sources, events


def speech_markers(cues: Iterable[SpeechCue], events: Iterable[Event]) -> list[Marker]:
    """A marker where each phrase is said: ``speaker：words`` and an English line saying
    who speaks to whom (the words themselves are the text's; no translation is offered)."""
    english = gloss.load()
    said = {e.cue: e for e in events}

    def who(term: str) -> str:
        name = english.actors.get(term, ("", False))[0]
        return f"{name} ({term})" if name else term

    markers = []
    for cue in cues:
        event = said.get(cue.id)
        if event is None:
            continue
        how = "calls out" if event.articulation == "call" else "says"
        to = f" to {who(cue.to)}" if cue.to else ""
        markers.append(Marker(event.time, "speech", f"{cue.speaker}：{cue.quote}",
                              f"{who(cue.speaker)} {how}{to}: 「{cue.quote}」", cue.id,
                              cue.quote))
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
