"""Speech from every 曰 and 請 of the four bundled rites, scored against the hand-checked
list tests/text/speech_gold.toml (issue 28, item 3). On the code before it the exactness
was 大射 0.57, 鄉飲酒 0.67, 鄉射 0.41, 燕禮 0.29 (bench/bench_derive.py --speech); then
0.86, 1.00, 0.96, 0.82 before the speakers of pairings, 獻X曰, 皆對曰 lists and 如初
requests were read (now 1.00 each)."""

from __future__ import annotations

import pytest

from soundscape import cuesheet
from soundscape.resources import bundled_dir
from soundscape.text.derive import derive, rites
from soundscape.text.hanzi import normalise
from tests.text.speech_gold import gold, score

# Least share of the listed phrases said exactly, by the right speaker.
EXACT = {"dashe": 1.0, "xiangyinjiu": 1.0, "xiangshe": 1.0, "yan": 1.0}


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


# (rite, passage, words, speaker, to) the code before these rules got wrong: 命 by the one
# who leads the 比耦, not the pair named before it; 獻公曰 is the 主人's; of 賓諸公卿大夫皆對
# the 賓 answers first; 如初請致者 is the 小臣's again; 請贊執爵者 whole.
CASES = [
    ("dashe", "大夫與大夫命上射曰某御於子", "某御於子", "司射", "上射"),
    ("dashe", "命下射曰子與某子射卒遂比衆耦", "子與某子射", "司射", "下射"),
    ("dashe", "命大夫之耦曰子與某子射", "子與某子射", "司射", "大夫"),
    ("dashe", "告於大夫曰某御於子命衆耦", "某御於子", "司射", "大夫"),
    ("xiangshe", "以耦告於大夫曰某御於子", "某御於子", "司射", "大夫"),
    ("dashe", "賓諸公卿大夫皆對曰諾敢不安", "諾敢不安", "賓", ""),
    ("dashe", "如初請致者若命長致", "請致者", "小臣", ""),
    ("yan", "如初請致者若命長致", "請致者", "小臣", ""),
    ("yan", "獻公曰臣敢奏爵以聽命", "臣敢奏爵以聽命", "主人", "公"),
    ("yan", "媵爵曰臣受賜矣臣請贊執爵者", "臣受賜矣臣請贊執爵者", "賓", ""),
]


@pytest.mark.parametrize(("rite", "passage", "words", "speaker", "to"), CASES)
def test_the_speaker_and_the_whole_words(rite, passage, words, speaker, to, derived):
    text, sheet = derived[rite]
    start = text.chars.index(passage) + passage.index(words)
    got = [(c.quote, c.speaker, c.to) for c in sheet.speech
           if c.span[0] < start + len(words) and start < c.span[1]]
    assert [(normalise(q), s, t) for q, s, t in got] == [(words, speaker, to)]


def test_the_same_rules_read_a_user_s_own_text():
    """The rules are the text's, not a rite's: a chapter written for the test (no rite's
    data) gets the same speakers; on the code before, 士 said the pairing's words, 諸公卿大夫
    answered, the 大夫 asked 如初, the 公 was given the words presented to him."""
    from soundscape import text

    raw = ("司射告於大夫曰請降司射先降搢樸反位司射比耦士與大夫為耦命大夫之耦曰子與某子射"
           "告於大夫曰某御於子命衆耦如初公曰以我安賓諸公卿大夫皆對曰諾敢不安司正降"
           "小臣請致者公命長致二大夫媵爵如初請致者若命長致則主人獻公曰臣敢奏爵以聽命"
           "凡公所辭皆栗階若與四方之賓燕媵爵曰臣受賜矣臣請贊執爵者相者對曰吾子無自辱焉")
    source = text.parse(raw, source="<test>")
    said = [(c.speaker, c.quote) for c in derive(source).speech]
    assert said == [("司射", "請降"), ("司射", "子與某子射"), ("司射", "某御於子"),
                    ("公", "以我安"), ("賓", "諾敢不安"), ("小臣", "請致者"),
                    ("小臣", "請致者"), ("主人", "臣敢奏爵以聽命"),
                    ("賓", "臣受賜矣臣請贊執爵者"), ("相者", "吾子無自辱焉")]


