"""The whole kit from a small rite: loops, captions, cue lists, layouts, page, manifest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import soundfile

from soundscape.kit.build import build_kit
from soundscape.site.courtyard import load_site
from soundscape.sound.audiofile import read_wav_channel_mask
from tests.kit.scenes import rite

PROGRAMMES = """
calibration_lufs = -24.0
[[programme]]
id = "all"
title = "All of it"
listeners = ["gong_wei", "zhongting"]

[[programme]]
id = "music"
title = "肆夏 in {length}"
description = "{pieces_basis} in {sections}, heard from {place}, {{as written}}"
from = "s2"
to = "s2"
calibration_lufs = -30.0
"""


def build(folder: Path, programmes_text: str = PROGRAMMES, **options) -> Path:
    programmes = folder / "programmes.toml"
    programmes.parent.mkdir(parents=True, exist_ok=True)
    programmes.write_text(programmes_text, encoding="utf-8")
    return build_kit(folder / "kit", rite=rite(), site=load_site(), programme_file=programmes,
                     **{"layouts": ("stereo", "5.1"), "executor": "serial", **options})


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("kit")).parent


def test_every_programme_zone_and_layout_is_a_loop_at_its_level(kit):
    data = json.loads((kit / "manifest.json").read_text())
    assert [p["id"] for p in data["programmes"]] == ["all", "music"]
    everything, music = data["programmes"]
    assert [(r["zone"], r["layout"]) for r in everything["renders"]] == [
        ("gong_wei", "stereo"), ("gong_wei", "5.1"), ("zhongting", "stereo"),
        ("zhongting", "5.1")]
    assert everything["seconds"] == pytest.approx(rite().sections[-1].end)
    # 肆夏 begins on a stroke at 4 s: the loop opens a second earlier, on the rite's quiet
    assert music["parts"] == [[3.0, 8.0]] and music["seconds"] == 5.0
    assert music["lead_s"] == 1.0 and everything["lead_s"] == 0.0
    # where each loop's first sound comes in: 肆夏's stroke, the 負侯's answer
    assert music["restart_s"] == 1.0 and everything["restart_s"] == 1.0
    for programme, level in ((everything, -24.0), (music, -30.0)):
        for render in programme["renders"]:
            assert render["calibration_lufs"] == level
            assert render["output_lufs"] <= level + 0.05
            assert render["true_peak_dbtp"] <= -1.0 + 0.01
            info = soundfile.info(kit / render["files"][0]["file"])
            assert info.samplerate == 48000 and info.subtype == "PCM_24"
            assert info.frames == round(programme["seconds"] * 48000)
            assert render["seam_step_db"] >= 0.0
    # every loop's seam steps less than 95 % of the steps inside it: the whole rite loops
    # from its ending ring into its quiet start; 肆夏, which begins on a stroke, loops
    # through its lead (without it the stroke came in at the seam from near silence:
    # 46 dB against ≤ 18 dB elsewhere)
    for render in everything["renders"] + music["renders"]:
        assert render["seam_step_db"] <= render["other_steps_db"]["p95"]
        assert render["seam_within_p95"]
    for render in music["renders"]:
        # the restart: the first stroke after the quiet, the largest step in the loop
        assert render["restart_step_db"] == render["other_steps_db"]["max"]
        assert render["restart_step_db"] > render["seam_step_db"] + 30.0
    # extensible WAVs with the speaker masks soundscape render writes (L R; L R C LFE Ls Rs)
    assert [read_wav_channel_mask(kit / r["files"][0]["file"])
            for r in everything["renders"]] == [0x3, 0x3F, 0x3, 0x3F]
    five = everything["renders"][1]
    assert [c["name"] for c in five["channels"]] == ["L", "R", "C", "LFE", "Ls", "Rs"]
    assert (kit / "layouts" / "5.1.json").is_file()


def test_manifest_names_pieces_with_their_basis_rite_and_checksums(kit):
    data = json.loads((kit / "manifest.json").read_text())
    assert data["rite"]["tuning"] == "三分損益" and data["rite"]["seed"] == 0
    assert data["court"]["hypothesis"] == "bare"  # the court the loops are heard in
    music = data["programmes"][1]
    assert music["pieces"] == [{"id": "sixia", "title": "肆夏", "basis": "reconstruction",
                                "note": "lost; rebuilt by rule"}]
    files = [f for p in data["programmes"] for f in p["files"]]
    files += [f for p in data["programmes"] for r in p["renders"] for f in r["files"]]
    files += data["page"] + data["layouts"]
    assert [f["file"] for f in data["layouts"]] == ["layouts/5.1.json"]
    assert {f["file"] for f in files} >= {"all.gong_wei.vtt", "music.cues.json",
                                         "music.gong_wei.stereo.wav"}
    for entry in files:
        assert hashlib.sha256((kit / entry["file"]).read_bytes()).hexdigest() == entry["sha256"]


def test_same_inputs_same_bytes_whatever_the_executor(kit, tmp_path):
    other = build(tmp_path, executor="local", workers=2, programme_ids=("music",)).parent
    for name in ("music.gong_wei.stereo.wav", "music.gong_wei.5.1.wav", "music.cues.csv",
                 "music.gong_wei.vtt"):
        assert (other / name).read_bytes() == (kit / name).read_bytes(), name


def test_the_manifest_and_page_say_the_programmes_wording_filled(kit):
    """Placeholders in a title or description are filled for the rite wherever the kit
    shows them (they were shown as written)."""
    title, description = ("肆夏 in five seconds",
                          "肆夏 (reconstruction) in s2 奏樂, heard from the duke's seat, "
                          "{as written}")
    music = json.loads((kit / "manifest.json").read_text())["programmes"][1]
    assert (music["title"], music["description"]) == (title, description)
    page = json.loads((kit / "web" / "data.js").read_text().removeprefix("window.KIT = ")
                      .rstrip().rstrip(";"))
    shown = next(p for p in page["programmes"] if p["id"] == "music")
    assert (shown["title"], shown["description"]) == (title, description)


def test_kit_page_and_sidecars_exist(kit):
    assert (kit / "index.html").is_file()
    assert (kit / "web" / "data.js").read_text().startswith("window.KIT = ")
    vtt = (kit / "music.gong_wei.vtt").read_text()
    assert "[bells, drums and voices: 肆夏 (reconstruction), from the" in vtt


def test_a_layout_files_name_never_leaves_the_kit(tmp_path):
    """An IEM file's ``Name`` is the user's text: the files named after it stay in the kit.
    (The name climbs relatively, so that on code without the check the test's files stay
    in its own folder; ``tests/kit/test_speakers.py`` checks names from the root.)"""
    layout = tmp_path / "hall.json"
    layout.write_text(json.dumps({"Name": "../../../PWNED_REL", "LoudspeakerLayout": {
        "Name": "../../../PWNED_REL", "Loudspeakers": [
            {"Azimuth": 30, "Elevation": 0, "Channel": 1},
            {"Azimuth": -30, "Elevation": 0, "Channel": 2},
            {"Azimuth": 180, "Elevation": 0, "Channel": 3}]}}), encoding="utf-8")
    deep = tmp_path / "a" / "b"
    build(deep, layouts=(str(layout),), programme_ids=("music",))
    written = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    outside = {p for p in written if not p.is_relative_to(Path("a/b/kit"))} - {
        Path("hall.json"), Path("a/b/programmes.toml")}
    assert not outside, outside
    assert (deep / "kit" / "layouts" / "pwned_rel.json").is_file()
    assert (deep / "kit" / "music.gong_wei.pwned_rel.wav").is_file()


def test_a_rebuilt_kit_holds_and_lists_only_what_it_made(tmp_path):
    """A second kit in the same folder listed the first one's listening files as its own,
    and its loops, captions, layouts and stems stayed; a file the user put there stays."""
    from soundscape.kit.manifest import files_of

    kit = build(tmp_path).parent
    (kit / "notes.txt").write_text("mine")
    first = {p.relative_to(kit).as_posix() for p in kit.rglob("*") if p.is_file()}
    assert any(".listen/" in name for name in first) and "layouts/5.1.json" in first
    music_only = PROGRAMMES.replace(PROGRAMMES[PROGRAMMES.index("[[programme]]"):
                                               PROGRAMMES.rindex("[[programme]]")], "")
    manifest = build(tmp_path, music_only, layouts=("stereo",), listen=False)
    data = json.loads(manifest.read_text(encoding="utf-8"))
    assert [p["id"] for p in data["programmes"]] == ["music"]
    assert data["layouts"] == [] and data["listen"] == []
    left = {p.relative_to(kit).as_posix() for p in kit.rglob("*")
            if p.is_file() and not p.name.startswith(".")}
    assert left == {*files_of(data), "manifest.json", "notes.txt"}
    assert not any(kit.glob("*.listen")) and not (kit / "layouts").exists()


def test_a_kit_being_rebuilt_has_no_manifest_its_files_do_not_match(tmp_path):
    """Stopped half way, the new loops sat beside the old manifest's checksums."""
    from soundscape.kit.manifest import RECORD, begin, files_of

    manifest = build(tmp_path, layouts=("stereo",), listen=False)
    kit = manifest.parent
    listed = files_of(json.loads(manifest.read_text(encoding="utf-8")))
    begin(kit)
    assert not manifest.exists()
    assert set(listed) <= set((kit / RECORD).read_text(encoding="utf-8").splitlines())


def test_the_page_is_headed_by_its_rites_title(tmp_path):
    """index.html said 大射儀 in its title and heading whatever rite the kit was built for."""
    from soundscape.kit.web import write_page

    page = write_page(tmp_path, [], load_site(), rite="燕禮 <i>").read_text(encoding="utf-8")
    assert "<title>燕禮 &lt;i&gt; — soundscape kit</title>" in page
    assert "<h1>燕禮 &lt;i&gt; <span" in page and "大射儀" not in page and "{rite}" not in page
