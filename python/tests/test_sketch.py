"""Tests of amq.CountMin and amq.TopK (the sketches of amq/sketch.h).

Run: AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \
     python3 -m unittest python/tests/test_sketch.py
"""

import collections
import copy
import math
import os
import pickle
import random
import subprocess
import tempfile
import unittest

import amq
from amq._sketch import CountMin, TopK

try:
    import numpy as np
except ImportError:  # numpy is optional
    np = None

SEED = 20240611


def _tool() -> str:
    lib = os.environ.get("AMQ_LIBRARY", "")
    return os.path.join(os.path.dirname(lib), "amq") if lib else ""


TOOL = _tool()
HAVE_TOOL = bool(TOOL) and os.access(TOOL, os.X_OK)


def zipf_stream(distinct, n, s, seed):
    """n arrivals over keys "k0".."k{distinct-1}", key i with weight
    1/(i+1)^s, and their true counts."""
    rng = random.Random(seed)
    names = ["k%d" % i for i in range(distinct)]
    weights = [1.0 / (i + 1) ** s for i in range(distinct)]
    stream = rng.choices(names, weights, k=n)
    return stream, collections.Counter(stream)


def upper_tail(p, n, sds=4.0):
    """p plus sds standard deviations of a binomial rate over n trials."""
    return p + sds * math.sqrt(p * (1 - p) / n)


class TestCountMinGuarantee(unittest.TestCase):
    def test_never_below_and_within_bound(self):
        stream, truth = zipf_stream(3000, 60000, 1.1, SEED)
        absent = ["absent%d" % i for i in range(3000)]
        keys = list(truth)
        trials = len(keys) + len(absent)
        # (272, 3): eps 0.01, delta 0.05; (30, 1): delta 0.37, a shape
        # where the bound is exceeded often enough to be measured.
        for width, depth in ((272, 3), (30, 1)):
            for conservative in (True, False):
                with self.subTest(width=width, conservative=conservative):
                    m = CountMin(width, depth, conservative=conservative)
                    self.assertEqual(m.add_many(stream), len(stream))
                    self.assertEqual(m.total, len(stream))
                    self.assertAlmostEqual(m.epsilon, math.e / width)
                    self.assertAlmostEqual(m.delta, math.exp(-depth))
                    self.assertAlmostEqual(m.error_bound,
                                           m.epsilon * len(stream))
                    est = m.count_many(keys)
                    self.assertEqual(est[:500], [m[k] for k in keys[:500]])
                    for k, e in zip(keys, est):
                        self.assertGreaterEqual(e, truth[k], k)
                    self.assertTrue(any(e > truth[k]
                                        for k, e in zip(keys, est)),
                                    "no collision: the test is vacuous")
                    over = sum(e > truth[k] + m.error_bound
                               for k, e in zip(keys, est))
                    over += sum(e > m.error_bound
                                for e in m.count_many(absent))
                    self.assertLessEqual(over / trials,
                                         upper_tail(m.delta, trials))
                    if depth == 1:
                        self.assertGreater(over, 0)

    def test_conservative_never_above_standard(self):
        stream, truth = zipf_stream(2000, 20000, 1.0, SEED + 1)
        cu, std = CountMin(200, 4), CountMin(200, 4, conservative=False)
        cu.add_many(stream)
        std.add_many(stream)
        keys = list(truth)
        for k, a, b in zip(keys, cu.count_many(keys), std.count_many(keys)):
            self.assertLessEqual(a, b, k)
            self.assertGreaterEqual(a, truth[k])

    def test_fpr_bound_is_the_measured_rate(self):
        m = CountMin(4000, 3)
        m.add_many(["in%d" % i for i in range(1000)])
        absent = ["out%d" % i for i in range(20000)]
        hits = sum(e > 0 for e in m.count_many(absent))
        self.assertEqual(hits, sum(k in m for k in absent[:2000]) +
                         sum(e > 0 for e in m.count_many(absent[2000:])))
        p = m.fpr_bound
        self.assertGreater(p, 0.005)
        self.assertLess(abs(hits / len(absent) - p),
                        4 * math.sqrt(p * (1 - p) / len(absent)))

    def test_add_returns_estimate_and_counts(self):
        m = CountMin(1000, 4)
        self.assertEqual(m.add("a"), 1)
        self.assertEqual(m.increment("a", 4), 5)
        self.assertEqual(m.add("a", 0), 5)  # 0 only queries
        self.assertEqual(m.total, 5)
        self.assertEqual(m.count("a"), 5)
        self.assertEqual(m["a"], 5)
        self.assertIn("a", m)
        self.assertIn(b"a", m)
        self.assertEqual(m.count("never"), 0)
        self.assertNotIn("never", m)
        self.assertEqual(m.add_hash(m.hash(7), 2), 2)
        self.assertEqual(m.count(7), 2)
        self.assertEqual(m.count_hash(m.hash("a")), 5)
        self.assertEqual(m.count_hashes([m.hash("a"), m.hash(7)]), [5, 2])
        self.assertEqual(m.add_hashes([m.hash("b")] * 3), 3)
        self.assertEqual(m.count("b"), 3)

    def test_per_key_counts(self):
        m = CountMin(5000, 5)
        self.assertEqual(m.add_many(["x", "y", "z"], [1, 10, 100]), 3)
        self.assertEqual(m.count_many(["x", "y", "z"]), [1, 10, 100])
        m.add_many(iter(["x", "y"]), 2)
        self.assertEqual(m.count_many(["x", "y"]), [3, 12])
        self.assertEqual(m.total, 115)

    def test_saturation(self):
        m = CountMin(100, 3, counter_bits=8)
        self.assertEqual(m.counter_max, 255)
        self.assertEqual(m.add("a", 300), 255)
        self.assertEqual(m.add("a"), 255)
        self.assertEqual(m.count("a"), 255)
        self.assertEqual(m.saturated, 3)
        self.assertEqual(m.total, 301)

    def test_from_error(self):
        m = CountMin(eps=0.001, delta=0.001)
        self.assertEqual(m.width, math.ceil(math.e / 0.001))
        self.assertEqual(m.depth, math.ceil(math.log(1000)))
        self.assertLessEqual(m.epsilon, 0.001)
        self.assertLessEqual(m.delta, 0.001)
        self.assertEqual(CountMin(eps=0.01).depth, 5)  # delta 0.01
        self.assertEqual(m.spec, "cms:width=%d,depth=7,counter=32,"
                                 "conservative=1" % m.width)


