"""Draw the site and the placed orchestra: a plan in SVG and PNG.

Two panels share one figure: the whole courtyard from the hall to the gate
(targets, shelters and their distances) and a close view of the hall and the
orchestra (every instrument with its Chinese and romanised name, facing
arrows, struck faces, the hanging points of bells and stones, the 工 in their
three places). Both carry a scale bar in metres and 貍步 and a north arrow. A
listener, when given, is drawn with a line and the distance to every source.

The figure is built on ``matplotlib.figure.Figure`` with the Agg canvas (no
pyplot state). Chinese is drawn with the bundled CJK subset (``output.fonts``). The
labels of the close view are moved apart by adjustText so that none covers another.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib
from adjustText import adjust_text
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrow, Polygon, Rectangle

from soundscape.errors import RenderError
from soundscape.fileio import atomic_paths
from soundscape.output.fonts import families
from soundscape.site.courtyard import Placement, Site
from soundscape.site.listeners import Listener
from soundscape.site.orchestra import PlacedInstrument

__all__ = ["OUT_SUFFIXES", "draw_plan", "output_paths", "plan_figure", "write_plan"]

_GROUP_COLOURS = {"east": "#1f5fa8", "west": "#a8361f", "drums": "#5a3d8a", "pipes": "#2c7a3a"}
_PHASE_STYLE = {"ge": ("o", "#c27c0e"), "guan": ("s", "#0e8ac2"), "zuo": ("^", "#6b8e23")}
_DETAIL_HALF_WIDTH = 13.5   # metres east and west of the axis in the close view
_DETAIL_SOUTH = -15.5       # metres: the close view's south edge
_DETAIL_NORTH = 2.5         # metres north of the hall's back edge: room for the 北階 label
_SVG_SALT = "soundscape-plan"
#: The rite a site belongs to, for the title (the 大射's site has no rite).
_RITE_TITLES = {"": "大射儀, the Great Archery Rite: ", "xiangshe": "鄉射禮: ",
                "yan": "燕禮: ", "xiangyinjiu": "鄉飲酒禮: "}
#: What ``--out`` may end in: the plan is always written as both.
OUT_SUFFIXES = (".svg", ".png")


def plan_figure(site: Site, placed: Mapping[str, PlacedInstrument], *,
                listener: str | None = None) -> Figure:
    """Build the plan figure.

    Parameters
    ----------
    site : Site
    placed : mapping layout id → PlacedInstrument
        From ``orchestra.place``.
    listener : str or None
        A place id: mark a listener there and draw direction and distance to
        every source.

    Returns
    -------
    matplotlib.figure.Figure
    """
    head = site.listener(listener) if listener else None
    with matplotlib.rc_context({"font.family": list(families()), "svg.hashsalt": _SVG_SALT,
                                "axes.unicode_minus": False}):
        figure = Figure(figsize=(17, 13), dpi=110, layout="constrained")
        FigureCanvasAgg(figure)
        overview, detail = figure.subplots(1, 2, width_ratios=[1.0, 2.1])
        _draw_overview(overview, site, placed, head)
        hou = "張侯 " if site.targets else ""
        figure.suptitle(f"{site.name or '射宮'} {hou}設樂 · {_RITE_TITLES.get(site.rite, '')}"
                        f"site, targets, orchestra (1 尺 = {site.chi_m:.3f} m)", fontsize=14)
        _draw_detail(detail, site, placed, head)
    return figure


def output_paths(out: str | Path) -> tuple[Path, Path]:
    """The SVG and PNG a plan asked for as ``out`` is written to (same name, both suffixes).

    Raises
    ------
    RenderError
        When ``out`` ends in neither ``.svg`` nor ``.png``, naming the value.
    """
    path = Path(out)
    if path.suffix.lower() not in OUT_SUFFIXES:
        ending = f"ends in {path.suffix!r}" if path.suffix else "has no suffix"
        raise RenderError(f"plan output {str(out)!r} {ending}; accepted: "
                          f"{' or '.join(OUT_SUFFIXES)} (the SVG and the PNG are both written)")
    return path.with_suffix(".svg"), path.with_suffix(".png")


def write_plan(figure: Figure, out: str | Path) -> tuple[Path, Path]:
    """Write ``figure`` as SVG and PNG named as ``out`` (ending .svg or .png), atomically.

    Returns
    -------
    (svg path, png path)

    Raises
    ------
    RenderError
        When ``out`` ends in neither ``.svg`` nor ``.png``.
    """
    svg, png = output_paths(out)
    # both written, or neither
    with (matplotlib.rc_context({"svg.hashsalt": _SVG_SALT}),
          atomic_paths(svg, png) as (svg_part, png_part)):
        figure.savefig(svg_part, format="svg", metadata={"Date": None})
        figure.savefig(png_part, format="png", metadata={"Software": None})
    return svg, png


def draw_plan(site: Site, placed: Mapping[str, PlacedInstrument], out: str | Path, *,
              listener: str | None = None) -> tuple[Path, Path]:
    """Draw the plan and write it as SVG and PNG; return both paths."""
    return write_plan(plan_figure(site, placed, listener=listener), out)


# Overview ------------------------------------------------------------------

def _draw_overview(ax: Axes, site: Site, placed: Mapping[str, PlacedInstrument],
                   head: Placement | None) -> None:
    half = site.courtyard_width / 2
    _walls(ax, site)
    _hall(ax, site, detail=False)
    for target_id in site.targets:
        _target(ax, site, target_id)
    _distances(ax, site)
    for item in placed.values():
        ax.plot(*item.position[:2], marker="s", ms=3, color=_GROUP_COLOURS.get(item.group, "k"))
    ax.add_patch(Rectangle((-_DETAIL_HALF_WIDTH, _DETAIL_SOUTH), 2 * _DETAIL_HALF_WIDTH,
                           site.hall.total_depth - _DETAIL_SOUTH + 2, fill=False, ls=":",
                           color="0.4"))
    ax.annotate("close view →", (_DETAIL_HALF_WIDTH, _DETAIL_SOUTH / 2), fontsize=8,
                xytext=(4, 0), textcoords="offset points", va="center", color="0.3")
    if head is not None:
        _listener(ax, site, placed, head)
    ax.set_xlim(-half - 4, half + 4)
    ax.set_ylim(site.gate_y - 22, site.hall.total_depth + 12)
    _frame(ax, site, "courtyard: hall to gate", bars=(20.0, 10))


def _walls(ax: Axes, site: Site) -> None:
    half, gate = site.courtyard_width / 2, site.gate_y
    north = site.hall.total_depth + site.stairs[1]
    opening = site.metres(2, "弓")
    ax.plot([-opening, -half, -half, half, half, opening],
            [gate, gate, north, north, gate, gate], color="0.25", lw=1.5)
    ax.annotate(_text(site, "men", "gate"), (0, gate), ha="center", va="top",
                xytext=(0, -3), textcoords="offset points", fontsize=9)


def _target(ax: Axes, site: Site, target_id: str) -> None:
    target = site.targets[target_id]
    x, y, _ = site.place(target_id)
    width = target.hou_zhong + 2 * target.band
    ax.plot([x - width / 2, x + width / 2], [y, y], color="#8b0000", lw=4, solid_capstyle="butt")
    fa = site.place(target.fa)
    ax.add_patch(Rectangle((fa[0] - 1.2, fa[1] - 0.6), 2.4, 1.2, color="#7a5c2e"))
    ax.plot([x, fa[0], fa[0]], [y, y, fa[1]], color="#7a5c2e", lw=0.8, ls="--")
    unit = _unit(target.unit)
    ax.annotate(f"{_text(site, target_id, site.place_info(target_id).roman.split(',')[0])}\n"
                f"{site.in_units(target.distance, unit):.0f} {unit} = {target.distance:.1f} m"
                "\nfrom the hall",
                (x + width / 2, y), xytext=(16, 0), textcoords="offset points", va="center",
                fontsize=8, color="#8b0000")
    ax.annotate(_text(site, target.fa, "shelter", short=True), (fa[0], fa[1]),
                xytext=(-10, 0), textcoords="offset points", ha="right", va="center",
                fontsize=7, color="#7a5c2e")


def _distances(ax: Axes, site: Site) -> None:
    """Dimension lines from the hall's edge to each target, and the 乏 offsets."""
    for index, target_id in enumerate(site.targets):
        x, y, _ = site.place(target_id)
        xx = x + 3 + 1.5 * index
        ax.annotate("", (xx, y), (xx, 0), arrowprops={"arrowstyle": "<->", "lw": 0.7,
                                                      "color": "#8b0000"})
    if not site.targets:
        return
    target = next(iter(site.targets.values()))
    x, y, _ = site.place(target.id)
    fa = site.place(target.fa)
    unit = _unit(target.unit)
    west = site.in_units(x - fa[0], unit)
    north = site.in_units(fa[1] - y, unit)
    words = ("西", "北", unit)
    ax.text((x + fa[0]) / 2, y - 1.5,
            f"{words[0]} {_amount(west)} {words[2]} = {x - fa[0]:.1f} m",
            ha="center", va="top", fontsize=7, color="#7a5c2e")
    ax.text(fa[0] - 1.5, (y + fa[1]) / 2,
            f"{words[1]} {_amount(north)} {words[2]}", ha="right",
            va="center", fontsize=7, color="#7a5c2e", rotation=90)


