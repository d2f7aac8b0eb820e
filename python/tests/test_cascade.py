"""Tests of amq.Cascade, the learned Bloom filter cascade (unittest).

Run: AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \
     python3 -m unittest python/tests/test_cascade.py
"""

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
from amq._cascade import Audit, AuditReport, Cascade

try:
    import numpy as np
except ImportError:  # numpy is optional
    np = None

TOOL = os.environ.get("AMQ_TOOL", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "amq"))

# Small and quick, every choice pinned: 2^12 float weights, 64 bins, two
# levels of sbbf, and a learned cascade (a plain filter would be smaller
# for this set: see TestChoices).
FAST = dict(dim_bits=12, bins=64, levels=2, residual="sbbf", learned=True)


def hosts(seed=7):
    """Members: ad servers and every third CDN host; non-members: web hosts
    and the other CDN hosts (the model can tell the first kind apart, not
    the second). Ids are drawn at random so the training sample of
    non-members and the fresh ones come from one distribution."""
    r = random.Random(seed)
    ids = r.sample(range(1, 10 ** 7), 40000)
    members = ["ad%d.tracker.example" % i for i in ids[:1500]] + \
        ["cdn%d.example.net" % (3 * i) for i in ids[1500:2000]]
    pool = ["www%d.example.org" % i for i in ids[2000:26000]] + \
        ["cdn%d.example.net" % (3 * i + 1) for i in ids[26000:34000]]
    r.shuffle(pool)
    return members, pool[:8000], pool[8000:]


MEMBERS, NONMEMBERS, FRESH = hosts()


def shapes(seed=3):
    """Members and non-members of two shapes (ad servers, web hosts) that
    the model tells apart: a learned cascade far smaller than a plain
    filter."""
    r = random.Random(seed)
    ids = r.sample(range(1, 10 ** 7), 34000)
    members = ["ad%d.tracker.example" % i for i in ids[:10000]]
    pool = ["www%d.example.org" % i for i in ids[10000:]]
    return members, pool[:20000], pool[20000:]


SHAPES = shapes()


def slack(bound, n):
    """Four standard deviations of a rate `bound` measured on n keys."""
    return 4 * math.sqrt(bound * (1 - bound) / n) + 1.0 / n


class CascadeCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, **FAST)

    def assertBoundHolds(self, c, fresh=FRESH):
        hits = c.contains_many(fresh)
        rate = sum(hits) / len(fresh)
        self.assertLessEqual(rate, c.fpr_bound + slack(c.fpr_bound,
                                                       len(fresh)))
        return rate


