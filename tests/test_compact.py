#!/usr/bin/python3
"""select, partition, unique, rle and reduce-by-key (the look-back family) through the command
line, against numpy: the six key types as keys, (key, value) pairs and records (the key at an
offset, also unaligned); sizes around tiles; selectivities of 0 to 100%; runs of every length,
also across and over many tiles; -0.0, +0.0, NaNs and infinities; rle's u64 counts;
reduce-by-key's sums (wrapping, widened, and floats within their bound), minima and maxima;
.npy files; empty inputs; inputs past --mem-limit, done in chunks; malformed expressions and
other errors (exit 2, one line, no output); the count line and the --json count.

Every run but the report's is made with --json, whose count (kept, split, runs) is checked
with the output. Float keys are equal for unique, rle and reduce-by-key when their bits are;
--where compares them as IEEE numbers.

usage: test_compact.py GPUSORT [unittest options]   (Debian's python3, which sees python3-numpy)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

GPUSORT = None
TYPES = {"u32": "<u4", "i32": "<i4", "f32": "<f4", "u64": "<u8", "i64": "<i8", "f64": "<f8"}
# Around the tiles, which on lavapipe hold 4096 keys of 32 bits and 2048 of 64 bits.
SIZES = {4: [0, 1, 7, 8, 9, 255, 256, 257, 4095, 4096, 4097, 65537, 300001],
         8: [0, 1, 7, 8, 9, 257, 2047, 2048, 2049, 4096, 4097, 65537, 300001]}
COUNTED = {"select": "kept", "partition": "split", "unique": "runs", "rle": "runs", "reduce-by-key": "runs"}

# --where expressions with their numpy meaning, of the key k and its stored bits b.
INT_EXPRS = [
    ("key < 10", lambda k, b: k < 10),
    (">= 250", lambda k, b: k >= 250),
    ("in [100,200)", lambda k, b: (k >= 100) & (k < 200)),
    ("& 0xff == 3", lambda k, b: (b & 0xFF) == 3),
    ("& 0x3 != 0", lambda k, b: (b & 3) != 0),
    ("not (key >= 10 and key < 400) or == 450", lambda k, b: ~((k >= 10) & (k < 400)) | (k == 450)),
    ("== 7", lambda k, b: k == 7),
    ("!= 0", lambda k, b: k != 0),
    ("in [0,0)", lambda k, b: np.zeros(len(k), dtype=bool)),
    ("(key<10 or>=990)and!=0", lambda k, b: ((k < 10) | (k >= 990)) & (k != 0)),
]
SIGNED_EXPRS = [("< -100", lambda k, b: k < -100), ("> -1 and < 1", lambda k, b: k == 0)]


def float_exprs(dtype):
    sign = "0x80000000" if np.dtype(dtype).itemsize == 4 else "0x8000000000000000"
    return [
        ("< 0.5", lambda k, b: k < 0.5),
        ("== 0", lambda k, b: k == 0),  # both zeros
        ("!= 0", lambda k, b: k != 0),  # NaNs too
        ("isnan", lambda k, b: np.isnan(k)),
        ("notnan and key >= -1.5", lambda k, b: ~np.isnan(k) & (k >= -1.5)),
        ("in [-inf,10)", lambda k, b: (k >= -np.inf) & (k < 10)),
        (f"& {sign} != 0", lambda k, b: (b >> np.uint64(8 * k.dtype.itemsize - 1)) == 1),  # -0.0 and -NaN too
        ("> inf", lambda k, b: np.zeros(len(k), dtype=bool)),
        ("not isnan or isnan", lambda k, b: np.ones(len(k), dtype=bool)),
        ("key == -0.0 or == 1e2", lambda k, b: (k == 0) | (k == 100)),
    ]


def exprs_for(name):
    dtype = np.dtype(TYPES[name])
    if dtype.kind == "f":
        return float_exprs(dtype)
    return INT_EXPRS + (SIGNED_EXPRS if dtype.kind == "i" else [])


def run(args, data=None, env=None):
    return subprocess.run([GPUSORT] + args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
                          env=None if env is None else {**os.environ, **env})


def bits_of(keys):
    keys = np.asarray(keys)
    return keys.view(f"<u{keys.dtype.itemsize}").astype(np.uint64)


def satisfies(predicate, keys):
    with np.errstate(invalid="ignore"):
        return np.asarray(predicate(keys, bits_of(keys)), dtype=bool)


def run_starts(keys):
    """Where each run of keys with the same stored bits starts."""
    b = bits_of(keys)
    return np.flatnonzero(np.r_[True, b[1:] != b[:-1]]) if len(b) else np.zeros(0, dtype=np.int64)


def float_specials(dtype):
    """-0.0, +0.0, NaNs of both signs and a payload, infinities, the smallest denormal."""
    if np.dtype(dtype).itemsize == 4:
        bits = [0x80000000, 0, 0x7FC00000, 0xFFC00000, 0x7FC00123, 0x7F800000, 0xFF800000, 1]
    else:
        bits = [1 << 63, 0, 0x7FF8 << 48, 0xFFF8 << 48, (0x7FF8 << 48) | 0x123, 0x7FF << 52, 0xFFF << 52, 1]
    return np.array(bits, dtype=f"<u{np.dtype(dtype).itemsize}").view(dtype)


def draw_values(dtype, m, rng):
    """m keys of the type: mostly small numbers (so expressions have middling selectivity),
    some extremes (integers) or specials (floats)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = (rng.integers(-500, 1000, m) * 0.5).astype(dtype)
        extra, share = float_specials(dtype), 0.05
    else:
        v = rng.integers(-500 if dtype.kind == "i" else 0, 1000, m).astype(dtype)
        info = np.iinfo(dtype)
        extra, share = np.array([info.min, info.max, info.max - 1, 0], dtype=dtype), 0.02
    pick = rng.random(m) < share
    v[pick] = extra[rng.integers(0, len(extra), int(pick.sum()))]
    return v


