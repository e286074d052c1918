"""The sequencer: music timed to the rite, the rite timed to the music, and the shoots."""

import math
import tomllib

import numpy as np
import pytest

from soundscape import cuesheet
from soundscape.errors import CueSheetError, PerformanceError
from soundscape.music.repertoire import load_piece
from soundscape.music.tuning import default_tuning
from soundscape.performance import Performance
from soundscape.resources import data_dir
from soundscape.sequence import archery
from soundscape.sequence.planner import SequenceOptions, perform, perform_from_file
from soundscape.sequence.timeline import Durations


def step_times(performance):
    return {m.ref: m.time for m in performance.markers if m.kind == "step"}


def music(performance, cue):
    return next(m for m in performance.music if m.cue == cue)


def test_every_music_cue_sounds_and_is_traced_to_its_cue(rite, sheet):
    cues = {e.cue for e in rite.events}
    for cue in sheet.music:
        assert cue.id in cues, f"music cue {cue.id} ({cue.quote}) has no sound"
    for event in rite.events:
        if event.piece is not None:
            assert rite.pieces[event.piece].basis in ("surviving", "reconstruction")
    assert rite.pieces["luming"].basis == "surviving"
    assert rite.pieces["sixia"].basis == "reconstruction"


def test_sixia_starts_at_its_step_and_stops_on_a_phrase_end_at_yue_que(rite, sheet):
    times = step_times(rite)
    for cue in (c for c in sheet.music if c.piece == "sixia"):
        span = music(rite, cue.id)
        assert span.start == pytest.approx(times[cue.start])
        assert "樂闋" in sheet.step(cue.stop).quote
        assert span.end == pytest.approx(times[cue.stop]), "樂闋 waits for the phrase end"
        notes = [e for e in rite.events if e.cue == cue.id
                 and rite.sources[e.source].instrument == "bianzhong"]
        assert notes[0].time >= span.start
        last = max(notes, key=lambda e: e.time)
        # the last bell note is the last note of a phrase of the piece
        piece = load_piece("sixia")
        ends = {phrase[-1].name for phrase in piece.phrases}
        assert last.pitch.name in ends
        # held to the phrase end, give or take the players' own timing (data/ensemble.toml:
        # a held length moves by whole steps of length_step, an onset by some tens of ms)
        ensemble = tomllib.loads((data_dir() / "ensemble.toml").read_text(encoding="utf-8"))
        assert last.end == pytest.approx(span.end, abs=ensemble["dynamics"]["length_step"] + 0.1)


def test_luming_sings_its_three_stanzas_three_times_in_order(rite):
    piece = load_piece("luming")
    assert [len(s) for s in piece.stanzas] == [32, 36, 35]
    sung = [e for e in rite.events if e.source == "gong.dashi" and e.cue == "luming"
            and e.articulation == "sing"]  # his breaths between the lines apart
    expected = [n for _ in range(3) for n in piece.notes]
    assert len(sung) == 3 * 103
    # the notes of the score, sung an octave down in the tenor register (data/register.toml)
    tuning = default_tuning()
    assert [e.pitch.name for e in sung] == [tuning.step(n.name, -12).name for n in expected]
    assert [e.lyric for e in sung] == [n.lyric for n in expected]
    assert all(sung[i].time < sung[i + 1].time for i in range(len(sung) - 1))


def test_the_rite_waits_for_san_zhong(rite, sheet):
    times = step_times(rite)
    for cue_id in ("luming", "xingong"):
        cue = sheet.music_cue(cue_id)
        after = sheet.steps[sheet.step_index(cue.start) + 1]
        span = music(rite, cue_id)
        assert span.bound == "music"
        assert times[after.id] >= span.end - 1e-9


