"""MIDI writer: round trip Performance → MIDI → parsed notes, tracks, markers, lyrics, pan."""

from __future__ import annotations

import math

import mido
import music21
import pytest

from soundscape.errors import RenderError
from soundscape.music.tuning import Tuning
from soundscape.output import midi
from soundscape.performance import Event, Marker, Performance, PieceInfo, Source
from soundscape.site.listeners import Listener
from tests.conftest import problems

TUNING = Tuning.sanfen_sunyi("zeng")  # 黃鍾 ≈ G♯3 − 32 cents: every 律 off the 12-TET grid
LISTENER = Listener((0.0, 0.0, 1.6), "north")
MELODY = ["黃鍾", "太簇", "姑洗", "林鍾", "南呂", "清黃鍾", "仲呂", "倍南呂", "應鍾", "清太簇"]
LYRICS = "呦呦鹿鳴食野之苹我有"


def _performance(repeat: int = 1, step: float = 0.7) -> Performance:
    sources = {
        "east.shengzhong": Source("east.shengzhong", "bianzhong", "東縣 笙鐘", "sheng zhong",
                                  "east", (6.0, 8.0, 1.5)),
        "gong.ge": Source("gong.ge", "voice", "工 歌", "gong singers", "gong", (-3.0, 2.0, 1.6)),
        "east.jiangu": Source("east.jiangu", "jiangu", "建鼓", "jian gu", "drums",
                              (3.0, 5.0, 1.0)),
    }
    events, markers = [], []
    for r in range(repeat):
        base = r * len(MELODY) * step
        markers.append(Marker(base, "music", "工歌鹿鳴", "gong sing Lu ming", f"m{r}"))
        for i, name in enumerate(MELODY):
            t = base + i * step
            events.append(Event(t, 0.6, "east.shengzhong", TUNING.pitch(name), 0.8, "A", "m",
                                "luming"))
            events.append(Event(t, 0.6, "gong.ge", TUNING.pitch(name), 0.6, "sing", "m",
                                "luming", lyric=LYRICS[i]))
            events.append(Event(t + step / 2, 0.2, "east.jiangu", None, 1.0, "strike", "m",
                                "luming"))
    markers.insert(0, Marker(0.0, "section", "右設樂", "setting up the music", "s1"))
    pieces = {"luming": PieceInfo("luming", "鹿鳴", "surviving", "風雅十二詩譜, 熊朋來《瑟譜》")}
    return Performance.build(events, markers, sources, pieces=pieces)


def _track_name(source: Source) -> str:
    return f"{source.name} {source.roman}"


@pytest.mark.parametrize("mode", midi.TUNING_MODES)
def test_round_trip_equals_performance_within_a_tick(tmp_path, mode):
    performance = _performance()
    path = midi.write_midi(performance, tmp_path / "a.mid", listener=LISTENER, tuning_mode=mode)
    notes = midi.read_events(path)
    assert len(notes) == len(performance.events)
    tick = mido.tick2second(1, midi.TICKS_PER_BEAT, mido.bpm2tempo(midi.TEMPO_BPM))
    expected = sorted(performance.events,
                      key=lambda e: (e.time, _track_name(performance.sources[e.source])))
    got = sorted(notes, key=lambda n: (n.time, n.track))
    for event, note in zip(expected, got, strict=True):
        source = performance.sources[event.source]
        assert note.track == _track_name(source)
        assert abs(note.time - event.time) <= tick / 2 + 1e-9
        assert abs(note.duration - event.duration) <= tick + 1e-9
        assert abs(note.velocity - event.velocity) <= 0.5 / 127 + 1e-9
        assert note.lyric == event.lyric
        if event.pitch is not None:
            cents = 1200 * math.log2(note.hz / event.pitch.hz)
            if mode == "12tet":
                assert abs(cents - (event.pitch.nearest_midi()[0] - event.pitch.midi) * 100) < 1e-6
            else:
                assert abs(cents) < 0.05, f"{event.pitch.name}: {cents:+.3f} cents off in {mode}"


def test_mts_and_12tet_differ_by_the_sanfen_sunyi_offsets(tmp_path):
    performance = _performance()
    tuned = midi.read_events(midi.write_midi(performance, tmp_path / "t.mid", listener=None))
    plain = midi.read_events(midi.write_midi(performance, tmp_path / "p.mid", listener=None,
                                             tuning_mode="12tet"))
    gaps = [1200 * math.log2(a.hz / b.hz) for a, b in zip(tuned, plain, strict=True)
            if a.track.startswith("東縣")]
    assert max(abs(g) for g in gaps) > 15  # 黃鍾 of the zeng preset is ~32 cents flat


def test_timing_error_below_1ms_over_a_long_rite(tmp_path):
    performance = _performance(repeat=120, step=3.37)  # ≈ 67 minutes
    notes = midi.read_events(midi.write_midi(performance, tmp_path / "long.mid", listener=None,
                                             tuning_mode="12tet"))
    onsets = sorted(e.time for e in performance.events)
    error = max(abs(n.time - t) for n, t in zip(notes, onsets, strict=True))
    assert performance.duration > 3600
    assert error <= 0.001, f"max onset error {error * 1000:.3f} ms"


