"""十二律: the twelve pitch pipes, their tunings, the 五聲 on any 宮, and 工尺 names.

A :class:`Tuning` is a reference frequency for 黃鍾 plus the twelve 律 as cents
above it. Three ways to make one:

- :meth:`Tuning.sanfen_sunyi` (the default): 三分損益, the classical 隔八相生
  chain of ×2/3 and ×4/3 pipe lengths as 鄭玄 gives it (exact Pythagorean ratios,
  2187/2048 for 大呂 … 243/128 for 應鍾);
- :meth:`Tuning.equal`: twelve equal semitones (朱載堉's 新法密率);
- :meth:`Tuning.from_cents`: any table of twelve cents values.

Names are read leniently: 清 (octave up) and 倍 (octave down) prefixes, repeated
for further octaves; character variants (鍾/鐘/钟, 呂/吕, 簇/蔟 …); the one-
character abbreviations of the scores (黃 太 姑 …); romanised ids (huangzhong).
Every pitch comes out as a :class:`soundscape.music.pitch.Pitch` carrying its 律 and Hz.

The tables (律 names, generation order, 五聲 steps, 工尺 key, 黃鍾 presets) live
in ``soundscape/data/tuning.toml`` with their sources (docs/sources.md M4).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from soundscape.errors import TuningError
from soundscape.fileio import read_toml
from soundscape.music.pitch import Pitch
from soundscape.resources import data_dir

__all__ = [
    "DEGREES",
    "HUANGZHONG_HZ",
    "HUANGZHONG_RANGE_HZ",
    "LU",
    "PENTATONIC",
    "TEMPERAMENTS",
    "Tuning",
    "canonical_degree",
    "canonical_lu",
    "canonical_name",
    "default_tuning",
    "parse_name",
    "performed_tuning",
    "to_gongche",
    "tuning_named",
]

_UP, _DOWN = "清", "倍"


@functools.cache
def _tables() -> dict[str, Any]:
    """The parsed ``tuning.toml`` (read once, on first use)."""
    return read_toml(data_dir() / "tuning.toml")


LU: tuple[str, ...] = (
    "黃鍾", "大呂", "太簇", "夾鍾", "姑洗", "仲呂",
    "蕤賓", "林鍾", "夷則", "南呂", "無射", "應鍾",
)
"""The twelve 律 in pitch order (canonical traditional forms)."""

DEGREES: tuple[str, ...] = ("宮", "商", "角", "變徵", "徵", "羽", "變宮")
"""The 五聲 and 二變 in scale order."""

PENTATONIC: tuple[str, ...] = ("宮", "商", "角", "徵", "羽")
"""The 五聲 alone."""


def _named_hz() -> dict[str, float]:
    return dict(_tables()["huangzhong_hz"])


class _Presets:
    """Read-only mapping view of the named 黃鍾 frequencies in ``tuning.toml``."""

    def __getitem__(self, key: str) -> float:
        presets = _named_hz()
        if key not in presets:
            raise TuningError(f"huangzhong preset {key!r} unknown; accepted: {sorted(presets)}")
        return float(presets[key])

    def keys(self) -> list[str]:
        return sorted(_named_hz())

    def __contains__(self, key: object) -> bool:
        return key in _named_hz()


HUANGZHONG_HZ = _Presets()
"""Named 黃鍾 frequencies, Hz: ``convention`` (黃鍾 = C4, the default), ``zeng``
(≈ G♯3 − 32 cents, derived from the Zeng bells' 姑洗 ≈ C), ``qing`` (≈ D4)."""


@functools.lru_cache(maxsize=1024)  # a rite asks for its few names tens of thousands of times
def canonical_lu(text: str) -> str:
    """The canonical 律 name for a variant spelling, abbreviation or romanised id.

    Raises
    ------
    TuningError
        When ``text`` names no 律.
    """
    tables = _tables()
    word = text.strip()
    roman = word.lower().replace("v", "ü").replace("lu", "lü")
    for row in tables["lu"]:
        if roman == row["roman"]:
            return row["name"]
    # Multi-character variants first (中呂 → 仲呂), then single characters.
    variants = sorted(tables["variants"].items(), key=lambda kv: -len(kv[0]))
    for old, new in variants:
        word = word.replace(old, new)
    for row in tables["lu"]:
        if word in (row["name"], row["short"]):
            return row["name"]
    raise TuningError(
        f"律 name {text!r} unknown; accepted: {', '.join(LU)} (with 清/倍 prefixes, variants "
        "such as 鐘/钟, 吕, 蔟, one-character forms 黃 太 姑 …, or romanised ids huangzhong …)"
    )


@functools.lru_cache(maxsize=1024)
def parse_name(name: str) -> tuple[str, int]:
    """Split a pitch name into its canonical 律 and octave (清 +1 each, 倍 −1 each).

    Parameters
    ----------
    name : str
        E.g. ``清黃鍾``, ``倍林钟``, ``清清太``, ``huangzhong``.

    Returns
    -------
    (lu, octave) : (str, int)
    """
    text = name.strip()
    octave = 0
    while text[:1] in (_UP, _DOWN):
        octave += 1 if text[0] == _UP else -1
        text = text[1:]
    if not text:
        raise TuningError(f"pitch name {name!r} has an octave prefix but no 律")
    return canonical_lu(text), octave


def canonical_name(name: str) -> str:
    """The canonical pitch name of a name with variants (``清黄钟`` → ``清黃鍾``)."""
    lu, octave = parse_name(name)
    return Pitch(lu, octave, 1.0).name


def canonical_degree(degree: str) -> str:
    """The canonical 聲 name (宮 商 角 徵 羽 變宮 變徵) for a variant or romanised id."""
    table = _tables()["degree_variants"]
    word = table.get(degree.strip().lower(), degree.strip())
    for old, new in table.items():
        if len(old) == 1:
            word = word.replace(old, new)
    if word not in _tables()["degrees"]:
        raise TuningError(f"degree {degree!r} unknown; accepted: {', '.join(DEGREES)}")
    return word


def _sanfen_sunyi_ratios() -> tuple[Fraction, ...]:
    """The twelve frequency ratios to 黃鍾 made by the 三分損益 chain of ``tuning.toml``."""
    chain = _tables()["sanfen_sunyi"]
    length = {chain["start"]: Fraction(1)}
    last = chain["start"]
    for lu, how in chain["steps"]:
        factor = {"下生": Fraction(2, 3), "上生": Fraction(4, 3)}[how]
        length[lu] = length[last] * factor
        last = lu
    return tuple(1 / length[lu] for lu in LU)


@dataclass(frozen=True, slots=True)
class Tuning:
    """A tuning of the twelve 律.

    Parameters
    ----------
    name : str
        What the tuning is (``三分損益``, ``十二平均律``, or the caller's name).
    huangzhong_hz : float > 0, Hz
        The frequency of 黃鍾 in the 正 octave.
    cents : tuple of 12 float, cents
        Each 律 in pitch order (黃鍾 … 應鍾) above 黃鍾; the first is 0, strictly
        increasing, all below 1200.
    """

    name: str
    huangzhong_hz: float
    cents: tuple[float, ...]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.huangzhong_hz) and 8.0 < self.huangzhong_hz < 20000.0):
            raise TuningError(
                f"tuning {self.name!r}: huangzhong_hz={self.huangzhong_hz!r} must be a frequency "
                "between 8 and 20000 Hz"
            )
        cents = self.cents
        if len(cents) != 12 or not all(math.isfinite(c) for c in cents):
            raise TuningError(
                f"tuning {self.name!r}: cents must be 12 finite numbers, got {cents!r}"
            )
        rising = all(b > a for a, b in itertools.pairwise(cents))
        if cents[0] != 0 or not rising or cents[-1] >= 1200:
            raise TuningError(
                f"tuning {self.name!r}: cents {cents!r} must start at 0 (黃鍾), rise strictly "
                "and stay below 1200"
            )

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def sanfen_sunyi(cls, huangzhong_hz: float | str = "convention") -> Tuning:
        """三分損益 (the default): the 律 as exact ratios of the 隔八相生 chain.

        Parameters
        ----------
        huangzhong_hz : float > 0, Hz, or preset name
            黃鍾's frequency, or one of :data:`HUANGZHONG_HZ` (``convention`` = C4,
            ``zeng``, ``qing``).
        """
        cents = tuple(1200.0 * math.log2(r) for r in _sanfen_sunyi_ratios())
        return cls("三分損益", _reference(huangzhong_hz), (0.0, *cents[1:]))

    @classmethod
    def equal(cls, huangzhong_hz: float | str = "convention") -> Tuning:
        """Twelve equal semitones (朱載堉's 新法密率), 黃鍾 at ``huangzhong_hz``."""
        return cls("十二平均律", _reference(huangzhong_hz), tuple(100.0 * i for i in range(12)))

    @classmethod
    def from_cents(cls, cents: Sequence[float], huangzhong_hz: float | str = "convention", *,
                   name: str = "custom") -> Tuning:
        """Any tuning given as twelve cents values above 黃鍾 (黃鍾 … 應鍾)."""
        try:
            values = tuple(float(c) for c in cents)
        except (TypeError, ValueError) as error:
            raise TuningError(f"tuning {name!r}: cents {cents!r} must be numbers") from error
        return cls(name, _reference(huangzhong_hz), values)

    # -- pitches --------------------------------------------------------------------------
    def hz_of(self, lu: str, octave: int = 0) -> float:
        """Frequency in Hz of a canonical 律 in an octave (0 = 正, 1 = 清, −1 = 倍)."""
        return self.huangzhong_hz * 2.0 ** (octave + self.cents[LU.index(lu)] / 1200.0)

    def pitch(self, name: str) -> Pitch:
        """The pitch of a name such as ``林鍾``, ``清黃鍾``, ``倍南吕``, ``清太``."""
        lu, octave = parse_name(name)
        return Pitch(lu, octave, self.hz_of(lu, octave))

    def step(self, pitch: Pitch | str, semitones: int) -> Pitch:
        """The 律 ``semitones`` places above (or below, if negative) ``pitch``."""
        start = self.pitch(pitch) if isinstance(pitch, str) else pitch
        index = LU.index(start.lu) + semitones
        octave, place = divmod(index, 12)
        lu = LU[place]
        return Pitch(lu, start.octave + octave, self.hz_of(lu, start.octave + octave))

    def degree(self, *, gong: str = "黃鍾", degree: str = "宮", octave: int = 0) -> Pitch:
        """The pitch of a 聲 when ``gong`` is 宮 (旋宮).

        Parameters
        ----------
        gong : str
            The 律 that is 宮, with optional 清/倍 prefix.
        degree : str
            宮 商 角 徵 羽 變宮 變徵 (or variants: 宫, 变徵, romanised ``shang`` …).
        octave : int
            Octaves above the 宮's own octave.
        """
        steps = _tables()["degrees"][canonical_degree(degree)]
        found = self.step(gong, steps)
        return Pitch(found.lu, found.octave + octave, self.hz_of(found.lu, found.octave + octave))

    def scale(self, *, gong: str = "黃鍾", degrees: Sequence[str] = PENTATONIC,
              octaves: int = 1) -> tuple[Pitch, ...]:
        """The mode on ``gong``: the given degrees, ascending over ``octaves`` octaves."""
        return tuple(self.degree(gong=gong, degree=d, octave=o)
                     for o in range(octaves) for d in degrees)

    def nearest(self, hz: float) -> tuple[Pitch, float]:
        """The 律 nearest to a frequency and the offset from it in cents."""
        if not (hz > 0 and math.isfinite(hz)):
            raise TuningError(f"frequency {hz!r} Hz must be a finite number > 0")
        cents = 1200.0 * math.log2(hz / self.huangzhong_hz)
        octave = math.floor(cents / 1200.0)
        best = None
        for shift in (octave - 1, octave, octave + 1):
            for lu, c in zip(LU, self.cents, strict=True):
                off = cents - (1200.0 * shift + c)
                if best is None or abs(off) < abs(best[1]):
                    best = (Pitch(lu, shift, self.hz_of(lu, shift)), off)
        assert best is not None
        return best

    # -- 工尺 -----------------------------------------------------------------------------
    def from_gongche(self, syllable: str) -> Pitch:
        """The pitch of a 工尺 syllable in 熊朋來's fixed key (合 = 黃鍾, 六 = 清黃鍾)."""
        for name, lu, octave in _tables()["gongche"]["key"]:
            if syllable.strip() in (name, name.replace("緊", "𦂳")):
                return Pitch(lu, octave, self.hz_of(lu, octave))
        names = " ".join(row[0] for row in _tables()["gongche"]["key"])
        raise TuningError(f"工尺 syllable {syllable!r} unknown; accepted: {names}")


