"""Playing a cue list against the wall clock: each cue is sent at its time, never early.

``soundscape show`` reads a programme's cue list (``<programme>.cues.json`` from
``soundscape kit``) and sends each cue's QLab OSC message (``/cue/{number}/start``,
no arguments) over UDP with ``python-osc``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from soundscape import validate
from soundscape.fileio import read_json
from soundscape.kit import KitError
from soundscape.kit.showcontrol import ShowCue, osc_address

__all__ = ["load_cues", "osc_sender", "parse_target", "play"]


def load_cues(path: str | Path) -> list[ShowCue]:
    """The cues of a cue-list JSON file written by ``soundscape kit`` (checked)."""
    path = Path(path)
    data = read_json(path, KitError)
    rows = data.get("cues") if isinstance(data, dict) else None
    rows = validate.size(rows, key="cues", where=str(path), error=KitError, kind=list,
                         most=100_000)
    cues: list[ShowCue] = []
    for i, row in enumerate(rows):
        where = f"{path}: cues[{i}]"
        validate.size(row, key="cue", where=where, error=KitError, kind=dict, least=2)
        number = validate.whole(row.get("number"), key="number", where=where, error=KitError,
                                low=1, high=99_999)
        at = validate.number(row.get("time"), key="time", where=where, error=KitError,
                             low=0.0, high=48 * 3600.0, unit="s")
        if cues and at < cues[-1].time:
            validate.fail(KitError, where, "time", at, f"≥ the previous cue's {cues[-1].time}")
        cues.append(ShowCue(number, at, str(row.get("section", "")), str(row.get("kind", "")),
                            str(row.get("text", "")), str(row.get("name", ""))))
    return cues


def parse_target(text: str) -> tuple[str, int]:
    """``HOST:PORT`` → (host, port)."""
    host, _, port = text.rpartition(":")
    # isdecimal, not isdigit: "²" is a digit that int() cannot read (a traceback)
    if not host or not port.isdecimal() or len(port) > 5 or not 1 <= int(port) <= 65535:
        raise KitError(f"--osc {text!r}, accepted: HOST:PORT like 127.0.0.1:53000")
    return host, int(port)


def osc_sender(host: str, port: int) -> Callable[[ShowCue], None]:
    """A function that sends a cue's QLab start message to ``host:port`` over UDP."""
    from pythonosc.udp_client import SimpleUDPClient

    client = SimpleUDPClient(host, port)
    return lambda cue: client.send_message(osc_address(cue.number), [])


def play(cues: Sequence[ShowCue], send: Callable[[ShowCue], None], *, start_at: float = 0.0,
         stop_after: float | None = None, clock: Callable[[], float] = time.monotonic,
         sleep: Callable[[float], None] = time.sleep) -> int:
    """Send the cues from ``start_at`` s of the programme on, each when the wall clock
    reaches it, for at most ``stop_after`` s; returns how many were sent."""
    zero = clock() - start_at
    sent = 0
    for cue in cues:
        if cue.time < start_at:
            continue
        if stop_after is not None and cue.time > start_at + stop_after:
            break
        wait = zero + cue.time - clock()
        if wait > 0:
            sleep(wait)
        send(cue)
        sent += 1
    return sent
