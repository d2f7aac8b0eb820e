"""amq.CountMin and amq.TopK: the frequency sketches of amq/sketch.h.

The typed C objects (amq_cms, amq_topk) are not amq_filter handles: a
generic filter is a separate object that owns one of them together with its
hasher and sizing target, and the library offers no way from one pointer to
the other. So these classes stand beside amq.Filter rather than under it,
and meet it through the frame: the bytes a typed sketch saves are exactly
those amq_filter_save writes for a "cms" or "topk" filter, so to_bytes(),
save() and files of the `amq` tool are interchangeable with amq.Filter
(to_filter(), from_filter()).

A Count-Min sketch takes hashes in C and keeps no hasher, so CountMin keeps
one (XXH3 seed 0 by default, the "cms" type's default, which is also what
`amq count` hashes keys with) and names it in every frame it saves.
"""

import ctypes
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar, Union

from . import _keys
from ._errors import IncompatibleError, check
from ._filter import HASH_SIPHASH, Filter, PathLike, options, resolve_hasher
from ._handle import Handle, frame_bytes, load_frame, read_file, save_frame
from ._native import (DP, HP, OP, PP, P, S, Diag, Hasher, c_size_t,
                      c_sizep, check_sizes, declare, lib)

U64 = ctypes.c_uint64
UINT64_MAX = (1 << 64) - 1
TOPK_NO_KEY = 0xFFFFFFFF
TOPK_MAX_KEYLEN = 1024


class TopKItem(ctypes.Structure):
    """amq_topk_item: one entry of the top-k list (a view into the
    sketch)."""
    _fields_ = [("hash", U64), ("count", U64),
                ("key", ctypes.c_void_p), ("key_len", ctypes.c_uint32),
                ("key_stored", ctypes.c_uint32)]


class TopKExpelled(ctypes.Structure):
    """amq_topk_expelled: a copy of the item an update pushed out."""
    _fields_ = [("hash", U64), ("count", U64),
                ("key_len", ctypes.c_uint32), ("key_stored", ctypes.c_uint32),
                ("key", ctypes.c_uint8 * TOPK_MAX_KEYLEN)]


check_sizes({TopKItem: 32, TopKExpelled: 1048})

_EP = ctypes.POINTER(TopKExpelled)

declare({
    "amq_hash64": (U64, [HP, P, c_size_t]),
    "amq_cms_new": (S, [U64, ctypes.c_uint, ctypes.c_uint, ctypes.c_bool,
                        OP, PP]),
    "amq_cms_new_error": (S, [ctypes.c_double, ctypes.c_double,
                              ctypes.c_uint, ctypes.c_bool, OP, PP]),
    "amq_cms_free": (None, [P]),
    "amq_cms_incr": (U64, [P, U64, U64]),
    "amq_cms_query": (U64, [P, U64]),
    "amq_cms_query_batch": (None, [P, P, c_size_t, P]),
    "amq_cms_merge": (S, [P, P]),
    "amq_cms_width": (U64, [P]),
    "amq_cms_depth": (ctypes.c_uint, [P]),
    "amq_cms_counter_bits": (ctypes.c_uint, [P]),
    "amq_cms_counter_max": (U64, [P]),
    "amq_cms_conservative": (ctypes.c_bool, [P]),
    "amq_cms_total": (U64, [P]),
    "amq_cms_saturated": (U64, [P]),
    "amq_cms_epsilon": (ctypes.c_double, [P]),
    "amq_cms_delta": (ctypes.c_double, [P]),
    "amq_cms_fpr_bound": (ctypes.c_double, [P]),
    "amq_cms_serialized_size": (c_size_t, [P]),
    "amq_cms_save": (S, [P, HP, P, c_size_t, c_sizep]),
    "amq_cms_load": (S, [P, c_size_t, OP, PP, HP, DP]),
    "amq_topk_new": (S, [ctypes.c_uint, U64, ctypes.c_uint, ctypes.c_double,
                         ctypes.c_uint, OP, PP]),
    "amq_topk_free": (None, [P]),
    "amq_topk_add_hash": (ctypes.c_bool, [P, U64, _EP]),
    "amq_topk_incr_hash": (ctypes.c_bool, [P, U64, U64, _EP]),
    "amq_topk_add_key": (S, [P, P, c_size_t, _EP,
                             ctypes.POINTER(ctypes.c_bool)]),
    "amq_topk_hash": (U64, [P, P, c_size_t]),
    "amq_topk_hasher": (None, [P, HP]),
    "amq_topk_query": (ctypes.c_bool, [P, U64]),
    "amq_topk_count": (U64, [P, U64]),
    "amq_topk_list": (c_size_t, [P, ctypes.POINTER(TopKItem), c_size_t]),
    "amq_topk_k": (ctypes.c_uint, [P]),
    "amq_topk_width": (U64, [P]),
    "amq_topk_depth": (ctypes.c_uint, [P]),
    "amq_topk_decay": (ctypes.c_double, [P]),
    "amq_topk_keylen": (ctypes.c_uint, [P]),
    "amq_topk_total": (U64, [P]),
    "amq_topk_size": (c_size_t, [P]),
    "amq_topk_serialized_size": (c_size_t, [P]),
    "amq_topk_save": (S, [P, P, c_size_t, c_sizep]),
    "amq_topk_load": (S, [P, c_size_t, OP, PP, DP]),
})