def keys_with_runs(dtype, n, rng, lengths=(1, 1, 1, 2, 3, 5, 17, 300, 2000)):
    """n keys in runs whose lengths are drawn from `lengths`."""
    if n == 0:
        return np.zeros(0, dtype=dtype)
    runs = rng.choice(lengths, size=n)
    cut = int(np.searchsorted(np.cumsum(runs), n)) + 1
    return np.repeat(draw_values(dtype, cut, rng), runs[:cut])[:n]


def keys_in_runs_of(dtype, pattern, n):
    """n keys in runs of the lengths of `pattern`, repeated; neighbouring runs differ."""
    lengths = np.resize(np.array(pattern), n)
    cut = int(np.searchsorted(np.cumsum(lengths), n)) + 1
    values = (np.arange(cut) * 7 + 3) % 1009  # (neighbours never equal)
    return np.repeat(values.astype(dtype), lengths[:cut])[:n]


class Layout:
    """Keys as they lie in a file: alone, in (key, value) pairs, or in records of
    `record_bytes` with the key at `offset` (the other bytes random)."""

    def __init__(self, name, keys, rng, value=None, record=None, values=None):
        self.name, self.keys = name, keys
        n, width = len(keys), keys.dtype.itemsize
        self.args = ["--keys", name]
        self.values = None
        if value:
            vdtype = np.dtype(TYPES.get(value, value))
            self.values = values if values is not None else draw_values(vdtype, n, rng)
            pairs = np.empty(n, dtype=[("k", keys.dtype), ("v", vdtype)])  # packed: no padding
            pairs["k"], pairs["v"] = keys, self.values
            self.data = pairs.tobytes()
            self.record_bytes = width + vdtype.itemsize
            self.args += ["--values", value]
        elif record:
            self.record_bytes, offset = record
            records = rng.integers(0, 256, (n, self.record_bytes), dtype=np.uint8)
            records[:, offset:offset + width] = keys.view(np.uint8).reshape(n, width)
            self.data = records.tobytes()
            self.args += ["--record-size", str(self.record_bytes), "--key-offset", str(offset)]
        else:
            self.data, self.record_bytes = keys.tobytes(), width
        self.records = np.frombuffer(self.data, dtype=np.uint8).reshape(n, self.record_bytes)
        self.label = f"{name} {' '.join(self.args[2:]) or 'keys'} n={n}"

    def select(self, predicate):
        mask = satisfies(predicate, self.keys)
        return self.records[mask].tobytes(), int(mask.sum())

    def partition(self, predicate):
        mask = satisfies(predicate, self.keys)
        return np.concatenate([self.records[mask], self.records[~mask]]).tobytes(), int(mask.sum())

    def unique(self):
        starts = run_starts(self.keys)
        return self.records[starts].tobytes(), len(starts)

    def rle(self, count_type="u32"):
        starts = run_starts(self.keys)
        out = np.empty(len(starts), dtype=[("k", self.keys.dtype), ("c", TYPES[count_type])])
        out["k"] = self.keys[starts]
        out["c"] = np.diff(np.r_[starts, len(self.keys)])
        return out.tobytes(), len(starts)


def ordered_bits(values):
    """Float values as unsigned integers in totalOrder (integers as they are)."""
    if values.dtype.kind != "f":
        return values
    b = bits_of(values)
    sign = np.uint64(1) << np.uint64(8 * values.dtype.itemsize - 1)
    full = np.uint64((1 << (8 * values.dtype.itemsize)) - 1)
    return np.where(b & sign, ~b & full, b | sign)


def from_ordered_bits(ordered, dtype):
    sign = np.uint64(1) << np.uint64(8 * dtype.itemsize - 1)
    full = np.uint64((1 << (8 * dtype.itemsize)) - 1)
    b = np.where(ordered & sign, ordered ^ sign, ~ordered & full)
    return b.astype(f"<u{dtype.itemsize}").view(dtype)


def reduce_reference(keys, values, op, acc):
    """(key, value) per run: integer sums wrapping at the accumulator's width, min and max of
    floats by totalOrder. Float sums: the exact sums and the sums of magnitudes instead."""
    starts = run_starts(keys)
    acc_dtype = np.dtype(TYPES[acc]) if acc else values.dtype
    v = values.astype(acc_dtype)
    if not len(starts):
        return np.zeros(0, dtype=[("k", keys.dtype), ("v", acc_dtype)]), None
    if op == "sum" and acc_dtype.kind == "f":
        exact = np.add.reduceat(v.astype(np.longdouble), starts)
        magnitude = np.add.reduceat(np.abs(v).astype(np.longdouble), starts)
        return exact, magnitude
    if op == "sum":
        unsigned = v.view(f"<u{acc_dtype.itemsize}")
        result = np.add.reduceat(unsigned, starts, dtype=unsigned.dtype).view(acc_dtype)  # wraps
    else:
        ufunc = np.minimum if op == "min" else np.maximum
        result = ufunc.reduceat(ordered_bits(v), starts)
        result = from_ordered_bits(result, acc_dtype) if acc_dtype.kind == "f" else result.astype(acc_dtype)
    out = np.empty(len(starts), dtype=[("k", keys.dtype), ("v", acc_dtype)])
    out["k"], out["v"] = keys[starts], result
    return out, None


