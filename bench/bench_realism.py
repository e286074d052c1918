"""What a listener hears of the whole rite: silence, gaps, the ensemble, the voice, infrasound.

Sequences the rite (seed 0), renders it in stereo from the duke's seat (or reads a
WAV you rendered: ``--wav``), and prints

- the share of digital-zero samples (goal 0 %) and of 50 ms frames whose RMS is
  under −60 dBFS (goal < 2 %);
- the longest span of the rite in which no sound is sounding (goal < 20 s);
- the ensemble's onset spread: the standard deviation of the onsets of the players
  of one note (singers and 瑟 of 鹿鳴, the goal: tens of milliseconds, none closer
  than 1 ms);
- the energy below 20 Hz against the whole mix's (goal ≤ −40 dB);
- the singers: overlapping notes per voice (goal 0) and breaths per minute of singing, by
  ``sung_lines.py`` (it also measures glides, intonation, vibrato and the 終 with Praat);
- the voice: harmonics, formants, frication and vibrato, by ``bench_voice.py``, and the
  rite's speech: syllables a second and Praat's f0 range per phrase, and phrases one
  person says at once (goal 0);

and draws a spectrogram of one minute between two pieces (``--png``)::

    .venv/bin/python bench/bench_realism.py                     # render, then measure
    .venv/bin/python bench/bench_realism.py --wav output/dashe.wav
    .venv/bin/python bench/bench_realism.py --seconds 900       # the first 15 minutes

A benchmark, not a test: the whole rite takes minutes to render.
"""

from __future__ import annotations

import argparse
import itertools
import runpy
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy import signal

FRAME_S = 0.05
QUIET_DBFS = -60.0


def _performance():
    from soundscape.sequence.planner import perform_from_file

    return perform_from_file(seed=0)


def _render(performance, path: Path) -> None:
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import Listener
    from soundscape.sound.render import render_audio

    seat = load_site().listener("gong_wei")
    render_audio(performance, path, listener=Listener(seat.position, seat.facing),
                 layout="stereo", seed=0)


def longest_silence(performance, *, bed: bool = True) -> tuple[float, float]:
    """The longest span with no event sounding (nominal lengths), and where it starts;
    ``bed=False`` leaves the place's bed out (what the rite's people and music make)."""
    spans = sorted((e.time, e.end) for e in performance.events
                   if bed or performance.sources[e.source].group != "place")
    longest, at, reach = 0.0, 0.0, 0.0
    for start, end in spans:
        if start - reach > longest:
            longest, at = start - reach, reach
        reach = max(reach, end)
    return longest, at


def onset_spread(performance, cue: str = "luming") -> tuple[float, float]:
    """Median standard deviation (ms) of the onsets of one note's players, and the
    smallest distance (ms) between two players' onsets of one note."""
    notes = {}
    for event in performance.events:
        if event.cue == cue and event.pitch is not None and event.source.startswith("gong."):
            key = (event.lyric, round(event.time, 0), event.pitch.lu)
            notes.setdefault(key, []).append(event.time)
    groups = [np.array(sorted(t)) for t in notes.values() if len(t) > 1]
    spread = float(np.median([g.std() for g in groups])) * 1000
    closest = min(float(np.min(np.diff(g))) for g in groups) * 1000
    return spread, closest


def singing(performance) -> str:
    """The singers' lines: overlapping notes per voice and breaths per minute of singing."""
    lines = runpy.run_path(str(Path(__file__).with_name("sung_lines.py")))
    found = lines["overlaps"](performance)
    overlapping = ", ".join(f"{who} {count} of {notes}" for who, (count, notes, _) in
                            sorted(found.items()))
    return (f"singers: overlapping successive notes {overlapping}  (goal 0); "
            f"{lines['breaths_per_minute'](performance):.1f} breaths per minute of singing")


