"""amq.cluster without a cluster: shard_budgets (the allocation engine
over shards' curves), the slot-range arithmetic of slot moves and the
configuration's JSON (the Redis Cluster side runs in
tests/redis/test_cluster_cascade.py)."""
import math
import unittest

import amq
from amq.cluster import Shard, ShardedCascade, _merge, _minus, shard_budgets


def curve(n, c=0.48):
    """A Bloom-like curve of n keys: bits = n ln(1/eps) / c."""
    return [(e, n * math.log(1 / e) / c) for e in
            (0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001)]


class ShardBudgets(unittest.TestCase):
    def test_meets_target_and_favours_hot_shard(self):
        shards = [(0.8, curve(1000)), (0.1, curve(1000)), (0.1, curve(1000))]
        out = shard_budgets(shards, 0.01)
        self.assertLessEqual(sum(w * e for (w, _), (e, _) in
                                 zip(shards, out)), 0.01 * (1 + 1e-9))
        self.assertLess(out[0][0], out[1][0])
        equal = 3 * 1000 * math.log(100) / 0.48
        self.assertLess(sum(b for _, b in out), equal)

    def test_equal_shards_get_equal_budgets(self):
        out = shard_budgets([(0.5, curve(500)), (0.5, curve(500))], 0.01)
        self.assertAlmostEqual(out[0][0], out[1][0], places=9)
        self.assertTrue(0.0099 <= out[0][0] <= 0.01)

    def test_bad_input(self):
        with self.assertRaises(amq.InvalidError):
            shard_budgets([], 0.01)
        with self.assertRaises(amq.InvalidError):
            shard_budgets([(1.0, [])], 0.01)
        with self.assertRaises(amq.InvalidError):  # below every curve
            shard_budgets([(1.0, curve(10))], 1e-9)
        with self.assertRaises(amq.InvalidError):
            shard_budgets([(-1.0, curve(10))], 0.01)


class SlotRanges(unittest.TestCase):
    def test_minus_and_merge(self):
        r = [(0, 5460), (10923, 16383)]
        self.assertEqual(_minus(r, 0, 99), [(100, 5460), (10923, 16383)])
        self.assertEqual(_minus(r, 5000, 11000),
                         [(0, 4999), (11001, 16383)])
        self.assertEqual(_minus(r, 6000, 7000), r)
        self.assertEqual(_minus([(5, 5)], 5, 5), [])
        self.assertEqual(_merge([(100, 200), (0, 99), (300, 400)]),
                         [(0, 200), (300, 400)])
        # every slot once, before and after a move
        shards = [[(0, 5460)], [(5461, 10922)], [(10923, 16383)]]
        moved = [_minus(x, 5000, 6000) for x in shards]
        moved[2] = _merge(moved[2] + [(5000, 6000)])
        slots = sorted(s for x in moved for lo, hi in x
                       for s in range(lo, hi + 1))
        self.assertEqual(slots, list(range(16384)))


class Configuration(unittest.TestCase):
    def test_json_round_trip(self):
        shards = [Shard([(0, 8191)], "n.3{0}", "0", "cascade", 10, 0.25,
                        0.02, 800, 0.019, 5, [(0.01, 900.0), (0.02, 800.0)],
                        "n.3.plain{0}", True, ["n.2{0}"]),
                  Shard([(8192, 16383)], "n.3{1}", "1", "filter", 12, 0.75,
                        0.0066, 1200, 0.006, 6, [(0.005, 1300.0)])]
        sc = ShardedCascade(None, "n", 0.01, shards, epoch=3,
                            slot_queries={0: 5, 9000: 15},
                            moves=[(0, 10, 1)])
        again = ShardedCascade.from_json(None, sc.to_json())
        self.assertEqual(again.shards, sc.shards)
        self.assertEqual((again.epoch, again.slot_queries, again.moves),
                         (3, {0: 5, 9000: 15}, [(0, 10, 1)]))
        self.assertEqual(again.shards[0].live, ("n.3.plain{0}", "filter"))
        self.assertEqual(again.shards[1].live, ("n.3{1}", "filter"))

    def test_every_slot_needs_a_shard(self):
        with self.assertRaises(amq.InvalidError):
            ShardedCascade(None, "n", 0.01, [Shard([(0, 100)], "k", "0")])


if __name__ == "__main__":
    unittest.main()
