"""amq.Cascade: the learned Bloom filter cascade with a certified bound on
its false-positive rate, and the learned baselines built from the same
parts (amq/cascade.h, docs/cascade.md).

A logistic-regression scorer trained in C maps each key to a score; the
score axis is cut into intervals, the top one accepted outright, each of
the others guarded by a residual filter holding exactly the members whose
scores fall there. Members are never rejected (unless a reject tail is
asked for). The bound on the rate for non-members drawn like the sample
given at training is certified from a held-out split of that sample:

    FPR <= p_0 + sum_l p_l * eps_l (+ eps_aux)

with each p_l replaced by its Clopper-Pearson upper limit, so it holds
with probability at least 1 - eta over the draw of that split. Training
chooses the model, the residual type and the bins itself, and keeps a
plain filter (no model: Cascade.plain) when no learned cascade is
smaller.

Keys are what amq.Filter takes (str as UTF-8, bytes-like, int as 8 bytes
little-endian), in lists, iterables or NumPy arrays (integer, bytes or str
arrays are packed with no per-key Python work). The cascade scores the
key's bytes, so the same strings give the same answers as `amq cascade`
on a file of lines.
"""

import ctypes
import itertools
import math
import operator
import os
from array import array
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from . import _keys
from ._errors import ClosedError, InvalidError, UnsupportedError, check
from ._filter import options
from ._handle import Handle, load_frame, save_frame
from ._native import (DP, OP, PP, Diag, P, S, c_dp, c_sizep, check_sizes,
                      cstr, declare, lib)

PathLike = Union[str, bytes, "os.PathLike[str]"]

MAX_LEVELS = 16
MAX_BINS = 4096
DIM_BITS_MIN = 8
DIM_BITS_MAX = 20

# What training chooses by itself (amq_cascade_config.choose).
CHOOSE_MODEL = 0x1
CHOOSE_RESIDUAL = 0x2
CHOOSE_BINS = 0x4
CHOOSE_PLAIN = 0x8
CHOOSE_ALL = 0xF

KINDS = ("cascade", "lbf", "sandwich", "plbf")
PARTITIONS = ("optimal", "equal-members", "equal-mass")
TAILS = ("guard", "reject")
CALIBRATIONS = ("none", "platt", "isotonic")
ORIGINS = ("built", "added")


# ---- the C structures ------------------------------------------------------


class _Keys(ctypes.Structure):
    """amq_keys: n keys back to back, key i at bytes[offsets[i]:...]."""
    _fields_ = [("bytes", ctypes.c_void_p), ("offsets", ctypes.c_void_p),
                ("n", ctypes.c_size_t)]


class _FeatureConfig(ctypes.Structure):
    _fields_ = [("dim_bits", ctypes.c_uint32), ("ngram_max", ctypes.c_uint32)]


class _ModelConfig(ctypes.Structure):
    _fields_ = [("features", _FeatureConfig), ("epochs", ctypes.c_uint32),
                ("learning_rate", ctypes.c_double), ("l2", ctypes.c_double),
                ("member_weight", ctypes.c_double),
                ("tail_weight", ctypes.c_double),
                ("quantize", ctypes.c_bool), ("calibration", ctypes.c_int),
                ("seed", ctypes.c_uint64)]


class _CascadeConfig(ctypes.Structure):
    _fields_ = [("model", _ModelConfig), ("method", ctypes.c_int),
                ("fpr", ctypes.c_double), ("bits_per_key", ctypes.c_double),
                ("levels", ctypes.c_uint32), ("bins", ctypes.c_uint32),
                ("partition", ctypes.c_int), ("tail", ctypes.c_int),
                ("delta", ctypes.c_double), ("eta", ctypes.c_double),
                ("holdout", ctypes.c_double), ("residual", ctypes.c_char_p),
                ("aux", ctypes.c_char_p), ("aux_capacity", ctypes.c_uint64),
                ("aux_fpr", ctypes.c_double), ("max_stale", ctypes.c_uint64),
                ("headroom", ctypes.c_uint32), ("choose", ctypes.c_uint32),
                ("worst_case", ctypes.c_double)]


class _Score(ctypes.Structure):
    _fields_ = [("raw", ctypes.c_double), ("model_id", ctypes.c_uint64)]


class _Level(ctypes.Structure):
    _fields_ = [("bin_lo", ctypes.c_uint32), ("bin_hi", ctypes.c_uint32),
                ("tau_lo", ctypes.c_double), ("tau_hi", ctypes.c_double),
                ("prob_lo", ctypes.c_double), ("prob_hi", ctypes.c_double),
                ("n", ctypes.c_uint64), ("stale", ctypes.c_uint64),
                ("certify_hits", ctypes.c_uint64), ("p_hat", ctypes.c_double),
                ("p_upper", ctypes.c_double), ("eps", ctypes.c_double),
                ("bytes", ctypes.c_size_t), ("spec", ctypes.c_char * 96)]


class _Stats(ctypes.Structure):
    _fields_ = [("method", ctypes.c_int), ("levels", ctypes.c_uint32),
                ("bins", ctypes.c_uint32), ("accept_bin", ctypes.c_uint32),
                ("max_accept_bin", ctypes.c_uint32),
                ("reject_bins", ctypes.c_uint32),
                ("version", ctypes.c_uint64), ("model_id", ctypes.c_uint64),
                ("members", ctypes.c_uint64), ("added", ctypes.c_uint64),
                ("removed", ctypes.c_uint64), ("stale", ctypes.c_uint64),
                ("certify_n", ctypes.c_uint64), ("tune_n", ctypes.c_uint64),
                ("eta", ctypes.c_double), ("target_fpr", ctypes.c_double),
                ("target_bits_per_key", ctypes.c_double),
                ("p0_hat", ctypes.c_double), ("p0_upper", ctypes.c_double),
                ("fpr_bound", ctypes.c_double),
                ("fpr_estimate", ctypes.c_double),
                ("tail_fnr", ctypes.c_double), ("front_eps", ctypes.c_double),
                ("aux_eps", ctypes.c_double),
                ("model_bytes", ctypes.c_size_t),
                ("residual_bytes", ctypes.c_size_t),
                ("front_bytes", ctypes.c_size_t),
                ("aux_bytes", ctypes.c_size_t),
                ("table_bytes", ctypes.c_size_t),
                ("bits_per_key", ctypes.c_double),
                ("build_seconds", ctypes.c_double),
                ("learned_bound", ctypes.c_double),
                ("worst_case_bound", ctypes.c_double),
                ("fallback", ctypes.c_bool), ("plain", ctypes.c_bool),
                ("plain_bytes", ctypes.c_double)]


