//===- Attention.cpp - flare::attention: the tensors checked and the call planned ===//
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

void detail::fail(const std::string &message) { throw Error("flare::attention: " + message); }

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

using detail::fail;

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
  for (auto [value, what] : {std::pair{c.overlap, "overlap"}, {c.pingPong, "pingPong"}, {c.producer, "producer"}})
    if (value < -1 || value > 1)
      fail(std::string("tile.") + what + " = " + std::to_string(value) + " must be -1 (off), 0 (configured) or 1 (on)");
  if (c.persistent < -1 || c.persistent > 2)
    fail("tile.persistent = " + std::to_string(c.persistent) + " must be -1 (off), 0 (configured), 1 (on) or 2 (on, "
         "query blocks taken from a shared counter)");
  if (c.kvSplits < 0 || c.kvSplits > kMaxKvSplits)
    fail("tile.kvSplits = " + std::to_string(c.kvSplits) + " must be 0 (decided by the launch shape), 1 (no split) "
         "or a number of parts up to " + std::to_string(kMaxKvSplits));
  if (c.kvSplits > 1 && c.persistent >= 1)
    fail("tile.kvSplits = " + std::to_string(c.kvSplits) + " needs program instances of their own: tile.persistent "
         "must not be 1 or 2");
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
  // The combine kernel reads a row's parts at a 32-bit stride of Sq x head_dim elements, or with
  // packed GQA (at most kSplitKvMaxQueries queries: always below 2^31) G x Sq x head_dim.
  if (options.tile.kvSplits > 1 && plan.seqQ * plan.headDimV > std::numeric_limits<int32_t>::max())
    fail("tile.kvSplits = " + std::to_string(options.tile.kvSplits) + " needs Sq x head_dim below 2^31, got " +
         std::to_string(plan.seqQ) + " x " + std::to_string(plan.headDimV));
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

} // namespace flare
