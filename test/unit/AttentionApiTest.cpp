//===- AttentionApiTest.cpp - flare::attention's argument checks and IR, without a GPU ===//
//
// planAttention checks everything attention() would launch with, so bad arguments are found here
// with no device: each test names one wrong argument and the words its error must contain. The
// modules the options describe are compiled to PTX (the same pipeline the JIT runs) and evaluated by
// the float64 reference against a direct computation of the intended mask.
//
//===----------------------------------------------------------------------===//
#include "flare/Attention.h"
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"
#include "flare/Reference/Attention.h"

#include "ExampleSource.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <cmath>
#include <optional>
#include <random>

namespace {

using flare::AttentionOptions;
using flare::DType;
using flare::TensorView;

// Fake, 16-byte aligned device addresses: planAttention never dereferences them.
TensorView view(uint64_t addr, std::vector<int64_t> shape, DType dtype = DType::BF16, std::vector<int64_t> strides = {}) {
  return TensorView{addr, dtype, std::move(shape), std::move(strides)};
}

struct Args {
  TensorView q = view(0x10000, {2, 8, 100, 128});
  TensorView k = view(0x20000, {2, 2, 300, 128});
  TensorView v = view(0x30000, {2, 2, 300, 128});
  TensorView out = view(0x40000, {2, 8, 100, 128});
  AttentionOptions options;
};

void expectError(const Args &a, const std::string &needle) {
  try {
    flare::planAttention(a.q, a.k, a.v, a.out, a.options);
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(AttentionApi, ValidArgumentsGiveTheKernelABI) {
  Args a;
  a.options.causal = true;
  a.options.lse = view(0x50000, {2, 8, 100}, DType::F32);
  flare::AttentionPlan plan = flare::planAttention(a.q, a.k, a.v, a.out, a.options);
  EXPECT_EQ(plan.kernelName, "flare_attention");
  EXPECT_EQ(plan.headsQ, 8);
  EXPECT_EQ(plan.headsKV, 2);
  EXPECT_TRUE(plan.hasLse);
  // 5 pointers, 4 sizes, 12 strides.
  ASSERT_EQ(plan.args.size(), 21u);
  EXPECT_EQ(plan.args.kinds()[0], flare::ArgKind::Pointer);
  EXPECT_EQ(plan.args.kinds()[5], flare::ArgKind::I32);
  EXPECT_EQ(plan.args.kinds()[9], flare::ArgKind::I64);
  // q's strides (batch, head, row) of a contiguous [2, 8, 100, 128] tensor.
  EXPECT_EQ(*static_cast<const int64_t *>(plan.args.value(9)), 8 * 100 * 128);
  EXPECT_EQ(*static_cast<const int64_t *>(plan.args.value(10)), 100 * 128);
  EXPECT_EQ(*static_cast<const int64_t *>(plan.args.value(11)), 128);
  EXPECT_NE(plan.module.find("mask_mod"), std::string::npos);
}

/// A paged cache: 40 pages of 64 keys in vLLM's [num_pages, page_size, Hkv, D] memory, 2 sequences
/// of at most 5 pages.
Args pagedArgs() {
  Args a;
  a.q = view(0x10000, {2, 8, 1, 128});
  a.out = view(0x40000, {2, 8, 1, 128});
  a.k = view(0x100000, {40, 2, 64, 128}, DType::BF16, {64 * 2 * 128, 128, 2 * 128, 1});
  a.v = view(0x900000, {40, 2, 64, 128}, DType::BF16, {64 * 2 * 128, 128, 2 * 128, 1});
  a.options.kvLens = view(0x60000, {2}, DType::I32);
  a.options.pageTable = view(0x70000, {2, 5}, DType::I32);
  return a;
}

TEST(AttentionApi, PagedCachesGiveTheCacheArguments) {
  Args a = pagedArgs();
  flare::AttentionPlan plan = flare::planAttention(a.q, a.k, a.v, a.out, a.options);
  EXPECT_EQ(plan.pageSize, 64);
  EXPECT_EQ(plan.seqKV, 5 * 64); // max_pages x page_size
  // 4 pointers, 4 sizes, 12 strides, the lengths, the table, its row stride, the rows a page
  // advances (page stride / row stride) and the cache's rows.
  ASSERT_EQ(plan.args.size(), 25u);
  EXPECT_EQ(plan.args.kinds()[20], flare::ArgKind::Pointer);
  EXPECT_EQ(plan.args.kinds()[21], flare::ArgKind::Pointer);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(22)), 5);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(23)), 64);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(24)), 40 * 64);
  EXPECT_NE(plan.module.find("page_table(%pages : tensor<?x?xi32>)"), std::string::npos) << plan.module;
  EXPECT_NE(plan.module.find("tensor<?x?x64x128xbf16>"), std::string::npos) << plan.module;
  // [num_pages, Hkv, page_size, D] contiguous: a page advances Hkv x page_size rows of a head's view.
  a.k.strides = a.v.strides = {};
  plan = flare::planAttention(a.q, a.k, a.v, a.out, a.options);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(23)), 2 * 64);
  // Lengths without pages: contiguous K and V, one more argument.
  Args lens;
  lens.options.kvLens = view(0x60000, {2}, DType::I32);
  plan = flare::planAttention(lens.q, lens.k, lens.v, lens.out, lens.options);
  ASSERT_EQ(plan.args.size(), 21u);
  EXPECT_NE(plan.module.find("kv_lens(%lens : tensor<?xi32>)"), std::string::npos) << plan.module;
}

