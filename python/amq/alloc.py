"""amq.alloc: how many bits per key each group of keys gets, and which
filter realises them (amq/alloc.h).

Groups i = 1..G hold n_i keys (``keys``), receive a share p_i of the
non-member probes (``weight``, any scale) and have a false-positive curve
f_i(b), b in bits per key (``spec``: a structure type's real curve, the
model e^(-c b), or a Curve of your own). One convex problem, in two
directions:

- plan(groups, memory_bits=M): minimise sum p_i f_i(b_i) subject to
  sum n_i b_i <= M;
- plan(groups, fpr=eps, p0=p_0): minimise sum n_i b_i subject to
  p_0 + sum p_i f_i(b_i) <= eps.

uniform(groups, M) is the workload-blind baseline: the same bits per key
everywhere. Each group's Pick names the spec to build and the rate to ask
for; Pick.build(keys) builds it.

    >>> from amq import alloc
    >>> p = alloc.plan([alloc.Group(1000, 0.9), alloc.Group(100000, 0.1)],
    ...                memory_bits=8 * 101000)
    >>> [pick.spec for pick in p.picks]
    ['bloom:k=15', 'bloom:k=5']

Curves are immutable once made and may be shared by any number of groups
and threads; the solvers allocate nothing.
"""

import ctypes
import math
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional,
                    Sequence, Tuple, Union)

from ._errors import InvalidError, check
from ._handle import Handle
from ._native import DP, PP, Diag, P, S, c_size_t, check_sizes, cstr, \
    declare, lib

BLOOM_C = 0.48045301391820144
"""The ideal Bloom filter's exponent (ln 2)^2: f(b) = e^(-c b)."""
MAX_BITS = 64.0
"""Sampled curves of structure types span (0, MAX_BITS] bits per key."""
STEP = 1.0 / 64.0
"""... at this step."""
MAX_SAMPLES = 1 << 20
"""The most points a caller's curve may have."""
SPEC_MAX = 96
"""Room for a pick's spec or a curve's label, terminating NUL included."""

_INVALID = 2

FprFn = Callable[[float], float]
BitsFn = Callable[[float], float]
_CFN = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_double)


class _Group(ctypes.Structure):
    _fields_ = [("keys", ctypes.c_double), ("weight", ctypes.c_double),
                ("curve", P)]


class _Pick(ctypes.Structure):
    _fields_ = [("bits_per_key", ctypes.c_double),
                ("fpr", ctypes.c_double),
                ("spec", ctypes.c_char * SPEC_MAX)]


class _Summary(ctypes.Structure):
    _fields_ = [("cost", ctypes.c_double), ("memory_bits", ctypes.c_double),
                ("lambda_", ctypes.c_double),
                ("kkt_residual", ctypes.c_double),
                ("relaxed_cost", ctypes.c_double),
                ("relaxed_memory", ctypes.c_double),
                ("rounded", c_size_t)]


class _Custom(ctypes.Structure):
    _fields_ = [("fpr", _CFN), ("bits", _CFN), ("ctx", P),
                ("max_bits", ctypes.c_double), ("step", ctypes.c_double),
                ("min_fpr", ctypes.c_double), ("samples", ctypes.c_uint32),
                ("discrete", ctypes.c_bool), ("label", ctypes.c_char_p)]


check_sizes({_Group: 24, _Pick: 112, _Summary: 56, _Custom: 64})

_GP = ctypes.POINTER(_Group)
_PKP = ctypes.POINTER(_Pick)
_SP = ctypes.POINTER(_Summary)
_D = ctypes.c_double

declare({
    "amq_alloc_curve_model": (S, [_D, P, PP]),
    "amq_alloc_curve_spec": (S, [ctypes.c_char_p, P, PP, DP]),
    "amq_alloc_curve_custom": (S, [ctypes.POINTER(_Custom), P, PP]),
    "amq_alloc_curve_free": (None, [P]),
    "amq_alloc_min_cost": (S, [_GP, c_size_t, _D, _PKP, _SP]),
    "amq_alloc_min_memory": (S, [_GP, c_size_t, _D, _D, _PKP, _SP]),
    "amq_alloc_uniform": (S, [_GP, c_size_t, _D, _PKP, _SP]),
    "amq_alloc_curve_at": (S, [P, _D, _PKP]),
    "amq_alloc_curve_vertex": (ctypes.c_bool, [P, c_size_t,
                                               ctypes.POINTER(_D),
                                               ctypes.POINTER(_D)]),
    "amq_alloc_curve_label": (ctypes.c_char_p, [P]),
})


