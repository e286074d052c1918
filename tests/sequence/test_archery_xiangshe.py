"""The 鄉射禮's shooting, simulated on its own site: one 侯, 三耦 alone in the first round,
賓與主人, 大夫 and 衆賓 after them, and in the third round every counted arrow loosed on a
stroke of 騶虞's drum, five 節 a pair (鄭注: 五節 … 一節之間當拾發, 四節四拾, 其一節先以聽也).
The rite is sequenced once for the whole session."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from soundscape import cuesheet
from soundscape.cli.archery import command
from soundscape.music.tuning import default_tuning
from soundscape.resources import bundled_dir
from soundscape.sequence import archery, archery_events
from soundscape.sequence.planner import perform, perform_from_file
from soundscape.site.courtyard import load_site

SEED = 3


@pytest.fixture(scope="session")
def xiangshe():
    return perform_from_file(bundled_dir("cues") / "xiangshe.toml", seed=SEED)


@pytest.fixture(scope="session")
def config():
    return archery.load_config(rite="xiangshe")


def _round(performance, number):
    return next(r for r in performance.rounds if r.number == number)


def test_xiangshe_is_shot_on_its_own_site_at_one_target(xiangshe):
    assert [r.number for r in xiangshe.rounds] == [0, 1, 2, 3]
    assert {shot.target for r in xiangshe.rounds for shot in r.shots} == {"hou"}
    target = xiangshe.sources["archery.target.hou"].position
    site = load_site(rite="xiangshe")
    assert target == pytest.approx(site.place("hou"))
    assert -target[1] == pytest.approx(site.metres(50, "弓"))
    assert "archery.target.dahou" not in xiangshe.sources
    assert xiangshe.sources["voice.huozhe.hou"].position[:2] == pytest.approx(
        site.place("fa_hou")[:2])


def test_first_round_is_the_three_pairs_alone_then_everyone(xiangshe):
    """初射: 三耦卒射 (獲而未釋獲); then 賓與主人 (主人為下射), 大夫 (為下射, with a 士), 衆賓:
    ten pairs, the norm of the 記's 八十 算 (鄭注: 略以十耦為正)."""
    first, second, third = (_round(xiangshe, n) for n in (1, 2, 3))
    assert [t.pair for t in first.turns] == ["sanou.1", "sanou.2", "sanou.3"]
    assert len(first.shots) == 3 * 8 and not any(s.counted for s in first.shots)
    pairs = [t.pair for t in second.turns]
    assert pairs[:4] == ["sanou.1", "sanou.2", "sanou.3", "binzhu"] and len(pairs) == 10
    assert [t.pair for t in third.turns] == pairs
    host = [s for s in second.shots if s.archer == "zhuren"]
    assert {s.role for s in host} == {"xia"} and len(host) == 4
    turn = next(t.index for t in second.turns if t.pair == "binzhu")
    order = [s.archer for s in second.shots if s.turn == turn]
    assert order[:2] == ["bin", "zhuren"]  # the 上射 looses first: no lord here
    assert len(_round(xiangshe, 0).shots) == 4  # 誘射 將乘矢


def test_third_round_releases_fall_on_zouyu_strokes(xiangshe, config):
    """Five 節 a pair, one heard; each of the other four carries one 拾, both arrows on a
    drum stroke the music sounds (onsets in ms); only on-beat hits are counted."""
    third = _round(xiangshe, 3)
    drums = sorted(e.time for e in xiangshe.events if e.piece == "zouyu"
                   and xiangshe.sources[e.source].instrument == "jiangu")
    assert drums
    tolerance = config.number("music", "tolerance_s")
    assert tolerance == third.tolerance_s
    for turn in third.turns:
        assert len(turn.jie) == 5
        shots = [s for s in third.shots if s.turn == turn.index]
        assert len(shots) == 8
        for k, pair_of in enumerate(zip(shots[::2], shots[1::2], strict=True)):
            opening, closing = turn.jie[k], turn.jie[k + 1]   # 節 1 heard; 節 2–5 shot
            for shot in pair_of:  # aimed at a stroke inside its 節; loosed around it
                assert opening < shot.stroke <= closing + 1e-9
                assert shot.bound and shot.stroke in turn.strokes
                nearest = min(drums, key=lambda t: abs(t - shot.stroke))
                assert abs(nearest - shot.stroke) * 1000 < 1.0  # a stroke the drum plays
    for shot in third.shots:
        assert shot.on_beat == (abs(shot.offset) <= tolerance)
        assert shot.counted == (shot.called and shot.on_beat)
        if shot.counted:  # 不鼓不釋: a counted arrow left within 100 ms of a drum stroke
            assert min(abs(t - shot.release) for t in drums) * 1000 <= tolerance * 1000 + 1
    assert any(s.counted for s in third.shots) and any(s.called and not s.counted
                                                        for s in third.shots)
    # 間若一: the 節 are evenly spaced
    gaps = np.diff([t for turn in third.turns for t in turn.jie])
    assert gaps.min() == pytest.approx(gaps.max())