TEST(AttentionApi, RejectsBadCaches) {
  { Args a = pagedArgs(); a.options.kvLens = {}; expectError(a, "needs kvLens"); }
  { Args a = pagedArgs(); a.options.pageTable.data += 2; expectError(a, "pageTable must be 4-byte aligned"); }
  {
    // A row of a larger table (and an element of the lengths) is a valid table of one sequence.
    Args a = pagedArgs();
    a.q.shape[0] = a.out.shape[0] = 1;
    a.options.pageTable = view(0x70000 + 5 * 4, {1, 5}, DType::I32);
    a.options.kvLens = view(0x60000 + 4, {1}, DType::I32);
    EXPECT_NO_THROW(flare::planAttention(a.q, a.k, a.v, a.out, a.options));
  }
  { Args a = pagedArgs(); a.options.kvLens.shape = {3}; expectError(a, "kvLens must be contiguous i32 [B]"); }
  { Args a = pagedArgs(); a.options.kvLens.dtype = DType::I64; expectError(a, "kvLens must be contiguous i32"); }
  { Args a = pagedArgs(); a.options.pageTable.dtype = DType::I64; expectError(a, "pageTable must be i32"); }
  { Args a = pagedArgs(); a.options.pageTable.shape = {3, 5}; expectError(a, "pageTable must be i32 [B, max_pages]"); }
  { Args a = pagedArgs(); a.options.pageTable.strides = {1, 2}; expectError(a, "unit stride along its rows"); }
  {
    Args a = pagedArgs();
    a.k.shape[2] = a.v.shape[2] = 24;
    expectError(a, "page_size a multiple of 16 up to 256");
  }
  { Args a = pagedArgs(); a.v.strides = {}; expectError(a, "v must have k's strides"); }
  {
    Args a = pagedArgs();
    a.k.strides = a.v.strides = {64 * 2 * 128 + 8, 128, 2 * 128, 1};
    expectError(a, "must be a multiple of its row stride");
  }
  {
    Args a = pagedArgs();
    a.k.strides = a.v.strides = {32 * 2 * 128, 128, 2 * 128, 1};
    expectError(a, "pages must not overlap");
  }
  {
    Args a = pagedArgs();
    a.options.pageTable.shape = {2, int64_t(1) << 23};
    expectError(a, "exceed the longest sequence");
  }
  {
    // A custom module must read the same kind of cache as the call describes.
    Args a = pagedArgs();
    a.options.module = flare::attentionModule({}, DType::BF16, 128);
    expectError(a, "the custom module takes no kv_lens");
  }
}

/// Three packed sequences of at most 300 queries and 500 keys in 1000 and 1500 rows.
Args packedArgs() {
  Args a;
  a.q = view(0x10000, {1, 8, 1000, 128});
  a.out = view(0x400000, {1, 8, 1000, 128});
  a.k = view(0x800000, {1, 2, 1500, 128});
  a.v = view(0xc00000, {1, 2, 1500, 128});
  a.options.cuSeqlensQ = view(0x60000, {4}, DType::I32);
  a.options.cuSeqlensK = view(0x70000, {4}, DType::I32);
  a.options.maxSeqlenQ = 300;
  a.options.maxSeqlenK = 500;
  return a;
}

TEST(AttentionApi, PackedSequencesGiveTheirArguments) {
  Args a = packedArgs();
  a.options.causal = true;
  a.options.lse = view(0x50000, {1, 8, 1000}, DType::F32);
  flare::AttentionPlan plan = flare::planAttention(a.q, a.k, a.v, a.out, a.options);
  EXPECT_EQ(plan.batch, 3);
  EXPECT_EQ(plan.seqQ, 300);
  EXPECT_EQ(plan.seqKV, 500);
  EXPECT_EQ(plan.totalQ, 1000);
  EXPECT_EQ(plan.totalKV, 1500);
  EXPECT_FALSE(plan.packableGqa);
  // 5 pointers, 4 sizes (seq_q and seq_kv the totals), 12 strides, the two offset tensors.
  ASSERT_EQ(plan.args.size(), 23u);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(7)), 1000);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(8)), 1500);
  EXPECT_EQ(plan.args.kinds()[21], flare::ArgKind::Pointer);
  EXPECT_EQ(plan.args.kinds()[22], flare::ArgKind::Pointer);
  EXPECT_NE(plan.module.find("cu_seqlens(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)"), std::string::npos)
      << plan.module;
}

TEST(AttentionApi, RejectsBadPackedSequences) {
  { Args a = packedArgs(); a.options.cuSeqlensK = {}; expectError(a, "cuSeqlensK has a null device pointer"); }
  { Args a = packedArgs(); a.options.cuSeqlensK.shape = {5}; expectError(a, "must both be [B + 1]"); }
  { Args a = packedArgs(); a.options.cuSeqlensQ.dtype = DType::I64; expectError(a, "must be contiguous i32 [B + 1]"); }
  { Args a = packedArgs(); a.options.cuSeqlensQ.shape = a.options.cuSeqlensK.shape = {1}; expectError(a, "(B >= 1)"); }
  {
    Args a = packedArgs();
    a.q.shape = a.out.shape = {2, 8, 500, 128};
    expectError(a, "[1, H, total, D]");
  }
  { Args a = packedArgs(); a.options.maxSeqlenQ = 0; expectError(a, "maxSeqlenQ and maxSeqlenK"); }
  { Args a = packedArgs(); a.options.maxSeqlenK = 1501; expectError(a, "maxSeqlenQ and maxSeqlenK"); }
  { Args a = packedArgs(); a.options.kvLens = view(0x90000, {3}, DType::I32); expectError(a, "cannot be combined"); }
  {
    Args a = packedArgs();
    a.options.lse = view(0x50000, {3, 8, 300}, DType::F32);
    expectError(a, "lse must be [1, Hq, total_q]");
  }
}

