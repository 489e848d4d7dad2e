//===- generation_loop.cpp - A toy serving loop: packed prefill, paged decode ---===//
//
// What a serving engine does with Flare, step by step, on random data:
//   1. prefill: the prompts of a batch, of different lengths, packed one after another ([total, H, D]
//      rows, FlashAttention's varlen layout) and attended causally in one call (cu_seqlens);
//   2. their keys and values appended into a paged KV cache (pages scattered over a pool in vLLM's
//      [num_pages, page_size, Hkv, D] layout) by flare::appendKV;
//   3. decoding: each step one new query, key and value per sequence; the key and value are
//      appended at the sequence's length, the lengths advance, and the query attends to its whole
//      cache through the page table (flare::attention with kvLens and pageTable; the keys are split
//      among CTAs when the batch cannot fill the GPU).
// Every step's output and log-sum-exp are checked against Flare's float64 reference on the keys the
// program keeps on the host. The exit status says whether every step matched.
//
//   generation_loop [steps] [page_size]
//===----------------------------------------------------------------------===//
#include "BF16.h"
#include "flare/Attention.h"
#include "flare/Error.h"
#include "flare/Reference/Attention.h"
#include "flare/Runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {
using flare_examples::fromBF16;
using flare_examples::toBF16;

/// Random bf16 values and their exact floats.
struct Random16 {
  std::mt19937 rng{7};
  std::uniform_real_distribution<float> dist{-1.5f, 1.5f};
  std::vector<uint16_t> make(size_t n, std::vector<float> &exact) {
    std::vector<uint16_t> bits(n);
    exact.resize(n);
    for (size_t i = 0; i < n; ++i)
      exact[i] = fromBF16(bits[i] = toBF16(dist(rng)));
    return bits;
  }
};

/// Compares a bf16 output [rows, D] and its LSE with the reference; returns the worst output error,
/// or -1 on a mismatch (NaN included).
double compare(const std::vector<uint16_t> &out, const std::vector<float> &lse,
               const flare::reference::AttentionResult &ref) {
  double worst = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(fromBF16(out[i]) - ref.out[i]);
    if (!(err <= 2e-2 + 1e-2 * std::fabs(ref.out[i])))
      return -1;
    worst = std::max(worst, err);
  }
  for (size_t i = 0; i < lse.size(); ++i)
    if (!(std::fabs(lse[i] - ref.lse[i]) <= 2e-3 + 1e-4 * std::fabs(ref.lse[i])))
      return -1;
  return worst;
}
} // namespace

