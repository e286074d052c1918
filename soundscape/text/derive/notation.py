"""Notations an edition prints beside the words, read into cues: the drum patterns of the
射節 written as symbols (禮記·投壺: 鼓○□○○□□○□○○□半○□○□○○○□□○□○魯鼓 …; 鄭注: 圜者擊鼙，
方者擊鼓).

The symbols are not Han characters, so they never enter ``Text.chars``: they are read from
the source as printed (page markers, line ends and line breaks removed), each run labelled
by the name the print sets before or after it (``data/derive_rules.toml [notation]``). A
shooting 節 cue then carries the first printed pattern as a condition (``鼓節:魯鼓:○□…``),
which the sequencer plays in place of its piece's own (``soundscape.sequence.players``).
"""

from __future__ import annotations

import functools
import re

from soundscape.text.derive.formulas import rules
from soundscape.text.pages import without_marks
from soundscape.text.source import Text

__all__ = ["drum_patterns", "pattern_condition"]


@functools.cache
def _pattern() -> re.Pattern:
    table = rules()["notation"]
    symbols = re.escape("".join(table["symbols"]))
    half = re.escape(table["half"])
    labels = "|".join(map(re.escape, table["labels"]))
    run = rf"[{symbols}]+(?:{half}[{symbols}]+)?"
    return re.compile(rf"(?P<run>{run})(?P<after>{labels})"
                      rf"|(?P<before>{labels})[：:]?(?P<run2>{run})")


def drum_patterns(text: Text) -> list[tuple[str, str]]:
    """(label, symbols with the 半 marker) of each drum pattern the source prints, in order."""
    printed = re.sub(r"\s", "", without_marks(text.original))
    found = []
    for m in _pattern().finditer(printed):
        label, run = (m["after"], m["run"]) if m["run"] else (m["before"], m["run2"])
        if len(run) >= rules()["notation"]["least_strokes"]:
            found.append((label, run))
    return found


def pattern_condition(text: Text) -> tuple[str, ...]:
    """The condition a shooting 節 cue takes from the print: its first drum pattern."""
    found = drum_patterns(text)
    if not found:
        return ()
    label, run = found[0]
    return (f"{rules()['notation']['condition']}{label}:{run}",)
