"""Readings in context: every polyphonic character of the twelve songs and of the four
rites' speech is read in the sense of its passage (the hand-checked list
``readings_expected.tsv``), in Middle Chinese and Mandarin.

The list test uses only ``reading.read``, so it runs on the old first-reading code too:
there it fails on 王事's 事, 大夫's 夫, 請以樂's 樂, 正歌's 正 and the rest."""

from pathlib import Path

import pytest
import tshet_uinh

from soundscape import cuesheet
from soundscape.errors import TextError
from soundscape.music.repertoire import load_piece
from soundscape.resources import bundled_dir
from soundscape.text.hanzi import is_han, normalise_char
from soundscape.text.reading import read, syllable

SONGS = ("luming", "simu", "huanghuangzhehua", "yuli", "nanyoujiayu", "nanshanyoutai",
         "guanju", "getan", "juaner", "quechao", "caifan", "caipin")
RITES = ("dashe", "xiangyinjiu", "xiangshe", "yan")
# The archery's own words (data/archery.toml [commands], sequence.archery's announcement).
ARCHERY = ("毋射獲毋獵獲", "不貫不釋", "不鼓不釋", "無射獲無獵獲", "右賢於左一純一奇", "左賢於右",
           "左右鈞")


def _rows() -> list[dict]:
    lines = [line for line in (Path(__file__).parent / "readings_expected.tsv").read_text(
        encoding="utf-8").splitlines() if line and not line.startswith("#")]
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"), strict=True)) for line in lines[1:]]


ROWS = _rows()


def _unmarked(passage: str) -> tuple[str, int | None]:
    """The passage without its [x] mark, and the marked offset (None: unmarked)."""
    at = passage.find("[")
    return passage.replace("[", "").replace("]", ""), (None if at < 0 else at)


def _texts() -> dict[str, list[tuple[str, list[tuple[int, str]]]]]:
    """Where → texts read as one (a song's lyric, a spoken phrase), each with its passages
    (offset, passage): the songs' lines, or the phrase itself."""
    out = {}
    for piece_id in SONGS:
        piece = load_piece(piece_id)
        passages, at = [], 0
        for phrase in piece.phrases:
            line = "".join(n.lyric or "" for n in phrase)
            passages.append((at, line))
            at += len(line)
        out[piece_id] = [("".join(n.lyric or "" for n in piece.notes), passages)]
    for rite in RITES:
        sheet = cuesheet.load(bundled_dir("cues") / f"{rite}.toml")
        quotes = dict.fromkeys("".join(c for c in cue.quote if is_han(c)) for cue in sheet.speech)
        out[rite] = [(q, [(0, q)]) for q in quotes]
    out["archery"] = [(q, [(0, q)]) for q in ARCHERY]
    return out


TEXTS = _texts()


def _places(row: dict):
    """Every (text, index) where the row's character stands in its passage."""
    passage, marked = _unmarked(row["passage"])
    found = []
    for text, passages in TEXTS[row["where"]]:
        for start, line in passages:
            if line == passage:
                offsets = [marked] if marked is not None else [
                    k for k, c in enumerate(line) if c == row["char"]]
                found += [(text, start + k) for k in offsets]
    return found


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['where']}-{r['passage']}-{r['char']}")
def test_each_polyphonic_character_is_read_in_its_sense(row):
    places = _places(row)
    assert places, f"{row['passage']} is no longer in {row['where']}"
    for text, i in places:
        said = read(text, "middle-chinese")[i]
        assert said.character == row["char"]
        assert said.ipa + said.tone == row["ipa"], (row["fanqie"], row["source"])
        if row["pinyin"] != "-":
            said = read(text, "mandarin")[i]
            assert said.ipa + said.tone == row["mandarin"], (row["pinyin"], row["source"])


def _entries(char: str):
    from soundscape.text.reading import _choices

    written = _choices()["variants"].get(char, char)
    return tshet_uinh.資料.query字頭(written) or tshet_uinh.資料.query字頭(normalise_char(char))


def test_the_expected_ipa_is_the_syllable_of_the_named_fanqie():
    """The list's ipa column is the 王力 1980 syllable of its 反切 (so a row checks the 反切)."""
    from soundscape.text.reading import _middle_chinese

    for row in ROWS:
        chosen = [e for e in _entries(row["char"]) if e.反切 == row["fanqie"]]
        assert chosen, row
        syl = _middle_chinese(row["char"], chosen[0].音韻地位.描述)
        assert syl.ipa + syl.tone == row["ipa"], row


def test_the_list_covers_every_polyphonic_syllable_sung_and_spoken():
    listed = {(r["where"], _unmarked(r["passage"])[0], r["char"]) for r in ROWS}
    sung = spoken = 0
    for where, texts in TEXTS.items():
        for _, passages in texts:
            for _, line in passages:
                for char in line:
                    if len({e.音韻地位.描述 for e in _entries(char)}) > 1:
                        assert (where, line, char) in listed, (where, line, char)
                        sung += where in SONGS
                        spoken += where not in SONGS
    assert (sung, spoken) == (231, 169)   # the 904 sung syllables; each phrase said once


# The findings (issue 28, item 4), each against the first reading tshet-uinh lists.
FINDINGS = [
    ("請以樂", 2, "疑二江入"), ("命用樂", 2, "疑二江入"), ("大夫與大夫", 1, "幫三C虞平"),
    ("正歌備", 0, "章開三清去"), ("王事靡盬", 1, "崇開三之去"), ("示我周行", 0, "船開三脂去"),
    ("不遑將父", 3, "並三C虞上"), ("駪駪征夫", 3, "幫三C虞平"), ("維鳩方之", 2, "幫三C陽平"),
    ("維鳩居之", 2, "見開三C魚平"), ("輾轉反側", 2, "幫三C元上"), ("言告師氏", 3, "常開三支上"),
    ("害澣害否", 3, "幫三C尤上"), ("陟彼崔嵬", 2, "從合一灰平"), ("周爰咨度", 3, "定開一唐入"),
]


