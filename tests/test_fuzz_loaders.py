"""Fuzzing the loaders of issue 29: walk files, saved Performances, loudspeaker layouts (IEM
files and az/el lists), kit programmes, schedules, show cue lists and batch plans.

Each example takes a valid file, breaks it (``tests.test_fuzz_inputs._mutated``: deletes a
key, nests deeply, puts in non-finite, huge, long or wrongly typed values, junk) and loads
it. The oracle: either one clean ``SoundscapeError`` naming the file, or what loaded is
finite and usable: a walk places a listener at finite points at any time; a Performance
cuts at its sections and every number in it is finite; a layout pans every direction to
finite gains at constant power; a programme's, schedule's, cue list's and plan's numbers
are finite and its paths stay in their folder. Derandomised with a fixed budget, so the
same examples run every time.
"""

from __future__ import annotations

import functools
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from soundscape.errors import SoundscapeError
from soundscape.kit.player import load_cues
from soundscape.kit.programmes import load_programmes
from soundscape.kit.showcontrol import load_schedule
from soundscape.kit.speakers import layout_from_text, panner_for, read_iem
from soundscape.performance import Performance
from soundscape.site.courtyard import load_site
from tests.test_fuzz_inputs import _BUDGET, _mutated

#: A larger fixed budget for the loaders that take milliseconds per example.
_CHEAP = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])

_AROUND = [(az, el) for az in range(-180, 180, 15) for el in (-60, -20, 0, 20, 60, 90)]


def _load(text: str, name: str, load) -> Any:
    """``load(path)`` of ``text`` written to a file called ``name``; a SoundscapeError must
    name the file (returned as None); anything else escapes and fails the test."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        try:
            return load(path)
        except SoundscapeError as error:
            assert str(path) in str(error) or name in str(error), str(error)
            return None


def _finite(value: Any) -> bool:
    """Every number inside ``value`` (dataclasses, tuples, dicts …) is finite."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, int | float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    if hasattr(value, "__dataclass_fields__"):
        return all(_finite(getattr(value, f)) for f in value.__dataclass_fields__)
    return True


@functools.cache
def _site():
    return load_site()


# -- walk files ---------------------------------------------------------------------------------
_WALK = {"waypoint": [{"time": 0.0, "place": "men"},
                      {"time": 40.0, "position": [0.0, -20.0, 1.6], "facing": 90.0},
                      {"time": 80.0, "place": "zhongting", "facing": [1.0, 1.0]}]}


@_CHEAP
@given(_mutated(_WALK))
def test_fuzzed_walk_files_load_and_place_a_listener_or_name_the_file(text):
    from soundscape.site.walks import load_walk as _walk

    walk = _load(text, "walk.toml", lambda path: _walk(path, _site()))
    if walk is None:
        return
    for time in (-1.0, 0.0, 30.0, 1e6):
        here = walk.at(time)
        assert _finite(here.position) and _finite(here.facing)
        assert abs(math.hypot(*here.facing[:2]) - 1.0) < 1e-9


# -- saved Performances -------------------------------------------------------------------------
def _saved_performance() -> dict[str, Any]:
    from tests.test_fuzz_inputs import _performance

    return _performance()


@_CHEAP
@given(st.data())
def test_fuzzed_performances_load_finite_and_cut_or_name_the_file(data):
    text = data.draw(_mutated(_saved_performance(), as_json=True))
    performance = _load(text, "performance.json", Performance.load_json)
    if performance is None:
        return
    assert _finite(performance.events) and _finite(performance.sources)
    assert _finite([performance.sections, performance.music, performance.rounds])
    assert math.isfinite(performance.duration)
    for span in performance.sections:
        part = performance.between(span.start, span.end)
        assert all(0 <= e.time < span.end - span.start or span.end == span.start
                   for e in part.events)


# -- loudspeaker layouts ------------------------------------------------------------------------
_IEM = {"Name": "hall", "Description": "a test", "LoudspeakerLayout": {
    "Name": "hall", "Loudspeakers": [
        {"Azimuth": 30.0, "Elevation": 0.0, "Radius": 2.0, "IsImaginary": False,
         "Channel": 1, "Gain": 1.0},
        {"Azimuth": -30.0, "Elevation": 0.0, "Radius": 2.0, "IsImaginary": False,
         "Channel": 2, "Gain": 1.0},
        {"Azimuth": 110.0, "Elevation": 0.0, "Radius": 2.0, "IsImaginary": False,
         "Channel": 3, "Gain": 0.8},
        {"Azimuth": -110.0, "Elevation": 0.0, "Radius": 2.0, "IsImaginary": False,
         "Channel": 4, "Gain": 0.8},
        {"Azimuth": 0.0, "Elevation": 45.0, "Radius": 2.0, "IsImaginary": False,
         "Channel": 5, "Gain": 1.0},
        {"Azimuth": 0.0, "Elevation": -90.0, "Radius": 1.0, "IsImaginary": True,
         "Channel": 0, "Gain": 1.0}]}}


