"""``soundscape score``: MusicXML of a piece, or of the performed rite.

``soundscape score PIECE`` writes one piece (律, 工尺, cents, lyrics);
``soundscape score --performance [CUES]`` writes the sequenced rite, a part per
sounding instrument with rehearsal marks at the ritual markers.
"""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.music.tuning import Tuning
from soundscape.output import score

__all__ = ["command"]


@click.command("score")
@click.argument("target", metavar="PIECE | [CUES]", required=False)
@click.option("--performance", is_flag=True,
              help="Write the sequenced rite (CUES, default: the bundled 大射 sheet) instead "
              "of a piece. The whole rite takes ~11 minutes and 1.5 GB (music21 lays out "
              "every part's bars): use --from/--to for a section.")
@click.option("--from", "from_section", default=None,
              help="With --performance: first section (id like s18 or name like 樂賓).")
@click.option("--to", "to_section", default=None,
              help="With --performance: last section (id or name).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="With --performance: the sequencer's seed.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="MusicXML file (default output/PIECE.musicxml, or output/dashe.musicxml "
              "with --performance).")
@click.option("--huangzhong", default="convention", show_default=True,
              help="黃鍾 in Hz or a preset name (convention, zeng, qing).")
def command(target: str | None, performance: bool, from_section: str | None,
            to_section: str | None, seed: int, output: Path | None, huangzhong: str) -> None:
    """Write PIECE (e.g. luming) as MusicXML, or with --performance the rite.

    \b
    soundscape score luming
    soundscape score --performance --from s18 --to s18 -o output/yuebin.musicxml
    """
    try:
        reference: float | str = float(huangzhong)
    except ValueError:
        reference = huangzhong
    tuning = Tuning.sanfen_sunyi(reference)
    if performance:
        path = _performance(target, from_section, to_section, seed, output, tuning)
    else:
        path = _piece(target, from_section, to_section, output, tuning)
    click.echo(f"wrote {path}")


def _piece(piece: str | None, from_section: str | None, to_section: str | None,
           output: Path | None, tuning: Tuning) -> Path:
    from soundscape.music import repertoire

    if piece is None:
        raise click.UsageError("give a PIECE (e.g. luming), or --performance for the rite")
    if from_section or to_section:
        raise click.UsageError("--from/--to cut the rite: use them with --performance")
    found = repertoire.load_piece(piece)
    return score.write_piece_score(found, output or Path(f"output/{piece}.musicxml"),
                                   tuning=tuning)


def _performance(cues: str | None, from_section: str | None, to_section: str | None,
                 seed: int, output: Path | None, tuning: Tuning) -> Path:
    from soundscape import sequence

    if cues is not None and not Path(cues).is_file():
        raise click.BadParameter(f"cue sheet {cues!r} is not a file", param_hint="CUES")
    rite = sequence.perform_from_file(cues, seed=seed, from_section=from_section,
                                      to_section=to_section, tuning=tuning)
    return score.write_performance_score(rite, output or Path("output/dashe.musicxml"))
