"""Power, clock and work per joule of Flare and its peers under sustained load, one method at a time.

The H200 holds its board power at 700 W: on long attention shapes the driver lowers the SM clock
(nvidia-smi's "SW power cap") and a method's speed then depends on the energy it spends per FLOP as
much as on its schedule. For each shape of the benchmark's setup (attention_bench.shapes) and each
method, this runs the method back to back for --seconds (after a short warm-up), while nvidia-smi logs
the SM clock, the board power and the throttle reasons every 20 ms. Per method and shape it reports
the time per call over the whole window, the median power and clock over the window (its first
0.25 s left out), the share of samples flagged as power-capped, and GFLOP per joule.

    python3 power_draw.py --lib <bundle>/lib/libflare.so --out results/x.csv
"""
import datetime
import os
import statistics
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_bench as ab  # noqa: E402

POWER_CAP_REASON = 0x4  # clocks_throttle_reasons.active: SW power cap


class Sampler:
    """nvidia-smi in a loop of 20 ms; samples as (unix time, SM MHz, watts, throttle reasons)."""

    def __init__(self):
        self.samples = []
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active",
             "--format=csv,noheader,nounits", "-lms", "20"], stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                self.samples.append((t, float(parts[1]), float(parts[2]), int(parts[3], 16)))
            except (ValueError, IndexError):
                continue

    def stop(self):
        time.sleep(0.2)  # the last window's samples
        self.proc.terminate()
        self.thread.join(timeout=2)

    def window(self, t0, t1):
        return [s for s in self.samples if t0 <= s[0] <= t1]


def sustained(call, seconds):
    """Runs `call` back to back for about `seconds`; returns (calls, device ms per call, t0, t1) with t0
    and t1 the window's wall-clock ends. The host waits every few calls so that the queue stays short
    and the window's wall time is the GPU's."""
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.time()
    start.record()
    calls = 0
    while time.time() - t0 < seconds:
        for _ in range(8):
            call()
        calls += 8
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    return calls, start.elapsed_time(end) / calls, t0, time.time()


def main():
    p = ab.run_arguments(__doc__)
    p.add_argument("--seqlens", type=int, nargs="+", default=[4096, 16384])
    p.add_argument("--causal", type=int, nargs="+", default=[0])
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--seconds", type=float, default=2.0, help="sustained run per method and shape")
    p.add_argument("--methods", nargs="+", default=["flare", "sdpa-cudnn", "sdpa-flash"])
    args = p.parse_args()
    if args.seconds < 1.0:
        # nvidia-smi's power reading is an average that lags a change of load by a few hundred ms.
        p.error("--seconds must be at least 1 (the power reading lags the load)")

    flare = ab.Flare(args.lib)
    info = ab.versions()
    print("# " + ", ".join(f"{k} {v}" for k, v in info.items()) + f", commit {args.commit}", flush=True)
    peers = {"sdpa-cudnn": ab.SDPBackend.CUDNN_ATTENTION, "sdpa-flash": ab.SDPBackend.FLASH_ATTENTION,
             "sdpa-efficient": ab.SDPBackend.EFFICIENT_ATTENTION}
    sampler = Sampler()
    runs = []
    for d in args.hdims:
        for causal, s, b, h, q, k, v, out in ab.shapes(args, d):
            flops = 4 * b * h * s * s * d / (2 if causal else 1)
            for name in args.methods:
                if name == "flare":
                    call = lambda: flare.attention(q, k, v, out, causal)
                else:
                    call = lambda fn=ab.sdpa(peers[name]): fn(q, k, v, causal)
                sustained(call, 0.3)
                calls, ms, t0, t1 = sustained(call, args.seconds)
                runs.append(dict(method=name, hdim=d, causal=int(causal), seqlen=s, batch=b, heads=h, calls=calls,
                                 ms=ms, flops=flops, t0=t0, t1=t1))
    sampler.stop()
    fields = ["date", "commit", "gpu", "driver", "torch", "cudnn", "method", "hdim", "causal", "seqlen", "batch",
              "heads", "calls", "ms", "tflops", "watts", "sm_mhz", "capped", "gflop_per_joule"]
    with open(args.out, "w") as f:
        f.write(",".join(fields) + "\n")
        for r in runs:
            window = sampler.window(r["t0"] + 0.25, r["t1"])
            watts = statistics.median(w for _, _, w, _ in window) if window else float("nan")
            mhz = statistics.median(c for _, c, _, _ in window) if window else float("nan")
            capped = sum(1 for *_, why in window if why & POWER_CAP_REASON) / len(window) if window else float("nan")
            tflops = r["flops"] / (r["ms"] * 1e-3) / 1e12
            per_joule = r["flops"] / (watts * r["ms"] * 1e-3) / 1e9
            row = dict(r, date=info["date"], commit=args.commit, gpu=info["gpu"], driver=info["driver"],
                       torch=info["torch"], cudnn=info["cudnn"], ms=f"{r['ms']:.4f}", tflops=f"{tflops:.1f}",
                       watts=f"{watts:.0f}", sm_mhz=f"{mhz:.0f}", capped=f"{capped:.2f}",
                       gflop_per_joule=f"{per_joule:.0f}")
            f.write(",".join(str(row[k]) for k in fields) + "\n")
            print(f"{r['method']:12s} d={r['hdim']:3d} causal={r['causal']} S={r['seqlen']:6d}: {tflops:6.1f} TFLOP/s "
                  f"{watts:5.0f} W {mhz:5.0f} MHz capped {capped:4.0%} {per_joule:6.0f} GFLOP/J ({len(window)} samples)",
                  flush=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
