"""What several verbs share: the line naming the data a run used, the sequencing options
(one decorator), and stage-by-stage progress for long work."""

from __future__ import annotations

import contextlib
import functools
import math
import shlex
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import click

from soundscape.resources import bundled_dir

__all__ = [
    "SEATS_HELP",
    "FilePath",
    "FiniteRange",
    "Sequencing",
    "court_option",
    "cue_sheet_option",
    "data_line",
    "say_data",
    "sequencing_options",
    "speaker_layout",
    "stage",
    "surroundings_for",
    "table",
]


class FiniteRange(click.FloatRange):
    """``click.FloatRange`` that also refuses NaN (which every comparison lets through)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            ends = [f"{word} {end:g}" for word, end in (("from", self.min), ("to", self.max))
                    if end is not None]
            self.fail(f"{value!r} is not a finite number; accepted: a number {' '.join(ends)}",
                      param, ctx)
        return number


def counted(number: int, word: str) -> str:
    """"1 target", "3 targets": ``number`` and ``word``, plural but for one."""
    return f"{number} {word}{'' if number == 1 else 's'}"


class WholeRange(click.IntRange):
    """``click.IntRange`` whose refusal of ``1.5`` or ``x`` says what is accepted (click's
    own: "'1.5' is not a valid integer range")."""

    name = "whole number"

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            try:
                int(value.strip())
            except ValueError:
                self.fail(f"{value!r} is not a whole number; accepted: a whole number from "
                          f"{self.min} to {self.max}", param, ctx)
        return super().convert(value, param, ctx)


class Huangzhong(click.ParamType):
    """黃鍾: a preset of ``tuning.toml`` (convention, qing, zeng) or Hz from 100 to 600 (what
    a saved Performance and a batch plan take), kept as typed (for hints and cache keys)."""

    name = "HZ|PRESET"

    def convert(self, value, param, ctx):
        from soundscape.music.tuning import HUANGZHONG_HZ, HUANGZHONG_RANGE_HZ
        from soundscape.validate import shown

        text = str(value).strip()
        if text in HUANGZHONG_HZ:
            return text
        try:
            hz = float(text) if len(text) <= 40 else math.nan  # no 4 300-digit parse
        except ValueError:
            hz = math.nan
        low, high = HUANGZHONG_RANGE_HZ
        if not low <= hz <= high:
            self.fail(f"{shown(text)}: accepted: Hz from {low:g} to {high:g}, or a preset: "
                      f"{', '.join(HUANGZHONG_HZ.keys())}", param, ctx)
        return text


def split_folder(output: Path | None, default: Path) -> Path:
    """The folder a ``--split`` writes into: ``output`` (default ``default``), refused at
    once where a file stands there (before minutes of work that could not be written)."""
    folder = output or default
    if folder.exists() and not folder.is_dir():
        raise click.BadParameter(f"{str(folder)!r} is a file; --split writes a folder of "
                                 "files: give a folder", param_hint="-o/--out")
    return folder


def speaker_layout(layout: str, verb: str) -> str | tuple[float, ...]:
    """``layout`` parsed (a name or azimuths), refused if it is a render's alone (stems, an
    ADM master): ``verb`` (play, impulse) hears through loudspeakers or headphones."""
    from soundscape.sound.adm import MASTER_LAYOUTS
    from soundscape.sound.panning import LAYOUTS, parse_layout

    heard = [name for name in LAYOUTS if name != "stems"]
    if layout == "stems" or layout in MASTER_LAYOUTS:
        from soundscape.errors import RenderError

        raise RenderError(f"--layout {layout} is a render's (files per stem, an ADM master); "
                          f"{verb} takes a speaker layout: {', '.join(heard)} or azimuths")
    return parse_layout(layout, heard)


class FilePath(click.Path):
    """``click.Path`` that refuses an empty name (``-o ''``, which would be the folder ".")
    and ``-`` where the command does not stream (it made a file named "-")."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail(f"{value!r} is empty; give a file or folder name", param, ctx)
        if value == "-" and not self.allow_dash:
            self.fail("'-' (standard input or output) is not read or written here; give a "
                      "file name (./- for a file named -)", param, ctx)
        return super().convert(value, param, ctx)


