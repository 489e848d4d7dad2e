//===- AttentionReferenceTest.cpp - The float64 attention reference -------===//
//
// Checks flare::reference::attentionReference against attention written out directly in the test, with
// each modifier region restated as a C++ lambda, and checks its errors.
//
//===----------------------------------------------------------------------===//
#include "flare/Error.h"
#include "flare/Reference/Attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using flare::reference::AttentionProblem;
using flare::reference::AttentionResult;
using flare::reference::attentionReference;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTolerance = 1e-12;

/// A problem's sizes and its random q, k, v (uniform in [-1, 1), fixed seed).
struct Inputs {
  int batch, headsQ, headsKV, seqQ, seqKV, headDim;
  std::vector<float> q, k, v;
  std::vector<std::vector<double>> aux;

  Inputs(int batch, int headsQ, int headsKV, int seqQ, int seqKV, int headDim)
      : batch(batch), headsQ(headsQ), headsKV(headsKV), seqQ(seqQ), seqKV(seqKV), headDim(headDim) {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto fill = [&](std::vector<float> &x, size_t n) {
      x.resize(n);
      for (float &e : x)
        e = dist(rng);
    };
    fill(q, size_t(batch) * headsQ * seqQ * headDim);
    fill(k, size_t(batch) * headsKV * seqKV * headDim);
    fill(v, size_t(batch) * headsKV * seqKV * headDim);
  }

  AttentionProblem problem() const {
    AttentionProblem p;
    p.batch = batch;
    p.headsQ = headsQ;
    p.headsKV = headsKV;
    p.seqQ = seqQ;
    p.seqKV = seqKV;
    p.headDim = headDim;
    p.q = q.data();
    p.k = k.data();
    p.v = v.data();
    p.aux = aux;
    return p;
  }
};

/// A modifier region restated in C++.
using ScoreFn = std::function<double(double s, int b, int h, int i, int j)>;
using MaskFn = std::function<bool(int b, int h, int i, int j)>;

/// Attention written out the obvious way, one (b, h, i, j) at a time, one running sum each.
AttentionResult direct(const Inputs &in, double scale, const ScoreFn &score = nullptr, const MaskFn &mask = nullptr) {
  AttentionResult r;
  r.out.assign(size_t(in.batch) * in.headsQ * in.seqQ * in.headDim, 0.0);
  r.lse.assign(size_t(in.batch) * in.headsQ * in.seqQ, 0.0);
  const int D = in.headDim;
  for (int b = 0; b < in.batch; ++b)
    for (int h = 0; h < in.headsQ; ++h)
      for (int i = 0; i < in.seqQ; ++i) {
        const int hk = h / (in.headsQ / in.headsKV);
        const size_t row = (size_t(b) * in.headsQ + h) * in.seqQ + i;
        const float *q = &in.q[row * D];
        std::vector<double> s(in.seqKV, -kInf);
        double m = -kInf;
        for (int j = 0; j < in.seqKV; ++j) {
          if (mask && !mask(b, h, i, j))
            continue;
          const float *k = &in.k[((size_t(b) * in.headsKV + hk) * in.seqKV + j) * D];
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(q[d]) * double(k[d]);
          s[j] = score ? score(scale * dot, b, h, i, j) : scale * dot;
          m = std::max(m, s[j]);
        }
        if (m == -kInf) {
          r.lse[row] = -kInf;
          continue;
        }
        double l = 0;
        for (int j = 0; j < in.seqKV; ++j) {
          double p = std::exp(s[j] - m);
          l += p;
          const float *v = &in.v[((size_t(b) * in.headsKV + hk) * in.seqKV + j) * D];
          for (int d = 0; d < D; ++d)
            r.out[row * D + d] += p * double(v[d]);
        }
        for (int d = 0; d < D; ++d)
          r.out[row * D + d] /= l;
        r.lse[row] = m + std::log(l);
      }
  return r;
}

/// Both results agree element by element within `tolerance` (-inf must meet -inf); reports the first
/// element that does not.
void expectNear(const AttentionResult &got, const AttentionResult &want, double tolerance = kTolerance) {
  ASSERT_EQ(got.out.size(), want.out.size());
  ASSERT_EQ(got.lse.size(), want.lse.size());
  for (size_t n = 0; n < want.out.size(); ++n)
    if (!(std::fabs(got.out[n] - want.out[n]) <= tolerance)) {
      ADD_FAILURE() << "out[" << n << "] = " << got.out[n] << ", expected " << want.out[n];
      return;
    }
  for (size_t n = 0; n < want.lse.size(); ++n)
    if (!(got.lse[n] == want.lse[n] || std::fabs(got.lse[n] - want.lse[n]) <= tolerance)) {
      ADD_FAILURE() << "lse[" << n << "] = " << got.lse[n] << ", expected " << want.lse[n];
      return;
    }
}

