"""Tests of amq.Maplet and amq.StaticMap (amq/maplet.h).

Run: AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \
     python3 -m unittest python/tests/test_maplet.py
"""

import copy
import math
import os
import pickle
import random
import shutil
import subprocess
import tempfile
import unittest

import amq
from amq._maplet import OPS, Maplet, MapletShape, StaticMap, combine, \
    op_name

try:
    import numpy as np
except ImportError:  # numpy is optional
    np = None

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.environ.get("AMQ_TOOL") or os.path.join(HERE, "..", "..", "build",
                                                  "amq")


def keys(prefix, n):
    return [b"%s-%06d" % (prefix, i) for i in range(n)]


def truth(op, pairs):
    """The exact map M of a list of (key, value) puts."""
    m = {}
    for k, v in pairs:
        m[k] = combine(op, m[k], v) if k in m else v
    return m


def above(op, got, want):
    """got is never below want in the operator's order."""
    if op == "sum" or op == "max":
        return got >= want
    if op == "min":
        return got <= want
    return got & want == want  # or: a superset of the bits


def rate_limit(bound, trials):
    """bound plus five standard deviations of a rate measured on trials."""
    return bound + 5 * math.sqrt(max(bound, 1e-9) * (1 - bound) / trials)


class TestMapletContract(unittest.TestCase):
    def test_no_false_negatives_one_sided_and_fpr(self):
        rng = random.Random(7)
        ks, absent = keys(b"in", 2000), keys(b"out", 20000)
        for op in OPS:
            with self.subTest(op=op):
                m = Maplet(2000, 0.01, op=op, value_bits=6)
                pairs = [(rng.choice(ks), rng.randrange(1, 64))
                         for _ in range(3000)]
                if op == "sum":  # keep every sum within 6-bit puts
                    pairs = [(k, v % 4 + 1) for k, v in pairs]
                for k, v in pairs:
                    m[k] = v
                want = truth(op, pairs)
                for k, v in want.items():
                    self.assertIn(k, m)
                    self.assertTrue(above(op, m[k], v), (k, m[k], v))
                self.assertEqual(len(m), len(list(m.items())))
                self.assertEqual(len(m), m.shape.distinct)
                self.assertLessEqual(len(m), len(want))
                hits = sum(k in m for k in absent)
                self.assertLessEqual(hits / len(absent),
                                     rate_limit(m.fpr_bound, len(absent)))
                self.assertGreater(m.fpr_bound, 0)
                self.assertLessEqual(m.fpr_bound, 0.01)

    def test_strong_property_by_fingerprint(self):
        # With 2-bit remainders keys collide often; each key's value is
        # the combination of every key stored under its fingerprint.
        m = Maplet("maplet:op=sum,v=8,q=6,r=2")
        pairs = [(b"k%d" % i, i % 5 + 1) for i in range(150)]
        for k, v in pairs:
            m[k] = v
        groups = {}
        for k, v in pairs:
            fp = m.fingerprint(k)
            groups[fp] = groups.get(fp, 0) + v
        self.assertEqual(dict(m.items()), groups)
        self.assertLess(len(m), len(pairs))  # collisions did happen
        for k, _ in pairs:
            self.assertEqual(m[k], groups[m.fingerprint(k)])

    def test_mapping_interface(self):
        m = Maplet(100, 0.001, op="max", value_bits=4)
        self.assertIsInstance(m, amq.Filter)
        m["alice"] = 3
        m["alice"] = 7
        m["alice"] = 5
        self.assertEqual(m["alice"], 7)
        self.assertEqual(m.get("bob"), None)
        self.assertEqual(m.get("bob", -1), -1)
        self.assertIn("alice", m)
        self.assertNotIn("bob", m)
        with self.assertRaises(KeyError):
            m["bob"]
        with self.assertRaises(amq.NotFoundError):
            m["bob"]
        self.assertEqual(len(m), 1)
        self.assertEqual(m.total, 3)  # max counts puts
        self.assertEqual(m.op, "max")
        self.assertEqual(m.value_bits, 4)
        self.assertEqual(m.mode, "combine")
        [(fp, v)] = list(m.items())
        self.assertEqual((fp, v), (m.fingerprint("alice"), 7))
        self.assertEqual(list(m), [fp])
        self.assertEqual(list(m.values()), [7])
        self.assertEqual(list(m.entries()), [(fp, 7, 1)])
        self.assertEqual(m.get_all("alice"), [7])
        self.assertEqual(m.get_all("bob"), [])
        with self.assertRaises(amq.UnsupportedError):
            del m["alice"]  # what max combined cannot be taken apart
        with self.assertRaises(amq.UnsupportedError):
            m.delete("alice", 7)
        self.assertEqual(m["alice"], 7)
        self.assertIn("max", repr(m))

    def test_keys_of_every_shape(self):
        m = Maplet(100, 0.001)
        m["café"] = 1
        self.assertEqual(m["café".encode()], 1)
        m[bytearray(b"x")] = 2
        self.assertEqual(m[memoryview(b"x")], 2)
        m[42] = 3
        self.assertEqual(m[(42).to_bytes(8, "little")], 3)
        with self.assertRaises(TypeError):
            m[1.5] = 1
        with self.assertRaises(TypeError):
            m["k"] = 1.5
        with self.assertRaises(TypeError):
            m["k"] = "1"

    def test_values_checked(self):
        m = Maplet(100, 0.01, op="or", value_bits=4)
        m["k"] = 15
        with self.assertRaises(amq.InvalidError) as e:
            m["k"] = 16
        self.assertIn("4 value bits", str(e.exception))
        with self.assertRaises(ValueError):
            m["k"] = -1
        with self.assertRaises(amq.InvalidError):
            m["k"] = 1 << 64
        self.assertEqual(m["k"], 15)
        self.assertEqual(m.total, 1)
        w = Maplet(100, 0.01, op="max", value_bits=64)
        w["k"] = (1 << 64) - 1
        self.assertEqual(w["k"], (1 << 64) - 1)

    def test_sum_counts_and_delete(self):
        m = Maplet(1000, 0.001)  # sum, 8-bit values
        self.assertEqual(m.op, "sum")
        for _ in range(3):
            m.put("a")
        m["b"] = 200
        m["b"] = 200  # past 2^8: a variable-length counter
        self.assertEqual(m["a"], 3)
        self.assertEqual(m["b"], 400)
        self.assertEqual(m.count("b"), 400)
        self.assertEqual(m.total, 403)
        m.delete("a")
        self.assertEqual(m["a"], 2)
        with self.assertRaises(amq.NotFoundError):
            m.delete("a", 5)  # holds less: unchanged
        self.assertEqual(m["a"], 2)
        del m["a"]
        self.assertNotIn("a", m)
        with self.assertRaises(KeyError):
            del m["a"]
        m.put("c", 0)  # a put of 0 changes nothing
        self.assertNotIn("c", m)
        m.add("d")
        self.assertEqual(m["d"], 1)
        m.remove("d")
        self.assertNotIn("d", m)
        self.assertFalse(m.discard("d"))
        self.assertEqual(len(m), 1)
        self.assertEqual(m.total, 400)

    def test_multiset_mode(self):
        m = Maplet(100, 0.001, op="max", value_bits=4, multiset=True)
        self.assertTrue(m.multiset)
        self.assertEqual(m.mode, "multiset")
        for v in (3, 1, 3, 9):
            m["k"] = v
        m["j"] = 3
        self.assertEqual(m.get_all("k"), [1, 3, 3, 9])
        self.assertEqual(m["k"], 9)
        m.delete("k", 9)
        self.assertEqual(m.get_all("k"), [1, 3, 3])
        with self.assertRaises(amq.NotFoundError):
            m.delete("k", 9)
        self.assertEqual(dict((fp, e) for fp, _, e in m.entries()),
                         {m.fingerprint("k"): 3, m.fingerprint("j"): 1})
        m.drop_value(3)
        self.assertEqual(m.get_all("k"), [1])
        self.assertNotIn("j", m)
        del m["k"]
        self.assertEqual(len(m), 0)
        big = Maplet(100, 0.001, op="or", value_bits=8, multiset=True)
        big.put_many(["x"] * 40, list(range(40)))
        self.assertEqual(big.get_all("x"), list(range(40)))  # past 8
        with self.assertRaises(amq.UnsupportedError):
            Maplet(100, 0.01, op="max").drop_value(1)

    def test_exact_mode(self):
        m = Maplet(2000, key_bits=16)  # fpr not needed
        self.assertEqual(m.key_bits, 16)
        rng = random.Random(3)
        held = {rng.randrange(1 << 16): rng.randrange(1, 200)
                for _ in range(1500)}
        for k, v in held.items():
            m[k] = v
        self.assertEqual(dict(m.exact_items()), held)
        self.assertEqual(len(m), len(held))
        # No false positives and no collisions over the whole universe.
        got, found = m.get_many(list(range(1 << 16)))
        self.assertEqual({k for k in range(1 << 16) if found[k]}, set(held))
        self.assertTrue(all(got[k] == v for k, v in held.items()))
        self.assertEqual(m.contains_many(list(held)), [True] * len(held))
        with self.assertRaises(amq.InvalidError):
            m[1 << 16] = 1
        with self.assertRaises(amq.InvalidError):
            m.exact_hash(-1)
        fp = m.fingerprint(5)
        self.assertEqual(m.exact_key(fp), 5)
        m.resize()  # stays exact
        self.assertEqual(dict(m.exact_items()), held)
        m["text key"] = 1  # hashed as in a filter
        self.assertEqual(m["text key"], 1)
        with self.assertRaises(amq.UnsupportedError):
            list(Maplet(10, 0.01).exact_items())
        with self.assertRaises(amq.UnsupportedError):
            Maplet(10, 0.01).exact_hash(1)
        b = Maplet.build(list(held), list(held.values()), key_bits=16)
        self.assertEqual(dict(b.exact_items()), held)

    def test_merge_is_putting_everything_into_one(self):
        pairs = [(b"k%d" % i, i % 9 + 1) for i in range(600)]
        for op in OPS:
            with self.subTest(op=op):
                a = Maplet(1000, 0.01, op=op, value_bits=4)
                b = Maplet(1000, 0.01, op=op, value_bits=4)
                one = Maplet(1000, 0.01, op=op, value_bits=4)
                for i, (k, v) in enumerate(pairs):
                    (a if i % 2 else b)[k] = v
                    one[k] = v
                self.assertIs(a.merge(b), a)
                self.assertEqual(a.to_bytes(), one.to_bytes())
        c = Maplet(1000, 0.01, op="sum", value_bits=4)
        c.update({b"k1": 1}, [(b"k2", 2)], k3=3)
        self.assertEqual((c[b"k1"], c[b"k2"], c["k3"]), (1, 2, 3))
        c.update(c.copy())
        self.assertEqual(c["k3"], 6)
        d = c | c
        self.assertEqual(d["k3"], 12)
        self.assertEqual(c["k3"], 6)
        with self.assertRaises(amq.IncompatibleError):
            c.merge(Maplet(1000, 0.01, op="max", value_bits=4))
        with self.assertRaises(amq.IncompatibleError):
            c.merge(Maplet(1000, 0.01, op="sum", value_bits=5))
        with self.assertRaises(TypeError):
            c.merge(amq.Filter("qf", 1000, 0.01))

    def test_full_resize_and_capacity_bound(self):
        m = Maplet("maplet:op=sum,v=4,q=6,r=6")
        self.assertEqual(m.shape.slots, 64)
        with self.assertRaises(amq.FullError):
            m.put_many(keys(b"f", 1000), 1)
        n = len(m)
        before = m.to_bytes()
        with self.assertRaises(amq.FullError):
            m["one more"] = 1
        self.assertEqual(m.to_bytes(), before)  # unchanged
        pairs = dict(m.items())
        bound, cap = m.fpr_bound, m.capacity_bound
        m.resize()
        self.assertEqual(m.shape.slots, 128)
        self.assertEqual(m.shape.remainder_bits, 5)
        self.assertEqual(dict(m.items()), pairs)
        self.assertAlmostEqual(m.fpr_bound, bound)
        self.assertAlmostEqual(m.capacity_bound, 2 * cap)
        m["one more"] = 1
        self.assertEqual(len(m), n + 1)
        with self.assertRaises(amq.InvalidError):
            Maplet("maplet:q=6,r=1").resize()  # needs r >= 2

    def test_expandable_maplet_grows_with_its_values(self):
        m = Maplet(10, 0.01, "max", 12, spec="emaplet")
        ks = keys(b"g", 20000)
        for i, k in enumerate(ks):
            m.put(k, i % 4096)
        self.assertGreater(m.shape.slots, 10000)  # it doubled, no resize
        got = [m[k] for k in ks]
        self.assertTrue(all(g >= i % 4096 for i, g in enumerate(got)))
        exact = sum(g == i % 4096 for i, g in enumerate(got))
        self.assertGreater(exact, 0.98 * len(ks))
        self.assertLess(m.fpr_bound, 0.02)
        c = Maplet(10, 0.01, "sum", 4, spec="emaplet")
        for _ in range(40):  # past 2^4 - 1: more entries, one count
            c.put(b"hot", 1)
        self.assertEqual(c[b"hot"], 40)
        c.delete(b"hot", 15)
        self.assertEqual(c[b"hot"], 25)

    def test_iteration_refuses_a_change(self):
        m = Maplet(100, 0.01)
        m.put_many(["a", "b", "c"], [1, 2, 3])
        it = m.items()
        next(it)
        m["d"] = 1
        with self.assertRaises(RuntimeError):
            next(it)
        self.assertEqual(sorted(m.values()), [1, 1, 2, 3])

    def test_build_equals_puts(self):
        ks = keys(b"b", 500)
        vs = [i % 16 for i in range(500)]
        one = Maplet(500, 0.01, op="max", value_bits=4)
        one.put_many(ks, vs)
        b = Maplet.build(ks, vs, 0.01, op="max", value_bits=4)
        self.assertIs(type(b), Maplet)
        self.assertEqual(b.to_bytes(), one.to_bytes())
        c = Maplet.build(dict(zip(ks, vs)), fpr=0.01, op="max", value_bits=4)
        self.assertEqual(c.to_bytes(), one.to_bytes())
        with self.assertRaises(ValueError):
            Maplet.build(ks, vs[:-1], 0.01)
        with self.assertRaises(TypeError):
            Maplet.build(ks, vs, 0.01, colour="red")


