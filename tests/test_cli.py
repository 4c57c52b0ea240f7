#!/usr/bin/env python3
"""Command-line behaviour of gpusort: exit codes, messages, pipes, output safety.

usage: test_cli.py GPUSORT SOURCE_ROOT [unittest options]
"""
import array
import os
import pty
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

GPUSORT = None
ROOT = None
EMPTY_XXH3 = "2d06800538d394c2"  # XXH3-64 of no bytes


def run(args, data=None, env=None, timeout=300, stdout=subprocess.PIPE):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([GPUSORT] + args, input=data, stdout=stdout, stderr=subprocess.PIPE,
                          env=full_env, timeout=timeout)


def u32(values):
    a = array.array("I", values)
    assert a.itemsize == 4
    return a.tobytes()


def u32_list(data):
    a = array.array("I")
    a.frombytes(data)
    return list(a)


def random_u32(n, seed):
    x = seed * 2654435761 % 2**32 or 1
    out = []
    for _ in range(n):  # xorshift32: deterministic, independent of gpusort's generator
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out.append(x)
    return out


class CliTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def assert_no_temp_files(self):
        left = [f for f in os.listdir(self.dir) if ".gpusort-" in f]
        self.assertEqual(left, [], "temporary files left behind")

    def assert_error(self, proc, code, *fragments):
        """Exit status `code` and exactly one line on stderr, containing every fragment."""
        err = proc.stderr.decode()
        self.assertEqual(proc.returncode, code, err)
        lines = err.strip("\n").split("\n")
        self.assertEqual(len(lines), 1, "expected one line on stderr, got:\n" + err)
        self.assertTrue(lines[0].startswith("gpusort: "), lines[0])
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def checksum_line(self, proc):
        lines = [l for l in proc.stderr.decode().split("\n") if l.startswith("XXH3 (")]
        self.assertEqual(len(lines), 1, proc.stderr.decode())
        return lines[0]


