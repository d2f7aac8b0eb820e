"""amq.Filter: every membership structure of the library through its
generic interface (amq/filter.h)."""

import ctypes
import operator
import os
import struct
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _keys
from ._errors import UnsupportedError, check
from ._handle import Handle, load_frame, save_frame
from ._native import AdaptStats, Diag, Hasher, Options, cstr, lib, text_of

CAP_REMOVE = 0x01
CAP_COUNT = 0x02
CAP_UNION = 0x04
CAP_INTERSECT = 0x08
CAP_CONCURRENT = 0x10
CAP_ESTIMATE = 0x20
CAP_STATIC = 0x40
CAP_SKETCH = 0x80
CAP_FORGETS = 0x100
CAP_RANGE = 0x200
CAP_ADAPT = 0x400
CAP_GROW = 0x800

HASH_DEFAULT = 0
HASH_SIPHASH = 3

PathLike = Union[str, bytes, "os.PathLike[str]"]


def options(keyed: bool = False, seed: int = 0,
            hasher: Optional[Hasher] = None) -> Options:
    """amq_options for a new structure: a fresh SipHash key when keyed (the
    library draws it), or exactly the hasher given."""
    opt = Options()
    if hasher is not None:
        opt.hash = hasher.kind
        opt.hash_seed = hasher.seed
        if hasher.kind == HASH_SIPHASH:
            opt.hash_key = ctypes.addressof(hasher.key)
        return opt
    if keyed:
        opt.hash = HASH_SIPHASH
    opt.hash_seed = seed
    return opt


def resolve_hasher(spec: str, opt: Options) -> Hasher:
    """The hasher a structure of spec made with opt will have."""
    h = Hasher()
    check(lib.amq_filter_resolve_hasher(cstr(spec), ctypes.byref(opt),
                                        ctypes.byref(h)))
    return h


def count_arg(x: Any, what: str) -> int:
    """A key count given as int or as a whole float (1e6)."""
    if isinstance(x, float):
        if not x.is_integer() or x < 0:
            raise ValueError("%s must be a whole number, not %r" % (what, x))
        return int(x)
    try:
        return int(operator.index(x))
    except TypeError:
        raise TypeError("%s must be an int, not %s" %
                        (what, type(x).__name__)) from None


def _range_keys(spec: str, keys: Any) -> Any:
    """A range filter's keys, checked against its form: integers for
    keys=int (the default), str or bytes for keys=bytes. A key in the
    other form would land where queries never look."""
    want_int = "keys=bytes" not in spec
    np = _keys.numpy_of(keys)
    if np is not None:
        kinds = [keys.dtype.kind in "iu"] if len(keys) else []
    else:
        keys = list(keys)
        kinds = [isinstance(k, int) for k in keys]
    if any(k != want_int for k in kinds):
        form = "integers (int)" if want_int else "strings (str or bytes)"
        other = "keys=bytes" if want_int else "the default keys=int"
        raise TypeError("this range filter takes %s; build with %s for the "
                        "other form" % (form, other))
    return keys


def _range_end(x: Any) -> int:
    """A range filter's integer key: 0 .. 2^64 - 1."""
    v = operator.index(x)
    if not 0 <= v < (1 << 64):
        raise OverflowError("range filter keys are 0 .. 2**64-1, not %d" % v)
    return v


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def all_hashes(hasher: Any, keys: Any) -> Any:
    """Every key's hash in one contiguous buffer: (ctypes array, n)."""
    n = _keys.count_of(keys)
    parts: List[Any] = []
    total = 0
    for addr, m in _keys.hashed(hasher, keys):
        chunk = (ctypes.c_uint64 * m)()
        ctypes.memmove(chunk, addr, 8 * m)
        parts.append(chunk)
        total += m
    if len(parts) == 1:
        return parts[0], total
    out = (ctypes.c_uint64 * max(total, n or 0, 1))()
    pos = 0
    for p in parts:
        ctypes.memmove(ctypes.byref(out, 8 * pos), p, 8 * len(p))
        pos += len(p)
    return out, total


def _bools(np: Any, n: int) -> Any:
    """An output array for n answers: NumPy bool when NumPy is in use."""
    if np is not None:
        return np.zeros(n, dtype=bool)
    return (ctypes.c_uint8 * n)()


