"""Tests for soundscape.music.tuning: 三分損益, equal and cents tunings, 旋宮, 工尺, Hz and MIDI."""

from __future__ import annotations

import itertools
import math
import tomllib
from fractions import Fraction

import pytest

from soundscape.errors import TuningError
from soundscape.music.tuning import (
    HUANGZHONG_HZ,
    LU,
    Tuning,
    canonical_name,
    default_tuning,
    to_gongche,
)
from soundscape.resources import data_dir

# Exact 三分損益 ratios to 黃鍾 (docs/sources.md M4.2), written out independently of the code.
PYTHAGOREAN = {
    "黃鍾": Fraction(1), "大呂": Fraction(2187, 2048), "太簇": Fraction(9, 8),
    "夾鍾": Fraction(19683, 16384), "姑洗": Fraction(81, 64), "仲呂": Fraction(177147, 131072),
    "蕤賓": Fraction(729, 512), "林鍾": Fraction(3, 2), "夷則": Fraction(6561, 4096),
    "南呂": Fraction(27, 16), "無射": Fraction(59049, 32768), "應鍾": Fraction(243, 128),
}


def cents(a: float, b: float) -> float:
    return 1200.0 * math.log2(a / b)


def test_lu_order_matches_the_data_file():
    with (data_dir() / "tuning.toml").open("rb") as handle:
        table = tomllib.load(handle)
    assert tuple(row["name"] for row in table["lu"]) == LU


@pytest.mark.parametrize("lu", LU)
def test_sanfen_sunyi_gives_the_pythagorean_ratios(lu):
    tuning = Tuning.sanfen_sunyi(huangzhong_hz=200.0)
    assert tuning.pitch(lu).hz == pytest.approx(200.0 * float(PYTHAGOREAN[lu]), rel=1e-12)


def test_default_is_sanfen_sunyi_with_huangzhong_c4():
    tuning = default_tuning()
    assert tuning.name == "三分損益"
    assert tuning.pitch("黃鍾").nearest_midi() == (60, pytest.approx(0.0, abs=1e-9))
    # 林鍾 is a pure fifth, 2 cents sharp of 12-TET G4.
    assert tuning.pitch("林鍾").nearest_midi()[1] == pytest.approx(1.955, abs=1e-3)


def test_presets_named_in_the_brief():
    assert Tuning.sanfen_sunyi("qing").pitch("黃鍾").nearest_midi() == (62, pytest.approx(0.0))
    zeng = Tuning.sanfen_sunyi("zeng").pitch("黃鍾").nearest_midi()
    assert zeng[0] == 56 and zeng[1] == pytest.approx(-31.6, abs=0.01)
    assert set(HUANGZHONG_HZ.keys()) == {"convention", "zeng", "qing"}
    with pytest.raises(TuningError, match="preset 'tang' unknown"):
        Tuning.sanfen_sunyi("tang")


def test_equal_temperament_semitones():
    tuning = Tuning.equal(huangzhong_hz=261.6255653005986)
    for i, lu in enumerate(LU):
        assert tuning.pitch(lu).midi == pytest.approx(60 + i, abs=1e-9)


def test_from_cents_and_its_validation():
    table = [0, 90, 204, 294, 408, 498, 612, 702, 792, 906, 996, 1110]
    tuning = Tuning.from_cents(table, 100.0, name="test")
    assert cents(tuning.pitch("夷則").hz, 100.0) == pytest.approx(792.0)
    with pytest.raises(TuningError, match="rise strictly"):
        Tuning.from_cents([0, 90, 80, *table[3:]])
    with pytest.raises(TuningError, match="12 finite numbers"):
        Tuning.from_cents(table[:11])
    with pytest.raises(TuningError, match="huangzhong_hz=-5"):
        Tuning.from_cents(table, -5)


@pytest.mark.parametrize(
    ("name", "lu", "octave"),
    [("清黃鍾", "黃鍾", 1), ("倍林鍾", "林鍾", -1), ("清清太簇", "太簇", 2), ("黄钟", "黃鍾", 0),
     ("黃鐘", "黃鍾", 0), ("大吕", "大呂", 0), ("太蔟", "太簇", 0), ("中呂", "仲呂", 0),
     ("蕤賔", "蕤賓", 0), ("清太", "太簇", 1), ("應", "應鍾", 0), ("nanlu", "南呂", 0),
     ("huangzhong", "黃鍾", 0), ("无射", "無射", 0)],
)
def test_names_variants_and_octave_prefixes(name, lu, octave):
    tuning = default_tuning()
    found = tuning.pitch(name)
    assert (found.lu, found.octave) == (lu, octave)
    assert found.hz == pytest.approx(tuning.pitch(lu).hz * 2.0**octave)