class TestCountMinMerge(unittest.TestCase):
    def test_merge_is_the_union_of_streams(self):
        s1, t1 = zipf_stream(500, 5000, 1.0, SEED + 2)
        s2, t2 = zipf_stream(500, 5000, 1.0, SEED + 3)
        a, b, both = CountMin(300, 4), CountMin(300, 4), CountMin(300, 4)
        a.add_many(s1)
        b.add_many(s2)
        both.add_many(s1 + s2)
        u = a | b
        self.assertEqual(u.total, 10000)
        self.assertEqual(a.total, 5000)  # | leaves a as it was
        truth = t1 + t2
        for k in truth:
            self.assertGreaterEqual(u[k], truth[k])
        a |= b
        self.assertEqual(a.to_bytes(), u.to_bytes())
        self.assertIs(a.merge(CountMin(300, 4)), a)

    def test_merge_refuses_other_shapes_and_hashers(self):
        a = CountMin(300, 4)
        a.add("k")
        before = a.to_bytes()
        for other in (CountMin(301, 4), CountMin(300, 3),
                      CountMin(300, 4, counter_bits=16),
                      CountMin(300, 4, seed=1)):
            with self.assertRaises(amq.IncompatibleError):
                a.merge(other)
        self.assertEqual(a.to_bytes(), before)
        with self.assertRaises(TypeError):
            a.merge(amq.Filter("cms:width=300,depth=4"))
        k1, k2 = CountMin(300, 4, keyed=True), CountMin(300, 4, keyed=True)
        with self.assertRaises(amq.IncompatibleError):
            k1.merge(k2)
        k1.merge(k1.copy())  # the same key: fine


