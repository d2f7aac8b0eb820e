"""Loading libamq and declaring the C functions the binding calls.

The shared library is found, in order, through:

1. the AMQ_LIBRARY environment variable (a path to libamq.so; when it is
   set, nothing else is tried);
2. a libamq.so* installed inside this package (a wheel built from a source
   checkout without an installed library carries its own);
3. the library directory recorded when the package was installed (pkg-config
   or `make install` wrote it into _config.py);
4. the system loader (libamq.so.0 after `make install` into a system prefix);
5. `pkg-config --variable=libdir amq` asked now (PKG_CONFIG_PATH).

Only ctypes from the standard library is used: nothing is compiled when the
package is imported. Structures mirrored here follow include/amq/*.h on the
64-bit ABI the library is built for; their sizes are checked at import (a
mismatch raises ImportError rather than corrupting memory).
"""

import ctypes
import ctypes.util
import glob
import os
import subprocess
from typing import Any, Dict, Iterator, List, Sequence, Tuple

c_size_t = ctypes.c_size_t
c_u8p = ctypes.POINTER(ctypes.c_uint8)
c_u64p = ctypes.POINTER(ctypes.c_uint64)
c_dp = ctypes.POINTER(ctypes.c_double)
c_sizep = ctypes.POINTER(ctypes.c_size_t)
HASH_KEY_BYTES = 16


class Diag(ctypes.Structure):
    """amq_diag: where a parser stopped and why."""
    _fields_ = [("offset", c_size_t), ("message", ctypes.c_char * 160)]