class TestTraining(CascadeCase):
    def test_no_false_negatives_and_bound(self):
        c = self.c
        self.assertTrue(all(c.contains_many(MEMBERS)))
        self.assertTrue(all(k in c for k in MEMBERS))
        self.assertTrue(all(k.encode() in c for k in MEMBERS[:50]))
        self.assertLessEqual(c.fpr_bound, 0.02)
        self.assertLessEqual(c.fpr_estimate, c.fpr_bound)
        rate = self.assertBoundHolds(c)
        self.assertGreater(rate, 0)  # the CDN hosts do get through
        self.assertEqual(c.kind, "cascade")
        self.assertEqual(c.members, len(MEMBERS))
        self.assertEqual(c.version, 1)
        # answers of the batch and of the loop agree
        self.assertEqual(c.contains_many(FRESH[:2000]),
                         [k in c for k in FRESH[:2000]])

    def test_kinds(self):
        for kind in ("lbf", "plbf", "sandwich"):
            with self.subTest(kind=kind):
                levels = None if kind in ("lbf", "sandwich") else 2
                c = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, kind=kind,
                            dim_bits=12, bins=32, levels=levels)
                self.assertEqual(c.kind, kind)
                self.assertTrue(all(c.contains_many(MEMBERS)))
                self.assertLessEqual(c.fpr_bound, 0.02)
                self.assertBoundHolds(c)
                if kind == "lbf":
                    self.assertEqual(c.info()["filters"], 1)

    def test_memory_target(self):
        c = Cascade(MEMBERS, NONMEMBERS, bits_per_key=24, dim_bits=10,
                    bins=32, levels=2, quantize=True, learned=True)
        self.assertLessEqual(c.bits_per_key, 24 + 1e-9)
        self.assertEqual(c.info()["target_bits_per_key"], 24)
        self.assertTrue(all(c.contains_many(MEMBERS)))
        self.assertBoundHolds(c)

    def test_reject_tail(self):
        c = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, tail="reject", delta=0.05,
                    **FAST)
        missed = 1 - sum(c.contains_many(MEMBERS)) / len(MEMBERS)
        self.assertLessEqual(missed, 0.05)
        self.assertGreater(missed, 0)
        self.assertLessEqual(c.info()["tail_fnr"], 0.05)
        self.assertAlmostEqual(missed, c.info()["tail_fnr"], delta=1e-9)

    def test_deterministic(self):
        again = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, **FAST)
        self.assertEqual(again.to_bytes(), self.c.to_bytes())
        other = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, seed=5, **FAST)
        self.assertNotEqual(other.model_id, self.c.model_id)

    def test_scores(self):
        c = self.c
        s = c.scores(MEMBERS[:100])
        self.assertEqual(s, [c.score(k) for k in MEMBERS[:100]])
        self.assertGreater(sum(s) / 100, sum(c.scores(FRESH[:100])) / 100)
        p = [c.probability(x) for x in sorted(s)]
        self.assertEqual(p, sorted(p))  # calibration is monotone
        self.assertTrue(all(0 <= x <= 1 for x in p))
        self.assertEqual(c.probability(-math.inf), 0.0)
        with self.assertRaises(TypeError):
            c.probability("1")
        bins = [c.bin(x) for x in sorted(s)]
        self.assertEqual(bins, sorted(bins))
        self.assertTrue(all(0 <= b < 64 for b in bins))

    def test_int_keys_are_their_8_bytes(self):
        ints = list(range(1, 3001))
        c = Cascade(ints[:1000], ints[1000:], fpr=0.1, **FAST)
        self.assertTrue(all(c.contains_many(ints[:1000])))
        self.assertEqual([k in c for k in range(5000, 5100)],
                         [k.to_bytes(8, "little") in c
                          for k in range(5000, 5100)])


