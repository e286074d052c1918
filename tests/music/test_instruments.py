"""Instrument files: bundled set, validation errors that name file and key, model dispatch."""

from __future__ import annotations

import importlib.machinery
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from soundscape.errors import InstrumentError
from soundscape.music.instruments import Instrument, list_instruments, load_instrument
from soundscape.sound.synth import params_of, render_note, without_infrasound

ARCHITECTURE_IDS = {"bianzhong", "bo", "bianqing", "jiangu", "pi", "tao", "se", "guan", "sheng",
                    "voice"}
ARTICULATIONS = {"bianzhong": {"A", "B"}, "bo": {"A", "B"}, "jiangu": {"strike"},
                 "pi": {"strike"}, "tao": {"shake"}, "se": {"pluck"}, "guan": {"blow"},
                 "sheng": {"blow"}, "voice": {"sing", "call"}}


def test_bundled_instruments_are_the_architecture_ids():
    assert set(list_instruments()) >= ARCHITECTURE_IDS


@pytest.mark.parametrize("instrument_id", sorted(ARCHITECTURE_IDS))
def test_each_bundled_file_loads_and_is_sourced(instrument_id):
    instrument = load_instrument(instrument_id)
    assert isinstance(instrument, Instrument)
    assert instrument.id == instrument_id and instrument.path.name == f"{instrument_id}.toml"
    assert ARTICULATIONS.get(instrument_id, set()) <= set(instrument.articulations)
    assert instrument.sources and 40 < instrument.loudness_db < 130
    assert instrument.pitches or instrument.range_hz or instrument.default_hz
    with pytest.raises(TypeError):
        params_of(instrument)["x"] = 1  # read-only


def write(tmp_path: Path, text: str, name: str = "test_drum") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


DRUM = (Path(__file__).resolve().parents[2] / "instruments" / "pi.toml").read_text(
    encoding="utf-8").replace('id = "pi"', 'id = "test_drum"')


@pytest.mark.parametrize(
    ("change", "message"),
    [(("ratio = 1.593", "ratio = -1.0"),
      r"params.modes\[1\].ratio=-1.0 must be a finite number ≥ 0.01 and ≤ 100"),
     # a missing key is said to be missing, not shown as =None
     (('model = "membrane"\n', ''), r"lacks key 'model' \(an instrument file needs: id, name, "),
     (('roman = "pi, small drum (shuopi, yingpi)"\n', ''), r"lacks key 'roman' "),
     (('id = "test_drum"\n', ''), r"lacks key 'id' \(an instrument file needs: id, "),
     (("t60_s = 0.45", "t60_s = \"long\""), r"params.t60_s='long' must be a finite number"),
     (("t60_s = 0.45", "t60_s = nan"), r"params.t60_s=nan must be a finite number"),
     (("loudness_db = 94.0", "loudness_db = 300"), r"loudness_db=300 must be a finite number > 0"),
     (("loudness_db = 94.0", 'loudness_db = 94.0\nlevel = "rms"'),
      r"level='rms' must be one of the accepted values \(accepted: peak, fast\)"),
     (('family = "drum"', 'family = "kettle"'), r"family='kettle' must be one of the accepted "
                                                r"values \(accepted: bell, chime"),
     (('id = "test_drum"', 'id = "other"'), r"id='other' must be the file name 'test_drum'"),
     (('range_hz = [120.0, 320.0]', 'range_hz = [320.0, 120.0]'), r"range_hz=\[320.0, 120.0\]"),
     (('range_hz = [120.0, 320.0]', 'range_hz = [120.0, 1e308]'),
      r"range_hz\[1\]=1e\+308 must be a finite number ≥ 1 and ≤ 24000 Hz"),
     (('range_hz = [120.0, 320.0]', 'pitches = 1e308'), r"pitches=1e\+308 must be a list"),
     (('default_hz = 200.0', 'default_hz = 9000.0'),
      r"default_hz=9000.0 must be within range_hz \[120, 320\] Hz"),
     # a band upside down played as if its ends were swapped
     (('thud_low_hz = 150.0', 'thud_low_hz = 9000.0'), r"params.thud_low_hz=9000.0 must be below "
                                          r"params.thud_high_hz="),
     (('articulations = ["strike", "rim"]', 'articulations = ["strike", "strike"]'),
      r"articulations\[1\]='strike' must be an articulation not already listed"),
     (('range_hz = [120.0, 320.0]',
       'pitches = ["黃鍾", "大呂", "黄钟"]\nrange_hz = [120.0, 320.0]'),
      r"pitches\[2\]='黄钟' must be a 律 not already on the rack \(pitches\[0\] is 黃鍾\)"),
     (('articulations = ["strike", "rim"]', 'articulations = []'),
      r"articulations=\[\] must be a list of 1 to 16 items"),
     (('articulations = ["strike", "rim"]', 'articulations = ["strike", "bow"]'),
      r"articulations='bow' must be an articulation of model 'membrane' \(accepted: strike, "),
     (('articulations = ["strike", "rim"]', 'articulations = ["shake"]'),
      r"params.pellet_rate_hz is missing; it is required when articulation 'shake' is listed"),
     (("thud_s", "thud_seconds"), r"params.thud_s is missing \(required by the model\)"),
     # a misspelt key is named with the keys accepted (it was ignored, and its sound with it)
     (("t60_s = 0.45", "t60_s = 0.45\nbrightnes = 4.0"),
      r"params.brightnes is not a key of this model; accepted: .*t60_s"),
     (('family = "drum"', 'family = "drum"\nfamilly = "bell"'),
      r"familly='bell' must be a key of an instrument file \(accepted: id, name, roman, "),
     (("ratio = 1.593", "ratio = 1.593\ngain = 1"), r"params.modes\[1\].gain is not a key of "
                                                   r"this model; accepted: ratio, ")],
)
def test_bad_values_name_the_file_and_key(tmp_path, change, message):
    old, new = change
    assert old in DRUM
    path = write(tmp_path, DRUM.replace(old, new))
    with pytest.raises(InstrumentError, match=f"test_drum.toml: {message}"):
        load_instrument(path)


