"""Tests of amq.Window (amq_window, the sliding-window filter).

Run: AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \
     python3 -m unittest python/tests/test_window.py
"""

import doctest
import os
import pickle
import tempfile
import unittest

import amq
from amq import _window


class TestWindow(unittest.TestCase):
    def test_count_window(self):
        span = 5000
        w = amq.Window(span=span, fpr=0.01)
        for i in range(4 * span):
            w.add(i)
            if (i + 1) % span == 0:
                done = i + 1
                # every key of the last span adds answers
                self.assertTrue(all(w.contains(j)
                                    for j in range(done - span, done)))
        info = w.info()
        self.assertEqual(info["now"], 4 * span)
        self.assertLessEqual(info["bound"], 0.01)
        gone = (info["generations"] + 1) * info["length"]
        old = range(0, 4 * span - gone)
        rate = sum(w.contains(j) for j in old) / len(old)
        self.assertLess(rate, 3 * info["bound"] + 0.003)
        self.assertIn(4 * span - 1, w)

    def test_time_window(self):
        w = amq.Window(span=1000, capacity=2000, clock="time", generations=4)
        self.assertFalse(w.add(b"k", now=10))
        self.assertTrue(w.add(b"k", now=10))
        self.assertTrue(w.contains(b"k", now=1009))
        e = w.expiry(b"k", now=10)
        self.assertGreaterEqual(e, 1009)
        self.assertTrue(w.contains(b"k", now=e))
        self.assertLess(e, 10 + 5 * 250)
        self.assertFalse(w.contains(b"k", now=e + 1))
        self.assertIsNone(w.expiry(b"k", now=e + 1))
        # refreshing moves the expiry on
        w.add(b"k", now=900)
        self.assertGreater(w.expiry(b"k", now=900), e)
        # time never runs backwards
        w.add(b"x", now=5)
        self.assertEqual(w.now, 900)
        w.advance(10 ** 6)
        self.assertEqual(w.bound(), 0.0)
        self.assertFalse(w.contains(b"k"))

    def test_frames(self):
        w = amq.Window(span=300, capacity=600, clock="time", seal="qf")
        for i in range(2000):
            w.add("key%d" % i, now=i // 4)
        data = w.to_bytes()
        v = amq.Window.from_bytes(data)
        self.assertEqual(v.to_bytes(), data)
        self.assertEqual([w.contains("key%d" % i, 600) for i in range(2000)],
                         [v.contains("key%d" % i, 600) for i in range(2000)])
        self.assertEqual(pickle.loads(pickle.dumps(w)).to_bytes(), data)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w.amq")
            w.save(path)
            self.assertEqual(amq.Window.load(path).to_bytes(), data)
        bad = bytearray(data)
        bad[100] ^= 1
        with self.assertRaises(amq.ChecksumError):
            amq.Window.from_bytes(bytes(bad))
        with self.assertRaises(amq.KindError):
            amq.Filter.from_bytes(data)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            amq.Window(span=0)
        with self.assertRaises(ValueError):
            amq.Window(span=10, clock="time")
        with self.assertRaises(ValueError):
            amq.Window(span=10, clock="sundial")
        with self.assertRaises(ValueError):
            amq.Window(span=10, generations=65)
        with self.assertRaises(amq.InvalidError):
            amq.Window(span=10, fpr=0.7)
        with self.assertRaises(TypeError):
            amq.Window(span="10")
        w = amq.Window(span=10)
        with self.assertRaises(ValueError):
            w.add("a", now=-1)
        w.close()
        with self.assertRaises(amq.ClosedError):
            w.add("a")

    def test_doc(self):
        self.assertEqual(doctest.testmod(_window).failed, 0)


if __name__ == "__main__":
    unittest.main()
