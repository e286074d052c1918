"""Finding your way in the kit: `kit --list`, and `kit` without --programme building only
the short programmes, saying which long ones it left out and how to ask for them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from soundscape import cli
from soundscape.kit import build as kit_build
from soundscape.kit.build import build_kit, lengths
from soundscape.kit.programmes import load_programmes
from soundscape.site.courtyard import load_site
from tests.kit.scenes import rite
from tests.kit.test_build import PROGRAMMES


def test_lengths_are_the_loops_lengths(tmp_path):
    (tmp_path / "p.toml").write_text(PROGRAMMES, encoding="utf-8")
    programmes = load_programmes(tmp_path / "p.toml", places=set(load_site().places))
    found = {p.id: length for p, length in lengths(programmes, rite())}
    # "music" opens a second before 肆夏's stroke at 4 s and ends with s2 at 8 s
    assert found == {"all": rite().sections[-1].end, "music": 5.0}


def test_without_programme_ids_the_long_ones_are_left_out_and_named(tmp_path, monkeypatch):
    monkeypatch.setattr(kit_build, "LONG_S", 6.0)  # "all" (8 s) is long, "music" (5 s) not
    (tmp_path / "p.toml").write_text(PROGRAMMES, encoding="utf-8")
    said: list[str] = []
    manifest = build_kit(tmp_path / "kit", rite=rite(), site=load_site(),
                         programme_file=tmp_path / "p.toml", executor="serial",
                         say=said.append)
    assert [p["id"] for p in json.loads(manifest.read_text())["programmes"]] == ["music"]
    note = next(line for line in said if line.startswith("left out"))
    assert "all (" in note and "--programme ID" in note
    asked = build_kit(tmp_path / "kit2", rite=rite(), site=load_site(),
                      programme_file=tmp_path / "p.toml", executor="serial",
                      programme_ids=("all",))
    assert [p["id"] for p in json.loads(asked.read_text())["programmes"]] == ["all"]


def test_kit_list_marks_the_whole_rite_long_lists_each_music_cue_and_builds_nothing(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(cli.cli, ["kit", "--list"])
    assert shown.exit_code == 0, shown.output
    rows = {line.split()[0]: line for line in shown.stdout.splitlines()[1:]}
    assert "long: only with --programme" in rows["rite"]
    assert "long" not in rows["music"]
    assert {"cue.luming", "cue.lishou", "cue.gaixia"} <= set(rows)
    assert not (tmp_path / "output").exists()