int main(int argc, char **argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 8, pageSize = argc > 2 ? std::atoi(argv[2]) : 64;
  const std::vector<int> prompts = {300, 1, 77, 513};
  const int b = static_cast<int>(prompts.size()), hq = 8, hkv = 2, d = 128;
  using flare::DType;
  using flare::TensorView;
  try {
    flare::rt::Context ctx(0);
    flare::rt::KernelCache cache(ctx);
    Random16 random;

    // The host's copy of every sequence's keys and values: [B, Hkv, capacity, D].
    const int capacity = *std::max_element(prompts.begin(), prompts.end()) + steps;
    std::vector<float> keys(size_t(b) * hkv * capacity * d), values(keys.size());
    auto keep = [&](std::vector<float> &into, int seq, int h, int pos, const float *row) {
      std::copy(row, row + d, into.begin() + ((size_t(seq) * hkv + h) * capacity + pos) * d);
    };

    // 1. Prefill: the prompts packed, [1, H, total, D] over [total, H, D] memory.
    std::vector<int> cu = {0};
    for (int n : prompts)
      cu.push_back(cu.back() + n);
    const int total = cu.back();
    std::vector<float> qf, kf, vf;
    auto q = random.make(size_t(total) * hq * d, qf), k = random.make(size_t(total) * hkv * d, kf),
         v = random.make(size_t(total) * hkv * d, vf);
    auto dq = flare::rt::DeviceBuffer::fromHost(ctx, q), dk = flare::rt::DeviceBuffer::fromHost(ctx, k),
         dv = flare::rt::DeviceBuffer::fromHost(ctx, v);
    std::vector<int32_t> cu32(cu.begin(), cu.end());
    auto dcu = flare::rt::DeviceBuffer::fromHost(ctx, cu32);
    flare::rt::DeviceBuffer dout(ctx, q.size() * 2), dlse(ctx, size_t(hq) * total * 4);
    auto packed = [&](uint64_t data, int heads) {
      return TensorView{data, DType::BF16, {1, heads, total, d}, {int64_t(total) * heads * d, d, int64_t(heads) * d, 1}};
    };
    flare::AttentionOptions prefill;
    prefill.causal = true;
    prefill.lse = TensorView{dlse.ptr(), DType::F32, {1, hq, total}, {}};
    prefill.cuSeqlensQ = prefill.cuSeqlensK = TensorView{dcu.ptr(), DType::I32, {b + 1}, {}};
    prefill.maxSeqlenQ = prefill.maxSeqlenK = *std::max_element(prompts.begin(), prompts.end());
    flare::attention(cache, packed(dq.ptr(), hq), packed(dk.ptr(), hkv), packed(dv.ptr(), hkv),
                     packed(dout.ptr(), hq), prefill);
    {
      // The reference reads [1, H, total, D] dense: the rows by head.
      auto byHead = [&](const std::vector<float> &rows, int heads) {
        std::vector<float> dense(rows.size());
        for (int t = 0; t < total; ++t)
          for (int h = 0; h < heads; ++h)
            std::copy_n(&rows[(size_t(t) * heads + h) * d], d, &dense[(size_t(h) * total + t) * d]);
        return dense;
      };
      std::vector<float> qh = byHead(qf, hq), kh = byHead(kf, hkv), vh = byHead(vf, hkv);
      flare::reference::AttentionProblem p{b, hq, hkv, total, total, d, qh.data(), kh.data(), vh.data(), {}, {}, cu, cu};
      const std::string module =
          flare::planAttention(packed(dq.ptr(), hq), packed(dk.ptr(), hkv), packed(dv.ptr(), hkv),
                               packed(dout.ptr(), hq), prefill)
              .module;
      flare::reference::AttentionResult ref = flare::reference::attentionReference(module, p);
      std::vector<uint16_t> got = dout.toHost<uint16_t>(q.size()), gotByHead(got.size());
      for (int t = 0; t < total; ++t)
        for (int h = 0; h < hq; ++h)
          std::copy_n(&got[(size_t(t) * hq + h) * d], d, &gotByHead[(size_t(h) * total + t) * d]);
      const double worst = compare(gotByHead, dlse.toHost<float>(size_t(hq) * total), ref);
      std::printf("generation_loop: %s, prefill of %d prompts (%d tokens, causal, packed): max |O - ref| %.4f: %s\n",
                  ctx.name().c_str(), b, total, worst, worst >= 0 ? "OK" : "MISMATCH");
      if (worst < 0)
        return 1;
      for (int seq = 0; seq < b; ++seq)
        for (int h = 0; h < hkv; ++h)
          for (int i = 0; i < prompts[seq]; ++i) {
            keep(keys, seq, h, i, &kf[(size_t(cu[seq] + i) * hkv + h) * d]);
            keep(values, seq, h, i, &vf[(size_t(cu[seq] + i) * hkv + h) * d]);
          }
    }

    // 2. The paged cache: each sequence's pages scattered over a shuffled pool.
    const int maxPages = (capacity + pageSize - 1) / pageSize, numPages = b * maxPages;
    std::vector<int32_t> table(size_t(b) * maxPages);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), random.rng);
    auto dtable = flare::rt::DeviceBuffer::fromHost(ctx, table);
    flare::rt::DeviceBuffer dkc(ctx, size_t(numPages) * pageSize * hkv * d * 2), dvc(ctx, dkc.bytes());
    dkc.fillBytes(0); // a cache allocated with zeros (rows past a length must hold finite values)
    dvc.fillBytes(0);
    const std::vector<int64_t> pagesShape = {numPages, hkv, pageSize, d},
                               pagesStrides = {int64_t(pageSize) * hkv * d, d, int64_t(hkv) * d, 1};
    TensorView kCache{dkc.ptr(), DType::BF16, pagesShape, pagesStrides}, vCache{dvc.ptr(), DType::BF16, pagesShape, pagesStrides};
    std::vector<int32_t> lens(b, 0);
    auto dlens = flare::rt::DeviceBuffer::fromHost(ctx, lens);
    for (int seq = 0; seq < b; ++seq) {
      // The prompt's rows of the packed K and V, appended at position 0 of sequence `seq`.
      auto rows = [&](uint64_t data) {
        return TensorView{data + uint64_t(cu[seq]) * hkv * d * 2, DType::BF16, {1, hkv, prompts[seq], d},
                          {int64_t(total) * hkv * d, d, int64_t(hkv) * d, 1}};
      };
      flare::appendKV(cache, rows(dk.ptr()), rows(dv.ptr()), kCache, vCache,
                      TensorView{dlens.ptr() + uint64_t(seq) * 4, DType::I32, {1}, {}},
                      TensorView{dtable.ptr() + uint64_t(seq) * maxPages * 4, DType::I32, {1, maxPages}, {}});
    }
    lens.assign(prompts.begin(), prompts.end());

    // 3. Decoding.
    auto put = [](flare::rt::DeviceBuffer &buffer, const auto &host) {
      buffer.upload(host.data(), host.size() * sizeof(host[0]));
    };
    bool ok = true;
    flare::rt::DeviceBuffer dq1(ctx, size_t(b) * hq * d * 2), dk1(ctx, size_t(b) * hkv * d * 2),
        dv1(ctx, size_t(b) * hkv * d * 2), dout1(ctx, size_t(b) * hq * d * 2), dlse1(ctx, size_t(b) * hq * 4);
    TensorView q1{dq1.ptr(), DType::BF16, {b, hq, 1, d}, {}}, k1{dk1.ptr(), DType::BF16, {b, hkv, 1, d}, {}},
        v1{dv1.ptr(), DType::BF16, {b, hkv, 1, d}, {}}, out1{dout1.ptr(), DType::BF16, {b, hq, 1, d}, {}};
    flare::AttentionOptions decode;
    decode.causal = true;
    decode.alignment = flare::CausalAlignment::BottomRight;
    decode.lse = TensorView{dlse1.ptr(), DType::F32, {b, hq, 1}, {}};
    decode.kvLens = TensorView{dlens.ptr(), DType::I32, {b}, {}};
    decode.pageTable = TensorView{dtable.ptr(), DType::I32, {b, maxPages}, {}};
    for (int step = 0; step < steps; ++step) {
      std::vector<float> qs, ks, vs;
      put(dq1, random.make(size_t(b) * hq * d, qs));
      put(dk1, random.make(size_t(b) * hkv * d, ks));
      put(dv1, random.make(size_t(b) * hkv * d, vs));
      put(dlens, lens);
      flare::appendKV(cache, k1, v1, kCache, vCache, decode.kvLens, decode.pageTable);
      for (int seq = 0; seq < b; ++seq) {
        for (int h = 0; h < hkv; ++h) {
          keep(keys, seq, h, lens[seq], &ks[(size_t(seq) * hkv + h) * d]);
          keep(values, seq, h, lens[seq], &vs[(size_t(seq) * hkv + h) * d]);
        }
        ++lens[seq];
      }
      put(dlens, lens); // after the append (in order on the default stream): the new keys are part of the cache
      dout1.fillBytes(0xFF);
      flare::attention(cache, q1, kCache, vCache, out1, decode);

      flare::reference::AttentionProblem p{b, hq, hkv, 1, capacity, d, qs.data(), keys.data(), values.data(),
                                           {}, lens, {}, {}};
      const std::string module = flare::planAttention(q1, kCache, vCache, out1, decode).module;
      flare::reference::AttentionResult ref = flare::reference::attentionReference(module, p);
      const double worst = compare(dout1.toHost<uint16_t>(size_t(b) * hq * d), dlse1.toHost<float>(size_t(b) * hq), ref);
      std::printf("generation_loop: decode step %d (keys %d..%d per sequence, pages of %d): max |O - ref| %.4f: %s\n",
                  step, *std::min_element(lens.begin(), lens.end()), *std::max_element(lens.begin(), lens.end()),
                  pageSize, worst, worst >= 0 ? "OK" : "MISMATCH");
      ok &= worst >= 0;
    }
    return ok ? 0 : 1;
  } catch (const flare::Error &e) {
    std::fprintf(stderr, "generation_loop: %s\n", e.what());
    return 1;
  }
}
