"""Arranging pieces into timed parts: notes, roles, phrase ends, 終 and 節."""

from __future__ import annotations

import itertools

import pytest

from soundscape.errors import RepertoireError
from soundscape.music.arrange import arrange
from soundscape.music.repertoire import load_piece
from soundscape.music.tuning import Tuning

TUNING = Tuning.sanfen_sunyi(huangzhong_hz=261.63)


@pytest.fixture(scope="module")
def luming():
    return load_piece("luming")


def _close(a: float, b: float) -> bool:
    return abs(a - b) < 1e-9


def test_luming_sounds_its_103_notes_three_times_in_order(luming):
    arr = arrange(luming, tuning=TUNING)
    song = arr.parts["song"]
    assert len(song) == 3 * 103
    for zhong in range(3):
        sung = song[zhong * 103:(zhong + 1) * 103]
        assert [n.pitch.name for n in sung] == [n.name for n in luming.notes]
        assert [n.lyric for n in sung] == [n.lyric for n in luming.notes]
        assert _close(sung[0].pitch.hz, TUNING.pitch(luming.notes[0].name).hz)
    assert len(arr.zhong) == 3
    # Per 終, the stanzas have 32 + 36 + 35 notes.
    per_stanza = [sum(1 for n in song if arr.phrases[n.phrase].stanza == s
                      and arr.phrases[n.phrase].zhong == 0) for s in range(3)]
    assert per_stanza == [32, 36, 35]


def test_luming_stanza_reading_sings_the_three_stanzas_once(luming):
    arr = arrange(luming, tuning=TUNING, reading="stanza")
    assert len(arr.parts["song"]) == 103
    assert len(arr.zhong) == 3
    assert [p.stanza for p in arr.phrases if p.zhong == 1] == [1] * 8


def test_melody_is_continuous_within_a_zhong_with_rests_between(luming):
    arr = arrange(luming, tuning=TUNING)
    beat = 60.0 / luming.tempo_bpm
    for a, b in itertools.pairwise(arr.parts["se"]):
        gap = b.time - (a.time + a.duration)
        same = arr.phrases[a.phrase].zhong == arr.phrases[b.phrase].zhong
        assert _close(gap, 0.0 if same else luming.zhong.rest_beats * beat), (a, b)
    assert all(n.lyric is None for n in arr.parts["se"])


def test_phrase_ends_are_the_ends_of_the_last_notes(luming):
    arr = arrange(luming, tuning=TUNING, repeats=1)
    assert len(arr.phrase_ends) == len(luming.phrases)
    for k, end in enumerate(arr.phrase_ends):
        last = [n for n in arr.parts["song"] if n.phrase == k][-1]
        assert _close(last.time + last.duration, end)
    assert _close(arr.end, arr.phrase_ends[-1])


def test_tempo_scales_every_time(luming):
    slow = arrange(luming, tuning=TUNING, repeats=1)
    fast = arrange(luming, tuning=TUNING, repeats=1, tempo_bpm=2 * luming.tempo_bpm)
    for a, b in zip(slow.notes(), fast.notes(), strict=True):
        assert _close(a.time, 2 * b.time) and _close(a.duration, 2 * b.duration)


def test_jinzou_start_calls_phrase_end_bells_and_beat():
    piece = load_piece("sixia")
    arr = arrange(piece, tuning=TUNING)
    beat = 60.0 / piece.tempo_bpm
    (tao,), (shuo,), (ying,) = arr.parts["tao"], arr.parts["shuopi"], arr.parts["yingpi"]
    first = arr.parts["bells"][0]
    assert tao.time == 0.0 < shuo.time < ying.time < first.time == arr.music_start
    assert tao.articulation == "shake" and tao.pitch is None
    bo = arr.parts["bo"]
    assert len(bo) == len(piece.phrases) == 15
    for k, stroke in enumerate(bo):
        last = [n for n in arr.parts["bells"] if n.phrase == k][-1]
        assert _close(stroke.time, last.time) and stroke.pitch.name == "倍黃鍾"
    drums = arr.parts["jiangu"]
    assert all(_close(b.time - a.time, beat) for a, b in itertools.pairwise(drums))
    assert _close(drums[0].time, first.time)
    assert drums[-1].time < arr.end


def test_lishou_jie_are_evenly_spaced_and_closed_by_the_drum():
    piece = load_piece("lishou")
    arr = arrange(piece, tuning=TUNING)
    beat = 60.0 / piece.tempo_bpm
    assert len(arr.jie) == 7 and len(arr.shooting_jie) == 4 and arr.heard == 3
    spacing = {round(b - a, 9) for a, b in itertools.pairwise(arr.jie)}
    assert len(spacing) == 1, spacing
    pass_beats = sum(n.beats for n in piece.notes) + piece.jie.close_beats
    assert _close(spacing.pop(), pass_beats * beat)
    assert [n.time for n in arr.parts["jie"]] == list(arr.jie)
    strokes = piece.jie.pattern.strokes
    for k, jie in enumerate(arr.jie):
        # the song's pass ends on the 節
        assert _close(arr.phrases[8 * k + 7].end, jie)
        drum = sorted((n for n in arr.parts["bi"] + arr.parts["gu"]
                       if jie - len(strokes) * beat - 1e-9 <= n.time < jie),
                      key=lambda n: n.time)
        assert "".join("○" if n.part == "bi" else "□" for n in drum) == strokes
        assert _close(drum[-1].time, jie - beat)


def test_lishou_count_follows_repeats():
    arr = arrange(load_piece("lishou"), tuning=TUNING, repeats=9)
    assert len(arr.jie) == 9 and len(arr.shooting_jie) == 6


@pytest.mark.parametrize("seconds", [3.0, 33.3, 60.0, 400.0])
def test_fill_stops_on_the_last_phrase_end_within_the_span(seconds):
    piece = load_piece("sixia")
    arr = arrange(piece, tuning=TUNING, fill_seconds=seconds)
    ends = arr.phrase_ends
    if ends[-1] > seconds:  # the span is shorter than one phrase: one phrase is played
        assert len(ends) == 1
        return
    longer = arrange(piece, tuning=TUNING, fill_seconds=seconds + 1000)
    assert longer.phrase_ends[:len(ends)] == ends
    assert longer.phrase_ends[len(ends)] > seconds
    assert arr.parts["bells"][-1].time + arr.parts["bells"][-1].duration <= seconds + 1e-9


def test_wusuanyue_fills_its_time_with_whole_stanzas():
    piece = load_piece("wusuanyue")
    arr = arrange(piece, tuning=TUNING)
    assert arr.end <= piece.fill_seconds
    last = arr.phrases[-1]
    assert last.index == piece.stanza_phrases[last.stanza][-1]
    assert arr.end > piece.fill_seconds - 120  # within about one stanza of the target


def test_same_inputs_same_arrangement(luming):
    a = arrange(luming, tuning=TUNING, reading="stanza", repeats=5)
    b = arrange(luming, tuning=TUNING, reading="stanza", repeats=5)
    assert a == b


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"reading": "verse"}, "reading 'verse'"),
    ({"repeats": 0}, "repeats=0"),
    ({"tempo_bpm": 0}, "tempo_bpm=0"),
    ({"fill_seconds": -1.0}, "fill_seconds=-1.0"),
])
def test_bad_options_fail_clearly(luming, kwargs, match):
    with pytest.raises(RepertoireError, match=match):
        arrange(luming, tuning=TUNING, **kwargs)


def test_shooting_piece_cannot_be_filled():
    with pytest.raises(RepertoireError, match="節"):
        arrange(load_piece("lishou"), tuning=TUNING, fill_seconds=100.0)
