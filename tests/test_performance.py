"""The Performance contract: validation, ordering, slicing, JSON round trip."""

import json
import math

import pytest

from soundscape.errors import PerformanceError
from soundscape.music.pitch import Pitch
from soundscape.performance import Event, Info, Marker, Performance, PieceInfo, Source


def _sources():
    return {"bell": Source("bell", "bianzhong", "笙鐘", "sheng zhong", "east", (10.0, -5.0, 1.5),
                           moves=((30.0, (12.0, -5.0, 1.5)),))}


def _perf():
    pieces = {"luming": PieceInfo("luming", "鹿鳴", "surviving", "風雅十二詩譜")}
    events = [
        Event(2.0, 1.0, "bell", Pitch("黃鍾", 1, 523.25), 0.8, "A", "cue.luming", "luming", "呦"),
        Event(1.0, 0.5, "bell", None, 0.5, "B", "cue.luming", position=(1.0, 2.0, 3.0)),
    ]
    markers = [Marker(1.5, "step", "奏肆夏", "zou Si Xia", "step.12", "乃奏肆夏"),
               Marker(0.0, "section", "右納賓", "na bin", "sec.6")]
    return Performance.build(events, markers, _sources(), pieces=pieces, info=Info(seed=3))


def test_build_sorts_events_and_markers_by_time():
    perf = _perf()
    assert [e.time for e in perf.events] == [1.0, 2.0]
    assert [m.time for m in perf.markers] == [0.0, 1.5]
    assert perf.duration == pytest.approx(3.0)


def test_json_round_trip_is_exact(tmp_path):
    perf = _perf()
    path = perf.save_json(tmp_path / "perf.json")
    again = Performance.load_json(path)
    assert again.events == perf.events
    assert again.markers == perf.markers
    assert again.sources == perf.sources
    assert again.pieces == perf.pieces


def test_unknown_source_is_named():
    event = Event(0.0, 1.0, "nowhere", None, 0.5, "strike", "cue.x")
    with pytest.raises(PerformanceError, match="unknown source 'nowhere'"):
        Performance.build([event], [], _sources())


def test_unsorted_events_are_refused():
    a = Event(1.0, 1.0, "bell", None, 0.5, "A", "c")
    b = Event(0.0, 1.0, "bell", None, 0.5, "A", "c")
    with pytest.raises(PerformanceError, match="sorted"):
        Performance((a, b), (), _sources())


@pytest.mark.parametrize("field, value, message", [
    ("time", -1.0, "time=-1.0"),
    ("duration", 0.0, "duration=0.0"),
    ("velocity", 1.5, "velocity=1.5"),
])
def test_bad_event_fields_name_the_value(field, value, message):
    kwargs = {"time": 0.0, "duration": 1.0, "source": "bell", "pitch": None, "velocity": 0.5,
              "articulation": "A", "cue": "c", field: value}
    with pytest.raises(PerformanceError, match=message):
        Event(**kwargs)


def test_between_shifts_and_keeps_only_the_window():
    part = _perf().between(1.5, 10.0)
    assert [e.time for e in part.events] == [0.5]
    assert [m.text for m in part.markers] == ["奏肆夏"]
    assert part.info.offset == 1.5


def test_events_pickled_come_back_whole_and_a_cut_moves_them_as_made_anew():
    import pickle
    from dataclasses import fields, replace

    perf = _perf()
    again = pickle.loads(pickle.dumps(perf))
    assert again == perf
    for read, made in zip(again.events, perf.events, strict=True):
        assert type(read) is Event
        assert [getattr(read, f.name) for f in fields(Event)] == \
            [getattr(made, f.name) for f in fields(Event)]
        assert hash(read) == hash(made)
    part = perf.between(0.25, 10.0)
    assert part.events == tuple(replace(e, time=e.time - 0.25) for e in perf.events)
    with pytest.raises(AttributeError):  # still frozen
        part.events[0].time = 0.0  # type: ignore[misc]


def test_source_moves_over_time():
    bell = _sources()["bell"]
    assert bell.position_at(10.0) == (10.0, -5.0, 1.5)
    assert bell.position_at(30.0) == (12.0, -5.0, 1.5)