class _AuditLevel(ctypes.Structure):
    _fields_ = [("hits", ctypes.c_uint64), ("p_hat", ctypes.c_double),
                ("p_lower", ctypes.c_double), ("p_upper", ctypes.c_double),
                ("p_build", ctypes.c_double), ("unverified", ctypes.c_bool),
                ("violated", ctypes.c_bool)]


class _AuditReport(ctypes.Structure):
    _fields_ = [("queries", ctypes.c_uint64), ("sampled", ctypes.c_uint64),
                ("members", ctypes.c_uint64), ("nonmembers", ctypes.c_uint64),
                ("false_positives", ctypes.c_uint64),
                ("false_negatives", ctypes.c_uint64),
                ("fpr_hat", ctypes.c_double), ("fpr_lower", ctypes.c_double),
                ("fpr_upper", ctypes.c_double),
                ("bound_build", ctypes.c_double),
                ("bound_audit", ctypes.c_double),
                ("drift_chi2", ctypes.c_double),
                ("drift_df", ctypes.c_uint32),
                ("drift_pvalue", ctypes.c_double),
                ("drift_psi", ctypes.c_double),
                ("p0_unverified", ctypes.c_bool),
                ("p0_violated", ctypes.c_bool),
                ("unverified", ctypes.c_bool), ("violated", ctypes.c_bool),
                ("nlevels", ctypes.c_size_t)]


check_sizes({_Keys: 24, _FeatureConfig: 8, _ModelConfig: 64,
             _CascadeConfig: 184, _Score: 16, _Level: 192, _Stats: 256,
             _AuditLevel: 48, _AuditReport: 136})

_KP = ctypes.POINTER(_Keys)
_B = ctypes.c_char_p
_Z = ctypes.c_size_t

declare({
    "amq_cascade_config_init": (None, [ctypes.POINTER(_CascadeConfig)]),
    "amq_cascade_train": (S, [_KP, _KP, ctypes.POINTER(_CascadeConfig), OP,
                              PP, DP]),
    "amq_cascade_rebuild": (S, [P, _KP, _KP, _KP, PP, DP]),
    "amq_cascade_free": (None, [P]),
    "amq_cascade_contains": (ctypes.c_bool, [P, _B, _Z]),
    "amq_cascade_contains_batch": (None, [P, _KP, P]),
    "amq_cascade_score": (_Score, [P, _B, _Z]),
    "amq_cascade_bin": (ctypes.c_uint32, [P, ctypes.c_double]),
    "amq_cascade_add": (S, [P, _B, _Z]),
    "amq_cascade_remove": (S, [P, _B, _Z, ctypes.c_int]),
    "amq_cascade_set_accept_bin": (S, [P, ctypes.c_uint32]),
    "amq_cascade_fpr_bound": (ctypes.c_double, [P]),
    "amq_cascade_get_stats": (None, [P, ctypes.POINTER(_Stats),
                                     ctypes.POINTER(_Level), _Z, c_sizep]),
    "amq_cascade_model": (P, [P]),
    "amq_cascade_is_plain": (ctypes.c_bool, [P]),
    "amq_cascade_set_fallback": (S, [P, ctypes.c_bool]),
    "amq_cascade_fallback": (ctypes.c_bool, [P]),
    "amq_model_probability": (ctypes.c_double, [P, ctypes.c_double]),
    "amq_model_score_batch": (None, [P, _KP, c_dp]),
    "amq_learned_method_name": (ctypes.c_char_p, [ctypes.c_int]),
    "amq_cascade_save_size": (_Z, [P]),
    "amq_cascade_save": (S, [P, P, _Z, c_sizep]),
    "amq_cascade_load": (S, [_B, _Z, OP, PP, DP]),
    "amq_cascade_save_file": (S, [P, _B, DP]),
    "amq_cascade_load_file": (S, [_B, OP, PP, DP]),
    "amq_audit_new": (S, [P, ctypes.c_double, ctypes.c_uint64, OP, PP]),
    "amq_audit_free": (None, [P]),
    "amq_audit_sample": (ctypes.c_bool, [P]),
    "amq_audit_record": (S, [P, _B, _Z, ctypes.c_bool]),
    "amq_audit_get_report": (None, [P, ctypes.POINTER(_AuditReport),
                                    ctypes.POINTER(_AuditLevel), _Z]),
})


# ---- key sets ---------------------------------------------------------------


class _KeySet:
    """A collection of keys packed as amq_keys, with what keeps its
    buffers alive."""

    __slots__ = ("keys", "n", "keep")

    def __init__(self, data: int, offsets: int, n: int, keep: Any) -> None:
        self.keys = _Keys(data, offsets, n)
        self.n = n
        self.keep = keep

    def ref(self) -> Any:
        return ctypes.byref(self.keys)


def _bytes_address(data: bytes) -> int:
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0


def _fixed8(data: bytes, n: int) -> _KeySet:
    """n keys of 8 bytes each, back to back."""
    offsets = array("Q", range(0, 8 * n + 1, 8))
    return _KeySet(_bytes_address(data), offsets.buffer_info()[0], n,
                   (data, offsets))


