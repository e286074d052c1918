"""A click heard on its own against the same click on a line: the court's tail each gets.

A click from the singers' place (``gong_xi``) given its own position (heard alone, sent to
the tail by ``Tail.send_heard``) and the same click on a line (``impulse_response``: what
``soundscape impulse`` writes), heard in first-order ambisonics (W) at the duke's seat,
mid-court and the gate in the bare court; and a walker standing still mid-court (every
note of a walk is heard alone, the tail from his 10 m cell). Prints per listener EDT and C80
(ISO 3382-1, 500 Hz-1 kHz: ``iso3382.measure``), the energy 0.1-1 s after the direct sound
in those octaves against the lined click's, and the difference of the two responses after
80 ms under the lined one's. Run it in two code trees for before and after::

    PYTHONPATH=TREE .venv/bin/python bench/tail_heard_figures.py
"""

from __future__ import annotations

import numpy as np
from scipy import signal

from soundscape.performance import Event, Performance
from soundscape.site.courtyard import load_site
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound import iso3382
from soundscape.sound.court import load_court, source_point
from soundscape.sound.impulse import CLICK_SOURCE, Click, click_source, impulse_response
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks

FS = 48000
AT = 0.1


def _render(performance, listener, surroundings) -> np.ndarray:
    panner = make_panner("foa", speed_of_sound=surroundings.air.speed_of_sound)
    blocks = render_blocks(performance, listener=listener, panner=panner, sample_rate=FS,
                           seed=0, voice=Click(), surroundings=surroundings, block_frames=FS)
    return np.concatenate(list(blocks)).astype(np.float64)[round(AT * FS):, 0]


def _late_mid_db(ir: np.ndarray) -> float:
    first = int(np.argmax(np.abs(ir) > 0.1 * np.abs(ir).max()))
    mid = signal.sosfiltfilt(signal.butter(4, (354.0, 1414.0), btype="bandpass", fs=FS,
                                           output="sos"), ir)
    late = mid[first + round(0.1 * FS):first + FS]
    return 10 * np.log10((late ** 2).sum() / (mid ** 2).sum())


def main() -> None:
    site = load_site()
    point = source_point(site, "gong_xi")
    court = Surroundings(court=load_court(site, "bare"))
    print("listener | EDT s heard alone (lined, %) | C80 dB (lined, diff) | late mid dB "
          "| after 80 ms: difference under the lined, dB")
    for place in ("gong_wei", "zhongting", "men", "zhongting walking"):
        seat = site.listener(place.split()[0])
        ear = Listener(seat.position, seat.facing)
        listener = (ListenerPath(((0.0, seat.position, seat.facing),
                                  (10.0, seat.position, seat.facing)))
                    if "walking" in place else ear)
        event = Event(AT, 0.001, CLICK_SOURCE, None, 1.0, "click", "impulse", position=point)
        stand = point if "walking" in place else (0.0, -60.0, 1.5)
        placed = _render(Performance.build([event], [], {CLICK_SOURCE: click_source(stand)}),
                         listener, court)
        lined = impulse_response(point, ear, surroundings=court, layout="foa",
                                 sample_rate=FS)[:, 0]
        n = min(len(placed), len(lined))
        placed, lined = placed[:n], lined[:n]
        a, b = iso3382.measure(placed, FS), iso3382.measure(lined, FS)
        first = int(np.argmax(np.abs(lined) > 0.1 * np.abs(lined).max()))
        after = slice(first + round(0.08 * FS), n)
        residual = 10 * np.log10(np.sum((placed[after] - lined[after]) ** 2)
                                 / np.sum(lined[after] ** 2))
        print(f"{place} | {a.edt:.2f} ({b.edt:.2f}, {100 * (a.edt / b.edt - 1):+.1f} %) | "
              f"{a.c80:+.1f} ({b.c80:+.1f}, {a.c80 - b.c80:+.2f}) | "
              f"{_late_mid_db(placed) - _late_mid_db(lined):+.2f} | {residual:+.1f}")


if __name__ == "__main__":
    main()
