"""Sound models: one module per family, chosen by the instrument file's ``model``.

A model module ``soundscape.sound.synth.<name>`` exposes

- ``render(params, *, hz, velocity, duration, articulation, sample_rate, rng, lyric=None)
  -> ndarray (frames,)``: one note, mono float64, including its natural ring after
  ``duration``; peak ≤ 1 at velocity 1;
- optionally ``validate(params)``, raising ``soundscape.sound.synth.params.ParamError`` with
  the bad key, run once when the instrument file is loaded;
- optionally ``prepare(params) -> params``, run once after validation (e.g. to decode
  sample files);
- optionally ``for_pitch(params, pitch_name) -> params``, run for each note: the
  parameters of the member of a set that sounds that pitch (a bell's own B interval).

There is no registry: a new model is a new module plus instrument files naming it.
Models here: ``modal`` (bells, chimes), ``membrane`` (drums, 鼗), ``string`` (瑟),
``pipe`` (管), ``reed`` (笙), ``voice`` (singing, calls), ``sampler`` (recordings).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from soundscape.errors import InstrumentError, TuningError
from soundscape.music.tuning import Tuning, canonical_name, default_tuning

if TYPE_CHECKING:
    from soundscape.music.instruments import Instrument

__all__ = ["render_note"]


def render_note(instrument: Instrument, *, hz: float | None, velocity: float, duration: float,
                articulation: str, sample_rate: int, rng: np.random.Generator,
                lyric: str | None = None, pitch: str | None = None) -> np.ndarray:
    """Render one note of ``instrument`` with its model.

    Parameters
    ----------
    instrument : Instrument
        From ``soundscape.music.instruments.load_instrument``.
    hz : float > 0 or None, Hz
        The pitch (for a bell, its A-tone); None uses the instrument's ``default_hz``.
    velocity : float in (0, 1]
        Stroke, pluck, breath or voice strength.
    duration : float > 0, seconds
        How long the note is held; struck and plucked sounds ring on after it.
    articulation : str
        One of ``instrument.articulations``.
    sample_rate : int, Hz
    rng : numpy.random.Generator
        The only source of randomness (same seed, same samples).
    lyric : str or None
        The sung character, for voices.
    pitch : str or None
        The 律 name of the note (``清黃鍾``), which picks the member of a set that
        sounds it (a bell's own B interval). None: the 律 nearest to ``hz`` in the
        default tuning, which is right for that tuning only; callers using
        another tuning pass the name.

    Returns
    -------
    ndarray, shape (frames,), float64
    """
    from soundscape.music.instruments import model_module

    if articulation not in instrument.articulations:
        raise InstrumentError(
            f"{instrument.id}: articulation {articulation!r} not accepted; "
            f"accepted: {', '.join(instrument.articulations)}"
        )
    frequency = instrument.default_hz if hz is None else hz
    if frequency is None or not (frequency > 0 and np.isfinite(frequency)):
        raise InstrumentError(f"{instrument.id}: needs a pitch in Hz (got {hz!r}) and has no "
                              "default_hz")
    if not (0 < velocity <= 1) or not (duration > 0) or sample_rate <= 0:
        raise InstrumentError(
            f"{instrument.id}: velocity={velocity!r} must be in (0, 1], duration={duration!r} "
            f"> 0 s and sample_rate={sample_rate!r} > 0"
        )
    module = model_module(instrument.model)
    params = instrument.params
    if hasattr(module, "for_pitch"):
        params = module.for_pitch(params, _pitch_name(instrument, pitch, float(frequency)))
    return module.render(params, hz=float(frequency), velocity=float(velocity),
                         duration=float(duration), articulation=articulation,
                         sample_rate=int(sample_rate), rng=rng, lyric=lyric)


def _pitch_name(instrument: Instrument, pitch: str | None, hz: float) -> str:
    """The canonical name of the note's 律: as given, or nearest to ``hz`` by default."""
    if pitch is None:
        return _default_tuning().nearest(hz)[0].name
    try:
        return canonical_name(pitch)
    except TuningError as error:
        raise InstrumentError(f"{instrument.id}: pitch {pitch!r}: {error}") from None


@functools.cache
def _default_tuning() -> Tuning:
    return default_tuning()
