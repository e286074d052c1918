"""Tests of soundscape.cuesheet: round trip, broken sheets, random edits."""

from __future__ import annotations

import contextlib
import dataclasses
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soundscape import cuesheet
from soundscape.errors import CueSheetError

VALID = """\
schema = 1

[text]
id = "t"
chars = 20

[[section]]
id = "s01"
name = "納賓"
span = [0, 20]

[[step]]
id = "s01.01"
section = "s01"
actor = "公"
action = "升"
quote = "公升即席"
span = [0, 4]

[[step]]
id = "s01.02"
section = "s01"
actor = ""
action = "奏"
quote = "奏肆夏"
span = [4, 7]

[[step]]
id = "s01.03"
section = "s01"
actor = ""
action = "樂闋"
place = "tang"
quote = "樂闋"
span = [7, 9]

[[layout]]
id = "east.shengqing"
name = "笙磬"
instrument = "bianqing"
group = "east"
relation = "east_of"
of = "zuojie"
facing = "west"
quote = "笙磬西面"
span = [9, 13]

[[layout]]
id = "pipes.dang"
name = "簜"
instrument = "guan"
group = "pipes"
relation = "between"
of = ["east.shengqing", "zuojie"]
quote = "簜"
span = [13, 14]

[[music]]
id = "sixia"
piece = "sixia"
kind = "jinzou"
performers = ["east.shengqing", "gong"]
repeats = 1
start = "s01.02"
stop = "s01.03"
conditions = ["間若一"]
quote = "奏肆夏"
span = [4, 7]

[[voice]]
id = "v1"
actor = "fuhou"
what = "answer"
degree = "宮"
step = "s01.01"
quote = "許諾以宮"
span = [14, 18]

[[voice]]
id = "v2"
actor = "fuhou"
what = "answer"
degree = "宮"
step = "s01.03"
as_in = "v1"
quote = "許諾如初"
span = [16, 20]
"""


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def test_valid_sheet_loads_with_lookups():
    sheet = cuesheet.loads(VALID, source="v.toml")
    assert sheet.section_of("s01.02").name == "納賓"
    assert sheet.music_at("s01.02")[0].stop == "s01.03"
    assert sheet.layout_item("pipes.dang").of == ("east.shengqing", "zuojie")
    assert sheet.voice("v2").as_in == "v1"


def test_entries_carry_their_source_line():
    sheet = cuesheet.loads(VALID, source="v.toml")
    lines = VALID.splitlines()

    def header_lines(table):
        return [n for n, line in enumerate(lines, start=1) if line == f"[[{table}]]"]

    assert [s.line for s in sheet.sections] == header_lines("section")
    assert [s.line for s in sheet.steps] == header_lines("step")
    assert [i.line for i in sheet.layout] == header_lines("layout")
    assert [m.line for m in sheet.music] == header_lines("music")
    assert [v.line for v in sheet.voices] == header_lines("voice")
    assert lines[sheet.music_cue("sixia").line] == 'id = "sixia"'
    assert lines[sheet.voice("v2").line] == 'id = "v2"'


def test_round_trip(tmp_path):
    sheet = cuesheet.loads(VALID)
    path = cuesheet.save(sheet, tmp_path / "a.toml", header="made by a test")
    again = cuesheet.load(path)
    assert again == sheet
    cuesheet.save(again, tmp_path / "b.toml", header="made by a test")
    assert (tmp_path / "a.toml").read_bytes() == (tmp_path / "b.toml").read_bytes()


def test_bundled_sheet_round_trips(tmp_path):
    sheet = cuesheet.load(cuesheet.bundled_path())
    assert cuesheet.load(cuesheet.save(sheet, tmp_path / "d.toml")) == sheet