TEST(AttentionApi, KvAppendPlansAndCompiles) {
  Args a = pagedArgs();
  TensorView kNew = view(0x2000000, {2, 2, 3, 128}), vNew = view(0x3000000, {2, 2, 3, 128});
  flare::KvAppendPlan plan = flare::planKvAppend(kNew, vNew, a.k, a.v, a.options.kvLens, a.options.pageTable);
  EXPECT_EQ(plan.grid.x, 3u); // new rows
  EXPECT_EQ(plan.grid.y, 2u); // KV heads
  EXPECT_EQ(plan.grid.z, 2u); // sequences
  // 6 pointers, then rows, page size, table stride, max pages, page rows, pages, then 10 strides.
  ASSERT_EQ(plan.args.size(), 22u);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(7)), 64);
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(10)), 64); // vLLM layout: a page is 64 rows
  EXPECT_EQ(*static_cast<const int32_t *>(plan.args.value(11)), 40);
  // The tile kernel compiles for both families of targets.
  for (const char *arch : {"sm_90a", "sm_80"}) {
    flare::CompileOptions options;
    options.arch = arch;
    flare::CompiledModule compiled = flare::compileToPTX(plan.module, options, "<kv append>");
    EXPECT_NE(compiled.ptx.find(".entry flare_kv_append"), std::string::npos) << arch;
  }
  // Bad arguments name what is wrong.
  auto expectAppendError = [&](TensorView k, TensorView v, TensorView cache, const std::string &needle) {
    try {
      flare::planKvAppend(k, v, cache, cache, a.options.kvLens, a.options.pageTable);
      ADD_FAILURE() << "expected an error containing '" << needle << "'";
    } catch (const flare::Error &e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expectAppendError(kNew, view(0x3000000, {2, 2, 4, 128}), a.k, "vNew must be like kNew");
  expectAppendError(view(0x2000000, {2, 4, 3, 128}), view(0x3000000, {2, 4, 3, 128}), a.k, "with kNew's Hkv and D");
  TensorView overlapping = a.k;
  overlapping.strides = {64 * 2 * 128, 0, 2 * 128, 1};
  expectAppendError(kNew, vNew, overlapping, "kCache has elements that overlap");
}

TEST(AttentionApi, RejectsBadTensors) {
  { Args a; a.q.data = 0; expectError(a, "q has a null device pointer"); }
  { Args a; a.k.shape = {2, 2, 300}; expectError(a, "k must have rank 4"); }
  { Args a; a.v.dtype = DType::F32; expectError(a, "v must be bf16 or f16"); }
  { Args a; a.q.dtype = a.out.dtype = DType::F16; expectError(a, "must share one dtype"); }
  { Args a; a.q.shape[3] = a.out.shape[3] = a.k.shape[3] = a.v.shape[3] = 72; expectError(a, "head_dim 72 is not supported"); }
  { Args a; a.q.shape[3] = a.out.shape[3] = a.k.shape[3] = a.v.shape[3] = 288; expectError(a, "head_dim 288 is not supported"); }
  { Args a; a.q.shape[3] = a.out.shape[3] = 96; expectError(a, "k must be [B, Hkv, Skv, D] with q's B and D"); }
  { Args a; a.v.shape[3] = 72; a.out.shape[3] = 72; expectError(a, "v's head_dim 72 is not supported"); }
  { Args a; a.v.shape[3] = 64; expectError(a, "out must have q's shape with v's head_dim"); }
  { Args a; a.v.shape[2] += 1; expectError(a, "v must have k's shape but for its head_dim"); }
  { Args a; a.k.shape[3] = a.v.shape[3] = 64; expectError(a, "k must be [B, Hkv, Skv, D]"); }
  { Args a; a.v.shape[2] = 299; expectError(a, "v must have k's shape"); }
  { Args a; a.out.shape[2] = 99; expectError(a, "out must have q's shape"); }
  { Args a; a.k.shape[1] = a.v.shape[1] = 3; expectError(a, "must be a multiple of key/value heads (3)"); }
  { Args a; a.q.shape[2] = a.out.shape[2] = 0; expectError(a, "empty dimension"); }
  { Args a; a.q.data += 8; expectError(a, "q must be 16-byte aligned"); }
  // [B, S, H, D] memory with the head dimension strided: fine; a non-unit innermost stride: not.
  { Args a; a.q.strides = {100 * 8 * 128, 128, 8 * 128, 2}; expectError(a, "contiguous along head_dim"); }
  { Args a; a.k.strides = {300 * 2 * 132, 132, 2 * 132 + 4, 1}; expectError(a, "not a multiple of 16 bytes"); }
  { Args a; a.options.softcap = -1.f; expectError(a, "softcap must be"); }
  { Args a; a.options.lse = view(0x50000, {2, 8, 99}, DType::F32); expectError(a, "lse must be [B, Hq, Sq]"); }
  { Args a; a.options.lse = view(0x50000, {2, 8, 100}, DType::BF16); expectError(a, "lse must be f32"); }
  { Args a; a.options.aux = {view(0x60000, {8}, DType::F32)}; expectError(a, "only read by a custom module"); }
}

// Sizes, strides and addresses whose arithmetic would overflow, and writes that would collide.
TEST(AttentionApi, RejectsExtentsThatOverflow) {
  const int64_t tooLong = flare::kMaxSequenceLength + 1;
  { Args a; a.k.shape[2] = a.v.shape[2] = tooLong; expectError(a, "sequence lengths must be at most 268435455"); }
  { Args a; a.q.shape[0] = a.k.shape[0] = a.v.shape[0] = a.out.shape[0] = 65536; expectError(a, "at most 65535"); }
  // A batch stride near 2^62 elements: the last batch lies 2^63 bytes in.
  { Args a; a.k.strides = {int64_t(1) << 62, 300 * 128, 128, 1}; expectError(a, "k spans more than 2^63 bytes"); }
  // Strides whose products pass 2^64 bytes.
  { Args a; a.v.strides = {int64_t(1) << 62, int64_t(1) << 62, 128, 1}; expectError(a, "v spans more than 2^64 bytes"); }
  // Contiguous strides of 2^75 elements: saturated, then refused (no overflow on the way).
  { Args a; a.q.shape = a.out.shape = {1, int64_t(1) << 40, int64_t(1) << 28, 128}; expectError(a, "q stride"); }
  // A pointer near the top of the address space.
  { Args a; a.q.data = ~uint64_t(0) - 4096 + 1; expectError(a, "q at device address"); }
  // Forced key parts of 2^24 queries: the combine's stride between a row's parts, 2^24 x 128
  // elements, would pass 2^31 (the same call without parts plans, and with 2^24 - 1 queries too).
  {
    Args a;
    a.q.shape = a.out.shape = {2, 8, int64_t(1) << 24, 128};
    EXPECT_NO_THROW(flare::planAttention(a.q, a.k, a.v, a.out, a.options));
    a.options.tile.kvSplits = 4;
    expectError(a, "tile.kvSplits = 4 needs Sq x head_dim below 2^31, got 16777216 x 128");
    a.q.shape[2] = a.out.shape[2] = (int64_t(1) << 24) - 1;
    EXPECT_NO_THROW(flare::planAttention(a.q, a.k, a.v, a.out, a.options));
  }
}

TEST(AttentionApi, RejectsOutputsWhoseElementsOverlap) {
  { Args a; a.out.strides = {8 * 100 * 128, 100 * 128, 64, 1}; expectError(a, "out has elements that overlap"); }
  { Args a; a.out.strides = {8 * 100 * 128, 0, 128, 1}; expectError(a, "out has elements that overlap"); }
  { Args a; a.out.strides = {0, 100 * 128, 128, 1}; expectError(a, "out has elements that overlap"); }
  // Inputs may be broadcast (stride 0: every head reads one K), and out may be laid out [B, S, H, D].
  Args a;
  a.k.strides = a.v.strides = {300 * 128, 0, 128, 1};
  a.out.strides = {100 * 8 * 128, 128, 8 * 128, 1};
  EXPECT_NO_THROW(flare::planAttention(a.q, a.k, a.v, a.out, a.options));
}

// Packed GQA needs a group's rows (head in group, query) at one stride in q and out: one query, or a
// head stride of Sq rows ([B, H, S, D] memory); not [B, S, H, D] with several queries, nor MHA.
TEST(AttentionApi, GqaRowsArePackableWhereTheyLieAtOneStride) {
  Args a; // contiguous [B, H, S, D], 8 query heads over 2
  EXPECT_TRUE(flare::planAttention(a.q, a.k, a.v, a.out, a.options).packableGqa);
  Args bshd;
  bshd.q.strides = bshd.out.strides = {100 * 8 * 128, 128, 8 * 128, 1};
  EXPECT_FALSE(flare::planAttention(bshd.q, bshd.k, bshd.v, bshd.out, bshd.options).packableGqa);
  Args decode = bshd; // one query: any head stride
  decode.q = view(0x10000, {2, 8, 1, 128});
  decode.out = view(0x40000, {2, 8, 1, 128});
  decode.q.strides = decode.out.strides = {8 * 128, 128, 8 * 128, 1};
  EXPECT_TRUE(flare::planAttention(decode.q, decode.k, decode.v, decode.out, decode.options).packableGqa);
  Args mha;
  mha.k = view(0x20000, {2, 8, 300, 128});
  mha.v = view(0x30000, {2, 8, 300, 128});
  EXPECT_FALSE(flare::planAttention(mha.q, mha.k, mha.v, mha.out, mha.options).packableGqa);
}

TEST(AttentionApi, RejectsTileConfigurationsOutsideTheGenerator) {
  { Args a; a.options.tile.blockM = 1 << 20; expectError(a, "tile.blockM = 1048576 must be 0"); }
  { Args a; a.options.tile.blockN = 96; expectError(a, "tile.blockN = 96"); }
  { Args a; a.options.tile.numWarps = 3; expectError(a, "tile.numWarps = 3"); }
  { Args a; a.options.tile.overlap = 2; expectError(a, "tile.overlap = 2"); }
  { Args a; a.options.tile.kvSplits = -1; expectError(a, "tile.kvSplits = -1 must be 0"); }
  { Args a; a.options.tile.kvSplits = 257; expectError(a, "a number of parts up to 256"); }
  {
    Args a;
    a.options.tile.kvSplits = 4;
    a.options.tile.persistent = 1;
    expectError(a, "tile.persistent must not be 1");
  }
  // 2: persistent with query blocks from a shared counter, which split keys cannot have either.
  { Args a; a.options.tile.persistent = 3; expectError(a, "tile.persistent = 3 must be -1 (off), 0 (configured), 1 (on) or 2"); }
  { Args a; a.options.tile.persistent = -2; expectError(a, "tile.persistent = -2 must be"); }
  {
    Args a;
    a.options.tile.kvSplits = 4;
    a.options.tile.persistent = 2;
    expectError(a, "tile.persistent must not be 1 or 2");
  }
}

// Window sides of kMaxSequenceLength keys or more bound nothing: the module is the one without them.
// (In 32 bits, 2^32 used to read as 0 and INT64_MAX as -1.)
TEST(AttentionApi, WindowsWiderThanAnySequenceAreUnbounded) {
  AttentionOptions causal;
  causal.causal = true;
  for (int64_t wide : {flare::kMaxSequenceLength, int64_t(1) << 32, std::numeric_limits<int64_t>::max()}) {
    AttentionOptions o = causal;
    o.windowLeft = wide;
    EXPECT_EQ(flare::attentionModule(o, DType::BF16, 128), flare::attentionModule(causal, DType::BF16, 128)) << wide;
    AttentionOptions both;
    both.windowLeft = both.windowRight = wide;
    EXPECT_EQ(flare::attentionModule(both, DType::BF16, 128), flare::attentionModule({}, DType::BF16, 128)) << wide;
  }
  AttentionOptions narrow = causal;
  narrow.windowLeft = flare::kMaxSequenceLength - 1; // still a bound, and its arithmetic fits
  std::string ir = flare::attentionModule(narrow, DType::BF16, 128);
  EXPECT_NE(ir, flare::attentionModule(causal, DType::BF16, 128));
  EXPECT_NO_THROW(flare::compileToPTX(ir, {}, "<window>"));
}

TEST(AttentionApi, StridedLayoutsAreAccepted) {
  Args a; // q stored as [B, S, H, D]
  a.q.strides = {100 * 8 * 128, 128, 8 * 128, 1};
  flare::AttentionPlan plan = flare::planAttention(a.q, a.k, a.v, a.out, a.options);
  // Without LSE: 4 pointers, 4 sizes, then q's (batch, head, row) strides.
  EXPECT_EQ(*static_cast<const int64_t *>(plan.args.value(9)), 128);
  EXPECT_EQ(*static_cast<const int64_t *>(plan.args.value(10)), 8 * 128);
}

const char *kDocumentModule = R"(
func.func @doc(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %d: tensor<?xi32>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%d : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %x = attn.aux_load %ids[%qi] : tensor<?xi32>
      %y = attn.aux_load %ids[%kv] : tensor<?xi32>
      %same = arith.cmpi eq, %x, %y : i32
      attn.yield %same : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
)";

TEST(AttentionApi, CustomModulesAreCheckedAgainstTheTensors) {
  Args a;
  a.options.module = kDocumentModule;
  expectError(a, "takes 1 aux tensors, got 0");
  a.options.aux = {view(0x60000, {300}, DType::F32)};
  expectError(a, "aux[0] must be i32");
  a.options.aux = {view(0x60000, {300}, DType::I32)};
  flare::AttentionPlan plan = flare::planAttention(a.q, a.k, a.v, a.out, a.options);
  EXPECT_EQ(plan.kernelName, "doc");
  EXPECT_EQ(plan.args.size(), 4u + 1 + 4 + 1 + 12);
  a.options.lse = view(0x50000, {2, 8, 100}, DType::F32);
  expectError(a, "returns no LSE");
  a.options.lse = {};
  Args b = a;
  b.q.shape[3] = b.out.shape[3] = b.k.shape[3] = b.v.shape[3] = 64;
  expectError(b, "head_dims (Q.K, V) are 128, 128 but the tensors' are 64, 64");
  a.options.module = "func.func @broken(";
  expectError(a, "does not parse");
  a.options.module = std::string(50000, '(') + ")";
  expectError(a, "nests brackets more than 256 levels deep");
}

// The module the built-in options describe compiles, and the reference evaluating it keeps exactly
// the keys the options mean.
TEST(AttentionApi, OptionsDescribeTheIntendedMask) {
  const int sq = 7, skv = 11, d = 64;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> q(sq * d), k(skv * d), v(skv * d);
  for (auto *t : {&q, &k, &v})
    for (float &x : *t)
      x = dist(rng);
  struct Case {
    bool causal;
    flare::CausalAlignment alignment;
    int64_t left, right;
  };
  for (Case c : {Case{true, flare::CausalAlignment::TopLeft, -1, -1}, Case{true, flare::CausalAlignment::BottomRight, -1, -1},
                 Case{false, flare::CausalAlignment::TopLeft, 2, 1}, Case{true, flare::CausalAlignment::BottomRight, 3, -1}}) {
    AttentionOptions opt;
    opt.causal = c.causal;
    opt.alignment = c.alignment;
    opt.windowLeft = c.left;
    opt.windowRight = c.right;
    opt.softcap = 20.f;
    opt.scale = 0.1f;
    std::string ir = flare::attentionModule(opt, DType::BF16, d);
    SCOPED_TRACE(ir);
    EXPECT_NO_THROW(flare::compileToPTX(ir, {}, "<options>"));
    flare::reference::AttentionProblem p;
    p.batch = p.headsQ = p.headsKV = 1;
    p.seqQ = sq;
    p.seqKV = skv;
    p.headDim = d;
    p.q = q.data();
    p.k = k.data();
    p.v = v.data();
    flare::reference::AttentionResult r = flare::reference::attentionReference(ir, p);
    for (int i = 0; i < sq; ++i) {
      const int diag = c.alignment == flare::CausalAlignment::BottomRight ? i + skv - sq : i;
      const int64_t right = c.causal ? 0 : c.right;
      std::vector<double> s(skv), w(skv, 0.0);
      double m = -INFINITY, l = 0;
      for (int j = 0; j < skv; ++j) {
        bool keep = (right < 0 || j <= diag + right) && (c.left < 0 || j >= diag - c.left);
        double dot = 0;
        for (int x = 0; x < d; ++x)
          dot += double(q[i * d + x]) * k[j * d + x];
        s[j] = keep ? 20.0 * std::tanh(dot * double(0.1f) / 20.0) : -INFINITY;
        m = std::max(m, s[j]);
      }
      for (int j = 0; j < skv; ++j)
        if (s[j] > -INFINITY)
          l += w[j] = std::exp(s[j] - m);
      for (int x = 0; x < d; ++x) {
        double o = 0;
        for (int j = 0; j < skv; ++j)
          o += w[j] * v[j * d + x];
        EXPECT_NEAR(r.out[i * d + x], l > 0 ? o / l : 0.0, 1e-12) << "row " << i;
      }
    }
  }
}


TEST(AttentionAutotune, CandidatesStartWithTheConfiguredChoice) {
  for (std::string arch : {"sm_90a", "sm_80"})
    for (int64_t d : {64, 128, 256}) {
      SCOPED_TRACE(arch + ", D = " + std::to_string(d));
      std::vector<flare::AttentionTileConfig> candidates = flare::autotuneCandidates(arch, d);
      ASSERT_GE(candidates.size(), 2u);
      EXPECT_EQ(candidates.front(), flare::AttentionTileConfig{});
      for (size_t i = 0; i < candidates.size(); ++i)
        for (size_t j = i + 1; j < candidates.size(); ++j)
          EXPECT_NE(candidates[i], candidates[j]) << candidates[i].text();
    }
}

TEST(AttentionAutotune, HeadDim64OnHopperAlsoTimesOneWarpgroup) {
  // One warpgroup of 64 x 64 tiles: faster causal at 512 tokens than the configured kernel
  // (bench/NOTES.md, "One warpgroup of 64 x 64 tiles as an autotuning candidate").
  flare::AttentionTileConfig oneWarpgroup;
  oneWarpgroup.blockM = oneWarpgroup.blockN = 64;
  oneWarpgroup.numWarps = 4;
  for (int64_t d : {64, 128}) {
    std::vector<flare::AttentionTileConfig> candidates = flare::autotuneCandidates("sm_90a", d);
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), oneWarpgroup), candidates.end()) << "D = " << d;
  }
}

