"""Tests of amq.TDigest (amq_tdigest, the merging t-digest).

Run: AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \
     python3 -m unittest python/tests/test_tdigest.py
"""

import bisect
import doctest
import math
import os
import random
import tempfile
import unittest

import amq
from amq import _tdigest


def rank_interval(data, x):
    """The exact rank of x in sorted data: [fraction below, at or below]."""
    n = len(data)
    return bisect.bisect_left(data, x) / n, bisect.bisect_right(data, x) / n


def bound(a, b, delta, n):
    """The largest e(p) = 2 pi sqrt(p(1-p)) / delta + 1/n for p in [a, b]."""
    lo, hi = min(a, b), max(a, b)
    p = 0.5 if lo <= 0.5 <= hi else (hi if hi < 0.5 else lo)
    return 2 * math.pi * math.sqrt(p * (1 - p)) / delta + 1 / n


class TestTDigest(unittest.TestCase):

    def test_docstring(self):
        failed, _ = doctest.testmod(_tdigest)
        self.assertEqual(failed, 0)

    def test_accuracy_in_rank(self):
        rnd = random.Random(3)
        data = [rnd.expovariate(1.0) for _ in range(50000)]
        d = amq.TDigest()
        d.update(data)
        data.sort()
        self.assertEqual((d.min, d.max), (data[0], data[-1]))
        self.assertEqual(d.quantile(0.0), data[0])
        self.assertEqual(d.quantile(1.0), data[-1])
        for q in (0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999):
            x = d.quantile(q)
            lo, hi = rank_interval(data, x)
            p = min(max(q, lo), hi)
            self.assertLessEqual(abs(p - q), bound(p, q, 100, len(data)),
                                 "quantile(%g) = %g, rank [%g, %g]" %
                                 (q, x, lo, hi))
            c = d.cdf(data[int(q * (len(data) - 1))])
            lo, hi = rank_interval(data, data[int(q * (len(data) - 1))])
            p = min(max(c, lo), hi)
            self.assertLessEqual(abs(p - c), bound(p, c, 100, len(data)))
        self.assertLessEqual(d.centroids, 102)

    def test_merge_and_weights(self):
        a, b, w = amq.TDigest(50), amq.TDigest(50), amq.TDigest(50)
        a.update(range(0, 1000, 2))
        b.update(range(1, 1000, 2))
        a.merge(b)
        self.assertEqual(len(a), 1000)
        self.assertLess(abs(a.quantile(0.5) - 500), 15)
        w.add(1.0, 3)
        w.add(2.0, 1)
        self.assertEqual(w.rank(1.0), 1.5)
        self.assertEqual(w.value_at(3.5), 2.0)
        a.merge(a)
        self.assertEqual(len(a), 2000)
        with self.assertRaises(TypeError):
            a.merge("x")

    def test_frames(self):
        d = amq.TDigest(30)
        d.update(x * 0.5 for x in range(777))
        data = d.to_bytes()
        e = amq.TDigest.from_bytes(data)
        self.assertEqual(e.to_bytes(), data)
        self.assertEqual(e.quantile([0.1, 0.5]), d.quantile([0.1, 0.5]))
        d.add(3.0)
        e.add(3.0)
        self.assertEqual(d.to_bytes(), e.to_bytes())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "d.amq")
            d.save(path)
            self.assertEqual(amq.TDigest.load(path).to_bytes(), d.to_bytes())
        bad = bytearray(data)
        bad[-1] ^= 1
        with self.assertRaises(amq.ChecksumError):
            amq.TDigest.from_bytes(bytes(bad))
        f = amq.Filter("bloom", capacity=10, fpr=0.01)
        with self.assertRaises(amq.KindError):
            amq.TDigest.from_bytes(f.to_bytes())
        with self.assertRaises(amq.KindError):
            amq.Filter.from_bytes(data)

    def test_bad_input_changes_nothing(self):
        d = amq.TDigest()
        d.add(1.0)
        for bad in (float("nan"), float("inf")):
            with self.assertRaises(amq.InvalidError):
                d.add(bad)
        for w in (0, -1, 1 << 53):
            with self.assertRaises(ValueError):
                d.add(2.0, w)
        with self.assertRaises(TypeError):
            d.add("1")
        with self.assertRaises(ValueError):
            amq.TDigest(0.5)
        self.assertEqual((len(d), d.max), (1, 1.0))
        self.assertTrue(math.isnan(d.quantile(2.0)))
        e = amq.TDigest()
        self.assertTrue(math.isnan(e.quantile(0.5)) and math.isnan(e.min))
        d.reset()
        self.assertEqual(len(d), 0)
        info = d.info()
        self.assertEqual(info["compression"], 100.0)
        self.assertEqual(info["merged_nodes"] + info["unmerged_nodes"], 0)
        d.close()
        with self.assertRaises(amq.ClosedError):
            len(d)


if __name__ == "__main__":
    unittest.main()
