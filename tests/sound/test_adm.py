"""The ADM BWF master: its objects, its chunks read back, and EBU's renderer against ours."""

from __future__ import annotations

import collections
import functools
import itertools
import json
import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
import soundfile

from soundscape.errors import RenderError
from soundscape.kit import admosc
from soundscape.performance import Event, Marker, Performance, Source
from soundscape.sequence import perform_from_file
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound import adm
from soundscape.sound.adm_render import render_adm
from soundscape.sound.audiofile import read_wav_cues
from soundscape.sound.panning import Vbap
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks

FS = 48000
NORTH = Listener((0.0, 0.0, 1.5), "north")
DRY = Surroundings(ground=False, hall=False)
NS = "{urn:ebu:metadata-schema:ebuCore_2016}"


def noise_voice(event, source, *, sample_rate, rng):
    n = round(0.4 * sample_rate)
    return rng.normal(0, 0.2, n) * np.exp(-np.arange(n) / (0.15 * sample_rate))


def scene(*, bed=False, walker=True, where=None) -> Performance:
    """West (left, 90°), north-east (ahead right, −45°) and up north (ahead, 35° up); a
    walker who moves at 1 s; with ``bed``, an ambience source."""
    where = where or {"w": (-10.0, 0.0, 1.5), "ne": (10.0, 10.0, 1.5),
                      "up": (0.0, 10.0, 8.5)}
    sources = {sid: Source(sid, "bianzhong", f"鐘{sid}", f"bells {sid}", "east", point)
               for sid, point in where.items()}
    if walker:
        sources["walk"] = Source("walk", "footstep", "步", "steps", "action", (0.0, -10.0, 0.0),
                                 moves=((1.0, (10.0, 0.0, 0.0)),))
    if bed:
        sources["amb"] = Source("amb", "ambience", "境", "bed", "place", (-16.0, 2.0, 4.0))
    names = sorted(sources)
    events = [Event(0.1 + 0.25 * i, 0.3, names[i % len(names)], None, 0.9, "strike", "c")
              for i in range(4 * len(names))]
    markers = [Marker(0.0, "section", "右設樂", "she yue", "s1"),
               Marker(0.5, "music", "奏肆夏", "zou sixia", "m1")]
    return Performance.build(events, markers, sources)


def chunks(path: Path) -> dict[bytes, bytes]:
    """A RIFF/BW64 file's chunks, read with our own parser (tag → body)."""
    data = path.read_bytes()
    assert data[:4] in (b"RIFF", b"BW64") and data[8:12] == b"WAVE"
    found, pos = {}, 12
    while pos + 8 <= len(data):
        tag, size = struct.unpack("<4sI", data[pos:pos + 8])
        found[tag] = data[pos + 8:pos + 8 + size]
        pos += 8 + size + size % 2
    return found


def test_one_object_per_sounding_source_in_the_listeners_frame():
    objects = adm.plan_objects(scene(), NORTH)
    by_source = {o.sources[0]: o for o in objects}
    assert len(objects) == 4 and all(len(o.sources) == 1 for o in objects)
    west = by_source["w"].blocks
    assert len(west) == 1 and west[0].azimuth == pytest.approx(90.0)  # left is positive
    assert west[0].distance == 1.0 and west[0].metres == pytest.approx(10.0)  # a point
    assert by_source["ne"].blocks[0].azimuth == pytest.approx(-45.0)
    walker = by_source["walk"].blocks
    assert [b.time for b in walker] == [0.0, 1.0]  # a block per move
    assert walker[0].azimuth == pytest.approx(180.0, abs=1.0)  # behind, then right
    assert walker[1].azimuth == pytest.approx(-90.0, abs=10.0)


def test_past_the_limit_the_nearest_standing_sources_are_grouped_and_named():
    where = {"a": (-10.0, 0.0, 1.5), "b": (-10.0, 1.0, 1.5), "c": (10.0, 0.0, 1.5)}
    objects = adm.plan_objects(scene(where=where), NORTH, max_objects=3)
    grouped = [o for o in objects if len(o.sources) > 1]
    assert [o.sources for o in grouped] == [("a", "b")]
    assert grouped[0].name == "鐘a + 鐘b"
    assert grouped[0].blocks[0].azimuth == pytest.approx(90.0 - 2.86, abs=0.1)  # centroid


def carriers(objects, event) -> list[int]:
    """The objects that carry ``event``: its source's own or merged one, or a shared one
    whose turn of that source holds its time."""
    return [o.number for o in objects
            if (event.source in o.sources and not o.turns)
            or any(t.source == event.source and t.start <= event.time <= t.end
                   for t in o.turns)]


