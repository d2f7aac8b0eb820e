"""AMQ.CASCADE.*: learned Bloom filter cascades in amq-redis.so.

Key sets with learnable structure are made here; `amq cascade train` turns
them into cascade frames (a Bloom-residual one with an insert buffer, and a
counting-residual one whose deletes remove). Checked: no member answers 0,
the false-positive rate on fresh non-members is within the certified bound
plus a binomial margin, the module answers as `amq cascade query` on the
same frame, AMQ.CASCADE.DUMP round-trips (the same bytes; the CLI reads
it), ADD/DEL and their "rebuild needed" limits, persistence (DEBUG RELOAD,
DUMP/RESTORE, SCANDUMP/LOADCHUNK, COPY, RDB and AOF restarts), a
replica's answers and digest,
RESP3, and bad input (corrupt frames, arity, wrong types) leaving no key.

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
                                       for _ in range(2000))),
                      ("a filter frame",
                       r.execute_command("AMQ.DUMP", "bloomkey"))):
        c.raises(lambda: r.execute_command("AMQ.CASCADE.LOAD", "nk", bad),
                 "invalid cascade", f"LOAD of a {what}")
    c.ok(r.exists("nk") == 0, "no key left by refused LOADs")
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
                ["AMQ.INFO", "casc"], ["BF.EXISTS", "casc", "a"],
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
    c.ok(resp.startswith(b"%20") and b",0." in resp and b"%9" in resp,
         f"RESP3 INFO: a map with doubles and interval maps {resp[:16]!r}")


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
    test_answers(c, r, args.amq, tmp, frame, path, members, fresh)
    test_updates(c, r, args.amq, tmp, frame, members, fresh)
    test_counting_deletes(c, r, counting, members)
    test_persistence(c, r, members[:500] + fresh[:1500])
    test_bad_input(c, r, frame)
    test_resp3(c, srv.port)
    c.ok(srv.alive(), "server alive")
    test_restart(c, srv, members[:500] + fresh[:1500])
    test_replication(c, args, servers, frame, counting, members, fresh)


if __name__ == "__main__":
    run(main)
