#!/usr/bin/env python3
"""Every sort algorithm (--algo auto, onesweep, reduce-then-scan, bitonic) gives the same
bytes, and those are numpy's stable sort of the input: keys of each type in both directions
with specials, pairs, records, argsort, a bit range, keyed forms, .npy files, sizes around
tiles and bitonic blocks, out of core; plus the option's errors and its -v line.

usage: test_algos.py GPUSORT   (Debian's python3, which sees python3-numpy)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

GPUSORT = None
ALGOS = ["auto", "onesweep", "reduce-then-scan", "bitonic"]
SIZES = [0, 1, 9, 1025, 70001]  # one key, a subgroup, past a bitonic block, many tiles and blocks


def run(args, data=None):
    return subprocess.run([GPUSORT] + args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=600)


def ordered_u64(keys):
    """Keys of any numeric dtype as unsigned integers in the sort's order (floats by totalOrder)."""
    keys = np.asarray(keys)
    if keys.dtype.kind == "u":
        return keys.astype(np.uint64)
    if keys.dtype.kind == "i":
        bits = keys.dtype.itemsize * 8
        return (keys.astype(np.int64).view(np.uint64) + np.uint64(1 << (bits - 1))) & np.uint64((1 << bits) - 1) \
            if bits < 64 else keys.view(np.uint64) ^ np.uint64(1 << 63)
    raw = keys.view(np.uint32 if keys.dtype.itemsize == 4 else np.uint64).astype(np.uint64)
    sign = np.uint64(1 << (keys.dtype.itemsize * 8 - 1))
    full = np.uint64((1 << (keys.dtype.itemsize * 8)) - 1)
    return np.where(raw & sign, ~raw & full, raw | sign)


def reference_order(keys, descending=False, bits=None):
    o = ordered_u64(keys)
    if descending:
        o = ~o & np.uint64((1 << (np.asarray(keys).dtype.itemsize * 8)) - 1)
    if bits:
        lo, hi = bits
        o = (o >> np.uint64(lo)) & np.uint64((1 << (hi - lo)) - 1)
    return np.argsort(o, kind="stable")


