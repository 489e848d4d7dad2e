//===- matmul_bench.cpp - Time the tile matmul example ---------------------===//
//
//   flare-bench-matmul <examples dir> [--block M N] [--bk K] [--file F] [size...]
//
// Times examples/tile/matmul_hopper.mlir (256x128 tiles; --block gives the tile of another version;
// --bk rewrites its K step, 32, e.g. to 64, whose rows of 128 bytes the compiler swizzles; --file
// times another file with the same kernel, matmul_bf16, and arguments)
//
// For each size N: C = A * B with N x N x N bf16 inputs (random, never zeros), f32 accumulation and
// bf16 output, timed with CUDA events over repeated launches after warm-up; prints one CSV line per
// size: method,size,median_ms,tflops.
//===----------------------------------------------------------------------===//
#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

namespace {
/// The example with K steps of `bk` instead of 32 (its K-step constant and A, B tile types).
std::string withBlockK(std::string text, int bk) {
  auto replaceAll = [&](const std::string &from, const std::string &to) {
    for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
      text.replace(pos, from.size(), to);
  };
  const std::string k = std::to_string(bk);
  replaceAll("%bk = arith.constant 32 : i32", "%bk = arith.constant " + k + " : i32");
  replaceAll("tensor<256x32xbf16>", "tensor<256x" + k + "xbf16>");
  replaceAll("tensor<32x128xbf16>", "tensor<" + k + "x128xbf16>");
  return text;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <examples dir> [size...]\n", argv[0]);
    return 2;
  }
  std::vector<int> sizes;
  unsigned blockM = 256, blockN = 128; // the CTA tile of examples/tile/matmul_hopper.mlir
  int blockK = 32;                      // its K step; --bk 64 rewrites it (128-byte swizzled operands)
  std::string path = std::string(argv[1]) + "/tile/matmul_hopper.mlir";
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--file" && i + 1 < argc) {
      path = argv[++i];
      continue;
    }
    if (std::string(argv[i]) == "--bk" && i + 1 < argc) {
      blockK = std::atoi(argv[++i]);
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
    if (blockK != 32)
      label += "_bk" + std::to_string(blockK);
    if (blockK != 32)
      text = withBlockK(text, blockK);
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
      std::printf("%s,%d,%.3f,%.1f\n", label.c_str(), n, median, tflops);
    }
  } catch (const flare::Error &e) {
    std::fprintf(stderr, "flare-bench-matmul: %s\n", e.what());
    return 1;
  }
  return 0;
}
