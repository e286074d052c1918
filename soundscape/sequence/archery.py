"""The shooting rounds of the 大射儀 and the 鄉射禮: who shoots when, what hits, what is counted.

The structure is the rite's data (``soundscape/data/archery.toml``; a rite's table there,
``[rite.<id>]``, replaces what differs: the 鄉射 has one 侯, its 三耦, 賓與主人, 大夫 and
衆賓, and 騶虞's 五節 of which 一節先以聽). The 大射 is described here; both texts
run four shoots, numbered here 0–3:

- 0, 誘射: the 司射 alone, four arrows 「始射干又射參大侯再發」; no 獲者 yet.
- 1, 初射: the 三耦; hits are called but not counted (獲而未釋獲).
- 2, 再射: everyone (三耦, the duke with the 賓, 卿, 大夫, 衆耦) with 釋獲.
- 3, 三射: the same, shot to 貍首: a hit counts only when the release falls on a
  drum (不鼓不釋, within ``tolerance_s``); the duke's arrows are free of the
  music (不以樂志) and, as in round two, count wherever they strike his 侯.

Each archer looses four arrows (乘矢), the pair alternately (拾發), 上射 first
except that the duke, though 下射, looses first (鄭注 「公下射也而先發」). A pair
shoots at the target of its senior member (「卑者與尊者為耦不異侯」). An arrow
lands by an aim spread in angle (per archer) plus the spread of its drop from
launch-speed variation, so distance matters; it flies at ``arrow.speed_m_s``.
The tally: 八算 per pair, one 算 per counted hit, right for the 上射 and left for
the 下射; then counted by 純 (pairs) and 奇 and announced (右賢於左 …).

All numbers live in ``soundscape/data/archery.toml`` with their sources.
The sound events of a simulated round are made by :mod:`soundscape.sequence.archery_events`
(re-exported here: :func:`round_events`, :func:`archery_sources`, :func:`count_events`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from soundscape import validate
from soundscape.errors import ArcheryError
from soundscape.fileio import read_toml, write_texts
from soundscape.geometry import Vec3
from soundscape.performance import Round, Shot, SideCount, Turn, TurnTally
from soundscape.resources import data_dir

__all__ = [
    "ROUND_NAMES",
    "Archer",
    "ArcheryConfig",
    "ArcheryError",
    "Pair",
    "PlannedShot",
    "Shot",
    "SideCount",
    "TurnPlan",
    "TurnTally",
    "announcement",
    "build_roster",
    "count_side",
    "even_jie_times",
    "hu_probability",
    "lay_out_turns",
    "load_config",
    "place_of",
    "release_point",
    "simulate_round",
    "target_point",
    "write_results",
]


ROUND_NAMES = {0: "誘射", 1: "初射獲而未釋獲", 2: "再射釋獲", 3: "三射用樂"}
ROLES = ("shang", "xia")
HIT_OUTCOMES = ("hu", "hou")          # 鵠 (貫), the 侯 cloth outside the 鵠
MISS_OUTCOMES = ("liu", "yang", "fang")  # 留 short, 揚 over, 方 beside (大射正's words)
_NUMERALS = "一二三四五六七八九"


# -- configuration -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ArcheryConfig:
    """The parsed ``archery.toml``; see that file for the meaning and source of each value."""

    data: Mapping[str, Any]
    source: str

    def get(self, *keys: str) -> Any:
        """The value at a dotted path of tables, e.g. ``get("music", "tolerance_s")``."""
        value: Any = self.data
        for i, key in enumerate(keys):
            if not isinstance(value, Mapping) or key not in value:
                raise ArcheryError(f"{self.source}: missing key {'.'.join(keys[:i + 1])!r}")
            value = value[key]
        return value

    def number(self, *keys: str, low: float = 0.0) -> float:
        """A number at a dotted path, checked to be finite and ≥ ``low``."""
        return validate.number(self.get(*keys), key=".".join(keys), where=self.source,
                               error=ArcheryError, low=low)


#: Most pairs of one group in a roster (the rite's are 3 三耦 and a few more).
ROSTER_PAIRS = 100

_REQUIRED_NUMBERS = (
    ("arrow", "speed_m_s"), ("arrow", "speed_sd"), ("arrow", "gravity_m_s2"),
    ("miss", "fang_side_halves"), ("lengths", "release_s"), ("lengths", "impact_s"),
    ("lengths", "tally_s"), ("wu", "spacing_chi"), ("wu", "release_height_m"),
    ("site", "chi_m"), ("timing", "first_release_s"), ("timing", "shot_interval_s"),
    ("timing", "changeover_s"), ("music", "heard_jie"), ("music", "shot_jie"),
    ("music", "first_stroke_phase"), ("music", "tolerance_s"), ("music", "default_jie_s"),
    ("music", "default_turn_gap_s"), ("roster", "skill_spread"),
    ("tally", "counts_per_turn"),
)


def load_config(path: str | Path | None = None, *, rite: str | None = None) -> ArcheryConfig:
    """Read and check an archery data file (None → the bundled ``archery.toml``).

    Parameters
    ----------
    path : path or None
    rite : str or None
        A rite id: its table ``[rite.<id>]`` in the file is read over the others (tables
        merge key by key; those its ``replace`` list names are taken whole). A rite
        without a table (the 大射) reads the file as it is.

    Raises
    ------
    ArcheryError
        If the file is not TOML or a required value is missing or out of range.
    """
    path = Path(path) if path is not None else data_dir() / "archery.toml"
    data = read_toml(path, ArcheryError)
    rites = data.pop("rite", {})
    source = str(path)
    if rite is not None and rite in rites:
        data = _merged(data, rites[rite], f"{path}: rite.{rite}")
        source = f"{path} [rite.{rite}]"
    config = ArcheryConfig(data, source)
    for keys in _REQUIRED_NUMBERS:
        config.number(*keys)
    for key in ("bow", "arrow", "hit", "miss", "tally"):
        validate.number(config.get("velocity", key), key=f"velocity.{key}", where=source,
                        error=ArcheryError, low=0.0, high=1.0, low_open=True)
    for key in ("bow_archer_db", "bow_shot_db"):
        validate.number(config.get("velocity", key), key=f"velocity.{key}", where=source,
                        error=ArcheryError, low=0.0, high=6.0, unit="dB")
    if config.number("arrow", "speed_m_s") <= 0:
        raise ArcheryError(f"{source}: arrow.speed_m_s must be > 0")
    for rank in config.get("ranks", "order"):
        config.number("ranks", "skill", rank, "aim_sd_mrad")
        config.number("ranks", "skill", rank, "timing_sd_s")
        if config.get("ranks", "target", rank) not in config.get("targets"):
            raise ArcheryError(f"{source}: ranks.target.{rank} names an unknown target")
    _check_groups(config)
    _check_turn_walk(config)
    return config


def _merged(base: Mapping[str, Any], rite: Any, where: str) -> dict[str, Any]:
    """``base`` with a rite's table read over it (see :func:`load_config`)."""
    if not isinstance(rite, Mapping):
        raise ArcheryError(f"{where} must be a table")
    whole = rite.get("replace", [])
    if not isinstance(whole, list) or not all(isinstance(k, str) for k in whole):
        raise ArcheryError(f"{where}.replace = {whole!r} must be a list of dotted keys")

    def merge(into: dict[str, Any], over: Mapping[str, Any], prefix: str) -> dict[str, Any]:
        for key, value in over.items():
            dotted = f"{prefix}{key}"
            if isinstance(value, Mapping) and isinstance(into.get(key), dict) \
                    and dotted not in whole:
                into[key] = merge(dict(into[key]), value, f"{dotted}.")
            else:
                into[key] = value
        return into

    return merge(dict(base), {k: v for k, v in rite.items() if k != "replace"}, "")


