"""Orchestra placement: the 設樂's relations hold, racks spread, overrides move one thing."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from soundscape.errors import SiteError
from soundscape.music.arrange import arrange
from soundscape.music.instruments import load_instrument
from soundscape.music.repertoire import list_pieces, load_piece
from soundscape.music.tuning import default_tuning
from soundscape.performance import Source
from soundscape.site import orchestra
from soundscape.site.courtyard import load_site


def entry(id_, name, instrument, group, relation, of, *, facing="", struck_face="", side=""):
    return SimpleNamespace(id=id_, name=name, instrument=instrument, group=group,
                           relation=relation, of=of, facing=facing, struck_face=struck_face,
                           side=side, quote="")


#: The 設樂 as the text has it (seeds/001, 右設樂), in the cue-sheet schema.
LAYOUT = (
    entry("east.shengqing", "笙磬", "bianqing", "east", "east_of", "zuojie", facing="west"),
    entry("east.shengzhong", "笙鐘", "bianzhong", "east", "south_of", "east.shengqing"),
    entry("east.bo", "鑮", "bo", "east", "south_of", "east.shengzhong"),
    entry("east.jiangu", "建鼓", "jiangu", "drums", "west_of", "zuojie", struck_face="south"),
    entry("east.yingpi", "應鼙", "pi", "drums", "east_of", "east.jiangu", struck_face="south"),
    entry("west.songqing", "頌磬", "bianqing", "west", "west_of", "xijie", facing="east"),
    entry("west.zhong", "鐘", "bianzhong", "west", "south_of", "west.songqing"),
    entry("west.bo", "鑮", "bo", "west", "south_of", "west.zhong"),
    entry("west.jiangu", "建鼓", "jiangu", "drums", "south_of", "west.bo", struck_face="east"),
    entry("west.shuopi", "朔鼙", "pi", "drums", "north_of", "west.jiangu"),
    entry("west.jiangu_2", "建鼓", "jiangu", "drums", "east_of", "xijie", facing="south"),
    entry("pipes.dang", "簜", "guan", "pipes", "between", ["east.jiangu", "west.jiangu_2"]),
    entry("west.tao", "鼗", "tao", "drums", "on", "west.songqing", side="west"),
)


@pytest.fixture(scope="module")
def site():
    return load_site()


@pytest.fixture(scope="module")
def placed(site):
    return orchestra.place(LAYOUT, site)


def check_relations(placed, site):
    """Every relation the 設樂 states, on a placed layout keyed like the cue sheet."""
    def at(id_):
        return placed[id_].position

    zuojie, xijie = site.place("zuojie"), site.place("xijie")
    east = [at(i) for i in ("east.shengqing", "east.shengzhong", "east.bo")]
    west = [at(i) for i in ("west.songqing", "west.zhong", "west.bo")]
    assert [p[1] for p in east] == sorted((p[1] for p in east), reverse=True)  # 皆南陳
    assert [p[1] for p in west] == sorted((p[1] for p in west), reverse=True)
    assert all(p[0] > zuojie[0] for p in east)       # 阼階東
    assert all(p[0] < xijie[0] for p in west)        # 西階之西
    for id_ in ("east.shengqing", "east.shengzhong", "east.bo"):
        assert placed[id_].facing == (-1.0, 0.0, 0.0)   # 西面
    for id_ in ("west.songqing", "west.zhong", "west.bo"):
        assert placed[id_].facing == (1.0, 0.0, 0.0)    # 東面
    assert at("east.jiangu")[0] < zuojie[0]                          # 建鼓在阼階西
    assert placed["east.jiangu"].struck_face == (0.0, -1.0, 0.0)    # 南鼓
    assert at("east.jiangu")[0] < at("east.yingpi")[0] < zuojie[0]   # 應鼙在其東
    assert at("west.jiangu")[1] < at("west.bo")[1]                   # 一建鼓在其南
    assert placed["west.jiangu"].struck_face == (1.0, 0.0, 0.0)     # 東鼓
    assert at("west.jiangu")[1] < at("west.shuopi")[1] < at("west.bo")[1]  # 朔鼙在其北
    assert at("west.jiangu_2")[0] > xijie[0]                         # 在西階之東
    assert placed["west.jiangu_2"].facing == (0.0, -1.0, 0.0)       # 南面
    low, high = sorted((at("east.jiangu")[0], at("west.jiangu_2")[0]))
    assert low < at("pipes.dang")[0] < high                          # 簜在建鼓之間
    tao, rack = placed["west.tao"], placed["west.songqing"]
    assert tao.position[0] < rack.position[0] - rack.depth / 2        # 倚於頌磬西紘
    half = rack.length / 2
    assert rack.position[1] - half <= tao.position[1] <= rack.position[1] + half


def test_the_relations_of_the_text_hold(placed, site):
    check_relations(placed, site)


def test_nothing_overlaps_and_all_stand_in_the_court(placed, site):
    for item in placed.values():
        x, y, z = item.position
        assert y < 0 and site.in_courtyard(x, y) and z > 0, item.id
    items = list(placed.values())
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            apart = [abs(a.position[k] - b.position[k]) - a.half_extent[k] - b.half_extent[k]
                     for k in (0, 1)]
            assert max(apart) >= 0, (a.id, b.id)


def test_racks_hang_their_members_north_to_south(placed, site):
    rack = placed["east.shengzhong"]
    size = site.instruments["bianzhong"]
    assert len(rack.members) == 16  # 賈疏 十六枚而在一虡
    ys = [rack.member_position(i)[1] for i in range(16)]
    assert ys == sorted(ys, reverse=True)
    assert ys[0] - ys[-1] == pytest.approx(size.length * 15 / 16)
    assert all(m[0] == pytest.approx(rack.position[0]) for m in rack.members)
    with pytest.raises(SiteError, match="out of range"):
        rack.member_position(16)
    assert len(placed["east.bo"].members) == 1  # 鑮 不編


@pytest.mark.parametrize("rack_id", ["east.shengqing", "east.shengzhong", "west.songqing",
                                     "west.zhong"])
def test_every_pitch_of_a_rack_has_its_own_member(placed, rack_id):
    rack = placed[rack_id]
    pitches = load_instrument(rack.instrument).pitches
    assert rack.pitches == pitches
    assert len(rack.members) == len(pitches)
    where = [rack.member_for(name) for name in pitches]
    assert where == list(rack.members)  # member i sounds pitch i, each its own place
    assert len(set(where)) == len(pitches)
    assert rack.member_for("清黄钟") == rack.member_for("清黃鍾")  # variant spellings


def test_every_pitch_the_bell_parts_play_hangs_on_the_racks(placed):
    tuning = default_tuning()
    played = set()
    for piece_id in list_pieces():
        for note in arrange(load_piece(piece_id), tuning=tuning).notes():
            if note.instrument in ("bianzhong", "bianqing") and note.pitch is not None:
                played.add((note.instrument, note.pitch.name))
    assert ("bianzhong", "清太簇") in played  # 肆夏, 陔夏, 驁夏 reach 清太簇
    for item in placed.values():
        for instrument, name in played:
            if item.instrument == instrument:
                assert item.member_for(name) in item.members


def test_member_for_names_the_rack_and_its_pitches_when_none_sounds(placed):
    rack = placed["west.zhong"]
    with pytest.raises(SiteError) as error:
        rack.member_for("倍黃鍾")
    message = str(error.value)
    for word in ("west.zhong", "倍黃鍾", "黃鍾, 大呂", "清夾鍾", "instrument file bianzhong.toml"):
        assert word in message
    with pytest.raises(SiteError, match="'宮'"):
        rack.member_for("宮")
    assert placed["east.bo"].member_for("倍黃鍾") == placed["east.bo"].position  # one body


def test_a_moved_rack_keeps_its_pitches_in_place(tmp_path, placed):
    path = tmp_path / "move.toml"
    path.write_text('[layout."east.shengzhong"]\ndx = "2 尺"\n', encoding="utf-8")
    moved = orchestra.place(LAYOUT, load_site(overrides=path))["east.shengzhong"]
    before = placed["east.shengzhong"]
    for name in before.pitches:
        shift = moved.member_for(name)[0] - before.member_for(name)[0]
        assert shift == pytest.approx(2 * 0.231)


def test_sources_carry_position_facing_and_struck_face(placed):
    sources = orchestra.sources(placed)
    drum = sources["east.jiangu"]
    assert isinstance(drum, Source)
    assert drum.position == placed["east.jiangu"].position
    assert drum.struck_face == (0.0, -1.0, 0.0)
    assert sources["east.shengqing"].struck_face is None
    assert sources["east.shengqing"].name == "東縣 笙磬"


def test_a_changed_chi_scales_the_layout():
    small = orchestra.place(LAYOUT, load_site(chi_m=0.2))
    large = orchestra.place(LAYOUT, load_site(chi_m=0.25))
    for id_, item in small.items():
        assert large[id_].position == pytest.approx(tuple(v * 1.25 for v in item.position))
        for a, b in zip(item.members, large[id_].members, strict=True):
            assert b == pytest.approx(tuple(v * 1.25 for v in a))


def test_override_moves_one_instrument_only(tmp_path, placed):
    path = tmp_path / "move.toml"
    path.write_text('[layout."west.bo"]\ndx = "-2 尺"\nfacing = "north"\n', encoding="utf-8")
    moved = orchestra.place(LAYOUT, load_site(overrides=path))
    chi = moved["west.bo"].position[0] - placed["west.bo"].position[0]
    assert chi == pytest.approx(-2 * 0.231)
    assert moved["west.bo"].facing == (0.0, 1.0, 0.0)
    assert {i for i in placed if placed[i] != moved[i]} == {"west.bo"}


@pytest.mark.parametrize("text, words", [
    ('[layout."east.gong"]\nx = "1 尺"\n', ["layout.east.gong", "names no layout entry"]),
    ('[layout."east.bo"]\nx = 3\n', ["layout.east.bo.x", "no unit"]),
    ('[layout."east.bo"]\ny = "5 尺"\nx = "0 尺"\n', ["layout.east.bo", "inside the hall"]),
    ('[layout."east.bo"]\ny = "-27 尺"\n', ["layout.east.bo", "overlaps"]),
    ('[layout."east.bo"]\nfacing = "up"\n', ["layout.east.bo.facing", "accepted"]),
])
def test_bad_layout_overrides_name_the_key(tmp_path, text, words):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SiteError) as error:
        orchestra.place(LAYOUT, load_site(overrides=path))
    for word in (str(path), *words):
        assert word in str(error.value)


@pytest.mark.parametrize("text, key", [
    ('[spacing]\ngap = "40 尺"\n', "spacing.gap"),
    ('[instruments.bianqing]\ndepth = "140 尺"\n', "instruments.bianqing.depth"),
])
def test_a_site_override_that_makes_a_clash_is_named(tmp_path, text, key):
    path = tmp_path / "site.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SiteError) as error:
        orchestra.place(LAYOUT, load_site(overrides=path))
    assert f"site override {path} sets {key}" in str(error.value)


def test_bad_layouts_are_refused(site):
    loop = (entry("a", "鐘", "bianzhong", "east", "south_of", "b"),
            entry("b", "磬", "bianqing", "east", "south_of", "a"))
    with pytest.raises(SiteError, match="loop"):
        orchestra.place(loop, site)
    with pytest.raises(SiteError, match="neither"):
        orchestra.place((entry("a", "鐘", "bianzhong", "east", "south_of", "palace"),), site)
    with pytest.raises(SiteError, match="instrument"):
        orchestra.place((entry("a", "琴", "qin", "east", "south_of", "zuojie"),), site)


def test_the_bundled_cue_sheet_places_as_the_text_says(site):
    cuesheet = pytest.importorskip("soundscape.cuesheet")
    try:
        path = cuesheet.bundled_path()
    except FileNotFoundError:
        pytest.skip("cues/dashe.toml not there yet")
    if not path.is_file():
        pytest.skip("cues/dashe.toml not there yet")
    sheet = cuesheet.load(path)
    placed = orchestra.place(sheet.layout, site)
    assert len(placed) == len(sheet.layout) == 13
    check_relations(_rekey(placed, sheet), site)


def _rekey(placed, sheet):
    """Map the cue sheet's ids onto the ids check_relations uses, by the text's relations."""
    ids = {}
    for item in sheet.layout:
        key = {("笙磬",): "east.shengqing", ("笙鐘",): "east.shengzhong",
               ("頌磬",): "west.songqing", ("應鼙",): "east.yingpi", ("朔鼙",): "west.shuopi",
               ("簜",): "pipes.dang", ("鼗",): "west.tao"}.get((item.name,))
        if item.name == "鐘":
            key = "west.zhong"
        elif item.name == "鑮":
            key = f"{item.group}.bo"
        elif item.name == "建鼓":
            key = {"zuojie": "east.jiangu", "xijie": "west.jiangu_2"}.get(item.of, "west.jiangu")
        ids[key] = placed[item.id]
    return ids


def test_a_side_names_its_own_hanging_set_only():
    """鄉飲酒's 磬 hangs between the steps (磬階間縮霤, 大夫而特縣), but was named 東縣 磬 (the
    east set) because its layout group is east; the 大射's racks keep 東縣 and 西縣."""
    from soundscape import cuesheet
    from soundscape.resources import bundled_dir

    for rite, expected in (("xiangyinjiu", {"qing": "磬"}),
                           ("dashe", {"east.shengqing": "東縣 笙磬", "west.zhong": "西縣 鐘"})):
        sheet = cuesheet.load(bundled_dir("cues") / f"{rite}.toml")
        placed = orchestra.place(sheet.layout, load_site(rite=rite if rite != "dashe" else None))
        assert {key: placed[key].name for key in expected} == expected
