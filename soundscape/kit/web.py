"""The kit's static web page: plays a programme and shows what sounds.

``index.html`` with ``web/kit.js``, ``web/listen.js`` (listening live from any place:
``kit.listen``), ``web/kit.css`` and ``web/cjk.otf`` (copied from the
package: the bundled CJK subset, so the Chinese reads right on a machine without a CJK
font; nothing fetched from outside) and ``web/data.js``, the programmes' data as one script (so the
page works from a plain local file server and from a file opened directly):

- the courtyard plan: its outline (the walls and the gate, the hall with its stairs and
  pillars, the targets), the named places in Chinese and English, and each source
  (instrument or voice, its name in both) at ``x, y`` with the spans of time it sounds
  (each event from its onset to its nominal end, at least ``_HOLD_S``, spans closer than
  ``_MERGE_S`` merged);
- per zone and layout: the audio files a browser can play and the loudspeakers, each
  with the spans it is fed (the sources whose panning gain on it passes ``_FED`` at the
  zone's listener, as the renderer pans them). A browser plays stereo and binaural loops
  as they are, and downmixes to the visitor's output a loop of at most ``_DOWNMIXED``
  channels whose WAV channel mask names its loudspeakers (5.1, 7.1); ambisonics, rings and
  az/el lists (mask 0) it would take for loudspeakers by their count, so they are left
  to the venue's decoder;
- the sections (a timeline to jump to), the steps (the passage with its gloss) and the
  captions per zone.
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path
from typing import Any

from soundscape.fileio import write_text
from soundscape.kit.captions import captions, step_gloss
from soundscape.kit.speakers import SpeakerLayout, channel_mask, panner_for
from soundscape.performance import Performance

__all__ = ["activity", "outline", "write_page"]

_ASSETS = Path(__file__).parent / "web"
_HOLD_S = 0.25  # a stroke lights its instrument at least this long
_MERGE_S = 0.3  # spans closer than this are one
_FED = 0.35  # a loudspeaker lights for a source whose gain on it passes this
_PLAYABLE = 2  # channels a browser plays as they are
_DOWNMIXED = 8  # channels of a named loudspeaker layout a browser downmixes (5.1, 7.1)
_PLACES = ("tang", "zuojie", "xijie", "zhongting", "men", "dahou", "can", "gan", "gong_wei",
           "bin_wei")


def activity(performance: Performance) -> dict[str, list[list[float]]]:
    """Per source id, the merged spans ``[start, end]`` (s) in which it sounds."""
    spans: dict[str, list[list[float]]] = {}
    for event in performance.events:
        start, end = event.time, event.time + max(event.duration, _HOLD_S)
        mine = spans.setdefault(event.source, [])
        if mine and start - mine[-1][1] <= _MERGE_S:
            mine[-1][1] = max(mine[-1][1], end)
        else:
            mine.append([start, end])
    return {k: [[round(a, 3), round(b, 3)] for a, b in v] for k, v in spans.items()}


def _union(lists: list[list[list[float]]]) -> list[list[float]]:
    merged: list[list[float]] = []
    for start, end in sorted(span for spans in lists for span in spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _speakers(layout: Any, listener, performance: Performance,
              lit: dict[str, list[list[float]]]) -> list[dict[str, Any]]:
    """Loudspeakers of a layout with the spans they are fed (``[]`` for formats that are
    not loudspeaker feeds, such as binaural or ambisonics)."""
    if isinstance(layout, SpeakerLayout):
        placed = [(s.channel - 1, s.azimuth, s.elevation, s.name or f"CH{s.channel}")
                  for s in layout.speakers if not s.imaginary]
    elif layout == "stereo":
        placed = [(0, 30.0, 0.0, "L"), (1, -30.0, 0.0, "R")]
    else:
        return []
    panner = panner_for(layout)
    fed: dict[int, list[list[list[float]]]] = {index: [] for index, *_ in placed}
    for source_id, spans in lit.items():
        source = performance.sources[source_id]
        azimuth, elevation, _ = listener.at(spans[0][0]).direction_to(source.position)
        gains = panner.terms(azimuth, elevation).gains
        for index in fed:
            if gains[index] > _FED:
                fed[index].append(spans)
    return [{"name": name, "azimuth": az, "elevation": el, "active": _union(fed[index])}
            for index, az, el, name in placed]


def _playable(layout: Any, result) -> bool:
    """Whether a browser plays the loop right (see module)."""
    channels = len(result.channel_map)
    return len(result.files) == 1 and (
        channels <= _PLAYABLE or (channels <= _DOWNMIXED and channel_mask(layout) != 0))


def _programme(item, site) -> dict[str, Any]:
    performance = item.performance
    lit = activity(performance)
    zones: dict[str, dict[str, Any]] = {}
    named = {z.id: _zone_name(z, site) for z in item.programme.zones}

    def zone_entry(zone_id: str, job) -> dict[str, Any]:
        if zone_id in zones:
            return zones[zone_id]
        listener = job.listener.at(0.0)
        return zones.setdefault(zone_id, {
            "id": zone_id, "name": named.get(zone_id, zone_id),
            "x": listener.position[0], "y": listener.position[1],
            "facing": listener.facing[:2], "renders": [], "walk": _walk(job.listener),
            "captions": [{"start": round(c.start, 3), "end": round(c.end, 3), "text": c.text,
                          "kind": c.kind}
                         for c in captions(performance, listener_at=listener.position)]})

    for zone_id, layout_id, job, result in item.renders:
        zone = zone_entry(zone_id, job)
        playable = _playable(job.layout, result)
        zone["renders"].append({
            "layout": layout_id, "files": [p.name for p in result.files],
            "bytes": {p.name: p.stat().st_size for p in result.files},
            "playable": playable, "speakers": _speakers(job.layout, job.listener, performance,
                                                        lit)})
    for zone_id, job, _ in getattr(item, "masters", []):  # a kit of ADM masters alone
        zone_entry(zone_id, job)
    sources = [{"id": s.id, "name": s.name, "roman": _english(s.roman),
                "instrument": s.instrument, "group": s.group,
                "x": round(s.position[0], 3), "y": round(s.position[1], 3),
                "active": lit.get(s.id, [])}
               for s in performance.sources.values() if s.id in lit]
    return {
        "id": item.programme.id, "title": item.programme.title,
        "description": item.programme.description, "seconds": round(item.length_s, 3),
        "sections": [{"id": s.id, "name": s.name, "start": round(s.start, 3),
                      "end": round(s.end, 3)} for s in performance.sections],
        "steps": [{"t": round(m.time, 3), "quote": m.quote or m.text, "gloss": step_gloss(m)}
                  for m in performance.markers if m.kind == "step"],
        "pieces": {k: {"title": v.title, "basis": v.basis}
                   for k, v in performance.pieces.items()
                   if any(e.piece == k for e in performance.events)},
        "sources": sources, "zones": list(zones.values()),
    }


def _walk(listener) -> list[list[float]] | None:
    """A walking zone's waypoints ``[t, x, y]`` (None for a standing one)."""
    points = getattr(listener, "waypoints", None)
    return None if points is None else [[round(t, 3), round(p[0], 3), round(p[1], 3)]
                                        for t, p, _ in points]


