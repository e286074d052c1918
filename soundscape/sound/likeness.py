"""How alike the strokes of one class are, and how bright: measures for the render's one-shots.

``dry_strokes`` makes the dry notes of chosen events exactly as the render does (the same
voice, note key, variant pick and generator seed: ``notes.DryNotes``), so the measures
here are of the notes the render places. ``highest_correlation`` is the largest
normalised correlation of any two of them in a band, onsets aligned (a listener hears
two strokes as one sound repeated when their waveforms match); ``share_above`` the part
of a note's energy above a frequency (how much of a bell's or stone's sound lies in its
upper partials).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy import signal

from soundscape.performance import Performance
from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, event_variants

__all__ = ["dry_strokes", "highest_correlation", "pair_correlations", "share_above"]


def dry_strokes(performance: Performance, indexes: Iterable[int], *, seed: int = 0,
                sample_rate: int = 24000, bells: str = "ideal") -> list[np.ndarray]:
    """The dry notes (mono, at 1 m) of events ``indexes``, as ``render_audio`` makes them
    with ``seed`` (``spatialise.HeardNotes`` picks the variant the same way)."""
    voice = SynthVoice(bells=bells).bind(performance, seed)  # where each stroke lands
    notes = DryNotes(voice, sample_rate, seed, ByteLru(256 << 20))
    out = []
    variants = event_variants(performance, notes, seed)
    for index in indexes:
        event = performance.events[index]
        source = performance.sources[event.source]
        variant = variants[index]
        out.append(np.asarray(notes(event, source, notes.key(event, source), variant),
                              dtype=float))
    return out


def pair_correlations(notes: list[np.ndarray], *, band: tuple[float, float],
                      sample_rate: int, window_s: float = 1.0) -> np.ndarray:
    """The normalised zero-lag correlation of every two notes (a square matrix, 0 on its
    diagonal) over their first ``window_s`` seconds, band-passed to ``band`` (Hz;
    4th-order Butterworth, forward and back, so no note is shifted)."""
    sos = signal.butter(4, band, btype="bandpass", fs=sample_rate, output="sos")
    frames = round(window_s * sample_rate)
    rows = np.zeros((len(notes), frames))
    for row, note in zip(rows, notes, strict=True):
        part = note[:frames]
        row[:] = signal.sosfiltfilt(sos, np.pad(part, (0, frames - part.size)))
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    rows = rows / np.where(norms > 0, norms, 1.0)
    matrix = rows @ rows.T
    np.fill_diagonal(matrix, 0.0)
    return matrix


def highest_correlation(notes: list[np.ndarray], *, band: tuple[float, float],
                        sample_rate: int, window_s: float = 1.0) -> float:
    """The highest correlation of any two of ``notes`` (see ``pair_correlations``)."""
    if len(notes) < 2:
        raise ValueError("highest_correlation needs two notes or more")
    matrix = pair_correlations(notes, band=band, sample_rate=sample_rate, window_s=window_s)
    return float(np.max(matrix[np.triu_indices(len(notes), 1)]))


def share_above(note: np.ndarray, *, hz: float, sample_rate: int) -> float:
    """The part of ``note``'s energy above ``hz`` (0…1)."""
    power = np.abs(np.fft.rfft(note)) ** 2
    freqs = np.fft.rfftfreq(note.size, 1.0 / sample_rate)
    total = float(np.sum(power))
    return float(np.sum(power[freqs > hz])) / total if total > 0 else 0.0
