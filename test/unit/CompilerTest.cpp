//===- CompilerTest.cpp - The in-process compiler API (no GPU needed) ------===//
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"

#include "../ExampleText.h"
#include "ExampleSource.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace {

using flare::test::readExample;
using flare::test::withHeadDim;

TEST(Compiler, CompilesTheExamplesToPTXWithMetadata) {
  for (const char *arch : {"sm_90a", "sm_80"}) {
    SCOPED_TRACE(arch);
    flare::CompileOptions opts;
    opts.arch = arch;
    flare::CompiledModule m = flare::compileToPTX(readExample("tile/softmax.mlir"), opts, "softmax.mlir");
    EXPECT_NE(m.ptx.find(std::string(".target ") + arch), std::string::npos);
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels[0].name, "softmax");
    EXPECT_EQ(m.kernels[0].numThreads, 128);
    EXPECT_GT(m.kernels[0].sharedBytes, 0) << "the row reduction crosses warps";
    EXPECT_EQ(m.kernels[0].args,
              (std::vector<flare::ArgKind>{flare::ArgKind::Pointer, flare::ArgKind::Pointer, flare::ArgKind::I32,
                                           flare::ArgKind::I32, flare::ArgKind::I32, flare::ArgKind::I32}));
  }
}

// The metadata says which kernels move register budgets between warpgroups (the runtime then has the
// driver compile the PTX whole): the head-dim-128 attention kernel on sm_90a (a producer warpgroup),
// not the head-dim-64 one (two CTAs per SM) nor any sm_80 kernel.
TEST(Compiler, MetadataMarksKernelsThatMoveRegisterBudgets) {
  const std::string d128 = readExample("attention/plain.mlir"), d64 = withHeadDim(d128, 64);
  struct Case {
    const std::string *source;
    const char *arch;
    bool budgets;
  };
  for (const Case &c : {Case{&d128, "sm_90a", true}, Case{&d64, "sm_90a", false}, Case{&d128, "sm_80", false}}) {
    SCOPED_TRACE(std::string(c.arch) + (c.source == &d64 ? ", head dim 64" : ", head dim 128"));
    flare::CompileOptions opts;
    opts.arch = c.arch;
    flare::CompiledModule m = flare::compileToPTX(*c.source, opts, "plain.mlir");
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels[0].registerBudgets, c.budgets);
    EXPECT_EQ(m.ptx.find("setmaxnreg") != std::string::npos, c.budgets);
  }
}

// Without the TMA fallback an attention kernel is marked as needing its maps, ignores the "maps
// encoded" flag (same parameters) and is smaller: no element-wise copies into the ring.
TEST(Compiler, KernelsWithoutTheTmaFallbackRequireTheirMaps) {
  const std::string causal = readExample("attention/causal.mlir");
  flare::CompileOptions with, without;
  without.tmaFallback = false;
  flare::CompiledModule a = flare::compileToPTX(causal, with, "causal.mlir");
  flare::CompiledModule b = flare::compileToPTX(causal, without, "causal.mlir");
  ASSERT_EQ(a.kernels.size(), 1u);
  ASSERT_EQ(b.kernels.size(), 1u);
  ASSERT_FALSE(a.kernels[0].tensorMaps.empty());
  EXPECT_FALSE(a.kernels[0].tmaRequired);
  EXPECT_TRUE(b.kernels[0].tmaRequired);
  EXPECT_EQ(a.kernels[0].args, b.kernels[0].args);
  EXPECT_EQ(a.kernels[0].tensorMaps.size(), b.kernels[0].tensorMaps.size());
  EXPECT_LT(b.ptx.size(), a.ptx.size() * 9 / 10) << "with " << a.ptx.size() << " B, without " << b.ptx.size() << " B";
  // Kernels without tensor maps (sm_80) are not marked.
  flare::CompileOptions sm80 = without;
  sm80.arch = "sm_80";
  flare::CompiledModule c = flare::compileToPTX(causal, sm80, "causal.mlir");
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_TRUE(c.kernels[0].tensorMaps.empty());
  EXPECT_FALSE(c.kernels[0].tmaRequired);
}

TEST(Compiler, TheAttentionConfigDecidesTheKernel) {
  // Head dim 128 without a mask: the configured kernel may split the last round (a hand-over slot);
  // the same configuration without split_tail has none, and other PTX. Each configuration is its
  // own cache key, and each kernel reports the configuration it was compiled with.
  const std::string plain = readExample("attention/plain.mlir");
  auto only = [](const flare::CompiledModule &m) {
    EXPECT_EQ(m.kernels.size(), 1u);
    return m.kernels.empty() ? flare::KernelInfo{} : m.kernels[0];
  };
  flare::CompiledModule configured = flare::compileToPTX(plain, {}, "plain.mlir");
  const flare::KernelInfo split = only(configured);
  ASSERT_NE(split.attentionConfig.find(", split_tail"), std::string::npos) << split.attentionConfig;
  EXPECT_GE(split.splitSlotBytes, 0);
  flare::CompileOptions unsplit;
  unsplit.attentionConfig = split.attentionConfig;
  unsplit.attentionConfig.erase(unsplit.attentionConfig.find(", split_tail"), 12);
  EXPECT_NE(unsplit.fingerprint(), flare::CompileOptions{}.fingerprint());
  flare::CompiledModule other = flare::compileToPTX(plain, unsplit, "plain.mlir");
  EXPECT_LT(only(other).splitSlotBytes, 0);
  EXPECT_EQ(only(other).attentionConfig, unsplit.attentionConfig);
  EXPECT_NE(other.ptx, configured.ptx);
  // The configured choice given back is the same kernel.
  flare::CompileOptions same;
  same.attentionConfig = split.attentionConfig;
  EXPECT_EQ(flare::compileToPTX(plain, same, "plain.mlir").ptx, configured.ptx);
}

