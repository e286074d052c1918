"""The court's tail responses kept on disk, so a stream does not remake them each time.

A zone's late tail at the listener (``Tail.response``: the court's image sources, then
one FFT per band and channel, ``court.tail``) took 0.13 s CPU per zone, and a stream
starting at a busy cue needs one before its first block and another before its second:
a third of a warm ``soundscape play``'s time to its first audio. It is a pure function of
the court, the zone, the listener, the panner, the air, the tail's rate, the seed and the
code of the tail (``tail``, ``court`` and what they import: ``diskcache.code_version``),
so it is kept in the note store (``diskcache.NoteStore``) under a digest of all of
those, and read back bit for bit: the response is stored as the float32 samples the
tail's filter is made of (``Tail._filter`` turns it to float32), so a stored tail gives
the filter, and the stream, the bytes of one made afresh.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable

import numpy as np

from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.buses import Upsampler
from soundscape.sound.diskcache import NoteStore, code_version
from soundscape.sound.panning import Panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.tail import Tail

__all__ = ["ROOTS", "StoredTail", "stored_tail"]

#: The modules whose code the responses are made by (with all they import).
ROOTS = ("soundscape.sound.tail",)
#: An entry's first two samples hold the first frame and the width: whole numbers that
#: float32 holds exactly below 2^24.
_EXACT = 1 << 24


class StoredTail(Tail):
    """A ``Tail`` whose zones' responses are read from ``store`` when there, else made and
    kept there (same arguments as ``Tail``, and ``store``)."""

    def __init__(self, *args, store: NoteStore, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.store = store
        self.read = self.made = 0  # responses read from the store, and made

    def response(self, zone, ear: Listener | None = None) -> tuple[int, np.ndarray]:
        ear = ear or self.listener
        name = self.entry(zone, ear)
        kept = self.store.get(name)
        if kept is not None and len(kept) > 2 and kept[1] > 0:
            first, width = int(kept[0]), int(kept[1])
            if (len(kept) - 2) % width == 0:
                self.read += 1
                return first, kept[2:].reshape(-1, width).astype(float)
        first, ir = super().response(zone, ear)
        self.made += 1
        if 0 <= first < _EXACT and 0 < ir.shape[1] < _EXACT:
            self.store.put(name, np.concatenate([np.array([first, ir.shape[1]], np.float32),
                                                 ir.astype(np.float32).ravel()]))
        return first, ir

    def entry(self, zone, ear: Listener) -> str:
        """The store's name of the zone's response at ``ear``: a digest of everything it is
        made from (the objects pickled whole: a panner's or court's every field counts)."""
        made_of = pickle.dumps((self.court, zone, ear, self.panner, self.alpha.tobytes(),
                                self.speed, self.rate, self.weights.tobytes(), self.seed),
                               protocol=5)
        return self.store.name("tail", code_version(ROOTS),
                               hashlib.blake2b(made_of, digest_size=16).hexdigest())


def stored_tail(surroundings: Surroundings, listener: Listener | ListenerPath, panner: Panner,
                *, channels: int, sample_rate: int, seed: int, store: NoteStore | None
                ) -> Callable[[tuple[int, ...]], Tail | None] | None:
    """``render_blocks``'s ``tail``: the buses' rates → the court's tail as the buses make it
    (``buses.Buses``), its responses kept in ``store``; None (the buses' own) without a
    store."""
    if store is None:
        return None

    def make(rates: tuple[int, ...]) -> Tail | None:
        if surroundings.court is None:
            return None
        return StoredTail(surroundings.court, listener, panner, channels, sample_rate,
                          surroundings.air, seed, rates, upsampler=Upsampler, store=store)

    return make