def _real(x: Any, what: str) -> float:
    """A float argument; TypeError for anything that is not a number."""
    if isinstance(x, bool) or not hasattr(x, "__float__"):
        raise TypeError("%s must be a number, not %s" %
                        (what, type(x).__name__))
    return float(x)


def _invalid(msg: str) -> InvalidError:
    return InvalidError(_INVALID, msg)


# ---- picks and results -----------------------------------------------------

@dataclass(frozen=True)
class Pick:
    """One group's allocation (amq_alloc_pick): bits per key, the rate of
    the realised choice and the spec to build ("" = no filter: b = 0 and
    every probe passes, or nothing to store; "model": the model curve,
    nothing to build)."""

    bits_per_key: float
    fpr: float
    spec: str

    @classmethod
    def _of(cls, p: _Pick) -> "Pick":
        return cls(p.bits_per_key, p.fpr, p.spec.decode())

    @property
    def has_filter(self) -> bool:
        """False for the empty spec: this group needs no filter."""
        return self.spec != ""

    def build(self, keys: Any, *, keyed: bool = False,
              seed: int = 0) -> Any:
        """The filter this pick names, built from its keys (any collection
        amq.Filter.build takes) at the pick's rate: about bits_per_key bits
        per key. ValueError for a pick with nothing to build (no filter,
        or the model curve)."""
        from ._filter import Filter
        if not self.spec:
            raise ValueError("this pick is no filter (0 bits per key)")
        if not lib.amq_filter_type_find(cstr(self.spec)):
            raise ValueError("'%s' names no structure type: nothing to "
                             "build" % self.spec)
        return Filter.build(self.spec, keys, self.fpr, keyed=keyed,
                            seed=seed)


@dataclass(frozen=True)
class Summary:
    """The solver's summary (amq_alloc_summary).

    cost: sum p_i f_i of the picks (+ p0 in the fpr direction);
    memory_bits: sum n_i b_i of the picks; lambda_: the multiplier, cost
    saved per extra bit at the margin (0 when the budget does not bind);
    kkt_residual: the relaxed solution's largest relative KKT violation;
    relaxed_cost / relaxed_memory: the hull relaxation's optimum, a lower
    bound on any realisable choice (in the direction solved); rounded:
    groups moved off the relaxation to a realisable point."""

    cost: float
    memory_bits: float
    lambda_: float
    kkt_residual: float
    relaxed_cost: float
    relaxed_memory: float
    rounded: int

    @classmethod
    def _of(cls, s: _Summary) -> "Summary":
        return cls(s.cost, s.memory_bits, s.lambda_, s.kkt_residual,
                   s.relaxed_cost, s.relaxed_memory, int(s.rounded))


@dataclass(frozen=True)
class Plan(Summary):
    """A solved allocation: the Summary's totals and picks[i], group i's
    Pick. Iterating, len() and plan[i] go over the picks."""

    picks: Tuple[Pick, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.picks)

    def __iter__(self) -> Iterator[Pick]:
        return iter(self.picks)

    def __getitem__(self, i: int) -> Pick:
        return self.picks[i]

    @property
    def summary(self) -> Summary:
        """The totals alone."""
        return Summary(self.cost, self.memory_bits, self.lambda_,
                       self.kkt_residual, self.relaxed_cost,
                       self.relaxed_memory, self.rounded)


# ---- curves ----------------------------------------------------------------

