"""``soundscape sequence``: the timed Performance (JSON) and a timeline picture (PNG)."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.output.timeline_plot import write_timeline
from soundscape.sequence.planner import SequenceOptions, perform_from_file
from soundscape.sequence.timeline import Durations

__all__ = ["command"]


@click.command("sequence")
@click.argument("cues", required=False, type=click.Path(exists=True, dir_okay=False,
                                                        path_type=Path))
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the archery simulation; same seed, same performance.")
@click.option("--from", "from_section", metavar="SECTION",
              help="First section (id like s18 or name like 樂賓).")
@click.option("--to", "to_section", metavar="SECTION", help="Last section.")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("output/dashe.performance.json"), show_default=True,
              help="Where the Performance JSON goes.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("output/dashe.timeline.png"), show_default=True,
              help="Where the timeline picture goes (PNG or SVG).")
@click.option("--durations", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Your own table of action durations (see soundscape/data/durations.toml).")
@click.option("--reading", type=click.Choice(["song", "stanza"]),
              help="三終 as three whole songs (鄭注, default) or the three stanzas once.")
@click.option("--wusuan-seconds", type=click.FloatRange(min=1.0),
              help="How long 無算樂 plays, seconds.")
def command(cues: Path | None, seed: int, from_section: str | None, to_section: str | None,
            out: Path, plot: Path, durations: Path | None, reading: str | None,
            wusuan_seconds: float | None) -> None:
    """Sequence the rite (the bundled 大射 cue sheet, or CUES) into one timed Performance:
    every ritual step on one clock, music timed to the rite, the shooting rounds."""
    options = SequenceOptions(durations=Durations.load(durations), reading=reading,
                              wusuan_seconds=wusuan_seconds)
    performance = perform_from_file(cues, seed=seed, from_section=from_section,
                                    to_section=to_section, options=options)
    performance.save_json(out)
    write_timeline(performance, plot)
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
