"""The place's beds: segments that join at constant power, decorrelated, at their level;
the hours differ; torches that crackle; none kept by the render (each its own). The
court's calls (birds, cicadas, crickets, rustles): their levels, rates and band."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from soundscape.errors import InstrumentError
from soundscape.music.instruments import load_instrument
from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice
from soundscape.sound.synth import ambience, creatures, made_at, params_of, render_note

RATE = 16000


def instrument_of(articulation: str):
    """The bed's hours are the place's instrument; a torch is one of its own."""
    return load_instrument("torch" if articulation == "torch" else "ambience")


def segment(articulation: str, *, duration: float = 12.0, seed: int = 0,
            velocity: float = 1.0, rate: int = RATE) -> np.ndarray:
    return render_note(instrument_of(articulation), hz=None, velocity=velocity,
                       duration=duration, articulation=articulation, sample_rate=rate,
                       rng=np.random.default_rng(seed), lyric=f"bed.test.{seed}")


def rms_db(audio: np.ndarray) -> float:
    return float(20 * np.log10(np.sqrt(np.mean(audio**2))))


def band_db(audio: np.ndarray, low: float, high: float) -> float:
    sos = signal.butter(4, [low, high], btype="bandpass", fs=RATE, output="sos")
    return rms_db(signal.sosfilt(sos, audio))


def test_a_segment_lasts_its_duration_and_fades_in_and_out():
    bed = segment("day")
    assert bed.size == 12 * RATE
    fade = params_of(load_instrument("ambience"))["day"]["fade_s"]
    assert abs(bed[0]) < 1e-3 and abs(bed[-1]) < 1e-3
    assert rms_db(bed[:RATE // 4]) < rms_db(bed[5 * RATE:7 * RATE]) - 12.0
    assert rms_db(bed[round(fade * RATE):round(fade * RATE) + RATE]) > \
        rms_db(bed[5 * RATE:7 * RATE]) - 6.0


def test_consecutive_segments_overlapped_by_the_fade_keep_constant_power():
    """sin in, cos out: two independent segments overlapping by fade_s sum to the same
    power through the join (no dip, no bump)."""
    fade = params_of(load_instrument("ambience"))["night"]["fade_s"]
    first, second = segment("night", seed=1), segment("night", seed=2)
    step = first.size - round(fade * RATE)
    mix = np.zeros(step + second.size)
    mix[:first.size] += first
    mix[step:] += second
    envelope = ambience._fades(first.size, fade=round(fade * RATE))
    join = slice(step, first.size)
    assert np.allclose(envelope[join] ** 2 + envelope[:first.size - step] ** 2, 1.0,
                       atol=1e-9)
    # independent noise: through the join the mix has the power of its two parts (no
    # dip, no bump), whatever their gusts do
    a, b = np.zeros_like(mix), np.zeros_like(mix)
    a[:first.size], b[step:] = first, second
    for i in range(step - RATE, first.size + RATE, RATE // 4):
        window = slice(i, i + RATE // 2)
        parts = 10 * np.log10(np.mean(a[window] ** 2) + np.mean(b[window] ** 2))
        assert rms_db(mix[window]) == pytest.approx(parts, abs=1.0)


def test_segments_of_different_tags_are_decorrelated():
    a, b = segment("day", seed=1), segment("day", seed=2)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.05
    assert np.array_equal(a, segment("day", seed=1))


@pytest.mark.parametrize("hour", ["morning", "day", "evening", "night", "torch"])
def test_level_is_velocity_times_a_tenth_of_full_scale(hour):
    """RMS of the segment without its fades = velocity x 0.1 (-20 dBFS)."""
    loud, soft = segment(hour, velocity=1.0, seed=5), segment(hour, velocity=0.5, seed=5)
    fade = round(params_of(instrument_of(hour))[hour]["fade_s"] * RATE)
    loud = loud / ambience._fades(loud.size, fade=fade)
    soft = soft / ambience._fades(soft.size, fade=fade)
    # a torch's loudest pops are softened (tanh) after the scaling
    assert rms_db(loud) == pytest.approx(-20.0, abs=1.0 if hour == "torch" else 0.05)
    assert rms_db(loud) - rms_db(soft) == pytest.approx(6.0, abs=0.5)
    assert np.max(np.abs(segment(hour, velocity=1.0, seed=5))) <= 1.0


def test_the_hours_differ_the_leaves_stir_by_day_and_are_still_at_night():
    day, night = segment("day"), segment("night")
    assert band_db(day, 800, 3500) - rms_db(day) > band_db(night, 800, 3500) - rms_db(night) + 6.0


def test_a_cricket_chirps_at_its_rate_in_pulses_at_its_pulse_rate():
    params = params_of(load_instrument("creatures"))
    one = {**params["cricket"], "chirps_per_s": 2.0}
    rate = 48000
    audio = creatures.render({"cricket": one}, hz=1000.0, velocity=1.0, duration=20.0,
                             articulation="cricket", sample_rate=rate,
                             rng=np.random.default_rng(0))
    env = np.abs(signal.hilbert(audio))
    chirps = signal.resample_poly(env, 1, 240)  # 200 Hz envelope
    lags = np.correlate(chirps - chirps.mean(), chirps - chirps.mean(), "full")[chirps.size:]
    period = (np.argmax(lags[60:140]) + 60) / 200.0  # the first repeat: 0.3 to 0.7 s
    assert 1.0 / period == pytest.approx(2.0, rel=0.11)  # each cricket within ±10 %
    pulses = np.abs(np.fft.rfft(env - env.mean()))
    freqs = np.fft.rfftfreq(env.size, 1.0 / rate)
    near = (freqs > 20) & (freqs < 45)
    assert freqs[near][np.argmax(pulses[near])] == pytest.approx(30.0, abs=1.0)


def test_a_torch_roars_low_and_crackles():
    torch = segment("torch", duration=8.0)
    middle = torch[2 * RATE:6 * RATE]
    assert np.max(np.abs(middle)) / np.sqrt(np.mean(middle**2)) > 5.0  # pops stand out
    assert band_db(middle, 80, 1000) > band_db(middle, 2000, 3500)


def test_a_torch_crackles_to_16_khz_made_at_the_renders_rate_while_the_bed_stays_at_16():
    """A torch is its own instrument: its pops reach 16 kHz (the bed's 16 kHz rate stopped
    them at 7 kHz), so it is made at a 48 kHz render's own rate, and the bed is not. The
    crackle alone, at 48 kHz: 10-16 kHz within 10 dB of 1-2 kHz per hertz (a burst's
    noise is flat in its band), and nothing over 18 kHz."""
    torch = load_instrument("torch")
    assert made_at(torch, 48000) == 48000 and made_at(load_instrument("ambience"), 48000) == 16000
    row = {**params_of(torch)["torch"], "flame_db": -120.0}
    crackle = np.concatenate([ambience._layers(row, frames=8 * CALL_RATE, sample_rate=CALL_RATE,
                                               rng=np.random.default_rng(seed))
                              for seed in range(4)])
    f, p = signal.welch(crackle, fs=CALL_RATE, nperseg=4096)

    def per_hz_db(low, high):
        return 10 * np.log10(np.mean(p[(f >= low) & (f < high)]))

    assert per_hz_db(10000, 16000) > per_hz_db(1000, 2000) - 10.0
    assert per_hz_db(18500, 24000) < per_hz_db(1000, 2000) - 40.0


def test_a_row_that_crackles_names_its_band(tmp_path):
    path = edited(tmp_path, "torch", "crackle_band = [800.0, 16000.0]\n", "", count=1)
    with pytest.raises(InstrumentError, match=r"params\.torch\.crackle_band is missing"):
        params_of(load_instrument(path))


def test_a_torchs_loudest_pop_is_not_the_same_in_every_segment():
    """Pops are drawn heavy-tailed in size, and the loudest of a segment is as loud as its
    size: scaled each to one peak, every 8 s segment's loudest pop was as loud as every
    other's. The crackle alone (no flame), 12 segments."""
    row = {**params_of(load_instrument("torch"))["torch"], "flame_db": -120.0}
    peaks = [20 * np.log10(np.max(np.abs(ambience._layers(
        row, frames=8 * 16000, sample_rate=16000, rng=np.random.default_rng(seed)))))
        for seed in range(12)]
    assert max(peaks) <= row["crackle_db"] + 0.01  # the largest drawable pop
    assert max(peaks) - min(peaks) > 4.0, peaks