class TestErrors(CascadeCase):
    def test_bad_training(self):
        with self.assertRaisesRegex(amq.InvalidError, "3 of the"):
            Cascade(MEMBERS, NONMEMBERS + MEMBERS[:3], fpr=0.02, **FAST)
        with self.assertRaises(amq.InvalidError):
            Cascade([], NONMEMBERS, fpr=0.02)
        with self.assertRaises(amq.InvalidError):
            Cascade(MEMBERS, NONMEMBERS[:2], fpr=0.02)
        with self.assertRaises(amq.InvalidError):  # no target
            Cascade(MEMBERS, NONMEMBERS, **FAST)
        with self.assertRaises(amq.InvalidError):  # two targets
            Cascade(MEMBERS, NONMEMBERS, fpr=0.01, bits_per_key=8, **FAST)
        with self.assertRaises(amq.FullError):  # not certifiable
            Cascade(MEMBERS, NONMEMBERS, fpr=1e-9, **FAST)
        with self.assertRaises(amq.FullError):  # smaller than the model
            Cascade(MEMBERS, NONMEMBERS, bits_per_key=2, **FAST)
        with self.assertRaises(amq.SpecError):
            Cascade(MEMBERS, NONMEMBERS, fpr=0.02,
                    **dict(FAST, residual="nope"))
        with self.assertRaisesRegex(amq.InvalidError, "one backup"):
            Cascade(MEMBERS, NONMEMBERS, fpr=0.02, kind="lbf", levels=2)

    def test_bad_options(self):
        bad = [dict(kind="bloom"), dict(partition="best"), dict(tail="x"),
               dict(calibration="sigmoid"), dict(dim_bits=7),
               dict(dim_bits=2 ** 32 + 16), dict(bins=-1), dict(bins=4),
               dict(levels=0), dict(levels=17), dict(eta=float("nan")),
               dict(aux_fpr=float("nan")), dict(holdout=1.5),
               dict(fpr=float("inf")), dict(fpr=-0.1), dict(seed=-1),
               dict(member_weight=0), dict(worst_case=0),
               dict(worst_case=1), dict(worst_case=0.01),  # <= fpr
               dict(worst_case=0.1, kind="plbf")]
        for kw in bad:
            with self.subTest(kw=kw):
                args = dict(fpr=0.02, **FAST)
                args.update(kw)
                with self.assertRaises(amq.InvalidError):
                    Cascade(MEMBERS, NONMEMBERS, **args)
        for kw in [dict(fpr="0.01"), dict(bins=64.0), dict(kind=1),
                   dict(quantize=1), dict(residual=b"sbbf"),
                   dict(learned=None), dict(worst_case="0.1")]:
            with self.subTest(kw=kw):
                args = dict(fpr=0.02, **FAST)
                args.update(kw)
                with self.assertRaises(TypeError):
                    Cascade(MEMBERS, NONMEMBERS, **args)
        with self.assertRaises(TypeError):  # one key, not a collection
            Cascade("ad1.tracker.example", NONMEMBERS, fpr=0.02)
        with self.assertRaises(TypeError):
            self.c.contains_many("ad1.tracker.example")
        with self.assertRaises(TypeError):
            1.5 in self.c

    def test_closed(self):
        c = self.c.copy()
        c.close()
        c.close()
        self.assertTrue(c.closed)
        for use in (lambda: "x" in c, c.to_bytes, lambda: c.fpr_bound,
                    c.info, c.describe, lambda: c.contains_many(["x"]),
                    lambda: c.add("x"), lambda: c.audit(FRESH[:10]),
                    lambda: pickle.dumps(c)):
            with self.assertRaises(amq.ClosedError):
                use()
        self.assertEqual(repr(c), "<amq.Cascade closed>")


