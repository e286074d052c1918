"""``soundscape render``: the rite heard from a place in the courtyard, as audio and MIDI.

With no arguments: the bundled 大射 rite, heard from the duke's seat
(``gong_wei``), to ``output/dashe.wav`` (stereo, 48 kHz, 24-bit, −23 LUFS)
and ``output/dashe.mid``.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import click

from soundscape.cli._common import (
    SEATS_HELP,
    FilePath,
    Sequencing,
    WholeRange,
    court_option,
    quietly,
    sequencing_options,
    stage,
    surroundings_for,
)
from soundscape.errors import RenderError
from soundscape.fileio import refuse_folders
from soundscape.site.listeners import ListenerPath, listener_at
from soundscape.site.walks import load_walk
from soundscape.sound.adm import MASTER_LAYOUTS, check_target
from soundscape.sound.audiofile import check_channels, subtype_for
from soundscape.sound.panning import LAYOUTS, MAX_SPEAKERS, make_panner, parse_layout
from soundscape.sound.propagation import check_within
from soundscape.sound.render import SAMPLE_RATES

__all__ = ["command"]

_FORMATS = ("wav", "flac", "midi")
#: File endings of ``--out`` and the format each one means.
_SUFFIXES = {".wav": "wav", ".flac": "flac", ".mid": "midi", ".midi": "midi"}


@click.command("render")
@click.option("--cues", type=FilePath(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Cue sheet (default: the bundled 大射 sheet).")
@sequencing_options(tuned=True)
@click.option("--listener", "place", default="gong_wei", show_default=True,
              help=f"Where the listener sits: {SEATS_HELP}; or x,y,z in metres.")
@click.option("--facing", default=None,
              help="north/south/east/west, a bearing in degrees or x,y (default: the place's).")
@click.option("--path", "walk", type=FilePath(exists=True, dir_okay=False, path_type=Path),
              default=None, help="TOML file of [[waypoint]] time/place(/facing): a walking "
              "listener (overrides --listener).")
@click.option("--layout", default="stereo", show_default=True,
              help=f"A layout: {', '.join(LAYOUTS)}, adm, atmos; or 2 to {MAX_SPEAKERS} "
              "loudspeaker azimuths in degrees like 30,-30,0,110,-110 (names are read first: "
              "7.1 is the layout). WAVs carry the layout's channel mask. adm: an ADM BWF "
              "master, an object per source and the ambience and the court in an HOA bed, "
              "for any ADM renderer; atmos: the same in the Dolby Atmos Master ADM Profile "
              "(Cartesian objects, a 7.0.2 bed), for Dolby's tools, with --target -18 or "
              "quieter (docs/render.md).")
@click.option("--format", "file_format", type=click.Choice(_FORMATS), default=None,
              help="Audio format (MIDI is written beside it), or MIDI only "
              "(default: from the --out ending, else wav).")
@click.option("--bits", type=click.Choice(("16", "24", "float")), default="24",
              show_default=True, help="Sample format of the file (float: 32-bit float).")
@click.option("--sample-rate", "--rate", "rate", type=click.Choice([str(r) for r in SAMPLE_RATES]),
              default="48000", show_default=True, help="Sample rate in Hz.")
@click.option("--target", "target_lufs", type=float, default=-23.0, show_default=True,
              callback=lambda _ctx, _param, value: _finite(value, "--target", -70.0, 0.0),
              help="Integrated loudness in LUFS, -70 to 0 (EBU R 128: -23).")
@click.option("--gain", "gain_db", type=float, default=None,
              callback=lambda _ctx, _param, value: value if value is None else _finite(
                  value, "--gain", -70.0, 70.0),
              help="Apply this gain in dB (-70 to 70) instead of normalising to --target: "
                   "a section at the level it has in the whole rite, whose render's "
                   "NAME.loudness.json gives its gain_db (a section normalised alone raises "
                   "a quiet one's bed with it). The limiter still keeps the ceiling.")
@click.option("--no-reflections", is_flag=True, help="Direct sound only (no floor, no walls, "
              "no tail).")
@court_option
@click.option("--jobs", type=WholeRange(1, 2), default=2, show_default=True,
              help="Processes: 2 computes notes in a helper process (same bytes, faster).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the disk caches of "
              "notes and of the sequenced rite (same bytes; $SOUNDSCAPE_CACHE=off does the "
              "same; docs/render.md).")
@click.option("--quiet", is_flag=True, help="No progress bar, stages or report (the data "
              "files used are still named on standard error).")
@click.option("-o", "--out", type=FilePath(dir_okay=False, path_type=Path), default=None,
              help="Output file (default output/NAME.<format>: the --rite's id, the cue "
                   "sheet's file name, else dashe).")
@click.option("--bells", type=click.Choice(("ideal", "zeng")), default="ideal",
              show_default=True, help="Bells on the tuning, or each tone off it as the "
              "Marquis Yi of Zeng bells measure (Braun 2003; docs/instruments.md).")
def command(cues: Path | None, sequencing: Sequencing, place: str,
            facing: str | None, walk: Path | None, layout: str, file_format: str | None,
            bits: str,
            rate: str, target_lufs: float, gain_db: float | None, no_reflections: bool,
            court: str, jobs: int,
            no_cache: bool, quiet: bool, out: Path | None, bells: str) -> None:
    """Render the rite as heard from a place: audio (stereo, binaural, ambisonics,
    loudspeakers or stems) normalised to a loudness target, with its MIDI."""
    from soundscape.sound import diskcache, render
    from soundscape.sound.staging import Staging

    click.get_current_context().with_resource(quietly(quiet))
    file_format = _format(file_format, out)
    courtyard = sequencing.site(cues)  # the rite's own (鄉射: the 序)
    surroundings = surroundings_for(courtyard, "none" if no_reflections else court,
                                    reflections=not no_reflections)
    if walk and (facing is not None or click.get_current_context().get_parameter_source(
            "place") is not click.core.ParameterSource.DEFAULT):  # the walk says both
        raise click.UsageError("--path walks the listener from place to place, facing as its "
                               "waypoints say: give --path, or --listener/--facing, not both")
    if gain_db is not None and click.get_current_context().get_parameter_source(
            "target_lufs") is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--gain is applied instead of normalising to --target: give "
                               "--gain or --target, not both")
    listener = load_walk(walk, courtyard) if walk else listener_at(courtyard, place, facing)
    if isinstance(listener, ListenerPath):
        for k, (_, position, _) in enumerate(listener.waypoints):
            check_within(surroundings, position, f"--path {walk}: waypoint[{k}]")
    else:
        check_within(surroundings, listener.position, "--listener")
    master = MASTER_LAYOUTS.get(layout)
    # check before sequencing
    speakers = layout if master else parse_layout(layout, (*LAYOUTS, *MASTER_LAYOUTS))
    if master and (file_format != "wav" or walk or rate != "48000"):
        raise RenderError(f"--layout {layout} writes a 48 kHz WAV (ADM BWF) heard from a "
                          "standing --listener: drop --format/--sample-rate/--path, or pick "
                          "another layout")
    if master:
        check_target(master, target_lufs)
        if gain_db is not None:
            raise click.UsageError(f"--layout {layout} is delivered at a loudness target: "
                                   "give --target, not --gain")
    if file_format != "midi" and not master:
        subtype_for(file_format, bits)
        check_channels(file_format, len(make_panner(speakers).channels))
    out = out or Path(f"output/{sequencing.output_name(cues)}."
                      f"{'mid' if file_format == 'midi' else file_format}")
    refuse_folders(out.with_suffix(".mid"), *(out.with_name(out.name + companion) for companion
                                             in ("", ".markers.txt", ".loudness.json",
                                                 ".adm.json")))
    store = None if no_cache else diskcache.from_env()
    # the sequenced rite is kept as the notes are (the same switches turn both off): a render
    # of a part sequenced before skips sequencing (the whole rite: 2.8 s on one core)
    performance = (sequencing.perform(cues, site=courtyard) if store is None
                   else sequencing.perform_cached(cues, site=courtyard)[0])
    if file_format != "midi" and not master:  # the stems are known once sequenced
        refuse_folders(*render.output_files(performance, out, speakers))
    say = (lambda text: None) if quiet else (lambda text: click.echo(text, err=True))
    terminal = sys.stderr.isatty()
    staged = Staging(out.parent, out.stem)
    try:
        # the MIDI and the audio files are staged and replace the old ones together
        with staged, _Aside(
                _midi_and_count, performance, staged.folder / f"{out.stem}.mid", listener,
                aside=file_format != "midi") as made_midi:
            result = None if file_format == "midi" else _render_adm(
                performance, staged.folder / out.name, listener=listener, seed=sequencing.seed,
                target_lufs=target_lufs, surroundings=surroundings,
                voice=render.SynthVoice(surroundings.reference_db, bells=bells),
                progress=not quiet and terminal, workers=jobs,
                stage=None if quiet or terminal else stage, store=store, profile=master,
            ) if master else render.render_audio(
                performance, staged.folder / out.name, listener=listener, layout=speakers,
                sample_rate=int(rate), seed=sequencing.seed, file_format=file_format,
                bits=bits, target_lufs=target_lufs, gain_db=gain_db,
                surroundings=surroundings,
                voice=render.SynthVoice(surroundings.reference_db, bells=bells),
                progress=not quiet and terminal, workers=jobs,
                stage=None if quiet or terminal else stage, store=store)
            midi_path, notes = made_midi.result()
    except OSError as error:  # name the output, not the hidden folder it was staged in
        raise staged.shown(error, out) from None
    click.echo(f"wrote {staged.final(midi_path)} ({notes} notes)")
    if result is None:
        return
    for path in result.files:
        click.echo(f"wrote {staged.final(path)} ({result.seconds:.1f} s, "
                   f"{len(result.channels)} channels)")
    say(result.report.text())
    say(f"markers: {staged.final(result.sidecar)}; loudness report: "
        f"{staged.final(result.report_file)}")
    if store is not None:
        stats = store.stats
        why = store.unusable() if stats["misses"] and not stats["writes"] else None
        say(f"note cache {store.folder}: {stats['hits']} notes read, {stats['misses']} made "
            f"({stats['writes']} kept{f': {why}' if why else ''})")


def _midi_and_count(performance, path: Path, listener) -> tuple[Path, int]:
    """The MIDI of the rite heard by ``listener`` written to ``path``; its path and notes."""
    from soundscape.output import midi

    made = midi.midi_file(performance, listener=listener)
    return midi.save_midi(made, path), midi.note_count(made)  # counted as made, not read back


class _Aside:
    """``work(*args)`` in a forked process at the lowest priority while the render runs
    (``aside``), else here when its result is asked for.

    The MIDI of the whole rite (writing it and counting its notes: ~1.5 s on one core)
    came before the render and after it; pass 1 keeps both cores busy, but the render's
    start, pass 1's last blocks and pass 2 leave one partly idle, and a niced process
    takes that time only (same bytes: the same function on the same data). The objects
    that exist at the fork are frozen out of the cyclic collector until the render ends
    (as ``render.frozen`` does for its own forks), so the process does not copy the pages
    the rite's objects share with this one. If the work fails there it is done again here,
    so that its error (the file system's, a bad value's) is raised as it would have been.
    """

    def __init__(self, work: Callable, *args, aside: bool = True) -> None:
        self._work, self._args, self._aside = work, args, aside
        self._process: multiprocessing.process.BaseProcess | None = None

    def __enter__(self) -> _Aside:
        if self._aside:
            gc.freeze()
            context = multiprocessing.get_context("fork")
            self._answers, theirs = context.Pipe(duplex=False)
            self._process = context.Process(target=_aside, args=(theirs, self._work,
                                                                 self._args), daemon=True)
            # SIGTERM held while it forks: the child would take the command's handler, and a
            # render stopped at once raised it in the child's start-up (its traceback printed
            # above the command's one-line error)
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            try:
                self._process.start()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            theirs.close()
        return self

    def result(self):
        """``work``'s result (waiting for the process, if it is not done yet)."""
        if self._process is None:
            return self._work(*self._args)
        try:
            done, value = self._answers.recv()
        except EOFError:  # it died (killed): the work is done here
            done, value = False, None
        self._stop(wait=True)
        return value if done else self._work(*self._args)

    def _stop(self, *, wait: bool) -> None:
        if self._process is None:
            return
        if not wait:  # the render failed: its work is not wanted
            self._process.terminate()
        self._process.join()
        self._answers.close()
        self._process = None
        gc.unfreeze()

    def __exit__(self, *_exc) -> None:
        self._stop(wait=False)


