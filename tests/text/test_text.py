"""Tests of soundscape.text.source: normalisation, parsing, errors."""

from __future__ import annotations

import codecs

import pytest

from soundscape import text
from soundscape.errors import TextError


@pytest.mark.parametrize(("variant", "canonical"), [
    ("乐", "樂"), ("钟", "鐘"), ("鍾", "鐘"), ("镈", "鑮"), ("鎛", "鑮"), ("鼔", "鼓"),
    ("狸", "貍"), ("间", "間"), ("閒", "間"), ("阕", "闋"), ("骜", "驁"), ("鸣", "鳴"),
    ("宫", "宮"), ("颂", "頌"), ("筭", "算"),
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
    with pytest.raises(TextError, match=r"missing\.txt: (no such file|cannot read)"):
        text.load(tmp_path / "missing.txt")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"  \n")
    with pytest.raises(TextError, match="empty"):
        text.load(empty)
    for name, start, kind in (("a.pdf", b"%PDF-1.7\n", "a PDF document"),
                              ("b.docx", b"PK\x03\x04\x14\x00", "a zip archive"),
                              ("c.doc", bytes.fromhex("d0cf11e0a1b11ae1"), "an old Word"),
                              ("d.rtf", b"{\\rtf1\\ansi", "an RTF document")):
        document = tmp_path / name
        document.write_bytes(start + "大射之儀".encode("gb18030") * 20)
        with pytest.raises(TextError, match=rf"{name}: is {kind}.*, not a text file; export"):
            text.load(document)
    noise = tmp_path / "noise.txt"
    noise.write_bytes("大射之儀\n".encode() + bytes(range(0x80, 0x100)))
    with pytest.raises(TextError, match=r"noise.txt:2: byte 0x80 at offset 13: not utf-8, "
                                        r"and neither gb18030 nor big5hkscs reads"):
        text.load(noise)
    broken = tmp_path / "broken16.txt"
    broken.write_bytes(codecs.BOM_UTF16_LE + "大射".encode("utf-16-le") + b"\x00\xd8")
    with pytest.raises(TextError, match=r"broken16.txt:1: .*not utf-16, although"):
        text.load(broken)
    latin = tmp_path / "latin.txt"
    latin.write_text("no Chinese here\n", encoding="utf-8")
    with pytest.raises(TextError, match="no Chinese text"):
        text.load(latin)


# Standard forms for the bundled text's variants that Big5 has no code for (鼔 →鼓 …).
_BIG5_FORMS = str.maketrans("捝横内虚鼔絶眂", "挩橫內虛鼓絕視")


@pytest.mark.parametrize(("saved", "read"), [("gb18030", "gb18030"), ("big5hkscs", "big5hkscs"),
                                             ("utf-16", "utf-16"),
                                             ("utf-32", "utf-32"), ("utf-8-sig", "utf-8")])
def test_a_text_saved_in_a_chinese_encoding_reads_as_in_utf8(tmp_path, saved, read):
    """A user's text in GB18030, Big5 or Notepad's UTF-16 was refused ("not UTF-8"). It is
    read as its encoding, chosen by which decoding gives the Yili's characters (GB18030 and
    Big5 each read the other's bytes as Han characters, no error)."""
    body = text.load_bundled().original.translate(_BIG5_FORMS)
    utf8, other = tmp_path / "utf8.txt", tmp_path / f"{saved}.txt"
    utf8.write_text(body, encoding="utf-8")
    other.write_bytes(body.encode(saved))
    expected, loaded = text.load(utf8), text.load(other)
    assert (loaded.encoding, loaded.original) == (read, expected.original)
    assert (loaded.chars, loaded.headings) == (expected.chars, expected.headings)
    short = "大射之儀君有命戒射".encode(saved)  # one line: enough to tell the encoding
    other.write_bytes(short)
    assert text.load(other).original == "大射之儀君有命戒射"


def test_derive_says_which_encoding_it_read(tmp_path):
    from click.testing import CliRunner

    from soundscape.cli import cli

    source = tmp_path / "gb.txt"
    source.write_bytes(text.load_bundled().original.encode("gb18030"))
    result = CliRunner().invoke(cli, ["derive", str(source), "-o", str(tmp_path / "gb.toml")])
    assert result.exit_code == 0, result.output
    assert f"note: {source}: not UTF-8; read as gb18030" in result.output


# ------------------------------------------------- commentary and translation

# Seed 003 (儀禮注疏 卷十六, simplified): 經文 with 鄭注 run on in one paragraph,
# then the 賈疏 after [疏]; the 注 and the 疏 quote 奏《肆夏》 again and again.
SEED_003 = (
    "　　奏《肆夏》。《肆夏》，乐章名，今亡。吕叔玉云：《肆夏》，《时迈》也。"
    "奏此以延宾，其著宣王德，劝贤与？《周礼》曰：“宾出入，奏《肆夏》。”\n"
    "　　[疏]“奏肆夏”。○注“肆夏”至“肆夏”。○释曰：云“《肆夏》乐章名，今亡”者，"
    "案《周礼·锺师》云“以锺鼓奏《九夏》”。云“《周礼》曰：宾出入，奏《肆夏》”者，"
    "按《大司乐》云。\n"
    "　　乐阕。阕，止也。乐止者，尊宾之礼盛於上也。\n"
    "　　[疏]“乐阕”。○注“阕止”至“上也”。○释曰：《燕礼》记亦云：“宾及庭，奏《肆夏》。"
    "宾拜酒，主人答拜而乐阕。”亦据啐酒时。\n"
)

# Seed 000 (a modern edition, simplified): 题解, 經文 with numbered notes,
# 注释, then a modern 译文 that says 奏《肆夏》 and 吹奏《新宫》 again.
SEED_000 = (
    "大射仪第七\n【题解】\n\n"
    "《大射仪》记述诸侯有朝觐、会盟、祭祀、息燕诸大事而与群臣习射的礼节仪式。\n\n"
    "大射之仪，君有命戒射（1）。宰戒百官有事于射者。\n\n"
    "奏《肆夏》，宾升自西阶。主人从之。乐阕。\n\n"
    "宾醉，北面坐，取其荐脯以降。奏《陔》。公不送。公入，《骜》（83）。\n\n"
    "【注释】\n\n"
    "（1）自“君有命戒射”至“羹定”，都是讲射前准备之事。\n\n"
    "（83）《骜》：《骜夏》，用钟鼓演奏的乐曲。其诗今亡。\n\n"
    "【译文】\n\n"
    "面朝东北献给国君。国君行拜礼接受象觚。然后奏《肆夏》乐曲。\n\n"
    "然后吹奏《新宫》三遍。\n"
)

# Seed 004 (儀禮注疏 卷十八, traditional): 鄭注 in （…） over several lines, a
# line break after every sentence, 賈疏 after [疏] with ○ divisions.
SEED_004 = (
    "司射先反位。\n"
    "（居前，俟所命入次而來飲。\n"
    "右手挾弦。\n"
    "） 三耦及衆射者皆升，飲射爵于西階上。\n"
    "（不勝之黨無不飲。\n"
    "） [疏]注“不勝之黨無不飲”。\n"
    "○釋曰：以其經雲“三耦及衆射者皆升飲射爵”者，言升之，明知不勝之黨無不飲。\n"
    "但大射者，所以擇士以助祭，今若罰爵，在于不勝之黨，雖數中亦受罰。\n"
    "及階，勝者先升升堂，少右。\n"
    "（先升，尊賢也。\n"
    "少右，辟飲者，亦因相飲之禮然。\n"
    "）\n"
)


def test_run_on_notes_and_subcommentary_are_set_aside():
    t = text.parse(SEED_003, source="003")
    assert t.chars == text.normalise("奏肆夏樂闋")
    assert [a.kind for a in t.asides] == ["注", "疏", "注", "疏"]
    assert t.aside_text(t.asides[0]).startswith("《肆夏》，乐章名")
    assert t.aside_text(t.asides[1]).startswith("[疏]“奏肆夏”")
    assert t.quote(0, 3) == "奏《肆夏"


def test_intro_notes_and_translation_are_set_aside():
    t = text.parse(SEED_000, source="000")
    assert [(a.kind, a.line) for a in t.asides] == [("卷題", 1), ("題解", 2), ("注釋", 12),
                                                    ("譯文", 18)]
    assert t.chars.startswith(text.normalise("大射之儀君有命戒射"))  # the title line is not
    assert t.chars.endswith(text.normalise("公入驁"))
    assert "譯" not in t.chars and "新宮" not in t.chars and "記述" not in t.chars
    assert t.notes == ()  # the note numbers (1), (83) hold no text


def test_parenthesised_notes_and_line_broken_subcommentary():
    t = text.parse(SEED_004, source="004")
    assert t.chars == text.normalise("司射先反位三耦及衆射者皆升飲射爵于西階上"
                                     "及階勝者先升升堂少右")
    assert t.headings == ()  # 右手挾弦 inside a note is neither text nor a heading
    assert [n.text.split("。")[0] for n in t.notes] == ["居前，俟所命入次而來飲",
                                                       "不勝之黨無不飲", "先升，尊賢也"]
    assert [a.kind for a in t.asides] == ["疏"]


def test_text_made_only_of_commentary_is_an_error():
    with pytest.raises(TextError, match="no Chinese text"):
        text.parse("[疏]“奏肆夏”。○釋曰：奏肆夏也。\n", source="x")


# ------------------------------------------------------------------ headings

@pytest.mark.parametrize("written", [
    "奏肆夏賓升樂闋。右納賓。主人降洗",
    "奏肆夏賓升樂闋 右納賓 主人降洗",
    "奏肆夏賓升樂闋【樂止也】右納賓\n主人降洗",
    "奏肆夏賓升樂闋\n右納賓\n主人降洗",
])
def test_headings_inline_after_a_sentence_or_on_their_line(written):
    t = text.parse(written, source="x")
    assert [(h.name, h.end) for h in t.headings] == [("納賓", 7)]
    assert t.chars == "奏肆夏賓升樂闋主人降洗"


@pytest.mark.parametrize("written", [
    "左執弓，右挾之。",
    "獲者右執爵，右祭薦俎",
    "司射還。右顧。",
    "右手挾弦。\n",
    "坐奠于左右。\n",
])
def test_right_hand_and_side_are_not_headings(written):
    t = text.parse(written, source="x")
    assert t.headings == ()
    assert "右" in t.chars


# ------------------------------------------------------------------ 荡 and 蕩

def test_dang_reads_pipes_only_where_placed_like_an_instrument():
    assert text.normalise("荡在建鼓之间") == "簜在建鼓之間"
    assert text.normalise("簜在建鼓之閒") == "簜在建鼓之間"
    assert text.normalise("荡") == "蕩"  # simplified 蕩 elsewhere
    t = text.parse("蕩蕩乎民無能名焉蕩在其中\n", source="traditional")
    assert "簜" not in t.chars


def test_a_modern_editions_misprint_of_the_gan_target_is_read_as_the_target():
    """The modern annotated 大射 prints 大史在于侯之东北: the scorer stood by no target the
    sequencer knew, and the second round ran 78 s short. 倚旌于侯中 (鄉射) stays 于."""
    from soundscape.text.derive import derive

    assert text.normalise("大史在于侯之东北") == text.normalise("大史在干侯之東北")
    assert text.normalise("獲者倚旌于侯中") == "獲者倚旌於侯中"
    placed = derive(text.parse("大史在于侯之东北，北面东上。\n", source="m.txt"), rite="dashe")
    assert [s.place for s in placed.steps] == ["gan"]
