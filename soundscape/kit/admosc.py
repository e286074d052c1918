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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from soundscape import validate
from soundscape.fileio import read_json
from soundscape.kit import KitError

__all__ = ["OscMessage", "load_objects", "messages", "osc_sender"]


@dataclass(frozen=True, slots=True)
class OscMessage:
    """An OSC message due at ``time`` s of the programme."""

    time: float
    address: str
    args: tuple


#: Bounds of an object list: objects (an ADM master holds at most 118), blocks of one, and
#: where a block may stand (seconds into the programme; degrees; distance 0–1).
MOST_OBJECTS, MOST_BLOCKS = 128, 100_000
_BLOCK_RANGES = {"time": (0.0, 48 * 3600.0), "azimuth": (-360.0, 360.0),
                 "elevation": (-90.0, 90.0), "distance": (0.0, 1.0)}


def load_objects(path: str | Path) -> list[dict]:
    """The objects of an ADM master's ``<file>.adm.json`` (``render --layout adm``), checked as
    any file a user gives: a regular file of bounded size (a FIFO is refused, not waited on),
    each object's number, names and blocks, each block's time (in order) and place in range."""
    path = Path(path)
    if not path.exists():
        raise KitError(f"{path}: no such file; render the master with "
                       "`soundscape render --layout adm` (it writes <file>.wav.adm.json)")
    data = read_json(path, KitError)
    where = str(path)
    objects = validate.size(data.get("objects") if isinstance(data, dict) else None,
                            key="objects", where=where, error=KitError, kind=list, least=1,
                            most=MOST_OBJECTS)
    numbered: dict[int, int] = {}
    for k, obj in enumerate(objects):
        at = f"{where}: objects[{k}]"
        validate.size(obj, key="object", where=at, error=KitError, kind=dict, least=1)
        number = validate.whole(obj.get("number"), key="number", where=at, error=KitError,
                                low=1, high=MOST_OBJECTS)
        if number in numbered:  # two objects would send to one /adm/obj/N
            validate.fail(KitError, at, "number", number,
                          f"a number no other object has (objects[{numbered[number]}] has it)")
        numbered[number] = k
        for key in ("name", "roman"):
            validate.text(obj.get(key), key=key, where=at, error=KitError, empty_ok=True,
                          longest=200)
        blocks = validate.size(obj.get("blocks"), key="blocks", where=at, error=KitError,
                               kind=list, least=1, most=MOST_BLOCKS)
        previous = 0.0
        for b, block in enumerate(blocks):
            there = f"{at}.blocks[{b}]"
            validate.size(block, key="block", where=there, error=KitError, kind=dict, least=4)
            for key, (low, high) in _BLOCK_RANGES.items():
                validate.number(block.get(key), key=key, where=there, error=KitError, low=low,
                                high=high)
            if block["time"] < previous:
                validate.fail(KitError, there, "time", block["time"],
                              f"at or after the previous block's {previous:g} s")
            previous = block["time"]
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
