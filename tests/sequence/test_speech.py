"""The spoken words of the rite: said from the speaker's place, raised across the court."""

import itertools
import math
from types import SimpleNamespace

import pytest

from soundscape.errors import CueSheetError
from soundscape.music.tuning import default_tuning
from soundscape.sequence import speech
from soundscape.sequence.settings import load_settings
from soundscape.sequence.speech import speech_events
from soundscape.sequence.timeline import TimedStep


def said(rite):
    return [e for e in rite.events if rite.sources[e.source].group == "speech"]


OFFERED = ("留", "揚", "方")  # the 大射正's report of a missed arrow: one of them, by its outcome


def phrases_by_person(rite):
    """Every phrase (speech or call) of the rite, by the person who says it."""
    out = {}
    for e in rite.events:
        source = rite.sources[e.source]
        if source.instrument == "voice" and e.articulation in ("speak", "call"):
            out.setdefault(source.name, []).append(e)
    return {who: sorted(es, key=lambda e: e.time) for who, es in out.items()}


def test_every_speech_cue_is_said_once_at_its_step(rite, sheet):
    events = said(rite)
    plain = [c for c in sheet.speech if c.quote not in OFFERED]
    assert sorted(e.cue for e in events if e.lyric not in OFFERED) == sorted(c.id for c in plain)
    steps = {m.ref: m.time for m in rite.markers if m.kind == "step"}
    for event in events:
        cue = next(c for c in sheet.speech if c.id == event.cue)
        assert event.lyric == cue.quote
        assert event.time >= steps[cue.step]
        assert event.phones and event.phones.count("|") == len(cue.quote) - 1


def test_no_one_says_two_phrases_at_once(rite):
    """One throat, one phrase: each starts after the same person's last one has ended."""
    for who, phrases in phrases_by_person(rite).items():
        for before, after in itertools.pairwise(phrases):
            assert after.time >= before.end + 0.3, (who, before.lyric, before.time,
                                                    after.lyric, after.time)


def test_a_step_lasts_as_long_as_its_words(rite, sheet):
    """The rite waits for a speaker: his step's words end before the next step begins."""
    steps = sorted((m.time, m.ref) for m in rite.markers if m.kind == "step")
    starts = dict((ref, t) for t, ref in steps)
    following = {a[1]: b[0] for a, b in itertools.pairwise(steps)}
    for event in said(rite):
        cue = next(c for c in sheet.speech if c.id == event.cue)
        if cue.quote in OFFERED or cue.step not in following:
            continue
        assert event.end <= following[cue.step] + 1e-6, (cue.quote, event.end,
                                                         starts[cue.step])


def test_the_report_said_is_the_one_that_fits_the_arrow(sheet, site):
    """下曰留 上曰揚 左右曰方: for each of the duke's arrows that misses, the word for where it
    went, once, after it lands; nothing for a hit (鄭注: 若不中 使君當知而改其度)."""
    step = next(c.step for c in sheet.speech if c.quote == "留")
    times = {step: TimedStep(step, "s26", 100.0, 5.0)}
    arrows = [_shot("公", "liu", 110.0), _shot("公", "hu", 120.0), _shot("賓", "yang", 125.0),
              _shot("公", "fang", 130.0), _shot("公", "yang", 140.0)]
    _, events = speech_events(sheet.speech, times, [], site=site,
                              settings=load_settings().speech, tuning=default_tuning(),
                              reading="middle-chinese", shots={step: arrows})
    assert [(e.lyric, round(e.time - 0.8, 6)) for e in events] == [
        ("留", 110.0), ("方", 130.0), ("揚", 140.0)]


def test_in_the_rite_the_reports_are_the_dukes_misses(rite):
    """Never 留, 揚 and 方 together: one word per missed arrow of the duke in the second
    round (seed 7: his four arrows strike his 侯, so none), each after its arrow lands."""
    shoot = next(r for r in rite.rounds if r.number == 2)
    misses = [(s.outcome, s.arrival) for s in shoot.shots
              if s.archer_name == "公" and s.outcome in ("liu", "yang", "fang")]
    reports = sorted(((e.lyric, e.time) for e in said(rite) if e.lyric in OFFERED),
                     key=lambda r: r[1])
    word = {"liu": "留", "yang": "揚", "fang": "方"}
    assert [w for w, _ in reports] == [word[o] for o, _ in sorted(misses, key=lambda m: m[1])]
    assert all(t > a for (_, t), (_, a) in zip(reports, sorted(misses, key=lambda m: m[1]),
                                               strict=True))


def test_the_tally_is_announced_as_one_phrase(rite):
    for shoot in rite.rounds:
        if shoot.announcement is None:
            continue
        said = [e for e in rite.events if e.source == "voice.shihuozhe"
                and e.lyric == shoot.announcement]
        assert len(said) == 1 and said[0].articulation == "call"
        rate = len(shoot.announcement) / said[0].duration
        assert 2.5 < rate < 4.0, rate  # a call: slower than formal speech's ~4 a second


def test_a_report_word_for_an_unknown_outcome_is_named(monkeypatch):
    monkeypatch.setattr(speech, "read_toml", lambda path, error: {
        "outcome": {"reaction_s": 0.8, "words": {"留": "short"}}})
    speech._report.cache_clear()
    try:
        with pytest.raises(CueSheetError, match=r"speech\.toml.*outcome\.words\.留.*short.*"
                                                 r"liu, yang, fang"):
            speech._outcomes()
    finally:
        speech._report.cache_clear()


def _shot(archer_name, outcome, arrival):
    return SimpleNamespace(archer_name=archer_name, outcome=outcome, arrival=arrival)


def test_a_voice_is_raised_across_the_court_and_spoken_near(rite, site):
    words = {e.lyric: e for e in said(rite)}
    near = words["命某為賓"]          # the duke, from his seat, to those beside him
    # the 司射 commands the archers across the court (the whole command, as derive now gives it)
    far = words["中離維綱揚觸梱復公則釋獲衆則不與唯公所中中三侯皆獲"]
    assert (near.articulation, far.articulation) == ("speak", "call")
    assert far.velocity > near.velocity
    assert far.duration / len(far.lyric) > near.duration / len(near.lyric)
    assert math.dist(near.position[:2], site.place("gong_wei")[:2]) < 3.0


def test_every_phrase_has_a_marker_for_captions(rite, sheet):
    markers = {(m.ref, m.time): m for m in rite.markers if m.kind == "speech"}
    for event in said(rite):
        marker = markers[(event.cue, event.time)]
        assert event.lyric in marker.text
        assert f"「{event.lyric}」" in marker.gloss
    report = next(m for m in markers.values() if m.quote == "為政請射")
    assert report.gloss.startswith("The archery director") or "(司射)" in report.gloss