TEST(AttentionApi, ShortCausalLaunchesAtHeadDim64TakeOneWarpgroupOnHopper) {
  // A call that sets no tile: the configured choice, except causal head-dim-64 launches of at most
  // 512 keys on sm_90a, which take one warpgroup of 64 x 64 tiles (bench/NOTES.md a71).
  flare::AttentionTileConfig oneWarpgroup;
  oneWarpgroup.blockM = oneWarpgroup.blockN = 64;
  oneWarpgroup.numWarps = 4;
  auto config = [](int64_t d, int64_t skv, const AttentionOptions &options, const std::string &arch) {
    Args a;
    a.q = view(0x10000, {2, 8, 500, d});
    a.out = view(0x40000, {2, 8, 500, d});
    a.k = view(0x20000, {2, 2, skv, d});
    a.v = view(0x30000, {2, 2, skv, d});
    a.options = options;
    return flare::launchTileConfig(flare::planAttention(a.q, a.k, a.v, a.out, a.options), a.options, arch);
  };
  AttentionOptions causal;
  causal.causal = true;
  EXPECT_EQ(config(64, 512, causal, "sm_90a"), oneWarpgroup);
  EXPECT_EQ(config(64, 17, causal, "sm_90a"), oneWarpgroup);
  AttentionOptions bottomRight = causal;
  bottomRight.alignment = flare::CausalAlignment::BottomRight;
  EXPECT_EQ(config(64, 500, bottomRight, "sm_90a"), oneWarpgroup);
  const flare::AttentionTileConfig configured;
  EXPECT_EQ(config(64, 513, causal, "sm_90a"), configured) << "from 513 keys";
  EXPECT_EQ(config(64, 512, AttentionOptions{}, "sm_90a"), configured) << "without a mask";
  EXPECT_EQ(config(128, 512, causal, "sm_90a"), configured) << "head dim 128";
  EXPECT_EQ(config(64, 512, causal, "sm_80"), configured) << "sm_80";
  AttentionOptions window = causal;
  window.windowLeft = 100;
  EXPECT_EQ(config(64, 512, window, "sm_90a"), configured) << "a sliding window";
  AttentionOptions softcap = causal;
  softcap.softcap = 50.f;
  EXPECT_EQ(config(64, 512, softcap, "sm_90a"), configured) << "softcap";
}

