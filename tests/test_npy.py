#!/usr/bin/python3
"""NumPy .npy files through the command line, against numpy itself: every supported dtype
sorted (without --keys) into a .npy file numpy loads, equal to numpy's stable sort; argsort
into int64 indices equal to numpy.argsort(kind="stable"); structured arrays by named fields
(--key FIELD[:desc]) against numpy.lexsort; check, scan and reduce of .npy inputs; format
versions 2.0 and 3.0; and every malformed or unsupported file refused with exit 2 and a
message naming the problem.

usage: test_npy.py GPUSORT [unittest options]
"""
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

GPUSORT = None


def run(*args, stdin=None):
    return subprocess.run([GPUSORT, *args], capture_output=True, timeout=300, input=stdin)


class Npy(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-npy-")
        self.rng = np.random.default_rng(3)

    def tearDown(self):
        for name in os.listdir(self.dir):
            os.remove(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def ok(self, *args):
        if args[0] in ("check", "scan", "reduce"):  # -q after the command's name
            args = (args[0], "-q", *args[1:])
        else:
            args = ("-q", *args)
        p = run(*args)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        return p

    def refused(self, message, *args, code=2):
        p = run(*args)
        self.assertEqual(p.returncode, code, p.stderr.decode())
        err = p.stderr.decode()
        self.assertIn(message, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def values(self, dtype, n):
        dt = np.dtype(dtype)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return self.rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True).astype(dt)
        if dt.kind == "b":
            return self.rng.integers(0, 2, n).astype(bool)
        if dt.kind == "f":
            return (self.rng.standard_normal(n) * 100).astype(dt)  # no NaN, no -0.0: numpy's order is totalOrder
        return self.rng.integers(0, 3, (n, dt.itemsize), dtype=np.uint8).view(dt).reshape(n)  # S and V: ties

    def test_every_dtype_sorts_and_argsorts(self):
        dtypes = ["u1", "i1", "<u2", "<i2", "<f2", "<u4", "<i4", "<f4", "<u8", "<i8", "<f8", ">u2", ">i2", ">u4",
                  ">i4", ">f4", ">u8", ">i8", ">f8", "?", "S7", "V3"]
        for dtype in dtypes:
            for n in (0, 1, 2000):
                a = self.values(dtype, n)
                np.save(self.path("in.npy"), a)
                with self.subTest(dtype=dtype, n=n):
                    self.ok("-f", self.path("in.npy"), self.path("out.npy"))
                    out = np.load(self.path("out.npy"))
                    self.assertEqual(out.dtype, a.dtype)
                    if a.dtype.kind == "V":  # numpy does not sort raw bytes: compare as bytes strings
                        expected = a[np.argsort(a.view(f"S{a.dtype.itemsize}"), kind="stable")]
                    else:
                        expected = np.sort(a, kind="stable")
                    self.assertEqual(out.tobytes(), expected.tobytes())
                    self.ok("-f", "--argsort", self.path("in.npy"), self.path("idx.npy"))
                    idx = np.load(self.path("idx.npy"))
                    self.assertEqual(idx.dtype, np.dtype("<i8"))
                    if a.dtype.kind != "V":
                        np.testing.assert_array_equal(idx, np.argsort(a, kind="stable"))
                    self.ok("check", self.path("out.npy"))

    def test_descending_and_u32_indices(self):
        a = self.values("<i4", 5000) % 50
        np.save(self.path("in.npy"), a)
        self.ok("-f", "--descending", self.path("in.npy"), self.path("out.npy"))
        np.testing.assert_array_equal(np.load(self.path("out.npy")), np.sort(a)[::-1])
        self.ok("-f", "--argsort", "--index-type", "u32", self.path("in.npy"), self.path("idx.npy"))
        idx = np.load(self.path("idx.npy"))
        self.assertEqual(idx.dtype, np.dtype("<u4"))
        np.testing.assert_array_equal(idx, np.argsort(a, kind="stable"))

    def test_structured_by_named_fields(self):
        n = 4000
        dt = np.dtype([("id", "<u4"), ("price", ">f8"), ("name", "S5"), ("flag", "?"), ("z", "<c8")])
        a = np.zeros(n, dtype=dt)
        a["id"] = np.arange(n)
        a["price"] = self.rng.integers(0, 9, n)
        a["name"] = [b"k%d" % (k % 7) for k in self.rng.integers(0, 100, n)]
        a["flag"] = self.rng.integers(0, 2, n)
        np.save(self.path("in.npy"), a)
        self.ok("-f", "--key", "price:desc", "--key", "name", self.path("in.npy"), self.path("out.npy"))
        out = np.load(self.path("out.npy"))
        self.assertEqual(out.dtype, dt)
        order = np.lexsort((a["name"], -a["price"]))  # the last key is the primary one
        self.assertEqual(out.tobytes(), a[order].tobytes())
        self.ok("check", "--key", "price:desc", "--key", "name", self.path("out.npy"))
        self.assertEqual(run("check", "--key", "price", self.path("out.npy")).returncode, 3)
        self.ok("-f", "--argsort", "--key", "flag", "--key", "id:desc", self.path("in.npy"), self.path("idx.npy"))
        np.testing.assert_array_equal(np.load(self.path("idx.npy")), np.lexsort((-a["id"].astype(np.int64), a["flag"])))
        # an aligned dtype: its padding is a field named '' in the header
        aligned = np.zeros(100, dtype=np.dtype([("a", "u1"), ("b", "<u4")], align=True))
        aligned["b"] = self.rng.integers(0, 1000, 100)
        np.save(self.path("al.npy"), aligned)
        self.ok("-f", "--key", "b", self.path("al.npy"), self.path("al_out.npy"))
        np.testing.assert_array_equal(np.load(self.path("al_out.npy"))["b"], np.sort(aligned["b"]))

    def test_arrays_of_more_dimensions_are_flattened(self):
        """As numpy's functions with axis=None: the elements in C order, written 1-D."""
        for shape in [(40, 50), (3, 4, 5), (), (0, 5)]:
            a = self.values("<i4", int(np.prod(shape))).reshape(shape)
            np.save(self.path("in.npy"), a)
            with self.subTest(shape=shape):
                self.ok("-f", self.path("in.npy"), self.path("out.npy"))
                np.testing.assert_array_equal(np.load(self.path("out.npy")), np.sort(a, axis=None, kind="stable"))
                self.ok("-f", "--argsort", self.path("in.npy"), self.path("idx.npy"))
                np.testing.assert_array_equal(np.load(self.path("idx.npy")), np.argsort(a, axis=None, kind="stable"))
                self.ok("scan", "-f", "--acc", "i64", self.path("in.npy"), self.path("sum.npy"))
                np.testing.assert_array_equal(np.load(self.path("sum.npy")), np.cumsum(a, axis=None, dtype=np.int64))

    def test_scan_and_reduce(self):
        a = self.values("<u4", 10000)
        np.save(self.path("in.npy"), a)
        self.ok("scan", "-f", "--keys", "u32", "--acc", "u64", self.path("in.npy"), self.path("sum.npy"))
        out = np.load(self.path("sum.npy"))
        self.assertEqual(out.dtype, np.dtype("<u8"))
        np.testing.assert_array_equal(out, np.cumsum(a, dtype=np.uint64))
        p = self.ok("reduce", "--keys", "u32", "--acc", "u64", "--op", "max", self.path("in.npy"))
        self.assertEqual(int(p.stdout), int(a.max()))
        self.refused("its .npy elements are '<u4', not i32", "reduce", "--keys", "i32", self.path("in.npy"))

    def test_beyond_the_budget(self):
        """Out of core: the header skipped on the way in and written first on the way out."""
        a = self.values("<u4", 1 << 21)
        np.save(self.path("in.npy"), a)
        self.ok("-f", "--mem-limit", "8M", self.path("in.npy"), self.path("out.npy"))
        np.testing.assert_array_equal(np.load(self.path("out.npy")), np.sort(a))
        self.ok("-f", "--mem-limit", "8M", "--argsort", self.path("in.npy"), self.path("idx.npy"))
        np.testing.assert_array_equal(np.load(self.path("idx.npy")), np.argsort(a, kind="stable"))

    def test_versions_2_and_3(self):
        a = self.values("<i2", 3000)
        for version in ((2, 0), (3, 0)):
            with open(self.path("v.npy"), "wb") as f:
                np.lib.format.write_array(f, a, version=version)
            with self.subTest(version=version):
                self.ok("-f", self.path("v.npy"), self.path("out.npy"))
                np.testing.assert_array_equal(np.load(self.path("out.npy")), np.sort(a))

    def write_header(self, name, header, data=b"", version=1):
        body = header.encode("latin1")
        body += b" " * ((64 - (10 + len(body) + 1) % 64) % 64) + b"\n"
        prefix = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H", len(body))
        with open(self.path(name), "wb") as f:
            f.write(prefix + body + data)
        return self.path(name)

    def test_damaged_headers_never_crash(self):
        """Random damage to the header of a valid file (bytes replaced, inserted or cut): each
        run ends with a status (0, 2 or 3), never a signal or a hang."""
        np.save(self.path("good.npy"), np.array([3, 1, 2], dtype=[("a", "<u4"), ("b", "S3")]))
        with open(self.path("good.npy"), "rb") as f:
            good = f.read()
        rng = np.random.default_rng(11)
        alphabet = b"{}()[]',: 0123456789<>|uifSVObc'descrshapefortran_orderTrueFalse\x00\xff"
        for case in range(300):
            data = bytearray(good)
            for _ in range(int(rng.integers(1, 4))):
                at = int(rng.integers(0, 80))
                what = int(rng.integers(0, 3))
                byte = alphabet[int(rng.integers(0, len(alphabet)))]
                if what == 0:
                    data[at] = byte
                elif what == 1:
                    data.insert(at, byte)
                else:
                    del data[at]
            with open(self.path("bad.npy"), "wb") as f:
                f.write(bytes(data))
            p = run("check", "-q", "--key", "a", self.path("bad.npy"))
            self.assertIn(p.returncode, (0, 2, 3), f"case {case}: {bytes(data[:80])!r}: {p.stderr!r}")

    def test_refused_files(self):
        out = self.path("never.npy")
        np.save(self.path("obj.npy"), np.array([1, "a"], dtype=object), allow_pickle=True)
        self.refused("object arrays", "-f", self.path("obj.npy"), out)
        np.save(self.path("c.npy"), np.zeros(4, np.complex64))
        self.refused("'<c8' is not a type gpusort sorts", "-f", self.path("c.npy"), out)
        np.save(self.path("f2d.npy"), np.asfortranarray(np.zeros((3, 4), np.uint32)))
        self.refused("Fortran-ordered array of 2 dimensions", "-f", self.path("f2d.npy"), out)
        short = self.write_header("short.npy", "{'descr': '<u4', 'fortran_order': False, 'shape': (10,), }", bytes(36))
        self.refused("the .npy header says 10 elements of 4 bytes, but the file holds 36 bytes", "-f", short, out)
        bad = self.write_header("bad.npy", "{'descr': '<u4', 'fortran_order': Maybe, 'shape': (1,), }", bytes(4))
        self.refused("malformed .npy header", "-f", bad, out)
        v9 = self.write_header("v9.npy", "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", bytes(4), 9)
        self.refused("version 9.0 is not supported", "-f", v9, out)
        # (found by fuzzing) a NUL in a field name, which the output's header would have cut short;
        # a shape that the header leaves open, whose digits would have been read from the data
        nul = self.write_header("nul.npy", "{'descr': [('a\x00b', '<u4')], 'fortran_order': False, 'shape': (1,), }",
                                bytes(4))
        self.refused("malformed .npy header", "-f", nul, out)
        # (found by fuzzing) a key given twice, whose second descr added its fields to the first's
        twice = self.write_header("twice.npy", "{'descr': [('a', '<u4')], 'descr': [('b', '<u4')], "
                                  "'fortran_order': False, 'shape': (1,), }", bytes(8))
        self.refused("descr given twice", "-f", twice, out)
        # (found by fuzzing) an empty type string, once taken or not by what lay past its end
        for descr in ("''", "[('v', ''), ('w', '<f4')]"):
            empty = self.write_header("empty.npy", "{'descr': %s, 'fortran_order': False, 'shape': (0,), }" % descr, b"")
            self.refused("a type string without its byte order", "-f", empty, out)
        with open(self.path("open.npy"), "wb") as f:
            body = b"{'descr': '<u4', 'fortran_order': False, 'shape': ("
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body + b"12,), }" + bytes(48))
        self.refused("malformed .npy header", "-f", self.path("open.npy"), out)
        with open(self.path("trunc.npy"), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00\xff\x00{'descr'")
        self.refused("runs past the end of the file", "-f", self.path("trunc.npy"), out)
        # layouts that do not fit the file
        np.save(self.path("u4.npy"), np.arange(8, dtype=np.uint32))
        self.refused("its .npy elements are '<u4', not f32 keys", "-f", "--keys", "f32", self.path("u4.npy"), out)
        self.refused("leave out --values", "-f", "--keys", "u16", "--values", "u16", self.path("u4.npy"), out)
        self.refused("has no fields to name", "-f", "--key", "a", self.path("u4.npy"), out)
        s = np.zeros(4, dtype=[("a", "<u4"), ("m", "<u2", (3,))])
        np.save(self.path("s.npy"), s)
        self.refused("name the key's field (--key FIELD; fields: a (<u4), m (<u2))", "-f", self.path("s.npy"), out)
        self.refused("has no field 'x' (fields: a (<u4), m (<u2))", "-f", "--key", "x", self.path("s.npy"), out)
        self.refused("field 'm' of type '<u2' cannot be a key", "-f", "--key", "m", self.path("s.npy"), out)
        # not a .npy file and no --keys; a .npy stream cut short, or of another type
        with open(self.path("raw.bin"), "wb") as f:
            f.write(bytes(16))
        self.refused("is not a .npy file: say what it holds (--keys TYPE)", "-f", self.path("raw.bin"), out)
        with open(self.path("u4.npy"), "rb") as f:
            whole = f.read()
        for args, data, message in (([], whole[:-4], b"the .npy header says 8 elements of 4 bytes, but the stream "
                                                     b"holds 28 bytes"),
                                    (["--keys", "f32"], whole, b"its .npy elements are '<u4', not f32 keys"),
                                    ([], whole[:40], b"runs past the end")):
            p = run(*args, "-f", "-", out, stdin=data)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(message, p.stderr)
            self.assertFalse(os.path.exists(out))
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith(".")), [])


class NpyStreams(unittest.TestCase):
    """.npy files on standard input: a pipe (its header read ahead, then the data as any stream,
    also spilled past the budget) or a file; the output a .npy file or a .npy stream."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-npy-streams-")
        self.rng = np.random.default_rng(5)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_commands_read_npy_from_stdin(self):
        a = self.rng.integers(-1000, 1000, 50001).astype("<i4")
        np.save(self.path("a.npy"), a)
        with open(self.path("a.npy"), "rb") as f:
            data = f.read()
        sort_out = self.path("sorted.npy")
        for args, want in ((["-f", "-", sort_out], np.sort(a, kind="stable")),
                           (["scan", "-f", "-", sort_out], np.cumsum(a, dtype="<i4")),
                           (["unique", "-f", "-", sort_out], a[np.concatenate([[True], a[1:] != a[:-1]])])):
            with self.subTest(args=args):
                p = run(*(args[:1] + ["-q"] + args[1:] if args[0] in ("scan", "unique") else ["-q"] + args), stdin=data)
                self.assertEqual(p.returncode, 0, p.stderr)
                got = np.load(sort_out)
                self.assertEqual(got.dtype, want.dtype)
                np.testing.assert_array_equal(got, want)
        big = self.rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype("<u4")
        np.save(self.path("big.npy"), big)
        with open(self.path("big.npy"), "rb") as f:  # past the budget: spilled, sorted out of core
            p = run("-q", "--json", "-f", "--mem-limit", "2M", "--temp-dir", self.dir, "-", sort_out, stdin=f.read())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("buckets", json.loads(p.stdout)["stages"])
        np.testing.assert_array_equal(np.load(sort_out), np.sort(big))
        p = run("-q", "--argsort", "-", "-", stdin=data)  # to a .npy stream
        self.assertEqual(p.returncode, 0, p.stderr)
        np.testing.assert_array_equal(np.load(io.BytesIO(p.stdout)), np.argsort(a, kind="stable"))
        p = run("reduce", "--op", "max", "-", stdin=data)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, str(a.max()).encode()))
        with open(self.path("a.npy"), "rb") as f:  # a file as stdin
            p = subprocess.run([GPUSORT, "-q", "-f", "-", sort_out], stdin=f, capture_output=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        np.testing.assert_array_equal(np.load(sort_out), np.sort(a))
        s = np.zeros(3000, dtype=[("k", "<u2"), ("v", "<f4")])
        s["k"] = self.rng.integers(0, 50, 3000)
        s["v"] = np.arange(3000)
        np.save(self.path("s.npy"), s)
        with open(self.path("s.npy"), "rb") as f:
            p = run("-q", "--key", "k:desc", "-f", "-", sort_out, stdin=f.read())
        self.assertEqual(p.returncode, 0, p.stderr)
        np.testing.assert_array_equal(np.load(sort_out), s[np.argsort(-s["k"].astype(np.int64), kind="stable")])


if __name__ == "__main__":
    GPUSORT = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
