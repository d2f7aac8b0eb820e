"""amq-redis.so in one server (and a primary/replica pair): RedisBloom
compatibility through python3-redis's bf()/cf()/cms()/topk() helpers,
AMQ.* over every registered type, persistence (RDB, AOF, DUMP/RESTORE,
COPY, digest, MEMORY USAGE, notifications), bad input, corrupt RDB values,
deterministic replication including LOADCHUNK, and RESP3 replies.

Run: test_module.py --module build/modules/redis/amq-redis.so --amq build/amq
"""
import math
import os
import random
import re
import subprocess
import tempfile
import time

import redis
from harness import Raw, Server, run, wait_synced

# ---- helpers -------------------------------------------------------------


def items(prefix, n):
    return [f"{prefix}-{i}" for i in range(n)]


def raw(r):
    """A client on r's pool without the module helpers' reply parsers."""
    return redis.Redis(connection_pool=r.connection_pool)


def wire(r, *args):
    """The raw bytes of the reply to args."""
    c = Raw(r.connection_pool.connection_kwargs["port"])
    try:
        return c.ask(args)
    finally:
        c.close()


def scandump(r, cmd, key):
    chunks, it = [], 0
    while True:
        it, data = r.execute_command(cmd, key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


CRC64_POLY = 0x95AC9329AC4BC9B5  # Jones, reflected: Redis's DUMP checksum
CRC_TABLE = []
for b in range(256):
    c = b
    for _ in range(8):
        c = (c >> 1) ^ CRC64_POLY if c & 1 else c >> 1
    CRC_TABLE.append(c)


def crc64(data):
    c = 0
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c


def reseal(payload):
    """A DUMP payload with its CRC64 trailer recomputed."""
    body = payload[:-8]
    return body + crc64(body).to_bytes(8, "little")


# ---- RedisBloom compatibility through the python3-redis helpers -----------


def test_bf(c, r):
    bf = r.bf()
    c.ok(bf.create("bf", 0.01, 1000), "BF.RESERVE")
    c.raises(lambda: bf.create("bf", 0.01, 1000), "item exists", "reserve twice")
    c.ok(bf.add("bf", "a") == 1 and bf.add("bf", "a") == 0, "BF.ADD new/old")
    c.ok(bf.madd("bf", "b", "c", "a") == [1, 1, 0], "BF.MADD")
    c.ok(bf.exists("bf", "b") == 1 and bf.exists("bf", "zz") == 0, "BF.EXISTS")
    c.ok(bf.mexists("bf", "a", "zz") == [1, 0], "BF.MEXISTS")
    c.ok(bf.exists("nokey", "a") == 0, "BF.EXISTS on a missing key is 0")
    c.ok(r.execute_command("BF.CARD", "bf") == 3 and
         r.execute_command("BF.CARD", "nokey") == 0, "BF.CARD")
    info = bf.info("bf")
    c.ok(info.capacity == 1000 and info.filterNum == 1 and
         info.insertedNum == 3 and info.expansionRate == 2 and info.size > 0,
         f"BF.INFO {vars(info)}")
    c.ok(raw(r).execute_command("BF.INFO", "bf", "ITEMS") == [3],
         "BF.INFO ITEMS")
    c.raises(lambda: bf.info("nokey"), "not found", "BF.INFO missing")
    # implicit creation with the defaults, growth past capacity, no false
    # negatives, measured FPR within the target
    keys = items("x", 3000)
    for i in range(0, len(keys), 500):
        bf.madd("grow", *keys[i:i + 500])
    c.ok(all(bf.mexists("grow", *keys)), "no false negatives after growth")
    info = bf.info("grow")
    s, cap = 1, 100
    while cap < info.insertedNum:
        s, cap = s + 1, cap + 100 * 2 ** s
    c.ok(info.filterNum == s and info.capacity == cap and
         info.insertedNum > 2900, f"stages {vars(info)}")
    dbg = [x.decode() for x in r.execute_command("BF.DEBUG", "grow")]
    stage = [dict(f.split(":") for f in line.split()) for line in dbg[1:]]
    c.ok(dbg[0] == "size:%d" % info.insertedNum and len(stage) == s and
         sum(int(st["size"]) for st in stage) == info.insertedNum and
         [int(st["capacity"]) for st in stage] ==
         [100 * 2 ** i for i in range(s)] and
         all(float(st["ratio"]) < 0.01 and int(st["hashes"]) >= 1 and
             int(st["bits"]) > 0 for st in stage),
         f"BF.DEBUG {dbg}")
    probes = items("absent", 20000)
    fp = sum(bf.mexists("grow", *probes))
    c.ok(fp / 20000 < 0.015, f"BF FPR {fp / 20000} at eps 0.01")
    c.ok(bf.insert("ins", ["p", "q"], capacity=50, error=0.001,
                   expansion=4) == [1, 1], "BF.INSERT creates")
    c.ok(bf.info("ins").capacity == 50 and bf.info("ins").expansionRate == 4,
         "BF.INSERT parameters")
    c.raises(lambda: bf.insert("nope", ["p"], noCreate=True), "not found",
             "BF.INSERT NOCREATE")
    bf.create("ns", 0.01, 10, noScale=True)
    res = bf.madd("ns", *items("n", 40))
    c.ok(isinstance(res, list) and len(res) < 40 and
         isinstance(res[-1], redis.ResponseError) and
         "non scaling" in str(res[-1]) and
         not any(isinstance(x, redis.ResponseError) for x in res[:-1]),
         f"NONSCALING filter fills: the answers end at the first error "
         f"({len(res)} answers, last {res[-1]!r})")
    # an expansion above 16: RedisBloom's own chain, growing by its rule
    c.ok(r.execute_command("BF.RESERVE", "x32", 0.01, 100, "EXPANSION", 32),
         "BF.RESERVE EXPANSION 32")
    bf.madd("x32", *keys[:150])
    info = bf.info("x32")
    c.ok(r.type("x32") == b"MBbloom--" and info.capacity == 100 + 3200 and
         info.filterNum == 2 and info.expansionRate == 32 and
         all(bf.mexists("x32", *keys[:150])),
         f"EXPANSION 32 grows as RedisBloom: {vars(info)}")
    # SCANDUMP / LOADCHUNK into another key
    for it, data in scandump(r, "BF.SCANDUMP", "grow"):
        bf.loadchunk("copy", it, data)
    c.ok(all(bf.mexists("copy", *keys)), "LOADCHUNK copy answers")
    c.ok(bf.info("copy").filterNum == s, "LOADCHUNK copy keeps its stages")


def test_small_bf(c, r):
    """A new BF key lists its items' hashes until they would take the bytes
    of its first stage, then builds the stage from them: no answer
    changes across the switch, and a one-item key costs less than
    RedisBloom 2.4's (272 bytes by MEMORY USAGE, 0.35 KB of used_memory a
    key over 10^4 keys, measured beside it)."""
    bf = r.bf()
    bf.add("one", "x")
    mem = r.memory_usage("one")
    c.ok(mem <= 272, f"MEMORY USAGE of a one-item BF: {mem} bytes")
    before = r.info("memory")["used_memory"]
    pipe = r.pipeline(transaction=False)
    for i in range(10000):
        pipe.execute_command("BF.ADD", f"ent:{i}", f"item-{i}")
    pipe.execute()
    per = (r.info("memory")["used_memory"] - before) / 10000
    c.ok(per <= 350, f"used_memory a one-item BF key over 10^4 keys: {per:.0f}")
    c.ok(bf.exists("ent:77", "item-77") and not bf.exists("ent:77", "item-78"),
         "one-item keys answer")
    r.delete(*[f"ent:{i}" for i in range(10000)])
    # across the switch: every answer, INFO and DEBUG stay the same shape
    keys = items("s", 300)
    seen = []
    for i, k in enumerate(keys):
        c.ok(bf.add("sw", k) == 1, f"BF.ADD {i}") if i % 50 == 0 else bf.add(
            "sw", k)
        seen.append(k)
        if i in (0, 1, 50, 89, 90, 91, 92, 150, 299):
            ok = all(bf.mexists("sw", *seen))
            info = bf.info("sw")
            dbg = [x.decode() for x in r.execute_command("BF.DEBUG", "sw")]
            c.ok(ok and info.insertedNum == len(seen) and
                 info.capacity >= 100 and info.filterNum >= 1 and
                 dbg[0] == "size:%d" % len(seen),
                 f"{len(seen)} items: all present, INFO {vars(info)}, {dbg[0]}")
            dump = r.dump("sw")
            r.restore("sw-copy", 0, dump, replace=True)
            c.ok(all(bf.mexists("sw-copy", *seen)) and
                 bf.info("sw-copy").insertedNum == len(seen),
                 f"{len(seen)} items: DUMP/RESTORE")
    c.ok(r.execute_command("BF.CARD", "sw") == 300, "BF.CARD across the switch")
    c.ok(r.execute_command("DEBUG", "RELOAD") in (b"OK", "OK", True) and
         all(bf.mexists("sw", *keys)), "DEBUG RELOAD keeps a switched key")
    # a reserved key keeps no table until items come
    bf.create("reserved-big", 0.001, 10 ** 7)
    c.ok(r.memory_usage("reserved-big") < 1024 and
         bf.info("reserved-big").capacity == 10 ** 7,
         f"BF.RESERVE 10^7: {r.memory_usage('reserved-big')} bytes until used")
    bf.add("reserved-big", "a")
    c.ok(bf.exists("reserved-big", "a") and not bf.exists("reserved-big", "b"),
         "a reserved key answers")


def test_small_cf(c, r):
    """A new CF key lists its items' hashes (repeats kept) until they
    would take the bytes of its first link; no answer changes when the
    link is made, and a one-item key costs less than RedisBloom 2.4's
    (about 1.1 KB: its default 1024 one-byte slots)."""
    cf = r.cf()
    cf.add("cf-one", "x")
    mem = r.memory_usage("cf-one")
    c.ok(mem <= 272, f"MEMORY USAGE of a one-item CF: {mem} bytes")
    info0 = cf.info("cf-one")
    keys = items("c", 400)
    want = {}
    for i, k in enumerate(keys):
        n = 2 if i % 7 == 0 else 1
        for _ in range(n):
            cf.add("cf-sw", k)
        want[k] = n
        if i % 5 == 0:
            c.ok(cf.delete("cf-sw", k) == 1, f"CF.DEL {i}")
            want[k] -= 1
        if i in (0, 100, 150, 190, 200, 210, 220, 240, 399):
            present = [k2 for k2, m in want.items() if m > 0]
            counts = [r.execute_command("CF.COUNT", "cf-sw", k2) for k2 in present]
            info = cf.info("cf-sw")
            total = sum(want.values())
            c.ok(all(cf.mexists("cf-sw", *present)) and
                 all(got >= want[k2] for got, k2 in zip(counts, present)) and
                 info.insertedNum == total and info.filterNum == 1 and
                 info.bucketNum == info0.bucketNum,
                 f"{i + 1} items: present, counts, INFO {vars(info)}")
            r.restore("cf-sw-copy", 0, r.dump("cf-sw"), replace=True)
            c.ok(cf.info("cf-sw-copy").insertedNum == total and
                 all(cf.mexists("cf-sw-copy", *present)),
                 f"{i + 1} items: DUMP/RESTORE")
    dbg = r.execute_command("CF.DEBUG", "cf-one").decode()
    c.ok("items:1 " in dbg and "filters:1 " in dbg, f"CF.DEBUG {dbg}")


def test_cf(c, r):
    cf = r.cf()
    c.ok(cf.create("cf", 1000, bucket_size=4, max_iterations=50,
                   expansion=2), "CF.RESERVE")
    c.raises(lambda: cf.create("cf", 1000), "item exists", "CF reserve twice")
    c.ok(cf.add("cf", "a") == 1 and cf.add("cf", "a") == 1, "CF.ADD dup")
    c.ok(cf.addnx("cf", "a") == 0 and cf.addnx("cf", "b") == 1, "CF.ADDNX")
    c.ok(cf.count("cf", "a") == 2 and cf.count("cf", "zz") == 0, "CF.COUNT")
    dbg = r.execute_command("CF.DEBUG", "cf").decode()
    c.ok(re.fullmatch(r"bktsize:4 buckets:\d+ items:\d+ deletes:0 filters:1 "
                      r"max_iterations:50 expansion:\d+", dbg) is not None,
         f"CF.DEBUG {dbg}")
    c.ok(cf.exists("cf", "b") == 1 and cf.exists("cf", "zz") == 0, "CF.EXISTS")
    c.ok(cf.delete("cf", "a") == 1 and cf.count("cf", "a") == 1, "CF.DEL one")
    c.ok(cf.delete("cf", "zz") == 0, "CF.DEL absent")
    c.raises(lambda: cf.delete("nokey", "a"), "not found", "CF.DEL missing key")
    c.ok(cf.insert("cfi", ["a", "b"], capacity=100) == [1, 1], "CF.INSERT")
    c.ok(cf.insertnx("cfi", ["a", "c"]) == [0, 1], "CF.INSERTNX")
    info = cf.info("cf")
    c.ok(info.bucketSize == 4 and info.maxIteration == 50 and
         info.expansionRate == 2 and info.insertedNum == 2 and
         info.deletedNum == 1 and info.filterNum == 1, f"CF.INFO {vars(info)}")
    # expansion: a small filter grows links and keeps every item
    cf.create("small", 64, expansion=2)
    keys = items("k", 2000)
    for k in keys:
        cf.add("small", k)
    c.ok(all(cf.exists("small", k) for k in keys), "CF no false negatives")
    c.ok(cf.info("small").filterNum > 1, "CF grew links")
    cf.create("fixed", 64, expansion=0)
    res = [cf.insert("fixed", [k])[0] for k in keys[:300]]
    c.ok(-1 in res, "CF EXPANSION 0 fills up (-1)")
    c.raises(lambda: cf.add("fixed", "more-and-more-" + "x" * 10) or
             [cf.add("fixed", k) for k in items("f", 500)],
             "Filter is full", "CF.ADD on a full filter")
    # a link holds its capacity at the load its kick budget reaches
    for cap, iters in ((100, 20), (1000, 20), (50000, 20), (20000, 5),
                       (20000, 100)):
        key = f"cap:{cap}:{iters}"
        cf.create(key, cap, max_iterations=iters)
        ks = items(key, cap)
        for i in range(0, cap, 1000):
            cf.insert(key, ks[i:i + 1000])
        c.ok(cf.info(key).filterNum == 1,
             f"CF capacity {cap} at MAXITERATIONS {iters} fits one link")
    for it, data in scandump(r, "CF.SCANDUMP", "small"):
        cf.loadchunk("small2", it, data)
    c.ok(all(cf.exists("small2", k) for k in keys), "CF LOADCHUNK copy")


def test_cf_compact(c, r):
    """CF.COMPACT drops the links deletes emptied (newest first); items
    stay where they are and every one is still found."""
    cf = r.cf()
    cf.create("cmp", 100, expansion=2)
    keys = items("cc", 600)
    cf.insert("cmp", keys)
    links = cf.info("cmp").filterNum
    late = keys[300:]
    for k in late:
        cf.delete("cmp", k)
    c.ok(r.execute_command("CF.COMPACT", "cmp") in (b"OK", "OK", True),
         "CF.COMPACT")
    after = cf.info("cmp").filterNum
    c.ok(1 <= after < links, f"CF.COMPACT: {links} links, then {after}")
    c.ok(all(cf.mexists("cmp", *keys[:300])), "kept items answer after compact")
    c.ok(cf.insert("cmp", late) and all(cf.mexists("cmp", *keys)),
         "the chain grows again after compact")
    c.raises(lambda: r.execute_command("CF.COMPACT", "nokey"),
             "Cuckoo filter was not found", "CF.COMPACT missing")


def test_cms(c, r):
    cms = r.cms()
    c.ok(cms.initbydim("d", 1000, 5), "CMS.INITBYDIM")
    c.ok(cms.initbyprob("p", 0.001, 0.01), "CMS.INITBYPROB")
    info = cms.info("p")
    c.ok(info.width == 2000 and info.depth == 7 and info.count == 0,
         f"INITBYPROB sizing {vars(info)}")
    c.raises(lambda: cms.initbydim("d", 10, 2), "already exists", "CMS twice")
    c.ok(cms.incrby("d", ["foo", "bar"], [10, 42]) == [10, 42], "CMS.INCRBY")
    c.ok(cms.query("d", "foo", "bar", "zz") == [10, 42, 0], "CMS.QUERY")
    cms.initbydim("d2", 1000, 5)
    cms.incrby("d2", ["foo"], [5])
    cms.initbydim("dst", 1000, 5)
    c.ok(cms.merge("dst", 2, ["d", "d2"], [1, 3]), "CMS.MERGE WEIGHTS")
    c.ok(cms.query("dst", "foo", "bar") == [25, 42], "weighted merge counts")
    c.ok(cms.info("dst").count == 10 + 42 + 15, "merged total")
    c.raises(lambda: cms.merge("dst", 1, ["p"]), "width/depth", "shape mismatch")
    c.raises(lambda: cms.query("nokey", "a"), "does not exist", "CMS missing")
    # RedisBloom 2.4's words (bench/redis/side_by_side.py compares them
    # with a RedisBloom build)
    c.raises(lambda: cms.incrby("d", ["a"], [-1]),
             "CMS: Number cannot be negative", "negative increment")
    c.raises(lambda: r.execute_command("CMS.INCRBY", "d", "a", "x"),
             "CMS: Cannot parse number", "increment not a number")
    c.raises(lambda: r.execute_command("CMS.MERGE", "dst", 3, "p", "q"),
             "CMS: wrong number of keys", "fewer keys than numkeys")
    c.raises(lambda: r.execute_command("CMS.MERGE", "dst", 2, "p", "q",
                                       "WEIGHTS", 1),
             "CMS: wrong number of keys/weights", "a weight missing")
    c.raises(lambda: r.execute_command("CMS.INCRBY", "d", "a"),
             "wrong number of arguments for 'cms.incrby' command",
             "arity, in the server's words")
    got = r.execute_command("CMS.INCRBY", "d", "big", 4294967290, "big", 10,
                            "foo", 1)
    c.ok(got[0] == 4294967290 and isinstance(got[1], redis.ResponseError) and
         "INCRBY overflow" in str(got[1]) and got[2] == 11,
         f"a counter at 2^32 - 1: RedisBloom's overflow error element {got}")


def test_tdigest(c, r):
    """TDIGEST.* as RedisBloom 2.4 documents them (its examples give these
    exact answers), every error it names, and quantiles of a large stream
    within the digest's stated error (docs/structures.md, "t-digest")."""
    x = r.execute_command
    num = lambda v: float(v) if not isinstance(v, float) else v
    text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
    c.ok(x("TDIGEST.CREATE", "td", "COMPRESSION", 1000), "TDIGEST.CREATE")
    c.ok(x("TDIGEST.ADD", "td", *[1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5]),
         "TDIGEST.ADD")
    got = [num(v) for v in x("TDIGEST.BYRANK", "td", *range(16))]
    c.ok(got == [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, float("inf")],
         f"TDIGEST.BYRANK {got}")
    got = [num(v) for v in x("TDIGEST.BYREVRANK", "td", *range(16))]
    c.ok(got == [5, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 2, 2, 1, float("-inf")],
         f"TDIGEST.BYREVRANK {got}")
    got = [num(v) for v in x("TDIGEST.QUANTILE", "td",
                             *[i / 10 for i in range(11)])]
    c.ok(got == [1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5], f"TDIGEST.QUANTILE {got}")
    c.ok(num(x("TDIGEST.MIN", "td")) == 1 and num(x("TDIGEST.MAX", "td")) == 5,
         "TDIGEST.MIN/MAX")
    x("TDIGEST.CREATE", "tds", "COMPRESSION", 1000)
    x("TDIGEST.ADD", "tds", 10, 20, 30, 40, 50, 60)
    c.ok(x("TDIGEST.RANK", "tds", 0, 10, 20, 30, 40, 50, 60, 70) ==
         [-1, 0, 1, 2, 3, 4, 5, 6], "TDIGEST.RANK")
    c.ok(x("TDIGEST.REVRANK", "tds", 0, 10, 20, 30, 40, 50, 60, 70) ==
         [6, 5, 4, 3, 2, 1, 0, -1], "TDIGEST.REVRANK")
    cdf = [num(v) for v in x("TDIGEST.CDF", "tds", 0, 10, 35, 60, 70)]
    c.ok(cdf[0] == 0 and cdf[-1] == 1 and abs(cdf[1] - 1 / 12) < 1e-12 and
         abs(cdf[2] - 0.5) < 1e-12 and abs(cdf[3] - 11 / 12) < 1e-12,
         f"TDIGEST.CDF {cdf}")
    c.ok(abs(num(x("TDIGEST.TRIMMED_MEAN", "tds", 0, 1)) - 35) < 1e-9,
         "TDIGEST.TRIMMED_MEAN")
    info = x("TDIGEST.INFO", "td")
    names = [text(v) for v in info[0::2]]
    fields = dict(zip(names, info[1::2]))
    c.ok(names == ["Compression", "Capacity", "Merged nodes",
                        "Unmerged nodes", "Merged weight", "Unmerged weight",
                        "Observations", "Total compressions", "Memory usage"]
         and fields["Compression"] == 1000 and fields["Observations"] == 15,
         f"TDIGEST.INFO {info}")
    # an empty sketch
    x("TDIGEST.CREATE", "tde")
    c.ok(x("TDIGEST.INFO", "tde")[1] == 100, "default compression 100")
    c.ok(text(x("TDIGEST.MIN", "tde")) == "nan" and
         x("TDIGEST.RANK", "tde", 1) == [-2] and
         [text(v) for v in x("TDIGEST.BYRANK", "tde", 0)] == ["nan"],
         "empty sketch: nan and -2")
    # MERGE: into a new key (largest compression), OVERRIDE, COMPRESSION
    c.ok(x("TDIGEST.MERGE", "tdm", 2, "td", "tds"), "TDIGEST.MERGE")
    c.ok(x("TDIGEST.INFO", "tdm")[1] == 1000 and
         x("TDIGEST.INFO", "tdm")[13] == 21, "merged compression and count")
    c.ok(x("TDIGEST.MERGE", "tdm", 1, "tds", "COMPRESSION", 50, "OVERRIDE"),
         "TDIGEST.MERGE OVERRIDE")
    c.ok(x("TDIGEST.INFO", "tdm")[1] == 50 and x("TDIGEST.INFO", "tdm")[13] == 6,
         "OVERRIDE replaced the destination")
    c.ok(x("TDIGEST.MERGE", "tdm", 1, "tdm"), "a key merged into itself")
    c.ok(x("TDIGEST.INFO", "tdm")[13] == 12, "self merge doubles")
    c.ok(x("TDIGEST.RESET", "tdm") and x("TDIGEST.INFO", "tdm")[13] == 0,
         "TDIGEST.RESET")
    # errors, with RedisBloom's strings
    r.set("tdstr", "x")
    for args, want in [
            (("TDIGEST.CREATE", "td"), "key already exists"),
            (("TDIGEST.CREATE", "tdn", "COMPRESS", 10), "wrong keyword"),
            (("TDIGEST.CREATE", "tdn", "COMPRESSION", "x"),
             "error parsing compression parameter"),
            (("TDIGEST.CREATE", "tdn", "COMPRESSION", 0),
             "needs to be a positive integer"),
            (("TDIGEST.ADD", "nokey", 1), "key does not exist"),
            (("TDIGEST.ADD", "td", "abc"), "error parsing val parameter"),
            (("TDIGEST.ADD", "td", "nan"), "error parsing val parameter"),
            (("TDIGEST.ADD", "td", "inf"), "needs to be a finite number"),
            (("TDIGEST.ADD", "tdstr", 1), "WRONGTYPE"),
            (("TDIGEST.QUANTILE", "td", 1.5), "should be in [0,1]"),
            (("TDIGEST.QUANTILE", "td", "q"), "error parsing quantile"),
            (("TDIGEST.CDF", "td", "q"), "error parsing cdf"),
            (("TDIGEST.RANK", "td", "q"), "error parsing value"),
            (("TDIGEST.BYRANK", "td", -1), "rank needs to be non negative"),
            (("TDIGEST.BYRANK", "td", 1.5), "error parsing rank"),
            (("TDIGEST.TRIMMED_MEAN", "td", 0.5, 0.2), "should be lower"),
            (("TDIGEST.TRIMMED_MEAN", "td", 0.5, 2), "should be in [0,1]"),
            (("TDIGEST.TRIMMED_MEAN", "td", "a", 2), "low_cut_percentile"),
            (("TDIGEST.MERGE", "tdm", 0, "td"), "numkeys needs to be a positive"),
            (("TDIGEST.MERGE", "tdm", "x", "td"), "error parsing numkeys"),
            (("TDIGEST.MERGE", "tdm", 1, "td", "BOGUS"), "wrong keyword"),
            (("TDIGEST.MERGE", "tdm", 1, "nokey"), "key does not exist"),
            (("TDIGEST.MERGE", "tdstr", 1, "td"), "WRONGTYPE"),
            (("TDIGEST.MIN",), "wrong number of arguments")]:
        c.raises(lambda a=args: x(*a), want, " ".join(map(str, args)))
    c.ok(x("TDIGEST.INFO", "td")[13] == 15, "refused ADDs changed nothing")
    # a large stream: quantiles within the stated error, in rank
    rnd = random.Random(11)
    data = [rnd.lognormvariate(0, 1) for _ in range(20000)]
    x("TDIGEST.CREATE", "tdbig")
    for i in range(0, len(data), 1000):
        x("TDIGEST.ADD", "tdbig", *data[i:i + 1000])
    data.sort()
    qs = [0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999]
    est = [num(v) for v in x("TDIGEST.QUANTILE", "tdbig", *qs)]
    for q, e in zip(qs, est):
        lo = sum(1 for v in data if v < e) / len(data)
        hi = sum(1 for v in data if v <= e) / len(data)
        p = min(max(q, lo), hi)
        a, b = min(p, q), max(p, q)
        bound = max(2 * math.pi * math.sqrt(t * (1 - t)) / 100
                    for t in (a, b, min(max(0.5, a), b))) + 1 / len(data)
        c.ok(abs(p - q) <= bound,
             f"QUANTILE {q}: {e} has rank [{lo}, {hi}] (bound {bound})")


def test_topk(c, r):
    tk = r.topk()
    c.ok(tk.reserve("t", 3, 50, 4, 0.9), "TOPK.RESERVE")
    c.ok(r.execute_command("TOPK.RESERVE", "tdef", 5), "TOPK.RESERVE defaults")
    info = tk.info("tdef")
    c.ok(info.k == 5 and info.width == 8 and info.depth == 7 and
         abs(float(info.decay) - 0.9) < 1e-12, f"TOPK defaults {vars(info)}")
    stream = ["a"] * 50 + ["b"] * 30 + ["c"] * 20 + ["d"] * 5 + items("n", 30)
    random.Random(7).shuffle(stream)
    for i in range(0, len(stream), 10):
        tk.add("t", *stream[i:i + 10])
    lst = tk.list("t")
    c.ok(set(lst) == {"a", "b", "c"}, f"TOPK.LIST {lst}")
    c.ok(tk.query("t", "a", "zz") == [1, 0], "TOPK.QUERY")
    cnt = tk.count("t", "a", "b", "zz")
    c.ok(cnt[0] <= 50 and cnt[0] >= 40 and cnt[1] <= 30 and cnt[2] == 0,
         f"TOPK.COUNT {cnt}")
    wc = tk.list("t", withcount=True)
    c.ok(len(wc) == 6 and wc[0] == "a", f"TOPK.LIST WITHCOUNT {wc}")
    # items as RedisBloom sends them: simple strings, but an item a simple
    # string cannot carry goes as a bulk string
    got = wire(r, "TOPK.LIST", "t")
    c.ok(got.startswith(b"*3\r\n+") and b"$" not in got,
         "TOPK.LIST items are simple strings: %r" % got)
    r.execute_command("TOPK.RESERVE", "tnl", 2)
    r.execute_command("TOPK.ADD", "tnl", "x\r\ny", "plain")
    got = wire(r, "TOPK.LIST", "tnl")
    c.ok(b"$4\r\nx\r\ny\r\n" in got and b"+plain\r\n" in got,
         "an item with CR LF is a bulk string: %r" % got)
    out = tk.incrby("t", ["e"], [1000])
    c.ok(out[0] in ("a", "b", "c") and "e" in tk.list("t"),
         f"TOPK.INCRBY expels {out}")
    before = tk.list("t", withcount=True)
    c.ok(tk.incrby("t", ["e"], [0]) == [None] and
         tk.list("t", withcount=True) == before,
         "TOPK.INCRBY 0: no change, nothing expelled (as RedisBloom)")
    c.raises(lambda: tk.incrby("t", ["e"], [-1]), "increment", "incr -1")
    c.raises(lambda: tk.reserve("bad", 0, 8, 7, 0.9), "invalid k", "k = 0")
    c.raises(lambda: tk.reserve("bad", 3, 8, 7, 1.5), "decay", "decay > 1")
    # deeper than 16 or decaying below 0.01: RedisBloom's own sketch
    c.ok(tk.reserve("tdeep", 3, 50, 20, 0.005), "TOPK.RESERVE depth 20, decay "
                                                "0.005")
    for i in range(0, len(stream), 10):
        tk.add("tdeep", *stream[i:i + 10])
    info = tk.info("tdeep")
    c.ok(r.type("tdeep") == b"TopK-TYPE" and info.depth == 20 and
         set(tk.list("tdeep")) == {"a", "b", "c"},
         f"a deep TOPK answers: {vars(info)}, {tk.list('tdeep')}")

    # keys: listed whole, however long; the sketch holds none of them
    longk = "L" * 300
    tk.reserve("tlong", 5, 64, 4, 0.9)
    for i in range(200):
        tk.add("tlong", f"item-{i % 13}", longk if i % 3 == 0 else f"x{i}")
    lst = tk.list("tlong", withcount=True)
    c.ok(lst[0] == longk and lst[1] == 67 and len(lst) == 10,
         f"TOPK.LIST names a 300-byte key whole: {[str(x)[:12] for x in lst]}")
    r.restore("tlong2", 0, r.dump("tlong"))
    c.ok(tk.list("tlong2", withcount=True) == lst and
         tk.query("tlong2", longk) == [1], "TOPK keys through DUMP/RESTORE")
    r.execute_command("TOPK.RESERVE", "tsmall", 10)
    tk.add("tsmall", "x")
    mem = r.memory_usage("tsmall")
    c.ok(mem <= 2776, f"MEMORY USAGE of a one-item TOPK (k = 10): {mem} "
                      "bytes (RedisBloom 2.4 reports 2776)")
    # a sketch saved when keys lived inside it (a 256-byte prefix each)
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "golden", "topk-keylen256.dump")
    with open(golden, "rb") as f:
        r.restore("told", 0, f.read())
    old = tk.list("told", withcount=True)
    c.ok(old[0] == "L" * 256 and old[1:] == lst[1:],
         f"an older TOPK value answers as it did: {[str(x)[:12] for x in old]}")
    tk.add("told", "item-1")
    r.restore("told2", 0, r.dump("told"))
    c.ok(tk.list("told2", withcount=True) == tk.list("told", withcount=True),
         "an older TOPK value keeps its form through DUMP/RESTORE")


