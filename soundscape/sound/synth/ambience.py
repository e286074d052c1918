"""The place: long beds of air, wind in the trees, birds, crickets, distant life; torches.

A note is one *segment* of a bed, ``duration`` seconds long, for the hour its
articulation names (``morning``, ``day``, ``evening``, ``night``) or a ``torch``
(a burning torch, a point source). Layers, each with its level in dB against the
others (``-120`` leaves it out):

- air: noise low-passed to ``wind_band`` Hz, swelling with slow gusts
  (``gust_rate_hz``, ``gust_depth``: a smooth random walk, a few a minute);
- leaves: the trees' rustle, band ``leaves_band`` Hz, following the gusts more
  steeply (leaves only stir when the air moves) with a quick flutter;
- birds: ``birds_per_min`` calls, each a few syllables of a frequency-swept
  whistle in ``bird_band`` Hz (a sparse, seeded scatter; distant, so soft);
- life: far-off activity, a murmur in 150–1200 Hz swelling slowly, and
  ``knocks_per_min`` distant wooden knocks;
- crickets: ``crickets`` singers, each with its own carrier in ``cricket_band``
  Hz, chirping ``chirps_per_s`` times a second in chirps of ``pulses`` pulses at
  ``pulse_hz`` (field crickets: a 4–5 kHz carrier, pulses of ~30/s grouped in
  chirps; chirp rate rises with warmth, Dolbear 1897);
- flame: a torch's roar (noise 80–1000 Hz flickering at ~10 Hz) and its
  ``crackle_per_s`` pops, heavy-tailed in level (a few loud ones, many small).

**Segment contract** (for the sequencer): a segment is exactly ``duration``
seconds, fades in over the articulation's ``fade_s`` with sin(½π t/F) and out
with cos, equal-power shapes: placed ``duration − fade_s`` apart, consecutive
segments overlap by ``fade_s`` and, being independent noise, sum to constant
power (no dip, no click). A segment shorter than ``2 × fade_s`` fades over half
its length (then it joins others only with that overlap). Each
segment must get its own note key, or the render's note cache repeats it: the
render keys a model that takes ``performer`` (this one) by its source, so sources
never share a segment; within one source, give every segment event its own
``lyric`` tag (e.g. ``bed.ne.12``), which the model does not sing. Its randomness
comes only from ``rng``. Several sources placed round the listener are mutually
decorrelated, so the bed is diffuse.

Levels: each dense layer (air, leaves, life, crickets, flame) is scaled to RMS 1,
each sparse one (birds, knocks, crackle) so that its loudest event peaks at 1,
then by its ``*_db``; the segment's RMS is then ``velocity × 0.1`` (−20 dB under
full scale) before the fades, so the bed's RMS at 1 m is the instrument's
``loudness_db`` − 20 dB; the rare peaks over full scale are softened (tanh).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import signal

from soundscape.sound.synth._common import (
    bandpass,
    db_to_gain,
    frames_for,
    noise_burst,
    smooth_noise,
    upsample,
    working_rate,
)
from soundscape.sound.synth.params import ParamError

__all__ = ["RMS", "WORKING_HZ", "render", "validate"]

#: The segment's RMS at velocity 1, before its fades (−20 dBFS: room for gusts and pops).
RMS = 0.1
#: The rate the layers are made at (at least): every band lies under half of it (the
#: schema, data/models/ambience.toml, ends the bands at 7500 Hz).
WORKING_HZ = 16000
#: Layers of sparse events, scaled by their loudest event; the others by their RMS.
_SPARSE = ("bird_db", "knock_db", "crackle_db")

_BANDS = ("wind_band", "leaves_band", "bird_band", "cricket_band")


def validate(params: Mapping[str, Any]) -> None:
    """Each band's low end lies below its high end (the schema bounds both ends, in Hz)."""
    for name, row in params.items():
        for key in _BANDS:
            band = row.get(key) if isinstance(row, Mapping) else None
            if isinstance(band, list) and len(band) == 2 and all(
                    isinstance(v, int | float) for v in band) and band[0] >= band[1]:
                raise ParamError(f"{name}.{key}", f"= {band!r} must be [low, high] Hz with "
                                 "low < high")


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None, performer: str | None = None) -> np.ndarray:
    """One segment of ``duration`` seconds (``hz`` unused; ``lyric`` only tags it).

    ``performer`` (the source's id) is taken so that the render keys each source's
    notes apart: two bed sources never share a rendering. The sound itself comes from
    ``rng`` alone.
    """
    row = params[articulation]
    # every layer lies under 8 kHz (its bands): made at 16 kHz or more, then upsampled,
    # since a whole rite needs many minutes of bed
    rate, factor = working_rate(sample_rate, WORKING_HZ)
    frames = frames_for(duration, rate)
    layers = _layers(row, frames=frames, sample_rate=rate, rng=rng)
    out = np.zeros(frames)
    for key, layer in layers.items():
        scale = float(np.max(np.abs(layer)) if key in _SPARSE else np.sqrt(np.mean(layer**2)))
        if scale > 0:
            out += layer * (db_to_gain(row[key]) / scale)
    rms = float(np.sqrt(np.mean(out**2)))
    out *= velocity * RMS / rms if rms > 0 else 0.0
    out = upsample(out, factor)[:frames_for(duration, sample_rate)]
    out *= _fades(len(out), fade=min(frames_for(row["fade_s"], sample_rate), len(out) // 2))
    peak = float(np.max(np.abs(out)))
    # A loud crackle or a near bird may top full scale: soften only those peaks.
    return np.tanh(out) if peak > 1.0 else out


def _fades(frames: int, *, fade: int) -> np.ndarray:
    """Equal-power fades: sin in, cos out, each ``fade`` frames."""
    envelope = np.ones(frames)
    if fade == 0:
        return envelope
    ramp = np.sin(0.5 * np.pi * (np.arange(fade) + 0.5) / fade)
    envelope[:fade] = ramp
    envelope[frames - fade:] = ramp[::-1]
    return envelope


def _layers(row: Mapping[str, Any], *, frames: int, sample_rate: int,
            rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each audible layer of the articulation, at its own (arbitrary) scale."""
    makers = {"wind_db": _wind, "leaves_db": _leaves, "bird_db": _birds, "life_db": _life,
              "knock_db": _knocks, "cricket_db": _crickets, "flame_db": _flame,
              "crackle_db": _crackle}
    gusts = _gusts(row, frames=frames, sample_rate=sample_rate, rng=rng)
    return {key: make(row, frames=frames, sample_rate=sample_rate, rng=rng, gusts=gusts)
            for key, make in makers.items() if row[key] > -120.0}


def _gusts(row: Mapping[str, Any], *, frames: int, sample_rate: int,
           rng: np.random.Generator) -> np.ndarray:
    """The wind's strength: a smooth random walk, lognormal around 1."""
    walk = smooth_noise(rng, frames=frames, rate_hz=row["gust_rate_hz"], sample_rate=sample_rate)
    return np.exp(row["gust_depth"] * 0.5 * walk)


def _lowpassed_noise(rng: np.random.Generator, frames: int, band: list[float],
                     sample_rate: int) -> np.ndarray:
    # 24 dB an octave outside the band: the wind's rumble must not reach below 20 Hz
    # (a 12 dB skirt left the whole mix's energy under 20 Hz only 38 dB down)
    sos = signal.butter(4, band, btype="bandpass", fs=sample_rate, output="sos")
    return signal.sosfilt(sos, rng.standard_normal(frames))


def _wind(row, *, frames, sample_rate, rng, gusts):
    return _lowpassed_noise(rng, frames, row["wind_band"], sample_rate) * gusts


def _leaves(row, *, frames, sample_rate, rng, gusts):
    flutter = 1.0 + 0.3 * smooth_noise(rng, frames=frames, rate_hz=8.0, sample_rate=sample_rate)
    return _lowpassed_noise(rng, frames, row["leaves_band"], sample_rate) * gusts**2 * flutter


def _birds(row, *, frames, sample_rate, rng, gusts):
    out = np.zeros(frames)
    seconds = frames / sample_rate
    low, high = row["bird_band"]
    for start in rng.uniform(0.0, seconds, rng.poisson(row["birds_per_min"] * seconds / 60)):
        call = _bird_call(rng, low=low, high=high, sample_rate=sample_rate)
        at = round(start * sample_rate)
        out[at:at + call.size] += call[:frames - at] * rng.uniform(0.2, 1.0)
    return out


def _bird_call(rng: np.random.Generator, *, low: float, high: float,
               sample_rate: int) -> np.ndarray:
    """A call of 1–6 syllables: whistles swept up or down, 40–150 ms, with gaps."""
    pieces = []
    centre = np.exp(rng.uniform(np.log(low), np.log(high)))
    for _ in range(int(rng.integers(1, 7))):
        length = rng.uniform(0.04, 0.15)
        n = frames_for(length, sample_rate)
        t = np.arange(n) / sample_rate
        sweep = centre * (1.0 + rng.uniform(-0.35, 0.35) * t / length)
        phase = 2.0 * np.pi * np.cumsum(np.minimum(sweep, 0.45 * sample_rate)) / sample_rate
        envelope = np.sin(np.pi * t / length) ** 2
        pieces += [envelope * (np.sin(phase) + 0.15 * np.sin(2.0 * phase)),
                   np.zeros(frames_for(rng.uniform(0.03, 0.12), sample_rate))]
    return np.concatenate(pieces)


def _life(row, *, frames, sample_rate, rng, gusts):
    swell = np.exp(0.8 * smooth_noise(rng, frames=frames, rate_hz=0.2, sample_rate=sample_rate))
    return _lowpassed_noise(rng, frames, [150.0, 1200.0], sample_rate) * swell


def _knocks(row, *, frames, sample_rate, rng, gusts):
    seconds = frames / sample_rate
    starts = rng.uniform(0.0, seconds, rng.poisson(row["knocks_per_min"] * seconds / 60))
    bursts = _bursts(rng, starts, rng.uniform(0.3, 1.0, starts.size), lambda: 0.04,
                     frames=frames, sample_rate=sample_rate)
    return bandpass(bursts, 300.0, 1500.0, sample_rate)  # far off: the highs are gone


def _crickets(row, *, frames, sample_rate, rng, gusts):
    """Each cricket: one chirp (its carrier under ``pulses`` sin² pulses), repeated at its
    own rate with a little jitter."""
    out = np.zeros(frames)
    low, high = row["cricket_band"]
    n = frames_for(row["pulses"] / row["pulse_hz"], sample_rate)
    t = np.arange(n) / sample_rate
    pulse = np.sin(np.pi * ((t * row["pulse_hz"]) % 1.0)) ** 2
    for _ in range(int(row["crickets"])):
        chirp = pulse * np.sin(2.0 * np.pi * rng.uniform(low, high) * t) * rng.uniform(0.3, 1.0)
        period = 1.0 / (row["chirps_per_s"] * rng.uniform(0.85, 1.15))
        starts = np.arange(rng.uniform(0.0, period), frames / sample_rate, period)
        starts += rng.uniform(-0.05, 0.05, starts.size) * period
        for at in np.round(np.clip(starts, 0.0, None) * sample_rate).astype(int):
            if at < frames:
                out[at:at + n] += chirp[:frames - at]
    return out


def _flame(row, *, frames, sample_rate, rng, gusts):
    flicker = np.exp(0.5 * smooth_noise(rng, frames=frames, rate_hz=10.0,
                                        sample_rate=sample_rate))
    return _lowpassed_noise(rng, frames, [80.0, 1000.0], sample_rate) * flicker * gusts


def _crackle(row, *, frames, sample_rate, rng, gusts):
    seconds = frames / sample_rate
    count = rng.poisson(row["crackle_per_s"] * seconds)
    sizes = np.minimum(rng.pareto(1.5, count) + 0.1, 20.0)  # heavy tail: a few loud pops
    bursts = _bursts(rng, rng.uniform(0.0, seconds, count), sizes,
                     lambda: rng.uniform(0.002, 0.01), frames=frames, sample_rate=sample_rate)
    return bandpass(bursts, 800.0, 10000.0, sample_rate)


def _bursts(rng: np.random.Generator, starts: np.ndarray, sizes: np.ndarray,
            decay: Callable[[], float],
            *, frames: int, sample_rate: int) -> np.ndarray:
    """Decaying noise bursts (T60 from ``decay()``) at ``starts`` (s), summed unfiltered
    (the caller filters the whole train once)."""
    out = np.zeros(frames)
    for start, size in zip(starts, sizes, strict=True):
        burst = noise_burst(rng, frames=frames, decay_s=decay(), sample_rate=sample_rate)
        at = round(start * sample_rate)
        out[at:at + burst.size] += burst[:frames - at] * size
    return out
