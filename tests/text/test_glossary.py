"""Tests of soundscape.text.glossary: the ids of docs/architecture.md and term lookup."""

from __future__ import annotations

from soundscape.music import repertoire
from soundscape.text import glossary


def test_architecture_ids_exist():
    g = glossary.load()
    assert {"bianzhong", "bo", "bianqing", "jiangu", "pi", "tao", "se", "guan", "sheng",
            "voice"} <= set(g.ids("instrument"))
    assert {"tang", "zuojie", "xijie", "dahou", "fa_dahou", "gu_bei", "gong_xi",
            "zhongting"} <= set(g.ids("place"))
    assert {"sixia", "luming", "xingong", "lishou", "gaixia", "aoxia",
            "wusuanyue"} <= set(g.ids("piece"))
    assert {"jinzou", "ge", "guan", "she", "wusuan"} <= set(g.ids("kind"))
    assert {"fuhou", "huozhe"} <= set(g.ids("actor"))


def test_lookup_through_variants():
    g = glossary.load()
    assert g.id_of("instrument", "镈") == "bo"
    assert g.id_of("piece", "狸首") == "lishou"
    assert g.id_of("piece", "陔") == "gaixia"
    assert g.name("actor", "fuhou") == "負侯"
    assert g.id_of("place", "nowhere") is None


def test_an_unlisted_actor_is_named_in_pinyin_and_an_unreadable_one_by_code_point():
    g = glossary.load()
    assert g.id_or_pinyin("actor", "負侯者") == "fuhou"  # listed: its id
    assert g.id_of("actor", "衆") is None and g.id_or_pinyin("actor", "衆") == "zhong"
    assert g.id_or_pinyin("actor", "弟子") == "di_zi"
    assert g.id_or_pinyin("actor", "a-b") == "u61_u2d_u62"  # still an id: letters, _
    assert g.id_or_pinyin("actor", "弓") == "gong_u5f13"  # 公 is gong: no two share an id
    for term in ("衆", "弟子", "a-b", "公卿"):
        assert g.id_or_pinyin("actor", term).replace("_", "").isalnum()


def test_no_source_of_the_rites_is_named_by_a_code_point():
    """鄉飲酒禮's 衆 and 鄉射禮's 弟子 were ``u8846 (pour)`` and ``u5f1f_5b50 (speaking)``."""
    from soundscape.resources import bundled_dir
    from soundscape.sequence import perform_from_file

    for rite, named in (("xiangyinjiu", "zhong (pour)"), ("xiangshe", "di_zi (speaking)")):
        romans = [s.roman for s in perform_from_file(
            bundled_dir("cues") / f"{rite}.toml").sources.values()]
        assert named in romans
        assert not [r for r in romans if r.split()[0].startswith("u") and
                    r.split()[0][1:2].isdigit()], romans


def test_longest_first_order():
    terms = glossary.load().terms_longest_first("piece")
    assert terms.index("南陔") < terms.index("陔")


def test_piece_ids_match_the_repertoire_files():
    g = glossary.load()
    for piece_id in repertoire.list_pieces():
        title = repertoire.load_piece(piece_id).title
        assert g.id_of("piece", title) == piece_id, (piece_id, title)
