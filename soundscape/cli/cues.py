"""``soundscape cues [FILE]``: print a cue sheet's music and voice cues as a table."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import click

from soundscape import cuesheet
from soundscape.text import glossary

__all__ = ["command"]


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, width: int) -> str:
    return s + " " * max(0, width - _width(s))


def _cell(s: str) -> str:
    """One line: runs of whitespace (newlines in quotes included) become one space."""
    return " ".join(s.split())


def _table(rows: list[list[str]]) -> str:
    rows = [[_cell(c) for c in r] for r in rows]
    widths = [max(_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(_pad(c, w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


def _step_label(sheet: cuesheet.CueSheet, step_id: str) -> str:
    if step_id == cuesheet.STOP_LENGTH:
        return "its length"
    return f"{step_id} {sheet.step(step_id).quote[:10]}"


@click.command("cues")
@click.argument("path", required=False, type=click.Path(path_type=Path))
def command(path: Path | None) -> None:
    """Print the music and voice cues of a cue sheet (default: the bundled cues/dashe.toml)."""
    sheet = cuesheet.load(path or cuesheet.bundled_path())
    words = glossary.load()
    rows = [["piece", "kind", "performers", "×", "start", "stop", "conditions", "quote"]]
    for cue in sheet.music:
        rows.append([words.name("piece", cue.piece), words.name("kind", cue.kind),
                     ", ".join(cue.performers), str(cue.repeats),
                     _step_label(sheet, cue.start), _step_label(sheet, cue.stop),
                     "、".join(cue.conditions), cue.quote])
    click.echo(f"{sheet.path}: {len(sheet.music)} music cues")
    if sheet.music:
        click.echo(_table(rows))
    voices = [["voice", "actor", "what", "degree", "step", "as in", "quote"]]
    for v in sheet.voices:
        voices.append([v.id, words.name("actor", v.actor), v.what, v.degree,
                       _step_label(sheet, v.step), v.as_in, v.quote])
    click.echo(f"\n{len(sheet.voices)} voice cues")
    if sheet.voices:
        click.echo(_table(voices))
