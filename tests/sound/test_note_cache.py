"""The one note cache of a render: parts of a ByteLru share its bytes and its order of use."""

from soundscape.sound.notes import ByteLru


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
