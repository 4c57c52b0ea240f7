#!/usr/bin/python3
"""A soak: random sort jobs through the command line, each against numpy's stable order.

Every job draws a key type (the six GPU types, narrow, half, big-endian, bytes:N), a layout
(keys, --values pairs, --record-size records with the key at an offset, composite --key
parts), a size from 0 to about 100k, a distribution (random bits, few distinct values, all
equal, float specials and integer extremes, sorted, reversed) and options (--descending,
--argsort with either index type, --bits, --verify, stdin to stdout, and an --algo when
`gpusort sort --help` offers one). The references are those of test_keys.py (numpy's stable
lexsort of each record's normalized form) and, for --bits, of test_large.py (numpy's stable
argsort of the ordered key's bits).

Jobs are drawn from the seed and their number alone, so a failure is reproduced by
`soak.py GPUSORT --seed S --only J`; the seed is printed first. New jobs stop starting after
--seconds (default: $SOAK_SECONDS, else 180) or --jobs jobs, whichever comes first.

usage: soak.py GPUSORT [--seed S] [--seconds T] [--jobs N] [--only J] [--keep DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_keys import TYPES, reference_order, values_of  # noqa: E402
from test_large import sort_keys  # noqa: E402

GPU_TYPES = ["u32", "i32", "f32", "u64", "i64", "f64"]
NARROW_TYPES = ["u8", "i8", "u16", "i16", "f16", "bf16"]
BIG_ENDIAN_TYPES = [t for t in TYPES if t.endswith("be")]
VALUE_TYPES = list(TYPES)
BOUNDARY_SIZES = [0, 1, 2, 7, 8, 9, 31, 32, 33, 255, 256, 257, 4095, 4096, 4097]
MAX_INPUT_BYTES = 4 << 20  # keeps a job under a second or two on lavapipe


def width_of(name):
    return int(name[6:]) if name.startswith("bytes:") else np.dtype(TYPES[name][0]).itemsize


def sort_algorithms(gpusort, workdir):
    """The algorithms `gpusort sort --help` lists for --algo ([] without the option): the
    words of the option's first clause ("auto (default), onesweep, ... or bitonic; ..."),
    each kept only if the command line accepts it."""
    help_text = subprocess.run([gpusort, "sort", "--help"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"(?m)^\s+--algo\s+\S+\s+(.*(?:\n\s{10,}\S.*)*)", help_text)
    if not m:
        return []
    text = " ".join(m.group(1).split())
    first_clause = re.split(r"[;.:]", text)[0]
    words = re.findall(r"[a-z][a-z0-9-]*[a-z0-9]", re.sub(r"\([^)]*\)", " ", first_clause))
    candidates = [w for w in dict.fromkeys(words) if w not in ("or", "and", "default")]
    probe_in, probe_out = os.path.join(workdir, "probe.bin"), os.path.join(workdir, "probe.out")
    with open(probe_in, "wb") as f:
        f.write(np.arange(3, dtype="<u4").tobytes())
    accepted = []
    for word in candidates:
        p = subprocess.run([gpusort, "sort", "-q", "-f", "--keys", "u32", "--algo", word, probe_in, probe_out],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 0:
            accepted.append(word)
        elif p.returncode != 2:
            raise RuntimeError(f"--algo {word} on 3 keys: exit {p.returncode}: {p.stderr.strip()}")
    if not accepted:
        raise RuntimeError(f"--algo is in the help, but none of {candidates} is accepted")
    return accepted


def draw_key_type(rng):
    group = rng.choice(["gpu", "narrow", "big", "bytes"], p=[0.5, 0.2, 0.15, 0.15])
    if group == "gpu":
        return str(rng.choice(GPU_TYPES))
    if group == "narrow":
        return str(rng.choice(NARROW_TYPES))
    if group == "big":
        return str(rng.choice(BIG_ENDIAN_TYPES))
    return f"bytes:{int(rng.choice([1, 2, 3, 5, 8, 9, 16, 17, 31, 64, 128]))}"


def draw_size(rng, record_bytes):
    if rng.random() < 0.2:
        n = int(rng.choice(BOUNDARY_SIZES))
    else:
        n = int(np.exp(rng.uniform(0, np.log(100_000))))
    return min(n, MAX_INPUT_BYTES // record_bytes)


def draw_job(seed, number, algorithms):
    """Arguments, input bytes and the expected output of job `number`."""
    rng = np.random.default_rng([seed, number])
    key = draw_key_type(rng)
    layout = str(rng.choice(["keys", "pairs", "records", "composite"], p=[0.4, 0.2, 0.3, 0.1]))
    width = width_of(key)
    args, parts, key_offset, value = [], [], 0, None
    if layout == "keys":
        record_bytes = width
        args += ["--keys", key]
    elif layout == "pairs":
        value = str(rng.choice(VALUE_TYPES))
        record_bytes = width + width_of(value)
        args += ["--keys", key, "--values", value]
    elif layout == "records":
        record_bytes = width + int(rng.choice([0, 1, 3, 8, 13, 60, 250]))
        key_offset = int(rng.integers(0, record_bytes - width + 1))
        args += ["--keys", key, "--record-size", str(record_bytes)] + (
            ["--key-offset", str(key_offset)] if key_offset or rng.random() < 0.5 else [])
    else:  # composite: 2 to 4 parts of at most 128 bytes together, at increasing offsets with gaps
        offset, key_bytes = 0, 0
        for _ in range(int(rng.integers(2, 5))):
            part = draw_key_type(rng)
            if key_bytes + width_of(part) > 128:
                continue
            key_bytes += width_of(part)
            offset += int(rng.integers(0, 4))
            parts.append((offset, part, bool(rng.random() < 0.5)))
            offset += width_of(part)
        record_bytes = offset + int(rng.integers(0, 9))
        parts = [parts[i] for i in rng.permutation(len(parts))]  # any order of significance
        for off, part, desc in parts:
            args += ["--key", f"{off}:{part}" + (":desc" if desc else "")]
        args += ["--record-size", str(record_bytes)]
    if not parts:
        parts = [(key_offset, key, False)]

    n = draw_size(rng, record_bytes)
    dist = str(rng.choice(["random", "few", "equal", "special", "sorted", "reversed"]))
    records = rng.integers(0, 256, (n, record_bytes), dtype=np.uint8)  # the bytes around the keys
    for off, part, _ in parts:
        field_dist = "random" if dist in ("sorted", "reversed") else dist
        if field_dist == "special" and part.startswith("bytes:"):
            field_dist = "few"  # byte strings have no special values
        records[:, off:off + width_of(part)] = values_of(part, n, field_dist, rng)
    if dist in ("sorted", "reversed") and n:
        records = records[reference_order(records.tobytes(), record_bytes, parts, dist == "reversed")]
    data = records.tobytes()

    descending = bool(rng.random() < 0.5)
    bits = None
    # --bits: keys of the six GPU types, alone, in records or with a value of those types
    # (other forms take bits of their normalized form: see test_keys.py's bit ranges)
    if key in GPU_TYPES and layout != "composite" and value in (None, *GPU_TYPES) and rng.random() < 0.25:
        lo = int(rng.integers(0, 8 * width))
        bits = (lo, int(rng.integers(lo + 1, 8 * width + 1)))
        args += ["--bits", f"{bits[0]}:{bits[1]}"]
    if descending:
        args.append("--descending")
    argsort = bool(rng.random() < 0.25)
    index_dtype = "<u4"
    if argsort:
        args.append("--argsort")
        if rng.random() < 0.3:
            index_dtype = str(rng.choice(["<u4", "<u8"]))
            args += ["--index-type", "u64" if index_dtype == "<u8" else "u32"]
    if rng.random() < 0.2:
        args.append("--verify")
    if algorithms:
        args += ["--algo", str(rng.choice(algorithms))]
    stream = bool(rng.random() < 0.1)

    if bits:
        rows = records.reshape(n, record_bytes)
        column = np.ascontiguousarray(rows[:, key_offset:key_offset + width]).view(f"<u{width}").reshape(n)
        order = np.argsort(sort_keys(column, key, descending, bits), kind="stable")
    else:
        order = reference_order(data, record_bytes, parts, descending)
    expected = order.astype(index_dtype).tobytes() if argsort else records[order].tobytes()
    what = f"n={n} dist={dist}" + (" stdin-to-stdout" if stream else "")
    return args, data, expected, stream, what


def run_job(gpusort, workdir, args, data, stream):
    """The output and the command's result; the command as a shell line for the report."""
    if stream:
        cmd = [gpusort, "sort", "-q", *args, "-", "-"]
        p = subprocess.run(cmd, input=data, capture_output=True, timeout=600)
        return p, p.stdout, cmd
    src, dst = os.path.join(workdir, "in.bin"), os.path.join(workdir, "out.bin")
    with open(src, "wb") as f:
        f.write(data)
    cmd = [gpusort, "sort", "-q", "-f", *args, src, dst]
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    out = None
    if p.returncode == 0:
        with open(dst, "rb") as f:
            out = f.read()
    return p, out, cmd


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gpusort")
    parser.add_argument("--seed", type=int, default=None, help="default: a random seed, printed")
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", 180)),
                        help="start no job after this many seconds")
    parser.add_argument("--jobs", type=int, default=1000, help="at most this many jobs")
    parser.add_argument("--only", type=int, default=None, help="run job ONLY of the seed alone")
    parser.add_argument("--keep", default=None, help="save the inputs of failed jobs in this directory")
    opts = parser.parse_args()
    gpusort = os.path.abspath(opts.gpusort)
    seed = opts.seed if opts.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"soak: seed {seed} (reproduce a job with: {os.path.abspath(sys.argv[0])} {gpusort} --seed {seed} "
          "--only JOB)", flush=True)

    workdir = tempfile.mkdtemp(prefix="gpusort-soak-")
    failures, done, start = 0, 0, time.monotonic()
    try:
        algorithms = sort_algorithms(gpusort, workdir)
        print(f"soak: algorithms: {', '.join(algorithms) if algorithms else '(no --algo option)'}", flush=True)
        numbers = [opts.only] if opts.only is not None else range(opts.jobs)
        for number in numbers:
            if opts.only is None and time.monotonic() - start > opts.seconds:
                break
            args, data, expected, stream, what = draw_job(seed, number, algorithms)
            began = time.monotonic()
            p, out, cmd = run_job(gpusort, workdir, args, data, stream)
            done += 1
            problem = None
            if p.returncode != 0:
                problem = f"exit {p.returncode}: {p.stderr.decode(errors='replace').strip()}"
            elif out != expected:
                problem = (f"output differs from the reference: {len(out)} bytes, {len(expected)} expected, "
                           f"first difference at byte {first_difference(out, expected)}")
            print(f"job {number}: {' '.join(args)} {what}: {'FAIL' if problem else 'ok'} "
                  f"{time.monotonic() - began:.2f}s", flush=True)
            if problem:
                failures += 1
                print(f"  {problem}\n  command: {' '.join(cmd)}\n  reproduce: {os.path.abspath(sys.argv[0])} "
                      f"{gpusort} --seed {seed} --only {number}", flush=True)
                if opts.keep:
                    os.makedirs(opts.keep, exist_ok=True)
                    with open(os.path.join(opts.keep, f"soak-{seed}-{number}.bin"), "wb") as f:
                        f.write(data)
                if failures >= 10:
                    print("soak: stopping after 10 failures")
                    break
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"soak: {done} jobs in {time.monotonic() - start:.0f}s, seed {seed}: {failures} failed")
    print(f"{done - failures} passed, {failures} failed")
    return 1 if failures or done == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
