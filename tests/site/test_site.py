"""The site: units, the text's distances and heights, performers, listeners, overrides."""

from __future__ import annotations

import math

import pytest

from soundscape.errors import SiteError
from soundscape.site.courtyard import CHI_M, load_site, parse_length, to_metres


@pytest.fixture(scope="module")
def site():
    return load_site()


def test_units_follow_the_chi_length():
    assert to_metres(1, "貍步", chi_m=0.25) == pytest.approx(6 * 0.25)
    assert to_metres(1, "弓", chi_m=0.25) == to_metres(1, "步", chi_m=0.25) == 1.5
    assert to_metres(2, "m", chi_m=0.25) == 2.0
    # 鄭注: 大侯去地二丈二尺五寸少半寸
    assert parse_length("2 丈 2 尺 5 寸 1/3 寸", chi_m=1.0) == pytest.approx(22.5 + 1 / 30)
    assert parse_length({"value": 12, "unit": "尺"}, chi_m=0.2) == pytest.approx(2.4)


@pytest.mark.parametrize("target, libu", [("gan", 50), ("can", 70), ("dahou", 90)])
def test_targets_stand_at_their_distance_from_the_hall(site, target, libu):
    y = site.place(target)[1]
    edge = site.place("tang_edge")
    assert edge[:2] == (0.0, 0.0)
    assert -y == pytest.approx(libu * 6 * CHI_M)
    assert site.in_units(-y, "貍步") == pytest.approx(libu)
    assert site.gate_y < y < 0


@pytest.mark.parametrize("target", ["gan", "can", "dahou"])
def test_shelters_ten_libu_west_and_north_of_their_target(site, target):
    tx, ty, _ = site.place(target)
    fx, fy, fz = site.place(f"fa_{target}")
    assert site.in_units(tx - fx, "貍步") == pytest.approx(10)
    assert site.in_units(fy - ty, "貍步") == pytest.approx(10)
    assert fz == 0.0


def test_each_far_target_shows_its_gu_above_the_nearer(site):
    """鄭注 大侯之崇見鵠於參, 參見鵠於干: the 鵠's lower edge level with the nearer top."""
    gan, can, dahou = (site.targets[t] for t in ("gan", "can", "dahou"))
    assert can.gu[0] == pytest.approx(gan.top)
    assert dahou.gu[0] == pytest.approx(can.top)
    assert gan.bottom == pytest.approx(site.metres(1.2))  # 不及地武: a foot, 1 尺 2 寸
    assert site.place("dahou")[2] == pytest.approx(dahou.centre_height)


def test_a_longer_chi_scales_every_distance():
    short, long_ = load_site(chi_m=0.2), load_site(chi_m=0.3)
    for place_id, place in short.places.items():
        for a, b in zip(place.position, long_.place(place_id), strict=True):
            assert b == pytest.approx(a * 1.5), place_id
    for who, _ in short.performers:
        a = short.performer_position(who, "ge").position
        b = long_.performer_position(who, "ge").position
        # horizontal lengths scale; the voice height above the mat is in metres
        assert b[:2] == pytest.approx(tuple(v * 1.5 for v in a[:2]))


def test_places_the_text_relates(site):
    zuojie, xijie = site.place("zuojie"), site.place("xijie")
    assert zuojie[0] > 0 > xijie[0]
    assert site.place("xi")[0] > zuojie[0] and site.place("xi")[1] < zuojie[1]  # 阼階東南
    ci, xi = site.place("ci"), site.place("xi")
    assert ci[0] > xi[0] and ci[1] < xi[1]  # 耦次在洗東南
    assert site.place("bi")[1] == pytest.approx(xi[1])  # 楅 南當洗
    dongying, xiying = site.place("dongying"), site.place("xiying")
    for mark in ("wu_shang", "wu_xia"):
        assert xiying[0] < site.place(mark)[0] < dongying[0]  # 兩楹之間
    apart = site.place("wu_xia")[0] - site.place("wu_shang")[0]
    assert apart == pytest.approx(site.metres(1, "弓"))  # 疏數容弓


