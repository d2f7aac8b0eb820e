"""Tests of amq.BloomClock and amq.VectorClock (amq/clock.h).

Run: AMQ_LIBRARY=build/libamq.so PYTHONPATH=python \
     python3 -m unittest python/tests/test_clock.py
"""

import copy
import math
import pickle
import random
import unittest

import amq
from amq._clock import (CLOCK_BLOOM, CLOCK_VECTOR_DENSE, CLOCK_VECTOR_SPARSE,
                        BloomClock, Clock, Order, Verdict, VectorClock)

try:
    import numpy
except ImportError:  # NumPy is optional
    numpy = None


def simulate(n_nodes, events, m, k, seed):
    """A few nodes exchanging messages: each step a random node has an
    internal event or sends its timestamp to a random peer (the send and
    the receive are events; delivery is immediate). Returns, for every
    event in order, (Bloom timestamp, vector timestamp, the set of events
    in its causal past, itself included): the exact truth."""
    rng = random.Random(seed)
    proto = BloomClock(m, k)
    bloom = [proto.copy() for _ in range(n_nodes)]
    vec = [VectorClock(100 + i) for i in range(n_nodes)]
    known = [set() for _ in range(n_nodes)]
    rec = []

    def event(i):
        eid = len(rec)
        bloom[i].tick(b"event-%d" % eid)
        vec[i].tick()
        known[i].add(eid)
        rec.append((bloom[i].copy(), vec[i].copy(), frozenset(known[i])))

    while len(rec) < events:
        i = rng.randrange(n_nodes)
        if rng.random() < 0.5:
            event(i)
            continue
        j = rng.choice([x for x in range(n_nodes) if x != i])
        event(i)
        bloom[j].merge(bloom[i])
        vec[j].merge(vec[i])
        known[j] |= known[i]
        event(j)
    return rec


class TestSimulatedSystem(unittest.TestCase):
    def test_vector_exact_bloom_no_false_negatives(self):
        for m, k, nodes in [(64, 3, 5), (128, 3, 8)]:
            with self.subTest(m=m, k=k, nodes=nodes):
                rec = simulate(nodes, 200, m, k, seed=1)
                concurrent = false = 0
                claimed = 0.0
                for j in range(len(rec)):
                    bj, vj, past_j = rec[j]
                    for i in range(j):
                        bi, vi, _ = rec[i]
                        truth = i in past_j  # i is earlier: before or not
                        want = Order.BEFORE if truth else Order.CONCURRENT
                        back = Order.AFTER if truth else Order.CONCURRENT
                        self.assertIs(vi.compare(vj).order, want)
                        self.assertIs(vj.compare(vi).order, back)
                        self.assertEqual(vi < vj, truth)
                        self.assertEqual(vi.happened_before(vj), truth)
                        v = bi.compare(bj)
                        if truth:  # never concurrent, after or equal
                            self.assertIs(v.order, Order.BEFORE, (i, j))
                            self.assertIs(bj.compare(bi).order, Order.AFTER)
                            continue
                        concurrent += 1
                        d = v.sum_high - v.sum_low
                        claim = BloomClock.fp_exact(m, k, d)
                        if v.order is not Order.CONCURRENT:
                            false += 1
                            self.assertEqual(v.probability, claim)
                        claimed += claim
                self.assertGreater(concurrent, 1000)
                rate, mean = false / concurrent, claimed / concurrent
                # The claim is exact for one private event and an upper
                # bound for more: the observed rate may not exceed the
                # mean claim by more than a loose binomial margin (pairs
                # of one run are not independent).
                sd = math.sqrt(mean * (1 - mean) / concurrent)
                self.assertLessEqual(rate, mean + 4.5 * sd + 0.01,
                                     (m, k, rate, mean))
                self.assertGreater(false, 0)  # the measurement measured

    def test_calibration_one_private_event(self):
        # A = X + one event, B = X + b events, concurrent by construction:
        # the claimed probability is exact under uniform hashing.
        rng = random.Random(7)
        m, k, trials = 64, 3, 3000
        for b in (4, 10):
            with self.subTest(b=b):
                hits = 0
                claim = BloomClock.fp_exact(m, k, (b - 1) * k)
                for _ in range(trials):
                    x = BloomClock(m, k)
                    for _ in range(rng.randrange(30)):
                        x.tick(rng.getrandbits(64))
                    a, bb = x.copy(), x
                    a.tick(rng.getrandbits(64))
                    for _ in range(b):
                        bb.tick(rng.getrandbits(64))
                    v = a.compare(bb)
                    self.assertIn(v.order, (Order.BEFORE, Order.CONCURRENT))
                    if v.order is Order.BEFORE:
                        hits += 1
                        self.assertEqual(v.probability, claim)
                        self.assertEqual(v.fp_exact, claim)
                        self.assertEqual(v.fp_paper, BloomClock.fp_paper(
                            m, a.sum, bb.sum))
                        self.assertTrue(v.ordered)
                rate = hits / trials
                sd = math.sqrt(claim * (1 - claim) / trials)
                self.assertLessEqual(abs(rate - claim), 4.5 * sd + 0.002,
                                     (b, rate, claim))


