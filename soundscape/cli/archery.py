"""``soundscape archery``: the shooting rounds of the sequenced rite, as results files."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import (
    FilePath,
    Sequencing,
    counted,
    cue_sheet_option,
    sequencing_options,
)
from soundscape.fileio import replace_set, write_texts
from soundscape.sequence import archery

__all__ = ["command", "structure"]

#: The hidden list of the files the last run wrote (fileio.replace_set).
_KINDS = (".json", ".csv")  # round<N>.json and .csv: nothing else is removed
_RECORD = ".soundscape.rounds"


def structure(performance) -> str:
    """One line on the rite's shooting: each target with its distance from the hall
    (its source's position; the origin is the hall's front edge), the pairs of the
    fullest round, and in the round shot to music the 節 a pair (heard, then one 拾
    each)."""
    targets = sorted({shot.target for shoot in performance.rounds for shot in shoot.shots})
    where = ", ".join(
        f"{t} {-performance.sources[f'archery.target.{t}'].position[1]:.1f} m" for t in targets)
    pairs = max(sum(turn.pair != "sishe" for turn in shoot.turns) for shoot in performance.rounds)
    line = (f"{performance.info.title}: {counted(len(targets), 'target')} ({where}); "
            f"{counted(pairs, 'pair')}; {counted(len(performance.rounds), 'shoot')}")
    music = [shoot for shoot in performance.rounds if shoot.turns and shoot.turns[0].jie]
    if music:
        turn = music[0].turns[0]
        shot = len({s.arrow for s in music[0].shots if s.turn == turn.index})
        line += (f"; round {music[0].number} to music: {len(turn.jie)} 節 a pair "
                 f"({len(turn.jie) - shot} heard, {shot} with one 拾 each)")
    return line


@click.command("archery")
@cue_sheet_option
@sequencing_options
@click.option("-o", "--out", "out_dir", type=FilePath(file_okay=False, path_type=Path),
              default=None, help="Folder for round<N>.json and round<N>.csv (default "
              "output/archery for the 大射, else output/NAME.archery: the --rite's id or the "
              "cue sheet's name).")
def command(cues: Path | None, sequencing: Sequencing, out_dir: Path | None) -> None:
    """Sequence the rite (the bundled 大射 cue sheet, CUES, or --rite xiangshe) and write the
    results of 誘射 and the three rounds, one JSON and one CSV per round; print the rite's
    shooting (targets, pairs, 節 a pair in the round shot to music) and the tallies. The
    same --seed as `soundscape render` gives the rounds you hear there."""
    name = sequencing.output_name(cues)  # another rite's rounds beside the 大射's
    out_dir = out_dir or Path("output/archery" if name == "dashe" else f"output/{name}.archery")
    performance = sequencing.perform(cues)
    if not performance.rounds:
        if (out_dir / _RECORD).is_file():  # an earlier rite's rounds are not this one's
            replace_set(out_dir, [], record=_RECORD, kinds=_KINDS)
        asked = " to ".join(dict.fromkeys(s for s in (sequencing.from_section,
                                                      sequencing.to_section) if s))
        click.echo(f"{performance.info.title}: no shooting round in "
                   f"{f'section {asked}' if asked else 'the text'}")
        return
    click.echo(structure(performance))
    # every round's files written, or none: a full disk left round0's alone
    written = write_texts({path: text for shoot in performance.rounds
                           for path, text in archery.results_files(shoot, out_dir).items()})
    for shoot in performance.rounds:
        shots = shoot.shots
        line = (f"{shoot.number} {shoot.name} at {shoot.start / 60:.1f} min: "
                f"{len(shots)} arrows, {sum(s.called for s in shots)} 獲, "
                f"{sum(s.counted for s in shots)} 釋獲")
        if shoot.right is not None and shoot.left is not None:
            line += (f"; 右 {shoot.right.total} 算, 左 {shoot.left.total} 算: "
                     f"{shoot.announcement}")
        click.echo(line)
    # a round the earlier run wrote and this one did not shoot (another rite) goes
    replace_set(out_dir, [path.name for path in written], record=_RECORD, kinds=_KINDS)
    click.echo(f"results in {out_dir}")
