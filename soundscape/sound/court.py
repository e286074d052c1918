"""The court's echoes: image sources in the walled, open-sky 庭, and its late tail.

The 庭 is a box open to the sky (``site.Enclosure``): east and west walls, the gate with its
塾 on the south, the hall's 室/房 wall on the north, the ground below; on the hall the two 序
stand beside it. A sound reaches the listener along its image sources (Allen & Berkley's
method, docs/sources.md A7.9): each bounce multiplies it by the surface's pressure
reflection √(1 − α) in every octave band, the air takes its ISO 9613-1 toll over the whole
path, and the wall a path bounces off must reach as high as the path does there (a path
over a wall's top is lost: a listener on the hall hears over a low wall).

Two parts, one model:

- **early paths** (``early_paths``): images of up to ``early_order`` bounces arriving within
  ``early_ms`` of the direct sound, each a ``propagation.Path`` the spatialiser pans and
  delays like the direct one (the 序 join them where both ends are on the hall);
- **the late tail** (``late_energy``, ``tail``): every other image, as energy per octave
  band and per sample of ``tail_rate_hz``, smoothed over the hypothesis's ``diffusion_ms``
  and given to decorrelated noise per output channel — the stochastic tail of a hybrid
  model, whose energy decay is the image model's, flutter between gate and hall included.

The hypotheses (what the surfaces absorb) and the model's settings are data
(``soundscape/data/court.toml``).
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass

import numpy as np
import scipy.fft

from soundscape.errors import RenderError
from soundscape.fileio import read_toml
from soundscape.geometry import Vec3
from soundscape.resources import data_dir
from soundscape.site.courtyard import Enclosure, Site

__all__ = ["BANDS", "SURFACES", "Court", "Hypothesis", "Images", "Model", "band_masks",
           "hypotheses", "load_court", "source_point", "stable_seed", "tail"]

_DATA_FILE = "court.toml"
#: The surfaces a hypothesis gives absorption for.
SURFACES = ("side", "gate", "north", "xu", "floor")


#: Octave-band centres (Hz) every absorption list of the data follows.
BANDS: tuple[float, ...] = (125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    path = data_dir() / _DATA_FILE
    data = read_toml(path, RenderError)
    if tuple(float(b) for b in data.get("bands", ())) != BANDS:
        raise RenderError(f"{path}: bands = {data.get('bands')!r}; accepted: {list(BANDS)}")
    return data


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """What the court's surfaces absorb (energy α per band of ``BANDS``)."""

    id: str
    name: str
    note: str
    absorption: tuple[tuple[str, tuple[float, ...]], ...]
    diffusion_ms: float

    def reflection(self, surface: str) -> np.ndarray:
        """Pressure reflection √(1 − α) per band."""
        return np.sqrt(1.0 - np.asarray(dict(self.absorption)[surface]))


@dataclass(frozen=True, slots=True)
class Model:
    """How the echoes are rendered (``[model]`` of court.toml)."""

    early_order: int
    early_ms: float
    coherent_order: int
    tail_s: float
    tail_rate_hz: int
    zones: tuple[str, ...]


def hypotheses() -> tuple[str, ...]:
    """The ids of the court hypotheses (``bare``, ``damped`` …)."""
    return tuple(_data()["hypotheses"])


def _hypothesis(id_: str) -> Hypothesis:
    data = _data()
    path = data_dir() / _DATA_FILE
    if id_ not in data["hypotheses"]:
        raise RenderError(f"court {id_!r} is unknown; accepted: {', '.join(hypotheses())} "
                          f"(or none), from {path}")
    entry = data["hypotheses"][id_]
    absorption = []
    for surface in SURFACES:
        values = entry.get("absorption", {}).get(surface)
        if (not isinstance(values, list) or len(values) != len(BANDS)
                or not all(isinstance(v, int | float) and 0 <= v < 1 for v in values)):
            raise RenderError(f"{path}: hypotheses.{id_}.absorption.{surface} = {values!r}; "
                              f"accepted: {len(BANDS)} numbers in [0, 1), one per band "
                              f"{list(BANDS)}")
        absorption.append((surface, tuple(float(v) for v in values)))
    diffusion = entry.get("diffusion_ms")
    if not isinstance(diffusion, int | float) or not 0 <= diffusion <= 500:
        raise RenderError(f"{path}: hypotheses.{id_}.diffusion_ms = {diffusion!r}; accepted: "
                          "0 to 500")
    return Hypothesis(id_, str(entry.get("name", id_)), str(entry.get("note", "")),
                      tuple(absorption), float(diffusion))


