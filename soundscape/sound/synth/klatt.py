"""The cascade vocal tract of Klatt's formant synthesizer.

D. H. Klatt, "Software for a cascade/parallel formant synthesizer", JASA 67(3):971–995
(1980). A digital resonator of centre ``F`` and bandwidth ``BW`` is

    y[n] = A x[n] + B y[n-1] + C y[n-2],
    C = -exp(-2π BW T),  B = 2 exp(-π BW T) cos(2π F T),  A = 1 - B - C

(unity gain at 0 Hz); an antiresonator (the nasal zero) is its inverse, a two-zero filter.
Voicing and aspiration go through the cascade: a nasal pole-zero pair, then the formants.
Parameters change once a frame (Klatt: 5 ms); between frames each resonator keeps its last
two outputs, as Klatt's difference equations do, so a change of coefficients is smooth.
Sections that never change after the last one that does (the nasal pole, the poles above
F5) filter the whole note in one pass.
"""

from __future__ import annotations

import numpy as np

from soundscape.sound.iir import sosfilt_rows, sosfilt_within

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
            sample_rate: int, overwrite: bool = False) -> np.ndarray:
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
    overwrite : bool
        Filter a C-ordered float64 ``x`` where it is (and return it).
    """
    signals = np.atleast_2d(x)  # filtered in place: the caller's, or a copy
    if not (overwrite and signals.dtype == np.float64 and signals.flags.c_contiguous):
        signals = np.array(signals, dtype=float, order="C")
    # a section changes when its frequency or bandwidth does: the runs of equal frames are
    # found on those, and the coefficients worked out once per run
    rows = np.concatenate([zero[:, None], poles], axis=1)
    # (over frames first: np.any over the axes (0, 2) at once took five times as long)
    changing = np.flatnonzero((rows != rows[:1]).any(axis=0).any(axis=1))
    varying = int(changing[-1]) + 1 if changing.size else 0
    edges = _runs(rows[:, :varying].reshape(rows.shape[0], -1)) if varying else [0, rows.shape[0]]
    sos = _sections(poles[edges[:-1]], zero[edges[:-1]], sample_rate)
    if varying:
        _time_varying(signals, sos[:, :varying], edges, hop)
    if varying < sos.shape[1]:  # a time-invariant tail: filtered whole, from rest
        tail = sos[0, varying:]
        signals, _ = sosfilt_rows(tail, signals, np.zeros((signals.shape[0], tail.shape[0], 2)),
                                  overwrite=True)
    return signals.reshape(np.shape(x))


def _sections(poles: np.ndarray, zero: np.ndarray, sample_rate: int) -> np.ndarray:
    """Per frame, one second-order section per filter: [b0, b1, b2, 1, a1, a2]."""
    frames, count = poles.shape[0], poles.shape[1]
    za, zb, zc = resonator(zero[:, 0], zero[:, 1], sample_rate)
    a, b, c = resonator(poles[..., 0], poles[..., 1], sample_rate)
    sos = np.zeros((frames, count + 1, 6))
    sos[:, 0, :3] = np.stack([1.0 / za, -zb / za, -zc / za], axis=1)
    sos[:, 0, 3] = 1.0
    sos[:, 1:, 0], sos[:, 1:, 3], sos[:, 1:, 4], sos[:, 1:, 5] = a, 1.0, -b, -c
    return sos


def _time_varying(signals: np.ndarray, sos: np.ndarray, edges: list[int], hop: int) -> None:
    """``signals`` (C-ordered) through sections that change from run to run (sos: runs,
    sections, 6; section 0 the zero; run k covers frames [edges[k], edges[k + 1])), in
    place: one filter call per run, each continuing Klatt's recursion."""
    size = signals.shape[1]
    bounds = [min(size, edge * hop) for edge in edges]
    bounds[-1] = size
    kept = [r for r in range(len(edges) - 1) if bounds[r] < bounds[r + 1]]
    if len(kept) < len(edges) - 1:  # runs past the end of the signal
        sos = sos[kept]
    carries = _carries(sos)
    sos = np.ascontiguousarray(sos)  # each run's sections a C block for the filter
    state = np.zeros((signals.shape[0], sos.shape[1], 2))
    for r, run in enumerate(kept):
        if r:
            state = np.ascontiguousarray((carries[r - 1] @ state[..., None])[..., 0])
        part = signals[:, bounds[run]:bounds[run + 1]]  # one signal: a C view, filtered in place
        if part.flags.c_contiguous:
            sosfilt_within(sos[r], part, state)
        else:
            part[...], state = sosfilt_rows(sos[r], part, state)


def _carries(sos: np.ndarray) -> np.ndarray:
    """Per run after the first (sos: runs, sections, 6), the 2×2 maps taking each
    section's final transposed-direct-form state in the run before to its first state
    in this one.

    Klatt's recursion carries the last two inputs of the zero and outputs of each pole;
    a section's state is ``M (now, before)`` with ``M = [[p, q], [q, 0]]`` (``p, q`` =
    ``b1, b2`` for the zero, ``−a1, −a2`` for a pole), so the map is ``M_r M_{r−1}⁻¹``.
    """
    p = np.where(np.arange(sos.shape[1]) == 0, sos[..., 1], -sos[..., 4])
    q = np.where(np.arange(sos.shape[1]) == 0, sos[..., 2], -sos[..., 5])
    forward = np.stack([np.stack([p, q], -1), np.stack([q, np.zeros_like(q)], -1)], -2)
    back = np.stack([np.stack([np.zeros_like(q), 1.0 / q], -1),
                     np.stack([1.0 / q, -p / q**2], -1)], -2)
    return forward[1:] @ back[:-1]


def _runs(rows: np.ndarray) -> list[int]:
    """Edges of the maximal runs of equal frames, [0, …, frames] (run k: frames
    [edges[k], edges[k + 1])), so steady vowels filter in one go."""
    change = np.flatnonzero(np.any(rows[1:] != rows[:-1], axis=1)) + 1
    return [0, *change.tolist(), rows.shape[0]]
