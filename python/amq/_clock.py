"""amq.BloomClock and amq.VectorClock: logical timestamps behind one
comparison API (amq/clock.h).

A vector clock answers "did A happen before B?" exactly, with one counter
per node. A Bloom clock (Ramabaja 2019) is a fixed array of m counters: a
local event increments the k cells its identifier hashes to, a received
timestamp is folded in by a cell-wise maximum. Its "concurrent" is
certain (an ordered pair is never reported concurrent); its "before" and
"after" may be false, and each such verdict carries the probability the
library claims that it is.
"""

import ctypes
import enum
import operator
import struct
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Type, TypeVar

from . import _keys
from ._errors import IncompatibleError, InvalidError, KindError, check
from ._filter import options
from ._handle import Handle, frame_bytes, load_frame, save_frame
from ._native import PP, OP, DP, P, S, c_size_t, c_sizep, c_u64p, \
    check_sizes, declare, lib

CLOCK_BLOOM = 1
CLOCK_VECTOR_DENSE = 2
CLOCK_VECTOR_SPARSE = 3

MAX_M = 1 << 24
MAX_K = 64
MAX_HISTORY = 65536

_HASH_SIPHASH = 3
_PARAMS = 64  # the frame's parameters start here (docs/format.md)
_U32 = ctypes.c_uint32
_U64 = ctypes.c_uint64


class _Verdict(ctypes.Structure):
    """amq_clock_verdict."""
    _fields_ = [("order", ctypes.c_int), ("fp_paper", ctypes.c_double),
                ("fp_exact", ctypes.c_double), ("sum_low", ctypes.c_double),
                ("sum_high", ctypes.c_double),
                ("history_age", ctypes.c_uint32)]


check_sizes({_Verdict: 48})

_VP = ctypes.POINTER(_Verdict)

declare({
    "amq_clock_new_bloom": (S, [_U32, _U32, _U32, OP, PP]),
    "amq_clock_new_vector": (S, [ctypes.c_int, _U64, OP, PP]),
    "amq_clock_free": (None, [P]),
    "amq_clock_clone": (S, [P, PP]),
    "amq_clock_assign": (S, [P, P]),
    "amq_clock_tick": (S, [P, ctypes.c_char_p, c_size_t]),
    "amq_clock_tick_hash": (S, [P, _U64]),
    "amq_clock_merge": (S, [P, P]),
    "amq_clock_compare": (S, [P, P, _VP]),
    "amq_clock_compare_history": (S, [P, P, _VP]),
    "amq_clock_join": (S, [P, _U64]),
    "amq_clock_leave": (S, [P, _U64]),
    "amq_clock_kind_of": (ctypes.c_int, [P]),
    "amq_clock_size": (c_size_t, [P]),
    "amq_clock_k": (_U32, [P]),
    "amq_clock_get": (_U64, [P, _U64]),
    "amq_clock_entry": (S, [P, c_size_t, c_u64p, c_u64p]),
    "amq_clock_offset": (_U64, [P]),
    "amq_clock_cell_bits": (ctypes.c_uint, [P]),
    "amq_clock_sum": (ctypes.c_double, [P]),
    "amq_clock_history_len": (_U32, [P]),
    "amq_clock_history_explains": (S, [P, _U32, ctypes.c_char_p, c_size_t,
                                       ctypes.POINTER(ctypes.c_bool)]),
    "amq_clock_fp_paper": (ctypes.c_double, [_U32, ctypes.c_double,
                                             ctypes.c_double]),
    "amq_clock_fp_exact": (ctypes.c_double, [_U32, _U32, ctypes.c_double]),
    "amq_clock_encoded_size": (c_size_t, [P]),
    "amq_clock_encode": (S, [P, P, c_size_t, c_sizep]),
    "amq_clock_decode": (S, [P, ctypes.c_char_p, c_size_t]),
    "amq_clock_save_size": (c_size_t, [P]),
    "amq_clock_save": (S, [P, P, c_size_t, c_sizep]),
    "amq_clock_load": (S, [ctypes.c_char_p, c_size_t, OP, PP, DP]),
    "amq_order_name": (ctypes.c_char_p, [ctypes.c_int]),
})


