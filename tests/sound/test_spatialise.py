"""Direction, delay, air, ambisonics, binaural: rendered audio against analytic values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import Listener
from soundscape.sound.ambisonics import sn3d_gains
from soundscape.sound.panning import make_panner, woodworth_itd
from soundscape.sound.propagation import Air, Surroundings, drum_directivity, paths
from soundscape.sound.render import render_blocks

FS = 48000
ANECHOIC = Surroundings(ground=False, hall=False)


def noise_voice(seconds=1.0):
    def voice(event, source, *, sample_rate, rng):
        return rng.normal(0.0, 0.1, round(seconds * sample_rate))
    return voice


def click_voice(event, source, *, sample_rate, rng):
    return np.r_[1.0, np.zeros(sample_rate // 10)]


def one_event(position, *, time=0.5, struck_face=None):
    source = Source("s", "jiangu", "鼓", "drum", "drums", tuple(position), struck_face=struck_face)
    event = Event(time, 0.5, "s", None, 1.0, "strike", "cue")
    return Performance.build([event], [], {"s": source})


def render(perf, layout, voice, *, listener=None, surroundings=ANECHOIC, seed=0):
    listener = listener or Listener((0.0, 0.0, 1.5), "north")
    blocks = render_blocks(perf, listener=listener, panner=make_panner(layout), sample_rate=FS,
                           seed=seed, voice=voice, surroundings=surroundings,
                           block_frames=FS // 2)
    return np.concatenate(list(blocks))


def lag_of(a, b):
    """Samples by which ``b`` lags ``a`` (cross-correlation peak, parabolic refinement)."""
    n = len(a) + len(b)
    corr = np.fft.irfft(np.fft.rfft(b, n) * np.conj(np.fft.rfft(a, n)), n)
    k = int(np.argmax(corr))
    y0, y1, y2 = corr[k - 1], corr[k], corr[(k + 1) % n]
    lag = k + 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2)
    return lag if lag < n / 2 else lag - n


def test_source_on_the_left_is_louder_and_earlier_in_left_channel():
    out = render(one_event((-7.0, 7.0, 1.5)), "stereo", noise_voice())  # 45° to the left
    left, right = out[:, 0], out[:, 1]
    level_db = 10 * np.log10(np.sum(left**2) / np.sum(right**2))
    lag_us = lag_of(left, right) / FS * 1e6
    pan = math.tan(math.pi * (1 - math.sin(math.radians(45))) / 4)  # g_R/g_L, acoustics §7.7
    assert level_db == pytest.approx(-20 * math.log10(pan), abs=0.1)
    assert lag_us == pytest.approx(woodworth_itd(45.0) * 1e6, abs=25), f"lag {lag_us:.0f} µs"


def test_source_on_the_right_mirrors():
    out = render(one_event((7.0, 7.0, 1.5)), "stereo", noise_voice())  # 45° right
    left, right = out[:, 0], out[:, 1]
    assert np.sum(right**2) > np.sum(left**2)
    assert lag_of(right, left) > 0


@pytest.mark.parametrize("distance", [3.0, 34.0, 125.0])
def test_delay_is_distance_over_c_within_one_sample(distance):
    air = Air(temperature_c=20.0)
    out = render(one_event((0.0, distance, 1.5)), "foa", click_voice,
                 surroundings=Surroundings(air=air, ground=False, hall=False))
    expected = (0.5 + distance / air.speed_of_sound) * FS
    arrival = int(np.argmax(np.abs(out[:, 0])))
    assert abs(arrival - expected) <= 1.0, f"arrival {arrival} vs {expected:.2f}"


@pytest.mark.parametrize("n_fft", [6144, 1 << 21])
@pytest.mark.parametrize("samples", [0.37, 2417.8])
def test_a_delays_phase_ramp_is_exact_to_float32_in_every_bin(n_fft, samples):
    """The ramp from a fine and a coarse table: e^(−jωd) to float32 rounding up to the last
    bin, even two million bins and 2 400 samples (about 17 m) out."""
    from soundscape.sound.spatialise import _grid

    ramp = _grid(Air(), n_fft, 48000).delay(samples)
    k = np.arange(n_fft // 2 + 1)
    exact = np.exp(-2j * np.pi * k * samples / n_fft)
    assert ramp.dtype == np.complex64 and ramp.shape == exact.shape
    assert np.abs(ramp - exact).max() < 1e-6



@pytest.mark.parametrize(("rate", "n_fft"), [(48000, 49152), (48000, 196608), (24000, 16384)])
@pytest.mark.parametrize(("samples", "metres"), [(0.37, 2.0), (2417.8, 30.0), (9000.2, 200.0)])
def test_summed_air_and_delay_match_the_exact_ones_in_every_bin(rate, n_fft, samples, metres):
    """``_Grid.summed``'s parabolas of air and products of phases: one path's ISO 9613-1 air
    times its delay, within 1e-4 of the air in every bin (worst near 110 Hz, where α bends),
    and the phase of e^(−jωd) to 1e-5 rad."""
    from soundscape.sound.spatialise import _DB_TO_NEPER, _grid

    grid = _grid(Air(), n_fft, rate)
    assert grid.block >= 64  # these grids are fine enough for it
    nepers = -metres * _DB_TO_NEPER
    got = grid.summed([samples], [nepers], np.array([[0.5]]))[0]
    k = np.arange(n_fft // 2 + 1)
    air = np.exp(Air().absorption_db_per_m(k * rate / n_fft) * nepers)
    exact = 0.5 * air * np.exp(-2j * np.pi * k * samples / n_fft)
    assert got.dtype == np.complex64 and got.shape == exact.shape
    assert (np.abs(got - exact) / (0.5 * air)).max() < 1e-4
    assert np.abs(np.angle(got / exact)).max() < 1e-5


@pytest.mark.parametrize("layout", ["stereo", "binaural", "7.1.4"])
def test_responses_by_matrix_products_match_path_by_path(layout):
    """A note's transfer functions over the walled court's paths (its images: a dozen and
    more), made by ``_Grid.summed`` (a matrix product a channel), against the path-by-path
    sum of air × delay × gain × head shadow: within 1e-4 of the largest bin."""
    from soundscape.site.courtyard import load_site
    from soundscape.sound.court import load_court
    from soundscape.sound.spatialise import Spatialiser, _grid

    site = load_site()
    seat = site.listener("gong_wei")
    listener = Listener(seat.position, seat.facing)
    spatialiser = Spatialiser(make_panner(layout), Surroundings(court=load_court(site, "bare")),
                              FS)
    point, n_fft = (6.0, -40.0, 1.0), 98304
    grid = _grid(spatialiser.surroundings.air, n_fft, FS)
    arrivals, start, _ = spatialiser.arrivals(point, listener, None)
    assert len(arrivals) > 8 and grid.block
    per_channel = layout != "7.1.4"
    fast, mix = spatialiser._summed(arrivals, start, grid, per_channel)
    slow, slow_mix = spatialiser._exact(arrivals, start, grid, per_channel)
    assert (mix is None) == (slow_mix is None) and fast.shape == slow.shape
    assert np.abs(fast - slow).max() < 1e-4 * np.abs(slow).max()
    assert spatialiser.response(point, listener, None, n_fft)[0] is not None


@pytest.mark.parametrize("layout", ["5.1", "7.1.4", "hoa3"])
@pytest.mark.parametrize(("seconds", "made_by"), [(3.0, "_summed"), (0.05, "_exact")])
def test_a_long_note_made_a_row_at_a_time_is_the_same_bits(layout, seconds, made_by,
                                                            monkeypatch):
    """A long note's rows (paths or channels) are made one at a time, response and inverse
    transform, so that its response, their products and the transforms are not all held at
    once: the heard note is the same, bit for bit, as when all its rows go at once (both
    ways of making a response: a long note's, and a short one's, by forcing it)."""
    from soundscape.site.courtyard import load_site
    from soundscape.sound import spatialise as module
    from soundscape.sound.court import load_court

    site = load_site()
    seat = site.listener("gong_wei")
    listener = Listener(seat.position, seat.facing)
    mono = np.random.default_rng(1).normal(0.0, 0.1, round(seconds * FS)).astype(np.float32)
    used = []
    made = getattr(module.Spatialiser, made_by)
    monkeypatch.setattr(module.Spatialiser, made_by,
                        lambda self, *args: used.append(args[-1]) or made(self, *args))

    def heard(at_once_bytes: int):
        monkeypatch.setattr(module, "_AT_ONCE_BYTES", at_once_bytes)
        spatialiser = module.Spatialiser(make_panner(layout),
                                         Surroundings(court=load_court(site, "bare")), FS)
        return spatialiser(mono, (6.0, -40.0, 1.0), listener, None)

    start, together, mix = heard(1 << 40)
    again, apart, mix_again = heard(0)
    assert together.shape[1] > 1  # more rows than one
    assert start == again and apart.flags.c_contiguous
    assert np.array_equal(apart, together)
    assert used[0] == slice(None) and all(rows.step is None for rows in used[1:])
    assert used[1:] == [slice(row, row + 1) for row in range(together.shape[1])]  # then each
    assert (mix is None and mix_again is None) or np.array_equal(mix, mix_again)


def test_call_from_dahou_arrives_late_and_duller():
    near = render(one_event((0.0, 10.0, 1.5)), "foa", noise_voice(0.5))[:, 0]
    far = render(one_event((0.0, 125.0, 1.5)), "foa", noise_voice(0.5))[:, 0]
    onset = np.flatnonzero(np.abs(far) > 1e-3 * np.abs(far).max())[0] / FS - 0.5
    assert onset == pytest.approx(125.0 / Air().speed_of_sound, abs=0.002)
    assert onset == pytest.approx(0.36, abs=0.01)

    def brightness(x):
        spectrum = np.abs(np.fft.rfft(x)) ** 2
        freqs = np.fft.rfftfreq(len(x), 1 / FS)
        return spectrum[freqs > 4000].sum() / spectrum[freqs < 1000].sum()
    assert brightness(far) < 0.5 * brightness(near)


def test_air_absorption_lowers_high_band_by_iso_amount():
    air = Air(temperature_c=20.0, humidity_pct=50.0)
    surroundings = Surroundings(air=air, ground=False, hall=False)
    d1, d2 = 10.0, 125.0
    # same seed and event index → the same noise from both distances
    a = render(one_event((0.0, d1, 1.5)), "foa", noise_voice(), surroundings=surroundings)[:, 0]
    b = render(one_event((0.0, d2, 1.5)), "foa", noise_voice(), surroundings=surroundings)[:, 0]
    n = max(len(a), len(b))  # a delay changes only the phase, so compare magnitudes
    freqs = np.fft.rfftfreq(n, 1 / FS)
    ratio = np.abs(np.fft.rfft(b, n)) ** 2 / np.abs(np.fft.rfft(a, n)) ** 2
    for low, high in [(3000, 5000), (7000, 9000), (14000, 18000)]:
        band = (freqs >= low) & (freqs < high)
        measured = 10 * np.log10(ratio[band].mean()) + 20 * np.log10(d2 / d1)  # undo spreading
        expected = 10 * np.log10(np.mean(
            10 ** (-air.absorption_db_per_m(freqs[band]) * (d2 - d1) / 10)))
        assert measured == pytest.approx(expected, abs=1.0), f"{low}-{high} Hz"
    assert expected < -20  # the test band really is attenuated


def _beamformer_direction(signals, order):
    """Steer a basic (2n+1)-weighted beam over the sphere; return the loudest direction."""
    weights = np.repeat([2 * n + 1 for n in range(order + 1)],
                        [2 * n + 1 for n in range(order + 1)])
    cov = signals.T @ signals

    def power(az, el):
        g = sn3d_gains(order, az, el) * weights
        return g @ cov @ g

    grid = [(az, el) for az in range(-180, 180, 5) for el in range(-85, 90, 5)]
    az0, el0 = max(grid, key=lambda d: power(*d))
    fine = [(az0 + da, el0 + de) for da in np.arange(-5, 5.1, 0.5)
            for de in np.arange(-5, 5.1, 0.5)]
    return max(fine, key=lambda d: power(*d))


def _angle(a, b):
    def vec(az, el):
        az, el = math.radians(az), math.radians(el)
        return np.array([math.cos(az) * math.cos(el), math.sin(az) * math.cos(el), math.sin(el)])
    return math.degrees(math.acos(min(1.0, float(vec(*a) @ vec(*b)))))


# ISO 9613-2:1996 Table 2: α in dB/km at the octave mid-bands 63 Hz … 8 kHz, computed by
# the standard from ISO 9613-1 at 101.325 kPa (the rows it prints; docs/sources.md A7.3
# cross-checks the 20 °C/70 % row). Each value is printed to 3 significant figures or 0.1.
_ISO_9613_2_TABLE_2 = {
    (10.0, 70.0): (0.1, 0.4, 1.0, 1.9, 3.7, 9.7, 32.8, 117.0),
    (20.0, 70.0): (0.1, 0.3, 1.1, 2.8, 5.0, 9.0, 22.9, 76.6),
    (30.0, 70.0): (0.1, 0.3, 1.0, 3.1, 7.4, 12.7, 23.1, 59.3),
    (15.0, 20.0): (0.3, 0.6, 1.2, 2.7, 8.2, 28.2, 88.8, 202.0),
    (15.0, 50.0): (0.1, 0.5, 1.2, 2.2, 4.2, 10.8, 36.2, 129.0),
    (15.0, 80.0): (0.1, 0.3, 1.1, 2.4, 4.1, 8.3, 23.7, 82.8),
}


@pytest.mark.parametrize(("weather", "table_db_per_km"), _ISO_9613_2_TABLE_2.items())
def test_absorption_matches_the_standards_table(weather, table_db_per_km):
    """α within half a unit of the table's last printed digit plus 1 % (its rounding)."""
    exact_mid_bands = 1000.0 * 10 ** (np.arange(-12, 10, 3) / 10)  # 63.1 Hz … 7943 Hz
    alpha = Air(*weather).absorption_db_per_m(exact_mid_bands) * 1000.0
    for value, expected in zip(alpha, table_db_per_km, strict=True):
        last_digit = 0.1 if expected < 100 else 1.0
        assert value == pytest.approx(expected, abs=last_digit / 2 + 0.01 * expected)