def test_one_amplitude_a_mode(tmp_path):
    """An impact's ``amps`` gives each of its ``modes`` one amplitude: one short would have
    failed in numpy at render time, with no file or key named."""
    gear = (Path(__file__).resolve().parents[2] / "instruments" / "gear.toml").read_text(
        encoding="utf-8").replace('id = "gear"', 'id = "test_gear"')
    old = "amps = [0.13, 0.55, 1.0]"
    assert old in gear
    path = write(tmp_path, gear.replace(old, "amps = [0.13, 1.0]"), name="test_gear")
    with pytest.raises(InstrumentError, match=r"test_gear.toml: params.set.amps=\[0.13, 1.0\] "
                                              r"must be 3 numbers, one for each of "
                                              r"params.set.modes"):
        load_instrument(path)


@pytest.mark.parametrize("named", ["../x", "/etc/passwd", "cues/dashe.toml", "pi.toml"])
def test_a_name_is_an_id_never_a_path(named):
    """`audition ../x` read whatever file the name led to (docs/cuesheet.md: a name on the
    command line is looked up among the known ones before any path is built)."""
    with pytest.raises(InstrumentError, match=r"unknown; bundled: .*bianzhong"):
        load_instrument(named)


def test_unknown_id_and_bad_toml(tmp_path):
    with pytest.raises(InstrumentError, match=r"instrument 'qin' unknown; bundled: .*bianzhong"):
        load_instrument("qin")
    with pytest.raises(InstrumentError, match="not valid TOML"):
        load_instrument(write(tmp_path, "id = ", name="broken"))
    with pytest.raises(InstrumentError, match=r"pitches\[1\]='清黃鼓' must be a 律 name"):
        load_instrument(write(tmp_path, _with_pitches(DRUM)))


def _with_pitches(text: str) -> str:
    head, params = text.split("[params]", 1)
    return head + 'pitches = ["黃鍾", "清黃鼓"]\n[params]' + params


def test_a_new_model_is_a_new_module(tmp_path, monkeypatch):
    """No registry: a module soundscape.sound.synth.<name> plus a file naming it is enough."""
    module = types.ModuleType("soundscape.sound.synth.testclick")
    module.__spec__ = importlib.machinery.ModuleSpec("soundscape.sound.synth.testclick", None)

    def render(params, *, hz, velocity, duration, articulation, sample_rate, rng, lyric=None):
        out = np.zeros(round(duration * sample_rate))
        out[0] = velocity * params["level"]
        return out

    module.render = render
    monkeypatch.setitem(sys.modules, "soundscape.sound.synth.testclick", module)
    path = write(tmp_path, """
id = "clicker"
name = "擊"
roman = "clicker"
family = "other"
model = "testclick"
articulations = ["hit"]
loudness_db = 70
default_hz = 1000
sources = ["test"]
[params]
level = 0.5
""", name="clicker")
    audio = render_note(load_instrument(path), hz=None, velocity=0.8, duration=0.01,
                        articulation="hit", sample_rate=1000, rng=np.random.default_rng(0))
    # the model's output as it gave it, high-passed at 20 Hz (no note carries infrasound)
    assert audio.tolist() == without_infrasound(np.array([0.4] + [0.0] * 9), 1000).tolist()


BELLS = (Path(__file__).resolve().parents[2] / "instruments" / "bianzhong.toml").read_text(
    encoding="utf-8").replace('id = "bianzhong"', 'id = "test_bells"') \
    + '\n[params.b_ratios]\n"林鍾" = 1.25\n'  # a bell measured as a ratio


@pytest.mark.parametrize(
    ("change", "message"),
    [(('"林鍾" = 1.25', '"林鍾鼓" = 1.25'), r"params.b_ratios.林鍾鼓 is not a pitch name"),
     (('"林鍾" = 1.25', '"林鍾" = 2.5'), r"params.b_ratios.林鍾=2.5 must be a finite number ≥ 1 "
                                        r"and ≤ 2"),
     (('"林鍾" = 1.25', '"林鍾" = "major"'), r"params.b_ratios.林鍾='major' must be a finite")],
)
def test_bad_b_ratios_name_the_file_and_key(tmp_path, change, message):
    old, new = change
    assert old in BELLS
    path = write(tmp_path, BELLS.replace(old, new), name="test_bells")
    with pytest.raises(InstrumentError, match=f"test_bells.toml: {message}"):
        load_instrument(path)


