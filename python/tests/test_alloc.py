"""amq.alloc: the allocation engine (amq/alloc.h) from Python."""

import copy
import json
import math
import os
import pickle
import random
import subprocess
import tempfile
import unittest

import amq
from amq import alloc
from amq.alloc import BLOOM_C, Curve, Group, Pick

AMQ_TOOL = os.environ.get("AMQ_TOOL", os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "amq"))
SPECS = ["model", "bloom", "blocked", "ribbon", "fuse", "cuckoo", "qf"]


def random_groups(rng, n, spec):
    """Keys over three decades, weights over four."""
    return [Group(float(math.floor(10 ** (2 + 3 * rng.random()))),
                  10 ** (-4 * rng.random()), spec) for _ in range(n)]


def halving(b):
    """A caller's curve: each bit halves the rate."""
    return 2.0 ** -b


def total_keys(groups):
    return math.fsum(g.keys for g in groups)


class TestMinCost(unittest.TestCase):
    def test_meets_budget_and_beats_uniform(self):
        rng = random.Random(7)
        for spec in SPECS:
            for trial in range(4):
                gs = random_groups(rng, 2 + trial * 3, spec)
                for bpk in (2.0, 6.0, 12.0):
                    m = bpk * total_keys(gs)
                    p = alloc.plan(gs, memory_bits=m)
                    u = alloc.uniform(gs, memory_bits=m)
                    msg = "%s trial %d, %g bits/key" % (spec, trial, bpk)
                    self.assertEqual(len(p), len(gs), msg)
                    self.assertLessEqual(p.memory_bits, m * (1 + 1e-9), msg)
                    used = math.fsum(g.keys * k.bits_per_key
                                     for g, k in zip(gs, p))
                    self.assertAlmostEqual(used, p.memory_bits,
                                           delta=1e-9 * m, msg=msg)
                    # the weighted rate: what the summary says, and no
                    # worse than the same bits everywhere
                    cost = alloc.weighted_fpr(gs, p.picks)
                    self.assertAlmostEqual(cost, p.cost,
                                           delta=1e-12 + 1e-9 * cost)
                    self.assertLessEqual(p.cost, u.cost * (1 + 1e-12), msg)
                    # the hull relaxation bounds the sampled points; a
                    # pick between two (continuous curves) may beat it by
                    # the grid's second-order error
                    self.assertGreaterEqual(p.cost,
                                            p.relaxed_cost * (1 - 1e-4), msg)
                    self.assertLessEqual(u.memory_bits, m * (1 + 1e-9), msg)

    def test_model_is_water_filling(self):
        gs = [Group(100, 0.5, "model"), Group(1000, 0.3, "model"),
              Group(10000, 0.15, "model"), Group(100000, 0.05, "model")]
        p = alloc.plan(gs, memory_bits=8 * total_keys(gs))
        self.assertLess(p.kkt_residual, 1e-9)
        self.assertGreater(p.lambda_, 0)
        for g, k in zip(gs, p):
            want = max(0.0, math.log(BLOOM_C * g.weight /
                                     (p.lambda_ * g.keys)) / BLOOM_C)
            self.assertAlmostEqual(k.bits_per_key, want, delta=1e-9)
            self.assertAlmostEqual(k.fpr, math.exp(-BLOOM_C * want),
                                   delta=1e-12)
            self.assertEqual(k.spec, "model")

    def test_spec_picks_are_realisable(self):
        gs = [Group(1000, 0.9, "bloom"), Group(100000, 0.1, "bloom"),
              Group(5000, 0.5, "fuse"), Group(5000, 0.5, "cuckoo")]
        p = alloc.plan(gs, memory_bits=10 * total_keys(gs))
        for k in p:
            self.assertTrue(k.has_filter)
            self.assertTrue(any(k.spec.split(":")[0] == t["name"]
                                for t in amq.types()), k.spec)

    def test_empty_groups_get_no_filter(self):
        p = alloc.plan([Group(0, 1.0), Group(100, 0.0), Group(100, 1.0)],
                       memory_bits=1000)
        self.assertEqual(p[0].spec, "")
        self.assertEqual(p[0].bits_per_key, 0)
        self.assertEqual(p[1].spec, "")
        self.assertEqual(p[1].fpr, 1.0)
        self.assertTrue(p[2].has_filter)
        self.assertEqual(len(alloc.plan([], memory_bits=10)), 0)

    def test_zero_budget(self):
        p = alloc.plan([Group(100, 0.4), Group(10, 0.6)], memory_bits=0)
        self.assertEqual(p.memory_bits, 0)
        self.assertAlmostEqual(p.cost, 1.0, delta=1e-15)

    def test_groups_as_dicts_and_tuples(self):
        a = alloc.plan([Group(100, 0.4, "ribbon"), Group(1000, 0.6)],
                       memory_bits=9000)
        b = alloc.plan([{"keys": 100, "weight": 0.4, "spec": "ribbon"},
                        {"keys": 1000, "weight": 0.6}], memory_bits=9000)
        c = alloc.plan([(100, 0.4, "ribbon"), (1000, 0.6)], memory_bits=9000)
        self.assertEqual(a, b)
        self.assertEqual(a, c)

    def test_shared_curve_object(self):
        curve = Curve("ribbon")
        a = alloc.plan([Group(100, 0.4, curve), Group(1000, 0.6, curve)],
                       memory_bits=9000)
        b = alloc.plan([Group(100, 0.4, "ribbon"), Group(1000, 0.6,
                                                         "ribbon")],
                       memory_bits=9000)
        self.assertEqual(a, b)
        self.assertFalse(curve.closed)  # the caller's curve stays open


