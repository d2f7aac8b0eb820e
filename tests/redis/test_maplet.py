"""AMQ.MAP.*: maplets in amq-redis.so, against a model of the exact map.

Every operator in combine and multiset mode (a key put is found with a
value that dominates what was put), exact mode (an exact map), deletes,
merge (the same bytes as putting everything into one maplet), static
builds, growth when full, persistence (DEBUG RELOAD, DUMP/RESTORE,
AMQ.DUMP/AMQ.LOAD, SCANDUMP/LOADCHUNK), a replica holding identical values,
RESP3, and bad input leaving the key unchanged.

Run: test_maplet.py --module build/modules/redis/amq-redis.so [--amq build/amq]
"""
import os
import random
import subprocess
import tempfile
from functools import reduce

import redis
from harness import Server, chunk_copy, primary_and_replica, resp3, run

U64 = (1 << 64) - 1
OPS = {
    "sum": lambda a, b: a + b,
    "max": max,
    "min": min,
    "or": lambda a, b: a | b,
}


def dominates(op, got, want):
    """got is at least want in the operator's order."""
    if op == "sum" or op == "max":
        return got >= want
    if op == "min":
        return got <= want
    return got & want == want


def num(x):
    """A value reply: an integer, or a decimal string above 2^63 - 1."""
    return None if x is None else int(x)


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)


def info(r, key):
    flat = r.execute_command("AMQ.MAP.INFO", key)
    return {k.decode(): v for k, v in zip(flat[::2], flat[1::2])}


def put(r, key, pairs):
    args = [x for kv in pairs for x in kv]
    return r.execute_command("AMQ.MAP.PUT", key, *args)


# ---- every operator, combine and multiset mode ------------------------------


def test_operators(c, r):
    rnd = random.Random(7)
    keys = [f"k{i}" for i in range(400)]
    absent = [f"absent{i}" for i in range(4000)]
    for op in OPS:
        for multiset in (0, 1):
            spec = f"maplet:op={op},v=12" + (",multiset=1" if multiset else "")
            key = f"map:{op}:{multiset}"
            c.ok(r.execute_command("AMQ.MAP.RESERVE", key, spec, "CAPACITY",
                                   2000, "ERROR", 0.01), f"reserve {spec}")
            model, stored = {}, {}
            ok_replies = True
            for _ in range(5):
                batch = [(rnd.choice(keys), rnd.randrange(1, 1 << 12))
                         for _ in range(100)]
                got = put(r, key, batch)
                for (k, v), g in zip(batch, got):
                    model[k] = OPS[op](model[k], v) if k in model else v
                    stored.setdefault(k, []).append(v)
                    ok_replies &= dominates(op, num(g), model[k])
            c.ok(ok_replies, f"{spec}: each PUT reply dominates the model")
            ks = sorted(model)
            vals = [num(x) for x in r.execute_command("AMQ.MAP.MGET", key, *ks)]
            c.ok(all(v is not None and dominates(op, v, model[k])
                     for k, v in zip(ks, vals)),
                 f"{spec}: every key found, value dominates what was put")
            exact = sum(v == model[k] for k, v in zip(ks, vals))
            c.ok(exact >= 0.95 * len(ks), f"{spec}: {exact}/{len(ks)} exact")
            c.ok(all(num(r.execute_command("AMQ.MAP.GET", key, k)) == v
                     for k, v in zip(ks[:50], vals)), f"{spec}: GET = MGET")
            hits = sum(x is not None for x in
                       r.execute_command("AMQ.MAP.MGET", key, *absent))
            bound = float(info(r, key)["Error bound"])
            c.ok(hits <= 3 * bound * len(absent) + 10,
                 f"{spec}: {hits} absent keys found, bound {bound}")
            k0 = ks[0]
            allv = [num(x) for x in r.execute_command("AMQ.MAP.GETALL", key, k0)]
            if multiset:
                c.ok(len(allv) >= len(stored[k0]) and
                     reduce(OPS[op], allv) == vals[0],
                     f"{spec}: GETALL lists the stored pairs {allv}")
            else:
                c.ok(allv == [vals[0]], f"{spec}: GETALL in combine mode")
            i = info(r, key)
            c.ok(i["Operator"] == op.encode() and i["Value bits"] == 12 and
                 i["Mode"] == (b"multiset" if multiset else b"combine") and
                 i["Kind"] == b"quotient" and
                 i["Distinct"] >= 1 and i["Used slots"] >= i["Distinct"],
                 f"{spec}: AMQ.MAP.INFO {i}")


