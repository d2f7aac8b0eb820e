"""A filter that grows, from Python: an eqf made for 100 keys takes 100
times that, keeps every one and its rate, and comes back from bytes."""
import unittest

import amq


class TestGrow(unittest.TestCase):
    def test_grows(self):
        f = amq.Filter("eqf", 100, 0.01)
        self.assertTrue(f.caps & amq.CAP_GROW)
        keys = [f"user:{i}" for i in range(10000)]
        for k in keys:
            f.add(k)
        self.assertTrue(all(k in f for k in keys))
        self.assertLessEqual(f.fpr_bound, 0.01)
        ghosts = sum(f"ghost:{i}" in f for i in range(50000))
        self.assertLess(ghosts, 0.01 * 50000 * 1.3)
        g = amq.Filter.from_bytes(f.to_bytes())
        self.assertTrue(all(k in g for k in keys))
        g.add("one more")
        self.assertIn("one more", g)


if __name__ == "__main__":
    unittest.main()
