"""What a listener hears of the whole rite: silence, gaps, the ensemble, the voice, infrasound.

Sequences the rite (seed 0, or ``--seed``), renders it in stereo from the duke's seat (or reads a
WAV you rendered: ``--wav``), and prints

- the share of digital-zero samples (goal 0 %) and of 50 ms frames whose RMS is
  under −60 dBFS (goal < 2 %);
- the longest span of the rite in which no sound is sounding (goal < 20 s);
- the ensemble's onset spread: the standard deviation of the onsets of the players
  of one note (singers and 瑟 of 鹿鳴, the goal: tens of milliseconds, none closer
  than 1 ms);
- the energy below 20 Hz against the whole mix's (goal ≤ −40 dB);
- the singers: overlapping notes per voice (goal 0) and breaths per minute of singing, by
  ``sung_lines.py`` (it also measures glides, intonation, vibrato and the 終 with Praat);
- the voice: harmonics, formants, frication and vibrato, by ``bench_voice.py``, and the
  rite's speech: syllables a second and Praat's f0 range per phrase, and phrases one
  person says at once (goal 0);
- the one-shots: per class the highest correlation of two strokes' dry notes, the share
  of pairs above 0.9 and the highest of two in a row of one player (``stroke_likeness``;
  the 建鼓 of 貍首 in full: goal, any two under 0.9);
- the court: EDT, T20, C80, D50 and the gate↔hall echo period from the singers' place to
  the duke's seat, the middle of the court and the gate (``court_figures``), per hypothesis;
- with ``--balance`` (three more renders: the bed, the speech and the rest, apart): the
  autocorrelation peak (lags 1-300 s, waveform and envelope) of the bed and of the rest
  over the longest stretch without music (goal < 0.05), every spoken phrase's level over
  the bed's in the speech band (median, 10th percentile, count under 10 dB; goal: none)
  and its Speech Intelligibility Index against the bed (ANSI S3.5 octave bands), and each
  music cue's loudness over the bed's (goal ≥ 20 LU) and its lowest margin in its own
  octaves; the parts are rendered at a fixed gain, unlimited;

and draws a spectrogram of one minute between two pieces (``--png``)::

    .venv/bin/python bench/bench_realism.py                     # render, then measure
    .venv/bin/python bench/bench_realism.py --wav output/dashe.wav
    .venv/bin/python bench/bench_realism.py --seconds 900       # the first 15 minutes
    .venv/bin/python bench/bench_realism.py --balance --no-voice --seed 1   # another draw

A benchmark, not a test: the whole rite takes minutes to render.
"""

from __future__ import annotations

import argparse
import itertools
import json
import runpy
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy import signal

FRAME_S = 0.05
QUIET_DBFS = -60.0


def _performance(seed: int = 0):
    from soundscape.sequence.planner import perform_from_file

    return perform_from_file(seed=seed)


#: The parts rendered apart are written at this fixed gain, as floats: a part normalised
#: on its own is limited where it peaks (the bed's nearest bird calls), and the limiter's
#: gain is in no report, so its levels there would read low.
PART_GAIN_DB = -20.0


def _render(performance, path: Path, gain_db: float | None = None) -> None:
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import Listener
    from soundscape.sound.render import render_audio

    seat = load_site().listener("gong_wei")
    fixed = {} if gain_db is None else {"gain_db": gain_db, "bits": "float"}
    render_audio(performance, path, listener=Listener(seat.position, seat.facing),
                 layout="stereo", seed=performance.info.seed, **fixed)


def longest_silence(performance, *, bed: bool = True) -> tuple[float, float]:
    """The longest span with no event sounding (nominal lengths), and where it starts;
    ``bed=False`` leaves the place's bed out (what the rite's people and music make)."""
    spans = sorted((e.time, e.end) for e in performance.events
                   if bed or performance.sources[e.source].group != "place")
    longest, at, reach = 0.0, 0.0, 0.0
    for start, end in spans:
        if start - reach > longest:
            longest, at = start - reach, reach
        reach = max(reach, end)
    return longest, at