def _check_groups(config: ArcheryConfig) -> None:
    """Each roster group names its archers' ranks (known ones) and how many pairs it has."""
    groups = config.get("roster", "group")
    known = set(config.get("ranks", "order"))
    for index, group in enumerate(groups):
        where = f"{config.source}: roster.group[{index}]"
        if not isinstance(group, Mapping) or "id" not in group:
            raise ArcheryError(f"{where} must be a table with an id")
        named = "archers" in group
        needed = ("name", "archers") if named else ("count", "label", "shang", "xia")
        missing = [key for key in needed if key not in group]
        if missing:
            raise ArcheryError(f"{where} ({group['id']}) needs {', '.join(missing)}")
        archers = group["archers"] if named else []
        if named and sorted(str(a.get("role")) for a in archers) != ["shang", "xia"]:
            raise ArcheryError(f"{where} ({group['id']}): archers must be one 上射 (role "
                               "\"shang\") and one 下射 (role \"xia\"), each with id, name, rank")
        ranks = [a.get("rank") for a in archers] if named else [group["shang"], group["xia"]]
        if any(rank not in known for rank in ranks):
            raise ArcheryError(f"{where}: ranks {ranks!r}; accepted: {', '.join(sorted(known))}")
        if not named:
            config.get("roster", group["count"])
    for group_id in config.get("roster", "first_round"):
        if group_id not in {g["id"] for g in groups}:
            raise ArcheryError(f"{config.source}: roster.first_round names {group_id!r}, "
                               "not a roster group")