def to_gongche(pitch: Pitch | str) -> str:
    """The 工尺 syllable of a pitch in 熊朋來's key (黃鍾 … 清夾鍾 only)."""
    lu, octave = (pitch.lu, pitch.octave) if isinstance(pitch, Pitch) else parse_name(pitch)
    for name, row_lu, row_octave in _tables()["gongche"]["key"]:
        if (row_lu, row_octave) == (lu, octave):
            return name
    raise TuningError(
        f"pitch {Pitch(lu, octave, 1.0).name!r} has no 工尺 syllable in 熊朋來's key, "
        "which covers 黃鍾 … 清夾鍾"
    )


def _reference(huangzhong_hz: float | str) -> float:
    """Hz, a preset's name, or Hz as typed (``"440"``: an option's value)."""
    if isinstance(huangzhong_hz, str):
        if huangzhong_hz not in HUANGZHONG_HZ and len(huangzhong_hz) <= 40:
            with contextlib.suppress(ValueError):
                return float(huangzhong_hz)
        return HUANGZHONG_HZ[huangzhong_hz]
    try:
        return float(huangzhong_hz)
    except (TypeError, ValueError) as error:
        raise TuningError(
            f"huangzhong_hz={huangzhong_hz!r} must be Hz or a preset: {HUANGZHONG_HZ.keys()}"
        ) from error


