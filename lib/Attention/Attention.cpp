//===- Attention.cpp - flare::attention: FlashAttention from C++ ----------===//
#include "flare/Attention.h"

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/Config.h"
#include "flare/Target/Target.h"
#include "flare/Dialect/Attn/ModifierRanges.h"
#include "flare/Error.h"

#include "AttentionInternal.h"
#include "ModuleFacts.h"

#include "../Target/ParseContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <sstream>

namespace flare {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

size_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::I64:
    return 8;
  }
  return 0;
}

std::vector<int64_t> TensorView::effectiveStrides() const {
  if (!strides.empty())
    return strides;
  // Row-major; a product past INT64_MAX saturates there (such a tensor fails the span checks).
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    if (__builtin_mul_overflow(s[i], shape[i], &s[i - 1]))
      s[i - 1] = std::numeric_limits<int64_t>::max();
  return s;
}

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

[[noreturn]] void fail(const std::string &message) { throw Error("flare::attention: " + message); }

/// Element alignment the kernels' 16-byte vector loads rely on.
constexpr int64_t kAlignBytes = 16;
static_assert(kMaxSequenceLength == attn::kMaxSeqLen && kMaxBatchOrHeads == attn::kMaxBatchOrHeads,
              "the API's limits are the generated kernels'");

/// The bytes from a tensor's first element to the end of its last one (strides >= 0), as an exact
/// integer: the kernel computes element offsets in signed 64-bit arithmetic and the device pointer
/// plus that span must stay inside the 64-bit address space.
void checkSpan(const TensorView &t, const char *name) {
  std::vector<int64_t> strides = t.effectiveStrides();
  __int128 last = 0;
  for (size_t i = 0; i < t.shape.size(); ++i)
    last += __int128(t.shape[i] - 1) * strides[i]; // each factor < 2^63: no overflow in 128 bits
  const __int128 bytes = (last + 1) * __int128(dtypeBytes(t.dtype));
  if (bytes >= (__int128(1) << 63))
    fail(std::string(name) + " spans " + (bytes >= (__int128(1) << 64) ? "more than 2^64" : "more than 2^63") +
         " bytes (shape " + shapeText(t.shape) + "); element offsets must fit in 63 bits");
  if (__int128(t.data) + bytes > (__int128(1) << 64))
    fail(std::string(name) + " at device address " + std::to_string(t.data) + " extends past the end of the address space");
}

/// A written tensor's elements must not share memory: sorted by stride, each dimension must step past
/// everything the smaller ones span (PyTorch's rule for writable views). A broadcast (stride 0) or an
/// overlapping row stride would have several threads write one address.
void checkNoSelfOverlap(const TensorView &t, const char *name) {
  std::vector<int64_t> strides = t.effectiveStrides();
  std::vector<std::pair<int64_t, int64_t>> dims; // (stride, size) of the dimensions longer than 1
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (t.shape[i] > 1)
      dims.push_back({strides[i], t.shape[i]});
  std::sort(dims.begin(), dims.end());
  __int128 extent = 1; // elements spanned by the dimensions so far
  for (auto [stride, size] : dims) {
    if (stride < extent)
      fail(std::string(name) + " has elements that overlap (shape " + shapeText(t.shape) + ", strides " +
           shapeText(strides) + "): a written tensor needs distinct addresses");
    extent += __int128(stride) * (size - 1);
  }
}

/// AttentionOptions::tile within what the generator can build (0 in every field: the configured one).
void checkTileConfig(const AttentionTileConfig &c) {
  auto block = [](int v, const char *what) {
    if (v != 0 && (v < 16 || v > 256 || (v & (v - 1)) != 0))
      fail(std::string("tile.") + what + " = " + std::to_string(v) + " must be 0 (configured) or a power of two from 16 to 256");
  };
  block(c.blockM, "blockM");
  block(c.blockN, "blockN");
  if (c.numWarps != 0 && (c.numWarps < 1 || c.numWarps > 16 || (c.numWarps & (c.numWarps - 1)) != 0))
    fail("tile.numWarps = " + std::to_string(c.numWarps) + " must be 0 (configured) or 1, 2, 4, 8 or 16");
  for (auto [value, what] : {std::pair{c.overlap, "overlap"}, {c.pingPong, "pingPong"}, {c.producer, "producer"},
                             {c.persistent, "persistent"}})
    if (value < -1 || value > 1)
      fail(std::string("tile.") + what + " = " + std::to_string(value) + " must be -1 (off), 0 (configured) or 1 (on)");
  if (c.kvSplits < 0 || c.kvSplits > kMaxKvSplits)
    fail("tile.kvSplits = " + std::to_string(c.kvSplits) + " must be 0 (decided by the launch shape), 1 (no split) "
         "or a number of parts up to " + std::to_string(kMaxKvSplits));
  if (c.kvSplits > 1 && c.persistent == 1)
    fail("tile.kvSplits = " + std::to_string(c.kvSplits) + " needs program instances of their own: tile.persistent "
         "must not be 1");
}

/// `align`: the bytes the kernels' accesses need (16 for vector loads; 4 for the i32 index tensors,
/// read one element at a time, which may be a slice of a larger table).
void checkTensor(const TensorView &t, const char *name, size_t rank, int64_t align = kAlignBytes) {
  if (t.data == 0)
    fail(std::string(name) + " has a null device pointer");
  if (t.shape.size() != rank)
    fail(std::string(name) + " must have rank " + std::to_string(rank) + ", got shape " + shapeText(t.shape));
  for (int64_t d : t.shape)
    if (d <= 0)
      fail(std::string(name) + " has an empty dimension: shape " + shapeText(t.shape));
  if (!t.strides.empty() && t.strides.size() != rank)
    fail(std::string(name) + " has " + std::to_string(t.strides.size()) + " strides for rank " + std::to_string(rank));
  if (t.data % align != 0)
    fail(std::string(name) + " must be " + std::to_string(align) + "-byte aligned (device address " +
         std::to_string(t.data) + ")");
}