def _list_set(chunk: List[Any]) -> _KeySet:
    if chunk and type(chunk[0]) is int:
        ints = _keys._int_chunk(chunk)
        if ints is not None:
            return _fixed8(ints.tobytes(), len(chunk))
    if not all(type(k) is bytes for k in chunk):
        chunk = [_keys.key_bytes(k) for k in chunk]
    data = b"".join(chunk)
    offsets = array("Q", itertools.accumulate(map(len, chunk), initial=0))
    return _KeySet(_bytes_address(data), offsets.buffer_info()[0],
                   len(chunk), (data, offsets))


def _numpy_set(np: Any, a: Any) -> _KeySet:
    if a.ndim != 1:
        raise ValueError("amq keys: expected a 1-D array, got %d-D (use "
                         ".ravel())" % a.ndim)
    kind = a.dtype.kind
    n = len(a)
    if kind == "O":
        return _list_set(a.tolist())
    if kind in "iub":
        a = np.ascontiguousarray(a, dtype="<i8" if kind == "i" else "<u8")
        offsets = np.arange(0, 8 * n + 1, 8, dtype=np.uint64)
        return _KeySet(a.ctypes.data, offsets.ctypes.data, n, (a, offsets))
    if kind == "U":
        a = np.char.encode(a, "utf-8")
        kind = "S"
    if kind != "S":
        raise TypeError("amq keys: a NumPy array of %s; keys are integers, "
                        "bytes (S) or str (U), or an object array of them" %
                        a.dtype)
    width = a.dtype.itemsize
    lens = np.char.str_len(a).astype(np.int64)
    offsets = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(lens, out=offsets[1:], dtype=np.uint64)
    if width == 0 or n == 0:
        data = np.zeros(1, dtype=np.uint8)
    else:
        grid = np.ascontiguousarray(a).view(np.uint8).reshape(n, width)
        data = np.ascontiguousarray(grid[np.arange(width) < lens[:, None]])
        if data.size == 0:
            data = np.zeros(1, dtype=np.uint8)
    return _KeySet(data.ctypes.data, offsets.ctypes.data, n, (data, offsets))


def _int_buffer(keys: Any) -> Optional[bytes]:
    """The bytes of an array('q'/'Q') or a 1-D 8-byte integer memoryview."""
    if isinstance(keys, array) and keys.typecode in "qQ":
        return keys.tobytes()
    if isinstance(keys, memoryview) and \
            keys.format in _keys._INT64_FORMATS and keys.ndim == 1:
        return keys.tobytes()
    return None


