"""Programmes: the bundled file, errors naming file, entry and key, and the cuts."""

from __future__ import annotations

import pytest

from soundscape.kit import KitError
from soundscape.kit.programmes import (
    LEAD_REACH_S,
    cut,
    expand,
    first_sound,
    lead_in,
    load_programmes,
    spans,
)
from soundscape.performance import Event, Performance, Source
from soundscape.site.courtyard import load_site
from tests.kit.scenes import rite

PLACES = {"gong_wei", "zhongting", "men", "bin_wei"}


def test_bundled_programmes_load_against_the_site():
    programmes = load_programmes(places=set(load_site().places))
    ids = [p.id for p in programmes]
    assert {"rite", "music", "round3", "yuebin", "cue"} <= set(ids)
    yuebin = next(p for p in programmes if p.id == "yuebin")
    assert [z.id for z in yuebin.zones] == ["gong_wei", "bin_wei", "walk"]
    assert yuebin.zones[-1].waypoints[0] == (0.0, "men")


@pytest.mark.parametrize(("body", "message"), [
    ('[[programme]]\nid = "a"\nround = 5\n', r"\[\[programme\]\] 1: round=5"),
    ('[[programme]]\nid = "A b"\n', r"\[\[programme\]\] 1: id='A b'"),
    ('[[programme]]\nid = "a"\nlisteners = ["moon"]\n', r"listeners='moon' must be a known"),
    ('[[programme]]\nid = "a"\nround = 1\nmusic = "x"\n', "chooses its part twice"),
    ('[[programme]]\nid = "a"\n[[programme]]\nid = "a"\n',
     r"\[\[programme\]\] 1: id='a' is given twice"),
    ('[[programme]]\nid = "a"\nloudness = 3\n', "key='loudness' must be a programme key"),
    ('calibration_lufs = 5\n[[programme]]\nid = "a"\n', "calibration_lufs=5"),
    ('[[programme]]\nid = "a"\nwalk = [{time = 5, place = "men"}, {time = 2, place = "men"}]'
     '\n', r"walk\[1\]\.time=2"),
    ('[[programme]]\nid = "a"\nlead_s = 11\n', r"lead_s=11"),
    # wording: an unknown placeholder names itself and the accepted ones (it was printed as
    # written); a rite's own table takes known rites and keys, its sections only with from/to
    ('[[programme]]\nid = "a"\ntitle = "the {ritee} {A}"\n',
     r"\[\[programme\]\] 1 id='a': title='the \{ritee\} \{A\}': \{ritee\} is not a "
     r"placeholder; accepted: \{rite\}, \{rite_en\}, .*\{gap_s\} \(\{\{ and \}\} for a brace\)$"),
    ('[[programme]]\nid = "a"\n[programme.rite.yan]\ndescription = "{x}"\n',
     r"id='a': rite.yan.description='\{x\}': \{x\} is not a placeholder"),
    ('[[programme]]\nid = "a"\n[programme.rite.yann]\ntitle = "t"\n',
     r"id='a': rite='yann' must be a known id \(accepted: dashe, xiangshe, xiangyinjiu, yan\)"),
    ('[[programme]]\nid = "a"\n[programme.rite.yan]\ncolour = "red"\n',
     r"id='a': rite.yan='colour' must be one of .*title, description, from, to"),
    ('[[programme]]\nid = "a"\nround = 1\n[programme.rite.yan]\nfrom = "s16"\n',
     r"id='a': rite.yan.from: the programme chooses no sections"),
])
def test_bad_programme_files_name_file_entry_key_and_value(tmp_path, body, message):
    path = tmp_path / "p.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(KitError, match=message) as caught:
        load_programmes(path, places=PLACES)
    assert str(caught.value).startswith(str(path))


def _one(tmp_path, body):
    path = tmp_path / "p.toml"
    path.write_text(f'[[programme]]\nid = "p"\n{body}', encoding="utf-8")
    return load_programmes(path, places=PLACES)


def test_spans_of_sections_music_and_the_whole(tmp_path):
    perf = rite()
    # the whole rite: to the end of its last section (sounds past it wrap over the start)
    assert spans(_one(tmp_path, "")[0], perf) == [(0.0, perf.sections[-1].end)]
    assert spans(_one(tmp_path, 'from = "奏樂"\n')[0], perf) == [(4.0, 8.0)]
    assert spans(_one(tmp_path, 'music = "sixia"\nexcerpt_s = 10\n')[0], perf) == [(4.0, 7.5)]
    with pytest.raises(KitError, match="section 's9' is not in this performance; "
                                       "performed: s1 設樂"):
        spans(_one(tmp_path, 'from = "s9"\n')[0], perf)
    with pytest.raises(KitError, match="round=2 was not shot"):
        spans(_one(tmp_path, "round = 2\n")[0], perf)


