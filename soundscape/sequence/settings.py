"""How the sequencer reads a cue sheet (``data/sequence.toml``), as one typed, checked
object: which sections come before the day, where each shoot stands in the text, which
words move the 工, how the spoken words and the calls are timed, and the register sung in.

Everything is matched against the sheet's section names and step quotes, so it serves any
text that uses these formulas. A bad file is refused at load, naming the file and key.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from soundscape import validate
from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir

__all__ = ["GongMove", "RoundSpec", "SequenceSettings", "SpeechSettings", "Timing",
           "load_settings", "round_specs"]

SCHEMA = 1
_ROUNDS = (0, 1, 2, 3)  # soundscape.sequence.archery's rounds: 誘射, 初射, 再射, 三射
_PHASES = ("ge", "guan", "zuo")  # where the 工 stand (the site's performer phases)


@dataclass(frozen=True, slots=True)
class RoundSpec:
    """Where a shoot stands in the text, found by its words whatever the edition's sections
    (江永's 右 headings, a modern edition's paragraphs, none): it starts at the first step
    holding ``at`` at or after the first one holding ``after`` (the 司射's command that opens
    the round), and the steps up to the first one holding ``until`` narrate it.
    ``count_at``: the words of the step after it where the 算 are counted (視算: every
    edition's spelling matches, 視筭 too, as :func:`~soundscape.text.hanzi.mentions`
    unifies them). A round told in two parts (the 大射's second: the three pairs, then the duke
    and the rest) is split after the step holding ``split_after``, and ``split_at_pair`` is
    the pair whose turn opens the later part."""

    number: int
    at: str
    until: str
    after: str = ""
    count_at: str | None = None
    split_after: str | None = None
    split_at_pair: str | None = None

    @classmethod
    def parse(cls, data: Any, where: str) -> RoundSpec:
        _table(data, where, ("number", "at", "until", "after", "count_at", "split_after",
                             "split_at_pair"))

        def words(key: str) -> str:
            return validate.text(data.get(key), key=key, where=where, error=CueSheetError)

        if ("split_after" in data) != ("split_at_pair" in data):
            raise CueSheetError(f"{where}: split_after and split_at_pair go together; "
                                "accepted: both (a round told in two parts) or neither")
        split = "split_after" in data
        return cls(
            validate.choice(data.get("number"), _ROUNDS, key="number", where=where,
                            error=CueSheetError),
            words("at"), words("until"),
            validate.text(data.get("after", ""), key="after", where=where,
                          error=CueSheetError, empty_ok=True),
            words("count_at") if "count_at" in data else None,
            words("split_after") if split else None,
            validate.ident(data["split_at_pair"], key="split_at_pair", where=where,
                           error=CueSheetError) if split else None)


@dataclass(frozen=True, slots=True)
class GongMove:
    """From the step whose quote holds ``at`` the 工 stand as in the site's ``phase``."""

    at: str
    phase: str


@dataclass(frozen=True, slots=True)
class SpeechSettings:
    """The spoken words: the pause before the first word, the speaking pitch, the levels of
    a spoken and a called phrase, and from how far away one is called to (metres)."""

    pause_s: float
    hz: float
    velocity: float
    call_velocity: float
    call_beyond_m: float


@dataclass(frozen=True, slots=True)
class Timing:
    """After a round's last arrow, the 負侯's calls (宮 at the 侯, 商 walking to the 乏),
    and the 宮 of the rite's mode."""

    after_round_s: float
    voice_call_s: float
    voice_walk_call_s: float
    mode_gong: str


@dataclass(frozen=True, slots=True)
class SequenceSettings:
    """``data/sequence.toml``, checked (see the module)."""

    preparation: Mapping[str, str]  # rite id → the words that begin its day
    rounds: tuple[RoundSpec, ...]
    gong_moves: tuple[GongMove, ...]
    speech: SpeechSettings
    singers: str
    timing: Timing


