"""Our scores and MIDI files as MuseScore 3 (Debian's ``musescore3``) reads them.

Each test converts with ``xvfb-run -a mscore3 -o OUT IN`` and checks what MuseScore made:
the note numbers of its own MIDI export, the words of its PDF (their place on the page,
via ``pdftotext -bbox``), and that it reports no import error. Skipped where
``mscore3``, ``xvfb-run`` or (for the PDF) ``pdftotext`` are not installed.
"""

from __future__ import annotations

import html
import itertools
import re
import shutil
import subprocess
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import mido
import numpy as np
import pytest

from soundscape import sequence
from soundscape.music import repertoire
from soundscape.music.tuning import Tuning
from soundscape.output import midi, mts, score
from soundscape.performance import Event, MusicSpan, Performance, PieceInfo, Source

pytestmark = pytest.mark.skipif(not (shutil.which("mscore3") and shutil.which("xvfb-run")),
                                reason="needs Debian's musescore3 and xvfb-run")
TUNING = Tuning.sanfen_sunyi()
TIMEOUT_S = 240


def mscore(source: Path, target: Path, made: Path | None = None) -> str:
    """Convert ``source`` with MuseScore 3 (which writes ``made``, if not ``target``: an
    SVG's first page is ``NAME-01.svg``); its output (stdout and stderr) is returned."""
    run = subprocess.run(["xvfb-run", "-a", "mscore3", "-o", str(target), str(source)],
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    said = run.stdout + run.stderr
    assert run.returncode == 0 and (made or target).exists(), said
    return said


def import_errors(said: str) -> list[str]:
    return [line for line in said.splitlines()
            if line.startswith("Error") or "invalid" in line or "failed" in line.lower()]


def note_numbers(path: Path) -> list[int]:
    """Note-on keys of a MIDI file in time order (ties by key)."""
    found = []
    for track in mido.MidiFile(path).tracks:
        tick = 0
        for message in track:
            tick += message.time
            if message.type == "note_on" and message.velocity > 0:
                found.append((tick, message.note))
    return [key for _, key in sorted(found)]


def test_piece_notes_as_musescore_plays_them(tmp_path):
    piece = repertoire.load_piece("luming")
    source = score.write_piece_score(piece, tmp_path / "luming.musicxml", tuning=TUNING)
    said = mscore(source, tmp_path / "luming.mid")
    assert import_errors(said) == []
    assert note_numbers(tmp_path / "luming.mid") == _every_part(piece)


def _every_part(piece) -> list[int]:
    """The keys of every part of one 終 of ``piece`` (song, 瑟, stones …), in time order
    (ties by key), as the score writes them: the song where the rite's tenors sing it, an
    octave under the 瑟 (鹿鳴)."""
    from soundscape.music.arrange import arrange

    played = arrange(piece, tuning=TUNING, repeats=1)
    notes = [n for part in played.parts.values() for n in part if n.pitch is not None]
    keys = mts.key_map([n.pitch for n in notes])

    def key(note) -> int:
        return keys.key(note.pitch) - 12 * (note.instrument == "voice")

    expected = [key(n) for n in sorted(notes, key=lambda n: (
        round(n.time * played.tempo_bpm / 60 * 8), key(n)))]
    assert 66 in expected  # 蕤賓: F♯ (+11.7¢) on 黃鍾 = C
    return expected


def test_compressed_score_opens(tmp_path):
    piece = repertoire.load_piece("luming")
    source = score.write_piece_score(piece, tmp_path / "luming.mxl", tuning=TUNING)
    said = mscore(source, tmp_path / "luming.mid")
    assert import_errors(said) == []
    assert len(note_numbers(tmp_path / "luming.mid")) == len(_every_part(piece))


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="needs poppler-utils")
def test_every_notes_letter_and_cents_stand_apart_on_the_page(tmp_path):
    # 肆夏, seven parts: each pitched note's 律 letter and cents are words of their own in
    # MuseScore's PDF (three-character names and "+5.9¢" ran together: 清太簇清黃鍾)
    piece = repertoire.load_piece("sixia")
    source = score.write_piece_score(piece, tmp_path / "sixia.musicxml", tuning=TUNING)
    mscore(source, tmp_path / "sixia.pdf")
    words = _all_words(tmp_path / "sixia.pdf")
    pitched = source.read_text(encoding="utf-8").count('<lyric name="4" number="4">')
    assert pitched > 100
    assert len([w for w in words if re.fullmatch(r"[+-]\d+", w)]) == pitched
    lu = re.compile(r"(清|倍)?[黃大太夾姑仲蕤林夷南無應]")
    assert not [w for w in words if re.fullmatch(f"(?:{lu.pattern}){{2,}}", w)]


