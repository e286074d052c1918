"""A picture of a Performance: sections along time, music spans by piece, the shoots.

A reader of the Performance like any other: it draws what the sequencer
decided (its sections, music and rounds) and what sounds (events), with a
close view of the third round where the arrows leave on the drum 節 of 貍首.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from soundscape.fileio import atomic_path
from soundscape.output.plan import cjk_font
from soundscape.performance import Performance

__all__ = ["timeline_figure", "write_timeline"]

_BASIS_COLOUR = {"surviving": "#2e7d32", "reconstruction": "#e07b00"}
_ROUND_COLOUR = "#6d4c41"
_ZOOM_SECONDS = 240.0


def timeline_figure(performance: Performance) -> Figure:
    """The whole rite on one axis, and a close view of the start of round three."""
    font = cjk_font()
    if font is None:
        warnings.warn("no CJK font found (install Debian fonts-noto-cjk); labels fall back "
                      "to ids", stacklevel=2)
    family = [font, "DejaVu Sans"] if font else ["DejaVu Sans"]
    with matplotlib.rc_context({"font.family": family, "svg.hashsalt": "soundscape"}):
        figure, (whole, zoom) = plt.subplots(2, 1, figsize=(18, 9),
                                             gridspec_kw={"height_ratios": [3, 2]})
        _draw_whole(whole, performance, cjk=font is not None)
        _draw_round_three(zoom, performance)
        title = performance.info.title
        minutes = performance.duration / 60
        figure.suptitle(f"{title if font else 'Da She'} — {minutes:.0f} min, "
                        f"seed {performance.info.seed}", fontsize=14)
        figure.tight_layout()
    return figure


def _draw_whole(ax, performance: Performance, *, cjk: bool) -> None:
    minutes = 1 / 60
    for index, section in enumerate(performance.sections):
        start, end = section.start * minutes, section.end * minutes
        if end <= start:
            continue
        ax.axvspan(start, end, ymin=0.82, ymax=1.0, color="#cfd8dc" if index % 2 else "#eceff1")
        label = section.name if cjk else section.id
        ax.text((start + end) / 2, 3.45, label, rotation=90, ha="center", va="center",
                fontsize=6)
    pieces = performance.pieces
    rows = {}
    for music in performance.music:
        row = rows.setdefault(music.piece, len(rows))
        basis = pieces[music.piece].basis if music.piece in pieces else "reconstruction"
        start, end = music.start * minutes, music.end * minutes
        ax.barh(2.4 - 0.3 * (row % 3), end - start, left=start, height=0.25,
                color=_BASIS_COLOUR[basis])
        title = pieces[music.piece].title if cjk and music.piece in pieces else music.piece
        ax.text(start, 2.4 - 0.3 * (row % 3) + 0.16, f"{title} ({music.bound}-bound)",
                fontsize=7)
    for shoot in performance.rounds:
        start, end = shoot.start * minutes, shoot.end * minutes
        ax.barh(1.2, end - start, left=start, height=0.3, color=_ROUND_COLOUR)
        ax.text(start, 1.4, f"round {shoot.number}", fontsize=7)
    releases = [e.time * minutes for e in performance.events
                if performance.sources[e.source].instrument == "bow"]
    ax.vlines(releases, 0.5, 0.8, color="black", linewidth=0.3)
    ax.text(0, 0.6, "arrow releases", fontsize=7)
    ax.set_ylim(0.3, 3.9)
    ax.set_yticks([])
    ax.set_xlim(0, max(performance.duration, 1.0) * minutes)
    ax.set_xlabel("minutes from the guests' entry")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in _BASIS_COLOUR.values()]
    handles.append(plt.Rectangle((0, 0), 1, 1, color=_ROUND_COLOUR))
    ax.legend(handles, ["surviving melody", "reconstruction", "shooting round"],
              loc="upper left", fontsize=8)


def _draw_round_three(ax, performance: Performance) -> None:
    rounds = [r for r in performance.rounds if r.jie]
    if not rounds:
        ax.text(0.5, 0.5, "no round shot to music", ha="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    shoot = rounds[0]
    start = shoot.start
    stop = start + _ZOOM_SECONDS

    def window(times):
        return [t - start for t in times if start <= t < stop]

    drums = [e.time for e in performance.events
             if performance.sources[e.source].instrument in ("jiangu", "pi")]
    releases = [e.time for e in performance.events
                if performance.sources[e.source].instrument == "bow"]
    ax.vlines(window(drums), 2.0, 2.4, color="#5d4037", linewidth=0.6, label="drum strokes")
    ax.vlines(window(shoot.jie), 1.4, 1.9, color="#c62828", linewidth=2, label="節")
    ax.vlines(window(shoot.strokes), 1.0, 1.35, color="#ef6c00", linewidth=1.2,
              label="strokes the archers loose on")
    ax.vlines(window(releases), 0.4, 0.9, color="black", linewidth=1, label="arrow releases")
    ax.set_xlim(0, _ZOOM_SECONDS)
    ax.set_ylim(0.2, 2.6)
    ax.set_yticks([])
    ax.set_xlabel(f"seconds from the start of round {shoot.number} (貍首, 間若一)")
    ax.legend(loc="upper right", fontsize=8)


def write_timeline(performance: Performance, out: str | Path) -> Path:
    """Draw the timeline to ``out`` (PNG or SVG by suffix), atomically."""
    figure = timeline_figure(performance)
    try:
        with atomic_path(out) as tmp:
            figure.savefig(tmp, dpi=110, metadata={"Software": None} if
                           Path(out).suffix == ".png" else None)
    finally:
        plt.close(figure)
    return Path(out)
