"""The 笙: free reeds in a gourd wind-chest, sounding chords of a few pipes.

An additive model (docs/sources.md A5.1 EST): harmonics falling about 6 dB per
octave up to ``knee_harmonic``, then ``steep_db_per_octave``, shaped by one
resonance of the pipe near ``resonance_harmonic``; a slow attack while the reed
swings up; breath noise band-passed at 1–4 kHz. A free reed's pitch hardly
depends on the blowing pressure, so there is no drift: only a small fixed
detuning of each chord pipe (``pipe_detune_cents``) so that they beat.
The chord is ``chord`` (ratios to the note: a fifth and an octave) at
``chord_db`` below the note itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import (
    attack_release,
    bandpass,
    db_to_gain,
    frames_for,
    harmonic_tones,
)
from soundscape.sound.synth.params import ParamError

__all__ = ["render", "spectrum", "validate"]


def validate(params: Mapping[str, Any]) -> None:
    """A chord ratio lies above 1 (the schema bounds it to [1, 8]; 1 would be the note itself)."""
    chord = params.get("chord", [])
    if 1.0 in chord:
        raise ParamError("chord", f"= {chord!r} must be a list of ratios in (1, 8]")


def spectrum(params: Mapping[str, Any]) -> np.ndarray:
    """Linear amplitudes of the harmonics of one reed pipe (harmonic 1 first)."""
    k = np.arange(1, int(params["harmonics"]) + 1, dtype=float)
    octaves = np.log2(k)
    knee = np.log2(params["knee_harmonic"])
    level = -params["rolloff_db_per_octave"] * np.minimum(octaves, knee) \
        - params["steep_db_per_octave"] * np.maximum(octaves - knee, 0.0)
    detune = (k / params["resonance_harmonic"] - params["resonance_harmonic"] / k)
    level += params["resonance_db"] / (1.0 + (params["resonance_q"] * detune) ** 2)
    return np.asarray(db_to_gain(level - np.max(level)))


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One chord held for ``duration`` seconds on the note ``hz`` (its lowest pipe)."""
    frames = frames_for(duration + params["release_s"], sample_rate)
    harmonics = spectrum(params)
    ratios = [1.0, *params.get("chord", ())]
    levels = [1.0] + [float(db_to_gain(params["chord_db"]))] * (len(ratios) - 1)
    detunes = [0.0, *rng.uniform(-1.0, 1.0, len(ratios) - 1) * params["pipe_detune_cents"]]
    tone = np.zeros(frames)
    for ratio, level, cents in zip(ratios, levels, detunes, strict=True):
        f0 = np.full(frames, hz * ratio * 2.0 ** (cents / 1200.0))
        tone += level * harmonic_tones(f0, [harmonics], sample_rate=sample_rate)[0]
    envelope = attack_release(frames, attack_s=params["attack_s"], release_s=params["release_s"],
                              hold_s=duration, sample_rate=sample_rate)
    breath_gain = float(db_to_gain(params["breath_db"]))
    breath = bandpass(rng.uniform(-1.0, 1.0, frames), 1000.0, 4000.0, sample_rate) * breath_gain
    bound = float(np.sum(harmonics)) * sum(levels) + breath_gain
    return velocity * (tone + breath) * envelope / bound
