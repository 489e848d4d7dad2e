//===- TileKernelsTest.cpp - Tile examples on the GPU vs float64 references ===//
//
// Each example kernel is compiled by Flare (through the runtime's kernel cache), launched through
// flare::rt on fresh random inputs, with the output poisoned (all bytes 0xFF, a NaN) before the launch,
// on sizes that are not multiples of the block, and compared with a float64 CPU reference. Elements the
// kernel must not write (padding between rows) must still hold the poison afterwards.
// Without a GPU every test skips and says why.
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include <chrono>
#include <cmath>

namespace {

using namespace flare::test;
using TileKernels = GpuTest;

TEST_F(TileKernels, VectorAddMatchesFloat64Reference) {
  flare::rt::Kernel k = kernel("tile/vector_add.mlir", "vector_add");
  for (int n : pickShapes<int>({1, 1000, 1025, 4097, 1000003}, {1, 1025})) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<float> x = randomFloats(n, rng, -100.f, 100.f), y = randomFloats(n, rng, -100.f, 100.f);
    auto dx = flare::rt::DeviceBuffer::fromHost(*ctx, x);
    auto dy = flare::rt::DeviceBuffer::fromHost(*ctx, y);
    // One element of slack after the end: it must stay poisoned.
    flare::rt::DeviceBuffer dz(*ctx, (n + 1) * sizeof(float));
    dz.fillBytes(0xFF);
    flare::rt::KernelArgs args;
    args.addPointer(dx).addPointer(dy).addPointer(dz).addI32(n);
    k.launch({static_cast<unsigned>((n + 1023) / 1024)}, args);
    ctx->synchronize();
    std::vector<float> z = dz.toHost<float>(n + 1);
    int bad = 0;
    for (int i = 0; i < n && bad < 5; ++i) {
      double ref = static_cast<double>(x[i]) + static_cast<double>(y[i]);
      if (!(std::fabs(z[i] - ref) <= 1e-6 * std::fabs(ref) + 1e-6)) {
        ADD_FAILURE() << "z[" << i << "] = " << z[i] << ", reference " << ref;
        ++bad;
      }
    }
    EXPECT_TRUE(isPoison(z[n])) << "wrote past the end";
  }
}

TEST_F(TileKernels, RowSoftmaxMatchesFloat64Reference) {
  flare::rt::Kernel k = kernel("tile/softmax.mlir", "softmax");
  struct Shape { int rows, cols, pad; };
  for (Shape s : pickShapes<Shape>({{1, 1, 0}, {5, 17, 3}, {7, 1000, 0}, {33, 513, 11}, {1000, 1024, 0}, {4097, 777, 5}},
                                   {{1, 1, 0}, {5, 17, 3}, {33, 513, 11}})) {
    SCOPED_TRACE("rows = " + std::to_string(s.rows) + ", cols = " + std::to_string(s.cols) +
                 ", row padding = " + std::to_string(s.pad));
    const int inStride = s.cols + s.pad, outStride = s.cols + 2 * s.pad;
    std::vector<float> x = randomFloats(static_cast<size_t>(s.rows) * inStride, rng, -8.f, 8.f);
    auto dx = flare::rt::DeviceBuffer::fromHost(*ctx, x);
    flare::rt::DeviceBuffer dy(*ctx, static_cast<size_t>(s.rows) * outStride * sizeof(float));
    dy.fillBytes(0xFF);
    flare::rt::KernelArgs args;
    args.addPointer(dx).addPointer(dy).addI32(s.rows).addI32(s.cols).addI32(inStride).addI32(outStride);
    k.launch({static_cast<unsigned>((s.rows + 3) / 4)}, args);
    ctx->synchronize();
    std::vector<float> y = dy.toHost<float>(static_cast<size_t>(s.rows) * outStride);
    double worst = 0;
    int bad = 0;
    for (int r = 0; r < s.rows && bad < 5; ++r) {
      const float *row = &x[static_cast<size_t>(r) * inStride];
      double m = -INFINITY, l = 0;
      for (int c = 0; c < s.cols; ++c)
        m = std::max(m, static_cast<double>(row[c]));
      for (int c = 0; c < s.cols; ++c)
        l += std::exp(static_cast<double>(row[c]) - m);
      for (int c = 0; c < outStride; ++c) {
        float got = y[static_cast<size_t>(r) * outStride + c];
        if (c >= s.cols) {
          if (!isPoison(got) && bad++ < 5)
            ADD_FAILURE() << "row " << r << " column " << c << " is outside the view but was written";
          continue;
        }
        double ref = std::exp(static_cast<double>(row[c]) - m) / l;
        double err = std::fabs(got - ref);
        worst = std::max(worst, err / ref);
        if (!(err <= 2e-5 * ref + 1e-7) && bad++ < 5)
          ADD_FAILURE() << "y[" << r << ", " << c << "] = " << got << ", reference " << ref;
      }
    }
    std::printf("[ softmax  ] rows=%d cols=%d worst relative error %.3g\n", s.rows, s.cols, worst);
  }
}

