#!/usr/bin/python3
"""The Python module gpusort (python/gpusort): NumPy arrays through libgpusort with ctypes,
against numpy's own np.sort(kind="stable"), np.argsort(kind="stable") and np.cumsum; floats
also against the library's documented key order (IEEE 754 totalOrder); file sorts; errors;
the mirrored structs' layouts against gpusort.h.

usage: GPUSORT_LIBRARY=build/src/libgpusort.so PYTHONPATH=python \\
       /usr/bin/python3 tests/test_python.py [unittest options]
"""
import ctypes
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
from unittest import mock

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, os.path.join(ROOT, "python"))

import gpusort  # noqa: E402
from gpusort import _capi  # noqa: E402

SIZES = (0, 1, 7, 8, 9, 1000, 100003)
DISTRIBUTIONS = ("random", "equal", "sorted", "reversed", "few")
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def make(dtype, n, dist, seed):
    """n values of dtype: random over the whole range (integers) or normal (floats, so no
    -0.0 and no NaN: numpy's order and totalOrder agree), all equal, sorted, reversed, or
    five distinct values in random order."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        base = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        base = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    else:
        base = (rng.standard_normal(n) * 1000).astype(dt)
    if n == 0 or dist == "random":
        return base
    if dist == "equal":
        return np.full(n, base[0], dtype=dt)
    if dist == "sorted":
        return np.sort(base, kind="stable")
    if dist == "reversed":
        return np.sort(base, kind="stable")[::-1].copy()
    if dist == "few":
        return rng.choice(base[:5], n)
    raise ValueError(dist)


def bits(a):
    """The array's bytes as unsigned integers, to compare floats bit for bit (NaN, -0.0)."""
    return a.view(UINT[a.dtype.itemsize])


def descending_argsort(a):
    """numpy's stable descending argsort: largest first, equal keys in input order (the
    reverse of the stable ascending argsort of the reversed array, mapped back)."""
    n = len(a)
    return (n - 1 - np.argsort(a[::-1], kind="stable"))[::-1]


def total_order_key(a, descending=False):
    """The library's float order (IEEE 754 totalOrder) as unsigned integers: flip all bits of
    negative floats, the sign bit of the others; complemented for descending."""
    u = bits(a)
    t = u.dtype.type
    sign = t(1) << t(a.dtype.itemsize * 8 - 1)
    key = np.where(u & sign != 0, ~u, u | sign)
    return ~key if descending else key


def float_bits(dtype, pattern):
    return np.array([pattern], dtype=UINT[np.dtype(dtype).itemsize]).view(dtype)[0]


def specials(dtype):
    """±0, ±inf, NaNs of both signs and several payloads, subnormals, extremes."""
    dt = np.dtype(dtype)
    fi = np.finfo(dt)
    if dt.itemsize == 4:
        nans = [0x7FC00000, 0x7FC00001, 0x7F800001, 0xFFC00000, 0xFFC00001, 0xFF800001]
    else:
        nans = [0x7FF8000000000000, 0x7FF8000000000001, 0x7FF0000000000001,
                0xFFF8000000000000, 0xFFF8000000000001, 0xFFF0000000000001]
    values = [0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, fi.max, -fi.max, fi.tiny, -fi.tiny,
              fi.smallest_subnormal, -fi.smallest_subnormal]
    return np.concatenate([np.array(values, dtype=dt), np.array([float_bits(dt, p) for p in nans], dtype=dt)])