def first_difference(got, want, record_bytes):
    """Where two outputs first differ, by record, for a failure message."""
    sizes = f"{len(got)} bytes, want {len(want)}; " if len(got) != len(want) else ""
    for i in range(0, min(len(got), len(want)), record_bytes):
        if got[i:i + record_bytes] != want[i:i + record_bytes]:
            return (f"{sizes}record {i // record_bytes} differs: got {got[i:i + record_bytes].hex()}, "
                    f"want {want[i:i + record_bytes].hex()}")
    return sizes + "one is a prefix of the other"


class FilesCase(unittest.TestCase):
    """Tests in a scratch directory of their own, with a seeded generator."""
    PREFIX, SEED = "gpusort-compact-", 23

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix=self.PREFIX)
        self.rng = np.random.default_rng(self.SEED)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)


class Compact(FilesCase):

    def compact(self, command, args, inp, label, extra=(), env=None):
        """Runs a command with --json into out.bin: its output and the --json object."""
        out = self.path("out.bin")
        p = run([command, "--json", "-f", *extra, *args, inp, out], env=env)
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 0, f"{label}: gpusort {command} {' '.join(args)}: {err}")
        self.assertEqual(err, "", label)
        report = json.loads(p.stdout)
        with open(out, "rb") as f:
            return f.read(), report

    def check(self, command, args, inp, want, label, record_bytes, extra=(), env=None):
        """The command's output and count against the reference (bytes, count)."""
        got, report = self.compact(command, args, inp, label, extra, env)
        what = f"{label}: gpusort {command} {' '.join(args)}"
        self.assertEqual(report[COUNTED[command]], want[1], f"{what}: the count ({COUNTED[command]})")
        if got != want[0]:
            self.fail(f"{what}: {first_difference(got, want[0], record_bytes)}")
        return report

    def check_layout(self, layout, commands, env=None):
        """Each (command, args, reference) of `commands` on the layout's file, written once."""
        inp = self.write("in.bin", layout.data)
        for command, args, want in commands:
            record_bytes = layout.record_bytes
            if command == "rle":
                record_bytes = layout.keys.dtype.itemsize + (8 if "u64" in args else 4)
            self.check(command, layout.args + args, inp, want, layout.label, record_bytes, env=env)

    def test_every_type_and_size(self):
        """Keys of each type at sizes around tiles: select and unique always, partition and
        rle in turn (expressions in turn too)."""
        for name in TYPES:
            exprs = exprs_for(name)
            for i, n in enumerate(SIZES[np.dtype(TYPES[name]).itemsize]):
                layout = Layout(name, keys_with_runs(TYPES[name], n, self.rng), self.rng)
                where, predicate = exprs[i % len(exprs)]
                commands = [("select", ["--where", where], layout.select(predicate)), ("unique", [], layout.unique())]
                if i % 2:
                    where, predicate = exprs[(i + 3) % len(exprs)]
                    commands.append(("partition", ["--where", where], layout.partition(predicate)))
                else:
                    commands.append(("rle", [], layout.rle()))
                self.check_layout(layout, commands)

    def test_selectivities(self):
        """0%, 1%, 50% and 100% of the records kept, in select and partition, as keys and as
        pairs."""
        n = 300001
        for name in ("u32", "f64", "i64"):
            keys = self.rng.integers(0, 10000, n).astype(TYPES[name])
            tests = [("> 20000", lambda k, b: k > 20000), ("< 100", lambda k, b: k < 100),
                     ("< 5000", lambda k, b: k < 5000), (">= 0", lambda k, b: k >= 0)]
            layouts = [Layout(name, keys, self.rng)]
            if name == "u32":
                layouts.append(Layout(name, keys, self.rng, value="u64"))
            for layout in layouts:
                commands = []
                for where, predicate in tests:
                    want = layout.select(predicate)
                    self.assertIn(want[1], {0, n} if where in ("> 20000", ">= 0") else range(n // 200, n * 3 // 5))
                    commands += [("select", ["--where", where], want),
                                 ("partition", ["--where", where], layout.partition(predicate))]
                self.check_layout(layout, commands)

    def test_pairs_and_records(self):
        """Pairs of several value types, and records with the key at an offset, aligned and
        not: every record written whole."""
        cases = [("u32", dict(value="u64")), ("i32", dict(value="f32")), ("f64", dict(value="i32")),
                 ("u64", dict(value="f64")), ("f32", dict(record=(12, 4))), ("i64", dict(record=(20, 8))),
                 ("i32", dict(record=(11, 3))), ("f64", dict(record=(13, 5))), ("u32", dict(record=(4, 0)))]
        for i, (name, shape) in enumerate(cases):
            for n in (4097, 65537) if i % 3 == 0 else (65537,):
                layout = Layout(name, keys_with_runs(TYPES[name], n, self.rng), self.rng, **shape)
                exprs = exprs_for(name)
                where, predicate = exprs[i % len(exprs)]
                where2, predicate2 = exprs[(i + 1) % len(exprs)]
                self.check_layout(layout, [("select", ["--where", where], layout.select(predicate)),
                                           ("partition", ["--where", where2], layout.partition(predicate2)),
                                           ("unique", [], layout.unique()),
                                           ("rle", ["--count-type", "u64"], layout.rle("u64"))])

    def test_runs_across_tiles(self):
        """Runs of 1, 3, 1000 and 100000 keys, mixed, and all keys equal: unique, rle (u32 and
        u64 counts) and reduce-by-key on pairs."""
        n = 300001
        patterns = {"ones": [1], "threes": [3], "thousands": [1000], "hundred-thousands": [100000],
                    "mixed": [1, 100000, 3, 1, 1000, 7, 4096, 1], "equal": [n]}
        for label, pattern in patterns.items():
            name = "f64" if label == "mixed" else "u32"
            keys = keys_in_runs_of(TYPES[name], pattern, n)
            layout = Layout(name, keys, self.rng)
            self.check_layout(layout, [("unique", [], layout.unique()), ("rle", [], layout.rle()),
                                       ("rle", ["--count-type", "u64"], layout.rle("u64"))])
            values = self.rng.integers(0, 2**32, n, dtype=np.uint32)
            pairs = Layout(name, keys, self.rng, value="u32", values=values)
            want, _ = reduce_reference(keys, values, "sum", "u64")
            self.check_layout(pairs, [("unique", [], pairs.unique()),
                                      ("reduce-by-key", ["--acc", "u64"], (want.tobytes(), len(want)))])

    def test_float_keys(self):
        """-0.0 and +0.0 differ for unique and rle (their bits do), not for --where; a NaN
        satisfies only !=; NaNs of other bits are other runs."""
        for name in ("f32", "f64"):
            dtype = np.dtype(TYPES[name])
            sp = float_specials(dtype)
            # runs of -0.0, +0.0, -0.0; NaNs of three kinds; infinities; each several times
            pattern = np.concatenate([sp[[0, 0, 1, 1, 1, 0]], sp[[2, 2, 3, 4, 4, 2]], sp[[5, 6, 6, 7]],
                                      np.array([1.5, 1.5, -1.5, 0.5], dtype=dtype)])
            keys = np.concatenate([pattern[self.rng.permutation(len(pattern))] if i % 5 else pattern
                                   for i in range(300)])
            keys = np.repeat(keys, self.rng.integers(1, 4, len(keys)))
            layout = Layout(name, keys, self.rng)
            heads = keys[run_starts(keys)]
            self.assertTrue(np.any((heads[:-1] == 0) & (heads[1:] == 0)), "no run of -0.0 beside one of +0.0")
            commands = [("unique", [], layout.unique()), ("rle", [], layout.rle()),
                        ("partition", ["--where", "== 0"], layout.partition(lambda k, b: k == 0))]
            commands += [("select", ["--where", where], layout.select(predicate)) for where, predicate in float_exprs(dtype)]
            self.check_layout(layout, commands)

    def test_reduce_by_key(self):
        """Sums that wrap at the value's width, or not with --acc; min and max (floats by
        totalOrder); float sums within their bound, and exactly for integer values."""
        n = 70001
        cases = [  # key, value, op, acc, values
            ("u32", "u32", "sum", None, "large"), ("u32", "u32", "sum", "u64", "large"), ("i64", "u32", "min", None, "large"),
            ("u32", "u32", "max", None, "large"), ("f64", "i32", "sum", None, "large"), ("i32", "i32", "sum", "i64", "large"),
            ("u64", "i32", "min", None, "large"), ("i32", "i32", "max", None, "large"), ("u32", "u64", "sum", None, "large"),
            ("f32", "u64", "max", None, "large"), ("u64", "i64", "sum", None, "large"), ("i64", "i64", "min", None, "large"),
            ("u32", "f32", "sum", None, "integers"), ("i32", "f32", "sum", None, "normal"), ("u64", "f32", "sum", "f64", "normal"),
            ("u32", "f32", "min", None, "special"), ("f32", "f32", "max", None, "special"), ("u32", "f64", "sum", None, "integers"),
            ("i64", "f64", "sum", None, "normal"), ("f64", "f64", "min", None, "special"), ("u32", "f64", "max", None, "special"),
            ("u32", "f32", "min", "f64", "normal"),
        ]
        for key, value, op, acc, kind in cases:
            vdtype = np.dtype(TYPES[value])
            keys = keys_with_runs(TYPES[key], n, self.rng, lengths=(1, 2, 5, 40, 700, 5000, 20000))
            if kind == "large" and vdtype.kind in "ui":
                info = np.iinfo(vdtype)
                values = self.rng.integers(info.min, info.max, n, dtype=vdtype, endpoint=True)
                values[: n // 2] = info.max - values[: n // 2] % 1000  # sums that wrap
            elif kind == "integers":
                values = self.rng.integers(-8, 9, n).astype(vdtype)  # exact sums
            elif kind == "normal":
                values = (self.rng.standard_normal(n) * 1000).astype(vdtype)
            else:
                values = draw_values(vdtype, n, self.rng)
            layout = Layout(key, keys, self.rng, value=value, values=values)
            args = ["--op", op] + (["--acc", acc] if acc else [])
            label = f"{layout.label} {' '.join(args)}"
            want, magnitude = reduce_reference(keys, values, op, acc)
            inp = self.write("in.bin", layout.data)
            if magnitude is None:
                self.check("reduce-by-key", layout.args + args, inp, (want.tobytes(), len(want)), label,
                           want.dtype.itemsize)
                continue
            acc_dtype = np.dtype(TYPES[acc]) if acc else vdtype
            got, report = self.compact("reduce-by-key", layout.args + args, inp, label)
            starts = run_starts(keys)
            self.assertEqual(report["runs"], len(starts), label)
            out = np.frombuffer(got, dtype=[("k", keys.dtype), ("v", acc_dtype)])
            self.assertEqual(out["k"].tobytes(), keys[starts].tobytes(), f"{label}: keys")
            lengths = np.diff(np.r_[starts, n]).astype(np.longdouble)
            u = np.longdouble(2.0 ** (-24 if acc_dtype.itemsize == 4 else -53))
            depth = lengths / 1024 + 64
            bound = depth * u / (1 - depth * u) * magnitude if kind != "integers" else 0 * magnitude
            error = np.abs(out["v"].astype(np.longdouble) - want)
            worst = int(np.argmax(error - bound))
            self.assertTrue(np.all(error <= bound), f"{label}: run {worst} (length {int(lengths[worst])}): got "
                            f"{out['v'][worst]!r}, exact {want[worst]!r}, bound {bound[worst]!r}")

    def test_npy(self):
        """A .npy input needs no layout options and gives a .npy output: the input's dtype,
        or (rle) a structured one of the key and the count."""
        n = 20001
        f32 = keys_with_runs("<f4", n, self.rng)
        np.save(self.path("f32.npy"), f32)
        got, report = self.compact("select", ["--where", "< 0.5"], self.path("f32.npy"), ".npy select")
        os.replace(self.path("out.bin"), self.path("out.npy"))
        loaded = np.load(self.path("out.npy"))
        with np.errstate(invalid="ignore"):
            want = f32[f32 < 0.5]
        self.assertEqual((loaded.dtype, loaded.shape, report["kept"]), (np.dtype("<f4"), want.shape, len(want)))
        self.assertEqual(loaded.tobytes(), want.tobytes())
        i64 = keys_with_runs("<i8", n, self.rng)
        np.save(self.path("i64.npy"), i64)
        for command, args, want in [("unique", [], i64[run_starts(i64)]),
                                    ("partition", ["--where", "< 0"], np.concatenate([i64[i64 < 0], i64[i64 >= 0]]))]:
            self.compact(command, args, self.path("i64.npy"), f".npy {command}")
            os.replace(self.path("out.bin"), self.path("out.npy"))
            loaded = np.load(self.path("out.npy"))
            self.assertEqual((loaded.dtype, loaded.shape), (np.dtype("<i8"), want.shape), command)
            self.assertEqual(loaded.tobytes(), want.tobytes(), command)
        for count_type in ("u32", "u64"):
            self.compact("rle", ["--count-type", count_type], self.path("i64.npy"), ".npy rle")
            os.replace(self.path("out.bin"), self.path("out.npy"))
            loaded = np.load(self.path("out.npy"))
            want = Layout("i64", i64, self.rng).rle(count_type)[0]
            fields = [loaded.dtype.fields[f][0] for f in loaded.dtype.names or ()]
            self.assertEqual(fields, [np.dtype("<i8"), np.dtype(TYPES[count_type])], f".npy rle {count_type}")
            self.assertEqual(loaded.tobytes(), want, f".npy rle {count_type}")

    def test_npy_fields(self):
        """A structured .npy file: records by the field --key names; reduce-by-key of (key,
        value) fields, into a structured .npy of the key and the accumulator."""
        n = 30001
        records = np.zeros(n, dtype=[("a", "<u2"), ("k", "<i4"), ("x", "<f8")])
        records["k"] = keys_with_runs("<i4", n, self.rng)
        records["a"], records["x"] = self.rng.integers(0, 2**16, n), self.rng.standard_normal(n)
        np.save(self.path("rows.npy"), records)
        for command, args, want in [("select", ["--where", ">= 250"], records[records["k"] >= 250]),
                                    ("unique", [], records[run_starts(records["k"])])]:
            self.compact(command, ["--key", "k"] + args, self.path("rows.npy"), f".npy fields {command}")
            os.replace(self.path("out.bin"), self.path("out.npy"))
            loaded = np.load(self.path("out.npy"))
            self.assertEqual(loaded.dtype, records.dtype, command)
            self.assertEqual(loaded.tobytes(), want.tobytes(), command)
        pairs = np.zeros(n, dtype=[("k", "<u8"), ("v", "<i4")])
        pairs["k"] = keys_with_runs("<u8", n, self.rng)
        pairs["v"] = self.rng.integers(-2**31, 2**31, n)
        np.save(self.path("pairs.npy"), pairs)
        want, _ = reduce_reference(pairs["k"], pairs["v"], "sum", "i64")
        _, report = self.compact("reduce-by-key", ["--key", "k", "--acc", "i64"], self.path("pairs.npy"), ".npy pairs")
        os.replace(self.path("out.bin"), self.path("out.npy"))
        loaded = np.load(self.path("out.npy"))
        self.assertEqual([loaded.dtype.fields[f][0] for f in loaded.dtype.names], [np.dtype("<u8"), np.dtype("<i8")])
        self.assertEqual((loaded.tobytes(), report["runs"]), (want.tobytes(), len(want)))

    def test_empty_input(self):
        """No records: an empty output and a count of 0, for every command, also for .npy."""
        inp = self.write("empty.bin", b"")
        for command, args in [("select", ["--keys", "u32", "--where", ">= 0"]),
                              ("partition", ["--keys", "f64", "--where", "isnan"]),
                              ("unique", ["--keys", "i64", "--record-size", "16"]), ("rle", ["--keys", "u32"]),
                              ("rle", ["--keys", "f32", "--count-type", "u64"]),
                              ("reduce-by-key", ["--keys", "u64", "--values", "f32", "--op", "max"])]:
            self.check(command, args, inp, (b"", 0), "empty input", 1)
        np.save(self.path("empty.npy"), np.zeros(0, dtype="<f4"))
        self.compact("select", ["--where", "> 0"], self.path("empty.npy"), "empty .npy")
        os.replace(self.path("out.bin"), self.path("out.npy"))
        loaded = np.load(self.path("out.npy"))
        self.assertEqual((loaded.dtype, loaded.shape), (np.dtype("<f4"), (0,)))

    def test_in_chunks(self):
        """Inputs several times --mem-limit run in chunks that carry the count and the last
        key: the same output as numpy's."""
        n = 2_000_000
        keys = keys_with_runs("<u4", n, self.rng, lengths=(1, 2, 3, 50, 1000, 30000, 300000))
        layout = Layout("u32", keys, self.rng)
        inp = self.write("in.bin", layout.data)
        where, predicate = "in [100,600)", lambda k, b: (k >= 100) & (k < 600)
        for command, args, want in [("select", ["--where", where], layout.select(predicate)),
                                    ("partition", ["--where", where], layout.partition(predicate)),
                                    ("unique", [], layout.unique()), ("rle", [], layout.rle())]:
            report = self.check(command, layout.args + args, inp, want, "in chunks", layout.record_bytes,
                                extra=["--mem-limit", "4M", "--temp-dir", self.dir])
            self.assertGreater(report.get("batches", 0), 1, f"{command}: one batch under --mem-limit 4M: {report}")
        # a stream past the budget: spilled to a scratch file, then the same
        p = run(["unique", "-q", "--mem-limit", "4M", "--temp-dir", self.dir] + layout.args, data=layout.data)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertTrue(p.stdout == layout.unique()[0], "unique of a stream past --mem-limit")
        values = self.rng.integers(0, 2**32, n, dtype=np.uint32)
        pairs = Layout("u32", keys, self.rng, value="u32", values=values)
        want, _ = reduce_reference(keys, values, "sum", "u64")
        inp = self.write("in.bin", pairs.data)
        report = self.check("reduce-by-key", pairs.args + ["--acc", "u64"], inp, (want.tobytes(), len(want)),
                            "in chunks", want.dtype.itemsize, extra=["--mem-limit", "4M"])
        self.assertGreater(report.get("batches", 0), 1, f"reduce-by-key: one batch under --mem-limit 4M: {report}")

    def test_run_too_long_for_u32_counts(self):
        """A run through several chunks longer than a u32 count holds is an error (exit 1, one
        line naming --count-type u64, no output left), and u64 counts take it. The u32 limit is
        lowered by GPUSORT_TEST_U32_COUNT_MAX so that the run fits a test."""
        n = 1_500_000
        keys = np.full(n, 7, dtype="<u4")  # 1000 runs of one key, then one of n - 1000 sevens
        keys[:1000] = np.arange(1000)
        layout = Layout("u32", keys, self.rng)
        inp = self.write("in.bin", layout.data)
        out = self.path("long.bin")
        env = dict(os.environ, GPUSORT_TEST_U32_COUNT_MAX=str(n - 1001))
        base = [GPUSORT, "rle", "--keys", "u32", "--mem-limit", "4M", "--temp-dir", self.dir]
        p = subprocess.run(base + [inp, out], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 1, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(f"a run of {n - 1000} equal keys (from record 1000)", err)
        self.assertIn("--count-type u64", err)
        self.assertFalse(os.path.exists(out), "output left by a failed rle")
        self.assertEqual(os.listdir(self.dir), ["in.bin"], "temporary files left behind")
        # a limit one longer: the same run fits; u64 counts never hit it
        for extra, limit, count_type in [([], n - 1000, "<u4"), (["--count-type", "u64"], 1, "<u8")]:
            env = dict(os.environ, GPUSORT_TEST_U32_COUNT_MAX=str(limit))
            p = subprocess.run(base + ["-f", "--json"] + extra + [inp, out], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            self.assertGreater(json.loads(p.stdout).get("batches", 0), 1, "one batch under --mem-limit 4M")
            got = np.fromfile(out, dtype=[("key", "<u4"), ("count", count_type)])
            self.assertEqual(len(got), 1001)
            self.assertTrue((got["key"][:1000] == np.arange(1000)).all() and got["key"][1000] == 7)
            self.assertTrue((got["count"][:1000] == 1).all() and got["count"][1000] == n - 1000, got[-3:])

    def assert_refused(self, args, *fragments, with_output=True):
        """Exit status 2, one line on stderr containing the fragments, and no output written."""
        out = self.path("never.bin")
        p = run(args + [out] if with_output else args)
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 2, f"{args}: {err}")
        lines = err.strip("\n").split("\n")
        self.assertEqual(len(lines), 1, f"{args}: expected one line on stderr, got:\n{err}")
        self.assertTrue(lines[0].startswith("gpusort: "), lines[0])
        for fragment in fragments:
            self.assertIn(fragment, lines[0], args)
        self.assertFalse(os.path.exists(out), f"{args}: wrote its output")
        self.assertEqual([f for f in os.listdir(self.dir) if ".gpusort-" in f], [], "temporary files left behind")
        return lines[0]

    def test_malformed_expressions(self):
        u32 = self.write("u32.bin", np.arange(5000, dtype="<u4").tobytes())
        f32 = self.write("f32.bin", np.arange(5000, dtype="<f4").tobytes())
        for inp, where, token in [(u32, "> 10 xyz", "xyz"), (u32, "banana", "banana"), (u32, "in [1,2]", "]"),
                                  (u32, "> 1.5", "1.5"), (u32, "< 5000000000", "5000000000"),
                                  (u32, "key >", None), (u32, "", None), (u32, "(> 1", None),
                                  (u32, "> 1 and", None), (u32, "& 0xff", None), (u32, "> 1 or or < 2", "or"),
                                  (f32, "== nan", "nan"), (f32, "< 1e39", "1e39"), (f32, "> 0.5)", ")")]:
            for command in ("select", "partition"):
                with self.subTest(command=command, where=where):
                    name = "f32" if inp == f32 else "u32"
                    line = self.assert_refused([command, "-f", "--keys", name, "--where", where, inp], "--where")
                    if token:  # named apart from the expression, which the message may quote whole
                        self.assertIn(token, line.rpartition(f"'{where}'")[0], line)

    def test_usage_errors(self):
        inp = self.write("in.bin", np.arange(100, dtype="<u4").tobytes())
        for args, fragment in [
            (["unique", "--keys", "u32", "--where", "> 1"], "unknown option '--where'"),
            (["rle", "--keys", "u32", "--where", "> 1"], "unknown option '--where'"),
            (["select", "--keys", "u32", "--where", "> 1", "--op", "sum"], "unknown option '--op'"),
            (["select", "--keys", "u32", "--where", "> 1", "--count-type", "u64"], "unknown option '--count-type'"),
            (["unique", "--keys", "u32", "--acc", "u64"], "unknown option '--acc'"),
            (["unique", "--keys", "u32", "--descending"], "unknown option '--descending'"),
            (["select", "--keys", "u32", "--where", "> 1", "--argsort"], "unknown option '--argsort'"),
            (["partition", "--keys", "u32", "--where", "> 1", "--verify"], "unknown option '--verify'"),
            (["rle", "--key", "0:u32:desc", "--record-size", "4"], "takes no direction"),
            (["reduce-by-key", "--keys", "u32", "--values", "u16"], "not u16"),
            (["unique", "--keys", "u32", "--values", "bytes:4"], "--values: unknown type"),
            (["select", "--keys", "u32"], "missing --where"),
            (["partition", "--keys", "u32"], "missing --where"),
            (["select", "--keys", "u32", "--where", ">= 2", "--where", "< 2"], "--where is given twice"),
            (["select", "--keys", "bytes:2", "--where", "> 1"], "--keys: unknown type 'bytes:2'"),
            (["rle", "--keys", "u32", "--count-type", "u16"], "--count-type takes u32 or u64"),
            (["reduce-by-key", "--keys", "u32", "--values", "u32", "--op", "avg"], "--op takes sum, min or max"),
            (["reduce-by-key", "--keys", "u32"], "--values"),
            (["reduce-by-key", "--keys", "u32", "--values", "u32", "--acc", "u16"], "--acc: unknown type"),
            (["unique", "--keys", "u32", "--values", "u32", "--record-size", "8"], "--values and --record-size"),
            (["unique", "--keys", "u32", "--key-offset", "4"], "--key-offset needs --record-size"),
        ]:
            with self.subTest(args=args):
                self.assert_refused(args + [inp], fragment)
        self.assert_refused(["select", "--keys", "u32", "--where", "> 1", inp, "a", "b"], "too many arguments",
                            with_output=False)
        self.assert_refused(["unique", "--keys", "u32", "--values", "u32", self.write("odd.bin", bytes(12))],
                            "odd.bin")  # not a whole number of records
        # an existing output is kept without -f
        self.write("exists.bin", b"keep")
        p = run(["unique", "--keys", "u32", inp, self.path("exists.bin")])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("-f", p.stderr.decode())
        with open(self.path("exists.bin"), "rb") as f:
            self.assertEqual(f.read(), b"keep")
        p = run(["select", "--keys", "u32", "--where", "> 1", "-f", inp, inp])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(np.fromfile(inp, dtype="<u4").tolist(), list(range(100)))

    def test_early_walk(self):
        """The early walk of unique, rle and reduce-by-key (NVIDIA's preset, here through its
        knob): -v names each one's tile, a subgroup short of the workgroup, and their results
        around that tile's edges and over many tiles are numpy's."""
        walk = {"GPUSORT_COMPACT_EARLY_WALK": "1"}
        pattern = (r"tile: (\d+) invocations \((\d+) holding keys, a subgroup walking the look-back\) "
                   r"x (\d+) keys = (\d+) keys")
        keys = keys_with_runs("<u4", 1000, self.rng)
        for command in ("unique", "rle", "reduce-by-key"):
            layout = Layout("u32", keys, self.rng, value="u32") if command == "reduce-by-key" else Layout("u32", keys, self.rng)
            inp = self.write("in.bin", layout.data)
            p = run([command, "-v", "-f", *layout.args, inp, self.path("o")], env=walk)
            self.assertEqual(p.returncode, 0, p.stderr)
            invocations, holding, items, tile = map(int, re.search(pattern, p.stderr.decode()).groups())
            subgroup = invocations - holding # (the walking subgroup)
            self.assertIn(subgroup, (8, 16, 32, 64, 128), command)
            self.assertEqual(invocations % subgroup, 0, command)
            self.assertEqual(holding * items, tile, command)
            p = run([command, "-v", "-f", *layout.args, inp, self.path("o")], env={"GPUSORT_COMPACT_EARLY_WALK": "0"})
            self.assertIn(f"tile: {invocations} invocations x {items} keys = {invocations * items} keys",
                          p.stderr.decode())
            # the knob's members: the command's kernel walks where named alone, and not where only
            # the others are (the rle command counts its runs from unique's kernel; the rle
            # kernel, that of `sort --rle`, is test_compact.c's)
            member = "unique" if command == "rle" else command
            others = ",".join(c for c in ("unique", "rle", "reduce-by-key") if c != member)
            p = run([command, "-v", "-f", *layout.args, inp, self.path("o")], env={"GPUSORT_COMPACT_EARLY_WALK": member})
            self.assertRegex(p.stderr.decode(), pattern, command)
            p = run([command, "-v", "-f", *layout.args, inp, self.path("o")], env={"GPUSORT_COMPACT_EARLY_WALK": others})
            self.assertNotRegex(p.stderr.decode(), pattern, command)
            for n in [tile - 1, tile, tile + 1, 40 * tile + 3]:
                for lengths in [(1,), (1, 1, 2, 3, 5, 17, 300, 2000), (tile + 1,), (3 * tile,)]:
                    run_keys = keys_with_runs("<u4", n, self.rng, lengths)
                    if command == "reduce-by-key": # (u32 sums, wrapping)
                        values = self.rng.integers(0, 2**32, n, dtype=np.uint32)
                        layout = Layout("u32", run_keys, self.rng, value="u32", values=values)
                        want, _ = reduce_reference(run_keys, values, "sum", None)
                        want = (want.tobytes(), len(want))
                    else:
                        layout = Layout("u32", run_keys, self.rng)
                        want = layout.unique() if command == "unique" else layout.rle()
                    layout.label = f"{command} n={n} runs of {lengths}"
                    self.check_layout(layout, [(command, [], want)], env=walk)

    def test_report(self):
        """The count line on stderr before the checksum (not with -q); --json's count; data
        through pipes."""
        keys = keys_with_runs("<u4", 4097, self.rng)
        layout = Layout("u32", keys, self.rng)
        inp = self.write("in.bin", layout.data)
        out = self.path("out.bin")
        def predicate(k, b):
            return k < 10

        for command, args, want, line in [
            ("select", ["--where", "key < 10"], layout.select(predicate), "kept {} of 4097 records"),
            ("partition", ["--where", "key < 10"], layout.partition(predicate), "split at {} of 4097 records"),
            ("unique", [], layout.unique(), "{} runs in 4097 records"),
            ("rle", [], layout.rle(), "{} runs in 4097 records"),
        ]:
            p = run([command, "-f", "--keys", "u32", *args, inp, out])
            err = p.stderr.decode()
            self.assertEqual(p.returncode, 0, err)
            lines = err.strip("\n").split("\n")
            self.assertEqual(lines[-2], "gpusort: " + line.format(want[1]), err)
            self.assertRegex(lines[-1], r"^XXH3 \(" + re.escape(out) + r"\) = [0-9a-f]{16}$")
            self.assertTrue(any(l.lstrip().startswith("compact ") for l in lines), err)
            tag = subprocess.run(["xxhsum", "-H3", "--tag", out], capture_output=True, text=True).stdout.strip()
            self.assertEqual(lines[-1], tag)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), want[0], command)
            p = run([command, "-q", "-f", "--keys", "u32", *args, inp, out])
            self.assertEqual((p.returncode, p.stderr), (0, b""), command)
            # stdin to stdout: the data alone on stdout, the --json object on stderr
            p = run([command, "--json", "--keys", "u32", *args], data=layout.data)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, want[0], f"{command}: through pipes")
            r = json.loads(p.stderr)
            self.assertEqual((r["command"], r["records"], r[COUNTED[command]], r["output"]),
                             (command, 4097, want[1], "-"))
            self.assertIn("compact", r["stages"])
        values = np.arange(4097, dtype="<u4")
        pairs = Layout("u32", keys, self.rng, value="u32", values=values)
        want, _ = reduce_reference(keys, values, "sum", None)
        p = run(["reduce-by-key", "-f", *pairs.args, self.write("pairs.bin", pairs.data), out])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"gpusort: {len(want)} runs in 4097 records\n", p.stderr.decode())


if __name__ == "__main__":
    GPUSORT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
