#!/usr/bin/env python3
"""The forward's speed against where its tensors lie: Q, K, V and O allocated afresh at each of
--offsets bytes past an allocation's start, in one process, each timed as attention_bench.py times
a call (the median of --iters calls queued back to back, after three warm-up calls), at each of
--hdims (heads = --hidden / D, batch 4, --seqlen tokens), causal and not. bench/NOTES.md ("head dim 192 measured twice") has what it found.

    python3 address_probe.py --lib <bundle>/lib/libflare.so --hdims 192 256
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_bench  # noqa: E402


def median_ms(fn, iters):
    """The benchmark's median device time of `iters` calls queued back to back, after three warm-up calls."""
    for _ in range(3):
        fn()
    return attention_bench.median(attention_bench.time_calls(fn, iters))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", required=True, help="libflare.so")
    p.add_argument("--hdims", type=int, nargs="+", default=[192, 256])
    p.add_argument("--offsets", type=int, nargs="+", default=[0, 128, 256, 384, 512, 640, 1024, 4096],
                   help="bytes past the allocation's start (multiples of 16)")
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--seqlen", type=int, default=4096)
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args()
    if any(o % 16 for o in args.offsets):
        p.error("offsets must be multiples of 16 bytes (TMA's base alignment)")
    flare = attention_bench.Flare(args.lib)
    b, s = 4, args.seqlen
    for d in args.hdims:
        h = args.hidden // d
        n = b * h * s * d
        for causal in (0, 1):
            for offset in args.offsets:
                e = offset // 2
                bufs = [torch.randn(n + e, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
                q, k, v, o = (t[e:e + n].view(b, h, s, d) for t in bufs)
                ms = median_ms(lambda: flare.attention(q, k, v, o, causal), args.iters)
                flops = 4 * b * h * s * s * d / (2 if causal else 1)
                print(f"d={d} causal={causal} offset={offset:5d} B: {ms:.3f} ms {flops / ms / 1e9:.1f} TFLOP/s",
                      flush=True)
                del bufs, q, k, v, o


if __name__ == "__main__":
    main()
