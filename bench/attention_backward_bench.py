"""Flare's generated backward kernels next to PyTorch SDPA's backward backends, in one process.

Setup of the FlashAttention papers (bf16, 16k tokens in total, hidden 2048); FLOPs of the backward =
2.5 x the forward's (4 * B * H * S^2 * D, halved when causal). Flare: the forward once (flare_attention
with its LSE), then flare_attention_backward timed. SDPA (FLASH_ATTENTION, CUDNN_ATTENTION,
EFFICIENT_ATTENTION): the forward once with autograd, then out.backward(dout, retain_graph=True)
timed. Times: CUDA events around each call (attention_bench.time_calls), --iters calls per method in
each of --rounds rounds that take the methods in turn, median. Before timing, Flare's dq, dk, dv are
compared with cuDNN's (max |difference|, and cuDNN's own difference from float64 math on a small
slice is not computed here: see the GPU tests for the float64 comparison).

With --tiles "BLOCK_M,BLOCK_N,WARPS[,TRANSPOSED];..." (and --flare-opt, --examples), also the backward kernels
of the examples' plain and causal modules generated with those tiles (convert-attn-to-tile grad-tiles,
through flare-opt), launched by their ABI (rows "tiles=..."), each compared with Flare's default kernels.
A tile set "MAIN@DQ_BLOCK_M,DQ_BLOCK_N,DQ_WARPS[,PRODUCER[,PING_PONG]]" is the deterministic mode with
those dQ kernel tiles and switches (grad-dq-tiles); "MAIN@" its default dQ tiles; "MAIN@atomics" dQ summed by the main kernel's f32 atomics
(dq-atomics); MAIN empty: the default tiles. With --deterministic, also flare_attention_backward in its
deterministic mode (row "flare-det").

    python3 attention_backward_bench.py --lib <bundle>/lib/libflare.so --out results/x.csv
"""
import argparse
import datetime
import re
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from attention_bench import Flare, time_calls, unavailable


# The backward's calls (Flare.forward with its LSE, Flare.backward) are attention_bench.Flare's.
FlareBackward = Flare


def tile_kernels(flare, flare_opt, examples, d, causal, tiles):
    """The three backward kernels of the example module generated with `tiles`, loaded by
    flare_kernel_load_options as flare_attention_backward compiles its kernels (without the TMA fallback:
    the benchmark's views are aligned, their tensor maps encode)."""
    name = "causal" if causal else "plain"
    text = open(f"{examples}/attention/{name}.mlir").read().replace("x128x", f"x{d}x")
    main, det, dq = tiles.partition("@")
    options = f"grad=true grad-tiles={main}" if main else "grad=true"
    if dq == "atomics":
        options += " dq-atomics=true"
    elif det:
        options += " deterministic=true" + (f" grad-dq-tiles={dq}" if dq else "")
    ir = subprocess.run([flare_opt, "-", "--attn-classify-mask", "--attn-choose-config",
                         f"--convert-attn-to-tile={options}"],
                        input=text, capture_output=True, text=True, check=True).stdout
    suffixes = ("_bwd_preprocess", "_bwd", "_bwd_dq") + (("_bwd_dv",) if f"@{name}_bwd_dv(" in ir else ())
    kernels = {suffix: flare.kernel(ir, name + suffix, "tma-fallback=0") for suffix in suffixes}
    # The launch blocks: the kernels' hints in the tile IR.
    for suffix, hint in (("_bwd", "block_n"), ("_bwd_dq", "block_m")):
        kernels[suffix + "." + hint] = int(re.search(rf"func\.func @{name}{suffix}\(.*?flare\.attention\.{hint} = (\d+)",
                                                     ir, re.S).group(1))
    return kernels