def test_absorption_at_20_degrees_50_percent_is_the_iso_curve():
    """20 °C, 50 %: ≈ 0.1 dB/km at 63 Hz, ≈ 4.7 at 1 kHz, ≈ 104 at 8 kHz (docs/sources.md A7.3;
    not a row of ISO 9613-2 Table 2, so checked at 1 %)."""
    alpha = Air(20.0, 50.0).absorption_db_per_m([63.0957, 1000.0, 7943.28]) * 1000.0
    assert alpha == pytest.approx([0.12, 4.66, 103.9], rel=0.01, abs=0.005)


@pytest.mark.parametrize(("layout", "order"), [("foa", 1), ("hoa3", 3)])
@pytest.mark.parametrize("position", [(-8.0, 6.0, 6.0), (5.0, -9.0, 0.5)])
def test_ambisonic_encode_decodes_to_source_direction(layout, order, position):
    listener = Listener((0.0, 0.0, 1.5), "north")
    truth = listener.direction_to(position)[:2]
    out = render(one_event(position), layout, noise_voice(0.3), listener=listener)
    assert out.shape[1] == (order + 1) ** 2
    found = _beamformer_direction(out, order)
    assert _angle(found, truth) < 5.0, f"decoded {found}, source at {truth}"


def test_ambix_has_no_condon_shortley_phase_and_unit_w():
    g = sn3d_gains(1, 90.0, 0.0)  # straight left
    assert g == pytest.approx([1.0, 1.0, 0.0, 0.0], abs=1e-12)  # W, Y=+1 (no CS sign flip)
    g = sn3d_gains(3, 0.0, 90.0)  # straight up
    assert g[2] == pytest.approx(1.0) and g[12] == pytest.approx(1.0)


