//===- BlockMaskTest.cpp - Block lists for masks the compiler cannot classify ===//
//
// flare::attention on masks of class generic, whose kernels visit the key blocks that the generated
// `<name>_block_mask` kernel lists (dialects/Attn/Rationale.md, "Block lists"): causal document masks
// with ragged documents (1 to 3,000 tokens, many of one token), block tables of 5-50% density with
// empty block rows (examples/attention/block_sparse.mlir), and masks that read the batch or head index
// (one list per batch entry or head). Each with the lists built by the call, with a flare::BlockMask
// built once and read by two calls (and by launches of one CTA per query block and of persistent CTAs
// taking query blocks from a shared counter), and without lists (blockLists = -1); against the float64
// reference on random bf16 inputs, outputs poisoned before every launch, lengths that are not
// multiples of the tiles, GQA, head dims 64 / 128 / 256 and 96. A BlockMask built for another call is
// refused, and a call that visits no lists cannot build one. The C API's flare_block_mask_build.
// flare::attentionBackward's lists (per block of keys, and per dQ block of query rows) on document
// masks, block tables and per-head masks, dQ/dK/dV against the float64 backward reference.
//
//===----------------------------------------------------------------------===//
#include "AttentionExamples.h"
#include "../ExampleText.h"

#include "flare/Attention.h"
#include "flare/Error.h"
#include "flare/Reference/Attention.h"
#include "flare/flare_c.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace flare::test {
namespace {

using Shape = AttentionShape;

/// Document ids per position: runs of ragged lengths, a third of them one token, the others up to
/// 3,000 tokens.
std::vector<double> raggedDocuments(int n, std::mt19937 &rng) {
  std::vector<double> ids(n);
  std::uniform_int_distribution<int> longRun(2, 3000), kind(0, 2);
  int doc = 0;
  for (int i = 0; i < n; ++doc) {
    const int run = kind(rng) == 0 ? 1 : longRun(rng);
    for (int j = 0; j < run && i < n; ++j)
      ids[i++] = doc;
  }
  return ids;
}

/// A block table for block_sparse.mlir (128 x 128 blocks, row-major): `density` of the blocks kept,
/// one block row in eight empty.
std::vector<double> blockTable(int sq, int skv, double density, std::mt19937 &rng) {
  const int rows = (sq + 127) / 128, cols = (skv + 127) / 128;
  std::vector<double> table(size_t(rows) * cols);
  std::bernoulli_distribution keep(density), emptyRow(0.125);
  for (int r = 0; r < rows; ++r) {
    const bool empty = emptyRow(rng);
    for (int c = 0; c < cols; ++c)
      table[size_t(r) * cols + c] = !empty && keep(rng) ? 1 : 0;
  }
  // At least one kept block in the first block row (a table of small density may draw none).
  table[std::uniform_int_distribution<int>(0, cols - 1)(rng)] = 1;
  return table;
}

/// A mask that reads the batch and head indices: document ids of each batch entry (aux [B x S]),
/// and the keys kv with (kv + 37 h) % 5 == 0 hidden from head h.
std::string perBatchAndHeadModule(int d) {
  const std::string t = "tensor<?x?x?x" + std::to_string(d) + "xbf16>";
  return "func.func @per_head(%q: " + t + ", %k: " + t + ", %v: " + t + ", %ids: tensor<?xi32>) -> (" + t +
         ", tensor<?x?x?xf32>) {\n  %o, %lse = attn.attention %q, %k, %v aux(%ids : tensor<?xi32>)\n" +
         R"(    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %doc: tensor<?xi32>):
      %s = attn.kv_len
      %row = arith.muli %b, %s : index
      %iq = arith.addi %row, %qi : index
      %ik = arith.addi %row, %kv : index
      %dq = attn.aux_load %doc[%iq] : tensor<?xi32>
      %dk = attn.aux_load %doc[%ik] : tensor<?xi32>
      %same = arith.cmpi eq, %dq, %dk : i32
      %c37 = arith.constant 37 : index
      %c5 = arith.constant 5 : index
      %c0 = arith.constant 0 : index
      %hs = arith.muli %h, %c37 : index
      %x = arith.addi %kv, %hs : index
      %r = arith.remui %x, %c5 : index
      %shown = arith.cmpi ne, %r, %c0 : index
      %keep = arith.andi %same, %shown : i1
      attn.yield %keep : i1
    } : )" + t + ", " + t + ", " + t + " -> " + t + ", tensor<?x?x?xf32>\n  return %o, %lse : " + t +
         ", tensor<?x?x?xf32>\n}\n";
}

