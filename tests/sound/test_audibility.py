"""What a person beside a doer hears of his action over the place's bed (issue 25, item 3),
and the level a meter reads, on which rustles, steps and pours are set."""

import math

import numpy as np
import pytest

from soundscape.music.instruments import load_instrument
from soundscape.performance import Event, Source
from soundscape.sequence.planner import perform_from_file
from soundscape.site.courtyard import load_site
from soundscape.sound.audibility import (
    CALLS,
    OCTAVES_HZ,
    THRESHOLD_DB,
    _compare,
    over_bed,
    over_bed_and_calls,
)
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


def test_a_sound_is_heard_in_its_own_octave_where_the_bed_masks_it_least():
    """Its loudest octave (4 kHz) under a cicada's; its 1 kHz octave, 6 dB under its loudest,
    over a quiet bed there: heard at 1 kHz. Its 250 Hz octave stands farther over the bed
    but carries 20 dB less than its loudest: not its own band."""
    t = np.arange(RATE) / RATE
    action = (np.sin(2 * np.pi * 4000 * t) + 0.5 * np.sin(2 * np.pi * 1000 * t)
              + 0.1 * np.sin(2 * np.pi * 250 * t))
    bed = 3.0 * np.sin(2 * np.pi * 4100 * t) + 0.03 * np.sin(2 * np.pi * 1010 * t)
    heard = _compare(7, np.column_stack([action, action]), np.column_stack([bed, bed]),
                     94.0, RATE)
    assert (heard.index, heard.band_hz, heard.loudest_hz) == (7, 1000.0, 4000.0)
    assert heard.margin_db == pytest.approx(20 * math.log10(0.5 / 0.03), abs=1.0)
    assert heard.loudest_margin_db == pytest.approx(20 * math.log10(1 / 3), abs=1.0)
    assert heard.action_db == pytest.approx(94.0 + 10 * math.log10(2 * 0.5**2 / 2), abs=0.5)


def test_a_band_under_the_threshold_of_hearing_is_not_heard_however_quiet_the_bed():
    """A 63 Hz knock at 30 dB SPL stands 10 dB over a 20 dB bed there but under the ear's
    threshold (37.5 dB SPL): it is heard in its 250 Hz octave, 4 dB over the bed, or not
    at all."""
    t = np.arange(RATE) / RATE

    def tone(hz: float, db: float) -> np.ndarray:
        return 10 ** ((db - 94.0) / 20) * np.sin(2 * np.pi * hz * t)

    action = tone(63.0, 30.0) + tone(250.0, 24.0)
    bed = tone(63.0, 20.0) + tone(250.0, 20.0)
    heard = _compare(0, np.column_stack([action, action]), np.column_stack([bed, bed]),
                     94.0, RATE)
    assert (heard.band_hz, heard.loudest_hz) == (250.0, 63.0)
    assert heard.margin_db == pytest.approx(4.0, abs=1.0)
    assert heard.loudest_margin_db == pytest.approx(30.0 - THRESHOLD_DB[63.0], abs=1.0)


@pytest.fixture(scope="module")
def rite():
    return perform_from_file(seed=0)


def test_a_bow_a_salute_and_a_step_stand_over_the_bed_for_one_beside_the_doer(rite):
    """Each measured at 1 m in its own octave over the bed and the court's echoes of it (the
    robes were 10-17 dB SPL there, under the bed's 5-36; a bow laid down or taken up was
    heard in its stave's 45 Hz mode, under the threshold of hearing); a call may come near
    any of them (the next test), so the calls are left out here."""
    site = load_site()
    picked = []
    for instrument, articulation in (("robe", "salute"), ("robe", "bow"),
                                     ("footstep", "earth"), ("gear", "set"), ("gear", "take")):
        picked += [i for i, e in enumerate(rite.events)
                   if rite.sources[e.source].instrument == instrument
                   and e.articulation == articulation][:3]
    heard = over_bed(rite, picked, site=site, court=load_court(site, "bare"),
                     sample_rate=16000, calls=False)
    assert [h.index for h in heard] == picked
    assert all(h.band_hz in OCTAVES_HZ for h in heard)
    margins = [h.margin_db for h in heard]
    assert min(margins) >= 6.0, margins
    robes = [h.action_db for h in heard[:6]]
    assert min(robes) > 25.0, robes  # dB SPL in its octave, 1 m away


def test_a_cicada_singing_nearby_masks_a_salute_that_the_bed_alone_leaves_clear(rite):
    """The place's calls count among its sounds unless ``calls=False``: the first 揖 heard
    while a cicada sings in the trees stands over the bed alone by more than over the bed
    and the song."""
    site = load_site()
    cicadas = [e for e in rite.events if rite.sources[e.source].instrument == CALLS
               and e.articulation == "cicada"]
    index = next(i for i, e in enumerate(rite.events)
                 if rite.sources[e.source].instrument == "robe" and e.articulation == "salute"
                 and any(c.time + 2.0 < e.time and e.end < c.end - 2.0 for c in cicadas))
    court = load_court(site, "bare")
    (both,), (bed,) = (over_bed(rite, [index], site=site, court=court, sample_rate=16000,
                                calls=calls) for calls in (True, False))
    assert bed.margin_db >= both.margin_db + 3.0, (bed, both)
    # each sound rendered once, the bed with the calls as the bed's render plus the calls':
    # the same margins as the renders of each
    (pair,) = over_bed_and_calls(rite, [index], site=site, court=court, sample_rate=16000)
    for made, alone in zip(pair, (both, bed), strict=True):
        assert made.band_hz == alone.band_hz
        assert made.margin_db == pytest.approx(alone.margin_db, abs=0.01)
        assert made.loudest_margin_db == pytest.approx(alone.loudest_margin_db, abs=0.01)