class Curve(Handle):
    """A false-positive curve the solvers work on (amq_alloc_curve).

    Curve(spec): a structure type's real curve, with the engine choosing
    the type's knob where the spec leaves it open (Bloom family: k;
    ribbon: bits in steps of 1/64; xor/fuse: width 8/16/32, "fuse16" fixes
    it; cuckoo/vacuum: fp 4..32; qf/cqf: r 1..32). Curve("model") is
    Curve.model(). SpecError for an unknown type or parameter,
    UnsupportedError for a type without a curve (topk).

    Curve.model(c) is f(b) = e^(-c b), solved in closed form;
    Curve.custom(...) samples a Python function once, at creation.
    """

    __slots__ = ("_recipe",)
    _recipe: Tuple[Any, ...]
    _free = lib.amq_alloc_curve_free
    _what = "curve"

    def __init__(self, spec: str) -> None:
        super().__init__()
        if not isinstance(spec, str):
            raise TypeError("spec must be a str such as \"bloom\", not %s"
                            % type(spec).__name__)
        if spec == "model":
            self._make_model(BLOOM_C)
            return
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_alloc_curve_spec(cstr(spec), None,
                                       ctypes.byref(handle),
                                       ctypes.byref(diag)), diag)
        self._p = handle
        self._recipe = ("spec", spec)

    def _make_model(self, c: float) -> None:
        handle = ctypes.c_void_p()
        check(lib.amq_alloc_curve_model(c, None, ctypes.byref(handle)))
        self._p = handle
        self._recipe = ("model", c)

    @classmethod
    def model(cls, c: float = BLOOM_C) -> "Curve":
        """The model e^(-c b), c > 0 and finite (BLOOM_C: the ideal Bloom
        filter). Its picks carry the spec "model": nothing to build."""
        obj = cls.__new__(cls)
        obj._p = None
        obj._make_model(_real(c, "c"))
        return obj

    @classmethod
    def custom(cls, fpr: Optional[FprFn] = None, *,
               bits: Optional[BitsFn] = None, max_bits: float = 0.0,
               step: float = 0.0, min_fpr: float = 0.0, samples: int = 0,
               discrete: bool = False,
               label: Optional[str] = None) -> "Curve":
        """A curve from a function of yours, in one of two directions
        (exactly one of fpr / bits):

        fpr(b): the rate at b bits per key, sampled at b = 0, step,
        2 step, ..., max_bits (0: MAX_BITS and STEP);
        bits(e): the bits per key needed for rate e, at `samples` (0: 512)
        log-spaced rates from 1 down to min_fpr (0: 1e-12).

        Values are clamped to [0, 1] and [0, max_bits]; NaN is an error.
        The engine uses the lower convex hull of the points. discrete:
        only the sampled points are realisable; else any point between two
        neighbours is (fpr direction). label (under SPEC_MAX bytes) is the
        picks' spec ("custom" if None). The function is called during
        creation only; an exception it raises is raised here."""
        if fpr is not None and bits is None:
            fn: Callable[[float], float] = fpr
        elif bits is not None and fpr is None:
            fn = bits
        else:
            raise _invalid("give exactly one of fpr and bits")
        if not callable(fn):
            raise TypeError("the curve's function must be callable")
        raised: List[BaseException] = []

        def call(ctx: Any, x: float) -> float:
            if raised:
                return math.nan
            try:
                return _real(fn(x), "the curve's value")
            except BaseException as e:  # re-raised after the C call
                raised.append(e)
                return math.nan

        cb = _CFN(call)
        c = _Custom()
        if fpr is not None:
            c.fpr = cb
        else:
            c.bits = cb
        c.max_bits = _real(max_bits, "max_bits")
        c.step = _real(step, "step")
        c.min_fpr = _real(min_fpr, "min_fpr")
        if not isinstance(samples, int) or not 0 <= samples < 1 << 32:
            raise _invalid("samples must be an int in [0, 2**32)")
        c.samples = samples
        c.discrete = bool(discrete)
        c.label = None if label is None else cstr(label)
        handle = ctypes.c_void_p()
        st = lib.amq_alloc_curve_custom(ctypes.byref(c), None,
                                        ctypes.byref(handle))
        if raised:
            lib.amq_alloc_curve_free(handle)
            raise raised[0]
        check(st)
        obj = cls.__new__(cls)
        obj._p = handle
        obj._recipe = ("custom", fpr, bits, c.max_bits, c.step, c.min_fpr,
                       samples, bool(discrete), label)
        return obj

    @property
    def label(self) -> str:
        """The curve's label: "model", the spec it was made from, or the
        caller's label."""
        return str(lib.amq_alloc_curve_label(self._h()).decode())

    def at(self, bits_per_key: float) -> Pick:
        """The best realisable choice with at most bits_per_key bits per
        key on the curve itself (not its hull). InvalidError for a negative
        or NaN budget."""
        p = _Pick()
        check(lib.amq_alloc_curve_at(self._h(),
                                     _real(bits_per_key, "bits_per_key"),
                                     ctypes.byref(p)))
        return Pick._of(p)

    def vertices(self) -> List[Tuple[float, float]]:
        """The lower convex hull the solvers use, as (bits_per_key, fpr)
        pairs: b ascending, fpr strictly descending, the first at b = 0.
        Empty for a model curve (it is convex as it is)."""
        out = []
        b, f = ctypes.c_double(), ctypes.c_double()
        h = self._h()
        i = 0
        while lib.amq_alloc_curve_vertex(h, i, ctypes.byref(b),
                                         ctypes.byref(f)):
            out.append((b.value, f.value))
            i += 1
        return out

    # The curve has no frame: copies and pickles make it again.
    def copy(self) -> "Curve":
        """An independent curve made the same way."""
        self._h()
        return _remake(*self._recipe)

    def __reduce__(self) -> Any:
        self._h()
        return (_remake, self._recipe)

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.alloc.Curve closed>"
        return "<amq.alloc.Curve %s>" % self.label


