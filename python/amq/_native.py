"""Loading libamq and declaring the C functions the binding calls.

The shared library is found, in order, through the AMQ_LIBRARY environment
variable (a path to libamq.so), next to this package (a libamq.so* copied
into python/amq/), and the system loader (libamq.so.0 after `make install`).
Only ctypes from the standard library is used: nothing is compiled when the
package is installed or imported.

Structures mirrored here follow include/amq/core.h, status.h and filter.h
on the 64-bit ABI the library is built for; their sizes are checked at
import (a mismatch raises ImportError rather than corrupting memory).
"""

import ctypes
import ctypes.util
import glob
import os

c_size_t = ctypes.c_size_t
c_u8p = ctypes.POINTER(ctypes.c_uint8)
c_u64p = ctypes.POINTER(ctypes.c_uint64)
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


class TypeInfo(ctypes.Structure):
    """amq_type_info: one registered structure type."""
    _fields_ = [("name", ctypes.c_char_p), ("type_id", ctypes.c_uint16),
                ("caps", ctypes.c_uint32), ("summary", ctypes.c_char_p),
                ("params", ctypes.c_char_p), ("default_hash", ctypes.c_int)]


def _candidates():
    env = os.environ.get("AMQ_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "libamq.so*"))):
        yield path
    found = ctypes.util.find_library("amq")
    if found:
        yield found
    yield "libamq.so.0"


def _load():
    errors = []
    for name in _candidates():
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            errors.append("%s: %s" % (name, e))
    raise ImportError("amq: cannot load libamq (set AMQ_LIBRARY to the path "
                      "of libamq.so, or run `make install`): " +
                      "; ".join(errors))


lib = _load()

_P = ctypes.c_void_p
_S = ctypes.c_int  # amq_status
_DP = ctypes.POINTER(Diag)
_PROTOTYPES = {
    "amq_version": (ctypes.c_char_p, []),
    "amq_strerror": (ctypes.c_char_p, [_S]),
    "amq_status_name": (ctypes.c_char_p, [_S]),
    "amq_hash_kind_name": (ctypes.c_char_p, [ctypes.c_int]),
    "amq_hash64_batch": (_S, [ctypes.POINTER(Hasher), ctypes.c_void_p,
                              ctypes.c_void_p, c_size_t, ctypes.c_void_p]),
    "amq_filter_type_count": (c_size_t, []),
    "amq_filter_type_at": (ctypes.POINTER(TypeInfo), [c_size_t]),
    "amq_filter_type_find": (ctypes.POINTER(TypeInfo), [ctypes.c_char_p]),
    "amq_filter_new": (_S, [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_double,
                            ctypes.POINTER(Options), ctypes.POINTER(_P), _DP]),
    "amq_filter_build": (_S, [ctypes.c_char_p, ctypes.c_void_p, c_size_t,
                              ctypes.c_double, ctypes.POINTER(Options),
                              ctypes.POINTER(_P), _DP]),
    "amq_filter_resolve_hasher": (_S, [ctypes.c_char_p,
                                       ctypes.POINTER(Options),
                                       ctypes.POINTER(Hasher)]),
    "amq_filter_free": (None, [_P]),
    "amq_filter_add": (_S, [_P, ctypes.c_char_p, c_size_t]),
    "amq_filter_add_batch": (_S, [_P, ctypes.c_void_p, c_size_t,
                                  ctypes.POINTER(c_size_t)]),
    "amq_filter_contains": (ctypes.c_bool, [_P, ctypes.c_char_p, c_size_t]),
    "amq_filter_contains_batch": (None, [_P, ctypes.c_void_p, c_size_t,
                                         ctypes.c_void_p]),
    "amq_filter_remove": (_S, [_P, ctypes.c_char_p, c_size_t]),
    "amq_filter_hash": (ctypes.c_uint64, [_P, ctypes.c_char_p, c_size_t]),
    "amq_filter_count_hash": (_S, [_P, ctypes.c_uint64,
                                   ctypes.POINTER(ctypes.c_uint64)]),
    "amq_filter_union": (_S, [_P, _P]),
    "amq_filter_intersect": (_S, [_P, _P]),
    "amq_filter_info": (ctypes.POINTER(TypeInfo), [_P]),
    "amq_filter_caps": (ctypes.c_uint32, [_P]),
    "amq_filter_items": (ctypes.c_uint64, [_P]),
    "amq_filter_capacity": (ctypes.c_uint64, [_P]),
    "amq_filter_size_bytes": (c_size_t, [_P]),
    "amq_filter_bits_per_key": (ctypes.c_double, [_P]),
    "amq_filter_fpr_bound": (ctypes.c_double, [_P]),
    "amq_filter_target_fpr": (ctypes.c_double, [_P]),
    "amq_filter_hasher": (ctypes.POINTER(Hasher), [_P]),
    "amq_filter_is_view": (ctypes.c_bool, [_P]),
    "amq_filter_describe": (c_size_t, [_P, ctypes.c_char_p, c_size_t]),
    "amq_filter_serialized_size": (c_size_t, [_P]),
    "amq_filter_save": (_S, [_P, ctypes.c_void_p, c_size_t,
                             ctypes.POINTER(c_size_t)]),
    "amq_filter_load": (_S, [ctypes.c_char_p, c_size_t,
                             ctypes.POINTER(Options), ctypes.POINTER(_P),
                             _DP]),
    "amq_filter_save_file": (_S, [_P, ctypes.c_char_p, _DP]),
    "amq_filter_open_file": (_S, [ctypes.c_char_p, ctypes.POINTER(Options),
                                  ctypes.POINTER(_P), _DP]),
    "amq_filter_load_file": (_S, [ctypes.c_char_p, ctypes.POINTER(Options),
                                  ctypes.POINTER(_P), _DP]),
    "amq_curve_fpr": (_S, [ctypes.c_char_p, ctypes.c_double,
                           ctypes.POINTER(ctypes.c_double)]),
    "amq_curve_bits": (_S, [ctypes.c_char_p, ctypes.c_double,
                            ctypes.POINTER(ctypes.c_double)]),
}

for _name, (_res, _args) in _PROTOTYPES.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        raise ImportError("amq: %s lacks %s (an older libamq?)" %
                          (lib._name, _name)) from None
    _fn.restype = _res
    _fn.argtypes = _args

_SIZES = {Diag: 168, Hasher: 32, Options: 40, TypeInfo: 40, c_size_t: 8}
for _t, _size in _SIZES.items():
    if ctypes.sizeof(_t) != _size:
        raise ImportError("amq: %s is %d bytes here, %d in the C library's "
                          "64-bit ABI" % (_t.__name__, ctypes.sizeof(_t),
                                          _size))
