"""A site per rite: 鄉射 in the 序 with one 侯 at 五十弓, 燕禮 in the 寢 and 鄉飲酒 in the 庠
without targets, each read over the 大射's; the 大射's own site unchanged."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from soundscape.cli.plan import command as plan_command
from soundscape.errors import SiteError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.site import courtyard
from soundscape.site.courtyard import CHI_M, load_site, rite_site_file


@pytest.fixture(scope="module")
def xiangshe():
    return load_site(rite="xiangshe")


@pytest.mark.parametrize("chi_m", [CHI_M, 0.25])
def test_xiangshe_has_one_target_at_fifty_gong(chi_m):
    """鄉射記 侯道五十弓; 弓 = 6 尺, the site's 尺."""
    site = load_site(rite="xiangshe", chi_m=chi_m)
    assert list(site.targets) == ["hou"]
    hou = site.targets["hou"]
    assert hou.unit == "弓"
    assert hou.distance == pytest.approx(50 * 6 * chi_m)
    assert -site.place("hou")[1] == pytest.approx(50 * 6 * chi_m)
    assert site.in_units(hou.distance, "弓") == pytest.approx(50)
    assert site.gate_y < site.place("hou")[1] < 0


def test_xiangshe_target_measures_follow_the_ji(xiangshe):
    """記 弓二寸以為侯中 (50 弓 × 2 寸 = 中十尺); 下綱不及地武 (鄭注: 武 尺二寸)."""
    hou = xiangshe.targets["hou"]
    assert hou.hou_zhong == pytest.approx(xiangshe.metres(50 * 2, "寸"))
    assert hou.hou_zhong == pytest.approx(xiangshe.metres(10))
    assert hou.bottom == pytest.approx(xiangshe.metres(1.2))
    assert xiangshe.place("hou")[2] == pytest.approx(hou.centre_height)


def test_xiangshe_fa_a_third_of_the_hou_dao_north_and_five_bu_west(xiangshe):
    """乏參侯道, 居侯黨之一, 西五步 (鄭注: 此乏去侯北十丈, 西三丈)."""
    tx, ty, _ = xiangshe.place("hou")
    fx, fy, fz = xiangshe.place(xiangshe.targets["hou"].fa)
    assert fy - ty == pytest.approx(xiangshe.targets["hou"].distance / 3)
    assert fy - ty == pytest.approx(xiangshe.metres(10, "丈"))
    assert tx - fx == pytest.approx(xiangshe.metres(5, "步"))
    assert fz == 0.0


def test_xiangshe_is_a_xu_without_a_shi_and_its_marks_under_the_ridge(xiangshe):
    """序無室; 記 序則物當棟 (the middle of the depth), north of the pillars (鉤楹內)."""
    hall = xiangshe.hall
    assert hall.depth == hall.total_depth
    assert xiangshe.place("wu")[1] == pytest.approx(hall.depth / 2)
    assert xiangshe.place("wu")[1] > xiangshe.place("xiying")[1]
    assert hall.height == pytest.approx(xiangshe.metres(5))        # 禮器 大夫五尺
    for place in ("tang", "wu", "gong_wei", "bin_wei", "gong_xi"):
        assert xiangshe.place(place)[2] == pytest.approx(hall.height)
    # the 中: 南當楅, 西當西序
    assert xiangshe.place("zhong")[:2] == pytest.approx((-hall.xu_x, xiangshe.place("bi")[1]))
    assert "ci" not in xiangshe.places and "dahou" not in xiangshe.places
    assert xiangshe.name == "州序" and xiangshe.rite == "xiangshe"


def test_dashe_site_unchanged_by_the_rites():
    """The 大射's three 侯 at 50/70/90 貍步, whether asked for by rite or not."""
    base, by_rite = load_site(), load_site(rite="dashe")
    assert rite_site_file("dashe") is None
    assert base.places == by_rite.places and base.targets == by_rite.targets
    assert {t: base.in_units(base.targets[t].distance, "貍步") for t in base.targets} == \
        pytest.approx({"dahou": 90, "can": 70, "gan": 50})
    assert {t.unit for t in base.targets.values()} == {"貍步"}
    assert base.rite == "" and base.name == "射宮"


@pytest.mark.parametrize("rite, name", [("yan", "路寢"), ("xiangyinjiu", "庠")])
def test_yan_and_xiangyinjiu_have_no_targets(rite, name):
    site = load_site(rite=rite)
    assert site.targets == {}
    assert not any(p.startswith("fa_") for p in site.places)
    assert "fa_dahou" not in site.listeners
    assert site.name == name
    assert site.listener("gong_wei").position[2] > site.hall.height


def test_yan_hall_is_the_lords_hall():
    """鄭注 (考工記 匠人): 寢 and 明堂 one plan; 禮器 諸侯七尺: the 大射's hall."""
    assert load_site(rite="yan").hall == load_site().hall