def in_turn_scene() -> Performance:
    """``n`` ahead sounding now and 25 s later; ``w`` (left, then it walks east) and ``e``
    (right) each once, 25 s apart: far more than a step rings."""
    sources = {"n": Source("n", "bianzhong", "鐘n", "bells n", "east", (0.0, 10.0, 1.5)),
               "w": Source("w", "footstep", "步w", "steps w", "action", (-10.0, 2.0, 1.5),
                           moves=((12.0, (10.0, -2.0, 1.5)),)),
               "e": Source("e", "footstep", "步e", "steps e", "action", (10.0, 2.0, 1.5))}
    events = [Event(0.1, 0.4, "n", None, 0.9, "strike", "c"),
              Event(0.2, 0.4, "w", None, 0.9, "strike", "c"),
              Event(0.6, 0.4, "w", None, 0.9, "strike", "c"),
              Event(25.0, 0.4, "n", None, 0.9, "strike", "c"),
              Event(25.1, 0.4, "e", None, 0.9, "strike", "c")]
    return Performance.build(events, [Marker(0.0, "section", "右設樂", "she yue", "s1")],
                             sources)


def test_past_the_limit_sources_that_sound_apart_take_turns_on_one_object():
    perf = in_turn_scene()
    objects = adm.plan_objects(perf, NORTH, max_objects=2)
    own, shared = objects
    assert own.sources == ("n",) and not own.turns  # the most heard keeps its own
    assert shared.sources == ("w", "e")
    assert shared.turns == (adm.AdmTurn("w", 0.2, 1.0), adm.AdmTurn("e", 25.1, 25.5))
    # the object stands where each source is as its turn begins (not where w walked to)
    assert [b.time for b in shared.blocks] == [0.0, 25.1]
    assert shared.blocks[0].azimuth == pytest.approx(78.7, abs=0.1)  # left
    assert shared.blocks[1].azimuth == pytest.approx(-78.7, abs=0.1)  # right
    carrying = adm.carrier(objects)
    assert all(carriers(objects, e) == [objects[carrying(e.source, e.time)].number]
               for e in perf.events)
    xml = adm.axml(objects, bed=False, seconds=26.0).decode()
    assert ("<!-- in turn: w 00:00:00.20000–00:00:01.00000, "
            "e 00:00:25.10000–00:00:25.50000 -->") in xml
    assert "步w / 步e | steps w / steps e" in xml
    # within the limit, one object each, as ever
    assert [(o.sources, o.turns) for o in adm.plan_objects(perf, NORTH, max_objects=3)] == [
        (("e",), ()), (("n",), ()), (("w",), ())]
    # one object: n sounds with w, so turns cannot do; w in turn and n and e merged are two
    with pytest.raises(RenderError, match=r"walkers' sounds need 1 objects at once .* "
                                          r"more than the 1"):
        adm.plan_objects(perf, NORTH, max_objects=1)


def test_too_many_sounding_at_once_for_turns_the_walkers_take_turns_and_the_rest_merge():
    perf = in_turn_scene()
    close = Performance.build(sorted((replace(e, time=0.5) if e.source == "e" else e
                                      for e in perf.events), key=lambda e: e.time),
                              list(perf.markers), dict(perf.sources))
    objects = adm.plan_objects(close, NORTH, max_objects=2)  # e steps while w does
    merged, walker = objects
    assert merged.sources == ("e", "n") and not merged.turns  # at their centroid
    assert merged.name == "步e + 鐘n"
    assert merged.blocks[0].azimuth == pytest.approx(-39.8, abs=0.1)  # (5, 6) m: to the right
    assert walker.sources == ("w",) and walker.turns == (adm.AdmTurn("w", 0.2, 1.0),)


@pytest.fixture(scope="module")
def rite() -> Performance:
    return perform_from_file(seed=0)


@pytest.mark.parametrize("profile", adm.PROFILES)
def test_the_whole_rites_sources_fit_a_master_with_every_event_on_one_object(rite, profile,
                                                                              tmp_path):
    """The whole 大射 in one master: 240 sources beside the bed, walkers among them, more
    than merging every standing source into one object left room for (the master was
    refused: "121 moving objects"); its objects as the master's ``.adm.json`` lists them
    are read by ``show --adm-osc``'s loader (names and blocks within its bounds)."""
    limit = min(adm.MAX_OBJECTS, adm.MAX_CHANNELS - adm.bed_channels(profile))
    objects = adm.plan_objects(rite, NORTH, max_channels=adm.MAX_CHANNELS
                               - adm.bed_channels(profile))
    assert len(objects) == limit  # the fewest in turn that fit, none merged
    assert all(len(o.sources) == 1 for o in objects if not o.turns)
    shared = [o for o in objects if o.turns]
    walkers = {sid for sid, s in rite.sources.items() if s.moves}
    assert walkers <= {sid for o in shared for sid in o.sources}  # the walkers take turns
    for obj in shared:  # one source at a time, handed over only once it has rung out
        assert all(b.start >= a.end + adm._gap(rite.sources[a.source].instrument)
                   for a, b in itertools.pairwise(obj.turns))
    heard = [e for e in rite.events if not adm._is_bed(rite, e.source)]
    carrying = adm.carrier(objects)
    assert all(carriers(objects, e) == [objects[carrying(e.source, e.time)].number]
               for e in heard)
    sidecar = tmp_path / "rite.wav.adm.json"
    sidecar.write_text(json.dumps({"objects": [asdict(o) for o in objects]},
                                  ensure_ascii=False), encoding="utf-8")
    assert [o["number"] for o in admosc.load_objects(sidecar)] == [o.number for o in objects]
    assert all(len(f"{o.name} | {o.roman}") < 2 * adm.MAX_NAME for o in shared)