class TestFrames(CascadeCase):
    def test_round_trips(self):
        c = self.c
        frame = c.to_bytes()
        self.assertEqual(bytes(c), frame)
        self.assertEqual(len(frame), c.size_bytes)
        probe = MEMBERS[:500] + FRESH[:3000]
        want = c.contains_many(probe)
        copies = [Cascade.from_bytes(frame),
                  Cascade.from_bytes(bytearray(frame)),
                  Cascade.from_bytes(memoryview(frame)),
                  pickle.loads(pickle.dumps(c)), copy.copy(c),
                  copy.deepcopy(c), c.copy()]
        for d in copies:
            self.assertIsInstance(d, Cascade)
            self.assertIsNot(d, c)
            self.assertEqual(d.to_bytes(), frame)
            self.assertEqual(d.contains_many(probe), want)
            self.assertEqual(d.fpr_bound, c.fpr_bound)
            self.assertEqual(d.info()["build_seconds"], 0)
        self.assertGreater(c.info()["build_seconds"], 0)
        copies[0].close()  # each copy owns its own cascade
        self.assertEqual(c.contains_many(probe), want)

    def test_copies_are_independent(self):
        c = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, aux_capacity=10, **FAST)
        d = copy.deepcopy(c)
        d.add("new.example.com")
        self.assertIn("new.example.com", d)
        self.assertEqual(d.info()["added"], 1)
        self.assertEqual(c.info()["added"], 0)
        self.assertNotEqual(c.to_bytes(), d.to_bytes())

    def test_save_load(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "c.amq")
            self.c.save(path)
            d = Cascade.load(path)
            self.assertEqual(d.to_bytes(), self.c.to_bytes())
            with open(path, "rb") as f:
                self.assertEqual(f.read(), self.c.to_bytes())
            with self.assertRaises(amq.FileError):
                Cascade.load(os.path.join(tmp, "missing.amq"))
            with self.assertRaises(amq.FileError):
                self.c.save(os.path.join(tmp, "no", "such", "dir"))

    def test_corrupt(self):
        frame = self.c.to_bytes()
        with self.assertRaises(amq.CorruptError):
            Cascade.from_bytes(b"")
        with self.assertRaises(amq.CorruptError):
            Cascade.from_bytes(frame[:-1])
        with self.assertRaises(amq.CorruptError):
            Cascade.from_bytes(frame[:64])
        for at in (80, len(frame) // 2, len(frame) - 1):
            bad = bytearray(frame)
            bad[at] ^= 0x10
            with self.assertRaises(amq.ChecksumError):
                Cascade.from_bytes(bytes(bad))
        with self.assertRaises(TypeError):
            Cascade.from_bytes(5)
        with self.assertRaises(TypeError):
            Cascade.from_bytes("frame")

    def test_other_kinds(self):
        clock = amq.BloomClock(64, 3)
        with self.assertRaises(amq.KindError):
            Cascade.from_bytes(clock.to_bytes())
        with self.assertRaises(amq.KindError):
            amq.Filter.from_bytes(self.c.to_bytes())

    def test_filter_frames_are_plain_cascades(self):
        f = amq.Filter("blocked", 100, 0.01)
        f.add_many(["k%d" % i for i in range(100)])
        probe = ["k%d" % i for i in range(3000)]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "f.amq")
            f.save(path)
            loaded = [Cascade.from_bytes(f.to_bytes()), Cascade.load(path)]
        for c in loaded:
            self.assertTrue(c.plain)
            self.assertEqual(c.to_bytes(), f.to_bytes())
            self.assertEqual(c.contains_many(probe), f.contains_many(probe))
            self.assertEqual(c.members, 100)
            self.assertEqual(c.fpr_bound, f.fpr_bound)
            self.assertEqual(c.info()["plain_bytes"], 0)  # none compared
            self.assertIn("loaded as one", c.describe())


class TestUpdates(CascadeCase):
    def test_add_and_remove(self):
        with self.assertRaises(amq.FullError):  # no insert buffer
            self.c.copy().add("new.example.com")
        c = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, aux_capacity=5, **FAST)
        before = c.fpr_bound
        added = ["new%d.example.com" % i for i in range(5)]
        for k in added:
            c.add(k)
        self.assertTrue(all(c.contains_many(added + MEMBERS)))
        self.assertGreaterEqual(c.fpr_bound, before)
        with self.assertRaises(amq.FullError):
            c.add("one.too.many")
        c.remove(MEMBERS[0])
        c.remove(added[0], origin="added")
        self.assertEqual(c.info()["removed"], 2)
        with self.assertRaises(amq.InvalidError):
            c.remove(MEMBERS[1], origin="elsewhere")

    def test_accept_bin(self):
        c = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, headroom=4, **FAST)
        info = c.info()
        top = info["max_accept_bin"]
        with self.assertRaises(amq.InvalidError):
            c.set_accept_bin(top + 1)
        before = c.fpr_bound
        c.set_accept_bin(top)
        self.assertLessEqual(c.fpr_bound, before)
        c.set_accept_bin(info["accept_bin"] - 3)
        self.assertGreater(c.fpr_bound, before)
        self.assertTrue(all(c.contains_many(MEMBERS)))

    def test_rebuild(self):
        c = self.c
        members = MEMBERS[:1500] + ["ad%d.tracker.example" % i
                                    for i in range(1, 300)]
        d = c.rebuild(members, FRESH[:4000], FRESH[4000:8000])
        self.assertEqual(d.version, c.version + 1)
        self.assertEqual(d.model_id, c.model_id)
        self.assertTrue(all(d.contains_many(members)))
        self.assertBoundHolds(d, FRESH[8000:])
        with self.assertRaises(amq.InvalidError):
            c.rebuild(members, [], FRESH[:10])