/// Q, K, V, O: [B, H, S, D] with unit innermost stride, 16-byte aligned rows and non-negative strides.
void checkAttentionTensor(const TensorView &t, const char *name) {
  checkTensor(t, name, 4);
  if (t.dtype != DType::BF16 && t.dtype != DType::F16)
    fail(std::string(name) + " must be bf16 or f16, got " + dtypeName(t.dtype));
  std::vector<int64_t> s = t.effectiveStrides();
  if (s[3] != 1)
    fail(std::string(name) + " must be contiguous along head_dim (stride 1), got stride " + std::to_string(s[3]));
  for (int i = 0; i < 3; ++i) {
    if (s[i] < 0)
      fail(std::string(name) + " has a negative stride");
    if ((__int128(s[i]) * dtypeBytes(t.dtype)) % kAlignBytes != 0) // strides may be near 2^63
      fail(std::string(name) + " stride " + std::to_string(s[i]) + " of dimension " + std::to_string(i) +
           " is not a multiple of 16 bytes");
  }
  if (s[2] > std::numeric_limits<int32_t>::max())
    fail(std::string(name) + " row stride " + std::to_string(s[2]) + " does not fit in 32 bits");
}

/// A paged cache (AttentionOptions::pageTable): the table, and k and v as pages whose rows one view
/// of a KV head's rows can address (row r of page p at p x pageRows + r, pageRows = page stride / row
/// stride), with kFarAway's margin left below 2^31.
void checkCacheTensors(const AttentionOptions &options, const TensorView &q, const TensorView &k,
                       const TensorView &v) {
  const TensorView &table = options.pageTable;
  checkTensor(table, "pageTable", 2, 4);
  if (table.dtype != DType::I32 || table.shape[0] != q.shape[0])
    fail("pageTable must be i32 [B, max_pages] with q's B = " + std::to_string(q.shape[0]) + ", got " +
         dtypeName(table.dtype) + " " + shapeText(table.shape));
  const std::vector<int64_t> ts = table.effectiveStrides();
  if (ts[1] != 1 || ts[0] < 0 || ts[0] > std::numeric_limits<int32_t>::max())
    fail("pageTable must have unit stride along its rows and a row stride below 2^31");
  checkSpan(table, "pageTable");
  if (!options.kvLens.data)
    fail("a paged cache (pageTable) needs kvLens, the number of keys of each sequence");
  const int64_t pageSize = k.shape[2];
  if (pageSize % 16 != 0 || pageSize > 256)
    fail("with pageTable, k and v are [num_pages, Hkv, page_size, D] with page_size a multiple of 16 up to 256, "
         "got k " + shapeText(k.shape));
  if (k.shape[3] != q.shape[3])
    fail("k's head_dim must be q's: q " + shapeText(q.shape) + ", k " + shapeText(k.shape));
  if (table.shape[1] * pageSize > kMaxSequenceLength)
    fail("pageTable's " + std::to_string(table.shape[1]) + " pages of " + std::to_string(pageSize) +
         " keys exceed the longest sequence, " + std::to_string(kMaxSequenceLength) + " keys");
  const std::vector<int64_t> ks = k.effectiveStrides();
  if (v.effectiveStrides() != ks)
    fail("with pageTable, v must have k's strides (one page table addresses both)");
  if (ks[0] % ks[2] != 0)
    fail("with pageTable, k's page stride " + std::to_string(ks[0]) + " must be a multiple of its row stride " +
         std::to_string(ks[2]));
  const int64_t pageRows = ks[0] / ks[2];
  if (pageRows < pageSize || __int128(k.shape[0]) * pageRows >= (int64_t{1} << 30))
    fail("with pageTable, k's pages must not overlap and hold fewer than 2^30 rows of a head in all: " +
         std::to_string(k.shape[0]) + " pages of " + std::to_string(pageRows) + " rows");
}

/// Packed sequences (AttentionOptions::cuSeqlensQ/K): q, k, v of batch 1 holding B sequences; the
/// plan's batch and lengths become the sequences' count and the longest's, its totals the rows.
void packSequences(AttentionPlan &plan, const AttentionOptions &options, const TensorView &q, const TensorView &k) {
  for (auto [t, name] : {std::pair{&options.cuSeqlensQ, "cuSeqlensQ"}, {&options.cuSeqlensK, "cuSeqlensK"}}) {
    checkTensor(*t, name, 1, 4);
    if (t->dtype != DType::I32 || (!t->strides.empty() && t->strides[0] != 1) || t->shape[0] < 2)
      fail(std::string(name) + " must be contiguous i32 [B + 1] (B >= 1), got " + dtypeName(t->dtype) + " " +
           shapeText(t->shape));
    checkSpan(*t, name);
  }
  if (options.cuSeqlensQ.shape != options.cuSeqlensK.shape)
    fail("cuSeqlensQ and cuSeqlensK must both be [B + 1], got " + shapeText(options.cuSeqlensQ.shape) + " and " +
         shapeText(options.cuSeqlensK.shape));
  if (q.shape[0] != 1 || k.shape[0] != 1)
    fail("with cuSeqlensQ, q, k and v hold the sequences packed: [1, H, total, D], got q " + shapeText(q.shape) +
         ", k " + shapeText(k.shape));
  if (options.kvLens.data || options.pageTable.data)
    fail("cuSeqlensQ cannot be combined with kvLens or pageTable");
  if (options.maxSeqlenQ < 1 || options.maxSeqlenK < 1 || options.maxSeqlenQ > q.shape[2] ||
      options.maxSeqlenK > k.shape[2])
    fail("maxSeqlenQ and maxSeqlenK must be the longest sequence's lengths, 1 .. the packed totals (" +
         std::to_string(q.shape[2]) + ", " + std::to_string(k.shape[2]) + "), got " +
         std::to_string(options.maxSeqlenQ) + " and " + std::to_string(options.maxSeqlenK));
  plan.batch = options.cuSeqlensQ.shape[0] - 1;
  plan.totalQ = q.shape[2];
  plan.totalKV = k.shape[2];
  plan.seqQ = options.maxSeqlenQ;
  plan.seqKV = options.maxSeqlenK;
}

} // namespace