@pytest.mark.parametrize(("band", "rate"), [
    (ambience._KNOCK_BAND, RATE),
    (tuple(params_of(load_instrument("torch"))["torch"]["crackle_band"]), 48000)])
def test_bursts_shaped_on_short_grids_are_those_shaped_on_the_segments_grid(band, rate):
    """A knock or a pop is shaped on a grid of its own length and _RING_S either side, not
    the segment's: within 100 dB of the burst train shaped on the whole segment's grid
    (the band's ring outside _RING_S is that far down), at the segment's ends too."""
    from soundscape.sound.synth.creatures import fft_length, noise_shape

    frames = 5 * rate
    starts = np.array([0.0, 1.3, 1.31, 4.99])
    sizes = np.array([1.0, 0.5, 2.0, 0.7])
    shaped = ambience._shaped_bursts(np.random.default_rng(4), starts, sizes, lambda: 0.04,
                                     band, frames=frames, sample_rate=rate)
    assert shaped is not None
    first, stretch = shaped  # the stretch the bursts fill, laid into the segment
    short = np.zeros(frames)
    short[first:first + stretch.size] = stretch
    train = np.zeros(frames)
    rng = np.random.default_rng(4)
    for start, size in zip(starts, sizes, strict=True):
        burst = ambience.noise_burst(rng, frames=frames, decay_s=0.04, sample_rate=rate)
        at = round(start * rate)
        train[at:at + burst.size] += burst[:frames - at] * size
    n = fft_length(frames)
    whole = np.fft.irfft(np.fft.rfft(train, n) * noise_shape(band, n, rate), n)[:frames]
    assert 20 * np.log10(np.max(np.abs(short - whole)) / np.max(np.abs(whole))) < -100.0


