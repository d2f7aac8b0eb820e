"""AMQ.CASCADE.*: learned Bloom filter cascades in amq-redis.so.

Key sets with learnable structure are made here; `amq cascade train` turns
them into cascade frames (a Bloom-residual one with an insert buffer, a
counting-residual one whose deletes remove, and one with a worst-case cap,
whose initial filter can answer alone). Checked: no member answers 0,
the false-positive rate on fresh non-members is within the certified bound
plus a binomial margin, the module answers as `amq cascade query` on the
same frame, AMQ.CASCADE.DUMP round-trips (the same bytes; the CLI reads
it), ADD/DEL and their "rebuild needed" limits, persistence (DEBUG RELOAD,
DUMP/RESTORE, SCANDUMP/LOADCHUNK, COPY, RDB and AOF restarts), a
replica's answers and digest,
RESP3, and bad input (corrupt frames, arity, wrong types) leaving no key.

The audit: the test acts as the application (it queries, pulls
AMQ.CASCADE.SAMPLES and reports AMQ.CASCADE.TRUTH from its own member
set). Queries from the training's distribution leave the key alone;
queries shaped like members but not members (a shift the certify split
never saw) break the learned bound, and the key switches itself to its
initial filter: the module-class notification arrives on the primary and
on its replica, the replica answers in fallback too, the rate on fresh
shifted queries is within the worst-case cap (a binomial tail at 1e-6),
and the fallback survives RDB and AOF restarts. A cascade without an
initial filter publishes amq.cascade.violated instead and keeps its
route; bad arguments are refused with the key unchanged.

Run: test_cascade.py --module build/modules/redis/amq-redis.so --amq build/amq
"""
import math
import os
import random
import subprocess
import tempfile
import time

import redis
from harness import Server, chunk_copy, primary_and_replica, resp3, run

AUX = 100  # the insert buffer's capacity (amq cascade train --aux)


def rand_word(rnd, n):
    return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789")
                   for _ in range(n))


def member(rnd):
    """Members: mostly shop user hosts, some opaque ids."""
    if rnd.random() < 0.6:
        return f"user{rnd.randrange(10**6)}.shop.example"
    return f"id-{rand_word(rnd, 8)}"


def nonmember(rnd):
    """Non-members: mostly page paths, some opaque ids like the members'."""
    if rnd.random() < 0.6:
        return f"{rand_word(rnd, 5)}/{rnd.randrange(10**5)}/page"
    return f"id-{rand_word(rnd, 8)}"


def key_sets(seed):
    """3000 members, 6000 training non-members, 4000 fresh non-members."""
    rnd = random.Random(seed)
    members = set()
    while len(members) < 3000:
        members.add(member(rnd))
    rest = set()
    while len(rest) < 10000:
        k = nonmember(rnd)
        if k not in members:
            rest.add(k)
    rest = sorted(rest)
    rnd.shuffle(rest)
    return sorted(members), rest[:6000], rest[6000:]


def write_lines(path, keys):
    with open(path, "w") as f:
        f.write("\n".join(keys) + "\n")


def train(amq, tmp, name, members, nonmembers, extra=()):
    mp, np_ = os.path.join(tmp, "m.txt"), os.path.join(tmp, "n.txt")
    write_lines(mp, members)
    write_lines(np_, nonmembers)
    out = os.path.join(tmp, name)
    subprocess.run([amq, "cascade", "train", "--members", mp, "--nonmembers", np_, "-e",
                    "0.02", "--aux", str(AUX), "--dim-bits", "12", "-q",
                    "-o", out] + list(extra), check=True, capture_output=True)
    with open(out, "rb") as f:
        return out, f.read()


def cli_positives(amq, tmp, frame_path, keys):
    """The keys `amq cascade query` selects."""
    probe = os.path.join(tmp, "probe.txt")
    write_lines(probe, keys)
    q = subprocess.run([amq, "cascade", "query", frame_path, probe],
                       capture_output=True, text=True)
    assert q.returncode in (0, 1), q.stderr
    return set(q.stdout.split("\n")) - {""}


def mexists(r, key, items):
    return r.execute_command("AMQ.CASCADE.MEXISTS", key, *items)


def info(r, key):
    flat = r.execute_command("AMQ.CASCADE.INFO", key)
    return {k.decode(): v for k, v in zip(flat[::2], flat[1::2])}


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)


def audit_info(r, key):
    """INFO's Audit map as a dict, or None without an audit."""
    flat = info(r, key)["Audit"]
    if flat is None:
        return None
    return {k.decode(): v for k, v in zip(flat[::2], flat[1::2])}


def binom_cap(n, p, alpha=1e-6):
    """The count c with P(Binomial(n, p) > c) <= alpha: n trials at rate p
    exceed c with probability at most alpha."""
    if p >= 1:
        return n
    tail = 0.0
    for k in range(n, -1, -1):
        pk = math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) -
                      math.lgamma(n - k + 1) + k * math.log(p) +
                      (n - k) * math.log1p(-p))
        if tail + pk > alpha:
            return k
        tail += pk
    return 0


