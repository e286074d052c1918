"""The error a model's ``validate(params)`` raises: which key, and what is wrong.

``soundscape.music.instruments`` turns it into an ``InstrumentError`` naming the file.
"""

from __future__ import annotations

__all__ = ["ParamError"]


class ParamError(ValueError):
    """A bad model parameter.

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