def _pans(layout) -> None:
    """Every direction pans to finite, non-negative gains at constant power (before the
    speakers' own gains), or to silence only where imaginary speakers take it all."""
    from soundscape.kit.speakers import SpeakerLayout

    panner = panner_for(layout)
    rows = np.array([panner.terms(az, el).gains for az, el in _AROUND])
    assert np.isfinite(rows).all() and (rows >= 0).all()
    if isinstance(layout, SpeakerLayout):
        row = np.ones(layout.width)
        for s in layout.speakers:
            if not s.imaginary:
                row[s.channel - 1] = s.gain
        live = row > 0
        power = ((rows[:, live] / row[live]) ** 2).sum(axis=1)
        assert np.all((np.abs(power - 1) < 1e-6) | (power < 1e-12)), power
    assert layout.name == "" or __import__("soundscape.validate").validate.ID.fullmatch(
        layout.name) if not isinstance(layout, str) else True


@_CHEAP
@given(st.data())
def test_fuzzed_iem_layouts_load_and_pan_or_name_the_file(data):
    text = data.draw(_mutated(_IEM, as_json=True))
    layout = _load(text, "layout.json", read_iem)
    if layout is not None:
        _pans(layout)


_ANGLE = st.one_of(st.integers(-360, 360), st.floats(-400, 400, allow_nan=False),
                   st.integers(-360, 360), st.sampled_from(
                       ["nan", "inf", "-inf", "1e308", "", "x", "30:0:0", "0:91", "-1"]))
_ELEVATION = st.one_of(st.none(), st.none(), st.integers(-90, 90), st.sampled_from([-1, 0, 1]),
                       _ANGLE)


@_CHEAP
@given(st.lists(st.tuples(_ANGLE, _ELEVATION), min_size=0, max_size=9))
def test_fuzzed_az_el_layouts_pan_or_are_refused(items):
    text = ",".join(str(az) if el is None else f"{az}:{el}" for az, el in items)
    try:
        layout = layout_from_text(text)
    except SoundscapeError as error:
        assert "--layout" in str(error) or "layout" in str(error), str(error)
        return
    _pans(layout)


# -- kit programmes, schedules, show cue lists --------------------------------------------------
def _programmes() -> dict[str, Any]:
    import tomllib

    from soundscape.kit.programmes import default_path

    return tomllib.loads(default_path().read_text(encoding="utf-8"))


@_BUDGET
@given(st.data())
def test_fuzzed_programmes_load_finite_or_name_the_file(data):
    site = _site()
    text = data.draw(_mutated(_programmes()))
    programmes = _load(text, "programmes.toml",
                       lambda path: load_programmes(path, places=set(site.places)))
    if programmes is not None:
        assert programmes and _finite(programmes)
        for programme in programmes:
            for zone in programme.zones:
                listener = zone.listener(site)
                assert _finite(listener.at(0.0).position)


_SCHEDULE = {"slot": [{"start": "09:00", "programme": "rite", "until": "12:00",
                       "days": ["mon", "tue"]},
                      {"start": "13:30", "programme": "music"}]}


@_BUDGET
@given(_mutated(_SCHEDULE))
def test_fuzzed_schedules_load_or_name_the_file(text):
    slots = _load(text, "schedule.toml", lambda path: load_schedule(path, {"rite", "music"}))
    if slots is not None:
        assert slots and _finite(slots)
        assert all(0 <= s.start < 24 * 60 for s in slots)


_CUES = {"programme": "rite", "audio": ["rite.gong_wei.stereo.wav"], "cues": [
    {"number": 1, "time": 0.0, "section": "s1", "kind": "section", "text": "右設樂",
     "name": "she yue"},
    {"number": 2, "time": 12.5, "section": "s1", "kind": "music", "text": "奏肆夏",
     "name": "zou sixia"}]}


@_BUDGET
@given(st.data())
def test_fuzzed_show_cue_lists_load_or_name_the_file(data):
    text = data.draw(_mutated(_CUES, as_json=True))
    cues = _load(text, "cues.json", load_cues)
    if cues is not None:
        assert _finite(cues)
        assert [c.time for c in cues] == sorted(c.time for c in cues)


