"""amq.Maplet and amq.StaticMap: approximate maps from keys to small values
(amq/maplet.h).

A maplet stores a map M from keys to values of v bits the way a filter
stores a set. Values combine with the maplet's operator (+): "sum"
(counts), "max", "min" or "or" (sets of ids as bit masks). A query m[k]
never misses a key that was put and never reports less than M[k] in the
operator's order; a key never put is found with probability at most
fpr_bound, and then its value is what other keys sharing its fingerprint
hold.

In the C library a maplet is an amq_filter (the same frame, registry,
save / load / view, union = merge, describe and info), so Maplet derives
from Filter: every Filter operation (fpr_bound, spec, save, open, load,
to_bytes, contains_many, info, copy, pickle) works on it, with the map's
own meaning where they differ (len() is the number of entries, add() puts
the value 1, update() takes pairs).

    >>> import amq
    >>> m = amq.Maplet(1000, 0.01, op="max", value_bits=4)
    >>> m["alice"] = 3
    >>> m["alice"] = 7
    >>> m["alice"], m.get("bob", 0)
    (7, 0)

StaticMap is the static maplet (Bloomier filter): built once from every
pair, log2(1/eps) + v bits per key plus under 3%, never changed.
"""

import ctypes
import operator
from array import array
from typing import (Any, Dict, Iterator, List, Mapping, NamedTuple, Optional,
                    Tuple, Type, TypeVar)

from . import _keys
from ._errors import (ERRORS, Error, InvalidError, KindError, SpecError,
                      UnsupportedError, check)
from ._filter import (CAP_STATIC, Filter, all_hashes, count_arg, options,
                      resolve_hasher)
from ._native import (DP, OP, PP, Diag, P, S, c_size_t, c_sizep, c_u64p,
                      check_sizes, cstr, declare, lib)

OPS = ("sum", "max", "min", "or")
_U64 = 1 << 64
_ST_INVALID, _ST_UNSUPPORTED, _ST_NOT_FOUND, _ST_KIND = 2, 4, 14, 17

M = TypeVar("M", bound="Maplet")


class _Shape(ctypes.Structure):
    """amq_maplet_shape."""
    _fields_ = [("op", ctypes.c_int), ("value_bits", ctypes.c_uint),
                ("multiset", ctypes.c_bool), ("is_static", ctypes.c_bool),
                ("key_bits", ctypes.c_uint),
                ("remainder_bits", ctypes.c_uint),
                ("slots", ctypes.c_uint64), ("used_slots", ctypes.c_uint64),
                ("distinct", ctypes.c_uint64)]


class _Iter(ctypes.Structure):
    """amq_maplet_iter."""
    _fields_ = [("m", P), ("state", ctypes.c_uint64 * 4)]


check_sizes({_Shape: 48, _Iter: 40})

_u64 = ctypes.c_uint64
_IP = ctypes.POINTER(_Iter)
declare({
    "amq_maplet_op_name": (ctypes.c_char_p, [ctypes.c_int]),
    "amq_maplet_combine": (_u64, [ctypes.c_int, _u64, _u64,
                                  ctypes.POINTER(ctypes.c_bool)]),
    "amq_maplet_is": (ctypes.c_bool, [P]),
    "amq_maplet_new": (S, [ctypes.c_char_p, _u64, ctypes.c_double, OP, PP,
                           DP]),
    "amq_maplet_build": (S, [ctypes.c_char_p, P, P, c_size_t,
                             ctypes.c_double, OP, PP, DP]),
    "amq_maplet_free": (None, [P]),
    "amq_maplet_put_hash": (S, [P, _u64, _u64]),
    "amq_maplet_put_batch": (S, [P, P, P, c_size_t, c_sizep]),
    "amq_maplet_get_hash": (S, [P, _u64, c_u64p]),
    "amq_maplet_get_batch": (None, [P, P, c_size_t, P, P]),
    "amq_maplet_get_all": (S, [P, _u64, P, c_size_t, c_sizep]),
    "amq_maplet_delete_hash": (S, [P, _u64, _u64]),
    "amq_maplet_drop_value": (S, [P, _u64]),
    "amq_maplet_merge": (S, [P, P]),
    "amq_maplet_resize": (S, [P]),
    "amq_maplet_capacity_bound": (ctypes.c_double, [P]),
    "amq_maplet_get_shape": (S, [P, ctypes.POINTER(_Shape)]),
    "amq_maplet_fingerprint": (_u64, [P, _u64]),
    "amq_maplet_exact_hash": (S, [P, _u64, c_u64p]),
    "amq_maplet_exact_key": (S, [P, _u64, c_u64p]),
    "amq_maplet_iter_init": (S, [P, _IP]),
    "amq_maplet_iter_next": (ctypes.c_bool, [_IP, c_u64p, c_u64p, c_u64p]),
})


