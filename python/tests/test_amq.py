"""Tests of the amq Python binding (standard library unittest).

Run: AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \
     python3 -m unittest discover -s python/tests
(ctest runs it as the `python` test.)
"""

import copy
import os
import pickle
import stat
import tempfile
import unittest

import amq
from amq._keys import CHUNK

try:
    import numpy as np
except ImportError:  # numpy is optional
    np = None

DYNAMIC = ["bloom", "blocked", "sbbf", "counting", "cuckoo", "vacuum", "qf",
           "cqf", "partitioned", "scalable"]
STATIC = ["xor8", "xor16", "fuse8", "fuse16", "ribbon"]


def keys(prefix, n):
    return [b"%s-%08d" % (prefix, i) for i in range(n)]


class TestMembership(unittest.TestCase):
    def test_no_false_negatives_and_fpr(self):
        present, absent = keys(b"in", 5000), keys(b"out", 20000)
        for spec in DYNAMIC:
            with self.subTest(spec=spec):
                f = amq.Filter(spec, 5000, 0.01)
                self.assertEqual(f.add_many(present), 5000)
                self.assertTrue(all(f.contains_many(present)))
                hits = f.contains_many(absent)
                self.assertEqual(hits, [k in f for k in absent])
                rate = sum(hits) / len(absent)
                # Twice the 1% target is 14 standard deviations above it
                # at 20000 trials.
                self.assertLess(rate, 0.02, spec)
                self.assertLessEqual(f.fpr_bound, 0.02)

    def test_single_keys_bytes_and_str(self):
        f = amq.Filter("blocked", 1000, 0.001)
        f.add("café")
        self.assertIn("café", f)
        self.assertIn("café".encode(), f)
        self.assertIn(bytearray("café".encode()), f)
        self.assertIn(memoryview("café".encode()), f)
        f.add(b"")
        self.assertIn("", f)
        with self.assertRaises(TypeError):
            f.add(1.5)
        with self.assertRaises(TypeError):
            f.add_many("not a list")

    def test_mixed_and_chunked_bulk(self):
        f = amq.Filter("qf", 200000, 0.01)
        n = CHUNK + 1234  # more than one chunk, from a generator
        self.assertEqual(f.add_many(b"g%d" % i for i in range(n)), n)
        self.assertEqual(f.items, n)
        self.assertEqual(len(f), n)
        mixed = ["g1", b"g2", bytearray(b"g3"), "absent-key-zz"]
        got = f.contains_many(mixed)
        self.assertEqual(got[:3], [True, True, True])
        self.assertEqual(got, [k in f for k in mixed])

    def test_hashes(self):
        f = amq.Filter("blocked", 100, 0.01)
        g = amq.Filter("blocked", 100, 0.01, keyed=True)
        ks = [b"a", "b", b""]
        self.assertEqual(f.hashes(ks), amq.Filter("bloom", 9, 0.1).hashes(ks))
        self.assertNotEqual(f.hashes(ks), g.hashes(ks))
        self.assertEqual(len(set(f.hashes(ks))), 3)
        self.assertTrue(all(0 <= h < 1 << 64 for h in g.hashes(ks)))

    def test_static_build(self):
        present = keys(b"s", 3000) + keys(b"s", 10)  # duplicates are fine
        for spec in STATIC:
            with self.subTest(spec=spec):
                f = amq.Filter.build(spec, present, 0.01 if "16" not in spec
                                     and spec != "ribbon" else 0.0001)
                self.assertTrue(all(f.contains_many(present)))
                self.assertTrue(f.caps & amq.CAP_STATIC)
                with self.assertRaises(amq.UnsupportedError):
                    f.add(b"late")
        with self.assertRaises(amq.UnsupportedError) as e:
            amq.Filter("xor8", 100, 0.01)
        self.assertIn("Filter.build", str(e.exception))
        with self.assertRaises(amq.InvalidError):
            amq.Filter.build("xor8", present, 0.001)  # 8 bits cannot

    def test_build_keyed(self):
        ks = keys(b"k", 3000)
        for spec in ("fuse8", "bloom"):
            f = amq.Filter.build(spec, ks, 0.01, keyed=True)
            self.assertTrue(f.keyed)
            self.assertTrue(all(f.contains_many(ks)), spec)
            self.assertEqual(f.info()["hash"],
                             amq.Filter("bloom", 1, 0.5, keyed=True)
                             .info()["hash"])

    def test_build_dynamic_equals_adds(self):
        ks = keys(b"d", 1000)
        a = amq.Filter.build("bloom", ks, 0.01)
        b = amq.Filter("bloom", 1000, 0.01)
        b.add_many(ks)
        self.assertEqual(a.to_bytes(), b.to_bytes())