TopKKey = Union[bytes, int]
"""A key as the top-k list holds it: its (first keylen) bytes, or its hash
(an int) for an item counted by hash only."""


def _amount(by: Any, what: str = "count") -> int:
    """An increment: an int in [0, 2**64)."""
    if isinstance(by, bool) or not hasattr(by, "__index__"):
        raise TypeError("%s must be an int, not %s" %
                        (what, type(by).__name__))
    v = int(by.__index__())
    if v < 0:
        raise ValueError("%s must be >= 0, got %d" % (what, v))
    if v > UINT64_MAX:
        raise OverflowError("%s must be below 2**64, got %d" % (what, v))
    return v


def _uint(v: Any, what: str) -> int:
    """An argument for a C unsigned int: an int in [0, 2**32)."""
    n = _amount(v, what)
    if n > 0xFFFFFFFF:
        raise OverflowError("%s %d is out of range" % (what, n))
    return n


def _real(x: Any, what: str) -> float:
    """A float argument given as a number (not a str)."""
    if isinstance(x, (str, bytes, bool)) or not hasattr(x, "__float__"):
        raise TypeError("%s must be a number, not %s" %
                        (what, type(x).__name__))
    return float(x)


def _hash_value(h: Any) -> int:
    """A 64-bit hash given by the caller."""
    if isinstance(h, bool) or not hasattr(h, "__index__"):
        raise TypeError("a hash is an int, not %s" % type(h).__name__)
    v = int(h.__index__())
    if not 0 <= v <= UINT64_MAX:
        raise OverflowError("a hash is an unsigned 64-bit value, got %d" % v)
    return v


def _counts_for(counts: Any, n: Optional[int]) -> Any:
    """None for one count for every key, else a sequence of validated
    ints (a NumPy array stays one)."""
    if isinstance(counts, (str, bytes, bytearray, memoryview)):
        raise TypeError("counts must be an int or a sequence of ints, not "
                        "%s" % type(counts).__name__)
    if not hasattr(counts, "__len__"):
        _amount(counts)
        return None
    if n is not None and len(counts) != n:
        raise ValueError("counts has %d entries for %d keys" %
                         (len(counts), n))
    np = _keys.numpy_of(counts)
    if np is not None:
        if counts.ndim != 1 or counts.dtype.kind not in "iu":
            raise TypeError("counts: expected a 1-D integer array, got %s" %
                            counts.dtype)
        if counts.dtype.kind == "i" and len(counts) and counts.min() < 0:
            raise ValueError("counts must be >= 0")
        return np.ascontiguousarray(counts, dtype=np.uint64)
    return [_amount(c) for c in counts]


def _out_u64(keys: Any, n: Optional[int]) -> Any:
    """A NumPy uint64 array for NumPy input, else None (a list is built)."""
    np = _keys.numpy_of(keys)
    if np is not None and n is not None:
        return np.zeros(n, dtype=np.uint64)
    return None


SK = TypeVar("SK", bound="_Sketch")


