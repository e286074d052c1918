"""The place's bed: air, wind in the trees, distant life; torches.

A note is one *segment* of a bed, ``duration`` seconds long, for the hour its
articulation names (``morning``, ``day``, ``evening``, ``night``) or a ``torch``
(a burning torch, a point source). The bed is what is everywhere and nowhere; the
court's living sources (birds, cicadas, crickets, a gust in one tree) are calls of
their own, placed by the sequencer (``synth.creatures``). Layers, each with its
level in dB against the others (``-120`` leaves it out):

- air: noise in ``wind_band`` Hz, swelling with slow gusts (``gust_rate_hz``,
  ``gust_depth``: a smooth random walk, a few a minute);
- leaves: the trees' rustle, band ``leaves_band`` Hz, following the gusts more
  steeply (leaves only stir when the air moves) with a quick flutter;
- life: far-off activity, a murmur in 150–1200 Hz swelling slowly, and
  ``knocks_per_min`` distant wooden knocks;
- flame: a torch's roar (noise 80–1000 Hz flickering at ~10 Hz) and its
  ``crackle_per_s`` pops in ``crackle_band`` Hz, heavy-tailed in level (a few loud ones,
  many small).

The dense layers are Gaussian noise made in the frequency domain, in independent blocks
of ``_BLOCK_S`` seconds joined by power-complementary crossfades (``creatures.noise_blocks``:
transforms that stay in the core's cache; the bands' shapes computed once per hour), the
sparse ones (knocks, pops) each shaped on a short grid of its own (the burst and its
band's ring, ``_RING_S``), so a segment costs a few milliseconds, most of it its inverse
FFTs, and every segment can be its own.

**Segment contract** (for the sequencer): a segment is exactly ``duration``
seconds, fades in over the articulation's ``fade_s`` with sin(½π t/F) and out
with cos, equal-power shapes: placed ``duration − fade_s`` apart, consecutive
segments overlap by ``fade_s`` and, being independent noise, sum to constant
power (no dip, no click). A segment shorter than ``2 × fade_s`` fades over half
its length (then it joins others only with that overlap). Each segment must get
its own note key, or the render's note cache repeats it (the bed looped every
26 s when a source's segments of one hour shared one): give every segment event
its own ``lyric`` tag (e.g. ``bed.ne.day.12``), which the model does not sing. Its
randomness comes only from ``rng``. Several sources placed round the listener are
mutually decorrelated, so the bed is diffuse. Every segment is its own rendering, so
the render keeps none of them (``REPEATS = False``).

Levels: each dense layer (air, leaves, life, flame) is scaled to RMS 1, each sparse
one (knocks, crackle) so that its loudest event peaks at 1, then by its ``*_db``;
the segment's RMS is then ``velocity × 0.1`` (−20 dB under full scale) before the
fades, so the bed's RMS at 1 m is the instrument's ``loudness_db`` − 20 dB; the rare
peaks over full scale are softened (tanh).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import scipy.fft

from soundscape.sound.synth._common import (
    db_to_gain,
    frames_for,
    noise_burst,
    upsample,
    working_rate,
)
from soundscape.sound.synth.creatures import block_rms, fft_length, noise_blocks, noise_shape
from soundscape.sound.synth.params import ParamError

__all__ = ["REPEATS", "RMS", "WORKING_HZ", "least_hz", "render", "validate"]

#: Every note is its own rendering (a tagged segment, a torch's stretch): the render
#: keeps none (``SynthVoice.repeats``), so they take no room from notes that repeat.
REPEATS = False

#: The segment's RMS at velocity 1, before its fades (−20 dBFS: room for gusts and pops).
RMS = 0.1
#: The rate the layers are made at, at least: every band of instruments/ambience.toml lies
#: under 0.45 of it (the leaves end at 7 kHz). What the place holds above (leaves near at
#: hand, insects, birds' harmonics) are the creatures' calls, made at the full rate; at
#: 8 kHz the bed's cut at 4 kHz showed as a cliff under the calls. A file whose bands reach
#: higher has its notes made at the rate they need (``least_hz``): a torch's pops to 16 kHz
#: (instruments/torch.toml), or the leaves to 16 kHz, a 48 kHz render's own rate, at a
#: fifth more of the whole rite's render time (docs/instruments.md).
WORKING_HZ = 16000
#: A band's shape is cut at this share of the rate it is made at (``creatures._shape``).
_BAND_TOP = 0.45
#: Noise is shaped with the 20 Hz high-pass's magnitude folded in (``noise_shape``).
INFRASOUND_FREE = True
#: Envelopes are computed every this many samples and held (a step of < 0.5 %).
_STEP = 16
#: The layers that share an envelope (one inverse FFT for them): the air's.
_ROW = {"wind_db": "air", "life_db": "air"}
#: The dense layers' noise is made in blocks of at least ``_BLOCK_S`` seconds
#: (``noise_blocks``: their 0.5 Hz bins resolve the wind's skirt under 40 Hz and the 20 Hz
#: high-pass: the octave under 22 Hz within 0.01 dB of one transform of the whole
#: segment's; blocks of 1 s raised it 0.14 dB, of 0.25 s 2.4 dB), each joined to the next
#: over ``_OVERLAP_S`` (a quarter second); ``_blocking`` gives both in samples at a rate,
#: ``_block_for`` picks the length.
_BLOCK_S = 2.048
_OVERLAP_S = 0.256
#: pocketfft transforms the rows of a batch this many at a time (float32 SIMD lanes); a row
#: left over goes alone, at about twice the time a point (a segment's 2 rows in 5 blocks
#: of 32768 took 1.49 ms, in 4 of 38400 1.10 ms).
_LANES = 4
#: Leaves fall ~3 dB an octave above their low edge (a rustle's spectrum: EST).
_TILT = {"leaves_db": -3.0}
_LIFE_BAND = (150.0, 1200.0)
_FLAME_BAND = (80.0, 1000.0)
_KNOCK_BAND = (300.0, 1500.0)  # far off: the highs are gone
#: A burst's band rings this long either side of it (zero-phase) before it has fallen
#: 100 dB in energy (300-1500 Hz: -130 dB; 800-7000 Hz: -100 dB; a torch's 800-16000 Hz at
#: 48 kHz, shaped on the short grid, within -138 dB of the segment's; checked by the tests).
_RING_S = 0.04
#: The largest a knock or a pop is drawn (its size): a layer's loudest event peaks at its
#: size over this, times the layer's level, so the loudest pop of one segment is not the
#: loudest of every other (scaled each to one peak, they were within 3.7 dB).
_KNOCK_MOST, _POP_MOST = 1.0, 20.0

_BANDS = ("wind_band", "leaves_band", "crackle_band")


def validate(params: Mapping[str, Any]) -> None:
    """Each band's low end lies below its high end (the schema bounds both ends, in Hz), and
    a row that crackles says in what band."""
    for name, row in params.items():
        if isinstance(row, Mapping) and isinstance(row.get("crackle_db"), int | float) and \
                row["crackle_db"] > -120.0 and "crackle_band" not in row:
            raise ParamError(f"{name}.crackle_band", "is missing: a row whose crackle_db is "
                             "over -120 names its pops' band, [low, high] Hz")
        for key in _BANDS:
            band = row.get(key) if isinstance(row, Mapping) else None
            if isinstance(band, list) and len(band) == 2 and all(
                    isinstance(v, int | float) for v in band) and band[0] >= band[1]:
                raise ParamError(f"{name}.{key}", f"= {band!r} must be [low, high] Hz with "
                                 "low < high")


def least_hz(params: Mapping[str, Any]) -> float:
    """The rate the bed is made at, at least (``synth.made_at``): ``WORKING_HZ``, or more
    where a band of any articulation reaches over ``_BAND_TOP`` of it."""
    tops = [float(row[key][1]) for row in params.values() if isinstance(row, Mapping)
            for key in _BANDS if key in row]
    return max([float(WORKING_HZ)] + [top / _BAND_TOP for top in tops])


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None, performer: str | None = None) -> np.ndarray:
    """One segment of ``duration`` seconds (``hz`` unused; ``lyric`` only tags it).

    ``performer`` (the source's id) is taken so that the render keys each source's
    notes apart: two bed sources never share a rendering. The sound itself comes from
    ``rng`` alone.
    """
    row = params[articulation]
    # made at the rate its bands need (the render asks for its bus's rate: the same),
    # then upsampled if the caller asked for more
    rate, factor = working_rate(sample_rate, least_hz(params))
    frames = frames_for(duration, rate)
    # float32 to the end (half the memory a pass; its rounding, 1e-7, is -140 dB)
    out = _layers(row, frames=frames, sample_rate=rate, rng=rng)
    rms = float(np.sqrt(float(np.dot(out, out)) / len(out)))  # no squares made
    out *= np.float32(velocity * RMS / rms if rms > 0 else 0.0)
    out = upsample(out, factor)[:frames_for(duration, sample_rate)]
    _fade_ends(out, fade=min(frames_for(row["fade_s"], sample_rate), len(out) // 2))
    peak = max(float(out.max()), -float(out.min()))  # no |out| made: a pass fewer
    # A loud crackle may top full scale: soften only those peaks.
    return np.asarray(np.tanh(out) if peak > 1.0 else out, dtype=np.float64)


def _fades(frames: int, *, fade: int) -> np.ndarray:
    """Equal-power fades: sin in, cos out, each ``fade`` frames."""
    envelope = np.ones(frames)
    if fade == 0:
        return envelope
    ramp = _ramp(fade)
    envelope[:fade] = ramp
    envelope[frames - fade:] = ramp[::-1]
    return envelope


@functools.lru_cache(maxsize=8)
def _ramp(fade: int) -> np.ndarray:
    """The fade in, sin(½π (j + ½)/fade), made once per length."""
    ramp = np.sin(0.5 * np.pi * (np.arange(fade) + 0.5) / fade)
    ramp.flags.writeable = False
    return ramp


def _fade_ends(out: np.ndarray, *, fade: int) -> None:
    """``out *= _fades(…)`` in place, on its ends only (the middle's factor is 1)."""
    if fade:
        ramp = _ramp(fade)
        out[:fade] *= ramp
        out[len(out) - fade:] *= ramp[::-1]


def _layers(row: Mapping[str, Any], *, frames: int, sample_rate: int,
            rng: np.random.Generator) -> np.ndarray:
    """The audible layers of the articulation, summed at their levels.

    The dense layers (noise in a band under an envelope) are shaped in the frequency
    domain, in blocks of ``_block_for`` samples brought back with one batched inverse FFT
    (``noise_blocks``); they share one white spectrum a block: its bins are independent,
    so layers whose bands do not overlap are too. Each is scaled to RMS 1, by its
    ``*_db`` and by its envelope. The sparse ones (bursts) are shaped each on its own
    short grid (``_shaped_bursts``) and scaled so that their loudest peaks at its drawn
    size over the largest drawable (``_KNOCK_MOST``, ``_POP_MOST``), by their ``*_db``. The sum
    is float32."""
    dense = _dense(row)
    coarse = -(-frames // _STEP)  # the envelopes' held values
    least, overlap = _blocking(sample_rate)
    block = _block_for(coarse * _STEP, len({_ROW.get(key, key) for key, _, _ in dense}),
                       least, overlap)
    keys, shapes = _rows(dense, block, sample_rate)
    blocks = noise_blocks(rng, shapes, coarse * _STEP, block=block,
                          overlap=overlap) if keys else None
    sparse = []
    for key, make in (("knock_db", _knocks), ("crackle_db", _crackle)):
        if row[key] > -120.0:
            layer = make(row, rng, frames, sample_rate, _sparse_band(row, key))
            if layer is not None:  # most segments hear no knock: no layer
                sparse.append((key, layer))
    if blocks is not None:
        envelopes = _envelopes(row, frames=frames, sample_rate=sample_rate, rng=rng)
        out = _enveloped(blocks, [envelopes[key] for key in keys], frames=frames,
                         overlap=overlap)
    else:
        out = np.zeros(frames, dtype=np.float32)
    for key, (first, layer, top) in sparse:  # only the stretch the bursts fill
        scale = max(float(layer.max()), -float(layer.min()))
        if scale > 0:
            gain = db_to_gain(row[key]) * top / scale
            out[first:first + layer.size] += layer * np.float32(gain)
    return out


def _sparse_band(row: Mapping[str, Any], key: str) -> tuple[float, float]:
    """The band a sparse layer's bursts are shaped to: far-off knocks' fixed middle band, a
    torch's pops in the row's ``crackle_band``."""
    if key == "knock_db":
        return _KNOCK_BAND
    low, high = row["crackle_band"]
    return float(low), float(high)


def _dense(row: Mapping[str, Any]) -> tuple[tuple[str, tuple[float, float], float], ...]:
    """The dense layers the articulation sounds: (key, band, level dB)."""
    return tuple((key, (float(band[0]), float(band[1])), float(row[key]))
                 for key, band in (("wind_db", row["wind_band"]),
                                   ("leaves_db", row["leaves_band"]),
                                   ("life_db", _LIFE_BAND), ("flame_db", _FLAME_BAND))
                 if row[key] > -120.0)


def _blocking(sample_rate: int) -> tuple[int, int]:
    """``_BLOCK_S`` and ``_OVERLAP_S`` in samples at ``sample_rate``, whole held values (the
    block at least as long, a length pocketfft likes: 32 768 at 16 kHz, 98 304 at 48)."""
    return (_STEP * scipy.fft.next_fast_len(math.ceil(_BLOCK_S * sample_rate / _STEP),
                                            real=True),
            _STEP * round(_OVERLAP_S * sample_rate / _STEP))


@functools.lru_cache(maxsize=32)
def _block_for(frames: int, rows: int, least: int, overlap: int) -> int:
    """The block length for ``rows`` rows of noise ``frames`` long, blocks of at least
    ``least`` samples joined over ``overlap`` (``_blocking``): the most blocks whose
    transforms fill whole batches of ``_LANES`` (fewer, longer blocks when none do), each a
    length pocketfft likes (a multiple of ``_STEP`` times 2^a 3^b 5^c, so a hop is whole
    held values). A 8.19 s segment's two rows at 16 kHz: 4 blocks of 38400, not 5 of 32768
    (8 transforms, no row alone; 6 % fewer points)."""
    most = max(1, -(-(frames + overlap) // (least - overlap)))
    count = next((c for c in range(most, 0, -1) if rows * c % _LANES == 0), most)
    hop = -(-(frames + overlap) // count)
    return max(least, _STEP * scipy.fft.next_fast_len(-(-(hop + overlap) // _STEP),
                                                       real=True))


@functools.lru_cache(maxsize=32)
def _rows(dense: tuple, n: int, sample_rate: int) -> tuple[tuple[str, ...], np.ndarray]:
    """Each envelope's spectral shape on an ``n``-point grid (its key, and the shapes a
    row each): its bands, each at RMS 1 (the shape's power sets the noise's) and at its
    level. One row per envelope: the air and the far-off life swell together with the
    gusts (it is the wind that carries them), the leaves and a flame on their own. Made
    once per hour and rate."""
    rows: dict[str, np.ndarray] = {}
    for key, band, level_db in dense:
        shape = noise_shape(band, n, sample_rate, _TILT.get(key, 0.0))
        scaled = shape * np.float32(db_to_gain(level_db) / block_rms(shape, n))
        row_key = _ROW.get(key, key)
        rows[row_key] = rows[row_key] + scaled if row_key in rows else scaled
    # each value twice (a bin's real and imaginary parts), as ``noise_blocks`` takes them
    shapes = np.repeat(np.array(list(rows.values()), dtype=np.float32).reshape(
        len(rows), n // 2 + 1), 2, axis=1)
    shapes.flags.writeable = False  # shared by every segment of the hour
    return tuple(rows), shapes


def _enveloped(blocks: np.ndarray, held: list[np.ndarray], *, frames: int,
               overlap: int) -> np.ndarray:
    """``Σ_k noise_k × envelope_k``, ``frames`` long (float32): each row's noise as
    ``noise_blocks`` gives it (from sample ``−overlap``, in blocks of a hop), its
    envelope by its values held every ``_STEP`` samples (``held``), laid on the blocks'
    grid: the products straight from the blocks, no row laid end to end first."""
    _, count, hop = blocks.shape
    lead = overlap // _STEP
    grid = np.empty(count * hop // _STEP, dtype=np.float32)
    out = np.empty((count, hop), dtype=np.float32)
    for k, (noise, values) in enumerate(zip(blocks, held, strict=True)):
        grid[:lead] = values[0]  # before the segment (never heard)
        grid[lead:lead + values.size] = values
        grid[lead + values.size:] = values[-1]
        envelope = np.repeat(grid, _STEP).reshape(count, hop)
        if k == 0:
            np.multiply(noise, envelope, out=out)
        else:
            out += np.multiply(noise, envelope, out=envelope)
    return out.reshape(-1)[overlap:overlap + frames]


def _envelopes(row: Mapping[str, Any], *, frames: int, sample_rate: int,
               rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each dense layer's slow envelope, computed every ``_STEP`` samples and held.

    air (and far-off life): the gusts, a smooth random walk, lognormal around 1; leaves:
    the gusts squared (they only stir when the air moves) with a quick flutter; flame:
    its ~10 Hz flicker, fanned by the gusts."""
    coarse = -(-frames // _STEP)
    rate = sample_rate / _STEP

    def walk(rate_hz: float) -> np.ndarray:  # float32 from here on: exp a tenth the time
        # ``smooth_noise`` to the bit (``_between_knots``), its knots' places kept per length
        knots = max(2, math.ceil(coarse / rate * rate_hz) + 2)
        return _between_knots(rng.standard_normal(knots), *_knot_places(knots, coarse))

    gusts = np.exp(row["gust_depth"] * 0.5 * walk(row["gust_rate_hz"]))
    shapes = {"air": lambda: gusts,
              "leaves_db": lambda: gusts**2 * (1.0 + 0.3 * walk(8.0)),
              "flame_db": lambda: np.exp(0.5 * walk(10.0)) * gusts}
    present = {_ROW.get(key, key) for key in ("wind_db", "leaves_db", "life_db", "flame_db")
               if row[key] > -120.0}
    return {key: make() for key, make in shapes.items() if key in present}


@functools.lru_cache(maxsize=32)
def _knot_places(knots: int, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """Where ``smooth_noise``'s ``frames`` values, ``linspace(0, knots − 1, frames)``, lie
    among its ``knots`` at 0, 1, …: how many fall in each knot's segment (the last knot's
    own place counted in the segment before it) and each one's distance past its segment's
    knot. Made once per length."""
    places = np.linspace(0.0, knots - 1.0, frames)
    segment = np.minimum(places.astype(np.intp), knots - 2)
    counts, past = np.bincount(segment, minlength=knots - 1), places - segment
    counts.flags.writeable = past.flags.writeable = False
    return counts, past


def _between_knots(values: np.ndarray, counts: np.ndarray, past: np.ndarray) -> np.ndarray:
    """``np.interp(linspace(0, k − 1, n), arange(k), values)`` to the bit (float32), from
    ``_knot_places``: np.interp's own formula, ``slope · (x − j) + values[j]`` (its slopes
    ``values[j + 1] − values[j]``, the knots 1 apart), with each segment's slope and value
    laid out by ``np.repeat`` (the places are in order: no search, a third of its time),
    and the last place its knot's value, as np.interp gives it."""
    line = np.repeat(np.diff(values), counts)
    line *= past
    line += np.repeat(values[:-1], counts)
    line[-1] = values[-1]
    return line.astype(np.float32)


def _knocks(row, rng, frames, sample_rate, band):
    """Distant wooden knocks (far off: only their middle band reaches the court)."""
    seconds = frames / sample_rate
    starts = rng.uniform(0.0, seconds, rng.poisson(row["knocks_per_min"] * seconds / 60))
    sizes = rng.uniform(0.3, _KNOCK_MOST, starts.size)
    return _sized(_shaped_bursts(rng, starts, sizes, lambda: 0.04, band, frames=frames,
                                 sample_rate=sample_rate), sizes, _KNOCK_MOST)


def _crackle(row, rng, frames, sample_rate, band):
    """A torch's pops: heavy-tailed in size (a few loud ones, many small)."""
    seconds = frames / sample_rate
    count = rng.poisson(row["crackle_per_s"] * seconds)
    sizes = np.minimum(rng.pareto(1.5, count) + 0.1, _POP_MOST)
    return _sized(_shaped_bursts(rng, rng.uniform(0.0, seconds, count), sizes,
                                 lambda: rng.uniform(0.002, 0.01), band, frames=frames,
                                 sample_rate=sample_rate), sizes, _POP_MOST)


def _sized(shaped: tuple[int, np.ndarray] | None, sizes: np.ndarray,
           most: float) -> tuple[int, np.ndarray, float] | None:
    """``_shaped_bursts``' (first, sum) and how loud its loudest event is drawn: its size
    over ``most`` (None if there are none)."""
    return None if shaped is None else (*shaped, float(sizes.max()) / most)


def _shaped_bursts(rng: np.random.Generator, starts: np.ndarray, sizes: np.ndarray,
                   decay: Callable[[], float], band: tuple[float, float],
                   *, frames: int, sample_rate: int) -> tuple[int, np.ndarray] | None:
    """Decaying noise bursts (T60 from ``decay()``) at ``starts`` (s), each shaped to
    ``band`` on its own short grid (the burst and ``_RING_S`` of the band's ring either
    side: one batched FFT of a few thousand points, not the segment's length), summed
    (float32) over the stretch of the ``frames`` they fill: (its first sample, the sum);
    None if there are none (a knock's few thousand samples are all a segment adds, not
    passes over its length)."""
    bursts = []
    for start, size in zip(starts, sizes, strict=True):
        burst = noise_burst(rng, frames=frames, decay_s=decay(), sample_rate=sample_rate)
        at = round(start * sample_rate)
        if at < frames:
            bursts.append((at, (burst[:frames - at] * size).astype(np.float32)))
    if not bursts:
        return None
    ring = frames_for(_RING_S, sample_rate)
    m = fft_length(max(len(burst) for _, burst in bursts) + 2 * ring)
    grid = np.zeros((len(bursts), m), dtype=np.float32)
    for row, (_, burst) in zip(grid, bursts, strict=True):
        row[ring:ring + len(burst)] = burst
    # the band's zero-phase response on the short grid: its ring before the burst falls
    # in the ``ring`` samples ahead of it, its ring after in those behind
    shaped = scipy.fft.irfft(scipy.fft.rfft(grid, axis=1) * noise_shape(band, m, sample_rate),
                             m, axis=1)
    first = max(min(at for at, _ in bursts) - ring, 0)
    out = np.zeros(min(max(at for at, _ in bursts) - ring + m, frames) - first,
                   dtype=np.float32)
    for (at, _), burst in zip(bursts, shaped, strict=True):
        lo, hi = at - ring, at - ring + m
        out[max(lo, 0) - first:min(hi, frames) - first] += \
            burst[max(-lo, 0):m - max(hi - frames, 0)]
    return first, out
