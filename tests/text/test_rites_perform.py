"""The bundled rites sequence, render a section and write MIDI (music only, for speed)."""

from __future__ import annotations

import itertools

import mido
import numpy as np
import pytest
import soundfile

from soundscape.output.midi import write_midi
from soundscape.resources import bundled_dir
from soundscape.sequence.planner import SequenceOptions, perform_from_file
from soundscape.site.listeners import Listener
from soundscape.sound.render import render_audio


def _perform(rite: str, **options):
    return perform_from_file(bundled_dir("cues") / f"{rite}.toml",
                             options=SequenceOptions(soundscape=False, **options))


@pytest.fixture(scope="module")
def xiangyinjiu():
    return _perform("xiangyinjiu")


def _span(performance, piece):
    return next(m for m in performance.music if m.piece == piece)


def test_jian_ge_alternates_song_and_sheng_piece_by_piece(xiangyinjiu):
    order = ["yuli", "yougeng", "nanyoujiayu", "chongqiu", "nanshanyoutai", "youyi"]
    spans = [_span(xiangyinjiu, p) for p in order]
    for earlier, later in itertools.pairwise(spans):
        assert later.start >= earlier.end - 1e-6
    sources = {p: {e.source for e in xiangyinjiu.events if e.piece == p} for p in order}
    instrument = {s.id: s.instrument for s in xiangyinjiu.sources.values()}
    assert {instrument[s] for s in sources["yougeng"]} == {"sheng"}
    assert "voice" in {instrument[s] for s in sources["yuli"]}
    assert "sheng" not in {instrument[s] for s in sources["yuli"]}


def test_the_ji_is_not_performed(xiangyinjiu):
    assert [m.piece for m in xiangyinjiu.music].count("gaixia") == 1  # the 記's 陔作 left out
    last = max(s.end for s in xiangyinjiu.sections)
    assert all(m.end <= last + 1e-6 for m in xiangyinjiu.music)


def test_gai_has_no_bells_in_a_xiang_rite(xiangyinjiu):
    instrument = {s.id: s.instrument for s in xiangyinjiu.sources.values()}
    played = {instrument[e.source] for e in xiangyinjiu.events if e.piece == "gaixia"}
    assert "jiangu" in played and not played & {"bianzhong", "bo"}  # 鄭注: 大夫士鼓而已


def test_a_section_writes_midi_and_renders(xiangyinjiu, tmp_path):
    span = _span(xiangyinjiu, "nangai")
    part = xiangyinjiu.between(span.start, span.start + 8.0)
    listener = Listener((0.0, -10.0, 1.5), "north")
    midi = write_midi(part, tmp_path / "nangai.mid", listener=listener)
    notes = [m for track in mido.MidiFile(midi).tracks for m in track if m.type == "note_on"]
    assert notes
    result = render_audio(part, tmp_path / "nangai.wav", listener=listener,
                          sample_rate=44100)
    audio, rate = soundfile.read(result.files[0])
    assert rate == 44100 and audio.shape[1] == 2
    assert np.sqrt(np.mean(audio ** 2)) > 1e-3  # the 笙 sound


@pytest.mark.parametrize("rite", ["xiangshe", "yan"])
def test_each_rite_sequences_its_music(rite):
    performance = _perform(rite)
    pieces = [m.piece for m in performance.music]
    assert "wusuanyue" in pieces and "gaixia" in pieces
    assert ("zouyu" in pieces) == (rite == "xiangshe")
    if rite == "xiangshe":  # no rounds simulated: the 五節 played at their length
        zouyu = _span(performance, "zouyu")
        assert zouyu.end - zouyu.start > 60.0
    assert "sixia" not in pieces  # 燕禮's 肆夏 is a variant of its 記, off unless asked


def test_a_variant_plays_inside_the_rite_when_asked():
    performance = _perform("yan", variants=("若以樂納賓",))
    sixia = [m for m in performance.music if m.piece == "sixia"]
    assert len(sixia) == 2
    gai = _span(performance, "gaixia")
    assert all(m.end < gai.start for m in sixia)  # at the guest's entry and the toast