class _Sketch(Handle):
    """What both sketches share: frames, files and the generic view."""

    __slots__ = ()
    _type = ""

    def to_bytes(self) -> bytes:
        raise NotImplementedError

    def __bytes__(self) -> bytes:
        return self.to_bytes()

    @classmethod
    def load(cls: Type[SK], path: PathLike) -> SK:
        """Read a saved sketch file (from save(), amq.Filter.save or the
        `amq` tool)."""
        return cls.from_bytes(read_file(path))

    @classmethod
    def from_filter(cls: Type[SK], f: Filter) -> SK:
        """A typed copy of an amq.Filter of this sketch's type."""
        if not isinstance(f, Filter):
            raise TypeError("from_filter() takes an amq.Filter, not %s" %
                            type(f).__name__)
        return cls.from_bytes(f.to_bytes())

    def to_filter(self) -> Filter:
        """The same sketch as an amq.Filter of type "cms"/"topk" (a copy,
        made from the frame): what the generic interface and `amq info`
        see."""
        return Filter.from_bytes(self.to_bytes())

    def save(self, path: PathLike) -> None:
        """Save the frame to a file atomically (amq_filter_save_file:
        temporary file, fsync, rename; keyed sketches get mode 0600). The
        file is one the `amq` tool and amq.Filter.load read."""
        with self.to_filter() as f:
            f.save(path)

    def info(self) -> Dict[str, Any]:
        """What `amq info --json` says about the saved sketch, as a
        dict."""
        with self.to_filter() as f:
            return f.info()

    @property
    def spec(self) -> str:
        """The spec with every parameter ("cms:width=...,depth=..."): an
        amq.Filter(spec) and `amq build --type SPEC` make the same
        shape."""
        with self.to_filter() as f:
            return f.spec


