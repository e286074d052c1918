"""The accumulator: notes added where they sound, handed out in blocks; nothing where none was."""

from __future__ import annotations

import numpy as np

from soundscape.sound.mix import Accumulator


def test_an_accumulator_hands_out_nothing_where_no_note_was_added():
    """``take_added`` gives None for blocks no note reached (no block of zeros), the added
    frames where one did, and the frames after a skipped block land where they belong."""
    acc = Accumulator(2, 100)
    assert acc.take_added(100) is None and acc.base == 100
    note = np.arange(1, 31, dtype=np.float32).reshape(15, 2)
    acc.add(250, note, column=0)  # in the third block
    assert acc.take_added(100) is None  # the second: still nothing
    third = acc.take_added(100)
    assert third is not None and third.shape == (100, 2)
    assert np.array_equal(third[50:65], note) and not third[:50].any() and not third[65:].any()
    assert acc.take_added(100) is None and acc.base == 400


def test_an_accumulator_taken_in_blocks_of_another_size_skips_the_chunks_no_note_reached():
    """Shorter blocks than its chunks (a low bus's first pieces): the blocks in a chunk no note
    reached give None, those in a chunk a note reached give its frames (zeros before the
    note)."""
    acc = Accumulator(1, 64)
    acc.add(100, np.ones((10, 1), np.float32))  # frames 100…110, in the second chunk
    assert all(acc.take_added(16) is None for _ in range(4))  # frames 0…64
    before = acc.take_added(32)  # 64…96
    assert before is not None and not before.any()
    note = acc.take_added(16)  # 96…112
    assert note is not None and np.array_equal(note[:, 0], np.r_[np.zeros(4), np.ones(10),
                                                                 np.zeros(2)])
    rest = acc.take_added(16)  # 112…128: the rest of the chunk
    assert rest is not None and not rest.any()
    assert acc.take_added(64) is None and acc.base == 192
