import numpy as np
import pytest
from scipy import signal

from soundscape.sound import iir
from soundscape.sound.loudness import k_weighting


@pytest.mark.parametrize("scipy_core", [True, False])
def test_sosfilt_rows_is_scipys_sosfilt_carried_across_calls(scipy_core, monkeypatch):
    """Through scipy's section loop, and through the public sosfilt (a scipy without it);
    filtering in two calls, state carried, equals one call."""
    if not scipy_core:
        monkeypatch.setattr(iir, "_sosfilt", None)
    sos = k_weighting(48000)
    x = np.random.default_rng(1).standard_normal((3, 5000))
    want = signal.sosfilt(sos, x, axis=1)
    state = np.zeros((3, len(sos), 2))
    head, state = iir.sosfilt_rows(sos, x[:, :1234], state)
    tail, state = iir.sosfilt_rows(sos, x[:, 1234:].copy(), state, overwrite=True)
    assert np.max(np.abs(np.hstack([head, tail]) - want)) < 1e-12 * np.max(np.abs(want))


def test_sosfilt_rows_leaves_its_input_alone_unless_told():
    x = np.random.default_rng(2).standard_normal((2, 300))
    kept = x.copy()
    iir.sosfilt_rows(k_weighting(48000), x, np.zeros((2, 2, 2)))
    assert np.array_equal(x, kept)
    y, _ = iir.sosfilt_rows(k_weighting(48000), x, np.zeros((2, 2, 2)), overwrite=True)
    assert y is x
