"""Listener frame: azimuth 0 ahead, positive to the left, elevation up."""

import math

import pytest

from soundscape.errors import RenderError
from soundscape.site.listeners import Listener, ListenerPath


@pytest.mark.parametrize(("facing", "point", "azimuth"), [
    ("north", (0, 10, 0), 0.0),
    ("north", (-10, 0, 0), 90.0),      # west is left when facing north
    ("north", (10, 0, 0), -90.0),
    ("west", (0, -10, 0), 90.0),       # the duke faces west: south is on his left
    ("west", (10, 0, 0), 180.0),
    (90.0, (10, 0, 0), 0.0),           # bearing 90 = east
])
def test_azimuth_follows_facing(facing, point, azimuth):
    az, el, dist = Listener((0, 0, 0), facing).direction_to(point)
    assert az == pytest.approx(azimuth, abs=1e-9)
    assert el == pytest.approx(0.0, abs=1e-9)
    assert dist == pytest.approx(10.0)


def test_elevation_and_distance():
    az, el, dist = Listener((1, 2, 1.5), "east").direction_to((4, 2, 4.5))
    assert az == pytest.approx(0.0)
    assert el == pytest.approx(45.0)
    assert dist == pytest.approx(3 * math.sqrt(2))


def test_bad_facing_names_value():
    with pytest.raises(RenderError, match=r"'up'.*north"):
        Listener((0, 0, 0), "up")


def test_path_interpolates_position_and_turns_short_way():
    path = ListenerPath(((0.0, (0, 0, 1.5), "north"), (10.0, (10, 0, 1.5), "west")))
    mid = path.at(5.0)
    assert mid.position == pytest.approx((5, 0, 1.5))
    # north → west is a quarter turn to the left; halfway faces north-west
    assert mid.facing == pytest.approx((-math.sqrt(0.5), math.sqrt(0.5), 0))
    assert path.at(-1).position == pytest.approx((0, 0, 1.5))
    assert path.at(99).facing == pytest.approx((-1, 0, 0))


def test_path_times_must_increase():
    with pytest.raises(RenderError, match="strictly increasing"):
        ListenerPath(((1.0, (0, 0, 0), "north"), (1.0, (1, 0, 0), "north")))