void detail::addAuxAndSizes(rt::KernelArgs &args, const AttentionPlan &plan, const std::vector<TensorView> &aux) {
  for (const TensorView &a : aux)
    args.addPointer(a.data);
  args.addI32(static_cast<int32_t>(plan.headsQ)).addI32(static_cast<int32_t>(plan.headsKV));
  // Packed sequences: the kernel's seq_q and seq_kv are the packed totals (its views' extent).
  args.addI32(static_cast<int32_t>(plan.totalQ ? plan.totalQ : plan.seqQ));
  args.addI32(static_cast<int32_t>(plan.totalQ ? plan.totalKV : plan.seqKV));
  for (const TensorView &a : aux)
    args.addI32(static_cast<int32_t>(a.shape[0]));
}

void detail::checkKvAppend(const TensorView &kNew, const TensorView &vNew, const TensorView &kCache,
                           const TensorView &vCache, const TensorView &kvLens, const TensorView &pageTable) {
  for (auto [t, name] : {std::pair{&kNew, "kNew"}, {&vNew, "vNew"}, {&kCache, "kCache"}, {&vCache, "vCache"}}) {
    checkAttentionTensor(*t, name);
    checkSpan(*t, name);
  }
  if (vNew.shape != kNew.shape || vNew.dtype != kNew.dtype)
    fail("appendKV: vNew must be like kNew " + shapeText(kNew.shape) + ", got " + shapeText(vNew.shape));
  if (kCache.dtype != kNew.dtype || vCache.dtype != kNew.dtype)
    fail("appendKV: the caches must hold kNew's dtype");
  if (kCache.shape[1] != kNew.shape[1] || kCache.shape[3] != kNew.shape[3])
    fail("appendKV: the caches must be [num_pages, Hkv, page_size, D] with kNew's Hkv and D: kNew " +
         shapeText(kNew.shape) + ", kCache " + shapeText(kCache.shape));
  if (vCache.shape != kCache.shape)
    fail("appendKV: vCache must have kCache's shape");
  if (kNew.shape[2] > kMaxSequenceLength)
    fail("appendKV: at most " + std::to_string(kMaxSequenceLength) + " new rows per sequence");
  // The cache as flare::attention reads it: the same checks on its pages, table and lengths.
  AttentionOptions cacheOptions;
  cacheOptions.kvLens = kvLens;
  cacheOptions.pageTable = pageTable;
  TensorView q = kNew;
  q.shape[1] = kCache.shape[1];
  checkCacheTensors(cacheOptions, q, kCache, vCache);
  checkTensor(kvLens, "kvLens", 1, 4);
  if (kvLens.dtype != DType::I32 || kvLens.shape[0] != kNew.shape[0] ||
      (!kvLens.strides.empty() && kvLens.strides[0] != 1))
    fail("appendKV: kvLens must be contiguous i32 [B] = [" + std::to_string(kNew.shape[0]) + "]");
  checkNoSelfOverlap(kCache, "kCache");
  checkNoSelfOverlap(vCache, "vCache");
}

void detail::checkGradientTensor(const TensorView &t, const TensorView &like, const char *name, bool written) {
  checkAttentionTensor(t, name);
  if (t.dtype != like.dtype || t.shape != like.shape)
    fail(std::string(name) + " must be " + dtypeName(like.dtype) + " " + shapeText(like.shape) + ", got " +
         dtypeName(t.dtype) + " " + shapeText(t.shape));
  checkSpan(t, name);
  if (written)
    checkNoSelfOverlap(t, name);
}

