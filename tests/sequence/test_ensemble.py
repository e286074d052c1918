"""Players who breathe: onsets spread like an ensemble's, led, leaning, never sample-locked."""

import itertools

import numpy as np
import pytest

from soundscape.music.arrange import arrange
from soundscape.music.repertoire import load_piece
from soundscape.music.tuning import default_tuning
from soundscape.sequence.ensemble import _lean, load_ensemble

SINGERS = ("gong.dashi", "gong.shaoshi")
SE = tuple(f"gong.shanggong.{i}" for i in range(1, 5))


@pytest.fixture(scope="module")
def song():
    arrangement = arrange(load_piece("luming"), tuning=default_tuning(), repeats=1)
    notes = [(n, SINGERS if n.instrument == "voice" else SE) for n in arrangement.notes()]
    ensemble = load_ensemble()
    takes = ensemble.perform(arrangement, notes, kind="ge", seed=3, cue="luming",
                             sources=SINGERS + SE)
    return arrangement, notes, takes, ensemble


def test_no_two_players_sound_on_the_same_sample(song):
    _, notes, takes, ensemble = song
    gap = ensemble.timing["min_gap"]
    nominal = {}
    for (note, _), group in zip(notes, takes, strict=True):
        nominal.setdefault(round(note.time, 6), []).extend(t.time for t in group)
    for onsets in nominal.values():
        for a, b in itertools.combinations(sorted(onsets), 2):
            assert b - a >= gap - 1e-12


def test_onset_spread_is_an_ensembles_and_the_leader_comes_first(song):
    """Rasch (1979): tens of milliseconds between players, the leader ahead."""
    _, notes, takes, _ = song
    spreads, lead = [], []
    beats: dict[float, list] = {}
    for (note, _), group in zip(notes, takes, strict=True):
        beats.setdefault(round(note.time, 6), []).extend(group)
    for group in beats.values():
        times = np.array([t.time for t in group])
        spreads.append(times.std())
        leader = next(t.time for t in group if t.source == "gong.dashi")
        lead.append(leader - times.mean())
    assert 0.005 < float(np.median(spreads)) < 0.05
    assert float(np.mean(lead)) < -0.005


def test_the_beat_leans_but_phrases_keep_their_bounds(song):
    arrangement, notes, takes, ensemble = song
    phrases = [(p.start, p.end) for p in arrangement.phrases]
    for start, end in phrases:
        assert _lean(start, phrases, ensemble.lean) == pytest.approx(start)
        assert _lean(end - 1e-9, phrases, ensemble.lean) == pytest.approx(end)
        middle = (start + end) / 2  # a quarter of the lean, early: faster in, slower out
        assert _lean(middle, phrases, ensemble.lean) == pytest.approx(
            middle - ensemble.lean * (end - start) / 4)
    leader = [(n.time, next(t.time for t in g if t.source == "gong.dashi"))
              for (n, _), g in zip(notes, takes, strict=True) if n.instrument == "voice"]
    early = [score - played for score, played in leader]
    assert float(np.mean(early)) > 0.01, "inside phrases the leaning beat runs ahead"
    # the last phrase ends where the score ends: the rite's clock is untouched
    assert max(t.time + t.duration for g in takes for t in g) == pytest.approx(
        arrangement.end, abs=0.3)


def test_same_seed_same_takes_other_seed_other_takes(song):
    arrangement, notes, takes, ensemble = song
    again = ensemble.perform(arrangement, notes, kind="ge", seed=3, cue="luming",
                             sources=SINGERS + SE)
    other = ensemble.perform(arrangement, notes, kind="ge", seed=4, cue="luming",
                             sources=SINGERS + SE)
    assert again == takes
    assert other != takes


def test_shooting_drum_jie_never_move():
    arrangement = arrange(load_piece("lishou"), tuning=default_tuning(), repeats=7)
    notes = [(n, ("east.jiangu",)) for n in arrangement.notes()]
    takes = load_ensemble().perform(arrangement, notes, kind="she", seed=1, cue="lishou",
                                    sources=("east.jiangu",))
    jie = [g[0].time for (n, _), g in zip(notes, takes, strict=True) if n.role == "jie"]
    assert jie == list(arrangement.jie)