def _check_turn_walk(config: ArcheryConfig) -> None:
    """``[turn_walk]``, where there is one: known roster groups, words, seconds in range."""
    if "turn_walk" not in config.data:
        return
    walk, where = config.get("turn_walk"), f"{config.source}: turn_walk"
    if not isinstance(walk, Mapping):
        raise ArcheryError(f"{where} must be a table")
    groups = {g["id"] for g in config.get("roster", "group")}
    named = walk.get("groups")
    if not isinstance(named, list) or not all(isinstance(g, str) and g in groups
                                              for g in named):
        raise ArcheryError(f"{where}.groups = {named!r}; accepted: a list of roster groups "
                           f"({', '.join(sorted(groups))})")
    for key in ("from", "up", "down"):
        if not isinstance(walk.get(key), str) or not 0 < len(walk[key]) <= 200:
            raise ArcheryError(f"{where}.{key} = {walk.get(key)!r}; accepted: a text of "
                               "1 to 200 characters")
    told = walk.get("told_by", [])
    if not isinstance(told, list) or not all(isinstance(t, str) for t in told):
        raise ArcheryError(f"{where}.told_by = {told!r}; accepted: a list of actors")
    if not isinstance(walk.get("first_up", ""), str):
        raise ArcheryError(f"{where}.first_up = {walk['first_up']!r}; accepted: words")
    for key in ("settle_s", "after_s"):
        validate.number(walk.get(key), key=f"turn_walk.{key}", where=config.source,
                        error=ArcheryError, low=0.0, high=60.0)


# -- who shoots ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Archer:
    """One archer.

    Parameters
    ----------
    id : str
        Unique key, e.g. ``gong``, ``bin``, ``sanou.1.shang``.
    name : str
        Chinese name, e.g. ``公``, ``上耦上射``.
    rank : str
        ``gong``, ``qing``, ``dafu``, ``shi`` or ``sishe``.
    aim_sd_mrad : float > 0, milliradians
        Angular spread of the aim on each axis.
    timing_sd_s : float >= 0, seconds
        Spread of the release around the drum stroke aimed at (round three).
    """

    id: str
    name: str
    rank: str
    aim_sd_mrad: float
    timing_sd_s: float

    def __post_init__(self) -> None:
        if not self.aim_sd_mrad > 0 or not self.timing_sd_s >= 0:
            raise ArcheryError(f"archer {self.id!r}: aim_sd_mrad={self.aim_sd_mrad!r} must be "
                               f"> 0 and timing_sd_s={self.timing_sd_s!r} ≥ 0")


@dataclass(frozen=True, slots=True)
class Pair:
    """A 耦: the 上射 and 下射, their group and the target they share.

    ``group`` is the id of its roster group (大射: ``sanou`` 三耦, ``gong`` the duke and
    the 賓, ``qing``, ``dafu``, ``zhongou`` 衆耦; 鄉射: ``sanou``, ``binzhu`` 賓與主人,
    ``dafu``, ``zhongbin`` 衆賓). ``duke_first``: the 下射 looses first (the duke's pair).
    """

    id: str
    name: str
    group: str
    shang: Archer
    xia: Archer
    target: str
    duke_first: bool = False


def _archer(config: ArcheryConfig, rng: np.random.Generator, id_: str, name: str,
            rank: str) -> Archer:
    spread = config.number("roster", "skill_spread")
    aim = config.number("ranks", "skill", rank, "aim_sd_mrad") * math.exp(rng.normal(0, spread))
    timing = config.number("ranks", "skill", rank, "timing_sd_s")
    return Archer(id_, name, rank, aim, timing)


def _pair_target(config: ArcheryConfig, shang: Archer, xia: Archer) -> str:
    order = list(config.get("ranks", "order"))
    senior = max((shang, xia), key=lambda a: order.index(a.rank))
    return config.get("ranks", "target", senior.rank)


