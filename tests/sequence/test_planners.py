"""The sequencer's small planners, each on its own (issue 29, item 10): the music, the
shoots and the moves of people answer the clock without the rest of the planner."""

import pytest

from soundscape.music.tuning import default_tuning
from soundscape.sequence.music_plan import MusicPlan
from soundscape.sequence.people import People
from soundscape.sequence.players import build_players
from soundscape.sequence.settings import load_settings
from soundscape.sequence.shooting import find_shoots


@pytest.fixture
def music(sheet, site):
    return MusicPlan(sheet, default_tuning(), build_players(sheet, site), seed=0, zhong=None,
                     wusuan_seconds=None, singers="tenor")


def _cue(sheet, cue_id):
    return next(c for c in sheet.music if c.id == cue_id)


def test_music_bound_music_has_its_own_length(music, sheet):
    played = music.start(_cue(sheet, "luming"), 100.0, arranged_by_shoot=False)
    assert played.end == played.arrangement.end > 60.0  # 鹿鳴 三終: minutes, not seconds
    span, = music.spans()
    assert (span.start, span.end, span.bound) == (100.0, 100.0 + played.end, "music")
    assert span.tempo_bpm == played.arrangement.tempo_bpm


def test_rite_bound_music_ends_on_the_first_phrase_end_after_its_stop_step(music, sheet):
    cue = _cue(sheet, "sixia")
    played = music.start(cue, 10.0, arranged_by_shoot=False)
    assert played.end is None  # the rite decides how long it plays
    stop = sheet.step(cue.stop)
    earliest = music.wait(stop, 130.0)
    ends = [e for e in played.arrangement.phrase_ends if e >= 120.0 - 1e-9]
    assert played.end == ends[0] and earliest == 10.0 + played.end >= 130.0


def test_a_shooting_piece_cannot_stop_at_a_step(music, sheet):
    from dataclasses import replace

    from soundscape.errors import CueSheetError

    cue = replace(_cue(sheet, "lishou"), kind="ge")
    with pytest.raises(CueSheetError, match="is a shooting piece"):
        music.start(cue, 0.0, arranged_by_shoot=False)


def test_the_shoots_stand_where_the_settings_say(sheet):
    shoots = find_shoots(sheet, load_settings().rounds)
    assert [s.number for s in shoots.values()] == [0, 1, 2, 3]
    counted = {s.number: s.count_step for s in shoots.values()}
    assert counted[0] is counted[1] is None and counted[2] and counted[3]
    assert all(any(w in sheet.step(counted[n]).quote for w in ("視算", "視筭")) for n in (2, 3))
    two = next(s for s in shoots.values() if s.number == 2)
    assert len(two.parts()) == 2  # 再射釋獲, then 公及諸公卿大夫射


def test_the_count_is_found_as_the_edition_spells_it():
    # the 鄉射禮's edition prints 視筭; the data names the word once, 視算
    from soundscape import cuesheet
    from soundscape.resources import bundled_dir
    from soundscape.sequence.archery import load_config
    from soundscape.sequence.settings import round_specs

    sheet = cuesheet.load(bundled_dir("cues") / "xiangshe.toml")
    config = load_config(rite="xiangshe")
    specs = round_specs(config.data["round"], "archery.toml")
    assert {s.count_at for s in specs if s.count_at} == {"視算"}
    counted = [s.count_step for s in find_shoots(sheet, specs).values() if s.count_step]
    assert len(counted) == 2 and all("視筭" in sheet.step(c).quote for c in counted)


def test_the_words_of_the_text_move_the_gong(sheet, site):
    players = build_players(sheet, site)
    people = People(sheet, site, players, load_settings())
    step = next(s for s in sheet.steps if "東坫之東南" in s.quote)
    people.at_step(step, 50.0)
    for id_, source in players.sources.items():
        if source.group == "gong":
            who = id_.split(".", 1)[1]
            assert source.position_at(50.0) == site.performer_position(who, "zuo").position
    people.music_starts("guan", 60.0)
    assert players.sources["gong.dashi"].position_at(61.0) == \
        site.performer_position("dashi", "guan").position