def _aside(answers, work: Callable, args: tuple) -> None:
    """In the forked process: SIGTERM ends it quietly (the command's handler is not for it),
    the lowest priority, then ``work``'s result, or that it failed."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    os.nice(19)
    try:
        answer = (True, work(*args))
    except BaseException:  # done again in the render's process, which raises it
        answer = (False, None)
    answers.send(answer)
    answers.close()


def _render_adm(*args, **kwargs):
    from soundscape.sound.adm_render import render_adm

    return render_adm(*args, **kwargs)


def _format(file_format: str | None, out: Path | None) -> str:
    """The format: ``--format``, else the ``--out`` ending, else wav; refuse a mismatch."""
    if out is None:
        return file_format or "wav"
    accepted = ", ".join(f"{suffix} ({name})" for suffix, name in _SUFFIXES.items())
    implied = _SUFFIXES.get(out.suffix.lower())
    if implied is None:
        raise RenderError(f"--out {str(out)!r}: ending {out.suffix!r} is not an output format; "
                          f"accepted: {accepted}")
    if file_format is not None and file_format != implied:
        raise RenderError(f"--format {file_format} does not match --out {str(out)!r} (a "
                          f"{implied} ending); give an --out ending {accepted}, or drop --format")
    return implied


def _finite(value: float, option: str, low: float, high: float) -> float:
    if not (math.isfinite(value) and low <= value <= high):
        raise RenderError(f"{option} {value!r}, accepted: a finite number from {low:g} to "
                          f"{high:g}")
    return value