def _addr(out: Any) -> int:
    return out.ctypes.data if hasattr(out, "ctypes") else \
        ctypes.addressof(out)


class Filter(Handle):
    """One filter of any type, made from a spec string such as "bloom",
    "blocked", "sbbf", "cuckoo:fp=12", "qf" (amq.types() lists them).

    Filter(capacity, fpr) picks the type itself: the smallest type that
    takes keys one by one and meets fpr (the `amq build` default; see
    amq.recommend). Filter(spec, capacity, fpr) makes that type, sized for
    `capacity` keys at false-positive rate `fpr`; Filter(spec) with a spec
    that carries explicit sizes ("bloom:m=8192,k=5"). The keywords of
    rbloom and pybloom-live are accepted: expected_items /
    false_positive_rate, capacity / error_rate.

    keyed=True hashes with SipHash-2-4 under a fresh random key, for keys
    an adversary may choose (the key is saved with the filter: keep saved
    files secret). seed picks the XXH3/XXH64 seed.

    Static types (xor8, fuse8, ribbon, ...) are built once from every key
    with Filter.build(spec, keys, fpr).
    """

    __slots__ = ()
    _free = lib.amq_filter_free
    _what = "filter"

    def __init__(self, spec: Any = None, capacity: Any = None,
                 fpr: Optional[float] = None, *, keyed: bool = False,
                 seed: int = 0, expected_items: Any = None,
                 false_positive_rate: Optional[float] = None,
                 error_rate: Optional[float] = None) -> None:
        super().__init__()
        if _is_number(spec):  # Filter(1000, 0.01): the rbloom habit
            spec, capacity, fpr = None, spec, capacity if fpr is None else fpr
        if expected_items is not None:
            capacity = expected_items
        for alias in (false_positive_rate, error_rate):
            if alias is not None:
                fpr = alias
        if (capacity is None) != (fpr is None):
            raise ValueError("give both capacity and fpr, or neither (then "
                             "the spec must carry explicit sizes)")
        n = count_arg(capacity, "capacity") if capacity is not None else 0
        rate = float(fpr) if fpr is not None else 0.0
        if spec is None:
            if capacity is None:
                raise ValueError("Filter() needs capacity and fpr to pick "
                                 "a type, or a spec")
            from ._recommend import default_type
            spec = default_type(n, rate)
        if not isinstance(spec, str):
            raise TypeError("spec must be a str such as \"bloom\", not %s"
                            % type(spec).__name__)
        t = lib.amq_filter_type_find(spec.encode())
        if t and t.contents.caps & CAP_STATIC:
            raise UnsupportedError(4, "'%s' is static: build it from all "
                                   "its keys with Filter.build(spec, keys, "
                                   "fpr)" % spec)
        handle = ctypes.c_void_p()
        diag = Diag()
        opt = options(keyed, seed)
        check(lib.amq_filter_new(spec.encode(), n, rate, ctypes.byref(opt),
                                 ctypes.byref(handle), ctypes.byref(diag)),
              diag)
        self._p = handle

    # ---- making one ----

    @classmethod
    def build(cls, spec: str, keys: Any, fpr: Optional[float] = None, *,
              keyed: bool = False, seed: int = 0) -> "Filter":
        """A filter built from all its keys at once: the only way to make a
        static type (xor8/16/32, fuse8/16/32, ribbon); for a dynamic type
        the same as Filter(spec, len(keys), fpr) plus add_many(keys).
        Duplicate keys are fine. keys: any collection amq.Filter.add_many
        takes (NumPy arrays too)."""
        opt = options(keyed, seed)
        hasher = resolve_hasher(spec, opt)
        if hasher.kind == _keys.ORDER:  # a range filter: see _range_keys
            keys = _range_keys(spec, keys)
        hashes, n = all_hashes(ctypes.byref(hasher), keys)
        opt = options(hasher=hasher)
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_filter_build(cstr(spec), hashes, n,
                                   float(fpr or 0.0), ctypes.byref(opt),
                                   ctypes.byref(handle), ctypes.byref(diag)),
              diag)
        return cls._wrap(handle)

    @classmethod
    def open(cls, path: PathLike) -> "Filter":
        """Open a saved filter read-only: the file is mapped and read in
        place (nothing copied); updates raise ReadOnlyError."""
        return cls._from_file(lib.amq_filter_open_file, path)

    @classmethod
    def load(cls, path: PathLike) -> "Filter":
        """Read a saved filter into a modifiable copy."""
        return cls._from_file(lib.amq_filter_load_file, path)

    @classmethod
    def _from_file(cls, fn: Any, path: PathLike) -> "Filter":
        handle = ctypes.c_void_p()
        diag = Diag()
        check(fn(os.fsencode(path), None, ctypes.byref(handle),
                 ctypes.byref(diag)), diag)
        return cls._adopt(handle)

    @classmethod
    def _adopt(cls, handle: Any) -> "Filter":
        """The object for a loaded handle: a maplet's frame read through
        Filter gives a Maplet (or StaticMap), which has its values."""
        if cls is Filter:
            from ._maplet import Maplet, lib as _mlib
            if _mlib.amq_maplet_is(handle):
                return Maplet._adopt(handle)
        return cls._wrap(handle)

    @classmethod
    def from_bytes(cls, data: Any) -> "Filter":
        """A filter from a saved frame (bytes-like), copied."""
        return cls._adopt(load_frame(lib.amq_filter_load, data))

    def to_bytes(self) -> bytes:
        """The filter's frame (docs/format.md) as bytes."""
        return save_frame(lib.amq_filter_serialized_size, lib.amq_filter_save,
                          self._h())

    def __bytes__(self) -> bytes:
        return self.to_bytes()

    def save(self, path: PathLike) -> None:
        """Save atomically (temporary file, fsync, rename): after an error
        or a crash the old file is intact. Keyed filters get mode 0600."""
        diag = Diag()
        check(lib.amq_filter_save_file(self._h(), os.fsencode(path),
                                       ctypes.byref(diag)), diag)

    # ---- one key ----

    def add(self, key: "_keys.Key") -> None:
        """Add one key. FullError if the structure is full (it is then
        unchanged); UnsupportedError for static types."""
        k = _keys.key_bytes(key)
        check(lib.amq_filter_add(self._h(), k, len(k)))

    def __contains__(self, key: object) -> bool:
        if isinstance(key, int) and self._ordered():
            return bool(lib.amq_filter_contains_hash(self._h(),
                                                     _range_end(key)))
        k = _keys.key_bytes(key)
        return bool(lib.amq_filter_contains(self._h(), k, len(k)))

    # ---- range filters (grafite) ----

    def _ordered(self) -> bool:
        return _keys.hash_kind(self._hasher()) == _keys.ORDER

    def may_contain_range(self, lo: Any, hi: Any) -> bool:
        """Whether a key may lie in [lo, hi] (a range filter: grafite).
        Integers for a filter of integers, str or bytes for one built
        with keys=bytes (ordered by their first 8 bytes). No false
        negatives; for a range of l keys holding none, yes with
        probability at most range_fpr_bound(l)."""
        out = ctypes.c_bool()
        f = self._h()
        if isinstance(lo, int) and isinstance(hi, int):
            check(lib.amq_range_query(f, _range_end(lo), _range_end(hi),
                                      ctypes.byref(out)))
        else:
            a, b = _keys.key_bytes(lo), _keys.key_bytes(hi)
            check(lib.amq_range_query_bytes(f, a, len(a), b, len(b),
                                            ctypes.byref(out)))
        return bool(out.value)

    def range_fpr_bound(self, length: int) -> float:
        """Certified bound on a yes for a range of `length` keys none of
        which was added (a range filter; -1 for any other)."""
        return float(lib.amq_range_fpr_bound(self._h(), _range_end(length)))

    @property
    def key_form(self) -> Optional[str]:
        """"int" or "bytes" for a range filter, None for any other."""
        form = lib.amq_range_key_form(self._h())
        return {0: "int", 1: "bytes"}.get(form)

    def remove(self, key: "_keys.Key") -> None:
        """Remove one copy of a key that was added. NotFoundError if its
        fingerprint is not there. Remove only keys you added: in a
        fingerprint filter a key never added may remove another key's
        fingerprint."""
        k = _keys.key_bytes(key)
        check(lib.amq_filter_remove(self._h(), k, len(k)))

    def report_fp(self, key: "_keys.Key") -> bool:
        """Tell an adaptive filter (aqf) that key, which it may have
        answered True for, is not in the set: it answers False for key
        from then on, and True for every member still. Returns whether the
        filter changed (False: it already answered False). InvalidError if
        key is a member; UnsupportedError for a filter that does not
        adapt."""
        k = _keys.key_bytes(key)
        fixed = ctypes.c_bool()
        check(lib.amq_filter_report_fp(self._h(), k, len(k),
                                       ctypes.byref(fixed)))
        return bool(fixed.value)

    def adapt_stats(self) -> Dict[str, int]:
        """An adaptive filter's reports and their cost: reports (that
        changed it), extended (fingerprints with records), records,
        extension_bytes (read by queries, in size_bytes) and map_bytes
        (the reverse map, read only to adapt)."""
        st = AdaptStats()
        check(lib.amq_filter_adapt_stats(self._h(), ctypes.byref(st)))
        return {name: int(getattr(st, name)) for name, _ in st._fields_}

    def discard(self, key: "_keys.Key") -> bool:
        """remove() that returns False instead of raising NotFoundError."""
        from ._errors import NotFoundError
        try:
            self.remove(key)
        except NotFoundError:
            return False
        return True

    def count(self, key: "_keys.Key") -> int:
        """Estimated number of times the key was added (types with
        CAP_COUNT: cms, cqf, cuckoo, ...): never below the truth."""
        k = _keys.key_bytes(key)
        out = ctypes.c_uint64()
        h = lib.amq_filter_hash(self._h(), k, len(k))
        check(lib.amq_filter_count_hash(self._h(), h, ctypes.byref(out)))
        return out.value

    def hash(self, key: "_keys.Key") -> int:
        """The 64-bit hash this filter derives everything from."""
        k = _keys.key_bytes(key)
        return int(lib.amq_filter_hash(self._h(), k, len(k)))

    # ---- many keys ----

    def _hasher(self) -> Any:
        return lib.amq_filter_hasher(self._h())

    def add_many(self, keys: Any) -> int:
        """Add every key of a collection (an iterable of keys, or a NumPy
        integer/bytes/str array, hashed with no per-key Python work), in
        order. Returns the number added. On a failure the keys before it
        are in, and the exception says which status stopped it."""
        total = 0
        f = self._h()
        for addr, m in _keys.hashed(self._hasher(), keys):
            done = ctypes.c_size_t()
            st = lib.amq_filter_add_batch(f, addr, m, ctypes.byref(done))
            total += done.value
            check(st)
        return total

    def add_hashes(self, hashes: Any) -> int:
        """add_many for keys already hashed with this filter's hasher
        (Filter.hashes, or the caller's own 64-bit hashes for an unkeyed
        filter): a NumPy uint64 array, array('Q') or iterable of ints."""
        total = 0
        f = self._h()
        for addr, m in _keys.hash_buffers(hashes):
            done = ctypes.c_size_t()
            st = lib.amq_filter_add_batch(f, addr, m, ctypes.byref(done))
            total += done.value
            check(st)
        return total

    def contains_many(self, keys: Any) -> Any:
        """[key in self for key in keys], computed in C: a NumPy bool
        array when keys is a NumPy array, else a list of bool."""
        return self._answers(keys, _keys.hashed(self._hasher(), keys))

    def contains_hashes(self, hashes: Any) -> Any:
        """contains_many for hashes (see add_hashes)."""
        return self._answers(hashes, _keys.hash_buffers(hashes))

    def _answers(self, keys: Any, chunks: Any) -> Any:
        f = self._h()
        np = _keys.numpy_of(keys)
        n = _keys.count_of(keys)
        if np is not None and n is not None:
            out = _bools(np, n)
            base = _addr(out)
            pos = 0
            for addr, m in chunks:
                lib.amq_filter_contains_batch(f, addr, m, base + pos)
                pos += m
            return out
        answers: List[bool] = []
        for addr, m in chunks:
            hits = (ctypes.c_uint8 * m)()
            lib.amq_filter_contains_batch(f, addr, m, hits)
            answers.extend(map(bool, bytes(hits)))
        return answers

    def hashes(self, keys: Any) -> Any:
        """The 64-bit hash of each key under this filter's hasher (XXH3 by
        default, SipHash when keyed): a NumPy uint64 array for a NumPy
        array of keys, else a list of int."""
        np = _keys.numpy_of(keys)
        n = _keys.count_of(keys)
        if np is not None and n is not None:
            out = np.empty(n, dtype=np.uint64)
            pos = 0
            for addr, m in _keys.hashed(self._hasher(), keys):
                ctypes.memmove(out.ctypes.data + 8 * pos, addr, 8 * m)
                pos += m
            return out
        res: List[int] = []
        for addr, m in _keys.hashed(self._hasher(), keys):
            res.extend((ctypes.c_uint64 * m).from_address(addr))
        return res

    def update(self, *others: Any) -> None:
        """Add every key of each argument: a collection of keys, or another
        Filter (merged in, as merge())."""
        for o in others:
            if isinstance(o, Filter):
                self.merge(o)
            else:
                self.add_many(o)

    # ---- merging ----

    def merge(self, other: "Filter") -> "Filter":
        """Union with a filter of the same type, shape and hasher, in
        place (IncompatibleError otherwise). Returns self."""
        if not isinstance(other, Filter):
            raise TypeError("merge() takes a Filter, not %s (add keys with "
                            "update())" % type(other).__name__)
        check(lib.amq_filter_union(self._h(), other._h()))
        return self

    def intersect(self, other: "Filter") -> "Filter":
        """Intersection in place (Bloom family). Returns self. The result
        is final: adding to it would void its bound."""
        if not isinstance(other, Filter):
            raise TypeError("intersect() takes a Filter, not %s" %
                            type(other).__name__)
        check(lib.amq_filter_intersect(self._h(), other._h()))
        return self

    def union(self, *others: "Filter") -> "Filter":
        """A new filter: self merged with every other (pybloom-live)."""
        out = self.copy()
        for o in others:
            out.merge(o)
        return out

    def intersection(self, *others: "Filter") -> "Filter":
        """A new filter: self intersected with every other."""
        out = self.copy()
        for o in others:
            out.intersect(o)
        return out

    def __or__(self, other: object) -> "Filter":
        if not isinstance(other, Filter):
            return NotImplemented
        return self.copy().merge(other)

    def __ior__(self, other: object) -> "Filter":
        if not isinstance(other, Filter):
            return NotImplemented
        return self.merge(other)

    def __and__(self, other: object) -> "Filter":
        if not isinstance(other, Filter):
            return NotImplemented
        return self.copy().intersect(other)

    def __iand__(self, other: object) -> "Filter":
        if not isinstance(other, Filter):
            return NotImplemented
        return self.intersect(other)

    def issubset(self, other: "Filter") -> bool:
        """True when every key self answers yes to, other answers yes to,
        decided on the tables (exact for the types that intersect: the
        Bloom family): self's table is its own intersection with other's.
        IncompatibleError for filters of another shape or hasher,
        UnsupportedError for types that do not intersect."""
        if not isinstance(other, Filter):
            raise TypeError("issubset() takes a Filter")
        meet = self.copy().intersect(other)
        return _payload(meet.to_bytes()) == _payload(self.to_bytes())

    def issuperset(self, other: "Filter") -> bool:
        """other.issubset(self)."""
        return other.issubset(self)

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Filter):
            return NotImplemented
        return self.issubset(other)

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Filter):
            return NotImplemented
        return other.issubset(self)

    # ---- what it is ----

    @property
    def type(self) -> str:
        """The canonical type name, e.g. "blocked"."""
        return str(lib.amq_filter_info(self._h()).contents.name.decode())

    @property
    def spec(self) -> str:
        """The spec with every resolved parameter: rebuilds the same
        shape."""
        return text_of(lib.amq_filter_describe, self._h())

    @property
    def caps(self) -> int:
        """CAP_* bits of this filter."""
        return int(lib.amq_filter_caps(self._h()))

    @property
    def fpr_bound(self) -> float:
        """Certified upper bound on the false-positive probability now."""
        return float(lib.amq_filter_fpr_bound(self._h()))

    @property
    def target_fpr(self) -> float:
        """The rate the filter was sized for (0 when built from explicit
        parameters)."""
        return float(lib.amq_filter_target_fpr(self._h()))

    error_rate = target_fpr  # pybloom-live's name

    @property
    def items(self) -> int:
        """Keys added (with repeats; a sum maplet: the sum of values)."""
        return int(lib.amq_filter_items(self._h()))

    def __len__(self) -> int:
        return self.items

    @property
    def approx_items(self) -> float:
        """The number of distinct keys estimated from the table (types with
        CAP_ESTIMATE, e.g. the Bloom family: what rbloom calls it)."""
        out = ctypes.c_double()
        check(lib.amq_filter_estimate_items(self._h(), ctypes.byref(out)))
        return out.value

    @property
    def capacity(self) -> int:
        return int(lib.amq_filter_capacity(self._h()))

    @property
    def size_bytes(self) -> int:
        return int(lib.amq_filter_size_bytes(self._h()))

    @property
    def size_in_bits(self) -> int:
        return 8 * self.size_bytes

    @property
    def bits_per_key(self) -> float:
        return float(lib.amq_filter_bits_per_key(self._h()))

    @property
    def is_view(self) -> bool:
        return bool(lib.amq_filter_is_view(self._h()))

    @property
    def keyed(self) -> bool:
        return bool(self._hasher().contents.kind == HASH_SIPHASH)

    @property
    def is_intersection(self) -> bool:
        return bool(lib.amq_filter_is_intersection(self._h(), None))

    def info(self) -> Dict[str, Any]:
        """What `amq info --json` says about a file, as a dict."""
        h = self._hasher().contents
        return {"type": self.type, "params": self.spec,
                "hash": lib.amq_hash_kind_name(h.kind).decode(),
                "keyed": h.kind == HASH_SIPHASH, "items": self.items,
                "capacity": self.capacity, "bytes": self.size_bytes,
                "bits_per_key": self.bits_per_key,
                "fpr_bound": self.fpr_bound,
                "target_fpr": self.target_fpr,
                "view": self.is_view}

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.%s closed>" % type(self).__name__
        return "<amq.%s %s, %d items, fpr bound %.3g>" % (
            type(self).__name__, self.spec, self.items, self.fpr_bound)


