"""AMQ.WINDOW.*: sliding-window filter keys in redis-server.

 1. Replies and errors of every command: RESERVE's options and refusals,
    ADD/MADD's 1/0, EXISTS/MEXISTS, PTTL, INFO, AT parsing (an item named
    AT), a missing key, another type, time that never runs backwards.
 2. A time window at explicit times: every item answers at every AT up to
    its add + span - 1; items past (G + 1) / G spans answer present at
    most at about the error rate; PTTL agrees with the answers.
 3. A count window over the last N adds.
 4. DEBUG RELOAD, DUMP/RESTORE, AMQ.SCANDUMP/LOADCHUNK, a restart from
    the RDB file and from the AOF: identical answers and INFO.
 5. Replication: MADD without AT on the primary travels to the replica
    with the primary's time (MONITOR on the replica sees AT), so both
    answer alike at any AT and report the same Now; after the primary is
    killed, the promoted replica answers and takes writes.
 6. MEMORY USAGE of a full window against a BF.RESERVE key of the same
    capacity and error: at most 1.45 times (the structure's own goal is
    1.3 from 10^5 keys; the key's headers add a little).
"""
import random
import signal
import socket
import time

import redis

from harness import Server, aof_on, chunk_copy, restart_from_aof, run, \
    wait_synced

ERR = redis.ResponseError


def info(r, key, *at):
    v = r.execute_command("AMQ.WINDOW.INFO", key, *at)
    if isinstance(v, dict):
        return {k.decode() if isinstance(k, bytes) else k: x
                for k, x in v.items()}
    return {v[i].decode(): v[i + 1] for i in range(0, len(v), 2)}


def mexists(r, key, items, at):
    out = []
    for i in range(0, len(items), 1000):
        out += r.execute_command("AMQ.WINDOW.MEXISTS", key, "AT", at,
                                 *items[i:i + 1000])
    return out


