"""``soundscape show``: play a kit programme's cues in real time, as OSC to a show controller.

Reads ``<kit>/<programme>.cues.json`` (written by ``soundscape kit``) and sends each
cue's QLab message ``/cue/{number}/start`` over UDP to ``--osc HOST:PORT`` when the wall
clock reaches its time; start the programme's audio at the same moment.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["command"]


@click.command("show")
@click.option("--osc", "target", required=True, help="Where to send: HOST:PORT (QLab: 53000).")
@click.option("--programme", default="rite", show_default=True, help="Programme id.")
@click.option("--kit", "kit_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("output/kit"), show_default=True, help="Folder of the kit.")
@click.option("--start", "start_at", type=click.FloatRange(min=0), default=0.0,
              show_default=True, help="Start this many seconds into the programme.")
@click.option("--for", "stop_after", type=click.FloatRange(min=0), default=None,
              help="Stop after this many seconds (default: the whole programme).")
def command(target: str, programme: str, kit_dir: Path, start_at: float,
            stop_after: float | None) -> None:
    """Play a programme's cues against the wall clock, as QLab OSC messages."""
    from soundscape import validate
    from soundscape.kit import KitError
    from soundscape.kit.player import load_cues, osc_sender, parse_target, play

    validate.ident(programme, key="--programme", where="soundscape show", error=KitError)
    host, port = parse_target(target)
    cues = load_cues(kit_dir / f"{programme}.cues.json")
    click.echo(f"sending {len(cues)} cues of {programme} to {host}:{port} (OSC over UDP)",
               err=True)
    sent = play(cues, osc_sender(host, port), start_at=start_at, stop_after=stop_after)
    click.echo(f"sent {sent} cues")
