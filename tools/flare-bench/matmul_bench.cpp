//===- matmul_bench.cpp - Time the tile matmul example ---------------------===//
//
//   flare-bench-matmul <examples dir> [--block M N] [--file F] [size...]
//
// Times examples/tile/matmul_hopper.mlir, or with --file another version of it (the same kernel,
// matmul_bf16, and arguments). The CTA tile comes from the kernel's launch hints (flare.block_m /
// flare.block_n), else from --block.
//
// For each size N: C = A * B with N x N x N bf16 inputs (random, never zeros), f32 accumulation and
// bf16 output, timed with CUDA events over repeated launches after warm-up; then 256 sampled elements
// of C are checked against a float64 reference (relative error 1e-2, the output being bf16). Prints
// one CSV line per size: method,size,median_ms,tflops; exits 1 when a check fails.
//===----------------------------------------------------------------------===//
#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <examples dir> [--block M N] [--file F] [size...]\n", argv[0]);
    return 2;
  }
  std::vector<int> sizes;
  unsigned blockM = 128, blockN = 128; // the CTA tile of a kernel without launch hints
  std::string path = std::string(argv[1]) + "/tile/matmul_hopper.mlir";
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--file" && i + 1 < argc) {
      path = argv[++i];
      continue;
    }
    if (std::string(argv[i]) == "--block" && i + 2 < argc) {
      blockM = static_cast<unsigned>(std::atoi(argv[i + 1]));
      blockN = static_cast<unsigned>(std::atoi(argv[i + 2]));
      i += 2;
      continue;
    }
    sizes.push_back(std::atoi(argv[i]));
  }
  if (sizes.empty())
    sizes = {4096, 8192};
  try {
    std::ifstream file(path);
    if (!file)
      throw flare::Error("cannot read " + path);
    std::stringstream src;
    src << file.rdbuf();
    std::string text = src.str();
    std::string label = "flare_tile_matmul";
    if (path != std::string(argv[1]) + "/tile/matmul_hopper.mlir")
      label += "_" + path.substr(path.find_last_of('/') + 1);
    flare::rt::Context ctx(0);
    flare::rt::KernelCache cache(ctx);
    flare::rt::Kernel kernel = cache.getOrCompile(text, {ctx.arch()}, "matmul_hopper.mlir")->kernel("matmul_bf16");
    std::mt19937 rng(1);
    std::uniform_int_distribution<int> bits(0x3C00, 0x3F80); // bf16 values in [2^-7, 1)
    for (int n : sizes) {
      std::vector<uint16_t> host(static_cast<size_t>(n) * n);
      for (auto &h : host)
        h = static_cast<uint16_t>(bits(rng));
      auto a = flare::rt::DeviceBuffer::fromHost(ctx, host);
      auto b = flare::rt::DeviceBuffer::fromHost(ctx, host);
      flare::rt::DeviceBuffer c(ctx, host.size() * 2);
      c.fillBytes(0xFF); // NaN: an element the kernel never writes fails the check below
      flare::rt::KernelArgs args;
      args.addPointer(a).addPointer(b).addPointer(c).addI32(n).addI32(n).addI32(n).addI32(n).addI32(n).addI32(n);
      // The kernel's launch hints (flare.block_m / block_n) give its CTA tile, else --block.
      const unsigned bm = static_cast<unsigned>(kernel.info().hint("block_m", blockM)),
                     bn = static_cast<unsigned>(kernel.info().hint("block_n", blockN));
      flare::rt::Grid grid{(n + bm - 1) / bm, (n + bn - 1) / bn, 1};
      for (int i = 0; i < 3; ++i)
        kernel.launch(grid, args);
      ctx.synchronize();
      std::vector<float> ms;
      for (int rep = 0; rep < 10; ++rep) {
        flare::rt::Event start(ctx), end(ctx);
        start.record();
        kernel.launch(grid, args);
        end.record();
        end.synchronize();
        ms.push_back(flare::rt::Event::elapsedMs(start, end));
      }
      std::sort(ms.begin(), ms.end());
      double median = ms[ms.size() / 2];
      double tflops = 2.0 * n * n * static_cast<double>(n) / (median * 1e-3) / 1e12;
      // Correctness of what was timed: sampled elements of C against a float64 reference (B = A here).
      std::vector<uint16_t> out = c.toHost<uint16_t>(host.size());
      auto f32 = [](uint16_t h) {
        uint32_t w = static_cast<uint32_t>(h) << 16;
        float f;
        std::memcpy(&f, &w, 4);
        return f;
      };
      std::uniform_int_distribution<int> at(0, n - 1);
      double worst = 0;
      for (int sample = 0; sample < 256; ++sample) {
        const int i = at(rng), j = at(rng);
        double ref = 0;
        for (int kk = 0; kk < n; ++kk)
          ref += double(f32(host[size_t(i) * n + kk])) * f32(host[size_t(kk) * n + j]);
        const double got = f32(out[size_t(i) * n + j]);
        const double err = std::fabs(got - ref) / ref;
        worst = std::isnan(got) ? INFINITY : std::max(worst, err);
      }
      if (!(worst <= 1e-2))
        throw flare::Error("size " + std::to_string(n) + ": sampled C differs from the float64 reference by " +
                           std::to_string(worst) + " (relative)");
      std::printf("%s,%d,%.3f,%.1f\n", label.c_str(), n, median, tflops);
    }
  } catch (const flare::Error &e) {
    std::fprintf(stderr, "flare-bench-matmul: %s\n", e.what());
    return 1;
  }
  return 0;
}
