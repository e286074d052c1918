"""The notes' cheaper paths give the samples of the plain ones: band-passes run only where
bursts sound, Clenshaw's harmonic sum, the ramps-only attack-release envelope, the floor's
ringing added per footfall."""

import math

import numpy as np
import pytest
from scipy import signal

from soundscape.sound.synth import _common, footstep
from soundscape.sound.synth._common import (
    attack_release,
    bandpass_sos,
    harmonic_tones,
    ring_frames,
    sosfilt,
    sosfilt_spans,
)


def _bursts(frames: int, starts: np.ndarray, width: int, seed: int) -> np.ndarray:
    x = np.zeros(frames)
    rng = np.random.default_rng(seed)
    for start in starts:
        n = min(width, frames - start)
        x[start:start + n] += rng.uniform(-1.0, 1.0, n)
    return x


@pytest.mark.parametrize(("low", "high"), [(50.0, 400.0), (800.0, 6000.0), (2000.0, 9000.0)])
def test_sosfilt_spans_is_sosfilt_to_its_rings_remainder(low, high):
    """Footfalls 0.3-0.7 s apart, some overlapping, one at the very end: the same samples as
    the whole signal filtered, to 1e-9 of the bursts' level (−180 dB), the first run to the
    bit; and silence where the ring is over."""
    rate, width = 48000, 4320
    sos = bandpass_sos(low, high, rate)
    starts = np.array([0, 2000, 30000, 60000, 61000, 100000, 143000])
    x = _bursts(144000, starts, width, 1)
    whole, spans = sosfilt(sos, x), sosfilt_spans(sos, x, starts, width)
    assert np.max(np.abs(spans - whole)) < 1e-9
    first = 2000 + width + ring_frames(sos)
    assert spans[:first].tobytes() == whole[:first].tobytes()
    assert not np.any(spans[first:30000])  # between the runs: silence
    assert np.abs(whole[first:30000]).max() < 1e-9  # where the whole filter has only its ring


def test_ring_frames_is_where_the_slowest_pole_has_decayed_by_180_db():
    """A resonator of radius r: ln(1e-9) / ln(r) samples; the impulse response is below
    1e-9 of the envelope it starts at from there on (its peak comes within 2 % of that
    envelope: it decays by 2 % in ~20 samples)."""
    radius = 0.999
    sos = np.array([[1.0, 0.0, 0.0, 1.0, -2.0 * radius * math.cos(0.1), radius * radius]])
    assert ring_frames(sos) == math.ceil(math.log(1e-9) / math.log(radius))
    impulse = np.zeros(30000)
    impulse[0] = 1.0
    response = np.abs(signal.sosfilt(sos, impulse))
    assert response[ring_frames(sos):].max() < 1.02e-9 * response.max()
    with pytest.raises(ValueError, match="never stop"):
        ring_frames(np.array([[1.0, 0.0, 0.0, 1.0, -2.0, 1.0]]))


def test_harmonic_tones_are_the_sum_of_sines_of_the_phase():
    """Clenshaw's sum against Σ a_k sin(k φ) sine by sine, on a gliding fundamental, to
    1e-11 of the amplitudes' sum (k φ itself is rounded by ~1e-16 of up to 3e5 rad);
    harmonics at or over 0.45 × rate at the track's top are left out."""
    rate = 48000
    f0 = 440.0 * 2.0 ** (np.sin(np.linspace(0.0, 9.0, 60000)) / 12.0)
    amps = [np.array([1.0, 0.0, 0.4, 0.25, 0.1, 0.05, 0.02, 0.01, 0.5, 0.5, 0.5, 0.5, 0.5,
                      0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                      0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                      0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]), np.linspace(1.0, 0.0, 50)]
    phase = 2.0 * np.pi * np.cumsum(f0) / rate
    phase -= phase[0]
    kept = [k for k in range(1, 51) if k * f0.max() < 0.45 * rate]
    assert 20 < len(kept) < 50  # the cut-off is exercised
    tones = harmonic_tones(f0, amps, sample_rate=rate)
    for tone, set_ in zip(tones, amps, strict=True):
        plain = sum(set_[k - 1] * np.sin(k * phase) for k in kept)
        assert np.max(np.abs(tone - plain)) < 1e-11 * np.sum(set_)


@pytest.mark.parametrize(("frames", "attack", "release", "hold"),
                         [(48000, 0.05, 0.2, 0.6), (48000, 0.3, 0.3, 0.1), (1000, 0.05, 0.2, 2.0),
                          (30000, 0.0101, 0.0333, 0.2501), (30000, 0.02, 0.5, 0.0)])
def test_attack_release_is_the_raised_cosines_over_the_whole_note_to_the_bit(
        frames, attack, release, hold):
    t = np.arange(frames) / 48000
    rise = np.clip(t / attack, 0.0, 1.0)
    fall = np.clip(1.0 - (t - hold) / release, 0.0, 1.0)
    plain = (0.5 - 0.5 * np.cos(np.pi * rise)) * (0.5 - 0.5 * np.cos(np.pi * fall))
    fast = attack_release(frames, attack_s=attack, release_s=release, hold_s=hold,
                          sample_rate=48000)
    assert fast.tobytes() == plain.tobytes()