def test_pitch_name_round_trip_for_every_lu_and_octave():
    tuning = default_tuning()
    for octave in (-2, -1, 0, 1, 2):
        for lu in LU:
            pitch = tuning.pitch(lu)
            moved = tuning.step(pitch, 12 * octave)
            assert tuning.pitch(moved.name) == moved


def test_unknown_names_raise_with_the_accepted_forms():
    with pytest.raises(TuningError, match="'黃鼓' unknown; accepted: 黃鍾, 大呂"):
        default_tuning().pitch("黃鼓")
    with pytest.raises(TuningError, match="no 律"):
        default_tuning().pitch("清")
    with pytest.raises(TuningError, match="degree '宫商' unknown"):
        default_tuning().degree(gong="黃鍾", degree="宫商")


def test_degrees_on_huangzhong_are_the_guoyu_seven_notes():
    # 國語 韋昭注 (docs/sources.md M4.3): 黃鍾宮 大蔟商 姑洗角 林鐘徵 南吕羽 應鐘變宮 蕤賔變徵.
    tuning = default_tuning()
    expected = {"宮": "黃鍾", "商": "太簇", "角": "姑洗", "徵": "林鍾", "羽": "南呂",
                "變宮": "應鍾", "變徵": "蕤賓"}
    for degree, lu in expected.items():
        assert tuning.degree(gong="黃鍾", degree=degree).lu == lu


def test_xuangong_wraps_into_the_qing_octave():
    tuning = default_tuning()
    shang = tuning.degree(gong="無射", degree="商")
    assert shang.name == "清黃鍾"
    assert tuning.degree(gong="林鍾", degree="宫", octave=1).name == "清林鍾"
    assert tuning.degree(gong="倍南呂", degree="zhi").name == "姑洗"
    assert tuning.degree(gong="黃鍾", degree="变徵").lu == "蕤賓"


def test_scale_is_ascending_pentatonic():
    scale = default_tuning().scale(gong="姑洗", octaves=2)
    assert len(scale) == 10
    assert all(b.hz > a.hz for a, b in itertools.pairwise(scale))
    assert [p.lu for p in scale[:5]] == ["姑洗", "蕤賓", "夷則", "應鍾", "大呂"]


@pytest.mark.parametrize(
    ("syllable", "name"),
    [("合", "黃鍾"), ("下四", "大呂"), ("四", "太簇"), ("一", "姑洗"), ("上", "仲呂"),
     ("勾", "蕤賓"), ("尺", "林鍾"), ("工", "南呂"), ("凡", "應鍾"), ("六", "清黃鍾"),
     ("五", "清太簇"), ("緊五", "清夾鍾")],
)
def test_gongche_key_of_xiong_penglai(syllable, name):
    tuning = default_tuning()
    assert tuning.from_gongche(syllable).name == name
    assert to_gongche(tuning.pitch(name)) == syllable
    assert to_gongche(name) == syllable


def test_gongche_out_of_range_raises():
    with pytest.raises(TuningError, match="清姑洗"):
        to_gongche("清姑洗")
    with pytest.raises(TuningError, match="'乙' unknown"):
        default_tuning().from_gongche("乙")


def test_nearest_lu_and_midi_from_hz():
    tuning = default_tuning()
    target = tuning.pitch("清南呂")
    pitch, off = tuning.nearest(target.hz * 2 ** (7 / 1200))
    assert pitch.name == "清南呂" and off == pytest.approx(7.0)
    pitch, off = tuning.nearest(tuning.pitch("倍應鍾").hz * 2 ** (-20 / 1200))
    assert pitch.name == "倍應鍾" and off == pytest.approx(-20.0)
    # 南呂 = 27/16 above C4: A4 + 5.87 cents.
    assert target.nearest_midi() == (81, pytest.approx(5.865, abs=1e-3))
    with pytest.raises(TuningError, match="must be a finite number > 0"):
        tuning.nearest(0.0)


def test_canonical_name_folds_variants_and_keeps_the_octave():
    assert canonical_name("清黄钟") == "清黃鍾"
    assert canonical_name("倍林钟") == "倍林鍾"
    assert canonical_name("清太") == "清太簇"
    with pytest.raises(TuningError, match="黃鼓"):
        canonical_name("清黃鼓")
