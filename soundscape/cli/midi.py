"""``soundscape midi``: the rite (or part of it) as a type-1 MIDI file."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import (
    SEATS_HELP,
    FilePath,
    Sequencing,
    counted,
    cue_sheet_option,
    sequencing_options,
    split_folder,
)
from soundscape.errors import RenderError
from soundscape.output import midi

__all__ = ["command"]

_ENDINGS = (".mid", ".midi")


@click.command("midi")
@cue_sheet_option
@click.option("-o", "--out", "output", type=FilePath(path_type=Path), default=None,
              help="MIDI file to write, ending .mid or .midi (default output/NAME.mid: the "
              "--rite's id, the cue sheet's file name, else dashe); with --split, the folder "
              "(default output/NAME.pieces or output/NAME.sections).")
@click.option("--split", type=click.Choice(midi.SPLITS), default=None,
              help="One file per piece played (NN-CUE.mid in playing order, its notes only) "
              "or per section (SECTION.mid, from its start to the next section's), each on "
              "its own clock.")
@click.option("--grid", type=click.Choice([str(g) for g in midi.GRIDS]), default=None,
              help="For notation: move every note's start and end to the nearest 1/N of the "
              "beat (MuseScore then keeps the tempo map; times move by up to half a step). "
              "Default: times exact.")
@click.option("--tuning", "tuning_mode", type=click.Choice(midi.TUNING_MODES), default="mts",
              show_default=True, help="mts: MIDI Tuning Standard; mpe: pitch bend per note, "
              "over several ports (for DAWs: players that ignore ports play it out of tune); "
              "12tet: nearest key (rehearsal).")
@click.option("--ports", type=click.Choice(midi.PORTS), default=None,
              help="one (default; not with --tuning mpe): a single MIDI port, channels "
              "shared by GM program, so every track sounds with its own instrument in "
              "players that ignore ports (FluidSynth); many (default with --tuning mpe): "
              "every track its own channel, over several ports (for DAWs).")
@click.option("--listener", "place", default="gong_wei", show_default=True,
              help=f"Where the listener sits (pan and volume from there, as `soundscape "
              f"render` hears it): {SEATS_HELP}; none: no pan or volume.")
@sequencing_options(tuned=True)
def command(cues: Path | None, output: Path | None, split: str | None, grid: str | None,
            tuning_mode: str, ports: str | None, place: str, sequencing: Sequencing) -> None:
    """Write the rite's MIDI: markers, a track per placed instrument, the historical tuning."""
    if tuning_mode == "mpe" and ports == "one":
        raise click.UsageError("--tuning mpe gives each sounding bend a channel of its own, "
                               "over several ports: it cannot be --ports one (for players "
                               "that ignore ports, FluidSynth among them, use --tuning mts)")
    ports = ports or ("many" if tuning_mode == "mpe" else "one")
    name = sequencing.output_name(cues)  # --rite ID → output/ID.mid
    output = (split_folder(output, Path(f"output/{name}.{split}s")) if split
              else output or Path(f"output/{name}.mid"))
    steps = int(grid) if grid else None
    if split is None and output.suffix.lower() not in _ENDINGS:
        raise RenderError(f"--out {str(output)!r}: ending {output.suffix!r} is not a MIDI "
                          f"file; give an --out ending {' or '.join(_ENDINGS)} (audio files: "
                          "soundscape render)")
    from soundscape.site.listeners import listener_at

    courtyard = sequencing.site(cues)  # the rite's own (鄉射: the 序)
    # ear height and facing (the duke faces west)
    listener = None if place == "none" else listener_at(courtyard, place)
    performance = sequencing.perform(cues, site=courtyard)
    if split is None:
        path = midi.write_midi(performance, output, listener=listener, tuning_mode=tuning_mode,
                               grid=steps, ports=ports)
        click.echo(f"wrote {path} ({midi.note_count(path)} notes, {tuning_mode}, "
                   f"{_tracks(path)})")
        return
    paths = midi.write_split(performance, output, by=split, listener=listener,
                             tuning_mode=tuning_mode, grid=steps, ports=ports)
    notes = sum(midi.note_count(path) for path in paths)
    click.echo(f"wrote {counted(len(paths), 'file')} into {output} (one per {split}, "
               f"{notes} notes, {tuning_mode})")


def _tracks(path: Path) -> str:
    """"N tracks on P port(s)" of a written file, read back from it."""
    import mido

    tracks = mido.MidiFile(path).tracks
    ports = {m.port for t in tracks for m in t if m.type == "midi_port"} or {0}
    return f"{counted(len(tracks) - 1, 'track')} on {counted(len(ports), 'port')}"
