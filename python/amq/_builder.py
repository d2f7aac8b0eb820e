"""amq.Builder: a filter from keys whose number is not known in advance,
for every type alike (amq/builder.h)."""

import ctypes
from typing import Any, NoReturn, Optional

from . import _keys
from ._errors import ClosedError, check
from ._filter import HASH_SIPHASH, Filter, options
from ._handle import Handle
from ._native import DP, HP, PP, Diag, OP, P, S, c_size_t, cstr, declare, \
    lib

declare({
    "amq_builder_new": (S, [ctypes.c_char_p, OP, PP, DP]),
    "amq_builder_free": (None, [P]),
    "amq_builder_hasher": (HP, [P]),
    "amq_builder_hash": (ctypes.c_uint64, [P, ctypes.c_char_p, c_size_t]),
    "amq_builder_add": (S, [P, ctypes.c_char_p, c_size_t]),
    "amq_builder_add_hash": (S, [P, ctypes.c_uint64]),
    "amq_builder_add_hashes": (S, [P, P, c_size_t]),
    "amq_builder_count": (ctypes.c_uint64, [P]),
    "amq_builder_set_threads": (S, [P, ctypes.c_uint]),
    "amq_builder_threads": (ctypes.c_uint, [P]),
    "amq_builder_finish": (S, [P, ctypes.c_double, PP, DP]),
})


class Builder(Handle):
    """Keys in, one filter out, without knowing the count first.

    Builder(spec) parses the spec and fixes the hasher once (keyed=True:
    SipHash-2-4 under a fresh random key, which the filter keeps; seed:
    the XXH3/XXH64 seed); add() and add_many() hash each key as it comes
    and hold its 8-byte hash; finish(fpr) builds the filter:

    - a static type (xor8/16/32, fuse8/16/32, ribbon) from the distinct
      keys: repeats are dropped before sizing, so every key given twice
      gives the filter of the keys given once;
    - a dynamic type sized for every key taken (a counting filter holds
      each copy), filled in the order taken.

    finish() sorts and builds a static type on several threads (by default
    one per core the process may run on, at most 16; threads=1 keeps it to
    the calling thread); the filter is the same bytes for every count.

    finish() releases the builder (its keys' memory too): adding or
    finishing again raises ClosedError, like a closed file. finish(fpr,
    keep=True) keeps the keys, to take more or finish again (at another
    rate, say). A finish that fails keeps every key either way. As a
    context manager the builder is released at the end of the block.

        >>> with amq.Builder("fuse8") as b:
        ...     n = b.add_many(range(1000))
        ...     f = b.finish()
    """

    __slots__ = ("_spec", "_finished")
    _free = lib.amq_builder_free
    _what = "builder"

    def __init__(self, spec: str, *, keyed: bool = False,
                 seed: int = 0, threads: int = 0) -> None:
        super().__init__()
        self._spec = spec
        self._finished = False
        handle = ctypes.c_void_p()
        diag = Diag()
        opt = options(keyed, seed)
        check(lib.amq_builder_new(cstr(spec), ctypes.byref(opt),
                                  ctypes.byref(handle), ctypes.byref(diag)),
              diag)
        self._p = handle
        self.threads = threads

    def _h(self) -> Any:
        if not getattr(self, "_p", None) and getattr(self, "_finished",
                                                     False):
            raise ClosedError("the builder is finished (finish(fpr, "
                              "keep=True) keeps it open)")
        return super()._h()

    # ---- keys in ----

    def add(self, key: "_keys.Key") -> None:
        """Take one key (str, bytes-like or int), hashed now."""
        k = _keys.key_bytes(key)
        check(lib.amq_builder_add(self._h(), k, len(k)))

    def add_many(self, keys: Any) -> int:
        """Take every key of a collection (an iterable of keys, or a NumPy
        integer/bytes/str array, hashed in C with no per-key Python
        work). Returns the number taken. NoMemoryError leaves the keys of
        earlier chunks (65536 keys each) taken."""
        b = self._h()
        total = 0
        for addr, m in _keys.hashed(lib.amq_builder_hasher(b), keys):
            check(lib.amq_builder_add_hashes(b, addr, m))
            total += m
        return total

    def add_hashes(self, hashes: Any) -> int:
        """Take keys already hashed with this builder's hasher (hash(), or
        the caller's own 64-bit hashes for an unkeyed builder): a NumPy
        uint64 array, array('Q') or iterable of ints."""
        b = self._h()
        total = 0
        for addr, m in _keys.hash_buffers(hashes):
            check(lib.amq_builder_add_hashes(b, addr, m))
            total += m
        return total

    def hash(self, key: "_keys.Key") -> int:
        """The key's 64-bit hash under the hasher the filter will have."""
        k = _keys.key_bytes(key)
        return int(lib.amq_builder_hash(self._h(), k, len(k)))

    @property
    def count(self) -> int:
        """Keys taken so far, repeats included."""
        return int(lib.amq_builder_count(self._h()))

    def __len__(self) -> int:
        return self.count

    @property
    def threads(self) -> int:
        """The threads finish() will use (0 given: one per core, at most
        16)."""
        return int(lib.amq_builder_threads(self._h()))

    @threads.setter
    def threads(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError("threads must be an int, not %s" %
                            type(n).__name__)
        if n < 0:
            raise ValueError("threads must be 0 (one per core) or more")
        check(lib.amq_builder_set_threads(self._h(), min(n, 1 << 16)))

    @property
    def spec(self) -> str:
        """The spec the builder was made for."""
        return self._spec

    @property
    def keyed(self) -> bool:
        """True when the filter will hash with SipHash under a secret
        key."""
        h = lib.amq_builder_hasher(self._h()).contents
        return bool(h.kind == HASH_SIPHASH)

    # ---- the filter out ----

    def finish(self, fpr: Optional[float] = None, *,
               keep: bool = False) -> Filter:
        """The filter of every key taken, for false-positive rate fpr
        (0 < fpr < 1; None when the spec fixes the parameters, as "fuse8"
        or "bloom:m=8192,k=5"). Errors are those of making the filter
        (SpecError, InvalidError for a rate the type cannot reach,
        FullError, ...); the builder then keeps its keys. On success the
        builder is released unless keep is true."""
        b = self._h()
        if fpr is None:
            rate = 0.0
        elif isinstance(fpr, bool) or not hasattr(fpr, "__float__"):
            raise TypeError("fpr must be a number, not %s" %
                            type(fpr).__name__)
        else:
            rate = float(fpr)
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_builder_finish(b, rate, ctypes.byref(handle),
                                     ctypes.byref(diag)), diag)
        f = Filter._wrap(handle)
        if not keep:
            self._finished = True
            self.close()
        return f

    # A builder has no frame: its keys exist only as hashes in memory.
    def _no_copy(self) -> NoReturn:
        raise TypeError("an amq.Builder cannot be copied or pickled; "
                        "finish it and copy the filter")

    def copy(self) -> "Builder":
        self._no_copy()

    def __reduce__(self) -> Any:
        self._no_copy()

    def __repr__(self) -> str:
        if self.closed:
            state = "finished" if self._finished else "closed"
            return "<amq.Builder %s, %s>" % (self._spec, state)
        return "<amq.Builder %s, %d keys>" % (self._spec, self.count)


__all__ = ["Builder"]
