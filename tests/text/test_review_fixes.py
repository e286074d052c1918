"""Inputs that two reviews of the edition reading found mis-read, each as it was found."""

from __future__ import annotations

import pytest

import soundscape
from soundscape import text
from soundscape.errors import TextError
from soundscape.resources import data_dir
from soundscape.sequence.settings import load_settings
from soundscape.sequence.shooting import find_shoots
from soundscape.text.chapters import chapters
from soundscape.text.derive import derive
from soundscape.text.derive.recognise import chapter_of, unmatched

KANSEKI = data_dir() / "texts" / "kanseki"


def _chapter(number: int) -> str:
    return (KANSEKI / f"KR1d0026_00{number}.txt").read_text(encoding="utf-8")


def test_a_book_without_a_choice_is_refused_even_with_one_chapter_unrecognised():
    """The chapter that was not any rite was taken (rite None matched it)."""
    book = text.parse("士冠禮第一\n天地玄黃宇宙洪荒日月盈昃辰宿列張寒來暑往秋收冬藏\n"
                      + _chapter(4), source="book.txt")
    with pytest.raises(TextError, match=r"holds 2 chapters: .*derive reads one"):
        chapter_of(book)


def test_a_chapter_asked_by_its_number_is_that_number_not_a_longer_one():
    """--chapter 七 also named 第十七; --chapter 六 took 十六."""
    book = text.parse(_chapter(7) + "\n少牢饋食禮第十七\n少牢饋食之禮日用丁巳筮旬有一日\n",
                      source="book.txt")
    assert [c.number for c in chapters(book)] == ["七", "十七"]
    for asked in ("七", "7", "大射"):
        assert chapter_of(book, asked)[1].number == "七"
    assert chapter_of(book, "十七")[1].number == "十七"
    with pytest.raises(TextError, match="--chapter 六 names none"):
        chapter_of(book, "六")
    with pytest.raises(TextError, match="--chapter ² names none"):
        chapter_of(book, "²")


def test_section_headings_and_a_table_of_contents_begin_no_chapter(tmp_path):
    """第一節 戒百官 headings split one chapter into 45; a table of contents made chapters of
    no words, refused as 'no Chinese text'."""
    lines = [line for line in text.load_bundled().original.splitlines()
             if not line.startswith("#")]
    out, section, n = ["大射儀第七"], [], 0
    for line in lines:
        if line.startswith("右"):
            n += 1
            out += [f"第{'一二三四五六七八九'[n - 1] if n < 10 else '十'}節 {line[1:]}",
                    "".join(section)]
            section = []
        else:
            section.append(line)
    numbered = tmp_path / "numbered.txt"
    numbered.write_text("\n".join(out), encoding="utf-8")
    # one chapter whose headings are set aside, cut where 江永's fall: the bundled sheet's steps
    assert ([s.quote for s in soundscape.derive(numbered).steps]
            == [s.quote for s in derive(text.load_bundled()).steps])
    book = text.parse("目錄\n鄕飮酒禮第四\n鄕射禮第五\n" + _chapter(4) + _chapter(5),
                      source="toc.txt")
    assert [(c.number, c.line) for c in chapters(book)] == [("四", 14), ("五", 337)]
    assert chapter_of(book, "5")[0].chars == text.parse(_chapter(5), source="5").chars


def test_dropping_what_is_not_the_rite_from_a_text_of_another_says_so():
    from soundscape.text.derive.recognise import only_the_rite

    other = text.parse("天地玄黃宇宙洪荒日月盈昃辰宿列張\n寒來暑往秋收冬藏閏餘成歲律呂調陽\n",
                       source="other.txt")
    with pytest.raises(TextError, match="none of its 32 characters is in 大射儀's own text"):
        only_the_rite(other, "dashe")


def test_a_one_character_line_that_differs_is_no_unmatched_run():
    body = text.load_bundled().original
    at = body.index("\n", body.index("大射之儀")) + 1
    changed = text.parse(body[:at] + "甲\n" + body[at:], source="one.txt")
    assert unmatched(changed, "dashe") == []


def test_an_edition_printing_zhong_shoots_its_second_round_whole():
    """眾 (not unified with 衆 by OpenCC) hid 衆皆繼射, round 2's last words: 1 step for 50."""
    body = text.load_bundled().original
    specs = load_settings().rounds
    theirs = find_shoots(derive(text.load_bundled(), rite="dashe"), specs)
    ours = find_shoots(derive(text.parse(body.replace("衆", "眾"), source="z.txt"),
                              rite="dashe"), specs)
    assert [len(s.steps) for s in ours.values()] == [len(s.steps) for s in theirs.values()]
    assert [len(s.parts()) for s in ours.values()] == [1, 1, 2, 1]


def test_a_note_number_in_tortoise_brackets_is_no_emendation():
    """〔一〕 … 〔十二〕 and an inline 〔注〕 were read as the rite (大射之儀一君…)."""
    for printed in ("大射之儀〔一〕。君有命戒射。", "大射之儀〔十二〕。君有命戒射。",
                    "大射之儀〔注〕君有命戒射。"):
        assert text.parse(printed, source="n.txt").chars == "大射之儀君有命戒射"
    assert text.parse("大射之儀（衍）〔儀〕", source="e.txt").chars == "大射之儀儀"


def test_the_dashe_under_another_id_keeps_its_preparation():
    """The steps before the day were found only for the id dashe; under text_id='mine'
    all of them were timed on the day."""
    sheet = soundscape.derive(rite="dashe", text_id="mine")
    ours, theirs = soundscape.perform(sheet), soundscape.perform(soundscape.derive())
    assert ours.duration == pytest.approx(theirs.duration, abs=1.0)


def test_a_quotation_mark_inside_a_note_does_not_open_the_passage():
    """A note's “ made the passage look open, and its quote took the marks after it."""
    loaded = text.parse("擯者（注“賓，某）命賓。”公曰：「命某（注”某）為賓。」", source="q.txt")
    assert loaded.quote(0, 4) == "擯者命賓"
    assert loaded.quote(4, len(loaded.chars)) == "公曰：「命某為賓。」"


def test_derive_names_the_brackets_that_held_notes(tmp_path):
    """It named every bracket anywhere in the file: [ ] inside a set-aside 注 line too."""
    from click.testing import CliRunner

    from soundscape.cli import cli

    source = tmp_path / "b.txt"
    source.write_text("大射之儀（鄭注之文）君有命戒射。\n注：[某]之文也。\n", encoding="utf-8")
    said = CliRunner().invoke(cli, ["derive", str(source), "-o", str(tmp_path / "b.toml")])
    assert "kept 1 bracketed note (（…）) as notes" in said.output, said.output
