//===- softmax_jit.cpp - JIT-compile a tile kernel from C++ and call it ---===//
//
// What a user program does with Flare: read a kernel written in the tile DSL, let the runtime compile
// it (or find it in the on-disk cache), launch it on device buffers, and read the result back.
//
//   softmax_jit [path/to/softmax.mlir] [rows] [cols]
//
// The result is checked against a float64 softmax computed here; the exit status says whether it
// matched.
//===----------------------------------------------------------------------===//
#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

int main(int argc, char **argv) {
  const std::string path = argc > 1 ? argv[1] : "examples/tile/softmax.mlir";
  const int rows = argc > 2 ? std::atoi(argv[2]) : 3001;
  const int cols = argc > 3 ? std::atoi(argv[3]) : 999;
  if (rows <= 0 || cols <= 0 || cols > 1024) {
    std::fprintf(stderr, "softmax_jit: need rows > 0 and 0 < cols <= 1024\n");
    return 2;
  }
  try {
    std::ifstream file(path);
    if (!file)
      throw flare::Error("cannot read " + path);
    std::stringstream source;
    source << file.rdbuf();

    flare::rt::Context ctx(0);
    flare::rt::KernelCache cache(ctx);  // compiles on first use, then serves from memory and disk
    flare::rt::Kernel softmax = cache.getOrCompile(source.str(), {}, path)->kernel("softmax");

    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.f, 3.f);
    std::vector<float> x(static_cast<size_t>(rows) * cols);
    for (float &v : x)
      v = dist(rng);
    auto in = flare::rt::DeviceBuffer::fromHost(ctx, x);
    flare::rt::DeviceBuffer out(ctx, x.size() * sizeof(float));
    out.fillBytes(0xFF);  // poison: every element must be overwritten

    flare::rt::KernelArgs args;
    args.addPointer(in).addPointer(out).addI32(rows).addI32(cols).addI32(cols).addI32(cols);
    softmax.launch({static_cast<unsigned>((rows + 3) / 4)}, args);  // 4 rows per program
    ctx.synchronize();
    std::vector<float> y = out.toHost<float>(x.size());

    double worst = 0;
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[static_cast<size_t>(r) * cols];
      double m = -INFINITY, l = 0;
      for (int c = 0; c < cols; ++c)
        m = std::max(m, static_cast<double>(row[c]));
      for (int c = 0; c < cols; ++c)
        l += std::exp(row[c] - m);
      for (int c = 0; c < cols; ++c) {
        double ref = std::exp(row[c] - m) / l;
        double got = y[static_cast<size_t>(r) * cols + c];
        double err = std::fabs(got - ref) / (ref + 1e-30);
        worst = std::isnan(got) ? INFINITY : std::max(worst, err);
      }
    }
    bool ok = worst <= 2e-5;
    std::printf("softmax_jit: %s, %d x %d, max relative error vs float64 %.3g: %s\n", ctx.name().c_str(), rows,
                cols, worst, ok ? "OK" : "MISMATCH");
    return ok ? 0 : 1;
  } catch (const flare::Error &e) {
    std::fprintf(stderr, "softmax_jit: %s\n", e.what());
    return 1;
  }
}
