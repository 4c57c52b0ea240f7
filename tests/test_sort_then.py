#!/usr/bin/python3
"""gpusort sort --unique and --rle (a step of the look-back family run on the GPU in the sort's
submission) through the command line, against numpy: the six key types, ascending and
descending, at sizes around tiles; pairs and records (first record of each run, in input
order); float specials (-0.0 and +0.0 differ, NaNs by their bits); rle's u32 and u64 counts;
every --algo; sorts submitted in segments; .npy files; empty inputs and pipes; the count line
and --json's runs; usage errors and the in-core limit (one line, no output).

The reference is numpy's stable argsort of the keys in totalOrder (floats mapped to unsigned
integers by their bits), then the first record of each run of equal stored bits.

usage: test_sort_then.py GPUSORT [unittest options]   (Debian's python3, which sees python3-numpy)
"""
import json
import os
import subprocess
import sys
import unittest

import numpy as np

import test_compact as tc
from test_compact import TYPES, Layout, first_difference, keys_with_runs, ordered_bits, run

SIZES = [0, 1, 7, 9, 255, 257, 4095, 4097, 65537]


def sorted_order(keys, descending=False):
    """Positions of the keys in stable sorted order (totalOrder for floats)."""
    ranks = np.unique(ordered_bits(keys), return_inverse=True)[1].reshape(-1)
    return np.argsort(-ranks if descending else ranks, kind="stable")


def sort_then(layout, step, descending=False, count_type="u32"):
    """(bytes, runs) of the layout's records sorted, then unique or rle."""
    order = sorted_order(layout.keys, descending)
    records = Layout.__new__(Layout)  # the sorted file, as a layout the references read
    records.keys, records.records = layout.keys[order], layout.records[order]
    return records.unique() if step == "unique" else records.rle(count_type)


