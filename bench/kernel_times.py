#!/usr/bin/env python3
"""Device time and launch configuration of the kernels behind each attention method.

For each shape of the benchmark's setup (16k tokens, hidden 2048, bf16) it runs Flare and PyTorch's
SDPA backends under torch.profiler (CUPTI) and prints, per method: the wall time of one call timed by
CUDA events over back-to-back calls, the device time of the kernels one call launches, and each kernel's
name, grid, block, registers per thread, shared memory and the profiler's occupancy estimate. The wall
time minus the device time is what a call loses between kernels (launch gaps, host work that the GPU
waits for): the benchmark's TFLOP/s count it, the kernels' own speed does not.

    python3 bench/kernel_times.py --lib build/lib/libflare.so --examples examples \\
        [--hdims 64 128] [--causal 0 1] [--seqlens 512 4096] [--out kernels.csv --commit $(git rev-parse --short HEAD)] \\
        [--backward]   # the backward's kernels (Flare: preprocess, dK/dV, dQ) beside cuDNN's and FlashAttention-2's
        [--decode 1 8 --decode-keys 16384 131072]   # decoding (one query, GQA 32:8, head dim 128): the
                       # split kernel and its combine beside cuDNN's and FlashAttention-2's kernels
"""
import argparse
import csv
import json
import os
import sys
import tempfile

import torch
from torch.nn.attention import SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_bench import Flare, median, sdpa, shapes, time_calls, versions  # noqa: E402


def kernel_events(fn, calls):
    """The CUDA kernel events of `calls` calls of fn, from a Chrome trace of torch.profiler."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    return [e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]


def summarize(events, calls):
    """Per kernel name: launches per call, mean device time (us) and its launch configuration."""
    kernels = {}
    for e in events:
        k = kernels.setdefault(e["name"], {"count": 0, "us": 0.0, "args": e.get("args", {})})
        k["count"] += 1
        k["us"] += float(e.get("dur", 0.0))
    rows = []
    for name, k in kernels.items():
        a = k["args"]
        rows.append(dict(kernel=name, per_call=k["count"] / calls, us=k["us"] / k["count"],
                         grid="x".join(str(g) for g in a.get("grid", [])),
                         block="x".join(str(b) for b in a.get("block", [])),
                         registers=a.get("registers per thread", ""), shared=a.get("shared memory", ""),
                         occupancy=a.get("est. achieved occupancy %", "")))
    return rows


def backward_call(flare, name, fn, q, k, v, out, causal):
    """One backward call of a method, its forward run once beforehand (not profiled)."""
    dout = torch.randn_like(q)
    if name == "flare":
        lse = torch.empty(q.shape[0], q.shape[1], q.shape[2], device=q.device, dtype=torch.float32)
        flare.forward(q, k, v, out, lse, causal)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        return lambda: flare.backward(q, k, v, out, dout, lse, dq, dk, dv, causal)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    o = fn(*leaves, causal)
    return lambda: o.backward(dout, retain_graph=True)


def all_shapes(args):
    """(head dim, causal, S, B, H, q, k, v, out) of every shape measured: the benchmark's setup, or with
    --decode one query per sequence against --decode-keys keys (32 query heads over 8 KV heads, head dim
    128, S the keys)."""
    if args.decode is None:
        for d in args.hdims:
            for causal, s, b, h, q, k, v, out in shapes(args, d):
                yield d, causal, s, b, h, q, k, v, out
        return
    for b in args.decode:
        for s in args.decode_keys:
            q = torch.randn(b, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
            k, v = (torch.randn(b, 8, s, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
            yield 128, False, s, b, 32, q, k, v, torch.empty_like(q)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", required=True, help="libflare.so")
    p.add_argument("--examples", required=True, help="the examples directory (unused; the bench's layout)")
    p.add_argument("--hdims", type=int, nargs="+", default=[64, 128, 256])
    p.add_argument("--causal", type=int, nargs="+", default=[0, 1])
    p.add_argument("--seqlens", type=int, nargs="+", default=[512, 4096])
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--calls", type=int, default=20, help="calls per method, timed and profiled")
    p.add_argument("--out", help="CSV of every kernel row")
    p.add_argument("--commit", default="unknown", help="the Flare commit measured (recorded in the CSV)")
    p.add_argument("--backward", action="store_true",
                   help="the backward's kernels instead (Flare: flare_attention_backward after one forward with "
                        "its LSE; SDPA: out.backward(dout) on its own forward's graph, whose gradient accumulation "
                        "into the leaves is listed as elementwise kernels of its own)")
    p.add_argument("--decode", type=int, nargs="*", default=None, metavar="BATCH",
                   help="decoding shapes instead, at these batches: one query per sequence, GQA 32:8, head dim 128, "
                        "--decode-keys keys (Flare as a user calls it: keys split by the launch shape, then combined)")
    p.add_argument("--decode-keys", type=int, nargs="+", default=[16384, 131072])
    args = p.parse_args()

    flare = Flare(args.lib)
    methods = {"flare": None, "sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
               "sdpa-flash": sdpa(SDPBackend.FLASH_ATTENTION)}
    out_rows = []
    info = versions()
    meta = dict(date=info["date"], commit=args.commit, gpu=info.get("gpu", ""),
                driver=info.get("driver", ""), torch=info.get("torch", ""), cudnn=info.get("cudnn", ""))
    for d, causal, s, b, h, q, k, v, out in all_shapes(args):
        for name, fn in methods.items():
            if args.decode is not None:
                if name == "flare":
                    call = lambda: flare.attention(q, k, v, out, False)
                else:
                    call = lambda fn=fn: fn(q, k, v, False, gqa=True)
            elif args.backward:
                call = backward_call(flare, name, fn, q, k, v, out, causal)
            elif name == "flare":
                call = lambda: flare.attention(q, k, v, out, causal)
            else:
                call = lambda fn=fn: fn(q, k, v, causal)
            try:
                for _ in range(3):
                    call()
                wall = median(time_calls(call, args.calls))
                rows = summarize(kernel_events(call, args.calls), args.calls)
            except Exception as e:  # a method this machine lacks must not stop the others
                print(f"{name:11s} d={d:3d} causal={int(causal)} S={s:6d} B={b:3d}: unavailable ({e})", flush=True)
                continue
            device_us = sum(r["us"] * r["per_call"] for r in rows)
            print(f"{name:11s} d={d:3d} causal={int(causal)} S={s:6d} B={b:3d}: wall {wall * 1e3:8.1f} us/call, "
                  f"kernels {device_us:8.1f} us/call, gap {wall * 1e3 - device_us:6.1f} us", flush=True)
            for r in rows:
                print(f"    {r['per_call']:.0f}x {r['us']:8.1f} us grid {r['grid']:>12s} block {r['block']:>9s} "
                      f"regs {r['registers']!s:>3s} smem {r['shared']!s:>6s} occ {r['occupancy']!s:>4s} "
                      f"{r['kernel'][:110]}", flush=True)
                out_rows.append(dict(**meta, method=name, hdim=d, causal=int(causal), seqlen=s, batch=b, heads=h,
                                     wall_us=f"{wall * 1e3:.1f}", kernels_us=f"{device_us:.1f}", **r))
        del q, k, v, out
    if args.out and out_rows:
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out_rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(out_rows)


if __name__ == "__main__":
    main()
