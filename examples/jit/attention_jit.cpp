//===- attention_jit.cpp - Call flare::attention from C++ and check it -----===//
//
// What a user program does to run FlashAttention with Flare: describe the device tensors (pointer,
// dtype, shape, strides), pick options, call flare::attention. Flare writes the attn.attention IR for
// those options, generates the fused kernel, compiles it once (kernel cache in memory and on disk)
// and launches it.
//
//   attention_jit [batch] [heads_q] [heads_kv] [seq_q] [seq_kv]
//
// Causal GQA attention in bf16 with head dim 128; the output and the log-sum-exp are checked against
// Flare's float64 reference, which evaluates the same IR. The exit status says whether they matched.
//===----------------------------------------------------------------------===//
#include "BF16.h"
#include "flare/Attention.h"
#include "flare/Error.h"
#include "flare/Reference/Attention.h"
#include "flare/Runtime/Runtime.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace {
using flare_examples::fromBF16;
using flare_examples::toBF16;
} // namespace

int main(int argc, char **argv) {
  auto arg = [&](int i, int fallback) { return argc > i ? std::atoi(argv[i]) : fallback; };
  const int b = arg(1, 2), hq = arg(2, 8), hkv = arg(3, 2), sq = arg(4, 1000), skv = arg(5, 1000), d = 128;
  try {
    flare::rt::Context ctx(0);
    flare::rt::KernelCache cache(ctx);

    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
    auto make = [&](size_t n, std::vector<float> &exact) {
      std::vector<uint16_t> bits(n);
      exact.resize(n);
      for (size_t i = 0; i < n; ++i)
        exact[i] = fromBF16(bits[i] = toBF16(dist(rng)));
      return bits;
    };
    std::vector<float> qf, kf, vf;
    auto q = make(size_t(b) * hq * sq * d, qf), k = make(size_t(b) * hkv * skv * d, kf),
         v = make(size_t(b) * hkv * skv * d, vf);
    auto dq = flare::rt::DeviceBuffer::fromHost(ctx, q), dk = flare::rt::DeviceBuffer::fromHost(ctx, k),
         dv = flare::rt::DeviceBuffer::fromHost(ctx, v);
    flare::rt::DeviceBuffer dout(ctx, q.size() * 2), dlse(ctx, size_t(b) * hq * sq * 4);
    dout.fillBytes(0xFF); // NaN: whatever the kernel does not write stays visible
    dlse.fillBytes(0xFF);

    using flare::DType;
    flare::TensorView tq{dq.ptr(), DType::BF16, {b, hq, sq, d}, {}}, tk{dk.ptr(), DType::BF16, {b, hkv, skv, d}, {}},
        tv{dv.ptr(), DType::BF16, {b, hkv, skv, d}, {}}, tout{dout.ptr(), DType::BF16, {b, hq, sq, d}, {}};
    flare::AttentionOptions opt;
    opt.causal = true;
    opt.lse = flare::TensorView{dlse.ptr(), DType::F32, {b, hq, sq}, {}};

    auto t0 = std::chrono::steady_clock::now();
    flare::attention(cache, tq, tk, tv, tout, opt);
    ctx.synchronize();
    auto t1 = std::chrono::steady_clock::now();
    flare::attention(cache, tq, tk, tv, tout, opt); // the kernel is cached now
    ctx.synchronize();
    auto t2 = std::chrono::steady_clock::now();

    std::string module = flare::planAttention(tq, tk, tv, tout, opt).module;
    flare::reference::AttentionProblem p{b, hq, hkv, sq, skv, d, qf.data(), kf.data(), vf.data(), {}, {}, {}, {}};
    flare::reference::AttentionResult ref = flare::reference::attentionReference(module, p);
    auto out = dout.toHost<uint16_t>(q.size());
    auto lse = dlse.toHost<float>(ref.lse.size());
    double worstO = 0, worstLse = 0;
    bool ok = true;
    for (size_t i = 0; i < out.size(); ++i) {
      double err = std::fabs(fromBF16(out[i]) - ref.out[i]);
      ok &= err <= 2e-2 + 1e-2 * std::fabs(ref.out[i]); // NaN fails this too
      worstO = std::max(worstO, err);
    }
    for (size_t i = 0; i < lse.size(); ++i) {
      double err = std::fabs(lse[i] - ref.lse[i]);
      ok &= err <= 2e-3 + 1e-4 * std::fabs(ref.lse[i]);
      worstLse = std::max(worstLse, err);
    }
    auto ms = [](auto x, auto y) { return std::chrono::duration<double, std::milli>(y - x).count(); };
    std::printf("attention_jit: %s, causal GQA B=%d Hq=%d Hkv=%d Sq=%d Skv=%d D=%d: first call %.1f ms (compile or "
                "disk cache, launch), second %.2f ms; max |O - ref| %.4f, max |LSE - ref| %.2e: %s\n",
                ctx.name().c_str(), b, hq, hkv, sq, skv, d, ms(t0, t1), ms(t1, t2), worstO, worstLse,
                ok ? "OK" : "MISMATCH");
    return ok ? 0 : 1;
  } catch (const flare::Error &e) {
    std::fprintf(stderr, "attention_jit: %s\n", e.what());
    return 1;
  }
}