def test_a_walking_listener_is_refused():
    walk = ListenerPath(((0.0, (0.0, 0.0, 1.5), "north"), (5.0, (5.0, 0.0, 1.5), "north")))
    with pytest.raises(RenderError, match="standing listener"):
        adm.plan_objects(scene(), walk)


@pytest.fixture(scope="module")
def master(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adm")
    result = render_adm(scene(bed=True), folder / "scene.wav", listener=NORTH,
                        voice=noise_voice, target_lufs=-18.0)
    return result


def test_the_file_is_an_adm_bwf_with_bext_chna_axml_and_cues(master):
    path = master.files[0]
    found = chunks(path)
    assert {b"fmt ", b"bext", b"chna", b"data", b"axml", b"cue ", b"LIST"} <= set(found)
    fmt = struct.unpack("<HHIIHH", found[b"fmt "][:16])
    assert fmt == (1, 4 + 16, 48000, 48000 * 20 * 3, 60, 24)  # 4 objects + an order-3 bed
    bext = found[b"bext"]
    assert bext[256:288].rstrip(b"\0") == b"soundscape"
    assert bext[320:338] == b"1970-01-0100:00:00"  # no wall clock
    assert struct.unpack("<QH", bext[338:348]) == (0, 2)  # time reference, version 2
    loudness, _, peak = struct.unpack("<hhh", bext[412:418])
    assert loudness == pytest.approx(-1800, abs=30) and peak <= -100
    tracks, uids = struct.unpack("<HH", found[b"chna"][:4])
    assert tracks == uids == 20
    root = ET.fromstring(found[b"axml"])
    programme = root.find(f".//{NS}audioProgramme")
    assert "大射儀" in programme.get("audioProgrammeName")
    assert "Archery" in programme.get("audioProgrammeName")
    assert len(root.findall(f".//{NS}audioObject")) == 5
    hoa = root.findall(f".//{NS}audioChannelFormat[@typeDefinition='HOA']")
    assert len(hoa) == 16 and hoa[15].find(f".//{NS}order").text == "3"
    assert [c.label for c in read_wav_cues(path)] == ["右設樂 | she yue", "奏肆夏 | zou sixia"]
    audio, rate = soundfile.read(path)
    assert rate == 48000 and audio.shape[1] == 20
    assert np.abs(audio[:, :4]).max(axis=0).min() > 0.01  # every object sounds
    assert np.abs(audio[:, 4]).max() > 0.01  # the bed's W


def test_same_inputs_same_bytes(master, tmp_path, monkeypatch):
    again = render_adm(scene(bed=True), tmp_path / "scene.wav", listener=NORTH,
                       voice=noise_voice, target_lufs=-18.0)
    assert again.files[0].read_bytes() == master.files[0].read_bytes()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    dated = render_adm(scene(bed=True), tmp_path / "dated.wav", listener=NORTH,
                       voice=noise_voice, target_lufs=-18.0)
    assert chunks(dated.files[0])[b"bext"][320:338] == b"2025-12-0100:00:00"


def test_bad_requests_are_refused(tmp_path):
    with pytest.raises(RenderError, match="48000"):
        render_adm(scene(), tmp_path / "x.wav", listener=NORTH, sample_rate=44100)
    with pytest.raises(RenderError, match=r"\.wav"):
        render_adm(scene(), tmp_path / "x.flac", listener=NORTH)


# ---- MediaInfo's conformance checks -------------------------------------------------------

def mediainfo_findings(path: Path) -> list[str]:
    """MediaInfo's conformance errors and warnings on ``path``: the messages under its text
    report's "Conformance …" headings (MediaInfo 24.12, bundled with pymediainfo)."""
    mediainfo = pytest.importorskip("pymediainfo").MediaInfo
    if not mediainfo.can_parse():
        pytest.skip("pymediainfo has no libmediainfo here")
    found, inside = [], False
    for line in mediainfo.parse(str(path), output="text").splitlines():
        if line.startswith("Conformance"):
            inside = True
        elif not line.strip():
            inside = False
        elif inside and line.partition(":")[2].strip() != "Yes":
            found.append(line.partition(":")[2].strip())
    return found


def test_mediainfo_finds_nothing_in_the_master_but_the_distance_it_does_not_know(tmp_path,
                                                                                 court):
    """``absoluteDistance`` (BS.2076's, which EBU ``ear`` reads) is the only finding: MediaInfo
    24.12 lists no such attribute. The bed's name for the ambience and the court together,
    88 characters, drew "is long" before (past 64)."""
    perf = scene(bed=True, walker=False)
    perf = Performance.build([e for e in perf.events if e.time < 0.7], list(perf.markers),
                             dict(perf.sources))
    result = render_adm(perf, tmp_path / "m.wav", listener=NORTH, voice=noise_voice,
                        surroundings=court)
    assert adm.BED_AND_COURT_CONTENT in chunks(result.files[0])[b"axml"].decode()
    findings = mediainfo_findings(result.files[0])
    assert findings and all(f == '"absoluteDistance" attribute is not part of specs'
                            for f in findings), findings


def test_a_name_is_at_most_64_characters_and_a_group_is_named_for_its_first():
    perf = scene(walker=False, where={f"s{k}": (k - 10.0, 10.0, 1.5) for k in range(20)})
    objects = adm.plan_objects(perf, NORTH, max_objects=3)
    root = ET.fromstring(adm.axml(objects, bed=False, seconds=1.0))
    names = [c.get("audioObjectName") for c in root.iter(f"{NS}audioObject")]
    assert all(len(n) <= adm.MAX_NAME for n in names)
    big = max(objects, key=lambda o: len(o.sources))
    assert len(big.sources) > 4 and any(f"+ {len(big.sources) - 1} more" in n for n in names)
    assert all(f"<!-- grouped: {', '.join(o.sources)} -->" in
               adm.axml(objects, bed=False, seconds=1.0).decode() for o in objects
               if len(o.sources) > 1)


# ---- EBU's renderer against ours -------------------------------------------------------------

def ear_render() -> str | None:
    found = os.environ.get("SOUNDSCAPE_EAR_RENDER") or shutil.which("ear-render")
    local = Path(__file__).resolve().parents[2] / ".venv-ear" / "bin" / "ear-render"
    return found or (str(local) if local.exists() else None)


needs_ear = pytest.mark.skipif(ear_render() is None, reason="EBU ear-render not installed "
                               "(SOUNDSCAPE_EAR_RENDER, PATH or .venv-ear)")

#: BS.2051 systems B (0+5+0) and D (4+5+0) as our VBAP's loudspeakers, in ear's channel order.
SYSTEMS = {
    "0+5+0": Vbap((30.0, -30.0, 0.0, 0.0, 110.0, -110.0), ("L", "R", "C", "LFE", "Ls", "Rs"),
                  silent=("LFE",)),
    "4+5+0": Vbap((30.0, -30.0, 0.0, 0.0, 110.0, -110.0, 30.0, -30.0, 110.0, -110.0),
                  ("L", "R", "C", "LFE", "Ls", "Rs", "Ltf", "Rtf", "Ltr", "Rtr"),
                  silent=("LFE",), elevations_deg=(0.0,) * 6 + (30.0,) * 4),
}


def _toward(azimuth: float, elevation: float = 0.0, distance: float = 10.0) -> tuple:
    """The point ``distance`` m from NORTH's ear in that direction (its frame: 0° north,
    positive west)."""
    az, el = np.radians(azimuth), np.radians(elevation)
    return (float(-distance * np.cos(el) * np.sin(az)), float(distance * np.cos(el) * np.cos(az)),
            float(1.5 + distance * np.sin(el)))


#: A scene both renderers pan alike: sources on a loudspeaker, and midway between two (a
#: constant-power pair gives each −3 dB whatever its pan law).
WHERE = {"0+5+0": {"l": _toward(30.0), "rside": _toward(-70.0), "back": _toward(180.0)},
         "4+5+0": {"l": _toward(30.0), "rside": _toward(-70.0), "up": _toward(-30.0, 30.0)}}


def _levels_db(audio: np.ndarray) -> np.ndarray:
    return 10 * np.log10(np.mean(np.square(audio, dtype=float), axis=0) + 1e-20)


@needs_ear
@pytest.mark.parametrize("system", list(SYSTEMS))
def test_ear_renders_the_master_as_our_renderer_renders_the_layout(tmp_path, system):
    perf = scene(walker=False, where=WHERE[system])
    result = render_adm(perf, tmp_path / "scene.wav", listener=NORTH, voice=noise_voice,
                        surroundings=DRY, target_lufs=-30.0)
    assert result.report.limiter_db == 0.0
    assert_ear_renders_as_we_do(result.files[0], result, perf, system, tmp_path)


def assert_ear_renders_as_we_do(master: Path, result, perf: Performance, system: str,
                                folder: Path) -> None:
    """``ear-render`` of ``master`` (``result``'s file, or a copy of it) to ``system`` is
    this project's VBAP render of ``perf`` there within 1 dB in every loudspeaker that
    carries sound, and nothing elsewhere."""
    out = folder / f"{system}.wav"
    subprocess.run([ear_render(), "-s", system, str(master), str(out)], check=True,
                   capture_output=True)
    theirs = soundfile.read(out)[0] / 10 ** (result.report.gain_db / 20)  # the raw scale
    ours = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=SYSTEMS[system], sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=DRY, block_frames=FS)))
    live = [i for i, n in enumerate(SYSTEMS[system].names) if n != "LFE"]
    a, b = _levels_db(theirs)[live], _levels_db(ours)[live]
    loud = b > b.max() - 30  # channels that carry a source
    assert np.all(np.abs(a - b)[loud] < 1.0), (a.round(1), b.round(1))
    assert np.all(a[~loud] < b.max() - 20)


