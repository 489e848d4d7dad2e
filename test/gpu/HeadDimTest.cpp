//===- HeadDimTest.cpp - Head dims between powers of two, and V's head dim apart from Q's ===//
//
// flare::attention at every head dim that is not a power of two (32 < D < 256, multiples of 16: the
// kernel pads them to the next power of two inside), and with a V head dim Dv other than Q's and K's
// D (multi-head latent attention: q, k [.., D], v and out [.., Dv]), plain, causal (both alignments)
// and with a custom module whose score_mod reads the head index (softcap and an ALiBi-style bias);
// flare::attentionBackward at such head dims and with Dv != D. Results are compared with
// the float64 reference (reference::attentionReference / attentionBackwardReference on the plan's
// own module) on random bf16 inputs, with outputs poisoned before the launch, lengths that are not
// multiples of the tiles, GQA/MQA, single-query decoding and rows that see no key. Every other shape
// gives q, k, v and out rows 16 elements longer than their head dim: the inputs' padding holds NaN
// (never read) and out's the poison, which must still be there after the launch (nothing is written
// past Dv, whatever width the kernel computes in).
//
//===----------------------------------------------------------------------===//
#include "AttentionExamples.h"

#include "flare/Attention.h"
#include "flare/Error.h"
#include "flare/Reference/Attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace flare::test {
namespace {

using Shape = AttentionShape;

constexpr uint16_t kNaN16 = 0x7fc0; // a bf16 quiet NaN: the padding of input rows
constexpr int kRowPad = 16;         // elements past the head dim in a padded row

/// bf16 inputs of one problem (q, k at head dim d, v at dv), with their exact values for the reference.
struct Inputs {
  std::vector<uint16_t> q, k, v;
  std::vector<float> qf, kf, vf;
};

Inputs randomInputs(const Shape &s, int d, int dv, std::mt19937 &rng) {
  Inputs in;
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  auto fill = [&](std::vector<uint16_t> &bits, std::vector<float> &exact, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      bits.push_back(toBF16(dist(rng)));
      exact.push_back(fromBF16(bits.back()));
    }
  };
  fill(in.q, in.qf, size_t(s.b) * s.hq * s.sq * d);
  fill(in.k, in.kf, size_t(s.b) * s.hkv * s.skv * d);
  fill(in.v, in.vf, size_t(s.b) * s.hkv * s.skv * dv);
  return in;
}

/// A custom module at head dims (d, dv) returning the LSE: scores soft-capped at 30, then biased by
/// -(h + 1) / 32 * |qi - kv| with h the query head (ALiBi's shape, the slope from the head index).
std::string headBiasModule(int d, int dv) {
  const std::string t = "tensor<?x?x?x" + std::to_string(d) + "xbf16>";
  const std::string tv = "tensor<?x?x?x" + std::to_string(dv) + "xbf16>";
  return "func.func @head_bias(%q: " + t + ", %k: " + t + ", %v: " + tv + ") -> (" + tv +
         ", tensor<?x?x?xf32>) {\n"
         "  %o, %lse = attn.attention %q, %k, %v\n"
         R"(    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %th = math.tanh %x : f32
      %capped = arith.mulf %th, %cap : f32
      %h32 = arith.index_cast %h : index to i32
      %hf = arith.sitofp %h32 : i32 to f32
      %one = arith.constant 1.0 : f32
      %h1 = arith.addf %hf, %one : f32
      %step = arith.constant -0.03125 : f32
      %slope = arith.mulf %h1, %step : f32
      %dist = arith.subi %kv, %qi : index
      %d32 = arith.index_cast %dist : index to i32
      %df = arith.sitofp %d32 : i32 to f32
      %ad = math.absf %df : f32
      %bias = arith.mulf %slope, %ad : f32
      %y = arith.addf %capped, %bias : f32
      attn.yield %y : f32
    } : )" +
         t + ", " + t + ", " + tv + " -> " + tv + ", tensor<?x?x?xf32>\n  return %o, %lse : " + tv +
         ", tensor<?x?x?xf32>\n}\n";
}