def build_roster(*, config: ArcheryConfig, rng: np.random.Generator,
                 counts: Mapping[str, int] | None = None) -> tuple[Pair, ...]:
    """The pairs in shooting order, group by group as ``roster.group`` lists them (大射:
    三耦, the duke with the 賓, 卿, 大夫, 衆耦; 鄉射: 三耦, 賓與主人, 大夫, 衆賓).

    Parameters
    ----------
    config : ArcheryConfig
    rng : numpy.random.Generator
        Draws each archer's skill around the rank value (``roster.skill_spread``), in
        the order the groups list their archers.
    counts : mapping, optional
        Overrides of the ``roster`` counts the groups name (大射: ``sanou``,
        ``qing_pairs``, ``dafu_pairs``, ``zhongou``; 鄉射: ``sanou``, ``dafu_pairs``,
        ``zhongbin_pairs``).
    """
    groups = config.get("roster", "group")
    keys = [g["count"] for g in groups if "count" in g]
    unknown = set(counts or {}) - set(keys)
    if unknown:
        raise ArcheryError(f"roster counts {sorted(unknown)!r} are not this rite's; "
                           f"accepted: {', '.join(keys)}")
    counts = {**{k: config.get("roster", k) for k in keys}, **(counts or {})}
    for key, value in counts.items():
        validate.whole(value, key=f"roster.{key}", where=config.source, error=ArcheryError,
                       low=0, high=ROSTER_PAIRS)
    first = config.get("roster", "first_round")
    for group in groups:
        if group["id"] in first and counts.get(group.get("count"), 1) < 1:
            raise ArcheryError(f"roster count {group['count']}=0: the rite needs the "
                               f"{group.get('label', group['id'])} of the first round "
                               "(at least 1 pair)")
    pairs: list[Pair] = []
    for group in groups:
        if "archers" in group:
            pairs.append(_named_pair(config, rng, group))
        else:
            pairs += _pairs(config, rng, group, counts[group["count"]])
    return tuple(pairs)


def _named_pair(config: ArcheryConfig, rng: np.random.Generator,
                group: Mapping[str, Any]) -> Pair:
    """A pair of named archers (公與賓, 賓與主人), drawn in the order the data lists them."""
    drawn = {a["role"]: _archer(config, rng, a["id"], a["name"], a["rank"])
             for a in group["archers"]}
    shang, xia = drawn["shang"], drawn["xia"]
    return Pair(group["id"], group["name"], group["id"], shang, xia,
                _pair_target(config, shang, xia), duke_first=group.get("first") == "xia")


def _pairs(config: ArcheryConfig, rng: np.random.Generator, group: Mapping[str, Any],
           count: int) -> list[Pair]:
    group_id, label = group["id"], group["label"]
    names = group.get("names", [])
    out = []
    for i in range(1, count + 1):
        name = names[i - 1] if i <= len(names) else f"{label}{i}"
        shang = _archer(config, rng, f"{group_id}.{i}.shang", f"{name}上射", group["shang"])
        xia = _archer(config, rng, f"{group_id}.{i}.xia", f"{name}下射", group["xia"])
        out.append(Pair(f"{group_id}.{i}", name, group_id, shang, xia,
                        _pair_target(config, shang, xia)))
    return out


def _sishe(config: ArcheryConfig) -> Archer:
    return Archer("sishe", "司射", "sishe", config.number("ranks", "skill", "sishe", "aim_sd_mrad"),
                  config.number("ranks", "skill", "sishe", "timing_sd_s"))


# -- when -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PlannedShot:
    """One arrow in the turn plan.

    ``aim_time`` is when the archer means to loose (the drum stroke in round three);
    ``free_window`` (start, end) is set instead for a release not bound to the music.
    """

    archer: Archer
    role: str
    arrow: int
    target: str
    aim_time: float
    bound: bool
    free_window: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """One pair's turn (or the 司射's 誘射): its span, its arrows and its 節 (round 3)."""

    index: int
    pair: Pair | None
    start: float
    shots: tuple[PlannedShot, ...]
    jie: tuple[float, ...] = ()
    strokes: tuple[float, ...] = ()


def even_jie_times(start: float, n_turns: int, *, config: ArcheryConfig,
                   jie_s: float | None = None, gap_s: float | None = None) -> tuple[float, ...]:
    """Evenly spaced 節 (間若一) for ``n_turns`` turns, for use without the sequencer.

    Each turn's music starts ``gap_s`` after the previous turn's last 節; a 節 time
    is the drum that closes the 節, so the first falls ``jie_s`` after the music starts.
    """
    per_turn = int(config.number("music", "heard_jie") + config.number("music", "shot_jie"))
    jie_s = config.number("music", "default_jie_s") if jie_s is None else jie_s
    gap_s = config.number("music", "default_turn_gap_s") if gap_s is None else gap_s
    times, music_start = [], start
    for _ in range(n_turns):
        times += [music_start + jie_s * (k + 1) for k in range(per_turn)]
        music_start = times[-1] + gap_s
    return tuple(times)


