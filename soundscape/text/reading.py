"""Readings of the words: a character's syllable (onset, medial, nucleus, coda, tone) in IPA.

Two readings, each a published scheme stated in its data file under
``soundscape/data/readings/``:

- ``middle-chinese`` (the default): the character's 廣韻 position from the package
  ``tshet-uinh`` (offline 切韻 data), turned into sounds by 王力's reconstruction
  (《漢語史稿》 1980, ``wangli1980.toml``). It is the pronunciation of the 切韻 (601) and the
  Tang, the age of the 開元 melodies that the 風雅十二詩譜 hands down; nobody's Zhou
  pronunciation, but the nearest one that has a published, checkable scheme.
- ``mandarin``: modern Standard Mandarin by ``pypinyin`` (in context, so a phrase gets its
  readings of polyphones) and a stated pinyin → IPA table (``mandarin.toml``).

``syllable(char, reading)`` reads one character, ``read(text, reading)`` a phrase (its Han
characters only). A character with several senses is read by its sense where it stands, in
both readings (``text.senses``: 樂 music in 「請以樂」, joy in 「和樂且湛」; a lone
character gets its default). A character the reading cannot read raises ``ReadingError``
naming it: there is no silent fallback.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from soundscape.errors import TextError
from soundscape.fileio import read_toml
from soundscape.resources import data_dir
from soundscape.text.hanzi import is_han, normalise_char
from soundscape.text.senses import choose

__all__ = ["DEFAULT_READING", "READINGS", "ReadingError", "Syllable", "checked",
           "phrase_contours", "read", "scheme", "syllable", "tone_contour"]

READINGS = ("middle-chinese", "mandarin")
DEFAULT_READING = "middle-chinese"
_FILES = {"middle-chinese": "wangli1980.toml", "mandarin": "mandarin.toml"}


class ReadingError(TextError):
    """A character a reading cannot read, or an unknown reading."""


@dataclass(frozen=True, slots=True)
class Syllable:
    """One character's syllable in one reading; every part in IPA ("" when absent).

    ``onset`` is one consonant (``pʰ``, ``dʑʱ``); ``medial`` the glide before the vowel as
    the scheme writes it; ``coda`` the final consonant or glide; ``tone`` the reading's tone
    name (``平``/``上``/``去``/``入`` or ``1``–``5``).
    """

    character: str
    reading: str
    onset: str
    medial: str
    nucleus: str
    coda: str
    tone: str
    phones: tuple[str, ...]

    @property
    def ipa(self) -> str:
        """The syllable as its scheme writes it, e.g. ``mĭɐŋ``."""
        return self.onset + self.medial + self.nucleus + self.coda

    @property
    def lyric(self) -> str:
        """The phones, space separated: what a voice is given to sing (``"l u k"``)."""
        return " ".join(self.phones)


def syllable(character: str, reading: str = DEFAULT_READING) -> Syllable:
    """The syllable of one Han character in ``reading`` (one of ``READINGS``)."""
    _check(reading)
    if len(character) != 1 or not is_han(character):
        raise ReadingError(f"reading {reading}: {character!r} is not one Han character")
    if reading == "mandarin":
        return _mandarin(character, character)[0]
    return _middle_chinese(character, _chosen(character)[0])


def read(text: str, reading: str = DEFAULT_READING) -> tuple[Syllable, ...]:
    """The syllables of the Han characters of ``text``, in order (others are skipped)."""
    _check(reading)
    han = "".join(c for c in text if is_han(c))
    if reading == "mandarin":
        return _mandarin(han, text)
    return tuple(_middle_chinese(c, chosen) for c, chosen in zip(han, _chosen(han), strict=True))


def scheme(reading: str = DEFAULT_READING) -> str:
    """The name and sources of the reading's scheme (for outputs to say which they used)."""
    _check(reading)
    return _table(reading)["scheme"]


def tone_contour(syl: Syllable) -> tuple[int, ...]:
    """The tone as Chao tone letters (1 lowest … 5 highest), from the reading's table."""
    return tuple(_table(syl.reading)["tones"][syl.tone])


def phrase_contours(syllables: tuple[Syllable, ...] | list[Syllable]
                    ) -> list[tuple[int, ...]]:
    """The tones of a phrase's syllables as said together, in Chao letters: the reading's
    ``[context]`` rules (Mandarin: 3 before 3 is said 2, a non-final 3 as 21) over
    ``tone_contour``; a reading without them keeps each syllable's own."""
    out = []
    for i, syl in enumerate(syllables):
        context = _table(syl.reading).get("context", {})
        tone = syl.tone
        after = syllables[i + 1].tone if i + 1 < len(syllables) else None
        tone = context.get("before", {}).get(tone, {}).get(after, tone)
        tones = _table(syl.reading)["tones"]
        contour = tuple(tones[tone])
        if after is not None and tone in context.get("not_final", {}):
            contour = tuple(context["not_final"][tone])
        out.append(contour)
    return out


def checked(syl: Syllable) -> bool:
    """Whether the syllable ends in a stop (-p -t -k: the 入聲's checked syllable)."""
    return syl.coda in ("p", "t", "k")


