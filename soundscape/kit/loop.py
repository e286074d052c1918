"""Loop-safe rendering: a programme that can play forever with an inaudible seam.

A programme of length L is rendered by ``soundscape.sound.render.render_blocks``
(the same notes, paths and panning as ``soundscape render``); whatever rings on past
L (bells, drums, the hall, sound still in flight across the courtyard) is added back at
the start, so the loop restarts into the ring of its own end, as it would in an endless
rite. Nothing is cut and nothing is faded: the seam is a sample-exact continuation.
Where the programme begins on a sound, its part opens on a quiet lead taken from the rite
just before it (``programmes.lead_in``), so the loop point falls where nothing starts;
the step where the loop's first sound comes in (``restart_s``) is measured beside the
seam's, as the *restart*.

The loop is normalised to its *calibration level*: a gain puts its integrated loudness
(ITU-R BS.1770-4, as EBU R 128 measures it) at ``calibration_lufs``, unless its true
peak would then pass ``ceiling_dbtp``, in which case the gain stops there (no limiter,
whose state would break the seam) and the level reached is what the manifest reports.
Files are interleaved WAVE_FORMAT_EXTENSIBLE WAV (48 kHz, 24-bit by default) with the
layout's speaker mask, as ``soundscape render`` writes them, of at most 16 channels; a
wider feed is split into several files, and a channel map says which output is where.

The raw loop lives in a float32 file beside the destination, read and written by position
(``_FramesFile``), so memory does not grow with the programme: a memory map's resident
pages count as the process's own (the whole rite in stereo held 4.3 GiB of PSS that way).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from soundscape.kit import KitError
from soundscape.performance import Performance
from soundscape.site.listeners import Listener, ListenerPath
from soundscape.sound.audiofile import Cue, open_writer
from soundscape.sound.directio import DirectFile
from soundscape.sound.loudness import LoudnessMeter, TruePeakMeter
from soundscape.sound.panning import Panner
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import SynthVoice, Voice, render_blocks
from soundscape.sound.staging import Staging

__all__ = ["MAX_CHANNELS", "LoopResult", "channel_groups", "render_loop", "seam_steps"]

#: Channels per WAV file (Q-SYS and Dante Virtual Soundcard players take 16 at most).
MAX_CHANNELS = 16
_BLOCK = 48000
_FLOOR = 1e-6  # levels below −60 dB re the loudest window count as silence (inaudible)


@dataclass(frozen=True, slots=True)
class LoopResult:
    """What ``render_loop`` wrote.

    ``files``: one WAV per group of ≤ 16 channels; ``channel_map``: per output channel,
    (file index, channel in that file from 1, name); levels of the written loop;
    ``seam_db``: the step across the seam and ``elsewhere_db`` the 95th percentile and
    the largest step between the loop's other windows (``seam_steps``); ``restart_db``:
    the step where the loop's first sound comes in (the seam's own when the loop opens
    on it).
    """

    files: tuple[Path, ...]
    channel_map: tuple[tuple[int, int, str], ...]
    seconds: float
    measured_lufs: float
    gain_db: float
    output_lufs: float
    output_peak_dbtp: float
    calibration_lufs: float
    ceiling_dbtp: float
    seam_db: float
    elsewhere_db: tuple[float, float]
    restart_db: float

    @property
    def at_calibration(self) -> bool:
        """Whether the loop plays at its calibration (else the true-peak ceiling stopped
        the gain short of it)."""
        return abs(self.output_lufs - self.calibration_lufs) < 0.05


def channel_groups(width: int) -> list[range]:
    """Output channels (from 0) of each file: consecutive runs of at most 16."""
    return [range(i, min(i + MAX_CHANNELS, width)) for i in range(0, width, MAX_CHANNELS)]


def render_loop(performance: Performance, path: str | Path, *, length_s: float,
                listener: Listener | ListenerPath, panner: Panner, sample_rate: int = 48000,
                seed: int = 0, calibration_lufs: float = -23.0, ceiling_dbtp: float = -1.0,
                bits: str = "24", voice: Voice | None = None,
                surroundings: Surroundings | None = None, cues: tuple[Cue, ...] = (),
                channel_mask: int = 0, restart_s: float = 0.0, workers: int = 1) -> LoopResult:
    """Render ``performance`` as a loop of ``length_s`` seconds to ``path`` (see module).

    ``path`` is the file of a feed of ≤ 16 channels; a wider feed goes to
    ``<stem>.ch01-16.wav``, ``<stem>.ch17-….wav`` beside it, each with channel mask 0.
    ``channel_mask``: the WAVE_FORMAT_EXTENSIBLE speaker mask of the feed
    (``speakers.channel_mask``); 0 says "no speaker positions". ``restart_s``: where the
    loop's first sound comes in (``programmes.first_sound``).
    """
    if not (0.5 <= length_s <= 24 * 3600):
        raise KitError(f"loop length={length_s!r} s, accepted: 0.5 s to 24 h")
    path = Path(path)
    frames = round(length_s * sample_rate)
    width = len(panner.channels)
    surroundings = surroundings or Surroundings()
    path.parent.mkdir(parents=True, exist_ok=True)
    # the scratch goes in a staging folder named by this process: one a killed run left
    # is removed by the next (staging.remove_stale), and an error names the loop's file
    with Staging(path.parent, f"{path.stem}.loop") as staged, _named(path), \
            _FramesFile(staged.scratch / "loop.f32", frames, width) as loop:
        blocks = render_blocks(performance, listener=listener, panner=panner,
                               sample_rate=sample_rate, seed=seed,
                               voice=voice or SynthVoice(surroundings.reference_db),
                               surroundings=surroundings, block_frames=_BLOCK,
                               workers=workers, fade_at_cut=False)
        _wrap(blocks, loop)
        measured, peak = _measure(loop, panner, sample_rate)
        gain_db = 0.0 if math.isinf(measured) else calibration_lufs - measured
        if peak > 0:
            gain_db = min(gain_db, ceiling_dbtp - 20 * math.log10(peak))
        files = _write(loop, path, 10 ** (gain_db / 20), sample_rate, bits, cues, channel_mask)
        seam, inside = seam_steps(loop, sample_rate) if frames >= 3 * sample_rate // 10 \
            else (0.0, np.zeros(1))
        restart = _step_at(seam, inside, restart_s)
    names = panner.channels
    channel_map = tuple((f, c - group.start + 1, names[c])
                        for f, group in enumerate(channel_groups(width)) for c in group)
    out_peak = 20 * math.log10(peak) + gain_db if peak > 0 else -math.inf
    return LoopResult(files, channel_map, frames / sample_rate, measured, gain_db,
                      measured + gain_db, out_peak, calibration_lufs, ceiling_dbtp, seam,
                      (float(np.percentile(inside, 95)), float(inside.max())), restart)


@contextlib.contextmanager
def _named(path: Path) -> Iterator[None]:
    """An error of the loop's scratch file (a full disk) names the loop asked for."""
    try:
        yield
    except OSError as error:
        if error.filename is None or Path(error.filename) == path:
            raise
        raise OSError(error.errno, error.strerror, str(path)) from None