def _all_words(pdf: Path) -> list[str]:
    """Every word of every page of ``pdf`` (pdftotext)."""
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    return [unicodedata.normalize("NFKC", w) for w in text.split()]


def _words(pdf: Path) -> tuple[tuple[float, float], list[tuple[str, tuple[float, ...]]]]:
    """Page size and the (word, box) list of the PDF's first page."""
    xhtml = subprocess.run(["pdftotext", "-bbox", "-f", "1", "-l", "1", str(pdf), "-"],
                           capture_output=True, text=True, timeout=60, check=True).stdout
    page = re.search(r'<page width="([\d.]+)" height="([\d.]+)"', xhtml)
    words = [(unicodedata.normalize("NFKC", html.unescape(text)), tuple(map(float, box)))
             for *box, text in re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" '
                                          r'xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>',
                                          xhtml)]
    return (float(page[1]), float(page[2])), words


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="needs poppler-utils")
def test_first_page_credits_laid_out(tmp_path):
    piece = repertoire.load_piece("luming")
    source = score.write_piece_score(piece, tmp_path / "luming.musicxml", tuning=TUNING)
    mscore(source, tmp_path / "luming.pdf")
    (width, height), words = _words(tmp_path / "luming.pdf")
    text = " ".join(w for w, _ in words)
    assert text.startswith("鹿鳴 Lu ming (The Deer Cry)")  # the title, first on the page
    assert "melody: surviving" in text and "Music21" not in text
    assert all(min(x0, y0) >= 0 and x1 <= width and y1 <= height
               for _, (x0, y0, x1, y1) in words)
    # No two words overlap (boxes trimmed by a quarter of their height: line leading).
    boxes = [(x0, y0 + (y1 - y0) / 4, x1, y1 - (y1 - y0) / 4) for _, (x0, y0, x1, y1) in words]
    clashes = [(a, b) for a, b in itertools.combinations(range(len(boxes)), 2)
               if _overlap(boxes[a], boxes[b])]
    assert [(words[a][0], words[b][0]) for a, b in clashes] == []


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _notes_by_track(path: Path) -> list[list[int]]:
    """Sorted note-on keys of each track that plays (MuseScore's export adds no others)."""
    found = [sorted(m.note for m in track if m.type == "note_on" and m.velocity)
             for track in mido.MidiFile(path).tracks]
    return [keys for keys in found if keys]


@pytest.fixture(scope="module")
def yuebin():
    """樂賓 (s18): 鹿鳴 sung to four 瑟, and the 新宮 piped after it (s19's music)."""
    return sequence.perform_from_file(from_section="s18", to_section="s19")


@pytest.mark.parametrize("by", ["section", "piece"])
def test_split_files_import_note_for_note(tmp_path, yuebin, by):
    files = midi.write_split(yuebin, tmp_path / by, by=by, listener=None)
    source = max(files, key=lambda f: len(midi.read_events(f)))  # the file with most notes
    said = mscore(source, tmp_path / "back.mid")
    assert import_errors(said) == []
    assert _notes_by_track(tmp_path / "back.mid") == _notes_by_track(source)


def _played_freely() -> Performance:
    """鹿鳴's beat (44 bpm) from 1 s, each onset up to 120 ms off it, as players are."""
    tuning, names = Tuning.sanfen_sunyi(), ["黃鍾", "太簇", "姑洗", "林鍾", "南呂", "清黃鍾"]
    rng = np.random.default_rng(1)
    sources = {s: Source(s, instrument, s, s, "gong", (0.0, 2.0, 1.6))
               for s, instrument in (("ge", "voice"), ("se", "se"))}
    beat = 60 / 44
    events = [Event(1.0 + k * beat + rng.uniform(-0.12, 0.12), 0.9 * beat, s,
                    tuning.pitch(names[k % 6]), 0.7, "sing", "m", "luming")
              for k in range(32) for s in sources]
    return Performance.build(events, [], sources,
                             pieces={"luming": PieceInfo("luming", "鹿鳴", "surviving", "")},
                             music=(MusicSpan("m", "luming", 1.0, 1.0 + 32 * beat, "music"),))


