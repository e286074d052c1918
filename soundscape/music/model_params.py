"""Model parameters checked against their schema, held as data (``data/models/<model>.toml``).

An instrument file's ``[params]`` belong to its synthesis model, but knowing a rack's
pitches must not import the sound code: so each model's schema is data, checked here
when the instrument file loads, and the model's own ``validate`` runs once more before
its first note (see ``data/models/README.md`` for the schema's keys).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from soundscape import fileio, validate
from soundscape.errors import InstrumentError, TuningError
from soundscape.music.tuning import parse_name
from soundscape.resources import data_dir

__all__ = ["check_params", "known_models", "schema"]

_MOST = 256  # items of a list or rows of a table, unless the schema says


def known_models() -> list[str]:
    """The models that have a schema, sorted."""
    return sorted(p.stem for p in (data_dir() / "models").glob("*.toml"))


@functools.cache
def schema(model: str) -> Mapping[str, Any] | None:
    """The schema of ``model`` (a known id, else None: a model added as code only)."""
    if model not in known_models():
        return None
    return fileio.read_toml(data_dir() / "models" / f"{model}.toml", InstrumentError)


def check_params(params: Any, model: str, articulations: tuple[str, ...], where: str) -> None:
    """Check ``[params]`` against the model's schema; InstrumentError names ``where`` and key."""
    spec = schema(model)
    if spec is None:
        return
    if not isinstance(params, dict):
        validate.fail(InstrumentError, where, "params", params, "a table [params]")
    accepted = spec.get("articulations")
    for name in articulations:
        if accepted is not None and name not in accepted:
            validate.fail(InstrumentError, where, "articulations", name,
                          f"an articulation of model {model!r}", ", ".join(accepted))
    if "per_articulation" in spec:
        for name in articulations:
            _Checker(where).value(params.get(name), spec["per_articulation"],
                                  f"params.{name}")
    # a per-articulation model's [params] also hold a table per articulation
    _Checker(where).fields(params, spec.get("params", {}), "params",
                           also=articulations if "per_articulation" in spec else ())
    for rule in spec.get("rules", ()):
        _rule(params, rule, articulations, where)


def _rule(params: dict[str, Any], rule: Mapping[str, Any], articulations: tuple[str, ...],
          where: str) -> None:
    if "when_row" in rule:
        rows, key, value = rule["when_row"]
        applies = any(isinstance(r, dict) and r.get(key) == value for r in params.get(rows, ()))
        reason = f"a row of {rows} has {key} = {value!r}"
    elif "when_key" in rule:
        applies, reason = rule["when_key"] in params, f"params.{rule['when_key']} is given"
    else:
        applies = rule["when_articulation"] in articulations
        reason = f"articulation {rule['when_articulation']!r} is listed"
    if applies:
        for key in rule.get("require", ()):
            if key not in params:
                raise InstrumentError(f"{where}: params.{key} is missing; it is required "
                                      f"when {reason}")
    else:
        for key in rule.get("otherwise_forbid", ()):
            if key in params:
                raise InstrumentError(f"{where}: params.{key} is given but no {reason[2:]}")


