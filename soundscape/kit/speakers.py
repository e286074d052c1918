"""Loudspeaker layouts as integrators have them, and the panner that feeds them.

A ``SpeakerLayout`` is a list of loudspeakers (azimuth 0 ahead and positive to the
left, elevation up, radius, output channel numbered from 1, linear gain, and
*imaginary* speakers that take part in the panning but have no output), read or
written in the IEM Plug-in Suite's AllRADecoder JSON format (``LoudspeakerLayout``
with ``Loudspeakers[]`` of ``Azimuth``, ``Elevation``, ``Radius``, ``IsImaginary``,
``Channel``, ``Gain``; IEM uses the same azimuth convention), or given as an az/el list
(``30:0,-30:0,110:0,-110:0,45:40``).

Named layouts reuse ``soundscape.sound.panning`` (stereo, binaural, foa, hoa3, 5.1,
ring8 …): a horizontal layout is panned by its 2-D VBAP; a layout with elevated or
imaginary speakers by ``Vbap3`` (Pulkki 1997, 3-D: triangles of the convex hull of
the speaker directions). A layout with no speaker below the ear gets an imaginary one at
the nadir (as IEM's AllRADecoder asks you to add), so sounds below the horizon stay in
a triangle; the gains of imaginary speakers are dropped and the rest rescaled to constant
power.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial import ConvexHull

from soundscape.fileio import write_text
from soundscape.kit import KitError
from soundscape.sound.panning import (
    LAYOUTS,
    ChannelTerms,
    Panner,
    Vbap,
    bs1770_weight,
    make_panner,
)

__all__ = ["Speaker", "SpeakerLayout", "Vbap3", "layout_from_text", "panner_for", "read_iem",
           "write_iem"]

#: Layouts panned by ``soundscape.sound.panning`` as they are (not loudspeaker feeds).
FORMAT_LAYOUTS = ("stereo", "binaural", "foa", "hoa3")
_MAX_CHANNEL = 256
_MAX_RADIUS_M = 100.0


@dataclass(frozen=True, slots=True)
class Speaker:
    """One loudspeaker (or an imaginary one: panned to, never fed)."""

    azimuth: float
    elevation: float = 0.0
    radius: float = 1.0
    imaginary: bool = False
    channel: int = 0
    gain: float = 1.0
    name: str = ""

    def vector(self) -> np.ndarray:
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


@dataclass(frozen=True, slots=True)
class SpeakerLayout:
    """A named set of loudspeakers; real ones carry distinct channels 1…N."""

    name: str
    speakers: tuple[Speaker, ...]

    def __post_init__(self) -> None:
        real = [s.channel for s in self.speakers if not s.imaginary]
        if len(real) < 2:
            raise KitError(f"layout {self.name!r}: {len(real)} real loudspeakers; need ≥ 2")
        if len(set(real)) != len(real):
            raise KitError(f"layout {self.name!r}: channels {sorted(real)} repeat; each real "
                           "loudspeaker needs its own channel")

    @property
    def width(self) -> int:
        """Channels of the feed: the highest channel number (gaps stay silent)."""
        return max(s.channel for s in self.speakers if not s.imaginary)

    def channel_names(self) -> tuple[str, ...]:
        names = [f"CH{i + 1}" for i in range(self.width)]
        for s in self.speakers:
            if not s.imaginary:
                names[s.channel - 1] = s.name or f"CH{s.channel}"
        return tuple(names)

    def is_horizontal(self) -> bool:
        return all(abs(s.elevation) < 1e-9 and not s.imaginary for s in self.speakers)


class Vbap3:
    """3-D VBAP over the triangles of the convex hull of the speaker directions."""

    def __init__(self, layout: SpeakerLayout) -> None:
        speakers = list(layout.speakers)
        if not any(s.elevation < -10.0 for s in speakers):
            speakers.append(Speaker(0.0, -90.0, imaginary=True, name="nadir"))
        self.layout = layout
        self.channels = layout.channel_names()
        self._speakers = speakers
        vectors = np.array([s.vector() for s in speakers])
        try:
            hull = ConvexHull(vectors)
        except Exception as error:  # qhull: flat or degenerate set
            raise KitError(f"layout {layout.name!r}: loudspeakers do not enclose the listener "
                           f"in 3-D ({error.__class__.__name__}); add speakers above or below "
                           "or imaginary ones") from None
        self._triangles = hull.simplices
        self._inverses = [np.linalg.inv(vectors[t]) for t in hull.simplices]

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        p = Speaker(azimuth_deg, elevation_deg).vector()
        scores = [p @ inv for inv in self._inverses]
        best = max(range(len(scores)), key=lambda i: scores[i].min())
        g = np.clip(scores[best], 0.0, None)
        gains = np.zeros(len(self.channels))
        for index, gain in zip(self._triangles[best], g, strict=True):
            speaker = self._speakers[index]
            if not speaker.imaginary:
                gains[speaker.channel - 1] += gain
        power = math.sqrt(float(gains @ gains))
        if power > 0:
            gains /= power
        return ChannelTerms(gains * _gain_row(self.layout))

    def loudness_weights(self) -> np.ndarray:
        return _weights(self.layout)


@dataclass(frozen=True)
class _Routed:
    """A horizontal layout: 2-D VBAP on the real speakers, routed to their channels."""

    inner: Vbap
    layout: SpeakerLayout
    order: tuple[int, ...]  # channel index of each of the inner panner's outputs

    @property
    def channels(self) -> tuple[str, ...]:
        return self.layout.channel_names()

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        gains = np.zeros(self.layout.width)
        gains[list(self.order)] = self.inner.terms(azimuth_deg, elevation_deg).gains
        return ChannelTerms(gains * _gain_row(self.layout))

    def loudness_weights(self) -> np.ndarray:
        return _weights(self.layout)


def _gain_row(layout: SpeakerLayout) -> np.ndarray:
    row = np.ones(layout.width)
    for s in layout.speakers:
        if not s.imaginary:
            row[s.channel - 1] = s.gain
    return row


def _weights(layout: SpeakerLayout) -> np.ndarray:
    weights = np.zeros(layout.width)
    for s in layout.speakers:
        if not s.imaginary and s.name != "LFE":
            weights[s.channel - 1] = bs1770_weight(s.azimuth, s.elevation)
    return weights


def panner_for(layout: str | SpeakerLayout) -> Panner:
    """The panner of a format name (stereo, binaural, foa, hoa3) or a loudspeaker layout."""
    if isinstance(layout, str):
        return make_panner(layout)
    if layout.is_horizontal():
        real = [s for s in layout.speakers if not s.imaginary and s.name != "LFE"]
        inner = Vbap(tuple(s.azimuth for s in real), tuple(f"s{i}" for i in range(len(real))))
        return _Routed(inner, layout, tuple(s.channel - 1 for s in real))
    return Vbap3(layout)


def preset(name: str) -> SpeakerLayout:
    """A loudspeaker layout of ``soundscape.sound.panning`` (5.1, ring8 …) as speakers."""
    panner = make_panner(name)
    if not isinstance(panner, Vbap):
        raise KitError(f"layout {name!r} is not a loudspeaker layout")
    elevations = getattr(panner, "elevations_deg", None) or (0.0,) * len(panner.names)
    return SpeakerLayout(name, tuple(
        Speaker(az, el, channel=i + 1, name=n)
        for i, (az, el, n) in enumerate(zip(panner.azimuths_deg, elevations, panner.names,
                                            strict=True))))


def layout_from_text(text: str) -> str | SpeakerLayout:
    """A ``--layout`` value: a format name, a panning preset, an IEM JSON file, or an
    az/el list ``az[:el],…`` in degrees (channels in the order given)."""
    if text in FORMAT_LAYOUTS:
        return text
    if text in LAYOUTS and text != "stems":
        return preset(text)
    if text.endswith(".json"):
        return read_iem(text)
    speakers = []
    for i, item in enumerate(text.split(",")):
        parts = item.split(":")
        try:
            az, el = float(parts[0]), float(parts[1]) if len(parts) == 2 else 0.0
            if len(parts) > 2:
                raise ValueError
        except ValueError:
            presets = [x for x in LAYOUTS if x != "stems"]
            raise KitError(
                f"--layout {text!r}: item {i + 1} {item!r}; accepted: {', '.join(presets)}, "
                "an IEM AllRADecoder .json file, or az[:el] degrees like 30:0,-30:0,0:90"
            ) from None
        speakers.append(_checked(az, el, 1.0, i + 1, 1.0, f"--layout item {i + 1}"))
    return SpeakerLayout("custom", tuple(speakers))


def _checked(az: float, el: float, radius: float, channel: int, gain: float, where: str,
             imaginary: bool = False) -> Speaker:
    if not (-360.0 <= az <= 360.0):
        raise KitError(f"{where}: Azimuth={az!r}, accepted: -360 … 360 degrees")
    if not (-90.0 <= el <= 90.0):
        raise KitError(f"{where}: Elevation={el!r}, accepted: -90 … 90 degrees")
    if not (0.0 < radius <= _MAX_RADIUS_M):
        raise KitError(f"{where}: Radius={radius!r}, accepted: > 0 … {_MAX_RADIUS_M} m")
    if not imaginary and not (1 <= channel <= _MAX_CHANNEL):
        raise KitError(f"{where}: Channel={channel!r}, accepted: 1 … {_MAX_CHANNEL}")
    if not (0.0 <= gain <= 10.0):
        raise KitError(f"{where}: Gain={gain!r}, accepted: 0 … 10 (linear)")
    return Speaker(az, el, radius, imaginary, channel, gain)


def read_iem(path: str | Path) -> SpeakerLayout:
    """Read an IEM AllRADecoder / SimpleDecoder layout JSON file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KitError(f"{path}: no such layout file") from None
    except json.JSONDecodeError as error:
        raise KitError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from None
    layout = data.get("LoudspeakerLayout") if isinstance(data, dict) else None
    if not isinstance(layout, dict) or not isinstance(layout.get("Loudspeakers"), list):
        raise KitError(f"{path}: no LoudspeakerLayout.Loudspeakers list (IEM AllRADecoder "
                       "JSON layout expected)")
    speakers = []
    for i, entry in enumerate(layout["Loudspeakers"]):
        where = f"{path}: LoudspeakerLayout.Loudspeakers[{i}]"
        speakers.append(_entry(entry, where))
    return SpeakerLayout(str(layout.get("Name") or data.get("Name") or path.stem),
                         tuple(speakers))


