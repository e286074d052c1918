"""A synthetic chapter, written for this test, of a rite soundscape has no data for, fed
through the whole chain as a user would: ``derive → sequence → midi → render --from/--to``,
and a saved Performance rendered again on its own site (issue 28, "How it is measured").

The chapter borrows the Yili's formulas (戒賓, 迎賓, 工四人二瑟, 歌鹿鳴, 笙入, 樂南陔,
奏陔) in an order and wording of no bundled rite, punctuated with its words in 「」.
"""

from __future__ import annotations

import json
import math

import pytest
import soundfile
from click.testing import CliRunner

from soundscape import cuesheet
from soundscape.cli import cli
from soundscape.performance import Performance
from soundscape.site.courtyard import GENERIC, load_site

CHAPTER = """\
# 習射之禮 (written for soundscape's tests: a rite with no data of its own)
主人戒賓。賓禮辭，許。主人再拜，賓答拜。
右戒賓
主人迎賓于門外，再拜，賓答拜。揖讓升。主人曰：「請以樂賓。」賓曰：「諾。」
右迎賓
工四人，二瑟，瑟先。相者二人，皆左何瑟，升自西階，北面坐。乃歌鹿鳴三終。主人獻工。
右樂賓
笙入，堂下磬南，北面立。樂南陔、白華、華黍。
右笙奏
賓出，奏陔。
右賓出
"""


def _run(args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """The chapter derived and sequenced by the CLI: (folder, sheet path, performance path)."""
    folder = tmp_path_factory.mktemp("synthetic")
    source, sheet, saved = folder / "xishe.txt", folder / "xishe.toml", folder / "p.json"
    source.write_text(CHAPTER, encoding="utf-8")
    said = _run(["derive", source, "-o", sheet])
    assert "not a bundled rite" in said and "will not sequence" not in said
    _run(["sequence", sheet, "-o", saved, "--plot", folder / "timeline.png"])
    return folder, sheet, saved


def test_derive_finds_its_music_speech_and_instruments(chain):
    _, sheet_path, _ = chain
    sheet = cuesheet.load(sheet_path)
    assert [m.piece for m in sheet.music] == ["luming", "nangai", "baihua", "huashu", "gaixia"]
    assert {"sheng", "bianqing"} <= {i.instrument for i in sheet.layout}
    assert [(c.speaker, c.quote) for c in sheet.speech] == [("主人", "請以樂賓"), ("賓", "諾")]


def test_sequence_midi_and_render_a_section(chain, monkeypatch):
    folder, sheet, saved = chain
    monkeypatch.chdir(folder)
    performance = Performance.load_json(saved)
    assert performance.info.site == GENERIC
    assert [s.id for s in performance.sections] == ["s01", "s02", "s03", "s04", "s05"]
    _run(["midi", "--performance", saved, "-o", folder / "all.mid"])
    assert (folder / "all.mid").stat().st_size > 1000
    _run(["render", "--cues", sheet, "--from", "迎賓", "--to", "迎賓", "--quiet",
          "-o", folder / "s02.wav"])
    audio, rate = soundfile.read(folder / "s02.wav")
    assert rate == 48000 and audio.shape[1] == 2 and math.sqrt((audio ** 2).mean()) > 1e-3


def _spy(monkeypatch, module, name):
    """Record the keyword arguments of ``module.name`` and call through."""
    calls = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_a_saved_performance_renders_on_its_own_site(chain, monkeypatch):
    """`render --performance FILE` of the generic rite hears it in its own hall and court:
    the listener at its gate stands 27.7 m south of the hall (the generic court), not at
    the 射宮's gate 138.6 m away; the sound's delay from the hall is the generic court's."""
    from soundscape.output import midi
    from soundscape.sound import render

    folder, _, saved = chain
    monkeypatch.chdir(folder)
    generic, dashe = load_site(rite=GENERIC), load_site()
    gate = generic.listener("men").position
    assert gate[1] != dashe.listener("men").position[1]
    renders = _spy(monkeypatch, render, "render_audio")
    _run(["render", "--performance", saved, "--from", "s02", "--to", "s02", "--listener",
          "men", "--no-reflections", "--quiet", "-o", folder / "saved.wav"])
    (call,) = renders
    assert call["listener"].position == gate
    # the host's words are heard from the hall after the sound has crossed the generic court
    part = Performance.load_json(saved).cut("s02", "s02")
    spoken = next(e for e in part.events if e.lyric == "請以樂賓")
    delay = call["listener"].at(spoken.time).direction_to(spoken.position)[2] / 343.0
    assert 0.05 < delay < 0.15  # about 28 m at 343 m/s (the 射宮's gate: 0.4 s)
    assert (folder / "saved.wav").stat().st_size > 10_000
    written = _spy(monkeypatch, midi, "write_midi")
    _run(["midi", "--performance", saved, "--listener", "men", "-o", folder / "saved.mid"])
    assert written[0]["listener"].position == gate


def test_a_performance_saved_before_the_site_was_recorded(chain, tmp_path):
    """A file without ``info.site`` is played on its rite's site, as before (the 大射's for a
    text id of no bundled rite)."""
    from soundscape.cli._common import Sequencing

    _, _, saved = chain
    data = json.loads(saved.read_text(encoding="utf-8"))
    del data["info"]["site"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert Performance.load_json(old).info.site is None
    def saved_as(path):
        return Sequencing(None, None, 0, None, None, None, None, path)

    assert saved_as(old).site_rite(None) is None
    data["info"]["text"] = "xiangshe"
    older = tmp_path / "older.json"
    older.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert saved_as(older).site_rite(None) == "xiangshe"
    assert saved_as(saved).site_rite(None) == GENERIC