# ---- AMQ.* ----------------------------------------------------------------


def test_amq(c, r, amq_cli, tmp):
    types = [t.decode() for t in r.execute_command("AMQ.TYPES")]
    c.ok("bloom" in types and "xor8" in types, f"AMQ.TYPES {types}")
    static = {"xor8", "xor16", "xor32", "fuse8", "fuse16", "fuse32", "ribbon",
              "smaplet", "grafite"}
    keys = items("m", 500)
    for t in types:
        spec = t + (":bits=8" if t == "ribbon" else
                    ":member=fuse8" if t == "smaplet" else
                    ":keys=bytes" if t in ("grafite", "memento") else "")
        key = "amq:" + t
        if t in static:
            c.ok(r.execute_command("AMQ.BUILD", key, spec, *keys), f"build {t}")
        else:
            c.ok(r.execute_command("AMQ.RESERVE", key, spec, "CAPACITY", 1000,
                                   "ERROR", 0.01), f"reserve {t}")
            r.execute_command("AMQ.MADD", key, *keys)
        info = dict(zip(*[iter(r.execute_command("AMQ.INFO", key))] * 2))
        caps = info[b"Capabilities"].split()
        if b"sketch" in caps:
            pass  # top-k lists heavy hitters, not members
        elif b"forgets" in caps:  # a forgetting filter keeps its newest key
            c.ok(r.execute_command("AMQ.EXISTS", key, keys[-1]) == 1,
                 f"{t}: newest key present")
        else:
            ans = r.execute_command("AMQ.MEXISTS", key, *keys)
            c.ok(all(ans), f"{t}: no false negatives")
        c.ok(info[b"Items"] >= 1 and float(info[b"Error bound"]) >= 0,
             f"AMQ.INFO {t}")
    r.execute_command("AMQ.RESERVE", "cnt", "counting", "CAPACITY", 100)
    r.execute_command("AMQ.ADD", "cnt", "x")
    c.ok(r.execute_command("AMQ.DEL", "cnt", "x") == 1 and
         r.execute_command("AMQ.EXISTS", "cnt", "x") == 0, "AMQ.DEL")
    r.execute_command("AMQ.RESERVE", "u1", "bloom", "CAPACITY", 1000)
    r.execute_command("AMQ.RESERVE", "u2", "bloom", "CAPACITY", 1000)
    r.execute_command("AMQ.MADD", "u1", "a", "b")
    r.execute_command("AMQ.MADD", "u2", "c")
    c.ok(r.execute_command("AMQ.MERGE", "u1", "u2"), "AMQ.MERGE")
    c.ok(r.execute_command("AMQ.MEXISTS", "u1", "a", "b", "c") == [1, 1, 1],
         "merged answers")
    r.execute_command("AMQ.RESERVE", "sip", "blocked", "HASH", "siphash")
    r.execute_command("AMQ.ADD", "sip", "k")
    c.ok(r.execute_command("AMQ.EXISTS", "sip", "k") == 1, "siphash filter")
    # CLI -> Redis -> CLI
    if amq_cli:
        kf, ff = os.path.join(tmp, "keys.txt"), os.path.join(tmp, "f.amq")
        with open(kf, "w") as f:
            f.write("\n".join(keys) + "\n")
        subprocess.run([amq_cli, "build", "--type", "fuse8", "-o", ff, kf],
                       check=True, capture_output=True)
        with open(ff, "rb") as f:
            frame = f.read()
        c.ok(r.execute_command("AMQ.LOAD", "cli", frame), "AMQ.LOAD a CLI frame")
        c.ok(all(r.execute_command("AMQ.MEXISTS", "cli", *keys)), "CLI frame answers")
        back = r.execute_command("AMQ.DUMP", "amq:bloom")
        with open(ff, "wb") as f:
            f.write(back)
        q = subprocess.run([amq_cli, "query", ff], input="m-1\nnot-there\n",
                           capture_output=True, text=True)
        c.ok("m-1" in q.stdout, f"AMQ.DUMP frame read by the CLI: {q.stdout!r}")
    frame = bytearray(r.execute_command("AMQ.DUMP", "amq:bloom"))
    frame[len(frame) // 2] ^= 1
    c.raises(lambda: r.execute_command("AMQ.LOAD", "amq:bloom", bytes(frame)),
             "checksum", "corrupt AMQ.LOAD")
    c.ok(all(r.execute_command("AMQ.MEXISTS", "amq:bloom", *keys)),
         "key unchanged after a refused AMQ.LOAD")


# ---- bad input ------------------------------------------------------------


def test_adapt(c, r):
    """AMQ.ADAPT on an adaptive filter: a reported item answers 0 from then
    on, every member still answers 1, a member's report is refused, and a
    filter that does not adapt refuses the command."""
    members = [f"user:{i}" for i in range(3000)]
    c.ok(r.execute_command("AMQ.RESERVE", "ad", "aqf", "CAPACITY", 3000,
                           "ERROR", 0.05), "reserve an aqf")
    r.execute_command("AMQ.MADD", "ad", *members)
    probes = [f"ghost:{i}" for i in range(20000)]
    hits = [p for p, e in zip(probes, r.execute_command("AMQ.MEXISTS", "ad",
                                                        *probes)) if e]
    c.ok(len(hits) > 100, f"{len(hits)} false positives before adapting")
    # a report can fix a later one of the same fingerprint too (0: nothing
    # left to do)
    fixed = r.execute_command("AMQ.ADAPT", "ad", *hits)
    c.ok(set(fixed) <= {0, 1} and sum(fixed) > len(hits) // 2,
         f"{sum(fixed)} of {len(hits)} reports changed the filter")
    again = r.execute_command("AMQ.MEXISTS", "ad", *hits)
    c.ok(sum(again) == 0, f"{sum(again)} reported items still answer 1")
    c.ok(r.execute_command("AMQ.ADAPT", "ad", hits[0]) == [0],
         "a second report changes nothing")
    ok = r.execute_command("AMQ.MEXISTS", "ad", *members)
    c.ok(sum(ok) == len(members), "every member still answers 1")
    reply = r.execute_command("AMQ.ADAPT", "ad", members[0])
    c.ok(isinstance(reply[0], redis.exceptions.ResponseError) and
         "not a false positive" in str(reply[0]), f"a member refused: {reply}")
    info = r.execute_command("AMQ.INFO", "ad")
    flat = dict(zip(info[::2], info[1::2])) if isinstance(info, list) else info
    fixed_n = flat.get(b"False positives fixed", flat.get("False positives fixed"))
    c.ok(fixed_n == sum(fixed), f"AMQ.INFO counts {fixed_n} fixed")
    r.execute_command("AMQ.RESERVE", "plainqf", "qf", "CAPACITY", 100)
    try:
        r.execute_command("AMQ.ADAPT", "plainqf", "x")
        c.ok(False, "a qf took AMQ.ADAPT")
    except redis.exceptions.ResponseError as e:
        c.ok("not an adaptive filter" in str(e), f"a qf refuses: {e}")
    dump = r.execute_command("AMQ.DUMP", "ad")
    r.execute_command("AMQ.LOAD", "ad2", dump)
    c.ok(sum(r.execute_command("AMQ.MEXISTS", "ad2", *hits)) == 0,
         "the records survive AMQ.DUMP and AMQ.LOAD")


def test_grow(c, r):
    """AMQ.ADD on a missing key makes a filter that grows: 1000 keys by
    default, and 64 times that go in without an error, every one answers
    1, and the rate stays near 1%; AMQ.RESERVE of an eqf grows too, and a
    full qf goes on as one."""
    items = [f"grown:{i}" for i in range(64000)]
    c.ok(r.execute_command("AMQ.ADD", "gr", items[0]) == 1,
         "AMQ.ADD creates the key")
    for i in range(1, len(items), 8000):
        r.execute_command("AMQ.MADD", "gr", *items[i:i + 8000])
    ok = r.execute_command("AMQ.MEXISTS", "gr", *items)
    c.ok(sum(ok) == len(items), f"{len(items) - sum(ok)} items answer 0")
    ghosts = [f"ghost:{i}" for i in range(40000)]
    fp = sum(r.execute_command("AMQ.MEXISTS", "gr", *ghosts))
    c.ok(fp <= 0.01 * len(ghosts), f"{fp} of {len(ghosts)} ghosts answer 1")
    info = r.execute_command("AMQ.INFO", "gr")
    flat = dict(zip(info[::2], info[1::2])) if isinstance(info, list) else info
    spec = flat.get(b"Spec", flat.get("Spec", b""))
    spec = spec.decode() if isinstance(spec, bytes) else str(spec)
    c.ok(spec.startswith("eqf:"), f"the key is an eqf: {spec}")
    c.ok(r.execute_command("AMQ.CARD", "gr") == len(items), "AMQ.CARD")
    r.execute_command("AMQ.RESERVE", "gr2", "eqf", "CAPACITY", 10)
    r.execute_command("AMQ.MADD", "gr2", *items[:5000])
    c.ok(sum(r.execute_command("AMQ.MEXISTS", "gr2", *items[:5000])) == 5000,
         "a reserved eqf of 10 takes 5000")
    r.execute_command("AMQ.RESERVE", "grq", "qf", "CAPACITY", 100)
    added = r.execute_command("AMQ.MADD", "grq", *items[:3000])
    c.ok(added == [1] * 3000, "a qf of 100 takes 3000 items")
    info = r.execute_command("AMQ.INFO", "grq")
    flat = dict(zip(info[::2], info[1::2])) if isinstance(info, list) else info
    spec = flat.get(b"Spec", flat.get("Spec", b""))
    spec = spec.decode() if isinstance(spec, bytes) else str(spec)
    c.ok(spec.startswith("eqf:"), f"a full qf goes on as an eqf: {spec}")
    c.ok(sum(r.execute_command("AMQ.MEXISTS", "grq", *items[:3000])) == 3000,
         "and answers 1 for every item")
    dump = r.execute_command("AMQ.DUMP", "gr")
    r.execute_command("AMQ.LOAD", "gr3", dump)
    c.ok(sum(r.execute_command("AMQ.MEXISTS", "gr3", *items)) == len(items),
         "a grown filter survives AMQ.DUMP and AMQ.LOAD")
    r.execute_command("AMQ.ADD", "gr3", "one more")
    c.ok(r.execute_command("AMQ.EXISTS", "gr3", "one more") == 1,
         "and goes on growing")


def test_range(c, r):
    """AMQ.RANGE.* over a range filter of integers and one of strings: no
    range holding a key answers 0, and bad ends are refused."""
    keys = [str(1000 * i) for i in range(2000)]
    c.ok(r.execute_command("AMQ.BUILD", "rg", "grafite:range=64", *keys),
         "build an integer range filter")
    miss = sum(r.execute_command("AMQ.RANGE.QUERY", "rg", str(1000 * i - 3),
                                 str(1000 * i + 3)) == 0 for i in range(1, 2000))
    c.ok(miss == 0, f"ranges around keys: {miss} answered 0")
    c.ok(r.execute_command("AMQ.EXISTS", "rg", "5000") == 1, "a key exists")
    empty = sum(r.execute_command("AMQ.RANGE.QUERY", "rg", str(1000 * i + 1),
                                  str(1000 * i + 64)) for i in range(2000))
    c.ok(empty <= 80, f"empty ranges past keys: {empty} of 2000 answered 1")
    for lo, hi, what in (("x", "5", "not an integer"), ("9", "5", "empty"),
                         ("-1", "5", "negative"), ("1", "18446744073709551616",
                                                   "past 2^64")):
        try:
            r.execute_command("AMQ.RANGE.QUERY", "rg", lo, hi)
            c.ok(False, f"AMQ.RANGE.QUERY {what} accepted")
        except redis.exceptions.ResponseError:
            c.ok(True, f"AMQ.RANGE.QUERY {what} refused")
    try:
        r.execute_command("AMQ.BUILD", "rg2", "grafite", "apple")
        c.ok(False, "integer filter took a word")
    except redis.exceptions.ResponseError as e:
        c.ok("integers" in str(e), f"integer filter refuses a word: {e}")
    c.ok(r.execute_command("AMQ.RANGE.BUILD", "rg3", "ERROR", "0.001",
                           "RANGE", "16", "ITEMS", *keys), "AMQ.RANGE.BUILD")
    b16 = float(r.execute_command("AMQ.RANGE.BOUND", "rg3", "16"))
    c.ok(0 < b16 <= 0.001, f"AMQ.RANGE.BOUND 16: {b16}")
    c.ok(r.execute_command("AMQ.RANGE.QUERY", "rg3", "4990", "5010") == 1,
         "AMQ.RANGE.BUILD's filter holds its keys")
    c.ok(r.execute_command("AMQ.RANGE.BUILD", "rs3", "KEYS", "BYTES", "ITEMS",
                           "apple", "kiwi"), "AMQ.RANGE.BUILD KEYS BYTES")
    c.ok(r.execute_command("AMQ.RANGE.QUERY", "rs3", "k", "kz") == 1,
         "k..kz holds kiwi")
    for bad in (["rg4", "ERROR", "2", "ITEMS", "1"], ["rg4", "RANGE", "0",
                                                      "ITEMS", "1"],
                ["rg4", "KEYS", "FLOAT", "ITEMS", "1"], ["rg4", "1", "2"],
                ["rg4", "ITEMS", "x"]):
        try:
            r.execute_command("AMQ.RANGE.BUILD", *bad)
            c.ok(False, f"AMQ.RANGE.BUILD {bad} accepted")
        except redis.exceptions.ResponseError:
            c.ok(True, f"AMQ.RANGE.BUILD {bad} refused")
    # a range filter that takes inserts and deletes: memento
    c.ok(r.execute_command("AMQ.RESERVE", "rm", "memento:range=64",
                           "CAPACITY", 100, "ERROR", 0.01), "reserve memento")
    c.ok(r.execute_command("AMQ.MADD", "rm", *[str(1000 * i) for i in
                                               range(3000)]) == [1] * 3000,
         "AMQ.MADD of integers into a memento filter (it grows)")
    c.ok(all(r.execute_command("AMQ.RANGE.QUERY", "rm", str(1000 * i - 30),
                               str(1000 * i + 30)) == 1 for i in range(1, 3000)),
         "memento: every range around a key answers 1")
    past = sum(r.execute_command("AMQ.RANGE.QUERY", "rm", str(1000 * i + 1),
                                 str(1000 * i + 64)) for i in range(3000))
    bm = float(r.execute_command("AMQ.RANGE.BOUND", "rm", "64"))
    c.ok(bm <= 0.02 and past <= 3000 * 0.02 + 20,
         f"memento: ranges just past keys {past} of 3000 (bound {bm})")
    c.ok(r.execute_command("AMQ.DEL", "rm", "5000") == 1 and
         r.execute_command("AMQ.RANGE.QUERY", "rm", "4990", "5010") == 0,
         "memento: a deleted key leaves its range empty")
    c.raises(lambda: r.execute_command("AMQ.ADD", "rm", "apple"), "integers",
             "memento of integers refuses a word")
    words = ["apple", "apricot", "banana", "cherry", "kiwi", "lemon"]
    c.ok(r.execute_command("AMQ.BUILD", "rs", "grafite:keys=bytes", *words),
         "build a string range filter")
    c.ok(r.execute_command("AMQ.RANGE.QUERY", "rs", "b", "bz") == 1, "b..bz has banana")
    c.ok(r.execute_command("AMQ.EXISTS", "rs", "kiwi") == 1, "kiwi exists")
    r.execute_command("BF.ADD", "rb", "a")
    try:
        r.execute_command("AMQ.RANGE.QUERY", "rb", "a", "b")
        c.ok(False, "AMQ.RANGE.QUERY on a Bloom filter accepted")
    except redis.exceptions.ResponseError:
        c.ok(True, "AMQ.RANGE.QUERY on a Bloom filter refused")
    r.execute_command("AMQ.RESERVE", "rq", "blocked", "CAPACITY", 100)
    try:
        r.execute_command("AMQ.RANGE.QUERY", "rq", "a", "b")
        c.ok(False, "AMQ.RANGE.QUERY on a point filter accepted")
    except redis.exceptions.ResponseError as e:
        c.ok("range filter" in str(e), f"point filter: {e}")


def test_bad_input(c, r):
    # RedisBloom 2.4's answers (bench/redis/side_by_side.py)
    c.raises(lambda: r.execute_command("CF.RESERVE", "cfsmall", 3),
             "Capacity must be at least (BucketSize * 2)", "CF too small")
    c.raises(lambda: r.execute_command("CF.RESERVE", "cfsmall", 0),
             "Capacity must be at least (BucketSize * 2)", "CF capacity 0")
    c.raises(lambda: r.execute_command("BF.INSERT", "bfnoitems", "CAPACITY",
                                       10),
             "wrong number of arguments for 'bf.insert' command",
             "BF.INSERT without ITEMS")
    c.raises(lambda: r.execute_command("CF.INSERT", "cfnoitems", "ITEMS"),
             "wrong number of arguments for 'cf.insert' command",
             "CF.INSERT without an item")
    # a RedisBloom stream's header for a key of amq's own layout
    r.execute_command("BF.ADD", "amqbf", "x")
    r.execute_command("CF.ADD", "amqcf", "x")
    c.raises(lambda: r.execute_command("BF.LOADCHUNK", "amqbf", 1, b"zz" * 40),
             "bad data", "BF.LOADCHUNK of a RedisBloom header on an amq key")
    c.raises(lambda: r.execute_command("CF.LOADCHUNK", "amqcf", 1, b"z" * 38),
             "exists", "CF.LOADCHUNK of a RedisBloom header on an amq key")
    c.ok(r.execute_command("BF.EXISTS", "amqbf", "x") == 1 and
         r.execute_command("CF.EXISTS", "amqcf", "x") == 1,
         "the keys are unchanged")
    c.raises(lambda: r.execute_command("AMQ.DUMP", "amqbf"), "no amq frame",
             "AMQ.DUMP of a small BF key")
    r.set("str", "x")
    for cmd in (["BF.ADD", "str", "a"], ["CF.ADD", "str", "a"],
                ["CMS.QUERY", "str", "a"], ["TOPK.ADD", "str", "a"],
                ["AMQ.ADD", "str", "a"], ["BF.SCANDUMP", "cf", 0]):
        c.raises(lambda: r.execute_command(*cmd), "WRONGTYPE", f"{cmd}")
    # reads RedisBloom answers as if the key were missing (STRICT 1 on the
    # replica of test_replication answers WRONGTYPE)
    for cmd, want in ((["BF.EXISTS", "cf", "a"], 0),
                      (["BF.MEXISTS", "str", "a", "b"], [0, 0]),
                      (["CF.EXISTS", "bf", "a"], 0),
                      (["CF.MEXISTS", "str", "a"], [0]),
                      (["CF.COUNT", "bf", "a"], 0)):
        c.ok(r.execute_command(*cmd) == want, f"{cmd} answers {want}")
    for cmd in (["BF.ADD", "k"], ["BF.RESERVE", "k", "0.1"], ["CF.ADD", "k"],
                ["CMS.INCRBY", "d", "a"], ["TOPK.RESERVE"], ["BF.LOADCHUNK", "k", 1],
                ["CMS.MERGE", "dst", 3, "d"], ["AMQ.RESERVE", "k"]):
        try:
            r.execute_command(*cmd)
            c.ok(False, f"{cmd} accepted")
        except redis.ResponseError as e:
            c.ok("wrong number" in str(e) or "numkeys" in str(e), f"{cmd}: {e}")
    c.raises(lambda: r.execute_command("BF.RESERVE", "k", "abc", 10),
             "bad error rate", "bad error")
    c.raises(lambda: r.execute_command("BF.RESERVE", "k", 1.5, 10),
             "error rate range", "error >= 1")
    c.raises(lambda: r.execute_command("BF.RESERVE", "k", 0.1, -5),
             "capacity", "negative capacity")
    # RedisBloom 2.4's words, exactly
    for cmd, want in [
            (("CF.RESERVE", "k", 100, "BUCKETSIZE", 0),
             "BUCKETSIZE: value must be an integer between 1 and 255, "
             "inclusive."),
            (("CF.RESERVE", "k", 100, "BUCKETSIZE", "x"),
             "Couldn't parse BUCKETSIZE"),
            (("CF.RESERVE", "k", 100, "MAXITERATIONS", 0),
             "MAXITERATIONS: value must be an integer between 1 and 65535, "
             "inclusive."),
            (("CF.RESERVE", "k", 100, "EXPANSION", "x"),
             "Couldn't parse EXPANSION"),
            (("CF.RESERVE", "k", "x"), "Bad capacity"),
            (("CF.RESERVE", "k", 6, "BUCKETSIZE", 4),
             "Capacity must be at least (BucketSize * 2)"),
            (("BF.RESERVE", "k", 1.5, 10), "(0 < error rate range < 1) "),
            (("BF.RESERVE", "k", 0.1, 10, "EXPANSION"), "no expansion"),
            (("BF.RESERVE", "k", 0.1, 10, "NONSCALING", "EXPANSION", 2),
             "Nonscaling filters cannot expand"),
            (("BF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a"), "Bad capacity"),
            (("BF.INSERT", "k", "ERROR", "x", "ITEMS", "a"), "Bad error rate"),
            (("BF.INSERT", "k", "ERROR", 2, "ITEMS", "a"),
             "Bad argument received"),
            (("BF.INSERT", "k", "BOGUS", "ITEMS", "a"),
             "Unknown argument received"),
            (("BF.INFO", "bf", "BOGUS"), "Invalid information value"),
            (("CF.DEL", "nokey", "a"), "Not found")]:
        try:
            r.execute_command(*cmd)
            c.ok(False, f"{cmd} accepted")
        except redis.ResponseError as e:
            c.ok(str(e) == want, f"{cmd}: {str(e)!r}, RedisBloom {want!r}")
    c.ok(r.execute_command("BF.INSERT", "ns2", "NONSCALING", "EXPANSION", 2,
                           "ITEMS", "a") == [1],
         "BF.INSERT NONSCALING EXPANSION: nonscaling wins, as RedisBloom")
    c.raises(lambda: r.execute_command("CMS.INITBYDIM", "k", 0, 5), "width",
             "width 0")
    c.raises(lambda: r.execute_command("AMQ.RESERVE", "k", "nosuch"), "unknown",
             "unknown spec")
    c.raises(lambda: r.execute_command("AMQ.RESERVE", "k", "bloom:k=999"),
             "must be in", "bad spec value")
    # huge sizes are refused before anything is allocated
    r.config_set("maxmemory", 64 << 20)
    for cmd in (["BF.RESERVE", "huge", 0.0001, 1 << 40],
                ["CF.RESERVE", "huge", 1 << 39],
                ["CMS.INITBYDIM", "huge", 1 << 30, 16],
                ["TOPK.RESERVE", "huge", 1000, 1 << 28, 16, 0.9],
                ["AMQ.RESERVE", "huge", "qf", "CAPACITY", 1 << 38]):
        c.raises(lambda: r.execute_command(*cmd), "memory", f"{cmd[0]} huge")
    c.ok(r.exists("huge") == 0, "nothing created")
    # a scalable filter's next stage is checked before it is allocated
    r.config_set("maxmemory", 0)
    r.execute_command("BF.RESERVE", "stages", 0.01, 50000, "EXPANSION", 16)
    ks = items("s", 60000)
    for i in range(0, 45000, 5000):
        r.bf().madd("stages", *ks[i:i + 5000])
    n = r.bf().info("stages").insertedNum
    for k in ks[45000:]:  # fill the first stage exactly
        if n == 50000:
            break
        n += r.bf().add("stages", k)
    before = r.bf().info("stages")
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used + (1 << 20))
    res = r.bf().madd("stages", *items("more", 50))
    c.ok(any(isinstance(x, redis.ResponseError) and "memory limit" in str(x)
             for x in res), f"stage growth refused: {res[:3]}")
    c.ok(r.bf().info("stages").filterNum == before.filterNum,
         "no stage opened past the limit")
    r.config_set("maxmemory", 0)
    c.ok(r.bf().madd("stages", *items("more", 50)).count(1) > 0 and
         r.bf().info("stages").filterNum == before.filterNum + 1,
         "the stage opens once memory allows")
    # garbage and out-of-order chunks leave the key as it was
    r.bf().madd("keep", "a", "b")
    dig = r.execute_command("DEBUG", "DIGEST-VALUE", "keep")
    c.raises(lambda: r.execute_command("BF.LOADCHUNK", "keep", 9, b"garbage!"),
             "invalid chunk", "garbage first chunk")
    rnd = random.Random(3)
    for _ in range(200):
        blob = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 64)))
        try:
            r.execute_command("BF.LOADCHUNK", "keep", len(blob) + 1, blob)
        except redis.ResponseError:
            pass
    c.ok(r.execute_command("DEBUG", "DIGEST-VALUE", "keep") == dig,
         "key unchanged by garbage chunks")
    chunks = scandump(r, "BF.SCANDUMP", "grow")
    it, data = chunks[0]
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0x40
    c.raises(lambda: r.execute_command("BF.LOADCHUNK", "keep", it, bytes(bad)),
             "invalid chunk", "corrupt complete chunk")
    c.ok(r.execute_command("DEBUG", "DIGEST-VALUE", "keep") == dig,
         "key unchanged by a corrupt chunk")
    c.ok(r.ping(), "server alive after bad input")