# ---- answers ------------------------------------------------------------------------


def test_answers(c, r, amq, tmp, frame, path, members, fresh):
    c.ok(r.execute_command("AMQ.CASCADE.LOAD", "casc", frame), "LOAD")
    c.ok(r.type("casc") == b"amq-cascd", "TYPE amq-cascd")
    got = mexists(r, "casc", members)
    c.ok(all(x == 1 for x in got), f"no false negatives: "
         f"{got.count(0)} of {len(members)} members answered 0")
    c.ok(all(r.execute_command("AMQ.CASCADE.EXISTS", "casc", k) == 1
             for k in members[:200]), "EXISTS = 1 for members")
    i = info(r, "casc")
    bound = float(i["Error bound"])
    fp = sum(mexists(r, "casc", fresh))
    n = len(fresh)
    margin = 4 * math.sqrt(bound * (1 - bound) / n) + 3 / n
    c.ok(fp / n <= bound + margin,
         f"FPR on fresh non-members {fp}/{n} within bound {bound:.4g} "
         f"+ {margin:.3g}")
    print(f"fresh non-members: {fp}/{n} false positives, certified "
          f"bound {bound:.4g}")
    c.ok(0 < bound < 0.05, f"certified bound {bound}")
    singles = [r.execute_command("AMQ.CASCADE.EXISTS", "casc", k)
               for k in fresh[:300]]
    c.ok(singles == mexists(r, "casc", fresh[:300]), "EXISTS = MEXISTS")
    probe = members[:1000] + fresh
    mine = {k for k, x in zip(probe, mexists(r, "casc", probe)) if x}
    c.ok(mine == cli_positives(amq, tmp, path, probe),
         "answers equal `amq cascade query` on the same frame")
    c.ok(i["Method"] == b"cascade" and i["Version"] == 1 and
         i["Members"] == len(members) and i["Levels"] >= 1 and
         i["Added"] == 0 and i["Stale"] == 0 and
         len(i["Intervals"]) >= i["Levels"] and
         float(i["Bits per key"]) > 0 and len(i["Model id"]) == 16,
         f"INFO {i}")
    cli = subprocess.run([amq, "cascade", "info", path], capture_output=True,
                         text=True).stdout
    c.ok(i["Model id"].decode() in cli, "INFO model id as `amq cascade info`")
    c.ok(r.execute_command("AMQ.CASCADE.DUMP", "casc") == frame,
         "DUMP of a loaded cascade gives the frame's bytes")
    mem = r.execute_command("MEMORY", "USAGE", "casc")
    c.ok(mem >= i["Memory"] >= len(frame) // 2,
         f"MEMORY USAGE {mem}, INFO Memory {i['Memory']}, frame {len(frame)}")


# ---- updates --------------------------------------------------------------------------


def test_updates(c, r, amq, tmp, frame, members, fresh):
    r.execute_command("AMQ.CASCADE.LOAD", "upd", frame)
    new = [f"new-{i}.shop.example" for i in range(AUX + 20)]
    got = r.execute_command("AMQ.CASCADE.ADD", "upd", *new[:AUX - 10])
    c.ok(got == [1] * (AUX - 10), "ADD into the insert buffer")
    got = r.execute_command("AMQ.CASCADE.ADD", "upd", *new[AUX - 10:])
    ok = got[:10] == [1] * 10
    errs = got[10:]
    c.ok(ok and all(isinstance(e, redis.ResponseError) and
                    "rebuild needed" in str(e) for e in errs),
         f"the buffer takes {AUX} keys, then 'rebuild needed' per item")
    c.ok(all(x == 1 for x in mexists(r, "upd", new[:AUX])),
         "every added key answers 1")
    i = info(r, "upd")
    c.ok(i["Added"] == AUX, f"INFO Added {i['Added']}")
    path = os.path.join(tmp, "upd.amqc")
    with open(path, "wb") as f:
        f.write(r.execute_command("AMQ.CASCADE.DUMP", "upd"))
    probe = new + members[:500] + fresh[:2000]
    mine = {k for k, x in zip(probe, mexists(r, "upd", probe)) if x}
    c.ok(mine == cli_positives(amq, tmp, path, probe),
         "DUMP after ADD: `amq cascade query` answers as the module")
    r.execute_command("AMQ.CASCADE.LOAD", "upd2", open(path, "rb").read())
    c.ok(mexists(r, "upd2", probe) == mexists(r, "upd", probe) and
         digest(r, "upd2") == digest(r, "upd"),
         "a reloaded DUMP answers the same")
    # Bloom residuals cannot remove: deletes are counted stale, up to 1%
    got = r.execute_command("AMQ.CASCADE.DEL", "upd", "ADDED", new[0])
    c.ok(got == [1] and info(r, "upd")["Stale"] == 1,
         "DEL ADDED counts a stale key")
    got = r.execute_command("AMQ.CASCADE.DEL", "upd", "BUILT", *members[:40])
    ins = [x for x in got if x == 1]
    errs = [x for x in got if isinstance(x, redis.ResponseError)]
    i = info(r, "upd")
    c.ok(len(ins) == 29 and len(errs) == 11 and
         all("rebuild needed" in str(e) for e in errs) and
         i["Stale"] == 30 and i["Removed"] == 30,
         f"stale budget 1% of members: {len(ins)} deleted, then errors; {i}")
    c.raises(lambda: r.execute_command("AMQ.CASCADE.DEL", "upd", "SOME", "x"),
             "BUILT", "DEL origin word")


