"""ADM-OSC: the ADM master's objects as OSC messages, for a spatial processor that renders live.

ADM-OSC 1.0 (the ADM-OSC working group's specification, github.com/immersive-audio-live/
ADM-OSC) addresses, one object per ADM object (its number, 1 …):

- ``/adm/obj/N/name`` (string): the object's Chinese and English names;
- ``/adm/obj/N/aed`` (float azimuth °, elevation °, distance 0–1): ADM's polar position,
  azimuth 0 ahead and positive to the left (the listener's frame of the master);
- ``/adm/obj/N/azim``, ``/adm/obj/N/elev``, ``/adm/obj/N/dist``: the same, one by one, for
  processors that take only those.

Each object's names and first place are sent at the programme's start, and each later block
(a move) at its time; ``schedule`` puts them on the clock of the show's cue list.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from soundscape.kit import KitError

__all__ = ["OscMessage", "load_objects", "messages", "osc_sender"]


@dataclass(frozen=True, slots=True)
class OscMessage:
    """An OSC message due at ``time`` s of the programme."""

    time: float
    address: str
    args: tuple


def load_objects(path: str | Path) -> list[dict]:
    """The objects of an ADM master's ``<file>.adm.json`` (``render --layout adm``)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        objects = data["objects"]
        for k, obj in enumerate(objects):
            number, blocks = obj["number"], obj["blocks"]
            if not (isinstance(number, int) and blocks and all(
                    {"time", "azimuth", "elevation", "distance"} <= set(b) for b in blocks)):
                raise KitError(f"{path}: objects[{k}]: needs a number and blocks of time, "
                               "azimuth, elevation, distance")
    except FileNotFoundError:
        raise KitError(f"{path}: no such file; render the master with "
                       "`soundscape render --layout adm` (it writes <file>.wav.adm.json)") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise KitError(f"{path}: not an ADM object list ({error})") from None
    return objects


def messages(objects: Sequence[dict]) -> list[OscMessage]:
    """The ADM-OSC messages of ``objects``, in time order (names first at each object)."""
    out = []
    for obj in objects:
        n = obj["number"]
        out.append(OscMessage(0.0, f"/adm/obj/{n}/name", (f"{obj['name']} | {obj['roman']}",)))
        for block in obj["blocks"]:
            a, e, d = (float(block[k]) for k in ("azimuth", "elevation", "distance"))
            out += [OscMessage(block["time"], f"/adm/obj/{n}/aed", (a, e, d)),
                    OscMessage(block["time"], f"/adm/obj/{n}/azim", (a,)),
                    OscMessage(block["time"], f"/adm/obj/{n}/elev", (e,)),
                    OscMessage(block["time"], f"/adm/obj/{n}/dist", (d,))]
    return sorted(out, key=lambda m: m.time)  # stable: an object's messages keep their order


def osc_sender(host: str, port: int) -> Callable[[OscMessage], None]:
    """A function that sends an ``OscMessage`` to ``host:port`` over UDP."""
    from pythonosc.udp_client import SimpleUDPClient

    client = SimpleUDPClient(host, port)
    return lambda message: client.send_message(message.address, list(message.args))
