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

# Small and quick: 2^12 weights, 64 bins, two levels.
FAST = dict(dim_bits=12, bins=64, levels=2)


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
                    bins=32, levels=2, quantize=True)
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
            Cascade(MEMBERS, NONMEMBERS, fpr=0.02, residual="nope", **FAST)
        with self.assertRaisesRegex(amq.InvalidError, "one backup"):
            Cascade(MEMBERS, NONMEMBERS, fpr=0.02, kind="lbf", levels=2)

    def test_bad_options(self):
        bad = [dict(kind="bloom"), dict(partition="best"), dict(tail="x"),
               dict(calibration="sigmoid"), dict(dim_bits=9),
               dict(dim_bits=2 ** 32 + 16), dict(bins=-1), dict(bins=4),
               dict(levels=0), dict(levels=17), dict(eta=float("nan")),
               dict(aux_fpr=float("nan")), dict(holdout=1.5),
               dict(fpr=float("inf")), dict(fpr=-0.1), dict(seed=-1),
               dict(member_weight=0)]
        for kw in bad:
            with self.subTest(kw=kw):
                args = dict(fpr=0.02, **FAST)
                args.update(kw)
                with self.assertRaises(amq.InvalidError):
                    Cascade(MEMBERS, NONMEMBERS, **args)
        for kw in [dict(fpr="0.01"), dict(bins=64.0), dict(kind=1),
                   dict(quantize=1), dict(residual=b"sbbf")]:
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
        f = amq.Filter("blocked", 100, 0.01)
        with self.assertRaisesRegex(amq.KindError, "blocked"):
            Cascade.from_bytes(f.to_bytes())
        with self.assertRaises(amq.KindError):
            amq.Filter.from_bytes(self.c.to_bytes())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "f.amq")
            f.save(path)
            with self.assertRaises(amq.KindError):
                Cascade.load(path)


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
                      "p0_upper", "model_bytes", "residual_bytes"):
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
                                "2", "-o", c)
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