class Order(enum.Enum):
    """The order of a relative to b (amq_order)."""

    EQUAL = 0
    BEFORE = 1      # a happened before b
    AFTER = 2       # b happened before a
    CONCURRENT = 3  # certain, for both kinds of clock

    def __str__(self) -> str:
        return str(lib.amq_order_name(self.value).decode())


@dataclass(frozen=True)
class Verdict:
    """What compare() says: the order, and for a Bloom clock's BEFORE or
    AFTER the claimed probability that it is false.

    probability is the library's own estimate (fp_exact): the chance that a
    concurrent pair whose sums differ as these do ends up dominated, exact
    when the dominated clock's private history is one event and an upper
    bound for more; fp_paper is eq. (3) of the paper, which the library
    keeps for comparison (docs/clock.md shows it is miscalibrated). Both
    are 0 for a vector clock and for EQUAL and CONCURRENT. sum_low and
    sum_high are, for a Bloom clock, the sums of the dominated and the
    dominating clock (for EQUAL/CONCURRENT, the smaller and the larger
    sum), for a vector clock those of self and other; history_age is how
    many recorded steps back the timestamp used for the probabilities lies
    (compare_history; 0 otherwise)."""

    order: Order
    probability: float
    fp_paper: float
    sum_low: float
    sum_high: float
    history_age: int

    @property
    def fp_exact(self) -> float:
        """The library's estimate: the same as probability."""
        return self.probability

    @property
    def ordered(self) -> bool:
        """BEFORE or AFTER."""
        return self.order in (Order.BEFORE, Order.AFTER)


def _u(x: Any, bits: int, what: str) -> int:
    """x as an unsigned C integer of `bits` bits, or an exception (never a
    silent wrap)."""
    if isinstance(x, bool):
        raise TypeError("%s must be an int, not bool" % what)
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError("%s must be an int, not %s" %
                        (what, type(x).__name__)) from None
    if not 0 <= v < (1 << bits):
        raise InvalidError(2, "%s must be in 0 .. 2**%d - 1, not %d" %
                           (what, bits, v))
    return v


def _new_handle(fn: Any, *args: Any) -> Any:
    handle = ctypes.c_void_p()
    check(fn(*args, ctypes.byref(handle)))
    return handle


C = TypeVar("C", bound="Clock")


