"""A singer's line: legato notes that never overlap, and a breath at every phrase end.

The ensemble (``ensemble.Ensemble.perform``) gives each singer's take of each note an onset
and a held length of its own; a throat sounds one pitch at a time, so here each singer's
notes are joined as a singer joins them:

- inside a phrase the voice goes on to the next note when it starts (legato: a note is held
  until the next one's onset, never past it); the glide between them is the voice model's
  (``soundscape.sound.synth.sung_line``);
- the line is planned in phrases: the singer inhales before a phrase when there is a rest
  before it, or when his breath would not last to its end (the time since his last breath
  would pass ``max_group_s``); else he sings on into it. The breath takes its time from the
  rest before the phrase; where the rest is shorter than the breath (a song's lines follow
  each other without one), the phrase's last note gives up the time, as singers shorten a
  note to breathe. The breath is an event of its own (articulation
  ``inhale``, no pitch), traced to the music cue like the notes.

The breath's length is drawn per breath (seeded by the cue, the singer and the phrase), so
every 終 and every singer breathes anew. Figures in ``data/ensemble.toml`` ``[breath]``.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from soundscape.performance import Event

__all__ = ["INHALE", "join_lines", "one_throat"]

#: The articulation of a breath taken between phrases.
INHALE = "inhale"


def join_lines(notes: Sequence[tuple[Event, int]], breath: Mapping[str, float], *,
               seed: int) -> list[Event]:
    """Every singer's sung events joined into lines, with the breaths between phrases.

    Parameters
    ----------
    notes : sequence of (Event, phrase index)
        The sung events of one piece (any singers), each with the index of the phrase it
        belongs to (``TimedNote.phrase``).
    breath : mapping
        ``low_s`` and ``high_s`` (a breath's length is drawn between them), ``velocity``,
        ``min_note_s`` (a note keeps at least this much when it gives time to a breath) and
        ``max_group_s`` (the longest he sings on one breath, when no rest lets him breathe).
    seed : int
        The rite's seed.

    Returns
    -------
    list of Event
        The notes with their new lengths, then the breaths.
    """
    by_singer: dict[str, list[tuple[Event, int]]] = {}
    for event, phrase in notes:
        by_singer.setdefault(event.source, []).append((event, phrase))
    out: list[Event] = []
    for singer, line in by_singer.items():
        line.sort(key=lambda item: item[0].time)
        out += _one_line(singer, line, breath, seed)
    return out


def _one_line(singer: str, line: list[tuple[Event, int]], breath: Mapping[str, float],
              seed: int) -> list[Event]:
    notes = [event for event, _ in line]
    ends: dict[int, float] = {}  # each phrase's end: its last note's
    for event, phrase in line:
        ends[phrase] = max(ends.get(phrase, 0.0), event.end)
    breaths: list[Event] = []
    first = notes[0]
    rng = np.random.default_rng([seed, 0xB7, zlib.crc32(f"{first.cue}/{singer}".encode())])
    group = first.time  # when the singer last breathed in
    for k, (event, phrase) in enumerate(line):
        after = line[k + 1] if k + 1 < len(line) else None
        if after is None:
            continue
        onset = after[0].time
        rest = onset - event.end
        if after[1] == phrase or (rest < breath["low_s"]
                                  and ends[after[1]] - group <= breath["max_group_s"]):
            # legato: held up to the next note's onset, never past it (inside a phrase, or
            # on into a short next phrase that his breath still lasts for)
            notes[k] = replace(event, duration=max(onset - event.time, 1e-3))
            continue
        group = onset
        seconds = float(rng.uniform(breath["low_s"], breath["high_s"]))
        end = min(event.end, onset - seconds)  # the breath's time: from the rest, or the note
        end = max(end, event.time + min(breath["min_note_s"], onset - event.time))
        notes[k] = replace(event, duration=max(end - event.time, 1e-3))
        if onset - end > 0.05:
            breaths.append(_breath(after[0], onset - min(seconds, onset - end), onset,
                                   breath))
    if first.time >= breath["low_s"]:  # the breath before the first phrase
        seconds = min(float(rng.uniform(breath["low_s"], breath["high_s"])), first.time)
        breaths.insert(0, _breath(first, first.time - seconds, first.time, breath))
    return notes + breaths


def _breath(before: Event, start: float, end: float, breath: Mapping[str, float]) -> Event:
    """An inhalation from ``start`` to ``end``, just before the note ``before``."""
    return Event(start, end - start, before.source, None, breath["velocity"], INHALE,
                 before.cue, before.piece)


#: The least a sung note keeps when the next piece's entry cuts it (seconds).
_LEAST_NOTE_S = 0.05


def one_throat(events: Sequence[Event]) -> list[Event]:
    """``events`` with each singer's last sound of a piece ending where his first of the next
    piece begins: ``join_lines`` joins one piece's notes, and where songs follow each other
    without a rest (合樂's 關雎, 葛覃, 卷耳 …) the ensemble's lags can carry a held last note
    past the next song's first (a throat sounds one pitch at a time)."""
    sung = sorted((i for i, e in enumerate(events) if e.articulation in ("sing", INHALE)),
                  key=lambda i: (events[i].source, events[i].time))
    out = list(events)
    for a, b in itertools.pairwise(sung):
        first, then = out[a], out[b]
        if first.source == then.source and first.cue != then.cue and first.end > then.time:
            out[a] = replace(first, duration=max(_LEAST_NOTE_S, then.time - first.time))
    return out
