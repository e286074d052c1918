"""Speech from every 曰 and 請 of the four bundled rites, scored against the hand-checked
list tests/text/speech_gold.toml (issue 28, item 3). On the code before it the exactness
was 大射 0.57, 鄉飲酒 0.67, 鄉射 0.41, 燕禮 0.29 (bench/bench_derive.py --speech)."""

from __future__ import annotations

import pytest

from soundscape import cuesheet
from soundscape.resources import bundled_dir
from soundscape.text.derive import derive, rites
from soundscape.text.hanzi import normalise
from tests.text.speech_gold import gold, score

# Least share of the listed phrases said exactly, by the right speaker.
EXACT = {"dashe": 0.8, "xiangyinjiu": 0.9, "xiangshe": 0.9, "yan": 0.8}


@pytest.fixture(scope="module")
def derived():
    out = {}
    for rite in rites.rite_ids():
        text = rites.load_rite_text(rite)
        out[rite] = (text, derive(text, text_id=rite, title=rites.rite(rite).title, rite=rite))
    return out


@pytest.mark.parametrize("rite", list(EXACT))
def test_speech_recall_and_exactness(rite, derived):
    result = score(rite, *derived[rite])
    assert result.recall == 1.0, result.wrong
    assert result.exactness >= EXACT[rite], "\n".join(result.wrong)


def test_the_held_out_touhu_in_its_quotation_marks():
    """《禮記·投壺》 (the Kanseki print, words in 「」), derived as a user's own text: every
    listed phrase exactly, by the speaker 鄭注 and 孔疏 name. On the code before quotation
    marks were read: exactness 0.19 (辟 ran into the narration, the 酌者's 諾 was the 司射's,
    「請以樂賓」 lost its 賓)."""
    from pathlib import Path

    from soundscape import text

    source = text.load(Path(__file__).parent / "editions" / "KR1d0052_041.txt")
    result = score("touhu", source, derive(source, text_id="touhu"))
    assert result.recall == 1.0 and result.exactness >= 0.95, "\n".join(result.wrong)


def test_the_list_covers_every_said_of_the_rites():
    """Every 曰 of the four rites is in a listed passage, but those the list leaves out
    with its reason (若命曰; the 燕禮 公與客燕 exchange; the tally's alternatives)."""
    for rite in rites.rite_ids():
        chars = rites.load_rite_text(rite).chars
        covered = set()
        for entry in gold(rite):
            at = chars.find(normalise(entry["passage"]))
            assert at >= 0, entry
            covered |= set(range(at, at + len(entry["passage"])))
        missing = [i for i, c in enumerate(chars) if c == "曰" and i not in covered]
        allowed = {"dashe": 1, "xiangyinjiu": 0, "xiangshe": 0, "yan": 1}
        assert len(missing) <= allowed[rite], [chars[i - 8:i + 8] for i in missing]


def _said(rite, derived):
    _, sheet = derived[rite]
    return [(normalise(c.quote), c.speaker, c.step, c.to) for c in sheet.speech]


def test_the_issue_s_examples(derived):
    xiangshe = _said("xiangshe", derived)
    assert ("取矢不索", "司馬") in [(w, s) for w, s, _, _ in xiangshe]  # not run on
    assert ("諾", "弟子") in [(w, s) for w, s, _, _ in xiangshe]  # the 弟子 answer
    assert not any(w.startswith("無射獲") for w, *_ in xiangshe)  # the archery's words
    requests = [(w, to) for w, s, _, to in xiangshe if w.startswith("請射")]
    assert requests and all(w in ("請射", "請射於賓") for w, _ in requests)  # not 請射于
    assert ("請射", "賓") in requests


def test_alternatives_are_a_cue_each_in_one_step(derived):
    """下曰留上曰揚左右曰方: one cue each, one step, for the sequencer's [outcome] choice."""
    said = [s for s in _said("dashe", derived) if s[0] in ("留", "揚", "方")]
    assert [s[0] for s in said] == ["留", "揚", "方"]
    assert {(s[1], s[2], s[3]) for s in said} == {("大射正", said[0][2], "公")}


def test_answers_are_said_by_the_one_addressed(derived):
    yan = _said("yan", derived)
    assert ("以我安", "公") in [(w, s) for w, s, *_ in yan]  # 君曰: the lord
    assert ("諾敢不安", "卿大夫") in [(w, s) for w, s, *_ in yan]
    assert ("吾子無自辱焉", "相者") in [(w, s) for w, s, *_ in yan]


@pytest.mark.parametrize("rite", list(EXACT))
def test_committed_sheets_carry_this_speech(rite, derived):
    assert cuesheet.load(bundled_dir("cues") / f"{rite}.toml").speech == derived[rite][1].speech


def test_xiangshe_request_for_music_is_cut_at_its_addressee(derived):
    """鄉射禮 「司射…升請以樂樂于賓賓許諾」: the 司射 asks the 賓 「請以樂樂」 (于賓 names the one
    asked, who answers 諾 in the next step); then 「命樂正曰請以樂樂于賓」: told to the 樂正, the
    words keep 于賓 (the 賓 is not there: 鄭注 傳尊者之命於賤者). Checked against the doubt that
    the first cut was short: it is the request and its addressee, as the list has it."""
    _, sheet = derived["xiangshe"]
    asked = [c for c in sheet.speech if normalise(c.quote).startswith("請以樂樂")]
    assert [(normalise(c.quote), c.speaker, c.to) for c in asked] == [
        ("請以樂樂", "司射", "賓"), ("請以樂樂於賓", "司射", "樂正")]
    steps = [s.id for s in sheet.steps]
    answer = sheet.steps[steps.index(asked[0].step) + 1]
    assert normalise(answer.quote) == "賓許諾" and answer.actor == "賓"
