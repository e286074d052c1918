"""The glottal source of the voice: KLGLOTT88 pulses, jitter, shimmer, tilt and breath.

D. H. Klatt & L. C. Klatt, "Analysis, synthesis, and perception of voice quality variations
among female and male talkers", JASA 87(2):820–857 (1990). In each period the glottis is
open for the share ``open_quotient`` and the flow is U(x) ∝ x² − x³ (x the time since
opening over the open time); the source is its derivative 2x − 3x², which ends at −1 at the
closure and is 0 while closed: that sudden closure excites the vocal tract. A one-pole
low-pass (Klatt's TL) tilts the spectrum; breath noise (white, ``white``) is modulated by the
opening, loud while the glottis is open and at half strength while it is closed.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

from soundscape.sound.iir import sosfilt_rows

__all__ = ["phase", "source", "tilt", "white"]


def phase(f0: np.ndarray, sample_rate: int, out: np.ndarray | None = None) -> np.ndarray:
    """Running phase in periods (its integer part counts the pulses), in ``out`` if given."""
    out = np.cumsum(f0, out=out)
    out /= sample_rate
    return out


def source(f0: np.ndarray, *, open_quotient: float, tilt_db: float, jitter_percent: float,
           shimmer_db: float, sample_rate: int,
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The voicing and the breath noise on the fundamental track ``f0`` (Hz per sample).

    Jitter and shimmer are drawn once per period (Gaussian, standard deviations
    ``jitter_percent`` of the period and ``shimmer_db``). Returns (voicing, breath): the
    voicing of RMS about 1, the breath noise of RMS about 1 following the opening (its
    level is the caller's).
    """
    # Worked in place on few arrays: at a line's length each new array costs more in page
    # faults than the arithmetic on it. ``work`` holds the phase, then the breath noise;
    # ``spare`` the jitter per sample, then the pulses.
    work = phase(f0, sample_rate, out=np.empty(f0.size))  # rising: its last value is its largest
    periods = int(work[-1]) + 2
    jitter = 1.0 + rng.normal(0.0, jitter_percent / 100.0, periods)
    shimmer = 10.0 ** (rng.normal(0.0, shimmer_db, periods) / 20.0)
    spare = _per_period(jitter, work)
    running = np.divide(f0, spare, out=work)
    np.cumsum(running, out=running)
    running /= sample_rate
    within_shimmer = _per_period(shimmer, running)
    # running ≥ 0: the share of the period it is in (x − ⌊x⌋ is exact: np.modf's values
    # without its per-sample libm call), over the open quotient
    x = np.subtract(running, np.floor(running, out=spare), out=running)
    x /= open_quotient
    closed = x >= 1.0
    flow_derivative = np.multiply(x, 3.0, out=spare)
    flow_derivative *= x
    np.subtract(np.multiply(x, 2.0, out=x), flow_derivative, out=flow_derivative)  # 2x − 3x²
    np.copyto(flow_derivative, 0.0, where=closed)
    flow_derivative *= within_shimmer
    voicing = tilt(flow_derivative, tilt_db, sample_rate, overwrite=True)
    voicing /= math.sqrt(_mean_square(open_quotient))
    breath = white(rng, out=work, scale=1.0 / math.sqrt(open_quotient + 0.25
                                                        * (1.0 - open_quotient)))
    # loud while the glottis is open, at half strength while it is closed
    np.multiply(breath, 0.5, out=breath, where=closed)
    return voicing, breath


def white(rng: np.random.Generator, size: int | None = None, *,
          out: np.ndarray | None = None, scale: float = 1.0) -> np.ndarray:
    """White noise of standard deviation ``scale`` (``size`` samples, or filling ``out``):
    uniform, not Gaussian. What sounds is the noise through the tract, whose resonators sum
    it over tens to hundreds of samples: as Gaussian from uniform samples as from normal ones
    (the same flat spectrum and level), for a quarter of the draw's cost (Generator.random
    ~5 ns a sample, standard_normal ~20: the largest single cost of a sung line's source)."""
    noise = rng.random(size, out=out)
    noise -= 0.5
    noise *= math.sqrt(12.0) * scale  # a uniform on [-1/2, 1/2) has variance 1/12
    return noise


def _per_period(values: np.ndarray, periods: np.ndarray) -> np.ndarray:
    """``values[int(p)]`` for each sample's (rising, ≥ 0) period count ``p``, the last
    value past the end: one run per period (np.repeat) instead of a gather per sample."""
    bounds = np.searchsorted(periods, np.arange(1, values.size), side="left")
    return np.repeat(values, np.diff(bounds, prepend=0, append=periods.size))


def tilt(x: np.ndarray, tilt_db: float, sample_rate: int, *, overwrite: bool = False
         ) -> np.ndarray:
    """One-pole low-pass with unity gain at 0 Hz that is ``tilt_db`` down at 3 kHz (with
    ``overwrite``, a C-ordered float64 ``x`` filtered where it is: lfilter's values)."""
    if tilt_db <= 0.0:
        return x
    g2 = 10.0 ** (-tilt_db / 10.0)
    cos_w = math.cos(2.0 * math.pi * min(3000.0, 0.45 * sample_rate) / sample_rate)
    p = (1.0 - g2 * cos_w) / (1.0 - g2)
    pole = p - math.sqrt(p * p - 1.0)
    if overwrite and x.dtype == np.float64 and x.flags.c_contiguous:
        section = np.array([[1.0 - pole, 0.0, 0.0, 1.0, -pole, 0.0]])
        return sosfilt_rows(section, x.reshape(1, -1), np.zeros((1, 1, 2)),
                            overwrite=True)[0].reshape(x.shape)
    return signal.lfilter([1.0 - pole], [1.0, -pole], x)


def _mean_square(open_quotient: float) -> float:
    """Mean of (2x − 3x²)² over a period open for ``open_quotient`` of it: 2/15 · OQ."""
    return 2.0 / 15.0 * open_quotient
