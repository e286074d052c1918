"""Loudspeaker layouts as integrators have them, and the panner that feeds them.

A ``SpeakerLayout`` is a list of loudspeakers (azimuth 0 ahead and positive to the
left, elevation up, radius, output channel numbered from 1, linear gain, and
*imaginary* speakers that take part in the panning but have no output), read or
written in the IEM Plug-in Suite's AllRADecoder JSON format (``LoudspeakerLayout``
with ``Loudspeakers[]`` of ``Azimuth``, ``Elevation``, ``Radius``, ``IsImaginary``,
``Channel``, ``Gain``; IEM uses the same azimuth convention), or given as an az/el list
(``30:0,-30:0,110:0,-110:0,45:40``).

Every layout is panned by ``soundscape.sound.panning.Vbap`` (Pulkki 1997: 2-D over a
horizontal ring, 3-D over the triangles of the convex hull of the speaker directions,
with an imaginary speaker at the nadir when none is below); named layouts (5.1, 7.1,
7.1.4, ring8 …) are its presets. Here the speakers are routed to their channels (gaps stay
silent), given their gains, and imaginary speakers of a layout file take part in the
panning but their share is dropped and the rest rescaled to constant power.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from soundscape import validate
from soundscape.errors import RenderError
from soundscape.fileio import read_json, write_text
from soundscape.kit import KitError
from soundscape.sound.panning import (
    LAYOUTS,
    ChannelTerms,
    Panner,
    Vbap,
    bs1770_weight,
    make_panner,
    wav_channel_mask,
)

__all__ = ["Speaker", "SpeakerLayout", "channel_mask", "layout_from_text", "panner_for",
           "read_iem", "write_iem"]

#: Layouts panned by ``soundscape.sound.panning`` as they are (not loudspeaker feeds).
FORMAT_LAYOUTS = ("stereo", "binaural", "foa", "hoa3")
_MAX_CHANNEL = 256
_MAX_RADIUS_M = 100.0
_SAME_DIRECTION = math.cos(math.radians(1.0))  # closer than 1°: the same direction


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
    """A named set of loudspeakers; real ones carry distinct channels 1…N. The name is an
    id (``validate.ID``): the kit names files after it, so it is never a path."""

    name: str
    speakers: tuple[Speaker, ...]

    def __post_init__(self) -> None:
        validate.ident(self.name, key="layout name", where="--layout", error=KitError)
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



@dataclass(frozen=True)
class _Routed:
    """``panning.Vbap`` over the layout's speakers (real and imaginary), routed to the real
    speakers' channels with their gains; an imaginary speaker's share is dropped and the
    rest rescaled to constant power, as IEM's AllRADecoder does."""

    inner: Vbap
    layout: SpeakerLayout
    order: tuple[int, ...]  # output channel of each of the inner panner's speakers; −1: none

    @property
    def channels(self) -> tuple[str, ...]:
        return self.layout.channel_names()

    def terms(self, azimuth_deg: float, elevation_deg: float) -> ChannelTerms:
        inner = self.inner.terms(azimuth_deg, elevation_deg).gains
        gains = np.zeros(self.layout.width)
        for index, gain in zip(self.order, inner, strict=True):
            if index >= 0:
                gains[index] += gain
        power = math.sqrt(float(gains @ gains))
        if power > 0:
            gains /= power
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
    """The panner of a format name (stereo, binaural, foa, hoa3) or a loudspeaker layout:
    ``soundscape.sound.panning.Vbap`` (2-D on a horizontal ring, 3-D otherwise)."""
    if isinstance(layout, str):
        return make_panner(layout)
    panned: list[Speaker] = []
    for s in layout.speakers:  # a later speaker in an earlier one's direction takes no
        # panned signal: the LFE of a 5.1 read back from a file (IEM files name no channel)
        if s.name != "LFE" and not any(
                float(s.vector() @ t.vector()) > _SAME_DIRECTION for t in panned):
            panned.append(s)
    if len(panned) < 2:  # nothing to pan over: let Vbap name the speakers that coincide
        panned = [s for s in layout.speakers if s.name != "LFE"]
    elevations = tuple(s.elevation for s in panned)
    inner = Vbap(tuple(s.azimuth for s in panned), tuple(f"s{i}" for i in range(len(panned))),
                 elevations_deg=elevations if any(elevations) else None)
    return _Routed(inner, layout, tuple(-1 if s.imaginary else s.channel - 1 for s in panned))


def channel_mask(layout: str | SpeakerLayout) -> int:
    """The WAVE_FORMAT_EXTENSIBLE ``dwChannelMask`` of a layout's feed, as ``soundscape
    render`` writes it (``panning.wav_channel_mask``): front left and right for stereo and
    binaural, the speaker bits of a named loudspeaker preset (5.1, 7.1, 7.1.4) when the
    layout is that preset as it stands, 0 (no speaker positions) for ambisonics, rings,
    az/el lists and layout files."""
    if isinstance(layout, str):
        return wav_channel_mask(make_panner(layout))
    named = layout.name in LAYOUTS and layout.name not in (*FORMAT_LAYOUTS, "stems")
    if named and layout == preset(layout.name):
        return wav_channel_mask(make_panner(layout.name))
    return 0


def preset(name: str) -> SpeakerLayout:
    """A loudspeaker layout of ``soundscape.sound.panning`` (5.1, ring8 …) as speakers."""
    panner = make_panner(name)
    if not isinstance(panner, Vbap):
        raise KitError(f"layout {name!r} is not a loudspeaker layout")
    elevations = panner.elevations_deg or (0.0,) * len(panner.names)
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
    return _pannable(lambda: SpeakerLayout("custom", tuple(speakers)), f"--layout {text!r}")


def _pannable(make, where: str) -> SpeakerLayout:
    """The layout ``make()`` builds, refused (naming ``where``) unless VBAP can pan over
    it: at least two real speakers on their own channels, in distinct directions, with a
    hull around the listener when some are elevated."""
    try:
        layout = make()
        panner_for(layout)
    except (KitError, RenderError) as error:
        raise KitError(f"{where}: {error}") from None
    return layout


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
    data = read_json(path, KitError)
    layout = data.get("LoudspeakerLayout") if isinstance(data, dict) else None
    if not isinstance(layout, dict) or not isinstance(layout.get("Loudspeakers"), list):
        raise KitError(f"{path}: no LoudspeakerLayout.Loudspeakers list (IEM AllRADecoder "
                       "JSON layout expected)")
    speakers = []
    for i, entry in enumerate(layout["Loudspeakers"]):
        where = f"{path}: LoudspeakerLayout.Loudspeakers[{i}]"
        speakers.append(_entry(entry, where))
    return _pannable(lambda: SpeakerLayout(
        _name_id(layout.get("Name") or data.get("Name"), path.stem), tuple(speakers)),
        str(path))


def _name_id(name: Any, stem: str) -> str:
    """An IEM ``Name`` (free text: ``IEM CUBE``, or a hostile ``/../../x``) as an id: lower
    case, other characters run together as ``-``, cut to 64; else the file's stem, else
    ``layout``."""
    for text in (name, stem):
        if isinstance(text, str):
            slug = re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-._")[:64].rstrip("-._")
            if slug:
                return slug
    return "layout"


def _entry(entry: Any, where: str) -> Speaker:
    if not isinstance(entry, dict):
        raise KitError(f"{where}: {entry!r} is not an object")
    values = {}
    for key, default in (("Azimuth", None), ("Elevation", None), ("Radius", 1.0),
                         ("Channel", 0), ("Gain", 1.0)):
        value = entry.get(key, default)
        if not validate.is_finite(value):
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
