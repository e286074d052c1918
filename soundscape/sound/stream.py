"""Playing as it renders: a Performance's blocks, at a stored gain, to a pipe or a sound card.

A render (``render.render_audio``) is two passes: the loudness of the whole is measured
before the gain to the target is known. A stream cannot wait for that, so it takes the
gain a finished render found (its ``<out>.loudness.json`` report) or the calibration in
``soundscape/data/play.toml``, and applies it block by block as ``render_blocks`` makes
them:

    streamed = pack(limit(float32(block) × gain))

exactly as pass 2 writes a file (pass 1 keeps the blocks as float32; pass 2 multiplies
them by the gain in float64 and packs them with the same rounding). Where the limiter is
idle, the streamed frames are therefore bit for bit a render's frames at that gain
(tested against ``render_blocks``). The limiter is the render's true-peak limiter
(``loudness.TruePeakLimiter``) run on the stream: it lags by its look-ahead (``reach``,
0.1 s at 48 kHz) and touches only the stretches whose true peak at this gain would pass
the ceiling; there the frames are turned down, not clipped.

A WAV stream is a WAV header whose RIFF and data sizes are unknown (``0xFFFFFFFF``, as
ffmpeg writes to a pipe), then the frames, flushed after each block; written to a file
that can seek, the sizes are set when it ends.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from soundscape import validate
from soundscape.errors import PerformanceError, RenderError
from soundscape.fileio import read_json, read_toml
from soundscape.performance import Performance
from soundscape.resources import data_dir
from soundscape.sound.audiofile import pack_samples
from soundscape.sound.loudness import TruePeakLimiter

__all__ = ["MAX_GAIN_DB", "UNKNOWN_SIZE", "SoundCard", "WavStream", "calibrated_gain", "cue_time",
           "gain_from_report", "parse_time", "played", "wav_header"]

#: Largest gain a stream may be given, dB (a render's gains are tens of dB at most).
MAX_GAIN_DB = 70.0
#: RIFF and data chunk size of a stream whose length is not known (ffmpeg's, on a pipe).
UNKNOWN_SIZE = 0xFFFFFFFF
_WIDTH = {"16": 2, "24": 3, "float": 4}
# WAVE_FORMAT_EXTENSIBLE sub-formats: the format tag, then the fixed GUID tail
_GUID_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


def wav_header(*, channels: int, sample_rate: int, bits: str, channel_mask: int = 0) -> bytes:
    """The header of a WAV stream of unknown length: PCM (or IEEE float) for one or two
    channels, WAVE_FORMAT_EXTENSIBLE with ``channel_mask`` for more."""
    if str(bits) not in _WIDTH:
        raise RenderError(f"bits={bits!r}, accepted: {', '.join(_WIDTH)}")
    width = _WIDTH[str(bits)]
    tag = 3 if bits == "float" else 1
    align = channels * width
    fmt = struct.pack("<HHIIHH", tag, channels, sample_rate, sample_rate * align, align,
                      8 * width)
    if channels > 2:
        fmt = (struct.pack("<HHIIHH", 0xFFFE, channels, sample_rate, sample_rate * align,
                           align, 8 * width)
               + struct.pack("<HHI", 22, 8 * width, channel_mask)
               + struct.pack("<H", tag) + _GUID_TAIL)
    return (b"RIFF" + struct.pack("<I", UNKNOWN_SIZE) + b"WAVE"
            + b"fmt " + struct.pack("<I", len(fmt)) + fmt
            + b"data" + struct.pack("<I", UNKNOWN_SIZE))


class WavStream:
    """Frames to a binary file object as a WAV stream: the header at once, then each
    block packed and flushed (a player on the other end of a pipe starts with the first).

    Parameters
    ----------
    out : binary file object
        Standard output's buffer, a pipe or a file.
    channels, sample_rate : int
    bits : str
        ``16``, ``24`` or ``float``.
    channel_mask : int
        Speaker bits (WAVE_FORMAT_EXTENSIBLE, more than two channels).
    """

    def __init__(self, out: BinaryIO, *, channels: int, sample_rate: int, bits: str,
                 channel_mask: int = 0) -> None:
        self.out, self.bits, self.frames = out, str(bits), 0
        self._header = wav_header(channels=channels, sample_rate=sample_rate, bits=bits,
                                  channel_mask=channel_mask)
        self._frame_bytes = channels * _WIDTH[self.bits]
        out.write(self._header)
        out.flush()

    def write(self, samples: np.ndarray) -> None:
        """Write ``(frames, channels)`` float samples (full scale ±1)."""
        self.out.write(pack_samples(samples, self.bits).tobytes())
        self.out.flush()
        self.frames += len(samples)

    def close(self) -> None:
        """Set the sizes where the file can seek (a pipe keeps ``UNKNOWN_SIZE``)."""
        data = self.frames * self._frame_bytes
        try:
            seekable = self.out.seekable()
        except (AttributeError, ValueError):
            seekable = False
        if seekable and len(self._header) + data <= UNKNOWN_SIZE:
            end = self.out.tell()
            self.out.seek(4)
            self.out.write(struct.pack("<I", len(self._header) - 8 + data))
            self.out.seek(len(self._header) - 4)
            self.out.write(struct.pack("<I", data))
            self.out.seek(end)
        self.out.flush()


class SoundCard:
    """Frames to the sound card through ``sounddevice`` (PortAudio), if it is installed and
    there is an output device; ``write`` blocks while the device's buffer is full, so the
    render runs ahead of the playing by that buffer only."""

    def __init__(self, *, channels: int, sample_rate: int, device: str | None = None) -> None:
        try:
            import sounddevice
        except (ImportError, OSError) as error:  # OSError: the PortAudio library is missing
            raise RenderError(f"no sound card output here ({error}); install sounddevice "
                              "(pip install sounddevice), or stream a WAV to a player: "
                              "-o - | ffplay -  (or | aplay)") from None
        try:
            self._stream = sounddevice.OutputStream(samplerate=sample_rate, channels=channels,
                                                    dtype="float32", device=device)
            self._stream.start()
        except (sounddevice.PortAudioError, ValueError) as error:
            raise RenderError(f"sound card: {error}; choose one with --device, or stream a "
                              "WAV to a player: -o - | ffplay -") from None
        self.frames = 0

    def write(self, samples: np.ndarray) -> None:
        self._stream.write(np.ascontiguousarray(np.clip(samples, -1.0, 1.0), dtype=np.float32))
        self.frames += len(samples)

    def close(self) -> None:
        self._stream.stop()
        self._stream.close()


def played(blocks: Iterable[np.ndarray], *, gain_db: float,
           limiter: TruePeakLimiter | None = None) -> Generator[np.ndarray, None, None]:
    """The blocks as a render's pass 2 makes them: float32 (what pass 1 keeps) times the
    gain in float64, then the limiter (None: none; its look-ahead held back and given out
    at the end)."""
    gain = 10 ** (gain_db / 20)
    for block in blocks:
        scaled = np.multiply(np.asarray(block, dtype=np.float32), gain, dtype=np.float64)
        out = limiter.process(scaled) if limiter is not None else scaled
        if len(out):
            yield out
    if limiter is not None:
        rest = limiter.flush()
        if len(rest):
            yield rest


def gain_from_report(path: str | Path) -> tuple[float, dict]:
    """The gain (dB) a render applied, from its loudness report (``<out>.loudness.json``),
    and the report."""
    report = read_json(path, RenderError)
    gain = report.get("gain_db") if isinstance(report, dict) else None
    if not validate.is_finite(gain) or abs(gain) > MAX_GAIN_DB:
        raise RenderError(f"{path}: gain_db={gain!r}: not a render's loudness report (a "
                          "<out>.loudness.json written beside a render, with a gain_db from "
                          f"{-MAX_GAIN_DB:g} to {MAX_GAIN_DB:g})")
    return float(gain), report


def calibrated_gain() -> tuple[float, str]:
    """The gain of the calibration (``soundscape/data/play.toml``) and its basis."""
    path = data_dir() / "play.toml"
    data = read_toml(path, RenderError)
    gain = data.get("gain_db")
    if isinstance(gain, bool) or not isinstance(gain, int | float) or not math.isfinite(gain):
        raise RenderError(f"{path}: gain_db={gain!r}, accepted: a finite number of dB")
    return float(gain), str(data.get("basis", ""))


_CLOCK = re.compile(r"^(?:(\d{1,9}):)?(\d{1,9}):(\d{1,9}(?:\.\d{0,9})?)$")  # no 5000-digit int


def parse_time(text: str, *, option: str = "--start") -> float:
    """Seconds from ``90``, ``90.5``, ``1:30`` or ``1:02:30``; finite and not negative."""
    clock = _CLOCK.match(text.strip())
    if clock:
        hours, minutes, seconds = clock.groups()
        value = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
        if float(seconds) >= 60 or (hours is not None and int(minutes) >= 60):
            value = math.nan
    else:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise RenderError(f"{option} {text!r}, accepted: seconds not below 0, like 90, 90.5, "
                          "1:30 or 1:02:30")
    return value


def cue_time(performance: Performance, name: str) -> float:
    """When the cue ``name`` happens, in seconds on the Performance's clock: a section (id
    s18, name 樂賓 or 右樂賓), a step (s18.09, or its words 乃歌鹿鳴三終), a music cue (luming)
    or its piece (鹿鳴, 《鹿鳴》), a voice or speech cue; the first if it comes again."""
    title = name.strip("《》 ")
    for marker in performance.markers:
        if name in (marker.ref, marker.text) or (
                marker.kind == "section" and name == marker.text.removeprefix("右")):
            return marker.time
    for span in performance.music:
        piece = performance.pieces.get(span.piece)
        if title in (span.cue, span.piece) or (piece and title == piece.title.strip("《》")):
            return span.start
    for section in performance.sections:
        if name in (section.id, section.name, section.name.removeprefix("右")):
            return section.start
    raise PerformanceError(f"cue {name!r} is not in the part played; known: "
                           f"{_known_cues(performance)} (or their words, as `soundscape "
                           "cues` and a render's markers show them)")


def _known_cues(performance: Performance) -> str:
    """The cues of a Performance, short: its sections and music by id and words, and the
    range of its steps."""
    shown: dict[str, dict[str, str]] = {"section": {}, "music": {}, "step": {}}
    for marker in performance.markers:
        if marker.kind in shown:
            shown[marker.kind].setdefault(marker.ref, marker.text)
    steps = list(shown["step"])
    return "; ".join([
        *(f"{kind} {', '.join(f'{ref} {text}' for ref, text in shown[kind].items())}"
          for kind in ("section", "music") if shown[kind]),
        *([f"steps {steps[0]}…{steps[-1]}"] if steps else [])]) or "none"
