"""amq: approximate membership filters (Bloom family, cuckoo, quotient, xor,
binary fuse, Ribbon, sketches) from the amq C library, through ctypes.

    >>> import amq
    >>> f = amq.Filter("blocked", capacity=1_000_000, fpr=0.01)
    >>> f.add("alice")
    >>> "alice" in f, "bob" in f
    (True, False)
    >>> f.add_many([b"k%d" % i for i in range(1000)])
    1000
    >>> f.save("users.amq")
    >>> g = amq.Filter.open("users.amq")    # mapped, read in place

Keys are bytes-like objects or str (encoded as UTF-8, so "é" and
"é".encode() are the same key). Static types (xor8, fuse8, ribbon, ...) are
built once from every key with Filter.build(spec, keys, fpr). Every library
status becomes an exception: amq.Error and its subclasses, which also derive
from the matching built-in (MemoryError, ValueError, KeyError, OSError).

Bulk calls (add_many, contains_many, Filter.build) hash and insert or query
in C, one call per chunk of CHUNK keys; bench/python_bulk.py measures them.
A Filter is not safe to modify from several threads at once; queries from
several threads are safe while nobody modifies it.
"""

import ctypes
import itertools
import os
from array import array

from . import _native
from ._native import lib, Diag, Hasher, Options

__all__ = ["Filter", "Error", "NoMemoryError", "InvalidError",
           "SizeOverflowError", "UnsupportedError", "FullError", "SpecError",
           "CorruptError", "VersionError", "ChecksumError",
           "IncompatibleError", "ReadOnlyError", "NotFoundError", "FileError",
           "HashError", "KindError", "types", "version", "curve_bits",
           "curve_fpr", "CAP_REMOVE", "CAP_COUNT", "CAP_UNION",
           "CAP_INTERSECT", "CAP_CONCURRENT", "CAP_ESTIMATE", "CAP_STATIC",
           "CAP_SKETCH", "CAP_FORGETS"]

CAP_REMOVE = 0x01
CAP_COUNT = 0x02
CAP_UNION = 0x04
CAP_INTERSECT = 0x08
CAP_CONCURRENT = 0x10
CAP_ESTIMATE = 0x20
CAP_STATIC = 0x40
CAP_SKETCH = 0x80
CAP_FORGETS = 0x100

HASH_SIPHASH = 3
CHUNK = 1 << 16

# ---- errors ------------------------------------------------------------------


class Error(Exception):
    """A failed amq call: .status (the C amq_status value), .name
    ("AMQ_ERR_FULL"), .detail (the library's diagnostic, if any)."""

    def __init__(self, status, detail=""):
        self.status = status
        self.name = lib.amq_status_name(status).decode()
        self.detail = detail
        msg = lib.amq_strerror(status).decode()
        super().__init__(msg + (": " + detail if detail else ""))


class NoMemoryError(Error, MemoryError): pass          # noqa: E701
class InvalidError(Error, ValueError): pass            # noqa: E701
class SizeOverflowError(Error, OverflowError): pass    # noqa: E701
class UnsupportedError(Error, TypeError): pass         # noqa: E701
class FullError(Error): pass                           # noqa: E701
class SpecError(Error, ValueError): pass               # noqa: E701
class CorruptError(Error, ValueError): pass            # noqa: E701
class VersionError(Error, ValueError): pass            # noqa: E701
class ChecksumError(CorruptError): pass                # noqa: E701
class IncompatibleError(Error, ValueError): pass       # noqa: E701
class ReadOnlyError(Error): pass                       # noqa: E701
class NotFoundError(Error, KeyError): pass             # noqa: E701
class FileError(Error, OSError): pass                  # noqa: E701
class HashError(Error, ValueError): pass               # noqa: E701
class KindError(Error, ValueError): pass               # noqa: E701


# Pinned status values (include/amq/status.h) to their exceptions.
_ERRORS = {1: NoMemoryError, 2: InvalidError, 3: SizeOverflowError,
           4: UnsupportedError, 5: FullError, 6: SpecError, 7: CorruptError,
           8: VersionError, 9: ChecksumError, 10: IncompatibleError,
           11: ReadOnlyError, 14: NotFoundError, 15: FileError, 16: HashError,
           17: KindError}


def _check(status, diag=None):
    if status != 0:
        detail = diag.message.decode(errors="replace") if diag else ""
        raise _ERRORS.get(status, Error)(status, detail)


# ---- keys --------------------------------------------------------------------


