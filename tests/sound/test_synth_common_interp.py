"""interp_knots and sample_times: np.interp's values and np.arange(n) / rate's, to the bit."""

import numpy as np
import pytest

from soundscape.sound.synth._common import interp_knots, sample_times


@pytest.mark.parametrize(("rate", "hop", "divided"), [(24000, 24, True), (24000, 240, False),
                                                      (16000, 160, False), (48000, 48, True)])
def test_interp_knots_is_np_interp_to_the_bit(rate, hop, divided):
    """Knots made as the voice makes them (arange / knot rate, or arange · step): tracks
    with flat runs, ramps, signed zeros, fewer and more knots than the samples need."""
    rng = np.random.default_rng(hop)
    for frames in (1, hop - 1, hop, 5 * hop + 1, 20000):
        for extra in (-2, 0, 3):
            count = max(1, -(-frames // hop) + extra)
            xp = np.arange(count) / (rate / hop) if divided else np.arange(count) * (hop / rate)
            fp = np.where(rng.random(count) < 0.3, rng.standard_normal(count),
                          np.where(rng.random(count) < 0.5, -0.0, 1.0))
            x = np.arange(frames) / rate
            assert interp_knots(x, xp, fp, hop).tobytes() == np.interp(x, xp, fp).tobytes()


def test_interp_knots_falls_back_when_the_knots_are_not_every_hop():
    """A frame of 5 ms at 22.05 kHz is 110.25 samples: the knots drift off the blocks."""
    rate, step = 22050, 0.005
    xp = np.arange(400) * step
    fp = np.random.default_rng(2).standard_normal(xp.size)
    x = np.arange(rate * 2) / rate
    assert interp_knots(x, xp, fp, round(step * rate)).tobytes() == \
        np.interp(x, xp, fp).tobytes()


def test_sample_times_are_arange_over_rate_and_read_only():
    short, long = sample_times(100, 24000), sample_times(50000, 24000)
    assert short.tobytes() == (np.arange(100) / 24000).tobytes()
    assert long.tobytes() == (np.arange(50000) / 24000).tobytes()
    assert sample_times(100, 24000).tobytes() == short.tobytes()
    with pytest.raises(ValueError):
        long[0] = 1.0
