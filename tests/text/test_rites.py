"""The bundled rites: 鄉飲酒禮, 鄉射禮 and 燕禮 beside 大射, read from the 《四部叢刊》 print."""

from __future__ import annotations

import pytest

from soundscape import cuesheet
from soundscape.errors import CueSheetError, TextError
from soundscape.resources import bundled_dir
from soundscape.text.derive import derive, rites
from soundscape.text.hanzi import is_han, normalise

RITES = ("dashe", "xiangyinjiu", "xiangshe", "yan")

GONG_GE = [("luming", "ge"), ("simu", "ge"), ("huanghuangzhehua", "ge")]
SHENG = [("nangai", "sheng"), ("baihua", "sheng"), ("huashu", "sheng")]
JIAN_GE = [("yuli", "ge"), ("yougeng", "sheng"), ("nanyoujiayu", "ge"), ("chongqiu", "sheng"),
           ("nanshanyoutai", "ge"), ("youyi", "sheng")]
HE = [(p, "he") for p in ("guanju", "getan", "juaner", "quechao", "caifan", "caipin")]
# The music of each rite, in text order (the 記's variants apart).
MUSIC = {
    "xiangyinjiu": [*GONG_GE, *SHENG, *JIAN_GE, *HE, ("wusuanyue", "wusuan"),
                    ("gaixia", "jinzou")],
    "xiangshe": [*HE, ("zouyu", "she"), ("wusuanyue", "wusuan"), ("gaixia", "jinzou")],
    "yan": [*GONG_GE, *SHENG, *JIAN_GE, *HE, ("wusuanyue", "wusuan"), ("gaixia", "jinzou")],
}


def text_han(quote: str) -> str:
    """A quote's Han characters, normalised (editions differ in marks and glyphs)."""
    return "".join(c for c in normalise(quote) if is_han(c))


@pytest.fixture(scope="module")
def sheets():
    return {r: cuesheet.load(bundled_dir("cues") / f"{r}.toml") for r in RITES}


@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe", "yan"])
def test_committed_sheet_is_what_derive_gives(rite, sheets):
    derived = derive(rites.load_rite_text(rite), text_id=rite, title=rites.rite(rite).title,
                     rite=rite)
    assert derived == sheets[rite]


@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe", "yan"])
def test_music_of_each_rite_in_order(rite, sheets):
    main = [(m.piece, m.kind) for m in sheets[rite].music if not m.variant]
    assert main == MUSIC[rite]


def test_quotes_of_the_music_formulas(sheets):
    quotes = {m.piece: text_han(m.quote) for m in sheets["xiangyinjiu"].music if not m.variant}
    assert quotes["luming"] == "歌鹿鳴"
    assert quotes["nangai"] == "笙入堂下磬南北面立樂南陔"
    assert quotes["yuli"] == "乃間歌魚麗" and quotes["yougeng"] == "笙由庚"
    assert quotes["guanju"] == "乃合樂周南關雎"
    yan = {m.piece: text_han(m.quote) for m in sheets["yan"].music if not m.variant}
    assert yan["guanju"] == "遂歌鄉樂周南關雎"  # 鄉樂 is the 合樂
    xiangshe = {m.piece: text_han(m.quote) for m in sheets["xiangshe"].music}
    assert xiangshe["guanju"] == "乃合樂周南關雎"  # the 笙 that enter join it: not a 笙 piece


def test_forces_from_the_text(sheets):
    for rite in ("xiangyinjiu", "yan"):
        singing = [m for m in sheets[rite].music if m.kind in ("ge", "he") and not m.variant]
        assert {dict(m.forces)["gong"] for m in singing} == {4}
        assert {dict(m.forces)["se"] for m in singing} == {2}
    assert dict(sheets["dashe"].music_cue("luming").forces) == {"gong": 6, "se": 4}


def test_sheng_and_he_use_the_sheng_with_its_stones(sheets):
    sheet = sheets["xiangyinjiu"]
    layout = {i.id: i for i in sheet.layout}
    assert {i.instrument for i in sheet.layout} == {"bianqing", "sheng", "jiangu"}  # no bells
    for cue in sheet.music:
        if cue.kind == "sheng":
            assert set(cue.performers) == {"sheng", "qing"}
        if cue.kind == "he":
            assert {"gong", "se", "sheng", "qing"} <= set(cue.performers)
    assert layout["qing"].facing == "north" and layout["sheng"].relation == "south_of"


