"""Captions of a programme, time-locked to its audio: WebVTT and SRT (``webvtt-py``).

What a visitor who cannot hear is shown, as accessibility guidelines for audio-only
programmes ask (WCAG 2.1 SC 1.2.1, a text alternative for prerecorded audio, and
the sound descriptions of captioning practice):

- each ritual step: its 經文 quote, with the marker's romanised gloss (actor and action
  ids, e.g. ``(xiaochen · sheng)``: the cue sheet has no English translation);
- each music cue as it begins (its quote is the step's): a sound description naming the
  instrument families heard in its first half minute, the piece and its basis
  (surviving or reconstruction) and the compass directions it comes from, e.g.
  ``[bells, stones and drums: 肆夏 (reconstruction), from the east and west]``;
- the sung words, a line per breath (syllables less than a second apart), the calls
  with who calls them (``負侯: 諾``), and what the officials say (``speaker：words`` with
  the marker's English line);
- while music plays, after its description, ``[♪ 肆夏 (reconstruction) ♪]`` to its end;
- each shooting round as it begins.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import webvtt

from soundscape.fileio import write_text
from soundscape.geometry import Vec3
from soundscape.music.instruments import load_instrument
from soundscape.performance import Event, Marker, Performance

__all__ = ["Caption", "captions", "describe_music", "step_gloss", "write_srt", "write_vtt"]

#: English plural of each instrument family (the ``family`` of ``instruments/*.toml``).
FAMILY_WORDS = {"bell": "bells", "chime": "stones", "drum": "drums", "rattle": "rattle drum",
                "string": "zithers", "pipe": "pipes", "reed": "mouth organs",
                "voice": "voices"}
_FAMILY_ORDER = tuple(FAMILY_WORDS)
_LOOK_S = 30.0  # a music description names what sounds in the cue's first half minute
_BREATH_S = 1.0  # sung syllables further apart than this start a new line
_LINE = 8  # characters per sung line at most (two four-character lines of a 詩)
_STEP_S = (2.0, 10.0)  # a step caption stays until the next step, within these bounds
_COMPASS = ("east", "north", "west", "south")


@dataclass(frozen=True, slots=True)
class Caption:
    """One caption: seconds on the programme's clock, the text, and what it captions
    (``step``, ``music``, ``sung``, ``spoken``, ``shot``)."""

    start: float
    end: float
    text: str
    kind: str


def captions(performance: Performance, *, listener_at: Vec3 | None = None
             ) -> list[Caption]:
    """The captions of ``performance`` sorted by start; directions are as seen from
    ``listener_at`` (None: from the middle of the orchestra's sources)."""
    found = _steps(performance.markers)
    for marker in performance.markers:
        if marker.kind == "music" and marker.quote:
            text = describe_music(performance, marker, listener_at)  # the step shows the quote
            if text:
                found.append(Caption(marker.time, marker.time + 6.0, text, "music"))
        elif marker.kind == "speech":  # what an official says, with its English line
            found.append(Caption(marker.time, marker.time + max(3.0, 0.3 * len(marker.quote)),
                                 f"{marker.text}\n({marker.gloss})", "spoken"))
        elif marker.kind == "shot":
            found.append(Caption(marker.time, marker.time + 4.0,
                                 f"{marker.text}\n[{marker.gloss}]", "shot"))
    found += _words(performance)
    for span in performance.music:  # the music goes on under the words and steps
        piece = performance.pieces.get(span.piece)
        if piece and span.end - span.start > 8.0:
            found.append(Caption(span.start + 6.0, span.end,
                                 f"[♪ {piece.title} ({piece.basis}) ♪]", "music"))
    return sorted(found, key=lambda c: (c.start, c.kind))


def _steps(markers: Sequence[Marker]) -> list[Caption]:
    steps = [m for m in markers if m.kind == "step"]
    out = []
    for marker, after in zip(steps, [*steps[1:], None], strict=True):
        room = (after.time - marker.time) if after else _STEP_S[1]
        end = marker.time + min(_STEP_S[1], max(_STEP_S[0], room))
        gloss = step_gloss(marker)
        text = (marker.quote or marker.text) + (f"\n({gloss})" if gloss else "")
        out.append(Caption(marker.time, end, text, "step"))
    return out


def step_gloss(marker: Marker) -> str:
    """A step marker's gloss without its id: ``s18.18 guan_play`` → ``guan play``; the
    word ``other`` (an action the glossary does not name) says nothing and is dropped."""
    if not marker.gloss.startswith(f"{marker.ref} "):  # an English sentence (text.gloss)
        return marker.gloss
    words = [w.replace("_", " ") for w in marker.gloss.split()[1:] if w != "other"]
    return " · ".join(words)


def describe_music(performance: Performance, marker: Marker,
                   listener_at: Vec3 | None = None) -> str:
    """``[families: piece (basis), from the …]`` for the music cue ``marker`` begins."""
    events = [e for e in performance.events if e.cue == marker.ref
              and marker.time <= e.time < marker.time + _LOOK_S]
    if not events:
        return ""
    sources = {e.source: performance.sources[e.source] for e in events}
    families = {_family(s.instrument) for s in sources.values()}
    words = [FAMILY_WORDS[f] for f in _FAMILY_ORDER if f in families]
    piece = performance.pieces.get(events[0].piece or "")
    title = f"{piece.title} ({piece.basis})" if piece else marker.text
    centre = listener_at or _centre([s.position for s in sources.values()])
    sides = _directions([s.position_at(marker.time) for s in sources.values()], centre)
    where = f", from the {_and(sides)}" if sides else ""
    return f"[{_and(words) or 'music'}: {title}{where}]"


def _family(instrument: str) -> str:
    return load_instrument(instrument).family


def _centre(points: list[Vec3]) -> Vec3:
    n = len(points)
    return (sum(p[0] for p in points) / n, sum(p[1] for p in points) / n,
            sum(p[2] for p in points) / n)


def _directions(points: list[Vec3], centre: Vec3) -> list[str]:
    """Compass words of the points seen from ``centre`` (a point within 2 m: none)."""
    seen = set()
    for x, y, _ in points:
        dx, dy = x - centre[0], y - centre[1]
        if math.hypot(dx, dy) < 2.0:
            continue
        seen.add(_COMPASS[round(math.degrees(math.atan2(dy, dx)) / 90.0) % 4])
    return [word for word in _COMPASS if word in seen]


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1] \
        if words else ""


