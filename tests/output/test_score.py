"""MusicXML: decimal <alter> with the cents, 律/工尺/cents text, lyrics, credits; schema-valid."""

from __future__ import annotations

import functools
import itertools
import math
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import replace
from pathlib import Path

import music21
import pytest

from soundscape import sequence
from soundscape.music import repertoire
from soundscape.music.tuning import Tuning
from soundscape.output import midi, mts, score
from soundscape.performance import (
    Event,
    Marker,
    Performance,
    PieceInfo,
    SectionSpan,
    Source,
)
from tests.conftest import problems

TUNING = Tuning.sanfen_sunyi()  # 黃鍾 = C4
NAMES = ["清黃鍾", "南呂", "蕤賓", "姑洗", "林鍾", "太簇", "應鍾", "黃鍾"]
LYRICS = "呦呦鹿鳴食野之苹"


_PIECE = """id = "luming"
title = "鹿鳴"
roman = "Lu ming (The Deer Cry)"
mode = "黃鍾清宮"
basis = "surviving"
basis_note = "Surviving melody: the 風雅十二詩譜 score of 鹿鳴 (小雅, 黃鍾清宮)."
tempo_bpm = 44
intro_beats = 0

[zhong]
reading = "song"
readings = ["song"]
count = 1
rest_beats = 2

[parts.song]
role = "melody"
instrument = "voice"
articulation = "sing"
velocity = 0.7
lyrics = true

[[phrase]]
stanza = 1
notes = ["清黃鍾", "南呂", "蕤賓", "姑洗", "林鍾", "太簇", "應鍾", "黃鍾"]
beats = [1, 1, 2, 1, 1, 1, 1, 1]
lyrics = "呦呦鹿鳴食野之苹"
"""


@functools.cache
def _piece():
    """A one-phrase piece of eight notes, sung (a piece file as the repertoire's)."""
    folder = Path(tempfile.mkdtemp(prefix="piece"))
    (folder / "luming.toml").write_text(_PIECE, encoding="utf-8")
    return repertoire.load_piece_file(folder / "luming.toml")


def _performance() -> Performance:
    sources = {"gong.ge": Source("gong.ge", "voice", "工 歌", "gong singers", "gong",
                                 (0.0, 2.0, 1.6)),
               "east.jiangu": Source("east.jiangu", "jiangu", "建鼓", "jian gu", "drums",
                                     (3.0, 5.0, 1.0))}
    events = [Event(1.0 + i, 0.9, "gong.ge", TUNING.pitch(n), 0.7, "sing", "m", "luming",
                    lyric=LYRICS[i]) for i, n in enumerate(NAMES)]
    events += [Event(1.5 + 2 * i, 0.2, "east.jiangu", None, 1.0, "strike", "m", "luming")
               for i in range(4)]
    markers = [Marker(0.0, "section", "右設樂", "setting up the music", "s"),
               Marker(1.0, "music", "工歌鹿鳴", "sing Lu ming", "m")]
    pieces = {"luming": PieceInfo("luming", "鹿鳴", "surviving", "風雅十二詩譜")}
    return Performance.build(events, markers, sources, pieces=pieces)


def _alters(path: Path) -> list[float]:
    root = ET.parse(path).getroot()
    return [float(p.findtext("alter", "0")) for p in root.iter("pitch")]


def test_piece_alters_are_whole_semitones_and_cents_in_a_lyric_line(tmp_path):
    path = score.write_piece_score(_piece(), tmp_path / "luming.musicxml", tuning=TUNING)
    root = ET.parse(path).getroot()
    alters = _alters(path)
    assert len(alters) == len(NAMES)
    keys = [TUNING.pitch(n).midi for n in NAMES]
    assert alters == [0, 0, 1, 0, 0, 0, 0, 0]  # 蕤賓 is F♯ + 11.7¢; the rest are naturals
    assert all(round(k) - k < 0.5 for k in keys)
    # Only the sharp is marked: no naturals on keys that need none.
    assert [a.text for a in root.iter("accidental")] == ["sharp"]
    cents = [n.findtext("lyric[@number='4']/text") for n in root.iter("note")]
    assert cents[2] == f"{(TUNING.pitch('蕤賓').midi - 66) * 100:+.0f}" == "+12"  # whole cents


def test_cents_in_alter_for_tuning_aware_readers(tmp_path):
    path = score.write_piece_score(_piece(), tmp_path / "luming.musicxml", tuning=TUNING,
                                   cents_in_alter=True)
    for alter, name in zip(_alters(path), NAMES, strict=True):
        pitch = TUNING.pitch(name)
        cents = (pitch.midi - round(pitch.midi)) * 100
        assert alter - round(alter) == pytest.approx(cents / 100, abs=1e-4), name
    assert _alters(path)[2] == pytest.approx(1.117, abs=1e-3)
    # music21 reads it back (a bare decimal <alter> it refused: "incorrect accidental"),
    # keeping each note's cents, and only the sharp is printed
    notes = list(music21.converter.parse(path).flatten().notes)
    assert [n.pitch.alter for n in notes] == pytest.approx(_alters(path), abs=1e-4)
    root = ET.parse(path).getroot()
    shown = [a.text for a in root.iter("accidental") if a.get("print-object") != "no"]
    assert shown == ["sharp"]


def test_credits_title_basis_and_layout(tmp_path):
    path = score.write_piece_score(_piece(), tmp_path / "luming.musicxml", tuning=TUNING)
    root = ET.parse(path).getroot()
    credits = {c.findtext("credit-type"): c for c in root.iter("credit")}
    assert sorted(credits) == ["composer", "lyricist", "title"]
    assert credits["title"].findtext("credit-words") == "鹿鳴 Lu ming (The Deer Cry)"
    assert root.findtext("work/work-title") == "鹿鳴 Lu ming (The Deer Cry)"
    composer = credits["composer"].findtext("credit-words")
    assert composer.startswith("melody: surviving")
    assert root.findtext("identification/creator[@type='composer']").startswith(
        "melody: surviving")
    assert "Music21" not in ET.tostring(root, encoding="unicode").replace("music21 v", "")
    # Lines wrapped to their column: the note (left) and the basis (right) never meet.
    width = (score._PAGE_MM[0] - 2 * score._PAGE_MM[2]) / 7 * 40  # tenths of a 7 mm staff
    for kind, limit in (("lyricist", score._NOTE_WIDTH), ("composer", score._BASIS_WIDTH)):
        text = "".join(w.text for w in credits[kind].iter("credit-words"))
        assert max(score._width(line) for line in text.split("\n")) <= limit
    points = width / 40 * 7 / 0.3528  # tenths → mm → pt
    assert points > score._NOTE_WIDTH * 8 / 2 + score._BASIS_WIDTH * 10 / 2  # Han: 1 em


