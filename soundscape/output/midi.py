"""Write a Performance as a type-1 MIDI file for musicians, and read our files back.

Layout of the file:

- Track 0 (conductor): title, the tempo map (``tempo_map``: each piece in its own tempo
  and bars of four of its beats, the rite's clock between pieces), a ``marker`` at every
  ritual marker and a ``text`` event naming each piece and its basis. Marker text is
  ``中文 | English`` in UTF-8, in full.
- One track per placed source that sounds, named ``東縣 笙鐘 east rack …``
  (``Source.name`` then ``Source.roman``), with ``lyrics`` events (one character per
  note) for sung notes. Each track sets up its own channel(s) at its start: program,
  tuning (MTS scale/octave for its channel, or the pitch-bend range), pan and volume;
  no track relies on another's set-up.
- Channels (channel 10 is never used: drums are pitched tracks, see
  ``data/midi_programs.toml``). By default (``ports="one"``) the file is one port, so it
  plays right in players that ignore ports (FluidSynth among them): tracks of one GM
  program share a channel (the tuning is the same on every channel), and the channels
  left over split the groups whose tracks stand farthest apart, left from right, so pan
  survives where it can. A channel that several tracks share keeps one pan (their
  median) and full CC7 volume; each note's distance goes into its velocity instead
  (the GM curves of both are 40·log10(x/127) dB, so the level is the same). A track
  alone on its channel sends pan and volume as they change. With ``ports="many"``
  (always with ``mpe``) every track has channels of its own: one with ``mts`` and
  ``12tet``; with ``mpe`` as many as it sounds different bends at once (one pitch bend
  per channel); when the 15 channels of a port run out, tracks go on to further MIDI
  ports, named by the ``midi_port`` meta event (FF 21) at each track's start, which
  DAWs and multi-port players keep apart.
- Pan (CC10) from the source's azimuth as the listener hears it,
  ``64 − 63·sin(azimuth)`` (sources behind fold to the front); volume (CC7)
  from distance, inverse-distance law relative to ``REFERENCE_DISTANCE_M``
  under the GM volume curve (40·log10(cc/127) dB), so the level falls 6 dB per
  doubling of distance. They are sent when they change, just before a note.

Times stay absolute seconds until here; ticks come from the tempo map, rounding each
absolute time (never deltas), so the error stays below half a tick over any length.
"""

from __future__ import annotations

import collections
import itertools
import math
import statistics
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import mido

from soundscape.errors import RenderError, RepertoireError
from soundscape.fileio import atomic_path, write_set
from soundscape.output import mts, tempo_map
from soundscape.output.tempo_map import TICKS_PER_BEAT
from soundscape.performance import Event, Performance, Source
from soundscape.resources import data_dir

__all__ = [
    "CHANNELS_PER_PORT",
    "GRIDS",
    "PORTS",
    "REFERENCE_DISTANCE_M",
    "SPLITS",
    "TICKS_PER_BEAT",
    "TUNING_MODES",
    "NoteRecord",
    "Program",
    "load_programs",
    "marker_text",
    "midi_file",
    "music_only",
    "note_count",
    "pan_value",
    "parts",
    "program_for",
    "read_events",
    "read_markers",
    "save_midi",
    "tempo_map_of",
    "volume_value",
    "write_midi",
    "write_split",
]

TUNING_MODES = ("mts", "mpe", "12tet")
GRIDS = (1, 2, 4, 8, 16)  # steps per beat a notation file's notes may be moved onto
SPLITS = ("piece", "section")
PORTS = ("one", "many")  # one port, channels shared by program; or channels of its own each
REFERENCE_DISTANCE_M = 2.0  # full volume at or nearer than this
RING_S = 1.5  # mpe: a channel counts as busy this long after a note-off (bells ring on)
_MELODIC_CHANNELS = tuple(c for c in range(16) if c != 9)
CHANNELS_PER_PORT = len(_MELODIC_CHANNELS)
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
    port : int
        The MIDI port of its track (``midi_port`` meta event; 0 without one).
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
    port: int = 0


