import itertools

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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("first", [1, 700, 4800, 9000])
def test_hop_squares_are_sosfilts_output_squared_and_summed_per_stretch(dtype, first):
    """Columns picked out of a block, each plus the guard, filtered side by side: the
    state is sosfilt's to the bit, and each stretch's sum of squares is sosfilt's output's
    (the first ``first`` frames, then every 4800, the last one short)."""
    sos = k_weighting(48000)
    rng = np.random.default_rng(3)
    block = rng.standard_normal((9 * 4800 + 333, 5)).astype(dtype)
    columns = np.array([4, 0, 2])
    guard = np.where(np.arange(len(block)) % 2, -1e-20, 1e-20)
    start = rng.standard_normal((len(columns), len(sos), 2)) * 1e-3
    rows = block[:, columns].T.astype(np.float64) + guard
    want, want_state = signal.sosfilt(sos, rows, axis=1, zi=np.moveaxis(start, 1, 0))
    state = np.ascontiguousarray(start.transpose(1, 2, 0))
    sums = iir.sos_hop_squares(sos, block, columns, guard, state, first, 4800)
    edges = [0, *range(first, len(block), 4800), len(block)]
    assert len(sums) == len(edges) - 1
    for row, (a, b) in zip(sums, itertools.pairwise(edges), strict=True):
        np.testing.assert_allclose(row, np.sum(want[:, a:b] ** 2, axis=1), rtol=1e-12)
    assert np.array_equal(state, np.moveaxis(want_state, 0, 1).transpose(1, 2, 0))
