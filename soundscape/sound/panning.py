"""Panners: from a direction in the listener's frame to per-channel gains, delays and filters.

Every panner answers ``terms(azimuth_deg, elevation_deg) -> ChannelTerms`` and
names its channels; the renderer applies the terms in the frequency domain.
Azimuth is 0 ahead and positive to the left; elevation positive up.

- ``Stereo``: constant-power pan plus the Woodworth interaural time difference
  on the far channel (acoustics.md §7.7, §7.5).
- ``Binaural``: Brown & Duda (1998) spherical head: per-ear ray-model delay and
  one-pole/one-zero head-shadow filter (acoustics.md §7.5). No HRTF data.
- ``Ambisonic``: AmbiX (ACN, SN3D, no Condon–Shortley) of order 1 or 3 (§7.6).
- ``Vbap``: Pulkki's vector-base amplitude panning over loudspeaker pairs of a
  horizontal ring (§7.7); presets ``ring8`` and ``5.1``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from soundscape.errors import RenderError
from soundscape.sound.ambisonics import acn_channels, sn3d_gains
from soundscape.sound.propagation import Air

__all__ = ["HEAD_RADIUS_M", "Ambisonic", "Binaural", "ChannelTerms", "Panner", "Stereo",
           "Vbap", "bs1770_weight", "head_shadow", "make_panner", "woodworth_itd"]

#: Brown & Duda's average adult head radius (acoustics.md §7.5).
HEAD_RADIUS_M = 0.0875
#: Speed of sound of the default air (20 °C), m/s; a render passes its own air's.
_DEFAULT_C = Air().speed_of_sound
_ALPHA_MIN = 0.1
_THETA_MIN_DEG = 150.0


@dataclass(frozen=True, slots=True)
class ChannelTerms:
    """What a panner does to one arriving sound, per output channel.

    Parameters
    ----------
    gains : ndarray (channels,)
        Amplitude gains.
    delays_s : ndarray (channels,) or None, seconds
        Extra delay per channel (ITD); None = none.
    shadow : ndarray (channels,) or None
        Head-shadow α per channel (see ``head_shadow``); None = flat.
    """

    gains: np.ndarray
    delays_s: np.ndarray | None = None
    shadow: np.ndarray | None = None


class Panner(Protocol):
    """A spatial layout: channel names, loudness weights and the terms for a direction."""

    channels: tuple[str, ...]

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms: ...

    def loudness_weights(self) -> np.ndarray: ...


def woodworth_itd(azimuth_deg: float, elevation_deg: float = 0.0, *,
                  radius_m: float = HEAD_RADIUS_M, speed_of_sound: float = _DEFAULT_C
                  ) -> float:
    """Woodworth ITD (a/c)·(ψ + sin ψ), ψ the lateral angle; positive when the source is left.

    acoustics.md §7.5: 656 µs at 90° for a = 8.75 cm, c = 343 m/s.
    """
    lateral = math.asin(max(-1.0, min(1.0, math.sin(math.radians(azimuth_deg))
                                      * math.cos(math.radians(elevation_deg)))))
    return radius_m / speed_of_sound * (lateral + math.sin(lateral))


def head_shadow(alpha: float, freqs_hz: np.ndarray, *, radius_m: float = HEAD_RADIUS_M,
                speed_of_sound: float = _DEFAULT_C) -> np.ndarray:
    """Brown & Duda head-shadow response H = (1 + jαω/2ω0)/(1 + jω/2ω0), ω0 = c/a.

    The analog prototype is sampled directly at the given frequencies (the
    renderer filters in the frequency domain, so no bilinear warping).
    """
    w = 2 * np.pi * np.asarray(freqs_hz) / (2 * speed_of_sound / radius_m)
    return (1 + 1j * alpha * w) / (1 + 1j * w)


def _shadow_alpha(theta_deg: float) -> float:
    """α(θ) = (1 + α_min/2) + (1 − α_min/2)·cos(θ/θ_min·180°) (acoustics.md §7.5)."""
    return (1 + _ALPHA_MIN / 2) + (1 - _ALPHA_MIN / 2) * math.cos(
        math.radians(theta_deg / _THETA_MIN_DEG * 180.0))


def _ear_delay(theta: float, radius_m: float, speed_of_sound: float) -> float:
    """Ray-model delay to an ear, θ (radians) from its axis, shifted so it is ≥ 0."""
    base = -math.cos(theta) if theta < math.pi / 2 else theta - math.pi / 2
    return radius_m / speed_of_sound * (base + 1.0)


def bs1770_weight(azimuth_deg: float, elevation_deg: float = 0.0) -> float:
    """BS.1770 channel weight: 1.41 for loudspeakers at 60°–120° to the side below 30°, else 1."""
    side = 60.0 <= abs((azimuth_deg + 180.0) % 360.0 - 180.0) <= 120.0
    return 1.41 if side and abs(elevation_deg) < 30.0 else 1.0


@dataclass(frozen=True)
class Stereo:
    """Constant-power pan g_L = cos(π(p+1)/4), g_R = sin(π(p+1)/4), p = −sin(az)·cos(el),
    with the Woodworth ITD added to the far channel (acoustics.md §7.7, §7.5)."""

    channels: tuple[str, ...] = ("L", "R")
    speed_of_sound: float = _DEFAULT_C

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        p = -math.sin(math.radians(azimuth_deg)) * math.cos(math.radians(elevation_deg))
        gains = np.array([math.cos(math.pi * (p + 1) / 4), math.sin(math.pi * (p + 1) / 4)])
        itd = woodworth_itd(azimuth_deg, elevation_deg, speed_of_sound=self.speed_of_sound)
        delays = np.array([max(-itd, 0.0), max(itd, 0.0)])
        return ChannelTerms(gains, delays)

    def loudness_weights(self) -> np.ndarray:
        return np.ones(2)


@dataclass(frozen=True)
class Binaural:
    """Brown & Duda spherical head: per-ear delay and head-shadow filter (acoustics.md §7.5)."""

    radius_m: float = HEAD_RADIUS_M
    channels: tuple[str, ...] = ("L", "R")
    speed_of_sound: float = _DEFAULT_C

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        lateral = math.sin(math.radians(azimuth_deg)) * math.cos(math.radians(elevation_deg))
        thetas = [math.acos(max(-1.0, min(1.0, s))) for s in (lateral, -lateral)]
        delays = np.array([_ear_delay(t, self.radius_m, self.speed_of_sound) for t in thetas])
        shadow = np.array([_shadow_alpha(math.degrees(t)) for t in thetas])
        return ChannelTerms(np.ones(2), delays, shadow)

    def loudness_weights(self) -> np.ndarray:
        return np.ones(2)


@dataclass(frozen=True)
class Ambisonic:
    """AmbiX encoder of a given order (1 = FOA, 3 = HOA3)."""

    order: int

    @property
    def channels(self) -> tuple[str, ...]:
        return acn_channels(self.order)

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        return ChannelTerms(sn3d_gains(self.order, azimuth_deg, elevation_deg))

    def loudness_weights(self) -> np.ndarray:
        """W only: B-format has no BS.1770 definition (acoustics.md §8); W is the omni mix."""
        weights = np.zeros(len(self.channels))
        weights[0] = 1.0
        return weights


@dataclass(frozen=True)
class Vbap:
    """2-D VBAP over a horizontal loudspeaker ring (Pulkki 1997; acoustics.md §7.7).

    Parameters
    ----------
    azimuths_deg : tuple of float, degrees
        One per loudspeaker, 0 ahead, positive left.
    names : tuple of str
        Channel names, same length.
    silent : tuple of str
        Channels that take no panned signal (the LFE of 5.1).
    """

    azimuths_deg: tuple[float, ...]
    names: tuple[str, ...]
    silent: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.azimuths_deg) < 2 or len(self.azimuths_deg) != len(self.names):
            raise RenderError(f"loudspeaker layout {self.azimuths_deg!r}: need ≥ 2 azimuths")

    @property
    def channels(self) -> tuple[str, ...]:
        return self.names

    def _active(self) -> list[int]:
        live = [i for i, n in enumerate(self.names) if n not in self.silent]
        return sorted(live, key=lambda i: self.azimuths_deg[i] % 360.0)

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        p = np.array([math.cos(math.radians(azimuth_deg)), math.sin(math.radians(azimuth_deg))])
        ring = self._active()
        gains = np.zeros(len(self.names))
        best = None
        for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
            base = np.array([[math.cos(math.radians(self.azimuths_deg[i])),
                              math.sin(math.radians(self.azimuths_deg[i]))] for i in (a, b)])
            if abs(np.linalg.det(base)) < 1e-9:
                continue
            g = p @ np.linalg.inv(base)  # g = pᵀ·L12⁻¹
            if best is None or g.min() > best[2].min():
                best = (a, b, g)
        a, b, g = best
        g = np.clip(g, 0.0, None)
        g = g / math.sqrt(float(g @ g))  # constant power
        gains[a] += g[0]
        gains[b] += g[1]
        return ChannelTerms(gains)

    def loudness_weights(self) -> np.ndarray:
        return np.array([0.0 if n in self.silent else bs1770_weight(az)
                         for az, n in zip(self.azimuths_deg, self.names, strict=True)])


#: Layout presets for ``--layout`` (channel order as files carry them).
_RING8 = Vbap(tuple(float(a) for a in range(0, 360, 45)),
              tuple(f"A{a:03d}" for a in range(0, 360, 45)))
# 5.1 in WAV order L R C LFE Ls Rs, ITU-R BS.775 angles (surrounds at ±110°).
_FIVE_ONE = Vbap((30.0, -30.0, 0.0, 0.0, 110.0, -110.0),
                 ("L", "R", "C", "LFE", "Ls", "Rs"), silent=("LFE",))

LAYOUTS = ("stereo", "binaural", "foa", "hoa3", "ring8", "5.1", "stems")


def make_panner(layout: str | Sequence[float], *, speed_of_sound: float = _DEFAULT_C
                ) -> Panner:
    """The panner for a ``--layout`` name or a list of loudspeaker azimuths (degrees).

    ``stems`` uses the stereo panner per instrument; the renderer splits the buses.
    ``speed_of_sound`` (m/s) is the air's, for the head models' delays and shadow.
    """
    if not isinstance(layout, str):
        azimuths = tuple(float(a) for a in layout)
        return Vbap(azimuths, tuple(f"S{i + 1}" for i in range(len(azimuths))))
    c = speed_of_sound
    presets: dict[str, Panner] = {"stereo": Stereo(speed_of_sound=c),
                                  "stems": Stereo(speed_of_sound=c),
                                  "binaural": Binaural(speed_of_sound=c),
                                  "foa": Ambisonic(1), "hoa3": Ambisonic(3),
                                  "ring8": _RING8, "5.1": _FIVE_ONE}
    try:
        return presets[layout]
    except KeyError:
        raise RenderError(
            f"layout={layout!r}, accepted: {', '.join(LAYOUTS)} or loudspeaker azimuths "
            "like 30,-30,0,110,-110") from None