# Close view ----------------------------------------------------------------

def _draw_detail(ax: Axes, site: Site, placed: Mapping[str, PlacedInstrument],
                 head: Placement | None) -> None:
    """The hall and the orchestra; every label is then moved clear of the others."""
    ax.set_xlim(-_DETAIL_HALF_WIDTH, _DETAIL_HALF_WIDTH)
    ax.set_ylim(_DETAIL_SOUTH, site.hall.depth + _DETAIL_NORTH)
    labels = _hall(ax, site, detail=True)
    for place_id in ("xi", "ci", "zhong", "zhongting", "bi"):
        if place_id in site.places:  # a rite's site may lack one (鄉射 has no 次)
            labels.append(_spot(ax, site, place_id))
    ear = Listener(head.position, head.facing) if head is not None else None
    for item in placed.values():
        labels.append(_instrument(ax, item, ear))
    _performers(ax, site)
    if head is not None:
        label = _listener(ax, site, placed, head)
        inside = (-_DETAIL_HALF_WIDTH < head.position[0] < _DETAIL_HALF_WIDTH
                  and _DETAIL_SOUTH < head.position[1] < site.hall.depth + _DETAIL_NORTH)
        if inside:
            labels.append(label)
        else:  # out of this view: the overview marks where the listener is
            label.remove()
    _frame(ax, site, "hall and orchestra (設樂)", bars=(5.0, 4))
    _spread(ax, labels)


