"""A chapter of another classic that describes a rite with music, for which soundscape has
no data: 《禮記·投壺》 as the Kanseki Repository prints it (``tests/text/editions``), derived,
sequenced and rendered with no hand edits (issue 28, item 2).

The text orders the music to the strings with 間若一 (命弦者曰請奏貍首間若一，大師曰諾) and
names its drums (鼓：半魯鼓); its print heads every passage with comment lines and numbers its
paragraphs, and marks one page per passage (1a … 13a).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile
from click.testing import CliRunner

from soundscape import cuesheet, text
from soundscape.cli import cli
from soundscape.performance import Performance
from soundscape.sequence.planner import perform_from_file
from soundscape.site.courtyard import GENERIC, load_site, site_of
from soundscape.site.listeners import Listener
from soundscape.sound.render import render_audio
from soundscape.text.derive import derive
from soundscape.text.derive.recognise import recognise

EDITION = Path(__file__).parent / "editions" / "KR1d0052_041.txt"
# What the edition prints that is not the rite: comment lines, paragraph numbers, markers.
_APPARATUS = re.compile(r"#|src:|dating|LIJI|Couvreur|\d|<pb|¶|〓")


@pytest.fixture(scope="module")
def touhu() -> text.Text:
    return text.load(EDITION)


@pytest.fixture(scope="module")
def sheet(touhu) -> cuesheet.CueSheet:
    return derive(touhu, text_id="touhu", title="投壺")


@pytest.fixture(scope="module")
def sheet_path(tmp_path_factory) -> Path:
    """The sheet as `soundscape derive` writes it (it must say it will sequence: exit 0)."""
    out = tmp_path_factory.mktemp("touhu") / "touhu.toml"
    result = CliRunner().invoke(cli, ["derive", str(EDITION), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "not a bundled rite" in result.output and "missing" not in result.output
    return out


@pytest.fixture(scope="module")
def performance(sheet_path) -> Performance:
    return perform_from_file(sheet_path)


def test_no_bundled_rite_and_no_page_missing(touhu):
    assert recognise(touhu).rite is None
    assert touhu.gaps == ()  # one marker per passage (1a … 13a) is not 12 missing b pages


def test_the_apparatus_never_reaches_a_cue(touhu, sheet):
    assert touhu.chars.startswith("投壺之禮主人奉矢")  # the heading is a title line, aside
    quotes = [e.quote for e in (*sheet.steps, *sheet.layout, *sheet.music, *sheet.speech)]
    leaked = [q for q in quotes if _APPARATUS.search(q)]
    assert not leaked, leaked[:3]


def test_the_strings_play_the_shooting_measure_evenly(sheet):
    """命弦者曰請奏貍首間若一: the 射節 (間若一) on the strings and drums, not 金奏 on bells."""
    (music,) = sheet.music
    assert (music.piece, music.kind) == ("lishou", "she")
    assert "間若一" in music.conditions
    assert {"gong", "se"} <= set(music.performers)
    instruments = {i.id: i.instrument for i in sheet.layout}
    assert not {instruments.get(p) for p in music.performers} & {"bianzhong", "bo"}
    answer = sheet.step(music.start)
    assert answer.actor == "大師" and "諾" in answer.quote  # it begins once he has answered


def test_the_layout_is_the_texts_own_instruments_by_family_rules(sheet):
    by_instrument = {i.instrument: i for i in sheet.layout}
    assert set(by_instrument) == {"jiangu", "pi"}  # 鼓 named; 鼙 the 射節's (鄭注 圜者擊鼙)
    assert by_instrument["jiangu"].quote == "鼓" and "named by the text" in (
        by_instrument["jiangu"].note)
    assert "[kind.she]" in by_instrument["pi"].note
    assert all(i.note.startswith("generic layout") for i in sheet.layout)


def test_the_exchange_is_said_in_turn(sheet, performance):
    """主人 and 賓's five phrases of one step never start at one instant, and each waits for
    the last to end."""
    steps = {c.id: c.step for c in sheet.speech}
    said = sorted((e for e in performance.events if e.cue in steps), key=lambda e: e.time)
    by_step: dict[str, list] = {}
    for event in said:
        by_step.setdefault(steps[event.cue], []).append(event)
    exchange = max(by_step.values(), key=len)
    assert len(exchange) >= 5
    assert len({round(e.time, 3) for e in exchange}) == len(exchange)
    assert all(b.time >= a.time + a.duration for a, b in itertools.pairwise(exchange))


def _said_in_order(sheet, performance):
    by_id = {c.id: c for c in sheet.speech}
    return [(by_id[e.cue].speaker, e.lyric, e) for e in performance.events if e.cue in by_id]


def test_the_words_are_what_the_quotation_marks_enclose(sheet, performance):
    """The print gives its words in 「」: 主人般還，曰：「辟。」 is 辟 alone (it ran into the
    narration: 「辟主人阼階上拜送賓盤」), 「…請以樂賓」 keeps its 賓 (a name said, not a
    step), and no cue crosses a quotation mark or says a 請 that only brings words (請賓曰)."""
    said = [(c.speaker, c.quote) for c in sheet.speech]
    assert said[:2] == [("主人", "某有枉矢、哨壺，請以樂賓"),
                        ("賓", "子有旨酒、嘉肴，某既賜矣，又重以樂，敢辭")]
    assert ("主人", "辟") in said and ("賓", "辟") in said
    assert not [q for _, q in said if re.search(r"[「」]|曰", q)]
    assert ("司射", "請奏《貍首》，間若一") in said  # the 司射 orders the strings (孔疏)
    assert not [q for _, q in said if "亦如之" in q or q.startswith("請賓")]


def test_an_answer_follows_its_question(sheet, performance):
    """命酌曰「請行觴」，酌者曰「諾」: the 酌者 answers the 司射, after him; the 大師's 諾
    after the order to the strings; the 賓 and 主人's exchange in the text's order."""
    said = _said_in_order(sheet, performance)
    order = [(who, words) for who, words, _ in said]
    ask, answer = order.index(("司射", "請行觴")), order.index(("酌者", "諾"))
    assert answer == ask + 1
    first, second = said[ask][2], said[answer][2]
    assert second.time >= first.time + first.duration
    assert order.index(("大師", "諾")) == order.index(("司射", "請奏《貍首》，間若一")) + 1
    assert ("當飲者", "賜灌") in order and ("勝者", "敬養") in order


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_count_is_the_games(sheet_path, seed):
    """「某賢於某若干純」，奇則曰「奇」，均則曰「左右鈞」: the 司射 says the count simulated
    for the step (右賢於左 N純 M奇, or the text's own 左右鈞), once; 若干 is never said, nor
    the alternatives apart."""
    from soundscape.sequence.archery import announcement
    from soundscape.sequence.speech import simulated_count

    performance = perform_from_file(sheet_path, seed=seed)
    sheet = cuesheet.load(sheet_path)
    said = _said_in_order(sheet, performance)
    count = next(c for c in sheet.speech if "若干" in c.quote)
    expected = announcement(*simulated_count(count.step, seed))
    lyrics = [words for _, words, _ in said]
    assert not any("若干" in w for w in lyrics)
    assert lyrics.count(expected) == 1 and ("司射", expected) in [(s, w) for s, w, _ in said]
    assert lyrics.count("奇") == 0 and lyrics.count("左右鈞") == (expected == "左右鈞")
    markers = [m.text for m in performance.markers if m.kind == "speech"]
    assert f"司射：{expected}" in markers


def test_the_count_is_drawn_from_the_seed():
    """Four arrows a side, one 算 an entry: counts within 0..4, the same for a seed, and
    not one count for every seed."""
    from soundscape.sequence.speech import simulated_count

    counts = {simulated_count("s01.14", seed) for seed in range(40)}
    assert all(0 <= r <= 4 and 0 <= left <= 4 for r, left in counts)
    assert simulated_count("s01.14", 7) == simulated_count("s01.14", 7)
    assert len(counts) > 5


def test_it_is_held_in_a_hall_and_court_of_its_own(sheet_path):
    """Not the 射宮 with its targets: the generic site (a hall and its court)."""
    sheet = cuesheet.load(sheet_path)
    assert site_of(sheet.text.id, sheet.layout) == GENERIC
    site = load_site(rite=GENERIC)
    assert site.name == "堂與庭" and not site.targets
    assert {"zuojie", "xijie", "tang", "men"} <= set(site.places)
    assert "dahou" not in site.places


def test_it_sounds(sheet_path, performance, tmp_path):
    """The strings and drums of 貍首 heard from the court: derive → sequence → render."""
    (music,) = performance.music
    part = performance.between(music.start, music.start + 6.0)
    sources = {s.id: s.instrument for s in part.sources.values()}
    played = {sources[e.source] for e in part.events if e.piece == "lishou"}
    assert "se" in played and not played & {"bianzhong", "bo"}
    result = render_audio(part, tmp_path / "touhu.wav",
                          listener=Listener((0.0, -10.0, 1.5), "north"), sample_rate=44100)
    audio, rate = soundfile.read(result.files[0])
    assert rate == 44100 and np.sqrt(np.mean(audio ** 2)) > 1e-3


def test_a_sheet_without_a_layout_places_what_its_music_names(sheet_path, tmp_path):
    """performer 'bianzhong' (or 笙) the sheet does not hang: placed by its family's rule,
    not a stop of the sequencer."""
    raw = sheet_path.read_text(encoding="utf-8")
    bare = re.sub(r"\[\[layout\]\].*?(?=\[\[music)", "", raw, flags=re.S)
    bare = re.sub(r"performers = \[[^\]]*\]",
                  'performers = ["gong", "se", "bianzhong", "sheng", "jiangu"]', bare)
    path = tmp_path / "bare.toml"
    path.write_text(bare, encoding="utf-8")
    performance = perform_from_file(path)
    placed = {s.instrument: s.position for s in performance.sources.values()
              if s.group in ("east", "drums", "pipes")}
    assert {"bianzhong", "sheng", "jiangu"} <= set(placed)
    assert placed["bianzhong"][0] > placed["jiangu"][0]  # bells east of the 阼階, drum west


ZHUSHU = Path(__file__).parent / "editions" / "KR1d0053_058_touhu.txt"


def test_the_printed_drum_pattern_goes_with_the_shooting_measure(tmp_path):
    """The 注疏 print gives the 魯鼓 in ○ (鼙) and □ (鼓): the 射節 cue carries the first
    printed pattern, and the drums play it in each 節."""
    out = tmp_path / "zhushu.toml"
    result = CliRunner().invoke(cli, ["derive", str(ZHUSHU), "-o", str(out)])
    assert result.exit_code == 0, result.output
    sheet = cuesheet.load(out)
    (music,) = sheet.music
    assert music.kind == "she" and "間若一" in music.conditions
    assert "鼓節:魯鼓:○□○○□□○□○○□半○□○□○○○□□○□○" in music.conditions
    assert {i.instrument for i in sheet.layout} == {"jiangu", "pi"}
    # another printed pattern (the 薛鼓) in its place: the drums follow the print
    xue = "○□○○○□□○□○○□□○□○○□□○半○□○○○□□○"
    raw = out.read_text(encoding="utf-8")
    out.write_text(re.sub(r"鼓節:魯鼓:[○□半]+", f"鼓節:薛鼓:{xue}", raw), encoding="utf-8")
    performance = perform_from_file(out)
    instrument = {s.id: s.instrument for s in performance.sources.values()}
    strokes = "".join("○" if instrument[e.source] == "pi" else "□"
                      for e in sorted(performance.events, key=lambda e: e.time)
                      if e.piece == "lishou" and instrument[e.source] in ("pi", "jiangu"))
    each = xue.replace("半", "") + "□"  # the pattern, then the stroke that closes the 節
    assert strokes.startswith(each * 3)


def test_the_zhushu_print_keeps_its_notes_aside():
    """The 注疏 print runs 鄭注 on in the 經's lines, labelled 注, up to the label of the
    bracketed 音義 or 疏 after it: set aside, its passage is the 經 of the punctuated print
    (glyph variants apart) but for its title line and the two 注 the 經 follows directly,
    whose end the print does not mark (1,137 characters of notes and labels were read as
    the 經 before)."""
    import difflib

    zhushu, tls = text.load(ZHUSHU).chars, text.load(EDITION).chars
    assert "注矢所以投者也" not in zhushu and "音義" not in zhushu
    assert zhushu.startswith("投壺投壺之禮主人奉矢司射奉中使人執壺主人請曰")
    changes = [(op, tls[a:b], zhushu[c:d]) for op, a, b, c, d in difflib.SequenceMatcher(
        None, tls, zhushu, autojunk=False).get_opcodes() if op != "equal"]
    assert not [c for c in changes if c[0] == "delete"]  # no 經 set aside with a note
    assert all(len(old) == len(new) == 1 for op, old, new in changes if op == "replace")
    inserted = [new for op, _, new in changes if op == "insert"]
    assert inserted == ["投壺", "注固之言如故也言如故辭者重辭也",
                        "注投壺之鼓半射節者投壺射之細也射謂燕射"]