def test_replies(c, r):
    x = r.execute_command
    c.ok(x("AMQ.WINDOW.RESERVE", "w", "MS", 1000, "CAPACITY", 500) == b"OK",
         "RESERVE MS")
    c.ok(x("AMQ.WINDOW.ADD", "w", "AT", 10, "a") == 1, "a new item: 1")
    c.ok(x("AMQ.WINDOW.ADD", "w", "AT", 20, "a") == 0, "again: 0")
    c.ok(x("AMQ.WINDOW.MADD", "w", "AT", 30, "b", "a", "c") == [1, 0, 1],
         "MADD")
    c.ok(x("AMQ.WINDOW.EXISTS", "w", "AT", 30, "b") == 1 and
         x("AMQ.WINDOW.EXISTS", "w", "AT", 30, "zzz") == 0, "EXISTS")
    c.ok(x("AMQ.WINDOW.MEXISTS", "w", "AT", 30, "a", "b", "zzz") == [1, 1, 0],
         "MEXISTS")
    # an item spelled AT (on another key: without AT the server's clock
    # moves the key's time to now)
    x("AMQ.WINDOW.RESERVE", "w2", "MS", 1000, "CAPACITY", 500)
    c.ok(x("AMQ.WINDOW.ADD", "w2", "AT") == 1 and
         x("AMQ.WINDOW.EXISTS", "w2", "AT") == 1 and
         x("AMQ.WINDOW.MADD", "w2", "AT", "x") == [0, 1] and
         x("AMQ.WINDOW.ADD", "w2", "AT", 0, "AT") == 0 and
         x("AMQ.WINDOW.EXISTS", "w2", "AT", 0, "x") == 1,
         "an item named AT: alone, or after an explicit AT")
    c.ok(info(r, "w2")["Now"] > 10 ** 12, "without AT, the server's clock")
    x("AMQ.WINDOW.ADD", "w", "AT", 40, "d")
    # PTTL: a to answer until its newest add + a span at least
    pttl = x("AMQ.WINDOW.PTTL", "w", "AT", 30, "a")
    c.ok(1000 - 20 - 1 <= pttl + 30 - 20 < 1000 + 1000 // 8 * 2,
         "PTTL of a: %r" % pttl)
    c.ok(x("AMQ.WINDOW.PTTL", "w", "AT", 30, "zzz") == -2 and
         x("AMQ.WINDOW.PTTL", "nokey", "a") == -2, "PTTL of absent: -2")
    i = info(r, "w", "AT", 30)
    c.ok(i["Clock"] == b"ms" and i["Span"] == 1000 and
         i["Capacity"] == 500 and i["Generations"] == 8 and
         i["Generation length"] == 125 and i["Seal"] == b"ribbon" and
         i["Live items"] == 4 and i["Pieces"] == 1 and
         0 < float(i["Error bound"]) <= 0.01 and i["Memory"] > 0,
         "INFO: %r" % i)
    # time never runs backwards: the clock is now 40
    c.ok(info(r, "w", "AT", 5)["Now"] == 40, "an earlier AT reads at 40")
    c.ok(x("AMQ.WINDOW.MEXISTS", "nokey", "a", "b") == [0, 0],
         "a missing key answers 0")
    r.set("str", "v")
    errs = [
        (("AMQ.WINDOW.ADD", "nokey", "a"), "not found"),
        (("AMQ.WINDOW.INFO", "nokey"), "not found"),
        (("AMQ.WINDOW.ADD", "str", "a"), "WRONGTYPE"),
        (("AMQ.WINDOW.EXISTS", "str", "a"), "WRONGTYPE"),
        (("AMQ.WINDOW.RESERVE", "w", "MS", 5, "CAPACITY", 5), "exists"),
        (("AMQ.WINDOW.RESERVE", "n", "MS", 5), "CAPACITY"),
        (("AMQ.WINDOW.RESERVE", "n", "CAPACITY", 5), "required"),
        (("AMQ.WINDOW.RESERVE", "n", "MS", 0, "CAPACITY", 5), "span"),
        (("AMQ.WINDOW.RESERVE", "n", "MS", -5, "CAPACITY", 5), "span"),
        (("AMQ.WINDOW.RESERVE", "n", "ITEMS", 5, "ERROR", 0.7), "ERROR"),
        (("AMQ.WINDOW.RESERVE", "n", "ITEMS", 5, "GENERATIONS", 65),
         "GENERATIONS"),
        (("AMQ.WINDOW.RESERVE", "n", "ITEMS", 5, "SEAL", "XOR"), "SEAL"),
        (("AMQ.WINDOW.RESERVE", "n", "ITEMS", 5, "ITEMS", 6), "syntax"),
        (("AMQ.WINDOW.RESERVE", "n", "ITEMS", 5, "BOGUS", 6), "syntax"),
        (("AMQ.WINDOW.RESERVE", "n", "ITEMS"), "wrong number"),
        (("AMQ.WINDOW.ADD", "w", "AT", "soon", "a"), "AT must be"),
        (("AMQ.WINDOW.ADD", "w", "AT", -1, "a"), "AT must be"),
        (("AMQ.WINDOW.ADD", "w", "a", "b"), "wrong number"),
        (("AMQ.WINDOW.ADD", "w"), "wrong number"),
        (("AMQ.WINDOW.EXISTS", "w", "a", "b"), "wrong number"),
        (("AMQ.WINDOW.PTTL", "w", "a", "b"), "wrong number"),
        (("AMQ.WINDOW.INFO", "w", "AT"), "wrong number"),
    ]
    for args, frag in errs:
        c.raises(lambda: x(*args), frag, "%r" % (args,))
    c.ok(not r.exists("n"), "refused RESERVEs made no key")
    r.delete("w", "w2", "str")


