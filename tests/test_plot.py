#!/usr/bin/python3
"""scripts/plot-bench.py draws `gpusort bench --json` output beside CUB's lines into a PNG:
real bench output of this device for two layouts, and CUB lines in cub_bench.cu's format
(with the variants the plot leaves out: descending, other inputs).

usage: test_plot.py GPUSORT SCRIPT   (Debian's python3 with python3-matplotlib; exit 77, a skip
for meson, without it)
"""
import os
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("matplotlib is not installed (Debian: python3-matplotlib)")
    sys.exit(77)

gpusort, script = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory(prefix="gpusort-plot-") as d:
    files = []
    for name, args in [("keys", ["--keys", "u32"]), ("pairs", ["--keys", "u32", "--values", "u32"])]:
        p = subprocess.run([gpusort, "bench", "--json", "--sizes", "2^10,2^12", "--reps", "1", *args],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        files.append(os.path.join(d, f"{name}.json"))
        with open(files[-1], "w") as f:
            f.write(p.stdout)
    cub = os.path.join(d, "cub.txt")
    with open(cub, "w") as f:
        f.write("memcpy_d2d_u32           n=1024           0.010 ms     0.10 Gkeys/s      0.8 GB/s\n"
                "cub_sort_keys_u32        n=1024           0.020 ms     0.05 Gkeys/s      0.0 GB/s\n"
                "cub_sort_keys_u32        n=4096           0.030 ms     0.14 Gkeys/s      0.0 GB/s\n"
                "cub_sort_keys_u32_desc   n=1024           0.020 ms     0.05 Gkeys/s      0.0 GB/s\n"
                "cub_sort_keys_u32_ent2   n=1024           0.020 ms     0.05 Gkeys/s      0.0 GB/s\n"
                "cub_sort_pairs_u32       n=1024           0.040 ms     0.03 Gkeys/s      0.0 GB/s\n")
    png = os.path.join(d, "plot.png")
    p = subprocess.run([sys.executable, script, png, *files, "--cub", cub], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    want = ["gpusort u32 keys: n = 1024, 4096", "CUB u32 keys: n = 1024, 4096",
            "gpusort u32 keys, u32 values: n = 1024, 4096", "CUB u32 pairs: n = 1024", f"wrote {png}"]
    assert p.stdout.splitlines() == want, p.stdout
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n", "not a PNG"
    # a file without bench lines is refused, naming it
    empty = os.path.join(d, "empty.json")
    open(empty, "w").close()
    p = subprocess.run([sys.executable, script, png, empty], capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and "empty.json" in p.stderr, (p.returncode, p.stderr)
print("ok")
