"""A picture of a Performance: sections along time, music spans by piece, the shoots.

A reader of the Performance like any other: it draws what the sequencer
decided (its sections, music and rounds) and what sounds (events), with a
close view of the third round where the arrows leave on the drum 節 of 貍首
(when the performance holds it). Section names stand upright above the time
axis, spread apart where sections are short and tied to their section by a thin
line; the legend stands outside the axes so it covers nothing.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from soundscape.errors import SoundscapeError
from soundscape.fileio import atomic_path
from soundscape.output.fonts import families
from soundscape.performance import Performance

__all__ = ["PICTURES", "spread", "timeline_figure", "write_timeline"]

#: The picture formats written, by file ending.
PICTURES = (".png", ".svg")

_BASIS_COLOUR = {"surviving": "#2e7d32", "reconstruction": "#e07b00"}
_ROUND_COLOUR = "#6d4c41"
_ZOOM_SECONDS = 240.0
_LABEL_GAP = 0.0095  # the least distance between two section names, as a share of the axis
_NAMES_BOTTOM = 3.55  # the section names hang from here up (data units of the whole view)


def timeline_figure(performance: Performance) -> Figure:
    """The rite (or the cut) on one axis, and a close view of the start of round three
    when the performance holds a round shot to music."""
    rounds = [r for r in performance.rounds if r.jie]
    with matplotlib.rc_context({"font.family": list(families()), "svg.hashsalt": "soundscape",
                                "axes.unicode_minus": False}):
        figure = Figure(figsize=(18, 10 if rounds else 6.5), layout="constrained")
        FigureCanvasAgg(figure)
        if rounds:
            whole, zoom = figure.subplots(2, 1, height_ratios=[3, 1.6])
            _draw_round(zoom, performance, rounds[0])
        else:
            whole = figure.subplots()
        _draw_whole(whole, performance)
        figure.suptitle(_title(performance), fontsize=14)
    return figure


def _title(performance: Performance) -> str:
    info = performance.info
    span = ""
    if performance.sections and info.offset > 0:
        first, last = performance.sections[0], performance.sections[-1]
        span = f", {first.id} {_short(first.name)}"
        span += f" to {last.id} {_short(last.name)}" if last is not first else ""
    return (f"{info.title}{span} — {performance.duration / 60:.0f} min, seed {info.seed}")


def _draw_whole(ax: Axes, performance: Performance) -> None:
    minutes = 1 / 60
    end_minute = max(performance.duration, 1.0) * minutes
    ax.set_xlim(0, end_minute)
    ax.set_ylim(0.3, 5.4)
    _sections(ax, performance, end_minute)
    pieces = performance.pieces
    rows: dict[str, int] = {}
    step = 1.3 / max(1, len({m.piece for m in performance.music}) - 1)
    for music in performance.music:
        first = music.piece not in rows
        y = 3.1 - step * rows.setdefault(music.piece, len(rows))
        basis = pieces[music.piece].basis if music.piece in pieces else "reconstruction"
        start, end = music.start * minutes, music.end * minutes
        ax.barh(y, end - start, left=start, height=0.14, color=_BASIS_COLOUR[basis])
        if not first:  # a piece played again stands on its row, named once
            continue
        title = pieces[music.piece].title if music.piece in pieces else music.piece
        late = start > 0.8 * end_minute  # near the right edge: write leftwards from the end
        ax.text(end if late else start, y + 0.08, f"{title} ({music.bound}-bound)",
                fontsize=8, ha="right" if late else "left", va="bottom")
    for index, shoot in enumerate(performance.rounds):
        start, end = shoot.start * minutes, shoot.end * minutes
        ax.barh(1.2, end - start, left=start, height=0.3, color=_ROUND_COLOUR)
        ax.text(start, 1.38 + 0.2 * (index % 2), f"{shoot.name} (round {shoot.number})",
                fontsize=8)  # heights alternate: 誘射 and the first round stand close
    releases = [e.time * minutes for e in performance.events
                if performance.sources[e.source].instrument == "bow"]
    if releases:
        ax.vlines(releases, 0.5, 0.8, color="black", linewidth=0.3)
        ax.text(0.003, 0.12, "arrow releases", fontsize=8, transform=ax.transAxes)
    ax.set_yticks([])
    ax.set_xlabel(_time_axis(performance))
    _legend(ax, performance)


def _legend(ax: Axes, performance: Performance) -> None:
    """What the colours mean, for the kinds the picture shows, outside the axes."""
    bases = {performance.pieces[m.piece].basis if m.piece in performance.pieces
             else "reconstruction" for m in performance.music}
    shown = [(_BASIS_COLOUR[b], f"{'surviving' if b == 'surviving' else 'reconstructed'} melody")
             for b in _BASIS_COLOUR if b in bases]
    if performance.rounds:
        shown.append((_ROUND_COLOUR, "shooting round"))
    if shown:
        ax.legend([Rectangle((0, 0), 1, 1, color=c) for c, _ in shown], [t for _, t in shown],
                  loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=9, frameon=False)


def _time_axis(performance: Performance) -> str:
    """What the minutes count from: the rite's start, or for a cut, where the cut starts."""
    if performance.info.offset > 0 and performance.sections:
        first = performance.sections[0]
        return (f"minutes from the start of {first.id} {_short(first.name)} "
                f"({performance.info.offset / 60:.1f} min into the rite)")
    return "minutes from the start of the rite"


