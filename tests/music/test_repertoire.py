"""The repertoire: piece files against their sources, the setting rule, errors."""

from __future__ import annotations

import csv
import importlib.util
import itertools
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from soundscape.cli import cli
from soundscape.errors import RepertoireError
from soundscape.music.repertoire import (
    BASES,
    list_pieces,
    load_drum_pattern,
    load_piece,
    load_piece_file,
    pieces_dir,
)
from soundscape.music.tuning import parse_name

TSV = pieces_dir() / "sources" / "fengya12_sepu_notes.tsv"
FENGYA = {"luming": "鹿鳴", "simu": "四牡", "huanghuangzhehua": "皇皇者華", "yuli": "魚麗",
          "nanyoujiayu": "南有嘉魚", "nanshanyoutai": "南山有臺", "guanju": "關雎",
          "getan": "葛覃", "juaner": "卷耳", "quechao": "鵲巢", "caifan": "采蘩",
          "caipin": "采蘋"}
SHENGSHI = ("nangai", "baihua", "huashu", "yougeng", "chongqiu", "youyi")
RECONSTRUCTIONS = ("sixia", "gaixia", "aoxia", "xingong", "lishou", "wusuanyue", "zouyu",
                   "shao", "fangzhong", *SHENGSHI)


def _tsv_rows(song: str) -> list[dict[str, str]]:
    with TSV.open(encoding="utf-8", newline="") as handle:
        return [row for row in csv.DictReader(handle, delimiter="\t") if row["piece"] == song]