@pytest.mark.parametrize(("basis", "note", "line"), [
    ("surviving", "Surviving melody: the 風雅十二詩譜 score of 鹿鳴 (小雅, 黃鍾清宮), the 開元 "
     "scores.", "melody: surviving, the 風雅十二詩譜 score of 鹿鳴 (小雅, 黃鍾清宮)"),
    ("reconstruction", "Reconstruction. 肆夏 is lost (鄭注: 肆夏樂章名今亡). More.",
     "melody: reconstruction, 肆夏 is lost (鄭注: 肆夏樂章名今亡)"),
    ("reconstruction", "Reconstruction, uncertain. 新宮 is lost; more.",
     "melody: reconstruction, uncertain, 新宮 is lost"),
    ("reconstruction", "Reconstruction of a practice, not of a piece.",
     "melody: reconstruction of a practice"),
])
def test_basis_line(basis, note, line):
    assert score.basis_line(basis, note) == line


def test_wrap_counts_han_characters_double_and_keeps_every_character():
    text = "The 風雅十二詩譜 score of 鹿鳴 (小雅, 黃鍾清宮), handed down by 趙彥肅.\nNext."
    lines = score.wrap(text, 20)
    assert all(score._width(line) <= 20 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "").replace("\n", "")
    assert lines[-1] == "Next."


def test_wrap_never_begins_a_line_with_a_closing_mark_nor_ends_one_with_an_opening_one():
    """s45's credits printed 「，其詩今亡)」 on a line of its own (kinsoku: a closing mark
    hangs at the end of the line before; an opening one goes down with what it opens)."""
    basis = ("驁夏: melody: reconstruction, 驁夏 is lost "
             "(鄭注 on 公入驁: 驁夏亦樂章也，以鍾鼓奏之，其詩今亡)")
    lines = score.wrap(basis, score._BASIS_WIDTH)
    assert lines[-1] == "其詩今亡)" and lines[-2].endswith("，")
    for width in range(4, 30):
        for text in (basis, "一二三四（五六七）八九、十。" * 3):
            lines = score.wrap(text, width)
            assert "".join(lines).replace(" ", "") == text.replace(" ", "")
            assert not any(line[0] in "，。、）)" for line in lines[1:] if line)
            assert not any(line[-1] in "（(" for line in lines if line)


def test_mxl_is_compressed_musicxml(tmp_path):
    path = score.write_piece_score(_piece(), tmp_path / "luming.mxl", tuning=TUNING)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist()[0] == "mimetype"
        assert archive.read("mimetype") == b"application/vnd.recordare.musicxml"
        container = ET.fromstring(archive.read("META-INF/container.xml"))
        inner = container.find("rootfiles/rootfile").get("full-path")
        assert ET.fromstring(archive.read(inner)).tag == "score-partwise"
    notes = list(music21.converter.parse(path).flatten().notes)
    assert "".join(n.lyrics[0].text for n in notes) == LYRICS
    again = score.write_piece_score(_piece(), tmp_path / "again.mxl", tuning=TUNING)
    assert again.read_bytes() == path.read_bytes()


def test_piece_text_lyrics_and_credits(tmp_path):
    path = score.write_piece_score(_piece(), tmp_path / "luming.musicxml", tuning=TUNING)
    reloaded = music21.converter.parse(path)
    notes = list(reloaded.flatten().notes)
    assert "".join(n.lyrics[0].text for n in notes) == LYRICS
    assert [n.lyrics[1].text for n in notes] == [score.lu_letter(n) for n in NAMES]
    assert notes[0].lyrics[2].text == "六" and notes[-1].lyrics[2].text == "合"
    assert notes[6].lyrics[3].text == "+10"
    assert [p.partName for p in reloaded.parts] == ["歌 song"]
    credits = " ".join(c.text or "" for c in ET.parse(path).getroot().iter("credit-words"))
    assert "surviving" in credits and "風雅十二詩譜" in credits


def test_performance_score_parts_and_rehearsal_marks(tmp_path):
    path = score.write_performance_score(_performance(), tmp_path / "perf.musicxml")
    reloaded = music21.converter.parse(path)
    assert [p.partName for p in reloaded.parts] == ["工 歌 gong singers", "建鼓 jian gu"]
    marks = [m.content for m in reloaded.recurse().getElementsByClass("RehearsalMark")]
    assert marks == ["右設樂 | setting up the music", "工歌鹿鳴 | sing Lu ming"]
    sung = [n for n in reloaded.parts[0].flatten().notes  # a note tied over a bar is one
            if n.tie is None or n.tie.type == "start"]
    # in beats of the MIDI file's tempo map, on the half-beat grid
    tmap = midi.tempo_map_of(_performance())
    assert [n.getOffsetInHierarchy(reloaded.parts[0]) for n in sung] == [
        round(tmap.tick(1.0 + i) / 1920 * 2) / 2 for i in range(len(NAMES))]
    assert len(_alters(path)) == len(NAMES) + 1  # the tied note's second half


def test_performance_parts_carry_the_midi_files_gm_programs(tmp_path):
    path = score.write_performance_score(_performance(), tmp_path / "perf.musicxml")
    programs = midi.load_programs()
    root = ET.parse(path).getroot()
    found = [int(p.findtext("midi-instrument/midi-program")) for p in root.iter("score-part")]
    assert found == [programs["voice"].program + 1, programs["jiangu"].program + 1]  # 1-based


def _schema(folder: Path):
    """The MusicXML 4.0 XSD bundled by the ``musicxml`` package, its imports made local."""
    etree = pytest.importorskip("lxml.etree")
    musicxml = pytest.importorskip("musicxml")
    bundled = Path(musicxml.__file__).parent / "generate_classes"
    # The two W3C schemas MusicXML imports are not bundled; these declare the attributes used.
    (folder / "xml.xsd").write_text(_XML, encoding="utf-8")
    (folder / "xlink.xsd").write_text(_XLINK, encoding="utf-8")
    text = (bundled / "musicxml_4_0.xsd").read_text(encoding="utf-8")
    text = text.replace("http://www.musicxml.org/xsd/xml.xsd", "xml.xsd")
    text = text.replace("http://www.musicxml.org/xsd/xlink.xsd", "xlink.xsd")
    (folder / "musicxml.xsd").write_text(text, encoding="utf-8")
    return etree, etree.XMLSchema(etree.parse(str(folder / "musicxml.xsd")))


_XML = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://www.w3.org/XML/1998/namespace">
 <xs:attribute name="lang" type="xs:language"/><xs:attribute name="space" type="xs:NCName"/>
 <xs:attribute name="base" type="xs:anyURI"/><xs:attribute name="id" type="xs:ID"/>
