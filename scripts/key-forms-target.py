#!/usr/bin/env python3
"""The key-forms target, measured in one run: a 1 GiB gensort-style file (10,737,418 records
of 100 bytes, a 10-byte key of random bytes) sorted by gpusort with --keys bytes:10, against
`LC_ALL=C sort --parallel=16 -S 50%` on the same number of records in the text form that
`gensort -a` writes (10 printable characters of key, then the rest of a 100-byte line), both
with the page cache warm; beside them the GPU sort time per record of 2^28 u32 keys
(`gpusort bench`), and the passes the 10-byte key took.

usage: key-forms-target.py GPUSORT WORKDIR [REPS [RECORDS [BENCH_SIZE]]]   (smaller ones to try it out)
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RECORDS = 10_737_418
BENCH_SIZE = "2^28"


def write_inputs(workdir):
    rng = np.random.default_rng(1)
    binary, text = os.path.join(workdir, "gensort.bin"), os.path.join(workdir, "gensort.txt")
    chunk = 1 << 20
    with open(binary, "wb") as fb, open(text, "wb") as ft:
        for first in range(0, RECORDS, chunk):
            n = min(chunk, RECORDS - first)
            rec = rng.integers(0, 256, (n, 100), dtype=np.uint8)
            index = np.arange(first, first + n, dtype=">u8").view(np.uint8).reshape(n, 8)
            rec[:, 12:20] = index  # the record number, as gensort writes one
            fb.write(rec.tobytes())
            line = np.full((n, 100), ord("A"), dtype=np.uint8)
            line[:, :10] = rng.integers(32, 127, (n, 10), dtype=np.uint8)  # gensort -a: printable keys
            line[:, 10:12] = ord(" ")
            numbers = np.arange(first, first + n, dtype=np.uint64)
            hexdigits = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)
            for k in range(32):  # the record number in 32 hex digits, most significant first
                shift = np.uint64(4 * (31 - k)) if k >= 16 else None
                line[:, 12 + k] = hexdigits[(numbers >> shift) & np.uint64(15)] if shift is not None else ord("0")
            line[:, 44:46] = ord(" ")
            line[:, 98] = ord("\r")
            line[:, 99] = ord("\n")
            ft.write(line.tobytes())
    return binary, text


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def timed(args):
    t0 = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    elapsed = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {p.stderr}")
    return elapsed, p.stdout


def main():
    gpusort, workdir = sys.argv[1], sys.argv[2]
    global RECORDS, BENCH_SIZE
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    RECORDS = int(sys.argv[4]) if len(sys.argv) > 4 else RECORDS
    BENCH_SIZE = sys.argv[5] if len(sys.argv) > 5 else BENCH_SIZE
    os.makedirs(workdir, exist_ok=True)
    binary, text = write_inputs(workdir)
    warm(binary)
    warm(text)
    out_bin, out_txt = os.path.join(workdir, "sorted.bin"), os.path.join(workdir, "sorted.txt")
    runs = []
    for _ in range(reps):
        if os.path.exists(out_bin):  # a new file each time, as for sort(1) below
            os.remove(out_bin)
        elapsed, stdout = timed([gpusort, "--json", "--keys", "bytes:10", "--record-size", "100", binary, out_bin])
        runs.append((elapsed, json.loads(stdout)))
    timed([gpusort, "check", "-q", "--keys", "bytes:10", "--record-size", "100", out_bin])
    sorts = []
    for _ in range(max(1, reps - 1)):
        if os.path.exists(out_txt):
            os.remove(out_txt)
        sorts.append(timed(["sort", "--parallel=16", "-S", "50%", text, "-o", out_txt])[0])
    _, stdout = timed([gpusort, "bench", "--json", "--sizes", BENCH_SIZE, "--reps", "7"])
    u32 = json.loads(stdout.strip().splitlines()[-1])
    wall = statistics.median(r[0] for r in runs)
    report = min(runs, key=lambda r: r[0])[1]
    sort_seconds = report["stages"].get("sort", 0.0)
    gnu = statistics.median(sorts)
    print(f"records                 {RECORDS}")
    print(f"gpusort bytes:10 wall   {wall:.3f} s (median of {reps}; runs {', '.join(f'{r[0]:.3f}' for r in runs)})")
    print(f"GNU sort (text) wall    {gnu:.3f} s (median of {len(sorts)}; runs {', '.join(f'{s:.3f}' for s in sorts)})")
    print(f"speed-up                {gnu / wall:.1f}x (target >= 10x)")
    print(f"stages of the fastest   {json.dumps(report['stages'])}")
    print(f"passes                  {report.get('passes')}")
    print(f"GPU sort per record     bytes:10 {sort_seconds / RECORDS * 1e9:.2f} ns; "
          f"u32 ({BENCH_SIZE}, bench) {u32['sort_seconds'] / u32['records'] * 1e9:.3f} ns")


if __name__ == "__main__":
    main()