@pytest.mark.parametrize(("text", "at", "position"), FINDINGS)
def test_the_findings_are_read_in_their_sense_not_the_first_reading(text, at, position):
    from soundscape.text.reading import _middle_chinese

    char = text[at]
    first = tshet_uinh.資料.query字頭(char)[0].音韻地位.描述
    assert first != position, "a finding the first reading already gets right"
    assert read(text)[at] == _middle_chinese(char, position)
    assert read(text)[at] != _middle_chinese(char, first)


def test_the_same_character_twice_in_one_phrase_takes_two_senses():
    music, joy = read("請以樂樂于賓")[2:4]
    assert (music.ipa, joy.ipa) == ("ŋɔk", "lɑk")       # 五角切, 盧各切
    music, joy = read("請以樂樂于賓", "mandarin")[2:4]
    assert (music.ipa + music.tone, joy.ipa + joy.tone) == ("ɥɛ4", "lɤ4")


def test_a_lone_character_takes_its_default():
    from soundscape.text.senses import choose

    alone = choose("樂")[0]
    assert (alone.fanqie, alone.word) == ("五角", "") and "music" in alone.why
    assert choose("嘉賓式燕以樂")[-1].word == "式燕以樂"
    assert syllable("樂").ipa == "ŋɔk" and syllable("夫").onset == "p"
    assert choose("鹿")[0] is None


@pytest.fixture
def table_of(tmp_path, monkeypatch):
    """Point text.senses at a senses.toml written by the test."""
    from soundscape.text import senses

    def write(body: str):
        folder = tmp_path / "readings"
        folder.mkdir(exist_ok=True)
        (folder / "choices.toml").write_text("[variants]\n", encoding="utf-8")
        (folder / "senses.toml").write_text(body, encoding="utf-8")
        for cached in (senses.table, senses._variants, senses._standard):
            cached.cache_clear()
        return senses

    monkeypatch.setattr("soundscape.text.senses.data_dir", lambda: tmp_path)
    yield write
    monkeypatch.undo()
    for cached in (senses.table, senses._variants, senses._standard):
        cached.cache_clear()


LE = '["樂"]\ndefault = "五角"\nwhy = "x"\npinyin = { "五角" = "yue4", "盧各" = "le4" }\n'


def test_the_longest_word_found_wins(table_of):
    senses = table_of(LE + 'words = [{ word = "以樂", reading = "五角", source = "s" },\n'
                      '  { word = "燕以樂", reading = "盧各", source = "s" }]\n')
    assert senses.choose("請以樂")[-1].fanqie == "五角"
    assert senses.choose("式燕以樂")[-1].fanqie == "盧各"
    assert senses.choose("樂")[0].fanqie == "五角"


@pytest.mark.parametrize(("body", "named"), [
    ('["樂"]\ndefault = "五角"\nwhy = "x"\npinyin = { "五角" = "yue4", "盧角" = "le4" }\n',
     "樂.pinyin.盧角.*五教, 五角, 盧各"),
    (LE.replace("yue4", "yue"), "樂.pinyin.五角='yue'.*tone digit"),
    (LE.replace('default = "五角"', 'default = "五教"'), "樂.default='五教'"),
    (LE + 'words = [{ word = "樂樂", reading = "五角", source = "s" }]\n',
     "樂.words\\[0\\].word='樂樂'.*marking it as \\[樂\\]"),
    (LE + 'words = [{ word = "以樂", reading = "五角" }]\n', "樂.words\\[0\\].source"),
])
def test_a_bad_table_is_named_at_its_key(table_of, body, named):
    senses = table_of(body)
    with pytest.raises(TextError, match=named):
        senses.table()


def test_the_planner_reads_sung_characters_in_their_line_and_spoken_phrases_whole():
    """Sung: one character per note, read in the words of its voice's line (樂 of 和樂 is
    joy though 樂 alone is music); spoken: the phrase read whole (請以樂: music)."""
    from soundscape.performance import Event
    from soundscape.sequence.planner import _pronounced

    def sung(source, t, char):
        return Event(t, 0.5, source, None, 0.7, "sing", "luming", "luming", char)

    line = "和樂且湛"
    events = [sung(s, 0.1 * k + (0.01 if s == "b" else 0), c)
              for k, c in enumerate(line) for s in ("a", "b")]
    events.append(Event(9.0, 1.0, "sishe", None, 0.8, "call", "x", None, "請以樂"))
    events.append(Event(9.0, 1.0, "yue", None, 0.8, "sing", "shao", "shao", "樂"))  # alone
    said = _pronounced(events, "middle-chinese")
    joy = [e.phones for e in said if e.lyric == "樂" and e.piece == "luming"]
    assert joy == ["l ɑ k", "l ɑ k"]                 # 盧各切, both singers
    assert [e.phones for e in said if e.lyric == "湛"] == ["t ɒ m"] * 2   # 丁含切
    assert said[-2].phones.split(" | ")[2].startswith("ŋ ɔ k")   # 五角切, music
    assert said[-1].phones == "ŋ ɔ k"                # a lone character: the default
    mandarin = _pronounced(events, "mandarin")
    assert [e.phones for e in mandarin if e.lyric == "湛"] == ["t a n"] * 2   # dān
