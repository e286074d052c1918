"""The spoken words of the rite: said from the speaker's place, raised across the court."""

import math


def said(rite):
    return [e for e in rite.events if rite.sources[e.source].group == "speech"]


def test_every_speech_cue_is_said_once_at_its_step(rite, sheet):
    events = said(rite)
    assert sorted(e.cue for e in events) == sorted(c.id for c in sheet.speech)
    steps = {m.ref: m.time for m in rite.markers if m.kind == "step"}
    for event in events:
        cue = next(c for c in sheet.speech if c.id == event.cue)
        assert event.lyric == cue.quote
        assert event.time >= steps[cue.step]
        assert event.phones and event.phones.count("|") == len(cue.quote) - 1


def test_a_voice_is_raised_across_the_court_and_spoken_near(rite, site):
    words = {e.lyric: e for e in said(rite)}
    near = words["命某為賓"]          # the duke, from his seat, to those beside him
    far = words["中離維綱揚觸梱復"]    # the 司射 commands the archers across the court
    assert (near.articulation, far.articulation) == ("speak", "call")
    assert far.velocity > near.velocity
    assert far.duration / len(far.lyric) > near.duration / len(near.lyric)
    assert math.dist(near.position[:2], site.place("gong_wei")[:2]) < 3.0


def test_every_phrase_has_a_marker_for_captions(rite, sheet):
    markers = {m.ref: m for m in rite.markers if m.kind == "speech"}
    for event in said(rite):
        marker = markers[event.cue]
        assert marker.time == event.time and event.lyric in marker.text
        assert f"「{event.lyric}」" in marker.gloss
    report = next(m for m in markers.values() if m.quote == "為政請射")
    assert report.gloss.startswith("The archery director") or "(司射)" in report.gloss
