"""The court's living sources: one bird call, one cicada's song, one cricket's bout, one rustle.

A note is one *call* (a bird's phrase of syllables, a cicada's bout, a cricket's run of
chirps, a gust through one tree's leaves), ``duration`` seconds long at most, from the
articulation's species. The sequencer (``sequence.actions``) places the calls around
the court by the hour, each its own rendering (its own tag, so its own seed): no call
repeats another.

Kinds (``kind`` of the articulation):

- ``whistle``: ``syllables`` tonal syllables (fundamental in ``band`` Hz, swept by up to
  ``sweep`` of itself, ``harmonics_db`` above it), each ``syllable_s`` long, ``gap_s``
  apart; ``noise`` of each syllable's energy is noise in the same band (a harsh call:
  a magpie's chatter is mostly noise, a dove's coo none);
- ``buzz``: a cicada's song: noise band-passed to ``band`` and ringing at the tymbal's
  pulse rate ``pulse_hz`` (a comb of its harmonics), swelling in and fading out;
- ``chirps``: a cricket: chirps ``1 / chirps_per_s`` apart of ``pulses`` sin² pulses at
  ``pulse_hz`` on a carrier in ``band`` (with ``harmonics_db``), each chirp's carrier at
  its own phase (real chirps do not repeat a waveform);
- ``rustle``: leaves in a gust: noise in ``band`` tilted by ``tilt_db`` an octave, under a
  rise and fall.

Level: the loudest 50 ms of a call has RMS ``velocity × 10^(level_db/20)``, so the
instrument's ``loudness_db + level_db`` is the call's loudest short-term level at 1 m
(dB SPL). Every band lies under 18 kHz: the instrument's ``working_hz`` asks for a rate
that carries it (``synth.made_at``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.fft
from scipy.linalg.blas import idamax as _idamax

from soundscape.sound.synth._common import INFRASOUND_HZ, db_to_gain, frames_for
from soundscape.sound.synth.params import ParamError

__all__ = ["KINDS", "PEAK_WINDOW_S", "REPEATS", "block_rms", "complex_noise",
           "crossfade", "fft_length", "noise_blocks", "noise_shape", "render", "shaped_noise",
           "validate"]

#: Every call is its own rendering: the render keeps none (``SynthVoice.repeats``).
REPEATS = False
#: Noise is shaped with the 20 Hz high-pass's magnitude folded in (``_shape``); the
#: tonal calls start at 450 Hz under smooth envelopes.
INFRASOUND_FREE = True
#: Nothing is made above this (Hz): partials fade out as they near it, noise falls 190 dB
#: an octave past it, so the instrument's ``working_hz`` of 36 kHz holds (next to
#: nothing above 18 kHz: tests/sound/test_buses.py).
TOP_HZ = 16500.0
#: Envelopes are computed every this many samples and held (a step of < 0.2 %).
_STEP = 32
#: Under this fraction of the top, ``_under_top``'s 1/(1 + r^32) is 1.0 in float64
#: (r^32 < 2^-53), so a partial there needs no gain computed.
_EXACTLY_ONE = 0.3

#: The window of a call's loudest level (``level_db``), seconds.
PEAK_WINDOW_S = 0.05
#: The keys each kind needs (the schema, data/models/creatures.toml, marks them optional).
KINDS = {"whistle": ("harmonics_db", "syllables", "syllable_s", "gap_s", "sweep", "noise"),
         "buzz": ("pulse_hz", "tilt_db", "rise_s", "fall_s"),
         "chirps": ("harmonics_db", "pulse_hz", "pulses", "chirps_per_s"),
         "rustle": ("tilt_db", "rise_s", "fall_s")}


def validate(params: Mapping[str, Any]) -> None:
    """Each kind's own keys are given; each band's low end lies under its high end."""
    for name, row in params.items():
        if not isinstance(row, Mapping):
            continue
        for key in KINDS.get(row.get("kind", ""), ()):
            if key not in row:
                raise ParamError(f"{name}.{key}", f"is missing: a {row['kind']!r} call needs "
                                 f"{', '.join(KINDS[row['kind']])}")
        band = row.get("band")
        if isinstance(band, list) and len(band) == 2 and band[0] >= band[1]:
            raise ParamError(f"{name}.band", f"= {band!r} must be [low, high] Hz with "
                             "low < high")


def render(params: Mapping[str, Any], *, hz: float, velocity: float, duration: float,
           articulation: str, sample_rate: int, rng: np.random.Generator,
           lyric: str | None = None) -> np.ndarray:
    """One call of at most ``duration`` seconds (``hz`` unused; ``lyric`` only tags it)."""
    row = params[articulation]
    frames = frames_for(duration, sample_rate)
    maker = {"whistle": _whistle, "buzz": _buzz, "chirps": _chirps, "rustle": _rustle}
    out = maker[row["kind"]](row, frames=frames, sample_rate=sample_rate, rng=rng)
    loudest = _loudest_rms(out, sample_rate)
    if loudest <= 0:
        return out
    scale = velocity * float(db_to_gain(row["level_db"])) / loudest
    # the peak after scaling, found before it in one pass (BLAS idamax: |x|'s largest, no
    # |out| made, where max and min took two): rounding is monotone, so the largest
    # product is the product of the largest, to the bit
    peak = abs(float(out[_idamax(out)])) * scale
    out *= scale
    return out / peak if peak > 1.0 else out


def _loudest_rms(audio: np.ndarray, sample_rate: int) -> float:
    n = frames_for(PEAK_WINDOW_S, sample_rate)
    whole = len(audio) // n * n
    if whole == 0:
        return float(np.sqrt(np.mean(audio**2)))
    windows = audio[:whole].reshape(-1, n)
    # each window's sum of squares in one pass, no squares made (einsum)
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", windows, windows)) / n))


@functools.lru_cache(maxsize=64)
def _shape(band: tuple[float, float], tilt_db: float, n: int, sample_rate: int) -> np.ndarray:
    """Magnitude on an ``n``-point rfft grid: a 4th-order Butterworth band-pass's
    (24 dB an octave outside ``band``), tilted by ``tilt_db`` an octave from its low end,
    times the magnitude of ``render_note``'s 20 Hz high-pass (8th-order Butterworth:
    ``INFRASOUND_FREE``)."""
    f = np.fft.rfftfreq(n, 1.0 / sample_rate)
    low, high = band
    high = min(high, 0.45 * sample_rate)
    f[0] = 1e-3  # DC: every factor below is ~0 there
    gain = 1.0 / np.sqrt((1.0 + (low / f) ** 8) * (1.0 + (f / high) ** 8)
                         * (1.0 + (INFRASOUND_HZ / f) ** 16) * (1.0 + (f / TOP_HZ) ** 64))
    gain *= (np.maximum(f, low) / low) ** (tilt_db / (20 * np.log10(2)))
    return gain.astype(np.float32)


def fft_length(frames: int) -> int:
    """Smallest 2^k or 3·2^k ≥ ``frames``: few lengths, so the shapes are made once."""
    power = 1 << max(0, (frames - 1).bit_length())
    return 3 * power // 4 if 3 * power // 4 >= frames else power


def shaped_noise(rng: np.random.Generator, frames: int, band: tuple[float, float],
                 sample_rate: int, tilt_db: float = 0.0) -> np.ndarray:
    """Gaussian noise in ``band`` made in the frequency domain (cheaper than filtering
    white noise), in blocks of ``_CALL_BLOCK`` samples joined over a quarter of one
    (``noise_blocks``; its level is the blocks', ``block_rms``: the calls scale their own)."""
    block = min(_CALL_BLOCK, fft_length(frames))
    shape = _paired((float(band[0]), float(band[1])), block, int(sample_rate), float(tilt_db))
    blocks = noise_blocks(rng, shape, frames, block=block, overlap=block // 4)[0]
    return blocks.astype(np.float64).reshape(-1)[block // 4:block // 4 + frames]


#: Samples of a call's noise block (``shaped_noise``): transforms of a few thousand
#: points stay in the core's cache, a call's whole length (10⁵–10⁶ points) does not (3-4
#: times the time a point). The noise calls' bands (cicadas, rustles) start at 2.5 kHz:
#: a block's 12 Hz bins at 48 kHz draw them (every octave within 60 dB of the total
#: within 0.005 dB of one transform of the whole call's).
_CALL_BLOCK = 4096


def noise_blocks(rng: np.random.Generator, shapes: np.ndarray, frames: int, *, block: int,
                 overlap: int) -> np.ndarray:
    """Gaussian noise of each spectral shape, at least ``frames`` long (float32), as
    ``(rows, blocks, hop)``: row ``k`` of it laid end to end is shape ``k``'s noise from
    sample ``−overlap`` on (``hop = block − overlap``).

    Independent blocks of ``block`` samples (``complex_noise`` spectra, one shared by the
    rows, times the rows of ``shapes``: magnitudes on a ``block``-point rfft grid, each
    given twice, for a bin's real and imaginary parts, as ``_paired`` makes them; one
    batched inverse FFT), each joined to the next by a power-complementary crossfade of
    ``overlap`` samples (``crossfade``). Through a join the blocks are independent, so the
    variance stays that of one block (``block_rms``); the spectrum is the shape's, smeared
    by the blocks' window: a block must resolve the shape's steepest edge (the bed's
    20-40 Hz skirts need 16384 samples at 16 kHz). No block repeats another."""
    hop = block - overlap
    count = -(-(frames + overlap) // hop)
    bins = block // 2 + 1
    # the bytes ``complex_noise`` draws (``rng.bytes``), in a third of the time
    raw = rng.bit_generator.random_raw(-(-count * bins // 4))
    white = raw.view(np.int8)[:count * bins * 2].reshape(count, 2 * bins)
    spectra = np.empty((len(shapes), count, 2 * bins), dtype=np.float32)
    # the bytes cast once (exactly), not again for each row as they are read
    np.multiply(white.astype(np.float32), shapes[:, None, :], out=spectra)
    noise = scipy.fft.irfft(spectra.view(np.complex64), block, axis=-1, overwrite_x=True)
    up, down = crossfade(overlap)
    joins = noise[:, 1:, :overlap]
    joins *= up
    joins += noise[:, :-1, hop:] * down
    return noise[:, :, :hop]


@functools.lru_cache(maxsize=64)
def _paired(band: tuple[float, float], n: int, sample_rate: int, tilt_db: float) -> np.ndarray:
    """``noise_shape`` as ``noise_blocks`` takes it: one row, each value twice (a bin's real
    and imaginary parts)."""
    paired = np.repeat(noise_shape(band, n, sample_rate, tilt_db), 2)[None]
    paired.flags.writeable = False
    return paired


@functools.lru_cache(maxsize=8)
def crossfade(frames: int) -> tuple[np.ndarray, np.ndarray]:
    """A power-complementary fade in and out, ``sin(½π sin²(½π (j + ½)/frames))`` and it
    reversed (float32; their squares sum to 1): smooth at both ends, so the blocks' window
    smears a spectrum less than a sine's (its skirts fall faster)."""
    up = np.sin(0.5 * np.pi * np.sin(0.5 * np.pi * (np.arange(frames) + 0.5) / frames) ** 2)
    up, down = up.astype(np.float32), up[::-1].astype(np.float32)
    up.flags.writeable = down.flags.writeable = False
    return up, down


def block_rms(shape: np.ndarray, block: int) -> float:
    """The RMS of ``noise_blocks`` of ``shape`` (``complex_noise``'s bytes: variance 1/12
    of 256² a part) on ``block`` points (Parseval; the crossfades keep it)."""
    power = 2.0 * float(np.sum(shape.astype(np.float64) ** 2)) - float(shape[0]) ** 2
    return float(np.sqrt(power * 2 * _BYTE_VARIANCE)) / block


#: Variance of a uniform signed byte (``complex_noise``'s parts).
_BYTE_VARIANCE = (256.0**2 - 1.0) / 12.0


def complex_noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """White noise's spectrum on an ``n``-point rfft grid (complex64): real and imaginary
    parts uniform bytes (each time sample sums thousands of bins, so it is Gaussian all
    the same, and the spectrum flat), a tenth of the time of Gaussian draws."""
    return np.frombuffer(rng.bytes(2 * (n // 2 + 1)), dtype=np.int8).astype(
        np.float32).view(np.complex64)


def noise_shape(band, n: int, sample_rate: int, tilt_db: float = 0.0) -> np.ndarray:
    """``_shape`` of ``band`` (any sequence of two Hz), kept per band and length."""
    return _shape((float(band[0]), float(band[1])), float(tilt_db), n, int(sample_rate))


def _coarse(frames: int, sample_rate: int) -> np.ndarray:
    """The times (s) of an envelope's held values, one every ``_STEP`` samples."""
    return np.arange(0, frames, _STEP) / sample_rate


def _times_held(audio: np.ndarray, *held: np.ndarray) -> np.ndarray:
    """``audio`` times each envelope in turn, in place, each envelope given by its values
    held every ``_STEP`` samples: the products by blocks, without the envelopes at full
    length."""
    whole = len(audio) // _STEP * _STEP
    blocks, rest = audio[:whole].reshape(-1, _STEP), audio[whole:]
    for values in held:
        blocks *= values[:len(blocks), None]
        rest *= values[len(blocks):len(blocks) + 1]
    return audio


def _rise_fall(frames: int, sample_rate: int, rise_s: float, fall_s: float) -> np.ndarray:
    """A rise and a fall (sin²), held every ``_STEP`` samples (``_times_held``)."""
    t = _coarse(frames, sample_rate)
    rise = np.clip(t / max(rise_s, 1e-3), 0.0, 1.0)
    fall = np.clip((frames / sample_rate - t) / max(fall_s, 1e-3), 0.0, 1.0)
    return np.sin(0.5 * np.pi * rise) ** 2 * np.sin(0.5 * np.pi * fall) ** 2


def _under_top(hz, sample_rate: int):
    """A partial's gain at ``hz``: 1 well under ``TOP_HZ`` (and Nyquist), smoothly to 0
    near it (a sweep crossing it fades, it does not click off)."""
    top = min(TOP_HZ, 0.45 * sample_rate)
    if np.max(hz) < _EXACTLY_ONE * top:
        return 1.0  # what the formula gives there, to the last bit
    ratio = np.asarray(hz) / top
    for _ in range(5):  # the 32nd power by squaring: a tenth of the time of ``** 32``
        ratio = ratio * ratio
    return 1.0 / (1.0 + ratio)


def _swept_gain(track: np.ndarray, k: int, amp: float, sample_rate: int):
    """``amp * _under_top(track * k, sample_rate)`` to the bit, for rows of linear sweeps:
    each row's highest pitch is at one of its ends (rounding is monotone), so the test
    against ``_EXACTLY_ONE`` reads two columns, not the whole array; the roll-off is made in
    one array, in place (not a new one for each of its eight steps)."""
    top = min(TOP_HZ, 0.45 * sample_rate)
    if max(float(np.max(track[:, 0])), float(np.max(track[:, -1]))) * k \
            < _EXACTLY_ONE * top:
        return amp * 1.0  # what the formula gives there, to the last bit
    ratio = track * k
    ratio /= top
    for _ in range(5):  # the 32nd power by squaring, as ``_under_top``
        np.multiply(ratio, ratio, out=ratio)
    ratio += 1.0
    np.divide(1.0, ratio, out=ratio)
    ratio *= amp
    return ratio


def _whistle(row, *, frames, sample_rate, rng):
    low, high = row["band"]
    centre = np.exp(rng.uniform(np.log(low), np.log(high)))  # this bird's own pitch
    harmonics = db_to_gain(np.asarray(row["harmonics_db"], dtype=float))
    count = max(1, round(row["syllables"] * rng.uniform(0.6, 1.4)))
    # the syllables' draws first, in the order they were always drawn; then all of them
    # made at once, a row each (a call's few short syllables cost a few array passes)
    drawn = []
    at = 0
    for _ in range(count):
        length = row["syllable_s"] * rng.uniform(0.7, 1.3)
        n = frames_for(length, sample_rate)
        if at + n > frames:
            break
        start = centre * rng.uniform(0.9, 1.1)
        glide = rng.uniform(-1.0, 1.0) * row["sweep"] / (length * sample_rate)
        phase = rng.uniform(0, 2 * np.pi)
        white = complex_noise(rng, fft_length(n)) if row["noise"] > 0 else None
        drawn.append((at, n, length, start, glide, phase, white, rng.uniform(0.7, 1.0)))
        at += n + frames_for(row["gap_s"] * rng.uniform(0.6, 1.4), sample_rate)
    out = np.zeros(frames)
    if not drawn:
        return out
    ats, ns, lengths, starts, glides, phases, whites, levels = zip(*drawn, strict=True)
    widest = max(ns)
    inside = np.arange(widest) < np.array(ns)[:, None]
    pitch, glide = np.array(starts)[:, None], np.array(glides)[:, None]
    # the pitch sweeps linearly, start·(1 + glide·j) at sample j; the phase is its
    # running sum: e^{iφ} is the running product of a geometric sequence (no sines)
    track = pitch * (1.0 + glide * np.arange(widest))
    steps = pitch / sample_rate
    turn = np.cumprod(_phasor(steps * glide, widest, start=steps), axis=1)
    turn *= np.exp(1j * np.array(phases))[:, None]
    tone = _harmonics(turn, [_swept_gain(track, k, amp, sample_rate)
                             for k, amp in enumerate(harmonics, start=1)]) * inside
    periods = np.array(lengths)[:, None] * sample_rate
    envelope = _phasor(0.5 / periods, widest, start=0.25 / periods).imag ** 2  # sin²(π(j+½)/n)
    syllables = tone / _row_rms(tone, ns)
    if row["noise"] > 0:
        # the species' band (not this syllable's): one shape for all its calls
        hiss = _shaped_rows(whites, ns, widest, (0.6 * low, min(2.5 * high, 0.45 * sample_rate)),
                            sample_rate)
        hiss /= _row_rms(hiss, ns)
        syllables = np.sqrt(1 - row["noise"]) * syllables + np.sqrt(row["noise"]) * hiss
    for syllable, wave, at, n, level in zip(syllables, envelope, ats, ns, levels, strict=True):
        out[at:at + n] += syllable[:n] * wave[:n] * level
    return out


def _row_rms(rows: np.ndarray, lengths) -> np.ndarray:
    """Each row's RMS over its first ``lengths`` samples (the rest are zeros), ≥ 1e-12, as
    a column."""
    power = np.einsum("ij,ij->i", rows, rows) / np.asarray(lengths)
    return np.maximum(np.sqrt(power), 1e-12)[:, None]


def _shaped_rows(whites, lengths, width: int, band, sample_rate: int) -> np.ndarray:
    """``shaped_noise`` of each white spectrum (``complex_noise`` on ``fft_length`` of its
    length), a row each, zeros past its length: the rows of one grid inverse-transformed
    together."""
    out = np.zeros((len(whites), width))
    for n in {white.size for white in whites}:
        rows = [k for k, white in enumerate(whites) if white.size == n]
        grid = fft_length(lengths[rows[0]])
        shaped = np.stack([whites[k] for k in rows]) * noise_shape(band, grid, sample_rate)
        made = scipy.fft.irfft(shaped, grid, axis=1)
        for k, noise in zip(rows, made, strict=True):
            out[k, :lengths[k]] = noise[:lengths[k]]
    return out


#: Samples per block of ``_phasor``'s outer product.
_BLOCK = 64


def _phasor(cycles, n: int, *, start=0.0) -> np.ndarray:
    """``exp(2πi (start + cycles·j))`` for j < n (``cycles`` turns a sample); ``cycles`` and
    ``start`` columns: a row each. By blocks, ``z^(aB+b) = z^(aB)·z^b``: n/B + B complex
    exponentials and a product a sample, not a sine a sample."""
    blocks = np.arange(-(-n // _BLOCK)) * _BLOCK
    heads = np.exp(2j * np.pi * (start + blocks * cycles))
    inner = np.exp(2j * np.pi * cycles * np.arange(_BLOCK))
    whole = heads[..., :, None] * inner[..., None, :]
    return whole.reshape(*whole.shape[:-2], -1)[..., :n]


def _harmonics(turn: np.ndarray, gains: list) -> np.ndarray:
    """``Σ_k gains[k-1]·sin(k·θ)`` for ``turn = e^{iθ}`` (gains scalars or arrays):
    Horner's rule on the phasor, ``Im(z(g1 + z(g2 + …)))``: products, not sines."""
    acc = gains[-1] * turn
    for gain in reversed(gains[:-1]):  # in place: the same sums and products, no new arrays
        acc += gain
        acc *= turn
    return acc.imag


def _buzz(row, *, frames, sample_rate, rng):
    noise = shaped_noise(rng, frames, tuple(row["band"]), sample_rate, row["tilt_db"])
    # the tymbal's clicks: one period of a sharp pulse (cos⁴), repeated at this cicada's
    # own rate (a whole number of samples: tiling is a copy, not a cosine per sample)
    period = max(2, round(sample_rate / (row["pulse_hz"] * rng.uniform(0.9, 1.1))))
    click = np.cos(np.pi * (np.arange(period) / period - 0.5)) ** 4
    tymbal = np.resize(np.roll(click, int(rng.integers(period))), frames)
    return _times_held(noise * tymbal, _rise_fall(frames, sample_rate, row["rise_s"],
                                                  row["fall_s"]))


def _chirps(row, *, frames, sample_rate, rng):
    out = np.zeros(frames)
    low, high = row["band"]
    carrier = rng.uniform(low, high)
    harmonics = db_to_gain(np.asarray(row["harmonics_db"], dtype=float))
    n = frames_for(row["pulses"] / row["pulse_hz"], sample_rate)
    pulse = _pulses(n, float(row["pulse_hz"]), int(sample_rate))
    period = 1.0 / (row["chirps_per_s"] * rng.uniform(0.9, 1.1))
    start = rng.uniform(0.0, period)
    # the chirps' draws first (where, pitch, phase, level), then all chirps at once
    drawn = []
    while True:
        at = round(start * sample_rate)
        if at + n > frames:
            break
        f = carrier * rng.uniform(0.99, 1.01)
        drawn.append((at, f, rng.uniform(0, 1.0), rng.uniform(0.8, 1.0)))
        start += period * rng.uniform(0.95, 1.05)
    if not drawn:
        return out
    ats, fs, phases, levels = (np.array(v) for v in zip(*drawn, strict=True))
    turn = _phasor(fs[:, None] / sample_rate, n, start=phases[:, None])
    tone = _harmonics(turn, [amp * _under_top(k * fs[:, None], sample_rate)
                             for k, amp in enumerate(harmonics, start=1)])
    for at, chirp, level in zip(ats, tone, levels, strict=True):
        out[at:at + n] += pulse * chirp * level
    return out


@functools.lru_cache(maxsize=8)
def _pulses(n: int, pulse_hz: float, sample_rate: int) -> np.ndarray:
    """A chirp's ``n`` samples of sin² pulses at ``pulse_hz``: the same for every chirp of
    a species, made once."""
    t = np.arange(n) / sample_rate
    pulse = np.sin(np.pi * ((t * pulse_hz) % 1.0)) ** 2
    pulse.flags.writeable = False
    return pulse


def _rustle(row, *, frames, sample_rate, rng):
    noise = shaped_noise(rng, frames, tuple(row["band"]), sample_rate, row["tilt_db"])
    t = _coarse(frames, sample_rate)
    flutter = np.exp(0.4 * np.interp(t, np.linspace(0, t[-1], 40), rng.standard_normal(40)))
    return _times_held(noise, flutter, _rise_fall(frames, sample_rate, row["rise_s"],
                                                  row["fall_s"]))