def test_pitch_names_and_midi():
    assert Pitch("黃鍾", 1, 523.2511).name == "清黃鍾"
    assert Pitch("林鍾", -1, 100.0).name == "倍林鍾"
    note, cents = Pitch("黃鍾", 0, 440.0 * 2 ** (3.5 / 12)).nearest_midi()
    assert (note, round(cents)) in {(72, 50), (73, -50)}


# -- a saved Performance is checked field by field as it loads ---------------------------------
def _saved(tmp_path, edit):
    """``_perf()`` with sections and music, saved, edited as JSON (``edit(data)``)."""
    from dataclasses import replace

    from soundscape.performance import MusicSpan, SectionSpan

    perf = replace(_perf(), sections=(SectionSpan("s1", "右納賓", 0.0, 3.0),
                                      SectionSpan("s2", "右射", 3.0, 4.0)),
                   music=(MusicSpan("cue.luming", "luming", 1.0, 3.0, "music"),))
    data = perf.to_dict()
    edit(data)
    path = tmp_path / "perf.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _set(path: str, value):
    """An edit putting ``value`` at ``path`` (keys and indices separated by '/')."""
    def edit(data):
        *route, last = [int(p) if p.isdigit() else p for p in path.split("/")]
        for step in route:
            data = data[step]
        data[last] = value
    return edit


@pytest.mark.parametrize(("where", "value", "message"), [
    ("sources/bell/position", [1.0, 2.0], r"sources\['bell'\].position=\[1.0, 2.0\] must be "
                                          r"a list of 3"),
    ("events/0/position", [1.0, 2.0], r"events\[0\].position=\[1.0, 2.0\] must be a list of 3"),
    ("sections/0/start", "zero", r"sections\[0\].start='zero' must be a finite number"),
    ("sections/0/end", -1.0, r"sections\[0\]: start=0.0 must not be after end=-1.0"),
    ("music/0/end", 0.5, r"music\[0\]: start=1.0 must not be after end=0.5"),
    ("events/0/time", 1e300, r"events\[0\].time=1e\+300 must be a finite number ≥ -1e\+07 and "
                             r"≤ 1e\+07"),
    ("events/0/velocity", True, r"events\[0\].velocity=True must be a finite number"),
    ("events/0/pitch", {"lu": "黃鍾", "octave": 1.5, "hz": 523.25},
     r"events\[0\].pitch.octave=1.5 must be a whole number"),
    # MIDI and scores refused these naming no file or event, or wrote a negative key
    ("events/0/pitch", {"lu": "zz", "octave": 0, "hz": 261.6},
     r"events\[0\].pitch.lu='zz' must be a canonical 律 name \(accepted: 黃鍾, "),
    ("events/0/pitch", {"lu": "黃鍾", "octave": 12, "hz": 261.6},
     r"events\[0\].pitch.octave=12 must be a whole number ≥ -4 and ≤ 4"),
    ("events/0/pitch", {"lu": "黃鍾", "octave": 0, "hz": 9e6},
     r"events\[0\].pitch.hz=9000000.0 must be a finite number ≥ 16 and ≤ 20000 Hz"),
    ("events/0/surprise", 1, r"events\[0\]: surprise=1 must be a known key"),
    ("sources/bell/moves", [[30.0, [1, 2, 3]], [10.0, [1, 2, 3]]],
     r"sources\['bell'\].moves: times \[30.0, 10.0\] must increase"),
    ("info/seed", "seven", r"info.seed='seven' must be a whole number"),
    ("markers", {"a": 1}, r"markers=\{'a': 1\} must be a list"),
    ("sources", [], r"sources=\[\] must be a table"),
    # references and orders that loaded before (issue 29, item 9)
    ("sources/bell/id", "drum", r"sources\['bell'\]: id='drum' must be its key 'bell'"),
    ("pieces/luming/id", "sixia", r"pieces\['luming'\]: id='sixia' must be its key"),
    ("music/0/piece", "sixia", r"music\[0\]: piece='sixia' is not among the pieces; known: "
                               r"luming"),
    ("music/0/bound", "tide", r"music\[0\]: bound='tide', accepted: rite, music"),
    ("sections/1/id", "s1", r"sections\[1\]: id='s1' stands twice"),
    ("sections/1/start", -1.0, r"sections\[1\]: start=-1.0 is before the start of 's1'"),
    ("sources/bell/facing", [0, 0, 0], r"source 'bell': facing=\(0.0, 0.0, 0.0\) must be a "
                                       r"direction"),
    # an instrument is looked up as a file of instruments/, and ids name stems: never paths
    ("sources/bell/instrument", "/etc/hostname",
     r"sources\['bell'\].instrument='/etc/hostname' must be an id of a-z"),
    ("sources/bell/instrument", "../../x", r"sources\['bell'\].instrument='../../x' must be"),
    # `midi --performance` said "no GM program", naming no file or key
    ("sources/bell/instrument", "nosuch", r"sources\['bell'\].instrument='nosuch' must be a "
                                          r"known id \(accepted: .*bianzhong, "),
    # section and cue ids name `midi --split`'s files: ../../x.mid was written outside
    ("sections/0/id", "../../escaped", r"sections\[0\].id='../../escaped' must be an id"),
    ("music/0/cue", "/../../x", r"music\[0\].cue='/../../x' must be an id"),
])
def test_a_saved_performance_is_checked_as_it_loads(tmp_path, where, value, message):
    path = _saved(tmp_path, _set(where, value))
    with pytest.raises(PerformanceError, match=message) as caught:
        Performance.load_json(path)
    assert str(caught.value).startswith(f"{path}: "), str(caught.value)