def test_zouyu_plays_five_passes_a_pair_in_the_third_round(xiangshe):
    span = next(m for m in xiangshe.music if m.piece == "zouyu")
    third = _round(xiangshe, 3)
    assert third.jie and len(third.jie) == 5 * len(third.turns)
    assert span.start < third.jie[0] and third.jie[-1] <= span.end + 1e-6


@pytest.mark.parametrize("number", [2, 3])
def test_tally_spoken_equals_tally_counted(xiangshe, number):
    shoot = _round(xiangshe, number)
    right = sum(s.counted for s in shoot.shots if s.side == "right")
    left = sum(s.counted for s in shoot.shots if s.side == "left")
    assert (shoot.right.total, shoot.left.total) == (right, left)
    assert shoot.announcement == archery.announcement(right, left)
    lays = [e for e in xiangshe.events if e.source == "archery.tally"
            and e.articulation == "lay" and shoot.start <= e.time <= shoot.end + 30]
    assert len(lays) == right + left
    said = [e for e in xiangshe.events if e.source == "voice.shihuozhe"]
    spoken = "".join(e.lyric for e in said)
    assert shoot.announcement in spoken
    for tally in shoot.tallies:
        assert tally.taken == 8 and tally.right + tally.left + tally.returned == 8


def test_commands_are_the_xiangshe_own_words(xiangshe, config):
    spoken = "".join(e.lyric for e in sorted(xiangshe.events, key=lambda e: e.time)
                     if e.source == "voice.sishe")
    for words in ("無射獲無獵獲", "不貫不釋", "不鼓不釋"):
        assert words in spoken
    assert spoken.index("無射獲") < spoken.index("不貫") < spoken.index("不鼓")


def test_archery_sources_follow_the_rites_targets(config):
    site = load_site(rite="xiangshe")
    sources = archery_events.archery_sources(site, config=config)
    assert {s for s in sources if s.startswith("archery.target")} == {"archery.target.hou"}
    assert sources["voice.shihuozhe"].position[:2] == pytest.approx(site.place("xijie")[:2])
    dashe = archery_events.archery_sources(load_site())
    assert {s for s in dashe if s.startswith("archery.target")} == {
        "archery.target.dahou", "archery.target.can", "archery.target.gan"}


def test_a_roster_count_of_another_rite_is_refused(config):
    with pytest.raises(archery.ArcheryError, match=r"\['zhongou'\] are not this rite's; "
                       r"accepted: sanou, dafu_pairs, zhongbin_pairs"):
        archery.build_roster(config=config, rng=np.random.default_rng(0), counts={"zhongou": 1})


def test_a_heard_jie_the_piece_does_not_hear_is_refused(config):
    bad = archery.ArcheryConfig({**config.data, "music": {**config.data["music"],
                                                          "heard_jie": 3}}, "bad.toml")
    from soundscape.sequence.planner import SequenceOptions

    sheet = cuesheet.load(bundled_dir("cues") / "xiangshe.toml")
    with pytest.raises(Exception, match=r"bad.toml: music.heard_jie = 3, but piece 'zouyu' "
                       r"hears 1"):
        perform(sheet, site=load_site(rite="xiangshe"), tuning=default_tuning(), seed=0,
                options=SequenceOptions(archery=bad, soundscape=False))


def test_yan_sequences_without_targets():
    performance = perform_from_file(bundled_dir("cues") / "yan.toml", seed=0,
                                    to_section="s01")
    assert performance.rounds == ()
    assert not any(s.startswith("archery.") for s in performance.sources)


