"""Decode a text file in the encoding its edition was saved in.

UTF-8 first (a BOM allowed). A UTF-16 or UTF-32 file (Windows Notepad's "Unicode") is
read by its BOM. Else the legacy Chinese encodings (``data/editions.toml [encoding]``:
GB18030 for texts from the mainland, Big5-HKSCS for Taiwan and Hong Kong) are each tried;
either decodes most bytes of the other into Han characters, so the choice is made by
what the decoded characters are: the share of them that occur in the Yili chapters the
project bundles (normalised, so a simplified text counts as its traditional form). A
wrong decoding is mostly characters no chapter uses.
"""

from __future__ import annotations

import codecs
import contextlib
import functools

from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text.hanzi import is_han, normalise

__all__ = ["NotText", "Undecodable", "decode"]

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


class NotText(ValueError):
    """The file is a document of another kind (PDF, Word …), not a text: ``kind`` says
    which (``[encoding] documents``)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class Undecodable(ValueError):
    """No encoding reads the bytes as a Chinese text.

    Attributes
    ----------
    offset : int, the first byte that is not UTF-8
    tried : the encodings tried, in order
    """

    def __init__(self, offset: int, tried: tuple[str, ...]) -> None:
        first, *others = tried
        super().__init__(f"not {first}, and neither {' nor '.join(others)} reads the file as "
                         "a Chinese text" if others
                         else f"not {first}, although the file begins with its byte-order mark")
        self.offset, self.tried = offset, tried


@functools.cache
def _table() -> dict:
    return read_toml(data_dir() / "editions.toml")["encoding"]


@functools.cache
def _known() -> frozenset[str]:
    """The Han characters of the bundled chapters (``[encoding] known_from``), normalised."""
    patterns = _table()["known_from"]
    paths = [path for pattern in patterns for path in sorted(data_dir().glob(pattern))]
    if not paths:  # a package built without its texts
        raise FileNotFoundError(f"editions.toml [encoding] known_from: no file under "
                                f"{data_dir()} matches {patterns}")
    chars: set[str] = set()
    for path in paths:
        chars.update(normalise("".join(filter(is_han, path.read_text(encoding="utf-8")))))
    return frozenset(chars)


def _known_share(decoded: str) -> float:
    """The share of the Han characters of ``decoded`` that the bundled chapters use."""
    han = "".join(filter(is_han, decoded))
    known = _known()
    return sum(char in known for char in normalise(han)) / len(han) if han else 0.0


def decode(raw: bytes) -> tuple[str, str]:
    """``(text, encoding)`` of ``raw``: see the module's docstring.

    Raises
    ------
    NotText
        If the bytes open as a document of another kind (PDF, Word …).
    Undecodable
        If the bytes are not UTF-8, carry no UTF-16/32 BOM, and no legacy encoding reads
        enough of them as characters of the Yili (``[encoding] least_known_share``).
    """
    table = _table()
    for document in table["documents"]:
        if raw.startswith(bytes.fromhex(document["magic"])):
            raise NotText(document["kind"])
    name = next((name for bom, name in _BOMS if raw.startswith(bom)), "utf-8-sig")
    try:  # UTF-32's BOM begins with UTF-16's: _BOMS has the longer first
        return raw.decode(name), name.removesuffix("-sig")
    except UnicodeDecodeError as error:
        if name != "utf-8-sig":
            raise Undecodable(error.start, (name,)) from error
        offset = error.start
    decoded = {}
    for name in table["legacy"]:
        with contextlib.suppress(UnicodeDecodeError):
            decoded[name] = raw.decode(name)
    shares = {name: _known_share(text) for name, text in decoded.items()}
    best = max(shares, key=shares.__getitem__, default=None)
    if best is None or shares[best] < table["least_known_share"]:
        raise Undecodable(offset, ("utf-8", *table["legacy"]))
    return decoded[best], best
