"""Where the people of the rite stand: the 工 moved by the words of the text and by the
music they play, and every voice standing where it is heard.

A voice sounds from a point (the 負侯's 商 answer at the 乏, a command said at the step's
place); that point is also where the person stands until the next, so the source's
``moves`` say it. A part of the rite (:meth:`Performance.cut`) then begins with each
person where the whole rite has him at that time, for every renderer (an ADM object, a
caption's direction) and not only for the sounds that carry their own point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace

from soundscape.performance import Event, Source

__all__ = ["STEP_M", "standing_where_heard"]

#: A voice heard further than this from where its source stands has walked there (metres;
#: well below the paces of data/durations.toml, well above rounding).
STEP_M = 0.01


def standing_where_heard(sources: Mapping[str, Source], events: Iterable[Event]
                         ) -> dict[str, Source]:
    """``sources`` with every voice (instrument ``voice``) moved, from each of its sounds
    made away from where it stands, to that sound's point; other sources as they are."""
    heard: dict[str, list[Event]] = {}
    for event in events:
        if event.position is not None and sources[event.source].instrument == "voice":
            heard.setdefault(event.source, []).append(event)
    return {key: _walked(source, sorted(heard[key], key=lambda e: e.time))
            if key in heard else source for key, source in sources.items()}


def _walked(source: Source, events: list[Event]) -> Source:
    """The source with a move to each sound's point it is not already standing at; moves of
    its own (the 工 changing places) keep their times and hold from then on."""
    own, moves, here, i = list(source.moves), [], source.position, 0
    for event in events:
        while i < len(own) and own[i][0] <= event.time:
            moves.append(own[i])
            here = own[i][1]
            i += 1
        if math.dist(here, event.position) > STEP_M:
            here = tuple(event.position)
            moves.append((event.time, here))
    moves += own[i:]
    return replace(source, moves=tuple(moves)) if len(moves) != len(own) else source
