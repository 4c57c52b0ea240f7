"""gpusort: sort, argsort and cumsum of NumPy arrays on the GPU, and sorts of files, with
libgpusort (Vulkan compute). A thin ctypes layer over the library's C API (gpusort.h,
gpusort(3)); there is no compiled extension.

    import numpy as np, gpusort
    keys = np.random.default_rng(1).integers(0, 100, 10_000, dtype=np.uint32)
    gpusort.sort(keys)                    # == np.sort(keys, kind="stable")
    gpusort.argsort(keys)                 # == np.argsort(keys, kind="stable"), int64
    gpusort.sort(keys, descending=True)   # largest first; equal keys keep input order
    gpusort.cumsum(keys)                  # == np.cumsum(keys): uint64
    gpusort.sort_file("in.bin", "out.bin", keys="u32")   # -> a dict of the job's report

Arrays. sort() and argsort() take 1-D, C-contiguous, aligned arrays of uint8, int8, uint16,
int16, float16, uint32, int32, float32, uint64, int64 or float64 (the library's key types
u8 ... f64), in the machine's byte order or, but for float16, big-endian (">u4": the
library's u32be ...); cumsum() takes bool, the integers and float32/float64 in the machine's
byte order. Anything else is a TypeError (not an ndarray, or an unsupported dtype: object,
complex, ...) or a ValueError (not 1-D, not contiguous, not aligned), raised before any GPU
work. Results are new arrays; the
input is never modified. Empty arrays give empty results without touching the GPU.

Key order. Integers sort numerically. Floats sort by IEEE 754 totalOrder, as the library
defines it (the bit pattern decides, so the order is total and the sort is still stable):

    -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN,  NaNs among themselves by their bits.

This differs from numpy in three ways: -0.0 comes before +0.0 (numpy keeps them in input
order, as equal); NaNs with the sign bit set come first (numpy puts every NaN last; note
that on x86 the NaN of an invalid operation such as inf - inf or 0/0 has its sign bit set,
while np.nan does not); and NaNs are ordered by their payload bits (numpy keeps them in input
order). For arrays without NaNs of the sign bit or of several payloads, and without -0.0
beside +0.0, sort() and argsort() equal numpy's stable sorts. descending=True complements the
order (+NaN first, -NaN last) and is stable too: equal keys keep their input order, so it is
not the reverse of the ascending result.

cumsum() follows numpy's dtype rules for np.cumsum on 64-bit Linux: bool and signed integers
sum into int64, unsigned integers into uint64, float32 stays float32 and float64 float64.
Inputs are scanned directly (with a widened accumulator where numpy widens: u8, u16 and u32 to
u64, i8, i16 and i32 to i64); bool is first converted to int32. Integer sums wrap modulo 2^64, as numpy's do. Float
sums are the library's reduce-then-scan (bit-identical from run to run); they associate
differently from numpy's sequential sum, within the bound gpusort(3) documents: element k
is within gamma_D * (|x_0| + ... + |x_k|) of the exact sum, gamma_D = D*u/(1 - D*u),
u = 2^-24 (f32) or 2^-53 (f64), D = (k + 1)/1024 + 64.

The context. The first call that needs the GPU opens one libgpusort context (gpusort_open)
for the process: the default device, unless configure() said otherwise; it is closed at
exit (atexit), by close(), or by configure(). A lock serializes its use, as the library
requires (a context is used by one thread at a time). ctypes.CDLL releases the GIL for the
duration of every foreign call, so other Python threads run while the GPU works; calls from
several threads wait for each other on the lock. A forked child does not inherit the
context: its first call opens its own.

Errors of the library raise gpusort.Error (a RuntimeError) with the status code (.status),
its name (.name, e.g. "GPUSORT_ERROR_IO"), its class (.status_class: 1 runtime, 2 usage,
3 verification) and the library's message (.message, from gpusort_last_error()). After
GPUSORT_ERROR_GPU_STALL the context is closed (the library allows nothing else) and the next
call opens a new one.

The library is found through $GPUSORT_LIBRARY (a path to libgpusort.so; then only that),
else the path meson configured at install time, else the dynamic loader
(ctypes.util.find_library("gpusort"), then libgpusort.so.0).
"""
import atexit
import ctypes
import os
import sys
import threading

import numpy as np