def test_the_render_keeps_no_segment_or_call_each_is_its_own():
    """The bed looped when a source's segments of one hour shared one rendering; now every
    segment and call has its own tag and seed, so keeping them would only push out notes
    that repeat: the voice says they do not, and the dry-note cache keeps none."""
    from soundscape.performance import Event, Source

    voice = SynthVoice()
    assert not voice.repeats("ambience") and not voice.repeats("creatures")
    assert voice.repeats("se")
    cache = ByteLru(64 << 20)
    notes = DryNotes(voice, 8000, 0, cache)
    source = Source("place.bed.0", "ambience", "境", "bed", "place", (0.0, 0.0, 4.0),
                    (0.0, 0.0, 1.0))
    event = Event(0.0, 3.0, source.id, None, 1.0, "day", "bed", lyric="bed.0.day.1")
    key = notes.key(event, source)
    first = notes(event, source, key, 0)
    assert cache.size == 0 and first.size > 2 * 8000
    other = Event(0.0, 3.0, source.id, None, 1.0, "day", "bed", lyric="bed.0.day.2")
    second = notes(other, source, notes.key(other, source), 0)
    n = min(first.size, second.size)
    assert abs(np.corrcoef(first[:n], second[:n])[0, 1]) < 0.05


CALL_RATE = 48000


def call(articulation: str, *, seed: int = 0, duration: float = 6.0,
         velocity: float = 1.0) -> np.ndarray:
    return render_note(load_instrument("creatures"), hz=None, velocity=velocity,
                       duration=duration, articulation=articulation, sample_rate=CALL_RATE,
                       rng=np.random.default_rng(seed), lyric=f"{articulation}.{seed}")


@pytest.mark.parametrize("kind", ["sparrow", "magpie", "dove", "oriole", "cicada", "cricket",
                                  "rustle"])
