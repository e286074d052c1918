"""Walk files (``render --path``, kit zones) and listener positions: every bad value is a
clear error naming the file (and waypoint) or the option, never a crash."""

from __future__ import annotations

import pytest

from soundscape.errors import RenderError
from soundscape.site.courtyard import load_site
from soundscape.site.listeners import Listener, facing_vector
from soundscape.site.walks import load_walk as _walk

_BAD_WALKS = {
    "a number": "waypoint = 5\n",
    "a list of numbers": "waypoint = [5, 6]\n",
    "a string": 'waypoint = "men"\n',
    "a table": "[waypoint]\ntime = 0\nplace = 'men'\n",
    "no time": "[[waypoint]]\nplace = 'men'\n",
    "NaN time": "[[waypoint]]\ntime = nan\nplace = 'men'\n",
    "infinite time": "[[waypoint]]\ntime = inf\nplace = 'men'\n",
    "huge time": "[[waypoint]]\ntime = 1e308\nplace = 'men'\n",
    "boolean time": "[[waypoint]]\ntime = true\nplace = 'men'\n",
    "a place number": "[[waypoint]]\ntime = 0\nplace = 5\n",
    "a place path": "[[waypoint]]\ntime = 0\nplace = '../../etc'\n",
    "a place list": "[[waypoint]]\ntime = 0\nplace = ['men']\n",
    "two numbers": "[[waypoint]]\ntime = 0\nposition = [1.0, 2.0]\n",
    "far away": "[[waypoint]]\ntime = 0\nposition = [1e308, 0.0, 1.5]\n",
    "text position": "[[waypoint]]\ntime = 0\nposition = ['a', 'b', 'c']\n",
    "NaN position": "[[waypoint]]\ntime = 0\nposition = [nan, 0.0, 1.5]\n",
    "facing a list of one": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = [1.0]\n",
    "facing text list": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = ['x', 'y']\n",
    "facing a table": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = {x = 1}\n",
    "facing NaN": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = nan\n",
    "facing inf": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = inf\n",
    "facing true": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = true\n",
    "facing zero": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = [0.0, 0.0]\n",
    "facing inf vector": "[[waypoint]]\ntime = 0\nplace = 'men'\nfacing = [inf, 0.0]\n",
    "times backwards": "[[waypoint]]\ntime = 5\nplace = 'men'\n[[waypoint]]\ntime = 1\n"
                       "place = 'men'\n",
    "an unknown key": "[[waypoint]]\ntime = 0\nplace = 'men'\nspeed = 3\n",
    "an unknown key of the walk": "speed = 3\n[[waypoint]]\ntime = 0\nplace = 'men'\n",
    "too many": "".join(f"[[waypoint]]\ntime = {i}\nplace = 'men'\n" for i in range(10_001)),
}


@pytest.mark.parametrize("body", _BAD_WALKS.values(), ids=_BAD_WALKS.keys())
def test_a_bad_walk_file_is_a_clear_error_naming_it(tmp_path, body):
    path = tmp_path / "walk.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(RenderError) as caught:
        _walk(path, load_site())
    assert str(caught.value).startswith(f"{path}"), str(caught.value)


def test_a_good_walk_file_loads(tmp_path):
    path = tmp_path / "walk.toml"
    path.write_text("[[waypoint]]\ntime = 0\nplace = 'men'\n[[waypoint]]\ntime = 40.5\n"
                    "position = [0, -20, 1.6]\nfacing = 90\n", encoding="utf-8")
    walk = _walk(path, load_site())
    assert [t for t, _, _ in walk.waypoints] == [0.0, 40.5]
    assert walk.waypoints[1][1] == (0.0, -20.0, 1.6)
    assert walk.waypoints[1][2] == pytest.approx((1.0, 0.0, 0.0))  # a bearing of 90°: east


@pytest.mark.parametrize("position", [(1e308, 0.0, 1.0), (0.0, -1e6, 1.5), (0.0, 0.0, 5e3)])
def test_a_listener_far_beyond_any_site_is_refused(position):
    with pytest.raises(RenderError, match=r"listener position=.* must be 3 finite metres "
                                          r"within 1000 m of the hall"):
        Listener(position)


@pytest.mark.parametrize("facing", [True, float("nan"), float("inf"), [1.0], ["x", "y"],
                                    {"x": 1}, (float("inf"), 0.0), None])
def test_a_bad_facing_is_a_render_error(facing):
    with pytest.raises(RenderError, match="facing="):
        facing_vector(facing)


def test_the_render_command_refuses_a_listener_at_1e308(tmp_path, soundscape_cli):
    code, err = soundscape_cli("render", "--from", "s10", "--to", "s10", "--listener",
                               "1e308,0,1", "--out", str(tmp_path / "x.wav"), cwd=tmp_path)
    assert code == 2, err
    assert "--listener '1e308,0,1'" in err and "within 1000 m" in err, err
    assert list(tmp_path.iterdir()) == []