def _spread(ax: Axes, labels: list) -> None:
    """Move the labels apart (adjustText), each tied to its point by a thin line; a count
    of iterations rather than its default time limit, so the same plan gives the same bytes."""
    adjust_text(labels, ax=ax, expand=(1.15, 1.3), ensure_inside_axes=True, iter_lim=300,
                arrowprops={"arrowstyle": "-", "color": "0.55", "lw": 0.5})


def _hall(ax: Axes, site: Site, *, detail: bool) -> list:
    """Draw the hall with its stairs and pillars; in the close view return the labels."""
    hall = site.hall
    ax.add_patch(Rectangle((-hall.width / 2, 0), hall.width, hall.total_depth,
                           facecolor="#efe6d2", edgecolor="0.2", lw=1.2))
    ax.plot([-hall.xu_x, hall.xu_x], [hall.depth, hall.depth], color="0.35", lw=1.0)
    for sign in (-1, 1):
        ax.plot([sign * hall.xu_x] * 2, [0, hall.depth], color="0.5", lw=0.8, ls="--")
    for stair in ("zuojie", "xijie", "beijie"):
        spot = site.place_info(stair)
        if spot.size is None:  # a site whose stairs have no footprint: nothing to draw
            continue
        width, run = spot.size
        ax.add_patch(Rectangle((spot.position[0] - width / 2, spot.position[1] - run / 2),
                               width, run, facecolor="#d9cfb8", edgecolor="0.3", hatch="---"))
    for pillar in ("dongying", "xiying"):
        ax.add_patch(Circle(site.place(pillar)[:2], 0.25, color="0.15"))
    if not detail:
        ax.annotate(_text(site, "tang", "hall"), site.place("tang")[:2], ha="center",
                    fontsize=8)
        return []
    labels = [_spot(ax, site, place_id, marker=None)
              for place_id in ("tang", "zuojie", "xijie", "beijie", "dongying", "xiying",
                               "dongdian", "xidian", "dongtang", "xitang", "wu")]
    for mark in ("wu_shang", "wu_xia"):
        x, y, _ = site.place(mark)
        arm = site.metres(1.5)
        ax.plot([x - arm, x + arm], [y, y], color="#b22222", lw=1.2)
        ax.plot([x, x], [y - arm, y + arm], color="#b22222", lw=1.2)
    labels += [_spot(ax, site, "gong_wei", marker="*"), _spot(ax, site, "bin_wei", marker="*")]
    return labels


