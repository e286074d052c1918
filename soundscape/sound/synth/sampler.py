"""Recorded samples (WAV, FLAC …), resampled to the note's pitch.

An instrument file lists its recordings under ``[[params.samples]]`` with
``file`` (relative to the instrument file) and ``root_hz`` (the pitch recorded).
A note plays the sample whose root is nearest in cents, read faster or slower by
``hz / root_hz`` (linear interpolation; the sample's own ring is kept). ``gain_db``
sets the level at velocity 1; the files are decoded once, when the instrument is
loaded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import soundfile

from soundscape.sound.synth._common import db_to_gain, frames_for
from soundscape.sound.synth.params import ParamError

__all__ = ["prepare", "render", "validate"]


def validate(params: Mapping[str, Any]) -> None:
    """Each sample file is readable audio (the schema has checked the rest: ranges, and a
    file inside the instrument file's folder)."""
    for i, row in enumerate(params["samples"]):
        try:
            soundfile.info(row["file"])
        except (RuntimeError, OSError) as error:  # soundfile raises RuntimeError-based errors
            raise ParamError(f"samples[{i}].file", f"= {row['file']!r} is not a readable audio "
                             f"file ({error})") from None


def prepare(params: Mapping[str, Any]) -> dict[str, Any]:
    """Decode every sample once, to mono float64 (channels averaged), read-only."""
    decoded = []
    for row in params["samples"]:
        data, rate = soundfile.read(row["file"], dtype="float64", always_2d=True)
        mono = data.mean(axis=1)
        mono.flags.writeable = False
        decoded.append((float(row["root_hz"]), int(rate), mono))
    return {**params, "decoded": tuple(decoded)}


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """The nearest sample, transposed to ``hz`` and resampled to ``sample_rate``.

    The whole recording plays (its natural ring) unless it is longer than
    ``duration`` plus ``release_s``, when it is faded out there.
    """
    root, rate, data = min(params["decoded"], key=lambda s: abs(math.log2(hz / s[0])))
    step = hz / root * rate / sample_rate  # input samples per output sample
    frames = max(1, math.floor((data.size - 1) / step) + 1)
    out = np.interp(np.arange(frames) * step, np.arange(data.size), data)
    release = params.get("release_s", 0.05)
    stop = frames_for(duration + release, sample_rate)
    if stop < frames:
        fade_from = frames_for(duration, sample_rate)
        out = out[:stop]
        out[fade_from:] *= np.linspace(1.0, 0.0, stop - fade_from)
    return out * (velocity * float(db_to_gain(params.get("gain_db", 0.0))))