def test_xiangshe_shooting_keeps_bu_gu_bu_shi_on_five_jie(sheets):
    from soundscape.music.repertoire import load_piece

    shoot = next(m for m in sheets["xiangshe"].music if m.kind == "she")
    assert shoot.piece == "zouyu"
    assert "不鼓不釋" in shoot.conditions and "間若一" in shoot.conditions
    piece = load_piece("zouyu")
    assert (piece.zhong.count, piece.jie.heard) == (5, 1)  # 五節, 一節先以聽


def test_negations_are_kept_in_the_steps(sheets):
    steps = {text_han(s.quote): s for s in sheets["xiangshe"].steps}
    taishi = next(s for q, s in steps.items() if q.startswith("大師不興許諾"))
    assert taishi.action == "許諾"
    for rite in ("dashe", "xiangyinjiu", "xiangshe", "yan"):
        for step in sheets[rite].steps:
            quote = text_han(step.quote)
            if quote.startswith(("工不興", "大師不興")):
                assert step.action != "興", (rite, quote)
            if quote.startswith(("衆工不拜", "工不拜")):
                assert step.action != "拜", (rite, quote)


def test_gai_is_the_walking_rhythm_of_the_guest_going_out(sheets):
    for rite in RITES:
        sheet = sheets[rite]
        gai = next(m for m in sheet.music if m.piece == "gaixia" and not m.variant)
        assert gai.stop != cuesheet.STOP_LENGTH
        stop = text_han(sheet.step(gai.stop).quote)
        assert "出" in stop or "門外" in stop, (rite, stop)


def test_ji_is_a_part_apart_and_its_music_are_variants(sheets):
    yan = sheets["yan"]
    ji = [s for s in yan.sections if s.part == "記"]
    assert len(ji) == 1 and yan.sections[-1] == ji[0]
    variants = [m for m in yan.music if m.variant]
    assert variants and all(yan.step(m.start).section == ji[0].id for m in variants)
    assert [(m.variant, m.piece) for m in variants] == [
        ("若以樂納賓", "sixia"), ("若以樂納賓", "sixia"), ("若以樂納賓", "luming"),
        ("若以樂納賓", "xingong"), ("若舞", "shao"), ("記:有房中之樂", "fangzhong")]


def test_ji_variants_are_off_unless_asked_for(sheets):
    yan = sheets["yan"]
    performed = cuesheet.performed(yan)
    assert not any(s.part == "記" for s in performed.sections)
    assert not any(m.variant for m in performed.music)
    assert len(performed.steps) < len(yan.steps)
    chosen = cuesheet.performed(yan, ("若以樂納賓",))
    extra = [m for m in chosen.music if m.variant]
    assert extra and all(m.start in {s.id for s in chosen.steps} for m in extra)
    with pytest.raises(CueSheetError, match="variant '若射' unknown; accepted: 若以樂納賓, 若舞"):
        cuesheet.performed(yan, ("若射",))


def test_missing_pages_are_reported_and_the_rest_derived():
    gaps = {r: [g.pages for g in rites.load_rite_text(r).gaps] for r in ("xiangshe", "yan")}
    assert gaps["xiangshe"] == [("7a", "7b"), ("23b",), ("37a", "37b")]
    assert gaps["yan"] == [("14a", "14b"), ("19a", "19b")]


def test_unknown_rite_names_the_known_ones():
    with pytest.raises(TextError, match="rite 'xiang' unknown; known: dashe, xiangyinjiu"):
        rites.rite("xiang")


def test_rites_command_lists_the_four():
    from click.testing import CliRunner

    from soundscape.cli import cli

    result = CliRunner().invoke(cli, ["rites"])
    out = result.output
    assert result.exit_code == 0, out
    for rite in RITES:
        assert rite in out
    assert "若以樂納賓" in out and "鄉飲酒禮" in out


def test_the_rites_table_counts_as_sections_and_cues_do():
    """`rites` said 23 sections and 20 music cues for 鄉飲酒禮, where `sections` lists 22 and
    `cues` 21: the 記 and its variant were counted in one and not the other, unsaid."""
    import json
    import re

    from click.testing import CliRunner

    from soundscape.cli import cli

    runner = CliRunner()
    table = runner.invoke(cli, ["rites"]).output
    for rite in ("xiangyinjiu", "yan", "dashe"):
        row = next(line for line in table.splitlines() if line.startswith(rite))
        listed = json.loads(runner.invoke(cli, ["sections", "--rite", rite, "--json"]).stdout)
        cued = runner.invoke(cli, ["cues", "--rite", rite]).output
        [all_music] = re.findall(r"(\d+) music cues", cued)
        sections, music = map(int, re.search(r"(\d+) sections, (\d+) music cues", row).groups())
        variants = re.search(r"(\d+) variant cues?", row)
        assert sections == len(listed), row
        assert music + (int(variants.group(1)) if variants else 0) == int(all_music), row


