#!/usr/bin/python3
"""Keys of every form through the command line: narrow, half and big-endian types, byte
strings (bytes:N), composite keys (--key OFFSET:TYPE[:desc]), in both directions, as keys,
pairs, records and argsort, with check and --verify, in core and out of core.

The reference is numpy's stable lexsort over each record's normalized form, computed here
column by column from numpy's own views of the fields (an order-preserving byte string: a
field's ordered bits, most significant byte first, complemented when descending); for the
integer types it is also checked against numpy's stable sort of the values themselves.

usage: test_keys.py GPUSORT [unittest options]
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

GPUSORT = None

# name -> (numpy dtype of the raw field, kind): kind u (unsigned), i (signed), f (float), by
# which the field's bits map to ordered bits
TYPES = {
    "u8": ("<u1", "u"), "i8": ("<i1", "i"), "u16": ("<u2", "u"), "i16": ("<i2", "i"), "f16": ("<f2", "f"),
    "bf16": ("<u2", "f"), "u32": ("<u4", "u"), "i32": ("<i4", "i"), "f32": ("<f4", "f"), "u64": ("<u8", "u"),
    "i64": ("<i8", "i"), "f64": ("<f8", "f"), "u16be": (">u2", "u"), "i16be": (">i2", "i"), "u32be": (">u4", "u"),
    "i32be": (">i4", "i"), "f32be": (">f4", "f"), "u64be": (">u8", "u"), "i64be": (">i8", "i"), "f64be": (">f8", "f"),
}


def field_columns(records, offset, name, descending):
    """The normalized form of one key field of every record, as uint8 columns (most
    significant first)."""
    if name.startswith("bytes:"):
        width = int(name[6:])
        cols = records[:, offset:offset + width].astype(np.uint8)
    else:
        dtype, kind = TYPES[name]
        width = np.dtype(dtype).itemsize
        raw = np.ascontiguousarray(records[:, offset:offset + width]).view(dtype)[:, 0]
        bits = raw.astype(np.dtype(dtype).newbyteorder("=")).view(f"u{width}").astype(np.uint64)
        sign = np.uint64(1) << np.uint64(8 * width - 1)
        full = np.uint64((1 << (8 * width)) - 1)
        if kind == "i":
            bits = bits ^ sign
        elif kind == "f":
            bits = np.where(bits & sign, ~bits & full, bits | sign)
        cols = np.stack([(bits >> np.uint64(8 * (width - 1 - b))) & np.uint64(255) for b in range(width)],
                        axis=1).astype(np.uint8)
    return 255 - cols if descending else cols


# A composite key of five parts, mixed directions, in 24-byte records: (offset, type, desc).
FIVE_PARTS = [(0, "u8", False), (4, "f32be", True), (8, "bytes:3", False), (12, "i16", True), (16, "u64", False)]


def key_args(parts):
    """The --key options of a composite key's parts."""
    args = []
    for offset, name, desc in parts:
        args += ["--key", f"{offset}:{name}" + (":desc" if desc else "")]
    return args


def reference_order(data, record_bytes, parts, descending=False):
    """Indices of the records in key order, stably: parts are (offset, type name, desc)."""
    records = np.frombuffer(data, dtype=np.uint8).reshape(-1, record_bytes)
    if len(records) == 0:
        return np.zeros(0, dtype=np.int64)
    cols = np.concatenate([field_columns(records, off, name, desc != descending) for off, name, desc in parts], axis=1)
    return np.lexsort(cols.T[::-1])  # the last key given to lexsort is the primary one


def reference_sort(data, record_bytes, parts, descending=False):
    records = np.frombuffer(data, dtype=np.uint8).reshape(-1, record_bytes)
    return records[reference_order(data, record_bytes, parts, descending)].tobytes()