def test_counting_deletes(c, r, frame, members):
    """A counting-residual cascade removes; a key it does not hold is 0."""
    r.execute_command("AMQ.CASCADE.LOAD", "cnt", frame)
    before = info(r, "cnt")
    held = [k for k, x in zip(members, mexists(r, "cnt", members)) if x]
    got = r.execute_command("AMQ.CASCADE.DEL", "cnt", "BUILT", *held[:50])
    after = info(r, "cnt")
    c.ok(got == [1] * 50 and after["Removed"] == 50 and after["Stale"] == 0,
         f"counting residuals remove, nothing stale: {after}")
    c.ok(all(x == 1 for x in mexists(r, "cnt", held[50:])),
         "the other members still answer 1")
    absent = [f"zz{i}/9/page" for i in range(3000)]
    no = [k for k, x in zip(absent, mexists(r, "cnt", absent)) if not x]
    d = digest(r, "cnt")
    c.ok(r.execute_command("AMQ.CASCADE.DEL", "cnt", "BUILT", no[0]) == [0]
         and digest(r, "cnt") == d,
         "DEL of a key a counting residual does not hold: 0, unchanged")
    c.ok(before["Members"] == after["Members"], "Members is the build count")


# ---- persistence ------------------------------------------------------------------------


def test_persistence(c, r, probe):
    keys = ["casc", "upd", "cnt"]
    before = {k: digest(r, k) for k in keys}
    answers = {k: mexists(r, k, probe) for k in keys}
    r.execute_command("DEBUG", "RELOAD")
    c.ok(all(digest(r, k) == before[k] for k in keys), "DEBUG RELOAD digests")
    c.ok(all(mexists(r, k, probe) == answers[k] for k in keys),
         "DEBUG RELOAD answers")
    c.ok(info(r, "upd")["Added"] == AUX and info(r, "upd")["Stale"] == 30,
         "counters survive a reload")
    for k in keys:
        r.restore(k + ":r", 0, r.dump(k))
        r.copy(k, k + ":cp")
        chunk_copy(r, k, k + ":c")
        c.ok(all(digest(r, k + s) == before[k] for s in (":r", ":cp", ":c")),
             f"{k}: DUMP/RESTORE, COPY, SCANDUMP/LOADCHUNK digests")
        c.ok(mexists(r, k + ":c", probe) == answers[k] and
             mexists(r, k + ":r", probe) == answers[k],
             f"{k}: restored answers")
    c.ok(r.execute_command("AMQ.DUMP", "casc") ==
         r.execute_command("AMQ.CASCADE.DUMP", "casc"),
         "AMQ.DUMP gives the cascade frame too")


def test_restart(c, srv, probe):
    """RDB and AOF (the rewrite's AMQ.LOADCHUNK stream, then an ADD logged
    as a command) across restarts."""
    r = srv.client
    before = r.execute_command("DEBUG", "DIGEST")
    answers = mexists(r, "casc", probe)
    r.save()
    srv.restart()
    r = srv.client
    c.ok(r.execute_command("DEBUG", "DIGEST") == before and
         mexists(r, "casc", probe) == answers, "RDB restart")
    r.config_set("appendonly", "yes")
    time.sleep(0.2)
    while r.info("persistence")["aof_rewrite_in_progress"] or \
            r.info("persistence")["aof_rewrite_scheduled"]:
        time.sleep(0.05)
    r.execute_command("AMQ.CASCADE.ADD", "casc", "after-aof.shop.example")
    after = r.execute_command("DEBUG", "DIGEST")
    srv.args = ["--appendonly", "yes"]
    srv.restart()
    r = srv.client
    c.ok(r.execute_command("DEBUG", "DIGEST") == after and
         r.execute_command("AMQ.CASCADE.EXISTS", "casc",
                           "after-aof.shop.example") == 1,
         "AOF restart: the rewrite's chunks and the logged ADD")
    srv.args = []


# ---- bad input ---------------------------------------------------------------------------


