#!/usr/bin/env python3
"""Warm-up of a model's attention kernels: its wall time on 1 thread and on N, then the calls' cache hits.

1. `flare-warmup` compiles every kernel of a warm-up list (default: the Llama-3-8B-like example, 40 call
   classes) into an empty kernel cache directory, once with 1 worker thread and once with N (default:
   one per CPU), each in a fresh process with a fresh, empty driver JIT cache (CUDA_CACHE_PATH), so that
   both compile everything, ptxas included. Both wall times (the tool's own, and the process's with its
   start and the context) and the speedup are printed.
2. This process then opens a session on the N-thread run's directories (kernel cache and driver JIT
   cache, as a serving process on that machine would) and calls flare_attention for one of the list's
   shapes: the kernel cache's counters show a hit and no compile. Its first call's time is printed next
   to a cold first call of the same shape (a softmax scale of its own makes it a kernel no cache has).
3. The C API's flare_warmup warms that call's request (again with a scale of its own) in a fresh
   session, after which the call compiles nothing either.

Runs from the GPU bundle (bench/ next to bin/, lib/ and examples/) or from a source tree with build/:

    python3 flare-bundle/bench/warmup_time.py [--threads N] [--list FILE] [--call INDEX] [--out warmup.csv]
"""
import argparse
import csv
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A scale no list uses, per process, for the calls that must find no kernel in any cache.
JITTER = 1 + (os.getpid() % 997) * 1e-7


def first_existing(*paths):
    for p in paths:
        if os.path.exists(p):
            return p
    return paths[0]