class TestBloomClock(unittest.TestCase):
    def test_tick_merge_compare(self):
        a = BloomClock(256, 4, history=8)
        b = a.copy()
        self.assertIs(a.compare(b).order, Order.EQUAL)
        a.tick("alice-1")
        self.assertIs(b.compare(a).order, Order.BEFORE)
        self.assertIs(a.compare(b).order, Order.AFTER)
        b.tick(b"bob-1")
        self.assertIs(a.compare(b).order, Order.CONCURRENT)
        self.assertTrue(a.concurrent_with(b))
        v = a.compare(b)
        self.assertEqual((v.probability, v.fp_paper), (0.0, 0.0))
        self.assertFalse(v.ordered)
        self.assertIs(b.merge(a), b)
        self.assertIs(a.compare(b).order, Order.BEFORE)
        self.assertTrue(a.happened_before(b))
        self.assertTrue(a.happened_before(b, threshold=0.01))
        self.assertFalse(a.happened_before(b, threshold=0.0))
        self.assertFalse(b.happened_before(a))
        self.assertEqual((a.m, a.k, len(a), a.history), (256, 4, 256, 8))
        self.assertEqual(a.kind, CLOCK_BLOOM)
        self.assertLessEqual(b.sum, 8.0)  # the two events may share cells
        self.assertEqual(sum(b.cells()), b.sum)
        self.assertEqual(b.cells()[5], b[5])
        self.assertEqual(b[-1], b[255])
        with self.assertRaises(IndexError):
            b[256]
        self.assertIn("m=256 k=4", repr(b))

    def test_event_keys(self):
        a, b = BloomClock(128, 3), BloomClock(128, 3)
        a.tick("é")
        b.tick("é".encode())
        self.assertIs(a.compare(b).order, Order.EQUAL)
        a.tick(12)
        b.tick((12).to_bytes(8, "little"))
        self.assertIs(a.compare(b).order, Order.EQUAL)
        a.tick_hash(2**64 - 1)
        self.assertEqual(a.sum, 9)
        for bad in (1.5, None, [1]):
            with self.assertRaises(TypeError):
                a.tick(bad)
        with self.assertRaises(amq.InvalidError):
            a.tick_hash(-1)
        self.assertEqual(a.sum, 9)

    @unittest.skipUnless(numpy, "numpy not installed")
    def test_numpy_scalars(self):
        a, b = BloomClock(128, 3), BloomClock(128, 3)
        a.tick(numpy.uint64(77))
        b.tick(77)
        self.assertIs(a.compare(b).order, Order.EQUAL)
        v = VectorClock(numpy.int64(3))
        self.assertEqual(v.node, 3)

    def test_merge_laws(self):
        rng = random.Random(3)
        c = [BloomClock(64, 3) for _ in range(3)]
        for x in c:
            for _ in range(20):
                x.tick(rng.getrandbits(64))
        ab = c[0].copy().merge(c[1])
        ba = c[1].copy().merge(c[0])
        self.assertEqual(ab.encode(), ba.encode())
        left = c[0].copy().merge(c[1]).merge(c[2])
        right = c[0].copy().merge(c[1].copy().merge(c[2]))
        self.assertEqual(left.to_bytes(), right.to_bytes())
        self.assertEqual(ab.copy().merge(ab).encode(), ab.encode())
        for x in c:
            self.assertIn(x.compare(left).order, (Order.BEFORE, Order.EQUAL))

    def test_widening_and_offset(self):
        a = BloomClock(8, 2)
        for _ in range(300):
            a.tick("same")
        self.assertEqual(a.cell_bits, 16)
        self.assertEqual(max(a.cells()), 300)
        b = BloomClock(1, 1)
        for i in range(5):
            b.tick(i)
        self.assertEqual((b.offset, b[0], b.cell_bits), (5, 5, 8))

    def test_history(self):
        local = BloomClock(64, 3, history=8)
        remote = local.copy()
        remote.tick("r1")
        remote.tick("r2")
        local.merge(remote)
        for i in range(5):
            local.tick("l%d" % i)
        self.assertEqual(local.history_len, 7)
        plain = local.compare(remote)
        hist = local.compare_history(remote)
        self.assertIs(plain.order, Order.AFTER)
        self.assertIs(hist.order, Order.AFTER)
        self.assertEqual(plain.history_age, 0)
        self.assertEqual(hist.history_age, 5)
        self.assertLess(hist.probability, plain.probability)
        self.assertTrue(local.history_explains("l4"))
        self.assertTrue(local.history_explains("l3", age=1))
        self.assertFalse(local.history_explains("l3"))
        # The step of age 5 merged two events in: not one local event.
        self.assertFalse(local.history_explains("r1", age=5))
        with self.assertRaises(amq.InvalidError):
            local.history_explains("x", age=6)
        self.assertEqual(BloomClock(64, 3).history_len, 0)
        self.assertEqual(BloomClock(64, 3, history=4).history_len, 1)

    def test_fp_helpers(self):
        # D = 0: k!/m^k.
        self.assertAlmostEqual(BloomClock.fp_exact(1024, 3, 0),
                               6 / 1024 ** 3, delta=1e-15)
        m, s_low, s_high = 64, 10.0, 40.0
        want = (1 - (1 - 1 / m) ** s_high) ** s_low
        self.assertAlmostEqual(BloomClock.fp_paper(m, s_low, s_high), want,
                               places=12)
        self.assertLess(BloomClock.fp_exact(64, 3, 3),
                        BloomClock.fp_exact(64, 3, 30))

    def test_wrong_arguments(self):
        for m, k, h in [(0, 1, 0), (64, 0, 0), (64, 65, 0), (4, 5, 0),
                        (2 ** 24 + 1, 3, 0), (64, 3, 65537), (-1, 3, 0),
                        (2 ** 32 + 64, 3, 0)]:
            with self.subTest(m=m, k=k, history=h):
                with self.assertRaises(amq.InvalidError):
                    BloomClock(m, k, h)
        with self.assertRaises(TypeError):
            BloomClock("64", 3)
        a = BloomClock(64, 3)
        for other in (BloomClock(128, 3), BloomClock(64, 4),
                      BloomClock(64, 3, seed=1), VectorClock(1)):
            with self.subTest(other=other):
                with self.assertRaises(amq.IncompatibleError):
                    a.merge(other)
                with self.assertRaises(amq.IncompatibleError):
                    a.compare(other)
        with self.assertRaises(TypeError):
            a.merge(amq.Filter("bloom", 100, 0.01))
        with self.assertRaises(TypeError):
            a.compare("a clock")
        self.assertEqual(a.sum, 0)

    def test_keyed(self):
        a = BloomClock(64, 3, keyed=True)
        self.assertTrue(a.keyed)
        self.assertFalse(BloomClock(64, 3).keyed)
        with self.assertRaises(amq.IncompatibleError):
            a.merge(BloomClock(64, 3, keyed=True))  # another secret key
        b = pickle.loads(pickle.dumps(a))
        a.tick("e")
        b.merge(a)
        self.assertIs(a.compare(b).order, Order.EQUAL)
        c = BloomClock(64, 3, keyed=True)
        with self.assertRaises(amq.IncompatibleError):
            c.decode(a.encode())