def test_a_request_ends_where_a_general_rule_begins(derived):
    """凡 opens a rule of the 記: 「凡公所酬既拜請旅侍臣凡薦與羞者小膳宰也」 asks 請旅侍臣
    (on the code before, 「請旅侍臣凡薦與羞者小膳」)."""
    said = _said("yan", derived)
    assert "請旅侍臣" in [w for w, *_ in said]
    assert not any("凡" in w for rite in rites.rite_ids() for w, *_ in _said(rite, derived))


def test_words_that_open_a_step_are_said_as_the_step_before_tells(derived):
    """若矢不備則司馬正又袒執弓升命取矢如初 | 曰取矢不索: the step is cut before 曰, and its
    words are the 命 of the step before, called to those at the targets (they were read as
    said, spoken at 10 m from the duke: 9.5 dB over the bed)."""
    sheet = derived["dashe"][1]
    order = next(c for c in sheet.speech if c.quote == "取矢不索")
    assert sheet.step(order.step).quote.startswith("曰")
    assert order.speaker == "司馬正" and order.kind == "command"


def test_a_punctuated_edition_without_quotation_marks():
    """The held-out 投壺 print with its 「」『』 taken out (its punctuation kept): the words
    after 曰： end at the sentence's end where the narration resumes, at a mark whose clause
    holds the next 曰, and go on where the next sentence speaks as the speaker (臣…); no
    step is cut at a name inside them. Exactness 0.19 on the code before these rules (words
    ran on: 「左右卒投請數二算為純…」, 「辟主人阼階上拜送」); 0.92 with the ends alone (the
    勝者 named inside the 司射's words cut a step and took his 請奏貍首); 1.00 now."""
    from pathlib import Path

    from soundscape import text

    raw = (Path(__file__).parent / "editions" / "KR1d0052_041.txt").read_text(encoding="utf-8")
    source = text.parse(raw.translate(str.maketrans("", "", "「」『』")), source="<test>")
    result = score("touhu", source, derive(source, text_id="touhu"))
    assert result.recall == 1.0 and result.exactness == 1.0, "\n".join(result.wrong)
    punctuated = text.parse("司射告於大夫曰：請降。司射比耦。賓媵爵曰：臣受賜矣。臣請贊執爵者。"
                            "相者對曰：吾子無自辱焉。", source="<test>")
    assert [punctuated.chars[slice(*c.span)] for c in derive(punctuated).speech] == [
        "請降", "臣受賜矣臣請贊執爵者", "吾子無自辱焉"]


def test_the_dashe_of_another_edition():
    """The 《四部叢刊》 大射 (鄭注 inline, page markers, pages lost): every listed phrase its
    pages hold (41 of 42) said exactly, by the same rules (0.85 on the code before them)."""
    from soundscape import text
    from soundscape.resources import data_dir
    from tests.text import speech_gold

    source = text.load(data_dir() / "texts" / "kanseki" / "KR1d0026_007.txt")
    sheet = derive(source, text_id="dashe", rite="dashe")
    held = [e for e in gold("dashe") if normalise(e["passage"]) in source.chars]
    assert len(held) == 41
    result = speech_gold.score("dashe", source, sheet, held)
    assert result.recall == 1.0 and result.exactness == 1.0, "\n".join(result.wrong)


@pytest.mark.parametrize("rite", list(EXACT))
def test_no_step_begins_inside_words_someone_says(rite, derived):
    """Words said are no one acting: the steps were cut at every actor the words name (the
    司射's oath 公射大侯，大夫射參，士射干… was three steps, 24 s of 射; 膳宰請羞於諸公卿者 gave
    卿 a step of its own)."""
    _, sheet = derived[rite]
    for cue in sheet.speech:
        a, b = cue.span
        inside = [s.id for s in sheet.steps if a < s.span[0] < b]
        assert not inside, f"{cue.id} {cue.quote}: steps {inside} begin inside its words"


def test_an_action_named_in_words_said_is_not_the_steps(derived):
    """司射西面誓之曰公射大侯… does not shoot (it was a step of 射, 12 s); 請 and 許諾, the
    speaking itself, stay the action where they stand inside the words (擯者請賓)."""
    _, sheet = derived["dashe"]
    oath = next(s for s in sheet.steps if s.quote.startswith("司射西面誓之曰公射大侯大夫射參"))
    assert oath.action == "other" and oath.quote.endswith("不異侯")
    asked = next(s for s in sheet.steps if s.quote == "擯者請賓")
    assert asked.action == "請"