def key_set(keys: Any) -> _KeySet:
    """Every key of a collection packed as one amq_keys."""
    _keys.refuse_single(keys)
    np = _keys.numpy_of(keys)
    if np is not None:
        return _numpy_set(np, keys)
    raw = _int_buffer(keys)
    if raw is not None:
        return _fixed8(raw, len(raw) // 8)
    return _list_set(list(keys))


def key_chunks(keys: Any) -> Iterator[_KeySet]:
    """The keys of a collection as amq_keys of at most CHUNK keys each,
    in order."""
    _keys.refuse_single(keys)
    np = _keys.numpy_of(keys)
    if np is not None:
        if keys.ndim != 1:
            raise ValueError("amq keys: expected a 1-D array, got %d-D (use "
                             ".ravel())" % keys.ndim)
        for start in range(0, len(keys), _keys.CHUNK):
            yield _numpy_set(np, keys[start:start + _keys.CHUNK])
        return
    raw = _int_buffer(keys)
    if raw is not None:
        step = 8 * _keys.CHUNK
        for start in range(0, len(raw), step):
            part = raw[start:start + step]
            yield _fixed8(part, len(part) // 8)
        return
    for chunk in _keys._list_chunks(keys):
        yield _list_set(chunk)


# ---- arguments --------------------------------------------------------------


def _pick(what: str, value: Any, names: Tuple[str, ...]) -> int:
    if not isinstance(value, str):
        raise TypeError("%s must be a str, one of %s" %
                        (what, ", ".join(names)))
    try:
        return names.index(value)
    except ValueError:
        raise InvalidError(2, "unknown %s '%s' (one of %s)" %
                           (what, value, ", ".join(names))) from None


def _uint(what: str, value: Any, bits: int) -> int:
    if isinstance(value, bool) or isinstance(value, float):
        raise TypeError("%s must be an int, not %s" %
                        (what, type(value).__name__))
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an int, not %s" %
                        (what, type(value).__name__)) from None
    if not 0 <= v < (1 << bits):
        raise InvalidError(2, "%s must be in [0, 2**%d), got %d" %
                           (what, bits, v))
    return v


def _real(what: str, value: Any) -> float:
    if isinstance(value, (bool, str, bytes)) or \
            not hasattr(value, "__float__"):
        raise TypeError("%s must be a number, not %s" %
                        (what, type(value).__name__))
    v = float(value)
    if not math.isfinite(v):
        raise InvalidError(2, "%s must be finite, got %r" % (what, v))
    return v


def _number(what: str, value: Any) -> float:
    """A float argument where inf and nan mean themselves (a raw score)."""
    if isinstance(value, (bool, str, bytes)) or \
            not hasattr(value, "__float__"):
        raise TypeError("%s must be a number, not %s" %
                        (what, type(value).__name__))
    return float(value)


def _bool(what: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("%s must be a bool, not %s" %
                        (what, type(value).__name__))
    return value


def _choices(cfg: _CascadeConfig, kw: Dict[str, Any]) -> None:
    """What training chooses: everything (amq_cascade_config_init's
    CHOOSE_ALL) but what a keyword pins. A model given by dim_bits or
    quantize takes the other from the C defaults (2^16 dimensions, float
    weights)."""
    choose = CHOOSE_ALL
    m = cfg.model
    if kw["dim_bits"] is not None:
        m.features.dim_bits = _uint("dim_bits", kw["dim_bits"], 32)
        choose &= ~CHOOSE_MODEL
    if kw["quantize"] is not None:
        m.quantize = _bool("quantize", kw["quantize"])
        choose &= ~CHOOSE_MODEL
    if kw["residual"] is not None:
        cfg.residual = cstr(kw["residual"])
        choose &= ~CHOOSE_RESIDUAL
    if kw["bins"] is not None:
        cfg.bins = _uint("bins", kw["bins"], 32)
        choose &= ~CHOOSE_BINS
    if _bool("learned", kw["learned"]):
        choose &= ~CHOOSE_PLAIN
    cfg.choose = choose
    if kw["worst_case"] is not None:
        cfg.worst_case = _real("worst_case", kw["worst_case"])
        if not 0 < cfg.worst_case < 1:
            raise InvalidError(2, "worst_case must be in (fpr, 1), got %r" %
                               cfg.worst_case)


def _config(kw: Dict[str, Any]) -> _CascadeConfig:
    """amq_cascade_config from the keyword arguments of Cascade()."""
    cfg = _CascadeConfig()
    lib.amq_cascade_config_init(ctypes.byref(cfg))
    _choices(cfg, kw)
    m = cfg.model
    m.features.ngram_max = _uint("ngram_max", kw["ngram_max"], 32)
    m.epochs = _uint("epochs", kw["epochs"], 32)
    m.learning_rate = _real("learning_rate", kw["learning_rate"])
    l2 = _real("l2", kw["l2"])
    m.l2 = l2 if l2 > 0 else -1.0  # the C struct's "none"
    if kw["member_weight"] is not None:
        m.member_weight = _real("member_weight", kw["member_weight"])
        if m.member_weight <= 0:
            raise InvalidError(2, "member_weight must be > 0 (None: "
                               "balanced)")
    m.tail_weight = _real("tail_weight", kw["tail_weight"])
    m.calibration = _pick("calibration", kw["calibration"], CALIBRATIONS)
    m.seed = _uint("seed", kw["seed"], 64)
    cfg.method = _pick("kind", kw["kind"], KINDS)
    for name in ("fpr", "bits_per_key"):
        if kw[name] is not None:
            setattr(cfg, name, _real(name, kw[name]))
            if getattr(cfg, name) <= 0:
                raise InvalidError(2, "%s must be > 0" % name)
    levels = kw["levels"]
    cfg.levels = 0 if levels is None or levels == "auto" else \
        _uint("levels", levels, 32)
    if levels is not None and levels != "auto" and cfg.levels == 0:
        raise InvalidError(2, "levels must be 1 to %d, or None (auto)" %
                           MAX_LEVELS)
    cfg.partition = _pick("partition", kw["partition"], PARTITIONS)
    cfg.tail = _pick("tail", kw["tail"], TAILS)
    cfg.delta = _real("delta", kw["delta"])
    cfg.eta = _real("eta", kw["eta"])
    cfg.holdout = _real("holdout", kw["holdout"])
    cfg.aux = cstr(kw["aux"])
    cfg.aux_capacity = _uint("aux_capacity", kw["aux_capacity"], 64)
    if kw["aux_fpr"] is not None:
        cfg.aux_fpr = _real("aux_fpr", kw["aux_fpr"])
        if not 0 < cfg.aux_fpr < 1:
            raise InvalidError(2, "aux_fpr must be in (0, 1), got %r" %
                               cfg.aux_fpr)
    if kw["max_stale"] is not None:
        cfg.max_stale = _uint("max_stale", kw["max_stale"], 64)
    cfg.headroom = _uint("headroom", kw["headroom"], 32)
    return cfg


def _key(key: Any) -> bytes:
    return _keys.key_bytes(key)


# ---- reports ----------------------------------------------------------------


@dataclass(frozen=True)
class AuditLevel:
    """One interval of an audit (I_1 first, the tail last)."""
    hits: int           # sampled non-members in the interval
    p_hat: float        # their share of the sampled non-members
    p_lower: float      # two-sided Clopper-Pearson interval at 1 - eta
    p_upper: float
    p_build: float      # the build-time certified limit
    unverified: bool    # p_upper > p_build: cannot confirm yet
    violated: bool      # p_lower > p_build: evidence the bound broke


@dataclass(frozen=True)
class AuditReport:
    """What a shadow-sampling audit measured (amq_audit_report)."""
    queries: int
    sampled: int
    members: int
    nonmembers: int
    false_positives: int
    false_negatives: int
    fpr_hat: float          # realised rate among sampled non-members
    fpr_lower: float        # its two-sided interval at 1 - eta
    fpr_upper: float
    bound_build: float      # the certified bound when the audit began
    bound_audit: float      # the bound with the audit's upper limits
    drift_chi2: float       # chi-squared, build vs sampled bins
    drift_df: int
    drift_pvalue: float
    drift_psi: float        # population stability index
    p0_unverified: bool     # the accepted interval I_0
    p0_violated: bool
    unverified: bool        # some interval unverified
    violated: bool          # some interval violated, or fpr_lower above
    levels: List[AuditLevel] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """"violated" (rebuild, or fall back to a plain filter),
        "unverified" (keep sampling) or "confirmed"."""
        return "violated" if self.violated else \
            "unverified" if self.unverified else "confirmed"


def _report(r: _AuditReport, levels: Any) -> AuditReport:
    names = [f[0] for f in _AuditReport._fields_ if f[0] != "nlevels"]
    lv = [AuditLevel(**{f[0]: getattr(levels[i], f[0])
                        for f in _AuditLevel._fields_})
          for i in range(r.nlevels)]
    return AuditReport(**{n: getattr(r, n) for n in names}, levels=lv)


# ---- the cascade ------------------------------------------------------------


class Cascade(Handle):
    """A learned Bloom filter cascade trained from members (which it never
    rejects) and a sample of the non-members it will be asked about:

        c = amq.Cascade(members, nonmembers, fpr=0.01)
        key in c; c.contains_many(keys); c.fpr_bound

    Exactly one target: fpr (the smallest structure whose certified bound
    is at most fpr) or bits_per_key (the lowest bound with everything,
    model included, within that many bits per member). FullError when the
    target cannot be certified (its message says what is reachable);
    InvalidError for an empty set, keys in both sets or a bad option.

    kind picks what is built: "cascade" (the DP intervals sized by the
    allocation engine), or a baseline: "lbf" (one threshold, one backup
    filter), "sandwich" (an initial filter in front of an LBF), "plbf"
    (the DP intervals with PLBF's closed-form sizes).

    A "cascade" chooses for itself what dim_bits, quantize, residual and
    bins leave as None: it builds and certifies every candidate (models
    of 2^8 .. 2^18 dimensions with int8 or float weights, the residual
    types, 32 to 256 bins) and keeps the smallest file (at a memory
    target, the lowest bound). A value given pins it: dim_bits or
    quantize the model (the other then takes its C default: 2^16
    dimensions, float weights), residual the residual spec, bins the
    bin count. A plain filter over every member (no model) is a
    candidate too, kept when no learned cascade is smaller, so training
    never returns more than the plain filter (see plain); learned=True
    leaves it out. The baselines choose nothing: None there means the
    C defaults (2^16 float weights, "sbbf", 256 bins).

    worst_case=E (a "cascade" only, fpr < E < 1) puts an initial filter
    at rate E over every member in front of the learned route, so the
    false-positive rate is at most E for any query distribution
    (worst_case_bound) and fallback can switch the learned route off.

    Every other keyword is a field of amq_cascade_config with its C
    default; None keeps the C library's computed default (levels:
    chosen; member_weight: balanced; aux_fpr: fpr / 10, or 1e-3 with a
    memory target; max_stale: 1% of the members). l2 = 0 means no
    penalty. seed is the model's shuffling seed (same seed and data: the
    same cascade, byte for byte); keyed and hash_seed choose the residual
    filters' hasher as for amq.Filter.

    Queries from several threads are safe while nobody calls add(),
    remove() or set_accept_bin(), or sets fallback.
    """

    __slots__ = ("_pins", "_held")
    _free = lib.amq_cascade_free
    _what = "cascade"

    def __init__(self, members: Any, nonmembers: Any, *,
                 fpr: Optional[float] = None,
                 bits_per_key: Optional[float] = None,
                 kind: str = "cascade",
                 levels: Union[int, str, None] = None,
                 bins: Optional[int] = None,
                 partition: str = "optimal",
                 tail: str = "guard",
                 delta: float = 0.0,
                 eta: float = 1e-3,
                 holdout: float = 0.5,
                 residual: Optional[str] = None,
                 aux: str = "blocked",
                 aux_capacity: int = 0,
                 aux_fpr: Optional[float] = None,
                 max_stale: Optional[int] = None,
                 headroom: int = 0,
                 dim_bits: Optional[int] = None,
                 ngram_max: int = 4,
                 epochs: int = 6,
                 learning_rate: float = 0.2,
                 l2: float = 1e-7,
                 member_weight: Optional[float] = None,
                 tail_weight: float = 0.0,
                 quantize: Optional[bool] = None,
                 calibration: str = "platt",
                 learned: bool = False,
                 worst_case: Optional[float] = None,
                 seed: int = 0,
                 keyed: bool = False,
                 hash_seed: int = 0) -> None:
        super().__init__()
        kw = dict(locals())  # every keyword above, by its name
        cfg = _config(kw)
        opt = options(keyed, _uint("hash_seed", hash_seed, 64))
        m = key_set(members)
        n = key_set(nonmembers)
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_cascade_train(m.ref(), n.ref(), ctypes.byref(cfg),
                                    ctypes.byref(opt), ctypes.byref(handle),
                                    ctypes.byref(diag)), diag)
        self._p = handle

    # ---- life ----

    def close(self) -> None:
        """Release the C object. An audit still open keeps it until the
        audit closes (the audit reads it); the cascade itself answers
        ClosedError from now on."""
        p = getattr(self, "_p", None)
        if p and getattr(self, "_pins", 0) > 0:
            self._p = None
            self._held = p
            return
        super().close()

    def _pin(self) -> None:
        self._pins = getattr(self, "_pins", 0) + 1

    def _unpin(self) -> None:
        self._pins -= 1
        held = getattr(self, "_held", None)
        if self._pins == 0 and held:
            self._held = None
            lib.amq_cascade_free(held)

    # ---- frames and files ----

    @classmethod
    def from_bytes(cls, data: Any) -> "Cascade":
        """A cascade from its frame (bytes-like), copied. A filter's frame
        (what a plain cascade saves) gives a plain cascade. CorruptError
        or ChecksumError for a damaged frame, KindError for another kind's
        (a clock's, a maplet's)."""
        return cls._wrap(load_frame(lib.amq_cascade_load, data))

    def to_bytes(self) -> bytes:
        """The cascade's frame (type 302): model, tables, residuals,
        counters; a plain cascade's is its filter's own frame, which
        amq.Filter.from_bytes reads. A trained cascade's frame depends
        only on its data and options (no time is recorded)."""
        return save_frame(lib.amq_cascade_save_size, lib.amq_cascade_save,
                          self._h())

    def __bytes__(self) -> bytes:
        return self.to_bytes()

    @classmethod
    def load(cls, path: PathLike) -> "Cascade":
        """Read a cascade file (`amq cascade train` writes them); any
        filter's file gives a plain cascade."""
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_cascade_load_file(os.fsencode(path), None,
                                        ctypes.byref(handle),
                                        ctypes.byref(diag)), diag)
        return cls._wrap(handle)

    def save(self, path: PathLike) -> None:
        """Save atomically (temporary file, fsync, rename): after an error
        or a crash the old file is intact."""
        diag = Diag()
        check(lib.amq_cascade_save_file(self._h(), os.fsencode(path),
                                        ctypes.byref(diag)), diag)

    # ---- queries ----

    def __contains__(self, key: object) -> bool:
        k = _key(key)
        return bool(lib.amq_cascade_contains(self._h(), k, len(k)))

    def contains_many(self, keys: Any) -> Any:
        """[key in self for key in keys], computed in C: a NumPy bool
        array when keys is a NumPy array, else a list of bool."""
        c = self._h()
        np = _keys.numpy_of(keys)
        if np is not None:
            out = np.zeros(len(keys), dtype=bool)
            pos = 0
            for ks in key_chunks(keys):
                if ks.n:
                    lib.amq_cascade_contains_batch(c, ks.ref(),
                                                   out.ctypes.data + pos)
                pos += ks.n
            return out
        answers: List[bool] = []
        for ks in key_chunks(keys):
            hits = (ctypes.c_uint8 * max(ks.n, 1))()
            if ks.n:
                lib.amq_cascade_contains_batch(c, ks.ref(), hits)
            answers.extend(map(bool, bytes(hits)[:ks.n]))
        return answers

    def score(self, key: Any) -> float:
        """The raw score (logit) the cascade's model gives key; the
        thresholds compare these. A plain cascade scores every key 0.0
        (its one bin)."""
        k = _key(key)
        return float(lib.amq_cascade_score(self._h(), k, len(k)).raw)

    def scores(self, keys: Any) -> Any:
        """score() of every key: a NumPy float64 array for a NumPy array
        of keys, else a list of float."""
        model = lib.amq_cascade_model(self._h())  # None: plain, scores 0
        np = _keys.numpy_of(keys)
        if np is not None:
            out = np.zeros(len(keys), dtype=np.float64)
            pos = 0
            for ks in key_chunks(keys):
                if ks.n and model:
                    lib.amq_model_score_batch(
                        model, ks.ref(),
                        ctypes.cast(out.ctypes.data + 8 * pos, c_dp))
                pos += ks.n
            return out
        res: List[float] = []
        for ks in key_chunks(keys):
            buf = (ctypes.c_double * max(ks.n, 1))()
            if ks.n and model:
                lib.amq_model_score_batch(model, ks.ref(), buf)
            res.extend(buf[:ks.n])
        return res

    def probability(self, raw: float) -> float:
        """The calibrated probability of a raw score (monotone).
        UnsupportedError for a plain cascade, which has no model to
        calibrate."""
        x = _number("raw", raw)
        model = lib.amq_cascade_model(self._h())
        if not model:
            raise UnsupportedError(4, "a plain cascade has no model, so no "
                                   "calibrated probability")
        return float(lib.amq_model_probability(model, x))

    def bin(self, raw: float) -> int:
        """The histogram bin (0 .. bins-1) of a raw score."""
        return int(lib.amq_cascade_bin(self._h(), _number("raw", raw)))

    # ---- updates ----

    def add(self, key: Any) -> None:
        """A new member, held by the insert buffer until a rebuild.
        FullError when the buffer is full or none was configured
        (aux_capacity)."""
        k = _key(key)
        check(lib.amq_cascade_add(self._h(), k, len(k)))

    def remove(self, key: Any, origin: str = "built") -> None:
        """A member leaves; origin says where it came from: "built" (in the
        member set of this version) or "added" (through add()). Removed
        from a structure that deletes, else kept as a stale key. FullError
        when max_stale is reached (rebuild); NotFoundError when a deleting
        structure does not hold it."""
        o = _pick("origin", origin, ORIGINS)
        k = _key(key)
        check(lib.amq_cascade_remove(self._h(), k, len(k), o))

    def set_accept_bin(self, bin: int) -> None:
        """Accept every bin >= bin without a filter. Any bin up to
        info()["max_accept_bin"] is safe; above it InvalidError."""
        check(lib.amq_cascade_set_accept_bin(self._h(),
                                             _uint("bin", bin, 32)))

    def rebuild(self, members: Any, tune: Any, certify: Any) -> "Cascade":
        """A new version for a new member set, with the same model and
        options: tune chooses thresholds and sizes, certify bounds p_l
        (two disjoint samples of the non-member distribution, unseen by
        the model's training)."""
        sets = [key_set(k) for k in (members, tune, certify)]
        handle = ctypes.c_void_p()
        diag = Diag()
        check(lib.amq_cascade_rebuild(self._h(), *[s.ref() for s in sets],
                                      ctypes.byref(handle),
                                      ctypes.byref(diag)), diag)
        return type(self)._wrap(handle)

    # ---- bounds and numbers ----

    @property
    def fpr_bound(self) -> float:
        """The certified bound on the false-positive rate now: it holds
        with probability >= 1 - eta over the draw of the certify split."""
        return float(lib.amq_cascade_fpr_bound(self._h()))

    @property
    def learned_bound(self) -> float:
        """The certified bound of the learned route (fpr_bound unless in
        fallback)."""
        return float(self._stats()[0].learned_bound)

    @property
    def worst_case_bound(self) -> float:
        """The bound for any query distribution: the initial filter's
        rate (worst_case=) with the insert buffer's, a plain cascade's
        own rate, 1.0 for a learned cascade without an initial filter."""
        return _worst_case(self._stats()[0])

    @property
    def plain(self) -> bool:
        """True when this is a plain filter (no model): training found
        none of its learned cascades smaller, or a filter's frame was
        loaded. Its bound holds for any query distribution."""
        return bool(lib.amq_cascade_is_plain(self._h()))

    @property
    def fallback(self) -> bool:
        """With True the learned bound is withdrawn: fpr_bound is
        worst_case_bound, which holds for any query distribution; what to
        do when an audit says the learned bound broke, until a rebuild.
        The answers do not change (the initial filter already gates every
        one). Saved in the frame. Setting True without an initial filter
        (train with worst_case=) raises UnsupportedError."""
        return bool(lib.amq_cascade_fallback(self._h()))

    @fallback.setter
    def fallback(self, on: bool) -> None:
        st = lib.amq_cascade_set_fallback(self._h(), _bool("fallback", on))
        if st == 4:
            raise UnsupportedError(st, "no initial filter to fall back to: "
                                   "train with worst_case=")
        check(st)

    @property
    def fpr_estimate(self) -> float:
        """The same sum with the point estimates p_hat of the certify
        split in place of their upper limits (not a bound)."""
        return float(self._stats()[0].fpr_estimate)

    @property
    def kind(self) -> str:
        """"cascade", "lbf", "sandwich" or "plbf"."""
        return _method_name(self._stats()[0].method)

    @property
    def members(self) -> int:
        """Distinct members at build."""
        return int(self._stats()[0].members)

    @property
    def version(self) -> int:
        return int(self._stats()[0].version)

    @property
    def model_id(self) -> int:
        """XXH64 of the model's features, weights and calibration."""
        return int(self._stats()[0].model_id)

    @property
    def size_bytes(self) -> int:
        """Bytes of the cascade's frame."""
        return int(lib.amq_cascade_save_size(self._h()))

    @property
    def bits_per_key(self) -> float:
        """Bits of the structures (model, residuals, tables) per member."""
        return float(self._stats()[0].bits_per_key)

    def _stats(self) -> Tuple[_Stats, List[_Level]]:
        c = self._h()
        s = _Stats()
        n = ctypes.c_size_t()
        lib.amq_cascade_get_stats(c, ctypes.byref(s), None, 0,
                                  ctypes.byref(n))
        levels = (_Level * max(n.value, 1))()
        lib.amq_cascade_get_stats(c, ctypes.byref(s), levels, n.value,
                                  ctypes.byref(n))
        return s, list(levels[:n.value])

    def info(self) -> Dict[str, Any]:
        """Everything amq_cascade_get_stats reports, as a dict; the keys
        `amq cascade info --json` prints have its names (bits_per_key is
        the whole frame's bits per member there, structure_bits_per_key
        the structures'), and "levels" lists the intervals I_1 first,
        the tail last."""
        s, levels = self._stats()
        frame = int(lib.amq_cascade_save_size(self._h()))
        d: Dict[str, Any] = {
            "method": _method_name(s.method),
            "version": s.version, "model_id": s.model_id,
            "members": s.members, "added": s.added, "removed": s.removed,
            "stale": s.stale,
            "fpr_bound": s.fpr_bound, "fpr_estimate": s.fpr_estimate,
            "target_fpr": s.target_fpr,
            "target_bits_per_key": s.target_bits_per_key,
            "bits_per_key": _file_bits(s, frame),
            "structure_bits_per_key": s.bits_per_key, "file_bytes": frame,
            "p0": s.p0_hat, "p0_upper": s.p0_upper,
            "filters": s.levels, "bins": s.bins,
            "accept_bin": s.accept_bin, "max_accept_bin": s.max_accept_bin,
            "reject_bins": s.reject_bins,
            "certify_n": s.certify_n, "tune_n": s.tune_n, "eta": s.eta,
            "tail_fnr": s.tail_fnr, "front_eps": s.front_eps,
            "aux_eps": s.aux_eps, "model_bytes": s.model_bytes,
            "residual_bytes": s.residual_bytes,
            "front_bytes": s.front_bytes, "aux_bytes": s.aux_bytes,
            "table_bytes": s.table_bytes,
            "build_seconds": s.build_seconds,
            "learned_bound": s.learned_bound,
            "worst_case_bound": _worst_case(s),
            "fallback": bool(s.fallback), "plain": bool(s.plain),
            "plain_bytes": s.plain_bytes}
        d["levels"] = [{
            "bin_lo": lv.bin_lo, "bin_hi": lv.bin_hi,
            "tau_lo": lv.tau_lo, "tau_hi": lv.tau_hi,
            "prob_lo": lv.prob_lo, "prob_hi": lv.prob_hi,
            "n": lv.n, "stale": lv.stale, "certify_hits": lv.certify_hits,
            "p": lv.p_hat, "p_upper": lv.p_upper, "eps": lv.eps,
            "bytes": lv.bytes, "spec": lv.spec.decode()} for lv in levels]
        return d

    def describe(self) -> str:
        """The table `amq cascade info` prints: intervals, p with its
        upper limit, n, bits, eps, and the bound."""
        s, levels = self._stats()
        frame = int(lib.amq_cascade_save_size(self._h()))
        out = [
            "method          %s" % _method_name(s.method),
            "version         %d" % s.version,
            "model           %016x (%d bytes)" % (s.model_id, s.model_bytes),
            "members         %d (added %d, removed %d, stale %d)" % (
                s.members, s.added, s.removed, s.stale),
            "bins            %d (accept from %d, safe up to %d, reject "
            "below %d)" % (s.bins, s.accept_bin, s.max_accept_bin,
                           s.reject_bins),
            "held out        %d certify, %d tune non-members; eta %g" % (
                s.certify_n, s.tune_n, s.eta),
            "I_0 (accept)    p0 %.4g, upper limit %.4g" % (s.p0_hat,
                                                           s.p0_upper),
            "%-6s %-23s %-15s %9s %9s %10s %10s %10s  %s" % (
                "level", "tau [lo, hi)", "prob [lo, hi)", "n", "bits/key",
                "p", "p upper", "eps", "filter")]
        for i, lv in enumerate(levels):
            bpk = 8.0 * lv.bytes / lv.n if lv.n else 0.0
            spec = lv.spec.decode() or ("(accept)" if lv.eps >= 1
                                        else "(reject)")
            out.append("%-6d [%9.4g, %9.4g) [%.4f, %.4f) %9d %9.3f %10.4g "
                       "%10.4g %10.4g  %s" % (
                           i + 1, lv.tau_lo, lv.tau_hi, lv.prob_lo,
                           lv.prob_hi, lv.n, bpk, lv.p_hat, lv.p_upper,
                           lv.eps, spec))
        out.append("bits/key        %.4f (the file's %d bytes per member; in "
                   "its structures %.4f: model %d B, residuals %d B, initial "
                   "%d B, buffer %d B, tables %d B)" % (
                       _file_bits(s, frame), frame, s.bits_per_key,
                       s.model_bytes, s.residual_bytes, s.front_bytes,
                       s.aux_bytes, s.table_bytes))
        out.append("fpr bound       %.6g (estimate %.6g; target %g)" % (
            s.fpr_bound, s.fpr_estimate, s.target_fpr))
        if s.plain or s.worst_case_bound < 1.0:
            out.append("worst case      %.6g (for any query distribution: "
                       "the %s)" % (_worst_case(s), "filter's own rate"
                                    if s.plain else "initial filter's rate"))
        else:
            out.append("worst case      none (no initial filter; train with "
                       "--worst-case E for a cap and a fallback)")
        if s.fallback:
            out.append("fallback        on: the worst-case bound is in force "
                       "(learned bound %.6g withdrawn)" % s.learned_bound)
        out.append("chose           " + _choice(s, frame))
        return "\n".join(out) + "\n"

    # ---- audits ----

    def auditor(self, rate: float = 1.0, seed: int = 1) -> "Audit":
        """A shadow-sampling audit of this cascade: for each query call
        sample(), and when it says so, record(key, is_member) with the
        truth; report() at any time. rate in (0, 1]."""
        return Audit(self, rate, seed)

    def audit(self, nonmembers: Any, members: Any = (), *,
              rate: float = 1.0, seed: int = 1) -> AuditReport:
        """Replay labelled keys through an audit and report: the realised
        false-positive rate on nonmembers (keys held out of training, drawn
        like the training sample) with its interval against the certified
        bound, false negatives among members, per-interval shares and the
        drift statistics. The two collections are interleaved as one query
        stream in proportion, as `amq cascade audit` does, so the same keys,
        rate and seed give the tool's numbers."""
        _keys.refuse_single(members)
        _keys.refuse_single(nonmembers)
        m = [_key(k) for k in members]
        n = [_key(k) for k in nonmembers]
        with self.auditor(rate, seed) as a:
            a._replay(m, n)
            return a.report()

    def __repr__(self) -> str:
        if self.closed:
            return "<amq.Cascade closed>"
        s = self._stats()[0]
        if s.plain:
            return "<amq.Cascade plain filter, %d members, fpr bound " \
                "%.3g>" % (s.members, s.fpr_bound)
        return "<amq.Cascade %s, %d members, %d levels, fpr bound %.3g>" % (
            _method_name(s.method), s.members, s.levels, s.fpr_bound)