class TestUpdates(unittest.TestCase):
    def test_remove_and_count(self):
        f = amq.Filter("cuckoo", 1000, 0.01)
        f.add_many([b"x", b"x", b"y"])
        self.assertEqual(f.count(b"x"), 2)
        f.remove(b"x")
        self.assertEqual(f.count(b"x"), 1)
        f.remove(b"x")
        self.assertNotIn(b"x", f)
        with self.assertRaises(KeyError):
            f.remove(b"x")
        with self.assertRaises(amq.NotFoundError):
            f.remove(b"never")
        with self.assertRaises(amq.UnsupportedError):
            amq.Filter("bloom", 10, 0.01).remove(b"y")

    def test_full(self):
        f = amq.Filter("cuckoo", 100, 0.01)
        f.add_many([b"same"] * 8)
        with self.assertRaises(amq.FullError) as e:
            f.add(b"same")
        self.assertEqual(e.exception.name, "AMQ_ERR_FULL")
        self.assertEqual(e.exception.status, 5)
        self.assertEqual(f.count(b"same"), 8)  # unchanged by the failure

    def test_cms_counts(self):
        f = amq.Filter("cms", 1000, 0.001)
        f.add_many([b"a"] * 5 + [b"b"] * 2)
        self.assertGreaterEqual(f.count(b"a"), 5)
        self.assertGreaterEqual(f.count(b"b"), 2)

    def test_merge(self):
        a = amq.Filter("blocked:blocks=64")
        b = amq.Filter("blocked:blocks=64")
        a.add_many(keys(b"a", 500))
        b.add_many(keys(b"b", 500))
        u = a | b
        self.assertTrue(all(u.contains_many(keys(b"a", 500) +
                                            keys(b"b", 500))))
        self.assertFalse(all(a.contains_many(keys(b"b", 500))))  # a intact
        a |= b
        self.assertEqual(a.to_bytes(), u.to_bytes())
        both = amq.Filter("blocked:blocks=64")
        both.add_many(keys(b"a", 500))
        self.assertTrue(all((u & both).contains_many(keys(b"a", 500))))
        other = amq.Filter("blocked:blocks=65")
        with self.assertRaises(amq.IncompatibleError):
            a.merge(other)
        with self.assertRaises(ValueError):
            a.merge(amq.Filter("blocked:blocks=64", keyed=True))


class TestFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "f.amq")

    def tearDown(self):
        self.dir.cleanup()

    def test_save_open_load(self):
        f = amq.Filter("sbbf", 2000, 0.01)
        f.add_many(keys(b"f", 2000))
        f.save(self.path)
        with open(self.path, "rb") as fp:
            self.assertEqual(fp.read(), f.to_bytes())
        v = amq.Filter.open(self.path)
        self.assertTrue(v.is_view)
        self.assertTrue(all(v.contains_many(keys(b"f", 2000))))
        with self.assertRaises(amq.ReadOnlyError):
            v.add(b"new")
        v.close()
        with self.assertRaises(amq.ClosedError):
            b"f-00000001" in v
        with self.assertRaises(ValueError):  # ClosedError is a ValueError
            v.add(b"x")
        v.close()  # twice is fine
        c = amq.Filter.load(self.path)
        self.assertFalse(c.is_view)
        c.add(b"new")
        self.assertEqual(c.info()["items"], 2001)
        self.assertEqual(amq.Filter.from_bytes(f.to_bytes()).to_bytes(),
                         f.to_bytes())

    def test_copy_and_pickle_own_their_filter(self):
        f = amq.Filter("blocked", 1000, 0.01)
        f.add_many(keys(b"c", 500))
        for g in (copy.copy(f), copy.deepcopy(f),
                  pickle.loads(pickle.dumps(f)), f.copy()):
            self.assertEqual(g.to_bytes(), f.to_bytes())
            g.add(b"only-in-the-copy")
            self.assertIn(b"only-in-the-copy", g)
            self.assertNotEqual(g.to_bytes(), f.to_bytes())
            del g  # freeing one must leave the other whole
        self.assertTrue(all(f.contains_many(keys(b"c", 500))))
        f.save(self.path)
        v = amq.Filter.open(self.path)  # a view copies into its own table
        w = copy.copy(v)
        v.close()
        self.assertFalse(w.is_view)
        w.add(b"after")
        self.assertTrue(all(w.contains_many(keys(b"c", 500))))

    def test_frames_of_another_kind(self):
        # A vector clock's frame, made through the C API (the binding has
        # no clocks yet), is refused as what it is.
        import ctypes
        from amq._native import lib
        P = ctypes.c_void_p
        lib.amq_clock_new_vector.argtypes = [ctypes.c_int, ctypes.c_uint64, P,
                                             ctypes.POINTER(P)]
        lib.amq_clock_save_size.argtypes = [P]
        lib.amq_clock_save_size.restype = ctypes.c_size_t
        lib.amq_clock_save.argtypes = [P, ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.POINTER(ctypes.c_size_t)]
        lib.amq_clock_free.argtypes = [P]
        c = P()
        self.assertEqual(lib.amq_clock_new_vector(2, 1, None,
                                                  ctypes.byref(c)), 0)
        n = lib.amq_clock_save_size(c)
        buf = ctypes.create_string_buffer(n)
        done = ctypes.c_size_t()
        self.assertEqual(lib.amq_clock_save(c, buf, n, ctypes.byref(done)), 0)
        lib.amq_clock_free(c)
        with self.assertRaises(amq.KindError) as e:
            amq.Filter.from_bytes(buf.raw[:done.value])
        self.assertIn("vector clock", str(e.exception))
        self.assertIsInstance(e.exception, ValueError)

    def test_keyed_file_is_private(self):
        a = amq.Filter("blocked", 100, 0.01, keyed=True)
        b = amq.Filter("blocked", 100, 0.01, keyed=True)
        self.assertTrue(a.keyed)
        a.add(b"k")
        b.add(b"k")
        self.assertNotEqual(a.to_bytes(), b.to_bytes())  # different keys
        a.save(self.path)
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o600)
        self.assertIn(b"k", amq.Filter.open(self.path))

    def test_bad_files(self):
        with self.assertRaises(OSError):
            amq.Filter.open(os.path.join(self.dir.name, "missing"))
        f = amq.Filter("bloom", 100, 0.01)
        data = bytearray(f.to_bytes())
        with open(self.path, "wb") as fp:
            fp.write(data[:-1])
        with self.assertRaises(amq.CorruptError):
            amq.Filter.open(self.path)
        data[len(data) // 2] ^= 1
        with self.assertRaises(amq.ChecksumError):
            amq.Filter.from_bytes(bytes(data))
        with self.assertRaises(OSError):
            f.save(os.path.join(self.dir.name, "no-dir", "f.amq"))


class TestModule(unittest.TestCase):
    def test_types_and_curves(self):
        names = [t["name"] for t in amq.types()]
        for n in DYNAMIC + STATIC:
            self.assertIn(n, names)
        bits = amq.curve_bits("bloom", 0.01)
        self.assertAlmostEqual(bits, 1.44 * 6.6439, delta=0.05)
        self.assertAlmostEqual(amq.curve_fpr("bloom", bits), 0.01,
                               delta=1e-6)
        self.assertRegex(amq.version(), r"^\d+\.\d+\.\d+$")

    def test_errors(self):
        with self.assertRaises(amq.SpecError) as e:
            amq.Filter("bloom:nosuch=1", 10, 0.01)
        self.assertIn("nosuch", str(e.exception))
        self.assertIsInstance(e.exception, ValueError)
        with self.assertRaises(amq.InvalidError):
            amq.Filter("bloom", 10, 1.5)
        with self.assertRaises(ValueError):
            amq.Filter("bloom", 10)  # capacity without fpr

    def test_info(self):
        f = amq.Filter("cuckoo", 1000, 0.01)
        f.add(b"a")
        i = f.info()
        self.assertEqual(i["type"], "cuckoo")
        self.assertTrue(i["params"].startswith("cuckoo:"))
        self.assertEqual(i["items"], 1)
        self.assertEqual(i["target_fpr"], 0.01)
        self.assertIn("cuckoo", repr(f))


class TestKeys(unittest.TestCase):
    def test_int_keys_are_their_8_bytes(self):
        f = amq.Filter("blocked", 1000, 0.001)
        f.add(5)
        f.add(-1)
        f.add((1 << 64) - 2)
        self.assertIn((5).to_bytes(8, "little"), f)
        self.assertIn(b"\xff" * 8, f)  # -1, two's complement
        self.assertIn((1 << 64) - 1, f)  # the same 8 bytes as -1
        self.assertIn((1 << 64) - 2, f)
        self.assertEqual(f.hash(7), f.hash((7).to_bytes(8, "little")))
        for bad in (1 << 64, -(1 << 63) - 1):
            with self.assertRaises(OverflowError):
                f.add(bad)
        ints = list(range(-500, 500))
        self.assertEqual(f.add_many(ints), 1000)
        self.assertTrue(all(f.contains_many(ints)))
        self.assertEqual(f.hashes([3, -3]),
                         [f.hash(3), f.hash((-3 & (2**64 - 1)))])

    def test_mixed_ints_and_bytes(self):
        f = amq.Filter("qf", 1000, 0.01)
        f.add_many([1, b"two", "three", 1 << 63])
        self.assertEqual(f.contains_many([1, b"two", "three", 1 << 63]),
                         [True] * 4)

    @unittest.skipUnless(np, "numpy is not installed")
    def test_numpy_integer_arrays(self):
        f = amq.Filter("blocked", 200000, 0.01)
        a = np.arange(150000, dtype=np.uint64) * 7919  # several chunks
        self.assertEqual(f.add_many(a), len(a))
        got = f.contains_many(a)
        self.assertIsInstance(got, np.ndarray)
        self.assertEqual(got.dtype, np.bool_)
        self.assertTrue(got.all())
        # Every integer width, sign and byte order holds the same keys as
        # the Python ints it holds.
        small = np.array([0, 1, -7, 2**31 - 1, -2**31], dtype=np.int64)
        g = amq.Filter("blocked", 100, 0.001)
        g.add_many(small.tolist())
        for dt in (np.int64, np.int32, ">i8", "<i4"):
            arr = small.astype(dt)
            self.assertTrue(g.contains_many(arr).all(), dt)
            self.assertEqual(g.hashes(arr).tolist(),
                             g.hashes(small.tolist()), dt)
        u = np.array([0, 255, 65535], dtype=np.uint16)
        self.assertEqual(g.hashes(u).tolist(), g.hashes([0, 255, 65535]))
        # A strided view is hashed from its own elements.
        self.assertEqual(g.hashes(small[::2]).tolist(),
                         g.hashes(small[::2].tolist()))
        absent = np.arange(10**6, 10**6 + 20000, dtype=np.int64)
        rate = f.contains_many(absent).mean()
        self.assertLess(rate, 0.02)
        with self.assertRaises(ValueError):
            f.contains_many(a.reshape(2, -1))
        with self.assertRaises(TypeError):
            f.add_many(np.array([1.5, 2.5]))

    @unittest.skipUnless(np, "numpy is not installed")
    def test_numpy_bytes_and_str_arrays(self):
        words = ["", "a", "café", "longer key", "z" * 40]
        f = amq.Filter("blocked", 100, 0.001)
        f.add_many(words)
        for arr in (np.array(words), np.array([w.encode() for w in words]),
                    np.array(words, dtype=object)):
            got = f.contains_many(arr)
            self.assertTrue(all(got), arr.dtype)
            self.assertEqual(list(f.hashes(arr)), f.hashes(words), arr.dtype)

    @unittest.skipUnless(np, "numpy is not installed")
    def test_prehashed(self):
        f = amq.Filter("blocked", 10000, 0.01)
        g = amq.Filter("blocked", 10000, 0.01)
        ks = np.arange(5000, dtype=np.uint64)
        f.add_many(ks)
        self.assertEqual(g.add_hashes(g.hashes(ks)), 5000)
        self.assertEqual(f.to_bytes(), g.to_bytes())
        self.assertTrue(g.contains_hashes(f.hashes(ks)).all())
        self.assertEqual(g.contains_hashes([int(h) for h in f.hashes(ks[:3])]),
                         [True] * 3)
        with self.assertRaises(OverflowError):
            g.add_hashes([-1])

    def test_array_module(self):
        from array import array
        f = amq.Filter("blocked", 1000, 0.01)
        a = array("q", range(-100, 100))
        self.assertEqual(f.add_many(a), 200)
        self.assertEqual(f.hashes(a), f.hashes(list(a)))
        self.assertTrue(all(f.contains_many(memoryview(a))))


class TestCompatibility(unittest.TestCase):
    def test_constructor_habits(self):
        a = amq.Filter(1000, 0.01)  # rbloom: expected items, rate
        self.assertEqual(a.capacity, 1000)
        self.assertEqual(a.target_fpr, 0.01)
        b = amq.Filter("bloom", 1e6, .01)  # a whole float is a count
        self.assertEqual(b.capacity, 10**6)
        c = amq.Filter(expected_items=500, false_positive_rate=0.001)
        self.assertEqual((c.capacity, c.target_fpr), (500, 0.001))
        d = amq.Filter("blocked", capacity=500, error_rate=0.05)
        self.assertEqual(d.target_fpr, 0.05)
        with self.assertRaises(ValueError):
            amq.Filter("bloom", 1.5, 0.01)
        with self.assertRaises(TypeError):
            amq.Filter(b"bloom", 10, 0.01)
        with self.assertRaises(ValueError):
            amq.Filter()

    def test_default_type_is_the_tools(self):
        # Filter(n, fpr) picks what `amq build` picks for the same need:
        # the first row of amq.recommend, a type that takes keys one by
        # one, and at n keys its certified bound meets fpr.
        rows = amq.recommend(20000, 0.01)
        self.assertEqual(rows, sorted(rows, key=lambda r: r["bits_per_key"]))
        f = amq.Filter(20000, 0.01)
        self.assertEqual(f.type, rows[0]["type"])
        self.assertFalse(f.caps & amq.CAP_STATIC)
        f.add_many(range(20000))
        self.assertLessEqual(f.fpr_bound, 0.01)
        static = amq.recommend(20000, 0.01, allow_static=True)
        self.assertLess(static[0]["bits_per_key"], rows[0]["bits_per_key"])
        for r in amq.recommend(20000, 0.01, deletes=True, counts=True):
            caps = [t["caps"] for t in amq.types() if t["name"] == r["type"]]
            self.assertTrue(caps[0] & amq.CAP_REMOVE and
                            caps[0] & amq.CAP_COUNT, r["type"])
        with self.assertRaises(amq.InvalidError):
            amq.recommend(0, 0.01)
        with self.assertRaises(amq.InvalidError):
            amq.Filter(100, 1.5)

    def test_update_with_filters_and_keys(self):
        a = amq.Filter("blocked:blocks=64")
        b = amq.Filter("blocked:blocks=64")
        b.add_many(keys(b"b", 100))
        a.update(b, keys(b"a", 100))
        self.assertTrue(all(a.contains_many(keys(b"a", 100) +
                                            keys(b"b", 100))))
        with self.assertRaises(TypeError):
            a.merge(keys(b"x", 3))
        self.assertIs(a.__or__(5), NotImplemented)

    def test_subsets(self):
        small = amq.Filter("bloom:m=4096,k=4")
        big = amq.Filter("bloom:m=4096,k=4")
        small.add_many(keys(b"s", 50))
        big.add_many(keys(b"s", 50) + keys(b"t", 50))
        self.assertTrue(small.issubset(big))
        self.assertTrue(small <= big and big >= small)
        self.assertFalse(big.issubset(small))
        self.assertTrue(big.issuperset(small))
        with self.assertRaises(amq.IncompatibleError):
            small.issubset(amq.Filter("bloom:m=8192,k=4"))
        with self.assertRaises(amq.UnsupportedError):
            amq.Filter("cuckoo", 100, 0.01).issubset(
                amq.Filter("cuckoo", 100, 0.01))

    def test_pybloom_live_shapes(self):
        b = amq.BloomFilter(capacity=1000, error_rate=0.001)
        self.assertFalse(b.add("x"))
        self.assertTrue(b.add("x"))  # already there
        self.assertEqual(b.type, "bloom")
        self.assertIsInstance(copy.copy(b), amq.BloomFilter)
        s = amq.ScalableBloomFilter(initial_capacity=100, error_rate=0.001)
        for i in range(5000):  # grows past its initial capacity
            s.add(i)
        self.assertTrue(all(s.contains_many(range(5000))))
        self.assertEqual(s.type, "scalable")
        self.assertLessEqual(s.fpr_bound, 0.001 * 1.0001)
        self.assertGreater(b.approx_items, 0.5)


class TestPackage(unittest.TestCase):
    def test_clean_namespace(self):
        public = [n for n in dir(amq) if not n.startswith("_")]
        for leaked in ("os", "ctypes", "itertools", "array", "lib"):
            self.assertNotIn(leaked, public)
        for name in amq.__all__:
            self.assertTrue(hasattr(amq, name), name)
        self.assertEqual(amq.__version__, amq.version())

    def test_typed(self):
        pkg = os.path.dirname(amq.__file__)
        self.assertTrue(os.path.exists(os.path.join(pkg, "py.typed")))

    def test_every_status_has_its_exception(self):
        for status in range(1, 18):
            from amq._errors import ERRORS
            e = ERRORS.get(status, amq.Error)(status, "why")
            self.assertIsInstance(e, amq.Error)
            self.assertEqual(e.status, status)
            self.assertIn("why", str(e))
            back = pickle.loads(pickle.dumps(e))
            self.assertEqual((type(back), back.status), (type(e), status))


if __name__ == "__main__":
    unittest.main()
