"""Hostile and careless files: FIFOs, paths that climb out, ids that are paths.

Every loader is given a FIFO (which would block a plain ``open`` forever): each must
refuse it at once with a message naming the file. A guard unblocks a reader that did
block, so a regression fails the test instead of hanging the suite. Every file
reference (piece ids, instrument ids, sample files) stays inside its folder, and the
message for a file outside is the same whether or not something exists there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile

from soundscape import cuesheet, text
from soundscape.errors import (
    CueSheetError,
    InstrumentError,
    PerformanceError,
    RepertoireError,
    SiteError,
    SoundscapeError,
    TextError,
)
from soundscape.fileio import MAX_DEPTH
from soundscape.kit import KitError
from soundscape.kit.player import load_cues
from soundscape.kit.speakers import read_iem
from soundscape.music.instruments import load_instrument
from soundscape.music.repertoire import load_piece, load_piece_file
from soundscape.performance import Performance
from soundscape.sequence.timeline import Durations
from soundscape.site.courtyard import load_site

_GUARD_S = 10.0


def _refused_at_once(fifo: Path, call: Callable[[], object]) -> SoundscapeError:
    """Run ``call`` (which reads ``fifo``); fail if it blocks, else return its error."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            call()
            outcome["result"] = "loaded"
        except BaseException as error:  # handed to the test thread
            outcome["result"] = error

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    reader.join(_GUARD_S)
    if reader.is_alive():  # blocked on the FIFO: give it a writer that closes at once
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(_GUARD_S)
        pytest.fail(f"reading the FIFO {fifo} blocked instead of being refused")
    error = outcome["result"]
    assert isinstance(error, SoundscapeError), error
    assert str(fifo) in str(error) and "not a regular file" in str(error), str(error)
    return error


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "input.toml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(("load", "error"), [
    (cuesheet.load, CueSheetError),
    (text.load, TextError),
    (lambda path: load_site(overrides=path), SiteError),
    (Durations.load, CueSheetError),
    (load_instrument, InstrumentError),
    (load_piece_file, RepertoireError),
    (Performance.load_json, PerformanceError),
    (read_iem, KitError),
    (load_cues, KitError),
], ids=["cue sheet", "text", "site override", "durations", "instrument", "piece",
        "performance", "speaker layout", "show cue list"])
def test_a_fifo_is_refused_at_once_by_every_loader(fifo, load, error):
    assert isinstance(_refused_at_once(fifo, lambda: load(fifo)), error)


def test_the_render_walk_file_is_read_safely(soundscape_cli, tmp_path):
    walk = tmp_path / "walk.toml"
    os.mkfifo(walk)
    code, err = soundscape_cli("render", "--from", "s01", "--to", "s01", "--path", str(walk),
                               "-o", str(tmp_path / "x.wav"), cwd=tmp_path)
    assert code == 2 and f"{walk}: not a regular file" in err, err


@pytest.mark.parametrize(("load", "error"), [
    (Performance.load_json, PerformanceError), (read_iem, KitError), (load_cues, KitError)])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 2, 100_000])
def test_deeply_nested_json_is_a_clear_error(tmp_path, load, error, depth):
    path = tmp_path / "deep.json"
    path.write_text("[" * depth + "]" * depth, encoding="utf-8")
    with pytest.raises(error, match=rf"deep.json: arrays or objects nested more than "
                                    rf"{MAX_DEPTH} deep"):
        load(path)


# -- ids are ids --------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["../../../../tmp/x/evil", "..", "/etc/passwd", "_build",
                                 "luming/../luming", "LUMING", "鹿鳴\x00"])
def test_a_piece_id_is_checked_before_a_path_is_built(tmp_path, bad):
    outside = tmp_path / "x"
    outside.mkdir()
    (outside / "evil.toml").write_text('title = "evil"\n', encoding="utf-8")
    with pytest.raises(RepertoireError, match=r"unknown; known: .*luming"):
        load_piece(bad)


def test_a_selection_cannot_reach_outside_its_folder(tmp_path):
    folder = tmp_path / "pieces"
    folder.mkdir()
    (tmp_path / "evil.toml").write_text('title = "evil"\n', encoding="utf-8")
    (folder / "mix.toml").write_text(
        'title = "雜"\nbasis = "reconstruction"\nbasis_note = "a test"\ntempo_bpm = 60\n'
        'seconds = 60\nsongs = ["../evil"]\n[parts.x]\nrole = "melody"\ninstrument = "se"\n'
        'articulation = "pluck"\nvelocity = 0.5\n', encoding="utf-8")
    with pytest.raises(RepertoireError, match=r"songs\[0\].*'\.\./evil' unknown"):
        load_piece_file(folder / "mix.toml")


@pytest.mark.parametrize("bad", ["..", "Pi", "pi\x00", "", "pi.toml.bak", "~"])
def test_an_instrument_id_is_checked_before_a_path_is_built(bad):
    """(A name with a '/' or ending in .toml is the user's own file, read as such.)"""
    with pytest.raises(InstrumentError, match=r"unknown; bundled: .*bianzhong"):
        load_instrument(bad)


def test_the_pieces_command_lists_the_ids_for_a_path(soundscape_cli, tmp_path):
    code, err = soundscape_cli("pieces", "../../../../tmp/x/evil", cwd=tmp_path)
    assert code == 2
    assert "error: piece '../../../../tmp/x/evil' unknown; known: " in err and "luming" in err


