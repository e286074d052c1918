"""Show control: a programme's cue list, its OSC map and MIDI Show Control messages, and
the schedule of which programme plays when.

Cue numbers are numeric (1, 2, 3 …) because QLab and MIDI Show Control take numbers;
the cue-sheet id and the passage are kept beside them. Each cue is:

- OSC, in QLab's conventions: address ``/cue/{number}/start`` sent over UDP to port
  53000 (QLab's OSC port);
- MIDI Show Control (MMA RP-002 / MSC 1.0): ``F0 7F <device> 02 <format> 01 <number> F7``,
  command format 0x10 (sound, general), command 0x01 GO, the cue number in ASCII.

A cue is made for each section, step, music cue start and stop, and shooting round of
the programme, at its time on the programme's clock.

A schedule (TOML, docs/kit.md) says which programme plays when: ``[[slot]]`` with
``start = "HH:MM"``, ``programme``, optional ``until = "HH:MM"`` (loop until then) and
``days`` (``mon`` … ``sun``).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from soundscape import validate
from soundscape.fileio import read_toml, write_text
from soundscape.kit import KitError
from soundscape.performance import Performance

__all__ = ["OSC_PORT", "ShowCue", "Slot", "cue_list", "load_schedule", "msc_go", "osc_address",
           "write_cue_csv", "write_cue_json"]

#: QLab listens for OSC on UDP 53000.
OSC_PORT = 53000
_MSC_SOUND = 0x10  # command format: sound (general)
_MSC_GO = 0x01
_ALL_CALL = 0x7F  # device id that every receiver answers
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass(frozen=True, slots=True)
class ShowCue:
    """One cue: ``number`` (1 …), seconds on the programme's clock, its section, its kind
    (section, step, music, shot), the text shown and the cue-sheet id (``name``)."""

    number: int
    time: float
    section: str
    kind: str
    text: str
    name: str


def cue_list(performance: Performance, section: str = "") -> list[ShowCue]:
    """The cues of a programme, numbered in time order; ``section``: the one it starts in."""
    cues = []
    for marker in performance.markers:
        if marker.kind == "section":
            section = marker.ref
        if marker.kind == "voice":
            continue
        text = marker.quote or marker.text
        cues.append((marker.time, section, marker.kind, text, marker.ref))
    return [ShowCue(i + 1, round(t, 3), s, k, text, ref)
            for i, (t, s, k, text, ref) in enumerate(cues)]


def osc_address(number: int) -> str:
    """QLab's OSC address that starts cue ``number``."""
    return f"/cue/{number}/start"


def msc_go(number: int, device: int = _ALL_CALL) -> bytes:
    """The MIDI Show Control GO message for cue ``number`` (sound, general)."""
    if not 0 <= device <= 0x7F:
        raise KitError(f"MSC device id={device!r}, accepted: 0 … 127")
    return bytes([0xF0, 0x7F, device, 0x02, _MSC_SOUND, _MSC_GO, *str(number).encode("ascii"),
                  0xF7])


def _rows(cues: list[ShowCue]) -> list[dict]:
    return [{**asdict(c), "osc": osc_address(c.number), "osc_port": OSC_PORT,
             "msc": msc_go(c.number).hex(" ").upper()} for c in cues]


def write_cue_json(cues: list[ShowCue], path: str | Path, *, programme: str,
                   audio: list[str]) -> Path:
    """Cue list JSON: the programme, its audio files, the OSC port and every cue."""
    data = {"programme": programme, "audio": audio,
            "osc": {"transport": "udp", "port": OSC_PORT, "address": "/cue/{number}/start"},
            "msc": {"command_format": "sound (0x10)", "command": "GO (0x01)",
                    "device": "all-call (0x7F)"},
            "cues": _rows(cues)}
    return write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def write_cue_csv(cues: list[ShowCue], path: str | Path) -> Path:
    """Cue list CSV (UTF-8): number, time, section, kind, text, name, osc, msc."""
    buffer = io.StringIO()
    fields = ["number", "time", "section", "kind", "text", "name", "osc", "osc_port", "msc"]
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_rows(cues))
    return write_text(path, buffer.getvalue())


@dataclass(frozen=True, slots=True)
class Slot:
    """A schedule entry: from ``start`` (minutes after midnight) loop ``programme`` until
    ``until`` (None: once), on ``days``."""

    start: int
    programme: str
    until: int | None
    days: tuple[str, ...]


def load_schedule(path: str | Path, programmes: set[str]) -> list[Slot]:
    """Read and check a schedule file against the kit's programme ids."""
    data = read_toml(path, KitError)
    slots = validate.size(data.get("slot"), key="slot", where=str(path), error=KitError,
                          kind=list, least=1, most=1000)
    out = []
    for i, entry in enumerate(slots):
        where = f"{path}: [[slot]] {i + 1}"
        validate.size(entry, key="slot", where=where, error=KitError, kind=dict, least=2)
        start = _clock(entry.get("start"), "start", where)
        until = _clock(entry["until"], "until", where) if "until" in entry else None
        if until is not None and until <= start:
            validate.fail(KitError, where, "until", entry["until"], "after start")
        days = entry.get("days", list(_DAYS))
        validate.size(days, key="days", where=where, error=KitError, kind=list, least=1)
        for day in days:
            validate.choice(day, _DAYS, key="days", where=where, error=KitError)
        out.append(Slot(start, validate.ident(entry.get("programme"), key="programme",
                                              where=where, error=KitError, known=programmes),
                        until, tuple(days)))
    return out


def _clock(value: object, key: str, where: str) -> int:
    if not isinstance(value, str) or len(value) != 5 or value[2] != ":" \
            or not (value[:2] + value[3:]).isdigit():
        validate.fail(KitError, where, key, value, "a time of day", "\"HH:MM\", 00:00 … 23:59")
    hours, minutes = int(value[:2]), int(value[3:])
    if hours > 23 or minutes > 59:
        validate.fail(KitError, where, key, value, "a time of day", "\"HH:MM\", 00:00 … 23:59")
    return hours * 60 + minutes
