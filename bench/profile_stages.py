"""Where a render's time goes, by stage: py-spy samples of every process and thread, summed.

Runs ``soundscape render`` under py-spy (``pip install py-spy``), sampling every thread of
the render and of its helper processes, and sums the samples by stage: the notes' synthesis
per model family, the per-note spatialiser, the lines (the places' filters), the court's
tail, the upsamplers, pass 1's metering and raw file, pass 2 (gain, limiter, writing), and
what each process spends waiting::

    .venv/bin/python bench/profile_stages.py --from s18 --to s18
    .venv/bin/python bench/profile_stages.py                     # whole rite (minutes)
    .venv/bin/python bench/profile_stages.py --raw out/raw.txt   # a py-spy raw file again

A sample is a thread seen at a place in the code, busy or not (``--idle``), every 1/rate
seconds of wall time: on a loaded machine every stage swells alike, so read the shares.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: Stages, first match wins: (name, pattern in any frame of the stack).
STAGES = (
    ("waiting (locks, pipes, idle threads)", None),
    ("notes: sung lines", "sung_line.py"),
    ("notes: speech and calls (voice)", "synth/voice.py"),
    ("notes: bed (ambience)", "synth/ambience.py"),
    ("notes: bed (creatures)", "synth/creatures.py"),
    ("notes: instruments and actions", "render_note"),
    ("spatialiser (notes heard alone)", "HeardNotes.compute"),
    ("court tail", "tail.py"),
    ("upsamplers", "Upsampler.__call__"),
    ("lines (places' filters)", "lines.py"),
    ("pass 1: meters, raw file", "_Keeper"),
    ("pass 2: gain, limiter, writing", "master.<locals>.write"),
    ("helper traffic (pipes)", "helper.py"),
    ("sequencing", "sequence/"),
)
# helper.py's pipe reads and writes (os.read, os.readv, os.write) and the keeper's wait for
# its next slot (a semaphore) block: waiting, not traffic
_IDLE = re.compile(r"^(Condition\.wait|_worker |Connection\._recv |Event\.wait|"
                   r"_wait_for_tstate_lock|select|poll|sleep|"
                   r"(_read|_write|_fill|_requested|_Incoming\.read) \(\S*helper\.py|"
                   r"_Slots\.take \(\S*mastering\.py)")


def stages(raw: Path, rate: float) -> dict[str, float]:
    """Seconds of samples per stage in a py-spy raw (collapsed) file."""
    found: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if frames and _IDLE.match(frames[-1]):
            found[STAGES[0][0]] += int(count)
            continue
        name = next((name for name, pattern in STAGES[1:]
                     if any(pattern in f for f in frames)), "other")
        found[name] += int(count)
    return {name: n / rate for name, n in found.most_common()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="from_section")
    parser.add_argument("--to", dest="to_section")
    parser.add_argument("--rate", type=int, default=50,
                        help="Samples a second (py-spy takes a whole number).")
    parser.add_argument("--layout", default="stereo")
    parser.add_argument("--raw", type=Path, help="Sum this py-spy raw file instead.")
    args = parser.parse_args()
    raw = args.raw
    if raw is None:
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        folder = Path(tempfile.mkdtemp(prefix="profile-"))
        raw = folder / "raw.txt"
        command = [sys.executable, "-m", "soundscape", "render", "--quiet", "--layout", args.layout,
                   "-o", str(folder / "render.wav")]
        for flag, value in (("--from", args.from_section), ("--to", args.to_section)):
            if value:
                command += [flag, value]
        subprocess.run([spy, "record", "--subprocesses", "--threads", "--idle",
                        "-r", str(args.rate), "-f", "raw", "-o", str(raw), "--", *command],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found = stages(raw, args.rate)
    busy = sum(v for k, v in found.items() if k != STAGES[0][0])
    print(f"{'stage':40s} {'thread-s':>9s} {'of busy':>8s}")
    for name, seconds in found.items():
        share = "" if name == STAGES[0][0] else f"{100 * seconds / busy:7.1f}%"
        print(f"{name:40s} {seconds:9.1f} {share:>8s}")


if __name__ == "__main__":
    main()