</xs:schema>"""

_XLINK = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://www.w3.org/1999/xlink">
 <xs:attribute name="href" type="xs:anyURI"/><xs:attribute name="type" type="xs:token"/>
 <xs:attribute name="role" type="xs:token"/><xs:attribute name="title" type="xs:token"/>
 <xs:attribute name="show" type="xs:token"/><xs:attribute name="actuate" type="xs:token"/>
</xs:schema>"""


def test_validates_against_the_musicxml_schema(tmp_path):
    etree, schema = _schema(tmp_path)
    for path in (score.write_piece_score(_piece(), tmp_path / "a.musicxml", tuning=TUNING),
                 score.write_performance_score(_performance(), tmp_path / "b.musicxml")):
        document = etree.parse(str(path))
        assert schema.validate(document), str(schema.error_log)[:2000]


def test_same_bytes_twice(tmp_path):
    a = score.write_piece_score(_piece(), tmp_path / "a.musicxml", tuning=TUNING)
    b = score.write_piece_score(_piece(), tmp_path / "b.musicxml", tuning=TUNING)
    assert a.read_bytes() == b.read_bytes()
    a = score.write_performance_score(_performance(), tmp_path / "c.musicxml")
    b = score.write_performance_score(_performance(), tmp_path / "d.musicxml")
    assert a.read_bytes() == b.read_bytes()
    assert math.isfinite(len(a.read_bytes()))



def test_cli_performance_section_is_valid_musicxml(tmp_path, soundscape_cli):
    code, err = soundscape_cli("score", "--performance", "--from", "s09", "--to", "s09",
                               "--seed", "3", "-o", "s09.musicxml", cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    path = tmp_path / "s09.musicxml"
    etree, schema = _schema(tmp_path)
    assert schema.validate(etree.parse(str(path))), str(schema.error_log)[:2000]
    section = sequence.perform_from_file(seed=3, from_section="s09", to_section="s09")
    # the parts played: the steps' footsteps, robes, bed and words are the audio's
    sounding = [s for s in section.sources.values() if s.group not in midi.NOT_PLAYED
                and any(e.source == s.id for e in section.events)]
    assert any(s.group in midi.NOT_PLAYED for s in section.sources.values())
    root = ET.parse(path).getroot()
    assert [p.findtext("part-name") for p in root.iter("score-part")] == \
        [f"{s.name} {s.roman}" for s in sounding]
    marks = [r.text for r in root.iter("rehearsal")]
    assert marks == ["\n".join(score.wrap(f"{m.text} | {m.gloss}", score._MARK_WIDTH))
                     for m in section.markers if m.kind in score._LANDMARKS]
    assert all(score._width(line) <= score._MARK_WIDTH or " " not in line
               for mark in marks for line in mark.split("\n"))
    assert marks[0].startswith("右主人獻公")
    # the steps in small words, a text every four bars at most: each text the words of the
    # steps it gathers, in order, joined by 、 (cut with … at three lines)
    texts = [w.text.replace("\n", "") for w in root.iter("words") if w.get("font-size") == "8"]
    steps = [m.text for m in section.markers if m.kind not in score._LANDMARKS]
    assert texts and texts[0].startswith(steps[0])
    said = "、".join(dict.fromkeys(steps))
    for text in texts:
        assert text.rstrip("…") in said, text
    notes = [n for n in root.iter("note") if n.find("rest") is None and n.find("chord") is None
             and (n.find("tie") is None or n.find("tie").get("type") == "start")]
    tmap = midi.tempo_map_of(section)
    played = [e for e in section.events if section.sources[e.source].group not in midi.NOT_PLAYED]
    onsets = {(e.source, round(tmap.tick(e.time) / 1920 / score.QUANTUM_BEATS)) for e in played}
    assert len(notes) == len(onsets)
    # the progress line counts what the score holds, not every sounding source
    assert f"laying out the score ({len(sounding)} players, {len(played)} notes)" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--performance", "--from", "s19", "--to", "s19"],
     "section s19: no music is played there, so there is nothing to score"),
    ([], "give a PIECE"),
    (["luming", "--from", "s09"], "use them with --performance"),
    (["--performance", "--seed", "-1"], "-1 is not in the range 0<=x<=9223372036854775807"),
    (["--performance", "nowhere.toml"], "'nowhere.toml' is not a file"),
])
def test_cli_bad_arguments_exit_2(tmp_path, soundscape_cli, args, message):
    code, err = soundscape_cli("score", *args, cwd=tmp_path)
    assert code == 2 and message in err
    assert not (tmp_path / "output").exists()


def test_cli_piece(tmp_path, soundscape_cli):
    code, err = soundscape_cli("score", "鹿鳴", cwd=tmp_path)
    assert (code, err) == (0, "")
    reloaded = music21.converter.parse(tmp_path / "output" / "luming.musicxml", forceSource=True)
    # every part of 鹿鳴 as the rite plays it: the song, its 瑟, the 頌磬 at phrase ends
    assert [p.partName for p in reloaded.parts] == ["歌 song", "瑟 se", "編磬 songqing"]


def test_more_parts_than_midi_channels_write_quietly(tmp_path, capfd):
    sources = {f"s{i}": Source(f"s{i}", "bianqing", f"磬{i}", f"qing {i}", "east",
                               (float(i), 5.0, 1.0)) for i in range(20)}
    events = [Event(1.0 * i, 0.5, f"s{i}", TUNING.pitch("林鍾"), 0.5, "strike", "m")
              for i in range(20)]  # a beat apart: no two play the same notes (one staff)
    path = score.write_performance_score(Performance.build(events, [], sources),
                                         tmp_path / "many.musicxml")
    assert capfd.readouterr().err == ""
    assert len(music21.converter.parse(path).parts) == 20


def test_cli_mxl_and_cents_in_alter(tmp_path, soundscape_cli):
    code, err = soundscape_cli("score", "luming", "-o", "l.mxl", "--cents-in-alter",
                               cwd=tmp_path)
    assert (code, err) == (0, "")
    with zipfile.ZipFile(tmp_path / "l.mxl") as archive:
        root = ET.fromstring(archive.read("score.musicxml"))
    alters = [float(a.text) for a in root.iter("alter")]
    assert any(abs(a - round(a)) > 0.01 for a in alters)


def test_cli_refuses_an_ending_that_is_not_a_score(tmp_path, soundscape_cli):
    code, err = soundscape_cli("score", "luming", "-o", "l.mid", cwd=tmp_path)
    assert code == 2 and "ending '.mid' is not a score" in err and ".mxl" in err
    assert list(tmp_path.iterdir()) == []


