"""Time to first audio and speed of ``soundscape play``, with where the time goes.

Run: ``.venv/bin/python bench/bench_play.py [--from s18] [--at luming] [--seconds 60]``
(``--from rite``: the whole rite, from ``--at`` to its end);
``--code DIR`` runs the command of another checkout (the code before a change: the same
machine, runs interleaved with this one's), ``--no-breakdown`` only the command.

1. The breakdown, stage by stage in this process (wall and CPU seconds; on a machine shared
   with other work, the CPU seconds of one process are what it would take alone): imports,
   sequencing the section cold, the Performance from the cache (pickle), the site, court
   and panner, ``voice.bind`` (the sung lines), and the first block of ``render_blocks``
   (the buses hand out a block once the notes up to ``buses.guard`` ahead are in), with
   no disk cache of notes.
2. The command itself, as a user runs it, through a pipe: ``soundscape play … -o -``,
   twice: with its notes cold (``SOUNDSCAPE_CACHE=off``: only the Performance cached, by a
   first run), and warm (a first run, stopped at its first audio, kept the Performance,
   its first notes and the court's tails in the disk cache): time from its start to the
   first audio bytes, the first-audio line it prints (after its imports; wall and this
   process's CPU seconds), and the real-time factor over ``--seconds`` of audio read as
   fast as it comes.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``--from`` for the whole rite (no cut: ``play --at CUE`` alone)
WHOLE = "rite"


class _Clock:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self, what: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        print(f"  {what:<44} {wall - self.wall:7.2f} s wall {cpu - self.cpu:7.2f} s CPU")
        self.wall, self.cpu = wall, cpu


def breakdown(section: str, at: str | None, jobs: int) -> None:
    clock = _Clock()
    import numpy as np  # noqa: F401

    from soundscape.cli._common import surroundings_for
    from soundscape.sequence.cache import cached_performance
    from soundscape.sequence.planner import perform_from_file
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import Listener
    from soundscape.sound import render
    from soundscape.sound.panning import make_panner
    from soundscape.sound.stream import cue_time
    clock.lap("imports")
    part = None if section == WHOLE else section
    performance = perform_from_file(None, from_section=part, to_section=part)
    clock.lap(f"sequencing {section} (perform_from_file, cold)")
    with tempfile.TemporaryDirectory() as folder, render.frozen() as keep:  # as play does
        cached_performance("bench", lambda: performance, folder=Path(folder))
        clock.lap("storing it in the cache (pickle)")
        performance, found = cached_performance("bench", lambda: None, folder=Path(folder))
        assert found
        keep()
        clock.lap("the Performance from the cache")
        site = load_site()
        surroundings = surroundings_for(site, "bare")
        panner = make_panner("stereo", speed_of_sound=surroundings.air.speed_of_sound)
        seat = site.listener("gong_wei")
        listener = Listener(seat.position, seat.facing)
        begin = cue_time(performance, at) if at else 0.0
        part = performance.between(begin, float("inf")) if begin else performance
        keep()
        clock.lap("site, court, panner, the cut")
        voice = render.SynthVoice(surroundings.reference_db)
        voice.bind(part, 0)
        clock.lap("voice.bind (sung lines; done again below)")
        blocks = render.render_blocks(part, listener=listener, panner=panner,
                                      sample_rate=48000, seed=0, voice=voice,
                                      surroundings=surroundings, block_frames=4800,
                                      workers=jobs)
        next(blocks)
        clock.lap(f"first 0.1 s block (bind, buses, notes up to the guard; jobs {jobs})")
        blocks.close()


def command(section: str, at: str | None, seconds: float, cache: Path, code: Path,
            cold: bool) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache),
           "PYTHONPATH": os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])}
    env.pop("SOUNDSCAPE_CACHE_DIR", None)
    if cold:
        env["SOUNDSCAPE_CACHE"] = "off"
    cut = [] if section == WHOLE else ["--from", section, "--to", section]
    args = [sys.executable, "-m", "soundscape", "play", *cut, *(["--at", at] if at else []),
            "-o", "-"]
    print(f"  $ {'SOUNDSCAPE_CACHE=off ' if cold else ''}soundscape " + " ".join(args[3:]))
    _read(args, env, 50, code)  # the first run sequences and caches (the Performance; more)
    first, done, got, err = _read(args, env, round(seconds * 48000) * 6, code)
    line = next((x for x in err.splitlines() if x.startswith("first audio")), "")
    audio = got / 6 / 48000
    print(f"  first audio bytes {first:.2f} s after the command started (imports included)")
    print(f"  its own report: {line}")
    cpu = float(err.rsplit("cpu ", 1)[1])
    print(f"  {audio:.1f} s of audio in {done - first:.2f} s after the first: "
          f"{audio / (done - first):.1f}x real time")
    print(f"  its CPU seconds (its processes, all of the run): {cpu:.2f} s: "
          f"{audio / cpu:.1f} s of audio per CPU second, imports and start included")


def _read(args: list[str], env: dict, want: int, code: Path
          ) -> tuple[float, float, int, str]:
    """Run the command in ``code`` (its package first on the path), read ``want`` bytes
    of its stream as fast as they come, close the pipe (it stops): seconds to the first
    audio byte, to the last, bytes read, stderr."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=code) as process:
        process.stdout.read(44 + 6)  # the header, then one frame
        first = time.perf_counter() - started
        got = 6
        while got < want and (chunk := process.stdout.read1(1 << 16)):
            got += len(chunk)
        done = time.perf_counter() - started
        process.stdout.close()
        err = process.stderr.read().decode()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return first, done, got, err + f"\ncpu {cpu}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="section", default="s18",
                        help=f"a section, or {WHOLE!r}: the whole rite")
    parser.add_argument("--at", default="luming")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose command is run (default: this one)")
    parser.add_argument("--no-breakdown", action="store_true")
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; code "
          f"{options.code}")
    if not options.no_breakdown:
        print(f"breakdown, {options.section} at {options.at}:")
        breakdown(options.section, options.at, options.jobs)
    for cold in (True, False):
        with tempfile.TemporaryDirectory() as cache:
            kept = ("notes cold: the Performance" if cold
                    else "warm: the Performance, the first notes and the tails")
            print(f"the command, through a pipe ({kept} cached by a first run):")
            command(options.section, options.at, options.seconds, Path(cache), options.code,
                    cold)


if __name__ == "__main__":
    main()
