"""Spectrogram of a 建鼓 stroke heard at the duke's seat, before and after the court's walls:
the floor and hall front only (``--court none``) against the walled court (bare, damped).

    .venv/bin/python bench/court_spectrogram.py docs/court_drum_stroke.png

Prints the stroke's remaining energy 0.5 s and 2 s after it (Schroeder's backward integral).
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import signal

FS = 48000
SECONDS = 5.0


def _stroke(surroundings):
    """One 建鼓 stroke (velocity 0.9) from the east drum's place, at the duke's seat, mono."""
    from soundscape.performance import Event, Performance
    from soundscape.sequence.planner import perform_from_file
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import Listener
    from soundscape.sound.panning import make_panner
    from soundscape.sound.render import SynthVoice, render_blocks

    section = perform_from_file(from_section="s02", to_section="s02")
    drum = next(s for s in section.sources.values() if s.instrument == "jiangu")
    performance = Performance.build([Event(0.2, 0.5, drum.id, None, 0.9, "strike", "demo")],
                                    [], {drum.id: drum})
    seat = load_site().listener("gong_wei")
    out = np.concatenate(list(render_blocks(
        performance, listener=Listener(seat.position, seat.facing),
        panner=make_panner("stereo"), sample_rate=FS, seed=0, voice=SynthVoice(),
        surroundings=surroundings, block_frames=FS)))
    mono = out.mean(axis=1)[:round(SECONDS * FS)]
    return drum, np.pad(mono, (0, round(SECONDS * FS) - len(mono)))


def main(png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from soundscape.output.fonts import families
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court
    from soundscape.sound.propagation import Surroundings

    plt.rcParams["font.family"] = list(families())
    site = load_site()
    cases = [("before: floor and hall front (--court none)", Surroundings()),
             ("after: walled court, bare", Surroundings(court=load_court(site, "bare"))),
             ("after: walled court, damped", Surroundings(court=load_court(site, "damped")))]
    fig, axes = plt.subplots(len(cases), 1, figsize=(10, 9), sharex=True)
    for ax, (title, surroundings) in zip(axes, cases, strict=True):
        drum, mono = _stroke(surroundings)
        f, t, power = signal.spectrogram(mono, FS, nperseg=2048, noverlap=1536)
        db = 10 * np.log10(power + 1e-20)
        ax.pcolormesh(t, f, db, vmin=db.max() - 90, vmax=db.max(), shading="auto",
                      cmap="magma")
        ax.set_yscale("symlog", linthresh=200)
        ax.set_ylim(30, 16000)
        ax.set_ylabel("Hz")
        where = tuple(round(v, 1) for v in drum.position)
        ax.set_title(f"建鼓 stroke at {where} → 公席: {title}", fontsize=9)
        left = np.cumsum((mono ** 2)[::-1])[::-1]
        level = 10 * np.log10(left / left[0] + 1e-30)
        print(f"{title}: energy left 0.5 s after the stroke {level[round(0.7 * FS)]:.1f} dB, "
              f"2 s after {level[round(2.2 * FS)]:.1f} dB")
    axes[-1].set_xlabel("s")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/court_drum_stroke.png")
