"""The kit verbs refuse bad input before any work: exit 2 and a message naming what."""

from __future__ import annotations


def test_kit_refuses_an_unknown_programme_and_a_bad_layout(tmp_path, soundscape_cli):
    code, err = soundscape_cli("kit", "--programme", "opera", cwd=tmp_path)
    assert code == 2 and "--programme='opera' must be a known id" in err and "round3" in err
    code, err = soundscape_cli("kit", "--layout", "30:0,up", cwd=tmp_path)
    assert code == 2 and "item 2 'up'" in err
    code, err = soundscape_cli("kit", "--layout", "missing.json", cwd=tmp_path)
    assert code == 2 and "missing.json: no such file" in err
    assert not (tmp_path / "output").exists()


def test_kit_reads_its_programme_file_and_names_the_line(tmp_path, soundscape_cli):
    (tmp_path / "p.toml").write_text('[[programme]]\nid = "a"\nround = "third"\n')
    code, err = soundscape_cli("kit", "--programmes", "p.toml", cwd=tmp_path)
    assert code == 2 and "p.toml: [[programme]] 1: round='third'" in err


def test_batch_and_show_refuse_bad_input(tmp_path, soundscape_cli):
    (tmp_path / "plan.toml").write_text('[[render]]\nid = "a"\nlayout = "mono"\n')
    code, err = soundscape_cli("batch", "plan.toml", cwd=tmp_path)
    assert code == 2 and "plan.toml: [[render]] 1: layout='mono'" in err
    code, err = soundscape_cli("show", "--osc", "127.0.0.1:53000", "--programme", "rite",
                               "--kit", "nokit", cwd=tmp_path)
    assert code == 2 and "nokit has no rite.cues.json; it holds no programme" in err, err


def test_the_bundled_programmes_list_for_every_rite_leaving_out_what_it_cannot_play():
    """`kit --rite yan --list` stopped on round3 (燕禮 shoots no round) and `--rite xiangshe`
    on a place of the 大射's site ('hou' unknown: the kit sequenced the 鄉射 on it)."""
    from click.testing import CliRunner

    from soundscape.cli import cli

    runner = CliRunner()
    for rite, note in (("yan", "round3: left out: round=3 was not shot"),
                       ("xiangshe", "round3: zones left out: fa_dahou (not on this rite's "
                                    "site)"),
                       ("xiangyinjiu", "round3: left out")):
        shown = runner.invoke(cli, ["kit", "--rite", rite, "--list"])
        assert shown.exit_code == 0 and note in shown.stderr, shown.output
        assert "music " in shown.stdout and "cue.gaixia" in shown.stdout
        assert ("round3 " in shown.stdout) is (rite == "xiangshe")
    shown = runner.invoke(cli, ["kit", "--list"])
    assert shown.exit_code == 0 and "left out" not in shown.stderr, shown.output


def test_a_batch_render_of_sections_that_take_no_time_is_refused_by_its_id(tmp_path,
                                                                           soundscape_cli):
    """s01–s04 (made ready before the day) crashed pass 1 (a reshape of nothing) and left an
    empty folder; `render --from s01 --to s04` refuses them by name."""
    (tmp_path / "plan.toml").write_text('out = "batch"\n[[render]]\nid = "a"\nfrom = "s01"\n'
                                        'to = "s04"\n')
    code, err = soundscape_cli("batch", "plan.toml", "--executor", "serial", cwd=tmp_path)
    assert code == 2 and "1 render into" in err, err
    assert "error: render a: section s01 to s04 takes no time" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.toml"]
