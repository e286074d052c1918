"""A sung line is made by one process of a two-process render: its parts all go to the
process that claims the first of them, so the line is never rendered twice."""

import os
import time

import numpy as np
import pytest

from soundscape.music.pitch import Pitch
from soundscape.performance import Event, Performance, Source
from soundscape.site.listeners import Listener
from soundscape.sound import helper
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks
from soundscape.sound.sung import SungLines

FS = 48000
NORTH = Listener((0.0, 0.0, 1.5), "north")


class LineVoice:
    """A voice whose sung notes are parts of lines (as ``SynthVoice`` binds them): each line
    rendered once per process that needs it, each rendering logged (pid, line's onset);
    the strikes around them are plain noise."""

    def __init__(self, log):
        self.log, self.lines = log, None

    def bind(self, performance, seed):
        bound = LineVoice(self.log)
        bound.lines = SungLines(performance, lambda source: source.instrument == "voice")
        return bound

    def key(self, event, source):
        if self.lines is not None and self.lines.find(event) is not None:
            return self.lines.key(event)
        return (source.id, event.time)

    def keeps(self, key):
        return False

    def variants(self, source):
        return 1

    def __call__(self, event, source, *, sample_rate, rng):
        if self.lines is not None and self.lines.find(event) is not None:
            return self.lines.part(event, sample_rate, lambda line: self._line(line, sample_rate))
        n = round(0.2 * sample_rate)
        return rng.normal(0, 0.05, n) * np.exp(-np.arange(n) / (0.05 * sample_rate))

    def _line(self, line, rate):
        with open(self.log, "a") as out:
            out.write(f"{os.getpid()} {line[0].time}\n")
        n = round((line[-1].end - line[0].time + 0.2) * rate)
        return np.random.default_rng(round(line[0].time * 1000)).normal(0.0, 0.05, n)


def performance():
    """Two singers' lines of 6 notes (0.5 s each, a breath's gap between lines), among a
    drum's strokes every 0.05 s (the helper works tens of events ahead)."""
    sources = {who: Source(who, "voice", who, who, "west", (x, 4.0, 1.6))
               for who, x in (("a", -2.0), ("b", 2.0))}
    sources["d"] = Source("d", "jiangu", "鼓", "drum", "east", (10.0, 0.0, 1.5),
                          struck_face=(-1.0, 0.0, 0.0))
    pitch = Pitch("黃鍾", 0, 196.0)
    events = []
    for who, offset in (("a", 0.0), ("b", 0.25)):
        for line in range(4):
            start = 0.2 + offset + 3.5 * line
            events += [Event(start + 0.5 * k, 0.5, who, pitch, 0.7, "sing", "c", lyric="呦")
                       for k in range(6)]
    events += [Event(0.1 + 0.05 * k, 0.1, "d", None, 0.9 - 0.0001 * k, "strike", "c")
               for k in range(280)]
    return Performance.build(events, [], sources)


def rendered(perf, voice, workers):
    return np.concatenate(list(render_blocks(
        perf, listener=NORTH, panner=make_panner("stereo"), sample_rate=FS, seed=0,
        voice=voice, surroundings=Surroundings(), block_frames=FS // 4, workers=workers)))


@pytest.mark.parametrize("slow", ["helper", "main"])
def test_each_sung_line_is_rendered_once_by_two_processes_and_the_bytes_stay(
        tmp_path, monkeypatch, slow):
    """A slow helper leaves notes to the main process, a slow main process leaves them to
    the helper: either way the notes of a line are split between the two unless a line's
    parts go together (before they did, lines were rendered in both processes)."""
    claim = helper._Claims.claim

    def slow_claim(self, index, who):
        if who == (helper._HELPER if slow == "helper" else helper._MAIN):
            time.sleep(0.01)
        return claim(self, index, who)

    monkeypatch.setattr(helper._Claims, "claim", slow_claim)  # the fork inherits it
    perf = performance()
    alone = rendered(perf, LineVoice(tmp_path / "alone.log"), workers=1)
    helped = rendered(perf, LineVoice(tmp_path / "helped.log"), workers=2)
    assert np.array_equal(alone, helped)
    made = [line.split() for line in (tmp_path / "helped.log").read_text().splitlines()]
    assert sorted(onset for _, onset in made) == sorted({onset for _, onset in made})
    assert len(made) == 8


def test_claiming_one_of_a_group_claims_them_all():
    import multiprocessing

    claims = helper._Claims(multiprocessing.get_context("fork"), 10, [(2, 5, 7)])
    assert claims.claim(5, helper._HELPER)
    assert not claims.claim(2, helper._MAIN) and not claims.claim(7, helper._MAIN)
    assert claims.claim(2, helper._HELPER) and claims.claim(7, helper._HELPER)
    assert claims.claim(3, helper._MAIN) and not claims.claim(3, helper._MAIN)
    assert not claims.claim(3, helper._HELPER)