def test_what_loads_can_be_cut(tmp_path):
    """Once a section start of "zero" loaded and the cut then failed with a TypeError."""
    perf = Performance.load_json(_saved(tmp_path, lambda data: None))
    part = perf.between(perf.sections[0].start, perf.sections[0].end)
    assert [e.time for e in part.events] == [1.0, 2.0]


def test_a_cut_names_sections_by_id_name_or_heading(tmp_path):
    """The heading form 右納賓 the docs promise cut like the id and the name did."""
    perf = Performance.load_json(_saved(tmp_path, lambda data: None))
    assert perf.cut("右納賓", "s1") == perf.cut("s1", "納賓") == perf.between(0.0, 3.0)
    assert perf.cut("射") == perf.between(3.0, math.inf)  # the last: to the rite's end
    with pytest.raises(PerformanceError, match="section '右樂賓' is not in this performance; "
                                               "performed: s1 右納賓, s2 右射"):
        perf.cut("右樂賓")
    with pytest.raises(PerformanceError, match=r"section 's2' .* comes after 's1'"):
        perf.cut("s2", "s1")


def test_a_shot_with_an_unknown_outcome_or_side_is_refused():
    from soundscape.performance import Shot

    args = dict(turn=1, pair="p", archer="a", archer_name="甲", role="shang", arrow=1,
                target="dahou", release=1.0, origin=(0, 0, 0), impact=(0, 1, 0), distance=1.0,
                flight=1.0, arrival=2.0, outcome="hu", called=True, bound=False, stroke=None,
                offset=None, on_beat=None, counted=True, side="right")
    Shot(**args)
    with pytest.raises(PerformanceError, match="outcome='bullseye', accepted: hu, hou"):
        Shot(**{**args, "outcome": "bullseye"})
    with pytest.raises(PerformanceError, match="side='middle', accepted: right, left"):
        Shot(**{**args, "side": "middle"})


def test_a_shot_of_no_turn_of_its_round_is_refused(tmp_path):
    """A saved round's arrows and tallies name turns the round has (they loaded before)."""
    from dataclasses import replace

    from soundscape.performance import Round, Shot, Turn

    shot = Shot(turn=1, pair="p", archer="a", archer_name="甲", role="shang", arrow=1,
                target="dahou", release=1.0, origin=(0, 0, 0), impact=(0, 1, 0), distance=1.0,
                flight=1.0, arrival=2.0, outcome="hu", called=True, bound=False, stroke=None,
                offset=None, on_beat=None, counted=True, side="right")
    shoot = Round(1, "初射", 0.0, 3.0, 0.1, (Turn(1, "p", "甲乙", 0.5),), (shot,))
    path = replace(_perf(), rounds=(shoot,)).save_json(tmp_path / "ok.json")
    assert Performance.load_json(path).rounds == (shoot,)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rounds"][0]["shots"][0]["turn"] = 7
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PerformanceError, match=r"rounds\[0\]: turn=7 of a shot or tally is "
                                               r"not among the round's turns \[1\]"):
        Performance.load_json(path)


