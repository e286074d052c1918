"""Readings: a character's syllable in Middle Chinese (王力 1980 on tshet-uinh) and Mandarin."""

import pytest

from soundscape.music.repertoire import load_piece
from soundscape.text.reading import (
    DEFAULT_READING,
    READINGS,
    ReadingError,
    read,
    scheme,
    syllable,
    tone_contour,
)


def test_readings_and_default():
    assert set(READINGS) == {"middle-chinese", "mandarin"}
    assert DEFAULT_READING == "middle-chinese"
    assert "王力" in scheme("middle-chinese") and "pypinyin" in scheme("mandarin")


@pytest.mark.parametrize(("char", "phones", "tone", "ipa"), [
    ("鹿", "l u k", "入", "luk"),         # 來一東入: entering tone, coda -k
    ("鳴", "m j ɐ ŋ", "平", "mĭɐŋ"),      # 明三庚平
    ("苹", "bʱ j ɐ ŋ", "平", "bʱĭɐŋ"),    # 並三庚平, not OpenCC's 蘋 (並三真平)
    ("食", "dʑʱ j ə k", "入", "dʑʱĭək"),  # the choices table: 乘力切 (to eat)
    ("呦", "j ə w", "平", "iəu"),          # 幽 read as 尤 with the four-grade medial i
    ("瑟", "ʃ j e t", "入", "ʃĭet"),       # 臻 入 → 先 column: coda -t
    ("甚", "ʑ j e m", "上", "ʑĭĕm"),     # 侵 上: coda -m
    ("德", "t ə k", "入", "tək"),
    ("請", "tsʰ j ɛ ŋ", "上", "tsʰĭɛŋ"),   # the choices table: 七靜切 (to request)
    ("不", "p j w ə t", "入", "pĭuət"),    # 分勿切, the negation of 「不鼓不釋」
])
def test_middle_chinese(char, phones, tone, ipa):
    syl = syllable(char, "middle-chinese")
    assert (syl.lyric, syl.tone, syl.ipa) == (phones, tone, ipa)


def test_middle_chinese_tone_contours_are_the_stated_ones():
    contours = [tone_contour(syllable(c)) for c in "公請射鹿"]  # 平 上 去 入
    assert contours == [(3, 3), (3, 5), (5, 1), (3,)]


def test_variants_of_the_printed_score():
    assert syllable("徳").lyric == syllable("德").lyric
    assert syllable("鼔").lyric == syllable("鼓").lyric == "k u"


def test_mandarin_in_context():
    syls = read("食野之苹", "mandarin")
    assert [s.lyric for s in syls] == ["ʂ ɨ", "j ɛ", "ʈʂ ɨ", "pʰ i ŋ"]
    assert [s.tone for s in syls] == ["2", "3", "1", "2"]
    assert tone_contour(syls[0]) == (3, 5)
    assert syllable("鹿", "mandarin").lyric == "l u"
    assert [s.lyric for s in read("示我周行", "mandarin")][-1] == "x ɑ ŋ"  # háng: the road
    assert [s.lyric for s in read("綠衣", "mandarin")] == ["l y", "i"]


def test_every_lyric_of_luming_reads():
    lyrics = "".join(n.lyric or "" for n in load_piece("luming").notes)
    for reading in READINGS:
        syls = read(lyrics, reading)
        assert len(syls) == len(lyrics)
        assert all(s.nucleus for s in syls)


def test_bad_input_is_named():
    with pytest.raises(ReadingError, match="們"):
        syllable("們", "middle-chinese")
    with pytest.raises(ReadingError, match="accepted: middle-chinese, mandarin"):
        syllable("鹿", "old-chinese")
    with pytest.raises(ReadingError, match="not one Han character"):
        syllable("a")
