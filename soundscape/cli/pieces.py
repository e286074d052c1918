"""``soundscape pieces``: the repertoire, each piece with its basis."""

from __future__ import annotations

import textwrap

import click

from soundscape.cli._common import table
from soundscape.music.repertoire import list_pieces, load_piece, piece_id

__all__ = ["command"]


@click.command("pieces")
@click.argument("piece", required=False, metavar="[PIECE]")
@click.option("--notes", "show_notes", is_flag=True, help="With PIECE: print every phrase.")
def command(piece: str | None, show_notes: bool) -> None:
    """List the repertoire with the basis of each piece, or describe PIECE (an id like
    luming or a title like 鹿鳴)."""
    if piece is None:
        rows = [["id", "title", "basis", "mode", "notes", "ensemble"]]
        for p in (load_piece(ident) for ident in list_pieces()):
            rows.append([p.id, p.title, p.basis, p.mode, str(len(p.notes)),
                         ", ".join(p.ensemble)])
        click.echo(table(rows))
        return
    p = load_piece(piece_id(piece))
    click.echo(f"{p.title} ({p.id}, {p.roman})")
    click.echo(f"basis: {p.basis}")
    click.echo(textwrap.fill(p.basis_note, 100, initial_indent="  ", subsequent_indent="  "))
    click.echo(f"mode: {p.mode}   tempo: {p.tempo_bpm:g} bpm   "
               f"stanzas: {' + '.join(str(len(s)) for s in p.stanzas)} notes")
    click.echo(f"終: {p.zhong.count} × {p.zhong.reading} (readings: {', '.join(p.zhong.readings)})")
    if p.jie is not None:
        click.echo(f"節: {p.zhong.count}, {p.jie.heard} heard; drum pattern "
                   f"{p.jie.pattern.name} ({p.jie.pattern.id}) {p.jie.pattern.strokes}")
    for part in p.parts:
        click.echo(f"part {part.id}: {part.role} on {part.instrument} ({part.articulation})")
    if show_notes:
        for label, idx in zip(p.stanza_labels, p.stanza_phrases, strict=True):
            click.echo(label)
            for i in idx:
                phrase = p.phrases[i]
                words = "".join(n.lyric or "" for n in phrase)
                click.echo(f"  {words:<8} {' '.join(n.name for n in phrase)}")