# ---- exact mode and deletes ------------------------------------------------------


def test_exact_and_delete(c, r):
    rnd = random.Random(11)
    key = "exact"
    r.execute_command("AMQ.MAP.RESERVE", key, "maplet:op=sum,v=8,kbits=20",
                      "CAPACITY", 3000)
    model = {}
    for _ in range(6):
        batch = [(rnd.randrange(1 << 20), rnd.randrange(1, 256))
                 for _ in range(300)]
        put(r, key, batch)
        for k, v in batch:
            model[k] = model.get(k, 0) + v
    dels = rnd.sample(sorted(model), 200)
    ok = True
    for k in dels:
        amount = rnd.randrange(1, min(model[k], 255) + 1)
        ok &= r.execute_command("AMQ.MAP.DEL", key, k, amount) == 1
        model[k] -= amount
        if model[k] == 0:
            del model[k]
    c.ok(ok, "exact: every delete of what is held succeeds")
    ks = sorted(model)
    got = [num(x) for x in r.execute_command("AMQ.MAP.MGET", key, *ks)]
    c.ok(got == [model[k] for k in ks], "exact mode is an exact map")
    absent = [k for k in rnd.sample(range(1 << 20), 3000) if k not in model]
    c.ok(all(x is None for x in r.execute_command("AMQ.MAP.MGET", key, *absent)),
         "exact mode: no false positives")
    k = ks[0]
    c.ok(r.execute_command("AMQ.MAP.DEL", key, k, model[k] + 1) == 0 and
         num(r.execute_command("AMQ.MAP.GET", key, k)) == model[k],
         "deleting more than is held: 0, unchanged")
    c.ok(r.execute_command("AMQ.MAP.DEL", key, k, model[k]) == 1 and
         r.execute_command("AMQ.MAP.GET", key, k) is None,
         "a sum deleted down to 0 is absent")
    c.ok(info(r, key)["Exact key bits"] == 20, "INFO exact key bits")
    for bad in ("abc", str(1 << 20), "-1"):
        c.raises(lambda: r.execute_command("AMQ.MAP.GET", key, bad),
                 "integers below 2^20", f"exact item {bad!r}")
    # AMQ.MAP.DEL without a value undoes a put of 1
    r.execute_command("AMQ.MAP.RESERVE", "cnt", "maplet:op=sum,v=4")
    put(r, "cnt", [("x", 1), ("x", 1)])
    c.ok(r.execute_command("AMQ.MAP.DEL", "cnt", "x") == 1 and
         num(r.execute_command("AMQ.MAP.GET", "cnt", "x")) == 1,
         "DEL without a value subtracts 1")
    # multiset: one stored copy of the pair
    r.execute_command("AMQ.MAP.RESERVE", "ms", "maplet:op=max,v=8,multiset=1")
    put(r, "ms", [("k", 3), ("k", 9), ("k", 3)])
    c.ok([num(x) for x in r.execute_command("AMQ.MAP.GETALL", "ms", "k")] ==
         [3, 3, 9], "multiset GETALL")
    c.ok(r.execute_command("AMQ.MAP.DEL", "ms", "k", 9) == 1 and
         num(r.execute_command("AMQ.MAP.GET", "ms", "k")) == 3 and
         r.execute_command("AMQ.MAP.DEL", "ms", "k", 7) == 0,
         "multiset DEL removes one pair")
    # combine mode max cannot take a value back
    r.execute_command("AMQ.MAP.RESERVE", "mx", "maplet:op=max,v=8")
    put(r, "mx", [("k", 5)])
    d = digest(r, "mx")
    c.raises(lambda: r.execute_command("AMQ.MAP.DEL", "mx", "k", 5),
             "multiset=1", "combine-mode max delete")
    c.ok(digest(r, "mx") == d, "refused delete leaves the key unchanged")
    # values above 2^63 - 1 and sums up to 2^64 - 1
    r.execute_command("AMQ.MAP.RESERVE", "wide", "maplet:op=sum,v=64")
    got = put(r, "wide", [("k", U64 - 5), ("k", 9), ("k", 5), ("z", 0)])
    c.ok(num(got[0]) == U64 - 5 and isinstance(got[1], redis.ResponseError)
         and "2^64" in str(got[1]) and num(got[2]) == U64 and got[3] is None,
         f"sum to 2^64 - 1, the overflowing pair refused alone: {got}")


