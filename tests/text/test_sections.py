"""Sections without 右 headings: the rule of data/sections.toml, measured on the 大射.

The bundled 大射 (江永) has 45 右 headings, 44 boundaries inside the text: the truth. The rule
runs on its characters as if the headings were not there. Thresholds sit a few boundaries
below what the rule measures (bench/bench_derive.py: all 57 found, precision 0.75, recall
0.98; the held-out last 22 headings 0.66 / 0.95), so that losing two true boundaries or
gaining three false ones fails.
"""

from __future__ import annotations

import re

import pytest

from soundscape import text
from soundscape.resources import data_dir
from soundscape.text.derive.sections import boundaries, ji_start

KANSEKI = data_dir() / "texts" / "kanseki"
CHAPTERS = {"xiangyinjiu": "KR1d0026_004", "xiangshe": "KR1d0026_005", "yan": "KR1d0026_006"}


def _scores(found: list[int], truth: list[int]) -> tuple[float, float]:
    """Precision and recall of boundaries on the exact character."""
    hits = set(found) & set(truth)
    return len(hits) / len(found), len(hits) / len(truth)


@pytest.fixture(scope="module")
def dashe():
    bundled = text.load_bundled()
    truth = [h.end for h in bundled.headings][:-1]  # the last heading closes the text
    return bundled.chars, truth, boundaries(bundled.chars)[1:]


@pytest.fixture(scope="module")
def chapters():
    found = {}
    for rite, name in CHAPTERS.items():
        path = KANSEKI / f"{name}.txt"
        if not path.exists():
            pytest.skip(f"{path} missing")
        chars = text.load(path).chars
        found[rite] = (chars, boundaries(chars, 0, ji_start(chars)))
    return found


def test_dashe_without_headings_all(dashe):
    _, truth, found = dashe
    assert len(truth) == 44
    precision, recall = _scores(found, truth)
    assert precision >= 0.70 and recall >= 0.95, (precision, recall)


def test_dashe_without_headings_held_out_half(dashe):
    """The last 22 headings (取矢 … 無算爵) were not used to choose the patterns."""
    _, truth, found = dashe
    split = truth[21]
    precision, recall = _scores([f for f in found if f > split], [t for t in truth if t > split])
    assert precision >= 0.60 and recall >= 0.90, (precision, recall)


def test_dashe_sections_open_with_the_rites_words(dashe):
    chars, _, found = dashe
    starts = {chars[f:f + 4] for f in found}
    for words in ("厥明司宮", "羮定射人", "更爵洗升", "乃席工於", "若命曰復", "無算爵士",
                  "賓醉北面"):
        assert words in starts


def test_the_print_of_the_dashe_opens_the_same_sections(dashe):
    """Another edition (the 《四部叢刊》 print, old glyphs, pages lost): the same openings,
    but for those on its lost pages (14a–14b holds 公又行一爵)."""
    path = KANSEKI / "KR1d0026_007.txt"
    if not path.exists():
        pytest.skip(f"{path} missing")
    chars, _, found = dashe
    printed = text.load(path).chars
    bundled = [chars[f:f + 6] for f in [0, *found]]
    from_print = [printed[f:f + 6] for f in boundaries(printed)]
    remaining = iter(bundled)  # the print's openings, in the bundled text's order
    assert all(opening in remaining for opening in from_print)
    assert sorted(set(bundled) - set(from_print)) == ["公又行一爵若"]


def test_a_mark_opens_wherever_it_stands_an_opener_needs_min_chars():
    # 厥明 (a mark) opens; 司宮尊 two characters later is its first act, not a new unit.
    assert boundaries("設洗厥明司宮尊於東楹之西") == [0, 2]
    # an opener 20 or more characters after the last opening opens; one closer does not.
    filler = "東" * 19
    assert boundaries(f"{filler}主人洗") == [0]
    assert boundaries(f"{filler}東主人洗") == [0, 20]
    # two marks close together both open (無算爵 … 若有遵者).
    assert boundaries("無算爵無算樂賓出若有遵者") == [0, 8]


def test_the_host_rewarding_the_musicians_stays_with_their_music():
    assert boundaries("乃歌鹿鳴三終" + "東" * 20 + "主人洗升實爵獻工") == [0]
    assert boundaries("乃歌鹿鳴三終" + "東" * 20 + "主人洗升獻卿") == [0, 26]


@pytest.mark.parametrize(("rite", "openings"), [
    ("xiangyinjiu", ["乃席賓", "羮定主人速賓", "主人坐取爵於篚降洗", "賓降洗", "介降洗",
                     "主人西南面三拜衆賓", "一人洗升舉觶", "設席於堂廉", "笙入", "乃間歌",
                     "乃合樂", "主人降席自南方側降作相為司正", "使二人舉觶", "無算爵", "明日"]),
    ("xiangshe", ["羮定", "賓以虛爵降", "席工於西階上", "笙入", "司射適堂西", "司馬命張侯",
                  "使二人舉觶", "無算爵"]),
    ("yan", ["射人納賓", "主人降洗", "賓以虛爵降", "主人盥洗象觚", "更爵洗", "小臣自阼階下請媵爵者",
             "席工於西階上", "笙入", "乃間歌", "遂歌鄉樂", "射人自阼階下請立司正", "無算爵",
             "賓醉"]),
])
def test_other_chapters_open_their_units(rite, openings, chapters):
    chars, found = chapters[rite]
    starts = [chars[f:] for f in found]
    for words in openings:
        assert any(s.startswith(words) for s in starts), words


@pytest.mark.parametrize("rite", list(CHAPTERS))
def test_no_music_formula_is_cut(rite, chapters):
    """笙入…合樂, 間歌 and 合樂 lists, and 工歌 with the host's gift to the 工 stay whole."""
    chars, found = chapters[rite]
    wholes = [r"笙入.{0,15}?(?:樂|奏)[^主]*", r"乃間歌.*?笙由儀", r"(?:乃合樂|遂歌鄉樂).*?[採采]蘋",
              r"歌鹿鳴.*?獻工"]
    for pattern in wholes:
        for match in re.finditer(pattern, chars):
            assert not [f for f in found if match.start() < f < match.end()], match.group()


def test_xiangshe_third_round_is_one_section(chapters):
    """The 騶虞 round: 不鼓不釋, the 節 and 卒射 in one unit (as 大射's 三射用樂)."""
    chars, found = chapters["xiangshe"]
    start = chars.index("不鼓不釋")
    end = chars.index("卒射", chars.index("奏騶虞以射"))
    assert not [f for f in found if start < f <= end]