def test_corrupt_rdb(c, srv):
    r = srv.client
    r.config_set("rdbcompression", "no")
    r.bf().madd("victim", *items("v", 200))
    r.execute_command("AMQ.RESERVE", "av", "cuckoo", "CAPACITY", 100)
    for key in ("victim", "av"):
        payload = r.dump(key)
        c.ok(crc64(payload[:-8]) == int.from_bytes(payload[-8:], "little"),
             "CRC64 of a DUMP payload")
        at = payload.find(b"\x89AMR")
        c.ok(at > 0, "blob inside the DUMP payload")
        good = 0
        for off in [0, 4, 6, 9, 17, 21, 30, 60, 100, len(payload) - 20 - at]:
            p = bytearray(payload)
            p[at + off] ^= 0x21
            try:
                r.restore(key + "-bad", 0, reseal(bytes(p)))
                c.ok(False, f"corrupt value at +{off} accepted")
            except redis.ResponseError:
                good += 1
        c.ok(good == 10, "every corrupt value refused")
        c.ok(r.restore(key + "-ok", 0, payload), "intact value restores")
    c.ok(r.ping() and srv.alive(), "server alive after corrupt RDB values")
    c.ok("refusing a corrupt" in srv.log(), "refusal logged")
    c.ok(r.exists("victim-bad") == 0, "no corrupt key created")


