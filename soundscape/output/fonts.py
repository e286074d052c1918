"""The fonts of the pictures: DejaVu Sans (matplotlib's own) for Latin, and for Chinese
the bundled subset of Noto Sans CJK TC (``soundscape/data/fonts``, SIL OFL 1.1), so every
machine draws the same glyphs without a system font or a font-cache rebuild.

A character the subset lacks (from a user's own cue sheet) falls back to an installed
CJK family when there is one.
"""

from __future__ import annotations

import functools

from soundscape.resources import data_dir

__all__ = ["BUNDLED_CJK", "FONT_FILE", "families"]

FONT_FILE = data_dir() / "fonts" / "SoundscapeCJK-Regular.otf"
#: The family name of the bundled subset (renamed from Noto Sans CJK TC, as the OFL asks).
BUNDLED_CJK = "Soundscape CJK"
_SYSTEM_CJK = ("Noto Sans CJK TC", "Noto Sans CJK SC", "Noto Serif CJK TC",
               "Source Han Sans TC", "WenQuanYi Zen Hei", "AR PL UMing TW")


@functools.cache
def families() -> tuple[str, ...]:
    """The ``font.family`` list for the pictures, registering the bundled font once."""
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(FONT_FILE))
    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    return ("DejaVu Sans", BUNDLED_CJK, *(f for f in _SYSTEM_CJK if f in installed))
