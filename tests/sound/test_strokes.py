"""No two strokes alike: renderings per one-shot class, the stroke's scatter and what it does
to the spectrum, the bells' upper partials and the B-tones struck by the pieces' side rule."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import special

from soundscape.music.instruments import EACH, load_instrument
from soundscape.music.tuning import default_tuning
from soundscape.performance import Source
from soundscape.sound.likeness import (
    dry_strokes,
    highest_correlation,
    pair_correlations,
    share_above,
)
from soundscape.sound.notes import EACH as EVERY_EVENT
from soundscape.sound.notes import SynthVoice
from soundscape.sound.synth import bell_tones, params_of, render_note
from soundscape.sound.synth.membrane import Stroke, render_stroke

RATE = 22050
#: The instruments whose sounds are strikes, plucks, steps and releases (one-shots).
ONE_SHOTS = ("jiangu", "pi", "tao", "bianzhong", "bo", "bianqing", "se", "bow", "tally",
             "target", "footstep", "shafts", "pu", "robe", "vessel", "pour")
#: Their instruments whose files keep many renderings of every repeated note: the others
#: play many different notes (the 瑟 230, footsteps 197 walks), three renderings each
#: already make hundreds of sounds of their class.
MANY = ("jiangu", "pi", "tao", "bianzhong", "bo", "bianqing", "bow", "tally", "target", "pu")


def peak(audio: np.ndarray, near_hz: float, *, start_s: float = 0.0, length_s: float = 1.0,
         sample_rate: int = RATE, search_cents: float = 60.0) -> tuple[float, float]:
    """The strongest spectral peak within ``search_cents`` of ``near_hz``: (Hz, dB)."""
    start = round(start_s * sample_rate)
    segment = audio[start:start + round(length_s * sample_rate)]
    size = 1 << 19
    spectrum = np.abs(np.fft.rfft(segment * np.hanning(segment.size), size))
    freqs = np.fft.rfftfreq(size, 1.0 / sample_rate)
    lo, hi = near_hz * 2 ** (-search_cents / 1200), near_hz * 2 ** (search_cents / 1200)
    band = np.flatnonzero((freqs >= lo) & (freqs <= hi))
    i = band[np.argmax(spectrum[band])]
    a, b, c = np.log(spectrum[i - 1:i + 2] + 1e-300)
    shift = 0.5 * (a - c) / (a - 2 * b + c)
    return float(freqs[i] + shift * (freqs[1] - freqs[0])), float(20 * np.log10(spectrum[i]))


def cents(measured: float, expected: float) -> float:
    return 1200.0 * math.log2(measured / expected)


@functools.cache
def whole_rite():
    from soundscape.sequence import perform_from_file

    return perform_from_file(seed=0)


@functools.cache
def lishou():
    from soundscape.sequence import perform_from_file

    return perform_from_file(seed=0, from_section="s32", to_section="s32")


@pytest.mark.parametrize("instrument_id", MANY)
def test_one_shot_instruments_keep_many_renderings_of_a_repeated_note(instrument_id):
    instrument = load_instrument(instrument_id)
    source = Source(f"x.{instrument_id}", instrument_id, instrument.name, instrument_id, "east",
                    (0.0, 0.0, 0.0))
    assert instrument.renderings == EACH or instrument.renderings >= 16
    assert SynthVoice().variants(source) >= 16


def test_every_one_shot_class_of_the_rite_sounds_16_renderings_or_more():
    """Per (instrument, articulation) of the rite: the different renderings the render
    makes (note keys × the variants their events pick): at least 16 in every class of 32
    strokes or more, and 16 to pick from in every class of 16 or more (before: 172 bow
    releases were 3 sounds, 117 tally sounds 9)."""
    from soundscape.sound.notes import ByteLru, DryNotes, event_variants

    performance = whole_rite()
    voice = SynthVoice()
    variants = event_variants(performance, DryNotes(voice, 48000, 0, ByteLru(0)), 0)
    kinds: dict[tuple[str, str], set] = {}
    counts: dict[tuple[str, str], int] = {}
    for index, event in enumerate(performance.events):
        source = performance.sources[event.source]
        if source.instrument not in ONE_SHOTS:
            continue
        variant = variants[index]
        group = (source.instrument, event.articulation)
        kinds.setdefault(group, set()).add((voice.key(event, source), variant))
        counts[group] = counts.get(group, 0) + 1
    assert ("bow", "release") in kinds and ("se", "pluck") in kinds
    for group, found in kinds.items():
        if counts[group] >= 32:
            assert len(found) >= 16, (group, len(found), counts[group])
        if counts[group] >= 16:
            keys = {key for key, _ in found}
            source = next(s for s in performance.sources.values() if s.instrument == group[0])
            assert len(keys) * voice.variants(source) >= 16, group


def test_every_drum_bell_and_stone_stroke_is_its_own_rendering():
    for instrument_id in ("jiangu", "bianzhong", "bo", "bianqing"):
        source = Source("x", instrument_id, "x", "x", "east", (0.0, 0.0, 0.0))
        assert SynthVoice().variants(source) == EVERY_EVENT == 1 << 32


@functools.cache
def lishou_jiangu() -> tuple[list[str], np.ndarray, int]:
    """Every 建鼓 stroke of 貍首 as the render makes it (729, three drums): the drum of
    each, the correlation of every two in the drum's band, and how many renderings."""
    performance = lishou()
    indexes = [i for i, e in enumerate(performance.events)
               if performance.sources[e.source].instrument == "jiangu"]
    notes = dry_strokes(performance, indexes, sample_rate=8000)
    matrix = pair_correlations(notes, band=(30.0, 300.0), sample_rate=8000)
    return ([performance.events[i].source for i in indexes], matrix,
            len({n.tobytes() for n in notes}))


