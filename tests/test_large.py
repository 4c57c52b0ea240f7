#!/usr/bin/python3
"""Files of any size: out-of-core sorts (--mem-limit), streams spilled to disk, scans and
reductions in chunks, files larger than one storage binding, and what is left behind
(nothing) after success, failure and signals. numpy's stable argsort and cumsum are the
references.

usage: test_large.py GPUSORT [unittest options]
"""
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

GPUSORT = None
WIDTH = {"u32": 4, "i32": 4, "f32": 4, "u64": 8, "i64": 8, "f64": 8}
UINT = {4: np.uint32, 8: np.uint64}
LIMIT = "8M"  # GPU and staging memory of the out-of-core runs


def run(args, data=None, env=None, timeout=600, stdout=subprocess.PIPE, preexec_fn=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([GPUSORT] + args, input=data, stdout=stdout, stderr=subprocess.PIPE, env=full_env,
                          timeout=timeout, preexec_fn=preexec_fn)


def sort_keys(keys, t, descending=False, bits=None):
    """The documented order as unsigned integers: integers numerically, floats by IEEE 754
    totalOrder, complemented for descending, then the bit range."""
    w = WIDTH[t] * 8
    u = keys.view(UINT[WIDTH[t]]).astype(np.uint64)
    full = np.uint64((1 << w) - 1)
    sign = np.uint64(1 << (w - 1))
    if t[0] == "i":
        o = u ^ sign
    elif t[0] == "f":
        o = np.where(u & sign != 0, ~u & full, u | sign)
    else:
        o = u
    if descending:
        o = ~o & full
    if bits:
        lo, hi = bits
        o = (o >> np.uint64(lo)) & np.uint64((1 << (hi - lo)) - 1)
    return o


def key_column(data, t, record, offset):
    n = len(data) // record
    rows = np.frombuffer(data, dtype=np.uint8).reshape(n, record)
    return np.ascontiguousarray(rows[:, offset:offset + WIDTH[t]]).view(UINT[WIDTH[t]]).reshape(n)


def reference_order(data, t, record, offset, descending=False, bits=None):
    return np.argsort(sort_keys(key_column(data, t, record, offset), t, descending, bits), kind="stable")


def reference_records(data, record, order):
    rows = np.frombuffer(data, dtype=np.uint8).reshape(len(data) // record, record)
    return rows[order].tobytes()


class LargeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-large-")
        self.scratch = os.path.join(self.dir, "scratch")
        os.mkdir(self.scratch)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def gen(self, name, *args):
        p = run(["gen", "-q", "-f", *args, self.path(name)])
        self.assertEqual(p.returncode, 0, p.stderr)
        return self.read(name)

    def assert_nothing_left(self):
        left = [f for f in os.listdir(self.dir) if ".gpusort-" in f] + os.listdir(self.scratch)
        self.assertEqual(left, [], "temporary files left behind")

    def sort(self, args, out="o", expect_bins=True, limit=LIMIT, **kw):
        p = run(["-f", "--mem-limit", limit, "--temp-dir", self.scratch] + args + [self.path(out)], **kw)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        if expect_bins:  # the report's out-of-core rows: it did not fit, and was sorted anyway
            self.assertIn("partition", p.stderr.decode())
        self.assert_nothing_left()
        return p


class OutOfCore(LargeTest):
    def test_every_key_type_both_directions(self):
        for t, n in [("u32", 3_000_001), ("i32", 2_500_000), ("f32", 2_000_003), ("u64", 1_500_001),
                     ("i64", 1_200_000), ("f64", 1_300_017)]:
            data = self.gen("in.bin", "--keys", t, "-n", str(n), "--dist", "special" if t[0] == "f" else "uniform")
            for desc in [False, True]:
                self.sort(["--keys", t, "--verify"] + (["--descending"] if desc else []) + [self.path("in.bin")])
                want = reference_records(data, WIDTH[t], reference_order(data, t, WIDTH[t], 0, desc))
                self.assertTrue(self.read("o") == want, f"{t} descending={desc}")

    def test_distributions(self):
        """Skewed keys: one bucket holding most records (split again on the next bits), every
        key equal (in order already), few distinct keys, sorted and reversed input."""
        for dist in ["equal", "few:3", "lowbits:8", "highbits:8", "lowbits:20", "sorted", "reversed", "entropy:4"]:
            data = self.gen("in.bin", "--keys", "u32", "-n", "2500000", "--dist", dist, "--seed", "3")
            self.sort(["--keys", "u32", self.path("in.bin")], expect_bins=dist not in ["equal"])
            want = reference_records(data, 4, reference_order(data, "u32", 4, 0))
            self.assertTrue(self.read("o") == want, dist)

    def test_pairs_records_and_argsort(self):
        # records gathered on the host take GPU memory for their keys and indices alone: a
        # smaller limit sends them out of core
        cases = [
            (["--keys", "u32", "--values", "u32"], "u32", 8, 0, "uniform", LIMIT),
            (["--keys", "f64", "--values", "u64"], "f64", 16, 0, "few:1000", LIMIT),
            (["--keys", "u32", "--record-size", "12", "--key-offset", "4"], "u32", 12, 4, "uniform", LIMIT),
            (["--keys", "i64", "--record-size", "100", "--key-offset", "37"], "i64", 100, 37, "few:40", "2M"),
            (["--keys", "f32", "--record-size", "7", "--key-offset", "3"], "f32", 7, 3, "special", "3M"),
        ]
        for layout, t, record, offset, dist, limit in cases:
            n = 12_000_000 // record
            data = self.gen("in.bin", *layout, "-n", str(n), "--dist", dist)
            for desc in [False, True]:
                extra = ["--descending"] if desc else []
                self.sort(layout + extra + ["--verify", self.path("in.bin")], limit=limit)
                order = reference_order(data, t, record, offset, desc)
                self.assertTrue(self.read("o") == reference_records(data, record, order), f"{layout} desc={desc}")
                self.sort(layout + extra + ["--argsort", self.path("in.bin")], out="idx", limit=limit)
                self.assertTrue(np.array_equal(np.frombuffer(self.read("idx"), dtype=np.uint32), order),
                                f"argsort {layout} desc={desc}")
        data = self.gen("in.bin", "--keys", "f32", "-n", "2000000", "--dist", "few:77")
        self.sort(["--keys", "f32", "--argsort", "--index-type", "u64", "--verify", self.path("in.bin")], out="idx")
        self.assertTrue(np.array_equal(np.frombuffer(self.read("idx"), dtype=np.uint64),
                                       reference_order(data, "f32", 4, 0)))

    def test_bit_ranges(self):
        for t, bits, desc in [("u32", (5, 27), True), ("u64", (40, 64), False), ("f64", (20, 60), True),
                              ("i32", (0, 12), False)]:
            data = self.gen("in.bin", "--keys", t, "--values", "u32", "-n", "1500000", "--dist", "uniform")
            args = ["--keys", t, "--values", "u32", "--bits", f"{bits[0]}:{bits[1]}"] + (["--descending"] if desc else [])
            self.sort(args + ["--verify", self.path("in.bin")])
            order = reference_order(data, t, WIDTH[t] + 4, 0, desc, bits)
            self.assertTrue(self.read("o") == reference_records(data, WIDTH[t] + 4, order), f"{t} bits {bits}")

    def test_same_bytes_as_in_core(self):
        data = self.gen("in.bin", "--keys", "u64", "--record-size", "24", "--key-offset", "8", "-n", "900000",
                        "--dist", "few:5000")
        layout = ["--keys", "u64", "--record-size", "24", "--key-offset", "8"]
        p = run(layout + ["-f", self.path("in.bin"), self.path("in_core")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("partition", p.stderr.decode())
        out = self.sort(layout + [self.path("in.bin")])
        self.assertEqual(self.read("o"), self.read("in_core"))
        xxh = [l for l in out.stderr.decode().split("\n") if l.startswith("XXH3")]
        self.assertEqual(xxh[0].split("=")[1], [l for l in p.stderr.decode().split("\n")
                                                 if l.startswith("XXH3")][0].split("=")[1])


class Streams(LargeTest):
    def test_stdin_beyond_the_budget_to_stdout(self):
        data = self.gen("in.bin", "--keys", "i64", "-n", "1600000", "--dist", "uniform")
        p = run(["--mem-limit", LIMIT, "--temp-dir", self.scratch, "--keys", "i64", "-", "-"], data=data)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertIn("spill", p.stderr.decode())
        self.assertTrue(p.stdout == reference_records(data, 8, reference_order(data, "i64", 8, 0)))
        self.assert_nothing_left()
        # verified, to a stream: the result is checked whole before any byte goes out
        p = run(["--mem-limit", LIMIT, "--temp-dir", self.scratch, "--keys", "i64", "--verify", "--argsort", "-", "-"],
                data=data)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertTrue(np.array_equal(np.frombuffer(p.stdout, dtype=np.uint32), reference_order(data, "i64", 8, 0)))
        self.assert_nothing_left()

    def test_progress(self):
        """--progress shows the progress of a job that runs over a second (a line per update when
        stderr is not a terminal), --no-progress and the default (stderr not a terminal) none."""
        self.gen("in.bin", "--keys", "u32", "-n", "5000000")  # out of core: several seconds on lavapipe
        runs, seconds = {}, {}
        for flag in ["--progress", "--no-progress", None]:
            start = time.perf_counter()
            p = run(["-f", "--mem-limit", LIMIT, "--temp-dir", self.scratch, "--keys", "u32"] + ([flag] if flag else [])
                    + [self.path("in.bin"), self.path("o")])
            seconds[flag] = time.perf_counter() - start
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            runs[flag] = [l for l in p.stderr.decode().split("\n") if re.match(r"gpusort: +\d+%, ", l)]
        self.assertEqual(runs["--no-progress"], [])
        self.assertEqual(runs[None], [])
        if seconds["--progress"] < 1.5:
            self.skipTest(f"the job took {seconds['--progress']:.2f} s: no progress is due before a second")
        self.assertGreater(len(runs["--progress"]), 0)
        percents = [int(re.match(r"gpusort: +(\d+)%", l).group(1)) for l in runs["--progress"]]
        self.assertEqual(percents, sorted(percents))
        self.assertIn("moved", runs["--progress"][0])
        self.assertIn("s left", runs["--progress"][-1])

    def test_spill_goes_to_the_output_directory_by_default(self):
        data = self.gen("in.bin", "--keys", "u32", "-n", "2000000")
        p = run(["--mem-limit", LIMIT, "--keys", "u32", "-", self.path("o")], data=data)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertTrue(self.read("o") == reference_records(data, 4, reference_order(data, "u32", 4, 0)))
        self.assertEqual(sorted(os.listdir(self.dir)), ["in.bin", "o", "scratch"])

    def test_disk_full_while_spilling(self):
        """A file-size limit below the spill's size stands in for a full disk: one clear line,
        exit 1, no output and no temporary file."""
        data = self.gen("in.bin", "--keys", "u32", "-n", "3000000")

        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, resource.RLIM_INFINITY))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG

        p = run(["--mem-limit", LIMIT, "--temp-dir", self.scratch, "--keys", "u32", "-", self.path("o")], data=data,
                preexec_fn=small_files)
        err = p.stderr.decode().strip().split("\n")
        self.assertEqual(p.returncode, 1, err)
        self.assertEqual(len(err), 1, err)
        self.assertIn("could not be spilled", err[0])
        self.assertIn("File too large", err[0])
        self.assertFalse(os.path.exists(self.path("o")))
        self.assert_nothing_left()

    def test_interrupted_out_of_core_sort_leaves_nothing(self):
        self.gen("in.bin", "--keys", "u32", "-n", "4000000")
        for sig in (signal.SIGINT, signal.SIGTERM):
            proc = subprocess.Popen([GPUSORT, "--mem-limit", LIMIT, "--temp-dir", self.scratch, "--keys", "u32",
                                     self.path("in.bin"), self.path("o")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.time() + 60  # once the output's temporary file exists
            while proc.poll() is None and time.time() < deadline:
                if any(".gpusort-" in f for f in os.listdir(self.dir)):
                    break
                time.sleep(0.001)
            time.sleep(0.2)  # into the work (on lavapipe, the partition)
            self.assertIsNone(proc.poll(), "the sort ended before it could be interrupted")
            proc.send_signal(sig)
            proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, -sig)
            self.assertFalse(os.path.exists(self.path("o")))
            self.assert_nothing_left()


class Chunks(LargeTest):
    def scan(self, data, args):
        p = run(["scan", "-f", "--mem-limit", LIMIT] + args + ["-", self.path("o")], data=data)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        return self.read("o")

    def test_scans_across_chunks(self):
        vals = np.frombuffer(self.gen("in.bin", "--keys", "u32", "-n", "3000000"), dtype=np.uint32)
        data = vals.tobytes()
        with np.errstate(over="ignore"):
            self.assertTrue(np.array_equal(np.frombuffer(self.scan(data, ["--keys", "u32"]), dtype=np.uint32),
                                           np.cumsum(vals, dtype=np.uint32)))
        wide = np.frombuffer(self.scan(data, ["--keys", "u32", "--acc", "u64", "--exclusive"]), dtype=np.uint64)
        self.assertEqual(wide[0], 0)
        self.assertTrue(np.array_equal(wide[1:], np.cumsum(vals.astype(np.uint64))[:-1]))
        self.assertTrue(np.array_equal(np.frombuffer(self.scan(data, ["--keys", "u32", "--op", "max"]), dtype=np.uint32),
                                       np.maximum.accumulate(vals)))
        ints = vals.view(np.int32)
        self.assertTrue(np.array_equal(np.frombuffer(self.scan(data, ["--keys", "i32", "--op", "min", "--algo",
                                                                      "reduce-then-scan"]), dtype=np.int32),
                                       np.minimum.accumulate(ints)))
        # f64 sums: chunks carry the running sum; within the documented bound of exact sums
        f = np.random.default_rng(5).standard_normal(2_000_000)
        got = np.frombuffer(self.scan(f.tobytes(), ["--keys", "f64"]), dtype=np.float64)
        bound = (np.arange(1, f.size + 1) / 1024 + 64) * 2.0**-53 * 1.01 * np.cumsum(np.abs(f))
        self.assertTrue(np.all(np.abs(got - np.cumsum(f)) <= bound + np.abs(np.cumsum(f)) * 2.0**-52 * 4))

    def test_reduce_across_chunks(self):
        vals = np.frombuffer(self.gen("in.bin", "--keys", "u64", "-n", "2000000"), dtype=np.uint64)
        for op, want in [("sum", int(vals.sum(dtype=np.uint64))), ("min", int(vals.min())), ("max", int(vals.max()))]:
            p = run(["reduce", "--mem-limit", LIMIT, "--keys", "u64", "--op", op, self.path("in.bin")])
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            self.assertEqual(int(p.stdout), want, op)
        p = run(["reduce", "--mem-limit", LIMIT, "--keys", "u32", "--acc", "u64", "-"], data=vals.tobytes())
        self.assertEqual(int(p.stdout), int(vals.view(np.uint32).astype(np.uint64).sum()))


class Limits(LargeTest):
    def test_larger_than_one_binding(self):
        """More than one storage binding holds (128 MiB on lavapipe): in core, no options."""
        data = self.gen("in.bin", "--keys", "u32", "-n", str(2**25 + 4099))
        p = run(["-f", self.path("in.bin"), self.path("o"), "--keys", "u32"])
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertNotIn("partition", p.stderr.decode())
        self.assertTrue(np.array_equal(np.frombuffer(self.read("o"), dtype=np.uint32),
                                       np.sort(np.frombuffer(data, dtype=np.uint32))))


if __name__ == "__main__":
    GPUSORT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