TEST(AttentionAutotune, ConfigurationTextRoundTrips) {
  flare::AttentionTileConfig c{64, 32, 4, -1, 1, 0, -1};
  EXPECT_EQ(c.text(), "bm=64 bn=32 warps=4 overlap=-1 pingpong=1 producer=0 persistent=-1");
  std::optional<flare::AttentionTileConfig> back = flare::AttentionTileConfig::parse(c.text());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, c);
  EXPECT_EQ(AttentionOptions{}.tile, flare::AttentionTileConfig{}) << "options default to the configured choice";
  for (const char *bad : {"", "bm=64", "bm=64 bn=32 warps=4 overlap=-1 pingpong=1 producer=0 persistent=x",
                          "bn=32 bm=64 warps=4 overlap=-1 pingpong=1 producer=0 persistent=0",
                          "bm=64 bn=32 warps=4 overlap=-1 pingpong=1 producer=0 persistent=0 extra"})
    EXPECT_FALSE(flare::AttentionTileConfig::parse(bad).has_value()) << bad;
  // The number of key parts is named only when set.
  flare::AttentionTileConfig split;
  split.kvSplits = 8;
  EXPECT_EQ(split.text(), "bm=0 bn=0 warps=0 overlap=0 pingpong=0 producer=0 persistent=0 splits=8");
  ASSERT_EQ(flare::AttentionTileConfig::parse(split.text()), split);
  EXPECT_FALSE(flare::AttentionTileConfig::parse(split.text() + " extra").has_value());
  EXPECT_FALSE(flare::AttentionTileConfig::parse("bm=0 bn=0 warps=0 overlap=0 pingpong=0 producer=0 persistent=0 "
                                                 "splits=x")
                   .has_value());
}

