"""What the kit page renders live from: dry stems at 1 m with their places, and the court's
late responses per zone and listening spot."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import soundfile

from soundscape.kit import listen
from soundscape.performance import Event, Performance, Source
from soundscape.site.courtyard import load_site
from soundscape.sound import adm
from soundscape.sound.court import load_court
from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, stable_ints
from tests.kit.scenes import rite, tone_voice


@pytest.fixture(scope="module")
def court():
    return load_court(load_site())


def whole(root, found: dict, stem: dict) -> np.ndarray:
    """A stem's pieces read back and put end to end, each times its gain: pressure at 1 m."""
    piece = round(found["piece_s"] * found["rate"])
    out = np.zeros(found["frames"])
    for k, (name, scale) in enumerate(zip(stem["files"], stem["scales"], strict=True)):
        if name is not None:
            audio, rate = soundfile.read(root / name)
            assert rate == found["rate"] and len(audio) == min(piece, len(out) - k * piece)
            out[k * piece:k * piece + len(audio)] = audio * scale
    return out


def test_stems_are_the_voices_dry_notes_at_their_onsets_with_their_places(tmp_path, court):
    perf = rite()
    # pieces of 1.5 s: the bells' notes (1.5 s from 4 s, every 0.5 s) run across their ends
    found = listen.write_stems(tmp_path / "p.listen", perf, court=court, listen_at=(0, 0, 1.5),
                               seed=3, calibration_lufs=-24.0, voice=tone_voice, piece_s=1.5)
    stems = {s["sources"][0]: s for s in found["stems"]}
    assert set(stems) == {e.source for e in perf.events}  # one per source: under the limit
    bells = stems["east.bells"]
    assert bells["track"] == [[0.0, 8.0, 0.0, 1.2]] and bells["zone"] == court.zone(
        (8.0, 0.0, 1.2))[0]
    # the stems run a second past the programme, in pieces; silent pieces are no file
    rate = found["rate"]
    assert found["frames"] == math.ceil(perf.duration * rate) + rate
    assert len(bells["files"]) == math.ceil(found["frames"] / (1.5 * rate))
    assert bells["files"][:2] == [None, None] and all(bells["files"][2:7])
    assert len({name for s in found["stems"] for name in s["files"] if name}) == sum(
        name is not None for s in found["stems"] for name in s["files"])
    # back to pressure at 1 m: the events' own dry notes (same keys and variants as a render)
    audio = whole(tmp_path, found, bells)
    dry = DryNotes(tone_voice, rate, 3, ByteLru(0))
    expected = np.zeros_like(audio)
    for index, event in enumerate(perf.events):
        if event.source == "east.bells":
            source = perf.sources[event.source]
            key = dry.key(event, source)
            note = dry(event, source, key, stable_ints(3, index)[0] % dry.variants(source))
            at = round(event.time * rate)
            expected[at:at + len(note)] += note[:len(audio) - at]
    # each piece at its own peak: 24-bit rounding of the loudest
    assert np.abs(audio - expected).max() < 2e-6 * max(bells["scales"])
    assert np.abs(expected).max() > 0.1
    assert found["air"]["hz"] == listen.AIR_HZ and 0.05 < found["air"]["db_per_m"] < 0.3


def test_a_piece_is_given_out_before_any_note_that_starts_after_it_is_made():
    """The kit holds the pieces that notes still sound in, not the programme: piece k comes
    out before a note starting past its end is made, so a long programme's stems take the
    memory of a few pieces."""
    perf = rite()
    made: list[float] = []

    def voice(event, source, *, sample_rate, rng):
        made.append(event.time)
        return tone_voice(event, source, sample_rate=sample_rate, rng=rng)

    groups = [adm.SourceGroup((sid,)) for sid in perf.sources]
    pieces = []
    for k, piece in enumerate(listen._dry_pieces(perf, groups, voice=voice, seed=0,
                                                 piece=listen.RATE)):
        assert all(t < k + 1 for t in made), (k, made)  # nothing from a later second yet
        pieces.append(piece)
    assert max(made) > 6.0  # notes of the seventh second made (DryNotes keeps repeats)
    assert [len(p) for p in pieces[:-1]] == [listen.RATE] * (len(pieces) - 1)
    assert sum(map(len, pieces)) == math.ceil(perf.duration * listen.RATE) + listen.RATE


