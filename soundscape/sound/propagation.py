"""Outdoor propagation from a source to a listener: delay, spreading, air, reflections.

Every sound reaches the listener along a few paths — the direct one, one
bounce off the courtyard floor and one off the front of the hall — each an
image source with its own distance, delay, gain and air absorption
(docs/sources.md A7.1–7.4). Paths are computed once per event (at its onset);
the renderer turns them into filters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from soundscape.errors import RenderError
from soundscape.geometry import Vec3
from soundscape.physics import speed_of_sound
from soundscape.sound.court import Court

__all__ = ["REFERENCE_DB", "Air", "Path", "Surroundings", "absorption_on_grid",
           "drum_directivity", "paths"]

#: Level that maps to amplitude 1.0 in a render, dB SPL (94 dB SPL = 1 Pa).
REFERENCE_DB = 94.0


# ISO 9613-1:1993 constants (docs/sources.md A7.3).
_T0 = 293.15  # K, reference temperature
_T01 = 273.16  # K, triple point of water
_P_REF = 101.325  # kPa


@dataclass(frozen=True, slots=True)
class Air:
    """The air of the courtyard.

    Parameters
    ----------
    temperature_c : float, °C
    humidity_pct : float in (0, 100], % relative humidity
    pressure_kpa : float > 0, kPa
    """

    temperature_c: float = 20.0
    humidity_pct: float = 50.0
    pressure_kpa: float = _P_REF

    def __post_init__(self) -> None:
        if not -40.0 <= self.temperature_c <= 50.0:
            raise RenderError(f"temperature={self.temperature_c!r} °C, accepted: -40 to 50")
        if not 0.0 < self.humidity_pct <= 100.0:
            raise RenderError(f"humidity={self.humidity_pct!r} %, accepted: (0, 100]")
        if not self.pressure_kpa > 0:
            raise RenderError(f"pressure={self.pressure_kpa!r} kPa must be > 0")

    @property
    def speed_of_sound(self) -> float:
        """Metres per second at this air's temperature (``soundscape.physics``)."""
        return speed_of_sound(self.temperature_c)

    def absorption_db_per_m(self, freq_hz: np.ndarray | float) -> np.ndarray:
        """Pure-tone atmospheric absorption α in dB/m, ISO 9613-1:1993 (docs/sources.md A7.3).

        Parameters
        ----------
        freq_hz : array_like, Hz

        Returns
        -------
        ndarray, dB per metre
        """
        f = np.asarray(freq_hz, dtype=float)
        t = self.temperature_c + 273.15
        pa = self.pressure_kpa / _P_REF
        c_sat = -6.8346 * (_T01 / t) ** 1.261 + 4.6151
        h = self.humidity_pct * 10.0**c_sat / pa
        fr_o = pa * (24.0 + 4.04e4 * h * (0.02 + h) / (0.391 + h))
        fr_n = pa * (t / _T0) ** -0.5 * (
            9.0 + 280.0 * h * math.exp(-4.170 * ((t / _T0) ** (-1.0 / 3.0) - 1.0)))
        relax = (0.01275 * math.exp(-2239.1 / t) / (fr_o + f**2 / fr_o)
                 + 0.1068 * math.exp(-3352.0 / t) / (fr_n + f**2 / fr_n))
        return 8.686 * f**2 * (1.84e-11 / pa * (t / _T0) ** 0.5 + (t / _T0) ** -2.5 * relax)