def data_line(*, cues: Path | None = None, overrides: Path | None = None,
              durations: Path | None = None, performance: Path | None = None) -> str:
    """One line naming the data files a run reads: cue sheet (or saved Performance),
    instrument folder, site overrides and durations table."""
    if performance is not None:
        parts = [f"performance {performance}"]
    else:
        parts = [f"cue sheet {cues if cues is not None else bundled_dir('cues') / 'dashe.toml'}"]
    parts.append(f"instruments {bundled_dir('instruments')}")
    parts.append(f"overrides {overrides if overrides is not None else 'none'}")
    if durations is not None:
        parts.append(f"durations {durations}")
    return "data: " + "; ".join(parts)


def unplayed_line(piece) -> str:
    """What of ``piece`` (a PieceInfo) no instrument of the rite plays."""
    return (f"its part{'s' if len(piece.unplayed) > 1 else ''} "
            f"{', '.join(piece.unplayed)} not played: the rite places no such instrument")


def say_data(**files: Path | None) -> None:
    """Print :func:`data_line` on stderr (stdout stays the verb's own output)."""
    click.echo(data_line(**files), err=True)


@dataclass(frozen=True, slots=True)
class Sequencing:
    """The sequencing options of a verb, or a saved Performance to use instead."""

    from_section: str | None
    to_section: str | None
    seed: int
    durations: Path | None
    zhong: str | None
    reading: str | None
    wusuan_seconds: float | None
    performance: Path | None
    rite: str | None = None
    variants: tuple[str, ...] = ()
    temperament: str | None = None  # None: not given (三分損益)
    huangzhong: str | None = None  # None: not given (the convention, C4)

    def tuning(self):
        """The tuning asked for (``--temperament``, ``--huangzhong``): 三分損益 on C4 unless
        given otherwise."""
        from soundscape.music.tuning import tuning_named

        return tuning_named(self.temperament or "sanfen", self.huangzhong or "convention")

    def again(self, cues: Path | None) -> list[str]:
        """The options that make this rite again on another verb's command line (``cues``:
        the sheet the user named, None for the project's or bundled one), ``--from/--to``
        left out: a hint's command runs the rite the user is looking at, not the 大射."""
        given = [("--cues", cues), ("--performance", self.performance), ("--rite", self.rite),
                 *(("--variant", v) for v in self.variants),
                 ("--seed", self.seed or None), ("--durations", self.durations),
                 ("--zhong", self.zhong), ("--reading", self.reading),
                 ("--wusuan-seconds", self.wusuan_seconds),
                 ("--temperament", self.temperament), ("--huangzhong", self.huangzhong)]
        return [word for option, value in given if value is not None
                for word in (option, shlex.quote(str(value)))]

    def perform(self, cues: Path | None, *, site=None, tuning=None):
        """Sequence ``cues`` (None: the project's or bundled sheet) with these options, or
        load the saved Performance and cut it; print the data line first."""
        cues = self.cue_sheet(cues)
        say_data(cues=cues, durations=self.durations, performance=self.performance)
        if self.performance is not None:
            return self._heard(self._saved(cues))
        self._say_unmatched_ranks(cues)
        return self._heard(self._sequenced(cues, site, tuning))

    def perform_cached(self, cues: Path | None, *, site=None):
        """``perform``, kept in the user's cache keyed by everything it is made from
        (``soundscape.sequence.cache``) and taken from there while nothing changed; ``site``
        must be the rite's own (:meth:`site`). Returns the Performance and whether it came
        from the cache (None: a saved ``--performance``, read as ``perform`` reads it)."""
        cues = self.cue_sheet(cues)
        if self.performance is not None:
            return self.perform(cues, site=site), None
        from soundscape.sequence.cache import cached_performance, performance_key

        say_data(cues=cues, durations=self.durations)
        self._say_unmatched_ranks(cues)
        key = performance_key(
            cues if cues is not None else bundled_dir("cues") / "dashe.toml", self.durations,
            seed=self.seed, from_section=self.from_section, to_section=self.to_section,
            zhong=self.zhong, reading=self.reading, wusuan_seconds=self.wusuan_seconds,
            variants=self.variants, tuning=(self.temperament, self.huangzhong))
        performance, cached = cached_performance(key, lambda: self._sequenced(cues, site))
        return self._heard(performance), cached

    def _say_unmatched_ranks(self, cues: Path | None) -> None:
        """Name the ranks of the user's durations table that the bundled table lacks and
        no step going round names: a misspelt rank (大犬 for 大夫) changes nothing."""
        if self.durations is None:
            return
        from soundscape import cuesheet
        from soundscape.sequence.timeline import Durations

        theirs, bundled = Durations.load(self.durations), Durations.load()
        sheet = cuesheet.load(cues if cues is not None else bundled_dir("cues") / "dashe.toml")
        known = theirs.replace(participants=bundled.participants)
        unmatched = set(known.unmatched_ranks(sheet.steps))
        new = [rank for rank in theirs.participants if rank in unmatched
               and rank not in bundled.participants]
        if new:
            matched = [rank for rank in known.participants if rank not in unmatched]
            click.echo(f"note: {self.durations}: participants {', '.join(new)}: named by "
                       f"no step going round ({', '.join(theirs.repeat_markers)}), so "
                       f"changing nothing; the ranks the steps name: "
                       f"{', '.join(matched) or 'none'}", err=True)

    def _heard(self, performance):
        """``performance``, unless the sections asked for take no time (s01–s04 are made
        ready before the rite's day): an empty render, MIDI or table, exit 0, before."""
        if (self.from_section or self.to_section) and performance.duration == 0:
            from soundscape.errors import PerformanceError
            from soundscape.performance import takes_no_time

            asked = " to ".join(dict.fromkeys(s for s in (self.from_section, self.to_section)
                                              if s))
            raise PerformanceError(takes_no_time(f"section {asked}"))
        played = {e.piece for e in performance.events}
        for piece in performance.pieces.values():
            if piece.unplayed and piece.id in played:
                click.echo(f"note: {piece.title} ({piece.id}): {unplayed_line(piece)}", err=True)
        return performance

    def _sequenced(self, cues: Path | None, site=None, tuning=None):
        from soundscape.sequence.planner import SequenceOptions, perform_from_file
        from soundscape.sequence.timeline import Durations

        options = SequenceOptions(durations=Durations.load(self.durations),
                                  zhong=self.zhong, wusuan_seconds=self.wusuan_seconds,
                                  variants=self.variants)
        if self.reading:
            options = replace(options, reading=self.reading)
        with stage("sequencing the rite"):
            return perform_from_file(cues, seed=self.seed, from_section=self.from_section,
                                     to_section=self.to_section, site=site,
                                     tuning=tuning or self.tuning(),
                                     options=options)

    def output_name(self, cues: Path | None) -> str:
        """The stem of a run's default outputs (``output/NAME.wav`` …): the ``--rite``'s id,
        the cue sheet's or the saved Performance's file name, else ``dashe`` (the bundled
        sheet): a 燕禮 sheet's render no longer writes over the 大射's."""
        if self.rite is not None:
            return self.rite
        if cues is not None:
            return cues.stem
        if self.performance is not None:
            return self.performance.stem.removesuffix(".performance")
        return "dashe"

    def cue_sheet(self, cues: Path | None) -> Path | None:
        """The cue sheet to use: the path given, or the sheet of ``--rite``."""
        if self.rite is None:
            return cues
        from soundscape.text.derive.rites import rite

        if cues is not None:
            raise click.UsageError(f"give a cue sheet or --rite {self.rite}, not both")
        return bundled_dir("cues") / f"{rite(self.rite).id}.toml"

    def site(self, cues: Path | None):
        """The site of the rite run: the ``--rite``'s, or that of the bundled rite whose
        ``[text] id`` the cue sheet carries (鄉射 in the 序, 燕禮 in the 寢), else the 大射's."""
        from soundscape.site.courtyard import load_site

        return load_site(rite=self.site_rite(cues))

    def site_rite(self, cues: Path | None) -> str | None:
        """The bundled rite whose site a run uses (see :meth:`site`), or None: ``--rite``, the
        cue sheet's ``[text] id``, or the one a saved ``--performance`` was sequenced from."""
        if self.rite is not None:
            return self.rite
        from soundscape.site.courtyard import site_of

        if cues is None and self.performance is not None:  # the site it was sequenced on
            info = _saved_performance(self.performance).info
            if info.site is not None:
                return info.site or None
            return site_of(info.text)  # saved before the site was recorded: its rite's
        if cues is None:
            return None
        from soundscape.cuesheet import load

        sheet = load(cues)
        return site_of(sheet.text.id, sheet.layout)  # a rite with no data: the generic site

    def _saved(self, cues: Path | None):

        sheet = f"--rite {self.rite}" if self.rite is not None else "cue sheet"
        given = [name for name, value in ((sheet, cues), ("--durations", self.durations),
                                          ("--zhong", self.zhong),
                                          ("--reading", self.reading),
                                          ("--wusuan-seconds", self.wusuan_seconds),
                                          ("--temperament", self.temperament),
                                          ("--huangzhong", self.huangzhong))
                 if value is not None]
        if given:
            raise click.UsageError(f"--performance {self.performance} is already sequenced: "
                                   f"drop {', '.join(given)}")
        assert self.performance is not None  # _saved is for a saved Performance
        return _saved_performance(self.performance).cut(self.from_section, self.to_section)


