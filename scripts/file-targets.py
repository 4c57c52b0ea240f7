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
REPS = int(os.environ.get("REPS", "5"))  # runs of each 1 GiB case
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
    lines = ["| target | gpusort | anchor, same run | ratio | goal | met |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    with open(os.path.join(RESULTS, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(RESULTS, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    return "\n".join(lines)


def row(target, measured, anchor, ratio, goal, ok):
    rows.append((target, measured, anchor, ratio, goal, "yes" if ok else "**no**"))
    emit()


def size_name(bytes_):
    return f"{bytes_ >> 30} GiB" if bytes_ >= 1 << 30 else f"{bytes_ >> 20} MiB"


# ---- 1 GiB: new file, and replacing an existing one ----
one = gen("in_1g.bin", SIZES["one"] // 4)
out, cp_out = os.path.join(WORK, "out_1g.bin"), os.path.join(WORK, "cp_1g.bin")
for i in range(REPS):
    rm(cp_out)
    timed(["cp", one, cp_out], "cp 1g")
    rm(out)
    timed([GPUSORT, "-v", "--keys", "u32", one, out], "gpusort 1g new", f"1g_new_{i}.txt")
for i in range(REPS):  # out exists: replaced atomically
    timed([GPUSORT, "-v", "-f", "--keys", "u32", one, out], "gpusort 1g replace", f"1g_replace_{i}.txt")
results["check 1g"] = sh(GPUSORT, "check", "--keys", "u32", out).returncode
rm(out, cp_out)
cp1, new1, rep1 = median("cp 1g"), median("gpusort 1g new"), median("gpusort 1g replace")
row(f"{size_name(SIZES['one'])} u32 to a new file", f"{new1:.3f} s", f"cp {cp1:.3f} s", f"{new1 / cp1:.2f}x cp",
    "<= 1.0x cp", new1 <= cp1)
row(f"{size_name(SIZES['one'])} u32 replacing an output", f"{rep1:.3f} s", f"new file {new1:.3f} s",
    f"{rep1 / new1:.2f}x new", "<= 1.10x new", rep1 <= 1.10 * new1)
setups = [r["stages"].get("open", 0) + r["stages"].get("pipelines", 0)
          for r in results["runs"]["gpusort 1g new"][1:] + results["runs"]["gpusort 1g replace"] if r["rc"] == 0]
setup = statistics.median(setups) if setups else float("nan")
row("setup of a second run (device, pipelines, buffers)", f"{setup * 1e3:.0f} ms", "", "", "<= 180 ms",
    setup <= 0.180)

# ---- 4x the memory limit: out of core against in core ----
ooc_in = gen("in_ooc.bin", SIZES["ooc"] // 4)
ooc_out = os.path.join(WORK, "out_ooc.bin")
for i in range(max(2, REPS - 1)):
    rm(ooc_out)
    timed([GPUSORT, "-v", "--keys", "u32", ooc_in, ooc_out], "gpusort ooc in core", f"ooc_incore_{i}.txt")
xxh_in_core = [l for l in open(os.path.join(RESULTS, "ooc_incore_0.txt")) if l.startswith("XXH3")]
for i in range(max(2, REPS - 1)):
    rm(ooc_out)
    timed([GPUSORT, "-v", "--mem-limit", OOC_LIMIT, "--keys", "u32", ooc_in, ooc_out], "gpusort ooc",
          f"ooc_{i}.txt")
xxh_ooc = [l for l in open(os.path.join(RESULTS, "ooc_0.txt")) if l.startswith("XXH3")]
results["ooc same bytes"] = bool(xxh_ooc and xxh_in_core) and xxh_ooc[0].split("=")[1] == xxh_in_core[0].split("=")[1]
rm(ooc_out, ooc_in)
inc, ooc = median("gpusort ooc in core"), median("gpusort ooc")
row(f"{size_name(SIZES['ooc'])} with --mem-limit {OOC_LIMIT} (out of core)", f"{ooc:.3f} s", f"in core {inc:.3f} s",
    f"{inc / ooc:.2f} of the in-core rate", ">= 0.50", inc / ooc >= 0.5)

# ---- 16 GiB ----
if not SKIP_BIG:
    rm(one)
    big = gen("in_16g.bin", SIZES["big"] // 4)
    bout, bcp = os.path.join(WORK, "out_16g.bin"), os.path.join(WORK, "cp_16g.bin")
    for i in range(2):
        rm(bcp)
        timed(["cp", big, bcp], "cp 16g")
        rm(bcp)
        rm(bout)
        timed([GPUSORT, "-v", "--keys", "u32", big, bout], "gpusort 16g", f"16g_{i}.txt")
    results["check 16g"] = sh(GPUSORT, "check", "--keys", "u32", bout).returncode
    rm(bout, bcp)
    cpb, gsb = median("cp 16g"), median("gpusort 16g")
    row(f"{size_name(SIZES['big'])} u32 to a new file", f"{gsb:.3f} s", f"cp {cpb:.3f} s", f"{gsb / cpb:.2f}x cp",
        "<= 0.5x cp", gsb <= 0.5 * cpb)

print(emit())
print("checks:", {k: v for k, v in results.items() if k.startswith("check") or k.startswith("ooc")})