def test_big_chunks(c, r):
    """A value above 16 MiB moves in several chunks; a load in progress
    survives DEBUG RELOAD; pieces out of order are refused."""
    r.execute_command("BF.RESERVE", "big", 0.01, 14000000, "NONSCALING")
    r.bf().madd("big", *items("g", 1000))
    chunks = scandump(r, "BF.SCANDUMP", "big")
    c.ok(len(chunks) == 2 and all(len(d) <= 16 << 20 for _, d in chunks),
         f"{len(chunks)} chunks of at most 16 MiB")
    (i1, d1), (i2, d2) = chunks
    c.ok(r.execute_command("BF.LOADCHUNK", "big2", i1, d1), "first chunk")
    c.raises(lambda: r.execute_command("BF.EXISTS", "big2", "g-1"),
             "being loaded", "queries wait for the last chunk")
    c.raises(lambda: r.execute_command("BF.LOADCHUNK", "big2", i2 + 1, d2),
             "out of order", "misplaced chunk")
    r.execute_command("DEBUG", "RELOAD")
    c.ok(r.execute_command("BF.LOADCHUNK", "big2", i2, d2), "last chunk")
    c.ok(r.execute_command("DEBUG", "DIGEST-VALUE", "big2") ==
         r.execute_command("DEBUG", "DIGEST-VALUE", "big"),
         "chunked copy equals the original")
    # the blob is made once a scan, kept between its pieces (MEMORY USAGE
    # shows it), dropped after the last one and by a write in between
    base = r.memory_usage("big")
    it, first = r.execute_command("BF.SCANDUMP", "big", 0)
    held = r.memory_usage("big")
    c.ok(held > base + (16 << 20), f"a scan holds its blob: {base} -> {held}")
    r.execute_command("BF.ADD", "big", "written-mid-scan")
    c.ok(r.memory_usage("big") <= base + 64,
         f"a write drops it: {r.memory_usage('big')}")
    again = scandump(r, "BF.SCANDUMP", "big")
    c.ok(again[0][1] != first and r.memory_usage("big") <= base + 64,
         "the next scan sees the write and lets its blob go at the end")
    r.delete("big", "big2")


