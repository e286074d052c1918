"""The public API at the top of the package: its docstrings' examples run (doctest), it
survives the imports of the packages beneath it, it stays light to import, and the
package says it is typed (PEP 561)."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import soundscape

_FINDER = doctest.DocTestFinder(exclude_empty=True)
_EXAMPLES = [t for t in _FINDER.find(soundscape, "soundscape") if t.examples]


def test_every_public_function_shows_an_example() -> None:
    shown = {t.name.rsplit(".", 1)[-1] for t in _EXAMPLES}
    assert {"soundscape", "derive", "load_cues", "perform", "render"} <= shown


@pytest.mark.parametrize("test", _EXAMPLES, ids=lambda t: t.name)
def test_the_docstring_examples_run_as_shown(test: doctest.DocTest) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert runner.tries == len(test.examples)


def test_perform_is_not_hidden_by_the_sequence_package() -> None:
    import soundscape.sequence.planner  # binds soundscape.sequence (the package)

    assert callable(soundscape.perform) and soundscape.perform.__module__ == "soundscape"
    assert soundscape.Performance is soundscape.performance.Performance
    assert soundscape.CueSheet is soundscape.cuesheet.CueSheet
    with pytest.raises(AttributeError, match="no attribute 'Perfomance'"):
        soundscape.Perfomance  # noqa: B018


def test_importing_the_package_loads_none_of_the_heavy_parts() -> None:
    probe = ("import sys, soundscape; "
             "print(sorted(m for m in ('numpy', 'scipy', 'music21', 'matplotlib', "
             "'soundscape.sound', 'soundscape.sequence') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True, cwd=Path(soundscape.__file__).parents[1])
    assert found.stdout.strip() == "[]"


def test_the_package_says_it_is_typed() -> None:
    # PEP 561: type checkers read the package's own annotations only when this file is
    # in the installed package (the wheel takes every file under soundscape/)
    marker = Path(soundscape.__file__).with_name("py.typed")
    assert marker.is_file() and marker.read_text() == ""


def test_derive_takes_one_chapter_of_a_book(tmp_path: Path) -> None:
    """soundscape.derive(book) refused a file of two chapters; chapter= chooses one, as
    derive --chapter does, and a book without it is refused with its chapters listed."""
    from soundscape.errors import TextError
    from soundscape.resources import data_dir

    kanseki = data_dir() / "texts" / "kanseki"
    book = tmp_path / "book.txt"
    book.write_text("".join((kanseki / f"KR1d0026_00{n}.txt").read_text(encoding="utf-8")
                            for n in (4, 6)), encoding="utf-8")
    assert soundscape.derive(book, chapter="六").text.id == "yan"
    assert soundscape.derive(book, rite="xiangyinjiu").text.id == "xiangyinjiu"
    with pytest.raises(TextError, match=r"holds 2 chapters: line 11 .*--chapter 4, xiangyinjiu"):
        soundscape.derive(book)


def test_derive_can_drop_what_the_rite_does_not_hold() -> None:
    """drop_unmatched= reads only the rite's words, as derive --drop-unmatched does."""
    body = "\n".join(f"{line}\n這一段說的是{line[:6]}等事，今譯其大意於此，以便讀者。"
                     for line in soundscape.text.load_bundled().original.splitlines()
                     if line and not line.startswith("#"))
    as_printed = soundscape.derive(body, rite="dashe")
    dropped = soundscape.derive(body, rite="dashe", drop_unmatched=True)
    assert len(as_printed.steps) > len(dropped.steps) == len(soundscape.derive().steps)