def onset_spread(performance, cue: str = "luming") -> tuple[float, float]:
    """Median standard deviation (ms) of the onsets of one note's players, and the
    smallest distance (ms) between two players' onsets of one note."""
    notes = {}
    for event in performance.events:
        if event.cue == cue and event.pitch is not None and event.source.startswith("gong."):
            key = (event.lyric, round(event.time, 0), event.pitch.lu)
            notes.setdefault(key, []).append(event.time)
    groups = [np.array(sorted(t)) for t in notes.values() if len(t) > 1]
    spread = float(np.median([g.std() for g in groups])) * 1000
    closest = min(float(np.min(np.diff(g))) for g in groups) * 1000
    return spread, closest


#: One-shot classes measured for likeness: (instrument, articulation) → the band (Hz) a
#: listener tells its strokes apart in (the modes or noise band the model sounds in).
ONE_SHOT_BANDS = {
    ("jiangu", "strike"): (30.0, 300.0), ("pi", "strike"): (100.0, 1500.0),
    ("bianzhong", "A"): (100.0, 8000.0), ("bianzhong", "side"): (100.0, 8000.0),
    ("bo", "A"): (100.0, 8000.0), ("bianqing", "strike"): (100.0, 8000.0),
    ("bow", "release"): (40.0, 6000.0), ("tally", "lay"): (1000.0, 10000.0),
    ("tally", "count"): (1000.0, 10000.0), ("target", "cloth"): (40.0, 1500.0),
    ("target", "leather"): (40.0, 2500.0), ("footstep", "earth"): (50.0, 6000.0),
}
#: The most strokes of one class compared (every two of them): the first ones of the rite.
MOST_STROKES = 400


def stroke_likeness(performance, *, cue: str | None = None, seed: int = 0, sample_rate: int = 24000,
                    most: int | None = MOST_STROKES
                    ) -> dict[tuple[str, str], tuple[int, int, float, float, float]]:
    """Per one-shot class (``ONE_SHOT_BANDS``): how many strokes, how many different
    renderings among them, the highest correlation of any two of their dry notes as the
    render makes them (in the class's band, onsets aligned, the first second), the
    share of pairs above 0.9, and the highest of two successive strokes of one player;
    ``cue`` keeps one cue's, ``most`` the first so many (None: all)."""
    from soundscape.sound.likeness import dry_strokes, pair_correlations

    out = {}
    for (instrument, articulation), band in ONE_SHOT_BANDS.items():
        indexes = [i for i, e in enumerate(performance.events)
                   if performance.sources[e.source].instrument == instrument
                   and e.articulation == articulation and (cue is None or e.cue == cue)]
        indexes = indexes[:most]
        if len(indexes) < 2:
            continue
        notes = dry_strokes(performance, indexes, seed=seed, sample_rate=sample_rate)
        matrix = pair_correlations(notes, band=band, sample_rate=sample_rate)
        pairs = matrix[np.triu_indices(len(notes), 1)]
        renderings = len({hash(n.tobytes()) for n in notes})
        players = [performance.events[i].source for i in indexes]
        successive = [matrix[a, b] for a, b in _successive(players)]
        out[(instrument, articulation)] = (len(notes), renderings, float(pairs.max()),
                                           float(np.mean(pairs > 0.9)),
                                           max(successive, default=float("nan")))
    return out


def _successive(players: list[str]) -> list[tuple[int, int]]:
    """Index pairs of each player's successive strokes (the list is in time order)."""
    last: dict[str, int] = {}
    out = []
    for k, who in enumerate(players):
        if who in last:
            out.append((last[who], k))
        last[who] = k
    return out


def bell_brightness(performance, *, seed: int = 0, sample_rate: int = 48000,
                    above_hz: float = 2000.0) -> dict[str, tuple[int, float]]:
    """Per bell and stone instrument: how many strokes, and the median share (dB) of a
    stroke's energy above ``above_hz``."""
    from soundscape.sound.likeness import dry_strokes, share_above

    out = {}
    for instrument in ("bianzhong", "bo", "bianqing"):
        indexes = [i for i, e in enumerate(performance.events)
                   if performance.sources[e.source].instrument == instrument][:MOST_STROKES]
        if not indexes:
            continue
        notes = dry_strokes(performance, indexes, seed=seed, sample_rate=sample_rate)
        shares = [share_above(n, hz=above_hz, sample_rate=sample_rate) for n in notes]
        out[instrument] = (len(notes), 10 * float(np.log10(max(np.median(shares), 1e-30))))
    return out