/// The largest difference between two outputs, to show that a modifier changed the result.
double maxDifference(const AttentionResult &a, const AttentionResult &b) {
  double diff = 0;
  for (size_t n = 0; n < a.out.size(); ++n)
    diff = std::max(diff, std::fabs(a.out[n] - b.out[n]));
  return diff;
}

/// The flare::Error message that `call` throws; fails the test when it throws none.
std::string errorOf(const std::function<void()> &call) {
  try {
    call();
  } catch (const flare::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a flare::Error";
  return "";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// V with a head dim of its own (multi-head latent attention): the weights come from Q.K over 64,
// the output is 32 wide; it is the first 32 columns of the attention over V's first 32 columns, and
// so are its gradients.
TEST(AttentionReference, ValueHeadDimOfItsOwn) {
  const char *src = R"(
func.func @mla(%q: tensor<2x4x5x64xbf16>, %k: tensor<2x2x7x64xbf16>, %v: tensor<2x2x7x32xbf16>)
    -> (tensor<2x4x5x32xbf16>, tensor<2x4x5xf32>) {
  %o, %lse = attn.attention %q, %k, %v
      : tensor<2x4x5x64xbf16>, tensor<2x2x7x64xbf16>, tensor<2x2x7x32xbf16> -> tensor<2x4x5x32xbf16>, tensor<2x4x5xf32>
  return %o, %lse : tensor<2x4x5x32xbf16>, tensor<2x4x5xf32>
})";
  Inputs in(2, 4, 2, 5, 7, 64);
  AttentionResult full = direct(in, 1.0 / 8.0);
  std::vector<float> v32;
  for (size_t row = 0; row < in.v.size() / 64; ++row)
    v32.insert(v32.end(), in.v.begin() + row * 64, in.v.begin() + row * 64 + 32);
  AttentionProblem p = in.problem();
  p.v = v32.data();
  p.headDimV = 32;
  AttentionResult got = attentionReference(src, p);
  ASSERT_EQ(got.out.size(), full.out.size() / 2);
  for (size_t row = 0; row < full.lse.size(); ++row) {
    EXPECT_NEAR(got.lse[row], full.lse[row], 1e-12);
    for (int x = 0; x < 32; ++x)
      EXPECT_NEAR(got.out[row * 32 + x], full.out[row * 64 + x], 1e-12) << "row " << row << " col " << x;
  }
  // The gradients: those of the attention over V's 64 columns for an output gradient whose columns
  // past 32 are zero (dQ and dK alike, dV's first 32 columns; its others are zero).
  const char *src64 = R"(
func.func @mla64(%q: tensor<2x4x5x64xbf16>, %k: tensor<2x2x7x64xbf16>, %v: tensor<2x2x7x64xbf16>) -> tensor<2x4x5x64xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<2x4x5x64xbf16>, tensor<2x2x7x64xbf16>, tensor<2x2x7x64xbf16> -> tensor<2x4x5x64xbf16>
  return %o : tensor<2x4x5x64xbf16>
})";
  std::vector<float> dout32(got.out.size()), dout64(full.out.size(), 0.f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < dout32.size(); ++i)
    dout64[(i / 32) * 64 + i % 32] = dout32[i] = dist(rng);
  const flare::reference::AttentionGradients g = attentionBackwardReference(src, p, dout32.data());
  const flare::reference::AttentionGradients g64 = attentionBackwardReference(src64, in.problem(), dout64.data());
  ASSERT_EQ(g.dq.size(), g64.dq.size());
  ASSERT_EQ(g.dk.size(), g64.dk.size());
  ASSERT_EQ(g.dv.size() * 2, g64.dv.size());
  for (size_t i = 0; i < g.dq.size(); ++i)
    EXPECT_NEAR(g.dq[i], g64.dq[i], 1e-12) << "dq[" << i << "]";
  for (size_t i = 0; i < g.dk.size(); ++i)
    EXPECT_NEAR(g.dk[i], g64.dk[i], 1e-12) << "dk[" << i << "]";
  for (size_t i = 0; i < g.dv.size(); ++i)
    EXPECT_NEAR(g.dv[i], g64.dv[(i / 32) * 64 + i % 32], 1e-12) << "dv[" << i << "]";
  // The problem's headDimV must match V's type.
  p.headDimV = 0;
  EXPECT_CONTAINS(errorOf([&] { attentionReference(src, p); }), "does not match dimension 3 of the value type");
}