def _saved_performance(path: Path):
    """A saved Performance, read once while the file is unchanged (the site and the cut
    both need it; a whole rite takes over a second to load and check)."""
    stat = Path(path).stat()
    return _loaded(Path(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=1)
def _loaded(path: Path, mtime_ns: int, size: int):
    from soundscape.performance import Performance

    return Performance.load_json(path)


#: The largest seed a verb takes (a signed 64-bit whole number).
SEED_MAX = 2**63 - 1

_OPTIONS = (
    click.option("--from", "from_section", metavar="SECTION", default=None,
                 help="First section: id like s18, name like 樂賓 or heading like 右樂賓."),
    click.option("--to", "to_section", metavar="SECTION", default=None,
                 help="Last section (id, name or heading)."),
    click.option("--seed", type=WholeRange(min=0, max=SEED_MAX), default=0,
                 show_default=True,
                 help="Seed of the archery simulation (and of the sound): same seed, "
                      "same result."),
    click.option("--durations", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 default=None, help="Your own table of action durations "
                 "(format: soundscape/data/durations.toml)."),
    click.option("--zhong", type=click.Choice(["song", "stanza"]), default=None,
                 help="三終 as three whole songs (鄭注, the default) or the three stanzas "
                      "once."),
    click.option("--reading", type=click.Choice(["middle-chinese", "mandarin"]), default=None,
                 help="How the words are pronounced when sung and spoken: Middle Chinese "
                      "(廣韻, the default; see docs/voice.md) or Mandarin."),
    click.option("--wusuan-seconds", type=FiniteRange(min=1.0, max=36000.0),
                 default=None, help="How long 無算樂 plays, in seconds (default: the "
                 "piece's length)."),
    click.option("--rite", "rite", metavar="ID", default=None,
                 help="A bundled rite instead of a cue-sheet path: dashe, xiangyinjiu, "
                      "xiangshe, yan (see `soundscape rites`)."),
    click.option("--variant", "variants", metavar="NAME", multiple=True,
                 help="Play a variant the rite's 記 names (e.g. 若以樂納賓 in yan); "
                      "repeatable. Without it the 記's music is left out."),
    click.option("--performance", "performance_file", metavar="FILE", default=None,
                 type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="A Performance JSON saved by `soundscape sequence`, used instead of "
                      "sequencing (--from/--to still cut it)."),
)


#: The tuning's options, for the verbs whose output sounds or notates pitch.
_TUNING_OPTIONS = (
    click.option("--temperament", type=click.Choice(["sanfen", "equal"]), default=None,
                 help="The 律 by 三分損益 (sanfen, the default) or in equal temperament "
                      "(equal; docs/cli.md)."),
    click.option("--huangzhong", type=Huangzhong(), default=None,
                 help="黃鍾 in Hz (100-600) or a preset: convention (C4, the default), "
                      "zeng (the Zeng bells' pitch), qing."),
)


def sequencing_options(command: Callable | None = None, *, saved: bool = True,
                       tuned: bool = False) -> Callable:
    """Add the sequencing options to a click command; it receives them as one
    ``sequencing`` keyword (a :class:`Sequencing`). ``saved=False`` leaves out
    ``--performance FILE`` (for ``score``, whose ``--performance`` is a flag); ``tuned``
    adds ``--temperament`` and ``--huangzhong`` (the verbs that sound or notate pitch)."""
    if command is None:
        return functools.partial(sequencing_options, saved=saved, tuned=tuned)

    @functools.wraps(command)
    def run(*args, from_section, to_section, seed, durations, zhong, reading, wusuan_seconds,
            rite=None, variants=(), performance_file=None, temperament=None, huangzhong=None,
            **kwargs):
        sequencing = Sequencing(from_section, to_section, seed, durations, zhong, reading,
                                wusuan_seconds, performance_file, rite, tuple(variants),
                                temperament, huangzhong)
        return command(*args, sequencing=sequencing, **kwargs)

    options = (*_OPTIONS[:-1], *(_TUNING_OPTIONS if tuned else ()),
               *(_OPTIONS[-1:] if saved else ()))
    for option in reversed(options):
        run = option(run)
    return run


_CUES = click.Path(exists=True, dir_okay=False, path_type=Path)


def cue_sheet_option(command: Callable) -> Callable:
    """The cue sheet as the verb's optional CUES argument or as ``--cues FILE`` (the form
    ``render`` and ``plan`` take): one meaning, either spelling; the verb receives ``cues``."""
    @functools.wraps(command)
    def run(*args, cues=None, cues_option=None, **kwargs):
        if cues is not None and cues_option is not None and cues != cues_option:
            raise click.UsageError(f"give the cue sheet once: CUES {cues} or --cues "
                                   f"{cues_option}, not both")
        return command(*args, cues=cues if cues is not None else cues_option, **kwargs)

    run = click.option("--cues", "cues_option", type=_CUES, default=None, metavar="FILE",
                       help="Cue sheet (the same as the CUES argument; default: the "
                            "bundled 大射 sheet, or --rite's).")(run)
    return click.argument("cues", required=False, type=_CUES)(run)


#: Set while a verb runs with ``--quiet`` (``quietly``): its stages are not reported.
QUIET = threading.Event()


@contextlib.contextmanager
def quietly(on: bool) -> Iterator[None]:
    """``QUIET`` while a verb given ``--quiet`` runs (``click.Context.with_resource``: until
    the command returns or fails)."""
    if not on:
        yield
        return
    QUIET.set()
    try:
        yield
    finally:
        QUIET.clear()


@contextlib.contextmanager
def stage(what: str) -> Iterator[None]:
    """Report a long stage on stderr: on a terminal a line with a running clock, else a
    plain line when it starts and one when it ends (for logs); nothing under ``QUIET``."""
    began = time.monotonic()
    if QUIET.is_set():
        yield
        return
    if not sys.stderr.isatty():
        click.echo(f"{what} …", err=True)
        yield
        click.echo(f"{what}: done in {time.monotonic() - began:.1f} s", err=True)
        return
    done = threading.Event()

    def tick() -> None:
        while not done.wait(1.0):
            click.echo(f"\r{what} … {time.monotonic() - began:.0f} s", err=True, nl=False)

    clock = threading.Thread(target=tick, daemon=True)
    clock.start()
    ended = "stopped after"  # an error's line follows on a line of its own, not "done"
    try:
        yield
        ended = "done in"
    finally:
        done.set()
        clock.join()
        click.echo(f"\r{what}: {ended} {time.monotonic() - began:.1f} s", err=True)


#: The seats with a listener's facing and ear height in the site data, for --help.
SEATS_HELP = ("gong_wei 公席 (the duke), bin_wei 賓席, zhongting 中庭, men 門, "
              "fa_dahou 大侯之乏, tang_edge 堂廉, or any place by id or Chinese name (the "
              "大射's; another --rite's site names its own: `soundscape plan --rite ID`)")


def court_option(command: Callable) -> Callable:
    """``--court NAME``: the hypothesis of the court's walls (soundscape/data/court.toml), or
    ``none`` (the floor and the hall's front only, as before the walls)."""
    return click.option(
        "--court", default="bare", show_default=True,
        help="The court's walls and echoes: a hypothesis of soundscape/data/court.toml (bare: "
             "rammed earth; damped: people, robes, scattering), or none (floor and hall front "
             "only). Named in the report; docs/site.md.")(command)


def surroundings_for(courtyard, court: str, *, reflections: bool = True):
    """The air and surfaces of a render: the site's walled court under hypothesis ``court``,
    or (``none``) the floor and hall reflections alone; neither with ``reflections`` off."""
    from soundscape.sound.court import load_court
    from soundscape.sound.propagation import Surroundings

    if court == "none" or not reflections:
        return Surroundings(ground=reflections, hall=reflections)
    return Surroundings(court=load_court(courtyard, court))


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, width: int) -> str:
    return s + " " * max(0, width - _width(s))


def _cell(s: str) -> str:
    """One line: runs of whitespace (newlines in quotes included) become one space, and so
    do control characters (a sheet's text could set the terminal's title, or worse)."""
    return " ".join("".join(" " if unicodedata.category(c)[0] == "C" else c for c in s).split())


def table(rows: list[list[str]]) -> str:
    """Rows as aligned columns (CJK characters count two), the first row a header."""
    rows = [[_cell(c) for c in r] for r in rows]
    widths = [max(_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(_pad(c, w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)
