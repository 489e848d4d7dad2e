"""Where the warps of one profiled kernel wait, from Nsight Compute's source page.

    ncu -i report.ncu-rep --page source --csv --print-source sass > source.csv
    python3 ncu_stalls.py source.csv [--hot 0.7] [--opcodes LO:HI]

Prints the warp-stall reasons over all samples, the stretches of code by execution count (a loop body
runs as often as its first instruction: consecutive instructions with one count form a region), the
instructions that hold at least --hot percent of the samples, and with --opcodes the samples per opcode
in a range of addresses (the low 20 bits, as printed).
"""
import argparse
import collections
import csv


def load(path):
    rows = list(csv.reader(open(path)))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    header, data = rows[start], rows[start + 1:]
    col = {h: i for i, h in enumerate(header)}
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    out = []
    for r in data:
        try:
            address = int(r[col["Address"]], 16) & 0xFFFFF
        except ValueError:
            continue
        samples = int(r[col["Warp Stall Sampling (All Samples)"]] or 0)
        reasons = {h[6:]: int(r[col[h]]) for h in stalls if r[col[h]] and int(r[col[h]]) > 0}
        out.append(dict(address=address, source=r[col["Source"]], executed=r[col["Instructions Executed"]],
                        samples=samples, reasons=reasons))
    return out


def top(reasons, total, n=4):
    return " ".join(f"{k}={100 * v / total:.1f}" for k, v in sorted(reasons.items(), key=lambda x: -x[1])[:n])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("--hot", type=float, default=0.7, help="list instructions with at least this share (%%)")
    p.add_argument("--region", type=float, default=0.5, help="list regions with at least this share (%%)")
    p.add_argument("--opcodes", help="LO:HI (hex): samples per opcode in this address range")
    args = p.parse_args()
    rows = load(args.csv)
    total = sum(r["samples"] for r in rows) or 1
    overall = collections.Counter()
    for r in rows:
        overall.update(r["reasons"])
    print(f"samples {total}")
    for k, v in overall.most_common():
        if v:
            print(f"  {k:20s} {100 * v / total:5.1f}%")
    print("\nregions (consecutive instructions executed equally often):")
    regions = []
    for r in rows:
        if not regions or regions[-1]["executed"] != r["executed"]:
            regions.append(dict(lo=r["address"], hi=r["address"], executed=r["executed"], n=0, samples=0,
                                reasons=collections.Counter()))
        g = regions[-1]
        g["hi"], g["n"], g["samples"] = r["address"], g["n"] + 1, g["samples"] + r["samples"]
        g["reasons"].update(r["reasons"])
    for g in regions:
        if g["samples"] >= args.region / 100 * total:
            print(f"  {g['lo']:05x}-{g['hi']:05x} {g['n']:4d} instr, executed {g['executed']:>9s}: "
                  f"{100 * g['samples'] / total:5.1f}%  {top(g['reasons'], total)}")
    print(f"\ninstructions with at least {args.hot}% of the samples:")
    for r in rows:
        if r["samples"] >= args.hot / 100 * total:
            print(f"  {r['address']:05x} {100 * r['samples'] / total:5.1f}% x{r['executed']:>9s}  "
                  f"{r['source'][:60]:60s} {top(r['reasons'], total, 3)}")
    if args.opcodes:
        lo, hi = (int(x, 16) for x in args.opcodes.split(":"))
        per, count, wait = collections.Counter(), collections.Counter(), collections.Counter()
        for r in rows:
            if lo <= r["address"] <= hi:
                words = r["source"].split()
                op = (words[1] if words[0].startswith("@") else words[0]).split(".")[0]
                per[op] += r["samples"]
                count[op] += 1
                wait[op] += r["reasons"].get("wait", 0)
        print(f"\nopcodes in {lo:05x}-{hi:05x}:")
        for op, s in per.most_common(16):
            print(f"  {op:12s} x{count[op]:3d} {100 * s / total:5.1f}%  (wait {100 * wait[op] / total:4.1f}%)")


if __name__ == "__main__":
    main()
