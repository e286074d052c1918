"""Han characters: recognise them and unify their variants, one for one.

Normalisation converts simplified forms with OpenCC (``s2t``) and then applies
a small domain table (``data/variants.toml``) for the variants OpenCC leaves
apart (鑮/鎛, 鼓/鼔, 算/筭, 貍/狸, 間/閒). Before that, a few readings that
depend on the next character are fixed (``[context]``: 荡 is the simplified
form of both 蕩 and 簜; it reads 簜, the pipes, only where it is placed like an
instrument, 荡在…). Every step maps one character to one character, so offsets
survive it.
"""

from __future__ import annotations

import functools

import opencc

from soundscape.fileio import read_toml
from soundscape.resources import data_dir

__all__ = ["canonical", "in_context", "is_han", "mentions", "normalise", "normalise_char"]


def is_han(char: str) -> bool:
    """True for a CJK ideograph (unified, extension A–G or compatibility)."""
    code = ord(char)
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF
            or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3134F)


@functools.cache
def _tables() -> dict:
    return read_toml(data_dir() / "variants.toml")


@functools.cache
def _converter() -> opencc.OpenCC:
    return opencc.OpenCC("s2t")


def in_context(s: str) -> str:
    """``s`` with the context readings of ``variants.toml`` applied (same length)."""
    for written, read in _tables()["context"].items():
        s = s.replace(written, read)
    return s


@functools.cache
def normalise_char(char: str) -> str:
    """One character's canonical form (OpenCC ``s2t``, then the ``[after]`` table)."""
    if not is_han(char):
        return char
    converted = _converter().convert(char)
    if len(converted) != 1:  # never let a conversion shift offsets
        converted = char
    return _tables()["after"].get(converted, converted)


def normalise(s: str) -> str:
    """Unify character variants in ``s``, one character for one (same length).

    >>> normalise("乐人宿县于阼阶东")
    '樂人宿縣於阼階東'
    """
    return "".join(normalise_char(c) for c in in_context(s))


@functools.lru_cache(maxsize=1 << 16)
def canonical(s: str) -> str:
    """:func:`normalise`, remembered: the sequencer asks of the same quotes and words often."""
    return normalise(s)


def mentions(text: str, word: str) -> bool:
    """Whether ``word`` is in ``text`` as any edition may print it: variant and simplified
    characters unified on both sides (a sheet derived from 简体 reads 辩 for 辯, 诱射 for
    誘射; the sequencer's words are the 經文's)."""
    return canonical(word) in canonical(text)