def test_no_two_jiangu_strokes_of_lishou_are_one_sound():
    """All 693 建鼓 strokes of 貍首 (729 while the first shooter of a 拾 loosed on a stroke
    of its own, off the beat): each its own rendering, and fewer pairs alike in the drum's
    band than the point and force alone made (8.0 % of pairs above r 0.9 before the hands,
    the bounce and the head's wander; 5.6 % with them, 5.3 % of the 693; before any
    scatter: 3 renderings per velocity, the hardest 101 strokes at 0.997). Any two below
    0.9 is not met (docs/instruments.md says why)."""
    drums, matrix, renderings = lishou_jiangu()
    assert len(drums) == renderings == 693
    pairs = matrix[np.triu_indices(len(drums), 1)]
    assert np.median(pairs) < 0.6
    assert np.mean(pairs > 0.9) < 0.065


def test_neighbouring_strokes_of_one_drum_are_not_one_sound():
    """Successive strokes of each 建鼓 of 貍首 land apart on the head and, the hands taking
    turns, on its two sides: no two in a row correlate at 0.9 or more in the drum's band,
    and 19 in 20 stay under 0.83 (highest 0.85-0.88 a drum, 95th percentile 0.78-0.81;
    before the hands: highest 0.89-0.90; before the sequence of places: up to 0.997). The
    highest of ~210 pairs moves by a few thousandths from machine to machine (west 2: 0.880
    on one, 0.882 on another, the same code), so the bound on it is the issue's 0.9."""
    drums, matrix, _ = lishou_jiangu()
    for drum in sorted(set(drums)):
        mine = [k for k, who in enumerate(drums) if who == drum]
        neighbours = np.diagonal(matrix[np.ix_(mine, mine)], 1)
        assert len(mine) > 200
        assert neighbours.max() < 0.9, drum
        assert np.percentile(neighbours, 95) < 0.83, drum
        assert np.median(neighbours) < 0.65, drum


def test_strokes_are_the_same_bytes_for_the_same_seed():
    performance = lishou()
    indexes = [i for i, e in enumerate(performance.events)
               if performance.sources[e.source].instrument == "jiangu"][:4]
    first = dry_strokes(performance, indexes, sample_rate=8000)
    again = dry_strokes(performance, indexes, sample_rate=8000)
    other = dry_strokes(performance, indexes, seed=1, sample_rate=8000)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(first, again, strict=True))
    assert all(a.tobytes() != b.tobytes() for a, b in zip(first, other, strict=True))


