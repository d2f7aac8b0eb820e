"""amq.Window: membership over the most recent adds or the most recent
stretch of time (amq_window, amq/window.h).

A window of span S is cut into G generations (8 by default). The current
one is a quotient filter; closed ones become Ribbon filters; a generation
is dropped once the clock is G + 1 generations past it. So a key added at
time t answers present at every time before t + S (no false negatives in
the window), and once (G + 1) / G spans have passed it answers like a key
never added: present at most with the certified bound(), which is at most
the target while no generation takes more than capacity / G keys
(docs/structures.md, "Sliding windows").

A count window (Window(span=N)) counts adds; a time window
(Window(span=T, capacity=C, clock="time")) takes `now` from every call,
in units of your choosing (the Redis module's AMQ.WINDOW.* use
milliseconds). Time never runs backwards: a `now` earlier than the latest
one counts as the latest.
"""

import ctypes
from typing import Any, Dict, Iterable, List, Optional

from ._errors import check
from ._handle import Handle, frame_bytes, load_frame, read_file, save_frame
from ._keys import key_bytes
from ._native import DP, OP, PP, P, S, Diag, c_size_t, c_sizep, \
    check_sizes, declare, lib

_U64 = ctypes.c_uint64
_D = ctypes.c_double
_I = ctypes.c_int
_UI = ctypes.c_uint
ABSENT = (1 << 64) - 1
DEFAULT_GENERATIONS = 8
MAX_GENERATIONS = 64
_CLOCKS = {"items": 0, "time": 1}
_SEALS = {"ribbon": 0, "qf": 1}


class _Params(ctypes.Structure):
    """amq_window_params."""
    _fields_ = [("clock", _I), ("span", _U64), ("capacity", _U64),
                ("fpr", _D), ("generations", _UI), ("seal", _I)]


class _Info(ctypes.Structure):
    """amq_window_info."""
    _fields_ = [("clock", _I), ("seal", _I), ("span", _U64),
                ("capacity", _U64), ("length", _U64), ("fpr", _D),
                ("generations", _UI), ("now", _U64), ("generation", _U64),
                ("live_items", _U64), ("pieces", _UI), ("bytes", c_size_t),
                ("bound", _D)]


check_sizes({_Params: 40, _Info: 96})

declare({
    "amq_window_new": (S, [ctypes.POINTER(_Params), OP, PP, DP]),
    "amq_window_free": (None, [P]),
    "amq_window_add": (S, [P, ctypes.c_char_p, c_size_t, _U64,
                           ctypes.POINTER(ctypes.c_bool)]),
    "amq_window_contains": (ctypes.c_bool, [P, ctypes.c_char_p, c_size_t,
                                            _U64]),
    "amq_window_expiry": (_U64, [P, ctypes.c_char_p, c_size_t, _U64]),
    "amq_window_advance": (S, [P, _U64]),
    "amq_window_fpr_bound": (_D, [P, _U64]),
    "amq_window_get_info": (None, [P, _U64, ctypes.POINTER(_Info)]),
    "amq_window_size_bytes": (c_size_t, [P]),
    "amq_window_serialized_size": (c_size_t, [P]),
    "amq_window_save": (S, [P, P, c_size_t, c_sizep]),
    "amq_window_load": (S, [ctypes.c_char_p, c_size_t, OP, PP, DP]),
})


def _count(x: Any, what: str, lo: int = 0) -> int:
    if isinstance(x, bool) or not hasattr(x, "__index__"):
        raise TypeError("%s must be an int, not %s" % (what, type(x).__name__))
    v = int(x.__index__())
    if not lo <= v < 1 << 64:
        raise ValueError("%s must be in [%d, 2**64), got %d" % (what, lo, v))
    return v


