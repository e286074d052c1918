"""The pitch value object: a 律 name in an octave, with its frequency.

``soundscape.music.tuning`` makes these; every other module only reads them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Pitch"]

# Octave prefixes as the texts write them: 倍 (doubled pipe, an octave down),
# none for the 正 octave, 清 (half pipe, an octave up). Further octaves are
# written with a count, e.g. 清清黃鍾 for two up.
_DOWN, _UP = "倍", "清"


@dataclass(frozen=True, slots=True)
class Pitch:
    """A sounding pitch.

    Parameters
    ----------
    lu : str
        One of the twelve 律 names in traditional characters (黃鍾 … 應鍾).
    octave : int
        0 for the 正 octave that starts at the reference 黃鍾, 1 for 清, -1 for 倍 …
    hz : float > 0, Hz
        The frequency under the tuning that made this pitch.
    """

    lu: str
    octave: int
    hz: float

    def __post_init__(self) -> None:
        if not (self.hz > 0 and math.isfinite(self.hz)):
            raise ValueError(f"pitch {self.lu!r} hz={self.hz!r} must be a finite number > 0")

    @property
    def name(self) -> str:
        """The 律 name with its octave prefix, e.g. 清黃鍾 or 倍林鍾."""
        prefix = _UP * self.octave if self.octave > 0 else _DOWN * -self.octave
        return prefix + self.lu

    @property
    def midi(self) -> float:
        """The fractional MIDI note number (A4 = 440 Hz = 69)."""
        return 69.0 + 12.0 * math.log2(self.hz / 440.0)

    def moved(self, octaves: int) -> Pitch:
        """This 律 ``octaves`` octaves up (negative: down)."""
        return Pitch(self.lu, self.octave + octaves, self.hz * 2.0 ** octaves) if octaves else self

    def nearest_midi(self) -> tuple[int, float]:
        """The nearest 12-TET MIDI note and the offset from it in cents."""
        note = round(self.midi)
        return note, (self.midi - note) * 100.0
