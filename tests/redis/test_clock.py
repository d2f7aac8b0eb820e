"""AMQ.CLOCK.*: Bloom and vector clocks as keys in redis-server.

 1. Replies and errors: NEW's kinds and refusals, TICK and MERGE answer
    the new timestamp, GET, COMPARE's order and probabilities (Bloom:
    before/after carry them, concurrent is certain; vector: exact), the
    HISTORY form, JOIN/LEAVE, INFO, a missing key, another type.
 2. A timestamp that is corrupt, truncated or another clock's is refused
    with its reason, and MERGE of a list with one bad timestamp changes
    nothing.
 3. The orders against a reference: random events and messages between
    six keys, each verdict checked against exact vector clocks kept by the
    test (no ordered pair is ever called concurrent; vector keys agree
    with the reference exactly).
 4. DEBUG RELOAD, DUMP/RESTORE, AMQ.SCANDUMP/LOADCHUNK, a restart from
    the RDB file and from the AOF: the same timestamp.
 5. Replication: the replica's timestamps equal the primary's.
"""
import random

from harness import (Server, aof_on, chunk_copy, primary_and_replica,
                     restart_from_aof, run, wait_synced)



def info(r, key):
    v = r.execute_command("AMQ.CLOCK.INFO", key)
    if isinstance(v, dict):
        return {k.decode() if isinstance(k, bytes) else k: x
                for k, x in v.items()}
    return {v[i].decode(): v[i + 1] for i in range(0, len(v), 2)}


def order(r, key, ts, *hist):
    o, fp_paper, fp_exact, age = r.execute_command("AMQ.CLOCK.COMPARE", key,
                                                   ts, *hist)
    return o.decode(), float(fp_paper), float(fp_exact), age


