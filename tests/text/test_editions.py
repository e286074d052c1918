"""Edition independence: the 大射 read from the 《四部叢刊》 print gives the bundled text's cues.

The two editions differ in everything but the rite: 江永's text has punctuation, 45 右
headings and its notes moved out; the Kanseki Repository's transcription of the 《四部叢刊》
print has page markers, ¶ line ends, 鄭注 inline in parentheses, old glyphs (賔 荅 飮 …),
encoded characters (&KR0764;) and three missing pages. Cues are compared by piece, kind,
repeats, the words of their formula and of their start step, the conditions, and the stop
step by its opening words (the step's end depends on where sections are cut, by headings
or by the rule).
"""

from __future__ import annotations

import itertools
import re

import pytest

from soundscape import cuesheet, text
from soundscape.resources import data_dir
from soundscape.text.derive import derive
from soundscape.text.hanzi import is_han

KANSEKI_DASHE = data_dir() / "texts" / "kanseki" / "KR1d0026_007.txt"


def _signature(sheet: cuesheet.CueSheet, chars: str) -> list[tuple]:
    def words(span: tuple[int, int]) -> str:
        return chars[span[0]:span[1]]

    rows = []
    for cue in sheet.music:
        stop = (cue.stop if cue.stop == cuesheet.STOP_LENGTH
                else words(sheet.step(cue.stop).span)[:3])
        rows.append((cue.piece, cue.kind, cue.repeats, words(cue.span),
                     words(sheet.step(cue.start).span), stop, cue.conditions))
    return rows


@pytest.fixture(scope="module")
def editions():
    bundled = text.load_bundled()
    kanseki = text.load(KANSEKI_DASHE)
    return ((bundled, cuesheet.load(cuesheet.bundled_path())), (kanseki, derive(kanseki)))


def test_same_music_cues_from_both_editions_but_the_missing_page(editions):
    (bundled, bundled_sheet), (kanseki, kanseki_sheet) = editions
    expected = _signature(bundled_sheet, bundled.chars)
    found = _signature(kanseki_sheet, kanseki.chars)
    lost = [row for row in expected if row not in found]
    assert [row[0] for row in lost] == ["xingong"]  # 乃管新宮三終 stood on page 14a
    assert found == [row for row in expected if row not in lost]


def test_the_lost_cue_lies_in_a_reported_gap(editions):
    _, (kanseki, sheet) = editions
    assert [g.pages for g in kanseki.gaps] == [("12b",), ("14a", "14b"), ("31a", "31b")]
    before = sheet.music_cue("luming").span[1]
    after = sheet.music_cue("lishou").span[0]
    assert any(before <= g.at <= after for g in kanseki.gaps)


def test_layout_and_voices_agree(editions):
    (_, bundled_sheet), (_, kanseki_sheet) = editions
    fields = [(i.id, i.instrument, i.relation, i.of, i.facing, i.struck_face)
              for i in bundled_sheet.layout]
    assert [(i.id, i.instrument, i.relation, i.of, i.facing, i.struck_face)
            for i in kanseki_sheet.layout] == fields
    first = [(v.actor, v.what, v.degree) for v in bundled_sheet.voices][:4]
    assert [(v.actor, v.what, v.degree) for v in kanseki_sheet.voices][:4] == first


def test_print_marks_stay_out_of_quotes_and_notes(editions):
    _, (kanseki, sheet) = editions
    for entry in (*sheet.steps, *sheet.music):
        assert "¶" not in entry.quote and "<pb:" not in entry.quote
        assert "(" not in entry.quote
    assert all("/" not in n.text for n in kanseki.notes)
    assert not any("儀禮卷第七" in s.quote or "鄭氏注" in s.quote for s in sheet.steps)


