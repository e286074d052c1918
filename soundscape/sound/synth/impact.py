"""An arrow striking: the 鵠's skin, the 侯's cloth, or the ground.

A short thud: a few low modes of the struck surface (ratios of ``hz`` per
articulation, decaying fast) plus a low-passed noise burst for the shaft's
impact and the tearing or scattering of what it hits. Each articulation is a
table under ``[params.<articulation>]``: ``modes`` (ratios), ``t60_s``,
``noise_db``, ``noise_s``, ``noise_high_hz``, ``contact_s`` (how long the
arrow's push lasts: it cancels the impact's DC, see ``_common.cancel_dc``) and, optional,
``amps``: each mode's amplitude as radiated (1/n when absent). A slender stave radiates its
low bending modes hardly at all (a line dipole: radiation efficiency ~ (ka)³), so what is
heard of it is its upper modes, and the file says so.

No two hits alike (``[params.scatter]``, optional): an arrow lands anywhere on the
target, so each mode is excited by its shape there (a level scattered normally by
``level_db``), and the hanging cloth or skin is tauter in some places than others (all
modes moved together, uniformly within ±``detune``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import (
    abs_peak,
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
    """One impact; ``hz`` (Hz) is the lowest mode, ``articulation`` the surface struck."""
    row = params[articulation]
    ratios = np.asarray(row["modes"], dtype=float)
    amps = np.asarray(row.get("amps", 1.0 / np.arange(1, ratios.size + 1)), dtype=float)
    scatter = params.get("scatter")
    if scatter is not None:
        ratios = ratios * (1.0 + float(rng.uniform(-1.0, 1.0)) * scatter["detune"])
        amps = amps * db_to_gain(rng.normal(0.0, scatter["level_db"], amps.size))
    t60s = row["t60_s"] / np.sqrt(ratios)
    noise = db_to_gain(row["noise_db"])
    scale = velocity / (float(np.sum(amps)) + noise)
    frames = frames_for(max(duration, 1.5 * row["t60_s"]), sample_rate)
    out = damped_partials(hz * ratios, amps * scale, t60s, frames=frames,
                          sample_rate=sample_rate, glide=0.1, glide_s=0.01)
    burst = noise_burst(rng, frames=frames, decay_s=row["noise_s"], sample_rate=sample_rate)
    out[:burst.size] += bandpass(burst, 30.0, row["noise_high_hz"], sample_rate) * (noise * scale)
    out = cancel_dc(out, contact_s=row["contact_s"], sample_rate=sample_rate)
    peak = abs_peak(out)
    # The push is a sharp crack on a tight skin: keep the peak at the velocity.
    return out * (velocity / peak) if peak > velocity else out
