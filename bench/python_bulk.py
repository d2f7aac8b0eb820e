#!/usr/bin/env python3
"""Bulk speed of the amq Python binding: add_many / contains_many on 16-byte
keys, against baselines measured in the same run (the binding one key at a
time, and Python's own set).

    AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \\
        python3 bench/python_bulk.py [--n 1000000] [--type blocked] ...

Keys are b"%016x" % i (16 bytes each), made before any timing. Each figure
is the best of --repeat runs on a fresh filter. A benchmark, not a test: it
prints a table and asserts nothing.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import amq  # noqa: E402


def best(repeat, fn):
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--type", action="append", dest="types")
    ap.add_argument("--fpr", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--loop-n", type=int, default=200_000,
                    help="keys for the one-key-at-a-time baseline")
    a = ap.parse_args()
    types = a.types or ["blocked", "sbbf", "cuckoo", "qf"]
    present = [b"%016x" % i for i in range(a.n)]
    absent = [b"%016x" % (i + (1 << 60)) for i in range(a.n)]
    assert all(len(k) == 16 for k in present)
    loop_keys = present[:a.loop_n]
    loop_n = len(loop_keys)  # at most n: the rates divide by what was timed

    print("amq %s, n = %d keys of 16 bytes, fpr %g, best of %d\n"
          % (amq.version(), a.n, a.fpr, a.repeat))
    print("| type | add_many Mkeys/s | contains_many Mkeys/s | "
          "add() loop Mkeys/s | `in` loop Mkeys/s | bulk / loop (add) |")
    print("|---|---:|---:|---:|---:|---:|")
    for spec in types:
        def bulk_add():
            amq.Filter(spec, a.n, a.fpr).add_many(present)

        def one_add():
            f = amq.Filter(spec, loop_n, a.fpr)
            add = f.add
            for k in loop_keys:
                add(k)
        f = amq.Filter(spec, a.n, a.fpr)
        f.add_many(present)
        t_add = best(a.repeat, bulk_add)
        t_has = best(a.repeat, lambda: f.contains_many(absent))
        t_one = best(a.repeat, one_add)
        t_in = best(a.repeat, lambda: [k in f for k in loop_keys])
        r_add, r_one = a.n / t_add, loop_n / t_one
        print("| %s | %.2f | %.2f | %.2f | %.2f | %.1fx |" % (
            spec, r_add / 1e6, a.n / t_has / 1e6, r_one / 1e6,
            loop_n / t_in / 1e6, r_add / r_one))
    for spec in ("xor8", "ribbon"):
        t = best(a.repeat, lambda: amq.Filter.build(spec, present, a.fpr))
        print("| %s (Filter.build) | %.2f | | | | |" % (spec, a.n / t / 1e6))

    t_set = best(a.repeat, lambda: set().update(present))
    s = set(present)
    t_set_in = best(a.repeat, lambda: [k in s for k in absent])
    print("\nbaseline, Python set: update %.2f Mkeys/s, `in` list "
          "comprehension %.2f Mkeys/s" % (a.n / t_set / 1e6,
                                           a.n / t_set_in / 1e6))


if __name__ == "__main__":
    main()