/// Checks O (bf16 [B, Hq, Sq, Dv], rows `pitch` elements apart) and the LSE against the reference,
/// and that the elements of each row past Dv still hold the poison.
void expectMatches(const std::vector<uint16_t> &got, int pitch, const Shape &s, int dv,
                   const reference::AttentionResult &ref, const std::vector<float> *lse) {
  ASSERT_EQ(ref.out.size(), size_t(s.b) * s.hq * s.sq * dv);
  double worst = 0;
  size_t maskedRows = 0;
  for (size_t row = 0; row < size_t(s.b) * s.hq * s.sq; ++row) {
    const bool noKey = std::isinf(ref.lse[row]);
    maskedRows += noKey;
    for (int x = 0; x < dv; ++x) {
      const float o = fromBF16(got[row * pitch + x]);
      const double want = ref.out[row * dv + x];
      ASSERT_FALSE(std::isnan(o)) << "NaN at row " << row << " col " << x;
      if (noKey) {
        ASSERT_EQ(o, 0.f) << "a row that sees no key must be 0 (row " << row << ")";
      }
      // bf16 keeps 8 bits: half an ulp of |O| <= 1.5 plus the error of P rounded to 16 bits.
      ASSERT_NEAR(o, want, 2e-2 + 1e-2 * std::fabs(want)) << "row " << row << " col " << x;
      worst = std::max(worst, std::fabs(o - want));
    }
    for (int x = dv; x < pitch; ++x)
      ASSERT_TRUE(isPoison(got[row * pitch + x])) << "row " << row << " written past Dv = " << dv << " at col " << x;
    if (lse) {
      const float l = (*lse)[row];
      if (noKey)
        ASSERT_TRUE(std::isinf(l) && l < 0) << "LSE of a row that sees no key must be -inf, got " << l;
      else
        ASSERT_NEAR(l, ref.lse[row], 2e-3 + 1e-4 * std::fabs(ref.lse[row])) << "LSE row " << row;
    }
  }
  std::printf("      %s Dv=%d pitch %d: worst |O - ref| %.4f, %zu rows see no key\n", describe(s).c_str(), dv,
              pitch, worst, maskedRows);
}

/// Shapes that are not multiples of the tiles: GQA with few queries (split KV), MQA with rows that see
/// no key under a bottom-right causal mask, single-query decoding, and Hq / Hkv = 3.
std::vector<Shape> forwardShapes() {
  return pickShapes<Shape>({{2, 4, 2, 17, 1000}, {1, 4, 1, 1000, 17}, {1, 2, 2, 1, 1}, {1, 3, 1, 333, 477}},
                           {{1, 4, 2, 17, 100}, {1, 2, 1, 40, 9}});
}

struct Case {
  const char *name;
  AttentionOptions opt; // module empty: headBiasModule's is set by runCase
  bool custom, withLse;
};

class AttentionHeadDims : public GpuTest {
protected:
  /// flare::attention at head dims (d, dv) on one shape, rows `pad` elements longer than their head
  /// dim (0: contiguous), against the float64 reference of the plan's module.
  void run(const Shape &s, int d, int dv, AttentionOptions opt, bool withLse, int pad,
           const std::vector<std::vector<double>> &auxValues = {}) {
    Inputs in = randomInputs(s, d, dv, rng);
    auto upload = [&](const std::vector<uint16_t> &dense, int width) {
      std::vector<uint16_t> mem(dense.size() / width * (width + pad), kNaN16);
      for (size_t r = 0; r < dense.size() / width; ++r)
        std::copy_n(dense.begin() + r * width, width, mem.begin() + r * (width + pad));
      return rt::DeviceBuffer::fromHost(*ctx, mem);
    };
    auto view = [&](const rt::DeviceBuffer &buf, int heads, int seq, int width) {
      const int64_t pitch = width + pad;
      return TensorView{buf.ptr(), DType::BF16, {s.b, heads, seq, width}, {heads * seq * pitch, seq * pitch, pitch, 1}};
    };
    auto bq = upload(in.q, d), bk = upload(in.k, d), bv = upload(in.v, dv);
    const size_t rows = size_t(s.b) * s.hq * s.sq;
    auto bout = poisoned(rows * (dv + pad) * 2), blse = poisoned(rows * 4);
    const TensorView q = view(bq, s.hq, s.sq, d), k = view(bk, s.hkv, s.skv, d), v = view(bv, s.hkv, s.skv, dv),
                     out = view(bout, s.hq, s.sq, dv);
    if (withLse)
      opt.lse = TensorView{blse.ptr(), DType::F32, {s.b, s.hq, s.sq}, {}};
    std::vector<rt::DeviceBuffer> aux;
    for (const std::vector<double> &values : auxValues) {
      aux.push_back(uploadAux(*ctx, values, DType::F32));
      opt.aux.push_back(TensorView{aux.back().ptr(), DType::F32, {int64_t(values.size())}, {}});
    }
    flare::attention(*cache, q, k, v, out, opt);
    ctx->synchronize();

    const AttentionPlan plan = planAttention(q, k, v, out, opt);
    ASSERT_EQ(plan.headDim, d);
    ASSERT_EQ(plan.headDimV, dv);
    reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, in.qf.data(), in.kf.data(), in.vf.data(),
                                  auxValues, {}, {}, {}, dv};
    const reference::AttentionResult ref = reference::attentionReference(plan.module, p);
    std::vector<float> lse;
    if (withLse)
      lse = blse.toHost<float>(rows);
    expectMatches(bout.toHost<uint16_t>(rows * (dv + pad)), dv + pad, s, dv, ref, withLse ? &lse : nullptr);
  }

  /// The relative-position bias (relposModule) at head dims `dims`, alone and under a causal mask, on
  /// every forward shape: `table(shape)` gives the table and the offset of kv - q into it.
  void runRelposShapes(std::initializer_list<int> dims, const char *what,
                       const std::function<std::pair<std::vector<double>, int64_t>(const Shape &)> &table);
  /// flare::attentionBackward after flare::attention's forward (its LSE) on one shape at head dims (d,
  /// dvDim), options `opt` (a custom module with its aux values `auxValues`), against the float64
  /// reference of the forward plan's module.
  void runBackward(const Shape &s, int d, int dvDim, AttentionOptions opt,
                   const std::vector<std::vector<double>> &auxValues = {});

  /// run on every shape of forwardShapes(), every other one with padded rows (the odd ones or, with
  /// `parity`, the even ones); stops at the first fatal failure, or at an error of flare::attention
  /// (a kernel that does not compile), which fails the case but lets the next case run.
  void runCase(int d, int dv, Case c, size_t parity) {
    if (c.custom)
      c.opt.module = headBiasModule(d, dv);
    std::printf("[ head dim ] D=%d Dv=%d %s\n", d, dv, c.name);
    const std::vector<Shape> shapes = forwardShapes();
    for (size_t i = 0; i < shapes.size(); ++i) {
      SCOPED_TRACE("D=" + std::to_string(d) + " Dv=" + std::to_string(dv) + " " + c.name + ", " + describe(shapes[i]));
      try {
        run(shapes[i], d, dv, c.opt, c.withLse, (i + parity) % 2 ? kRowPad : 0);
      } catch (const Error &e) {
        ADD_FAILURE() << e.what();
        return;
      }
      if (HasFatalFailure())
        return;
    }
  }
};

