"""The sounds of actions, measured: steps counted and timed, bands and centroids by surface,
a cup's ring modes and decay, a filling cup's rising pitch, a mat's thud, arrows' knocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import signal

from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import footstep, params_of, render_note

RATE = 16000
FULL_RATE = 48000  # where a click reaches 24 kHz
ACTIONS = {"footstep": 3.0, "robe": 1.5, "vessel": 0.4, "pour": 2.0, "shafts": 1.5, "pu": 0.3,
           "gear": 0.6}


def play(instrument_id: str, articulation: str, *, duration: float = 1.5, seed: int = 0,
         velocity: float = 0.8) -> np.ndarray:
    return render_note(load_instrument(instrument_id), hz=None, velocity=velocity,
                       duration=duration, articulation=articulation, sample_rate=RATE,
                       rng=np.random.default_rng(seed))


def band_share(audio: np.ndarray, low: float, high: float) -> float:
    power = np.abs(np.fft.rfft(audio)) ** 2
    freqs = np.fft.rfftfreq(audio.size, 1.0 / RATE)
    return float(power[(freqs >= low) & (freqs < high)].sum() / power.sum())


def centroid(audio: np.ndarray) -> float:
    power = np.abs(np.fft.rfft(audio)) ** 2
    freqs = np.fft.rfftfreq(audio.size, 1.0 / RATE)
    return float((freqs * power).sum() / power.sum())


def envelope(audio: np.ndarray, smooth_s: float = 0.01) -> np.ndarray:
    sos = signal.butter(2, 1.0 / smooth_s, fs=RATE, output="sos")
    return signal.sosfiltfilt(sos, np.abs(audio))


def band_pass(audio: np.ndarray, low: float, high: float) -> np.ndarray:
    sos = signal.butter(4, (low, high), btype="bandpass", fs=RATE, output="sos")
    return signal.sosfiltfilt(sos, audio)


def onsets(audio: np.ndarray, *, gap_s: float = 0.2, floor_db: float = -20.0) -> np.ndarray:
    """Times (s) where the envelope first rises above ``floor_db`` of its peak after a
    quiet of at least ``gap_s``."""
    env = envelope(audio, 0.005)
    loud = env > env.max() * 10 ** (floor_db / 20)
    starts = np.flatnonzero(loud[1:] & ~loud[:-1]) + 1
    keep = [s for i, s in enumerate(starts)
            if i == 0 or not loud[max(0, s - round(gap_s * RATE)):s].any()]
    return np.array(keep) / RATE


@pytest.mark.parametrize(("articulation", "cadence"), [
    ("earth", 1.6), ("stone", 1.2), ("wood", 1.6), ("earth_hurried", 3.0),
    ("wood_hurried", 3.0)])
def test_a_walk_is_its_duration_in_steps_at_the_cadence(articulation, cadence):
    audio = play("footstep", articulation, duration=5.0)
    times = onsets(audio, gap_s=0.5 / cadence)
    assert len(times) == round(5.0 * cadence)
    intervals = np.diff(times)
    assert np.all(np.abs(intervals - 1.0 / cadence) < 0.25 / cadence)  # jitter of 5-6 %


def test_surfaces_sound_as_described():
    """Ekimov & Sabatier: a low band from the normal force, a high band from friction.
    The wooden floor booms (most energy under 500 Hz), the stone step clicks (most above),
    beaten earth in between; the floor rings at its board modes (120 Hz)."""
    steps = {surface: play("footstep", surface, duration=3.0) for surface in
             ("earth", "stone", "wood")}
    low = {s: band_share(a, 20.0, 500.0) for s, a in steps.items()}
    assert low["wood"] > 0.7 and low["stone"] < 0.4 and low["stone"] < low["earth"] < low["wood"]
    for audio in steps.values():
        assert band_share(audio, 500.0, 8000.0) > 0.03  # every step scuffs
    assert centroid(steps["stone"]) > 2 * centroid(steps["wood"])
    spectrum = np.abs(np.fft.rfft(steps["wood"]))
    freqs = np.fft.rfftfreq(steps["wood"].size, 1.0 / RATE)
    low_band = (freqs > 60) & (freqs < 300)
    assert abs(freqs[low_band][np.argmax(spectrum[low_band])] - 120.0) < 15.0


def _onset_hf_db(params, articulation: str, seed: int = 3) -> float:
    """16-24 kHz against 1-4 kHz (dB) in the first 5 ms of every footfall of a 5 s walk."""
    falls, _ = footstep._footfalls(params[articulation], duration=5.0,
                                   rng=np.random.default_rng(seed))
    audio = footstep.render(params, hz=100.0, velocity=1.0, duration=5.0,
                            articulation=articulation, sample_rate=FULL_RATE,
                            rng=np.random.default_rng(seed))  # its first draws: the falls
    freqs = np.fft.rfftfreq(1024, 1.0 / FULL_RATE)
    power = sum(np.abs(np.fft.rfft(audio[s:s + round(0.005 * FULL_RATE)], 1024)) ** 2
                for s in np.round(falls * FULL_RATE).astype(int))
    high, mid = power[freqs >= 16000.0].mean(), power[(freqs >= 1000.0) & (freqs < 4000.0)].mean()
    return float(10 * np.log10(high / mid))


@pytest.mark.parametrize("articulation", ["stone", "wood", "wood_hurried"])
def test_a_step_on_a_ringing_floor_rises_over_the_heels_contact(articulation):
    """The floor's modes are set ringing by the heel's push over ``contact_s``: the ringing
    rises over several samples (an ideal one-sample push jumped to its peak in one: a click
    on every step, pre-ringing to 24 kHz in the render), each mode within 5 dB of its level,
    and the stone steps' onsets hold 16-24 kHz at least 35 dB under 1-4 kHz (28 dB with an
    ideal push)."""
    params = params_of(load_instrument("footstep"))
    row = params[articulation]
    modes = np.asarray(row["modes"], dtype=float).reshape(-1, 3)
    ideal = {**params, articulation: {**row, "contact_s": 1e-6}}
    rings = {which: footstep._floor(modes, 100.0, FULL_RATE, FULL_RATE,
                                    p[articulation]["contact_s"])
             for which, p in (("contact", params), ("ideal", ideal))}
    jump = {which: np.abs(np.diff(r)).max() / np.abs(r).max() for which, r in rings.items()}
    assert jump["ideal"] > 0.99 and jump["contact"] < 0.3
    freqs = np.fft.rfftfreq(1 << 17, 1.0 / FULL_RATE)
    at = [np.argmin(np.abs(freqs - 100.0 * ratio)) for ratio in modes[:, 0]]
    levels = {which: 20 * np.log10(np.abs(np.fft.rfft(r, 1 << 17))[at])
              for which, r in rings.items()}
    assert np.all(np.abs(levels["contact"] - levels["ideal"]) < 5.0)
    if articulation == "stone":
        assert _onset_hf_db(ideal, "stone") > -30.0
        assert _onset_hf_db(params, "stone") < -35.0


def test_a_bow_is_a_rustle_that_swells_and_kneeling_lands_on_the_mat():
    bow = play("robe", "bow", duration=2.0)
    assert 1500.0 < centroid(bow) < 5000.0
    env = envelope(bow, 0.05)
    middle = env[round(0.6 * RATE):round(1.4 * RATE)].mean()
    assert middle > 2.0 * env[:round(0.1 * RATE)].mean()
    assert middle > 2.0 * env[round(1.9 * RATE):round(2.0 * RATE)].mean()
    # knees on the mat at 60 % of the note: 75-300 Hz energy there, none when rising
    kneel, rise = play("robe", "kneel", duration=2.0), play("robe", "rise", duration=2.0)
    sos = signal.butter(2, [75.0, 300.0], btype="bandpass", fs=RATE, output="sos")
    at = slice(round(1.15 * RATE), round(1.35 * RATE))
    thud = [np.sqrt(np.mean(signal.sosfilt(sos, a)[at] ** 2)) for a in (kneel, rise)]
    assert 20 * np.log10(thud[0] / thud[1]) > 12.0


def test_a_sleeve_drawn_off_is_a_long_rustle_without_a_thud():
    """袒 and 襲: the whole sleeve, ~2 s of rustle swelling through its middle, brighter than
    a 揖's sleeves and with nothing landing on the mat."""
    dress, kneel = play("robe", "dress", duration=2.0), play("robe", "kneel", duration=2.0)
    assert 1500.0 < centroid(dress) < 5000.0 and band_share(dress, 0.0, 500.0) < 0.03
    env = envelope(dress, 0.05)
    middle = env[round(0.7 * RATE):round(1.3 * RATE)].mean()
    assert middle > 2.0 * env[:round(0.1 * RATE)].mean()
    assert middle > 2.0 * env[round(1.9 * RATE):round(2.0 * RATE)].mean()
    assert band_share(dress, 75.0, 300.0) < 0.2 * band_share(kneel, 75.0, 300.0)


