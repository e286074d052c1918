"""The rite's singing measured: lines, glides, intonation, vibrato, breaths, each 終 anew.

Sequences the rite (seed 0), makes every singer's dry voice as the render does (the voice's
dry notes at their onsets: ``DryNotes`` keyed and seeded as ``render`` keys and seeds them,
so a note the old voice shared between 終 is shared here too), and measures it with Praat
(praat-parselmouth) as a field worker would measure a recording:

- overlapping notes per voice: successive sung notes of one singer that overlap (goal 0);
- breaths per minute of singing (the singers' ``inhale`` events over their sung minutes);
- pitch-transition times by interval: 10–90 % of the move between the medians of the f0
  before and after each note change of 3 semitones or more (smaller ones hide in the
  vibrato) that is voiced throughout (a change inside a voiceless consonant is not seen);
- intonation error: each note's median f0 over its held middle against its target, cents;
- vibrato: per cycle (peak to peak) rate and extent; their spread within a note and across
  notes;
- correlation between the same note of successive 終 of 鹿鳴, per singer (goal < 0.9).

Run (the whole rite; ``--cue luming`` for 鹿鳴 alone)::

    .venv/bin/python bench/sung_lines.py [--cue luming] [--rate 16000]

Works on the code of any commit that has ``SynthVoice`` (it binds the voice to the
performance when the voice can be bound), so before and after are measured alike.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

RATE = 16000
STEP_S = 0.005
_GAP_S = 0.25  # notes of one singer closer than this are one line (the old voice overlapped)


def performance(cue: str | None = None):
    from soundscape.sequence.planner import perform_from_file

    whole = perform_from_file(seed=0)
    if cue is None:
        return whole
    spans = [(m.start, m.end) for m in whole.music if getattr(m, "cue", None) == cue
             or getattr(m, "piece", None) == cue]
    start, end = min(a for a, _ in spans), max(b for _, b in spans)
    return whole.between(max(0.0, start - 5.0), end + 5.0)


def sung(perf):
    """Every singer's sung notes, in time order."""
    out: dict[str, list[tuple[int, object]]] = {}
    for index, event in enumerate(perf.events):
        if event.articulation == "sing" and perf.sources[event.source].instrument == "voice" \
                and event.pitch is not None:
            out.setdefault(event.source, []).append((index, event))
    return out


def lines_of(notes):
    """A singer's notes cut into lines where a gap of more than ``_GAP_S`` falls."""
    line = [notes[0]]
    for item in notes[1:]:
        if item[1].time - max(e.end for _, e in line) > _GAP_S:
            yield line
            line = []
        line.append(item)
    yield line


def overlaps(perf) -> dict[str, tuple[int, int, float]]:
    """Per singer: (overlapping successive notes, notes, median overlap in ms)."""
    found = {}
    for who, notes in sung(perf).items():
        over = [a.end - b.time for (_, a), (_, b) in itertools.pairwise(notes)
                if b.time < a.end - 1e-9]
        found[who] = (len(over), len(notes), 1000 * float(np.median(over)) if over else 0.0)
    return found


def breaths_per_minute(perf) -> float:
    sung_s = sum(e.duration for e in perf.events if e.articulation == "sing"
                 and perf.sources[e.source].instrument == "voice"
                 and e.source.startswith("gong."))
    breaths = sum(e.articulation == "inhale" for e in perf.events)
    return breaths / (sung_s / 60.0) if sung_s else 0.0


class DryLines:
    """The dry voice of each line, made as the render makes it."""

    def __init__(self, perf, rate: int) -> None:
        from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, stable_ints

        voice = SynthVoice()
        bind = getattr(voice, "bind", None)
        self.bound = bind is not None
        voice = bind(perf, 0) if bind is not None else voice
        self.dry = DryNotes(voice, rate, 0, ByteLru(256 << 20))
        self.perf, self.rate, self.stable_ints = perf, rate, stable_ints
        self.renderings = 0

    def __call__(self, line) -> np.ndarray:
        start = line[0][1].time
        end = max(e.end for _, e in line) + 0.5
        out = np.zeros(round((end - start) * self.rate) + 1)
        for index, event in line:
            source = self.perf.sources[event.source]
            key = self.dry.key(event, source)
            variant = self.stable_ints(0, index)[0] % self.dry.variants(source)
            if (key, variant) not in self.dry.cache:
                self.renderings += 1
            mono = self.dry(event, source, key, variant)
            at = round(event.time * self.rate) - round(start * self.rate)
            n = min(mono.size, out.size - at)
            out[at:at + n] += mono[:n]
        return out