def _place_name(site, place: str) -> str:
    """A place as a visitor reads it: ``中庭 mid-court``."""
    info = site.place_info(place)
    return f"{info.name} {_english(info.roman)}"


def _zone_name(zone, site) -> str:
    """What the page's "Heard from" offers for a zone: its place's name (it offered the
    place's id, ``zhongting``), or the places a walk goes through."""
    if not zone.waypoints:
        return _place_name(site, zone.id)
    places = [_place_name(site, place) for _, place in zone.waypoints]
    return "行 walking: " + " → ".join(p for k, p in enumerate(places)
                                        if k == 0 or p != places[k - 1])


def _english(roman: str) -> str:
    """The English of a romanised name (``zhong ting, mid-court`` → ``mid-court``)."""
    return roman.split(",", 1)[-1].strip()


def _rect(x: float, y: float, w: float, h: float) -> list[float]:
    return [round(v, 3) for v in (x, y, w, h)]


def outline(site) -> dict[str, Any]:
    """The court as the plan draws it, in metres (x east, y north): the walls with the gate's
    opening (``output.plan`` draws the same), the hall, its stairs and pillars, and the
    targets as lines ``[x0, x1, y]`` with their names."""
    hall = site.hall
    half, gate = site.courtyard_width / 2, site.gate_y
    north = hall.total_depth + site.stairs[1]
    opening = site.metres(2, "弓")
    stairs = []
    for stair in ("zuojie", "xijie", "beijie"):
        if stair in site.places and site.place_info(stair).size:
            spot = site.place_info(stair)
            (x, y, _), (width, run) = spot.position, spot.size
            stairs.append(_rect(x - width / 2, y - run / 2, width, run))
    targets = []
    for target_id, target in site.targets.items():
        x, y, _ = site.place(target_id)
        width = target.hou_zhong + 2 * target.band
        info = site.place_info(target_id)
        targets.append({"id": target_id, "name": info.name, "roman": _english(info.roman),
                        "line": [round(x - width / 2, 3), round(x + width / 2, 3), round(y, 3)]})
    return {
        "walls": [[round(a, 3), round(b, 3)] for a, b in (
            (-opening, gate), (-half, gate), (-half, north), (half, north), (half, gate),
            (opening, gate))],
        "hall": _rect(-hall.width / 2, 0.0, hall.width, hall.total_depth),
        "stairs": stairs,
        "pillars": [[round(v, 3) for v in site.place(p)[:2]] for p in ("dongying", "xiying")
                    if p in site.places],
        "targets": targets,
    }


def write_page(out: str | Path, built: list, site=None, listen: dict | None = None,
               rite: str = "大射儀") -> Path:
    """Write ``index.html``, ``web/kit.js``, ``web/kit.css``, ``web/cjk.otf`` and
    ``web/data.js`` in ``out``; ``listen``: the stems and court responses the page renders
    live from (``kit.listen``; the listening panel is hidden without them); ``rite``: the
    rite's title, the page's heading (a 燕禮 kit was headed 大射儀)."""
    from soundscape.resources import data_dir
    from soundscape.site.courtyard import load_site

    out = Path(out)
    site = site or load_site()
    places = [{"id": p, "name": site.place_info(p).name,
               "roman": _english(site.place_info(p).roman),
               "x": site.place(p)[0], "y": site.place(p)[1]} for p in _PLACES
              if p in site.places]
    data = {"places": places, "outline": outline(site),
            "programmes": [_programme(item, site) for item in built], "listen": listen}
    (out / "web").mkdir(parents=True, exist_ok=True)
    for name in ("kit.js", "listen.js", "kit.css"):
        shutil.copyfile(_ASSETS / name, out / "web" / name)
    shutil.copyfile(data_dir() / "fonts" / "SoundscapeCJK-Regular.otf", out / "web" / "cjk.otf")
    shutil.copyfile(data_dir() / "fonts" / "OFL.txt", out / "web" / "cjk-OFL.txt")
    write_text(out / "web" / "data.js",
               "window.KIT = " + json.dumps(data, ensure_ascii=False) + ";\n")
    page = (_ASSETS / "index.html").read_text(encoding="utf-8")
    return write_text(out / "index.html", page.replace("{rite}", html.escape(rite)))