def test_time_window(c, r):
    rnd = random.Random(5)
    span, gens = 10_000, 8
    length = span // gens
    r.execute_command("AMQ.WINDOW.RESERVE", "t", "MS", span, "CAPACITY",
                      20_000, "ERROR", 0.01)
    # 2 items per millisecond of 40 000: 20 000 per window
    added = []
    for t in range(0, 40_000, 50):
        items = ["t%d-%d" % (t, k) for k in range(100)]
        r.execute_command("AMQ.WINDOW.MADD", "t", "AT", t, *items)
        added.append((t, items))
    now = 40_000 - 50
    inside = [x for t, its in added if now - t < span for x in its]
    gone = [x for t, its in added if now - t >= (gens + 1) * length
            for x in its][:4000]
    c.ok(all(mexists(r, "t", inside, now)),
         "%d items of the last span all answer" % len(inside))
    fp = sum(mexists(r, "t", gone, now))
    bound = float(info(r, "t", "AT", now)["Error bound"])
    c.ok(bound <= 0.01 and fp <= 3 * 0.01 * len(gone),
         "forgotten items: %d of %d answer (bound %.4f)" %
         (fp, len(gone), bound))
    fresh = ["never-%d" % i for i in range(4000)]
    fpf = sum(mexists(r, "t", fresh, now))
    c.ok(fpf <= 3 * 0.01 * len(fresh), "never added: %d of %d" %
         (fpf, len(fresh)))
    t0, items = added[-1]
    sample = rnd.sample(items, 10)
    ok = True
    for x in sample:
        left = r.execute_command("AMQ.WINDOW.PTTL", "t", "AT", now, x)
        ok &= left >= t0 + span - 1 - now
        ok &= r.execute_command("AMQ.WINDOW.EXISTS", "t", "AT",
                                now + left, x) == 1
    c.ok(ok, "PTTL: at least the span from the add, and answering then")
    later = now + (gens + 1) * length + span
    c.ok(sum(mexists(r, "t", inside, later)) <= 3 * 0.01 * len(inside) + 5,
         "a span and more later the same items are forgotten")
    c.ok(info(r, "t", "AT", now)["Now"] == now, "reads change nothing")


def test_count_window(c, r):
    r.execute_command("AMQ.WINDOW.RESERVE", "n", "ITEMS", 1000,
                      "GENERATIONS", 4)
    items = ["n%d" % i for i in range(5000)]
    for i in range(0, 5000, 500):
        r.execute_command("AMQ.WINDOW.MADD", "n", *items[i:i + 500])
    c.ok(all(mexists(r, "n", items[-1000:], 0)), "the last 1000 adds answer")
    gone = items[:5000 - 1250]
    c.ok(sum(mexists(r, "n", gone, 0)) <= 0.03 * len(gone),
         "older adds are forgotten")
    i = info(r, "n")
    c.ok(i["Clock"] == b"items" and i["Now"] == 5000, "INFO: %r" % i)
    c.ok(r.execute_command("AMQ.WINDOW.PTTL", "n", items[-1]) >= 999,
         "PTTL counts adds")


def snapshot(r, key, probe, at):
    i = info(r, key, "AT", at)
    i.pop("Memory")
    return mexists(r, key, probe, at), i


def test_persistence(c, srv, probe):
    r = srv.client
    want = snapshot(r, "t", probe, 39_950)
    r.execute_command("DEBUG", "RELOAD")
    c.ok(snapshot(r, "t", probe, 39_950) == want, "DEBUG RELOAD")
    r.restore("t2", 0, r.dump("t"))
    c.ok(snapshot(r, "t2", probe, 39_950) == want, "DUMP/RESTORE")
    chunk_copy(r, "t", "t3")
    c.ok(snapshot(r, "t3", probe, 39_950) == want,
         "AMQ.SCANDUMP/LOADCHUNK")
    r.delete("t2", "t3")
    r.save()
    srv.restart()
    c.ok(snapshot(srv.client, "t", probe, 39_950) == want,
         "restart from the RDB file")
    r = srv.client
    aof_on(r)
    r.execute_command("AMQ.WINDOW.MADD", "t", "AT", 39_960, "after-aof")
    want2 = snapshot(r, "t", probe + ["after-aof"], 39_960)
    restart_from_aof(srv)
    c.ok(snapshot(srv.client, "t", probe + ["after-aof"], 39_960) == want2,
         "restart from the AOF")


