"""``soundscape audition [INSTRUMENT …]``: hear (and see) each instrument on its own.

Writes ``NAME.wav`` and a spectrogram ``NAME.png`` per instrument: a bell set bell by
bell, A-tone then B-tone; a chime set stone by stone; a drum roll from soft to loud
(then rim strokes); the 鼗 shaken softly to hard; strings, pipes and 笙 in the
pentatonic mode on ``--gong``; the voice singing the first phrases of 鹿鳴 (one
note per character, in a tenor's octave), the 宮 and 商 calls and a spoken request;
the sounds of actions and of the place each articulation in turn (a walk, a bow, a cup
set down, a pour, a bed segment).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np

from soundscape.cli._common import SEED_MAX, FilePath, Huangzhong, WholeRange
from soundscape.fileio import atomic_path
from soundscape.music.instruments import Instrument, list_instruments, load_instrument
from soundscape.music.tuning import LU, Tuning, tuning_named
from soundscape.resources import bundled_dir
from soundscape.sound.audiofile import write_audio
from soundscape.sound.render import SAMPLE_RATES
from soundscape.sound.synth import BELL_SETS, render_note

__all__ = ["command", "demo_notes", "render_demo", "spectrogram_figure", "write_spectrogram"]

#: Sounds of actions and of the place: how long each articulation is auditioned, by model.
_ACTION_SECONDS = {"footstep": 3.0, "cloth": 1.5, "vessel": 0.4, "liquid": 2.5,
                   "clatter": 1.5, "ambience": 12.0, "creatures": 6.0}
#: The whole spectrogram's top (Hz), raised to hold every kHz band within this many dB of
#: the loudest (a torch's pops, a bird's harmonics, a bell's upper partials).
_VIEW_HZ, _VIEW_DB = 8000.0, 60.0
#: Largest --seed (numpy seeds are unsigned; 63 bits keep it an ordinary integer).


@dataclass(frozen=True, slots=True)
class DemoNote:
    """One note of an audition: onset and length in seconds, pitch in Hz (None: own),
    and for a member of a set the 律 name it sounds."""

    time: float
    duration: float
    hz: float | None
    velocity: float
    articulation: str
    lyric: str | None = None
    pitch: str | None = None


def demo_notes(instrument: Instrument, *, tuning: Tuning, gong: str) -> list[DemoNote]:
    """The audition programme of one instrument."""
    return list(_programme(instrument, tuning=tuning, gong=gong))


def _programme(instrument: Instrument, *, tuning: Tuning, gong: str) -> Iterator[DemoNote]:
    arts = instrument.articulations
    if instrument.family == "voice":
        yield from _song(tuning)
        return
    if instrument.pitches:
        step = 1.4 if {"A", "B"} <= set(arts) else 0.7
        for i, name in enumerate(instrument.pitches):
            hz = tuning.pitch(name).hz
            yield DemoNote(i * step, 0.5, hz, 0.8, arts[0], pitch=name)
            if {"A", "B"} <= set(arts):
                yield DemoNote(i * step + 0.7, 0.5, hz, 0.8, "B", pitch=name)
        return
    if "shake" in arts:
        for i, velocity in enumerate((0.3, 0.6, 1.0)):
            yield DemoNote(i * 1.6, 1.2, None, velocity, "shake")
        return
    if instrument.model in _ACTION_SECONDS:
        yield from _each_articulation(instrument, _ACTION_SECONDS[instrument.model])
        return
    if instrument.family in ("drum", "rattle") or instrument.range_hz is None:
        yield from _roll(instrument)
        return
    low, high = instrument.range_hz
    played = [p for p in tuning.scale(gong=_lowest_gong(tuning, gong, low), octaves=4)
              if low <= p.hz <= high][:11]
    scale: list[tuple[float, str | None]] = [(p.hz, p.name) for p in played]
    if instrument.family == "bell":  # a single bell (鑮): its own pitch, soft to loud
        scale = [(instrument.default_hz, None) if instrument.default_hz else scale[0]] * 4
    for i, (hz, lu) in enumerate(scale + scale[-2::-1]):
        velocity = 0.4 + 0.6 * (i % 4) / 3 if instrument.family == "bell" else 0.8
        yield DemoNote(i * 0.6 * (3 if instrument.family == "bell" else 1), 0.5, hz,
                       velocity, arts[0], pitch=lu)


def _roll(instrument: Instrument) -> Iterator[DemoNote]:
    """Strokes soft to loud, closer together as they grow; then the other articulations."""
    time = 0.0
    for i in range(16):
        yield DemoNote(time, 0.2, None, 0.08 + 0.92 * i / 15, instrument.articulations[0])
        time += 0.5 - 0.3 * i / 15
    for articulation in instrument.articulations[1:]:
        time += 1.0
        for velocity in (0.4, 0.7, 1.0):
            yield DemoNote(time, 0.2, None, velocity, articulation)
            time += 0.6


def _each_articulation(instrument: Instrument, seconds: float) -> Iterator[DemoNote]:
    """Every articulation once, ``seconds`` long, with a second's pause between."""
    for i, articulation in enumerate(instrument.articulations):
        yield DemoNote(i * (seconds + 1.0), seconds, None, 0.8, articulation)


