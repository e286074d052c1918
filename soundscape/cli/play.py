"""``soundscape play``: hear the rite from a section or a cue while it renders: to the sound
card, or as a WAV stream to standard output (``soundscape play --from s18 -o - | ffplay -``).

No second pass: the gain is a finished render's (``--loudness <out>.loudness.json``, or the
report beside ``output/<rite>.wav``) or the calibration's, so the frames are a render's at
that gain (docs/render.md, "Playing as it renders").
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from pathlib import Path
from typing import BinaryIO

import click

from soundscape.cli._common import (
    SEATS_HELP,
    FilePath,
    Sequencing,
    WholeRange,
    court_option,
    quietly,
    sequencing_options,
    speaker_layout,
    surroundings_for,
)
from soundscape.errors import RenderError
from soundscape.fileio import atomic_path
from soundscape.sound.propagation import check_within
from soundscape.sound.render import SAMPLE_RATES

__all__ = ["command"]

#: Seconds of audio per streamed block: longer than the limiter's look-ahead (0.1 s), so the
#: first block already gives sound.
BLOCK_S = 0.125


@click.command("play")
@click.option("--cues", type=FilePath(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Cue sheet (default: the bundled 大射 sheet).")
@sequencing_options(tuned=True)
@click.option("--at", "at", metavar="CUE", default=None,
              help="Start at a cue of the part played: a section (s18, 樂賓), a step (s18.09 "
                   "or its words 乃歌鹿鳴三終), a music cue (luming) or piece (鹿鳴), as the "
                   "render's markers and `soundscape cues` name them.")
@click.option("--start", "start", metavar="TIME", default=None,
              help="Start this long after --at (or after the start of the first section): "
                   "seconds (90, 90.5) or M:SS (1:30) or H:MM:SS.")
@click.option("--listener", "place", default="gong_wei", show_default=True,
              help=f"Where the listener sits: {SEATS_HELP}; or x,y,z in metres.")
@click.option("--facing", default=None,
              help="north/south/east/west, a bearing in degrees or x,y (default: the place's).")
@click.option("--layout", default="stereo", show_default=True,
              help="A layout of `render` (stereo, binaural, foa, hoa3, ring8, 5.1, 7.1, 7.1.4) "
                   "or loudspeaker azimuths like 30,-30,0,110,-110; not stems, adm or atmos.")
@click.option("--bits", type=click.Choice(("16", "24", "float")), default="24",
              show_default=True, help="Sample format of the file (float: 32-bit float).")
@click.option("--sample-rate", "--rate", "rate", type=click.Choice([str(r) for r in SAMPLE_RATES]),
              default="48000", show_default=True, help="Sample rate in Hz.")
@click.option("--gain", "gain_db", type=float, default=None,
              help="Gain in dB applied to the rendered samples (default: --loudness's, else "
                   "the report beside output/<rite>.wav, else the calibration's).")
@click.option("--loudness", "report", type=FilePath(exists=True, dir_okay=False,
                                                      path_type=Path), default=None,
              help="A render's loudness report (<out>.loudness.json): play at its gain, so "
                   "the frames are that render's.")
@click.option("--ceiling", "ceiling_dbtp", type=float, default=-1.0, show_default=True,
              help="True-peak ceiling of the limiter in dBTP, -20 to 0.")
@click.option("--no-limiter", is_flag=True, help="No limiter: every frame is the render's "
              "times the gain (clipped at full scale where it would pass it).")
@click.option("--no-reflections", is_flag=True, help="Direct sound only (no floor, no walls, "
              "no tail).")
@court_option
@click.option("--jobs", type=WholeRange(1, 2), default=2, show_default=True,
              help="Processes: 2 computes notes in a helper process (same frames, faster).")
@click.option("--bells", type=click.Choice(("ideal", "zeng")), default="ideal",
              show_default=True, help="Bells on the tuning, or as the Marquis Yi of Zeng bells "
              "measure (see render).")
@click.option("-o", "--out", default=None, metavar="FILE",
              help="- : a WAV stream on standard output (pipe it to ffplay - or aplay); a .wav "
                   "file, written as it renders; default: the sound card (sounddevice).")
@click.option("--device", default=None, help="The sound card's output device (sounddevice's "
              "name or number).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the disk caches of "
              "notes, tails and the sequenced rite (same frames; $SOUNDSCAPE_CACHE=off does "
              "the same).")
@click.option("--quiet", is_flag=True, help="No stages or report on standard error (the "
              "data files used are still named).")
def command(cues: Path | None, sequencing: Sequencing, at: str | None, start: str | None,
            place: str, facing: str | None, layout: str, bits: str, rate: str,
            gain_db: float | None, report: Path | None, ceiling_dbtp: float, no_limiter: bool,
            no_reflections: bool, court: str, jobs: int, bells: str, out: str | None,
            device: str | None, no_cache: bool, quiet: bool) -> None:
    """Play the rite from a section or a cue as it renders: first audio in a fraction of a
    second, at a finished render's gain (no loudness pass)."""
    from soundscape.site.listeners import listener_at
    from soundscape.sound import render
    from soundscape.sound.diskcache import from_env
    from soundscape.sound.loudness import TruePeakLimiter
    from soundscape.sound.panning import make_panner, wav_channel_mask
    from soundscape.sound.stream import cue_time, parse_time, played
    from soundscape.sound.tailstore import stored_tail

    click.get_current_context().with_resource(quietly(quiet))
    _import_models()
    began = time.perf_counter()  # imports done: the clock of the first audio starts
    began_cpu = time.process_time()  # and its CPU seconds (this process's)
    say = (lambda text: None) if quiet else (lambda text: click.echo(text, err=True))
    offset = parse_time(start) if start is not None else 0.0
    if gain_db is not None and report is not None:
        raise click.UsageError("give --gain or --loudness, not both")
    if gain_db is not None:
        from soundscape.sound.stream import MAX_GAIN_DB

        _finite(gain_db, "--gain", -MAX_GAIN_DB, MAX_GAIN_DB)
    _finite(ceiling_dbtp, "--ceiling", -20.0, 0.0)
    speakers = speaker_layout(layout, "play")
    sink_kind = _sink_kind(out)
    courtyard = sequencing.site(cues)
    surroundings = surroundings_for(courtyard, "none" if no_reflections else court,
                                    reflections=not no_reflections)
    listener = listener_at(courtyard, place, facing)
    check_within(surroundings, listener.position, "--listener")
    panner = make_panner(speakers, speed_of_sound=surroundings.air.speed_of_sound)
    sample_rate = int(rate)
    ready = time.perf_counter()
    with render.frozen() as keep:  # what exists now is kept to the end: out of the GC's walks
        store = None if no_cache else from_env()  # the notes and the court's tails of
        # earlier runs, and the sequenced rite: the same switches turn all of them off
        performance, cached = ((sequencing.perform(cues, site=courtyard), "off")
                               if store is None and sequencing.performance is None
                               else sequencing.perform_cached(cues, site=courtyard))
        sequenced = time.perf_counter()
        keep()  # the rite read back (~40 000 objects, kept to the end): walked by none

        at_time = cue_time(performance, at) if at is not None else 0.0
        begin = at_time + offset
        if begin >= performance.duration:
            raise RenderError(f"start {begin:.1f} s (--at {at or '(start)'} at {at_time:.1f} s, "
                              f"--start {offset:g} s) is past the end of the part played "
                              f"({performance.duration:.1f} s); give an earlier --start or --at")
        part = performance if begin == 0 else performance.between(begin, math.inf)
        keep()  # and its cut
        gain_db, source = _gain(gain_db, report, sequencing, performance,
                                name=sequencing.output_name(cues), layout=layout,
                                rate=sample_rate, say=say)
        say(f"play: from {_clock(begin)} of the part ({at or 'its start'}"
            f"{f' + {offset:g} s' if offset else ''}), {_clock(part.heard_until)} to play; gain "
            f"{gain_db:+.2f} dB ({source}); limiter "
            f"{'off' if no_limiter else f'at {ceiling_dbtp:g} dBTP'}")

        limiter = None if no_limiter else TruePeakLimiter(ceiling_dbtp - 0.1, sample_rate,
                                                          len(panner.channels))
        blocks = render.render_blocks(
            part, listener=listener, panner=panner, sample_rate=sample_rate, seed=sequencing.seed,
            voice=render.SynthVoice(surroundings.reference_db, bells=bells),
            surroundings=surroundings, block_frames=max(1, round(BLOCK_S * sample_rate)),
            workers=jobs, store=store,
            tail=stored_tail(surroundings, listener, panner, channels=len(panner.channels),
                             sample_rate=sample_rate, seed=sequencing.seed, store=store))
        markers = list(part.markers)
        with _sink(sink_kind, out, channels=len(panner.channels), sample_rate=sample_rate,
                   bits=bits, mask=wav_channel_mask(panner), device=device) as sink:
            waited = 0.0  # seconds spent writing (a sound card paces the render to real time)
            first = None
            samples_iter = played(blocks, gain_db=gain_db, limiter=limiter)
            try:
                for samples in samples_iter:
                    if first is None:
                        first = time.perf_counter()
                        how = {True: "from the cache", False: "sequenced, now cached",
                               "off": "sequenced, no cache", None: "--performance"}[cached]
                        say(f"first audio after {first - began:.2f} s "
                            f"({time.process_time() - began_cpu:.2f} s CPU here): site and court "
                            f"{ready - began:.2f} s, performance {sequenced - ready:.2f} s "
                            f"({how}), first block {first - sequenced:.2f} s")
                    wrote = time.perf_counter()
                    sink.write(samples)
                    waited += time.perf_counter() - wrote
                    while markers and markers[0].time * sample_rate < sink.frames:
                        marker = markers.pop(0)
                        say(f"  {_clock(marker.time + begin)}  {marker.text}")
            except BrokenPipeError:  # the player stopped reading: done, quietly
                samples_iter.close()
                _quiet_stdout()
                say("play: the player closed the stream")
                return
        seconds = sink.frames / sample_rate
        busy = time.perf_counter() - began - waited
        say(f"played {seconds:.1f} s in {busy:.1f} s of work ({seconds / max(busy, 1e-9):.1f}x "
            f"real time); limiter "
            f"{'off' if limiter is None else f'{limiter.gain_reduction_db:.1f} dB at most'}")


