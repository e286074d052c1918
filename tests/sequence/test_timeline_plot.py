"""The timeline picture: names that do not run together or get cut, a legend that covers
nothing, and a time axis that says where a cut's minutes count from."""

import warnings
from pathlib import Path

import pytest

from soundscape.output import timeline_plot
from soundscape.sequence.planner import perform_from_file


@pytest.fixture(scope="module")
def whole():
    return perform_from_file(seed=0)


def _figure(performance):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph or font would warn
        figure = timeline_plot.timeline_figure(performance)
        figure.canvas.draw()
    return figure


def _boxes(figure, ax):
    renderer = figure.canvas.get_renderer()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts if t.get_text()]


def test_whole_rite_names_stand_apart_inside_the_picture(whole):
    figure = _figure(whole)
    ax = figure.axes[0]
    boxes = _boxes(figure, ax)
    assert sum(text.startswith(("s0", "s1", "s2", "s3", "s4")) for text, _ in boxes) >= 40
    assert [(a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1:]
            if box.overlaps(other)] == []
    frame = figure.bbox
    assert [text for text, box in boxes
            if not (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
                    and box.y1 <= frame.y1)] == []
    legend = ax.get_legend().get_window_extent(figure.canvas.get_renderer())
    assert not legend.overlaps(ax.get_window_extent())
    assert ax.get_xlabel() == "minutes from the start of the rite"


def test_a_cut_counts_its_minutes_from_its_first_section(whole):
    start = whole.section("s18").start
    part = whole.between(start, whole.section("s20").end)
    figure = _figure(part)
    label = figure.axes[0].get_xlabel()
    assert label == f"minutes from the start of s18 樂賓 ({start / 60:.1f} min into the rite)"
    assert "guests' entry" not in label
    assert len(figure.axes) == 1  # no round shot to music in it: no close view


def test_spread_keeps_a_gap_and_the_bounds():
    placed = timeline_plot.spread([0.0, 0.1, 0.15, 5.0, 9.95, 10.0], gap=1.0, low=0.0,
                                  high=10.0)
    assert placed == [0.0, 1.0, 2.0, 5.0, 9.0, 10.0]
    assert timeline_plot.spread([3.0, 7.0], gap=1.0, low=0.0, high=10.0) == [3.0, 7.0]


def test_bundled_font_holds_every_section_name_and_piece_title():
    from fontTools.ttLib import TTFont

    from soundscape import cuesheet
    from soundscape.music.repertoire import list_pieces, load_piece
    from soundscape.output import fonts

    sheets = sorted(cuesheet.bundled_path().parent.glob("*.toml"))
    words = "".join(s.name for path in sheets for s in cuesheet.load(path).sections)
    words += "".join(load_piece(piece).title for piece in list_pieces())
    cmap = TTFont(fonts.FONT_FILE)["cmap"].getBestCmap()
    assert len(sheets) >= 1 and len(words) > 100
    assert "".join(sorted({c for c in words if ord(c) >= 0x2E80 and ord(c) not in cmap})) == ""


def test_a_one_section_cut_names_it_once_and_shows_only_what_it_holds(whole):
    span = whole.section("s09")
    figure = _figure(whole.between(span.start, span.end))
    assert figure.texts[0].get_text().startswith("大射儀, s09 主人獻公 — ")
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["reconstructed melody"]
    assert not any("arrow releases" in t.get_text() for t in ax.texts)


@pytest.mark.parametrize("name", ["x.xyz", "x", "x.PNG.bak"])
def test_the_sequence_command_refuses_a_picture_it_cannot_write(tmp_path, soundscape_cli,
                                                                 monkeypatch, name):
    """Refused before the (slow) sequencing, with the formats it writes; nothing written."""
    from soundscape.cli._common import Sequencing

    def never(*_args, **_kwargs):
        raise AssertionError("a bad --plot must be refused before sequencing")

    monkeypatch.setattr(Sequencing, "perform", never)
    code, err = soundscape_cli("sequence", "--plot", str(tmp_path / name), "-o",
                               str(tmp_path / "p.json"), cwd=tmp_path)
    assert code == 2, err
    assert f"--plot {str(tmp_path / name)!r}" in err and "accepted: .png, .svg" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_sequence_whose_picture_fails_leaves_the_earlier_performance(tmp_path, soundscape_cli,
                                                                       monkeypatch):
    """The Performance was written before the timeline was drawn: a failing picture left
    a new Performance beside an old timeline."""
    from soundscape.cli import sequence as verb

    (tmp_path / "p.json").write_text("earlier")

    def fails(_performance, out):
        Path(out).write_bytes(b"half a picture")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(verb, "write_timeline", fails)
    code, err = soundscape_cli("sequence", "--to", "s06", "-o", "p.json", "--plot", "t.png",
                               cwd=tmp_path)
    assert code != 0 and "t.png: no space left on the device" in err, err
    assert (tmp_path / "p.json").read_text() == "earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]


@pytest.mark.parametrize("kind", [".svg", ".png"])
def test_the_same_performance_draws_the_same_bytes(tmp_path, kind):
    """The SVG carried the time it was drawn and random clip-path ids."""
    part = perform_from_file(seed=0, from_section="s45", to_section="s45")
    drawn = [timeline_plot.write_timeline(part, tmp_path / f"{n}{kind}").read_bytes()
             for n in range(2)]
    assert drawn[0] == drawn[1]
