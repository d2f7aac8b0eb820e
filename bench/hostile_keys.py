#!/usr/bin/env python3
"""Hostile keys, shown: what an attacker who knows the hash function does to
an unkeyed filter, and the same attack against a keyed (SipHash) one.

    AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \\
        python3 bench/hostile_keys.py [--n 100000] [--check]

The attacker knows what anyone can read in docs/format.md: the default hash
is XXH3-64 with seed 0, and how a structure maps a hash to its cells
(blocked: block = reduce32(h >> 32, B); cuckoo: i1 = reduce32(h >> 32, m),
fp = 1 + reduce32(h mod 2^32, 2^f - 1), i2 from i1 and mix64(fp)). The
attacker computes hashes through the binding (Filter.hashes on a replica
built with the same public parameters) and searches keys offline:

1. pollution of a blocked Bloom filter: n inserted keys all chosen to land
   in the first sixth of the blocks, which saturate; every query that falls
   there passes;
2. early fill of a cuckoo filter: keys whose two buckets both lie among
   the first s buckets; the walk can only shuffle them inside those, so the
   table reports full after about 4s keys instead of ~95% of capacity;
3. chosen false positives: for a filter over a set the attacker knows (a
   public blocklist), a replica built from the same keys is bit-identical,
   so non-members found to pass on the replica pass on the target too.

Each attack is then replayed against the same filter built with keyed=True
(SipHash-2-4 under a secret 128-bit key): the crafted keys are ordinary
keys to it, and the measured rates are back at the certified bounds.

--check asserts that outcome (the ctest 'hostile_keys' runs --quick
--check); without it the script only reports.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import amq  # noqa: E402

M64 = (1 << 64) - 1
EPS = 0.01  # the target rate every filter here is built for


def reduce32(x, n):
    return (x * n) >> 32


def mix64(x):
    """MurmurHash3's 64-bit finaliser (docs/format.md, "blocked")."""
    x ^= x >> 33
    x = (x * 0xff51afd7ed558ccd) & M64
    x ^= x >> 33
    x = (x * 0xc4ceb9fe1a85ec53) & M64
    x ^= x >> 33
    return x


def param(spec, key):
    for part in spec.split(":", 1)[1].split(","):
        k, _, v = part.partition("=")
        if k == key:
            return int(v)
    raise KeyError(key)


def candidates(tag, start, count):
    return [b"%s-%012d" % (tag, i) for i in range(start, start + count)]


def search(tag, want, accept, hasher, batch=1 << 16):
    """Keys b"tag-<n>" whose hash satisfies accept(h), until `want`."""
    found, start = [], 0
    while len(found) < want:
        keys = candidates(tag, start, batch)
        start += batch
        found.extend(k for k, h in zip(keys, hasher.hashes(keys))
                     if accept(h))
    return found[:want], start


def measured_fpr(f, n, tag=b"probe"):
    keys = candidates(tag, 0, n)
    return sum(f.contains_many(keys)) / n


# ---- 1. pollution of a blocked Bloom filter ---------------------------------


def block_fill(f, blocks):
    """Fraction of bits set in the first `blocks` blocks and in the rest."""
    frame = f.to_bytes()
    nb = f.size_bytes // 64
    payload = frame[len(frame) - 8 - 64 * nb:len(frame) - 8]
    bits = [int.from_bytes(payload[64 * i:64 * i + 64], "little").bit_count()
            for i in range(nb)]
    return (sum(bits[:blocks]) / (512 * blocks),
            sum(bits[blocks:]) / (512 * max(nb - blocks, 1)))