class CountMin(_Sketch):
    """A Count-Min sketch (Cormode & Muthukrishnan), with conservative
    update by default: approximate counts of keys in a stream, never below
    the truth.

    CountMin(width, depth) makes depth rows of width counters;
    CountMin(eps=..., delta=...) sizes it for an error target, width =
    ceil(e / eps) and depth = ceil(ln(1 / delta)), so that

        f(x) <= m.count(x) <= f(x) + eps * m.total

    for each key x with probability at least 1 - delta (the lower bound
    always holds, short of a saturated counter). delta defaults to 0.01
    as in the "cms" spec. counter_bits is 8, 16 or 32: a counter stops at
    its maximum instead of wrapping. conservative=False chooses the
    standard update (every row's counter grows by the full amount).

    keyed=True hashes keys with SipHash-2-4 under a fresh random key (saved
    with the sketch); seed picks the XXH3 seed.
    """

    __slots__ = ("_hasher_",)
    _free = lib.amq_cms_free
    _what = "Count-Min sketch"
    _type = "cms"

    def __init__(self, width: Optional[int] = None,
                 depth: Optional[int] = None, *, eps: Optional[float] = None,
                 delta: Optional[float] = None, counter_bits: int = 32,
                 conservative: bool = True, keyed: bool = False,
                 seed: int = 0) -> None:
        super().__init__()
        self._hasher_ = resolve_hasher("cms", options(keyed, seed))
        opt = options(hasher=self._hasher_)
        bits = _uint(counter_bits, "counter_bits")
        handle = ctypes.c_void_p()
        dims = width is not None or depth is not None
        if dims and (eps is not None or delta is not None):
            raise ValueError("give width and depth, or eps (and delta), "
                             "not both")
        if dims:
            if width is None or depth is None:
                raise ValueError("give both width and depth")
            w = _amount(width, "width")
            d = _uint(depth, "depth")
            check(lib.amq_cms_new(w, d, bits, bool(conservative),
                                  ctypes.byref(opt), ctypes.byref(handle)))
        elif eps is not None:
            check(lib.amq_cms_new_error(
                _real(eps, "eps"),
                0.01 if delta is None else _real(delta, "delta"), bits,
                bool(conservative), ctypes.byref(opt), ctypes.byref(handle)))
        else:
            raise ValueError("CountMin() needs width and depth, or eps "
                             "(and delta)")
        self._p = handle

    # ---- frames ----

    @classmethod
    def _make(cls, p: Any, hasher: Hasher) -> "CountMin":
        obj = cls._wrap(p)
        obj._hasher_ = hasher
        return obj

    @classmethod
    def from_bytes(cls, data: Any) -> "CountMin":
        """A sketch from a "cms" frame (to_bytes(), a file's bytes, an
        amq.Filter's to_bytes()), copied; its hasher comes from the frame.
        CorruptError / ChecksumError / VersionError for a bad frame,
        IncompatibleError for a frame of another type."""
        data = frame_bytes(data)
        handle = ctypes.c_void_p()
        hasher = Hasher()
        diag = Diag()
        check(lib.amq_cms_load(data, len(data), None, ctypes.byref(handle),
                               ctypes.byref(hasher), ctypes.byref(diag)),
              diag)
        return cls._make(handle, hasher)

    def to_bytes(self) -> bytes:
        """The sketch's frame (docs/format.md), naming its hasher."""
        return save_frame(lib.amq_cms_serialized_size, lib.amq_cms_save,
                          self._h(), ctypes.byref(self._hasher_))

    # ---- one key ----

    def hash(self, key: "_keys.Key") -> int:
        """The 64-bit hash the sketch counts the key under."""
        k = _keys.key_bytes(key)
        return int(lib.amq_hash64(ctypes.byref(self._hasher_), k, len(k)))

    def add(self, key: "_keys.Key", count: int = 1) -> int:
        """Add count (default 1) to the key and return its new estimate;
        count=0 only queries. A counter at counter_max stays there: such
        an estimate means "at least this much"."""
        by = _amount(count)
        h = self.hash(key)
        return int(lib.amq_cms_incr(self._h(), h, by))

    increment = add

    def add_hash(self, h: int, count: int = 1) -> int:
        """add() for a key already hashed (see hash())."""
        by = _amount(count)
        return int(lib.amq_cms_incr(self._h(), _hash_value(h), by))

    def count(self, key: "_keys.Key") -> int:
        """The estimate of the key's count: never below its true count
        (short of saturation), above it by at most error_bound with
        probability 1 - delta."""
        return int(lib.amq_cms_query(self._h(), self.hash(key)))

    def count_hash(self, h: int) -> int:
        """count() for a key already hashed."""
        return int(lib.amq_cms_query(self._h(), _hash_value(h)))

    def __getitem__(self, key: "_keys.Key") -> int:
        return self.count(key)

    def __contains__(self, key: object) -> bool:
        """A nonzero estimate: no false negatives, false positives with
        probability fpr_bound (the "cms" filter's membership)."""
        return self.count(key) > 0  # type: ignore[arg-type]

    # ---- many keys ----

    def add_many(self, keys: Any, counts: Any = 1) -> int:
        """Add every key of a collection (an iterable, or a NumPy
        integer/bytes/str array hashed in C), in order: each by counts (an
        int for all, or one count per key: a sequence or a NumPy integer
        array of the same length). Returns the number of keys."""
        return self._incr_chunks(
            _keys.hashed(ctypes.byref(self._hasher_), keys),
            _keys.count_of(keys), counts)

    def add_hashes(self, hashes: Any, counts: Any = 1) -> int:
        """add_many() for keys already hashed (a NumPy uint64 array,
        array('Q') or an iterable of ints)."""
        return self._incr_chunks(_keys.hash_buffers(hashes),
                                 _keys.count_of(hashes), counts)

    def _incr_chunks(self, chunks: Any, n: Optional[int], counts: Any) -> int:
        per_key = _counts_for(counts, n)
        one = _amount(counts) if per_key is None else 0
        incr = lib.amq_cms_incr
        p = self._h()
        pos = 0
        for addr, m in chunks:
            hs = (U64 * m).from_address(addr)
            if per_key is None:
                for h in hs:
                    incr(p, h, one)
            else:
                if pos + m > len(per_key):
                    raise ValueError("counts has %d entries for more keys"
                                     % len(per_key))
                for h, by in zip(hs, per_key[pos:pos + m]):
                    incr(p, h, int(by))
            pos += m
        if per_key is not None and pos != len(per_key):
            raise ValueError("counts has %d entries for %d keys" %
                             (len(per_key), pos))
        return pos

    def count_many(self, keys: Any) -> Any:
        """[m.count(k) for k in keys], computed in C: a NumPy uint64 array
        when keys is a NumPy array, else a list of int."""
        return self._queries(keys,
                             _keys.hashed(ctypes.byref(self._hasher_), keys))

    def count_hashes(self, hashes: Any) -> Any:
        """count_many() for keys already hashed."""
        return self._queries(hashes, _keys.hash_buffers(hashes))

    def _queries(self, keys: Any, chunks: Any) -> Any:
        p = self._h()
        n = _keys.count_of(keys)
        out = _out_u64(keys, n)
        if out is not None:
            pos = 0
            for addr, m in chunks:
                lib.amq_cms_query_batch(p, addr, m, out.ctypes.data + 8 * pos)
                pos += m
            return out
        res: List[int] = []
        for addr, m in chunks:
            buf = (U64 * m)()
            lib.amq_cms_query_batch(p, addr, m, buf)
            res.extend(buf)
        return res

    # ---- merging ----

    def merge(self, other: "CountMin") -> "CountMin":
        """Add other's counters into this sketch (saturating), for sketches
        of equal width, depth and counter width that hash keys the same
        way; both guarantees then hold for the union of the two streams.
        IncompatibleError otherwise (self unchanged). Returns self."""
        if not isinstance(other, CountMin):
            raise TypeError("merge() takes a CountMin, not %s" %
                            type(other).__name__)
        if bytes(self._hasher_) != bytes(other._hasher_):
            raise IncompatibleError(10, "the sketches hash keys differently"
                                    " (kind, seed or key)")
        check(lib.amq_cms_merge(self._h(), other._h()))
        return self

    def __or__(self, other: object) -> "CountMin":
        if not isinstance(other, CountMin):
            return NotImplemented
        return self.copy().merge(other)

    def __ior__(self, other: object) -> "CountMin":
        if not isinstance(other, CountMin):
            return NotImplemented
        return self.merge(other)

    # ---- what it is ----

    @property
    def width(self) -> int:
        return int(lib.amq_cms_width(self._h()))

    @property
    def depth(self) -> int:
        return int(lib.amq_cms_depth(self._h()))

    @property
    def counter_bits(self) -> int:
        return int(lib.amq_cms_counter_bits(self._h()))

    @property
    def counter_max(self) -> int:
        """The largest value a counter holds (2**counter_bits - 1)."""
        return int(lib.amq_cms_counter_max(self._h()))

    @property
    def conservative(self) -> bool:
        return bool(lib.amq_cms_conservative(self._h()))

    @property
    def total(self) -> int:
        """N: the sum of every increment (saturating at 2**64 - 1)."""
        return int(lib.amq_cms_total(self._h()))

    @property
    def saturated(self) -> int:
        """Counters at counter_max (0: no estimate is capped)."""
        return int(lib.amq_cms_saturated(self._h()))

    @property
    def epsilon(self) -> float:
        """eps of the guarantee: e / width."""
        return float(lib.amq_cms_epsilon(self._h()))

    @property
    def delta(self) -> float:
        """delta of the guarantee: e**-depth."""
        return float(lib.amq_cms_delta(self._h()))

    @property
    def error_bound(self) -> float:
        """eps * total: an estimate exceeds the true count by at most this
        much with probability at least 1 - delta, for each key."""
        return self.epsilon * self.total

    @property
    def fpr_bound(self) -> float:
        """Probability that a key never added has a nonzero estimate, for
        this very sketch (the product over rows of the nonzero share)."""
        return float(lib.amq_cms_fpr_bound(self._h()))

    @property
    def keyed(self) -> bool:
        return bool(self._hasher_.kind == HASH_SIPHASH)

    @property
    def hash_kind(self) -> str:
        """The hash of the keys: "xxh3", "xxh64" or "siphash24"."""
        return str(lib.amq_hash_kind_name(self._hasher_.kind).decode())

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.CountMin closed>"
        return "<amq.CountMin width=%d, depth=%d, %d-bit%s, total %d>" % (
            self.width, self.depth, self.counter_bits,
            "" if self.conservative else ", standard update", self.total)


