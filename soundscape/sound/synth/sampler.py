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

__all__ = ["MOST_FRAMES", "prepare", "render", "validate"]

#: Frames of all of an instrument's samples together (decoded to float64 once, when it is
#: loaded: 128 MiB). A sample is a note's sound, not a recording of the rite; a small file
#: can hold hours of silence, so the bound is checked on the files' headers before decoding.
MOST_FRAMES = 1 << 24
#: Channels of a sample file (averaged to mono, a block at a time).
MOST_CHANNELS = 64
_BLOCK = 1 << 18  # frames decoded at a time


def validate(params: Mapping[str, Any]) -> None:
    """Each sample file is readable audio, and all of them hold at most ``MOST_FRAMES`` (the
    schema has checked the rest: ranges, and a file inside the instrument file's folder)."""
    total = 0
    for i, row in enumerate(params["samples"]):
        try:
            info = soundfile.info(row["file"])
        except (RuntimeError, OSError) as error:  # soundfile raises RuntimeError-based errors
            raise ParamError(f"samples[{i}].file", f"= {row['file']!r} is not a readable audio "
                             f"file ({error})") from None
        if info.frames < 1:
            raise ParamError(f"samples[{i}].file", f"= {row['file']!r} holds no audio")
        if not 1 <= info.channels <= MOST_CHANNELS:
            raise ParamError(f"samples[{i}].file", f"= {row['file']!r} has {info.channels} "
                             f"channels; accepted: 1 to {MOST_CHANNELS}")
        total += max(info.frames, 0)
        if total > MOST_FRAMES:
            raise ParamError(f"samples[{i}].file", f"= {row['file']!r}: the samples up to it "
                             f"hold {total} frames; accepted: at most {MOST_FRAMES} in all "
                             f"({MOST_FRAMES / 48000:.0f} s at 48 kHz)")


def prepare(params: Mapping[str, Any]) -> dict[str, Any]:
    """Decode every sample once, to mono float64 (channels averaged), read-only."""
    decoded = []
    for i, row in enumerate(params["samples"]):
        with soundfile.SoundFile(row["file"]) as file:  # at most what its header said
            rate = file.samplerate
            blocks = [block.mean(axis=1) for block in file.blocks(
                _BLOCK, dtype="float64", always_2d=True, frames=min(file.frames, MOST_FRAMES))]
        mono = np.concatenate(blocks) if blocks else np.zeros(0)
        if not np.isfinite(mono).all():
            raise ParamError(f"samples[{i}].file", f"= {row['file']!r} holds samples that are "
                             "not finite numbers (NaN or infinity)")
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
    release = params.get("release_s", 0.05)
    stop = frames_for(duration + release, sample_rate)
    # only the frames the note keeps are read out (a sample played far below its root
    # would be thousands of times its length)
    frames = min(max(1, math.floor((data.size - 1) / step) + 1), stop + 1)
    out = np.interp(np.arange(frames) * step, np.arange(data.size), data)
    if stop < frames:
        fade_from = frames_for(duration, sample_rate)
        out = out[:stop]
        out[fade_from:] *= np.linspace(1.0, 0.0, stop - fade_from)
    return out * (velocity * float(db_to_gain(params.get("gain_db", 0.0))))
