"""A bronze vessel (爵, 觶) set down: its legs or foot meet the surface, and both ring.

The cup rings in the bending modes of a thin ring, the inextensional modes n = 2,
3, 4, 5 whose frequencies go as n(n² − 1)/√(n² + 1) (Rayleigh, *The Theory of
Sound*, §233; Fletcher & Rossing, *The Physics of Musical Instruments*, ch. 2;
docs/sources.md A10.3): ratios 1 : 2.83 : 5.42 : 8.77 of the
lowest (``hz``). Resting on something, it is damped: the modes' T60s are
multiplied by ``damping``. A 爵 stands on three legs that land a few ms apart
(``contacts`` within ``spread_s``), a 觶 on a ring foot (one contact and a small
rock); every contact excites the cup's modes with its own random weights (where
it lands) and knocks the surface: ``surface`` modes as ``[Hz, T60 s, level dB]``
(a wooden stand or floor board), and ``crackle_db``/``crackle_count`` dry
grains (the bamboo 篚).

Each articulation is a table ``[params.<articulation>]`` with ``modes`` (the
cup's, ``[ratio, T60 s, level dB]``), ``damping``, ``contacts``, ``spread_s``,
``surface``, ``crackle_db``, ``crackle_count``, ``contact_s`` (each contact's
push). The output is normalised to peak ``velocity``.
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
    """One setting-down; ``hz`` is the cup's lowest mode (a smaller cup rings higher)."""
    row = params[articulation]
    modes = np.asarray(row["modes"], dtype=float)
    surface = np.asarray(row.get("surface", []), dtype=float).reshape(-1, 3)
    t60s = modes[:, 1] * row["damping"]
    ring = 1.5 * max(float(np.max(t60s)), *surface[:, 1], 0.05)
    frames = frames_for(max(duration, row["spread_s"] + ring), sample_rate)
    out = np.zeros(frames)
    onsets = np.sort(rng.uniform(0.0, row["spread_s"], int(row["contacts"])))
    onsets[0] = 0.0
    for i, onset in enumerate(onsets):
        start = round(onset * sample_rate)
        weights = rng.uniform(0.4, 1.0, len(modes)) * (0.8 ** i)  # legs after the first: less
        cup = damped_partials(hz * modes[:, 0], db_to_gain(modes[:, 2]) * weights, t60s,
                              frames=frames - start, sample_rate=sample_rate)
        if surface.size:
            cup += damped_partials(surface[:, 0], db_to_gain(surface[:, 2]) * (0.8 ** i),
                                   surface[:, 1], frames=frames - start,
                                   sample_rate=sample_rate)
        out[start:] += cancel_dc(cup, contact_s=row["contact_s"], sample_rate=sample_rate)
    crackle = db_to_gain(row["crackle_db"])
    for _ in range(int(row["crackle_count"])):
        at = round(rng.uniform(0.0, row["spread_s"] + 0.06) * sample_rate)
        grain = noise_burst(rng, frames=frames - at, decay_s=0.003, sample_rate=sample_rate)
        out[at:at + grain.size] += bandpass(grain, 2000.0, 9000.0, sample_rate) \
            * crackle * rng.uniform(0.3, 1.0)
    peak = abs_peak(out)
    return out * (velocity / peak) if peak > 0 else out
