"""English glosses of the rite's steps and sections, for markers.

Composed from ``soundscape/data/glosses.toml`` (who, what, where, section titles;
its header names the translation conventions): a step becomes a sentence such as
``The director of archery (司射) bows twice, at the west steps``. The gloss keeps the
Chinese term of the actor beside its English, and never stands in for the passage:
markers carry both (``中文 | English``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from soundscape.errors import CueSheetError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir

__all__ = ["English", "load"]


@dataclass(frozen=True, slots=True, eq=False)  # one per process
class English:
    """The gloss tables (see ``glosses.toml``)."""

    actors: Mapping[str, tuple[str, bool]]
    actions: Mapping[str, tuple[str, str]]
    verbs: Mapping[str, tuple[str, str]]
    places: Mapping[str, str]
    sections: Mapping[str, str]
    before: Mapping[str, str]
    rounds: Mapping[int, str]

    def step(self, actor: str, action: str, place: str, quote: str) -> str:
        """One sentence: who (with the Chinese term), does what, where."""
        who, plural = self.actors.get(actor, ("", False))
        subject = f"{who} ({actor})" if who else actor or "they"
        plural = plural or not actor
        verb = self.actions.get(action) or self._verb_in(quote[len(actor):]
                                                         if quote.startswith(actor) else quote)
        if verb is None:
            sentence = (f"{subject} {'take' if plural else 'takes'} part, as the passage says"
                        if actor else "The passage sets the scene")
        else:
            sentence = f"{subject} {verb[plural]}"
        where = self.places.get(place or "")
        sentence = f"{sentence}, {where}" if where else sentence
        return sentence[0].upper() + sentence[1:]

    def section(self, name: str) -> str:
        """The section's English title (its heading when there is none)."""
        return self.sections.get(name, name)

    def _verb_in(self, text: str) -> tuple[str, str] | None:
        for char in text:
            if char in self.verbs:
                return self.verbs[char]
        return None


@functools.cache
def load() -> English:
    """Read the bundled gloss tables (once per process)."""
    path = data_dir() / "glosses.toml"
    raw = read_toml(path)
    try:
        return English(
            actors=MappingProxyType({k: (v["en"], bool(v.get("plural", False)))
                                     for k, v in raw["actor"].items()}),
            actions=_pairs(raw["action"]), verbs=_pairs(raw["verb"]),
            places=MappingProxyType(dict(raw["place"])),
            sections=MappingProxyType(dict(raw["section"])),
            before=MappingProxyType(dict(raw["before"])),
            rounds=MappingProxyType({int(k): v for k, v in raw["round"].items()}))
    except (KeyError, TypeError, ValueError) as error:
        raise CueSheetError(f"{path}: malformed gloss table ({error!r}); "
                            "see its header") from error


def _pairs(table: Mapping[str, list[str]]) -> MappingProxyType:
    return MappingProxyType({k: (v[0], v[1]) for k, v in table.items()})