AttentionPlan planAttention(const TensorView &q, const TensorView &k, const TensorView &v, const TensorView &out,
                            const AttentionOptions &options) {
  checkAttentionTensor(q, "q");
  checkAttentionTensor(k, "k");
  checkAttentionTensor(v, "v");
  checkAttentionTensor(out, "out");
  if (k.dtype != q.dtype || v.dtype != q.dtype || out.dtype != q.dtype)
    fail(std::string("q, k, v and out must share one dtype, got ") + dtypeName(q.dtype) + ", " + dtypeName(k.dtype) +
         ", " + dtypeName(v.dtype) + ", " + dtypeName(out.dtype));
  AttentionPlan plan;
  plan.batch = q.shape[0];
  plan.headsQ = q.shape[1];
  plan.seqQ = q.shape[2];
  plan.headDim = q.shape[3];
  plan.headDimV = v.shape[3];
  plan.headsKV = k.shape[1];
  plan.seqKV = k.shape[2];
  for (auto [name, d] : {std::pair{"head_dim", plan.headDim}, std::pair{"v's head_dim", plan.headDimV}})
    if (d % 16 != 0 || d < 32 || d > 256)
      fail(std::string(name) + " " + std::to_string(d) + " is not supported (a multiple of 16 from 32 to 256)");
  const bool paged = options.pageTable.data != 0;
  const bool packed = options.cuSeqlensQ.data || options.cuSeqlensK.data;
  if (paged) {
    checkCacheTensors(options, q, k, v);
    plan.pageSize = k.shape[2];
    plan.seqKV = options.pageTable.shape[1] * plan.pageSize;
  } else if ((!packed && k.shape[0] != plan.batch) || k.shape[3] != plan.headDim) {
    fail("k must be [B, Hkv, Skv, D] with q's B and D: q " + shapeText(q.shape) + ", k " + shapeText(k.shape));
  }
  if (!std::equal(k.shape.begin(), k.shape.begin() + 3, v.shape.begin()))
    fail("v must have k's shape but for its head_dim: k " + shapeText(k.shape) + ", v " + shapeText(v.shape));
  if (packed)
    packSequences(plan, options, q, k);
  if (options.kvLens.data) {
    checkTensor(options.kvLens, "kvLens", 1, 4);
    if (options.kvLens.dtype != DType::I32 || options.kvLens.shape[0] != plan.batch ||
        (!options.kvLens.strides.empty() && options.kvLens.strides[0] != 1))
      fail("kvLens must be contiguous i32 [B] = [" + std::to_string(plan.batch) + "], got " +
           dtypeName(options.kvLens.dtype) + " " + shapeText(options.kvLens.shape));
    checkSpan(options.kvLens, "kvLens");
  }
  if (!std::equal(q.shape.begin(), q.shape.begin() + 3, out.shape.begin()) || out.shape[3] != plan.headDimV)
    fail("out must have q's shape with v's head_dim: q " + shapeText(q.shape) + ", v " + shapeText(v.shape) +
         ", out " + shapeText(out.shape));
  if (plan.headsQ % plan.headsKV != 0)
    fail("query heads (" + std::to_string(plan.headsQ) + ") must be a multiple of key/value heads (" +
         std::to_string(plan.headsKV) + ")");
  if (plan.headsQ > kMaxBatchOrHeads || plan.batch > kMaxBatchOrHeads)
    fail("batch and heads must be at most " + std::to_string(kMaxBatchOrHeads) + " (grid limits), got batch " +
         std::to_string(plan.batch) + " and " + std::to_string(plan.headsQ) + " query heads");
  if (plan.seqQ > kMaxSequenceLength || plan.seqKV > kMaxSequenceLength)
    fail("sequence lengths must be at most " + std::to_string(kMaxSequenceLength) + " (2^28 - 1), got Sq " +
         std::to_string(plan.seqQ) + " and Skv " + std::to_string(plan.seqKV));
  for (auto [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}, {&out, "out"}})
    checkSpan(*t, name);
  checkNoSelfOverlap(out, "out");
  checkTileConfig(options.tile);
  if (options.tile.kvSplits > 1 && plan.batch * options.tile.kvSplits > kMaxBatchOrHeads)
    fail("batch x tile.kvSplits must be at most " + std::to_string(kMaxBatchOrHeads) + " (grid limit), got " +
         std::to_string(plan.batch) + " x " + std::to_string(options.tile.kvSplits));
  if (options.softcap < 0.f || !std::isfinite(options.softcap))
    fail("softcap must be a finite value >= 0");
  if (options.scale < 0.f || !std::isfinite(options.scale))
    fail("scale must be a finite value >= 0 (0: 1/sqrt(head_dim))");

  plan.hasLse = options.lse.data != 0;
  {
    // A group's rows (head in group, query; the query fastest) at one stride in q and out.
    const std::vector<int64_t> qs = q.effectiveStrides(), os = out.effectiveStrides();
    plan.packableGqa = plan.headsQ > plan.headsKV && !plan.totalQ &&
                       (plan.seqQ == 1 || (qs[1] == plan.seqQ * qs[2] && os[1] == plan.seqQ * os[2]));
  }
  std::vector<std::string> auxTypes;
  if (options.module.empty()) {
    if (!options.aux.empty())
      fail("aux tensors are only read by a custom module (options.module)");
    plan.module = attentionModule(options, q.dtype, plan.headDim, plan.pageSize, plan.headDimV);
    plan.kernelName = "flare_attention";
  } else {
    const detail::ModuleFacts &facts = detail::moduleFacts(options.module);
    if (facts.elemType != dtypeName(q.dtype))
      fail("the custom module computes on " + facts.elemType + " but the tensors are " + dtypeName(q.dtype));
    if (facts.headDim != plan.headDim || facts.headDimV != plan.headDimV)
      fail("the custom module's head_dims (Q.K, V) are " + std::to_string(facts.headDim) + ", " +
           std::to_string(facts.headDimV) + " but the tensors' are " + std::to_string(plan.headDim) + ", " +
           std::to_string(plan.headDimV));
    if (facts.hasLse != plan.hasLse)
      fail(facts.hasLse ? "the custom module returns the LSE: give options.lse"
                        : "options.lse is set but the custom module returns no LSE");
    if (facts.kvLens != (options.kvLens.data != 0))
      fail(facts.kvLens ? "the custom module takes kv_lens: give options.kvLens"
                        : "options.kvLens is set but the custom module takes no kv_lens");
    if (facts.varlen != (plan.totalQ != 0))
      fail(facts.varlen ? "the custom module takes cu_seqlens: give options.cuSeqlensQ and cuSeqlensK"
                        : "options.cuSeqlensQ is set but the custom module takes no cu_seqlens");
    if (facts.config.pageSize != plan.pageSize)
      fail(facts.config.pageSize ? "the custom module reads a paged cache of " + std::to_string(facts.config.pageSize) +
                                       " keys per page: give options.pageTable and k, v of that page size"
                                 : "options.pageTable is set but the custom module reads contiguous K and V");
    for (int i = 0; i < 4; ++i) {
      if (facts.qShape[i] >= 0 && facts.qShape[i] != q.shape[i])
        fail("q's shape " + shapeText(q.shape) + " does not match the custom module's query type");
      if (facts.kShape[i] >= 0 && facts.kShape[i] != k.shape[i])
        fail("k's shape " + shapeText(k.shape) + " does not match the custom module's key type");
    }
    if (facts.auxTypes.size() != options.aux.size())
      fail("the custom module takes " + std::to_string(facts.auxTypes.size()) + " aux tensors, got " +
           std::to_string(options.aux.size()));
    auxTypes = facts.auxTypes;
    plan.module = options.module;
    plan.kernelName = facts.funcName;
  }
  if (plan.hasLse) {
    checkTensor(options.lse, "lse", 3);
    if (options.lse.dtype != DType::F32)
      fail(std::string("lse must be f32, got ") + dtypeName(options.lse.dtype));
    const std::vector<int64_t> lseShape = plan.totalQ ? std::vector<int64_t>{1, plan.headsQ, plan.totalQ}
                                                      : std::vector<int64_t>{plan.batch, plan.headsQ, plan.seqQ};
    if (options.lse.shape != lseShape)
      fail(std::string(plan.totalQ ? "lse must be [1, Hq, total_q] = " : "lse must be [B, Hq, Sq] = ") +
           shapeText(lseShape) + ", got " + shapeText(options.lse.shape));
    if (options.lse.effectiveStrides() != TensorView{0, DType::F32, options.lse.shape, {}}.effectiveStrides())
      fail("lse must be contiguous");
    checkSpan(options.lse, "lse");
  }
  for (size_t i = 0; i < options.aux.size(); ++i) {
    const TensorView &a = options.aux[i];
    std::string name = "aux[" + std::to_string(i) + "]";
    checkTensor(a, name.c_str(), 1);
    if (dtypeName(a.dtype) != auxTypes[i])
      fail(name + " must be " + auxTypes[i] + " (the module's aux type), got " + dtypeName(a.dtype));
    if (!a.strides.empty() && a.strides[0] != 1)
      fail(name + " must be contiguous");
    if (a.shape[0] > std::numeric_limits<int32_t>::max())
      fail(name + " is longer than 2^31 - 1 elements");
    checkSpan(a, name.c_str());
  }

  // Autotuning launches the kernel once per timed candidate: out must not feed its own inputs.
  if (options.autotune) {
    auto span = [](const TensorView &t) { // [first, last] byte
      std::vector<int64_t> strides = t.effectiveStrides();
      uint64_t last = 0;
      for (size_t i = 0; i < t.shape.size(); ++i)
        last += static_cast<uint64_t>(std::max<int64_t>(t.shape[i] - 1, 0) * strides[i]);
      return std::make_pair(t.data, t.data + (last + 1) * dtypeBytes(t.dtype) - 1);
    };
    auto [o0, o1] = span(out);
    for (auto [t, name] : {std::pair{&q, "q"}, {&k, "k"}, {&v, "v"}}) {
      auto [t0, t1] = span(*t);
      if (o0 <= t1 && t0 <= o1)
        fail(std::string("with autotune, out must not overlap ") + name +
             " (autotuning writes out once per timed launch)");
    }
  }

  // Flare's attention kernel ABI (dialects/Attn/Rationale.md).
  rt::KernelArgs &args = plan.args;
  args.addPointer(q.data).addPointer(k.data).addPointer(v.data).addPointer(out.data);
  if (plan.hasLse)
    args.addPointer(options.lse.data);
  detail::addAuxAndSizes(args, plan, options.aux);
  for (const TensorView *t : {&q, &k, &v, &out}) {
    std::vector<int64_t> s = t->effectiveStrides();
    args.addI64(s[0]).addI64(s[1]).addI64(s[2]);
  }
  if (options.kvLens.data)
    args.addPointer(options.kvLens.data);
  if (paged) {
    // The table's row stride, the view rows one page advances and the cache's rows (checkCacheTensors).
    const std::vector<int64_t> ks = k.effectiveStrides(), ts = options.pageTable.effectiveStrides();
    const int64_t pageRows = ks[0] / ks[2];
    args.addPointer(options.pageTable.data).addI32(static_cast<int32_t>(ts[0]));
    args.addI32(static_cast<int32_t>(pageRows)).addI32(static_cast<int32_t>(k.shape[0] * pageRows));
  }
  if (plan.totalQ)
    args.addPointer(options.cuSeqlensQ.data).addPointer(options.cuSeqlensK.data);
  return plan;
}

