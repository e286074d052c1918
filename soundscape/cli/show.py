"""``soundscape show``: play a kit programme's cues in real time, as OSC to a show controller.

Reads ``<kit>/<programme>.cues.json`` (written by ``soundscape kit``) and sends each
cue's QLab message ``/cue/{number}/start`` over UDP to ``--osc HOST:PORT`` when the wall
clock reaches its time; start the programme's audio at the same moment. With
``--adm-osc HOST:PORT`` it also streams the ADM master's objects (names and positions, ADM-OSC
1.0, ``soundscape.kit.admosc``) on the same clock, for a spatial processor that renders the
objects live; ``--adm`` names the master's ``.adm.json`` (``render --layout adm``), else the
kit's own master of the programme is taken (``kit --layout adm``: one per zone). Without
``--programme`` the kit's only programme is played; a kit of several names them.
"""

from __future__ import annotations

import glob
import ipaddress
import re
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
              default=None, help="The objects for --adm-osc (default: the kit's master of the "
              "programme, <kit>/<programme>.<zone>.adm.wav.adm.json from `kit --layout adm`, "
              "where it has one; or <kit>/<programme>.wav.adm.json from `render --layout "
              "adm`).")
@click.option("--programme", default=None, help="Programme id (default: the kit's only "
              "programme; `soundscape kit --list` lists them).")
@click.option("--kit", "kit_dir", type=FilePath(file_okay=False, path_type=Path),
              default=Path("output/kit"), show_default=True, help="Folder of the kit.")
@click.option("--start", "start_at", type=FiniteRange(min=0), default=0.0,
              show_default=True, help="Start this many seconds into the programme.")
@click.option("--for", "stop_after", type=FiniteRange(min=0), default=None,
              help="Stop after this many seconds (default: the whole programme).")
def command(target: str | None, adm_target: str | None, adm_file: Path | None,
            programme: str | None, kit_dir: Path, start_at: float, stop_after: float | None
            ) -> None:
    """Play a programme's cues against the wall clock, as QLab OSC messages, and stream its
    ADM objects' positions as ADM-OSC."""
    from soundscape.kit import KitError, admosc
    from soundscape.kit.player import load_cues, osc_sender, play

    if target is None and adm_target is None:
        raise KitError("soundscape show: give --osc HOST:PORT (cues), --adm-osc HOST:PORT "
                       "(ADM objects) or both")
    cue_at = _target(target, "--osc") if target is not None else None
    adm_at = _target(adm_target, "--adm-osc") if adm_target is not None else None
    programme = _programme(kit_dir, programme)
    items: list[Any] = []  # cues and ADM-OSC messages, each with its .time
    senders: dict[str, Callable[[Any], None]] = {}
    if cue_at is not None:
        host, port = cue_at
        cues = load_cues(kit_dir / f"{programme}.cues.json")
        items += cues
        senders["cue"] = _reaching(lambda: osc_sender(host, port), "--osc", target)
        click.echo(f"sending {len(cues)} cues of {programme} to {host}:{port} (OSC over UDP)",
                   err=True)
    if adm_at is not None:
        host, port = adm_at
        objects = admosc.load_objects(adm_file or _masters_objects(kit_dir, programme))
        items += admosc.messages(objects)
        senders["adm"] = _reaching(lambda: admosc.osc_sender(host, port), "--adm-osc",
                                   adm_target)
        click.echo(f"streaming {len(objects)} objects to {host}:{port} (ADM-OSC over UDP)",
                   err=True)
    items.sort(key=lambda item: item.time)  # stable: cues first at a shared time
    if items and start_at > items[-1].time:
        raise KitError(f"--start {start_at:g} s is past the last of {programme}'s cues and "
                       f"messages (at {items[-1].time:g} s): nothing would be sent; accepted: "
                       f"0 to {items[-1].time:g} s")

    def send(item) -> None:
        senders["adm" if isinstance(item, admosc.OscMessage) else "cue"](item)

    sent = play(items, send, start_at=start_at, stop_after=stop_after)
    cue_count = sum(1 for item in items if not isinstance(item, admosc.OscMessage)
                    and item.time >= start_at
                    and (stop_after is None or item.time <= start_at + stop_after))
    click.echo(f"sent {cue_count} cues" + (f" and {sent - cue_count} ADM-OSC messages"
                                          if adm_target is not None else ""))