# ---- merge, static build, growth ---------------------------------------------------


def test_merge(c, r):
    rnd = random.Random(5)
    spec = "maplet:op=sum,v=8"
    for k in ("ma", "mb", "mall"):
        r.execute_command("AMQ.MAP.RESERVE", k, spec, "CAPACITY", 2000)
    a = [(f"i{rnd.randrange(900)}", rnd.randrange(1, 256)) for _ in range(700)]
    b = [(f"i{rnd.randrange(900)}", rnd.randrange(1, 256)) for _ in range(700)]
    put(r, "ma", a)
    put(r, "mb", b)
    put(r, "mall", a + b)
    c.ok(r.execute_command("AMQ.MAP.MERGE", "ma", "mb"), "AMQ.MAP.MERGE")
    c.ok(r.execute_command("AMQ.DUMP", "ma") ==
         r.execute_command("AMQ.DUMP", "mall"),
         "merge gives the bytes of putting everything into one maplet")
    r.execute_command("AMQ.MAP.RESERVE", "mother", spec, "CAPACITY", 100000)
    r.execute_command("AMQ.RESERVE", "bl", "bloom")
    d = digest(r, "ma")
    c.raises(lambda: r.execute_command("AMQ.MAP.MERGE", "ma", "mother"),
             "incompatible", "merge of different shapes")
    c.raises(lambda: r.execute_command("AMQ.MAP.MERGE", "ma", "bl"),
             "not a maplet", "merge of a filter")
    c.raises(lambda: r.execute_command("AMQ.MAP.MERGE", "ma", "nosuch"),
             "not found", "merge of a missing key")
    c.ok(digest(r, "ma") == d, "refused merges leave dst unchanged")


