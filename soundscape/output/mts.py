"""MIDI Tuning Standard and pitch-bend messages: how a MIDI file carries 三分損益.

Two ways to make a synthesiser sound a pitch that is not on the 12-TET grid:

- **Scale/octave tuning** (MIDI Tuning Standard, universal SysEx sub-IDs 08 09,
  "2-byte form"): twelve offsets in cents, one per pitch class, each in ±100
  cents with 14-bit resolution (100/8192 ≈ 0.012 cents), sent once to a mask of
  channels. FluidSynth 2.3.1 honours it directly (no bank/program selection is
  needed, unlike the single-note tuning change). Because it is per pitch class,
  it is exact for any tuning whose octaves are pure 2:1 — 三分損益 is: every
  清 pipe is half the 正 pipe — so every 律 keeps the same offset in every
  octave. It cannot hold two different pitches on one key pitch class (黃鍾 and
  黃鍾之變, or a tuning with stretched octaves); :func:`pitch_class_offsets`
  refuses such a set.
- **Pitch bend** per note (MPE style): each sounding note gets its own channel,
  the bend range is set by RPN 0, and the bend moves the nearest 12-TET key to
  the pitch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import mido

from soundscape.errors import RenderError
from soundscape.music.pitch import Pitch
from soundscape.music.tuning import LU

__all__ = [
    "BEND_RANGE_SEMITONES",
    "KeyMap",
    "bend_range_messages",
    "bend_to_cents",
    "cents_to_bend",
    "hz_of_key",
    "key_map",
    "parse_scale_octave",
    "pitch_class_offsets",
    "scale_octave_tuning",
]

#: Pitch-bend range used by the MPE-style fallback, semitones (the GM default).
BEND_RANGE_SEMITONES = 2

_UNIVERSAL_NON_REALTIME = 0x7E
_ALL_DEVICES = 0x7F
_MIDI_TUNING = 0x08
_SCALE_OCTAVE_2BYTE = 0x09
_CENTRE_14BIT = 8192
_SCALE_OCTAVE_RANGE_CENTS = 100.0
_CONSISTENT_CENTS = 0.05  # two pitches on one pitch class must agree this well


class KeyMap:
    """Where each 律 pitch sounds on the keyboard under scale/octave tuning.

    Parameters
    ----------
    huangzhong_key : int
        The MIDI key that plays 黃鍾 of the 正 octave (octave 0).
    """

    __slots__ = ("huangzhong_key",)

    def __init__(self, huangzhong_key: int) -> None:
        self.huangzhong_key = huangzhong_key

    def key(self, pitch: Pitch) -> int:
        """The MIDI key of ``pitch``: one key per 律, 12 keys per octave.

        Raises
        ------
        RenderError
            When the pitch falls off the 0–127 keyboard.
        """
        key = self.huangzhong_key + _lu_index(pitch) + 12 * pitch.octave
        if not 0 <= key <= 127:
            raise RenderError(f"pitch {pitch.name} ({pitch.hz:.2f} Hz) maps to MIDI key {key}, "
                              "outside 0–127")
        return key

    def offset_cents(self, pitch: Pitch) -> float:
        """Cents from the key's 12-TET pitch to ``pitch`` (A4 = 440 Hz)."""
        return (pitch.midi - self.key(pitch)) * 100.0


def _lu_index(pitch: Pitch) -> int:
    try:
        return LU.index(pitch.lu)
    except ValueError:
        raise RenderError(f"pitch lu={pitch.lu!r} is not a canonical 律 name; accepted: "
                          f"{', '.join(LU)}") from None


def key_map(pitches: Iterable[Pitch]) -> KeyMap:
    """The key map for a set of pitches: 黃鍾 on the 12-TET key nearest to it.

    The lowest "黃鍾 equivalent" (pitch lowered by its 律 steps and octaves) is
    used, which is 黃鍾 itself under 三分損益 (every other 律 lies above its
    12-TET step) and any of them under equal temperament. With no pitches, 黃鍾
    sits on middle C (key 60).
    """
    bases = [p.midi - _lu_index(p) - 12 * p.octave for p in pitches]
    return KeyMap(round(min(bases)) if bases else 60)


