"""The kit's manifest (``manifest.json``): what each file is, how loud, and what it rests on.

For the rite: its title, text, cue sheet, seed, tuning (name and 黃鍾 in Hz) and the
reading of the words. For each programme: title, description, the parts of the rite it
plays (seconds on the rite's clock), the loop's length, the pieces heard with their
basis (``surviving`` with the source, or ``reconstruction`` with the rules it rests on),
and per zone and layout the audio files with their SHA-256, channel map (file, channel,
name), integrated loudness (LUFS), true peak (dBTP), calibration level and the level step
measured across the loop's seam beside the steps elsewhere in it and the step where the
loop's first sound comes in (the restart); then the
captions, cue lists and performance files, each with its SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from soundscape import __version__
from soundscape.fileio import recorded, replace_set, write_text
from soundscape.performance import Performance

__all__ = ["MANIFEST_VERSION", "RECORD", "begin", "files_of", "finish", "sha256", "write_manifest"]

MANIFEST_VERSION = 1


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _level(value: float) -> float | None:
    """A level in dB to 0.01, or None (JSON null) for silence's −inf or a NaN."""
    return round(value, 2) if math.isfinite(value) else None


def _file(out: Path, path: Path) -> dict[str, str]:
    return {"file": path.relative_to(out).as_posix(), "sha256": sha256(path)}


def programme_entry(out: Path, item) -> dict[str, Any]:
    """The manifest entry of one built programme (``build.Built``)."""
    programme, performance = item.programme, item.performance
    heard = sorted({e.piece for e in performance.events if e.piece})
    renders = []
    for zone, layout, job, result in item.renders:
        renders.append({
            "zone": zone, "layout": layout,
            "files": [_file(out, p) for p in result.files],
            "channels": [{"file": f, "channel": c, "name": n} for f, c, n in result.channel_map],
            "sample_rate": job.sample_rate, "seconds": round(result.seconds, 3),
            "measured_lufs": _level(result.measured_lufs), "gain_db": _level(result.gain_db),
            "output_lufs": _level(result.output_lufs),
            "true_peak_dbtp": _level(result.output_peak_dbtp),
            "calibration_lufs": result.calibration_lufs, "ceiling_dbtp": result.ceiling_dbtp,
            "at_calibration": result.at_calibration,
            "seam_step_db": _level(result.seam_db),
            "other_steps_db": {"p95": _level(result.elsewhere_db[0]),
                               "max": _level(result.elsewhere_db[1])},
            "seam_within_p95": result.seam_db <= result.elsewhere_db[0],
            "restart_step_db": _level(result.restart_db)})
    names = [f"{programme.id}.{z.id}.{ext}" for z in programme.zones for ext in ("vtt", "srt")]
    names += [f"{programme.id}.cues.{ext}" for ext in ("json", "csv")]
    names.append(f"{programme.id}.performance.json")
    return {
        "id": programme.id, "title": programme.title, "description": programme.description,
        "seconds": round(item.length_s, 3),
        "parts": [[round(a, 3), round(b, 3)] for a, b in item.parts],
        "lead_s": round(item.lead_s, 3), "restart_s": round(item.restart_s, 3),
        "zones": [{"id": z.id, "walk": [list(w) for w in z.waypoints]} for z in programme.zones],
        "pieces": [_piece(performance.pieces[p]) for p in heard],
        "renders": renders,
        "adm_masters": [{"zone": zone, **_file(out, result.files[0]),
                         "layout": job.layout,
                         "objects": sum(c.startswith("object") for c in result.channels),
                         "channels": len(result.channels),
                         "output_lufs": _level(result.report.output_lufs),
                         "true_peak_dbtp": _level(result.report.output_peak_dbtp)}
                        for zone, job, result in item.masters],
        "files": [_file(out, out / name) for name in names],
    }


