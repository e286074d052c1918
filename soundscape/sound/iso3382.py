"""Room-acoustic figures of an impulse response, as ISO 3382-1:2009 measures them.

The decay curve is Schroeder's backward integral of the squared response (ISO 3382-1 §5.3.3;
M. R. Schroeder, "New method of measuring reverberation time", JASA 37:409 (1965)), in octave
bands (IEC 61260 octave edges f·2^(±1/2), a 3rd-order Butterworth band-pass each). From it:

- EDT: the decay from 0 to −10 dB, fitted by least squares and extrapolated to 60 dB;
- T20 (T30): the same from −5 to −25 (−35) dB;
- C80 and D50: early (0–80 ms, 0–50 ms) against late (C80, dB) or total (D50, ratio) energy,
  time 0 being the direct sound's arrival (the first sample within 20 dB of the peak);
- the echo period: the period of the energy envelope's strongest repetition (5 ms frames,
  direct sound and the first 50 ms left out; the peak of their spectrum), the period of a
  flutter between two walls.

The just-noticeable differences ISO 3382-1 Annex A gives: EDT 5 % (relative), C80 1 dB,
D50 0.05 (``JND``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import signal

from soundscape.errors import RenderError

__all__ = ["JND", "Figures", "clarity", "decay_time", "definition", "echo_period", "measure",
           "octave_band", "onset", "schroeder"]

#: ISO 3382-1 Annex A: one just-noticeable difference of each figure.
JND = {"edt": 0.05, "t20": 0.05, "c80": 1.0, "d50": 0.05}


def octave_band(ir: np.ndarray, rate: int, centre: float) -> np.ndarray:
    """``ir`` through the octave band at ``centre`` Hz (zero phase: forward and back)."""
    high = min(centre * math.sqrt(2), 0.45 * rate)
    sos = signal.butter(3, [centre / math.sqrt(2), high], btype="bandpass", fs=rate,
                        output="sos")
    return signal.sosfiltfilt(sos, ir)


def onset(ir: np.ndarray) -> int:
    """The direct sound's sample: the first within 20 dB of the peak (ISO 3382-1 §5.3.2)."""
    energy = np.asarray(ir, dtype=float) ** 2
    return int(np.argmax(energy >= energy.max() * 0.01))


def schroeder(ir: np.ndarray) -> np.ndarray:
    """The backward-integrated decay curve, dB re its start."""
    energy = np.asarray(ir, dtype=float) ** 2
    curve = np.cumsum(energy[::-1])[::-1]
    return 10 * np.log10(np.maximum(curve / curve[0], 1e-30))


def decay_time(curve_db: np.ndarray, rate: int, start_db: float, stop_db: float) -> float:
    """Seconds to decay 60 dB, from the least-squares line through the curve between
    ``start_db`` and ``stop_db`` (e.g. −5 and −25 for T20)."""
    inside = np.flatnonzero((curve_db <= start_db) & (curve_db >= stop_db))
    if len(inside) < 2 or curve_db.min() > stop_db:
        raise RenderError(f"the response does not decay from {start_db} to {stop_db} dB "
                          f"(it reaches {curve_db.min():.1f} dB): make it longer")
    first, last = inside[0], inside[-1]
    t = np.arange(first, last + 1) / rate
    slope = np.polyfit(t, curve_db[first:last + 1], 1)[0]
    return float(-60.0 / slope)


def clarity(ir: np.ndarray, rate: int, ms: float = 80.0) -> float:
    """C_ms: early (to ``ms`` after the direct sound) over late energy, dB."""
    energy = np.asarray(ir, dtype=float)[onset(ir):] ** 2
    edge = round(ms * 1e-3 * rate)
    return float(10 * np.log10(energy[:edge].sum() / max(energy[edge:].sum(), 1e-30)))


def definition(ir: np.ndarray, rate: int, ms: float = 50.0) -> float:
    """D_ms: energy in the first ``ms`` after the direct sound over all of it (0–1)."""
    energy = np.asarray(ir, dtype=float)[onset(ir):] ** 2
    return float(energy[:round(ms * 1e-3 * rate)].sum() / energy.sum())


def echo_period(ir: np.ndarray, rate: int, *, shortest_s: float = 0.5,
                longest_s: float = 2.0) -> float:
    """The period (s) of the energy envelope's strongest repetition between ``shortest_s``
    and ``longest_s``: 5 ms frames of energy in dB from 50 ms after the direct sound on
    (floored 60 dB under their peak), their slow decay removed (a straight line), and the
    peak of their spectrum (Hann window, finely interpolated) in 1/longest…1/shortest Hz.
    (The lag of the autocorrelation's highest peak wandered by ±0.04 s between responses of
    one flutter; the spectrum weighs every return.)"""
    frame = round(_ECHO_FRAME_S * rate)
    energy = np.asarray(ir, dtype=float)[onset(ir) + round(0.05 * rate):] ** 2
    frames = len(energy) // frame
    if frames * _ECHO_FRAME_S < 2 * longest_s:
        raise RenderError(f"the response is {frames * _ECHO_FRAME_S:.2f} s after its first "
                          f"50 ms; an echo period up to {longest_s} s needs twice that")
    level = 10 * np.log10(energy[:frames * frame].reshape(frames, frame).sum(axis=1) + 1e-30)
    level = np.maximum(level, level.max() - 60)
    x = np.arange(frames)
    level -= np.polyval(np.polyfit(x, level, 1), x)
    size = 1 << 16
    spectrum = np.abs(np.fft.rfft(level * np.hanning(frames), size))
    freqs = np.fft.rfftfreq(size, _ECHO_FRAME_S)
    band = (freqs >= 1 / longest_s) & (freqs <= 1 / shortest_s)
    return float(1 / freqs[band][np.argmax(spectrum[band])])


_ECHO_FRAME_S = 0.005


@dataclass(frozen=True, slots=True)
class Figures:
    """The figures of one response, averaged over the bands (EDT, T20 s; C80 dB; D50 0–1;
    echo period s)."""

    edt: float
    t20: float
    c80: float
    d50: float
    echo: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def measure(ir: np.ndarray, rate: int, bands: tuple[float, ...] = (500.0, 1000.0), *,
            echo_s: tuple[float, float] = (0.5, 2.0)) -> Figures:
    """EDT, T20, C80, D50 averaged over ``bands`` (ISO 3382-1's mid frequencies: 500 Hz and
    1 kHz) and the echo period of the whole response within ``echo_s`` (by default the
    flutter between the court's ends, gate and hall: ~0.86 s in the 射宮; its side walls'
    ~0.24 s lies below)."""
    ir = np.asarray(ir, dtype=float)
    if ir.ndim != 1 or not np.any(ir):
        raise RenderError("an impulse response must be one channel and not silent")
    values = []
    for centre in bands:
        band = octave_band(ir, rate, centre)
        curve = schroeder(band[onset(band):])
        values.append((decay_time(curve, rate, 0.0, -10.0), decay_time(curve, rate, -5.0, -25.0),
                       clarity(band, rate, 80.0), definition(band, rate, 50.0)))
    edt, t20, c80, d50 = np.mean(values, axis=0)
    return Figures(float(edt), float(t20), float(c80), float(d50),
                   echo_period(ir, rate, shortest_s=echo_s[0], longest_s=echo_s[1]))
