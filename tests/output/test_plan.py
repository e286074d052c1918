"""The plan drawing and the `soundscape plan` command."""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from soundscape.cli.plan import command
from soundscape.errors import RenderError
from soundscape.output import fonts, plan
from soundscape.site import orchestra
from soundscape.site.courtyard import load_site
from tests.site.test_orchestra import LAYOUT


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """The plan heard from the duke's seat, drawn once with every warning an error (a
    missing glyph or font warns): site, placed, (svg, png), figure."""
    site = load_site()
    placed = orchestra.place(LAYOUT, site)
    out = tmp_path_factory.mktemp("plan") / "plan.svg"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = plan.plan_figure(site, placed, listener="gong_wei")
        return site, placed, plan.write_plan(figure, out), figure


def test_plan_writes_svg_and_png_with_every_name(drawn):
    _, placed, (svg, png), _ = drawn
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "</svg>" in text
    for item in placed.values():
        assert item.roman in text  # romanised names, kept as text comments in the SVG
    assert "貍步" in text


def test_plan_marks_distances_to_targets(drawn):
    site, _, (svg, _), _ = drawn
    text = svg.read_text(encoding="utf-8")
    for target in site.targets.values():
        assert f"{target.distance:.1f} m" in text


def test_plan_is_deterministic(drawn, tmp_path):
    site, placed, (svg, png), _ = drawn
    again_svg, again_png = plan.draw_plan(site, placed, tmp_path / "again.svg",
                                          listener="gong_wei")
    assert again_svg.read_bytes() == svg.read_bytes()
    assert again_png.read_bytes() == png.read_bytes()


def test_listener_lines_show_each_distance(drawn):
    site, placed, (svg, _), _ = drawn
    text = svg.read_text(encoding="utf-8")
    from soundscape.site.listeners import Listener
    head = site.listener("gong_wei")
    ear = Listener(head.position, head.facing)
    for item in placed.values():
        distance = ear.direction_to(item.position)[2]
        assert f"{distance:.1f} m" in text, item.id


def test_plan_draws_chinese_with_the_bundled_font_and_no_label_covers_another(drawn):
    figure = drawn[3]
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts
                 if t.get_text()]
        assert len(boxes) > 10
        assert [(a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1:]
                if box.overlaps(other)] == []
    assert any("聽者" in t.get_text() for t in figure.axes[1].texts)
    assert fonts.BUNDLED_CJK in fonts.families()


def test_bundled_font_holds_every_name_the_plan_writes():
    from fontTools.ttLib import TTFont

    site = load_site()
    names = "".join(p.name for p in site.places.values()) + "".join(
        item.name for item in orchestra.place(LAYOUT, site).values()) + "貍步聽者設樂所伐面"
    cmap = TTFont(fonts.FONT_FILE)["cmap"].getBestCmap()
    assert [c for c in names if ord(c) >= 0x2E80 and ord(c) not in cmap] == []
    assert fonts.FONT_FILE.stat().st_size < 2_000_000
    assert (fonts.FONT_FILE.parent / "OFL.txt").is_file()


def test_command_draws_from_a_cue_sheet(tmp_path):
    cuesheet = pytest.importorskip("soundscape.cuesheet")
    try:
        cues = cuesheet.bundled_path()
    except FileNotFoundError:
        pytest.skip("cues/dashe.toml not there yet")
    out = tmp_path / "out" / "plan.svg"
    result = CliRunner().invoke(command, ["--out", str(out), "--cues", str(cues),
                                          "--listener", "men", "--chi-m", "0.24"])
    assert result.exit_code == 0, result.output
    assert out.is_file() and out.with_suffix(".png").is_file()


def test_command_refuses_an_unknown_listener(tmp_path):
    result = CliRunner().invoke(command, ["--out", str(tmp_path / "p.svg"), "--listener", "moon"])
    assert result.exit_code != 0
    assert "moon" in str(result.exception)


@pytest.mark.parametrize("name, ending", [("p.pdf", "ends in '.pdf'"), ("plan", "has no suffix"),
                                          ("p.svg.txt", "ends in '.txt'")])
def test_command_refuses_an_out_that_is_neither_svg_nor_png(tmp_path, name, ending):
    out = tmp_path / name
    result = CliRunner().invoke(command, ["--out", str(out)])
    assert result.exit_code == 2
    assert str(out) in result.output and ending in result.output
    assert "accepted: .svg or .png" in result.output
    assert list(tmp_path.iterdir()) == []


def test_out_may_name_the_svg_or_the_png(tmp_path):
    both = (tmp_path / "p.svg", tmp_path / "p.png")
    assert plan.output_paths(tmp_path / "p.svg") == both
    assert plan.output_paths(str(tmp_path / "p.png")) == both
    with pytest.raises(RenderError, match=r"p\.pdf"):
        plan.write_plan(None, tmp_path / "p.pdf")



def _stairs(figure) -> list[int]:
    """The hatched stair footprints of each of the figure's axes."""
    return [sum(p.get_hatch() == "---" for p in ax.patches) for ax in figure.axes]


def test_a_stair_without_a_footprint_is_drawn_without_one(drawn):
    # a rite's site may give a stair no size: the plan unpacked None (TypeError)
    from dataclasses import replace

    site, placed, _, figure = drawn
    places = dict(site.places)
    places["xijie"] = replace(places["xijie"], size=None)
    without = _stairs(plan.plan_figure(replace(site, places=places), placed))
    assert [a - b for a, b in zip(_stairs(figure), without, strict=True)] in (
        [1, 0], [0, 1], [1, 1])  # that stair, in each view that draws the stairs


def test_a_plan_whose_png_fails_leaves_the_earlier_svg(tmp_path, drawn, monkeypatch):
    """The SVG was renamed into place before the PNG was made."""
    *_, figure = drawn
    svg = tmp_path / "plan.svg"
    svg.write_text("earlier")
    real = figure.savefig

    def png_fails(path, **options):
        if options.get("format") == "png":
            raise OSError(28, "No space left on device")
        real(path, **options)

    monkeypatch.setattr(figure, "savefig", png_fails)
    with pytest.raises(OSError, match="No space"):
        plan.write_plan(figure, svg)
    assert svg.read_text() == "earlier"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.svg"]