def test_bow_releases_are_not_three_sounds():
    performance = whole_rite()
    indexes = [i for i, e in enumerate(performance.events)
               if performance.sources[e.source].instrument == "bow"]
    notes = dry_strokes(performance, indexes, sample_rate=8000)
    assert len(notes) > 100
    assert len({n.tobytes() for n in notes}) >= 16


JIANGU = params_of(load_instrument("jiangu"))
HZ = 45.0


#: The 建鼓 with its (m,1) and (0,1) modes alone: the (0,2) and (1,2) stand within 120 cents
#: of the (0,1) antiparallel and (2,1) modes, too near to read each level apart.
FIRST_RING = {**JIANGU, "modes": [row for row in JIANGU["modes"] if row["shape"][1] == 1]}


def stroke(radius: float, angle: float = 0.0, force: float = 0.2,
           params=FIRST_RING) -> np.ndarray:
    """A soft 建鼓 stroke (next to no glide) at a chosen point, the noise seeded alike."""
    return render_stroke(params, hz=HZ, velocity=force, articulation="strike",
                         sample_rate=RATE, rng=np.random.default_rng(7),
                         stroke=Stroke(force, radius, 0.325, angle))


@pytest.mark.parametrize(("ratio", "m", "n"), [(1.0, 0, 1), (1.72, 1, 1), (2.72, 2, 1)])
def test_the_striking_point_excites_each_mode_as_its_bessel_shape(ratio, m, n):
    near, far = stroke(0.15), stroke(0.5)
    zero = special.jn_zeros(m, n)[-1]
    expected = 20 * np.log10(abs(special.jv(m, zero * 0.5) / special.jv(m, zero * 0.15)))
    got = peak(far, ratio * HZ, start_s=0.1)[1] - peak(near, ratio * HZ, start_s=0.1)[1]
    assert got == pytest.approx(expected, abs=0.5)


def test_opposite_sides_of_the_head_swing_the_odd_modes_the_other_way():
    """Strokes at θ and θ + π: the (1,1) modes cancel in their sum, the (0,1) doubles."""
    one, other = stroke(0.45, 0.3), stroke(0.45, 0.3 + np.pi)
    both = one + other
    for ratio in (1.72, 1.86):
        assert peak(both, ratio * HZ, start_s=0.1)[1] < peak(one, ratio * HZ, start_s=0.1)[1] - 40
    assert peak(both, HZ, start_s=0.1)[1] == pytest.approx(peak(one, HZ, start_s=0.1)[1]
                                                           + 20 * np.log10(2), abs=0.1)


def test_a_harder_stroke_is_brighter():
    """The stick's contact shortens as force^-1/5: the (5,1) mode gains on the (0,1)."""
    soft, hard = stroke(0.3, force=0.2), stroke(0.3, force=1.0)

    def top_over_bottom(audio):
        return peak(audio, 5.46 * HZ, length_s=0.3)[1] - peak(audio, HZ, length_s=0.3)[1]

    assert top_over_bottom(hard) > top_over_bottom(soft) + 0.3


def test_each_drum_has_its_own_pitch():
    drum = load_instrument("jiangu")
    lows = [peak(render_note(drum, hz=None, velocity=0.2, duration=0.5, articulation="strike",
                             sample_rate=RATE, rng=np.random.default_rng(1), performer=who),
                 HZ, start_s=0.3, search_cents=120)[0]
            for who in ("east.jiangu", "west.jiangu", "west.jiangu_2")]
    assert all(abs(cents(hz, HZ)) <= 1200 * math.log2(1.04) + 1 for hz in lows)
    assert min(abs(cents(a, b)) for a, b in ((lows[0], lows[1]), (lows[1], lows[2]),
                                             (lows[0], lows[2]))) > 5


def bell(name: str, articulation: str, *, bells: str = "ideal", seed: int = 3) -> np.ndarray:
    return render_note(load_instrument("bianzhong"), hz=default_tuning().pitch(name).hz,
                       velocity=0.8, duration=1.0, articulation=articulation,
                       sample_rate=RATE, rng=np.random.default_rng(seed), pitch=name,
                       bells=bells)