def test_binaural_itd_at_90_degrees_near_spherical_head():
    out = render(one_event((-5.0, 0.0, 1.5)), "binaural", noise_voice())
    left, right = out[:, 0], out[:, 1]
    itd_us = lag_of(left, right) / FS * 1e6
    woodworth = woodworth_itd(90.0) * 1e6  # 656 µs (docs/sources.md A7.5)
    assert itd_us == pytest.approx(woodworth, rel=0.1), f"ITD {itd_us:.0f} µs vs {woodworth:.0f}"
    # head shadow: the far ear loses the highs, not the lows
    freqs = np.fft.rfftfreq(len(left), 1 / FS)
    spec_l, spec_r = np.abs(np.fft.rfft(left)) ** 2, np.abs(np.fft.rfft(right)) ** 2
    high = (freqs > 6000) & (freqs < 12000)
    low = freqs < 200
    ild_high = 10 * np.log10(spec_l[high].sum() / spec_r[high].sum())
    ild_low = 10 * np.log10(spec_l[low].sum() / spec_r[low].sum())
    assert ild_high > 10 and ild_low < 2, (ild_high, ild_low)


@pytest.mark.parametrize("layout", ["ring8", "5.1"])
@pytest.mark.parametrize("azimuth", [0.0, 22.5, 75.0, -140.0, 180.0])
def test_vbap_constant_power_and_pair(layout, azimuth):
    panner = make_panner(layout)
    gains = panner.terms(azimuth, 0.0).gains
    assert float(gains @ gains) == pytest.approx(1.0)
    assert np.count_nonzero(gains > 1e-9) <= 2
    if layout == "5.1":
        assert gains[panner.channels.index("LFE")] == 0.0
    if layout == "ring8" and azimuth == 22.5:
        assert gains[0] == pytest.approx(gains[1])