TEST(AttentionReference, PlainGqaMatchesDirectComputation) {
  const char *src = R"(
func.func @plain(%q: tensor<2x4x5x64xbf16>, %k: tensor<2x2x7x64xbf16>, %v: tensor<2x2x7x64xbf16>)
    -> (tensor<2x4x5x64xbf16>, tensor<2x4x5xf32>) {
  %o, %lse = attn.attention %q, %k, %v
      : tensor<2x4x5x64xbf16>, tensor<2x2x7x64xbf16>, tensor<2x2x7x64xbf16> -> tensor<2x4x5x64xbf16>, tensor<2x4x5xf32>
  return %o, %lse : tensor<2x4x5x64xbf16>, tensor<2x4x5xf32>
})";
  Inputs in(2, 4, 2, 5, 7, 64);
  expectNear(attentionReference(src, in.problem()), direct(in, 1.0 / 8.0));
}

TEST(AttentionReference, CausalMaskHidesLaterKeys) {
  // keep = qi >= kv: row i sees keys 0..i.
  const char *src = R"(
func.func @causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Inputs in(2, 2, 1, 257, 257, 64);
  AttentionResult got = attentionReference(src, in.problem());
  expectNear(got, direct(in, 1.0 / 8.0, nullptr, [](int, int, int i, int j) { return j <= i; }));
  // Row 0 sees key 0 alone: its output is V[0] and its lse is that key's score.
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 2; ++h) {
      size_t row = (size_t(b) * 2 + h) * 257;
      for (int d = 0; d < 64; ++d)
        EXPECT_NEAR(got.out[row * 64 + d], in.v[size_t(b) * 257 * 64 + d], kTolerance) << "b " << b << " h " << h;
    }
}

TEST(AttentionReference, BottomRightCausalUsesSequenceLengths) {
  // keep = kv <= qi + (kv_len - q_len): the last query sees the last key.
  const char *src = R"(
func.func @bottom_right(%q: tensor<1x2x3x64xf16>, %k: tensor<1x2x6x64xf16>, %v: tensor<1x2x6x64xf16>)
    -> tensor<1x2x3x64xf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %n = attn.kv_len
      %m = attn.q_len
      %off = arith.subi %n, %m : index
      %lim = arith.addi %qi, %off : index
      %keep = arith.cmpi sle, %kv, %lim : index
      attn.yield %keep : i1
    } : tensor<1x2x3x64xf16>, tensor<1x2x6x64xf16>, tensor<1x2x6x64xf16> -> tensor<1x2x3x64xf16>
  return %o : tensor<1x2x3x64xf16>
})";
  Inputs in(1, 2, 2, 3, 6, 64);
  expectNear(attentionReference(src, in.problem()),
             direct(in, 1.0 / 8.0, nullptr, [](int, int, int i, int j) { return j <= i + 3; }));
}

// Per-sequence key counts: each sequence is the attention over its first kvLens[b] keys, with
// attn.kv_len its own (bottom-right causal aligns to each sequence's end).
TEST(AttentionReference, KvLensLimitEachSequence) {
  const char *src = R"(
func.func @lens(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %n: tensor<?xi32>)
    -> tensor<?x?x?x64xf16> {
  %o = attn.attention %q, %k, %v kv_lens(%n : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %nk = attn.kv_len
      %nq = attn.q_len
      %off = arith.subi %nk, %nq : index
      %lim = arith.addi %qi, %off : index
      %keep = arith.cmpi sle, %kv, %lim : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
})";
  Inputs in(3, 2, 1, 2, 9, 64);
  AttentionProblem p = in.problem();
  p.kvLens = {9, 4, 0};
  AttentionResult got = attentionReference(src, p);
  AttentionResult want = direct(in, 1.0 / 8.0, nullptr, [&](int b, int, int i, int j) {
    const int n = p.kvLens[b];
    return j < n && j <= i + n - 2;
  });
  expectNear(got, want);
  EXPECT_TRUE(std::isinf(got.lse[2 * 2 * 2]) && got.lse[2 * 2 * 2] < 0); // sequence 2 has no key
  p.kvLens = {9, 10, 0};
  EXPECT_THROW(attentionReference(src, p), flare::Error);
  p.kvLens.clear();
  EXPECT_THROW(attentionReference(src, p), flare::Error);
}

// Packed sequences: each is the attention of its own rows, with its own q_len and kv_len; rows after
// the last sequence are left (out 0, lse NaN).
TEST(AttentionReference, PackedSequencesAreAttentionsOfTheirOwn) {
  const std::string body = R"(
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %nk = attn.kv_len
      %nq = attn.q_len
      %off = arith.subi %nk, %nq : index
      %lim = arith.addi %qi, %off : index
      %keep = arith.cmpi sle, %kv, %lim : index
      attn.yield %keep : i1
    } : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16> -> tensor<1x?x?x64xf16>
  return %o : tensor<1x?x?x64xf16>
})";
  const std::string packed = R"(