def test_round_three_arrows_leave_on_evenly_spaced_jie(rite):
    shoot = next(r for r in rite.rounds if r.number == 3)
    jie = np.array(shoot.jie)
    gaps = np.diff(jie)
    assert np.allclose(gaps, gaps[0], atol=1e-6), "間若一: the 節 are evenly spaced"
    per_turn = 7
    assert len(jie) % per_turn == 0
    strokes = np.array(shoot.strokes)
    tolerance = archery.load_config().number("music", "tolerance_s")
    shots = shoot.shots
    releases = [e.time for e in rite.events if rite.sources[e.source].instrument == "bow"
                and shoot.start <= e.time <= shoot.end]
    assert len(releases) == len(shots) == 8 * len(jie) // per_turn
    for shot in shots:
        if shot.bound:  # aimed at a drum stroke; counted only if released on it
            assert np.min(np.abs(strokes - shot.stroke)) < 1e-9
            if shot.counted:
                assert abs(shot.release - shot.stroke) <= tolerance
        else:  # the duke: 不以樂志
            assert shot.archer == "gong"
    assert sum(not s.bound for s in shots) == 4
    # every stroke the archers loose on is a drum stroke sounded in the performance
    drums = np.array([e.time for e in rite.events
                      if rite.sources[e.source].instrument == "jiangu"])
    assert all(np.min(np.abs(drums - s)) < 1e-6 for s in strokes)
    # ... and one of 貍首's own, on its beat: the first shooter's was a stroke added half a
    # beat off it (beat 15½ of each pass), 36 times
    span = next(m for m in rite.music if m.piece == "lishou")
    beats = (np.array([e.time for e in rite.events if e.piece == "lishou" and
                       rite.sources[e.source].instrument == "jiangu"]) - span.start) \
        * span.tempo_bpm / 60
    assert np.allclose(beats, np.round(beats), atol=1e-6)
    # each turn's arrows fall on its last 4 節: none during the 3 heard ones
    for turn in range(len(jie) // per_turn):
        heard_end = jie[turn * per_turn + 2]
        turn_start = jie[turn * per_turn] - gaps[0]
        # (margins for the releases scattered around the neighbouring turns' strokes)
        assert not [t for t in releases if turn_start + 1.0 < t < heard_end + 1.0]


def test_changing_a_duration_moves_what_follows_and_nothing_before(sheet, site):
    base_options = SequenceOptions()
    base = perform(sheet, site=site, tuning=default_tuning(), seed=1, options=base_options)
    # an action first used well into the rite, at a step no music holds, and never used
    # while shooting (the steps that narrate a shoot are spread over its simulated length);
    # no text before tells anyone to do it, and its step's text names it once (a step lasts
    # what its text tells its doer to do)
    shooting = {s.section for s in sheet.steps if "射" in sheet.section(s.section).name}
    used_in_shooting = {s.action for s in sheet.steps if s.section in shooting}
    music_steps = {c.start for c in sheet.music} | {c.stop for c in sheet.music}
    seen = {}
    for index, step in enumerate(sheet.steps[:250]):
        seen.setdefault(step.action, index)
    action = max((a for a, i in seen.items() if a not in used_in_shooting
                  and sheet.steps[i].id not in music_steps
                  and sheet.steps[i + 1].id not in music_steps
                  and not any(a in s.quote for s in sheet.steps[:i])
                  and sheet.steps[i].quote.count(a) == 1), key=seen.get)
    first = sheet.steps[seen[action]]
    slower = SequenceOptions(durations=base_options.durations.replace(
        actions={action: base_options.durations.action_seconds(action) + 30.0}))
    changed = perform(sheet, site=site, tuning=default_tuning(), seed=1, options=slower)
    before, after = step_times(base), step_times(changed)
    index = sheet.step_index(first.id)
    for step in sheet.steps[:index + 1]:  # the preparation has one marker, not one a step
        assert after.get(step.id) == before.get(step.id), step.id
    following = sheet.steps[index + 1]
    assert after[following.id] == pytest.approx(before[following.id] + 30.0)
    for step in sheet.steps[index + 1:]:
        assert after[step.id] >= before[step.id] - 1e-9, step.id


def test_same_seed_same_performance_and_another_seed_another_shoot(sheet, site, rite):
    again = perform(sheet, site=site, tuning=default_tuning(), seed=7)
    assert again.to_dict() == rite.to_dict()
    other = perform(sheet, site=site, tuning=default_tuning(), seed=8)
    assert [e.time for e in other.events] != [e.time for e in rite.events]


def test_every_voice_cue_sounds_in_its_own_section(rite, sheet):
    times = step_times(rite)
    for voice in sheet.voices:
        sounds = [e for e in rite.events if e.cue == voice.id]
        assert sounds, f"voice cue {voice.id} ({voice.quote}) makes no sound"
        if voice.actor == "fuhou":  # at the step, or (以商) once his 以宮 answer has ended
            start = times[voice.step]
            assert all(start <= e.time <= start + 1.2 + 0.5 for e in sounds), voice.id
    # the 獲者's calls of a two-section round are credited to the section of the shot
    shoot = next(r for r in rite.rounds if r.number == 2)
    duke_turn = next(t for t in shoot.turns if t.pair == "gong")
    lords = sheet.section("公及諸公卿大夫射").id
    for voice in (v for v in sheet.voices if v.actor == "huozhe"):
        for event in (e for e in rite.events if e.cue == voice.id):
            if shoot.start <= event.time <= shoot.end:
                later = event.time >= duke_turn.start
                assert later == (sheet.step(voice.step).section == lords), voice.id


def test_a_negative_seed_is_refused(sheet, site):
    with pytest.raises(PerformanceError, match="seed=-1 must be a whole number >= 0"):
        perform(sheet, site=site, tuning=default_tuning(), seed=-1)


def test_fuhou_answer_gong_from_the_targets_then_shang_from_the_shelters(rite, site):
    tuning = default_tuning()
    answers = [e for e in rite.events if e.source.startswith("voice.fuhou")]
    gong = [e for e in answers if e.pitch.name == tuning.degree(gong="黃鍾", degree="宮").name]
    shang = [e for e in answers if e.pitch.name == tuning.degree(gong="黃鍾", degree="商").name]
    assert gong and shang and len(gong) == len(shang)
    for event in gong:
        target = event.source.rsplit(".", 1)[1]
        assert event.position[:2] == pytest.approx(site.place(target)[:2])
    for event in shang:
        target = event.source.rsplit(".", 1)[1]
        assert event.position[:2] == pytest.approx(site.place(f"fa_{target}")[:2])


def test_sections_cut_with_from_and_to(sheet):
    part = perform_from_file(seed=7, from_section="樂賓", to_section="s18")
    assert part.info.offset > 0
    assert [s.id for s in part.sections] == ["s18"]
    assert part.sections[0].start == 0.0
    assert [m.cue for m in part.music] == ["luming", "xingong"]
    assert part.rounds == ()
    assert {e.cue for e in part.events} >= {"luming", "xingong"}
    assert "sixia" not in {e.cue for e in part.events}
    with pytest.raises(PerformanceError, match="section 'nowhere' is not in this performance; "
                       "performed: s01 戒百官, s02 張侯"):
        perform_from_file(seed=7, from_section="nowhere")


def test_a_cut_shifts_the_round_results_with_the_rest():
    """Arrow times in a part are on the part's clock, like its events."""
    rite = perform_from_file(seed=7)
    whole = rite.rounds[-1]
    section = next(s for s in rite.sections if s.start <= whole.start < s.end)
    part = perform_from_file(seed=7, from_section=section.id, to_section=section.id)
    cut, = part.rounds
    assert cut == whole.shifted(section.start)
    assert whole.start - cut.start == pytest.approx(section.start)
    assert [s.release - section.start for s in whole.shots] == pytest.approx(
        [s.release for s in cut.shots])
    assert [t - section.start for t in whole.turns[0].jie] == pytest.approx(cut.turns[0].jie)
    releases = [s.release for s in cut.shots]
    assert min(releases) >= 0 and max(releases) <= part.duration


def test_unknown_piece_or_place_in_a_sheet_is_a_clear_error(tmp_path):
    text = cuesheet.bundled_path().read_text(encoding="utf-8")
    bad_piece = tmp_path / "piece.toml"
    bad_piece.write_text(text.replace('piece = "xingong"', 'piece = "no_such_piece"'),
                         encoding="utf-8")
    with pytest.raises(CueSheetError, match="no_such_piece"):
        perform_from_file(bad_piece)
    bad_place = tmp_path / "place.toml"
    bad_place.write_text(text.replace('of = "zuojie"', 'of = "no_such_place"', 1),
                         encoding="utf-8")
    with pytest.raises(Exception, match="no_such_place") as caught:
        perform_from_file(bad_place)
    assert isinstance(caught.value, ValueError)


def test_durations_table_from_a_user_file(tmp_path, sheet, site):
    table = tmp_path / "durations.toml"
    table.write_text('[action]\nother = 1.0\n[pace]\nwalk = 1.0\nhurry = 2.0\n',
                     encoding="utf-8")
    quick = perform(sheet, site=site, tuning=default_tuning(), seed=7,
                    options=SequenceOptions(durations=Durations.load(table)))
    slow = perform(sheet, site=site, tuning=default_tuning(), seed=7)
    assert quick.duration < slow.duration


def _heard_from(performance, event):
    """Where an event sounds: its own point, or its source's place at its time."""
    return event.position or performance.sources[event.source].position_at(event.time)


def test_every_section_cut_places_and_times_every_sound_as_the_whole_rite(rite, sheet):
    """A part of the rite is the whole rite seen through a window: the same sounds, at the
    same places, shifted by the section's start (every section, one at a time), and what
    is left of the place's sounds still going at its start, from 0."""
    for section in rite.sections:
        part = rite.cut(section.id, section.id)
        going = [e for e in rite.events if e.time < section.start < e.end
                 and rite.sources[e.source].group == "place"] if section.start > 0 else []
        assert [(e.source, e.time, e.duration) for e in part.events[:len(going)]] == [
            (e.source, 0.0, pytest.approx(e.end - section.start)) for e in going]
        stop = math.inf if section is rite.sections[-1] else section.end  # to the rite's end
        whole = [e for e in rite.events if section.start <= e.time < stop]
        assert len(part.events) == len(going) + len(whole), section.id
        for mine, theirs in zip(part.events[len(going):], whole, strict=True):
            assert mine.time == pytest.approx(theirs.time - section.start, abs=1e-9)
            assert (mine.source, mine.cue, mine.pitch) == (theirs.source, theirs.cue,
                                                            theirs.pitch)
            assert _heard_from(part, mine) == _heard_from(rite, theirs), (section.id, mine)
        for source in part.sources.values():
            for t in (0.0, (section.end - section.start) / 2):
                whole_source = rite.sources[source.id]
                assert source.position_at(t) == whole_source.position_at(t + section.start)


def test_a_part_to_the_last_section_runs_to_the_rites_end(rite):
    """It ended at the section's end, faded (``Info.cut_at``), where the whole rite's bed
    and last sounds go on some seconds more."""
    last = rite.sections[-1]
    part = rite.cut(last.id)
    assert part.info.cut_at is None
    assert part.duration == pytest.approx(rite.duration - last.start)
    assert rite.cut(rite.sections[-2].id, rite.sections[-2].id).info.cut_at == \
        pytest.approx(rite.sections[-2].end - rite.sections[-2].start)


def test_the_musicians_take_their_seats_after_the_pipes(rite, site):
    """卒管 … 上工皆東坫之東南西面北上坐: from then on (無算樂 included) the 工 sound from
    東坫之東南, not from 鼓北 where they stood for 管新宮."""
    wusuan = next(m for m in rite.music if m.piece == "wusuanyue")
    xingong = next(m for m in rite.music if m.piece == "xingong")
    for who in ("dashi", "shaoshi", "shanggong.1", "shanggong.4"):
        source = rite.sources[f"gong.{who}"]
        assert source.position_at(xingong.start + 1) == site.performer_position(who, "guan")\
            .position
        assert source.position_at(wusuan.start) == site.performer_position(who, "zuo").position
    sung = [e for e in rite.events if e.cue == wusuan.cue and e.source.startswith("gong.")]
    assert sung
    duke = site.listener("gong_wei").position
    first = min(sung, key=lambda e: e.time)
    distance = math.dist(_heard_from(rite, first), duke)
    assert 2.0 < distance < 5.0, "東坫之東南 is a few metres from the duke's seat"


def test_the_performance_json_keeps_every_typed_field(rite, tmp_path):
    path = rite.save_json(tmp_path / "rite.json")
    again = Performance.load_json(path)
    assert again == rite
    assert again.rounds[-1].shots == rite.rounds[-1].shots and again.info.seed == 7


def test_every_placed_instrument_sounds_where_the_sources_say(rite, sheet):
    """金石 together in 金奏, 頌磬 with the song, 笙磬 with the winds, 應鼙 answering 朔鼙."""
    counts = {item.id: sum(e.source == item.id for e in rite.events) for item in sheet.layout}
    assert all(counts.values()), {k: v for k, v in counts.items() if not v}
    assert {e.cue for e in rite.events if e.source == "west.songqing"} >= {"luming", "wusuanyue"}
    assert "xingong" in {e.cue for e in rite.events if e.source == "east.shengqing"}
    assert abs(counts["east.yingpi"] - counts["west.shuopi"]) <= 8


def test_every_sung_and_spoken_word_carries_its_phones_in_the_chosen_reading(rite):
    voiced = [e for e in rite.events if rite.sources[e.source].instrument == "voice"
              and e.articulation != "inhale"]  # a singer's breath says no word
    assert voiced and all(e.phones for e in voiced)
    assert rite.info.reading == "middle-chinese"
    lu = next(e for e in voiced if e.lyric == "鹿")
    assert lu.phones.split()[-1] == "k", "Middle Chinese keeps the -k coda of 鹿"
    mandarin = perform_from_file(seed=7, from_section="s18", to_section="s18",
                                 options=SequenceOptions(reading="mandarin"))
    lu = next(e for e in mandarin.events if e.lyric == "鹿")
    assert lu.phones.split()[-1] != "k" and mandarin.info.reading == "mandarin"
    with pytest.raises(PerformanceError, match="reading='klingon'"):
        perform_from_file(seed=7, options=SequenceOptions(reading="klingon"))


def test_the_gong_sing_in_their_register(rite):
    """The songs move by whole octaves into the tenor range (data/register.toml)."""
    from soundscape.music.register import voice_part

    tenor = voice_part("tenor")
    for cue in ("luming", "wusuanyue", "lishou"):
        sung = [e for e in rite.events if e.cue == cue and e.articulation == "sing"
                and rite.sources[e.source].instrument == "voice"]
        assert sung and all(tenor.holds(e.pitch.hz) for e in sung), cue
        played = [e for e in rite.events if e.cue == cue and e.lyric is None
                  and rite.sources[e.source].instrument == "se"]
        # the 瑟 keep the notated octave: the song sits whole octaves under it
        ratio = np.median([e.pitch.hz for e in played]) / np.median([e.pitch.hz for e in sung])
        assert math.log2(ratio) == pytest.approx(round(math.log2(ratio)), abs=0.01)


def test_a_voice_stands_where_it_is_heard(rite):
    """The 負侯 answer 商 from the 乏 and a speaker talks at his step's place: from each such
    sound on, the voice's source stands there (once it stood at its first place all rite)."""
    voices = [e for e in rite.events
              if e.position is not None and rite.sources[e.source].instrument == "voice"]
    assert {e.source for e in voices} >= {"voice.fuhou.dahou", "voice.fuhou.gan"}
    for event in voices:
        assert math.dist(rite.sources[event.source].position_at(event.time),
                         event.position) < 0.01, event


@pytest.mark.parametrize("section", ["s27", "s32"])
def test_a_cut_starts_the_fuhou_where_the_whole_rite_has_them(rite, site, section):
    """In --from s27 and --from s32 the 負侯 stood at their 侯, 13.9 m east of the 乏 where
    their last answer (又諾以商 至乏聲止) left them in the whole rite."""
    from soundscape.sound.adm import _tracks

    start = rite.section(section).start
    part = rite.cut(section)
    tracks = _tracks(part)
    for target in site.targets.values():
        key = f"voice.fuhou.{target.id}"
        last = [e.position for e in rite.events if e.source == key and e.time < start][-1]
        fa = site.place(target.fa)
        assert last[:2] == fa[:2]
        assert part.sources[key].position_at(0.0) == rite.sources[key].position_at(start) == last
        assert tracks[key][0][1] == last  # the ADM object starts at the 乏 too


def test_every_person_stands_at_a_cut_where_the_whole_rite_has_him(rite):
    """Every source (the 工, the 負侯, the speakers …) at the start and middle of every
    section's cut stands where the whole rite has it at that time."""
    for span in rite.sections:
        part = rite.cut(span.id, span.id)
        for key, source in part.sources.items():
            for t in (0.0, (span.end - span.start) / 2):
                assert source.position_at(t) == rite.sources[key].position_at(span.start + t)


def test_a_section_is_named_by_id_name_or_heading_the_same_way_everywhere(rite, tmp_path):
    """--from s18, 樂賓 and 右樂賓 (the heading, as the docs promise) cut the same part, the
    sequenced rite and a saved one alike; an unknown name lists ids with names."""
    from soundscape.cli._common import Sequencing

    path = rite.save_json(tmp_path / "rite.json")
    parts = [rite.cut(name, name) for name in ("s18", "樂賓", "右樂賓")]
    saved = Sequencing("右樂賓", "右樂賓", 0, None, None, None, None, path).perform(None)
    assert parts[0] == parts[1] == parts[2]
    assert saved.events == parts[0].events and saved.info.offset == parts[0].info.offset
    with pytest.raises(PerformanceError, match=r"section 'nowhere' is not in this "
                                               r"performance; performed: s01 戒百官, "):
        Sequencing("nowhere", None, 0, None, None, None, None, path).perform(None)
    with pytest.raises(PerformanceError, match=r"section 's20' .* comes after 's18'"):
        rite.cut("s20", "s18")


def test_every_music_span_keeps_the_tempo_it_was_played_at(rite):
    """The MIDI writer reads each piece's tempo here, not in the repertoire."""
    assert rite.music
    for span in rite.music:
        piece = load_piece(span.piece)
        assert span.tempo_bpm == piece.tempo_bpm, span
