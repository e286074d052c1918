"""A singer's line: legato notes, never two at once, a breath before every phrase."""

import itertools

import pytest

from soundscape.performance import Event
from soundscape.sequence.ensemble import load_ensemble
from soundscape.sequence.singing import INHALE, join_lines

BREATH = {"low_s": 0.35, "high_s": 0.6, "min_note_s": 0.4, "velocity": 0.7, "max_group_s": 4.0}


def sung(time, duration, who="gong.dashi", lyric="鹿"):
    return Event(time, duration, who, None, 0.7, "sing", "luming", "luming", lyric)


def by_singer(events):
    out = {}
    for event in sorted(events, key=lambda e: e.time):
        out.setdefault(event.source, []).append(event)
    return out


def test_overlapping_takes_become_a_legato_line_with_breaths_between_phrases():
    # the ensemble's lengths overlap the next note (as its 0.25 s rounding made them)
    notes = [(sung(10.0, 1.5), 0), (sung(11.3, 1.6), 0), (sung(12.7, 2.9), 0),  # no rest
             (sung(15.4, 1.4), 1), (sung(16.8, 1.2), 1),
             (sung(25.0, 1.0), 2)]                                              # a rest
    out = by_singer(join_lines(notes, BREATH, seed=0))["gong.dashi"]
    sounding = [e for e in out if e.articulation == "sing"]
    breaths = [e for e in out if e.articulation == INHALE]
    for a, b in itertools.pairwise(out):  # one throat: nothing overlaps, breaths included
        assert b.time >= a.end - 1e-9
    assert sounding[0].end == pytest.approx(11.3) and sounding[3].end == pytest.approx(16.8)
    # a breath before each phrase, the first before the singing starts
    assert len(breaths) == 3
    for breath, phrase_start in zip(breaths, (10.0, 15.4, 25.0), strict=True):
        assert breath.end == pytest.approx(phrase_start)
        assert BREATH["low_s"] - 1e-9 <= breath.duration <= BREATH["high_s"] + 1e-9
        assert breath.pitch is None and breath.cue == "luming"
    # no rest before phrase 1: the line-end note gave the breath its time
    assert sounding[2].end == pytest.approx(breaths[1].time)
    assert sounding[2].end < 15.4 - BREATH["low_s"] + 1e-9
    # a rest before phrase 2: the note keeps its length, the breath lies in the rest
    assert sounding[4].duration == pytest.approx(1.2)


def test_a_short_phrase_is_sung_on_the_same_breath():
    """No rest, and the next phrase ends within max_group_s of the last breath: no breath."""
    notes = [(sung(10.0, 1.0), 0), (sung(11.0, 1.0), 0), (sung(12.0, 1.0), 1),
             (sung(13.0, 1.0), 2), (sung(14.0, 1.0), 2)]
    out = by_singer(join_lines(notes, BREATH, seed=0))["gong.dashi"]
    breaths = [e.end for e in out if e.articulation == INHALE]
    # before phrase 0 (the start); phrase 1 ends at 13 s, 3 s on one breath: sung on;
    # phrase 2 would end at 15 s, 5 s > 4 s: a breath before it
    assert breaths == pytest.approx([10.0, 13.0])
    legato = [e for e in out if e.articulation == "sing"]
    assert legato[1].end == pytest.approx(12.0)


def test_each_singer_breathes_on_his_own():
    notes = [(sung(10.0 + 1.4 * k, 1.5, who), k // 4) for k in range(12)
             for who in ("gong.dashi", "gong.shaoshi")]
    lines = by_singer(join_lines(notes, BREATH, seed=0))
    lengths = {who: [round(e.duration, 6) for e in line if e.articulation == INHALE]
               for who, line in lines.items()}
    assert lengths["gong.dashi"] != lengths["gong.shaoshi"]


def test_the_ensemble_file_gives_the_breath():
    breath = load_ensemble().breath
    assert 0 < breath["low_s"] <= breath["high_s"] < 1.0


def test_in_the_rite_no_singer_sounds_two_notes_at_once_and_breathes_each_phrase(rite):
    """The whole rite (seed 7): every voice of the 工, every piece."""
    singers = {e.source for e in rite.events
               if e.articulation == "sing" and e.source.startswith("gong.")}
    assert singers
    for who in singers:
        line = sorted((e for e in rite.events if e.source == who), key=lambda e: e.time)
        overlapping = [(a, b) for a, b in itertools.pairwise(line) if b.time < a.end - 1e-9]
        assert not overlapping, overlapping[:3]
        luming = [e for e in line if e.cue == "luming"]
        breaths = sum(e.articulation == INHALE for e in luming)
        # 鹿鳴 three times: 24 lines a 終, a breath before each
        assert breaths == 72


def test_one_throat_across_songs_that_follow_without_a_rest():
    """合樂's songs follow each other: the ensemble's lag once carried 葛覃's held last note
    (3 s) 0.12 s past 卷耳's first, and the render stopped (a sung line must not overlap)."""
    from dataclasses import replace

    from soundscape.sequence.singing import one_throat

    last = replace(sung(256.235, 3.0, lyric="母"), cue="getan", piece="getan")
    first = replace(sung(259.116, 0.8, lyric="采"), cue="juaner", piece="juaner")
    other = replace(sung(256.0, 4.0, who="gong.shaoshi"), cue="getan", piece="getan")
    out = one_throat([last, first, other])
    assert out[0].end == pytest.approx(first.time) and out[1] == first
    assert out[2] == other  # another singer's note is his own
    assert one_throat([sung(1.0, 1.0), sung(1.5, 1.0)]) == [sung(1.0, 1.0), sung(1.5, 1.0)]


def test_no_singer_sounds_two_notes_at_once_in_the_he_yue():
    """鄉飲酒's 合樂 (six songs without a rest between), as sequenced: every singer's notes
    and breaths in turn."""
    from soundscape.resources import bundled_dir
    from soundscape.sequence.planner import SequenceOptions, perform_from_file

    performance = perform_from_file(bundled_dir("cues") / "xiangyinjiu.toml",
                                    from_section="s15", to_section="s15",
                                    options=SequenceOptions(soundscape=False))
    for singer, events in by_singer(e for e in performance.events
                                    if e.articulation in ("sing", INHALE)).items():
        for a, b in itertools.pairwise(events):
            assert b.time >= a.end - 1e-9, (singer, a, b)