def _build_module():
    spec = importlib.util.spec_from_file_location("_build", pieces_dir() / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- 鹿鳴 ---------------------------------------------------------------------------------------
def test_luming_has_32_36_35_notes_in_huangzhong_qinggong():
    piece = load_piece("luming")
    assert [len(s) for s in piece.stanzas] == [32, 36, 35]
    assert len(piece.notes) == 103
    assert piece.mode == "黃鍾清宮"
    assert piece.basis == "surviving"
    assert "工尺" in piece.basis_note and "清" in piece.basis_note


def test_luming_lu_per_note_matches_the_tsv():
    piece = load_piece("luming")
    rows = _tsv_rows("鹿鳴")
    assert len(rows) == len(piece.notes)
    for k, (row, note) in enumerate(zip(rows, piece.notes, strict=True)):
        assert note.name == row["resolved_pitch"], f"note {k + 1} ({row['char']})"
        assert note.lyric == row["char"], f"note {k + 1}"
        # The 清 prefix is what the 工尺 octave says (六 = 清黃鍾, 五 = 清太簇).
        assert note.name.startswith("清") == (row["gongche_as_printed"] in "六五")


def test_luming_default_reading_is_three_whole_songs_with_the_stanza_option():
    zhong = load_piece("luming").zhong
    assert (zhong.reading, zhong.count) == ("song", 3)
    assert "stanza" in zhong.readings


@pytest.mark.parametrize(("piece_id", "song"), sorted(FENGYA.items()))
def test_every_fengya_piece_follows_the_tsv(piece_id, song):
    piece = load_piece(piece_id)
    rows = _tsv_rows(song)
    assert [n.lyric for n in piece.notes] == [r["char"] for r in rows]
    stanza_sizes = [sum(1 for r in rows if int(r["stanza"]) == s)
                    for s in range(1, len(piece.stanzas) + 1)]
    assert [len(s) for s in piece.stanzas] == stanza_sizes
    for note, row in zip(piece.notes, rows, strict=True):
        if row["resolved_pitch"] != "?":
            assert note.name == row["resolved_pitch"]
        else:  # unresolved in the TSV: read from the 律字, 正 octave (stated in the basis)
            assert parse_name(note.name) == (parse_name(row["lü_char_as_printed"])[0], 0)
            assert row["char"] in piece.basis_note
    assert piece.basis == "surviving"


# -- every piece ----------------------------------------------------------------------------------
def test_every_piece_has_a_basis_and_a_note():
    ids = list_pieces()
    assert set(FENGYA) | set(RECONSTRUCTIONS) <= set(ids)
    for piece_id in ids:
        piece = load_piece(piece_id)
        assert piece.basis in BASES
        assert len(piece.basis_note) > 80, piece_id
        assert piece.ensemble, piece_id
        for note in piece.notes:
            parse_name(note.name)
    for piece_id in RECONSTRUCTIONS:
        piece = load_piece(piece_id)
        assert piece.basis == "reconstruction"
        assert piece.basis_note.startswith("Reconstruction"), piece_id


def test_jinzou_pieces_map_their_roles_to_the_instruments():
    for piece_id in ("sixia", "gaixia", "aoxia"):
        roles = {(p.role, p.instrument) for p in load_piece(piece_id).parts}
        # 金石: the stones play the melody with the bells (有鐘有磬為全)
        assert roles == {("melody", "bianzhong"), ("melody", "bianqing"), ("phrase_end", "bo"),
                         ("beat", "jiangu"), ("start", "tao"), ("call", "pi"),
                         ("answer", "pi")}


def test_sixia_sets_shimai_one_syllable_per_note():
    piece = load_piece("sixia")
    words = ("時邁其邦昊天其子之實右序有周薄言震之莫不震疊懷柔百神及河喬嶽允王維后"
             "明昭有周式序在位載戢干戈載櫜弓矢我求懿德肆于時夏允王保之")
    assert "".join(n.lyric for n in piece.notes) == words
    assert len(piece.phrases) == 15


def test_lishou_is_seven_jie_three_heard_with_the_surviving_verse():
    piece = load_piece("lishou")
    assert (piece.zhong.count, piece.jie.heard) == (7, 3)
    assert "".join(n.lyric for n in piece.notes).startswith("曾孫侯氏")
    assert set(piece.jie.pattern.strokes) <= {"○", "□"}
    assert piece.jie.pattern.caution


@pytest.mark.parametrize("piece_id", SHENGSHI)
def test_shengshi_are_labelled_wordless_reconstructions_for_the_sheng(piece_id):
    piece = load_piece(piece_id)
    assert piece.basis == "reconstruction" and "今亡" in piece.basis_note
    assert {part.instrument for part in piece.parts} == {"sheng"}
    assert len(piece.notes) == 32 and all(n.lyric is None for n in piece.notes)
    assert [n.name for n in piece.notes[-3:]] == ["南呂", "清太簇", "清黃鍾"]  # 小雅 cadence


def test_shengshi_melodies_differ_from_each_other():
    melodies = {tuple(n.name for n in load_piece(p).notes) for p in SHENGSHI}
    assert len(melodies) == len(SHENGSHI)


def test_zouyu_is_five_jie_one_heard_with_the_maoshi_words():
    piece = load_piece("zouyu")
    assert (piece.zhong.count, piece.jie.heard) == (5, 1)
    assert piece.basis == "reconstruction" and piece.mode == "無射清商"
    assert "".join(n.lyric for n in piece.notes) == "彼茁者葭壹發五豝于嗟乎騶虞" \
        "彼茁者蓬壹發五豵于嗟乎騶虞"


def test_wusuanyue_is_a_selection_of_the_fengya_songs():
    piece = load_piece("wusuanyue")
    assert piece.fill_seconds > 0 and piece.end_on == "stanza"
    assert len(piece.notes) == sum(len(load_piece(p).notes) for p in FENGYA)
    assert piece.stanza_labels[0] == "鹿鳴 1"


def test_shao_is_the_zhou_song_zhuo_set_by_the_rule():
    """燕禮 記 若舞則勺; 鄭注: 勺，頌篇…其詩曰：於鑠王師，遵養時晦…實維爾公允師: the
    words of 周頌 酌, set like every piece without a score, in the mode of the 鄉樂 it
    follows, sung by the 工 to the 瑟."""
    piece = load_piece("shao")
    assert piece.basis == "reconstruction" and piece.mode == "無射清商"
    words = "".join(n.lyric for n in piece.notes)
    assert words.startswith("於鑠王師遵養時晦") and words.endswith("實維爾公允師")
    assert {p.instrument for p in piece.parts} == {"voice", "se"}


def test_fangzhong_is_the_two_nan_sung_once_to_strings():
    """燕禮 記 有房中之樂; 鄭注: 弦歌周南召南之詩，而不用鍾磬之節也: the six songs of the
    周南 and 召南, each once, voice and 瑟 only (no bells, no stones)."""
    from soundscape.music.arrange import arrange
    from soundscape.music.tuning import default_tuning

    piece = load_piece("fangzhong")
    songs = ("guanju", "getan", "juaner", "quechao", "caifan", "caipin")
    assert piece.basis == "reconstruction"
    assert {p.instrument for p in piece.parts} == {"voice", "se"}
    arranged = arrange(piece, tuning=default_tuning())
    sung = [n for n in arranged.notes() if n.instrument == "voice"]
    words = "".join(n.lyric for song in songs for n in load_piece(song).notes)
    assert "".join(n.lyric for n in sung) == words  # each song once, in the 鄉樂's order


def test_drum_pattern_half_marker_is_not_a_stroke():
    pattern = load_drum_pattern("lu_1")
    assert "半" not in pattern.strokes
    assert 0 < pattern.half < len(pattern.strokes)
    assert pattern.symbols == {"○": "鼙", "□": "鼓"}


# -- the build script: the data is what the sources and the rule give -------------------------
def test_piece_files_are_up_to_date_with_the_build_script():
    build = _build_module()
    scores, modes = build.read_scores(), build.modes()
    for path in sorted(pieces_dir().glob("*.toml")):
        text = build.build_text(path, scores, modes)
        if text is not None:
            assert text == path.read_text(encoding="utf-8"), f"{path.name} is stale"


def test_setting_rule_stays_in_the_corpus_style_and_is_deterministic():
    build = _build_module()
    scores, modes = build.read_scores(), build.modes()
    corpus = build.corpus_for("黃鍾清宮", scores, modes)
    vocabulary = set(corpus.successors) | set(corpus.openings)
    assert corpus.cadence == ("南呂", "清太簇", "清黃鍾")
    lengths = [4, 5, 4, 4, 6, 4]
    lines = build.set_stanza(lengths, corpus, "test")
    assert lines == build.set_stanza(lengths, corpus, "test")
    assert lines != build.set_stanza(lengths, corpus, "other")
    assert [len(line) for line in lines] == lengths
    names = [n for line in lines for n in line]
    assert set(names) <= vocabulary
    assert tuple(names[-3:]) == corpus.cadence
    assert names[0] in corpus.openings
    for a, b in itertools.pairwise(names[:-2]):  # including the step into the cadence
        assert corpus.successors[a][b] > 0, (a, b)
    for line in lines[:-1]:
        assert line[-1] in corpus.line_ends


# -- errors -----------------------------------------------------------------------------------
GOOD = """
title = "試"
mode = "黃鍾清宮"
basis = "surviving"
basis_note = "test"
tempo_bpm = 60
[zhong]
count = 1
[parts.song]
role = "melody"
instrument = "voice"
articulation = "sing"
velocity = 0.5
lyrics = true
[[phrase]]
notes = ["黃鍾", "清黃鍾"]
lyrics = "呦呦"
"""


def _write(tmp_path: Path, text: str, name: str = "test") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_minimal_file_loads(tmp_path):
    piece = load_piece_file(_write(tmp_path, GOOD))
    assert [n.name for n in piece.notes] == ["黃鍾", "清黃鍾"]
    assert piece.notes[1].lyric == "呦"


@pytest.mark.parametrize(("old", "new", "key", "value"), [
    ('basis = "surviving"', 'basis = "guess"', "basis", "guess"),
    ('"清黃鍾"]', '"清黃X"]', "phrase[0].notes[1]", "清黃X"),
    ('lyrics = "呦呦"', 'lyrics = "呦"', "phrase[0].lyrics", "呦"),
    ("tempo_bpm = 60", "tempo_bpm = -1", "tempo_bpm", "-1"),
    # a ZeroDivisionError in music21's tempo; a note of 1e9 beats laid a score out until
    # the machine ran out of memory
    ("tempo_bpm = 60", "tempo_bpm = 1e-300", "tempo_bpm", "1e-300"),
    ('lyrics = "呦呦"', 'lyrics = "呦呦"\nbeats = [1, 1e9]', "phrase[0].beats",
     "1000000000.0"),
    ("velocity = 0.5", "velocity = 2", "parts.song.velocity", "2"),
    ('role = "melody"', 'role = "solo"', "parts.song.role", "solo"),
    ("count = 1", "count = 0", "zhong.count", "0"),
    ('title = "試"\n', "", "title", "missing"),
    # an instrument is an id of a known one, never a path (score failed naming no file)
    ('instrument = "voice"', 'instrument = "../../x"', "parts.song.instrument", "../../x"),
    ('instrument = "voice"', 'instrument = "qin"', "parts.song.instrument", "bianzhong"),
])
def test_broken_piece_files_name_file_key_and_value(tmp_path, old, new, key, value):
    assert old in GOOD
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(RepertoireError) as error:
        load_piece_file(path)
    message = str(error.value)
    assert str(path) in message and f"'{key}'" in message and value in message, message


def test_broken_toml_and_unknown_piece(tmp_path):
    path = _write(tmp_path, GOOD + "\n[[phrase\n")
    with pytest.raises(RepertoireError, match="not valid TOML"):
        load_piece_file(path)
    with pytest.raises(RepertoireError, match=r"unknown; known: .*luming"):
        load_piece("nosuchpiece")


def test_jie_with_an_unknown_pattern_fails(tmp_path):
    text = GOOD.replace("[zhong]\ncount = 1", '[zhong]\ncount = 7\n[jie]\nheard = 3\npattern = "x"')
    with pytest.raises(RepertoireError, match=r"jie.pattern.*'x' unknown"):
        load_piece_file(_write(tmp_path, text))


def test_selection_with_an_unknown_song_names_the_entry(tmp_path):
    shutil.copy(pieces_dir() / "luming.toml", tmp_path / "luming.toml")
    text = (pieces_dir() / "wusuanyue.toml").read_text(encoding="utf-8")
    start = text.index("songs = [")
    text = text[:start] + 'songs = ["luming", "lost"]' + text[text.index("]", start) + 1:]
    path = _write(tmp_path, text, "wusuanyue")
    with pytest.raises(RepertoireError, match=r"songs\[1\].*'lost' unknown"):
        load_piece_file(path)


# -- CLI --------------------------------------------------------------------------------------
def test_pieces_command_lists_every_piece_with_its_basis():
    result = CliRunner().invoke(cli, ["pieces"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["id", "title", "basis", "mode", "notes", "ensemble"]
    assert len(lines) == 1 + len(list_pieces())
    for piece_id in list_pieces():
        line = next(x for x in lines if x.startswith(piece_id + " "))
        assert load_piece(piece_id).basis in line


def test_pieces_command_describes_one_piece():
    result = CliRunner().invoke(cli, ["pieces", "luming", "--notes"])
    assert result.exit_code == 0, result.output
    assert "basis: surviving" in result.output
    assert "32 + 36 + 35" in result.output
    assert "呦呦鹿鳴" in result.output


def test_every_sung_character_has_a_reading():
    """Every lyric of every piece is read in both readings (the 瑟譜 prints 闗, 髙, 𤣥, 釡,
    耉: read as 關, 高, 玄, 釜, 耇; without that a render of 關雎 or 無算樂 stopped)."""
    from soundscape.text.reading import READINGS, syllable

    for piece_id in list_pieces():
        for note in load_piece(piece_id).notes:
            if note.lyric:
                for reading in READINGS:
                    assert syllable(note.lyric, reading).lyric, (piece_id, note.lyric, reading)