def rite_line(perf, who: str = "gong.dashi", cue: str = "luming", count: int = 8,
              rate: int = RATE):
    """The first ``count`` notes ``who`` sings of ``cue`` in the rite (8: the first two lines
    of 鹿鳴), made as the render makes them (his breaths too, where the performance has them):
    (audio, labels, targets) with labels (s, lyric) and targets (start s, end s, Hz) from the
    first onset less 0.6 s."""
    from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, stable_ints

    chosen = [e for _, e in sung(perf)[who] if e.cue == cue][:count]
    start, end = chosen[0].time - 0.6, chosen[-1].end + 0.4
    voice = SynthVoice()
    bind = getattr(voice, "bind", None)
    dry = DryNotes(bind(perf, 0) if bind else voice, rate, 0, ByteLru(64 << 20))
    out = np.zeros(round((end - start) * rate))
    for index, event in enumerate(perf.events):
        if event.source != who or not start <= event.time < end - 0.4:
            continue
        source = perf.sources[event.source]
        key = dry.key(event, source)
        mono = dry(event, source, key, stable_ints(0, index)[0] % dry.variants(source))
        at = round((event.time - start) * rate)
        n = min(mono.size, out.size - at)
        out[at:at + n] += mono[:n]
    labels = [(e.time - start, e.lyric) for e in chosen]
    targets = [(e.time - start, e.end - start, e.pitch.hz) for e in chosen]
    return out, labels, targets