def test_a_thumb_ring_and_armguard_are_leather_lower_than_a_sleeve_with_the_rings_tick():
    """決遂 / 說決拾: leather rustles lower than silk (centroid under the sleeve's, most of it
    under 3 kHz), and the ring seated on the thumb is a tick near 800 Hz late in it."""
    bracer, dress = play("robe", "bracer"), play("robe", "dress", duration=1.5)
    assert centroid(bracer) < 0.75 * centroid(dress)
    assert band_share(bracer, 400.0, 3200.0) > 0.7
    env = envelope(band_pass(bracer, 650.0, 1000.0), 0.003)
    tick = env[round(1.04 * RATE):round(1.09 * RATE)].max()  # thump_at 0.7 of 1.5 s
    around = np.median(np.concatenate([env[round(0.85 * RATE):round(1.0 * RATE)],
                                       env[round(1.15 * RATE):round(1.3 * RATE)]]))
    assert 20 * np.log10(tick / around) > 10.0


@pytest.mark.parametrize(("articulation", "t60"), [("jue_wood", 1.6 * 0.3),
                                                    ("jue_basket", 1.6 * 0.12)])
def test_a_cup_set_down_rings_in_its_ring_modes_damped_by_what_it_stands_on(articulation, t60):
    cup = play("vessel", articulation, duration=0.3)
    spectrum = np.abs(np.fft.rfft(cup, 1 << 17))
    freqs = np.fft.rfftfreq(1 << 17, 1.0 / RATE)
    for ratio in (1.0, 2.83):  # Rayleigh's n = 2, 3 ring modes of a 1400 Hz cup
        near = (freqs > 1400 * ratio * 0.97) & (freqs < 1400 * ratio * 1.03)
        assert abs(freqs[near][np.argmax(spectrum[near])] / (1400 * ratio) - 1) < 0.005
    # T60 of the lowest mode, from its band's envelope between 0.1 s and 0.3 s (after
    # the contacts and the surface's knock)
    sos = signal.butter(2, [1300.0, 1500.0], btype="bandpass", fs=RATE, output="sos")
    ring = envelope(signal.sosfilt(sos, cup), 0.01)
    a, b = (ring[round(t * RATE)] for t in (0.1, 0.3))
    measured = 0.2 * 60.0 / (20 * np.log10(a / b))
    assert measured == pytest.approx(t60, rel=0.2)