def _tempo_and_metre(path: Path) -> list[tuple]:
    return [(m.type, getattr(m, "tempo", None), getattr(m, "numerator", None))
            for track in mido.MidiFile(path).tracks for m in track
            if m.type in ("set_tempo", "time_signature")]


def test_notes_on_the_grid_keep_the_tempo_map_in_musescore(tmp_path):
    performance = _played_freely()
    free = midi.write_midi(performance, tmp_path / "free.mid", listener=None)
    mscore(free, tmp_path / "free_back.mid")
    assert ("set_tempo", round(6e7 / 44), None) not in _tempo_and_metre(tmp_path / "free_back.mid")
    snapped = midi.write_midi(performance, tmp_path / "grid.mid", listener=None, grid=4)
    mscore(snapped, tmp_path / "grid_back.mid")
    found = _tempo_and_metre(tmp_path / "grid_back.mid")
    assert ("set_tempo", round(6e7 / 44), None) in found and ("time_signature", None, 4) in found


def test_a_full_score_fits_its_pages(tmp_path):
    """s32's full score (the third round, with its singers, 瑟, 負侯 and archery) laid out
    by MuseScore: at 5 mm on A4 its 26 staves ran past the page's foot, and a small text a
    bar climbed over the next ones up and off the page's right edge. Every staff now lies
    within the page's margins, and every mark, text and name on the page."""
    rite = sequence.perform_from_file(seed=0, from_section="s32", to_section="s32")
    source = score.write_performance_score(rite, tmp_path / "s32.musicxml")
    assert _pages_laid_out_within(source, tmp_path) > 10


def test_a_players_part_fits_its_pages_in_a_few(tmp_path):
    """The 瑟 players' part of s32 (`score --split part`), a staff alone, keeps within its
    pages as the full score does, in 6 pages where the full score takes 84."""
    rite = sequence.perform_from_file(seed=0, from_section="s32", to_section="s32")
    source = tmp_path / "se.musicxml"
    source.write_bytes(score.performance_score(rite, staff=7))
    assert ET.parse(source).getroot().findtext("part-list/score-part/part-name") \
        == "工 上工一–上工四 4 × se"
    assert _pages_laid_out_within(source, tmp_path) <= 8


def _pages_laid_out_within(source: Path, folder: Path) -> int:
    """How many pages MuseScore lays ``source`` out on, each staff within the margins and
    every mark, text and name on its page (asserted)."""
    root = ET.parse(source).getroot()
    to_mm = float(root.findtext("defaults/scaling/millimeters")) / float(
        root.findtext("defaults/scaling/tenths"))
    page_mm = [float(root.findtext(f"defaults/page-layout/page-{k}")) * to_mm
               for k in ("width", "height")]
    margin_mm = float(root.findtext("defaults/page-layout/page-margins/top-margin")) * to_mm
    said = mscore(source, folder / f"{source.stem}.svg", made=folder)  # pages STEM-N.svg
    pages = sorted(folder.glob(f"{source.stem}-*.svg"),
                   key=lambda page: int(page.stem.rpartition("-")[2]))
    assert pages, said
    for page in pages:
        svg = page.read_text(encoding="utf-8")
        width, height = map(float, re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups())
        per_mm = width / page_mm[0]
        assert height / per_mm == pytest.approx(page_mm[1], abs=0.5)
        staff = [float(y) for points in re.findall(r'class="StaffLines"[^>]*points="([^"]+)"', svg)
                 for y in re.findall(r",([\d.]+)", points)]
        assert staff or page == pages[0], page.name  # the first may hold the credits alone
        assert margin_mm - 1 <= min(staff, default=margin_mm * per_mm) / per_mm, page.name
        assert max(staff, default=0.0) / per_mm <= page_mm[1] - margin_mm + 1, page.name
        for kind, shape in re.findall(r'class="(StaffText|RehearsalMark|Tempo|Lyrics|'
                                      r'InstrumentName)"[^>]*? d="([^"]+)"', svg):
            xy = np.array([float(v) for v in re.findall(r"-?[\d.]+", shape)]).reshape(-1, 2)
            assert xy.min() >= 0 and xy[:, 0].max() <= width and xy[:, 1].max() <= height, (
                page.name, kind)
    return len(pages)
