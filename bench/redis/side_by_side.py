"""The module's replies against RedisBloom's, byte for byte, over one
transcript of BF, CF, CMS, TOPK and TDIGEST commands (docs/redis.md
"Side by side with RedisBloom").

Two redis-servers on 127.0.0.1: one with amq-redis.so, one with a
RedisBloom module the user built (nothing of RedisBloom is in this
repository). Every command of the transcript goes to both, in order, in
RESP2 and again in RESP3 (HELLO 3) after a FLUSHALL; the raw reply bytes
are compared. Replies that carry a float are compared as numbers to 6
significant digits when both servers print one; t-digest estimates are
compared within 1% (both digests are approximations, merged and
interpolated their own ways). Prints every difference, then one line per
protocol: commands, identical, different.

Then the migration: RedisBloom fills keys of every type, answers a set
of queries, and writes its RDB, DUMP payloads and SCANDUMP chunks; a
server with the module starts from that RDB, then RESTOREs the payloads,
then LOADCHUNKs the chunks, and answers the same queries each time.

Run: /usr/bin/python3 bench/redis/side_by_side.py --module M --redisbloom R
     [--show-all]
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "redis"))
from harness import Raw, Server  # noqa: E402


def transcript():
    """(command, compare) pairs; compare is 'exact', 'number' (floats to
    6 digits) or 'approx' (within 1%)."""
    t = []

    def add(*cmd, how="exact"):
        t.append(([str(x) for x in cmd], how))

    # ---- BF
    add("BF.RESERVE", "bf1", "0.01", "1000")
    add("BF.RESERVE", "bf1", "0.01", "1000")
    add("BF.RESERVE", "bf2", "0.001", "100", "EXPANSION", "4")
    add("BF.RESERVE", "bf3", "0.01", "100", "NONSCALING")
    add("BF.RESERVE", "bfx", "0", "100")
    add("BF.RESERVE", "bfx", "1", "100")
    add("BF.RESERVE", "bfx", "0.01", "0")
    add("BF.RESERVE", "bfx", "abc", "100")
    add("BF.RESERVE", "bfx", "0.01", "abc")
    add("BF.RESERVE", "bfx", "0.01", "100", "EXPANSION", "0")
    add("BF.RESERVE", "bfx", "0.01", "100", "EXPANSION")
    add("BF.RESERVE", "bfx", "0.01", "100", "EXPANSION", "2", "NONSCALING")
    add("BF.RESERVE", "bfx", "0.01")
    add("BF.ADD", "bf1", "a")
    add("BF.ADD", "bf1", "a")
    add("BF.ADD", "bf1")
    add("BF.MADD", "bf1", "a", "b", "c")
    add("BF.EXISTS", "bf1", "a")
    add("BF.EXISTS", "bf1", "zzz")
    add("BF.EXISTS", "nokey", "a")
    add("BF.MEXISTS", "bf1", "a", "b", "zzz")
    add("BF.MEXISTS", "nokey", "a", "b")
    add("BF.ADD", "newbf", "x")
    add("BF.INFO", "newbf")
    add("BF.INFO", "bf1")
    for f in ("CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"):
        add("BF.INFO", "bf1", f)
    add("BF.INFO", "bf1", "NOSUCH")
    add("BF.INFO", "nokey")
    add("BF.CARD", "bf1")
    add("BF.CARD", "nokey")
    add("BF.INSERT", "bf4", "ITEMS", "a", "b")
    add("BF.INSERT", "bf5", "CAPACITY", "50", "ERROR", "0.001", "ITEMS", "a")
    add("BF.INSERT", "bf6", "NOCREATE", "ITEMS", "a")
    add("BF.INSERT", "bf7", "NONSCALING", "CAPACITY", "2", "ITEMS",
        "a", "b", "c", "d")
    add("BF.INSERT", "bf8", "EXPANSION", "3", "ITEMS", "a")
    add("BF.INSERT", "bf9", "CAPACITY", "10")
    add("BF.INSERT", "bf9", "ITEMS")
    add("BF.INFO", "bf5")
    add("BF.INFO", "bf8")
    add("BF.RESERVE", "bfn", "0.01", "2", "NONSCALING")
    add("BF.MADD", "bfn", "a", "b", "c", "d")
    add("BF.ADD", "bfn", "e")
    add("SET", "str", "v")
    add("BF.ADD", "str", "a")
    add("BF.EXISTS", "str", "a")
    add("BF.MEXISTS", "str", "a")
    add("BF.INFO", "str")
    # ---- CF
    add("CF.RESERVE", "cf1", "1000")
    add("CF.RESERVE", "cf1", "1000")
    add("CF.RESERVE", "cf2", "100", "BUCKETSIZE", "2", "MAXITERATIONS",
        "50", "EXPANSION", "2")
    add("CF.RESERVE", "cfx", "0")
    add("CF.RESERVE", "cfx", "abc")
    add("CF.RESERVE", "cfx", "100", "BUCKETSIZE", "0")
    add("CF.RESERVE", "cfx", "100", "BUCKETSIZE", "300")
    add("CF.RESERVE", "cfx", "100", "MAXITERATIONS", "0")
    add("CF.RESERVE", "cfx", "100", "EXPANSION", "40000")
    add("CF.ADD", "cf1", "a")
    add("CF.ADD", "cf1", "a")
    add("CF.ADDNX", "cf1", "a")
    add("CF.ADDNX", "cf1", "b")
    add("CF.INSERT", "cf1", "ITEMS", "c", "d")
    add("CF.INSERTNX", "cf1", "ITEMS", "c", "e")
    add("CF.INSERT", "cf3", "CAPACITY", "100", "ITEMS", "a")
    add("CF.INSERT", "cf4", "NOCREATE", "ITEMS", "a")
    add("CF.INSERT", "cf1", "ITEMS")
    add("CF.EXISTS", "cf1", "a")
    add("CF.EXISTS", "cf1", "zzz")
    add("CF.EXISTS", "nokey", "a")
    add("CF.MEXISTS", "cf1", "a", "b", "zzz")
    add("CF.COUNT", "cf1", "a")
    add("CF.COUNT", "cf1", "zzz")
    add("CF.COUNT", "nokey", "a")
    add("CF.DEL", "cf1", "a")
    add("CF.DEL", "cf1", "zzz")
    add("CF.DEL", "nokey", "a")
    add("CF.COUNT", "cf1", "a")
    add("CF.INFO", "cf1")
    add("CF.INFO", "cf2")
    add("CF.INFO", "nokey")
    add("CF.COMPACT", "cf1")
    add("CF.COMPACT", "nokey")
    add("CF.ADD", "cfnew", "a")
    add("CF.INFO", "cfnew")
    add("CF.ADD", "str", "a")
    add("CF.EXISTS", "str", "a")
    add("CF.MEXISTS", "str", "a")
    add("CF.COUNT", "str", "a")
    add("CF.ADD", "bf1", "a")
    # ---- CMS
    add("CMS.INITBYDIM", "cm1", "100", "5")
    add("CMS.INITBYDIM", "cm1", "100", "5")
    add("CMS.INITBYPROB", "cm2", "0.001", "0.01")
    add("CMS.INITBYDIM", "cmx", "0", "5")
    add("CMS.INITBYDIM", "cmx", "abc", "5")
    add("CMS.INITBYPROB", "cmx", "0", "0.01")
    add("CMS.INITBYPROB", "cmx", "0.01", "1")
    add("CMS.INCRBY", "cm1", "a", "5", "b", "3")
    add("CMS.INCRBY", "cm1", "a", "-1")
    add("CMS.INCRBY", "cm1", "a", "abc")
    add("CMS.INCRBY", "cm1", "a")
    add("CMS.INCRBY", "nokey", "a", "1")
    add("CMS.QUERY", "cm1", "a", "b", "zzz")
    add("CMS.QUERY", "nokey", "a")
    add("CMS.INFO", "cm1")
    add("CMS.INFO", "cm2")
    add("CMS.INFO", "nokey")
    add("CMS.INITBYDIM", "cm3", "100", "5")
    add("CMS.INCRBY", "cm3", "a", "2")
    add("CMS.MERGE", "cm4", "2", "cm1", "cm3")
    add("CMS.INITBYDIM", "cm4", "100", "5")
    add("CMS.MERGE", "cm4", "2", "cm1", "cm3")
    add("CMS.QUERY", "cm4", "a")
    add("CMS.MERGE", "cm4", "2", "cm1", "cm3", "WEIGHTS", "2", "3")
    add("CMS.QUERY", "cm4", "a")
    add("CMS.MERGE", "cm4", "2", "cm1", "cm2")
    add("CMS.MERGE", "cm4", "3", "cm1", "cm3")
    add("CMS.INCRBY", "cm1", "big", "4294967295")
    add("CMS.INCRBY", "cm1", "big", "1")
    add("CMS.QUERY", "str", "a")
    # ---- TOPK
    add("TOPK.RESERVE", "tk1", "3")
    add("TOPK.RESERVE", "tk1", "3")
    add("TOPK.RESERVE", "tk2", "5", "100", "4", "0.8")
    add("TOPK.RESERVE", "tkx", "0")
    add("TOPK.RESERVE", "tkx", "3", "0", "4", "0.9")
    add("TOPK.RESERVE", "tkx", "3", "8", "4", "1.5")
    add("TOPK.ADD", "tk1", "a", "b", "c", "a", "a")
    add("TOPK.QUERY", "tk1", "a", "zzz")
    add("TOPK.COUNT", "tk1", "a", "zzz")
    add("TOPK.INCRBY", "tk1", "b", "10")
    add("TOPK.INCRBY", "tk1", "b", "abc")
    add("TOPK.INCRBY", "tk1", "b")
    add("TOPK.LIST", "tk1")
    add("TOPK.LIST", "tk1", "WITHCOUNT")
    add("TOPK.INFO", "tk1")
    add("TOPK.INFO", "tk2")
    add("TOPK.INFO", "nokey")
    add("TOPK.ADD", "nokey", "a")
    add("TOPK.QUERY", "nokey", "a")
    add("TOPK.ADD", "str", "a")
    # ---- TDIGEST
    add("TDIGEST.CREATE", "td1")
    add("TDIGEST.CREATE", "td1")
    add("TDIGEST.CREATE", "td2", "COMPRESSION", "200")
    add("TDIGEST.CREATE", "tdx", "COMPRESSION", "0")
    add("TDIGEST.CREATE", "tdx", "COMPRESSION", "abc")
    add("TDIGEST.CREATE", "tdx", "FOO", "1")
    add("TDIGEST.MIN", "td1")
    add("TDIGEST.MAX", "td1")
    add("TDIGEST.QUANTILE", "td1", "0.5")
    add("TDIGEST.CDF", "td1", "1")
    add("TDIGEST.ADD", "td1", *range(1, 101))
    add("TDIGEST.ADD", "td1", "abc")
    add("TDIGEST.ADD", "td1")
    add("TDIGEST.ADD", "nokey", "1")
    add("TDIGEST.MIN", "td1", how="number")
    add("TDIGEST.MAX", "td1", how="number")
    add("TDIGEST.QUANTILE", "td1", "0", "0.5", "0.99", "1", how="approx")
    add("TDIGEST.QUANTILE", "td1", "1.5")
    add("TDIGEST.CDF", "td1", "0", "50", "200", how="approx")
    add("TDIGEST.TRIMMED_MEAN", "td1", "0.1", "0.9", how="approx")
    add("TDIGEST.TRIMMED_MEAN", "td1", "0.9", "0.1")
    add("TDIGEST.RANK", "td1", "0", "50", "200", how="approx")
    add("TDIGEST.REVRANK", "td1", "0", "50", "200", how="approx")
    add("TDIGEST.BYRANK", "td1", "0", "50", "1000", how="approx")
    add("TDIGEST.BYREVRANK", "td1", "0", "50", "1000", how="approx")
    add("TDIGEST.BYRANK", "td1", "-1")
    add("TDIGEST.INFO", "td1", how="number")
    add("TDIGEST.ADD", "td2", "5", "6")
    add("TDIGEST.MERGE", "td3", "2", "td1", "td2")
    add("TDIGEST.MAX", "td3", how="number")
    add("TDIGEST.MERGE", "td3", "2", "td1", "td2", "COMPRESSION", "50",
        "OVERRIDE")
    add("TDIGEST.MERGE", "td3", "3", "td1", "td2")
    add("TDIGEST.MERGE", "td3", "1", "nokey")
    add("TDIGEST.RESET", "td2")
    add("TDIGEST.MIN", "td2")
    add("TDIGEST.INFO", "nokey")
    add("TDIGEST.QUANTILE", "str", "0.5")
    # ---- cross-type
    add("BF.EXISTS", "cf1", "a")
    add("CF.EXISTS", "bf1", "a")
    add("CMS.QUERY", "tk1", "a")
    add("TOPK.QUERY", "cm1", "a")
    add("TDIGEST.MIN", "bf1")
    add("TYPE", "bf1")
    add("TYPE", "cf1")
    add("TYPE", "cm1")
    add("TYPE", "tk1")
    add("TYPE", "td1")
    return t


NUM = re.compile(rb"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)", re.I)
BULK = re.compile(rb"\$\d+\r\n")


def numbers_equal(a, b, rel):
    """The replies equal but for their numbers, which agree pairwise
    within rel (a bulk string's length goes with its digits, so it is
    left out)."""
    a, b = BULK.sub(b"$", a), BULK.sub(b"$", b)
    if NUM.sub(b"#", a) != NUM.sub(b"#", b):
        return False
    for x, y in zip(NUM.findall(a), NUM.findall(b)):
        fx, fy = float(x), float(y)
        if fx == fy or (fx != fx and fy != fy):
            continue
        if abs(fx - fy) > rel * max(abs(fx), abs(fy)):
            return False
    return True


def same(a, b, how):
    if a == b:
        return True
    if how == "number":
        return numbers_equal(a, b, 1e-6)
    if how == "approx":
        return numbers_equal(a, b, 0.01)
    return False


def run(amq_port, rb_port, proto, show_all):
    a, r = Raw(amq_port), Raw(rb_port)
    if proto == 3:
        a.ask(["HELLO", "3"])
        r.ask(["HELLO", "3"])
    a.ask(["FLUSHALL"])
    r.ask(["FLUSHALL"])
    total = diff = 0
    for cmd, how in transcript():
        x, y = a.ask(cmd), r.ask(cmd)
        total += 1
        if not same(x, y, how):
            diff += 1
            print("RESP%d %s\n    amq:        %r\n    RedisBloom: %r" %
                  (proto, " ".join(cmd)[:100], x[:300], y[:300]))
        elif show_all:
            print("RESP%d %s: %r" % (proto, " ".join(cmd)[:100], x[:120]))
    a.close()
    r.close()
    return total, diff


def populate():
    """Keys RedisBloom makes, of every type, with more than a first link."""
    cmds = [["BF.RESERVE", "mbf", "0.01", "100"],
            ["BF.RESERVE", "mbf3", "0.001", "50", "EXPANSION", "3"],
            ["CF.RESERVE", "mcf", "200", "BUCKETSIZE", "4"],
            ["CMS.INITBYDIM", "mcms", "200", "5"],
            ["TOPK.RESERVE", "mtk", "5", "50", "4", "0.9"],
            ["TDIGEST.CREATE", "mtd", "COMPRESSION", "100"]]
    for i in range(0, 1000, 100):
        batch = ["i%d" % j for j in range(i, i + 100)]
        cmds.append(["BF.MADD", "mbf"] + batch)
        cmds.append(["BF.MADD", "mbf3"] + batch)
        cmds.append(["CF.INSERT", "mcf", "ITEMS"] + batch[:60])
        cmds.append(["CMS.INCRBY", "mcms"] +
                    [x for j, it in enumerate(batch) for x in (it, str(j))])
        cmds.append(["TOPK.ADD", "mtk"] + batch[:10] * (1 + i // 100))
        cmds.append(["TDIGEST.ADD", "mtd"] +
                    [str((j * 37) % 1000 / 7.0) for j in range(i, i + 100)])
    cmds.append(["CF.DEL", "mcf", "i5"])
    return cmds


def queries():
    probe = ["i%d" % j for j in range(0, 1200, 7)]
    q = [(["BF.MEXISTS", "mbf"] + probe, "exact"),
         (["BF.MEXISTS", "mbf3"] + probe, "exact"),
         (["BF.INFO", "mbf"], "exact"), (["BF.INFO", "mbf3"], "exact"),
         (["BF.CARD", "mbf"], "exact"),
         (["CF.MEXISTS", "mcf"] + probe, "exact"),
         (["CF.INFO", "mcf"], "exact"),
         (["CMS.QUERY", "mcms"] + probe, "exact"),
         (["CMS.INFO", "mcms"], "exact"),
         (["TOPK.LIST", "mtk", "WITHCOUNT"], "exact"),
         (["TOPK.QUERY", "mtk"] + probe[:20], "exact"),
         (["TOPK.INFO", "mtk"], "number"),
         (["TDIGEST.QUANTILE", "mtd", "0.01", "0.5", "0.99"], "approx"),
         (["TDIGEST.MIN", "mtd"], "number"), (["TDIGEST.MAX", "mtd"],
                                               "number")]
    for c in ("CF.COUNT",):
        q += [([c, "mcf", x], "exact") for x in probe[:30]]
    return q


def migration(args):
    """RedisBloom's own RDB, DUMP payloads and SCANDUMP chunks, read by
    the module: every query answered as RedisBloom answered it. Returns
    (checks, different)."""
    import shutil
    import tempfile
    keep = tempfile.mkdtemp(prefix="amq-rb-rdb-")
    rb = Server(args.redisbloom)
    try:
        r = Raw(rb.port)
        for cmd in populate():
            r.ask(cmd)
        want = [r.ask(q) for q, _ in queries()]
        r.close()
        dumps = {k: rb.client.dump(k) for k in
                 ("mbf", "mbf3", "mcf", "mcms", "mtk", "mtd")}
        chunks = {}
        for cmd, key in (("BF", "mbf3"), ("CF", "mcf")):
            it, out = 0, []
            while True:
                it, data = rb.client.execute_command(cmd + ".SCANDUMP", key,
                                                     it)
                if it == 0:
                    break
                out.append((it, data))
            chunks[(cmd, key)] = out
        rb.client.save()
        shutil.copy(os.path.join(rb.dir, "dump.rdb"), keep)
    finally:
        rb.close()
    total = diff = 0

    def compare(where, port):
        nonlocal total, diff
        a = Raw(port)
        for (q, how), w in zip(queries(), want):
            got = a.ask(q)
            total += 1
            if not same(got, w, how):
                diff += 1
                print("%s %s\n    amq:        %r\n    RedisBloom: %r" %
                      (where, " ".join(q)[:80], got[:200], w[:200]))
        a.close()

    amq = Server(args.module, workdir=keep)
    try:
        compare("RDB", amq.port)
        amq.client.flushall()
        for k, d in dumps.items():
            amq.client.restore(k, 0, d)
        compare("RESTORE", amq.port)
        for (cmd, key), out in chunks.items():
            amq.client.delete(key)
            for it, data in out:
                amq.client.execute_command(cmd + ".LOADCHUNK", key, it, data)
        compare("LOADCHUNK", amq.port)
    finally:
        amq.close()
        shutil.rmtree(keep, ignore_errors=True)
    return total, diff


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--module", required=True, help="amq-redis.so")
    ap.add_argument("--redisbloom", required=True,
                    help="a RedisBloom module (redisbloom.so) you built")
    ap.add_argument("--show-all", action="store_true")
    args = ap.parse_args()
    if not os.path.isfile(args.module):
        sys.exit("no module at %s" % args.module)
    if not os.path.isfile(args.redisbloom):
        sys.exit("no module at %s" % args.redisbloom)
    amq = Server(args.module)
    rb = Server(args.redisbloom)
    try:
        rows = [(p,) + run(amq.port, rb.port, p, args.show_all)
                for p in (2, 3)]
    finally:
        amq.close()
        rb.close()
    for p, total, diff in rows:
        print("RESP%d: %d commands, %d identical, %d different" %
              (p, total, total - diff, diff))
    total, diff = migration(args)
    print("migrated (RDB, RESTORE, LOADCHUNK): %d queries, %d answered as "
          "RedisBloom did, %d not" % (total, total - diff, diff))


if __name__ == "__main__":
    main()