def test_a_variant_is_named_as_any_edition_prints_it():
    """--variant 若以乐纳宾 (简体) was 'unknown; accepted: 若以樂納賓 …'."""
    from soundscape.cuesheet import load, performed
    from soundscape.resources import bundled_dir

    sheet = load(bundled_dir("cues") / "yan.toml")
    assert performed(sheet, ("若以乐纳宾",)) == performed(sheet, ("若以樂納賓",))
    assert performed(sheet, ("若以乐纳宾",)) != performed(sheet)


def test_he_yue_is_song_se_and_sheng_together(xiangyinjiu):
    instrument = {s.id: s.instrument for s in xiangyinjiu.sources.values()}
    for piece in ("guanju", "caipin"):
        events = [e for e in xiangyinjiu.events if e.piece == piece]
        by = {i: sorted(e.time for e in events if instrument[e.source] == i)
              for i in ("voice", "se", "sheng")}
        assert all(by.values())
        span = _span(xiangyinjiu, piece)
        for times in by.values():  # all three sound through the same span
            assert times[0] - span.start < 5.0 and span.end - times[-1] < 10.0
    luming = {instrument[e.source] for e in xiangyinjiu.events if e.piece == "luming"}
    assert "sheng" not in luming  # 工歌 is the 工 and their 瑟 alone


def test_four_gong_two_with_se_in_a_xiang_rite(xiangyinjiu):
    instrument = {s.id: s.instrument for s in xiangyinjiu.sources.values()}
    for piece in ("luming", "guanju"):
        played = {e.source for e in xiangyinjiu.events if e.piece == piece}
        assert len({s for s in played if instrument[s] == "se"}) == 2  # 工四人二瑟
        assert len({s for s in played if instrument[s] == "voice"}) == 2  # 二人歌 (鄭注)


@pytest.fixture(scope="module")
def xiangshe():
    return _perform("xiangshe")


def _gai_instruments(performance) -> set[str]:
    """Instruments sounding while 陔 plays (whatever cue they belong to)."""
    instrument = {s.id: s.instrument for s in performance.sources.values()}
    gai = _span(performance, "gaixia")
    return {instrument[e.source] for e in performance.events
            if e.time < gai.end and e.end > gai.start}


@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe"])
def test_gai_is_a_drum_alone_in_the_xiang_rites(rite, xiangyinjiu, xiangshe):
    """鄭注 on 鄉射禮 奏陔: 「陔夏者，天子諸侯以鍾鼓，大夫士鼓而已」: though the 磬 hangs
    there, a 大夫's or 士's 陔 is the drum and nothing else."""
    performance = {"xiangyinjiu": xiangyinjiu, "xiangshe": xiangshe}[rite]
    assert _gai_instruments(performance) == {"jiangu"}


def test_gai_of_a_lord_has_bells_and_drums():
    """天子諸侯以鍾鼓: in the 大射 (a 諸侯's rite) bells and drums play 陔."""
    from soundscape import cuesheet
    from soundscape.music.arrange import arrange
    from soundscape.music.repertoire import load_piece
    from soundscape.music.tuning import default_tuning
    from soundscape.sequence.players import build_players
    from soundscape.site.courtyard import load_site

    sheet = cuesheet.load(cuesheet.bundled_path())
    players = build_players(sheet, load_site())
    cue = sheet.music_cue("gaixia")
    arrangement = arrange(load_piece("gaixia"), tuning=default_tuning(), repeats=1)
    played = {players.sources[s].instrument for note in arrangement.notes()
              for s in players.assign(cue, note)}
    assert {"bianzhong", "jiangu"} <= played


def test_four_gong_are_the_only_gong_and_every_source_sounds(xiangyinjiu):
    """鄉飲酒禮: 工四人二瑟 — 鄭注: 二瑟，二人鼓瑟，則二人歌也. Exactly two singers and two
    瑟 players exist, and no source of the performance stands silent (no 負侯, no archery
    in a rite without shooting)."""
    gong = {s.id: s.instrument for s in xiangyinjiu.sources.values() if s.group == "gong"}
    assert sorted(gong.values()) == ["se", "se", "voice", "voice"]
    sounding = {e.source for e in xiangyinjiu.events}
    assert set(xiangyinjiu.sources) == sounding


