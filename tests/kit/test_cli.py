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
