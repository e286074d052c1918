"""MIDI Tuning Standard and pitch-bend messages (bytes checked against the MTS spec)."""

from __future__ import annotations

import math

import pytest

from soundscape.errors import RenderError
from soundscape.music.pitch import Pitch
from soundscape.music.tuning import Tuning
from soundscape.output import mts


def test_scale_octave_message_bytes():
    # F0 7E 7F 08 09 ff gg hh, then 12 × (MSB, LSB) of 8192·(1 + cents/100); F7.
    offsets = [0.0, -100.0, 50.0] + [0.0] * 9
    message = mts.scale_octave_tuning(offsets, channels=[0, 1, 15])
    assert message.bytes()[:8] == [0xF0, 0x7E, 0x7F, 0x08, 0x09, 0b10, 0x00, 0b11]
    assert message.bytes()[8:14] == [0x40, 0x00, 0x00, 0x00, 0x60, 0x00]
    assert message.bytes()[-1] == 0xF7 and len(message.bytes()) == 8 + 24 + 1


def test_scale_octave_round_trip():
    offsets = tuple(-49.5 + 8.7 * i for i in range(12))
    channels, parsed = mts.parse_scale_octave(
        mts.scale_octave_tuning(offsets, channels=range(9)))
    assert channels == tuple(range(9))
    assert max(abs(a - b) for a, b in zip(offsets, parsed, strict=True)) < 100 / 8192


@pytest.mark.parametrize("reference", ["convention", "zeng", "qing", 300.0])
def test_sanfen_sunyi_is_exact_per_pitch_class_across_octaves(reference):
    tuning = Tuning.sanfen_sunyi(reference)
    pitches = [tuning.pitch(prefix + lu) for prefix in ("倍", "", "清", "清清")
               for lu in ("黃鍾", "大呂", "太簇", "夾鍾", "姑洗", "仲呂",
                          "蕤賓", "林鍾", "夷則", "南呂", "無射", "應鍾")]
    keys = mts.key_map(pitches)
    offsets = mts.pitch_class_offsets(pitches, keys)
    assert len({keys.key(p) for p in pitches}) == len(pitches)  # one key per pitch
    for pitch in pitches:
        key = keys.key(pitch)
        cents = 1200 * math.log2(pitch.hz / mts.hz_of_key(key, offsets[key % 12]))
        assert abs(cents) < 1e-6, f"{pitch.name}: {cents} cents"


def test_stretched_octave_is_refused():
    pitches = [Pitch("黃鍾", 0, 261.63), Pitch("黃鍾", 1, 261.63 * 2 * 2 ** (3 / 1200))]
    with pytest.raises(RenderError, match="use tuning mode 'mpe'"):
        mts.pitch_class_offsets(pitches, mts.key_map(pitches))


def test_bend_range_and_values():
    messages = mts.bend_range_messages(3, 2)
    assert [(m.control, m.value) for m in messages[:3]] == [(101, 0), (100, 0), (6, 2)]
    assert mts.cents_to_bend(100.0) == 4096 and mts.cents_to_bend(-200.0) == -8192
    assert abs(mts.bend_to_cents(mts.cents_to_bend(-31.7)) + 31.7) < 0.03
    with pytest.raises(RenderError, match="exceeds"):
        mts.cents_to_bend(250.0)
