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
        _worded_for(rite, shown.stdout)
    shown = runner.invoke(cli, ["kit", "--list"])
    assert shown.exit_code == 0 and "left out" not in shown.stderr, shown.output
    _worded_for("dashe", shown.stdout)


#: What each rite's listing says of it: its name, length, music, round and guest's music.
WORDING = {
    "dashe": ("The whole rite (about 3½ hours)", "The 大射儀, the Great Archery Meeting, "
              "from s01 戒百官 to s45 賓出公入, heard from the duke's seat",
              "The music of the rite, in about 12 minutes", "each of the eight music cues",
              "shot to 貍首", "s32 三射用樂: the archers loose on the drum 節 of 貍首",
              "s18 樂賓: sung, then piped: 鹿鳴 (surviving), 新宮 (reconstruction)"),
    "yan": ("(about 1¾ hours)", "The 燕禮, the Banquet, from s01", "heard from the duke's seat",
            "in about 25 minutes", "each of the 20 music cues",
            "s16 席工於西階上少東… to s18 笙入立於縣中奏南…: sung, then piped: 鹿鳴, 四牡, "
            "皇皇者華 (surviving), 南陔, 白華, 華黍 (reconstruction)"),
    "xiangyinjiu": ("(about 1½ hours)", "The 鄉飲酒禮, the District Symposium", "the host's place",
                    "in about 25 minutes", "each of the 20 music cues", "s12 設席於堂廉東上工…"),
    "xiangshe": ("(about 2¾ hours)", "The 鄉射禮, the District Archery Meeting",
                 "the host's place", "in about 13 minutes", "each of the nine music cues",
                 "shot to 騶虞", "the drum 節 of 騶虞 (reconstruction)", "合樂): 關雎"),
}


def _worded_for(rite: str, listing: str) -> None:
    """The titles and descriptions under ``kit --list`` say the rite's own figures and no
    other rite's: they said the 大射's (2½ hours, eight cues, 貍首, s18 樂賓) for every rite."""
    for said in WORDING[rite]:
        assert said in listing, (rite, said, listing)
    theirs = {said for other, wording in WORDING.items() if other != rite for said in wording
              if not any(said in mine for mine in WORDING[rite])}
    for said in theirs:
        assert said not in listing, (rite, said)
    if rite != "dashe":
        assert "大射" not in listing and "貍首" not in listing and "2½" not in listing
    assert "{" not in listing


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
