"""Draw the spectrograms of the sounds of actions and of the place shown in docs/instruments.md.

    .venv/bin/python bench/spectrograms.py [--out docs]

Writes ``footsteps.png`` (a walk over the courtyard's earth, up the stone steps, across
the hall's floor, then 趨 on it), ``vessel.png`` (a 爵 set down on the 豐, then a 觶 into
the 篚) and ``ambience.png`` (30 s of the day bed above, 30 s of the evening bed below),
all at 48 kHz with seed 0. Not a test: run it after changing a model or its data, and
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
    day = sequence("ambience", [("day", 0.0, 30.0)])
    evening = sequence("ambience", [("evening", 0.0, 30.0)], seed=1)
    draw([("30 s of the day bed: air and gusts, leaves, birds, distant life", day, 2048,
           8000.0),
          ("30 s of the evening bed: the wind drops, crickets at 4.2-5 kHz", evening, 2048,
           8000.0)], out / "ambience.png", [[], []])
    print(f"wrote {out}/footsteps.png, vessel.png, ambience.png")


if __name__ == "__main__":
    main()