def check_court(court: str) -> None:
    """Refuse a court hypothesis that ``soundscape/data/court.toml`` does not hold."""
    from soundscape.kit import KitError
    from soundscape.sound.court import hypotheses

    if court != "none" and court not in hypotheses():
        raise KitError(f"--court {court!r} is unknown; accepted: {', '.join(hypotheses())}, "
                       "none")


def court_entry(court: str) -> dict[str, str]:
    """The court hypothesis the loops are heard in, as the render's report names it."""
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court

    if court == "none":
        return {"hypothesis": "none", "note": "no walls: the floor and the hall's front only"}
    found = load_court(load_site(), court)
    return {"hypothesis": found.name, "name": found.hypothesis.name,
            "note": found.hypothesis.note}


#: The hidden list of the files the last kit built in its folder (fileio.replace_set).
RECORD = ".soundscape.kit"


def begin(out: Path) -> None:
    """Before a kit is built into ``out``: its earlier manifest goes (a build stopped half
    way leaves no manifest that its files no longer match), and the files it listed are
    recorded, so that the finished build removes those it does not make again."""
    manifest = out / "manifest.json"
    try:
        earlier = files_of(json.loads(manifest.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return
    write_text(out / RECORD, "".join(f"{name}\n" for name in
                                      sorted({*recorded(out, RECORD), *earlier})))
    manifest.unlink(missing_ok=True)


def files_of(data: Any) -> list[str]:
    """Every ``file`` a manifest (or any part of one) names."""
    if isinstance(data, dict):
        found = [data["file"]] if isinstance(data.get("file"), str) else []
        return found + [f for value in data.values() for f in files_of(value)]
    if isinstance(data, list):
        return [f for value in data for f in files_of(value)]
    return []


def finish(out: Path, rite: Performance, built: list, *, court: str,
           layouts: Sequence[Path], listen: Sequence[Path]) -> Path:
    """Write the manifest of the kit just built (:func:`write_manifest`) and remove the
    files an earlier kit in ``out`` made that this one did not (its own names stay)."""
    path = write_manifest(out, rite, built, court=court, layouts=layouts, listen=listen)
    made = files_of(json.loads(path.read_text(encoding="utf-8")))
    replace_set(out, [*made, path.name], record=RECORD)
    return path


def write_manifest(out: Path, rite: Performance, built: list, court: str = "bare", *,
                   layouts: Sequence[Path] = (), listen: Sequence[Path] = ()) -> Path:
    """Write ``manifest.json`` in ``out`` for the built programmes (heard in the court
    hypothesis ``court``), with the speaker ``layouts`` and the page's ``listen`` files
    this build wrote."""
    data = {
        "manifest": MANIFEST_VERSION, "soundscape": __version__,
        "rite": {**asdict(rite.info), "seconds": round(rite.duration, 3)},
        "court": court_entry(court),
        "calibration": "Each loop's integrated loudness (ITU-R BS.1770-4; ambisonics: of W) "
                       "is its programme's calibration_lufs unless the true-peak ceiling "
                       "stopped the gain first (at_calibration false): see docs/kit.md.",
        "programmes": [programme_entry(out, item) for item in built],
        "page": [_file(out, out / name) for name in ("index.html", "web/kit.js", "web/listen.js",
                                                      "web/kit.css", "web/data.js",
                                                      "web/cjk.otf", "web/cjk-OFL.txt")],
        "layouts": [_file(out, path) for path in sorted(layouts)],
        "listen": [_file(out, path) for path in sorted(listen)],
    }
    return write_text(out / "manifest.json",
                      json.dumps(data, ensure_ascii=False, indent=1,
                                 allow_nan=False) + "\n")  # NaN is no JSON


def _piece(piece) -> dict:
    """A piece heard, with what it rests on, and its parts the rite has no instrument for
    where there are any (the singers' octave is the scores' business)."""
    fields = asdict(piece)
    del fields["sung_octaves"]
    if not fields["unplayed"]:
        del fields["unplayed"]
    return fields