def singing(performance) -> str:
    """The singers' lines: overlapping notes per voice and breaths per minute of singing."""
    lines = runpy.run_path(str(Path(__file__).with_name("sung_lines.py")))
    found = lines["overlaps"](performance)
    overlapping = ", ".join(f"{who} {count} of {notes}" for who, (count, notes, _) in
                            sorted(found.items()))
    return (f"singers: overlapping successive notes {overlapping}  (goal 0); "
            f"{lines['breaths_per_minute'](performance):.1f} breaths per minute of singing")


def audio_figures(path: Path) -> dict[str, float]:
    """Zero samples, quiet frames and infrasound, read block by block."""
    info = sf.info(str(path))
    rate = info.samplerate
    frame = round(FRAME_S * rate)
    zeros = samples = quiet = frames = 0
    low = total = 0.0
    for block in sf.blocks(str(path), blocksize=frame * 200, dtype="float64", always_2d=True):
        zeros += int(np.count_nonzero(block == 0.0))
        samples += block.size
        whole = len(block) // frame * frame
        if whole:
            rms = np.sqrt(np.mean(block[:whole].reshape(-1, frame, block.shape[1]) ** 2,
                                  axis=(1, 2)))
            quiet += int(np.count_nonzero(rms < 10 ** (QUIET_DBFS / 20)))
            frames += len(rms)
        if len(block) >= 2 ** 15:  # power per band: Welch, 0.7 Hz bins, Hann (low leakage)
            f, power = signal.welch(block, fs=rate, nperseg=2 ** 16 if len(block) >= 2 ** 16
                                    else 2 ** 15, axis=0)
            low += float(np.sum(power[f < 20.0])) * len(block)
            total += float(np.sum(power)) * len(block)
    return {"zero_share": zeros / samples, "quiet_share": quiet / max(frames, 1),
            "below_20hz_db": 10 * np.log10(max(low, 1e-30) / max(total, 1e-30)),
            "seconds": info.frames / rate}


def quiet_minute(performance) -> float:
    """The start of the first minute with no music in it (between two pieces)."""
    music = sorted((m.start, m.end) for m in performance.music)
    for (_, end), (start, _) in itertools.pairwise(music):
        if start - end >= 60.0:
            return end
    return 0.0


