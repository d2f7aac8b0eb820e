"""A learned cascade per shard of a 3-primary + 3-replica Redis Cluster,
with one global certified bound (python/amq/cluster.py, docs/cluster.md).

 1. amq.cluster.ShardedCascade.train splits 6000 members and a sample of
    non-member queries by their slots' shards. Half the queries carry the
    hash tag {hot}, so one shard takes about two thirds of them. It
    measures each shard's curve, lets the allocation engine choose the
    budgets and loads one AMQ.CASCADE key a shard, each in its shard's
    slots.
 2. The budgets meet the target (sum w_m eps_m <= eps), the hot shard's
    is the tightest, and the total is no larger than every shard at eps.
 3. Every member answers 1 through the cluster. The measured rate on
    fresh queries drawn like the sample is within the recomposed bound
    (AMQ.CASCADE.INFO of each key) plus four binomial standard deviations.
 4. to_json / from_json give the same answers; shares() of a sample
    without the hot tag recomposes the bound for that mix.
 5. Audits: every shard samples its queries, the truths go back, and
    check() measures the shards' shares. A workload with no hot tenant
    moves the measured shares off the hot shard; replan() gives budgets
    for them. Queries shaped like the members break a shard's bound: its
    audit says so and check() moves the shard to its standby, a plain
    filter, whose bound holds for any query.
 6. A rollout with the measured shares loads epoch 3's keys beside epoch
    2's; a client that kept epoch 2 answers from the old keys, every
    member 1; after retire() it finds its keys gone, rereads the
    configuration and answers every member 1 again.
 7. A slot range moves to another shard while a thread queries its
    members through a client that never refreshes: never a 0; after the
    move the range is the destination's and every member answers 1. A
    range with more members than the destination's buffer takes is
    refused before anything moves.
 8. The hot shard's primary is killed: after its replica's promotion every
    member still answers 1 and the bound is the same.
"""
import math
import random
import signal
import sys
import threading
import time

from redis.cluster import RedisCluster

from harness import run
from test_cascade import member, nonmember
from test_cluster import promoted, start_cluster, wait_for

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/python")
import amq.cluster  # noqa: E402
from amq import FullError  # noqa: E402
from amq.cluster import ShardedCascade  # noqa: E402

EPS = 0.01


def queries(rnd, n):
    """Non-member queries: half of them a hot tenant's, all in one slot."""
    out = []
    for i in range(n):
        q = nonmember(rnd)
        out.append("{hot}" + q if rnd.random() < 0.5 else q)
    return out


def main(args, c, servers):
    t0 = time.time()
    nodes = start_cluster(args.module, servers)
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    rnd = random.Random(29)
    members = sorted({member(rnd) for _ in range(6000)})
    sample = queries(rnd, 12000)
    sample = [q for q in sample if q not in set(members)]
    sc = ShardedCascade.train(rc, members, sample, EPS, name="users",
                              dim_bits=12, standby=True)
    hot = sc.shard_of("{hot}x")
    for s in sc.shards:
        print("shard %s (%s) slots %s: %d members, share %.3f, eps %.5f, "
              "%d bits, bound %.5f" % (s.key, s.kind, s.slots, s.members,
                                       s.weight, s.eps, s.bits, s.bound))
        c.ok(any(lo <= rc.keyslot(s.key) <= hi for lo, hi in s.slots),
             "%s lies in its shard's slots" % s.key)
    total = sum(s.weight * s.eps for s in sc.shards)
    c.ok(total <= EPS * (1 + 1e-9), "sum w eps = %g <= %g" % (total, EPS))
    c.ok(sc.shards[hot].weight > 0.5 and
         sc.shards[hot].eps == min(s.eps for s in sc.shards),
         "the hot shard takes most queries and the tightest budget")
    # bits at equal eps: the curve point at factor 1 of every shard
    equal = sum(dict(s.curve)[EPS] for s in sc.shards)
    chosen = sum(s.bits for s in sc.shards)
    print("bits: chosen %d, every shard at eps %d (%.3f)" %
          (chosen, equal, chosen / equal))
    c.ok(chosen <= equal * 1.02, "the budgets cost no more than equal eps")
    bound = sc.bound()
    c.ok(bound <= EPS * (1 + 1e-9), "global bound %g <= %g" % (bound, EPS))

    got = sc.contains_many(members)
    c.ok(all(got), "%d of %d members answer 0" % (got.count(False),
                                                  len(members)))
    fresh = [q for q in queries(random.Random(30), 20000)
             if q not in set(members)]
    fp = sum(sc.contains_many(fresh))
    rate = fp / len(fresh)
    slack = 4 * math.sqrt(bound * (1 - bound) / len(fresh))
    print("measured %d / %d = %.5f against the bound %.5f" %
          (fp, len(fresh), rate, bound))
    c.ok(rate <= bound + slack, "measured %.5f <= bound %.5f + %.5f" %
         (rate, bound, slack))

    again = ShardedCascade.from_json(rc, sc.to_json())
    probe = members[:500] + fresh[:2000]
    c.ok(again.contains_many(probe) == sc.contains_many(probe),
         "from_json answers as the trained one")
    cold = [q for q in fresh if not q.startswith("{hot}")]
    w = sc.shares(cold)
    c.ok(w[hot] < 0.5 and math.isclose(sum(w), 1.0),
         "shares without the hot tag: %r" % w)
    c.ok(sc.bound(w) > 0, "the bound recomposed for that mix: %g" %
         sc.bound(w))
    c.ok(ShardedCascade.open(rc, "users").epoch == sc.epoch == 1,
         "the configuration is stored at epoch 1")

    members_set = set(members)

    def truth(items):
        return [i.decode() in members_set for i in items]

    audited(c, rc, rnd, members, truth, hot)
    sc = rolled_out(c, sc, rc, members, truth)
    moved(c, sc, rc, members)

    bound = sc.bound()
    victim_port = rc.get_node_from_key(sc.shards[hot].live[0]).port
    victim = next(s for s in nodes if s.port == victim_port)
    victim.stop(signal.SIGKILL)
    alive = [s for s in nodes if s is not victim]
    wait_for(lambda: promoted(alive, victim.port), 30, "failover")
    rc.close()
    rc = RedisCluster(host="127.0.0.1", port=alive[0].port)
    sc.rc = rc
    got = sc.contains_many(members)
    c.ok(all(got), "after failover: %d members answer 0" % got.count(False))
    c.ok(math.isclose(sc.bound(), bound), "after failover the same bound")
    rc.close()
    c.ok(time.time() - t0 < 150, "took %.1fs" % (time.time() - t0))