def test_past_the_limit_standing_sources_share_a_stem_at_their_centroid(tmp_path, court):
    sources = {f"s{k}": Source(f"s{k}", "bianzhong", f"鐘{k}", f"bell {k}", "east",
                               (float(k), 10.0, 1.0)) for k in range(listen.MAX_STEMS + 2)}
    events = [Event(0.1 * k, 0.2, sid, None, 0.8, "strike", "c")
              for k, sid in enumerate(sources)]
    found = listen.write_stems(tmp_path / "q.listen", Performance.build(events, [], sources),
                               court=court, listen_at=(0, 0, 1.5), seed=0,
                               calibration_lufs=-24.0, voice=tone_voice)
    assert len(found["stems"]) == listen.MAX_STEMS
    grouped = [s for s in found["stems"] if len(s["sources"]) > 1]
    assert grouped and all(" + " in s["name"] for s in grouped)
    for stem in grouped:
        xs = [float(sid[1:]) for sid in stem["sources"]]
        assert stem["track"][0][1] == pytest.approx(sum(xs) / len(xs))


def test_past_the_limit_walkers_heard_apart_take_turns_on_a_stem(tmp_path, court):
    """One walker more than the stems: the two that sound 30 s apart share a stem, which
    carries each one's notes and stands where each is as its turn begins."""
    sources = {f"w{k:02d}": Source(f"w{k:02d}", "footstep", f"步{k}", f"steps {k}", "action",
                                   (float(k), 10.0, 0.0), moves=((40.0, (0.0, 0.0, 0.0)),))
               for k in range(listen.MAX_STEMS + 1)}
    events = [Event(0.1, 0.2, "w00", None, 0.8, "step", "c"),
              Event(30.0, 0.2, "w01", None, 0.8, "step", "c")]
    events += [Event(1.0, 0.2, sid, None, 0.8, "step", "c") for sid in sorted(sources)[2:]]
    events.sort(key=lambda e: e.time)
    found = listen.write_stems(tmp_path / "t.listen", Performance.build(events, [], sources),
                               court=court, listen_at=(0, 0, 1.5), seed=0,
                               calibration_lufs=-24.0, voice=tone_voice)
    assert len(found["stems"]) == listen.MAX_STEMS
    shared = [s for s in found["stems"] if "turns" in s]
    assert [s["sources"] for s in shared] == [["w00", "w01"]]
    stem = shared[0]
    assert stem["turns"] == [["w00", 0.1, 0.3], ["w01", 30.0, 30.2]]
    assert stem["track"] == [[0.0, 0.0, 10.0, 0.0], [30.0, 1.0, 10.0, 0.0]]
    assert stem["name"] == "步0 / 步1"
    audio = whole(tmp_path, found, stem)
    rate = found["rate"]
    assert np.abs(audio[:rate]).max() > 0.1 and np.abs(audio[30 * rate:31 * rate]).max() > 0.1
    assert not audio[2 * rate:29 * rate].any()  # nothing between the turns
    alone = [s for s in found["stems"] if s["sources"] == ["w02"]]
    assert alone and "turns" not in alone[0]


def test_every_bundled_programme_with_stems_fits_them():
    """``music``, ``round3`` and ``cue.lishou`` stopped the kit ("layout adm: 37 moving
    objects, more than the 16 a file may hold"): their walkers now take turns, and where
    too many sound at once (貍首's orchestra) the standing sources merge."""
    from soundscape.kit.build import programmes_for
    from soundscape.kit.programmes import cut, lead_in, spans
    from soundscape.sequence import perform_from_file

    whole = perform_from_file(seed=0)
    checked = []
    for programme in programmes_for(whole, load_site()):
        part, length = cut(whole, lead_in(whole, spans(programme, whole), programme.lead_s),
                           programme.gap_s)
        if length > listen.LISTEN_S:
            continue
        groups = adm.group_sources(part, listen.MAX_STEMS, "stems")
        carrying = adm.carrier(groups)
        assert len(groups) <= listen.MAX_STEMS
        assert all(carrying(e.source, e.time) is not None for e in part.events
                   if part.sources[e.source].instrument not in adm.BED_INSTRUMENTS)
        checked.append(programme.id)
    assert {"music", "round3", "cue.lishou", "yuebin"} <= set(checked)