def _sections(ax: Axes, performance: Performance, end_minute: float) -> None:
    """Alternating bands for the sections, and their names upright above, spread apart."""
    spans = [(s.start / 60, s.end / 60, s) for s in performance.sections if s.end > s.start]
    for index, (start, end, _) in enumerate(spans):
        ax.axvspan(start, end, ymin=0, ymax=1, color="#eceff1" if index % 2 else "#f7f9fa",
                   zorder=0)
    centres = [(start + end) / 2 for start, end, _ in spans]
    placed = spread(centres, gap=_LABEL_GAP * end_minute, low=0.0, high=end_minute)
    for centre, x, (_, _, section) in zip(centres, placed, spans, strict=True):
        ax.plot([centre, centre, x], [3.25, 3.35, _NAMES_BOTTOM - 0.05], color="0.6", lw=0.5)
        ax.text(x, _NAMES_BOTTOM, f"{section.id} {_short(section.name)}", rotation=90, ha="center",
                va="bottom", fontsize=7.5)


def spread(centres: list[float], *, gap: float, low: float, high: float) -> list[float]:
    """Positions as near ``centres`` (sorted) as can be with at least ``gap`` between
    neighbours, all within [low, high]: pushed right past crowding, then back from the end."""
    placed: list[float] = []
    for centre in centres:
        placed.append(max(centre, low, placed[-1] + gap if placed else low))
    limit = high
    for index in range(len(placed) - 1, -1, -1):
        placed[index] = min(placed[index], limit)
        limit = placed[index] - gap
    return placed


def _draw_round(ax: Axes, performance: Performance, shoot) -> None:
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
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=9, frameon=False)


def write_timeline(performance: Performance, out: str | Path) -> Path:
    """Draw the timeline to ``out`` (PNG or SVG by suffix, :data:`PICTURES`), atomically."""
    kind = Path(out).suffix.lower()
    if kind not in PICTURES:
        raise SoundscapeError(f"{out}: ending {Path(out).suffix!r} is no picture format "
                              f"written; accepted: {', '.join(PICTURES)}")
    figure = timeline_figure(performance)
    # no date, and ids from a fixed salt: the same Performance gives the same bytes
    with (matplotlib.rc_context({"svg.hashsalt": "soundscape-timeline"}),
          atomic_path(out) as tmp):
        figure.savefig(tmp, dpi=110, format=kind[1:],
                       metadata={"Software": None} if kind == ".png" else {"Date": None})
    return Path(out)


def _short(name: str, most: int = 24) -> str:
    """A section's name as drawn: its first ``most`` characters (a saved Performance's names
    may run to 100 000, and laying them out took minutes)."""
    return name if len(name) <= most else f"{name[:most]}…"