def _key(k):
    if isinstance(k, str):
        return k.encode()
    if isinstance(k, (bytes, bytearray, memoryview)):
        return bytes(k)
    raise TypeError("amq keys are bytes or str, not %s" % type(k).__name__)


def _pack(keys):
    """A chunk of keys as (data, offsets): key i is data[o[i]:o[i+1]]."""
    try:
        data = b"".join(keys)
    except TypeError:
        keys = [_key(k) for k in keys]
        data = b"".join(keys)
    offsets = array("Q", itertools.accumulate(map(len, keys), initial=0))
    return data, offsets


def _chunks(keys):
    if isinstance(keys, (str, bytes, bytearray, memoryview)):
        raise TypeError("expected an iterable of keys, got a single key "
                        "(use add()/in for one key)")
    if isinstance(keys, list) and len(keys) <= CHUNK:
        yield keys
        return
    it = iter(keys)
    while True:
        chunk = list(itertools.islice(it, CHUNK))
        if not chunk:
            return
        yield chunk


def _hash_chunk(hasher, chunk):
    """The 64-bit hashes of a chunk of keys, computed in one C call."""
    data, offsets = _pack(chunk)
    n = len(chunk)
    hashes = (ctypes.c_uint64 * n)()
    _check(lib.amq_hash64_batch(hasher, data, offsets.buffer_info()[0], n,
                                hashes))
    return hashes


# ---- module functions ----------------------------------------------------------


def version():
    """The linked library's version, "MAJOR.MINOR.PATCH"."""
    return lib.amq_version().decode()


def types():
    """Every registered structure type: a list of dicts with name, type_id,
    caps (CAP_* bits), summary and params."""
    out = []
    for i in range(lib.amq_filter_type_count()):
        t = lib.amq_filter_type_at(i).contents
        out.append({"name": t.name.decode(), "type_id": t.type_id,
                    "caps": t.caps, "summary": t.summary.decode(),
                    "params": (t.params or b"").decode()})
    return out


def curve_bits(spec, fpr):
    """Bits per key the type needs for false-positive rate fpr."""
    out = ctypes.c_double()
    _check(lib.amq_curve_bits(spec.encode(), fpr, ctypes.byref(out)))
    return out.value


def curve_fpr(spec, bits_per_key):
    """False-positive rate of the type at bits_per_key bits per key."""
    out = ctypes.c_double()
    _check(lib.amq_curve_fpr(spec.encode(), bits_per_key, ctypes.byref(out)))
    return out.value


def _options(keyed, seed):
    opt = Options()
    if keyed:
        opt.hash = HASH_SIPHASH  # with no key: the library draws one
    opt.hash_seed = seed
    return opt


# ---- the filter ----------------------------------------------------------------