def _import_models() -> None:
    """Import the synthesis models now (each is imported when its first note is made), and
    the modules the play path imports when it first needs them (the sequencer's package,
    which the Performance cache is part of; the sung lines; the helper's multiprocessing),
    so the clock of the first audio starts after every import (the sequencer's package
    alone took 0.3-0.5 s of a warm start's CPU after the clock had started)."""
    import importlib
    import multiprocessing.connection
    import multiprocessing.popen_fork
    import multiprocessing.synchronize  # noqa: F401
    import pkgutil

    import soundscape.sequence.cache
    import soundscape.sound.court
    import soundscape.sound.sung  # noqa: F401
    from soundscape.sound import synth

    for module in pkgutil.iter_modules(synth.__path__):
        importlib.import_module(f"{synth.__name__}.{module.name}")


def _other_part(report: dict, part: dict) -> str:
    """How the part a loudness report rendered differs from ``part`` (its text id, start on
    the whole rite's clock and length), or "" (a report from before they were recorded: no
    way to tell)."""
    found = []
    for key, mine in part.items():
        theirs = report.get(key, mine)
        same = (theirs == mine if isinstance(mine, str) else isinstance(theirs, int | float)
                and abs(theirs - mine) < 1e-6)
        if not same:
            found.append(f"{key} {_shown(theirs)}, here {_shown(mine)}")
    return "; ".join(found)


