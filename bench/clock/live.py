#!/usr/bin/env python3
"""live.py — Bloom clocks between live processes, against vector clocks.

N processes (one a node) exchange messages over UDP on 127.0.0.1 for a
few seconds. Each node keeps three clocks side by side:

  - a Bloom clock (amq.BloomClock, m cells, k hashes an event);
  - a sparse vector clock (amq.VectorClock), what the Bloom clock
    replaces;
  - the ground truth: a full vector clock as a dict, carried on the side
    in every message and never used by the other two.

A node's step is an internal event (probability --internal) or a send: a
send is an event, then a message to a random live node carrying the three
timestamps. Messages are really lost (--loss drops them at the sender, and
a message to a node that has left finds a closed port) and really
reordered (each waits a random delay, exponential with mean --delay-ms, in
the sender's queue before it goes out, so later ones overtake it). With
--lifetime L, a node leaves after an exponential time of mean L seconds
and a fresh node with a new id takes its slot (churn): the sparse vector
clocks keep an entry for every node that ever sent anything, the Bloom
clock stays m cells.

On receipt a node orders the message's timestamp against its own clock
(before merging it), with both clocks, and checks both verdicts against
the truth; then it merges the message in and counts the receipt as an
event. Every few events it also records its timestamps; afterwards random
pairs of recorded timestamps of different nodes are compared the same
way, which is where "happened before" claims can be checked in bulk.

Reported: bytes a message for each clock (mean and the last minute's
worst), messages sent, received, lost and reordered, the Bloom verdicts
(orders claimed for pairs that are in fact concurrent: false
"happened-before"; pairs in fact ordered called concurrent: must be 0),
the vector verdicts (must all be right), the calibration of the Bloom
clock's own probability (for truly concurrent pairs, the claim a
before/after verdict would carry, from the two sums, binned by decade:
the mean claim against the share the clock called ordered, as
`amq-lab clock eval` measures it), and precision and recall when "ordered"
is decided at a claim of at most --threshold.

usage: bench/clock/live.py [--nodes N] [--seconds S] [--m M] [--k K]
       [--loss P] [--delay-ms D] [--lifetime L] [--rate R] [--seed S]
       [--json] [--check]
       bench/clock/live.py --sweep [--seconds S]   (docs/clock.md's table)

--check exits 1 when a guarantee fails (an ordered pair called
concurrent, a wrong vector verdict, no message delivered); the test suite
runs a small case with it. Needs the amq Python binding (PYTHONPATH=python
AMQ_LIBRARY=build/libamq.so).
"""
import argparse
import heapq
import json
import math
import multiprocessing as mp
import os
import pickle
import random
import select
import socket
import sys
import tempfile
import time

import amq

TRUTH_BEFORE, TRUTH_AFTER, TRUTH_EQUAL, TRUTH_CONC = (
    "before", "after", "equal", "concurrent")


def truth_order(a, b):
    """Order of dict vector clock a relative to b."""
    le = all(v <= b.get(k, 0) for k, v in a.items())
    ge = all(v <= a.get(k, 0) for k, v in b.items())
    if le and ge:
        return TRUTH_EQUAL
    if le:
        return TRUTH_BEFORE
    if ge:
        return TRUTH_AFTER
    return TRUTH_CONC


def pack(bloom, vector, truth, seq):
    t = json.dumps(truth, separators=(",", ":")).encode()
    head = len(bloom).to_bytes(4, "little") + len(vector).to_bytes(4, "little")
    return head + seq.to_bytes(8, "little") + bloom + vector + t


def unpack(msg):
    nb = int.from_bytes(msg[0:4], "little")
    nv = int.from_bytes(msg[4:8], "little")
    seq = int.from_bytes(msg[8:16], "little")
    b = msg[16:16 + nb]
    v = msg[16 + nb:16 + nb + nv]
    t = {int(k): x for k, x in json.loads(msg[16 + nb + nv:]).items()}
    return b, v, t, seq