class Window(Handle):
    """A sliding-window filter over the last `span` adds (clock="items",
    the default) or the last `span` time units (clock="time", which needs
    `capacity`: the most keys one window takes). fpr is the target bound
    (1% by default), generations G (1 to 64, 8 by default), seal "ribbon"
    (closed generations rebuilt near the entropy bound) or "qf" (kept as
    they are: no build when a generation closes, more memory).

    >>> import amq
    >>> w = amq.Window(span=1000, capacity=10_000, clock="time")
    >>> w.add("alice", now=0)
    False
    >>> w.contains("alice", now=999), w.contains("alice", now=2000)
    (True, False)
    >>> w.expiry("alice", now=500) >= 999
    True
    """

    __slots__ = ()
    _free = lib.amq_window_free
    _what = "window"

    def __init__(self, span: int, capacity: int = 0, fpr: float = 0.01,
                 generations: int = DEFAULT_GENERATIONS,
                 clock: str = "items", seal: str = "ribbon") -> None:
        super().__init__()
        if clock not in _CLOCKS:
            raise ValueError("clock must be 'items' or 'time', not %r" %
                             (clock,))
        if seal not in _SEALS:
            raise ValueError("seal must be 'ribbon' or 'qf', not %r" %
                             (seal,))
        g = _count(generations, "generations", 1)
        if g > MAX_GENERATIONS:
            raise ValueError("generations must be in [1, %d], got %d" %
                             (MAX_GENERATIONS, g))
        if isinstance(fpr, (str, bytes, bool)) or \
                not hasattr(fpr, "__float__"):
            raise TypeError("fpr must be a number")
        p = _Params(_CLOCKS[clock], _count(span, "span", 1),
                    _count(capacity, "capacity"), float(fpr), g,
                    _SEALS[seal])
        if clock == "time" and p.capacity == 0:
            raise ValueError("a time window needs a capacity (the most keys "
                             "one window takes)")
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_window_new(ctypes.byref(p), None, ctypes.byref(handle),
                                 ctypes.byref(diag)), diag)
        self._p = handle

    def add(self, key: Any, now: int = 0) -> bool:
        """Add (or refresh) key at time now; whether the window reported
        it present just before."""
        k = key_bytes(key)
        was = ctypes.c_bool()
        check(lib.amq_window_add(self._h(), k, len(k), _count(now, "now"),
                                 ctypes.byref(was)))
        return bool(was.value)

    def update(self, keys: Iterable[Any], now: int = 0) -> None:
        """add() every key at time now."""
        p, t = self._h(), _count(now, "now")
        was = ctypes.c_bool()
        for key in keys:
            k = key_bytes(key)
            check(lib.amq_window_add(p, k, len(k), t, ctypes.byref(was)))

    def contains(self, key: Any, now: int = 0) -> bool:
        """Whether key may have been added in the window ending at now."""
        k = key_bytes(key)
        return bool(lib.amq_window_contains(self._h(), k, len(k),
                                            _count(now, "now")))

    def __contains__(self, key: Any) -> bool:
        return self.contains(key, self.now)

    def expiry(self, key: Any, now: int = 0) -> Optional[int]:
        """The last time (or add count) at which key still certainly
        answers present, or None if it answers absent at now."""
        k = key_bytes(key)
        e = int(lib.amq_window_expiry(self._h(), k, len(k),
                                      _count(now, "now")))
        return None if e == ABSENT else e

    def advance(self, now: int) -> None:
        """Move the clock to now and release what it leaves behind."""
        check(lib.amq_window_advance(self._h(), _count(now, "now")))

    def bound(self, now: int = 0) -> float:
        """The certified false-positive bound at now."""
        return float(lib.amq_window_fpr_bound(self._h(), _count(now, "now")))

    def info(self, now: int = 0) -> Dict[str, Any]:
        """clock, seal, span, capacity, length (one generation), fpr,
        generations, now, generation, live_items, pieces, bytes, bound."""
        i = _Info()
        lib.amq_window_get_info(self._h(), _count(now, "now"),
                                ctypes.byref(i))
        d = {name: getattr(i, name) for name, _ in _Info._fields_}
        d["clock"] = "time" if i.clock == 1 else "items"
        d["seal"] = "qf" if i.seal == 1 else "ribbon"
        return d

    @property
    def now(self) -> int:
        """The clock: the latest time seen, or the adds so far."""
        return int(self.info()["now"])

    @property
    def nbytes(self) -> int:
        return int(lib.amq_window_size_bytes(self._h()))

    # ---- frames ----

    def to_bytes(self) -> bytes:
        """The window's frame (type 303)."""
        return save_frame(lib.amq_window_serialized_size,
                          lib.amq_window_save, self._h())

    @classmethod
    def from_bytes(cls, data: Any) -> "Window":
        """A window from its frame. CorruptError, ChecksumError,
        VersionError, or KindError for a frame of another object."""
        return cls._wrap(load_frame(lib.amq_window_load, frame_bytes(data)))

    def save(self, path: Any) -> None:
        """Write to_bytes() to path."""
        data = self.to_bytes()
        with open(path, "wb") as fh:
            fh.write(data)

    @classmethod
    def load(cls, path: Any) -> "Window":
        """from_bytes() of a file's contents."""
        return cls.from_bytes(read_file(path))

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.Window closed>"
        i = self.info()
        return "<amq.Window clock=%s span=%d now=%d live_items=%d>" % (
            i["clock"], i["span"], i["now"], i["live_items"])


__all__: List[str] = ["Window"]
