"""The C API of libgpusort (gpusort.h) as ctypes declarations: the library, its functions'
prototypes, its enums and flags, and the public structs that this package passes.

Structs mirror gpusort.h field for field. gpusort.h promises that they have no implicit
padding and that enums are 32 bits wide, so a ctypes.Structure with the same fields in the
same order has the same layout; ABI_SIZES holds the sizes the library pins with
_Static_assert (GS_API_SIZE in src/api/context.c) where pointers are 8 bytes, and this module
refuses to load if ctypes disagrees. Every struct's struct_size is set to ctypes.sizeof of
its class, as the header's _INIT macros set it to sizeof.
"""
import ctypes
import ctypes.util
import os

# ---- Enums (32-bit) and flags ------------------------------------------------------------

c_enum = ctypes.c_int32  # "enums are 32 bits wide"

GPUSORT_OK = 0
GPUSORT_ERROR_GPU_STALL = 14

GPUSORT_TYPE_NONE = 0
GPUSORT_U32, GPUSORT_I32, GPUSORT_F32, GPUSORT_U64, GPUSORT_I64, GPUSORT_F64 = range(1, 7)
GPUSORT_U8, GPUSORT_I8, GPUSORT_U16, GPUSORT_I16, GPUSORT_F16, GPUSORT_BF16 = range(7, 13)
(GPUSORT_U16BE, GPUSORT_I16BE, GPUSORT_U32BE, GPUSORT_I32BE, GPUSORT_F32BE, GPUSORT_U64BE, GPUSORT_I64BE,
 GPUSORT_F64BE) = range(13, 21)
GPUSORT_BYTES = 21

GPUSORT_DESCENDING = 1 << 0
GPUSORT_VERIFY = 1 << 1
GPUSORT_EXCLUSIVE = 1 << 2
GPUSORT_DETERMINISTIC = 1 << 3
GPUSORT_OVERWRITE = 1 << 4
GPUSORT_SYNC = 1 << 5

GPUSORT_OPEN_DEFERRED = 1 << 0

GPUSORT_SUM, GPUSORT_MIN, GPUSORT_MAX = range(3)
GPUSORT_SCAN_AUTO = 0

GPUSORT_MAX_STAGES = 24

# ---- Structs ------------------------------------------------------------------------------

progress_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)


class Layout(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("key", c_enum),
        ("value", c_enum),
        ("record_bytes", ctypes.c_uint32),
        ("key_offset", ctypes.c_uint32),
        ("key_bytes", ctypes.c_uint32),
        ("part_count", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("parts", ctypes.c_void_p),
        ("part_fields", ctypes.c_void_p),
    ]


class ContextParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("device", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("timeout_seconds", ctypes.c_double),
        ("memory_budget", ctypes.c_uint64),
        ("temp_dir", ctypes.c_char_p),
        ("progress", progress_fn),
        ("progress_user", ctypes.c_void_p),
    ]


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("index", ctypes.c_uint32),
        ("type", c_enum),
        ("usable", ctypes.c_int),
        ("is_default", ctypes.c_int),
        ("vendor_id", ctypes.c_uint32),
        ("device_id", ctypes.c_uint32),
        ("api_version", ctypes.c_uint32),
        ("subgroup_size", ctypes.c_uint32),
        ("sort_keys_per_invocation_wide_pairs", ctypes.c_uint32),
        ("memory_bytes", ctypes.c_uint64),
        ("max_buffer_bytes", ctypes.c_uint64),
        ("name", ctypes.c_char * 256),
        ("driver", ctypes.c_char * 512),
        ("unusable_reason", ctypes.c_char * 256),
        ("preset", ctypes.c_char * 64),
        ("sort_workgroup_size", ctypes.c_uint32),
        ("sort_keys_per_invocation", ctypes.c_uint32),
        ("sort_keys_per_invocation_wide", ctypes.c_uint32),
        ("scan_workgroup_size", ctypes.c_uint32),
        ("scan_rows", ctypes.c_uint32),
        ("lookback_spin_limit", ctypes.c_uint32),
        ("sort_keys_per_invocation_pairs", ctypes.c_uint32),
        ("sort_workgroup_size_wide", ctypes.c_uint32),
        ("sort_workgroup_size_narrow_pairs", ctypes.c_uint32),
        ("sort_keys_per_invocation_narrow_pairs", ctypes.c_uint32),
        ("sort_workgroup_size_pairs", ctypes.c_uint32),
        ("sort_workgroup_size_wide_pairs", ctypes.c_uint32),
        ("compact_workgroup_size", ctypes.c_uint32),
        ("compact_subtiles", ctypes.c_uint32),
        ("sort_small_tile_count", ctypes.c_uint32),
        ("sort_small_workgroup_size", ctypes.c_uint32 * 4),
        ("sort_small_keys_per_invocation", ctypes.c_uint32 * 4),
        ("sort_small_min_tiles", ctypes.c_uint32),
        ("scan_small_rows", ctypes.c_uint32),
        ("scan_small_min_tiles", ctypes.c_uint32),
        ("compact_read_ahead_kib", ctypes.c_uint32),
        ("compact_early_walk", ctypes.c_uint32),
        ("scan_early_walk", ctypes.c_uint32),
        ("scan_read_ahead_kib", ctypes.c_uint32),
        ("sort_float_fewer_keys", ctypes.c_uint32),
        ("reserved_end", ctypes.c_uint32),
    ]


class SortOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("begin_bit", ctypes.c_uint32),
        ("end_bit", ctypes.c_uint32),
        ("algo", c_enum),
    ]


class ScanOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("type", c_enum),
        ("acc", c_enum),
        ("op", c_enum),
        ("algo", c_enum),
        ("flags", ctypes.c_uint32),
    ]


