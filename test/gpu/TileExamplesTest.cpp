//===- TileExamplesTest.cpp - The tile examples on the GPU vs float64 ------===//
//
// Layer norm, matmul (f32 and bf16 out), column sums with atomics, naive attention and the hand-written
// flash attention (head dims 64 and 128, causal or not, with LSE): each compiled by Flare, run on
// fresh random inputs with poisoned outputs, at sizes that are not multiples of the tiles, and
// compared with a float64 reference computed here from the same (bf16-rounded) inputs.
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace {

using namespace flare::test;
using TileExamples = GpuTest;

unsigned ceilDiv(int64_t a, int64_t b) { return static_cast<unsigned>((a + b - 1) / b); }

TEST_F(TileExamples, LayerNormMatchesFloat64Reference) {
  flare::rt::Kernel k = kernel("tile/layer_norm.mlir", "layer_norm");
  struct Shape { int rows, cols, pad; };
  for (Shape s : pickShapes<Shape>({{1, 1, 0}, {7, 100, 3}, {1000, 777, 0}, {33, 1024, 5}}, {{1, 1, 0}, {7, 100, 3}})) {
    SCOPED_TRACE("rows = " + std::to_string(s.rows) + ", cols = " + std::to_string(s.cols));
    int stride = s.cols + s.pad;
    const float eps = 1e-5f;
    auto x = randomFloats(static_cast<size_t>(s.rows) * stride, rng, -3.f, 5.f);
    auto w = randomFloats(s.cols, rng, 0.5f, 1.5f), bias = randomFloats(s.cols, rng, -1.f, 1.f);
    auto dx = flare::rt::DeviceBuffer::fromHost(*ctx, x);
    auto dw = flare::rt::DeviceBuffer::fromHost(*ctx, w);
    auto db = flare::rt::DeviceBuffer::fromHost(*ctx, bias);
    auto dy = poisoned(x.size() * sizeof(float));
    flare::rt::KernelArgs args;
    args.addPointer(dx).addPointer(dw).addPointer(db).addPointer(dy).addI32(s.rows).addI32(s.cols).addI32(stride).addF32(eps);
    k.launch({ceilDiv(s.rows, 4)}, args);
    auto y = dy.toHost<float>(x.size());
    int bad = 0;
    for (int r = 0; r < s.rows; ++r) {
      double mean = 0, var = 0;
      for (int c = 0; c < s.cols; ++c)
        mean += x[r * stride + c];
      mean /= s.cols;
      for (int c = 0; c < s.cols; ++c)
        var += (x[r * stride + c] - mean) * (x[r * stride + c] - mean);
      var /= s.cols;
      for (int c = 0; c < stride; ++c) {
        float got = y[r * stride + c];
        if (c >= s.cols) {
          if (!isPoison(got) && bad++ < 5)
            ADD_FAILURE() << "padding at row " << r << " column " << c << " was written";
          continue;
        }
        double ref = (x[r * stride + c] - mean) / std::sqrt(var + eps) * w[c] + bias[c];
        if (!(std::fabs(got - ref) <= 1e-4 * std::fabs(ref) + 1e-4) && bad++ < 5)
          ADD_FAILURE() << "y[" << r << ", " << c << "] = " << got << ", reference " << ref;
      }
    }
  }
}

TEST_F(TileExamples, MatmulMatchesFloat64Reference) {
  struct Shape { int m, n, k; bool pitched = false; }; // pitched: rows of A and B padded to 8 elements
  // persistent: the example's first kernel compiled with `#tile.schedule<persistent = true>` (each CTA
  // runs program instances in turn, its K loop's pipeline set up anew for each; the Hopper matmul's
  // grouped program order reads the grid through tile.num_programs), at sm_90a and sm_80 alike.
  struct Variant { const char *file, *name; bool bf16Out; int blockM; bool persistent = false; };
  std::vector<Variant> variants = {{"tile/matmul.mlir", "matmul", false, 128},
                                   {"tile/matmul.mlir", "matmul_bf16", true, 128},
                                   {"tile/matmul.mlir", "matmul", false, 128, /*persistent=*/true}};
  if (ctx->arch() == "sm_90a") {
    variants.push_back({"tile/matmul_hopper.mlir", "matmul_bf16", true, 128});
    variants.push_back({"tile/matmul_hopper.mlir", "matmul_bf16", true, 128, /*persistent=*/true});
  }
  for (const std::string &arch : archsToTest())
  for (const Variant &variant : variants) {
    if (arch != ctx->arch() && std::string(variant.file) == "tile/matmul_hopper.mlir")
      continue; // sm_90a only
    const bool bf16Out = variant.bf16Out;
    flare::rt::Kernel kern = kernel(variant.file, variant.name, arch);
    if (variant.persistent) {
      std::string text = readExample(variant.file);
      const std::string marker = "attributes {tile.kernel,";
      const size_t at = text.find(marker);
      ASSERT_NE(at, std::string::npos) << variant.file << " has no kernel attributes to extend";
      text.insert(at + marker.size(), " tile.schedule = #tile.schedule<persistent = true>,");
      flare::CompileOptions options;
      options.arch = arch;
      kern = cache->getOrCompile(text, options, std::string(variant.file) + " (persistent)")->kernel(variant.name);
      ASSERT_TRUE(kern.info().persistent);
    }
    // The last shape has 297 program instances of 128 x 256 (561 of 128 x 128): a persistent
    // kernel's CTAs run pairs of them.
    for (Shape s : pickShapes<Shape>({{1, 1, 1}, {100, 200, 50}, {257, 129, 1000}, {512, 512, 512}, {1000, 700, 333},
                                      {100, 200, 50, true}, {257, 129, 1000, true}, {1000, 700, 333, true},
                                      {4100, 2104, 72}},
                                     {{1, 1, 1}, {100, 200, 50}, {100, 200, 50, true}, {257, 129, 200}})) {
      SCOPED_TRACE(arch + " " + variant.file + " " + variant.name + (variant.persistent ? " (persistent)" : "") +
                   ", M = " + std::to_string(s.m) + ", N = " + std::to_string(s.n) + ", K = " + std::to_string(s.k) +
                   (s.pitched ? ", pitched rows" : ""));
      auto pitch = [&](int cols) { return s.pitched ? (cols + 7) / 8 * 8 : cols; };
      // C rows padded: the padding must stay poisoned (pitched: 16-byte aligned rows).
      const int lda = pitch(s.k), ldb = pitch(s.n), ldc = s.pitched ? pitch(s.n) + 8 : s.n + 3;
      auto a = randomBF16(static_cast<size_t>(s.m) * lda, rng, -1.f, 1.f);
      auto b = randomBF16(static_cast<size_t>(s.k) * ldb, rng, -1.f, 1.f);
      auto da = flare::rt::DeviceBuffer::fromHost(*ctx, a);
      auto db = flare::rt::DeviceBuffer::fromHost(*ctx, b);
      size_t elemBytes = bf16Out ? 2 : 4;
      auto dc = poisoned(static_cast<size_t>(s.m) * ldc * elemBytes);
      flare::rt::KernelArgs args;
      args.addPointer(da).addPointer(db).addPointer(dc).addI32(s.m).addI32(s.n).addI32(s.k).addI32(lda).addI32(ldb).addI32(ldc);
      // The CTA tile: the kernel's launch hints (flare.block_m / block_n) where it gives them.
      const int blockM = static_cast<int>(kern.info().hint("block_m", variant.blockM));
      const int blockN = static_cast<int>(kern.info().hint("block_n", 128));
      // The Hopper example reads A and B through TMA when their rows are 16-byte aligned, else it takes its
      // element-by-element fallback (C, whose width N is an argument, is stored directly: TMA clips
      // columns only by the 16-byte chunk).
      if (!kern.info().tensorMaps.empty()) {
        bool aligned = true;
        for (const flare::TensorMapInfo &map : kern.info().tensorMaps)
          aligned = aligned && std::array<int, 3>{lda, ldb, ldc}.at(map.pointerArg) % 8 == 0;
        std::string why;
        EXPECT_EQ(kern.usesTensorMaps(args, &why), aligned) << why;
      } else {
        EXPECT_TRUE(arch != "sm_90a" || std::string(variant.file) != "tile/matmul_hopper.mlir")
            << "the Hopper matmul has no tensor maps";
      }
      kern.launch({ceilDiv(s.m, blockM), ceilDiv(s.n, blockN)}, args);
      std::vector<float> c(static_cast<size_t>(s.m) * ldc);
      std::vector<bool> poison(c.size());
      if (bf16Out) {
        auto raw = dc.toHost<uint16_t>(c.size());
        for (size_t i = 0; i < c.size(); ++i) {
          c[i] = fromBF16(raw[i]);
          poison[i] = isPoison(raw[i]);
        }
      } else {
        c = dc.toHost<float>(c.size());
        for (size_t i = 0; i < c.size(); ++i)
          poison[i] = isPoison(c[i]);
      }
      int bad = 0;
      for (int i = 0; i < s.m && bad < 5; ++i)
        for (int j = 0; j < ldc && bad < 5; ++j) {
          size_t at = static_cast<size_t>(i) * ldc + j;
          if (j >= s.n) {
            if (!poison[at] && bad++ < 5)
              ADD_FAILURE() << "padding C[" << i << ", " << j << "] was written";
            continue;
          }
          double ref = 0, mag = 0;
          for (int kk = 0; kk < s.k; ++kk) {
            double p = static_cast<double>(fromBF16(a[i * lda + kk])) * fromBF16(b[kk * ldb + j]);
            ref += p;
            mag += std::fabs(p);
          }
          // f32 accumulation: about K ulps of the magnitude; bf16 output adds half an ulp of bf16.
          double tol = 1e-5 * mag + 1e-6 + (bf16Out ? std::fabs(ref) / 256 : 0);
          if (!(std::fabs(c[at] - ref) <= tol) && bad++ < 5)
            ADD_FAILURE() << "C[" << i << ", " << j << "] = " << c[at] << ", reference " << ref;
        }
    }
  }
}

TEST_F(TileExamples, ColumnSumWithAtomicsMatchesFloat64Reference) {
  flare::rt::Kernel k = kernel("tile/column_sum.mlir", "column_sum");
  struct Shape { int rows, cols; };
  for (Shape s : pickShapes<Shape>({{1, 1}, {63, 130}, {1000, 1000}}, {{1, 1}, {63, 130}})) {
    SCOPED_TRACE("rows = " + std::to_string(s.rows) + ", cols = " + std::to_string(s.cols));
    auto x = randomFloats(static_cast<size_t>(s.rows) * s.cols, rng, -1.f, 1.f);
    auto dx = flare::rt::DeviceBuffer::fromHost(*ctx, x);
    flare::rt::DeviceBuffer dout(*ctx, (s.cols + 1) * sizeof(float));
    dout.fillBytes(0);
    // One element past the end holds poison: atomics outside the view must not touch it.
    float poison;
    std::memset(&poison, kPoisonByte, 4);
    std::vector<float> init(s.cols + 1, 0.f);
    init[s.cols] = poison;
    dout.upload(init.data(), init.size() * sizeof(float));
    flare::rt::KernelArgs args;
    args.addPointer(dx).addPointer(dout).addI32(s.rows).addI32(s.cols).addI32(s.cols);
    k.launch({ceilDiv(s.rows, 64), ceilDiv(s.cols, 128)}, args);
    auto out = dout.toHost<float>(s.cols + 1);
    for (int c = 0; c < s.cols; ++c) {
      double ref = 0, mag = 0;
      for (int r = 0; r < s.rows; ++r) {
        ref += x[static_cast<size_t>(r) * s.cols + c];
        mag += std::fabs(x[static_cast<size_t>(r) * s.cols + c]);
      }
      ASSERT_NEAR(out[c], ref, 1e-5 * mag + 1e-6) << "column " << c;
    }
    EXPECT_TRUE(isPoison(out[s.cols])) << "an atomic add went past the view";
  }
}

// Float64 attention on bf16 inputs laid out [BH, S, D]: O and the natural-log LSE per row.
void referenceAttention(const std::vector<uint16_t> &q, const std::vector<uint16_t> &k, const std::vector<uint16_t> &v,
                        int bh, int sq, int skv, int d, double scale, bool causal, std::vector<double> &o,
                        std::vector<double> &lse) {
  o.assign(static_cast<size_t>(bh) * sq * d, 0.0);
  lse.assign(static_cast<size_t>(bh) * sq, 0.0);
  std::vector<double> s(skv);
  for (int h = 0; h < bh; ++h)
    for (int i = 0; i < sq; ++i) {
      double m = -INFINITY;
      for (int j = 0; j < skv; ++j) {
        double dot = 0;
        for (int c = 0; c < d; ++c)
          dot += static_cast<double>(fromBF16(q[(static_cast<size_t>(h) * sq + i) * d + c])) *
                 fromBF16(k[(static_cast<size_t>(h) * skv + j) * d + c]);
        s[j] = (causal && j > i) ? -INFINITY : dot * scale;
        m = std::max(m, s[j]);
      }
      double l = 0;
      for (int j = 0; j < skv; ++j)
        l += std::exp(s[j] - m);
      lse[static_cast<size_t>(h) * sq + i] = m + std::log(l);
      for (int j = 0; j < skv; ++j) {
        double p = std::exp(s[j] - m) / l;
        if (p == 0)
          continue;
        for (int c = 0; c < d; ++c)
          o[(static_cast<size_t>(h) * sq + i) * d + c] += p * fromBF16(v[(static_cast<size_t>(h) * skv + j) * d + c]);
      }
    }
}

struct AttnShape { int bh, sq, skv; };
std::vector<AttnShape> attnShapes() {
  return pickShapes<AttnShape>({{2, 1, 1}, {3, 17, 17}, {2, 64, 300}, {2, 300, 64}, {1, 1000, 1000}, {1, 1025, 777}},
                               {{2, 1, 1}, {3, 17, 17}, {2, 64, 300}});
}

// bf16 attention: P is rounded to bf16 before P V, so allow a few bf16 ulps of the output scale.
void expectAttentionClose(const std::vector<uint16_t> &got, const std::vector<double> &ref, const std::string &what) {
  int bad = 0;
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double g = fromBF16(got[i]), err = std::fabs(g - ref[i]);
    worst = std::max(worst, err);
    if ((std::isnan(g) || err > 1e-2 + 1e-2 * std::fabs(ref[i])) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << g << ", reference " << ref[i];
  }
  std::printf("[ %-8s ] worst absolute error %.3g\n", what.c_str(), worst);
}

TEST_F(TileExamples, NaiveAttentionMatchesFloat64Reference) {
  flare::rt::Kernel scores = kernel("tile/naive_attention.mlir", "naive_scores");
  flare::rt::Kernel softmax = kernel("tile/naive_attention.mlir", "naive_softmax");
  flare::rt::Kernel pv = kernel("tile/naive_attention.mlir", "naive_pv");
  const int d = 64;
  for (AttnShape s : attnShapes()) {
    SCOPED_TRACE("BH = " + std::to_string(s.bh) + ", Sq = " + std::to_string(s.sq) + ", Skv = " + std::to_string(s.skv));
    auto q = randomBF16(static_cast<size_t>(s.bh) * s.sq * d, rng, -2.f, 2.f);
    auto k = randomBF16(static_cast<size_t>(s.bh) * s.skv * d, rng, -2.f, 2.f);
    auto v = randomBF16(static_cast<size_t>(s.bh) * s.skv * d, rng, -2.f, 2.f);
    auto dq = flare::rt::DeviceBuffer::fromHost(*ctx, q), dk = flare::rt::DeviceBuffer::fromHost(*ctx, k),
         dv = flare::rt::DeviceBuffer::fromHost(*ctx, v);
    size_t sElems = static_cast<size_t>(s.bh) * s.sq * s.skv;
    auto ds = poisoned(sElems * 4), dp = poisoned(sElems * 2), dout = poisoned(q.size() * 2);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    flare::rt::KernelArgs a1, a2, a3;
    a1.addPointer(dq).addPointer(dk).addPointer(ds).addI32(s.sq).addI32(s.skv).addF32(static_cast<float>(scale));
    scores.launch({ceilDiv(s.sq, 64), ceilDiv(s.skv, 64), static_cast<unsigned>(s.bh)}, a1);
    a2.addPointer(ds).addPointer(dp).addI32(s.sq).addI32(s.skv);
    softmax.launch({static_cast<unsigned>(s.sq), static_cast<unsigned>(s.bh)}, a2);
    a3.addPointer(dp).addPointer(dv).addPointer(dout).addI32(s.sq).addI32(s.skv);
    pv.launch({ceilDiv(s.sq, 64), static_cast<unsigned>(s.bh)}, a3);
    std::vector<double> o, lse;
    referenceAttention(q, k, v, s.bh, s.sq, s.skv, d, scale, false, o, lse);
    expectAttentionClose(dout.toHost<uint16_t>(q.size()), o, "naive O");
  }
}

TEST_F(TileExamples, FlashAttentionMatchesFloat64Reference) {
  constexpr double kLog2E = 1.4426950408889634;
  for (const std::string &arch : archsToTest())
  for (int d : {64, 128}) {
    flare::rt::Kernel fa = kernel("tile/flash_attention.mlir", "flash_fwd_d" + std::to_string(d), arch);
    const int bm = d == 64 ? 64 : 128;
    for (bool causal : {false, true})
      for (AttnShape s : attnShapes()) {
        SCOPED_TRACE(arch + ", D = " + std::to_string(d) + (causal ? ", causal" : "") + ", BH = " + std::to_string(s.bh) +
                     ", Sq = " + std::to_string(s.sq) + ", Skv = " + std::to_string(s.skv));
        auto q = randomBF16(static_cast<size_t>(s.bh) * s.sq * d, rng, -2.f, 2.f);
        auto k = randomBF16(static_cast<size_t>(s.bh) * s.skv * d, rng, -2.f, 2.f);
        auto v = randomBF16(static_cast<size_t>(s.bh) * s.skv * d, rng, -2.f, 2.f);
        auto dq = flare::rt::DeviceBuffer::fromHost(*ctx, q), dk = flare::rt::DeviceBuffer::fromHost(*ctx, k),
             dv = flare::rt::DeviceBuffer::fromHost(*ctx, v);
        auto dout = poisoned(q.size() * 2), dlse = poisoned(static_cast<size_t>(s.bh) * s.sq * 4);
        const double scale = 1.0 / std::sqrt(static_cast<double>(d));
        flare::rt::KernelArgs args;
        args.addPointer(dq).addPointer(dk).addPointer(dv).addPointer(dout).addPointer(dlse).addI32(s.sq).addI32(s.skv)
            .addF32(static_cast<float>(scale * kLog2E)).addI32(causal ? 1 : 0);
        fa.launch({ceilDiv(s.sq, bm), static_cast<unsigned>(s.bh)}, args);
        std::vector<double> o, lse;
        referenceAttention(q, k, v, s.bh, s.sq, s.skv, d, scale, causal, o, lse);
        expectAttentionClose(dout.toHost<uint16_t>(q.size()), o, "flash O");
        auto gotLse = dlse.toHost<float>(lse.size());
        for (size_t i = 0; i < lse.size(); ++i)
          ASSERT_NEAR(gotLse[i], lse[i], 1e-3 + 1e-5 * std::fabs(lse[i])) << "LSE row " << i;
      }
  }
}

} // namespace
