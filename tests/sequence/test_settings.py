"""data/sequence.toml as one typed, checked object (issue 29, item 10): a bad value is
refused at load, naming the file and the key, not met later as a KeyError."""

import re

import pytest

from soundscape.errors import CueSheetError
from soundscape.resources import data_dir
from soundscape.sequence.settings import RoundSpec, load_settings


def test_the_bundled_settings_are_typed():
    settings = load_settings()
    assert settings.preparation == {"dashe": "羮定"}
    assert [r.number for r in settings.rounds] == [0, 1, 2, 3]
    assert settings.rounds[2] == RoundSpec(2, "乃射", "衆皆繼射", "不貫不釋", "視算",
                                           split_after="三耦卒射", split_at_pair="gong")
    assert {m.phase for m in settings.gong_moves} == {"zuo", "ge"}
    assert settings.timing.voice_walk_call_s == 3.0 and settings.speech.hz == 118.0
    assert settings.singers == "tenor"


def _edited(tmp_path, old, new):
    text = (data_dir() / "sequence.toml").read_text(encoding="utf-8")
    assert re.search(old, text, flags=re.M), old
    path = tmp_path / "sequence.toml"
    path.write_text(re.sub(old, new, text, count=1, flags=re.M), encoding="utf-8")
    return path


@pytest.mark.parametrize(("old", "new", "message"), [
    (r"^after_round_s = 4.0", "after_round_s = -4.0",
     r"timing: after_round_s=-4.0 must be a finite number ≥ 0"),
    (r"^voice_call_s = 1.2", "voice_call_s = 'long'", r"timing: voice_call_s='long' must be"),
    (r"^voice_call_s = 1.2", "", r"timing: no 'voice_call_s'"),
    (r"^phase = \"zuo\"", "phase = \"roof\"",
     r"gong_move\[0\]: phase='roof' must be one of the accepted values \(accepted: ge, guan"),
    (r"^number = 3", "number = 9", r"round\[3\]: number=9 must be one of the accepted"),
    (r"^until = \"三耦卒射\"", "untill = \"三耦卒射\"",
     r"round\[1\]: untill='三耦卒射' must be a known key"),
    (r"^split_after = .*", "", r"round\[2\]: split_after and split_at_pair go together"),
    (r"^dashe = \"羮定\"", "dashe = 1", r"preparation: dashe=1 must be a string"),
    (r"^dashe = \"羮定\"", "'da she' = \"羮定\"", r"preparation: rite id='da she'"),
    (r"^hz = 118.0", "hz = 1e400", r"speech: hz=inf must be a finite number"),
    (r"^singers = \"tenor\"", "singers = 3", r"register.singers=3 must be a string"),
])
def test_a_bad_settings_file_is_refused_at_load(tmp_path, old, new, message):
    path = _edited(tmp_path, old, new)
    with pytest.raises(CueSheetError, match=message) as caught:
        load_settings(path)
    assert str(caught.value).startswith(str(path)), caught.value
