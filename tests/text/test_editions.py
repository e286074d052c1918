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

import pytest

from soundscape import cuesheet, text
from soundscape.resources import data_dir
from soundscape.text.derive import derive

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
