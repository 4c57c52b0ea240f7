#!/usr/bin/env python3
"""The machine code NVIDIA's Vulkan driver compiled for gpusort's pipelines, for tuning.

usage: scripts/nvidia-sass.py CACHE OUTDIR

CACHE is a pipeline cache file gpusort wrote on an NVIDIA GPU (`$XDG_CACHE_HOME/gpusort/
pipelines-10de-*.bin`; run a command with XDG_CACHE_HOME pointing at an empty directory to
get one holding only that command's pipelines, e.g. `gpusort bench --sizes 2^16 --reps 1`
with the knobs under study). The driver's part of the file holds one zstd-compressed entry
per pipeline; in each, the 32-bit words at bytes 0x4c and 0x50 give the code's size and its
offset (less 8). That layout is what driver 580 wrote, read off its files, not documented: a
newer driver may move it, and then nothing sensible comes out.

For each entry the script writes OUTDIR/NN_SIZE.bin (the raw code) and, where `nvdisasm`
(CUDA toolkit) is on the PATH, OUTDIR/NN_SIZE.sass (`nvdisasm -b SM90`; set SASS_ARCH for
another architecture); the largest entry of a sort is its digit-binning kernel. Then it prints
one line per entry: size, instructions, and the highest register named, a rough register
peak (scripts/sass-pressure.py counts the live registers of a .sass file and shows where they
peak). Needs the `zstd` program.
"""
import os
import re
import shutil
import struct
import subprocess
import sys

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
HEADER_BYTES = 0x60


def entries(cache):
    """The decompressed driver entries of a pipeline cache file, in file order."""
    starts = [m.start() for m in re.finditer(re.escape(ZSTD_MAGIC), cache)]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(cache)
        # zstd stops with an error at the bytes after the frame; what it wrote is the entry
        raw = subprocess.run(["zstd", "-d", "-c", "-q"], input=cache[start:end], capture_output=True).stdout
        if len(raw) >= HEADER_BYTES:
            yield raw


def code_of(entry):
    size, offset = struct.unpack_from("<II", entry, 0x4C)
    code = entry[offset + 8:offset + 8 + size]
    return code if size and len(code) == size and size % 16 == 0 else None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    cache_path, out_dir = sys.argv[1], sys.argv[2]
    if not shutil.which("zstd"):
        sys.exit("nvidia-sass.py: needs the zstd program")
    with open(cache_path, "rb") as f:
        cache = f.read()
    os.makedirs(out_dir, exist_ok=True)
    nvdisasm = shutil.which("nvdisasm")
    arch = os.environ.get("SASS_ARCH", "SM90")
    found = 0
    for n, entry in enumerate(entries(cache)):
        code = code_of(entry)
        if code is None:
            print(f"{n:02d}: no code where driver 580 put it")
            continue
        found += 1
        base = os.path.join(out_dir, f"{n:02d}_{len(code)}")
        with open(base + ".bin", "wb") as f:
            f.write(code)
        line = f"{n:02d}: {len(code)} bytes, {len(code) // 16} instructions"
        if nvdisasm:
            sass = subprocess.run([nvdisasm, "-b", arch, base + ".bin"], capture_output=True, text=True).stdout
            with open(base + ".sass", "w") as f:
                f.write(sass)
            registers = [int(r) for r in re.findall(r"\bR(\d+)\b", sass)]
            line += f", highest register R{max(registers)}" if registers else ""
        print(line)
    if not found:
        sys.exit("nvidia-sass.py: no pipeline code found (not an NVIDIA cache, or another layout)")


if __name__ == "__main__":
    main()
