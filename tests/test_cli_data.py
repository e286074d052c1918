"""Edits in a project folder count: its cues/ and instruments/ come before the bundled ones,
and every run names the data it used."""

import shutil

from soundscape import cuesheet, resources
from soundscape.music.instruments import list_instruments, load_instrument


def _bundled(name):
    return resources.bundled_dir(name)


def test_project_folder_is_found_from_a_subfolder(tmp_path):
    (tmp_path / "soundscape.toml").write_text("")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert resources.project_dir(tmp_path / "a" / "b") == tmp_path


def test_a_checkout_is_a_project_and_an_unrelated_folder_is_not(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\n')
    assert resources.project_dir(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "soundscape"\n')
    assert resources.project_dir(tmp_path) == tmp_path


def test_a_new_instrument_in_the_project_counts(tmp_path, monkeypatch):
    shutil.copytree(_bundled("instruments"), tmp_path / "instruments")
    tao = (tmp_path / "instruments" / "tao.toml").read_text(encoding="utf-8")
    (tmp_path / "instruments" / "tao2.toml").write_text(
        tao.replace('id = "tao"', 'id = "tao2"'), encoding="utf-8")
    (tmp_path / "soundscape.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    assert "tao2" in list_instruments()
    assert load_instrument("tao2").path == tmp_path / "instruments" / "tao2.toml"


def test_without_a_project_the_bundled_data_is_used(tmp_path, monkeypatch):
    bundled = _bundled("cues")
    (tmp_path / "cues").mkdir()  # a cues/ folder alone does not make a project
    monkeypatch.chdir(tmp_path)
    assert cuesheet.bundled_path().parent == bundled != tmp_path / "cues"


def test_a_run_names_the_edited_cue_sheet_it_used(tmp_path, soundscape_cli):
    shutil.copytree(_bundled("cues"), tmp_path / "cues")
    (tmp_path / "soundscape.toml").write_text("")
    code, err = soundscape_cli("midi", "--from", "s09", "--to", "s09", "-o", "a.mid",
                               cwd=tmp_path)
    assert code == 0, err
    data = [line for line in err.splitlines() if line.startswith("data: ")]
    assert data == [f"data: cue sheet {tmp_path / 'cues' / 'dashe.toml'}; instruments "
                    f"{_bundled('instruments')}; overrides none"]


def test_a_saved_performance_is_used_instead_of_sequencing(tmp_path, soundscape_cli):
    from soundscape.output import midi

    code, err = soundscape_cli("sequence", "--from", "s17", "--to", "s18", "-o", "p.json",
                               "--plot", "p.png", cwd=tmp_path)
    assert code == 0, err
    code, err = soundscape_cli("midi", "--performance", "p.json", "--from", "樂賓",
                               "-o", "cut.mid", cwd=tmp_path)
    assert code == 0, err
    assert f"data: performance p.json; instruments {_bundled('instruments')}" in err
    assert "sequencing" not in err
    code, err = soundscape_cli("midi", "--from", "s18", "--to", "s18", "-o", "direct.mid",
                               cwd=tmp_path)
    assert code == 0, err
    cut, direct = (midi.read_events(tmp_path / name) for name in ("cut.mid", "direct.mid"))
    assert cut and [(n.time, n.key) for n in cut] == [(n.time, n.key) for n in direct]


def test_a_saved_performance_refuses_sequencing_options(tmp_path, soundscape_cli):
    code, err = soundscape_cli("sequence", "--from", "s09", "--to", "s09", "-o", "p.json",
                               "--plot", "p.png", cwd=tmp_path)
    assert code == 0, err
    code, err = soundscape_cli("midi", "--performance", "p.json", "--zhong", "stanza",
                               "-o", "x.mid", cwd=tmp_path)
    assert code == 2 and "--performance p.json is already sequenced: drop --zhong" in err


def test_the_project_cites_only_what_it_carries():
    """No tracked file points at notes outside the repository, and every
    ``docs/sources.md LABEL`` cited names a section that docs/sources.md has."""
    import re
    import subprocess
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    outside = [name + ".md" for name in ("musicology", "acoustics")] + ["/wo" + "rk/",
                                                                       "../sha" + "red"]
    found = subprocess.run(["git", "grep", "-n", *(f"-e{o}" for o in outside), "--", ".",
                            ":!.ci"], cwd=root, capture_output=True, text=True).stdout
    assert found == ""
    sources = (root / "docs" / "sources.md").read_text(encoding="utf-8")
    cited = subprocess.run(["git", "grep", "-h", "-o", "-E",
                            r"docs/sources\.md [ATM][0-9.]+(–[0-9.]+)?(, [ATM][0-9.]+)*"],
                           cwd=root, capture_output=True, text=True).stdout.split("\n")
    labels = {label.split("–")[0].rstrip(".") for line in cited if line
              for label in line.removeprefix("docs/sources.md ").split(", ")}
    assert len(labels) > 20
    missing = [label for label in sorted(labels)
               if not re.search(rf"(\*\*|### ){re.escape(label)}[ .*]", sources)]
    assert missing == []


def test_derive_outside_a_project_makes_one_that_the_other_verbs_read(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from soundscape.cli import cli

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["derive"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "soundscape.toml").is_file()
    assert resources.project_dir() == tmp_path
    assert cuesheet.bundled_path() == tmp_path / "cues" / "dashe.toml"


def test_stages_are_plain_lines_when_stderr_is_not_a_terminal(capsys):
    from soundscape.cli._common import stage

    with stage("laying out"):
        print("work")
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "work\n" and lines[0] == "laying out …"
    assert lines[1].startswith("laying out: done in ") and lines[1].endswith(" s")


def test_a_stage_that_fails_on_a_terminal_says_it_stopped_not_done(capsys, monkeypatch):
    """On a terminal the stage's clock line ended "done in N s" above the error that
    stopped it."""
    import sys

    import pytest

    from soundscape.cli._common import stage

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with pytest.raises(ValueError), stage("sequencing the rite"):
        raise ValueError("bad quote")
    last = capsys.readouterr().err.split("\r")[-1]
    assert last.startswith("sequencing the rite: stopped after ") and last.endswith(" s\n")
    with stage("laying out"):
        pass
    assert capsys.readouterr().err.split("\r")[-1].startswith("laying out: done in ")