# -- writing -------------------------------------------------------------------------


@dataclass(slots=True)
class _Note:
    time: float
    end: float
    key: int
    velocity: int
    state: tuple  # (pan, volume, bend): what the channel must be set to
    lyric: str | None
    channel: int = -1


def write_midi(performance: Performance, path: str | Path, *, listener,
               tuning_mode: str = "mts", grid: int | None = None, ports: str = "one") -> Path:
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
    grid : int or None
        For notation: every note's start and end moved to the nearest 1/``grid`` of the
        beat of the tempo map (``GRIDS``), at least one step long. None (the default)
        keeps every time exact.
    ports : {'one', 'many'}
        ``one`` (the default): one MIDI port, channels shared by GM program, for players
        that ignore ports; ``many``: every track its own channels, over as many ports as
        that takes (``mpe`` always). See the module docstring.

    Returns
    -------
    Path
    """
    return save_midi(midi_file(performance, listener=listener, tuning_mode=tuning_mode,
                               grid=grid, ports=ports), path)


def save_midi(made: mido.MidiFile, path: str | Path) -> Path:
    """Write a made MIDI file to ``path``, atomically (nothing half-written is left)."""
    with atomic_path(path) as tmp:
        made.save(tmp)
    return Path(path)


def write_split(performance: Performance, folder: str | Path, *, by: str, listener,
                tuning_mode: str = "mts", grid: int | None = None, ports: str = "one"
                ) -> list[Path]:
    """Write one MIDI file per piece or per section into ``folder`` (see :func:`parts`).

    Every file is made before any is written, and the set is placed whole or not at all
    (:func:`soundscape.fileio.atomic_paths`), so an error leaves the folder as it was.
    Files of the same kind an earlier run wrote there and this one does not (a piece the
    edited sheet no longer plays) are removed; other files in the folder are left alone
    (:func:`soundscape.fileio.replace_set`). A second split into the same folder while
    this one writes is refused (:func:`soundscape.fileio.held`).
    """
    made = {name: midi_file(part, listener=listener, tuning_mode=tuning_mode, grid=grid,
                            ports=ports).save
            for name, part in parts(performance, by)}  # every file made before any is written
    return write_set(folder, made,
                     record=f".soundscape.{by}s", error=RenderError,
                     what=f"MIDI files by {by}", kinds=(".mid",))


def parts(performance: Performance, by: str) -> list[tuple[str, Performance]]:
    """``(file name, Performance)`` per piece played (``by="piece"``: the cue's notes,
    ``NN-CUE.mid`` in playing order) or per section (``by="section"``: everything from its
    start to the next section's, ``SECTION.mid``; a section that takes no time on the day,
    such as the preparations s01–s04, has none), each on its own clock."""
    if by == "piece":
        return [(f"{n:02d}-{span.cue}.mid",
                 _only_cue(performance.between(span.start, span.end), span.cue))
                for n, span in enumerate(sorted(performance.music, key=lambda m: m.start), 1)]
    if by == "section":
        sections = sorted(performance.sections, key=lambda s: s.start)
        stops = [s.start for s in sections[1:]] + [performance.duration + 1.0]
        return [(f"{s.id}.mid", performance.between(s.start, stop))
                for s, stop in zip(sections, stops, strict=True) if stop > s.start]
    raise RenderError(f"split by {by!r}; accepted: {', '.join(SPLITS)}")


#: Source groups the MIDI file leaves to the audio render: the sounds of the rite's
#: actions, the place's bed and the spoken words (these are markers here) are no parts
#: a musician plays.
NOT_PLAYED = ("action", "place", "speech")


#: Articulations that are no notes: a singer's breath between phrases (sequence.singing).
NOT_NOTES = ("inhale",)


def music_only(performance: Performance) -> Performance:
    return replace(performance, events=tuple(
        e for e in performance.events if performance.sources[e.source].group not in NOT_PLAYED
        and e.articulation not in NOT_NOTES))


def _only_cue(performance: Performance, cue: str) -> Performance:
    return replace(performance, events=tuple(e for e in performance.events if e.cue == cue))


def midi_file(performance: Performance, *, listener, tuning_mode: str = "mts",
              grid: int | None = None, ports: str = "one") -> mido.MidiFile:
    """The MIDI file of ``performance`` (see the module docstring and :func:`write_midi`)."""
    if tuning_mode not in TUNING_MODES:
        raise RenderError(f"tuning_mode={tuning_mode!r}, accepted: {', '.join(TUNING_MODES)}")
    if ports not in PORTS:
        raise RenderError(f"ports={ports!r}, accepted: {', '.join(PORTS)}")
    if grid is not None and grid not in GRIDS:
        raise RenderError(f"grid={grid!r}, accepted: {', '.join(map(str, GRIDS))}")
    programs = load_programs()
    performance = music_only(performance)
    sounding = {e.source for e in performance.events}
    sources = [s for s in performance.sources.values() if s.id in sounding]
    pitches = {e.pitch for e in performance.events if e.pitch is not None}
    keys = mts.key_map(pitches)
    offsets = mts.pitch_class_offsets(pitches, keys) if tuning_mode == "mts" else None
    tmap = tempo_map_of(performance)
    by_source: dict[str, list[Event]] = {s.id: [] for s in sources}
    for event in performance.events:
        by_source[event.source].append(event)
    planned = []
    for source in sources:
        program = program_for(programs, source.instrument, who=f"source {source.id!r}")
        notes = [_plan_note(e, source, program, listener, tuning_mode, keys)
                 for e in by_source[source.id]]
        if grid is not None:
            _snap(notes, tmap, grid)
        _assign_channels(notes, _MELODIC_CHANNELS if tuning_mode == "mpe"
                         else _MELODIC_CHANNELS[:1])
        planned.append((source, program, notes))
    if ports == "one" and tuning_mode != "mpe":
        places = _share(planned)
    else:
        places = _pack([len({n.channel for n in notes}) for _, _, notes in planned])
    multiport = any(port for port, _ in places)
    midi = mido.MidiFile(type=1, ticks_per_beat=TICKS_PER_BEAT, charset="utf-8")
    midi.tracks.append(_conductor(performance, tmap))
    for (source, program, notes), (port, channels) in zip(planned, places, strict=True):
        relabel = dict(zip(sorted({n.channel for n in notes}), channels, strict=True))
        for note in notes:
            note.channel = relabel[note.channel]
        setup = _track_setup(source, port if multiport else None, program, notes, offsets,
                             tuning_mode)
        midi.tracks.append(_to_track([*setup, *_note_messages(notes)], tmap))
    return midi


def _share(planned: list[tuple[Source, Program, list[_Note]]]
           ) -> list[tuple[int, tuple[int, ...]]]:
    """``(0, (channel,))`` per track of a one-port file (see module): one channel per GM
    program; spare channels first part tracks that would sound one key at once on a
    channel (a channel sounds a key once: the four 瑟 in unison), then split the groups
    of widest pan. The notes of a shared channel take its one pan and carry their volume
    in their velocity; a note still sounding when another track starts its key there is
    cut just before."""
    groups: dict[int, list[int]] = {}
    for i, (_, program, _) in enumerate(planned):
        groups.setdefault(program.program, []).append(i)
    if len(groups) > len(_MELODIC_CHANNELS):
        raise RenderError(f"{len(groups)} GM programs do not fit the "
                          f"{len(_MELODIC_CHANNELS)} channels of one MIDI port; write "
                          "ports='many' (soundscape midi --ports many)")
    notes = [n for _, _, n in planned]
    pans = [_median_pan(n) for n in notes]
    channels = [sorted(g, key=lambda i: (pans[i], i)) for g in groups.values()]
    while 0 < len(channels) < len(_MELODIC_CHANNELS):
        clashes = [_clashes([notes[i] for i in g], g) for g in channels]
        worst = max(range(len(channels)), key=lambda k: (sum(clashes[k].values()), -k))
        if sum(clashes[worst].values()):
            alone = max(clashes[worst], key=lambda i: (clashes[worst][i], -i))
            channels[worst] = [i for i in channels[worst] if i != alone]
            channels.append([alone])
            continue
        widest = max(channels, key=lambda g: (pans[g[-1]] - pans[g[0]], -g[0]))
        if pans[widest[-1]] == pans[widest[0]]:
            break
        gaps = [pans[b] - pans[a] for a, b in itertools.pairwise(widest)]
        cut = gaps.index(max(gaps)) + 1
        channels.remove(widest)
        channels += [widest[:cut], widest[cut:]]
    channels.sort(key=min)  # channels in the order their first track comes
    places: list[tuple[int, tuple[int, ...]]] = [(0, ())] * len(planned)
    for channel, members in zip(_MELODIC_CHANNELS, channels, strict=False):
        pan = round(statistics.median(pans[i] for i in members))
        for i in members:
            places[i] = (0, (channel,))
            if len(members) > 1:
                _fold_volume(notes[i], pan)
        if len(members) > 1:
            _cut_before_restrikes([notes[i] for i in members])
    return places


def _by_key(tracks: list[list[_Note]], ids: list[int]) -> dict[int, list[tuple]]:
    """``(time, id, note)`` per key, in time order, over several tracks' notes."""
    found: dict[int, list[tuple]] = collections.defaultdict(list)
    for track, ident in zip(tracks, ids, strict=True):
        for note in track:
            found[note.key].append((note.time, ident, note))
    for rows in found.values():
        rows.sort(key=lambda row: row[:2])
    return found