def test_a_heading_the_text_repeats_names_no_section_alone(tmp_path):
    """取矢視算 heads s27 and s33: it silently meant the first."""
    perf = Performance.load_json(_saved(tmp_path, _set("sections/1/name", "右納賓")))
    with pytest.raises(PerformanceError, match="section '納賓' names 2 sections: s1, s2; give "
                                               "one by its id"):
        perf.cut("納賓")
    assert perf.cut("s2") == perf.between(3.0, math.inf)  # the last: to the rite's end


def test_a_section_is_found_by_its_name_in_simplified_characters():
    """A user of a 简体 text gave its heading 乐宾: "section '乐宾' is not in this
    performance"."""
    from soundscape.sequence.planner import perform_from_file

    rite = perform_from_file(seed=0, from_section="s18", to_section="s19")
    assert rite.section("乐宾") == rite.section("右樂賓") == rite.section("s18")


@pytest.mark.parametrize("key, value, message", [
    ("reading", "klingon", "info.reading='klingon' must be a reading of the words "
                           "(accepted: middle-chinese, mandarin)"),
    ("huangzhong_hz", 5.0, "info.huangzhong_hz=5.0 must be a finite number ≥ 100 and ≤ 600 Hz"),
    ("huangzhong_hz", 6000, "info.huangzhong_hz=6000.0 must be a finite number ≥ 100"),
    # the site is looked up by it: "rite '../../etc' unknown" named no file or key
    ("site", "../../etc", "info.site='../../etc' must be one of the accepted values (accepted: "
                          "dashe, "),
    ("site", "nosuch", "info.site='nosuch' must be one of the accepted values"),
])
def test_a_saved_info_the_sequencer_never_writes_is_refused(tmp_path, key, value, message):
    """A file's reading and 黃鍾 go into the render's report and `play`'s comparison."""
    data = _perf().to_dict()
    data["info"][key] = value
    with pytest.raises(PerformanceError) as raised:
        Performance.from_dict(json.loads(json.dumps(data)), source="p.json")
    assert str(raised.value).startswith(f"p.json: {message}"), raised.value


def test_a_file_saved_before_the_reading_and_huangzhong_were_recorded_loads():
    data = _perf().to_dict()
    data["info"].update(reading="", huangzhong_hz=0)
    assert Performance.from_dict(json.loads(json.dumps(data))).info.huangzhong_hz == 0
    for site in (None, "", "xiangshe", "generic"):  # not recorded, the 大射's, a rite's
        data["info"]["site"] = site
        assert Performance.from_dict(json.loads(json.dumps(data))).info.site == site


def _bed_and_bell():
    sources = {**_sources(), "bed": Source("bed", "ambience", "場", "bed", "place",
                                           (0.0, 0.0, 1.0))}
    events = [Event(t, 8.0, "bed", None, 0.5, "day", "bed") for t in (0.0, 2.5, 5.0, 7.5)]
    events += [Event(6.5, 3.0, "bell", None, 0.5, "A", "c")]
    return Performance.build(events, [], sources)


def test_a_cut_carries_the_place_sounds_still_going_and_nothing_else():
    """The bed is overlapping segments: a part dropped those begun before it, and its first
    seconds were digital silence until the next one (s18: 2.0 s, s22: 1.4 s). What is left
    of them goes on from 0; a bell struck before the cut is not heard (it was struck
    before); a kit's loop carries nothing."""
    part = _bed_and_bell().between(7.0, 20.0)
    carried = [(e.source, e.time, e.duration) for e in part.events if e.time == 0.0]
    assert carried == [("bed", 0.0, pytest.approx(1.0)), ("bed", 0.0, pytest.approx(3.5)),
                       ("bed", 0.0, pytest.approx(6.0))]
    assert [(e.source, e.time) for e in part.events if e.time > 0] == [("bed", 0.5)]
    assert all(e.source != "bell" for e in part.events)
    assert [e.time for e in _bed_and_bell().between(7.0, 20.0, carry=False).events] == [0.5]
