"""``soundscape rites``: the bundled rites, their texts, cue sheets and variants."""

from __future__ import annotations

import click

from soundscape import cuesheet
from soundscape.cli._common import counted, table
from soundscape.resources import bundled_dir
from soundscape.text.derive import rites

__all__ = ["command"]


@click.command("rites")
def command() -> None:
    """The bundled rites of the Yili with music: id, title, text, cue sheet, music, variants.

    Hear one with `soundscape render --rite ID` (every verb that sequences takes
    --rite ID, and --variant NAME for the music the rite's 記 names).
    """
    rows = [["id", "rite", "chapter", "host", "text", "cue sheet", "variants (記)"]]
    for rite_id in rites.rite_ids():
        rite = rites.rite(rite_id)
        path = bundled_dir("cues") / f"{rite_id}.toml"
        sheet = cuesheet.load(path)
        main = [m for m in sheet.music if not m.variant]
        performed = [s for s in sheet.sections if s.part != "記"]
        variants = "; ".join(cuesheet.variants(sheet)) or "—"
        # as `sections` and `cues` count them: the 記 and its variants said apart
        ji = [f"{len(sheet.sections) - len(performed)} of the 記"] if len(performed) < len(
            sheet.sections) else []
        ji += [counted(len(sheet.music) - len(main), "variant cue")] if len(main) < len(
            sheet.music) else []
        rows.append([rite_id, rite.title, rite.chapter, rite.rank, rite.text.name,
                     f"{len(performed)} sections, {len(main)} music cues"
                     + (f" (+ {', '.join(ji)})" if ji else ""), variants])
    click.echo(table(rows))
