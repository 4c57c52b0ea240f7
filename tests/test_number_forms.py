#!/usr/bin/python3
"""Numbers of every form through the command line: u8, i8, u16, i16, f16, bf16 and the
big-endian types, widened to the GPU's types and converted back, against numpy: scan and
reduce, and the look-back family (select, partition, unique, rle, reduce-by-key).

Integer sums wrap at the elements' width (numpy's cumsum in the same dtype), or at a wider
accumulator's (--acc, whose results keep the elements' byte order); min and max are exact,
floats by totalOrder (compared on their ordered bits, as numpy propagates NaNs instead);
float sums are within a bound of the exact sums: f16 and bf16 sum in f32 and round each
result to their own precision. Sizes around the chunks of --mem-limit, files and streams
(spilled to a scratch file and read back by chunk), .npy files without --keys, refusals.

The family compares keys as the GPU types they widen to (exactly: equal keys stay equal, -0
and +0 and NaN payloads stay apart), tests constants in the keys' own range and precision,
and writes the records (and rle's and reduce-by-key's keys) as they were.

usage: test_number_forms.py GPUSORT [unittest options]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

GPUSORT = None

# name -> (numpy dtype of the raw field, kind, numpy dtype of the value, or None for bf16)
FORMS = {
    "u8": ("<u1", "u"), "i8": ("<i1", "i"), "u16": ("<u2", "u"), "i16": ("<i2", "i"), "f16": ("<f2", "f"),
    "bf16": ("<u2", "f"), "u16be": (">u2", "u"), "i16be": (">i2", "i"), "u32be": (">u4", "u"), "i32be": (">i4", "i"),
    "f32be": (">f4", "f"), "u64be": (">u8", "u"), "i64be": (">i8", "i"), "f64be": (">f8", "f"),
}
ACC_DTYPES = {"u32": "u4", "i32": "i4", "f32": "f4", "u64": "u8", "i64": "i8", "f64": "f8"}
# relative bound of float sums against the exact sum of |x| so far: the result type's rounding
# and f32 (f64) accumulation
FLOAT_BOUND = {"f16": 2e-3, "bf16": 1.6e-2, "f32be": 1e-5, "f64be": 1e-13, "f32": 1e-5, "f64": 1e-13}


def as_float64(raw, name):
    """The values of raw fields of a float form, exactly, as float64."""
    if name == "bf16":
        return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return raw.astype(np.float64)


def ordered(values, kind):
    """totalOrder as unsigned integers: the bits of each value mapped as the sort maps them."""
    width = values.dtype.itemsize
    bits = values.astype(values.dtype.newbyteorder("=")).view(f"u{width}").astype(np.uint64)
    sign = np.uint64(1 << (8 * width - 1))
    if kind == "i":
        return bits ^ sign
    if kind == "f":
        mask = np.uint64((1 << (8 * width)) - 1)
        return np.where(bits & sign, ~bits & mask, bits | sign)
    return bits


def numbers(name, n, rng, specials=False):
    dtype, kind = FORMS[name]
    dt = np.dtype(dtype)
    if kind == "f":
        values = rng.standard_normal(n) * 100
        if name == "bf16":
            raw = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            if specials and n > 8:
                raw[:6] = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x8001]
            return raw.astype(dt)
        out = values.astype(dt)
        if specials and n > 8:
            out[:6] = np.array([0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40]).astype(dt)
        return out
    info = np.iinfo(dt)
    return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if kind == "i" else np.uint64).astype(dt)


class ScanForms(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-scan-forms-")
        self.rng = np.random.default_rng(11)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def run_gpusort(self, *args, data=None, want=0):
        p = subprocess.run([GPUSORT, *args], input=data, capture_output=True, timeout=300)
        self.assertEqual(p.returncode, want, f"{' '.join(args)}: {p.stderr.decode()}")
        return p

    def scan(self, name, values, *options, stream=False):
        """The scan's output of raw values (through a file, or stdin to stdout)."""
        if stream:
            return self.run_gpusort("scan", "-q", "--keys", name, *options, "-", "-", data=values.tobytes()).stdout
        values.tofile(self.path("in.bin"))
        self.run_gpusort("scan", "-q", "-f", "--keys", name, *options, self.path("in.bin"), self.path("out.bin"))
        with open(self.path("out.bin"), "rb") as f:
            return f.read()

    def reduce(self, name, values, *options):
        values.tofile(self.path("in.bin"))
        p = self.run_gpusort("reduce", "--json", "--keys", name, *options, self.path("in.bin"))
        return json.loads(p.stdout)["result"]

    def check_integers(self, name, x, got, acc=None, exclusive=False, op="sum"):
        dtype, kind = FORMS[name]
        out = np.dtype(dtype) if acc is None else np.dtype(ACC_DTYPES[acc]).newbyteorder(np.dtype(dtype).byteorder)
        wide = x.astype(out)
        if op == "sum":
            want = np.cumsum(wide, dtype=out)
            first = out.type(0)
        else:
            f = np.minimum if op == "min" else np.maximum
            want = f.accumulate(wide)
            info = np.iinfo(out)
            first = out.type(info.max if op == "min" else info.min)
        if exclusive:
            want = np.concatenate([[first], want[:-1]]).astype(out)
        np.testing.assert_array_equal(np.frombuffer(got, dtype=out), want, f"{name} {op} acc={acc}")

    def test_integer_sums_min_max_every_form(self):
        for name, (dtype, kind) in FORMS.items():
            if kind == "f":
                continue
            for n in (1, 7, 9, 1000, 4099):
                x = numbers(name, n, self.rng)
                for op in ("sum", "min", "max"):
                    with self.subTest(name=name, n=n, op=op):
                        self.check_integers(name, x, self.scan(name, x, "--op", op), op=op)
                for op in ("sum", "min", "max"):  # (the first: the identity, in the elements' own range)
                    with self.subTest(name=name, n=n, op=op, exclusive=True):
                        self.check_integers(name, x, self.scan(name, x, "--op", op, "--exclusive"), op=op,
                                            exclusive=True)
            x = numbers(name, 5000, self.rng)
            total = np.cumsum(x, dtype=np.dtype(dtype))[-1]
            self.assertEqual(self.reduce(name, x), int(total), name)
            self.assertEqual(self.reduce(name, x, "--op", "min"), int(x.min()), name)

    def test_wider_accumulators(self):
        for name, acc in (("u8", "u32"), ("u8", "i32"), ("u16", "u64"), ("i16", "i64"), ("i16be", "i32"),
                          ("u16be", "u64"), ("i32be", "i64"), ("u8", "f64")):
            x = numbers(name, 3001, self.rng)
            with self.subTest(name=name, acc=acc):
                got = self.scan(name, x, "--acc", acc)
                if acc == "f64":
                    want = np.cumsum(x.astype(np.float64))
                    np.testing.assert_array_equal(np.frombuffer(got, dtype="<f8"), want)
                else:
                    self.check_integers(name, x, got, acc=acc)
        x = numbers("u16be", 2000, self.rng)
        self.assertEqual(self.reduce("u16be", x, "--acc", "u64"), int(x.astype(np.uint64).sum()))

    def test_float_sums_within_bound_and_min_max_in_total_order(self):
        for name in ("f16", "bf16", "f32be", "f64be"):
            dtype, _ = FORMS[name]
            for n in (1, 9, 3001):
                x = numbers(name, n, self.rng)
                exact = np.cumsum(as_float64(x, name))
                scale = np.cumsum(np.abs(as_float64(x, name)))
                for acc in (None, "f64") if name != "f64be" else (None,):
                    with self.subTest(name=name, n=n, acc=acc):
                        got = self.scan(name, x, *(["--acc", acc] if acc else []))
                        raw = np.frombuffer(got, dtype=np.dtype(dtype) if not acc else np.dtype(">f8" if "be" in name else "<f8"))
                        values = as_float64(raw, name) if not acc else raw.astype(np.float64)
                        bound = FLOAT_BOUND[name if not acc else "f64"] if not acc or name != "bf16" else 1e-6
                        if acc:  # f64 sums of exact values: only f64's rounding
                            bound = 1e-12
                        self.assertTrue(np.all(np.abs(values - exact) <= bound * scale + 1e-30),
                                        f"{name}: worst {np.max(np.abs(values - exact) / (scale + 1e-30))}")
                x = numbers(name, 2001, self.rng, specials=True)
                kind_order = ordered(x if name != "bf16" else x.view(">u2" if False else "<u2"), "f" if name != "bf16" else "u")
                if name == "bf16":  # its bits as an f32's top half
                    kind_order = ordered(((x.astype(np.uint32) << 16).view(np.float32)), "f")
                for op, f in (("min", np.minimum), ("max", np.maximum)):
                    with self.subTest(name=name, op=op):
                        got = np.frombuffer(self.scan(name, x, "--op", op), dtype=np.dtype(dtype))
                        if name == "bf16":
                            got_order = ordered(((got.astype(np.uint32) << 16).view(np.float32)), "f")
                        else:
                            got_order = ordered(got, "f")
                        np.testing.assert_array_equal(got_order, f.accumulate(kind_order))

    def test_half_rounding_of_results(self):
        """Sums that f16 cannot hold exactly round to nearest even; beyond 65504, infinity."""
        x = np.array([1.0, 2.0 ** -11, 2.0 ** -11, 60000.0, 10000.0], dtype=np.float16)
        got = np.frombuffer(self.scan("f16", x, "--algo", "reduce-then-scan"), dtype="<f2")
        # 1 + 2^-11 is a tie (to 1.0, even); 1 + 2^-10 is exact; then 60001 rounds to 60000; then inf
        np.testing.assert_array_equal(got, np.array([1.0, 1.0, 1.0 + 2.0 ** -10, 60000.0, np.inf], dtype=np.float16))
        self.assertEqual(self.reduce("f16", np.array([0.1, 0.2], dtype=np.float16)), 0.2998)

    def test_chunks_files_and_streams(self):
        """Inputs larger than one chunk (--mem-limit): from a mapped file and from a stream
        spilled to a scratch file (read back chunk by chunk), with the carry between chunks."""
        for name in ("u16be", "i8", "f16"):
            x = numbers(name, 600011, self.rng)
            if name == "f16":  # small enough that the running sums stay below f16's 65504
                x = (x.astype(np.float64) / 1000).astype(np.float16)
            for stream in (False, True):
                with self.subTest(name=name, stream=stream):
                    got = self.scan(name, x, "--mem-limit", "2M", "--temp-dir", self.dir, stream=stream)
                    if name == "f16":
                        values = np.frombuffer(got, dtype="<f2").astype(np.float64)
                        exact, scale = np.cumsum(x.astype(np.float64)), np.cumsum(np.abs(x.astype(np.float64)))
                        self.assertTrue(np.all(np.abs(values - exact) <= FLOAT_BOUND["f16"] * scale))
                    else:
                        self.check_integers(name, x, got)

    def test_npy_files_say_their_type(self):
        for dtype in ("|u1", "<i2", ">u4", ">i8", "<f2", ">f8"):
            x = numbers({"|u1": "u8", "<i2": "i16", ">u4": "u32be", ">i8": "i64be", "<f2": "f16",
                         ">f8": "f64be"}[dtype], 1000, self.rng).astype(dtype)
            np.save(self.path("in.npy"), x)
            with self.subTest(dtype=dtype):
                self.run_gpusort("scan", "-q", "-f", self.path("in.npy"), self.path("out.npy"))
                y = np.load(self.path("out.npy"))
                self.assertEqual(y.dtype, np.dtype(dtype))
                if x.dtype.kind == "f":
                    self.assertTrue(np.allclose(y.astype(np.float64), np.cumsum(x.astype(np.float64)), rtol=2e-3,
                                                atol=1e-1))
                else:
                    np.testing.assert_array_equal(y, np.cumsum(x, dtype=x.dtype))
                self.run_gpusort("scan", "-q", "-f", "--acc", "f64" if x.dtype.kind == "f" else
                                 "i64" if x.dtype.kind == "i" else "u64", self.path("in.npy"), self.path("out.npy"))
                y = np.load(self.path("out.npy"))
                self.assertEqual(y.dtype.itemsize, 8)
                self.assertEqual(y.dtype.byteorder in (">",), x.dtype.byteorder == ">")
        p = self.run_gpusort("scan", "-f", "--keys", "u16", self.path("in.npy"), self.path("out.npy"), want=2)
        self.assertIn("not u16", p.stderr.decode())

    def test_refusals(self):
        x = numbers("u16", 100, self.rng)
        x.tofile(self.path("in.bin"))
        for args, message in ((["--keys", "bytes:4"], "unknown type 'bytes:4'"),
                              (["--keys", "u16", "--acc", "f32"], "not f32"),
                              (["--keys", "i16", "--acc", "u32"], "does not hold i16"),
                              (["--keys", "f16", "--acc", "i64"], "does not hold f16"),
                              (["--keys", "u32be", "--acc", "u16"], "unknown type 'u16'"),
                              ([], "not a .npy file")):
            with self.subTest(args=args):
                p = self.run_gpusort("scan", "-f", *args, self.path("in.bin"), self.path("out.bin"), want=2)
                self.assertIn(message, p.stderr.decode())
                self.assertEqual(len(p.stderr.decode().strip().splitlines()), 1, p.stderr.decode())
                self.assertFalse(os.path.exists(self.path("out.bin")))


