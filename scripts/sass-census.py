#!/usr/bin/env python3
"""Opcode census of the loops of a cubin: which instructions a kernel's loop bodies spend per step.

Usage: sass-census.py [--nvdisasm PATH] [--old-abi] [--min N] [--range LO:HI] KERNEL.cubin [OPCODE ...]

Disassembles the cubin (ptxas -arch=sm_90a [-c] -o KERNEL.cubin KERNEL.ptx, as scripts/ptxas-jit.sh
runs it) with nvdisasm, finds the loops (backward branches) and prints, per loop of at least N
instructions (default 100), its address range, its length and the count of each opcode asked for
(by default the ones that tell where a step's issue slots go). --range counts one address range
instead (hex, as printed); nested loops are listed with their enclosing ones.

nvdisasm releases that predate a cubin's ELF ABI (CUDA 11.8 against the cubins of CUDA 12 and
later: "does not contain Cuda architecture information") read it once the header carries the older
ABI's identification; the script rewrites a copy's header that way when --old-abi is given. Opcodes
those releases do not know are left out of the listing (counted as `undecoded`).
"""
import argparse
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile

DEFAULT_OPCODES = ["HGMMA", "MUFU", "FFMA", "FMUL", "FADD", "FMNMX", "F2FP", "SHFL", "R2UR", "UMOV", "UIADD3",
                   "IMAD", "MOV", "SYNCS", "BAR"]


def old_abi_copy(path):
    """A copy of the cubin whose ELF header says sm_90 in the ABI of CUDA 11 (OS/ABI 0x33, version 7)."""
    data = bytearray(open(path, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"{path}: not a 64-bit ELF file")
    arch = (struct.unpack_from("<I", data, 48)[0] >> 8) & 0xFF  # new ABI: the SM in bits 8-15
    data[7], data[8] = 0x33, 7
    struct.pack_into("<I", data, 48, (arch << 16) | 0x500 | arch)  # virtual SM, 64-bit, unified tex, SM
    fd, copy = tempfile.mkstemp(suffix=".cubin")
    os.write(fd, bytes(data))
    os.close(fd)
    return copy


def parse(text):
    """(address, opcode) per instruction, and the address of each label."""
    instructions, labels, pending = [], {}, []
    for line in text.splitlines():
        label = re.match(r"^\s*(\.L_x_\d+):", line)
        if label:
            pending.append(label.group(1))
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if not m or m.group(2).startswith("."):
            continue
        body = m.group(2)
        if body.startswith("@"):
            body = body.split(None, 1)[1]
        address = int(m.group(1), 16)
        for name in pending:
            labels[name] = address
        pending = []
        instructions.append((address, body.split()[0], body))
    return instructions, labels


def census(instructions, lo, hi, opcodes):
    body = [i for i in instructions if lo <= i[0] <= hi]
    counts = collections.Counter(op.split(".")[0] for _, op, _ in body)
    undecoded = (hi - lo) // 16 + 1 - len(body)
    fields = " ".join(f"{op} {counts[op]}" for op in opcodes if counts[op])
    return f"{lo:#x}-{hi:#x}: {len(body)} instructions ({undecoded} undecoded); {fields}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cubin")
    p.add_argument("opcodes", nargs="*", default=DEFAULT_OPCODES)
    p.add_argument("--nvdisasm", default="nvdisasm")
    p.add_argument("--old-abi", action="store_true", help="rewrite a copy's ELF header for an older nvdisasm")
    p.add_argument("--min", type=int, default=100, help="smallest loop listed (instructions)")
    p.add_argument("--range", help="count LO:HI (hex addresses) instead of the loops")
    args = p.parse_args()
    path = old_abi_copy(args.cubin) if args.old_abi else args.cubin
    try:
        out = subprocess.run([args.nvdisasm, "-c", path], capture_output=True, text=True)
    finally:
        if path != args.cubin:
            os.unlink(path)
    if out.returncode != 0:
        sys.exit(out.stderr.strip() or f"{args.nvdisasm} failed")
    instructions, labels = parse(out.stdout)
    if args.range:
        lo, hi = (int(x, 16) for x in args.range.split(":"))
        print(census(instructions, lo, hi, args.opcodes))
        return
    for address, op, body in instructions:
        target = re.search(r"\(\s*(\.L_x_\d+)\s*\)", body) if op.startswith("BRA") else None
        start = labels.get(target.group(1)) if target else None
        if start is not None and start < address:
            length = sum(1 for a, _, _ in instructions if start <= a <= address)
            if length >= args.min:
                print(census(instructions, start, address, args.opcodes))


if __name__ == "__main__":
    main()
