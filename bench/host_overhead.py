#!/usr/bin/env python3
"""Host time of one attention call: what a call costs the CPU before its kernel runs.

On a shape small enough that the GPU keeps up with the host (batch 1, 2 heads, 128 tokens), it times
`--calls` back-to-back calls per method without synchronizing in between: the time per call is then
the host's (Python, the library, the driver's launch), not the kernel's. Methods: Flare through the
benchmark's ctypes wrapper (its tensor and option structures built per call, as the benchmark
does), Flare's C API alone (the structures built once, one ctypes call per launch), PyTorch's SDPA
on the cuDNN and FlashAttention backends, and a one-element in-place add as the floor of a PyTorch
op. `wall` is the time until the last kernel finished: close to `host` when the GPU kept up.

    python3 bench/host_overhead.py --lib build/lib/libflare.so [--calls 2000]
"""
import argparse
import ctypes
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_bench import Flare, FlareOptions, flare_tensor  # noqa: E402


def per_call_us(fn, calls, warmup=50):
    """(host, wall) microseconds per call of `calls` unsynchronized calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = time.perf_counter() - start
    torch.cuda.synchronize()
    wall = time.perf_counter() - start
    return host / calls * 1e6, wall / calls * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", required=True, help="path to libflare.so")
    p.add_argument("--calls", type=int, default=2000)
    args = p.parse_args()
    flare = Flare(args.lib)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {args.calls} calls per method")
    for d, causal in [(128, False), (64, True)]:
        q, k, v = [torch.randn(1, 2, 128, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
        out = torch.empty_like(q)
        # The C API alone: everything but the call built once.
        opt = FlareOptions()
        opt.causal = int(causal)
        opt.window_left = opt.window_right = -1
        tensors = [flare_tensor(t) for t in (q, k, v, out)]
        refs = [ctypes.byref(t) for t in tensors]
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        call, session = flare.lib.flare_attention, flare.session
        one = torch.zeros(1, device="cuda")
        sdpa = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
        methods = [("flare (benchmark wrapper)", lambda: flare.attention(q, k, v, out, causal), None),
                   ("flare (C API call)", lambda: call(session, *refs, ctypes.byref(opt), stream), None),
                   ("sdpa-cudnn", sdpa, SDPBackend.CUDNN_ATTENTION),
                   ("sdpa-flash", sdpa, SDPBackend.FLASH_ATTENTION),
                   ("torch add_ (floor)", lambda: one.add_(1), None)]
        print(f"head dim {d}, {'causal' if causal else 'non-causal'}, B=1 H=2 S=128:")
        for name, fn, backend in methods:
            if backend is None:
                host, wall = per_call_us(fn, args.calls)
            else:
                with sdpa_kernel(backend):  # entered once, outside the timed calls
                    host, wall = per_call_us(fn, args.calls)
            print(f"  {name:28s} host {host:6.1f} us/call   wall {wall:6.1f} us/call")


if __name__ == "__main__":
    main()