class TestAudit(CascadeCase):
    def test_audit_fresh_negatives(self):
        r = self.c.audit(FRESH, MEMBERS)
        self.assertIsInstance(r, AuditReport)
        self.assertEqual(r.queries, len(FRESH) + len(MEMBERS))
        self.assertEqual(r.sampled, r.queries)
        self.assertEqual((r.members, r.nonmembers),
                         (len(MEMBERS), len(FRESH)))
        self.assertEqual(r.false_negatives, 0)
        self.assertEqual(r.false_positives, sum(self.c.contains_many(FRESH)))
        self.assertAlmostEqual(r.fpr_hat, r.false_positives / len(FRESH))
        self.assertLessEqual(r.fpr_lower, r.fpr_hat)
        self.assertLessEqual(r.fpr_hat, r.fpr_upper)
        self.assertEqual(r.bound_build, self.c.fpr_bound)
        self.assertLessEqual(r.fpr_lower, r.bound_build)
        self.assertFalse(r.violated)
        self.assertNotEqual(r.verdict, "violated")
        self.assertEqual(len(r.levels), len(self.c.info()["levels"]))
        self.assertEqual(sum(lv.hits for lv in r.levels) <= len(FRESH), True)

    def test_sampling_and_streaming(self):
        half = self.c.audit(FRESH, MEMBERS, rate=0.5, seed=3)
        self.assertAlmostEqual(half.sampled / half.queries, 0.5, delta=0.02)
        with self.c.auditor(rate=0.5, seed=3) as a:
            self.assertIsInstance(a, Audit)
            i = j = 0
            m, n = len(MEMBERS), len(FRESH)
            while i < m or j < n:  # the interleaving audit() uses
                member = j >= n or (i < m and i * n <= j * m)
                key = MEMBERS[i] if member else FRESH[j]
                i, j = (i + 1, j) if member else (i, j + 1)
                a.observe(key, member)
            self.assertEqual(a.report(), half)
        with self.assertRaises(amq.ClosedError):
            a.report()
        with self.assertRaises(amq.InvalidError):
            self.c.auditor(rate=0)
        with self.assertRaises(TypeError):
            pickle.dumps(self.c.auditor())

    def test_shifted_queries_are_flagged(self):
        # only the CDN hosts the model cannot tell apart
        shifted = ["cdn%d.example.net" % (3 * i + 1)
                   for i in range(10 ** 6, 10 ** 6 + 6000)]
        r = self.c.audit(shifted)
        self.assertTrue(r.violated)
        self.assertEqual(r.verdict, "violated")
        self.assertGreater(r.fpr_lower, r.bound_build)

    def test_cascade_closed_under_an_audit(self):
        c = self.c.copy()
        a = c.auditor()
        a.observe(FRESH[0], False)
        c.close()
        with self.assertRaises(amq.ClosedError):
            a.observe(FRESH[1], False)
        with self.assertRaises(amq.ClosedError):
            a.report()
        a.close()  # frees the audit, then the cascade it kept