def test_static(c, r):
    rnd = random.Random(3)
    pairs = [(f"s{rnd.randrange(3000)}", rnd.randrange(1 << 10))
             for _ in range(3000)]
    model = {}
    for k, v in pairs:
        model[k] = max(model.get(k, 0), v)
    args = [x for kv in pairs for x in kv]
    c.ok(r.execute_command("AMQ.MAP.BUILD", "st", "smaplet:op=max,v=10",
                           "ERROR", 0.001, "PAIRS", *args), "static build")
    ks = sorted(model)
    got = [num(x) for x in r.execute_command("AMQ.MAP.MGET", "st", *ks)]
    c.ok(got == [model[k] for k in ks],
         "static maplet: every built key has its exact combined value")
    absent = [f"none{i}" for i in range(5000)]
    hits = sum(x is not None for x in
               r.execute_command("AMQ.MAP.MGET", "st", *absent))
    c.ok(hits <= 3 * 0.001 * 5000 + 10, f"static: {hits} absent keys found")
    i = info(r, "st")
    c.ok(i["Kind"] == b"static" and i["Distinct"] == len(model),
         f"static INFO {i}")
    c.raises(lambda: r.execute_command("AMQ.MAP.PUT", "st", "a", 1),
             "read-only", "put into a static maplet")
    c.raises(lambda: r.execute_command("AMQ.MAP.DEL", "st", ks[0], 1),
             "read-only", "delete from a static maplet")
    # a dynamic maplet built from pairs equals one reserved and filled
    r.execute_command("AMQ.MAP.BUILD", "dyn", "maplet:op=max,v=10",
                      "CAPACITY", 4000, "PAIRS", *args)
    r.execute_command("AMQ.MAP.RESERVE", "dyn2", "maplet:op=max,v=10",
                      "CAPACITY", 4000)
    put(r, "dyn2", pairs)
    c.ok(r.execute_command("AMQ.DUMP", "dyn") ==
         r.execute_command("AMQ.DUMP", "dyn2"),
         "BUILD of a quotient maplet = RESERVE + PUT")


def test_growth(c, r):
    r.execute_command("AMQ.MAP.RESERVE", "grow", "maplet:op=sum,v=8",
                      "CAPACITY", 50, "ERROR", 0.001)
    before = info(r, "grow")
    pairs = [(f"g{i}", 1 + i % 200) for i in range(3000)]
    got = put(r, "grow", pairs)
    c.ok(all(not isinstance(g, redis.ResponseError) for g in got),
         "a full maplet grows: every put accepted")
    vals = [num(x) for x in
            r.execute_command("AMQ.MAP.MGET", "grow", *[k for k, _ in pairs])]
    c.ok(all(v is not None and v >= w for v, (_, w) in zip(vals, pairs)),
         "every key found after growing")
    after = info(r, "grow")
    c.ok(after["Slots"] >= 3000 > before["Slots"] and
         float(after["Error bound at capacity"]) >
         float(before["Error bound at capacity"]),
         f"slots {before['Slots']} -> {after['Slots']}, bound at capacity "
         f"{before['Error bound at capacity']} -> "
         f"{after['Error bound at capacity']}")
    # r = 1 cannot give a remainder bit away: full is an error per pair
    # (a multiset takes a slot per pair, so 400 pairs overflow 128 slots)
    r.execute_command("AMQ.MAP.RESERVE", "tight",
                      "maplet:op=max,v=8,multiset=1,q=6,r=1")
    got = put(r, "tight", [(f"t{i}", 1) for i in range(400)])
    errs = [g for g in got if isinstance(g, redis.ResponseError)]
    ins = [g for g in got if not isinstance(g, redis.ResponseError)]
    c.ok(errs and ins and all("full" in str(e) for e in errs),
         f"r=1: {len(ins)} pairs in, then 'full' per pair")
    d = digest(r, "tight")
    got = put(r, "tight", [("more", 1)])
    c.ok(isinstance(got[0], redis.ResponseError) and
         digest(r, "tight") == d, "a full maplet is unchanged by a refused put")


# ---- persistence ---------------------------------------------------------------------