func.func @packed(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>,
                  %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x?x?x64xf16> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>))" + body;
  const std::string single = R"(
func.func @single(%q: tensor<1x?x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>)
    -> tensor<1x?x?x64xf16> {
  %o = attn.attention %q, %k, %v)" + body;
  const std::vector<int> cuQ = {0, 3, 3, 8}, cuK = {0, 5, 7, 13};
  const int totalQ = 10, totalK = 13, hq = 2, hkv = 1, d = 64; // rows 8, 9 of Q: no sequence
  Inputs in(1, hq, hkv, totalQ, totalK, d);
  AttentionProblem p = in.problem();
  p.batch = 3;
  p.cuSeqlensQ = cuQ;
  p.cuSeqlensK = cuK;
  AttentionResult got = attentionReference(packed, p);
  for (int b = 0; b < 3; ++b) {
    const int sq = cuQ[b + 1] - cuQ[b], sk = cuK[b + 1] - cuK[b];
    if (sq == 0)
      continue;
    // The sequence alone: its rows of every head, dense.
    std::vector<float> q, k, v;
    for (int h = 0; h < hq; ++h)
      q.insert(q.end(), in.q.begin() + (size_t(h) * totalQ + cuQ[b]) * d, in.q.begin() + (size_t(h) * totalQ + cuQ[b + 1]) * d);
    for (int h = 0; h < hkv; ++h) {
      k.insert(k.end(), in.k.begin() + (size_t(h) * totalK + cuK[b]) * d, in.k.begin() + (size_t(h) * totalK + cuK[b + 1]) * d);
      v.insert(v.end(), in.v.begin() + (size_t(h) * totalK + cuK[b]) * d, in.v.begin() + (size_t(h) * totalK + cuK[b + 1]) * d);
    }
    AttentionProblem one{1, hq, hkv, sq, std::max(sk, 1), d, q.data(), k.data(), v.data(), {}, {}, {}, {}};
    if (sk == 0)
      continue;
    AttentionResult want = attentionReference(single, one);
    for (int h = 0; h < hq; ++h)
      for (int i = 0; i < sq; ++i) {
        const size_t row = size_t(h) * totalQ + cuQ[b] + i, wantRow = size_t(h) * sq + i;
        EXPECT_NEAR(got.lse[row], want.lse[wantRow], kTolerance) << "sequence " << b << " head " << h << " row " << i;
        for (int x = 0; x < d; ++x)
          ASSERT_NEAR(got.out[row * d + x], want.out[wantRow * d + x], kTolerance);
      }
  }
  for (int h = 0; h < hq; ++h)
    for (int t = cuQ.back(); t < totalQ; ++t)
      EXPECT_TRUE(std::isnan(got.lse[size_t(h) * totalQ + t])) << "row " << t << " belongs to no sequence";
  p.cuSeqlensK = {0, 5, 4, 13}; // decreasing
  EXPECT_THROW(attentionReference(packed, p), flare::Error);
}

TEST(AttentionReference, SoftcapScoreMod) {
  // s' = 50 * tanh(s / 50), with the cap defined outside the region.
  const char *src = R"(
func.func @softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %cap = arith.constant 50.0 : f32
  %o = attn.attention %q, %k, %v attributes {scale = 4.0 : f32}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
})";
  Inputs in(1, 2, 2, 9, 11, 128);
  AttentionResult got = attentionReference(src, in.problem());
  expectNear(got, direct(in, 4.0, [](double s, int, int, int, int) { return 50.0 * std::tanh(s / 50.0); }));
  EXPECT_GT(maxDifference(got, direct(in, 4.0)), 1e-3) << "the cap must change the result";
}

TEST(AttentionReference, AlibiSlopesFromAux) {
  // s' = s + slope[h] * (kv - qi).
  const char *src = R"(
func.func @alibi(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x1x?x64xbf16>, %v: tensor<?x1x?x64xbf16>,
                 %slopes: tensor<4xf32>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v aux(%slopes : tensor<4xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<4xf32>):
      %slope = attn.aux_load %sl[%h] : tensor<4xf32>
      %d = arith.subi %kv, %qi : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.addf %s, %bias : f32
      attn.yield %r : f32
    } : tensor<?x4x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16> -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
})";
  Inputs in(2, 4, 1, 6, 9, 64);
  const std::vector<double> slopes = {0.5, 0.25, 0.125, 0.0625};
  in.aux = {slopes};
  AttentionResult got = attentionReference(src, in.problem());
  expectNear(got, direct(in, 1.0 / 8.0, [&](double s, int, int h, int i, int j) { return s + slopes[h] * (j - i); }));
  EXPECT_GT(maxDifference(got, direct(in, 1.0 / 8.0)), 1e-3) << "the bias must change the result";
}

