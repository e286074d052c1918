"""``soundscape score``: MusicXML of a piece, or of the performed rite.

``soundscape score PIECE`` writes one piece (律, 工尺, cents, lyrics);
``soundscape score --performance [CUES]`` writes the sequenced rite, a part per
sounding instrument with rehearsal marks at the ritual markers.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from soundscape.cli._common import (
    FilePath,
    Sequencing,
    counted,
    sequencing_options,
    split_folder,
    stage,
)
from soundscape.errors import RenderError
from soundscape.music.tuning import Tuning
from soundscape.output import score
from soundscape.output.midi import music_only

__all__ = ["command"]

_ENDINGS = (".musicxml", ".xml", ".mxl")
_UNSEQUENCED = Sequencing(None, None, 0, None, None, None, None, None)


@click.command("score")
@click.argument("target", metavar="PIECE | [CUES]", required=False)
@click.option("--performance", is_flag=True,
              help="Write the sequenced rite (CUES, default: the bundled 大射 sheet, or a "
              "Performance JSON saved by `soundscape sequence`) instead of a piece. The whole "
              "rite takes ~3 minutes and 1.2 GB (music21 lays out every staff's bars) and "
              "is too tall for A4: use --from/--to for a section, or --split section.")
@click.option("--cues", "cues_file", type=FilePath(exists=True, dir_okay=False, path_type=Path),
              default=None, metavar="FILE",
              help="With --performance: the cue sheet (the same as the CUES argument).")
@sequencing_options(saved=False, tuned=True)
@click.option("-o", "--out", "output", type=FilePath(path_type=Path), default=None,
              help="MusicXML file (default output/PIECE.musicxml, or with --performance "
              "output/NAME.musicxml, NAME the rite's: see `render -o`); ending .mxl: "
              "compressed MusicXML; with --split, the folder.")
@click.option("--split", type=click.Choice(score.SPLITS), default=None,
              help="With --performance: a full score per piece played (NN-CUE.musicxml, its "
              "notes only) or per section that plays music (SECTION.musicxml), each with its "
              "own staves, or a part per staff of the full score for its players to play "
              "from (NN-SOURCE.musicxml), into the folder -o (default output/NAME.pieces, "
              "output/NAME.sections or output/NAME.parts, beside `midi --split`'s files).")
@click.option("--cents-in-alter", is_flag=True,
              help="Also write each note's cents as a decimal <alter> (MuseScore 4 and Dorico "
              "read it as tuning; MuseScore 3 rejects it). The cents are always in lyric line 4.")
def command(target: str | None, performance: bool, cues_file: Path | None,
            sequencing: Sequencing, output: Path | None, split: str | None,
            cents_in_alter: bool) -> None:
    """Write PIECE (an id like luming or a title like 鹿鳴) as MusicXML, or with
    --performance the rite; the options from --from to --wusuan-seconds shape the rite.

    \b
    soundscape score 鹿鳴
    soundscape score --performance --from s18 --to s18 -o output/yuebin.musicxml
    soundscape score --performance --split section
    soundscape score --performance output/dashe.performance.json --from 樂賓 --to 樂賓
    """
    if cues_file is not None:
        if not performance or (target is not None and Path(target) != cues_file):
            raise click.UsageError("--cues FILE is the rite's cue sheet: give it with "
                                   "--performance, and not besides a CUES argument")
        target = str(cues_file)
    tuning = sequencing.tuning()
    if split is not None and not performance:
        raise click.UsageError("--split writes the rite's scores: give it with --performance")
    if split is None and output is not None and (output.suffix.lower() not in _ENDINGS
                                                 or output.is_dir()):
        raise RenderError(f"--out {str(output)!r}: ending {output.suffix!r} is not a score; "
                          f"give an --out ending {', '.join(_ENDINGS)} (.mxl: compressed)")
    if performance:
        path = _performance(target, sequencing, output, tuning, cents_in_alter, split)
    else:
        path = _piece(target, sequencing, output, tuning, cents_in_alter)
    click.echo(f"wrote {path}")


def _piece(piece: str | None, sequencing: Sequencing, output: Path | None,
           tuning: Tuning, cents_in_alter: bool) -> Path:
    from soundscape.music import repertoire

    if piece is None:
        raise click.UsageError("give a PIECE (e.g. luming), or --performance for the rite")
    if replace(sequencing, temperament=None, huangzhong=None) != _UNSEQUENCED:  # tuning: ok
        raise click.UsageError("--from, --to, --seed, --durations, --reading and "
                               "--wusuan-seconds shape the rite: use them with --performance")
    found = repertoire.load_piece(repertoire.piece_id(piece))
    return score.write_piece_score(found, output or Path(f"output/{found.id}.musicxml"),
                                   tuning=tuning, cents_in_alter=cents_in_alter)


def _performance(target: str | None, sequencing: Sequencing, output: Path | None,
                 tuning: Tuning, cents_in_alter: bool, split: str | None) -> Path | str:
    if target is not None and not Path(target).is_file():
        raise click.BadParameter(f"cue sheet {target!r} is not a file", param_hint="CUES")
    if target is not None and target.endswith(".json"):  # a saved Performance
        sequencing = replace(sequencing, performance=Path(target))
        target = None
    rite = sequencing.perform(Path(target) if target else None, tuning=tuning)
    played = music_only(rite).events  # what the score holds: no footsteps, beds or words
    if not played:
        asked = " to ".join(dict.fromkeys(s for s in (sequencing.from_section,
                                                      sequencing.to_section) if s))
        raise RenderError(f"{f'section {asked}' if asked else rite.info.title}: no music is "
                          "played there, so there is nothing to score; `soundscape sections` "
                          "lists the music of each section")
    players = counted(len({e.source for e in played}), "player")
    name = sequencing.output_name(Path(target) if target else None)
    if split is not None:
        folder = split_folder(output, Path(f"output/{name}.{split}s"))
        with stage(f"laying out a score per {split} ({players}, "
                   f"{counted(len(played), 'note')})"):
            paths = score.write_split_scores(rite, folder, by=split,
                                             cents_in_alter=cents_in_alter, notice=_notice)
        return f"{counted(len(paths), 'score')} into {folder} (one per {split})"
    with stage(f"laying out the score ({players}, {counted(len(played), 'note')})"):
        return score.write_performance_score(
            rite, output or Path(f"output/{name}.musicxml"), cents_in_alter=cents_in_alter,
            notice=_notice)


def _notice(said: str) -> None:
    click.echo(f"note: {said}", err=True)
