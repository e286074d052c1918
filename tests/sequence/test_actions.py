"""The sounds between the music: the actions of the rite and the place."""

import itertools
import math

import pytest

from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import default_tuning
from soundscape.sequence.actions import load_actions
from soundscape.sequence.planner import SequenceOptions, perform


def kind(rite, group):
    return [e for e in rite.events if rite.sources[e.source].group == group]


def test_every_instrument_the_table_names_exists():
    table = load_actions()
    names = {table.walk["instrument"], table.bed["instrument"], table.torch["instrument"]}
    names |= {s.instrument for sounds in table.by_action.values() for s, _ in sounds}
    names |= {s.instrument for s in table.by_word.values()}
    for name in names:
        instrument = load_instrument(name)
        assert instrument.id == name


def test_every_action_sound_is_traced_to_its_step(rite, sheet):
    steps = {s.id for s in sheet.steps}
    actions = kind(rite, "action")
    assert len(actions) > 500
    assert {e.cue for e in actions} <= steps


def test_a_bow_twice_is_heard_twice(rite, sheet):
    step = next(s for s in sheet.steps if s.action == "再拜" and "辯" not in s.quote
                and "皆" not in s.quote and "徧" not in s.quote)
    bows = [e for e in rite.events if e.cue == step.id and e.articulation == "bow"]
    assert len(bows) == 2 and bows[0].time < bows[1].time


def test_walkers_are_heard_moving_on_the_floor_under_them(rite, site):
    steps = [e for e in kind(rite, "action") if rite.sources[e.source].instrument == "footstep"]
    assert steps
    for event in steps:
        on_hall = event.position[2] > 0.3
        if event.articulation.startswith(("earth", "wood")):
            assert event.articulation.startswith("wood") == on_hall
    # a walk of several pieces moves: consecutive pieces of one step change place
    by_step = {}
    for event in steps:
        if event.articulation != "stone":
            by_step.setdefault(event.cue, []).append(event)
    longest = max(by_step.values(), key=len)
    assert len(longest) >= 3
    assert math.dist(longest[0].position, longest[-1].position) > 2.0


def test_the_place_never_falls_silent_and_turns_to_night_with_the_torches(rite, sheet):
    bed = sorted(kind(rite, "place"), key=lambda e: e.time)
    onsets = sorted(e.time for e in bed)
    assert onsets[0] == 0.0
    assert max(b - a for a, b in itertools.pairwise(onsets)) < 20.0
    covered = max(e.end for e in bed)
    assert covered >= rite.duration - 1.0
    lit = min(e.time for e in bed if e.articulation == "torch")
    torch_step = next(s for s in sheet.steps if "燭" in s.quote)
    assert lit == pytest.approx(next(m.time for m in rite.markers if m.ref == torch_step.id))
    assert {e.articulation for e in bed if e.time > lit + 1 and e.source.startswith(
        "place.bed")} == {"night"}
    assert bed[0].articulation == "morning"


def test_music_only_leaves_the_actions_and_the_place_out(sheet, site):
    music = perform(sheet, site=site, tuning=default_tuning(), seed=5,
                    options=SequenceOptions(soundscape=False))
    assert not {s.group for s in music.sources.values()} & {"action", "place"}