def test_a_calls_loudest_50_ms_is_its_level_at_1_m(kind):
    """loudness_db + level_db is the loudest 50 ms's RMS at 1 m, at velocity 1 (the level
    in dB SPL the instrument file states for the species); velocity scales it."""
    creatures_ = load_instrument("creatures")
    level = params_of(creatures_)[kind]["level_db"]
    loud, soft = call(kind, seed=3), call(kind, seed=3, velocity=0.5)
    assert 20 * np.log10(creatures._loudest_rms(loud, CALL_RATE)) == pytest.approx(level,
                                                                                  abs=0.1)
    assert 20 * np.log10(creatures._loudest_rms(loud, CALL_RATE)
                         / creatures._loudest_rms(soft, CALL_RATE)) == pytest.approx(6.02,
                                                                                     abs=0.1)


def test_no_two_calls_alike():
    """Two calls of one species from two seeds are different sounds, and one seed gives
    the same bytes."""
    for kind in ("sparrow", "cicada", "cricket", "rustle"):
        a, b = call(kind, seed=1), call(kind, seed=2)
        n = min(a.size, b.size)
        assert abs(np.corrcoef(a[:n], b[:n])[0, 1]) < 0.1, kind
        assert np.array_equal(a, call(kind, seed=1))


def test_the_place_reaches_16_khz_at_the_full_rate():
    """The bed of the old model stopped at 7 kHz (10-14 kHz 55 dB under 1-2 kHz): the
    calls are made at the render's own rate, and leaves and cicadas carry 10-16 kHz."""
    assert made_at(load_instrument("creatures"), 48000) == 48000
    rustle, cicada = call("rustle"), call("cicada")
    for audio, within in ((rustle, 15.0), (cicada, 30.0)):
        f, p = signal.welch(audio, fs=CALL_RATE, nperseg=4096)
        high = 10 * np.log10(np.sum(p[(f >= 10000) & (f < 16000)]))
        mid = 10 * np.log10(np.sum(p[(f >= 1000) & (f < 2000)]))
        top = 10 * np.log10(np.sum(p[(f >= 3000) & (f < 6000)]))
        assert high > max(mid, top) - within


def edited(tmp_path, instrument_id: str, old: str, new: str, *, count: int):
    """A copy of the bundled instrument file in ``tmp_path`` with ``old`` (found ``count``
    times) replaced by ``new``: its path."""
    text = load_instrument(instrument_id).path.read_text(encoding="utf-8")
    assert text.count(old) == count
    path = tmp_path / f"{instrument_id}.toml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def full_band_bed(tmp_path):
    """instruments/ambience.toml with every hour's leaves to 16 kHz."""
    return load_instrument(edited(tmp_path, "ambience", "leaves_band = [800.0, 7000.0]",
                                  "leaves_band = [800.0, 16000.0]", count=4))  # every hour


def test_the_bed_is_made_at_the_rate_its_bands_need(tmp_path):
    """The bundled bed (leaves to 7 kHz) is made at 16 kHz of a 48 kHz render; a file whose
    leaves reach 16 kHz at the render's own rate (16 kHz over 0.45), at 44.1 kHz too."""
    assert made_at(load_instrument("ambience"), 48000) == 16000
    assert made_at(load_instrument("ambience"), 44100) == 22050
    full = full_band_bed(tmp_path)
    assert ambience.least_hz(params_of(full)) == pytest.approx(16000 / 0.45)
    assert made_at(full, 48000) == 48000 and made_at(full, 44100) == 44100


def test_a_full_band_bed_by_day_reaches_16_khz_and_falls_there_smoothly(tmp_path):
    """Leaves to 16 kHz, falling ~3 dB an octave: in 500 Hz bands from 7 to 15.5 kHz no
    band is more than 2 dB under the one below it (made at 16 kHz, the day fell 25 dB
    within 300 Hz above 8.5 kHz), and 10-16 kHz sits within 20 dB of 1-2 kHz per hertz."""
    full = full_band_bed(tmp_path)
    bed = render_note(full, hz=None, velocity=1.0, duration=12.0, articulation="day",
                      sample_rate=CALL_RATE, rng=np.random.default_rng(0))
    f, p = signal.welch(bed[CALL_RATE:-CALL_RATE], fs=CALL_RATE, nperseg=8192)

    def per_hz_db(low, high):
        return 10 * np.log10(np.mean(p[(f >= low) & (f < high)]))

    bands = [per_hz_db(low, low + 500) for low in range(7000, 15500, 500)]
    assert min(np.diff(bands)) > -2.0, np.round(bands, 1)
    assert per_hz_db(10000, 16000) > per_hz_db(1000, 2000) - 20.0


