"""The helper process's answers: notes sent as their arrays' shapes, anything else pickled."""

import multiprocessing
import os
import weakref

import numpy as np
import pytest

from soundscape.errors import RenderError
from soundscape.sound import helper

FORK = multiprocessing.get_context("fork")


def _through(answers, ring_bytes: int | None):
    """``answers`` sent by ``_send`` and read back by ``_receive`` (one process: a pipe and,
    unless ``ring_bytes`` is None, a ring of that size; each note small enough for the pipe)."""
    ring = None if ring_bytes is None else helper._Ring(FORK, ring_bytes)
    ours, theirs = FORK.Pipe(duplex=False)
    incoming = helper._Incoming(ours)
    got = []
    for answer in answers:
        helper._send(theirs, answer, ring)
        got.append(helper._receive(incoming, ring))
    theirs.close()
    ours.close()
    return got


def _notes():
    rng = np.random.default_rng(1)
    dry = rng.normal(0, 0.1, 1000).astype(np.float32)
    wide = np.asarray(rng.normal(0, 0.1, 100))  # float64
    signals = rng.normal(0, 0.1, (300, 3)).astype(np.float32)
    mix = rng.uniform(0, 1, (3, 2)).astype(np.float32)
    return [(0, dry), (1, wide), (2, (-17, signals, None)), (3, (5, signals, mix)),
            (4, (0, signals[:0], None)), (5, (2, signals, None, dry)),  # with its dry note
            (6, (1, signals[:, :0], mix, None))]


@pytest.mark.parametrize("ring_bytes", [1 << 20, 4096, None])
def test_notes_go_as_their_shapes_not_pickled(monkeypatch, ring_bytes):
    """A dry note, a heard one with and without its mix (and its dry note), float32 or
    float64, through the ring (1 MiB), partly down the pipe (a ring of 4 KiB) or all down it:
    the same arrays
    come out (dtype, shape, bits, the start an int), and nothing is pickled."""
    def refused(*args, **kwargs):
        raise AssertionError("a note is not pickled")

    monkeypatch.setattr(helper.pickle, "dumps", refused)
    monkeypatch.setattr(helper.pickle, "loads", refused)
    sent = _notes()
    got = _through(sent, ring_bytes)
    assert [index for index, _ in got] == [index for index, _ in sent]
    for (_, note), (_, back) in zip(sent, got, strict=True):
        if isinstance(note, np.ndarray):
            note, back = (0, note, None), (0, back, None)
        assert type(back[0]) is int and back[0] == note[0] and len(back) == len(note)
        for array, again in zip(note[1:], back[1:], strict=True):
            if array is None:
                assert again is None
                continue
            assert again.dtype == array.dtype and again.shape == array.shape
            assert again.tobytes() == array.tobytes() and again.flags.writeable


def test_other_answers_are_pickled_with_their_arrays_out_of_band():
    """An error, a note taken back, arrays numpy would not rebuild from a shape alone
    (strided, float16, a start that is numpy's integer): pickled, the same objects back."""
    strided = np.arange(40, dtype=np.float32)[::2]
    answers = [(7, RenderError("this note cannot be played")), (8, helper._TAKEN_BACK),
               (9, strided), (10, np.ones(8, np.float16)),
               (11, (np.int64(3), np.ones((4, 2), np.float32), None)),
               (12, (1, np.asfortranarray(np.ones((4, 2), np.float32)), None)), (13, None)]
    for ring_bytes in (1 << 16, None):
        got = _through(answers, ring_bytes)
        assert isinstance(got[0][1], RenderError) and str(got[0][1]) == str(answers[0][1])
        assert got[1] == (8, helper._TAKEN_BACK) and got[-1] == (13, None)
        assert np.array_equal(got[2][1], strided) and got[3][1].dtype == np.float16
        assert type(got[4][1][0]) is np.int64 and np.array_equal(got[4][1][1], answers[4][1][1])
        assert np.array_equal(got[5][1][1], answers[5][1][1])


def test_a_note_in_the_ring_takes_a_few_dozen_bytes_of_the_pipe():
    """What a dry note takes down the pipe when its samples lie in the ring: its head and
    one array's shape (its pickle's header alone was ~125 bytes, and unpickling it took
    ~60 µs in a render)."""
    ring = helper._Ring(FORK, 1 << 20)
    ours, theirs = FORK.Pipe(duplex=False)
    helper._send(theirs, (3, np.ones(20_000, np.float32)), ring)
    theirs.close()
    written = b""
    while chunk := os.read(ours.fileno(), 1 << 16):
        written += chunk
    ours.close()
    assert len(written) == helper._HEAD.size + helper._ARRAY.size < 64


def test_the_helper_gives_its_free_pages_back_after_each_large_note(monkeypatch):
    """After sending a note over ``_TRIM_AFTER_BYTES`` (and only then), the helper frees it
    and gives the heap's free pages back (``release_freed_memory``), before the next note;
    after any other, it asks whether it is time to (``releasing_now_and_then``)."""
    big = helper._TRIM_AFTER_BYTES // 4 + 1  # float32 samples: just over the bound
    trims = FORK.Array("i", 8)  # per trim: the note made before it, and whether it was freed
    count = FORK.Value("i", 0)

    class Heard:
        made: tuple = ()

        def forget_in_helper(self):
            pass

        def compute(self, index):
            note = np.zeros(big if index in (1, 3) else 100, np.float32)
            self.made = (index, weakref.ref(note))
            return note

    heard = Heard()

    def release():
        index, note = heard.made
        trims[2 * count.value:2 * count.value + 2] = [index, note() is None]
        count.value += 1
        return True

    asked = FORK.Array("i", 8)  # the notes after which it asked whether 2 s have passed
    asks = FORK.Value("i", 0)

    def now_and_then():
        def ask():
            asked[asks.value] = heard.made[0]
            asks.value += 1
        return ask

    monkeypatch.setattr(helper, "release_freed_memory", release)
    monkeypatch.setattr(helper, "releasing_now_and_then", now_and_then)
    requests, ask = FORK.Pipe(duplex=False)
    answers, answer = FORK.Pipe(duplex=False)
    ring = helper._Ring(FORK, 1 << 20)
    process = FORK.Process(target=helper._serve, args=(
        requests, answer, (ask, answers), heard, helper._Claims(FORK, 5), ring))
    process.start()
    requests.close()
    answer.close()
    helper._ask_for(ask, [0, 1, 2, 3, 4])
    incoming = helper._Incoming(answers)
    got = [helper._receive(incoming, ring) for _ in range(5)]
    helper._ask_for(ask, [helper._STOP])
    process.join(timeout=60)
    assert process.exitcode == 0
    assert [index for index, _ in got] == [0, 1, 2, 3, 4]
    assert [note.size for _, note in got] == [100, big, 100, big, 100]
    assert count.value == 2 and list(trims[:4]) == [1, 1, 3, 1]
    assert list(asked[:asks.value]) == [0, 2, 4]  # and now and then after the others
