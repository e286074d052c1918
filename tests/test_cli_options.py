"""One meaning per option (issue 29, item 11): the cue sheet is CUES or --cues FILE in every
verb that sequences; --rite ID is a bundled rite everywhere, kit included (its old --rite
FILE still works, with a warning)."""

import pytest
from click.testing import CliRunner

from soundscape.resources import bundled_dir


class _Stop(Exception):
    """Raised instead of sequencing: the test needs only what the verb asked for."""


@pytest.fixture
def asked(monkeypatch):
    """What a verb asked to sequence: the cue sheet given to Sequencing.perform."""
    from soundscape.cli._common import Sequencing
    from soundscape.site.courtyard import load_site

    seen = {}

    def perform(self, cues, **_):
        seen["cues"] = cues
        raise _Stop
    monkeypatch.setattr(Sequencing, "perform", perform)
    monkeypatch.setattr(Sequencing, "site", lambda self, cues: load_site())
    return seen


def _invoke(verb: str, *args: str):
    from soundscape.cli import cli

    return CliRunner().invoke(cli, [verb, *args])


@pytest.mark.parametrize("verb", ["sequence", "midi", "sections", "archery"])
def test_every_sequencing_verb_takes_the_cue_sheet_as_cues_or_positional(verb, asked,
                                                                        tmp_path):
    sheet = bundled_dir("cues") / "yan.toml"
    for args in ([str(sheet)], ["--cues", str(sheet)]):
        asked.clear()
        out = {"midi": ["-o", str(tmp_path / "x.mid")], "sections": [],
               "sequence": ["-o", str(tmp_path / "x.json")]}.get(
            verb, ["-o", str(tmp_path / "x")])
        result = _invoke(verb, *args, *out)
        assert isinstance(result.exception, _Stop), result.output
        assert asked["cues"] == sheet
    other = bundled_dir("cues") / "xiangshe.toml"
    result = _invoke(verb, str(sheet), "--cues", str(other))
    assert result.exit_code == 2 and "give the cue sheet once" in result.output


def test_score_takes_the_rites_cue_sheet_as_cues(asked):
    sheet = bundled_dir("cues") / "yan.toml"
    result = _invoke("score", "--performance", "--cues", str(sheet))
    assert isinstance(result.exception, _Stop) and asked["cues"] == sheet
    assert _invoke("score", "--cues", str(sheet)).exit_code == 2  # a piece takes no sheet


@pytest.fixture
def kit_asked(monkeypatch):
    """What kit asked to sequence, and on which site."""
    import soundscape.sequence.planner as planner

    seen = {}

    def perform_from_file(cues, *, seed, site):
        seen.update(cues=cues, site=site.name)
        raise _Stop
    monkeypatch.setattr(planner, "perform_from_file", perform_from_file)
    return seen


def test_kit_takes_cues_file_and_rite_id_like_the_other_verbs(kit_asked):
    from soundscape.site.courtyard import load_site

    sheet = bundled_dir("cues") / "xiangshe.toml"
    for args in (["--cues", str(sheet)], ["--rite", "xiangshe"]):
        kit_asked.clear()
        result = _invoke("kit", *args, "--programme", "rite")
        assert isinstance(result.exception, _Stop), result.output
        assert kit_asked == {"cues": sheet, "site": load_site(rite="xiangshe").name}  # its own
    result = _invoke("kit", "--rite", "nowhere")
    assert "rite 'nowhere' unknown; known: dashe" in str(result.exception)


def test_kit_rite_file_still_works_with_a_deprecation_warning(kit_asked):
    sheet = bundled_dir("cues") / "dashe.toml"
    result = _invoke("kit", "--rite", str(sheet))  # click 8.2: stderr kept apart
    assert isinstance(result.exception, _Stop) and kit_asked["cues"] == sheet
    assert "kit --rite FILE is deprecated: give the cue sheet as --cues" in result.stderr
