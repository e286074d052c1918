"""What a person beside a doer hears of his action over the place's bed (issue 25, item 3),
and the level a meter reads, on which rustles, steps and pours are set."""

import math

import numpy as np
import pytest

from soundscape.music.instruments import load_instrument
from soundscape.performance import Event, Source
from soundscape.sequence.planner import perform_from_file
from soundscape.site.courtyard import load_site
from soundscape.sound.audibility import OCTAVES_HZ, over_bed
from soundscape.sound.court import load_court
from soundscape.sound.notes import FAST_S, SynthVoice, fast_max

RATE = 48000


def test_fast_max_is_what_a_meter_reads_at_its_loudest():
    t = np.arange(RATE) / RATE
    assert fast_max(0.5 * np.sin(2 * np.pi * 1000 * t), RATE) == pytest.approx(
        0.5 / math.sqrt(2), rel=1e-3)
    click = np.zeros(RATE)
    click[1000:1480] = 1.0  # 10 ms: its energy over the meter's 125 ms
    assert fast_max(click, RATE) == pytest.approx(math.sqrt(0.010 / FAST_S))
    assert fast_max(np.ones(100), RATE) == pytest.approx(math.sqrt(100 / (FAST_S * RATE)))
    swell = np.concatenate([0.1 * np.ones(RATE), np.ones(RATE // 4), 0.1 * np.ones(RATE)])
    assert fast_max(swell, RATE) == pytest.approx(1.0)


@pytest.mark.parametrize(("instrument", "articulation"), [
    ("robe", "salute"), ("robe", "dress"), ("footstep", "earth"), ("pour", "cup")])
def test_a_rustle_a_step_and_a_pour_are_at_their_level_as_a_meter_reads_it(instrument,
                                                                          articulation):
    """Their ``loudness_db`` is a meter's fast reading at 1 m (the basis of the figures they
    come from); the rustle's note was set by its sample peak, ~20 dB under it."""
    made = load_instrument(instrument)
    assert made.level == "fast"
    source = Source(id="doer", instrument=instrument, name="", roman="", group="action",
                    position=(0.0, 0.0, 0.0))
    event = Event(0.0, 1.5, "doer", None, 0.5, articulation, "c")
    note = SynthVoice()(event, source, sample_rate=RATE, rng=np.random.default_rng(0))
    reading = 94.0 + 20 * math.log10(fast_max(note, RATE))
    assert reading == pytest.approx(made.loudness_db + 20 * math.log10(0.5), abs=0.01)


@pytest.fixture(scope="module")
def rite():
    return perform_from_file(seed=0)


def test_a_bow_a_salute_and_a_step_stand_over_the_bed_for_one_beside_the_doer(rite):
    """Each measured at 1 m in its own octave over the bed, the calls and the court's echoes
    of them there (the robes were 10-17 dB SPL there, under the bed's 5-36)."""
    site = load_site()
    picked = []
    for instrument, articulation in (("robe", "salute"), ("robe", "bow"),
                                     ("footstep", "earth")):
        picked += [i for i, e in enumerate(rite.events)
                   if rite.sources[e.source].instrument == instrument
                   and e.articulation == articulation][:3]
    heard = over_bed(rite, picked, site=site, court=load_court(site, "bare"),
                     sample_rate=16000)
    assert [h.index for h in heard] == picked
    assert all(h.band_hz in OCTAVES_HZ for h in heard)
    margins = [h.margin_db for h in heard]
    assert min(margins) >= 6.0, margins
    robes = [h.action_db for h in heard[:6]]
    assert min(robes) > 25.0, robes  # dB SPL in its octave, 1 m away
