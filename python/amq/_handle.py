"""The life of a C object owned by a Python object: one owner per C
pointer, freed once (close(), a with block, or garbage collection), and
every use after close() raising ClosedError. Copies and pickles go through
the object's frame bytes, so each copy owns its own C object and hashes
stay the same in every process."""

import ctypes
from typing import Any, Callable, Optional, Type, TypeVar

from ._errors import ClosedError, check
from ._native import Diag

T = TypeVar("T", bound="Handle")


class Handle:
    """Base of every bound object: holds the C pointer."""

    __slots__ = ("_p", "__weakref__")
    _free: Optional[Callable[[Any], None]] = None
    _what = "object"

    def __init__(self) -> None:
        self._p: Any = None

    @classmethod
    def _wrap(cls: Type[T], p: Any) -> T:
        obj = cls.__new__(cls)
        obj._p = p
        return obj

    def _h(self) -> Any:
        p = getattr(self, "_p", None)
        if not p:
            raise ClosedError("the %s is closed" % self._what)
        return p

    @property
    def closed(self) -> bool:
        return not getattr(self, "_p", None)

    def close(self) -> None:
        """Release the C object now (an opened file: its mapping too).
        Closing twice is fine; any other use afterwards raises
        ClosedError."""
        p = getattr(self, "_p", None)
        if p:
            self._p = None
            type(self)._free(p)  # type: ignore[misc]

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # Subclasses give the frame.
    def to_bytes(self) -> bytes:
        raise NotImplementedError

    @classmethod
    def from_bytes(cls: Type[T], data: Any) -> T:
        raise NotImplementedError

    def copy(self: T) -> T:
        """An independent, modifiable copy (of a view too)."""
        return type(self).from_bytes(self.to_bytes())

    def __copy__(self: T) -> T:
        return self.copy()

    def __deepcopy__(self: T, memo: Any) -> T:
        return self.copy()

    def __reduce__(self) -> Any:
        return (type(self).from_bytes, (self.to_bytes(),))


def frame_bytes(data: Any) -> bytes:
    """A bytes-like frame as bytes (an int is refused, not taken as a
    length; a str is refused, not encoded)."""
    if isinstance(data, (str, int)):
        raise TypeError("expected a bytes-like frame, not %s" %
                        type(data).__name__)
    return memoryview(data).tobytes()


def load_frame(loader: Any, data: Any, *extra: Any) -> Any:
    """The C object a frame holds, read by loader(buf, len, [extra...,]
    options, &out, diag) into a copy; its status raised with the
    diagnostic."""
    buf = frame_bytes(data)
    handle = ctypes.c_void_p()
    diag = Diag()
    check(loader(buf, len(buf), *extra, None, ctypes.byref(handle),
                 ctypes.byref(diag)), diag)
    return handle


def save_frame(size_of: Any, save: Any, p: Any, *extra: Any) -> bytes:
    """The frame of C object p: size_of(p) bytes written by
    save(p, [extra...,] buf, cap, &written)."""
    size = size_of(p)
    buf = ctypes.create_string_buffer(max(size, 1))
    written = ctypes.c_size_t()
    check(save(p, *extra, buf, size, ctypes.byref(written)))
    return buf.raw[:written.value]


def read_file(path: Any) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()
