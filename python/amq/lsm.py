"""amq.lsm: filter memory for LSM trees (amq/lsm.h): Monkey's allocation
through the allocation engine (amq.alloc), and the simulator for the laws
of filter-memory tuning (docs/lsm.md).

A run (a level, or a segment of one) holds `keys` keys and receives a
share `lookups` of the lookups that probe it without finding the key; its
filter's false-positive rate f is the chance such a probe costs a wasted
read. With the shares normalised to sum 1 the expected wasted reads per
lookup are sum w_i f_i; plan() minimises it under a memory budget and
prices the same bits everywhere against it, as `amq lsm plan` does.

    >>> from amq import lsm
    >>> p = lsm.plan(lsm.tree(5, 10, 1e6), bits_per_key=8)
    >>> round(p.cost_uniform / p.cost_optimal, 2)
    3.51

The laws (loglaw, robustness, drift and frontier, measure) are the
library's simulations, deterministic for a given seed; their keyword
defaults are the paper's setups, the same as `amq-lab lsm simulate`'s.
"""

import ctypes
import math
import os
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from . import alloc
from ._errors import InvalidError, check
from ._native import DP, Diag, P, S, c_size_t, check_sizes, cstr, declare, \
    lib
from .alloc import BLOOM_C, Curve, Pick, Summary

NAME_MAX = 32
"""Room for a run's name, terminating NUL included."""

_INVALID = 2
_BUFFER = 12
_D = ctypes.c_double
_DP = ctypes.POINTER(ctypes.c_double)


class _Run(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * NAME_MAX), ("keys", _D),
                ("lookups", _D)]


class _Totals(ctypes.Structure):
    _fields_ = [("bits_per_key", _D), ("memory_bits", _D),
                ("cost_uniform", _D), ("cost_optimal", _D),
                ("optimal", alloc._Summary)]


class _Fit(ctypes.Structure):
    _fields_ = [("slope", _D), ("intercept", _D), ("r2", _D),
                ("n", c_size_t)]


class _RobustCfg(ctypes.Structure):
    _fields_ = [("segments", c_size_t), ("bits_per_key", _D), ("skew", _D),
                ("draws", c_size_t), ("scale_lo", _D), ("scale_hi", _D),
                ("seed", ctypes.c_uint64)]


class _Robust(ctypes.Structure):
    _fields_ = [("fit", _Fit), ("rel_err_half_law", _D),
                ("common_excess", _D), ("differential_excess", _D)]


class _DriftCfg(ctypes.Structure):
    _fields_ = [("segments", c_size_t), ("keys", _D), ("bits_per_key", _D),
                ("skew", _D), ("theta", _D), ("epoch", ctypes.c_uint),
                ("steps", ctypes.c_uint), ("warmup", ctypes.c_uint),
                ("kind", ctypes.c_int), ("seed", ctypes.c_uint64)]


class _Drift(ctypes.Structure):
    _fields_ = [("sigma", _D), ("r", _D), ("V", _D), ("G", _D),
                ("rstar", _D), ("c_uniform", _D), ("c_oracle", _D),
                ("c_compact", _D), ("c_static", _D)]


class _Frontier(ctypes.Structure):
    _fields_ = [("rstar", _D), ("quad_k", _D), ("quad_r2", _D),
                ("small_k", _D), ("r_coarse", _D), ("r_fallback", _D)]


check_sizes({_Run: 48, _Totals: 88, _Fit: 32, _RobustCfg: 56, _Robust: 56,
             _DriftCfg: 64, _Drift: 72, _Frontier: 48})

_RP = ctypes.POINTER(_Run)
_PKP = ctypes.POINTER(alloc._Pick)

