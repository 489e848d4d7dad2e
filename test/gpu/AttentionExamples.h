//===- AttentionExamples.h - What the attention GPU tests share -*- C++ -*-===//
//
// The sizes of one attention problem and the aux tensors the examples of examples/attention read
// (ALiBi slopes, document ids), for the forward (AttentionTest.cpp) and backward
// (AttentionBackwardTest.cpp) GPU tests.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TEST_GPU_ATTENTIONEXAMPLES_H
#define FLARE_TEST_GPU_ATTENTIONEXAMPLES_H

#include "GpuTestUtil.h"

#include "flare/Attention.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace flare::test {

/// The sizes of one attention problem: batch, query and KV heads, query and key lengths.
struct AttentionShape {
  int b, hq, hkv, sq, skv;
};
inline std::string describe(const AttentionShape &s) {
  return "B=" + std::to_string(s.b) + " Hq=" + std::to_string(s.hq) + " Hkv=" + std::to_string(s.hkv) +
         " Sq=" + std::to_string(s.sq) + " Skv=" + std::to_string(s.skv);
}

/// A random document id per position: runs of 1 to 300 equal ids.
inline std::vector<int32_t> documentIds(int n, std::mt19937 &rng) {
  std::vector<int32_t> ids(n);
  std::uniform_int_distribution<int> len(1, 300);
  int doc = 0;
  for (int i = 0; i < n;) {
    int run = len(rng);
    for (int j = 0; j < run && i < n; ++j)
      ids[i++] = doc;
    ++doc;
  }
  return ids;
}

inline std::vector<float> alibiSlopes(int heads) {
  std::vector<float> s(heads);
  for (int h = 0; h < heads; ++h)
    s[h] = std::exp2(-8.0f * (h + 1) / heads);
  return s;
}

/// An aux tensor (i32 or f32) in device memory.
inline rt::DeviceBuffer uploadAux(rt::Context &ctx, const std::vector<double> &values, DType dtype) {
  if (dtype == DType::I32)
    return rt::DeviceBuffer::fromHost(ctx, std::vector<int32_t>(values.begin(), values.end()));
  return rt::DeviceBuffer::fromHost(ctx, std::vector<float>(values.begin(), values.end()));
}

/// The aux tensors an example reads: ALiBi's slope per query head, the document example's id per
/// position (random runs), the block-sparse example's table of kept blocks.
inline void exampleAux(const std::string &file, const AttentionShape &s, std::vector<std::vector<double>> &aux,
                       std::vector<DType> &auxTypes, std::mt19937 &rng) {
  if (file == "alibi") {
    auto slopes = alibiSlopes(s.hq);
    aux.push_back(std::vector<double>(slopes.begin(), slopes.end()));
    auxTypes.push_back(DType::F32);
  } else if (file == "document") {
    auto ids = documentIds(std::max(s.sq, s.skv), rng);
    aux.push_back(std::vector<double>(ids.begin(), ids.end()));
    auxTypes.push_back(DType::I32);
  } else if (file == "block_sparse") { // a third of the 128 x 128 blocks kept
    std::bernoulli_distribution kept(1.0 / 3);
    std::vector<double> table(size_t((s.sq + 127) / 128) * ((s.skv + 127) / 128));
    for (double &x : table)
      x = kept(rng) ? 1 : 0;
    aux.push_back(std::move(table));
    auxTypes.push_back(DType::I32);
  }
}

/// bf16 gradients against float64: every element within 2% of the tensor's largest magnitude (taken as
/// at least 5e-3: a gradient that is exactly zero, as with one key, comes out as rounding noise) plus 3%
/// of its own (P and dS are rounded to bf16 before their products, as in every FlashAttention), never
/// NaN, never the poison.
inline void expectGradient(const std::vector<uint16_t> &got, const std::vector<double> &ref, const char *what,
                    DType dtype = DType::BF16) {
  ASSERT_EQ(got.size(), ref.size());
  double scale = 0, worst = 0;
  for (double r : ref)
    scale = std::max(scale, std::fabs(r));
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = decode16(got[i], dtype), err = std::fabs(g - ref[i]);
    worst = std::max(worst, err);
    if ((std::isnan(g) || isPoison(got[i]) || err > 2e-2 * std::max(scale, 5e-3) + 3e-2 * std::fabs(ref[i])) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "] = " << g << ", reference " << ref[i] << " (largest |ref| " << scale << ")";
  }
  std::printf("      %s: worst |error| %.3g of largest |ref| %.3g\n", what, worst, scale);
}

} // namespace flare::test

#endif // FLARE_TEST_GPU_ATTENTIONEXAMPLES_H