def _song(tuning: Tuning) -> Iterator[DemoNote]:
    """The first two phrases of 鹿鳴 (a surviving score) in a tenor's octave (register),
    the 宮 and 商 calls, then 「請射于公」 spoken (the default reading)."""
    from soundscape.music.register import octave_shift, sung_pitch
    from soundscape.music.repertoire import load_piece

    piece = load_piece("luming")
    beat = 60.0 / piece.tempo_bpm
    shift = octave_shift([tuning.pitch(n.name) for n in piece.notes], "tenor")
    time = 0.0
    for phrase in piece.phrases[:2]:
        for note in phrase:
            hz = sung_pitch(tuning.pitch(note.name), "tenor", shift=shift).hz
            yield DemoNote(time, note.beats * beat * 0.95, hz, 0.8, "sing", note.lyric)
            time += note.beats * beat
        time += beat
    for degree in ("宮", "商"):
        hz = tuning.degree(gong="倍黃鍾", degree=degree).hz
        yield DemoNote(time + 0.5, 1.2, hz, 1.0, "call", "諾")
        time += 2.2
    yield DemoNote(time + 0.5, 1.4, 120.0, 0.8, "speak", "請射于公")


def _lowest_gong(tuning: Tuning, gong: str, low_hz: float) -> str:
    """``gong`` moved down by octaves (倍…) to the lowest octave still at or above ``low_hz``."""
    name = gong
    while tuning.pitch("倍" + name).hz >= low_hz:
        name = "倍" + name
    while tuning.pitch(name).hz < low_hz:
        name = "清" + name
    return name


def render_demo(instrument: Instrument, notes: list[DemoNote], *, sample_rate: int,
                seed: int, tuning: Tuning | None = None, bells: str = "ideal") -> np.ndarray:
    """Mix the notes (each with its own ring) into one mono track, peak at most 1
    (``tuning`` and ``bells`` as for ``render_note``)."""
    rng = np.random.default_rng(seed)
    sounds = [(round(n.time * sample_rate),
               render_note(instrument, hz=n.hz, velocity=n.velocity, duration=n.duration,
                           articulation=n.articulation, sample_rate=sample_rate, rng=rng,
                           lyric=n.lyric, pitch=n.pitch, tuning=tuning, bells=bells))
              for n in notes]
    mix = np.zeros(max(start + sound.size for start, sound in sounds) + sample_rate // 4)
    for start, sound in sounds:
        mix[start:start + sound.size] += sound
    return mix / max(1.0, float(np.max(np.abs(mix))))


def write_spectrogram(audio: np.ndarray, path: Path, *, sample_rate: int, title: str,
                      notes: list[DemoNote]) -> None:
    """:func:`spectrogram_figure` as PNG, written atomically."""
    figure = spectrogram_figure(audio, sample_rate=sample_rate, title=title, notes=notes)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, metadata={"Software": None})