@pytest.mark.parametrize(("opener", "closer"), [("〔", "〕"), ("［", "］"), ("[", "]")])
def test_notes_in_other_brackets_are_notes(opener, closer):
    """鄭注 printed in 〔〕, ［］ or [] was read as 經文: the 《四部叢刊》 大射 so bracketed made
    865 steps and 13 music cues and was not recognised as the 大射. A 〔〕 of one or two
    characters is an editor's emendation, (衍)〔正〕: read as text."""
    raw = KANSEKI_DASHE.read_text(encoding="utf-8")
    ours = text.parse(raw.replace("(", opener).replace(")", closer), source="other.txt")
    theirs = text.load(KANSEKI_DASHE)
    if opener == "〔":  # the notes of two characters or fewer are read as text
        short = [inside for inside in (m.replace("/", "") for m in re.findall(r"\(([^()]*)\)", raw))
                 if 0 < len(inside) <= 2 and all(is_han(c) for c in inside)]
        assert short and len(ours.chars) == len(theirs.chars) + sum(map(len, short))
    else:
        assert ours.chars == theirs.chars
        assert [n.text for n in ours.notes] == [n.text for n in theirs.notes]
    assert _signature(derive(ours), ours.chars) == _signature(derive(theirs), theirs.chars)


def test_an_emendation_is_read_and_the_word_it_replaces_is_not():
    loaded = text.parse("司射適（西）〔東〕階〔鄭注：此階，東階也〕", source="e.txt")
    assert loaded.chars == "司射適東階"
    assert [n.text for n in loaded.notes] == ["西", "鄭注：此階，東階也"]


def test_the_siku_title_lines_are_not_the_rite():
    """江永's 《禮書綱目》 as the 四庫全書 prints it opens each 卷 with the collection's,
    the book's and the chapter's title lines and the label 經, and closes it with the
    book's: they were the rite's first step (「欽定四庫全書禮書綱目卷十…」) and a section."""
    body = text.load_bundled().original
    head = ("欽定四庫全書\n禮書綱目卷十 婺源江永撰\n大射儀 嘉禮十五\n"
            "經【鄭目録云諸侯將有祭祀之事】\n")
    loaded = text.parse(head + body + "\n禮書綱目卷十\n", source="siku.txt")
    assert loaded.chars == text.load_bundled().chars
    assert [a.kind for a in loaded.asides if a.kind == "卷題"] == ["卷題"] * 5


@pytest.mark.parametrize("label", ["注：", "鄭注:", "　　疏：", "【注】", "[注]", "按："])
def test_commentary_on_lines_of_its_own_is_set_aside(label):
    """An edition that prints each 鄭注 on a line of its own after the 經文, labelled
    (注：…, 【注】…), or an editor's remark (按：…), was read notes and all (878 steps from
    the 江永 text so printed, not recognised). Such a line is commentary to its end."""
    raw = KANSEKI_DASHE.read_text(encoding="utf-8")
    lined = re.sub(r"\(([^()]*)\)", lambda m: f"\n{label}{m.group(1)}\n", raw)
    ours, theirs = text.parse(lined, source="lined.txt"), text.load(KANSEKI_DASHE)
    assert ours.chars == theirs.chars
    assert sum(a.kind == "注" for a in ours.asides) > 300


def test_sections_without_headings_are_cut_where_the_rites_headings_fall():
    """The 《四部叢刊》 大射 has no 右 headings: its sections were cut by the rule (58 of them,
    ids unlike the docs' s18 = 樂賓) and named after the headings they aligned with
    (主人酬賓（二）…). They are cut where 江永's headings fall in it, the texts aligned: every
    section keeps its heading's id, name and opening words (賓諸公卿皆人門: the print's 人 for
    入 is no matter), but the one on the lost pages
    (s16, 14a–b), which is left out; 燕 (s38), which the rule missed, is found."""
    source = text.load(KANSEKI_DASHE)
    sheet = derive(source, rite="dashe")
    bundled = cuesheet.load(cuesheet.bundled_path())
    ours = [(s.id, s.name) for s in sheet.sections]
    assert [s for s in ((s.id, s.name) for s in bundled.sections) if s not in ours] == [
        ("s16", "公為賓若孤卿舉旅")]
    assert len(ours) == 44 and ("s18", "樂賓") in ours and ("s38", "燕") in ours
    theirs = text.load_bundled()
    for section in sheet.sections:
        first = bundled.section(section.id).span[0]
        assert source.chars[section.span[0]:][:4] == theirs.chars[first:first + 4], section
    spans = [s.span for s in sheet.sections]
    assert spans[0][0] == 0 and spans[-1][1] == len(source.chars)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))  # nothing left between
    assert [s.name for s in derive(source).sections][21].endswith("…")  # no rite: the rule