def test_bell_partials_stand_where_shen_measured_them():
    """Shen (Sci. Am. 1987): 1 : B : 2B : 2.81 : 3 of the A-tone (B the B-tone)."""
    a_hz = default_tuning().pitch("林鍾").hz
    b_hz = bell_tones(load_instrument("bianzhong"), hz=a_hz, pitch="林鍾")[1]
    a_stroke, b_stroke = bell("林鍾", "A"), bell("林鍾", "B")
    for ratio in (1.0, 2.81, 3.0):
        assert abs(cents(peak(a_stroke, ratio * a_hz, search_cents=20)[0], ratio * a_hz)) < 2
    for hz in (b_hz, 2 * b_hz):
        assert abs(cents(peak(b_stroke, hz, search_cents=20)[0], hz)) < 2


def test_bells_and_stones_carry_their_upper_partials():
    """The upper modes above 2 kHz ring: a 黃鍾 bell's at 7.7 and 9.3 × (2.0, 2.4 kHz), a
    黃鍾 stone's 13.344 × (3.5 kHz); and a 林鍾 bell stroke holds more than −26 dB of its
    energy above 2 kHz (before: −27 dB; 黃鍾: −45 dB, now −34)."""
    hz = default_tuning().pitch("黃鍾").hz
    stroke_a = bell("黃鍾", "A")
    fundamental = peak(stroke_a, hz, length_s=0.2)[1]
    for ratio in (7.7, 9.3):
        found, level = peak(stroke_a, ratio * hz, length_s=0.2, search_cents=20)
        assert abs(cents(found, ratio * hz)) < 3 and level > fundamental - 40
    stone = render_note(load_instrument("bianqing"), hz=hz, velocity=0.8, duration=1.0,
                        articulation="strike", sample_rate=RATE, rng=np.random.default_rng(3),
                        pitch="黃鍾")
    found, level = peak(stone, 13.344 * hz, length_s=0.2, search_cents=20)
    assert abs(cents(found, 13.344 * hz)) < 3 and level > peak(stone, hz, length_s=0.2)[1] - 40
    assert 10 * np.log10(share_above(bell("林鍾", "A"), hz=2000.0, sample_rate=RATE)) > -26
    assert 10 * np.log10(share_above(bell("黃鍾", "A"), hz=2000.0, sample_rate=RATE)) > -40


SIDE = {"姑洗": "黃鍾", "蕤賓": "太簇", "應鍾": "林鍾"}  # 角 變徵 變宮 of 黃鍾 on 宮 商 徵 bells


def test_the_rite_strikes_b_tones_where_the_side_rule_says():
    """肆夏, 陔夏, 驁夏 (黃鍾清宮): every bell note on 角, 變徵, 變宮 is a 側鼓 stroke, and
    no other is."""
    performance = whole_rite()
    strokes = [e for e in performance.events
               if performance.sources[e.source].instrument == "bianzhong"]
    side = [e for e in strokes if e.articulation == "side"]
    assert len(side) > 50
    for event in strokes:
        assert (event.articulation == "side") == (event.pitch.lu in SIDE), event
    assert {e.piece for e in side} == {"sixia", "gaixia", "aoxia"} & {e.piece for e in strokes}


@pytest.mark.parametrize("note", sorted(SIDE))
@pytest.mark.parametrize("bells", ["ideal", "zeng"])
def test_a_side_stroke_sounds_the_b_tone_of_the_bell_a_third_below(note, bells):
    """The note sounds as the B-tone of its bell (in the Zeng set, as that bell's B-tone
    deviates), and the bell's own A-tone is there at the cross level (−20 dB)."""
    instrument = load_instrument("bianzhong")
    tuning = default_tuning()
    a_hz, b_hz = bell_tones(instrument, hz=tuning.pitch(SIDE[note]).hz, pitch=SIDE[note],
                            bells=bells)
    if bells == "ideal":
        assert abs(cents(b_hz, tuning.pitch(note).hz)) < 1e-6
    audio = render_note(instrument, hz=tuning.pitch(note).hz, velocity=0.8, duration=1.0,
                        articulation="side", sample_rate=RATE, rng=np.random.default_rng(0),
                        pitch=note, bells=bells)
    found, level = peak(audio, b_hz, search_cents=30)
    assert abs(cents(found, b_hz)) < 1.0
    assert level - peak(audio, a_hz, search_cents=30)[1] == pytest.approx(20.0, abs=6.0)


