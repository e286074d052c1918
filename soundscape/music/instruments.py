"""Instruments as data: one TOML file per instrument, parsed into a frozen ``Instrument``.

A file names its family, its synthesis model (``model = "modal"`` selects module
``soundscape.sound.synth.modal``), the articulations it accepts, its loudness, the pitches
of its set or its range, the model parameters under ``[params]`` and the source of
every number (``sources``; estimates are marked EST). Adding an instrument is adding
a file; adding a model is adding a module (see docs/instruments.md).

The file is validated when it loads, here, without importing any sound code (knowing
a rack's pitches needs none): the common keys by this module, ``[params]`` against the
model's schema held as data (``soundscape/data/models/<model>.toml``, see
:mod:`soundscape.music.model_params`). The model's own ``validate(params)`` and
``prepare(params)`` run once, when the synth first asks for them
(``soundscape.sound.synth.params_of``, before the first note: the model lookup lives there,
with the models); a problem there is an InstrumentError naming the file too. Sample files
and any other ``file`` in ``[params]`` must lie inside the instrument file's folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from soundscape import validate
from soundscape.errors import InstrumentError, TuningError
from soundscape.fileio import read_toml
from soundscape.music.model_params import check_params, inside, known_models
from soundscape.music.tuning import parse_name
from soundscape.resources import bundled_dir

__all__ = ["Instrument", "frozen", "list_instruments", "load_instrument", "thawed"]

FAMILIES = ("bell", "chime", "drum", "rattle", "string", "pipe", "reed", "voice", "other")
#: Ranges of an instrument file's numbers: level at 1 m, playable and default pitch, and
#: the rate its notes need (a speech band's 8 kHz up to a 192 kHz render's).
LOUDNESS_DB = (0.0, 160.0)
#: What ``loudness_db`` measures of a note at 1 m and velocity 1: its sample ``peak`` (a
#: stroke, a click), or its loudest 125 ms RMS, what a sound level meter reads on ``fast``
#: (LFmax: the basis of the levels quoted for rustles, steps and pours).
LEVELS = ("peak", "fast")
HEARING_HZ = (1.0, 24000.0)
WORKING_HZ = (8000.0, 192000.0)
MOST_PITCHES = 128
#: ``renderings = "each"``: every event its own rendering (no two strokes alike).
EACH = "each"
#: The most renderings a repeated note may keep when not ``each``.
MOST_RENDERINGS = 1024
_MODEL = re.compile(r"[a-z][a-z0-9_]{0,31}")


@dataclass(frozen=True, slots=True)
class Instrument:
    """A validated instrument file.

    Parameters
    ----------
    id : str
        The file stem, e.g. ``bianzhong``.
    name : str
        Chinese name, e.g. ``編鐘``.
    roman : str
        Romanised / English name.
    family : str
        One of ``FAMILIES``.
    model : str
        Synthesis module name in ``soundscape.sound.synth``.
    articulations : tuple of str
        The articulations it accepts; the first is the default.
    loudness_db : float, dB SPL
        Level at 1 m for velocity 1, as ``level`` measures it.
    pitches : tuple of str
        律 names (with 清/倍) of the members of a set (bells, chimes, 瑟 strings);
        empty for instruments played at any pitch in ``range_hz`` or unpitched.
    range_hz : (float, float) or None, Hz
        Lowest and highest playable frequency; None when unpitched.
    default_hz : float or None, Hz
        The instrument's own pitch, used when a note gives none (drums, calls).
    working_hz : float or None, Hz
        The lowest sample rate its notes need (they hold next to nothing above half of
        it): the renderer makes, places and mixes them at that rate or a little more;
        None: the model's own ``WORKING_HZ``, else the output's rate.
    ring_s : float or None, s
        How long its notes sound past their event's end, at most (to the synthesis's
        −100 dB trim; measured over the bundled rites): a shared ADM object or stem may
        take another source's sound that much later (``adm.TURN_GAP_S`` where None).
    renderings : int, str or None
        How many renderings a repeated note gets (each event picks one by a stable hash):
        a number, ``"each"`` (every event its own: strokes of drums, bells, stones), or
        None (the renderer's default).
    raw_params : Mapping
        Read-only ``[params]`` as the file gives them (``file`` paths resolved),
        checked against the model's schema.
    sources : tuple of str
        Where the numbers come from.
    path : Path
        The file it was read from.
    """

    id: str
    name: str
    roman: str
    family: str
    model: str
    articulations: tuple[str, ...]
    loudness_db: float
    pitches: tuple[str, ...]
    range_hz: tuple[float, float] | None
    default_hz: float | None
    working_hz: float | None
    raw_params: Mapping[str, Any]
    sources: tuple[str, ...]
    path: Path
    renderings: int | str | None = None
    ring_s: float | None = None
    #: What ``loudness_db`` measures: one of ``LEVELS``.
    level: str = "peak"
    #: The model's prepared parameters, once the synth has made them (``params_of``).
    prepared: list = field(default_factory=list, compare=False, repr=False)


def list_instruments() -> list[str]:
    """Ids of the bundled instruments, sorted."""
    return sorted(p.stem for p in bundled_dir("instruments").glob("*.toml"))


def load_instrument(id_or_path: str | Path) -> Instrument:
    """Load and validate an instrument by bundled id (a ``str``: ``bianzhong``) or by file
    (a ``Path``). A string is always an id, never a path (``../x``, ``cues/dashe.toml``).

    Raises
    ------
    InstrumentError
        Unknown id, unreadable file, or a key that does not validate (the message
        names the file and key, the bad value and what is accepted).
    """
    path = _resolve(id_or_path)
    return _build(read_toml(path, InstrumentError), path)


def _resolve(id_or_path: str | Path) -> Path:
    if isinstance(id_or_path, Path):
        return id_or_path  # a file the caller's code names; read_toml refuses what is no file
    known = list_instruments()
    if id_or_path not in known:  # ids come from the command line and user files: never a path
        raise InstrumentError(
            f"instrument {validate.shown(id_or_path)} unknown; bundled: {', '.join(known)}")
    return bundled_dir("instruments") / f"{id_or_path}.toml"


#: The keys every instrument file has, then the optional ones (docs/instruments.md).
_NEEDED = ("id", "name", "roman", "family", "model", "articulations", "loudness_db", "sources")
_KEYS = (*_NEEDED, "pitches", "range_hz", "default_hz", "working_hz", "renderings", "level",
         "ring_s", "params")
#: Bounds of ``ring_s`` (s): a bronze bell's ring to −100 dB is well under a minute.
RING_S = (0.0, 60.0)


def _build(data: dict[str, Any], path: Path) -> Instrument:
    where = str(path)

    def text(key: str) -> str:
        return validate.text(data.get(key), key=key, where=where, error=InstrumentError,
                             longest=1000)

    def names(key: str, least: int, most: int) -> list[Any]:
        return validate.size(data.get(key, []), key=key, where=where, error=InstrumentError,
                             kind=list, least=least, most=most)

    unknown = sorted(set(data) - set(_KEYS))
    if unknown:  # a misspelt key was ignored without a word
        validate.fail(InstrumentError, where, unknown[0], data[unknown[0]],
                      "a key of an instrument file", ", ".join(_KEYS))
    validate.needs(data, _NEEDED, where=where, error=InstrumentError, what="an instrument file")
    ident = validate.ident(data.get("id"), key="id", where=where, error=InstrumentError)
    if ident != path.stem:
        validate.fail(InstrumentError, where, "id", ident, f"the file name {path.stem!r}")
    family = validate.choice(data.get("family"), FAMILIES, key="family", where=where,
                             error=InstrumentError)
    model = _model(data.get("model"), where)
    articulations = tuple(validate.text(a, key=f"articulations[{i}]", where=where,
                                        error=InstrumentError, longest=32)
                          for i, a in enumerate(names("articulations", 1, 16)))
    for i, name in enumerate(articulations):
        if name in articulations[:i]:
            validate.fail(InstrumentError, where, f"articulations[{i}]", name,
                          f"an articulation not already listed (articulations"
                          f"[{articulations.index(name)}])")
    loudness = validate.number(data.get("loudness_db"), key="loudness_db", where=where,
                               error=InstrumentError, low=LOUDNESS_DB[0],
                               high=LOUDNESS_DB[1], low_open=True, unit="dB SPL at 1 m")
    level = validate.choice(data.get("level", "peak"), LEVELS, key="level", where=where,
                            error=InstrumentError)
    sources = tuple(validate.text(s, key=f"sources[{i}]", where=where, error=InstrumentError)
                    for i, s in enumerate(names("sources", 1, 100)))
    pitches = tuple(names("pitches", 0, MOST_PITCHES))
    sounded: dict[tuple[str, int], int] = {}
    for i, name in enumerate(pitches):
        try:
            pitch = parse_name(validate.text(name, key=f"pitches[{i}]", where=where,
                                             error=InstrumentError))
        except TuningError as error:
            validate.fail(InstrumentError, where, f"pitches[{i}]", name, f"a 律 name ({error})")
        if pitch in sounded:  # the second bell could never be struck, and a pitch is lost
            validate.fail(InstrumentError, where, f"pitches[{i}]", name,
                          f"a 律 not already on the rack (pitches[{sounded[pitch]}] is "
                          f"{pitches[sounded[pitch]]})")
        sounded[pitch] = i
    range_hz = _range(data, where)
    default_hz = data.get("default_hz")
    if default_hz is not None:
        default_hz = validate.number(default_hz, key="default_hz", where=where,
                                     error=InstrumentError, low=HEARING_HZ[0],
                                     high=HEARING_HZ[1], unit="Hz")
        if range_hz is not None and not range_hz[0] <= default_hz <= range_hz[1]:
            validate.fail(InstrumentError, where, "default_hz", default_hz,
                          f"within range_hz [{range_hz[0]:g}, {range_hz[1]:g}] Hz")
    working_hz = data.get("working_hz")
    if working_hz is not None:
        working_hz = validate.number(working_hz, key="working_hz", where=where,
                                     error=InstrumentError, low=WORKING_HZ[0],
                                     high=WORKING_HZ[1], unit="Hz")
    ring_s = data.get("ring_s")
    if ring_s is not None:
        ring_s = validate.number(ring_s, key="ring_s", where=where, error=InstrumentError,
                                 low=RING_S[0], high=RING_S[1], unit="s")
    renderings = data.get("renderings")
    if isinstance(renderings, str) and renderings != EACH:
        validate.fail(InstrumentError, where, "renderings", renderings,
                      f"a whole number 1…{MOST_RENDERINGS} or {EACH!r}")
    if renderings is not None and renderings != EACH:
        renderings = validate.whole(renderings, key="renderings", where=where,
                                    error=InstrumentError, low=1, high=MOST_RENDERINGS)
    params = data.get("params", {})
    if not isinstance(params, dict):
        validate.fail(InstrumentError, where, "params", params, "a table [params]")
    params = _with_paths(params, path.parent, "params", where)
    check_params(params, model, articulations, where)
    return Instrument(
        id=ident, name=text("name"), roman=text("roman"), family=family, model=model,
        articulations=articulations, loudness_db=loudness, pitches=pitches,
        range_hz=range_hz, default_hz=default_hz, working_hz=working_hz,
        raw_params=frozen(params),
        sources=sources, path=path, renderings=renderings, level=level, ring_s=ring_s,
    )


def _model(name: Any, where: str) -> str:
    """A model's name. One with a schema is checked here; one added as code only (a module
    of ``soundscape.sound.synth`` without a schema) when the synth first needs it
    (``synth.model_module``): this layer imports no sound code to look (music lies below
    sound)."""
    if not isinstance(name, str) or not _MODEL.fullmatch(name):
        validate.fail(InstrumentError, where, "model", name, "a model name",
                      ", ".join(known_models()))
    return name


def _range(data: dict[str, Any], where: str) -> tuple[float, float] | None:
    value = data.get("range_hz")
    if value is None:
        return None
    validate.size(value, key="range_hz", where=where, error=InstrumentError, kind=list,
                  least=2, most=2)
    low, high = (validate.number(v, key=f"range_hz[{i}]", where=where, error=InstrumentError,
                                 low=HEARING_HZ[0], high=HEARING_HZ[1], unit="Hz")
                 for i, v in enumerate(value))
    if not low < high:
        validate.fail(InstrumentError, where, "range_hz", value, "[lowest, highest] Hz with "
                      "lowest < highest")
    return low, high


def _with_paths(value: Any, folder: Path, key: str, where: str) -> Any:
    """Resolve every ``file`` key inside ``[params]``: a file inside the instrument's folder."""
    if isinstance(value, dict):
        return {k: inside(folder, v, f"{key}.{k}", where) if k == "file"
                else _with_paths(v, folder, f"{key}.{k}", where) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_paths(v, folder, f"{key}[{i}]", where) for i, v in enumerate(value)]
    return value


def thawed(value: Any) -> Any:
    """Plain dicts and lists again, for the model's own checks."""
    if isinstance(value, Mapping):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return value


def frozen(value: Any) -> Any:
    """Read-only mappings and tuples (an instrument's parameters)."""
    if isinstance(value, dict):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(frozen(v) for v in value)
    return value