def _payload(frame: bytes) -> bytes:
    """The table inside a frame (docs/format.md: P at 48, L at 56, the
    payload at the next multiple of 64 after the parameters)."""
    p, = struct.unpack_from("<I", frame, 48)
    n, = struct.unpack_from("<Q", frame, 56)
    off = (64 + p + 63) // 64 * 64
    return frame[off:off + n]


class BloomFilter(Filter):
    """pybloom-live's BloomFilter(capacity, error_rate): a classic Bloom
    filter whose add() says whether the key was (probably) there."""

    __slots__ = ()

    def __init__(self, capacity: Any = 1000, error_rate: float = 0.001, *,
                 keyed: bool = False, seed: int = 0) -> None:
        super().__init__("bloom", capacity, error_rate, keyed=keyed,
                         seed=seed)

    def add(self, key: "_keys.Key") -> bool:  # type: ignore[override]
        """Add a key; True when it was already there (or a false
        positive), as pybloom-live answers."""
        seen = key in self
        super().add(key)
        return seen


class ScalableBloomFilter(Filter):
    """pybloom-live's ScalableBloomFilter(initial_capacity, error_rate): a
    scalable Bloom filter that grows as keys arrive and keeps its rate."""

    __slots__ = ()

    def __init__(self, initial_capacity: Any = 100,
                 error_rate: float = 0.001, *, keyed: bool = False,
                 seed: int = 0) -> None:
        super().__init__("scalable", initial_capacity, error_rate,
                         keyed=keyed, seed=seed)

    def add(self, key: "_keys.Key") -> bool:  # type: ignore[override]
        seen = key in self
        super().add(key)
        return seen


def types() -> List[Dict[str, Any]]:
    """Every registered structure type: a list of dicts with name,
    type_id, caps (CAP_* bits), summary and params."""
    out = []
    for i in range(lib.amq_filter_type_count()):
        t = lib.amq_filter_type_at(i).contents
        out.append({"name": t.name.decode(), "type_id": t.type_id,
                    "caps": t.caps, "summary": t.summary.decode(),
                    "params": (t.params or b"").decode()})
    return out


def curve_bits(spec: str, fpr: float) -> float:
    """Bits per key the type needs for false-positive rate fpr."""
    out = ctypes.c_double()
    check(lib.amq_curve_bits(cstr(spec), fpr, ctypes.byref(out)))
    return out.value


def curve_fpr(spec: str, bits_per_key: float) -> float:
    """False-positive rate of the type at bits_per_key bits per key."""
    out = ctypes.c_double()
    check(lib.amq_curve_fpr(cstr(spec), bits_per_key, ctypes.byref(out)))
    return out.value


KeyCollection = Union[Iterable[Any], Any]
