"""``soundscape cues [FILE]``: print a cue sheet's music and voice cues as a table."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape import cuesheet
from soundscape.cli._common import FilePath, say_data, table
from soundscape.resources import bundled_dir
from soundscape.text import glossary

__all__ = ["command"]


def _step_label(sheet: cuesheet.CueSheet, step_id: str) -> str:
    if step_id == cuesheet.STOP_LENGTH:
        return "its length"
    return f"{step_id} {sheet.step(step_id).quote[:10]}"


@click.command("cues")
@click.argument("path", required=False, metavar="[CUES]",
                type=FilePath(exists=True, dir_okay=False, path_type=Path))
@click.option("--rite", "rite_id", default=None, metavar="ID",
              help="A bundled rite's sheet instead of a path (see `soundscape rites`).")
def command(path: Path | None, rite_id: str | None) -> None:
    """Print the music and voice cues of a cue sheet (default: the bundled cues/dashe.toml)."""
    if rite_id is not None:
        from soundscape.text.derive.rites import rite

        if path is not None:
            raise click.UsageError(f"give a cue sheet or --rite {rite_id}, not both")
        path = bundled_dir("cues") / f"{rite(rite_id).id}.toml"
    say_data(cues=path)
    sheet = cuesheet.load(path or cuesheet.bundled_path())
    words = glossary.load()
    rows = [["piece", "kind", "performers", "×", "start", "stop", "conditions", "quote"]]
    for cue in sheet.music:
        rows.append([words.name("piece", cue.piece), words.name("kind", cue.kind),
                     ", ".join(cue.performers), str(cue.repeats),
                     _step_label(sheet, cue.start), _step_label(sheet, cue.stop),
                     "、".join(cue.conditions)
                     + (f" [variant {cue.variant}]" if cue.variant else ""), cue.quote])
    click.echo(f"{sheet.path}: {len(sheet.music)} music cues")
    if sheet.music:
        click.echo(table(rows))
    voices = [["voice", "actor", "what", "degree", "step", "as in", "quote"]]
    for v in sheet.voices:
        voices.append([v.id, words.name("actor", v.actor), v.what, v.degree,
                       _step_label(sheet, v.step), v.as_in, v.quote])
    click.echo(f"\n{len(sheet.voices)} voice cues")
    if sheet.voices:
        click.echo(table(voices))