BROKEN = [
    ('repeats = 1', 'repeats = -1', "repeats=-1 must be a whole number ≥ 1 and ≤ 12"),
    ('repeats = 1', 'repeats = 1000000000', "repeats=1000000000 must be a whole number ≥ 1"),
    ('repeats = 1', 'repeats = 9223372036854775807', "repeats=<a 19-digit integer> must be"),
    ('repeats = 1', 'repeats = nan', "repeats=nan must be a whole number"),
    ('performers = ["east.shengqing", "gong"]', 'performers = ["voice"]',
     "performers has unknown 'voice'; accepted: east.shengqing, gong, pipes.dang, se"),
    # each repeat played the whole part again: 1 001 of them took 3 GB and 43 s
    ('performers = ["east.shengqing", "gong"]', 'performers = ["gong", "se", "gong"]',
     "performers names 'gong' twice; accepted: each at most once"),
    # every piece the glossary names has a score now (勺 and 房中之樂 too): an unknown id
    ('piece = "sixia"', 'piece = "qizhai"', "piece='qizhai' is unknown; accepted: aoxia"),
    ('conditions = ["間若一"]', 'forces = { gong = 1e308 }',
     "forces.gong=1e+308 must be a whole number ≥ 1 and ≤ 64"),
    ('of = ["east.shengqing", "zuojie"]', 'of = ["east.shengqing", "pipes.dang"]',
     "of='pipes.dang' is not a place id or another layout id"),
    ('piece = "sixia"', 'piece = "yankee"', "piece='yankee' is unknown"),
    ('instrument = "bianqing"', 'instrument = "kazoo"', "instrument='kazoo' is unknown"),
    ('of = "zuojie"', 'of = "moon"', "of='moon' is not a place id"),
    ('start = "s01.02"', 'start = "s09.99"', "start='s09.99' is unknown"),
    ('stop = "s01.03"', 'stop = "s01.01"', "comes before its start"),
    # the music would stop as it begins: nothing played
    ('stop = "s01.03"', 'stop = "s01.02"', "stop='s01.02' is its start 's01.02'"),
    # ids name files (midi --split, stems): never a path, a space or a control character
    ('id = "s01"\nname', 'id = "../../x"\nname', "section id='../../x' must be an id of a-z"),
    ('id = "s01.01"', 'id = "/tmp/x"', "step id='/tmp/x' must be an id of a-z, 0-9"),
    ('id = "sixia"', 'id = "six ia"', "music id='six ia' must be an id"),
    ('id = "v1"', 'id = "V1"', "voice id='V1' must be an id"),
    ('id = "east.shengqing"', 'id = "east/shengqing"', "layout id='east/shengqing' must be"),
    ('place = "tang"', 'place = "attic"', "place='attic' is unknown"),
    ('degree = "宮"\nstep = "s01.01"', 'degree = "do"\nstep = "s01.01"', "degree='do'"),
    ('span = [4, 7]\n\n[[voice]]', 'span = [7, 4]\n\n[[voice]]', "span=[7, 4]"),
    ('relation = "east_of"', 'relation = "near"', "relation='near' is unknown"),
    ('as_in = "v1"', 'as_in = "v9"', "as_in='v9' is unknown"),
    ('facing = "west"', 'facing = "up"', "facing='up' is unknown"),
    ('actor = "公"', 'actor = "Zeus"', "actor='Zeus' is not a known actor"),
    ('conditions = ["間若一"]', 'conditions = "間若一"', "must be a list"),
    ('quote = "簜"', 'quote = "簜"\ncolour = "red"', "unknown key 'colour'"),
]


@pytest.mark.parametrize(("old", "new", "message"), BROKEN)
def test_broken_sheets_name_line_and_value(tmp_path, old, new, message):
    assert old in VALID
    broken = VALID.replace(old, new, 1)
    path = tmp_path / "broken.toml"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(CueSheetError) as caught:
        cuesheet.load(path)
    text = str(caught.value)
    assert message in text
    bad_line = _line_of(broken, new.splitlines()[-1] if "colour" in new else new.split("\n")[0])
    assert text.startswith(f"{path}:{bad_line}:"), text


@pytest.mark.parametrize("table", ["section", "step"])
def test_a_sheet_without_sections_or_steps_is_refused(table):
    """Nothing to perform: it rendered 22 s of ambience at +41 dB before."""
    empty = "\n\n".join(block for block in VALID.split("\n\n")
                         if not block.lstrip().startswith(f"[[{table}]]"))
    with pytest.raises(CueSheetError, match=rf"^e.toml:1: the sheet has no \[\[{table}\]\] "
                                            "entries; a sheet needs at least one"):
        cuesheet.loads(empty if table == "step" else _without_steps_and_sections(), source="e.toml")