TEST(AttentionReference, DocumentMaskFromI32Aux) {
  // keep = doc[qi] == doc[kv].
  const char *src = R"(
func.func @documents(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>,
                     %doc: tensor<?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %d: tensor<?xi32>):
      %dq = attn.aux_load %d[%qi] : tensor<?xi32>
      %dk = attn.aux_load %d[%kv] : tensor<?xi32>
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Inputs in(1, 2, 1, 8, 8, 64);
  const std::vector<double> doc = {0, 0, 0, 1, 1, 2, 2, 2};
  in.aux = {doc};
  expectNear(attentionReference(src, in.problem()),
             direct(in, 1.0 / 8.0, nullptr, [&](int, int, int i, int j) { return doc[i] == doc[j]; }));
}

TEST(AttentionReference, RowWithoutVisibleKeysIsZeroWithMinusInfLse) {
  // mask_mod hides every key from row 0; score_mod gives -inf to every key of row 1 and to key 0 of
  // every row, which counts as masked.
  const char *src = R"(
func.func @empty_rows(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %row1 = arith.cmpi eq, %qi, %c1 : index
      %key0 = arith.cmpi eq, %kv, %c0 : index
      %drop = arith.ori %row1, %key0 : i1
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %drop, %ninf, %s : f32
      attn.yield %r : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %c0 = arith.constant 0 : index
      %keep = arith.cmpi ne, %qi, %c0 : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
      -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
})";
  Inputs in(2, 2, 2, 4, 5, 64);
  AttentionResult got = attentionReference(src, in.problem());
  expectNear(got, direct(in, 1.0 / 8.0, [](double s, int, int, int i, int j) { return i == 1 || j == 0 ? -kInf : s; },
                         [](int, int, int i, int) { return i != 0; }));
  for (double x : got.out)
    ASSERT_FALSE(std::isnan(x));
  for (double x : got.lse)
    ASSERT_FALSE(std::isnan(x));
  for (int bh = 0; bh < 4; ++bh)
    for (int i : {0, 1}) {
      size_t row = size_t(bh) * 4 + i;
      EXPECT_EQ(got.lse[row], -kInf) << "row " << row;
      for (int d = 0; d < 64; ++d)
        ASSERT_EQ(got.out[row * 64 + d], 0.0) << "row " << row << " d " << d;
    }
  EXPECT_TRUE(std::isfinite(got.lse[2])) << "row 2 sees keys 1..4";
}

