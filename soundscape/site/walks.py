"""A walking listener's route from a file: ``[[waypoint]]`` entries with ``time`` (s), a
``place`` (id or Chinese name) or a ``position`` ([x, y, z] metres), and optionally
``facing``; every error names the file, the waypoint and the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from soundscape import validate
from soundscape.errors import RenderError, SoundscapeError
from soundscape.fileio import read_toml
from soundscape.site.listeners import Listener, ListenerPath, check_off_platform, listener_at
from soundscape.validate import shown

__all__ = ["MAX_TIME_S", "MAX_WAYPOINTS", "load_walk"]

#: Most waypoints a walk may have (a visitor's route is a few dozen).
MAX_WAYPOINTS = 10_000
#: Latest (and before 0, earliest) waypoint time, seconds (the whole rite is about 9,000 s).
MAX_TIME_S = 1e6


def load_walk(path: str | Path, site: Any) -> ListenerPath:
    """The route in ``path`` through the places of ``site`` (see the module)."""
    data = read_toml(path, RenderError)
    unknown = sorted(set(data) - {"waypoint"})
    if unknown:
        raise RenderError(f"{path}: key {unknown[0]!r} is not a key of a walk; accepted: "
                          "[[waypoint]] entries")
    entries = data.get("waypoint")
    if not isinstance(entries, list) or not entries:
        raise RenderError(f"{path}: waypoint={shown(entries)}: give [[waypoint]] entries "
                          "(time, place or position, facing)")
    validate.size(entries, key="waypoint", where=str(path), error=RenderError, kind=list,
                  least=1, most=MAX_WAYPOINTS)
    points: list[tuple] = []
    for i, entry in enumerate(entries):
        key = f"{path}: waypoint[{i}]"
        if not isinstance(entry, dict):
            raise RenderError(f"{key}: {shown(entry)} must be a table with time and one of "
                              "place or position")
        unknown = sorted(set(entry) - {"time", "place", "position", "facing"})
        if unknown or "time" not in entry or ("place" in entry) == ("position" in entry):
            raise RenderError(f"{key}: keys {sorted(entry)}; accepted: time and one of place "
                              "or position, and optionally facing")
        time = validate.number(entry["time"], key="time", where=key, error=RenderError,
                               low=-MAX_TIME_S, high=MAX_TIME_S, unit="s")
        if points and not time > points[-1][0]:
            raise RenderError(f"{key}: time = {time!r} is not after waypoint[{i - 1}]'s "
                              f"{points[-1][0]!r}; times must be strictly increasing")
        points.append((time, *_waypoint(entry, site, key)))
    return ListenerPath(tuple(points))


def _waypoint(entry: dict, site: Any, key: str) -> tuple:
    """Position and facing of one waypoint; errors name ``key`` (file and index) and the field."""
    if "place" in entry:
        place = entry["place"]
        if not isinstance(place, str):
            raise RenderError(f"{key}: place={shown(place)}, accepted: a place id or name")
        try:
            seat = listener_at(site, place)
        except SoundscapeError as error:
            raise RenderError(f"{key}: place: {error}") from None
        position, facing = seat.position, seat.facing
    else:
        position, facing = entry["position"], "north"
        if not isinstance(position, list) or len(position) != 3 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in position):
            raise RenderError(f"{key}: position = {shown(position)}, accepted: [x, y, z] in "
                              "metres")
    try:
        listener = Listener(position, entry.get("facing", facing))
    except SoundscapeError as error:
        raise RenderError(f"{key}: {error}") from None
    if "position" in entry:  # a place is on its floor already
        check_off_platform(site, listener.position, f"{key}: position")
    return listener.position, listener.facing