def test_title_lines_of_a_chapter_are_set_aside_and_do_not_make_two_chapters():
    """A modern edition opens with its chapter's title (礼仪大射仪第七, 大射仪第七): it was the
    rite's first words. A 注疏 edition's 卷 is not its chapter (儀禮注疏卷第十六, 大射第七):
    one chapter over two 卷, not two."""
    body = text.load_bundled().original
    modern = text.parse("礼仪大射仪第七\n\n大射仪第七\n" + body, source="m.txt")
    assert modern.chars == text.load_bundled().chars
    assert [a.kind for a in modern.asides][:2] == ["卷題", "卷題"]
    for name in ("大射儀：", "《大射仪》", "大射"):  # as a website prints it above the text
        assert text.parse(f"{name}\n{body}", source="w.txt").chars == modern.chars
    assert text.parse("大射之儀\n" + body, source="x.txt").chars.startswith("大射之儀大射之儀")
    from soundscape.text.chapters import chapters

    shu = text.parse("儀禮注疏卷第十六\n大射第七\n" + body + "\n儀禮注疏卷第十七\n" + body,
                     source="z.txt")
    assert [(c.number, c.title) for c in chapters(shu)] == [("七", "大射第七")]


def test_a_quote_closes_the_quotation_it_opens():
    """A step ends at the last word spoken, so its quote left the quotation open
    (「公曰：“命某为宾」: 13 of the modern edition's quotes). The marks after it that close
    it come with it, over a note number between (不贯不释（65）。”)."""
    loaded = text.parse("公曰：“命某为宾。”摈者命宾。命曰：“不贯不释（65）。”上射揖。",
                        source="q.txt")
    at = loaded.chars.index(text.normalise("摈"))
    assert loaded.quote(0, at) == "公曰：“命某为宾。”"
    assert loaded.quote(at, at + 3) == "摈者命"  # no quotation open: cut where it ends
    start = loaded.chars.index(text.normalise("命曰"))
    assert loaded.quote(start, loaded.chars.index(text.normalise("上"))) == "命曰：“不贯不释。”"


_NUMERALS = ["一", "二", "三", "四", "五", "六", "七", "八", "九", "十"]


def _chinese(n: int) -> str:
    tens, units = divmod(n, 10)
    return ((_NUMERALS[tens - 1] if tens > 1 else "") + ("十" if tens else "")
            + (_NUMERALS[units - 1] if units else ""))


@pytest.mark.parametrize("style", ["{n}、{name}", "（{n}）{name}", "第{n}節 {name}", "{name}",
                                   "{m}. {name}", "（{m}）{name}", "{m}、{name}"])
def test_an_editions_numbered_section_headings_are_not_the_rite(style):
    """An edition that heads each section on a line of its own (一、戒百官, 1. 戒百官, or the
    name alone) was read with its headings as the rite's words: 590 steps and 45 speech
    cues for 564 and 41, 3 minutes longer. The headings are set aside; the sections come
    from the rule, named after 江永's."""
    lines = [line for line in text.load_bundled().original.splitlines()
             if not line.startswith("#")]
    out, section = [], []
    for line in lines:  # each 右 heading moved before its section, numbered
        if line.startswith("右"):
            number = len(out) // 2 + 1
            out += [style.format(n=_chinese(number), m=number, name=line[1:]), "".join(section)]
            section = []
        else:
            section.append(line)
    loaded = text.parse("\n".join(out) + "\n", source="numbered.txt")
    assert loaded.chars == text.load_bundled().chars
    assert sum(a.kind == "卷題" for a in loaded.asides) == 45
    names = [s.name for s in derive(loaded, rite="dashe").sections]
    assert names[:6] == ["戒百官", "張侯", "設樂", "陳設器席", "即位請立賓及執事者", "納賓"]


