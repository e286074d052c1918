"""Register: the range each voice part sings, and the octave a part sings a melody in.

Data and the rule's sources: ``soundscape/data/register.toml``. The rule: the notated 律
names are pitch classes with a relative octave, so a part sings a whole piece shifted by one
whole number of octaves: the shift that keeps the most notes inside the part's range and,
among those, puts the melody's median nearest the middle (geometric mean) of the range.
``octave_shift(pitches, part)`` finds it for a piece; ``sung_pitch(notated, part,
shift=…)`` applies it to one note (without ``shift``, to the note alone).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from soundscape.errors import RepertoireError
from soundscape.fileio import read_toml
from soundscape.music.pitch import Pitch
from soundscape.resources import data_dir

__all__ = ["PARTS", "VoicePart", "octave_shift", "rule", "song_octaves", "sung_pitch", "voice_part"]

PARTS = ("tenor", "baritone", "bass")


@dataclass(frozen=True, slots=True)
class VoicePart:
    """A voice part's singable range (Hz) and where the figures come from."""

    id: str
    low_hz: float
    high_hz: float
    source: str

    @property
    def middle_hz(self) -> float:
        """The middle of the range on a log scale (the geometric mean of its ends)."""
        return math.sqrt(self.low_hz * self.high_hz)

    def holds(self, hz: float) -> bool:
        return self.low_hz <= hz <= self.high_hz


def voice_part(part: str) -> VoicePart:
    """The part named ``part`` (one of ``PARTS``)."""
    parts = _data()["parts"]
    if part not in parts:
        raise RepertoireError(f"register.toml: voice part {part!r} unknown; accepted: "
                              f"{', '.join(parts)}")
    row = parts[part]
    return VoicePart(part, float(row["low_hz"]), float(row["high_hz"]), row["source"])


def rule() -> str:
    """The stated rule that maps notated pitch to sung pitch, with its sources."""
    return " ".join(_data()["rule"].split())


def octave_shift(pitches: Iterable[Pitch | float], part: str) -> int:
    """Octaves (negative: down) that keep most notes in the part's range, then put the
    melody's median nearest the part's middle."""
    hz = np.array([p.hz if isinstance(p, Pitch) else float(p) for p in pitches])
    if hz.size == 0:
        raise RepertoireError("register: a melody of no notes has no octave")
    voice = voice_part(part)
    nearest = round(math.log2(voice.middle_hz / float(np.median(hz))))

    def cost(shift: int) -> tuple[int, float]:
        moved = hz * 2.0 ** shift
        outside = int(np.count_nonzero((moved < voice.low_hz) | (moved > voice.high_hz)))
        return outside, abs(math.log2(float(np.median(moved)) / voice.middle_hz))

    return min(range(nearest - 2, nearest + 3), key=cost)


def song_octaves(notes: Iterable[Any], part: str) -> int:
    """The octaves ``part`` moves a piece's song by (``octave_shift`` of the pitched notes
    of instrument ``voice`` among ``notes``, an arrangement's); 0 for a piece not sung."""
    sung = [n.pitch for n in notes if n.instrument == "voice" and n.pitch is not None]
    return octave_shift(sung, part) if sung else 0


def sung_pitch(notated: Pitch, part: str, *, shift: int | None = None) -> Pitch:
    """The pitch a part sings for ``notated``: moved by ``shift`` octaves (a piece's
    ``octave_shift``); None places the note alone by the same rule."""
    octaves = octave_shift([notated], part) if shift is None else shift
    return notated.moved(octaves)


@functools.cache
def _data() -> dict:
    return read_toml(data_dir() / "register.toml", RepertoireError)
