#!/usr/bin/env python3
"""scripts/nvidia-sass.py takes the code out of the entries of an NVIDIA pipeline cache: a cache
built here in the layout driver 580 writes (gpusort's header, then zstd-compressed entries
with the code's size and offset at 0x4c and 0x50, each followed by other bytes), against the
code put in; and it refuses a file without such entries.

usage: test_sass_script.py SCRIPT   (exit 77, a skip for meson, without the zstd program)
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

if not shutil.which("zstd"):
    print("the zstd program is not installed (Debian: zstd)")
    sys.exit(77)
script = sys.argv[1]


def entry(code, offset):
    """A driver entry: a header naming the code's size and offset (less 8), then the code."""
    header = bytearray(offset + 8)
    header[0:12] = b"NVDANVVMNVuc"
    struct.pack_into("<II", header, 0x4C, len(code), offset)
    return bytes(header) + code + b"\0" * 40


def compress(data):
    return subprocess.run(["zstd", "-c", "-q"], input=data, capture_output=True, check=True).stdout


codes = [bytes(range(256)) * 2, bytes((7 * i) % 251 for i in range(4096))]  # 512 and 4096 bytes
cache = b"gpusort-pcache1\0" + b"\x11" * 100
for code, offset in zip(codes, [0x150, 0x170]):
    cache += compress(entry(code, offset)) + struct.pack("<IQ", 3, 12345)  # a record's tail
with tempfile.TemporaryDirectory(prefix="gpusort-sass-") as d:
    path = os.path.join(d, "pipelines.bin")
    with open(path, "wb") as f:
        f.write(cache)
    out = os.path.join(d, "out")
    # a PATH holding zstd alone, so that an installed nvdisasm cannot add its findings to the lines
    tools = os.path.join(d, "bin")
    os.mkdir(tools)
    os.symlink(shutil.which("zstd"), os.path.join(tools, "zstd"))
    p = subprocess.run([sys.executable, script, path, out], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PATH=tools))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["00: 512 bytes, 32 instructions", "01: 4096 bytes, 256 instructions"], p.stdout
    for n, code in enumerate(codes):
        with open(os.path.join(out, f"{n:02d}_{len(code)}.bin"), "rb") as f:
            assert f.read() == code, n
    with open(path, "wb") as f:
        f.write(b"gpusort-pcache1\0" + b"\x22" * 4000)
    p = subprocess.run([sys.executable, script, path, out], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PATH=tools))
    assert p.returncode == 1 and "no pipeline code found" in p.stderr, (p.returncode, p.stderr)
print("nvidia-sass.py: 2 entries taken out, a cache without entries refused")