class TestMinMemory(unittest.TestCase):
    def test_meets_rate_with_least_memory(self):
        rng = random.Random(11)
        for spec in ("model", "bloom", "ribbon", "fuse"):
            gs = random_groups(rng, 6, spec)
            w = math.fsum(g.weight for g in gs)
            for eps in (0.05 * w, 0.005 * w):
                q = alloc.plan(gs, fpr=eps)
                self.assertLessEqual(q.cost, eps * (1 + 1e-9), spec)
                # the budget it found buys eps back in the other direction
                # (duality, up to the rounding to realisable points)
                p = alloc.plan(gs, memory_bits=q.memory_bits)
                self.assertLessEqual(p.cost, eps * (1 + 1e-5), spec)
                self.assertGreater(p.cost, 0.5 * q.cost, spec)
                # and less memory does not reach eps
                r = alloc.plan(gs, memory_bits=0.9 * q.memory_bits)
                self.assertGreater(r.cost, eps, spec)

    def test_p0_counts_in_the_cost(self):
        gs = [Group(1000, 0.3, "model"), Group(100, 0.2, "model")]
        q = alloc.plan(gs, fpr=0.1, p0=0.05)
        self.assertLessEqual(q.cost, 0.1 * (1 + 1e-12))
        self.assertGreaterEqual(q.cost, 0.05)
        free = alloc.plan(gs, fpr=0.6, p0=0.05)
        self.assertEqual(free.memory_bits, 0)

    def test_unreachable(self):
        gs = [Group(1000, 0.3, "fuse8")]
        with self.assertRaises(amq.InvalidError):
            alloc.plan(gs, fpr=1e-6)
        with self.assertRaises(amq.InvalidError):
            alloc.plan(gs, fpr=0.05, p0=0.05)


class TestAgainstTool(unittest.TestCase):
    """The same runs through `amq lsm plan --csv` (the engine with the
    lookups normalised) and through plan()/uniform()."""

    @unittest.skipUnless(os.access(AMQ_TOOL, os.X_OK), "no amq tool")
    def test_same_numbers_as_the_tool(self):
        rows = [("hot", 2000, 50), ("warm", 30000, 30), ("cold", 700000, 15),
                ("tiny", 90, 5)]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.csv")
            with open(path, "w") as f:
                f.write("name,keys,lookups\n")
                for r in rows:
                    f.write("%s,%d,%d\n" % r)
            for curve in ("bloom", "model", "ribbon", "fuse", "cuckoo"):
                out = subprocess.run([AMQ_TOOL, "lsm", "plan", "--csv", path,
                                      "-B", "7.5", "--curve", curve,
                                      "--json"], capture_output=True,
                                     text=True, check=True).stdout
                tool = json.loads(out)
                w = 0.0
                for r in rows:  # the order the library sums them in
                    w += r[2]
                gs = [Group(r[1], r[2] / w, curve) for r in rows]
                m = 7.5 * sum(r[1] for r in rows)
                p = alloc.plan(gs, memory_bits=m)
                u = alloc.uniform(gs, memory_bits=m)
                self.assertEqual(p.cost, tool["cost_optimal"], curve)
                self.assertEqual(u.cost, tool["cost_uniform"], curve)
                self.assertEqual(p.memory_bits, tool["memory_used_bits"])
                for k, v, t in zip(p, u, tool["runs"]):
                    self.assertEqual(k, Pick(t["bits_per_key"], t["fpr"],
                                             t["spec"]), curve)
                    self.assertEqual(v, Pick(t["uniform_bits_per_key"],
                                             t["uniform_fpr"],
                                             t["uniform_spec"]), curve)