def _without_steps_and_sections() -> str:
    return 'schema = 1\n\n[text]\nid = "t"\nchars = 20\n'


def test_layout_anchor_loop_is_refused_at_its_line():
    looped = VALID.replace('of = "zuojie"', 'of = "pipes.dang"')
    with pytest.raises(CueSheetError) as caught:
        cuesheet.loads(looped, source="loop.toml")
    line = _line_of(looped, 'of = "pipes.dang"')
    assert str(caught.value).startswith(f"loop.toml:{line}: layout 'east.shengqing' of=")
    assert "anchors loop back to 'east.shengqing'" in str(caught.value)


def test_entry_without_id_names_file_and_line():
    no_id = VALID.replace('id = "pipes.dang"\n', "")
    with pytest.raises(CueSheetError, match=r"x:\d+: layout lacks key 'id'"):
        cuesheet.loads(no_id, source="x")


def test_saving_over_a_sheet_keeps_its_comments(tmp_path):
    commented = VALID.replace("[[music]]\n", "# the first piece: 肆夏\n[[music]]\n").replace(
        "repeats = 1", "repeats = 1  # one 終")
    path = tmp_path / "mine.toml"
    path.write_text("# my own notes\n" + commented, encoding="utf-8")
    sheet = cuesheet.load(path)
    changed = dataclasses.replace(sheet, music=(dataclasses.replace(sheet.music[0], repeats=2),))
    cuesheet.save(changed, path, header="not used for an existing sheet")
    saved = path.read_text(encoding="utf-8")
    assert saved.startswith("# my own notes\n")
    assert "# the first piece: 肆夏\n" in saved and "not used" not in saved
    assert cuesheet.load(path) == changed
    assert cuesheet.load(path).music[0].repeats == 2


def test_saving_over_the_bundled_sheet_is_byte_stable(tmp_path):
    """In place or fresh, the same sheet gives the same bytes (derive over its own output)."""
    path = tmp_path / "dashe.toml"
    path.write_bytes(cuesheet.bundled_path().read_bytes())
    sheet = cuesheet.load(path)
    cuesheet.save(sheet, path, header="ignored: the file keeps its own")
    assert path.read_bytes() == cuesheet.bundled_path().read_bytes()


