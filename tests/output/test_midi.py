"""MIDI writer: round trip Performance → MIDI → parsed notes, tracks, markers, lyrics, pan."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

import mido
import music21
import pytest

from soundscape import sequence
from soundscape.errors import RenderError
from soundscape.music.tuning import Tuning
from soundscape.output import midi
from soundscape.performance import (
    Event,
    Marker,
    MusicSpan,
    Performance,
    PieceInfo,
    SectionSpan,
    Source,
)
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
    tick = 2 * midi.tempo_map_of(performance).max_error_s()
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
    assert [text for _, text in markers] == [f"{m.text} | {m.gloss}" for m in performance.markers]
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


def _many(n: int, length: float = 0.5) -> tuple[dict, Performance]:
    sources = {f"s{i}": Source(f"s{i}", "bianqing" if i % 2 else "jiangu", f"磬{i}", f"qing {i}",
                               "east", (float(i), 5.0, 1.0)) for i in range(n)}
    events = [Event(0.1 * i + d, length, f"s{i}", TUNING.pitch(name), 0.5, "strike", "m")
              for i in range(n) for d, name in ((0.0, "林鍾"), (0.2, "黃鍾"))]
    return sources, Performance.build(events, [], sources)


def _setup_by_track(path) -> list[dict]:
    """Per note track: its port, the channels it plays on and those it sets a program on
    before its first note."""
    found = []
    for track in mido.MidiFile(path).tracks[1:]:
        port, programs, played, started = 0, set(), set(), False
        for message in track:
            if message.type == "midi_port":
                port = message.port
            elif message.type == "program_change" and not started:
                programs.add(message.channel)
            elif message.type == "note_on":
                started = True
                played.add(message.channel)
        found.append({"port": port, "channels": played, "programs": programs})
    return found


def test_many_ports_every_track_its_own_channel_and_program(tmp_path):
    sources, performance = _many(30)
    path = midi.write_midi(performance, tmp_path / "m.mid", listener=LISTENER, ports="many")
    tracks = _setup_by_track(path)
    assert len(tracks) == 30
    assert all(len(t["channels"]) == 1 and t["channels"] == t["programs"] for t in tracks)
    owners = [(t["port"], *t["channels"]) for t in tracks]
    assert len(set(owners)) == 30  # no two tracks on one port and channel
    assert {port for port, _ in owners} == {0, 1} and 9 not in {c for _, c in owners}
    notes = midi.read_events(path)
    assert len(notes) == 60
    programs = midi.load_programs()
    for note in notes:  # each note keeps its own source's program and pan
        source = sources[note.track.split()[0].replace("磬", "s")]
        assert note.program == programs[source.instrument].program
        assert note.pan == midi.pan_value(LISTENER.direction_to(source.position)[0])


def _as_one_port_player_hears(path) -> list[tuple[str, int, int]]:
    """(track name, program the note is played with, program its track set) per note, as a
    player that ignores ports plays the file: every track merged in time, each channel
    playing with the last program any track set on it (ties in track order)."""
    rows = []
    for number, track in enumerate(mido.MidiFile(path).tracks):
        tick, name, own = 0, "", None
        for order, message in enumerate(track):
            tick += message.time
            if message.type == "track_name":
                name = message.name
            if message.type == "program_change":
                own = message.program
            if message.type in ("program_change", "note_on"):
                rows.append((tick, number, order, name, own, message))
    playing: dict[int, int] = {}
    heard = []
    for _, _, _, name, own, message in sorted(rows, key=lambda r: r[:3]):
        if message.type == "program_change":
            playing[message.channel] = message.program
        elif message.velocity > 0:
            heard.append((name, playing[message.channel], own))
    return heard


def test_one_port_shares_channels_by_program_and_keeps_pan_where_channels_allow(tmp_path):
    sources, performance = _many(30)
    path = midi.write_midi(performance, tmp_path / "m.mid", listener=LISTENER)
    file = mido.MidiFile(path)
    assert not any(m.type == "midi_port" for t in file.tracks for m in t)
    heard = _as_one_port_player_hears(path)
    assert len(heard) == 60 and all(played == own for _, played, own in heard)
    tracks = _setup_by_track(path)
    used = {c for t in tracks for c in t["channels"]}
    assert len(used) == 15 and 9 not in used  # every channel of the port, never the drums'
    notes = midi.read_events(path)
    by_channel: dict[int, set] = {}
    for note in notes:
        by_channel.setdefault(note.channel, set()).add(note.pan)
    assert all(len(pans) == 1 for pans in by_channel.values())  # one pan per channel
    for note in notes:  # a channel's pan lies among its own sources' pans
        mine = [midi.pan_value(LISTENER.direction_to(sources[n.track.split()[0].replace(
            "磬", "s")].position)[0]) for n in notes if n.channel == note.channel]
        assert min(mine) <= note.pan <= max(mine)


def test_a_shared_channel_carries_distance_in_velocity(tmp_path):
    _, performance = _many(30, length=0.05)  # no key sounds twice at once
    one = midi.read_events(midi.write_midi(performance, tmp_path / "a.mid", listener=LISTENER))
    many = midi.read_events(midi.write_midi(performance, tmp_path / "b.mid", listener=LISTENER,
                                            ports="many"))
    shared = {n.channel for n in one if sum(m.channel == n.channel for m in one) > 4}
    assert shared
    for a, b in zip(sorted(one, key=lambda n: (n.time, n.track)),
                    sorted(many, key=lambda n: (n.time, n.track)), strict=True):
        if a.channel in shared:
            # GM: velocity and CC7 both 40·log10(x/127) dB, so level = velocity × volume
            assert a.volume == 127
            assert abs(a.velocity - b.velocity * b.volume / 127) <= 0.5 / 127


def test_one_port_gives_unison_tracks_channels_of_their_own_first(tmp_path):
    # four 瑟 in unison beside a far and a near drum: a channel sounds a key once, so the
    # spare channels part the 瑟 before they split the drums by pan
    sources = {f"se{i}": Source(f"se{i}", "se", f"瑟{i}", f"se {i}", "gong", (-6.0, 2.0, 0.8))
               for i in range(4)}
    sources |= {f"d{i}": Source(f"d{i}", "jiangu", f"鼓{i}", f"drum {i}", "drums",
                                (x, 5.0, 1.0)) for i, x in enumerate((-20.0, 20.0))}
    events = [Event(t, 0.9, f"se{i}", TUNING.pitch(name), 0.5, "pluck", "m")
              for t, name in ((0.0, "林鍾"), (1.0, "黃鍾")) for i in range(4)]
    events += [Event(2.0 + i, 0.3, f"d{i}", None, 0.5, "strike", "m") for i in range(2)]
    path = midi.write_midi(Performance.build(events, [], sources), tmp_path / "u.mid",
                           listener=LISTENER)
    notes = midi.read_events(path)
    assert len(notes) == 10  # every note read back: no key sounded twice on one channel
    se = {n.channel for n in notes if n.track.startswith("瑟")}
    drums = {n.channel for n in notes if n.track.startswith("鼓")}
    assert len(se) == 4 and len(drums) == 2 and not se & drums


def test_a_note_still_ringing_is_cut_just_before_another_track_strikes_its_key(tmp_path):
    _, performance = _many(30)  # 0.5 s notes 0.1 s apart: keys overlap on channels
    notes = midi.read_events(midi.write_midi(performance, tmp_path / "m.mid",
                                             listener=LISTENER))
    assert len(notes) == 60  # every note on, every note off, nothing lost in the reading
    ringing: dict[tuple[int, int], float] = {}
    for note in notes:
        assert ringing.get((note.channel, note.key), -1.0) <= note.time
        ringing[(note.channel, note.key)] = note.time + note.duration


def test_one_port_for_fifteen_tracks_or_fewer(tmp_path):
    _, performance = _many(15)
    file = mido.MidiFile(midi.write_midi(performance, tmp_path / "m.mid", listener=None,
                                         ports="many"))
    assert not any(m.type == "midi_port" for t in file.tracks for m in t)
    assert len({c for t in _setup_by_track(tmp_path / "m.mid") for c in t["channels"]}) == 15


def test_mpe_spreads_only_over_a_tracks_own_channels(tmp_path):
    _, performance = _many(4)
    path = midi.write_midi(performance, tmp_path / "m.mid", listener=None, tuning_mode="mpe")
    tracks = _setup_by_track(path)
    assert [t["port"] for t in tracks] == [0, 0, 0, 0]
    assert all(t["channels"] <= t["programs"] for t in tracks)
    assert all(len(t["channels"]) == 2 for t in tracks)  # 林鍾 and 黃鍾 bend apart
    used = [c for t in tracks for c in t["channels"]]
    assert len(used) == len(set(used)) == 8


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
    assert code == 2 and "-1 is not in the range 0<=x<=9223372036854775807" in err
    assert not (tmp_path / "b.mid").exists()


def _two_pieces() -> Performance:
    """Speech on the clock, 鹿鳴 (44 bpm) from 2.3 s, the clock, 貍首 (72 bpm) from 40 s."""
    sources = {"gong.ge": Source("gong.ge", "voice", "工 歌", "gong singers", "gong",
                                 (-3.0, 2.0, 1.6)),
               "west.jiangu": Source("west.jiangu", "jiangu", "建鼓", "jian gu", "drums",
                                     (3.0, 5.0, 1.0))}
    events = [Event(0.45, 0.3, "west.jiangu", None, 0.5, "strike", "s0")]
    spans = []
    for cue, piece, start, bpm, count in (("m1", "luming", 2.3, 44, 13), ("m2", "lishou", 40.0,
                                                                            72, 9)):
        beat = 60 / bpm
        events += [Event(start + k * beat, beat * 0.9, "gong.ge", TUNING.pitch(MELODY[k % 10]),
                         0.6, "sing", cue, piece) for k in range(count)]
        spans.append(MusicSpan(cue, piece, start, start + count * beat, "music"))
    events.append(Event(33.3, 0.3, "west.jiangu", None, 0.5, "strike", "s1"))
    pieces = {p: PieceInfo(p, p, "surviving", "") for p in ("luming", "lishou")}
    sections = (SectionSpan("s1", "設樂", 0.0, 30.0), SectionSpan("s2", "射", 33.0, 60.0))
    markers = [Marker(0.0, "section", "右設樂", "setting up", "s1"),
               Marker(33.0, "section", "右射", "shooting", "s2")]
    return Performance.build(events, markers, sources, pieces=pieces, music=tuple(spans),
                             sections=sections)


def test_tempo_map_keeps_every_onset_exact(tmp_path):
    performance = _two_pieces()
    path = midi.write_midi(performance, tmp_path / "t.mid", listener=None)
    now, onsets = 0.0, []
    for message in mido.MidiFile(path):  # mido's own clock, through every set_tempo
        now += message.time
        if message.type == "note_on" and message.velocity > 0:
            onsets.append(now)
    expected = [e.time for e in performance.events]
    assert len(onsets) == len(expected)
    assert max(abs(a - b) for a, b in zip(onsets, expected, strict=True)) < 0.001


def test_each_piece_in_its_own_tempo_on_bar_lines(tmp_path):
    performance = _two_pieces()
    file = mido.MidiFile(midi.write_midi(performance, tmp_path / "t.mid", listener=None))
    tick, segments = 0, []  # (tick, tempo, (numerator, denominator)) from the file
    for message in file.tracks[0]:
        tick += message.time
        if message.type == "set_tempo":
            segments.append([tick, message.tempo, None])
        elif message.type == "time_signature":
            segments[-1][2] = (message.numerator, message.denominator)
    beat = midi.TICKS_PER_BEAT
    tempos = [tempo for _, tempo, _ in segments]
    # clock, 鹿鳴 at 44 bpm, clock, 貍首 at 72 bpm (to the end: no clock after it)
    assert tempos[1] == round(6e7 / 44) and tempos[3] == round(6e7 / 72) and len(tempos) == 4
    assert all(metre == (4, 4) for _, _, metre in segments[1::2])
    assert all(40 <= 6e7 / tempos[i] <= 80 for i in (0, 2))  # the clock, about 60 bpm
    for (a, _, (numerator, denominator)), (b, _, _) in itertools.pairwise(segments):
        assert (b - a) % (beat * numerator * 4 // denominator) == 0  # whole bars
    for index, piece in ((1, "luming"), (3, "lishou")):  # every note on one of its beats
        ticks = _note_ticks(file, piece, performance)
        assert ticks and all((t - segments[index][0]) % beat == 0 for t in ticks)


def test_each_piece_at_the_tempo_the_performance_played_it(tmp_path):
    """The tempo comes from the Performance, not the repertoire: 鹿鳴 played at 50 bpm (not
    the repertoire's 44) is written at 50, on its beats."""
    two = _two_pieces()
    beat = 60 / 50
    sung = [e for e in two.events if e.cue == "m1"]
    events = [replace(e, time=2.3 + k * beat, duration=beat * 0.9) for k, e in enumerate(sung)]
    events += [e for e in two.events if e.cue != "m1"]
    music = (replace(two.music[0], end=2.3 + 13 * beat, tempo_bpm=50.0),
             replace(two.music[1], tempo_bpm=72.0))
    performance = Performance.build(events, two.markers, two.sources, pieces=two.pieces,
                                    music=music, sections=two.sections)
    file = mido.MidiFile(midi.write_midi(performance, tmp_path / "t.mid", listener=None))
    tempos = [m.tempo for m in file.tracks[0] if m.type == "set_tempo"]
    assert tempos[1] == round(6e7 / 50) and tempos[3] == round(6e7 / 72)


def _note_ticks(file: mido.MidiFile, piece: str, performance: Performance) -> list[int]:
    """Ticks of the note-ons at the onsets of ``piece``'s events."""
    times = [e.time for e in performance.events if e.piece == piece]
    now, tick, tempo, found = 0.0, 0, 500000, []
    for message in mido.merge_tracks(file.tracks):
        tick += message.time
        now += mido.tick2second(message.time, file.ticks_per_beat, tempo)
        if message.type == "set_tempo":
            tempo = message.tempo
        if message.type == "note_on" and any(abs(now - t) < 0.001 for t in times):
            found.append(tick)
    return found


def test_split_by_section_and_by_piece(tmp_path):
    performance = _two_pieces()
    files = midi.write_split(performance, tmp_path / "sections", by="section", listener=None)
    assert [f.name for f in files] == ["s1.mid", "s2.mid"]
    first, second = (midi.read_events(f) for f in files)
    assert len(first) + len(second) == len(performance.events)
    assert second[0].time == pytest.approx(33.3 - 33.0, abs=0.001)  # on the section's clock
    assert [t for t, _ in midi.read_markers(files[1])] == [0.0]
    files = midi.write_split(performance, tmp_path / "pieces", by="piece", listener=None)
    assert [f.name for f in files] == ["01-m1.mid", "02-m2.mid"]
    notes = midi.read_events(files[1])
    assert len(notes) == 9 and notes[0].time == pytest.approx(0.0, abs=0.001)
    with pytest.raises(RenderError, match="accepted: piece, section"):
        midi.write_split(performance, tmp_path / "x", by="stanza", listener=None)


def test_cli_midi_refuses_an_audio_ending(tmp_path, soundscape_cli):
    code, err = soundscape_cli("midi", "--from", "s09", "--to", "s09", "-o", "x.wav",
                               cwd=tmp_path)
    assert code == 2
    assert "error: --out 'x.wav': ending '.wav' is not a MIDI file" in err
    assert ".mid or .midi" in err and "soundscape render" in err
    assert list(tmp_path.iterdir()) == []


def test_cli_midi_mpe_is_never_one_port(tmp_path, soundscape_cli):
    """--tuning mpe --ports one wrote 5 ports without a word, and a player that ignores
    ports (FluidSynth) bent a quarter of its notes with another track's bend."""
    section = ("--from", "s09", "--to", "s09")
    code, err = soundscape_cli("midi", *section, "--tuning", "mpe", "--ports", "one",
                               "-o", "a.mid", cwd=tmp_path)
    assert code == 2 and "--tuning mpe" in err and "cannot be --ports one" in err, err
    assert list(tmp_path.iterdir()) == []
    code, err = soundscape_cli("midi", *section, "--tuning", "mpe", "-o", "b.mid",
                               cwd=tmp_path)
    assert code == 0, err
    ports = {m.port for t in mido.MidiFile(tmp_path / "b.mid").tracks for m in t
             if m.type == "midi_port"}
    assert len(ports) > 1


def test_cli_midi_split_by_section(tmp_path, soundscape_cli):
    code, err = soundscape_cli("midi", "--from", "s18", "--to", "s19", "--split", "section",
                               "-o", "parts", cwd=tmp_path)
    assert (code, problems(err)) == (0, [])
    assert sorted(p.name for p in (tmp_path / "parts").iterdir()) == [
        ".soundscape.sections", "s18.mid", "s19.mid"]
    # 樂賓 has its songs; 立司正 no music, only its markers (its footsteps are audio's)
    assert midi.read_events(tmp_path / "parts" / "s18.mid")
    assert not midi.read_events(tmp_path / "parts" / "s19.mid")
    assert midi.read_markers(tmp_path / "parts" / "s19.mid")


def test_a_split_folder_holds_only_this_runs_parts(tmp_path):
    """A second split with fewer sections left the first one's files beside its own; a
    file the user put in the folder stays."""
    rite = sequence.perform_from_file(seed=0, from_section="s18", to_section="s19")
    (tmp_path / "notes.mid").write_bytes(b"mine")
    midi.write_split(rite, tmp_path, by="section", listener=None)
    assert {"s18.mid", "s19.mid"} <= {p.name for p in tmp_path.iterdir()}
    midi.write_split(rite.cut("s18", "s18"),
                     tmp_path, by="section", listener=None)
    assert sorted(p.name for p in tmp_path.glob("*.mid")) == ["notes.mid", "s18.mid"]


def test_split_by_section_writes_no_file_for_the_preparations(tmp_path):
    # s01–s04 are done before the day and take no time on it: no file (docs/midi.md)
    part = sequence.perform_from_file(seed=0, to_section="s06")
    files = midi.write_split(part, tmp_path, by="section", listener=None)
    assert [f.name for f in files] == ["s05.mid", "s06.mid"]


def test_the_default_whole_rite_file_plays_right_in_a_player_that_ignores_ports(tmp_path):
    # what FluidSynth does: every track merged, a channel plays with the last program set
    rite = sequence.perform_from_file(seed=0)
    one = midi.write_midi(rite, tmp_path / "one.mid", listener=None)
    heard = _as_one_port_player_hears(one)
    assert heard and all(played == own for _, played, own in heard)
    many = midi.write_midi(rite, tmp_path / "many.mid", listener=None, ports="many")
    wrong = sum(played != own for _, played, own in _as_one_port_player_hears(many))
    assert wrong > 1000
    # the figures docs/midi.md gives for this file are the file's own
    doc = (Path(__file__).parents[2] / "docs" / "midi.md").read_text(encoding="utf-8")
    tracks = len(mido.MidiFile(one).tracks) - 1
    channels = len({n.channel for n in midi.read_events(one)})
    notes = f"{midi.note_count(one):,}".replace(",", " ")
    claim = (f"the whole rite (seed 0) is {tracks} tracks on one port and {channels} "
             f"channels, {notes} notes")
    assert claim in " ".join(doc.split()), claim
    claim = f"ports plays {wrong:,} of its {notes} notes".replace(",", " ")
    assert claim in " ".join(doc.split()), claim
    kinds = Counter(m.kind for m in rite.markers)
    assert len(midi.read_markers(one)) == sum(kinds.values())
    claim = (f"Of the whole rite's {sum(kinds.values())} markers, {kinds['step']} are steps, "
             f"{kinds['section']} sections, {kinds['speech']} speech, {kinds['music']} music, "
             f"{kinds['shot']} shots")
    assert claim in " ".join(doc.split()), claim


def test_the_sounds_of_actions_place_and_speech_are_left_to_the_audio(tmp_path):
    """A musician's MIDI holds the parts played; the rite's footsteps, bed and speech
    are in the audio render (speech as markers here), and the reading is named."""
    from soundscape.sequence.planner import perform_from_file

    part = perform_from_file(seed=0, from_section="s18", to_section="s18")
    groups = {part.sources[e.source].group for e in part.events}
    assert {"action", "place"} <= groups
    path = midi.write_midi(part, tmp_path / "s18.mid", listener=LISTENER)
    loaded = mido.MidiFile(path, charset="utf-8")
    names = [t.name for t in loaded.tracks[1:]]
    played = {s.name for s in part.sources.values() if s.group not in midi.NOT_PLAYED}
    assert names and all(any(n.startswith(p) for p in played) for n in names)
    texts = [m.text for m in loaded.tracks[0] if m.type == "text"]
    assert any("middle-chinese" in t for t in texts)


def test_grid_moves_notes_onto_the_beat_and_keeps_them_sounding(tmp_path):
    performance = _two_pieces()
    jittered = replace(performance, events=tuple(
        replace(e, time=e.time + (0.05 if i % 2 else -0.04)) for i, e in
        enumerate(performance.events)))
    tmap = midi.tempo_map_of(jittered)
    path = midi.write_midi(jittered, tmp_path / "g.mid", listener=None, grid=4)
    file = mido.MidiFile(path)
    step = midi.TICKS_PER_BEAT // 4
    notes = midi.read_events(path)
    assert len(notes) == len(jittered.events)
    for segment, piece in ((tmap.segments[1], "luming"), (tmap.segments[3], "lishou")):
        ticks = _note_ticks(file, piece, replace(jittered, events=tuple(
            replace(e, time=tmap.snap(e.time, e.end, 4)[0]) for e in jittered.events)))
        assert ticks and all((t - segment.tick) % step == 0 for t in ticks)
    beat_s = 60 / 44
    moved = [abs(n.time - e.time) for n, e in zip(notes, sorted(jittered.events,
                                                                 key=lambda e: e.time),
                                                  strict=True)]
    assert max(moved) <= beat_s / 8 + 0.001  # at most half a step (a quarter beat)
    assert min(n.duration for n in notes) > 0
    with pytest.raises(RenderError, match="accepted: 1, 2, 4, 8, 16"):
        midi.write_midi(jittered, tmp_path / "x.mid", listener=None, grid=3)


def test_a_second_split_into_a_folder_being_written_is_refused(tmp_path):
    """Two splits into one folder interleaved their files, leaving a set of both."""
    from soundscape.fileio import held

    rite = sequence.perform_from_file(seed=0, from_section="s18", to_section="s19")
    with held(tmp_path, RenderError, "a test's files"), pytest.raises(RenderError) as raised:
        midi.write_split(rite, tmp_path, by="section", listener=None)
    assert str(raised.value) == (f"{tmp_path}: another run is writing MIDI files by section "
                                 "there; run again when it has ended, or write elsewhere")
    assert list(tmp_path.iterdir()) == []
    assert [p.name for p in midi.write_split(rite, tmp_path, by="section", listener=None)] \
        == ["s18.mid", "s19.mid"]  # the lock went with the run that held it


def test_a_split_that_fails_midway_leaves_the_earlier_set(tmp_path, monkeypatch):
    """Files were written one by one: a failure at the second left a mixed set."""
    rite = sequence.perform_from_file(seed=0, from_section="s18", to_section="s19")
    midi.write_split(rite, tmp_path, by="section", listener=None, tuning_mode="12tet")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real, saved = mido.MidiFile.save, []

    def save_once(self, path):
        if saved:
            raise OSError(28, "No space left on device")
        saved.append(path)
        real(self, path)

    monkeypatch.setattr(mido.MidiFile, "save", save_once)
    with pytest.raises(OSError):
        midi.write_split(rite, tmp_path, by="section", listener=None)
    assert saved and {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    with pytest.raises(OSError):  # a folder the split made goes with it (docs/midi.md)
        midi.write_split(rite, tmp_path / "new", by="section", listener=None)
    assert not (tmp_path / "new").exists()
