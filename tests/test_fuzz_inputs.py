"""Property-based fuzzing of every user file: cue sheets, instrument files, site overrides.

Each example takes a valid file, breaks it (deletes a key, nests deeply, puts in
non-finite, huge or wrongly typed values, junk text) or nudges a number, and loads it: it
either loads, or raises the concern's ``SoundscapeError`` whose message names the file.
Nothing else escapes. A cue sheet that loads has bounded repeats, so the sequencer cannot
run away; an instrument that loads also renders a note. The budget is fixed
(derandomized, a few dozen examples per file kind) so the whole file runs in seconds.
"""

from __future__ import annotations

import functools
import json
import math
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from soundscape import cuesheet
from soundscape.errors import CueSheetError, InstrumentError, PerformanceError, SiteError
from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import default_tuning
from soundscape.performance import Performance
from soundscape.sequence.planner import SequenceOptions, perform
from soundscape.site.courtyard import load_site
from soundscape.sound.synth import render_note
from tests.test_cuesheet import VALID

_BUDGET = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow])
_INSTRUMENTS = Path(__file__).resolve().parents[1] / "instruments"

_NASTY = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 2**63 - 1, -2**63, 0, -1,
                     1000000000, True, "", "x" * 5000, [], {}, [[[]]], "1/0 尺",
                     "9" * 400 + " 尺", "../../../../etc/passwd", "/dev/zero", "\x00"]),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.lists(st.integers(-5, 50), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def _mutated(draw: Any, document: dict[str, Any], as_json: bool = False) -> str:
    """``document`` as TOML (or JSON) with one to three breakages at random places in it."""
    data = json.loads(json.dumps(document)) if as_json else \
        tomlkit.parse(tomlkit.dumps(document)).unwrap()
    for _ in range(draw(st.integers(1, 3))):
        holder, key = _pick(draw, data)
        if holder is None:
            continue
        action = draw(st.sampled_from(["delete", "replace", "nest", "wrap", "nudge"]))
        value = holder[key]
        if action == "nudge" and isinstance(value, int | float) and not isinstance(value, bool):
            holder[key] = type(value)(value * draw(st.sampled_from([0.5, 0.9, 1.1, 2.0])))
        elif action == "delete" and isinstance(holder, dict):
            del holder[key]
        elif action == "nest":  # written into the text below: too deep for tomlkit to dump
            holder[key] = f"@@deep {draw(st.sampled_from([2, 33, 40, 2000]))}@@"
        elif action == "wrap":
            holder[key] = [holder[key]]
        else:
            holder[key] = draw(_NASTY)
    return _dumps(data, draw, as_json)


def _pick(draw: Any, data: Any) -> tuple[Any, Any]:
    """A container inside ``data`` and one of its keys (or indices), walking down at random."""
    holder, key = None, None
    node = data
    while isinstance(node, dict | list) and len(node):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        holder, key = node, draw(st.sampled_from(keys))
        node = node[key]
        if draw(st.integers(0, 3)) == 0:  # mostly walk down: the entries are deep
            break
    return holder, key


def _dumps(data: Any, draw: Any, as_json: bool = False) -> str:
    try:
        text = json.dumps(data) if as_json else tomlkit.dumps(data)
    except (TypeError, ValueError):  # a value TOML cannot hold
        text = "junk = [\n" * 3
    text = re.sub(r'"@@deep (\d+)@@"', lambda m: "[" * int(m[1]) + "]" * int(m[1]), text)
    junk = draw(st.sampled_from([""] * 8 + ["\n[[section]]\n", "\n= 1\n", "\nschema = 1\n",
                                            "\x00", "[" * 100_000]))
    return text + junk


def _names_the_file(error: Exception, name: str) -> None:
    assert name in str(error), str(error)


# -- cue sheets --------------------------------------------------------------------------------
_SHEET = tomlkit.parse(VALID).unwrap()


@_BUDGET
@given(_mutated(_SHEET))
def test_fuzzed_cue_sheets_load_or_name_the_file(text):
    try:
        sheet = cuesheet.loads(text, source="fuzzed.toml")
    except CueSheetError as error:
        _names_the_file(error, "fuzzed.toml:")
        return
    assert all(1 <= cue.repeats <= cuesheet.REPEATS[1] for cue in sheet.music)
    assert cuesheet.loads(cuesheet.dumps(sheet), source="again") == sheet


@_BUDGET
@given(st.text(max_size=300), st.sampled_from([0, len(VALID) // 3, len(VALID) // 2]))
def test_junk_text_in_a_cue_sheet_is_a_clear_error(junk, at):
    try:
        cuesheet.loads(VALID[:at] + junk + VALID[at:], source="junk.toml")
    except CueSheetError as error:
        _names_the_file(error, "junk.toml:")


# -- instrument files --------------------------------------------------------------------------
_FILES = {p.stem: tomlkit.parse(p.read_text(encoding="utf-8")).unwrap()
          for p in sorted(_INSTRUMENTS.glob("*.toml"))
          if p.stem in ("pi", "bianqing", "se", "guan", "sheng", "target", "tally", "bow")}
_FILES["museum"] = {  # a sampler: its sample file references must stay in the folder
    "id": "museum", "name": "鐘", "roman": "recorded bell", "family": "bell",
    "model": "sampler", "articulations": ["strike"], "loudness_db": 90.0,
    "range_hz": [100.0, 2000.0], "sources": ["a test recording"],
    "params": {"gain_db": -3.0, "samples": [{"file": "a4.wav", "root_hz": 440.0}]}}


@_BUDGET
@given(st.sampled_from(sorted(_FILES)), st.data())
def test_fuzzed_instruments_load_and_render_or_name_the_file(stem, data):
    text = data.draw(_mutated(_FILES[stem]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{stem}.toml"
        path.write_text(text, encoding="utf-8")
        soundfile.write(Path(folder) / "a4.wav", np.sin(np.arange(400) * 0.3), 8000)
        try:
            instrument = load_instrument(path)
            note = render_note(instrument, hz=None if instrument.default_hz else 440.0,
                               velocity=0.5, duration=0.02,
                               articulation=instrument.articulations[0], sample_rate=8000,
                               rng=np.random.default_rng(0))
        except InstrumentError as error:
            _names_the_file(error, str(path))
            return
    assert note.size and np.all(np.isfinite(note))


# -- site overrides ----------------------------------------------------------------------------
_OVERRIDE = {"places": {"xi": {"x": "10 尺", "y": "-20 尺"}, "dahou": {"y": "-90 貍步"}},
             "spacing": {"gap": "4 尺"}, "targets": {"can": {"band": "3 尺"}},
             "layout": {"east.bo": {"dx": "1 尺", "facing": "west"}},
             "instruments": {"pi": {"length": "3 尺"}}}


@_BUDGET
@given(_mutated(_OVERRIDE))
def test_fuzzed_site_overrides_load_or_name_the_file(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "override.toml"
        path.write_text(text, encoding="utf-8")
        try:
            load_site(overrides=path)
        except SiteError as error:
            _names_the_file(error, str(path))


# -- saved performances (--performance FILE) ---------------------------------------------------
@functools.cache
def _performance() -> dict[str, Any]:
    """A small performance as saved: the test sheet's music, without the soundscape."""
    from tests.test_hostile_numbers import _SHEET

    sheet = cuesheet.loads(_SHEET.replace('piece = "sixia"', 'piece = "gaixia"'), source="p")
    done = perform(sheet, site=load_site(), tuning=default_tuning(), seed=0,
                   options=SequenceOptions(soundscape=False))
    data = done.to_dict()
    data["events"] = data["events"][:3]  # a few of each kind keep the examples small
    return data


@_BUDGET
@given(st.data())
def test_fuzzed_performances_load_or_name_the_file(data):
    text = data.draw(_mutated(_performance(), as_json=True))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "performance.json"
        path.write_text(text, encoding="utf-8")
        try:
            Performance.load_json(path)
        except PerformanceError as error:
            _names_the_file(error, str(path))