def _entry(entry: Any, where: str) -> Speaker:
    if not isinstance(entry, dict):
        raise KitError(f"{where}: {entry!r} is not an object")
    values = {}
    for key, default in (("Azimuth", None), ("Elevation", None), ("Radius", 1.0),
                         ("Channel", 0), ("Gain", 1.0)):
        value = entry.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
                value):
            raise KitError(f"{where}: {key}={value!r}, accepted: a number")
        values[key] = value
    imaginary = entry.get("IsImaginary", False)
    if not isinstance(imaginary, bool):
        raise KitError(f"{where}: IsImaginary={imaginary!r}, accepted: true or false")
    if values["Channel"] != int(values["Channel"]):
        raise KitError(f"{where}: Channel={values['Channel']!r}, accepted: a whole number")
    return _checked(float(values["Azimuth"]), float(values["Elevation"]),
                    float(values["Radius"]), int(values["Channel"]), float(values["Gain"]),
                    where, imaginary)


def iem_dict(layout: SpeakerLayout, description: str = "") -> dict[str, Any]:
    """The IEM AllRADecoder JSON structure of ``layout``."""
    return {"Name": layout.name, "Description": description or f"soundscape layout "
            f"{layout.name}", "LoudspeakerLayout": {"Name": layout.name, "Loudspeakers": [
                {"Azimuth": s.azimuth, "Elevation": s.elevation, "Radius": s.radius,
                 "IsImaginary": s.imaginary, "Channel": s.channel, "Gain": s.gain}
                for s in layout.speakers]}}


def write_iem(layout: SpeakerLayout, path: str | Path, description: str = "") -> Path:
    """Write ``layout`` as an IEM AllRADecoder JSON layout file (atomically)."""
    return write_text(path, json.dumps(iem_dict(layout, description), indent=2) + "\n")
