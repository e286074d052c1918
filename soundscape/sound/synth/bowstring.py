"""The bow's release: the string's twang, the limbs' thump and the string slapping the guard.

A bowstring released from full draw at its nocking point (about its middle)
vibrates as a plucked string: harmonics ``k × hz`` with amplitude ``|sin(π k p)| / k``
for a pluck at fraction ``p`` of its length (so a middle pluck has weak even
harmonics), each decaying with T60 ``t60_s / k ** 0.5`` (the string is short-lived:
the limbs and the archer's hand damp it). Under it, a low decaying thump of the
limbs stopping (``thump_hz``), and a short band-passed noise burst for the string
striking the bracer (遂, 韝). ``hz`` is the string's fundamental. The release
has no DC: the limbs' push (``contact_s``) carries the area the rings leave over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import (
    bandpass,
    cancel_dc,
    damped_partials,
    db_to_gain,
    frames_for,
    noise_burst,
)

__all__ = ["render"]


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One release. ``hz`` (Hz) is the string's nominal fundamental; each bow differs by
    up to ``detune`` (fraction, drawn from ``rng``). Output lasts ``max(duration, ring)``.
    """
    hz = hz * (1.0 + float(rng.uniform(-1.0, 1.0)) * params["detune"])
    k = np.arange(1, int(params["harmonics"]) + 1)
    amps = np.abs(np.sin(np.pi * k * params["pluck_position"])) / k
    t60s = params["t60_s"] / np.sqrt(k)
    thump = db_to_gain(params["thump_db"])
    slap = db_to_gain(params["slap_db"])
    scale = velocity / (float(np.sum(amps)) + thump + slap)
    frames = frames_for(max(duration, 1.5 * params["t60_s"], 1.5 * params["thump_t60_s"]),
                        sample_rate)
    out = damped_partials(hz * k, amps * scale, t60s, frames=frames, sample_rate=sample_rate)
    out += damped_partials(np.array([params["thump_hz"]]), np.array([thump * scale]),
                           np.array([params["thump_t60_s"]]), frames=frames,
                           sample_rate=sample_rate, glide=0.3, glide_s=0.01)
    burst = noise_burst(rng, frames=frames, decay_s=params["slap_s"], sample_rate=sample_rate)
    band = bandpass(burst, params["slap_low_hz"], params["slap_high_hz"], sample_rate)
    out[:band.size] += band * (slap * scale)
    return cancel_dc(out, contact_s=params["contact_s"], sample_rate=sample_rate)
