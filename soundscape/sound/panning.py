"""Panners: from a direction in the listener's frame to per-channel gains, delays and filters.

Every panner answers ``terms(azimuth_deg, elevation_deg) -> ChannelTerms`` and
names its channels; the renderer applies the terms in the frequency domain.
Azimuth is 0 ahead and positive to the left; elevation positive up.

- ``Stereo``: constant-power pan plus the Woodworth interaural time difference
  on the far channel (docs/sources.md A7.7, A7.5).
- ``Binaural``: Brown & Duda (1998) spherical head: per-ear ray-model delay and
  one-pole/one-zero head-shadow filter (docs/sources.md A7.5). No HRTF data.
- ``Ambisonic``: AmbiX (ACN, SN3D, no Condon–Shortley) of order 1 or 3 (docs/sources.md A7.6).
- ``Vbap``: Pulkki's vector-base amplitude panning over loudspeaker pairs of a
  horizontal ring, or triangles when speakers are elevated (docs/sources.md A7.7);
  presets ``ring8``,
  ``5.1``, ``7.1`` and ``7.1.4``, with their WAVE_FORMAT_EXTENSIBLE channel masks.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from soundscape.errors import RenderError
from soundscape.sound.ambisonics import acn_channels, sn3d_gains
from soundscape.sound.propagation import Air

__all__ = ["HEAD_RADIUS_M", "LAYOUTS", "MAX_SPEAKERS", "WAV_SPEAKER_BITS", "Ambisonic",
           "Binaural", "ChannelTerms", "Panner", "Stereo", "Vbap", "bs1770_weight", "head_shadow",
           "make_panner", "parse_layout", "wav_channel_mask", "woodworth_itd"]

#: Brown & Duda's average adult head radius (docs/sources.md A7.5).
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

    @property
    def channels(self) -> tuple[str, ...]: ...

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms: ...

    def loudness_weights(self) -> np.ndarray: ...


def woodworth_itd(azimuth_deg: float, elevation_deg: float = 0.0, *,
                  radius_m: float = HEAD_RADIUS_M, speed_of_sound: float = _DEFAULT_C
                  ) -> float:
    """Woodworth ITD (a/c)·(ψ + sin ψ), ψ the lateral angle; positive when the source is left.

    docs/sources.md A7.5: 656 µs at 90° for a = 8.75 cm, c = 343 m/s.
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
    """α(θ) = (1 + α_min/2) + (1 − α_min/2)·cos(θ/θ_min·180°) (docs/sources.md A7.5)."""
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
    with the Woodworth ITD added to the far channel (docs/sources.md A7.7, A7.5)."""

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
    """Brown & Duda spherical head: per-ear delay and head-shadow filter (docs/sources.md A7.5)."""

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
        """W only: B-format has no BS.1770 definition (docs/sources.md A8); W is the omni mix."""
        weights = np.zeros(len(self.channels))
        weights[0] = 1.0
        return weights


#: Most loudspeakers a layout may have (a file's channels; WAV masks name 18 positions).
MAX_SPEAKERS = 64
_SAME_DIRECTION_DEG = 1.0  # two speakers closer than this are the same speaker


@dataclass(frozen=True)
class Vbap:
    """VBAP over loudspeakers (Pulkki 1997; docs/sources.md A7.7): 2-D over the pairs of a
    horizontal ring, 3-D over the triangles of the convex hull of the speaker directions when
    some are elevated (with an imaginary speaker at the nadir if none is below, whose gain is
    dropped, as IEM's AllRADecoder asks; the rest are rescaled to constant power).

    Parameters
    ----------
    azimuths_deg : tuple of float, degrees
        One per loudspeaker, 0 ahead, positive left, finite, in −360…360.
    names : tuple of str
        Channel names, same length.
    silent : tuple of str
        Channels that take no panned signal (the LFE).
    elevations_deg : tuple of float or None, degrees
        One per loudspeaker, −90…90; None: all on the horizon.
    """

    azimuths_deg: tuple[float, ...]
    names: tuple[str, ...]
    silent: tuple[str, ...] = ()
    elevations_deg: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        _check_speakers(self.azimuths_deg, self.elevations_deg, self.names, self.silent)
        if self.elevations_deg is not None and any(self.elevations_deg):
            _ = self._triangles  # a layout with no 3-D hull is refused now, not mid-render

    @property
    def channels(self) -> tuple[str, ...]:
        return self.names

    def _elevation(self, i: int) -> float:
        return 0.0 if self.elevations_deg is None else self.elevations_deg[i]

    def _active(self) -> list[int]:
        live = [i for i, n in enumerate(self.names) if n not in self.silent]
        return sorted(live, key=lambda i: self.azimuths_deg[i] % 360.0)

    @functools.cached_property
    def _triangles(self) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """3-D: (speaker indices, inverse of their direction matrix) per hull triangle; −1 is
        the imaginary nadir."""
        live = self._active()
        vectors = [_unit(self.azimuths_deg[i], self._elevation(i)) for i in live]
        if not any(self._elevation(i) < -10.0 for i in live):
            live, vectors = [*live, -1], [*vectors, _unit(0.0, -90.0)]
        if not any(self._elevation(i) > 10.0 for i in live if i >= 0):
            # likewise overhead: else the hull's top face passes through the listener
            live, vectors = [*live, -1], [*vectors, _unit(0.0, 90.0)]
        try:
            hull = ConvexHull(np.array(vectors))
        except QhullError:  # all in one plane through the listener: no triangles around
            raise RenderError(
                f"loudspeaker layout {', '.join(f'{a:g}' for a in self.azimuths_deg[:8])}: "
                "elevated speakers that span no space around the listener (all in one "
                "plane with the zenith and nadir); accepted: speakers in more than one "
                "direction around, or all on the horizon") from None
        bases = [np.array([vectors[k] for k in tri]) for tri in hull.simplices]
        return [(tuple(live[k] for k in tri), np.linalg.inv(base))
                for tri, base in zip(hull.simplices, bases, strict=True)
                if abs(np.linalg.det(base)) > 1e-9]

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        if self.elevations_deg is not None and any(self.elevations_deg):
            return self._terms_3d(azimuth_deg, elevation_deg)
        p = np.array([math.cos(math.radians(azimuth_deg)), math.sin(math.radians(azimuth_deg))])
        ring = self._active()
        gains = np.zeros(len(self.names))
        across = self._across_gap(azimuth_deg, ring, gains)
        if across is not None:
            return across
        best = None
        for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
            if (self.azimuths_deg[b] - self.azimuths_deg[a]) % 360.0 >= 180.0:
                continue  # a gap no pair can pan across (handled above)
            base = np.array([[math.cos(math.radians(self.azimuths_deg[i])),
                              math.sin(math.radians(self.azimuths_deg[i]))] for i in (a, b)])
            if abs(np.linalg.det(base)) < 1e-9:
                continue
            g = p @ np.linalg.inv(base)  # g = pᵀ·L12⁻¹
            if best is None or g.min() > best[2].min():
                best = (a, b, g)
        if best is None:  # every pair coincides or leaves a gap: nothing pans here
            shown = ", ".join(f"{x:g}" for x in self.azimuths_deg[:8])
            raise RenderError(f"loudspeaker layout {shown}: no pair of speakers pans to "
                              f"azimuth {azimuth_deg:g}°")
        a, b, g = best
        g = np.clip(g, 0.0, None)
        g = g / math.sqrt(float(g @ g))  # constant power
        gains[a] += g[0]
        gains[b] += g[1]
        return ChannelTerms(gains)

    def _across_gap(self, azimuth_deg: float, ring: list[int], gains: np.ndarray
                    ) -> ChannelTerms | None:
        """Over a gap of 180° or more between ring neighbours (a pair 30,-30 seen from
        behind), pairwise VBAP has no solution: fade from the gap's first speaker to its last
        at constant power, by the angle travelled across it; None when not in such a gap."""
        here = azimuth_deg % 360.0
        for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
            arc = (self.azimuths_deg[b] - self.azimuths_deg[a]) % 360.0
            travelled = (here - self.azimuths_deg[a]) % 360.0
            if arc >= 180.0 and travelled <= arc:
                t = travelled / arc * math.pi / 2
                gains[a] += math.cos(t)
                gains[b] += math.sin(t)
                return ChannelTerms(gains)
        return None

    def _terms_3d(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        p = _unit(azimuth_deg, elevation_deg)
        scores = [(p @ inverse, speakers) for speakers, inverse in self._triangles]
        g, speakers = max(scores, key=lambda score: score[0].min())
        gains = np.zeros(len(self.names))
        for speaker, gain in zip(speakers, np.clip(g, 0.0, None), strict=True):
            if speaker >= 0:
                gains[speaker] += gain
        power = math.sqrt(float(gains @ gains))
        return ChannelTerms(gains / power if power > 0 else gains)

    def loudness_weights(self) -> np.ndarray:
        return np.array([0.0 if n in self.silent else bs1770_weight(az, self._elevation(i))
                         for i, (az, n) in enumerate(zip(self.azimuths_deg, self.names,
                                                         strict=True))])


def _unit(azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def _check_speakers(azimuths: tuple[float, ...], elevations: tuple[float, ...] | None,
                    names: tuple[str, ...], silent: tuple[str, ...]) -> None:
    """Refuse a layout VBAP cannot pan over, naming the speaker and what is accepted."""
    where = f"loudspeaker layout {', '.join(f'{a:g}' for a in azimuths[:8])}" + (
        " …" if len(azimuths) > 8 else "")
    if len(names) != len(azimuths) or (elevations is not None
                                       and len(elevations) != len(azimuths)):
        raise RenderError(f"{where}: {len(azimuths)} azimuths, {len(names)} names"
                          f"{'' if elevations is None else f', {len(elevations)} elevations'}")
    if not 2 <= len(azimuths) <= MAX_SPEAKERS:
        raise RenderError(f"{where}: {len(azimuths)} loudspeakers, accepted: 2 to "
                          f"{MAX_SPEAKERS}")
    elevations = elevations or (0.0,) * len(azimuths)
    for i, (az, el) in enumerate(zip(azimuths, elevations, strict=True)):
        if not (math.isfinite(az) and -360.0 <= az <= 360.0):
            raise RenderError(f"{where}: speaker {i + 1} azimuth {az!r}, accepted: a finite "
                              "angle in -360 to 360 degrees")
        if not (math.isfinite(el) and -90.0 <= el <= 90.0):
            raise RenderError(f"{where}: speaker {i + 1} elevation {el!r}, accepted: -90 to 90 "
                              "degrees")
    live = [i for i, n in enumerate(names) if n not in silent]
    for k, i in enumerate(live):
        for j in live[k + 1:]:
            cosine = float(_unit(azimuths[i], elevations[i]) @ _unit(azimuths[j], elevations[j]))
            if cosine > math.cos(math.radians(_SAME_DIRECTION_DEG)):
                raise RenderError(f"{where}: speakers {i + 1} and {j + 1} stand in the same "
                                  f"direction ({azimuths[i]:g}°, {azimuths[j]:g}°); each "
                                  "needs its own")
    if len(live) < 2:
        raise RenderError(f"{where}: {len(live)} panned loudspeakers; need ≥ 2")


#: WAVE_FORMAT_EXTENSIBLE speaker bits (KSMEDIA.H ``SPEAKER_*``; docs/sources.md A7.8) of the
#: channel names the presets use; a file's channels must come in increasing bit order.
WAV_SPEAKER_BITS = {"L": 0x1, "R": 0x2, "C": 0x4, "LFE": 0x8, "Ls": 0x10, "Rs": 0x20,
                    "Lrs": 0x10, "Rrs": 0x20, "Lss": 0x200, "Rss": 0x400,
                    "Ltf": 0x1000, "Rtf": 0x4000, "Ltr": 0x8000, "Rtr": 0x20000}


def wav_channel_mask(panner: Panner) -> int:
    """The WAVE_FORMAT_EXTENSIBLE ``dwChannelMask`` of a panner's channels: speaker bits
    for named loudspeaker layouts (stereo and binaural are front left and right); 0 (no
    speaker positions) for ambisonics, rings and custom lists."""
    if isinstance(panner, Stereo | Binaural):
        return 0x3
    bits = [WAV_SPEAKER_BITS.get(name, 0) for name in panner.channels]
    if isinstance(panner, Vbap) and all(bits) and bits == sorted(set(bits)):
        return sum(bits)
    return 0


#: Layout presets for ``--layout`` (channel order as files carry them).
_RING8 = Vbap(tuple(float(a) for a in range(0, 360, 45)),
              tuple(f"A{a:03d}" for a in range(0, 360, 45)))
# 5.1 in WAV order L R C LFE Ls Rs, ITU-R BS.775 angles (surrounds at ±110°).
_FIVE_ONE = Vbap((30.0, -30.0, 0.0, 0.0, 110.0, -110.0),
                 ("L", "R", "C", "LFE", "Ls", "Rs"), silent=("LFE",))
# 7.1 and 7.1.4: ITU-R BS.2051-3 Systems I (0+7+0) and J (4+7+0) (docs/sources.md A7.8),
# in WAV channel order
# (rear surrounds Lrs/Rrs at ±135° before side surrounds Lss/Rss at ±90°; the four height
# speakers at ±45° front and ±135° rear, 30° up).
_SEVEN_ONE = Vbap((30.0, -30.0, 0.0, 0.0, 135.0, -135.0, 90.0, -90.0),
                  ("L", "R", "C", "LFE", "Lrs", "Rrs", "Lss", "Rss"), silent=("LFE",))
_SEVEN_ONE_FOUR = Vbap(
    (*_SEVEN_ONE.azimuths_deg, 45.0, -45.0, 135.0, -135.0),
    (*_SEVEN_ONE.names, "Ltf", "Rtf", "Ltr", "Rtr"), silent=("LFE",),
    elevations_deg=(0.0,) * 8 + (30.0,) * 4)

LAYOUTS = ("stereo", "binaural", "foa", "hoa3", "ring8", "5.1", "7.1", "7.1.4", "stems")


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
                                  "ring8": _RING8, "5.1": _FIVE_ONE, "7.1": _SEVEN_ONE,
                                  "7.1.4": _SEVEN_ONE_FOUR}
    try:
        return presets[layout]
    except KeyError:
        raise RenderError(
            f"layout={layout!r}, accepted: {', '.join(LAYOUTS)} or loudspeaker azimuths "
            "like 30,-30,0,110,-110") from None


def parse_layout(text: str, names: Sequence[str] = LAYOUTS) -> str | tuple[float, ...]:
    """A ``--layout`` value: one of ``names`` (tried first: ``7.1`` is a name, not an angle)
    or a comma-separated list of 2 to ``MAX_SPEAKERS`` distinct loudspeaker azimuths,
    checked through ``make_panner`` so that a bad one is refused before any work. ``names``
    are what the verb takes (a render also writes ADM masters, play no stems)."""
    if text in names:
        return text
    shown = repr(text if len(text) <= 40 else text[:40] + "…")
    accepted = (f"a layout name ({', '.join(names)}) or 2 to {MAX_SPEAKERS} loudspeaker "
                "azimuths in degrees like 30,-30,0,110,-110")
    try:
        azimuths = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise RenderError(f"--layout {shown}, accepted: {accepted}") from None
    if len(azimuths) < 2:
        raise RenderError(f"--layout {shown}, accepted: {accepted}")
    try:
        make_panner(azimuths)
    except RenderError as error:
        raise RenderError(f"--layout {shown}: {str(error).split(': ', 1)[1]}") from None
    return azimuths