TEST(AttentionReference, AuxIndexOutOfRangeThrows) {
  // Four query heads read a slopes tensor of three: head 3 reads index 3.
  const char *src = R"(
func.func @short_aux(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>,
                     %slopes: tensor<?xf32>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v aux(%slopes : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
      %slope = attn.aux_load %sl[%h] : tensor<?xf32>
      %r = arith.addf %s, %slope : f32
      attn.yield %r : f32
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Inputs in(1, 4, 4, 64, 64, 64);
  in.aux = {{0.5, 0.25, 0.125}};
  std::string message = errorOf([&] { attentionReference(src, in.problem()); });
  EXPECT_CONTAINS(message, "attn.aux_load");
  EXPECT_CONTAINS(message, "input:7:");
  EXPECT_CONTAINS(message, "index 3");
  EXPECT_CONTAINS(message, "aux operand #0");
  EXPECT_CONTAINS(message, "3 elements");
}

TEST(AttentionReference, UnsupportedOpThrowsNamingIt) {
  const char *src = R"(
func.func @tan(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %r = math.tan %s : f32
      attn.yield %r : f32
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Inputs in(1, 1, 1, 2, 2, 64);
  std::string message = errorOf([&] { attentionReference(src, in.problem()); });
  EXPECT_CONTAINS(message, "'math.tan' in score_mod at input:7:12");
  EXPECT_CONTAINS(message, "not supported");
}

TEST(AttentionReference, ProblemMustMatchTheOp) {
  const char *src = R"(
func.func @fixed(%q: tensor<1x2x8x64xbf16>, %k: tensor<1x2x8x64xbf16>, %v: tensor<1x2x8x64xbf16>,
                 %doc: tensor<8xi32>) -> tensor<1x2x8x64xbf16> {
  %o = attn.attention %q, %k, %v aux(%doc : tensor<8xi32>)
      : tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16>, tensor<1x2x8x64xbf16> -> tensor<1x2x8x64xbf16>
  return %o : tensor<1x2x8x64xbf16>
})";
  {
    Inputs in(1, 2, 2, 9, 8, 64);
    in.aux = {std::vector<double>(8, 0.0)};
    std::string message = errorOf([&] { attentionReference(src, in.problem()); });
    EXPECT_CONTAINS(message, "seqQ = 9");
    EXPECT_CONTAINS(message, "tensor<1x2x8x64xbf16>");
    EXPECT_CONTAINS(message, "input:4:");
  }
  Inputs in(1, 2, 2, 8, 8, 64);
  EXPECT_CONTAINS(errorOf([&] { attentionReference(src, in.problem()); }), "0 aux vectors but the op has 1");
  in.aux = {std::vector<double>(7, 0.0)};
  EXPECT_CONTAINS(errorOf([&] { attentionReference(src, in.problem()); }), "has 8 elements but the problem gives 7");
  in.aux = {std::vector<double>(8, 0.0)};
  in.aux[0][5] = 1.5;
  EXPECT_CONTAINS(errorOf([&] { attentionReference(src, in.problem()); }), "element 5 is 1.5");
  in.aux[0][5] = 4294967296.0;
  EXPECT_CONTAINS(errorOf([&] { attentionReference(src, in.problem()); }), "not an i32");
}

TEST(AttentionReference, ExplicitScaleIsHonoured) {
  const char *src = R"(
func.func @scaled(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v attributes {scale = 0.5 : f32}
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Inputs in(1, 2, 1, 6, 10, 64);
  AttentionResult got = attentionReference(src, in.problem());
  expectNear(got, direct(in, 0.5));
  EXPECT_GT(maxDifference(got, direct(in, 1.0 / 8.0)), 1e-3) << "0.5 is not the default 1/sqrt(64)";
}

TEST(AttentionReference, I32MaskArithmeticWrapsLikeTwosComplement) {
  // keep = (i32(qi) * 2^30 >= 0), wrapping modulo 2^32: 2 * 2^30 = -2^31 and 3 * 2^30 = -2^30 hide rows
  // 2 and 3, while 4 * 2^30 = 0 keeps row 4.
  const char *src = R"(
func.func @wrap(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %x = arith.index_cast %qi : index to i32
      %big = arith.constant 1073741824 : i32
      %p = arith.muli %x, %big : i32
      %zero = arith.constant 0 : i32
      %keep = arith.cmpi sge, %p, %zero : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
      -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
})";
  Inputs in(1, 1, 1, 5, 4, 64);
  AttentionResult got = attentionReference(src, in.problem());
  expectNear(got, direct(in, 1.0 / 8.0, nullptr, [](int, int, int i, int) { return i != 2 && i != 3; }));
  EXPECT_EQ(got.lse[2], -kInf);
  EXPECT_EQ(got.lse[3], -kInf);
  EXPECT_TRUE(std::isfinite(got.lse[4]));
}

/// The value a score_mod `body` (ops defining %r : f32 from %qi) takes for qi = 0..4. With a single key
/// the softmax weight is 1, so lse[qi] = score + log(1) is exactly the region's value.
std::vector<double> scoreModValues(const std::string &body) {
  std::string src = R"(
func.func @f(%q: tensor<1x1x5x64xbf16>, %k: tensor<1x1x1x64xbf16>, %v: tensor<1x1x1x64xbf16>) -> tensor<1x1x5x64xbf16> {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
)" + body + R"(
      attn.yield %r : f32
    } : tensor<1x1x5x64xbf16>, tensor<1x1x1x64xbf16>, tensor<1x1x1x64xbf16> -> tensor<1x1x5x64xbf16>
  return %o : tensor<1x1x5x64xbf16>
})";
  Inputs in(1, 1, 1, 5, 1, 64);
  return attentionReference(src, in.problem()).lse;
}

