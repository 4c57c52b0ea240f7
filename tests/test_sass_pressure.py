#!/usr/bin/env python3
"""scripts/sass-pressure.py counts the registers live into each instruction of nvdisasm output:
a loop whose back branch keeps a 64-bit load's two registers live, a compare whose results are
predicates only (its register is read, not written), a guarded write, against counts worked
out by hand; and it refuses a file without instructions.

usage: test_sass_pressure.py SCRIPT
"""
import os
import re
import subprocess
import sys
import tempfile

script = sys.argv[1]
# (offset, instruction, registers live into it)
CODE = [
    (0x00, "S2R R0, SR_TID.X", 0),
    (0x10, "IMAD.MOV.U32 R1, RZ, RZ, 0x1", 1),
    (0x20, "MOV R5, 0x7", 2),
    (0x30, "LDG.E.64 R2, [R0.64]", 3),                  # R2 and R3 from R0:R1
    (0x40, "ISETP.GE.U32.AND P0, PT, R5, 0x10, PT", 5),  # reads R5
    (0x50, "@P0 BRA 0xa0", 5),
    (0x60, "IADD3 R4, R2, R3, RZ", 5),                  # R2, R3 stay live round the loop
    (0x70, "IMAD.IADD R5, R5, 0x1, R4", 6),
    (0x80, "@!P0 MOV R1, R5", 5),                       # guarded: R1 still live before it
    (0x90, "BRA 0x40", 5),
    (0xA0, "STG.E [R0.64], R5", 3),
    (0xB0, "EXIT", 0),
]
text = "".join("        /*%04x*/                   %s ;\n" % (offset, ins) for offset, ins, _ in CODE)
failures = 0
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "kernel.sass")
    with open(path, "w") as f:
        f.write('\t.headerflags\t@"EF_CUDA_SM90"\n' + text)
    out = subprocess.run([sys.executable, script, path, "0"], capture_output=True, text=True, check=True).stdout
    peak = int(re.search(r"peak: (\d+) live registers", out).group(1))
    if peak != 6:
        print("FAIL: peak %d, expected 6" % peak)
        failures += 1
    counts = {int(m.group(2), 16): int(m.group(1)) for m in re.finditer(r"^\s*(\d+)\s+/\*([0-9a-f]+)\*/", out, re.M)}
    for offset, ins, expected in CODE:
        if counts.get(offset) != expected:
            print("FAIL: %s at %#x: %s live, expected %d" % (ins, offset, counts.get(offset), expected))
            failures += 1
    empty = os.path.join(tmp, "empty.sass")
    with open(empty, "w") as f:
        f.write("not a disassembly\n")
    refused = subprocess.run([sys.executable, script, empty], capture_output=True, text=True)
    if refused.returncode == 0 or "no instructions" not in refused.stderr:
        print("FAIL: a file without instructions was not refused: %r" % refused.stderr)
        failures += 1
if failures:
    sys.exit(1)
print("sass-pressure.py: %d instructions counted as worked out, a file without them refused" % len(CODE))