class Tally:
    """Verdict counts: Bloom against the truth, vector against the truth,
    the claims for truly concurrent pairs (calibration), and decisions at
    a threshold on the claim."""

    def __init__(self, m, k, threshold):
        self.m, self.k, self.threshold = m, k, threshold
        self.pairs = 0
        self.truth = {TRUTH_BEFORE: 0, TRUTH_AFTER: 0, TRUTH_EQUAL: 0,
                      TRUTH_CONC: 0}
        self.false_order = 0      # concurrent in fact, Bloom says ordered
        self.wrong_direction = 0  # ordered in fact, Bloom says the reverse
        self.missed = 0           # ordered in fact, Bloom says concurrent
        self.vector_wrong = 0
        self.decided = 0          # Bloom ordered with claim <= threshold
        self.decided_right = 0
        # (claim ours, claim paper, dominated) for each concurrent pair: what
        # a before/after verdict would claim, from the two sums
        self.claims = []

    def add(self, v, vector_order, truth):
        self.pairs += 1
        self.truth[truth] += 1
        b = str(v.order)
        if vector_order != truth:
            self.vector_wrong += 1
        if truth == TRUTH_CONC:
            d = v.sum_high - v.sum_low
            self.claims.append((
                amq.BloomClock.fp_exact(self.m, self.k, d),
                amq.BloomClock.fp_paper(self.m, v.sum_low, v.sum_high),
                v.ordered))
            self.false_order += v.ordered
        elif v.ordered and b != truth and truth != TRUTH_EQUAL:
            self.wrong_direction += 1
        elif b == TRUTH_CONC:
            self.missed += 1
        if v.ordered and v.probability <= self.threshold:
            self.decided += 1
            self.decided_right += b == truth

    def merge(self, o):
        self.pairs += o.pairs
        for k in self.truth:
            self.truth[k] += o.truth[k]
        for f in ("false_order", "wrong_direction", "missed", "vector_wrong",
                  "decided", "decided_right"):
            setattr(self, f, getattr(self, f) + getattr(o, f))
        self.claims += o.claims


def node_main(slot, node_id, cfg, ports, stop, outdir):
    rnd = random.Random(cfg["seed"] * 1000003 + node_id)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.setblocking(False)
    bloom = amq.BloomClock(cfg["m"], cfg["k"])
    vector = amq.VectorClock(node_id)
    scratch_b = amq.BloomClock(cfg["m"], cfg["k"])
    scratch_v = amq.VectorClock(node_id)
    truth = {}
    ports[slot] = sock.getsockname()[1]
    tally = Tally(cfg["m"], cfg["k"], cfg["threshold"])
    out = []          # (send time, sequence, port, bytes)
    seq = {}          # per destination port: next sequence number
    last_seen = {}    # per sender id: highest sequence seen
    stats = dict(sent=0, dropped=0, received=0, reordered=0, bloom_bytes=0,
                 vector_bytes=0, truth_bytes=0, max_vector=0, events=0)
    snaps = []
    life = (rnd.expovariate(1.0 / cfg["lifetime"]) if cfg["lifetime"] > 0
            else float("inf"))
    start = time.monotonic()
    gap = 1.0 / cfg["rate"]
    next_step = start
    nev = 0

    def event(name):
        nonlocal nev
        nev += 1
        bloom.tick(name)
        vector.tick()
        truth[node_id] = truth.get(node_id, 0) + 1
        if nev % cfg["record_every"] == 0:
            snaps.append((bloom.encode(), dict(truth)))

    while not stop.value and time.monotonic() - start < life:
        now = time.monotonic()
        while out and out[0][0] <= now:
            _, _, port, data = heapq.heappop(out)
            try:
                sock.sendto(data, ("127.0.0.1", port))
            except OSError:
                pass
        if now >= next_step:
            next_step += gap
            if rnd.random() < cfg["internal"]:
                event("n%d-e%d" % (node_id, nev))
            else:
                peers = [p for i, p in enumerate(ports[:]) if p and i != slot]
                if peers:
                    event("n%d-send%d" % (node_id, nev))
                    port = rnd.choice(peers)
                    b, v = bloom.encode(), vector.encode()
                    s = seq.get(port, 0)
                    seq[port] = s + 1
                    data = pack(b, v, truth, (node_id << 32) | s)
                    stats["sent"] += 1
                    stats["bloom_bytes"] += len(b)
                    stats["vector_bytes"] += len(v)
                    stats["truth_bytes"] += len(data) - 16 - len(b) - len(v)
                    stats["max_vector"] = max(stats["max_vector"], len(v))
                    if rnd.random() < cfg["loss"]:
                        stats["dropped"] += 1
                    else:
                        delay = rnd.expovariate(1000.0 / cfg["delay_ms"]) \
                            if cfg["delay_ms"] > 0 else 0.0
                        heapq.heappush(out, (now + delay, stats["sent"], port,
                                             data))
        wait = max(0.0, min(next_step, out[0][0] if out else next_step) -
                   time.monotonic())
        r, _, _ = select.select([sock], [], [], wait)
        if not r:
            continue
        while True:
            try:
                msg = sock.recv(1 << 16)
            except BlockingIOError:
                break
            b, v, t, sq = unpack(msg)
            sender, s = sq >> 32, sq & 0xFFFFFFFF
            stats["received"] += 1
            if s < last_seen.get(sender, -1):
                stats["reordered"] += 1
            last_seen[sender] = max(last_seen.get(sender, -1), s)
            scratch_b.decode(b)
            scratch_v.decode(v)
            tally.add(bloom.compare(scratch_b),
                      str(vector.compare(scratch_v).order),
                      truth_order(truth, t))
            bloom.merge(scratch_b)
            vector.merge(scratch_v)
            for k, x in t.items():
                if x > truth.get(k, 0):
                    truth[k] = x
            event("n%d-recv%d" % (node_id, nev))
    ports[slot] = 0
    stats["events"] = nev
    sock.close()
    with open(os.path.join(outdir, "node-%d.pickle" % node_id), "wb") as f:
        pickle.dump((stats, tally, snaps), f)