class TestBulk(unittest.TestCase):
    def test_lists(self):
        m = Maplet(1000, 0.001, op="max", value_bits=8)
        ks = keys(b"l", 300)
        self.assertEqual(m.put_many(ks, [i % 256 for i in range(300)]), 300)
        got, found = m.get_many(ks + [b"absent"])
        self.assertEqual(got[:300], [m[k] for k in ks])
        self.assertTrue(all(g >= i for g, i in zip(got, range(256))))
        self.assertEqual(found, [True] * 300 + [False])
        self.assertEqual(got[300], 0)
        self.assertEqual(m.contains_many(ks[:3]), [True] * 3)
        self.assertEqual(m.put_many(iter(ks[:5]), 1), 5)  # a generator
        self.assertEqual(m.put_many([], []), 0)
        self.assertEqual(m.get_many([]), ([], []))
        with self.assertRaises(ValueError):
            m.put_many(ks, [1, 2])
        with self.assertRaises(TypeError):
            m.put_many("a single key", 1)
        with self.assertRaises(ValueError):
            m.put_many(ks[:2], [1, -1])
        with self.assertRaises(TypeError):
            m.put_many(ks[:2], [1, 1.5])

    def test_stops_at_the_first_failure(self):
        m = Maplet(100, 0.001, op="max", value_bits=4)
        with self.assertRaises(amq.InvalidError) as e:
            m.put_many([b"a", b"b", b"c"], [1, 99, 2])
        self.assertIn("pair 2 of 3", str(e.exception))
        self.assertEqual((b"a" in m, b"b" in m, b"c" in m),
                         (True, False, False))

    def test_hashes(self):
        m = Maplet(100, 0.001, keyed=True)
        hs = m.hashes(["x", "y"])
        self.assertEqual(hs, [m.hash("x"), m.hash("y")])
        self.assertEqual(m.put_hashes(hs, [4, 5]), 2)
        self.assertEqual((m["x"], m["y"]), (4, 5))
        self.assertEqual(m.get_hashes(hs), ([4, 5], [True, True]))
        self.assertTrue(m.keyed)

    @unittest.skipUnless(np, "numpy is not installed")
    def test_numpy(self):
        m = Maplet(20000, 0.001, op="sum", value_bits=16)
        ks = np.arange(10000, dtype=np.int64)
        vs = (np.arange(10000) % 100 + 1).astype(np.uint64)
        self.assertEqual(m.put_many(ks, vs), 10000)
        got, found = m.get_many(ks)
        self.assertEqual(got.dtype, np.uint64)
        self.assertEqual(found.dtype, np.bool_)
        self.assertTrue(found.all())
        self.assertTrue((got >= vs).all())
        self.assertEqual(int(got[7]), m[7])
        absent = np.arange(10 ** 6, 10 ** 6 + 20000, dtype=np.uint64)
        got, found = m.get_many(absent)
        self.assertTrue((got[~found] == 0).all())
        self.assertLessEqual(found.mean(), rate_limit(m.fpr_bound, 20000))
        self.assertEqual(m.contains_many(absent).tolist(), found.tolist())
        self.assertEqual(m.put_many(np.array([b"x", b"y"]), 3), 2)
        self.assertEqual(m["y"], 3)
        s = np.array(["é", "b"])
        m.put_many(s, np.array([1, 2], dtype=np.int32))
        self.assertEqual(m["é"], 1)
        with self.assertRaises(ValueError):
            m.put_many(ks[:2], np.array([1, -1]))
        with self.assertRaises(TypeError):
            m.put_many(ks[:2], np.array([1.0, 2.0]))
        with self.assertRaises(ValueError):
            m.put_many(ks[:2], np.ones((2, 1), dtype=np.uint64))
        with self.assertRaises(ValueError):
            m.put_many(ks[:3], np.ones(2, dtype=np.uint64))
        hs = m.hashes(ks[:5])
        self.assertEqual(hs.dtype, np.uint64)
        v, f = m.get_hashes(hs)
        self.assertTrue(f.all())
        e = Maplet(100, key_bits=12)
        e.put_many(np.array([1, 2, 4095], dtype=np.uint16), 1)
        self.assertEqual(sorted(k for k, _ in e.exact_items()), [1, 2, 4095])
        self.assertEqual(e.get_many(np.array([2, 3]))[1].tolist(),
                         [True, False])