def _shown(value) -> str:
    """A report's value as a reader takes it: seconds to a tenth, anything else quoted."""
    return f"{value:.1f} s" if isinstance(value, int | float) else repr(value)


def _finite(value: float, option: str, low: float, high: float) -> float:
    if not (math.isfinite(value) and low <= value <= high):
        raise RenderError(f"{option} {value!r}, accepted: a finite number from {low:g} to "
                          f"{high:g}")
    return value


def _gain(gain_db: float | None, report: Path | None, sequencing: Sequencing,
          performance, *, name: str, layout: str, rate: int, say) -> tuple[float, str]:
    """The gain and where it comes from: --gain, --loudness, the default render's report
    (if it rendered the part played: its text, start and length), else the calibration."""
    from soundscape.sound.stream import calibrated_gain, gain_from_report

    if gain_db is not None:
        return gain_db, "--gain"
    part = {"text": performance.info.text, "offset": performance.info.offset,
            "duration": performance.duration}
    if report is None:
        beside = Path("output") / f"{name}.wav.loudness.json"  # render's default output
        found = gain_from_report(beside) if beside.is_file() else None
        other = found is not None and _other_part(found[1], part)
        if other:
            say(f"note: {beside} is a render of another part ({other}): not its gain")
        if found is None or other:
            gain, _ = calibrated_gain()
            return gain, "the calibration, soundscape/data/play.toml"
        report, (gain, data) = beside, found
    else:
        gain, data = gain_from_report(report)
    differs = [f"{key} {data.get(key)!r} (here {mine!r})"
               for key, mine in (("layout", layout), ("sample_rate", rate),
                                 ("seed", sequencing.seed))
               if key in data and data.get(key) != mine]
    other = _other_part(data, part)
    if other:
        differs.append(f"part ({other})")
    if differs:
        say(f"note: {report} was rendered with another {', '.join(differs)}: its gain is "
            "used all the same")
    return gain, str(report)


def _sink_kind(out: str | None) -> str:
    if out is None:
        return "card"
    if out == "-":
        if sys.stdout.isatty():
            raise RenderError("-o -: standard output is a terminal; pipe it to a player "
                              "(soundscape play … -o - | ffplay -), or leave out -o for the "
                              "sound card")
        return "stdout"
    if Path(out).suffix.lower() != ".wav":
        raise RenderError(f"--out {out!r}: play writes a WAV stream (- or a .wav file)")
    return "file"


@contextlib.contextmanager
def _sink(kind: str, out: str | None, *, channels: int, sample_rate: int, bits: str,
          mask: int, device: str | None):
    from soundscape.sound.stream import SoundCard, WavStream

    if kind == "card":
        card = SoundCard(channels=channels, sample_rate=sample_rate, device=device)
        try:
            yield card
        finally:
            card.close()
        return
    with contextlib.ExitStack() as stack:
        # a file is written beside its target and renamed when complete: stopped or failed,
        # the target is as it was
        target: BinaryIO = (sys.stdout.buffer if kind == "stdout" else stack.enter_context(
            open(stack.enter_context(atomic_path(str(out))), "wb")))
        stream = WavStream(target, channels=channels, sample_rate=sample_rate, bits=bits,
                           channel_mask=mask)
        yield stream
        with contextlib.suppress(BrokenPipeError):
            stream.close()


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the closing flush finds no broken pipe."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _clock(seconds: float) -> str:
    minutes, rest = divmod(max(0.0, seconds), 60)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{rest:04.1f}" if hours else f"{minutes}:{rest:04.1f}"