/// One problem's device tensors, inputs and aux, with its plan's module evaluated by the reference.
struct Problem {
  Shape s;
  int d = 128;
  bool withLse = true;
  std::vector<float> qf, kf, vf;
  std::vector<double> aux;
  std::vector<rt::DeviceBuffer> buffers; // q, k, v, out, lse, aux
  TensorView q, k, v, out;
  AttentionOptions opt;
  size_t rows() const { return size_t(s.b) * s.hq * s.sq; }
};

class BlockLists : public GpuTest {
protected:
  Problem make(const Shape &s, int d, const std::string &module, std::vector<double> aux, bool withLse) {
    Problem p;
    p.s = s;
    p.d = d;
    p.withLse = withLse;
    auto input = [&](std::vector<float> &exact, size_t n) {
      std::vector<uint16_t> bits = randomBF16(n, rng, -1.5f, 1.5f);
      for (uint16_t x : bits)
        exact.push_back(fromBF16(x));
      p.buffers.push_back(rt::DeviceBuffer::fromHost(*ctx, bits));
    };
    input(p.qf, size_t(s.b) * s.hq * s.sq * d);
    input(p.kf, size_t(s.b) * s.hkv * s.skv * d);
    input(p.vf, size_t(s.b) * s.hkv * s.skv * d);
    p.buffers.push_back(poisoned(p.rows() * d * 2));
    p.buffers.push_back(poisoned(p.rows() * 4));
    p.buffers.push_back(uploadAux(*ctx, aux, DType::I32));
    p.aux = std::move(aux);
    p.q = {p.buffers[0].ptr(), DType::BF16, {s.b, s.hq, s.sq, d}, {}};
    p.k = {p.buffers[1].ptr(), DType::BF16, {s.b, s.hkv, s.skv, d}, {}};
    p.v = {p.buffers[2].ptr(), DType::BF16, {s.b, s.hkv, s.skv, d}, {}};
    p.out = {p.buffers[3].ptr(), DType::BF16, {s.b, s.hq, s.sq, d}, {}};
    p.opt.module = module;
    p.opt.aux = {TensorView{p.buffers[5].ptr(), DType::I32, {int64_t(p.aux.size())}, {}}};
    if (withLse)
      p.opt.lse = TensorView{p.buffers[4].ptr(), DType::F32, {s.b, s.hq, s.sq}, {}};
    return p;
  }

  /// Poisons out and LSE, runs `call`, and checks them against the reference `ref`.
  template <class Call> void runAndCheck(Problem &p, const reference::AttentionResult &ref, const char *how, Call call) {
    SCOPED_TRACE(how);
    p.buffers[3].fillBytes(kPoisonByte);
    p.buffers[4].fillBytes(kPoisonByte);
    call();
    ctx->synchronize();
    const std::vector<uint16_t> got = p.buffers[3].toHost<uint16_t>(p.rows() * p.d);
    const std::vector<float> lse = p.buffers[4].toHost<float>(p.rows());
    double worst = 0;
    size_t noKey = 0;
    for (size_t row = 0; row < p.rows(); ++row) {
      const bool none = std::isinf(ref.lse[row]);
      noKey += none;
      for (int x = 0; x < p.d; ++x) {
        const float o = fromBF16(got[row * p.d + x]);
        const double want = ref.out[row * p.d + x];
        ASSERT_FALSE(std::isnan(o)) << "NaN (or the poison) at row " << row << " col " << x;
        if (none) {
          ASSERT_EQ(o, 0.f) << "a row that keeps no key must be 0 (row " << row << ")";
        }
        ASSERT_NEAR(o, want, 2e-2 + 1e-2 * std::fabs(want)) << "row " << row << " col " << x;
        worst = std::max(worst, std::fabs(o - want));
      }
      if (p.withLse) {
        if (none)
          ASSERT_TRUE(std::isinf(lse[row]) && lse[row] < 0) << "LSE of a row without keys: " << lse[row];
        else
          ASSERT_NEAR(lse[row], ref.lse[row], 2e-3 + 1e-4 * std::fabs(ref.lse[row])) << "LSE row " << row;
      }
    }
    std::printf("      %-26s %s D=%d: worst |O - ref| %.4f, %zu of %zu rows keep no key\n", how, describe(p.s).c_str(),
                p.d, worst, noKey, p.rows());
  }