class StructLayouts(unittest.TestCase):
    """The ctypes mirrors against the header: the sizes the library's build pins, and where a
    C compiler is at hand, sizeof and offsetof of every field compiled from gpusort.h."""

    def test_struct_size_set(self):
        for cls in _capi.C_NAMES:
            self.assertEqual(_capi.new(cls).struct_size, ctypes.sizeof(cls))

    @unittest.skipUnless(ctypes.sizeof(ctypes.c_void_p) == 8, "the sizes are pinned where pointers are 8 bytes")
    def test_frozen_sizes(self):
        path = os.path.join(ROOT, "src", "api", "context.c")
        if not os.path.exists(path):
            self.skipTest(f"{path} is not here")
        with open(path) as f:
            pinned = {name: int(size) for name, size in re.findall(r"(?m)^GS_API_SIZE\((\w+),\s*(\d+)\);", f.read())}
        self.assertGreaterEqual(len(pinned), len(_capi.C_NAMES))
        for cls, name in _capi.C_NAMES.items():
            self.assertEqual(ctypes.sizeof(cls), pinned[name], name)
            self.assertEqual(_capi.ABI_SIZES[name], pinned[name], name)

    def test_compiled_layouts(self):
        cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        header = os.path.join(ROOT, "include", "gpusort.h")
        if not cc or not os.path.exists(header):
            self.skipTest("no C compiler or no gpusort.h")
        lines, expected = [], []
        for cls, name in _capi.C_NAMES.items():
            lines.append(f'  printf("{name} %zu\\n", sizeof({name}));')
            expected.append(f"{name} {ctypes.sizeof(cls)}")
            for field, _ in cls._fields_:
                lines.append(f'  printf("{name}.{field} %zu\\n", offsetof({name}, {field}));')
                expected.append(f"{name}.{field} {getattr(cls, field).offset}")
        src = ("#include <stddef.h>\n#include <stdio.h>\n#include <gpusort.h>\nint main(void) {\n"
               + "\n".join(lines) + "\n  return 0;\n}\n")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "sizes.c"), "w") as f:
                f.write(src)
            exe = os.path.join(tmp, "sizes")
            subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), "-o", exe,
                            os.path.join(tmp, "sizes.c")], check=True, capture_output=True)
            printed = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split("\n")
        self.assertEqual(printed[:-1], expected)