def audited(c, rc, rnd, members, truth, hot):
    """Audits measure the shares; a broken bound moves a shard to its
    standby. On learned cascades (a plain filter's bound holds for any
    query and needs no audit): a small int8 model and an insert buffer,
    at 4% (the sample is too small to certify much lower)."""
    sample = [q for q in queries(rnd, 12000) if q not in set(members)]
    sc = ShardedCascade.train(rc, members, sample, 4 * EPS, name="learned",
                              curve=(2.0, 1.0, 0.5), dim_bits=8,
                              quantize=True, aux_capacity=100, standby=True)
    c.ok(all(s.kind == "cascade" for s in sc.shards),
         "learned shards: %s" % [s.kind for s in sc.shards])
    sc.audit(0.5, seed=3)
    cold = [q for q in (nonmember(rnd) for _ in range(6000))
            if q not in set(members)]
    sc.contains_many(cold)
    n = sc.audit_step(truth, count=10000)
    h = sc.check()
    print("audit: %d truths, measured shares %s, bound %.5f at them, "
          "violated %s" % (n, h.shares, h.measured_bound or -1, h.violated))
    c.ok(n > 0 and h.shares is not None, "the audits took %d truths" % n)
    c.ok(h.shares is not None and abs(h.shares[hot] - 1 / 3) < 0.05 and
         sc.shards[hot].weight > 0.5,
         "a workload without the hot tag: measured hot share %.3f, "
         "trained %.3f" % ((h.shares or [0] * 3)[hot],
                           sc.shards[hot].weight))
    budgets = sc.replan(h.shares or [1.0 / len(sc.shards)] * len(sc.shards))
    c.ok(sum(w * e for w, (e, _) in zip(h.shares or [], budgets)) <=
         sc.eps * (1 + 1e-9), "replan meets eps at the measured shares")
    c.ok(budgets[hot][0] > sc.shards[hot].eps,
         "replan loosens the hot shard: %.4f > %.4f" %
         (budgets[hot][0], sc.shards[hot].eps))

    # queries shaped like the members: learned shards' bounds break
    sneaky = ["user%d.shop.example" % rnd.randrange(10**6)
              for _ in range(8000)]
    sneaky = [q for q in sneaky if q not in set(members)]
    learned = [i for i, s in enumerate(sc.shards) if s.kind == "cascade"]
    before = sc.bound()
    for _ in range(3):
        sc.contains_many(sneaky)
        sc.audit_step(truth, count=10000)
    h = sc.check()
    print("sneaky queries: violated %s, switched %s, bound %.5f -> %.5f" %
          (h.violated, h.switched, before, h.bound))
    c.ok(not learned or h.violated, "the audit finds a learned shard broken")
    c.ok(all(sc.shards[i].on_standby for i in h.violated),
         "every broken shard answers from its standby")
    c.ok(all(sc.contains_many(members)), "members answer 1 on the standbys")
    c.ok(sc.bound() <= sc.eps * (1 + 1e-9),
         "the bound is within eps again: %.5f" % sc.bound())
    fresh = [q for q in sneaky[:4000]]
    rate = sum(sc.contains_many(fresh)) / len(fresh)
    worst = sc.check().worst
    slack = 4 * math.sqrt(worst * (1 - worst) / len(fresh))
    c.ok(rate <= worst + slack, "sneaky queries now: %.5f <= worst shard "
         "%.5f + %.5f" % (rate, worst, slack))