def op_name(op: int) -> str:
    """The C name of an operator number (1 "sum", 2 "max", 3 "min",
    4 "or"; "?" otherwise)."""
    return str(lib.amq_maplet_op_name(op).decode())


def combine(op: str, a: int, b: int) -> int:
    """a (+) b under the named operator (a sum saturates at 2**64 - 1;
    SizeOverflowError then)."""
    over = ctypes.c_bool(False)
    r = int(lib.amq_maplet_combine(_op_number(op), _value(a), _value(b),
                                   ctypes.byref(over)))
    if over.value:
        raise ERRORS[3](3, "%d + %d is past 2**64 - 1" % (a, b))
    return r


def _op_number(op: str) -> int:
    if op not in OPS:
        raise SpecError(6, "op must be one of %s, not %r" %
                        (", ".join(OPS), op))
    return OPS.index(op) + 1


class MapletShape(NamedTuple):
    """What amq_maplet_get_shape reports."""
    op: str               # "sum", "max", "min" or "or"
    value_bits: int       # v
    multiset: bool        # one stored pair per put
    is_static: bool       # a StaticMap
    key_bits: int         # exact mode: K; 0 otherwise
    remainder_bits: int   # quotient maplet: r; static: 0
    slots: int            # quotient maplet: home slots; static: 0
    used_slots: int       # quotient maplet: slots in use
    distinct: int         # distinct fingerprints (static: keys)


def _fail(status: int, detail: str) -> Error:
    return ERRORS.get(status, Error)(status, detail)


def _value(v: Any) -> int:
    """One value as a C uint64: an int in [0, 2**64) (the maplet checks
    that it fits its v bits)."""
    if isinstance(v, float):
        raise TypeError("maplet values are ints, not float")
    try:
        x = operator.index(v)
    except TypeError:
        raise TypeError("maplet values are ints, not %s" %
                        type(v).__name__) from None
    if not 0 <= x < _U64:
        raise InvalidError(_ST_INVALID, "value %d is not in [0, 2**64)" % x)
    return x


def _is_int_key(k: Any) -> bool:
    return not isinstance(k, (str, bytes, bytearray, memoryview)) and \
        hasattr(k, "__index__")


def _values_buffer(values: Any, n: int) -> Tuple[int, Any]:
    """(address, keep-alive) of n uint64 values: a NumPy array, an
    array('Q'), any iterable of ints, or one int for every key."""
    np = _keys.numpy_of(values)
    if np is not None:
        if values.ndim != 1:
            raise ValueError("values: expected a 1-D array, got %d-D" %
                             values.ndim)
        if values.dtype.kind not in "uib":
            raise TypeError("values: expected an integer array, got %s" %
                            values.dtype)
        if values.dtype.kind == "i" and len(values) and values.min() < 0:
            raise InvalidError(_ST_INVALID, "values: negative value %d" %
                               values.min())
        a = np.ascontiguousarray(values, dtype="<u8")
        if len(a) != n:
            raise ValueError("%d keys but %d values" % (n, len(a)))
        return int(a.ctypes.data), a
    if _is_int_key(values):
        buf = array("Q", [_value(values)]) * n
    else:
        if isinstance(values, (str, bytes, bytearray)):
            raise TypeError("values: expected ints, not %s" %
                            type(values).__name__)
        try:
            buf = array("Q", values)
        except OverflowError:
            raise InvalidError(_ST_INVALID, "values must be in "
                               "[0, 2**64)") from None
        if len(buf) != n:
            raise ValueError("%d keys but %d values" % (n, len(buf)))
    if n == 0:
        buf = array("Q", [0])
    return buf.buffer_info()[0], buf


def _pairs(keys: Any, values: Any) -> Tuple[Any, Any]:
    """keys, values from (keys, values) or from a mapping or an iterable
    of (key, value) pairs given alone."""
    if values is not None:
        return keys, values
    if isinstance(keys, Maplet):
        raise TypeError("a Maplet has no keys to read back (merge it)")
    if isinstance(keys, Mapping):
        items = list(keys.items())
    else:
        _keys.refuse_single(keys)
        items = list(keys)
    return [k for k, _ in items], [v for _, v in items]


