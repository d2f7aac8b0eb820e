"""Every library status as an exception.

amq.Error carries .status (the C amq_status value), .name ("AMQ_ERR_FULL")
and .detail (the library's diagnostic, if any); each subclass also derives
from the matching built-in exception, so `except ValueError` catches a bad
spec and `except KeyError` a key that is not there.
"""

from typing import Dict, Optional, Type

from ._native import Diag, lib


class ClosedError(ValueError):
    """An object used after close() (like a closed Python file)."""


class Error(Exception):
    """A failed amq call."""

    def __init__(self, status: int, detail: str = "") -> None:
        self.status = status
        self.name = lib.amq_status_name(status).decode()
        self.detail = detail
        msg = lib.amq_strerror(status).decode()
        super().__init__(msg + (": " + detail if detail else ""))

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.status, self.detail))


class NoMemoryError(Error, MemoryError):
    """AMQ_ERR_NOMEM: an allocation failed."""


class InvalidError(Error, ValueError):
    """AMQ_ERR_INVALID: an argument out of range."""


class SizeOverflowError(Error, OverflowError):
    """AMQ_ERR_OVERFLOW: the requested size does not fit (a capacity or
    a table too large for memory or for the format)."""


class UnsupportedError(Error, TypeError):
    """AMQ_ERR_UNSUPPORTED: the type cannot do this (remove on a Bloom
    filter, add on a static filter, ...)."""


class FullError(Error):
    """AMQ_ERR_FULL: the structure has no room; it is unchanged."""


class SpecError(Error, ValueError):
    """AMQ_ERR_SPEC: a spec string names no type or a bad parameter."""


class CorruptError(Error, ValueError):
    """AMQ_ERR_CORRUPT: a frame or file that does not parse."""


class VersionError(Error, ValueError):
    """AMQ_ERR_VERSION: a frame from a newer format version."""


class ChecksumError(CorruptError):
    """AMQ_ERR_CHECKSUM: a frame whose checksum does not match."""


class IncompatibleError(Error, ValueError):
    """AMQ_ERR_INCOMPATIBLE: two structures that cannot be combined
    (types, shapes or hashers differ)."""


class ReadOnlyError(Error):
    """AMQ_ERR_READONLY: an update of a read-only (mapped) view."""


class BufferTooSmallError(Error, ValueError):
    """AMQ_ERR_BUFFER: an output buffer too small."""


class AlignmentError(Error, ValueError):
    """AMQ_ERR_ALIGN: a buffer not aligned for a zero-copy view."""


class NotFoundError(Error, KeyError):
    """AMQ_ERR_NOT_FOUND: the key (or value) is not there."""

    def __str__(self) -> str:  # KeyError would quote the message
        return Exception.__str__(self)


class FileError(Error, OSError):
    """AMQ_ERR_IO: a file could not be read or written."""


class HashError(Error, ValueError):
    """AMQ_ERR_HASH: an unknown hash kind or a missing SipHash key."""


class KindError(Error, ValueError):
    """AMQ_ERR_KIND: the frame holds another kind of object."""


# Pinned status values (include/amq/status.h) to their exceptions.
ERRORS: Dict[int, Type[Error]] = {
    1: NoMemoryError, 2: InvalidError, 3: SizeOverflowError,
    4: UnsupportedError, 5: FullError, 6: SpecError, 7: CorruptError,
    8: VersionError, 9: ChecksumError, 10: IncompatibleError,
    11: ReadOnlyError, 12: BufferTooSmallError, 13: AlignmentError, 14: NotFoundError, 15: FileError, 16: HashError,
    17: KindError}

NAMES = ["ClosedError", "Error", "NoMemoryError", "InvalidError", "SizeOverflowError",
         "UnsupportedError", "FullError", "SpecError", "CorruptError",
         "VersionError", "ChecksumError", "IncompatibleError",
         "ReadOnlyError", "BufferTooSmallError", "AlignmentError",
         "NotFoundError", "FileError", "HashError",
         "KindError"]
__all__ = list(NAMES)


def check(status: int, diag: Optional[Diag] = None) -> None:
    """Raise the status's exception (with diag's message) unless AMQ_OK."""
    if status != 0:
        detail = diag.message.decode(errors="replace") if diag else ""
        raise ERRORS.get(status, Error)(status, detail)