class _FramesFile:
    """A ``(frames, channels)`` float32 array in a plain file, zeros until written, whose
    frames are read and written by position (``loop[a:b]``, ``loop[a:b] = x``), past the
    page cache (``directio.DirectFile``): what it holds is on the disk, not in this
    process's memory, as a memory map's resident pages are, nor in pages the kernel must
    find for it."""

    def __init__(self, path: Path, frames: int, channels: int) -> None:
        self._file = DirectFile(path, frames * channels * 4)
        self.shape = (frames, channels)

    def __enter__(self) -> _FramesFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._file.close()

    def __len__(self) -> int:
        return self.shape[0]

    def _span(self, index: slice) -> tuple[int, int]:
        start, stop, step = index.indices(len(self))
        if step != 1:
            raise ValueError(f"frames {index!r}: only a run of frames, step 1")
        return start, max(start, stop)

    def __getitem__(self, index: slice) -> np.ndarray:
        start, stop = self._span(index)
        frame = 4 * self.shape[1]
        got = self._file.read(start * frame, (stop - start) * frame)
        if len(got) != (stop - start) * frame:
            raise OSError(f"the loop file ended at byte {start * frame + len(got)}")
        return got.view(np.float32).reshape(-1, self.shape[1])

    def __setitem__(self, index: slice, value: np.ndarray) -> None:
        start, stop = self._span(index)
        block = np.ascontiguousarray(np.broadcast_to(value, (stop - start, self.shape[1])),
                                     dtype=np.float32)
        self._file.write(start * 4 * self.shape[1], block.reshape(-1).view(np.uint8))


