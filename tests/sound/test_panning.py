"""VBAP over layouts with a gap of 180° or more, and 3-D layouts with nothing overhead.

Pulkki's pairwise VBAP needs every pair of neighbours less than 180° apart: across a wider
gap the pair's gains are negative (clipped to silence: NaN after normalising) or the pair's
base is singular (a crash). Over such a gap the panner fades between the gap's two edge
speakers at constant power by the angle travelled across it. A 3-D layout whose speakers
are all at or below the horizon gets an imaginary zenith (as it gets an imaginary nadir),
so no hull face passes through the listener.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

from soundscape.kit.speakers import Speaker, SpeakerLayout, layout_from_text, panner_for
from soundscape.performance import Event, Performance, Source
from soundscape.sound.panning import make_panner
from soundscape.sound.render import render_audio
from tests.sound.test_render import NORTH, noise_voice

_GAPPED = [(30.0, -30.0), (90.0, -90.0), (0.0, 90.0, 270.0), (10.0, 20.0), (0.0, 180.0),
           (45.0, 135.0, -150.0)]
_AROUND = np.arange(-180.0, 180.0, 1.0)


@pytest.mark.parametrize("azimuths", _GAPPED, ids=str)
def test_every_direction_pans_at_constant_power_and_smoothly(azimuths):
    panner = make_panner(azimuths)
    rows = np.array([panner.terms(az, 0.0).gains for az in _AROUND])
    assert np.isfinite(rows).all() and (rows >= 0).all()
    np.testing.assert_allclose((rows ** 2).sum(axis=1), 1.0, atol=1e-9)
    # no jumps: a degree of movement changes a gain by no more than a constant-power fade
    # across the narrowest gap would (π/2 over its width), with half as much again to spare
    ring = np.sort(np.mod(azimuths, 360.0))
    narrowest = np.diff(np.append(ring, ring[0] + 360.0)).min()
    steps = np.abs(np.diff(np.vstack([rows, rows[:1]]), axis=0)).max()
    assert steps < 1.5 * np.pi / 2 / narrowest, (steps, narrowest)


@pytest.mark.parametrize("azimuths", _GAPPED, ids=str)
def test_a_source_at_a_speaker_plays_from_it_alone(azimuths):
    panner = make_panner(azimuths)
    for i, az in enumerate(azimuths):
        gains = panner.terms(az, 0.0).gains
        assert gains[i] == pytest.approx(1.0, abs=1e-9), (az, gains)


def test_the_middle_of_a_back_gap_is_shared_equally():
    """30,-30: a source behind (180°) is half way across the 300° gap: equal gains, −3 dB."""
    gains = make_panner((30.0, -30.0)).terms(180.0, 0.0).gains
    np.testing.assert_allclose(gains, [np.sqrt(0.5)] * 2)


def test_layouts_without_a_wide_gap_pan_as_before():
    """A ring with every gap under 180°: plain VBAP (the tangent law), nothing changed."""
    gains = make_panner((30.0, -30.0, 110.0, -110.0)).terms(10.0, 0.0).gains
    ratio = np.tan(np.radians(10.0)) / np.tan(np.radians(30.0))  # (gL − gR)/(gL + gR)
    assert (gains[0] - gains[1]) / (gains[0] + gains[1]) == pytest.approx(ratio)


def test_a_pair_renders_sound_not_silence(tmp_path):
    """``--layout 30,-30`` once rendered NaN (silence) for every source behind the listener."""
    behind = Performance.build(
        [Event(0.1 + 0.5 * i, 0.25, "s", None, 0.9, "strike", "c") for i in range(4)], [],
        {"s": Source("s", "jiangu", "鼓", "drum", "south", (0.0, -10.0, 1.5),
                     struck_face=(0.0, 1.0, 0.0))})
    result = render_audio(behind, tmp_path / "pair.wav", listener=NORTH, voice=noise_voice,
                          layout=(30.0, -30.0), bits="float")
    audio, _ = soundfile.read(result.files[0], always_2d=True)
    assert np.isfinite(audio).all()
    assert np.isfinite([result.report.measured_lufs, result.report.output_lufs]).all()
    # straight behind: half way across the gap, so both speakers alike
    level = np.sqrt((audio ** 2).mean(axis=0))
    assert level.min() > 0 and 20 * np.log10(level[0] / level[1]) == pytest.approx(0, abs=0.5)


def test_a_kit_pair_from_az_el_text_pans_sound():
    panner = panner_for(layout_from_text("30:0,-30:0"))
    rows = np.array([panner.terms(az, 0.0).gains for az in _AROUND])
    assert np.isfinite(rows).all()
    np.testing.assert_allclose((rows ** 2).sum(axis=1), 1.0, atol=1e-9)


def test_a_7_1_file_with_one_speaker_just_below_the_horizon_pans():
    """A 7.1 layout file whose left rear speaker hangs at −1°: 3-D VBAP; nothing overhead."""
    azimuths = (30, -30, 0, 0, 135, -135, 90, -90)
    layout = SpeakerLayout("x", tuple(
        Speaker(az, -1.0 if i == 4 else 0.0, channel=i + 1, name="LFE" if i == 3 else "")
        for i, az in enumerate(azimuths)))
    panner = panner_for(layout)
    for elevation in (-60.0, -1.0, 0.0, 30.0, 89.0):
        rows = np.array([panner.terms(az, elevation).gains for az in _AROUND])
        assert np.isfinite(rows).all()
        np.testing.assert_allclose((rows ** 2).sum(axis=1), 1.0, atol=1e-9)
    ahead = panner.terms(0.0, 0.0).gains
    assert ahead[2] == pytest.approx(1.0, abs=1e-6)  # centre alone