def _key_of(key_addr: int, key_len: int, stored: int, h: int) -> TopKKey:
    if key_len == TOPK_NO_KEY:
        return h
    return ctypes.string_at(key_addr, stored) if stored else b""


class TopK(_Sketch):
    """The k most frequent keys of a stream, by HeavyKeeper (Gong et al.,
    2018), the algorithm of RedisBloom's TOPK: d rows of w buckets of
    (fingerprint, count) with count-based decay, and a heap of the k
    items with the largest estimates together with their key bytes.

    TopK(k) with width = max(64, 8k) buckets per row and depth = 4 rows by
    default (0 chooses them); decay in (1, 100] (1.08, the paper's
    choice); keylen: key bytes kept per listed item (up to 1024, rounded
    up to a multiple of 8; longer keys are listed by their first keylen
    bytes). Counts are never above the truth (short of two keys sharing a
    bucket and a 32-bit fingerprint); decay makes them fall short.

    Listed keys come back as bytes (a str key as its UTF-8, an int as its
    8 bytes little-endian); an item counted through add_hash() is listed by
    its hash, an int.
    """

    __slots__ = ()
    _free = lib.amq_topk_free
    _what = "top-k sketch"
    _type = "topk"

    def __init__(self, k: int = 10, width: int = 0, depth: int = 0,
                 decay: float = 1.08, keylen: int = 64, *,
                 keyed: bool = False, seed: int = 0) -> None:
        super().__init__()
        n, w, d = _uint(k, "k"), _amount(width, "width"), _uint(depth, "depth")
        kl, b = _uint(keylen, "keylen"), _real(decay, "decay")
        opt = options(keyed, seed)
        handle = ctypes.c_void_p()
        check(lib.amq_topk_new(n, w, d, b, kl, ctypes.byref(opt),
                               ctypes.byref(handle)))
        self._p = handle

    # ---- frames ----

    @classmethod
    def from_bytes(cls, data: Any) -> "TopK":
        """A sketch from a "topk" frame, copied (its random state too, so
        it continues exactly where the saved one stopped). CorruptError /
        ChecksumError / VersionError for a bad frame, IncompatibleError
        for a frame of another type."""
        return cls._wrap(load_frame(lib.amq_topk_load, data))

    def to_bytes(self) -> bytes:
        """The sketch's frame (docs/format.md)."""
        return save_frame(lib.amq_topk_serialized_size, lib.amq_topk_save,
                          self._h())

    # ---- updates ----

    def hash(self, key: "_keys.Key") -> int:
        """The 64-bit hash the sketch counts the key under."""
        k = _keys.key_bytes(key)
        return int(lib.amq_topk_hash(self._h(), k, len(k)))

    @staticmethod
    def _expelled(e: TopKExpelled) -> TopKKey:
        return _key_of(ctypes.addressof(e.key), e.key_len, e.key_stored,
                       e.hash)

    def _add_raw(self, p: Any, key: Any, n: int, by: int,
                 e: TopKExpelled) -> Optional[TopKKey]:
        """count `by` arrivals of the n key bytes at key (bytes or an
        address): by - 1 by hash, then one with the key bytes, so a key
        that enters the list is named whichever arrival brought it in."""
        first: Optional[TopKKey] = None
        if by > 1:
            h = lib.amq_topk_hash(p, key, n)
            if lib.amq_topk_incr_hash(p, h, by - 1, ctypes.byref(e)):
                first = self._expelled(e)
        hit = ctypes.c_bool()
        check(lib.amq_topk_add_key(p, key, n, ctypes.byref(e),
                                   ctypes.byref(hit)))
        if first is not None:
            return first
        return self._expelled(e) if hit.value else None

    def add(self, key: "_keys.Key", count: int = 1) -> Optional[TopKKey]:
        """Count count (default 1) arrivals of the key. Returns the key the
        list pushed out to make room for it (as TOPK.ADD answers), or None
        when nothing was expelled. count=0 does nothing."""
        by = _amount(count)
        k = _keys.key_bytes(key)
        p = self._h()
        if by == 0:
            return None
        return self._add_raw(p, k, len(k), by, TopKExpelled())

    increment = add

    def add_hash(self, h: int, count: int = 1) -> Optional[TopKKey]:
        """add() for a key known only by its hash: listed by that hash."""
        by = _amount(count)
        e = TopKExpelled()
        if lib.amq_topk_incr_hash(self._h(), _hash_value(h), by,
                                  ctypes.byref(e)):
            return self._expelled(e)
        return None

    def add_many(self, keys: Any) -> int:
        """add() every key of a collection (an iterable, or a NumPy
        integer/bytes/str array read in place), once each, in order.
        Returns the number of keys."""
        _keys.refuse_single(keys)
        p = self._h()
        e = TopKExpelled()
        hit = ctypes.c_bool()
        pe, ph = ctypes.byref(e), ctypes.byref(hit)
        add = lib.amq_topk_add_key
        s = _keys.strided(keys)
        if s is not None:
            lens = (c_size_t * s.n).from_address(s.lens) if s.lens else None
            for i in range(s.n):
                n = lens[i] if lens is not None else s.stride
                check(add(p, s.addr + i * s.stride, n, pe, ph))
            return s.n
        total = 0
        for key in keys:
            k = _keys.key_bytes(key)
            check(add(p, k, len(k), pe, ph))
            total += 1
        return total

    # ---- queries ----

    def __contains__(self, key: object) -> bool:
        """Is the key in the top-k list now (TOPK.QUERY)?"""
        return bool(lib.amq_topk_query(self._h(),
                                       self.hash(key)))  # type: ignore[arg-type]

    def count(self, key: "_keys.Key") -> int:
        """The estimated count (TOPK.COUNT), listed or not: never above
        the true count."""
        return int(lib.amq_topk_count(self._h(), self.hash(key)))

    def count_hash(self, h: int) -> int:
        """count() for a key known by its hash."""
        return int(lib.amq_topk_count(self._h(), _hash_value(h)))

    def __getitem__(self, key: "_keys.Key") -> int:
        return self.count(key)

    def count_many(self, keys: Any) -> Any:
        """[t.count(k) for k in keys]: a NumPy uint64 array when keys is a
        NumPy array, else a list of int."""
        p = self._h()
        hasher = Hasher()
        lib.amq_topk_hasher(p, ctypes.byref(hasher))
        n = _keys.count_of(keys)
        out = _out_u64(keys, n)
        res: List[int] = []
        pos = 0
        for addr, m in _keys.hashed(ctypes.byref(hasher), keys):
            vals = [lib.amq_topk_count(p, h)
                    for h in (U64 * m).from_address(addr)]
            if out is not None:
                out[pos:pos + m] = vals
            else:
                res.extend(vals)
            pos += m
        return out if out is not None else res

    def list(self, n: Optional[int] = None) -> List[Tuple[TopKKey, int]]:
        """The top-k list as (key, count) pairs, largest count first (ties
        by hash); n: only the first n."""
        p = self._h()
        cap = int(lib.amq_topk_size(p))
        if n is not None:
            cap = min(cap, _amount(n, "n"))
        items = (TopKItem * max(cap, 1))()
        got = lib.amq_topk_list(p, items, cap)
        return [(_key_of(it.key or 0, it.key_len, it.key_stored, it.hash),
                 int(it.count)) for it in items[:got]]

    # ---- what it is ----

    @property
    def k(self) -> int:
        return int(lib.amq_topk_k(self._h()))

    @property
    def width(self) -> int:
        return int(lib.amq_topk_width(self._h()))

    @property
    def depth(self) -> int:
        return int(lib.amq_topk_depth(self._h()))

    @property
    def decay(self) -> float:
        return float(lib.amq_topk_decay(self._h()))

    @property
    def keylen(self) -> int:
        """Key bytes kept per listed item (rounded up to a multiple of
        8)."""
        return int(lib.amq_topk_keylen(self._h()))

    @property
    def total(self) -> int:
        """Arrivals counted (the sum of every count, saturating)."""
        return int(lib.amq_topk_total(self._h()))

    @property
    def size(self) -> int:
        """Items in the list now (at most k)."""
        return int(lib.amq_topk_size(self._h()))

    def _hasher(self) -> Hasher:
        h = Hasher()
        lib.amq_topk_hasher(self._h(), ctypes.byref(h))
        return h

    @property
    def keyed(self) -> bool:
        return bool(self._hasher().kind == HASH_SIPHASH)

    @property
    def hash_kind(self) -> str:
        """The hash of the keys: "xxh3", "xxh64" or "siphash24"."""
        return str(lib.amq_hash_kind_name(self._hasher().kind).decode())

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.TopK closed>"
        return "<amq.TopK k=%d, width=%d, depth=%d, %d listed, total %d>" % (
            self.k, self.width, self.depth, self.size, self.total)


__all__ = ["CountMin", "TopK"]