def spectrogram_figure(audio: np.ndarray, *, sample_rate: int, title: str,
                       notes: list[DemoNote]):
    """Spectrograms: the whole audition above (0–8 kHz, or as high as it holds power within
    60 dB of its loudest kHz: a torch's pops, a bird's harmonics), each note named at its
    onset, and its first four seconds in detail below (partials and their decays); one
    colour bar in dB below the loudest spectral peak, shared by both."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from soundscape.output.fonts import families

    with matplotlib.rc_context({"font.family": list(families()), "axes.unicode_minus": False}):
        figure = Figure(figsize=(14, 10), dpi=100, layout="constrained")
        FigureCanvasAgg(figure)
        whole, detail = figure.subplots(2, 1)
        top = _peak_psd_db(audio, sample_rate)
        for axes, clip, nfft, high in ((whole, audio, 4096, _view_top_hz(audio, sample_rate)),
                                       (detail, audio[:4 * sample_rate], 8192, 4000)):
            with np.errstate(divide="ignore"):  # digital silence is -inf dB, drawn black
                *_, image = axes.specgram(clip, NFFT=nfft, Fs=sample_rate,
                                          noverlap=nfft * 7 // 8, cmap="magma",
                                          vmin=top - 90, vmax=top, scale="dB")
            axes.set_facecolor("black")  # where the audio is digital silence
            axes.set_ylim(0, min(high, sample_rate / 2))
            axes.set_xlabel("time (s)")
            axes.set_ylabel("frequency (Hz)")
        _name_notes(whole, notes)
        whole.set_title(title)
        detail.set_title("the first 4 s in detail")
        bar = figure.colorbar(image, ax=[whole, detail], shrink=0.6, pad=0.01)
        bar.set_label("level (dB below the loudest spectral peak)")
        bar.set_ticks(np.arange(top - 90, top + 1, 10.0).tolist(), labels=[
            f"{round(value)}" for value in np.arange(-90, 1, 10.0)])
    return figure


def _view_top_hz(audio: np.ndarray, sample_rate: int) -> float:
    """The whole view's top: ``_VIEW_HZ``, or the whole kHz over the highest kHz band that
    holds power within ``_VIEW_DB`` of the loudest band's (what the colour scale shows), if
    higher; at most the Nyquist rate."""
    power = np.abs(np.fft.rfft(audio)) ** 2
    bands = np.add.reduceat(power, np.arange(0, power.size, max(1, round(
        1000.0 * len(audio) / sample_rate))))
    if bands.max() <= 0:
        return _VIEW_HZ
    heard = np.flatnonzero(bands >= bands.max() * 10 ** (-_VIEW_DB / 10))
    return min(max(_VIEW_HZ, 1000.0 * (int(heard[-1]) + 1)), sample_rate / 2)


def _peak_psd_db(audio: np.ndarray, sample_rate: int) -> float:
    """The highest power spectral density of the audition in dB, the colour scale's top."""
    from matplotlib import mlab

    spectrum, _, _ = mlab.specgram(audio, NFFT=4096, Fs=sample_rate, noverlap=4096 * 7 // 8)
    return float(10 * np.log10(max(float(np.max(spectrum)), 1e-30)))


def _name_notes(axes, notes: list[DemoNote]) -> None:
    """Each note's name (律, sung word, or Hz) upright at its onset, at the top of the view."""
    for note in notes:
        axes.axvline(note.time, color="white", lw=0.4, alpha=0.35)
        axes.text(note.time, 0.99, _note_name(note), transform=axes.get_xaxis_transform(),
                  rotation=90, ha="right", va="top", fontsize=8, color="white")


def _bells_said(instrument: Instrument, bells: str) -> str:
    """The title's word on the bells: a set with the Zeng bells' measured tones says so
    (``--bells zeng``); ``--bells ideal`` on a set that has them says how to hear them."""
    if instrument.family != "bell" or "zeng" not in instrument.raw_params:
        return ""
    if bells == "zeng":
        return "; each tone off it as the Marquis Yi of Zeng bells measure (--bells zeng)"
    return "; bells on the tuning (--bells zeng: as the Zeng bells measure)"


def _note_name(note: DemoNote) -> str:
    if note.lyric is not None:
        return f"{note.lyric} {note.hz:.0f} Hz" if note.hz else note.lyric
    if note.pitch is not None and note.articulation in "AB":  # a bell of a set: its tone
        return f"{note.pitch} {note.articulation}"
    if note.pitch is not None:  # a 律 of the scale played (瑟, 笙 …) and what it sounds
        return f"{note.pitch} {note.hz:.0f} Hz" if note.hz else note.pitch
    if note.hz is not None:
        return f"{note.hz:.0f} Hz"
    return f"{note.articulation} v={note.velocity:.1f}"  # a stroke: how hard


@click.command("audition")
@click.argument("instruments", nargs=-1)
@click.option("-o", "--out", "out_dir", type=FilePath(file_okay=False, path_type=Path),
              default=Path("output/audition"), show_default=True, help="Folder for WAV and PNG.")
@click.option("--sample-rate", type=click.Choice([str(r) for r in SAMPLE_RATES]),
              default="48000", show_default=True, help="Samples per second (Hz).")
@click.option("--seed", type=WholeRange(min=0, max=SEED_MAX), default=0, show_default=True,
              help="Seed of the randomness in the notes: same seed, same samples.")
@click.option("--temperament", "--tuning", "tuning_name", type=click.Choice(["sanfen", "equal"]),
              default="sanfen", show_default=True,
              help="三分損益 or equal temperament (--tuning: the same).")
@click.option("--huangzhong", type=Huangzhong(), default="convention", show_default=True,
              help="黃鍾 in Hz (100-600) or a preset: convention (C4), zeng, qing.")
@click.option("--gong", type=click.Choice(LU), default="黃鍾", show_default=True,
              help="The 律 that is 宮 for the scales of 瑟, 管 and 笙.")
@click.option("--bells", type=click.Choice(BELL_SETS), default="ideal", show_default=True,
              help="Bells on the tuning, or each tone off it as the Marquis Yi of Zeng "
                   "bells measure (Braun 2003).")
def command(instruments: tuple[str, ...], out_dir: Path, sample_rate: str, seed: int,
            tuning_name: str, huangzhong: str, gong: str, bells: str) -> None:
    """Write each INSTRUMENT's audition to OUT/NAME.wav with a spectrogram OUT/NAME.png
    (all bundled instruments when none is named)."""
    rate = int(sample_rate)
    tuning = tuning_named(tuning_name, huangzhong)
    click.echo(f"data: instruments {bundled_dir('instruments')}", err=True)
    chosen = [load_instrument(ident) for ident in instruments or list_instruments()]
    for instrument in chosen:  # every id checked before anything is written
        notes = demo_notes(instrument, tuning=tuning, gong=gong)
        audio = render_demo(instrument, notes, sample_rate=rate, seed=seed,
                            tuning=tuning, bells=bells)
        wav = out_dir / f"{instrument.id}.wav"
        write_audio(wav, audio, rate, bits="24")
        write_spectrogram(audio, wav.with_suffix(".png"), sample_rate=rate, notes=notes,
                          title=f"{instrument.name} {instrument.roman}: audition, tuned "
                                f"{tuning.name}, 黃鍾 = {tuning.pitch('黃鍾').hz:.1f} Hz"
                                + _bells_said(instrument, bells))
        click.echo(f"{wav}  {len(notes)} notes, {audio.size / rate:.1f} s")
