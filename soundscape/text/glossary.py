"""Chinese terms and the romanised ids that stand for them in code and data.

The table lives in ``soundscape/data/glossary.toml``: one TOML table per
category (``instrument``, ``place``, ``piece``, ``actor``, ``action`` …), each
mapping an id to its Chinese terms, the first being the canonical name.
Terms are stored normalised (``soundscape.text.hanzi.normalise``) so that variant
characters in a source text still find them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType

from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text.hanzi import normalise

__all__ = ["Glossary", "load"]


@dataclass(frozen=True, slots=True, eq=False)  # one per process, hashed by identity
class Glossary:
    """Ids and terms by category.

    Attributes
    ----------
    names : mapping category → mapping id → tuple of terms (canonical first)
    """

    names: MappingProxyType

    def categories(self) -> tuple[str, ...]:
        """The category names, in file order."""
        return tuple(self.names)

    def ids(self, category: str) -> tuple[str, ...]:
        """Every id of ``category``, in file order."""
        return tuple(self._category(category))

    def name(self, category: str, id_: str) -> str:
        """The canonical Chinese term of ``id_`` (raises KeyError if unknown)."""
        return self._category(category)[id_][0]

    def id_of(self, category: str, term: str) -> str | None:
        """The id whose terms include ``term`` (compared normalised), or None."""
        return self.term_index(category).get(normalise(term))

    def id_or_pinyin(self, category: str, term: str) -> str:
        """``id_of``, else the term's Mandarin pinyin without tones as an id (衆 → ``zhong``,
        弟子 → ``di_zi``): an actor or speaker the glossary does not list is still named in a
        reader's letters (a character pypinyin cannot read: ``u`` and its code point). A
        reading that is another term's id takes the code points too (弓 → ``gong_u5f13``, not
        公's ``gong``): two actors never share one."""
        found = self.id_of(category, term)
        if found is not None:
            return found
        from pypinyin import Style, lazy_pinyin

        def points(chars: str) -> str:
            return "_".join(f"u{ord(c):x}" for c in chars)

        read = "_".join(lazy_pinyin(term, style=Style.NORMAL, errors=points))
        return read if read not in self._category(category) else f"{read}_{points(term)}"

    def known_id(self, category: str, term: str) -> str:
        """The id of ``term``, a term of ``category`` (matched by a pattern made of the
        category's own terms); KeyError naming it if it is none of them."""
        found = self.id_of(category, term)
        if found is None:
            raise KeyError(f"{term!r} is no term of the glossary's {category!r}")
        return found

    def term_index(self, category: str) -> MappingProxyType:
        """Every normalised term of ``category`` mapped to its id (first id wins)."""
        return _term_index(self, category)

    def terms_longest_first(self, category: str) -> tuple[str, ...]:
        """The normalised terms of ``category``, longest first (for greedy matching)."""
        return _terms_longest_first(self, category)

    def _category(self, category: str) -> MappingProxyType:
        try:
            return self.names[category]
        except KeyError:
            raise KeyError(f"glossary has no category {category!r}; "
                           f"known: {', '.join(self.names)}") from None


# Derive asks for these per step: computed once per glossary and category, not per call.
@functools.cache
def _term_index(glossary: Glossary, category: str) -> MappingProxyType:
    index: dict[str, str] = {}
    for id_, terms in glossary._category(category).items():
        for term in terms:
            index.setdefault(normalise(term), id_)
    return MappingProxyType(index)


@functools.cache
def _terms_longest_first(glossary: Glossary, category: str) -> tuple[str, ...]:
    return tuple(sorted(_term_index(glossary, category), key=lambda t: (-len(t), t)))


@functools.cache
def load() -> Glossary:
    """Read the bundled glossary (once per process; the file is package data)."""
    raw = read_toml(data_dir() / "glossary.toml")
    names = {category: MappingProxyType({id_: tuple(terms) for id_, terms in table.items()})
             for category, table in raw.items()}
    return Glossary(MappingProxyType(names))
