"""The ``soundscape`` command.

Each subcommand lives in its own module of this package and exposes a click
command named ``command``; the group discovers them, so adding a subcommand is
adding a module. Listing the verbs (``soundscape --help``) imports none of them:
their one-line help comes from the table below, or for a module the table does
not know, from the first line of its docstring read with ``ast``. A verb's module
is imported only when that verb runs or shows its own help.
"""

from __future__ import annotations

import ast
import errno
import importlib
import pkgutil
import signal
from pathlib import Path

import click

from soundscape import __version__
from soundscape.errors import SoundscapeError

__all__ = ["cli", "main"]

#: One-line help of the verbs, so that listing them imports nothing heavy.
VERBS = {
    "archery": "The shooting rounds' results: JSON and CSV per round.",
    "audition": "Each instrument alone: a WAV and a spectrogram.",
    "batch": "Many renders at once, on a process pool or a Dask cluster.",
    "cues": "The music and voice cues of a cue sheet, with quotes.",
    "derive": "Derive a cue sheet from a text.",
    "kit": "The museum kit: loops, captions, show control, a web page.",
    "midi": "The rite as MIDI in its historical tuning, with markers.",
    "pieces": "The repertoire with each piece's basis, or one piece.",
    "play": "Hear the rite from a section or a cue as it renders.",
    "plan": "Draw the courtyard, targets and orchestra (SVG, PNG).",
    "render": "The rite heard from a place: spatial audio and MIDI.",
    "scala": "The tuning as Scala .scl and .kbm files.",
    "score": "A piece, or part of the performed rite, as MusicXML.",
    "sections": "The performed sections: ids, names, times and the music in each.",
    "sequence": "The timed Performance (JSON) and a timeline picture.",
    "show": "Play a kit programme's cues in real time as OSC messages.",
}


def _module_name(verb: str) -> str:
    return verb.replace("-", "_")


def _docstring_line(verb: str) -> str:
    """The first sentence of a verb module's docstring, without importing the module."""
    path = Path(__path__[0]) / f"{_module_name(verb)}.py"
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError, UnicodeDecodeError):
        return ""
    line = doc.split("\n\n")[0].replace("\n", " ")
    line = line.split("``: ", 1)[-1] if line.startswith("``") else line
    return line[:1].upper() + line[1:]


class _Commands(click.Group):
    """A group whose commands are the modules of ``soundscape.cli``, imported when run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
        return sorted(name.replace("_", "-") for name in names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.list_commands(ctx):
            return None
        module = importlib.import_module(f"{__name__}.{_module_name(cmd_name)}")
        return module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(verb, VERBS.get(verb) or _docstring_line(verb))
                for verb in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="soundscape")
def cli() -> None:
    """Rebuild the sound of the 大射儀 from its text: derive cues, place the orchestra,
    sequence the rite, and render it as MIDI, scores and spatial audio.

    Data: run inside a project folder (one with a soundscape.toml, or a checkout of
    soundscape) and its cues/ and instruments/ are used instead of the bundled ones.
    """
    from soundscape.malloc import reuse_freed_memory

    reuse_freed_memory()  # block-sized arrays come and go all through a render


#: What each errno means for the path it names, in words a user can act on.
_OS_PROBLEMS = {
    errno.EROFS: "the file system is read-only; write somewhere else (-o/--out)",
    errno.ENOSPC: "no space left on the device; free some space or write elsewhere",
    errno.EDQUOT: "disk quota exceeded; free some space or write elsewhere",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "no such file or folder",
    errno.EISDIR: "is a folder, not a file",
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.EEXIST: "already exists",
}


#: Characters of an error line: a value of 100 000 characters was echoed whole.
_LONGEST_LINE = 2000


def _short(message: str) -> str:
    """``message`` with each line cut to ``_LONGEST_LINE`` characters."""
    return "\n".join(line if len(line) <= _LONGEST_LINE
                     else f"{line[:_LONGEST_LINE]}… ({len(line)} characters)"
                     for line in message.split("\n"))


def os_problem(error: OSError) -> str:
    """One line naming the path of ``error`` and what went wrong, by its errno."""
    where = error.filename if error.filename is not None else ""
    blocker = _file_in_the_way(Path(where)) if where else None
    if error.errno in (errno.ENOTDIR, errno.EEXIST) and blocker is not None:
        what = f"{blocker} is a file, where a folder is needed"  # mkdir met a file on the way
    elif error.errno == errno.ENOTDIR and where:
        what = "a part of the path is not a folder"
    elif error.errno == errno.EEXIST and where and Path(where).is_file():
        what = "is a file, where a folder is needed"  # mkdir met a file
    else:
        what = _OS_PROBLEMS.get(error.errno or 0, error.strerror or str(error))
    return f"{where}: {what}" if where else what


def _file_in_the_way(path: Path) -> Path | None:
    """The first ancestor of ``path`` that exists as a file (so nothing can go under it)."""
    for parent in reversed(path.parents):
        if parent.is_file():
            return parent
    return None


class _Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, a service manager): stopped as Ctrl-C stops a command, so what
    it was writing is cleaned up the same way."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def main() -> None:
    """Entry point: run the group, turning package and file-system errors into one line
    (``error: …``) and exit status 2; Ctrl-C exits 130, SIGTERM 143, both cleaned up."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        _run()
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run() -> None:
    """The group, its errors as one line each (see :func:`main`)."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as stop:
        raise SystemExit(stop.exit_code) from None
    except click.ClickException as error:  # one line, as every error (not click's usage block)
        context = getattr(error, "ctx", None)
        helped = f" (`{context.command_path} --help`)" if context is not None else ""
        click.echo(f"error: {_short(error.format_message())}{helped}", err=True)
        raise SystemExit(error.exit_code) from None
    except click.exceptions.Abort as stop:
        terminated = isinstance(stop.__cause__, _Terminated)
        click.echo("Terminated." if terminated else "Aborted.", err=True)
        raise SystemExit(143 if terminated else 130) from None
    except _Terminated:
        click.echo("Terminated.", err=True)
        raise SystemExit(143) from None
    except MemoryError:
        click.echo("error: out of memory: this machine cannot hold what was asked for; ask "
                   "for less (a shorter span: --from/--to; fewer --jobs)", err=True)
        raise SystemExit(2) from None
    except SoundscapeError as error:
        click.echo(f"error: {_short(str(error))}", err=True)
        raise SystemExit(2) from None
    except OSError as error:
        click.echo(f"error: {os_problem(error)}", err=True)
        raise SystemExit(2) from None