def _wrap(blocks: Iterator[np.ndarray], loop: _FramesFile) -> None:
    """Lay the rendered blocks into the loop; frames past its end are added at its start."""
    frames = len(loop)
    at = 0
    for block in blocks:
        done = 0
        while done < len(block):
            start = at % frames
            take = min(len(block) - done, frames - start)
            piece = block[done:done + take]
            if at < frames:
                loop[start:start + take] = piece
            else:
                loop[start:start + take] += piece
            done += take
            at += take


def _measure(loop: _FramesFile, panner: Panner, sample_rate: int) -> tuple[float, float]:
    """Integrated loudness (LUFS) and true peak (linear) of the loop."""
    meter, peaks = LoudnessMeter(sample_rate, panner.loudness_weights()), TruePeakMeter()
    for start in range(0, len(loop), _BLOCK):
        block = np.asarray(loop[start:start + _BLOCK], dtype=float)
        meter.add(block)
        peaks.add(block)
    return meter.integrated(), peaks.peak


def _write(loop: _FramesFile, path: Path, gain: float, sample_rate: int, bits: str,
           cues: tuple[Cue, ...], channel_mask: int) -> tuple[Path, ...]:
    groups = channel_groups(loop.shape[1])
    mask = channel_mask if len(groups) == 1 else 0
    paths = [path] if len(groups) == 1 else [
        path.with_name(f"{path.stem}.ch{g.start + 1:02d}-{g.stop:02d}{path.suffix}")
        for g in groups]
    for target, group in zip(paths, groups, strict=True):
        with open_writer(target, sample_rate=sample_rate, channels=len(group),
                         file_format="wav", bits=bits, cues=cues, frames=len(loop),
                         channel_mask=mask) as writer:
            for start in range(0, len(loop), _BLOCK):
                block = np.asarray(loop[start:start + _BLOCK][:, group.start:group.stop],
                                   dtype=float) * gain
                writer.write(block)
    return tuple(paths)


def seam_steps(audio: np.ndarray | _FramesFile, sample_rate: int, *, window_s: float = 0.1,
               bands: tuple[float, ...] = (250.0, 1000.0, 4000.0)) -> tuple[float, np.ndarray]:
    """How much the sound changes across the seam, against everywhere else.

    The loop (its channels averaged) is cut into windows of ``window_s``; for each pair of
    neighbouring windows the step is the largest change in level (dB) of the whole band
    and of the octave-wide bands at ``bands``, levels more than 60 dB under the loudest
    window being taken as that floor (silence). Returns the step from the window that ends
    the loop to the one that begins it (the seam), and the steps between the windows from
    the start (elsewhere). Reads the audio in pieces (a memory-mapped loop stays on disk).
    """
    size = round(window_s * sample_rate)
    count = len(audio) // size
    if count < 3:
        raise KitError(f"loop of {len(audio)} frames is too short to measure its seam")
    chunk = max(1, (1 << 20) // size) * size
    rows = [_energies(audio[i:min(i + chunk, count * size)], size, sample_rate, bands)
            for i in range(0, count * size, chunk)]
    energies = np.hstack([*rows, _energies(audio[len(audio) - size:], size, sample_rate,
                                           bands)])  # (bands + 1, windows + the last one)
    floor = _FLOOR * max(float(energies[0].max()), 1e-30)
    levels = 10 * np.log10(energies + floor)
    inside = np.abs(np.diff(levels[:, :-1], axis=1)).max(axis=0)
    return float(np.abs(levels[:, 0] - levels[:, -1]).max()), inside


def _step_at(seam: float, inside: np.ndarray, time_s: float, window_s: float = 0.1
             ) -> float:
    """The step of ``seam_steps`` into the window holding ``time_s`` or out of it (a sound
    late in a window steps at the next), the seam's own at the loop's start."""
    window = int(time_s / window_s)
    if window == 0:
        return seam
    return float(inside[min(window, len(inside)) - 1:window + 1].max())


def _energies(piece: np.ndarray, size: int, sample_rate: int, bands: tuple[float, ...]
              ) -> np.ndarray:
    """Energy of each window of ``piece``: whole band, then each octave band."""
    mono = np.asarray(piece, dtype=float)
    mono = mono.mean(axis=1) if mono.ndim == 2 else mono
    windows = mono.reshape(-1, size) * np.hanning(size)
    spectrum = np.abs(np.fft.rfft(windows, axis=1)) ** 2
    freqs = np.fft.rfftfreq(size, 1 / sample_rate)
    rows = [spectrum.sum(axis=1)]
    rows += [spectrum[:, (freqs >= f / math.sqrt(2)) & (freqs < f * math.sqrt(2))].sum(axis=1)
             for f in bands]
    return np.array(rows)
