"""The court's late tail as a send bus: the sources' dry notes, convolved once per render.

Every note a standing listener hears from a standing source (a note on a line, ``lines``)
is also sent, dry, to the tail of the court zone nearest its source (``Court.zone``: the
hall, the court by the hall, its middle, the targets): scaled to the late energy its own
place sends the listener (over the zone's, in the 1 kHz band) and shifted by the difference
of their direct paths. Each zone's sends are one line whose filter is the zone's late tail
at the listener (``court.tail``: decorrelated per output channel), so the whole late sound
of a render costs one forward FFT per zone and one inverse per channel per chunk, whatever
the number of notes. It runs at ``tail_rate_hz`` (8 kHz: the late sound has crossed 100 m or
more of air, docs/site.md) and is brought up to the output's rate like a bus.

The early paths (up to ``early_ms``) are the spatialiser's; the tail holds the rest.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

from soundscape.site.listeners import Listener
from soundscape.sound.court import BANDS, Court, stable_seed, tail
from soundscape.sound.lines import CHUNK, Lines, impulse_filter
from soundscape.sound.panning import Panner
from soundscape.sound.propagation import Air

__all__ = ["Tail", "diffuse_weights"]

#: Directions averaged for a layout's diffuse-field weights (``diffuse_weights``).
_DIRECTIONS = 512
#: How far (s) the late energy that sets a source's send level is summed (most of it).
_LEVEL_S = 1.5
_KHZ = BANDS.index(1000.0)


def diffuse_weights(panner: Panner) -> np.ndarray:
    """Each channel's share of a diffuse field's energy: its squared gain averaged over
    directions spread evenly on the sphere (a Fibonacci lattice)."""
    i = np.arange(_DIRECTIONS) + 0.5
    elevation = np.degrees(np.arcsin(1 - 2 * i / _DIRECTIONS))
    azimuth = np.degrees(np.pi * (1 + 5 ** 0.5) * i) % 360 - 180
    gains = np.array([panner.terms(float(a), float(e)).gains
                      for a, e in zip(azimuth, elevation, strict=True)])
    return (gains ** 2).mean(axis=0)


class Tail:
    """The late tail of a render heard by a standing listener (see the module docstring).

    Parameters
    ----------
    court : Court
    listener : Listener
    panner : Panner
    channels : int
        Width of the mix (the panner's channels, times the stems).
    sample_rate : int, Hz
        The output's.
    air : Air
    seed : int
    """

    def __init__(self, court: Court, listener: Listener, panner: Panner, channels: int,
                 sample_rate: int, air: Air, seed: int) -> None:
        from soundscape.sound.buses import Upsampler  # buses imports this module

        factor = max(1, round(sample_rate / court.model.tail_rate_hz))
        while sample_rate % factor:
            factor -= 1
        self.factor = factor
        self.rate = sample_rate // factor
        self.court = court
        self.listener = listener
        self.speed = air.speed_of_sound
        self.alpha = np.asarray(air.absorption_db_per_m(np.asarray(BANDS)))
        self.weights = diffuse_weights(panner)
        self.seed = seed
        self.lines = Lines(None, listener, channels, make_filter=self._filter)
        self._up = Upsampler(factor, channels) if factor > 1 else None
        self._lag = 0 if self._up is None else self._up.delay
        self._ready = np.zeros((0, channels), dtype=np.float32)
        self._routes: dict[tuple, tuple] = {}
        self._energy: dict[tuple, float] = {}

    # What a source sends ------------------------------------------------------

    def response(self, zone) -> tuple[int, np.ndarray]:
        """The zone's tail at the listener: (first sample, (frames, width) from it) at
        ``rate``, for a sound made at the zone's point at sample 0."""
        late = self.court.late(zone, self.listener.position, alpha_db_per_m=self.alpha,
                               speed=self.speed)
        ir = tail(*late, rate=self.rate, length_s=self.court.model.tail_s,
                  weights=self.weights, diffusion_ms=self.court.hypothesis.diffusion_ms,
                  seed=stable_seed(self.seed, zone, self.listener.position))
        heard = np.flatnonzero(np.abs(ir).max(axis=1) > 0)
        first = int(heard[0]) if len(heard) else 0
        return first, ir[first:]

    def _filter(self, zone, face):
        del face  # the tail is omnidirectional
        first, ir = self.response(zone)
        return impulse_filter(ir.T.astype(np.float32), first)

    def _late_energy(self, point) -> float:
        found = self._energy.get(point)
        if found is None:
            images = self.court.images(point, self.listener.position,
                                       reach_m=_LEVEL_S * self.speed)
            late = ~self.court.split(images, self.speed)
            d = images.distance[late]
            p = images.amplitude[late, _KHZ] * 10.0 ** (-self.alpha[_KHZ] * d / 20) / d
            found = self._energy[point] = float((p ** 2).sum())
        return found

    def route(self, point) -> tuple[tuple, float, float]:
        """Where a note from ``point`` goes: its zone's point, its send gain and delay (s)."""
        found = self._routes.get(point)
        if found is None:
            _, zone = self.court.zone(point)
            ear = np.asarray(self.listener.position)
            own, theirs = self._late_energy(tuple(point)), self._late_energy(zone)
            gain = math.sqrt(own / theirs) if theirs > 0 else 0.0
            delay = (np.linalg.norm(np.subtract(point, ear))
                     - np.linalg.norm(np.subtract(zone, ear))) / self.speed
            found = self._routes[point] = (zone, gain, float(delay))
        return found

    def send(self, rate: int, time: float, mono: np.ndarray, point, column: int) -> None:
        """Send a dry note (at ``rate``, sounding at ``point`` from ``time`` s) to its zone."""
        zone, gain, delay = self.route(point)
        if gain == 0 or not mono.size:
            return
        if rate != self.rate:
            common = math.gcd(rate, self.rate)
            mono = signal.resample_poly(mono, self.rate // common, rate // common)
        onset = round((time + delay) * self.rate) - self._lag
        self.lines.add(onset, (mono * gain).astype(np.float32), zone, None, column)

    # What it gives back -------------------------------------------------------

    @property
    def guard(self) -> int:
        """Output samples before an onset that a send may still change."""
        return (self._lag + 2 + 2 * CHUNK) * self.factor

    @property
    def extent(self) -> int:
        """Output samples up to the end of the last send's tail."""
        return self.lines.extent * self.factor

    def take(self, frames: int) -> np.ndarray:
        """The next ``frames`` output samples of the tail."""
        while len(self._ready) < frames:
            block = self.lines.chunk()
            more = block if self._up is None else self._up(block)
            self._ready = np.concatenate([self._ready, more]) if len(self._ready) else more
        out, self._ready = self._ready[:frames], self._ready[frames:]
        return out
