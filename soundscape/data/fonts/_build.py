"""Rebuild ``SoundscapeCJK-Regular.otf``: Noto Sans CJK TC cut down to the characters the
pictures draw (every non-Latin character of the bundled cue sheets, site, tables, pieces
and instruments), renamed as the SIL Open Font License 1.1 asks of a modified version.

Run from the repository top after editing the data, with Debian's fonts-noto-cjk installed:
``python soundscape/data/fonts/_build.py [NotoSansCJK-Regular.ttc]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
TC_INDEX = 3  # Noto Sans CJK TC in the collection: traditional forms, as the texts are
FAMILY = "Soundscape CJK"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DATA = ("cues/*.toml", "instruments/*.toml", "soundscape/data/*.toml",
        "soundscape/data/pieces/*.toml", "soundscape/data/sites/*.toml")
EXTRA = "貍步尺弓侯乏堂庭階楹坫鼓鐘磬笙管瑟鼗鼙鑮"  # words the pictures write themselves


def characters(root: Path = ROOT) -> str:
    """Every character above the Latin ranges that the bundled data holds, sorted."""
    found = set(EXTRA)
    for pattern in DATA:
        for path in sorted(root.glob(pattern)):
            found.update(c for c in path.read_text(encoding="utf-8") if ord(c) >= 0x2E80)
    return "".join(sorted(found))


def build(source: Path = SOURCE, target: Path = HERE / "SoundscapeCJK-Regular.otf") -> Path:
    font = TTCollection(source).fonts[TC_INDEX]
    options = subset.Options()
    options.layout_features = ["vert", "vrt2"]  # nothing else: labels are set horizontally
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 7, 13, 14]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=characters())
    subsetter.subset(font)
    _rename(font)
    font.save(target)
    return target


def _rename(font) -> None:
    """A modified font must not carry the original's names (OFL 1.1, condition 3)."""
    postscript = FAMILY.replace(" ", "") + "-Regular"
    names = {1: FAMILY, 3: f"{postscript};subset of Noto Sans CJK TC 2.004",
             4: f"{FAMILY} Regular", 6: postscript, 16: FAMILY, 17: "Regular"}
    table = font["name"]
    for record in list(table.names):
        if record.nameID in names or record.nameID in (16, 17):
            table.removeNames(nameID=record.nameID)
    for name_id, value in names.items():
        table.setName(value, name_id, 3, 1, 0x409)
    cff = font["CFF "].cff
    cff.fontNames = [postscript]
    top = cff.topDictIndex[0]
    top.FullName, top.FamilyName = f"{FAMILY} Regular", FAMILY


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCE))
