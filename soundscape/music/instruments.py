"""Instruments as data: one TOML file per instrument, parsed into a frozen ``Instrument``.

A file names its family, its synthesis model (``model = "modal"`` selects module
``soundscape.sound.synth.modal``), the articulations it accepts, its loudness, the pitches
of its set or its range, the model parameters under ``[params]`` and the source of
every number (``sources``; estimates are marked EST). Adding an instrument is adding
a file; adding a model is adding a module (see docs/instruments.md).

The file is validated once, here: the common keys by this module, ``[params]`` by
the model's own ``validate(params)``. After that the synth trusts it.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from soundscape.errors import InstrumentError, TuningError
from soundscape.fileio import read_toml
from soundscape.music.tuning import parse_name
from soundscape.resources import bundled_dir
from soundscape.sound.synth.params import ParamError

__all__ = ["Instrument", "list_instruments", "load_instrument", "model_module"]

FAMILIES = ("bell", "chime", "drum", "rattle", "string", "pipe", "reed", "voice", "other")


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
        Level at 1 m for velocity 1.
    pitches : tuple of str
        律 names (with 清/倍) of the members of a set (bells, chimes, 瑟 strings);
        empty for instruments played at any pitch in ``range_hz`` or unpitched.
    range_hz : (float, float) or None, Hz
        Lowest and highest playable frequency; None when unpitched.
    default_hz : float or None, Hz
        The instrument's own pitch, used when a note gives none (drums, calls).
    params : Mapping
        Read-only model parameters (nested mappings and tuples).
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
    params: Mapping[str, Any]
    sources: tuple[str, ...]
    path: Path


def list_instruments() -> list[str]:
    """Ids of the bundled instruments, sorted."""
    return sorted(p.stem for p in bundled_dir("instruments").glob("*.toml"))


def load_instrument(id_or_path: str | Path) -> Instrument:
    """Load and validate an instrument by bundled id (``bianzhong``) or by file path.

    Raises
    ------
    InstrumentError
        Unknown id, unreadable file, or a key that does not validate (the message
        names the file and key, the bad value and what is accepted).
    """
    path = _resolve(id_or_path)
    return _build(read_toml(path, InstrumentError), path)


def model_module(name: str) -> ModuleType:
    """The synthesis module ``soundscape.sound.synth.<name>``; InstrumentError if there is none."""
    if not name.isidentifier() or name.startswith("_") or name == "params" \
            or importlib.util.find_spec(f"soundscape.sound.synth.{name}") is None:
        raise InstrumentError(f"model {name!r} has no module soundscape.sound.synth.{name}")
    module = importlib.import_module(f"soundscape.sound.synth.{name}")
    if not callable(getattr(module, "render", None)):
        raise InstrumentError(f"model module soundscape.sound.synth.{name} has no render function")
    return module


def _resolve(id_or_path: str | Path) -> Path:
    text = str(id_or_path)
    if text.endswith(".toml") or "/" in text or isinstance(id_or_path, Path):
        path = Path(id_or_path)
        if not path.is_file():
            raise InstrumentError(f"instrument file {text!r} not found")
        return path
    path = bundled_dir("instruments") / f"{text}.toml"
    if not path.is_file():
        raise InstrumentError(
            f"instrument {text!r} unknown; bundled: {', '.join(list_instruments())}"
        )
    return path


def _build(data: dict[str, Any], path: Path) -> Instrument:
    def fail(key: str, message: str) -> InstrumentError:
        return InstrumentError(f"{path}: {key} {message}")

    def text(key: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise fail(key, f"= {value!r} must be a non-empty string")
        return value

    ident = text("id")
    if ident != path.stem:
        raise fail("id", f"= {ident!r} must equal the file name {path.stem!r}")
    family = text("family")
    if family not in FAMILIES:
        raise fail("family", f"= {family!r} must be one of {', '.join(FAMILIES)}")
    try:
        module = model_module(text("model"))
    except InstrumentError as error:
        raise fail("model", f"= {data['model']!r}: {error}") from None
    articulations = data.get("articulations")
    if not isinstance(articulations, list) or not articulations \
            or not all(isinstance(a, str) and a for a in articulations):
        raise fail("articulations", f"= {articulations!r} must be a non-empty list of names")
    loudness = data.get("loudness_db")
    if not isinstance(loudness, int | float) or not 0 < loudness < 160:
        raise fail("loudness_db", f"= {loudness!r} must be dB SPL at 1 m in (0, 160)")
    sources = data.get("sources")
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) for s in sources):
        raise fail("sources", "must be a non-empty list of strings (where each number comes from)")
    pitches = tuple(data.get("pitches", ()))
    for i, name in enumerate(pitches):
        try:
            parse_name(name)
        except (TuningError, AttributeError) as error:
            raise fail(f"pitches[{i}]", f"= {name!r}: {error}") from None
    range_hz = _range(data, fail)
    default_hz = data.get("default_hz")
    if default_hz is not None and not (isinstance(default_hz, int | float) and default_hz > 0):
        raise fail("default_hz", f"= {default_hz!r} must be a frequency > 0 Hz")
    params = _with_paths(data.get("params", {}), path.parent)
    if not isinstance(params, dict):
        raise fail("params", "must be a table [params]")
    try:
        if hasattr(module, "validate"):
            module.validate(params)
        if hasattr(module, "prepare"):
            params = module.prepare(params)
    except ParamError as error:
        raise fail(f"params.{error.key}", error.message) from None
    return Instrument(
        id=ident, name=text("name"), roman=text("roman"), family=family, model=data["model"],
        articulations=tuple(articulations), loudness_db=float(loudness), pitches=pitches,
        range_hz=range_hz, default_hz=None if default_hz is None else float(default_hz),
        params=_freeze(params), sources=tuple(sources), path=path,
    )


def _range(data: dict[str, Any], fail: Any) -> tuple[float, float] | None:
    value = data.get("range_hz")
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, int | float) and math.isfinite(v) for v in value)
            and 0 < value[0] < value[1]):
        raise fail("range_hz", f"= {value!r} must be [lowest, highest] Hz, 0 < lowest < highest")
    return float(value[0]), float(value[1])


def _with_paths(value: Any, folder: Path) -> Any:
    """Resolve every ``file`` key inside ``[params]`` relative to the instrument file."""
    if isinstance(value, dict):
        return {k: str(folder / v) if k == "file" and isinstance(v, str) else _with_paths(v, folder)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_with_paths(v, folder) for v in value]
    return value


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value