def _spec_of(base: str, op: Optional[str], value_bits: Optional[int],
             extra: List[str]) -> str:
    params = list(extra)
    if op is not None:
        _op_number(op)
        params.insert(0, "op=" + op)
    if value_bits is not None:
        params.insert(1 if op is not None else 0,
                      "v=%d" % operator.index(value_bits))
    if not params:
        return base
    return base + ("," if ":" in base else ":") + ",".join(params)


class Maplet(Filter):
    """A dynamic (quotient) maplet: key -> value of v bits, updatable.

    Maplet(capacity, fpr, op="sum", value_bits=8) sizes it for `capacity`
    keys at false-positive rate `fpr` (spec "maplet:op=..,v=.."); op is how
    values of one key combine: "sum" (counts: delete subtracts), "max",
    "min", or "or" (bit masks). multiset=True keeps every (key, value)
    pair in its own slot (delete works for every op; get_all lists them).
    key_bits=K makes an exact map of integer keys below 2**K: no false
    positives, no collisions (fpr may then be left out). concurrent=True
    lets threads put, delete and get at once. Maplet(spec) takes a full
    spec such as "maplet:op=max,v=4,q=10,r=8".

    m[key] = v is put(key, v): v combines with what the key holds, so
    under "sum" it adds v (m[key] += 1 would add the old count again: use
    m.put(key) to count). m[key] raises NotFoundError (a KeyError) for a
    key not found; m.get(key, default) returns default instead. Keys are
    str, bytes-like or int, as for Filter; in exact mode int keys are the
    map's integers (amq_maplet_exact_hash), str and bytes keys are hashed.

    keyed=True hashes with SipHash-2-4 under a fresh random key; seed
    picks the XXH3 seed.
    """

    __slots__ = ()
    _free = lib.amq_maplet_free
    _what = "maplet"

    def __init__(self, capacity: Any = None, fpr: Optional[float] = None,
                 op: Optional[str] = None, value_bits: Optional[int] = None,
                 *, multiset: bool = False, key_bits: Optional[int] = None,
                 concurrent: bool = False, spec: Optional[str] = None,
                 keyed: bool = False, seed: int = 0) -> None:
        self._p = None
        if isinstance(capacity, str):  # Maplet("maplet:...", n, fpr)
            if spec is not None:
                raise TypeError("spec given twice")
            spec, capacity = capacity, fpr
            fpr = None if capacity is None else op  # type: ignore
            op = None
        base = "maplet" if spec is None else spec
        if not isinstance(base, str):
            raise TypeError("spec must be a str, not %s" %
                            type(base).__name__)
        t = lib.amq_filter_type_find(base.encode())
        if t and t.contents.caps & CAP_STATIC:
            raise UnsupportedError(_ST_UNSUPPORTED, "'%s' is static: build "
                                   "it from all its pairs with "
                                   "amq.StaticMap(keys, values, fpr)" % base)
        extra = (["multiset=1"] if multiset else []) + \
            (["kbits=%d" % operator.index(key_bits)] if key_bits else []) + \
            (["concurrent=1"] if concurrent else [])
        full = _spec_of(base, op, value_bits, extra)
        if capacity is not None and fpr is None and \
                (key_bits or "kbits=" in base):
            fpr = 0.5  # exact mode is sized by capacity alone
        if (capacity is None) != (fpr is None):
            raise ValueError("give both capacity and fpr, or neither (then "
                             "the spec must carry explicit sizes)")
        n = count_arg(capacity, "capacity") if capacity is not None else 0
        handle = ctypes.c_void_p()
        diag = Diag()
        opt = options(keyed, seed)
        check(lib.amq_maplet_new(cstr(full), n, float(fpr or 0.0),
                                 ctypes.byref(opt), ctypes.byref(handle),
                                 ctypes.byref(diag)), diag)
        self._p = handle

    # ---- making one from pairs, and from frames ----

    @classmethod
    def build(cls: Type[M], keys: Any,  # type: ignore[override]
              values: Any = None, fpr: Optional[float] = None,
              op: Optional[str] = None, value_bits: Optional[int] = None, *,
              multiset: bool = False, spec: Optional[str] = None,
              keyed: bool = False, seed: int = 0, **more: Any) -> M:
        """A maplet of every (key, value) pair at once: keys and values
        (NumPy arrays, lists, one int for every key), or a mapping or an
        iterable of pairs as keys alone. Repeated keys combine. Sized for
        the pairs at fpr (or from the spec's explicit sizes when fpr is
        None); the same bytes as putting the pairs one by one."""
        keys, values = _pairs(keys, values)
        key_bits = more.pop("key_bits", None)
        if key_bits or (spec and "kbits=" in spec):
            count = _keys.count_of(keys)
            if count is None:
                keys = list(keys)
                count = len(keys)
            m = cls(count or 1, fpr, op, value_bits, multiset=multiset,
                    key_bits=key_bits, spec=spec, keyed=keyed, seed=seed,
                    **more)
            m.put_many(keys, values)
            return m
        base = cls._spec_base() if spec is None else spec
        extra = (["multiset=1"] if multiset else []) + \
            (["concurrent=1"] if more.pop("concurrent", False) else []) + \
            ["%s=%s" % kv for kv in cls._build_params(more)]
        full = _spec_of(base, op, value_bits, extra)
        opt = options(keyed, seed)
        hasher = resolve_hasher(full, opt)
        hashes, n = all_hashes(ctypes.byref(hasher), keys)
        vaddr, keep = _values_buffer(values, n)
        opt = options(hasher=hasher)
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_maplet_build(cstr(full), hashes, vaddr, n,
                                   float(fpr or 0.0), ctypes.byref(opt),
                                   ctypes.byref(handle), ctypes.byref(diag)),
              diag)
        del keep
        return cls._adopt(handle)

    @classmethod
    def _spec_base(cls) -> str:
        return "maplet"

    @classmethod
    def _build_params(cls, more: Dict[str, Any]) -> List[Tuple[str, Any]]:
        if more:
            raise TypeError("unexpected keyword argument %r" %
                            next(iter(more)))
        return []

    @classmethod
    def _adopt(cls: Type[M], handle: Any) -> M:
        """The right class for a loaded handle (StaticMap for a static
        maplet), or KindError (the handle is freed)."""
        if not lib.amq_maplet_is(handle):
            name = lib.amq_filter_info(handle).contents.name.decode()
            lib.amq_filter_free(handle)
            raise KindError(_ST_KIND, "the frame holds a %s filter, not a "
                            "maplet (open it with amq.Filter)" % name)
        s = _Shape()
        check(lib.amq_maplet_get_shape(handle, ctypes.byref(s)))
        want: Type[Maplet] = StaticMap if s.is_static else Maplet
        if not issubclass(want, cls):
            lib.amq_filter_free(handle)
            raise KindError(_ST_KIND, "the frame holds a %s maplet, not a "
                            "%s" % ("static" if s.is_static else "dynamic",
                                    cls.__name__))
        return want._wrap(handle)

    # ---- keys to hashes ----

    def _mutable(self) -> Any:
        return self._h()

    def _exact(self) -> bool:
        return self.shape.key_bits != 0

    def exact_hash(self, key: int) -> int:
        """Exact mode: the hash of an integer key below 2**K (InvalidError
        otherwise; UnsupportedError if the maplet is not exact)."""
        k = operator.index(key)
        if not 0 <= k < _U64:
            raise InvalidError(_ST_INVALID, "exact keys are in [0, 2**K), "
                               "not %d" % k)
        out = ctypes.c_uint64()
        check(lib.amq_maplet_exact_hash(self._h(), k, ctypes.byref(out)))
        return out.value

    def exact_key(self, fingerprint: int) -> int:
        """Exact mode: the integer key a fingerprint stands for."""
        out = ctypes.c_uint64()
        check(lib.amq_maplet_exact_key(self._h(), _value(fingerprint),
                                       ctypes.byref(out)))
        return out.value

    def hash(self, key: "_keys.Key") -> int:
        """The 64-bit hash the maplet stores a key under (exact mode: int
        keys through exact_hash)."""
        if _is_int_key(key) and self._exact():
            return self.exact_hash(key)  # type: ignore[arg-type]
        k = _keys.key_bytes(key)
        return int(lib.amq_filter_hash(self._h(), k, len(k)))

    def hashes(self, keys: Any) -> Any:
        """hash() of every key: a NumPy uint64 array for a NumPy array of
        keys, else a list of int."""
        if not self._exact():
            return super().hashes(keys)
        _keys.refuse_single(keys)
        np = _keys.numpy_of(keys)
        if np is not None and keys.dtype.kind not in "iub":
            return super().hashes(keys)
        out = [self.hash(k) for k in (keys.tolist() if np is not None
                                       else keys)]
        return np.array(out, dtype=np.uint64) if np is not None else out

    def _hash_array(self, keys: Any) -> Tuple[Any, int]:
        """Every key's hash in one buffer: (buffer, n)."""
        if not self._exact():
            return all_hashes(self._hasher(), keys)
        hs = self.hashes(keys)
        np = _keys.numpy_of(hs)
        if np is not None:
            return hs, len(hs)
        return (ctypes.c_uint64 * max(len(hs), 1))(*hs), len(hs)

    def fingerprint(self, key: "_keys.Key") -> int:
        """The fingerprint the key is stored under (quotient << r |
        remainder): keys with equal fingerprints share their values."""
        return int(lib.amq_maplet_fingerprint(self._h(), self.hash(key)))

    # ---- one key ----

    def put(self, key: "_keys.Key", value: int = 1) -> None:
        """M[key] = M[key] (+) value (multiset mode: one more stored
        pair). InvalidError for a value wider than v bits, FullError when
        there is no room (resize()), SizeOverflowError for a sum past
        2**64 - 1; the maplet is then unchanged."""
        v = _value(value)
        st = lib.amq_maplet_put_hash(self._mutable(), self.hash(key), v)
        if st == _ST_INVALID and v >> self.value_bits:
            raise _fail(st, "value %d is wider than the maplet's %d value "
                        "bits" % (v, self.value_bits))
        check(st)

    def __setitem__(self, key: "_keys.Key", value: int) -> None:
        self.put(key, value)

    def add(self, key: "_keys.Key") -> None:
        """put(key, 1), as the generic filter add."""
        self.put(key, 1)

    def _get_hash(self, h: int) -> Optional[int]:
        out = ctypes.c_uint64()
        st = lib.amq_maplet_get_hash(self._h(), h, ctypes.byref(out))
        if st == _ST_NOT_FOUND:
            return None
        check(st)
        return out.value

    def __getitem__(self, key: "_keys.Key") -> int:
        v = self._get_hash(self.hash(key))
        if v is None:
            raise _fail(_ST_NOT_FOUND, repr(key))
        return v

    def get(self, key: "_keys.Key", default: Any = None) -> Any:
        """m[key], never below the truth in the operator's order; default
        when the key is not found."""
        v = self._get_hash(self.hash(key))
        return default if v is None else v

    def __contains__(self, key: object) -> bool:
        return self._get_hash(self.hash(key)) is not None  # type: ignore

    def get_all(self, key: "_keys.Key") -> List[int]:
        """Multiset mode: every value stored under the key's fingerprint,
        in increasing order (one per stored pair); combine mode: [m[key]].
        [] when the key is not found."""
        h = self.hash(key)
        n = ctypes.c_size_t()
        cap = 8
        while True:
            buf = (ctypes.c_uint64 * cap)()
            st = lib.amq_maplet_get_all(self._h(), h, buf, cap,
                                        ctypes.byref(n))
            if st == _ST_NOT_FOUND:
                return []
            check(st)
            if n.value <= cap:
                return list(buf[:n.value])
            cap = n.value

    def count(self, key: "_keys.Key") -> int:
        """What the generic filter count reports for the key (a sum
        maplet: its count, never below the truth)."""
        out = ctypes.c_uint64()
        check(lib.amq_filter_count_hash(self._h(), self.hash(key),
                                        ctypes.byref(out)))
        return out.value

    def delete(self, key: "_keys.Key", value: int = 1) -> None:
        """Undo a put of (key, value): sum subtracts (NotFoundError if the
        maplet holds less), multiset mode removes one stored copy of the
        pair (NotFoundError if none). UnsupportedError for max, min and or
        in combine mode: what was combined cannot be taken apart."""
        v = _value(value)
        check(lib.amq_maplet_delete_hash(self._mutable(), self.hash(key), v))

    def __delitem__(self, key: "_keys.Key") -> None:
        """Remove everything stored under the key's fingerprint: under
        sum its whole count, in multiset mode every stored pair. A key
        sharing the fingerprint (probability fpr_bound) goes with it, as
        the maplet cannot tell them apart: delete(key, value) undoes
        exactly one put. NotFoundError for a key not found."""
        self._mutable()
        h = self.hash(key)
        if self.shape.multiset:
            vals = self.get_all(key)
        else:
            v = self._get_hash(h)
            vals = [] if v is None else [v]
        if not vals:
            raise _fail(_ST_NOT_FOUND, repr(key))
        for v in vals:
            check(lib.amq_maplet_delete_hash(self._h(), h, v))

    def remove(self, key: "_keys.Key") -> None:
        """The generic filter remove: undo one add(key) (delete(key, 1)
        under sum)."""
        check(lib.amq_filter_remove_hash(self._mutable(), self.hash(key)))

    def drop_value(self, value: int) -> None:
        """Multiset mode: remove every stored pair whose value is `value`,
        without the keys, in one pass (UnsupportedError in combine
        mode)."""
        check(lib.amq_maplet_drop_value(self._mutable(), _value(value)))

    # ---- many keys ----

    def put_many(self, keys: Any, values: Any = 1) -> int:
        """put() of each (keys[i], values[i]) in order, in C. keys: any
        collection Filter.add_many takes (NumPy arrays with no per-key
        Python work); values: a NumPy integer array, an iterable of ints
        of the same length, or one int for every key. Returns the pairs
        put; on a failure the pairs before it are in and the exception
        names the pair that failed."""
        m = self._mutable()
        hashes, n = self._hash_array(keys)
        return self._put_hashes(m, hashes, n, values)

    def put_hashes(self, hashes: Any, values: Any = 1) -> int:
        """put_many for keys already hashed with this maplet's hasher
        (Maplet.hashes): a NumPy uint64 array, array('Q') or ints."""
        m = self._mutable()
        hashes, n = _hash_buffer(hashes)
        return self._put_hashes(m, hashes, n, values)

    def _put_hashes(self, m: Any, hashes: Any, n: int, values: Any) -> int:
        vaddr, keep = _values_buffer(values, n)
        done = ctypes.c_size_t()
        st = lib.amq_maplet_put_batch(m, _address(hashes), vaddr, n,
                                      ctypes.byref(done))
        del keep
        if st != 0:
            raise _fail(st, "pair %d of %d (the %d before it are in)" %
                        (done.value + 1, n, done.value))
        return done.value

    def add_many(self, keys: Any) -> int:
        """put_many(keys, 1)."""
        return self.put_many(keys, 1)

    def get_many(self, keys: Any) -> Tuple[Any, Any]:
        """(values, found) for every key, in C: NumPy arrays (uint64 and
        bool) when keys is a NumPy array, else lists of int and bool.
        values[i] is 0 where found[i] is false."""
        hashes, n = self._hash_array(keys)
        return self._get_hashes(hashes, n, _keys.numpy_of(keys))

    def get_hashes(self, hashes: Any) -> Tuple[Any, Any]:
        """get_many for hashes (see put_hashes)."""
        buf, n = _hash_buffer(hashes)
        return self._get_hashes(buf, n, _keys.numpy_of(hashes))

    def _get_hashes(self, hashes: Any, n: int, np: Any) -> Tuple[Any, Any]:
        m = self._h()
        if np is not None:
            vals = np.zeros(n, dtype=np.uint64)
            found = np.zeros(n, dtype=bool)
            if n:
                lib.amq_maplet_get_batch(m, _address(hashes), n,
                                         vals.ctypes.data, found.ctypes.data)
                vals[~found] = 0
            return vals, found
        v = (ctypes.c_uint64 * max(n, 1))()
        f = (ctypes.c_uint8 * max(n, 1))()
        if n:
            lib.amq_maplet_get_batch(m, _address(hashes), n, v, f)
        hits = [bool(x) for x in bytes(f)[:n]]
        return [x if h else 0 for x, h in zip(v[:n], hits)], hits

    def contains_many(self, keys: Any) -> Any:
        """[key in self for key in keys], computed in C: a NumPy bool
        array when keys is a NumPy array, else a list of bool."""
        if not self._exact():
            return super().contains_many(keys)
        return self.get_many(keys)[1]

    def update(self, *others: Any, **pairs: int) -> None:
        """put() every pair of each argument: a mapping, an iterable of
        (key, value) pairs, or another Maplet (merged in); keyword
        arguments are str keys."""
        for o in others:
            if isinstance(o, Maplet):
                self.merge(o)
            else:
                self.put_many(*_pairs(o, None))
        if pairs:
            self.put_many(list(pairs), list(pairs.values()))

    # ---- whole maplet ----

    def merge(self, other: "Filter") -> "Maplet":
        """self = self (+) other, in place: equal fingerprints combine
        (multiset: pairs join). The same hasher, operator, value width,
        mode and shape are required (IncompatibleError). Returns self."""
        if not isinstance(other, Maplet):
            raise TypeError("merge() takes a Maplet, not %s" %
                            type(other).__name__)
        check(lib.amq_maplet_merge(self._mutable(), other._h()))
        return self

    def resize(self) -> None:
        """Twice the home slots without the keys: fingerprints and values
        are unchanged (an exact maplet stays exact) and the bound of the
        stored keys too, but the bound at the new capacity is
        capacity_bound (twice what it was). Needs r >= 2."""
        check(lib.amq_maplet_resize(self._mutable()))

    @property
    def capacity_bound(self) -> float:
        """The fpr_bound the maplet will report when it holds capacity
        keys."""
        return float(lib.amq_maplet_capacity_bound(self._h()))

    @property
    def shape(self) -> MapletShape:
        """Operator, value width, mode and sizes (amq_maplet_get_shape)."""
        s = _Shape()
        check(lib.amq_maplet_get_shape(self._h(), ctypes.byref(s)))
        return MapletShape(op_name(s.op), s.value_bits, bool(s.multiset),
                           bool(s.is_static), s.key_bits, s.remainder_bits,
                           s.slots, s.used_slots, s.distinct)

    @property
    def op(self) -> str:
        """The operator's C name: "sum", "max", "min" or "or"."""
        return self.shape.op

    @property
    def mode(self) -> str:
        """"combine" (one entry per fingerprint), "multiset" (one slot per
        pair) or "static", as `amq info` names them."""
        s = self.shape
        return "static" if s.is_static else \
            "multiset" if s.multiset else "combine"

    @property
    def value_bits(self) -> int:
        return self.shape.value_bits

    @property
    def multiset(self) -> bool:
        return self.shape.multiset

    @property
    def key_bits(self) -> int:
        """Exact mode: K (keys are integers below 2**K); 0 otherwise."""
        return self.shape.key_bits

    @property
    def total(self) -> int:
        """What amq_filter_items counts: under sum the total of all
        counts, in multiset mode the stored pairs, otherwise the puts."""
        return int(lib.amq_filter_items(self._h()))

    def __len__(self) -> int:
        """The entries: distinct fingerprints (a static maplet: keys)."""
        return self.shape.distinct

    # ---- enumeration ----

    def entries(self) -> Iterator[Tuple[int, int, int]]:
        """(fingerprint, value, stored pairs) for every fingerprint held,
        in increasing order (stored pairs is 1 in combine mode). The
        maplet must not change meanwhile (RuntimeError if it does)."""
        m = self._h()
        it = _Iter()
        check(lib.amq_maplet_iter_init(m, ctypes.byref(it)))
        fp, v, e = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        stamp = self._stamp()
        while True:
            if self._stamp() != stamp:
                raise RuntimeError("maplet changed during iteration")
            if not lib.amq_maplet_iter_next(ctypes.byref(it),
                                            ctypes.byref(fp),
                                            ctypes.byref(v),
                                            ctypes.byref(e)):
                return
            yield fp.value, v.value, e.value

    def _stamp(self) -> Tuple[int, ...]:
        s = self.shape
        return (self.total, s.slots, s.used_slots, s.distinct)

    def items(self) -> Iterator[Tuple[int, int]]:  # type: ignore[override]
        """(fingerprint, value) for every fingerprint held, in increasing
        order. (The keys themselves are not stored: exact_items() gives
        them back in exact mode.)"""
        for fp, v, _ in self.entries():
            yield fp, v

    def __iter__(self) -> Iterator[int]:
        """The fingerprints held, in increasing order."""
        for fp, _, _ in self.entries():
            yield fp

    def values(self) -> Iterator[int]:
        """The value of every fingerprint held."""
        for _, v, _ in self.entries():
            yield v

    def exact_items(self) -> Iterator[Tuple[int, int]]:
        """Exact mode: (key, value) for every key held, in fingerprint
        order."""
        if not self._exact():
            raise UnsupportedError(_ST_UNSUPPORTED, "the maplet is not in "
                                   "exact mode (key_bits=K)")
        for fp, v, _ in self.entries():
            yield self.exact_key(fp), v

    # ---- what it is ----

    def info(self) -> Dict[str, Any]:
        """What `amq info --json` says about a maplet file, as a dict."""
        d = super().info()
        s = self.shape
        d.update({"items": self.total, "keys": s.distinct,
                  "maplet_op": s.op, "value_bits": s.value_bits,
                  "multiset": s.multiset, "static": s.is_static,
                  "exact_key_bits": s.key_bits, "fingerprints": s.distinct,
                  "used_slots": s.used_slots})
        return d

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.%s closed>" % type(self).__name__
        return "<amq.%s %s, %d entries, fpr bound %.3g>" % (
            type(self).__name__, self.spec, len(self), self.fpr_bound)