  /// The three ways to run a problem: lists built by each call, a BlockMask built once and read by two
  /// calls, no lists; each against the float64 reference of the plan's module.
  void runAllWays(Problem &p) {
    const AttentionPlan plan = planAttention(p.q, p.k, p.v, p.out, p.opt);
    reference::AttentionProblem rp{p.s.b, p.s.hq, p.s.hkv, p.s.sq, p.s.skv, p.d, p.qf.data(), p.kf.data(), p.vf.data(),
                                   {p.aux}, {}, {}, {}, 0};
    const reference::AttentionResult ref = reference::attentionReference(plan.module, rp);
    runAndCheck(p, ref, "lists built by the call", [&] { attention(*cache, p.q, p.k, p.v, p.out, p.opt); });
    if (HasFatalFailure())
      return;
    if (p.s.sq <= kSplitKvMaxQueries) {
      // A few queries: the keys are split among instances (flash-decoding), which read no lists.
      EXPECT_THROW(buildBlockMask(*cache, p.q, p.k, p.v, p.out, p.opt), Error);
      std::printf("      (%d queries: the launch splits the keys and visits no lists)\n", p.s.sq);
      return;
    }
    const BlockMask mask = buildBlockMask(*cache, p.q, p.k, p.v, p.out, p.opt);
    ASSERT_TRUE(mask.lists);
    EXPECT_EQ(mask.queryBlocks, (p.s.sq + mask.blockM - 1) / mask.blockM);
    EXPECT_EQ(mask.keyBlocks, (p.s.skv + mask.blockN - 1) / mask.blockN);
    AttentionOptions withMask = p.opt;
    withMask.blockMask = &mask;
    for (const char *how : {"a BlockMask built once", "the same BlockMask again"}) {
      runAndCheck(p, ref, how, [&] { attention(*cache, p.q, p.k, p.v, p.out, withMask); });
      if (HasFatalFailure())
        return;
    }
    // The lists' kernel launched one CTA per query block (the launch rule's choice for long launches
    // at head dim 128, AttentionLaunch.cpp) and persistent with its CTAs taking query blocks from a
    // shared counter (tile.persistent = 2), each twice: the counter must be back at zero after a launch.
    for (auto [persistent, how] : {std::pair{-1, "a CTA a block"}, {2, "blocks from a counter"}}) {
      AttentionOptions form = p.opt;
      form.tile.persistent = persistent;
      const BlockMask formMask = buildBlockMask(*cache, p.q, p.k, p.v, p.out, form);
      form.blockMask = &formMask;
      for (int call = 0; call < 2; ++call) {
        runAndCheck(p, ref, how, [&] { attention(*cache, p.q, p.k, p.v, p.out, form); });
        if (HasFatalFailure())
          return;
      }
    }
    AttentionOptions noLists = p.opt;
    noLists.tile.blockLists = -1;
    runAndCheck(p, ref, "no lists (per element)", [&] { attention(*cache, p.q, p.k, p.v, p.out, noLists); });
  }
};

TEST_F(BlockLists, DocumentMasksWithRaggedDocuments) {
  const std::vector<Shape> shapes =
      pickShapes<Shape>({{2, 4, 2, 1000, 1000}, {1, 2, 1, 3333, 3333}, {1, 3, 1, 500, 777}, {1, 2, 2, 1, 129}},
                        {{1, 2, 1, 300, 300}});
  for (int d : {64, 128, 256, 96})
    for (const Shape &s : shapes) {
      std::printf("[ lists ] document mask, D=%d, %s\n", d, describe(s).c_str());
      SCOPED_TRACE("document D=" + std::to_string(d) + " " + describe(s));
      Problem p = make(s, d, withHeadDim(readExample("attention/document.mlir"), d),
                       raggedDocuments(std::max(s.sq, s.skv), rng), true);
      runAllWays(p);
      if (HasFatalFailure())
        return;
    }
}

