"""What the kit page needs to render a programme live from wherever the visitor stands.

- **Object stems** (``<p>.listen/stem.NN.KKK.flac``): the programme's sounding sources as at
  most ``MAX_STEMS`` mono stems, *dry at 1 m* (the voice's own notes, the same note keys,
  variants and sung lines as ``soundscape render``, summed at their onsets; no distance,
  air, floor or court), grouped past the limit as the ADM master's objects are
  (``adm.group_sources``: sources taking turns on shared stems, each its own stretch of
  sound, ``turns``; or, where too many sound at once, standing ones merged with their
  nearest neighbour), each stem with its places over time in metres
  (``adm.group_places``: a point per move or far step, and per turn) and the court zone
  its first place sends to. The courtyard's ambience (the bed's sources, ``adm.group_bed``) has up
  to ``MAX_BED_STEMS`` stems of its own (``bed``), heard like the others from where its
  sources stand round the court, its reflections and late sound included. Each stem is
  written in pieces of ``PIECE_S`` (``stem.NN.KKK.flac``, each at its own peak, with the
  gain that brings it back; a silent piece is no file): a browser decodes a file whole, to
  32-bit floats, so the page decodes only the pieces around what it plays, and the kit
  holds one piece of the stems at a time while it writes them, whatever the programme's
  length. Programmes up to ``LISTEN_S`` get stems (their size on disk).
- **The court's early reflections** (``early`` per stem, per listening spot): the image
  sources of the stem's first place heard at the spot (``Court.images``, the early paths the
  render itself hears: ``Court.split``, within ``early_ms`` of the direct sound and up to
  ``early_order`` bounces, the floor's among them), each as where it stands, its surfaces'
  pressure factor at 1 kHz and its mirror signs per axis (``[x, y, z, gain, sx, sy, sz]``).
  The page puts each on a delay (its path less the direct path, over the speed of sound,
  for wherever the listener stands) and an HRTF panner at the image (1/r, the air), and
  moves it with its source (an image moves as its source, mirrored on the signed axes).
- **The court's reverberation** (``listen/ir.<zone>.<spot>.<pair>.flac``): per court zone
  (``Court.zones``, the late tail's send buses) and per listening spot (the same zones'
  points, 1.5 m up, facing north), the response to a click at the zone heard at the spot on
  a ring of eight loudspeakers around the listener (``ring8``, every 45° from ahead), made by
  ``impulse.impulse_response`` (the render's own paths, court images and late tail), its
  late part only: from the court's ``early_ms`` after the direct sound on (the early paths
  are the ``early`` images above), faded in over ``_FADE_S``, at ``IR_RATE`` and no longer
  than ``IR_S``, in four stereo files (loudspeakers 2k and 2k + 1: a Web Audio convolver
  takes one or two channels). The page plays the ring through eight HRTF panners around
  the listener, so the late sound arrives from all round, its distinct echoes from their
  walls. Each stem is sent to its zone's responses at the spot nearest the visitor, at the
  gain the render's own late tail sends it with (``Tail.route``: the late energy its first
  place sends the spot over the zone's point's; ``sends`` per spot).
- **The air**: the page's distance filter is fitted to the project's own air
  (``propagation.Air``): its absorption at ``AIR_HZ`` per metre.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
from scipy import signal

from soundscape.performance import Performance
from soundscape.sound import adm
from soundscape.sound.court import BANDS
from soundscape.sound.loudness import LoudnessMeter
from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, Voice, stable_ints
from soundscape.sound.propagation import Air, Surroundings

__all__ = ["AIR_HZ", "IR_RATE", "IR_S", "LISTEN_S", "MAX_BED_STEMS", "MAX_STEMS", "PIECE_S",
           "RING_DEG",
           "court_responses", "early_images", "write_stems"]

#: Stems a page mixes live (each an HRTF panner: a convolution per ear per stem), and the
#: courtyard's ambience's besides (its sources where they stand round the court).
MAX_STEMS = 16
MAX_BED_STEMS = 4
#: Programmes up to this long (s) get stems: the page holds a few pieces at a time, but the
#: kit's disk holds them all (the 大射's 29-minute 貍首, 20 stems: ~0.4 GB of FLAC; the whole
#: rite's 3½ hours would take some 3 GB more than its loops: asked for, not made).
LISTEN_S = 30 * 60.0
#: Seconds of a stem a file holds (the page holds the piece it plays and the next, and the
#: one before until the one after is asked for: 20 stems of 30 s decode to ~115 MB).
PIECE_S = 30.0
RATE = 48000
#: The shipped responses' rate and length: the late tail is made at 8 kHz (docs/site.md),
#: and by ``IR_S`` it has decayed some 40 dB in the bare court (the render's own tail, 4.5 s,
#: ends at −40 dB or less; measured: 40.7 dB from the zhongting zone at the gong_xi spot).
IR_RATE = 16000
IR_S = 3.0
#: The frequency the page's air filter matches the project's air at.
AIR_HZ = 8000.0
#: A listening spot's ear height (m) and where its response is cut (s after the direct).
EAR_M = 1.5
#: The ring of loudspeakers the court's responses are made for and the page plays them on
#: (degrees from ahead, positive left, as ``panning``'s azimuths).
RING_DEG = tuple(float(a) for a in range(0, 360, 45))
_KHZ = BANDS.index(1000.0)
_FADE_S = 0.005


def _dry_pieces(performance: Performance, groups: list[adm.SourceGroup], *, voice: Voice,
                seed: int, piece: int) -> Iterator[np.ndarray]:
    """The stems in pieces of ``piece`` frames, in order, each ``(frames, stems)`` float32 (the
    last one shorter): every event's dry note added at its onset into the stem of the group
    that carries it (``adm.carrier``: its source's, or the shared one whose turn it is), the
    events in time order, so that a piece no later note reaches is given out (and dropped)
    as soon as a note starts past it. The stems run past the programme's end by a second,
    and on to the last note's last sample."""
    stem_of = adm.carrier(groups)
    bind = getattr(voice, "bind", None)
    voice = bind(performance, seed) if bind is not None else voice
    notes: dict[int, DryNotes] = {}
    events = performance.events
    total = math.ceil(performance.duration * RATE) + RATE
    held: dict[int, np.ndarray] = {}  # piece index → its sum so far
    given = 0  # pieces given out

    def piece_at(index: int) -> np.ndarray:
        found = held.pop(index, None)
        return np.zeros((piece, len(groups)), np.float32) if found is None else found

    for index in sorted(range(len(events)), key=lambda i: events[i].time):
        event = events[index]
        stem = stem_of(event.source, event.time)
        if stem is None:
            continue
        onset = round(event.time * RATE)
        while given < onset // piece:  # no note from here on reaches it
            yield piece_at(given)
            given += 1
        source = performance.sources[event.source]
        made_at = getattr(voice, "made_at", lambda s, r: r)(source, RATE)
        dry = notes.get(made_at) or notes.setdefault(
            made_at, DryNotes(voice, made_at, seed, ByteLru(64 << 20)))
        key = dry.key(event, source)
        variant = stable_ints(seed, index)[0] % dry.variants(source)  # as HeardNotes picks
        mono = dry(event, source, key, variant)
        if not mono.size:
            continue
        if made_at != RATE:
            mono = signal.resample_poly(mono, RATE // made_at, 1).astype(np.float32)
        end = onset + len(mono)
        total = max(total, end)
        for k in range(onset // piece, (end - 1) // piece + 1):
            block = held.get(k)
            if block is None:
                block = held[k] = np.zeros((piece, len(groups)), np.float32)
            lo, hi = max(onset, k * piece), min(end, (k + 1) * piece)
            block[lo - k * piece:hi - k * piece, stem] += mono[lo - onset:hi - onset]
    while given * piece < total:
        yield piece_at(given)[:total - given * piece]
        given += 1


def _sends(court, points: list[tuple], seed: int) -> list[dict[str, float]]:
    """Per point, per listening spot, the send gain of the render's late tail (``Tail.route``)."""
    from soundscape.site.listeners import Listener
    from soundscape.sound.buses import Upsampler
    from soundscape.sound.panning import make_panner
    from soundscape.sound.tail import Tail

    found: list[dict[str, float]] = [{} for _ in points]
    air = Air()
    for spot, (x, y, _) in court.zones:
        tail = Tail(court, Listener((x, y, EAR_M), "north"), make_panner("stereo"), 2, IR_RATE,
                    air, seed, upsampler=Upsampler)
        for k, point in enumerate(points):
            found[k][spot] = round(tail.route(tuple(float(v) for v in point))[1], 4)
    return found


def write_stems(folder: Path, performance: Performance, *, court, listen_at, seed: int,
                calibration_lufs: float, voice: Voice | None = None,
                piece_s: float | None = None) -> dict[str, Any]:
    """Write the programme's stems into ``folder`` and return their description for the page
    (files relative to the kit folder, ``folder``'s parent): see the module. ``piece_s``:
    seconds a file holds (``PIECE_S``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("stem.*.flac"):  # an earlier build's: none left unlisted
        old.unlink()
    air = Air()
    piece = round((piece_s or PIECE_S) * RATE)
    groups = adm.group_sources(performance, MAX_STEMS, "the kit page's stems")
    placed = len(groups)
    groups += adm.group_bed(performance, MAX_BED_STEMS)
    tracks = adm.source_tracks(performance)
    stems: list[dict[str, Any]] = []
    for k, group in enumerate(groups):
        places = adm.group_places(group, tracks)
        sources = [performance.sources[m] for m in group.sources]
        stems.append({
            "files": [], "scales": [], "sources": list(group.sources),
            "name": adm.group_name(group, [s.name for s in sources]),
            "roman": adm.group_name(group, [s.roman for s in sources]),
            "track": [[round(t, 3), *(round(float(v), 3) for v in p)] for t, p in places],
            "zone": court.zone(places[0][1])[0] if court is not None else None,
            "bed": k >= placed,
            **({"turns": [[t.source, round(t.start, 3), round(t.end, 3)] for t in group.turns]}
               if group.turns else {})})
    # the page's overall gain: the dry stems heard at 1/r from the first listening place
    # measure ``calibration_lufs`` (BS.1770; the direct sound only, the court adds to it)
    spread = np.asarray([1 / max(1.0, math.dist(listen_at, s["track"][0][1:])) for s in stems],
                        dtype=np.float32)
    meter = LoudnessMeter(RATE, np.ones(1))
    frames = 0
    for number, audio in enumerate(_dry_pieces(performance, groups, voice=voice or SynthVoice(),
                                               seed=seed, piece=piece)):
        frames += len(audio)
        meter.add(np.asarray(audio @ spread, dtype=float)[:, None])
        for k, stem in enumerate(stems):
            peak = float(np.abs(audio[:, k]).max())
            if peak == 0.0:  # silent: no file, nothing for the page to decode
                stem["files"].append(None)
                stem["scales"].append(0.0)
                continue
            name = folder / f"stem.{k + 1:02d}.{number:03d}.flac"
            # each piece at half its peak (24 bits for its own range), the page scales it back
            soundfile.write(name, audio[:, k] * (0.5 / peak), RATE, subtype="PCM_24")
            stem["files"].append(f"{folder.name}/{name.name}")
            stem["scales"].append(float(f"{peak / 0.5:.9g}"))  # float32's precision and more
    if court is not None:
        for stem, sends in zip(stems, _sends(court, [s["track"][0][1:] for s in stems], seed),
                               strict=True):
            stem["sends"] = sends
            stem["early"] = {spot: early_images(court, tuple(stem["track"][0][1:]),
                                                (x, y, EAR_M), air.speed_of_sound)
                             for spot, (x, y, _) in court.zones}
    loudness = meter.integrated()
    gain_db = calibration_lufs - loudness if math.isfinite(loudness) else 0.0
    return {"rate": RATE, "piece_s": piece / RATE, "frames": frames, "gain_db": round(gain_db, 2),
            "speed_of_sound": round(air.speed_of_sound, 3),
            "air": {"hz": AIR_HZ,
                    "db_per_m": float(air.absorption_db_per_m(np.asarray([AIR_HZ]))[0])},
            "stems": stems}


def court_responses(folder: Path, court, *, seed: int) -> list[dict[str, Any]]:
    """Write each court zone's response at each listening spot into ``folder`` (see the
    module) and return them for the page: zone, spot ``[x, y]``, files (loudspeaker pairs),
    the loudspeakers' azimuths, gain."""
    folder.mkdir(parents=True, exist_ok=True)
    found = []
    for zone, point in court.zones:
        for spot, (x, y, _) in court.zones:
            ir, gain = _response(court, tuple(point), (x, y, EAR_M), seed)
            files = []
            for pair in range(ir.shape[1] // 2):
                name = folder / f"ir.{zone}.{spot}.{pair}.flac"
                soundfile.write(name, ir[:, 2 * pair:2 * pair + 2], IR_RATE, subtype="PCM_24")
                files.append(f"{folder.name}/{name.name}")
            found.append({"zone": zone, "spot": spot, "x": round(x, 3), "y": round(y, 3),
                          "files": files, "azimuths": list(RING_DEG), "gain": gain,
                          "rate": IR_RATE})
    return found


def early_images(court, point, ear, speed: float) -> list[list[float]]:
    """The early reflections of a source at ``point`` heard at ``ear`` (see the module):
    ``[x, y, z, gain at 1 kHz, sx, sy, sz]`` per image, nearest first."""
    direct = math.dist(point, ear)
    images = court.images(point, ear, reach_m=direct + court.model.early_ms * 1e-3 * speed)
    early = court.split(images, speed) & (images.order > 0)
    order = np.argsort(images.distance[early])
    return [[*(round(float(v), 3) for v in p), round(float(g), 4), *(int(v) for v in sg)]
            for p, g, sg in zip(images.points[early][order],
                                images.amplitude[early][order, _KHZ],
                                images.signs[early][order], strict=True)]


@functools.lru_cache(maxsize=64)
def _response(court, source: tuple, ear: tuple, seed: int) -> tuple[np.ndarray, float]:
    """The ring's response's late part (see the module), rendered at ``IR_RATE`` (what is
    left of it, the late tail, is made at 8 kHz), peak 0.9, and the gain that restores its
    level (a click of 1 at 1 m)."""
    from soundscape.site.listeners import Listener
    from soundscape.sound.impulse import impulse_response

    surroundings = Surroundings(court=court)
    ir = impulse_response(source, Listener(ear, "north"), surroundings=surroundings,
                          layout=RING_DEG, sample_rate=IR_RATE, seed=seed)
    direct = math.dist(source, ear) / surroundings.air.speed_of_sound
    cut, fade = (round((direct + court.model.early_ms * 1e-3) * IR_RATE),
                 round(_FADE_S * IR_RATE))
    ir[:cut] = 0.0
    ir[cut:cut + fade] *= np.sin(np.linspace(0, np.pi / 2, fade))[:len(ir) - cut, None] ** 2
    low = ir[:round(IR_S * IR_RATE)]
    peak = float(np.abs(low).max()) or 1.0
    return (low * (0.9 / peak)).astype(np.float32), peak / 0.9
