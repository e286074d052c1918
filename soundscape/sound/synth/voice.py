"""Sung and called voice by formant synthesis.

The glottal source is a harmonic series falling ``tilt_db_per_octave``; each
vowel shapes it with five formants (frequency, level, bandwidth; the Csound
tenor table, acoustics.md §6.1) as a sum of resonance curves evaluated at the
harmonics. A sung character (``lyric``) is read in modern Mandarin with pypinyin
(the Zhou pronunciation is not recoverable): its final gives a vowel path, e.g.
``yao`` → i, a, o; its initial, if a fricative, affricate or aspirate, a short
noise before the vowel. The pitch has slow vibrato (``vibrato_hz`` about 3.5 Hz
as in Peking opera, §6.3), a little jitter and shimmer.

Articulations: ``sing`` (legato, gentle attack) and ``call`` (a single shouted
pitch: brighter source, quick attack, a scoop up into the pitch).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.sound.synth._common import (
    attack_release,
    bandpass,
    db_to_gain,
    frames_for,
    harmonic_tones,
    noise_burst,
    number,
    smooth_noise,
)
from soundscape.sound.synth.params import ParamError

__all__ = ["render", "validate", "vowel_path"]

VOWELS = ("a", "e", "i", "o", "u")
_NOISY_INITIALS = ("zh", "ch", "sh", "z", "c", "s", "j", "q", "x", "f", "h", "p", "t", "k")


def validate(params: Mapping[str, Any]) -> None:
    """Check the ``[params]`` of a voice; raise ParamError naming the key."""
    for vowel in VOWELS:
        rows = params.get("formants", {}).get(vowel)
        if not isinstance(rows, list) or not rows or not all(
                isinstance(r, list) and len(r) == 3 and all(isinstance(v, int | float) for v in r)
                and r[0] > 0 and r[2] > 0 and r[1] <= 0 for r in rows):
            raise ParamError(f"formants.{vowel}", f"= {rows!r} must be a list of "
                             "[Hz > 0, level dB ≤ 0, bandwidth Hz > 0]")
    number(params, "harmonics", low=4, high=200)
    for key, high in (("tilt_db_per_octave", 40.0), ("call_tilt_db_per_octave", 40.0),
                      ("vibrato_cents", 100.0), ("jitter_cents", 50.0), ("shimmer_db", 12.0),
                      ("call_scoop_cents", 400.0)):
        number(params, key, low=0.0, high=high)
    for key in ("vibrato_hz", "attack_s", "release_s", "call_attack_s", "consonant_s"):
        number(params, key, low=0.0001, high=20.0)
    number(params, "consonant_db", low=-120.0, high=0.0)


@functools.cache
def _pinyin(character: str) -> tuple[str, str]:
    """Initial and final (no tone) of one character in modern Mandarin."""
    from pypinyin import Style, pinyin

    initial = pinyin(character, style=Style.INITIALS, strict=False)[0][0]
    final = pinyin(character, style=Style.FINALS, strict=False)[0][0]
    return initial, final


def vowel_path(lyric: str | None) -> tuple[str, tuple[str, ...]]:
    """The initial consonant and the vowels (from ``VOWELS``) a character is sung on."""
    if not lyric:
        return "", ("a",)
    initial, final = _pinyin(lyric[0])
    final = final.replace("v", "ü")
    if final.endswith("ng"):
        final = final[:-2]
    elif final.endswith("n") and len(final) > 1:
        final = final[:-1]
        if final in ("ia", "üa"):  # ian, üan are sung [jɛn]
            final = final[0] + "e"
    final = final.replace("ü", "i").replace("r", "")
    if final.endswith("ao"):
        final = final[:-1] + "u"  # ao ends on a rounded u-like glide
    path = tuple(dict.fromkeys(ch for ch in final if ch in VOWELS))
    return initial, path or ("e",)


def _vowel_spectrum(params: Mapping[str, Any], vowel: str, f0: float, tilt: float) -> np.ndarray:
    k = np.arange(1, int(params["harmonics"]) + 1, dtype=float)
    freqs = k * f0
    envelope = np.zeros_like(freqs)
    for centre, level, width in params["formants"][vowel]:
        envelope += db_to_gain(level) / (1.0 + ((freqs - centre) / (width / 2.0)) ** 2)
    source = db_to_gain(-tilt * np.log2(k))
    return envelope * source


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One sung character or one call, held ``duration`` seconds, then released.

    Parameters
    ----------
    hz : float > 0, Hz
    velocity : float in (0, 1]
    lyric : str or None
        The character sung (its first character is used); None sings 'a'.
    """
    calling = articulation == "call"
    initial, path = vowel_path(lyric)
    frames = frames_for(duration + params["release_s"], sample_rate)
    t = np.arange(frames) / sample_rate
    cents = params["vibrato_cents"] * np.sin(2.0 * np.pi * params["vibrato_hz"] * t) \
        + params["jitter_cents"] * smooth_noise(rng, frames=frames, rate_hz=30.0,
                                                sample_rate=sample_rate)
    if calling:
        cents = cents - params["call_scoop_cents"] * np.exp(-t / params["call_attack_s"])
    f0 = hz * 2.0 ** (cents / 1200.0)
    tilt = params["call_tilt_db_per_octave" if calling else "tilt_db_per_octave"]
    spectra = [_vowel_spectrum(params, v, hz, tilt) for v in path]
    # Harmonics 80 dB below the strongest add nothing audible: leave them out (speed).
    strong = np.flatnonzero(np.max(spectra, axis=0) > 1e-4 * np.max(spectra))
    spectra = [s[:strong[-1] + 1] for s in spectra]
    tones = harmonic_tones(f0, spectra, sample_rate=sample_rate)
    voice = _blend(tones, frames, duration, sample_rate)
    wander = np.clip(smooth_noise(rng, frames=frames, rate_hz=20.0, sample_rate=sample_rate),
                     -3.0, 3.0)
    shimmer = db_to_gain(params["shimmer_db"] * wander / 3.0)
    attack = params["call_attack_s" if calling else "attack_s"]
    envelope = attack_release(frames, attack_s=attack, release_s=params["release_s"],
                              hold_s=duration, sample_rate=sample_rate)
    bound = max(float(np.sum(s)) for s in spectra) * float(db_to_gain(params["shimmer_db"]))
    out = voice * shimmer * envelope / bound
    if initial.startswith(_NOISY_INITIALS) and not calling:
        out = _with_consonant(params, out, rng, sample_rate)
    return velocity * out