TEST(AttentionAutotune, BlockListsTextRoundTrips) {
  const std::string base = "bm=0 bn=0 warps=0 overlap=0 pingpong=0 producer=0 persistent=0";
  // Block lists are named only when set (0, the configured choice, keeps the text autotuning
  // remembers), after the number of key parts.
  flare::AttentionTileConfig off;
  off.blockLists = -1;
  EXPECT_EQ(off.text(), base + " lists=-1");
  ASSERT_EQ(flare::AttentionTileConfig::parse(off.text()), off);
  flare::AttentionTileConfig both;
  both.kvSplits = 4;
  both.blockLists = 1;
  EXPECT_EQ(both.text(), base + " splits=4 lists=1");
  ASSERT_EQ(flare::AttentionTileConfig::parse(both.text()), both);
  flare::AttentionTileConfig tuned{128, 64, 8, 1, -1, 0, 1};
  tuned.blockLists = 1;
  EXPECT_EQ(tuned.text(), "bm=128 bn=64 warps=8 overlap=1 pingpong=-1 producer=0 persistent=1 lists=1");
  ASSERT_EQ(flare::AttentionTileConfig::parse(tuned.text()), tuned);
  EXPECT_EQ(flare::AttentionTileConfig::parse(base), flare::AttentionTileConfig{}) << "neither field named";
  EXPECT_NE(both, flare::AttentionTileConfig::parse(base + " splits=4")) << "blockLists takes part in ==";
  // The optional fields in text()'s order only, each once, with an integer.
  for (const std::string &bad : {base + " lists=1 splits=4", base + " lists=x", base + " lists=", base + " lists=1 extra",
                                 base + " splits=4 lists=1 lists=1", base + " splits=4 splits=4",
                                 base + " lists=1 lists=1", base + " splits=4 lists=1x"})
    EXPECT_FALSE(flare::AttentionTileConfig::parse(bad).has_value()) << bad;
}

