"""``soundscape score``: a piece as MusicXML, with 律, 工尺, cents and lyrics."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape import score
from soundscape.tuning import Tuning

__all__ = ["command"]


@click.command("score")
@click.argument("piece")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="MusicXML file (default output/PIECE.musicxml).")
@click.option("--huangzhong", default="convention", show_default=True,
              help="黃鍾 in Hz or a preset name (convention, zeng, qing).")
def command(piece: str, output: Path | None, huangzhong: str) -> None:
    """Write PIECE (e.g. luming) as MusicXML."""
    from soundscape import repertoire

    try:
        reference: float | str = float(huangzhong)
    except ValueError:
        reference = huangzhong
    found = repertoire.load_piece(piece)
    path = score.write_piece_score(found, output or Path(f"output/{piece}.musicxml"),
                                   tuning=Tuning.sanfen_sunyi(reference))
    click.echo(f"wrote {path}")
