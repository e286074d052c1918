"""``soundscape show``: play a kit programme's cues in real time, as OSC to a show controller.

Reads ``<kit>/<programme>.cues.json`` (written by ``soundscape kit``) and sends each
cue's QLab message ``/cue/{number}/start`` over UDP to ``--osc HOST:PORT`` when the wall
clock reaches its time; start the programme's audio at the same moment. With
``--adm-osc HOST:PORT`` it also streams the ADM master's objects (names and positions, ADM-OSC
1.0, ``soundscape.kit.admosc``) on the same clock, for a spatial processor that renders the
objects live; ``--adm`` names the master's ``.adm.json`` (``render --layout adm``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from soundscape.cli._common import FilePath, FiniteRange

__all__ = ["command"]


@click.command("show")
@click.option("--osc", "target", default=None, help="Where to send the cues: HOST:PORT "
              "(QLab: 53000).")
@click.option("--adm-osc", "adm_target", default=None, help="Where to stream the objects' "
              "positions as ADM-OSC: HOST:PORT (a spatial processor).")
@click.option("--adm", "adm_file", type=FilePath(dir_okay=False, path_type=Path),
              default=None, help="The objects for --adm-osc (default: "
              "<kit>/<programme>.wav.adm.json, from `render --layout adm`).")
@click.option("--programme", default="rite", show_default=True, help="Programme id.")
@click.option("--kit", "kit_dir", type=FilePath(file_okay=False, path_type=Path),
              default=Path("output/kit"), show_default=True, help="Folder of the kit.")
@click.option("--start", "start_at", type=FiniteRange(min=0), default=0.0,
              show_default=True, help="Start this many seconds into the programme.")
@click.option("--for", "stop_after", type=FiniteRange(min=0), default=None,
              help="Stop after this many seconds (default: the whole programme).")
def command(target: str | None, adm_target: str | None, adm_file: Path | None,
            programme: str, kit_dir: Path, start_at: float, stop_after: float | None) -> None:
    """Play a programme's cues against the wall clock, as QLab OSC messages, and stream its
    ADM objects' positions as ADM-OSC."""
    from soundscape import validate
    from soundscape.kit import KitError, admosc
    from soundscape.kit.player import load_cues, osc_sender, parse_target, play

    validate.ident(programme, key="--programme", where="soundscape show", error=KitError)
    if target is None and adm_target is None:
        raise KitError("soundscape show: give --osc HOST:PORT (cues), --adm-osc HOST:PORT "
                       "(ADM objects) or both")
    items: list[Any] = []  # cues and ADM-OSC messages, each with its .time
    senders: dict[str, Callable[[Any], None]] = {}
    if target is not None:
        host, port = parse_target(target)
        cues = load_cues(kit_dir / f"{programme}.cues.json")
        items += cues
        senders["cue"] = osc_sender(host, port)
        click.echo(f"sending {len(cues)} cues of {programme} to {host}:{port} (OSC over UDP)",
                   err=True)
    if adm_target is not None:
        try:
            host, port = parse_target(adm_target)
        except KitError as error:
            raise KitError(str(error).replace("--osc", "--adm-osc", 1)) from None
        objects = admosc.load_objects(adm_file or kit_dir / f"{programme}.wav.adm.json")
        items += admosc.messages(objects)
        senders["adm"] = admosc.osc_sender(host, port)
        click.echo(f"streaming {len(objects)} objects to {host}:{port} (ADM-OSC over UDP)",
                   err=True)
    items.sort(key=lambda item: item.time)  # stable: cues first at a shared time

    def send(item) -> None:
        senders["adm" if isinstance(item, admosc.OscMessage) else "cue"](item)

    sent = play(items, send, start_at=start_at, stop_after=stop_after)
    cue_count = sum(1 for item in items if not isinstance(item, admosc.OscMessage)
                    and item.time >= start_at
                    and (stop_after is None or item.time <= start_at + stop_after))
    click.echo(f"sent {cue_count} cues" + (f" and {sent - cue_count} ADM-OSC messages"
                                          if adm_target is not None else ""))