def test_performance_credits_name_only_the_pieces_heard_and_keep_every_note(tmp_path):
    performance = _performance()
    pieces = {**performance.pieces, "sixia": PieceInfo("sixia", "肆夏", "reconstruction", "x")}
    path = score.write_performance_score(replace(performance, pieces=pieces),
                                         tmp_path / "p.musicxml")
    root = ET.parse(path).getroot()
    composer = root.findtext("identification/creator[@type='composer']")
    assert composer.startswith("鹿鳴: melody: surviving") and "肆夏" not in composer
    fields = {f.get("name"): f.text for f in root.iter("miscellaneous-field")}
    assert fields == {"basis of 鹿鳴": "風雅十二詩譜"}


def test_notes_too_long_for_the_page_are_pointed_to():
    notes = tuple((f"曲{i}", "A long note on the basis of the piece. " * 20) for i in range(6))
    lines = score._note_lines(notes)
    assert len(lines) <= 3 and "<miscellaneous>" in " ".join(lines)
    assert score._note_lines(notes[:1]) == score.wrap(notes[0][1], score._NOTE_WIDTH)


def test_a_piece_score_holds_every_part_barred_by_phrase_with_its_stanzas_marked(tmp_path):
    from soundscape.music.arrange import arrange

    piece = repertoire.load_piece("sixia")
    path = score.write_piece_score(piece, tmp_path / "sixia.musicxml", tuning=TUNING)
    reloaded = music21.converter.parse(path)
    assert len(reloaded.parts) == 7  # bells, 鑮, 建鼓, 鼗, 朔鼙, 應鼙, stones
    played = arrange(piece, tuning=TUNING, repeats=1)
    for part, spec in zip(reloaded.parts, piece.parts, strict=True):
        assert part.partName.endswith(spec.id)
        strokes = [n for n in part.flatten().notesAndRests if not n.isRest]
        assert len(strokes) == len(played.parts[spec.id])
    # a bar per phrase: its length is the phrase's (the 4- and 5-beat phrases of 肆夏)
    lengths = [m.barDuration.quarterLength for m in reloaded.parts[0].getElementsByClass(
        music21.stream.Measure)]
    beats = [sum(n.beats for n in phrase) for phrase in piece.phrases]
    assert lengths[1:] == pytest.approx(beats)
    assert lengths[0] == pytest.approx(played.music_start * piece.tempo_bpm / 60)  # 鼗, 鼙
    assert {5.0, 6.0} <= set(lengths)  # not forced into 4/4


def test_stanzas_are_marked_in_the_top_part_only(tmp_path):
    piece = repertoire.load_piece("luming")
    path = score.write_piece_score(piece, tmp_path / "luming.musicxml", tuning=TUNING)
    root = ET.parse(path).getroot()
    marks = [[w.text for w in part.iter("rehearsal")] for part in root.iter("part")]
    assert marks[0] == list(piece.stanza_labels) and not any(marks[1:])
    first = root.find("part")
    starts = [m.get("number") for m in first.iter("measure") if m.find(".//rehearsal")
              is not None]
    doubles = [m.get("number") for m in first.iter("measure")
               if any(b.findtext("bar-style") == "light-light" for b in m.iter("barline"))]
    assert doubles == starts[1:]  # a double bar line before each stanza but the first


@pytest.mark.parametrize(("name", "letter"), [
    ("清太簇", "清太"), ("林鍾", "林"), ("倍黃鍾", "倍黃"),
    ("蕤賓", "蕤"), ("黃鍾", "黃")])
def test_lu_letters_as_the_scores_print_them(name, letter):
    assert score.lu_letter(name) == letter


@pytest.mark.parametrize("piece_id", ["lishou", "zouyu", "luming"])
def test_every_note_of_the_zhong_is_in_the_score(piece_id, tmp_path):
    """貍首 and 騶虞's 節 drum printed an empty staff: its one stroke, the one the arrow is
    loosed on, comes after the last phrase and fell in no bar. The 終's close is now a bar."""
    from soundscape.music.arrange import arrange

    piece = repertoire.load_piece(piece_id)
    path = score.write_piece_score(piece, tmp_path / f"{piece_id}.musicxml", tuning=TUNING)
    played = arrange(piece, tuning=TUNING, repeats=1)
    end = played.zhong[0][1]
    written = {part.partName.split()[-1]: part for part in music21.converter.parse(path).parts}
    for spec in piece.parts:
        heard = [n for n in played.parts[spec.id] if n.time < end]
        if not heard:
            continue
        notes = written[spec.id].flatten().notes
        assert sum(len(n.pitches) or 1 for n in notes) == len(heard), spec.id
    if piece.jie is not None:  # the closing stroke sits alone in the last bar, on its beat
        last = written["jie"].getElementsByClass(music21.stream.Measure)[-1]
        assert last.barDuration.quarterLength == piece.jie.close_beats
        assert [n.offset for n in last.notes] == [0.0]


def test_cents_below_the_key_keep_their_minus_sign(tmp_path):
    """With 黃鍾 = 270 Hz every note sits below its key; music21 took the leading "-" of
    "-45" for a hyphen and printed "45": a player tuning from the score went 90 ¢ wrong."""
    tuning = Tuning.sanfen_sunyi(270.0)
    path = score.write_piece_score(_piece(), tmp_path / "luming.musicxml", tuning=tuning)
    keys = [tuning.pitch(n).midi for n in NAMES]
    cents = [n.findtext("lyric[@number='4']/text") for n in ET.parse(path).getroot().iter("note")]
    assert cents == [f"{(k - round(k)) * 100:+.0f}" for k in keys]
    assert sum(c.startswith("-") for c in cents) >= 4


@pytest.mark.parametrize("piece_id", ["sixia", "lishou"])
def test_every_staff_keeps_a_name_of_its_own_on_later_systems(piece_id, tmp_path):
    """肆夏's 朔鼙 and 應鼙 were both 鼙 from the second system on (the short name), 貍首's
    two 建鼓 both 建鼓: a player could not tell which staff was theirs."""
    piece = repertoire.load_piece(piece_id)
    path = score.write_piece_score(piece, tmp_path / "p.musicxml", tuning=TUNING)
    short = [e.text for e in ET.parse(path).getroot().iter("part-abbreviation")]
    assert len(short) == len(piece.parts) and len(set(short)) == len(short), short


