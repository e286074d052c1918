"""Sound models: one module per family, chosen by the instrument file's ``model``.

A model module ``soundscape.sound.synth.<name>`` exposes

- ``render(params, *, hz, velocity, duration, articulation, sample_rate, rng, lyric=None)
  -> ndarray (frames,)``: one note, mono float64, including its natural ring after
  ``duration``; peak ≤ 1 at velocity 1; a model whose ``render`` also takes
  ``performer`` (the voice) is given the performer's id;
- optionally ``validate(params)``, raising ``soundscape.sound.synth.params.ParamError`` with
  the bad key, run once when the instrument file is loaded;
- optionally ``prepare(params) -> params``, run once after validation (e.g. to decode
  sample files);
- optionally ``for_pitch(params, pitch_name, *, tuning, bells) -> params``, run for
  each note: the parameters of the member of a set that sounds that pitch (a bell's
  own B-tone in the tuning, and its tones in the chosen bell set);
- optionally ``WORKING_HZ``: the lowest sample rate its sound needs (it holds next to
  nothing above half of it); the renderer then makes, places and mixes its notes at
  that rate or a little more (``soundscape.sound.buses``). An instrument file's
  ``working_hz`` says the same of its own notes, and outranks the model's.

Whatever the model, ``render_note`` takes out what lies below hearing: a 20 Hz
high-pass (8th-order Butterworth) keeps every note free of DC and infrasound, so
no mix of strokes can pile them up. A model that sets ``INFRASOUND_FREE = True``
runs that same high-pass itself (``_common.infrasound_highpass``, folded into its
own filters to save a pass, as ``string``; or run only on a stroke's onset, its decaying
partials after it taken as the filter passes them, as ``modal``); ``render_note`` then
only keeps its peak ≤ 1.

There is no registry: a new model is a new module plus instrument files naming it.
Models here: ``modal`` (bells, chimes), ``membrane`` (drums, 鼗), ``string`` (瑟),
``pipe`` (管), ``reed`` (笙), ``voice`` (singing, calls), ``sampler`` (recordings).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from soundscape.errors import InstrumentError, ParamError, TuningError
from soundscape.music.instruments import frozen, thawed
from soundscape.music.tuning import Tuning, canonical_name, default_tuning
from soundscape.sound.synth._common import (
    INFRASOUND_HZ,
    abs_peak,
    infrasound_highpass,
    sosfilt,
    working_rate,
)
from soundscape.sound.synth.modal import BELL_SETS

if TYPE_CHECKING:
    from soundscape.music.instruments import Instrument

__all__ = ["BELL_SETS", "INFRASOUND_HZ", "bell_tones", "made_at", "model_module", "models",
           "params_of", "render_note", "takes_place", "without_infrasound"]

def render_note(instrument: Instrument, *, hz: float | None, velocity: float, duration: float,
                articulation: str, sample_rate: int, rng: np.random.Generator,
                lyric: str | None = None, pitch: str | None = None,
                tuning: Tuning | None = None, bells: str = "ideal",
                performer: str | None = None,
                place: tuple[float, ...] | None = None) -> np.ndarray:
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
        One of ``instrument.articulations``; for two-tone bells ``side`` sounds ``hz``
        (``pitch``) as the B-tone (側鼓) of the bell whose B-tone it is.
    sample_rate : int, Hz
    rng : numpy.random.Generator
        The only source of randomness (same seed, same samples).
    lyric : str or None
        The sung character, for voices.
    pitch : str or None
        The 律 name of the note (``清黃鍾``), which picks the member of a set that
        sounds it (a bell's own B interval). None: the 律 nearest to ``hz`` in
        ``tuning``.
    tuning : Tuning or None
        The tuning the set plays in (a bell's B-tone is a 律 of it); None: the
        default tuning (三分損益: the intervals are the same for any 黃鍾).
    bells : str
        ``ideal`` (every tone on the tuning) or ``zeng`` (each bell's tones moved as
        Braun measured the Marquis Yi of Zeng bells); sets without that data ignore it.
    performer : str or None
        Who plays or sings (a performer id): passed to models that take it (each
        singer's own voice); the others ignore it.
    place : (u, v) in [0, 1)², (u, v, count, wander), or None
        Where a stroke lands in its player's sequence (``membrane.strike_places``), and
        with which hand and at what wander of the head (``membrane.stroke_course``), for
        the models that take it (``takes_place``); the others ignore it. None: drawn.

    Returns
    -------
    ndarray, shape (frames,), float64
    """
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
    if bells not in BELL_SETS:
        raise InstrumentError(f"{instrument.id}: bells={bells!r} not accepted; accepted: "
                              f"{', '.join(BELL_SETS)}")
    module = _module_of(instrument)
    if articulation == "side":  # the note's pitch as the B-tone of the bell that has it
        frequency, pitch, articulation = _side_stroke(instrument, module, float(frequency),
                                                      pitch, tuning or _default_tuning())
    params = _params_for(instrument, module, hz=float(frequency), pitch=pitch,
                         tuning=tuning or _default_tuning(), bells=bells)
    who: dict[str, object] = {"performer": performer} if _takes_performer(module) else {}
    if place is not None and takes_place(module):
        who["place"] = place
    audio = module.render(params, hz=float(frequency), velocity=float(velocity),
                          duration=float(duration), articulation=articulation,
                          sample_rate=int(sample_rate), rng=rng, lyric=lyric, **who)
    if getattr(module, "INFRASOUND_FREE", False):
        return _within_unit(audio)
    return without_infrasound(audio, int(sample_rate))