@needs_ear
def test_a_source_to_the_left_is_loudest_in_the_left_channels(tmp_path):
    perf = scene(walker=False, where={"w": (-10.0, 2.0, 1.5)})
    result = render_adm(perf, tmp_path / "left.wav", listener=NORTH, voice=noise_voice,
                        surroundings=DRY)
    out = tmp_path / "left.0+5+0.wav"
    subprocess.run([ear_render(), "-s", "0+5+0", str(result.files[0]), str(out)], check=True,
                   capture_output=True)
    level = dict(zip(("L", "R", "C", "LFE", "Ls", "Rs"), _levels_db(soundfile.read(out)[0]),
                     strict=True))
    assert max(level, key=level.get) in ("L", "Ls")
    assert min(level["L"], level["Ls"]) > max(level["R"], level["Rs"]) + 20


@needs_ear
def test_a_shared_object_sounds_each_source_from_its_own_side_in_ear(tmp_path, monkeypatch):
    """Past the limit (two objects for three sources), ``w`` (left) and ``e`` (right) take
    turns on one object: its track carries each one's sound, and EBU's renderer plays the
    first from the left and the second from the right."""
    monkeypatch.setattr(adm, "plan_objects", functools.partial(adm.plan_objects,
                                                               max_objects=2))
    result = render_adm(in_turn_scene(), tmp_path / "turns.wav", listener=NORTH,
                        voice=noise_voice, surroundings=DRY, target_lufs=-30.0)
    tracks = soundfile.read(result.files[0])[0]
    assert tracks.shape[1] == 2
    first, later = slice(int(0.2 * FS), int(1.5 * FS)), slice(int(25.1 * FS), int(26.0 * FS))
    quiet = slice(int(2.0 * FS), int(24.0 * FS))
    shared = _levels_db(tracks[:, 1:2])[0]
    assert _levels_db(tracks[first, 1:2])[0] > shared - 3  # w's steps, then e's
    assert _levels_db(tracks[later, 1:2])[0] > shared - 3
    assert np.abs(tracks[quiet, 1]).max() == 0.0  # nothing between the turns
    out = tmp_path / "turns.0+5+0.wav"
    subprocess.run([ear_render(), "-s", "0+5+0", str(result.files[0]), str(out)], check=True,
                   capture_output=True)
    rendered = soundfile.read(out)[0]
    names = ("L", "R", "C", "LFE", "Ls", "Rs")
    then = dict(zip(names, _levels_db(rendered[first]), strict=True))
    after = dict(zip(names, _levels_db(rendered[later]), strict=True))
    assert min(then["L"], then["Ls"]) > max(then["R"], then["Rs"]) + 20  # w, on the left
    assert min(after["R"], after["Rs"]) > max(after["L"], after["Ls"]) + 20  # e, on the right


