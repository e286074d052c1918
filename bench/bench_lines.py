"""CPU of the places' lines (``sound.lines``) on a section's own notes, two versions A/B.

Record (once): ``.venv/bin/python bench/bench_lines.py record OPS.pkl -- render --from s18
--to s18 --seed 0 -o /tmp/x.wav`` runs the CLI with every call the render makes on its
``Lines`` (the buses' and the court tail's: each one's making, each filter it makes, each
``add`` with its note, each ``chunk``) pickled to ``OPS.pkl``.

Replay: ``.venv/bin/python bench/bench_lines.py replay OPS.pkl A/lines.py B/lines.py``
loads both files as modules and feeds them the same calls, interleaved (A then B, B then A),
on one BLAS thread. The filters are the recorded ones (made once, shared), so each version's
CPU (``time.process_time``) is its adds and chunks alone. Prints each one's CPU, the sha256
of its chunks, and the largest difference B − A in 24-bit steps of full scale. Run it a few
times and take each version's minimum.

Stats: ``.venv/bin/python bench/bench_lines.py stats OPS.pkl`` prints, per FFT size, the
chunks heard, the lines sounding in each, and how much of each line's FFT input its notes
occupy (the span from its first part's first frame to its last part's last).
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import time

import numpy as np
from replay import load, recorded, run_soundscape
from threadpoolctl import threadpool_limits


def record(ops: str, cli: list[str]) -> None:
    from soundscape.sound import lines

    out = open(ops, "wb")  # noqa: SIM115  # open until the CLI returns
    init, add, chunk, made = (lines.Lines.__init__, lines.Lines.add, lines.Lines.chunk,
                              lines.Lines._filter)
    ids: dict[int, int] = {}

    def recorded_init(self, spatialiser, listener, channels, make_filter=None,
                      chunk=lines.CHUNK):
        init(self, spatialiser, listener, channels, make_filter, chunk)
        ids[id(self)] = len(ids)
        pickle.dump(("init", ids[id(self)], channels, chunk), out, protocol=5)

    def recorded_filter(self, point, face):
        known = self._filters.get((point, face)) is not None
        found = made(self, point, face)
        if not known:
            kept = {name: getattr(found, name)
                    for name in ("start", "n_fft", "taps", "reach", "mix", "spectrum")}
            pickle.dump(("filter", ids[id(self)], (point, face), kept), out, protocol=5)
        return found

    def recorded_add(self, onset, mono, point, face, column):
        kept = np.array(mono)
        add(self, onset, mono, point, face, column)  # its place's filter recorded first
        pickle.dump(("add", ids[id(self)], onset, kept, (point, face), column), out,
                    protocol=5)

    def recorded_chunk(self):
        pickle.dump(("chunk", ids[id(self)]), out, protocol=5)
        return chunk(self)

    lines.Lines.__init__, lines.Lines.add, lines.Lines.chunk, lines.Lines._filter = (
        recorded_init, recorded_add, recorded_chunk, recorded_filter)
    run_soundscape(cli, out)


class _Version:
    """One version's lines, fed the recorded calls; its CPU and the digest of its chunks."""

    def __init__(self, module) -> None:
        self.module = module
        self.lines: dict[int, object] = {}
        self.filters: dict[int, dict] = {}
        self.cpu = 0.0
        self.digest = hashlib.sha256()
        self.outs: list[np.ndarray] = []

    def filter_of(self, index: int, key):
        kept = self.filters[index][key]
        made = self.module._Filter.__new__(self.module._Filter)
        for name, value in kept.items():
            setattr(made, name, value)
        return made

    def run(self, op, keep: bool) -> None:
        kind, index, *rest = op
        if kind == "init":
            channels, chunk = rest
            self.filters[index] = {}
            self.lines[index] = self.module.Lines(
                None, None, channels, make_filter=lambda point, face, i=index:
                self.filter_of(i, (point, face)), chunk=chunk)
        elif kind == "filter":
            key, kept = rest
            self.filters[index][key] = kept
        elif kind == "add":
            onset, mono, (point, face), column = rest
            start = time.process_time()
            self.lines[index].add(onset, mono, point, face, column)
            self.cpu += time.process_time() - start
        else:
            start = time.process_time()
            out = self.lines[index].chunk()
            self.cpu += time.process_time() - start
            self.digest.update(np.ascontiguousarray(out).tobytes())
            if keep:
                self.outs.append(out.copy())