from . import _capi
from ._capi import (GPUSORT_DESCENDING, GPUSORT_ERROR_GPU_STALL, GPUSORT_F32, GPUSORT_F64, GPUSORT_I32,
                    GPUSORT_I64, GPUSORT_OPEN_DEFERRED, GPUSORT_OVERWRITE, GPUSORT_SCAN_AUTO, GPUSORT_SUM,
                    GPUSORT_SYNC, GPUSORT_TYPE_NONE, GPUSORT_U32, GPUSORT_U64, GPUSORT_VERIFY)

__all__ = ["Error", "sort", "argsort", "cumsum", "sort_file", "configure", "close", "device_info",
           "library_version", "SORT_DTYPES", "CUMSUM_DTYPES"]

_lib = _capi.load()

#: The library's key types as numpy dtypes (what sort() and argsort() take).
#: Also in big-endian byte order, all but float16.
SORT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float16, np.uint32, np.int32,
                                          np.float32, np.uint64, np.int64, np.float64))

# (kind, itemsize) of a native-byte-order dtype -> gpusort_type
_KEY_TYPES = {
    ("u", 1): _capi.GPUSORT_U8,
    ("i", 1): _capi.GPUSORT_I8,
    ("u", 2): _capi.GPUSORT_U16,
    ("i", 2): _capi.GPUSORT_I16,
    ("f", 2): _capi.GPUSORT_F16,
    ("u", 4): GPUSORT_U32,
    ("i", 4): GPUSORT_I32,
    ("f", 4): GPUSORT_F32,
    ("u", 8): GPUSORT_U64,
    ("i", 8): GPUSORT_I64,
    ("f", 8): GPUSORT_F64,
}
# the same, stored big-endian on a little-endian machine (numpy's ">u4")
_BIG_ENDIAN_KEY_TYPES = {
    ("u", 2): _capi.GPUSORT_U16BE,
    ("i", 2): _capi.GPUSORT_I16BE,
    ("u", 4): _capi.GPUSORT_U32BE,
    ("i", 4): _capi.GPUSORT_I32BE,
    ("f", 4): _capi.GPUSORT_F32BE,
    ("u", 8): _capi.GPUSORT_U64BE,
    ("i", 8): _capi.GPUSORT_I64BE,
    ("f", 8): _capi.GPUSORT_F64BE,
}

# cumsum: (kind, itemsize) -> (dtype the library reads, its type, accumulator type, result dtype)
_CUMSUM = {
    ("b", 1): (np.int32, GPUSORT_I32, GPUSORT_I64, np.int64),
    ("i", 1): (np.int8, _capi.GPUSORT_I8, GPUSORT_I64, np.int64),
    ("i", 2): (np.int16, _capi.GPUSORT_I16, GPUSORT_I64, np.int64),
    ("i", 4): (np.int32, GPUSORT_I32, GPUSORT_I64, np.int64),
    ("i", 8): (np.int64, GPUSORT_I64, GPUSORT_TYPE_NONE, np.int64),
    ("u", 1): (np.uint8, _capi.GPUSORT_U8, GPUSORT_U64, np.uint64),
    ("u", 2): (np.uint16, _capi.GPUSORT_U16, GPUSORT_U64, np.uint64),
    ("u", 4): (np.uint32, GPUSORT_U32, GPUSORT_U64, np.uint64),
    ("u", 8): (np.uint64, GPUSORT_U64, GPUSORT_TYPE_NONE, np.uint64),
    ("f", 4): (np.float32, GPUSORT_F32, GPUSORT_TYPE_NONE, np.float32),
    ("f", 8): (np.float64, GPUSORT_F64, GPUSORT_TYPE_NONE, np.float64),
}
#: What cumsum() takes.
CUMSUM_DTYPES = tuple(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                            np.uint32, np.uint64, np.float32, np.float64))

_STAGES = []
for _i in range(_capi.GPUSORT_MAX_STAGES):
    _n = _lib.gpusort_stage_name(_i)
    if _n is None:
        break
    _STAGES.append(_n.decode())


def library_version():
    """The version string of the loaded libgpusort ("0.7.53")."""
    return _lib.gpusort_version_string().decode()


# ---- Errors -----------------------------------------------------------------------------------