@pytest.mark.parametrize("layout", ["7.1", "7.1.4"])
def test_each_loudspeaker_alone_plays_a_source_in_its_direction(layout):
    panner = make_panner(layout)
    elevations = panner.elevations_deg or (0.0,) * len(panner.channels)
    for i, (az, el) in enumerate(zip(panner.azimuths_deg, elevations, strict=True)):
        if panner.channels[i] == "LFE":
            continue
        gains = panner.terms(az, el).gains
        assert gains[i] == pytest.approx(1.0) and float(gains @ gains) == pytest.approx(1.0)


@pytest.mark.parametrize(("azimuth", "elevation"), [(0.0, 60.0), (90.0, 15.0), (-160.0, 45.0),
                                                    (20.0, -40.0), (180.0, -90.0)])
def test_7_1_4_pans_over_triangles_at_constant_power(azimuth, elevation):
    panner = make_panner("7.1.4")
    gains = panner.terms(azimuth, elevation).gains
    assert float(gains @ gains) == pytest.approx(1.0)
    assert np.count_nonzero(gains > 1e-9) <= 3
    assert gains[panner.channels.index("LFE")] == 0.0
    heights = [panner.channels.index(n) for n in ("Ltf", "Rtf", "Ltr", "Rtr")]
    up = float(gains[heights] @ gains[heights])
    assert (up > 0.5) == (elevation > 20.0)  # above the ear: mostly the height speakers