class TestTopK(unittest.TestCase):
    def test_finds_the_heavy_hitters_of_a_zipf_stream(self):
        stream, truth = zipf_stream(2000, 100000, 1.2, SEED + 4)
        t = TopK(10)
        self.assertEqual((t.k, t.width, t.depth), (10, 80, 4))
        self.assertEqual(t.add_many(stream), len(stream))
        self.assertEqual(t.total, len(stream))
        self.assertEqual(t.size, 10)
        listed = t.list()
        self.assertEqual(len(listed), 10)
        true_top = [k for k, _ in truth.most_common(10)]
        self.assertEqual({k.decode() for k, _ in listed}, set(true_top))
        counts = [c for _, c in listed]
        self.assertEqual(counts, sorted(counts, reverse=True))
        for key, c in listed:
            f = truth[key.decode()]
            self.assertLessEqual(c, f)          # never above the truth
            self.assertGreaterEqual(c, 0.9 * f)  # elephants are kept well
            self.assertIn(key, t)
            self.assertEqual(t.count(key), c)
        self.assertEqual(t.list(3), listed[:3])
        for k in list(truth)[::7]:
            self.assertLessEqual(t.count(k), truth[k])
            self.assertEqual(k in t, k in true_top)
        self.assertEqual(t.count_many(true_top), [t[k] for k in true_top])

    def test_add_returns_the_expelled_key(self):
        t = TopK(1)
        self.assertIsNone(t.add("a"))
        self.assertIsNone(t.add("b"))      # 1 does not beat 1
        self.assertEqual(t.add("b"), b"a")  # 2 does
        self.assertEqual(t.list(), [(b"b", 2)])
        self.assertEqual(t.increment("c", 5), b"b")
        self.assertEqual(t.list(), [(b"c", 5)])
        self.assertIsNone(t.add("c", 0))
        self.assertEqual(t.total, 8)

    def test_increment_names_the_key(self):
        t = TopK(3)
        self.assertIsNone(t.add("big", 1000))
        self.assertEqual(t.list(), [(b"big", 1000)])
        self.assertEqual(t.count("big"), 1000)

    def test_keys_by_hash_long_keys_and_ints(self):
        t = TopK(4, keylen=8)
        self.assertEqual(t.keylen, 8)
        h = t.hash("anon")
        self.assertIsNone(t.add_hash(h, 50))
        t.add(b"abcdefghijkl", 40)
        t.add(258, 30)
        t.add("", 20)
        self.assertEqual(t.list(), [(h, 50), (b"abcdefgh", 40),
                                    ((258).to_bytes(8, "little"), 30),
                                    (b"", 20)])
        self.assertIn("anon", t)
        self.assertEqual(t.count_hash(h), 50)

    def test_shape_and_repr(self):
        t = TopK(3, width=100, depth=2, decay=1.5, keylen=10)
        self.assertEqual((t.k, t.width, t.depth, t.keylen), (3, 100, 2, 16))
        self.assertEqual(t.decay, 1.5)
        self.assertIn("k=3", repr(t))
        self.assertEqual(t.info()["type"], "topk")
        self.assertFalse(t.keyed)
        self.assertTrue(TopK(3, keyed=True).keyed)