def launch_tiles(flare, kernels, tiles, q, k, v, out, dout, lse, delta, acc, dq, dk, dv):
    b, h, s, d = q.shape
    ptrs = [t.data_ptr() for t in (q, k, v, out, dout, lse, delta, acc, dq, dk, dv)]
    args = [(0, p) for p in ptrs] + [(1, h), (1, k.shape[1]), (1, s), (1, k.shape[2])]
    for t in (q, k, v, out, dout, dq, dk, dv):
        args += [(2, t.stride(0)), (2, t.stride(1)), (2, t.stride(2))]
    rows = 4096 // d
    block_n, dq_rows = kernels["_bwd.block_n"], kernels["_bwd_dq.block_m"]
    flare.launch(kernels["_bwd_preprocess"], ((s + rows - 1) // rows, h, b), args)
    flare.launch(kernels["_bwd"], ((k.shape[2] + block_n - 1) // block_n, k.shape[1], b), args)
    if "_bwd_dv" in kernels:
        flare.launch(kernels["_bwd_dv"], ((k.shape[2] + block_n - 1) // block_n, k.shape[1], b), args)
    flare.launch(kernels["_bwd_dq"], ((s + dq_rows - 1) // dq_rows, h, b), args)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seqlens", default="1024,4096,16384")
    ap.add_argument("--head-dims", default="64,128,256")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tiles", default="")
    ap.add_argument("--flare-opt", default="")
    ap.add_argument("--examples", default="")
    ap.add_argument("--deterministic", action="store_true")
    args = ap.parse_args()
    flare = FlareBackward(args.lib)
    torch.manual_seed(0)
    rows = []
    print(f"# {datetime.datetime.now().isoformat(timespec='seconds')} {torch.cuda.get_device_name()} "
          f"torch {torch.__version__}", flush=True)
    for d in [int(x) for x in args.head_dims.split(",")]:
        for s in [int(x) for x in args.seqlens.split(",")]:
            for causal in (False, True):
                b, h = max(1, 16384 // s), 2048 // d
                q, k, v, dout = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
                out = torch.empty_like(q)
                lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
                dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
                flops = 2.5 * 4 * b * h * s * s * d / (2 if causal else 1)
                methods = {}
                try:
                    flare.forward(q, k, v, out, lse, causal)
                    methods["flare"] = lambda: flare.backward(q, k, v, out, dout, lse, dq, dk, dv, causal)
                    methods["flare"]()
                except Exception as e:  # noqa: BLE001
                    print(f"flare d={d} s={s} causal={causal}: {unavailable(e)}", flush=True)
                if args.deterministic:
                    try:
                        ddq, ddk, ddv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
                        methods["flare-det"] = lambda ddq=ddq, ddk=ddk, ddv=ddv: flare.backward(
                            q, k, v, out, dout, lse, ddq, ddk, ddv, causal, deterministic=True)
                        methods["flare-det"]()
                        torch.cuda.synchronize()
                        first = [t.clone() for t in (ddq, ddk, ddv)]
                        methods["flare-det"]()
                        torch.cuda.synchronize()
                        same = all(torch.equal(a, c) for a, c in zip(first, (ddq, ddk, ddv)))
                        tdiff = max((a.float() - c.float()).abs().max().item() for a, c in zip((ddq, ddk, ddv), (dq, dk, dv)))
                        print(f"flare-det d={d} s={s} causal={int(causal)}: max|det - flare| {tdiff:.3g}, "
                              f"two calls bitwise equal: {same}", flush=True)
                    except Exception as e:  # noqa: BLE001
                        print(f"flare-det d={d} s={s} causal={causal}: {unavailable(e)}", flush=True)
                for tiles in [t for t in args.tiles.split(";") if t]:
                    try:
                        kernels = tile_kernels(flare, args.flare_opt, args.examples, d, causal, tiles)
                        delta = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
                        acc = torch.empty(b, h, s, d, device="cuda", dtype=torch.float32)
                        tq, tk, tv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
                        name = f"tiles={tiles}"
                        methods[name] = (lambda kernels=kernels, tiles=tiles, delta=delta, acc=acc, tq=tq, tk=tk, tv=tv:
                                         launch_tiles(flare, kernels, tiles, q, k, v, out, dout, lse, delta, acc,
                                                      tq, tk, tv))
                        methods[name]()
                        torch.cuda.synchronize()
                        tdiff = max((a.float() - c.float()).abs().max().item() for a, c in zip((tq, tk, tv), (dq, dk, dv)))
                        print(f"flare {name} d={d} s={s} causal={int(causal)}: max|tiles - flare| {tdiff:.3g}",
                              flush=True)
                    except Exception as e:  # noqa: BLE001
                        print(f"flare tiles={tiles} d={d} s={s} causal={causal}: {unavailable(e)}", flush=True)
                grads = {}
                for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash2", SDPBackend.FLASH_ATTENTION),
                                      ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
                    try:
                        qq, kk, vv = (t.detach().clone().requires_grad_() for t in (q, k, v))
                        with sdpa_kernel(backend):
                            o = F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal)

                        def run(o=o, qq=qq, kk=kk, vv=vv):
                            qq.grad = kk.grad = vv.grad = None
                            o.backward(dout, retain_graph=True)
                        run()
                        grads[name] = (qq.grad.clone(), kk.grad.clone(), vv.grad.clone())
                        methods[name] = run
                    except Exception as e:  # noqa: BLE001
                        print(f"{name} d={d} s={s} causal={causal}: {unavailable(e)}", flush=True)
                diff = ""
                if "flare" in methods and "cudnn" in grads:
                    diff = max((a.float() - c.float()).abs().max().item() for a, c in zip((dq, dk, dv), grads["cudnn"]))
                times = {name: [] for name in methods}
                for _ in range(args.rounds):
                    for name, fn in methods.items():
                        times[name] += time_calls(fn, args.iters)
                for name, t in times.items():
                    ms = statistics.median(t)
                    row = dict(method=name, head_dim=d, seqlen=s, causal=int(causal), batch=b, heads=h, ms=ms,
                               tflops=flops / ms / 1e9, max_diff_vs_cudnn=diff if name == "flare" else "")
                    rows.append(row)
                    print(f"d={d:3d} s={s:5d} causal={int(causal)} {name:20s} {ms:8.3f} ms {row['tflops']:7.1f} TFLOP/s"
                          + (f"  max|flare - cudnn| {diff:.3g}" if name == "flare" and diff != "" else ""), flush=True)
                del q, k, v, dout, out, lse, dq, dk, dv, grads
                torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        keys = list(rows[0].keys())
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(str(r[k]) for k in keys) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