@needs_ear
def test_ear_reads_the_bed_and_the_cues_survive(master, tmp_path):
    out = tmp_path / "bed.wav"
    subprocess.run([ear_render(), "-s", "4+5+0", str(master.files[0]), str(out)], check=True,
                   capture_output=True)
    audio, rate = soundfile.read(out)
    assert rate == 48000 and audio.shape[1] == 10 and np.abs(audio).max() > 0.01


@pytest.mark.parametrize("args, message", [
    (("--format", "flac"), "48 kHz WAV"), (("--rate", "44100"), "48 kHz WAV")])
def test_cli_refuses_what_an_adm_master_cannot_be_before_sequencing(tmp_path, soundscape_cli,
                                                                    args, message):
    code, err = soundscape_cli("render", "--layout", "adm", *args, "--from", "s18", "--to", "s18",
                               cwd=tmp_path)
    assert code != 0 and message in err and "sequencing" not in err


class BindingVoice:
    """``noise_voice`` with a ``bind``, as every render's voice has (``SynthVoice.bind``:
    sung lines): what the render calls is the bound voice; its notes go to the disk cache
    (``stored_as``), as a ``SynthVoice``'s do."""

    def bind(self, performance, seed):
        return BindingVoice()

    def stored_as(self, key):
        return ("noise",)

    def __call__(self, event, source, *, sample_rate, rng):
        return noise_voice(event, source, sample_rate=sample_rate, rng=rng)


def test_the_bed_holds_the_ambience_alone_with_a_voice_bound_for_the_render(tmp_path):
    # the ambience sounds once at the start, the bells after 2 s: in a dry court, the bed
    # is silent from 1 s on (it carried every bell as well when the bound voice sounded
    # every source)
    perf = scene(bed=True, walker=False)
    events = [replace(e, time=0.1 if e.source == "amb" else 2.0 + e.time)
              for e in perf.events if e.source != "amb" or e.time < 0.5]
    perf = Performance.build(events, list(perf.markers), dict(perf.sources))
    result = render_adm(perf, tmp_path / "bound.wav", listener=NORTH, voice=BindingVoice(),
                        surroundings=DRY, target_lufs=-30.0)
    audio, _ = soundfile.read(result.files[0])
    objects, bed = audio[:, :3], audio[:, 3:]
    assert bed.shape[1] == 16
    assert np.abs(bed[:FS]).max() > 0.01  # the ambience
    assert np.abs(objects[2 * FS:]).max() > 0.01  # the bells, as objects
    assert np.abs(bed[FS:]).max() == 0.0  # and only there


