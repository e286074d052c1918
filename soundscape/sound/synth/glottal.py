"""The glottal source of the voice: KLGLOTT88 pulses, jitter, shimmer, tilt and breath.

D. H. Klatt & L. C. Klatt, "Analysis, synthesis, and perception of voice quality variations
among female and male talkers", JASA 87(2):820–857 (1990). In each period the glottis is
open for the share ``open_quotient`` and the flow is U(x) ∝ x² − x³ (x the time since
opening over the open time); the source is its derivative 2x − 3x², which ends at −1 at the
closure and is 0 while closed: that sudden closure excites the vocal tract. A one-pole
low-pass (Klatt's TL) tilts the spectrum; breath noise is modulated by the opening, loud
while the glottis is open and at half strength while it is closed.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

__all__ = ["phase", "source", "tilt"]


def phase(f0: np.ndarray, sample_rate: int) -> np.ndarray:
    """Running phase in periods (its integer part counts the pulses)."""
    return np.cumsum(f0) / sample_rate


def source(f0: np.ndarray, *, open_quotient: float, tilt_db: float, jitter_percent: float,
           shimmer_db: float, sample_rate: int,
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The voicing and the breath noise on the fundamental track ``f0`` (Hz per sample).

    Jitter and shimmer are drawn once per period (Gaussian, standard deviations
    ``jitter_percent`` of the period and ``shimmer_db``). Returns (voicing, breath): the
    voicing of RMS about 1, the breath noise of RMS about 1 following the opening (its
    level is the caller's).
    """
    first = phase(f0, sample_rate)  # rising: its last value is its largest
    periods = int(first[-1]) + 2
    jitter = 1.0 + rng.normal(0.0, jitter_percent / 100.0, periods)
    shimmer = 10.0 ** (rng.normal(0.0, shimmer_db, periods) / 20.0)
    running = phase(f0 / jitter[first.astype(int)], sample_rate)
    within, count = np.modf(running)
    index = np.minimum(count.astype(int), periods - 1)
    x = within / open_quotient
    is_open = x < 1.0
    flow_derivative = np.where(is_open, 2.0 * x - 3.0 * x * x, 0.0) * shimmer[index]
    voicing = tilt(flow_derivative, tilt_db, sample_rate) / math.sqrt(_mean_square(open_quotient))
    opening = np.where(is_open, 1.0, 0.5)
    breath = rng.standard_normal(f0.size) * opening
    return voicing, breath / math.sqrt(open_quotient + 0.25 * (1.0 - open_quotient))


def tilt(x: np.ndarray, tilt_db: float, sample_rate: int) -> np.ndarray:
    """One-pole low-pass with unity gain at 0 Hz that is ``tilt_db`` down at 3 kHz."""
    if tilt_db <= 0.0:
        return x
    g2 = 10.0 ** (-tilt_db / 10.0)
    cos_w = math.cos(2.0 * math.pi * min(3000.0, 0.45 * sample_rate) / sample_rate)
    p = (1.0 - g2 * cos_w) / (1.0 - g2)
    pole = p - math.sqrt(p * p - 1.0)
    return signal.lfilter([1.0 - pole], [1.0, -pole], x)


def _mean_square(open_quotient: float) -> float:
    """Mean of (2x − 3x²)² over a period open for ``open_quotient`` of it: 2/15 · OQ."""
    return 2.0 / 15.0 * open_quotient