def values_of(name, n, dist, rng):
    """n raw fields of the type (as bytes): random bits, few distinct, all equal, or (floats)
    the special values mixed with ordinary ones."""
    if name.startswith("bytes:"):
        width = int(name[6:])
    else:
        width = np.dtype(TYPES[name][0]).itemsize
    raw = rng.integers(0, 256, (n, width), dtype=np.uint8)
    if dist == "few" and n:
        raw = raw[rng.integers(0, min(n, 5), n)]
    elif dist == "equal" and n:
        raw = np.repeat(raw[:1], n, axis=0)
    elif dist == "special" and n:
        raw[: min(n, len(special_bits(name)))] = special_bits(name)[: min(n, len(special_bits(name)))]
        raw = raw[rng.permutation(n)]
    return raw


def special_bits(name):
    """±0, ±inf, NaNs of both signs and two payloads, denormals, ±1 of a float type, as raw
    fields; integers: extremes, 0, ±1."""
    dtype, kind = TYPES[name]
    width = np.dtype(dtype).itemsize
    if kind == "f" and width == 2 and name == "bf16":
        bits = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x0001, 0x8001, 0x3F80, 0xBF80]
        values = np.array(bits, dtype=np.uint16).astype(np.dtype(dtype))
    elif kind == "f":
        ftype = np.dtype(dtype)
        base = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0], dtype=ftype)
        tiny = np.array([1, 1 << (8 * width - 1) | 1], dtype=f"u{width}").view(f"<f{width}").astype(ftype)
        payload = np.array([(1 << (8 * width - 1)) - 1], dtype=f"u{width}").view(f"<f{width}").astype(ftype)
        values = np.concatenate([base, tiny, payload]).astype(ftype)
    else:
        info = np.iinfo(np.dtype(dtype))
        values = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1] + ([-1] if kind == "i" else []),
                          dtype=dtype)
    return np.frombuffer(values.tobytes(), dtype=np.uint8).reshape(-1, width)


