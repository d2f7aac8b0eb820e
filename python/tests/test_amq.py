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
            f.add(12)
        with self.assertRaises(TypeError):
            f.add_many("not a list")

    def test_mixed_and_chunked_bulk(self):
        f = amq.Filter("qf", 200000, 0.01)
        n = amq.CHUNK + 1234  # more than one chunk, from a generator
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
        with self.assertRaises(ValueError):
            b"f-00000001" in v
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


if __name__ == "__main__":
    unittest.main()