def test_call_tones_from_phasors_are_the_sines_they_replace():
    """A call's partials come from phasors (by blocks, and for a sweep the running product
    of its increments) and Horner's rule, not sines: the same tones to 1e-9 of full scale
    (a wrong block step, increment or harmonic order is off by order 1)."""
    rate, n = CALL_RATE, 5000
    j = np.arange(n)
    cycles, start = 4321.0 / rate, 0.3
    steady = creatures._phasor(cycles, n, start=start)
    assert np.max(np.abs(steady - np.exp(2j * np.pi * (start + cycles * j)))) < 1e-9
    gains = [1.0, 0.5, 0.25]
    theta = 2 * np.pi * (start + cycles * j)
    tones = sum(g * np.sin(k * theta) for k, g in enumerate(gains, start=1))
    assert np.max(np.abs(creatures._harmonics(steady, gains) - tones)) < 1e-9
    # a sweep: pitch·(1 + glide·j) Hz at sample j, its phase the running sum
    pitch, glide = 3000.0, 0.3 / n
    step = pitch / rate
    swept = np.cumprod(creatures._phasor(step * glide, n, start=step))
    phase = 2 * np.pi * np.cumsum(pitch * (1.0 + glide * j)) / rate
    assert np.max(np.abs(swept - np.exp(1j * phase))) < 1e-9