def draw_minute(path: Path, start: float, png: Path, title: str | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rate = sf.info(str(path)).samplerate
    audio, _ = sf.read(str(path), start=round(start * rate), frames=60 * rate, always_2d=True)
    mono = audio.mean(axis=1)
    f, t, power = signal.spectrogram(mono, fs=rate, nperseg=2048, noverlap=1536)
    figure, ax = plt.subplots(figsize=(12, 4.5))
    mesh = ax.pcolormesh(t, f, 10 * np.log10(power + 1e-14), shading="auto", vmin=-140,
                         vmax=-40, cmap="magma")
    ax.set_ylim(0, min(20000, rate / 2))  # the bed reaches 16 kHz
    ax.set_xlabel(f"seconds from {start / 60:.1f} min (no music: the rite's actions and "
                  "the place)")
    ax.set_ylabel("Hz")
    if title:
        ax.set_title(title)
    figure.colorbar(mesh, label="dB (power)")
    figure.tight_layout()
    figure.savefig(png, dpi=100)


#: The places the court's figures are heard at, from the singers' place on the hall.
COURT_PLACES = ("gong_wei", "zhongting", "men")


def court_figures(court: str = "bare") -> dict[str, dict[str, float]]:
    """EDT, T20, C80, D50 and the gate↔hall echo period (ISO 3382-1, 500 Hz–1 kHz) of the
    court's impulse responses from the 工's mats (gong_xi) to the duke's seat, the middle of
    the court and the gate, as ``soundscape impulse`` makes them (W of first-order
    ambisonics: an omnidirectional microphone)."""
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import Listener
    from soundscape.sound import iso3382
    from soundscape.sound.court import load_court, source_point
    from soundscape.sound.impulse import impulse_response
    from soundscape.sound.propagation import Surroundings

    site = load_site()
    surroundings = Surroundings(court=load_court(site, court))
    out = {}
    for place in COURT_PLACES:
        seat = site.listener(place)
        ir = impulse_response(source_point(site, "gong_xi"), Listener(seat.position, seat.facing),
                              surroundings=surroundings, layout="foa", sample_rate=48000)
        out[place] = iso3382.measure(ir[:, 0], 48000).as_dict()
    return out


# -- the place's bed and the balance (issue 25, items 2 and 3) --------------------------
#: The band of speech compared with the bed's (Hz): where its energy and cues lie.
SPEECH_BAND = (250.0, 4000.0)
#: Music lasts at least this long to be measured against the bed (s).
MUSIC_MIN_S = 5.0


def acf_peak(x: np.ndarray, rate: float, *, low_s: float = 1.0,
             high_s: float = 300.0) -> tuple[float, float]:
    """The largest |normalised autocorrelation| of ``x`` (mean removed; r(0) = 1) at lags
    ``low_s``…``high_s``, and its lag (s)."""
    x = np.asarray(x, dtype=np.float64) - np.mean(x)
    size = 1 << (2 * len(x) - 1).bit_length()
    spectrum = np.fft.rfft(x, size)
    r = np.fft.irfft(spectrum * np.conj(spectrum), size)[:len(x)]
    r /= r[0] if r[0] > 0 else 1.0
    low, high = round(low_s * rate), min(round(high_s * rate), len(x) - 1)
    k = int(np.argmax(np.abs(r[low:high + 1])))
    return float(abs(r[low + k])), (low + k) / rate


def bed_repetition(path: Path, start: float, seconds: float = 600.0) -> dict[str, tuple]:
    """How much ``seconds`` of a render from ``start`` repeats itself: the autocorrelation
    peak at lags of 1-300 s of its waveform (mono, at 8 kHz: the bed's energy lies there)
    and of its envelope (RMS in 50 ms frames); each (peak, lag s)."""
    from scipy.signal import resample_poly

    rate = sf.info(str(path)).samplerate
    audio, _ = sf.read(str(path), start=round(start * rate), frames=round(seconds * rate),
                       always_2d=True)
    mono = audio.mean(axis=1)
    frame = round(FRAME_S * rate)
    whole = len(mono) // frame * frame
    envelope = np.sqrt(np.mean(mono[:whole].reshape(-1, frame) ** 2, axis=1))
    return {"waveform": acf_peak(resample_poly(mono, 8000, rate), 8000.0),
            "envelope": acf_peak(envelope, 1.0 / FRAME_S)}


def longest_without_music(performance) -> tuple[float, float]:
    """The longest stretch of the rite with no music (start, end in s)."""
    music = sorted((m.start, m.end) for m in performance.music)
    edges = [0.0] + [t for span in music for t in span] + [performance.duration]
    gaps = [(edges[i], edges[i + 1]) for i in range(0, len(edges), 2)]
    return max(gaps, key=lambda g: g[1] - g[0])


def render_only(performance, path: Path, keep) -> None:
    """Render ``performance`` keeping only the events whose source's group ``keep`` takes
    (the bed alone, the speech alone …: same clock, at ``PART_GAIN_DB``, unlimited)."""
    import dataclasses

    events = tuple(e for e in performance.events if keep(performance.sources[e.source].group))
    _render(dataclasses.replace(performance, events=events), path, PART_GAIN_DB)
    limited = json.loads(path.with_name(path.name + ".loudness.json").read_text())["limiter_db"]
    if limited > 0:
        raise SystemExit(f"{path}: limited by {limited:.1f} dB at {PART_GAIN_DB} dB of gain: "
                         "its levels would read low; lower PART_GAIN_DB")


def _absolute(path: Path) -> float:
    """dB to add to a render's dBFS for dB SPL (1.0 = 94 dB SPL before its gain)."""
    report = json.loads(path.with_name(path.name + ".loudness.json").read_text())
    return 94.0 - float(report["gain_db"])


def _to_target(path: Path) -> float:
    """dB that would have put a part rendered at ``PART_GAIN_DB`` at −23 LUFS (a render's
    default): BS.1770's absolute gate (−70 LUFS) reads a file's scale, so a part is metered
    at the scale a normalised render has."""
    report = json.loads(path.with_name(path.name + ".loudness.json").read_text())
    return -23.0 - float(report["output_lufs"])


def _band_power(path: Path, spans: list[tuple[float, float]], band: tuple[float, float] | None
                ) -> list[float]:
    """Mean power (dB SPL) in ``band`` (None: unfiltered) over each span of a render."""
    info = sf.info(str(path))
    rate, offset = info.samplerate, _absolute(path)
    sos = None if band is None else signal.butter(4, band, btype="bandpass", fs=rate,
                                                  output="sos")
    out = []
    for start, end in spans:
        pad = round(0.5 * rate)  # the filter settles before the span
        first = max(0, round(start * rate) - pad)
        audio, _ = sf.read(str(path), start=first, stop=round(end * rate), always_2d=True)
        if sos is not None:
            audio = signal.sosfilt(sos, audio, axis=0)
        audio = audio[round(start * rate) - first:]
        power = float(np.mean(audio**2)) if audio.size else 0.0
        out.append(10 * np.log10(max(power, 1e-30)) + offset)
    return out


def _phrases(performance) -> tuple[list, list[tuple[float, float]]]:
    """The spoken phrases, and the span each is heard over at the listener (its flight)."""
    phrases = [e for e in performance.events
               if performance.sources[e.source].group == "speech"]
    return phrases, [(e.time + 0.05, e.end + 0.15) for e in phrases]


def speech_over_bed(performance, speech_wav: Path, bed_wav: Path,
                    band: tuple[float, float] = SPEECH_BAND) -> list[tuple[str, float]]:
    """Each spoken phrase's level over the bed's in the speech band, over the phrase's own
    span at the listener (dB; renders of the speech alone and of the bed alone)."""
    phrases, spans = _phrases(performance)
    speech, bed = _band_power(speech_wav, spans, band), _band_power(bed_wav, spans, band)
    return [(e.cue, s - b) for e, s, b in zip(phrases, speech, bed, strict=True)]


#: The octave-band procedure of the Speech Intelligibility Index (ANSI S3.5-1997, Table 4:
#: band importance of average speech): a band's audibility is its speech-to-noise ratio
#: mapped from -15…+15 dB to 0…1; the index weighs them (hearing thresholds and the
#: level's distortion left out: a listener with normal hearing at these levels).
SII_OCTAVES = {250.0: 0.0617, 500.0: 0.1671, 1000.0: 0.2373, 2000.0: 0.2648,
               4000.0: 0.2142, 8000.0: 0.0549}


def speech_sii(performance, speech_wav: Path, bed_wav: Path) -> list[tuple[str, float]]:
    """Each spoken phrase's Speech Intelligibility Index against the bed (``SII_OCTAVES``),
    over the phrase's span at the listener: what the single band's ratio leaves out (a
    cicada's 3.5-7.5 kHz song under a phrase masks its top octave, not its middle)."""
    phrases, spans = _phrases(performance)
    index = np.zeros(len(phrases))
    for centre, weight in SII_OCTAVES.items():
        band = (centre / np.sqrt(2.0), centre * np.sqrt(2.0))
        ratio = (np.array(_band_power(speech_wav, spans, band))
                 - np.array(_band_power(bed_wav, spans, band)))
        index += weight * np.clip((ratio + 15.0) / 30.0, 0.0, 1.0)
    return [(e.cue, float(i)) for e, i in zip(phrases, index, strict=True)]


def music_over_bed(performance, music_wav: Path, bed_wav: Path) -> dict[str, float]:
    """Each music cue's loudness over the bed's (LU, BS.1770 integrated over the cue)."""
    from soundscape.sound.loudness import LoudnessMeter

    out = {}
    for span in performance.music:
        if span.end - span.start < MUSIC_MIN_S:
            continue
        levels = []
        for path in (music_wav, bed_wav):
            rate = sf.info(str(path)).samplerate
            audio, _ = sf.read(str(path), start=round(span.start * rate),
                               stop=round(span.end * rate), always_2d=True)
            meter = LoudnessMeter(rate, np.ones(audio.shape[1]))
            lift = _to_target(path)  # metered as if normalised: its gates where they were
            meter.add(audio * 10 ** (lift / 20))
            levels.append(meter.integrated() - lift + _absolute(path) - 94.0)
        out[span.cue] = levels[0] - levels[1]
    return out


#: Octave centres (Hz) of the band-by-band reading of music over the bed.
OCTAVES = (125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)


def music_over_bed_octaves(performance, music_wav: Path, bed_wav: Path
                           ) -> dict[str, float]:
    """Each music cue's lowest margin over the bed (dB) in its own octaves, those within
    10 dB of its loudest: the ear hears a sound through the auditory filters where it
    stands over its masker (the power-spectrum model of masking), so a cicada's 4-8 kHz
    song beside a song of 250-1000 Hz covers neither (what one loudness figure sums)."""
    out = {}
    for span in performance.music:
        if span.end - span.start < MUSIC_MIN_S:
            continue
        music, bed = (np.array([_band_power(path, [(span.start, span.end)],
                                            (c / np.sqrt(2.0), c * np.sqrt(2.0)))[0]
                                for c in OCTAVES]) for path in (music_wav, bed_wav))
        own = music >= music.max() - 10.0
        out[span.cue] = float(np.min(music[own] - bed[own]))
    return out


def balance_figures(performance, folder: Path) -> dict:
    """Render the bed, the speech and the music (+ actions) apart and measure them."""
    bed, speech, music = (folder / f"{n}.wav" for n in ("bed", "speech", "music"))
    render_only(performance, bed, lambda g: g == "place")
    render_only(performance, speech, lambda g: g == "speech")
    render_only(performance, music, lambda g: g not in ("place", "speech"))
    quiet = longest_without_music(performance)
    return {"speech": speech_over_bed(performance, speech, bed),
            "sii": speech_sii(performance, speech, bed),
            "music": music_over_bed(performance, music, bed),
            "music_octaves": music_over_bed_octaves(performance, music, bed),
            "quiet": quiet,
            "repeat_bed": bed_repetition(bed, quiet[0], min(600.0, quiet[1] - quiet[0])),
            "repeat_rest": bed_repetition(music, quiet[0], min(600.0, quiet[1] - quiet[0]))}


def print_balance(figures: dict) -> None:
    diffs = np.array([d for _, d in figures["speech"]])
    start, end = figures["quiet"]
    for name in ("repeat_bed", "repeat_rest"):
        (wave, wave_lag), (env, env_lag) = (figures[name]["waveform"],
                                            figures[name]["envelope"])
        what = "the bed" if name == "repeat_bed" else "the rite's people (no bed)"
        print(f"longest stretch without music {start / 60:.1f}-{end / 60:.1f} min, {what}: "
              f"autocorrelation peak at 1-300 s: waveform {wave:.3f} at {wave_lag:.1f} s, "
              f"envelope {env:.3f} at {env_lag:.1f} s  (goal < 0.05)")
    if diffs.size:
        print(f"speech over the bed ({SPEECH_BAND[0]:.0f}-{SPEECH_BAND[1]:.0f} Hz): median "
              f"{np.median(diffs):.1f} dB, 10th percentile {np.percentile(diffs, 10):.1f} dB, "
              f"{int(np.sum(diffs < 10.0))} of {diffs.size} under 10 dB  (goal: none)")
    sii = np.array([i for _, i in figures["sii"]])
    if sii.size:
        print(f"speech intelligibility index over the bed (ANSI S3.5 octave bands): median "
              f"{np.median(sii):.2f}, lowest {sii.min():.2f}, {int(np.sum(sii < 0.75))} of "
              f"{sii.size} under 0.75 (good)")
    for cue, lu in figures["music"].items():
        print(f"music over the bed, {cue}: {lu:.1f} LU  (goal ≥ 20); in its own octaves "
              f"at least {figures['music_octaves'][cue]:+.1f} dB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wav", type=Path, help="measure this render (stereo, whole rite)")
    parser.add_argument("--seconds", type=float, help="only the first N seconds")
    parser.add_argument("--png", type=Path, help="spectrogram of a minute between pieces")
    parser.add_argument("--no-voice", action="store_true", help="skip bench_voice.py")
    parser.add_argument("--seed", type=int, default=0,
                        help="the rite's seed (sequencing and sound; default 0)")
    parser.add_argument("--balance", action="store_true",
                        help="also render the bed, the speech and the rest apart: the bed's "
                        "repetition, speech and music over the bed")
    args = parser.parse_args()
    whole = _performance(args.seed)
    spread, closest = onset_spread(whole)
    performance = whole.between(0.0, args.seconds) if args.seconds else whole
    gap, at = longest_silence(performance)
    people, people_at = longest_silence(performance, bed=False)
    with tempfile.TemporaryDirectory() as folder:
        wav = args.wav or Path(folder) / "rite.wav"
        if args.wav is None:
            _render(performance, wav)
        figures = audio_figures(wav)
        if args.png:
            draw_minute(wav, quiet_minute(performance), args.png)
        balance = balance_figures(performance, Path(folder)) if args.balance else None
    print(f"audio: {figures['seconds'] / 60:.1f} min, stereo, from the duke's seat")
    print(f"digital-zero samples: {100 * figures['zero_share']:.3f} %  (goal 0 %)")
    print(f"50 ms frames under {QUIET_DBFS:.0f} dBFS: {100 * figures['quiet_share']:.2f} %  "
          "(goal < 2 %)")
    print(f"longest span with no sound: {gap:.1f} s at {at / 60:.1f} min  (goal < 20 s); "
          f"without the place's bed: {people:.1f} s at {people_at / 60:.1f} min")
    print(f"鹿鳴 onset spread: median {spread:.1f} ms per note, closest two players "
          f"{closest:.2f} ms  (goal: tens of ms, ≥ 1 ms)")
    print(singing(whole))
    print(f"energy below 20 Hz: {figures['below_20hz_db']:.1f} dB of the total  (goal ≤ −40)")
    print("highest stroke-to-stroke correlation per one-shot class (dry notes as rendered, "
          "class band, first second; share of pairs above 0.9):")
    likeness = stroke_likeness(whole, seed=args.seed)
    for (instrument, articulation), (count, kinds, highest, share, row) in likeness.items():
        print(f"  {instrument} {articulation}: {count} strokes, {kinds} renderings, highest "
              f"{highest:.3f}, {100 * share:.1f} % of pairs above 0.9, two in a row of one "
              f"player at most {row:.3f}")
    lishou = stroke_likeness(whole, cue="lishou", most=None, seed=args.seed).get(
        ("jiangu", "strike"))
    if lishou:
        print(f"  建鼓 of 貍首: {lishou[0]} strokes, {lishou[1]} renderings, highest "
              f"{lishou[2]:.3f}, {100 * lishou[3]:.1f} % of pairs above 0.9, two in a row of "
              f"one drum at most {lishou[4]:.3f}  (goal: highest < 0.9)")
    print("energy above 2 kHz of bell and stone strokes (median of the strokes):")
    for instrument, (count, level) in bell_brightness(whole, seed=args.seed).items():
        print(f"  {instrument}: {count} strokes, {level:.1f} dB of the stroke's energy")
    for court in ("bare", "damped"):
        for place, f in court_figures(court).items():
            print(f"court {court}, gong_xi → {place}: EDT {f['edt']:.2f} s, T20 {f['t20']:.2f} s, "
                  f"C80 {f['c80']:+.1f} dB, D50 {f['d50']:.2f}, echo {f['echo']:.2f} s  "
                  "(measured courtyard theatres: EDT 0.6–0.96 s, T30 ≈ 0.7 s)")
    if balance is not None:
        print_balance(balance)
    if not args.no_voice:
        print("the voice (bench_voice.py):")
        voice = runpy.run_path(str(Path(__file__).with_name("bench_voice.py")))
        voice["measure"]()
        voice["speech_report"](whole)  # speech rate, f0 range per phrase, overlaps


if __name__ == "__main__":
    main()