def pair_tally(snaps, cfg, npairs, rnd):
    """Random pairs of recorded timestamps of different nodes."""
    a = amq.BloomClock(cfg["m"], cfg["k"])
    b = amq.BloomClock(cfg["m"], cfg["k"])
    tally = Tally(cfg["m"], cfg["k"], cfg["threshold"])
    owners = [i for i, s in enumerate(snaps) if s]
    if len(owners) < 2:
        return tally
    for _ in range(npairs):
        i, j = rnd.sample(owners, 2)
        sb1, t1 = rnd.choice(snaps[i])
        sb2, t2 = rnd.choice(snaps[j])
        a.decode(sb1)
        b.decode(sb2)
        truth = truth_order(t1, t2)
        tally.add(a.compare(b), truth, truth)  # vector exact by definition
    return tally


def calibration(claims, which):
    """Decade bins of one claim (0: ours, 1: the paper's eq. 3) over truly
    concurrent pairs: (bin, pairs, mean claim, share dominated)."""
    bins = {}
    for c in claims:
        p = c[which]
        d = -7 if p < 1e-6 else min(-1, math.floor(math.log10(p)))
        n, s, f = bins.get(d, (0, 0.0, 0))
        bins[d] = (n + 1, s + p, f + c[2])
    return [("< 1e-6" if d == -7 else "[1e%d, 1e%d)" % (d, d + 1)
             if d < -1 else ">= 0.1", n, s / n, f / n)
            for d, (n, s, f) in sorted(bins.items())]


def run(cfg):
    ctx = mp.get_context("fork")
    ports = ctx.Array("i", cfg["nodes"], lock=False)
    stop = ctx.Value("b", 0, lock=False)
    outdir = tempfile.mkdtemp(prefix="amq-clock-live-")
    procs = {}
    next_id = [0]

    def spawn(slot):
        nid = next_id[0]
        next_id[0] += 1
        p = ctx.Process(target=node_main,
                        args=(slot, nid, cfg, ports, stop, outdir))
        p.start()
        procs[slot] = p

    for s in range(cfg["nodes"]):
        spawn(s)
    deadline = time.monotonic() + cfg["seconds"]
    while time.monotonic() < deadline:
        time.sleep(0.02)
        for s, p in list(procs.items()):
            if not p.is_alive():  # it left: a new node joins in its slot
                p.join()
                spawn(s)
    stop.value = 1
    for p in procs.values():
        p.join(timeout=30)
    stats, recv, snaps = {}, Tally(cfg["m"], cfg["k"], cfg["threshold"]), []
    for name in sorted(os.listdir(outdir)):
        with open(os.path.join(outdir, name), "rb") as f:
            st, t, sn = pickle.load(f)
        os.remove(os.path.join(outdir, name))
        for k, v in st.items():
            stats[k] = max(stats.get(k, 0), v) if k == "max_vector" else \
                stats.get(k, 0) + v
        recv.merge(t)
        snaps.append(sn)
    os.rmdir(outdir)
    pairs = pair_tally(snaps, cfg, cfg["pairs"], random.Random(cfg["seed"]))
    return stats, recv, pairs, next_id[0]