class Error(RuntimeError):
    """A libgpusort call failed: .status (the gpusort_status code), .name ("GPUSORT_ERROR_IO"),
    .status_class (1 runtime, 2 usage, 3 verification) and .message (gpusort_last_error())."""

    def __init__(self, status, message=""):
        self.status = int(status)
        self.name = _lib.gpusort_status_name(self.status).decode()
        self.status_class = _lib.gpusort_status_class(self.status)
        self.message = message
        super().__init__(f"{message} [{self.name}]" if message else self.name)

    def __reduce__(self):
        return (type(self), (self.status, self.message))


def _error(status):
    """The Error of a failed call; reads the calling thread's gpusort_last_error(), so it must
    run on the thread of the call, before any other libgpusort call there."""
    message = _lib.gpusort_last_error()
    return Error(status, message.decode(errors="replace") if message else "")


# ---- The context ----------------------------------------------------------------------------

_lock = threading.RLock()
_ctx = None  # ctypes.c_void_p of the open gpusort_context, or None
_params = None  # _capi.ContextParams for the next gpusort_open, or None for the defaults


def configure(device=-1, timeout_seconds=0.0, memory_budget=0, temp_dir=None, deferred=False):
    """Parameters of the context (gpusort_context_params) that the next call opens; closes the
    current one. device: an index of the Vulkan devices, -1 the default; timeout_seconds: the
    bound on every wait for the GPU (0: 60 s); memory_budget: bytes of GPU and staging memory
    a job may use (0: three quarters of what is free); temp_dir: scratch files of file jobs;
    deferred: open the device only when a job needs it."""
    global _params
    params = _capi.new(_capi.ContextParams, device=int(device), timeout_seconds=float(timeout_seconds),
                       memory_budget=int(memory_budget),
                       flags=GPUSORT_OPEN_DEFERRED if deferred else 0)
    if temp_dir is not None:
        params.temp_dir = os.fsencode(temp_dir)  # the struct keeps the bytes alive; the library copies
    with _lock:
        _close_locked()
        _params = params


def close():
    """Closes the process's context, if open (the next call opens a new one)."""
    with _lock:
        _close_locked()


def _close_locked():
    global _ctx
    if _ctx is not None:
        ctx, _ctx = _ctx, None
        _lib.gpusort_close(ctx)


def _context_locked():
    global _ctx
    if _ctx is None:
        ctx = ctypes.c_void_p()
        rc = _lib.gpusort_open(ctypes.byref(ctx), ctypes.byref(_params) if _params is not None else None)
        if rc:
            raise _error(rc)
        _ctx = ctx
    return _ctx


def _run(fn, *args):
    """fn(ctx, *args) on the process's context, under the lock; raises Error if it fails."""
    with _lock:
        ctx = _context_locked()
        rc = fn(ctx, *args)  # the GIL is released for the call (ctypes.CDLL)
        if rc:
            err = _error(rc)
            if rc == GPUSORT_ERROR_GPU_STALL:
                _close_locked()  # a stalled context can only be closed
            raise err


def _at_exit():
    # A daemon thread may still be in a job at exit: then leave the context to the OS.
    if _lock.acquire(blocking=False):
        try:
            _close_locked()
        finally:
            _lock.release()


def _after_fork_in_child():
    global _lock, _ctx
    _lock = threading.RLock()
    _ctx = None  # the parent's device is not this process's to use or to close


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def device_info():
    """A dict describing the context's device (gpusort_context_device; opens the context)."""
    info = _capi.new(_capi.DeviceInfo)
    _run(_lib.gpusort_context_device, ctypes.byref(info))
    v = info.api_version
    return {
        "index": info.index,
        "name": info.name.decode(errors="replace"),
        "type": _lib.gpusort_device_type_name(info.type).decode(),
        "driver": info.driver.decode(errors="replace"),
        "vendor_id": info.vendor_id,
        "device_id": info.device_id,
        "vulkan": f"{(v >> 22) & 0x7F}.{(v >> 12) & 0x3FF}.{v & 0xFFF}",
        "subgroup_size": info.subgroup_size,
        "memory_bytes": info.memory_bytes,
        "max_buffer_bytes": info.max_buffer_bytes,
        "preset": info.preset.decode(errors="replace"),
    }


# ---- Arrays -----------------------------------------------------------------------------------