# ---- persistence ------------------------------------------------------------


def populate(r):
    r.bf().madd("p:bf", *items("a", 500))
    r.cf().insert("p:cf", items("b", 300), capacity=100)
    r.cms().initbydim("p:cms", 300, 4)
    r.cms().incrby("p:cms", ["x", "y"], [3, 99])
    r.topk().reserve("p:tk", 5, 40, 4, 0.9)
    r.topk().add("p:tk", *(["h"] * 20 + items("c", 40)))
    r.execute_command("AMQ.RESERVE", "p:qf", "qf", "CAPACITY", 1000)
    r.execute_command("AMQ.MADD", "p:qf", *items("d", 100))
    r.execute_command("AMQ.BUILD", "p:xor", "xor8", *items("e", 100))
    r.execute_command("TDIGEST.CREATE", "p:td", "COMPRESSION", 20)
    r.execute_command("TDIGEST.ADD", "p:td", *range(0, 700, 3))


def test_persistence(c, srv):
    r = srv.client
    populate(r)
    before = r.execute_command("DEBUG", "DIGEST")
    r.execute_command("DEBUG", "RELOAD")
    c.ok(r.execute_command("DEBUG", "DIGEST") == before, "DEBUG RELOAD digest")
    r.save()
    srv.restart()
    r = srv.client
    c.ok(r.execute_command("DEBUG", "DIGEST") == before, "RDB restart digest")
    c.ok(all(r.bf().mexists("p:bf", *items("a", 500))), "RDB BF answers")
    r.config_set("appendonly", "yes")
    time.sleep(0.2)
    while r.info("persistence")["aof_rewrite_in_progress"] or \
            r.info("persistence")["aof_rewrite_scheduled"]:
        time.sleep(0.05)
    r.bf().add("p:bf", "after-aof")
    r.execute_command("BGREWRITEAOF")
    time.sleep(0.2)
    while r.info("persistence")["aof_rewrite_in_progress"]:
        time.sleep(0.05)
    after = r.execute_command("DEBUG", "DIGEST")
    srv.args = ["--appendonly", "yes"]
    srv.restart()
    r = srv.client
    c.ok(r.execute_command("DEBUG", "DIGEST") == after, "AOF restart digest")
    c.ok(r.bf().exists("p:bf", "after-aof") == 1, "AOF BF answers")
    srv.args = []
    c.ok(r.execute_command("TDIGEST.MAX", "p:td") in (b"699", 699.0),
         "RDB and AOF TDIGEST answers")
    for key in ("p:bf", "p:cf", "p:cms", "p:tk", "p:qf", "p:xor", "p:td"):
        d = r.execute_command("DEBUG", "DIGEST-VALUE", key)
        r.restore(key + ":r", 0, r.dump(key))
        r.copy(key, key + ":c")
        c.ok(r.execute_command("DEBUG", "DIGEST-VALUE", key + ":r") == d and
             r.execute_command("DEBUG", "DIGEST-VALUE", key + ":c") == d,
             f"DUMP/RESTORE and COPY {key}")
        mem = r.memory_usage(key)
        c.ok(mem is not None and mem > 100, f"MEMORY USAGE {key} = {mem}")
    c.ok(r.type("p:bf") == b"amq-bloom", "TYPE")