class Clock(Handle):
    """Operations common to both kinds of clock. Clock.from_bytes(frame)
    gives a BloomClock or a VectorClock, whichever the frame holds."""

    __slots__ = ()
    _free = lib.amq_clock_free
    _what = "clock"

    # ---- frames, wire messages, copies ----

    @classmethod
    def _of_kind(cls, kind: int) -> "Type[Clock]":
        return BloomClock if kind == CLOCK_BLOOM else VectorClock

    @classmethod
    def from_bytes(cls: Type[C], data: Any) -> C:
        """A clock from a frame written by to_bytes (or amq_clock_save).
        CorruptError/ChecksumError for a damaged frame; KindError for a
        frame holding a filter or a cascade, or (on a subclass) the other
        kind of clock."""
        handle = load_frame(lib.amq_clock_load, data)
        kind = lib.amq_clock_kind_of(handle)
        real = cls._of_kind(kind)
        if cls is not Clock and real is not cls:
            lib.amq_clock_free(handle)
            raise KindError(17, "the frame holds a %s, not a %s" %
                            (real._what, cls._what))
        return real._wrap(handle)  # type: ignore[return-value]

    def to_bytes(self) -> bytes:
        """The clock's frame (type 300 or 301, docs/format.md): the
        timestamp, the shape, the hasher (a keyed clock's secret key
        included) and the history capacity, not the recorded history.
        Pickles are these bytes."""
        return save_frame(lib.amq_clock_save_size, lib.amq_clock_save,
                          self._h())

    def __bytes__(self) -> bytes:
        return self.to_bytes()

    def copy(self: C) -> C:
        """An independent deep copy, recorded history included."""
        return type(self)._wrap(_new_handle(lib.amq_clock_clone, self._h()))

    def encode(self) -> bytes:
        """The compact wire message of the current timestamp (no frame:
        the shape is only tagged, the hasher's key never sent)."""
        p = self._h()
        size = lib.amq_clock_encoded_size(p)
        buf = ctypes.create_string_buffer(max(size, 1))
        written = ctypes.c_size_t()
        check(lib.amq_clock_encode(p, buf, size, ctypes.byref(written)))
        return buf.raw[:written.value]

    def decode(self, message: Any) -> None:
        """Replace the timestamp by the one a clock of the same shape
        encoded (a Bloom clock records it in its history). CorruptError
        for a truncated, altered or non-canonical message;
        IncompatibleError for another kind or shape. On an error the clock
        is unchanged."""
        buf = frame_bytes(message)
        check(lib.amq_clock_decode(self._h(), buf, len(buf)))

    def assign(self, other: "Clock") -> None:
        """Take other's timestamp (not its history)."""
        check(lib.amq_clock_assign(self._h(), self._other(other)))

    # ---- the clock operations ----

    def _other(self, other: Any) -> Any:
        if not isinstance(other, Clock):
            raise TypeError("expected a clock, not %s" %
                            type(other).__name__)
        return other._h()

    def merge(self: C, other: "Clock") -> C:
        """Receive: self := the cell-wise (entry-wise) maximum of self and
        other. This is not an event by itself: tick() for the receive if
        your protocol counts it as one. IncompatibleError for another kind
        or shape (Bloom: m, k, hasher; dense vectors: membership); the
        clock is then unchanged. Returns self."""
        check(lib.amq_clock_merge(self._h(), self._other(other)))
        return self

    def compare(self, other: "Clock") -> Verdict:
        """The order of self relative to other, with its claimed
        false-positive probability (see Verdict)."""
        return self._verdict(lib.amq_clock_compare, other)

    def _verdict(self, fn: Any, other: "Clock") -> Verdict:
        v = _Verdict()
        check(fn(self._h(), self._other(other), ctypes.byref(v)))
        return Verdict(Order(v.order), v.fp_exact, v.fp_paper, v.sum_low,
                       v.sum_high, v.history_age)

    def happened_before(self, other: "Clock",
                        threshold: Optional[float] = None) -> bool:
        """self's timestamp is in other's past: compare() says BEFORE (and,
        with a threshold, its probability is at most threshold). Exact for
        a vector clock; for a Bloom clock a False is certain, a True may be
        a false positive."""
        v = self.compare(other)
        return v.order is Order.BEFORE and (threshold is None or
                                            v.probability <= threshold)

    def concurrent_with(self, other: "Clock") -> bool:
        """Neither is in the other's past (certain for both kinds)."""
        return self.compare(other).order is Order.CONCURRENT

    # ---- inspection ----

    @property
    def kind(self) -> int:
        """CLOCK_BLOOM, CLOCK_VECTOR_DENSE or CLOCK_VECTOR_SPARSE."""
        return int(lib.amq_clock_kind_of(self._h()))

    @property
    def sum(self) -> float:
        """The sum of every cell or counter."""
        return float(lib.amq_clock_sum(self._h()))

    def __len__(self) -> int:
        return int(lib.amq_clock_size(self._h()))

    def _params(self) -> bytes:
        return self.to_bytes()[_PARAMS:_PARAMS + 16]