def _check_array(a, func, table, names, swapped_table=None):
    """The table's entry for a's dtype, after checking that a is a 1-D, C-contiguous, aligned
    ndarray of a supported dtype: in the machine's byte order, or in the other one where
    `swapped_table` has an entry for it."""
    if not isinstance(a, np.ndarray) or isinstance(a, np.ma.MaskedArray):
        raise TypeError(f"gpusort.{func}: expected a numpy.ndarray, got {type(a).__module__}.{type(a).__qualname__}"
                        + (" (masked arrays are not supported)" if isinstance(a, np.ndarray) else
                           " (convert it with numpy.asarray)"))
    dt = a.dtype
    entry = table.get((dt.kind, dt.itemsize)) if dt.fields is None and dt.subdtype is None else None
    if entry is None:
        raise TypeError(f"gpusort.{func}: unsupported dtype {dt} (supported: {names})")
    swapped = (swapped_table or {}).get((dt.kind, dt.itemsize)) if sys.byteorder == "little" else None
    if not dt.isnative and swapped is not None:  # big-endian data: the library's *be types
        entry = swapped
    elif not dt.isnative:
        raise TypeError(f"gpusort.{func}: dtype {dt.str} is not in the machine's byte order "
                        f"(convert it with a.astype({dt.newbyteorder('=').name!r}))")
    if a.ndim != 1:
        raise ValueError(f"gpusort.{func}: expected a 1-D array, got {a.ndim}-D of shape {a.shape}")
    if not a.flags.c_contiguous:
        raise ValueError(f"gpusort.{func}: the array is not contiguous (stride {a.strides[0]} bytes, items of "
                         f"{dt.itemsize}); pass numpy.ascontiguousarray(a)")
    if not a.flags.aligned:
        raise ValueError(f"gpusort.{func}: the array's data is not aligned to its items; pass a.copy()")
    return entry


_SORT_NAMES = ", ".join(str(d) for d in SORT_DTYPES)
_CUMSUM_NAMES = ", ".join(str(d) for d in CUMSUM_DTYPES)


def _sort_options(descending, verify, extra=0):
    return _capi.new(_capi.SortOptions, flags=(GPUSORT_DESCENDING if descending else 0) |
                     (GPUSORT_VERIFY if verify else 0) | extra)


def sort(a, descending=False, *, verify=False):
    """A sorted copy of the 1-D array `a` (same dtype), stable: equal keys keep their input
    order, also when descending. Floats by totalOrder (see the module's documentation).
    verify: the library checks the result on the host (else gpusort.Error,
    GPUSORT_ERROR_VERIFY)."""
    key = _check_array(a, "sort", _KEY_TYPES, _SORT_NAMES, _BIG_ENDIAN_KEY_TYPES)
    out = np.empty(a.shape[0], dtype=a.dtype)
    if a.shape[0]:
        layout = _capi.new(_capi.Layout, key=key)
        options = _sort_options(descending, verify)
        _run(_lib.gpusort_sort, a.ctypes.data, out.ctypes.data, a.shape[0], ctypes.byref(layout),
             ctypes.byref(options))
    return out


def argsort(a, descending=False, *, verify=False):
    """The int64 indices that sort the 1-D array `a`, stable: ascending, the same as
    numpy.argsort(a, kind="stable") (for floats, where totalOrder and numpy agree: see the
    module's documentation); descending, largest key first with equal keys in input order."""
    key = _check_array(a, "argsort", _KEY_TYPES, _SORT_NAMES, _BIG_ENDIAN_KEY_TYPES)
    out = np.empty(a.shape[0], dtype=np.int64)
    if a.shape[0]:
        layout = _capi.new(_capi.Layout, key=key)
        options = _sort_options(descending, verify)
        _run(_lib.gpusort_argsort, a.ctypes.data, a.shape[0], ctypes.byref(layout), GPUSORT_U64, out.ctypes.data,
             ctypes.byref(options))  # u64 indices, below 2^63: int64's bits
    return out


def cumsum(a):
    """The running sums of the 1-D array `a`, as numpy.cumsum(a) computes them, in numpy's
    result dtype (int64, uint64, float32 or float64; see the module's documentation)."""
    host, type_, acc, result = _check_array(a, "cumsum", _CUMSUM, _CUMSUM_NAMES)
    out = np.empty(a.shape[0], dtype=result)
    if a.shape[0]:
        data = a if a.dtype == host else a.astype(host)  # bool as int32; the library widens 8 and 16 bits
        options = _capi.new(_capi.ScanOptions, type=type_, acc=acc, op=GPUSORT_SUM, algo=GPUSORT_SCAN_AUTO)
        _run(_lib.gpusort_scan, data.ctypes.data, out.ctypes.data, a.shape[0], ctypes.byref(options))
    return out