def _table(data: Any, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise CueSheetError(f"{where}: must be a table (accepted keys: {', '.join(keys)})")
    unknown = [k for k in data if k not in keys]
    if unknown:
        validate.fail(CueSheetError, where, unknown[0], data[unknown[0]], "a known key",
                      ", ".join(keys))
    return data


def _numbers(data: Any, where: str, cls: type, **ranges: tuple[float, float]) -> Any:
    _table(data, where, tuple(ranges))
    missing = [k for k in ranges if k not in data]
    if missing:
        raise CueSheetError(f"{where}: no {missing[0]!r}; it holds {', '.join(ranges)}")
    return cls(**{k: validate.number(data[k], key=k, where=where, error=CueSheetError,
                                     low=low, high=high) for k, (low, high) in ranges.items()})


def round_specs(data: Any, where: str) -> tuple[RoundSpec, ...]:
    """The ``[[round]]`` entries of a file (sequence.toml, or a rite's archery data)."""
    validate.size(data, key="round", where=where, error=CueSheetError, kind=list)
    return tuple(RoundSpec.parse(spec, f"{where}: round[{i}]") for i, spec in enumerate(data))


def _day_begins(data: Any, where: str) -> dict[str, str]:
    """``[preparation]``: rite id → the words of the step that begins its day."""
    if not isinstance(data, Mapping):
        raise CueSheetError(f"{where}: must be a table of rite id = the words that begin "
                            "its day")
    return {validate.ident(rite, key="rite id", where=where, error=CueSheetError):
            validate.text(words, key=rite, where=where, error=CueSheetError)
            for rite, words in data.items()}


def parse(data: Mapping[str, Any], where: str) -> SequenceSettings:
    """The settings of a parsed ``sequence.toml``; any problem names ``where`` and the key."""
    _table(data, where, ("schema", "preparation", "round", "gong_move", "speech", "register",
                         "timing"))
    validate.choice(data.get("schema"), (SCHEMA,), key="schema", where=where,
                    error=CueSheetError)
    moves = []
    for i, move in enumerate(validate.size(data.get("gong_move", []), key="gong_move",
                                           where=where, error=CueSheetError, kind=list)):
        at = f"{where}: gong_move[{i}]"
        _table(move, at, ("at", "phase", "chapter", "passage"))
        moves.append(GongMove(validate.text(move.get("at"), key="at", where=at,
                                            error=CueSheetError),
                              validate.choice(move.get("phase"), _PHASES, key="phase", where=at,
                                              error=CueSheetError)))
    speech = _numbers(data.get("speech"), f"{where}: speech", SpeechSettings,
                      pause_s=(0.0, 60.0), hz=(20.0, 2000.0), velocity=(0.01, 1.0),
                      call_velocity=(0.01, 1.0), call_beyond_m=(0.0, 1000.0))
    register = _table(data.get("register"), f"{where}: register", ("singers",))
    timing = _table(data.get("timing"), f"{where}: timing",
                    ("after_round_s", "voice_call_s", "voice_walk_call_s", "mode_gong"))
    seconds = _numbers({k: v for k, v in timing.items() if k != "mode_gong"},
                       f"{where}: timing", dict, after_round_s=(0.0, 3600.0),
                       voice_call_s=(0.01, 60.0), voice_walk_call_s=(0.01, 60.0))
    return SequenceSettings(
        _day_begins(data.get("preparation", {}), f"{where}: preparation"),
        round_specs(data.get("round", []), where), tuple(moves), speech,
        validate.text(register.get("singers"), key="register.singers", where=where,
                      error=CueSheetError),
        Timing(**seconds, mode_gong=validate.text(timing.get("mode_gong"), key="mode_gong",
                                                  where=f"{where}: timing",
                                                  error=CueSheetError)))


@functools.cache
def _bundled() -> SequenceSettings:
    path = data_dir() / "sequence.toml"
    return parse(read_toml(path, CueSheetError), str(path))


def load_settings(path: str | Path | None = None) -> SequenceSettings:
    """The settings of ``path`` (None: the bundled ``data/sequence.toml``, read once)."""
    if path is None:
        return _bundled()
    return parse(read_toml(path, CueSheetError), str(path))