class TestChoices(CascadeCase):
    """What training chooses by itself, and what a keyword pins."""

    @classmethod
    def setUpClass(cls):
        members, sample, _ = SHAPES
        cls.c = Cascade(members, sample, fpr=0.01)

    def test_small_set_is_a_plain_filter(self):
        members = MEMBERS[::5]
        c = Cascade(members, NONMEMBERS, fpr=0.02)
        self.assertTrue(c.plain)
        info = c.info()
        self.assertTrue(info["plain"])
        self.assertEqual(info["model_bytes"], 0)
        self.assertEqual(info["plain_bytes"], c.size_bytes)
        self.assertIn("plain filter", repr(c))
        self.assertIn("chose           a plain filter", c.describe())
        self.assertTrue(all(c.contains_many(members)))
        self.assertLessEqual(c.fpr_bound, 0.02)
        self.assertEqual(c.worst_case_bound, c.fpr_bound)  # any queries
        self.assertBoundHolds(c)
        # its frame is the filter's: amq.Filter reads it, same answers
        f = amq.Filter.from_bytes(c.to_bytes())
        probe = members + FRESH
        self.assertEqual(c.contains_many(probe), f.contains_many(probe))
        self.assertEqual([k in c for k in FRESH[:500]],
                         f.contains_many(FRESH[:500]))
        self.assertEqual(f.fpr_bound, c.fpr_bound)
        self.assertEqual(f.to_bytes(), c.to_bytes())
        d = Cascade.from_bytes(c.to_bytes())
        self.assertTrue(d.plain)
        self.assertEqual(d.contains_many(probe), f.contains_many(probe))
        # no model: every key scores 0.0, nothing to calibrate or fall
        # back to
        self.assertEqual(c.scores(probe[:10]), [0.0] * 10)
        self.assertEqual(c.score(probe[0]), 0.0)
        self.assertEqual(c.bin(c.score(probe[0])), 0)
        if np is not None:
            self.assertEqual(c.scores(np.array(probe)).tolist(),
                             [0.0] * len(probe))
        with self.assertRaises(amq.UnsupportedError):
            c.probability(0.0)
        with self.assertRaises(TypeError):
            c.probability("0")
        with self.assertRaises(amq.UnsupportedError):
            c.fallback = True
        c.fallback = False
        self.assertFalse(c.fallback)
        # audits and rebuilds work on it
        r = c.audit(FRESH, members)
        self.assertEqual(r.false_negatives, 0)
        self.assertEqual(r.bound_build, c.fpr_bound)
        e = c.rebuild(members[:200], FRESH[:2000], FRESH[2000:4000])
        self.assertTrue(e.plain)
        self.assertEqual(e.version, 2)
        self.assertTrue(all(e.contains_many(members[:200])))
        # learned=True: always a learned cascade, larger here
        g = Cascade(members, NONMEMBERS, fpr=0.02, learned=True, bins=32)
        self.assertFalse(g.plain)
        self.assertGreater(g.size_bytes, c.size_bytes)
        self.assertEqual(g.info()["plain_bytes"], 0)  # none compared

    def test_learnable_set_is_learned(self):
        members, _, fresh = SHAPES
        c = self.c
        self.assertFalse(c.plain)
        info = c.info()
        self.assertFalse(info["plain"])
        self.assertGreater(info["model_bytes"], 0)
        self.assertGreater(info["plain_bytes"], 0)
        self.assertLess(c.size_bytes, info["plain_bytes"])
        self.assertIn("learned, ", c.describe())
        self.assertTrue(all(c.contains_many(members)))
        self.assertLessEqual(c.fpr_bound, 0.01)
        self.assertBoundHolds(c, fresh)
        self.assertEqual(c.learned_bound, c.fpr_bound)
        self.assertEqual(c.worst_case_bound, 1.0)  # no initial filter
        with self.assertRaises(amq.UnsupportedError):
            c.fallback = True
        for lv in info["levels"]:  # a static residual, when there is one
            self.assertIn(lv["spec"].split(":")[0],
                          ("", "ribbon", "fuse8", "xor8"))

    def test_worst_case_and_fallback(self):
        members, sample, fresh = SHAPES
        c = Cascade(members, sample, fpr=0.01, worst_case=0.1, bins=32,
                    learned=True)
        self.assertFalse(c.plain)
        self.assertLessEqual(c.worst_case_bound, 0.1)
        self.assertLessEqual(c.fpr_bound, 0.01)
        self.assertEqual(c.learned_bound, c.fpr_bound)
        self.assertGreater(c.info()["front_bytes"], 0)
        self.assertFalse(c.fallback)
        learned = sum(c.contains_many(fresh))
        c.fallback = True
        self.assertTrue(c.fallback)
        self.assertEqual(c.fpr_bound, c.worst_case_bound)
        info = c.info()
        self.assertTrue(info["fallback"])
        self.assertEqual(info["fpr_bound"], info["worst_case_bound"])
        self.assertLessEqual(info["learned_bound"], 0.01)
        self.assertIn("fallback        on", c.describe())
        self.assertTrue(all(c.contains_many(members)))
        rate = self.assertBoundHolds(c, fresh)
        # the answers stay the learned route's: only the promise changes
        self.assertEqual(round(rate * len(fresh)), learned)
        d = Cascade.from_bytes(c.to_bytes())  # the frame keeps it
        self.assertTrue(d.fallback)
        self.assertEqual(d.contains_many(fresh), c.contains_many(fresh))
        with self.assertRaises(TypeError):
            c.fallback = 1
        c.fallback = False
        self.assertEqual(c.fpr_bound, c.learned_bound)
        self.assertEqual(sum(c.contains_many(fresh)), learned)

    def test_pins_are_kept(self):
        c = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, residual="blocked",
                    dim_bits=10, quantize=True, bins=64, learned=True)
        info = c.info()
        specs = [lv["spec"] for lv in info["levels"] if lv["spec"]]
        self.assertTrue(specs)
        for spec in specs:
            self.assertTrue(spec.startswith("blocked:"), spec)
        # int8 weights: 2^10 bytes, and a few for the calibration
        self.assertGreaterEqual(info["model_bytes"], 2 ** 10)
        self.assertLess(info["model_bytes"], 2 ** 10 + 256)
        d = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, dim_bits=10, bins=32,
                    learned=True)  # float weights, the C default
        info = d.info()
        self.assertGreaterEqual(info["model_bytes"], 4 * 2 ** 10)
        self.assertLess(info["model_bytes"], 4 * 2 ** 10 + 256)
        self.assertEqual(info["bins"], 32)
        # the baselines choose nothing: None is the C default
        lbf = Cascade(MEMBERS, NONMEMBERS, fpr=0.02, kind="lbf")
        info = lbf.info()
        self.assertEqual(info["bins"], 256)
        self.assertGreaterEqual(info["model_bytes"], 4 * 2 ** 16)
        self.assertTrue(info["levels"][0]["spec"].startswith("sbbf:"))
        self.assertEqual(info["plain_bytes"], 0)