class TestFrames(unittest.TestCase):
    def sketches(self):
        m = CountMin(500, 4)
        m.add_many(["a", "b", "a", "c"])
        t = TopK(5)
        t.add_many(["a", "b", "a", "c"])
        t.add_hash(12345, 9)
        return m, t

    def test_round_trips(self):
        for s in self.sketches():
            with self.subTest(type=type(s).__name__):
                data = s.to_bytes()
                self.assertEqual(bytes(s), data)
                r = type(s).from_bytes(data)
                self.assertEqual(r.to_bytes(), data)
                self.assertEqual(type(s).from_bytes(bytearray(data))
                                 .to_bytes(), data)
                for c in (s.copy(), copy.copy(s), copy.deepcopy(s),
                          pickle.loads(pickle.dumps(s))):
                    self.assertIsInstance(c, type(s))
                    self.assertEqual(c.to_bytes(), data)
                    self.assertEqual(c.count("a"), s.count("a"))
                    c.add("zz", 3)
                    self.assertNotEqual(c.to_bytes(), data)
                    self.assertEqual(s.to_bytes(), data)  # independent

    def test_topk_copy_continues_identically(self):
        _, t = self.sketches()
        c = t.copy()
        more = ["x%d" % (i % 13) for i in range(500)]
        t.add_many(more)
        c.add_many(more)
        self.assertEqual(c.to_bytes(), t.to_bytes())

    def test_keyed_hasher_travels_in_the_frame(self):
        m = CountMin(500, 4, keyed=True)
        self.assertTrue(m.keyed)
        self.assertEqual(m.hash_kind, "siphash24")
        m.add("secret", 4)
        r = CountMin.from_bytes(m.to_bytes())
        self.assertTrue(r.keyed)
        self.assertEqual(r.hash("secret"), m.hash("secret"))
        self.assertEqual(r.count("secret"), 4)
        self.assertNotEqual(CountMin(500, 4, keyed=True).hash("secret"),
                            m.hash("secret"))
        self.assertNotEqual(CountMin(500, 4, seed=9).hash("x"),
                            CountMin(500, 4).hash("x"))

    def test_generic_filter_reads_the_same_frame(self):
        m, t = self.sketches()
        f = m.to_filter()
        self.assertEqual(f.type, "cms")
        self.assertEqual(f.count("a"), m.count("a"))
        self.assertEqual(f.to_bytes(), m.to_bytes())
        self.assertEqual(CountMin.from_filter(f).to_bytes(), m.to_bytes())
        g = amq.Filter("cms:width=64,depth=2,counter=16")
        g.add("q")
        g.add("q")
        c = CountMin.from_filter(g)
        self.assertEqual((c.width, c.depth, c.counter_bits), (64, 2, 16))
        self.assertEqual(c.count("q"), 2)
        self.assertEqual(m.info()["params"], m.spec)
        ft = t.to_filter()
        self.assertEqual(ft.type, "topk")
        self.assertEqual(ft.count("a"), t.count("a"))
        self.assertEqual(TopK.from_filter(ft).list(), t.list())
        with self.assertRaises(TypeError):
            CountMin.from_filter(m)  # type: ignore[arg-type]

    def test_files(self):
        m, t = self.sketches()
        with tempfile.TemporaryDirectory() as d:
            for s in (m, t):
                path = os.path.join(d, s._type + ".amq")
                s.save(path)
                self.assertEqual(type(s).load(path).to_bytes(), s.to_bytes())
                self.assertEqual(amq.Filter.load(path).to_bytes(),
                                 s.to_bytes())
            k = CountMin(10, 2, keyed=True)
            path = os.path.join(d, "keyed.amq")
            k.save(path)
            self.assertEqual(os.stat(path).st_mode & 0o077, 0)
            with self.assertRaises(OSError):
                CountMin.load(os.path.join(d, "missing.amq"))

    def test_corrupt_and_foreign_frames_raise(self):
        m, t = self.sketches()
        for s in (m, t):
            with self.subTest(type=type(s).__name__):
                cls = type(s)
                data = bytearray(s.to_bytes())
                bad = bytearray(data)
                bad[-20] ^= 0x40  # inside the payload: the checksum fails
                with self.assertRaises(amq.ChecksumError):
                    cls.from_bytes(bytes(bad))
                for cut in (0, 7, 64, len(data) - 1):
                    with self.assertRaises(amq.CorruptError):
                        cls.from_bytes(bytes(data[:cut]))
                with self.assertRaises(amq.CorruptError):
                    cls.from_bytes(b"\x00" * len(data))
        bloom = amq.Filter("bloom", 100, 0.01).to_bytes()
        for cls in (CountMin, TopK):
            with self.assertRaises(amq.IncompatibleError):
                cls.from_bytes(bloom)
        with self.assertRaises(amq.IncompatibleError):
            CountMin.from_bytes(t.to_bytes())
        with self.assertRaises(amq.IncompatibleError):
            TopK.from_bytes(m.to_bytes())


