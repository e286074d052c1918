"""Speech prosody: how long each syllable of a spoken phrase lasts, and its pitch.

Numbers and sources: ``soundscape/data/prosody.toml``.

- **Timing** (``syllable_seconds``): Klatt's (1976) incompressibility rule on the syllable,
  D = K (D_inh − D_min) + D_min: an open syllable at the phrase end lasts the style's
  inherent duration, one before it is shortened (K = 0.6), a checked syllable (入聲,
  -p -t -k) more (``checked_k``). ``phrase_seconds`` is their sum: the sequencer gives a
  phrase that long, and the voice lays the syllables out by the same rule.
- **Pitch** (``pitch_semitones``): each syllable's tone, in Chao letters, is a target line;
  f0 approaches it as the qTA model does (Prom-on, Xu & Thipakorn 2009), carrying f0 and
  its first two derivatives across syllable boundaries, over a phrase line that decays
  exponentially (Shih 1997).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from soundscape import validate
from soundscape.errors import TextError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir

__all__ = ["STYLES", "gap_seconds", "phrase_seconds", "pitch_semitones", "settings",
           "syllable_seconds"]

STYLES = ("speak", "call")
_NUMBERS = {
    ("timing", "min_share"): (0.05, 1.0), ("timing", "non_final_k"): (0.05, 1.0),
    ("timing", "checked_k"): (0.05, 1.0), ("timing", "gap_s"): (0.0, 5.0),
    ("pitch", "semitones_per_level"): (0.0, 6.0), ("pitch", "rate_per_s"): (1.0, 200.0),
    ("pitch", "declination_semitones"): (0.0, 12.0), ("pitch", "declination_s"): (0.05, 30.0),
}


@functools.cache
def settings() -> dict[str, Any]:
    """``data/prosody.toml``, checked: every number in range, both styles present."""
    path = data_dir() / "prosody.toml"
    data = read_toml(path, TextError)
    for (table, key), (low, high) in _NUMBERS.items():
        validate.number(data.get(table, {}).get(key), key=f"{table}.{key}", where=str(path),
                        error=TextError, low=low, high=high)
    for style in STYLES:
        validate.number(data.get("style", {}).get(style, {}).get("inherent_s"),
                        key=f"style.{style}.inherent_s", where=str(path), error=TextError,
                        low=0.05, high=2.0, unit="seconds")
    return data


def _style(style: str) -> float:
    if style not in STYLES:
        raise TextError(f"prosody: style {style!r} is unknown; accepted: {', '.join(STYLES)}")
    return settings()["style"][style]["inherent_s"]


def syllable_seconds(checked: Sequence[bool], style: str = "speak") -> np.ndarray:
    """Each syllable's duration (s) in a phrase of ``len(checked)`` syllables, the last
    phrase-final; ``checked[i]``: syllable i ends in -p -t -k (入聲)."""
    inherent, timing = _style(style), settings()["timing"]
    least = timing["min_share"] * inherent
    out = np.full(len(checked), inherent)
    for i, stop in enumerate(checked):
        for k, applies in ((timing["non_final_k"], i < len(checked) - 1),
                           (timing["checked_k"], stop)):
            if applies:  # Klatt: each rule shortens what is left above the floor
                out[i] = k * (out[i] - least) + least
    return out


def phrase_seconds(checked: Sequence[bool], style: str = "speak") -> float:
    """How long the phrase lasts (s): the sum of its syllables."""
    return float(np.sum(syllable_seconds(checked, style)))


def gap_seconds() -> float:
    """The pause (s) a speaker takes between two phrases."""
    return float(settings()["timing"]["gap_s"])


def pitch_semitones(t: np.ndarray, bounds: np.ndarray,
                    contours: Sequence[Sequence[int] | None]) -> np.ndarray:
    """f0 in semitones around the speaker's pitch at times ``t`` (s, ascending).

    Parameters
    ----------
    t : array of seconds from the phrase's start
    bounds : array of len(contours) + 1 seconds
        Where each syllable begins, and where the last ends.
    contours : Chao tone letters per syllable (1 lowest … 5 highest; 3 is the speaker's
        pitch); None for a syllable with no tone (held on 3).
    """
    pitch = settings()["pitch"]
    step, rate = pitch["semitones_per_level"], pitch["rate_per_s"]
    out = np.zeros_like(t, dtype=float)
    state = None  # f0, velocity, acceleration carried into the next target
    for t0, t1, letters in _targets(bounds, contours):
        height = (letters[0] - 3.0) * step
        slope = (letters[1] - letters[0]) * step / max(t1 - t0, 1e-6)
        if state is None:
            state = (height, slope, 0.0)  # the phrase starts on its first target
        inside = (t >= t0) & (t < t1) if t1 < bounds[-1] else (t >= t0)
        out[inside] = _approach(t[inside] - t0, slope, height, state, rate)
        state = _approach_state(t1 - t0, slope, height, state, rate)
    fall = pitch["declination_semitones"] * (1.0 - np.exp(-t / pitch["declination_s"]))
    middle = pitch["declination_semitones"] * (
        1.0 - math.exp(-0.5 * bounds[-1] / pitch["declination_s"]))
    return out - fall + middle


def _targets(bounds: np.ndarray, contours: Sequence[Sequence[int] | None]):
    """(start, end, (from letter, to letter)) of each target line: a contour of n letters
    gives n − 1 lines over equal parts of its syllable; one letter, a level target."""
    for t0, t1, contour in zip(bounds[:-1], bounds[1:], contours, strict=True):
        letters = tuple(contour) if contour else (3,)
        if len(letters) == 1:
            yield t0, t1, (letters[0], letters[0])
            continue
        edges = np.linspace(t0, t1, len(letters))
        yield from zip(edges[:-1], edges[1:], itertools.pairwise(letters), strict=True)


def _coefficients(slope: float, height: float, state, rate: float):
    """qTA (Prom-on, Xu & Thipakorn 2009, eq. 3-5): the transient's c1, c2, c3."""
    f0, velocity, acceleration = state
    c1 = f0 - height
    c2 = velocity + c1 * rate - slope
    c3 = (acceleration + 2.0 * c2 * rate - c1 * rate ** 2) / 2.0
    return c1, c2, c3


def _approach(t: np.ndarray, slope: float, height: float, state, rate: float) -> np.ndarray:
    c1, c2, c3 = _coefficients(slope, height, state, rate)
    return slope * t + height + (c1 + c2 * t + c3 * t ** 2) * np.exp(-rate * t)


def _approach_state(t: float, slope: float, height: float, state, rate: float):
    """f0, its velocity and acceleration at ``t`` into the target (carried to the next)."""
    c1, c2, c3 = _coefficients(slope, height, state, rate)
    e = math.exp(-rate * t)
    poly = c1 + c2 * t + c3 * t ** 2
    d_poly = c2 + 2.0 * c3 * t
    f0 = slope * t + height + poly * e
    velocity = slope + (d_poly - rate * poly) * e
    acceleration = (2.0 * c3 - 2.0 * rate * d_poly + rate ** 2 * poly) * e
    return f0, velocity, acceleration
