"""Speech cues derived from the text: who says what to whom, in the text's own words."""

import pytest

from soundscape import cuesheet
from soundscape.text import source
from soundscape.text.derive.speech import speech_cues


@pytest.fixture(scope="module")
def said():
    sheet = cuesheet.load(cuesheet.bundled_path())
    return speech_cues(source.load_bundled(), sheet.steps)


def find(said, words):
    return next(c for c in said if c.quote == words)


def test_requests_replies_commands_and_announcements_are_found(said):
    assert find(said, "為政請射").speaker == "司射"
    report = find(said, "左右卒射")
    assert (report.speaker, report.to, report.kind) == ("釋獲者", "公", "announce")
    order = find(said, "命用樂")
    assert (order.speaker, order.to, order.kind) == ("司射", "樂正", "command")
    assert find(said, "奏貍首間若一").to == "大師"
    assert {c.speaker for c in said if c.quote == "諾"} >= {"樂正", "大師"}
    assert [find(said, w).speaker for w in ("留", "揚", "方")] == ["大射正"] * 3


def test_words_the_archery_speaks_itself_are_left_to_it(said):
    quotes = {c.quote for c in said}
    assert not quotes & {"毋射獲毋獵獲", "不貫不釋", "不鼓不釋"}
    assert not any("賢於" in q for q in quotes)


def test_every_cue_quotes_its_words_at_its_span(said):
    text = source.load_bundled()
    for cue in said:
        assert text.quote(*cue.span) == cue.quote


def test_the_bundled_sheet_carries_them_and_they_round_trip(said, tmp_path):
    sheet = cuesheet.load(cuesheet.bundled_path())
    assert sheet.speech == tuple(said)
    again = cuesheet.load(cuesheet.save(sheet, tmp_path / "x.toml"))
    assert again.speech == sheet.speech
