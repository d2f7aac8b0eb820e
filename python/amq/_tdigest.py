"""amq.TDigest: quantiles of a stream of numbers (amq_tdigest, the merging
t-digest of amq/sketch.h).

A t-digest keeps about `compression` centroids, small at the tails and
large in the middle, so extreme quantiles stay accurate. Its guarantee is
in rank: the exact rank of quantile(q)'s answer is within
e(p) = 2 pi sqrt(p(1-p)) / compression + 1/n of q (e taken at its largest
between the two), and cdf(x) within the same of x's exact rank
(docs/structures.md, "t-digest"). min and max are exact.

Its frame (to_bytes(), save()) is the one the Redis module's TDIGEST keys
and amq_tdigest_save write (type 13); it holds the state exactly, so a
loaded digest goes on as the saved one would.
"""

import ctypes
from typing import Any, Dict, Iterable, List, Union

from ._errors import check
from ._handle import Handle, frame_bytes, load_frame, read_file, save_frame
from ._native import DP, OP, PP, P, S, c_size_t, c_sizep, check_sizes, \
    declare, lib

_U64 = ctypes.c_uint64
_D = ctypes.c_double
DEFAULT_COMPRESSION = 100.0
MAX_COMPRESSION = 100000.0


class _Info(ctypes.Structure):
    """amq_tdigest_info."""
    _fields_ = [("compression", _D), ("capacity", _U64),
                ("merged_nodes", _U64), ("unmerged_nodes", _U64),
                ("merged_weight", _U64), ("unmerged_weight", _U64),
                ("merges", _U64), ("bytes", c_size_t)]


check_sizes({_Info: 64})

declare({
    "amq_tdigest_new": (S, [_D, OP, PP]),
    "amq_tdigest_free": (None, [P]),
    "amq_tdigest_reset": (None, [P]),
    "amq_tdigest_add": (S, [P, _D, _U64]),
    "amq_tdigest_merge": (S, [P, P]),
    "amq_tdigest_count": (_U64, [P]),
    "amq_tdigest_compression": (_D, [P]),
    "amq_tdigest_centroids": (c_size_t, [P]),
    "amq_tdigest_min": (_D, [P]),
    "amq_tdigest_max": (_D, [P]),
    "amq_tdigest_quantile": (_D, [P, _D]),
    "amq_tdigest_cdf": (_D, [P, _D]),
    "amq_tdigest_value_at": (_D, [P, _D]),
    "amq_tdigest_rank": (_D, [P, _D]),
    "amq_tdigest_trimmed_mean": (_D, [P, _D, _D]),
    "amq_tdigest_get_info": (None, [P, ctypes.POINTER(_Info)]),
    "amq_tdigest_serialized_size": (c_size_t, [P]),
    "amq_tdigest_save": (S, [P, P, c_size_t, c_sizep]),
    "amq_tdigest_load": (S, [ctypes.c_char_p, c_size_t, OP, PP, DP]),
})


def _number(x: Any, what: str) -> float:
    if isinstance(x, (str, bytes, bool)) or not hasattr(x, "__float__"):
        raise TypeError("%s must be a number, not %s" %
                        (what, type(x).__name__))
    return float(x)


def _weight(w: Any) -> int:
    if isinstance(w, bool) or not hasattr(w, "__index__"):
        raise TypeError("weight must be an int, not %s" % type(w).__name__)
    v = int(w.__index__())
    if v < 1 or v >= 1 << 53:
        raise ValueError("weight must be in [1, 2**53), got %d" % v)
    return v