TEST_F(BlockLists, BlockSparseTablesWithEmptyRows) {
  const std::vector<Shape> shapes = pickShapes<Shape>({{2, 4, 2, 1000, 1000}, {1, 2, 1, 700, 1500}}, {{1, 2, 1, 300, 300}});
  for (int d : {64, 128, 256})
    for (double density : {0.05, 0.25, 0.5})
      for (const Shape &s : shapes) {
        std::printf("[ lists ] block table of density %.2f, D=%d, %s\n", density, d, describe(s).c_str());
        SCOPED_TRACE("block_sparse D=" + std::to_string(d) + " density " + std::to_string(density) + " " + describe(s));
        std::string module = withHeadDim(readExample("attention/block_sparse.mlir"), d);
        Problem p = make(s, d, module, blockTable(s.sq, s.skv, density, rng), false);
        runAllWays(p);
        if (HasFatalFailure())
          return;
      }
}

TEST_F(BlockLists, MasksReadingBatchAndHeadGetListsOfTheirOwn) {
  const Shape s{3, 4, 2, 600, 600};
  std::vector<double> ids;
  for (int b = 0; b < s.b; ++b) {
    std::vector<double> one = raggedDocuments(s.skv, rng);
    ids.insert(ids.end(), one.begin(), one.end());
  }
  Problem p = make(s, 128, perBatchAndHeadModule(128), ids, true);
  std::printf("[ lists ] per batch entry and head, %s\n", describe(s).c_str());
  runAllWays(p);
  if (HasFatalFailure())
    return;
  const BlockMask mask = buildBlockMask(*cache, p.q, p.k, p.v, p.out, p.opt);
  EXPECT_EQ(mask.batches, s.b);
  EXPECT_EQ(mask.heads, s.hq);
}

TEST_F(BlockLists, ABlockMaskServesOnlyTheCallsItWasBuiltFor) {
  const Shape s{1, 2, 1, 500, 500};
  Problem p = make(s, 128, readExample("attention/document.mlir"), raggedDocuments(600, rng), true);
  const BlockMask mask = buildBlockMask(*cache, p.q, p.k, p.v, p.out, p.opt);
  EXPECT_EQ(mask.batches, 1); // document ids do not depend on the batch entry or head: one list
  EXPECT_EQ(mask.heads, 1);
  // Another sequence length.
  AttentionOptions shorter = p.opt;
  shorter.blockMask = &mask;
  TensorView q = p.q, out = p.out;
  q.shape[2] = out.shape[2] = 400;
  q.strides = out.strides = {s.hq * 500 * 128, 500 * 128, 128, 1};
  shorter.lse.shape = {1, s.hq, 400};
  try {
    attention(*cache, q, p.k, p.v, out, shorter);
    ADD_FAILURE() << "a BlockMask built for 500 queries was accepted for 400";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("sequence length"), std::string::npos) << e.what();
  }
  // Another module (the lists would be the wrong ones).
  AttentionOptions other = p.opt;
  other.blockMask = &mask;
  other.module = perBatchAndHeadModule(128);
  try {
    attention(*cache, p.q, p.k, p.v, p.out, other);
    ADD_FAILURE() << "a BlockMask built for the document mask was accepted for another module";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("attention module"), std::string::npos) << e.what();
  }
  // A mask the compiler classifies has no lists to build.
  AttentionOptions causal;
  causal.causal = true;
  EXPECT_THROW(buildBlockMask(*cache, p.q, p.k, p.v, p.out, causal), Error);
}

/// block_sparse.mlir returning its LSE as well (flare::attentionBackward takes the forward's LSE).
std::string blockSparseWithLse(int d) {
  std::string text = withHeadDim(readExample("attention/block_sparse.mlir"), d);
  const std::string t = "tensor<?x?x?x" + std::to_string(d) + "xbf16>", lse = "tensor<?x?x?xf32>";
  auto replace = [&](const std::string &from, const std::string &to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
  };
  replace("-> " + t + " {", "-> (" + t + ", " + lse + ") {");
  replace("%o = attn.attention", "%o, %lse = attn.attention");
  replace("-> " + t + "\n  return %o : " + t, "-> " + t + ", " + lse + "\n  return %o, %lse : " + t + ", " + lse);
  return text;
}

