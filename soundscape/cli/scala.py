"""``soundscape scala``: the tuning as Scala ``.scl`` and ``.kbm`` files."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import FilePath
from soundscape.music.tuning import Tuning
from soundscape.output import scala

__all__ = ["command"]


@click.command("scala")
@click.option("-o", "--out", "output", type=FilePath(dir_okay=False, path_type=Path),
              default=Path("output/sanfen_sunyi"), show_default=True,
              help="Path stem: writes STEM.scl and STEM.kbm.")
@click.option("--huangzhong", default="convention", show_default=True,
              help="黃鍾 in Hz or a preset name (convention, zeng, qing).")
@click.option("--equal", is_flag=True, help="Twelve equal semitones instead of 三分損益.")
def command(output: Path, huangzhong: str, equal: bool) -> None:
    """Write the 三分損益 tuning (or equal temperament) for synths that read Scala files."""
    try:
        reference: float | str = float(huangzhong)
    except ValueError:
        reference = huangzhong
    tuning = Tuning.equal(reference) if equal else Tuning.sanfen_sunyi(reference)
    for path in scala.write_scala(tuning, output):
        click.echo(f"wrote {path}")