def _model() -> Model:
    raw = _data()["model"]
    model = Model(int(raw["early_order"]), float(raw["early_ms"]), int(raw["coherent_order"]),
                  float(raw["tail_s"]),
                  int(raw["tail_rate_hz"]), tuple(raw["zones"]))
    if not (0 <= model.early_order <= 6 and 0 < model.early_ms <= 120
            and 0.5 <= model.tail_s <= 10 and 4000 <= model.tail_rate_hz <= 48000):
        raise RenderError(f"{data_dir() / _DATA_FILE}: [model] {raw!r}; accepted: early_order "
                          "0–6, early_ms (0, 120], tail_s 0.5–10, tail_rate_hz 4000–48000")
    return model


def load_court(site: Site, hypothesis: str | None = None) -> Court:
    """The court of ``site`` under ``hypothesis`` (None: the data's default, ``bare``)."""
    if site.enclosure is None:
        raise RenderError(f"{site.source}: the site has no [enclosure]")
    model = _model()
    zones = tuple((id_, source_point(site, id_)) for id_ in model.zones if id_ in site.places)
    if not zones:
        raise RenderError(f"{data_dir() / _DATA_FILE}: none of the zones {list(model.zones)} "
                          f"is a place of {site.name or site.source}")
    chosen = _data()["default"] if hypothesis is None else hypothesis  # "" is no hypothesis
    return Court(site.enclosure, _hypothesis(chosen), model, zones, site.hall.width)


def source_point(site: Site, place: str, height: float | None = None) -> Vec3:
    """Where a sound made at ``place`` is: on its floor (the hall's, or the ground: a place's
    own z may be a target's middle), ``height`` above it (None: a standing mouth's)."""
    x, y, _ = site.place(place)
    floor = site.hall.height if site.on_hall(x, y) else 0.0
    above = site.people.get("standing_mouth", 1.5) if height is None else height
    return (float(x), float(y), float(floor + above))


@dataclass(frozen=True, slots=True)
class Images:
    """Image sources of one source and listener (arrays of equal length).

    ``points`` (n, 3) where each image stands (the sound seems to come from there);
    ``distance`` (n,) path lengths; ``amplitude`` (n, bands) the surfaces' pressure factor;
    ``order`` (n,) bounces; ``signs`` (n, 3) ±1 per axis (the ray leaving the source is the
    arrival mirrored on the axes with −1); ``pair`` (n,) the same for an image and its
    bounce off the floor (they arrive together late in the tail and add in phase).
    """

    points: np.ndarray
    distance: np.ndarray
    amplitude: np.ndarray
    order: np.ndarray
    signs: np.ndarray
    pair: np.ndarray


