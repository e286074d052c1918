"""The tuning on every verb that sounds or notates pitch: ``--temperament`` (三分損益 or
equal) and ``--huangzhong`` (Hz or a preset) reach the sequencer, are checked as options,
key the cached Performance, and are refused beside a saved Performance."""

import json
import math
import sys

import pytest
from click.testing import CliRunner

from soundscape.music.tuning import HUANGZHONG_HZ


class _Stop(Exception):
    """Raised instead of sequencing: the test needs only the tuning asked for."""


@pytest.fixture
def sequenced_in(monkeypatch, tmp_path):
    """The tuning each sequencing was asked for (the cache kept apart in ``tmp_path``)."""
    from soundscape.sequence import planner

    monkeypatch.setenv("SOUNDSCAPE_CACHE_DIR", str(tmp_path / "cache"))
    seen = []

    def perform_from_file(cues, *, tuning=None, **_):
        seen.append(tuning)
        raise _Stop
    monkeypatch.setattr(planner, "perform_from_file", perform_from_file)
    return seen


def _invoke(*args: str):
    from soundscape.cli import cli

    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("verb, out", [("render", "x.wav"), ("play", "x.wav"),
                                       ("midi", "x.mid"), ("sequence", "x.json"),
                                       ("score", "x.musicxml")])
def test_every_verb_that_sounds_pitch_sequences_in_the_tuning_asked(verb, out, sequenced_in,
                                                                     tmp_path):
    rite = ["--performance"] if verb == "score" else []
    result = _invoke(verb, *rite, "--from", "s18", "--to", "s18", "--temperament", "equal",
                     "--huangzhong", "440", "-o", str(tmp_path / out))
    assert isinstance(result.exception, _Stop), result.output
    (tuning,) = sequenced_in
    assert (tuning.name, tuning.huangzhong_hz) == ("十二平均律", 440.0)
    sequenced_in.clear()
    result = _invoke(verb, *rite, "--from", "s18", "--to", "s18", "-o", str(tmp_path / out))
    assert isinstance(result.exception, _Stop), result.output
    (tuning,) = sequenced_in  # the default: 三分損益 on C4
    assert (tuning.name, tuning.huangzhong_hz) == ("三分損益", HUANGZHONG_HZ["convention"])


def test_a_rite_sequenced_in_equal_temperament_on_a_preset_sounds_every_note_on_its_grid(
        tmp_path):
    out = tmp_path / "s18.json"
    result = _invoke("sequence", "--from", "s18", "--to", "s18", "--temperament", "equal",
                     "--huangzhong", "zeng", "-o", str(out))
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text(encoding="utf-8"))
    zeng = HUANGZHONG_HZ["zeng"]
    assert (saved["info"]["tuning"], saved["info"]["huangzhong_hz"]) == ("十二平均律", zeng)
    semitones = [12 * math.log2(e["pitch"]["hz"] / zeng) for e in saved["events"]
                 if e.get("pitch")]
    assert len(semitones) > 1000
    assert max(abs(s - round(s)) for s in semitones) < 1e-9
    assert {round(s) % 12 for s in semitones} >= {0, 2, 4, 7, 9}  # 宮 商 角 徵 羽 on 黃鍾


@pytest.mark.parametrize("option, value, said", [
    ("--huangzhong", "700", "accepted: Hz from 100 to 600, or a preset: convention"),
    ("--huangzhong", "nan", "accepted: Hz from 100 to 600"),
    ("--huangzhong", "9" * 5000, "accepted: Hz from 100 to 600"),
    ("--huangzhong", "middle-c", "accepted: Hz from 100 to 600, or a preset"),
    ("--temperament", "just", "'just' is not one of 'sanfen', 'equal'"),
])
def test_a_tuning_out_of_range_is_refused_in_one_line(option, value, said, tmp_path, capsys,
                                                      monkeypatch):
    from soundscape.cli import main

    monkeypatch.setattr(sys, "argv", ["soundscape", "midi", option, value,
                                      "-o", str(tmp_path / "x.mid")])
    with pytest.raises(SystemExit) as stop:
        main()
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and said in line and len(line) < 400, line
    assert not (tmp_path / "x.mid").exists()


def test_a_saved_performance_keeps_its_own_tuning(tmp_path):
    saved = tmp_path / "p.json"
    assert _invoke("sequence", "--from", "s05", "--to", "s05", "-o", str(saved)).exit_code == 0
    result = _invoke("midi", "--performance", str(saved), "--huangzhong", "zeng",
                     "-o", str(tmp_path / "x.mid"))
    assert result.exit_code == 2 and "is already sequenced: drop --huangzhong" in result.output


def test_the_cached_performance_is_kept_apart_per_tuning(monkeypatch, tmp_path):
    from soundscape.cli._common import Sequencing

    monkeypatch.setenv("SOUNDSCAPE_CACHE_DIR", str(tmp_path))
    made = {}
    for temperament in ("sanfen", "equal", "sanfen"):
        asked = Sequencing("s05", "s05", 0, None, None, None, None, None,
                           temperament=temperament, huangzhong="zeng")
        performance, cached = asked.perform_cached(None)
        assert performance.info.tuning == {"sanfen": "三分損益", "equal": "十二平均律"}[temperament]
        made.setdefault(temperament, []).append(cached)
    assert made == {"sanfen": [False, True], "equal": [False]}


def test_a_pieces_score_takes_the_tuning(tmp_path):
    """`score 鹿鳴 --huangzhong 270` was refused as an option that shapes the rite."""
    out = tmp_path / "luming.musicxml"
    result = _invoke("score", "luming", "--temperament", "equal", "--huangzhong", "270",
                     "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "十二平均律" in out.read_text(encoding="utf-8")
    assert _invoke("score", "luming", "--seed", "3", "-o", str(out)).exit_code == 2


def test_scala_takes_the_same_tuning_options(tmp_path):
    """`scala --huangzhong` took any Hz from 8 to 20 000 and parsed it on its own; it takes
    the verbs' `--huangzhong` and `--temperament` (its `--equal` kept)."""
    for args in (["--temperament", "equal"], ["--equal"]):
        assert _invoke("scala", *args, "--huangzhong", "zeng",
                       "-o", str(tmp_path / "t")).exit_code == 0
        lines = [line for line in (tmp_path / "t.scl").read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.startswith("!")][2:]  # a description, a count
        assert [float(line.split()[0]) for line in lines[:3]] == [100.0, 200.0, 300.0]
    assert _invoke("scala", "--huangzhong", "1000", "-o", str(tmp_path / "u")).exit_code == 2
    assert not (tmp_path / "u.scl").exists()