namespace {

/// A configuration flare::attention compiles with, and the facts of it the launch decisions read.
struct LaunchConfig {
  std::string text; ///< `#attn.config<...>`
  int64_t blockM = 0, blockN = 0;
  bool splitTail = false;
  bool blockLists = false;
};

/// A request's overrides as numbers, for keys and comparisons.
std::array<int64_t, 20> overrideValues(const attn::ConfigOverrides &o) {
  return {o.blockM, o.blockN, o.numWarps, o.partialRowSums, o.overlap, o.pingPong, o.lazyRescale, o.deferRescale,
          o.producer, o.lastPvAfterLoops, o.persistent, o.peelFirstStep, o.splitTail, o.operandsAfterFirstStage,
          o.prefetchNextInstance, o.invariantAInRegisters, o.pairInstances, o.splitKv, o.packGqa,
          o.blockLists};
}

/// The configuration of `module` (an attention module that parsed before) on `arch`: the configured
/// choice with `overrides`, once per distinct request. Every call of attention() asks (once or twice):
/// the last few requests of the calling thread are compared as they are, without building a key or
/// taking the lock (a model's calls repeat a few shapes; bench/host_overhead.py times a call), the
/// others looked up in a map of every request so far. The reference stays valid for the process.
const LaunchConfig &launchConfig(const std::string &module, const std::string &arch, const attn::ConfigOverrides &o) {
  struct Recent {
    std::string arch, module;
    std::array<int64_t, 20> overrides{};
    const LaunchConfig *config = nullptr;
  };
  thread_local std::array<Recent, 4> recent;
  thread_local size_t nextRecent = 0;
  const std::array<int64_t, 20> values = overrideValues(o);
  for (const Recent &r : recent)
    if (r.config && r.overrides == values && r.arch == arch && r.module == module)
      return *r.config;

  static std::mutex mutex;
  static std::unordered_map<std::string, LaunchConfig> known;
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext(detail::attentionDialects(), mlir::MLIRContext::Threading::DISABLED);
    ctx->loadDialect<attn::AttnDialect>();
    return ctx; // kept for the process: it holds the uniqued configurations
  }();
  auto remember = [&](const LaunchConfig &config) -> const LaunchConfig & {
    recent[nextRecent++ % recent.size()] = Recent{arch, module, values, &config};
    return config;
  };
  std::string key = arch;
  for (int64_t v : values)
    key += "," + std::to_string(v);
  key += "\n" + module;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(key); it != known.end())
    return remember(it->second);
  const std::optional<Target> target = Target::get(arch);
  if (!target)
    fail("unsupported architecture '" + arch + "'");
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler collect(context, [&](mlir::Diagnostic &d) {
    diagnostics += (diagnostics.empty() ? "" : "; ") + d.str();
    return mlir::success();
  });
  attn::AttentionFacts facts = detail::moduleFacts(module).config;
  // Block lists assume the same keys for every sequence: not with kv_lens, pages or cu_seqlens.
  attn::ConfigOverrides request = o;
  if (request.blockLists > 0 && (facts.raggedKeys || facts.pageSize > 0))
    request.blockLists = 0;
  facts.blockLists = request.blockLists > 0 && facts.maskClass == attn::MaskClass::Generic;
  const attn::ConfigAttr config =
      attn::applyOverrides(attn::chooseAttentionConfig(context, *target, facts), facts.maskClass, request,
                           [&] { return mlir::emitError(mlir::UnknownLoc::get(context)); });
  if (!config)
    fail("the tile configuration does not apply to this kernel: " + diagnostics);
  LaunchConfig launch{config.text(), config.getBlockM(), config.getBlockN(),
                      config.has(attn::ConfigSwitch::SplitTail), config.has(attn::ConfigSwitch::BlockLists)};
  return remember(known.emplace(std::move(key), std::move(launch)).first->second);
}

} // namespace