def _words(performance: Performance) -> list[Caption]:
    """Sung lines and spoken calls: singers in unison and the three 負侯 answering
    together are one voice."""
    heard: dict[tuple[float, str], Event] = {}
    for event in performance.events:
        if performance.sources[event.source].group == "speech":
            continue  # captioned from its speech marker, a phrase at a time
        if event.lyric and event.articulation in ("sing", "call"):
            heard.setdefault((round(event.time, 2), event.articulation), event)
    out: list[Caption] = []
    line: list[Event] = []
    for (_, how), event in sorted(heard.items()):
        if how == "call":
            who = performance.sources[event.source].name.split()[0]
            out.append(Caption(event.time, event.time + 2.5, f"{who}: {event.lyric}", "spoken"))
            continue
        if line and (event.time - line[-1].end > _BREATH_S or len(line) >= _LINE
                     or event.cue != line[-1].cue):
            out.append(_sung(line))
            line = []
        line.append(event)
    if line:
        out.append(_sung(line))
    return out


def _sung(line: list[Event]) -> Caption:
    return Caption(line[0].time, line[-1].end, "♪ " + "".join(e.lyric or "" for e in line) + " ♪",
                   "sung")


def _stamp(seconds: float) -> str:
    millis = round(seconds * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def _document(found: Sequence[Caption]) -> webvtt.WebVTT:
    vtt = webvtt.WebVTT()
    for i, caption in enumerate(found):
        vtt.captions.append(webvtt.Caption(_stamp(caption.start), _stamp(caption.end),
                                           caption.text.split("\n"), identifier=str(i + 1)))
    return vtt


def write_vtt(found: Sequence[Caption], path: str | Path) -> Path:
    """Write WebVTT (UTF-8), atomically."""
    return write_text(path, _document(found).content)


def write_srt(found: Sequence[Caption], path: str | Path) -> Path:
    """Write SRT (UTF-8), atomically."""
    buffer = io.StringIO()
    _document(found).write(buffer, format="srt")
    return write_text(path, buffer.getvalue())