def test_every_music_the_yan_names_is_cued(sheets):
    """燕禮 記: 若舞則勺 … 有房中之樂: both are cued (as variants), nothing is left unscored."""
    from soundscape.text.derive import unscored_music

    assert unscored_music(rites.load_rite_text("yan")) == []
    cued = {m.piece: m for m in sheets["yan"].music}
    assert text_han(cued["shao"].quote) == "舞則勺"
    assert text_han(cued["fangzhong"].quote) == "有房中之樂"


def test_shao_and_fangzhong_follow_the_xiang_yue(sheets):
    """鄭注 on 若舞則勺: 既合鄉樂，萬舞而奏之 — the 勺 follows the 鄉樂; 房中之樂 (鄭注:
    弦歌周南召南之詩，而不用鍾磬之節也) sings the 鄉樂's songs, after them; both by the 工
    and their 瑟, no bells or stones."""
    yan = sheets["yan"]
    order = {s.id: i for i, s in enumerate(yan.steps)}
    last_song = max(order[m.start] for m in yan.music if m.kind == "he" and not m.variant)
    for piece in ("shao", "fangzhong"):
        cue = next(m for m in yan.music if m.piece == piece)
        assert order[cue.anchor] == last_song + 1, piece
        assert set(cue.performers) == {"gong", "se"}


def test_xin_gong_follows_the_sheng_ge_three_times(sheets):
    """燕禮 記: 若以樂納賓…升歌鹿鳴，下管新宮，笙入三成 — 鄭注: 管之入三成，謂三終也. The 新宮
    comes after the 升歌 (anchored at the step after its last song), played three 終."""
    yan = sheets["yan"]
    order = {s.id: i for i, s in enumerate(yan.steps)}
    xingong = yan.music_cue("xingong")
    assert text_han(xingong.quote) == "下管新宮笙入三成" and xingong.repeats == 3
    sung = [m for m in yan.music if m.kind == "ge" and not m.variant
            and yan.step(m.start).section == yan.step(yan.music_cue("luming").start).section]
    assert order[xingong.anchor] == max(order[m.start] for m in sung) + 1


def test_three_sheng_and_one_he_where_the_text_says_so(sheets):
    """鄉射禮 記: 三笙一和而成聲 — 鄭注: 三人吹笙，一人吹和，凡四人也. 鄉飲酒禮 says nothing
    of the kind: one 笙 there."""
    xiangshe = sheets["xiangshe"]
    sheng = [i for i in xiangshe.layout if i.instrument == "sheng"]
    assert [i.name for i in sheng] == ["笙", "笙", "笙", "和"]
    assert all(text_han(i.quote) == "三笙一和" for i in sheng[1:])
    he = next(m for m in xiangshe.music if m.kind == "he")
    assert {i.id for i in sheng} <= set(he.performers)
    assert [i.name for i in sheets["xiangyinjiu"].layout if i.instrument == "sheng"] == ["笙"]


def test_na_bin_replaces_the_rites_songs_up_to_the_xiang_yue(sheets):
    """燕禮 記: 若以樂納賓…升歌鹿鳴，下管新宮，笙入三成，遂合鄉樂. 鄭注 on 大射: 歌鹿鳴三終，
    而不歌四牡、皇皇者華; 管之入三成 (the 管 is the 笙's entry); 言遂者，不間也. So the rite's
    工歌, 笙 and 間歌 give way; the 鄉樂 stays."""
    yan = sheets["yan"]
    assert yan.music_cue("luming_2").replaces == tuple(p for p, _ in GONG_GE)
    assert yan.music_cue("xingong").replaces == tuple(p for p, _ in SHENG + JIAN_GE)
    with_it = [m.piece for m in cuesheet.performed(yan, ("若以樂納賓",)).music]
    assert with_it == ["sixia", "sixia", "luming", "xingong", *(p for p, _ in HE),
                       "wusuanyue", "gaixia"]
    without = [(m.piece, m.kind) for m in cuesheet.performed(yan).music]
    assert without == MUSIC["yan"]