class TestErrors(unittest.TestCase):
    def test_countmin_construction(self):
        for kw in ({"width": 0, "depth": 3}, {"width": 10, "depth": 0},
                   {"width": 10, "depth": 65},
                   {"width": 10, "depth": 3, "counter_bits": 12},
                   {"eps": 0.0}, {"eps": 1.5}, {"eps": 0.1, "delta": 0.0},
                   {"eps": 0.1, "delta": 1e-30}):
            with self.subTest(**kw):
                with self.assertRaises(amq.InvalidError):
                    CountMin(**kw)
        with self.assertRaises(amq.SizeOverflowError):
            CountMin(1 << 62, 64)
        for args, kw in (((), {}), ((10,), {}), ((10, 3), {"eps": 0.1}),
                         ((), {"delta": 0.1})):
            with self.assertRaises(ValueError):
                CountMin(*args, **kw)
        with self.assertRaises(TypeError):
            CountMin("10", 3)
        with self.assertRaises(TypeError):
            CountMin(eps="0.1")
        with self.assertRaises(OverflowError):
            CountMin(10, 3, counter_bits=(1 << 32) + 8)
        with self.assertRaises(ValueError):
            CountMin(-1, 3)

    def test_topk_construction(self):
        for kw in ({"k": 0}, {"k": 65537}, {"k": 5, "depth": 17},
                   {"k": 5, "decay": 1.0}, {"k": 5, "decay": 101.0},
                   {"k": 5, "keylen": 1025}):
            with self.subTest(**kw):
                with self.assertRaises(amq.InvalidError):
                    TopK(**kw)
        with self.assertRaises(ValueError):
            TopK(-3)
        with self.assertRaises(TypeError):
            TopK(2.5)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            TopK(5, decay="2")  # type: ignore[arg-type]
        with self.assertRaises(OverflowError):
            TopK((1 << 32) + 5)

    def test_wrong_arguments(self):
        m, t = CountMin(100, 3), TopK(3)
        for s in (m, t):
            with self.subTest(type=type(s).__name__):
                with self.assertRaises(ValueError):
                    s.add("a", -1)
                with self.assertRaises(TypeError):
                    s.add("a", 1.5)  # type: ignore[arg-type]
                with self.assertRaises(TypeError):
                    s.add("a", True)
                with self.assertRaises(OverflowError):
                    s.add("a", 1 << 64)
                with self.assertRaises(TypeError):
                    s.add(1.5)  # type: ignore[arg-type]
                with self.assertRaises(TypeError):
                    s.count(None)  # type: ignore[arg-type]
                with self.assertRaises(TypeError):
                    s.add_many("one key")
                with self.assertRaises(TypeError):
                    s.count_many(b"one key")
                with self.assertRaises(OverflowError):
                    s.add(1 << 64)
                with self.assertRaises(OverflowError):
                    s.add_hash(-1)
                with self.assertRaises(TypeError):
                    s.count_hash("a")  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            m.add_many(["a", "b"], [1])
        with self.assertRaises(ValueError):
            m.add_many(iter(["a", "b"]), [1, 2, 3])
        with self.assertRaises(ValueError):
            m.add_many(["a", "b"], [1, -1])
        with self.assertRaises(TypeError):
            m.add_many(["a", "b"], b"\x01\x02")
        with self.assertRaises(TypeError):
            m.merge("x")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            _ = m | 3  # type: ignore[operator]
        with self.assertRaises(ValueError):
            t.list(-1)

    def test_closed(self):
        for s in (CountMin(100, 3), TopK(3)):
            with self.subTest(type=type(s).__name__):
                with s:
                    s.add("a")
                self.assertTrue(s.closed)
                self.assertIn("closed", repr(s))
                for op in (lambda: s.add("a"), lambda: s.count("a"),
                           lambda: "a" in s, lambda: s.to_bytes(),
                           lambda: s.total, lambda: s.copy(),
                           lambda: s.count_many(["a"])):
                    with self.assertRaises(amq.ClosedError):
                        op()
                s.close()  # twice is fine
        live = CountMin(100, 3)
        dead = CountMin(100, 3)
        dead.close()
        with self.assertRaises(amq.ClosedError):
            live.merge(dead)