def test_tracks_markers_and_texts(tmp_path):
    performance = _performance()
    path = midi.write_midi(performance, tmp_path / "a.mid", listener=LISTENER)
    file = mido.MidiFile(path, charset="utf-8")
    assert file.type == 1
    names = [next(m.name for m in t if m.type == "track_name") for t in file.tracks[1:]]
    assert names == [_track_name(s) for s in performance.sources.values()]
    markers = midi.read_markers(path)
    assert [text for _, text in markers] == [f"{m.gloss} | {m.text}" for m in performance.markers]
    assert all(abs(t - m.time) < 0.001 for (t, _), m in zip(markers, performance.markers,
                                                             strict=True))
    texts = [m.text for m in file.tracks[0] if m.type == "text"]
    assert any("surviving" in t and "鹿鳴" in t for t in texts)
    lyrics = [m.text for t in file.tracks for m in t if m.type == "lyrics"]
    assert "".join(lyrics) == LYRICS
    assert all(len(text) == 1 for text in lyrics)
    assert not any(m.channel == 9 for t in file.tracks for m in t if hasattr(m, "channel"))


def test_pan_and_volume_follow_the_listener(tmp_path):
    performance = _performance()
    notes = midi.read_events(midi.write_midi(performance, tmp_path / "a.mid", listener=LISTENER))
    pan = {n.track: n.pan for n in notes}
    volume = {n.track: n.volume for n in notes}
    assert pan["工 歌 gong singers"] < 64 < pan["東縣 笙鐘 sheng zhong"]  # west is left
    assert volume["工 歌 gong singers"] > volume["東縣 笙鐘 sheng zhong"]  # nearer is louder
    turned = Listener((0.0, 0.0, 1.6), "south")
    notes = midi.read_events(midi.write_midi(performance, tmp_path / "b.mid", listener=turned))
    assert {n.track: n.pan for n in notes}["工 歌 gong singers"] > 64


def test_no_listener_writes_no_pan(tmp_path):
    notes = midi.read_events(midi.write_midi(_performance(), tmp_path / "a.mid", listener=None))
    assert all(n.pan is None and n.volume is None for n in notes)


def test_pan_and_volume_values():
    assert midi.pan_value(0) == 64 and midi.pan_value(90) == 1 and midi.pan_value(-90) == 127
    assert midi.pan_value(180) == 64
    assert midi.volume_value(1.0) == 127
    # −6 dB per doubling under the GM curve 40·log10(cc/127)
    level = 40 * math.log10(midi.volume_value(16.0) / midi.volume_value(8.0))
    assert abs(level + 6.02) < 0.3


def test_same_bytes_twice(tmp_path):
    performance = _performance()
    a = midi.write_midi(performance, tmp_path / "a.mid", listener=LISTENER)
    b = midi.write_midi(performance, tmp_path / "b.mid", listener=LISTENER)
    assert a.read_bytes() == b.read_bytes()


def test_many_sources_share_fifteen_channels(tmp_path):
    sources = {f"s{i}": Source(f"s{i}", "bianqing", f"磬{i}", f"qing {i}", "east",
                               (float(i), 5.0, 1.0)) for i in range(30)}
    events = [Event(0.1 * i, 0.5, f"s{i}", TUNING.pitch("林鍾"), 0.5, "strike", "m")
              for i in range(30)]
    path = midi.write_midi(Performance.build(events, [], sources), tmp_path / "m.mid",
                           listener=LISTENER, tuning_mode="mpe")
    notes = midi.read_events(path)
    assert len(notes) == 30
    assert {n.channel for n in notes} <= set(range(16)) - {9}
    for note in notes:  # each note keeps its own source's pan even on a shared channel
        source = sources[note.track.split()[0].replace("磬", "s")]
        assert note.pan == midi.pan_value(LISTENER.direction_to(source.position)[0])


def test_reloads_in_music21(tmp_path):
    path = midi.write_midi(_performance(), tmp_path / "a.mid", listener=LISTENER)
    score = music21.converter.parse(path)
    assert len(score.flatten().notes) >= len(MELODY) * 2


def test_bad_tuning_mode_and_unknown_instrument(tmp_path):
    with pytest.raises(RenderError, match="accepted: mts, mpe, 12tet"):
        midi.write_midi(_performance(), tmp_path / "a.mid", listener=None, tuning_mode="just")
    sources = {"x": Source("x", "theremin", "x", "x", "east", (0.0, 1.0, 0.0))}
    events = [Event(0.0, 1.0, "x", None, 0.5, "strike", "m")]
    with pytest.raises(RenderError, match=r"'theremin'.*known: .*bianqing"):
        midi.write_midi(Performance.build(events, [], sources), tmp_path / "b.mid", listener=None)
    assert not (tmp_path / "b.mid").exists()



def test_cli_midi_agrees_with_render_midi(tmp_path, soundscape_cli):
    section = ("--from", "s09", "--to", "s09")
    run = {"cwd": tmp_path}
    code, err = soundscape_cli("midi", *section, "-o", "a.mid", **run)
    assert (code, problems(err)) == (0, [])
    rendered = soundscape_cli("render", *section, "--format", "midi", "--quiet", "--out", "b.mid",
                              **run)
    assert rendered[0] == 0
    ours, rendered = midi.read_events(tmp_path / "a.mid"), midi.read_events(tmp_path / "b.mid")
    assert len(ours) > 20
    assert ours == rendered
    assert all(n.pan is not None and n.volume is not None for n in ours)
    assert len({n.pan for n in ours}) > 1  # heard from the duke's seat: sources spread


def test_cli_midi_listener_none_and_bad_seed(tmp_path, soundscape_cli):
    run = {"cwd": tmp_path}
    code, err = soundscape_cli("midi", "--from", "s09", "--to", "s09", "--listener", "none",
                               "-o", "a.mid", **run)
    assert (code, problems(err)) == (0, [])
    notes = midi.read_events(tmp_path / "a.mid")
    assert notes and all(n.pan is None and n.volume is None for n in notes)
    code, err = soundscape_cli("midi", "--seed", "-1", "-o", "b.mid", **run)
    assert code == 2 and "-1 is not in the range x>=0" in err
    assert not (tmp_path / "b.mid").exists()