def test_an_entry_added_rewrites_the_sheet_keeping_its_leading_comments(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("# my own notes\n" + VALID.replace("[[voice]]", "# a voice\n[[voice]]", 1),
                    encoding="utf-8")
    sheet = cuesheet.load(path)
    extra = dataclasses.replace(sheet.voices[1], id="v3", as_in="")
    grown = dataclasses.replace(sheet, voices=(*sheet.voices, extra))
    cuesheet.save(grown, path)
    saved = path.read_text(encoding="utf-8")
    assert saved.startswith("# my own notes\n") and "# a voice" not in saved
    assert cuesheet.load(path) == grown


def test_duplicate_id_and_bad_toml_and_schema():
    dup = VALID.replace('id = "v2"', 'id = "v1"')
    with pytest.raises(CueSheetError, match=r"x:\d+: voice id 'v1' is used twice"):
        cuesheet.loads(dup.replace('as_in = "v1"\n', ""), source="x")
    with pytest.raises(CueSheetError, match=r"x:3: not valid TOML"):
        cuesheet.loads("schema = 1\n[text]\nid = \n", source="x")
    with pytest.raises(CueSheetError, match="schema=2 is not supported; accepted: 1"):
        cuesheet.loads(VALID.replace("schema = 1", "schema = 2"), source="x")


_LINES = VALID.splitlines()
_VALUES = st.one_of(st.integers(-3, 40), st.text(max_size=6), st.booleans(),
                    st.lists(st.integers(-2, 30), max_size=3),
                    st.sampled_from(['"s01.01"', '"zuojie"', '"between"', "[1, 2]", "{}"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(_LINES) - 1), _VALUES)
def test_random_edits_load_or_fail_cleanly(index, value):
    lines = list(_LINES)
    match = re.match(r"(\w+) = ", lines[index])
    if match:
        rendered = value if isinstance(value, str) and value[:1] in '"[{' else repr(value)
        if isinstance(value, bool):
            rendered = str(value).lower()
        elif isinstance(value, str) and value[:1] not in '"[{':
            rendered = '"' + value.replace("\\", "").replace('"', "") + '"'
        lines[index] = f"{match.group(1)} = {rendered}"
    else:
        lines[index] = ""
    with contextlib.suppress(CueSheetError):  # anything else fails the test
        cuesheet.loads("\n".join(lines), source="edit")


_VARIANT = """
[[music]]
id = "sixia_ji"
piece = "sixia"
kind = "jinzou"
performers = ["east.shengqing"]
repeats = 1
start = "s01.01"
stop = "length"
quote = "奏肆夏"
span = [4, 7]
variant = "若以樂納賓"
anchor = "s01.01"
replaces = ["sixia"]
"""


def test_a_variant_plays_in_place_of_the_cues_it_replaces():
    sheet = cuesheet.loads(VALID.replace("\n[[voice]]", _VARIANT + "\n[[voice]]", 1))
    assert sheet.music_cue("sixia_ji").replaces == ("sixia",)
    assert [m.id for m in cuesheet.performed(sheet).music] == ["sixia"]
    assert [m.id for m in cuesheet.performed(sheet, ("若以樂納賓",)).music] == ["sixia_ji"]


@pytest.mark.parametrize(("replaces", "message"), [
    ('replaces = ["guanju"]', "music 'sixia_ji' replaces 'guanju', not a music cue of the rite; "
                              "accepted: sixia"),
    ('replaces = ["sixia_ji"]', "replaces 'sixia_ji', not a music cue of the rite"),
])
def test_a_variant_replaces_only_cues_of_the_rite(replaces, message):
    broken = VALID.replace("\n[[voice]]", _VARIANT.replace('replaces = ["sixia"]', replaces)
                           + "\n[[voice]]", 1)
    with pytest.raises(CueSheetError) as caught:
        cuesheet.loads(broken, source="v.toml")
    assert str(caught.value).startswith(f"v.toml:{_line_of(broken, replaces)}: ")
    assert message in str(caught.value)


def test_only_a_variant_replaces():
    conditions = 'conditions = ["間若一"]'
    broken = VALID.replace(conditions, f'{conditions}\nreplaces = ["sixia"]')
    with pytest.raises(CueSheetError, match="only a variant"):
        cuesheet.loads(broken, source="v.toml")


@pytest.mark.parametrize(("old", "new", "message"), [
    ('quote = "請賓"', f'quote = "{"請" * 1001}"',
     "speech 'speech_001' quote is 1001 characters long; accepted: at most 1000"),
    ('speaker = "擯者"', 'speaker = "擯者 ../"', "speaker='擯者 ../' must be a title"),
    ('speaker = "擯者"', 'speaker = "擯者\\u0000../"',
     "speaker='擯者\\x00../' must be free of control characters"),
    # printed by `sequence`, written into MIDI: a terminal escape set the terminal's title
    ('title = "大射儀"', 'title = "大射儀\\u001b]0;pwned\\u0007"',
     "title='大射儀\\x1b]0;pwned\\x07' must be free of control characters"),
    ('title = "大射儀"', f'title = "{"大" * 201}"', "must be at most 200 characters long"),
])
def test_speech_is_bounded_and_spoken_by_a_title(old, new, message):
    """A quote of 99 000 characters made one section eight hours long."""
    bundled = cuesheet.bundled_path().read_text(encoding="utf-8")
    assert old in bundled
    with pytest.raises(CueSheetError, match=re.escape(message)):
        cuesheet.loads(bundled.replace(old, new, 1), source="s.toml")


def test_a_section_name_is_at_most_200_characters():
    """Names of 100 000 characters were read, and the timeline's drawing of them ran past
    five minutes."""
    bundled = cuesheet.bundled_path().read_text(encoding="utf-8")
    old = next(line for line in bundled.splitlines() if line.startswith("name = ") and
               "樂賓" in line)
    for name, fails in (("戒" * 200, False), ("戒" * 201, True)):
        text = bundled.replace(old, f'name = "{name}"', 1)
        if not fails:
            assert any(s.name == name for s in cuesheet.loads(text, source="n.toml").sections)
            continue
        with pytest.raises(CueSheetError, match=r"n\.toml:\d+: section 's\d+' name=.*must be "
                                                r"at most 200 characters long"):
            cuesheet.loads(text, source="n.toml")