def test_musicians_move_as_the_text_says(site):
    hall = site.hall.height
    sing = site.performer_positions("ge")
    assert all(p.position[2] > hall for p in sing.values())  # on the hall
    assert all(p.facing == (0.0, 1.0, 0.0) for p in sing.values())  # 北面
    xs = [sing[who].position[0] for who, _ in site.performers]
    assert xs == sorted(xs, reverse=True)  # 東上: the 大師 easternmost
    assert sum(xs) / len(xs) > site.place("xijie")[0]  # 西階上少東
    pipes = site.performer_position("大師", "管")
    assert pipes.position[2] < hall and pipes.position[1] < 0  # below, in the court
    seated = site.performer_positions("zuo")
    ys = [seated[who].position[1] for who, _ in site.performers[:3]]
    assert ys == sorted(ys, reverse=True)  # 北上
    assert all(p.facing == (-1.0, 0.0, 0.0) for p in seated.values())  # 西面
    corner = site.place("dongdian")
    assert all(p.position[0] > corner[0] and p.position[1] < corner[1] for p in seated.values())


def test_listener_at_the_dukes_seat_faces_west_seated(site):
    head = site.listener("gong_wei")
    assert head.facing == (-1.0, 0.0, 0.0)
    assert head.position[2] == pytest.approx(site.hall.height + 0.85)
    gate = site.listener("men")
    assert gate.facing == (0.0, 1.0, 0.0) and gate.position[2] == pytest.approx(1.6)


def test_override_moves_one_place_and_its_dependants(tmp_path):
    path = tmp_path / "site.toml"
    path.write_text('[places.dahou]\ny = "-95 貍步"\n'
                    '[places.xi]\nx = { value = 42, unit = "尺" }\n', encoding="utf-8")
    base, moved = load_site(), load_site(overrides=path)
    assert moved.in_units(-moved.place("dahou")[1], "貍步") == pytest.approx(95)
    assert moved.place("fa_dahou")[1] - moved.place("dahou")[1] == pytest.approx(
        moved.metres(10, "貍步"))
    assert moved.place("xi")[0] == pytest.approx(42 * CHI_M)
    changed = {k for k in base.places if base.place(k) != moved.place(k)}
    assert changed == {"dahou", "fa_dahou", "xi"}


@pytest.mark.parametrize("text, words", [
    ('[places.nowhere]\nx = "1 尺"\n', ["places.nowhere", "known"]),
    ('[places.dahou]\ny = -95\n', ["places.dahou.y", "no unit"]),
    ('[places.dahou]\ny = "-95 furlong"\n', ["places.dahou.y", "furlong"]),
    ('[places.gan]\ny = "12 尺"\n', ["places.gan.y", "between the hall"]),
    ('[places.xi]\nx = "10 尺"\ny = "12 尺"\n', ["places.xi", "inside the hall"]),
    ('[places.xi]\nz = "-1 尺"\n', ["places.xi", "below the ground"]),
    ('[targets.dahou]\ndistance = "200 貍步"\n', ["targets.dahou.distance", "gate"]),
    ('[places.ci]\nx = "900 尺"\n', ["places.ci", "outside the courtyard"]),
    ('[spacing]\nwidth = "1 尺"\n', ["spacing.width", "known"]),
    ('[stage]\nx = 1\n', ["[stage]", "accepted"]),
    ('[layout."east.bo"]\nsize = "1 尺"\n', ["layout.east.bo.size", "accepted"]),
    ('[instruments.bianzhong]\nmembers = 20\n', ["instruments.bianzhong.members", "accepted"]),
    ('[spacing]\ngap = "-4 尺"\n', ["spacing.gap = '-4 尺'", "must be > 0 m"]),
    ('[spacing]\ngap = "0 尺"\n', ["spacing.gap", "must be > 0 m"]),
    ('[spacing]\nlean = "-1 cm"\n', ["spacing.lean", "must be >= 0 m"]),
    ('[hall]\nheight = "-7 尺"\n', ["hall.height", "must be > 0 m"]),
    ('[instruments.bianzhong]\nlength = "0 尺"\n', ["instruments.bianzhong.length", "> 0 m"]),
    ('[targets.can]\nband = "-1 尺"\n', ["targets.can.band", ">= 0 m"]),
    ('[instruments.pi]\nkind = "bell"\n', ["instruments.pi.kind = 'bell'", "rack, drum"]),
    ('[places.xi]\nx = "1/0 尺"\n', ["places.xi.x", "'1/0'", "divisor other than 0"]),
    ('[places.xi]\nx = "' + "9" * 400 + ' 尺"\n', ["places.xi.x", "at most 1000 m"]),
    ('[places.xi]\nx = "' + "9" * 200 + ' 尺"\n', ["places.xi.x", "between -1000 m and 1000 m"]),
    ('[places.xi]\nx = { value = 1e308, unit = "丈" }\n', ["places.xi.x", "1000 m"]),
    ('[places.xi]\nx = { value = nan, unit = "尺" }\n', ["places.xi.x", "1000 m"]),
])
def test_bad_overrides_name_the_key(tmp_path, text, words):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SiteError) as error:
        load_site(overrides=path)
    message = str(error.value)
    assert str(path) in message
    for word in words:
        assert word in message


