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
 5. The hot shard's primary is killed: after its replica's promotion every
    member still answers 1 and the bound is the same.
"""
import math
import random
import signal
import sys
import time

from redis.cluster import RedisCluster

from harness import run
from test_cascade import member, nonmember
from test_cluster import promoted, start_cluster, wait_for

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/python")
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
                              dim_bits=12)
    hot = sc.shard_of("{hot}x")
    for s in sc.shards:
        print("shard %s slots %s: %d members, share %.3f, eps %.5f, "
              "%d bits, bound %.5f" % (s.key, s.slots, s.members, s.weight,
                                       s.eps, s.bits, s.bound))
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

    victim_port = rc.get_node_from_key(sc.shards[hot].key).port
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
    c.ok(time.time() - t0 < 90, "took %.1fs" % (time.time() - t0))


if __name__ == "__main__":
    run(main)