@unittest.skipUnless(np is not None, "numpy not installed")
class TestNumPy(unittest.TestCase):
    def test_countmin_arrays_in_and_out(self):
        m = CountMin(2000, 4)
        keys = np.arange(1000, dtype=np.int64)
        counts = np.arange(1000) % 7
        self.assertEqual(m.add_many(keys, counts), 1000)
        self.assertEqual(m.total, int(counts.sum()))
        est = m.count_many(keys)
        self.assertIsInstance(est, np.ndarray)
        self.assertEqual(est.dtype, np.uint64)
        self.assertTrue((est >= counts).all())
        self.assertEqual(est.tolist(), m.count_many(keys.tolist()))
        self.assertEqual(int(est[5]), m.count(5))
        self.assertEqual(m.count_many(keys.astype(np.uint32)).tolist(),
                         est.tolist())
        hashes = np.array([m.hash(int(k)) for k in keys[:10]],
                          dtype=np.uint64)
        self.assertEqual(m.count_hashes(hashes).tolist(), est[:10].tolist())
        words = np.array(["é", "b", "é"])
        m.add_many(words)
        self.assertEqual(m.count("é"), m.count_many(words)[0])
        self.assertGreaterEqual(m.count("é"), 2)
        self.assertEqual(m.count_many(np.array([b"b"]))[0], m.count("b"))
        with self.assertRaises(ValueError):
            m.add_many(keys[:3], np.array([1, -2, 3]))
        with self.assertRaises(TypeError):
            m.add_many(keys[:3], np.array([1.0, 2.0, 3.0]))
        with self.assertRaises(ValueError):
            m.add_many(keys[:3], np.array([1, 2]))

    def test_topk_arrays(self):
        t = TopK(3)
        stream = np.repeat(np.arange(6, dtype=np.int64), [50, 40, 30, 3, 2, 1])
        np.random.default_rng(SEED).shuffle(stream)
        self.assertEqual(t.add_many(stream), len(stream))
        listed = t.list()
        self.assertEqual([int.from_bytes(k, "little") for k, _ in listed],
                         [0, 1, 2])
        out = t.count_many(np.arange(6))
        self.assertIsInstance(out, np.ndarray)
        self.assertEqual(out.dtype, np.uint64)
        self.assertEqual(out.tolist(), [t.count(i) for i in range(6)])
        t.add_many(np.array([b"xyz"] * 100))
        self.assertEqual(t.list(1), [(b"xyz", 100)])


@unittest.skipUnless(HAVE_TOOL, "the amq tool is not built")
class TestTool(unittest.TestCase):
    def run_tool(self, *args):
        r = subprocess.run([TOOL, *args], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_tool_counts_python_files(self):
        m = CountMin(1000, 4)
        m.add("apple", 7)
        m.add("pear", 3)
        t = TopK(5)
        t.add("apple", 20)
        t.add("pear", 4)
        with tempfile.TemporaryDirectory() as d:
            for s in (m, t):
                path = os.path.join(d, s._type + ".amq")
                s.save(path)
                out = self.run_tool("count", path, "--key", "apple",
                                    "--key", "pear", "--key", "none")
                self.assertEqual(out, "%d\tapple\n%d\tpear\n%d\tnone\n" % (
                    s.count("apple"), s.count("pear"), s.count("none")))
            self.assertIn("7\tapple", self.run_tool(
                "count", os.path.join(d, "cms.amq"), "--key", "apple"))

    def test_python_reads_tool_files(self):
        with tempfile.TemporaryDirectory() as d:
            keys = os.path.join(d, "keys.txt")
            with open(keys, "w") as fh:
                fh.write("x\nx\nx\ny\n")
            path = os.path.join(d, "cms.amq")
            self.run_tool("build", "--type", "cms:width=500,depth=3", "-o",
                          path, keys)
            m = CountMin.load(path)
            self.assertEqual((m.width, m.depth, m.total), (500, 3, 4))
            self.assertEqual(m.count_many(["x", "y", "z"]), [3, 1, 0])
            m.add("y", 5)
            m.save(path)
            self.run_tool("add", path, "--key", "y")
            self.assertEqual(CountMin.load(path).count("y"), 7)
            path = os.path.join(d, "topk.amq")
            self.run_tool("build", "--type", "topk:k=4", "-o", path, keys)
            t = TopK.load(path)
            self.assertEqual((t.k, t.total), (4, 4))
            self.assertEqual(t.count("x"), 3)
            self.assertIn("x", t)
            # The tool counts through the generic interface, by hash only.
            self.assertEqual(t.list()[0], (t.hash("x"), 3))


if __name__ == "__main__":
    unittest.main()
