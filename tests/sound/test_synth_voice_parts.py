"""The voice's parts: Klatt's cascade filtered block by block, and the KLGLOTT88 source."""

import numpy as np
import pytest

from soundscape.sound import iir
from soundscape.sound.synth import glottal
from soundscape.sound.synth.klatt import cascade, resonator


def direct_cascade(x, poles, zero, hop, rate):
    """Klatt's difference equations sample by sample (the reference)."""
    def coefficients(table, n):
        return resonator(*table[min(n // hop, table.shape[0] - 1)], rate)

    out = np.zeros_like(x)
    for n in range(x.size):  # the antiresonator: x = (y - B y[n-1] - C y[n-2]) / A
        a, b, c = coefficients(zero, n)
        out[n] = (x[n] - b * (x[n - 1] if n else 0) - c * (x[n - 2] if n > 1 else 0)) / a
    for r in range(poles.shape[1]):
        signal, out = out, np.zeros_like(x)
        for n in range(x.size):
            a, b, c = coefficients(poles[:, r], n)
            out[n] = a * signal[n] + b * (out[n - 1] if n else 0) \
                + c * (out[n - 2] if n > 1 else 0)
    return out


@pytest.mark.parametrize("scipy_core", [True, False])
def test_block_cascade_is_klatts_recursion_across_changing_frames(scipy_core, monkeypatch):
    """Through scipy's section loop, and through the public sosfilt (a scipy without it)."""
    if not scipy_core:
        monkeypatch.setattr(iir, "_sosfilt", None)
    rate, hop = 8000, 40
    x = np.random.default_rng(0).standard_normal((2, 800))
    frames = 20
    poles = np.tile([[650.0, 80.0], [1080.0, 90.0], [2650.0, 120.0], [270.0, 100.0]],
                    (frames, 1, 1))
    poles[8:, 0, 0], poles[9:, 1, 0], poles[12:, 0, 0] = 300.0, 2000.0, 400.0
    zero = np.tile([270.0, 100.0], (frames, 1))
    zero[10:] = [1000.0, 100.0]
    out = cascade(x, poles, zero, hop=hop, sample_rate=rate)
    for row in range(2):
        want = direct_cascade(x[row], poles, zero, hop, rate)
        assert np.max(np.abs(out[row] - want)) < 1e-9 * np.max(np.abs(want))


def test_a_resonator_peaks_at_its_frequency_with_unity_gain_at_zero():
    a, b, c = resonator(1000.0, 100.0, 16000)
    w = 2 * np.pi * np.array([0.0, 1000.0, 3000.0]) / 16000
    z = np.exp(-1j * w)
    gain = np.abs(a / (1 - b * z - c * z * z))
    assert abs(gain[0] - 1.0) < 1e-12 and gain[1] > 5 * gain[2] and gain[1] > 5.0


def test_klglott88_pulses_close_and_rest():
    """Each period: open for the open quotient (the flow derivative 2x − 3x² ends at −1),
    closed (zero) for the rest; jitter moves the periods by about its percentage."""
    rate, f0 = 48000, 100.0
    voicing, breath = glottal.source(np.full(rate, f0), open_quotient=0.6, tilt_db=0.0,
                                     jitter_percent=0.0, shimmer_db=0.0, sample_rate=rate,
                                     rng=np.random.default_rng(0))
    period = voicing[4800:5280]  # one period of 480 samples
    closed = np.count_nonzero(np.abs(period) < 1e-12) / period.size
    assert abs(closed - 0.4) < 0.01
    assert abs(np.sqrt(np.mean(voicing ** 2)) - 1.0) < 0.02
    assert abs(np.std(breath) - 1.0) < 0.05
    jittered, _ = glottal.source(np.full(rate, f0), open_quotient=0.6, tilt_db=0.0,
                                 jitter_percent=1.0, shimmer_db=0.0, sample_rate=rate,
                                 rng=np.random.default_rng(0))
    closures = np.flatnonzero((jittered[:-1] < -0.5) & (jittered[1:] == 0.0))
    lengths = np.diff(closures) / rate * f0
    assert 0.005 < np.std(lengths) < 0.02


def _excess_kurtosis(x):
    x = x - np.mean(x)
    return float(np.mean(x ** 4) / np.mean(x ** 2) ** 2 - 3.0)


def test_white_noise_is_flat_at_unit_level_and_gaussian_through_a_formant():
    """The breath's noise (uniform samples, cheaper than normal ones): variance 1, a flat
    spectrum (each eighth of the band within 0.3 dB of the whole), and through one of the
    tract's resonators as Gaussian as a normal draw is (excess kurtosis within 0.05 of 0;
    the raw uniform samples' is -1.2)."""
    from scipy import signal

    rate, n = 24000, 1 << 19
    noise = glottal.white(np.random.default_rng(5), n)
    assert abs(np.var(noise) - 1.0) < 0.01 and abs(np.mean(noise)) < 0.01
    assert _excess_kurtosis(noise) < -1.1
    _, psd = signal.welch(noise, fs=rate, nperseg=1024)
    bands = 10 * np.log10([np.mean(b) for b in np.array_split(psd[1:-1], 8)] / np.mean(psd))
    assert np.max(np.abs(bands)) < 0.3
    a, b, c = resonator(700.0, 80.0, rate)  # F1 of [a] with its bandwidth
    through = signal.lfilter([a], [1.0, -b, -c], noise)[4096:]
    assert abs(_excess_kurtosis(through)) < 0.05
    filled = np.empty(1000)
    assert glottal.white(np.random.default_rng(5), out=filled) is filled
    assert filled.tobytes() == noise[:1000].tobytes()
    assert abs(np.std(glottal.white(np.random.default_rng(6), n, scale=0.3)) - 0.3) < 0.003


def test_tilt_is_the_stated_loss_at_3_khz():
    rate = 48000
    tone = np.sin(2 * np.pi * 3000 * np.arange(rate) / rate)
    tilted = glottal.tilt(tone, 12.0, rate)[rate // 2:]
    assert abs(20 * np.log10(np.std(tilted) / np.std(tone[rate // 2:])) + 12.0) < 0.1


def klglott88_as_first_written(f0, *, open_quotient, tilt_db, jitter_percent, shimmer_db,
                               sample_rate, rng):
    """The source as written before it was made in place (np.modf, gathers per sample;
    the breath's noise drawn as ``white`` draws it since)."""
    first = np.cumsum(f0) / sample_rate
    periods = int(first[-1]) + 2
    jitter = 1.0 + rng.normal(0.0, jitter_percent / 100.0, periods)
    shimmer = 10.0 ** (rng.normal(0.0, shimmer_db, periods) / 20.0)
    running = np.cumsum(f0 / jitter[first.astype(int)]) / sample_rate
    within, count = np.modf(running)
    index = np.minimum(count.astype(int), periods - 1)
    x = within / open_quotient
    is_open = x < 1.0
    flow = np.where(is_open, 2.0 * x - 3.0 * x * x, 0.0) * shimmer[index]
    voicing = glottal.tilt(flow, tilt_db, sample_rate) / np.sqrt(2.0 / 15.0 * open_quotient)
    breath = glottal.white(rng, f0.size, scale=1.0 / np.sqrt(open_quotient + 0.25 * (
        1.0 - open_quotient))) * np.where(is_open, 1.0, 0.5)
    return voicing, breath


@pytest.mark.parametrize("tilt_db", [0.0, 12.0])
def test_the_source_in_place_is_the_same_bytes_as_first_written(tilt_db):
    """A gliding, vibrato f0 with jitter and shimmer: every sample to the bit (x − ⌊x⌋ is
    np.modf's fraction; np.repeat per period is the per-sample gather)."""
    rate = 24000
    t = np.arange(rate * 2) / rate
    f0 = 180.0 * 2.0 ** ((300.0 * t + 40.0 * np.sin(2 * np.pi * 5.5 * t)) / 1200.0)
    kw = dict(open_quotient=0.62, tilt_db=tilt_db, jitter_percent=1.0, shimmer_db=0.4,
              sample_rate=rate)
    now = glottal.source(f0, rng=np.random.default_rng(7), **kw)
    then = klglott88_as_first_written(f0, rng=np.random.default_rng(7), **kw)
    for a, b in zip(now, then, strict=True):
        assert a.tobytes() == b.tobytes()


def test_the_cascade_in_place_is_the_cascade_on_a_copy():
    """overwrite=True filters the caller's array and gives the same samples."""
    rate, hop = 8000, 40
    x = np.random.default_rng(1).standard_normal(800)
    poles = np.tile([[650.0, 80.0], [1080.0, 90.0], [270.0, 100.0]], (20, 1, 1))
    poles[8:, 0, 0] = 300.0
    zero = np.tile([270.0, 100.0], (20, 1))
    kept = x.copy()
    copied = cascade(x, poles, zero, hop=hop, sample_rate=rate)
    assert x.tobytes() == kept.tobytes()  # not touched without overwrite
    done = cascade(x, poles, zero, hop=hop, sample_rate=rate, overwrite=True)
    assert done.tobytes() == copied.tobytes() and np.shares_memory(done, x)
