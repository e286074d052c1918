"""The one set of validators: numbers in ranges, whole numbers, ids, choices, lengths.

Every loader checks what it reads with these, so that every message has one shape::

    FILE:LINE: key=value must be <what> (accepted: <what is>)

``where`` is the caller's ``FILE:LINE`` (or ``FILE``, or ``--option``) and ``error``
the caller's ``SoundscapeError`` subclass, so a cue sheet raises ``CueSheetError`` and a
site file ``SiteError``. Values are shown shortened: a 400-digit number or a megabyte
of junk text stays one readable line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence, Sized
from typing import Any, NoReturn, TypeGuard

from soundscape.errors import SoundscapeError

__all__ = ["ID", "choice", "fail", "ident", "needs", "number", "shown", "size", "text", "whole"]

#: An id: lower-case ASCII letters, digits, ``_``, ``.`` and ``-``, starting with a letter
#: or digit (so no id is ``..``, hidden, or a path).
ID = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
#: Control characters but tab, newline and carriage return: a text that holds one (a
#: terminal's escape code in a title) is refused wherever a loader checks a string.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

_SHOWN = 60  # characters of a bad value shown in a message


def shown(value: Any) -> str:
    """``repr(value)`` cut to one short line."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10 ** 18:
        return f"<a {len(str(abs(value)))}-digit integer>"
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "…"


def fail(error: type[SoundscapeError], where: str, key: str, value: Any, must: str,
         accepted: str = "") -> NoReturn:
    """Raise ``error("WHERE: key=value must be MUST (accepted: ACCEPTED)")``."""
    tail = f" (accepted: {accepted})" if accepted else ""
    raise error(f"{where}: {key}={shown(value)} must be {must}{tail}")


def needs(data: Mapping[str, Any], keys: Sequence[str], *, where: str,
          error: type[SoundscapeError], what: str) -> None:
    """Raise ``error("WHERE: lacks key 'K' (WHAT needs: …)")`` for the first of ``keys``
    not in ``data``: a missing key is not a bad value (it read as ``roman=None``)."""
    missing = [key for key in keys if key not in data]
    if missing:
        raise error(f"{where}: lacks key {missing[0]!r} ({what} needs: {', '.join(keys)})")


def _range(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    left = "" if low is None else f"{'>' if low_open else '≥'} {low:g}"
    right = "" if high is None else f"{'<' if high_open else '≤'} {high:g}"
    return " and ".join(part for part in (left, right) if part)


def number(value: Any, *, key: str, where: str, error: type[SoundscapeError],
           low: float | None = None, high: float | None = None, low_open: bool = False,
           high_open: bool = False, unit: str = "") -> float:
    """A finite real number (int or float, not bool) in the range; returned as float."""
    bounds = _range(low, high, low_open, high_open)
    must = "a finite number" + (f" {bounds}" if bounds else "") + (f" {unit}" if unit else "")
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(error, where, key, value, must)
    try:
        result = float(value)
    except OverflowError:
        fail(error, where, key, value, must)
    if not math.isfinite(result):
        fail(error, where, key, value, must)
    if low is not None and (result < low or (low_open and result == low)):
        fail(error, where, key, value, must)
    if high is not None and (result > high or (high_open and result == high)):
        fail(error, where, key, value, must)
    return result


def is_finite(value: Any) -> TypeGuard[int | float]:
    """Whether ``value`` is a finite real number (int or float, not bool): an int past a
    float's range is not (``math.isfinite`` raises OverflowError on one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def whole(value: Any, *, key: str, where: str, error: type[SoundscapeError],
          low: int | None = None, high: int | None = None) -> int:
    """A whole number (an int, not bool; no fraction) in ``[low, high]``."""
    bounds = _range(low, high, False, False)
    must = "a whole number" + (f" {bounds}" if bounds else "")
    if isinstance(value, bool) or not isinstance(value, int):
        fail(error, where, key, value, must)
    if (low is not None and value < low) or (high is not None and value > high):
        fail(error, where, key, value, must)
    return value


def text(value: Any, *, key: str, where: str, error: type[SoundscapeError],
         empty_ok: bool = False, longest: int = 100_000) -> str:
    """A string, non-empty unless ``empty_ok``, at most ``longest`` characters."""
    if not isinstance(value, str):
        fail(error, where, key, value, "a string")
    if not value and not empty_ok:
        fail(error, where, key, value, "a non-empty string")
    if len(value) > longest:
        fail(error, where, key, value, f"at most {longest} characters long")
    if CONTROL.search(value):  # echoed to terminals and written into files
        fail(error, where, key, value, "free of control characters (tab and newline are kept)")
    return value


def ident(value: Any, *, key: str, where: str, error: type[SoundscapeError],
          known: Collection[str] | None = None) -> str:
    """An id (:data:`ID`); with ``known``, one of them. Never a path."""
    listed = ", ".join(sorted(known)) if known is not None and len(known) <= 60 else ""
    if not isinstance(value, str) or not ID.fullmatch(value):
        fail(error, where, key, value, "an id of a-z, 0-9, '_', '.', '-'", listed)
    if known is not None and value not in known:
        fail(error, where, key, value, "a known id", listed or f"{len(known)} known ids")
    return value


def choice(value: Any, choices: Collection[Any], *, key: str, where: str,
           error: type[SoundscapeError]) -> Any:
    """One of ``choices`` (compared by equality, so ``True`` is not ``1``)."""
    try:
        found = value in choices and isinstance(value, bool) == any(
            isinstance(c, bool) for c in choices)
    except TypeError:  # an unhashable value (a list or table) is no choice
        found = False
    if not found:
        listed = ", ".join(str(c) for c in choices) if len(choices) <= 60 else \
            f"one of {len(choices)} known values"
        fail(error, where, key, value, "one of the accepted values", listed)
    return value


def size(value: Any, *, key: str, where: str, error: type[SoundscapeError], kind: type,
         least: int = 0, most: int | None = None) -> Any:
    """A ``kind`` (list, str, dict …) with between ``least`` and ``most`` items."""
    names: dict[type, str] = {list: "list", str: "string", dict: "table"}
    name = names.get(kind, kind.__name__)
    if not isinstance(value, kind) or not isinstance(value, Sized):
        fail(error, where, key, value, f"a {name}")
    count = len(value)
    if count < least or (most is not None and count > most):
        bounds = f"{least}" + (f" to {most}" if most is not None else " or more")
        fail(error, where, key, value, f"a {name} of {bounds} items")
    return value