class TestInvalid(unittest.TestCase):
    def test_bad_numbers(self):
        for g in (Group(-1, 1), Group(10, -0.5), Group(math.nan, 1),
                  Group(10, math.inf)):
            with self.assertRaises(amq.InvalidError):
                alloc.plan([g], memory_bits=100)
        for m in (-1, math.nan, math.inf):
            with self.assertRaises(amq.InvalidError):
                alloc.plan([Group(10, 1)], memory_bits=m)
            with self.assertRaises(amq.InvalidError):
                alloc.uniform([Group(10, 1)], memory_bits=m)
        with self.assertRaises(amq.InvalidError):
            alloc.plan([Group(10, 1)], fpr=math.nan)

    def test_bad_arguments(self):
        gs = [Group(10, 1)]
        with self.assertRaises(ValueError):
            alloc.plan(gs)
        with self.assertRaises(ValueError):
            alloc.plan(gs, memory_bits=10, fpr=0.1)
        with self.assertRaises(TypeError):
            alloc.plan([Group("10", 1)], memory_bits=100)
        with self.assertRaises(TypeError):
            alloc.plan([{"keys": 10, "wieght": 1}], memory_bits=100)
        with self.assertRaises(TypeError):
            alloc.plan([42], memory_bits=100)
        with self.assertRaises(TypeError):
            alloc.plan(Group(10, 1), memory_bits=100)
        with self.assertRaises(TypeError):
            alloc.plan([Group(10, 1, 7)], memory_bits=100)

    def test_bad_specs(self):
        with self.assertRaises(amq.SpecError):
            alloc.plan([Group(10, 1, "nope")], memory_bits=100)
        with self.assertRaises(amq.SpecError):
            Curve("bloom:zz=3")
        with self.assertRaises(amq.UnsupportedError):
            Curve("topk")
        with self.assertRaises(amq.InvalidError):
            Curve.model(0)
        with self.assertRaises(amq.InvalidError):
            Curve.model(math.inf)
        with self.assertRaises(TypeError):
            Curve(3)  # type: ignore[arg-type]


