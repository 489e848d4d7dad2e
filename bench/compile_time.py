#!/usr/bin/env python3
"""Cold compile, cache hits and the first call's cost, per attention kernel, as a user meets them.

For each head dim and mask, the first `flare_attention` call of a session on an empty cache directory
compiles the kernel (IR generated, lowered to PTX, loaded by the driver, whose ptxas compiles it) and
launches it: `cold`. The same call again finds the kernel in the session's memory: `memory hit`. A new
session on the same directory loads the stored device binary: `disk hit`. Each of the three is timed
from the call to the end of its kernel (torch.cuda.synchronize), on a shape whose kernel takes well
under a millisecond (batch 1, 2048 / D heads, 256 tokens), so the times are the host's. A softmax scale
of its own per sample (1/sqrt(D) times 1 + a few 1e-6) makes every sample a different kernel: the
driver's own JIT cache, keyed by the PTX text, cannot answer it either.

    python3 bench/compile_time.py --lib <bundle>/lib/libflare.so --out results/x.csv [--samples 3]
"""
import csv
import ctypes
import os
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_bench import Flare, FlareOptions, flare_tensor, run_arguments, versions  # noqa: E402


def timed_call(flare, tensors, opt):
    """Milliseconds from the call to the end of its kernel."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    rc = flare.lib.flare_attention(flare.session, *[ctypes.byref(t) for t in tensors], ctypes.byref(opt),
                                   ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
    torch.cuda.synchronize()
    if rc != 0:
        raise RuntimeError(flare.lib.flare_last_error().decode())
    return (time.perf_counter() - start) * 1e3


def main():
    p = run_arguments(__doc__)
    p.add_argument("--samples", type=int, default=3, help="kernels compiled per head dim and mask")
    p.add_argument("--seqlen", type=int, default=256)
    args = p.parse_args()
    info = versions()
    lib_path = os.path.abspath(args.lib)
    rows = []
    # A per-process offset keeps two runs on one machine from sharing the driver's JIT cache.
    jitter = (os.getpid() % 997) * 1e-7
    for d in args.hdims:
        heads = 2048 // d
        q, k, v = [torch.randn(1, heads, args.seqlen, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
        out = torch.empty_like(q)
        tensors = [flare_tensor(t) for t in (q, k, v, out)]
        for causal in (0, 1):
            for sample in range(args.samples):
                opt = FlareOptions()
                opt.causal = causal
                opt.window_left = opt.window_right = -1
                opt.scale = d ** -0.5 * (1 + jitter + 1e-6 * (1 + sample + 10 * causal))
                with tempfile.TemporaryDirectory() as cache_dir:
                    os.environ["FLARE_CACHE_DIR"] = cache_dir
                    flare = Flare(lib_path)
                    out.fill_(float("nan"))
                    cold = timed_call(flare, tensors, opt)
                    memory = min(timed_call(flare, tensors, opt) for _ in range(5))
                    flare.lib.flare_session_destroy(ctypes.c_void_p(flare.session))
                    again = Flare(lib_path)
                    out.fill_(float("nan"))  # the check below reads what the disk hit's kernel wrote
                    disk = timed_call(again, tensors, opt)
                    again.lib.flare_session_destroy(ctypes.c_void_p(again.session))
                expected = torch.nn.functional.scaled_dot_product_attention(
                    q.float(), k.float(), v.float(), is_causal=bool(causal), scale=opt.scale)
                error = (out.float() - expected).abs().max().item()
                if not error < 0.02:
                    raise RuntimeError(f"d={d} causal={causal}: max |out - reference| {error}")
                rows.append({**info, "commit": args.commit, "hdim": d, "causal": causal, "sample": sample,
                             "cold_ms": f"{cold:.1f}", "memory_hit_ms": f"{memory:.3f}", "disk_hit_ms": f"{disk:.2f}",
                             "max_error": f"{error:.4f}"})
                print(f"d={d:3d} causal={causal} sample {sample}: cold {cold:7.1f} ms, memory hit {memory:6.3f} ms, "
                      f"disk hit {disk:6.2f} ms (max |out - reference| {error:.4f})", flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