TEST_F(TileKernels, KernelCacheServesTheSecondRequestFromMemoryAndDisk) {
  std::string src = readExample("tile/softmax.mlir");
  auto t0 = std::chrono::steady_clock::now();
  cache->getOrCompile(src, {}, "softmax.mlir");
  auto t1 = std::chrono::steady_clock::now();
  cache->getOrCompile(src, {}, "softmax.mlir");
  auto t2 = std::chrono::steady_clock::now();
  EXPECT_EQ(cache->misses(), 1u);
  EXPECT_EQ(cache->hits(), 1u);
  // A fresh cache object on the same directory finds the entry on disk.
  flare::rt::KernelCache second(*ctx, cacheDir.string());
  auto t3 = std::chrono::steady_clock::now();
  second.getOrCompile(src, {}, "softmax.mlir");
  auto t4 = std::chrono::steady_clock::now();
  EXPECT_EQ(second.misses(), 0u);
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("[ cache    ] cold compile+load %.1f ms, memory hit %.3f ms, disk hit+load %.1f ms\n", ms(t0, t1),
              ms(t1, t2), ms(t3, t4));
}

// An alias answers another request (here the same kernel asked for with an attention configuration,
// which a tile kernel ignores) with a module the cache has, in memory and on disk; it refuses no module and
// a module for another architecture.
TEST_F(TileKernels, KernelCacheAliasAnswersAnotherRequestWithoutCompiling) {
  std::string src = readExample("tile/softmax.mlir");
  flare::CompileOptions other;
  other.attentionConfig = "#attn.config<pair_instances>";
  std::shared_ptr<flare::rt::Module> module = cache->getOrCompile(src, {}, "softmax.mlir");
  cache->alias(src, other, "softmax.mlir", module);
  EXPECT_EQ(cache->getOrCompile(src, other, "softmax.mlir"), module);
  EXPECT_EQ(cache->misses(), 1u);
  flare::rt::KernelCache second(*ctx, cacheDir.string());
  second.getOrCompile(src, other, "softmax.mlir");
  EXPECT_EQ(second.misses(), 0u);
  flare::CompileOptions sm80;
  sm80.arch = "sm_80";
  try {
    cache->alias(src, sm80, "softmax.mlir", module);
    ADD_FAILURE() << "an alias across architectures was accepted";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot answer requests for sm_80"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cache->alias(src, other, "softmax.mlir", nullptr), flare::Error);
}

TEST_F(TileKernels, LaunchWithWrongArgumentsIsAClearError) {
  flare::rt::Kernel k = kernel("tile/vector_add.mlir", "vector_add");
  flare::rt::KernelArgs args;
  args.addI32(1);
  try {
    k.launch({1}, args);
    FAIL() << "expected flare::Error";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find("argument"), std::string::npos) << e.what();
  }
}

TEST_F(TileKernels, PersistentLaunchBeyondInt32InstancesIsAClearError) {
  // The grid of a persistent kernel reaches it as three i32 hidden parameters and its CTAs number
  // instances in i32: more than 2^31 - 1 of them is refused before anything is launched.
  std::string text = readExample("tile/vector_add.mlir");
  const std::string marker = "attributes {tile.kernel,";
  const size_t at = text.find(marker);
  ASSERT_NE(at, std::string::npos) << "vector_add.mlir has no kernel attributes to extend";
  text.insert(at + marker.size(), " tile.schedule = #tile.schedule<persistent = true>,");
  flare::CompileOptions options;
  options.arch = ctx->arch();
  flare::rt::Kernel k = cache->getOrCompile(text, options, "vector_add.mlir (persistent)")->kernel("vector_add");
  ASSERT_TRUE(k.info().persistent);
  const int n = 1000;
  auto x = randomFloats(n, rng, -1.f, 1.f);
  auto dx = flare::rt::DeviceBuffer::fromHost(*ctx, x);
  auto dout = poisoned(n * sizeof(float));
  flare::rt::KernelArgs args;
  args.addPointer(dx).addPointer(dx).addPointer(dout).addI32(n);
  try {
    k.launch({65536, 32768, 1}, args); // 2^31 instances
    FAIL() << "expected flare::Error";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find("at most 2^31 - 1 program instances"), std::string::npos) << e.what();
  }
  // Nothing ran: the output is still poisoned; and the kernel still launches with a valid grid.
  auto out = dout.toHost<float>(n);
  EXPECT_TRUE(isPoison(out[0]) && isPoison(out[n - 1]));
  k.launch({(n + 1023) / 1024}, args);
  ctx->synchronize();
  out = dout.toHost<float>(n);
  for (int i = 0; i < n; ++i)
    ASSERT_NEAR(out[i], 2.0 * x[i], 1e-6) << "out[" << i << "]";
}

} // namespace