class Hasher(ctypes.Structure):
    """amq_hasher: kind, seed and (for SipHash) the secret key."""
    _fields_ = [("kind", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("key", ctypes.c_uint8 * HASH_KEY_BYTES)]


class Options(ctypes.Structure):
    """amq_options (the allocator is always the C library's here)."""
    _fields_ = [("allocator", ctypes.c_void_p), ("hash", ctypes.c_int),
                ("hash_seed", ctypes.c_uint64), ("hash_key", ctypes.c_void_p),
                ("flags", ctypes.c_uint32)]


class AdaptStats(ctypes.Structure):
    """amq_adapt_stats: what an adaptive filter's reports taught it."""
    _fields_ = [("reports", ctypes.c_uint64), ("extended", ctypes.c_uint64),
                ("records", ctypes.c_uint64), ("extension_bytes", c_size_t),
                ("map_bytes", c_size_t)]


class TypeInfo(ctypes.Structure):
    """amq_type_info: one registered structure type."""
    _fields_ = [("name", ctypes.c_char_p), ("type_id", ctypes.c_uint16),
                ("caps", ctypes.c_uint32), ("summary", ctypes.c_char_p),
                ("params", ctypes.c_char_p), ("default_hash", ctypes.c_int),
                ("shapes", ctypes.POINTER(ctypes.c_char_p))]


def _recorded_libdir() -> str:
    try:
        from . import _config  # type: ignore[attr-defined]  # at install
    except ImportError:
        return ""
    return str(getattr(_config, "LIBDIR", "") or "")


def _pkg_config_libdir() -> str:
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "amq"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _candidates() -> Iterator[str]:
    env = os.environ.get("AMQ_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield from sorted(glob.glob(os.path.join(here, "libamq.so*")))
    libdir = _recorded_libdir()
    if libdir:
        yield os.path.join(libdir, "libamq.so.0")
    found = ctypes.util.find_library("amq")
    if found:
        yield found
    yield "libamq.so.0"
    libdir = _pkg_config_libdir()
    if libdir:
        yield os.path.join(libdir, "libamq.so.0")


def _load() -> ctypes.CDLL:
    errors = []
    for name in _candidates():
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            errors.append("%s: %s" % (name, e))
    raise ImportError("amq: cannot load libamq (install it with `make "
                      "install`, set PKG_CONFIG_PATH to its prefix's "
                      "lib/pkgconfig, or set AMQ_LIBRARY to the path of "
                      "libamq.so): " + "; ".join(errors))


lib = _load()

P = ctypes.c_void_p
S = ctypes.c_int  # amq_status
DP = ctypes.POINTER(Diag)
PP = ctypes.POINTER(P)
OP = ctypes.POINTER(Options)
HP = ctypes.POINTER(Hasher)

Prototypes = Dict[str, Tuple[Any, Sequence[Any]]]


def declare(prototypes: Prototypes) -> None:
    """Give each named C function its result and argument types; an
    ImportError names the first one the loaded library lacks."""
    for name, (res, args) in prototypes.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError("amq: %s lacks %s (an older libamq?)" %
                              (lib._name, name)) from None
        fn.restype = res
        fn.argtypes = list(args)


def check_sizes(sizes: Dict[Any, int]) -> None:
    """ImportError unless every mirrored structure has its C size."""
    for t, size in sizes.items():
        if ctypes.sizeof(t) != size:
            raise ImportError("amq: %s is %d bytes here, %d in the C "
                              "library's 64-bit ABI" %
                              (t.__name__, ctypes.sizeof(t), size))


declare({
    "amq_version": (ctypes.c_char_p, []),
    "amq_strerror": (ctypes.c_char_p, [S]),
    "amq_status_name": (ctypes.c_char_p, [S]),
    "amq_hash_kind_name": (ctypes.c_char_p, [ctypes.c_int]),
    "amq_hash64_batch": (S, [HP, P, P, c_size_t, P]),
    "amq_hash64_strided": (S, [HP, P, c_size_t, P, c_size_t, P]),
    "amq_filter_type_count": (c_size_t, []),
    "amq_filter_type_at": (ctypes.POINTER(TypeInfo), [c_size_t]),
    "amq_filter_type_find": (ctypes.POINTER(TypeInfo), [ctypes.c_char_p]),
    "amq_filter_new": (S, [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_double,
                           OP, PP, DP]),
    "amq_filter_build": (S, [ctypes.c_char_p, P, c_size_t, ctypes.c_double,
                             OP, PP, DP]),
    "amq_filter_resolve_hasher": (S, [ctypes.c_char_p, OP, HP]),
    "amq_filter_free": (None, [P]),
    "amq_filter_add": (S, [P, ctypes.c_char_p, c_size_t]),
    "amq_filter_add_batch": (S, [P, P, c_size_t, c_sizep]),
    "amq_filter_contains": (ctypes.c_bool, [P, ctypes.c_char_p, c_size_t]),
    "amq_filter_contains_batch": (None, [P, P, c_size_t, P]),
    "amq_filter_remove": (S, [P, ctypes.c_char_p, c_size_t]),
    "amq_filter_remove_hash": (S, [P, ctypes.c_uint64]),
    "amq_filter_report_fp": (S, [P, ctypes.c_char_p, c_size_t,
                                 ctypes.POINTER(ctypes.c_bool)]),
    "amq_filter_adapt_stats": (S, [P, ctypes.POINTER(AdaptStats)]),
    "amq_filter_hash": (ctypes.c_uint64, [P, ctypes.c_char_p, c_size_t]),
    "amq_filter_count_hash": (S, [P, ctypes.c_uint64, c_u64p]),
    "amq_filter_union": (S, [P, P]),
    "amq_filter_intersect": (S, [P, P]),
    "amq_filter_is_intersection": (ctypes.c_bool, [P, c_dp]),
    "amq_filter_estimate_items": (S, [P, c_dp]),
    "amq_filter_info": (ctypes.POINTER(TypeInfo), [P]),
    "amq_filter_caps": (ctypes.c_uint32, [P]),
    "amq_filter_items": (ctypes.c_uint64, [P]),
    "amq_filter_capacity": (ctypes.c_uint64, [P]),
    "amq_filter_size_bytes": (c_size_t, [P]),
    "amq_filter_bits_per_key": (ctypes.c_double, [P]),
    "amq_filter_fpr_bound": (ctypes.c_double, [P]),
    "amq_filter_contains_hash": (ctypes.c_bool, [P, ctypes.c_uint64]),
    "amq_range_query": (ctypes.c_int, [P, ctypes.c_uint64, ctypes.c_uint64,
                                       ctypes.POINTER(ctypes.c_bool)]),
    "amq_range_query_bytes": (ctypes.c_int, [P, ctypes.c_char_p, c_size_t,
                                             ctypes.c_char_p, c_size_t,
                                             ctypes.POINTER(ctypes.c_bool)]),
    "amq_range_fpr_bound": (ctypes.c_double, [P, ctypes.c_uint64]),
    "amq_range_key_form": (ctypes.c_int, [P]),
    "amq_filter_target_fpr": (ctypes.c_double, [P]),
    "amq_filter_hasher": (HP, [P]),
    "amq_filter_is_view": (ctypes.c_bool, [P]),
    "amq_filter_describe": (c_size_t, [P, ctypes.c_char_p, c_size_t]),
    "amq_filter_serialized_size": (c_size_t, [P]),
    "amq_filter_save": (S, [P, P, c_size_t, c_sizep]),
    "amq_filter_load": (S, [ctypes.c_char_p, c_size_t, OP, PP, DP]),
    "amq_filter_save_file": (S, [P, ctypes.c_char_p, DP]),
    "amq_filter_open_file": (S, [ctypes.c_char_p, OP, PP, DP]),
    "amq_filter_load_file": (S, [ctypes.c_char_p, OP, PP, DP]),
    "amq_curve_fpr": (S, [ctypes.c_char_p, ctypes.c_double, c_dp]),
    "amq_curve_bits": (S, [ctypes.c_char_p, ctypes.c_double, c_dp]),
})

check_sizes({Diag: 168, Hasher: 32, Options: 40, TypeInfo: 48, c_size_t: 8})


def cstr(s: str) -> bytes:
    """A str argument for a const char * parameter."""
    if not isinstance(s, str):
        raise TypeError("expected str, got %s" % type(s).__name__)
    return s.encode()


def text_of(fn: Any, *args: Any) -> str:
    """The text a snprintf-style C function (buf, cap as its last two
    arguments, returning the full length) writes."""
    n = fn(*args, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    fn(*args, buf, n + 1)
    return buf.value.decode()


__all__: List[str] = []