def test_cli_reports_the_rites_shooting(tmp_path):
    result = CliRunner().invoke(command, ["--rite", "xiangshe", "--seed", str(SEED),
                                          "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert ("鄉射禮: 1 target (hou 69.3 m); 10 pairs; 4 shoots; round 3 to music: "
            "5 節 a pair (1 heard, 4 with one 拾 each)") in result.output
    assert (tmp_path / "round3.csv").is_file()


@pytest.mark.parametrize("table, message", [
    ('[rite.xiangshe.roster]\ngroup = [{ id = "x", count = "sanou" }]\n',
     r"roster.group\[0\] \(x\) needs label, shang, xia"),
    ('[[rite.xiangshe.roster.group]]\nid = "p"\nname = "P"\n'
     'archers = [{ id = "a", name = "A", rank = "shi", role = "shang" }]\n',
     r"\(p\): archers must be one 上射"),
    ('[[rite.xiangshe.roster.group]]\nid = "s"\ncount = "sanou"\nlabel = "耦"\n'
     'shang = "shi"\nxia = "moon"\n', r"ranks \['shi', 'moon'\]; accepted: dafu, gong"),
    ('[rite.xiangshe]\nreplace = "targets"\n', r"rite.xiangshe.replace = 'targets' must be a "
     r"list"),
])
def test_a_bad_rite_table_is_named(tmp_path, table, message):
    bundled = (archery.data_dir() / "archery.toml").read_text(encoding="utf-8")
    start = bundled.index("\n[rite.xiangshe]\n") + 1
    path = tmp_path / "archery.toml"
    path.write_text(bundled[:start] + table, encoding="utf-8")
    with pytest.raises(archery.ArcheryError, match=message):
        archery.load_config(path, rite="xiangshe")


def test_the_gong_sing_zouyu_from_below(xiangshe):
    """工遷樂于下 … 阼階下之東南, 堂前三笴 (鄭注: 當辟射也) before the shooting; 升自西階反坐
    after it: 騶虞 is sung and played from below, east of the 阼階, not from the hall."""
    site = load_site(rite="xiangshe")
    below = site.performer_positions("zuo")
    third = _round(xiangshe, 3)
    singers = {e.source for e in xiangshe.events if e.piece == "zouyu"
               and xiangshe.sources[e.source].group == "gong"}
    assert singers
    for source_id in singers:
        source = xiangshe.sources[source_id]
        where = [w for t, w in source.moves if t <= third.start][-1]
        assert where == pytest.approx(below[source_id.split(".", 1)[1]].position)
        assert where[2] < site.hall.height  # on the ground
        assert source.moves[-1][1][2] > site.hall.height  # back on the hall afterwards


def test_the_gong_are_moved_by_one_table_of_the_texts_words():
    """sequence.toml [[gong_move]] is the one place words of the text move the 工 (the
    大射's 東坫之東南, 鄉射's 阼階下之東南 and 升自西階反坐): each quotes its passage, which
    the rite's text holds, and names a phase of that rite's site."""
    from soundscape.fileio import read_toml
    from soundscape.resources import data_dir
    from soundscape.text.derive.rites import load_rite_text
    from soundscape.text.hanzi import normalise

    rite_of = {"大射儀": "dashe", "鄉射禮": "xiangshe"}
    moves = read_toml(data_dir() / "sequence.toml")["gong_move"]
    assert [(m["chapter"], m["at"], m["phase"]) for m in moves] == [
        ("大射儀", "東坫之東南", "zuo"), ("鄉射禮", "阼階下之東南", "zuo"),
        ("鄉射禮", "升自西階反坐", "ge")]
    for move in moves:
        rite = rite_of[move["chapter"]]
        chars = load_rite_text(rite).chars
        parts = ["".join(c for c in normalise(part) if c not in "，。、")
                 for part in move["passage"].split("…")]
        assert all(part in chars for part in parts), move
        assert any(move["at"] in part for part in parts)
        assert move["phase"] in load_site(rite=rite).phases
    assert not any(hasattr(p, "at") for p in load_site(rite="xiangshe").phases.values())


def test_a_part_the_rite_has_no_instrument_for_is_said(xiangshe, soundscape_cli, tmp_path):
    """騶虞's 鼙 part (the 投壺 pattern's ○, 13 of its 23 strokes) went silent in the 鄉射,
    which places no 鼙, without a word. The Performance, the MIDI file and the command say
    it; every instrument the 大射 places plays its pieces' parts."""
    import mido

    zouyu = xiangshe.pieces["zouyu"]
    assert zouyu.unplayed == ("bi (pi)",)
    assert not any(e.piece == "zouyu" and xiangshe.sources[e.source].instrument == "pi"
                   for e in xiangshe.events)
    dashe = perform_from_file(seed=0, from_section="s18", to_section="s18")
    assert all(not p.unplayed for p in dashe.pieces.values())
    code, err = soundscape_cli("midi", "--rite", "xiangshe", "--from", "s31", "--to", "s31",
                               "-o", "x.mid", cwd=tmp_path)
    assert code == 0
    assert "note: 騶虞 (zouyu): its part bi (pi) not played: the rite places no such " \
        "instrument" in err, err
    texts = [m.text for m in mido.MidiFile(tmp_path / "x.mid", charset="utf-8").tracks[0]
             if m.type == "text"]
    assert any(t.startswith("騶虞") and t.endswith("such instrument): bi (pi).") for t in texts)
