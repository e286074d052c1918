"""An arrow in flight: a short breathy whoosh.

Air rushing past the shaft and fletching is broadband noise; we band-pass it
around ``hz`` (from ``hz × low_ratio`` to ``hz × high_ratio``), flutter it at the
fletching's spin rate (``spin_hz``, depth ``spin_depth``) and shape it with a
raised-cosine envelope over ``duration``, so that overlapping segments placed
along the path join smoothly. No Doppler shift (the renderer moves nothing
within one event).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import abs_peak, bandpass, frames_for

__all__ = ["render"]


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """``duration`` seconds of whoosh centred on ``hz`` (Hz), peak = ``velocity``."""
    frames = frames_for(duration, sample_rate)
    noise = bandpass(rng.standard_normal(frames), hz * params["low_ratio"],
                     hz * params["high_ratio"], sample_rate)
    spin, envelope = _shape(frames, sample_rate, float(params["spin_hz"]),
                            float(params["spin_depth"]))
    out = noise * spin
    out *= envelope  # in place: the same products, no new arrays
    peak = abs_peak(out)
    if peak > 0:
        out *= velocity / peak
    return out


@functools.lru_cache(maxsize=64)
def _shape(frames: int, sample_rate: int, spin_hz: float,
           spin_depth: float) -> tuple[np.ndarray, np.ndarray]:
    """The flutter and the raised-cosine envelope of a whoosh of ``frames``, made once per
    length (an arrow's segments come in a few lengths: 516 in the rite, 48 lengths)."""
    t = np.arange(frames) / sample_rate
    spin = 1.0 - spin_depth * 0.5 * (1.0 + np.sin(2.0 * np.pi * spin_hz * t))
    envelope = np.sin(np.pi * np.arange(frames) / frames) ** 2
    spin.flags.writeable = envelope.flags.writeable = False  # shared by every call
    return spin, envelope
