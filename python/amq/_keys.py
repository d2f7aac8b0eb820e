"""Keys of every shape users have, turned into the 64-bit hashes every
structure derives from, in C and in chunks.

A key is one of:

- str: its UTF-8 bytes ("é" and "é".encode() are the same key);
- bytes, bytearray, a 1-D memoryview of bytes: those bytes;
- int (and NumPy integer scalars): its 8 bytes little-endian, two's
  complement, so 0 <= k < 2**64 and -2**63 <= k < 0 (the `--binary` keys of
  the amq tool, and a NumPy int64/uint64 array's elements, are the same
  keys).

A collection of keys is an iterable of those, or a buffer with no per-key
Python work: a NumPy integer array (any width: each element is the int key
it holds), a NumPy bytes array (dtype S: each element without its padding
NULs, as NumPy shows it), a NumPy str array (dtype U: UTF-8), an
array.array of 8-byte integers ('q', 'Q').
"""

import ctypes
import itertools
import operator
import sys
from array import array
from typing import Any, Iterable, Iterator, List, Optional, Tuple, Union

from ._errors import check
from ._native import lib

Key = Union[str, bytes, bytearray, memoryview, int]
CHUNK = 1 << 16

_INT64_FORMATS = {"q", "Q", "l", "L", "<q", "<Q", "<l", "<L", "=q", "=Q",
                  "=l", "=L", "@q", "@Q", "@l", "@L"}
_BYTES_FORMATS = {"B", "b", "c", "@B", "@b", "@c", "=B", "<B"}


def key_bytes(k: Any) -> bytes:
    """One key as the bytes that are hashed."""
    if isinstance(k, str):
        return k.encode()
    if isinstance(k, (bytes, bytearray)):
        return bytes(k)
    if isinstance(k, memoryview):
        return k.tobytes()
    if isinstance(k, int) or hasattr(k, "__index__"):
        try:
            v = operator.index(k)
        except TypeError:
            pass
        else:
            return _int_bytes(v)
    raise TypeError("amq keys are str, bytes or int, not %s" %
                    type(k).__name__)


