"""Benchmark the spatial renderer on the whole rite, beside FluidSynth on our MIDI of it.

Each render is what ``soundscape render`` makes (the site's walled court under
``--court``, default ``bare``, with its late tail; the command's voice). Reports, for
stereo, binaural and third-order ambisonics: audio seconds rendered per wall second, the
CPU seconds spent (the render's process and its helper processes: a figure the machine's
drift in speed moves less) and the peak resident memory of the rendering process (and of
its helper process with ``--jobs 2``); then the wall time and CPU seconds of ``fluidsynth
-ni -F`` rendering ``midi.write_midi`` of the same performance with FluidR3_GM, right
after, and the ratio of the wall times (and of the CPU seconds);
then each render again, for the peak of the summed PSS of the render and its helpers
(sampled every 0.2 s: reading a process's PSS walks its page tables under its memory
lock, ~40 ms for the three processes, which would slow the timed run). A short part of
the rite is rendered too, so the two peak memories show whether memory grows with
length.

Each render runs in its own process (so peak memory is its own)::

    .venv/bin/python bench/bench_render.py                 # whole rite
    .venv/bin/python bench/bench_render.py --to s08        # a part
    .venv/bin/python bench/bench_render.py --json out.json
    .venv/bin/python bench/bench_render.py --layouts stereo --windows 1200   # every 20 min

``--start S --seconds N`` renders N seconds from S seconds into the part; ``--windows N``
times every span of N seconds of it (the last one ending at its end), each beside
FluidSynth on that span's MIDI, and reports the highest ratio (issue 27: any 20-minute
part at ≤ 1×).

Needs ``apt-get install fluidsynth fluid-soundfont-gm`` for the comparison.

Measured 2026-12-02 on an idle 2-core machine (whole rite, 9 060 s of audio, 28 885
events, the walled court ``bare``, ``SOUNDSCAPE_CACHE=off``, ``--layouts stereo --short
60``, three runs): stereo 88.7, 90.5 and 66.7 s against FluidSynth's 91.2, 97.7 and 79.5 s
(0.97x, 0.93x, 0.84x; the same code gave 1.13x and 1.21x on a slower machine the same day:
the ratio moves with the machine), the render and its helpers peak at 874-943 MiB PSS.
(Figures before 2026-12-02 rendered without the court.)
Details and the history: docs/render.md, "Benchmark".
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
LAYOUTS = ("stereo", "binaural", "hoa3")


def _performance(args: argparse.Namespace):
    from soundscape import sequence
    performance = sequence.perform_from_file(seed=0, from_section=args.from_section,
                                             to_section=args.to_section)
    if args.start or args.seconds:
        stop = args.start + args.seconds if args.seconds else performance.duration
        performance = performance.between(args.start, stop)
    return performance


def _listener():
    from soundscape import site
    from soundscape.site.listeners import Listener
    seat = site.load_site().listener("gong_wei")
    return Listener(seat.position, seat.facing)


def _surroundings(court: str):
    """What ``soundscape render --court COURT`` hears through: the site's walled court and
    its late tail (``none``: the floor and the hall's front only)."""
    from soundscape import site
    from soundscape.cli._common import surroundings_for
    return surroundings_for(site.load_site(), court)


class PssSampler:
    """Peak proportional set size (PSS) of this process plus its children, sampled.

    RSS counts pages a forked helper shares with its parent in both; PSS
    splits them, so the sum is the memory the render really holds. Linux only
    (``/proc``); elsewhere the peak stays 0.
    """

    def __init__(self, every_s: float = 0.2) -> None:
        self.peak_mib = 0.0
        self._every = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(self._every):
            try:
                children = Path(f"/proc/{me}/task/{me}/children").read_text().split()
            except OSError:
                return
            self.peak_mib = max(self.peak_mib, sum(_pss_kib(p) for p in [me, *children]) / 1024)


def _pss_kib(pid: int | str) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:  # the helper may have just left
        pass
    return 0


class TimedVoice:
    """The instrument models, timed (their share of the wall time); the voice's own keys,
    variants and rates pass through, so the render does what ``soundscape render`` does."""

    def __init__(self, voice) -> None:
        self.voice = voice
        self.seconds = 0.0

    def __call__(self, *args, **kwargs):
        begin = time.perf_counter()
        note = self.voice(*args, **kwargs)
        self.seconds += time.perf_counter() - begin
        return note

    def __getattr__(self, name: str):
        return getattr(self.voice, name)


def _cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its children waited for (the
    render's helper processes, FluidSynth): a figure the machine's drift in speed moves
    less than the wall time (both cores busy, or one)."""
    return sum(usage.ru_utime + usage.ru_stime for usage in
               (resource.getrusage(resource.RUSAGE_SELF),
                resource.getrusage(resource.RUSAGE_CHILDREN)))


def run_one(args: argparse.Namespace) -> dict:
    """Render one layout in this process; return timings and peak memory."""
    from soundscape.malloc import reuse_freed_memory
    from soundscape.sound.panning import make_panner
    from soundscape.sound.render import SynthVoice, render_audio
    reuse_freed_memory()  # as the soundscape command does
    performance = _performance(args)
    with tempfile.TemporaryDirectory() as tmp:
        # raw float32 (pass 1) + 24-bit file: keep within 90 % of the free disk, else a prefix
        per_second = 48000 * len(make_panner(args.one).channels) * (4 + 3)
        fits = 0.9 * shutil.disk_usage(tmp).free / per_second
        partial = performance.duration > fits
        if partial:
            performance = performance.between(0.0, fits)
        surroundings = _surroundings(args.court)
        voice = TimedVoice(SynthVoice(surroundings.reference_db))  # as the command's
        cpu_before = _cpu_seconds()
        start = time.perf_counter()
        with PssSampler() if args.pss else contextlib.nullcontext() as pss:
            result = render_audio(performance, Path(tmp) / "bench.wav", listener=_listener(),
                                  layout=args.one, sample_rate=48000, seed=0, voice=voice,
                                  surroundings=surroundings, workers=args.jobs)
        wall = time.perf_counter() - start
        cpu = _cpu_seconds() - cpu_before
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    helper_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"layout": args.one, "audio_s": result.seconds, "wall_s": wall, "cpu_s": cpu,
            "speed": result.seconds / wall, "peak_mib": peak_mib, "helper_peak_mib": helper_mib,
            "peak_pss_mib": pss.peak_mib if args.pss else None,
            "events": len(performance.events), "lufs": result.report.output_lufs,
            "dbtp": result.report.output_peak_dbtp, "partial_for_disk": partial,
            "synth_s": voice.seconds}


def run_child(args: argparse.Namespace, layout: str, seconds: float | None = None, *,
              pss: bool = False) -> dict:
    command = [sys.executable, __file__, "--one", layout, *(["--pss"] if pss else [])]
    if args.from_section:
        command += ["--from", args.from_section]
    if args.to_section:
        command += ["--to", args.to_section]
    if seconds or args.seconds:
        command += ["--seconds", str(seconds or args.seconds)]
    if args.start:
        command += ["--start", str(args.start)]
    command += ["--jobs", str(args.jobs), "--court", args.court]
    done = subprocess.run(command, capture_output=True, text=True)
    os.sync()  # the disk's trim of the render's deleted files, before the next one is timed
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_fluidsynth(args: argparse.Namespace) -> dict:
    """Write our MIDI of the same performance and time FluidSynth rendering it."""
    from soundscape.errors import SoundscapeError
    from soundscape.output import midi
    if shutil.which("fluidsynth") is None or not SOUNDFONT.is_file():
        return {"error": "fluidsynth or FluidR3_GM missing "
                         "(apt-get install fluidsynth fluid-soundfont-gm)"}
    performance = _performance(args)
    with tempfile.TemporaryDirectory() as tmp:
        mid, wav = Path(tmp) / "rite.mid", Path(tmp) / "fluid.wav"
        try:
            midi.write_midi(performance, mid, listener=_listener())
        except SoundscapeError as error:
            return {"error": f"midi.write_midi failed: {error}"}
        cpu_before = _cpu_seconds()
        start = time.perf_counter()
        subprocess.run(["fluidsynth", "-ni", "-F", str(wav), "-r", "48000", str(SOUNDFONT),
                        str(mid)], check=True, capture_output=True)
        wall = time.perf_counter() - start
        cpu = _cpu_seconds() - cpu_before
    os.sync()  # as after each render: FluidSynth's deleted file trimmed before the next
    return {"wall_s": wall, "cpu_s": cpu, "audio_s": performance.duration,
            "speed": performance.duration / wall}


def window_starts(duration: float, window: float) -> list[float]:
    """Where spans of ``window`` seconds begin so that they cover ``duration``: every
    ``window`` seconds, the last one moved back to end at the end (a part shorter than a
    window: one span, from 0)."""
    count = max(1, math.ceil(duration / window - 1e-9))
    return [k * window for k in range(count - 1)] + [max(0.0, duration - window)]


def run_windows(args: argparse.Namespace) -> None:
    """Each span of ``--windows`` seconds of the part (from ``--start``, for ``--seconds``
    if given): the first layout's render and FluidSynth's, in turn (the machine's speed
    drifts), and the ratio of their wall times."""
    if args.windows <= 0:
        raise SystemExit(f"--windows must be a positive number of seconds, not {args.windows}")
    layout = next(filter(None, args.layouts.split(",")), "stereo")
    duration = _performance(args).duration
    rows = []
    for offset in window_starts(duration, args.windows):
        span = argparse.Namespace(**{**vars(args), "start": args.start + offset,
                                     "seconds": min(args.windows, duration - offset)})
        row = run_child(span, layout)
        fluid = run_fluidsynth(span)
        if "error" in fluid:
            raise SystemExit(f"fluidsynth: {fluid['error']}")
        row.update(start_s=span.start, fluidsynth_wall_s=fluid["wall_s"],
                   fluidsynth_cpu_s=fluid["cpu_s"], vs_fluidsynth=row["wall_s"] / fluid["wall_s"])
        rows.append(row)
        print(f"{layout} {span.start:8.1f}-{span.start + row['audio_s']:8.1f} s: "
              f"{row['wall_s']:6.1f} s wall against FluidSynth's {fluid['wall_s']:6.1f} s = "
              f"{row['vs_fluidsynth']:5.2f}x ({row['cpu_s']:.1f} against {fluid['cpu_s']:.1f} s "
              f"CPU), {row['events']} events", flush=True)
    ratios = sorted(row["vs_fluidsynth"] for row in rows)
    worst = max(rows, key=lambda row: row["vs_fluidsynth"])
    print(f"highest: {worst['vs_fluidsynth']:.2f}x from {worst['start_s']:.1f} s; lowest "
          f"{ratios[0]:.2f}x; median {statistics.median(ratios):.2f}x over {len(rows)} spans",
          flush=True)
    if args.json:
        args.json.write_text(json.dumps({"windows": rows}, indent=1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="from_section")
    parser.add_argument("--to", dest="to_section")
    parser.add_argument("--seconds", type=float, default=None,
                        help="Render only SECONDS of the part (from --start).")
    parser.add_argument("--start", type=float, default=0.0,
                        help="Begin SECONDS into the part (with --seconds: that span).")
    parser.add_argument("--windows", type=float, default=None, metavar="SECONDS",
                        help="Time the first layout on every span of SECONDS of the part "
                        "(the last ending at its end), each beside FluidSynth on that "
                        "span's MIDI, and report the highest ratio.")
    parser.add_argument("--short", type=float, default=600.0,
                        help="Length of the short render for the memory comparison (s).")
    parser.add_argument("--layouts", default=",".join(LAYOUTS),
                        help="Comma-separated layouts to time (empty: none).")
    parser.add_argument("--jobs", type=int, default=2,
                        help="Render processes (2: a helper computes notes; its synthesis "
                        "time is not in the synthesis share).")
    parser.add_argument("--court", default="bare",
                        help="The court hypothesis, as `soundscape render --court` (its "
                        "default: bare); none: no walls and no late tail.")
    parser.add_argument("--json", type=Path, default=None, help="Also write results here.")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--pss", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args)))
        return
    if args.windows:
        run_windows(args)
        return
    results = {"layouts": [], "short": None, "fluidsynth": None}
    # timed runs first, FluidSynth right after them (the machine's speed drifts); then the
    # same renders again for their memory: reading a process's PSS (smaps_rollup) walks
    # its page tables under its memory lock, ~40 ms for the three processes, so sampling
    # it every 0.2 s slows the render it measures
    layouts = list(filter(None, args.layouts.split(",")))
    for layout in layouts:
        row = run_child(args, layout)
        results["layouts"].append(row)
        print(f"{layout:9s} {row['audio_s']:8.1f} s audio in {row['wall_s']:7.1f} s wall "
              f"({row['cpu_s']:.1f} s CPU): {row['speed']:6.1f}x real time, "
              f"peak RSS {row['peak_mib']:4.0f} MiB "
              f"(+ helper {row['helper_peak_mib']:.0f}) ({row['lufs']:.1f} LUFS, "
              f"{row['dbtp']:.1f} dBTP; synthesis {row['synth_s']:.0f} s of the wall time)",
              flush=True)
    fluid = run_fluidsynth(args)
    results["fluidsynth"] = fluid
    if "error" in fluid:
        print(f"fluidsynth: {fluid['error']}")
    else:
        print(f"fluidsynth {fluid['audio_s']:8.1f} s audio in {fluid['wall_s']:7.1f} s wall "
              f"({fluid['cpu_s']:.1f} s CPU): {fluid['speed']:6.1f}x real time")
        for row in results["layouts"]:
            # a prefix (too little disk for the whole) is compared per second of audio
            ratio = (fluid["speed"] / row["speed"] if row["partial_for_disk"]
                     else row["wall_s"] / fluid["wall_s"])
            row["vs_fluidsynth"] = ratio
            how = ("per audio second (prefix: disk)" if row["partial_for_disk"]
                   else "wall / fluidsynth wall")
            print(f"  {row['layout']:9s} {how} = {ratio:5.2f} (CPU seconds: "
                  f"{row['cpu_s'] / fluid['cpu_s']:.2f})", flush=True)
    for row in results["layouts"]:
        memory = run_child(args, row["layout"], pss=True)
        row["peak_pss_mib"], row["wall_with_pss_sampler_s"] = (memory["peak_pss_mib"],
                                                               memory["wall_s"])
        print(f"memory: {row['layout']:9s} peak PSS of the render and its helpers "
              f"{row['peak_pss_mib']:4.0f} MiB (that run, sampled: {memory['wall_s']:.1f} s)",
              flush=True)
    short = run_child(args, "stereo", seconds=args.short, pss=True)
    results["short"] = short
    print(f"memory: stereo {short['audio_s']:.0f} s → peak RSS {short['peak_mib']:.0f} MiB, "
          f"both PSS {short['peak_pss_mib']:.0f} MiB", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
