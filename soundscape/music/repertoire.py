"""The repertoire: pieces as data, in 律 names, each marked surviving or reconstruction.

One TOML file per piece in ``soundscape/data/pieces/`` (see docs/repertoire.md):
title, mode, ``basis`` (``surviving`` or ``reconstruction``) with a note saying
what it rests on, tempo, the parts (each a role played by an instrument id),
what one 終 is (``[zhong]``), the 射節 of a shooting piece (``[jie]``) and the
notes as ``[[phrase]]`` tables (one phrase per line of the text, written by
``data/pieces/_build.py``). A file with ``songs = [...]`` is a selection (無算樂):
the listed pieces one after another, for ``seconds``.

Files are validated when loaded; errors name the file and the key.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from soundscape import validate
from soundscape.errors import RepertoireError, TuningError
from soundscape.fileio import read_toml
from soundscape.music.instruments import list_instruments
from soundscape.music.tuning import canonical_degree, parse_name
from soundscape.resources import data_dir

__all__ = [
    "BASES",
    "READINGS",
    "ROLES",
    "DrumPattern",
    "Jie",
    "Part",
    "Piece",
    "PieceNote",
    "Zhong",
    "list_pieces",
    "load_drum_pattern",
    "load_piece",
    "load_piece_file",
    "piece_id",
    "pieces_dir",
]

BASES = ("surviving", "reconstruction")
READINGS = ("song", "stanza")
"""What one 終 is: the whole song, or one stanza."""
ROLES = ("melody", "phrase_end", "beat", "start", "call", "answer", "pattern", "jie")
"""What a part plays: every note; one stroke on each phrase's last note (鑮); a
stroke every ``every`` beats (建鼓); one stroke before the music at ``at`` beats
(鼗 ``start``, 朔鼙 ``call``, 應鼙 ``answer``); the strokes of one symbol of the
drum pattern in each 節 (``pattern``); the stroke that closes each 節 (``jie``)."""
_HALF = "半"


@dataclass(frozen=True, slots=True)
class PieceNote:
    """One note of a piece.

    Parameters
    ----------
    name : str
        律 name with 清/倍 prefix, e.g. ``清黃鍾``.
    beats : float > 0, beats
    lyric : str or None
        The sung character, one per note where the piece has words.
    """

    name: str
    beats: float
    lyric: str | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """A role of the arrangement and the instrument that plays it.

    Parameters
    ----------
    id : str
        Key in the piece file (``bells``, ``bo``, ``shuopi`` …); the sequencer maps it
        to performers.
    role : str
        One of :data:`ROLES`.
    instrument : str
        Instrument id (``bianzhong``, ``bo``, ``jiangu``, ``pi``, ``tao``, ``se``, ``guan``,
        ``sheng``, ``voice``).
    articulation : str
        How it is played (``A``, ``strike``, ``shake``, ``pluck``, ``blow``, ``sing`` …).
    velocity : float in (0, 1]
    lyrics : bool
        Melody parts only: carry the lyric of each note (sung).
    pitch : str or None
        A fixed 律 name for every stroke (the one pitch of a 鑮); None = the melody note
        (phrase_end) or unpitched (drums).
    octave : int
        Octaves added to melody pitches.
    every : float > 0, beats
        Beat parts: beats between strokes.
    at : float >= 0, beats
        start/call/answer parts: when, from the piece's start.
    symbol : str or None
        Pattern parts: the drum-pattern symbol it plays (``○`` or ``□``).
    length : float > 0, beats
        Nominal duration of a stroke (not used by melody parts, whose notes have beats).
    side : tuple of str
        Melody parts of two-tone bells: the 聲 of the piece's mode (``角`` …) taken on a
        bell's 側鼓 (its B-tone, articulation ``side``) instead of on the bell whose
        正鼓 sounds it (docs/repertoire.md, "Bells struck on the side").
    """

    id: str
    role: str
    instrument: str
    articulation: str
    velocity: float
    lyrics: bool = False
    pitch: str | None = None
    octave: int = 0
    every: float = 1.0
    at: float = 0.0
    symbol: str | None = None
    length: float = 1.0
    side: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Zhong:
    """What one 終 (one full performance unit) is and how many are played by default.

    Parameters
    ----------
    reading : str
        Default reading, one of :data:`READINGS`.
    readings : tuple of str
        The readings the piece allows.
    count : int >= 1
        Default number of 終.
    rest_beats : float >= 0, beats
        Silence between two 終.
    """

    reading: str
    readings: tuple[str, ...]
    count: int
    rest_beats: float


@dataclass(frozen=True, slots=True)
class DrumPattern:
    """A 投壺 drum pattern (``data/drum_patterns.toml``).

    ``strokes`` holds the symbols without the 半 marker; ``half`` is the index of
    the first stroke after it; ``caution`` says how uncertain the symbols are.
    """

    id: str
    name: str
    strokes: str
    half: int
    symbols: Mapping[str, str]
    caution: str


@dataclass(frozen=True, slots=True)
class Jie:
    """The 射節 of a shooting piece: one 節 per 終, closed by the drum.

    Parameters
    ----------
    heard : int >= 0
        節 heard before shooting begins (the rest carry one 拾 each).
    pattern : DrumPattern
        The drum pattern played in each 節, right-aligned to its closing stroke.
    close_beats : float > 0, beats
        Length of the closing stroke's beat, after the song's last note.
    """

    heard: int
    pattern: DrumPattern
    close_beats: float


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece of the repertoire, validated.

    Attributes
    ----------
    id, title, roman : str
        Id (file stem), Chinese title, romanised title.
    mode : str
        As the sources name it (``黃鍾清宮`` …).
    basis : str
        ``surviving`` or ``reconstruction``.
    basis_note : str
        The source, or what the reconstruction rests on.
    tempo_bpm : float > 0, beats per minute
    intro_beats : float >= 0, beats
        Beats before the first note (鼗 and 鼙 calls of 金奏).
    parts : tuple of Part
    phrases : tuple of tuple of PieceNote
        One phrase per line of the text.
    stanza_sizes : tuple of int
        Phrases per stanza, in order.
    stanza_labels : tuple of str
        A label per stanza (``鹿鳴 2``).
    zhong : Zhong
    jie : Jie or None
        Shooting pieces only.
    fill_seconds : float or None, seconds
        Selections only: how long to play by default.
    end_on : str
        Where a filled span may stop: ``phrase`` or ``stanza``.
    source : str
        The file it was read from.
    songs : tuple of (id, title)
        Selections only: the pieces it sings, in order.
    """

    id: str
    title: str
    roman: str
    mode: str
    basis: str
    basis_note: str
    tempo_bpm: float
    intro_beats: float
    parts: tuple[Part, ...]
    phrases: tuple[tuple[PieceNote, ...], ...]
    stanza_sizes: tuple[int, ...]
    stanza_labels: tuple[str, ...]
    zhong: Zhong
    jie: Jie | None = None
    fill_seconds: float | None = None
    end_on: str = "phrase"
    source: str = ""
    songs: tuple[tuple[str, str], ...] = ()

    @property
    def notes(self) -> tuple[PieceNote, ...]:
        """All notes, phrases flattened."""
        return tuple(note for phrase in self.phrases for note in phrase)

    @property
    def ensemble(self) -> tuple[str, ...]:
        """The instrument ids that play it, in part order, each once."""
        return tuple(dict.fromkeys(part.instrument for part in self.parts))

    @property
    def stanza_phrases(self) -> tuple[tuple[int, ...], ...]:
        """Phrase indices of each stanza."""
        out, start = [], 0
        for size in self.stanza_sizes:
            out.append(tuple(range(start, start + size)))
            start += size
        return tuple(out)

    @property
    def stanzas(self) -> tuple[tuple[PieceNote, ...], ...]:
        """The notes of each stanza."""
        return tuple(tuple(n for i in idx for n in self.phrases[i]) for idx in self.stanza_phrases)