def _clashes(tracks: list[list[_Note]], ids: list[int]) -> collections.Counter:
    """Per track id: its notes that start while another track's note on the same key still
    sounds (or starts with it)."""
    count: collections.Counter = collections.Counter()
    for rows in _by_key(tracks, ids).values():
        ends: dict[int, float] = {}
        for time, ident, note in rows:
            if any(end > time for other, end in ends.items() if other != ident):
                count[ident] += 1
            ends[ident] = max(ends.get(ident, -math.inf), note.end)
    return count


#: A note cut for another track's strike of its key on a shared channel ends this long
#: before it (≥ 1 tick at every tempo of the map), so every player reads off before on.
_RESTRIKE_GAP_S = 0.001


def _cut_before_restrikes(tracks: list[list[_Note]]) -> None:
    """On a shared channel, end a note just before a later note of another track on its key
    (notes starting together stay: the channel sounds that key once)."""
    for rows in _by_key(tracks, list(range(len(tracks)))).values():
        for (time, ident, note), (later, other, _) in itertools.pairwise(rows):
            if other != ident and later > time and note.end > later - _RESTRIKE_GAP_S:
                note.end = max(time, later - _RESTRIKE_GAP_S)


def _median_pan(notes: list[_Note]) -> float:
    pans = [n.state[0] for n in notes if n.state[0] is not None]
    return statistics.median(pans) if pans else 64.0


