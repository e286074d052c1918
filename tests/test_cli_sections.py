"""``soundscape sections``: the performed sections, their times and music, from the
Performance itself (not a table written by hand)."""

import json

from click.testing import CliRunner

from soundscape import cli
from soundscape.cli.sections import section_rows
from soundscape.sequence.planner import perform_from_file
from soundscape.text.derive.rites import rite


def test_rows_follow_the_performance_and_name_the_music_of_each_section():
    sheet = rite("xiangyinjiu")
    from soundscape.resources import bundled_dir

    performance = perform_from_file(bundled_dir("cues") / f"{sheet.id}.toml", seed=0)
    rows = section_rows(performance)
    assert [r["id"] for r in rows] == [s.id for s in performance.sections]
    starts = [r["start"] for r in rows]
    assert starts == sorted(starts)
    heard = [m["piece"] for r in rows for m in r["music"]]
    assert heard == [m.piece for m in performance.music]
    for row in rows:
        for music in row["music"]:
            span = next(m for m in performance.music if m.cue == music["cue"])
            assert row["start"] <= round(span.start, 3) < row["end"]


def test_json_lists_the_luming_section_of_dashe_and_the_table_says_how_to_hear_it():
    runner = CliRunner()
    shown = runner.invoke(cli.cli, ["sections", "--from", "s17", "--to", "s19", "--json"])
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)
    assert [r["id"] for r in rows] == ["s17", "s18", "s19"]
    assert [m["piece"] for m in rows[1]["music"]][:1] == ["luming"]
    table = runner.invoke(cli.cli, ["sections", "--from", "s17", "--to", "s19"])
    assert table.exit_code == 0
    assert "樂賓" in table.stdout and "鹿鳴" in table.stdout
    assert "soundscape render --from s18 --to s18" in table.stdout


def test_an_unknown_section_is_a_clean_error(soundscape_cli, tmp_path):
    code, err = soundscape_cli("sections", "--from", "s99", cwd=tmp_path)
    assert code == 2
    assert "'s99'" in err and "s18 樂賓" in err


def test_the_hint_hears_the_rite_that_was_listed_not_the_dashe(tmp_path):
    """The hint's command carried no --rite or sheet: copied after `sections --rite
    xiangyinjiu` it rendered the 大射's s12 (媵爵, no music) for 鄉飲酒's 工歌."""
    import shlex

    from soundscape.resources import bundled_dir

    runner = CliRunner()
    sheet = tmp_path / "my sheet.toml"
    sheet.write_bytes((bundled_dir("cues") / "xiangshe.toml").read_bytes())
    for asked in (["--rite", "xiangyinjiu", "--seed", "3"], [str(sheet)]):
        shown = runner.invoke(cli.cli, ["sections", *asked])
        assert shown.exit_code == 0, shown.output
        hint = shown.stdout.splitlines()[-1]
        words = shlex.split(hint.removeprefix("hear one: soundscape render "))
        assert words[-4:-2] == ["--from", words[-1]]
        again = runner.invoke(cli.cli, ["sections", "--json", *words])
        assert again.exit_code == 0, again.output
        [row] = json.loads(again.stdout)
        assert row["music"], hint  # the section the hint names plays music in that rite
        listed = runner.invoke(cli.cli, ["sections", "--json", *asked])
        first = next(r for r in json.loads(listed.stdout) if r["id"] == words[-1])
        assert (row["name"], row["music"]) == (first["name"], first["music"])


def test_one_section_is_counted_in_the_singular_and_in_all_is_its_length():
    """s21 alone: "1 sections, 0:52 in all" under a row of 0:45 (the part's last sounds
    ring past its cut, where a render of it ends)."""
    shown = CliRunner().invoke(cli.cli, ["sections", "--from", "s21", "--to", "s21"])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    row = next(line for line in lines if line.startswith("s21"))
    total = next(line for line in lines if line.startswith("1 section, "))
    assert total.split()[2] == row.split()[3], shown.stdout