/// A relative-position bias read per score element: s + table[kv - q + offset], under a causal mask
/// with `causal`; returns the output and the LSE.
std::string relposModule(int d, bool causal, int64_t offset) {
  const std::string t = "tensor<?x?x?x" + std::to_string(d) + "xbf16>";
  const std::string mask = causal ? "    mask_mod {\n    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %tb: "
                                    "tensor<?xf32>):\n      %keep = arith.cmpi sge, %qi, %kv : index\n"
                                    "      attn.yield %keep : i1\n    }\n"
                                  : "";
  return "func.func @relpos(%q: " + t + ", %k: " + t + ", %v: " + t + ", %bias: tensor<?xf32>) -> (" + t +
         ", tensor<?x?x?xf32>) {\n  %o, %lse = attn.attention %q, %k, %v aux(%bias : tensor<?xf32>)\n"
         "    score_mod {\n    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %tb: tensor<?xf32>):\n"
         "      %off = arith.constant " + std::to_string(offset) + " : index\n      %dd = arith.subi %kv, %qi : index\n"
         "      %i = arith.addi %dd, %off : index\n      %x = attn.aux_load %tb[%i] : tensor<?xf32>\n"
         "      %y = arith.addf %s, %x : f32\n      attn.yield %y : f32\n    }\n" + mask + "    : " + t + ", " + t +
         ", " + t + " -> " + t + ", tensor<?x?x?xf32>\n  return %o, %lse : " + t + ", tensor<?x?x?xf32>\n}\n";
}

void AttentionHeadDims::runRelposShapes(
    std::initializer_list<int> dims, const char *what,
    const std::function<std::pair<std::vector<double>, int64_t>(const Shape &)> &table) {
  for (int d : dims)
    for (bool causal : {false, true}) {
      std::printf("[ head dim ] D=%d relative-position bias, %s%s\n", d, what, causal ? ", causal" : "");
      for (const Shape &s : forwardShapes()) {
        SCOPED_TRACE("D=" + std::to_string(d) + (causal ? " causal" : "") + " relpos (" + what + "), " + describe(s));
        auto [values, offset] = table(s);
        AttentionOptions opt;
        opt.module = relposModule(d, causal, offset);
        try {
          run(s, d, d, opt, /*withLse=*/true, 0, {values});
        } catch (const Error &e) {
          ADD_FAILURE() << e.what();
          break;
        }
        if (HasFatalFailure())
          return;
      }
    }
}