class BloomClock(Clock):
    """A Bloom clock of m cells (1 .. 2**24) and k hashes per event
    (1 .. min(m, 64)), remembering its last `history` timestamps
    (0 .. 65536) for compare_history.

    Events are identified by str (UTF-8), bytes or int (8 bytes little
    endian). keyed=True hashes them with SipHash-2-4 under a fresh random
    key, for identifiers an adversary may choose (the key travels in
    to_bytes and pickles, never in encode()); seed picks the XXH3 seed.
    Clocks compare and merge only with clocks of the same m, k and hasher:
    make the others with from_bytes or copy of one clock, or with the same
    seed."""

    __slots__ = ()
    _what = "Bloom clock"

    def __init__(self, m: int, k: int, history: int = 0, *,
                 keyed: bool = False, seed: int = 0) -> None:
        super().__init__()
        opt = options(keyed, _u(seed, 64, "seed"))
        self._p = _new_handle(lib.amq_clock_new_bloom, _u(m, 32, "m"),
                              _u(k, 32, "k"), _u(history, 32, "history"),
                              ctypes.byref(opt))

    def tick(self, event: "_keys.Key") -> None:
        """A local event: the k cells its identifier hashes to += 1.
        SizeOverflowError when a cell would pass 2**64 - 1 (unchanged)."""
        e = _keys.key_bytes(event)
        check(lib.amq_clock_tick(self._h(), e, len(e)))

    def tick_hash(self, event_hash: int) -> None:
        """A local event given by the caller's own 64-bit hash of it."""
        check(lib.amq_clock_tick_hash(self._h(),
                                      _u(event_hash, 64, "event_hash")))

    def compare_history(self, remote: "BloomClock") -> Verdict:
        """compare(remote), but when remote is in self's past the
        probability comes from the oldest recorded timestamp of self that
        still dominates remote (Verdict.history_age steps back): smaller,
        for the same verdict."""
        return self._verdict(lib.amq_clock_compare_history, remote)

    def history_explains(self, event: "_keys.Key", age: int = 0) -> bool:
        """Whether the step from the timestamp recorded age + 1 steps back
        to the one age steps back was exactly the local event `event`
        (paper §3); False when the step merged something else in.
        InvalidError when age + 1 is not recorded."""
        e = _keys.key_bytes(event)
        out = ctypes.c_bool()
        check(lib.amq_clock_history_explains(
            self._h(), _u(age, 32, "age"), e, len(e), ctypes.byref(out)))
        return bool(out.value)

    @property
    def m(self) -> int:
        return int(lib.amq_clock_size(self._h()))

    @property
    def k(self) -> int:
        return int(lib.amq_clock_k(self._h()))

    @property
    def history(self) -> int:
        """How many timestamps the clock remembers (its capacity)."""
        return int(struct.unpack_from("<I", self._params(), 8)[0])

    @property
    def history_len(self) -> int:
        """Timestamps recorded now, the current one included (0 for a
        clock without history)."""
        return int(lib.amq_clock_history_len(self._h()))

    @property
    def offset(self) -> int:
        """The common minimum of the cells, kept outside them."""
        return int(lib.amq_clock_offset(self._h()))

    @property
    def cell_bits(self) -> int:
        """Bits per stored cell: 8, 16, 32 or 64 (cells widen as needed)."""
        return int(lib.amq_clock_cell_bits(self._h()))

    @property
    def keyed(self) -> bool:
        """Whether events are hashed with SipHash under a secret key."""
        return self.to_bytes()[14] == _HASH_SIPHASH

    def __getitem__(self, i: int) -> int:
        """Cell i's absolute value (0 <= i < m; negative counts from the
        end)."""
        m = self.m
        j = operator.index(i)
        if j < 0:
            j += m
        if not 0 <= j < m:
            raise IndexError("cell %d of a Bloom clock of %d cells" % (i, m))
        return int(lib.amq_clock_get(self._h(), j))

    def cells(self) -> List[int]:
        """Every cell's absolute value."""
        p = self._h()
        return [int(lib.amq_clock_get(p, i)) for i in range(self.m)]

    @staticmethod
    def fp_paper(m: int, s_low: float, s_high: float) -> float:
        """Eq. (3) of the paper, (1 - (1 - 1/m)**s_high)**s_low, for sums
        s_low <= s_high of a clock of m cells."""
        return float(lib.amq_clock_fp_paper(_u(m, 32, "m"), float(s_low),
                                            float(s_high)))

    @staticmethod
    def fp_exact(m: int, k: int, d: float) -> float:
        """The library's estimate: the probability that d + k uniform
        increments over m cells hit each of k given cells (d: the
        difference of the two clocks' sums)."""
        return float(lib.amq_clock_fp_exact(_u(m, 32, "m"), _u(k, 32, "k"),
                                            float(d)))

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.BloomClock closed>"
        return "<amq.BloomClock m=%d k=%d sum=%d>" % (self.m, self.k,
                                                       int(self.sum))