@dataclass(frozen=True)
class Court:
    """The walled court under one hypothesis; see the module docstring."""

    enclosure: Enclosure
    hypothesis: Hypothesis
    model: Model
    zones: tuple[tuple[str, Vec3], ...]
    hall_width: float

    @property
    def name(self) -> str:
        """The hypothesis id, as outputs name it (``bare``, ``damped``)."""
        return self.hypothesis.id

    # Images -----------------------------------------------------------------

    def floor_z(self, source: np.ndarray, listener: np.ndarray) -> float:
        """The floor the bounce between them falls on: the hall's when both are on it."""
        e = self.enclosure
        on_hall = all(p[1] > 0 and abs(p[0]) < self.hall_width / 2 for p in (source, listener))
        return e.hall_floor if on_hall else 0.0

    def images(self, source, listener, *, reach_m: float) -> Images:
        """Every image source whose path is at most ``reach_m`` long and clears the wall tops
        (the direct sound is the image of order 0)."""
        e = self.enclosure
        s = np.asarray(source, dtype=float)
        ear = np.asarray(listener, dtype=float)
        width, depth = e.size
        nx = int(reach_m // (2 * width)) + 2
        ny = int(reach_m // (2 * depth)) + 2
        floor = self.floor_z(s, ear)
        ix, qx, iy, qy, qz, pair, amplitude, order, signs = _grid(self.hypothesis, nx, ny)
        x = 2 * ix * width + np.where(qx, -(s[0] - e.west), s[0] - e.west) + e.west
        y = 2 * iy * depth + np.where(qy, -(s[1] - e.gate), s[1] - e.gate) + e.gate
        z = np.where(qz, 2 * floor - s[2], s[2])
        points = np.stack([x, y, z], axis=1)
        distance = np.linalg.norm(points - ear, axis=1)
        keep = np.flatnonzero(distance <= reach_m)
        points, distance = points[keep], distance[keep]
        clear = self._clears_tops(points, ear, floor, (e.west, width, e.side_top, e.side_top),
                                  0) & self._clears_tops(
            points, ear, floor, (e.gate, depth, e.gate_top, e.north_top), 1)
        kept = keep[clear]
        images = Images(points[clear], distance[clear], amplitude[kept], order[kept],
                        signs[kept], pair[kept])
        return _join(images, self._xu_images(s, ear)) if self._on_hall(s, ear) else images

    @staticmethod
    def _clears_tops(points: np.ndarray, ear: np.ndarray, floor: float,
                     walls: tuple[float, float, float, float], axis: int) -> np.ndarray:
        """Whether each unfolded path passes under the tops of the walls it bounces off on
        ``axis``: planes at ``low + m·size``, even m the low wall (top ``low_top``), odd m the
        high one; the real height at a crossing is the unfolded one folded about the floor."""
        low, size, low_top, high_top = walls
        a = (points[:, axis] - low) / size
        b = (ear[axis] - low) / size
        lo = np.minimum(a, b)
        hi = np.maximum(a, b)
        first = np.floor(lo) + 1
        crossings = np.maximum(0, np.ceil(hi) - first).astype(int)
        # every crossing of every path at once (paths, steps): one pass, not one per step
        step = np.arange(int(crossings.max(initial=0)))
        m = first[:, None] + step
        valid = step < crossings[:, None]
        t = np.where(valid, (m - a[:, None]) / np.where(b != a, b - a, 1.0)[:, None], 0.0)
        z = points[:, 2, None]
        height = np.abs(z + t * (ear[2] - z) - floor) + floor
        top = np.where(np.mod(m, 2) == 0, low_top, high_top)
        return (~valid | (height <= top)).all(axis=1)

    def _on_hall(self, s: np.ndarray, ear: np.ndarray) -> bool:
        e = self.enclosure
        return all(0 < p[1] < e.north and abs(p[0]) < e.xu_x for p in (s, ear))

    def _xu_images(self, s: np.ndarray, ear: np.ndarray) -> Images:
        """First-order images in the two 序 (x = ±xu_x), where the bounce falls on them."""
        e = self.enclosure
        found = []
        for plane in (-e.xu_x, e.xu_x):
            image = s.copy()
            image[0] = 2 * plane - s[0]
            t = (plane - image[0]) / (ear[0] - image[0])
            hit = image + t * (ear - image)
            if 0 <= hit[1] <= e.north and e.hall_floor <= hit[2] <= e.xu_top:
                found.append(image)
        n = len(found)
        points = np.array(found).reshape(n, 3)
        return Images(points, np.linalg.norm(points - ear, axis=1).reshape(n),
                      np.tile(self.hypothesis.reflection("xu"), (n, 1)),
                      np.ones(n, dtype=int), np.tile([-1, 1, 1], (n, 1)), -1 - np.arange(n))

    # The two parts ----------------------------------------------------------

    def split(self, images: Images, speed: float) -> np.ndarray:
        """Which images are early paths (the direct sound among them)."""
        direct = float(images.distance.min()) if len(images.distance) else 0.0
        return ((images.order <= self.model.early_order)
                & (images.distance - direct <= self.model.early_ms * 1e-3 * speed))

    def late(self, source, listener, *, alpha_db_per_m: np.ndarray, speed: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The late images (every one not an early path) within ``tail_s``: arrival times (s),
        pressure at the listener per band (amplitude at 1 m = 1, air included), pair ids; the
        early paths' arrival times; and where the late images stand (n, 3)."""
        images = self.images(source, listener, reach_m=self.model.tail_s * speed)
        late = ~self.split(images, speed)
        d = images.distance[late]
        amp = images.amplitude[late] * 10.0 ** (-alpha_db_per_m[None, :] * d[:, None] / 20)
        # the strong images of low order count with the early paths in ``tail`` (same sign)
        strong = late & (images.order <= self.model.coherent_order)
        return (d / speed, amp / np.maximum(d, 0.5)[:, None], images.pair[late],
                np.concatenate([images.distance[~late], images.distance[strong]]) / speed,
                images.points[late])

    def zone(self, point) -> tuple[str, Vec3]:
        """The zone (send bus) nearest ``point``."""
        p = np.asarray(point, dtype=float)
        return min(self.zones, key=lambda z: float(np.linalg.norm(np.subtract(z[1], p))))


@functools.lru_cache(maxsize=16)
def _grid(hypothesis: Hypothesis, nx: int, ny: int) -> tuple[np.ndarray, ...]:
    """What of the images up to ``nx`` and ``ny`` boxes out depends on neither end (made once,
    not for every source and listener: a whole rite asks for thousands): their box and
    mirror indices ix, qx, iy, qy, qz, ``pair``, ``amplitude``, ``order``, ``signs``."""
    # qz varies fastest: an image and its floor bounce are neighbours (one ``pair``)
    ix, qx, iy, qy, qz = (a.ravel() for a in np.meshgrid(
        np.arange(-nx, nx + 1), (0, 1), np.arange(-ny, ny + 1), (0, 1), (0, 1), indexing="ij"))
    pair = np.arange(len(ix)) // 2
    # bounces per wall (walls at 0 and L: image 2nL + s has n on each, 2nL − s has n on
    # the far wall and n − 1 on the near one)
    west = np.where(qx, np.abs(ix - 1), np.abs(ix))
    east = np.abs(ix)
    gate = np.where(qy, np.abs(iy - 1), np.abs(iy))
    north = np.abs(iy)
    h = hypothesis
    amplitude = (h.reflection("side")[None, :] ** (west + east)[:, None]
                 * h.reflection("gate")[None, :] ** gate[:, None]
                 * h.reflection("north")[None, :] ** north[:, None]
                 * h.reflection("floor")[None, :] ** qz[:, None])
    order = west + east + gate + north + qz
    signs = np.stack([np.where((west + east) % 2, -1, 1), np.where((gate + north) % 2, -1, 1),
                      np.where(qz, -1, 1)], axis=1)
    made = (ix, qx, iy, qy, qz, pair, amplitude, order, signs)
    for array in made:
        array.flags.writeable = False
    return made


def _join(a: Images, b: Images) -> Images:
    return Images(*(np.concatenate([getattr(a, f), getattr(b, f)])
                    for f in ("points", "distance", "amplitude", "order", "signs",
                                                "pair")))


def band_masks(n_fft: int, rate: int) -> np.ndarray:
    """Zero-phase octave-band masks on an rfft grid that add up to 1 at every bin: each band
    1 at its centre, falling linearly in log-frequency to 0 at its neighbours' (the lowest
    flat below its centre, the highest above). (bands, bins)."""
    freqs = np.fft.rfftfreq(n_fft, 1.0 / rate)
    octave = np.log2(np.maximum(freqs, 1e-3) / BANDS[0])
    masks = np.zeros((len(BANDS), len(freqs)))
    for band in range(len(BANDS)):
        masks[band] = np.clip(1.0 - np.abs(octave - band), 0.0, 1.0)
    masks[0][octave <= 0] = 1.0
    masks[-1][octave >= len(BANDS) - 1] = 1.0
    return masks


@functools.lru_cache(maxsize=2)
def _heard_masks(n_fft: int, rate: int) -> tuple[np.ndarray, np.ndarray]:
    """Which bands of ``band_masks`` reach below the Nyquist frequency, and their masks
    (those above it, 8 kHz at 8 kHz, add nothing). The same for every zone: made once."""
    masks = band_masks(n_fft, rate)
    heard = np.asarray(masks.any(axis=1))
    kept = masks[heard]
    kept.flags.writeable = False
    return heard, kept


def tail(times: np.ndarray, pressure: np.ndarray, pairs: np.ndarray, early: np.ndarray,
         points: np.ndarray, *, rate: int, length_s: float, weights: np.ndarray,
         diffusion_ms: float, seed: int, pan=None) -> np.ndarray:
    """The late tail, one column per output channel: every late image a pulse, each band's
    pulses through ``band_masks``, summed.

    The images keep their sign within a cluster (``_clusters``): those that arrive together
    add as they do in the image model (an image and its floor bounce, an image and its mirror
    for a listener on a wall, the many of a flutter's return), so every channel carries the
    model's energy envelope; each cluster's sign is drawn anew per channel, so the channels
    are decorrelated beyond it (a diffuse tail, not one more mono source). The clusters that
    join the early paths or hold a strong image (``coherent_order``) keep their signs and are
    panned from where their images stand (``pan``): they are the court's distinct echoes.
    Where the hypothesis scatters (``diffusion_ms`` > 0), each cluster is ``_PULSES`` pulses of
    random sign spread over that time after it (its energy kept).

    Parameters
    ----------
    times, pressure, pairs, early, points : from ``Court.late``
    rate : int, Hz
    length_s : float, seconds
    weights : ndarray (channels,)
        The share of a diffuse field's energy each output channel carries (a gain-only
        panner's mean squared gain over all directions).
    diffusion_ms : float
    seed : int
    pan : callable or None
        ``pan(point) -> gains`` (channels,): an image's gain per channel from where it stands;
        None: ``√weights`` (every channel alike).

    Returns
    -------
    ndarray (frames, channels), float64
    """
    frames = round(length_s * rate)
    n_fft = 1 << (frames - 1).bit_length()
    heard, masks = _heard_masks(n_fft, rate)
    pressure = pressure[:, heard]
    rng = np.random.default_rng(seed)
    cluster_of, fixed = _clusters(times, pairs, early)
    clusters = len(fixed)
    spread = diffusion_ms * 1e-3 * rate
    pulses = 1 if spread == 0 else _PULSES
    out = np.zeros((frames, len(weights)))
    held = fixed[cluster_of]
    gains = np.tile(np.sqrt(weights), (len(times), 1))
    if pan is not None:
        for i in np.flatnonzero(held):
            gains[i] = pan(points[i])
    for channel, weight in enumerate(weights):
        signs = np.where(held, gains[:, channel], math.sqrt(weight) * rng.choice(
            (-1.0, 1.0), clusters)[cluster_of])
        if pulses == 1:
            at = np.round(times * rate * _FINE).astype(int)[:, None]
            sign = signs[:, None]
        else:
            # one pattern of pulses per cluster: what arrives together is scattered alike
            offsets = rng.uniform(0.0, spread, (clusters, pulses))[cluster_of]
            at = np.round((times[:, None] * rate + offsets) * _FINE).astype(int)
            sign = signs[:, None] * rng.choice((-1.0, 1.0), (clusters, pulses))[cluster_of] / (
                math.sqrt(pulses))
        inside = at < frames * _FINE
        # pulses placed on a grid _FINE times finer, then band-limited to the tail's rate
        # (the low bins of the fine spectrum): arrival times to 1/8 of a sample, so images
        # that arrive together add as they do (rounded to the sample, a section's EDT
        # moved 35 %)
        cell = (at[inside] % _FINE) * frames + at[inside] // _FINE  # phase, then sample
        spectrum = np.zeros(n_fft // 2 + 1, dtype=complex)
        for band, mask in enumerate(masks):  # a band at a time: a few MB in flight, not 50
            train = np.bincount(cell, weights=(pressure[:, band, None] * sign)[inside],
                                minlength=_FINE * frames).reshape(_FINE, frames)
            spectrum += mask * _low_bins(train, n_fft)
        out[:, channel] = np.fft.irfft(spectrum, n_fft)[:frames]
    # the tail ends at length_s, 30–45 dB down in a bare court: faded, not cut
    fade = min(frames, round(_FADE_S * rate))
    out[frames - fade:] *= np.hanning(2 * fade)[fade:, None]
    return out


def _low_bins(phases: np.ndarray, n_fft: int) -> np.ndarray:
    """The first ``n_fft // 2 + 1`` bins of a pulse train's ``n_fft · _FINE``-point spectrum,
    from its ``_FINE`` phases (``phases`` (_FINE, frames): phase r holds its fine samples
    r, r + _FINE, …): the fine bin k is
    Σ_r e^(−2πikr/(n_fft·_FINE)) · rfft_n_fft(phase r)[k], so ``_FINE`` transforms of
    ``n_fft`` points replace one of ``_FINE · n_fft``. In single precision, as the lines
    keep the response (``lines.impulse_filter``): its rounding lies ~150 dB under the tail's
    peak. One court zone's response took 0.2 s of CPU, nearly all in 14 transforms of
    524 288 points; these take a fifth of their time (measured)."""
    spectra = scipy.fft.rfft(phases.astype(np.float32), n_fft, axis=1)
    return np.einsum("rk,rk->k", _twiddle(n_fft), spectra)


@functools.lru_cache(maxsize=2)
def _twiddle(n_fft: int) -> np.ndarray:
    """e^(−2πikr/(n_fft·_FINE)) for each phase r and low bin k (``_low_bins``)."""
    k = np.arange(n_fft // 2 + 1)
    return np.exp(-2j * np.pi * np.outer(np.arange(_FINE), k) / (n_fft * _FINE)
                  ).astype(np.complex64)


#: Pulses each late image is heard as where the court scatters (``diffusion_ms`` > 0).
_PULSES = 8
#: How much finer than a sample the pulses are placed (``tail``).
_FINE = 8
#: The tail's last seconds, faded out.
_FADE_S = 0.5
#: Arrivals closer than this (ms) join one cluster (``_clusters``) …
GAP_MS = 1.0
#: … which is cut where it grows longer than this (ms).
CLUSTER_MS = 50.0


def _clusters(times: np.ndarray, pairs: np.ndarray, early: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Each late image's cluster, and which clusters join the early paths: arrivals (a pair
    at its first member's time) in time order, a new cluster after a gap of ``GAP_MS`` or
    once one spans ``CLUSTER_MS``."""
    low = int(pairs.min(initial=0))
    first = np.full(int(pairs.max(initial=0)) - low + 1, np.inf)
    np.minimum.at(first, pairs - low, times)
    at = first[pairs - low]
    every = np.concatenate([np.asarray(early, dtype=float), at])
    order = np.argsort(every, kind="stable")
    sorted_at = every[order]
    label = np.zeros(len(every), dtype=int)
    current, start = 0, -np.inf
    for i, t in enumerate(sorted_at):  # a few thousand arrivals
        if i and (t - sorted_at[i - 1] > GAP_MS * 1e-3 or t - start > CLUSTER_MS * 1e-3):
            current += 1
        if i == 0 or label[order[i - 1]] != current:
            start = t
        label[order[i]] = current
    fixed = np.zeros(current + 1, dtype=bool)
    fixed[label[:len(early)]] = True
    return label[len(early):], fixed


def stable_seed(*parts) -> int:
    """A seed from ``parts`` that is the same in every process and run."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def band_alpha(alpha_of) -> np.ndarray:
    """Air absorption (dB/m) at the band centres, from ``Air.absorption_db_per_m``."""
    return np.asarray(alpha_of(np.asarray(BANDS)))

