#!/usr/bin/env python3
"""Throughput against n, drawn from `gpusort bench --json` output (and optionally CUB's
cub_bench.cu output from the same run) into a PNG.

usage: scripts/plot-bench.py OUT.png BENCH.json [BENCH.json ...] [--cub CUB.txt] [--title TEXT]

Each BENCH.json holds the lines `gpusort bench --json` prints (one object per size) for one
key type or pair layout: one solid line each, in keys per second against n. The first file's
device copy of the same bytes (every key read and written once) is drawn dotted, in keys per
second of that layout. CUB's lines for the same layouts (cub_sort_keys_u32,
cub_sort_pairs_u32, ... of cub_bench.cu) are drawn dashed in the same colour. Prints one line
per series drawn: its label and sizes.

Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display
import matplotlib.pyplot as plt  # noqa: E402

CUB_LINE = re.compile(r"^(cub_sort_(keys|pairs)_(\w+?))\s+n=(\d+)\s+([\d.]+) ms")


def read_bench(path):
    """(label, layout key, {n: seconds}, {n: copy seconds}, device) of one bench --json file."""
    sort, copy, label, key, device = {}, {}, None, None, ""
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("command") != "bench" or "sort_seconds" not in r:
                continue
            keys, values = r["keys"], r.get("values")
            key = ("pairs" if values else "keys", keys)
            label = f"gpusort {keys} keys" + (f", {values} values" if values else "")
            sort[r["records"]] = r["sort_seconds"]
            copy[r["records"]] = r["copy_seconds"]
            device = r.get("device", device)
    if not sort:
        sys.exit(f"plot-bench: {path} holds no `gpusort bench --json` sort lines")
    return label, key, sort, copy, device


def read_cub(path):
    """{(kind, type): {n: seconds}} of CUB's sorts (ascending, uniform keys)."""
    series = {}
    with open(path) as f:
        for line in f:
            m = CUB_LINE.match(line)
            if not m or not re.fullmatch(r"[uif](32|64)", m.group(3)):
                continue  # (descending, entropy, sorted... variants are other inputs)
            series.setdefault((m.group(2), m.group(3)), {})[int(m.group(4))] = float(m.group(5)) / 1e3
    return series


def draw(ax, points, **style):
    ns = sorted(points)
    ax.plot(ns, [n / points[n] / 1e9 for n in ns], marker="o", markersize=3, **style)
    return ns


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("bench", nargs="+")
    p.add_argument("--cub")
    p.add_argument("--title")
    a = p.parse_args()
    cub = read_cub(a.cub) if a.cub else {}
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    device = ""
    for i, path in enumerate(a.bench):
        label, key, sort, copy, device = read_bench(path)
        color = f"C{i}"
        ns = draw(ax, sort, color=color, label=label)
        print(f"{label}: n = {', '.join(str(n) for n in ns)}")
        if key in cub:
            cub_label = f"CUB {key[1]} {key[0]}"
            ns = draw(ax, cub[key], color=color, linestyle="--", label=cub_label)
            print(f"{cub_label}: n = {', '.join(str(n) for n in ns)}")
        if i == 0:
            draw(ax, copy, color="gray", linestyle=":", label="device copy of the same bytes")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # the copy runs about ten times the sorts' rate: a linear axis flattens them
    ax.set_xlabel("n (keys)")
    ax.set_ylabel("G keys / s (GPU time, device-resident)")
    ax.set_title(a.title or f"gpusort bench: {device}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