def summary(cfg, stats, recv, pairs, nodes_ever):
    sent = max(stats.get("sent", 0), 1)
    def tally_dict(t):
        conc = t.truth[TRUTH_CONC]
        ordered = t.truth[TRUTH_BEFORE] + t.truth[TRUTH_AFTER]
        def mean(i):
            return sum(c[i] for c in t.claims) / len(t.claims) \
                if t.claims else 0.0
        return {
            "pairs": t.pairs, "truth": t.truth,
            "false_happened_before": t.false_order,
            "observed_fp_rate": t.false_order / conc if conc else 0.0,
            "mean_claimed_fp_exact": mean(0),
            "mean_claimed_fp_paper": mean(1),
            "wrong_direction": t.wrong_direction,
            "missed_orderings": t.missed,
            "vector_wrong": t.vector_wrong,
            "threshold": t.threshold,
            "precision": t.decided_right / t.decided if t.decided else 1.0,
            "recall": t.decided_right / ordered if ordered else 0.0,
            "calibration": [
                {"claim": r, "pairs": n, "mean_claim": mc, "observed": ob}
                for r, n, mc, ob in calibration(t.claims, 0)],
            "calibration_paper": [
                {"claim": r, "pairs": n, "mean_claim": mc, "observed": ob}
                for r, n, mc, ob in calibration(t.claims, 1)],
        }
    return {
        "nodes": cfg["nodes"], "nodes_ever": nodes_ever, "m": cfg["m"],
        "k": cfg["k"], "seconds": cfg["seconds"], "loss": cfg["loss"],
        "delay_ms": cfg["delay_ms"], "lifetime": cfg["lifetime"],
        "events": stats.get("events", 0), "sent": stats.get("sent", 0),
        "dropped_at_sender": stats.get("dropped", 0),
        "received": stats.get("received", 0),
        "lost": stats.get("sent", 0) - stats.get("received", 0),
        "reordered": stats.get("reordered", 0),
        "bloom_bytes_per_message": stats.get("bloom_bytes", 0) / sent,
        "vector_bytes_per_message": stats.get("vector_bytes", 0) / sent,
        "vector_bytes_max": stats.get("max_vector", 0),
        "full_vector_json_bytes_per_message":
            stats.get("truth_bytes", 0) / sent,
        "at_receipt": tally_dict(recv),
        "recorded_pairs": tally_dict(pairs),
    }


def print_text(s):
    print("nodes %d (%d over the run), m %d, k %d, %g s, loss %g, delay "
          "%g ms, lifetime %s" %
          (s["nodes"], s["nodes_ever"], s["m"], s["k"], s["seconds"],
           s["loss"], s["delay_ms"],
           "%g s" % s["lifetime"] if s["lifetime"] else "unbounded"))
    print("messages: %d sent, %d received, %d lost, %d reordered" %
          (s["sent"], s["received"], s["lost"], s["reordered"]))
    print("bytes a message: Bloom %.1f, sparse vector %.1f (max %d)" %
          (s["bloom_bytes_per_message"], s["vector_bytes_per_message"],
           s["vector_bytes_max"]))
    for name in ("at_receipt", "recorded_pairs"):
        t = s[name]
        print("%s: %d pairs (%s)" % (name.replace("_", " "), t["pairs"],
              ", ".join("%s %d" % kv for kv in t["truth"].items())))
        print("  concurrent called ordered %d (%.4g; claimed: ours %.3g, "
              "paper %.3g); missed orderings %d; vector wrong %d" %
              (t["false_happened_before"], t["observed_fp_rate"],
               t["mean_claimed_fp_exact"], t["mean_claimed_fp_paper"],
               t["missed_orderings"], t["vector_wrong"]))
        print("  decided ordered at claim <= %g: precision %.4f, recall "
              "%.3f" % (t["threshold"], t["precision"], t["recall"]))
        for b in t["calibration"]:
            print("  ours %-14s %7d pairs, claimed %.3g, observed %.3g" %
                  (b["claim"], b["pairs"], b["mean_claim"], b["observed"]))