def test_a_zones_response_is_the_courts_late_sound_only(court):
    point = court.zones[1][1]
    spot = (court.zones[0][1][0], court.zones[0][1][1], listen.EAR_M)
    ir, gain = listen._response(court, tuple(point), spot, 0)
    assert ir.shape == (round(listen.IR_S * listen.IR_RATE), len(listen.RING_DEG))
    direct = math.dist(point, spot) / 343.0
    first = np.flatnonzero(np.abs(ir).max(axis=1) > 0)[0] / listen.IR_RATE
    # nothing before the court's early window has passed (the direct and early paths are
    # the page's panner's, or left out); the late tail from there on
    assert first == pytest.approx(direct + court.model.early_ms / 1000, abs=0.002)
    energy = np.convolve((ir.astype(float) ** 2).sum(axis=1), np.ones(1600), "same")
    late = energy[round((direct + 0.15) * listen.IR_RATE):]
    # it decays: 35 dB or more from its strongest 0.1 s to its last (the render's own tail
    # ends at −40 dB)
    assert 10 * np.log10(late.max() / energy[-800]) > 35.0
    assert 0 < gain < 1  # a click of 1 at 1 m heard metres away, through the court


def test_synth_voice_stems_default(tmp_path, court):
    """The default voice is the project's synthesis (a real instrument sounds)."""
    perf = rite()
    few = Performance.build([replace(e, piece=None) for e in perf.events
                             if e.source == "east.bells"][:2], [],
                            {"east.bells": perf.sources["east.bells"]})
    found = listen.write_stems(tmp_path / "r.listen", few, court=court, listen_at=(0, 0, 1.5),
                               seed=0, calibration_lufs=-24.0, voice=SynthVoice())
    audio = whole(tmp_path, found, found["stems"][0])
    assert np.abs(audio).max() > 0.1 and math.isfinite(found["gain_db"])


def test_kit_layouts_adm_and_atmos_write_their_masters_per_standing_zone(tmp_path):
    import json

    from tests.kit.test_build import build
    from tests.sound.test_adm import NS, chunks

    said: list[str] = []
    kit = build(tmp_path, layouts=("adm", "atmos"), programme_ids=("music",),
                listen=False, say=said.append).parent
    assert any(line.startswith("rendering 0 loops and 2 ADM masters") for line in said)
    entry = json.loads((kit / "manifest.json").read_text())["programmes"][0]
    assert entry["renders"] == []
    assert [(m["zone"], m["layout"]) for m in entry["adm_masters"]] == [
        ("gong_wei", "adm"), ("gong_wei", "atmos")]
    import xml.etree.ElementTree as ET
    for master, bed in zip(entry["adm_masters"], (16, 9), strict=True):
        assert master["file"].endswith(f".{master['layout']}.wav")
        found = chunks(kit / master["file"])
        assert {b"bext", b"chna", b"axml"} <= set(found)
        root = ET.fromstring(found[b"axml"])
        names = [c.get("audioContentName") for c in root.findall(f".//{NS}audioContent")]
        assert any("庭之響" in n for n in names)  # the court's reverberation bed
        assert master["output_lufs"] == pytest.approx(-18.0, abs=0.1) or (
            master["true_peak_dbtp"] >= -1.01)
        assert master["channels"] == master["objects"] + bed * (len(names) - 1)
        kinds = {c.get("typeDefinition") for c in root.iter(f"{NS}audioChannelFormat")}
        assert kinds == ({"Objects", "HOA"} if bed == 16 else {"Objects", "DirectSpeakers"})
    # the page still has the programme's zone (no loops: nothing for the <audio> to play)
    assert "gong_wei" in (kit / "web" / "data.js").read_text()


