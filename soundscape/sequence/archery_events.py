"""The shooting rounds as sound: placed sources and Performance events of a simulated round.

For each arrow: the bow's release at the archer's 物 on the hall, the arrow's
flight (a few overlapping whoosh segments along the path, so the sound travels),
the hit or miss at the target, arriving at release + distance / arrow speed;
for each hit the 獲者 calls 獲 from the 乏 of that target, raising the flag
以宮 and lowering it 以商; for each counted hit the 釋獲者 lays a 算 at the 中
(clicks), taking 八算 before each pair and returning the rest after it. The
司射's command opens the round. After a counted round, :func:`count_events`
gives the counting clicks and the spoken result (右賢於左 …).

Instruments: ``bow``, ``arrow``, ``target``, ``tally`` (this package's models
``bowstring``, ``arrow``, ``impact``, ``tally``) and ``voice`` (articulation ``call``).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from soundscape.performance import Event, Round, Source
from soundscape.physics import speed_of_sound
from soundscape.sequence.archery import (
    ArcheryConfig,
    ArcheryError,
    load_config,
    place_of,
    release_point,
)
from soundscape.text import prosody
from soundscape.text.reading import checked, read

__all__ = ["CUE_ROLES", "archery_sources", "count_events", "round_events", "source_ids"]

# What each event's cue says it came from. ``shoot`` is required; the others fall
# back to it: command (司射's 命), raise_flag / lower_flag (the 獲者's voice cues),
# tally (釋獲), announce (告於公 after 視算).
CUE_ROLES = ("shoot", "command", "raise_flag", "lower_flag", "tally", "announce")
_ARTICULATION = {"hu": "leather", "hou": "cloth", "liu": "ground", "yang": "ground",
                 "fang": "ground"}


def source_ids(config: ArcheryConfig | None = None) -> dict[str, str]:
    """The source ids, by role (``bow.shang``, ``huozhe.gan`` …): one target and one 獲者
    for each of the rite's targets (``config``; None → the bundled 大射's)."""
    config = config or load_config()
    ids = {"bow.shang": "archery.bow.shang", "bow.xia": "archery.bow.xia",
           "arrow": "archery.arrow", "tally": "archery.tally", "sishe": "voice.sishe",
           "shihuozhe": "voice.shihuozhe"}
    for target in config.get("targets"):
        ids[f"target.{target}"] = f"archery.target.{target}"
        ids[f"huozhe.{target}"] = f"voice.huozhe.{target}"
    return ids


def archery_sources(site: Any, *, config: ArcheryConfig | None = None,
                    cue: str = "") -> dict[str, Source]:
    """The placed sources the archery events sound from, keyed by ``Source.id``.

    Parameters
    ----------
    site : Site
        Needs ``wu``, the rite's targets and their 乏 (``targets.<id>.fa``), ``zhong``,
        and the places ``places.sishe`` and ``places.shihuozhe`` of the config name (大射:
        the 司射 commands 由堂下西階之東, the 釋獲者 announces 阼階下).
    config : ArcheryConfig
    cue : str
        The cue-sheet entry that placed them (e.g. the 張侯 or 請射 step).
    """
    config = config or load_config()
    ids = source_ids(config)
    standing, seated = site.people["standing_mouth"], site.people["seated_mouth"]
    north = (0.0, 1.0, 0.0)
    south = (0.0, -1.0, 0.0)

    def at(place: str, height: float) -> tuple[float, float, float]:
        x, y, z = place_of(site, place)
        return (x, y, z + height)

    sources = [
        Source(ids["bow.shang"], "bow", "上射之物 弓", "bow, upper archer's mark", "archery",
               release_point(site, "shang", config=config), south, cue=cue),
        Source(ids["bow.xia"], "bow", "下射之物 弓", "bow, lower archer's mark", "archery",
               release_point(site, "xia", config=config), south, cue=cue),
        Source(ids["arrow"], "arrow", "矢", "arrow in flight", "archery",
               release_point(site, "shang", config=config), south, cue=cue),
        Source(ids["tally"], "tally", "中 算", "tally holder and counters", "archery",
               at("zhong", config.number("heights", "zhong_m")), north, cue=cue),
        Source(ids["sishe"], "voice", "司射", "director of archery", "voice",
               at(config.get("places", "sishe"), standing), north, cue=cue),
        Source(ids["shihuozhe"], "voice", "釋獲者", "tally keeper", "voice",
               at(config.get("places", "shihuozhe"), standing), north, cue=cue),
    ]
    for target in config.get("targets"):
        name = config.get("targets", target, "name")
        sources.append(Source(ids[f"target.{target}"], "target", name, f"target {target}",
                              "archery", place_of(site, target), north, cue=cue))
        fa = config.get("targets", target, "fa")
        sources.append(Source(ids[f"huozhe.{target}"], "voice", f"{name}獲者",
                              f"hit caller at the {target} shelter", "voice",
                              at(fa, seated), north, cue=cue))
    return {s.id: s for s in sources}


def _cues(cue_ids: Mapping[str, str]) -> dict[str, str]:
    unknown = set(cue_ids) - set(CUE_ROLES)
    if "shoot" not in cue_ids or unknown:
        raise ArcheryError(f"cue_ids {dict(cue_ids)!r}: 'shoot' is required and keys must be "
                           f"among {', '.join(CUE_ROLES)}")
    return {role: cue_ids.get(role, cue_ids["shoot"]) for role in CUE_ROLES}


def _need(sources: Mapping[str, Source], source_id: str) -> Source:
    if source_id not in sources:
        raise ArcheryError(f"source {source_id!r} missing; build sources with archery_sources()")
    return sources[source_id]


def round_events(result: Round, *, sources: Mapping[str, Source], tuning: Any,
                 cue_ids: Mapping[str, str], config: ArcheryConfig | None = None,
                 gong: str = "黃鍾") -> list[Event]:
    """The sound events of a simulated round, sorted by time.

    Parameters
    ----------
    result : Round
        From :func:`soundscape.sequence.archery.simulate_round`.
    sources : mapping of id → Source
        From :func:`archery_sources` (merged into the performance's sources).
    tuning : Tuning
        ``soundscape.music.tuning.Tuning``; calls are pitched with ``tuning.degree``.
    cue_ids : mapping role → cue-sheet id
        Roles in ``CUE_ROLES``; ``shoot`` required, the rest fall back to it.
    config : ArcheryConfig, optional
        None → the bundled ``archery.toml``.
    gong : str
        The 律 that is 宮 in the current mode (貍首's in round three).
    """
    config = config or load_config()
    cues = _cues(cue_ids)
    ids = source_ids(config)
    gong_pitch = tuning.degree(gong=gong, degree="宮")
    shang_pitch = tuning.degree(gong=gong, degree="商")
    events = _command(result, config, cues["command"], _spoken(tuning, gong, config),
                      ids["sishe"])
    sound_speed = speed_of_sound()
    zhong = _need(sources, ids["tally"]).position
    velocity = config.get("velocity")
    calls = config.get("calls")
    lengths = config.get("lengths")
    lays: dict[int, list[float]] = {}
    for shot in result.shots:
        events.append(Event(shot.release, lengths["release_s"], ids[f"bow.{shot.role}"], None,
                            _release_energy(velocity, shot, result.number), "release",
                            cues["shoot"]))
        events += _flight(shot, ids["arrow"], velocity["arrow"], cues["shoot"],
                          int(velocity["flight_segments"]))
        hit = shot.outcome in ("hu", "hou")
        events.append(Event(shot.arrival, lengths["impact_s"], ids[f"target.{shot.target}"], None,
                            velocity["hit" if hit else "miss"], _ARTICULATION[shot.outcome],
                            cues["shoot"], position=shot.impact))
        if not shot.called:
            continue
        huozhe = _need(sources, ids[f"huozhe.{shot.target}"])
        raise_at = shot.arrival + calls["reaction_s"]
        lower_at = raise_at + calls["call_s"] + calls["flag_gap_s"]
        events.append(Event(raise_at, calls["call_s"], huozhe.id, gong_pitch, calls["velocity"],
                            "call", cues["raise_flag"], lyric="獲"))
        events.append(Event(lower_at, calls["call_s"], huozhe.id, shang_pitch,
                            calls["velocity"], "call", cues["lower_flag"], lyric="獲"))
        if shot.counted:
            heard = raise_at + math.dist(huozhe.position, zhong) / sound_speed
            lay = heard + config.number("tally", "reaction_s")
            lays.setdefault(shot.turn, []).append(lay)
            events.append(Event(lay, lengths["tally_s"], ids["tally"], None, velocity["tally"],
                                "lay", cues["tally"]))
    events += _take_and_return(result, lays, ids["tally"], velocity["tally"], cues["tally"],
                               config)
    return sorted(events, key=lambda e: e.time)


def _release_energy(velocity: Mapping[str, float], shot: Any, round_no: int) -> float:
    """A release's velocity: ``bow`` moved by the archer's bow (``bow_archer_db``, the same
    for every shot of his) and by this draw (``bow_shot_db``), normal scatters in dB drawn
    from his id and from the shot; at most 1."""
    archer = zlib.crc32(shot.archer.encode("utf-8"))
    bow = np.random.default_rng([archer, 0xB0]).standard_normal()
    draw = np.random.default_rng([archer, 0xD7, round_no, shot.turn, shot.arrow,
                                  round(shot.release * 1000)]).standard_normal()
    db = velocity["bow_archer_db"] * bow + velocity["bow_shot_db"] * draw
    return float(min(1.0, velocity["bow"] * 10.0 ** (db / 20.0)))


def _command(result: Round, config: ArcheryConfig, cue: str, pitch: Any,
             source: str) -> list[Event]:
    """The 司射's command before the round: one phrase, called."""
    if result.number == 0:
        return []
    words = config.get("commands", str(result.number))
    first = min(s.release for s in result.shots)
    start = max(0.0, first - config.number("calls", "command_lead_s"))
    return [Event(start, _called_seconds(words), source, pitch,
                  config.number("calls", "command_velocity"), "call", cue, lyric=words)]


def _called_seconds(words: str) -> float:
    """How long a called phrase lasts: its syllables by the prosody's rules (the default
    reading's checked syllables short, the last lengthened; ``text.prosody``)."""
    return prosody.phrase_seconds([checked(s) for s in read(words)], "call")


def _spoken(tuning: Any, gong: str, config: ArcheryConfig) -> Any:
    """宮 in the octave nearest the speaking voice (``calls.speaking_hz``): a phrase called
    on it is raised above it by the voice, as any called phrase is."""
    near = config.number("calls", "speaking_hz")
    octave = round(math.log2(near / tuning.degree(gong=gong, degree="宮").hz))
    return tuning.degree(gong=gong, degree="宮", octave=octave)


def _flight(shot: Any, source: str, velocity: float, cue: str, segments: int) -> list[Event]:
    """Overlapping whoosh segments along the path, each placed at its middle."""
    out = []
    length = shot.flight / segments
    for i in range(segments):
        middle = (i + 0.5) / segments
        where = tuple(a + middle * (b - a) for a, b in zip(shot.origin, shot.impact,
                                                              strict=True))
        start = shot.release + max(0.0, (i - 0.5) * length)
        end = min(shot.arrival, shot.release + (i + 1.5) * length)
        out.append(Event(start, end - start, source, None, velocity, "fly", cue,
                         position=where))
    return out


def _take_and_return(result: Round, lays: Mapping[int, list[float]], source: str,
                     velocity: float, cue: str, config: ArcheryConfig) -> list[Event]:
    out = []
    for tally in result.tallies:
        shots = [s for s in result.shots if s.turn == tally.turn]
        first = min(s.release for s in shots)
        take = max(0.0, first - config.number("tally", "take_before_s"))
        out.append(Event(take, 0.6, source, None, velocity, "take", cue))
        if tally.returned:
            last = max([s.arrival for s in shots] + lays.get(tally.turn, []))
            out.append(Event(last + config.number("tally", "return_after_s"), 0.6, source,
                             None, velocity, "take", cue))
    return out


def count_events(result: Round, *, start: float, sources: Mapping[str, Source],
                 tuning: Any, cue_ids: Mapping[str, str], config: ArcheryConfig | None = None,
                 gong: str = "黃鍾") -> list[Event]:
    """視算 after a counted round: one click per 純 (and 奇) taken into the hand, right
    side then left, then the 釋獲者's announcement at 阼階下, one called phrase.

    ``start`` is the time (s) the 釋獲者 begins to count; the events come back sorted.
    """
    if result.right is None or result.left is None or result.announcement is None:
        raise ArcheryError(f"round {result.number} has no tally to count (rounds 2 and 3)")
    config = config or load_config()
    cues = _cues(cue_ids)
    ids = source_ids(config)
    _need(sources, ids["tally"])
    step = config.number("tally", "count_s")
    velocity = config.get("velocity")["tally"]
    events, time = [], start
    for side in (result.right, result.left):
        for _ in range(side.chun + side.qi):
            events.append(Event(time, config.number("lengths", "tally_s"), ids["tally"], None,
                                velocity, "count", cues["tally"]))
            time += step
        time += 2 * step                 # 興自前適左, 東面坐: he moves to the left side
    events.append(Event(time, _called_seconds(result.announcement),
                        _need(sources, ids["shihuozhe"]).id, _spoken(tuning, gong, config),
                        config.number("calls", "command_velocity"), "call",
                        cues["announce"], lyric=result.announcement))
    return events