def run_tool(tool, listfile, threads, cache_dir, driver_cache):
    """flare-warmup on empty directories: (process wall s, tool wall s, kernels, compiled, device, output)."""
    env = dict(os.environ, FLARE_CACHE_DIR=cache_dir, CUDA_CACHE_PATH=driver_cache)
    env.pop("CUDA_CACHE_DISABLE", None)
    start = time.perf_counter()
    proc = subprocess.run([tool, listfile, f"--threads={threads}", f"--cache-dir={cache_dir}"], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"flare-warmup --threads={threads} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    lines = proc.stdout.strip().splitlines()
    summary = next(line for line in reversed(lines) if " s wall on " in line)
    m = re.search(r"(\d+) kernels \((\d+) compiled.*?([\d.]+) s wall", summary)
    device = re.search(r"threads, (.*) \(sm_\w+\), cache", lines[0])
    if not m or not device:
        sys.exit(f"unexpected flare-warmup output:\n{proc.stdout}")
    return wall, float(m.group(3)), int(m.group(1)), int(m.group(2)), device.group(1), proc.stdout


def list_requests(tool, listfile):
    """The list's requests as dicts of their key=value words (flare-warmup --check)."""
    out = subprocess.run([tool, "--check", listfile], capture_output=True, text=True, check=True).stdout
    requests = []
    for line in out.splitlines()[:-1]:
        words = line.split(": ", 1)[1].split()
        requests.append(dict(w.split("=", 1) for w in words))
    return requests


def shape(r):
    b, hq, hkv, d = (int(r[k]) for k in ("batch", "heads", "kv_heads", "head_dim"))
    sq = int(r.get("seq", r.get("seq_q", 0)))
    skv = int(r.get("seq", r.get("seq_kv", 0)))
    return b, hq, hkv, sq, skv, d


def measure_calls(lib, r, warm_dir, top, threads):
    """Steps 2 and 3 (this process's CUDA starts here, after the tool runs): rows of results."""
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from attention_bench import Flare, FlareOptions, flare_tensor

    class WarmupRequest(ctypes.Structure):
        _fields_ = [("dtype", ctypes.c_int32), ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
                    ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64), ("seq_kv", ctypes.c_int64),
                    ("head_dim", ctypes.c_int64), ("options", ctypes.POINTER(FlareOptions))]

    class WarmupResult(ctypes.Structure):
        _fields_ = [("status", ctypes.c_int32), ("duplicate_of", ctypes.c_int32), ("kernels", ctypes.c_int32),
                    ("compiled", ctypes.c_int32), ("ms", ctypes.c_double), ("error", ctypes.c_char * 512)]

    class Session(Flare):
        """A Flare session on `cache_dir`, with the warm-up and counter entry points declared."""

        def __init__(self, cache_dir):
            os.environ["FLARE_CACHE_DIR"] = cache_dir
            super().__init__(lib)
            self.lib.flare_warmup.argtypes = [ctypes.c_void_p, ctypes.POINTER(WarmupRequest), ctypes.c_int32,
                                              ctypes.c_int32, ctypes.POINTER(WarmupResult)]
            self.lib.flare_cache_counts.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                                                    ctypes.POINTER(ctypes.c_uint64)]

        def counts(self):
            hits, misses = ctypes.c_uint64(), ctypes.c_uint64()
            self._check(self.lib.flare_cache_counts(ctypes.c_void_p(self.session), ctypes.byref(hits),
                                                    ctypes.byref(misses)))
            return hits.value, misses.value

        def close(self):
            self.lib.flare_session_destroy(ctypes.c_void_p(self.session))

    if "module" in r:
        sys.exit("choose a request without a custom module (--call)")

    def options(scale_factor=1.0, lse=None):
        opt = FlareOptions()
        opt.causal = int(r.get("causal", 0))
        opt.bottom_right = int(r.get("align") == "bottom_right")
        opt.window_left = int(r.get("window_left", -1))
        opt.window_right = int(r.get("window_right", -1))
        opt.softcap = float(r.get("softcap", 0))
        # The list's scale (0: 1/sqrt(D)) for the warmed-up call; a multiple of the scale in effect for
        # calls that must find no kernel in any cache.
        opt.scale = float(r.get("scale", 0))
        if scale_factor != 1.0:
            opt.scale = (opt.scale or int(r["head_dim"]) ** -0.5) * scale_factor
        if lse is not None:
            opt.lse = flare_tensor(lse)
        return opt

    b, hq, hkv, sq, skv, d = shape(r)
    dtype = torch.float16 if r.get("dtype") == "f16" else torch.bfloat16
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype)
    k, v = (torch.randn(b, hkv, skv, d, device="cuda", dtype=dtype) for _ in range(2))
    out = torch.empty_like(q)
    lse = torch.empty(b, hq, sq, device="cuda", dtype=torch.float32) if r.get("lse") == "1" else None
    tensors = [flare_tensor(t) for t in (q, k, v, out)]

    def timed_call(session, scale_factor=1.0):
        """One flare_attention call: (ms to the end of its kernel, hits added, compiles added)."""
        opt = options(scale_factor, lse)
        before = session.counts()
        torch.cuda.synchronize()
        start = time.perf_counter()
        session._check(session.lib.flare_attention(ctypes.c_void_p(session.session),
                                                   *[ctypes.byref(t) for t in tensors], ctypes.byref(opt),
                                                   ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)))
        torch.cuda.synchronize()
        ms = (time.perf_counter() - start) * 1e3
        after = session.counts()
        return ms, after[0] - before[0], after[1] - before[1]

    rows = []
    warm = Session(warm_dir)
    ms, hits, misses = timed_call(warm)
    warm.close()
    print(f"first call after warm-up: {ms:8.2f} ms, cache hits +{hits}, compiles +{misses}")
    rows.append({"what": "call after warm-up", "seconds": f"{ms / 1e3:.4f}", "hits": hits, "misses": misses})
    ok = misses == 0 and hits > 0

    cold = Session(os.path.join(top, "cold"))
    ms, hits, misses = timed_call(cold, JITTER)
    cold.close()
    print(f"a cold first call:        {ms:8.2f} ms, cache hits +{hits}, compiles +{misses} "
          "(the same shape, a scale of its own)")
    rows.append({"what": "cold call", "seconds": f"{ms / 1e3:.4f}", "hits": hits, "misses": misses})

    capi = Session(os.path.join(top, "c-api"))
    opt = options(JITTER * JITTER)
    if lse is not None:
        opt.lse.data = 1  # asks for the LSE; no address is read
    request = WarmupRequest(1 if dtype == torch.float16 else 0, b, hq, hkv, sq, skv, d, ctypes.pointer(opt))
    result = WarmupResult()
    start = time.perf_counter()
    rc = capi.lib.flare_warmup(ctypes.c_void_p(capi.session), ctypes.byref(request), 1, threads,
                               ctypes.byref(result))
    warm_ms = (time.perf_counter() - start) * 1e3
    if rc != 0:
        sys.exit(f"flare_warmup failed: {capi.lib.flare_last_error().decode()}")
    ms, hits, misses = timed_call(capi, JITTER * JITTER)
    capi.close()
    print(f"flare_warmup of that call: {warm_ms:.0f} ms, {result.kernels} lookups, {result.compiled} compiled; "
          f"the call then: {ms:.2f} ms, cache hits +{hits}, compiles +{misses}")
    rows.append({"what": "call after flare_warmup", "seconds": f"{ms / 1e3:.4f}", "hits": hits, "misses": misses,
                 "kernels": result.kernels, "compiled": result.compiled})
    return rows, ok and misses == 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tool", default=first_existing(os.path.join(ROOT, "bin", "flare-warmup"),
                                                    os.path.join(ROOT, "build", "bin", "flare-warmup")))
    p.add_argument("--lib", default=first_existing(os.path.join(ROOT, "lib", "libflare.so"),
                                                   os.path.join(ROOT, "build", "lib", "libflare.so")))
    p.add_argument("--list", default=os.path.join(ROOT, "examples", "warmup", "llama3-8b.txt"))
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="worker threads of the parallel run")
    p.add_argument("--call", type=int, default=None,
                   help="index of the request to call afterwards (default: batch 1 at 4096 tokens, else the first)")
    p.add_argument("--out", help="also write the numbers to this CSV")
    p.add_argument("--commit", default="unknown")
    args = p.parse_args()
    tool, lib, listfile = (os.path.abspath(x) for x in (args.tool, args.lib, args.list))
    requests = list_requests(tool, listfile)
    print(f"{len(requests)} requests in {listfile}; {os.cpu_count()} CPUs")

    rows = []
    with tempfile.TemporaryDirectory() as top:
        dirs = {}
        for threads in sorted({1, args.threads}):
            dirs[threads] = (os.path.join(top, f"kernels-{threads}"), os.path.join(top, f"driver-{threads}"))
            wall, tool_s, kernels, compiled, device, log = run_tool(tool, listfile, threads, *dirs[threads])
            print(log.rstrip() if threads == args.threads else log.strip().splitlines()[-1])
            print(f"warm-up on {threads:3d} threads: {tool_s:7.2f} s ({wall:7.2f} s with the process), "
                  f"{kernels} kernels, {compiled} compiled")
            rows.append({"what": "warm-up", "threads": threads, "seconds": f"{tool_s:.3f}",
                         "process_seconds": f"{wall:.3f}", "kernels": kernels, "compiled": compiled})
        one, many = float(rows[0]["seconds"]), float(rows[-1]["seconds"])
        print(f"speedup on {args.threads} threads: {one / many:.2f}x")

        index = args.call
        if index is None:
            index = next((i for i, r in enumerate(requests) if r.get("batch") == "1" and r.get("seq") == "4096"), 0)
        r = requests[index]
        print(f"the call: request {index}: {' '.join(f'{k}={v}' for k, v in r.items())}")
        # A serving process on this machine: the N-thread run's kernel cache and driver JIT cache.
        kernels_dir, driver_dir = dirs[args.threads]
        os.environ["CUDA_CACHE_PATH"] = driver_dir
        os.environ.pop("CUDA_CACHE_DISABLE", None)
        call_rows, ok = measure_calls(lib, r, kernels_dir, top, args.threads)
        rows += call_rows
        print("PASSED: the calls after warm-up compiled nothing" if ok else "FAILED: a call after warm-up compiled")

    if args.out:
        fields = ["commit", "device", "list", "what", "threads", "seconds", "process_seconds", "kernels", "compiled",
                  "hits", "misses"]
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for row in rows:
                w.writerow({"commit": args.commit, "device": device, "list": os.path.basename(listfile), **row})
        print(f"wrote {args.out}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
