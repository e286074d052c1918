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


# -- one way to seat a listener (issue 29, item 11) --------------------------------------------
def test_listener_at_a_place_by_id_or_name_or_at_coordinates():
    from soundscape.errors import SiteError
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import listener_at, place_id

    site = load_site()
    duke = listener_at(site, "gong_wei")
    seat = site.listener("gong_wei")
    assert (duke.position, duke.facing) == (seat.position, seat.facing)
    assert duke.facing == pytest.approx((-1.0, 0.0, 0.0))  # the duke faces west
    name = site.places["gong_wei"].name
    assert place_id(site, name) == "gong_wei" and listener_at(site, name) == duke
    turned = listener_at(site, "gong_wei", "90")
    assert turned.position == duke.position and turned.facing == pytest.approx((1, 0, 0))
    assert listener_at(site, "1,-2,1.5").position == (1.0, -2.0, 1.5)
    with pytest.raises(SiteError, match=r"place 'nowhere' is unknown; known: .*gong_wei"):
        listener_at(site, "nowhere")
    with pytest.raises(RenderError, match=r"--facing 400\.0, accepted: a finite number from "
                                          "-360 to 360"):
        listener_at(site, "gong_wei", "400")


def test_a_walk_goes_through_places_named_by_id_or_chinese_name(tmp_path):
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import listener_at
    from soundscape.site.walks import load_walk

    site = load_site()
    name = site.places["zhongting"].name
    path = tmp_path / "walk.toml"
    path.write_text(f'[[waypoint]]\ntime = 0\nplace = "gong_wei"\n'
                    f'[[waypoint]]\ntime = 10\nplace = "{name}"\n', encoding="utf-8")
    walk = load_walk(path, site)
    assert walk.at(20.0) == listener_at(site, "zhongting")
    assert walk.at(0.0) == listener_at(site, "gong_wei")


def test_a_listener_inside_the_hall_platform_is_refused_as_a_place_there_is(tmp_path):
    """`render --listener 0,5,0.5` rendered from within the rammed earth of the hall, which a
    site override refuses for a place; a walk's position likewise."""
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import check_off_platform, listener_at
    from soundscape.site.walks import load_walk

    site = load_site()
    floor = site.hall.height
    with pytest.raises(RenderError, match=r"^--listener '0,5,0.5': \(0.00, 5.00, 0.50\) m is "
                                          rf"inside the hall platform; a listener on the hall "
                                          rf"needs z >= {floor:.2f} m$"):
        listener_at(site, "0,5,0.5")
    assert listener_at(site, f"0,5,{floor + 1.5}").position == (0.0, 5.0, floor + 1.5)
    check_off_platform(site, (0.0, -0.5, 0.5), "in front of the hall")  # the court's floor
    check_off_platform(site, (site.hall.width, 5.0, 0.5), "beside it")
    path = tmp_path / "walk.toml"
    path.write_text("[[waypoint]]\ntime = 0\nplace = 'men'\n[[waypoint]]\ntime = 9\n"
                    "position = [0, 5, 0.5]\n", encoding="utf-8")
    with pytest.raises(RenderError, match=rf"^{path}: waypoint\[1\]: position: \(0.00, 5.00, "
                                          r"0.50\) m is inside the hall platform"):
        load_walk(path, site)
