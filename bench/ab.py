#!/usr/bin/env python3
"""A/B runs of Flare settings that one process cannot hold side by side (an environment switch the
compiler reads, another build of the library): each variant runs attention_bench.py, Flare only, in a
process of its own with a kernel cache of its own, the variants alternating round by round (the GPU's
clock and power state drift within minutes, so a variant's rounds are spread over the whole run). The
rounds land in one CSV: `variant`, `round`, then attention_bench.py's columns. `compare` prints each
shape's median TFLOP/s per variant, its rounds, and the change against the first variant.

    python3 bench/ab.py run --out ab.csv --rounds 3 --variant base --variant split:FLARE_X=1 \\
        -- --lib lib/libflare.so --examples examples --hdims 256 --causal 0 --seqlens 4096 16384
    python3 bench/ab.py compare ab.csv

A variant is NAME or NAME:VAR=VALUE[,VAR=VALUE...]: the environment it runs with on top of this one's.
Two names are not environment: `lib=PATH` and `examples=PATH` replace attention_bench.py's --lib and
--examples for that variant, so that two builds of the library (and their examples) run side by side:

    python3 bench/ab.py run --out ab.csv --variant base:lib=old/lib/libflare.so,examples=old/examples \
        --variant new -- --lib new/lib/libflare.so --examples new/examples
The arguments after `--` go to attention_bench.py (with --no-peers, --no-memory and --out added).
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_variant(text):
    """NAME[:VAR=VALUE,...] -> (name, {VAR: VALUE})."""
    name, _, assignments = text.partition(":")
    env = {}
    for item in filter(None, assignments.split(",")):
        var, eq, value = item.partition("=")
        if not eq or not var:
            raise argparse.ArgumentTypeError(f"variant '{text}': '{item}' is not VAR=VALUE")
        env[var] = value
    if not name:
        raise argparse.ArgumentTypeError(f"variant '{text}' has no name")
    return name, env


def with_paths(bench_args, paths):
    """bench_args with the value of each option in paths (--lib, --examples) replaced or appended."""
    out, i = [], 0
    while i < len(bench_args):
        arg = bench_args[i]
        if arg in paths and i + 1 < len(bench_args):
            i += 2
            continue
        out.append(arg)
        i += 1
    for option, value in paths.items():
        out += [option, value]
    return out


def run(args, bench_args):
    names = [name for name, _ in args.variant]
    if len(set(names)) != len(names):
        sys.exit("ab.py: variant names must differ")
    cache_root = args.cache_root or tempfile.mkdtemp(prefix="flare-ab-")
    header, rows = None, []
    for r in range(1, args.rounds + 1):
        for name, extra in args.variant:
            extra = dict(extra)
            paths = {f"--{key}": extra.pop(key) for key in ("lib", "examples") if key in extra}
            env = dict(os.environ, **extra, FLARE_CACHE_DIR=os.path.join(cache_root, name))
            part = os.path.join(cache_root, f"{name}-{r}.csv")
            cmd = [sys.executable, os.path.join(HERE, "attention_bench.py"), *with_paths(bench_args, paths),
                   "--no-peers", "--no-memory", "--out", part]
            shown = " ".join(f"{k}={v}" for k, v in sorted(extra.items()))
            print(f"round {r}, {name}: {shown + ' ' if shown else ''}FLARE_CACHE_DIR={env['FLARE_CACHE_DIR']} "
                  + " ".join(cmd[1:]), flush=True)
            if args.dry_run:
                continue
            done = subprocess.run(cmd, env=env)
            if done.returncode != 0:
                sys.exit(f"ab.py: round {r} of variant {name} failed ({done.returncode})")
            with open(part) as f:
                for row in csv.DictReader(f):
                    header = header or ["variant", "round", *row.keys()]
                    rows.append({"variant": name, "round": r, **row})
            # Written after every process, so that a run cut short keeps the rounds it finished.
            with open(args.out, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=header)
                w.writeheader()
                w.writerows(rows)
    if args.dry_run:
        return
    print(f"wrote {args.out}")
    compare_rows(rows, names)


def compare_rows(rows, variants):
    """Per (kind, method, head dim, causal, seqlen, batch): each variant's median TFLOP/s (TB/s for the
    rows that report bandwidth, as decoding does) over its rounds, the rounds, and the change against
    the first variant. Lines name their kind unless it is the forward, and their batch for decoding."""
    by = {}
    for row in rows:
        try:
            value = float(row["tflops"] or row["tbps"])
        except (KeyError, TypeError, ValueError):
            continue
        if not math.isfinite(value):
            continue
        kind = "forward" if row.get("kind") == "speed" else row.get("kind", "forward")
        # Rows without a shape of their own (decoding's device-copy reference) count as 0.
        shape = [int(row[k]) if row.get(k) else 0 for k in ("hdim", "causal", "seqlen")]
        key = (kind, row["method"], *shape, row.get("batch", ""))
        by.setdefault(key, {}).setdefault(row["variant"], []).append(value)
    for key in sorted(by):
        kind, method, d, causal, s, batch = key
        base = by[key].get(variants[0])
        line = (f"{kind} " if kind != "forward" else "") + f"{method} D{d} {'causal' if causal else 'non-causal'} {s}"
        line += (f" B{batch}" if kind == "decode" else "") + ":"
        for v in variants:
            got = by[key].get(v)
            if not got:
                line += f"  {v} -"
                continue
            m = statistics.median(got)
            change = f" {100 * (m / statistics.median(base) - 1):+.1f}%" if base and v != variants[0] else ""
            digits = 1 if m >= 10 else 3 # TB/s of decoding: three digits
            line += f"  {v} {m:.{digits}f} ({' / '.join(f'{x:.{digits}f}' for x in got)}){change}"
        print(line)


def compare(args):
    with open(args.csv) as f:
        rows = list(csv.DictReader(f))
    variants = []
    for row in rows:
        if row["variant"] not in variants:
            variants.append(row["variant"])
    if args.variants:
        variants = args.variants
    compare_rows(rows, variants)


def main():
    argv = sys.argv[1:]
    bench_args = []
    if "--" in argv:
        at = argv.index("--")
        argv, bench_args = argv[:at], argv[at + 1:]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the variants, alternating round by round")
    r.add_argument("--out", required=True, help="CSV of every round of every variant")
    r.add_argument("--rounds", type=int, default=3, help="processes per variant (default 3)")
    r.add_argument("--variant", type=parse_variant, action="append", required=True,
                   help="NAME or NAME:VAR=VALUE[,VAR=VALUE...]; the first is the base of the comparison")
    r.add_argument("--cache-root", help="directory of the variants' kernel caches (default: a new temporary one)")
    r.add_argument("--dry-run", action="store_true", help="print the commands only")
    c = sub.add_parser("compare", help="each shape's median per variant, against the first")
    c.add_argument("csv")
    c.add_argument("--variants", nargs="+", help="the variants to show, the first as the base (default: all, "
                   "in the order the CSV has them)")
    args = p.parse_args(argv)
    if args.command == "run":
        run(args, bench_args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