def _reaching(make: Callable[[], Callable[[Any], None]], option: str, target: str | None
              ) -> Callable[[Any], None]:
    """``make()``'s sender, its network errors (a host not found, a broadcast address)
    named by the option and target, not by the socket alone."""
    from soundscape.kit import KitError

    def failed(error: OSError) -> KitError:
        return KitError(f"{option} {target}: {error.strerror or error}")
    try:
        send = make()
    except OSError as error:
        raise failed(error) from None

    def sending(item: Any) -> None:
        try:
            send(item)
        except OSError as error:
            raise failed(error) from None
    return sending


def _programme(kit_dir: Path, asked: str | None) -> str:
    """``--programme``, or the kit's only one; refused where the kit has no cue list of it,
    naming the programmes it has."""
    from soundscape import validate
    from soundscape.kit import KitError

    if asked is not None:
        validate.ident(asked, key="--programme", where="soundscape show", error=KitError)
    built = sorted(p.name.removesuffix(".cues.json") for p in kit_dir.glob("*.cues.json"))
    if asked is None and len(built) == 1:
        return built[0]
    if asked is not None and asked in built:
        return asked
    holds = (f"it holds {', '.join(built)}" if built else
             "it holds no programme: build one with `soundscape kit --programme ID`")
    if asked is not None:
        raise KitError(f"soundscape show: --programme {asked!r}: {kit_dir} has no "
                       f"{asked}.cues.json; {holds}")
    if built:
        raise KitError(f"soundscape show: {kit_dir} holds {len(built)} programmes "
                       f"({', '.join(built)}): give --programme ID")
    raise KitError(f"soundscape show: {kit_dir}: {holds}")


def _masters_objects(kit_dir: Path, programme: str) -> Path:
    """The objects of ``programme``'s ADM master in the kit: ``render``'s, else the kit's
    one (a master per zone and layout: more than one is refused, naming them)."""
    from soundscape.kit import KitError

    rendered = kit_dir / f"{programme}.wav.adm.json"
    if rendered.is_file():
        return rendered
    found = sorted(kit_dir.glob(f"{glob.escape(programme)}.*.wav.adm.json"))
    if len(found) == 1:
        return found[0]
    if found:
        raise KitError(f"soundscape show: {kit_dir} holds {len(found)} ADM masters of "
                       f"{programme} ({', '.join(f.name for f in found)}): give --adm FILE")
    raise KitError(f"soundscape show: {kit_dir} holds no ADM master of {programme} "
                   f"({programme}.ZONE.adm.wav.adm.json): build it with `soundscape kit "
                   f"--programme {programme} --layout adm`, or give --adm FILE")


#: A host name's labels (RFC 1123): letters, digits and inner hyphens, 63 at most.
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_FORMS = "HOST:PORT like 127.0.0.1:53000, localhost:53000 or [::1]:53000"


def _target(text: str, option: str) -> tuple[str, int]:
    """``HOST:PORT`` (``kit.player.parse_target``), its host checked too: ``[::1:5`` took
    ``[::1`` for a host. An IPv6 address is written in brackets, sent without them."""
    from soundscape.kit import KitError
    from soundscape.kit.player import parse_target

    try:
        host, port = parse_target(text)
    except KitError as error:
        raise KitError(str(error).replace("--osc", option, 1)) from None
    name = _host(host)
    if name is None:
        raise KitError(f"{option} {text!r}: {host!r} is no host name, IPv4 address or "
                       f"bracketed IPv6 address; accepted: {_FORMS}")
    return name, port


def _host(host: str) -> str | None:
    """The address to send to of a ``HOST`` as written, or None if it is none."""
    if host.startswith("[") and host.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            return None
    labels = host.removesuffix(".").split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return None  # brackets, colons (IPv6 unbracketed), spaces, empty labels
    if all(label.isdigit() for label in labels):  # 999.1.1.1 is no name and no address
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError:
            return None
    return host
