"""Draw the spectrograms of the sounds of actions and of the place shown in docs/instruments.md.

    .venv/bin/python bench/spectrograms.py [--out docs]

Writes ``footsteps.png`` (a walk over the courtyard's earth, up the stone steps, across
the hall's floor, then 趨 on it), ``vessel.png`` (a 爵 set down on the 豐, then a 觶 into
the 篚), ``robe.png`` (說決拾襲 at the 次: the thumb ring and armguard off, then the sleeve on,
then a 揖) and ``ambience.png`` (30 s of the place by day above, 30 s of it at night below:
the bed with the calls of its hour, each source at its distance from the listener), all
at 48 kHz with seed 0. Not a test: run it after changing a model or its data, and
look at the pictures.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
import numpy as np

from soundscape.fileio import atomic_path
from soundscape.music.instruments import load_instrument
from soundscape.output.fonts import families
from soundscape.sound.synth import render_note

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # after choosing the backend

RATE = 48000


def sequence(instrument_id: str, parts: list[tuple[str, float, float]], *,
             seed: int = 0) -> np.ndarray:
    """Notes (articulation, onset s, duration s) of one instrument mixed into one track."""
    instrument = load_instrument(instrument_id)
    rng = np.random.default_rng(seed)
    notes = [(round(onset * RATE), render_note(instrument, hz=None, velocity=0.8,
                                               duration=duration, articulation=articulation,
                                               sample_rate=RATE, rng=rng))
             for articulation, onset, duration in parts]
    out = np.zeros(max(start + note.size for start, note in notes))
    for start, note in notes:
        out[start:start + note.size] += note
    return out


def place(hour: str, calls: list[tuple[str, float, float, float]], *, seed: int = 0
          ) -> np.ndarray:
    """30 s of the bed of ``hour`` (four sources 20 m off) and the calls (articulation,
    onset s, duration s, distance m), each at its level at 1 m over its distance (SPL, as
    the render's voice scales them; no air or ground here)."""
    rng = np.random.default_rng(seed)
    bed, calls_ = load_instrument("ambience"), load_instrument("creatures")
    out = np.zeros(30 * RATE)
    for k in range(5):  # overlapping segments, each its own
        note = render_note(bed, hz=None, velocity=1.0, duration=8.19, articulation=hour,
                           sample_rate=RATE, rng=rng) * 10 ** (bed.loudness_db / 20) * 2 / 20
        at = round(k * 6.69 * RATE)
        out[at:at + note.size] += note[:out.size - at]
    for articulation, onset, duration, metres in calls:
        note = render_note(calls_, hz=None, velocity=0.8, duration=duration,
                           articulation=articulation, sample_rate=RATE, rng=rng)
        at = round(onset * RATE)
        out[at:at + note.size] += note[:out.size - at] * 10 ** (calls_.loudness_db / 20) / metres
    return out / 10 ** (94 / 20)


def draw(panels: list[tuple[str, np.ndarray, int, float]], path: Path,
         marks: list[list[tuple[float, str]]]) -> None:
    """One spectrogram per panel (title, audio, FFT size, top Hz), labelled at marks."""
    plt.rcParams["font.family"] = list(families())
    figure, axes = plt.subplots(len(panels), 1, figsize=(12, 4 * len(panels)), dpi=80,
                                squeeze=False)
    for ax, (title, audio, nfft, top), labels in zip(axes[:, 0], panels, marks, strict=True):
        loudest = 20 * np.log10(max(float(np.max(np.abs(audio))), 1e-9))
        with np.errstate(divide="ignore"):
            ax.specgram(audio, NFFT=nfft, Fs=RATE, noverlap=nfft * 3 // 4, cmap="magma",
                        vmin=loudest - 110, vmax=loudest - 25, scale="dB")
        ax.set_facecolor("black")  # digital silence between notes
        ax.set_ylim(0, top)
        ax.set_title(title)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("frequency (Hz)")
        for time, text in labels:
            ax.annotate(text, (time, top * 0.93), color="white", fontsize=10)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    out = parser.parse_args().out
    walk = sequence("footstep", [("earth", 0.0, 4.0), ("stone", 4.2, 2.5), ("wood", 7.0, 3.0),
                                 ("wood_hurried", 10.3, 2.0)])
    draw([("footsteps: beaten earth, stone steps, the hall's floor, then 趨 on it", walk, 1024,
           8000.0)], out / "footsteps.png",
         [[(0.1, "earth 1.6/s"), (4.3, "stone steps"), (7.1, "wood floor"),
           (10.4, "wood, hurried 3/s")]])
    cups = sequence("vessel", [("jue_wood", 0.0, 0.3), ("zhi_basket", 1.2, 0.3)])
    draw([("a 爵 set down on the 豐 (three legs), then a 觶 into the bamboo 篚", cups, 1024,
           14000.0)], out / "vessel.png", [[(0.02, "jue on wood"), (1.22, "zhi in basket")]])
    robe = sequence("robe", [("bracer", 0.0, 1.5), ("dress", 2.0, 2.0), ("salute", 4.5, 1.2)])
    draw([("說決拾襲 at the 次: the thumb ring and leather armguard off (bracer), the sleeve put "
           "on (dress), then a 揖 (salute)", robe, 1024, 12000.0)], out / "robe.png",
         [[(0.05, "bracer: leather, ring's tick"), (2.05, "dress: silk sleeve"),
           (4.55, "salute")]])
    day = place("day", [("cicada", 2.0, 8.0, 40.0), ("sparrow", 11.0, 2.0, 35.0),
                        ("magpie", 14.0, 1.5, 45.0), ("rustle", 17.0, 5.0, 35.0),
                        ("oriole", 23.0, 1.5, 40.0), ("dove", 26.0, 2.5, 50.0)])
    night = place("night", [("cricket", 0.5, 9.5, 25.0), ("cricket", 10.0, 9.5, 25.0),
                            ("cricket", 4.0, 9.0, 45.0), ("cricket", 19.5, 9.5, 25.0),
                            ("rustle", 14.0, 4.0, 35.0)])
    draw([("30 s of the place by day: the bed (air, leaves, distant life) and calls: a cicada, "
           "a sparrow, a magpie, a gust in a tree, an oriole, a dove", day, 2048, 20000.0),
          ("30 s of the place at night: a still bed, crickets at 4.3-4.9 kHz (2.5 chirps/s "
           "of 4 pulses at 30/s) and their harmonics, a gust", night, 2048, 20000.0)],
         out / "ambience.png", [[(2.1, "cicada"), (11.1, "sparrow"), (14.1, "magpie"),
                                 (17.1, "rustle"), (23.1, "oriole"), (26.1, "dove")],
                                [(0.6, "crickets"), (14.1, "rustle")]])
    print(f"wrote {out}/footsteps.png, vessel.png, robe.png, ambience.png")


if __name__ == "__main__":
    main()