SWEEP = [  # (nodes, m, k, delay ms, lifetime s)
    (8, 256, 4, 5, 0), (8, 256, 4, 200, 0), (64, 256, 4, 5, 0),
    (64, 256, 4, 5, 2), (64, 64, 3, 5, 2), (64, 1024, 6, 5, 2)]


def sweep(base):
    """The docs' table: one run a row of SWEEP, other settings as given."""
    print("| N | nodes over the run | m | k | delay ms | lifetime s | sent | "
          "lost | reordered | B/msg Bloom | B/msg sparse vector (max) | "
          "concurrent at receipt | called ordered | claimed (ours) | "
          "pairs: concurrent | called ordered | claimed (ours) | "
          "precision / recall at 0.01 | missed | vector wrong |")
    print("|" + "---:|" * 20)
    bad = 0
    for n, m, k, delay, life in SWEEP:
        cfg = dict(base, nodes=n, m=m, k=k, delay_ms=delay, lifetime=life)
        s = summary(cfg, *run(cfg))
        r, p = s["at_receipt"], s["recorded_pairs"]
        bad += r["missed_orderings"] + p["missed_orderings"] + \
            r["vector_wrong"]
        print("| %d | %d | %d | %d | %g | %s | %d | %d | %d | %.1f | %.1f "
              "(%d) | %d | %.4f | %.3g | %d | %.4f | %.3g | %.4f / %.3f | "
              "%d | %d |" %
              (n, s["nodes_ever"], m, k, delay, life or "-", s["sent"],
               s["lost"], s["reordered"], s["bloom_bytes_per_message"],
               s["vector_bytes_per_message"], s["vector_bytes_max"],
               r["truth"][TRUTH_CONC], r["observed_fp_rate"],
               r["mean_claimed_fp_exact"], p["truth"][TRUTH_CONC],
               p["observed_fp_rate"], p["mean_claimed_fp_exact"],
               p["precision"], p["recall"],
               r["missed_orderings"] + p["missed_orderings"],
               r["vector_wrong"]), flush=True)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--internal", type=float, default=0.5)
    ap.add_argument("--loss", type=float, default=0.05)
    ap.add_argument("--delay-ms", type=float, default=5.0)
    ap.add_argument("--lifetime", type=float, default=0.0,
                    help="mean seconds a node lives (0: all run to the end)")
    ap.add_argument("--rate", type=float, default=100.0,
                    help="steps a second a node")
    ap.add_argument("--record-every", type=int, default=4)
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--threshold", type=float, default=0.01,
                    help="decide ordered when the claim is at most this")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sweep", action="store_true",
                    help="the table of docs/clock.md: six settings, "
                    "--seconds each")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if not 2 <= a.nodes <= 64:
        ap.error("--nodes must be in 2..64")
    if not 0 <= a.loss < 1 or a.delay_ms < 0 or a.rate <= 0 or \
            a.seconds <= 0 or a.lifetime < 0 or a.record_every < 1:
        ap.error("--loss in [0, 1), --delay-ms >= 0, --rate, --seconds > 0, "
                 "--lifetime >= 0, --record-every >= 1")
    cfg = dict(nodes=a.nodes, seconds=a.seconds, m=a.m, k=a.k,
               internal=a.internal, loss=a.loss, delay_ms=a.delay_ms,
               lifetime=a.lifetime, rate=a.rate, record_every=a.record_every,
               pairs=a.pairs, seed=a.seed, threshold=a.threshold)
    if a.sweep:
        sys.exit(1 if sweep(cfg) and a.check else 0)
    s = summary(cfg, *run(cfg))
    if a.json:
        json.dump(s, sys.stdout, indent=1)
        print()
    else:
        print_text(s)
    if a.check:
        bad = []
        for name in ("at_receipt", "recorded_pairs"):
            if s[name]["missed_orderings"]:
                bad.append("%s: an ordered pair called concurrent" % name)
            if s[name]["vector_wrong"]:
                bad.append("%s: a wrong vector verdict" % name)
        if s["received"] == 0 or s["recorded_pairs"]["pairs"] == 0:
            bad.append("nothing delivered or recorded")
        for b in bad:
            print("FAIL:", b, file=sys.stderr)
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
