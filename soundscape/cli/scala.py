"""``soundscape scala``: the tuning as Scala ``.scl`` and ``.kbm`` files."""

from __future__ import annotations

import os
from pathlib import Path

import click

from soundscape.cli._common import FilePath, Huangzhong
from soundscape.errors import SoundscapeError
from soundscape.music.tuning import tuning_named
from soundscape.output import scala

__all__ = ["command"]

#: The endings of the pair written; either one names the pair's stem.
_ENDINGS = (".scl", ".kbm")


@click.command("scala")
@click.option("-o", "--out", "output", type=FilePath(dir_okay=False, path_type=str),
              default="output/sanfen_sunyi", show_default=True,
              help="Path stem: writes STEM.scl and STEM.kbm (a name ending .scl or .kbm "
                   "names the same pair).")
@click.option("--huangzhong", type=Huangzhong(), default="convention", show_default=True,
              help="黃鍾 in Hz (100-600) or a preset: convention (C4), zeng, qing.")
@click.option("--temperament", type=click.Choice(["sanfen", "equal"]), default=None,
              help="三分損益 (sanfen, the default) or equal temperament, as for `render`.")
@click.option("--equal", is_flag=True, help="The same as --temperament equal.")
def command(output: str, huangzhong: str, temperament: str | None, equal: bool) -> None:
    """Write the 三分損益 tuning (or equal temperament) for synths that read Scala files."""
    stem = _stem(output)
    if equal and temperament == "sanfen":
        raise click.UsageError("--equal is --temperament equal: give one of them")
    tuning = tuning_named("equal" if equal else temperament or "sanfen", huangzhong)
    for path in scala.write_scala(tuning, stem):
        click.echo(f"wrote {path}")


def _stem(output: str) -> Path:
    """The stem ``-o`` names; a folder (``out/``: out.scl was written beside it) or another
    ending (``tuning.v2``: its .v2 replaced) is refused."""
    accepted = "accepted: a path stem (STEM.scl and STEM.kbm are written) or a name ending " \
               f"{' or '.join(_ENDINGS)}"
    if output.endswith(("/", os.sep)):
        raise SoundscapeError(f"-o {output!r}: names a folder; {accepted}")
    path = Path(output)
    if path.suffix and path.suffix.lower() not in _ENDINGS:
        raise SoundscapeError(f"-o {output!r}: ending {path.suffix!r} is not Scala's; {accepted}")
    return path