class TestVectorClock(unittest.TestCase):
    def test_sparse(self):
        a, b = VectorClock(1), VectorClock(2)
        self.assertEqual(a.kind, CLOCK_VECTOR_SPARSE)
        self.assertEqual((a.node, a.dense, len(a)), (1, False, 0))
        self.assertTrue(a == b)  # both empty
        a.tick()
        a.tick("ignored")
        self.assertEqual(a.counters(), {1: 2})
        self.assertTrue(b < a and b <= a and a > b and a >= b)
        self.assertFalse(a < a)
        self.assertTrue(a <= a and a == a.copy())
        b.tick()
        self.assertFalse(a < b or b < a or a == b)
        self.assertTrue(a != b)
        self.assertTrue(a.concurrent_with(b))
        b.merge(a)
        b.tick()
        self.assertEqual(b.counters(), {1: 2, 2: 2})
        self.assertEqual((b[1], b[2], b[99]), (2, 2, 0))
        self.assertIn(1, b)
        self.assertNotIn(99, b)
        v = a.compare(b)
        self.assertEqual((v.order, v.probability, v.fp_paper),
                         (Order.BEFORE, 0.0, 0.0))
        b.leave(1)  # the caller asserts node 1's events are stable
        self.assertEqual(b.counters(), {2: 2})
        with self.assertRaises(amq.InvalidError):
            b.leave(2)
        with self.assertRaises(TypeError):
            hash(a)
        self.assertEqual(repr(a), "<amq.VectorClock node=1 {1: 2}>")
        self.assertFalse(a == "x")
        with self.assertRaises(TypeError):
            a < 3

    def test_dense_membership(self):
        a = VectorClock(1, dense=True)
        b = VectorClock(2, dense=True)
        self.assertEqual(a.kind, CLOCK_VECTOR_DENSE)
        self.assertEqual(a.counters(), {1: 0})
        with self.assertRaises(amq.IncompatibleError):
            a.merge(b)
        with self.assertRaises(amq.IncompatibleError):
            a.compare(b)
        self.assertFalse(a == b)
        for c in (a, b):
            c.join(1)
            c.join(2)
        a.tick()
        b.merge(a)
        b.tick()
        self.assertEqual(b.counters(), {1: 1, 2: 1})
        self.assertTrue(a < b)
        self.assertFalse(a == VectorClock(1))  # another kind
        with self.assertRaises(amq.IncompatibleError):
            a.compare(VectorClock(1))
        a.leave(2)
        self.assertEqual(a.counters(), {1: 1})

    def test_wrong_arguments(self):
        for bad in (-1, 2 ** 64):
            with self.assertRaises(amq.InvalidError):
                VectorClock(bad)
        with self.assertRaises(TypeError):
            VectorClock("node")
        a = VectorClock(2 ** 64 - 1)
        self.assertEqual(a.node, 2 ** 64 - 1)
        with self.assertRaises(amq.InvalidError):
            a.join(-5)
        with self.assertRaises(TypeError):
            a.tick(1.5)
        with self.assertRaises(amq.IncompatibleError):
            a.merge(BloomClock(8, 1))