def test_noise_blocks_keep_their_variance_through_the_joins():
    """Blocks joined by power-complementary crossfades (their squares sum to 1): the
    noise's variance is the same in a join as inside a block (a linear crossfade of
    independent blocks dips 3 dB there), and ``block_rms`` is its RMS."""
    from soundscape.sound.synth.creatures import block_rms, crossfade, noise_blocks

    up, down = crossfade(256)
    assert np.allclose(up.astype(float) ** 2 + down.astype(float) ** 2, 1.0, atol=1e-6)
    block, overlap, frames = 1024, 256, 4096
    shape = np.repeat(np.hanning(block // 2 + 1), 2)[None].astype(np.float32)
    power = np.zeros(frames)
    for seed in range(300):
        blocks = noise_blocks(np.random.default_rng(seed), shape, frames, block=block,
                              overlap=overlap)
        power += blocks.reshape(-1)[overlap:overlap + frames].astype(float) ** 2 / 300
    hop = block - overlap
    joins = np.concatenate([power[j * hop - overlap // 4:j * hop + overlap // 4]
                            for j in range(1, frames // hop)])
    within = np.concatenate([power[j * hop + overlap:(j + 1) * hop - overlap]
                             for j in range(frames // hop)])
    assert 10 * np.log10(joins.mean() / within.mean()) == pytest.approx(0.0, abs=0.2)
    rms = block_rms(np.hanning(block // 2 + 1), block)
    assert 10 * np.log10(within.mean()) == pytest.approx(20 * np.log10(rms), abs=0.2)


@pytest.mark.parametrize("rate", [RATE, 48000])
def test_the_beds_blocks_resolve_its_wind_skirt_under_22_hz(rate):
    """The bed's noise in blocks (the shortest ``_block_for`` gives, ``ambience._BLOCK_S``
    at the rate) keeps the wind's skirt where one transform of the whole segment puts it:
    the energy under 22 Hz of the day's air within 0.15 dB of its shape's (blocks of 4096
    samples at 16 kHz smear it 3.8 dB up, of 16384 0.5; at 48 kHz, blocks of 32768, 1.1)."""
    block, overlap = ambience._blocking(rate)
    from soundscape.sound.synth.creatures import noise_blocks

    day = params_of(load_instrument("ambience"))["day"]
    keys, shapes = ambience._rows(ambience._dense(day), block, rate)
    fine = 4 * 65536 if rate > RATE else 65536  # the shape on the measurement's own grid
    air = ambience._rows(ambience._dense(day), fine, rate)[1][keys.index("air"), ::2]
    freqs = np.fft.rfftfreq(fine, 1.0 / rate)
    expected = np.sum(air[freqs < 22.0].astype(float) ** 2) / np.sum(air.astype(float) ** 2)
    frames = 40 * 131072 * rate // RATE
    noise = noise_blocks(np.random.default_rng(0), shapes, frames, block=block,
                         overlap=overlap)[keys.index("air")]
    row = noise.reshape(-1)[overlap:overlap + frames]
    f, p = signal.welch(row, fs=rate, nperseg=fine)
    measured = np.sum(p[f < 22.0]) / np.sum(p)
    assert 10 * np.log10(measured / expected) == pytest.approx(0.0, abs=0.15)


@pytest.mark.parametrize("frames", [131040, 131024, 100000, 160000, 300000])
@pytest.mark.parametrize("rows", [1, 2, 3])
@pytest.mark.parametrize("rate", [RATE, 44100, 48000])
def test_the_beds_blocks_are_lengths_the_fft_likes_in_whole_batches(frames, rows, rate):
    """``_block_for``: blocks of at least ``_BLOCK_S`` seconds, 2^a 3^b 5^c long, a hop of
    whole held envelope values, enough of them for the noise, and as many transforms as
    fill whole batches of pocketfft's 4 lanes (no row transformed alone: twice the time;
    data/actions.toml's segments are 8.19 s, 131040 samples at 16 kHz; ``frames`` are
    16 kHz's, as many seconds at the others)."""
    from scipy.fft import next_fast_len

    frames = frames * rate // RATE
    least, overlap = ambience._blocking(rate)
    assert least >= ambience._BLOCK_S * rate
    assert overlap % ambience._STEP == 0 and least % ambience._STEP == 0
    block = ambience._block_for(frames, rows, least, overlap)
    hop = block - overlap
    count = -(-(frames + overlap) // hop)
    assert block >= least and hop % ambience._STEP == 0
    assert next_fast_len(block, real=True) == block
    assert count * hop >= frames + overlap
    assert rows * count % ambience._LANES == 0


@pytest.mark.parametrize("knots, frames", [(2, 100), (3, 8190), (68, 8190), (11, 12345)])
def test_the_walks_between_their_knots_are_np_interp_to_the_bit(knots, frames):
    """The gusts' and flutter's walks laid out by repeat (no search) are np.interp's values
    to the last bit, the last knot's own value at the end included."""
    places, grid = np.linspace(0.0, knots - 1.0, frames), np.arange(knots)
    for seed in range(50):
        values = np.random.default_rng(seed).standard_normal(knots)
        if seed == 0:  # where slope + the knot before is not the last knot's value
            values[-2:] = 1.0, 1e-30
        made = ambience._between_knots(values, *ambience._knot_places(knots, frames))
        assert made.tobytes() == np.interp(places, grid, values).astype(np.float32).tobytes()


@pytest.mark.parametrize("centre", [600.0, 3000.0, 4200.0, 5500.0, 9000.0])
def test_a_sweeps_partial_gains_are_the_roll_off_to_the_bit(centre):
    """``_swept_gain`` (its test on the tracks' ends, its roll-off in place) gives
    ``amp * _under_top(track * k)`` to the bit, rising and falling sweeps, under and over
    the top; and the roll-off does take partials near the top down."""
    j = np.arange(4000)
    pitch = centre * np.array([[0.9], [1.0], [1.1]])
    glide = np.array([[0.6], [-0.3], [0.0]]) / 4000  # 4200: only the first row's end is high
    track = pitch * (1.0 + glide * j)
    for k, amp in enumerate([1.0, 0.25, 0.063], start=1):
        made = creatures._swept_gain(track, k, amp, CALL_RATE)
        expected = amp * creatures._under_top(track * k, CALL_RATE)
        assert np.asarray(made).tobytes() == np.asarray(expected, dtype=float).tobytes() \
            or (np.ndim(made) == 0 and made == expected)
    if centre == 9000.0:  # 2 x 9-10 kHz + 60 %: past the 16.5 kHz top
        assert np.min(creatures._swept_gain(track, 2, 1.0, CALL_RATE)) < 0.5