#: The 黃鍾 a verb (``--huangzhong``), a batch plan or a saved Performance takes, Hz: the
#: presets (zeng ≈ 208, convention ≈ 262, qing ≈ 294) and every pitch standard proposed for
#: the Zhou lie well inside.
HUANGZHONG_RANGE_HZ = (100.0, 600.0)

#: The temperaments a verb (``--temperament``) or a batch plan (``tuning``) names: 三分損益
#: (``sanfen``, or ``sanfen_sunyi`` as batch plans spell it) or equal temperament.
TEMPERAMENTS: dict[str, str] = {"sanfen": "三分損益", "sanfen_sunyi": "三分損益",
                                "equal": "十二平均律"}


def tuning_named(temperament: str, huangzhong: float | str = "convention") -> Tuning:
    """The tuning of ``temperament`` (a key of :data:`TEMPERAMENTS`) with 黃鍾 at
    ``huangzhong`` (Hz, or a preset of :data:`HUANGZHONG_HZ`)."""
    if temperament not in TEMPERAMENTS:
        raise TuningError(f"temperament {temperament!r} unknown; accepted: "
                          f"{', '.join(TEMPERAMENTS)}")
    make = Tuning.equal if temperament == "equal" else Tuning.sanfen_sunyi
    return make(huangzhong)


def performed_tuning(name: str, huangzhong_hz: float) -> Tuning:
    """The tuning a Performance was sequenced in, from its ``info`` (the tuning's name and
    黃鍾): what the bells' B-tones are reckoned in. The default where the info does not say
    (a file saved before it was recorded, or a tuning of the caller's own cents, which the
    info does not keep)."""
    temperament = next((key for key, named in TEMPERAMENTS.items() if named == name), None)
    if huangzhong_hz and temperament is not None:
        return tuning_named(temperament, huangzhong_hz)
    return default_tuning()


def default_tuning() -> Tuning:
    """三分損益 with 黃鍾 at the default preset of ``tuning.toml`` (C4, the convention)."""
    return Tuning.sanfen_sunyi(_tables()["defaults"]["huangzhong"])