class VectorClock(Clock):
    """A vector clock owned by node `node` (a 64-bit id): exact.

    sparse (the default) keeps a counter for every node with a nonzero one
    and compares with any other sparse clock. dense=True keeps one counter
    per member, zeros included: the node is a member from the start,
    others join() and leave(); dense clocks compare and merge only over the
    same membership (IncompatibleError otherwise).

    The comparison operators are the happened-before order, exact here:
    a < b is "a happened before b", a <= b "before or equal", a == b equal
    timestamps (False, not an error, across kinds or memberships); neither
    a < b nor b < a nor a == b means concurrent. Vector clocks are mutable,
    hence unhashable."""

    __slots__ = ()
    _what = "vector clock"
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, node: int, *, dense: bool = False) -> None:
        super().__init__()
        kind = CLOCK_VECTOR_DENSE if dense else CLOCK_VECTOR_SPARSE
        self._p = _new_handle(lib.amq_clock_new_vector, kind,
                              _u(node, 64, "node"), None)

    def tick(self, event: Any = None) -> None:
        """A local event: this node's counter += 1 (the event's identity,
        if given, is ignored: a vector clock only counts)."""
        if event is not None:
            _keys.key_bytes(event)  # the same events a Bloom clock takes
        check(lib.amq_clock_tick(self._h(), None, 0))

    def join(self, node: int) -> None:
        """Dense: add node with counter 0 (nothing if it is a member).
        Sparse: nothing to do."""
        check(lib.amq_clock_join(self._h(), _u(node, 64, "node")))

    def leave(self, node: int) -> None:
        """Forget node's counter. You assert that every event of node is
        known everywhere, so no later comparison changes. InvalidError for
        the clock's own node."""
        check(lib.amq_clock_leave(self._h(), _u(node, 64, "node")))

    @property
    def node(self) -> int:
        """The node this clock belongs to (whose counter tick() bumps)."""
        return int(struct.unpack_from("<Q", self._params(), 8)[0])

    @property
    def dense(self) -> bool:
        return self.kind == CLOCK_VECTOR_DENSE

    def __getitem__(self, node: int) -> int:
        """node's counter (0 for a node without an entry)."""
        return int(lib.amq_clock_get(self._h(), _u(node, 64, "node")))

    def counters(self) -> Dict[int, int]:
        """{node: counter} for every entry, in increasing node order
        (dense: every member, zeros included)."""
        p = self._h()
        node, ctr = ctypes.c_uint64(), ctypes.c_uint64()
        out: Dict[int, int] = {}
        for i in range(lib.amq_clock_size(p)):
            check(lib.amq_clock_entry(p, i, ctypes.byref(node),
                                      ctypes.byref(ctr)))
            out[node.value] = ctr.value
        return out

    def __contains__(self, node: object) -> bool:
        """Whether node has an entry (dense: is a member)."""
        try:
            n = _u(node, 64, "node")
        except (TypeError, InvalidError):
            return False
        return n in self.counters()

    # ---- the happened-before order ----

    def _order(self, other: object) -> Optional[Order]:
        if not isinstance(other, VectorClock):
            return None
        return self.compare(other).order

    def __lt__(self, other: object) -> bool:
        o = self._order(other)
        if o is None:
            return NotImplemented
        return o is Order.BEFORE

    def __le__(self, other: object) -> bool:
        o = self._order(other)
        if o is None:
            return NotImplemented
        return o in (Order.BEFORE, Order.EQUAL)

    def __gt__(self, other: object) -> bool:
        o = self._order(other)
        if o is None:
            return NotImplemented
        return o is Order.AFTER

    def __ge__(self, other: object) -> bool:
        o = self._order(other)
        if o is None:
            return NotImplemented
        return o in (Order.AFTER, Order.EQUAL)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VectorClock):
            return NotImplemented
        if self.kind != other.kind:
            return False
        try:
            return self.compare(other).order is Order.EQUAL
        except IncompatibleError:  # dense clocks of other memberships
            return False

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.VectorClock closed>"
        return "<amq.VectorClock node=%d %s%s>" % (
            self.node, "dense " if self.dense else "", self.counters())


__all__ = ["Clock", "BloomClock", "VectorClock", "Order", "Verdict",
           "CLOCK_BLOOM", "CLOCK_VECTOR_DENSE", "CLOCK_VECTOR_SPARSE"]