TEST(Compiler, SplitsOnlyLaunchesWithAPartLastRoundOfLongInstances) {
  // 136 instances of 16 steps on 132 CTAs: one whole round, then the rest split.
  EXPECT_TRUE(flare::splitsLaunch(136, 132, 16));
  EXPECT_TRUE(flare::splitsLaunch(2112, 132 - 1, 64));
  // No part-filled last round: as many instances as CTAs or fewer, or a multiple of them.
  EXPECT_FALSE(flare::splitsLaunch(132, 132, 64));
  EXPECT_FALSE(flare::splitsLaunch(100, 132, 64));
  EXPECT_FALSE(flare::splitsLaunch(2112, 132, 64));
  // Instances shorter than kSplitMinSteps are not worth the hand-over.
  EXPECT_FALSE(flare::splitsLaunch(136, 132, flare::kSplitMinSteps - 1));
  EXPECT_FALSE(flare::splitsLaunch(136, 0, 16));
  // The tail's steps must stay within the schedule's 32-bit arithmetic.
  const int64_t mostSteps = (flare::kSplitMaxStepsTimesCtas - 1) / 132;
  EXPECT_TRUE(flare::splitsLaunch(136, 132, mostSteps));
  EXPECT_FALSE(flare::splitsLaunch(136, 132, mostSteps + 1));
}

TEST(Compiler, ParseErrorsCarryTheirLocation) {
  try {
    flare::compileToPTX("func.func @k() {\n  %x = arith.constant : i32\n}\n", {}, "bad.mlir");
    FAIL() << "expected a flare::Error";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find("bad.mlir:2:"), std::string::npos) << e.what();
    EXPECT_EQ(e.cuResult(), 0);
  }
}

TEST(Compiler, VerifierErrorsCarryTheirLocation) {
  const char *src = R"(func.func @k(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %v[%n] : !tile.view<f32, 1> -> tensor<128xf16>
  return
})";
  try {
    flare::compileToPTX(src, {}, "types.mlir");
    FAIL() << "expected a flare::Error";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find("types.mlir:4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("element type"), std::string::npos) << e.what();
  }
}

// Text nested deeper than the parser's recursion can take is an error with its place, through every
// entry point that parses a user's text; it never overflows the stack (here 100,000 levels).
TEST(Compiler, DeeplyNestedTextIsAnErrorNotAStackOverflow) {
  const std::string deep = "func.func @f() attributes {a = " + std::string(100000, '[') + std::string(100000, ']') +
                           "} { return }";
  auto expectNestingError = [](auto &&call, const char *what) {
    try {
      call();
      ADD_FAILURE() << what << " accepted deeply nested text";
    } catch (const flare::Error &e) {
      EXPECT_NE(std::string(e.what()).find("nests brackets more than 256 levels deep"), std::string::npos)
          << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("deep.mlir:1:"), std::string::npos) << what << ": " << e.what();
    }
  };
  expectNestingError([&] { flare::compileToPTX(deep, {}, "deep.mlir"); }, "compileToPTX");
  expectNestingError([&] { flare::canonicalizeIR(deep, "deep.mlir"); }, "canonicalizeIR");
  // 250 nested regions still parse (the limit leaves room for real kernels).
  std::string regions = "func.func @g(%c: i1) {\n";
  for (int i = 0; i < 120; ++i)
    regions += "scf.if %c {\n";
  regions += std::string(120, '}') + "\nreturn\n}\n";
  EXPECT_NO_THROW(flare::canonicalizeIR(regions, "regions.mlir"));
}

TEST(Compiler, RejectsBadOptions) {
  flare::CompileOptions opts;
  opts.arch = "sm_99";
  EXPECT_THROW(flare::compileToPTX(readExample("tile/vector_add.mlir"), opts), flare::Error);
  opts.arch = "sm_90a";
  opts.optLevel = 7;
  EXPECT_THROW(flare::compileToPTX(readExample("tile/vector_add.mlir"), opts), flare::Error);
}

TEST(Compiler, CanonicalIRIgnoresFormattingAndComments) {
  std::string a = readExample("tile/vector_add.mlir");
  std::string b = "// another comment\n" + a;
  EXPECT_EQ(flare::canonicalizeIR(a), flare::canonicalizeIR(b));
  EXPECT_NE(flare::canonicalizeIR(a), flare::canonicalizeIR(readExample("tile/softmax.mlir")));
  EXPECT_THROW(flare::canonicalizeIR("this is not IR"), flare::Error);
}

} // namespace
