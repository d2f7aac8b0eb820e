"""Adaptive filters from Python: reports fix false positives, members
stay, a member's report is refused, the records survive a round trip."""
import unittest

import amq


class TestAdapt(unittest.TestCase):
    def test_reports(self):
        f = amq.Filter("aqf", 2000, 0.05)
        self.assertTrue(f.caps & amq.CAP_ADAPT)
        members = [f"user:{i}" for i in range(2000)]
        for k in members:
            f.add(k)
        hits = [k for k in (f"ghost:{i}" for i in range(20000)) if k in f]
        self.assertGreater(len(hits), 200)
        changed = sum(f.report_fp(k) for k in hits)
        self.assertEqual(sum(k in f for k in hits), 0)
        self.assertTrue(all(k in f for k in members))
        self.assertFalse(f.report_fp(hits[0]))  # already answered False
        st = f.adapt_stats()
        self.assertEqual(st["reports"], changed)
        self.assertGreaterEqual(st["records"], st["extended"])
        self.assertGreater(st["map_bytes"], 9 * 2000)
        with self.assertRaises(amq.InvalidError):
            f.report_fp(members[3])
        g = amq.Filter.from_bytes(f.to_bytes())
        self.assertEqual(sum(k in g for k in hits), 0)
        self.assertTrue(all(k in g for k in members))

    def test_not_adaptive(self):
        f = amq.Filter("qf", 100, 0.01)
        with self.assertRaises(amq.UnsupportedError):
            f.report_fp("x")


if __name__ == "__main__":
    unittest.main()