def test_early_images_are_the_courts_early_paths_of_a_place_at_a_spot(court):
    bells, ear = (8.0, 0.0, 1.2), (0.0, -8.316, listen.EAR_M)
    images = listen.early_images(court, bells, ear, 343.0)
    direct = math.dist(bells, ear)
    paths = [math.dist(i[:3], ear) for i in images]
    assert paths == sorted(paths) and all(direct < p for p in paths)
    # within the court's early window (ISO 3382's C80 edge), none past it
    assert max(paths) - direct <= court.model.early_ms * 1e-3 * 343.0 + 1e-6
    # the floor's image: below the floor under the source, mirrored on z only
    floor = [i for i in images if i[4:] == [1, 1, -1]]
    assert floor and floor[0][:2] == [8.0, 0.0] and floor[0][2] < 0
    assert all(0 < i[3] <= 1 for i in images)  # the surfaces' pressure factor at 1 kHz


def test_each_stem_carries_its_early_images_per_listening_spot(tmp_path, court):
    found = listen.write_stems(tmp_path / "p.listen", rite(), court=court,
                               listen_at=(0, 0, 1.5), seed=0, calibration_lufs=-24.0,
                               voice=tone_voice)
    bells = next(s for s in found["stems"] if s["sources"] == ["east.bells"])
    assert set(bells["early"]) == {spot for spot, _ in court.zones}
    x, y, _ = dict(court.zones)["zhongting"]
    assert bells["early"]["zhongting"] == listen.early_images(
        court, (8.0, 0.0, 1.2), (x, y, listen.EAR_M), found["speed_of_sound"])


def test_the_courtyards_ambience_has_stems_of_its_own_where_its_sources_stand(tmp_path, court):
    perf = rite()
    # one more than the limit: the last two 2 m apart, the others 40 m or more
    places = [(16.0 * (-1) ** k, -40.0 * k, 4.0) for k in range(listen.MAX_BED_STEMS)]
    places.append((places[-1][0] + 2.0, places[-1][1], 4.0))
    beds = {f"place.bed.{k}": Source(f"place.bed.{k}", "ambience", f"境{k}", f"bed {k}",
                                     "place", p) for k, p in enumerate(places)}
    events = [*(replace(e, piece=None) for e in perf.events),
              *(Event(0.5, 3.0, sid, None, 0.5, "bed", "c") for sid in beds)]
    found = listen.write_stems(tmp_path / "b.listen", Performance.build(
        events, [], {**perf.sources, **beds}), court=court, listen_at=(0, 0, 1.5), seed=0,
        calibration_lufs=-24.0, voice=tone_voice)
    bed = [s for s in found["stems"] if s["bed"]]
    # past the limit the nearest share one; the placed sources' stems are as before
    assert len(bed) == listen.MAX_BED_STEMS
    assert sorted(m for s in bed for m in s["sources"]) == sorted(beds)
    last = [f"place.bed.{k}" for k in (len(places) - 2, len(places) - 1)]
    assert any(s["sources"] == last for s in bed)
    assert {m for s in found["stems"] if not s["bed"] for m in s["sources"]} == {
        e.source for e in perf.events}
    alone = next(s for s in bed if s["sources"] == ["place.bed.0"])
    assert alone["track"] == [[0.0, 16.0, 0.0, 4.0]] and alone["early"] and alone["sends"]
    audio = whole(tmp_path, found, alone)
    assert np.abs(audio[round(0.5 * 48000):round(1.5 * 48000)]).max() > 0.01  # it sounds


def test_the_page_hears_the_court_the_kit_was_asked_for(tmp_path, monkeypatch):
    """``kit --court damped`` rendered the loops damped and gave the page the bare court's
    responses; ``--court none`` gives it none."""
    from soundscape.kit.build import _listen

    given = []
    monkeypatch.setattr(listen, "court_responses",
                        lambda folder, court, seed: given.append(court.name) or [])
    site, said = load_site(), []
    found = [_listen(tmp_path, [], site, 0, said.append, name)["court"]
             for name in ("bare", "damped", "none")]
    assert found == ["bare", "damped", "none"] and given == ["bare", "damped"]
    assert "(damped court)" in said[1] and "--court none" in said[2]
