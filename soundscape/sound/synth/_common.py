"""Small numpy building blocks shared by the synthesis models.

All functions are pure: arrays in, arrays out, sample rate and randomness passed
explicitly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, overload

import numpy as np
from scipy import signal
from scipy.linalg.blas import idamax as _idamax

from soundscape.sound.iir import sosfilt_rows

__all__ = ["INFRASOUND_HZ", "abs_peak", "attack_release", "bandpass", "bandpass_sos", "block_after",
           "cancel_dc", "damped_partials", "db_to_gain", "decay_envelope", "frames_for",
           "harmonic_levels", "harmonic_tones", "infrasound_highpass", "noise_burst",
           "ring_frames", "smooth_noise", "sosfilt", "sosfilt_spans", "steady_gains"]

#: Below this, sound is infrasound: every note is high-passed here.
INFRASOUND_HZ = 20.0

# A partial is cut once it has decayed by 90 dB (1.5 × its T60): far below audibility,
# and short partials then cost only their own length.
_CUT_T60S = 1.5
_LN1000 = math.log(1000.0)  # 60 dB of amplitude decay


@overload
def db_to_gain(level_db: float) -> float: ...
@overload
def db_to_gain(level_db: np.ndarray) -> np.ndarray: ...
def db_to_gain(level_db: float | np.ndarray) -> float | np.ndarray:
    """Amplitude gain of a level in dB (a number: Python's own power, the same value as
    numpy's for a tenth of the cost; models call this many times a note)."""
    if isinstance(level_db, (int, float)):
        return 10.0 ** (float(level_db) / 20.0)
    return 10.0 ** (np.asarray(level_db, dtype=float) / 20.0)


def abs_peak(x: np.ndarray) -> float:
    """``np.max(np.abs(x))`` of a non-empty signal, the same number: for finite float64 rows
    BLAS's ``idamax`` (one pass; numpy's abs, max and min took two or three, each slowed by
    its care for NaN). A signal with a NaN or an infinity (``x·x`` not finite) takes numpy's
    way, as before."""
    if x.dtype == np.float64 and x.ndim == 1 and x.flags.c_contiguous and x.size \
            and math.isfinite(float(np.dot(x, x))):
        return abs(float(x[_idamax(x)]))
    return float(np.max(np.abs(x)))


def frames_for(seconds: float, sample_rate: int) -> int:
    """Number of frames, at least 1, that cover ``seconds``."""
    return max(1, math.ceil(seconds * sample_rate))


def decay_envelope(frames: int, t60: float, sample_rate: int) -> np.ndarray:
    """Exponential decay from 1 that loses 60 dB in ``t60`` seconds (worked in place)."""
    out = np.multiply(-3.0, sample_times(frames, sample_rate))
    out /= t60
    return np.power(10.0, out, out=out)


def damped_partials(freqs: np.ndarray, amps: np.ndarray, t60s: np.ndarray, *, frames: int,
                    sample_rate: int, glide: float = 0.0, glide_s: float = 0.05,
                    through: tuple[np.ndarray, int] | None = None) -> np.ndarray:
    """Sum of exponentially decaying sines, each starting at phase 0.

    Parameters
    ----------
    freqs, amps, t60s : arrays of the same length (Hz, linear amplitude, seconds)
        One row per partial; partials at or above 0.45 × ``sample_rate`` are dropped.
    frames : int
        Output length.
    glide : float >= 0
        Relative pitch raise at the onset, decaying with time constant ``glide_s``
        seconds (a drum head stretched by a hard stroke); 0 for none.
    through : (sos, switch) or None
        From sample ``switch`` (``block_after``'s) on, the partials as the filter ``sos``
        passes them once its own ring from the onset is over: each partial times the
        filter's response at its pole (``steady_gains``). Without a glide only.
    """
    freqs, amps, t60s = (np.asarray(v, dtype=float) for v in (freqs, amps, t60s))
    keep = (freqs < 0.45 * sample_rate) & (amps != 0.0)
    freqs, amps, t60s = freqs[keep], amps[keep], t60s[keep]
    lengths = np.array([min(frames, frames_for(_CUT_T60S * t60, sample_rate)) for t60 in t60s],
                       dtype=int)
    if freqs.size == 0:
        return np.zeros(frames)
    if glide == 0.0:
        return _ringing(freqs, amps, t60s, lengths, frames, sample_rate, through)
    if through is not None:
        raise ValueError("damped_partials: through= is for partials without a glide")
    return _glided(freqs, amps, t60s, frames, sample_rate, glide, glide_s)


#: The phase (rad) a glide may still move a partial when it counts as over.
_GLIDE_RAD = 1e-6
#: Past this many of the glide's time constants e^(−t/τ) < 2^−54, so 1 − e^(−t/τ) is 1.0
#: to the bit: the clock is computed there without the exponential (the same samples).
_SETTLED_TAUS = 40.0
#: Partials under sample_rate / _SMOOTH are read off their warped clock by cubic
#: interpolation (error ≤ 0.0234 (2πf/rate)^4: under 3e-6 of their amplitude).
_SMOOTH = 64


def _glided(freqs: np.ndarray, amps: np.ndarray, t60s: np.ndarray, frames: int,
            sample_rate: int, glide: float, glide_s: float) -> np.ndarray:
    """The partials on the glide's clock ``u(t) = t + glide·glide_s·(1 − e^(−t/glide_s))``:
    each ``amp·e^(−u ln1000/T60)·sin(2π f u)`` (the stretched head runs its sound a little
    fast at first, decay and all). Low partials: their pole sum on a uniform grid of u,
    read at u(t) (cubic); the others sine by sine."""
    t = sample_times(frames, sample_rate)
    out = np.zeros(frames)
    smooth = freqs < sample_rate / _SMOOTH
    rough = ~smooth
    head = 0
    if np.any(smooth):
        # Once what is left of the glide moves no phase by _GLIDE_RAD, the clock runs a
        # constant lead behind: the same four weights for every sample from there.
        left = 2.0 * np.pi * float(freqs[smooth].max()) * glide * glide_s / _GLIDE_RAD
        head = min(frames, frames_for(max(1.0, math.log(max(left, 1.0))) * glide_s,
                                      sample_rate))
    # The clock is read only as far as the head and the sine-by-sine partials' lengths (it
    # is at least t, so each is cut within its own length on it): worked out that far
    cuts = [frames_for(_CUT_T60S * t60, sample_rate) for t60 in t60s[rough].tolist()]
    clock, at = _clock(t, min(frames, max([head, *cuts]) + 2), glide, glide_s, sample_rate)
    if head:
        lead = glide * glide_s * sample_rate  # the clock's lead once the glide is over
        size = frames + int(lead) + 3  # ≥ the last position read, and its three neighbours
        natural = np.array([min(size, frames_for(_CUT_T60S * t60, sample_rate))
                            for t60 in t60s[smooth]], dtype=int)  # the output cuts at frames
        grid = np.concatenate([[0.0], _ringing(freqs[smooth], amps[smooth], t60s[smooth],
                                               natural, size, sample_rate)])  # 0 before onset
        out[:head] = _cubic(grid, at[:head] + 1.0)
        if head < frames:
            k = int(lead)
            weights = _cubic_weights(np.array([lead - k]))
            term = np.empty(frames - head)
            for j, w in enumerate(weights):
                out[head:] += np.multiply(float(w[0]), grid[head + k + j:frames + k + j],
                                          out=term)
    if cuts and at.size < frames and at[-1] < max(cuts):  # (never: the clock is ahead of t)
        clock, at = _clock(t, frames, glide, glide_s, sample_rate)
    decay, phase = np.empty(frames), np.empty(frames)  # worked in place: no temporaries
    for freq, amp, t60, cut in zip(freqs[rough], amps[rough], t60s[rough], cuts, strict=True):
        n = int(np.searchsorted(at, cut))
        u = clock[:n]
        level, turn = np.exp(np.multiply(u, -_LN1000 / t60, out=decay[:n]), out=decay[:n]), \
            np.sin(np.multiply(u, 2.0 * np.pi * freq, out=phase[:n]), out=phase[:n])
        level *= turn
        level *= amp
        out[:n] += level
    return out


def _clock(t: np.ndarray, frames: int, glide: float, glide_s: float, sample_rate: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The glide's clock ``u = t + glide·glide_s·(1 − e^(−t/glide_s))`` (s) and ``u · rate``
    over the first ``frames`` samples, worked in place (the same values as the plain
    expression). Past _SETTLED_TAUS time constants 1 − e^(−t/τ) is 1.0 to the bit: there
    the clock is t plus the whole lead, without the exponential."""
    lead_s = glide * glide_s
    bent = min(frames, math.ceil(_SETTLED_TAUS * glide_s * sample_rate))
    clock = np.empty(frames)
    np.add(t[bent:frames], lead_s, out=clock[bent:])
    lag = clock[:bent]
    np.negative(t[:bent], out=lag)
    lag /= glide_s
    np.exp(lag, out=lag)
    np.subtract(1.0, lag, out=lag)
    lag *= lead_s
    lag += t[:bent]
    return clock, clock * sample_rate


def _cubic(samples: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``samples`` read at fractional positions ``at`` (1 ≤ at ≤ len − 3): four-point
    Lagrange interpolation (``_cubic_weights``' products and sums, in place)."""
    i = at.astype(int)
    x = at - i
    a, b, c = x + 1.0, x - 1.0, x - 2.0
    w = np.negative(x)  # w0 = −x·b·c / 6
    w *= b
    w *= c
    w /= 6.0
    first = i - 1
    out = samples.take(first)
    out *= w
    term = np.empty(x.size)
    np.multiply(a, b, out=w)  # w1 = a·b·c / 2
    w *= c
    w /= 2.0
    out += np.multiply(samples[1:].take(first, out=term), w, out=term)
    np.negative(a, out=w)  # w2 = −a·x·c / 2
    w *= x
    w *= c
    w /= 2.0
    out += np.multiply(samples[2:].take(first, out=term), w, out=term)
    np.multiply(a, x, out=w)  # w3 = a·x·b / 6
    w *= b
    w /= 6.0
    out += np.multiply(samples[3:].take(first, out=term), w, out=term)
    return out


def _cubic_weights(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """The four Lagrange weights of the points −1, 0, 1, 2 at fractions ``x`` in [0, 1)."""
    a, b, c = x + 1.0, x - 1.0, x - 2.0
    return -x * b * c / 6.0, a * b * c / 2.0, -a * x * c / 2.0, a * x * b / 6.0


#: Samples per row of ``_ringing``'s block sum (256-1024 measured fastest).
_BLOCK = 512
_PRODUCT = np.float32


def block_after(samples: int) -> int:
    """The first sample at or after ``samples`` where ``damped_partials`` may switch to
    ``through`` (its blocks' bounds)."""
    return -(-samples // _BLOCK) * _BLOCK


def steady_gains(sos: np.ndarray, poles: np.ndarray) -> np.ndarray:
    """The filter's complex response ``H(z)`` at ``poles``: what it does to a decaying sine
    ``Im(a z^m)`` once its own ring is over (``Im(a H(z) z^m)``; real coefficients)."""
    inverse = 1.0 / poles
    gains = np.ones(poles.shape, dtype=complex)
    for b0, b1, b2, _, a1, a2 in np.asarray(sos):
        gains *= (b0 + inverse * (b1 + inverse * b2)) / (1.0 + inverse * (a1 + inverse * a2))
    return gains


def _ringing(freqs: np.ndarray, amps: np.ndarray, t60s: np.ndarray, lengths: np.ndarray,
             frames: int, sample_rate: int,
             through: tuple[np.ndarray, int] | None = None) -> np.ndarray:
    """``Σ amp · r^m sin(m ω)`` over the partials, each cut after its ``lengths`` samples.

    ``r^m sin(m ω)`` is the imaginary part of ``z^m``, ``z = r e^{iω}``; with ``m = kB + j``,
    ``z^m = z^{kB} z^j``, so the sum for all samples is a matrix product: rows of each
    partial's value at the start of block ``k`` times its first ``B`` powers. Only the
    imaginary part is wanted, ``Re w · Im p + Im w · Re p``: one real product of twice the
    inner size, in float32 (6× faster than float64 here). Its rounding is relative to
    each block's own start values, which decay with the sound: ~1e-7 of what sounds at
    that moment, as fine as the float32 the notes are kept in. A partial takes part only
    in the blocks it fills (sorted longest first, the blocks that hold the same number of
    them go as one product): upper modes die long before the note ends. The blocks that
    hold a partial only in part take it on their own, in float64.
    """
    log_pole = -_LN1000 / (t60s * sample_rate) + 2j * np.pi * freqs / sample_rate
    blocks = -(-frames // _BLOCK)
    whole = np.minimum(lengths // _BLOCK * _BLOCK, frames // _BLOCK * _BLOCK)
    order = np.argsort(-whole, kind="stable")
    filled = whole[order] // _BLOCK  # sorted partial j fills blocks 0 … filled[j] − 1
    poles = np.exp(log_pole[order])
    powers = _powers(poles, _BLOCK)  # (partials, B): z^j
    starts = amps[order, None] * _powers(powers[:, -1] * poles, blocks + 1)  # amp z^{kB}
    if through is not None:  # from the switch's block on, as the filter passes them
        sos, switch = through
        if switch % _BLOCK:
            raise ValueError(f"damped_partials: switch {switch} is not a multiple of {_BLOCK}")
        starts[:, switch // _BLOCK:] *= steady_gains(sos, poles)[:, None]
    # Re w, Im w of each partial side by side against Im p, Re p: the first ``2 live``
    # columns and rows are the first ``live`` partials
    left = np.ascontiguousarray(starts.T).view(float).astype(_PRODUCT)
    right = np.empty((2 * len(poles), _BLOCK), dtype=_PRODUCT)
    right[0::2], right[1::2] = powers.imag, powers.real
    out = np.zeros((blocks, _BLOCK), dtype=_PRODUCT)
    count = len(poles)
    for live in range(count, 0, -1):  # the blocks where exactly ``live`` partials sound
        first = int(filled[live]) if live < count else 0
        last = int(filled[live - 1])
        if last > first:
            np.matmul(left[first:last, :2 * live], right[:2 * live], out=out[first:last])
    ring = out.ravel()[:frames].astype(float)
    for j, (k, n) in enumerate(zip(filled, lengths[order], strict=True)):
        start = int(k) * _BLOCK
        if n > start:
            ring[start:n] += (starts[j, k] * powers[j, :n - start]).imag
    return ring


def _powers(z: np.ndarray, count: int) -> np.ndarray:
    """``z[i] ** j`` for j < ``count``, rows by ``z``: by doubling (each a product of at most
    log2(count) factors: rounding ~1e-15), not a complex exp per sample (~90 ns each here)."""
    out = np.empty((z.size, count), dtype=complex)
    out[:, 0] = 1.0
    step, have = z.copy(), 1  # step = z ** have
    while have < count:
        more = min(have, count - have)
        np.multiply(out[:, :more], step[:, None], out=out[:, have:have + more])
        step, have = step * step, have + more
    return out


def noise_burst(rng: np.random.Generator, *, frames: int, decay_s: float,
                sample_rate: int) -> np.ndarray:
    """White noise in [-1, 1] under an exponential decay that loses 60 dB in ``decay_s``.

    Only the audible part is returned (at most ``frames`` long, 90 dB of decay), so
    that filters run on the burst and not on silence.
    """
    n = min(frames, frames_for(_CUT_T60S * decay_s, sample_rate))
    return rng.uniform(-1.0, 1.0, n) * decay_envelope(n, decay_s, sample_rate)


def cancel_dc(out: np.ndarray, *, contact_s: float, sample_rate: int) -> np.ndarray:
    """``out`` plus the push that set it ringing: a Hann pulse lasting the contact time
    whose area cancels the sound's own (its DC), in place.

    A struck body radiates its surface's acceleration, whose integral over a stroke
    is zero (it starts and ends at rest); decaying modes started at phase 0 leave an
    area over, which the striker's push (a short positive pulse) carries. Without it
    a stroke has a flat spectrum down to DC, and strokes pile up infrasound.
    """
    pulse = np.hanning(frames_for(contact_s, sample_rate) + 2)[1:-1][:out.size]
    out[:pulse.size] -= float(np.sum(out)) * pulse / float(np.sum(pulse))
    return out


def sosfilt(sos: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``scipy.signal.sosfilt(sos, x)`` of a 1-D signal, the same samples without its checks
    (``iir.sosfilt_rows``: ~0.1 ms a call, and a note makes several)."""
    return sosfilt_rows(sos, np.asarray(x, dtype=float)[None, :],
                        np.zeros((1, len(sos), 2)))[0][0]


def bandpass(x: np.ndarray, low_hz: float, high_hz: float, sample_rate: int,
             spans: tuple[np.ndarray, int] | None = None) -> np.ndarray:
    """Second-order Butterworth band-pass, clipped to the Nyquist range.

    ``spans`` (starts, width): ``x`` is zero outside ``[start, start + width)`` of each
    start (bursts on a long silence): filtered only there (``sosfilt_spans``)."""
    sos = _bandpass_sos(float(low_hz), float(high_hz), sample_rate)
    x = np.asarray(x)
    if x.ndim != 1 or x.dtype.kind != "f":
        return signal.sosfilt(sos, x)
    if spans is not None:
        return sosfilt_spans(sos, x, *spans)
    return sosfilt(sos, x)


#: A filter's ring counts as over once its slowest pole has decayed by this (−180 dB).
_RING_LEFT = 1e-9


def ring_frames(sos: np.ndarray, left: float = _RING_LEFT) -> int:
    """Samples after the last non-zero input until the filter's ring (its slowest pole's
    envelope) has decayed by ``left``."""
    a1, a2 = np.asarray(sos)[:, 4], np.asarray(sos)[:, 5]
    disc = a1 * a1 - 4.0 * a2  # z² + a1 z + a2: complex poles of radius √a2, else real
    radius = np.where(disc < 0.0, np.sqrt(np.abs(a2)),
                      0.5 * (np.abs(a1) + np.sqrt(np.maximum(disc, 0.0))))
    slowest = float(np.max(radius))
    if not slowest < 1.0:
        raise ValueError(f"filter poles of radius {slowest} >= 1 never stop ringing")
    return 1 if slowest <= left else math.ceil(math.log(left) / math.log(slowest))


def sosfilt_spans(sos: np.ndarray, x: np.ndarray, starts: np.ndarray, width: int
                  ) -> np.ndarray:
    """``sosfilt(sos, x)`` of an ``x`` that is zero outside ``[start, start + width)`` of each
    start: each run of overlapping stretches filtered from rest, on to where its ring has
    decayed by ``_RING_LEFT`` (``ring_frames``), silence elsewhere. The same samples to
    that ring's remainder (a walk's footfalls: its filters run on a third of it)."""
    out = np.zeros(x.size)
    reach = width + ring_frames(sos)
    begin, end = 0, 0  # the run being gathered: [begin, end)
    for start in np.sort(np.asarray(starts, dtype=int)).tolist():
        if start >= end:  # a silence first: the run so far is done
            if end > begin:
                out[begin:end] = sosfilt(sos, x[begin:end])
            begin = start
        end = min(x.size, max(end, start + reach))
    if end > begin:
        out[begin:end] = sosfilt(sos, x[begin:end])
    return out


def bandpass_sos(low_hz: float, high_hz: float, sample_rate: int) -> np.ndarray:
    """The sections of ``bandpass``'s filter, worked out in closed form: for a band that
    changes every note (scipy's design takes ~2.6 ms, this ~0.03 ms). The same filter as
    ``signal.butter(2, …, "bandpass", output="sos")`` to rounding (its prototype's poles
    moved to the band and through the bilinear transform as scipy does), each section
    with one zero at DC and one at Nyquist."""
    nyquist = sample_rate / 2.0
    high = min(high_hz, 0.95 * nyquist)
    low = min(low_hz, 0.9 * high)
    warped = 4.0 * np.tan(np.pi * np.array([low, high]) / sample_rate)  # fs = 2, as scipy
    width, centre = warped[1] - warped[0], math.sqrt(warped[0] * warped[1])
    prototype = -np.exp(1j * np.pi * np.array([-1.0, 1.0]) / 4.0) * width / 2.0
    root = np.sqrt(prototype * prototype - centre * centre)
    analog = np.concatenate([prototype + root, prototype - root])
    poles = (4.0 + analog) / (4.0 - analog)
    gain = width * width * (16.0 / np.prod(4.0 - analog)).real
    sos = np.zeros((2, 6))
    sos[:, 0], sos[:, 2], sos[:, 3] = 1.0, -1.0, 1.0
    for row, pole in zip(sos, poles[[0, 2]], strict=True):  # one of each conjugate pair
        row[4], row[5] = -2.0 * pole.real, abs(pole) ** 2
    sos[0, :3] *= gain
    return sos


@functools.lru_cache(maxsize=1024)
def _bandpass_sos(low_hz: float, high_hz: float, sample_rate: int) -> np.ndarray:
    """The band-pass's sections, designed once per band (models reuse a few bands often)."""
    nyquist = sample_rate / 2.0
    high = min(high_hz, 0.95 * nyquist)
    low = min(low_hz, 0.9 * high)
    return signal.butter(2, [low, high], btype="bandpass", fs=sample_rate, output="sos")


@functools.cache
def infrasound_highpass(sample_rate: int) -> np.ndarray:
    """The sections of the high-pass every note goes through: 8th-order Butterworth at
    ``INFRASOUND_HZ``."""
    return signal.butter(8, INFRASOUND_HZ, btype="highpass", fs=sample_rate, output="sos")


def harmonic_tones(f0: np.ndarray, amp_sets: Sequence[np.ndarray], *,
                   sample_rate: int) -> list[np.ndarray]:
    """Additive tones on one fundamental track, one tone per set of harmonic amplitudes.

    Parameters
    ----------
    f0 : ndarray (frames,), Hz
        The instantaneous fundamental.
    amp_sets : sequence of ndarray (K,)
        Linear amplitudes of harmonics 1…K (one array per tone, same K); harmonics
        above 0.45 × ``sample_rate`` at the highest f0 are left out.

    Returns
    -------
    list of ndarray (frames,)
        ``sum_k a_k sin(k φ(t))`` per set, φ the integral of 2π f0, starting at 0.
    """
    phase = 2.0 * np.pi * np.cumsum(f0) / sample_rate
    phase -= phase[0]
    top = float(np.max(f0))
    count = len(amp_sets[0])
    count = min(count, sum(1 for k in range(count) if (k + 1) * top < 0.45 * sample_rate))
    twice_cos = 2.0 * np.cos(phase)
    sine = np.sin(phase)
    return [_sine_series(np.asarray(amps, dtype=float)[:count], twice_cos, sine)
            for amps in amp_sets]


def _sine_series(amps: np.ndarray, twice_cos: np.ndarray, sine: np.ndarray) -> np.ndarray:
    """``Σ_k amps[k−1] sin(k φ)`` from ``2 cos φ`` and ``sin φ``, by Clenshaw's recurrence
    ``b_k = a_k + 2 cos φ · b_{k+1} − b_{k+2}``, sum ``b_1 sin φ``: three passes of real
    arithmetic a harmonic, not a complex power per sample (rounding grows as K², ~1e-14)."""
    later, last = np.zeros(sine.size), np.zeros(sine.size)  # b_{k+1}, b_{k+2}
    scratch = np.empty(sine.size)
    for amp in amps[::-1].tolist():
        np.multiply(twice_cos, later, out=scratch)
        scratch -= last
        if amp != 0.0:
            scratch += amp
        later, last, scratch = scratch, later, last
    later *= sine
    return later


def smooth_noise(rng: np.random.Generator, *, frames: int, rate_hz: float,
                 sample_rate: float) -> np.ndarray:
    """Slowly wandering noise of unit deviation, with about ``rate_hz`` new values a second."""
    knots = max(2, math.ceil(frames / sample_rate * rate_hz) + 2)
    values = rng.standard_normal(knots)
    return np.interp(np.linspace(0.0, knots - 1.0, frames), np.arange(knots), values)


def attack_release(frames: int, *, attack_s: float, release_s: float, hold_s: float,
                   sample_rate: int) -> np.ndarray:
    """Raised-cosine attack, hold until ``hold_s``, raised-cosine release; length ``frames``."""
    # The cosines only where they move (1 elsewhere, 0 past the release), the same values
    # as over the whole note: a long note costs its ramps, not its length.
    t = sample_times(frames, sample_rate)
    out = np.ones(frames)
    rising = min(frames, math.ceil(attack_s * sample_rate) + 1)
    out[:rising] = 0.5 - 0.5 * np.cos(np.pi * np.clip(t[:rising] / attack_s, 0.0, 1.0))
    begin = min(frames, max(0, math.floor(hold_s * sample_rate) - 1))
    end = min(frames, max(begin, math.ceil((hold_s + release_s) * sample_rate) + 1))
    fall = np.clip(1.0 - (t[begin:end] - hold_s) / release_s, 0.0, 1.0)
    out[begin:end] *= 0.5 - 0.5 * np.cos(np.pi * fall)
    out[end:] = 0.0
    return out


def harmonic_levels(params: Mapping[str, Any], key: str = "harmonics_db") -> np.ndarray:
    """Linear amplitudes from a list of harmonic levels in dB (harmonic 1 first)."""
    return np.asarray(db_to_gain(np.asarray(params[key], dtype=float)))


def working_rate(sample_rate: int, least_hz: float) -> tuple[int, int]:
    """A lower rate to make a sound at, and the whole factor up to ``sample_rate``: the
    lowest whole fraction of ``sample_rate`` still at ``least_hz`` or more (for sounds
    that hold next to nothing above ``least_hz / 2``)."""
    factor = max(1, int(sample_rate // least_hz))
    while factor > 1 and sample_rate % factor:
        factor -= 1
    return sample_rate // factor, factor


def upsample(audio: np.ndarray, factor: int) -> np.ndarray:
    """``audio`` at ``factor`` times its rate (polyphase, Kaiser low-pass)."""
    # scipy takes the FIR taps as the window (its documentation); scipy-stubs lists only
    # window names and tuples
    return audio if factor == 1 else signal.resample_poly(  # type: ignore[call-overload, unused-ignore]
        audio, factor, 1, window=_upsampler(factor))


@functools.cache
def _upsampler(factor: int) -> np.ndarray:
    """resample_poly's own low-pass (Kaiser, β 5), designed once per factor."""
    return signal.firwin(20 * factor + 1, 1.0 / factor, window=("kaiser", 5.0))



_TIMES: dict[float, np.ndarray] = {}


def sample_times(frames: int, sample_rate: float) -> np.ndarray:
    """``np.arange(frames) / sample_rate`` (the same values), read-only: cut from one
    kept array per rate, so a long note does not build its time axis anew for each
    track (a new array of a line's length costs more in page faults than its values)."""
    kept = _TIMES.get(sample_rate)
    if kept is None or kept.size < frames:
        kept = np.arange(max(frames, 2 * (0 if kept is None else kept.size))) / sample_rate
        kept.setflags(write=False)
        _TIMES[sample_rate] = kept
    return kept[:frames]


def interp_knots(x: np.ndarray, xp: np.ndarray, fp: np.ndarray, hop: int) -> np.ndarray:
    """``np.interp(x, xp, fp)`` to the bit, faster when knot ``j`` lies at sample ``j · hop``
    of the rising sample times ``x`` (``arange(n) / rate``; a track made every ``hop``
    samples).

    np.interp searches each sample's segment (~20-40 ns a sample); here a sample's
    segment is its block of ``hop``, so the line is worked out in whole-array steps with
    np.interp's own formula, ``slope · (x − xp[j]) + fp[j]``. A block's first sample may
    lie on its knot or, by rounding, just before it: those (and the samples past the last
    knot) are np.interp's own. Knots elsewhere than every ``hop`` samples: np.interp.
    """
    blocks = min(xp.size - 1, x.size // hop) if hop > 1 else 0
    starts = np.arange(blocks) * hop
    if blocks < 1 or np.any(x[starts + 1] <= xp[:blocks]) \
            or np.any(x[starts + hop - 1] >= xp[1:blocks + 1]):
        return np.interp(x, xp, fp)
    slope = np.diff(fp[:blocks + 1]) / np.diff(xp[:blocks + 1])
    if not (np.all(np.isfinite(slope)) and np.all(np.isfinite(fp[:blocks]))):
        return np.interp(x, xp, fp)  # np.interp's fallbacks for inf and nan
    out = np.empty(x.size)
    grid = out[:blocks * hop].reshape(blocks, hop)
    np.subtract(x[:blocks * hop].reshape(blocks, hop), xp[:blocks, None], out=grid)
    grid *= slope[:, None]
    grid += fp[:blocks, None]
    odd = starts[x[starts] <= xp[:blocks]]
    out[odd] = np.interp(x[odd], xp, fp)
    out[blocks * hop:] = np.interp(x[blocks * hop:], xp, fp)
    return out