class Loader(unittest.TestCase):
    def test_environment_first(self):
        with mock.patch.dict(os.environ, {"GPUSORT_LIBRARY": "/nowhere/libgpusort.so"}):
            self.assertEqual(_capi.candidates(), ["/nowhere/libgpusort.so"])
            with self.assertRaisesRegex(ImportError, "/nowhere/libgpusort.so"):
                _capi.load()

    def test_fallbacks(self):
        env = dict(os.environ)
        env.pop("GPUSORT_LIBRARY", None)
        with mock.patch.dict(os.environ, env, clear=True):
            self.assertEqual(_capi.candidates()[-1], "libgpusort.so.0")

    def test_configured_path_and_soname(self):
        """Without $GPUSORT_LIBRARY: the path meson writes into _library.py (when that file
        exists), else the SONAME through the loader's search path."""
        library = os.path.realpath(gpusort._lib._name)
        source = os.path.dirname(gpusort.__file__)
        env = {k: v for k, v in os.environ.items() if k not in ("GPUSORT_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        probe = "import gpusort; print(gpusort._lib._name); print(gpusort.sort(__import__('numpy').arange(3, 0, -1)))"
        with tempfile.TemporaryDirectory() as tmp:
            package = os.path.join(tmp, "gpusort")
            shutil.copytree(source, package, ignore=shutil.ignore_patterns("__pycache__", "*.in", "_library.py"))
            with open(os.path.join(source, "_library.py.in")) as f:
                template = f.read()
            for configured, expected in ((library, library), ("/nowhere/libgpusort.so.0", "libgpusort.so.0")):
                with open(os.path.join(package, "_library.py"), "w") as f:
                    f.write(template.replace("@LIBRARY@", configured))
                run_env = dict(env, PYTHONPATH=tmp, LD_LIBRARY_PATH=os.path.dirname(library))
                out = subprocess.run([sys.executable, "-c", probe], env=run_env, capture_output=True, text=True,
                                     cwd=tmp)
                self.assertEqual(out.returncode, 0, out.stderr)
                self.assertEqual(out.stdout.split("\n")[:2], [expected, "[1 2 3]"])

    def test_version(self):
        self.assertRegex(gpusort.library_version(), r"^\d+\.\d+\.\d+$")


class Sorts(unittest.TestCase):
    """sort and argsort of every key type, size and distribution, both directions."""

    def check(self, a, where):
        before = a.copy()
        n = len(a)
        asc = np.argsort(a, kind="stable")
        desc = descending_argsort(a)
        got = gpusort.argsort(a)
        self.assertEqual(got.dtype, np.int64, where)
        np.testing.assert_array_equal(got, asc, err_msg=where)
        np.testing.assert_array_equal(gpusort.argsort(a, descending=True), desc, err_msg=where + " descending")
        s = gpusort.sort(a)
        self.assertEqual((s.dtype, s.shape), (a.dtype, (n,)), where)
        self.assertFalse(np.shares_memory(s, a))
        np.testing.assert_array_equal(bits(s), bits(np.sort(a, kind="stable")), err_msg=where)
        np.testing.assert_array_equal(bits(gpusort.sort(a, descending=True)), bits(a[desc]),
                                      err_msg=where + " descending")
        np.testing.assert_array_equal(bits(a), bits(before), err_msg=where + ": the input changed")

    def test_every_type_size_distribution(self):
        for dtype in gpusort.SORT_DTYPES:
            # the library's other key forms share one path (normalized forms): fewer cases
            native = dtype.itemsize >= 4
            for n in SIZES if native else (0, 1, 9, 3001):
                for dist in DISTRIBUTIONS if native else ("random", "few"):
                    where = f"{dtype} n={n} {dist}"
                    with self.subTest(where):
                        self.check(make(dtype, n, dist, seed=n * 7 + len(dist)), where)

    def test_supported_dtypes(self):
        self.assertEqual({str(d) for d in gpusort.SORT_DTYPES},
                         {"uint8", "int8", "uint16", "int16", "float16", "uint32", "int32", "float32", "uint64", "int64",
                          "float64"})

    def test_big_endian(self):
        for dtype in (">u2", ">i2", ">u4", ">i4", ">f4", ">u8", ">i8", ">f8"):
            for dist in ("random", "few"):
                a = make(np.dtype(dtype).newbyteorder("="), 3001, dist, seed=len(dist)).astype(dtype)
                with self.subTest(dtype=dtype, dist=dist):
                    self.assertEqual(gpusort.sort(a).dtype, np.dtype(dtype))
                    self.check(a, f"{dtype} {dist}")

    def test_extremes_and_stability(self):
        # integer extremes, and equal keys carrying their index through a stable sort
        for dtype in (np.int32, np.uint32, np.int64, np.uint64):
            info = np.iinfo(dtype)
            a = np.array([info.max, info.min, 0, 1, info.max, info.min, info.min + 1, info.max - 1] * 50, dtype=dtype)
            self.check(a, str(np.dtype(dtype)))

    def test_read_only_input(self):
        a = make(np.int32, 1000, "few", 3)
        a.setflags(write=False)
        np.testing.assert_array_equal(gpusort.argsort(a), np.argsort(a, kind="stable"))
        np.testing.assert_array_equal(gpusort.sort(a), np.sort(a, kind="stable"))

    def test_large_argsort(self):
        rng = np.random.default_rng(11)
        a = rng.integers(0, 1000, 200_000, dtype=np.uint64)  # many ties: stability shows
        np.testing.assert_array_equal(gpusort.argsort(a), np.argsort(a, kind="stable"))
        b = rng.standard_normal(200_000).astype(np.float32)
        np.testing.assert_array_equal(gpusort.argsort(b), np.argsort(b, kind="stable"))

    def test_verify_flag(self):
        a = make(np.float64, 1000, "few", 5)
        np.testing.assert_array_equal(gpusort.argsort(a, verify=True), np.argsort(a, kind="stable"))
        np.testing.assert_array_equal(gpusort.sort(a, True, verify=True), a[descending_argsort(a)])

    def test_threads(self):
        results, errors = {}, []

        def work(i):
            try:
                for j in range(5):
                    a = make(np.uint32 if i % 2 else np.float64, 3000, "few", 100 * i + j)
                    ok = np.array_equal(gpusort.argsort(a), np.argsort(a, kind="stable"))
                    results[(i, j)] = ok
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 20)
        self.assertTrue(all(results.values()))

    def test_close_reopens(self):
        a = make(np.int64, 100, "random", 9)
        gpusort.close()
        np.testing.assert_array_equal(gpusort.sort(a), np.sort(a))
        gpusort.close()
        gpusort.close()
        np.testing.assert_array_equal(gpusort.sort(a), np.sort(a))


class FloatOrder(unittest.TestCase):
    """Floats sort by IEEE 754 totalOrder (gpusort(3), README "Key order"):
    -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, NaNs among themselves by their bits."""

    def check_total_order(self, a, where):
        for descending in (False, True):
            ref = np.argsort(total_order_key(a, descending), kind="stable")
            got = gpusort.argsort(a, descending=descending)
            np.testing.assert_array_equal(got, ref, err_msg=f"{where} descending={descending}")
            np.testing.assert_array_equal(bits(gpusort.sort(a, descending=descending)), bits(a[ref]),
                                          err_msg=f"{where} descending={descending}")

    def test_specials(self):
        rng = np.random.default_rng(5)
        for dtype in (np.float32, np.float64):
            sp = specials(dtype)
            for n in (len(sp), 1000, 100003):
                a = np.concatenate([sp, (rng.standard_normal(max(0, n - len(sp))) * 10).astype(dtype)])
                a = np.concatenate([a, rng.choice(sp, n // 10)])  # repeats of each special
                rng.shuffle(a)
                self.check_total_order(a, f"{np.dtype(dtype)} n={len(a)}")

    def test_documented_positions(self):
        for dtype in (np.float32, np.float64):
            dt = np.dtype(dtype)
            a = specials(dtype)
            s = gpusort.sort(a)
            u = bits(s)
            negative = (u >> (dt.itemsize * 8 - 1)) == 1
            nan = np.isnan(s)
            # negative NaNs first, positive NaNs last, both by their bits
            self.assertTrue(np.all(nan[:3] & negative[:3]), s)
            self.assertTrue(np.all(nan[-3:] & ~negative[-3:]), s)
            self.assertTrue(np.all(u[:2] > u[1:3]), u[:3])  # -NaN: the larger bit pattern first
            self.assertTrue(np.all(u[-3:-1] < u[-2:]), u[-3:])  # +NaN: the smaller bit pattern first
            self.assertEqual(s[3], -np.inf)
            self.assertEqual(s[-4], np.inf)
            zeros = np.flatnonzero(s == 0)
            self.assertEqual(list(np.signbit(s[zeros])), [True, False])  # -0 before +0
            # between the NaNs: numpy's order of the values
            np.testing.assert_array_equal(s[3:-3], np.sort(a[~np.isnan(a)]))
            d = gpusort.sort(a, descending=True)
            self.assertTrue(np.all(np.isnan(d[:3]) & ~np.signbit(d[:3])))  # +NaN first
            self.assertTrue(np.all(np.isnan(d[-3:]) & np.signbit(d[-3:])))  # -NaN last
            self.assertEqual(list(np.signbit(d[d == 0])), [False, True])  # +0 before -0

    def test_equal_to_numpy_with_positive_nans(self):
        # np.nan has no sign bit and one payload: without -0.0, numpy's order is totalOrder
        rng = np.random.default_rng(8)
        for dtype in (np.float32, np.float64):
            a = (rng.standard_normal(5000) * 3).astype(dtype)
            a[rng.integers(0, len(a), 300)] = np.nan
            a[rng.integers(0, len(a), 300)] = np.inf
            a[rng.integers(0, len(a), 300)] = -np.inf
            a[rng.integers(0, len(a), 300)] = 0.0
            np.testing.assert_array_equal(gpusort.argsort(a), np.argsort(a, kind="stable"))
            np.testing.assert_array_equal(bits(gpusort.sort(a)), bits(np.sort(a, kind="stable")))

    def test_computed_nan_goes_by_its_sign(self):
        with np.errstate(invalid="ignore"):
            inf = np.array([np.inf])
            computed = (inf - inf)[0]  # x86: the default NaN, sign bit set
        a = np.array([1.0, computed, -1.0, np.nan])
        s = gpusort.sort(a)
        if np.signbit(computed):
            self.assertTrue(np.isnan(s[0]) and np.isnan(s[-1]))
        else:
            self.assertTrue(np.isnan(s[-2]) and np.isnan(s[-1]))


class Cumsum(unittest.TestCase):
    def check_float(self, a, got, where):
        """Against an (almost) exact sum within the bound gpusort(3) documents, and against
        numpy's own sequential float cumsum within that bound plus numpy's own error."""
        n = len(a)
        k1 = np.arange(1, n + 1, dtype=np.float64)
        u = 2.0 ** -24 if a.dtype == np.float32 else 2.0 ** -53
        d = k1 / 1024 + 64
        gamma = d * u / (1 - d * u)
        wide = a.astype(np.longdouble)
        exact = np.cumsum(wide)
        absum = np.cumsum(np.abs(wide))
        u_ref = float(np.finfo(np.longdouble).eps) / 2
        bound = gamma * absum + k1 * u_ref / (1 - k1 * u_ref) * absum
        err = np.abs(got.astype(np.longdouble) - exact)
        if not np.all(err <= bound):
            self.fail(f"{where}: {np.count_nonzero(err > bound)} sums past the bound, worst by {np.max(err - bound)}")
        numpy_bound = k1 * u / (1 - k1 * u) * absum
        diff = np.abs(got.astype(np.longdouble) - np.cumsum(a).astype(np.longdouble))
        self.assertTrue(np.all(diff <= bound + numpy_bound), where)

    def test_every_type_size_distribution(self):
        for dtype in gpusort.CUMSUM_DTYPES:
            for n in SIZES:
                for dist in DISTRIBUTIONS:
                    where = f"{dtype} n={n} {dist}"
                    with self.subTest(where):
                        a = make(dtype, n, dist, seed=n * 3 + len(dist))
                        before = a.copy()
                        ref = np.cumsum(a)
                        got = gpusort.cumsum(a)
                        self.assertEqual(got.dtype, ref.dtype, where)
                        self.assertEqual(got.shape, ref.shape, where)
                        if dtype.kind == "f":
                            self.check_float(a, got, where)
                        else:
                            np.testing.assert_array_equal(got, ref, err_msg=where)
                        np.testing.assert_array_equal(a, before)

    def test_integer_wrap(self):
        for dtype in (np.int64, np.uint64):
            info = np.iinfo(dtype)
            a = np.array([info.max, info.max, 1, info.min, info.max] * 100, dtype=dtype)
            with np.errstate(over="ignore"):
                ref = np.cumsum(a)
            np.testing.assert_array_equal(gpusort.cumsum(a), ref)

    def test_float_specials(self):
        for dtype in (np.float32, np.float64):
            for values in ([1, np.inf, 2], [1, np.nan, 2], [1, -np.inf, 2, np.inf]):
                a = np.array(values, dtype=dtype)
                with np.errstate(invalid="ignore"):
                    np.testing.assert_array_equal(gpusort.cumsum(a), np.cumsum(a), err_msg=str(values))

    def test_supported_dtypes(self):
        for dtype in (np.float16, np.complex64, np.complex128, object, np.longdouble, "U3", "M8[s]"):
            with self.assertRaises(TypeError, msg=str(dtype)):
                gpusort.cumsum(np.zeros(4, dtype=dtype))


class Errors(unittest.TestCase):
    FUNCTIONS = (gpusort.sort, gpusort.argsort, gpusort.cumsum)

    def test_not_one_dimensional(self):
        for f in self.FUNCTIONS:
            with self.assertRaisesRegex(ValueError, r"1-D.*2-D.*\(3, 4\)"):
                f(np.zeros((3, 4), dtype=np.uint32))
            with self.assertRaisesRegex(ValueError, "1-D"):
                f(np.array(5, dtype=np.int64))

    def test_not_contiguous(self):
        a = np.arange(100, dtype=np.float64)
        for f in self.FUNCTIONS:
            with self.assertRaisesRegex(ValueError, "not contiguous"):
                f(a[::2])

    def test_not_aligned(self):
        a = np.frombuffer(bytearray(41), dtype=np.uint32, count=10, offset=1)
        self.assertFalse(a.flags.aligned)
        for f in self.FUNCTIONS:
            with self.assertRaisesRegex(ValueError, "aligned"):
                f(a)

    def test_wrong_dtypes(self):
        cases = [(np.array([3, 1, 2], dtype=object), "object"), (np.zeros(4, np.complex128), "complex128"),
                 (np.zeros(4, np.complex64), "complex64"),
                 (np.zeros(4, "U2"), "<U2"), (np.zeros(4, [("a", np.uint32)]), r"\[\('a'")]
        for a, name in cases:
            for f in self.FUNCTIONS:
                with self.assertRaisesRegex(TypeError, "unsupported dtype " + name):
                    f(a)
        for f in (gpusort.sort, gpusort.argsort):  # cumsum takes bool; the sorts do not
            with self.assertRaisesRegex(TypeError, "unsupported dtype"):
                f(np.zeros(4, np.bool_))
        with self.assertRaisesRegex(TypeError, "unsupported dtype float16"):  # the sorts take it; cumsum does not
            gpusort.cumsum(np.zeros(4, np.float16))

    def test_byte_order(self):
        with self.assertRaisesRegex(TypeError, "byte order"):  # the sorts take it: see Sorts.test_big_endian
            gpusort.cumsum(np.zeros(4, dtype=np.dtype(np.uint32).newbyteorder("S")))
        for f in (gpusort.sort, gpusort.argsort):  # no f16be
            with self.assertRaisesRegex(TypeError, "byte order"):
                f(np.zeros(4, dtype=np.dtype(np.float16).newbyteorder("S")))

    def test_not_an_array(self):
        for f in self.FUNCTIONS:
            with self.assertRaisesRegex(TypeError, "numpy.ndarray.*list"):
                f([3, 1, 2])
            with self.assertRaisesRegex(TypeError, "masked"):
                f(np.ma.masked_array([3, 1, 2], mask=[0, 1, 0]))

    def test_empty(self):
        for dtype in gpusort.SORT_DTYPES:
            a = np.empty(0, dtype)
            self.assertEqual((gpusort.sort(a).dtype, gpusort.sort(a).shape), (dtype, (0,)))
            self.assertEqual((gpusort.argsort(a, True).dtype, gpusort.argsort(a).shape), (np.int64, (0,)))
        for dtype in gpusort.CUMSUM_DTYPES:
            a = np.empty(0, dtype)
            self.assertEqual(gpusort.cumsum(a).dtype, np.cumsum(a).dtype)
            self.assertEqual(gpusort.cumsum(a).shape, (0,))

    def test_library_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "missing.bin")
            with self.assertRaises(gpusort.Error) as cm:
                gpusort.sort_file(missing, os.path.join(tmp, "out.bin"))
            e = cm.exception
            self.assertIsInstance(e, RuntimeError)
            self.assertEqual((e.status, e.name, e.status_class), (12, "GPUSORT_ERROR_IO", 1))
            self.assertIn("missing.bin", e.message)
            self.assertIn(e.message, str(e))
            self.assertIn("GPUSORT_ERROR_IO", str(e))
            again = pickle.loads(pickle.dumps(e))
            self.assertEqual((again.status, again.name, again.message), (e.status, e.name, e.message))

            odd = os.path.join(tmp, "odd.bin")
            with open(odd, "wb") as f:
                f.write(b"12345")  # not a whole number of u32 records
            with self.assertRaises(gpusort.Error) as cm:
                gpusort.sort_file(odd, os.path.join(tmp, "out.bin"))
            self.assertEqual((cm.exception.name, cm.exception.status_class), ("GPUSORT_ERROR_BAD_INPUT", 2))
            self.assertTrue(cm.exception.message)

            with self.assertRaises(gpusort.Error) as cm:  # a value with a record size
                gpusort.sort_file(odd, os.path.join(tmp, "out.bin"), values="u32", record_bytes=8)
            self.assertEqual(cm.exception.status_class, 2)

            good = os.path.join(tmp, "good.bin")
            np.arange(10, dtype=np.uint32).tofile(good)
            with self.assertRaises(gpusort.Error) as cm:
                gpusort.sort_file(good, good, keys="u32", overwrite=True)
            self.assertEqual(cm.exception.name, "GPUSORT_ERROR_OUTPUT_IS_INPUT")
        with self.assertRaisesRegex(ValueError, "key type 'u17'"):
            gpusort.sort_file("in", "out", keys="u17")


class Files(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def check_report(self, r, n, record):
        self.assertEqual(r["records"], n)
        self.assertEqual((r["input_bytes"], r["output_bytes"]), (n * record, n * record))
        self.assertRegex(r["xxh3"], r"^[0-9a-f]{16}$")
        self.assertGreater(r["total_seconds"], 0)
        for stage in ("open", "setup", "read", "sort", "write"):
            self.assertIn(stage, r["stage_seconds"])
        self.assertTrue(all(s >= 0 for s in r["stage_seconds"].values()))
        self.assertGreaterEqual(r["total_seconds"], max(r["stage_seconds"].values()))

    def xxhsum(self, path):
        if not shutil.which("xxhsum"):
            return None
        out = subprocess.run(["xxhsum", "-H3", path], capture_output=True, text=True, check=True).stdout
        return re.search(r"\b([0-9a-f]{16})\b", out).group(1)

    def test_u32_round_trip(self):
        a = np.random.default_rng(1).integers(0, 5000, 50_000, dtype=np.uint32)
        a.tofile(self.path("in.bin"))
        r = gpusort.sort_file(self.path("in.bin"), self.path("out.bin"))
        out = np.fromfile(self.path("out.bin"), dtype=np.uint32)
        np.testing.assert_array_equal(out, np.sort(a, kind="stable"))
        self.check_report(r, len(a), 4)
        self.assertGreater(r["stage_seconds"]["sort"], 0)
        self.assertGreaterEqual(r["passes"], 1)
        self.assertEqual(len(r["pass_seconds"]), min(r["passes"], 8))
        self.assertFalse(r["verified"])
        expected = self.xxhsum(self.path("out.bin"))
        if expected:
            self.assertEqual(r["xxh3"], expected)

        # an existing output needs overwrite=True
        with self.assertRaises(gpusort.Error) as cm:
            gpusort.sort_file(self.path("in.bin"), self.path("out.bin"))
        self.assertEqual(cm.exception.name, "GPUSORT_ERROR_OUTPUT_EXISTS")
        r2 = gpusort.sort_file(self.path("in.bin"), self.path("out.bin"), descending=True, overwrite=True,
                               verify=True, sync=True)
        self.assertTrue(r2["verified"])
        np.testing.assert_array_equal(np.fromfile(self.path("out.bin"), dtype=np.uint32),
                                      a[descending_argsort(a)])

    def test_every_key_type(self):
        rng = np.random.default_rng(2)
        for dtype in gpusort.SORT_DTYPES:
            for keys in (np.dtype(dtype), gpusort._lib.gpusort_type_name(gpusort._KEY_TYPES[
                    (dtype.kind, dtype.itemsize)]).decode()):
                with self.subTest(keys=keys):
                    a = make(dtype, 3000, "few", int(rng.integers(1000)))
                    a.tofile(self.path("in.bin"))
                    r = gpusort.sort_file(self.path("in.bin"), self.path("out.bin"), keys=keys, descending=True,
                                          overwrite=True)
                    out = np.fromfile(self.path("out.bin"), dtype=dtype)
                    np.testing.assert_array_equal(bits(out), bits(a[descending_argsort(a)]))
                    self.check_report(r, len(a), dtype.itemsize)

    def test_byte_strings_and_big_endian(self):
        rng = np.random.default_rng(4)
        records = rng.integers(0, 3, (5000, 20), dtype=np.uint8)  # many equal keys: stability shows
        records.tofile(self.path("in.bin"))
        gpusort.sort_file(self.path("in.bin"), self.path("out.bin"), keys="bytes:10", record_bytes=20, overwrite=True)
        order = np.lexsort(records[:, :10].T[::-1])
        np.testing.assert_array_equal(np.fromfile(self.path("out.bin"), dtype=np.uint8).reshape(-1, 20),
                                      records[order])
        for keys in (">u4", "u32be"):
            a = make(np.uint32, 3000, "random", 5).astype(">u4")
            a.tofile(self.path("in.bin"))
            gpusort.sort_file(self.path("in.bin"), self.path("out.bin"), keys=keys, overwrite=True)
            np.testing.assert_array_equal(np.fromfile(self.path("out.bin"), dtype=">u4"), np.sort(a, kind="stable"))

    def test_pairs_and_records(self):
        rng = np.random.default_rng(3)
        pairs = np.zeros(4000, dtype=[("k", np.int64), ("v", np.float32)])
        pairs["k"] = rng.integers(-50, 50, len(pairs))
        pairs["v"] = np.arange(len(pairs))
        self.assertEqual(pairs.itemsize, 12)  # packed: no padding
        pairs.tofile(self.path("pairs.bin"))
        r = gpusort.sort_file(self.path("pairs.bin"), self.path("pairs.out"), keys="i64", values="f32")
        out = np.fromfile(self.path("pairs.out"), dtype=pairs.dtype)
        np.testing.assert_array_equal(out, pairs[np.argsort(pairs["k"], kind="stable")])
        self.check_report(r, len(pairs), 12)

        records = rng.integers(0, 256, (3000, 13), dtype=np.uint8)
        keys = rng.integers(-100, 100, len(records)).astype(np.int32)
        records[:, 5:9] = keys.view(np.uint8).reshape(-1, 4)  # an i32 key at an odd offset
        records.tofile(self.path("records.bin"))
        r = gpusort.sort_file(self.path("records.bin"), self.path("records.out"), keys="i32", record_bytes=13,
                              key_offset=5)
        out = np.fromfile(self.path("records.out"), dtype=np.uint8).reshape(-1, 13)
        np.testing.assert_array_equal(out, records[np.argsort(keys, kind="stable")])
        self.check_report(r, len(records), 13)

    def test_empty_file(self):
        open(self.path("empty.bin"), "wb").close()
        r = gpusort.sort_file(self.path("empty.bin"), self.path("out.bin"), keys=np.float64)
        self.assertEqual((r["records"], r["output_bytes"]), (0, 0))
        self.assertEqual(r["xxh3"], "2d06800538d394c2")  # XXH3-64 of no bytes
        self.assertEqual(os.path.getsize(self.path("out.bin")), 0)

    def test_path_like(self):
        import pathlib
        a = np.arange(10, 0, -1, dtype=np.int32)
        a.tofile(self.path("in.bin"))
        gpusort.sort_file(pathlib.Path(self.path("in.bin")), pathlib.Path(self.path("out.bin")), keys="i32")
        np.testing.assert_array_equal(np.fromfile(self.path("out.bin"), dtype=np.int32), np.sort(a))


if __name__ == "__main__":
    unittest.main(verbosity=2)
