"""The plan drawing and the `soundscape plan` command."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from soundscape.cli.plan import command
from soundscape.errors import RenderError
from soundscape.output import plan
from soundscape.site import orchestra
from soundscape.site.courtyard import load_site
from tests.site.test_orchestra import LAYOUT


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    site = load_site()
    placed = orchestra.place(LAYOUT, site)
    out = tmp_path_factory.mktemp("plan") / "plan.svg"
    return site, placed, plan.draw_plan(site, placed, out, listener="gong_wei")


def test_plan_writes_svg_and_png_with_every_name(drawn):
    _, placed, (svg, png) = drawn
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "</svg>" in text
    for item in placed.values():
        assert item.roman in text  # romanised names, kept as text comments in the SVG
    assert "貍步" in text or plan.cjk_font() is None


def test_plan_marks_distances_to_targets(drawn):
    site, _, (svg, _) = drawn
    text = svg.read_text(encoding="utf-8")
    for target in site.targets.values():
        assert f"{target.distance:.1f} m" in text


def test_plan_is_deterministic(drawn, tmp_path):
    site, placed, (svg, png) = drawn
    again_svg, again_png = plan.draw_plan(site, placed, tmp_path / "again.svg",
                                          listener="gong_wei")
    assert again_svg.read_bytes() == svg.read_bytes()
    assert again_png.read_bytes() == png.read_bytes()


def test_listener_lines_show_each_distance(drawn):
    site, placed, (svg, _) = drawn
    text = svg.read_text(encoding="utf-8")
    from soundscape.site.listeners import Listener
    head = site.listener("gong_wei")
    ear = Listener(head.position, head.facing)
    for item in placed.values():
        distance = ear.direction_to(item.position)[2]
        assert f"{distance:.1f} m" in text, item.id


def test_cjk_font_is_found_or_a_warning_is_given(monkeypatch):
    if plan.cjk_font() is None:
        with pytest.warns(UserWarning, match="CJK"):
            plan.plan_figure(load_site(), {})
    else:
        monkeypatch.setattr(plan, "cjk_font", lambda: None)
        with pytest.warns(UserWarning, match="CJK"):
            plan.plan_figure(load_site(), {})


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
