"""What a person beside a doer hears of his action over the place's own sounds.

Issue 25 asks that each action sound stand at least 6 dB over the bed in its own band
where a person nearby would hear it. ``over_bed`` measures that for one event: it renders
the event alone and the place's sounds alone (the bed, the calls, the court's echoes of
them) through the render's own path (``render.render_blocks``: spreading, air, floor, the
court) at a listener standing ``distance`` metres from where the sound is made, ear
``EAR_M`` over the floor under it, and compares them octave by octave over the part of
the sound within ``SPAN_DB`` of its loudest 50 ms. The listener hears it in its own band
where it stands farthest over the place's sounds: of the octaves that carry its energy
(within ``OWN_DB`` of its loudest), the one of best ratio, as the ear detects a sound in
the auditory filter where the signal-to-masker ratio is highest (the power-spectrum model
of masking: Fletcher 1940; Patterson & Moore 1986, in B. C. J. Moore, *An Introduction to
the Psychology of Hearing*, 6th ed., ch. 3). The margin in its loudest octave is kept too.
Where the place is quieter than the ear's own threshold, the threshold is what the sound
must pass: a band is heard over the louder of the two (the internal noise of ANSI
S3.5-1997, the Speech Intelligibility Index), so a 45 Hz knock 6 dB over a still night's
wind and under the threshold there (37.5 dB SPL at 63 Hz) is not heard at all.

The place's sounds are the bed (the air and trees beside the court, torches) and, with
``calls`` (the default), the creatures' calls: issue 25 names the bed, and places the calls
as sources of their own, so both are measured (a cicada in the next trees hides a sleeve's
rustle, as it would).

The event is heard in a window of the rite (``Performance.between``) with the place's
sounds that were going on carried in, so a measure costs a render of a few seconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
from scipy import signal

from soundscape.performance import Performance
from soundscape.site.listeners import Listener
from soundscape.sound.court import Court
from soundscape.sound.notes import SynthVoice
from soundscape.sound.panning import make_panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_blocks

__all__ = ["CALLS", "OCTAVES_HZ", "Heard", "nearby", "over_bed", "over_bed_and_calls"]

#: Octave band centres (Hz) an action's own band is chosen from.
OCTAVES_HZ = (63.0, 125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)
#: The instrument of the place's calls (birds, insects, leaves in a gust).
CALLS = "creatures"
#: The threshold of hearing of a tone at each octave's centre (dB SPL, free field, both
#: ears: ISO 226:2003 / ISO 389-7:2005). For noise spread over an octave the threshold is
#: a little higher, so this errs towards hearing it.
THRESHOLD_DB = {63.0: 37.5, 125.0: 22.1, 250.0: 11.4, 500.0: 4.4, 1000.0: 2.4, 2000.0: -1.3,
                4000.0: -5.4, 8000.0: 12.6}
#: An octave carries the sound's energy if it holds within this many dB of its loudest.
OWN_DB = 10.0
#: A standing listener's ear over the floor (m).
EAR_M = 1.6
#: The sound's body: its 50 ms frames within this many dB of its loudest (its level is
#: their mean power; the bed's is taken over the same frames).
SPAN_DB = 10.0
FRAME_S = 0.05
#: The place's sounds heard before the event (s): the court's tail of them builds up.
LEAD_S = 3.0
#: How long after the event's nominal end its ring is measured (s).
RING_S = 1.5


@dataclass(frozen=True)
class Heard:
    """One action as a person nearby hears it: the octave band (centre, Hz) of its own where
    it stands farthest over the place's sounds or the threshold of hearing there, whichever
    is louder; its level and the bed's there over the sound's body (dB SPL); and the margin
    in the octave holding most of its energy."""

    index: int
    band_hz: float
    action_db: float
    bed_db: float
    loudest_hz: float
    loudest_margin_db: float

    @property
    def margin_db(self) -> float:
        return self.action_db - max(self.bed_db, THRESHOLD_DB[self.band_hz])


def nearby(performance: Performance, index: int, site, distance: float = 1.0
           ) -> tuple[float, float, float]:
    """Where a person ``distance`` m east of the sound of event ``index`` stands with his
    ears (m): on the hall where the sound is made over the hall's floor, else on the court's
    (west rather than east where east would leave the hall or the court)."""
    event = performance.events[index]
    x, y, z = event.position or performance.sources[event.source].position_at(event.time)
    on_hall = z >= site.hall.height - 0.05 and site.on_hall(x, y)
    east = x + distance
    if (on_hall and not site.on_hall(east, y)) or not site.in_courtyard(east, y):
        east = x - distance
    return east, y, (site.hall.height if on_hall else 0.0) + EAR_M


def over_bed(performance: Performance, indexes: Iterable[int], *, site, court: Court | None,
             distance: float = 1.0, seed: int = 0, sample_rate: int = 24000,
             calls: bool = True) -> list[Heard]:
    """Each event of ``indexes`` as a person ``distance`` m from it hears it over the place's
    sounds, with the creatures' calls or without them (see the module's docstring);
    ``court`` as the render's ``--court`` loads it (None: the floor and the hall's front
    only)."""
    surroundings = _surroundings(court)
    out = []
    for index in indexes:
        near = _Near.of(performance, index, site, distance, surroundings, seed, sample_rate)
        out.append(near.compare(near.heard(near.place(calls))))
    return out


def over_bed_and_calls(performance: Performance, indexes: Iterable[int], *, site,
                       court: Court | None, distance: float = 1.0, seed: int = 0,
                       sample_rate: int = 24000) -> list[tuple[Heard, Heard]]:
    """Each event of ``indexes`` as ``over_bed`` hears it over the bed with the calls and
    over the bed alone, each sound rendered once: the bed with the calls is the bed's render
    plus the calls' (the render adds its sources' paths, and nothing after them in
    ``render_blocks`` is level-dependent)."""
    surroundings = _surroundings(court)
    out = []
    for index in indexes:
        near = _Near.of(performance, index, site, distance, surroundings, seed, sample_rate)
        bed = near.heard(near.place(calls=False))
        called = near.called()
        both = _summed(bed, near.heard(called)) if called else bed
        out.append((near.compare(both), near.compare(bed)))
    return out


def _surroundings(court: Court | None) -> Surroundings:
    return Surroundings(court=court) if court is not None else Surroundings()


@dataclass(frozen=True)
class _Near:
    """One event's window of the rite, heard by the person beside it: the event itself
    rendered (``action``), and whatever of the place's sounds ``heard`` is asked for."""

    index: int
    window: Performance
    listener: Listener
    surroundings: Surroundings
    seed: int
    sample_rate: int
    action: np.ndarray

    @classmethod
    def of(cls, performance: Performance, index: int, site, distance: float,
           surroundings: Surroundings, seed: int, sample_rate: int) -> _Near:
        event = performance.events[index]
        start = max(0.0, event.time - LEAD_S)
        window = performance.between(start, event.end + RING_S)
        listener = Listener(nearby(performance, index, site, distance))
        action = _heard(replace(window, events=(replace(event, time=event.time - start),)),
                        listener, surroundings, seed, sample_rate)
        return cls(index, window, listener, surroundings, seed, sample_rate, action)

    def place(self, calls: bool) -> list:
        """The place's sounds in the window, the creatures' calls among them or not."""
        return [e for e in self.window.events if self.window.sources[e.source].group == "place"
                and (calls or self.window.sources[e.source].instrument != CALLS)]

    def called(self) -> list:
        """The creatures' calls in the window."""
        return [e for e in self.place(calls=True)
                if self.window.sources[e.source].instrument == CALLS]

    def heard(self, events: list) -> np.ndarray:
        return _heard(replace(self.window, events=tuple(events)), self.listener,
                      self.surroundings, self.seed, self.sample_rate)

    def compare(self, place: np.ndarray) -> Heard:
        return _compare(self.index, self.action, place, self.surroundings.reference_db,
                        self.sample_rate)