class Usage(CliTest):
    def test_help(self):
        p = run(["--help"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("Usage: gpusort", p.stdout.decode())
        self.assertEqual(p.stderr, b"")
        for sub in ["sort", "check", "gen", "bench", "devices"]:
            self.assertEqual(run([sub, "--help"]).stdout, p.stdout)

    def test_version(self):
        p = run(["--version"])
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout.decode(), r"^gpusort \d+\.\d+\.\d+\n$")

    def test_unknown_option(self):
        self.assert_error(run(["--bogus", "a", "b"]), 2, "unknown option '--bogus'")
        self.assert_error(run(["check", "-x", "a"]), 2, "unknown option")

    def test_option_without_value(self):
        self.assert_error(run(["in.bin", "out.bin", "--keys"]), 2, "needs a value")

    def test_missing_arguments(self):
        self.assert_error(run(["--keys", "u32"]), 2, "missing INPUT")
        self.assert_error(run(["--keys", "u32", "in.bin"]), 2, "missing OUTPUT")
        self.assert_error(run(["in.bin", "out.bin"]), 2, "--keys")
        self.assert_error(run(["--keys", "u32", "a", "b", "c"]), 2, "too many arguments")
        self.assert_error(run(["--keys", "u32", "a", "b", "-o", "c"]), 2, "OUTPUT given twice")

    def test_key_types(self):
        self.assert_error(run(["--keys", "u33", "a", "b"]), 2, "unknown key type 'u33'")
        for t in ["i32", "f32", "u64", "i64", "f64"]:
            self.assert_error(run(["--keys", t, "a", "b"]), 2, "not supported yet")

    def test_bad_values(self):
        self.assert_error(run(["--keys", "u32", "--device", "x", "a", "b"]), 2, "--device")
        self.assert_error(run(["--keys", "u32", "--timeout", "0", "a", "b"]), 2, "--timeout")
        self.assert_error(run(["gen", "--keys", "u32", "-n", "ten", "o"]), 2, "-n")
        self.assert_error(run(["gen", "--keys", "u32", "-n", "4", "--dist", "zipf", "o"]), 2,
                          "unknown distribution")
        self.assert_error(run(["bench", "--sizes", "2^x"]), 2, "--sizes")

    def test_device_out_of_range(self):
        inp = self.write("in.bin", u32([3, 1, 2]))
        self.assert_error(run(["--keys", "u32", "--device", "99", inp, self.path("o")]), 2,
                          "--device 99")


class Inputs(CliTest):
    def test_missing_file(self):
        self.assert_error(run(["--keys", "u32", self.path("nope.bin"), self.path("o")]), 1,
                          "cannot open", "nope.bin")

    def test_directory(self):
        self.assert_error(run(["--keys", "u32", self.dir, self.path("o")]), 2, "is a directory")

    def test_size_not_a_whole_number_of_keys(self):
        inp = self.write("odd.bin", b"0123456789")
        p = run(["--keys", "u32", inp, self.path("o")])
        self.assert_error(p, 2, "odd.bin", "10 bytes", "multiple of 4", "u32")
        self.assertFalse(os.path.exists(self.path("o")))
        self.assert_no_temp_files()

    def test_stdin_size_not_a_whole_number_of_keys(self):
        p = run(["--keys", "u32", "-", self.path("o")], data=b"12345")
        self.assert_error(p, 2, "stdin", "5 bytes")
        self.assertFalse(os.path.exists(self.path("o")))

    def test_too_large_for_one_buffer(self):
        # A sparse file of 2^30 + 1 keys: more than any device's single-buffer limit here
        # (look-back counts are 30-bit). Refused before any data is read.
        inp = self.path("huge.bin")
        with open(inp, "wb") as f:
            f.truncate(4 * (2**30 + 1))
        self.assert_error(run(["--keys", "u32", inp, self.path("o")]), 1, "can sort at most")
        self.assertFalse(os.path.exists(self.path("o")))

    def test_input_never_modified(self):
        data = u32(random_u32(5000, 7))
        inp = self.write("in.bin", data)
        os.chmod(inp, 0o444)
        before = os.stat(inp)
        self.assertEqual(run(["--keys", "u32", inp, self.path("o")]).returncode, 0)
        after = os.stat(inp)
        self.assertEqual(self.read("in.bin"), data)
        self.assertEqual((before.st_mtime_ns, before.st_size), (after.st_mtime_ns, after.st_size))


class Outputs(CliTest):
    def setUp(self):
        super().setUp()
        self.values = random_u32(3000, 11)
        self.inp = self.write("in.bin", u32(self.values))

    def test_existing_output_needs_force(self):
        out = self.write("out.bin", b"precious")
        self.assert_error(run(["--keys", "u32", self.inp, out]), 2, "already exists", "-f")
        self.assertEqual(self.read("out.bin"), b"precious")
        p = run(["--keys", "u32", "-f", self.inp, out])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(u32_list(self.read("out.bin")), sorted(self.values))
        self.assert_no_temp_files()

    def test_output_is_input(self):
        os.link(self.inp, self.path("hard.bin"))
        os.symlink(self.inp, self.path("soft.bin"))
        original = self.read("in.bin")
        for out in [self.inp, self.path("hard.bin"), self.path("soft.bin"),
                    os.path.join(self.dir, ".", "in.bin")]:
            self.assert_error(run(["--keys", "u32", "-f", self.inp, out]), 2, "is the input file")
            self.assertEqual(self.read("in.bin"), original)
        self.assert_no_temp_files()

    def test_output_is_directory(self):
        self.assert_error(run(["--keys", "u32", self.inp, self.dir]), 2, "is a directory")

    def test_output_directory_missing(self):
        self.assert_error(run(["--keys", "u32", self.inp, self.path("no/such/dir/out.bin")]), 1,
                          "cannot create")

    def test_dev_null(self):
        p = run(["--keys", "u32", self.inp, "/dev/null"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

    def test_new_file_permissions_follow_umask(self):
        old = os.umask(0o027)
        try:
            self.assertEqual(run(["--keys", "u32", self.inp, self.path("o")]).returncode, 0)
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(self.path("o")).st_mode), 0o640)

    def test_dash_o(self):
        p = run(["--keys", "u32", "-o", self.path("o"), self.inp])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(u32_list(self.read("o")), sorted(self.values))

    def test_binary_to_terminal_refused(self):
        leader, follower = pty.openpty()
        try:
            p = subprocess.run([GPUSORT, "--keys", "u32", self.inp, "-"], stdout=follower,
                               stderr=subprocess.PIPE, timeout=60)
        finally:
            os.close(follower)
            os.close(leader)
        self.assert_error(p, 2, "terminal")


class Sorting(CliTest):
    def test_sample_file(self):
        sample = os.path.join(ROOT, "data", "sample-u32.bin")
        with open(sample, "rb") as f:
            values = u32_list(f.read())
        p = run(["--keys", "u32", sample, self.path("o")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(u32_list(self.read("o")), sorted(values))

    def test_empty_input(self):
        inp = self.write("empty.bin", b"")
        out = self.path("out.bin")
        p = run(["--keys", "u32", inp, out])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.read("out.bin"), b"")
        self.assertEqual(self.checksum_line(p), f"XXH3 ({out}) = {EMPTY_XXH3}")
        p = run(["--keys", "u32", "-", "-"], data=b"")
        self.assertEqual((p.returncode, p.stdout), (0, b""))

    def test_pipes(self):
        values = random_u32(20000, 3)
        data = u32(values)
        want = u32(sorted(values))
        p = run(["--keys", "u32", "-", "-"], data=data)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, want)
        p = run(["--keys", "u32", "-", self.path("o")], data=data)
        self.assertEqual((p.returncode, self.read("o")), (0, want))
        inp = self.write("in.bin", data)
        p = run(["--keys", "u32", inp, "-"])
        self.assertEqual((p.returncode, p.stdout), (0, want))
        # through a real pipe, in chunks
        cat = subprocess.Popen(["cat", inp], stdout=subprocess.PIPE)
        p = subprocess.run([GPUSORT, "--keys", "u32", "-", "-"], stdin=cat.stdout,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        cat.wait()
        self.assertEqual((p.returncode, p.stdout), (0, want))

    def test_no_data_on_stdout_unless_asked(self):
        inp = self.write("in.bin", u32([5, 4, 3]))
        p = run(["--keys", "u32", inp, self.path("o")])
        self.assertEqual((p.returncode, p.stdout), (0, b""))

    def test_report_and_checksum(self):
        inp = self.write("in.bin", u32(random_u32(40000, 5)))
        out = self.path("out.bin")
        p = run(["--keys", "u32", inp, out])
        self.assertEqual(p.returncode, 0, p.stderr)
        err = p.stderr.decode()
        for word in ["device", "40000 u32 keys", "read", "upload", "sort", "download", "write",
                     "total", "keys/s", "B/s"]:
            self.assertIn(word, err)
        line = self.checksum_line(p)
        self.assertEqual(err.rstrip("\n").split("\n")[-1], line)
        listing = self.write("sums.txt", (line + "\n").encode())
        check = subprocess.run(["xxhsum", "-c", listing], capture_output=True, timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        tag = subprocess.run(["xxhsum", "-H3", "--tag", out], capture_output=True, timeout=60)
        self.assertEqual(tag.stdout.decode().strip(), line)

    def test_quiet_and_verbose(self):
        inp = self.write("in.bin", u32(random_u32(100, 9)))
        p = run(["--keys", "u32", "-q", inp, self.path("q")])
        self.assertEqual((p.returncode, p.stderr), (0, b""))
        p = run(["--keys", "u32", "-v", inp, self.path("v")])
        self.assertEqual(p.returncode, 0)
        self.assertIn("pass 3", p.stderr.decode())
        self.assertIn("tile:", p.stderr.decode())


class Verification(CliTest):
    def setUp(self):
        super().setUp()
        self.values = random_u32(30000, 13)
        self.inp = self.write("in.bin", u32(self.values))

    def test_verify_passes(self):
        p = run(["--keys", "u32", "--verify", self.inp, self.path("o")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("verified", p.stderr.decode())
        p = run(["--keys", "u32", "--verify", self.inp, "-"])
        self.assertEqual((p.returncode, p.stdout), (0, u32(sorted(self.values))))

    def test_verify_catches_a_bad_sort(self):
        bad = {"GPUSORT_TEST_CORRUPT": "1"}
        p = run(["--keys", "u32", "--verify", self.inp, self.path("o")], env=bad)
        self.assert_error(p, 3, "verification failed", "no output written")
        self.assertFalse(os.path.exists(self.path("o")))
        self.assert_no_temp_files()
        p = run(["--keys", "u32", "--verify", self.inp, "-"], env=bad)
        self.assertEqual((p.returncode, p.stdout), (3, b""))
        # without --verify the corruption goes unnoticed: the hook really corrupts
        p = run(["--keys", "u32", self.inp, self.path("o")], env=bad)
        self.assertEqual(p.returncode, 0)
        self.assertNotEqual(u32_list(self.read("o")), sorted(self.values))

    def test_check(self):
        sorted_path = self.write("sorted.bin", u32(sorted(self.values)))
        p = run(["check", "--keys", "u32", sorted_path])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("sorted, 30000 u32 keys", p.stderr.decode())
        self.assert_error(run(["check", "--keys", "u32", self.inp]), 3, "not sorted")
        # a sorted file with two neighbours swapped
        corrupt = sorted(self.values)
        i = 12345
        corrupt[i], corrupt[i + 1] = corrupt[i + 1], corrupt[i]
        if corrupt[i] == corrupt[i + 1]:
            corrupt[i] += 1
        bad_path = self.write("corrupt.bin", u32(corrupt))
        self.assert_error(run(["check", "--keys", "u32", bad_path]), 3, f"at key {i + 1}")
        self.assertEqual(run(["check", "-q", "--keys", "u32", "-"], data=u32(sorted(self.values))).returncode, 0)
        self.assertEqual(run(["check", "-q", "--keys", "u32", "-"], data=u32(corrupt)).returncode, 3)
        self.assertEqual(run(["check", "--keys", "u32", self.write("e.bin", b"")]).returncode, 0)
        self.assert_error(run(["check", "--keys", "u32", self.write("odd.bin", b"123")]), 2, "3 bytes")
        self.assert_error(run(["check", sorted_path]), 2, "--keys")


class Robustness(CliTest):
    def test_gpu_stage_past_timeout_is_an_error(self):
        gen = run(["gen", "-q", "--keys", "u32", "-n", "2^21", self.path("in.bin")])
        self.assertEqual(gen.returncode, 0, gen.stderr)
        p = run(["--keys", "u32", "--timeout", "0.0001", self.path("in.bin"), self.path("o")], timeout=120)
        self.assert_error(p, 1, "GPU stall", "did not finish within")
        self.assertFalse(os.path.exists(self.path("o")))
        self.assert_no_temp_files()


class Gen(CliTest):
    def gen(self, name, *args):
        p = run(["gen", "-q", "--keys", "u32", *args, self.path(name)])
        self.assertEqual(p.returncode, 0, p.stderr)
        return u32_list(self.read(name))

    def test_deterministic(self):
        a = self.gen("a", "-n", "10000", "--seed", "42")
        b = self.gen("b", "-n", "10000", "--seed", "42")
        c = self.gen("c", "-n", "10000", "--seed", "43")
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertEqual(self.gen("d", "-n", "2^4"), self.gen("e", "-n", "16", "--seed", "1"))

    def test_distributions(self):
        n = "5000"
        s = self.gen("sorted", "-n", n, "--dist", "sorted")
        self.assertEqual(s, sorted(s))
        self.assertGreater(len(set(s)), 4000)
        r = self.gen("rev", "-n", n, "--dist", "reversed")
        self.assertEqual(r, sorted(r, reverse=True))
        self.assertEqual(len(set(self.gen("eq", "-n", n, "--dist", "equal"))), 1)
        self.assertLessEqual(len(set(self.gen("few", "-n", n, "--dist", "few:7"))), 7)
        self.assertTrue(all(v < 2**12 for v in self.gen("low", "-n", n, "--dist", "lowbits:12")))
        self.assertTrue(all(v % 2**28 == 0 for v in self.gen("high", "-n", n, "--dist", "highbits:4")))
        ones = lambda vals: sum(bin(v).count("1") for v in vals) / len(vals)
        self.assertLess(ones(self.gen("ent", "-n", n, "--dist", "entropy:3")), 6)
        self.assertGreater(ones(self.gen("uni", "-n", n)), 14)

    def test_refuses_existing_and_prints_checksum(self):
        out = self.write("o", b"x")
        self.assert_error(run(["gen", "--keys", "u32", "-n", "4", out]), 2, "already exists")
        p = run(["gen", "--keys", "u32", "-n", "4", "-f", out])
        self.assertEqual(p.returncode, 0)
        tag = subprocess.run(["xxhsum", "-H3", "--tag", out], capture_output=True, timeout=60)
        self.assertEqual(tag.stdout.decode().strip(), self.checksum_line(p))
        self.assert_error(run(["gen", "--keys", "u32", out]), 2, "-n")


class DevicesAndBench(CliTest):
    def test_devices(self):
        p = run(["devices"])
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.decode().split("\n")
        self.assertIn("subgroup", lines[0])
        self.assertTrue(any(l.startswith("*") for l in lines), p.stdout)

    def test_bench(self):
        p = run(["bench", "--sizes", "2^10,5000", "--reps", "3"])
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.decode()
        self.assertIn("copy GB/s", out)
        self.assertEqual(len(re.findall(r"^\s+(1024|5000)\s.*\bok$", out, re.M)), 2, out)


if __name__ == "__main__":
    GPUSORT, ROOT = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