def rolled_out(c, sc, rc, members, truth):
    """A new epoch beside the old one, then the old one retired."""
    old = ShardedCascade.open(rc, "users")
    e0 = old.epoch
    rnd = random.Random(31)
    sample = [q for q in queries(rnd, 12000) if q not in set(members)]
    e = sc.rollout(members, sample, dim_bits=12)
    c.ok(e == e0 + 1 and not any(s.on_standby for s in sc.shards),
         "rollout published epoch %d with the new keys live" % e)
    c.ok(all(old.contains_many(members)) and old.epoch == e0,
         "a client on epoch %d answers from the old keys" % e0)
    c.ok(sc.bound() <= EPS * (1 + 1e-9), "the new bound %.5f" % sc.bound())
    gone = sc.retire()
    c.ok(gone > 0, "retire deleted %d old keys" % gone)
    c.ok(all(old.contains_many(members)) and old.epoch == sc.epoch,
         "the old client found its keys gone and moved to epoch %d" %
         old.epoch)
    return sc


def moved(c, sc, rc, members):
    """A slot range moves with its filter; no false negative meanwhile."""
    p = rc.pipeline(transaction=False)
    for k in members:
        p.set(k, 1)
    p.execute()
    src = sc._slot_shard[0]
    dst = (src + 1) % len(sc.shards)
    too_many = sc.shards[dst].room + 1
    lo, hi = 0, 0
    while len([k for k in members if rc.keyslot(k) <= hi]) < too_many:
        hi += 1
    try:
        sc.move_slots(lo, hi, dst)
        c.ok(False, "a move past the buffer is refused")
    except FullError as e:
        c.ok(sc._slot_shard[0] == src, "refused, nothing moved: %s" % e)
    hi = max(0, hi // 2)
    inside = [k for k in members if rc.keyslot(k) <= hi]
    stale = ShardedCascade.open(rc, "users")
    misses, rounds = [], [0]
    done = threading.Event()

    def ask():
        while not done.is_set():
            got = stale.contains_many(inside)
            misses.append(got.count(False))
            rounds[0] += 1

    t = threading.Thread(target=ask)
    t.start()
    try:
        n = sc.move_slots(lo, hi, dst)
    finally:
        done.set()
        t.join()
    print("moved slots %d..%d (%d members) to shard %d; %d query rounds "
          "meanwhile" % (lo, hi, n, dst, rounds[0]))
    c.ok(n == len(inside), "the range's %d members went along" % n)
    c.ok(rounds[0] > 0 and sum(misses) == 0,
         "a client that never refreshed: %d false negatives in %d rounds" %
         (sum(misses), rounds[0]))
    c.ok(all(sc._slot_shard[s] == dst for s in range(lo, hi + 1)) and
         rc.keyslot(inside[0]) in range(lo, hi + 1) and
         rc.get_node_from_key(inside[0]).port ==
         rc.get_node_from_key(sc.shards[dst].live[0]).port,
         "the range is the destination's, data and filter")
    c.ok(all(sc.contains_many(members)), "every member answers 1")
    c.ok(sc.bound() <= 1.5 * EPS, "the bound after the move %.5f" %
         sc.bound())

    # a move that stops part way resumes, and answers throughout
    lo, hi = hi + 1, hi + 20
    inside = [k for k in members if lo <= rc.keyslot(k) <= hi]
    real = amq.cluster.migrate_slots

    def broken(rc_, a, b, host, port, **kw):
        real(rc_, a, a, host, port, **kw)
        raise ConnectionError("the link went down after slot %d" % a)

    amq.cluster.migrate_slots = broken
    try:
        sc.move_slots(lo, hi, dst)
        c.ok(False, "the broken move raises")
    except ConnectionError:
        pass
    finally:
        amq.cluster.migrate_slots = real
    half = ShardedCascade.open(rc, "users")
    c.ok(half.moves == [(lo, hi, dst)] and all(half.contains_many(inside)),
         "stopped part way: the move is published, its members answer 1")
    again = sc.move_slots(lo, hi, dst)
    c.ok(again == 0 and not sc.moves and
         all(sc._slot_shard[s] == dst for s in range(lo, hi + 1)) and
         all(sc.contains_many(members)),
         "the same call resumes it: every member answers 1")


if __name__ == "__main__":
    run(main)