def test_the_streams_sharing_a_disk_cache_give_the_same_bytes(tmp_path):
    # the ambience's stream leaves the bells out: their silence there must not be cached as
    # the bells' notes, which the objects' stream then read (every bell silent)
    from soundscape.sound.diskcache import NoteStore

    perf = scene(bed=True, walker=False)
    plain = render_adm(perf, tmp_path / "plain.wav", listener=NORTH, voice=BindingVoice(),
                       surroundings=DRY, target_lufs=-30.0)
    store = NoteStore(tmp_path / "notes", 1 << 30)
    for run in ("cold", "warm"):
        cached = render_adm(perf, tmp_path / f"{run}.wav", listener=NORTH,
                            voice=BindingVoice(), surroundings=DRY, target_lufs=-30.0,
                            store=store)
        assert cached.files[0].read_bytes() == plain.files[0].read_bytes(), run
    assert store.stats["writes"] > 0


# ---- the court's reverberation as a second bed ---------------------------------------------

@pytest.fixture(scope="module")
def court():
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court

    return Surroundings(court=load_court(load_site()))


def _short(where=None) -> Performance:
    """Two strokes from the scene's west and north-east sources, done by 1.1 s."""
    perf = scene(walker=False, where=where or {"w": (-10.0, 8.0, 1.5), "ne": (10.0, 18.0, 1.5)})
    return Performance.build([e for e in perf.events if e.time < 0.7], list(perf.markers),
                             dict(perf.sources))


def test_the_courts_late_tail_is_a_second_hoa_bed_named_in_both_languages(tmp_path, court):
    perf = _short()
    result = render_adm(perf, tmp_path / "court.wav", listener=NORTH, voice=noise_voice,
                        surroundings=court, target_lufs=-30.0)
    assert result.report.limiter_db == 0.0
    found = chunks(result.files[0])
    root = ET.fromstring(found[b"axml"])
    contents = {c.get("audioContentID"): c.get("audioContentName")
                for c in root.findall(f".//{NS}audioContent")}
    assert set(contents) == {"ACO_1001", "ACO_1003"}  # no ambience here: no ACO_1002
    assert "庭" in contents["ACO_1003"] and "echoes and reverberation" in contents["ACO_1003"]
    assert b"bed (court echoes and reverberation)" in found[b"bext"][:256]  # as the axml says
    assert struct.unpack("<HH", found[b"chna"][:4]) == (2 + 16, 2 + 16)
    assert len(root.findall(f".//{NS}audioPackFormat[@typeDefinition='HOA']")) == 1
    audio, _ = soundfile.read(result.files[0])
    assert audio.shape[1] == 2 + 16
    audio /= 10 ** (result.report.gain_db / 20)
    # the bed is the project's own late tail: past the notes and the early window, the
    # project's hoa3 render of the same scene is its tail alone, and its W is the bed's W
    from soundscape.sound.panning import Ambisonic
    ours = np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=Ambisonic(3), sample_rate=FS, seed=0, voice=noise_voice,
        surroundings=court, block_frames=FS)))
    late = slice(round(1.4 * FS), round(2.4 * FS))
    bed_w, own_w = audio[late, 2], ours[late, 0]
    assert np.mean(bed_w ** 2) > 1e-8
    assert 10 * np.log10(np.mean(bed_w ** 2) / np.mean(own_w ** 2)) == pytest.approx(0, abs=0.5)
    assert np.corrcoef(bed_w, own_w)[0, 1] > 0.95
    # the objects carry no court: silent once their notes and floor bounce are over
    assert np.abs(audio[late, :2]).max() < 1e-4


def _missing_db(path: Path, gain_db: float, perf: Performance, listener: Listener,
                surroundings: Surroundings) -> float:
    """What the master at ``path`` (two objects, then its bed) lacks of the project's own hoa3
    render: ambisonic W hears every direction alike, so the objects' tracks summed plus the
    bed's W are that render's W; the residual's energy over the first 1.2 s (the notes, their
    early sound and the tail's start), in dB under that W's."""
    from soundscape.sound.panning import Ambisonic

    audio, _ = soundfile.read(path)
    audio /= 10 ** (gain_db / 20)
    ours = np.concatenate(list(render_blocks(
        perf, listener=listener, panner=Ambisonic(3), sample_rate=FS, seed=0,
        voice=noise_voice, surroundings=surroundings, block_frames=FS)))[:, 0]
    frames = min(round(1.2 * FS), len(ours))
    audio = np.pad(audio, ((0, max(0, frames - len(audio))), (0, 0)))  # a master that ends early
    theirs = audio[:frames, :2].sum(axis=1) + audio[:frames, 2]
    residual = np.mean((theirs - ours[:frames]) ** 2) / np.mean(ours[:frames] ** 2)
    return float(10 * np.log10(residual))


def test_the_objects_and_the_bed_hold_every_path_of_the_projects_own_render(tmp_path, court):
    # the objects' direct sound and floor bounce, plus the bed (the early images off the
    # walls and the hall, and the late tail; without the early images in the bed: -2 dB)
    perf = _short()
    result = render_adm(perf, tmp_path / "court.wav", listener=NORTH, voice=noise_voice,
                        surroundings=court, target_lufs=-30.0)
    assert _missing_db(result.files[0], result.report.gain_db, perf, NORTH, court) < -40


