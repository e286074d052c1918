"""The ``soundscape`` command.

Each subcommand lives in its own module of this package and exposes a click
command named ``command``; the group discovers them, so adding a subcommand is
adding a module. Modules are imported only when listed or run.
"""

from __future__ import annotations

import importlib
import pkgutil

import click

from soundscape import __version__
from soundscape.errors import SoundscapeError
from soundscape.malloc import reuse_freed_memory

__all__ = ["main"]


class _Commands(click.Group):
    """A group whose commands are the modules of ``soundscape.cli``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
        return sorted(name.replace("_", "-") for name in names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.list_commands(ctx):
            return None
        module = importlib.import_module(f"{__name__}.{cmd_name.replace('-', '_')}")
        return module.command


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="soundscape")
def cli() -> None:
    """Rebuild the sound of the 大射儀 from its text: derive cues, place the orchestra,
    sequence the rite, and render it as MIDI, scores and spatial audio."""
    reuse_freed_memory()  # block-sized arrays come and go all through a render


def main() -> None:
    """Entry point: run the group, turning package errors into a clean message and exit 2."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as stop:
        raise SystemExit(stop.exit_code) from None
    except click.ClickException as error:
        error.show()
        raise SystemExit(error.exit_code) from None
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        raise SystemExit(130) from None
    except SoundscapeError as error:
        click.echo(f"error: {error}", err=True)
        raise SystemExit(2) from None
    except (FileNotFoundError, PermissionError, IsADirectoryError) as error:
        click.echo(f"error: {error}", err=True)
        raise SystemExit(2) from None