namespace {
/// Split-KV by the launch shape (AttentionTileConfig::kvSplits = 0): calls of at most
/// kSplitKvMaxQueries query rows whose program instances of kSplitKvRows rows leave more than half
/// the SMs idle, with at least two parts of kSplitKvMinBlocks key blocks.
constexpr int64_t kSplitKvRows = 64, kSplitKvKeys = 64, kSplitKvMinBlocks = 2;
/// Keys per step of a split launch over pages of 16 keys (bench/NOTES.md d8: 1.25-1.49x 64 keys at
/// batch 1 and 8 from 64k keys on the H200; 64 keys with a producer warpgroup 1.30-1.43x).
constexpr int64_t kSplitKvKeysSmallPages = 32;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Program instances of `rows` rows: one per (row block, query head, batch), or with packed GQA rows
/// one per (block of a group's Sq x G rows, KV head, batch).
int64_t instancesOf(const AttentionPlan &plan, int64_t rows, bool packed) {
  const int64_t group = plan.headsQ / plan.headsKV;
  return packed ? ceilDiv(plan.seqQ * group, rows) * plan.headsKV * plan.batch
                : ceilDiv(plan.seqQ, rows) * plan.headsQ * plan.batch;
}

bool splitsKeysByShape(const AttentionPlan &plan, int64_t multiprocessors, int64_t blockN, bool packed) {
  const int64_t instances = instancesOf(plan, kSplitKvRows, packed);
  return plan.seqQ <= kSplitKvMaxQueries && 2 * instances <= multiprocessors &&
         ceilDiv(plan.seqKV, blockN) >= 2 * kSplitKvMinBlocks;
}

/// The parts of a split launch decided by the shape: as many as one wave of the kernel's resident
/// CTAs holds, each of at least kSplitKvMinBlocks key blocks.
int64_t kvPartsByShape(const AttentionPlan &plan, int64_t residentCtas, int64_t blockM, int64_t blockN, bool packed) {
  const int64_t instances = instancesOf(plan, blockM, packed);
  const int64_t byKeys = ceilDiv(plan.seqKV, blockN) / kSplitKvMinBlocks;
  return std::max<int64_t>(1, std::min({residentCtas / std::max<int64_t>(instances, 1), byKeys, kMaxKvSplits,
                                        kMaxBatchOrHeads / plan.batch}));
}
} // namespace