def test_a_punctuated_editions_unnumbered_headings_are_not_the_rite():
    """Where an edition punctuates the 經文, a short line without a mark is its own heading,
    whatever it names (射前戒備 is none of 江永's). A text that does not punctuate keeps
    such a line, and one of 江永's names too where it is the only one (the headed edition
    is tested above), and so does a punctuated text where a note follows it (a fragment
    of the 經文 between notes on lines of their own)."""
    body = ("大射之儀，君有命戒射。宰戒百官有事於射者。射人戒諸公卿大夫射，司士戒士射與贊者。\n"
            "前射三日，宰夫戒宰及司馬、射人宿視滌。司馬命量人量侯道與所設乏以貍步。\n")
    loaded = text.parse("射前戒備\n" + body, source="p.txt")
    assert [(a.kind, a.line) for a in loaded.asides] == [("卷題", 1)]
    assert loaded.chars == text.parse(body, source="b.txt").chars
    bare = re.sub("[，。、]", "", body)
    assert not text.parse("射前戒備\n" + bare, source="u.txt").asides
    assert not text.parse("戒百官\n" + bare, source="n.txt").asides
    noted = text.parse("射前戒備\n注：戒射之前。\n" + body, source="f.txt")
    assert [a.kind for a in noted.asides] == ["注"]
    note = "注：宰戒百官，射人戒諸公卿大夫，司士戒士。\n"
    later = text.parse(note + body + note + "量侯道\n" + body, source="l.txt")
    assert [(a.kind, a.line) for a in later.asides] == [("注", 1), ("注", 4), ("卷題", 5)]


@pytest.mark.parametrize("call", ["①", "⑴", "¹", "❶"])
def test_note_calls_printed_without_brackets_are_note_calls(call):
    """Modern editions print a note's call as ① (or ⑴, ¹): it stood in the quotes, and a
    題解 of two paragraphs ended after its first (it runs to the first paragraph with a
    call, and only （1） was one), so its second was read as the rite's words."""
    printed = ("【题解】\n\n《大射仪》记述诸侯与群臣习射的礼节。\n\n"
               "篇中首先对射前的准备做了详细描述。\n\n"
               f"大射之仪，君有命戒射{call}。宰戒百官有事于射者。\n\n【注释】\n\n{call}戒射：告诫。\n")
    loaded = text.parse(printed, source="called.txt")
    assert loaded.chars == text.normalise("大射之仪君有命戒射宰戒百官有事于射者")
    assert loaded.quote(0, len(loaded.chars)) == "大射之仪，君有命戒射。宰戒百官有事于射者"


@pytest.mark.parametrize("label", ["經：", "经文：", "原文：", "【經】", "〔經〕", "[經文]",
                                   "【原文】\n"])
def test_the_label_of_the_jingwen_is_not_the_rite(label):
    """An edition that labels each 經文 paragraph (經：…, 【經】…) beside its 注 read the
    label as the rite's first word (經大射之儀: an extra step per paragraph), 〔經〕 as an
    emendation and 【經】 (or 【原文】 on a line of its own) as a note."""
    body = "大射之儀，君有命戒射。宰戒百官有事於射者。\n前射三日，宰夫戒宰及司馬。\n"
    labelled = "".join(f"{label}{line}\n注：鄭注之文。\n" for line in body.splitlines())
    loaded = text.parse(labelled, source="labelled.txt")
    assert loaded.chars == text.parse(body, source="plain.txt").chars
    assert not loaded.notes
    assert loaded.quote(0, 4) == "大射之儀"