def model_module(name: str) -> ModuleType:
    """The synthesis module ``soundscape.sound.synth.<name>``; InstrumentError if there is none
    (an instrument file names its model; the models live here, so the lookup does too)."""
    if not name.isidentifier() or name.startswith("_") or name == "params" \
            or importlib.util.find_spec(f"soundscape.sound.synth.{name}") is None:
        raise InstrumentError(f"model {name!r} has no module soundscape.sound.synth.{name}; "
                              f"accepted: {', '.join(models())}")
    module = importlib.import_module(f"soundscape.sound.synth.{name}")
    if not callable(getattr(module, "render", None)):
        raise InstrumentError(f"model module soundscape.sound.synth.{name} has no render "
                              f"function; accepted: {', '.join(models())}")
    return module


@functools.cache
def models() -> tuple[str, ...]:
    """The models an instrument file may name: the modules here with a ``render`` (a
    model added as code only has no schema, so ``known_models`` may not list it)."""
    import pkgutil

    names = [m.name for m in pkgutil.iter_modules(__path__)
             if not m.name.startswith("_") and m.name != "params"]
    return tuple(name for name in names  # helper modules (klatt, glottal) render no note
                 if callable(getattr(importlib.import_module(f"{__name__}.{name}"), "render",
                                     None)))


def _module_of(instrument: Instrument) -> ModuleType:
    """``model_module`` of the instrument's model, an error naming its file."""
    try:
        return model_module(instrument.model)
    except InstrumentError as error:
        raise InstrumentError(f"{instrument.path}: model = {instrument.model!r}: {error}"
                              ) from None


def params_of(instrument: Instrument) -> Mapping[str, Any]:
    """The instrument's model parameters, validated and prepared by its model on first use
    (kept in the instrument).

    Raises
    ------
    InstrumentError
        ``FILE: params.KEY …`` when the model's own checks refuse them.
    """
    if not instrument.prepared:
        module = _module_of(instrument)
        params = thawed(instrument.raw_params)
        try:
            if hasattr(module, "validate"):
                module.validate(params)
            if hasattr(module, "prepare"):
                params = module.prepare(params)
        except ParamError as error:
            raise InstrumentError(f"{instrument.path}: params.{error.key} {error.message}"
                                  ) from None
        instrument.prepared.append(frozen(params))
    return instrument.prepared[0]