def monitor_lines(port, n_cmds, fn):
    """Lines MONITOR shows on the server at port while fn() runs."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"MONITOR\r\n")
    time.sleep(0.2)
    fn()
    time.sleep(0.5)
    s.settimeout(1)
    data = b""
    try:
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    s.close()
    return data.decode(errors="replace").splitlines()


def test_replication(c, args, servers):
    prim = Server(args.module)
    servers.append(prim)
    rep = Server(args.module, args=["--replicaof", "127.0.0.1",
                                    str(prim.port)])
    servers.append(rep)
    c.ok(wait_synced(rep.client), "the replica synced")
    p, q = prim.client, rep.client
    p.execute_command("AMQ.WINDOW.RESERVE", "live", "MS", 2000, "CAPACITY",
                      5000)
    items = ["live%d" % i for i in range(3000)]

    def writes():
        for i in range(0, 3000, 300):
            p.execute_command("AMQ.WINDOW.MADD", "live", *items[i:i + 300])
            time.sleep(0.1)
        p.execute_command("WAIT", 1, 5000)

    lines = monitor_lines(rep.port, 10, writes)
    madds = [ln for ln in lines if "AMQ.WINDOW.MADD" in ln.upper()]
    c.ok(len(madds) == 10 and all('"AT"' in ln for ln in madds),
         "the replica ran %d MADDs, each with the primary's AT" % len(madds))
    ats = [int(ln.split('"AT" "')[1].split('"')[0]) for ln in madds
           if '"AT" "' in ln]
    last = max(ats or [0])
    # INFO at time 0 reads at the key's own clock: the last write's time
    pi, qi = info(p, "live", "AT", 0), info(q, "live", "AT", 0)
    c.ok(pi["Now"] == last, "the key's clock is the last AT: %r %r" %
         (pi["Now"], last))
    c.ok(pi["Now"] == qi["Now"] and pi["Live items"] == qi["Live items"] and
         pi["Pieces"] == qi["Pieces"], "INFO on both: %r %r" % (pi, qi))
    probe = items + ["none%d" % i for i in range(2000)]
    ok = True
    for at in (pi["Now"], pi["Now"] + 1000, pi["Now"] + 2300,
               pi["Now"] + 10_000):
        ok &= mexists(p, "live", probe, at) == mexists(q, "live", probe, at)
    c.ok(ok, "primary and replica answer alike at every AT")
    prim.stop(signal.SIGKILL)
    q.execute_command("REPLICAOF", "NO", "ONE")
    c.ok(all(mexists(q, "live", items, last)),
         "the promoted replica answers every item")
    c.ok(q.execute_command("AMQ.WINDOW.ADD", "live", "fresh") == 1,
         "the promoted replica takes writes")


def test_memory(c, r):
    n = 100_000
    r.execute_command("AMQ.WINDOW.RESERVE", "m", "ITEMS", n, "ERROR", 0.01)
    r.execute_command("BF.RESERVE", "b", 0.01, n, "NONSCALING")
    most = 0
    items = ["m%d" % i for i in range(2 * n)]
    for i in range(0, 2 * n, 5000):
        r.execute_command("AMQ.WINDOW.MADD", "m", *items[i:i + 5000])
        if i < n:
            r.execute_command("BF.MADD", "b", *items[i:i + 5000])
        most = max(most, r.memory_usage("m"))
    bf = r.memory_usage("b")
    print("MEMORY USAGE: window %d B at most, BF %d B: %.3f x" %
          (most, bf, most / bf))
    c.ok(most <= 1.45 * bf, "the window takes %.3f x the BF" % (most / bf))


def main(args, c, servers):
    srv = Server(args.module)
    servers.append(srv)
    r = srv.client
    test_replies(c, r)
    test_time_window(c, r)
    test_count_window(c, r)
    probe = ["t39900-%d" % k for k in range(100)] + \
        ["never-%d" % i for i in range(1000)]
    test_persistence(c, srv, probe)
    test_memory(c, srv.client)
    test_replication(c, args, servers)
    c.ok(all(s.alive() for s in servers if s.proc.poll() is None),
         "servers alive")


if __name__ == "__main__":
    run(main)
