"""amq.recommend: which structure to build for a need (amq/recommend.h),
the ranking `amq recommend` prints and `amq build` defaults to."""

import ctypes
from typing import Any, Dict, List, Union

from ._errors import check
from ._native import S, TypeInfo, c_size_t, c_sizep, check_sizes, declare, lib

READS_MANY = 99


class _Need(ctypes.Structure):
    _fields_ = [("n", ctypes.c_uint64), ("fpr", ctypes.c_double),
                ("deletes", ctypes.c_bool), ("counts", ctypes.c_bool),
                ("allow_static", ctypes.c_bool)]


class _Choice(ctypes.Structure):
    _fields_ = [("type", ctypes.POINTER(TypeInfo)),
                ("bits_per_key", ctypes.c_double), ("fpr", ctypes.c_double),
                ("reads", ctypes.c_uint), ("reads_text", ctypes.c_char * 32),
                ("fixed", ctypes.c_bool)]


declare({"amq_recommend": (S, [ctypes.POINTER(_Need),
                               ctypes.POINTER(_Choice), c_size_t, c_sizep])})
check_sizes({_Need: 24, _Choice: 64})


def recommend(n: Union[int, float], fpr: float, *, deletes: bool = False,
              counts: bool = False,
              allow_static: bool = False) -> List[Dict[str, Any]]:
    """Every type that meets the need, smallest first: n keys at rate fpr,
    with deletes (remove), counts (count), and with allow_static when every
    key is known before the build. Each row: type, bits_per_key, fpr (the
    rate it really gives), reads (memory reads per query, the upper end;
    READS_MANY when unbounded), reads_text ("1-2", "k = 7"), fixed (a
    fixed-width static type whose width, not fpr, sets its size). The
    first row is what Filter(n, fpr) and `amq build` pick."""
    if isinstance(n, float):
        if not n.is_integer():
            raise ValueError("n must be a whole number, not %r" % n)
        n = int(n)
    if n < 0:
        raise ValueError("n must be at least 1, not %d" % n)
    if not 0.0 < fpr < 1.0:  # the C call says only "invalid argument"
        from ._errors import InvalidError
        raise InvalidError(2, "fpr must be in (0, 1), got %r" % fpr)
    need = _Need(n, fpr, deletes, counts, allow_static)
    count = c_size_t()
    check(lib.amq_recommend(ctypes.byref(need), None, 0, ctypes.byref(count)))
    rows = (_Choice * max(count.value, 1))()
    check(lib.amq_recommend(ctypes.byref(need), rows, count.value,
                            ctypes.byref(count)))
    return [{"type": r.type.contents.name.decode(),
             "bits_per_key": r.bits_per_key, "fpr": r.fpr,
             "reads": r.reads, "reads_text": r.reads_text.decode(),
             "fixed": bool(r.fixed)} for r in rows[:count.value]]


def default_type(n: int, fpr: float) -> str:
    """The type Filter(n, fpr) makes: the smallest that takes keys one by
    one and meets fpr."""
    rows = recommend(max(n, 1), fpr)
    if not rows:  # every dynamic type fails the rate
        from ._errors import InvalidError
        raise InvalidError(2, "no type that takes keys one by one meets "
                           "fpr %g" % fpr)
    return str(rows[0]["type"])