def test_each_music_makes_one_programme_per_cue(tmp_path):
    (one,) = expand(_one(tmp_path, "each_music = true\n"), rite())
    assert (one.id, one.music, one.title) == ("p.sixia", "sixia", "p: 肆夏 (sixia)")


def test_a_cut_inside_a_section_keeps_it_and_excerpts_join_with_gaps():
    perf = rite()
    part, length = cut(perf, [(5.0, 7.0)])
    assert length == 2.0 and [(s.id, s.start, s.end) for s in part.sections] == [("s2", 0, 2)]
    joined, length = cut(perf, [(0.5, 2.0), (4.0, 5.0)], gap_s=1.0)
    assert length == pytest.approx(1.5 + 1.0 + 1.0 + 1.0)
    assert [round(e.time, 3) for e in joined.events if e.source == "east.bells"] == [2.5, 3.0]
    assert [e.time for e in joined.events if e.source.startswith("voice")] == [0.5] * 3
    assert [(s.id, s.start) for s in joined.sections] == [("s1", 0.0), ("s2", 2.5)]


def test_a_walk_zone_is_a_walking_listener_through_its_places():
    from soundscape.site.listeners import ListenerPath

    site = load_site()
    yuebin = next(p for p in load_programmes(places=set(site.places)) if p.id == "yuebin")
    walk = yuebin.zones[-1].listener(site)
    assert isinstance(walk, ListenerPath)
    assert walk.at(0.0).position == site.listener("men").position
    assert walk.at(120.0).position == site.listener("zhongting").position
    halfway = walk.at(60.0).position
    assert halfway[1] == pytest.approx((site.listener("men").position[1]
                                        + site.listener("zhongting").position[1]) / 2)


def _sounds(*times, bed=()):
    """A rite of short sounds at ``times`` and bed segments (group ``place``) at ``bed``."""
    sources = {"drum": Source("drum", "jiangu", "鼓", "drum", "drums", (0.0, 5.0, 1.2)),
               "bed": Source("bed", "ambience", "境", "bed", "place", (50.0, 50.0, 3.0))}
    events = [Event(t, 0.2, "drum", None, 0.8, "strike", "c") for t in times]
    events += [Event(t, 30.0, "bed", None, 0.5, "day", "bed") for t in bed]
    return Performance.build(sorted(events, key=lambda e: e.time), [], sources)


def test_a_part_that_opens_on_a_sound_opens_on_the_rites_quiet_before_it():
    # 肆夏 begins on a stroke at 4 s; the rite's last sound before it is at 1 s
    assert lead_in(rite(), [(4.0, 8.0)], 1.0) == [(3.0, 8.0)]
    assert lead_in(rite(), [(4.0, 8.0)], 0.0) == [(4.0, 8.0)]  # lead_s = 0: as it was
    # only the first part of several gets the lead (the loop point is at its start)
    assert lead_in(rite(), [(4.0, 8.0), (4.0, 6.0)], 0.5) == [(3.5, 8.0), (4.0, 6.0)]


def test_the_lead_holds_no_onset_and_takes_in_a_sound_too_close_to_skip():
    # a sound 0.4 s before the part: the loop opens a lead_s before that sound instead
    assert lead_in(_sounds(9.6, 10.0, 11.0), [(10.0, 20.0)], 1.0) == [(8.6, 20.0)]
    # the bed (group place) fades in: it may start anywhere in the lead
    assert lead_in(_sounds(10.0, bed=(9.5,)), [(10.0, 20.0)], 1.0) == [(9.0, 20.0)]
    # where the loop opening there restarts: its first sound that is not the bed
    assert first_sound(_sounds(10.0, bed=(9.5,)), 9.0) == 1.0
    assert first_sound(_sounds(10.0), 12.0) == 0.0  # nothing after: the seam itself


def test_no_lead_when_the_part_opens_quietly_or_none_can_be_found():
    assert lead_in(_sounds(11.5), [(10.0, 20.0)], 1.0) == [(10.0, 20.0)]  # 1.5 s of quiet
    assert lead_in(_sounds(0.3), [(0.0, 5.0)], 1.0) == [(0.0, 5.0)]  # the rite's start
    # sounds every 0.5 s for longer than the reach: no quiet second to open on
    busy = _sounds(*(0.5 * i for i in range(int(2 * (LEAD_REACH_S + 12)))))
    assert lead_in(busy, [(LEAD_REACH_S + 10.0, LEAD_REACH_S + 11.0)], 1.0) == [
        (LEAD_REACH_S + 10.0, LEAD_REACH_S + 11.0)]


