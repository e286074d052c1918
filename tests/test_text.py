"""Tests of soundscape.text: normalisation, parsing, errors."""

from __future__ import annotations

import pytest

from soundscape import text
from soundscape.errors import TextError


@pytest.mark.parametrize(("variant", "canonical"), [
    ("乐", "樂"), ("钟", "鐘"), ("鍾", "鐘"), ("镈", "鑮"), ("鎛", "鑮"), ("鼔", "鼓"),
    ("狸", "貍"), ("间", "間"), ("閒", "間"), ("阕", "闋"), ("骜", "驁"), ("鸣", "鳴"),
    ("宫", "宮"), ("颂", "頌"), ("荡", "簜"), ("筭", "算"),
])
def test_normalise_unifies_variants(variant, canonical):
    assert text.normalise(variant) == canonical


def test_normalise_keeps_length_and_non_han():
    s = "奏《肆夏》，乐阕。"
    assert len(text.normalise(s)) == len(s)
    assert text.normalise(s) == "奏《肆夏》，樂闋。"


def test_punctuated_and_bare_text_give_the_same_chars():
    bare = text.parse("荡在建鼓之閒鼗倚於頌磬西紘\n右設樂\n", source="a")
    punctuated = text.parse("簜在建鼓之间，鼗倚于颂磬西纮。\n右设乐\n", source="b")
    assert bare.chars == punctuated.chars
    assert punctuated.quote(0, 6) == "簜在建鼓之间"


def test_notes_and_headings_are_set_aside():
    t = text.parse("# edition\n奏肆夏【金奏也】賓升\n右納賓\n樂闋\n", source="x")
    assert t.header == ("edition",)
    assert t.chars == "奏肆夏賓升樂闋"
    assert [(h.name, h.end) for h in t.headings] == [("納賓", 5)]
    assert t.notes[0].offset == 3 and t.notes[0].text == "金奏也"
    assert t.quote(2, 4) == "夏賓"


def test_bundled_text_has_45_sections_and_notes_that_fit():
    t = text.load_bundled()
    assert len(t.headings) == 45
    assert t.headings[2].name == "設樂"
    assert "【" not in t.quote(0, len(t.chars)) and "簜在建鼔之間" in t.quote(0, len(t.chars))
    for note in t.notes:
        assert t.chars[:note.offset].endswith(note.after)
    assert any("先擊朔鼙" in n.text for n in t.notes)


def test_unreadable_empty_and_wrong_encoding(tmp_path):
    with pytest.raises(TextError, match="cannot read"):
        text.load(tmp_path / "missing.txt")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"  \n")
    with pytest.raises(TextError, match="empty"):
        text.load(empty)
    big5 = tmp_path / "big5.txt"
    big5.write_bytes("大射之儀".encode("big5"))
    with pytest.raises(TextError, match=r"big5.txt:1: .*not UTF-8"):
        text.load(big5)
    latin = tmp_path / "latin.txt"
    latin.write_text("no Chinese here\n", encoding="utf-8")
    with pytest.raises(TextError, match="no Chinese text"):
        text.load(latin)