def _remake(kind: str, *args: Any) -> Curve:
    if kind == "spec":
        return Curve(args[0])
    if kind == "model":
        return Curve.model(args[0])
    fpr, bits, max_bits, step, min_fpr, samples, discrete, label = args
    return Curve.custom(fpr, bits=bits, max_bits=max_bits, step=step,
                        min_fpr=min_fpr, samples=samples, discrete=discrete,
                        label=label)


CurveLike = Union[str, Curve]


# ---- groups ----------------------------------------------------------------

@dataclass(frozen=True)
class Group:
    """One group of keys: how many (keys >= 0), its share of the probes
    (weight >= 0, any scale) and its curve: a spec string ("bloom",
    "ribbon", "fuse", "cuckoo", "model", ...) or a Curve."""

    keys: float
    weight: float = 1.0
    spec: CurveLike = "bloom"


GroupLike = Union[Group, Mapping[str, Any], Sequence[Any]]


def _group_of(g: Any, i: int) -> Group:
    if isinstance(g, Group):
        return g
    if isinstance(g, Mapping):
        unknown = set(g) - {"keys", "weight", "spec"}
        if unknown:
            raise TypeError("group %d: unknown field(s) %s (keys, weight, "
                            "spec)" % (i, ", ".join(sorted(map(str,
                                                               unknown)))))
        if "keys" not in g:
            raise TypeError("group %d: no 'keys'" % i)
        return Group(g["keys"], g.get("weight", 1.0), g.get("spec", "bloom"))
    if isinstance(g, (tuple, list)) and 1 <= len(g) <= 3:
        return Group(*g)
    raise TypeError("group %d: expected an amq.alloc.Group, a dict with "
                    "keys/weight/spec or a (keys, weight, spec) tuple, not "
                    "%s" % (i, type(g).__name__))


