#!/usr/bin/env python3
"""Command-line behaviour of gpusort: exit codes, messages, pipes, output safety.

usage: test_cli.py GPUSORT SOURCE_ROOT [unittest options]
"""
import array
import json
import os
import pty
import re
import shutil
import stat
import shlex
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
        for sub in ["sort", "check", "scan", "reduce", "select", "partition", "unique", "rle", "reduce-by-key", "gen",
                    "bench", "devices"]:  # each its own part
            text = run([sub, "--help"]).stdout.decode()
            self.assertTrue(text.startswith("Usage: gpusort [sort]" if sub == "sort" else f"Usage: gpusort {sub}"), text)
            self.assertLess(len(text), len(p.stdout))

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
        self.assert_error(run(["in.bin", "out.bin"]), 2, "--keys")
        self.assert_error(run(["--keys", "u32", "a", "b", "c"]), 2, "too many arguments")
        self.assert_error(run(["--keys", "u32", "a", "b", "-o", "c"]), 2, "OUTPUT given twice")

    def test_pipes_by_default(self):
        """Paths left out are stdin and stdout, for every command that reads or writes data."""
        vals = random_u32(3000, 4)
        data = u32(vals)
        p = run(["--keys", "u32"], data=data)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(u32_list(p.stdout), sorted(vals))
        p = run(["-q", "--keys", "uint32", "--descending", self.write("in.bin", data)])  # INPUT, then stdout
        self.assertEqual((p.returncode, u32_list(p.stdout)), (0, sorted(vals, reverse=True)), p.stderr)
        p = run(["scan", "-q", "--keys", "u32", "--acc", "u64"], data=data)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(array.array("Q", p.stdout)[-1], sum(vals))
        p = run(["reduce", "--keys", "u32", "--acc", "u64"], data=data)
        self.assertEqual((p.returncode, p.stdout.decode()), (0, f"{sum(vals)}\n"), p.stderr)
        self.assertEqual(run(["check", "-q", "--keys", "u32"], data=u32(sorted(vals))).returncode, 0)
        self.assertEqual(run(["check", "-q", "--keys", "u32"], data=data).returncode, 3)
        p = run(["gen", "-q", "--keys", "u32", "-n", "10"], data=b"")
        self.assertEqual((p.returncode, len(p.stdout)), (0, 40), p.stderr)

    def test_help_per_command(self):
        full = run(["--help"]).stdout.decode()
        for args in (["help", "scan"], ["scan", "--help"], ["scan", "-h"]):
            p = run(args)
            self.assertEqual(p.returncode, 0, p.stderr)
            text = p.stdout.decode()
            self.assertTrue(text.startswith("Usage: gpusort scan"), text[:80])
            self.assertIn("--op", text)
            self.assertIn("--mem-limit", text)  # the options of every command
            self.assertNotIn("--dist", text)    # gen's
            self.assertLess(len(text), len(full))
        self.assertEqual(run(["help"]).stdout.decode(), full)
        self.assertIn("--dist", run(["gen", "--help"]).stdout.decode())
        self.assert_error(run(["help", "sacn"]), 2, "did you mean 'scan'?")

    def test_suggestions(self):
        self.assert_error(run(["sacn", "--keys", "u32"], data=b""), 2, "unknown command 'sacn' (did you mean 'scan'?)")
        self.assert_error(run(["--kyes", "u32", "a", "b"]), 2, "unknown option '--kyes' (did you mean '--keys'?)")
        self.assert_error(run(["scan", "--acc=u64", "--opp", "sum", "a"]), 2, "did you mean '--op'?")
        self.assert_error(run(["-fZ", "--keys", "u32", "a", "b"]), 2, "unknown option '-Z'")
        p = run(["-fZ", "--keys", "u32", "a", "b"])
        self.assertNotIn("-fZ", p.stderr.decode())
        # an existing file named like a command is the INPUT of a sort
        self.write("sort.bn", u32([3, 1, 2]))
        p = subprocess.run([GPUSORT, "-q", "--keys", "u32", "sort.bn", "-"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=self.dir)
        self.assertEqual((p.returncode, u32_list(p.stdout)), (0, [1, 2, 3]), p.stderr)

    def test_json_report(self):
        vals = random_u32(5000, 6)
        inp = self.write("in.bin", u32(vals))
        p = run(["--json", "-f", "--keys", "u32", inp, self.path("o")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, b"")  # no text report beside it
        r = json.loads(p.stdout)
        self.assertEqual((r["command"], r["records"], r["bytes"], r["output"]), ("sort", 5000, 20000, self.path("o")))
        self.assertRegex(r["xxh3"], r"^[0-9a-f]{16}$")
        tag = subprocess.run(["xxhsum", "-H3", self.path("o")], capture_output=True, timeout=60).stdout.decode()
        self.assertIn(r["xxh3"], tag)
        self.assertIn("sort", r["stages"])
        self.assertTrue(all(isinstance(v, float) for v in r["stages"].values()))
        self.assertGreater(r["total_seconds"], 0)
        self.assertIsInstance(r["device"], str)
        # data on stdout: the object goes to stderr
        p = run(["--json", "--keys", "u32", inp, "-"])
        self.assertEqual(u32_list(p.stdout), sorted(vals))
        self.assertEqual(json.loads(p.stderr)["output"], "-")
        r = json.loads(run(["reduce", "--json", "--keys", "u32", "--acc", "u64", inp]).stdout)
        self.assertEqual((r["command"], r["result"]), ("reduce", sum(vals)))
        r = json.loads(run(["scan", "--json", "-f", "--keys", "u32", inp, self.path("s")]).stdout)
        self.assertEqual((r["command"], r["records"]), ("scan", 5000))
        lines = run(["bench", "--json", "--sizes", "1000,2^12", "--reps", "2"]).stdout.decode().splitlines()
        self.assertEqual([json.loads(l)["records"] for l in lines], [1000, 4096])
        self.assertTrue(all(json.loads(l)["checked"] for l in lines))

    def test_key_types(self):
        self.assert_error(run(["--keys", "u33", "a", "b"]), 2, "--keys: unknown type 'u33'")
        self.assert_error(run(["--keys", "u32", "--values", "bytes:2", "a", "b"]), 2, "--values: unknown type")
        self.assert_error(run(["scan", "--keys", "bytes:2", "a", "b"]), 2, "--keys: unknown type 'bytes:2'")
        self.assert_error(run(["unique", "--keys", "bytes:2", "a", "b"]), 2, "--keys: unknown type 'bytes:2'")

    def test_bad_values(self):
        self.assert_error(run(["--keys", "u32", "--device", "x", "a", "b"]), 2, "--device")
        self.assert_error(run(["--keys", "u32", "--timeout", "0", "a", "b"]), 2, "--timeout")
        self.assert_error(run(["gen", "--keys", "u32", "-n", "ten", "o"]), 2, "-n")
        self.assert_error(run(["gen", "--keys", "u32", "-n", "4", "--dist", "zipf", "o"]), 2,
                          "unknown distribution")
        self.assert_error(run(["bench", "--sizes", "2^x"]), 2, "--sizes")
        # sizes no file holds are refused at once; one past the disk fails before any writing
        for n in ("2^62", "18446744073709551615"):
            self.assert_error(run(["gen", "--keys", "u32", "-n", n, self.path("o")]), 2, "more than a file can hold")
        self.assert_error(run(["gen", "--keys", "u64", "-n", "2^58", self.path("o")]), 1, "cannot write")
        self.assertFalse(os.path.exists(self.path("o")))
        self.assert_no_temp_files()

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

    def test_budget_too_small_for_any_sort(self):
        inp = self.write("in.bin", u32(random_u32(1000, 3)))
        self.assert_error(run(["--keys", "u32", "--mem-limit", "1K", inp, self.path("o")]), 1, "memory budget",
                          "--mem-limit")
        self.assert_error(run(["--keys", "u32", "--mem-limit", "lots", inp, self.path("o")]), 2, "--mem-limit",
                          "'lots'")
        # a budget under 1 MiB short of what a sort needs, in units that tell the two apart
        big = self.write("big.bin", u32(random_u32(1 << 17, 3)) * 2)  # 2^17 u64 keys
        p = run(["--keys", "u64", "--mem-limit", "64K", big, self.path("o")])
        self.assert_error(p, 1, "more than the budget of 64.0 KiB")
        self.assertRegex(p.stderr.decode(), r"needs \d+\.\d KiB")
        self.assertFalse(os.path.exists(self.path("o")))
        self.assert_no_temp_files()

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
        # stdout (or /dev/stdout) appending to the input
        for out in ["-", "/dev/stdout"]:
            with open(self.inp, "ab") as f:
                p = run(["--keys", "u32", self.inp, out], stdout=f)
            self.assert_error(p, 2, "is the input file")
            self.assertEqual(self.read("in.bin"), original)
        # refused as the input before the input's size is judged (not a whole number of u64)
        odd = self.write("odd.bin", b"\x01" * 12)
        self.assert_error(run(["--keys", "u64", "-f", odd, odd]), 2, "is the input file")
        self.assertEqual(self.read("odd.bin"), b"\x01" * 12)
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

    def test_symbolic_link_output(self):
        """A link to a regular file: its target is replaced (with -f) and the link stays; a link
        to nothing is refused."""
        target = self.write("target.bin", b"precious")
        link = self.path("link.bin")
        os.symlink("target.bin", link)
        self.assert_error(run(["--keys", "u32", self.inp, link]), 2, "already exists")
        self.assertEqual(self.read("target.bin"), b"precious")
        p = run(["--keys", "u32", "-f", self.inp, link])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.readlink(link), "target.bin")
        self.assertEqual(u32_list(self.read("target.bin")), sorted(self.values))
        os.symlink("nowhere.bin", self.path("dangling.bin"))
        self.assert_error(run(["--keys", "u32", self.inp, self.path("dangling.bin")]), 2, "symbolic link",
                          "does not exist")
        self.assertFalse(os.path.exists(self.path("nowhere.bin")))
        self.assert_no_temp_files()

    def test_descriptor_paths(self):
        """/dev/stdout, /dev/fd/N and /proc/self/fd/N write through the descriptor: into the
        file a shell opened (appending after `>>`), never replacing the path's link."""
        want = u32(sorted(self.values))
        for name, mode, head in [("/dev/stdout", "wb", b""), ("/dev/stdout", "ab", b"HEAD"),
                                 ("/dev/fd/1", "ab", b"HEAD"), ("/proc/self/fd/1", "wb", b"")]:
            out = self.write("out.bin", head)
            with open(out, mode) as f:
                p = run(["--keys", "u32", "-f", self.inp, name], stdout=f)
            self.assertEqual(p.returncode, 0, f"{name}: {p.stderr}")
            self.assertEqual(self.read("out.bin"), head + want, name)
        self.assertTrue(os.path.islink("/dev/stdout"))
        self.assert_error(run(["--keys", "u32", self.inp, "/dev/fd/97"]), 1, "/dev/fd/97")
        self.assert_no_temp_files()

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

    def test_reported_tile(self):
        """-v names the tile the sorts took: a small sort's where the capacity they were sized for
        (the input, or an out-of-core batch) is below 128 of the layout's tile, the layout's own above."""
        pattern = r"tile: (\d+) invocations x (\d+) keys = (\d+) keys"
        inp = self.write("small.bin", u32(random_u32(1000, 8)))
        p = run(["--keys", "u32", "--algo", "onesweep", "-v", "-f", inp, self.path("o")],
                env={"GPUSORT_SORT_SMALL_TILES": "0"})
        layout_tile = int(re.search(pattern, p.stderr.decode()).group(3))
        values = random_u32(128 * layout_tile + 1000, 8)  # in core: the layout's tile
        inp = self.write("in.bin", u32(values))
        tiles = []
        for limit in [[], ["--mem-limit", "2M"]]:  # in core; out of core, in batches of fewer keys
            p = run(["--keys", "u32", "--algo", "onesweep", "-v", "-f"] + limit + [inp, self.path("o")],
                    env={"GPUSORT_SORT_SMALL_TILES": "64x4@128"})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(u32_list(self.read("o")), sorted(values))
            tiles.append(re.search(pattern, p.stderr.decode()).groups()[:2])
        self.assertNotEqual(tiles[0], ("64", "4"), tiles)
        self.assertEqual(tiles[1], ("64", "4"), tiles)

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
        self.assert_error(run(["check", "--keys", "u32", bad_path]), 3, f"at record {i + 1}")
        for path, code, answer in [(sorted_path, 0, True), (bad_path, 3, False)]:  # --json answers either way
            p = run(["check", "--json", "--keys", "u32", path])
            self.assertEqual(p.returncode, code, p.stderr)
            report = json.loads(p.stdout)
            self.assertEqual((report["sorted"], report["records"]), (answer, 30000), path)
        self.assertEqual(run(["check", "-q", "--keys", "u32", "-"], data=u32(sorted(self.values))).returncode, 0)
        self.assertEqual(run(["check", "-q", "--keys", "u32", "-"], data=u32(corrupt)).returncode, 3)
        self.assertEqual(run(["check", "--keys", "u32", self.write("e.bin", b"")]).returncode, 0)
        self.assert_error(run(["check", "--keys", "u32", self.write("odd.bin", b"123")]), 2, "3 bytes")
        self.assert_error(run(["check", sorted_path]), 2, "--keys")


WIDTH = {"u32": 4, "i32": 4, "f32": 4, "u64": 8, "i64": 8, "f64": 8}


def sort_key(t, raw, descending=False, bits=None):
    """The documented order: integers numerically, floats by IEEE 754 totalOrder."""
    w = WIDTH[t] * 8
    u = int.from_bytes(raw, "little")
    sign, full = 1 << (w - 1), (1 << w) - 1
    o = u ^ sign if t[0] == "i" else ((~u & full) if u & sign else u | sign) if t[0] == "f" else u
    if descending:
        o = ~o & full
    if bits:
        lo, hi = bits
        o = (o >> lo) & ((1 << (hi - lo)) - 1)
    return o


def reference(data, t, record, offset, descending=False, bits=None):
    """Records of `data` in stable sorted order, and their input indices."""
    n = len(data) // record
    order = sorted(range(n), key=lambda i: sort_key(t, data[i * record + offset:i * record + offset + WIDTH[t]],
                                                    descending, bits))
    return b"".join(data[i * record:(i + 1) * record] for i in order), order


class KeyTypes(CliTest):
    def gen(self, name, *args):
        p = run(["gen", "-q", *args, self.path(name)])
        self.assertEqual(p.returncode, 0, p.stderr)
        return self.read(name)

    def test_every_key_type_both_directions(self):
        for t in WIDTH:
            for dist in ["special", "few:7", "uniform"]:
                data = self.gen(f"{t}.bin", "-f", "--keys", t, "-n", "3001", "--dist", dist, "--seed", "5")
                for desc in [False, True]:
                    args = ["--keys", t, "-f", "--verify"] + (["--descending"] if desc else [])
                    p = run(args + [self.path(f"{t}.bin"), self.path("out.bin")])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    want, _ = reference(data, t, WIDTH[t], 0, desc)
                    self.assertEqual(self.read("out.bin"), want, f"{t} {dist} descending={desc}")

    def test_float_total_order(self):
        import struct
        # -NaN < -inf < -1 < -denormal < -0 < +0 < +denormal < 1 < +inf < +NaN
        order32 = [0xffc00000, 0xff800000, 0xbf800000, 0x80000001, 0x80000000,
                   0x00000000, 0x00000001, 0x3f800000, 0x7f800000, 0x7fc00000]
        shuffled = [order32[i] for i in [5, 9, 0, 3, 7, 1, 8, 2, 6, 4]]
        inp = self.write("f.bin", struct.pack("<10I", *shuffled))
        self.assertEqual(run(["--keys", "f32", inp, self.path("o")]).returncode, 0)
        self.assertEqual(list(struct.unpack("<10I", self.read("o"))), order32)
        self.assertEqual(run(["--keys", "f32", "--descending", inp, self.path("d")]).returncode, 0)
        self.assertEqual(list(struct.unpack("<10I", self.read("d"))), order32[::-1])
        order64 = [0xfff8000000000000, 0xfff0000000000000, 0x8000000000000000, 0,
                   0x0000000000000001, 0x7ff0000000000000, 0x7ff8000000000000]
        inp = self.write("d.bin", struct.pack("<7Q", *order64[::-1]))
        self.assertEqual(run(["--keys", "f64", inp, self.path("o64")]).returncode, 0)
        self.assertEqual(list(struct.unpack("<7Q", self.read("o64"))), order64)

    def test_integer_extremes(self):
        import struct
        vals = [0, -1, 2**31 - 1, -2**31, 1, -2**31 + 1, 2**31 - 2]
        inp = self.write("i.bin", struct.pack(f"<{len(vals)}i", *vals))
        self.assertEqual(run(["--keys", "i32", inp, self.path("o")]).returncode, 0)
        self.assertEqual(list(struct.unpack(f"<{len(vals)}i", self.read("o"))), sorted(vals))
        vals = [0, -1, 2**63 - 1, -2**63, 5, -2**63 + 1]
        inp = self.write("l.bin", struct.pack(f"<{len(vals)}q", *vals))
        self.assertEqual(run(["--keys", "i64", "--descending", inp, self.path("o64")]).returncode, 0)
        self.assertEqual(list(struct.unpack(f"<{len(vals)}q", self.read("o64"))), sorted(vals, reverse=True))

    def test_bits(self):
        data = self.gen("u.bin", "--keys", "u32", "-n", "4000", "--dist", "uniform")
        for bits, desc in [((8, 16), False), ((0, 1), True), ((31, 32), False), ((3, 29), True)]:
            args = ["--keys", "u32", "-f", "--bits", f"{bits[0]}:{bits[1]}"] + (["--descending"] if desc else [])
            self.assertEqual(run(args + [self.path("u.bin"), self.path("o")]).returncode, 0)
            want, _ = reference(data, "u32", 4, 0, desc, bits)
            self.assertEqual(self.read("o"), want, f"bits {bits} descending={desc}")
            self.assertEqual(run(["check", "--keys", "u32", "--bits", f"{bits[0]}:{bits[1]}"]
                                 + (["--descending"] if desc else []) + [self.path("o")]).returncode, 0)


class Payloads(CliTest):
    def gen(self, name, *args):
        p = run(["gen", "-q", "-f", *args, self.path(name)])
        self.assertEqual(p.returncode, 0, p.stderr)
        return self.read(name)

    def test_pairs(self):
        for key, value in [("u32", "u32"), ("f64", "u32"), ("i64", "f64"), ("u32", "u64"), ("f32", "i32")]:
            R = WIDTH[key] + WIDTH[value]
            data = self.gen("p.bin", "--keys", key, "--values", value, "-n", "2500", "--dist", "few:4")
            for desc in [False, True]:
                args = ["--keys", key, "--values", value, "-f", "--verify"] + (["--descending"] if desc else [])
                p = run(args + [self.path("p.bin"), self.path("o")])
                self.assertEqual(p.returncode, 0, p.stderr)
                out = self.read("o")
                want, _ = reference(data, key, R, 0, desc)
                self.assertEqual(out, want, f"{key}/{value} descending={desc}")
                # stability, seen directly: values are input indices, increasing among equal keys
                if value in ("u32", "u64"):
                    recs = [out[i * R:(i + 1) * R] for i in range(len(out) // R)]
                    for a, b in zip(recs, recs[1:]):
                        if a[:WIDTH[key]] == b[:WIDTH[key]]:
                            self.assertLess(int.from_bytes(a[WIDTH[key]:], "little"),
                                            int.from_bytes(b[WIDTH[key]:], "little"))

    def test_records(self):
        for size, offset, key in [(12, 4, "u32"), (100, 37, "f64"), (16, 8, "i64"), (7, 3, "i32"), (8, 0, "u64")]:
            data = self.gen("r.bin", "--keys", key, "--record-size", str(size), "--key-offset", str(offset),
                            "-n", "3333", "--dist", "few:50")
            for desc, gather in [(False, "gpu"), (True, "gpu"), (False, "host"), (True, "host")]:
                args = ["--keys", key, "--record-size", str(size), "--key-offset", str(offset), "-f", "--verify"]
                p = run(args + (["--descending"] if desc else []) + [self.path("r.bin"), self.path("o")],
                        env={"GPUSORT_RECORD_GATHER": gather})
                self.assertEqual(p.returncode, 0, p.stderr)
                want, _ = reference(data, key, size, offset, desc)
                self.assertEqual(self.read("o"), want,
                                 f"{size}-byte records, {key} at {offset}, desc={desc}, {gather} gather")
                check = run(["check", "--keys", key, "--record-size", str(size), "--key-offset", str(offset)]
                            + (["--descending"] if desc else []) + [self.path("o")])
                self.assertEqual(check.returncode, 0, check.stderr)

    def test_argsort(self):
        import struct
        data = self.gen("k.bin", "--keys", "f32", "-n", "5000", "--dist", "special")
        _, order = reference(data, "f32", 4, 0)
        p = run(["--keys", "f32", "--argsort", "--verify", self.path("k.bin"), self.path("i32")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(list(struct.unpack("<5000I", self.read("i32"))), order)
        p = run(["--keys", "f32", "--argsort", "--index-type", "u64", self.path("k.bin"), self.path("i64")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(list(struct.unpack("<5000Q", self.read("i64"))), order)
        # argsort of records and of pairs: the order of the records, by their key
        recs = self.gen("r.bin", "--keys", "u64", "--record-size", "24", "--key-offset", "16", "-n", "777",
                        "--dist", "few:9")
        _, order = reference(recs, "u64", 24, 16, True)
        p = run(["--keys", "u64", "--record-size", "24", "--key-offset", "16", "--descending", "--argsort",
                 "--verify", self.path("r.bin"), self.path("ri")])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(list(struct.unpack("<777I", self.read("ri"))), order)
        pairs = self.gen("p.bin", "--keys", "i32", "--values", "u32", "-n", "600", "--dist", "few:3")
        _, order = reference(pairs, "i32", 8, 0)
        p = run(["--keys", "i32", "--values", "u32", "--argsort", self.path("p.bin"), "-"])
        self.assertEqual(list(struct.unpack("<600I", p.stdout)), order)

    def test_combination(self):
        # f64 keys, u32 values, descending, a bit range, verified
        data = self.gen("c.bin", "--keys", "f64", "--values", "u32", "-n", "4096", "--dist", "special")
        p = run(["--keys", "f64", "--values", "u32", "--descending", "--bits", "20:60", "--verify",
                 self.path("c.bin"), self.path("o")])
        self.assertEqual(p.returncode, 0, p.stderr)
        want, _ = reference(data, "f64", 12, 0, True, (20, 60))
        self.assertEqual(self.read("o"), want)

    def test_verify_catches_bad_output_in_every_layout(self):
        bad = {"GPUSORT_TEST_CORRUPT": "1"}
        self.gen("p.bin", "--keys", "u32", "--values", "u32", "-n", "3000")
        self.gen("r.bin", "--keys", "u32", "--record-size", "12", "--key-offset", "4", "-n", "3000")
        for args, gather in [(["--values", "u32", self.path("p.bin")], "gpu"),
                             (["--record-size", "12", "--key-offset", "4", self.path("r.bin")], "gpu"),
                             (["--record-size", "12", "--key-offset", "4", self.path("r.bin")], "host"),
                             (["--argsort", self.path("p.bin")], "gpu")]:
            p = run(["--keys", "u32", "--verify"] + args + [self.path("o")],
                    env=dict(bad, GPUSORT_RECORD_GATHER=gather))
            self.assert_error(p, 3, "verification failed")
            self.assertFalse(os.path.exists(self.path("o")))
            self.assert_no_temp_files()

    def test_nonsense_is_a_usage_error(self):
        inp = self.write("x.bin", bytes(24))
        o = self.path("o")
        for args, fragment in [
            (["--keys", "u32", "--values", "u32", "--record-size", "8"], "give one of them"),
            (["--keys", "u32", "--key-offset", "4"], "--key-offset needs --record-size"),
            (["--keys", "u64", "--record-size", "10", "--key-offset", "4"], "does not fit a 10-byte record"),
            (["--keys", "u32", "--record-size", "0"], "at least 1"),
            (["--keys", "u32", "--index-type", "u64"], "--index-type needs --argsort"),
            (["--keys", "u32", "--argsort", "--index-type", "u16"], "u32 or u64"),
            (["--keys", "u32", "--bits", "0:33"], "0 <= LO < HI <= 32"),
            (["--keys", "u64", "--bits", "9:9"], "0 <= LO < HI <= 64"),
            (["--keys", "u32", "--bits", "4-8"], "LO:HI"),
        ]:
            self.assert_error(run(args + [inp, o]), 2, fragment)
        odd = self.write("odd.bin", bytes(25))
        self.assert_error(run(["--keys", "u32", "--values", "u64", odd, o]), 2, "25 bytes",
                          "a (u32, u64) pair")
        self.assert_error(run(["--keys", "u32", "--record-size", "7", inp, o]), 2, "a 7-byte record")

    def test_gen_layouts_and_specials(self):
        import struct
        pairs = self.gen("p.bin", "--keys", "u64", "--values", "u32", "-n", "100", "--dist", "equal")
        self.assertEqual([struct.unpack_from("<I", pairs, 12 * i + 8)[0] for i in range(100)], list(range(100)))
        recs = self.gen("r.bin", "--keys", "u32", "--record-size", "9", "--key-offset", "5", "-n", "50", "--dist", "equal")
        self.assertEqual(len(recs), 450)
        self.assertEqual(len({recs[9 * i + 5:9 * i + 9] for i in range(50)}), 1)
        self.assertGreater(len({recs[9 * i:9 * i + 5] for i in range(50)}), 40)
        f = self.gen("f.bin", "--keys", "f32", "-n", "4000", "--dist", "special")
        bits = set(struct.unpack("<4000I", f))
        for special in [0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x00000001]:
            self.assertIn(special, bits)


class Scans(CliTest):
    def scan(self, values, fmt, *args, out_fmt=None):
        import struct
        inp = self.write("in.bin", struct.pack(f"<{len(values)}{fmt}", *values))
        p = run(["scan", "-f", *args, inp, self.path("out.bin")])
        self.assertEqual(p.returncode, 0, p.stderr)
        data = self.read("out.bin")
        of = out_fmt or fmt
        return list(struct.unpack(f"<{len(data) // struct.calcsize(of)}{of}", data)), p

    def test_sums_min_max_inclusive_exclusive(self):
        import itertools
        vals = [v % 2**32 for v in random_u32(50000, 21)]
        for algo in ["lookback", "reduce-then-scan"]:
            got, _ = self.scan(vals, "I", "--keys", "u32", "--algo", algo)
            self.assertEqual(got, [v % 2**32 for v in itertools.accumulate(vals)])
            got, _ = self.scan(vals, "I", "--keys", "u32", "--exclusive", "--algo", algo)
            self.assertEqual(got, [0] + [v % 2**32 for v in itertools.accumulate(vals)][:-1])
        signed = [v - 2**31 for v in vals]
        got, _ = self.scan(signed, "i", "--keys", "i32", "--op", "min")
        self.assertEqual(got, list(itertools.accumulate(signed, min)))
        got, _ = self.scan(signed, "i", "--keys", "i32", "--op", "max", "--exclusive")
        self.assertEqual(got, [-2**31] + list(itertools.accumulate(signed, max))[:-1])

    def test_widened_accumulator(self):
        import itertools
        vals = [2**32 - 1 - (v % 1000) for v in random_u32(20000, 4)]  # would wrap in u32
        got, _ = self.scan(vals, "I", "--keys", "u32", "--acc", "u64", out_fmt="Q")
        self.assertEqual(got, list(itertools.accumulate(vals)))
        inp = self.write("w.bin", u32(vals))
        p = run(["reduce", "--keys", "u32", "--acc", "u64", inp])
        self.assertEqual((p.returncode, p.stdout.decode()), (0, f"{sum(vals)}\n"))
        p = run(["reduce", "--keys", "u32", inp])
        self.assertEqual(p.stdout.decode(), f"{sum(vals) % 2**32}\n")

    def test_float_sums_within_the_documented_bound(self):
        import math
        import struct
        vals = [((v % 2**20) - 2**19) / 2**10 * 2.0 ** (v % 9 - 4) for v in random_u32(30000, 8)]
        for keys, fmt in [("f32", "f"), ("f64", "d")]:
            rounded = list(struct.unpack(f"<{len(vals)}{fmt}", struct.pack(f"<{len(vals)}{fmt}", *vals)))
            eps = 2.0 ** -24 if keys == "f32" else 2.0 ** -53
            for algo in ["lookback", "reduce-then-scan"]:
                got, _ = self.scan(rounded, fmt, "--keys", keys, "--algo", algo)
                exact, magnitude = 0.0, 0.0
                for i, (x, g) in enumerate(zip(rounded, got)):
                    exact += x  # doubles; fsum below for the total
                    magnitude += abs(x)
                    d = i // 1024 + 1 + 64
                    self.assertLessEqual(abs(g - exact), d * eps / (1 - d * eps) * magnitude + 1e-12 * magnitude,
                                         f"{keys} {algo} element {i}")
                self.assertAlmostEqual(got[-1], math.fsum(rounded), delta=magnitude * 1e-3)

    def test_deterministic_float_sums(self):
        import struct
        vals = [((v % 2**24) - 2**23) / 2**12 for v in random_u32(1000000, 17)]
        self.write("f.bin", struct.pack(f"<{len(vals)}f", *vals))
        outs = set()
        for i in range(3):
            p = run(["scan", "-q", "--keys", "f32", "--deterministic", self.path("f.bin"), self.path(f"o{i}")])
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.add(self.read(f"o{i}"))
        self.assertEqual(len(outs), 1)
        p = run(["reduce", "--keys", "f32", self.path("f.bin")])
        self.assertEqual(p.returncode, 0)

    def test_reduce(self):
        import struct
        vals = [3.5, -1.25, float("inf"), -0.0, 2.0]
        inp = self.write("d.bin", struct.pack("<5d", *vals))
        self.assertEqual(run(["reduce", "--keys", "f64", "--op", "max", inp]).stdout, b"inf\n")
        self.assertEqual(run(["reduce", "--keys", "f64", "--op", "min", inp]).stdout, b"-1.25\n")
        self.assertEqual(run(["reduce", "--keys", "f64", inp]).stdout, b"inf\n")
        ints = self.write("i.bin", struct.pack("<4q", -5, 2**62, -2**63, 7))
        self.assertEqual(run(["reduce", "--keys", "i64", "--op", "min", ints]).stdout.decode(), f"{-2**63}\n")
        self.assertEqual(run(["reduce", "--keys", "i64", "--op", "max", ints]).stdout.decode(), f"{2**62}\n")
        empty = self.write("e.bin", b"")
        self.assertEqual(run(["reduce", "--keys", "u32", empty]).stdout, b"0\n")
        self.assert_error(run(["reduce", "--keys", "u32", "--op", "min", empty]), 2, "no elements")

    def test_pipes_empty_and_checksum(self):
        p = run(["scan", "--keys", "u32", "-", "-"], data=u32([1, 2, 3]))
        self.assertEqual((p.returncode, p.stdout), (0, u32([1, 3, 6])))
        self.assertEqual(self.checksum_line(p).split(" = ")[0], "XXH3 (-)")
        empty = self.write("e.bin", b"")
        p = run(["scan", "--keys", "u32", empty, self.path("o")])
        self.assertEqual((p.returncode, self.read("o")), (0, b""))
        inp = self.write("in.bin", u32(random_u32(1000, 2)))
        p = run(["scan", "--keys", "u32", inp, self.path("s")])
        listing = self.write("sums.txt", (self.checksum_line(p) + "\n").encode())
        self.assertEqual(subprocess.run(["xxhsum", "-c", listing], capture_output=True).returncode, 0)

    def test_usage_errors(self):
        inp = self.write("in.bin", bytes(16))
        o = self.path("o")
        for args, fragment in [
            (["scan", "--keys", "u64", "--acc", "u32", inp, o], "narrower"),
            (["scan", "--keys", "f32", "--acc", "i64", inp, o], "float accumulator"),
            (["scan", "--keys", "f32", "--algo", "lookback", "--deterministic", inp, o], "--deterministic"),
            (["scan", "--keys", "u32", "--op", "mean", inp, o], "--op"),
            (["scan", "--keys", "u32", "--algo", "fast", inp, o], "--algo"),
            (["scan", inp, o], "--keys"),
            (["reduce", "--keys", "u32", inp, o], "too many arguments"),
        ]:
            self.assert_error(run(args), 2, fragment)
        self.assert_error(run(["scan", "--keys", "u64", self.write("odd.bin", bytes(12)), o]), 2, "12 bytes")
        self.assert_no_temp_files()


class Limits(CliTest):
    def test_inputs_past_the_largest_buffer(self):
        """At the largest size one buffer holds and one past it: scans go in chunks and sorts out
        of core, every element counting."""
        import itertools
        small = {"GPUSORT_MAX_BINDING_BYTES": "4108"}  # 1027 u32 keys; scans take 4096 bytes: 1024
        for n in [1024, 1025, 5000]:
            vals = [(i * 7919) % 1000 + 1 for i in range(n)]
            inp = self.write("s.bin", u32(vals))
            p = run(["scan", "-f", "--keys", "u32", inp, self.path("o")], env=small)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(u32_list(self.read("o")), list(itertools.accumulate(vals)))
            r = run(["reduce", "--keys", "u32", inp], env=small)
            self.assertEqual(r.stdout.decode(), f"{sum(vals)}\n")
        for n, in_core in [(1027, True), (1028, False), (7000, False)]:
            vals = random_u32(n, 3)
            inp = self.write("k.bin", u32(vals))
            p = run(["-f", "--keys", "u32", inp, self.path("o")], env=small)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual("partition" not in p.stderr.decode(), in_core, p.stderr.decode())
            self.assertEqual(u32_list(self.read("o")), sorted(vals))
        self.assert_no_temp_files()

    def test_tile_shapes_within_the_device(self):
        """A tuning knob asking for a sort workgroup the device cannot run is refused with one
        line (exit 2) and no output; the look-back family keeps its tiles within the device's
        subgroups per workgroup (lavapipe: 32 of 8 lanes) when the scan's knob asks for more
        (the scan's own tiles refuse it, so the sort here is bitonic: at most 2^14 keys)."""
        default = [line for line in run(["devices"]).stdout.splitlines() if line.startswith(b"*")]
        if not default or b"llvmpipe" not in default[0]:
            self.skipTest("the limits below are lavapipe's")
        vals = random_u32(16000, 5)  # two of rle's 8192-key tiles (256 x 8 rows) on lavapipe, bitonic sort's 2^14 at most
        inp = self.write("k.bin", u32(vals))
        for workgroup, text in [("512", "does not suit this device"), ("96", "power of two subgroups")]:
            p = run(["--keys", "u32", inp, self.path("o")], env={"GPUSORT_SORT_WORKGROUP": workgroup})
            self.assert_error(p, 2, text)
            self.assertFalse(os.path.exists(self.path("o")))
        keys = [v % 50 for v in vals]  # sort --rle: the run counts of the look-back family's kernel
        p = run(["sort", "--rle", "-f", "--keys", "u32", self.write("r.bin", u32(keys)), self.path("o")],
                env={"GPUSORT_SCAN_WORKGROUP": "512"})
        self.assertEqual(p.returncode, 0, p.stderr)
        got = u32_list(self.read("o"))
        want = [x for v in sorted(set(keys)) for x in (v, keys.count(v))]
        self.assertEqual(got, want)
        self.assert_no_temp_files()

    def test_pipeline_cache(self):
        """Pipelines are kept on disk for the next run; a corrupt file is ignored and replaced, an
        unwritable place is no error, and GPUSORT_PIPELINE_CACHE=0 keeps none."""
        inp = self.write("in.bin", u32(random_u32(3000, 5)))
        cache = self.path("cache")
        env = {"XDG_CACHE_HOME": cache}
        for _ in range(2):
            p = run(["-f", "--keys", "u32", inp, self.path("o")], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
        files = os.listdir(os.path.join(cache, "gpusort"))
        self.assertEqual(len(files), 1, files)
        self.assertRegex(files[0], r"^pipelines-[0-9a-f]{4,8}-[0-9a-f]{4,8}-[0-9a-f]{32}\.bin$")
        name = os.path.join(cache, "gpusort", files[0])
        with open(name, "rb") as f:
            self.assertEqual(f.read(16), b"gpusort-pcache1\0")
        with open(name, "wb") as f:
            f.write(b"gpusort-pcache1\0" + bytes(range(256)) * 4)
        p = run(["-f", "--keys", "u32", inp, self.path("o")], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(u32_list(self.read("o")), sorted(random_u32(3000, 5)))
        with open(name, "rb") as f:
            data = f.read()
        # the replaced file is whole again: its length field matches
        self.assertEqual(int.from_bytes(data[16:24], "little"), len(data) - 32)
        blocked = self.write("not-a-dir", b"x")
        p = run(["-f", "--keys", "u32", inp, self.path("o")], env={"XDG_CACHE_HOME": blocked})
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run(["-f", "--keys", "u32", inp, self.path("o")],
                env={"XDG_CACHE_HOME": self.path("off"), "GPUSORT_PIPELINE_CACHE": "0"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.path("off"), "gpusort")))  # (the driver may keep its own)
    def test_bash_completion(self):
        """The completion offers commands, each command's own options (exactly those its help
        lists) and type names."""
        script = os.path.join(os.path.abspath(ROOT), "data", "completion", "gpusort.bash")

        def complete(*words):
            line = " ".join(words)
            code = (f"source {shlex.quote(script)}; COMP_WORDS=({line}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); "
                    "_gpusort; printf '%s\\n' \"${COMPREPLY[@]}\"")
            p = subprocess.run(["bash", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.dir)
            self.assertEqual((p.returncode, p.stderr), (0, b""))
            return set(p.stdout.decode().split())

        self.assertEqual(complete("gpusort", "sc"), {"scan"})
        self.assertEqual(complete("gpusort", "scan", "--keys", "f"), {"f32", "f64", "float32", "float64"})
        for command in ["sort", "check", "scan", "reduce", "select", "partition", "unique", "rle", "reduce-by-key",
                        "gen", "bench", "devices"]:
            offered = {o for o in complete("gpusort", command, "-") if o.startswith("--")}
            p = run(["help", command])
            self.assertEqual(p.returncode, 0, p.stderr)
            options_part = p.stdout.decode().split("Exit status:")[0]  # (which names other commands' options)
            documented = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", options_part))
            documented.discard("--tag")  # xxhsum's, in the report's description
            self.assertEqual(offered, documented, command)

    def test_output_is_mapped(self):
        """A regular output is reserved, mapped and faulted in ahead (the fast path), not written
        with pwrite(), wherever the file system allocates ahead; GPUSORT_TRACE says which."""
        vals = random_u32(50000, 9)
        inp = self.write("in.bin", u32(vals))
        for args in [["--keys", "u32"], ["scan", "--keys", "u32"]]:
            p = run(args + ["-f", inp, self.path("o")], env={"GPUSORT_TRACE": "1"})
            self.assertEqual(p.returncode, 0, p.stderr)
            trace = p.stderr.decode()
            if "posix_fallocate:" in trace:
                self.skipTest("this file system allocates no space ahead")
            self.assertIn("faulted in", trace)
            self.assertIn("output unmapped", trace)
            self.assertNotIn("pwrite()", trace)
            # each run replaced the previous output: held open through the rename, released later
            if args[0] == "scan":
                self.assertIn("replaced file released", trace)
        self.assertEqual(len(self.read("o")), len(vals) * 4)
        # the replaced file is released, never changed: another link to it keeps its bytes
        os.link(self.path("o"), self.path("o-link"))
        before = self.read("o-link")
        p = run(["-f", "--keys", "u32", inp, self.path("o")], env={"GPUSORT_TRACE": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.read("o-link"), before)
        self.assertEqual(u32_list(self.read("o")), sorted(vals))
        self.assert_no_temp_files()


    def test_sync(self):
        inp = self.write("in.bin", u32(random_u32(3000, 1)))
        for args in [["--keys", "u32"], ["scan", "--keys", "u32"]]:
            p = run(args + ["--sync", "-f", inp, self.path("o")])
            self.assertEqual(p.returncode, 0, p.stderr)
        p = run(["gen", "-q", "--keys", "u32", "-n", "10", "--sync", self.path("g")])
        self.assertEqual((p.returncode, len(self.read("g"))), (0, 40))


class Robustness(CliTest):
    def test_gpu_stage_past_timeout_is_an_error(self):
        gen = run(["gen", "-q", "--keys", "u32", "-n", "2^21", self.path("in.bin")])
        self.assertEqual(gen.returncode, 0, gen.stderr)
        p = run(["--keys", "u32", "--timeout", "0.0001", self.path("in.bin"), self.path("o")], timeout=120)
        self.assert_error(p, 1, "GPU stall", "did not finish within")
        self.assertFalse(os.path.exists(self.path("o")))
        self.assert_no_temp_files()

    def test_interrupted_run_leaves_nothing(self):
        """SIGINT or SIGTERM while the output's temporary file exists: the process dies of the
        signal, and neither the temporary file nor the output remains."""
        import signal
        import time
        for sig in (signal.SIGINT, signal.SIGTERM):
            out = self.path("big.bin")
            proc = subprocess.Popen([GPUSORT, "gen", "-q", "--keys", "u64", "-n", "2^27", out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.time() + 60
            while proc.poll() is None and time.time() < deadline:
                if any(".gpusort-" in f for f in os.listdir(self.dir)):
                    break
                time.sleep(0.001)
            self.assertIsNone(proc.poll(), "gen ended before it could be interrupted")
            proc.send_signal(sig)
            proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, -sig)
            self.assertFalse(os.path.exists(out))
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
        # --json: an object a line, one of them the default
        p = run(["devices", "--json"], env={"GPUSORT_SCAN_WORKGROUP": "64"})
        self.assertEqual(p.returncode, 0, p.stderr)
        devices = [json.loads(l) for l in p.stdout.decode().splitlines()]
        self.assertEqual([d["index"] for d in devices], list(range(len(devices))))
        chosen = [d for d in devices if d["default"]]
        self.assertEqual(len(chosen), 1, devices)
        self.assertTrue(chosen[0]["usable"])
        self.assertEqual(chosen[0]["scan_workgroup_size"], 64)
        self.assertGreater(chosen[0]["subgroup_size"], 0)
        # -v: the configuration, knobs included (the look-back family's workgroup follows the scan's knob)
        p = run(["devices", "-v"], env={"GPUSORT_SCAN_WORKGROUP": "64", "GPUSORT_COMPACT_SUBTILES": "3"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.decode(), r"preset \S+ \(tuned by GPUSORT_\*\): sort tiles of \d+ invocations")
        self.assertIn("scan tiles of 64 invocations", p.stdout.decode())
        self.assertIn("look-back family tiles of up to 64 invocations (select's and partition's in up to 3 "
                      "sub-tiles)", p.stdout.decode())
        # the small sorts' tiles and small scans' rows (gpusort_device_info's), from their knobs
        p = run(["devices", "-v"], env={"GPUSORT_SORT_SMALL_TILES": "64x4,64x8@16", "GPUSORT_SCAN_SMALL_ROWS": "2@8"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("small sorts: tiles of 64 x 4, 64 x 8 keys, each taken by sorts of at least 16 such tiles",
                      p.stdout.decode())
        self.assertIn("small scans: tiles of 2 rows, taken by look-back scans of fewer elements than 8 of their own",
                      p.stdout.decode())
        self.assertNotIn("select and partition: each tile reads", p.stdout.decode())  # (lavapipe: none)
        # select's and partition's read-ahead, from its knob
        p = run(["devices", "-v"], env={"GPUSORT_COMPACT_READ_AHEAD_KIB": "64"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.decode(), r"preset \S+ \(tuned by GPUSORT_\*\)")
        self.assertIn("select and partition: each tile reads the input 64 KiB past its own into cache before its "
                      "look-back", p.stdout.decode())
        # the family's early walk, from its knob (lavapipe's preset has none)
        self.assertNotIn("one subgroup of each tile walks", p.stdout.decode())
        p = run(["devices", "-v"], env={"GPUSORT_COMPACT_EARLY_WALK": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.decode(), r"preset \S+ \(tuned by GPUSORT_\*\)")
        self.assertIn("unique, rle and reduce-by-key: one subgroup of each tile walks the look-back while the others "
                      "load the tile's keys",
                      p.stdout.decode())
        # some of the members (as NVIDIA's preset has unique and rle), in the family's order
        for members, named in (("rle", "rle"), ("reduce-by-key,unique", "unique and reduce-by-key")):
            p = run(["devices", "-v"], env={"GPUSORT_COMPACT_EARLY_WALK": members})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"\n        {named}: one subgroup of each tile walks the look-back", p.stdout.decode())
        # the look-back scan's early walk and its read-ahead, from their knobs (lavapipe's preset has none)
        self.assertNotIn("look-back scan: one subgroup", p.stdout.decode())
        p = run(["devices", "-v"], env={"GPUSORT_SCAN_EARLY_WALK": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.decode(), r"preset \S+ \(tuned by GPUSORT_\*\)")
        self.assertIn("look-back scan: one subgroup of each tile walks the look-back while the others load the "
                      "tile's elements", p.stdout.decode())
        self.assertNotIn("look-back scan: the walking subgroup reads", p.stdout.decode())
        p = run(["devices", "-v"], env={"GPUSORT_SCAN_EARLY_WALK": "1", "GPUSORT_SCAN_READ_AHEAD_KIB": "64"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("look-back scan: the walking subgroup reads the input 64 KiB past its tile into cache as it walks",
                      p.stdout.decode())
        # (no walk, no read-ahead)
        p = run(["devices", "-v"], env={"GPUSORT_SCAN_EARLY_WALK": "0", "GPUSORT_SCAN_READ_AHEAD_KIB": "64"})
        self.assertNotIn("look-back scan: the walking subgroup reads", p.stdout.decode())
        # float keys' tiles a key fewer, from their knob (lavapipe's preset has none)
        self.assertNotIn("float keys: tiles", p.stdout.decode())
        p = run(["devices", "-v"], env={"GPUSORT_SORT_FLOAT_FEWER_KEYS": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.decode(), r"preset \S+ \(tuned by GPUSORT_\*\)")
        self.assertIn("float keys: tiles of a key an invocation fewer for 32-bit keys alone, "
                      "32-bit keys with 32-bit values, 32-bit keys with 64-bit values, 64-bit keys alone and 64-bit "
                      "keys with values", p.stdout.decode())

    def test_bench(self):
        p = run(["bench", "--sizes", "2^10,5000", "--reps", "3"])
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.decode()
        self.assertIn("copy GB/s", out)
        self.assertEqual(len(re.findall(r"^\s+(1024|5000)\s.*\bok\s+\d+x\d+$", out, re.M)), 2, out)
        p = run(["bench", "--keys", "u64", "--values", "u32", "--sizes", "3000", "--reps", "2"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.decode(), r"(?m)^\s+3000\s.*\bok\s+\d+x\d+$")
        # each size's tile: a small sort's where 8 of the next larger tile exceed its keys
        p = run(["bench", "--algo", "onesweep", "--sizes", "1000,5000,100000", "--reps", "1"],
                env={"GPUSORT_SORT_SMALL_TILES": "64x4,64x8@8"})
        self.assertEqual(p.returncode, 0, p.stderr)
        tiles = re.findall(r"(?m)^\s+(\d+)\s.*\bok\s+(\d+x\d+)$", p.stdout.decode())
        self.assertEqual(tiles[:2], [("1000", "64x4"), ("5000", "64x8")], p.stdout.decode())
        self.assertEqual(tiles[2][0], "100000")
        invocations, keys = map(int, tiles[2][1].split("x"))
        self.assertGreater(invocations * keys, 512, p.stdout.decode())
        for dist in ["equal", "reversed", "entropy:3"]:  # each checked on the host
            p = run(["bench", "--keys", "i64", "--dist", dist, "--sizes", "3001", "--reps", "2"])
            self.assertEqual(p.returncode, 0, p.stderr)
            out = p.stdout.decode()
            self.assertIn(f"distribution {dist} (seed 1)", out)
            self.assertRegex(out, r"(?m)^\s+3001\s.*\bok\s+\d+x\d+$")
        line = run(["bench", "--json", "--dist", "sorted", "--sizes", "1000", "--reps", "1"]).stdout
        self.assertEqual((json.loads(line)["distribution"], json.loads(line)["checked"]), ("sorted", True))
        # the histogram pass's time beside each pass's: with -v, and in --json
        r = json.loads(run(["bench", "--json", "--algo", "onesweep", "--sizes", "5000", "--reps", "1"]).stdout)
        self.assertTrue(0 < r["histogram_seconds"] < r["sort_seconds"], r)
        out = run(["bench", "-v", "--algo", "onesweep", "--sizes", "5000", "--reps", "1"]).stdout.decode()
        self.assertRegex(out, r"(?m)^\s+histogram ms: \d+\.\d{3}$")
        self.assertRegex(out, r"(?m)^\s+passes ms:( \d+\.\d{3}){4}$")
        self.assert_error(run(["bench", "--dist", "zipf", "--sizes", "1000"]), 2, "unknown distribution 'zipf'")
        self.assert_error(run(["bench", "--compact", "--dist", "equal"]), 2, "takes no --dist")

    def test_bench_scan_algorithms(self):
        p = run(["bench", "--scan-algos", "--sizes", "5000", "--reps", "2"])
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.decode()
        for name in ["copy", "look-back", "reduce-then-scan", "Hillis-Steele", "Blelloch (global)",
                     "Blelloch (shared", "subgroup blocked"]:
            self.assertIn(name, out)
        self.assertEqual(len(re.findall(r"\bok$", out, re.M)), 6, out)


if __name__ == "__main__":
    GPUSORT, ROOT = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