detail::AttentionKernels detail::attentionKernel(rt::KernelCache &cache, const AttentionPlan &plan,
                                                 const AttentionTileConfig &tile, const std::string &arch,
                                                 std::vector<rt::CacheAnswer> *answers) {
  // The configuration is decided here, before compiling: the configured choice for the module's head
  // dim, element type and mask on this target, the call's tile override, and the launch shape.
  attn::ConfigOverrides request;
  request.blockM = tile.blockM;
  request.blockN = tile.blockN;
  request.numWarps = tile.numWarps;
  auto sw = [](int v) { return v == 0 ? -1 : v > 0 ? 1 : 0; }; // AttentionTileConfig: 1 on, -1 off, 0 chosen
  request.overlap = sw(tile.overlap);
  request.pingPong = sw(tile.pingPong);
  request.producer = sw(tile.producer);
  request.persistent = sw(tile.persistent);
  // Up to 1024 keys a persistent kernel without a mask runs its query blocks one per CTA and turn
  // instead of in pairs: all query blocks of a head at once, fewer heads' K and V in L2
  // (bench/NOTES.md a68: +2.6% / +3.9% at 512 keys at head dims 128 / 256, level at 1k, slower
  // from 2k). Kernels that cannot (a mask, not persistent) keep their pairs.
  constexpr int64_t kUnpairedMaxKeys = 1024;
  if (plan.seqKV <= kUnpairedMaxKeys)
    request.pairInstances = 0;
  const std::string target = arch.empty() ? cache.context().arch() : arch;
  const int64_t predictedCtas = cache.context().multiprocessors();
  // Packed GQA (the query heads of a KV head as the rows of one instance, each K/V block read once
  // per group) for calls of at most kSplitKvMaxQueries queries whose group rows lie at one stride.
  const bool packed = plan.packableGqa && plan.seqQ <= kSplitKvMaxQueries && detail::hasHopperMachinery(target);
  if (packed)
    request.packGqa = 1;
  // Split keys (flash-decoding), asked for or decided by the shape on targets with the Hopper
  // machinery: one warpgroup of kSplitKvRows query rows per instance, no producer warpgroup, unless
  // the call's tile says otherwise (split_kv turns the persistent schedule off: applyOverrides).
  bool splitKv = tile.kvSplits > 1;
  if (splitKv && plan.totalQ)
    fail("tile.kvSplits does not apply to packed sequences (cuSeqlensQ)");
  // At most kSplitKvKeys keys per step (fewer where the configuration takes fewer: masks evaluated
  // per element), and kSplitKvKeysSmallPages where a paged cache's blocks are gathered in pieces of
  // 16 keys (page sizes 16, 48, ...: two TMA copies per K or V block instead of four).
  const bool smallPieces = plan.pageSize > 0 && (plan.pageSize & -plan.pageSize) < kSplitKvKeysSmallPages;
  const int64_t splitBlockN = tile.blockN ? tile.blockN
                                          : std::min(launchConfig(plan.module, target, request).blockN,
                                                     smallPieces ? kSplitKvKeysSmallPages : kSplitKvKeys);
  if (tile.kvSplits == 0 && detail::hasHopperMachinery(target) && !plan.totalQ)
    splitKv = splitsKeysByShape(plan, predictedCtas, splitBlockN, packed);
  if (splitKv) {
    // 64 keys per step: half the shared memory of 128, two CTAs per SM and twice the parts
    // (bench/NOTES.md d3: +5-6% at 128k keys at batch 1 and 8, +6.6% at batch 8 16k).
    request.splitKv = 1;
    request.blockM = tile.blockM ? tile.blockM : kSplitKvRows;
    request.blockN = splitBlockN;
    request.numWarps = tile.numWarps ? tile.numWarps : 4;
    request.producer = tile.producer ? sw(tile.producer) : 0;
  } else if (packed && smallPieces && plan.headDim > 64 && plan.headDim <= 128 && !tile.blockM && !tile.blockN &&
             !tile.numWarps) {
    // Packed rows over pages of 16 keys without a split (many sequences): 64 rows and 64 keys per step
    // on one consumer warpgroup beside a producer warpgroup, instead of 128 x 128 whose stages are 32
    // TMA copies each (bench/NOTES.md d8: 1.08-1.12x at batch 64, head dim 128; the head dims whose
    // blocks take row pieces, attn-choose-config).
    request.blockM = kSplitKvRows;
    request.blockN = kSplitKvKeys;
    request.numWarps = 4;
    request.producer = tile.producer ? sw(tile.producer) : 1;
    request.pingPong = tile.pingPong ? sw(tile.pingPong) : 0; // one consumer warpgroup: no turns
  }
  // Block lists for a mask the compiler cannot classify (launchConfig keeps them for masks of class
  // generic only, and not beside kv_lens, pages or packed sequences), unless the call's tile says
  // otherwise; not with split keys or packed GQA rows, whose instances are not one block of a head's
  // query rows.
  if (tile.blockLists < 0)
    request.blockLists = 0;
  else if (!splitKv && !packed)
    request.blockLists = 1;
  const LaunchConfig &requested = launchConfig(plan.module, target, request);
  const LaunchConfig *config = &requested;
  // A kernel that may split the last instances between CTAs (stream-K) carries the hand-over's code
  // in every instance (1-2% at 512 tokens): launches it would not split get the kernel without it.
  // Its CTAs: one per SM (a persistent kernel's shared memory leaves room for one), checked below.
  auto splits = [&](const LaunchConfig &c, int64_t ctas) {
    const int64_t instances = ceilDiv(plan.seqQ, c.blockM) * plan.headsQ * plan.batch;
    return splitsLaunch(instances, ctas, ceilDiv(plan.seqKV, c.blockN));
  };
  attn::ConfigOverrides unsplit = request;
  unsplit.splitTail = 0;
  const bool mayNotSplit = config->splitTail && !splits(*config, predictedCtas);
  if (mayNotSplit)
    config = &launchConfig(plan.module, target, unsplit);

  CompileOptions compile;
  compile.arch = arch; // empty: the cache uses the device's
  compile.attentionConfig = config->text;
  // planAttention admits 16-byte aligned views only, whose tensor maps encode: the kernel without the
  // element-wise copies for maps that do not (a fifth less code and compile time). A driver that
  // cannot encode them gets the kernel with those copies.
  compile.tmaFallback = false;
  const std::string bufferName = "<flare::attention>";
  auto compileKernel = [&] {
    rt::CacheAnswer answer = cache.lookup(plan.module, compile, bufferName);
    std::shared_ptr<rt::Module> module = answer.module;
    if (answers)
      answers->push_back(std::move(answer));
    return module->kernel(plan.kernelName);
  };
  rt::Kernel kernel = compileKernel();
  // (A kernel that visits block lists takes their address last: any will do for the question.)
  auto encodable = [&] {
    if (!config->blockLists)
      return kernel.usesTensorMaps(plan.args);
    rt::KernelArgs args = plan.args;
    args.addPointer(0);
    return kernel.usesTensorMaps(args);
  };
  if (kernel.info().tmaRequired && !encodable()) {
    compile.tmaFallback = true;
    kernel = compileKernel();
  }
  // The split kernel's CTAs as the device fits them, where they differ from the prediction (another
  // device, a kernel with less shared memory): the other kernel where the launch decides otherwise.
  if (kernel.info().persistent && (config->splitTail || mayNotSplit)) {
    const int64_t ctas = kernel.residentCtas();
    if (ctas != predictedCtas) {
      const LaunchConfig &wanted = splits(requested, ctas) ? requested : launchConfig(plan.module, target, unsplit);
      if (wanted.text != config->text) {
        compile.attentionConfig = wanted.text;
        kernel = compileKernel();
      }
    }
  }
  AttentionKernels kernels{kernel, 1, std::nullopt, std::nullopt, {}};
  if (config->blockLists) {
    kernels.classifier = kernel.module().kernel(plan.kernelName + "_block_mask");
    kernels.config = compile.attentionConfig;
  }
  if (splitKv) {
    // The parts: the call's, else as many as one wave of this kernel's CTAs holds. The kernel is the
    // same for any number of them (a launch argument).
    kernels.splits = tile.kvSplits > 1 ? tile.kvSplits
                                       : kvPartsByShape(plan, kernel.residentCtas(), config->blockM, config->blockN,
                                                        packed);
    kernels.combine = kernel.module().kernel(plan.kernelName + "_combine");
  }
  return kernels;
}