class TDigest(Handle):
    """A merging t-digest of the given compression (1 to 100000; 100 by
    default). Values are finite floats; weights are ints >= 1.

    >>> import amq
    >>> d = amq.TDigest(compression=1000)
    >>> d.update([1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5])
    >>> d.quantile(0.5), d.quantile([0.1, 0.9])
    (4.0, [2.0, 5.0])
    >>> d.rank(3), d.cdf(3)
    (4.5, 0.3)
    >>> len(d), d.min, d.max
    (15, 1.0, 5.0)
    """

    __slots__ = ()
    _free = lib.amq_tdigest_free
    _what = "t-digest"

    def __init__(self, compression: float = DEFAULT_COMPRESSION) -> None:
        super().__init__()
        c = _number(compression, "compression")
        if not 1.0 <= c <= MAX_COMPRESSION:
            raise ValueError("compression must be in [1, %g], got %r" %
                             (MAX_COMPRESSION, compression))
        handle = ctypes.c_void_p()
        check(lib.amq_tdigest_new(c, None, ctypes.byref(handle)))
        self._p = handle

    # ---- updates ----

    def add(self, value: float, weight: int = 1) -> None:
        """Add value (a finite number) with weight (an int >= 1).
        InvalidError for NaN or an infinity, SizeOverflowError when the
        total would reach 2**53; the digest is then unchanged."""
        check(lib.amq_tdigest_add(self._h(), _number(value, "value"),
                                  _weight(weight)))

    def update(self, values: Iterable[float]) -> None:
        """add() each value with weight 1, in order; at the first refused
        value the error is raised, the values before it kept."""
        p = self._h()
        for v in values:
            check(lib.amq_tdigest_add(p, _number(v, "value"), 1))

    def merge(self, other: "TDigest") -> None:
        """Take every centroid of other (which is unchanged; self keeps its
        compression). Merging a digest into itself doubles its weights."""
        if not isinstance(other, TDigest):
            raise TypeError("merge() takes a TDigest, not %s" %
                            type(other).__name__)
        check(lib.amq_tdigest_merge(self._h(), other._h()))

    def reset(self) -> None:
        """Forget every value (the compression stays)."""
        lib.amq_tdigest_reset(self._h())

    # ---- reading ----

    def __len__(self) -> int:
        return int(lib.amq_tdigest_count(self._h()))

    @property
    def count(self) -> int:
        """The total weight added."""
        return len(self)

    @property
    def compression(self) -> float:
        return float(lib.amq_tdigest_compression(self._h()))

    @property
    def centroids(self) -> int:
        """Centroids of the merged digest (at most compression + 2)."""
        return int(lib.amq_tdigest_centroids(self._h()))

    @property
    def min(self) -> float:
        """The smallest value added (nan when empty)."""
        return float(lib.amq_tdigest_min(self._h()))

    @property
    def max(self) -> float:
        """The largest value added (nan when empty)."""
        return float(lib.amq_tdigest_max(self._h()))

    def _each(self, fn: Any, x: Any, what: str) -> Union[float, List[float]]:
        p = self._h()
        if isinstance(x, (list, tuple)):
            return [float(fn(p, _number(v, what))) for v in x]
        return float(fn(p, _number(x, what)))

    def quantile(self, q: Any) -> Union[float, List[float]]:
        """The value at fraction q of the weight (0 <= q <= 1), or a list
        for a list of fractions; nan when empty or q is out of range."""
        return self._each(lib.amq_tdigest_quantile, q, "q")

    def cdf(self, x: Any) -> Union[float, List[float]]:
        """The fraction of the weight below x plus half of that at x."""
        return self._each(lib.amq_tdigest_cdf, x, "x")

    def rank(self, x: Any) -> Union[float, List[float]]:
        """cdf() in weight units: the weight below x plus half that at x."""
        return self._each(lib.amq_tdigest_rank, x, "x")

    def value_at(self, r: Any) -> Union[float, List[float]]:
        """quantile() in weight units: the value at rank r (0 <= r <=
        count)."""
        return self._each(lib.amq_tdigest_value_at, r, "r")

    def trimmed_mean(self, lo: float, hi: float) -> float:
        """The mean of the values between fractions lo and hi of the
        weight (0 <= lo < hi <= 1); nan when empty or out of range."""
        return float(lib.amq_tdigest_trimmed_mean(
            self._h(), _number(lo, "lo"), _number(hi, "hi")))

    def info(self) -> Dict[str, Any]:
        """compression, capacity, merged and unmerged nodes and weights,
        merges so far and bytes held (what TDIGEST.INFO reports)."""
        i = _Info()
        lib.amq_tdigest_get_info(self._h(), ctypes.byref(i))
        return {name: getattr(i, name) for name, _ in _Info._fields_}

    # ---- frames ----

    def to_bytes(self) -> bytes:
        """The digest's frame (type 13), buffer included."""
        return save_frame(lib.amq_tdigest_serialized_size,
                          lib.amq_tdigest_save, self._h())

    @classmethod
    def from_bytes(cls, data: Any) -> "TDigest":
        """A digest from its frame, copied. CorruptError, ChecksumError,
        VersionError, or KindError for a frame of another object."""
        return cls._wrap(load_frame(lib.amq_tdigest_load, frame_bytes(data)))

    def save(self, path: Any) -> None:
        """Write to_bytes() to path."""
        data = self.to_bytes()
        with open(path, "wb") as fh:
            fh.write(data)

    @classmethod
    def load(cls, path: Any) -> "TDigest":
        """from_bytes() of a file's contents."""
        return cls.from_bytes(read_file(path))

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.TDigest closed>"
        return "<amq.TDigest compression=%g count=%d>" % (self.compression,
                                                          len(self))
