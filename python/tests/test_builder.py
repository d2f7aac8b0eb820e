"""amq.Builder: filters from keys whose number is not known in advance
(amq/builder.h)."""

import copy
import pickle
import unittest
from array import array

import amq
from amq._builder import Builder
from amq._filter import Filter

try:
    import numpy as np
except ImportError:  # NumPy is optional
    np = None

STATIC = ["xor8", "xor16", "fuse8", "fuse16", "ribbon"]
DYNAMIC = ["bloom", "blocked", "cuckoo", "qf", "counting"]


def keys_of(n, tag="k"):
    return ["%s%d" % (tag, i) for i in range(n)]


def rate_for(spec):
    return None if spec[-1].isdigit() else 0.01


class TestBuild(unittest.TestCase):
    def test_no_false_negatives(self):
        keys = keys_of(5000)
        for spec in STATIC + DYNAMIC:
            with Builder(spec) as b:
                for k in keys[:100]:
                    b.add(k)
                self.assertEqual(b.add_many(keys[100:]), 4900)
                self.assertEqual(b.count, 5000)
                f = b.finish(rate_for(spec))
            self.assertIsInstance(f, Filter)
            self.assertEqual(f.type, amq.Filter.build(spec, ["x"],
                                                      rate_for(spec)).type)
            self.assertTrue(all(f.contains_many(keys)), spec)
            strangers = keys_of(20000, "s")
            rate = sum(f.contains_many(strangers)) / len(strangers)
            self.assertLess(rate, 3 * f.fpr_bound + 0.002, spec)

    def test_key_shapes(self):
        with Builder("fuse8") as b:
            b.add("é")
            b.add("é".encode())
            b.add(b"raw")
            b.add(bytearray(b"ba"))
            b.add(-5)
            b.add(2 ** 64 - 1)
            b.add_many(k for k in ("gen1", "gen2"))
            b.add_many(array("q", [10, 11]))
            f = b.finish()
        for k in ("é", b"raw", b"ba", -5, 2 ** 64 - 1, "gen1", "gen2", 10,
                  11):
            self.assertIn(k, f)
        self.assertEqual(f.items, 9)  # "é" twice is one distinct key
        with Builder("bloom") as b:
            with self.assertRaises(TypeError):
                b.add(1.5)
            with self.assertRaises(TypeError):
                b.add_many("abc")  # one key, not a collection
            with self.assertRaises(OverflowError):
                b.add(2 ** 64)
            self.assertEqual(b.count, 0)

    def test_static_sized_for_distinct_keys(self):
        keys = keys_of(20000)
        for spec in STATIC:
            once = amq.Filter.build(spec, keys, rate_for(spec))
            with Builder(spec) as b:
                b.add_many(keys)
                b.add_many(keys)
                b.add_many(keys[:5000])
                self.assertEqual(b.count, 45000)
                f = b.finish(rate_for(spec))
            self.assertEqual(f.size_bytes, once.size_bytes, spec)
            self.assertEqual(f.items, 20000, spec)
            # about the type's curve at the distinct count
            target = {"xor8": 2.0 ** -8, "fuse8": 2.0 ** -8,
                      "xor16": 2.0 ** -16, "fuse16": 2.0 ** -16,
                      "ribbon": 0.01}[spec]
            curve = amq.curve_bits(spec, target)
            self.assertGreaterEqual(f.bits_per_key, curve * 0.99, spec)
            self.assertLessEqual(f.bits_per_key, curve * 1.2, spec)
            self.assertAlmostEqual(f.bits_per_key,
                                   8 * f.size_bytes / 20000, delta=1e-9)
            self.assertTrue(all(f.contains_many(keys)), spec)

    def test_same_filter_as_build_without_repeats(self):
        keys = keys_of(3000)
        for spec in ("fuse8", "xor16", "ribbon"):
            with Builder(spec) as b:
                b.add_many(keys)
                f = b.finish(rate_for(spec))
            self.assertEqual(f.to_bytes(),
                             amq.Filter.build(spec, keys,
                                              rate_for(spec)).to_bytes())

    def test_threads_give_the_same_bytes(self):
        # 100,000 keys: above the size where finish starts threads.
        keys = keys_of(100000)
        for spec in ("fuse8", "xor8", "ribbon"):
            frames = set()
            for threads in (1, 2, 0):
                with Builder(spec, threads=threads) as b:
                    b.add_many(keys)
                    b.add_many(keys[:1000])  # repeats, dropped
                    if threads:
                        self.assertEqual(b.threads, threads)
                    else:
                        self.assertGreaterEqual(b.threads, 1)
                        self.assertLessEqual(b.threads, 16)
                    frames.add(b.finish(rate_for(spec)).to_bytes())
            self.assertEqual(len(frames), 1, spec)

    def test_bad_threads(self):
        with Builder("fuse8") as b:
            with self.assertRaises(ValueError):
                b.threads = -1
            with self.assertRaises(TypeError):
                b.threads = 1.5
            with self.assertRaises(TypeError):
                b.threads = True
            b.threads = 100
            self.assertEqual(b.threads, 16)

    def test_dynamic_sized_for_every_key(self):
        with Builder("counting") as b:
            b.add_many(["a", "b", "a", "a"])
            f = b.finish(0.01)
        self.assertEqual(f.capacity, 4)
        self.assertEqual(f.count("a"), 3)
        with Builder("bloom") as b:
            b.add_many(keys_of(1000))
            f = b.finish(0.01)
        self.assertEqual(f.capacity, 1000)
        f.add("more")  # a dynamic filter stays open to keys
        self.assertIn("more", f)

    def test_empty(self):
        for spec in ("fuse8", "bloom"):
            with Builder(spec) as b:
                f = b.finish(rate_for(spec))
            self.assertEqual(f.items, 0)
            self.assertNotIn("a", f)

    def test_hashes(self):
        keys = keys_of(500)
        with Builder("xor8", seed=7) as b:
            hs = [b.hash(k) for k in keys]
            self.assertEqual(b.add_hashes(hs), 500)
            f = b.finish()
        self.assertTrue(all(f.contains_many(keys)))
        self.assertEqual([f.hash(k) for k in keys], hs)

    def test_keyed(self):
        keys = keys_of(1000)
        with Builder("fuse8", keyed=True) as b:
            self.assertTrue(b.keyed)
            h = b.hash("k1")
            b.add_many(keys)
            f = b.finish()
        self.assertTrue(f.keyed)
        self.assertEqual(f.hash("k1"), h)  # the builder's key is the filter's
        self.assertTrue(all(f.contains_many(keys)))
        with Builder("fuse8", keyed=True) as c:
            self.assertNotEqual(c.hash("k1"), h)  # a fresh key each time
        self.assertFalse(Builder("fuse8").keyed)

    def test_round_trip(self):
        with Builder("fuse16") as b:
            b.add_many(keys_of(2000))
            f = b.finish()
        for g in (Filter.from_bytes(f.to_bytes()), copy.copy(f),
                  copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
            self.assertEqual(g.to_bytes(), f.to_bytes())
            self.assertTrue(all(g.contains_many(keys_of(2000))))


@unittest.skipUnless(np is not None, "NumPy not installed")
class TestNumpy(unittest.TestCase):
    def test_numpy_keys(self):
        ints = np.arange(10000, dtype=np.int64)
        strs = np.array(keys_of(3000))
        for spec in ("fuse8", "ribbon", "bloom"):
            with Builder(spec) as b:
                self.assertEqual(b.add_many(ints), 10000)
                self.assertEqual(b.add_many(ints[::2]), 5000)
                self.assertEqual(b.add_many(strs), 3000)
                f = b.finish(rate_for(spec))
            hits = f.contains_many(ints)
            self.assertEqual(hits.dtype, np.bool_)
            self.assertTrue(hits.all(), spec)
            self.assertTrue(f.contains_many(strs).all(), spec)
            self.assertIn(123, f)  # an int array's element is the int key
        with Builder("fuse8") as b:
            b.add_many(ints)
            b.add_many(ints)
            f = b.finish()
        self.assertEqual(f.size_bytes,
                         amq.Filter.build("fuse8", ints).size_bytes)

    def test_numpy_hashes(self):
        with Builder("xor8") as b:
            hs = np.array([b.hash(int(i)) for i in range(300)],
                          dtype=np.uint64)
            b.add_hashes(hs)
            f = b.finish()
        self.assertTrue(f.contains_many(np.arange(300)).all())
        with Builder("xor8") as b:
            with self.assertRaises(ValueError):
                b.add_many(np.zeros((2, 2), dtype=np.int64))
            with self.assertRaises(TypeError):
                b.add_many(np.zeros(3, dtype=np.float64))


class TestLifecycle(unittest.TestCase):
    def test_finish_twice_and_add_after(self):
        b = Builder("fuse8")
        b.add_many(keys_of(100))
        b.finish()
        self.assertTrue(b.closed)
        for op in (lambda: b.finish(), lambda: b.add("x"),
                   lambda: b.add_many(["x"]), lambda: b.add_hashes([1]),
                   lambda: b.count, lambda: b.hash("x"), lambda: len(b)):
            with self.assertRaises(amq.ClosedError) as cm:
                op()
            self.assertIn("finished", str(cm.exception))
        self.assertIn("finished", repr(b))

    def test_keep(self):
        b = Builder("fuse8")
        b.add_many(keys_of(100))
        f = b.finish(keep=True)
        b.add_many(keys_of(100, "more"))
        g = b.finish()
        self.assertEqual((f.items, g.items), (100, 200))
        self.assertTrue(all(g.contains_many(keys_of(100, "more"))))
        with Builder("bloom") as b:
            b.add_many(keys_of(500))
            loose = b.finish(0.1, keep=True)
            tight = b.finish(0.001, keep=True)
            self.assertEqual(b.count, 500)
        self.assertLess(loose.size_bytes, tight.size_bytes)

    def test_failed_finish_keeps_the_keys(self):
        b = Builder("xor8")
        b.add_many(keys_of(1000))
        with self.assertRaises(amq.InvalidError) as cm:
            b.finish(1e-6)  # 8-bit fingerprints cannot reach it
        self.assertIn("xor8", cm.exception.detail)
        self.assertFalse(b.closed)
        self.assertEqual(b.count, 1000)
        f = b.finish()
        self.assertTrue(all(f.contains_many(keys_of(1000))))
        for bad in (1.5, -0.1, float("nan")):
            with Builder("bloom") as c:
                c.add("a")
                with self.assertRaises(amq.InvalidError):
                    c.finish(bad)
                self.assertEqual(c.count, 1)
        with Builder("bloom") as c:
            with self.assertRaises(TypeError):
                c.finish("0.01")  # type: ignore[arg-type]
        with Builder("bloom") as c:  # no rate, and the spec has no size
            with self.assertRaises(amq.SpecError):
                c.finish()
            c.add("a")
            self.assertIn("a", c.finish(0.01, keep=True))

    def test_close_and_context(self):
        with Builder("bloom") as b:
            b.add("a")
        self.assertTrue(b.closed)
        with self.assertRaises(amq.ClosedError):
            b.add("b")
        with self.assertRaises(amq.ClosedError):
            b.finish(0.01)
        c = Builder("bloom")
        c.close()
        c.close()
        self.assertIn("closed", repr(c))

    def test_bad_specs(self):
        with self.assertRaises(amq.SpecError) as cm:
            Builder("nope")
        self.assertIn("nope", cm.exception.detail)
        with self.assertRaises(TypeError):
            Builder(42)  # type: ignore[arg-type]
        # parameters are checked against the type at finish
        for spec in ("bloom:zz=1", "fuse8:ways=99"):
            with Builder(spec) as b:
                b.add("a")
                with self.assertRaises(amq.SpecError):
                    b.finish(0.01)
                self.assertEqual(b.count, 1)

    def test_no_copy(self):
        b = Builder("bloom")
        for op in (copy.copy, copy.deepcopy, pickle.dumps):
            with self.assertRaises(TypeError):
                op(b)
        b.close()


if __name__ == "__main__":
    unittest.main()
