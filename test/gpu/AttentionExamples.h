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
/// position (random runs).
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
  }
}

} // namespace flare::test

#endif // FLARE_TEST_GPU_ATTENTIONEXAMPLES_H