def made_at(instrument: Instrument, sample_rate: int) -> int:
    """The rate ``instrument``'s notes are made at for output at ``sample_rate``: the lowest
    whole fraction of it still at the instrument file's ``working_hz``, else its model's
    ``WORKING_HZ`` (``sample_rate`` if neither says), or at what a model whose rate follows
    its parameters asks of them (``least_hz(params)``: the bed's bands), if more."""
    module = model_module(instrument.model)
    least = instrument.working_hz or getattr(module, "WORKING_HZ", None)
    if least is not None and hasattr(module, "least_hz"):
        least = max(least, module.least_hz(params_of(instrument)))
    return sample_rate if least is None else working_rate(sample_rate, least)[0]


@functools.cache
def _takes_performer(module: ModuleType) -> bool:
    return "performer" in inspect.signature(module.render).parameters


@functools.cache
def takes_place(module: ModuleType) -> bool:
    """Whether a model places its strokes by a sequence (``render(..., place=)``)."""
    return "place" in inspect.signature(module.render).parameters


def bell_tones(instrument: Instrument, *, hz: float, pitch: str | None = None,
               tuning: Tuning | None = None, bells: str = "ideal") -> tuple[float, float]:
    """The A-tone and B-tone (Hz) a bell of ``instrument`` sounds for a note at ``hz``.

    For the MIDI writer and the tests: the same arithmetic ``render_note`` uses
    (``pitch``, ``tuning`` and ``bells`` as there). An instrument without a B-tone
    gives its A-tone twice.
    """
    module = model_module(instrument.model)
    params = _params_for(instrument, module, hz=hz, pitch=pitch,
                         tuning=tuning or _default_tuning(), bells=bells)
    a_hz = hz * params.get("detune", 1.0)
    return a_hz, a_hz * params.get("b_ratio", 1.0)


def _params_for(instrument: Instrument, module: ModuleType, *, hz: float, pitch: str | None,
                tuning: Tuning, bells: str) -> Mapping[str, Any]:
    """The parameters of the member of the set that sounds the note."""
    if not hasattr(module, "for_pitch"):
        return params_of(instrument)
    return module.for_pitch(params_of(instrument), _pitch_name(instrument, pitch, hz, tuning),
                            tuning=tuning, bells=bells)


def _side_stroke(instrument: Instrument, module: ModuleType, hz: float, pitch: str | None,
                 tuning: Tuning) -> tuple[float, str, str]:
    """A ``side`` stroke as the ``B`` stroke of the bell whose B-tone is the note: that
    bell's A-tone (Hz, in the note's tuning and octave), its 律 name, and ``B``."""
    name = _pitch_name(instrument, pitch, hz, tuning)
    finder = getattr(module, "side_bell", None)
    bell = None if finder is None else finder(params_of(instrument), name, tuning=tuning)
    if bell is None:
        raise InstrumentError(f"{instrument.id}: no bell of the set has {name} as its B-tone "
                              "(側鼓); a side stroke needs one (b_steps)")
    return hz * tuning.pitch(bell).hz / tuning.pitch(name).hz, bell, "B"


def without_infrasound(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """The note high-passed at ``INFRASOUND_HZ`` (its peak kept within the ≤ 1 contract)."""
    return _within_unit(sosfilt(infrasound_highpass(sample_rate), audio))


def _within_unit(audio: np.ndarray) -> np.ndarray:
    """``audio`` scaled down to a peak of 1 if it goes over."""
    top = abs_peak(audio)  # one pass (BLAS), not max and min
    return audio / top if top > 1.0 else audio


def _pitch_name(instrument: Instrument, pitch: str | None, hz: float, tuning: Tuning) -> str:
    """The canonical name of the note's 律: as given, or nearest to ``hz`` in ``tuning``."""
    if pitch is None:
        return tuning.nearest(hz)[0].name
    try:
        return canonical_name(pitch)
    except TuningError as error:
        raise InstrumentError(f"{instrument.id}: pitch {pitch!r}: {error}") from None


@functools.cache
def _default_tuning() -> Tuning:
    return default_tuning()