TEST(AttentionReference, ScalarOpsFollowArithSemantics) {
  struct Case {
    const char *name, *body;
    std::vector<double> expected; // for qi = 0..4
  };
  // %x8 = i8(qi - 1): -1 (bit pattern 255), 0, 1, 2, 3.  %xs = qi - 3: -3, -2, -1, 0, 1.
  const std::string x8 = R"(
      %one = arith.constant 1 : index
      %xm = arith.subi %qi, %one : index
      %x8 = arith.index_cast %xm : index to i8
)";
  const std::string xs = R"(
      %c3 = arith.constant 3 : index
      %c2 = arith.constant 2 : index
      %xs = arith.subi %qi, %c3 : index
)";
  const Case cases[] = {
      {"i32 muli wraps modulo 2^32", R"(
      %x = arith.index_cast %qi : index to i32
      %c = arith.constant 1073741824 : i32
      %p = arith.muli %x, %c : i32
      %r = arith.sitofp %p : i32 to f32)",
       {0, 1073741824, -2147483648.0, -1073741824, 0}},
      {"floordivsi rounds down", R"(
      %d = arith.floordivsi %xs, %c2 : index
      %i = arith.index_cast %d : index to i64
      %r = arith.sitofp %i : i64 to f32)",
       {-2, -1, -1, 0, 0}},
      {"ceildivsi rounds up", R"(
      %d = arith.ceildivsi %xs, %c2 : index
      %i = arith.index_cast %d : index to i64
      %r = arith.sitofp %i : i64 to f32)",
       {-1, -1, 0, 0, 1}},
      {"divsi truncates", R"(
      %d = arith.divsi %xs, %c2 : index
      %i = arith.index_cast %d : index to i64
      %r = arith.sitofp %i : i64 to f32)",
       {-1, -1, 0, 0, 0}},
      {"remsi takes the dividend's sign", R"(
      %d = arith.remsi %xs, %c2 : index
      %i = arith.index_cast %d : index to i64
      %r = arith.sitofp %i : i64 to f32)",
       {-1, 0, -1, 0, 1}},
      {"uitofp reads i8 -1 as 255", R"(
      %r = arith.uitofp %x8 : i8 to f32)",
       {255, 0, 1, 2, 3}},
      {"shrui shifts in zeros", R"(
      %c4 = arith.constant 4 : i8
      %y = arith.shrui %x8, %c4 : i8
      %r = arith.sitofp %y : i8 to f32)",
       {15, 0, 0, 0, 0}},
      {"shrsi shifts in the sign", R"(
      %c4 = arith.constant 4 : i8
      %y = arith.shrsi %x8, %c4 : i8
      %r = arith.sitofp %y : i8 to f32)",
       {-1, 0, 0, 0, 0}},
      {"cmpi ult compares unsigned", R"(
      %c1 = arith.constant 1 : i8
      %lt = arith.cmpi ult, %x8, %c1 : i8
      %r = arith.uitofp %lt : i1 to f32)",
       {0, 1, 0, 0, 0}},
      {"extsi of i1 true is -1", R"(
      %c0 = arith.constant 0 : i8
      %eq = arith.cmpi eq, %x8, %c0 : i8
      %e = arith.extsi %eq : i1 to i32
      %r = arith.sitofp %e : i32 to f32)",
       {0, -1, 0, 0, 0}},
      {"index_castui zero-extends", R"(
      %e = arith.index_castui %x8 : i8 to index
      %i = arith.index_cast %e : index to i64
      %r = arith.sitofp %i : i64 to f32)",
       {255, 0, 1, 2, 3}},
      {"maxsi and minui", R"(
      %c2 = arith.constant 2 : i8
      %mx = arith.maxsi %x8, %c2 : i8
      %mn = arith.minui %x8, %c2 : i8
      %sum = arith.addi %mx, %mn : i8
      %r = arith.sitofp %sum : i8 to f32)",
       {4, 2, 3, 4, 5}},
      {"cmpf unordered predicates are true for NaN", R"(
      %nan = arith.constant 0x7FC00000 : f32
      %ueq = arith.cmpf ueq, %nan, %s : f32
      %oeq = arith.cmpf oeq, %nan, %nan : f32
      %u = arith.uitofp %ueq : i1 to f32
      %e = arith.uitofp %oeq : i1 to f32
      %two = arith.constant 2.0 : f32
      %u2 = arith.mulf %u, %two : f32
      %r = arith.addf %u2, %e : f32)",
       {2, 2, 2, 2, 2}},
      {"q_len and kv_len", R"(
      %m = attn.q_len
      %n = attn.kv_len
      %c10 = arith.constant 10 : index
      %m10 = arith.muli %m, %c10 : index
      %t = arith.addi %m10, %n : index
      %i = arith.index_cast %t : index to i64
      %r = arith.sitofp %i : i64 to f32)",
       {51, 51, 51, 51, 51}},
      {"truncf to bf16 rounds to nearest even", R"(
      %x = arith.constant 1.00390625 : f32
      %t = arith.truncf %x : f32 to bf16
      %r = arith.extf %t : bf16 to f32)",
       {1, 1, 1, 1, 1}},
      {"truncf honours its rounding mode", R"(
      %x = arith.constant 1.00390625 : f32
      %t = arith.truncf %x upward : f32 to bf16
      %r = arith.extf %t : bf16 to f32)",
       {1.0078125, 1.0078125, 1.0078125, 1.0078125, 1.0078125}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    std::string prelude = std::string(c.body).find("%x8") != std::string::npos   ? x8
                          : std::string(c.body).find("%xs") != std::string::npos ? xs
                                                                                 : "";
    EXPECT_EQ(scoreModValues(prelude + c.body), c.expected);
  }
}

