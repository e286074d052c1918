"""Modal synthesis of struck bronze and stone: 編鐘, 鑮 and 編磬.

A stroke excites a set of inharmonic modes, each a decaying sine. The modes come
in families: ``A`` (relative to the A-tone, 正鼓 strike), ``B`` (relative to the
B-tone, 側鼓 strike, ``b_ratio`` above the A-tone) and ``common`` (excited by any
stroke). A set whose bells differ (a minor third on some, a major third on
others, acoustics.md §1.2) gives ``b_ratios``, a table by pitch name that
:func:`for_pitch` consults for the bell being struck; ``b_ratio`` is the
interval of every bell the table does not name. The stroke drives its own
family at full level and the other at ``cross_db`` (acoustics.md §1.3: the
two tones of a two-tone bell are separate mode families; traces of the other
persist). A chime or single-tone instrument has only ``A`` and ``common``
modes and any articulation strikes them.

Decay: the lowest mode rings ``t60_s`` at ``t60_ref_hz`` and scales with pitch
as ``(t60_ref_hz / hz) ** t60_pitch_exponent`` (big bells ring longer); a mode
at ``r`` times the A-tone rings ``r ** -t60_ratio_exponent`` as long (higher modes
die first; acoustics.md §1.4, §2), times its own ``t60_scale``.

A short decaying noise burst (``strike_noise_db``, ``strike_noise_s``), band-
passed above the A-tone, gives the metallic or stony click of the mallet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.errors import TuningError
from soundscape.music.tuning import canonical_name
from soundscape.sound.synth._common import (
    bandpass,
    damped_partials,
    db_to_gain,
    frames_for,
    noise_burst,
    number,
    partial_table,
    table,
)
from soundscape.sound.synth.params import ParamError

__all__ = ["for_pitch", "mode_table", "prepare", "render", "validate"]

_FAMILIES = ("A", "B", "common")


def validate(params: Mapping[str, Any]) -> None:
    """Check the ``[params]`` of a modal instrument; raise ParamError naming the key."""
    partial_table(params)
    families = set()
    for i, row in enumerate(table(params, "partials")):
        family = row.get("family", "A")
        if family not in _FAMILIES:
            raise ParamError(f"partials[{i}].family", f"= {family!r} must be one of {_FAMILIES}")
        families.add(family)
    if "B" in families:
        number(params, "b_ratio", low=1.0, high=2.0)
        _b_ratios(params)
    elif "b_ratios" in params:
        raise ParamError("b_ratios", "is given but no partial has family 'B'")
    number(params, "t60_s", low=0.01, high=60.0)
    number(params, "t60_ref_hz", low=1.0, high=20000.0)
    number(params, "t60_pitch_exponent", low=0.0, high=3.0)
    number(params, "t60_ratio_exponent", low=0.0, high=3.0)
    number(params, "cross_db", low=-120.0, high=0.0, default=-20.0)
    number(params, "strike_noise_db", low=-120.0, high=0.0)
    number(params, "strike_noise_s", low=0.0005, high=1.0)
    number(params, "brightness", low=0.0, high=4.0, default=0.0)


def prepare(params: Mapping[str, Any]) -> dict[str, Any]:
    """Key ``b_ratios`` by canonical pitch name (``清黄钟`` → ``清黃鍾``)."""
    return {**params, "b_ratios": _b_ratios(params)} if "b_ratios" in params else dict(params)


def for_pitch(params: Mapping[str, Any], pitch_name: str) -> Mapping[str, Any]:
    """The parameters of the bell that sounds ``pitch_name``: its own ``b_ratio``.

    Parameters
    ----------
    params : mapping
        Prepared ``[params]`` of a modal instrument.
    pitch_name : str
        The canonical 律 name of the note (``清黃鍾``).

    Returns
    -------
    mapping
        ``params`` itself, or a copy whose ``b_ratio`` is ``b_ratios[pitch_name]``.
    """
    ratio = params.get("b_ratios", {}).get(pitch_name)
    return params if ratio is None else {**params, "b_ratio": ratio}


def _b_ratios(params: Mapping[str, Any]) -> dict[str, float]:
    """``b_ratios`` checked (pitch names, ratios in [1, 2]) and keyed canonically."""
    table = params.get("b_ratios", {})
    if not isinstance(table, Mapping):
        raise ParamError("b_ratios", "must be a table of pitch name = B/A ratio")
    out = {}
    for name in table:
        try:
            out[canonical_name(name)] = number(table, name, low=1.0, high=2.0)
        except TuningError as error:
            raise ParamError(f"b_ratios.{name}", f"is not a pitch name: {error}") from None
        except ParamError as error:
            raise ParamError(f"b_ratios.{name}", error.message) from None
    return out


def mode_table(params: Mapping[str, Any], *, hz: float,
               articulation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frequencies (Hz), relative amplitudes and T60s (s) of the modes a stroke excites."""
    stroke = "B" if articulation == "B" else "A"
    cross = db_to_gain(params.get("cross_db", -20.0))
    b_ratio = params.get("b_ratio", 1.0)
    t60_fund = params["t60_s"] * (params["t60_ref_hz"] / hz) ** params["t60_pitch_exponent"]
    freqs, amps, t60s = [], [], []
    for row in params["partials"]:
        family = row.get("family", "A")
        freq = hz * row["ratio"] * (b_ratio if family == "B" else 1.0)
        amp = db_to_gain(row["amp_db"])
        if family != "common" and family != stroke:
            amp *= cross
        freqs.append(freq)
        amps.append(amp)
        t60s.append(t60_fund * (freq / hz) ** -params["t60_ratio_exponent"]
                    * row.get("t60_scale", 1.0))
    return np.array(freqs), np.array(amps), np.array(t60s)


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One stroke: the modes of ``mode_table`` plus the mallet click, ringing out.

    Parameters
    ----------
    hz : float > 0, Hz
        The A-tone (the struck pitch for a chime).
    velocity : float in (0, 1]
        Stroke strength: scales the level and, by ``brightness``, the upper modes.
    duration : float > 0, seconds
        Nominal length; a struck instrument rings on, so the output lasts
        ``max(duration, ring time)``.
    articulation : str
        ``A`` (正鼓) or ``B`` (側鼓) for two-tone bells; anything else strikes ``A``.
    """
    freqs, amps, t60s = mode_table(params, hz=hz, articulation=articulation)
    amps = amps * velocity ** (params.get("brightness", 0.0) * np.maximum(np.log2(freqs / hz), 0))
    noise_gain = db_to_gain(params["strike_noise_db"])
    # Sum of amplitudes bounds the peak: at velocity 1 the stroke never exceeds 1.
    scale = velocity / (float(np.sum(db_to_gain(_levels(params)))) + noise_gain)
    frames = frames_for(max(duration, 1.5 * float(np.max(t60s))), sample_rate)
    out = damped_partials(freqs, amps * scale, t60s, frames=frames, sample_rate=sample_rate)
    click = noise_burst(rng, frames=frames, decay_s=params["strike_noise_s"],
                        sample_rate=sample_rate)
    out[:click.size] += bandpass(click, 2.0 * hz, 16.0 * hz, sample_rate) \
        * (noise_gain * scale * velocity)
    return out


def _levels(params: Mapping[str, Any]) -> np.ndarray:
    return np.array([row["amp_db"] for row in params["partials"]])
