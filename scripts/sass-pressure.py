#!/usr/bin/env python3
"""Where a kernel's registers go: live registers at each instruction of NVIDIA machine code.

usage: scripts/sass-pressure.py SASS [THRESHOLD]

SASS is `nvdisasm` output (scripts/nvidia-sass.py writes one per pipeline). The script finds
the basic blocks from the branches, solves which general registers (R0, R1, ...) are live into
each instruction, and prints the peak, a profile of the code in 32 rows (offset, the most live
registers in that stretch, a bar), then every instruction with at least THRESHOLD live
(default: the peak less 4), and for the first such instruction where each of its live
registers was last written. The driver reports the count it allocated
(GPUSORT_PIPELINE_STATS=1); the peak here is usually a few below it, since widths are read
from the opcodes' .64 and .128 suffixes and the compiler aligns register pairs. A register
that many instructions keep live from one place (the same value derived once and reused far
away) is the usual reason a tile crosses an occupancy cliff: on an H200 the third workgroup
of 384 invocations fits an SM at 56 registers, of 256 at 80.
"""
import re
import sys

LINE = re.compile(r"\s*/\*([0-9a-f]+)\*/\s*(@!?U?P\w+\s+)?([A-Z0-9_.]+)\s*(.*?)\s*;")
PREDICATE = re.compile(r"^!?U?P(T|\d)$")
NO_RESULT = ("ST", "RED", "BRA", "BSSY", "BSYNC", "EXIT", "BAR", "WARPSYNC", "NOP", "MEMBAR", "FENCE",
             "ERRBAR", "CCTL", "RET", "CALL", "BPT", "YIELD", "NANOSLEEP", "DEPBAR")
PREDICATE_RESULT = ("ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "PLOP3", "FCHK")  # no register result
WIDE_RESULT = ("LDG", "LDS", "LD", "LDL", "LDSM", "ATOMS", "ATOMG", "ATOM", "SHFL", "MOV")


def width_of(opcode):
    return 4 if ".128" in opcode else 2 if ".64" in opcode else 1


def registers(operand, width=1):
    """The general registers an operand names (R4.64 and a wide operand name the following ones too)."""
    out = []
    for m in re.finditer(r"\bR(\d+)(\.64)?", operand):
        first = int(m.group(1))
        out += range(first, first + (2 if m.group(2) else width))
    return out


def parse(path):
    """(offset, guarded, opcode, operands, text) of each instruction."""
    code = []
    with open(path) as f:
        for text in f:
            m = LINE.match(text)
            if m:
                operands = [o.strip() for o in m.group(4).split(",")] if m.group(4).strip() else []
                code.append((int(m.group(1), 16), m.group(2) is not None, m.group(3), operands, text.strip()))
    return code


def defs_uses_kills(opcode, operands, guarded):
    """The registers an instruction writes, reads, and ends (a guarded write ends none)."""
    base = opcode.split(".")[0]
    k = 0
    while k < len(operands) and PREDICATE.match(operands[k]):
        k += 1  # predicate results come first (ISETP P0, ...; LOP3.LUT P1, R2, ...)
    stores = base.startswith(NO_RESULT)
    defs, sources = [], operands
    if not stores and base not in PREDICATE_RESULT and k < len(operands) and re.match(r"^R(\d+|Z)$", operands[k]):
        if operands[k] != "RZ":
            width = width_of(opcode) if base in WIDE_RESULT else 2 if "WIDE" in opcode else 1
            defs = registers(operands[k], width)
        sources = operands[k + 1:]
    uses = []
    for j, s in enumerate(sources):
        width = width_of(opcode) if stores and j == len(sources) - 1 else 2 if "WIDE" in opcode and j == 2 else 1
        uses += registers(s, width)
    # (where the guard is false the old value lives on)
    return set(defs), set(uses), set() if guarded else set(defs)


def live_registers(code):
    """The registers live into each instruction (backward dataflow over the branches)."""
    index = {offset: i for i, (offset, *_) in enumerate(code)}
    defs, uses, kills, successors = [], [], [], []
    for i, (_, guarded, opcode, operands, _) in enumerate(code):
        d, u, k = defs_uses_kills(opcode, operands, guarded)
        defs.append(d)
        uses.append(u)
        kills.append(k)
        base = opcode.split(".")[0]
        nxt = [i + 1] if i + 1 < len(code) else []
        if base == "BRA":
            target = operands[-1] if operands else ""
            taken = [index[int(target, 16)]] if target.startswith("0x") and int(target, 16) in index else []
            successors.append(taken + (nxt if guarded else []))
        elif base == "EXIT" and not guarded:
            successors.append([])
        else:
            successors.append(nxt)
    live = [set() for _ in code]
    changed = True
    while changed:
        changed = False
        for i in range(len(code) - 1, -1, -1):
            out = set().union(*(live[s] for s in successors[i]))
            new = uses[i] | (out - kills[i])
            if new != live[i]:
                live[i], changed = new, True
    return live, defs


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    code = parse(sys.argv[1])
    if not code:
        sys.exit("sass-pressure.py: %s holds no instructions in nvdisasm's form" % sys.argv[1])
    live, defs = live_registers(code)
    peak = max(len(l) for l in live)
    threshold = int(sys.argv[2]) if len(sys.argv) == 3 else peak - 4
    print("peak: %d live registers, %d instructions" % (peak, len(code)))
    rows = 32
    step = max(1, (len(code) + rows - 1) // rows)
    for start in range(0, len(code), step):
        most = max(len(l) for l in live[start:start + step])
        print("%#07x %4d %s" % (code[start][0], most, "#" * most))
    first = None
    for i, l in enumerate(live):
        if len(l) >= threshold:
            first = i if first is None else first
            print("%4d  %s" % (len(l), code[i][4]))
    if first is not None:
        print("live into %#x, each from its last write before it:" % code[first][0])
        for r in sorted(live[first]):
            writer = next((code[j][4] for j in range(first - 1, -1, -1) if r in defs[j]), "(not written before)")
            print("  R%-4d %s" % (r, writer))


if __name__ == "__main__":
    main()