@unittest.skipUnless(np, "numpy is not installed")
class TestNumpy(CascadeCase):
    def test_arrays(self):
        c = self.c
        probe = MEMBERS[:300] + FRESH[:3000]
        want = c.contains_many(probe)
        for arr in (np.array(probe), np.array([k.encode() for k in probe]),
                    np.array(probe, dtype=object)):
            with self.subTest(dtype=arr.dtype):
                got = c.contains_many(arr)
                self.assertIsInstance(got, np.ndarray)
                self.assertEqual(got.dtype, bool)
                self.assertEqual(got.tolist(), want)
        s = c.scores(np.array(probe))
        self.assertEqual(s.dtype, np.float64)
        self.assertEqual(s.tolist(), c.scores(probe))
        self.assertEqual(c.contains_many(np.array([], dtype="U1")).size, 0)
        with self.assertRaises(ValueError):
            c.contains_many(np.array([probe[:2]]))

    def test_train_from_arrays(self):
        c = Cascade(np.array(MEMBERS), np.array(NONMEMBERS), fpr=0.02, **FAST)
        self.assertEqual(c.to_bytes(), self.c.to_bytes())
        ints = np.arange(1, 3001, dtype=np.int64)
        d = Cascade(ints[:1000], ints[1000:], fpr=0.1, **FAST)
        e = Cascade(list(range(1, 1001)), list(range(1001, 3001)), fpr=0.1,
                    **FAST)
        self.assertEqual(d.to_bytes(), e.to_bytes())
        self.assertTrue(d.contains_many(ints[:1000]).all())

    def test_chunks(self):
        from amq._keys import CHUNK
        probe = (FRESH * 3)[:CHUNK + 5]
        want = self.c.contains_many(probe)
        self.assertEqual(len(want), CHUNK + 5)
        self.assertEqual(want[-500:], [k in self.c for k in probe[-500:]])
        self.assertEqual(self.c.contains_many(np.array(probe)).tolist(), want)
        self.assertEqual(self.c.contains_many(iter(probe)), want)

    def test_bytes_with_nuls(self):
        keys = [b"a\x00b", b"", b"xyz", b"\x00q"]
        arr = np.array(keys)
        self.assertEqual(self.c.contains_many(arr).tolist(),
                         self.c.contains_many(keys))


