"""The bow's release: the string's twang, the limbs' thump and the string slapping the guard.

A bowstring released from full draw at its nocking point (about its middle)
vibrates as a plucked string: harmonics ``k × hz`` with amplitude ``|sin(π k p)| / k``
for a pluck at fraction ``p`` of its length (so a middle pluck has weak even
harmonics), each decaying with T60 ``t60_s / k ** 0.5`` (the string is short-lived:
the limbs and the archer's hand damp it). Under it, a low decaying thump of the
limbs stopping (``thump_hz``), and a short band-passed noise burst for the string
striking the bracer (遂, 韝). ``hz`` is the string's fundamental. The release
has no DC: the limbs' push (``contact_s``) carries the area the rings leave over.

``velocity`` is the release's energy, and it moves the spectrum, not only the level: a
harder draw leaves the string from a sharper corner, so harmonic ``k`` is scaled by
``1 / (1 + (k / k_c)²)`` with ``k_c = bright_k × velocity``, and the string slaps the guard
harder (the slap grows as ``velocity ** (1 + slap_power)``, the twang as ``velocity``).
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
    """One release. ``hz`` (Hz) is the string's nominal fundamental. Drawn from ``rng``,
    as bows and loosings differ: the string's pitch (up to ``detune``, a fraction), the
    limbs' (``thump_spread``), where the string leaves the fingers (up to ``pluck_spread``
    below ``pluck_position``) and how late it slaps the guard (up to ``slap_delay_s``).
    Output lasts ``max(duration, ring)``.
    """
    hz = hz * (1.0 + float(rng.uniform(-1.0, 1.0)) * params["detune"])
    limbs = params["thump_hz"] * (1.0 + float(rng.uniform(-1.0, 1.0)) * params["thump_spread"])
    off = float(rng.uniform(0.0, 1.0)) * params["pluck_spread"]
    where = max(0.01, params["pluck_position"] - off)
    late = round(float(rng.uniform(0.0, 1.0)) * params["slap_delay_s"] * sample_rate)
    k = np.arange(1, int(params["harmonics"]) + 1)
    corner = params["bright_k"] * velocity
    amps = np.abs(np.sin(np.pi * k * where)) / k / (1.0 + (k / corner) ** 2)
    t60s = params["t60_s"] / np.sqrt(k)
    thump = db_to_gain(params["thump_db"])
    slap = db_to_gain(params["slap_db"]) * velocity ** params["slap_power"]
    scale = velocity / (float(np.sum(amps)) + thump + slap)
    frames = frames_for(max(duration, 1.5 * params["t60_s"], 1.5 * params["thump_t60_s"]),
                        sample_rate)
    out = damped_partials(hz * k, amps * scale, t60s, frames=frames, sample_rate=sample_rate)
    out += damped_partials(np.array([limbs]), np.array([thump * scale]),
                           np.array([params["thump_t60_s"]]), frames=frames,
                           sample_rate=sample_rate, glide=0.3, glide_s=0.01)
    burst = noise_burst(rng, frames=frames, decay_s=params["slap_s"], sample_rate=sample_rate)
    band = bandpass(burst, params["slap_low_hz"], params["slap_high_hz"], sample_rate)
    band = band[:max(0, frames - late)]
    out[late:late + band.size] += band * (slap * scale)
    return cancel_dc(out, contact_s=params["contact_s"], sample_rate=sample_rate)
