"""The voice measured: harmonics, formants, vibrato, consonant noise, speed; spectrograms;
and the singing of the whole rite (``sung_lines.py``).

Run: ``.venv/bin/python bench/bench_voice.py [--out docs] [--reading middle-chinese]``.
Prints the figures docs/voice.md quotes and writes ``voice_luming.png`` (the first line
of 鹿鳴, 呦呦鹿鳴 食野之苹, sung by a tenor of the 工 an octave below the notation, as
``soundscape.music.register`` places it), ``voice_luming_line.png`` (the first two lines
大師 sings of 鹿鳴 in the rite, made as the render makes them, with Praat's f0 over the notes'
targets: ``--line-png`` names it) and ``voice_speech.png`` (「請射于公」 spoken, and called
across the courtyard) into ``--out``. Formants and shimmer are measured with Praat
(praat-parselmouth) against published tables of men's vowels: Peterson & Barney (1952) and
Hillenbrand et al. (1995). ``--singing`` also measures the singing of the whole rite
(``sung_lines.py``; ``--singing-cue luming`` for one cue).

``--rite`` also sequences the whole rite (seed 0) and reports its speech
(``speech_report``): syllables a second and Praat's f0 range of every phrase, phrases one
person says at once; and draws the 釋獲者's tally announcement and the 司射's 為政請射 …
大夫與大夫 as the rite has them, spectrogram over Praat's pitch track
(``voice_tally.png``, ``voice_request.png``; ``--suffix _before`` names them for a run
of older code: ``PYTHONPATH=<old checkout> python bench/bench_voice.py --rite …``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from soundscape.fileio import atomic_path
from soundscape.music.instruments import load_instrument
from soundscape.music.register import octave_shift, sung_pitch
from soundscape.music.repertoire import load_piece
from soundscape.music.tuning import default_tuning
from soundscape.output.fonts import families
from soundscape.sound import synth
from soundscape.sound.synth import params_of
from soundscape.sound.synth import voice as model
from soundscape.text.reading import read
from tests.sound.test_synth_voice import (
    band_share,
    f0_track,
    harmonic_levels_db,
    lpc_formants,
)

RATE = 22050

#: Men's vowels, F1-F3 (Hz): G. E. Peterson & H. L. Barney, JASA 24:175-184 (1952), Table II;
#: e and o (not in it): J. Hillenbrand et al., JASA 97(5):3099-3111 (1995), Table V.
MALE_VOWELS = {
    "i": (270, 2290, 3010, "P&B"), "ɪ": (390, 1990, 2550, "P&B"), "ɛ": (530, 1840, 2480, "P&B"),
    "æ": (660, 1720, 2410, "P&B"), "ɑ": (730, 1090, 2440, "P&B"), "ɔ": (570, 840, 2410, "P&B"),
    "ʊ": (440, 1020, 2240, "P&B"), "u": (300, 870, 2240, "P&B"), "ʌ": (640, 1190, 2390, "P&B"),
    "e": (476, 2089, 2691, "Hillenbrand"), "o": (497, 910, 2459, "Hillenbrand"),
}


def note(lyric, hz, *, duration=1.0, articulation="sing", performer=None, seed=0, rate=RATE):
    return synth.render_note(load_instrument("voice"), hz=hz, velocity=0.8, duration=duration,
                             articulation=articulation, sample_rate=rate,
                             rng=np.random.default_rng(seed), lyric=lyric, performer=performer)


def sung_line(reading: str, characters: int = 8) -> tuple[np.ndarray, list[tuple[float, str]]]:
    """The first ``characters`` notes of 鹿鳴, one beat each (the line end two), mixed."""
    piece, tuning = load_piece("luming"), default_tuning()
    notes = piece.notes[:characters]
    pitches = [tuning.pitch(n.name) for n in piece.notes]
    shift = octave_shift(pitches, "tenor")
    beat = 60.0 / piece.tempo_bpm
    syllables = read("".join(n.lyric for n in notes), reading)
    out, labels, t = np.zeros(int((characters + 3) * beat * RATE)), [], 0.0
    for i, (n, syl) in enumerate(zip(notes, syllables, strict=True)):
        hz = sung_pitch(tuning.pitch(n.name), "tenor", shift=shift).hz
        audio = note(syl.lyric, hz, duration=n.beats * beat * 0.95, performer="gong.1", seed=i)
        start = int(t * RATE)
        out[start:start + audio.size] += audio[:out.size - start]
        labels.append((t, f"{n.lyric} [{syl.ipa}]"))
        t += n.beats * beat
    return out[:int((t + 0.3) * RATE)], labels


def spoken(reading: str) -> tuple[np.ndarray, list[tuple[float, str]]]:
    """「請射于公」 spoken, a pause, then called, each as long as its syllables take
    (``text.prosody``)."""
    from soundscape.text import prosody
    from soundscape.text.reading import checked, phrase_contours

    syllables = read("請射于公", reading)
    lyric = " | ".join(f"{s.lyric} {''.join(map(str, c))}"
                       for s, c in zip(syllables, phrase_contours(syllables), strict=True))
    stops = [checked(s) for s in syllables]
    said = note(lyric, 120.0, duration=prosody.phrase_seconds(stops, "speak"),
                articulation="speak", performer="binzhe")
    called = note(lyric, 120.0, duration=prosody.phrase_seconds(stops, "call"),
                  articulation="call", performer="binzhe")
    gap = np.zeros(int(0.4 * RATE))
    bounds = model.speech_slots(model.syllables(params_of(load_instrument("voice")), lyric),
                                prosody.phrase_seconds(stops, "speak"), "speak")
    labels = [(t, f"{s.character} [{s.ipa}]") for t, s in zip(bounds, syllables, strict=False)]
    labels.append((said.size / RATE + 0.4, "called"))
    return np.concatenate([said, gap, called]), labels


def strongest_peak_share(audio: np.ndarray, size: int = 4096) -> float:
    """Median over sounding frames of the energy share of the strongest spectral peak."""
    shares = []
    for start in range(0, audio.size - size, size):
        frame = audio[start:start + size]
        if np.sqrt(np.mean(frame ** 2)) < 1e-3:
            continue
        power = np.abs(np.fft.rfft(frame * np.hanning(size))) ** 2
        k = int(np.argmax(power))
        shares.append(power[max(0, k - 3):k + 4].sum() / power.sum())
    return float(np.median(shares))


def spectrogram(audio: np.ndarray, labels, title: str, path: Path) -> None:
    plt.rcParams["font.family"] = families()
    fig, ax = plt.subplots(figsize=(12, 4.5), dpi=100)
    ax.specgram(audio + 1e-9, NFFT=1024, Fs=RATE, noverlap=768, cmap="magma", vmin=-120)
    ax.set_ylim(0, 8000)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("frequency (Hz)")
    ax.set_title(title)
    for t, text in labels:
        ax.axvline(t, color="white", lw=0.5, alpha=0.6)
        ax.text(t + 0.02, 7600, text, color="white", fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def praat_vowels(performer: str = "gong.dashi") -> list[tuple[str, list[float], tuple, float]]:
    """Sustained sung vowels on 110 Hz measured with Praat: (vowel, F1-F3 by Burg, the
    published men's values, local shimmer %)."""
    import parselmouth
    from parselmouth.praat import call

    found = []
    for vowel, published in MALE_VOWELS.items():
        audio = note(vowel, 110.0, duration=2.0, performer=performer)[int(0.3 * RATE):
                                                                      int(1.9 * RATE)]
        sound = parselmouth.Sound(audio, RATE)
        formant = sound.to_formant_burg(max_number_of_formants=5, maximum_formant=5000)
        times = np.linspace(0.2, 1.4, 25)
        values = [float(np.nanmedian([formant.get_value_at_time(i, t) for t in times]))
                  for i in (1, 2, 3)]
        points = call(sound, "To PointProcess (periodic, cc)", 75, 500)
        shimmer = call([sound, points], "Get shimmer (local)", 0, 0, 0.0001, 0.02, 1.3, 1.6)
        found.append((vowel, values, published, 100 * shimmer))
    return found


def measure() -> None:
    params = params_of(load_instrument("voice"))
    print("men's vowels sung on 110 Hz, Praat (Burg) F1-F3 against the published table, "
          "and local shimmer (normal < 3.81 %):")
    for vowel, values, published, shimmer in praat_vowels():
        off = [100 * (v / p - 1) for v, p in zip(values, published[:3], strict=True)]
        print(f"  [{vowel}] {[round(v) for v in values]} against {list(published[:3])} "
              f"({published[3]}): {', '.join(f'{o:+.0f}' for o in off)} %; shimmer "
              f"{shimmer:.1f} %")
    print("harmonics, sung, dB against the fundamental (H2 H3 H4):")
    for vowel, hz in (("i", 262.0), ("a", 262.0), ("a", 131.0), ("u", 196.0)):
        seg = note(vowel, hz)[int(0.3 * RATE):int(0.8 * RATE)]
        levels = harmonic_levels_db(seg, RATE, hz)
        spec = np.abs(np.fft.rfft(seg * np.hanning(seg.size))) ** 2
        freqs = np.fft.rfftfreq(seg.size, 1 / RATE)
        outside = 1 - spec[(freqs > 0.7 * hz) & (freqs < 1.3 * hz)].sum() / spec.sum()
        print(f"  [{vowel}] {hz:5.0f} Hz: {np.round(levels[1:], 1)}; "
              f"energy outside the f0 peak {100 * outside:.0f} %")
    print("formants of sustained vowels at 110 Hz, LPC (F1 F2 F3, % off the table):")
    for vowel in ("a", "e", "i", "o", "u", "ɛ", "ɑ", "ə", "ɐ", "y", "ɨ"):
        found = lpc_formants(note(vowel, 110.0, rate=16000)[6400:14400], 16000)
        table = [row[0] for row in params["vowels"][vowel][:3]]
        off = [f"{100 * (f / t - 1):+.0f}" for f, t in zip(found, table, strict=False)]
        print(f"  [{vowel}] {[round(f) for f in found]} against {table}: {off}")
    print("fricatives, share of the noise (above 500 Hz) in the band:")
    for onset, low, high in (("s", 4000, 8000), ("ɕ", 2500, 5000), ("ʃ", 2500, 5000),
                             ("x", 700, 3000), ("f", 1500, 7500)):
        noise = note(f"{onset} a", 131.0)[int(0.01 * RATE):int(0.09 * RATE)]
        print(f"  [{onset}] {low}-{high} Hz: {100 * band_share(noise, RATE, low, high):.0f} %")
    print("vibrato (autocorrelation f0 track, 2.5 s note on 220 Hz):")
    for performer in ("gong.1", "gong.2", "gong.3"):
        singer = model.traits(params, performer)
        track = f0_track(note("a", 220.0, duration=2.5, performer=performer, rate=16000), 16000)
        cents = 1200 * np.log2(np.abs(track) / 220.0)
        steady = cents[int((singer.vibrato_delay_s + 0.3) / 0.005):int(2.3 / 0.005)]
        steady = steady[np.isfinite(steady)]
        spectrum = np.abs(np.fft.rfft((steady - steady.mean()) * np.hanning(steady.size), 1 << 14))
        rate = np.fft.rfftfreq(1 << 14, 0.005)[np.argmax(spectrum)]
        print(f"  {performer}: rate {rate:.2f} Hz (trait {singer.vibrato_hz:.2f}), depth "
              f"±{np.sqrt(2) * np.std(steady):.1f} cents (trait ±{singer.vibrato_cents:.1f}), "
              f"tract ×{singer.tract_scale:.3f}")
    voice = load_instrument("voice")
    start = time.perf_counter()
    for i in range(20):
        synth.render_note(voice, hz=196.0, velocity=0.8, duration=1.0, articulation="sing",
                          sample_rate=48000, rng=np.random.default_rng(i), lyric="m j ɐ ŋ")
    print(f"speed: {20 / (time.perf_counter() - start):.1f} one-second sung notes a second "
          "at 48 kHz")


def line_picture(audio: np.ndarray, labels, targets, title: str, path: Path,
                 rate: int) -> None:
    """Spectrogram (0-5 kHz) with Praat's f0 track (cyan) over the notes' targets (white)."""
    from sung_lines import f0_cents

    plt.rcParams["font.family"] = families()
    fig, (ax, pitch) = plt.subplots(2, 1, figsize=(12, 7), dpi=100, sharex=True,
                                    gridspec_kw={"height_ratios": [3, 2]})
    ax.specgram(audio + 1e-9, NFFT=1024, Fs=rate, noverlap=896, cmap="magma", vmin=-130)
    ax.set_ylim(0, 5000)
    ax.set_ylabel("frequency (Hz)")
    ax.set_title(title)
    for t, text in labels:
        ax.axvline(t, color="white", lw=0.5, alpha=0.6)
        ax.text(t + 0.03, 4700, text, color="white", fontsize=10)
    times, hz = f0_cents(audio, rate)
    for start, end, target in targets:
        pitch.plot([start, end], [target, target], color="0.6", lw=3, solid_capstyle="butt")
    pitch.plot(times, hz, ".", color="tab:blue", ms=2)
    pitch.set_yscale("log")
    low, high = min(t[2] for t in targets), max(t[2] for t in targets)
    pitch.set_ylim(low / 1.15, high * 1.15)
    pitch.set_ylabel("f0 (Hz, Praat) over the notes' targets")
    pitch.set_xlabel("time (s)")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


# -- the rite's speech ---------------------------------------------------------------------
def _phrases(performance):
    """Every phrase (speech or call) of the rite, with the person who says it."""
    return [(performance.sources[e.source].name, e) for e in performance.events
            if performance.sources[e.source].instrument == "voice"
            and e.articulation in ("speak", "call")]


def _render_event(event, rate: int = 16000) -> np.ndarray:
    """One event as the renderer makes it (its phones, pitch, length, performer)."""
    return synth.render_note(load_instrument("voice"), hz=event.pitch.hz,
                             velocity=event.velocity, duration=event.duration,
                             articulation=event.articulation, sample_rate=rate,
                             rng=np.random.default_rng(0), lyric=event.phones or event.lyric,
                             performer=event.source)


def praat_f0(audio: np.ndarray, rate: int, step: float = 0.01):
    """Praat's autocorrelation pitch (parselmouth): times (s) and Hz, NaN where unvoiced."""
    import parselmouth

    pitch = parselmouth.Sound(audio, rate).to_pitch(time_step=step, pitch_floor=60.0,
                                                    pitch_ceiling=500.0)
    hz = pitch.selected_array["frequency"]
    return pitch.xs(), np.where(hz > 0, hz, np.nan)


def speech_report(performance) -> dict:
    """Speech rate and f0 range per phrase, and phrases a person says at once (goal 0)."""
    phrases = _phrases(performance)
    overlaps = []
    by_person: dict[str, list] = {}
    for who, event in phrases:
        by_person.setdefault(who, []).append(event)
    for who, events in by_person.items():
        events.sort(key=lambda e: e.time)
        for i, a in enumerate(events):
            overlaps += [(who, a, b) for b in events[i + 1:] if b.time < a.end - 1e-9]
    rates: dict[str, list[float]] = {"speak": [], "call": []}
    ranges: dict[str, list[float]] = {"speak": [], "call": []}
    for _, event in phrases:
        syllables = sum(1 for c in event.lyric or "" if "\u4e00" <= c <= "\u9fff")
        if syllables < 2:   # a single 獲 or 諾 is a call on a degree, not a phrase
            continue
        rates[event.articulation].append(syllables / event.duration)
        _, hz = praat_f0(_render_event(event), 16000)
        semis = 12.0 * np.log2(hz[np.isfinite(hz)] / np.nanmedian(hz))
        ranges[event.articulation].append(float(np.percentile(semis, 95)
                                                - np.percentile(semis, 5)))
    print(f"speech of the whole rite ({len(phrases)} phrases and calls, "
          f"{sum(map(len, rates.values()))} of two syllables or more):")
    for how in ("speak", "call"):
        if rates[how]:
            r, f = np.array(rates[how]), np.array(ranges[how])
            print(f"  {how}: {r.size} phrases, {np.median(r):.2f} syllables/s (median; "
                  f"{r.min():.2f}-{r.max():.2f}); Praat f0 range per phrase (5-95 %) median "
                  f"{np.median(f):.1f} semitones ({f.min():.1f}-{f.max():.1f})")
    print(f"  phrases one person says at the same time: {len(overlaps)} pairs (goal 0)")
    for who, a, b in overlaps[:10]:
        print(f"    {who}: {a.lyric} at {a.time:.1f} s and {b.lyric} at {b.time:.1f} s")
    return {"rates": rates, "ranges": ranges, "overlaps": overlaps}


def _window(performance, person: str, words: str, seconds: float):
    """``person``'s events from the first that begins ``words`` (said as one phrase, or a
    call per character as older code did), for ``seconds``."""
    mine = sorted((e for who, e in _phrases(performance) if who == person),
                  key=lambda e: e.time)
    start = next(e.time for i, e in enumerate(mine)
                 if "".join(x.lyric or "" for x in mine[i:i + len(words)]).startswith(words))
    return [e for e in mine if start - 1e-9 <= e.time < start + seconds]


def phrase_picture(events, title: str, path: Path, rate: int = 22050) -> None:
    """Spectrogram (0-5 kHz) over Praat's pitch track of ``events`` mixed on their clock."""
    start = min(e.time for e in events)
    parts = [(e, _render_event(e, rate)) for e in events]
    length = max(round((e.time - start) * rate) + a.size for e, a in parts)
    mix = np.zeros(length)
    for e, audio in parts:
        at = round((e.time - start) * rate)
        mix[at:at + audio.size] += audio
    t, hz = praat_f0(mix, rate)
    plt.rcParams["font.family"] = families()
    fig, (top, low) = plt.subplots(2, 1, figsize=(12, 6), dpi=100, sharex=True,
                                   gridspec_kw={"height_ratios": [3, 2]})
    top.specgram(mix + 1e-9, NFFT=1024, Fs=rate, noverlap=896, cmap="magma", vmin=-120)
    top.set_ylim(0, 5000)
    top.set_ylabel("frequency (Hz)")
    top.set_title(title)
    low.plot(t, hz, ".", ms=3, color="tab:blue")
    low.set_yscale("log")
    low.set_ylim(70, 400)
    low.set_yticks([80, 100, 125, 160, 200, 250, 315])
    low.set_yticklabels(["80", "100", "125", "160", "200", "250", "315"])
    low.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    low.set_ylabel("f0, Praat (Hz)")
    low.set_xlabel("time (s)")
    low.grid(alpha=0.3)
    for e in events:
        for ax in (top, low):
            ax.axvline(e.time - start, color="white" if ax is top else "grey", lw=0.6)
        for at, text in _syllable_labels(e):
            top.text(e.time - start + at + 0.01, 4650, text, color="white", fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def _syllable_labels(event) -> list[tuple[float, str]]:
    """Each character at its syllable's start, where the voice lays syllables out by the
    prosody (``voice.speech_slots``); else the lyric at the event's start."""
    chars = [c for c in event.lyric or "" if not c.isspace()]
    if len(chars) < 2 or not hasattr(model, "speech_slots"):
        return [(0.0, event.lyric or "")]
    sylls = model.syllables(params_of(load_instrument("voice")), event.phones or event.lyric)
    bounds = model.speech_slots(sylls, event.duration, event.articulation)
    return list(zip(bounds[:-1], chars, strict=True))


def rite_speech(out: Path, suffix: str = "") -> None:
    """``speech_report`` of the whole rite (seed 0) and its two pictures."""
    from soundscape.sequence.planner import perform_from_file

    performance = perform_from_file(seed=0)
    speech_report(performance)
    shoot = next(r for r in performance.rounds if r.announcement)
    tally = _window(performance, "釋獲者", shoot.announcement, 4.0)
    phrase_picture(tally, f"the 釋獲者's announcement 「{shoot.announcement}」 (seed 0)",
                   out / f"voice_tally{suffix}.png")
    request = _window(performance, "司射", "為政請射", 5.0)
    phrase_picture(request, "the 司射: 「為政請射」 to the duke, 「大夫與大夫」 (one step)",
                   out / f"voice_request{suffix}.png")
    print(f"wrote {out / f'voice_tally{suffix}.png'} and {out / f'voice_request{suffix}.png'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--reading", default="middle-chinese")
    parser.add_argument("--line-png", default="voice_luming_line.png",
                        help="file name (in --out) of the rite's sung line and its f0")
    parser.add_argument("--singing", action="store_true",
                        help="also measure the singing of the whole rite (minutes)")
    parser.add_argument("--singing-cue", help="measure the singing of one music cue (luming)")
    parser.add_argument("--rite", action="store_true",
                        help="also the whole rite's speech and its pictures")
    parser.add_argument("--suffix", default="", help="appended to the rite pictures' names")
    parser.add_argument("--rite-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--speech-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rite or args.rite_only:
        rite_speech(args.out, args.suffix)
    if args.speech_only:
        speech, labels = spoken(args.reading)
        spectrogram(speech, labels, f"「請射于公」 spoken, then called (binzhe), {args.reading}",
                    args.out / "voice_speech.png")
    if args.rite_only or args.speech_only:
        return
    import sung_lines

    perf = sung_lines.performance("luming")
    audio, labels, targets = sung_lines.rite_line(perf)
    line_picture(audio, labels, targets, "鹿鳴 in the rite, 大師 (gong.dashi): its first two "
                 "lines, dry, as the render makes them; f0 by Praat", args.out / args.line_png,
                 sung_lines.RATE)
    print(f"wrote {args.out / args.line_png}")
    if args.singing or args.singing_cue:
        sung_lines.report(args.singing_cue, sung_lines.RATE)
    measure()
    line, labels = sung_line(args.reading)
    print(f"the sung line: median share of a frame's energy in its strongest peak "
          f"{100 * strongest_peak_share(line):.0f} % (4096-sample frames, ±3 bins)")
    spectrogram(line, labels, f"鹿鳴 呦呦鹿鳴 食野之苹, tenor (gong.1), reading {args.reading}",
                args.out / "voice_luming.png")
    speech, labels = spoken(args.reading)
    spectrogram(speech, labels, f"「請射于公」 spoken, then called (binzhe), {args.reading}",
                args.out / "voice_speech.png")
    print(f"wrote {args.out / 'voice_luming.png'} and {args.out / 'voice_speech.png'}")


if __name__ == "__main__":
    main()