// flare::attentionBackward on masks the compiler cannot classify: its kernels visit block lists of
// their own (per block of keys for dK and dV, per block of query rows for dQ), built by each call.
// dQ, dK and dV against the float64 backward reference, with the lists and without them
// (tile.blockLists = -1), outputs poisoned before each call; rows that keep no key get zero dQ.
TEST_F(BlockLists, BackwardOverListsMatchesTheFloat64Reference) {
  struct Case {
    const char *what;
    int d;
    Shape s;
    int kind; // 0 document ids, 1 block table, 2 ids per batch entry and head
    const char *arch = ""; // the backward's (the device's when empty)
  };
  std::vector<Case> cases;
  for (int d : {64, 128, 256}) {
    cases.push_back({"document", d, {1, 4, 2, 1000, 1000}, 0});
    cases.push_back({"document, Sq != Skv", d, {1, 2, 1, 700, 1500}, 0});
    cases.push_back({"block table 0.25", d, {1, 2, 1, 700, 700}, 1});
  }
  cases.push_back({"document", 96, {1, 2, 1, 333, 333}, 0});
  cases.push_back({"per batch entry and head", 128, {2, 4, 2, 600, 600}, 2});
  // mma.sync (sm_80 kernels, which the H200 runs too): the dK/dV kernel's full and partial loops,
  // dQ summed by atomics, no dQ lists.
  for (int d : {64, 128}) {
    cases.push_back({"document, sm_80", d, {1, 4, 2, 1000, 1000}, 0, "sm_80"});
    cases.push_back({"block table 0.25, sm_80", d, {1, 2, 1, 700, 700}, 1, "sm_80"});
  }
  if (smallShapes())
    cases = {{"document", 128, {1, 2, 1, 300, 300}, 0}, {"block table 0.25", 128, {1, 2, 1, 300, 300}, 1}};
  for (const Case &c : cases) {
    const Shape &s = c.s;
    std::printf("[ lists ] backward, %s, D=%d, %s\n", c.what, c.d, describe(s).c_str());
    SCOPED_TRACE(std::string(c.what) + " D=" + std::to_string(c.d) + " " + describe(s));
    std::vector<double> aux;
    std::string module;
    if (c.kind == 1) {
      aux = blockTable(s.sq, s.skv, 0.25, rng);
      module = blockSparseWithLse(c.d);
    } else if (c.kind == 2) {
      for (int b = 0; b < s.b; ++b) {
        std::vector<double> one = raggedDocuments(s.skv, rng);
        aux.insert(aux.end(), one.begin(), one.end());
      }
      module = perBatchAndHeadModule(c.d);
    } else {
      aux = raggedDocuments(std::max(s.sq, s.skv), rng);
      module = withHeadDim(readExample("attention/document.mlir"), c.d);
    }
    Problem p = make(s, c.d, module, aux, true);
    attention(*cache, p.q, p.k, p.v, p.out, p.opt);
    const size_t qn = p.rows() * c.d, kn = size_t(s.b) * s.hkv * s.skv * c.d;
    std::vector<uint16_t> doBits = randomBF16(qn, rng, -1.5f, 1.5f);
    std::vector<float> dO;
    for (uint16_t x : doBits)
      dO.push_back(fromBF16(x));
    rt::DeviceBuffer dout = rt::DeviceBuffer::fromHost(*ctx, doBits);
    const AttentionPlan plan = planAttention(p.q, p.k, p.v, p.out, p.opt);
    reference::AttentionProblem rp{s.b, s.hq, s.hkv, s.sq, s.skv, c.d, p.qf.data(), p.kf.data(), p.vf.data(),
                                   {p.aux}, {}, {}, {}, 0};
    const reference::AttentionGradients ref = reference::attentionBackwardReference(plan.module, rp, dO.data());
    const reference::AttentionResult fwd = reference::attentionReference(plan.module, rp);
    auto like = [&](const rt::DeviceBuffer &b, const TensorView &t) { return TensorView{b.ptr(), t.dtype, t.shape, {}}; };
    AttentionOptions bopt = p.opt;
    bopt.lse = {};
    bopt.arch = c.arch;
    const BlockMask prebuilt = buildBackwardBlockMask(*cache, p.q, p.k, p.v, p.out, p.opt.lse, bopt);
    ASSERT_TRUE(prebuilt.backward && prebuilt.lists);
    // 0: lists built by the call, 1 and 2: the prebuilt ones (twice), -1: none.
    for (int lists : {0, 1, 2, -1}) {
      SCOPED_TRACE(lists < 0 ? "no lists" : lists ? "a backward BlockMask" : "lists");
      std::printf("      %s\n", lists < 0 ? "no lists (per element)" : lists ? "a backward BlockMask built once"
                                                                            : "block lists built by the call");
      rt::DeviceBuffer dq = poisoned(qn * 2), dk = poisoned(kn * 2), dv = poisoned(kn * 2);
      AttentionOptions opt = bopt;
      opt.tile.blockLists = std::min(lists, 0);
      if (lists > 0)
        opt.blockMask = &prebuilt;
      const AttentionBackwardPlan bplan = planAttentionBackward(p.q, p.k, p.v, p.out, like(dout, p.out), p.opt.lse,
                                                                like(dq, p.q), like(dk, p.k), like(dv, p.v), opt);
      EXPECT_EQ(bplan.blockLists, lists >= 0);
      attentionBackward(*cache, p.q, p.k, p.v, p.out, like(dout, p.out), p.opt.lse, like(dq, p.q), like(dk, p.k),
                        like(dv, p.v), opt);
      ctx->synchronize();
      const std::vector<uint16_t> gotDq = dq.toHost<uint16_t>(qn);
      expectGradient(gotDq, ref.dq, "dQ");
      expectGradient(dk.toHost<uint16_t>(kn), ref.dk, "dK");
      expectGradient(dv.toHost<uint16_t>(kn), ref.dv, "dV");
      size_t noKey = 0;
      for (size_t r = 0; r < p.rows(); ++r)
        if (std::isinf(fwd.lse[r])) {
          ++noKey;
          for (int x = 0; x < c.d; ++x)
            ASSERT_EQ(fromBF16(gotDq[r * c.d + x]), 0.f) << "dQ of row " << r << " (no key) must be 0";
        }
      if (lists == 0)
        std::printf("      %zu of %zu rows keep no key\n", noKey, p.rows());
      if (HasFatalFailure() || HasFailure())
        return;
    }
    // The forward refuses the backward's lists.
    AttentionOptions wrong = p.opt;
    wrong.blockMask = &prebuilt;
    EXPECT_THROW(attention(*cache, p.q, p.k, p.v, p.out, wrong), Error);
  }
}