def _as_rendered() -> None:
    """glibc's reuse of freed blocks and one arena, as the render has them."""
    from soundscape.malloc import one_arena, reuse_freed_memory

    reuse_freed_memory()
    one_arena()


def replay(ops: str, paths: list[str], rounds: int) -> None:
    _as_rendered()
    for turn in range(rounds):
        order = list(enumerate(paths)) if turn % 2 == 0 else list(enumerate(paths))[::-1]
        versions = {}
        for at, path in order:
            version = versions[at] = _Version(load(path, f"lines_{at}_{turn}"))
            with threadpool_limits(1, "blas"):
                for op in recorded(ops):
                    version.run(op, keep=len(paths) == 2)
        for at, path in enumerate(paths):
            print(f"round {turn} {path}: {versions[at].cpu:.3f} s CPU, "
                  f"sha256 {versions[at].digest.hexdigest()[:16]}")
        if len(paths) == 2:
            worst = max((float(np.abs(a - b).max(initial=0.0)) for a, b in
                         zip(versions[0].outs, versions[1].outs, strict=True)), default=0.0)
            print(f"  largest B - A: {worst:.3g} = {worst * 2 ** 23:.3f} 24-bit steps of full "
                  "scale (before the render's gain)")


def stats(ops: str) -> None:
    """Per FFT size: chunks, lines a chunk, and the share of a line's input its notes span."""
    from soundscape.sound import lines as module

    _as_rendered()
    version = _Version(module)
    spans: dict[int, list[tuple[int, int]]] = {}  # n_fft: (lines, occupied frames) a chunk
    occupied: dict[int, list[int]] = {}
    sounding = module.Lines._sounding

    def counted(self, at, size, following):
        found = sounding(self, at, size, following)
        for n_fft, members in found.items():  # each chunk heard (the look-ahead's too)
            for _, parts in members:
                lo = min(offset for offset, _ in parts)
                hi = max(offset + len(part) for offset, part in parts)
                occupied.setdefault(n_fft, []).append(hi - lo)
            spans.setdefault(n_fft, []).append(len(members))
        return found

    module.Lines._sounding = counted
    for op in recorded(ops):
        version.run(op, keep=False)
    for n_fft in sorted(spans):
        counts, used = np.array(spans[n_fft]), np.array(occupied[n_fft])
        print(f"n_fft {n_fft}: {len(counts)} chunk groups, {counts.sum()} line-chunks, "
              f"lines a chunk: mean {counts.mean():.2f}, histogram "
              f"{np.bincount(counts).tolist()}")
        for edge in (2048, 4096, 8192, 16384, 32768, n_fft):
            print(f"   span <= {edge:6d}: {np.mean(used <= edge) * 100:5.1f} % of line-chunks")
        print(f"   mean span {used.mean():.0f} frames, "
              f"{used.mean() / n_fft * 100:.1f} % of the FFT")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("ops")
    rec.add_argument("cli", nargs=argparse.REMAINDER)
    rep = sub.add_parser("replay")
    rep.add_argument("ops")
    rep.add_argument("paths", nargs="+")
    rep.add_argument("--rounds", type=int, default=2)
    st = sub.add_parser("stats")
    st.add_argument("ops")
    args = parser.parse_args()
    if args.command == "record":
        record(args.ops, [arg for arg in args.cli if arg != "--"])
    elif args.command == "replay":
        replay(args.ops, args.paths, args.rounds)
    else:
        stats(args.ops)


if __name__ == "__main__":
    main()
