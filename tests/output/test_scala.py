"""Scala export: the .scl and .kbm, read back by the format's rules, give every 律's Hz."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from soundscape.music.tuning import LU, Tuning
from soundscape.output import scala


def _values(text: str) -> list[str]:
    """Non-comment lines, as Scala reads them."""
    return [line.strip() for line in text.splitlines() if not line.startswith("!")]


def _scl_cents(text: str) -> list[float]:
    lines = _values(text)
    count = int(lines[1])
    cents = []
    for line in lines[2:2 + count]:
        word = line.split()[0]
        cents.append(float(word) if "." in word else 1200 * math.log2(Fraction(word)))
    assert len(cents) == count
    return cents


@pytest.mark.parametrize("tuning", [Tuning.sanfen_sunyi(), Tuning.sanfen_sunyi("zeng"),
                                    Tuning.equal("qing")], ids=["c", "zeng", "equal"])
def test_scl_and_kbm_give_every_pitch(tmp_path, tuning):
    scl, kbm = scala.write_scala(tuning, tmp_path / "lu")
    cents = _scl_cents(scl.read_text(encoding="utf-8"))
    assert cents[-1] == pytest.approx(1200.0)
    assert cents[:-1] == pytest.approx(list(tuning.cents[1:]), abs=1e-5)
    assert _values(scl.read_text(encoding="utf-8"))[0].isascii()
    values = _values(kbm.read_text(encoding="utf-8"))
    size, first, last, middle, reference, hz, octave = values[:7]
    mapping = [int(v) for v in values[7:]]
    assert (int(size), int(first), int(last), int(octave)) == (12, 0, 127, 12)
    assert mapping == list(range(12)) and middle == reference
    degrees = [0.0, *cents[:-1]]
    for name in ("倍林鍾", "黃鍾", "仲呂", "清應鍾", "清清太簇"):
        pitch = tuning.pitch(name)
        key = int(middle) + LU.index(pitch.lu) + 12 * pitch.octave
        steps, degree = divmod(key - int(middle), 12)
        got = float(hz) * 2 ** (steps + degrees[mapping[degree]] / 1200)
        assert 1200 * math.log2(got / pitch.hz) == pytest.approx(0.0, abs=1e-4)
