"""Loudspeaker layouts: IEM AllRADecoder JSON, az/el lists, presets, 3-D VBAP."""

from __future__ import annotations

import json

import numpy as np
import pytest

from soundscape.kit import KitError
from soundscape.kit.speakers import (
    Speaker,
    SpeakerLayout,
    channel_mask,
    layout_from_text,
    panner_for,
    read_iem,
    write_iem,
)

# 7.0.4 as an IEM layout with an imaginary speaker below: channels as a studio wires them
_SEVEN_FOUR = [(30, 0), (-30, 0), (0, 0), (90, 0), (-90, 0), (150, 0), (-150, 0),
               (45, 45), (-45, 45), (135, 45), (-135, 45)]
SEVEN_FOUR = SpeakerLayout("7.0.4", (
    *(Speaker(az, el, channel=i + 1) for i, (az, el) in enumerate(_SEVEN_FOUR)),
    Speaker(0, -90, imaginary=True, channel=0)))


def test_iem_json_round_trip_keeps_every_field(tmp_path):
    layout = SpeakerLayout("hall", (Speaker(30, 0, 2.5, False, 1, 1.0),
                                    Speaker(-30, 0, 2.5, False, 2, 0.5),
                                    Speaker(0, 60, 3.0, False, 4, 1.0),
                                    Speaker(0, -90, 1.0, True, 0, 1.0)))
    path = write_iem(layout, tmp_path / "hall.json")
    data = json.loads(path.read_text())
    first = data["LoudspeakerLayout"]["Loudspeakers"][0]
    assert first == {"Azimuth": 30, "Elevation": 0, "Radius": 2.5, "IsImaginary": False,
                     "Channel": 1, "Gain": 1.0}
    back = read_iem(path)
    assert back.speakers == layout.speakers
    assert back.width == 4 and back.channel_names()[2] == "CH3"  # a gap stays a silent channel


@pytest.mark.parametrize(("entry", "message"), [
    ({"Azimuth": "left", "Elevation": 0, "Channel": 1}, r"Loudspeakers\[1\]: Azimuth='left'"),
    ({"Azimuth": 0, "Elevation": 120, "Channel": 1}, r"Loudspeakers\[1\]: Elevation=120"),
    ({"Azimuth": 0, "Elevation": 0, "Channel": 1.5}, r"Channel=1.5"),
    ({"Azimuth": 0, "Elevation": 0, "Channel": 1, "IsImaginary": "no"}, "IsImaginary='no'"),
])
def test_bad_iem_entries_name_the_file_index_and_key(tmp_path, entry, message):
    good = {"Azimuth": 30, "Elevation": 0, "Radius": 1, "IsImaginary": False, "Channel": 2,
            "Gain": 1}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"LoudspeakerLayout": {"Loudspeakers": [good, entry]}}))
    with pytest.raises(KitError, match=message) as caught:
        read_iem(path)
    assert "bad.json" in str(caught.value)


def test_not_an_iem_file_and_repeated_channels_are_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{\n  \"speakers\": [] }")
    with pytest.raises(KitError, match=r"LoudspeakerLayout\.Loudspeakers"):
        read_iem(path)
    with pytest.raises(KitError, match=r"channels .* repeat"):
        SpeakerLayout("x", (Speaker(30, channel=1), Speaker(-30, channel=1)))
    with pytest.raises(KitError, match="item 2 'left'"):
        layout_from_text("30:0,left")


def test_az_el_list_and_presets():
    layout = layout_from_text("30:0,-30:0,0:90")
    assert [(s.azimuth, s.elevation, s.channel) for s in layout.speakers] == [
        (30, 0, 1), (-30, 0, 2), (0, 90, 3)]
    five = layout_from_text("5.1")
    assert five.channel_names() == ("L", "R", "C", "LFE", "Ls", "Rs")
    assert layout_from_text("hoa3") == "hoa3"


@pytest.mark.parametrize("index", range(11))
def test_vbap3_a_sound_from_a_speaker_plays_from_it_alone(index):
    speaker = SEVEN_FOUR.speakers[index]
    gains = panner_for(SEVEN_FOUR).terms(speaker.azimuth, speaker.elevation).gains
    assert gains[speaker.channel - 1] == pytest.approx(1.0, abs=1e-9)
    assert np.sum(gains**2) == pytest.approx(1.0)


def test_vbap3_between_speakers_and_below_the_horizon():
    panner = panner_for(SEVEN_FOUR)
    gains = panner.terms(0.0, 45.0).gains  # between the two front heights and the centre
    assert gains[7] == pytest.approx(gains[8]) and gains[7] > 0.3
    assert np.all(gains >= 0) and np.sum(gains**2) == pytest.approx(1.0)
    below = panner.terms(30.0, -20.0).gains  # imaginary nadir: its share dropped, power kept
    assert np.argmax(below) == 0 and np.sum(below**2) == pytest.approx(1.0)