declare({
    "amq_lsm_parse_csv": (S, [ctypes.c_char_p, c_size_t, _RP, c_size_t,
                              ctypes.POINTER(c_size_t), DP]),
    "amq_lsm_levels": (S, [ctypes.c_uint, _D, _D, _RP]),
    "amq_lsm_workload": (S, [ctypes.c_char_p, _RP, c_size_t, DP]),
    "amq_lsm_plan": (S, [_RP, c_size_t, P, _D, P, _PKP, _PKP,
                         ctypes.POINTER(_Totals)]),
    "amq_lsm_fit_line": (S, [_DP, _DP, _DP, c_size_t, ctypes.c_bool,
                             ctypes.POINTER(_Fit)]),
    "amq_lsm_loglaw": (S, [c_size_t, _D, _D, ctypes.c_uint64, P, P, _DP, _DP,
                           ctypes.POINTER(_Fit)]),
    "amq_lsm_robustness": (S, [ctypes.POINTER(_RobustCfg), P, P, _DP, _DP,
                               _DP, ctypes.POINTER(_Robust)]),
    "amq_lsm_drift_run": (S, [ctypes.POINTER(_DriftCfg), _D, P, P,
                              ctypes.POINTER(_Drift)]),
    "amq_lsm_frontier_fit": (S, [ctypes.POINTER(_Drift), c_size_t,
                                 ctypes.POINTER(_Frontier)]),
    "amq_lsm_measure": (S, [P, _D, c_size_t, ctypes.c_uint64,
                            ctypes.c_uint64, P, _PKP, _DP,
                            ctypes.POINTER(ctypes.c_uint64)]),
})

_real = alloc._real


def _invalid(msg: str) -> InvalidError:
    return InvalidError(_INVALID, msg)


def _count(x: Any, what: str, lo: int, hi: int) -> int:
    """A whole-number argument in [lo, hi] (an int, or a whole float such
    as 1e6)."""
    if isinstance(x, bool):
        raise TypeError("%s must be an int, not bool" % what)
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    try:
        v = int(x.__index__())
    except AttributeError:
        raise TypeError("%s must be a whole number, not %r" %
                        (what, x)) from None
    if not lo <= v <= hi:
        raise _invalid("%s must be in [%d, %d], got %d" % (what, lo, hi, v))
    return v


_U64 = (1 << 64) - 1
_UINT = (1 << 32) - 1
_SIZE = (1 << 63) - 1