// A score_mod that gathers from an aux table per score element (a relative-position bias indexed by
// kv - q + 4096), alone and under a causal mask: the gathered values are loaded in the scores' layout
// and the kernels take the dense kernel's tiles (128 keys per step at head dim 128, where the gather
// once needed more shared memory than a CTA has), and they match the reference at head dims 64, 128,
// 256, 96 and 192.
TEST_F(AttentionHeadDims, PerElementAuxTableFitsAndMatches) {
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> table(8192);
  for (double &x : table)
    x = static_cast<float>(dist(rng)); // exact in f32
  runRelposShapes({64, 128, 256, 96, 192}, "table of 8192 entries",
                  [&](const Shape &) { return std::pair{table, int64_t(4096)}; });
}

// The same bias with a table exactly as long as the real elements need (Sq + Skv - 1 entries, kv - q
// + Sq - 1): the padding rows and keys of the last blocks index outside it, so at head dims 64 and
// 128 (ping_pong kernels) those steps read through the clamp while the others read the table
// unclamped (tile-version-gathers' two branches), and every real element must still get its own
// entry.
TEST_F(AttentionHeadDims, AuxTableAsLongAsTheRealElementsNeed) {
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  runRelposShapes({64, 128, 256}, "table of Sq + Skv - 1 entries", [&](const Shape &s) {
    std::vector<double> table(static_cast<size_t>(s.sq + s.skv - 1));
    for (double &x : table)
      x = static_cast<float>(dist(rng)); // exact in f32
    return std::pair{table, int64_t(s.sq - 1)};
  });
}

AttentionOptions causalOptions(CausalAlignment alignment) {
  AttentionOptions opt;
  opt.causal = true;
  opt.alignment = alignment;
  return opt;
}

TEST_F(AttentionHeadDims, EveryHeadDimMatchesTheFloat64Reference) {
  const Case cases[] = {{"plain, LSE", {}, false, true},
                        {"causal bottom-right, LSE", causalOptions(CausalAlignment::BottomRight), false, true},
                        {"custom score_mod (softcap, head-index bias), LSE", {}, true, true}};
  for (int d : {32, 48, 80, 96, 112, 160, 192, 224})
    for (size_t i = 0; i < std::size(cases); ++i) {
      runCase(d, d, cases[i], i);
      if (HasFatalFailure())
        return;
    }
}

TEST_F(AttentionHeadDims, DifferentHeadDimsForQkAndV) {
  const Case cases[] = {{"plain", {}, false, false},
                        {"causal, LSE", causalOptions(CausalAlignment::TopLeft), false, true},
                        {"custom score_mod (softcap, head-index bias), LSE", {}, true, true}};
  for (auto [d, dv] : {std::pair{192, 128}, {128, 64}, {96, 160}, {64, 256}})
    for (size_t i = 0; i < std::size(cases); ++i) {
      runCase(d, dv, cases[i], i);
      if (HasFatalFailure())
        return;
    }
}