class TestStaticMap(unittest.TestCase):
    def test_exact_values_and_fpr(self):
        rng = random.Random(11)
        ks = keys(b"s", 5000)
        vs = [rng.randrange(1 << 10) for _ in ks]
        sm = StaticMap(ks, vs, 0.01, op="or", value_bits=10)
        self.assertIsInstance(sm, Maplet)
        self.assertTrue(sm.shape.is_static)
        self.assertEqual(sm.mode, "static")
        self.assertEqual(len(sm), 5000)
        got, found = sm.get_many(ks)
        self.assertEqual(got, vs)  # every key it was built with: exact
        self.assertTrue(all(found))
        absent = keys(b"t", 20000)
        hits = sum(sm.get_many(absent)[1])
        self.assertLessEqual(hits / 20000, rate_limit(sm.fpr_bound, 20000))
        self.assertLessEqual(sm.fpr_bound, 0.01)
        self.assertEqual(sm[ks[3]], vs[3])
        miss = next(k for k in absent if k not in sm)
        self.assertEqual(sm.get(miss, "no"), "no")
        with self.assertRaises(KeyError):
            sm[miss]

    def test_repeats_combine_and_mapping(self):
        sm = StaticMap([b"a", b"b", b"a"], [3, 5, 4], 0.001, value_bits=4)
        self.assertEqual((sm[b"a"], sm[b"b"]), (7, 5))
        self.assertEqual(len(sm), 2)
        mx = StaticMap({"x": 9, "y": 1}, fpr=0.001, op="max")
        self.assertEqual((mx["x"], mx["y"]), (9, 1))
        fu = StaticMap({"x": 9}, fpr=0.01, member="fuse8")
        self.assertIn("member=fuse8", fu.spec)
        self.assertEqual(fu["x"], 9)
        self.assertIs(type(StaticMap.build(["q"], [1])), StaticMap)
        with self.assertRaises(amq.InvalidError):
            StaticMap(["x"], [16], value_bits=4)

    def test_cannot_change(self):
        sm = StaticMap(["a"], [1])
        for act in (lambda: sm.__setitem__("a", 1), lambda: sm.put("b"),
                    lambda: sm.put_many(["c"], [1]), lambda: sm.delete("a"),
                    lambda: sm.__delitem__("a"), lambda: sm.resize(),
                    lambda: sm.drop_value(1), lambda: sm.merge(sm),
                    lambda: sm.add("x"), lambda: list(sm.items()),
                    lambda: list(sm)):
            with self.assertRaises(amq.UnsupportedError):
                act()
        self.assertEqual(sm["a"], 1)
        with self.assertRaises(amq.UnsupportedError):
            Maplet("smaplet", 10, 0.01)
        with self.assertRaises(amq.UnsupportedError):
            StaticMap.build([b"a"], [1], multiset=True)

    def test_round_trips(self):
        sm = StaticMap({"a": 1, "b": 2}, fpr=0.01)
        for other in (StaticMap.from_bytes(sm.to_bytes()), sm.copy(),
                      copy.copy(sm), copy.deepcopy(sm),
                      pickle.loads(pickle.dumps(sm)),
                      Maplet.from_bytes(bytes(sm))):
            self.assertIs(type(other), StaticMap)
            self.assertEqual(other.to_bytes(), sm.to_bytes())
            self.assertEqual((other["a"], other["b"]), (1, 2))