# ---- runs ------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One run of the tree: its name (under NAME_MAX bytes), keys (> 0)
    and share of the lookups that probe it (>= 0, any scale)."""

    name: str
    keys: float
    lookups: float = 0.0

    @classmethod
    def _of(cls, r: _Run) -> "Run":
        return cls(r.name.decode(errors="replace"), r.keys, r.lookups)


RunLike = Union[Run, Mapping[str, Any], Sequence[Any]]


def _run_of(r: Any, i: int) -> Run:
    if isinstance(r, Run):
        return r
    if isinstance(r, Mapping):
        unknown = set(r) - {"name", "keys", "lookups"}
        if unknown or "keys" not in r:
            raise TypeError("run %d: expected the fields name, keys, "
                            "lookups" % i)
        return Run(r.get("name", "L%d" % (i + 1)), r["keys"],
                   r.get("lookups", 0.0))
    if isinstance(r, (tuple, list)) and 2 <= len(r) <= 3:
        return Run(*r)
    raise TypeError("run %d: expected an amq.lsm.Run, a dict or a (name, "
                    "keys, lookups) tuple, not %s" % (i, type(r).__name__))


def _runs_array(runs: Sequence[Any]) -> Tuple[Any, int]:
    if isinstance(runs, (str, bytes, Mapping, Run)):
        raise TypeError("runs must be a list of runs")
    rs = [_run_of(r, i) for i, r in enumerate(runs)]
    arr = (_Run * max(len(rs), 1))()
    for i, r in enumerate(rs):
        if not isinstance(r.name, str):
            raise TypeError("run %d: name must be a str" % i)
        name = r.name.encode()
        if len(name) >= NAME_MAX or b"\0" in name:
            raise _invalid("run %d: name must be under %d bytes without "
                           "NUL, got %r" % (i, NAME_MAX, r.name))
        arr[i].name = name
        arr[i].keys = _real(r.keys, "run %d: keys" % i)
        arr[i].lookups = _real(r.lookups, "run %d: lookups" % i)
    return arr, len(rs)


def _runs_list(arr: Any, n: int) -> List[Run]:
    return [Run._of(arr[i]) for i in range(n)]


def tree(levels: int = 5, ratio: float = 10.0, keys: float = 1e6,
         workload: Optional[str] = "uniform") -> List[Run]:
    """A leveled tree of `levels` levels (1..64) with size ratio `ratio`
    (> 1) holding `keys` keys: level i (1 the smallest) holds
    keys (T-1)/T^(L+1-i), normalised so the levels sum to keys; names
    "L1", "L2", .... The lookups come from the workload spec (see
    workload(); None leaves them at 0). The defaults are `amq lsm plan`'s.
    InvalidError for a bad shape, SpecError for a bad workload."""
    n = _count(levels, "levels", 1, 64)
    arr = (_Run * n)()
    check(lib.amq_lsm_levels(n, _real(ratio, "ratio"), _real(keys, "keys"),
                             arr))
    if workload is not None:
        _set_workload(workload, arr, n)
    return _runs_list(arr, n)


def _set_workload(spec: str, arr: Any, n: int) -> None:
    diag = Diag()
    check(lib.amq_lsm_workload(cstr(spec), arr, n, ctypes.byref(diag)), diag)


def workload(spec: str, runs: Sequence[RunLike]) -> List[Run]:
    """The runs with their lookups set from a workload spec, normalised to
    sum 1: "uniform" (every run probed equally), "zipf:S" (run i from 1
    proportional to i^-S, S >= 0) or "weights:a,b,..." (one non-negative
    weight per run, not all zero). SpecError (the message says where) for
    a bad spec, InvalidError for no runs."""
    arr, n = _runs_array(runs)
    if n == 0:
        raise _invalid("no runs")
    _set_workload(spec, arr, n)
    return _runs_list(arr, n)


def parse_csv(text: Union[str, bytes]) -> List[Run]:
    """Runs from CSV text of rows "name,keys,lookups" (fields trimmed; an
    optional header row; blank lines and lines starting with '#' skipped;
    no quoting), as `amq lsm plan --csv` reads them. InvalidError naming
    the line for a bad row, no runs, or every run with 0 lookups (the
    exception's detail says where; .detail has the message)."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    count = c_size_t()
    diag = Diag()
    st = lib.amq_lsm_parse_csv(data, len(data), None, 0,
                               ctypes.byref(count), ctypes.byref(diag))
    if st != _BUFFER:
        check(st, diag)
    arr = (_Run * max(count.value, 1))()
    check(lib.amq_lsm_parse_csv(data, len(data), arr, count.value,
                                ctypes.byref(count), ctypes.byref(diag)),
          diag)
    return _runs_list(arr, count.value)


def read_csv(path: Union[str, "os.PathLike[str]"]) -> List[Run]:
    """parse_csv of a file's contents."""
    with open(path, "rb") as f:
        return parse_csv(f.read())


# ---- curves ----------------------------------------------------------------

class _CurveOf:
    """A curve argument ("model", a spec, or an alloc.Curve), made for the
    call and released after it."""

    def __init__(self, curve: Any, c: float) -> None:
        self.owned: Optional[Curve] = None
        if isinstance(curve, Curve):
            self.curve = curve
        elif isinstance(curve, str):
            self.curve = self.owned = Curve.model(c) if curve == "model" \
                else Curve(curve)
        else:
            raise TypeError("curve must be \"model\", a spec str or an "
                            "amq.alloc.Curve, not %s" % type(curve).__name__)

    def __enter__(self) -> Any:
        return self.curve._h()

    def __exit__(self, *exc: Any) -> None:
        if self.owned is not None:
            self.owned.close()


CurveLike = Union[str, Curve]


# ---- planning --------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """Monkey's allocation of one tree against the uniform baseline
    (amq_lsm_totals and the two pick arrays).

    runs: the tree; optimal[i] / uniform[i]: run i's Pick under the
    engine's allocation and under the same bits everywhere; bits_per_key:
    the budget; memory_bits: the budget in bits (bits_per_key x sum keys);
    cost_uniform / cost_optimal: sum w f with the lookups normalised to
    sum 1 (expected wasted reads per lookup); summary: the engine's
    summary (on the normalised weights); curve: the curve's label."""

    runs: Tuple[Run, ...]
    optimal: Tuple[Pick, ...]
    uniform: Tuple[Pick, ...]
    bits_per_key: float
    memory_bits: float
    cost_uniform: float
    cost_optimal: float
    summary: Summary
    curve: str

    @property
    def reduction(self) -> float:
        """1 - cost_optimal / cost_uniform: the share of wasted reads the
        allocation saves (0 when the uniform cost is 0)."""
        if self.cost_uniform > 0:
            return 1 - self.cost_optimal / self.cost_uniform
        return 0.0

    def to_dict(self) -> dict:
        """The plan in the layout of `amq lsm plan --json` (non-finite
        numbers as None, as JSON has no NaN)."""
        def num(v: float) -> Optional[float]:
            return v if math.isfinite(v) else None

        def pick(prefix: str, p: Pick) -> dict:
            return {prefix + "bits_per_key": num(p.bits_per_key),
                    prefix + "spec": p.spec, prefix + "fpr": num(p.fpr)}

        return {"curve": self.curve, "bits_per_key": num(self.bits_per_key),
                "memory_bits": num(self.memory_bits),
                "memory_used_bits": num(self.summary.memory_bits),
                "cost_uniform": num(self.cost_uniform),
                "cost_optimal": num(self.cost_optimal),
                "kkt_residual": num(self.summary.kkt_residual),
                "runs": [dict({"name": r.name, "keys": num(r.keys),
                               "lookups": num(r.lookups)},
                              **pick("", o), **pick("uniform_", u))
                         for r, o, u in zip(self.runs, self.optimal,
                                            self.uniform)]}


def plan(runs: Sequence[RunLike], bits_per_key: float, *,
         curve: CurveLike = "bloom", c: float = BLOOM_C) -> Plan:
    """Monkey: minimise sum w_i f_i(b_i) subject to sum n_i b_i =
    bits_per_key x sum n_i on `curve` ("model": e^(-c b); a type spec,
    "bloom" by default as in `amq lsm plan`; or an amq.alloc.Curve), and
    the uniform allocation of the same memory. runs: Run objects, dicts or
    (name, keys, lookups) tuples (tree(), parse_csv()). InvalidError for no
    runs, keys <= 0, lookups < 0 or all 0, a negative or non-finite
    budget."""
    arr, n = _runs_array(runs)
    if n == 0:
        raise _invalid("no runs")
    bpk = _real(bits_per_key, "bits_per_key")
    opt = (alloc._Pick * n)()
    uni = (alloc._Pick * n)()
    t = _Totals()
    with _CurveOf(curve, _real(c, "c")) as h:
        label = lib.amq_alloc_curve_label(h).decode()
        check(lib.amq_lsm_plan(arr, n, h, bpk, None, opt, uni,
                               ctypes.byref(t)))
    return Plan(tuple(_runs_list(arr, n)),
                tuple(Pick._of(opt[i]) for i in range(n)),
                tuple(Pick._of(uni[i]) for i in range(n)),
                t.bits_per_key, t.memory_bits, t.cost_uniform,
                t.cost_optimal, Summary._of(t.optimal), label)


# ---- fitting ---------------------------------------------------------------

@dataclass(frozen=True)
class Fit:
    """A least-squares line y = slope x + intercept (amq_lsm_fit): r2 and
    the number of points n."""

    slope: float
    intercept: float
    r2: float
    n: int

    @classmethod
    def _of(cls, f: _Fit) -> "Fit":
        return cls(f.slope, f.intercept, f.r2, int(f.n))


def _doubles(xs: Any, what: str) -> Any:
    if isinstance(xs, (str, bytes)):
        raise TypeError("%s must be a sequence of numbers" % what)
    vals = [_real(v, what) for v in xs]
    return (ctypes.c_double * max(len(vals), 1))(*vals), len(vals)


def fit_line(x: Sequence[float], y: Sequence[float],
             weights: Optional[Sequence[float]] = None, *,
             through_origin: bool = False) -> Fit:
    """Least squares y = slope x + intercept over the points (weights:
    one per point, None for all 1; through_origin forces the intercept to
    0, r2 still measured against the mean). ValueError for lengths that
    differ, InvalidError for fewer than 2 points or no spread in x."""
    xa, n = _doubles(x, "x")
    ya, ny = _doubles(y, "y")
    wa = None
    if ny != n:
        raise ValueError("x has %d points, y %d" % (n, ny))
    if weights is not None:
        wa, nw = _doubles(weights, "weights")
        if nw != n:
            raise ValueError("%d points, %d weights" % (n, nw))
    f = _Fit()
    check(lib.amq_lsm_fit_line(xa, ya, wa, n, bool(through_origin),
                               ctypes.byref(f)))
    return Fit._of(f)


# ---- the laws --------------------------------------------------------------

@dataclass(frozen=True)
class LogLaw:
    """The log-law's regression of the optimal bits on ln w over the runs
    that get bits (fit; slope 1/c = 2.0814 on Bloom's model), and every
    run's point: ln_w[i], bits[i]."""

    fit: Fit
    ln_w: Tuple[float, ...]
    bits: Tuple[float, ...]


def loglaw(runs: int = 50, alpha: float = 0.3, bits_per_key: float = 8.0, *,
           seed: int = 0, curve: CurveLike = "model",
           c: float = BLOOM_C) -> LogLaw:
    """Log-law: `runs` equal runs (>= 2), hotness drawn from
    Dirichlet(alpha), bits_per_key on average, allocated on `curve`.
    InvalidError for runs < 2, alpha <= 0, a bad budget."""
    n = _count(runs, "runs", 2, _SIZE)
    lw = (ctypes.c_double * n)()
    b = (ctypes.c_double * n)()
    f = _Fit()
    with _CurveOf(curve, _real(c, "c")) as h:
        check(lib.amq_lsm_loglaw(n, _real(alpha, "alpha"),
                                 _real(bits_per_key, "bits_per_key"),
                                 _count(seed, "seed", 0, _U64), h, None, lw,
                                 b, ctypes.byref(f)))
    return LogLaw(Fit._of(f), tuple(lw), tuple(b))


@dataclass(frozen=True)
class Robustness:
    """The robustness law (amq_lsm_robust and its points).

    fit: the excess cost regressed on D = Var_n(delta) through the origin
    (slope 1/2 by the law); rel_err_half_law: mean |excess - D/2| / (D/2);
    common_excess / differential_excess: mean excess of common-factor and
    of differential errors of the same size (the first ~0); D[k],
    excess[k], exact[k]: each draw's variance, measured excess and the
    closed form sum (n_i/N) e^-(delta_i - mean delta) - 1 (exact for the
    model when no run is clipped at 0 bits)."""

    fit: Fit
    rel_err_half_law: float
    common_excess: float
    differential_excess: float
    D: Tuple[float, ...]
    excess: Tuple[float, ...]
    exact: Tuple[float, ...]


def robustness(segments: int = 64, bits_per_key: float = 10.0,
               skew: float = 0.9, draws: int = 600,
               scale: Tuple[float, float] = (0.02, 0.25), *, seed: int = 1,
               curve: CurveLike = "model",
               c: float = BLOOM_C) -> Robustness:
    """Robustness law: `segments` equal runs with Zipf(skew) hotness; for
    each of `draws` draws, log-errors delta_i ~ N(0, s^2) with s ~
    U(scale), allocation from w_i e^delta_i priced under the true w.
    InvalidError for segments or draws < 2, a bad scale or budget."""
    if not isinstance(scale, (tuple, list)) or len(scale) != 2:
        raise TypeError("scale must be a (lo, hi) pair")
    cfg = _RobustCfg(_count(segments, "segments", 2, _SIZE),
                     _real(bits_per_key, "bits_per_key"), _real(skew, "skew"),
                     _count(draws, "draws", 2, _SIZE),
                     _real(scale[0], "scale"), _real(scale[1], "scale"),
                     _count(seed, "seed", 0, _U64))
    n = cfg.draws
    D = (ctypes.c_double * n)()
    ex = (ctypes.c_double * n)()
    exact = (ctypes.c_double * n)()
    r = _Robust()
    with _CurveOf(curve, _real(c, "c")) as h:
        check(lib.amq_lsm_robustness(ctypes.byref(cfg), h, None, D, ex,
                                     exact, ctypes.byref(r)))
    return Robustness(Fit._of(r.fit), r.rel_err_half_law, r.common_excess,
                      r.differential_excess, tuple(D), tuple(ex),
                      tuple(exact))


@dataclass(frozen=True)
class Drift:
    """One drift simulation (amq_lsm_drift): sigma; r, the mean over
    epochs of sqrt Var_n(ln w change); V = (C_compact - C_oracle) /
    (C_uniform - C_oracle), the share of the benefit of tracking that
    re-allocating only at compaction leaves behind; G = C_uniform /
    C_oracle - 1; rstar = sqrt(2 G); the time-averaged costs of the four
    policies (uniform, oracle: re-allocated every step, compact: at each
    compaction, static: the first allocation kept)."""

    sigma: float
    r: float
    V: float
    G: float
    rstar: float
    c_uniform: float
    c_oracle: float
    c_compact: float
    c_static: float

    @classmethod
    def _of(cls, d: _Drift) -> "Drift":
        return cls(d.sigma, d.r, d.V, d.G, d.rstar, d.c_uniform, d.c_oracle,
                   d.c_compact, d.c_static)

    def _c(self) -> _Drift:
        return _Drift(*(_real(getattr(self, f), f) for f, _ in
                        _Drift._fields_))


_KINDS = {"walk": 0, "linear": 1}


def drift(sigma: float, segments: int = 64, keys: float = 1e6,
          bits_per_key: float = 10.0, skew: float = 0.9, theta: float = 0.03,
          epoch: int = 30, steps: int = 1500, warmup: int = 100,
          kind: str = "walk", *, seed: int = 2, curve: CurveLike = "model",
          c: float = BLOOM_C) -> Drift:
    """One drift simulation: hotness ln w_i starting at Zipf(skew) and
    drifting by sigma per step ("walk": a random walk pulled back by
    theta; "linear": a constant rate per epoch, fresh each epoch), with a
    compaction every `epoch` steps, over `steps` steps of which the first
    `warmup` are not counted. InvalidError for a bad configuration (steps
    <= warmup, theta outside [0, 1), ...)."""
    if kind not in _KINDS:
        raise ValueError("kind must be \"walk\" or \"linear\", not %r" %
                         (kind,))
    cfg = _DriftCfg(_count(segments, "segments", 2, _SIZE),
                    _real(keys, "keys"), _real(bits_per_key, "bits_per_key"),
                    _real(skew, "skew"), _real(theta, "theta"),
                    _count(epoch, "epoch", 1, _UINT),
                    _count(steps, "steps", 1, _UINT),
                    _count(warmup, "warmup", 0, _UINT), _KINDS[kind],
                    _count(seed, "seed", 0, _U64))
    out = _Drift()
    with _CurveOf(curve, _real(c, "c")) as h:
        check(lib.amq_lsm_drift_run(ctypes.byref(cfg), _real(sigma, "sigma"),
                                    h, None, ctypes.byref(out)))
    return Drift._of(out)


def drift_sweep(lo: float = 0.01, hi: float = 1.2, count: int = 18, *,
                seed: int = 2, **kw: Any) -> List[Drift]:
    """drift() at `count` sigmas log-spaced from lo to hi, the i-th with
    seed + i: the sweep `amq-lab lsm simulate --law frontier` runs (its
    --sigmas lo,hi,count). Other keywords go to drift()."""
    n = _count(count, "count", 1, 256)
    lo_, hi_ = _real(lo, "lo"), _real(hi, "hi")
    base = _count(seed, "seed", 0, _U64)
    if not (lo_ > 0 and hi_ >= lo_):
        raise _invalid("the sigmas need 0 < lo <= hi")
    out = []
    for i in range(n):
        s = lo_ * (hi_ / lo_) ** (i / (n - 1)) if n > 1 else lo_
        out.append(drift(s, seed=(base + i) & _U64, **kw))
    return out


@dataclass(frozen=True)
class Frontier:
    """The adaptivity frontier summarised over drift runs
    (amq_lsm_frontier): rstar, the median sqrt(2 G); quad_k and quad_r2,
    V = quad_k (r / rstar)^2 fitted over r <= rstar; small_k, the median
    of V G / r^2 over r <= 0.35 rstar (1/6 for linear drift, 1/4 for a
    random walk; NaN if no run is that small); r_coarse, the largest r
    with V <= 0.1 (0 if none); r_fallback, the smallest r with V >= 1
    (NaN if none)."""

    rstar: float
    quad_k: float
    quad_r2: float
    small_k: float
    r_coarse: float
    r_fallback: float


def frontier(runs: Sequence[Drift]) -> Frontier:
    """Summarise drift runs (any order, 1 to 256). InvalidError for none
    or more than 256."""
    if not all(isinstance(d, Drift) for d in runs):
        raise TypeError("frontier() takes amq.lsm.Drift results")
    n = len(runs)
    if not 1 <= n <= 256:
        raise _invalid("frontier() takes 1 to 256 drift runs, got %d" % n)
    arr = (_Drift * n)(*(d._c() for d in runs))
    out = _Frontier()
    check(lib.amq_lsm_frontier_fit(arr, n, ctypes.byref(out)))
    return Frontier(out.rstar, out.quad_k, out.quad_r2, out.small_k,
                    out.r_coarse, out.r_fallback)


@dataclass(frozen=True)
class Measurement:
    """A real filter built at a curve's pick (amq_lsm_measure): the pick,
    the built filter's bits per key (bits_actual; 0 for no filter), and
    false_positives out of `queries` random strangers."""

    pick: Pick
    bits_actual: float
    false_positives: int
    queries: int

    @property
    def fpr(self) -> float:
        """The measured false-positive rate."""
        return self.false_positives / self.queries


def measure(curve: CurveLike, bits_per_key: float, keys: int = 1000000,
            queries: int = 10000000, *, seed: int = 0) -> Measurement:
    """Build a filter of `keys` random keys at the curve's realisable
    choice for bits_per_key (Curve.at) and count false positives over
    `queries` random strangers (defaults: `amq-lab lsm simulate --law
    curves`'s sizes). UnsupportedError for the model or a caller's curve
    (nothing to build), InvalidError for keys or queries 0, the errors of
    building the filter."""
    k = _count(keys, "keys", 1, _SIZE)
    q = _count(queries, "queries", 1, _U64)
    p = alloc._Pick()
    bits = ctypes.c_double()
    fp = ctypes.c_uint64()
    with _CurveOf(curve, BLOOM_C) as h:
        check(lib.amq_lsm_measure(h, _real(bits_per_key, "bits_per_key"), k,
                                  q, _count(seed, "seed", 0, _U64), None,
                                  ctypes.byref(p), ctypes.byref(bits),
                                  ctypes.byref(fp)))
    return Measurement(Pick._of(p), bits.value, int(fp.value), q)


__all__ = ["NAME_MAX", "Run", "Plan", "Fit", "LogLaw", "Robustness", "Drift",
           "Frontier", "Measurement", "tree", "workload", "parse_csv",
           "read_csv", "plan", "fit_line", "loglaw", "robustness", "drift",
           "drift_sweep", "frontier", "measure"]
