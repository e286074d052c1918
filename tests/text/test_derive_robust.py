"""derive on junk, tiny and hostile texts: its sheet always loads, or the text is refused."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soundscape import cuesheet, text
from soundscape.errors import TextError
from soundscape.text.derive import derive

# Characters that drive every branch of the reader: brackets of notes, 疏 marks, headings,
# page markers and line ends of the Kanseki format, formulas and names of the rite.
_ALPHABET = [*"【】（）()[]疏右○/¶\n 。，記奏肆夏歌鹿鳴三終笙入樂南陔間合無算闋諾以宮商",
             *"舉旌偃負侯許如初公賓主人工四瑟縣於阼階東磬西面其鐘鑮建鼓",
             "<pb:KR1d0026_SBCK_007-1a>", "#+TITLE: 儀禮\n", "[疏]", "右設樂", "&KR0764;",
             "&KR9999;", "若以樂納賓則", "舞則勺", "工四人二瑟", "陔作", "命奏陔"]


def _derive_and_reload(raw: str) -> None:
    try:
        loaded = text.parse(raw, source="<junk>")
    except TextError as error:
        assert "<junk>" in str(error)
        return
    sheet = derive(loaded)
    assert cuesheet.loads(cuesheet.dumps(sheet), source="<derived>") == sheet


@pytest.mark.parametrize("raw", ["【[疏]\n[疏]", "右", "奏", "【", "疏", "右設樂。奏肆夏",
                                 "(主人/謂)¶\n", "記奏肆夏", "樂闋樂闋", "間歌笙"])
def test_tiny_texts_give_a_sheet_that_loads_or_a_clear_error(raw):
    _derive_and_reload(raw)


def test_junk_of_the_issue_is_refused_with_the_file_named(tmp_path):
    path = tmp_path / "junk.txt"
    path.write_text("【[疏]\n[疏]", encoding="utf-8")
    with pytest.raises(TextError, match=r"junk\.txt: holds no Chinese text"):
        text.load(path)


@pytest.mark.parametrize("leaf", ["100001", "20000000", "9" * 5000])
def test_a_page_marker_past_any_book_is_refused_on_its_line(tmp_path, leaf):
    """`<pb:X-20000000a>` listed every page between as missing: 18 s and 2.2 GB for a
    150-byte text (a 5000-digit leaf: a traceback, past Python's digit limit)."""
    path = tmp_path / "gap.txt"
    path.write_text(f"<pb:X-1a>大射之儀君有命戒射\n<pb:X-{leaf}a>射人戒諸公卿大夫射\n",
                    encoding="utf-8")
    with pytest.raises(TextError, match=r"gap\.txt:2: page marker .*accepted: a leaf from 1 "
                                        r"to 100000"):
        text.load(path)
    path.write_text("<pb:X-1a>大射之儀君有命戒射\n<pb:X-100000a>射人戒諸公卿大夫射\n",
                    encoding="utf-8")
    assert text.load(path).chars  # the last leaf accepted: 99 999 pages missing, listed


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_ALPHABET), max_size=60).map("".join))
def test_any_text_gives_a_sheet_that_loads_or_a_clear_error(raw):
    _derive_and_reload(raw)
