"""Where the time of a packed (cu_seqlens) causal forward goes, beside the forward it is measured
against (bench/NOTES.md vl3). Two probes per head dim, Flare only:

- grid: the benchmark's varlen lengths (100-4000 tokens, --tokens in all, its seed) called with the
  longest sequence's grid, and with grids 2x and 4x as long (more instances past every sequence's
  end): the slope is what an empty instance costs; each with the configured schedule and with
  persistent CTAs taking instances from a shared counter (tile.persistent = 2, a producer warpgroup).
- equal: B sequences of S tokens as [B,H,S,D], as [B,S,H,D] (the packed layout's strides), each with
  the configured schedule and not persistent, and packed with cu_seqlens (the varlen kernel, no
  empty instance): what the packed kernel costs beside the dense one on the same problem.

    python3 bench/varlen_probe.py --lib build/lib/libflare.so [--hdims 128 256] [--tokens 16384]
"""
import argparse, itertools, statistics, sys, os
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_bench as ab

# attention_bench.Flare.attention's tile tuples: 0 for the tiles is the configured one; the switches
# 1 on, 0 off, -1 configured (PERSISTENT 2: from a shared counter).
COUNTER = (0, 0, 0, -1, -1, 1, 2)         # producer on, persistent from a shared counter
NOT_PERSISTENT = (0, 0, 0, -1, -1, -1, 0)  # the configured producer, not persistent


def timed(calls, rounds=5, iters=20):
    for c in calls.values():
        c(); c()
    torch.cuda.synchronize()
    times = {n: [] for n in calls}
    for _ in range(rounds):
        for n, c in calls.items():
            times[n] += ab.time_calls(c, iters)
    return {n: statistics.median(t) for n, t in times.items()}


def report(title, medians, flops):
    print(title, flush=True)
    for n, ms in medians.items():
        print(f"  {n:28s} {ms:.4f} ms {flops[n] / ms / 1e9:6.1f} TFLOP/s", flush=True)


def grid_probe(flare, d, tokens):
    h = 2048 // d
    gen = torch.Generator().manual_seed(d)  # the benchmark's lengths (attention_bench.varlen_sweep)
    lens = []
    while sum(lens) < tokens:
        lens.append(int(torch.randint(100, 4001, (1,), generator=gen)))
    total = sum(lens)
    cu = torch.tensor([0] + list(itertools.accumulate(lens)), device="cuda", dtype=torch.int32)
    q, k, v, out = (torch.randn(total, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    qv, kv, vv, ov = (t.permute(1, 0, 2).unsqueeze(0) for t in (q, k, v, out))
    flops = 4 * d * h * sum(n * (n + 1) // 2 for n in lens)
    calls = {}
    for sched, cfg in (("configured", None), ("counter", COUNTER)):
        for f in (1, 2, 4):
            longest = max(lens) * f
            calls[f"{sched} grid x{f}"] = (lambda cfg=cfg, n=longest:
                                          flare.attention(qv, kv, vv, ov, True, cfg, cu_seqlens=(cu, cu, n, n)))
    with_rows = sum((n + 127) // 128 for n in lens) * h
    report(f"D={d} grid: {len(lens)} sequences, {total} tokens, longest {max(lens)}: {with_rows} of "
           f"{(max(lens) + 127) // 128 * len(lens) * h} 128-row instances have rows",
           timed(calls), {n: flops for n in calls})


def equal_probe(flare, d, b, s):
    h = 2048 // d
    cu = torch.tensor([i * s for i in range(b + 1)], device="cuda", dtype=torch.int32)
    q, k, v, out = (torch.randn(b * s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    qv, kv, vv, ov = (t.permute(1, 0, 2).unsqueeze(0) for t in (q, k, v, out))
    qs, ks, vs, os_ = (t.view(b, s, h, d).permute(0, 2, 1, 3) for t in (q, k, v, out))
    qe, ke, ve = (t.contiguous() for t in (qs, ks, vs))
    oe = torch.empty_like(qe)
    calls = {
        "[B,H,S,D] configured": lambda: flare.attention(qe, ke, ve, oe, True),
        "[B,H,S,D] not persistent": lambda: flare.attention(qe, ke, ve, oe, True, NOT_PERSISTENT),
        "[B,S,H,D] configured": lambda: flare.attention(qs, ks, vs, os_, True),
        "[B,S,H,D] not persistent": lambda: flare.attention(qs, ks, vs, os_, True, NOT_PERSISTENT),
        "packed configured": lambda: flare.attention(qv, kv, vv, ov, True, cu_seqlens=(cu, cu, s, s)),
        "packed counter": lambda: flare.attention(qv, kv, vv, ov, True, COUNTER, cu_seqlens=(cu, cu, s, s)),
    }
    flops = 4 * d * h * b * s * (s + 1) // 2
    report(f"D={d} equal: B={b} S={s}", timed(calls), {n: flops for n in calls})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--hdims", type=int, nargs="*", default=[128, 256])
    ap.add_argument("--tokens", type=int, default=16384)
    args = ap.parse_args()
    flare = ab.Flare(args.lib)
    print(torch.cuda.get_device_name(), flush=True)
    for d in args.hdims:
        grid_probe(flare, d, args.tokens)
        for b, s in ((9, 1971), (4, 4096), (16, 1024)):
            equal_probe(flare, d, b, s)


if __name__ == "__main__":
    main()