class _Problem:
    """Groups as the C array, with the curves they need kept alive (one
    curve per distinct spec string, shared, as the engine intends)."""

    def __init__(self, groups: Sequence[Any]) -> None:
        if isinstance(groups, (str, bytes, Mapping, Group)):
            raise TypeError("groups must be a list of groups")
        gs = [_group_of(g, i) for i, g in enumerate(groups)]
        self.curves: Dict[str, Curve] = {}
        self.owned: List[Curve] = []
        self.n = len(gs)
        self.array = (_Group * max(self.n, 1))()
        try:
            for i, g in enumerate(gs):
                keys = _real(g.keys, "group %d: keys" % i)
                weight = _real(g.weight, "group %d: weight" % i)
                for v, what in ((keys, "keys"), (weight, "weight")):
                    if not (v >= 0 and math.isfinite(v)):
                        raise _invalid("group %d: %s must be >= 0 and "
                                       "finite, got %r" % (i, what, v))
                self.array[i] = _Group(keys, weight,
                                       self._curve(g.spec, i)._h())
        except BaseException:
            self.close()
            raise

    def _curve(self, spec: Any, i: int) -> Curve:
        if isinstance(spec, Curve):
            return spec
        if not isinstance(spec, str):
            raise TypeError("group %d: spec must be a str or an "
                            "amq.alloc.Curve, not %s" %
                            (i, type(spec).__name__))
        c = self.curves.get(spec)
        if c is None:
            c = self.curves[spec] = Curve(spec)
            self.owned.append(c)
        return c

    def close(self) -> None:
        for c in self.owned:
            c.close()

    def __enter__(self) -> "_Problem":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _solve(fn: Any, problem: _Problem, *args: float) -> Plan:
    picks = (_Pick * max(problem.n, 1))()
    s = _Summary()
    check(fn(problem.array, problem.n, *args, picks, ctypes.byref(s)))
    summary = Summary._of(s)
    return Plan(**summary.__dict__,
                picks=tuple(Pick._of(picks[i]) for i in range(problem.n)))


def _budget(memory_bits: Any) -> float:
    m = _real(memory_bits, "memory_bits")
    if not (m >= 0 and math.isfinite(m)):
        raise _invalid("memory_bits must be >= 0 and finite, got %r" % m)
    return m


def plan(groups: Sequence[GroupLike], memory_bits: Optional[float] = None,
         fpr: Optional[float] = None, *, p0: float = 0.0) -> Plan:
    """The optimal allocation, in one of two directions:

    memory_bits=M: minimise the weighted rate sum p_i f_i(b_i) with at
    most M bits in all (the budget may stay partly unused when every curve
    is exhausted);
    fpr=eps: the least memory with p0 + sum p_i f_i(b_i) <= eps (weights
    and p0 on the same scale, e.g. probabilities; eps >= p0 + sum p_i needs
    no memory). InvalidError when eps <= p0 or no allocation reaches eps.

    groups: Group objects, dicts {"keys", "weight", "spec"} or
    (keys, weight, spec) tuples. Groups with keys = 0 or weight = 0 get no
    filter. InvalidError for negative or non-finite numbers."""
    if (memory_bits is None) == (fpr is None):
        raise ValueError("give memory_bits (minimise the rate) or fpr "
                         "(minimise the memory), not both or neither")
    if memory_bits is not None:
        if p0 != 0:
            raise ValueError("p0 belongs to the fpr direction (the rate "
                             "that is there whatever the filters do)")
        m = _budget(memory_bits)
        with _Problem(groups) as problem:
            return _solve(lib.amq_alloc_min_cost, problem, m)
    eps = _real(fpr, "fpr")
    base = _real(p0, "p0")
    with _Problem(groups) as problem:
        return _solve(lib.amq_alloc_min_memory, problem, base, eps)


def uniform(groups: Sequence[GroupLike], memory_bits: float) -> Plan:
    """The workload-blind baseline: every group with keys gets
    memory_bits / sum n_i bits per key, realised as Curve.at does (the
    weights count only in the cost)."""
    m = _budget(memory_bits)
    with _Problem(groups) as problem:
        return _solve(lib.amq_alloc_uniform, problem, m)


def weighted_fpr(groups: Sequence[GroupLike], picks: Sequence[Pick]) -> float:
    """sum p_i f_i: the cost of picks for these groups' weights (to
    price one plan's picks under other weights)."""
    gs = [_group_of(g, i) for i, g in enumerate(groups)]
    if len(gs) != len(picks):
        raise ValueError("%d groups, %d picks" % (len(gs), len(picks)))
    return math.fsum(_real(g.weight, "weight") * p.fpr
                     for g, p in zip(gs, picks))


__all__ = ["BLOOM_C", "MAX_BITS", "STEP", "MAX_SAMPLES", "SPEC_MAX", "Curve",
           "Group", "Pick", "Plan", "Summary", "plan", "uniform",
           "weighted_fpr"]