# ---- Files ------------------------------------------------------------------------------------


def _type_code(t, what):
    """(gpusort_type, bytes:N's N or 0) from a library name ("u32", "u16be", "bytes:10"), a
    numpy dtype or anything numpy.dtype takes (">u4" is u32be)."""
    if isinstance(t, str) and t.startswith("bytes:") and t[6:].isdigit():
        return _capi.GPUSORT_BYTES, int(t[6:])
    if isinstance(t, str):
        code = _capi.c_enum()
        if _lib.gpusort_type_from_name(t.encode(), ctypes.byref(code)) == 0 and code.value != _capi.GPUSORT_BYTES:
            return code.value, 0
    try:
        dt = np.dtype(t)
    except TypeError:
        dt = None
    code = None
    if dt is not None and dt.fields is None:
        table = _KEY_TYPES if dt.isnative else _BIG_ENDIAN_KEY_TYPES if sys.byteorder == "little" else {}
        code = table.get((dt.kind, dt.itemsize))
    if code is None:
        raise ValueError(f"gpusort.sort_file: {what} {t!r} is not a type gpusort sorts "
                         f"(u8, i8, u16, i16, f16, bf16, u32, i32, f32, u64, i64, f64, u16be ... f64be, bytes:N, "
                         f"or their numpy dtypes)")
    return code, 0


def _report(r):
    passes = min(r.passes, len(r.pass_seconds))
    return {
        "records": r.records,
        "input_bytes": r.input_bytes,
        "output_bytes": r.output_bytes,
        "xxh3": f"{r.xxh3:016x}",  # XXH3-64 of the output, as xxhsum -H3 prints it
        "total_seconds": r.total_seconds,
        "stage_seconds": {name: r.stage_seconds[i] for i, name in enumerate(_STAGES)},
        "verified": bool(r.verified),
        "histogram_seconds": r.histogram_seconds,
        "passes": r.passes,
        "pass_seconds": list(r.pass_seconds[:passes]),
        "batches": r.batches,
    }


def sort_file(input, output, keys="u32", descending=False, *, values=None, record_bytes=0, key_offset=0,
              overwrite=False, verify=False, sync=False):
    """Sorts the records of file `input` into file `output` (gpusort_sort_file; "-" is stdin or
    stdout) and returns the job's report as a dict: records, input_bytes, output_bytes, xxh3
    (the output's XXH3-64 as 16 hex digits, as xxhsum -H3 prints it), total_seconds,
    stage_seconds ({"open": s, "setup": s, "read": s, ...}, 0 for stages not run), verified,
    histogram_seconds, passes, pass_seconds, batches.

    The records are keys of type `keys` ("u32", "f16", "u32be", "bytes:10", ..., or a numpy
    dtype); with `values`, (key, value) pairs packed without padding; with `record_bytes`,
    records of that many bytes ordered by the key at `key_offset`. The output is written to
    a temporary file and renamed over `output` when complete; an existing output needs
    overwrite=True. verify: check the result on the host before writing; sync: flush the
    output to storage before returning. Failures raise gpusort.Error (e.g. GPUSORT_ERROR_IO,
    GPUSORT_ERROR_OUTPUT_EXISTS, GPUSORT_ERROR_BAD_INPUT)."""
    key, key_bytes = _type_code(keys, "key type")
    value = _type_code(values, "value type")[0] if values is not None else GPUSORT_TYPE_NONE
    layout = _capi.new(_capi.Layout, key=key, key_bytes=key_bytes, value=value, record_bytes=int(record_bytes),
                       key_offset=int(key_offset))
    options = _sort_options(descending, verify,
                            (GPUSORT_OVERWRITE if overwrite else 0) | (GPUSORT_SYNC if sync else 0))
    report = _capi.new(_capi.Report)
    _run(_lib.gpusort_sort_file, os.fsencode(input), os.fsencode(output), ctypes.byref(layout),
         ctypes.byref(options), ctypes.byref(report))
    return _report(report)