def test_persistence(c, r):
    keys = ["map:sum:0", "map:or:1", "exact", "st", "grow", "ms"]
    before = {k: digest(r, k) for k in keys}
    def probe(k):
        return [str(i) if k == "exact" else f"k{i}" for i in range(100)]
    answers = {k: r.execute_command("AMQ.MAP.MGET", k, *probe(k))
               for k in keys}
    r.execute_command("DEBUG", "RELOAD")
    c.ok(all(digest(r, k) == before[k] for k in keys), "DEBUG RELOAD digests")
    c.ok(all(r.execute_command("AMQ.MAP.MGET", k, *probe(k)) == answers[k]
             for k in keys), "DEBUG RELOAD answers")
    for k in keys:
        r.restore(k + ":r", 0, r.dump(k))
        frame = r.execute_command("AMQ.DUMP", k)
        r.execute_command("AMQ.LOAD", k + ":l", frame)
        chunk_copy(r, k, k + ":c")
        c.ok(digest(r, k + ":r") == before[k] and
             digest(r, k + ":l") == before[k] and
             digest(r, k + ":c") == before[k],
             f"{k}: DUMP/RESTORE, AMQ.DUMP/LOAD, SCANDUMP/LOADCHUNK")
        c.ok(r.execute_command("AMQ.MAP.MGET", k + ":l", *probe(k)) ==
             answers[k],
             f"{k}: loaded frame answers")
    i = dict(zip(*[iter(r.execute_command("AMQ.INFO", "exact"))] * 2))
    c.ok(i[b"Spec"].startswith(b"maplet:op=sum"), "AMQ.INFO on a maplet")


# ---- bad input -------------------------------------------------------------------------


def test_bad_input(c, r):
    r.set("str", "x")
    r.execute_command("AMQ.RESERVE", "bloomkey", "bloom")
    r.execute_command("AMQ.MAP.RESERVE", "bad", "maplet:op=sum,v=8")
    put(r, "bad", [("a", 3)])
    d = digest(r, "bad")
    for cmd in (["AMQ.MAP.RESERVE", "bad"], ["AMQ.MAP.PUT", "bad", "a"],
                ["AMQ.MAP.PUT", "bad", "a", 1, "b"], ["AMQ.MAP.GET", "bad"],
                ["AMQ.MAP.GET", "bad", "a", "b"], ["AMQ.MAP.MGET", "bad"],
                ["AMQ.MAP.GETALL", "bad"], ["AMQ.MAP.DEL", "bad"],
                ["AMQ.MAP.DEL", "bad", "a", 1, 2], ["AMQ.MAP.INFO"],
                ["AMQ.MAP.INFO", "bad", "x"], ["AMQ.MAP.MERGE", "bad"],
                ["AMQ.MAP.BUILD", "nb", "maplet:op=sum,v=8"],
                ["AMQ.MAP.BUILD", "nb", "maplet:op=sum,v=8", "PAIRS", "a"]):
        c.raises(lambda: r.execute_command(*cmd), "wrong number", f"{cmd}")
    for value, what in (("x", "non-numeric"), ("-1", "negative"),
                        ("256", "too wide"), (str(1 << 64), "past 2^64"),
                        ("1.5", "fraction"), (" 1", "space")):
        c.raises(lambda: put(r, "bad", [("b", 1), ("a", value)]),
                 "at most 8 bits", f"value {what}")
        c.raises(lambda: r.execute_command("AMQ.MAP.DEL", "bad", "a", value),
                 "at most 8 bits", f"DEL value {what}")
    c.ok(digest(r, "bad") == d, "refused commands leave the key unchanged")
    for cmd in (["AMQ.MAP.PUT", "str", "a", 1], ["AMQ.MAP.GET", "str", "a"],
                ["AMQ.MAP.INFO", "str"], ["AMQ.MAP.MERGE", "bad", "str"]):
        c.raises(lambda: r.execute_command(*cmd), "WRONGTYPE", f"{cmd}")
    for cmd in (["AMQ.MAP.PUT", "bloomkey", "a", 1],
                ["AMQ.MAP.GET", "bloomkey", "a"],
                ["AMQ.MAP.MGET", "bloomkey", "a"],
                ["AMQ.MAP.DEL", "bloomkey", "a"],
                ["AMQ.MAP.INFO", "bloomkey"]):
        c.raises(lambda: r.execute_command(*cmd), "not a maplet", f"{cmd}")
    c.raises(lambda: r.execute_command("AMQ.MAP.PUT", "nokey", "a", 1),
             "not found", "PUT to a missing key")
    c.ok(r.execute_command("AMQ.MAP.GET", "nokey", "a") is None and
         r.execute_command("AMQ.MAP.MGET", "nokey", "a", "b") == [None, None]
         and r.execute_command("AMQ.MAP.GETALL", "nokey", "a") == [],
         "queries of a missing key: nil")
    c.ok(r.exists("nokey") == 0, "no key created by a refused PUT")
    for spec, frag in (("bloom", "not a maplet spec"),
                       ("smaplet:op=sum,v=8", "AMQ.MAP.BUILD"),
                       ("maplet:op=avg,v=8", "op"),
                       ("maplet:op=sum,v=65", "v"), ("nosuch", "unknown")):
        c.raises(lambda: r.execute_command("AMQ.MAP.RESERVE", "nk", spec),
                 frag, f"reserve {spec}")
    c.raises(lambda: r.execute_command("AMQ.MAP.RESERVE", "bad",
                                       "maplet:op=sum,v=8"),
             "item exists", "reserve over an existing key")
    c.raises(lambda: r.execute_command("AMQ.MAP.RESERVE", "nk",
                                       "maplet:op=sum,v=8", "CAPACITY",
                                       1 << 41), "bad capacity", "capacity")
    c.raises(lambda: r.execute_command("AMQ.MAP.RESERVE", "nk",
                                       "maplet:op=sum,v=64", "CAPACITY",
                                       1 << 40, "ERROR", 1e-9),
             "memory limit", "huge capacity")
    # a spec that fixes a huge table: the allocation is refused by the
    # memory budget (not by the server's allocator, which would abort)
    c.raises(lambda: r.execute_command("AMQ.MAP.RESERVE", "nk",
                                       "maplet:op=sum,v=64,q=36,r=8"),
             "out of memory", "a spec fixing 2^36 slots")
    c.raises(lambda: r.execute_command("AMQ.RESERVE", "nk", "qf:q=36,r=20"),
             "out of memory", "a qf spec fixing 2^36 slots")
    c.ok(r.ping(), "server alive after refused huge specs")
    c.raises(lambda: r.execute_command("AMQ.MAP.BUILD", "nk",
                                       "smaplet:op=sum,v=4", "PAIRS", "a",
                                       16), "wider than 4 bits",
             "static build value too wide")
    c.raises(lambda: r.execute_command("AMQ.MAP.BUILD", "nk", "bloom",
                                       "PAIRS", "a", 1), "not a maplet",
             "build of a filter spec")
    c.raises(lambda: r.execute_command("AMQ.MAP.BUILD", "nk",
                                       "maplet:op=sum,v=8", "FOO", 1,
                                       "PAIRS", "a", 1), "unknown argument",
             "build option")
    c.ok(r.exists("nk") == 0, "no key created by refused creations")


