//===- AttentionLaunch.cpp - flare::attention: the kernel a call compiles, and its launch -===//
//
// The configuration is decided before compiling (the module's configured choice, the call's tile
// override and the launch shape: split keys, packed GQA rows, paged caches' steps, stream-K), the
// kernel compiled through the cache and launched (with split keys, the parts and their combine).
//
//===----------------------------------------------------------------------===//
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

using detail::fail;

namespace {

/// A configuration flare::attention compiles with, and the facts of it the launch decisions read.
struct LaunchConfig {
  std::string text; ///< `#attn.config<...>`
  int64_t blockM = 0, blockN = 0;
  bool splitTail = false;
  bool blockLists = false;
};

/// A request's overrides as numbers, for keys and comparisons.
std::array<int64_t, 21> overrideValues(const attn::ConfigOverrides &o) {
  return {o.blockM, o.blockN, o.numWarps, o.partialRowSums, o.overlap, o.pingPong, o.lazyRescale, o.deferRescale,
          o.producer, o.lastPvAfterLoops, o.persistent, o.peelFirstStep, o.splitTail, o.operandsAfterFirstStage,
          o.prefetchNextInstance, o.invariantAInRegisters, o.pairInstances, o.splitKv, o.packGqa,
          o.blockLists, o.dynamicInstances};
}

/// The configuration of `module` (an attention module that parsed before) on `arch`: the configured
/// choice with `overrides`, once per distinct request. Every call of attention() asks (once or twice):
/// the last few requests of the calling thread are compared as they are, without building a key or
/// taking the lock (a model's calls repeat a few shapes; bench/host_overhead.py times a call), the
/// others looked up in a map of every request so far. The reference stays valid for the process.
const LaunchConfig &launchConfig(const std::string &module, const std::string &arch, const attn::ConfigOverrides &o) {
  struct Recent {
    std::string arch, module;
    std::array<int64_t, 21> overrides{};
    const LaunchConfig *config = nullptr;
  };
  thread_local std::array<Recent, 4> recent;
  thread_local size_t nextRecent = 0;
  const std::array<int64_t, 21> values = overrideValues(o);
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
/// batch 1 and 8 from 64k keys on the H200; 64 keys with a producer warpgroup 1.30-1.43x), unless
/// wholeStepsOverSmallPages says 64.
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

/// Decoding (bench/NOTES.md d12-d14, under CUDA graphs on an H100): a split launch whose parts hold
/// at most kShortPartKeys keys (as many parts as one CTA per SM gives, or the call's) runs beside a
/// producer warpgroup, which has a part's first blocks in flight while the consumers set up (batch
/// 1-8, 1k-8k keys: 1.02-1.19x at head dim 128; from 2k keys a part level to 4% slower without it);
/// packed rows without a split take 64 rows on one warpgroup beside a producer instead of two
/// warpgroups of 64 rows each, 128 keys a step up to head dim 128 and 64 above (batch 16 and 64,
/// 1k-32k keys: 1.00-1.05x at head dim 128).
constexpr int64_t kShortPartKeys = 1024, kPackedDecodeKeys = 128;

int64_t packedDecodeKeys(const AttentionPlan &plan) {
  return attn::tileHeadDim(plan.headDim, plan.headDimV) <= 128 ? kPackedDecodeKeys : kPackedDecodeKeys / 2;
}

/// The keys of one part of a split launch in steps of `blockN` keys: the call's parts, or as many
/// as the shape gives (kvPartsByShape).
int64_t keysPerSplitPart(const AttentionPlan &plan, const AttentionTileConfig &tile, int64_t multiprocessors,
                         int64_t blockN, bool packed) {
  const int64_t parts = tile.kvSplits > 1 ? tile.kvSplits
                                          : kvPartsByShape(plan, multiprocessors, kSplitKvRows, blockN, packed);
  return ceilDiv(plan.seqKV, parts);
}

/// A split launch over pages gathered in pieces of 16 keys takes kSplitKvKeys keys a step (instead of
/// kSplitKvKeysSmallPages at tile head dim 128, of one page's 16 at 64 and 256) where the parts that
/// 32 keys a step would give hold more than 128 keys and at most kShortPartKeys, or any number above
/// 128 at tile head dim 64 (bench/NOTES.md d16, under CUDA graphs on an H100: +8 to +45% there;
/// parts of 64 keys 5-8% slower with 64 keys a step; from 2048 keys a part 8-12% slower at head dim
/// 128, level at 256).
bool wholeStepsOverSmallPages(const AttentionPlan &plan, const AttentionTileConfig &tile, int64_t multiprocessors,
                              bool packed) {
  constexpr int64_t kFewKeys = 128, kNarrowHeadDim = 64;
  const int64_t keys = keysPerSplitPart(plan, tile, multiprocessors, kSplitKvKeysSmallPages, packed);
  return keys > kFewKeys &&
         (keys <= kShortPartKeys || attn::tileHeadDim(plan.headDim, plan.headDimV) <= kNarrowHeadDim);
}

bool shortSplitParts(const AttentionPlan &plan, const AttentionTileConfig &tile, int64_t multiprocessors,
                     int64_t blockN, bool packed) {
  return keysPerSplitPart(plan, tile, multiprocessors, blockN, packed) <= kShortPartKeys;
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
  if (tile.persistent == 2) // persistent, its CTAs taking instances from a shared counter
    request.dynamicInstances = 1;
  else if (tile.persistent == 1) // persistent, every G-th instance (packed sequences take the counter)
    request.dynamicInstances = 0;
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
  // per element). Where a paged cache's blocks are gathered in pieces of 16 keys (page sizes 16, 48,
  // ...) and blocks span pages (attn::keyBlocksSpanPages), kSplitKvKeysSmallPages (two TMA copies per
  // K or V block instead of four) unless wholeStepsOverSmallPages; where the configuration keeps a
  // block within one page (one piece of 16 keys) kSplitKvKeys across pages where
  // wholeStepsOverSmallPages, else the configuration's.
  const std::optional<Target> described = Target::get(target);
  const int64_t pieceKeys = plan.pageSize > 0 ? attn::pagePieceKeys(plan.pageSize) : 0;
  const bool pieces16 = pieceKeys > 0 && pieceKeys < kSplitKvKeysSmallPages && described && described->hasWgmma;
  const bool smallPieces =
      pieces16 && attn::keyBlocksSpanPages(*described, attn::tileHeadDim(plan.headDim, plan.headDimV));
  const bool wholeSteps = pieces16 && wholeStepsOverSmallPages(plan, tile, predictedCtas, packed);
  int64_t splitBlockN = tile.blockN;
  if (!splitBlockN) {
    const int64_t configured = launchConfig(plan.module, target, request).blockN;
    if (smallPieces)
      splitBlockN = std::min(configured, wholeSteps ? kSplitKvKeys : kSplitKvKeysSmallPages);
    else if (wholeSteps && configured == pieceKeys)
      splitBlockN = kSplitKvKeys; // the configuration's blocks of one page, taken across pages
    else
      splitBlockN = std::min(configured, kSplitKvKeys);
  }
  if (tile.kvSplits == 0 && detail::hasHopperMachinery(target) && !plan.totalQ)
    splitKv = splitsKeysByShape(plan, predictedCtas, splitBlockN, packed);
  if (splitKv) {
    // 64 keys per step: half the shared memory of 128, two CTAs per SM and twice the parts
    // (bench/NOTES.md d3: +5-6% at 128k keys at batch 1 and 8, +6.6% at batch 8 16k).
    request.splitKv = 1;
    request.blockM = tile.blockM ? tile.blockM : kSplitKvRows;
    request.blockN = splitBlockN;
    request.numWarps = tile.numWarps ? tile.numWarps : 4;
    const bool producer = !tile.numWarps && shortSplitParts(plan, tile, predictedCtas, splitBlockN, packed);
    request.producer = tile.producer ? sw(tile.producer) : producer ? 1 : 0;
  } else if (packed && !tile.blockM && !tile.blockN && !tile.numWarps) {
    // Packed rows without a split (many sequences): 64 rows on one consumer warpgroup beside a
    // producer warpgroup instead of 128 rows on two. Over pages of 16 keys 64 keys per step, instead
    // of 128 x 128 whose stages are 32 TMA copies each (bench/NOTES.md d8: 1.08-1.12x at batch 64,
    // head dim 128); otherwise packedDecodeKeys (above).
    request.blockM = kSplitKvRows;
    request.blockN = smallPieces ? kSplitKvKeys : packedDecodeKeys(plan);
    request.numWarps = 4;
    request.producer = tile.producer ? sw(tile.producer) : 1;
    request.pingPong = tile.pingPong ? sw(tile.pingPong) : 0; // one consumer warpgroup: no turns
    // Above kUnpairedMaxKeys keys one CTA per instance instead of the persistent schedule, the
    // hardware handing out the instances as CTAs finish (bench/NOTES.md d18, H100, caches read from
    // memory: 1.01-1.04x at head dim 128 and batch 64, 2-32k keys, 1.02x over pages of 16 at 256,
    // level at batch 16 and at head dim 64, which is not persistent here; at 1k the persistent
    // kernel is 0.6-0.8% ahead).
    if (!tile.persistent && plan.seqKV > kUnpairedMaxKeys)
      request.persistent = 0;
  }
  // Block lists for a mask the compiler cannot classify (launchConfig keeps them for masks of class
  // generic only, and not beside kv_lens, pages or packed sequences), unless the call's tile says
  // otherwise; not with split keys or packed GQA rows, whose instances are not one block of a head's
  // query rows.
  if (tile.blockLists < 0)
    request.blockLists = 0;
  else if (!splitKv && !packed)
    request.blockLists = 1;
  // Block lists: query blocks of unequal work (their lists' lengths), which the persistent schedule's
  // fixed share of every G-th block leaves unequal per CTA, its CTAs drifting apart over many turns.
  // Where a producer warpgroup runs (tile head dims up to 128) the CTAs take their blocks from a
  // shared counter instead (dynamic_instances; bench/NOTES.md, "Query blocks from a shared counter":
  // causal document masks and block tables at 25% 1.05-1.29x the persistent kernel and 1.04-1.21x
  // one CTA per query block on an H100, at every measured length); the configuration keeps it only
  // where a producer runs. Above 128
  // one CTA per query block beside a producer warpgroup (the hardware's block scheduler hands out
  // the blocks as CTAs finish; 1.02-1.31x the persistent kernel without a producer at every measured
  // length, where the persistent kernel with a producer and the counter spills and runs slower).
  const int64_t tileHeadDim = attn::tileHeadDim(plan.headDim, plan.headDimV);
  if (tile.persistent == 0 && request.blockLists == 1 && launchConfig(plan.module, target, request).blockLists) {
    if (tileHeadDim <= 128) {
      request.dynamicInstances = 1;
    } else {
      request.persistent = 0;
      if (tile.producer == 0)
        request.producer = 1;
    }
  }
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
