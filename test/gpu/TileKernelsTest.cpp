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
  for (int n : {1, 1000, 1025, 4097, 1000003}) {
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
  for (Shape s : {Shape{1, 1, 0}, Shape{5, 17, 3}, Shape{7, 1000, 0}, Shape{33, 513, 11}, Shape{1000, 1024, 0},
                  Shape{4097, 777, 5}}) {
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

// `tile.dot ... when %cond`: with the condition false the result is the accumulator, bit for bit (the
// MMAs are not issued: guarded wgmma on a register A, else computed and selected); with it true the
// product is added. Both forms of the wgmma path on sm_90a (A in registers from a previous dot's
// result, A in shared memory) and mma.sync on sm_80, against a float64 reference.
constexpr const char *kGuardedDot = R"mlir(
func.func @guarded_dot(%x: !tile.ptr<bf16>, %y: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %c: !tile.ptr<f32>,
                       %o1: !tile.ptr<f32>, %o2: !tile.ptr<f32>, %flag: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %xv = tile.make_view %x, [%c64, %c32], [%c32, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %yv = tile.make_view %y, [%c32, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %v, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o1v = tile.make_view %o1, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o2v = tile.make_view %o2, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %xt = tile.load %xv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %yt = tile.load %yv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
  %vt = tile.load %vv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %ct = tile.load %cv[%c0, %c0] : !tile.view<f32, 2> -> tensor<64x64xf32>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %w = arith.cmpi ne, %flag, %c0 : i32
  %s = tile.dot %xt, %yt, %z : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
  %d1 = tile.dot %p, %vt, %ct when %w : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %d2 = tile.dot %xt, %yt, %ct when %w : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d1, %o1v[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  tile.store %d2, %o2v[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
)mlir";

TEST_F(TileKernels, GuardedDotAddsTheProductOnlyWhenItsConditionHolds) {
  constexpr int kM = 64, kK = 32, kN = 64;
  std::vector<uint16_t> x = randomBF16(kM * kK, rng, -1.f, 1.f), y = randomBF16(kK * kN, rng, -1.f, 1.f),
                        v = randomBF16(kM * kN, rng, -1.f, 1.f);
  std::vector<float> c = randomFloats(kM * kN, rng, -4.f, 4.f);
  // The reference P: x y in float64, rounded to f32 (the accumulator) and then to bf16.
  std::vector<double> xy(kM * kN, 0.0), p(kM * kN);
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) {
      for (int kk = 0; kk < kK; ++kk)
        xy[i * kN + j] += static_cast<double>(fromBF16(x[i * kK + kk])) * fromBF16(y[kk * kN + j]);
      p[i * kN + j] = fromBF16(toBF16(static_cast<float>(xy[i * kN + j])));
    }
  for (const std::string &arch : archsToTest())
    for (int flag : {0, 1}) {
      SCOPED_TRACE(arch + ", when " + std::to_string(flag));
      flare::CompileOptions options;
      options.arch = arch;
      flare::rt::Kernel k = cache->getOrCompile(kGuardedDot, options, "guarded_dot")->kernel("guarded_dot");
      auto dx = flare::rt::DeviceBuffer::fromHost(*ctx, x), dy = flare::rt::DeviceBuffer::fromHost(*ctx, y);
      auto dv = flare::rt::DeviceBuffer::fromHost(*ctx, v), dc = flare::rt::DeviceBuffer::fromHost(*ctx, c);
      flare::rt::DeviceBuffer o1 = poisoned(kM * kN * sizeof(float)), o2 = poisoned(kM * kN * sizeof(float));
      flare::rt::KernelArgs args;
      args.addPointer(dx).addPointer(dy).addPointer(dv).addPointer(dc).addPointer(o1).addPointer(o2).addI32(flag);
      k.launch({1}, args);
      ctx->synchronize();
      std::vector<float> got1 = o1.toHost<float>(kM * kN), got2 = o2.toHost<float>(kM * kN);
      int bad = 0;
      for (int i = 0; i < kM; ++i)
        for (int j = 0; j < kN && bad < 5; ++j) {
          const int e = i * kN + j;
          double ref1 = c[e], ref2 = c[e], mag1 = 0, mag2 = 0;
          if (flag) {
            for (int kk = 0; kk < kN; ++kk) {
              double t = p[i * kN + kk] * fromBF16(v[kk * kN + j]);
              ref1 += t;
              mag1 += std::fabs(t);
            }
            ref2 += xy[e];
            for (int kk = 0; kk < kK; ++kk)
              mag2 += std::fabs(static_cast<double>(fromBF16(x[i * kK + kk])) * fromBF16(y[kk * kN + j]));
          }
          // Without the product the accumulator comes back exactly; with it, f32 sums (and P's bf16
          // rounding, one ulp either way where x y sits on a rounding boundary) bound the error.
          const double tol1 = flag ? 1e-5 * (mag1 + std::fabs(c[e])) + 8e-3 * mag1 / kN : 0.0;
          const double tol2 = flag ? 1e-5 * (mag2 + std::fabs(c[e])) : 0.0;
          if (!(std::fabs(got1[e] - ref1) <= tol1) && bad++ < 5)
            ADD_FAILURE() << "register-A product [" << i << ", " << j << "] = " << got1[e] << ", reference " << ref1;
          if (!(std::fabs(got2[e] - ref2) <= tol2) && bad++ < 5)
            ADD_FAILURE() << "product [" << i << ", " << j << "] = " << got2[e] << ", reference " << ref2;
        }
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

} // namespace