class SortThen(tc.FilesCase):
    PREFIX, SEED = "gpusort-sort-then-", 29

    def check(self, layout, step, extra=(), descending=False, count_type="u32", env=None):
        inp = self.write("in.bin", layout.data)
        out = self.path("out.bin")
        args = ["sort", "--json", "-f", f"--{step}", *layout.args, *extra]
        if descending:
            args.append("--descending")
        if count_type != "u32":
            args += ["--count-type", count_type]
        p = subprocess.run([tc.GPUSORT, *args, inp, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=600, env=env)
        what = f"{layout.label}: gpusort {' '.join(args)}"
        self.assertEqual(p.returncode, 0, f"{what}: {p.stderr.decode()}")
        report = json.loads(p.stdout)
        want, runs = sort_then(layout, step, descending, count_type)
        self.assertEqual(report["runs"], runs, f"{what}: the count")
        self.assertEqual(report["records"], len(layout.keys), what)
        with open(out, "rb") as f:
            got = f.read()
        if got != want:
            width = layout.keys.dtype.itemsize + (8 if count_type == "u64" else 4) if step == "rle" else layout.record_bytes
            self.fail(f"{what}: {first_difference(got, want, width)}")
        self.assertIn("compact", report["stages"], what)
        return report

    def test_every_type_and_size(self):
        """Keys with runs of every length, of each type, around tiles; unique and rle, also
        descending and with u64 counts."""
        for name, dtype in TYPES.items():
            for n in SIZES:
                keys = keys_with_runs(dtype, n, self.rng)
                layout = Layout(name, keys, self.rng)
                self.check(layout, "unique")
                self.check(layout, "rle")
                if n in (257, 65537):
                    self.check(layout, "unique", descending=True)
                    self.check(layout, "rle", descending=True, count_type="u64")

    def test_uniform_and_equal_keys(self):
        """Uniform keys (nearly all distinct) and all-equal keys (one run over many tiles)."""
        for name in ("u32", "u64", "f32"):
            dtype = np.dtype(TYPES[name])
            bits = self.rng.integers(0, 1 << 62, 70001, dtype=np.uint64).astype(f"<u{dtype.itemsize}")
            self.check(Layout(name, bits.view(dtype), self.rng), "unique")
            equal = np.full(70001, 5, dtype=dtype)
            self.check(Layout(name, equal, self.rng), "unique")
            self.check(Layout(name, equal, self.rng), "rle")

    def test_pairs_and_records(self):
        """The first record of each run in input order moves whole: pairs of each value width,
        records with the key at an offset (aligned or not), values alone."""
        for name, value, record in [("u32", "f64", None), ("f32", "u32", None), ("i64", "i32", None),
                                    ("u32", None, (12, 4)), ("f64", None, (24, 8)), ("u32", None, (7, 3)),
                                    ("i32", None, (100, 10))]:
            for n in (1, 257, 4097, 30001):
                keys = keys_with_runs(TYPES[name], n, self.rng)
                layout = Layout(name, keys, self.rng, value=value, record=record)
                self.check(layout, "unique")
                if n == 4097:
                    self.check(layout, "unique", descending=True)

    def test_float_specials(self):
        """-0.0 and +0.0 are two keys; each NaN is equal to the same bits only; infinities."""
        for name in ("f32", "f64"):
            dtype = np.dtype(TYPES[name])
            specials = tc.float_specials(dtype)
            keys = np.concatenate([np.repeat(specials, 37), keys_with_runs(dtype, 3000, self.rng)])
            self.rng.shuffle(keys)
            layout = Layout(name, keys, self.rng, value="u32")
            self.check(layout, "unique")
            self.check(Layout(name, keys, self.rng), "rle")

    def test_algorithms_and_segments(self):
        """Every --algo sorts before the step; a sort submitted in segments of 1000 keys."""
        keys = keys_with_runs("<u4", 9001, self.rng)
        layout = Layout("u32", keys, self.rng, value="u32")
        for algo in ("onesweep", "reduce-then-scan", "bitonic"):
            self.check(layout, "unique", extra=["--algo", algo])
        env = dict(os.environ, GPUSORT_SUBMIT_KEYS="1000")
        self.check(layout, "unique", env=env)
        self.check(Layout("u32", keys, self.rng), "rle", env=env)

    def test_npy(self):
        """A .npy input gives a .npy output: its dtype for unique, (key, count) for rle."""
        keys = keys_with_runs("<i8", 5000, self.rng)
        inp = self.path("in.npy")
        np.save(inp, keys)
        out = self.path("out.npy")
        p = run(["sort", "-q", "-f", "--unique", inp, out])
        self.assertEqual(p.returncode, 0, p.stderr)
        np.testing.assert_array_equal(np.load(out), np.unique(keys))
        p = run(["sort", "-q", "-f", "--rle", "--count-type", "u64", inp, out])
        self.assertEqual(p.returncode, 0, p.stderr)
        got = np.load(out)
        distinct, counts = np.unique(keys, return_counts=True)
        self.assertEqual(got.dtype.names, ("key", "count"))
        self.assertEqual(got.dtype["count"], np.dtype("<u8"))
        np.testing.assert_array_equal(got["key"], distinct)
        np.testing.assert_array_equal(got["count"], counts)

    def test_empty_input_and_pipes(self):
        """No records: an empty output, 0 runs; stdin to stdout with the report on stderr."""
        self.check(Layout("u32", np.zeros(0, dtype="<u4"), self.rng), "unique")
        self.check(Layout("f64", np.zeros(0, dtype="<f8"), self.rng), "rle")
        keys = keys_with_runs("<u4", 4097, self.rng)
        p = run(["sort", "--json", "--unique", "--keys", "u32"], data=keys.tobytes())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, np.unique(keys).tobytes())
        report = json.loads(p.stderr)
        self.assertEqual((report["command"], report["records"], report["runs"]), ("sort", 4097, len(np.unique(keys))))
        # rle of keys alone to a stream (its records are assembled on the host, unlike the keys'),
        # and to /dev/null
        layout = Layout("u32", keys, self.rng)
        for count_type in ("u32", "u64"):
            p = run(["sort", "--rle", "--count-type", count_type, "--keys", "u32"], data=keys.tobytes())
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, sort_then(layout, "rle", count_type=count_type)[0], count_type)
        inp = self.write("in.bin", keys.tobytes())
        p = run(["sort", "-q", "--rle", "--keys", "u32", inp, "/dev/null"])
        self.assertEqual((p.returncode, p.stderr), (0, b""))

    def test_report(self):
        """The count line before the checksum, and a row for the step."""
        keys = keys_with_runs("<u4", 4097, self.rng)
        inp = self.write("in.bin", keys.tobytes())
        out = self.path("out.bin")
        p = run(["sort", "-f", "--rle", "--keys", "u32", inp, out])
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 0, err)
        lines = err.strip("\n").split("\n")
        self.assertEqual(lines[-2], f"gpusort: {len(np.unique(keys))} runs in 4097 records", err)
        self.assertTrue(any(line.lstrip().startswith("rle ") for line in lines), err)

    def assert_refused(self, args, code, *fragments, n=1000):
        inp = self.write("in.bin", np.arange(n, dtype="<u4").tobytes())
        out = self.path("refused.bin")
        p = run(["sort", *args, inp, out])
        err = p.stderr.decode()
        self.assertEqual(p.returncode, code, f"{args}: {err}")
        self.assertEqual(err.count("\n"), 1, f"{args}: one line: {err!r}")
        for fragment in fragments:
            self.assertIn(fragment, err, args)
        self.assertFalse(os.path.exists(out), f"{args}: an output was left")
        self.assertEqual(sorted(os.listdir(self.dir)), ["in.bin"], f"{args}: a temporary file was left")

    def test_refusals(self):
        """Combinations that do not go together are usage errors (2); beyond the in-core limit,
        a runtime error (1); neither leaves an output."""
        self.assert_refused(["--keys", "u32", "--unique", "--rle"], 2, "--unique and --rle")
        self.assert_refused(["--keys", "u32", "--count-type", "u64"], 2, "--count-type needs --rle")
        self.assert_refused(["--keys", "u32", "--rle", "--count-type", "u16"], 2, "u32 or u64")
        self.assert_refused(["--keys", "u32", "--unique", "--argsort"], 2, "--argsort")
        self.assert_refused(["--keys", "u32", "--unique", "--verify"], 2, "verif")
        self.assert_refused(["--keys", "u32", "--unique", "--bits", "0:8"], 2, "bit range")
        self.assert_refused(["--keys", "u16", "--values", "u16", "--unique"], 2, "u16")
        self.assert_refused(["--keys", "u32", "--values", "u32", "--rle"], 2, "keys alone")
        self.assert_refused(["--keys", "bytes:4", "--unique"], 2, "bytes:4")
        self.assert_refused(["--keys", "u32", "--unique", "--mem-limit", "1M"], 1, "in core only", n=1 << 20)


if __name__ == "__main__":
    tc.GPUSORT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