class KeyForms(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gpusort-keys-")
        self.rng = np.random.default_rng(7)

    def tearDown(self):
        for name in os.listdir(self.dir):
            os.remove(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def gpusort(self, *args, data=None, want=0):
        if data is not None:
            with open(self.path("in.bin"), "wb") as f:
                f.write(data)
        p = subprocess.run([GPUSORT, *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, want, f"{' '.join(args)}: {p.stderr}")
        return p

    def sort(self, args, data):
        self.gpusort("-q", "-f", "--verify", *args, self.path("in.bin"), self.path("out.bin"), data=data)
        with open(self.path("out.bin"), "rb") as f:
            return f.read()

    def test_every_type_both_directions(self):
        for name in TYPES:
            for n in (0, 1, 9, 3001):
                for dist in ("random", "few", "special") if n > 100 else ("random",):
                    data = values_of(name, n, dist, self.rng).tobytes()
                    width = len(data) // n if n else np.dtype(TYPES[name][0]).itemsize
                    for desc in (False, True):
                        with self.subTest(type=name, n=n, dist=dist, descending=desc):
                            args = ["--keys", name] + (["--descending"] if desc else [])
                            self.assertEqual(self.sort(args, data), reference_sort(data, width, [(0, name, False)], desc))

    def test_integer_reference_agrees_with_numpy(self):
        """The reference itself: for integers it is numpy's stable sort of the values."""
        for name in ("u8", "i8", "i16", "u16be", "i32be", "i64be"):
            dtype = np.dtype(TYPES[name][0])
            data = values_of(name, 2000, "random", self.rng).tobytes()
            expected = np.sort(np.frombuffer(data, dtype=dtype), kind="stable").tobytes()
            self.assertEqual(reference_sort(data, dtype.itemsize, [(0, name, False)]), expected, name)
            self.assertEqual(self.sort(["--keys", name], data), expected, name)

    def test_half_floats_in_total_order(self):
        """-NaN < -inf < -1 < -denormal < -0 < +0 < denormal < 1 < inf < +NaN, for f16 and bf16."""
        orders = {
            "f16": [0xFE00, 0xFC00, 0xBC00, 0x8001, 0x8000, 0x0000, 0x0001, 0x3C00, 0x7C00, 0x7E00],
            "bf16": [0xFFC0, 0xFF80, 0xBF80, 0x8001, 0x8000, 0x0000, 0x0001, 0x3F80, 0x7F80, 0x7FC0],
        }
        for name, ordered in orders.items():
            shuffled = np.array(ordered, dtype="<u2")[self.rng.permutation(len(ordered))]
            out = np.frombuffer(self.sort(["--keys", name], shuffled.tobytes()), dtype="<u2")
            self.assertEqual([hex(v) for v in out], [hex(v) for v in ordered], name)
            out = np.frombuffer(self.sort(["--keys", name, "--descending"], shuffled.tobytes()), dtype="<u2")
            self.assertEqual([hex(v) for v in out], [hex(v) for v in ordered[::-1]], name)

    def test_pairs_with_narrow_and_big_endian_types(self):
        for key, value in (("u16", "u32"), ("u8", "f64"), ("u64be", "i16"), ("u32", "u16"), ("f16", "bf16")):
            n = 2500
            keys = values_of(key, n, "few", self.rng)
            vals = values_of(value, n, "random", self.rng)
            data = np.concatenate([keys, vals], axis=1).tobytes()
            width = keys.shape[1] + vals.shape[1]
            for desc in (False, True):
                with self.subTest(key=key, value=value, descending=desc):
                    args = ["--keys", key, "--values", value] + (["--descending"] if desc else [])
                    self.assertEqual(self.sort(args, data), reference_sort(data, width, [(0, key, False)], desc))

    def test_gensort_records_stable(self):
        """100-byte records with a 10-byte key compared as unsigned bytes, as the Sort
        Benchmark's gensort writes them; few distinct keys, so stability shows."""
        n = 20000
        records = self.rng.integers(0, 256, (n, 100), dtype=np.uint8)
        records[:, :10] = records[self.rng.integers(0, 300, n), :10]
        data = records.tobytes()
        self.assertEqual(self.sort(["--keys", "bytes:10", "--record-size", "100"], data),
                         reference_sort(data, 100, [(0, "bytes:10", False)]))
        self.assertEqual(self.sort(["--keys", "bytes:10", "--record-size", "100", "--descending"], data),
                         reference_sort(data, 100, [(0, "bytes:10", False)], True))
        indices = np.frombuffer(self.sort(["--keys", "bytes:10", "--record-size", "100", "--argsort", "--index-type",
                                           "u64"], data), dtype="<u8")
        np.testing.assert_array_equal(indices, reference_order(data, 100, [(0, "bytes:10", False)]))
        # the key elsewhere in the record, and lengths around the words of 8 bytes
        for width in (1, 7, 8, 9, 16, 17, 33, 128):
            records = self.rng.integers(0, 4, (3000, 140), dtype=np.uint8)  # many ties
            data = records.tobytes()
            with self.subTest(width=width):
                self.assertEqual(
                    self.sort(["--keys", f"bytes:{width}", "--record-size", "140", "--key-offset", "3"], data),
                    reference_sort(data, 140, [(3, f"bytes:{width}", False)]))

    def test_composite_keys_with_mixed_directions(self):
        n = 6000
        records = self.rng.integers(0, 256, (n, 24), dtype=np.uint8)
        for offset, width in ((0, 1), (4, 4), (8, 3), (12, 2)):  # few values per part, so later parts matter
            records[:, offset:offset + width] = records[self.rng.integers(0, 3, n), offset:offset + width]
        data = records.tobytes()
        parts = FIVE_PARTS
        spec = [*key_args(parts)]
        for desc in (False, True):
            with self.subTest(descending=desc):
                args = ["--record-size", "24", *spec] + (["--descending"] if desc else [])
                self.assertEqual(self.sort(args, data), reference_sort(data, 24, parts, desc))
        indices = np.frombuffer(self.sort(["--record-size", "24", *spec, "--argsort"], data), dtype="<u4")
        np.testing.assert_array_equal(indices, reference_order(data, 24, parts))
        # check agrees: the sorted output is sorted, the input is not
        self.gpusort("check", "-q", "--record-size", "24", *spec, self.path("out.bin"), want=3)  # argsort output
        sorted_data = reference_sort(data, 24, parts)
        with open(self.path("sorted.bin"), "wb") as f:
            f.write(sorted_data)
        self.gpusort("check", "-q", "--record-size", "24", *spec, self.path("sorted.bin"))
        p = self.gpusort("check", "--record-size", "24", *spec, self.path("in.bin"), want=3)
        self.assertIn("not sorted", p.stderr)

    def test_check_every_form(self):
        for name in ("u16", "f16", "bf16", "i32be", "f64be", "bytes:5"):
            data = values_of(name, 1000, "random", self.rng).tobytes()
            width = len(data) // 1000
            with open(self.path("in.bin"), "wb") as f:
                f.write(reference_sort(data, width, [(0, name, False)]))
            with self.subTest(type=name):
                self.gpusort("check", "-q", "--keys", name, self.path("in.bin"))
                self.gpusort("check", "-q", "--keys", name, "--descending", self.path("in.bin"), want=3)

    def test_the_last_keys_option_counts(self):
        data = values_of("u16", 500, "random", self.rng).tobytes()
        self.assertEqual(self.sort(["--keys", "bytes:4", "--keys", "u16"], data),
                         reference_sort(data, 2, [(0, "u16", False)]))

    def test_stdin_and_stdout(self):
        data = values_of("u16be", 5000, "random", self.rng).tobytes()
        p = subprocess.run([GPUSORT, "-q", "--keys", "u16be"], input=data, capture_output=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, reference_sort(data, 2, [(0, "u16be", False)]))

    def test_usage_errors(self):
        with open(self.path("in.bin"), "wb") as f:
            f.write(bytes(64))
        inp, out = self.path("in.bin"), self.path("never.bin")
        cases = [
            (["--keys", "bytes:0"], "bytes:N takes N from 1 to 128"),
            (["--keys", "bytes:129"], "bytes:N takes N from 1 to 128"),
            (["--keys", "u17"], "unknown type 'u17'"),
            (["--values", "bytes:4", "--keys", "u32"], "unknown type 'bytes:4'"),
            (["--key", "0:u16"], "--key needs --record-size"),
            (["--key", "0:u16", "--keys", "u16", "--record-size", "4"], "leave out --keys"),
            (["--key", "0:u16:up", "--record-size", "4"], "the direction is desc or asc"),
            (["--key", "x:u16", "--record-size", "4"], "OFFSET a number of bytes"),
            (["--key", "price", "--record-size", "4"], "is not a .npy file: key fields are named only in .npy files"),
            (["--key", "3:u16", "--record-size", "4"], "does not fit a 4-byte record"),
            (["--keys", "bytes:10", "--record-size", "8"], "does not fit a 8-byte record"),
            (["--keys", "u16", "--bits", "0:17"], "HI <= 16 for 16-bit keys"),
            (["--record-size", "8", "--key", "0:u16", "--key", "2:bytes:3", "--bits", "8:41"], "HI <= 40"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                p = self.gpusort(*args, inp, out, want=2)
                self.assertIn(message, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertFalse(os.path.exists(out))
        p = self.gpusort("scan", "--keys", "bytes:2", inp, out, want=2)  # (numbers of every other form scan)
        self.assertIn("unknown type 'bytes:2'", p.stderr)
        p = self.gpusort("select", "--where", "> 1", "--keys", "bytes:2", inp, out, want=2)
        self.assertIn("unknown type 'bytes:2'", p.stderr)
        self.assertFalse(os.path.exists(out))
        # a file that is not a whole number of records
        with open(self.path("odd.bin"), "wb") as f:
            f.write(bytes(7))
        p = self.gpusort("--keys", "bytes:3", self.path("odd.bin"), out, want=2)
        self.assertIn("not a multiple of 3", p.stderr)

    def gen(self, args, n, dist="uniform"):
        self.gpusort("gen", "-q", "-f", "-n", str(n), "--dist", dist, *args, self.path("gen.bin"))
        with open(self.path("gen.bin"), "rb") as f:
            return f.read()

    def test_gen_every_form(self):
        """gen writes keys of every form: sorted and reversed are in the key's own order (check
        and numpy agree), the other distributions hold what they promise, pair values are the
        index in the value's type, and the same options give the same bytes."""
        forms = [(["--keys", name], [(0, name, False)], np.dtype(TYPES[name][0]).itemsize)
                 for name in ("u8", "i8", "u16", "i16", "f16", "bf16", "u16be", "i32be", "f32be", "f64be")]
        forms += [(["--keys", "bytes:10", "--record-size", "100"], [(0, "bytes:10", False)], 100),
                  (["--keys", "bytes:20", "--record-size", "32", "--key-offset", "5"], [(5, "bytes:20", False)], 32)]
        parts = FIVE_PARTS
        spec = ["--record-size", "24", *key_args(parts)]
        forms.append((spec, parts, 24))
        n = 5000
        for args, key, width in forms:
            with self.subTest(form=" ".join(args)):
                for dist in ("sorted", "reversed"):
                    data = self.gen(args, n, dist)
                    self.assertEqual(len(data), n * width)
                    order = reference_order(data, width, key, dist == "reversed")
                    np.testing.assert_array_equal(order, np.arange(n), f"{dist}: not in order")
                    self.gpusort("check", "-q", *args, *(["--descending"] if dist == "reversed" else []),
                                 self.path("gen.bin"))
                data = self.gen(args, n)
                self.assertEqual(data, self.gen(args, n), "the same options, other bytes")
                self.assertNotEqual(data, self.gen(args + ["--seed", "2"], n), "another seed, the same bytes")
                records = np.frombuffer(data, dtype=np.uint8).reshape(n, width)
                forms_of = np.concatenate([field_columns(records, o, t, d) for o, t, d in key], axis=1)
                self.assertGreater(len(np.unique(forms_of, axis=0)), min(n // 2, 200),
                                   "uniform keys mostly distinct (a byte's 256 values all but)")
                for dist, distinct in (("equal", 1), ("few:3", 3)):
                    records = np.frombuffer(self.gen(args, n, dist), dtype=np.uint8).reshape(n, width)
                    forms_of = np.concatenate([field_columns(records, o, t, d) for o, t, d in key], axis=1)
                    got = len(np.unique(forms_of, axis=0))  # (values drawn for a byte may coincide)
                    self.assertTrue(got == distinct or (width == 1 and 0 < got < distinct), f"{dist}: {got} values")
                for dist in ("lowbits:3", "highbits:3"):
                    records = np.frombuffer(self.gen(args, n, dist), dtype=np.uint8).reshape(n, width)
                    bits = np.unpackbits(np.concatenate([field_columns(records, o, t, d) for o, t, d in key], axis=1),
                                         axis=1)
                    varying = np.flatnonzero(bits.min(axis=0) != bits.max(axis=0))
                    want = range(bits.shape[1] - 3, bits.shape[1]) if dist == "lowbits:3" else range(3)
                    self.assertTrue(set(varying) <= set(want) and len(varying) > 0, f"{dist}: bits {varying} vary")
        # the half types' specials, and their index values
        for name, want in (("f16", [0x7C00, 0xFC00, 0x8000, 0x0000, 0x0001]), ("bf16", [0x7F80, 0xFF80, 0x8000, 0x0001])):
            bits = set(np.frombuffer(self.gen(["--keys", name], 2000, "special"), dtype="<u2").tolist())
            self.assertTrue(set(want) <= bits, f"{name}: specials missing from {sorted(bits)[:10]}")
            self.assertTrue(any((b & 0x7FFF) > (0x7C00 if name == "f16" else 0x7F80) for b in bits), f"{name}: no NaN")
        pairs = np.frombuffer(self.gen(["--keys", "u8", "--values", "f16"], 3000), dtype=[("k", "u1"), ("v", "<f2")])
        np.testing.assert_array_equal(pairs["v"], np.arange(3000).astype(np.float16))
        pairs = np.frombuffer(self.gen(["--keys", "bf16", "--values", "i16be"], 70000), dtype=[("k", "<u2"), ("v", ">i2")])
        np.testing.assert_array_equal(pairs["v"], np.arange(70000).astype(np.int16))

    def test_bit_ranges(self):
        """--bits LO:HI on keys of other forms: bits of the normalized form (bit 0 the lowest of
        its last byte; complemented when descending) count, the others do not, and keys equal on
        them keep input order; in core, out of core, verified, and in check."""
        def reference(data, width, parts, lo, hi, desc=False):
            records = np.frombuffer(data, dtype=np.uint8).reshape(-1, width)
            cols = np.concatenate([field_columns(records, o, t, d != desc) for o, t, d in parts], axis=1)
            bits = np.unpackbits(cols, axis=1)
            total = bits.shape[1]
            bits[:, :total - hi] = 0
            bits[:, total - lo:total] = 0
            return records[np.lexsort(np.packbits(bits, axis=1).T[::-1])].tobytes()

        u16 = values_of("u16", 100000, "random", self.rng).tobytes()
        gensort = self.rng.integers(0, 256, (50000, 100), dtype=np.uint8)
        gensort[:, :10] = gensort[self.rng.integers(0, 300, 50000), :10]
        records = self.rng.integers(0, 256, (30000, 24), dtype=np.uint8)
        parts = FIVE_PARTS
        spec = ["--record-size", "24", *key_args(parts)]
        cases = [(["--keys", "u16"], u16, 2, [(0, "u16", False)], 4, 12),
                 (["--keys", "bytes:10", "--record-size", "100"], gensort.tobytes(), 100, [(0, "bytes:10", False)], 0, 16),
                 (["--keys", "bytes:10", "--record-size", "100"], gensort.tobytes(), 100, [(0, "bytes:10", False)], 20, 75),
                 (spec, records.tobytes(), 24, parts, 60, 110)]
        for args, data, width, key, lo, hi in cases:
            for desc, extra in ((False, ["--verify"]), (True, []), (False, ["--mem-limit", "2M", "--verify"])):
                with self.subTest(args=args, bits=(lo, hi), descending=desc, extra=extra):
                    got = self.sort(args + ["--bits", f"{lo}:{hi}"] + (["--descending"] if desc else []) + extra, data)
                    self.assertEqual(got, reference(data, width, key, lo, hi, desc))
        with open(self.path("sorted.bin"), "wb") as f:
            f.write(reference(u16, 2, [(0, "u16", False)], 4, 12))
        self.gpusort("check", "-q", "--keys", "u16", "--bits", "4:12", self.path("sorted.bin"))
        self.gpusort("check", "-q", "--keys", "u16", self.path("sorted.bin"), want=3)

    def sort_out_of_core(self, args, data, extra=()):
        """A sort within --mem-limit 2M: out of core (its records counted by bucket; checked)."""
        p = self.gpusort("--json", "-f", "--mem-limit", "2M", "--temp-dir", self.dir, *args, *extra,
                         self.path("in.bin"), self.path("out.bin"), data=data)
        self.assertIn("buckets", json.loads(p.stdout)["stages"], f"{args}: not out of core: {p.stdout}")
        with open(self.path("out.bin"), "rb") as f:
            return f.read()

    def test_beyond_the_budget(self):
        """Files beyond the budget sort out of core, bucketed by the top bits of the normalized
        form: gensort records (stable, both directions), narrow and half types, composite keys
        with mixed directions, keys equal in their first bytes, a stream; argsort of such keys
        stays in core (refused beyond it, leaving nothing behind)."""
        n = 100000
        records = self.rng.integers(0, 256, (n, 100), dtype=np.uint8)
        records[:, :10] = records[self.rng.integers(0, 3000, n), :10]  # ties, so stability shows
        data = records.tobytes()
        for desc in (False, True):
            with self.subTest(descending=desc):
                args = ["--keys", "bytes:10", "--record-size", "100"] + (["--descending"] if desc else [])
                self.assertEqual(self.sort_out_of_core(args, data, ["--verify"]),
                                 reference_sort(data, 100, [(0, "bytes:10", False)], desc))
        for name, dist in (("u16", "random"), ("f16", "special"), ("i8", "few"), ("u32be", "random")):
            values = values_of(name, 1 << 20 if name != "u32be" else 1 << 19, dist, self.rng)
            with self.subTest(name=name):
                self.assertEqual(self.sort_out_of_core(["--keys", name], values.tobytes(), ["--descending"]),
                                 reference_sort(values.tobytes(), values.shape[1], [(0, name, False)], True))
        m = 150000
        records = self.rng.integers(0, 256, (m, 24), dtype=np.uint8)
        for offset, width in ((0, 1), (4, 4), (8, 3), (12, 2)):
            records[:, offset:offset + width] = records[self.rng.integers(0, 3, m), offset:offset + width]
        data = records.tobytes()
        parts = FIVE_PARTS
        spec = [*key_args(parts)]
        self.assertEqual(self.sort_out_of_core(["--record-size", "24", *spec], data, ["--verify"]),
                         reference_sort(data, 24, parts))
        # the first 14 bytes of a 16-byte key equal throughout: the buckets go below them
        records = np.repeat(self.rng.integers(0, 256, (1, 20), dtype=np.uint8), n, axis=0)
        records[:, 14:] = self.rng.integers(0, 256, (n, 6), dtype=np.uint8)
        data = records.tobytes()
        self.assertEqual(self.sort_out_of_core(["--keys", "bytes:16", "--record-size", "20"], data),
                         reference_sort(data, 20, [(0, "bytes:16", False)]))
        # a stream, spilled to a scratch file, to stdout
        data = values_of("u16", 1 << 20, "random", self.rng).tobytes()
        p = subprocess.run([GPUSORT, "-q", "--mem-limit", "2M", "--temp-dir", self.dir, "--keys", "u16"], input=data,
                           capture_output=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, reference_sort(data, 2, [(0, "u16", False)]))
        for name in os.listdir(self.dir):
            os.remove(os.path.join(self.dir, name))
        p = self.gpusort("--keys", "u16", "--argsort", "--mem-limit", "4M", "-f", self.path("in.bin"),
                         self.path("out.bin"), data=data, want=1)
        self.assertIn("argsort runs in core only", p.stderr)
        self.assertEqual(sorted(os.listdir(self.dir)), ["in.bin"])

    def test_transfers_in_place_and_through_staging(self):
        """The normalized forms go up and the order comes back read and written in place by the
        device where it imports host memory (lavapipe does), through staging otherwise
        (GPUSORT_HOST_IMPORT=0, with staging slots far smaller than the columns): the same
        output either way, in core, out of core (a run per bucket) and from a stream."""
        n = 100003  # 3.6 MB: out of core within --mem-limit 2M
        records = self.rng.integers(0, 256, (n, 36), dtype=np.uint8)
        records[:, :12] = records[self.rng.integers(0, 500, n), :12]  # ties, so stability shows
        data = records.tobytes()
        with open(self.path("in.bin"), "wb") as f:
            f.write(data)
        want = reference_sort(data, 36, [(0, "bytes:12", False)])
        for env, path in (({}, "read in place"), ({"GPUSORT_HOST_IMPORT": "0", "GPUSORT_CHUNK_BYTES": "40000"},
                                                  "through staging")):
            for extra in ([], ["--mem-limit", "2M", "--temp-dir", self.dir]):
                with self.subTest(env=env, extra=extra):
                    p = subprocess.run([GPUSORT, "-f", "--verify", "--keys", "bytes:12", "--record-size", "36", *extra,
                                        self.path("in.bin"), self.path("out.bin")],
                                       capture_output=True, text=True, timeout=300,
                                       env=dict(os.environ, GPUSORT_TRACE="1", **env))
                    self.assertEqual(p.returncode, 0, p.stderr)
                    with open(self.path("out.bin"), "rb") as f:
                        self.assertEqual(f.read(), want)
                    if extra:
                        self.assertGreater(p.stderr.count("normalized forms uploaded"), 1, "not out of core")
                    if "llvmpipe" in p.stderr or env:  # (other devices may lack the import)
                        self.assertIn(f"normalized forms uploaded ({path})", p.stderr)
                        self.assertIn("order downloaded (" + ("written in place" if not env else path), p.stderr)
            p = subprocess.run([GPUSORT, "--keys", "bytes:12", "--record-size", "36"], input=data, capture_output=True,
                               timeout=300, env=dict(os.environ, **env))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, want)

if __name__ == "__main__":
    GPUSORT = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)