class Report(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("verified", ctypes.c_int),
        ("records", ctypes.c_uint64),
        ("input_bytes", ctypes.c_uint64),
        ("output_bytes", ctypes.c_uint64),
        ("xxh3", ctypes.c_uint64),
        ("total_seconds", ctypes.c_double),
        ("stage_seconds", ctypes.c_double * GPUSORT_MAX_STAGES),
        ("histogram_seconds", ctypes.c_double),
        ("pass_seconds", ctypes.c_double * 8),
        ("passes", ctypes.c_uint32),
        ("tile_invocations", ctypes.c_uint32),
        ("tile_items_per_invocation", ctypes.c_uint32),
        ("tile_items", ctypes.c_uint32),
        ("tile_shared_bytes", ctypes.c_uint32),
        ("batches", ctypes.c_uint32),
        ("algo", c_enum),
        ("element_type", c_enum),
        ("result_type", c_enum),
    ]


# The C name of each mirrored struct, and its size where pointers are 8 bytes: the numbers
# of GS_API_SIZE(...) in src/api/context.c, which the library's build asserts (a change is an
# ABI break and a new SONAME). tests/test_python.py checks them against that file and, where
# a C compiler is at hand, against sizeof and offsetof from gpusort.h itself.
C_NAMES = {
    Layout: "gpusort_layout",
    ContextParams: "gpusort_context_params",
    DeviceInfo: "gpusort_device_info",
    SortOptions: "gpusort_sort_options",
    ScanOptions: "gpusort_scan_options",
    Report: "gpusort_report",
}
ABI_SIZES = {
    "gpusort_layout": 48,
    "gpusort_context_params": 56,
    "gpusort_device_info": 1272,
    "gpusort_sort_options": 20,
    "gpusort_scan_options": 24,
    "gpusort_report": 352,
}

if ctypes.sizeof(ctypes.c_void_p) == 8:
    for _cls, _name in C_NAMES.items():
        if ctypes.sizeof(_cls) != ABI_SIZES[_name]:
            raise ImportError(f"gpusort: ctypes lays out {_name} in {ctypes.sizeof(_cls)} bytes, "
                              f"gpusort.h in {ABI_SIZES[_name]}")


def new(cls, **fields):
    """A struct as its _INIT macro makes it: struct_size set, every other field zero (the
    defaults), then `fields`."""
    s = cls()
    s.struct_size = ctypes.sizeof(cls)
    for k, v in fields.items():
        setattr(s, k, v)
    return s


# ---- The library -----------------------------------------------------------------------------


def candidates():
    """Where to look for libgpusort, in order: $GPUSORT_LIBRARY (only it, when set); the path
    meson configured at install time (_library.py), if that file exists; the loader's search
    (ctypes.util.find_library('gpusort'), then the SONAME libgpusort.so.0)."""
    env = os.environ.get("GPUSORT_LIBRARY")
    if env:
        return [env]
    found = []
    path = configured()
    if path and os.path.exists(path):
        found.append(path)
    by_name = ctypes.util.find_library("gpusort")
    if by_name:
        found.append(by_name)
    found.append("libgpusort.so.0")
    return found


def configured():
    """The library's path as meson configured it into _library.py at install time, or None
    (running from the source tree)."""
    try:
        from ._library import LIBRARY
    except ImportError:
        return None
    return LIBRARY if LIBRARY and not LIBRARY.startswith("@") else None


def load():
    errors = []
    for path in candidates():
        try:
            # CDLL (unlike PyDLL) releases the GIL for the duration of every foreign call, so
            # a long sort on one thread leaves other Python threads running.
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        path = configured()
        if path and not os.environ.get("GPUSORT_LIBRARY") and not os.path.exists(path):
            errors.insert(0, f"{path} (the installed path): no such file")
        raise ImportError("gpusort: cannot load libgpusort (set GPUSORT_LIBRARY to the path of "
                          "libgpusort.so): " + "; ".join(errors))
    declare(lib)
    return lib


def declare(lib):
    P, c = ctypes.POINTER, ctypes
    protos = {
        "gpusort_version_number": (c.c_uint, []),
        "gpusort_version_string": (c.c_char_p, []),
        "gpusort_status_class": (c.c_int, [c.c_int]),
        "gpusort_status_name": (c.c_char_p, [c.c_int]),
        "gpusort_last_error": (c.c_char_p, []),
        "gpusort_type_name": (c.c_char_p, [c_enum]),
        "gpusort_type_from_name": (c.c_int, [c.c_char_p, P(c_enum)]),
        "gpusort_type_size": (c.c_size_t, [c_enum]),
        "gpusort_stage_name": (c.c_char_p, [c_enum]),
        "gpusort_device_type_name": (c.c_char_p, [c_enum]),
        "gpusort_open": (c.c_int, [P(c.c_void_p), P(ContextParams)]),
        "gpusort_close": (None, [c.c_void_p]),
        "gpusort_context_device": (c.c_int, [c.c_void_p, P(DeviceInfo)]),
        "gpusort_sort": (c.c_int, [c.c_void_p, c.c_void_p, c.c_void_p, c.c_uint64, P(Layout), P(SortOptions)]),
        "gpusort_argsort": (c.c_int, [c.c_void_p, c.c_void_p, c.c_uint64, P(Layout), c_enum, c.c_void_p,
                                      P(SortOptions)]),
        "gpusort_scan": (c.c_int, [c.c_void_p, c.c_void_p, c.c_void_p, c.c_uint64, P(ScanOptions)]),
        "gpusort_sort_file": (c.c_int, [c.c_void_p, c.c_char_p, c.c_char_p, P(Layout), P(SortOptions),
                                        P(Report)]),
    }
    for name, (restype, argtypes) in protos.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