def test_a_side_stroke_no_bell_has_is_refused():
    from soundscape.errors import InstrumentError

    with pytest.raises(InstrumentError, match="B-tone"):
        render_note(load_instrument("bianzhong"), hz=default_tuning().pitch("大呂").hz,
                    velocity=0.8, duration=0.5, articulation="side", sample_rate=RATE,
                    rng=np.random.default_rng(0), pitch="大呂")


def test_highest_correlation_of_one_sound_repeated_is_one():
    note = np.sin(np.arange(4000) / 8000 * 2 * np.pi * 100) * np.exp(-np.arange(4000) / 800)
    assert highest_correlation([note, note], band=(30, 300), sample_rate=8000) == \
        pytest.approx(1.0)
    assert highest_correlation([note, -note], band=(30, 300), sample_rate=8000) < 0


def test_a_drums_strokes_land_along_a_low_discrepancy_sequence():
    """The radius coordinate of any two strokes within 8 of each other lies at least
    0.09 apart (golden-ratio steps: the three-distance theorem), neighbours 0.38 apart;
    a drum's seed moves the whole sequence."""
    from soundscape.sound.synth.membrane import strike_places

    places = strike_places(300, (0.3, 0.7))
    for lag in range(1, 8):
        gap = np.abs(places[lag:, 0] - places[:-lag, 0])
        gap = np.minimum(gap, 1.0 - gap)
        assert gap.min() > (0.38 if lag == 1 else 0.09), lag
    assert np.all((places >= 0.0) & (places < 1.0))
    other = strike_places(300, (0.8, 0.1))
    assert not np.allclose(places, other)


def test_a_drums_course_takes_turns_of_hands_and_wanders_slowly():
    """``stroke_course``: the count runs 0, 1, 2 … (the hands alternate); the head's wander
    is an Ornstein–Uhlenbeck process: standard deviation 1, and strokes Δt apart
    correlate as e^(−Δt/τ) (30 s apart, τ 600 s: 0.951); the same words, the same course."""
    from soundscape.sound.synth.membrane import stroke_course

    times = np.arange(20000) * 30.0
    course = stroke_course(times, (1, 2, 3, 4), 600.0)
    assert np.array_equal(course[:, 2], np.arange(20000))
    wander = course[:, 3]
    assert np.std(wander) == pytest.approx(1.0, abs=0.1)
    assert np.corrcoef(wander[:-1], wander[1:])[0, 1] == pytest.approx(np.exp(-0.05), abs=0.01)
    assert np.corrcoef(wander[:-40], wander[40:])[0, 1] == pytest.approx(np.exp(-2.0), abs=0.05)
    assert np.array_equal(course, stroke_course(times, (1, 2, 3, 4), 600.0))
    assert not np.allclose(wander, stroke_course(times, (1, 2, 3, 5), 600.0)[:, 3])


def test_a_bound_voice_places_each_drums_strokes_along_its_course_whatever_is_asked_first():
    """``SynthVoice.bind``'s stroke places: each placed drum's strokes, in onset order, are
    its ``stroke_course`` (seeded by the seed and the drum); asked in any order, the same;
    worked out per drum when first asked, so binding reads no instrument it does not need
    (the sung lines read the voice's file, nothing else)."""
    from soundscape.sequence.planner import perform_from_file
    from soundscape.sound.notes import stable_ints
    from soundscape.sound.synth.membrane import stroke_course

    part = perform_from_file(from_section="s32", to_section="s32").between(0.0, 300.0)
    bound = SynthVoice().bind(part, 5)
    assert set(bound._instruments) <= {"voice"}
    keys = [(e.source, e.time) for e in part.events]
    forward = [bound.places.get(key) for key in keys]
    again = SynthVoice().bind(part, 5)
    backward = [again.places.get(key) for key in reversed(keys)][::-1]
    assert forward == backward
    drums = {key[0] for key, place in zip(keys, forward, strict=True) if place is not None}
    assert {part.sources[drum].instrument for drum in drums} == {"jiangu"}  # 建鼓 of 貍首
    for drum in drums:
        times = sorted(e.time for e in part.events if e.source == drum)
        params = params_of(load_instrument(part.sources[drum].instrument))
        course = stroke_course(np.array(times), tuple(stable_ints(5, "places", drum)),
                               params.get("scatter", {}).get("drift_s", 600.0))
        assert [bound.places.get((drum, t)) for t in times] == [tuple(row) for row in course]