def test_notifications(c, r):
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    time.sleep(0.05)
    r.bf().add("note", "x")
    r.cf().add("note2", "x")
    got = set()
    deadline = time.time() + 2
    while time.time() < deadline and len(got) < 2:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            got.add(m["channel"].decode().split(":", 1)[1])
    c.ok({"bf.add", "cf.add"} <= got, f"keyspace events {got}")
    p.close()


def test_resp3(c, port):
    s = Raw(port)
    s.ask(["HELLO", "3"])
    resp = s.ask(["BF.INFO", "p:bf"])
    s.close()
    c.ok(resp.startswith(b"*10"),
         f"RESP3 INFO: RedisBloom 2.4's flat array {resp[:20]!r}")


# ---- replication ----------------------------------------------------------------


def test_replication(c, args, servers):
    prim = Server(args.module)
    servers.append(prim)
    # the replica's module defaults differ: implicit creation must not
    rep = Server(args.module, modargs=["ERROR_RATE", "0.2", "INITIAL_SIZE", "7",
                                       "STRICT", "1"],
                 args=["--replicaof", "127.0.0.1", str(prim.port)])
    servers.append(rep)
    p, q = prim.client, rep.client
    if not wait_synced(q):
        c.ok(False, "replica never synced")
        return
    populate(p)
    p.bf().madd("implicit", *items("i", 1000))
    p.bf().madd("small", "s1", "s2")
    p.cf().add("small-cf", "s1")
    p.cf().add("small-cf", "s1")
    # parameters only RedisBloom's layouts take: a STRICT replica follows
    p.execute_command("BF.INSERT", "x32", "EXPANSION", 32, "ITEMS",
                      *items("x", 300))
    p.execute_command("TOPK.RESERVE", "tdeep", 3, 50, 20, 0.9)
    p.execute_command("TOPK.ADD", "tdeep", *items("t", 200))
    p.execute_command("TOPK.INCRBY", "p:tk", "zz", 5, "yy", 0)
    p.cf().add("implicit-cf", "x")
    p.execute_command("AMQ.RESERVE", "sip", "bloom", "HASH", "siphash")
    p.execute_command("AMQ.MADD", "sip", "a", "b")
    for it, data in scandump(p, "BF.SCANDUMP", "p:bf"):
        p.execute_command("BF.LOADCHUNK", "chunked", it, data)
    p.topk().incrby("p:tk", ["z"], [77])
    p.cms().merge("p:cms", 1, ["p:cms"], [2])
    # reads on the primary only (a replica never sees them) between writes
    for i in range(5):
        p.execute_command("TDIGEST.QUANTILE", "p:td", 0.5, 0.99)
        p.execute_command("TDIGEST.ADD", "p:td", *range(i, 300, 7))
    p.execute_command("TDIGEST.MERGE", "p:td2", 1, "p:td")
    c.ok(p.execute_command("WAIT", 1, 5000) == 1, "WAIT 1")
    dp = p.execute_command("DEBUG", "DIGEST")
    dq = q.execute_command("DEBUG", "DIGEST")
    c.ok(dp == dq, "replica digest equals primary's")
    c.ok(q.bf().info("implicit").capacity == p.bf().info("implicit").capacity,
         "implicit creation replicated with the primary's parameters")
    c.ok(all(q.bf().mexists("chunked", *items("a", 500))),
         "LOADCHUNK replicated")
    c.ok(q.bf().mexists("small", "s1", "s2", "s3") == [1, 1, 0] and
         q.execute_command("CF.COUNT", "small-cf", "s1") == 2,
         "small keys replicated")
    # the replica runs STRICT 1: amq's own answers
    c.raises(lambda: q.execute_command("BF.EXISTS", "p:cf", "a"), "WRONGTYPE",
             "STRICT: BF.EXISTS on a CF key")
    c.raises(lambda: q.execute_command("CF.COUNT", "p:bf", "a"), "WRONGTYPE",
             "STRICT: CF.COUNT on a BF key")
    c.ok(isinstance(q.execute_command("CMS.INFO", "p:cms"), list),
         "STRICT: CMS.INFO")