def f0_cents(audio: np.ndarray, rate: int) -> tuple[np.ndarray, np.ndarray]:
    """Praat's f0 (cross-correlation, 5 ms steps) as (times s, Hz; nan where unvoiced)."""
    import parselmouth
    from scipy import signal

    if rate > 8000 and rate % 8000 == 0:  # f0 under 600 Hz: 8 kHz is plenty, and faster
        audio, rate = signal.resample_poly(audio, 1, rate // 8000), 8000
    pitch = parselmouth.Sound(audio, rate).to_pitch_cc(time_step=STEP_S, pitch_floor=70.0,
                                                      pitch_ceiling=600.0)
    hz = pitch.selected_array["frequency"]
    hz[hz == 0] = np.nan
    return pitch.xs(), hz


def measure_line(line, audio: np.ndarray, rate: int, found: dict) -> None:
    """Add one line's transitions, intonation errors and vibrato cycles to ``found``."""
    times, hz = f0_cents(audio, rate)
    start = line[0][1].time
    events = [e for _, e in line]
    for k, event in enumerate(events):
        a, b = event.time - start, event.end - start
        cents = 1200 * np.log2(hz / event.pitch.hz)
        held = cents[(times >= a + 0.25) & (times < b - 0.1)]
        held = held[np.isfinite(held) & (np.abs(held) < 300)]
        if held.size >= 20:
            found["error"].append(float(np.median(held)))
        _vibrato(times, cents, a + 0.35, b - 0.1, found, event.source)
        if k == 0:
            continue
        before = events[k - 1]
        interval = 12 * np.log2(event.pitch.hz / before.pitch.hz)
        if abs(interval) < 2.5:
            continue
        ref = 1200 * np.log2(hz / before.pitch.hz)
        around = ref[(times >= a - 0.25) & (times < a + 0.25)]
        if not np.all(np.isfinite(around)):  # the change falls in a voiceless consonant
            found["voiceless"] = found.get("voiceless", 0) + 1
            continue
        pre = ref[(times >= a - 0.45) & (times < a - 0.15)]
        post = ref[(times >= a + 0.2) & (times < a + 0.5)]
        pre, post = pre[np.isfinite(pre)], post[np.isfinite(post)]
        if pre.size < 10 or post.size < 10:
            continue
        low, high = np.median(pre), np.median(post)
        window = (times >= a - 0.3) & (times < a + 0.4)
        share = (ref[window] - low) / (high - low)
        t = times[window]
        ok = np.isfinite(share)
        t, share = t[ok], share[ok]
        if t.size < 20:
            continue
        t10, t90 = t[np.argmax(share >= 0.1)], t[np.argmax(share >= 0.9)]
        between = (times >= t10) & (times <= t90)
        if t90 >= t10 and np.all(np.isfinite(ref[between])):  # not across a voiceless gap
            found["transition"].append((abs(interval), 1000 * (t90 - t10)))


def _vibrato(times, cents, a, b, found, who: str) -> None:
    """The vibrato cycles of one note's held part: per cycle (from one upward crossing of
    the detrended f0 to the next) its rate and its extent (half its peak to trough)."""
    inside = (times >= a) & (times < b)
    c = cents[inside]
    if c.size < 100 or not np.all(np.isfinite(c)):
        return
    c = c - np.convolve(c, np.ones(41) / 41, mode="same")  # the slow line taken off (0.2 s)
    c = c[20:-20]
    up = np.flatnonzero((c[:-1] < 0) & (c[1:] >= 0))
    if up.size < 3:
        return
    periods = np.diff(up) * STEP_S
    extents = np.array([np.ptp(c[i:j]) / 2 for i, j in itertools.pairwise(up)])
    keep = (periods > 1 / 9) & (periods < 1 / 3)
    if keep.sum() >= 2:
        found["vibrato"].append((1 / periods[keep], extents[keep], who))


def zhong_correlation(perf, make: DryLines) -> list[float]:
    """Per singer and note of 鹿鳴: the correlation of the note's dry voice in one 終 with the
    same note's in the next (each from its own onset, over the shorter): 1.0 is a replay."""
    found = []
    for notes in sung(perf).values():
        luming = [n for n in notes if n[1].cue == "luming"]
        per = len(luming) // 3
        for k in range(per):
            takes = [_dry_note(make, *luming[k + z * per]) for z in range(3)]
            for one, two in itertools.pairwise(takes):
                n = min(one.size, two.size)
                if n > 100:
                    found.append(float(np.corrcoef(one[:n], two[:n])[0, 1]))
    return found


def _dry_note(make: DryLines, index: int, event) -> np.ndarray:
    source = make.perf.sources[event.source]
    key = make.dry.key(event, source)
    variant = make.stable_ints(0, index)[0] % make.dry.variants(source)
    return np.asarray(make.dry(event, source, key, variant), dtype=float)


def report(cue: str | None, rate: int, every: int = 1) -> dict:
    started = time.perf_counter()
    perf = performance(cue)
    print(f"the rite's singing ({'the whole rite' if cue is None else cue}, seed 0):")
    for who, (count, notes, median) in overlaps(perf).items():
        print(f"  {who}: {count} of {notes} successive notes overlap"
              + (f" (median {median:.0f} ms)" if count else ""))
    print(f"  breaths per minute of singing: {breaths_per_minute(perf):.1f}")
    make = DryLines(perf, rate)
    found = {"error": [], "transition": [], "vibrato": []}
    lines = 0
    for notes in sung(perf).values():
        for k, line in enumerate(lines_of(notes)):
            if line[0][1].cue == "luming" or k % every == 0:  # 鹿鳴 whole, the rest sampled
                measure_line(line, make(line), rate, found)
                lines += 1
    errors = np.array(found["error"])
    print(f"  {lines} lines measured, {errors.size} notes ({make.renderings} renderings of "
          f"{sum(len(n) for n in sung(perf).values())} sung notes; voice bound to its lines: "
          f"{make.bound})")
    q = np.percentile(np.abs(errors), [50, 90])
    print(f"  intonation error: median |error| {q[0]:.1f} cents, 90th percentile {q[1]:.1f}; "
          f"mean {errors.mean():+.1f}, SD {errors.std():.1f} cents")
    print(f"  pitch transitions of 3 semitones or more in voicing ({found.get('voiceless', 0)} "
          "others fall in a voiceless consonant or a closure, where f0 is not seen):")
    for name, low, high in (("3-4", 2.5, 4.5), ("5-7", 4.5, 7.5), ("8 or more", 7.5, 99)):
        times = [ms for d, ms in found["transition"] if low <= d < high]
        if times:
            p = np.percentile(times, [10, 50, 90])
            print(f"    {name} semitones: {len(times)}, 10-90 % time "
                  f"median {p[1]:.0f} ms (10th-90th percentile {p[0]:.0f}-{p[2]:.0f} ms)")
    if found["vibrato"]:
        notes = found["vibrato"]
        within_rate = np.median([np.std(r) for r, _, _ in notes])
        within_depth = np.median([np.std(d) for _, d, _ in notes])
        rise = np.median([np.mean(r[-2:]) - np.mean(r[:2]) for r, _, _ in notes if r.size >= 4])
        singers = sorted({w for _, _, w in notes})
        across_rate = np.mean([_robust_sd(np.array([np.median(r) for r, _, w in notes
                                                    if w == who])) for who in singers])
        across_depth = np.mean([_robust_sd(np.array([np.median(d) for _, d, w in notes
                                                     if w == who])) for who in singers])
        print(f"  vibrato ({len(notes)} notes), per cycle: rate "
              f"{np.median([np.median(r) for r, _, _ in notes]):.2f} Hz, extent "
              f"±{np.median([np.median(d) for _, d, _ in notes]):.1f} cents; within a note "
              f"(median SD) {within_rate:.2f} Hz and {within_depth:.1f} cents, its last two "
              f"cycles {rise:+.2f} Hz on its first two; across one singer's notes (IQR/1.35, "
              f"mean of the singers) {across_rate:.2f} Hz and {across_depth:.1f} cents")
    correlations = zhong_correlation(perf, make)
    if correlations:
        c = np.array(correlations)
        print(f"  the same note of 鹿鳴 in successive 終 (dry, from its onset): correlation "
              f"median {np.median(c):.3f}, max {c.max():.3f}, {np.mean(c > 0.9):.0%} above 0.9 "
              f"({c.size} pairs; goal < 0.9)")
    print(f"  ({time.perf_counter() - started:.0f} s)")
    return found


def cost(cue: str | None, rate: int = 24000) -> None:
    """CPU seconds to make every singer's dry voice (breaths too) as the render does, at the
    voice bus's rate of a 48 kHz render (24 kHz)."""
    from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, stable_ints

    perf = performance(cue)
    voice = SynthVoice()
    bind = getattr(voice, "bind", None)
    dry = DryNotes(bind(perf, 0) if bind else voice, rate, 0, ByteLru(192 << 20))
    singers = {who for who in sung(perf)}
    started, seconds, count = time.process_time(), 0.0, 0
    for index, event in enumerate(perf.events):
        if event.source in singers:
            source = perf.sources[event.source]
            key = dry.key(event, source)
            mono = dry(event, source, key, stable_ints(0, index)[0] % dry.variants(source))
            seconds += mono.size / rate
            count += 1
    print(f"  making the singers' dry voice: {time.process_time() - started:.1f} s CPU for "
          f"{count} events ({seconds:.0f} s of dry voice at {rate} Hz)")


def _robust_sd(values: np.ndarray) -> float:
    q1, q3 = np.percentile(values, [25, 75])
    return float((q3 - q1) / 1.349)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cue", help="one music cue (e.g. luming); default the whole rite")
    parser.add_argument("--rate", type=int, default=RATE)
    parser.add_argument("--cost", action="store_true",
                        help="only time making the singers' dry voice (CPU seconds)")
    parser.add_argument("--zhong", action="store_true",
                        help="only the correlation of 鹿鳴's notes between its 終")
    parser.add_argument("--every", type=int, default=4,
                        help="measure every Nth line outside 鹿鳴 (default 4; 1: all)")
    args = parser.parse_args()
    if args.cost:
        cost(args.cue)
    elif args.zhong:
        perf = performance("luming")
        c = np.array(zhong_correlation(perf, DryLines(perf, args.rate)))
        print(f"  the same note of 鹿鳴 in successive 終 (dry, from its onset): correlation "
              f"median {np.median(c):.3f}, max {c.max():.3f}, {np.mean(c > 0.9):.0%} above 0.9 "
              f"({c.size} pairs; goal < 0.9)")
    else:
        report(args.cue, args.rate, args.every)


if __name__ == "__main__":
    main()