def test_performance_tempo_marks_print_whole_and_play_the_tempo_map(tmp_path):
    """The subtitle said '♩ = 60: a quarter note is a second' over marks of 44 and 59.3
    (the score is in the tempo map's beats), and a player was handed ♩ = 59.3."""
    rite = sequence.perform_from_file(seed=0, from_section="s18", to_section="s18")
    path = score.write_performance_score(rite, tmp_path / "s18.musicxml")
    root = ET.parse(path).getroot()
    printed = [float(e.text) for e in root.iter("per-minute")]
    played = [float(e.get("tempo")) for e in root.iter("sound") if e.get("tempo")]
    exact = [round(6e7 / s.tempo, 1)
             for s in midi.tempo_map_of(midi.music_only(rite)).segments]
    assert played == exact and printed == [round(t) for t in exact]
    assert any(t != round(t) for t in exact)  # the case that was printed 59.3
    words = " ".join(e.text or "" for e in root.iter("credit-words"))
    assert "each piece in its own tempo" in words and "a second" not in words


def test_a_performance_score_names_every_staff_and_fills_its_last_bar(tmp_path):
    """Performance scores printed no staff names after the first system, their drums as
    noteheads on a treble staff, and s45's last bar three beats long under 4/4."""
    rite = sequence.perform_from_file(seed=0, from_section="s45", to_section="s45")
    path = score.write_performance_score(rite, tmp_path / "s45.musicxml")
    root = ET.parse(path).getroot()
    short = [e.text for e in root.iter("part-abbreviation")]
    assert len(short) == len(root.findall("part")) == len(set(short)), short
    reloaded = music21.converter.parse(path)
    for part in reloaded.parts:
        strokes = not any(n.isNote or n.isChord for n in part.recurse().notes)
        clef = part.recurse().getElementsByClass(music21.clef.Clef)[0]
        assert isinstance(clef, music21.clef.PercussionClef) == strokes, part.partName
        last = part.getElementsByClass(music21.stream.Measure)[-1]
        assert last.duration.quarterLength == last.barDuration.quarterLength, part.partName


def test_a_performance_score_is_a_full_score_on_a4_under_a_subtitle_that_fits(tmp_path):
    """A performance score's dozen staves at a piece's 7 mm gave a system a page (s06: 7
    pages, the first holding only the credits) under a subtitle one line long, which ran
    off both edges of the page. Its staves are 5 mm now, the page still A4 and its
    margins 15 mm, the subtitle wrapped to the page."""
    def geometry(root):
        mm = float(root.findtext("defaults/scaling/millimeters"))
        tenths = float(root.findtext("defaults/scaling/tenths"))
        size = [float(root.findtext(f"defaults/page-layout/page-{k}")) * mm / tenths
                for k in ("width", "height")]
        margin = float(root.findtext("defaults/page-layout/page-margins/left-margin"))
        return mm, size, margin * mm / tenths

    rite = sequence.perform_from_file(seed=0, from_section="s06", to_section="s06")
    root = ET.parse(score.write_performance_score(rite, tmp_path / "s06.musicxml")).getroot()
    mm, (width, height), margin = geometry(root)
    assert mm == score.PERFORMANCE_STAFF_MM == 5.0
    assert width == pytest.approx(210, abs=0.2) and height == pytest.approx(297, abs=0.2)
    assert margin == pytest.approx(15, abs=0.2)
    title = next(c for c in root.iter("credit") if c.findtext("credit-type") == "title")
    lines = title.findall("credit-words")[1].text.strip("\n").split("\n")
    assert len(lines) == 2 and all(score._width(line) <= 88 for line in lines)
    assert " ".join(lines).startswith("s06 右納賓; each piece in its own tempo")
    piece = ET.parse(score.write_piece_score(repertoire.load_piece("luming"),
                                             tmp_path / "l.musicxml", tuning=TUNING)).getroot()
    assert geometry(piece)[0] == score.PIECE_STAFF_MM == 7.0
    assert geometry(piece)[1] == pytest.approx([210, 297], abs=0.3)


def test_the_song_is_written_where_the_rite_sings_it_with_its_notated_lu(tmp_path):
    """鹿鳴's 歌 part was written (and played by MuseScore) an octave above what the rite's
    tenors sing. Now it sounds where they sing, on a treble clef with an 8 under it, and
    its 律 line still names the notes as the 詩譜 print them (清黃, as the 瑟's)."""
    from soundscape.music.arrange import arrange
    from soundscape.sequence import perform_from_file

    piece = repertoire.load_piece("luming")
    path = score.write_piece_score(piece, tmp_path / "luming.musicxml", tuning=TUNING)
    song = music21.converter.parse(path).parts[0]
    assert isinstance(song.recurse().getElementsByClass(music21.clef.Clef)[0],
                      music21.clef.Treble8vbClef)
    written = [n.pitch.midi for n in song.flatten().notes]
    rite = perform_from_file(seed=0, from_section="s18", to_section="s18")
    sung = sorted({round(e.pitch.midi) for e in rite.events if e.piece == "luming"
                   and rite.sources[e.source].instrument == "voice" and e.pitch})
    assert sorted(set(written)) == sung  # the rite's own octave
    notated = [n for n in arrange(piece, tuning=TUNING, repeats=1).parts["song"]
               if n.pitch][:len(written)]
    lu = [n.lyrics[1].text for n in song.flatten().notes]
    assert lu == [score.lu_letter(n.pitch.name) for n in notated]
    assert lu[0] == "清黃"


def test_a_bars_steps_are_one_small_text_not_a_tower_of_marks(tmp_path):
    """s06's bar 14 held six rehearsal marks, stacked into a tower over the system; then a
    small text a bar, each wider than its bar, climbed over the next ones off the page
    (s32). Marks are the landmarks (sections, music, shots); the steps one small text of
    at most three lines, four bars apart at least."""
    rite = sequence.perform_from_file(seed=0, from_section="s06", to_section="s06")
    root = ET.parse(score.write_performance_score(rite, tmp_path / "s06.musicxml")).getroot()
    first = next(root.iter("part"))
    per_bar = [[w.text for w in m.iter("words") if w.get("font-size") == "8"]
               for m in first.iter("measure")]
    bars = [k for k, texts in enumerate(per_bar) if texts]
    assert max(map(len, per_bar)) == 1 and len(bars) >= 3
    assert min(b - a for a, b in itertools.pairwise(bars)) >= 4
    assert max(len(texts[0].split("\n")) for texts in per_bar if texts) <= 3
    landmarks = [m for m in rite.markers if m.kind in score._LANDMARKS]
    assert len(list(root.iter("rehearsal"))) == len(landmarks) < len(rite.markers) / 4


@pytest.fixture(scope="module")
def third_round(tmp_path_factory):
    """s32 (the third round: 貍首 sung to 瑟 and drums, the archery) and its full score."""
    rite = sequence.perform_from_file(seed=0, from_section="s32", to_section="s32")
    folder = tmp_path_factory.mktemp("s32")
    return rite, score.write_performance_score(rite, folder / "s32.musicxml")