TEST(AttentionReference, FuncNameSelectsTheOp) {
  const char *src = R"(
func.func @plain(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
func.func @causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi uge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Inputs in(1, 2, 2, 6, 6, 64);
  std::string message = errorOf([&] { attentionReference(src, in.problem()); });
  EXPECT_CONTAINS(message, "exactly one attn.attention, found 2");
  EXPECT_CONTAINS(message, "input:4:");
  EXPECT_CONTAINS(message, "input:10:");
  expectNear(attentionReference(src, in.problem(), "causal"),
             direct(in, 1.0 / 8.0, nullptr, [](int, int, int i, int j) { return j <= i; }));
  expectNear(attentionReference(src, in.problem(), "plain"), direct(in, 1.0 / 8.0));
  EXPECT_CONTAINS(errorOf([&] { attentionReference(src, in.problem(), "missing"); }), "no func.func @missing");
}

TEST(AttentionReference, ParseAndVerifyErrorsCarryTheirLocation) {
  Inputs in(1, 1, 1, 2, 2, 64);
  const char *bad = "func.func @f() {\n  %x = arith.constant : i32\n}\n";
  EXPECT_CONTAINS(errorOf([&] { attentionReference(bad, in.problem()); }), "input:2:");
  // The verifier rejects head dimension 24 (not a multiple of 16).
  const char *src = R"(
func.func @f(%q: tensor<1x1x2x24xbf16>, %k: tensor<1x1x2x24xbf16>, %v: tensor<1x1x2x24xbf16>) -> tensor<1x1x2x24xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<1x1x2x24xbf16>, tensor<1x1x2x24xbf16>, tensor<1x1x2x24xbf16> -> tensor<1x1x2x24xbf16>
  return %o : tensor<1x1x2x24xbf16>
})";
  std::string message = errorOf([&] { attentionReference(src, in.problem()); });
  EXPECT_CONTAINS(message, "input:3:");
  EXPECT_CONTAINS(message, "head dimension of the query and key is 24");
  EXPECT_CONTAINS(errorOf([&] { attentionReference("func.func @f() {\n  return\n}\n", in.problem()); }),
                  "found 0");
}

} // namespace

// The backward reference against central differences of the forward reference: for L = sum(O * dO),
// dL/dq[i] ~ (L(q + h e_i) - L(q - h e_i)) / (2h), the same for k and v. Causal, softcap (whose
// derivative the backward takes by differences of its own region) and GQA (dK and dV summed over
// the query heads of a group) in one problem; a masked-out row gets exact zeros.
TEST(AttentionReference, BackwardMatchesDifferencesOfTheForward) {
  const char *src = R"(
func.func @softcap_causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v attributes {scale = 0.5 : f32}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %cap = arith.constant 3.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %c1 = arith.constant 1 : index
      %lim = arith.subi %qi, %c1 : index
      %keep = arith.cmpi sle, %kv, %lim : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
})";
  Inputs in(1, 4, 2, 5, 7, 64);
  std::vector<float> dout(in.q.size());
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float &x : dout)
    x = dist(rng);
  auto loss = [&](const Inputs &at) {
    AttentionResult r = attentionReference(src, at.problem());
    double l = 0;
    for (size_t i = 0; i < r.out.size(); ++i)
      l += r.out[i] * dout[i];
    return l;
  };
  flare::reference::AttentionGradients g = flare::reference::attentionBackwardReference(src, in.problem(), dout.data());
  ASSERT_EQ(g.dq.size(), in.q.size());
  ASSERT_EQ(g.dk.size(), in.k.size());
  ASSERT_EQ(g.dv.size(), in.v.size());
  const float h = 1e-2f; // float inputs: a wide step, the loss is smooth
  auto check = [&](std::vector<float> Inputs::*tensor, const std::vector<double> &grad, const char *what) {
    double worst = 0;
    for (size_t i = 0; i < grad.size(); ++i) {
      Inputs plus = in, minus = in;
      (plus.*tensor)[i] += h;
      (minus.*tensor)[i] -= h;
      const double numeric = (loss(plus) - loss(minus)) / (double((plus.*tensor)[i]) - double((minus.*tensor)[i]));
      worst = std::max(worst, std::fabs(numeric - grad[i]));
      EXPECT_NEAR(grad[i], numeric, 1e-4) << what << "[" << i << "]";
    }
    return worst;
  };
  check(&Inputs::q, g.dq, "dq");
  check(&Inputs::k, g.dk, "dk");
  check(&Inputs::v, g.dv, "dv");
  // Query row 0 keeps no key (kv <= -1): its gradient is exactly zero.
  for (int h2 = 0; h2 < in.headsQ; ++h2)
    for (int d = 0; d < in.headDim; ++d)
      EXPECT_EQ(g.dq[(size_t(h2) * in.seqQ) * in.headDim + d], 0.0);
}