def keys_of(dtype, n, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        k = rng.standard_normal(n).astype(dtype)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40], dtype=dtype)
        k[: min(n, len(specials))] = specials[: min(n, len(specials))]
        return k
    info = np.iinfo(dtype)
    k = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    if n > 10:
        k[n // 2:] = k[: n - n // 2] % 7  # runs of equal keys: stability shows
    return k


class Algorithms(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-algos-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def every_algo(self, args, data, label):
        """The outputs of every algorithm for the same arguments: checked equal, returned once."""
        with open(self.path("in"), "wb") as f:
            f.write(data)
        outputs = {}
        for algo in ALGOS:
            p = run(["-q", "-f", "--algo", algo] + args + [self.path("in"), self.path("out")])
            self.assertEqual(p.returncode, 0, f"{label} --algo {algo}: {p.stderr.decode()}")
            with open(self.path("out"), "rb") as f:
                outputs[algo] = f.read()
        for algo in ALGOS[1:]:
            self.assertTrue(outputs[algo] == outputs["onesweep"], f"{label}: --algo {algo} differs from onesweep")
        return outputs["onesweep"]

    def test_keys_of_every_type_both_directions(self):
        rng = np.random.default_rng(11)
        for name, dtype in [("u32", np.uint32), ("i32", np.int32), ("f32", np.float32), ("u64", np.uint64),
                            ("i64", np.int64), ("f64", np.float64)]:
            for n in SIZES:
                keys = keys_of(dtype, n, rng)
                for descending in (False, True) if n == 1025 else (False,):
                    label = f"{name} n={n}{' descending' if descending else ''}"
                    out = self.every_algo(["--keys", name] + (["--descending"] if descending else []),
                                          keys.tobytes(), label)
                    want = keys[reference_order(keys, descending)]
                    self.assertEqual(out, want.tobytes(), label)

    def test_pairs_records_and_argsort(self):
        rng = np.random.default_rng(12)
        for n in [1, 1025, 70001]:
            keys = keys_of(np.uint32, n, rng)
            order = reference_order(keys)
            values = rng.integers(0, 2**63, size=n, dtype=np.uint64)
            pairs = np.empty(n, dtype=[("k", "<u4"), ("v", "<u8")])
            pairs["k"], pairs["v"] = keys, values
            packed = np.frombuffer(b"".join(keys[i:i + 1].tobytes() + values[i:i + 1].tobytes() for i in range(n)),
                                   dtype=np.uint8) if n < 2000 else None
            data = np.zeros((n, 12), dtype=np.uint8)
            data[:, :4] = keys.view(np.uint8).reshape(n, 4)
            data[:, 4:] = values.view(np.uint8).reshape(n, 8)
            if packed is not None:
                self.assertEqual(packed.tobytes(), data.tobytes())
            out = self.every_algo(["--keys", "u32", "--values", "u64"], data.tobytes(), f"pairs n={n}")
            self.assertEqual(out, data[order].tobytes(), f"pairs n={n}")
            records = rng.integers(0, 256, size=(n, 20), dtype=np.uint8)
            records[:, 4:8] = keys.view(np.uint8).reshape(n, 4)
            out = self.every_algo(["--keys", "u32", "--record-size", "20", "--key-offset", "4"], records.tobytes(),
                                  f"records n={n}")
            self.assertEqual(out, records[order].tobytes(), f"records n={n}")
            out = self.every_algo(["--keys", "u32", "--argsort"], keys.tobytes(), f"argsort n={n}")
            self.assertEqual(out, order.astype(np.uint32).tobytes(), f"argsort n={n}")
            out = self.every_algo(["--keys", "u32", "--bits", "4:20"], keys.tobytes(), f"bits n={n}")
            self.assertEqual(out, keys[reference_order(keys, bits=(4, 20))].tobytes(), f"bits n={n}")

    def test_keyed_forms_and_npy(self):
        rng = np.random.default_rng(13)
        for n in [9, 5000]:
            records = rng.integers(0, 4, size=(n, 16), dtype=np.uint8)  # few distinct 10-byte keys
            order = np.lexsort(records[:, 9::-1].T)
            out = self.every_algo(["--keys", "bytes:10", "--record-size", "16"], records.tobytes(), f"bytes:10 n={n}")
            self.assertEqual(out, records[order].tobytes(), f"bytes:10 n={n}")
            a = keys_of(np.float64, n, rng)
            with open(self.path("a.npy"), "wb") as f:
                np.save(f, a)
            with open(self.path("a.npy"), "rb") as f:
                out = self.every_algo([], f.read(), f".npy f64 n={n}")
            with open(self.path("sorted.npy"), "wb") as f:
                f.write(out)
            got = np.load(self.path("sorted.npy"))
            self.assertEqual(got.tobytes(), a[reference_order(a)].tobytes(), f".npy n={n}")

    def test_out_of_core(self):
        rng = np.random.default_rng(14)
        keys = keys_of(np.int64, 400000, rng)  # 3.1 MiB beyond a 1 MiB budget: partitioned, bins sorted
        args = ["--keys", "i64", "--mem-limit", "1M", "--temp-dir", self.dir]
        out = self.every_algo(args, keys.tobytes(), "out of core")
        self.assertEqual(out, keys[reference_order(keys)].tobytes(), "out of core")

    def test_just_past_whole_segments(self):
        # Sorts are cut into segments of whole tiles below the device's submission bound
        # (lavapipe: 2^22 keys): a size between the two once found the segmented pipelines unbuilt.
        rng = np.random.default_rng(15)
        keys = rng.integers(0, 2**32, size=(1 << 22) - 1000, dtype=np.uint32)
        with open(self.path("in"), "wb") as f:
            f.write(keys.tobytes())
        p = run(["-q", "-f", "--keys", "u32", "--algo", "onesweep", self.path("in"), self.path("out")])
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        with open(self.path("out"), "rb") as f:
            self.assertEqual(f.read(), np.sort(keys).tobytes())

    def test_verbose_names_the_algorithm(self):
        with open(self.path("in"), "wb") as f:
            f.write(np.arange(100000, 0, -1, dtype=np.uint32).tobytes())
        for algo in ALGOS[1:]:
            p = run(["-v", "-f", "--keys", "u32", "--algo", algo, self.path("in"), self.path("out")])
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            self.assertIn(f"algorithm: {algo} (--algo)", p.stderr.decode())
        p = run(["-v", "-f", "--keys", "u32", self.path("in"), self.path("out")])
        self.assertRegex(p.stderr.decode(), r"algorithm: (onesweep|reduce-then-scan|bitonic) \(auto")

    def test_usage_errors(self):
        with open(self.path("in"), "wb") as f:
            f.write(bytes(64))
        for bad, fragment in [("bitonik", "did you mean 'bitonic'"), ("quick", "takes auto, onesweep"),
                              ("lookback", "takes auto, onesweep")]:
            p = run(["--keys", "u32", "--algo", bad, self.path("in"), self.path("out")])
            err = p.stderr.decode()
            self.assertEqual(p.returncode, 2, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(fragment, err)
            self.assertFalse(os.path.exists(self.path("out")))
        p = run(["bench", "--algo", "nope"])
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    GPUSORT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