def test_cli(c, r, amq, tmp):
    """A maplet moves between Redis and the amq CLI as a frame."""
    path = os.path.join(tmp, "m.amq")
    with open(path, "wb") as f:
        f.write(r.execute_command("AMQ.DUMP", "map:sum:0"))
    want = r.execute_command("AMQ.MAP.MGET", "map:sum:0", "k1", "k2")
    q = subprocess.run([amq, "map", "get", path, "--key", "k1", "--key",
                        "k2"], capture_output=True, text=True)
    lines = dict(x.split("\t") for x in q.stdout.splitlines())
    c.ok([lines.get(k) for k in ("k1", "k2")] ==
         [None if w is None else str(w) for w in want],
         f"AMQ.DUMP read by amq map get: {q.stdout!r} {want}")
    kv = os.path.join(tmp, "pairs.tsv")
    with open(kv, "w") as f:
        f.write("alpha\t3\nbeta\t7\nalpha\t4\n")
    subprocess.run([amq, "map", "build", "--type", "smaplet", "--op", "max",
                    "--value-bits", "4", "--fpr", "0.01", "-o", path, kv], check=True,
                   capture_output=True)
    with open(path, "rb") as f:
        c.ok(r.execute_command("AMQ.LOAD", "fromcli", f.read()) and
             r.execute_command("AMQ.MAP.MGET", "fromcli", "alpha", "beta") ==
             [4, 7], "a maplet built by amq map build loads and answers")


