"""Note voicing and the note caches: an event's dry note (mono, at 1 m), rendered once.

Notes repeat (four 瑟 in unison, a song sung three times, drum strokes of one
velocity), so they are cached. A note is keyed by its instrument, pitch,
velocity, duration, articulation and lyric (``note_key``), plus a *variant* in
0…n−1 picked by a stable hash of (seed, source, cue, key, its count in the cue:
``event_variants``), n the instrument file's
``renderings`` (``VARIANTS`` if it gives none; ``"each"``: ``EACH``, 2³², so every
event is its own rendering: no two strokes of a drum, bell or stone alike), and each
variant's generator is seeded by a stable hash of (seed, key, variant): repeats
differ as the model's own scatter (force, striking point) makes them. The caches are
LRU bounded in bytes (``ByteLru``), so memory stays flat; a cached note is
bit-identical to a recomputed one.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import os
import random
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg.blas import idamax as _idamax

from soundscape.music.tuning import Tuning, default_tuning, performed_tuning
from soundscape.performance import Event, Source
from soundscape.sound.propagation import REFERENCE_DB

if TYPE_CHECKING:
    from soundscape.sound.diskcache import NoteStore
    from soundscape.sound.sung import SungLines

__all__ = ["CACHE_BYTES", "EACH", "FAST_S", "VARIANTS", "ByteLru", "DryNotes", "EventVariants",
           "LruPart", "NoteHandoff", "StrokePlaces", "SynthVoice", "Voice", "event_variants",
           "fast_max", "note_key", "stable_ints"]

#: A note voice: (event, source, *, sample_rate, rng) → mono float array at 1 m, amplitude
#: relative to ``Surroundings.reference_db`` (1.0 = 94 dB SPL). It may depend only on the
#: source's instrument, the event's pitch, velocity, duration, articulation and phones (else
#: lyric), and the rng (notes are cached by those: ``note_key``); a voice whose notes depend
#: on more (who sings) says so with a method ``key(event, source) -> tuple``; a voice whose
#: notes may be made at a lower rate says so with ``made_at(source, sample_rate) -> int``
#: (a whole fraction of ``sample_rate``: see ``soundscape.sound.buses``).
Voice = Callable[..., np.ndarray]
#: Default bound of all the notes kept in a render, bytes: one cache for the dry notes of
#: every bus and the heard notes a standing listener keeps (see ``soundscape.sound.buses``).
#: What repeats soon is what it keeps for (the 瑟 in unison, a melody's notes again); the
#: bed's segments are each their own and not heard twice. The whole rite, stereo, seed 0:
#: 192 and 64 MiB the same CPU time (71 s), 32 MiB 76 s; hoa3's peak 1414 → 1230 MiB.
CACHE_BYTES = 64 << 20
#: Renderings kept per repeated note unless its instrument file says (``renderings``).
VARIANTS = 3
#: Variants of an instrument whose every event is its own rendering: the hash that picks
#: a variant is 32 bits, so each event has its own (and its own generator).
EACH = 1 << 32

#: Takes of one call (a voice's ``call`` of one pitch and word): the 獲 after every hit,
#: one take, came back sample for sample every 18 s of the shooting (the mix's
#: autocorrelation 0.17 at 18 s over the longest stretch without music).
CALL_TAKES = 12

_TAIL_FLOOR = 1e-5  # −100 dB


class SynthVoice:
    """The default voice: ``synth.render_note`` scaled by the instrument's level at 1 m.

    Each note gets its performer (``source.id``: each singer's own voice, for the models
    that take it) and, as its lyric, the syllable's IPA phones where the performance has
    them (``event.phones``), else the character.

    Parameters
    ----------
    reference_db : float, dB SPL
        Level that maps to amplitude 1.0 (must match ``Surroundings.reference_db``).
    bells : str
        ``ideal`` or ``zeng``: the bell set (``synth.render_note``'s ``bells``).
    """

    def __init__(self, reference_db: float = REFERENCE_DB, bells: str = "ideal") -> None:
        self.reference_db = reference_db
        self.bells = bells
        self._instruments: dict[str, object] = {}
        self._by_performer_cache: dict[str, bool] = {}
        self.lines: SungLines | None = None  # the performance's sung lines (``bind``)
        self.places: StrokePlaces | dict = {}  # where strokes land (``bind``)
        self.seed = 0
        self.tuning: Tuning | None = None  # the performance's (``bind``): bells' B-tones in it
        self.store: NoteStore | None = None  # the disk cache of its sung lines (DryNotes)
        self._files: dict[str, tuple[str, bool]] = {}  # instrument → (digest, tuned)
        self._instrument_of: dict[str, str] = {}  # source id → instrument id, once bound
        self._repeats: dict[str, bool] = {}  # instrument id → its model's REPEATS
        self._made_at: dict[tuple[str, int], int] = {}  # (instrument id, rate) → made_at

    def bind(self, performance, seed: int) -> SynthVoice:
        """This voice for one render of ``performance``: a singer's legato notes are made
        as lines (``soundscape.sound.sung``), each seeded by ``seed``, the singer and its
        onset."""
        from soundscape.sound.sung import SungLines

        bound = SynthVoice(self.reference_db, self.bells)
        bound._instruments = self._instruments  # loaded once (the lines' test loads them)
        bound.seed = seed
        bound.tuning = performed_tuning(performance.info.tuning, performance.info.huangzhong_hz)
        bound._instrument_of = {id_: s.instrument for id_, s in performance.sources.items()}
        bound.lines = SungLines(performance, lambda source: self._sings_lines(source))
        bound.places = StrokePlaces(bound, performance, seed)
        return bound

    def _sings_lines(self, source: Source) -> bool:
        return self._instrument(source.instrument).model == "voice"

    def __call__(self, event: Event, source: Source, *, sample_rate: int,
                 rng: np.random.Generator) -> np.ndarray:
        from soundscape.sound import synth

        instrument = self._instrument(source.instrument)
        if instrument.model == "voice" and event.articulation == "inhale":
            from soundscape.sound.synth import sung_line

            note = sung_line.inhale(synth.params_of(instrument), duration=event.duration,
                                    velocity=event.velocity, sample_rate=sample_rate, rng=rng,
                                    performer=source.id)
            return note * self._gain(instrument, note, event.velocity, sample_rate)
        if self.lines is not None and self.lines.find(event) is not None:
            return self.lines.part(event, sample_rate,
                                   lambda line: self._line(line, source, sample_rate))
        note = synth.render_note(
            instrument, hz=None if event.pitch is None else event.pitch.hz,
            velocity=event.velocity, duration=event.duration,
            articulation=event.articulation, sample_rate=sample_rate, rng=rng,
            lyric=event.phones or event.lyric,
            pitch=None if event.pitch is None else event.pitch.name, performer=source.id,
            bells=self.bells, place=self.places.get((event.source, event.time)),
            tuning=self.tuning)
        return note * self._gain(instrument, note, event.velocity, sample_rate)

    def _gain(self, instrument, note: np.ndarray, velocity: float, sample_rate: int) -> float:
        """What puts a note (peak ``velocity`` from its model) at the instrument's
        ``loudness_db`` at 1 m, measured as its ``level`` says: the peak, or a meter's
        ``fast`` reading (``fast_max``) times the velocity."""
        gain = 10 ** ((instrument.loudness_db - self.reference_db) / 20)
        if instrument.level == "fast":
            reading = fast_max(note, sample_rate)
            gain *= velocity / reading if reading > 0 else 1.0
        return gain

    def _line(self, line, source: Source, sample_rate: int) -> np.ndarray:
        """A sung line, mono from its first onset, at 1 m (seeded by the render's seed, the
        singer, the line's cue, its place among his lines there, and its notes: each 終 and
        each singer sings it anew; kept on disk whole when there is a ``store``)."""
        from soundscape.sound import synth
        from soundscape.sound.synth import sung_line

        instrument = self._instrument(source.instrument)
        lines = self.lines
        assert lines is not None, "a sung line is made by a bound voice (``bind``)"
        whole = lines.key(line[0])[:4]  # the line, not the event's place in it
        name = self._line_name(whole, sample_rate)
        kept = None if name is None or self.store is None else self.store.get(name)
        if kept is not None:
            return kept.astype(float)  # stored as made (float32 · level, below)
        rng = np.random.default_rng(stable_ints(self.seed, whole))
        audio = sung_line.render_line(synth.params_of(instrument), lines.notes(line),
                                      sample_rate=sample_rate, rng=rng, performer=source.id)
        audio = synth.without_infrasound(audio, sample_rate)  # a new array, or render_line's
        # scaled in place (the same products; a line is seconds long: no copy of it)
        audio *= 10 ** ((instrument.loudness_db - self.reference_db) / 20)
        audio = audio.astype(np.float32)
        if name is not None and self.store is not None:
            self.store.put(name, audio)
        return audio.astype(float)

    def stored_as(self, key: tuple) -> tuple | None:
        """What a note of ``key`` depends on besides its key, rate, seed and variant (its
        instrument: the key's first item); None for a sung line's part (its line is kept
        whole: a part's bounds fall on the render's sample grid)."""
        return None if key[:1] == ("line",) else self._voicing(key[0])

    def _line_name(self, key: tuple, sample_rate: int) -> str | None:
        """The disk cache's name of the sung line that a part's ``key`` is cut from (None:
        no store, or not a line's part)."""
        if self.store is None or key[:1] != ("line",):
            return None
        whole = key[:4]
        return self.store.name("line", self._voicing(self._instrument_of[key[1]]),
                               sample_rate, self.seed, whole)

    def _voicing(self, instrument_id: str) -> tuple:
        """The instrument file's contents (and any sample file it names), this voice's
        level and bells, and for a set whose members are found by the tuning (a bell's
        B-tone is a step of it: ``for_pitch``) the temperament."""
        found = self._files.get(instrument_id)
        if found is None:
            from soundscape.sound.synth import model_module

            instrument = self._instrument(instrument_id)
            made = hashlib.blake2b(Path(instrument.path).read_bytes(), digest_size=16)
            for file in sorted(_files_named(instrument.raw_params)):
                made.update(Path(file).read_bytes())
            tuned = hasattr(model_module(instrument.model), "for_pitch")
            found = self._files[instrument_id] = (made.hexdigest(), tuned)
        digest, tuned = found
        voicing = (instrument_id, digest, float(self.reference_db), self.bells)
        return (*voicing, (self.tuning or default_tuning()).cents) if tuned else voicing

    def keeps(self, key: tuple) -> bool:
        """Whether a note of ``key`` is worth keeping: not a sung line's part (made once and
        never again: each 終 is sung anew), nor a note of a model that says its notes never
        repeat (``repeats``: the place's bed and calls), so the notes that do repeat keep
        their place in the cache. The key's first item is the instrument."""
        if self.lines is not None and key[:1] == ("line",):
            return False
        return self.repeats(key[0])

    def key(self, event: Event, source: Source) -> tuple:
        """``note_key``, with the performer for models whose notes depend on who plays; a
        sung line's part: the whole line and the event's place in it."""
        if self.lines is not None and self.lines.find(event) is not None:
            return self.lines.key(event)
        key = note_key(event, source,
                       performer=source.id if self._by_performer(source.instrument) else None)
        if event.articulation == "call":  # a call is shouted anew: one of CALL_TAKES takes
            key = (*key, "take", stable_ints(self.seed, event.source, event.time)[0] % CALL_TAKES)
        place = self.places.get((event.source, event.time))
        if place is not None:  # where the stroke lands (it moves when strokes are added
            key = (*key, "place", place)  # before it: the disk cache must not keep the old)
        return key

    def variants(self, source: Source) -> int:
        """How many renderings a note key gets: one for a voice (each singer is his own
        voice and sings each note in his own time and level: the ensemble varies him,
        and the rite has thousands of sung notes), else the instrument file's
        ``renderings`` (``EACH`` for ``"each"``), else ``VARIANTS``."""
        from soundscape.music.instruments import EACH as EACH_WORD

        instrument = self._instrument(source.instrument)
        if instrument.model == "voice":
            return 1
        if instrument.renderings == EACH_WORD:
            return EACH
        return VARIANTS if instrument.renderings is None else int(instrument.renderings)

    def repeats(self, instrument_id: str) -> bool:
        """Whether notes of ``instrument_id`` may repeat (worth keeping): False for a model
        that says ``REPEATS = False`` (the place's bed and calls: every note its own).
        Asked for every note made or kept: the model's module is looked up once."""
        found = self._repeats.get(instrument_id)
        if found is None:
            from soundscape.sound.synth import model_module

            model = model_module(self._instrument(instrument_id).model)
            found = self._repeats[instrument_id] = getattr(model, "REPEATS", True)
        return found

    def made_at(self, source: Source, sample_rate: int) -> int:
        """The rate to make ``source``'s notes at for output at ``sample_rate`` (lower for
        the models whose sound needs less: ``synth.made_at``)."""
        found = self._made_at.get((source.instrument, sample_rate))
        if found is None:
            from soundscape.sound import synth

            found = synth.made_at(self._instrument(source.instrument), sample_rate)
            self._made_at[(source.instrument, sample_rate)] = found
        return found

    def _instrument(self, instrument_id: str):
        found = self._instruments.get(instrument_id)  # asked several times a note: no import
        if found is None:
            from soundscape.music.instruments import load_instrument

            found = self._instruments[instrument_id] = load_instrument(instrument_id)
        return found

    def _by_performer(self, instrument_id: str) -> bool:
        """Whether the instrument's model takes ``performer`` (``render_note`` passes it)."""
        from soundscape.sound.synth import model_module

        if instrument_id not in self._by_performer_cache:
            module = model_module(self._instrument(instrument_id).model)
            self._by_performer_cache[instrument_id] = (
                "performer" in inspect.signature(module.render).parameters)
        return self._by_performer_cache[instrument_id]


class StrokePlaces:
    """Where each stroke of a drum that places its strokes lands, by (source, onset): the
    drum's strokes in order along its own seeded sequence (``membrane.stroke_course``), so
    neighbouring strokes differ. Only for instruments whose every event is its own
    rendering (the point is then the event's, not a cached note's). A source's are worked
    out when one of them is first asked, from all its onsets in the performance, so they
    are the same whichever is asked first; a stream does not read every instrument of the
    rite before its first block (0.05 s of the whole rite's first audio from 鹿鳴)."""

    def __init__(self, voice: SynthVoice, performance, seed: int) -> None:
        self._voice, self._sources, self._seed = voice, performance.sources, seed
        self._onsets: dict[str, list[float]] = {}
        for event in performance.events:
            self._onsets.setdefault(event.source, []).append(event.time)
        self._made: dict[str, dict[float, tuple[float, ...]]] = {}

    def get(self, key: tuple[str, float]) -> tuple[float, ...] | None:
        """The point (u, v, count, wander) of the stroke ``key`` = (source, onset), or None
        (not a placed stroke)."""
        who, time = key
        made = self._made.get(who)
        if made is None:  # made whole, then kept: a thread never sees half a source's
            made = self._made[who] = self._course(who) if who in self._onsets else {}
        return made.get(time)

    def _course(self, who: str) -> dict[float, tuple[float, ...]]:
        from soundscape.music.instruments import EACH as EACH_WORD
        from soundscape.sound import synth
        from soundscape.sound.synth import model_module
        from soundscape.sound.synth.membrane import stroke_course

        instrument = self._voice._instrument(self._sources[who].instrument)
        if not (instrument.renderings == EACH_WORD
                and synth.takes_place(model_module(instrument.model))):
            return {}
        times = sorted(self._onsets[who])
        scatter = synth.params_of(instrument).get("scatter", {})
        course = stroke_course(np.array(times), tuple(stable_ints(self._seed, "places", who)),
                               scatter.get("drift_s", 600.0))
        return {time: tuple(float(value) for value in place)
                for time, place in zip(times, course, strict=True)}


def _files_named(params) -> list[str]:
    """The files an instrument's ``[params]`` name (its samples: key ``file``, at any depth)."""
    if isinstance(params, Mapping):
        return [found for key, value in params.items()
                for found in ([str(value)] if key == "file" else _files_named(value))]
    if isinstance(params, list | tuple):
        return [found for value in params for found in _files_named(value)]
    return []


class ByteLru:
    """A least-recently-used cache bounded by the bytes of its values."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit = limit_bytes
        self.size = 0
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def get(self, key: Hashable):
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key: Hashable, value: object, nbytes: int) -> None:
        if nbytes > self.limit:
            return
        self._items[key] = (value, nbytes)
        self.size += nbytes
        while self.size > self.limit:
            _, (_, dropped) = self._items.popitem(last=False)
            self.size -= dropped

    def part(self, name: Hashable) -> LruPart:
        """A view of this cache whose keys are its own (``(name, key)`` here): users that
        share the bytes and the order of use, and cannot take each other's values."""
        return LruPart(self, name)


class LruPart:
    """Part of a ``ByteLru`` (see ``ByteLru.part``)."""

    def __init__(self, whole: ByteLru, name: Hashable) -> None:
        self.whole, self.name = whole, name

    def __contains__(self, key: Hashable) -> bool:
        return (self.name, key) in self.whole

    def get(self, key: Hashable):
        return self.whole.get((self.name, key))

    def put(self, key: Hashable, value: object, nbytes: int) -> None:
        self.whole.put((self.name, key), value, nbytes)

    @property
    def limit(self) -> int:
        return self.whole.limit

    @limit.setter
    def limit(self, limit_bytes: int) -> None:
        self.whole.limit = limit_bytes


#: A sound level meter's ``fast`` time constant (IEC 61672-1): the window of ``fast_max``.
FAST_S = 0.125


def fast_max(note: np.ndarray, sample_rate: int) -> float:
    """The loudest RMS of ``note`` over any ``FAST_S`` window (a short note: over the
    window that holds it, silence around it counted), what a meter on ``fast`` reads at
    its loudest (LFmax, with a rectangular window for the meter's exponential one)."""
    width = max(1, round(FAST_S * sample_rate))
    energy = np.concatenate(([0.0], np.cumsum(np.square(note, dtype=float))))
    if energy.size - 1 <= width:
        return float(np.sqrt(energy[-1] / width))
    return float(np.sqrt(np.max(energy[width:] - energy[:-width]) / width))


def stable_ints(*parts: object) -> list[int]:
    """Four 32-bit words from a hash of ``repr(parts)`` (stable across runs, unlike hash())."""
    digest = hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=16).digest()
    return [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]


#: Up to this many renderings a key, a source's notes of one key in a cue are dealt them as
#: from a shuffled deck (``EventVariants``); more (``EACH``: every event its own), a hash.
_DEALT_UP_TO = 4096


class EventVariants:
    """Each event's variant in 0…n−1 (n: ``notes.variants``), ``variants[index]``: what the
    seed, the event's source and cue, its note key and how many notes of that key the source
    sounded before in that cue (its count) pick. Not the event's place in the performance: an
    edit of another cue (a step made longer, an event more) or a cut at the rite's sections
    leaves it as it was, so the notes it picks are still those kept on disk (``diskcache``).

    The renderings are dealt as a sampler's round robin: the count's n-th round takes them in
    an order shuffled by a stable hash of the seed, source, cue, key and round, a round's
    first never the last one dealt before it, so one source never sounds one rendering of a
    key twice running (drawn each by a hash, the 司射's bow sounded one rendering for two
    releases 17 s apart: the rite's people's sounds correlated 0.18 at that lag).

    Worked out in the events' order as far as asked (under a lock: the buses' threads ask;
    a forked helper takes a lock of its own), so a render started at a cue waits for its
    first events' variants only (s32 from 貍首: 11 541 events, 0.25 s of CPU before the
    first sound)."""

    def __init__(self, performance, notes: DryNotes, seed: int) -> None:
        self._events, self._sources = performance.events, performance.sources
        self._notes, self._seed = notes, seed
        self._out: list[int] = []
        self._seen: dict[tuple, int] = {}
        self._counts: dict[str, int] = {}
        self._decks: dict[tuple, tuple[int, list[int]]] = {}  # own: (round, its order)
        self._lock, self._pid = threading.Lock(), os.getpid()

    def __getitem__(self, index: int) -> int:
        if index < 0:
            raise IndexError(f"event {index}: variants are asked by an event's index, >= 0")
        if self._pid != os.getpid():  # forked: the parent's lock may have been held then
            self._lock, self._pid = threading.Lock(), os.getpid()
        with self._lock:
            while len(self._out) <= index:
                self._out.append(self._variant(self._events[len(self._out)]))
            return self._out[index]

    def _variant(self, event: Event) -> int:
        source = self._sources[event.source]
        n = self._counts.get(event.source)
        if n is None:
            n = self._counts[event.source] = self._notes.variants(source)
        if n == 1:  # nothing to pick (a voice: one rendering)
            return 0
        key = self._notes.key(event, source)
        own = (event.source, event.cue, key)
        nth = self._seen[own] = self._seen.get(own, -1) + 1
        if n > _DEALT_UP_TO:
            return stable_ints(self._seed, event.source, event.cue, key, nth)[0] % n
        return self._dealt(own, nth, n)

    def _dealt(self, own: tuple, nth: int, n: int) -> int:
        """The ``nth`` rendering dealt to ``own`` (asked in order: a round's deck is shuffled
        as the one before it is spent)."""
        turn, at = divmod(nth, n)
        deck = self._decks.get(own)
        if deck is None or deck[0] != turn:
            digest = stable_ints(self._seed, *own, turn)
            order = list(range(n))
            random.Random(digest[0] | digest[1] << 32).shuffle(order)
            if deck is not None and n > 1 and order[0] == deck[1][-1]:
                order[0], order[1] = order[1], order[0]
            deck = self._decks[own] = (turn, order)
        return deck[1][at]


def event_variants(performance, notes: DryNotes, seed: int) -> EventVariants:
    """Each event's variant (``EventVariants``), worked out as asked."""
    return EventVariants(performance, notes, seed)


def note_key(event: Event, source: Source, *, performer: str | None = None) -> tuple:
    """What a note's dry sound depends on (see ``Voice``): the instrument, not which of
    its players (four 瑟 in unison share their renderings; where they stand is in the
    heard note's key), unless ``performer`` is given (a voice that depends on who sings)."""
    pitch = None if event.pitch is None else (event.pitch.name, float(event.pitch.hz))
    key = (source.instrument, pitch, float(event.velocity),
           float(event.duration), event.articulation, event.phones or event.lyric)
    return key if performer is None else (*key, performer)


class NoteHandoff:
    """Dry notes one render stream hands to another drawn beside it, block by block (the
    ADM master's objects' stream to its early images' stream, which hears the same events):
    a note given is taken once for each time it was given, and gone when taken. At most
    ``limit`` bytes are held (the oldest let go first): a note let go, or never given, is
    made again by the stream that asks for it, the same bits."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.given = self.taken = 0  # notes given and taken (how well it serves: tested)
        self._held: OrderedDict[tuple, list] = OrderedDict()  # (rate, key, variant): [note, times]
        self._lock = threading.Lock()  # the two streams are drawn on two threads

    def give(self, rate: int, key: tuple, variant: int, mono: np.ndarray) -> None:
        """Hand over an event's dry note (read only, as the caches' notes are)."""
        with self._lock:
            self._give(rate, key, variant, mono)

    def _give(self, rate: int, key: tuple, variant: int, mono: np.ndarray) -> None:
        self.given += 1
        held = self._held.get((rate, key, variant))
        if held is not None:
            held[1] += 1
            return
        self._held[(rate, key, variant)] = [mono, 1]
        self.size += mono.nbytes
        while self.size > self.limit:
            _, (dropped, _) = self._held.popitem(last=False)
            self.size -= dropped.nbytes

    def take(self, rate: int, key: tuple, variant: int) -> np.ndarray | None:
        """The note given for ``(rate, key, variant)``, or None."""
        with self._lock:
            return self._take(rate, key, variant)

    def _take(self, rate: int, key: tuple, variant: int) -> np.ndarray | None:
        held = self._held.get((rate, key, variant))
        if held is None:
            return None
        self.taken += 1
        held[1] -= 1
        if not held[1]:
            del self._held[(rate, key, variant)]
            self.size -= held[0].nbytes
        return held[0]


#: The note of a source a voice leaves out (``sounds``).
_SILENT = np.zeros(0, dtype=np.float32)


class DryNotes:
    """Dry notes (mono float32 at 1 m, tail trimmed), rendered once per key and variant.

    With a ``store`` (``diskcache.NoteStore``) a note the memory cache lacks is read from
    disk, and a note made is written there, when the voice can name everything it depends
    on (``stored_as``: a ``SynthVoice``'s notes, but not a sung line's parts, whose line
    it keeps itself). A voice that sounds only some sources says which (``sounds(source)``):
    the others' notes are silence, never kept in either cache under their keys. With a
    ``handoff`` a note another stream gave for the same event is taken from it first."""

    def __init__(self, voice: Voice, sample_rate: int, seed: int,
                 cache: ByteLru | LruPart, store=None,
                 handoff: NoteHandoff | None = None) -> None:
        self.voice = voice
        self.sample_rate = sample_rate
        self.seed = seed
        self.cache = cache
        self.store = store
        self.handoff = handoff
        if store is not None and hasattr(voice, "store"):
            voice.store = store  # the voice keeps its sung lines there

    def key(self, event: Event, source: Source) -> tuple:
        """The voice's key of this note (``note_key`` unless the voice has its own)."""
        own = getattr(self.voice, "key", None)
        return note_key(event, source) if own is None else own(event, source)

    def variants(self, source: Source) -> int:
        """Renderings per key (``VARIANTS`` unless the voice says otherwise)."""
        own = getattr(self.voice, "variants", None)
        return VARIANTS if own is None else own(source)

    def keeps(self, key: tuple) -> bool:
        """Whether notes of ``key`` are worth keeping: not when the voice says they never
        repeat (a sung line's part, the place's bed and calls), which would only push out
        notes that do."""
        own = getattr(self.voice, "keeps", None)
        return True if own is None else own(key)

    def __call__(self, event: Event, source: Source, key: tuple, variant: int) -> np.ndarray:
        sounds = getattr(self.voice, "sounds", None)
        if sounds is not None and not sounds(source):
            # a voice that leaves this source out (the ADM master's streams): its silence is
            # not the note of its key, so it is neither kept nor read from the disk
            return _SILENT
        # taken whether or not the cache has it: a note given is held until taken
        handed = None if self.handoff is None else self.handoff.take(self.sample_rate, key,
                                                                     variant)
        mono = self.cache.get((key, variant))
        if mono is None:
            name = None if handed is not None else self._stored_as(key, variant)
            mono = handed if name is None else self.store.get(name)
            if mono is None:
                rng = _Seeded((self.seed, key, variant))
                raw = np.asarray(self.voice(event, source, sample_rate=self.sample_rate,
                                            rng=rng), dtype=float)
                mono = _trim_tail(raw).astype(np.float32)
                if name is not None:
                    self.store.put(name, mono)
            if self.keeps(key):
                self.cache.put((key, variant), mono, mono.nbytes)
        return mono


    def _stored_as(self, key: tuple, variant: int) -> str | None:
        """The note's name on disk (None: not kept there): the voice's own account of what
        it depends on besides the key, the rate, the seed and the variant."""
        own = getattr(self.voice, "stored_as", None)
        if self.store is None or own is None:
            return None
        voicing = own(key)
        return None if voicing is None else self.store.name(
            "note", voicing, self.sample_rate, self.seed, key, variant)



class _Seeded:
    """A note's generator, ``default_rng(stable_ints(*parts))``, made when the voice first
    draws from it: a sung line's part draws nothing (its line drew), and the hash and the
    generator's seeding took ~90 µs of each. Its methods are the generator's own."""

    def __init__(self, parts: tuple) -> None:
        self._parts = parts

    def __getattr__(self, name: str):
        generator = self.__dict__.get("_generator")
        if generator is None:
            generator = self._generator = np.random.default_rng(stable_ints(*self._parts))
        found = getattr(generator, name)
        setattr(self, name, found)  # found here next time, not through __getattr__
        return found


#: Samples of a note's end looked at first for its last loud sample (then twice as many).
_TAIL_LOOK = 4096


def _trim_tail(mono: np.ndarray) -> np.ndarray:
    """Drop the ring below −100 dB of the note's peak (under any 16-bit floor): less to filter.

    The last loud sample is looked for from the end, a stretch at a time (a note's ring
    is cut near −90 dB, so it is found in the first), not over the whole note."""
    if not mono.size:
        return mono[:0]
    floor = _TAIL_FLOOR * _peak(mono)
    end, look = mono.size, _TAIL_LOOK
    while end > 0:
        start = max(0, end - look)
        # backwards, so the first loud one is the last (argmax of a contiguous mask stops
        # at it: 7.5 µs a stretch of 4 096, where flatnonzero's list of them all took 18)
        loud = np.abs(mono[start:end][::-1]) > floor
        first = int(loud.argmax())
        if loud[first]:
            return mono[:end - first]
        end, look = start, 2 * look
    return mono[:0]


def _peak(mono: np.ndarray) -> float:
    """``max(max(x), −min(x), 0)`` of a non-empty note: its largest magnitude, found by BLAS
    (``idamax``: one pass, where numpy's max and min took two, each slowed by its care for
    NaN: 26 µs against 77 µs on 75 000 samples). Magnitudes and their comparison are exact,
    so it is the same number; a note with a NaN or an infinity (its energy is not finite)
    takes numpy's way, which makes its floor NaN or infinite, as before."""
    if mono.dtype == np.float64 and mono.ndim == 1 and mono.flags.c_contiguous \
            and math.isfinite(float(np.dot(mono, mono))):
        return abs(float(mono[_idamax(mono)]))
    return max(float(np.max(mono)), -float(np.min(mono)), 0.0)