class TestCurve(unittest.TestCase):
    def test_hull_is_convex_and_decreasing(self):
        for spec in SPECS[1:]:
            v = Curve(spec).vertices()
            self.assertGreater(len(v), 1, spec)
            self.assertEqual(v[0][0], 0.0)
            for (b0, f0), (b1, f1) in zip(v, v[1:]):
                self.assertLess(b0, b1, spec)
                self.assertLess(f1, f0, spec)
            slopes = [(f1 - f0) / (b1 - b0)
                      for (b0, f0), (b1, f1) in zip(v, v[1:])]
            for s0, s1 in zip(slopes, slopes[1:]):
                self.assertLessEqual(s0, s1 + 1e-12, spec)

    def test_at(self):
        m = Curve.model()
        self.assertEqual(m.label, "model")
        self.assertEqual(m.vertices(), [])
        self.assertAlmostEqual(m.at(10).fpr, math.exp(-10 * BLOOM_C),
                               delta=1e-15)
        for spec in ("bloom", "fuse", "cuckoo"):
            c = Curve(spec)
            self.assertEqual(c.label, spec)
            for b in (0.5, 4.0, 9.3, 17.0):
                p = c.at(b)
                self.assertLessEqual(p.bits_per_key, b)
                self.assertLessEqual(p.fpr, 1.0)
        self.assertEqual(Curve("fuse").at(9.0).spec, "fuse8")
        with self.assertRaises(amq.InvalidError):
            m.at(-1)

    def test_custom(self):
        c = Curve.custom(halving, max_bits=20, step=1,
                         discrete=True, label="halving")
        self.assertEqual(c.label, "halving")
        self.assertEqual(c.vertices()[:3], [(0.0, 1.0), (1.0, 0.5),
                                            (2.0, 0.25)])
        self.assertEqual(c.at(3.5), Pick(3.0, 0.125, "halving"))
        p = alloc.plan([Group(100, 1, c)], memory_bits=1000)
        self.assertEqual(p[0], Pick(10.0, 2.0 ** -10, "halving"))
        inv = Curve.custom(bits=lambda e: -math.log2(e), max_bits=30)
        self.assertEqual(inv.label, "custom")
        self.assertAlmostEqual(inv.at(10).fpr, 2.0 ** -10, delta=1e-3)

    def test_custom_errors(self):
        with self.assertRaises(amq.InvalidError):
            Curve.custom()
        with self.assertRaises(amq.InvalidError):
            Curve.custom(lambda b: 1.0, bits=lambda e: 1.0)
        with self.assertRaises(amq.InvalidError):
            Curve.custom(lambda b: math.nan)
        with self.assertRaises(amq.InvalidError):
            Curve.custom(lambda b: 1.0, label="x" * alloc.SPEC_MAX)
        with self.assertRaises(amq.InvalidError):
            Curve.custom(lambda b: 1.0, step=-1)

        def boom(b):
            raise ZeroDivisionError("from the caller's curve")
        with self.assertRaises(ZeroDivisionError):
            Curve.custom(boom)
        with self.assertRaises(TypeError):
            Curve.custom(lambda b: "high")  # type: ignore

    def test_copy_pickle_close(self):
        for c in (Curve("ribbon"), Curve.model(0.3),
                  Curve.custom(halving, max_bits=24, label="halving")):
            for d in (c.copy(), copy.copy(c), copy.deepcopy(c)):
                self.assertIsNot(d, c)
                self.assertEqual(d.label, c.label)
                self.assertEqual(d.vertices(), c.vertices())
                self.assertEqual(d.at(1.5), c.at(1.5))
            d = pickle.loads(pickle.dumps(c))
            self.assertEqual(d.label, c.label)
            self.assertEqual(d.vertices(), c.vertices())
            self.assertEqual(d.at(7.1), c.at(7.1))
            c.close()
            c.close()
            with self.assertRaises(amq.ClosedError):
                c.at(1)
            with self.assertRaises(amq.ClosedError):
                c.copy()
            with self.assertRaises(amq.ClosedError):
                alloc.plan([Group(10, 1, c)], memory_bits=10)


class TestPickBuild(unittest.TestCase):
    def test_built_filters_keep_the_promise(self):
        gs = [Group(20000, 0.7, "bloom"), Group(20000, 0.3, "ribbon"),
              Group(20000, 0.5, "fuse")]
        p = alloc.plan(gs, memory_bits=10 * total_keys(gs))
        strangers = ["s%d" % i for i in range(100000)]
        for i, (g, k) in enumerate(zip(gs, p)):
            keys = ["g%d-%d" % (i, j) for j in range(int(g.keys))]
            f = k.build(keys)
            self.assertTrue(all(f.contains_many(keys)), k.spec)
            self.assertLess(f.bits_per_key, k.bits_per_key * 1.15 + 0.5,
                            k.spec)
            rate = sum(f.contains_many(strangers)) / len(strangers)
            sd = math.sqrt(k.fpr * (1 - k.fpr) / len(strangers))
            self.assertLess(rate, k.fpr * 1.25 + 5 * sd, k.spec)

    def test_nothing_to_build(self):
        with self.assertRaises(ValueError):
            Pick(0.0, 1.0, "").build(["a"])
        with self.assertRaises(ValueError):
            Curve.model().at(8).build(["a"])


if __name__ == "__main__":
    unittest.main()
