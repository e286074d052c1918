"""Captions: the passages, sound descriptions, sung and spoken words, in WebVTT and SRT."""

from __future__ import annotations

import webvtt

from soundscape.kit.captions import captions, describe_music, write_srt, write_vtt
from tests.kit.scenes import rite


def test_music_is_described_by_family_piece_basis_and_direction():
    perf = rite()
    begins = next(m for m in perf.markers if m.kind == "music")
    assert describe_music(perf, begins, (0.0, 0.0, 1.5)) == \
        "[bells, drums and voices: 肆夏 (reconstruction), from the east and west]"
    # heard from far east of everything: it all comes from the west
    assert describe_music(perf, begins, (40.0, 0.0, 1.5)).endswith("from the west]")


def test_steps_words_and_calls_are_captioned_in_time():
    found = captions(rite(), listener_at=(0.0, 0.0, 1.5))
    texts = [(c.start, c.kind, c.text) for c in found]
    assert (0.0, "step", "樂人宿縣於阼階東\n(yueren · xuan)") in texts
    assert (4.0, "step", "奏肆夏") in texts  # the gloss 'other' says nothing: dropped
    spoken = [c for c in found if c.kind == "spoken"]
    assert [(c.start, c.text) for c in spoken] == [(1.0, "負侯: 諾")]  # three voices, one call
    sung = [c for c in found if c.kind == "sung"]
    assert [(c.start, c.text) for c in sung] == [(5.0, "♪ 呦呦鹿鳴 ♪")]
    assert abs(sung[0].end - (5.0 + 3 * 0.4 + 0.35)) < 1e-9
    step = next(c for c in found if c.text.startswith("樂人"))
    assert step.end == 4.0  # until the next step


def test_vtt_and_srt_read_back_with_the_same_times_and_text(tmp_path):
    found = captions(rite())
    vtt = webvtt.read(write_vtt(found, tmp_path / "a.vtt"))
    srt = webvtt.from_srt(write_srt(found, tmp_path / "a.srt"))
    for parsed in (vtt, srt):
        assert len(parsed.captions) == len(found)
        for got, want in zip(parsed.captions, found, strict=True):
            assert abs(got.start_in_seconds + got.start_time.milliseconds / 1000
                       - want.start) < 0.001 or abs(_seconds(got.start) - want.start) < 0.001
            assert got.text == want.text
    assert (tmp_path / "a.srt").read_text().splitlines()[1] == "00:00:00,000 --> 00:00:04,000"


def _seconds(stamp: str) -> float:
    h, m, s = stamp.replace(",", ".").split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def test_long_music_is_captioned_to_its_end():
    from dataclasses import replace

    from soundscape.performance import MusicSpan

    perf = replace(rite(), music=(MusicSpan("sixia", "sixia", 4.0, 20.0, "rite"),))
    on = [c for c in captions(perf) if c.text == "[♪ 肆夏 (reconstruction) ♪]"]
    assert [(c.start, c.end) for c in on] == [(10.0, 20.0)]


def test_speech_is_captioned_a_phrase_at_a_time_with_its_english_line():
    from soundscape.performance import Event, Marker, Performance, Source

    perf = rite()
    speaker = Source("speech.sishe", "voice", "司射", "sishe (speaking)", "speech",
                     (0.0, 5.0, 1.6))
    said = [Event(2.0 + 0.3 * i, 0.25, "speech.sishe", None, 0.7, "call", "req", lyric=ch)
            for i, ch in enumerate("請射")]
    marker = Marker(2.0, "speech", "司射：請射", "the archery director calls out: 「請射」",
                    "req", "請射")
    perf = Performance.build([*perf.events, *said], [*perf.markers, marker],
                             {**perf.sources, "speech.sishe": speaker}, pieces=perf.pieces,
                             info=perf.info, sections=perf.sections, music=perf.music)
    spoken = [(c.start, c.text) for c in captions(perf) if c.kind == "spoken"]
    assert spoken == [(1.0, "負侯: 諾"),
                      (2.0, "司射：請射\n(the archery director calls out: 「請射」)")]