class Filter:
    """One filter of any type, created from a spec string such as "bloom",
    "blocked", "sbbf", "cuckoo:fp=12", "qf" (amq.types() lists them).

    Filter(spec, capacity, fpr) makes an empty dynamic filter sized for
    `capacity` keys at rate `fpr` (or from explicit parameters in the spec
    with both omitted). keyed=True hashes with SipHash-2-4 under a fresh
    random key, for keys an adversary may choose (the key is saved with the
    filter: keep saved files secret). seed picks the XXH3/XXH64 seed.
    """

    __slots__ = ("_f", "__weakref__")

    def __init__(self, spec, capacity=None, fpr=None, *, keyed=False,
                 seed=0):
        self._f = None
        t = lib.amq_filter_type_find(spec.encode())
        if t and t.contents.caps & CAP_STATIC:
            raise UnsupportedError(4, "'%s' is static: build it from all "
                                   "its keys with Filter.build(spec, keys, "
                                   "fpr)" % spec)
        if (capacity is None) != (fpr is None):
            raise ValueError("give both capacity and fpr, or neither (then "
                             "the spec must carry explicit sizes)")
        handle = ctypes.c_void_p()
        diag = Diag()
        opt = _options(keyed, seed)
        _check(lib.amq_filter_new(spec.encode(), capacity or 0, fpr or 0.0,
                                  ctypes.byref(opt), ctypes.byref(handle),
                                  ctypes.byref(diag)), diag)
        self._f = handle

    @classmethod
    def _wrap(cls, handle):
        f = cls.__new__(cls)
        f._f = handle
        return f

    @classmethod
    def build(cls, spec, keys, fpr=None, *, keyed=False, seed=0):
        """A filter built from all its keys at once: the only way to make a
        static type (xor8/16/32, fuse8/16/32, ribbon); for a dynamic type
        the same as Filter(spec, len(keys), fpr) plus add_many(keys).
        Duplicate keys are fine."""
        opt = _options(keyed, seed)
        hasher = Hasher()
        _check(lib.amq_filter_resolve_hasher(spec.encode(), ctypes.byref(opt),
                                             ctypes.byref(hasher)))
        parts = [_hash_chunk(hasher, c) for c in _chunks(keys)]
        n = sum(len(p) for p in parts)
        hashes = (ctypes.c_uint64 * max(n, 1))()
        pos = 0
        for p in parts:
            ctypes.memmove(ctypes.byref(hashes, 8 * pos), p, 8 * len(p))
            pos += len(p)
        key = (ctypes.c_uint8 * 16).from_buffer_copy(bytes(hasher.key))
        opt.hash = hasher.kind
        opt.hash_seed = hasher.seed
        opt.hash_key = ctypes.addressof(key) if keyed else None
        handle = ctypes.c_void_p()
        diag = Diag()
        _check(lib.amq_filter_build(spec.encode(), hashes, n, fpr or 0.0,
                                    ctypes.byref(opt), ctypes.byref(handle),
                                    ctypes.byref(diag)), diag)
        return cls._wrap(handle)

    @classmethod
    def open(cls, path):
        """Open a saved filter read-only: the file is mapped and read in
        place (nothing copied); updates raise ReadOnlyError."""
        return cls._from_file(lib.amq_filter_open_file, path)

    @classmethod
    def load(cls, path):
        """Read a saved filter into a modifiable copy."""
        return cls._from_file(lib.amq_filter_load_file, path)

    @classmethod
    def _from_file(cls, fn, path):
        handle = ctypes.c_void_p()
        diag = Diag()
        _check(fn(os.fsencode(path), None, ctypes.byref(handle),
                  ctypes.byref(diag)), diag)
        return cls._wrap(handle)

    @classmethod
    def from_bytes(cls, data):
        """A filter from a saved frame (bytes), copied."""
        data = bytes(data)
        handle = ctypes.c_void_p()
        diag = Diag()
        _check(lib.amq_filter_load(data, len(data), None,
                                   ctypes.byref(handle), ctypes.byref(diag)),
               diag)
        return cls._wrap(handle)

    def to_bytes(self):
        """The filter's frame (docs/format.md) as bytes."""
        size = lib.amq_filter_serialized_size(self._h())
        buf = ctypes.create_string_buffer(size)
        written = ctypes.c_size_t()
        _check(lib.amq_filter_save(self._h(), buf, size,
                                   ctypes.byref(written)))
        return buf.raw[:written.value]

    def save(self, path):
        """Save atomically (temporary file, fsync, rename): after an error
        or a crash the old file is intact. Keyed filters get mode 0600."""
        diag = Diag()
        _check(lib.amq_filter_save_file(self._h(), os.fsencode(path),
                                        ctypes.byref(diag)), diag)

    # ---- lifetime ----

    def _h(self):
        if not self._f:
            raise ValueError("the filter is closed")
        return self._f

    def close(self):
        """Release the filter now (and, for an opened file, its mapping)."""
        if self._f:
            lib.amq_filter_free(self._f)
            self._f = None

    def __del__(self):
        f = getattr(self, "_f", None)
        if f:
            lib.amq_filter_free(f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def copy(self):
        """An independent, modifiable copy (of a view too: its own table)."""
        return Filter.from_bytes(self.to_bytes())

    # copy.copy, copy.deepcopy and pickle go through the frame: each object
    # owns its own C filter (two owning one pointer would free it twice),
    # and hashes are the same in every process.
    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (Filter.from_bytes, (self.to_bytes(),))

    # ---- one key ----

    def add(self, key):
        """Add one key. FullError if the structure is full (it is then
        unchanged); UnsupportedError for static types."""
        k = _key(key)
        _check(lib.amq_filter_add(self._h(), k, len(k)))

    def __contains__(self, key):
        k = _key(key)
        return bool(lib.amq_filter_contains(self._h(), k, len(k)))

    def remove(self, key):
        """Remove one copy of a key that was added. NotFoundError if its
        fingerprint is not there. Remove only keys you added: in a
        fingerprint filter a key never added may remove another key's
        fingerprint."""
        k = _key(key)
        _check(lib.amq_filter_remove(self._h(), k, len(k)))

    def count(self, key):
        """Estimated number of times the key was added (types with
        CAP_COUNT: cms, cqf, cuckoo, ...)."""
        k = _key(key)
        out = ctypes.c_uint64()
        h = lib.amq_filter_hash(self._h(), k, len(k))
        _check(lib.amq_filter_count_hash(self._h(), h, ctypes.byref(out)))
        return out.value

    # ---- many keys ----

    def _hasher(self):
        return lib.amq_filter_hasher(self._h())

    def add_many(self, keys):
        """Add every key of an iterable (bytes or str), in order, hashing
        and inserting in C. Returns the number added. On a failure the keys
        before it are in and the exception says which status stopped it."""
        total = 0
        for chunk in _chunks(keys):
            hashes = _hash_chunk(self._hasher(), chunk)
            done = ctypes.c_size_t()
            st = lib.amq_filter_add_batch(self._h(), hashes, len(chunk),
                                          ctypes.byref(done))
            total += done.value
            if st != 0:
                _check(st, None)
        return total

    def update(self, keys):
        """add_many, under the name Python sets and rbloom use."""
        self.add_many(keys)

    def hashes(self, keys):
        """The 64-bit hashes this filter derives everything from, one per
        key (its hasher: XXH3 by default, SipHash when keyed)."""
        out = []
        for chunk in _chunks(keys):
            out.extend(_hash_chunk(self._hasher(), chunk))
        return out

    def contains_many(self, keys):
        """[key in self for key in keys], computed in C."""
        out = []
        for chunk in _chunks(keys):
            hashes = _hash_chunk(self._hasher(), chunk)
            hits = (ctypes.c_uint8 * len(chunk))()
            lib.amq_filter_contains_batch(self._h(), hashes, len(chunk), hits)
            out.extend(map(bool, bytes(hits)))
        return out

    # ---- merging ----

    def merge(self, other):
        """Union with a filter of the same type, shape and hasher, in
        place (IncompatibleError otherwise). Returns self."""
        _check(lib.amq_filter_union(self._h(), other._h()))
        return self

    def intersect(self, other):
        """Intersection in place (Bloom family). Returns self."""
        _check(lib.amq_filter_intersect(self._h(), other._h()))
        return self

    def __or__(self, other):
        return self.copy().merge(other)

    def __ior__(self, other):
        return self.merge(other)

    def __and__(self, other):
        return self.copy().intersect(other)

    def __iand__(self, other):
        return self.intersect(other)

    # ---- properties ----

    @property
    def type(self):
        """The canonical type name, e.g. "blocked"."""
        return lib.amq_filter_info(self._h()).contents.name.decode()

    @property
    def spec(self):
        """The spec with every resolved parameter: rebuilds the same shape."""
        n = lib.amq_filter_describe(self._h(), None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        lib.amq_filter_describe(self._h(), buf, n + 1)
        return buf.value.decode()

    @property
    def caps(self):
        """CAP_* bits of this filter."""
        return lib.amq_filter_caps(self._h())

    @property
    def fpr_bound(self):
        """Certified upper bound on the false-positive probability now."""
        return lib.amq_filter_fpr_bound(self._h())

    @property
    def items(self):
        return lib.amq_filter_items(self._h())

    def __len__(self):
        return lib.amq_filter_items(self._h())

    @property
    def capacity(self):
        return lib.amq_filter_capacity(self._h())

    @property
    def size_bytes(self):
        return lib.amq_filter_size_bytes(self._h())

    @property
    def bits_per_key(self):
        return lib.amq_filter_bits_per_key(self._h())

    @property
    def is_view(self):
        return bool(lib.amq_filter_is_view(self._h()))

    @property
    def keyed(self):
        return self._hasher().contents.kind == HASH_SIPHASH

    def info(self):
        """What `amq info --json` says about a file, as a dict."""
        h = self._hasher().contents
        return {"type": self.type, "params": self.spec,
                "hash": lib.amq_hash_kind_name(h.kind).decode(),
                "keyed": h.kind == HASH_SIPHASH, "items": self.items,
                "capacity": self.capacity, "bytes": self.size_bytes,
                "bits_per_key": self.bits_per_key,
                "fpr_bound": self.fpr_bound,
                "target_fpr": lib.amq_filter_target_fpr(self._h()),
                "view": self.is_view}

    def __repr__(self):
        if not self._f:
            return "<amq.Filter closed>"
        return "<amq.Filter %s, %d items, fpr bound %.3g>" % (
            self.spec, self.items, self.fpr_bound)


del _native