# -- loading ----------------------------------------------------------------------------------
def pieces_dir() -> Path:
    """The bundled piece folder."""
    return data_dir() / "pieces"


def list_pieces(directory: Path | None = None) -> list[str]:
    """The ids of the pieces in ``directory`` (default: the bundled ones), sorted."""
    folder = pieces_dir() if directory is None else Path(directory)
    return sorted(p.stem for p in folder.glob("*.toml") if not p.name.startswith("_"))


def load_piece(piece_id: str, *, directory: Path | None = None) -> Piece:
    """Load and validate a piece by id.

    Raises
    ------
    RepertoireError
        Unknown id (the message lists the known ones) or an invalid file.
    """
    folder = pieces_dir() if directory is None else Path(directory)
    known = list_pieces(folder)
    if piece_id not in known:  # checked before any path is built from it
        raise RepertoireError(
            f"piece {validate.shown(piece_id)} unknown; known: {', '.join(known) or 'none'}")
    return load_piece_file(folder / f"{piece_id}.toml")


def piece_id(name: str) -> str:
    """The id of a bundled piece named by id (``luming``) or by its Chinese title (鹿鳴,
    《鹿鳴》); RepertoireError listing ids and titles otherwise."""
    known = list_pieces()
    if name in known:
        return name
    title = name.strip("《》 ")
    pieces = [load_piece(piece) for piece in known]
    for piece in pieces:
        if title in (piece.title, piece.title.strip("《》")):
            return piece.id
    listed = ", ".join(f"{p.id} {p.title}" for p in pieces)
    raise RepertoireError(f"piece {name!r} unknown; known: {listed}")


