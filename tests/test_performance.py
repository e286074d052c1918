"""The Performance contract: validation, ordering, slicing, JSON round trip."""

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


def test_source_moves_over_time():
    bell = _sources()["bell"]
    assert bell.position_at(10.0) == (10.0, -5.0, 1.5)
    assert bell.position_at(30.0) == (12.0, -5.0, 1.5)


def test_pitch_names_and_midi():
    assert Pitch("黃鍾", 1, 523.2511).name == "清黃鍾"
    assert Pitch("林鍾", -1, 100.0).name == "倍林鍾"
    note, cents = Pitch("黃鍾", 0, 440.0 * 2 ** (3.5 / 12)).nearest_midi()
    assert (note, round(cents)) in {(72, 50), (73, -50)}
