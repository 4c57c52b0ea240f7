#!/usr/bin/env python3
"""Faults: a file-size limit, an input truncated while mapped, a full disk, read-only and
vanished output directories, SIGINT and SIGTERM, failed GPU memory allocations and stalled GPU
stages. Each ends with its documented status and, but for the signals, one line on stderr;
none loses or corrupts data: no output (or the one it would replace, unchanged), no temporary
file, the input's bytes unchanged.

usage: test_faults.py GPUSORT [unittest options]
"""
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

GPUSORT = None


def run(args, env=None, timeout=300, preexec_fn=None, stdout=subprocess.PIPE):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([GPUSORT] + args, stdout=stdout, stderr=subprocess.PIPE, env=full_env,
                          timeout=timeout, preexec_fn=preexec_fn)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def file_size_limit(limit):
    """A preexec_fn: the limit of `ulimit -f`, SIGXFSZ at its default (it kills), as a shell leaves it."""
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    return apply


def children_of(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(entry))
    return kids


class FaultTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-faults-")
        self.inputs = {}  # path: its hash when made

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def gen(self, name, n, *layout):
        """An input of `n` records made by `gpusort gen` (u32 keys unless `layout` says); its bytes
        are checked after each case."""
        p = run(["gen", "-q", "-f", "-n", str(n)] + list(layout or ["--keys", "u32"]) + [self.path(name)])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.inputs[self.path(name)] = sha256(self.path(name))
        return self.path(name)

    def existing_output(self, name):
        """An output left by an earlier run, and its hash: a failed run must keep it as it was."""
        with open(self.path(name), "wb") as f:
            f.write(b"the previous output\n")
        return self.path(name), sha256(self.path(name))

    def assert_one_line(self, proc, code, *fragments):
        err = proc.stderr.decode()
        self.assertEqual(proc.returncode, code, err)
        lines = err.strip("\n").split("\n")
        self.assertEqual(len(lines), 1, "expected one line on stderr, got:\n" + err)
        self.assertTrue(lines[0].startswith("gpusort: "), lines[0])
        for fragment in fragments:
            self.assertIn(fragment.lower(), lines[0].lower())

    def assert_nothing_lost(self, outputs=(), kept=None):
        """No temporary file anywhere in the test's directory; each of `outputs` absent, or for
        `kept` (path: hash), still the file it was; every input's bytes as they were made."""
        for root, _, files in os.walk(self.dir):
            left = [f for f in files if ".gpusort-" in f]
            self.assertEqual(left, [], f"temporary files left behind in {root}")
        for out in outputs:
            self.assertFalse(os.path.exists(out), f"{out} was written")
        for out, digest in (kept or {}).items():
            self.assertEqual(sha256(out), digest, f"{out} was changed")
        for path, digest in self.inputs.items():
            self.assertEqual(sha256(path), digest, f"the input {path} was changed")

    def start(self, args):
        return subprocess.Popen([GPUSORT] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait_for_temp_file(self, proc, directory, timeout=120):
        """Returns once the output's temporary file exists in `directory`, the run still going."""
        deadline = time.time() + timeout
        while proc.poll() is None and time.time() < deadline:
            if any(".gpusort-" in f for f in os.listdir(directory)):
                return
            time.sleep(0.001)
        self.assertIsNone(proc.poll(), "the run ended before its output's temporary file was seen")
        self.fail("no temporary file appeared")


class FileSizeLimit(FaultTest):
    """`ulimit -f` below the output's size: exit 1 and a message, never death by SIGXFSZ."""
    LIMIT = 1 << 20

    def test_sort_scan_gen_past_the_limit(self):
        inp = self.gen("in.bin", 1 << 20)  # 4 MiB
        out = self.path("out.bin")
        cases = [
            ["sort", "--keys", "u32", inp, out],
            ["sort", "--keys", "u32", "--argsort", "--index-type", "u64", inp, out],
            ["sort", "--mem-limit", "8M", "--keys", "u32", inp, out],  # out of core
            ["sort", "--keys", "u16", inp, out],  # keys of another form
            ["sort", "--keys", "u32", "--record-size", "16", inp, out],
            ["scan", "--keys", "u32", "--acc", "u64", inp, out],
            ["gen", "--keys", "u32", "-n", "2^20", out],
        ]
        for args in cases:
            with self.subTest(args=args):
                p = run(args[:1] + ["-q"] + args[1:], preexec_fn=file_size_limit(self.LIMIT))
                self.assert_one_line(p, 1, "cannot", "out.bin", "File too large")
                self.assert_nothing_lost([out])

    def test_existing_output_is_kept(self):
        inp = self.gen("in.bin", 1 << 20)
        old, digest = self.existing_output("old.bin")
        p = run(["-q", "-f", "--keys", "u32", inp, old], preexec_fn=file_size_limit(self.LIMIT))
        self.assert_one_line(p, 1, "old.bin", "File too large")
        self.assert_nothing_lost(kept={old: digest})

    def test_stdout_to_a_file(self):
        """The limit reached writing stdout (a file the shell opened): exit 1, named stdout."""
        inp = self.gen("in.bin", 1 << 20)
        with open(self.path("stdout.bin"), "wb") as f:
            p = run(["-q", "--keys", "u32", inp], stdout=f, preexec_fn=file_size_limit(self.LIMIT))
        self.assert_one_line(p, 1, "cannot write stdout", "File too large")
        self.assert_nothing_lost()


class TruncatedInput(FaultTest):
    """Another process truncates the input while gpusort has it mapped: exit 1, a message
    naming the input, no SIGBUS."""

    def truncate_mid_run(self, args, n, *layout):
        victim = self.gen("victim.bin", n, *layout)
        del self.inputs[victim]  # truncated on purpose
        out = self.path("out.bin")
        proc = self.start(["-q"] + args + [victim, out])
        self.wait_for_temp_file(proc, self.dir)
        os.truncate(victim, 1000)
        _, err = proc.communicate(timeout=300)
        p = subprocess.CompletedProcess(proc.args, proc.returncode, b"", err)
        self.assert_one_line(p, 1, "cannot read " + victim, "shorter")
        self.assert_nothing_lost([out])

    def test_read_through_the_mapping(self):
        """u16 keys: normalized and gathered by host threads from the mapping."""
        self.truncate_mid_run(["--keys", "u16"], 1500000)

    def test_records_gathered_on_the_host(self):
        self.truncate_mid_run(["--keys", "bytes:10", "--record-size", "100"], 300000, "--keys", "u32",
                              "--record-size", "100")

    def test_read_with_pread(self):
        """u32 keys: read into staging with pread, which sees the file end early."""
        self.truncate_mid_run(["--keys", "u32"], 1 << 24)


class SmallFileSystem(FaultTest):
    """Outputs and scratch files on a file system that is full, read-only, or removed."""

    def mount_tmpfs(self, where, options):
        """Mounts a tmpfs at `where`; False where mounting is not allowed."""
        os.makedirs(where, exist_ok=True)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", where], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        return p.returncode == 0

    def in_namespace(self):
        """Whether `unshare -rm` (a user and mount namespace) can mount a tmpfs here."""
        p = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return p.returncode == 0

    def tmpfs_or_skip(self, what):
        """How a tmpfs is mounted here: "mount" (as root), else "namespace" (unshare -rm); where
        neither can, the case is skipped with a SKIP line."""
        probe = self.path("probe")
        if self.mount_tmpfs(probe, "size=1m"):
            subprocess.run(["umount", probe])
            return "mount"
        if self.in_namespace():
            return "namespace"
        print(f"SKIP: {what}: neither mount nor unshare -rm can mount a tmpfs here", file=sys.stderr)
        self.skipTest("cannot mount a tmpfs")

    def run_on_tmpfs(self, how, options, args):
        """Runs gpusort with `args` (in which {fs} is the tmpfs) on a fresh tmpfs mounted `how`.
        Returns the result and the files on the tmpfs after the run."""
        fs = self.path("fs")
        args = [a.replace("{fs}", fs) for a in args]
        if how == "mount":
            self.assertTrue(self.mount_tmpfs(fs, options))
            try:
                return run(args), sorted(os.listdir(fs))
            finally:
                subprocess.run(["umount", fs])
        os.makedirs(fs, exist_ok=True)
        listing = self.path("listing")
        script = 'mount -t tmpfs -o "$1" tmpfs "$2" || exit 99; d=$2; l=$3; shift 3; "$@"; s=$?; ls -A "$d" > "$l"; exit $s'
        p = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", options, fs, listing, GPUSORT] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        self.assertNotEqual(p.returncode, 99, p.stderr)
        with open(listing) as f:
            return p, sorted(f.read().split())

    def test_disk_full(self):
        inp = self.gen("in.bin", 1 << 20)  # 4 MiB, on a tmpfs of 1 MiB
        cases = [
            (["-q", "--keys", "u32", inp, "{fs}/out.bin"], "out.bin"),
            (["-q", "--keys", "u16", inp, "{fs}/out.bin"], "out.bin"),
            (["scan", "-q", "--keys", "u32", inp, "{fs}/out.bin"], "out.bin"),
            (["gen", "-q", "--keys", "u32", "-n", "2^20", "{fs}/out.bin"], "out.bin"),
        ]
        how = self.tmpfs_or_skip("disk full")
        for args, name in cases:
            with self.subTest(args=args):
                p, left = self.run_on_tmpfs(how, "size=1m", args)
                self.assert_one_line(p, 1, name, "No space left on device")
                self.assertEqual(left, [], "the full file system keeps files")
                self.assert_nothing_lost()

    def test_disk_full_for_scratch_files(self):
        """Out of core, the output fits but the work file beside it does not."""
        inp = self.gen("in.bin", 1 << 20)
        how = self.tmpfs_or_skip("disk full for scratch files")
        p, left = self.run_on_tmpfs(how, "size=6m", ["-q", "--mem-limit", "8M", "--keys", "u32", "--argsort", inp,
                                                     "{fs}/out.bin"])
        self.assert_one_line(p, 1, "No space left on device")
        self.assertEqual(left, [])
        self.assert_nothing_lost()

    def test_read_only_file_system(self):
        inp = self.gen("in.bin", 1 << 16)
        how = self.tmpfs_or_skip("read-only file system")
        p, left = self.run_on_tmpfs(how, "size=1m,ro", ["-q", "--keys", "u32", inp, "{fs}/out.bin"])
        self.assert_one_line(p, 1, "out.bin", "Read-only file system")
        self.assertEqual(left, [])
        self.assert_nothing_lost()

    def test_read_only_directory(self):
        """A directory without write permission: as an unprivileged user, since root ignores it."""
        os.chmod(self.dir, 0o755)
        inp = self.gen("in.bin", 1 << 16)
        os.chmod(inp, 0o644)
        ro = self.path("ro")
        os.mkdir(ro, 0o555)
        os.chmod(ro, 0o555)
        exe, prefix = GPUSORT, []
        if os.geteuid() == 0:
            exe = self.path("gpusort")  # reachable by any user, wherever the build is
            shutil.copy(GPUSORT, exe)
            os.chmod(exe, 0o755)
            if shutil.which("setpriv"):
                prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            else:
                prefix = ["runuser", "-u", "nobody", "--"]
        env = dict(os.environ, GPUSORT_PIPELINE_CACHE="0", HOME=self.dir)
        for args in (["-q", "--keys", "u32"], ["scan", "-q", "--keys", "u32"]):
            with self.subTest(args=args):
                p = subprocess.run(prefix + [exe] + args + [inp, os.path.join(ro, "out.bin")], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=env, timeout=300)
                self.assert_one_line(p, 1, "out.bin", "Permission denied")
                self.assertEqual(os.listdir(ro), [])
                self.assert_nothing_lost()

    def test_output_directory_removed_mid_run(self):
        inp = self.gen("in.bin", 5000000)
        for args in (["--keys", "u32"], ["--mem-limit", "8M", "--keys", "u32"]):
            with self.subTest(args=args):
                gone = self.path("gone")
                os.mkdir(gone)
                proc = self.start(["-q"] + args + [inp, os.path.join(gone, "out.bin")])
                self.wait_for_temp_file(proc, gone)
                shutil.rmtree(gone)
                _, err = proc.communicate(timeout=300)
                p = subprocess.CompletedProcess(proc.args, proc.returncode, b"", err)
                self.assert_one_line(p, 1, "No such file or directory")
                self.assertFalse(os.path.exists(gone))
                self.assert_nothing_lost()


class Signals(FaultTest):
    """SIGINT and SIGTERM while the output's temporary file exists: it is removed and the run
    dies of the signal, so a shell sees exactly 130 and 143."""

    def interrupt(self, args, sig, out_dir):
        # sh reports the status as a user sees it; gpusort is its child, signalled alone
        shell = subprocess.Popen(["sh", "-c", '"$@"; echo "$?"', "sh", GPUSORT] + args, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        self.wait_for_temp_file(shell, out_dir)
        kids = children_of(shell.pid)
        self.assertEqual(len(kids), 1, kids)
        os.kill(kids[0], sig)
        status, err = shell.communicate(timeout=120)
        self.assertEqual(status.decode().strip(), str(128 + sig), err.decode())

    def test_sigint_and_sigterm(self):
        inp = self.gen("in.bin", 1 << 24)  # a second or more on lavapipe
        old, digest = self.existing_output("old.bin")
        for sig in (signal.SIGINT, signal.SIGTERM):
            for args, out in ((["-q", "--keys", "u32", inp], self.path("out.bin")),
                              (["-q", "-f", "--keys", "u32", inp], old),
                              (["scan", "-q", "--keys", "u32", "--acc", "u64", inp], self.path("out.bin"))):
                with self.subTest(sig=sig, args=args):
                    self.interrupt(args + [out], sig, self.dir)
                    if out == old:
                        self.assert_nothing_lost(kept={old: digest})
                    else:
                        self.assert_nothing_lost([out])


class AllocationFailure(FaultTest):
    """GPUSORT_TEST_FAIL_ALLOC_BYTES=N fails every device memory allocation over N bytes, as a
    device out of memory would: a sort goes on out of core in smaller pieces and gives the same
    bytes; where no piece is small enough, exit 1 and a message."""

    def test_sort_retries_in_smaller_pieces(self):
        inp = self.gen("in.bin", 1 << 20)  # 4 MiB of keys
        for args in (["--keys", "u32"], ["--keys", "u32", "--descending", "--argsort"],
                     ["--keys", "u32", "--values", "u32"]):
            with self.subTest(args=args):
                expected, got = self.path("expected.bin"), self.path("got.bin")
                p = run(["-q", "-f"] + args + [inp, expected])
                self.assertEqual(p.returncode, 0, p.stderr)
                # 1 MiB: the first smaller pieces fit; 64 KiB: only after halving the budget many times
                for limit in (1 << 20, 1 << 16):
                    p = run(["-f"] + args + [inp, got], env={"GPUSORT_TEST_FAIL_ALLOC_BYTES": str(limit)})
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn("partition", p.stderr.decode())  # (out of core)
                    self.assertEqual(sha256(got), sha256(expected), limit)
                    self.assert_nothing_lost()

    def test_clear_error_when_nothing_fits(self):
        inp = self.gen("in.bin", 1 << 20)
        old, digest = self.existing_output("old.bin")
        fail = {"GPUSORT_TEST_FAIL_ALLOC_BYTES": "4096"}
        for args in (["-q", "--keys", "u32", inp], ["-q", "--keys", "u16", inp], ["scan", "-q", "--keys", "u32", inp]):
            with self.subTest(args=args):
                out = self.path("out.bin")
                self.assert_one_line(run(args + [out], env=fail), 1, "out of GPU memory")
                self.assert_one_line(run(args[:1] + ["-f"] + args[1:] + [old], env=fail), 1, "out of GPU memory")
                self.assert_nothing_lost([out], kept={old: digest})
        self.assert_one_line(run(["reduce", "-q", "--keys", "u32", inp], env=fail), 1, "out of GPU memory")


class Stall(FaultTest):
    """A GPU stage past --timeout is an error naming the stall, in every kind of job; never a hang
    (each run is given two minutes)."""

    def test_every_job_kind(self):
        inp = self.gen("in.bin", 2100000)
        out = self.path("out.bin")
        for args in (["--keys", "u32", inp, out],
                     ["--mem-limit", "8M", "--keys", "u32", inp, out],  # out of core
                     ["--keys", "u16", inp, out],
                     ["--keys", "u32", "--record-size", "8", inp, out],
                     ["scan", "--keys", "u32", inp, out],
                     ["reduce", "--keys", "u32", inp]):
            with self.subTest(args=args):
                first = args[:1] if args[0] in ("scan", "reduce") else []
                p = run(first + ["-q", "--timeout", "0.0001"] + args[len(first):], timeout=120)
                self.assert_one_line(p, 1, "GPU stall")
                self.assert_nothing_lost([out])


if __name__ == "__main__":
    GPUSORT = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