def _fold_volume(notes: list[_Note], pan: int) -> None:
    """A shared channel's notes: its one pan, full volume, their own volume in velocity."""
    for note in notes:
        _, volume, bend = note.state
        if volume is None:
            continue
        note.velocity = max(1, round(note.velocity * volume / 127))
        note.state = (pan, 127, bend)


def _snap(notes: list[_Note], tmap: tempo_map.TempoMap, grid: int) -> None:
    """Move each note's start and end onto the grid (a note keeps at least one step)."""
    for note in notes:
        note.time, note.end = tmap.snap(note.time, note.end, grid)
    notes.sort(key=lambda n: n.time)


def _pack(needs: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    """``(port, channels)`` for tracks needing ``needs`` channels each: the next free
    channels of the current port, a new port when it has too few left."""
    places, port, free = [], 0, list(_MELODIC_CHANNELS)
    for need in needs:
        if need > len(free):
            port, free = port + 1, list(_MELODIC_CHANNELS)
        places.append((port, tuple(free[:need])))
        free = free[need:]
    return places


def tempo_map_of(performance: Performance) -> tempo_map.TempoMap:
    """Each piece at the tempo the Performance says it was played at (the map the MIDI file
    and the performance score share); a Performance saved before it kept tempos gives the
    repertoire's, and pieces the repertoire lacks stay on the clock."""
    from soundscape.music import repertoire

    def bpm(piece: str) -> float | None:
        try:
            return repertoire.load_piece(piece).tempo_bpm
        except (RepertoireError, OSError):
            return None
    tempos = {m.piece: bpm(m.piece) for m in performance.music if m.tempo_bpm is None}
    return tempo_map.build([(m.start, m.end, m.tempo_bpm if m.tempo_bpm is not None
                             else tempos[m.piece], m.piece)
                            for m in performance.music], performance.duration)


def program_for(programs: Mapping[str, Program], instrument: str, *, who: str) -> Program:
    """The GM program of ``instrument`` (played by ``who``, named in the error); RenderError
    naming the known ones if none."""
    try:
        return programs[instrument]
    except KeyError:
        raise RenderError(f"{who}: instrument {instrument!r} has no GM program in "
                          f"midi_programs.toml; known: {', '.join(sorted(programs))}") from None


def _plan_note(event: Event, source: Source, program: Program, listener, tuning_mode: str,
               keys: mts.KeyMap) -> _Note:
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
    return _Note(event.time, event.end, key, max(1, round(event.velocity * 127)),
                 (pan, volume, bend), event.lyric)


def pan_value(azimuth_deg: float) -> int:
    """CC10 for a source at ``azimuth_deg`` (0 ahead, positive left): 1 left … 127 right."""
    return min(127, max(0, round(64 - 63 * math.sin(math.radians(azimuth_deg)))))


def volume_value(distance_m: float) -> int:
    """CC7 for a source ``distance_m`` away: −6 dB per doubling beyond the reference distance."""
    gain = min(1.0, REFERENCE_DISTANCE_M / max(distance_m, 1e-9))  # amplitude, 1/r
    return max(1, round(127 * math.sqrt(gain)))  # GM: level = 40·log10(cc/127) dB


def _assign_channels(notes: list[_Note], pool: tuple[int, ...]) -> None:
    """Give every note of one track a channel of its ``pool``; notes are in time order.

    With one channel that is all there is. With several (``mpe``) a note takes a
    channel already in its state (pan, volume, bend), else a free one (nothing sounding
    or ringing), else the one that frees soonest. A note never shares a channel with a
    sounding note on the same key; a note whose key restarts on its channel is cut
    short where the new one starts.
    """
    state: dict[int, tuple | None] = dict.fromkeys(pool)
    busy: dict[int, float] = dict.fromkeys(pool, -math.inf)
    last: dict[tuple[int, int], _Note] = {}
    for note in notes:
        def rank(c, note=note):
            before = last.get((c, note.key))
            clash = before is not None and before.end > note.time
            return (clash, state[c] != note.state, busy[c] > note.time, busy[c], c)
        channel = min(pool, key=rank)
        note.channel = channel
        before = last.get((channel, note.key))
        if before is not None and before.end > note.time:
            before.end = note.time
        last[(channel, note.key)] = note
        busy[channel] = max(busy[channel], note.end + RING_S)
        state[channel] = note.state


def _track_setup(source: Source, port: int | None, program: Program, notes: list[_Note],
                 offsets: tuple[float, ...] | None, tuning_mode: str) -> list[tuple]:
    """At 0 s: port, name, and for every channel the track uses its program and tuning."""
    items: list[tuple] = []
    if port is not None:
        items.append((0.0, _SETUP, mido.MetaMessage("midi_port", port=port)))
    items.append((0.0, _SETUP, mido.MetaMessage(
        "track_name", name=f"{source.name} {source.roman}".strip())))
    for channel in sorted({n.channel for n in notes}):
        items.append((0.0, _SETUP, mido.Message("program_change", channel=channel,
                                                 program=program.program)))
        if offsets is not None:
            items.append((0.0, _SETUP, mts.scale_octave_tuning(offsets, channels=[channel])))
        if tuning_mode == "mpe":
            items += [(0.0, _SETUP, m) for m in mts.bend_range_messages(channel)]
    return items


def _note_messages(notes: list[_Note]) -> list[tuple]:
    """``(time s, order, message)``: pan, volume and bend when they change, the lyric,
    note-on and note-off. Notes cut to nothing by a restart at the same instant are dropped."""
    items: list[tuple] = []
    sent: dict[tuple[int, str], int | None] = {}
    for note in notes:
        if note.end <= note.time:
            continue
        pan, volume, bend = note.state
        ch = note.channel
        wanted = []
        if pan is not None:
            wanted += [("cc10", pan, _cc(ch, 10, pan)), ("cc7", volume, _cc(ch, 7, volume))]
        if bend is not None:
            wanted.append(("bend", bend, mido.Message("pitchwheel", channel=ch, pitch=bend)))
        for slot, value, message in wanted:
            if sent.get((ch, slot)) != value:
                sent[(ch, slot)] = value
                items.append((note.time, _SETUP, message))
        if note.lyric:
            items.append((note.time, _LYRIC, mido.MetaMessage("lyrics", text=note.lyric)))
        items.append((note.time, _NOTE_ON,
                      mido.Message("note_on", channel=ch, note=note.key, velocity=note.velocity)))
        items.append((note.end, _NOTE_OFF, mido.Message("note_off", channel=ch, note=note.key)))
    return items


def _cc(channel: int, control: int, value: int) -> mido.Message:
    return mido.Message("control_change", channel=channel, control=control, value=value)


def marker_text(marker) -> str:
    """``中文 | English`` (the Chinese alone when there is no gloss), in full."""
    return f"{marker.text} | {marker.gloss}" if marker.gloss else marker.text


def _conductor(performance: Performance, tmap: tempo_map.TempoMap) -> mido.MidiTrack:
    """Title, tempo map, ritual markers and piece notes."""
    title = performance.info.title or "大射儀 Da she yi (Great Archery Rite)"
    items: list[tuple] = [(0, _SETUP, mido.MetaMessage("track_name", name=title))]
    if performance.info.reading:
        items.append((0, _SETUP, mido.MetaMessage(
            "text", text=f"words read in {performance.info.reading}; tuning "
                         f"{performance.info.tuning}")))
    items += [(tick, _SETUP, message) for tick, message in tmap.messages()]
    for marker in performance.markers:
        items.append((tmap.tick(marker.time), _SETUP,
                      mido.MetaMessage("marker", text=marker_text(marker))))
    for piece in performance.pieces.values():
        start = min((e.time for e in performance.events if e.piece == piece.id), default=None)
        if start is not None:
            text = f"{piece.title} ({piece.id}): {piece.basis}. {piece.note}".strip()
            if piece.unplayed:  # said where the piece starts, not left to be missed
                text += (f" Not played in this rite (it places no such instrument): "
                         f"{', '.join(piece.unplayed)}.")
            items.append((tmap.tick(start), _SETUP, mido.MetaMessage("text", text=text)))
    return _delta_track(items)


def _to_track(items: list[tuple], tmap: tempo_map.TempoMap) -> mido.MidiTrack:
    """``(time s, order, message)`` items on the tempo map's ticks, as a track."""
    return _delta_track([(tmap.tick(time), order, message) for time, order, message in items])


def _delta_track(items: list[tuple]) -> mido.MidiTrack:
    """Sort ``(tick, order, message)`` items (stably) and write delta times into the
    messages (each made for this track alone)."""
    track = mido.MidiTrack()
    now = 0
    for tick, _, message in sorted(items, key=lambda item: (item[0], item[1])):
        message.time = tick - now
        track.append(message)
        now = tick
    return track


# -- reading -------------------------------------------------------------------------


def _tempo_table(midi: mido.MidiFile) -> list[tuple[int, float, int]]:
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

    Reads MIDI ports (FF 21), MTS scale/octave tuning, pitch bend with RPN 0 bend
    range, program, pan, volume, lyrics and tempo changes, so it reads any file of this
    shape, not only ours.
    """
    midi = mido.MidiFile(path, charset="utf-8")
    table = _tempo_table(midi)
    names = {i: next((m.name for m in t if m.type == "track_name"), "")
             for i, t in enumerate(midi.tracks)}
    ports = {i: next((m.port for m in t if m.type == "midi_port"), 0)
             for i, t in enumerate(midi.tracks)}
    tuning: dict = collections.defaultdict(lambda: (0.0,) * 12)
    program, bend = collections.defaultdict(int), collections.defaultdict(int)
    # keyed by (port, channel); rpn by ((port, channel), controller)
    pan: dict[tuple[int, int], int] = {}
    volume: dict[tuple[int, int], int] = {}
    bend_range: dict[tuple[int, int], int] = {}
    rpn: dict[tuple[tuple[int, int], int], int] = {}
    lyric: dict[tuple[int, int], str] = {}
    open_notes: dict[tuple[int, int, int], tuple] = {}
    found = []
    for tick, index, msg in _absolute(midi):
        now = _seconds(tick, table, midi.ticks_per_beat)
        port = ports[index]
        if msg.type == "lyrics":
            lyric[(index, tick)] = msg.text
        elif msg.type == "sysex" and (parsed := mts.parse_scale_octave(msg)):
            for channel in parsed[0]:
                tuning[(port, channel)] = parsed[1]
        elif msg.type == "program_change":
            program[(port, msg.channel)] = msg.program
        elif msg.type == "pitchwheel":
            bend[(port, msg.channel)] = msg.pitch
        elif msg.type == "control_change":
            _control(msg, port, pan, volume, rpn, bend_range)
        elif msg.type == "note_on" and msg.velocity > 0:
            ch = (port, msg.channel)
            cents = tuning[ch][msg.note % 12] + mts.bend_to_cents(
                bend[ch], bend_range.get(ch, mts.BEND_RANGE_SEMITONES))
            open_notes[(*ch, msg.note)] = (
                now, names[index], mts.hz_of_key(msg.note, cents), msg.velocity / 127,
                program[ch], pan.get(ch), volume.get(ch), lyric.pop((index, tick), None))
        elif msg.type in ("note_on", "note_off") and (port, msg.channel, msg.note) in open_notes:
            start, name, hz, vel, prog, p, v, text = open_notes.pop((port, msg.channel, msg.note))
            found.append(NoteRecord(start, now - start, name, msg.channel, msg.note, hz, vel,
                                    prog, p, v, text, port))
    return sorted(found, key=lambda n: (n.time, n.track, n.key))


def _control(msg: mido.Message, port: int, pan: dict, volume: dict, rpn: dict,
             bend_range: dict) -> None:
    ch, control, value = (port, msg.channel), msg.control, msg.value
    if control == 10:
        pan[ch] = value
    elif control == 7:
        volume[ch] = value
    elif control in (101, 100):
        rpn[(ch, control)] = value
    elif control == 6 and rpn.get((ch, 101)) == 0 and rpn.get((ch, 100)) == 0:
        bend_range[ch] = value


def note_count(source: str | Path | mido.MidiFile) -> int:
    """Notes (note-ons of velocity > 0) in a MIDI file, or in one made and not yet read back."""
    made = source if isinstance(source, mido.MidiFile) else mido.MidiFile(source)
    return sum(1 for track in made.tracks for message in track
               if message.type == "note_on" and message.velocity > 0)


def read_markers(path: str | Path) -> list[tuple[float, str]]:
    """``(time s, text)`` of every marker meta event, in order."""
    midi = mido.MidiFile(path, charset="utf-8")
    table = _tempo_table(midi)
    return [(_seconds(tick, table, midi.ticks_per_beat), msg.text)
            for tick, _, msg in _absolute(midi) if msg.type == "marker"]
