"""amq.lsm: Monkey's allocation and the laws' simulator (amq/lsm.h)."""

import dataclasses
import json
import math
import os
import subprocess
import tempfile
import unittest

import amq
from amq import alloc, lsm
from amq.alloc import BLOOM_C

AMQ_TOOL = os.environ.get("AMQ_TOOL", os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "amq"))
LAB_TOOL = os.environ.get("AMQ_LAB", os.path.join(
    os.path.dirname(AMQ_TOOL), "amq-lab"))
HAVE_TOOL = os.access(AMQ_TOOL, os.X_OK) and os.access(LAB_TOOL, os.X_OK)


def tool(verb, *args):
    """`amq lsm plan ...`, or `amq-lab lsm simulate ...` (the laws are
    experiments), as parsed JSON."""
    prog = AMQ_TOOL if verb == "plan" else LAB_TOOL
    out = subprocess.run([prog, "lsm", verb] + list(args),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


class TestTree(unittest.TestCase):
    def test_levels(self):
        runs = lsm.tree(4, 10, 1e6)
        self.assertEqual([r.name for r in runs], ["L1", "L2", "L3", "L4"])
        self.assertAlmostEqual(math.fsum(r.keys for r in runs), 1e6,
                               delta=1e-6)
        for a, b in zip(runs, runs[1:]):
            self.assertAlmostEqual(b.keys / a.keys, 10, delta=1e-9)
        self.assertEqual([r.lookups for r in runs], [0.25] * 4)
        self.assertEqual(lsm.tree(3, workload=None)[0].lookups, 0)

    def test_workload(self):
        runs = lsm.workload("zipf:1", lsm.tree(3))
        self.assertAlmostEqual(math.fsum(r.lookups for r in runs), 1,
                               delta=1e-15)
        self.assertAlmostEqual(runs[0].lookups / runs[2].lookups, 3,
                               delta=1e-12)
        runs = lsm.workload("weights:3,1,0", runs)
        self.assertEqual([r.lookups for r in runs], [0.75, 0.25, 0])
        for bad in ("zipf:-1", "weights:1,2", "weights:0,0,0", "hot"):
            with self.assertRaises(amq.SpecError):
                lsm.workload(bad, runs)
        with self.assertRaises(amq.InvalidError):
            lsm.workload("uniform", [])

    def test_bad_trees(self):
        for kw in ({"levels": 0}, {"levels": 65}, {"ratio": 1},
                   {"keys": 0}, {"keys": math.nan}):
            with self.assertRaises(amq.InvalidError, msg=str(kw)):
                lsm.tree(**kw)
        with self.assertRaises(TypeError):
            lsm.tree(2.5)

    def test_csv(self):
        text = ("name,keys,lookups\n# a comment\n\n L1 , 100, 0.5\n"
                "L2,1e4,0.5\r\n")
        runs = lsm.parse_csv(text)
        self.assertEqual(runs, [lsm.Run("L1", 100, 0.5),
                                lsm.Run("L2", 1e4, 0.5)])
        self.assertEqual(lsm.parse_csv(text.encode()), runs)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.csv")
            with open(path, "w") as f:
                f.write(text)
            self.assertEqual(lsm.read_csv(path), runs)
        bad = {"L1,100\n": "line 1", "L1,100,0.5\nL2,-3,1\n": "line 2",
               "L1,100,0\n": "0 lookups", "# nothing\n": "no runs",
               "x" * 40 + ",1,1\n": "name"}
        for t, words in bad.items():
            with self.assertRaises(amq.InvalidError) as cm:
                lsm.parse_csv(t)
            self.assertIn(words, cm.exception.detail, t)


class TestPlan(unittest.TestCase):
    def test_beats_uniform_within_budget(self):
        for curve in ("model", "bloom", "ribbon", "fuse", "cuckoo"):
            for wl in ("uniform", "zipf:1", "weights:100,50,10,2,1"):
                p = lsm.plan(lsm.tree(5, 10, 1e6, wl), 8, curve=curve)
                msg = "%s %s" % (curve, wl)
                self.assertLessEqual(p.summary.memory_bits,
                                     p.memory_bits * (1 + 1e-9), msg)
                self.assertAlmostEqual(p.memory_bits, 8e6, delta=1e-3)
                self.assertLessEqual(p.cost_optimal, p.cost_uniform, msg)
                self.assertGreaterEqual(p.reduction, 0, msg)
                # the costs are sum w f with w normalised
                w = math.fsum(r.lookups for r in p.runs)
                self.assertAlmostEqual(
                    p.cost_optimal,
                    math.fsum(r.lookups / w * k.fpr
                              for r, k in zip(p.runs, p.optimal)),
                    delta=1e-12)
                used = math.fsum(r.keys * k.bits_per_key
                                 for r, k in zip(p.runs, p.uniform))
                self.assertLessEqual(used, p.memory_bits * (1 + 1e-9))

    def test_monkey_gives_small_levels_more_bits(self):
        p = lsm.plan(lsm.tree(5, 10, 1e6), 8, curve="model")
        bits = [k.bits_per_key for k in p.optimal]
        self.assertEqual(bits, sorted(bits, reverse=True))
        # the log-law on the model: rates proportional to n_i / w_i
        rates = [k.fpr / r.keys for r, k in zip(p.runs, p.optimal)]
        for x in rates[1:]:
            self.assertAlmostEqual(x / rates[0], 1, delta=1e-9)

    def test_curve_object_and_model_exponent(self):
        runs = lsm.tree(4, 8, 1e5, "zipf:0.5")
        a = lsm.plan(runs, 6, curve=alloc.Curve.model(0.3))
        b = lsm.plan(runs, 6, curve="model", c=0.3)
        self.assertEqual(a, b)
        self.assertNotEqual(b, lsm.plan(runs, 6, curve="model"))

    @unittest.skipUnless(HAVE_TOOL, "no amq tool")
    def test_same_numbers_as_the_tool(self):
        cases = [(["-B", "8"], {}),
                 (["-B", "5", "-L", "7", "-T", "4", "-n", "3e7", "-w",
                   "zipf:1.2", "--curve", "ribbon"],
                  {"levels": 7, "ratio": 4, "keys": 3e7,
                   "workload": "zipf:1.2", "curve": "ribbon"}),
                 (["-B", "10", "-w", "weights:100,50,10,2,1", "--curve",
                   "model", "--c", "0.7"],
                  {"workload": "weights:100,50,10,2,1", "curve": "model",
                   "c": 0.7}),
                 (["-B", "3", "-L", "3", "--curve", "cuckoo"],
                  {"levels": 3, "curve": "cuckoo"}),
                 (["-B", "12", "--curve", "fuse"], {"curve": "fuse"})]
        for args, kw in cases:
            want = tool("plan", "--json", *args)
            tree_kw = {k: kw[k] for k in ("levels", "ratio", "keys",
                                          "workload") if k in kw}
            plan_kw = {k: kw[k] for k in ("curve", "c") if k in kw}
            got = lsm.plan(lsm.tree(**tree_kw), float(args[1]), **plan_kw)
            self.assertEqual(got.to_dict(), want, args)

    @unittest.skipUnless(HAVE_TOOL, "no amq tool")
    def test_same_numbers_as_the_tool_csv(self):
        text = "name,keys,lookups\nmem,500,40\nL0,2e4,30\nL1,3e5,20\n" \
               "L2,4e6,10\n"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.csv")
            with open(path, "w") as f:
                f.write(text)
            want = tool("plan", "--csv", path, "-B", "6.5", "--json")
        got = lsm.plan(lsm.parse_csv(text), 6.5)
        self.assertEqual(got.to_dict(), want)
        as_dicts = [{"name": r.name, "keys": r.keys, "lookups": r.lookups}
                    for r in lsm.parse_csv(text)]
        self.assertEqual(lsm.plan(as_dicts, 6.5), got)

    def test_invalid(self):
        good = lsm.tree(3)
        with self.assertRaises(amq.InvalidError):
            lsm.plan([], 8)
        for runs in ([lsm.Run("a", 0, 1)], [lsm.Run("a", -5, 1)],
                     [lsm.Run("a", 10, -1)], [lsm.Run("a", 10, 0)],
                     [lsm.Run("a", math.inf, 1)]):
            with self.assertRaises(amq.InvalidError, msg=str(runs)):
                lsm.plan(runs, 8)
        for bpk in (-1, math.nan, math.inf):
            with self.assertRaises(amq.InvalidError):
                lsm.plan(good, bpk)
        with self.assertRaises(amq.InvalidError):
            lsm.plan([lsm.Run("x" * lsm.NAME_MAX, 10, 1)], 8)
        with self.assertRaises(amq.SpecError):
            lsm.plan(good, 8, curve="nope")
        with self.assertRaises(amq.InvalidError):
            lsm.plan(good, 8, curve="model", c=-1)
        with self.assertRaises(TypeError):
            lsm.plan(good, 8, curve=3)
        with self.assertRaises(TypeError):
            lsm.plan([("a",)], 8)
        with self.assertRaises(TypeError):
            lsm.plan(good, "8")


class TestLaws(unittest.TestCase):
    def test_loglaw(self):
        r = lsm.loglaw()
        self.assertAlmostEqual(r.fit.slope, 1 / BLOOM_C, delta=1e-9)
        self.assertAlmostEqual(r.fit.r2, 1, delta=1e-12)
        self.assertEqual(len(r.ln_w), 50)
        self.assertEqual(r.fit.n, sum(1 for b in r.bits if b > 0))
        self.assertAlmostEqual(math.fsum(math.exp(x) for x in r.ln_w), 1,
                               delta=1e-9)
        self.assertEqual(lsm.loglaw(seed=5), lsm.loglaw(seed=5))
        with self.assertRaises(amq.InvalidError):
            lsm.loglaw(runs=1)
        with self.assertRaises(amq.InvalidError):
            lsm.loglaw(alpha=0)

    def test_robustness(self):
        r = lsm.robustness(draws=60)
        self.assertAlmostEqual(r.fit.slope, 0.5, delta=0.05)
        self.assertLess(abs(r.common_excess), 1e-9)
        self.assertGreater(r.differential_excess, 0)
        self.assertEqual(len(r.D), 60)
        # on the model with no run clipped, the closed form is exact
        for e, x in zip(r.excess, r.exact):
            self.assertAlmostEqual(e, x, delta=1e-9)
        with self.assertRaises(amq.InvalidError):
            lsm.robustness(draws=1)
        with self.assertRaises(amq.InvalidError):
            lsm.robustness(scale=(0.3, 0.1))
        with self.assertRaises(TypeError):
            lsm.robustness(scale=0.1)  # type: ignore[arg-type]

    def test_drift_and_frontier(self):
        runs = lsm.drift_sweep(0.01, 1.2, 4, steps=300, warmup=30)
        self.assertEqual(len(runs), 4)
        for d in runs:
            self.assertLessEqual(d.c_oracle, d.c_uniform)
            self.assertGreaterEqual(d.V, 0)
            self.assertAlmostEqual(d.rstar, math.sqrt(2 * d.G), delta=1e-12)
        # more drift leaves more of the benefit behind
        vs = [d.V for d in runs]
        self.assertEqual(vs, sorted(vs))
        f = lsm.frontier(runs)
        self.assertGreater(f.rstar, 0)
        g = lsm.frontier(list(reversed(runs)))  # any order
        for a, b in zip(dataclasses.astuple(f), dataclasses.astuple(g)):
            if math.isnan(a):
                self.assertTrue(math.isnan(b))
            else:
                self.assertAlmostEqual(a, b, delta=1e-12 * (1 + abs(a)))
        linear = lsm.drift(0.05, steps=300, warmup=30, kind="linear")
        self.assertNotEqual(linear, lsm.drift(0.05, steps=300, warmup=30))
        with self.assertRaises(ValueError):
            lsm.drift(0.1, kind="jump")
        with self.assertRaises(amq.InvalidError):
            lsm.drift(0.1, steps=10, warmup=10)
        with self.assertRaises(amq.InvalidError):
            lsm.drift(0.1, theta=1)
        with self.assertRaises(amq.InvalidError):
            lsm.frontier([])
        with self.assertRaises(TypeError):
            lsm.frontier([1.0])  # type: ignore[list-item]

    @unittest.skipUnless(HAVE_TOOL, "no amq tool")
    def test_same_numbers_as_the_tool(self):
        want = tool("simulate", "--law", "loglaw", "--json")
        got = lsm.loglaw()
        self.assertEqual(got.fit.slope, want["slope"])
        self.assertEqual(got.fit.r2, want["r2"])
        self.assertEqual(got.fit.n, want["runs_with_bits"])

        want = tool("simulate", "--law", "robustness", "--json", "--quick")
        got = lsm.robustness(draws=40)
        self.assertEqual(got.fit.slope, want["slope"])
        self.assertEqual(got.fit.r2, want["r2"])
        self.assertEqual(got.rel_err_half_law, want["rel_err_small"])
        self.assertEqual(got.common_excess, want["common_excess"])
        self.assertEqual(got.differential_excess,
                         want["differential_excess"])
        large = lsm.robustness(draws=40, scale=(0.02, 0.9), seed=2)
        self.assertEqual(large.fit.slope, want["slope_large"])

        want = tool("simulate", "--law", "frontier", "--json", "--quick",
                    "--drift", "linear")
        runs = lsm.drift_sweep(count=4, steps=300, warmup=30, kind="linear")
        self.assertEqual([{"sigma": d.sigma, "r": d.r, "V": d.V, "G": d.G}
                          for d in runs], want["points"])
        f = lsm.frontier(runs)
        self.assertEqual(f.rstar, want["rstar"])
        self.assertEqual(f.quad_k, want["quad_k"])
        self.assertEqual(f.small_k, want["small_k"])
        self.assertEqual(f.r_coarse / f.rstar, want["coarse_over_rstar"])

    def test_measure(self):
        for spec, b in (("bloom", 10), ("ribbon", 7), ("fuse", 9),
                        ("cuckoo", 12)):
            m = lsm.measure(spec, b, 20000, 200000, seed=3)
            self.assertEqual(m.pick, alloc.Curve(spec).at(b))
            self.assertGreater(m.bits_actual, 0)
            sd = math.sqrt(m.pick.fpr * (1 - m.pick.fpr) / m.queries)
            self.assertLess(abs(m.fpr - m.pick.fpr),
                            6 * sd + 0.15 * m.pick.fpr, spec)
        none = lsm.measure("bloom", 0, 100, 1000)
        self.assertEqual(none.pick.spec, "")
        self.assertEqual((none.bits_actual, none.false_positives), (0, 1000))
        with self.assertRaises(amq.UnsupportedError):
            lsm.measure("model", 8, 100, 100)
        with self.assertRaises(amq.InvalidError):
            lsm.measure("bloom", 8, 0, 100)
        with self.assertRaises(amq.InvalidError):
            lsm.measure("bloom", 8, 100, -1)

    def test_fit_line(self):
        f = lsm.fit_line([0, 1, 2, 3], [1, 3, 5, 7])
        self.assertAlmostEqual(f.slope, 2, delta=1e-12)
        self.assertAlmostEqual(f.intercept, 1, delta=1e-12)
        self.assertAlmostEqual(f.r2, 1, delta=1e-12)
        self.assertEqual(f.n, 4)
        o = lsm.fit_line([1, 2], [2, 4], through_origin=True)
        self.assertEqual((o.slope, o.intercept), (2, 0))
        w = lsm.fit_line([0, 1, 2], [0, 1, 10], [1, 1, 0])
        self.assertAlmostEqual(w.slope, 1, delta=1e-12)
        with self.assertRaises(ValueError):
            lsm.fit_line([1, 2, 3], [1, 2])
        with self.assertRaises(ValueError):
            lsm.fit_line([1, 2], [1, 2], [1])
        with self.assertRaises(amq.InvalidError):
            lsm.fit_line([1], [1])
        with self.assertRaises(amq.InvalidError):
            lsm.fit_line([2, 2, 2], [1, 2, 3])


if __name__ == "__main__":
    unittest.main()
