"""Small Performances for the kit tests (no sequencing, seconds of sound)."""

from __future__ import annotations

import numpy as np

from soundscape.music.pitch import Pitch
from soundscape.performance import (
    Event,
    Info,
    Marker,
    MusicSpan,
    Performance,
    PieceInfo,
    SectionSpan,
    Source,
)

FS = 48000


def tone_voice(event, source, *, sample_rate, rng):
    """A ringing partial at the event's pitch (or 300 Hz), τ = 0.3 s, for 1.5 s."""
    hz = event.pitch.hz if event.pitch else 300.0
    t = np.arange(round(1.5 * sample_rate)) / sample_rate
    return 0.3 * np.sin(2 * np.pi * hz * t) * np.exp(-t / 0.3)


def rite() -> Performance:
    """Two sections of 4 s: a step, then 肆夏 on east bells and a west drum, with a sung
    line and the three 負侯 answering together."""
    sources = {
        "east.bells": Source("east.bells", "bianzhong", "東縣 笙鐘", "east bells", "east",
                             (8.0, 0.0, 1.2)),
        "west.drum": Source("west.drum", "jiangu", "西階 建鼓", "west drum", "drums",
                            (-8.0, 0.0, 1.2), struck_face=(1.0, 0.0, 0.0)),
        "gong.dashi": Source("gong.dashi", "voice", "工 大師", "singer", "gong",
                             (-6.0, 2.0, 0.8)),
        **{f"voice.fuhou.{t}": Source(f"voice.fuhou.{t}", "voice", f"負侯 {t}", "fuhou",
                                      "voice", (0.0, -40.0 - i, 1.5))
           for i, t in enumerate(("dahou", "can", "gan"))},
    }
    pitch = Pitch("黃鍾", 0, 261.6)
    events = [Event(4.0 + 0.5 * i, 0.3, "east.bells", pitch, 0.8, "A", "sixia", "sixia")
              for i in range(6)]
    events += [Event(4.25 + 1.0 * i, 0.2, "west.drum", None, 0.9, "strike", "sixia", "sixia")
               for i in range(3)]
    events += [Event(5.0 + 0.4 * i, 0.35, "gong.dashi", pitch, 0.7, "sing", "sixia", "sixia",
                     lyric=ch) for i, ch in enumerate("呦呦鹿鳴")]
    events += [Event(1.0, 0.5, f"voice.fuhou.{t}", None, 0.8, "call", "answer", lyric="諾")
               for t in ("dahou", "can", "gan")]
    markers = [Marker(0.0, "section", "右設樂", "section s1", "s1"),
               Marker(0.0, "step", "樂人宿縣", "s1.01 yueren xuan", "s1.01", "樂人宿縣於阼階東"),
               Marker(4.0, "section", "右奏樂", "section s2", "s2"),
               Marker(4.0, "step", "奏肆夏", "s2.01 other", "s2.01", "奏肆夏"),
               Marker(4.0, "music", "奏肆夏", "music sixia begins (reconstruction)", "sixia",
                      "奏肆夏"),
               Marker(7.5, "music", "肆夏 止", "music sixia ends", "sixia")]
    pieces = {"sixia": PieceInfo("sixia", "肆夏", "reconstruction", "lost; rebuilt by rule")}
    return Performance.build(
        sorted(events, key=lambda e: e.time), markers, sources, pieces=pieces,
        info=Info(title="大射儀", text="dashe", seed=0, tuning="三分損益", huangzhong_hz=261.6),
        sections=(SectionSpan("s1", "設樂", 0.0, 4.0), SectionSpan("s2", "奏樂", 4.0, 8.0)),
        music=(MusicSpan("sixia", "sixia", 4.0, 7.5, "rite"),))