def test_a_cup_in_the_basket_crackles_and_a_jue_lands_on_three_legs():
    wood, basket = play("vessel", "jue_wood", duration=0.3), play("vessel", "zhi_basket",
                                                                  duration=0.3)
    assert band_share(basket, 5000.0, 8000.0) > 3 * band_share(wood, 5000.0, 8000.0)
    # three contacts within 25 ms: the knock band (250-1000 Hz) has three onsets
    sos = signal.butter(2, [250.0, 1000.0], btype="bandpass", fs=RATE, output="sos")
    knocks = envelope(signal.sosfilt(sos, wood), 0.0005)[:round(0.03 * RATE)]
    peaks, _ = signal.find_peaks(knocks, height=0.1 * knocks.max(), distance=RATE // 1000)
    assert len(peaks) >= 2


def test_a_filling_cup_rises_in_pitch_and_a_libation_does_not():
    """The air column over the wine shortens: c/4L from ~1.1 to ~4.3 kHz."""
    cup, libation = play("pour", "cup", duration=2.0), play("pour", "libation", duration=2.0)
    early, late = slice(round(0.1 * RATE), round(0.6 * RATE)), slice(round(1.4 * RATE),
                                                                     round(1.9 * RATE))
    assert centroid(cup[late]) > 1.5 * centroid(cup[early])
    assert centroid(libation[late]) < 1.3 * centroid(libation[early])
    assert band_share(cup, 600.0, 5000.0) > 0.6  # bubbles of 1-4 mm: 0.8-3.3 kHz


def test_arrows_gathered_knock_again_and_again_and_a_bundle_lands_on_the_bi():
    gather = play("shafts", "gather", duration=2.0)
    assert len(onsets(gather, gap_s=0.02, floor_db=-30.0)) >= 8  # ~14 knocks a second
    lay = play("shafts", "lay", duration=0.5)
    head = lay[:round(0.05 * RATE)]
    assert band_share(head, 200.0, 600.0) > 0.25  # the 楅's wooden knock under the shafts


def test_a_bow_set_down_knocks_in_its_staves_upper_modes_and_taken_up_ticks():
    """釋弓: the stave knocks the earth; a slender stave hardly radiates its lowest bending
    mode (~45 Hz), so the knock is heard in its third (~245 Hz); 執弓: less knock, more of
    the string's tick: brighter."""
    set_down, taken = play("gear", "set", duration=0.6), play("gear", "take", duration=0.6)
    power = np.abs(np.fft.rfft(set_down)) ** 2
    freqs = np.fft.rfftfreq(set_down.size, 1.0 / RATE)
    peak = freqs[np.argmax(power * (freqs > 20.0))]
    assert 200.0 < peak < 300.0

    def octave(centre: float) -> float:
        return float(np.sum(power[(freqs >= centre / np.sqrt(2)) & (freqs < centre * np.sqrt(2))]))

    assert octave(63.0) < octave(250.0) * 10 ** (-10 / 10)  # the lowest mode 10 dB under
    assert band_share(set_down, 0.0, 500.0) > 0.8
    assert centroid(taken) > 1.5 * centroid(set_down)


@pytest.mark.parametrize("instrument_id", sorted(ACTIONS))
def test_every_action_is_deterministic_unclipped_and_seeded(instrument_id):
    instrument = load_instrument(instrument_id)
    for articulation in instrument.articulations:
        duration = ACTIONS[instrument_id]
        one = play(instrument_id, articulation, duration=duration, seed=3, velocity=1.0)
        assert np.array_equal(one, play(instrument_id, articulation, duration=duration,
                                        seed=3, velocity=1.0))
        assert not np.array_equal(one, play(instrument_id, articulation, duration=duration,
                                            seed=4, velocity=1.0))
        assert np.max(np.abs(one)) <= 1.0
        assert one.size >= round(duration * RATE)


@pytest.mark.parametrize(("instrument_id", "old", "new", "message"), [
    ("footstep", "steps_per_s = 1.6", "steps_per_s = 99", r"params\.earth\.steps_per_s=99"),
    ("footstep", "contact_s = 0.00025", "", r"params\.stone\.contact_s is missing"),
    ("footstep", "contact_s = 0.00025", "contact_s = 1", r"params\.stone\.contact_s=1"),
    ("vessel", "contacts = 3", "contacts = 0", r"params\.jue_wood\.contacts=0"),
    ("pour", "radius_mm = [1.0, 4.0]", "radius_mm = [1.0]", r"params\.cup\.radius_mm="),
    ("ambience", "knocks_per_min = 1.0", "knocks_per_min = -1",
     r"params\.evening\.knocks_per_min=-1"),
    ("creatures", "pulses = 4", "pulses = 0", r"params\.cricket\.pulses=0"),
    ("vessel", "ring_s = 0.5", "ring_s = 61", r"ring_s=61 must be .* ≤ 60 s")])
def test_a_bad_value_is_refused_naming_the_file_and_key(tmp_path, instrument_id, old, new,
                                                         message):
    from soundscape.errors import InstrumentError

    text = Path(load_instrument(instrument_id).path).read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{instrument_id}.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(InstrumentError, match=f"{instrument_id}.toml: {message}"):
        _ = params_of(load_instrument(path))


def test_every_instruments_ring_is_as_long_as_its_file_says():
    """``ring_s``, where an instrument gives it, bounds how long its notes sound past their
    events' ends (an ADM master's or a stem's shared object takes the next source's sound
    that much and ``adm.HANDOVER_S`` later): the first 40 events of each of its
    articulations in each bundled rite (趨, the hurried steps, in 燕禮), made as the render
    makes them."""
    from soundscape.music.instruments import list_instruments
    from soundscape.resources import bundled_dir
    from soundscape.sequence import perform_from_file
    from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, stable_ints

    rings = {i: load_instrument(i).ring_s for i in list_instruments()}
    assert {i for i, ring in rings.items() if ring is not None} >= {"footstep", "robe",
                                                                     "voice", "vessel"}
    seen: dict[tuple[str, str], list[float]] = {}
    for rite_id in ("dashe", "xiangyinjiu", "xiangshe", "yan"):
        rite = perform_from_file(bundled_dir("cues") / f"{rite_id}.toml", seed=0)
        voice = SynthVoice().bind(rite, 0)
        notes: dict[int, DryNotes] = {}
        counted: dict[tuple[str, str], int] = {}
        for index, event in enumerate(rite.events):
            source = rite.sources[event.source]
            kind = (source.instrument, event.articulation)
            if rings.get(source.instrument) is None or counted.get(kind, 0) >= 40:
                continue
            counted[kind] = counted.get(kind, 0) + 1
            rate = voice.made_at(source, 48000)
            dry = notes.get(rate) or notes.setdefault(rate, DryNotes(voice, rate, 0,
                                                                     ByteLru(64 << 20)))
            mono = dry(event, source, dry.key(event, source),
                       stable_ints(0, index)[0] % dry.variants(source))
            seen.setdefault(kind, []).append(len(mono) / rate - event.duration)
    assert {i for i, _ in seen} == {i for i, ring in rings.items() if ring is not None}
    for (instrument, articulation), past in seen.items():
        assert max(past) <= rings[instrument], (instrument, articulation, max(past))