@dataclass(frozen=True, slots=True)
class Surroundings:
    """The air and the surfaces that reflect.

    Parameters
    ----------
    air : Air
    near_field_m : float > 0, metres
        Spreading is clamped at this distance so a source at the ear does not blow up.
    reference_db : float, dB SPL
        Level that maps to amplitude 1.0 (94 dB SPL = 1 Pa).
    ground : bool
        Add the image source under the floor (docs/sources.md A7.4).
    ground_coefficient : float in [0, 1]
        Pressure reflection coefficient of the floor. EST 0.9: rammed earth or
        paving is nearly rigid (docs/sources.md A7.4, "EST for a Zhou courtyard").
    hall : bool
        Add the image source behind the front of the hall (the plane y = ``hall_front_y``).
    hall_front_y : float, metres
        The hall's front edge; the site origin is its middle, so 0.
    hall_coefficient : float in [0, 1]
        EST 0.5: the 堂 front is a raised base, open between pillars, with the
        walls behind; only part of the sound comes back (rammed-earth walls
        reflect ≈ 0.9, docs/sources.md A7.4).
    court : soundscape.sound.court.Court or None
        The walled court: when given, its early image sources replace the floor and hall
        reflections above (``ground``, ``hall`` and their coefficients are then unused), and
        the render adds its late tail (``sound.tail``).
    walls_only : bool
        Only the paths off the walls and the hall: not the direct path nor the floor's (the
        ADM master's objects carry those; its bed carries these). A source whose walls send
        nothing keeps its direct path at gain 0: a filter of zeros.
    """

    air: Air = field(default_factory=Air)
    near_field_m: float = 0.5
    reference_db: float = REFERENCE_DB
    ground: bool = True
    ground_coefficient: float = 0.9
    hall: bool = True
    hall_front_y: float = 0.0
    hall_coefficient: float = 0.5
    court: Court | None = None
    walls_only: bool = False

    def __post_init__(self) -> None:
        if not self.near_field_m > 0:
            raise RenderError(f"near_field_m={self.near_field_m!r} must be > 0")
        for name in ("ground_coefficient", "hall_coefficient"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise RenderError(f"{name}={value!r}, accepted: 0 to 1")


@dataclass(frozen=True, slots=True)
class Path:
    """One way a sound reaches the listener.

    Parameters
    ----------
    point : Vec3, metres
        The (image) source the sound seems to come from.
    distance : float, metres
        Path length; delay = distance / c.
    gain : float
        Spreading × reflection coefficient × directivity (amplitude, 1 at 1 m).
    kind : str
        ``direct``, ``ground`` or ``hall``; in a court ``image<n>`` (n bounces).
    """

    point: Vec3
    distance: float
    gain: float
    kind: str


def drum_directivity(struck_face: Vec3 | None, toward: np.ndarray) -> float:
    """Amplitude gain of a drum toward a direction, from its struck face.

    A struck head radiates most along its outward normal; the far head of a
    two-headed drum and the shell still radiate behind. EST pattern
    g = 0.7 + 0.3·cos θ (θ between the face normal and the direction): 0 dB in
    front, −3 dB to the side, −8 dB behind — a gentle first-order pattern, not a
    measured one (docs/sources.md A3 has no drum radiation data).

    Parameters
    ----------
    struck_face : Vec3 or None
        Outward unit normal of the struck head; None → omnidirectional (1.0).
    toward : ndarray (3,)
        Direction from the source toward the receiver (any length > 0).
    """
    if struck_face is None:
        return 1.0
    normal = np.asarray(struck_face, dtype=float)
    cos_theta = float(normal @ toward) / float(np.linalg.norm(normal) * np.linalg.norm(toward))
    return 0.7 + 0.3 * cos_theta


def paths(source: Vec3, listener: Vec3, *, surroundings: Surroundings,
          struck_face: Vec3 | None = None) -> list[Path]:
    """The direct path and the enabled single reflections from ``source`` to ``listener``.

    Parameters
    ----------
    source, listener : Vec3, metres
    surroundings : Surroundings
    struck_face : Vec3 or None
        For drums: the outward normal of the struck head (see ``drum_directivity``).

    Returns
    -------
    list of Path
        Direct path first. A reflection is included only when both ends are on
        the reflecting side of its plane (above the floor, south of the hall front).
    """
    s = np.asarray(source, dtype=float)
    ear = np.asarray(listener, dtype=float)
    found = (_court_paths(s, ear, surroundings, surroundings.court, struck_face)
             if surroundings.court is not None else _plain_paths(s, ear, surroundings, struck_face))
    if not surroundings.walls_only:
        return found
    walls = [path for path in found if path.kind != "direct" and not _off_the_floor(path, s)]
    return walls or [replace(found[0], gain=0.0)]


def _off_the_floor(path: Path, source: np.ndarray) -> bool:
    """Whether ``path`` is the floor's reflection: its image under the source, once bounced."""
    return path.kind == "ground" or (path.kind == "image1" and bool(np.allclose(
        path.point[:2], source[:2], rtol=0.0, atol=1e-6)))


def _plain_paths(s: np.ndarray, ear: np.ndarray, surroundings: Surroundings,
                 struck_face: Vec3 | None) -> list[Path]:
    """The direct path, the floor's and the hall front's, without a court."""
    out = [_path(s, s, ear, surroundings, struck_face, 1.0, "direct", None)]
    if surroundings.ground and s[2] > 0 and ear[2] > 0:
        image = s * np.array([1.0, 1.0, -1.0])
        out.append(_path(s, image, ear, surroundings, struck_face,
                         surroundings.ground_coefficient, "ground", 2))
    front = surroundings.hall_front_y
    if surroundings.hall and s[1] < front and ear[1] < front:
        image = s.copy()
        image[1] = 2 * front - s[1]
        out.append(_path(s, image, ear, surroundings, struck_face,
                         surroundings.hall_coefficient, "hall", 1))
    return out


def check_within(surroundings: Surroundings, point, what: str) -> None:
    """Refuse ``what`` (a listener, an impulse's source) outside the court's walls: the image
    sources are those of a point inside the box (outside it they mirror it through walls it
    stands behind: 79 m east of the court, an impulse response measured EDT 5.3 s)."""
    court = surroundings.court
    if court is None:
        return
    e = court.enclosure
    x, y, z = (float(v) for v in point)
    if e.west <= x <= e.east and e.gate <= y <= e.north:
        return
    raise RenderError(
        f"{what} at ({x:.1f}, {y:.1f}, {z:.1f}) m is outside the court's walls (x {e.west:.1f} "
        f"to {e.east:.1f} m, y {e.gate:.1f} to {e.north:.1f} m): the model's echoes and tail "
        "are those of a place within them (walls, not sound bent over them); choose a place "
        "within the walls, or --court none")


#: The octave band whose reflection factor an early path carries (the spatialiser's paths
#: have one gain; air absorption is applied per bin on top).
_PATH_BAND = 3  # 1 kHz


def _court_paths(s: np.ndarray, ear: np.ndarray, surroundings: Surroundings, court: Court,
                 struck_face: Vec3 | None) -> list[Path]:
    """The direct sound and the court's early images (``Court.split``), direct first."""
    speed = surroundings.air.speed_of_sound
    reach = float(np.linalg.norm(ear - s)) + court.model.early_ms * 1e-3 * speed + 1e-6
    images = court.images(s, ear, reach_m=reach)
    early = np.flatnonzero(court.split(images, speed))
    if not len(early):  # the direct sound and every early image stopped by a wall's top
        e = court.enclosure
        raise RenderError(
            f"no sound reaches ({ear[0]:.1f}, {ear[1]:.1f}, {ear[2]:.1f}) m from "
            f"({s[0]:.1f}, {s[1]:.1f}, {s[2]:.1f}) m: the court's walls stand between them "
            f"(its walls: x {e.west:.1f} to {e.east:.1f} m, y {e.gate:.1f} to {e.north:.1f} m; "
            "a model of walls, not of sound bent over them); listen from within the walls, or "
            "with --court none")
    early = early[np.argsort(images.distance[early], kind="stable")]
    return [_path(s, images.points[i], ear, surroundings, struck_face,
                  float(images.amplitude[i, _PATH_BAND]),
                  "direct" if images.order[i] == 0 else f"image{images.order[i]}",
                  images.signs[i]) for i in early]


def _path(source: np.ndarray, image: np.ndarray, ear: np.ndarray, surroundings: Surroundings,
          struck_face: Vec3 | None, coefficient: float, kind: str,
          axis: int | np.ndarray | None) -> Path:
    arrival = ear - image
    distance = float(np.linalg.norm(arrival))
    leaving = arrival.copy()  # the ray as it leaves the real source: the arrival, mirrored back
    if isinstance(axis, np.ndarray):  # per-axis signs of a many-bounce image
        leaving *= axis
    elif axis is not None:
        leaving[axis] = -leaving[axis]
    spread = 1.0 / max(distance, surroundings.near_field_m)  # p ∝ 1/r (docs/sources.md A7.2)
    directivity = drum_directivity(struck_face, leaving) if distance > 0 else 1.0
    point = (float(image[0]), float(image[1]), float(image[2]))
    return Path(point, distance, coefficient * spread * directivity, kind)


def absorption_on_grid(air: Air, n_fft: int, sample_rate: int) -> np.ndarray:
    """α (dB/m) at the rfft bins of an ``n_fft``-point transform (the spatialiser keeps its
    grids' own, in float32)."""
    return air.absorption_db_per_m(np.fft.rfftfreq(n_fft, 1.0 / sample_rate))