@pytest.mark.parametrize("chapter", ["004", "005", "006", "007"])
def test_title_lines_in_simplified_characters_are_title_lines(chapter):
    """The 《四部叢刊》 chapters converted to simplified characters (opencc t2s) began
    their rite with the title line 乡饮酒礼第四　仪礼　郑氏注: the title patterns are written in
    traditional characters, and are now matched against the line normalised."""
    import opencc

    path = data_dir() / "texts" / "kanseki" / f"KR1d0026_{chapter}.txt"
    raw = path.read_text(encoding="utf-8")
    traditional = text.parse(raw, source=path.name)
    simplified = text.parse(opencc.OpenCC("t2s").convert(raw), source="simplified.txt")
    assert len(simplified.chars) == len(traditional.chars)
    assert ([a.line for a in simplified.asides if a.kind == "卷題"]
            == [a.line for a in traditional.asides if a.kind == "卷題"])


@pytest.mark.parametrize("label", ["译文：", "譯文:", "【译文】", "[今譯]", "【译文】："])
def test_a_translation_paragraph_labelled_on_its_line_is_set_aside(label):
    """A bilingual edition alternates 原文 and 译文 paragraphs, each labelled on its own line:
    the translation was read as the rite (the modern 大射 so printed: 976 steps for 555)."""
    body = "大射之儀，君有命戒射。宰戒百官有事於射者。\n前射三日，宰夫戒宰及司馬。\n"
    printed = "".join(f"原文：{line}\n{label}国君发布命令：准备射箭。\n"
                      for line in body.splitlines())
    loaded = text.parse(printed, source="bilingual.txt")
    assert loaded.chars == text.parse(body, source="plain.txt").chars
    assert [a.kind for a in loaded.asides] == ["版記", "譯文"] * 2


def test_derive_says_where_a_text_holds_words_its_rite_does_not(tmp_path):
    """A paragraph of commentary no mark sets aside is read as the rite's words; derive
    says where (line, first words, how many characters), and says nothing of an edition
    whose differences are variant glyphs (the 《四部叢刊》 大射 against 江永's). What a
    text lacks of its rite it names too: the 《四部叢刊》's lost pages, where they fall."""
    from click.testing import CliRunner

    from soundscape.cli import cli

    intro = "大射儀記述諸侯與群臣習射的禮節儀式篇中首先對射前的準備做了詳細描述"
    body = text.load_bundled().original
    first = next(i for i, line in enumerate(body.splitlines()) if "大射之儀" in line)
    lines = body.splitlines()
    source = tmp_path / "introduced.txt"
    source.write_text("\n".join([*lines[:first], intro, *lines[first:]]), encoding="utf-8")
    said = CliRunner().invoke(cli, ["derive", str(source), "-o", str(tmp_path / "a.toml")])
    assert said.exit_code == 0, said.output
    assert (f"note: {source}: {len(intro)} characters in 1 run are not in the bundled 大射儀's "
            f"經文 (line {first + 1} 「大射儀記述諸侯與…」)") in said.output
    assert "lacks" not in said.output  # it holds the whole rite
    clean = CliRunner().invoke(cli, ["derive", str(KANSEKI_DASHE), "-o", str(tmp_path / "b.toml")])
    assert clean.exit_code == 0 and "are not in the bundled" not in clean.output
    # what it lacks is what its lost pages held, where they were lost
    lost = [int(n) for n in re.findall(r"missing before line (\d+)", clean.output)]
    lacks = re.search(r"lacks 210 characters of the bundled 大射儀's 經文 in 3 runs \((.*?)\)",
                      clean.output)
    assert lacks, clean.output
    at = [int(n) for n in re.findall(r"at line (\d+)", lacks.group(1))]
    assert len(at) == len(lost) == 3
    assert all(0 <= a - b <= 2 for a, b in zip(at, lost, strict=True))