def lay_out_turns(round_no: int, pairs: Sequence[Pair], *, config: ArcheryConfig,
                  start: float = 0.0, jie_times: Sequence[float] | None = None,
                  drum: Sequence[float] = (),
                  rng: np.random.Generator | None = None) -> tuple[TurnPlan, ...]:
    """Who shoots when: the turns of a round with each arrow's intended release.

    Parameters
    ----------
    round_no : 0, 1, 2 or 3
    pairs : sequence of Pair
        The roster in shooting order (round 1 uses only the ``sanou`` group; round 0
        none: the 司射 shoots alone).
    config : ArcheryConfig
    start : float >= 0, seconds
        When the round begins (rounds 0–2): the first release comes
        ``timing.first_release_s`` later, then one every ``shot_interval_s``
        (拾發), and ``changeover_s`` between pairs.
    rng : numpy.random.Generator or None
        Spreads each interval of rounds 0–2 (the 司射's own four too) by
        ``timing.shot_interval_spread`` (optional, 0 to 0.5; None or 0: the mean every
        time).
    jie_times : sequence of float, seconds
        Round 3 only, required: the drum 節 of the music (貍首, 騶虞), sorted, ``heard_jie
        + shot_jie`` (大射 7, 鄉射 5) per turn in turn order; each time is the drum that closes
        its 節. On each of a turn's last ``shot_jie`` 節 the pair looses one 拾:
        the first shooter on the stroke nearest ``first_stroke_phase`` into the 節, the
        second on its closing stroke (both strokes are in ``TurnPlan.strokes``
        for the drum part). The duke looses freely in ``duke_phase`` of the 節.
    drum : sequence of float, seconds
        Round 3: the 建鼓 strokes the piece already plays (its 投壺 pattern). The first
        shooter's stroke is the one of them within the 節 nearest ``first_stroke_phase``
        into it; where none is, the phase point itself (a stroke of its own).
    """
    if round_no not in ROUND_NAMES:
        raise ArcheryError(f"round {round_no!r} unknown; accepted: 0, 1, 2, 3")
    if round_no == 0:
        return (_induce_turn(config, start, rng),)
    first = config.get("roster", "first_round")
    chosen = [p for p in pairs if round_no > 1 or p.group in first]
    if not chosen:
        raise ArcheryError(f"round {round_no}: no pairs to shoot (the roster is empty)")
    if round_no == 3:
        return _music_turns(chosen, config, jie_times, drum)
    if jie_times is not None:
        raise ArcheryError(f"round {round_no}: jie_times given, but only round 3 is shot "
                           "to music")
    turns, time = [], start + config.number("timing", "first_release_s")
    for index, pair in enumerate(chosen):
        shots = []
        aim = time
        for k, (archer, role) in enumerate(_order(pair) * 4):
            if k:
                aim += _interval(config, rng)
            shots.append(PlannedShot(archer, role, k // 2 + 1, pair.target, aim, bound=False))
        turn_start = start if index == 0 else time - config.number("timing", "changeover_s")
        turns.append(TurnPlan(index, pair, turn_start, tuple(shots)))
        time = shots[-1].aim_time + config.number("timing", "changeover_s")
    return tuple(turns)


def _interval(config: ArcheryConfig, rng: np.random.Generator | None) -> float:
    """From one release to the partner's: ``shot_interval_s``, spread by
    ``shot_interval_spread`` (a normal factor, kept within 0.5–1.5) when ``rng`` is given."""
    step = config.number("timing", "shot_interval_s")
    timing = config.get("timing")
    if rng is None or "shot_interval_spread" not in timing:
        return step
    spread = validate.number(timing["shot_interval_spread"], key="timing.shot_interval_spread",
                             where=config.source, error=ArcheryError, low=0.0, high=0.5)
    return step * float(np.clip(1.0 + spread * rng.standard_normal(), 0.5, 1.5))


def _order(pair: Pair) -> tuple[tuple[Archer, str], tuple[Archer, str]]:
    first, second = (pair.shang, "shang"), (pair.xia, "xia")
    return (second, first) if pair.duke_first else (first, second)


def _induce_turn(config: ArcheryConfig, start: float,
                 rng: np.random.Generator | None) -> TurnPlan:
    """The 司射's four arrows (誘射), his releases as far apart as a pair's (``_interval``:
    he too takes, nocks and draws each; at exactly 9 s his four made the round repeat
    every 18 s)."""
    sishe = _sishe(config)
    aims = [start + config.number("timing", "first_release_s")]
    targets = config.get("induce", "targets")
    for _ in targets[1:]:
        aims.append(aims[-1] + _interval(config, rng))
    shots = tuple(PlannedShot(sishe, "xia", i + 1, target, aim, bound=False)
                  for i, (target, aim) in enumerate(zip(targets, aims, strict=True)))
    return TurnPlan(0, None, start, shots)


def _music_turns(pairs: Sequence[Pair], config: ArcheryConfig,
                 jie_times: Sequence[float] | None, drum: Sequence[float] = ()
                 ) -> tuple[TurnPlan, ...]:
    heard = int(config.number("music", "heard_jie"))
    shot = int(config.number("music", "shot_jie"))
    per_turn = heard + shot
    if jie_times is None:
        raise ArcheryError("round 3 is shot to music (貍首, 騶虞): jie_times (the drum 節, "
                           "seconds) are required")
    times = [float(t) for t in jie_times]
    if len(times) != per_turn * len(pairs):
        raise ArcheryError(
            f"round 3: {len(times)} jie_times given; {per_turn} per turn × {len(pairs)} turns "
            f"= {per_turn * len(pairs)} expected")
    if any(not math.isfinite(t) or t < 0 for t in times) or times != sorted(times) \
            or len(set(times)) != len(times):
        raise ArcheryError("round 3: jie_times must be finite, ≥ 0 and strictly increasing")
    phase = config.number("music", "first_stroke_phase")
    low, high = config.get("music", "duke_phase")
    free = config.get("music", "free_ranks")
    turns = []
    for index, pair in enumerate(pairs):
        jie = tuple(times[index * per_turn:(index + 1) * per_turn])
        period = jie[1] - jie[0]
        shots, strokes = [], []
        for k in range(shot):
            close = jie[heard + k]
            opening = jie[heard + k - 1]
            first_stroke = _stroke_near(opening + phase * (close - opening), opening, close,
                                        drum)
            strokes += [first_stroke, close]
            for (archer, role), stroke in zip(_order(pair), (first_stroke, close), strict=True):
                if archer.rank in free:
                    window = (opening + low * (close - opening), opening + high * (close - opening))
                    shots.append(PlannedShot(archer, role, k + 1, pair.target, stroke, False,
                                             window))
                else:
                    shots.append(PlannedShot(archer, role, k + 1, pair.target, stroke, True))
        turns.append(TurnPlan(index, pair, jie[0] - period, tuple(shots), jie, tuple(strokes)))
    return tuple(turns)


def _stroke_near(point: float, opening: float, close: float, drum: Sequence[float]) -> float:
    """The stroke of ``drum`` strictly between ``opening`` and ``close`` nearest ``point``
    (the earlier of two as near), else ``point``: a shooter looses on a stroke the drum
    plays, not on one added off its beat."""
    inside = [t for t in drum if opening < t < close]
    return min(inside, key=lambda t: (abs(t - point), t)) if inside else point


# -- where -----------------------------------------------------------------------------------
def place_of(site: Any, place_id: str) -> Vec3:
    """A place's position from a ``Site`` or a plain mapping id → (x, y, z)."""
    try:
        where = site.place(place_id) if hasattr(site, "place") else site[place_id]
    except KeyError as error:
        raise ArcheryError(f"site has no place {place_id!r}") from error
    return (float(where[0]), float(where[1]), float(where[2]))


def _chi_m(site: Any, config: ArcheryConfig) -> float:
    return float(getattr(site, "chi_m", None) or config.number("site", "chi_m"))


def release_point(site: Any, role: str, *, config: ArcheryConfig) -> Vec3:
    """Where the arrow leaves the bow: the 上射's 物 (west) or the 下射's (east), in metres."""
    x, y, z = place_of(site, "wu")
    half = config.number("wu", "spacing_chi") * _chi_m(site, config) / 2.0
    return (x - half if role == "shang" else x + half, y,
            z + config.number("wu", "release_height_m"))


def target_point(site: Any, target: str) -> Vec3:
    """The centre of a target's 鵠: the site's place for the target (its height included)."""
    return place_of(site, target)


def _distance(a: Vec3, b: Vec3) -> float:
    return math.dist(a, b)


# -- how well -------------------------------------------------------------------------------
def _spreads(archer: Archer, distance: float, config: ArcheryConfig) -> tuple[float, float]:
    """Horizontal and vertical spread (m, one SD) of arrows at ``distance`` metres."""
    angular = archer.aim_sd_mrad / 1000.0 * distance
    speed = config.number("arrow", "speed_m_s")
    drop = config.number("arrow", "gravity_m_s2") * distance ** 2 / (2.0 * speed ** 2)
    drop_sd = 2.0 * config.number("arrow", "speed_sd") * drop
    return angular, math.hypot(angular, drop_sd)


def hu_probability(archer: Archer, distance: float, target: str, *, config: ArcheryConfig,
                   chi_m: float) -> float:
    """Chance that an arrow hits the 鵠 of ``target`` from ``distance`` metres (analytic)."""
    half = config.number("targets", target, "hu_side_chi") * chi_m / 2.0
    sx, sy = _spreads(archer, distance, config)
    return math.erf(half / (math.sqrt(2) * sx)) * math.erf(half / (math.sqrt(2) * sy))


# -- results ---------------------------------------------------------------------------------
def count_side(total: int) -> SideCount:
    """Count a side's 算 as the text does: 二算為純, 一算為奇, 十純則縮而委之."""
    chun, qi = divmod(total, 2)
    bundles, loose = divmod(chun, 10)
    return SideCount(total, chun, qi, bundles, loose)


def _numeral(n: int) -> str:
    if not 0 < n < 100:
        raise ArcheryError(f"count {n} cannot be spoken (1–99 accepted)")
    tens, ones = divmod(n, 10)
    head = "" if tens == 0 else ("十" if tens == 1 else _NUMERALS[tens - 1] + "十")
    return head + ("" if ones == 0 else _NUMERALS[ones - 1])


def announcement(right: int, left: int) -> str:
    """What the 釋獲者 tells the duke: 右賢於左 / 左賢於右 with 純 and 奇, or 左右鈞.

    The number is the winners' surplus (賢獲, 鄭注 「齊而取其餘」), 「以純數告若有奇者亦曰奇」.
    """
    if right == left:
        return "左右鈞"
    diff = abs(right - left)
    chun, qi = divmod(diff, 2)
    words = "右賢於左" if right > left else "左賢於右"
    return words + (f"{_numeral(chun)}純" if chun else "") + (f"{_numeral(qi)}奇" if qi else "")


# -- simulation ------------------------------------------------------------------------------
def simulate_round(round_no: int, *, archers: Sequence[Pair], jie_times: Sequence[float] | None
                   = None, site: Any, rng: np.random.Generator, config: ArcheryConfig,
                   start: float = 0.0, drum: Sequence[float] = ()) -> Round:
    """Simulate one round: the round as the Performance keeps it (its turns name their
    pairs; :func:`lay_out_turns` gives the plans they were shot from). ``Round.jie``, the
    節 of the music it is shot to, is the sequencer's to add.

    Parameters
    ----------
    round_no : 0, 1, 2 or 3
        0 誘射, 1 初射 (獲而未釋獲), 2 再射 (釋獲), 3 三射 to music (不鼓不釋).
    archers : sequence of Pair
        The roster in shooting order (:func:`build_roster`).
    jie_times : sequence of float, seconds
        Round 3 only: the drum 節 of the music, ``heard_jie + shot_jie`` per turn (see
        :func:`lay_out_turns`).
    drum : sequence of float, seconds
        Round 3: the 建鼓 strokes the music plays (see :func:`lay_out_turns`).
    site : Site or mapping
        Positions of ``wu``, ``dahou``, ``can``, ``gan`` (a ``soundscape.site.courtyard.Site``
        or a mapping id → (x, y, z) metres).
    rng : numpy.random.Generator
    config : ArcheryConfig
    start : float >= 0, seconds
        Start of rounds 0–2 (round 3 takes its times from ``jie_times``).
    """
    # the intervals from a generator of their own: the arrows' flights draw as before
    turns = lay_out_turns(round_no, archers, config=config, start=start, jie_times=jie_times,
                          drum=drum, rng=rng.spawn(1)[0])
    tolerance = config.number("music", "tolerance_s")
    shots = [_shoot(round_no, turn, planned, site, rng, config, tolerance)
             for turn in turns for planned in turn.shots]
    tallies: tuple[TurnTally, ...] = ()
    right: SideCount | None = None
    left: SideCount | None = None
    words: str | None = None
    if round_no >= 2:
        tallies = tuple(_turn_tally(turn, shots, config) for turn in turns)
        right = count_side(sum(t.right for t in tallies))
        left = count_side(sum(t.left for t in tallies))
        words = announcement(right.total, left.total)
    end = max(s.arrival for s in shots)
    kept = tuple(Turn(t.index, t.pair.id if t.pair else "sishe", t.pair.name if t.pair else "司射",
                      t.start, tuple(t.jie), tuple(t.strokes)) for t in turns)
    return Round(round_no, ROUND_NAMES[round_no], min(start, turns[0].start), end, tolerance,
                 kept, tuple(shots), tallies, right, left, words)


def _shoot(round_no: int, turn: TurnPlan, planned: PlannedShot, site: Any,
           rng: np.random.Generator, config: ArcheryConfig, tolerance: float) -> Shot:
    archer = planned.archer
    if planned.free_window is not None:
        release = float(rng.uniform(*planned.free_window))
    elif planned.bound:
        release = planned.aim_time + float(rng.normal(0.0, archer.timing_sd_s))
    else:
        release = planned.aim_time
    origin = release_point(site, planned.role, config=config)
    aim = target_point(site, planned.target)
    distance = _distance(origin, aim)
    sx, sy = _spreads(archer, distance, config)
    dx, dy = float(rng.normal(0.0, sx)), float(rng.normal(0.0, sy))
    side_chi = config.number("targets", planned.target, "hu_side_chi")
    half = side_chi * _chi_m(site, config) / 2.0
    outcome = _outcome(dx, dy, half)
    impact = _impact(origin, aim, dx, dy, outcome, half, rng, config)
    flight_distance = _distance(origin, impact)
    flight = flight_distance / config.number("arrow", "speed_m_s")
    on_hou = archer.rank in config.get("tally", "hou_counts")  # the duke: his 侯 is his 鵠
    free = archer.rank in config.get("music", "free_ranks")   # 不以樂志
    called = round_no >= 1 and (outcome == "hu" or (on_hou and outcome == "hou"))
    stroke = offset = on_beat = None
    if round_no == 3:
        stroke = min(turn.strokes, key=lambda s: abs(s - release))
        offset = release - stroke
        on_beat = abs(offset) <= tolerance
    counted = called and round_no >= 2 and (free or round_no == 2 or bool(on_beat))
    return Shot(turn.index, turn.pair.id if turn.pair else "sishe", archer.id, archer.name,
                planned.role, planned.arrow, planned.target, release, origin, impact,
                flight_distance, flight, release + flight, outcome, called, planned.bound,
                stroke, offset, on_beat, counted,
                "right" if planned.role == "shang" else "left")


def _outcome(dx: float, dy: float, half: float) -> str:
    if abs(dx) <= half and abs(dy) <= half:
        return "hu"
    if abs(dx) <= 3 * half and abs(dy) <= 3 * half:
        return "hou"
    if abs(dy) >= abs(dx):
        return "liu" if dy < 0 else "yang"
    return "fang"


def _impact(origin: Vec3, aim: Vec3, dx: float, dy: float, outcome: str, half: float,
            rng: np.random.Generator, config: ArcheryConfig) -> Vec3:
    """Where the arrow strikes: on the 侯's face, or on the ground near it for a miss."""
    ux, uy = aim[0] - origin[0], aim[1] - origin[1]
    norm = math.hypot(ux, uy) or 1.0
    ux, uy = ux / norm, uy / norm
    across = (-uy, ux)
    if outcome in HIT_OUTCOMES:
        return (aim[0] + dx * across[0], aim[1] + dx * across[1], aim[2] + dy)
    low, high = config.get("miss", f"{outcome}_m")
    along = float(rng.uniform(low, high)) * (-1.0 if outcome == "liu" else 1.0)
    halves = config.number("miss", "fang_side_halves")
    side = math.copysign(max(abs(dx), halves * half), dx) if outcome == "fang" else 0.0
    return (aim[0] + along * ux + side * across[0], aim[1] + along * uy + side * across[1], 0.0)


def _turn_tally(turn: TurnPlan, shots: Sequence[Shot], config: ArcheryConfig) -> TurnTally:
    mine = [s for s in shots if s.turn == turn.index and s.counted]
    taken = int(config.number("tally", "counts_per_turn"))
    right = sum(1 for s in mine if s.side == "right")
    left = sum(1 for s in mine if s.side == "left")
    return TurnTally(turn.index, turn.pair.id if turn.pair else "sishe", taken, right, left,
                     taken - right - left)


# -- files -------------------------------------------------------------------------------------
_CSV_FIELDS = ("turn", "pair", "archer", "archer_name", "role", "arrow", "target", "release",
               "distance", "flight", "arrival", "outcome", "called", "bound", "stroke", "offset",
               "on_beat", "counted", "side")


def results_files(result: Round, out_dir: str | Path) -> dict[Path, str]:
    """``round<N>.json`` (everything) and ``round<N>.csv`` (one row per arrow) in
    ``out_dir``, each path with its text."""
    stem = Path(out_dir) / f"round{result.number}"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_CSV_FIELDS)
    for shot in result.shots:
        writer.writerow([_cell(getattr(shot, f)) for f in _CSV_FIELDS])
    return {stem.with_suffix(".json"): json.dumps(asdict(result), ensure_ascii=False, indent=1),
            stem.with_suffix(".csv"): buffer.getvalue()}


def write_results(result: Round, out_dir: str | Path) -> tuple[Path, Path]:
    """Write :func:`results_files`, both or neither; return the JSON's and the CSV's paths."""
    json_path, csv_path = write_texts(results_files(result, out_dir))
    return json_path, csv_path


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
