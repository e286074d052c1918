"""Second-order sections run on many short calls: scipy's own loop, without its checks.

``scipy.signal.sosfilt`` spends ~0.1 ms a call on checks, axis moves and copies: ten
times the filtering of a short run, and half the time of a one-second K-weighting
block. Its C loop (``scipy.signal._sosfilt._sosfilt``: in place on C-contiguous
float64 rows) is called directly when this scipy has it; otherwise the public call.
"""

from __future__ import annotations

import numpy as np
from scipy import signal

try:
    from scipy.signal._sosfilt import _sosfilt
except ImportError:  # pragma: no cover - depends on the installed scipy
    _sosfilt = None  # type: ignore[assignment, unused-ignore]  # a scipy without it: the public call

__all__ = ["sosfilt_rows", "sosfilt_within"]


def sosfilt_rows(sos: np.ndarray, x: np.ndarray, zi: np.ndarray, *, overwrite: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``x`` (signals, n) through ``sos`` (sections, 6) from states ``zi``
    (signals, sections, 2); returns the output and the final states.

    With ``overwrite`` a C-contiguous float64 ``x`` is filtered in place (and returned).
    """
    if _sosfilt is None:
        y, final = signal.sosfilt(sos, x, axis=-1, zi=np.moveaxis(zi, 1, 0))
        return y, np.moveaxis(final, 0, 1)
    y = x if overwrite and x.dtype == np.float64 and x.flags.c_contiguous else \
        np.array(x, dtype=np.float64, order="C")
    state = np.array(zi, dtype=np.float64, order="C")
    _sosfilt(np.ascontiguousarray(sos, dtype=np.float64), y, state)
    return y, state


def sosfilt_within(sos: np.ndarray, x: np.ndarray, state: np.ndarray) -> None:
    """``sosfilt_rows(sos, x, state, overwrite=True)`` with the output in ``x`` and the
    final states in ``state``: all three C-contiguous float64 (not checked), no copies —
    for loops of many short runs."""
    if _sosfilt is None:
        y, final = sosfilt_rows(sos, x, state)
        x[...], state[...] = y, final
        return
    _sosfilt(sos, x, state)