def _spot(ax: Axes, site: Site, place_id: str, *, marker: str | None = "x"):
    """Mark a place; return its label (for the label placer)."""
    spot = site.place_info(place_id)
    x, y, _ = spot.position
    if marker:
        ax.plot(x, y, marker=marker, color="0.2", ms=6)
    return ax.text(x, y + 0.25, _text(site, place_id, spot.roman.split(",")[0]), ha="center",
                   va="bottom", fontsize=7.5, color="0.25")


def _instrument(ax: Axes, item: PlacedInstrument, ear: Listener | None):
    """Draw one placed instrument; return its label: names, and with a listener the
    distance and direction from the listener's head."""
    colour = _GROUP_COLOURS.get(item.group, "k")
    x, y, _ = item.position
    ax.add_patch(Polygon(_footprint(item), closed=True, facecolor=colour, alpha=0.25,
                         edgecolor=colour, lw=1.0))
    if len(item.members) > 1:
        ax.plot([m[0] for m in item.members], [m[1] for m in item.members], ".", ms=2.5,
                color=colour)
    length = 1.1
    ax.add_patch(FancyArrow(x, y, item.facing[0] * length, item.facing[1] * length,
                            width=0.04, head_width=0.3, head_length=0.3, color=colour,
                            length_includes_head=True))
    if item.struck_face is not None:
        _struck_face(ax, item)
    words = f"{item.name} {item.roman}"
    if ear is not None:
        azimuth, _, distance = ear.direction_to(item.position)
        words += f"\n{distance:.1f} m, {azimuth:+.0f}°"
    dx = {"east": 0.6, "west": -0.6}.get(item.group, 0.0) if item.kind == "rack" else 0.0
    return ax.text(x + dx, y - (0.0 if dx else 0.6), words, fontsize=8, color=colour,
                   ha={-0.6: "right", 0.6: "left"}.get(dx, "center"),
                   va="center" if dx else "top", linespacing=1.1,
                   bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                         "alpha": 0.75})


def _footprint(item: PlacedInstrument) -> list[tuple[float, float]]:
    ax_, ay_ = item.axis[0], item.axis[1]
    cx, cy = -ay_, ax_
    x, y, _ = item.position
    half_l, half_d = item.length / 2, item.depth / 2
    return [(x + sa * ax_ * half_l + sc * cx * half_d, y + sa * ay_ * half_l + sc * cy * half_d)
            for sa, sc in ((-1, -1), (1, -1), (1, 1), (-1, 1))]