class FamilyForms(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-family-forms-")
        self.rng = np.random.default_rng(13)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def family(self, command, data, *args, want=0):
        with open(self.path("in.bin"), "wb") as f:
            f.write(data)
        p = subprocess.run([GPUSORT, command, "-q", "-f", *args, self.path("in.bin"), self.path("out.bin")],
                           capture_output=True, timeout=300)
        self.assertEqual(p.returncode, want, f"{command} {' '.join(args)}: {p.stderr.decode()}")
        if want:
            return p.stderr.decode()
        with open(self.path("out.bin"), "rb") as f:
            return f.read()

    def test_select_and_partition(self):
        cases = (("u8", "> 200 or < 3", lambda v: (v > 200) | (v < 3)),
                 ("i8", "in [-5, 7) or & 0x3 == 1", lambda v: ((v >= -5) & (v < 7)) | ((v.view("u1") & 3) == 1)),
                 ("u16be", ">= 40000", lambda v: v >= 40000),
                 ("i16", "!= -1 and < 100", lambda v: (v != -1) & (v < 100)),
                 ("f16", "> 0.1 and <= 2.5", lambda v: (v > np.float16(0.1)) & (v <= np.float16(2.5))),
                 ("i32be", "< 0", lambda v: v < 0),
                 ("f64be", "notnan and >= 1e2", lambda v: v >= 100),
                 ("u64be", "& 0xff == 7", lambda v: (v & 0xFF) == 7))
        for name, where, test in cases:
            dtype = np.dtype(FORMS[name][0])
            v = numbers(name, 20011, self.rng)
            if name == "u64be":
                v[::5] = (v[::5] & ~np.uint64(0xFF)) | np.uint64(7)
            if name == "f16":
                v = (v.astype(np.float64) / 50).astype(dtype)
            with self.subTest(name=name, layout="keys"):
                got = np.frombuffer(self.family("select", v.tobytes(), "--where", where, "--keys", name), dtype=dtype)
                np.testing.assert_array_equal(got, v[test(v)])
            # records of 13 bytes, the key at byte 3
            records = self.rng.integers(0, 256, (v.shape[0], 13), dtype=np.uint8)
            records[:, 3:3 + dtype.itemsize] = v.view(np.uint8).reshape(-1, dtype.itemsize)
            mask = test(v)
            with self.subTest(name=name, layout="records"):
                got = self.family("partition", records.tobytes(), "--where", where, "--keys", name, "--record-size",
                                  "13", "--key-offset", "3")
                self.assertEqual(got, np.concatenate([records[mask], records[~mask]]).tobytes())

    def test_unique_rle_and_reduce_by_key_across_chunks(self):
        for name in ("u8", "i16be", "f16", "bf16", "u32be"):
            dtype = np.dtype(FORMS[name][0])
            raw = numbers(name, 300, self.rng, specials=FORMS[name][1] == "f")
            keys = np.repeat(raw, self.rng.integers(1, 4000, raw.shape[0]))  # runs across chunks
            first = np.concatenate([[True], keys.view(f"u{dtype.itemsize}")[1:] != keys.view(f"u{dtype.itemsize}")[:-1]])
            starts = np.flatnonzero(first)
            counts = np.diff(np.append(starts, keys.shape[0]))
            chunked = ["--mem-limit", "2M", "--temp-dir", self.dir]
            with self.subTest(name=name, command="unique"):
                got = self.family("unique", keys.tobytes(), "--keys", name, *chunked)
                self.assertEqual(got, keys[first].tobytes())
            with self.subTest(name=name, command="rle"):
                got = np.frombuffer(self.family("rle", keys.tobytes(), "--keys", name, "--count-type", "u64", *chunked),
                                    dtype=[("k", dtype), ("c", "<u8")])
                self.assertEqual(got["k"].tobytes(), keys[first].tobytes())
                np.testing.assert_array_equal(got["c"], counts)
            values = self.rng.integers(0, 1000, keys.shape[0]).astype("<u4")
            pairs = np.zeros(keys.shape[0], dtype=[("k", dtype), ("v", "<u4")])
            pairs["k"], pairs["v"] = keys, values
            with self.subTest(name=name, command="reduce-by-key"):
                got = np.frombuffer(self.family("reduce-by-key", pairs.tobytes(), "--keys", name, "--values", "u32",
                                                "--acc", "u64", *chunked), dtype=[("k", dtype), ("v", "<u8")])
                self.assertEqual(got["k"].tobytes(), keys[first].tobytes())
                np.testing.assert_array_equal(got["v"], np.add.reduceat(values.astype(np.uint64), starts))

    def test_half_constants_round_once(self):
        """A constant just above the midpoint of two halves rounds up, as the exact value does
        (not down through f32's rounding): 1.0 is below it, the next half is not."""
        h = np.array([1.0, 1.0009766, 0.99951172], dtype=np.float16)
        got = np.frombuffer(self.family("select", h.tobytes(), "--where", ">= 1.000488281250001", "--keys", "f16"),
                            dtype="<f2")
        np.testing.assert_array_equal(got, h[1:2])
        got = np.frombuffer(self.family("select", h.tobytes(), "--where", "== 1.0004", "--keys", "f16"), dtype="<f2")
        np.testing.assert_array_equal(got, h[:1])  # 1.0004 is 1.0 in f16

    def test_refusals(self):
        h = numbers("f16", 100, self.rng)
        self.assertIn("mask tests take keys of other types than f16",
                      self.family("select", h.tobytes(), "--where", "& 1 == 1", "--keys", "f16", want=2))
        self.assertIn("70000 is out of range for u16",
                      self.family("select", h.tobytes(), "--where", "< 70000", "--keys", "u16", want=2))
        self.assertIn("1e6 is out of range for f16",
                      self.family("select", h.tobytes(), "--where", "< 1e6", "--keys", "f16", want=2))
        self.assertIn("unique works on numeric keys",
                      self.family("unique", h.tobytes(), "--key", "0:bytes:2", "--record-size", "4", want=2))
        self.assertIn("reduce-by-key combines values of the six GPU types (u32, i32, f32, u64, i64, f64), not u16",
                      self.family("reduce-by-key", h.tobytes(), "--keys", "u16", "--values", "u16", want=2))
        self.assertFalse(os.path.exists(self.path("out.bin")))


if __name__ == "__main__":
    GPUSORT = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
