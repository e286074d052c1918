"""Write a Performance as a type-1 MIDI file for musicians, and read our files back.

Layout of the file:

- Track 0 (conductor): title, tempo, the tuning set-up (MTS scale/octave
  tuning, or the pitch-bend range for the MPE-style fallback), a ``marker`` at
  every ritual marker and a ``text`` event naming each piece and its basis.
  Marker text is ``gloss | 中文``: the Latin gloss first, so players that decode
  text as Latin-1 still show something readable before the mojibake; players
  that read UTF-8 (FluidSynth, Reaper, MuseScore) show both.
- One track per placed source that sounds, named ``東縣 笙鐘 east rack …``
  (``Source.name`` then ``Source.roman``), with ``lyrics`` events (one
  character per note) for sung notes.
- Channels are shared out note by note: a note takes a channel whose program,
  pan, volume (and, for ``mpe``, bend) already match, else a free one (no note
  sounding or ringing), else the one that frees soonest; the changes are sent
  just before the note. Drums are pitched tracks (see ``data/midi_programs.toml``)
  so every drum keeps its own pan; channel 10 is never used.
- Pan (CC10) from the source's azimuth as the listener hears it,
  ``64 − 63·sin(azimuth)`` (sources behind fold to the front); volume (CC7)
  from distance, inverse-distance law relative to ``REFERENCE_DISTANCE_M``
  under the GM volume curve (40·log10(cc/127) dB), so the level falls 6 dB per
  doubling of distance.

Times stay absolute seconds until here; ticks come from ``mido.second2tick`` at
a fixed tempo, rounding each absolute time (never deltas), so the error stays
below half a tick (0.26 ms) over any length.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import mido

from soundscape.errors import RenderError
from soundscape.fileio import atomic_path
from soundscape.output import mts
from soundscape.performance import Event, Performance, Source
from soundscape.resources import data_dir

__all__ = [
    "REFERENCE_DISTANCE_M",
    "TEMPO_BPM",
    "TICKS_PER_BEAT",
    "TUNING_MODES",
    "NoteRecord",
    "Program",
    "load_programs",
    "pan_value",
    "program_for",
    "read_events",
    "read_markers",
    "volume_value",
    "write_midi",
]

TUNING_MODES = ("mts", "mpe", "12tet")
TICKS_PER_BEAT = 960
TEMPO_BPM = 120.0  # a tick is 1/1920 s ≈ 0.52 ms; beats are clock half-seconds, not music
REFERENCE_DISTANCE_M = 2.0  # full volume at or nearer than this
RING_S = 1.5  # a channel counts as busy this long after a note-off (bells ring on)
_MELODIC_CHANNELS = tuple(c for c in range(16) if c != 9)
_TEMPO = mido.bpm2tempo(TEMPO_BPM)
# Order of messages at one tick: note-offs, then set-up, then lyrics, then note-ons.
_NOTE_OFF, _SETUP, _LYRIC, _NOTE_ON = range(4)


@dataclass(frozen=True, slots=True)
class Program:
    """How an instrument sounds in General MIDI.

    Parameters
    ----------
    program : int, 0–127
        GM program (0-based).
    key : int, 0–127
        MIDI key for unpitched strokes.
    reason : str
        Why this program.
    """

    program: int
    key: int
    reason: str


def load_programs(path: str | Path | None = None) -> dict[str, Program]:
    """The GM program per instrument id (``soundscape/data/midi_programs.toml``)."""
    path = Path(path) if path is not None else data_dir() / "midi_programs.toml"
    with path.open("rb") as handle:
        table = tomllib.load(handle)
    programs = {}
    for name, row in table.get("programs", {}).items():
        for field in ("program", "key"):
            value = row.get(field)
            if not (isinstance(value, int) and 0 <= value <= 127):
                raise RenderError(f"{path}: programs.{name}.{field}={value!r} must be an "
                                  "integer 0–127")
        programs[name] = Program(row["program"], row["key"], str(row.get("reason", "")))
    return programs


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """A note as read back from a MIDI file.

    Parameters
    ----------
    time, duration : float, seconds
    track : str
        Name of the track it is in.
    channel, key, program : int
    hz : float, Hz
        Sounding frequency, with MTS scale/octave tuning and pitch bend applied.
    velocity : float in (0, 1]
    pan, volume : int or None
        CC10 and CC7 on the channel when the note started (None if never set).
    lyric : str or None
    """

    time: float
    duration: float
    track: str
    channel: int
    key: int
    hz: float
    velocity: float
    program: int
    pan: int | None
    volume: int | None
    lyric: str | None


# -- writing -------------------------------------------------------------------------


@dataclass(slots=True)
class _Note:
    time: float
    end: float
    track: int
    key: int
    velocity: int
    state: tuple  # (program, pan, volume, bend): what the channel must be set to
    lyric: str | None
    channel: int = -1


def write_midi(performance: Performance, path: str | Path, *, listener,
               tuning_mode: str = "mts") -> Path:
    """Write ``performance`` as a type-1 MIDI file, atomically.

    Parameters
    ----------
    performance : Performance
    path : path-like
        Target ``.mid`` file.
    listener : soundscape.site.listeners.Listener, ListenerPath or None
        Who hears it: pan and volume come from each sound's direction and
        distance at its onset. None writes no pan or volume.
    tuning_mode : {'mts', 'mpe', '12tet'}
        ``mts``: MTS scale/octave tuning, one key per 律, exact for pure-octave
        tunings such as 三分損益; ``mpe``: nearest key plus pitch bend, one
        sounding pitch per channel (for synths without MTS); ``12tet``: nearest
        key, no retuning (rehearsal with fixed-pitch instruments).

    Returns
    -------
    Path
    """
    if tuning_mode not in TUNING_MODES:
        raise RenderError(f"tuning_mode={tuning_mode!r}, accepted: {', '.join(TUNING_MODES)}")
    programs = load_programs()
    sources = [s for s in performance.sources.values()
               if any(e.source == s.id for e in performance.events)]
    track_of = {s.id: i + 1 for i, s in enumerate(sources)}
    pitches = {e.pitch for e in performance.events if e.pitch is not None}
    keys = mts.key_map(pitches)
    notes = [_plan_note(e, performance.sources[e.source], track_of[e.source],
                        program_for(programs, performance.sources[e.source].instrument,
                                    who=f"source {e.source!r}"), listener,
                        tuning_mode, keys) for e in performance.events]
    _assign_channels(notes)
    conductor = _conductor(performance, tuning_mode, pitches, keys)
    tracks = _track_messages(notes, len(sources))
    midi = mido.MidiFile(type=1, ticks_per_beat=TICKS_PER_BEAT, charset="utf-8")
    midi.tracks.append(_to_track(conductor))
    for source, items in zip(sources, tracks, strict=True):
        name = mido.MetaMessage("track_name", name=f"{source.name} {source.roman}".strip())
        midi.tracks.append(_to_track([(0.0, -1, name), *items]))
    with atomic_path(path) as tmp:
        midi.save(tmp)
    return Path(path)


def program_for(programs: Mapping[str, Program], instrument: str, *, who: str) -> Program:
    """The GM program of ``instrument`` (played by ``who``, named in the error); RenderError
    naming the known ones if none."""
    try:
        return programs[instrument]
    except KeyError:
        raise RenderError(f"{who}: instrument {instrument!r} has no GM program in "
                          f"midi_programs.toml; known: {', '.join(sorted(programs))}") from None


def _plan_note(event: Event, source: Source, track: int, program: Program, listener,
               tuning_mode: str, keys: mts.KeyMap) -> _Note:
    bend = 0 if tuning_mode == "mpe" else None
    if event.pitch is None:
        key = program.key
    elif tuning_mode == "mts":
        key = keys.key(event.pitch)
    else:
        key, cents = event.pitch.nearest_midi()
        if tuning_mode == "mpe":
            bend = mts.cents_to_bend(cents)
    if not 0 <= key <= 127:
        raise RenderError(f"event at t={event.time:.3f} ({source.id}): key {key} outside 0–127")
    pan = volume = None
    if listener is not None:
        where = event.position or source.position_at(event.time)
        azimuth, _, distance = listener.at(event.time).direction_to(where)
        pan, volume = pan_value(azimuth), volume_value(distance)
    return _Note(event.time, event.end, track, key, max(1, round(event.velocity * 127)),
                 (program.program, pan, volume, bend), event.lyric)


def pan_value(azimuth_deg: float) -> int:
    """CC10 for a source at ``azimuth_deg`` (0 ahead, positive left): 1 left … 127 right."""
    return min(127, max(0, round(64 - 63 * math.sin(math.radians(azimuth_deg)))))


def volume_value(distance_m: float) -> int:
    """CC7 for a source ``distance_m`` away: −6 dB per doubling beyond the reference distance."""
    gain = min(1.0, REFERENCE_DISTANCE_M / max(distance_m, 1e-9))  # amplitude, 1/r
    return max(1, round(127 * math.sqrt(gain)))  # GM: level = 40·log10(cc/127) dB


def _assign_channels(notes: list[_Note]) -> None:
    """Give every note a channel (see the module docstring); notes are in time order.

    A note never shares a channel with a sounding note on the same key; a note
    whose key restarts on its channel is cut short where the new one starts.
    """
    state: dict[int, tuple | None] = dict.fromkeys(_MELODIC_CHANNELS)
    busy: dict[int, float] = dict.fromkeys(_MELODIC_CHANNELS, -math.inf)
    owner: dict[int, int] = dict.fromkeys(_MELODIC_CHANNELS, 0)
    last: dict[tuple[int, int], _Note] = {}
    for note in notes:
        def rank(c, note=note):
            before = last.get((c, note.key))
            clash = before is not None and before.end > note.time
            return (clash, state[c] != note.state, busy[c] > note.time,
                    owner[c] != note.track, busy[c], c)
        channel = min(_MELODIC_CHANNELS, key=rank)
        note.channel = channel
        before = last.get((channel, note.key))
        if before is not None and before.end > note.time:
            before.end = note.time
        last[(channel, note.key)] = note
        busy[channel] = max(busy[channel], note.end + RING_S)
        owner[channel] = note.track
        state[channel] = note.state


def _track_messages(notes: list[_Note], n_tracks: int) -> list[list[tuple]]:
    """Per track, ``(time s, order, message)``: set-up that changes the channel, the lyric,
    note-on and note-off. Notes cut to nothing by a restart at the same instant are dropped."""
    tracks: list[list[tuple]] = [[] for _ in range(n_tracks)]
    sent: dict[tuple[int, str], int | None] = {}
    for note in notes:
        if note.end <= note.time:
            continue
        program, pan, volume, bend = note.state
        ch = note.channel
        wanted = [("program", program, mido.Message("program_change", channel=ch,
                                                     program=program))]
        if pan is not None:
            wanted += [("cc10", pan, _cc(ch, 10, pan)), ("cc7", volume, _cc(ch, 7, volume))]
        if bend is not None:
            wanted.append(("bend", bend, mido.Message("pitchwheel", channel=ch, pitch=bend)))
        items = tracks[note.track - 1]
        for slot, value, message in wanted:
            if sent.get((ch, slot)) != value:
                sent[(ch, slot)] = value
                items.append((note.time, _SETUP, message))
        if note.lyric:
            items.append((note.time, _LYRIC, mido.MetaMessage("lyrics", text=note.lyric)))
        items.append((note.time, _NOTE_ON,
                      mido.Message("note_on", channel=ch, note=note.key, velocity=note.velocity)))
        items.append((note.end, _NOTE_OFF, mido.Message("note_off", channel=ch, note=note.key)))
    return tracks


def _cc(channel: int, control: int, value: int) -> mido.Message:
    return mido.Message("control_change", channel=channel, control=control, value=value)


def _conductor(performance: Performance, tuning_mode: str, pitches: Iterable,
               keys: mts.KeyMap) -> list[tuple]:
    """Title, tempo, tuning set-up, ritual markers and piece notes, as ``(time, order, msg)``."""
    title = performance.info.title or "大射儀 Da she yi (Great Archery Rite)"
    items: list[tuple] = [(0.0, _SETUP, mido.MetaMessage("track_name", name=title)),
                          (0.0, _SETUP, mido.MetaMessage("set_tempo", tempo=_TEMPO))]
    if tuning_mode == "mts":
        offsets = mts.pitch_class_offsets(pitches, keys)
        items.append((0.0, _SETUP,
                      mts.scale_octave_tuning(offsets, channels=_MELODIC_CHANNELS)))
    elif tuning_mode == "mpe":
        items += [(0.0, _SETUP, m) for c in _MELODIC_CHANNELS for m in mts.bend_range_messages(c)]
    for marker in performance.markers:
        text = f"{marker.gloss} | {marker.text}" if marker.gloss else marker.text
        items.append((marker.time, _SETUP, mido.MetaMessage("marker", text=text)))
    for piece in performance.pieces.values():
        start = min((e.time for e in performance.events if e.piece == piece.id), default=None)
        if start is not None:
            text = f"{piece.title} ({piece.id}): {piece.basis}. {piece.note}".strip()
            items.append((start, _SETUP, mido.MetaMessage("text", text=text)))
    return items


def _to_track(items: list[tuple]) -> mido.MidiTrack:
    """Sort ``(time s, order, message)`` items, convert absolute seconds to delta ticks."""
    track = mido.MidiTrack()
    now = 0
    for time, _, message in sorted(items, key=lambda item: (item[0], item[1])):
        tick = round(mido.second2tick(time, TICKS_PER_BEAT, _TEMPO))
        track.append(message.copy(time=tick - now))
        now = tick
    return track


# -- reading -------------------------------------------------------------------------


def _tempo_map(midi: mido.MidiFile) -> list[tuple[int, float, int]]:
    """``(tick, seconds, tempo)`` at every tempo change (from all tracks)."""
    changes = sorted({(tick, msg.tempo) for tick, _, msg in _absolute(midi)
                      if msg.type == "set_tempo"})
    table = [(0, 0.0, 500000)]
    for tick, tempo in changes:
        t0, s0, old = table[-1]
        table.append((tick, s0 + mido.tick2second(tick - t0, midi.ticks_per_beat, old), tempo))
    return table


def _seconds(tick: int, table: list[tuple[int, float, int]], ticks_per_beat: int) -> float:
    t0, s0, tempo = next(row for row in reversed(table) if row[0] <= tick)
    return s0 + mido.tick2second(tick - t0, ticks_per_beat, tempo)


def _absolute(midi: mido.MidiFile) -> list[tuple[int, int, mido.Message]]:
    """Every message with its absolute tick and track index, in playing order."""
    rows = []
    for index, track in enumerate(midi.tracks):
        tick = 0
        for message in track:
            tick += message.time
            rows.append((tick, index, message))
    order = {"note_off": _NOTE_OFF, "lyrics": _LYRIC, "note_on": _NOTE_ON}

    def rank(row):
        tick, index, message = row
        kind = order.get(message.type, _SETUP)
        if message.type == "note_on" and message.velocity == 0:
            kind = _NOTE_OFF
        return tick, kind, index
    return sorted(rows, key=rank)


def read_events(path: str | Path) -> list[NoteRecord]:
    """The notes of a MIDI file with their sounding pitch, sorted by onset.

    Reads MTS scale/octave tuning, pitch bend with RPN 0 bend range, program,
    pan, volume, lyrics and tempo changes, so it reads any file of this shape,
    not only ours.
    """
    midi = mido.MidiFile(path, charset="utf-8")
    table = _tempo_map(midi)
    names = {i: next((m.name for m in t if m.type == "track_name"), "")
             for i, t in enumerate(midi.tracks)}
    tuning = {c: (0.0,) * 12 for c in range(16)}
    program, pan, volume = dict.fromkeys(range(16), 0), {}, {}
    bend, bend_range, rpn = dict.fromkeys(range(16), 0), {}, {}
    lyric: dict[tuple[int, int], str] = {}
    open_notes: dict[tuple[int, int], tuple] = {}
    found = []
    for tick, index, msg in _absolute(midi):
        now = _seconds(tick, table, midi.ticks_per_beat)
        if msg.type == "lyrics":
            lyric[(index, tick)] = msg.text
        elif msg.type == "sysex" and (parsed := mts.parse_scale_octave(msg)):
            for channel in parsed[0]:
                tuning[channel] = parsed[1]
        elif msg.type == "program_change":
            program[msg.channel] = msg.program
        elif msg.type == "pitchwheel":
            bend[msg.channel] = msg.pitch
        elif msg.type == "control_change":
            _control(msg, pan, volume, rpn, bend_range)
        elif msg.type == "note_on" and msg.velocity > 0:
            ch = msg.channel
            cents = tuning[ch][msg.note % 12] + mts.bend_to_cents(
                bend[ch], bend_range.get(ch, mts.BEND_RANGE_SEMITONES))
            open_notes[(ch, msg.note)] = (
                now, names[index], mts.hz_of_key(msg.note, cents), msg.velocity / 127,
                program[ch], pan.get(ch), volume.get(ch), lyric.pop((index, tick), None))
        elif msg.type in ("note_on", "note_off") and (msg.channel, msg.note) in open_notes:
            start, name, hz, vel, prog, p, v, text = open_notes.pop((msg.channel, msg.note))
            found.append(NoteRecord(start, now - start, name, msg.channel, msg.note, hz, vel,
                                    prog, p, v, text))
    return sorted(found, key=lambda n: (n.time, n.track, n.key))


def _control(msg: mido.Message, pan: dict, volume: dict, rpn: dict, bend_range: dict) -> None:
    ch, control, value = msg.channel, msg.control, msg.value
    if control == 10:
        pan[ch] = value
    elif control == 7:
        volume[ch] = value
    elif control in (101, 100):
        rpn[(ch, control)] = value
    elif control == 6 and rpn.get((ch, 101)) == 0 and rpn.get((ch, 100)) == 0:
        bend_range[ch] = value


def read_markers(path: str | Path) -> list[tuple[float, str]]:
    """``(time s, text)`` of every marker meta event, in order."""
    midi = mido.MidiFile(path, charset="utf-8")
    table = _tempo_map(midi)
    return [(_seconds(tick, table, midi.ticks_per_beat), msg.text)
            for tick, _, msg in _absolute(midi) if msg.type == "marker"]
