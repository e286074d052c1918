"""Streaming loudness meter against pyloudnorm; true-peak limiter; loudness of rendered files."""

from __future__ import annotations

import numpy as np
import pyloudnorm
import pytest
import soundfile
from scipy import signal
from scipy.ndimage import maximum_filter1d, minimum_filter1d, uniform_filter1d

from soundscape.music.instruments import load_instrument
from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import Listener
from soundscape.sound import loudness
from soundscape.sound.loudness import (
    Downmix,
    LoudnessMeter,
    TruePeakLimiter,
    TruePeakMeter,
    k_weighting,
    true_peak_envelope,
)
from soundscape.sound.render import render_audio
from soundscape.sound.synth import render_note

FS = 48000
# pyloudnorm's RLB high-pass has the numerator 0.99504·(1, −2, 1) where BS.1770-4 Table 2
# has (1, −2, 1): it reads 20·log10(0.99504) = 0.043 LU under the standard.
PYLOUDNORM_UNDER_LU = 0.043


def pyloudnorm_lufs(x, rate=FS):
    """pyloudnorm's public reading, brought onto the standard's filter."""
    return pyloudnorm.Meter(rate).integrated_loudness(x) + PYLOUDNORM_UNDER_LU


def varied_signal(seconds=9, channels=2, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 0.1, (FS * seconds, channels))
    x[FS * 4:FS * 6] *= 0.05  # a quiet stretch the relative gate drops
    x[FS * 8:] = 0.0  # silence the absolute gate drops
    return x * np.linspace(0.5, 1.5, len(x))[:, None]


@pytest.mark.parametrize("block", [1000, 4800, 77777])
def test_streaming_meter_equals_pyloudnorm(block):
    x = varied_signal()
    meter = LoudnessMeter(FS, [1.0, 1.0])
    for i in range(0, len(x), block):
        meter.add(x[i:i + block])
    assert meter.integrated() == pytest.approx(pyloudnorm_lufs(x), abs=0.005)


def test_surround_weights_and_unweighted_channels():
    x = varied_signal(channels=5)
    meter = LoudnessMeter(FS, [1.0, 1.0, 1.0, 1.41, 1.41])
    meter.add(x)
    assert meter.integrated() == pytest.approx(pyloudnorm_lufs(x), abs=0.005)
    w_only = LoudnessMeter(FS, [1.0, 0.0, 0.0, 0.0, 0.0])
    w_only.add(x)
    assert w_only.integrated() == pytest.approx(pyloudnorm_lufs(x[:, 0]), abs=0.005)


def test_k_weighting_is_the_standards_at_48k():
    table = [[1.53512485958697, -2.69169618940638, 1.19839281085285,
              1.0, -1.69065929318241, 0.73248077421585],  # BS.1770-4 Table 1
             [1.0, -2.0, 1.0, 1.0, -1.99004745483398, 0.99007225036621]]  # Table 2
    assert np.abs(k_weighting(48000) - table).max() < 1e-12


@pytest.mark.parametrize("rate", [44100, 48000, 96000])
def test_997_hz_at_minus_23_dbfs_reads_minus_23_lufs(rate):
    """EBU Tech 3341 case 1 (stereo sine, 997 Hz nominally 1 kHz, −23 dBFS): −23.0 LUFS."""
    t = np.arange(rate * 10) / rate
    x = np.sin(2 * np.pi * 997 * t)[:, None].repeat(2, axis=1) * 10 ** (-23 / 20)
    meter = LoudnessMeter(rate, [1.0, 1.0])
    meter.add(x)
    # the standard defines the filter at 48 kHz; elsewhere the bilinear transforms of one
    # analog design differ by up to 0.02 dB at 1 kHz (EBU Tech 3341 allows ±0.1 LU)
    tolerance = 0.005 if rate == 48000 else 0.025
    assert meter.integrated() == pytest.approx(-23.0, abs=tolerance)
    assert meter.integrated() == pytest.approx(pyloudnorm_lufs(x, rate), abs=tolerance)


@pytest.mark.parametrize("rate", [44100, 96000])
def test_noise_at_other_rates_agrees_with_pyloudnorm(rate):
    x = np.random.default_rng(5).normal(0, 0.1, (rate * 5, 2))
    meter = LoudnessMeter(rate, [1.0, 1.0])
    meter.add(x)
    assert meter.integrated() == pytest.approx(pyloudnorm_lufs(x, rate), abs=0.025)