def pitch_class_offsets(pitches: Iterable[Pitch], keys: KeyMap) -> tuple[float, ...]:
    """The twelve scale/octave offsets (cents, index = key pitch class) for ``pitches``.

    Pitch classes no pitch uses stay at 0 (12-TET).

    Raises
    ------
    RenderError
        When two pitches on one pitch class differ (octaves not pure, or two
        pitches of one 律), or an offset is beyond the ±100 cents MTS can carry.
    """
    offsets: dict[int, tuple[float, Pitch]] = {}
    for pitch in pitches:
        key = keys.key(pitch)
        cents = keys.offset_cents(pitch)
        seen = offsets.setdefault(key % 12, (cents, pitch))
        if abs(seen[0] - cents) > _CONSISTENT_CENTS:
            raise RenderError(
                f"pitches {seen[1].name} ({seen[1].hz:.3f} Hz) and {pitch.name} ({pitch.hz:.3f} Hz)"
                f" fall on one pitch class but need offsets {seen[0]:+.2f} and {cents:+.2f} cents;"
                " scale/octave tuning holds one offset per pitch class: use tuning mode 'mpe'")
        if abs(cents) > _SCALE_OCTAVE_RANGE_CENTS:
            raise RenderError(f"pitch {pitch.name} needs {cents:+.1f} cents from its key; "
                              "MTS scale/octave tuning carries at most ±100")
    return tuple(offsets.get(pc, (0.0, None))[0] for pc in range(12))


def _channel_mask(channels: Iterable[int]) -> list[int]:
    mask = 0
    for channel in channels:
        mask |= 1 << channel
    return [(mask >> 14) & 0x03, (mask >> 7) & 0x7F, mask & 0x7F]


def scale_octave_tuning(offsets: Sequence[float], *, channels: Iterable[int]) -> mido.Message:
    """The MTS scale/octave tuning message (2-byte form, non-real-time) for ``channels``.

    Parameters
    ----------
    offsets : 12 floats, cents in [-100, 100)
        Offset of each pitch class (C, C♯ … B) from 12-TET.
    channels : iterable of int, 0–15
        The channels the tuning applies to.
    """
    data = [_UNIVERSAL_NON_REALTIME, _ALL_DEVICES, _MIDI_TUNING, _SCALE_OCTAVE_2BYTE,
            *_channel_mask(channels)]
    for cents in offsets:
        value = round(_CENTRE_14BIT * (1.0 + cents / _SCALE_OCTAVE_RANGE_CENTS))
        value = min(max(value, 0), 0x3FFF)
        data += [value >> 7, value & 0x7F]
    return mido.Message("sysex", data=data)


def parse_scale_octave(message: mido.Message) -> tuple[tuple[int, ...], tuple[float, ...]] | None:
    """The channels and twelve offsets (cents) of a scale/octave tuning message, else None.

    Reads both the 1-byte (08 08, ±64 cents) and the 2-byte (08 09) forms.
    """
    data = tuple(message.data)
    if message.type != "sysex" or len(data) < 7 or data[0] not in (0x7E, 0x7F) \
            or data[2] != _MIDI_TUNING or data[3] not in (0x08, 0x09):
        return None
    mask = (data[4] << 14) | (data[5] << 7) | data[6]
    channels = tuple(c for c in range(16) if mask >> c & 1)
    body = data[7:]
    if data[3] == 0x08:
        offsets = tuple(float(v - 64) for v in body[:12])
    else:
        offsets = tuple(((body[2 * i] << 7 | body[2 * i + 1]) / _CENTRE_14BIT - 1.0)
                        * _SCALE_OCTAVE_RANGE_CENTS for i in range(12))
    return channels, offsets


def bend_range_messages(channel: int, semitones: int = BEND_RANGE_SEMITONES) -> list[mido.Message]:
    """RPN 0 (pitch-bend sensitivity) set to ``semitones``, then the RPN closed (127/127)."""
    return [mido.Message("control_change", channel=channel, control=c, value=v)
            for c, v in ((101, 0), (100, 0), (6, semitones), (38, 0), (101, 127), (100, 127))]


def cents_to_bend(cents: float, semitones: int = BEND_RANGE_SEMITONES) -> int:
    """The pitch-bend value (−8192 … 8191) for ``cents`` under a bend range of ``semitones``."""
    value = round(cents / (100.0 * semitones) * _CENTRE_14BIT)
    if not -_CENTRE_14BIT <= value < _CENTRE_14BIT:
        raise RenderError(f"bend of {cents:+.1f} cents exceeds the ±{semitones} semitone range")
    return value


def bend_to_cents(value: int, semitones: int = BEND_RANGE_SEMITONES) -> float:
    """Cents of a pitch-bend value (−8192 … 8191) under a bend range of ``semitones``."""
    return value / _CENTRE_14BIT * 100.0 * semitones


def hz_of_key(key: int, cents: float = 0.0) -> float:
    """Frequency in Hz of MIDI ``key`` moved by ``cents`` (A4 = 440 Hz)."""
    return 440.0 * 2.0 ** ((key - 69 + cents / 100.0) / 12.0)
