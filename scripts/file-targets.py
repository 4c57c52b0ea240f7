#!/usr/bin/env python3
"""The whole path of a file sort, beside cp, in one run: the targets of "files of any size".

usage: scripts/file-targets.py GPUSORT WORKDIR RESULTS [--scale small|full] [--skip-big]

Runs, with the page cache warm (each input read once first) and the dirty pages of the
previous run written out (sync, untimed) before each timed run:
  - 1 GiB of u32 keys to a new file: gpusort against cp, alternating, median of 5;
  - the same replacing an existing output (gpusort -f over a file of the same size);
  - 16 GiB of u32 keys (2^32) to a new file against cp, median of 2;
  - a 4 GiB file sorted with --mem-limit 1G (out of core) against the same file in core;
  - the fixed cost: opening the device plus pipelines and buffers of a second run, from the
    report (the pipeline cache warm).
Writes RESULTS/table.md (the table), RESULTS/results.json and every gpusort report
(RESULTS/*.txt, -v: each stage), and prints the table. --scale small shrinks every size
(for a dry run on any machine); --skip-big leaves out the 16 GiB case.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

GPUSORT, WORK, RESULTS = (os.path.abspath(a) for a in sys.argv[1:4])
SMALL = "--scale" in sys.argv and sys.argv[sys.argv.index("--scale") + 1] == "small"
SKIP_BIG = "--skip-big" in sys.argv
MiB = 1 << 20
SIZES = {"one": 8 * MiB if SMALL else 1 << 30, "big": 64 * MiB if SMALL else 16 << 30,
         "ooc": 32 * MiB if SMALL else 4 << 30}
OOC_LIMIT = "8M" if SMALL else "1G"
os.makedirs(WORK, exist_ok=True)
os.makedirs(RESULTS, exist_ok=True)
results = {"small": SMALL, "runs": {}}


def sh(*cmd, **kw):
    return subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def settle():
    """Untimed: the previous run's dirty pages go to disk, so no run pays for another's."""
    sh("sync")


def warm(path):
    with open(path, "rb") as f:
        while f.read(64 * MiB):
            pass


def timed(cmd, label, report=None):
    settle()
    t0 = time.perf_counter()
    p = sh(*cmd)
    seconds = time.perf_counter() - t0
    if report:
        with open(os.path.join(RESULTS, report), "w") as f:
            f.write(" ".join(cmd) + "\n" + p.stderr.decode())
    if p.returncode != 0:
        print(f"FAILED ({p.returncode}): {' '.join(cmd)}\n{p.stderr.decode()}", flush=True)
    results["runs"].setdefault(label, []).append({"seconds": seconds, "rc": p.returncode,
                                                  "stages": stages(p.stderr.decode())})
    return seconds, p


def stages(report):
    """Stage rows of a gpusort report: {"read": seconds, ...}."""
    out = {}
    for line in report.splitlines():
        m = re.match(r"^  (\S+)\s+([\d.]+) (us|ms|s)\b", line)
        if m:
            out[m.group(1)] = float(m.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(3)]
        m = re.search(r"opening the device (\d+) ms, pipelines and buffers (\d+) ms", line)
        if m:
            out["open"], out["pipelines"] = int(m.group(1)) / 1e3, int(m.group(2)) / 1e3
    return out


def gen(name, n, *args):
    path = os.path.join(WORK, name)
    if not os.path.exists(path) or os.path.getsize(path) != 4 * n:
        p = sh(GPUSORT, "gen", "-q", "-f", "--keys", "u32", "-n", str(n), *args, path)
        assert p.returncode == 0, p.stderr.decode()
    warm(path)
    return path


def rm(*paths):
    for p in paths:
        if os.path.exists(p):
            os.unlink(p)


def median(label):
    runs = [r["seconds"] for r in results["runs"].get(label, []) if r["rc"] == 0]
    return statistics.median(runs) if runs else float("nan")


rows = []


def emit():
    """The table so far, on disk (a run cut short still leaves what it measured)."""
    print(emit())
print("checks:", {k: v for k, v in results.items() if k.startswith("check") or k.startswith("ooc")})