def _check(reading: str) -> None:
    if reading not in READINGS:
        raise ReadingError(f"reading {reading!r} is unknown; accepted: {', '.join(READINGS)}")


@functools.cache
def _table(reading: str) -> dict:
    return read_toml(data_dir() / "readings" / _FILES[reading], error=ReadingError)


@functools.cache
def _choices() -> dict:
    return read_toml(data_dir() / "readings" / "choices.toml", error=ReadingError)


def _chosen(han: str) -> list[str | None]:
    """Per character: the 音韻地位 its sense there takes (``text.senses``), else None."""
    return [None if sense is None else sense.position for sense in choose(han)]


# -- Mandarin -------------------------------------------------------------------------------
def _mandarin(han: str, where: str) -> tuple[Syllable, ...]:
    from pypinyin import Style, pinyin

    choices = _choices()
    standard = "".join(choices["variants"].get(c, c) for c in han)
    toned = [p[0] for p in pinyin(standard, style=Style.TONE3, strict=True,
                                  neutral_tone_with_five=True,
                                  # pypinyin takes a list too (one reading per character);
                                  # its bundled stubs say str only
                                  errors=lambda s: [""] * len(s))]  # type: ignore[arg-type, return-value, unused-ignore]
    for phrase, row in choices["mandarin"].items():  # readings pypinyin gets wrong here
        at = standard.find(phrase)
        while at >= 0:
            toned[at:at + len(phrase)] = row["pinyin"]
            at = standard.find(phrase, at + 1)
    for at, sense in enumerate(choose(standard)):  # read by its sense there
        if sense is not None:
            toned[at] = sense.pinyin
    return tuple(_from_pinyin(char, said, where)
                 for char, said in zip(han, toned, strict=True))


def _from_pinyin(char: str, syllable_pinyin: str, where: str) -> Syllable:
    """The Mandarin syllable of ``char`` said as ``syllable_pinyin`` (tone digit)."""
    from pypinyin.contrib.tone_convert import to_finals, to_initials

    table = _table("mandarin")
    initial = to_initials(syllable_pinyin, strict=True)
    final = to_finals(syllable_pinyin, strict=True)
    if final not in table["finals"] or not syllable_pinyin[-1:].isdigit():
        raise ReadingError(f"reading mandarin: pypinyin has no reading of {char!r} "
                           f"(in {where!r})")
    medial, nucleus, coda = table["finals"][final]
    if final == "i" and initial in table["apical"]["initials"]:
        nucleus = table["apical"]["vowel"]
    onset = table["initials"].get(initial, "")
    phones = tuple(p for p in (onset, medial, nucleus, coda) if p)
    return Syllable(char, "mandarin", onset, medial, nucleus, coda, syllable_pinyin[-1],
                    phones)


# -- Middle Chinese -------------------------------------------------------------------------
@functools.cache
def _middle_chinese(character: str, chosen: str | None = None) -> Syllable:
    """The syllable of ``character`` at the 音韻地位 ``chosen`` (a tshet-uinh 描述), or
    where none is chosen at its reading from the choices table or the first listed."""
    import tshet_uinh

    position = _position(character) if chosen is None else tshet_uinh.音韻地位.from描述(chosen)
    table = _table("middle-chinese")
    rhyme = table["merge"].get(position.韻, position.韻)
    found = [(vowel, cells.index(rhyme)) for vowel, cells in table["nuclei"].items()
             if rhyme in cells]
    if not found:  # every 廣韻 韻 is in the table: only an edited data file gets here
        raise ReadingError(f"wangli1980.toml: [nuclei] has no 韻 {rhyme!r} ({character})")
    nucleus, column = found[0]
    entering = position.聲 == "入"
    coda = table["codas"]["入" if entering else "舒"][column]
    medial = "".join(_medial(position, rules) for rules in table["medials"].values())
    onset = table["initials"][position.母]
    phone = table["phones"]
    phones = [onset, *(phone["medial"].get(m, m) for m in medial),
              phone["nucleus"].get(nucleus, nucleus), phone["coda"].get(coda, coda)]
    return Syllable(character, "middle-chinese", onset, medial, nucleus, coda, position.聲,
                    tuple(p for p in phones if p))


def _medial(position, rules: list[dict]) -> str:
    for rule in rules:
        if position.屬於(rule["when"]):
            return rule["medial"]
    return ""


def _position(character: str):
    """The character's 廣韻 音韻地位 (tshet-uinh): as written, else its variant, its OpenCC
    form or that form's variant; the choices table picks among several readings, else the
    first listed is taken."""
    import tshet_uinh

    choices = _choices()
    normal = normalise_char(character)  # 间 → 間, whose 廣韻 form is the variant 閒
    for written in dict.fromkeys((choices["variants"].get(character, character), normal,
                                  choices["variants"].get(normal, normal))):
        chosen = choices["character"].get(written)
        if chosen is not None:
            return tshet_uinh.音韻地位.from描述(chosen["position"])
        found = tshet_uinh.資料.query字頭(written)
        if found:
            return found[0].音韻地位
    raise ReadingError(f"reading middle-chinese: {character!r} is not in the 廣韻 data of "
                       "tshet-uinh; add its standard form to [variants] in "
                       "soundscape/data/readings/choices.toml or use --reading mandarin")