# -- batch plans ---------------------------------------------------------------------------------
_PLAN = {"out": "batch", "defaults": {"from": "s18", "to": "s18"}, "render": [
    {"id": "sanfen-c4", "tuning": "sanfen_sunyi", "huangzhong_hz": 261.63},
    {"id": "equal-zeng", "tuning": "equal", "huangzhong_hz": "zeng", "zhong": "stanza",
     "reading": "mandarin", "listener": "zhongting", "layout": "binaural", "seed": 3,
     "target_lufs": -20.0}]}


@_BUDGET
@given(_mutated(_PLAN))
def test_fuzzed_batch_plans_load_or_name_the_file(text):
    from soundscape.kit.plan import load_plan

    site = _site()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plan.toml"
        path.write_text(text, encoding="utf-8")
        try:
            out, jobs = load_plan(path, site)
        except SoundscapeError as error:
            assert str(path) in str(error), str(error)
            return
        assert out.is_relative_to(Path(folder).resolve())
        assert jobs and all(job.path.parent == out for job in jobs)
        assert all(_finite(job.listener.position) and _finite(job.options) for job in jobs)


def test_the_fuzz_documents_are_valid(tmp_path):
    """The valid documents the fuzzing starts from load (else it tests only refusals)."""
    from soundscape.kit.plan import load_plan
    from soundscape.site.walks import load_walk as _walk

    site = _site()
    files = {"walk.toml": _WALK, "layout.json": _IEM, "schedule.toml": _SCHEDULE,
             "cues.json": _CUES, "plan.toml": _PLAN}
    for name, document in files.items():
        import tomlkit

        text = json.dumps(document) if name.endswith(".json") else tomlkit.dumps(document)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert len(_walk(tmp_path / "walk.toml", site).waypoints) == 3
    assert read_iem(tmp_path / "layout.json").width == 5
    assert len(load_schedule(tmp_path / "schedule.toml", {"rite", "music"})) == 2
    assert len(load_cues(tmp_path / "cues.json")) == 2
    assert len(load_plan(tmp_path / "plan.toml", site)[1]) == 2


# -- cue sheets, through sequencing and rendering -------------------------------------------
@functools.cache
def _sheet() -> dict[str, Any]:
    import tomlkit

    from tests.test_hostile_numbers import _SHEET

    return tomlkit.parse(_SHEET).unwrap()


@st.composite
def _plausible(draw: Any, document: dict[str, Any]) -> str:
    """A hand edit as a user makes one: one to three values of an entry replaced by the
    same key's value in another entry of its table (another step as a cue's start, another
    piece, other performers …), or a number scaled."""
    import copy

    import tomlkit

    data = copy.deepcopy(document)
    tables = [k for k, v in data.items() if isinstance(v, list) and v]
    for _ in range(draw(st.integers(1, 3))):
        entries = data[draw(st.sampled_from(tables))]
        entry = draw(st.sampled_from(entries))
        key = draw(st.sampled_from(sorted(entry)))
        if key == "id":
            continue
        others = [e[key] for e in entries if key in e]
        value = draw(st.sampled_from(others))
        if isinstance(value, int | float) and not isinstance(value, bool) and draw(st.booleans()):
            value = type(value)(value * draw(st.sampled_from([0, 2, 3, 12, 13])))
        entry[key] = value
    return tomlkit.dumps(data)


_THROUGH = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@_THROUGH
@given(data=st.data())
def test_fuzzed_cue_sheets_sequence_and_render_or_fail_cleanly(tmp_path_factory, data):
    """What loads, sequences (or is refused naming the sheet), and its first seconds render
    to finite samples."""
    from soundscape import cuesheet
    from soundscape.music.tuning import default_tuning
    from soundscape.sequence.planner import SequenceOptions, perform
    from soundscape.site.listeners import Listener
    from soundscape.sound.render import render_audio
    from tests.sound.test_render import noise_voice

    text = data.draw(st.one_of(_mutated(_sheet()), _plausible(_sheet())))
    try:
        sheet = cuesheet.loads(text, source="fuzzed.toml")
        done = perform(sheet, site=_site(), tuning=default_tuning(), seed=0,
                       options=SequenceOptions(soundscape=False))
    except SoundscapeError as error:
        assert "fuzzed.toml" in str(error) or "seed" in str(error), str(error)
        event("refused")
        return
    event("sequenced")
    assert _finite(done.events) and math.isfinite(done.duration)
    assert done.duration < 24 * 3600
    part = done.between(0.0, 3.0)
    if not part.events:
        return
    event("rendered")
    out = tmp_path_factory.mktemp("fuzz") / "part.wav"
    result = render_audio(part, out, listener=Listener((0.0, -10.0, 1.6)), voice=noise_voice,
                          bits="float")
    import soundfile

    audio, _ = soundfile.read(result.files[0])
    assert np.isfinite(audio).all()