def audio_figures(path: Path) -> dict[str, float]:
    """Zero samples, quiet frames and infrasound, read block by block."""
    info = sf.info(str(path))
    rate = info.samplerate
    frame = round(FRAME_S * rate)
    zeros = samples = quiet = frames = 0
    low = total = 0.0
    for block in sf.blocks(str(path), blocksize=frame * 200, dtype="float64", always_2d=True):
        zeros += int(np.count_nonzero(block == 0.0))
        samples += block.size
        whole = len(block) // frame * frame
        if whole:
            rms = np.sqrt(np.mean(block[:whole].reshape(-1, frame, block.shape[1]) ** 2,
                                  axis=(1, 2)))
            quiet += int(np.count_nonzero(rms < 10 ** (QUIET_DBFS / 20)))
            frames += len(rms)
        if len(block) >= 2 ** 15:  # power per band: Welch, 0.7 Hz bins, Hann (low leakage)
            f, power = signal.welch(block, fs=rate, nperseg=2 ** 16 if len(block) >= 2 ** 16
                                    else 2 ** 15, axis=0)
            low += float(np.sum(power[f < 20.0])) * len(block)
            total += float(np.sum(power)) * len(block)
    return {"zero_share": zeros / samples, "quiet_share": quiet / max(frames, 1),
            "below_20hz_db": 10 * np.log10(max(low, 1e-30) / max(total, 1e-30)),
            "seconds": info.frames / rate}


def quiet_minute(performance) -> float:
    """The start of the first minute with no music in it (between two pieces)."""
    music = sorted((m.start, m.end) for m in performance.music)
    for (_, end), (start, _) in itertools.pairwise(music):
        if start - end >= 60.0:
            return end
    return 0.0


def draw_minute(path: Path, start: float, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rate = sf.info(str(path)).samplerate
    audio, _ = sf.read(str(path), start=round(start * rate), frames=60 * rate, always_2d=True)
    mono = audio.mean(axis=1)
    f, t, power = signal.spectrogram(mono, fs=rate, nperseg=2048, noverlap=1536)
    figure, ax = plt.subplots(figsize=(12, 4.5))
    mesh = ax.pcolormesh(t, f, 10 * np.log10(power + 1e-14), shading="auto", vmin=-140,
                         vmax=-40, cmap="magma")
    ax.set_ylim(0, 12000)
    ax.set_xlabel(f"seconds from {start / 60:.1f} min (no music: the rite's actions and "
                  "the place)")
    ax.set_ylabel("Hz")
    figure.colorbar(mesh, label="dB (power)")
    figure.tight_layout()
    figure.savefig(png, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wav", type=Path, help="measure this render (stereo, whole rite)")
    parser.add_argument("--seconds", type=float, help="only the first N seconds")
    parser.add_argument("--png", type=Path, help="spectrogram of a minute between pieces")
    parser.add_argument("--no-voice", action="store_true", help="skip bench_voice.py")
    args = parser.parse_args()
    whole = _performance()
    spread, closest = onset_spread(whole)
    performance = whole.between(0.0, args.seconds) if args.seconds else whole
    gap, at = longest_silence(performance)
    people, people_at = longest_silence(performance, bed=False)
    with tempfile.TemporaryDirectory() as folder:
        wav = args.wav or Path(folder) / "rite.wav"
        if args.wav is None:
            _render(performance, wav)
        figures = audio_figures(wav)
        if args.png:
            draw_minute(wav, quiet_minute(performance), args.png)
    print(f"audio: {figures['seconds'] / 60:.1f} min, stereo, from the duke's seat")
    print(f"digital-zero samples: {100 * figures['zero_share']:.3f} %  (goal 0 %)")
    print(f"50 ms frames under {QUIET_DBFS:.0f} dBFS: {100 * figures['quiet_share']:.2f} %  "
          "(goal < 2 %)")
    print(f"longest span with no sound: {gap:.1f} s at {at / 60:.1f} min  (goal < 20 s); "
          f"without the place's bed: {people:.1f} s at {people_at / 60:.1f} min")
    print(f"鹿鳴 onset spread: median {spread:.1f} ms per note, closest two players "
          f"{closest:.2f} ms  (goal: tens of ms, ≥ 1 ms)")
    print(singing(whole))
    print(f"energy below 20 Hz: {figures['below_20hz_db']:.1f} dB of the total  (goal ≤ −40)")
    if not args.no_voice:
        print("the voice (bench_voice.py):")
        voice = runpy.run_path(str(Path(__file__).with_name("bench_voice.py")))
        voice["measure"]()
        voice["speech_report"](whole)  # speech rate, f0 range per phrase, overlaps


if __name__ == "__main__":
    main()