def test_7_1_4_height_speakers_count_once_in_loudness():
    weights = make_panner("7.1.4").loudness_weights()
    # BS.1770: 1.41 for the surrounds at 60°–120° on the horizon (Lss, Rss), 0 for the LFE
    assert list(weights) == [1, 1, 1, 0, 1, 1, 1.41, 1.41, 1, 1, 1, 1]


def test_custom_speaker_list_pans_to_nearest():
    panner = make_panner((30.0, -30.0, 110.0, -110.0))
    assert np.argmax(panner.terms(100.0, 0.0).gains) == 2


def test_drum_is_louder_in_front_of_struck_face():
    front = drum_directivity((0.0, -1.0, 0.0), np.array([0.0, -5.0, 0.0]))
    back = drum_directivity((0.0, -1.0, 0.0), np.array([0.0, 5.0, 0.0]))
    assert 20 * math.log10(front / back) == pytest.approx(8.0, abs=0.5)
    ahead = render(one_event((0.0, 10.0, 1.5), struck_face=(0, -1, 0)), "foa", click_voice)
    behind = render(one_event((0.0, 10.0, 1.5), struck_face=(0, 1, 0)), "foa", click_voice)
    assert np.abs(ahead[:, 0]).max() == pytest.approx(np.abs(behind[:, 0]).max() * front / back)