def load_piece_file(path: str | Path) -> Piece:
    """Load and validate one piece file (a selection loads the pieces it lists beside it)."""
    path = Path(path)
    data = read_toml(path, RepertoireError)
    if "songs" in data:
        return _selection(path, _Table(data, str(path)))
    return _piece(path, _Table(data, str(path)))


def load_drum_pattern(pattern_id: str, *, path: Path | None = None) -> DrumPattern:
    """A 投壺 drum pattern from ``data/drum_patterns.toml``."""
    path = data_dir() / "drum_patterns.toml" if path is None else Path(path)
    table = _Table(read_toml(path, RepertoireError), str(path))
    patterns = table.get("patterns", dict)
    if pattern_id not in patterns:
        raise RepertoireError(f"{path}: drum pattern {pattern_id!r} unknown; "
                              f"known: {', '.join(sorted(patterns))}")
    symbols = table.get("symbols", dict)
    row = table.sub(f"patterns.{pattern_id}", patterns[pattern_id])
    text = row.get("strokes", str)
    strokes = text.replace(_HALF, "")
    bad = sorted(set(strokes) - set(symbols))
    if bad or not strokes or text.count(_HALF) > 1:
        row.fail("strokes", text, f"symbols {', '.join(symbols)} and at most one {_HALF}")
    return DrumPattern(pattern_id, row.get("name", str), strokes,
                       text.index(_HALF) if _HALF in text else len(strokes),
                       dict(symbols), table.get("caution", str))


_MISSING = object()


