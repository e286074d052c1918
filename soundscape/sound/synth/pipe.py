"""Bamboo pipes (管 / 簜, played as a pair): breathy additive tones.

Each pipe is a harmonic tone (``harmonics_db``) on a fundamental that starts a
little flat (``onset_cents``, the jet settling, relaxing over the attack) and
wanders slowly (``drift_cents``); the pair sounds ``pair_detune_cents`` apart,
centred on the note. A noise "chiff" at the onset and a steady breath noise,
both band-passed over the lower harmonics, make the bamboo breathy (docs/sources.md A
§5.2: more breath noise than a modern flute, little or no vibrato).
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
    harmonic_levels,
    harmonic_tones,
    noise_burst,
    smooth_noise,
)

__all__ = ["render"]


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One blown note held for ``duration`` seconds, then released.

    Parameters
    ----------
    hz : float > 0, Hz
    velocity : float in (0, 1]
        Breath: level and, by ``brightness``, the upper harmonics.
    """
    frames = frames_for(duration + params["release_s"], sample_rate)
    t = np.arange(frames) / sample_rate
    harmonics = harmonic_levels(params)
    k = np.arange(1, harmonics.size + 1)
    harmonics = harmonics * velocity ** (params.get("brightness", 0.0) * np.log2(k))
    settle = -params["onset_cents"] * np.exp(-t / params["attack_s"])
    half = params["pair_detune_cents"] / 2.0
    tone = np.zeros(frames)
    for side in (-1.0, 1.0):
        drift = params["drift_cents"] * smooth_noise(
            rng, frames=frames, rate_hz=params["drift_rate_hz"], sample_rate=sample_rate)
        f0 = hz * 2.0 ** ((settle + drift + side * half) / 1200.0)
        tone += harmonic_tones(f0, [harmonics], sample_rate=sample_rate)[0]
    envelope = attack_release(frames, attack_s=params["attack_s"], release_s=params["release_s"],
                              hold_s=duration, sample_rate=sample_rate)
    chiff = noise_burst(rng, frames=frames, decay_s=params["chiff_s"], sample_rate=sample_rate)
    breath = rng.uniform(-1.0, 1.0, frames) * envelope
    noise = bandpass(breath, hz, 8.0 * hz, sample_rate) * db_to_gain(params["breath_db"])
    noise[:chiff.size] += bandpass(chiff, 2.0 * hz, 10.0 * hz, sample_rate) \
        * db_to_gain(params["chiff_db"])
    # Two pipes of summed harmonic amplitudes plus the two noises bound the peak.
    bound = 2.0 * float(np.sum(harmonics)) + db_to_gain(params["breath_db"]) \
        + db_to_gain(params["chiff_db"])
    return velocity * (tone * envelope + noise) / bound