def attack_blocked(n, probes):
    target = amq.Filter("blocked", n, EPS)
    nblocks = param(target.spec, "blocks")
    hot = max(1, nblocks // 6)
    keys, tried = search(b"pollute", n,
                         lambda h: reduce32(h >> 32, nblocks) < hot, target)
    rows = []
    for keyed in (False, True):
        f = amq.Filter("blocked", n, EPS, keyed=keyed)
        f.add_many(keys)
        hot_fill, cold_fill = block_fill(f, hot)
        rows.append({"filter": "blocked", "keyed": keyed, "attack":
                     "pollution: %d keys aimed at %d of %d blocks"
                     % (n, hot, nblocks),
                     "fpr": measured_fpr(f, probes), "bound": f.fpr_bound,
                     "fill": "bits set: %.1f%% in the aimed blocks, %.1f%% "
                             "in the rest" % (100 * hot_fill,
                                              100 * cold_fill)})
    return rows, tried


# ---- 2. early fill of a cuckoo filter ------------------------------------------


def cuckoo_pair(h, m, f):
    """(i1, i2) of a hash in a cuckoo table of m buckets, f-bit prints."""
    fp = 1 + reduce32(h & 0xffffffff, (1 << f) - 1)
    i1 = reduce32(h >> 32, m)
    x = mix64(fp)
    if m & (m - 1) == 0:                      # xor form: m a power of two
        return i1, i1 ^ (1 + reduce32(x >> 32, m - 1))
    big_h = 2 * reduce32(x >> 32, m // 2) + 1  # sum form: m even
    return i1, (big_h - i1) % m


def fill_until_full(f, keys, tag=b"filler"):
    """Add keys until the table refuses one; then, if it never did, random
    keys. Returns (crafted keys inserted, items at the first refusal)."""
    inserted = 0
    for k in keys:
        try:
            f.add(k)
        except amq.FullError:
            return inserted, f.items
        inserted += 1
    start = 0
    while True:
        batch = candidates(tag, start, 4096)
        start += 4096
        try:
            f.add_many(batch)
        except amq.FullError:
            return inserted, f.items


def attack_cuckoo(n, s):
    target = amq.Filter("cuckoo", n, EPS)
    m, fbits = param(target.spec, "buckets"), param(target.spec, "fp")

    def both_in(h):
        if reduce32(h >> 32, m) >= s:          # cheap test first
            return False
        return cuckoo_pair(h, m, fbits)[1] < s
    keys, tried = search(b"fill", 4 * s + 64, both_in, target)
    rows = []
    for keyed in (False, True):
        f = amq.Filter("cuckoo", n, EPS, keyed=keyed)
        inserted, items = fill_until_full(f, keys)
        rows.append({"filter": "cuckoo", "keyed": keyed, "attack":
                     "early fill: %d keys aimed at %d of %d buckets"
                     % (len(keys), s, m),
                     "fpr": None, "bound": f.fpr_bound,
                     "fill": "full after %d keys = %.2f%% of capacity %d "
                             "(%d of the aimed keys went in)"
                             % (items, 100 * items / n, n, inserted),
                     "full_at": items})
    return rows, tried


# ---- 3. chosen false positives ------------------------------------------------------


def attack_chosen(spec, n, want):
    members = candidates(b"member", 0, n)
    replica = amq.Filter.build(spec, members, EPS)   # unkeyed, public
    chosen, start = [], 0
    while len(chosen) < want:
        batch = candidates(b"chosen", start, 1 << 16)
        start += 1 << 16
        chosen.extend(k for k, hit in zip(batch,
                                          replica.contains_many(batch))
                      if hit)
    chosen = chosen[:want]
    rows = []
    for keyed in (False, True):
        f = amq.Filter.build(spec, members, EPS, keyed=keyed)
        rows.append({"filter": spec, "keyed": keyed, "attack":
                     "chosen false positives: %d non-members that pass "
                     "an unkeyed replica" % want,
                     "fpr": sum(f.contains_many(chosen)) / want,
                     "bound": f.fpr_bound, "fill": ""})
    return rows, start


def print_rows(rows):
    print("| filter | hash | attack | measured fpr | certified bound | "
          "fill |")
    print("|---|---|---|---:|---:|---|")
    for r in rows:
        fpr = "%.4f" % r["fpr"] if r["fpr"] is not None else "—"
        print("| %s | %s | %s | %s | %.4f | %s |" % (
            r["filter"], "SipHash, secret key" if r["keyed"]
            else "XXH3 seed 0", r["attack"], fpr, r["bound"], r["fill"]))


def check(rows, n):
    failures = []

    def want(cond, what):
        if not cond:
            failures.append(what)
    for r in rows:
        if r["fpr"] is not None and r["keyed"]:
            want(r["fpr"] < 2.5 * r["bound"] + 0.002,
                 "%s keyed: measured %.4f, bound %.4f" % (
                     r["filter"], r["fpr"], r["bound"]))
        if r["fpr"] is not None and not r["keyed"]:
            want(r["fpr"] > 5 * EPS,
                 "%s unkeyed: attack did not raise the rate (%.4f)" % (
                     r["filter"], r["fpr"]))
        if r["attack"].startswith("pollution") and not r["keyed"]:
            # the blocked bound is the table's own rate: it shows the attack
            want(r["bound"] > 0.8 * r["fpr"],
                 "blocked unkeyed: bound %.4f hides the polluted rate %.4f"
                 % (r["bound"], r["fpr"]))
        if "full_at" in r:
            if r["keyed"]:
                want(r["full_at"] > 0.9 * n, "cuckoo keyed filled early")
            else:
                want(r["full_at"] < 0.05 * n, "cuckoo unkeyed not filled")
    for f in failures:
        print("CHECK FAILED: " + f)
    print("hostile_keys: %d passed, %d failed" % (
        len(rows) - len(failures), len(failures)))
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="capacity")
    ap.add_argument("--probes", type=int, default=100_000,
                    help="random absent keys for the measured rate")
    ap.add_argument("--aimed", type=int, default=64,
                    help="cuckoo buckets the attack aims at")
    ap.add_argument("--chosen", type=int, default=2000)
    ap.add_argument("--quick", action="store_true",
                    help="n = 20000, fewer probes (for ctest)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.n, a.probes, a.chosen = 20_000, 20_000, 500
    print("amq %s: hostile keys against unkeyed (XXH3 seed 0) and keyed "
          "(SipHash) filters, capacity %d, target fpr 0.01\n"
          % (amq.version(), a.n))
    rows, cost = [], []
    for fn, args in ((attack_blocked, (a.n, a.probes)),
                     (attack_cuckoo, (a.n, a.aimed)),
                     (attack_chosen, ("blocked", a.n, a.chosen)),
                     (attack_chosen, ("cuckoo", a.n, a.chosen))):
        r, tried = fn(*args)
        rows += r
        cost.append("%s: %d candidate keys hashed" % (r[0]["attack"],
                                                       tried))
    print_rows(rows)
    print("\nattacker's offline work: " + "; ".join(cost))
    if a.check and not check(rows, a.n):
        sys.exit(1)


if __name__ == "__main__":
    main()