def test_resp3(c, port):
    resp = resp3(port, b"*2\r\n$12\r\nAMQ.MAP.INFO\r\n$3\r\nbad\r\n"
                 b"*3\r\n$11\r\nAMQ.MAP.GET\r\n$3\r\nbad\r\n$4\r\nnone\r\n")
    c.ok(resp.startswith(b"%14") and resp.endswith(b"_\r\n"),
         f"RESP3 map and null replies {resp[:12]!r} ... {resp[-6:]!r}")


# ---- replication -------------------------------------------------------------------------


def test_replication(c, args, servers):
    pair = primary_and_replica(args.module, servers)
    if pair is None:
        c.ok(False, "replica never synced")
        return
    p, q = pair
    rnd = random.Random(1)
    pairs = [(f"r{rnd.randrange(500)}", rnd.randrange(1, 256))
             for _ in range(2000)]
    # a random SipHash key is drawn on the primary and replicated
    p.execute_command("AMQ.MAP.RESERVE", "rs", "maplet:op=sum,v=8",
                      "CAPACITY", 20, "HASH", "siphash")
    put(p, "rs", pairs)  # grows several times
    p.execute_command("AMQ.MAP.DEL", "rs", pairs[0][0], 1)
    p.execute_command("AMQ.MAP.RESERVE", "rb", "maplet:op=or,v=16,multiset=1")
    put(p, "rb", [(k, 1 << (v % 16)) for k, v in pairs[:300]])
    p.execute_command("AMQ.MAP.MERGE", "rb", "rb")
    args_ = [x for kv in pairs[:500] for x in kv]
    p.execute_command("AMQ.MAP.BUILD", "rst", "smaplet:op=max,v=8", "PAIRS",
                      *args_)
    p.execute_command("AMQ.MAP.RESERVE", "rw", "maplet:op=sum,v=64")
    # the last pair is refused: the primary replicates the first two alone
    put(p, "rw", [("j", 2), ("k", U64 - 2), ("k", 1)])
    p.execute_command("AMQ.MAP.RESERVE", "rt",
                      "maplet:op=max,v=8,multiset=1,q=6,r=1")
    put(p, "rt", [(f"t{i}", 1) for i in range(400)])  # fills, then refuses
    c.ok(p.execute_command("WAIT", 1, 5000) == 1, "WAIT 1")
    c.ok(p.execute_command("DEBUG", "DIGEST") ==
         q.execute_command("DEBUG", "DIGEST"), "replica digest equals primary's")
    ks = sorted({k for k, _ in pairs})
    c.ok(all(p.execute_command("AMQ.MAP.MGET", k, *ks) ==
             q.execute_command("AMQ.MAP.MGET", k, *ks)
             for k in ("rs", "rb", "rst")), "replica answers equal primary's")
    c.ok(q.execute_command("AMQ.MAP.MGET", "rw", "k", "j") ==
         [str(U64 - 2).encode(), 2],
         "partly refused PUT replicated as the pairs that went in")


def main(args, c, servers):
    srv = Server(args.module)
    servers.append(srv)
    r = srv.client
    test_operators(c, r)
    test_exact_and_delete(c, r)
    test_merge(c, r)
    test_static(c, r)
    test_growth(c, r)
    test_persistence(c, r)
    test_bad_input(c, r)
    if args.amq:
        test_cli(c, r, args.amq, tempfile.mkdtemp(dir=srv.dir))
    test_resp3(c, srv.port)
    c.ok(srv.alive(), "server alive")
    test_replication(c, args, servers)


if __name__ == "__main__":
    run(main)
