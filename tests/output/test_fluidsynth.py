"""Real client: FluidSynth renders our MIDI of the rite in time; the pitch follows MTS."""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile
from scipy.signal import find_peaks

from soundscape import sequence, site
from soundscape.music.tuning import Tuning
from soundscape.output import midi
from soundscape.performance import Event, Marker, Performance, Source
from soundscape.site.listeners import Listener

SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
RATE = 48000
pytestmark = pytest.mark.skipif(shutil.which("fluidsynth") is None or not SOUNDFONT.is_file(),
                                reason="needs Debian fluidsynth and fluid-soundfont-gm")

FACING_NORTH = Listener((0.0, 0.0, 1.6), "north")
TUNING = Tuning.sanfen_sunyi("zeng")  # 黃鍾 ≈ 32 cents below G♯3: far from the 12-TET grid


def _one_note(instrument: str, name: str) -> Performance:
    """A section with one long note of ``instrument`` on the 律 ``name``, then a drum."""
    sources = {"a": Source("a", instrument, "東縣 笙鐘", "sheng zhong", "east", (4.0, 8.0, 1.5)),
               "d": Source("d", "jiangu", "建鼓", "jian gu", "drums", (-4.0, 8.0, 1.0))}
    events = [Event(0.1, 3.0, "a", TUNING.pitch(name), 0.9, "A", "m"),
              Event(3.2, 0.3, "d", None, 0.9, "strike", "m")]
    markers = [Marker(0.0, "section", "右設樂", "setting up the music", "s")]
    return Performance.build(events, markers, sources)


def _render(performance: Performance, tmp_path: Path, mode: str,
            listener: Listener = FACING_NORTH) -> np.ndarray:
    path = midi.write_midi(performance, tmp_path / f"{mode}.mid", listener=listener,
                           tuning_mode=mode)
    wav = tmp_path / f"{mode}.wav"
    run = subprocess.run(["fluidsynth", "-ni", "-F", str(wav), "-r", str(RATE), str(SOUNDFONT),
                          str(path)], capture_output=True, text=True, timeout=60, check=True)
    complaints = [line for line in (run.stdout + run.stderr).lower().splitlines()
                  if "error" in line or "warning" in line or "invalid" in line]
    assert not complaints, complaints
    audio, rate = soundfile.read(wav)
    assert rate == RATE and np.isfinite(audio).all() and np.abs(audio).max() > 0.01
    return audio.mean(axis=1)


def _peak_hz(audio: np.ndarray, near_hz: float) -> float:
    """Frequency of the strongest spectral peak within a semitone and a half of ``near_hz``."""
    segment = audio[int(0.4 * RATE): int(2.4 * RATE)]
    size = 1 << 20
    spectrum = np.abs(np.fft.rfft(segment * np.hanning(segment.size), size))
    freqs = np.fft.rfftfreq(size, 1 / RATE)
    band = (freqs > near_hz * 2 ** (-1.5 / 12)) & (freqs < near_hz * 2 ** (1.5 / 12))
    i = int(np.argmax(np.where(band, spectrum, 0.0)))
    a, b, c = np.log(spectrum[i - 1: i + 2])
    return (i + 0.5 * (a - c) / (a - 2 * b + c)) * RATE / size


def _cents(a: float, b: float) -> float:
    return 1200 * math.log2(a / b)


@pytest.mark.parametrize("name", ["黃鍾", "太簇"])
def test_stone_chime_sounds_the_sanfen_sunyi_pitch_with_mts(tmp_path, name):
    # The marimba patch is tuned to its key (< 1 cent), so its fundamental is the pitch.
    pitch = TUNING.pitch(name)
    tuned = _peak_hz(_render(_one_note("bianqing", name), tmp_path, "mts"), pitch.hz)
    plain = _peak_hz(_render(_one_note("bianqing", name), tmp_path, "12tet"), pitch.hz)
    assert abs(_cents(tuned, pitch.hz)) < 10, f"MTS: {_cents(tuned, pitch.hz):+.1f} cents"
    assert abs(_cents(plain, pitch.hz)) > 10, f"12-TET: {_cents(plain, pitch.hz):+.1f} cents"


@pytest.mark.parametrize("mode", ["mts", "mpe"])
def test_bell_follows_the_tuning(tmp_path, mode):
    # The tubular-bell sample is inharmonic and not tuned to its key, so measure how far
    # the tuning moves its strongest partial near the second harmonic from the 12-TET render.
    pitch = TUNING.pitch("黃鍾")
    key, offset = pitch.nearest_midi()
    assert abs(offset) > 20
    performance = _one_note("bianzhong", "黃鍾")
    reference = _peak_hz(_render(performance, tmp_path, "12tet"), 2 * midi_hz(key))
    tuned = _peak_hz(_render(performance, tmp_path, mode), 2 * midi_hz(key))
    moved = _cents(tuned, reference)
    assert abs(moved - offset) < 10, f"{mode}: moved {moved:+.1f}, expected {offset:+.1f} cents"


def midi_hz(key: int) -> float:
    return 440.0 * 2 ** ((key - 69) / 12)


