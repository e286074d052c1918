"""CPU of the court's late tail (``sound.tail``) on a section's own sends, two versions A/B.

Record (once): ``.venv/bin/python bench/bench_tail.py record OPS.pkl -- render --from s18
--to s18 -o /tmp/x.wav`` runs the CLI with every call the render makes on its ``Tail`` (its
construction, each ``send`` with its note, each ``take``) pickled to ``OPS.pkl`` (s18: 1.1 GB).

Replay: ``.venv/bin/python bench/bench_tail.py replay OPS.pkl A/tail.py B/tail.py [--gain DB]``
loads both files as modules and feeds them the same calls, interleaved (A then B, B then A),
one BLAS thread and glibc's reuse of freed blocks as the render has them. Each version's CPU
(``time.process_time``) is summed around its own calls, without its zones' responses
(made once per version). Prints each one's send and take CPU, the sha256 of its output, and the
difference B − A: largest and rms, in dB under the tail's rms, and the largest in 24-bit
steps of the file after the render's loudness gain (``--gain``, its ``loudness.json``'s
``gain_db``; s18: 16.63). Run it a few times and take each version's minimum.

``--ahead S`` replays each take only once the sends up to ``S`` seconds past its end are made
(the recorded order is the render's, paced by the recording version's ``Tail.guard``): for
a version that hears further ahead (another ``TAIL_CHUNK``), whose takes would otherwise
come before sends they hear.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import math
import pickle
import time

import numpy as np
from replay import load, recorded, run_soundscape
from threadpoolctl import threadpool_limits


def record(ops: str, cli: list[str]) -> None:
    from soundscape.sound import tail

    out = open(ops, "wb")  # noqa: SIM115  # open until the CLI returns
    init, send, take = tail.Tail.__init__, tail.Tail.send, tail.Tail.take

    def recorded_init(self, court, listener, panner, channels, sample_rate, air, seed,
                      rates=(), *, upsampler):
        init(self, court, listener, panner, channels, sample_rate, air, seed, rates,
             upsampler=upsampler)
        pickle.dump(("init", court, listener, panner, channels, sample_rate, air, seed, rates),
                    out, protocol=5)

    def recorded_send(self, rate, time_s, mono, point, column):
        pickle.dump(("send", rate, time_s, np.array(mono), point, column), out, protocol=5)
        return send(self, rate, time_s, mono, point, column)

    def recorded_take(self, frames):
        pickle.dump(("take", frames), out, protocol=5)
        return take(self, frames)

    tail.Tail.__init__, tail.Tail.send, tail.Tail.take = (recorded_init, recorded_send,
                                                          recorded_take)
    run_soundscape(cli, out)


def _ahead(ops, seconds: float):
    """``ops`` with each take put off until the first send ``seconds`` past its end."""
    pending: collections.deque = collections.deque()
    end, rate = 0, 1
    for op in ops:
        if op[0] == "init":
            rate = op[5]
        elif op[0] == "take":
            end += op[1]
            pending.append((end, op))
            continue
        else:
            while pending and op[2] >= pending[0][0] / rate + seconds:
                yield pending.popleft()[1]
        yield op
    yield from (op for _, op in pending)


def replay(ops: str, paths: list[str], gain_db: float, ahead: float | None = None) -> None:
    from soundscape.malloc import one_arena, reuse_freed_memory
    from soundscape.sound.buses import Upsampler

    threadpool_limits(1)
    reuse_freed_memory()
    one_arena()
    modules = [load(path, f"tail_{i}") for i, path in enumerate(paths)]
    responses: dict = {}
    made = [0.0]

    def shared(own, version):
        def response(self, zone, ear=None):
            key = (version, zone, ear or self.listener)
            if key not in responses:
                start = time.process_time()
                responses[key] = own(self, zone, ear)
                made[0] += time.process_time() - start
            first, ir = responses[key]
            return first, ir.copy()
        return response

    for version, module in enumerate(modules):  # each its own (one may fold in more)
        module.Tail.response = shared(module.Tail.response, version)
    cpu = [{"send": 0.0, "take": 0.0} for _ in modules]
    digests = [hashlib.sha256() for _ in modules]
    worst = squares = power = 0.0
    count = 0
    tails = []
    calls = recorded(ops) if ahead is None else _ahead(recorded(ops), ahead)
    for n, op in enumerate(calls):
        if op[0] == "init":
            court, listener, panner, channels, rate, air, seed, rates = op[1:]
            tails = [module.Tail(court, listener, panner, channels, rate, air, seed, rates,
                                 upsampler=Upsampler)
                     for module in modules]
            continue
        outs = [None] * len(modules)
        for i in (range(len(modules)) if n % 2 else reversed(range(len(modules)))):
            made[0] = 0.0
            start = time.process_time()
            if op[0] == "send":
                tails[i].send(*op[1:])
            else:
                outs[i] = tails[i].take(op[1])
            cpu[i][op[0]] += time.process_time() - start - made[0]
        if op[0] == "take":
            for digest, out in zip(digests, outs, strict=True):
                digest.update(np.ascontiguousarray(out).tobytes())
            a = outs[0].astype(np.float64)
            d = outs[-1] - a
            worst = max(worst, float(np.abs(d).max()))
            squares += float((d ** 2).sum())
            power += float((a ** 2).sum())
            count += d.size
    for path, spent, digest in zip(paths, cpu, digests, strict=True):
        print(f"{path}: send {spent['send']:.3f} s, take {spent['take']:.3f} s, "
              f"total {spent['send'] + spent['take']:.3f} s CPU; "
              f"output sha256 {digest.hexdigest()[:16]}")
    rms, level = math.sqrt(squares / max(count, 1)), math.sqrt(power / max(count, 1))
    steps = worst * 10 ** (gain_db / 20) * 2 ** 23
    print(f"B - A: largest {worst:.3e}, rms {rms:.3e} "
          f"({20 * math.log10(max(rms, 1e-300) / level):.1f} dB under the tail's rms "
          f"{level:.3e}); largest {steps:.3f} 24-bit steps after {gain_db:.2f} dB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("ops")
    rec.add_argument("cli", nargs=argparse.REMAINDER)
    rep = sub.add_parser("replay")
    rep.add_argument("ops")
    rep.add_argument("a")
    rep.add_argument("b")
    rep.add_argument("--gain", type=float, default=16.634, help="the render's gain_db")
    rep.add_argument("--ahead", type=float, default=None,
                     help="seconds of sends made before each take (another chunk's A/B)")
    args = parser.parse_args()
    if args.mode == "record":
        record(args.ops, [word for word in args.cli if word != "--"])
    else:
        replay(args.ops, [args.a, args.b], args.gain, args.ahead)


if __name__ == "__main__":
    main()