class TestFrames(unittest.TestCase):
    def clocks(self):
        b = BloomClock(64, 3, history=4, seed=9)
        for i in range(40):
            b.tick(i)
        s = VectorClock(7)
        s.tick()
        s.merge(VectorClock(3).copy())
        d = VectorClock(5, dense=True)
        d.join(9)
        d.tick()
        return [b, s, d]

    def test_round_trips(self):
        for c in self.clocks():
            with self.subTest(clock=repr(c)):
                data = c.to_bytes()
                self.assertEqual(bytes(c), data)
                again = type(c).from_bytes(data)
                self.assertIs(type(again), type(c))
                self.assertIs(type(Clock.from_bytes(bytearray(data))),
                              type(c))
                self.assertEqual(again.to_bytes(), data)
                self.assertEqual(again.encode(), c.encode())
                for twin in (again, pickle.loads(pickle.dumps(c)),
                             copy.copy(c), copy.deepcopy(c), c.copy()):
                    self.assertIs(c.compare(twin).order, Order.EQUAL)
                    twin.tick(1)  # independent
                    self.assertIs(c.compare(twin).order, Order.BEFORE)
                    self.assertEqual(c.to_bytes(), data)

    def test_properties_survive(self):
        b, s, d = self.clocks()
        b2 = BloomClock.from_bytes(b.to_bytes())
        self.assertEqual((b2.m, b2.k, b2.history, b2.history_len),
                         (64, 3, 4, 1))  # the history is not saved
        self.assertEqual(b.copy().history_len, b.history_len)  # clone: it is
        self.assertEqual(VectorClock.from_bytes(s.to_bytes()).node, 7)
        d2 = VectorClock.from_bytes(d.to_bytes())
        self.assertEqual((d2.node, d2.dense, d2.counters()),
                         (5, True, {5: 1, 9: 0}))

    def test_wire(self):
        for c in self.clocks():
            with self.subTest(clock=repr(c)):
                msg = c.encode()
                peer = c.copy()
                peer.tick(2)
                peer.decode(memoryview(msg))
                self.assertIs(peer.compare(c).order, Order.EQUAL)
                before = peer.to_bytes()
                for i in range(len(msg)):
                    bad = bytearray(msg)
                    bad[i] ^= 0x10
                    with self.assertRaises(amq.CorruptError):
                        peer.decode(bytes(bad))
                for n in range(len(msg)):
                    with self.assertRaises(amq.CorruptError):
                        peer.decode(msg[:n])
                self.assertEqual(peer.to_bytes(), before)  # unchanged
        b, s, d = self.clocks()
        with self.assertRaises(amq.IncompatibleError):
            BloomClock(64, 4, seed=9).decode(b.encode())
        with self.assertRaises(amq.IncompatibleError):
            BloomClock(64, 3).decode(b.encode())  # another seed
        with self.assertRaises(amq.IncompatibleError):
            b.decode(s.encode())
        with self.assertRaises(amq.IncompatibleError):
            VectorClock(5, dense=True).decode(d.encode())  # membership
        with self.assertRaises(TypeError):
            b.decode("text")

    def test_corrupt_frames(self):
        for c in self.clocks():
            data = c.to_bytes()
            with self.subTest(clock=repr(c)):
                for i in range(len(data)):
                    bad = bytearray(data)
                    bad[i] ^= 0x04
                    with self.assertRaises((amq.CorruptError,
                                            amq.VersionError)):
                        Clock.from_bytes(bytes(bad))
                for n in (0, 8, 71, 72, len(data) - 8, len(data) - 1):
                    with self.assertRaises(amq.CorruptError):
                        Clock.from_bytes(data[:n])
                with self.assertRaises(amq.CorruptError):
                    Clock.from_bytes(data + b"\0" * 8)
        bad = bytearray(data)
        bad[128] ^= 1  # the payload's first byte
        with self.assertRaises(amq.ChecksumError):
            Clock.from_bytes(bytes(bad))
        with self.assertRaises(TypeError):
            Clock.from_bytes(100)  # not a length

    def test_kind_errors(self):
        f = amq.Filter("bloom", 100, 0.01).to_bytes()
        for cls in (Clock, BloomClock, VectorClock):
            with self.subTest(cls=cls.__name__):
                with self.assertRaises(amq.KindError) as cm:
                    cls.from_bytes(f)
                self.assertIn("filter", str(cm.exception))
        b, s, _ = self.clocks()
        with self.assertRaises(amq.KindError):
            BloomClock.from_bytes(s.to_bytes())
        with self.assertRaises(amq.KindError):
            VectorClock.from_bytes(b.to_bytes())
        with self.assertRaises(amq.KindError):
            amq.Filter.from_bytes(b.to_bytes())


class TestLifetime(unittest.TestCase):
    def test_closed(self):
        a, b = BloomClock(16, 2), BloomClock(16, 2)
        with a:
            a.tick("x")
        self.assertTrue(a.closed)
        a.close()  # twice is fine
        self.assertEqual(repr(a), "<amq.BloomClock closed>")
        for op in (lambda: a.tick("x"), lambda: a.compare(b),
                   lambda: b.compare(a), lambda: b.merge(a),
                   lambda: a.to_bytes(), lambda: a.encode(),
                   lambda: a.copy(), lambda: a.m, lambda: a[0]):
            with self.assertRaises(amq.ClosedError):
                op()
        v = VectorClock(1)
        v.close()
        with self.assertRaises(amq.ClosedError):
            v.tick()
        with self.assertRaises(amq.ClosedError):
            v < VectorClock(1)

    def test_order_names(self):
        self.assertEqual([str(o) for o in Order],
                         ["equal", "before", "after", "concurrent"])
        self.assertEqual([o.value for o in Order], [0, 1, 2, 3])
        v = BloomClock(8, 1).compare(BloomClock(8, 1))
        self.assertIsInstance(v, Verdict)


if __name__ == "__main__":
    unittest.main()