def _onsets(audio: np.ndarray) -> np.ndarray:
    """Onset times (s): peaks of the rise in log energy over 10 ms windows, 2 ms hops."""
    hop, window = int(0.002 * RATE), int(0.010 * RATE)
    frames = np.lib.stride_tricks.sliding_window_view(audio, window)[::hop]
    level = np.log10((frames ** 2).mean(axis=1) + 1e-12)
    rise = np.maximum(np.diff(level), 0.0)
    peaks, _ = find_peaks(rise, height=0.1, distance=int(0.3 / 0.002))
    return (peaks + 1) * hop / RATE + window / RATE / 2


def test_section_of_the_rite_renders_in_time(tmp_path):
    # 樂賓 (s18): its first minute of music, 鹿鳴 sung to four 瑟, heard from the duke's seat.
    rite = sequence.perform_from_file(from_section="s18", to_section="s18")
    start = next(e.time for e in rite.events if e.piece == "luming") - 2.0
    minute = rite.between(start, start + 60.0)
    # The music alone (not the steps' sounds around it), and of it the plucked and struck
    # notes: the GM choir's slow attack and vibrato blur the sung onsets.
    minute = replace(minute, events=tuple(e for e in minute.events if e.piece and
                                          e.articulation not in ("sing", "inhale")))
    seat = site.load_site().listener("gong_wei")
    audio = _render(minute, tmp_path, "mts", Listener(seat.position, seat.facing))
    onsets = sorted({e.time for e in minute.events})
    assert len(onsets) > 20 and {e.pitch is not None for e in minute.events} == {True}
    first = int(np.argmax(np.abs(audio) > 1e-3)) / RATE
    assert abs(first - onsets[0]) < 0.020, f"first sound at {first:.4f} s, note at {onsets[0]}"
    assert np.abs(audio[: int((onsets[0] - 0.02) * RATE)]).max() < 1e-4  # dither only
    # The four 瑟 pluck within ~50 ms of each other: one stroke heard, timed by its first.
    strokes = [onsets[0]]
    for time in onsets[1:]:
        if time - strokes[-1] > 0.08:
            strokes.append(time)
    heard = _onsets(audio)
    missed = [t for t in strokes if np.min(np.abs(heard - t)) > 0.020]
    assert len(strokes) > 20 and len(missed) <= 0.1 * len(strokes), f"no onset near {missed}"


def _crowd() -> Performance:
    """A stone chime, 15 drums and one more drum: in a many-port file the last drum takes
    port 1 channel 0, the stone's channel number on port 0."""
    sources = {"stone": Source("stone", "bianqing", "東縣 笙磬", "stones", "east",
                               (4.0, 8.0, 1.5))}
    for i in range(16):
        sources[f"d{i}"] = Source(f"d{i}", "jiangu", f"建鼓{i}", f"drum {i}", "drums",
                                  (-4.0 - i, 8.0, 1.0))
    events = [Event(0.2, 2.5, "stone", TUNING.pitch("黃鍾"), 0.9, "strike", "m")]
    events += [Event(3.0 + 0.05 * i, 0.3, f"d{i}", None, 0.9, "strike", "m") for i in range(16)]
    return Performance.build(events, [], sources)


def _stone_segment(audio: np.ndarray) -> tuple[float, float]:
    """Level (dB) and spectral centroid (Hz) of the stone's note, before any drum."""
    segment = audio[int(0.3 * RATE): int(2.6 * RATE)]
    spectrum = np.abs(np.fft.rfft(segment))
    freqs = np.fft.rfftfreq(segment.size, 1 / RATE)
    level = 10 * math.log10(float((segment ** 2).mean()) + 1e-20)
    return level, float((freqs * spectrum).sum() / spectrum.sum())


def _play(performance: Performance, tmp_path: Path, name: str, ports: str) -> np.ndarray:
    path = midi.write_midi(performance, tmp_path / f"{name}.mid", listener=FACING_NORTH,
                           ports=ports)
    wav = tmp_path / f"{name}.wav"
    subprocess.run(["fluidsynth", "-ni", "-F", str(wav), "-r", str(RATE), str(SOUNDFONT),
                    str(path)], capture_output=True, text=True, timeout=60, check=True)
    return soundfile.read(wav)[0].mean(axis=1)


def test_the_default_file_plays_every_track_with_its_own_instrument_in_fluidsynth(tmp_path):
    # FluidSynth ignores MIDI ports: the default one-port file must still give the stone
    # its marimba, as the stone alone does; the many-port file hands it the drum's program
    crowd = _crowd()
    alone = replace(crowd, events=crowd.events[:1])
    reference = _stone_segment(_play(alone, tmp_path, "alone", "one"))
    default = _stone_segment(_play(crowd, tmp_path, "one", "one"))
    many = _stone_segment(_play(crowd, tmp_path, "many", "many"))
    assert abs(default[0] - reference[0]) < 0.5 and abs(default[1] / reference[1] - 1) < 0.02
    assert abs(many[0] - reference[0]) > 3 or abs(many[1] / reference[1] - 1) > 0.1