@pytest.mark.parametrize("text, key, words", [
    ('[courtyard]\nwidth = "1 尺"\n', "courtyard.width", "outside the courtyard"),
    ('[hall]\nheight = "3 丈"\n', "hall.height", "inside the hall platform"),
])
def test_a_place_an_override_made_impossible_names_the_override(tmp_path, text, key, words):
    """The bundled place is not to blame: the override file and the key it set are named."""
    path = tmp_path / "my.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SiteError) as error:
        load_site(overrides=path)
    message = str(error.value)
    assert words in message
    assert message.endswith(f" (site override {path} sets {key})")


def test_bad_chi_and_unknown_names_are_refused(site):
    for chi in (0, float("inf"), 10**400, True):
        with pytest.raises(SiteError, match=r"chi_m=.* must be a finite number ≥ 0.1 and ≤ 1"):
            load_site(chi_m=chi)
    with pytest.raises(SiteError, match="known"):
        site.place("palace")
    with pytest.raises(SiteError, match="phase"):
        site.performer_position("dashi", "dance")
    assert math.isfinite(site.metres(1, "丈"))


def test_the_site_remembers_what_an_override_set(tmp_path):
    path = tmp_path / "gap.toml"
    path.write_text('[spacing]\ngap = "4 尺"\n[targets.can]\nband = "3 尺"\n', encoding="utf-8")
    site = load_site(overrides=path)
    assert dict(site.overridden) == {"spacing.gap": str(path), "targets.can.band": str(path)}
    assert site.overrides_note() == f" (site override {path} sets spacing.gap)"
    assert load_site().overrides_note() == ""


@pytest.mark.parametrize("rite", [None, "xiangshe", "xiangyinjiu", "yan", "generic"])
def test_the_ground_around_the_hall_is_beside_it_on_every_site(rite):
    """堂西 and 堂東 (賓降適堂西袒決遂; 鄉射 三耦俟于堂西), 堂下, 西堂下 and 東堂下 are on the
    ground beside or below the hall, each site's own: they were read as the hall's middle, up
    on its floor."""
    site = load_site(rite=rite)
    edge = site.hall.width / 2
    west, east, below = site.place("tang_xi"), site.place("tang_dong"), site.place("tang_xia")
    assert west[2] == east[2] == below[2] == 0.0
    assert west[0] == pytest.approx(-edge - site.metres(1, "弓"))
    assert east[0] == pytest.approx(edge + site.metres(1, "弓"))
    assert 0 < west[1] < site.hall.depth and below[1] < 0 and below[0] == 0
    for side, x in (("xitang", -1), ("dongtang", 1)):
        under = site.place(f"{side}_xia")
        assert under[2] == 0 and under[1] == below[1] and under[0] == site.place(side)[0]
        assert x * under[0] > 0


def test_a_place_from_another_takes_an_axis_outright(tmp_path):
    """A place measured from another (下物: from the 物) with an axis given (y = "-6 尺")
    takes it; the others still move by d·."""
    override = tmp_path / "site.toml"
    override.write_text('[places.wu_xia]\ny = "-6 尺"\n', encoding="utf-8")
    site = load_site(overrides=override)
    x, y, z = site.place("wu_xia")
    assert (x, y) == pytest.approx((site.place("wu")[0] + site.metres(3, "尺"),
                                    -site.metres(6, "尺")))
    assert z == site.place("wu")[2]
