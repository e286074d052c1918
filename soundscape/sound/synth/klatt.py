"""The cascade vocal tract of Klatt's formant synthesizer.

D. H. Klatt, "Software for a cascade/parallel formant synthesizer", JASA 67(3):971–995
(1980). A digital resonator of centre ``F`` and bandwidth ``BW`` is

    y[n] = A x[n] + B y[n-1] + C y[n-2],
    C = -exp(-2π BW T),  B = 2 exp(-π BW T) cos(2π F T),  A = 1 - B - C

(unity gain at 0 Hz); an antiresonator (the nasal zero) is its inverse, a two-zero filter.
Voicing and aspiration go through the cascade: a nasal pole-zero pair, then the formants.
Parameters change once a frame (Klatt: 5 ms); between frames each resonator keeps its last
two outputs, as Klatt's difference equations do, so a change of coefficients is smooth.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import signal

__all__ = ["cascade", "resonator"]


def resonator(freq: np.ndarray | float, bandwidth: np.ndarray | float,
              sample_rate: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Klatt's (A, B, C) of resonators at ``freq`` with ``bandwidth`` (Hz, broadcast)."""
    t = 1.0 / sample_rate
    c = -np.exp(-2.0 * np.pi * np.asarray(bandwidth, dtype=float) * t)
    b = 2.0 * np.exp(-np.pi * np.asarray(bandwidth, dtype=float) * t) \
        * np.cos(2.0 * np.pi * np.asarray(freq, dtype=float) * t)
    return 1.0 - b - c, b, c


def cascade(x: np.ndarray, poles: np.ndarray, zero: np.ndarray, *, hop: int,
            sample_rate: int) -> np.ndarray:
    """``x`` through the time-varying cascade: one antiresonator, then resonators.

    Parameters
    ----------
    x : ndarray (n,) or (signals, n)
        The excitation (voicing, aspiration); several signals go through the same tract.
    poles : ndarray (frames, R, 2)
        Per frame, the resonators in cascade order: [Hz, bandwidth Hz].
    zero : ndarray (frames, 2)
        Per frame, the nasal antiresonator [Hz, bandwidth Hz].
    hop : int
        Samples per frame; frame k covers samples [k·hop, (k+1)·hop).
    """
    frames, count = poles.shape[0], poles.shape[1]
    signals = np.atleast_2d(np.asarray(x, dtype=float))
    runs = _runs(np.concatenate([poles.reshape(frames, -1), zero], axis=1))
    za, zb, zc = resonator(zero[:, 0], zero[:, 1], sample_rate)
    a, b, c = resonator(poles[..., 0], poles[..., 1], sample_rate)
    # Per frame, one second-order section per filter: [b0, b1, b2, 1, a1, a2].
    sos = np.zeros((frames, count + 1, 6))
    sos[:, 0, :3] = np.stack([1.0 / za, -zb / za, -zc / za], axis=1)
    sos[:, 0, 3] = 1.0
    sos[:, 1:, 0], sos[:, 1:, 3], sos[:, 1:, 4], sos[:, 1:, 5] = a, 1.0, -b, -c
    size = signals.shape[1]
    out = np.empty_like(signals)
    # x[n], x[n-1] of the zero and y[n], y[n-1] of each pole, per signal.
    past = np.zeros((count + 1, signals.shape[0], 2))
    for first, stop in runs:
        start = first * hop
        end = size if stop == runs[-1][1] else min(size, stop * hop)
        if start >= end:
            continue
        section = sos[first]
        out[:, start:end], final = signal.sosfilt(section, signals[:, start:end],
                                                  zi=_state(section, past))
        past = _past(section, final)
    return out.reshape(np.shape(x))


def _state(sos: np.ndarray, past: np.ndarray) -> np.ndarray:
    """Transposed-direct-form states that continue Klatt's recursion from ``past``."""
    b1, b2, a1, a2 = (sos[:, k, None] for k in (1, 2, 4, 5))
    now, before = past[..., 0], past[..., 1]
    zi = np.empty_like(past)
    zi[0, :, 0] = b1[0] * now[0] + b2[0] * before[0]          # the zero: from its inputs
    zi[0, :, 1] = b2[0] * now[0]
    zi[1:, :, 0] = -a1[1:] * now[1:] - a2[1:] * before[1:]    # the poles: from their outputs
    zi[1:, :, 1] = -a2[1:] * now[1:]
    return zi


def _past(sos: np.ndarray, zf: np.ndarray) -> np.ndarray:
    """The last two inputs of the zero and outputs of each pole, from the final states."""
    b1, b2, a1, a2 = (sos[:, k, None] for k in (1, 2, 4, 5))
    past = np.empty_like(zf)
    past[0, :, 0] = zf[0, :, 1] / b2[0]
    past[0, :, 1] = (zf[0, :, 0] - b1[0] * past[0, :, 0]) / b2[0]
    past[1:, :, 0] = -zf[1:, :, 1] / a2[1:]
    past[1:, :, 1] = (-zf[1:, :, 0] - a1[1:] * past[1:, :, 0]) / a2[1:]
    return past


def _runs(rows: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of equal frames: [(first, last + 1)], so steady vowels filter in one go."""
    change = np.flatnonzero(np.any(rows[1:] != rows[:-1], axis=1)) + 1
    edges = [0, *change.tolist(), rows.shape[0]]
    return list(itertools.pairwise(edges))