def test_command_table(c, r):
    """Every row of modules/redis/commands.def is a command the server
    knows, with the arity and key positions the row gives."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "modules", "redis", "commands.def")
    rows = re.findall(r'^AMQ_REDIS_CMD\("([A-Z.]+)", \w+, [^,]+, (-?\d+), '
                      r'(-?\d+), (-?\d+)', open(path).read(), re.M)
    c.ok(len(rows) >= 60, "commands.def has its %d rows" % len(rows))
    info = r.command()  # redis-py: every command, name -> its fields
    for name, first, last, step in rows:
        got = info.get(name, info.get(name.lower()))
        c.ok(got is not None, "%s registered" % name)
        if got is not None:
            pos = (got["first_key_pos"], got["last_key_pos"],
                   got["step_count"])
            c.ok(pos == (int(first), int(last), int(step)),
                 "%s key positions %s" % (name, pos))


def main(args, c, servers):
    srv = Server(args.module)
    servers.append(srv)
    r = srv.client
    tmp = tempfile.mkdtemp(dir=srv.dir)
    test_command_table(c, r)
    test_bf(c, r)
    test_small_bf(c, r)
    test_small_cf(c, r)
    test_cf(c, r)
    test_cf_compact(c, r)
    test_cms(c, r)
    test_tdigest(c, r)
    test_topk(c, r)
    test_amq(c, r, args.amq, tmp)
    test_range(c, r)
    test_adapt(c, r)
    test_grow(c, r)
    test_bad_input(c, r)
    test_corrupt_rdb(c, srv)
    test_big_chunks(c, r)
    r.flushall()
    test_persistence(c, srv)
    test_notifications(c, srv.client)
    test_resp3(c, srv.port)
    c.ok(srv.alive(), "server alive at the end")
    test_replication(c, args, servers)


if __name__ == "__main__":
    run(main)