def test_players_of_one_part_share_a_staff_and_keep_their_notes(third_round):
    """A staff a source gave s32 26 staves: the two singers, the four 瑟 and the three
    負侯 each on their own, note for note the same. Players of one part now share a staff
    named for them all; every note each plays is on it, at its onset and pitch."""
    rite, path = third_round
    root = ET.parse(path).getroot()
    names = [p.findtext("part-name") for p in root.iter("score-part")]
    assert "工 上工一–上工四 4 × se" in names and "工 大師、少師 2 × voice" in names
    assert "負侯 大侯、參、干 3 × voice" in names
    assert len(names) == 14
    short = [p.findtext("part-abbreviation") for p in root.iter("score-part")]
    assert len(set(short)) == len(short) and "建鼓 west 2" in short
    played = midi.music_only(rite)
    tmap = midi.tempo_map_of(played)
    reloaded = music21.converter.parse(path)
    staff = {p.partName: p for p in reloaded.parts}["工 上工一–上工四 4 × se"]
    written = sorted((n.getOffsetInHierarchy(staff), n.pitch.midi) for n in staff.flatten().notes
                     if n.tie is None or n.tie.type == "start")
    for player in ("gong.shanggong.1", "gong.shanggong.4"):
        own = sorted((round(tmap.tick(e.time) / 1920 * 2) / 2, round(e.pitch.midi))
                     for e in played.events if e.source == player)
        assert written == own, player


def test_a_bracket_joins_the_players_who_stand_together(third_round):
    """A full score brackets its families; s32's 14 staves had none. The east drums, the
    west rack and drums, the musicians on the hall and the shooting each have a bracket
    over their staves, and no staff stands outside its side's."""
    _, path = third_round
    part_list = ET.parse(path).getroot().find("part-list")
    brackets, open_at, names = [], {}, []
    for element in part_list:
        if element.tag == "score-part":
            names.append(element.findtext("part-name"))
        elif element.get("type") == "start":
            assert element.findtext("group-symbol") == "bracket"
            open_at[element.get("number")] = (len(names), element.findtext("group-name"))
        else:
            start, name = open_at.pop(element.get("number"))
            brackets.append((name, names[start:]))
    assert not open_at
    assert brackets == [
        ("東 east", ["建鼓 east jiangu", "應鼙 east yingpi"]),
        ("西 west", ["西縣 頌磬 west songqing", "建鼓 west jiangu", "朔鼙 west shuopi",
                    "建鼓 west jiangu 2"]),
        ("工 musicians", ["工 大師、少師 2 × voice", "工 上工一–上工四 4 × se"]),
        ("射 shooting", ["負侯 大侯、參、干 3 × voice", "射 the shooting",
                       "司射 director of archery", "大侯獲者 hit caller at the dahou shelter",
                       "參獲者 hit caller at the can shelter",
                       "干獲者 hit caller at the gan shelter"])]


def _strokes(part: ET.Element, divisions: int) -> list[tuple[float, str, str]]:
    """A percussion staff's strokes: (onset in beats, display step and octave, notehead)."""
    strokes, bar_start = [], 0.0
    for bar in part.iter("measure"):
        at = 0.0
        for note in bar.iter("note"):
            length = int(note.findtext("duration")) / divisions
            if note.find("chord") is not None:
                at -= length  # a chord's later notes sound with its first
            place = note.find("unpitched")
            held = any(t.get("type") == "stop" for t in note.iter("tie"))  # a bar line's tie
            if place is not None and not held:
                strokes.append((bar_start + at, place.findtext("display-step")
                                + place.findtext("display-octave"),
                                note.findtext("notehead") or "normal"))
            at += length
        bar_start += at
    return strokes


def test_the_shooting_shares_one_percussion_staff_each_source_on_its_line(third_round):
    """The archery's bows, arrow, three targets and tally took 7 of s32's 20 staves. They
    share one percussion staff now, each source on its own line with its instrument's
    notehead, named in a key over its first stroke; every stroke of each is there at its
    onset, and nothing else is."""
    rite, path = third_round
    root = ET.parse(path).getroot()
    divisions = int(next(root.iter("divisions")).text)
    names = {p.get("id"): p.findtext("part-name") for p in root.iter("score-part")}
    part = next(p for p in root.iter("part") if names[p.get("id")] == "射 the shooting")
    written = _strokes(part, divisions)
    played = midi.music_only(rite)
    tmap = midi.tempo_map_of(played)
    kit = [s for s in played.sources.values() if s.group == "archery"
           and any(e.source == s.id for e in played.events)]
    assert {s.instrument for s in kit} == {"bow", "arrow", "target", "tally"} and len(kit) == 7
    onsets = {s.id: {round(tmap.tick(e.time) / 1920 * 2) / 2
                     for e in played.events if e.source == s.id} for s in kit}
    places: dict[tuple[str, str], set] = {}
    for onset, line, head in written:
        places.setdefault((line, head), set()).add(onset)
    # each source on a line of its own, written at exactly that source's onsets
    own = {s.id: next(place for place, at in places.items() if at == onsets[s.id])
           for s in kit}
    assert len(places) == len(kit) and len({line for line, _ in own.values()}) == len(kit)
    by_instrument = {s.instrument: {own[o.id][1] for o in kit if o.instrument == s.instrument}
                     for s in kit}
    assert all(len(h) == 1 for h in by_instrument.values())
    assert len({next(iter(h)) for h in by_instrument.values()}) == 4  # a notehead each
    key = next(w.text for w in part.iter("words"))
    top_down = sorted(kit, key=lambda s: -music21.pitch.Pitch(own[s.id][0]).diatonicNoteNum)
    assert key.startswith("top line down: ")
    assert [k.split(" ")[0] for k in key.removeprefix("top line down: ").split(" · ")] == [
        s.name.replace(" ", "") for s in top_down]


def _rests_against_the_beat(path: Path) -> tuple[int, list[tuple]]:
    """The rests of a score and those that do not show the beat: a rest lies within a beat,
    or is a half from an odd beat (1, 3 …), or fills its bar; also any bar not full."""
    root = ET.parse(path).getroot()
    divisions = int(next(root.iter("divisions")).text)
    rests, wrong = 0, []
    for part in root.iter("part"):
        metre = 4.0
        for bar in part.iter("measure"):
            time = bar.find("attributes/time")
            if time is not None:
                metre = int(time.findtext("beats")) * 4 / int(time.findtext("beat-type"))
            at = 0.0
            for note in bar.iter("note"):
                length = int(note.findtext("duration")) / divisions
                if note.find("rest") is not None:
                    rests += 1
                    in_a_beat = math.floor(at) == math.ceil(at + length) - 1
                    half = length == 2 and at % 2 == 0
                    if not (in_a_beat or half or (at, length) == (0.0, metre)):
                        wrong.append((part.get("id"), bar.get("number"), at, length))
                if note.find("chord") is None:
                    at += length
            if at != metre:
                wrong.append((part.get("id"), bar.get("number"), "bar", at, metre))
    return rests, wrong


