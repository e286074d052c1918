"""The archery sound models: bow release, arrow flight, impacts and tally sticks."""

from __future__ import annotations

import numpy as np
import pytest

from soundscape.errors import InstrumentError
from soundscape.music.instruments import load_instrument
from soundscape.sound.synth import render_note

SR = 48000
CASES = [("bow", "release", 0.3), ("arrow", "fly", 0.6), ("target", "leather", 0.2),
         ("target", "cloth", 0.2), ("target", "ground", 0.2), ("tally", "lay", 0.1),
         ("tally", "count", 0.1), ("tally", "take", 0.5)]


def _note(iid, articulation, duration, *, hz=None, seed=0, velocity=1.0):
    return render_note(load_instrument(iid), hz=hz, velocity=velocity, duration=duration,
                       articulation=articulation, sample_rate=SR,
                       rng=np.random.default_rng(seed))


def _spectrum(x, start_s=0.0, stop_s=None):
    part = x[int(start_s * SR):None if stop_s is None else int(stop_s * SR)]
    mag = np.abs(np.fft.rfft(part * np.hanning(part.size), 1 << 18))
    return np.fft.rfftfreq(1 << 18, 1 / SR), mag


@pytest.mark.parametrize(("iid", "articulation", "duration"), CASES)
def test_finite_unclipped_deterministic(iid, articulation, duration):
    for seed in range(3):
        x = _note(iid, articulation, duration, seed=seed)
        assert x.ndim == 1 and np.all(np.isfinite(x))
        assert 0.05 < np.max(np.abs(x)) <= 1.0, np.max(np.abs(x))
        assert x.size >= int(duration * SR)
    assert np.array_equal(_note(iid, articulation, duration, seed=5),
                          _note(iid, articulation, duration, seed=5))


def test_bow_release_is_a_string_twang():
    hz = 120.0
    x = _note("bow", "release", 0.3, hz=hz)
    freqs, mag = _spectrum(x, 0.05, 0.3)       # after the thump and the slap
    peak = freqs[np.argmax(mag)]
    assert abs(peak / hz - 1.0) <= 0.045, f"strongest partial {peak:.1f} Hz, string {hz} Hz"

    def band(f):  # energy within 3 % of f (the detune bound is 4 %)
        f0 = peak * f
        sel = (freqs > 0.97 * f0) & (freqs < 1.03 * f0)
        return float(np.sum(mag[sel] ** 2))
    # plucked at the middle: odd harmonics strong, even ones weak
    assert band(3) > 10 * band(2), (band(3), band(2))
    assert band(5) > 10 * band(4)
    energy = mag ** 2
    assert np.sum(energy[freqs < 2500]) > 0.9 * np.sum(energy)


def test_a_harder_release_is_brighter_and_slaps_the_guard_harder():
    """The release's energy moves its spectrum, not only its level (bright_k, slap_power):
    the same bow (one seed: one detune, one slap noise) loosed at velocity 1 against 0.5."""
    soft, hard = (_note("bow", "release", 0.3, hz=110.0, velocity=v) for v in (0.5, 1.0))
    freqs, soft_mag = _spectrum(soft, 0.05, 0.3)   # the twang alone
    _, hard_mag = _spectrum(hard, 0.05, 0.3)

    def upper_over_fundamental(mag):  # the 5th to the 15th harmonic against the 1st
        upper = np.sum(mag[(freqs > 500) & (freqs < 1700)] ** 2)
        return upper / np.sum(mag[(freqs > 80) & (freqs < 150)] ** 2)
    brighter = 10 * np.log10(upper_over_fundamental(hard_mag) / upper_over_fundamental(soft_mag))
    # bright_k 10: corners at the 10th and the 5th harmonic; the 5th, strongest of the
    # band, rises 20 log10((1 + 1) / (1 + 0.25)) = 4.1 dB, the others more
    assert brighter > 3.5, f"the upper harmonics rose {brighter:.1f} dB for twice the energy"

    def slap_over_twang(x):  # the first 10 ms (the slap) in 2-6 kHz, above the 16th harmonic,
        f, head = _spectrum(x, 0.0, 0.01)  # against the string's fundamental (which the
        f, tail = _spectrum(x, 0.05, 0.3)  # corner leaves as it is)
        return (np.sum(head[(f > 2000) & (f < 6000)] ** 2)
                / np.sum(tail[(f > 80) & (f < 150)] ** 2))
    gained = 10 * np.log10(slap_over_twang(hard) / slap_over_twang(soft))
    assert gained > 4.0, f"the slap rose {gained:.1f} dB over the twang for twice the energy"


@pytest.mark.parametrize("articulation", ["leather", "cloth", "ground"])
def test_hit_is_a_short_low_thud(articulation):
    x = _note("target", articulation, 0.2)
    freqs, mag = _spectrum(x)
    centroid = float(np.sum(freqs * mag ** 2) / np.sum(mag ** 2))
    assert centroid < 400, f"spectral centroid {centroid:.0f} Hz"
    cumulative = np.cumsum(x ** 2) / np.sum(x ** 2)
    t90 = np.searchsorted(cumulative, 0.9) / SR
    assert t90 < 0.08, f"90 % of the energy only after {t90 * 1000:.0f} ms"


def test_arrow_whoosh_fills_its_duration_with_band_noise():
    x = _note("arrow", "fly", 0.6, hz=1200.0)
    assert x.size == int(0.6 * SR)
    freqs, mag = _spectrum(x)
    energy = mag ** 2
    inside = energy[(freqs > 500) & (freqs < 4000)].sum()
    assert inside > 0.8 * energy.sum()
    halves = np.array_split(np.abs(x), 4)
    assert halves[1].mean() > 2 * halves[0][:len(halves[0]) // 4].mean()  # fades in


@pytest.mark.parametrize(("articulation", "clicks"), [("lay", 1), ("count", 2), ("take", 8)])
def test_tally_clicks(articulation, clicks):
    x = _note("tally", articulation, 0.1)
    envelope = np.abs(x)
    loud = envelope > 0.25 * envelope.max()
    onsets = np.flatnonzero(loud & ~np.roll(loud, 1))
    separate = [o for i, o in enumerate(onsets) if i == 0 or o - onsets[i - 1] > 0.02 * SR]
    if articulation == "take":   # clicks of a handful may fall together
        assert 3 <= len(separate) <= clicks
    else:
        assert len(separate) == clicks


def test_bad_bow_file_names_the_key(tmp_path):
    text = (load_instrument("bow").path.read_text(encoding="utf-8")
            .replace("pluck_position = 0.5", "pluck_position = 3.0"))
    path = tmp_path / "bow.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InstrumentError, match=r"params\.pluck_position=3\.0 must be"):
        load_instrument(path)