class _Table:
    """Typed access to one TOML table, failing with ``FILE: key 'a.b' = value …``."""

    def __init__(self, data: Mapping[str, Any], where: str, prefix: str = ""):
        self.data, self.where, self.prefix = data, where, prefix

    def fail(self, key: str, value: Any, accepted: str) -> None:
        raise RepertoireError(
            f"{self.where}: key '{self.prefix}{key}' = {value!r}; accepted: {accepted}")

    def sub(self, key: str, data: Any) -> _Table:
        if not isinstance(data, Mapping):
            self.fail(key, data, "a table")
        return _Table(data, self.where, f"{self.prefix}{key}.")

    def number(self, key: str, default: float | None = None, *, low: float,
               high: float, low_open: bool = False) -> float:
        """A finite number in its range (``low_open``: above ``low``, not equal)."""
        if key not in self.data and default is not None:
            return default
        return validate.number(self.get(key, float), key=f"'{self.prefix}{key}'",
                               where=self.where, error=RepertoireError, low=low, high=high,
                               low_open=low_open)

    def get(self, key: str, kind: type, default: Any = _MISSING,
            check: Callable[[Any], bool] | None = None, accepted: str = "") -> Any:
        if key not in self.data:
            if default is _MISSING:
                raise RepertoireError(
                    f"{self.where}: key '{self.prefix}{key}' missing ({kind.__name__} required)")
            return default
        value = self.data[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = validate.number(value, key=f"'{self.prefix}{key}'", where=self.where,
                                    error=RepertoireError)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.fail(key, value, accepted or kind.__name__)
        if kind is float and not math.isfinite(value):
            self.fail(key, value, accepted or "a finite number")
        if check is not None and not check(value):
            self.fail(key, value, accepted)
        return value


#: Ranges of a piece's numbers: beats per minute (a beat of 6 s at the slowest: 1e-300
#: divided music21's tempo by zero), beats of a note, a part's rhythm or a rest, seconds a
#: selection fills, octaves a part is moved.
TEMPO_BPM = (10.0, 400.0)
BEATS = (0.0, 64.0)
FILL_SECONDS = (0.0, 3600.0)
OCTAVES = (-3, 3)
#: 終 a piece is played by default (as a cue's ``repeats``).
ZHONG = (1, 12)


def _note_name(table: _Table, key: str, name: Any) -> str:
    try:
        parse_name(name)
    except (TuningError, TypeError, AttributeError):
        table.fail(key, name, "a 律 name with optional 清/倍 prefix (黃鍾 … 應鍾, 清黃鍾 …)")
    return name


def _head(table: _Table, path: Path) -> dict[str, Any]:
    head = {
        "id": path.stem,
        "title": table.get("title", str),
        "roman": table.get("roman", str, ""),
        "basis": table.get("basis", str, check=lambda b: b in BASES,
                           accepted=" or ".join(BASES)),
        "basis_note": table.get("basis_note", str, check=lambda s: bool(s.strip()),
                                accepted="a non-empty note on the source or the rules"),
        "tempo_bpm": table.number("tempo_bpm", low=TEMPO_BPM[0], high=TEMPO_BPM[1]),
        "parts": _parts(table),
        "source": str(path),
    }
    declared = table.get("id", str, path.stem)
    if declared != path.stem:
        table.fail("id", declared, f"the file name {path.stem!r}")
    return head


def _parts(table: _Table) -> tuple[Part, ...]:
    parts_table = table.get("parts", dict)
    if not parts_table:
        table.fail("parts", parts_table, "at least one [parts.NAME] table")
    parts = []
    known = list_instruments()  # a file's id is never a path (score failed naming no file)
    for part_id, raw in parts_table.items():
        row = table.sub(f"parts.{part_id}", raw)
        role = row.get("role", str, check=lambda r: r in ROLES, accepted=", ".join(ROLES))
        pitch = row.get("pitch", str, None)
        if pitch is not None:
            _note_name(row, "pitch", pitch)
        parts.append(Part(
            id=part_id, role=role,
            instrument=row.get("instrument", str, check=lambda i: i in known,
                               accepted=f"a known instrument id ({', '.join(known)})"),
            articulation=row.get("articulation", str),
            velocity=row.number("velocity", low=0.0, high=1.0, low_open=True),
            lyrics=row.get("lyrics", bool, False),
            pitch=pitch,
            octave=validate.whole(row.get("octave", int, 0), key=f"'parts.{part_id}.octave'",
                                  where=row.where, error=RepertoireError, low=OCTAVES[0],
                                  high=OCTAVES[1]),
            every=row.number("every", 1.0, low=BEATS[0], high=BEATS[1], low_open=True),
            at=row.number("at", 0.0, low=BEATS[0], high=BEATS[1]),
            symbol=row.get("symbol", str, None) if role == "pattern" else None,
            length=row.number("length", 1.0, low=BEATS[0], high=BEATS[1], low_open=True),
            side=_side(row) if role == "melody" else (),
        ))
        if role == "pattern" and parts[-1].symbol is None:
            row.get("symbol", str)
    return tuple(parts)


def _side(row: _Table) -> tuple[str, ...]:
    """A melody part's ``side``: 聲 names (canonical), each once."""
    names = row.get("side", list, [])
    out = []
    for name in names:
        try:
            out.append(canonical_degree(str(name)))
        except TuningError as error:
            row.fail("side", name, f"a 聲 name ({error})")
    if len(set(out)) != len(out):
        row.fail("side", names, "each 聲 once")
    return tuple(out)


def _phrases(table: _Table) -> tuple[tuple[tuple[PieceNote, ...], ...], tuple[int, ...]]:
    rows = table.get("phrase", list)
    if not rows:
        table.fail("phrase", rows, "at least one [[phrase]] table")
    phrases: list[tuple[PieceNote, ...]] = []
    sizes: list[int] = []
    for i, raw in enumerate(rows):
        row = table.sub(f"phrase[{i}]", raw)
        names = row.get("notes", list, check=bool, accepted="a non-empty list of 律 names")
        for j, name in enumerate(names):
            _note_name(row, f"notes[{j}]", name)
        beats = row.get("beats", list, [1.0] * len(names))
        if len(beats) != len(names) or not all(
                isinstance(b, int | float) and not isinstance(b, bool) and 0 < b <= BEATS[1]
                for b in beats):  # a note of 1e9 beats laid out a score until the OOM killer
            row.fail("beats", beats, f"{len(names)} numbers above 0 and up to {BEATS[1]:g}, "
                                     "one per note")
        lyrics = row.get("lyrics", str, None)
        if lyrics is not None and len(lyrics) != len(names):
            row.fail("lyrics", lyrics, f"{len(names)} characters, one per note")
        stanza = row.get("stanza", int, 1)
        if stanza not in (len(sizes), len(sizes) + 1) or stanza < 1:
            row.fail("stanza", stanza, f"{max(len(sizes), 1)} or {len(sizes) + 1} (in order)")
        if stanza == len(sizes) + 1:
            sizes.append(0)
        sizes[-1] += 1
        phrases.append(tuple(PieceNote(n, float(b), None if lyrics is None else lyrics[k])
                             for k, (n, b) in enumerate(zip(names, beats, strict=True))))
    return tuple(phrases), tuple(sizes)


def _zhong(table: _Table) -> Zhong:
    row = table.sub("zhong", table.get("zhong", dict))
    readings = tuple(row.get("readings", list, ["song"]))
    if not readings or any(r not in READINGS for r in readings):
        row.fail("readings", list(readings), f"a list drawn from {', '.join(READINGS)}")
    return Zhong(
        reading=row.get("reading", str, readings[0], lambda r: r in readings,
                        " or ".join(readings)),
        readings=readings,
        count=validate.whole(row.get("count", int, 1), key="'zhong.count'", where=row.where,
                             error=RepertoireError, low=ZHONG[0], high=ZHONG[1]),
        rest_beats=row.number("rest_beats", 0.0, low=BEATS[0], high=BEATS[1]),
    )


def _jie(table: _Table, zhong: Zhong, phrases: tuple) -> Jie | None:
    if "jie" not in table.data:
        return None
    row = table.sub("jie", table.get("jie", dict))
    heard = row.get("heard", int, 0, lambda n: 0 <= n < zhong.count,
                    f"an integer from 0 to {zhong.count - 1} ([zhong] count minus one)")
    pattern_id = row.get("pattern", str)
    try:
        pattern = load_drum_pattern(pattern_id)
    except RepertoireError as error:
        raise RepertoireError(f"{table.where}: key 'jie.pattern': {error}") from error
    pass_beats = sum(n.beats for p in phrases for n in p)
    if len(pattern.strokes) > pass_beats:
        row.fail("pattern", pattern_id,
                 f"a pattern of at most {pass_beats:g} strokes (one per beat of the song)")
    return Jie(heard, pattern,
               row.number("close_beats", 1.0, low=BEATS[0], high=BEATS[1], low_open=True))


def _piece(path: Path, table: _Table) -> Piece:
    phrases, sizes = _phrases(table)
    zhong = _zhong(table)
    piece = Piece(
        **_head(table, path),
        mode=table.get("mode", str),
        intro_beats=table.number("intro_beats", 0.0, low=BEATS[0], high=BEATS[1]),
        phrases=phrases, stanza_sizes=sizes,
        stanza_labels=tuple(f"{table.get('title', str)} {i + 1}" for i in range(len(sizes))),
        zhong=zhong, jie=_jie(table, zhong, phrases),
    )
    for part in piece.parts:
        if part.role in ("start", "call", "answer") and part.at >= max(piece.intro_beats, 1e-9):
            table.fail(f"parts.{part.id}.at", part.at,
                       f"a beat before the music starts (< intro_beats = {piece.intro_beats:g})")
        if part.role in ("pattern", "jie") and piece.jie is None:
            table.fail(f"parts.{part.id}.role", part.role, "pattern/jie only with a [jie] table")
    return piece


def _selection(path: Path, table: _Table) -> Piece:
    ids = table.get("songs", list, check=bool, accepted="a non-empty list of piece ids")
    songs = []
    for i, song_id in enumerate(ids):
        if not isinstance(song_id, str) or song_id == path.stem:
            table.fail(f"songs[{i}]", song_id, "the id of another piece")
        try:
            songs.append(load_piece(song_id, directory=path.parent))
        except RepertoireError as error:
            raise RepertoireError(f"{path}: key 'songs[{i}]': {error}") from error
    head = _head(table, path)
    listed = "; ".join(f"{s.title}: {s.basis}" for s in songs)
    head["basis_note"] = f"{head['basis_note']} Songs: {listed}."
    return Piece(
        **head,
        mode=" / ".join(dict.fromkeys(s.mode for s in songs)),
        intro_beats=0.0,
        phrases=tuple(p for s in songs for p in s.phrases),
        stanza_sizes=tuple(n for s in songs for n in s.stanza_sizes),
        stanza_labels=tuple(label for s in songs for label in s.stanza_labels),
        zhong=Zhong("stanza", ("stanza",), sum(len(s.stanza_sizes) for s in songs),
                    table.number("rest_beats", 0.0, low=BEATS[0], high=BEATS[1])),
        fill_seconds=table.number("seconds", low=FILL_SECONDS[0], high=FILL_SECONDS[1],
                                  low_open=True),
        end_on="stanza",
        songs=tuple((s.id, s.title) for s in songs),
    )