@pytest.fixture(scope="module")
def yan_variants():
    return _perform("yan", variants=("若以樂納賓", "若舞", "記:有房中之樂"))


def test_xin_gong_sounds_after_lu_ming(yan_variants):
    """燕禮 記: 「若以樂納賓，則…升歌鹿鳴，下管新宮，笙入三成，遂合鄉樂」: the 新宮 of the
    管 comes down after the 鹿鳴 is sung, not with it; 三成 is three 終 (鄭注)."""
    luming = _span(yan_variants, "luming")
    xingong = _span(yan_variants, "xingong")
    assert xingong.start >= luming.end - 1e-6
    piece_end = max(e.end for e in yan_variants.events if e.piece == "luming")
    assert min(e.time for e in yan_variants.events if e.piece == "xingong") >= piece_end - 0.5


def test_na_bin_plays_in_place_of_the_rites_gong_ge_sheng_and_jian_ge(yan_variants):
    """With 若以樂納賓 the 記's 升歌鹿鳴, 下管新宮 and 遂合鄉樂 replace the rite's 工歌,
    笙 and 間歌 (鄭注: 不歌四牡皇皇者華; 言遂者，不間也); without it they are played."""
    gone = {"simu", "huanghuangzhehua", "nangai", "baihua", "huashu", "yuli", "yougeng",
            "nanyoujiayu", "chongqiu", "nanshanyoutai", "youyi"}
    kept = {"luming", "guanju", "caipin", "gaixia"}
    for performance, present in ((yan_variants, kept | {"xingong"}), (_perform("yan"), gone)):
        heard = {e.piece for e in performance.events} | {m.piece for m in performance.music}
        assert present <= heard
    assert not gone & ({e.piece for e in yan_variants.events}
                       | {m.piece for m in yan_variants.music})


def test_shao_and_fangzhong_play_as_labelled_reconstructions(yan_variants):
    """若舞則勺 and 有房中之樂 play when asked, one after the other after the 鄉樂
    (鄭注: 既合鄉樂，萬舞而奏之), each a reconstruction with its basis; the 房中之樂 is
    弦歌 … 不用鍾磬之節 (鄭注): voices and 瑟 only, no bell or stone sounds while it plays."""
    shao, fangzhong = _span(yan_variants, "shao"), _span(yan_variants, "fangzhong")
    caipin = _span(yan_variants, "caipin")
    assert caipin.end - 1e-6 <= shao.start < shao.end <= fangzhong.start + 1e-6
    for piece in ("shao", "fangzhong"):
        info = yan_variants.pieces[piece]
        assert info.basis == "reconstruction" and "鄭注" in info.note
    instrument = {s.id: s.instrument for s in yan_variants.sources.values()}
    during = {instrument[e.source] for e in yan_variants.events
              if e.time < fangzhong.end and e.end > fangzhong.start}
    assert during == {"voice", "se"}
    plain = _perform("yan")
    assert not {"shao", "fangzhong", "xingong"} & {m.piece for m in plain.music}


def test_three_sheng_and_a_he_play_the_he_yue_together(xiangshe):
    """鄉射禮 記: 三笙一和而成聲 — four players of the 笙 sound the 合樂 together."""
    names = {s.id: s.name for s in xiangshe.sources.values() if s.instrument == "sheng"}
    assert sorted(names.values()) == ["和", "笙", "笙", "笙"]
    events = [e for e in xiangshe.events if e.piece == "guanju" and e.source in names]
    first = min(e.time for e in events)
    assert {e.source for e in events if e.time < first + 0.2} == set(names)  # in unison


@pytest.fixture(scope="module")
def yan_fangzhong():
    return _perform("yan", variants=("記:有房中之樂",))


def _instruments_of(performance, piece):
    instrument = {s.id: s.instrument for s in performance.sources.values()}
    return [instrument[e.source] for e in performance.events if e.piece == piece]


@pytest.mark.parametrize("piece", ["luming", "simu", "huanghuangzhehua", "yuli", "nanyoujiayu",
                                   "nanshanyoutai", "guanju", "getan", "juaner", "quechao",
                                   "caifan", "caipin"])
