"""cuBLAS through torch.matmul on the same problem as flare-bench-matmul: N x N x N bf16, bf16 out.

Prints CSV lines method,size,median_ms,tflops; timed with CUDA events, median of 10 after warm-up.
"""
import sys

import torch


def main(sizes):
    for n in sizes:
        a = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) + 0.01
        b = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) + 0.01
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.matmul(a, b)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        ms = times[len(times) // 2]
        print(f"cublas_torch_matmul,{n},{ms:.3f},{2 * n ** 3 / (ms * 1e-3) / 1e12:.1f}")


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [4096, 8192])