TEST_F(BlockLists, CApiBuildsAndReadsABlockMask) {
  const Shape s{1, 2, 1, 777, 777};
  Problem p = make(s, 128, readExample("attention/document.mlir"), raggedDocuments(777, rng), true);
  const AttentionPlan plan = planAttention(p.q, p.k, p.v, p.out, p.opt);
  reference::AttentionProblem rp{s.b, s.hq, s.hkv, s.sq, s.skv, 128, p.qf.data(), p.kf.data(), p.vf.data(), {p.aux}, {}, {}, {}, 0};
  const reference::AttentionResult ref = reference::attentionReference(plan.module, rp);
  flare_session *session = flare_session_create(0);
  ASSERT_NE(session, nullptr) << flare_last_error();
  auto tensor = [](const TensorView &t) {
    flare_tensor c{};
    c.data = t.data;
    c.dtype = t.dtype == DType::BF16 ? FLARE_BF16 : t.dtype == DType::F32 ? FLARE_F32 : FLARE_I32;
    c.rank = static_cast<int32_t>(t.shape.size());
    int64_t stride = 1;
    for (int i = c.rank - 1; i >= 0; --i) {
      c.shape[i] = t.shape[i];
      c.strides[i] = stride;
      stride *= t.shape[i];
    }
    return c;
  };
  const flare_tensor q = tensor(p.q), k = tensor(p.k), v = tensor(p.v), out = tensor(p.out);
  const flare_tensor aux = tensor(p.opt.aux[0]);
  flare_attention_options opt{};
  opt.window_left = opt.window_right = -1;
  const std::string module = p.opt.module;
  opt.module = module.c_str();
  opt.num_aux = 1;
  opt.aux = &aux;
  opt.lse = tensor(p.opt.lse);
  flare_block_mask *mask = nullptr;
  ASSERT_EQ(flare_block_mask_build(session, &q, &k, &v, &out, &opt, nullptr, &mask), 0) << flare_last_error();
  opt.block_mask = mask;
  runAndCheck(p, ref, "C API, flare_block_mask_build", [&] {
    ASSERT_EQ(flare_attention(session, &q, &k, &v, &out, &opt, nullptr), 0) << flare_last_error();
  });
  flare_block_mask_destroy(mask);
  flare_session_destroy(session);
}

} // namespace
} // namespace flare::test
