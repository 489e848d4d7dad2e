//===- FakeDriverAttentionConfigTest.cpp - flarec reproduces what flare::attention launches -===//
//
// flare::attention decides a kernel's whole configuration (#attn.config) before compiling: the
// configured choice for the module, the call's tile override and the launch shape (single query
// blocks per turn up to 1k keys, a split last round where the launch splits on the device's SMs,
// block lists at head dim 128 without the persistent schedule on long launches).
// For calls of several masks (a custom module with an aux tensor among them), head dims, lengths and
// both architectures, each call compiles one kernel, and that kernel is compiled again by flarec
// from the call's module and its reported configuration alone (KernelInfo::attentionConfig): the PTX
// is the same, byte for byte. Compiles are real; the stand-in driver (132 SMs) loads; nothing runs.
// flare::attentionBackward compiles its kernels once, without the TMA fallback up to head dim 128.
//
//===----------------------------------------------------------------------===//
#include "FakeDriver.h"

#include "../../lib/Attention/AttentionInternal.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace flare::test {
namespace {

struct Call {
  const char *what;
  int64_t batch, heads, seq, headDim;
  AttentionOptions options;
  /// Switches the launched kernel's configuration must name, and must not (", x," form), where
  /// the call decides them: single query blocks per turn up to 1k keys, a split last round, ...
  std::vector<const char *> on = {}, off = {};
};

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(FakeDriver, FlarecReproducesTheKernelsAttentionLaunches) {
  std::error_code ec;
  const std::filesystem::path flarec = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "flarec";
  ASSERT_TRUE(std::filesystem::exists(flarec)) << flarec;
  AttentionOptions causal, window, sm80, tiled, document;
  causal.causal = true;
  window.windowLeft = 100;
  window.windowRight = 0;
  window.softcap = 30.f;
  sm80.arch = "sm_80";
  tiled.tile.blockM = tiled.tile.blockN = 64;
  tiled.tile.numWarps = 4;
  // Fake device addresses: nothing is launched, and nothing reads them.
  const uint64_t gib = uint64_t(1) << 30;
  document.module = readExample("attention/document.mlir");
  document.aux = {TensorView{40 * gib, DType::I32, {1500}, {}}};
  document.lse = TensorView{41 * gib, DType::F32, {1, 4, 1500}, {}};
  // Long launches of the same mask (31, 62 and 16 query blocks per SM): at head dims 128 and 64 the
  // persistent CTAs take their query blocks from a shared counter, at 256 one CTA per query block
  // beside a producer warpgroup, short launches too (bench/NOTES.md, "Query blocks from a shared
  // counter").
  AttentionOptions longDocument = document, longDocument64 = document, longDocument256 = document;
  longDocument.aux = {TensorView{40 * gib, DType::I32, {32768}, {}}};
  longDocument.lse = TensorView{41 * gib, DType::F32, {1, 16, 32768}, {}};
  longDocument64.module = readExample("attention/document.mlir");
  for (size_t at = longDocument64.module.find("x128x"); at != std::string::npos; at = longDocument64.module.find("x128x"))
    longDocument64.module.replace(at, 5, "x64x");
  longDocument64.aux = longDocument.aux;
  longDocument64.lse = TensorView{41 * gib, DType::F32, {1, 32, 32768}, {}};
  longDocument256.module = readExample("attention/document.mlir");
  for (size_t at = longDocument256.module.find("x128x"); at != std::string::npos; at = longDocument256.module.find("x128x"))
    longDocument256.module.replace(at, 5, "x256x");
  longDocument256.aux = longDocument.aux;
  longDocument256.lse = TensorView{41 * gib, DType::F32, {1, 8, 32768}, {}};
  AttentionOptions shortDocument256 = longDocument256;
  shortDocument256.lse = TensorView{41 * gib, DType::F32, {1, 8, 4096}, {}};
  // Persistent CTAs taking query blocks from a shared counter asked for where a mask has no lists
  // (tile.persistent = 2).
  AttentionOptions dynamicCausal = causal;
  dynamicCausal.tile.persistent = 2;
  // Packed sequences (cu_seqlens, causal): beside a producer warpgroup (head dim 128) the persistent
  // CTAs take their row blocks from a shared counter and skip those past their sequence; elsewhere one
  // CTA per row block (bench/NOTES.md vl3); tile.persistent = 1 asks for the fixed turns instead.
  AttentionOptions packed = causal;
  packed.cuSeqlensQ = packed.cuSeqlensK = TensorView{42 * gib, DType::I32, {10}, {}};
  packed.maxSeqlenQ = packed.maxSeqlenK = 4000;
  AttentionOptions packedFixedTurns = packed; // tile.persistent = 1: every G-th row block, no counter
  packedFixedTurns.tile.persistent = 1;
  const Call calls[] = {
      {"no mask, 512 keys (single instances, no split)", 1, 8, 512, 128, {}, {"invariant_a_in_registers"},
       {"pair_instances", "split_tail"}},
      {"no mask, 4k keys, a part-filled last round (split)", 1, 17, 4096, 128, {}, {"pair_instances", "split_tail"}},
      {"causal, 2k keys", 2, 4, 2048, 128, causal, {"rows_grow", "operands_after_first_stage"},
       {"split_tail", "dynamic_instances"}},
      {"head dim 64, causal, 512 keys (64 x 64 tiles)", 1, 4, 512, 64, causal, {"block_m = 64, block_n = 64, warps = 4"}},
      {"head dim 256, sliding window and softcap", 1, 4, 1000, 256, window, {"persistent", "lazy_rescale"},
       {"producer", "dynamic_instances"}},
      {"a tile configuration given by hand", 1, 4, 700, 128, tiled, {"block_m = 64, block_n = 64, warps = 4"}},
      {"sm_80", 1, 4, 300, 128, sm80, {"block_n = 64", "pair_instances"},
       {"overlap", "producer", "ping_pong", "uniform_warpgroup"}},
      {"a custom module: document ids from an aux tensor (lists, blocks from a counter)", 1, 4, 1500, 128, document,
       {"block_n = 128", "producer", "block_lists", "persistent", "dynamic_instances"}, {"split_tail", "pair_instances"}},
      {"document ids, 16 heads of 128, 32k keys: lists, blocks from a counter", 1, 16, 32768, 128, longDocument,
       {"block_n = 128", "producer", "block_lists", "persistent", "dynamic_instances"}, {"split_tail", "pair_instances"}},
      {"document ids, 32 heads of 64, 32k keys: lists, blocks from a counter", 1, 32, 32768, 64, longDocument64,
       {"block_lists", "persistent", "dynamic_instances"}, {"split_tail"}},
      {"document ids, 8 heads of 256, 32k keys: lists, one CTA per query block, a producer", 1, 8, 32768, 256,
       longDocument256, {"block_lists", "producer"}, {"persistent", "dynamic_instances", "split_tail"}},
      {"document ids, 8 heads of 256, 4k keys: lists, one CTA per query block, a producer", 1, 8, 4096, 256,
       shortDocument256, {"block_lists", "producer"}, {"persistent", "dynamic_instances", "split_tail"}},
      {"causal, 2k keys, blocks from a shared counter", 2, 4, 2048, 128, dynamicCausal,
       {"producer", "persistent", "dynamic_instances"}, {"pair_instances", "split_tail"}},
      {"packed sequences, head dim 128: blocks from a shared counter", 1, 16, 18000, 128, packed,
       {"producer", "persistent", "dynamic_instances"}, {"pair_instances", "split_tail"}},
      {"packed sequences, head dim 256: one CTA per row block", 1, 8, 18000, 256, packed,
       {"rows_grow"}, {"persistent", "dynamic_instances"}},
      {"packed sequences, head dim 64: one CTA per row block", 1, 32, 18000, 64, packed,
       {"rows_grow"}, {"persistent", "producer", "dynamic_instances"}},
      {"packed sequences, head dim 128, persistent = 1: fixed turns", 1, 16, 18000, 128, packedFixedTurns,
       {"producer", "persistent", "pair_instances"}, {"dynamic_instances"}},
  };
  int index = 0;
  std::set<std::string> seen; // arch, configuration and module of the kernels launched so far
  for (const Call &call : calls) {
    SCOPED_TRACE(call.what);
    const std::vector<int64_t> shape = {call.batch, call.heads, call.seq, call.headDim};
    auto view = [&](uint64_t at) { return TensorView{at * gib, DType::BF16, shape, {}}; };
    const AttentionPlan plan = planAttention(view(1), view(10), view(20), view(30), call.options);
    const std::string arch = detail::targetArch(*cache, call.options);
    std::vector<rt::CacheAnswer> answers;
    // As flare::attention chooses (without autotuning): the call's tile override, else the launch's.
    const AttentionTileConfig tile =
        call.options.tile != AttentionTileConfig{} ? call.options.tile : launchTileConfig(plan, call.options, arch);
    detail::attentionKernel(*cache, plan, tile, call.options.arch, &answers);
    ASSERT_EQ(answers.size(), 1u);
    const CompiledModule &launched = answers.back().module->compiled();
    const KernelInfo *info = launched.findKernel(plan.kernelName);
    ASSERT_NE(info, nullptr);
    const std::string config = info->attentionConfig;
    // One compile: decided before compiling, not read back from a first kernel (the kernel of a
    // module and configuration an earlier call launched is found in memory).
    const std::string key = launched.arch + (info->tmaRequired ? " tma " : " ") + config + "\n" + plan.module;
    const bool launchedBefore = !seen.insert(key).second;
    EXPECT_EQ(answers[0].source, launchedBefore ? rt::CacheSource::Memory : rt::CacheSource::Compiled);
    ASSERT_EQ(config.rfind("#attn.config<", 0), 0u) << config;
    const std::string items = ", " + config.substr(13, config.size() - 14) + ",";
    for (const char *name : call.on)
      EXPECT_NE(items.find(std::string(", ") + name + ","), std::string::npos) << name << " not in " << config;
    for (const char *name : call.off)
      EXPECT_EQ(items.find(std::string(", ") + name + ","), std::string::npos) << name << " in " << config;
    // The counters of a shared-counter schedule are a workspace without slots.
    EXPECT_EQ(info->splitSlotBytes == 0, items.find(", dynamic_instances,") != std::string::npos) << config;

    const std::filesystem::path input = cacheDir / ("call" + std::to_string(index) + ".mlir");
    const std::filesystem::path output = cacheDir / ("call" + std::to_string(index++) + ".ptx");
    std::filesystem::create_directories(cacheDir);
    std::ofstream(input) << plan.module;
    const std::string command = "'" + flarec.string() + "' --arch=" + launched.arch +
                                " --tma-fallback=" + (info->tmaRequired ? "false" : "true") +
                                " --attention-config='" + info->attentionConfig + "' '" + input.string() +
                                "' -o '" + output.string() + "' 2>&1";
    FILE *pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string diagnostics;
    char buffer[1024];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
      diagnostics.append(buffer, n);
    ASSERT_EQ(::pclose(pipe), 0) << command << "\n" << diagnostics;
    EXPECT_TRUE(readFile(output) == launched.ptx) << "flarec's PTX differs from the launched kernel's: " << command;
  }
}

// Decoding from a paged cache splits the keys (one query, batch 1: 8 instances of packed GQA rows on
// 132 SMs) in steps of 64 keys, or of 32 where the blocks are gathered in pieces of 16 keys (page
// sizes 16 and 48; bench/NOTES.md d8), whose K and V blocks are then two row pieces each, unless the
// parts are short (8k keys: 16 parts of 512 keys take 64 keys a step again, d16); at batch 64 (not
// split) the packed rows take 64-row tiles on one warpgroup beside a producer warpgroup, 64 keys a
// step over those pieces and 128 otherwise (d14), one CTA per instance from 2k keys and persistent
// at 1k (d18).
TEST_F(FakeDriver, PagedDecodingTakesSmallerStepsOverPagesOf16Keys) {
  const uint64_t gib = uint64_t(1) << 30;
  for (int64_t page : {16, 48, 64, 256}) {
    SCOPED_TRACE("page size " + std::to_string(page));
    // The configuration of the kernel flare::attention launches for one query of `batch` sequences
    // of `keys` keys (32 query heads over the 8 of K and V) whose pages the table shares out among
    // them; "" where none was compiled.
    auto launched = [&](int64_t batch, int64_t keys = 65536) -> std::string {
      const int64_t pages = (keys + page - 1) / page;
      const TensorView k{10 * gib, DType::BF16, {pages, 8, page, 128}, {}};
      const TensorView v{20 * gib, DType::BF16, {pages, 8, page, 128}, {}};
      const TensorView q{1 * gib, DType::BF16, {batch, 32, 1, 128}, {}};
      const TensorView o{2 * gib, DType::BF16, {batch, 32, 1, 128}, {}};
      AttentionOptions options;
      options.arch = "sm_90a";
      options.kvLens = TensorView{30 * gib, DType::I32, {batch}, {}};
      options.pageTable = TensorView{31 * gib, DType::I32, {batch, pages / batch}, {}};
      const AttentionPlan plan = planAttention(q, k, v, o, options);
      std::vector<rt::CacheAnswer> answers;
      detail::attentionKernel(*cache, plan, launchTileConfig(plan, options, "sm_90a"), options.arch, &answers);
      if (answers.empty())
        return "";
      const CompiledModule &compiled = answers.back().module->compiled();
      const KernelInfo *info = compiled.findKernel(plan.kernelName);
      EXPECT_NE(compiled.ptx.find("cp.async.bulk.tensor"), std::string::npos) << "K and V by TMA";
      return info ? info->attentionConfig : "";
    };
    const bool smallPieces = (page & -page) < 32;
    // One sequence: 8 instances on 132 SMs, split.
    const std::string one = launched(1);
    EXPECT_NE(one.find("split_kv"), std::string::npos) << one;
    EXPECT_NE(one.find(smallPieces ? "block_n = 32," : "block_n = 64,"), std::string::npos) << one;
    // Parts of 512 keys: 64 keys a step whatever the pages.
    const std::string shortParts = launched(1, 8192);
    EXPECT_NE(shortParts.find("split_kv"), std::string::npos) << shortParts;
    EXPECT_NE(shortParts.find("block_n = 64,"), std::string::npos) << shortParts;
    // 64 sequences of 1024 keys: 512 instances, not split: 64 rows and 4 warps beside a producer
    // warpgroup, 64 keys per step over pieces of 16 keys, 128 otherwise.
    const std::string many = launched(64);
    EXPECT_EQ(many.find("split_kv"), std::string::npos) << many;
    EXPECT_NE(many.find(smallPieces ? "block_m = 64, block_n = 64, warps = 4," : "block_m = 64, block_n = 128, warps = 4,"),
              std::string::npos)
        << many;
    EXPECT_NE(many.find(" producer,"), std::string::npos) << many;
    // 1024 keys a sequence there: persistent; from 2k one CTA per instance (bench/NOTES.md d18).
    EXPECT_NE(many.find(" persistent,"), std::string::npos) << many;
    const std::string manyLong = launched(64, 64 * 8192);
    EXPECT_EQ(manyLong.find("split_kv"), std::string::npos) << manyLong;
    EXPECT_NE(manyLong.find(" producer,"), std::string::npos) << manyLong;
    EXPECT_EQ(manyLong.find("persistent"), std::string::npos) << manyLong;
  }
}

// At head dims 64 and 256 a block of a paged cache stays within one page (attn::keyBlocksSpanPages):
// over pages of 16 keys, 16 keys a step. A split launch whose parts are short (8k keys: 16 parts of
// 512) takes 64 keys a step across pages instead, and so do long parts at head dim 64 (64k keys: 16
// parts of 4096), not at 256 (bench/NOTES.md d16).
TEST_F(FakeDriver, SplitDecodingSpansPagesOf16KeysWhereThePartsPay) {
  const uint64_t gib = uint64_t(1) << 30;
  for (int64_t d : {64, 256}) {
    for (int64_t keys : {8192, 65536}) {
      SCOPED_TRACE("head dim " + std::to_string(d) + ", " + std::to_string(keys) + " keys");
      const int64_t page = 16, pages = keys / page;
      const TensorView k{10 * gib, DType::BF16, {pages, 8, page, d}, {}};
      const TensorView v{20 * gib, DType::BF16, {pages, 8, page, d}, {}};
      const TensorView q{1 * gib, DType::BF16, {1, 32, 1, d}, {}};
      const TensorView o{2 * gib, DType::BF16, {1, 32, 1, d}, {}};
      AttentionOptions options;
      options.arch = "sm_90a";
      options.kvLens = TensorView{30 * gib, DType::I32, {1}, {}};
      options.pageTable = TensorView{31 * gib, DType::I32, {1, pages}, {}};
      const AttentionPlan plan = planAttention(q, k, v, o, options);
      std::vector<rt::CacheAnswer> answers;
      detail::attentionKernel(*cache, plan, launchTileConfig(plan, options, "sm_90a"), options.arch, &answers);
      ASSERT_FALSE(answers.empty());
      const KernelInfo *info = answers.back().module->compiled().findKernel(plan.kernelName);
      ASSERT_NE(info, nullptr);
      const std::string config = info->attentionConfig;
      EXPECT_NE(config.find("split_kv"), std::string::npos) << config;
      const bool spans = keys == 8192 || d == 64;
      EXPECT_NE(config.find(spans ? "block_n = 64," : "block_n = 16,"), std::string::npos) << config;
    }
  }
}

// The backward's views are checked as the forward's (16-byte aligned: their maps encode), so its
// kernels leave out the element-wise copies for maps that do not (CompileOptions::tmaFallback off):
// one compile, kernels marked tmaRequired, the same entry for a second call, at every head dim.
TEST_F(FakeDriver, BackwardCompilesOnceWithoutTheTmaFallback) {
  const uint64_t gib = uint64_t(1) << 30;
  int jits = 0, launches = 0;
  for (int64_t d : {128, 256}) {
    SCOPED_TRACE("head dim " + std::to_string(d));
    auto view = [&](uint64_t at, int64_t heads) { return TensorView{at * gib, DType::BF16, {2, heads, 1000, d}, {}}; };
    const TensorView lse{50 * gib, DType::F32, {2, 8, 1000}, {}};
    AttentionOptions options;
    options.causal = true;
    options.arch = ctx->arch(); // the plan names the dV kernel where the arch is known
    const AttentionBackwardPlan plan = planAttentionBackward(view(1, 8), view(10, 2), view(20, 2), view(30, 8),
                                                             view(40, 8), lse, view(60, 8), view(70, 2), view(80, 2), options);
    for (int call = 0; call < 2; ++call)
      attentionBackward(*cache, view(1, 8), view(10, 2), view(20, 2), view(30, 8), view(40, 8), lse, view(60, 8),
                        view(70, 2), view(80, 2), options);
    EXPECT_EQ(fake.jits() - jits, 1) << "one compile for both calls";
    const int kernels = plan.dvKernel.empty() ? 3 : 4; // preprocess, dK/dV (or dK, dV), dQ
    EXPECT_EQ(fake.launches() - launches, 2 * kernels);
    jits = fake.jits();
    launches = fake.launches();
    CompileOptions compile;
    compile.arch = ctx->arch();
    compile.backward = true;
    compile.deterministic = true; // sm_90a: dQ has a kernel of its own
    compile.tmaFallback = false;
    rt::CacheAnswer answer = cache->lookup(plan.forward.module, compile, "<test>");
    EXPECT_EQ(answer.source, rt::CacheSource::Memory) << "the calls' kernels are the ones without the fallback";
    for (const std::string *name : {&plan.preprocessKernel, &plan.mainKernel, &plan.dvKernel, &plan.dqKernel}) {
      if (name->empty())
        continue;
      const KernelInfo *info = answer.module->compiled().findKernel(*name);
      ASSERT_NE(info, nullptr) << *name;
      if (!info->tensorMaps.empty()) {
        EXPECT_TRUE(info->tmaRequired) << *name;
      }
    }
    EXPECT_FALSE(answer.module->compiled().findKernel(plan.mainKernel)->tensorMaps.empty());
  }
}

// A mask the compiler cannot classify (document ids): each backward call launches the classifier of
// its block lists before its three kernels (one compile for both calls); with
// tile.blockLists = -1 another compile, three launches a call.
TEST_F(FakeDriver, BackwardOverBlockListsLaunchesTheirClassifiersFirst) {
  const uint64_t gib = uint64_t(1) << 30;
  auto view = [&](uint64_t at, int64_t heads) { return TensorView{at * gib, DType::BF16, {1, heads, 1000, 128}, {}}; };
  const TensorView lse{50 * gib, DType::F32, {1, 4, 1000}, {}};
  AttentionOptions options;
  options.module = readExample("attention/document.mlir");
  options.aux = {TensorView{90 * gib, DType::I32, {1000}, {}}};
  options.arch = ctx->arch();
  int jits = 0, launches = 0;
  for (int lists : {0, -1}) {
    SCOPED_TRACE(lists ? "no lists" : "lists");
    options.tile.blockLists = lists;
    const AttentionBackwardPlan plan = planAttentionBackward(view(1, 4), view(10, 2), view(20, 2), view(30, 4),
                                                             view(40, 4), lse, view(60, 4), view(70, 2), view(80, 2), options);
    EXPECT_EQ(plan.blockLists, lists == 0);
    for (int call = 0; call < 2; ++call)
      attentionBackward(*cache, view(1, 4), view(10, 2), view(20, 2), view(30, 4), view(40, 4), lse, view(60, 4),
                        view(70, 2), view(80, 2), options);
    EXPECT_EQ(fake.jits() - jits, 1) << "one compile for both calls";
    const int kernels = 3 + (plan.dvKernel.empty() ? 0 : 1) + (plan.listsKernel.empty() ? 0 : 1);
    EXPECT_EQ(kernels, lists == 0 ? 4 : 3) << "the lists of both kinds in one launch";
    EXPECT_EQ(plan.dqLists, lists == 0) << "dQ has a kernel of its own on " << ctx->arch();
    EXPECT_EQ(fake.launches() - launches, 2 * kernels);
    jits = fake.jits();
    launches = fake.launches();
  }
  // Lists built once (buildBackwardBlockMask: one classifier launch, no compile of its own) and read by
  // a call, which then launches its three kernels alone; refused by the forward and by a backward of
  // another length or another compilation.
  options.tile.blockLists = 0;
  const BlockMask mask = buildBackwardBlockMask(*cache, view(1, 4), view(10, 2), view(20, 2), view(30, 4), lse, options);
  EXPECT_TRUE(mask.backward);
  EXPECT_EQ(fake.jits() - jits, 0);
  EXPECT_EQ(fake.launches() - launches, 1);
  AttentionOptions withMask = options;
  withMask.blockMask = &mask;
  attentionBackward(*cache, view(1, 4), view(10, 2), view(20, 2), view(30, 4), view(40, 4), lse, view(60, 4),
                    view(70, 2), view(80, 2), withMask);
  EXPECT_EQ(fake.launches() - launches, 1 + 3);
  auto expectError = [&](const std::function<void()> &call, const std::string &needle) {
    try {
      call();
      ADD_FAILURE() << "expected an error containing '" << needle << "'";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  AttentionOptions forward = withMask;
  forward.lse = lse;
  expectError([&] { attention(*cache, view(1, 4), view(10, 2), view(20, 2), view(30, 4), forward); },
              "holds the backward's lists");
  auto shorter = [&](uint64_t at, int64_t heads) { return TensorView{at * gib, DType::BF16, {1, heads, 900, 128}, {}}; };
  const TensorView shorterLse{50 * gib, DType::F32, {1, 4, 900}, {}};
  expectError([&] {
    attentionBackward(*cache, shorter(1, 4), view(10, 2), view(20, 2), shorter(30, 4), shorter(40, 4), shorterLse,
                      shorter(60, 4), view(70, 2), view(80, 2), withMask);
  }, "sequence length");
  BlockMask other = mask; // as if built for another compilation (arch, dQ summed by atomics)
  other.config += ";other";
  AttentionOptions withOther = options;
  withOther.tile.blockLists = 0;
  withOther.blockMask = &other;
  expectError([&] {
    attentionBackward(*cache, view(1, 4), view(10, 2), view(20, 2), view(30, 4), view(40, 4), lse, view(60, 4),
                      view(70, 2), view(80, 2), withOther);
  }, "backward compilation");
  options.tile.blockLists = -1;
  expectError([&] { buildBackwardBlockMask(*cache, view(1, 4), view(10, 2), view(20, 2), view(30, 4), lse, options); },
              "visits no block lists");
}

// A decoding call whose keys split among CTAs launches the parts, then <name>_combine; on sm_90a the
// combine waits for the parts (tile.wait_prior_grids), and with FLARE_DEPENDENT_LAUNCH=1 (ctest runs
// this test a second time so) it is launched as a dependent launch, so that its CTAs may start while
// the last parts end. Unsplit calls and sm_80's kernels launch as before.
TEST_F(FakeDriver, SplitDecodingLaunchesItsCombineAsADependentLaunch) {
  const char *env = std::getenv("FLARE_DEPENDENT_LAUNCH");
  const int dependent = env && std::string(env) == "1" ? 1 : 0;
  const uint64_t gib = uint64_t(1) << 30;
  auto launches = [&](int64_t batch, const char *arch) {
    const TensorView q{1 * gib, DType::BF16, {batch, 32, 1, 128}, {}};
    const TensorView o{2 * gib, DType::BF16, {batch, 32, 1, 128}, {}};
    const TensorView k{10 * gib, DType::BF16, {batch, 8, 65536, 128}, {}};
    const TensorView v{40 * gib, DType::BF16, {batch, 8, 65536, 128}, {}};
    AttentionOptions options;
    options.arch = arch;
    fake.reset();
    attention(*cache, q, k, v, o, options);
    return std::pair{fake.launches(), fake.dependentLaunches()};
  };
  EXPECT_EQ(launches(1, "sm_90a"), std::pair(2, dependent)) << "the parts, then the combine (a dependent launch when asked)";
  EXPECT_EQ(launches(64, "sm_90a"), std::pair(1, 0)) << "64 sequences fill the device: not split";
  EXPECT_EQ(launches(1, "sm_80").second, 0) << "no grid dependencies before sm_90";
  // The metadata says which kernel may be launched that way.
  const TensorView q{1 * gib, DType::BF16, {1, 32, 1, 128}, {}}, o{2 * gib, DType::BF16, {1, 32, 1, 128}, {}};
  const TensorView k{10 * gib, DType::BF16, {1, 8, 65536, 128}, {}}, v{40 * gib, DType::BF16, {1, 8, 65536, 128}, {}};
  AttentionOptions options;
  options.arch = "sm_90a";
  const AttentionPlan plan = planAttention(q, k, v, o, options);
  std::vector<rt::CacheAnswer> answers;
  detail::attentionKernel(*cache, plan, launchTileConfig(plan, options, "sm_90a"), options.arch, &answers);
  ASSERT_FALSE(answers.empty());
  const CompiledModule &compiled = answers.back().module->compiled();
  const KernelInfo *parts = compiled.findKernel(plan.kernelName);
  const KernelInfo *combine = compiled.findKernel(plan.kernelName + "_combine");
  ASSERT_TRUE(parts && combine);
  EXPECT_FALSE(parts->dependentLaunch);
  EXPECT_TRUE(combine->dependentLaunch);
  EXPECT_NE(compiled.ptx.find("griddepcontrol.wait"), std::string::npos);
  EXPECT_NE(compiled.ptx.find("griddepcontrol.launch_dependents"), std::string::npos);
}

} // namespace
} // namespace flare::test