@unittest.skipUnless(os.access(TOOL, os.X_OK), "the amq tool is not built")
class TestTool(CascadeCase):
    def run_tool(self, *args):
        return subprocess.run([TOOL, "cascade"] + list(args),
                              capture_output=True, text=True, timeout=60)

    def test_python_file_in_the_tool(self):
        probe = MEMBERS[:200] + FRESH[:2000]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "c.amq")
            keys = os.path.join(tmp, "keys.txt")
            self.c.save(path)
            with open(keys, "w") as f:
                f.write("\n".join(probe) + "\n")
            out = self.run_tool("query", path, keys)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout.split(),
                             [k for k in probe if k in self.c])
            out = self.run_tool("info", path)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout, self.c.describe())
            out = self.run_tool("info", "--json", path)
            tool = json.loads(out.stdout)
            mine = self.c.info()
            for k in ("method", "version", "members", "fpr_bound",
                      "fpr_estimate", "target_fpr", "bits_per_key",
                      "structure_bits_per_key", "file_bytes", "p0",
                      "p0_upper", "model_bytes", "residual_bytes",
                      "learned_bound", "worst_case_bound", "fallback",
                      "plain", "plain_bytes"):
                self.assertEqual(tool[k], mine[k], k)
            self.assertEqual([lv["n"] for lv in tool["levels"]],
                             [lv["n"] for lv in mine["levels"]])

    def test_tool_file_in_python(self):
        with tempfile.TemporaryDirectory() as tmp:
            m, n, c = (os.path.join(tmp, x) for x in ("m", "n", "c.amq"))
            with open(m, "w") as f:
                f.write("\n".join(MEMBERS) + "\n")
            with open(n, "w") as f:
                f.write("\n".join(NONMEMBERS) + "\n")
            out = self.run_tool("train", "-q", "--members", m,
                                "--nonmembers", n, "--fpr", "0.02",
                                "--dim-bits", "12", "--bins", "64", "-L",
                                "2", "--residual", "sbbf", "--learned",
                                "-o", c)
            self.assertEqual(out.returncode, 0, out.stderr)
            d = Cascade.load(c)
            # the same data and options train the same cascade
            self.assertEqual(d.to_bytes(), self.c.to_bytes())
            self.assertTrue(all(d.contains_many(MEMBERS)))
            with open(n, "w") as f:
                f.write("\n".join(FRESH) + "\n")
            out = self.run_tool("audit", c, "--members", m, "--nonmembers",
                                n, "--rate", "0.5", "--seed", "9", "--json")
            self.assertEqual(out.returncode, 0, out.stderr)
            tool = json.loads(out.stdout)
            r = d.audit(FRESH, MEMBERS, rate=0.5, seed=9)
            self.assertEqual(tool["verdict"], r.verdict)
            for k, v in (("sampled", r.sampled), ("nonmembers", r.nonmembers),
                         ("false_negatives", r.false_negatives),
                         ("fpr", r.fpr_hat), ("bound", r.bound_build),
                         ("audit_bound", r.bound_audit),
                         ("drift_chi2", r.drift_chi2)):
                self.assertEqual(tool[k], v, k)


if __name__ == "__main__":
    unittest.main()
