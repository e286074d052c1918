"""Spectrograms of what issue 25's last changes do, before and after (two code trees):

- a sound with its own position (a stone of the west rack of 貍首, heard at the duke's seat,
  the bare court): before, heard alone, it had no late tail; after, it has its zone's;
- two successive strokes of the east 建鼓 of 貍首, dry as the render makes them: before,
  nearly one sound (r in 30-300 Hz); after, struck at points of the drum's sequence.

Run ``save`` in each tree, then ``draw``::

    PYTHONPATH=OLD .venv/bin/python bench/heard_alone_spectrogram.py save /tmp/before.npz
    PYTHONPATH=NEW .venv/bin/python bench/heard_alone_spectrogram.py save /tmp/after.npz
    .venv/bin/python bench/heard_alone_spectrogram.py draw /tmp/before.npz /tmp/after.npz \\
        docs/heard_alone.png
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import signal

FS = 48000
SECONDS = 4.0
DRY_FS = 8000


def _lishou():
    from soundscape.sequence.planner import perform_from_file

    return perform_from_file(seed=0, from_section="s32", to_section="s32")


def _placed_bell(performance) -> np.ndarray:
    """The first positioned stone (磬) stroke of 貍首, alone at 0.2 s, at the duke's seat (mono)."""
    import dataclasses

    from soundscape.performance import Performance
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import Listener
    from soundscape.sound.court import load_court
    from soundscape.sound.panning import make_panner
    from soundscape.sound.propagation import Surroundings
    from soundscape.sound.render import SynthVoice, render_blocks

    event = next(e for e in performance.events if e.position is not None
                 and performance.sources[e.source].instrument == "bianqing")
    source = performance.sources[event.source]
    alone = Performance.build([dataclasses.replace(event, time=0.2, piece=None)], [],
                              {source.id: source})
    site = load_site()
    seat = site.listener("gong_wei")
    out = np.concatenate(list(render_blocks(
        alone, listener=Listener(seat.position, seat.facing), panner=make_panner("stereo"),
        sample_rate=FS, seed=0, voice=SynthVoice(),
        surroundings=Surroundings(court=load_court(site, "bare")), block_frames=FS)))
    mono = out.mean(axis=1)[:round(SECONDS * FS)]
    return np.pad(mono, (0, round(SECONDS * FS) - len(mono)))


def _two_strokes(performance) -> np.ndarray:
    """Strokes 10 and 11 of the east 建鼓 of 貍首, dry, one after the other (1.5 s each)."""
    from soundscape.sound.likeness import dry_strokes

    indexes = [i for i, e in enumerate(performance.events) if e.source == "east.jiangu"][10:12]
    notes = dry_strokes(performance, indexes, sample_rate=DRY_FS)
    frames = round(1.5 * DRY_FS)
    return np.concatenate([np.pad(n[:frames], (0, frames - len(n[:frames]))) for n in notes])


def save(path: str) -> None:
    performance = _lishou()
    np.savez(path, bell=_placed_bell(performance), strokes=_two_strokes(performance))


def draw(before: str, after: str, png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from soundscape.output.fonts import families
    from soundscape.sound.likeness import pair_correlations

    plt.rcParams["font.family"] = list(families())
    data = {"before": np.load(before), "after": np.load(after)}
    fig, axes = plt.subplots(2, 2, figsize=(12, 7))
    for column, name in enumerate(("before", "after")):
        bell, strokes = data[name]["bell"], data[name]["strokes"]
        f, t, power = signal.spectrogram(bell, FS, nperseg=2048, noverlap=1536)
        db = 10 * np.log10(power + 1e-20)
        ax = axes[0, column]
        ax.pcolormesh(t, f, db, vmin=db.max() - 90, vmax=db.max(), shading="auto", cmap="magma")
        ax.set_yscale("symlog", linthresh=200)
        ax.set_ylim(30, 16000)
        left = np.cumsum((bell ** 2)[::-1])[::-1]
        late = 10 * np.log10(left[round(2.2 * FS)] / left[0] + 1e-30)
        ax.set_title(f"{name}: a rack stone of 貍首 (own position) at 公席, bare court; "
                     f"energy left 2 s after it {late:.0f} dB", fontsize=8)
        ax.set_ylabel("Hz")
        half = len(strokes) // 2
        r = pair_correlations([strokes[:half], strokes[half:]], band=(30.0, 300.0),
                              sample_rate=DRY_FS)[0, 1]
        f, t, power = signal.spectrogram(strokes, DRY_FS, nperseg=1024, noverlap=896)
        db = 10 * np.log10(power + 1e-20)
        ax = axes[1, column]
        ax.pcolormesh(t, f, db, vmin=db.max() - 70, vmax=db.max(), shading="auto", cmap="magma")
        ax.set_ylim(0, 400)
        ax.set_title(f"{name}: strokes 10 and 11 of the east 建鼓 of 貍首, dry; "
                     f"r = {r:.3f} in 30-300 Hz", fontsize=8)
        ax.set_xlabel("s")
        ax.set_ylabel("Hz")
        print(f"{name}: stone energy left 2 s after it {late:.1f} dB; strokes r {r:.3f}")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    if sys.argv[1] == "save":
        save(sys.argv[2])
    else:
        draw(*sys.argv[2:5])
