"""``soundscape derive [TEXT] [-o FILE]``: derive a cue sheet from a text."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape import cuesheet, text
from soundscape.derive import derive

__all__ = ["DEFAULT_OUTPUT", "command"]

# Relative: resolved against the working directory, so an installed package is never written.
DEFAULT_OUTPUT = Path("cues") / "dashe.toml"


@click.command("derive")
@click.argument("source", required=False, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Cue sheet to write (default: cues/dashe.toml under the current folder "
                   "for the bundled text, else the text's name with .toml beside it).")
def command(source: Path | None, output: Path | None) -> None:
    """Derive a cue sheet (sections, steps, layout, music, voices) from TEXT.

    With no TEXT, derive it from the bundled 大射儀 經文 and write cues/dashe.toml
    relative to the current folder (run from a checkout's root, that is the
    committed sheet; never the copy inside an installed package).
    """
    if source is None:
        loaded, text_id, title = text.load_bundled(), "dashe", "大射儀"
        target = output or DEFAULT_OUTPUT
    else:
        loaded, text_id, title = text.load(source), source.stem, source.stem
        target = output or source.with_suffix(".toml")
    sheet = derive(loaded, text_id=text_id, title=title)
    header = (f"Cue sheet derived by `soundscape derive` from {loaded.source}.\n"
              "Format: docs/cuesheet.md. Spans index the text's normalised characters.")
    cuesheet.save(sheet, target, header=header)
    click.echo(f"{target}: {len(sheet.sections)} sections, {len(sheet.steps)} steps, "
               f"{len(sheet.layout)} layout entries, {len(sheet.music)} music cues, "
               f"{len(sheet.voices)} voice cues")
    if not sheet.music:
        click.echo(f"note: no music found in {loaded.source}: none of the formulas "
                   "(奏X, 歌X, 管X, 笙入, 間歌, 合樂, 無算樂, 入驁) occurs; the sheet has "
                   "no music cues", err=True)
