"""amq: approximate membership and approximate maps from the amq C library.

    >>> import amq
    >>> f = amq.Filter(1_000_000, 0.01)      # the type is picked for you
    >>> f.add("alice")
    >>> "alice" in f, "bob" in f
    (True, False)

Filter covers every membership structure (the Bloom family, cuckoo,
quotient, xor, binary fuse, Ribbon, ...); the other families have their own
classes. Keys are str (UTF-8), bytes-like, int (8 bytes little-endian) or,
in bulk, NumPy arrays hashed with no per-key Python work. Every library
status becomes an exception: amq.Error and its subclasses, which also derive
from the matching built-in (MemoryError, ValueError, KeyError, OSError).
Objects are not safe to modify from several threads at once; queries from
several threads are safe while nobody modifies the object. docs/python.md
is the guide.
"""

from . import _errors
from ._errors import *  # noqa: F401,F403
from ._filter import (CAP_ADAPT, CAP_CONCURRENT, CAP_COUNT,  # noqa: F401
                      CAP_ESTIMATE, CAP_FORGETS, CAP_GROW, CAP_INTERSECT,
                      CAP_RANGE,
                      CAP_REMOVE, CAP_SKETCH,
                      CAP_STATIC, CAP_UNION, BloomFilter, Filter,
                      ScalableBloomFilter, curve_bits, curve_fpr, types)
from ._native import lib as _lib
from ._maplet import Maplet, MapletShape, StaticMap  # noqa: F401
from ._cascade import Audit, AuditLevel, AuditReport, Cascade  # noqa: F401
from ._clock import (CLOCK_BLOOM, CLOCK_VECTOR_DENSE,  # noqa: F401
                     CLOCK_VECTOR_SPARSE, BloomClock, Clock, Order, Verdict,
                     VectorClock)
from ._sketch import CountMin, TopK  # noqa: F401
from ._tdigest import TDigest  # noqa: F401
from ._window import Window  # noqa: F401
from ._builder import Builder  # noqa: F401
from . import alloc, lsm  # noqa: F401
from ._recommend import READS_MANY, recommend  # noqa: F401


def version() -> str:
    """The linked library's version, "MAJOR.MINOR.PATCH"."""
    return str(_lib.amq_version().decode())


__version__ = version()

__all__ = list(_errors.NAMES) + [
    "Filter", "BloomFilter", "ScalableBloomFilter", "types", "version",
    "curve_bits", "curve_fpr", "CAP_REMOVE", "CAP_COUNT", "CAP_UNION",
    "CAP_INTERSECT", "CAP_CONCURRENT", "CAP_ESTIMATE", "CAP_STATIC",
    "CAP_SKETCH", "CAP_FORGETS", "CAP_RANGE", "CAP_ADAPT", "CAP_GROW",
    "__version__",
    "Maplet", "StaticMap", "MapletShape",
    "Cascade", "Audit", "AuditReport", "AuditLevel",
    "Clock", "BloomClock", "VectorClock", "Order", "Verdict", "CLOCK_BLOOM",
    "CLOCK_VECTOR_DENSE", "CLOCK_VECTOR_SPARSE",
    "CountMin", "TopK", "TDigest", "Builder", "alloc", "lsm", "recommend",
    "READS_MANY"]

# Public classes are amq.X (tracebacks, reprs and pickles say so).
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) and _obj.__module__.startswith("amq._"):
        _obj.__module__ = "amq"
del _name, _obj

del _errors
