"""``soundscape sequence``: the timed Performance (JSON) and a timeline picture (PNG)."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import FilePath, Sequencing, cue_sheet_option, sequencing_options
from soundscape.errors import SoundscapeError
from soundscape.fileio import atomic_paths
from soundscape.output.timeline_plot import PICTURES, write_timeline

__all__ = ["command"]


@click.command("sequence")
@cue_sheet_option
@sequencing_options(tuned=True)
@click.option("-o", "--out", type=FilePath(dir_okay=False, path_type=Path), default=None,
              help="Where the Performance JSON goes (default output/NAME.performance.json: "
                   "the --rite's id, the cue sheet's file name, else dashe).")
@click.option("--plot", type=FilePath(dir_okay=False, path_type=Path), default=None,
              help="Where the timeline picture goes, PNG or SVG (default: beside -o, "
                   "named as it is: -o s18.json gives s18.timeline.png; without -o "
                   "output/NAME.timeline.png).")
def command(cues: Path | None, sequencing: Sequencing, out: Path | None,
            plot: Path | None) -> None:
    """Sequence the rite (the bundled 大射 cue sheet, or CUES) into one timed Performance:
    every ritual step on one clock, music timed to the rite, the shooting rounds."""
    name = sequencing.output_name(cues)
    # the picture beside the JSON, named as it is (-o s18.json: s18.timeline.png, not the
    # whole rite's picture written over)
    plot = plot or (out.with_name(f"{out.name.removesuffix('.json').removesuffix('.performance')}"
                                  ".timeline.png") if out else
                    Path(f"output/{name}.timeline.png"))
    out = out or Path(f"output/{name}.performance.json")
    if plot.suffix.lower() not in PICTURES:  # refused before the (slow) sequencing
        raise SoundscapeError(f"--plot {str(plot)!r}: ending {plot.suffix!r} is no picture "
                              f"format written; accepted: {', '.join(PICTURES)}")
    if plot.resolve() == out.resolve():  # the picture was written over the Performance
        raise SoundscapeError(f"--plot and -o are one file, {str(out)!r}; give each its own")
    if out.suffix.lower() != ".json":  # `-o CUES` wrote the JSON over the cue sheet
        raise SoundscapeError(f"-o {str(out)!r}: ending {out.suffix!r} is not the Performance's; "
                              "accepted: a .json file")
    inputs = [p for p in (cues, sequencing.durations, sequencing.performance) if p is not None]
    if any(p.resolve() == out.resolve() for p in inputs):
        raise SoundscapeError(f"-o {str(out)!r} is an input of this run; give the Performance "
                              "a file of its own")
    performance = sequencing.perform(cues)
    with atomic_paths(out, plot) as (out_part, plot_part):  # both written, or neither
        performance.save_json(out_part)
        write_timeline(performance, plot_part)
    click.echo(f"{performance.info.title}: {performance.duration / 60:.1f} min, "
               f"{len(performance.events)} sounds from {len(performance.sources)} sources, "
               f"{len(performance.markers)} markers")
    for music in performance.music:
        piece = performance.pieces.get(music.piece)
        if piece is not None and music.end > 0:
            click.echo(f"  {music.start / 60:6.1f}–{music.end / 60:6.1f} min  "
                       f"{piece.title} ({music.bound}-bound, {piece.basis})")
    for shoot in performance.rounds:
        words = shoot.announcement or "not counted"
        click.echo(f"  round {shoot.number} at {shoot.start / 60:.1f} min: {words}")
    click.echo(f"wrote {out} and {plot}")