def test_the_stones_answer_every_song(xiangyinjiu, yan_fangzhong, piece):
    """頌磬 (the 鄉 rites' one 磬) answers each line of every song the 工 sing, not only the
    first (鹿鳴 alone had it: issue 28); the 房中之樂 is sung without them (鄭注: 弦歌周南召南之
    詩，而不用鍾磬之節也)."""
    for performance in (xiangyinjiu, yan_fangzhong):
        played = _instruments_of(performance, piece)
        assert "voice" in played and played.count("bianqing") >= 10, piece
    assert "bianqing" not in _instruments_of(yan_fangzhong, "fangzhong")
    assert "voice" in _instruments_of(yan_fangzhong, "fangzhong")


def _sheng_alone(performance) -> float:
    """The share of the 無算樂's 笙 notes sounding while no singer sounds (間)."""
    instrument = {s.id: s.instrument for s in performance.sources.values()}
    events = [e for e in performance.events if e.piece == "wusuanyue"]
    sung = sorted((e.time, e.time + e.duration) for e in events
                  if instrument[e.source] == "voice")
    sheng = [e.time for e in events if instrument[e.source] == "sheng"]
    alone = sum(not any(a - 0.5 <= t <= b + 0.5 for a, b in sung) for t in sheng)
    return alone / len(sheng) if sheng else float("nan")


def test_wusuan_with_the_sheng_as_zheng_says(xiangyinjiu, yan_fangzhong):
    """無算樂 with the 笙: 鄉飲酒 and 燕禮 alternate 間 (the 笙 alone) and 合 (all together)
    stanza by stanza (鄭注: 或間或合; 升歌間合); 鄉射 is 合 only (鄭注: 合鄉樂無次數); the 大射,
    with no 笙, is sung with the 瑟 as before."""
    for performance in (xiangyinjiu, yan_fangzhong):
        assert 0.3 < _sheng_alone(performance) < 0.7
        assert "voice" in _instruments_of(performance, "wusuanyue")
    xiangshe = _perform("xiangshe")
    assert "sheng" in _instruments_of(xiangshe, "wusuanyue")
    assert _sheng_alone(xiangshe) < 0.05
    assert "sheng" not in _instruments_of(_perform("dashe"), "wusuanyue")


@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe", "yan"])
def test_gai_lasts_the_guests_walk_to_the_gate(rite):
    """陔 is the rhythm of the guest's going out (鄭注: 陔之言戒也 … 以陔為節): it sounds from his
    going out (鄉飲酒 賓出奏陔: not after he has left) to the end of his walk to the gate,
    heard in footsteps (it was 10.7 s in every rite, the exit silent underfoot)."""
    from soundscape import cuesheet

    sheet = cuesheet.load(bundled_dir("cues") / f"{rite}.toml")
    performance = perform_from_file(bundled_dir("cues") / f"{rite}.toml")
    gai = _span(performance, "gaixia")
    cue = next(c for c in sheet.music if c.piece == "gaixia" and not c.variant)
    out = next(s for s in sheet.steps[[s.id for s in sheet.steps].index(cue.start):]
               if s.action == "出")
    assert out.place == "men" and out.actor == "賓"
    assert gai.end - gai.start > 30.0
    instrument = {s.id: s.instrument for s in performance.sources.values()}
    feet = [e for e in performance.events if instrument.get(e.source) == "footstep"
            and gai.start <= e.time < gai.end]
    assert len(feet) >= 5
    if rite == "xiangyinjiu":
        assert cue.start == out.id  # 賓出奏陔: from his going out


def test_the_guest_and_the_other_guests_go_out_in_two_steps():
    """鄉射禮 「賓出衆賓皆出」: 賓出 and 衆賓皆出, not 賓出衆 and 賓皆出."""
    from soundscape import cuesheet

    sheet = cuesheet.load(bundled_dir("cues") / "xiangshe.toml")
    at = next(i for i, s in enumerate(sheet.steps) if "陔作" in s.quote)
    following = [(s.actor, s.quote) for s in sheet.steps[at + 1:at + 3]]
    assert following == [("賓", "賔出"), ("衆賓", "衆賔皆出")]
