"""Range filters from Python: integer and string keys, ranges, bounds."""
import unittest

import amq


class TestRange(unittest.TestCase):
    def test_integers(self):
        keys = [1000 * i for i in range(1, 2001)]
        f = amq.Filter.build("grafite:range=64", keys, 0.01)
        self.assertEqual(f.key_form, "int")
        self.assertTrue(f.caps & amq.CAP_RANGE)
        for k in keys:  # no false negatives: points and ranges around keys
            self.assertIn(k, f)
            self.assertTrue(f.may_contain_range(k - 3, k + 3))
        yes = sum(f.may_contain_range(k + 1, k + 64) for k in keys)
        self.assertLess(yes, 0.01 * len(keys) + 4 * (0.01 * len(keys)) ** 0.5
                        + 4)
        self.assertLessEqual(f.range_fpr_bound(64), 0.01)
        self.assertAlmostEqual(f.range_fpr_bound(1), f.fpr_bound)
        with self.assertRaises(amq.InvalidError):
            f.may_contain_range(10, 5)
        with self.assertRaises(OverflowError):
            f.may_contain_range(-1, 5)

    def test_numpy_keys_are_values(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("no numpy")
        keys = np.arange(1, 5001, dtype=np.uint64) * 7
        f = amq.Filter.build("grafite", keys, 0.01)
        self.assertTrue(all(f.may_contain_range(int(k), int(k)) for k in keys))
        self.assertTrue(f.may_contain_range(6, 8))

    def test_strings(self):
        words = ["apple", "apricot", "banana", "cherry", "kiwi", "lemon"]
        f = amq.Filter.build("grafite:keys=bytes", words, 0.01)
        self.assertEqual(f.key_form, "bytes")
        for w in words:
            self.assertIn(w, f)
        self.assertTrue(f.may_contain_range("b", "bz"))
        self.assertTrue(f.may_contain_range(b"ki", b"kj"))

    def test_key_form_is_kept(self):
        with self.assertRaises(TypeError):  # words in a filter of integers
            amq.Filter.build("grafite", ["apple", "kiwi"], 0.01)
        with self.assertRaises(TypeError):
            amq.Filter.build("grafite:keys=bytes", [1, 2], 0.01)
        f = amq.Filter.build("grafite", (10 * i for i in range(1, 100)), 0.01)
        self.assertTrue(all(f.may_contain_range(10 * i, 10 * i)
                            for i in range(1, 100)))  # a generator of ints

    def test_point_filter(self):
        f = amq.Filter("blocked", 100, 0.01)
        self.assertIsNone(f.key_form)
        self.assertEqual(f.range_fpr_bound(5), -1.0)
        with self.assertRaises(amq.UnsupportedError):
            f.may_contain_range(1, 2)


if __name__ == "__main__":
    unittest.main()
