"""``soundscape sections [CUES]``: the performed sections with their times and music."""

from __future__ import annotations

import json
from pathlib import Path

import click

from soundscape.cli._common import Sequencing, cue_sheet_option, sequencing_options, table

__all__ = ["command"]


def _clock(seconds: float) -> str:
    """h:mm:ss (or m:ss under an hour) of a time on the performance's clock."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def section_rows(performance) -> list[dict]:
    """One dict per performed section: id, name, start, end (s) and the music that begins
    in it (piece ids and titles, in order)."""
    rows = []
    for span in performance.sections:
        music = [m for m in performance.music if span.start <= m.start < span.end]
        rows.append({
            "id": span.id, "name": span.name, "start": round(span.start, 3),
            "end": round(span.end, 3),
            "music": [{"piece": m.piece, "title": _title(performance, m.piece),
                       "cue": m.cue} for m in music]})
    return rows


def _title(performance, piece: str) -> str:
    info = performance.pieces.get(piece)
    return info.title if info is not None else piece


@click.command("sections")
@cue_sheet_option
@sequencing_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def command(cues: Path | None, sequencing: Sequencing, as_json: bool) -> None:
    """The sections of the rite as performed: id, name, start, length and the music that
    begins in each, so you can pick `--from` and `--to` for the other verbs (ids like s18 or
    names like 樂賓 both work there)."""
    performance = sequencing.perform(cues)
    rows = section_rows(performance)
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    lines = [["id", "section", "starts", "length", "music"]]
    for row in rows:
        music = "、".join(m["title"] for m in row["music"]) or "—"
        lines.append([row["id"], row["name"], _clock(row["start"]),
                      _clock(row["end"] - row["start"]), music])
    click.echo(table(lines))
    click.echo(f"{len(rows)} section{'' if len(rows) == 1 else 's'}, "
               f"{_clock(performance.heard_until)} in all "
               f"(seed {sequencing.seed})")
    with_music = [row["id"] for row in rows if row["music"]]
    if with_music:
        click.echo(" ".join(["hear one: soundscape render", *sequencing.again(cues),
                             "--from", with_music[0], "--to", with_music[0]]))