def test_ground_and_hall_reflections_arrive_at_image_distances():
    source, ear = (3.0, -20.0, 1.0), (0.0, -5.0, 1.5)
    found = {p.kind: p for p in paths(source, ear, surroundings=Surroundings())}
    assert set(found) == {"direct", "ground", "hall"}
    assert found["ground"].distance == pytest.approx(math.dist((3.0, -20.0, -1.0), ear))
    assert found["hall"].distance == pytest.approx(math.dist((3.0, 20.0, 1.0), ear))
    assert found["ground"].gain < found["direct"].gain
    # the reflections show up in the rendered click at their delays
    perf = one_event(source)
    listener = Listener(ear, "north")
    w = render(perf, "foa", click_voice, listener=listener, surroundings=Surroundings())[:, 0]
    c = Air().speed_of_sound
    for kind in ("direct", "ground", "hall"):
        k = round((0.5 + found[kind].distance / c) * FS)
        assert np.abs(w[k - 2:k + 3]).max() > 0.3 * found[kind].gain, kind


def test_near_field_clamp_bounds_level():
    surroundings = Surroundings(ground=False, hall=False, near_field_m=0.5)
    (touching,) = paths((0.0, 0.01, 1.5), (0.0, 0.0, 1.5), surroundings=surroundings)
    assert touching.gain == pytest.approx(2.0)


def test_a_heard_note_is_frame_major():
    """The heard note's channels come frame-major and contiguous (cut from a longer inverse
    transform, which it holds only for as long as it is mixed: it is made for one event)."""
    from soundscape.sound.spatialise import Spatialiser

    spatialiser = Spatialiser(make_panner("stereo"), ANECHOIC, FS)
    mono = np.random.default_rng(0).normal(0.0, 0.1, 30000).astype(np.float32)
    _, signals, mix = spatialiser(mono, (3.0, 10.0, 1.5), Listener((0.0, 0.0, 1.5), "north"),
                                  None)
    assert mix is None and signals.dtype == np.float32 and signals.flags.c_contiguous
    assert signals.shape[1] == 2 and signals.shape[0] >= len(mono)


def test_a_spatialiser_is_freed_when_its_render_is_done():
    """Nothing outside a spatialiser keeps it (its arrivals are its own): a kit renders 64 of
    the court's responses in one process, and each spatialiser holds up to RESPONSE_BYTES
    of transfer functions (a cache on the class kept them all: ~8 MiB a render)."""
    import weakref

    from soundscape.sound.spatialise import Spatialiser

    spatialiser = Spatialiser(make_panner("stereo"), ANECHOIC, FS)
    listener = Listener((0.0, 0.0, 1.5), "north")
    start, out, _ = spatialiser(np.ones(64, np.float32), (3.0, 10.0, 1.5), listener, None)
    assert spatialiser.arrivals((3.0, 10.0, 1.5), listener, None)[1] == start
    assert np.abs(out).max() > 0
    gone = weakref.ref(spatialiser)
    del spatialiser
    assert gone() is None