void detail::launchAttention(const AttentionKernels &kernels, const AttentionPlan &plan, void *stream,
                             const BlockMask *blockMask) {
  const rt::Kernel &kernel = kernels.kernel;
  int64_t blockM = kernel.info().hint("attention.block_m");
  if (blockM <= 0)
    fail("kernel '" + plan.kernelName + "' is not a generated attention kernel (no attention.block_m hint)");
  // Packed GQA: x over the blocks of a group's G x Sq rows, y over KV heads.
  const bool packed = kernel.info().hint("attention.pack_gqa") > 0;
  const int64_t rowsPerUnit = packed ? plan.seqQ * (plan.headsQ / plan.headsKV) : plan.seqQ;
  rt::Grid grid;
  grid.x = static_cast<unsigned>(ceilDiv(rowsPerUnit, blockM));
  grid.y = static_cast<unsigned>(packed ? plan.headsKV : plan.headsQ);
  grid.z = static_cast<unsigned>(plan.batch);
  if (kernels.classifier) {
    rt::KernelArgs args = plan.args;
    args.addPointer(blockListsFor(kernels, plan, blockMask, stream));
    kernel.launch(grid, args, stream);
    return;
  }
  if (!kernels.combine) {
    kernel.launch(grid, plan.args, stream);
    return;
  }
  // Split keys: the parts' outputs [B, Hq, splits, Sq, D] and LSEs [B, Hq, splits, Sq] (f32; packed:
  // [B, Hkv, splits, G x Sq, ...]) in the stream's workspace, grid z over (batch, part), then
  // <name>_combine over the query rows.
  const int64_t parts = kernels.splits;
  const size_t rows = static_cast<size_t>(plan.batch * plan.headsQ * parts * plan.seqQ);
  const size_t outBytes = rows * static_cast<size_t>(plan.headDimV) * sizeof(float);
  const uint64_t workspace = kernel.module().streamWorkspace(stream, outBytes + rows * sizeof(float));
  rt::KernelArgs args = plan.args;
  args.addPointer(workspace).addPointer(workspace + outBytes).addI32(static_cast<int32_t>(parts));
  grid.z = static_cast<unsigned>(plan.batch * parts);
  kernel.launch(grid, args, stream);
  const int64_t combineRows = kernels.combine->info().hint("attention.block_m");
  if (combineRows <= 0)
    fail("kernel '" + plan.kernelName + "_combine' has no attention.block_m hint");
  kernels.combine->launch({static_cast<unsigned>(ceilDiv(plan.seqQ, combineRows)),
                           static_cast<unsigned>(plan.headsQ), static_cast<unsigned>(plan.batch)},
                          args, stream);
}

AttentionTileConfig launchTileConfig(const AttentionPlan &plan, const AttentionOptions &options,
                                     const std::string &arch) {
  // Causal query blocks of 1-4 steps: finer blocks on one warpgroup balance the SMs better than the
  // configured 128-row blocks on two. Measured for the plain causal mask only.
  constexpr int64_t kFineCausalMaxKeys = 512;
  const bool plainCausal = options.module.empty() && options.causal && detail::windowSide(options.windowLeft) < 0 &&
                           detail::windowSide(options.windowRight) < 0 && options.softcap == 0.f;
  AttentionTileConfig config;
  if (attn::tileHeadDim(plan.headDim, plan.headDimV) == 64 && plainCausal && plan.seqKV <= kFineCausalMaxKeys &&
      detail::hasHopperMachinery(arch)) {
    config.blockM = config.blockN = 64;
    config.numWarps = 4;
  }
  return config;
}

std::string detail::targetArch(rt::KernelCache &cache, const AttentionOptions &options) {
  return options.arch.empty() ? cache.context().arch() : options.arch;
}

void attention(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
               const TensorView &out, const AttentionOptions &options, void *stream) {
  AttentionPlan plan = planAttention(q, k, v, out, options);
  AttentionTileConfig config = options.tile;
  if (config == AttentionTileConfig{})
    config = options.autotune ? detail::autotunedChoice(cache, plan, options, stream)
                              : launchTileConfig(plan, options, detail::targetArch(cache, options));
  detail::launchAttention(detail::attentionKernel(cache, plan, config, options.arch), plan, stream, options.blockMask);
}

} // namespace flare