# -- sample files stay inside their instrument's folder ----------------------------------------
def _sampler(folder: Path, file: str) -> Path:
    path = folder / "museum.toml"
    path.write_text(f"""
id = "museum"
name = "鐘"
roman = "recorded bell"
family = "bell"
model = "sampler"
articulations = ["strike"]
loudness_db = 90
range_hz = [100.0, 2000.0]
sources = ["a test recording"]
[params]
[[params.samples]]
file = {file!r}
root_hz = 440.0
""", encoding="utf-8")
    return path


def _wav(path: Path) -> Path:
    soundfile.write(path, np.sin(np.arange(800) / 8000 * 2 * np.pi * 440), 8000)
    return path


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    inside, outside = tmp_path / "instrument", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    _wav(inside / "a4.wav")
    _wav(outside / "secret.wav")
    (outside / "notes.txt").write_text("not audio", encoding="utf-8")
    return inside, outside


def test_a_sample_inside_the_folder_loads_and_plays(folders):
    inside, _ = folders
    bell = load_instrument(_sampler(inside, "a4.wav"))
    assert bell.raw_params["samples"][0]["file"] == str((inside / "a4.wav").resolve())


@pytest.mark.parametrize("reference", ["absolute", "climb", "link"])
def test_a_sample_outside_the_folder_is_refused(folders, reference):
    inside, outside = folders
    if reference == "link":
        (inside / "link.wav").symlink_to(outside / "secret.wav")
    file = {"absolute": str(outside / "secret.wav"), "climb": "../elsewhere/secret.wav",
            "link": "link.wav"}[reference]
    with pytest.raises(InstrumentError, match=r"museum.toml: params.samples\[0\].file=.* must "
                                              r"be a file inside the instrument file's folder"):
        load_instrument(_sampler(inside, file))


def test_outside_files_get_one_message_whether_or_not_they_exist(folders):
    """No existence oracle: a missing, a non-audio and an audio file outside read alike."""
    inside, _ = folders
    messages = set()
    for name in ("secret.wav", "notes.txt", "missing.wav"):
        with pytest.raises(InstrumentError) as caught:
            load_instrument(_sampler(inside, f"../elsewhere/{name}"))
        messages.add(str(caught.value).replace(name, "NAME"))
    assert len(messages) == 1, messages


def test_a_sample_of_nans_is_refused(folders):
    """It played: NaN through the resampler and normaliser came out as sound."""
    from soundscape.sound.synth import params_of

    inside, _ = folders
    soundfile.write(inside / "nan.wav", np.full(800, np.nan, dtype=np.float32), 8000,
                    subtype="FLOAT")
    with pytest.raises(InstrumentError, match=r"museum.toml: params.samples\[0\].file = .*"
                                              r"nan.wav' holds samples that are not finite"):
        params_of(load_instrument(_sampler(inside, "nan.wav")))


def test_a_fifo_as_sample_is_refused_at_once(folders):
    inside, _ = folders
    os.mkfifo(inside / "pipe.wav")
    with pytest.raises(InstrumentError, match=r"params.samples\[0\].file='pipe.wav' must be an "
                                              "existing regular file"):
        load_instrument(_sampler(inside, "pipe.wav"))


def test_a_fifo_named_pyproject_does_not_block_finding_the_project(tmp_path):
    from soundscape.resources import project_dir

    fifo = tmp_path / "pyproject.toml"
    os.mkfifo(fifo)
    outcome = {}
    finder = threading.Thread(target=lambda: outcome.setdefault("dir", project_dir(tmp_path)),
                              daemon=True)
    finder.start()
    finder.join(_GUARD_S)
    if finder.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("project_dir blocked on a FIFO named pyproject.toml")
    assert outcome["dir"] != tmp_path


# -- numbers too long for Python to read --------------------------------------------------------
_LONG = "9" * 5000  # past Python's 4,300-digit limit on reading an int from text


def _walk_file(path: Path) -> object:
    from soundscape.site.walks import load_walk as _walk
    return _walk(path, load_site())


def _kit_plan(path: Path) -> object:
    from soundscape.kit.plan import load_plan
    return load_plan(path, load_site())


@pytest.mark.parametrize(("load", "error", "suffix"), [
    (cuesheet.load, CueSheetError, "toml"),
    (lambda path: load_site(overrides=path), SiteError, "toml"),
    (Durations.load, CueSheetError, "toml"),
    (load_instrument, InstrumentError, "toml"),
    (load_piece_file, RepertoireError, "toml"),
    (Performance.load_json, PerformanceError, "json"),
    (read_iem, KitError, "json"),
    (load_cues, KitError, "json"),
    (lambda path: __import__("soundscape.kit.programmes").kit.programmes.load_programmes(path),
     KitError, "toml"),
    (lambda path: __import__("soundscape.kit.showcontrol").kit.showcontrol.load_schedule(
        path, {"a"}), KitError, "toml"),
    (_kit_plan, KitError, "toml"),
    (_walk_file, SoundscapeError, "toml"),
    (lambda path: __import__("soundscape.sequence.archery").sequence.archery.load_config(path),
     SoundscapeError, "toml"),
], ids=["cue sheet", "site override", "durations", "instrument", "piece", "performance",
        "speaker layout", "show cue list", "programmes", "schedule", "batch plan", "walk",
        "archery"])
def test_an_integer_of_thousands_of_digits_is_a_clear_error(tmp_path, load, error, suffix):
    path = tmp_path / f"long.{suffix}"
    body = f'\n\nx = {_LONG}\n' if suffix == "toml" else f'{{\n\n"x": {_LONG}}}'
    path.write_text(body, encoding="utf-8")
    with pytest.raises(error, match=r"long\.(toml|json):3: a 5000-digit integer is too "
                                    r"long .* at most 4300 digits"):
        load(path)