def _summed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two renders of one window added (a render ends where its last sound does)."""
    out = np.zeros((max(len(a), len(b)), 2))
    out[:len(a)] += a
    out[:len(b)] += b
    return out


def _heard(performance: Performance, listener, surroundings: Surroundings, seed: int,
           sample_rate: int) -> np.ndarray:
    """The render's stereo at ``listener`` (frames, 2), 1.0 = ``surroundings.reference_db``
    (the constant-power pan keeps a source's power in the sum of the channels' powers)."""
    if not performance.events:
        return np.zeros((0, 2))
    panner = make_panner("stereo", speed_of_sound=surroundings.air.speed_of_sound)
    blocks = render_blocks(performance, listener=listener, panner=panner,
                           sample_rate=sample_rate, seed=seed,
                           voice=SynthVoice(surroundings.reference_db),
                           surroundings=surroundings, block_frames=sample_rate,
                           fade_at_cut=False)
    return np.concatenate(list(blocks)).astype(float)


def _band_frames(audio: np.ndarray, centre: float, sample_rate: int) -> np.ndarray:
    """Power per 50 ms frame in the octave around ``centre`` (summed over channels)."""
    sos = signal.butter(4, (centre / 2**0.5, min(centre * 2**0.5, 0.45 * sample_rate)),
                        btype="bandpass", fs=sample_rate, output="sos")
    power = np.sum(signal.sosfilt(sos, audio, axis=0) ** 2, axis=1)
    hop = round(FRAME_S * sample_rate)
    frames = power.size // hop
    return power[:frames * hop].reshape(frames, hop).mean(axis=1)


def _compare(index: int, action: np.ndarray, bed: np.ndarray, reference_db: float,
             sample_rate: int) -> Heard:
    """Both levels over the sound's body in each octave carrying its energy; the octave of
    best margin (over the bed or the threshold of hearing, the louder), and the margin in
    its loudest octave."""
    bands = [centre for centre in OCTAVES_HZ if centre * 2**0.5 < 0.5 * sample_rate]
    frames = [_band_frames(action, centre, sample_rate) for centre in bands]
    energy = np.array([f.sum() for f in frames])
    loudest = int(np.argmax(energy))
    mine = frames[loudest]
    body = mine >= mine.max() * 10 ** (-SPAN_DB / 10)

    def level(power: np.ndarray) -> float:
        return reference_db + 10 * float(np.log10(max(float(power[body].mean()), 1e-30)))

    def levels(band: int) -> tuple[float, float]:
        place = _band_frames(bed, bands[band], sample_rate) if bed.size else np.zeros(0)
        place = np.pad(place, (0, max(0, mine.size - place.size)))[:mine.size]
        return level(frames[band]), level(place)

    def margin(band: int) -> float:
        action_db, bed_db = heard[band]
        return action_db - max(bed_db, THRESHOLD_DB[bands[band]])

    own = np.flatnonzero(energy >= energy[loudest] * 10 ** (-OWN_DB / 10))
    heard = {int(band): levels(int(band)) for band in own}
    best = max(heard, key=margin)
    at_loudest = margin(loudest)
    return Heard(index, bands[best], *heard[best], bands[loudest], at_loudest)
