"""The one error hierarchy of the package.

Every error a user can cause names where (file and line, or key), the bad
value, and what would be accepted. Each class also subclasses ``ValueError`` so
callers that only know the standard library can still catch it.
"""

from __future__ import annotations

__all__ = [
    "ArcheryError",
    "CueSheetError",
    "InstrumentError",
    "PerformanceError",
    "RenderError",
    "RepertoireError",
    "SiteError",
    "SoundscapeError",
    "TextError",
    "TuningError",
]


class SoundscapeError(ValueError):
    """Base class of every error this package raises on bad input."""


class TextError(SoundscapeError):
    """A source text that cannot be read or holds nothing usable."""


class CueSheetError(SoundscapeError):
    """A cue sheet that does not validate: ``FILE:LINE: what, bad value, accepted``."""


class SiteError(SoundscapeError):
    """A site or override file with an unknown place, missing unit or impossible position."""


class TuningError(SoundscapeError):
    """An unknown 律 name, a bad tuning table or reference pitch."""


class InstrumentError(SoundscapeError):
    """An instrument file that does not validate."""


class RepertoireError(SoundscapeError):
    """A piece file that does not validate, or an unknown piece."""


class ArcheryError(SoundscapeError):
    """Bad archery configuration or inputs (a data file, a roster, the 節 times)."""


class PerformanceError(SoundscapeError):
    """A Performance that cannot be built or read back."""


class RenderError(SoundscapeError):
    """Bad render options (layout, format, listener, sample rate …)."""


class ParamError(ValueError):
    """A bad model parameter, raised by a sound model's ``validate(params)``;
    ``soundscape.music.instruments`` turns it into an ``InstrumentError`` naming the file.

    Parameters
    ----------
    key : str
        Dotted path inside ``[params]``, e.g. ``partials[2].ratio``.
    message : str
        What is wrong and what is accepted, e.g. ``= -3 must lie in [0.01, 100]``.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key} {message}")
        self.key = key
        self.message = message
