"""Speech prosody: syllable durations by Klatt's rule, tones in context, the pitch track."""

import numpy as np
import pytest

from soundscape.errors import TextError
from soundscape.text import prosody
from soundscape.text.reading import checked, phrase_contours, read


def test_checked_syllables_are_shorter_than_open_ones_and_the_last_is_longest():
    timing = prosody.settings()["timing"]
    inherent = prosody.settings()["style"]["speak"]["inherent_s"]
    least = timing["min_share"] * inherent
    lengths = prosody.syllable_seconds([False, True, False])
    non_final = timing["non_final_k"] * (inherent - least) + least  # Klatt 1976, eq. 1
    assert lengths[0] == pytest.approx(non_final)
    assert lengths[1] == pytest.approx(timing["checked_k"] * (non_final - least) + least)
    assert lengths[1] < lengths[0] < lengths[2] == pytest.approx(inherent)
    assert prosody.syllable_seconds([False, True])[1] < lengths[2]  # a checked last one


def test_a_call_is_slower_than_speech_and_formal_speech_near_four_a_second():
    four = [False] * 4
    rate = 4 / prosody.phrase_seconds(four)
    assert 3.5 < rate < 4.5, rate
    assert prosody.phrase_seconds(four, "call") > 1.3 * prosody.phrase_seconds(four)
    with pytest.raises(TextError, match="style 'shout' is unknown; accepted: speak, call"):
        prosody.phrase_seconds(four, "shout")


def test_entering_tone_syllables_are_the_checked_ones():
    said = read("鹿鳴食野", "middle-chinese")
    assert [checked(s) for s in said] == [True, False, True, False]
    assert not any(checked(s) for s in read("鹿鳴食野", "mandarin"))  # the codas are gone


def test_mandarin_third_tones_change_in_a_phrase():
    """Chao 1968: 3 before 3 is said as 2; a non-final 3 as the half third 21."""
    assert phrase_contours(read("你好", "mandarin")) == [(3, 5), (2, 1, 4)]
    assert phrase_contours(read("好人", "mandarin")) == [(2, 1), (3, 5)]
    assert phrase_contours(read("請射于公", "middle-chinese")) == [(3, 5), (5, 1), (3, 3),
                                                                  (3, 3)]


@pytest.mark.parametrize(("contour", "sign"), [((3, 5), 1), ((5, 1), -1), ((3, 3), 0)])
def test_the_pitch_approaches_each_tone_target(contour, sign):
    """qTA: after the syllable's start f0 moves the way its target line goes."""
    t = np.arange(0.0, 0.9, 0.005)
    bounds = np.array([0.0, 0.3, 0.6, 0.9])
    track = prosody.pitch_semitones(t, bounds, [(3, 3), contour, (3, 3)])
    inside = track[(t >= 0.35) & (t < 0.6)]
    change = inside[-1] - inside[0]
    step = prosody.settings()["pitch"]["semitones_per_level"]
    if sign == 0:
        assert abs(change) < 0.6 * step  # only the phrase line's fall
    else:
        assert sign * change > step, change
    assert np.all(np.abs(np.diff(track)) < 0.5)  # continuous: no jump at a boundary


def test_the_phrase_line_falls():
    t = np.arange(0.0, 2.0, 0.01)
    track = prosody.pitch_semitones(t, np.array([0.0, 1.0, 2.0]), [(3, 3), (3, 3)])
    fall = prosody.settings()["pitch"]["declination_semitones"]
    assert track[0] - track[-1] == pytest.approx(fall * (1 - np.exp(-2.0 / 1.2)), abs=0.05)
    assert abs(track[100]) < 0.1  # centred on the speaker's pitch at the middle
