"""amq.cluster.shard_budgets: the allocation engine over shards' curves
(the Redis Cluster side runs in tests/redis/test_cluster_cascade.py)."""
import math
import unittest

import amq
from amq.cluster import shard_budgets


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


if __name__ == "__main__":
    unittest.main()
