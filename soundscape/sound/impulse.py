"""The court's impulse response between two places, made by the render itself.

A click (one sample of 1.0: 94 dB SPL at 1 m) is the only sound of a performance of one
event; ``render.render_blocks`` hears it exactly as it hears the rite (the spatialiser's
direct and early paths, the lines, the court's late tail, the buses), so what comes out is
the response every note of a render goes through. Time 0 of the response is the click.
"""

from __future__ import annotations

import numpy as np

from soundscape.geometry import Vec3
from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import Listener
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings

__all__ = ["CLICK_SOURCE", "Click", "click_event", "click_source", "impulse_response"]

#: The id of the click's source in the performance ``impulse_response`` renders.
CLICK_SOURCE = "click"
#: Seconds before the click (room for the spatialiser's guard), cut from the response.
_LEAD_S = 0.1


class Click:
    """A voice whose only sound is a unit sample, from the source ``CLICK_SOURCE`` (every
    other source is silent): put a click into any performance and render it."""

    def __call__(self, event: Event, source: Source, *, sample_rate: int,
                 rng: np.random.Generator) -> np.ndarray:
        del event, sample_rate, rng
        return np.ones(1) if source.id == CLICK_SOURCE else np.zeros(0)


def click_source(point: Vec3) -> Source:
    """The click's source, standing at ``point``."""
    return Source(CLICK_SOURCE, "click", "脈衝", "click", "click",
                  (float(point[0]), float(point[1]), float(point[2])))


def click_event(time: float) -> Event:
    """The click at ``time`` seconds."""
    return Event(time, 0.001, CLICK_SOURCE, None, 1.0, "click", "impulse")


def impulse_response(source: Vec3, listener: Listener, *, surroundings: Surroundings,
                     layout: str | tuple[float, ...] = "stereo", sample_rate: int = 48000,
                     seed: int = 0) -> np.ndarray:
    """The response at ``listener`` to a click at ``source``: (frames, channels), float64,
    through ``render.render_blocks`` (its early paths, lines, late tail and buses)."""
    from soundscape.sound.render import render_blocks

    performance = Performance.build([click_event(_LEAD_S)], [],
                                    {CLICK_SOURCE: click_source(source)})
    panner = make_panner(layout, speed_of_sound=surroundings.air.speed_of_sound)
    blocks = render_blocks(performance, listener=listener, panner=panner,
                           sample_rate=sample_rate, seed=seed, voice=Click(),
                           surroundings=surroundings, block_frames=sample_rate)
    out = np.concatenate(list(blocks)).astype(np.float64)
    return out[round(_LEAD_S * sample_rate):]