def test_true_peak_sees_intersample_peaks():
    n = np.arange(FS)
    x = np.sin(2 * np.pi * FS / 4 * n / FS + np.pi / 4)[:, None]  # samples at ±0.707, peak 1
    assert np.abs(x).max() == pytest.approx(0.7071, abs=1e-3)
    assert true_peak_envelope(x)[100:-100].max() == pytest.approx(1.0, abs=0.02)


def test_streaming_true_peak_equals_the_whole_signal_peak():
    """Blocks and the skipping of quiet channels and spans do not lose the maximum."""
    rng = np.random.default_rng(3)
    x = rng.normal(0, 0.02, (4 * FS, 4)) * np.exp(-np.arange(4 * FS) / FS)[:, None]
    x[FS // 2:FS // 2 + 200, 1] += 0.3  # an early loud step on one channel
    n = np.arange(400)
    x[3 * FS:3 * FS + 400, 3] += 0.5 * np.sin(np.pi / 2 * n + np.pi / 4)  # intersample peak
    x[2 * FS + 17, 2] = -0.45  # a lone click, just under the sine's sample peak
    meter = TruePeakMeter()
    for start in range(0, len(x), 9001):
        meter.add(x[start:start + 9001])
    whole = float(true_peak_envelope(x).max())
    assert whole == pytest.approx(0.5, abs=0.01)  # the sine's, not its samples' 0.354
    assert meter.peak == pytest.approx(whole, rel=1e-9)


@pytest.mark.parametrize("bounded", [False, True])
def test_true_peak_of_float32_blocks_with_a_scale_is_that_of_the_scaled_blocks(bounded):
    """Pass 2 feeds pass 1's float32 blocks with the gain as their scale, and each block's
    sample peak from pass 1 as a bound: the same peak as the float64 products."""
    rng = np.random.default_rng(4)
    x = (rng.normal(0, 0.01, (3 * FS, 2)) * np.exp(-np.arange(3 * FS) / FS)[:, None])
    n = np.arange(400)
    x[2 * FS:2 * FS + 400, 1] += 0.05 * np.sin(np.pi / 2 * n + np.pi / 4)  # late, intersample
    x = x.astype(np.float32)
    gain = 10 ** (15.1 / 20)
    plain, scaled = TruePeakMeter(), TruePeakMeter()
    for start in range(0, len(x), 4800):
        block = x[start:start + 4800]
        plain.add(np.multiply(block, gain, dtype=np.float64))
        bound = float(np.abs(block).max()) * gain * (1 + 1e-6) if bounded else None
        scaled.add(block, scale=gain, bound=bound)
    assert scaled.peak == plain.peak
    assert 0.05 * gain <= plain.peak <= 0.06 * gain  # the late sine's (plus noise), scaled


def test_limiter_holds_ceiling_and_leaves_quiet_parts_alone():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 0.05, (FS * 3, 2))
    x[FS:FS + 50] += 3.0  # a hard transient far above the ceiling
    limiter = TruePeakLimiter(-1.0, FS, 2)
    y = np.concatenate([limiter.process(x[i:i + 10000]) for i in range(0, len(x), 10000)]
                       + [limiter.flush()])
    assert y.shape == x.shape
    peak = TruePeakMeter()
    peak.add(y)
    assert peak.peak_dbtp <= -0.99
    assert np.array_equal(y[:FS // 2], x[:FS // 2])  # untouched away from the transient
    assert limiter.gain_reduction_db > 10


def test_the_limiters_gains_give_its_samples_bit_for_bit():
    """``gains`` is ``process`` without the product (pass 2 makes them in another process):
    the samples fed, after the context, times the gains are ``process``'s, to the bit, and
    the reduction and the touched flags are the same."""
    rng = np.random.default_rng(0)
    x = rng.normal(0, 0.05, (FS * 3, 2))
    x[FS:FS + 50] += 3.0  # a hard transient: some blocks turned down, others not
    x[2 * FS:2 * FS + 2000] += 0.6  # loud, but under the ceiling
    context = rng.normal(0, 0.05, (TruePeakLimiter.reach_of(FS), 2))
    plain, gains = TruePeakLimiter(-1.0, FS, 2), TruePeakLimiter(-1.0, FS, 2)
    plain.resume(context)
    gains.resume(context)
    held, out, touched = [], [], []
    for i in range(0, len(x), 7000):
        out.append(plain.process(x[i:i + 7000]))
        held.append(x[i:i + 7000])
        frames, gain = gains.gains(x[i:i + 7000])
        fed = np.concatenate(held)
        done = sum(len(part) for part in out[:-1])
        assert frames == len(out[-1])
        assert (gain is not None) == plain.touched == gains.touched
        touched.append(gain is not None)
        part = fed[done:done + frames]
        assert np.array_equal(out[-1], part if gain is None else part * gain[:, None])
    assert any(touched) and not all(touched)
    assert gains.gain_reduction_db == plain.gain_reduction_db > 10


def test_a_true_peak_measured_in_two_parts_is_the_whole_signals():
    """Pass 2 measures a limited run's inner frames on the limiter's side (``elsewhere``
    left out here, the peak found there ``include``d): the same peak, to the bit; left
    out and not included, the peak (inside them) is missed."""
    rng = np.random.default_rng(4)
    x = rng.normal(0, 0.05, (FS, 2))
    n = np.arange(400)
    x[30000:30400, 1] += 1.2 * np.sin(np.pi / 2 * n + np.pi / 4)  # peaks between samples
    whole = TruePeakMeter()
    whole.add(x)
    a, b = 25000, 36000  # the frames measured elsewhere, from the reach before them on
    inner = TruePeakMeter(context=x[a - TruePeakMeter.REACH:a])
    inner.add(x[a:b + TruePeakMeter.REACH])
    split, missed = TruePeakMeter(), TruePeakMeter()
    for start in range(0, FS, 7000):
        for meter in (split, missed):
            meter.add(x[start:start + 7000], elsewhere=(a, b))
        if start >= b:
            split.include(inner.measured_peak)
    assert split.peak == whole.peak > 1.0
    assert missed.peak < whole.peak / 2


@pytest.mark.parametrize("gain", [1.7, 0.3])
def test_following_a_scaled_reference_equals_metering_it(gain):
    """Pass 2 meters only where the limiter acted and follows pass 1 elsewhere."""
    x = varied_signal()
    block = 3 * 4800 + 17  # blocks that do not line up with the 100 ms hops
    reference, snapshots = LoudnessMeter(FS, [1.0, 1.0]), []
    direct, mixed = LoudnessMeter(FS, [1.0, 1.0]), LoudnessMeter(FS, [1.0, 1.0])
    for i, start in enumerate(range(0, len(x), block)):
        part = x[start:start + block]
        reference.add(part)
        snapshots.append(reference.snapshot())
        direct.add(gain * part)
        if i in (3, 4, 11):
            mixed.add(gain * part)
        else:
            mixed.follow(reference, snapshots[i], gain)
    assert mixed.integrated() == pytest.approx(direct.integrated(), abs=1e-6)
    assert direct.integrated() == pytest.approx(
        reference.integrated() + 20 * np.log10(gain), abs=1e-6)


def test_a_downmixed_meter_measures_the_render_its_matrices_make_as_they_change():
    """An Atmos master is measured on its 5.1 render: four tracks into three channels, by a
    matrix that changes inside a block, on a block's first frame and on a hop's, read from
    the frame the meter stands at, even when it resumes or follows from a snapshot."""
    rng = np.random.default_rng(4)
    x = varied_signal(12, 4).astype(np.float32)
    x[FS * 2:FS * 5, 3] = 0.0  # a track that stops and comes back
    starts = np.array([0, 4 * (4800 * 5 + 17), FS * 3 + 1234, FS * 9 + 4800 * 3])
    matrices = rng.uniform(0, 1, (len(starts), 4, 3)).astype(np.float32)
    weights = np.array([1.0, 1.0, 1.41])
    at = np.searchsorted(starts, np.arange(len(x)), side="right") - 1
    rendered = np.einsum("ft,ftc->fc", x.astype(float), matrices[at].astype(float))
    block = 4800 * 5 + 17  # blocks that do not line up with the hops
    meter, snapshots = LoudnessMeter(FS, weights, Downmix(starts, matrices)), []
    for start in range(0, len(x), block):
        meter.add(x[start:start + block])
        snapshots.append(meter.snapshot())
    plain = LoudnessMeter(FS, weights)
    plain.add(rendered)
    np.testing.assert_allclose(meter.hops, plain.hops, rtol=1e-5, atol=1e-12)
    assert meter.integrated() == pytest.approx(plain.integrated(), abs=1e-4)
    # a dry run from block 3 (resumed) and pass 2 following pass 1 up to block 5
    resumed = meter.resumed(snapshots[2], 2.0)
    for start in range(3 * block, len(x), block):
        resumed.add(2.0 * x[start:start + block])
    np.testing.assert_allclose(resumed.hops, 4.0 * meter.hops[snapshots[2].hops:], rtol=1e-6,
                               atol=1e-12)
    follower = LoudnessMeter(FS, weights, Downmix(starts, matrices))
    follower.follow(meter, snapshots[5], 1.0)
    for start in range(6 * block, len(x), block):
        follower.add(x[start:start + block])
    assert np.array_equal(follower.hops, meter.hops)
    with pytest.raises(ValueError, match="a downmix to 3 channels, 2 weights"):
        LoudnessMeter(FS, [1.0, 1.0], Downmix(starts, matrices))


def test_a_settled_silent_channel_is_not_filtered_and_the_loudness_is_the_same_bits(
        monkeypatch):
    # an ADM master's object tracks: one always sounding, one never, one that stops and
    # comes back, one that sounds only at the end (the meter's blocks do not fit the hops)
    x = np.zeros((FS * 12, 4))
    x[:, 0] = varied_signal(12, 1)[:, 0]
    rng = np.random.default_rng(9)
    x[: FS * 3, 2] = rng.normal(0, 0.1, FS * 3)
    x[FS * 8:, 2] = rng.normal(0, 0.05, FS * 4)
    x[FS * 11:, 3] = rng.normal(0, 0.2, FS)
    filtered = []
    real = loudness.sosfilt_within

    def counting(sos, rows, state):
        filtered.append(rows.size)  # samples filtered
        return real(sos, rows, state)

    def metered() -> LoudnessMeter:
        meter = LoudnessMeter(FS, np.ones(4))
        for start in range(0, len(x), 4800 * 5 + 17):
            meter.add(x[start:start + 4800 * 5 + 17])
        return meter

    monkeypatch.setattr(loudness, "sosfilt_within", counting)
    skipping = metered()
    skipped, filtered[:] = sum(filtered), []
    monkeypatch.setattr(loudness, "_SETTLED", 0.0)  # nothing settles: every channel filtered
    every = metered()
    assert skipped < 0.6 * sum(filtered)
    assert skipping.integrated() == every.integrated()  # the same bits
    assert np.array_equal(skipping.hops[:80, 0], every.hops[:80, 0])  # silent from 8 s
    # the channel that came back: its filter started from the state it was left in
    np.testing.assert_allclose(skipping.hops[80:, 2], every.hops[80:, 2], rtol=1e-12)
    assert np.all(skipping.hops[40:70, [1, 2]] == 0.0)  # counted as 0 while settled


def _performance(clicky: bool, beats: int = 12):
    sources = {"a": Source("a", "jiangu", "鼓", "drum", "drums", (-4.0, 6.0, 1.0)),
               "b": Source("b", "sheng", "笙", "mouth organ", "west", (5.0, 3.0, 1.0))}
    events = [Event(0.2 + 0.5 * i, 0.4, "ab"[i % 2], None, 1.0, "strike", "c")
              for i in range(beats)]

    def voice(event, source, *, sample_rate, rng):
        n = round(0.5 * sample_rate)
        sound = rng.normal(0, 0.2, n) * np.hanning(n)  # a steady bed: gating stays put
        if clicky and source.id == "a" and (clicky == "all" or event.time < 1.0):
            sound[:3] += 6.0  # a sharp stroke on top: forces the limiter
        return sound
    return Performance.build(events, [], sources), voice


@pytest.mark.parametrize("layout", ["stereo", "binaural", "5.1"])
@pytest.mark.parametrize("clicky", [False, "all", "first"])
def test_rendered_file_meets_target_and_ceiling(tmp_path, layout, clicky):
    perf, voice = _performance(clicky, beats=12 if clicky != "first" else 30)
    out = tmp_path / "rite.wav"
    result = render_audio(perf, out, listener=Listener((0, 0, 1.5), "north"), layout=layout,
                          voice=voice, bits="float", target_lufs=-23.0, ceiling_dbtp=-1.0)
    data, rate = soundfile.read(out, always_2d=True)
    weights = {"stereo": [1, 1], "binaural": [1, 1], "5.1": [1, 1, 1, 0, 1.41, 1.41]}[layout]
    meter = LoudnessMeter(rate, weights)
    meter.add(data)
    if layout != "5.1":  # pyloudnorm has no LFE slot; the stereo ones must agree too
        assert pyloudnorm_lufs(data, rate) == pytest.approx(meter.integrated(), abs=0.01)
    assert meter.integrated() == pytest.approx(-23.0, abs=0.5)
    peak = TruePeakMeter()
    peak.add(data)
    assert peak.peak_dbtp <= -1.0
    assert (result.report.limiter_db > 0) == bool(clicky)
    # the report's reading is the file's, including where pass 2 followed pass 1's meter
    assert result.report.output_lufs == pytest.approx(meter.integrated(), abs=0.01)
    assert result.report_file.read_text(encoding="utf-8").count("output_lufs") == 1


def test_limiter_oversamples_only_loud_spans_and_matches_full_oversampling():
    rate = 48000
    rng = np.random.default_rng(3)
    quiet = 0.05 * rng.standard_normal((rate, 2))
    x = quiet.copy()
    t = np.arange(2000) / rate
    burst = 1.3 * np.sin(2 * np.pi * 11000 * t + 0.7)  # inter-sample peaks near Nyquist/4
    x[20000:22000] += burst[:, None]
    ceiling_db = -1.0
    limiter = TruePeakLimiter(ceiling_db, rate, 2)
    out = np.concatenate([limiter.process(x[:30000]), limiter.process(x[30000:]),
                          limiter.flush()])
    # the reference: the same limiter rule with the whole signal oversampled
    ceiling = 10 ** (ceiling_db / 20)
    width = 2 * int(0.05 * rate) + 1
    need = np.minimum(1.0, ceiling / np.maximum(true_peak_envelope(x), 1e-30))
    gain = uniform_filter1d(minimum_filter1d(need, width), width)
    np.testing.assert_allclose(out, x * gain[:, None], atol=1e-12)
    assert float(true_peak_envelope(out).max()) <= ceiling * 1.001


def _tracks(channels: int = 24) -> np.ndarray:
    """An ADM master's tracks: each sounds now and then (a stroke, a step), mostly silent;
    the loudest, in track 7, peaks between its samples."""
    rng = np.random.default_rng(5)
    x = np.zeros((4 * FS, channels))
    for track in range(channels):
        start = int(rng.integers(0, 3 * FS))
        x[start:start + FS // 4, track] = rng.normal(0, 0.02 + 0.01 * (track % 5), FS // 4)
    n = np.arange(400)
    x[2 * FS:2 * FS + 400, 7] += 1.2 * np.sin(np.pi / 2 * n + np.pi / 4)  # samples at 0.85
    return x


def test_many_mostly_silent_tracks_meter_and_limit_as_the_whole_signal(monkeypatch):
    """The meter scans only the tracks that may be near the peak, and the limiter oversamples
    only the tracks loud in a span: the same peak, and the same gain, as the whole signal."""
    from soundscape.sound import loudness

    x = _tracks()
    widths = []  # the channels of every oversampling the meter and the limiter do

    def counted(y):
        widths.append(np.shape(y)[1])
        return true_peak_envelope(y)

    monkeypatch.setattr(loudness, "true_peak_envelope", counted)
    meter = TruePeakMeter()
    for start in range(0, len(x), FS):
        meter.add(x[start:start + FS].astype(np.float32), scale=2.0)
    scanned, widths[:] = list(widths), []
    assert scanned and max(scanned) < 12, scanned  # not every track, every block
    assert meter.peak == float(true_peak_envelope(2.0 * x.astype(np.float32)).max())
    ceiling_db = -1.0
    limiter = TruePeakLimiter(ceiling_db, FS, x.shape[1])
    out = np.concatenate([limiter.process(x[i:i + FS]) for i in range(0, len(x), FS)]
                         + [limiter.flush()])
    ceiling = 10 ** (ceiling_db / 20)
    width = 2 * int(0.05 * FS) + 1
    need = np.minimum(1.0, ceiling / np.maximum(true_peak_envelope(x), 1e-30))
    gain = uniform_filter1d(minimum_filter1d(need, width), width)
    assert limiter.gain_reduction_db > 1.0  # it had work
    assert widths[1:] and max(widths[1:]) <= 2, widths  # the loud track (the meter's end: all)
    np.testing.assert_allclose(out, x * gain[:, None], atol=1e-12)


def _below_20_hz_db(x: np.ndarray, rate: int) -> float:
    freqs, power = signal.welch(x, fs=rate, nperseg=2**16, axis=0)
    return float(10 * np.log10(power[freqs < 20].sum() / power.sum()))


def test_limiting_drum_strokes_adds_no_infrasound():
    """A 100 ms gain dip keeps the modulation's sidebands off 0 Hz (a 10 ms one, the old
    window, put 11 dB more under 20 Hz on these strokes)."""
    rate = 48000
    drum = load_instrument("jiangu")
    rng = np.random.default_rng(1)
    x = np.zeros(30 * rate)
    for start in range(rate // 2, len(x) - 3 * rate, 3 * rate // 2):
        note = render_note(drum, hz=None, velocity=0.9, duration=0.3, articulation="strike",
                           sample_rate=rate, rng=rng)
        x[start:start + len(note)] += note[:len(x) - start]
    x = np.stack([x, 0.7 * x], axis=1) * (2.5 / np.abs(x).max())  # ~9 dB over the ceiling
    limiter = TruePeakLimiter(-1.0, rate, 2)
    y = np.concatenate([limiter.process(x[i:i + rate]) for i in range(0, len(x), rate)]
                       + [limiter.flush()])
    assert limiter.gain_reduction_db > 8
    assert _below_20_hz_db(y, rate) <= _below_20_hz_db(x, rate) + 0.5


def test_envelope_on_stretches_is_the_whole_envelope_bit_for_bit():
    """Oversampling cut-out stretches (with the filter's reach) gives the very numbers of
    the whole signal's envelope, at the ends too (silence beyond them)."""
    rng = np.random.default_rng(8)
    x = rng.normal(0, 0.3, (5000, 3))
    stretches = [(0, 5), (40, 41), (70, 300), (330, 400), (2000, 2100), (4990, 5000)]
    starts, stops = (np.array(s) for s in zip(*stretches, strict=True))
    envelope = loudness._envelope_at(x, starts, stops)
    whole = true_peak_envelope(x)
    wanted = np.zeros(len(x), dtype=bool)
    for lo, hi in stretches:
        wanted[lo:hi] = True
    assert np.array_equal(envelope[wanted], whole[wanted])
    assert not envelope[~wanted].any()


@pytest.mark.parametrize("floor", [0.2, 0.5, 0.9, 0.99])
def test_frames_out_of_reach_cannot_top_the_floor(floor):
    """The overshoot bound is exact: with a worst-case stretch (samples ±0.44 signed as one
    phase's taps, whose true peak is 0.44 × 2.25 ≈ 0.99) and noise, every frame
    ``_reaching`` leaves out has a true peak at most ``floor``."""
    phase = loudness._polyphase()[1]
    rng = np.random.default_rng(9)
    x = rng.normal(0, 0.05, (3000, 2))
    x[1000:1000 + len(phase), 0] = 0.44 * np.sign(phase[::-1])
    whole = true_peak_envelope(x)
    assert whole.max() == pytest.approx(0.44 * np.abs(phase).sum(), rel=1e-9)
    starts, stops = loudness._reaching(loudness._channel_peak(x), floor, 0, len(x))
    out = np.ones(len(x), dtype=bool)
    for lo, hi in zip(starts, stops, strict=True):
        out[lo:hi] = False
    assert whole[out].max(initial=0.0) <= floor
    if floor > 0.5:  # and it leaves out most frames (all but the worst-case stretch's)
        assert out.mean() > 0.95


def test_true_peak_meter_oversamples_only_frames_that_may_top_its_peak(monkeypatch):
    """After a loud click, blocks whose samples sit just over 6 dB under it at both ends
    (so the meter looks at all their frames) are oversampled only near those samples."""
    x = np.random.default_rng(10).normal(0, 0.1, (4 * FS, 2))
    x[100, 0] = 1.0
    for start in range(FS, 4 * FS, FS):
        x[start + 50, 1] = x[start + FS - 50, 0] = 0.52
    frames = []

    def counted(y):
        frames.append(len(y))
        return true_peak_envelope(y)

    monkeypatch.setattr(loudness, "true_peak_envelope", counted)
    meter = TruePeakMeter()
    for start in range(0, len(x), FS):
        meter.add(x[start:start + FS])
    later = sum(frames[1:])  # the first block's scan sets the peak
    assert later < 0.01 * 3 * FS, frames
    monkeypatch.undo()
    assert meter.peak == float(true_peak_envelope(x).max())


def test_limiter_oversamples_only_frames_that_may_top_the_ceiling(monkeypatch):
    """Noise with lone samples just over 6 dB under the ceiling and two strokes over it:
    the limiter looks at the loud span around each sample but oversamples only the
    filter's reach of it, and its gain is that of the whole signal oversampled."""
    rng = np.random.default_rng(11)
    ceiling_db = -1.0
    ceiling = 10 ** (ceiling_db / 20)
    x = np.clip(rng.normal(0, 0.1, (2 * FS, 2)), -0.3, 0.3)  # under ceiling / 2.25 = 0.4
    x[::4999, 0] = 0.46  # over half the ceiling: each makes a loud span of ~300 frames
    x[FS // 2:FS // 2 + 3, 1] = 1.4
    x[FS + 777, 0] = -1.2
    frames = []

    def counted(y):
        frames.append(len(y))
        return true_peak_envelope(y)

    monkeypatch.setattr(loudness, "true_peak_envelope", counted)
    limiter = TruePeakLimiter(ceiling_db, FS, 2)
    out = np.concatenate([limiter.process(x), limiter.flush()])
    assert 0 < sum(frames) < 2500, frames  # ~65 frames a loud sample, not ~320
    monkeypatch.undo()
    width = 2 * int(0.05 * FS) + 1
    need = np.minimum(1.0, ceiling / np.maximum(true_peak_envelope(x), 1e-30))
    gain = uniform_filter1d(minimum_filter1d(need, width), width)
    np.testing.assert_allclose(out, x * gain[:, None], atol=1e-12)


@pytest.mark.parametrize("widen", [0, 3, 144])
def test_runs_are_a_maximum_filters_runs(widen):
    """The limiter's loud spans, found from the runs of loud samples, are those of the
    maximum filter it used to run over every frame."""
    rng = np.random.default_rng(widen)
    over = rng.random(5000) > 0.997
    over[:2] = over[-1] = True  # at the ends too
    starts, stops = loudness._runs(over, widen, 0)
    spans = np.zeros(len(over), dtype=bool)
    for lo, hi in zip(starts, stops, strict=True):
        spans[lo:hi] = True
    assert np.array_equal(spans, maximum_filter1d(over, 2 * widen + 1))
    assert (starts[1:] > stops[:-1]).all()  # apart: the filter's runs, one by one


@pytest.mark.parametrize("channels", [1, 2, 3, 16, 38])
@pytest.mark.parametrize("frames", [1, 63, 64, 129, 48_001])
def test_column_peaks_are_each_channels_max_abs(channels, frames):
    """The folded reduction gives each column's own max |x|, whatever is left over past the
    last whole fold, in a C- or Fortran-ordered block; a peak placed in one column (and a
    negative one in another) is found where it is and nowhere else."""
    rng = np.random.default_rng(frames * 100 + channels)
    block = rng.uniform(-0.5, 0.5, (frames, channels)).astype(np.float32)
    block[frames - 1, 0] = 0.9  # in the frames past the last fold, when there are any
    block[frames // 2, channels - 1] = -0.8 if channels > 1 else 0.9
    expected = np.abs(block).max(axis=0)
    for layout in (block, np.asfortranarray(block)):
        np.testing.assert_array_equal(loudness._column_peaks(layout), expected)


def test_the_silent_channel_check_is_any_for_every_float32_bit_pattern():
    # −0 is silent, a NaN, an inf and a denormal sound: as ``np.any`` has them
    block = np.zeros((700, 7), dtype=np.float32)
    block[3, 1] = -0.0
    block[:, 2] = -0.0
    block[5, 3] = np.nan
    block[699, 4] = -np.inf
    block[0, 5] = np.float32(1e-45)  # the smallest denormal
    block[350, 6] = -np.float32(1e-45)
    found = loudness._nonzero_columns(block)
    assert found.tolist() == np.any(block, axis=0).tolist() == [False, False, False, True,
                                                                True, True, True]
    assert loudness._nonzero_columns(block.astype(np.float64)).tolist() == found.tolist()
