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

from soundscape.sound.synth._common import abs_peak, bandpass, frames_for, sample_times

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


def _shape(frames: int, sample_rate: int, spin_hz: float,
           spin_depth: float) -> tuple[np.ndarray, np.ndarray]:
    """The flutter and the raised-cosine envelope of a whoosh of ``frames``: the flutter
    the start of one kept track (its values do not depend on the length), the envelope kept for
    the latest lengths (516 segments in the rite, some hundred lengths)."""
    return _flutter(sample_rate, spin_hz, spin_depth, frames)[:frames], _envelope(frames)


_FLUTTERS: dict[tuple[int, float, float], np.ndarray] = {}


def _flutter(sample_rate: int, spin_hz: float, spin_depth: float, frames: int) -> np.ndarray:
    """The fletching's flutter over at least ``frames`` samples, kept per rate and spin
    (read-only: shared by every call)."""
    key = (sample_rate, spin_hz, spin_depth)
    kept = _FLUTTERS.get(key)
    if kept is None or kept.size < frames:
        size = max(frames, 0 if kept is None else 2 * kept.size)
        t = sample_times(size, sample_rate)
        kept = 1.0 - spin_depth * 0.5 * (1.0 + np.sin(2.0 * np.pi * spin_hz * t))
        kept.flags.writeable = False
        _FLUTTERS[key] = kept
    return kept


#: Envelopes kept (the latest lengths: an end's arrows, shot after shot); 64 held 24 MiB in
#: the note helper for a whole rite's some hundred lengths, most made once.
_ENVELOPES_KEPT = 8


@functools.lru_cache(maxsize=_ENVELOPES_KEPT)
def _envelope(frames: int) -> np.ndarray:
    envelope = np.sin(np.pi * np.arange(frames) / frames) ** 2
    envelope.flags.writeable = False  # shared by every call
    return envelope