@pytest.mark.parametrize("rite", ["xiangshe", "yan", "xiangyinjiu"])
def test_every_entry_of_a_rite_site_says_where_it_comes_from(rite):
    data = read_toml(rite_site_file(rite))
    assert data["name"] and data["note"]
    for id_, place in data.get("places", {}).items():
        assert place.get("note"), f"{rite}: places.{id_} has no note"
    for id_, listener in data.get("listeners", {}).items():
        assert listener.get("note"), f"{rite}: listeners.{id_} has no note"
    text = (data_dir() / "sites" / f"{rite}.toml").read_text(encoding="utf-8")
    assert "EST" in text  # what no text gives is marked as an estimate


def test_unknown_rite_is_named():
    with pytest.raises(SiteError, match=r"rite 'moon' unknown; known: dashe"):
        load_site(rite="moon")


@pytest.mark.parametrize("text, message", [
    ('schema = 1\nsky = "blue"\n', r"bad\.toml: key 'sky' is unknown; accepted: schema"),
    ('schema = 1\ndrop = ["moon"]\n', r"bad\.toml: drop: 'moon' is not a place"),
    ('schema = 1\n[targets.hou]\ndistance = "50 弓"\n', r"bad\.toml: targets\.hou needs "
     r"hou_zhong, band, bottom"),
    ('schema = 1\n[hall]\nroof = "1 尺"\n', r"bad\.toml: hall\.roof is unknown"),
    ('schema = 1\n[instruments.qing]\nkind = "rack"\n', r"bad\.toml: instruments\.qing needs "
     r"length, depth, height"),
    ('schema = 1\n[places.x]\nname = "x"\n', r"bad\.toml: places\.x: needs x, y, z"),
    # a footprint is two lengths (east-west, north-south); one or three were taken as they came
    ('schema = 1\n[places.x]\nx = "0 m"\ny = "-9 m"\nz = "0 m"\nsize = ["6 尺"]\n',
     r"bad\.toml: places\.x\.size = \['6 尺'\] must be \[east-west, north-south\]"),
    ('schema = 1\n[places.x]\nx = "0 m"\ny = "-9 m"\nz = "0 m"\nsize = "6 尺"\n',
     r"bad\.toml: places\.x\.size = '6 尺' must be \[east-west, north-south\]"),
    ('schema = 1\ndrop = ["wu"]\n', r"places\.wu_shang\.from: place 'wu' is unknown"),
    ('schema = 1\n[performers.phases.zuo]\nname = "坐"\nat = ["反坐"]\n',
     r"bad\.toml: performers\.phases\.zuo\.at is unknown; accepted: name, .*\[\[gong_move\]\]"),
])
def test_a_bad_rite_site_file_is_named(tmp_path, monkeypatch, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(courtyard, "rite_site_file", lambda rite: path)
    with pytest.raises(SiteError, match=message):
        load_site(rite="xiangshe")


def test_plan_cli_draws_one_target_at_fifty_gong(tmp_path):
    out = tmp_path / "plan.png"
    result = CliRunner().invoke(plan_command, ["--rite", "xiangshe", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "州序" in result.output and "targets: 侯 50 弓 (69.3 m)" in result.output
    assert out.is_file() and out.with_suffix(".svg").is_file()


@pytest.mark.parametrize("rite", ["xiangshe", "yan", "xiangyinjiu"])
def test_four_gong_stand_on_the_hall_in_the_other_rites(rite):
    """工四人二瑟 in 鄉飲酒, 鄉射 and 燕禮 (the 大射's 工 are six): a line of four, centred."""
    site = load_site(rite=rite)
    assert [who for who, _ in site.performers] == ["dashi", "shaoshi", "shanggong.1",
                                                   "shanggong.2"]
    xs = [p.position[0] for p in site.performer_positions("ge").values()]
    assert sum(xs) / 4 == pytest.approx(site.place("gong_xi")[0])
    assert len(load_site().performers) == 6


@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe"])
def test_the_gai_drum_stands_where_zheng_puts_it(rite):
    """鄭注 on 鄉飲酒禮 奏陔: 大夫士鼓而已，蓋建於阼階之西，南鼓 — west of the 阼階 (between it and
    the middle of the hall's front), struck on its south face (it stood by the 磬 before)."""
    from soundscape import cuesheet
    from soundscape.resources import bundled_dir
    from soundscape.site import orchestra

    site = load_site(rite=rite)
    placed = orchestra.place(cuesheet.load(bundled_dir("cues") / f"{rite}.toml").layout, site)
    gu, zuojie = placed["gu"], site.place("zuojie")
    assert 0.0 < gu.position[0] < zuojie[0]
    assert gu.position[1] < zuojie[1]
    assert gu.struck_face is not None and gu.struck_face[1] < -0.99  # the south face