TEST(AttentionAutotune, OutMustNotOverlapTheInputs) {
  // q, k, v and out 16 MiB apart (each spans at most 400 KiB).
  Args a;
  a.q = view(0x1000000, {2, 8, 100, 128});
  a.k = view(0x2000000, {2, 2, 300, 128});
  a.v = view(0x3000000, {2, 2, 300, 128});
  a.out = view(0x4000000, {2, 8, 100, 128});
  a.options.autotune = true;
  EXPECT_NO_THROW(flare::planAttention(a.q, a.k, a.v, a.out, a.options));
  a.out = view(0x1000000 + 64, {2, 8, 100, 128}); // inside q
  expectError(a, "with autotune, out must not overlap q");
  a.out = view(0x3000000 - 64, {2, 8, 100, 128}); // its end runs into v
  expectError(a, "with autotune, out must not overlap");
  a.options.autotune = false; // without autotuning a single launch may write over its inputs' memory
  EXPECT_NO_THROW(flare::planAttention(a.q, a.k, a.v, a.out, a.options));
}

TEST(AttentionAutotune, KeysClassifyShapesByPowersOfTwo) {
  auto key = [](int64_t b, int64_t h, int64_t sq, int64_t skv, bool causal, const std::string &arch = "sm_90a") {
    Args a;
    a.q = view(0x10000, {b, h, sq, 128});
    a.k = view(0x20000, {b, h, skv, 128});
    a.v = view(0x30000, {b, h, skv, 128});
    a.out = view(0x40000, {b, h, sq, 128});
    a.options.causal = causal;
    return flare::autotuneKey(flare::planAttention(a.q, a.k, a.v, a.out, a.options), arch, "GPU");
  };
  const std::string base = key(2, 8, 1000, 1000, true);
  EXPECT_NE(base.find("-sq1024-skv1024-bh16"), std::string::npos) << base;
  EXPECT_EQ(key(2, 8, 1000, 1000, true), base);
  EXPECT_EQ(key(1, 16, 600, 1024, true), base);  // the same buckets
  EXPECT_NE(key(2, 8, 1025, 1000, true), base);  // Sq
  EXPECT_NE(key(2, 8, 1000, 1025, true), base);  // Skv
  EXPECT_NE(key(4, 8, 1000, 1000, true), base);  // B x Hq
  EXPECT_NE(key(2, 8, 1000, 1000, false), base); // the mask
  EXPECT_NE(key(2, 8, 1000, 1000, true, "sm_80"), base);
}

} // namespace

