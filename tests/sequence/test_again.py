"""Steps done again where the text says 如初: the third round's 取矢視算 and 飲不勝者 (the
大射's, by its headings' names; the 鄉射's, by the procedure's own words)."""

import dataclasses

import pytest

from soundscape import cuesheet
from soundscape.errors import CueSheetError
from soundscape.resources import bundled_dir
from soundscape.sequence.planner import perform_from_file
from soundscape.text.derive.repeats import with_repeats


def span(rite, section_id):
    found = next(s for s in rite.sections if s.id == section_id)
    return found.end - found.start


def test_the_third_rounds_drinking_takes_the_time_the_second_rounds_takes(rite):
    """s34 said its drinking in two lines (如初) and lasted 9 s against s28's 3:16; done
    again, it lasts as long as the steps it repeats, give or take its own two."""
    assert span(rite, "s34") >= span(rite, "s28")
    assert span(rite, "s34") < span(rite, "s28") + 60
    assert span(rite, "s33") > 0.7 * span(rite, "s27")


def test_a_step_done_again_sounds_and_is_marked_as_the_step_it_repeats(rite, sheet):
    repeated = cuesheet.again(sheet)
    ruchu, original = repeated["s34.02.r01"]
    assert (ruchu.id, original.id) == ("s34.02", "s28.06")
    [marker] = [m for m in rite.markers if m.ref == "s34.02.r01"]
    assert marker.text == original.quote == marker.quote
    assert marker.gloss.startswith("As at first (如初, s34.02; s28.06): ")
    s34 = next(s for s in rite.sections if s.id == "s34")
    assert s34.start <= marker.time < s34.end
    # the repeated drinking is heard: bows and cups of the steps it repeats, in s34
    heard = {e.articulation for e in rite.events if e.cue.startswith("s34.02.r")}
    first = {e.articulation for e in rite.events
             if e.cue in {repeated[c][1].id for c in repeated if c.startswith("s34.02.")}}
    assert heard == first and len(heard) > 3


def test_derive_names_the_steps_each_ruchu_does_again(sheet):
    """As the bundled sheet holds them: the later steps cut the earlier section where each
    is first stated."""
    as_in = {s.id: s.as_in for s in sheet.steps if s.as_in}
    assert as_in == {
        "s33.06": ("s27.09",), "s33.07": ("s27.10",), "s33.08": ("s27.11", "s27.12", "s27.13"),
        "s34.01": tuple(f"s28.{k:02d}" for k in range(1, 6)),
        "s34.02": tuple(f"s28.{k:02d}" for k in range(6, 25))}


def _step(id_, section, quote):
    return cuesheet.Step(id_, section, "", "other", "", quote, (0, 1))


def test_only_a_section_that_repeats_an_earlier_ones_name_and_says_ruchu_repeats():
    sections = [cuesheet.Section("a", "飲", (0, 1)), cuesheet.Section("b", "射", (1, 2)),
                cuesheet.Section("c", "飲", (2, 3)), cuesheet.Section("d", "射", (3, 4))]
    steps = [_step("a1", "a", "司射命設豐"), _step("a2", "a", "勝者皆袒"),
             _step("a3", "a", "不勝者升飲卒觶"), _step("b1", "b", "射如初"),
             _step("c1", "c", "司射命設豐如初"), _step("c2", "c", "不勝者升飲如初"),
             _step("d1", "d", "射")]
    got = {s.id: s.as_in for s in with_repeats(sections, steps) if s.as_in}
    assert got == {"c1": ("a1", "a2"), "c2": ("a3",)}


def test_a_procedure_said_again_by_its_opening_words_repeats_through_its_closing_ones():
    """Sections named by their opening words share no name: a 如初 section that says the
    飲不勝者's opening words (設豐) does again the earlier steps from the first saying them
    through the next saying its closing ones (徹豐), not the steps after; a 如初 section
    that says no procedure's words, or one never closed, takes nothing."""
    sections = [cuesheet.Section(id_, id_, (k, k + 1)) for k, id_ in enumerate("abcdef")]
    steps = [_step("a1", "a", "射"), _step("b1", "b", "司射命弟子設豐"),
             _step("b2", "b", "勝者皆袒"), _step("c1", "c", "不勝者升飮卒觶"),
             _step("c2", "c", "乃徹豐與觶"), _step("c3", "c", "獻獲者"),
             _step("d1", "d", "射如初"),
             _step("e1", "e", "司射命設豐如初"), _step("e2", "e", "不勝者升飲如初"),
             _step("f1", "f", "命設豐如初")]
    got = {s.id: s.as_in for s in with_repeats(sections, steps) if s.as_in}
    assert got == {"e1": ("b1", "b2"), "e2": ("c1", "c2"), "f1": ("b1", "b2", "c1", "c2")}
    unclosed = [s for s in steps if s.id != "c2"]
    assert not any(s.as_in for s in with_repeats(sections, unclosed))


def test_the_xiangshes_third_drinking_is_the_seconds_done_again():
    """The 鄉射 prints no headings: its third round's 飲不勝者 (s33: 司射命設豐…如初,
    不勝者…升飮如初) lasted 9 s; it does again s25–s26 from 設豐 through 乃徹豐與觶 (not the
    獻獲者 after it) and takes as long, give or take its own two steps."""
    sheet = cuesheet.load(bundled_dir("cues") / "xiangshe.toml")
    done = [n for s in ("s33.01", "s33.02") for n in sheet.step(s).as_in]
    assert done[0] == "s25.01" and "設豐" in sheet.step(done[0]).quote
    assert "徹豐" in sheet.step(done[-1]).quote
    assert len(done) == len(set(done)) == 14
    assert not any("獻獲者" in sheet.step(n).quote for n in done)
    performed = perform_from_file(bundled_dir("cues") / "xiangshe.toml", seed=0)
    length = {s.id: s.end - s.start for s in performed.sections}
    assert length["s33"] > 0.5 * (length["s25"] + length["s26"]) > 30


def test_a_sheets_as_in_names_earlier_steps_once_each(tmp_path, sheet):
    text = (cuesheet.bundled_path()).read_text("utf-8")
    for wrong, message in [
            ('as_in = ["s28.06"', None),
            ('as_in = ["s40.01"', "as_in has 's40.01'; accepted: the id of an earlier step"),
            ('as_in = ["s34.01"', "as_in has 's34.01'; accepted: the id of an earlier step "
                                  "that has no as_in itself"),
            ('as_in = ["s28.06", "s28.06"', "as_in names 's28.06' twice")]:
        path = tmp_path / "x.toml"
        path.write_text(text.replace('as_in = ["s28.06"', wrong, 1), "utf-8")
        if message is None:
            assert cuesheet.load(path).step("s34.02").as_in[0] == "s28.06"
            continue
        with pytest.raises(CueSheetError, match="as_in") as raised:
            cuesheet.load(path)
        assert message in str(raised.value) and f"{path}:" in str(raised.value)


def test_a_step_id_a_copy_would_take_is_refused(sheet):
    taken = dataclasses.replace(sheet.step("s35.01"), id="s34.02.r01")
    clashing = dataclasses.replace(sheet, steps=(*sheet.steps, taken))
    with pytest.raises(CueSheetError) as raised:
        cuesheet.performed_again(clashing)
    assert "'s34.02.r01' is the id of a step performed again" in str(raised.value)