def test_rests_show_the_beat(third_round, tmp_path):
    """A silence was one rest: an eighth note, then a double-dotted half rest. Each rest
    now lies within a beat, or is a half from the first or third beat, or fills its bar;
    in the full score of s32 and in every piece's score (bars of 2 to 8 beats)."""
    assert list(score.beat_rests(0.5, 8.0)) == [(0.5, 0.5), (1.0, 1.0), (2.0, 2.0), (4.0, 4.0)]
    assert list(score.beat_rests(1.0, 3.5)) == [(1.0, 1.0), (2.0, 1.0), (3.0, 0.5)]
    assert list(score.beat_rests(0.0, 5.0, 5.0)) == [(0.0, 5.0)]
    assert list(score.beat_rests(1.5, 5.0, 5.0)) == [(1.5, 0.5), (2.0, 2.0), (4.0, 1.0)]
    rests, wrong = _rests_against_the_beat(third_round[1])
    assert rests > 1000 and wrong == []
    for piece_id in ("sixia", "lishou", "luming"):
        path = score.write_piece_score(repertoire.load_piece(piece_id),
                                       tmp_path / f"{piece_id}.musicxml", tuning=TUNING)
        rests, wrong = _rests_against_the_beat(path)
        assert rests > 10 and wrong == [], piece_id


def test_a_full_score_takes_the_staff_its_system_fits_on_a4():
    assert score.full_score_size([0] * 8) == (5.0, True)
    staff, fits = score.full_score_size([4] * 3 + [0] * 17)  # s32's staves
    assert fits and 3.5 <= staff < 5.0
    # the system at that staff: 16 spaces of marks, 10.5 a staff, 3 a lyric line beyond 4.7
    spaces = 16 - 6.5 + 20 * 10.5 + 3 * (3 * 4 - 4.7)
    assert spaces * staff / 4 <= 267 < spaces * (staff + 0.1) / 4
    assert score.full_score_size([4] * 60) == (3.5, False)


def test_a_full_score_too_tall_for_a4_says_so(tmp_path):
    """The whole rite's 28 staves fit no A4 page at 3.5 mm; on A3 MuseScore 3 drew its
    staves 1.41 times the size asked and its systems ran 65 mm past the page. A4 it stays,
    and the command says what to do."""
    sources = {f"s{i}": Source(f"s{i}", "bianqing", f"磬{i}", f"qing {i}", "east",
                               (float(i), 5.0, 1.0)) for i in range(40)}
    events = [Event(1.0 * i, 0.5, f"s{i}", TUNING.pitch("林鍾"), 0.5, "strike", "m")
              for i in range(40)]
    said: list[str] = []
    path = score.write_performance_score(Performance.build(events, [], sources),
                                         tmp_path / "many.musicxml", notice=said.append)
    root = ET.parse(path).getroot()
    assert float(root.findtext("defaults/scaling/millimeters")) == score.LEAST_STAFF_MM
    assert float(root.findtext("defaults/page-layout/page-height")) * 3.5 / 40 == \
        pytest.approx(297, abs=0.2)
    assert said == ["the full score's 40 staves do not fit an A4 page even at 3.5 mm: its "
                    "systems will run past the page in MuseScore; score a part of the rite "
                    "(--from/--to) or each section (--split section) to read it"]
    said.clear()
    score.write_performance_score(_performance(), tmp_path / "few.musicxml", notice=said.append)
    assert said == []
    # split by section, the score that does not fit is named
    said.clear()
    sectioned = Performance.build(events, [], sources, sections=(
        SectionSpan("s1", "設樂", 0.0, 20.0), SectionSpan("s2", "射", 20.0, 60.0)))
    written = score.write_split_scores(sectioned, tmp_path / "split", by="section",
                                       notice=said.append)
    assert [p.name for p in written] == ["s1.musicxml", "s2.musicxml"]
    assert said == [f"s{n}.musicxml: the full score's 20 staves do not fit an A4 page even at "
                    "3.5 mm: its systems will run past the page in MuseScore; score a part of "
                    "the rite (--from/--to) or each section (--split section) to read it"
                    for n in (1, 2)]


def test_the_performance_score_names_sung_notes_as_the_pieces_score_does(tmp_path):
    """The 工's parts of 樂賓 named the notes they sound (倍南 倍蕤 倍姑: no 工尺, which has
    none below 黃鍾) where the 詩譜, the piece score and the 瑟 beside them say 南 蕤 姑."""
    from soundscape.music.arrange import arrange
    from soundscape.sequence import perform_from_file

    rite = perform_from_file(seed=0, from_section="s18", to_section="s18")
    assert rite.pieces["luming"].sung_octaves == -1
    root = ET.parse(score.write_performance_score(rite, tmp_path / "s18.musicxml")).getroot()
    names = {p.get("id"): p.findtext("part-name") for p in root.iter("score-part")}
    sung = next(p for p in root.iter("part") if names[p.get("id")].startswith("工 大師"))
    lines = [(n.findtext("lyric[@number='1']/text"), n.findtext("lyric[@number='2']/text"),
              n.findtext("lyric[@number='3']/text")) for n in sung.iter("note")
             if n.find("lyric") is not None]
    notated = [n for n in arrange(repertoire.load_piece("luming"), tuning=TUNING,
                                  repeats=1).parts["song"] if n.pitch]
    assert [(w, lu) for w, lu, _ in lines[:len(notated)]] == [
        (n.lyric, score.lu_letter(n.pitch.name)) for n in notated]
    assert all(gongche for _, _, gongche in lines[:len(notated)])
    assert not any(lu.startswith("倍") for _, lu, _ in lines)


def test_a_selections_score_says_it_shows_one_stanza_and_where_the_songs_are(tmp_path):
    """`score wusuanyue` printed 鹿鳴's first stanza under the title 無算樂, with no word of
    its eleven other songs."""
    piece = repertoire.load_piece("wusuanyue")
    path = score.write_piece_score(piece, tmp_path / "w.musicxml", tuning=TUNING)
    note = ET.parse(path).getroot().findtext(".//miscellaneous-field")
    assert note.startswith("This score shows one 終 of the selection (鹿鳴 1)")
    assert all(f"soundscape score {song} ({title})" in note for song, title in piece.songs)
    assert len(piece.songs) == 12