def _method_name(m: int) -> str:
    return str(lib.amq_learned_method_name(m).decode())


def _worst_case(s: _Stats) -> float:
    """A plain filter's own bound holds for any query distribution (the C
    stats give 1 there: no initial filter), as `amq cascade info` says."""
    return float(s.fpr_bound if s.plain else s.worst_case_bound)


def _choice(s: _Stats, frame: int) -> str:
    """Which candidate training kept, against its best plain filter (the
    "chose" line of `amq cascade info`)."""
    if s.plain:
        return "a plain filter: no learned cascade was smaller at this " \
            "target%s" % ("" if s.plain_bytes > 0 else
                          " (or it was loaded as one)")
    if s.plain_bytes > 0:
        return "learned, %.1f%% of the best plain filter's %.0f bytes" % (
            100.0 * frame / s.plain_bytes, s.plain_bytes)
    return "learned (no plain filter compared)"


def _file_bits(s: _Stats, frame: int) -> float:
    return 8.0 * frame / (s.members if s.members else 1)


class Audit(Handle):
    """A shadow-sampling audit of one cascade (Cascade.auditor()). The
    sample decision hashes the query's sequence number, never the key, so
    the sampled non-members are an unbiased sample of the queries."""

    __slots__ = ("_cascade",)
    _free = lib.amq_audit_free
    _what = "audit"

    def __init__(self, cascade: Cascade, rate: float = 1.0,
                 seed: int = 1) -> None:
        super().__init__()
        if not isinstance(cascade, Cascade):
            raise TypeError("Audit() takes a Cascade")
        r = _real("rate", rate)
        s = _uint("seed", seed, 64)
        handle = ctypes.c_void_p()
        check(lib.amq_audit_new(cascade._h(), r, s, None,
                                ctypes.byref(handle)))
        cascade._pin()
        self._cascade: Optional[Cascade] = cascade
        self._p = handle

    def close(self) -> None:
        p = getattr(self, "_p", None)
        if p:
            self._p = None
            lib.amq_audit_free(p)
            c, self._cascade = self._cascade, None
            if c is not None:
                c._unpin()

    def _live(self) -> Any:
        a = self._h()
        if self._cascade is None or self._cascade.closed:
            raise ClosedError("the audited cascade is closed")
        return a

    def sample(self) -> bool:
        """Count one query; True when it is to be recorded."""
        return bool(lib.amq_audit_sample(self._live()))

    def record(self, key: Any, is_member: bool) -> None:
        """The truth for a sampled query (the audit does the lookup)."""
        k = _key(key)
        check(lib.amq_audit_record(self._live(), k, len(k), bool(is_member)))

    def observe(self, key: Any, is_member: bool) -> bool:
        """sample(), then record() when sampled; True when it was."""
        if self.sample():
            self.record(key, is_member)
            return True
        return False

    def _replay(self, m: List[bytes], n: List[bytes]) -> None:
        a = self._live()
        sample, record = lib.amq_audit_sample, lib.amq_audit_record
        i = j = 0
        nm, nn = len(m), len(n)
        while i < nm or j < nn:
            member = j >= nn or (i < nm and i * nn <= j * nm)
            if member:
                k = m[i]
                i += 1
            else:
                k = n[j]
                j += 1
            if sample(a):
                check(record(a, k, len(k), member))

    def report(self) -> AuditReport:
        """The numbers so far (amq_audit_get_report)."""
        a = self._live()
        r = _AuditReport()
        lib.amq_audit_get_report(a, ctypes.byref(r), None, 0)
        levels = (_AuditLevel * max(r.nlevels, 1))()
        lib.amq_audit_get_report(a, ctypes.byref(r), levels, r.nlevels)
        return _report(r, levels)

    def to_bytes(self) -> bytes:
        raise TypeError("an audit has no frame: it lives with its cascade")

    @classmethod
    def from_bytes(cls, data: Any) -> "Audit":
        raise TypeError("an audit has no frame: it lives with its cascade")

    def copy(self) -> "Audit":
        raise TypeError("an audit cannot be copied")

    def __reduce__(self) -> Any:
        raise TypeError("an audit cannot be pickled")
