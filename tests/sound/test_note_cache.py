"""The one note cache of a render: parts of a ByteLru share its bytes and its order of use;
notes handed from one render stream to another."""

import itertools

import numpy as np

from soundscape.performance import Event, Source
from soundscape.sound.notes import ByteLru, DryNotes, NoteHandoff


def test_parts_of_a_cache_share_its_bytes_and_order_but_not_their_keys():
    whole = ByteLru(100)
    dry, heard = whole.part(("dry", 24000)), whole.part(("heard", 24000))
    dry.put("a", "dry a", 40)
    heard.put("a", "heard a", 40)  # the same key in another part: another value
    assert dry.get("a") == "dry a" and heard.get("a") == "heard a"
    dry.get("a")  # used last: the heard one is now the oldest
    heard.put("b", "heard b", 40)  # 120 bytes: the oldest of either part goes
    assert "a" in dry and "a" not in heard and "b" in heard
    assert whole.size == 80


def test_a_parts_limit_is_the_whole_caches():
    whole = ByteLru(100)
    part = whole.part("x")
    part.limit = 0  # as the helper process does: it keeps nothing
    part.put("a", "value", 1)
    assert whole.limit == 0 and "a" not in part and whole.size == 0


def test_a_notes_ring_is_cut_after_its_last_sample_above_the_floor():
    """The tail under −100 dB of the peak goes (less to filter); a quieter sample before a
    louder one stays, and a silent note is empty."""
    import numpy as np

    from soundscape.sound.notes import _TAIL_FLOOR, _trim_tail

    ring = np.exp(-np.arange(4000) / 200.0)  # −100 dB at about 2 300 samples
    ring[100] = -0.5 * _TAIL_FLOOR  # under the floor, before louder samples: kept
    kept = _trim_tail(ring)
    below = 200 + np.flatnonzero(ring[200:] <= _TAIL_FLOOR)[0]  # where the decay crosses it
    assert len(kept) == below and np.array_equal(kept, ring[:below])
    assert _trim_tail(np.zeros(50)).size == 0
    assert _trim_tail(np.zeros(0)).size == 0
    assert np.array_equal(_trim_tail(np.r_[0.0, -1.0, 0.0, 0.0]), [0.0, -1.0])


def _numpy_peak(mono):
    import numpy as np

    return max(float(np.max(mono)), -float(np.min(mono)), 0.0)


def test_a_notes_peak_is_numpys_largest_magnitude_found_in_one_blas_pass(monkeypatch):
    """The floor's peak is max(max, −min) to the bit, found by BLAS's idamax without numpy's
    max and min (two slower passes); the peak at either sign, at either end, of one sample."""
    import numpy as np

    from soundscape.sound import notes

    rng = np.random.default_rng(3)
    cases = [rng.normal(0, 0.3, 75_000), np.r_[-0.75, rng.uniform(-0.5, 0.5, 999)],
             np.r_[rng.uniform(-0.5, 0.5, 999), 0.875], np.array([-2.5e-300]), np.zeros(7)]
    expected = [_numpy_peak(note) for note in cases]

    def refused(*args, **kwargs):
        raise AssertionError("numpy's reductions are not needed for a finite note")

    monkeypatch.setattr(notes.np, "max", refused)
    monkeypatch.setattr(notes.np, "min", refused)
    assert [notes._peak(note) for note in cases] == expected
    assert expected[1] == 0.75 and expected[2] == 0.875


def test_a_note_with_a_nan_or_an_infinity_is_trimmed_as_numpy_made_it():
    """A NaN or an infinity makes numpy's peak (and the floor) NaN or infinite: nothing is
    above it and the note comes out empty, as before; a float32 or strided note is numpy's."""
    import numpy as np

    from soundscape.sound.notes import _peak, _trim_tail

    for bad in (np.nan, np.inf, -np.inf):
        note = np.r_[0.5, -0.25, bad, 0.1, np.zeros(10)]
        assert _trim_tail(note).size == 0
        assert np.isnan(_peak(note)) if np.isnan(bad) else _peak(note) == np.inf
    strided = np.r_[0.1, -0.9, 0.2, 0.3][::2]  # 0.1, 0.2: the −0.9 is not in it
    single = np.array([0.25, -0.5], np.float32)
    assert _peak(strided) == _numpy_peak(strided) == 0.2
    assert _peak(single) == _numpy_peak(single) == 0.5


def test_a_voice_looks_an_instruments_model_and_rate_up_once(monkeypatch):
    """``repeats`` (asked for every note made or kept) and ``made_at`` (for every event)
    find the model's module once per instrument, not per note: the same answers."""
    from soundscape.performance import Source
    from soundscape.sound import synth
    from soundscape.sound.notes import SynthVoice

    looked_up, model_module = [], synth.model_module

    def counted(name):
        looked_up.append(name)
        return model_module(name)

    se = Source("se.0", "se", "瑟", "se", "west", (-4.0, 2.0, 1.0))
    fresh = [SynthVoice().repeats("se"), SynthVoice().made_at(se, 48000)]
    monkeypatch.setattr(synth, "model_module", counted)
    voice = SynthVoice()
    for _ in range(5):
        assert [voice.repeats("se"), voice.made_at(se, 48000)] == fresh
    assert len(looked_up) <= 2  # once each, not five times