// planAttentionBackward checks the forward's arguments (planAttention) and the gradients' own.
TEST(AttentionBackwardApi, ChecksEveryTensor) {
  Args a;
  const TensorView lse = view(0x50000, {2, 8, 100}, DType::F32), dout = view(0x60000, {2, 8, 100, 128}),
                   dq = view(0x70000, {2, 8, 100, 128}), dk = view(0x80000, {2, 2, 300, 128}),
                   dv = view(0x90000, {2, 2, 300, 128});
  a.options.causal = true;
  flare::AttentionBackwardPlan plan = flare::planAttentionBackward(a.q, a.k, a.v, a.out, dout, lse, dq, dk, dv, a.options);
  EXPECT_EQ(plan.mainKernel, "flare_attention_bwd");
  EXPECT_EQ(plan.preprocessKernel, "flare_attention_bwd_preprocess");
  EXPECT_EQ(plan.dqKernel, "flare_attention_bwd_dq");
  EXPECT_EQ(plan.strides.size(), 24u);
  // D (2 * 8 * 100 floats, 256-byte aligned) and the dQ sums.
  // Without an arch the sums are counted.
  EXPECT_TRUE(plan.dqByAtomics);
  EXPECT_EQ(plan.workspaceBytes, 6400u + 2u * 8 * 100 * 128 * 4);
  EXPECT_NE(plan.forward.module.find("mask_mod"), std::string::npos);
  // dQ by a kernel of its own (deterministic, and sm_90a's backward in any case): the same kernels'
  // names, D alone in the workspace; sm_80 sums dQ by atomics unless asked to be deterministic.
  struct Mode {
    const char *arch;
    bool deterministic, atomics;
  };
  for (Mode m : {Mode{"", true, false}, Mode{"sm_90a", false, false}, Mode{"sm_90a", true, false},
                 Mode{"sm_80", false, true}, Mode{"sm_80", true, false}}) {
    flare::AttentionOptions o = a.options;
    o.arch = m.arch;
    o.deterministic = m.deterministic;
    flare::AttentionBackwardPlan mp = flare::planAttentionBackward(a.q, a.k, a.v, a.out, dout, lse, dq, dk, dv, o);
    EXPECT_EQ(mp.dqByAtomics, m.atomics) << m.arch << " " << m.deterministic;
    EXPECT_EQ(mp.dqKernel, "flare_attention_bwd_dq");
    EXPECT_EQ(mp.workspaceBytes, m.atomics ? 6400u + 2u * 8 * 100 * 128 * 4 : 6400u) << m.arch;
    EXPECT_EQ(mp.dvKernel, "") << m.arch; // dK and dV share a kernel at head dim 128
  }
  // Head dim 256 on sm_90a: dK and dV in a kernel each (attn::backwardSplitsDkDv); not on sm_80, nor
  // where the arch is not known.
  for (const char *arch : {"sm_90a", "sm_80", ""}) {
    Args w;
    w.q = view(0x10000, {2, 8, 100, 256});
    w.k = view(0x20000, {2, 2, 300, 256});
    w.v = view(0x30000, {2, 2, 300, 256});
    w.out = view(0x40000, {2, 8, 100, 256});
    w.options.arch = arch;
    flare::AttentionBackwardPlan wp =
        flare::planAttentionBackward(w.q, w.k, w.v, w.out, view(0x60000, {2, 8, 100, 256}), lse,
                                     view(0x70000, {2, 8, 100, 256}), view(0x80000, {2, 2, 300, 256}),
                                     view(0x90000, {2, 2, 300, 256}), w.options);
    EXPECT_EQ(wp.dvKernel, std::string(arch) == "sm_90a" ? "flare_attention_bwd_dv" : "") << arch;
  }
  // V's head dim apart from Q's and K's (192 / 128): dv and dout like v and out, the dQ sums D wide;
  // tiles of the wider head dim, so dK and dV take a kernel each on sm_90a.
  {
    Args m;
    m.q = view(0x10000, {2, 8, 100, 192});
    m.k = view(0x20000, {2, 2, 300, 192});
    m.v = view(0x30000, {2, 2, 300, 128});
    m.out = view(0x40000, {2, 8, 100, 128});
    m.options.arch = "sm_80";
    const TensorView mdout = view(0x60000, {2, 8, 100, 128}), mdq = view(0x70000, {2, 8, 100, 192}),
                     mdk = view(0x80000, {2, 2, 300, 192}), mdv = view(0x90000, {2, 2, 300, 128});
    flare::AttentionBackwardPlan mp = flare::planAttentionBackward(m.q, m.k, m.v, m.out, mdout, lse, mdq, mdk, mdv,
                                                                   m.options);
    EXPECT_EQ(mp.forward.headDimV, 128);
    EXPECT_EQ(mp.workspaceBytes, 6400u + 2u * 8 * 100 * 192 * 4);
    EXPECT_EQ(mp.dvKernel, "");
    m.options.arch = "sm_90a";
    mp = flare::planAttentionBackward(m.q, m.k, m.v, m.out, mdout, lse, mdq, mdk, mdv, m.options);
    EXPECT_EQ(mp.dvKernel, "flare_attention_bwd_dv");
    try {
      flare::planAttentionBackward(m.q, m.k, m.v, m.out, mdout, lse, mdq, mdk, view(0x90000, {2, 2, 300, 192}),
                                   m.options);
      ADD_FAILURE() << "dv as wide as k was accepted";
    } catch (const flare::Error &e) {
      EXPECT_NE(std::string(e.what()).find("dv must be bf16 [2, 2, 300, 128]"), std::string::npos) << e.what();
    }
  }
  auto expectBackwardError = [&](const std::function<void()> &call, const std::string &needle) {
    try {
      call();
      ADD_FAILURE() << "expected an error containing '" << needle << "'";
    } catch (const flare::Error &e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto plan2 = [&](TensorView l, TensorView o, TensorView q2, TensorView k2, TensorView v2, AttentionOptions opt) {
    return [=] { flare::planAttentionBackward(a.q, a.k, a.v, a.out, o, l, q2, k2, v2, opt); };
  };
  expectBackwardError(plan2(TensorView{}, dout, dq, dk, dv, a.options), "lse (the forward's log-sum-exp");
  expectBackwardError(plan2(lse, view(0x60000, {2, 8, 99, 128}), dq, dk, dv, a.options), "dout must be bf16 [2, 8, 100, 128], got bf16 [2, 8, 99, 128]");
  expectBackwardError(plan2(lse, dout, view(0x70000, {2, 8, 100, 128}, DType::F16), dk, dv, a.options), "dq must be bf16 [2, 8, 100, 128], got f16");
  expectBackwardError(plan2(lse, dout, dq, view(0x80000, {2, 2, 300, 64}), dv, a.options), "dk must be bf16 [2, 2, 300, 128], got bf16 [2, 2, 300, 64]");
  expectBackwardError(plan2(lse, dout, dq, dk, view(0x90000, {2, 2, 300, 128}, DType::BF16, {0, 0, 128, 1}), a.options),
                      "dv has elements that overlap");
  expectBackwardError(plan2(view(0x50000, {2, 8, 101}, DType::F32), dout, dq, dk, dv, a.options), "lse must be");
  AttentionOptions tuned = a.options;
  tuned.tile.blockM = 64;
  expectBackwardError(plan2(lse, dout, dq, dk, dv, tuned), "leave them unset for the backward");
  tuned.tile.blockLists = -1; // still a forward field beside it
  expectBackwardError(plan2(lse, dout, dq, dk, dv, tuned), "leave them unset for the backward");
}

// A mask the compiler cannot classify (document ids in an aux tensor): the backward's kernels visit
// block lists that two classifiers write (the dQ one only where dQ has a kernel of its own), unless
// tile.blockLists is -1; a mask the compiler classifies (causal) has none.
TEST(AttentionBackwardApi, BlockListsForMasksClassifiedAtRunTime) {
  Args a;
  const TensorView lse = view(0x50000, {2, 8, 100}, DType::F32), dout = view(0x60000, {2, 8, 100, 128}),
                   dq = view(0x70000, {2, 8, 100, 128}), dk = view(0x80000, {2, 2, 300, 128}),
                   dv = view(0x90000, {2, 2, 300, 128});
  AttentionOptions document = a.options;
  document.module = flare::test::readExample("attention/document.mlir");
  document.aux = {view(0xa0000, {300}, DType::I32)};
  for (const char *arch : {"sm_90a", "sm_80"}) {
    document.arch = arch;
    const flare::AttentionBackwardPlan plan =
        flare::planAttentionBackward(a.q, a.k, a.v, a.out, dout, lse, dq, dk, dv, document);
    EXPECT_TRUE(plan.blockLists) << arch;
    EXPECT_EQ(plan.listsKernel, "document_bwd_block_mask") << arch;
    EXPECT_EQ(plan.dqLists, std::string(arch) == "sm_90a") << arch;
  }
  AttentionOptions off = document;
  off.tile.blockLists = -1;
  const flare::AttentionBackwardPlan none = flare::planAttentionBackward(a.q, a.k, a.v, a.out, dout, lse, dq, dk, dv, off);
  EXPECT_FALSE(none.blockLists);
  EXPECT_EQ(none.listsKernel, "");
  AttentionOptions causal = a.options;
  causal.causal = true;
  causal.arch = "sm_90a";
  EXPECT_FALSE(flare::planAttentionBackward(a.q, a.k, a.v, a.out, dout, lse, dq, dk, dv, causal).blockLists);
}