@pytest.mark.parametrize(("hz", "scale"), [
    (270.0, ["D-", "E-", "F", "G", "A-", "B-", "C"]),  # 黃鍾 on C♯ − 45 ¢
    (261.63, ["C", "D", "E", "F#", "G", "A", "B"])])
def test_each_lu_is_spelled_as_it_stands_above_huangzhong(hz, scale):
    """With 黃鍾 off C the score spelled each key as music21 does alone: 黃 C♯, 太 E♭,
    林 G♯, 應 G (two 律 on G, sharps beside flats). Now a letter per 律, as a scale on 黃鍾."""
    tuning = Tuning.sanfen_sunyi(hz)
    names = ["黃鍾", "太簇", "姑洗", "蕤賓", "林鍾", "南呂", "應鍾"]
    keys = mts.key_map([tuning.pitch(n) for n in names])
    spelled = [score._note(tuning.pitch(n), 1.0, keys, None, {}).pitch for n in names]
    assert [p.name for p in spelled] == scale
    assert [round(p.ps) for p in spelled] == [keys.key(tuning.pitch(n)) for n in names]


def test_every_lu_on_every_huangzhong_is_its_key_with_one_accidental_at_most():
    """Spelling by degree gives 大呂 on a D♭ 黃鍾 as E𝄫: a player reads D."""
    from soundscape.music.tuning import LU

    for tonic in range(60, 72):
        for index, lu in enumerate(LU):
            spelled = score._spelled(tonic + index, lu, tonic)
            assert round(spelled.ps) == tonic + index and abs(spelled.alter) <= 1, spelled


def test_a_score_per_section_beside_the_midi_files(tmp_path, soundscape_cli):
    """The whole rite's 22 staves fit no page; a score per section (or piece) holds only
    the staves that play there, each the score of that section alone, written into the
    folder `midi --split` fills, whose files it leaves alone; a second split with fewer
    sections takes away the score it no longer writes, and nothing the user put there."""
    span = ("--from", "s18", "--to", "s19")  # 樂賓 (鹿鳴, 新宮), then 立司正: no music
    code, err = soundscape_cli("midi", *span, "--split", "section", "-o", "parts",
                               cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    (tmp_path / "parts" / "mine.musicxml").write_text("mine")
    code, err = soundscape_cli("score", "--performance", *span, "--split", "section",
                               "-o", "parts", cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    folder = tmp_path / "parts"
    assert sorted(p.name for p in folder.iterdir()) == [
        ".soundscape.section-scores", ".soundscape.sections", "mine.musicxml", "s18.mid",
        "s18.musicxml", "s19.mid"]
    code, err = soundscape_cli("score", "--performance", "--from", "s18", "--to", "s18",
                               "-o", "alone.musicxml", cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    assert (folder / "s18.musicxml").read_bytes() == (tmp_path / "alone.musicxml").read_bytes()
    code, err = soundscape_cli("score", "--performance", "--from", "s19", "--to", "s45",
                               "--split", "piece", "-o", "pieces", cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    pieces = sorted(p.name for p in (tmp_path / "pieces").glob("*.musicxml"))
    assert pieces == ["01-lishou.musicxml", "02-wusuanyue.musicxml", "03-gaixia.musicxml",
                      "04-aoxia.musicxml"]
    lishou = ET.parse(tmp_path / "pieces" / "01-lishou.musicxml").getroot()
    names = [p.findtext("part-name") for p in lishou.iter("score-part")]
    assert "射 the shooting" not in names and "工 上工一–上工四 4 × se" in names
    code, err = soundscape_cli("score", "--performance", "--from", "s19", "--to", "s19",
                               "--split", "section", "-o", "parts", cwd=tmp_path)
    assert code == 2 and "no music is played there" in err
    code, err = soundscape_cli("score", "--performance", "--from", "s21", "--to", "s22",
                               "--split", "section", "-o", "parts", cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    assert sorted(p.name for p in folder.glob("*.musicxml")) == [
        "mine.musicxml", "s21.musicxml", "s22.musicxml"]
    assert {"s18.mid", "s19.mid"} <= {p.name for p in folder.iterdir()}
    code, err = soundscape_cli("score", "s18", "--split", "section", cwd=tmp_path)
    assert code == 2 and "--split writes the rite's scores" in err
    # a file where the folder should be: refused before any work, the file untouched
    (tmp_path / "a.txt").write_text("mine")
    for verb in (("score", "--performance"), ("midi",)):
        code, err = soundscape_cli(*verb, "--from", "s18", "--to", "s18", "--split",
                                   "section", "-o", "a.txt", cwd=tmp_path)
        assert code == 2 and "'a.txt' is a file; --split writes a folder" in err, err
        assert "laying out" not in err and (tmp_path / "a.txt").read_text() == "mine"


def test_a_part_per_staff_for_its_players_to_play_from(tmp_path, soundscape_cli):
    """s32's full score runs to 84 pages, a system a page; its players play from parts
    (test_musescore: the 瑟's in 6 pages): each staff of the full score on its own
    (NN-SOURCE.musicxml in the full score's order), holding exactly that staff's notes, with
    the tempo and rehearsal marks. 樂賓 (s18) here: five staves, the 瑟 and singers shared."""
    span = ("--from", "s18", "--to", "s18")
    code, err = soundscape_cli("score", "--performance", *span, "-o", "full.musicxml",
                               cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    code, err = soundscape_cli("score", "--performance", *span, "--split", "part",
                               cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    folder = tmp_path / "output" / "dashe.parts"
    full = ET.parse(tmp_path / "full.musicxml").getroot()
    staves = full.findall("part")
    names = [p.findtext("part-name") for p in full.iter("score-part")]
    files = sorted(folder.glob("*.musicxml"))
    assert len(files) == len(staves) == 5

    def written(part):  # each note or stroke and rest as written, bar by bar
        return [(bar.get("number"), n.findtext("pitch/step"), n.findtext("pitch/octave"),
                 n.findtext("duration"), n.find("rest") is not None, n.find("chord") is not None)
                for bar in part.iter("measure") for n in bar.iter("note")]

    for index, (path, staff, name) in enumerate(zip(files, staves, names, strict=True)):
        root = ET.parse(path).getroot()
        assert path.name.startswith(f"{index + 1:02d}-")
        assert [p.findtext("part-name") for p in root.iter("score-part")] == [name]
        (part,) = root.findall("part")
        assert written(part) == written(staff)
        assert sum(1 for _ in part.iter("rehearsal")) == sum(1 for _ in full.iter("rehearsal"))
        assert sum(1 for _ in part.iter("metronome")) >= 1
    assert [p.name for p in files][3:] == ["04-gong.dashi.musicxml",
                                           "05-gong.shanggong.1.musicxml"]