def test_the_heads_wander_moves_its_pitch_by_drift_cents():
    """A stroke at wander w rings its (0,1) mode ``drift_cents`` × w cents off the drum's
    own pitch (20 cents at w = 1, −40 at w = −2)."""
    def at(wander):
        chosen = Stroke.drawn(JIANGU, 0.2, "strike", np.random.default_rng(7),
                              (0.5, 0.5, 0, wander))
        audio = render_stroke(JIANGU, hz=HZ, velocity=0.2, articulation="strike",
                              sample_rate=RATE, rng=np.random.default_rng(7), stroke=chosen)
        return peak(audio, HZ, start_s=0.3, search_cents=120)[0]

    still = at(0.0)
    assert abs(cents(still, HZ)) < 1.0
    assert cents(at(1.0), still) == pytest.approx(JIANGU["scatter"]["drift_cents"], abs=1.0)
    assert cents(at(-2.0), still) == pytest.approx(-2 * JIANGU["scatter"]["drift_cents"],
                                                   abs=1.0)


def test_the_other_hand_strikes_the_other_side_with_its_own_stick():
    """Strokes with an odd count are the other hand's: half a turn round the head (its
    side of the centre), its stick resting ``hand_contact`` times as long, its arm
    ``hand_force_db`` softer."""
    scatter = JIANGU["scatter"]
    first = Stroke.drawn(JIANGU, 0.8, "strike", np.random.default_rng(3), (0.4, 0.3, 6, 0.0))
    other = Stroke.drawn(JIANGU, 0.8, "strike", np.random.default_rng(3), (0.4, 0.3, 7, 0.0))
    assert other.angle - first.angle == pytest.approx(np.pi)
    assert abs(first.angle) <= np.pi / 2
    assert other.contact / first.contact == pytest.approx(scatter["hand_contact"])
    assert 20 * np.log10(first.force / other.force) == pytest.approx(scatter["hand_force_db"])


def test_a_bounce_is_a_second_weaker_stroke_after_its_delay():
    """The stick coming down again d later at level b: each mode rings |1 + b e^(−2πifd)| as
    loud as without (the (0,1) at 45 Hz, d 10 ms, b 0.3: −2.2 dB)."""
    def soft(bounce):
        chosen = Stroke(0.2, 0.3, 0.325, 0.0, bounce=bounce)
        return render_stroke(FIRST_RING, hz=HZ, velocity=0.2, articulation="strike",
                             sample_rate=RATE, rng=np.random.default_rng(7), stroke=chosen)

    plain, bounced = soft((0.0, 0.0)), soft((0.01, 0.3))
    for ratio in (1.0, 1.72):
        expected = 20 * np.log10(abs(1 + 0.3 * np.exp(-2j * np.pi * ratio * HZ * 0.01)))
        got = (peak(bounced, ratio * HZ, start_s=0.2)[1]
               - peak(plain, ratio * HZ, start_s=0.2)[1])
        assert got == pytest.approx(expected, abs=0.2), ratio


def test_a_share_of_strokes_bounce():
    """About ``bounce.share`` of drawn strokes bounce, within the file's delays and levels."""
    bounce = JIANGU["scatter"]["bounce"]
    drawn = [Stroke.drawn(JIANGU, 0.8, "strike", np.random.default_rng(k), (0.5, 0.5, k, 0.0))
             for k in range(2000)]
    bounced = [s.bounce for s in drawn if s.bounce[1] > 0.0]
    assert len(bounced) / len(drawn) == pytest.approx(bounce["share"], abs=0.04)
    delays = np.array([d for d, _ in bounced]) * 1000.0
    levels = 20 * np.log10([b for _, b in bounced])
    assert delays.min() >= bounce["ms"][0] and delays.max() <= bounce["ms"][1]
    assert levels.min() >= bounce["db"][0] and levels.max() <= bounce["db"][1]