def test_without_a_court_the_bed_holds_the_hall_fronts_echo(tmp_path):
    # south of the hall's front a listener hears each source off it as well: the objects
    # carry the direct sound and the floor's, the bed that echo (it was in neither: what the
    # master lacked of the project's render was -19 dB)
    south = Listener((0.0, -20.0, 1.5), "north")
    perf = _short(where={"w": (-10.0, -8.0, 1.5), "ne": (10.0, -30.0, 1.5)})
    plain = Surroundings()  # `--court none`: the floor and the hall's front
    result = render_adm(perf, tmp_path / "hall.wav", listener=south, voice=noise_voice,
                        surroundings=plain, target_lufs=-30.0)
    found = chunks(result.files[0])
    assert struct.unpack("<HH", found[b"chna"][:4]) == (2 + 16, 2 + 16)
    contents = {c.get("audioContentID"): c.get("audioContentName")
                for c in ET.fromstring(found[b"axml"]).findall(f".//{NS}audioContent")}
    assert set(contents) == {"ACO_1001", "ACO_1003"} and "echoes" in contents["ACO_1003"]
    assert b"hall front echo" in found[b"bext"][:256]
    assert _missing_db(result.files[0], result.report.gain_db, perf, south, plain) < -40
    # on the hall's front no source is heard off it: no bed
    on_front = render_adm(perf, tmp_path / "front.wav", listener=NORTH, voice=noise_voice,
                          surroundings=plain, target_lufs=-30.0)
    assert soundfile.info(on_front.files[0]).channels == 2


@needs_ear
def test_ear_renders_the_court_bed_all_round(tmp_path, court):
    result = render_adm(_short(), tmp_path / "court.wav", listener=NORTH, voice=noise_voice,
                        surroundings=court, target_lufs=-30.0)
    out = tmp_path / "court.0+5+0.wav"
    subprocess.run([ear_render(), "-s", "0+5+0", str(result.files[0]), str(out)], check=True,
                   capture_output=True)
    theirs, _ = soundfile.read(out)
    levels = _levels_db(theirs[round(1.4 * FS):round(2.4 * FS)])[[0, 1, 2, 4, 5]]
    # the late sound comes from all round: every loudspeaker within 10 dB of the loudest
    assert levels.max() - levels.min() < 10.0, levels.round(1)
    assert levels.min() > -90.0


def test_each_note_is_made_once_for_the_objects_and_their_early_images(tmp_path, court,
                                                                         monkeypatch):
    # the early images' stream hears the objects' events again: the objects' stream hands it
    # each dry note (it made every one again before, with no disk cache)
    import soundscape.sound.adm_render as adm_render
    from soundscape.sound.notes import NoteHandoff

    made: collections.Counter = collections.Counter()

    def counting_voice(event, source, *, sample_rate, rng):
        made[(event.source, event.time)] += 1
        return noise_voice(event, source, sample_rate=sample_rate, rng=rng)

    perf = _short()
    result = render_adm(perf, tmp_path / "once.wav", listener=NORTH, voice=counting_voice,
                        surroundings=court, target_lufs=-30.0)
    assert made and set(made.values()) == {1}  # (events of one note: made for the first)
    once = made.copy()

    class Forgetful(NoteHandoff):  # hands nothing over: the stream makes its notes itself
        def give(self, *_):
            pass

    monkeypatch.setattr(adm_render, "NoteHandoff", Forgetful)
    alone = render_adm(perf, tmp_path / "alone.wav", listener=NORTH, voice=counting_voice,
                       surroundings=court, target_lufs=-30.0)
    assert made == once + once + once  # once more in each stream
    assert alone.files[0].read_bytes() == result.files[0].read_bytes()


def _zeros_and_adds(streams, width):
    """The side by side block as it was made: each stream added into a block of zeros."""
    for blocks in itertools.zip_longest(*(s for s, _, _ in streams)):
        frames = max(len(b) for b in blocks if b is not None)
        out = np.zeros((frames, width), dtype=np.float32)
        for block, (_, column, wide) in zip(blocks, streams, strict=True):
            if block is not None:
                out[:len(block), column:column + wide] += block
        yield out


def test_the_streams_side_by_side_are_the_bits_of_adding_each_into_zeros():
    from soundscape.sound.adm_render import _side_by_side

    rng = np.random.default_rng(3)

    def stream(wide, lengths):
        blocks = []
        for frames in lengths:
            block = rng.normal(size=(frames, wide)).astype(np.float32)
            block[rng.random(block.shape) < 0.3] = -0.0  # signs of zero, and exact zeros
            block[rng.random(block.shape) < 0.1] = 0.0
            blocks.append(block)
        return blocks

    layout = [(3, 4, [5, 5, 5]), (0, 3, [5, 5, 5, 2]), (3, 4, [5, 5]), (3, 4, [5, 5, 5, 1])]
    made = [stream(wide, lengths) for _, wide, lengths in layout]
    for width in (7, 9):  # every column a stream's, or two columns none's
        ours = list(_side_by_side(
            [(iter(m), c, w) for m, (c, w, _) in zip(made, layout, strict=True)], width))
        before = list(_zeros_and_adds(
            [(iter(m), c, w) for m, (c, w, _) in zip(made, layout, strict=True)], width))
        assert len(ours) == len(before) == 4
        for a, b in zip(ours, before, strict=True):
            assert a.dtype == np.float32 and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("lengths", [(3, 4, 5), (3, 4, 2), (3, 4, 0), (0, 0, 3), (2, 6, 4)])