class StaticMap(Maplet):
    """The static maplet (Bloomier filter): bumped Ribbon retrieval of each
    key's value beside a membership filter, built once from every pair:
    log2(1/fpr) + value_bits bits per key plus under 3%.

    StaticMap(keys, values, fpr, op="sum", value_bits=8) or
    StaticMap(mapping, fpr=...): repeated keys have their values combined
    by op. member picks the membership filter ("ribbon", the default, or
    "fuse8", "fuse16", "xor8", ...). Every key it was built with gets its
    exact value; a key it was not built with is found with probability
    fpr_bound, and then its value is arbitrary. It cannot change: updates
    raise UnsupportedError, and there is no iteration.
    """

    __slots__ = ()
    _what = "static maplet"

    def __init__(self, keys: Any, values: Any = None,
                 fpr: Optional[float] = 0.01, op: Optional[str] = None,
                 value_bits: Optional[int] = None, *,
                 member: Optional[str] = None, spec: Optional[str] = None,
                 keyed: bool = False, seed: int = 0) -> None:
        self._p = None
        made = StaticMap.build(keys, values, fpr, op, value_bits,
                               member=member, spec=spec, keyed=keyed,
                               seed=seed)
        self._p, made._p = made._p, None

    @classmethod
    def build(cls, keys: Any, values: Any = None,  # type: ignore[override]
              fpr: Optional[float] = 0.01, op: Optional[str] = None,
              value_bits: Optional[int] = None, *, multiset: bool = False,
              spec: Optional[str] = None, keyed: bool = False,
              seed: int = 0, **more: Any) -> "StaticMap":
        """StaticMap(keys, values, fpr, op, value_bits, member=...)."""
        if multiset:
            raise UnsupportedError(_ST_UNSUPPORTED, "a static maplet has no "
                                   "multiset mode")
        return super().build(keys, values, fpr, op, value_bits, spec=spec,
                             keyed=keyed, seed=seed, **more)

    @classmethod
    def _spec_base(cls) -> str:
        return "smaplet"

    @classmethod
    def _build_params(cls, more: Dict[str, Any]) -> List[Tuple[str, Any]]:
        member = more.pop("member", None)
        super()._build_params(more)
        return [] if member is None else [("member", member)]

    def _mutable(self) -> Any:
        self._h()
        raise UnsupportedError(_ST_UNSUPPORTED, "a static maplet is built "
                               "once from all its pairs")

    def entries(self) -> Iterator[Tuple[int, int, int]]:
        self._h()
        raise UnsupportedError(_ST_UNSUPPORTED, "a static maplet does not "
                               "list its entries")

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.StaticMap closed>"
        return "<amq.StaticMap %s, %d keys, fpr bound %.3g>" % (
            self.spec, len(self), self.fpr_bound)


def _address(buf: Any) -> int:
    """The first byte of a NumPy array or a ctypes array."""
    if hasattr(buf, "ctypes"):
        return int(buf.ctypes.data)
    return ctypes.addressof(buf)


def _hash_buffer(hashes: Any) -> Tuple[Any, int]:
    """Pre-hashed keys as one uint64 buffer: (buffer, n)."""
    _keys.refuse_single(hashes)
    np = _keys.numpy_of(hashes)
    if np is not None:
        if hashes.ndim != 1 or hashes.dtype.kind not in "iu":
            raise TypeError("hashes: expected a 1-D integer array, got %s" %
                            hashes.dtype)
        a = np.ascontiguousarray(hashes, dtype="<u8")
        return (a if len(a) else np.zeros(1, dtype="<u8")), len(a)
    try:
        a = array("Q", hashes)
    except OverflowError:
        raise OverflowError("hashes are unsigned 64-bit values") from None
    out = (ctypes.c_uint64 * max(len(a), 1))()
    ctypes.memmove(out, a.buffer_info()[0], 8 * len(a))
    return out, len(a)


__all__ = ["Maplet", "StaticMap", "MapletShape", "OPS", "combine",
           "op_name"]