class _Checker:
    """Walks a value and its spec, failing with ``WHERE: params.a[2].b=value must be …``."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, value: Any, must: str, accepted: str = "") -> None:
        validate.fail(InstrumentError, self.where, key, value, must, accepted)

    def fields(self, table: dict[str, Any], specs: Mapping[str, Any], key: str,
               also: tuple[str, ...] = ()) -> None:
        for name, spec in specs.items():
            if name in table:
                self.value(table[name], spec, f"{key}.{name}")
            elif not spec.get("optional", False):
                raise InstrumentError(f"{self.where}: {key}.{name} is missing (required by "
                                      "the model)")
        for name, spec in specs.items():  # one number a mode, a partial, …
            other = spec.get("same_size_as")
            if other is not None and name in table and other in table \
                    and len(table[name]) != len(table[other]):
                self.fail(f"{key}.{name}", table[name], f"{len(table[other])} numbers, one "
                          f"for each of {key}.{other}")
        for name in table:  # a band's low end (…_low…) under its high end (…_high…)
            high = name.replace("_low", "_high", 1)
            if "_low" in name and high in table and _numbers(table[name], table[high]) \
                    and not table[name] < table[high]:
                self.fail(f"{key}.{name}", table[name], f"below {key}.{high}={table[high]!r}")
        for name in table:  # a misspelt key was ignored, and its sound with it
            if name not in specs and name not in also:
                raise InstrumentError(
                    f"{self.where}: {key}.{name} is not a key of this model; accepted: "
                    f"{', '.join([*specs, *also])} (data/models/ has each model's keys)")

    def value(self, value: Any, spec: Mapping[str, Any], key: str) -> None:
        kind = spec["type"]
        low, high = spec.get("range", (None, None))
        if kind == "number":
            validate.number(value, key=key, where=self.where, error=InstrumentError,
                            low=low, high=high)
        elif kind == "whole":
            validate.whole(value, key=key, where=self.where, error=InstrumentError,
                           low=low, high=high)
        elif kind == "choice":
            validate.choice(value, spec["choices"], key=key, where=self.where,
                            error=InstrumentError)
        elif kind == "numbers":
            self._list(value, spec, key)
            for i, item in enumerate(value):
                validate.number(item, key=f"{key}[{i}]", where=self.where,
                                error=InstrumentError, low=low, high=high)
        elif kind == "vectors":
            self._list(value, spec, key)
            for i, item in enumerate(value):
                validate.size(item, key=f"{key}[{i}]", where=self.where, error=InstrumentError,
                              kind=list, least=len(spec["columns"]), most=len(spec["columns"]))
                for j, (bound, number) in enumerate(zip(spec["columns"], item, strict=True)):
                    validate.number(number, key=f"{key}[{i}][{j}]", where=self.where,
                                    error=InstrumentError, low=bound[0], high=bound[1])
        elif kind == "rows":
            self._list(value, spec, key)
            for i, row in enumerate(value):
                if not isinstance(row, dict):
                    self.fail(f"{key}[{i}]", row, "a table")
                self.fields(row, spec["row"], f"{key}[{i}]")
        elif kind == "table":
            self._table(value, spec, key)
        elif kind in ("file", "text"):
            validate.text(value, key=key, where=self.where, error=InstrumentError)
        elif kind == "flag":
            if not isinstance(value, bool):
                self.fail(key, value, "true or false")
        else:
            raise InstrumentError(f"model schema: {key} has unknown type {kind!r}")

    def _list(self, value: Any, spec: Mapping[str, Any], key: str) -> None:
        validate.size(value, key=key, where=self.where, error=InstrumentError, kind=list,
                      least=spec.get("least", 1), most=spec.get("most", _MOST))

    def _table(self, value: Any, spec: Mapping[str, Any], key: str) -> None:
        if not isinstance(value, dict):
            self.fail(key, value, "a table")
        if "fields" in spec:
            self.fields(value, spec["fields"], key)
            return
        names = spec.get("names")
        if isinstance(names, list):
            for name in names:
                if name not in value:
                    raise InstrumentError(f"{self.where}: {key}.{name} is missing; "
                                          f"{key} needs {', '.join(names)}")
        validate.size(value, key=key, where=self.where, error=InstrumentError, kind=dict,
                      most=_MOST)
        for name, item in value.items():
            if names == "pitch":
                try:
                    parse_name(name)
                except TuningError as error:
                    raise InstrumentError(f"{self.where}: {key}.{name} is not a pitch name: "
                                          f"{error}") from None
            self.value(item, spec["each"], f"{key}.{name}")


def inside(folder: Path, name: Any, key: str, where: str) -> str:
    """The path of file ``name`` (relative to ``folder``), which must resolve inside it.

    Absolute paths, ``..`` and links that lead out are refused with one message,
    whether or not something exists there; inside, only a regular file is accepted.
    """
    validate.text(name, key=key, where=where, error=InstrumentError, longest=4096)
    if "\x00" in name:
        validate.fail(InstrumentError, where, key, name, "a file name (no NUL character)")
    root = folder.resolve()
    path = (folder / name).resolve()
    if Path(name).is_absolute() or not path.is_relative_to(root):
        validate.fail(InstrumentError, where, key, name,
                      "a file inside the instrument file's folder (no absolute path, no '..', "
                      "no link out)")
    if not path.is_file():  # follows links: a FIFO, a folder or nothing is no file
        validate.fail(InstrumentError, where, key, name, "an existing regular file inside the "
                      "instrument file's folder")
    return str(path)


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
