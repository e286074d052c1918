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