def _blend(tones: list[np.ndarray], frames: int, duration: float,
           sample_rate: int) -> np.ndarray:
    """Glide from vowel to vowel: equal shares of the held part, 60 ms crossfades."""
    if len(tones) == 1:
        return tones[0]
    t = np.arange(frames) / sample_rate
    bounds = np.linspace(0.0, duration, len(tones) + 1)[1:-1]
    weights = np.zeros((len(tones), frames))
    position = np.zeros(frames)
    for edge in bounds:
        position += np.clip((t - edge) / 0.06 + 0.5, 0.0, 1.0)
    for i in range(len(tones)):
        weights[i] = np.clip(1.0 - np.abs(position - i), 0.0, 1.0)
    return np.sum(weights * np.array(tones), axis=0)


def _with_consonant(params: Mapping[str, Any], voice: np.ndarray, rng: np.random.Generator,
                    sample_rate: int) -> np.ndarray:
    """Prefix a hiss (the consonant) and delay the vowel by it."""
    hiss = noise_burst(rng, frames=frames_for(3.0 * params["consonant_s"], sample_rate),
                       decay_s=3.0 * params["consonant_s"], sample_rate=sample_rate)
    hiss = bandpass(hiss, 2500.0, 8000.0, sample_rate) * db_to_gain(params["consonant_db"])
    lead = frames_for(params["consonant_s"], sample_rate)
    out = np.zeros(voice.size + lead)
    out[:hiss.size] += hiss
    out[lead:] += voice
    return out