def test_a_notes_last_loud_sample_is_found_however_far_back_it_lies():
    """Stretches from the end, each twice the last: the cut is right after the last sample
    above the floor wherever it lies (in the first stretch, at its edge, further back)."""
    import numpy as np

    from soundscape.sound.notes import _TAIL_FLOOR, _trim_tail

    for quiet in (0, 1, 4095, 4096, 4097, 12_288, 30_000):
        note = np.r_[np.linspace(1.0, -0.5, 500), np.full(quiet, 0.9 * _TAIL_FLOOR)]
        note[200] = -2.0  # the peak
        assert np.array_equal(_trim_tail(note), note[:500])


def test_event_variants_are_worked_out_as_asked_and_the_same_in_any_order():
    """Asked first for a late event (as a render started at a cue is not, and a forked
    helper may be), the variants are those of one pass in the events' order; nothing past
    the index asked is worked out; a fork takes a lock of its own."""
    import os

    from soundscape.performance import Event, Performance, Source
    from soundscape.sound.notes import DryNotes, SynthVoice, event_variants

    sources = {"d": Source("d", "jiangu", "建鼓", "drum", "east", (5.0, 10.0, 1.5))}
    events = [Event(0.5 * i, 0.2, "d", None, 0.5 + 0.05 * (i % 3), "strike", "c")
              for i in range(40)]
    performance = Performance.build(events, [], sources)
    notes = DryNotes(SynthVoice(), 24000, 3, ByteLru(0))
    in_order = event_variants(performance, notes, 3)
    expected = [in_order[i] for i in range(40)]
    late_first = event_variants(performance, notes, 3)
    assert late_first[25] == expected[25] and len(late_first._out) == 26
    assert [late_first[i] for i in range(40)] == expected
    assert len(set(expected)) > 1  # they differ: the test can tell a wrong order
    late_first._pid = os.getpid() + 1  # as a forked child sees it
    held = late_first._lock
    held.acquire()  # the parent's lock, held when it forked
    try:
        assert late_first[39] == expected[39] and late_first._lock is not held
    finally:
        held.release()


def test_a_sources_notes_of_one_key_are_dealt_its_renderings_round_by_round():
    """A sampler's round robin: 100 releases of one bow, one key, one cue (``renderings``
    of instruments/bow.toml): never one rendering twice running, not even across a round's
    end; every rendering once in each round of n; rounds in different orders; the same
    variants from the same seed, others from another."""
    from soundscape.music.instruments import load_instrument
    from soundscape.performance import Event, Performance, Source
    from soundscape.sound.notes import DryNotes, SynthVoice, event_variants

    n = int(load_instrument("bow").renderings)
    sources = {"b": Source("b", "bow", "弓", "archery", "east", (5.0, 10.0, 1.5))}
    events = [Event(9.0 * i, 0.3, "b", None, 0.9, "release", "c") for i in range(100)]
    performance = Performance.build(events, [], sources)
    notes = DryNotes(SynthVoice(), 48000, 3, ByteLru(0))

    def dealt(seed):
        variants = event_variants(performance, notes, seed)
        return [variants[i] for i in range(len(events))]

    picks = dealt(3)
    assert all(a != b for a, b in itertools.pairwise(picks))
    rounds = [picks[k:k + n] for k in range(0, len(picks) - n + 1, n)]
    assert all(sorted(one) == list(range(n)) for one in rounds)
    assert len({tuple(one) for one in rounds}) == len(rounds)
    assert dealt(3) == picks and dealt(4) != picks


def test_a_handoff_gives_each_note_once_for_each_time_it_was_given_and_holds_a_bound():
    handoff = NoteHandoff(limit=3 * 400)
    a, b, c = (np.full(100, v, dtype=np.float32) for v in (1, 2, 3))  # 400 bytes each
    handoff.give(8000, ("k",), 0, a)
    handoff.give(8000, ("k",), 0, a)  # the same note for a second event
    handoff.give(16000, ("k",), 0, b)  # another rate: another note
    assert handoff.take(8000, ("k",), 1) is None  # another variant
    assert handoff.take(8000, ("k",), 0) is a
    assert handoff.take(8000, ("k",), 0) is a
    assert handoff.take(8000, ("k",), 0) is None  # taken as often as given
    handoff.give(8000, ("m",), 0, c)
    handoff.give(8000, ("n",), 0, a)
    handoff.give(8000, ("o",), 0, c)  # past the bound: the oldest (b) let go
    assert handoff.size == 3 * 400
    assert handoff.take(16000, ("k",), 0) is None
    assert handoff.take(8000, ("o",), 0) is c
    assert (handoff.given, handoff.taken) == (6, 3)


def test_dry_notes_take_a_note_handed_over_and_make_the_rest():
    calls = []

    def voice(event, source, *, sample_rate, rng):
        calls.append(event.time)
        return rng.normal(size=100)

    handoff = NoteHandoff(1 << 20)
    given = np.ones(50, dtype=np.float32)
    handoff.give(8000, ("k",), 0, given)
    notes = DryNotes(voice, 8000, 0, ByteLru(1 << 20), handoff=handoff)
    source = Source("s", "bianzhong", "鐘", "bell", "east", (0.0, 0.0, 0.0))
    event = Event(0.5, 0.3, "s", None, 0.9, "strike", "c")
    assert notes(event, source, ("k",), 0) is given and not calls
    made = notes(event, source, ("k",), 1)  # not handed over: made, the bits of a plain one
    assert calls == [0.5]
    plain = DryNotes(voice, 8000, 0, ByteLru(1 << 20))(event, source, ("k",), 1)
    assert made.tobytes() == plain.tobytes()
