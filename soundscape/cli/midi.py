"""``soundscape midi``: the rite (or part of it) as a type-1 MIDI file."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import SEATS_HELP, Sequencing, place_id, sequencing_options
from soundscape.output import midi

__all__ = ["command"]


@click.command("midi")
@click.argument("cues", required=False, type=click.Path(exists=True, dir_okay=False,
                                                        path_type=Path))
@click.option("-o", "--out", "output", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("output/dashe.mid"), show_default=True, help="MIDI file to write.")
@click.option("--tuning", "tuning_mode", type=click.Choice(midi.TUNING_MODES), default="mts",
              show_default=True, help="mts: MIDI Tuning Standard; mpe: pitch bend per note; "
              "12tet: nearest key (rehearsal).")
@click.option("--listener", "place", default="gong_wei", show_default=True,
              help=f"Where the listener sits (pan and volume from there, as `soundscape "
              f"render` hears it): {SEATS_HELP}; none: no pan or volume.")
@sequencing_options
def command(cues: Path | None, output: Path, tuning_mode: str, place: str,
            sequencing: Sequencing) -> None:
    """Write the rite's MIDI: markers, a track per placed instrument, the historical tuning."""
    from soundscape import site
    from soundscape.site import listeners as spatial

    courtyard = site.load_site()
    listener = None
    if place != "none":
        # ear height and facing (the duke faces west)
        seat = courtyard.listener(place_id(courtyard, place))
        listener = spatial.Listener(seat.position, seat.facing)
    performance = sequencing.perform(cues, site=courtyard)
    path = midi.write_midi(performance, output, listener=listener, tuning_mode=tuning_mode)
    click.echo(f"wrote {path} ({len(performance.events)} notes, {tuning_mode})")