def test_horizontal_layout_uses_2d_vbap_routed_and_gains_applied():
    layout = SpeakerLayout("pair", (Speaker(30, channel=2, gain=0.5), Speaker(-30, channel=1)))
    panner = panner_for(layout)
    gains = panner.terms(30.0, 0.0).gains
    np.testing.assert_allclose(gains, [0.0, 0.5], atol=1e-9)
    assert panner.channels == ("CH1", "CH2")


@pytest.mark.parametrize("name", ["5.1", "7.1.4", "ring8"])
def test_presets_pan_exactly_as_the_renderers_layout(name):
    from soundscape.sound.panning import make_panner

    ours, theirs = panner_for(layout_from_text(name)), make_panner(name)
    assert ours.channels == theirs.channels
    for az, el in [(0, 0), (20, 0), (100, 5), (-150, 0), (60, 40), (10, -30)]:
        np.testing.assert_allclose(ours.terms(az, el).gains, theirs.terms(az, el).gains,
                                   atol=1e-12)
    np.testing.assert_allclose(ours.loudness_weights(), theirs.loudness_weights())


@pytest.mark.parametrize(("text", "mask"), [
    ("stereo", 0x3), ("binaural", 0x3), ("foa", 0), ("hoa3", 0), ("5.1", 0x3F),
    ("7.1", 0x63F), ("7.1.4", 0x2D63F), ("ring8", 0), ("30:0,-30:0,0:0", 0)])
def test_channel_masks_are_the_renderers(text, mask):
    assert channel_mask(layout_from_text(text)) == mask


def test_a_layout_file_carries_no_speaker_positions(tmp_path):
    # a 5.1 read back from an IEM file has no channel names: its speakers are not known
    write_iem(layout_from_text("5.1"), tmp_path / "5.1.json")
    assert channel_mask(read_iem(tmp_path / "5.1.json")) == 0


@pytest.mark.parametrize(("name", "expected"), [
    ("/../../PWNED_REL", "pwned_rel"), ("..", "hall"), ("", "hall"), ("IEM CUBE", "iem-cube"),
    ("../x/./y", "x-.-y"), ("7.0.4", "7.0.4"), ("鐘磬", "hall"), ("a" * 300, "a" * 64)])
def test_a_layout_files_name_becomes_an_id(tmp_path, name, expected):
    """The name a layout gives its files (loops, its copy in ``layouts/``) is an id: never a
    path, never empty; the file's stem when its ``Name`` holds nothing usable."""
    path = tmp_path / "hall.json"
    path.write_text(json.dumps({"LoudspeakerLayout": {"Name": name, "Loudspeakers": [
        {"Azimuth": 30, "Elevation": 0, "Channel": 1},
        {"Azimuth": -30, "Elevation": 0, "Channel": 2}]}}), encoding="utf-8")
    assert read_iem(path).name == expected


def test_a_layout_of_no_id_is_refused():
    with pytest.raises(KitError, match=r"layout name='\.\./x' must be an id"):
        SpeakerLayout("../x", (Speaker(30, channel=1), Speaker(-30, channel=2)))


def test_a_5_1_read_back_from_its_file_pans_as_the_preset(tmp_path):
    """The file names no channel, so its LFE stands where the centre does: a later speaker
    in an earlier one's direction takes no panned signal (before, two speakers in one
    direction were refused when the first sound was panned)."""
    write_iem(layout_from_text("5.1"), tmp_path / "5.1.json")
    again, preset = panner_for(read_iem(tmp_path / "5.1.json")), panner_for(
        layout_from_text("5.1"))
    for azimuth in (0.0, 20.0, 90.0, 180.0, -120.0):
        np.testing.assert_allclose(again.terms(azimuth, 0.0).gains,
                                   preset.terms(azimuth, 0.0).gains, atol=1e-12)


@pytest.mark.parametrize(("text", "message"), [
    ("0,0", "--layout '0,0': loudspeaker layout 0, 0: speakers 1 and 2 stand in the same"),
    ("0:0,0:1", "--layout '0:0,0:1': loudspeaker layout 0, 0: elevated speakers that span no "
                "space"),
])
def test_a_layout_vbap_cannot_pan_is_refused_as_it_is_read(text, message):
    with pytest.raises(KitError) as caught:
        layout_from_text(text)
    assert str(caught.value).startswith(message), str(caught.value)