def test_a_stream_drawn_beside_is_a_step_behind_and_gives_the_steps_in_turn(lengths):
    # the early images' stream is drawn on a thread: each step's blocks are those of
    # zip_longest, and it makes its block k only after the others have made theirs
    import threading
    import time

    from soundscape.sound.adm_render import _in_step

    log, lock = [], threading.Lock()

    def stream(name, count):
        for k in range(count):
            if name != "c":  # slow: a stream beside that ran ahead would be seen to
                time.sleep(0.005)
            with lock:
                log.append((name, k))
            yield np.full((2, 1), k, dtype=np.float32)

    def steps(beside):
        log.clear()
        found = [tuple(None if b is None else int(b[0, 0]) for b in step)
                 for step in _in_step([stream(n, c) for n, c in zip("abc", lengths,
                                                                    strict=True)], beside)]
        return found, list(log)

    in_turn, _ = steps(None)
    assert in_turn == [tuple(k if k < c else None for c in lengths)
                       for k in range(max(lengths))]
    found, order = steps(2)
    assert found == in_turn
    for k in range(lengths[2]):
        drawn = order.index(("c", k))
        assert all(order.index((n, k)) < drawn
                   for n, c in zip("ab", lengths[:2], strict=True) if k < c)


def test_a_stream_drawn_beside_that_fails_fails_the_render():
    from soundscape.sound.adm_render import _in_step

    def failing():
        yield np.zeros((2, 1), dtype=np.float32)
        raise RenderError("made beside")

    steps = _in_step([iter([np.zeros((2, 1))] * 5), failing()], 1)
    with pytest.raises(RenderError, match="made beside"):
        list(steps)


def test_the_early_images_drawn_beside_are_the_bytes_drawn_in_turn(tmp_path, court,
                                                                     monkeypatch):
    import soundscape.sound.adm_render as adm_render

    perf = _short()
    beside = render_adm(perf, tmp_path / "beside.wav", listener=NORTH, voice=noise_voice,
                        surroundings=court, target_lufs=-30.0)
    in_step = adm_render._in_step
    monkeypatch.setattr(adm_render, "_in_step", lambda streams, _: in_step(streams, None))
    in_turn = render_adm(perf, tmp_path / "in_turn.wav", listener=NORTH, voice=noise_voice,
                         surroundings=court, target_lufs=-30.0)
    assert beside.files[0].read_bytes() == in_turn.files[0].read_bytes()


def test_off_the_main_thread_the_early_images_are_drawn_in_turn(tmp_path, court, monkeypatch):
    # a render in a Dask worker's thread: OpenBLAS would not take the one-thread limit there
    import threading

    import soundscape.sound.adm_render as adm_render

    asked = []
    in_step = adm_render._in_step

    def recording(streams, beside):
        asked.append(beside)
        return in_step(streams, beside)

    monkeypatch.setattr(adm_render, "_in_step", recording)
    perf = _short()
    render_adm(perf, tmp_path / "main.wav", listener=NORTH, voice=noise_voice,
               surroundings=court, target_lufs=-30.0)
    failed = []

    def render_in_worker():
        try:
            render_adm(perf, tmp_path / "worker.wav", listener=NORTH, voice=noise_voice,
                       surroundings=court, target_lufs=-30.0)
        except BaseException as error:  # raised below, in the test's thread
            failed.append(error)

    worker = threading.Thread(target=render_in_worker)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    assert asked == [2, None]  # (objects, court bed, early images: no ambience here)
    # the same bytes (they differed by 1 LSB in the bed's 2nd and 3rd orders before the
    # worker's thread set OpenBLAS's count for itself, ``render._one_thread``)
    assert (tmp_path / "worker.wav").read_bytes() == (tmp_path / "main.wav").read_bytes()


def test_a_part_cut_before_the_end_ends_at_the_cut_faded_out_bed_and_all(tmp_path, court):
    """As ``render``'s: the master of a part cut while sounds were to come ends at the cut,
    faded out. The court bed is made by the objects' stream, and it ran on past the cut
    unfaded (s21's master 47.0 s against 45.3 s in stereo, −15.6 dBFS in its last 50 ms)."""
    whole = scene(walker=False)
    part = whole.between(0.0, 2.0)
    assert part.info.cut_at == 2.0
    result = render_adm(part, tmp_path / "cut.wav", listener=NORTH, voice=noise_voice,
                        surroundings=court, target_lufs=-30.0)
    audio, _ = soundfile.read(result.files[0])
    assert len(audio) == round(2.0 * FS) and audio.shape[1] == 3 + 16
    assert np.abs(audio[-48:]).max() < 1e-3 * np.abs(audio).max()
    assert np.abs(audio[-round(0.5 * FS):, 3:]).max() > 0  # the bed faded, not silent