def test_excerpts_of_one_section_join_as_one_span_and_a_return_is_named_apart():
    """鹿鳴 and 新宮 both lie in s18: the `music` programme's join held s18 twice and the
    Performance refused it, so `soundscape kit` with its defaults could not build."""
    perf = rite()
    joined, _ = cut(perf, [(5.0, 6.0), (6.0, 7.0), (0.5, 1.0), (5.5, 6.5)])
    assert [(s.id, s.start, s.end) for s in joined.sections] == [
        ("s2", 0.0, 2.0), ("s1", 2.0, 2.5), ("s2.2", 2.5, 3.5)]


def test_every_short_bundled_programme_cuts_the_bundled_rite():
    from soundscape.resources import bundled_dir
    from soundscape.sequence.planner import perform_from_file

    whole = perform_from_file(bundled_dir("cues") / "dashe.toml", seed=0)
    for programme in expand(load_programmes(), whole):
        parts = spans(programme, whole)
        if sum(b - a for a, b in parts) <= 20 * 60:
            part, length = cut(whole, parts, gap_s=programme.gap_s)
            assert length > 0 and part.sections, programme.id


def test_a_programme_over_sections_that_take_no_time_says_so(tmp_path):
    """`from = "s01"`, `to = "s04"` (made ready before the day) was refused as "from=s01
    comes after to=s04"."""
    from soundscape.kit import KitError
    from soundscape.resources import bundled_dir
    from soundscape.sequence.planner import perform_from_file

    whole = perform_from_file(bundled_dir("cues") / "dashe.toml", seed=0)
    path = tmp_path / "p.toml"
    path.write_text('[[programme]]\nid = "p"\ntitle = "t"\nlisteners = ["zhongting"]\n'
                    'from = "s01"\nto = "s04"\n')
    (programme,) = load_programmes(path)
    with pytest.raises(KitError, match="from=s01 to=s04 takes no time in the performance"):
        spans(programme, whole)


def test_titles_and_descriptions_are_filled_for_the_rite_and_braces_kept(tmp_path):
    """Placeholders are filled from the rite; {{ }} are braces, and a brace around anything
    but a placeholder's name is the user's text (the bundled wording was the 大射's for every
    rite: no placeholders)."""
    from soundscape.kit.programmes import fill

    body = ('title = "{rite} {{rite}} {A} { } a}b {貍首} {length}"\nfrom = "s2"\n'
            'description = "{pieces_basis} in {sections}, heard from {place}; {rite_en}, '
            '{rite_length}, {music_count} cue"\n')
    (programme,) = _one(tmp_path, body)
    assert programme.title.startswith("{rite} {{rite}}")  # as written until filled
    filled = fill(programme, rite(), load_site())
    assert filled.title == "大射儀 {rite} {A} { } a}b {貍首} five seconds"
    assert filled.description == ("肆夏 (reconstruction) in s2 奏樂, heard from the duke's "
                                  "seat; the Great Archery Meeting, ten seconds, one cue")


def test_a_rite_of_its_own_takes_its_sections_and_wording(tmp_path):
    from soundscape.kit.programmes import for_rite

    (programme,) = _one(tmp_path, 'from = "s18"\nto = "s18"\n[programme.rite.yan]\n'
                                  'from = "s16"\ntitle = "燕"\n')
    yan = for_rite(programme, "yan")
    assert (yan.from_section, yan.to_section, yan.title) == ("s16", "s18", "燕")
    assert for_rite(programme, "dashe") == programme


@pytest.mark.parametrize(("seconds", "said"), [
    (9310.1, "2½ hours"), (4919.2, "1¼ hours"), (3867.5, "1 hour"), (7476.1, "2 hours"),
    (3300.0, "1 hour"), (1536.0, "25 minutes"), (803.0, "13 minutes"), (580.0, "ten minutes"),
    (61.0, "one minute"), (49.0, "50 seconds"), (1.0, "five seconds"), (8100.0, "2¼ hours"),
])
def test_a_length_is_said_rounded_to_its_size(seconds, said):
    from soundscape.kit.programmes import spoken_length

    assert spoken_length(seconds) == said