def test_bad_input(c, r, frame):
    r.set("str", "x")
    r.execute_command("AMQ.RESERVE", "bloomkey", "bloom")
    d = digest(r, "casc")
    for cmd in (["AMQ.CASCADE.LOAD", "nk"], ["AMQ.CASCADE.LOAD", "nk", "a", "b"],
                ["AMQ.CASCADE.EXISTS", "casc"],
                ["AMQ.CASCADE.EXISTS", "casc", "a", "b"],
                ["AMQ.CASCADE.MEXISTS", "casc"], ["AMQ.CASCADE.ADD", "casc"],
                ["AMQ.CASCADE.DEL", "casc", "BUILT"],
                ["AMQ.CASCADE.INFO", "casc", "x"],
                ["AMQ.CASCADE.DUMP", "casc", "x"]):
        c.raises(lambda: r.execute_command(*cmd), "wrong number", f"{cmd}")
    rnd = random.Random(3)
    for what, bad in (("flipped byte", bytes(b ^ (1 if i == len(frame) // 2
                                                   else 0)
                                             for i, b in enumerate(frame))),
                      ("truncated", frame[:len(frame) - 7]),
                      ("header only", frame[:40]),
                      ("empty", b""),
                      ("random", bytes(rnd.randrange(256)
                                       for _ in range(2000)))):
        c.raises(lambda: r.execute_command("AMQ.CASCADE.LOAD", "nk", bad),
                 "invalid cascade", f"LOAD of a {what}")
    c.ok(r.exists("nk") == 0, "no key left by refused LOADs")
    # a filter's frame is what training writes when a plain filter wins
    r.execute_command("AMQ.ADD", "bloomkey", "in-bloom")
    r.execute_command("AMQ.CASCADE.LOAD", "plain",
                      r.execute_command("AMQ.DUMP", "bloomkey"))
    probe = ["in-bloom"] + [f"nb{i}" for i in range(500)]
    c.ok(mexists(r, "plain", probe) ==
         [r.execute_command("AMQ.EXISTS", "bloomkey", k) for k in probe] and
         mexists(r, "plain", probe[:1]) == [1],
         "a filter's frame loads as a plain cascade answering as the filter")
    r.delete("plain")
    for k in ("casc", "str", "bloomkey"):
        c.raises(lambda: r.execute_command("AMQ.CASCADE.LOAD", k, frame),
                 "item exists", f"LOAD over the existing key {k}")
    c.ok(digest(r, "casc") == d, "refused commands leave the key unchanged")
    for cmd in (["AMQ.CASCADE.EXISTS", "str", "a"],
                ["AMQ.CASCADE.MEXISTS", "bloomkey", "a"],
                ["AMQ.CASCADE.ADD", "bloomkey", "a"],
                ["AMQ.CASCADE.DEL", "str", "BUILT", "a"],
                ["AMQ.CASCADE.INFO", "bloomkey"],
                ["AMQ.CASCADE.DUMP", "str"], ["AMQ.EXISTS", "casc", "a"],
                ["AMQ.INFO", "casc"],
                ["AMQ.MAP.GET", "casc", "a"]):
        c.raises(lambda: r.execute_command(*cmd), "WRONGTYPE", f"{cmd}")
    c.ok(r.execute_command("AMQ.CASCADE.EXISTS", "nokey", "a") == 0 and
         mexists(r, "nokey", ["a", "b"]) == [0, 0],
         "queries of a missing key: 0")
    for cmd in (["AMQ.CASCADE.ADD", "nokey", "a"],
                ["AMQ.CASCADE.DEL", "nokey", "BUILT", "a"],
                ["AMQ.CASCADE.INFO", "nokey"], ["AMQ.CASCADE.DUMP", "nokey"]):
        c.raises(lambda: r.execute_command(*cmd), "not found", f"{cmd}")
    c.ok(r.exists("nokey") == 0, "no key created by refused updates")
    # a corrupt RESTORE payload is refused by the RDB loader
    payload = bytearray(r.dump("casc"))
    payload[len(payload) // 2] ^= 0x40
    try:
        r.restore("badr", 0, bytes(payload))
        c.ok(False, "RESTORE of a corrupt payload accepted")
    except redis.ResponseError:
        c.ok(r.exists("badr") == 0, "RESTORE of a corrupt payload refused")


def test_resp3(c, port):
    resp = resp3(port, b"*2\r\n$16\r\nAMQ.CASCADE.INFO\r\n$4\r\ncasc\r\n")
    c.ok(resp.startswith(b"%24") and b",0." in resp and b"%9" in resp and
         resp.endswith(b"+Audit\r\n_\r\n"),
         f"RESP3 INFO: a map with doubles, interval maps and a null audit "
         f"{resp[:16]!r}")


# ---- replication ----------------------------------------------------------------------------


def test_replication(c, args, servers, frame, counting, members, fresh):
    pair = primary_and_replica(args.module, servers)
    if pair is None:
        c.ok(False, "replica never synced")
        return
    p, q = pair
    p.execute_command("AMQ.CASCADE.LOAD", "rc", frame)
    p.execute_command("AMQ.CASCADE.LOAD", "rk", counting)
    new = [f"rep-{i}.shop.example" for i in range(AUX + 5)]
    p.execute_command("AMQ.CASCADE.ADD", "rc", *new)  # the last 5 refused
    p.execute_command("AMQ.CASCADE.DEL", "rc", "BUILT", *members[:35])
    p.execute_command("AMQ.CASCADE.DEL", "rk", "BUILT", *members[:20])
    p.execute_command("AMQ.CASCADE.ADD", "rk", *new[:3])
    c.ok(p.execute_command("WAIT", 1, 5000) == 1, "WAIT 1")
    c.ok(p.execute_command("DEBUG", "DIGEST") ==
         q.execute_command("DEBUG", "DIGEST"), "replica digest equals primary's")
    probe = new + members[:500] + fresh[:1000]
    c.ok(all(mexists(p, k, probe) == mexists(q, k, probe)
             for k in ("rc", "rk")), "replica answers equal primary's")
    c.ok(info(q, "rc")["Added"] == AUX and info(q, "rc")["Stale"] == 30,
         "partly refused ADD/DEL replicated as the items that went in")


# ---- audits and the fallback ------------------------------------------------------------

AUDIT_RATE = 0.25
WORST = 0.05  # amq cascade train --worst-case


def shifted(seed, n, members):
    """Non-members shaped like the members (shop user hosts): the score
    ranks them as members, a shift the certify split never saw."""
    rnd, out, taken = random.Random(seed), [], set(members)
    while len(out) < n:
        k = f"user{rnd.randrange(10**7)}.shop.example"
        if k not in taken:
            taken.add(k)
            out.append(k)
    return out


def workload(seed, nonmembers, members, share=0.1):
    """The queries an application sends: nonmembers with a share of
    members mixed in, in a shuffled order."""
    rnd = random.Random(seed)
    q = list(nonmembers) + rnd.sample(members, int(share * len(nonmembers)))
    rnd.shuffle(q)
    return q


def application(r, key, queries, members, batch=500, stop=True):
    """Query, pull the samples, report their truth; returns the rounds run
    until the key fell back (all of them if it did not, or if not stop)."""
    rounds = 0
    for i in range(0, len(queries), batch):
        mexists(r, key, queries[i:i + batch])
        items = r.execute_command("AMQ.CASCADE.SAMPLES", key)
        truths = []
        for it in items:
            truths += [it, 1 if it.decode() in members else 0]
        if truths:
            r.execute_command("AMQ.CASCADE.TRUTH", key, *truths)
        rounds += 1
        if stop and info(r, key)["Fallback"] == 1:
            break
    return rounds


def events(sub, want, timeout=3.0):
    """Keyspace messages (event names) received on sub until want arrived
    or the time ran out."""
    got, deadline = [], time.time() + timeout
    while time.time() < deadline and want not in got:
        m = sub.get_message(timeout=0.1)
        if m and m["type"] == "message":
            got.append(m["data"].decode())
    return got


def subscribe(r, key):
    """Module-class keyspace events only ('d', not 'g'): the audit's are
    published in that class."""
    r.config_set("notify-keyspace-events", "Kd")
    sub = r.pubsub(ignore_subscribe_messages=True)
    sub.subscribe(f"__keyspace@0__:{key}")
    time.sleep(0.05)
    return sub


def fpr_after(c, r, key, queries, cap, what):
    fp, n = sum(mexists(r, key, queries)), len(queries)
    print(f"{what}: {fp}/{n} false positives, worst-case cap {cap:.4g}")
    c.ok(fp <= binom_cap(n, cap),
         f"{what}: {fp}/{n} false positives, above what a rate of "
         f"{cap:.4g} gives with probability 1e-6 ({binom_cap(n, cap)})")
    return fp


def test_audit_fallback(c, args, servers, frame, members, fresh):
    pair = primary_and_replica(args.module, servers)
    if pair is None:
        c.ok(False, "replica never synced")
        return
    p, q = pair
    prim = servers[-2]
    mset = set(members)
    sub_p, sub_q = subscribe(p, "wc"), subscribe(q, "wc")
    p.execute_command("AMQ.CASCADE.LOAD", "wc", frame)
    p.execute_command("AMQ.CASCADE.LOAD", "wc:learned", frame)
    i = info(p, "wc")
    learned, worst = float(i["Learned bound"]), float(i["Worst-case bound"])
    c.ok(i["Fallback"] == 0 and float(i["Error bound"]) == learned and
         0 < learned < worst <= WORST, f"a capped cascade's INFO {i}")
    c.ok(p.execute_command("AMQ.CASCADE.AUDIT", "wc", "RATE", AUDIT_RATE,
                           "SEED", 5) == b"OK", "AUDIT RATE SEED")
    a = audit_info(p, "wc")
    c.ok(a is not None and float(a["Rate"]) == AUDIT_RATE and
         a["Window"] == 100000 and a["Queries"] == 0, f"a new audit {a}")
    # queries like the training's: the bound holds, nothing moves
    calm = workload(1, fresh, members)
    application(p, "wc", calm, mset)
    a, i = audit_info(p, "wc"), info(p, "wc")
    nq = len(calm)
    c.ok(i["Fallback"] == 0 and a["Violated"] == 0 and
         a["False negatives"] == 0 and a["Queries"] == nq and
         a["Pending"] == 0 and a["Members reported"] > 0 and
         a["Members reported"] + a["Non-members reported"] == a["Sampled"],
         f"in-distribution queries: no violation {a}")
    c.ok(a["Sampled"] <= binom_cap(nq, AUDIT_RATE) and
         nq - a["Sampled"] <= binom_cap(nq, 1 - AUDIT_RATE),
         f"{a['Sampled']} of {nq} queries sampled at rate {AUDIT_RATE}")
    c.ok(float(a["FPR low"]) <= learned, f"realised FPR interval {a}")
    # shop hosts that are not members: the learned bound breaks
    shift = shifted(2, 6000, members)
    rounds = application(p, "wc", workload(3, shift[:3000], members), mset)
    i, a = info(p, "wc"), audit_info(p, "wc")
    c.ok(i["Fallback"] == 1 and float(i["Error bound"]) == worst and
         float(i["Learned bound"]) == learned,
         f"the key fell back after {rounds} rounds: {i}")
    c.ok(a is not None and a["Windows"] == 1 and a["Queries"] <= 500,
         f"the audit restarted for the fallback route {a}")
    got = events(sub_p, "amq.cascade.fallback")
    c.ok("amq.cascade.fallback" in got, f"primary's events {got}")
    got = events(sub_q, "amq.cascade.fallback")
    c.ok("amq.cascade.fallback" in got, f"replica's events {got}")
    # the shift really broke the learned route's bound, not the cap
    test = shift[3000:]
    fp = sum(mexists(p, "wc:learned", test))
    print(f"shifted queries: fell back after {rounds} rounds of 500; the "
          f"learned route answers {fp}/{len(test)} against its bound "
          f"{learned:.4g}")
    c.ok(fp > binom_cap(len(test), learned),
         f"learned route on shifted queries: {fp}/{len(test)}, bound "
         f"{learned:.4g}")
    fpr_after(c, p, "wc", test, worst, "fallback on fresh shifted queries")
    c.ok(all(x == 1 for x in mexists(p, "wc", members)),
         "no false negatives in fallback")
    c.ok(p.execute_command("WAIT", 1, 5000) == 1, "WAIT 1")
    c.ok(info(q, "wc")["Fallback"] == 1 and audit_info(q, "wc") is None and
         digest(q, "wc") == digest(p, "wc"),
         "the replica is in fallback too, with the primary's digest")
    probe = members[:300] + test + fresh[:1000]
    c.ok(mexists(q, "wc", probe) == mexists(p, "wc", probe),
         "the replica answers as the primary")
    fpr_after(c, q, "wc", test, worst, "the replica on shifted queries")
    # by hand, both ways, replicated
    p.execute_command("AMQ.CASCADE.FALLBACK", "wc", "OFF")
    c.ok("amq.cascade.learned" in events(sub_p, "amq.cascade.learned"),
         "FALLBACK OFF publishes amq.cascade.learned")
    p.execute_command("WAIT", 1, 5000)
    c.ok(info(q, "wc")["Fallback"] == 0 and
         mexists(q, "wc", probe) == mexists(p, "wc:learned", probe),
         "FALLBACK OFF: the replica is back on the learned route")
    p.execute_command("AMQ.CASCADE.FALLBACK", "wc", "ON")
    p.execute_command("AMQ.CASCADE.FALLBACK", "wc", "ON")  # no change
    p.execute_command("WAIT", 1, 5000)
    c.ok(info(q, "wc")["Fallback"] == 1 and
         digest(q, "wc") == digest(p, "wc"), "FALLBACK ON replicated")
    sub_p.close()
    sub_q.close()
    # persistence: the route is in the frame, the audit is not
    answers = mexists(p, "wc", probe)
    p.execute_command("DEBUG", "RELOAD")
    c.ok(info(p, "wc")["Fallback"] == 1 and audit_info(p, "wc") is None and
         mexists(p, "wc", probe) == answers,
         "DEBUG RELOAD: still in fallback, no audit")
    p.restore("wc:r", 0, p.dump("wc"))
    c.ok(info(p, "wc:r")["Fallback"] == 1, "DUMP/RESTORE keeps the fallback")
    p.save()
    prim.restart()
    p = prim.client
    c.ok(info(p, "wc")["Fallback"] == 1 and mexists(p, "wc", probe) == answers,
         "RDB restart: still in fallback")
    # a rebuild comes back through LOAD: a fresh frame is on its route
    p.delete("wc")
    p.execute_command("AMQ.CASCADE.LOAD", "wc", frame)
    c.ok(info(p, "wc")["Fallback"] == 0, "a new LOAD is on the learned route")


def test_audit_aof(c, args, servers, frame, members):
    """TRUTH is not logged, the FALLBACK it replicates is."""
    srv = Server(args.module, args=["--appendonly", "yes"])
    servers.append(srv)
    r = srv.client
    r.execute_command("AMQ.CASCADE.LOAD", "wc", frame)
    r.execute_command("AMQ.CASCADE.AUDIT", "wc", "RATE", AUDIT_RATE)
    application(r, "wc", workload(4, shifted(5, 2000, members), members),
                set(members))
    c.ok(info(r, "wc")["Fallback"] == 1, "AOF server: the key fell back")
    d = digest(r, "wc")
    srv.restart()
    r = srv.client
    c.ok(info(r, "wc")["Fallback"] == 1 and digest(r, "wc") == d,
         "AOF restart: the logged FALLBACK ON replayed")


def test_audit_no_front(c, r, frame, members):
    """Without an initial filter a violation is published and the key keeps
    its route; FALLBACK ON is refused."""
    r.execute_command("AMQ.CASCADE.LOAD", "nf", frame)
    i = info(r, "nf")
    c.ok(float(i["Worst-case bound"]) == 1.0 and i["Fallback"] == 0,
         f"no initial filter: worst case 1 {i}")
    d = digest(r, "nf")
    c.raises(lambda: r.execute_command("AMQ.CASCADE.FALLBACK", "nf", "ON"),
             "no initial filter", "FALLBACK ON without an initial filter")
    c.ok(digest(r, "nf") == d and info(r, "nf")["Fallback"] == 0,
         "a refused FALLBACK leaves the key unchanged")
    sub = subscribe(r, "nf")
    r.execute_command("AMQ.CASCADE.AUDIT", "nf", "RATE", AUDIT_RATE)
    application(r, "nf", workload(6, shifted(7, 3000, members), members),
                set(members), stop=False)
    got = events(sub, "amq.cascade.violated")
    got += events(sub, "", timeout=0.3)
    a = audit_info(r, "nf")
    c.ok(got == ["amq.cascade.violated"],
         f"one amq.cascade.violated in the window: {got}")
    c.ok(a["Violated"] == 1 and info(r, "nf")["Fallback"] == 0 and
         digest(r, "nf") == d, f"violated, the route kept {a}")
    sub.close()
    r.config_set("notify-keyspace-events", "")
    r.delete("nf")


def test_audit_commands(c, r):
    """Pending samples, windows, OFF, memory, and bad arguments."""
    d = digest(r, "casc")
    mem0 = info(r, "casc")["Memory"]
    r.execute_command("AMQ.CASCADE.AUDIT", "casc", "RATE", 1)
    items = [f"q{i}" for i in range(1100)]
    mexists(r, "casc", items[:3])
    c.ok(r.execute_command("AMQ.CASCADE.SAMPLES", "casc", "COUNT", 2) ==
         [b"q0", b"q1"] and
         r.execute_command("AMQ.CASCADE.SAMPLES", "casc") == [b"q2"] and
         r.execute_command("AMQ.CASCADE.SAMPLES", "casc") == [],
         "SAMPLES pops the oldest first, COUNT at a time")
    r.execute_command("AMQ.CASCADE.EXISTS", "casc", "")
    c.ok(r.execute_command("AMQ.CASCADE.SAMPLES", "casc") == [b""],
         "an empty item is sampled too")
    mexists(r, "casc", items)
    a = audit_info(r, "casc")
    c.ok(a["Pending"] == 1024 and a["Dropped"] == 76 and
         a["Queries"] == 1104 and a["Sampled"] == 1104,
         f"at most 1024 pending, the oldest dropped: {a}")
    c.ok(info(r, "casc")["Memory"] > mem0, "the audit's memory is counted")
    got = r.execute_command("AMQ.CASCADE.SAMPLES", "casc")
    c.ok(got == [k.encode() for k in items[76:]], "the newest 1024 kept")
    big = [bytes([65 + i]) * (300 << 10) for i in range(5)]
    mexists(r, "casc", big + [b"x" * ((1 << 20) + 1)])
    a = audit_info(r, "casc")
    c.ok(a["Pending"] == 3 and a["Dropped"] == 76 + 3 and
         r.execute_command("AMQ.CASCADE.SAMPLES", "casc") == big[2:],
         f"at most 1 MiB pending, an item longer never kept: {a['Pending']} "
         f"pending, {a['Dropped']} dropped")
    c.ok(digest(r, "casc") == d, "the audit is not in the value's digest")
    r.execute_command("AMQ.CASCADE.AUDIT", "casc", "RATE", 1, "WINDOW", 10)
    c.ok(r.execute_command("AMQ.CASCADE.TRUTH", "casc",
                           *[x for k in items[:25] for x in (k, 0)]) == 25,
         "TRUTH replies the truths it took")
    a = audit_info(r, "casc")
    c.ok(a["Windows"] == 2 and a["Non-members reported"] == 5 and
         a["Window"] == 10, f"a fresh window every 10 truths: {a}")
    c.ok(r.execute_command("AMQ.CASCADE.AUDIT", "casc", "OFF") == b"OK" and
         audit_info(r, "casc") is None and info(r, "casc")["Memory"] == mem0,
         "AUDIT OFF: no audit, its memory back")
    for cmd in (["AMQ.CASCADE.AUDIT", "casc"],
                ["AMQ.CASCADE.SAMPLES"],
                ["AMQ.CASCADE.SAMPLES", "casc", "COUNT"],
                ["AMQ.CASCADE.TRUTH", "casc"],
                ["AMQ.CASCADE.TRUTH", "casc", "a"],
                ["AMQ.CASCADE.TRUTH", "casc", "a", "0", "b"],
                ["AMQ.CASCADE.FALLBACK", "casc"],
                ["AMQ.CASCADE.FALLBACK", "casc", "ON", "x"]):
        c.raises(lambda: r.execute_command(*cmd), "wrong number", f"{cmd}")
    for bad in (["RATE", 0], ["RATE", 1.5], ["RATE", -0.1], ["RATE", "abc"],
                ["RATE", "nan"], ["RATE", "inf"]):
        c.raises(lambda: r.execute_command("AMQ.CASCADE.AUDIT", "casc", *bad),
                 "RATE is the share", f"AUDIT {bad}")
    for bad, frag in ((["RATE", 0.1, "SEED", -1], "SEED"),
                      (["RATE", 0.1, "SEED", "x"], "SEED"),
                      (["RATE", 0.1, "WINDOW", 0], "WINDOW"),
                      (["RATE", 0.1, "WINDOW", "1.5"], "WINDOW"),
                      (["RATE", 0.1, "FOO", 1], "unknown option"),
                      (["RATE", 0.1, "SEED"], "syntax"),
                      (["BLAH"], "syntax"), (["OFF", "x"], "syntax")):
        c.raises(lambda: r.execute_command("AMQ.CASCADE.AUDIT", "casc", *bad),
                 frag, f"AUDIT {bad}")
    c.ok(audit_info(r, "casc") is None, "refused AUDITs start none")
    c.raises(lambda: r.execute_command("AMQ.CASCADE.SAMPLES", "casc"),
             "no audit", "SAMPLES without an audit")
    c.raises(lambda: r.execute_command("AMQ.CASCADE.TRUTH", "casc", "a", 0),
             "no audit", "TRUTH without an audit")
    r.execute_command("AMQ.CASCADE.AUDIT", "casc", "RATE", 0.5)
    for v in ("2", "yes", "", "01", "-1"):
        c.raises(lambda: r.execute_command("AMQ.CASCADE.TRUTH", "casc", "a",
                                           0, "b", v),
                 "a truth is 1", f"TRUTH with {v!r}")
    c.ok(audit_info(r, "casc")["Non-members reported"] == 0,
         "a refused TRUTH records nothing")
    for bad in (["COUNT", -1], ["COUNT", "x"], ["FOO", 1]):
        c.raises(lambda: r.execute_command("AMQ.CASCADE.SAMPLES", "casc",
                                           *bad), "COUNT", f"SAMPLES {bad}")
    c.raises(lambda: r.execute_command("AMQ.CASCADE.FALLBACK", "casc",
                                       "MAYBE"), "ON", "FALLBACK MAYBE")
    for cmd in (["AMQ.CASCADE.AUDIT", "str", "RATE", 0.1],
                ["AMQ.CASCADE.AUDIT", "bloomkey", "OFF"],
                ["AMQ.CASCADE.SAMPLES", "str"],
                ["AMQ.CASCADE.TRUTH", "bloomkey", "a", 1],
                ["AMQ.CASCADE.FALLBACK", "str", "ON"]):
        c.raises(lambda: r.execute_command(*cmd), "WRONGTYPE", f"{cmd}")
    for cmd in (["AMQ.CASCADE.AUDIT", "nokey", "RATE", 0.1],
                ["AMQ.CASCADE.SAMPLES", "nokey"],
                ["AMQ.CASCADE.TRUTH", "nokey", "a", 1],
                ["AMQ.CASCADE.FALLBACK", "nokey", "OFF"]):
        c.raises(lambda: r.execute_command(*cmd), "not found", f"{cmd}")
    c.ok(r.exists("nokey") == 0, "no key created by the audit's commands")
    c.ok(r.execute_command("AMQ.CASCADE.FALLBACK", "casc", "OFF") == b"OK" and
         digest(r, "casc") == d,
         "FALLBACK OFF on the learned route: no change")
    r.execute_command("AMQ.CASCADE.AUDIT", "casc", "OFF")


def main(args, c, servers):
    if not args.amq:
        print("test_cascade.py needs --amq (the CLI trains the cascades)")
        c.ok(False, "--amq given")
        return
    srv = Server(args.module)
    servers.append(srv)
    r = srv.client
    tmp = tempfile.mkdtemp(dir=srv.dir)
    members, train_non, fresh = key_sets(17)
    path, frame = train(args.amq, tmp, "c.amqc", members, train_non)
    _, counting = train(args.amq, tmp, "k.amqc", members, train_non,
                        ["-r", "counting"])
    _, capped = train(args.amq, tmp, "w.amqc", members, train_non,
                      ["--worst-case", str(WORST)])
    test_answers(c, r, args.amq, tmp, frame, path, members, fresh)
    test_updates(c, r, args.amq, tmp, frame, members, fresh)
    test_counting_deletes(c, r, counting, members)
    test_persistence(c, r, members[:500] + fresh[:1500])
    test_bad_input(c, r, frame)
    test_resp3(c, srv.port)
    test_audit_commands(c, r)
    test_audit_no_front(c, r, frame, members)
    c.ok(srv.alive(), "server alive")
    test_restart(c, srv, members[:500] + fresh[:1500])
    test_replication(c, args, servers, frame, counting, members, fresh)
    test_audit_fallback(c, args, servers, capped, members, fresh)
    test_audit_aof(c, args, servers, capped, members)


if __name__ == "__main__":
    run(main)
