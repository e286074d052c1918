"""Export a tuning as Scala files: ``.scl`` (the scale) and ``.kbm`` (the keyboard mapping).

The ``.scl`` lists the eleven 律 above 黃鍾 and the octave, in cents (Scala's
format: a line with a period is cents, ``2/1`` a ratio). The ``.kbm`` puts 黃鍾
on the same MIDI key as ``soundscape.output.mts.KeyMap`` does and gives its frequency,
so a synth loaded with both plays a MIDI file written in ``12tet`` or ``mts``
key layout in the historical tuning. Format: https://www.huygens-fokker.org/scala/scl_format.html
"""

from __future__ import annotations

from pathlib import Path

from soundscape.fileio import write_texts
from soundscape.music.tuning import LU, Tuning
from soundscape.output import mts

__all__ = ["kbm_text", "scl_text", "write_scala"]

_ROMAN = {"三分損益": "sanfen sunyi (Pythagorean)", "十二平均律": "equal temperament"}


def scl_text(tuning: Tuning) -> str:
    """The ``.scl`` text of ``tuning``: 12 degrees, 黃鍾 implicit at 0 cents, octave 2/1."""
    roman = _ROMAN.get(tuning.name, "custom")
    # The description line stays ASCII (the format is ASCII); the Chinese goes in comments.
    lines = [f"! {roman}.scl: {tuning.name}, 十二律 {' '.join(LU)}", "!",
             f"{roman}: twelve lu, huangzhong = {tuning.huangzhong_hz:.4f} Hz", " 12", "!"]
    lines += [f" {cents:.6f} ! {lu}" for lu, cents in zip(LU[1:], tuning.cents[1:], strict=True)]
    lines.append(" 2/1 ! 清黃鍾")
    return "\n".join(lines) + "\n"


def kbm_text(tuning: Tuning) -> str:
    """The ``.kbm`` text: linear 12-key mapping, 黃鍾 on its MIDI key at its frequency."""
    key = mts.key_map([tuning.pitch("黃鍾")]).huangzhong_key
    values = [("Map size", 12), ("First MIDI note", 0), ("Last MIDI note", 127),
              ("Middle note (scale degree 0 = 黃鍾)", key),
              ("Reference note", key), ("Frequency of reference note, Hz",
                                        f"{tuning.huangzhong_hz:.6f}"),
              ("Scale degree of the formal octave", 12)]
    lines = [f"! {tuning.name}: 黃鍾 on MIDI key {key}", "!"]
    for label, value in values:
        lines += [f"! {label}", str(value)]
    lines += ["! Mapping: key k plays scale degree k (mod 12)"]
    lines += [str(degree) for degree in range(12)]
    return "\n".join(lines) + "\n"


def write_scala(tuning: Tuning, stem: str | Path) -> tuple[Path, Path]:
    """Write ``<stem>.scl`` and ``<stem>.kbm``, both or neither, and return both paths."""
    stem = Path(stem)
    scl, kbm = stem.with_suffix(".scl"), stem.with_suffix(".kbm")
    write_texts({scl: scl_text(tuning), kbm: kbm_text(tuning)})
    return scl, kbm
