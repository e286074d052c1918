"""Modal synthesis of struck bronze and stone: 編鐘, 鑮 and 編磬.

A stroke excites a set of inharmonic modes, each a decaying sine. The modes come
in families: ``A`` (relative to the A-tone, 正鼓 strike), ``B`` (relative to the
B-tone, 側鼓 strike, ``b_ratio`` above the A-tone) and ``common`` (excited by any
stroke). A set whose B-tones stand on its tuning gives ``b_steps``, a table by
pitch name of how many 律 the bell's B-tone lies above its A-tone (4: a major
third, 3: a minor third, in whatever tuning the set is played in: 黃鍾's B is
姑洗 itself, 81/64 in 三分損益, not a just 5/4); a bell measured as a plain
ratio goes in ``b_ratios``; ``b_ratio`` is the interval of every bell neither
table names. :func:`for_pitch` looks the bell up. The stroke drives its own
family at full level and the other at ``cross_db`` (docs/sources.md A1.3: the
two tones of a two-tone bell are separate mode families; traces of the other
persist). A chime or single-tone instrument has only ``A`` and ``common``
modes and any articulation strikes them.

Decay: the lowest mode rings ``t60_s`` at ``t60_ref_hz`` and scales with pitch
as ``(t60_ref_hz / hz) ** t60_pitch_exponent`` (big bells ring longer); a mode
at ``r`` times the A-tone rings ``r ** -t60_ratio_exponent`` as long (higher modes
die first; docs/sources.md A1.4, A2), times its own ``t60_scale``.

A short decaying noise burst (``strike_noise_db``, ``strike_noise_s``), band-
passed above the A-tone, gives the metallic or stony click of the mallet.

No two strokes alike (``[params.scatter]``, optional): each stroke's force scatters
normally about the note's velocity (``force_db``), moving its level and, through
``brightness``, its upper modes; and the mallet lands a little off the marked spot
(正鼓 or 側鼓), so each mode, whose nodal lines pass near or far from where it lands,
is excited a little more or less: each partial's level scatters normally by
``strike_db`` (the other family's too, so how much of the other tone a stroke wakes
varies). Each drawn from the stroke's generator.

Bell sets (``bells``): ``ideal`` sounds every tone on the tuning; ``zeng`` moves
each tone of each bell by the deviations Braun measured on the Marquis Yi of
Zeng bells (``[params.zeng]``: the mean deviation from equal temperament of the
tone's pitch class, less the mean of all classes, plus the bell's own seeded
scatter with the measured spread). An instrument without ``[params.zeng]``
sounds ideal under either choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.music.tuning import LU, Tuning, canonical_name, parse_name
from soundscape.sound.synth._common import (
    bandpass,
    block_after,
    damped_partials,
    db_to_gain,
    frames_for,
    infrasound_highpass,
    noise_burst,
    ring_frames,
    sosfilt,
)
from soundscape.sound.synth.params import ParamError

__all__ = ["BELL_SETS", "INFRASOUND_FREE", "for_pitch", "mode_table", "prepare", "render",
           "side_bell", "tone_cents", "validate"]

#: Notes leave ``render`` high-passed at 20 Hz (``render_note`` need not do it again): the
#: filter runs on the stroke's first second, the partials after it come as it passes them.
INFRASOUND_FREE = True

#: The bell-set choices: every tone on the tuning, or scattered as the Zeng bells measure.
BELL_SETS = ("ideal", "zeng")
#: Western pitch classes, the keys of Braun's table of deviations.
_CLASSES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")


def validate(params: Mapping[str, Any]) -> None:
    """``zeng.deviation_cents`` holds no key but the twelve pitch classes (the schema requires
    each of them; their mean is the reference, so another key would move it)."""
    extra = sorted(set(params.get("zeng", {}).get("deviation_cents", {})) - set(_CLASSES))
    if extra:
        raise ParamError(f"zeng.deviation_cents.{extra[0]}",
                         f"is not a pitch class; accepted: {', '.join(_CLASSES)}")


def prepare(params: Mapping[str, Any]) -> dict[str, Any]:
    """Key ``b_ratios`` and ``b_steps`` by canonical pitch name (``清黄钟`` → ``清黃鍾``)."""
    out = dict(params)
    for key, kind in (("b_ratios", float), ("b_steps", int)):
        if key in params:
            out[key] = {canonical_name(name): kind(value) for name, value in params[key].items()}
    return out


def for_pitch(params: Mapping[str, Any], pitch_name: str, *, tuning: Tuning,
              bells: str = "ideal") -> Mapping[str, Any]:
    """The parameters of the bell that sounds ``pitch_name``: its own B interval and tones.

    Parameters
    ----------
    params : mapping
        Prepared ``[params]`` of a modal instrument.
    pitch_name : str
        The canonical 律 name of the note (``清黃鍾``).
    tuning : Tuning
        The tuning the set is played in: a ``b_steps`` bell's B-tone is the 律
        that many steps up in it.
    bells : str
        One of :data:`BELL_SETS`.

    Returns
    -------
    mapping
        ``params`` itself, or a copy with the bell's ``b_ratio`` (B-tone / A-tone) and
        ``detune`` (its A-tone / the note's pitch).
    """
    b_ratio, b_name = params.get("b_ratio", 1.0), pitch_name
    if pitch_name in params.get("b_ratios", {}):
        b_ratio = params["b_ratios"][pitch_name]
    elif pitch_name in params.get("b_steps", {}):
        a_tone = tuning.pitch(pitch_name)
        b_tone = tuning.step(a_tone, params["b_steps"][pitch_name])
        b_ratio, b_name = b_tone.hz / a_tone.hz, b_tone.name
    if bells == "ideal" or "zeng" not in params:
        return params if b_ratio == params.get("b_ratio") else {**params, "b_ratio": b_ratio}
    a_cents = tone_cents(params["zeng"], pitch_name, bell=pitch_name, tone="A")
    b_cents = tone_cents(params["zeng"], b_name, bell=pitch_name, tone="B")
    return {**params, "b_ratio": b_ratio * 2.0 ** ((b_cents - a_cents) / 1200.0),
            "detune": 2.0 ** (a_cents / 1200.0)}


def side_bell(params: Mapping[str, Any], pitch_name: str, *, tuning: Tuning) -> str | None:
    """The bell of a ``b_steps`` set whose B-tone is ``pitch_name`` (its canonical 律 name),
    the lowest if two have it; None if none has."""
    for bell, steps in params.get("b_steps", {}).items():
        if tuning.step(tuning.pitch(bell), steps).name == pitch_name:
            return bell
    return None


def tone_cents(zeng: Mapping[str, Any], pitch_name: str, *, bell: str, tone: str) -> float:
    """How far (cents) a ``zeng`` set's bell sounds a tone from the tuning's pitch.

    Parameters
    ----------
    zeng : mapping
        ``[params.zeng]``: ``deviation_cents`` by Western pitch class (Braun's
        means against equal temperament), ``c_is`` (the 律 that is C in that set),
        ``scatter_cents`` (the spread of single bells about their class mean) and
        ``seed``.
    pitch_name : str
        The canonical 律 name of the tone.
    bell : str
        The canonical 律 name of the bell's A-tone (which bell it is).
    tone : str
        ``A`` or ``B``: each tone of each bell has its own scatter.

    Returns
    -------
    float, cents
        The class mean less the mean over all classes, plus the bell's own scatter
        (normal, clipped at ±2 spreads; the same for the same bell, tone and seed).
    """
    place = (LU.index(parse_name(pitch_name)[0]) - LU.index(zeng["c_is"])) % 12
    deviations = zeng["deviation_cents"]
    mean = sum(deviations.values()) / len(deviations)
    lu, octave = parse_name(bell)
    rng = np.random.default_rng([int(zeng["seed"]), LU.index(lu) + 12 * octave + 120,
                                 "AB".index(tone)])
    scatter = float(np.clip(rng.standard_normal(), -2.0, 2.0)) * zeng["scatter_cents"]
    return deviations[_CLASSES[place]] - mean + scatter


def mode_table(params: Mapping[str, Any], *, hz: float,
               articulation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frequencies (Hz), relative amplitudes and T60s (s) of the modes a stroke excites."""
    stroke = "B" if articulation == "B" else "A"
    cross = db_to_gain(params.get("cross_db", -20.0))
    b_ratio = params.get("b_ratio", 1.0)
    hz = hz * params.get("detune", 1.0)
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
    force = velocity
    scatter = params.get("scatter")
    if scatter is not None:
        force = min(1.0, velocity * float(db_to_gain(rng.normal(0.0, scatter["force_db"]))))
        amps = amps * db_to_gain(rng.normal(0.0, scatter["strike_db"], amps.size))
    amps = amps * force ** (params.get("brightness", 0.0) * np.maximum(np.log2(freqs / hz), 0))
    noise_gain = db_to_gain(params["strike_noise_db"])
    # Sum of amplitudes bounds the peak: at velocity 1 the stroke never exceeds 1 (the
    # scatter may lift a partial over its file level: render_note keeps the peak ≤ 1).
    scale = force / (float(np.sum(db_to_gain(_levels(params)))) + noise_gain)
    frames = frames_for(max(duration, 1.5 * float(np.max(t60s))), sample_rate)
    # The 20 Hz high-pass every note gets, here: on the stroke's onset (the click and the
    # high-pass's own ring from it), then the partials as it passes them (``through``).
    clicking = min(frames, frames_for(1.5 * params["strike_noise_s"], sample_rate))
    highpass = infrasound_highpass(sample_rate)
    switch = block_after(clicking + ring_frames(highpass))
    out = damped_partials(freqs, amps * scale, t60s, frames=frames, sample_rate=sample_rate,
                          through=(highpass, switch) if switch < frames else None)
    click = noise_burst(rng, frames=frames, decay_s=params["strike_noise_s"],
                        sample_rate=sample_rate)
    out[:click.size] += bandpass(click, 2.0 * hz, 16.0 * hz, sample_rate) \
        * (noise_gain * scale * force)
    out[:switch] = sosfilt(highpass, out[:switch])
    return out


def _levels(params: Mapping[str, Any]) -> np.ndarray:
    return np.array([row["amp_db"] for row in params["partials"]])