def test_b_ratios_need_a_b_tone(tmp_path):
    chimes = (Path(__file__).resolve().parents[2] / "instruments" / "bianqing.toml").read_text(
        encoding="utf-8").replace('id = "bianqing"', 'id = "test_chimes"')
    path = write(tmp_path, chimes + '\n[params.b_ratios]\n"黃鍾" = 1.25\n', name="test_chimes")
    with pytest.raises(InstrumentError, match=r"params\.b_ratios is given but no row of "
                                              r"partials has family = 'B'"):
        load_instrument(path)


def test_a_pitch_name_that_names_no_pitch_is_refused():
    with pytest.raises(InstrumentError, match="bianzhong: pitch '宮'"):
        render_note(load_instrument("bianzhong"), hz=261.6, velocity=0.8, duration=0.1,
                    articulation="A", sample_rate=8000, rng=np.random.default_rng(0), pitch="宮")


VOICE = (Path(__file__).resolve().parents[2] / "instruments" / "voice.toml").read_text(
    encoding="utf-8").replace('id = "voice"', 'id = "test_voice"')
TARGET = (Path(__file__).resolve().parents[2] / "instruments" / "target.toml").read_text(
    encoding="utf-8").replace('id = "target"', 'id = "test_target"')


def test_vowels_and_tables_of_the_wrong_shape_are_refused_at_load(tmp_path):
    assert "[params.vowels]\na = [" in VOICE
    empty = VOICE.replace("[params.vowels]\na = [", "[params.vowels]\na = []\nold_a = [", 1)
    with pytest.raises(InstrumentError, match=r"test_voice.toml: params.vowels.a=\[\] must be "
                                              "a list of 5 to 5 items"):
        load_instrument(write(tmp_path, empty, name="test_voice"))
    listed = TARGET.replace("[params.leather]", "[params.skin]") + "\n[params]\nleather = []\n"
    with pytest.raises(InstrumentError, match=r"test_target.toml: params.leather=\[\] must be "
                                              "a table"):
        load_instrument(write(tmp_path, listed, name="test_target"))


def test_an_articulation_without_its_table_is_refused_at_load(tmp_path):
    assert 'articulations = ["leather", "cloth", "ground"]' in TARGET
    extra = TARGET.replace('articulations = ["leather", "cloth", "ground"]',
                           'articulations = ["leather", "cloth", "ground", "wood"]')
    with pytest.raises(InstrumentError, match=r"test_target.toml: params.wood=None must be a "
                                              "table"):
        load_instrument(write(tmp_path, extra, name="test_target"))


def test_knowing_the_pitches_imports_no_sound_code():
    """Loading a rack for its pitches imports neither the synth models nor scipy (issue 12)."""
    code = ("import sys; from soundscape.music.instruments import load_instrument; "
            "i = load_instrument('bianzhong'); assert i.pitches; "
            "bad = sorted(m for m in sys.modules if m.startswith(('scipy', 'soundscape.sound'))); "
            "print(bad)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_model_without_a_module_is_named_with_its_file_on_first_use(tmp_path):
    """An instrument is checked without importing the sound code; its model's module is
    looked up by the synth, whose error names the file and the model."""
    kazoo = load_instrument(write(tmp_path, DRUM.replace('model = "membrane"',
                                                         'model = "kazoo"')))
    with pytest.raises(InstrumentError, match=r"test_drum.toml: model = 'kazoo': model 'kazoo' "
                                              r"has no module soundscape.sound.synth.kazoo; "
                                              r"accepted: ambience, .*membrane, modal, "):
        params_of(kazoo)
    klatt = load_instrument(write(tmp_path, DRUM.replace('model = "membrane"', 'model = "klatt"')))
    with pytest.raises(InstrumentError, match=r"klatt has no render function; accepted: .*modal"):
        params_of(klatt)  # a helper module is no model


def test_the_model_checks_again_before_rendering(tmp_path):
    """What the schema cannot say, the model's validate says on first use, naming the file."""
    sheng = (Path(__file__).resolve().parents[2] / "instruments" / "sheng.toml").read_text(
        encoding="utf-8").replace('id = "sheng"', 'id = "test_sheng"')
    assert "chord = [1.5, 2.0]" in sheng
    assert params_of(load_instrument(write(tmp_path, sheng, "test_sheng")))["chord"] == (1.5,
                                                                                     2.0)
    # the schema's range [1, 8] holds 1.0; the model refuses a chord pipe on the note itself
    loose = load_instrument(write(tmp_path, sheng.replace("chord = [1.5, 2.0]",
                                                          "chord = [1.0, 2.0]"), "test_sheng"))
    with pytest.raises(InstrumentError, match=r"test_sheng.toml: params.chord = \[1.0, 2.0\] "
                                              r"must be a list of ratios in \(1, 8\]"):
        _ = params_of(loose)