def _struck_face(ax: Axes, item: PlacedInstrument) -> None:
    assert item.struck_face is not None  # drawn only for an item that has one
    nx, ny, _ = item.struck_face
    reach = abs(nx) * item.half_extent[0] + abs(ny) * item.half_extent[1]
    fx, fy = item.position[0] + nx * reach, item.position[1] + ny * reach
    across = item.depth / 2
    ax.plot([fx - ny * across, fx + ny * across], [fy + nx * across, fy - nx * across],
            color="#d00000", lw=3.0, solid_capstyle="butt")


def _performers(ax: Axes, site: Site) -> None:
    for phase_id, spec in site.phases.items():
        marker, colour = _PHASE_STYLE.get(phase_id, ("o", "0.3"))
        positions = site.performer_positions(phase_id)
        ax.plot([p.position[0] for p in positions.values()],
                [p.position[1] for p in positions.values()], marker, color=colour, ms=5,
                ls="none", label=f"工 {spec.name}")
        first = positions[site.performers[0][0]]
        ax.add_patch(FancyArrow(*first.position[:2], first.facing[0] * 0.8,
                                first.facing[1] * 0.8, width=0.03, head_width=0.2,
                                head_length=0.2, color=colour))
    ax.plot([], [], color="#d00000", lw=3, label="struck face 所伐面")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)


def _listener(ax: Axes, site: Site, placed: Mapping[str, PlacedInstrument],
              head: Placement):
    """Lines from the listener's head to every source; return the listener's label."""
    x, y, _ = head.position
    for item in placed.values():
        ax.plot([x, item.position[0]], [y, item.position[1]], color="#e07b00", lw=0.6,
                alpha=0.6)
    ax.plot(x, y, marker="o", ms=9, color="#e07b00", mec="k")
    ax.add_patch(FancyArrow(x, y, head.facing[0] * 1.5, head.facing[1] * 1.5, width=0.06,
                            head_width=0.45, head_length=0.4, color="#e07b00"))
    return ax.text(x + 0.4, y + 0.4, "listener 聽者", fontsize=8.5, color="#b05a00")


# Frame: scale bars, north arrow --------------------------------------------

def _frame(ax: Axes, site: Site, title: str, *, bars: tuple[float, int]) -> None:
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("x east (m)")
    ax.set_ylabel("y north (m)")
    ax.grid(True, lw=0.3, color="0.85")
    _scale_bars(ax, site, *bars)
    _north_arrow(ax)


def _scale_bars(ax: Axes, site: Site, metres: float, libu: int) -> None:
    """Two bars in the lower right corner: ``metres`` m and ``libu`` 貍步."""
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    rise = 0.012 * (y1 - y0)
    longest = max(metres, site.metres(libu, "貍步"))
    left, base = x1 - 0.3 * (x1 - x0) - longest, y0 + 0.03 * (y1 - y0)
    for offset, length, text in ((0.0, metres, f"{metres:g} m"),
                                 (3 * rise, site.metres(libu, "貍步"), f"{libu} 貍步 libu")):
        y = base + offset
        ax.plot([left, left + length], [y, y], color="k", lw=2, solid_capstyle="butt")
        for end in (left, left + length):
            ax.plot([end, end], [y - rise / 2, y + rise / 2], color="k", lw=1)
        ax.text(left + length + 0.01 * (x1 - x0), y, text, va="center", fontsize=8)


def _north_arrow(ax: Axes) -> None:
    ax.annotate("N", xy=(0.95, 0.97), xytext=(0.95, 0.88), xycoords="axes fraction",
                ha="center", va="center", fontsize=12,
                arrowprops={"arrowstyle": "-|>", "lw": 1.5, "color": "k"})


def _amount(value: float) -> str:
    """A count of units as the text would give it: whole, or to a tenth (北 16.7 弓)."""
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def _unit(unit: str) -> str:
    """The unit a 侯道 is shown in: the text's own (貍步, 弓), metres for a sum."""
    return unit if unit != "m" else "貍步"


def _text(site: Site, place_id: str, roman: str, *, short: bool = False) -> str:
    name = site.place_info(place_id).name
    return name if short else f"{name} {roman}"