def test_the_floor_rings_after_each_footfall_as_its_resonators_driven_by_the_walk():
    """One footfall's ringing added at each footfall is the modes' resonators run on the
    whole walk's drive (each footfall's push, a Hann pulse over the contact, and its
    release a sample later), to 1e-9 of its peak."""
    rate, hz, contact = 48000, 100.0, 0.001
    modes = np.array([[1.2, 0.12, 0.0], [2.1, 0.08, -4.0], [3.4, 0.06, -8.0], [5.3, 0.04, -12.0]])
    starts = np.array([0, 4320, 30000, 33000, 60000, 95900])
    gains = np.array([1.0, 0.5, 0.9, 0.45, 1.1, 0.7])
    frames = 96000
    push = np.hanning(round(contact * rate) + 2)[1:-1]
    drive = np.zeros(frames)
    for start, gain in zip(starts, gains, strict=True):
        drive[start:start + push.size] += gain * push / push.sum()
    drive = np.diff(drive, prepend=0.0)
    plain = np.zeros(frames)
    for ratio, t60, level in modes:
        unit = rate / (2.0 * np.pi * hz * ratio)
        plain += footstep._resonate(drive, hz * ratio, t60, rate) \
            * (_common.db_to_gain(level) * 0.3 * unit)
    floor = footstep._floor(modes, hz, rate, frames, contact)
    added = np.zeros(frames)
    for start, gain in zip(starts, gains, strict=True):
        n = min(floor.size, frames - start)
        added[start:start + n] += gain * floor[:n]
    assert np.max(np.abs(added - plain)) < 1e-9 * np.max(np.abs(plain))


def test_partials_through_the_high_pass_after_its_ring_are_the_high_passed_partials():
    """A bell's partials (some at 25-60 Hz, where the high-pass moves them most): filtered
    over the first second and taken from there as the filter passes them, against the
    whole note filtered: to 1e-7 of the peak (the partials' float32 block products round
    so, and the notes are kept in float32), the first second to the bit; without the
    gains the tail would be off by over 1 %."""
    rate, frames = 24000, 24000 * 6
    freqs = np.array([25.0, 60.0, 220.0, 523.0, 1180.0, 2600.0])
    amps = np.array([0.3, 0.5, 1.0, 0.6, 0.3, 0.1])
    t60s = np.array([8.0, 7.0, 6.0, 5.0, 4.5, 4.1])  # none cut (1.5 T60) within the note
    highpass = _common.infrasound_highpass(rate)
    switch = _common.block_after(ring_frames(highpass))
    plain = sosfilt(highpass, _common.damped_partials(freqs, amps, t60s, frames=frames,
                                                      sample_rate=rate))
    fast = _common.damped_partials(freqs, amps, t60s, frames=frames, sample_rate=rate,
                                   through=(highpass, switch))
    fast[:switch] = sosfilt(highpass, fast[:switch])
    peak = np.max(np.abs(plain))
    assert np.max(np.abs(fast - plain)) < 1e-7 * peak
    assert fast[:switch].tobytes() == plain[:switch].tobytes()
    unfiltered = _common.damped_partials(freqs, amps, t60s, frames=frames, sample_rate=rate)
    assert np.max(np.abs(unfiltered[switch:] - plain[switch:])) > 1e-2 * peak


def test_steady_gains_are_the_filters_response_at_the_poles():
    """On the unit circle, H(e^{iω}) as scipy's sosfreqz gives it."""
    sos = _common.infrasound_highpass(48000)
    w = np.array([0.001, 0.01, 0.3])
    _, expected = signal.sosfreqz(sos, worN=w)
    assert np.allclose(_common.steady_gains(sos, np.exp(1j * w)), expected, rtol=1e-9)


def test_abs_peak_is_numpys_largest_magnitude_to_the_bit():
    """One BLAS pass gives np.max(np.abs(x)) exactly, a negative peak too; a NaN or an
    infinity takes numpy's way (NaN, inf), as the models' old peaks did."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(75001)
    x[40000] = -7.5
    assert _common.abs_peak(x) == float(np.max(np.abs(x))) == 7.5
    assert _common.abs_peak(x[::2]) == float(np.max(np.abs(x[::2])))  # strided: numpy's way
    x[10] = np.nan
    assert math.isnan(_common.abs_peak(x))
    x[10] = -np.inf
    assert _common.abs_peak(x) == math.inf


def test_glide_clock_and_cubic_are_the_plain_expressions_to_the_bit():
    """The in-place clock (exponential only over the glide's 40 time constants) and the
    in-place four-point read give the bytes of their plain numpy expressions."""
    rate, glide, glide_s = 12000, 0.05, 0.1
    t = _common.sample_times(60000, rate)
    lead_s = glide * glide_s
    plain = t + lead_s * (1.0 - np.exp(-t / glide_s))
    bent = math.ceil(_common._SETTLED_TAUS * glide_s * rate)
    plain[bent:] = t[bent:] + lead_s  # 1 − e^(−t/τ) is 1.0 there
    assert np.all(1.0 - np.exp(-t[bent:] / glide_s) == 1.0)
    for frames in (60000, 30000, 100):
        clock, at = _common._clock(t, frames, glide, glide_s, rate)
        assert clock.tobytes() == plain[:frames].tobytes()
        assert at.tobytes() == (plain[:frames] * rate).tobytes()
    grid = np.random.default_rng(4).standard_normal(70000)
    where = plain * rate + 1.0
    i = where.astype(int)
    x = where - i
    a, b, c = x + 1.0, x - 1.0, x - 2.0
    expected = grid[i - 1] * (-x * b * c / 6.0) + grid[i] * (a * b * c / 2.0) \
        + grid[i + 1] * (-a * x * c / 2.0) + grid[i + 2] * (a * x * b / 6.0)
    assert _common._cubic(grid, where).tobytes() == expected.tobytes()