def _int_bytes(v: int) -> bytes:
    if not -(1 << 63) <= v < (1 << 64):
        raise OverflowError("amq int keys are 64-bit: %d is out of range "
                            "[-2**63, 2**64)" % v)
    return (v & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")


def numpy_of(obj: Any) -> Optional[Any]:
    """The numpy module when obj is a NumPy array (NumPy stays optional:
    it is never imported here, only found if the caller did)."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return np
    return None


def _is_single(keys: Any) -> bool:
    if isinstance(keys, memoryview):
        return keys.format in _BYTES_FORMATS
    return isinstance(keys, (str, bytes, bytearray, int))


def _address(buf: Any) -> Tuple[int, Any]:
    """(address, keep-alive) of a C-contiguous buffer's first byte."""
    mv = memoryview(buf).cast("B")
    if not mv.readonly:
        c = (ctypes.c_char * len(mv)).from_buffer(mv)
        return ctypes.addressof(c), (c, mv)
    data = mv.tobytes()
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0, \
        data


class _Strided:
    """n keys at a fixed stride: key i is lens[i] (or stride) bytes at
    addr + i * stride."""

    __slots__ = ("addr", "stride", "lens", "n", "keep")

    def __init__(self, addr: int, stride: int, lens: int, n: int,
                 keep: Any) -> None:
        self.addr, self.stride, self.lens, self.n = addr, stride, lens, n
        self.keep = keep

    def hash(self, hasher: Any, start: int, m: int, out: int) -> None:
        lens = self.lens + 8 * start if self.lens else None
        check(lib.amq_hash64_strided(hasher, self.addr + start * self.stride,
                                     self.stride, lens, m, out))


def _numpy_strided(np: Any, a: Any) -> _Strided:
    if a.ndim != 1:
        raise ValueError("amq keys: expected a 1-D array, got %d-D (use "
                         ".ravel())" % a.ndim)
    kind = a.dtype.kind
    if kind in "iub":
        want = "<i8" if kind == "i" else "<u8"
        a = np.ascontiguousarray(a, dtype=want)
        return _Strided(a.ctypes.data, 8, 0, len(a), a)
    if kind == "U":
        a = np.char.encode(a, "utf-8")
        kind = "S"
    if kind == "S":
        a = np.ascontiguousarray(a)
        if a.dtype.itemsize == 0:
            a = a.astype("S1")
        lens = np.ascontiguousarray(np.char.str_len(a), dtype=np.uintp)
        return _Strided(a.ctypes.data, a.dtype.itemsize, lens.ctypes.data,
                        len(a), (a, lens))
    raise TypeError("amq keys: a NumPy array of %s; keys are integers, "
                    "bytes (S) or str (U), or an object array of them" %
                    a.dtype)


def strided(keys: Any) -> Optional[_Strided]:
    """Keys held in a buffer of fixed-width records, or None."""
    np = numpy_of(keys)
    if np is not None:
        if keys.dtype.kind == "O":
            return None
        return _numpy_strided(np, keys)
    if isinstance(keys, array) and keys.typecode in "qQ":
        addr, keep = _address(keys)
        return _Strided(addr, 8, 0, len(keys), keep)
    if isinstance(keys, memoryview) and keys.format in _INT64_FORMATS \
            and keys.ndim == 1 and keys.c_contiguous:
        addr, keep = _address(keys)
        return _Strided(addr, 8, 0, len(keys), keep)
    return None


def _int_chunk(chunk: list) -> Optional[array]:
    """A list of int keys as 8-byte records, at C speed when it can be."""
    for code in ("Q", "q"):
        try:
            return array(code, chunk)
        except (OverflowError, TypeError):
            continue
    return None


def _ascii_join(chunk: List[Any]) -> Optional[bytes]:
    """A chunk of str keys as one buffer when every key is ASCII (then a
    key's length in characters is its length in bytes), else None."""
    try:
        text = "".join(chunk)
    except TypeError:
        return None
    if not text.isascii():
        return None
    return text.encode("ascii")


def _packed_hash(hasher: Any, chunk: list, out: int) -> None:
    if chunk and type(chunk[0]) is int:
        ints = _int_chunk(chunk)
        if ints is not None:
            addr, keep = _address(ints)
            check(lib.amq_hash64_strided(hasher, addr, 8, None, len(chunk),
                                         out))
            del keep
            return
    data = _ascii_join(chunk) if chunk and type(chunk[0]) is str else None
    if data is None:
        try:
            data = b"".join(chunk)
        except TypeError:
            chunk = [key_bytes(k) for k in chunk]
            data = b"".join(chunk)
    offsets = array("Q", itertools.accumulate(map(len, chunk), initial=0))
    check(lib.amq_hash64_batch(hasher, data, offsets.buffer_info()[0],
                               len(chunk), out))


def _list_chunks(keys: Iterable[Any]) -> Iterator[list]:
    if isinstance(keys, list) and len(keys) <= CHUNK:
        yield keys
        return
    if isinstance(keys, (list, tuple)):
        for i in range(0, len(keys), CHUNK):
            yield list(keys[i:i + CHUNK])
        return
    it = iter(keys)
    while True:
        chunk = list(itertools.islice(it, CHUNK))
        if not chunk:
            return
        yield chunk


def refuse_single(keys: Any) -> None:
    if _is_single(keys):
        raise TypeError("expected a collection of keys, got a single key "
                        "(use add() or `in` for one key)")


ORDER = 4  # AMQ_HASH_ORDER: range filters keep keys in order


def hash_kind(hasher: Any) -> int:
    """The kind of a hasher given as a pointer or a byref."""
    obj = getattr(hasher, "_obj", None)
    return int(obj.kind if obj is not None else hasher.contents.kind)


def int_keys(keys: Any) -> bool:
    """Whether keys are integers (a NumPy integer array, array('q'/'Q'),
    or a sequence whose first key is an int)."""
    np = numpy_of(keys)
    if np is not None:
        return keys.dtype.kind in "iu"
    if isinstance(keys, array):
        return keys.typecode in "qQ"
    try:
        return len(keys) > 0 and type(keys[0]) is int
    except TypeError:
        return False


def hashed(hasher: Any, keys: Any) -> Iterator[Tuple[int, int]]:
    """(address of m hashes, m) for each chunk of keys, in order. The
    buffer is reused: consume a chunk before asking for the next. Under
    the order map (a range filter's) integer keys are their own values,
    not their bytes."""
    refuse_single(keys)
    ordered = hash_kind(hasher) == ORDER
    if ordered and int_keys(keys) and numpy_of(keys) is not None:
        yield from hash_buffers(keys)
        return
    buf = (ctypes.c_uint64 * CHUNK)()
    out = ctypes.addressof(buf)
    s = strided(keys)
    if s is not None:
        for start in range(0, s.n, CHUNK):
            m = min(CHUNK, s.n - start)
            s.hash(hasher, start, m, out)
            yield out, m
        return
    for chunk in _list_chunks(keys):
        if ordered and chunk and type(chunk[0]) is int:
            yield from hash_buffers(chunk)  # integers are their own values
            continue
        _packed_hash(hasher, chunk, out)
        yield out, len(chunk)


def hash_buffers(hashes: Any) -> Iterator[Tuple[int, int]]:
    """(address, m) chunks of 64-bit hash values given as a NumPy uint64
    array, an array('Q') or an iterable of ints (the pre-hashed path)."""
    refuse_single(hashes)
    np = numpy_of(hashes)
    if np is not None:
        if hashes.ndim != 1 or hashes.dtype.kind not in "iu":
            raise TypeError("hashes: expected a 1-D integer array, got %s" %
                            hashes.dtype)
        a = np.ascontiguousarray(hashes, dtype="<u8")
        for start in range(0, len(a), CHUNK):
            m = min(CHUNK, len(a) - start)
            yield a.ctypes.data + 8 * start, m
        return
    if isinstance(hashes, array) and hashes.typecode in "qQ":
        addr, keep = _address(hashes)
        for start in range(0, len(hashes), CHUNK):
            yield addr + 8 * start, min(CHUNK, len(hashes) - start)
        del keep
        return
    for chunk in _list_chunks(hashes):
        try:
            a = array("Q", chunk)
        except OverflowError:
            raise OverflowError("hashes are unsigned 64-bit values") \
                from None
        addr, keep = _address(a)
        yield addr, len(a)
        del keep


def count_of(keys: Any) -> Optional[int]:
    """len(keys) when it is known without iterating."""
    try:
        return len(keys)
    except TypeError:
        return None
