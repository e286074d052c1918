"""Where the listener stands and which way they face; directions to sources.

Coordinates follow ``docs/architecture.md``: metres, x east, y north, z up.
In the listener's frame azimuth is 0° straight ahead and positive to the left
(counter-clockwise seen from above), elevation positive upwards — the AmbiX
convention (docs/sources.md A7.6), so the panners take these angles unchanged.

A ``Listener`` stands still; a ``ListenerPath`` walks through waypoints (a
museum visitor crossing the courtyard). Both answer ``at(time)`` with the
listener at that moment, so the renderer treats them alike.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from soundscape import validate
from soundscape.errors import RenderError, SiteError
from soundscape.geometry import Vec3
from soundscape.validate import shown

__all__ = ["COMPASS", "MAX_METRES", "Listener", "ListenerPath", "check_off_platform",
           "checked_position", "facing_vector", "listener_at", "parse_facing", "place_id"]


#: Farthest a listener may stand from the origin on any axis, metres: a courtyard is
#: about a hundred metres across, and nothing of the rite carries a kilometre (far beyond
#: it, squared distances overflow).
MAX_METRES = 1000.0

#: Compass words (as used in cue sheets and site data) to horizontal unit vectors.
COMPASS: dict[str, Vec3] = {
    "north": (0.0, 1.0, 0.0),
    "south": (0.0, -1.0, 0.0),
    "east": (1.0, 0.0, 0.0),
    "west": (-1.0, 0.0, 0.0),
}


def facing_vector(facing: str | float | Sequence[float]) -> Vec3:
    """A horizontal unit vector from a compass word, a bearing or a vector.

    Parameters
    ----------
    facing : str, float or sequence of 2 or 3 floats
        ``north``/``south``/``east``/``west``; a number is a compass bearing in
        degrees (0 north, 90 east); a vector is used for its horizontal part.

    Returns
    -------
    tuple of 3 floats
        Unit vector with z = 0.
    """
    accepted = (f"accepted: {', '.join(COMPASS)}, a finite bearing in degrees or a finite "
                "x,y vector")
    if isinstance(facing, str):
        try:
            return COMPASS[facing.strip().lower()]
        except KeyError:
            raise RenderError(f"facing={shown(facing)}, {accepted}") from None
    if isinstance(facing, int | float) and not isinstance(facing, bool):
        if not validate.is_finite(facing) or abs(facing) > 1e6:  # sin() of 1e300 is noise
            raise RenderError(f"facing={shown(facing)}, {accepted}")
        bearing = math.radians(float(facing))
        return (math.sin(bearing), math.cos(bearing), 0.0)
    if not (isinstance(facing, Sequence) and len(facing) in (2, 3) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in facing)):
        raise RenderError(f"facing={shown(facing)}, {accepted}")
    x, y = float(facing[0]), float(facing[1])
    norm = math.hypot(x, y)
    if not (norm > 0 and math.isfinite(norm)):
        raise RenderError(f"facing={shown(tuple(facing))} has no finite horizontal direction; "
                          f"{accepted}")
    return (x / norm, y / norm, 0.0)


def checked_position(position, what: str) -> Vec3:
    """``position`` as 3 floats, each finite and within ``MAX_METRES`` of the hall; a
    RenderError naming ``what`` (listener, source …) otherwise."""
    numbers = isinstance(position, Sequence) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in position)
    found = tuple(float(v) for v in position) if numbers else ()
    if len(found) != 3 or not all(math.isfinite(v) and abs(v) <= MAX_METRES for v in found):
        raise RenderError(f"{what} position={shown(position)} must be 3 finite "
                          f"metres within {MAX_METRES:g} m of the hall (x, y, z)")
    if found[2] < 0:  # under the court's floor: its bounce would come from above
        raise RenderError(f"{what} position={shown(position)}: its height z must not be "
                          "below the ground (0 m)")
    return found


@dataclass(frozen=True, slots=True)
class Listener:
    """A listener's head: position of the centre of the head and where the nose points.

    Parameters
    ----------
    position : Vec3, metres
        Centre of the head (x east, y north, z up).
    facing : str, float or Vec3
        Where the listener faces; see ``facing_vector``. Stored as a horizontal
        unit vector.
    """

    position: Vec3
    facing: str | float | Sequence[float] = (0.0, 1.0, 0.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", checked_position(self.position, "listener"))
        object.__setattr__(self, "facing", facing_vector(self.facing))

    @property
    def direction(self) -> Vec3:
        """Where the nose points: the unit vector ``facing`` was made into."""
        return cast(Vec3, self.facing)

    def at(self, time: float) -> Listener:
        """The listener at ``time`` seconds (a standing listener does not move)."""
        return self

    def direction_to(self, point: Sequence[float]) -> tuple[float, float, float]:
        """Direction and distance of ``point`` as heard by this listener.

        Parameters
        ----------
        point : Vec3, metres

        Returns
        -------
        azimuth_deg : float, degrees in (-180, 180]
            0 ahead, positive to the left.
        elevation_deg : float, degrees in [-90, 90]
            Positive above the ear plane.
        distance_m : float, metres
        """
        dx = point[0] - self.position[0]
        dy = point[1] - self.position[1]
        dz = point[2] - self.position[2]
        fx, fy, _ = self.direction
        ahead = dx * fx + dy * fy
        left = -dx * fy + dy * fx  # (z × facing) · d
        horizontal = math.hypot(ahead, left)
        azimuth = math.degrees(math.atan2(left, ahead)) if horizontal > 0 else 0.0
        if azimuth <= -180.0:  # atan2(-0.0, -x) gives -180; keep the range (-180, 180]
            azimuth += 360.0
        elevation = math.degrees(math.atan2(dz, horizontal))
        return azimuth, elevation, math.sqrt(horizontal * horizontal + dz * dz)


@dataclass(frozen=True, slots=True)
class ListenerPath:
    """A walking listener: waypoints ``(time s, position, facing)`` sorted by time.

    Between waypoints the position moves linearly and the facing turns along
    the shorter arc; before the first and after the last waypoint the listener
    stands there.
    """

    waypoints: tuple[tuple[float, Vec3, Vec3], ...]

    def __post_init__(self) -> None:
        if not self.waypoints:
            raise RenderError("listener path has no waypoints; give at least one place and time")
        points = tuple((float(t), Listener(p, f)) for t, p, f in self.waypoints)
        times = [t for t, _ in points]
        if not all(math.isfinite(t) for t in times):
            raise RenderError(f"listener path times {times} must be finite seconds")
        if times != sorted(times) or len(set(times)) != len(times):
            raise RenderError(f"listener path times {times} must be strictly increasing")
        object.__setattr__(self, "waypoints",
                           tuple((t, li.position, li.facing) for t, li in points))

    def at(self, time: float) -> Listener:
        """The listener at ``time`` seconds."""
        points = self.waypoints
        if time <= points[0][0]:
            return Listener(points[0][1], points[0][2])
        for (t0, p0, f0), (t1, p1, f1) in itertools.pairwise(points):
            if time < t1:
                w = (time - t0) / (t1 - t0)
                position = (p0[0] + w * (p1[0] - p0[0]), p0[1] + w * (p1[1] - p0[1]),
                            p0[2] + w * (p1[2] - p0[2]))
                a0, a1 = math.atan2(f0[1], f0[0]), math.atan2(f1[1], f1[0])
                turn = (a1 - a0 + math.pi) % (2 * math.pi) - math.pi
                angle = a0 + w * turn
                return Listener(position, (math.cos(angle), math.sin(angle), 0.0))
        return Listener(points[-1][1], points[-1][2])


def place_id(site, name: str) -> str:
    """The id of a place of ``site`` named by id (``gong_wei``) or Chinese name (公席)."""
    if name in site.places:
        return name
    for place in site.places.values():
        if name == place.name:
            return place.id
    known = ", ".join(f"{p.id} {p.name}" for p in site.places.values())
    raise SiteError(f"place {name!r} is unknown; known: {known}")


def parse_facing(text: str) -> str | float | tuple[float, ...]:
    """A facing as written on a command line: a compass word, a bearing in degrees (``-90``)
    or a direction ``x,y``; :func:`facing_vector` checks it."""
    parts = text.split(",")
    try:
        numbers = tuple(float(part) for part in parts)
    except ValueError:
        return text  # a compass word; facing_vector checks it
    if len(numbers) not in (1, 2) or not all(math.isfinite(n) for n in numbers):
        raise RenderError(f"--facing {text!r}, accepted: north, south, east, west, a finite "
                          "bearing in degrees or a finite direction x,y")
    if len(numbers) == 1:
        if abs(numbers[0]) > 360.0:
            raise RenderError(f"--facing {numbers[0]!r}, accepted: a finite number from -360 "
                              "to 360")
        return numbers[0]
    return numbers


def check_off_platform(site, position: Vec3, what: str) -> None:
    """Refuse ``what`` at ``position`` inside the solid hall platform of ``site``, as a site
    override refuses a place there (a listener in rammed earth was rendered)."""
    x, y, z = position
    if z < site.hall.height - 1e-9 and site.on_hall(x, y):
        raise RenderError(f"{what}: ({x:.2f}, {y:.2f}, {z:.2f}) m is inside the hall platform; "
                          f"a listener on the hall needs z >= {site.hall.height:.2f} m")


def listener_at(site, name: str, facing: str | None = None) -> Listener:
    """The listener at a place of ``site`` named by id or Chinese name (its ear height and
    facing: the duke seated at ``gong_wei`` faces west), or at ``x,y,z`` metres (facing
    north); ``facing`` (as :func:`parse_facing` reads it) turns him. The one way every verb
    and the kit seat a listener."""
    if "," in name:
        try:
            x, y, z = (float(v) for v in name.split(","))
        except ValueError:
            raise RenderError(f"--listener {name!r}: coordinates must be x,y,z in metres"
                              ) from None
        try:
            listener = Listener((x, y, z), parse_facing(facing) if facing else "north")
        except RenderError as error:
            raise RenderError(f"--listener {name!r}: {error}") from None
        check_off_platform(site, listener.position, f"--listener {name!r}")
        return listener
    seat = site.listener(place_id(site, name))
    return Listener(seat.position, parse_facing(facing) if facing else seat.facing)
