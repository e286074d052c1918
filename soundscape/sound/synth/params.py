"""The error a model's ``validate(params)`` raises: which key, and what is wrong.

It lives with the other errors (``soundscape.errors.ParamError``), so that loading an
instrument file needs no sound code; models import it from here.
"""

from __future__ import annotations

from soundscape.errors import ParamError

__all__ = ["ParamError"]