void AttentionHeadDims::runBackward(const Shape &s, int d, int dvDim, AttentionOptions opt,
                                    const std::vector<std::vector<double>> &auxValues) {
  const size_t rows = size_t(s.b) * s.hq * s.sq, keys = size_t(s.b) * s.hkv * s.skv;
  const size_t qn = rows * d, kn = keys * d, on = rows * dvDim, vn = keys * dvDim;
  Inputs in = randomInputs(s, d, dvDim, rng);
  std::vector<uint16_t> dO(on);
  std::vector<float> dOf(on);
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  for (size_t i = 0; i < on; ++i)
    dOf[i] = fromBF16(dO[i] = toBF16(dist(rng)));
  auto bq = rt::DeviceBuffer::fromHost(*ctx, in.q), bk = rt::DeviceBuffer::fromHost(*ctx, in.k),
       bv = rt::DeviceBuffer::fromHost(*ctx, in.v), bdo = rt::DeviceBuffer::fromHost(*ctx, dO);
  auto out = poisoned(on * 2), lse = poisoned(rows * 4);
  auto dq = poisoned(qn * 2), dk = poisoned(kn * 2), dv = poisoned(vn * 2);
  std::vector<rt::DeviceBuffer> aux;
  for (const std::vector<double> &values : auxValues) {
    aux.push_back(uploadAux(*ctx, values, DType::F32));
    opt.aux.push_back(TensorView{aux.back().ptr(), DType::F32, {int64_t(values.size())}, {}});
  }
  auto view = [&](const rt::DeviceBuffer &b, int heads, int seq, int width) {
    return TensorView{b.ptr(), DType::BF16, {s.b, heads, seq, width}, {}};
  };
  opt.lse = TensorView{lse.ptr(), DType::F32, {s.b, s.hq, s.sq}, {}};
  const TensorView q = view(bq, s.hq, s.sq, d), k = view(bk, s.hkv, s.skv, d), v = view(bv, s.hkv, s.skv, dvDim);
  const TensorView o = view(out, s.hq, s.sq, dvDim), dout = view(bdo, s.hq, s.sq, dvDim);
  const TensorView gq = view(dq, s.hq, s.sq, d), gk = view(dk, s.hkv, s.skv, d), gv = view(dv, s.hkv, s.skv, dvDim);
  flare::attention(*cache, q, k, v, o, opt);
  AttentionOptions bopt = opt;
  bopt.lse = {};
  flare::attentionBackward(*cache, q, k, v, o, dout, opt.lse, gq, gk, gv, bopt);
  const AttentionBackwardPlan plan = planAttentionBackward(q, k, v, o, dout, opt.lse, gq, gk, gv, bopt);
  ASSERT_EQ(plan.forward.headDim, d);
  ASSERT_EQ(plan.forward.headDimV, dvDim);
  reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, in.qf.data(), in.kf.data(), in.vf.data(),
                                auxValues, {}, {}, {}, 0};
  p.headDimV = dvDim;
  const reference::AttentionGradients ref = reference::attentionBackwardReference(plan.forward.module, p, dOf.data());
  expectGradient(dq.toHost<uint16_t>(qn), ref.dq, "dQ");
  expectGradient(dk.toHost<uint16_t>(kn), ref.dk, "dK");
  expectGradient(dv.toHost<uint16_t>(vn), ref.dv, "dV");
}

const std::vector<Shape> &backwardShapes() {
  static const std::vector<Shape> shapes =
      pickShapes<Shape>({{2, 4, 2, 333, 257}, {1, 3, 1, 17, 300}}, {{1, 4, 2, 40, 77}});
  return shapes;
}

// flare::attentionBackward after flare::attention's forward (its LSE), as AttentionBackwardTest.cpp's
// ApiMatchesTheFloat64Reference does at 64 and 128: head dims between powers of two, and V's head dim
// apart from Q's and K's (multi-head latent attention's 192 / 128, and a V wider than Q: 64 / 128).
TEST_F(AttentionHeadDims, BackwardAtHeadDimsBetweenPowersOfTwo) {
  const std::vector<std::pair<int, int>> dims =
      smallShapes() ? std::vector<std::pair<int, int>>{{96, 96}, {192, 192}, {192, 128}, {64, 128}}
                    : std::vector<std::pair<int, int>>{{80, 80}, {96, 96}, {192, 192}, {192, 128}, {64, 128}};
  for (auto [d, dvDim] : dims)
    for (bool causal : {false, true})
      for (const Shape &s : backwardShapes()) {
        std::printf("[ head dim ] backward D=%d Dv=%d%s, %s\n", d, dvDim, causal ? " causal" : "", describe(s).c_str());
        SCOPED_TRACE("backward D=" + std::to_string(d) + " Dv=" + std::to_string(dvDim) + (causal ? " causal, " : ", ") +
                     describe(s));
        AttentionOptions opt;
        opt.causal = causal;
        runBackward(s, d, dvDim, opt);
        if (HasFailure())
          return;
      }
}

// The backward of the bias with a table as long as the real elements need (padding rows and keys
// index outside it in the last blocks, where the clamp decides what is read); the table is a
// constant of the gradient.
TEST_F(AttentionHeadDims, BackwardOfAnAuxTableBias) {
  std::uniform_real_distribution<double> values(-2.0, 2.0);
  for (int d : {64, 128})
    for (bool causal : {false, true})
      for (const Shape &s : backwardShapes()) {
        std::printf("[ head dim ] backward D=%d relative-position bias%s, %s\n", d, causal ? " causal" : "",
                    describe(s).c_str());
        SCOPED_TRACE("backward relpos D=" + std::to_string(d) + (causal ? " causal, " : ", ") + describe(s));
        std::vector<double> table(static_cast<size_t>(s.sq + s.skv - 1));
        for (double &x : table)
          x = static_cast<float>(values(rng)); // exact in f32
        AttentionOptions opt;
        opt.module = relposModule(d, causal, s.sq - 1);
        runBackward(s, d, d, opt, {table});
        if (HasFailure())
          return;
      }
}

} // namespace
} // namespace flare::test