def test_drop_unmatched_reads_only_the_rites_words(tmp_path):
    """A bilingual edition that prints each paragraph's translation after it, with no label,
    was read translation and all; --drop-unmatched sets aside every line the rite's own
    text does not hold (a translation's line whole, though it quotes the rite's words), and
    the sheet is the one the 經文 alone gives."""
    from click.testing import CliRunner

    from soundscape.cli import cli

    lines = [line for line in text.load_bundled().original.splitlines()
             if line and not line.startswith("#")]
    translated = "\n".join(  # a long line of translation and a short one (7 characters)
        f"{line}\n這一段說的是{line[:6]}等事，今譯其大意於此，以便讀者。\n然後登堂就席。"
        for line in lines)
    source = tmp_path / "bilingual.txt"
    source.write_text(translated, encoding="utf-8")
    runner = CliRunner()
    said = runner.invoke(cli, ["derive", str(source), "-o", str(tmp_path / "a.toml")])
    assert said.exit_code == 0 and "or pass --drop-unmatched" in said.output, said.output
    dropped = runner.invoke(cli, ["derive", str(source), "-o", str(tmp_path / "b.toml"),
                                  "--drop-unmatched"])
    assert dropped.exit_code == 0 and "(--drop-unmatched)" in dropped.output, dropped.output
    ours = cuesheet.load(tmp_path / "b.toml")
    theirs = cuesheet.load(cuesheet.bundled_path())
    assert [(s.actor, s.span) for s in ours.steps] != []
    assert len(ours.steps) == len(theirs.steps)
    assert [m.piece for m in ours.music] == [m.piece for m in theirs.music]
    refused = runner.invoke(cli, ["derive", "--drop-unmatched", "-o", str(tmp_path / "c.toml")])
    assert refused.exit_code == 2 and "give the TEXT" in refused.output


def test_a_wikis_headings_are_not_the_rite():
    """Wikisource's source text heads its chapter and sections == 大射儀 ==: the names were
    read as the rite's words."""
    wiki = text.parse("== 大射儀 ==\n大射之儀，君有命戒射。\n=== 誘射 ===\n司射入於次。\n",
                      source="wiki.txt")
    assert wiki.chars == text.normalise("大射之儀君有命戒射司射入於次")
    assert [(a.kind, a.line) for a in wiki.asides] == [("卷題", 1), ("卷題", 3)]


def test_a_chapter_of_a_book_keeps_the_books_encoding_and_lines(tmp_path):
    from soundscape.text.chapters import chapters, one

    kanseki = data_dir() / "texts" / "kanseki"
    raw = "".join((kanseki / f"KR1d0026_00{n}.txt").read_text(encoding="utf-8") for n in (4, 6))
    book = tmp_path / "book.txt"
    book.write_bytes(raw.encode("gb18030"))
    loaded = text.load(book)
    first, second = chapters(loaded)
    chapter = one(loaded, second)
    assert (chapter.encoding, second.title) == ("gb18030", "燕禮第六　儀禮　鄭氏注")
    assert chapter.line_of(0) == loaded.line_of(loaded.chars.index(chapter.chars[:12]))
    assert chapter.chars == text.load(kanseki / "KR1d0026_006.txt").chars
    assert first.end == second.start and first.number == "四"


def test_an_excerpt_of_the_dashe_keeps_its_sections_and_no_coincidences(tmp_path):
    """An excerpt (s18–s21) under a title line of its own: the title's characters matched a
    character here and there of 戒百官 and made sections of one to four characters named
    after headings the excerpt does not hold (s01 戒百官, s05, s13)."""
    bundled, sheet = text.load_bundled(), cuesheet.load(cuesheet.bundled_path())
    first, last = sheet.section("s18").span[0], sheet.section("s21").span[1]
    (tmp_path / "ex.txt").write_text("大射儀記曰禮也\n" + bundled.chars[first:last] + "\n",
                                     encoding="utf-8")
    source = text.load(tmp_path / "ex.txt")
    cut = derive(source, rite="dashe").sections
    assert [(s.id, s.name) for s in cut] == [("s18", "樂賓"), ("s19", "立司正"),
                                             ("s20", "請射"), ("s21", "誘射")]
    assert cut[0].span[0] == 0 and cut[-1].span[1] == len(source.chars)
    for section in cut[1:]:  # each opens with its own words
        start = sheet.section(section.id).span[0]
        assert source.chars[section.span[0]:][:6] == bundled.chars[start:start + 6]
