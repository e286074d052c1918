"""Hand edits of a bundled sheet that ``soundscape cues`` accepts must sequence, or be
refused at load naming the file and line: what loads, plays.

(Each of these once loaded and then crashed the sequencer with a KeyError.)
"""

from __future__ import annotations

import re

import pytest

from soundscape import cuesheet
from soundscape.errors import CueSheetError
from soundscape.music.tuning import default_tuning
from soundscape.sequence.planner import perform
from soundscape.site.courtyard import load_site

_YAN = cuesheet.bundled_path().parent / "yan.toml"


def _edited(old: str, new: str, *, count: int = 1) -> str:
    text = _YAN.read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new, count)


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def test_one_cue_with_more_se_than_the_rest_sequences_with_them(sheet, site):
    """A 大射 sheet whose 鹿鳴 and 無算樂 have two 瑟 and whose 貍首 states four: 貍首
    gets its four."""
    text = cuesheet.bundled_path().read_text(encoding="utf-8").replace(
        "forces = {gong = 6, se = 4}", "forces = {gong = 6, se = 2}", 1).replace(
        "forces = {gong = 6, se = 4}", "forces = {se = 4}", 1).replace(
        "forces = {gong = 6, se = 4}", "forces = {gong = 6, se = 2}", 1)
    edited = cuesheet.loads(text, source="dashe.toml")
    assert {m.id: dict(m.forces) for m in edited.music if m.forces}["lishou"] == {"se": 4}
    rite = perform(edited, site=site, tuning=default_tuning(), seed=0)

    def players(cue: str) -> set[str]:
        return {e.source for e in rite.events if e.cue == cue and e.source.startswith(
            "gong.shanggong")}

    assert players("lishou") == {f"gong.shanggong.{i}" for i in (1, 2, 3, 4)}
    assert players("luming") == {"gong.shanggong.1", "gong.shanggong.2"}


def test_more_se_than_the_site_seats_is_refused_at_the_cue():
    """燕禮's 寢 seats the 工四人二瑟 of its text: a cue asking three 瑟 there is refused,
    naming the cue's line, before any sequencing."""
    text = _edited("forces = {gong = 4, se = 2}\nrepeats = 1\nstart = \"s16.07\"",
                   "forces = {se = 3}\nrepeats = 1\nstart = \"s16.07\"")
    sheet = cuesheet.loads(text, source="yan.toml")
    with pytest.raises(CueSheetError) as caught:
        perform(cuesheet.performed(sheet), site=load_site(rite="yan"),
                tuning=default_tuning(), seed=0)
    line = text[:text.index("forces = {se = 3}")].count("\n") - text[:text.index(
        "forces = {se = 3}")].splitlines()[::-1].index("[[music]]")  # the cue's header
    assert str(caught.value).startswith(f"yan.toml:{line}: music 'luming' forces.se=3 must "
                                        "be ≤ 2"), str(caught.value)


@pytest.mark.parametrize(("old", "new", "key"), [
    ('start = "s16.07"', 'start = "s30.30"', "start"),
    ('stop = "length"\nquote = "歌鹿鳴"', 'stop = "s30.29"\nquote = "歌鹿鳴"', "stop"),
    ('anchor = "s20.08"\n\n[[speech]]', 'anchor = "s30.02"\n\n[[speech]]', "anchor"),
], ids=["start", "stop", "anchor"])
def test_a_rite_cue_at_a_step_of_the_ji_is_refused_at_its_line(old, new, key):
    """The 記's steps are never performed: a cue of the rite cannot start or stop there,
    nor a variant be anchored there."""
    text = _edited(old, new)
    with pytest.raises(CueSheetError) as caught:
        cuesheet.loads(text, source="yan.toml")
    message = str(caught.value)
    line = _line_of(text, new.split("\n")[0])
    assert message.startswith(f"yan.toml:{line}: "), message
    assert re.search(rf"{key}=.*s30\.\d+.* 記 .*never performed", message), message


# -- bounds on what a sheet may ask for ------------------------------------------------------
def test_a_sheet_of_thousands_of_music_cues_is_refused_at_load():
    """One music cue copied 5,000 times once sequenced for 147 s and 10.8 GB into a
    238-hour Performance; the sheet is refused at the first cue past the bound."""
    text = _YAN.read_text(encoding="utf-8")
    start = text.index("[[music]]")
    cue = text[start:text.index("[[music]]", start + 1)]
    copies = "".join(cue.replace('id = "', f'id = "c{i}', 1) for i in range(5000))
    big = text + "\n" + copies
    with pytest.raises(CueSheetError) as caught:
        cuesheet.loads(big, source="big.toml")
    headers = [i + 1 for i, line in enumerate(big.splitlines()) if line == "[[music]]"]
    assert str(caught.value) == (
        f"big.toml:{headers[cuesheet.MOST['music']]}: [[music]] entry 201 of "
        f"{len(headers)}: a sheet holds at most 200 [[music]] entries")


def test_the_longest_sequenced_rite_is_bounded(sheet, site, monkeypatch):
    """A rite whose steps run past the bound is refused when its steps are timed, naming
    the step where the clock passes it (before its sounds are made)."""
    from soundscape.sequence import planner

    monkeypatch.setattr(planner, "MAX_RITE_S", 600.0)
    with pytest.raises(CueSheetError, match=r"dashe.toml:\d+: step 's\d+\.\d+' ends at "
                                            r"\d+ s, past the 600 s a rite may run"):
        perform(sheet, site=site, tuning=default_tuning(), seed=0)


def test_a_rite_run_long_by_its_durations_table_names_the_table(tmp_path, sheet, site):
    """Every action at 3 600 s (the table's bound) gave a rite of 25 hours, refused naming
    only the cue sheet."""
    from soundscape.resources import data_dir
    from soundscape.sequence.planner import SequenceOptions
    from soundscape.sequence.timeline import Durations

    table = (data_dir() / "durations.toml").read_text("utf-8")
    slow = tmp_path / "slow.toml"
    head, actions = table.split("[action]", 1)  # every action at the bound, the rest as is
    actions, rest = actions.split("[pace]", 1)
    slow.write_text(head + "[action]" + re.sub(r"= \d+(\.\d+)?", "= 3600", actions)
                    + "[pace]" + rest, "utf-8")
    options = SequenceOptions(durations=Durations.load(slow))
    with pytest.raises(CueSheetError, match=r"past the 86400 s a rite may run .*the steps are "
                                            rf"timed by {re.escape(str(slow))}"):
        perform(sheet, site=site, tuning=default_tuning(), seed=0, options=options)
