"""``soundscape archery``: the shooting rounds of the sequenced rite, as results files."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import Sequencing, sequencing_options
from soundscape.sequence import archery

__all__ = ["command"]


@click.command("archery")
@click.argument("cues", required=False, type=click.Path(exists=True, dir_okay=False,
                                                        path_type=Path))
@sequencing_options
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("output/archery"), show_default=True,
              help="Folder for round<N>.json and round<N>.csv.")
def command(cues: Path | None, sequencing: Sequencing, out_dir: Path) -> None:
    """Sequence the rite (the bundled 大射 cue sheet, or CUES) and write the results of
    誘射 and the three rounds, one JSON and one CSV per round; print the tallies. The same
    --seed as `soundscape render` gives the rounds you hear there."""
    performance = sequencing.perform(cues)
    for shoot in performance.rounds:
        archery.write_results(shoot, out_dir)
        shots = shoot.shots
        line = (f"{shoot.number} {shoot.name} at {shoot.start / 60:.1f} min: "
                f"{len(shots)} arrows, {sum(s.called for s in shots)} 獲, "
                f"{sum(s.counted for s in shots)} 釋獲")
        if shoot.right is not None and shoot.left is not None:
            line += (f"; 右 {shoot.right.total} 算, 左 {shoot.left.total} 算: "
                     f"{shoot.announcement}")
        click.echo(line)
    click.echo(f"results in {out_dir}")