class TestFrames(unittest.TestCase):
    def setUp(self):
        self.m = Maplet(500, 0.01, op="sum", value_bits=6)
        self.m.put_many(keys(b"r", 300), [i % 60 + 1 for i in range(300)])
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def same(self, a, b):
        self.assertEqual(a.to_bytes(), b.to_bytes())
        self.assertEqual(dict(a.items()), dict(b.items()))

    def test_bytes_pickle_copy_independent(self):
        m = self.m
        frame = m.to_bytes()
        for other in (Maplet.from_bytes(frame), m.copy(), copy.copy(m),
                      copy.deepcopy(m), pickle.loads(pickle.dumps(m)),
                      Maplet.from_bytes(bytearray(frame))):
            self.assertIs(type(other), Maplet)
            self.same(other, m)
            other["new key"] = 1
            self.assertNotIn("new key", m)
        self.assertEqual(m.to_bytes(), frame)

    def test_save_load_open(self):
        path = os.path.join(self.dir, "m.amq")
        self.m.save(path)
        self.same(Maplet.load(path), self.m)
        with Maplet.open(path) as view:
            self.assertTrue(view.is_view)
            self.same(view, self.m)
            with self.assertRaises(amq.ReadOnlyError):
                view["x"] = 1
            with self.assertRaises(amq.ReadOnlyError):
                view.delete(b"r-000001", 2)
        f = amq.Filter.load(path)  # a maplet is a filter
        self.assertEqual(f.type, "maplet")
        self.assertTrue(all(f.contains_many(keys(b"r", 300))))
        info = self.m.info()
        self.assertEqual(info["maplet_op"], "sum")
        self.assertEqual(info["value_bits"], 6)
        self.assertEqual(info["keys"], len(self.m))
        self.assertEqual(info["items"], self.m.total)
        self.assertFalse(info["static"])

    def test_wrong_kind_and_corrupt(self):
        with self.assertRaises(amq.KindError):
            Maplet.from_bytes(amq.Filter("qf", 100, 0.01).to_bytes())
        with self.assertRaises(amq.KindError):
            StaticMap.from_bytes(self.m.to_bytes())
        frame = bytearray(self.m.to_bytes())
        frame[len(frame) // 2] ^= 0x40
        with self.assertRaises(amq.CorruptError):  # ChecksumError is one
            Maplet.from_bytes(frame)
        with self.assertRaises(amq.CorruptError):
            Maplet.from_bytes(frame[:40])
        with self.assertRaises(amq.CorruptError):
            Maplet.from_bytes(b"")

    def test_closed(self):
        m = self.m.copy()
        m.close()
        m.close()
        self.assertIn("closed", repr(m))
        for act in (lambda: m["a"], lambda: m.__setitem__("a", 1),
                    lambda: len(m), lambda: list(m.items()),
                    lambda: m.get_many(["a"]), lambda: m.to_bytes(),
                    lambda: m.shape, lambda: "a" in m,
                    lambda: self.m.merge(m)):
            with self.assertRaises(amq.ClosedError):
                act()

    def test_bad_construction(self):
        with self.assertRaises(ValueError):
            Maplet(100)
        with self.assertRaises(amq.SpecError):
            Maplet(100, 0.01, op="avg")
        with self.assertRaises(amq.SpecError):
            Maplet("maplet")  # no sizes
        with self.assertRaises(amq.UnsupportedError):
            Maplet("bloom", 100, 0.01)
        with self.assertRaises(amq.SpecError):
            Maplet(100, 0.01, value_bits=65)
        with self.assertRaises(TypeError):
            Maplet(100, 0.01, value_bits="8")
        c = Maplet(100, 0.01, concurrent=True, multiset=True)
        self.assertTrue(c.multiset)
        self.assertIsInstance(c.shape, MapletShape)


class TestTool(unittest.TestCase):
    @unittest.skipUnless(os.access(TOOL, os.X_OK), "the amq tool is absent")
    def test_files_cross_the_tool(self):
        d = tempfile.mkdtemp()
        try:
            pairs = os.path.join(d, "pairs.tsv")
            with open(pairs, "w") as f:
                f.write("alice\t3\nbob\t5\nalice\t4\n")
            for kind in ("maplet", "smaplet"):
                out = os.path.join(d, kind + ".amq")
                subprocess.run([TOOL, "map", "build", "-q", "-t", kind,
                                "--op", "sum", "--value-bits", "4", "--fpr",
                                "0.01", "-o", out, pairs], check=True)
                m = Maplet.load(out)
                self.assertIs(type(m), StaticMap if kind == "smaplet"
                              else Maplet)
                self.assertEqual((m["alice"], m["bob"]), (7, 5))
            mine = Maplet(100, 0.01, op="max", value_bits=8)
            mine.update({"x": 5, "y": 200})
            st = StaticMap({"p": 9, "q": 1}, fpr=0.01)
            for m, ks in ((mine, ["x", "y"]), (st, ["p", "q"])):
                path = os.path.join(d, "py.amq")
                m.save(path)
                args = [TOOL, "map", "get", path]
                for k in ks:
                    args += ["--key", k]
                out = subprocess.run(args, check=True, capture_output=True,
                                     text=True).stdout
                self.assertEqual(out.splitlines(),
                                 ["%s\t%d" % (k, m[k]) for k in ks])
        finally:
            shutil.rmtree(d)


class TestFunctions(unittest.TestCase):
    def test_op_names_and_combine(self):
        self.assertEqual([op_name(i) for i in range(6)],
                         ["?", "sum", "max", "min", "or", "?"])
        self.assertEqual(combine("sum", 2, 3), 5)
        self.assertEqual(combine("max", 2, 3), 3)
        self.assertEqual(combine("min", 2, 3), 2)
        self.assertEqual(combine("or", 4, 1), 5)
        with self.assertRaises(amq.SizeOverflowError):
            combine("sum", (1 << 64) - 1, 1)
        with self.assertRaises(amq.SpecError):
            combine("avg", 1, 2)


if __name__ == "__main__":
    unittest.main()