def test_replies(c, r):
    x = r.execute_command
    c.ok(x("AMQ.CLOCK.NEW", "a", "BLOOM", 256, 3, "HISTORY", 8) == b"OK",
         "NEW BLOOM")
    x("AMQ.CLOCK.NEW", "b", "BLOOM", 256, 3)
    c.raises(lambda: x("AMQ.CLOCK.NEW", "a", "BLOOM", 256, 3), "exists",
             "NEW on an existing key")
    c.raises(lambda: x("AMQ.CLOCK.NEW", "z", "BLOOM", 0, 3), "m must be",
             "m = 0")
    c.raises(lambda: x("AMQ.CLOCK.NEW", "z", "BLOOM", 4, 5), "k must be",
             "k > m")
    c.raises(lambda: x("AMQ.CLOCK.NEW", "z", "BLOOM", 64, 2, "HISTORY",
                       70000), "HISTORY", "HISTORY too large")
    c.raises(lambda: x("AMQ.CLOCK.NEW", "z", "LAMPORT", 1), "BLOOM or VECTOR",
             "an unknown kind")
    c.raises(lambda: x("AMQ.CLOCK.NEW", "z", "VECTOR", -1), "node",
             "a negative node")
    c.raises(lambda: x("AMQ.CLOCK.TICK", "a"), "names its event",
             "a Bloom tick without its event")
    c.raises(lambda: x("AMQ.CLOCK.GET", "nokey"), "not found", "a missing key")
    r.set("str", "v")
    c.raises(lambda: x("AMQ.CLOCK.GET", "str"), "WRONGTYPE", "another type")
    c.ok(r.exists("z") == 0, "refused NEWs made nothing")

    ta = x("AMQ.CLOCK.TICK", "a", "a-1")
    c.ok(isinstance(ta, bytes) and ta == x("AMQ.CLOCK.GET", "a"),
         "TICK answers the new timestamp, as GET does")
    tb = x("AMQ.CLOCK.MERGE", "b", ta)
    c.ok(order(r, "b", ta)[0] == "equal", "b merged a's only timestamp")
    tb = x("AMQ.CLOCK.TICK", "b", "b-1")
    o, fpp, fpe, age = order(r, "a", tb)
    c.ok(o == "before" and 0 < fpe < 1 and 0 < fpp <= 1 and age == 0,
         "a before b, with its probabilities: %r" % ((o, fpp, fpe),))
    c.ok(order(r, "b", ta)[0] == "after", "b after a")
    ta = x("AMQ.CLOCK.TICK", "a", "a-2")
    o, fpp, fpe, _ = order(r, "a", tb)
    c.ok(o == "concurrent" and fpp == 0 and fpe == 0,
         "a and b concurrent, certain")
    # the history: a's older timestamps still dominate b's first one
    x("AMQ.CLOCK.NEW", "h", "BLOOM", 256, 3, "HISTORY", 16)
    first = x("AMQ.CLOCK.TICK", "h", "h-0")
    for i in range(1, 6):
        x("AMQ.CLOCK.TICK", "h", "h-%d" % i)
    plain = order(r, "h", first)
    hist = order(r, "h", first, "HISTORY")
    c.ok(plain[0] == hist[0] == "after" and hist[3] == 5 and
         hist[2] <= plain[2],
         "HISTORY finds the oldest dominating step: %r %r" % (plain, hist))

    # vector clocks: exact
    x("AMQ.CLOCK.NEW", "v1", "VECTOR", 1)
    x("AMQ.CLOCK.NEW", "v2", "VECTOR", 2)
    t1 = x("AMQ.CLOCK.TICK", "v1")
    x("AMQ.CLOCK.MERGE", "v2", t1)
    t2 = x("AMQ.CLOCK.TICK", "v2")
    c.ok(order(r, "v1", t2) == ("before", 0.0, 0.0, 0),
         "vector: before, exact")
    c.raises(lambda: x("AMQ.CLOCK.MERGE", "a", t1), "another clock",
             "a vector timestamp into a Bloom clock")
    x("AMQ.CLOCK.NEW", "d1", "VECTOR", 7, "DENSE")
    c.ok(x("AMQ.CLOCK.JOIN", "d1", 8) == b"OK" and
         info(r, "d1")["Entries"] == 2, "JOIN a dense clock")
    c.raises(lambda: x("AMQ.CLOCK.LEAVE", "d1", 7), "own node",
             "LEAVE of the clock's own node")
    c.ok(x("AMQ.CLOCK.LEAVE", "d1", 8) == b"OK" and
         info(r, "d1")["Entries"] == 1, "LEAVE")
    i = info(r, "a")
    c.ok(i["Kind"] == b"bloom" and i["Cells"] == 256 and i["Hashes"] == 3 and
         i["Cell bits"] == 8 and i["History length"] >= 2 and
         i["Timestamp bytes"] == len(ta) and i["Memory"] > 256,
         "INFO: %r" % i)

    # bad timestamps leave the key as it was
    before = x("AMQ.CLOCK.GET", "b")
    bad = bytearray(ta)
    bad[len(bad) // 2] ^= 0x40
    c.raises(lambda: x("AMQ.CLOCK.MERGE", "b", bytes(bad)), "not a clock",
             "a flipped bit")
    c.raises(lambda: x("AMQ.CLOCK.MERGE", "b", ta[:-3]), "not a clock",
             "a truncated timestamp")
    c.raises(lambda: x("AMQ.CLOCK.COMPARE", "b", b""), "not a clock",
             "an empty timestamp")
    x("AMQ.CLOCK.NEW", "other", "BLOOM", 128, 3)
    c.raises(lambda: x("AMQ.CLOCK.MERGE", "b",
                       x("AMQ.CLOCK.TICK", "other", "o")), "another clock",
             "another m")
    x("AMQ.CLOCK.NEW", "seeded", "BLOOM", 256, 3, "SEED", 9)
    c.raises(lambda: x("AMQ.CLOCK.COMPARE", "b",
                       x("AMQ.CLOCK.TICK", "seeded", "s")), "another clock",
             "another hasher seed")
    c.raises(lambda: x("AMQ.CLOCK.MERGE", "b", ta, bytes(bad)), "not a clock",
             "a list with one bad timestamp")
    c.ok(x("AMQ.CLOCK.GET", "b") == before, "b unchanged by the refusals")


def test_against_truth(c, r):
    """Random ticks and messages between six Bloom keys and six vector
    keys; the test keeps exact vector clocks and checks every COMPARE."""
    x = r.execute_command
    rnd = random.Random(5)
    n = 6
    truth = [dict() for _ in range(n)]
    for i in range(n):
        x("AMQ.CLOCK.NEW", "tb%d" % i, "BLOOM", 64, 2)
        x("AMQ.CLOCK.NEW", "tv%d" % i, "VECTOR", i)
    stamps = []  # (bloom ts, vector ts, truth)
    for step in range(600):
        i = rnd.randrange(n)
        if rnd.random() < 0.6:
            truth[i][i] = truth[i].get(i, 0) + 1
            tb = x("AMQ.CLOCK.TICK", "tb%d" % i, "e%d-%d" % (i, step))
            tv = x("AMQ.CLOCK.TICK", "tv%d" % i)
        else:
            j = rnd.randrange(n)
            if not stamps or j == i:
                continue
            sb, sv, st = stamps[rnd.randrange(len(stamps))]
            tb = x("AMQ.CLOCK.MERGE", "tb%d" % i, sb)
            tv = x("AMQ.CLOCK.MERGE", "tv%d" % i, sv)
            for k, v in st.items():
                truth[i][k] = max(truth[i].get(k, 0), v)
        stamps.append((tb, tv, dict(truth[i])))
    wrong_vector = called_concurrent = false_order = ordered = 0
    for i in range(n):
        for sb, sv, st in stamps[::3]:
            mine = truth[i]
            le = all(v <= st.get(k, 0) for k, v in mine.items())
            ge = all(v <= mine.get(k, 0) for k, v in st.items())
            want = "equal" if le and ge else "before" if le else \
                "after" if ge else "concurrent"
            wrong_vector += order(r, "tv%d" % i, sv)[0] != want
            got = order(r, "tb%d" % i, sb)[0]
            if want != "concurrent":
                ordered += 1
                called_concurrent += got == "concurrent"
            else:
                false_order += got != "concurrent"
    c.ok(wrong_vector == 0, "vector keys exact: %d wrong" % wrong_vector)
    c.ok(ordered > 100 and called_concurrent == 0,
         "no ordered pair called concurrent (%d ordered pairs)" % ordered)
    print("Bloom keys m=64 k=2: %d concurrent pairs called ordered" %
          false_order)


def test_persistence(c, srv):
    r = srv.client
    keys = ["a", "b", "v1", "d1", "h"]
    want = [r.execute_command("AMQ.CLOCK.GET", k) for k in keys]

    def same(cl, names=keys):
        return [cl.execute_command("AMQ.CLOCK.GET", k) for k in names] == want

    r.execute_command("DEBUG", "RELOAD")
    c.ok(same(r), "DEBUG RELOAD")
    r.restore("a2", 0, r.dump("a"))
    c.ok(r.execute_command("AMQ.CLOCK.GET", "a2") == want[0], "DUMP/RESTORE")
    chunk_copy(r, "h", "h3")
    c.ok(r.execute_command("AMQ.CLOCK.GET", "h3") == want[4],
         "AMQ.SCANDUMP/LOADCHUNK")
    c.ok(info(r, "h3")["History length"] <= 1,
         "the recorded history is not in the blob")
    r.save()
    srv.restart()
    c.ok(same(srv.client), "restart from the RDB file")
    r = srv.client
    aof_on(r)
    want[0] = r.execute_command("AMQ.CLOCK.TICK", "a", "after-aof")
    restart_from_aof(srv)
    c.ok(same(srv.client), "restart from the AOF")


def test_replication(c, args, servers):
    pr = primary_and_replica(args.module, servers)
    c.ok(pr is not None, "replica synced")
    if pr is None:
        return
    p, rep = pr
    p.execute_command("AMQ.CLOCK.NEW", "r1", "BLOOM", 128, 3, "SEED", 4)
    p.execute_command("AMQ.CLOCK.NEW", "r2", "BLOOM", 128, 3, "SEED", 4)
    for i in range(50):
        t = p.execute_command("AMQ.CLOCK.TICK", "r1", "ev%d" % i)
        if i % 7 == 0:
            p.execute_command("AMQ.CLOCK.MERGE", "r2", t)
    p.execute_command("WAIT", 1, 5000)
    c.ok(all(p.execute_command("AMQ.CLOCK.GET", k) ==
             rep.execute_command("AMQ.CLOCK.GET", k) for k in ("r1", "r2")),
         "the replica holds the primary's timestamps")
    c.ok(wait_synced(rep), "replica still synced")


def main(args, c, servers):
    srv = Server(args.module)
    servers.append(srv)
    test_replies(c, srv.client)
    test_against_truth(c, srv.client)
    test_persistence(c, srv)
    test_replication(c, args, servers)
    c.ok(all(s.alive() for s in servers if s.proc.poll() is None),
         "servers alive")


if __name__ == "__main__":
    run(main)
