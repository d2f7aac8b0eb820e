#!/usr/bin/env python3
"""Bulk speed of the amq Python binding on NumPy arrays of uint64 keys and
on lists of str keys, each as a ratio to the baselines a Python user has,
measured in the same run: a Python set, and numpy.isin (exact, sorting).

    AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \\
        /usr/bin/python3 bench/python_numpy.py [--n 10000000] [--type blocked]

Members are n distinct uint64 values, queries n others (all absent: the
filter's false positives are its only hits) plus, for the str rows, n
decimal str keys. Types: the default Filter(n, fpr) picks (the `amq build`
default), and those named with --type. Each figure is the best of --repeat
runs; every rate is keys per second over the same n. A benchmark, not a
test: it prints a table and asserts nothing.
"""

import argparse

import numpy as np

from python_bulk import amq, best  # the binding from the tree, one timer


def filter_for(spec, n, fpr):
    """The default Filter(n, fpr) for spec None, else that type."""
    return amq.Filter(n, fpr) if spec is None else amq.Filter(spec, n, fpr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--str-n", type=int, default=1_000_000)
    ap.add_argument("--type", action="append", dest="types", default=[])
    ap.add_argument("--fpr", type=float, default=0.01)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n = a.n
    rng = np.random.default_rng(1)
    members = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    queries = members + np.uint64(2**63)  # n absent keys
    default = amq.Filter(n, a.fpr).type
    specs = [None] + a.types

    print("amq %s, numpy %s, n = %d uint64 keys, fpr %g, best of %d\n"
          % (amq.version(), np.__version__, n, a.fpr, a.repeat))

    as_list = members.tolist()
    q_list = queries.tolist()
    t_set_add = best(a.repeat, lambda: set(as_list))
    s = set(as_list)
    t_set_in = best(a.repeat, lambda: [k in s for k in q_list])
    del s
    t_isin = best(1, lambda: np.isin(queries, members))
    print("baselines: Python set build %.1f M/s, `in` over a list %.1f M/s "
          "(keys already Python ints); np.isin %.1f M/s\n"
          % (n / t_set_add / 1e6, n / t_set_in / 1e6, n / t_isin / 1e6))

    print("| uint64 arrays | add_many M/s | contains_many M/s | "
          "contains / set `in` | contains / np.isin | bits/key | "
          "measured fpr |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for spec in specs:
        t_add = best(a.repeat,
                     lambda: filter_for(spec, n, a.fpr).add_many(members))
        f = filter_for(spec, n, a.fpr)
        f.add_many(members)
        hits = f.contains_many(queries)
        t_has = best(a.repeat, lambda: f.contains_many(queries))
        print("| %s | %.1f | %.1f | %.1fx | %.1fx | %.2f | %.4f |" % (
            spec or "default (%s)" % default, n / t_add / 1e6,
            n / t_has / 1e6, t_set_in / t_has, t_isin / t_has,
            f.bits_per_key, hits.mean()))
        f.close()

    m = a.str_n
    words = ["user:%d" % i for i in range(m)]
    others = ["other:%d" % i for i in range(m)]
    t_sw = best(a.repeat, lambda: set(words))
    s = set(words)
    t_sin = best(a.repeat, lambda: [k in s for k in others])
    print("\nstr keys, %d of them: Python set build %.1f M/s, `in` %.1f M/s"
          % (m, m / t_sw / 1e6, m / t_sin / 1e6))
    print("\n| str lists | add_many M/s | contains_many M/s | "
          "contains / set `in` |")
    print("|---|---:|---:|---:|")
    for spec in specs:
        t_add = best(a.repeat,
                     lambda: filter_for(spec, m, a.fpr).add_many(words))
        f = filter_for(spec, m, a.fpr)
        f.add_many(words)
        t_has = best(a.repeat, lambda: f.contains_many(others))
        print("| %s | %.1f | %.1f | %.2fx |" % (
            spec or "default (%s)" % default, m / t_add / 1e6,
            m / t_has / 1e6, t_sin / t_has))


if __name__ == "__main__":
    main()
