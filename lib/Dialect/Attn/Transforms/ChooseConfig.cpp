//===- ChooseConfig.cpp - Attach #attn.config to each attn.attention ------===//
//
// The one place a generated attention kernel's configuration is chosen: chooseAttentionConfig from
// the target and the op's facts, then the pass's overrides (for tuning and measurement), then the
// switches that cannot apply are turned off, so that one kernel has one configuration. An op that
// already carries a config keeps it.
//
//===----------------------------------------------------------------------===//
#include "MaskAnalysis.h"
#include "flare/Dialect/Attn/Config.h"
#include "flare/Dialect/Attn/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

namespace flare::attn {
#define GEN_PASS_DEF_ATTNCHOOSECONFIG
#include "Attn/Passes.h.inc"

namespace {
/// Whether `v`, a value of a modifier region, is computed from the region's block argument `arg`.
bool dependsOn(mlir::Value v, mlir::BlockArgument arg, llvm::SmallPtrSetImpl<mlir::Operation *> &seen) {
  if (v == arg)
    return true;
  mlir::Operation *def = v.getDefiningOp();
  if (!def || !seen.insert(def).second)
    return false;
  return llvm::any_of(def->getOperands(), [&](mlir::Value x) { return dependsOn(x, arg, seen); });
}

/// An attn.aux_load in a modifier whose index depends on both the query and the key index.
bool readsAuxPerElement(AttentionOp op) {
  for (mlir::Region *region : {&op.getScoreMod(), &op.getMaskMod()}) {
    if (region->empty())
      continue;
    mlir::Block &body = region->front();
    // score_mod: (s, b, h, qi, kv, aux...), mask_mod: (b, h, qi, kv, aux...).
    const unsigned qi = region == &op.getScoreMod() ? 3 : 2;
    bool found = false;
    body.walk([&](AuxLoadOp load) {
      llvm::SmallPtrSet<mlir::Operation *, 16> seenQ, seenK;
      found |= dependsOn(load.getIndex(), body.getArgument(qi), seenQ) &&
               dependsOn(load.getIndex(), body.getArgument(qi + 1), seenK);
    });
    if (found)
      return true;
  }
  return false;
}
} // namespace

AttentionFacts AttentionFacts::of(AttentionOp op) {
  auto q = mlir::cast<mlir::RankedTensorType>(op.getQuery().getType());
  const MaskClass mask = op.getMaskClass() ? *op.getMaskClass() : analyzeMask(op).maskClass;
  const int64_t dv = mlir::cast<mlir::RankedTensorType>(op.getValue().getType()).getDimSize(3);
  AttentionFacts facts{tileHeadDim(q.getDimSize(3), dv), q.getElementType().isF16(), mask, !op.getAux().empty(),
                       false, op.getKvLens() || op.isVarlen(), op.isVarlen(), op.getPageSize()};
  facts.auxPerElement = facts.readsAux && readsAuxPerElement(op);
  return facts;
}

bool ConfigOverrides::any() const {
  return blockM > 0 || blockN > 0 || numWarps > 0 || partialRowSums >= 0 || overlap >= 0 || pingPong >= 0 ||
         lazyRescale >= 0 || deferRescale >= 0 || producer >= 0 || lastPvAfterLoops >= 0 || persistent >= 0 ||
         peelFirstStep >= 0 || splitTail >= 0 || operandsAfterFirstStage >= 0 || prefetchNextInstance >= 0 ||
         invariantAInRegisters >= 0 || pairInstances == 0 || splitKv >= 0 || packGqa >= 0 ||
         blockLists >= 0 || dynamicInstances >= 0;
}

ConfigAttr chooseAttentionConfig(mlir::MLIRContext *ctx, const Target &target, const AttentionFacts &facts) {
  // Chosen by measurement (bench/results/2026-11-29-attention-tuning*-h200.csv, bench/NOTES.md): 128
  // query rows on two warpgroups for every head dim; 128 keys per step for head dim 128 (K and V
  // stream through shared memory, so their registers are free for the wider score tile), 64 for head
  // dims 64 and 256. The softmax of block j overlaps the P V product of block j - 1 on wgmma targets;
  // the two warpgroups take turns issuing their MMAs (ping-pong) except at head dim 256, whose
  // 128-register accumulator leaves no room for the turn's wait. Without wgmma (mma.sync) K and V go
  // through registers, so head dim 128 keeps 64 keys per step there. A mask evaluated per element
  // (document ids, ...) keeps more tiles live: 32 keys per step keep it free of spills. The lazy
  // rescale (NOTES a14) pays at head dim 256, whose 128 accumulator registers a thread outnumber its
  // 32 scores four to one; at 128 (64 and 64) the branch around the multiplies cost 8-14% when
  // measured first (a14), gained a little at long sequences after the producer warpgroup (a34), and
  // costs 0.3-1.8% again since Q's descriptors are warp-uniform (a43). At 64 (32 and 32, two CTAs
  // per SM) it gains 0.5-2% from 2k keys and at causal 512 since the first step is peeled (a79).
  const int64_t headDim = facts.headDim;
  const MaskClass mask = facts.maskClass;
  const bool wgmma = target.hasWgmma;
  int64_t blockM = 128, blockN = 64, numWarps = 8, minBlocksPerSM = 0;
  ConfigSwitch on = ConfigSwitch::none;
  auto set = [&](ConfigSwitch s, bool value) {
    if (value)
      on = on | s;
  };
  auto has = [&](ConfigSwitch s) { return bitEnumContainsAll(on, s); };
  // A gather per score element (an aux table indexed by kv - q; below).
  // A mask evaluated on every element of every block its linear part keeps. With block lists only the
  // partial blocks evaluate it and the others run as a linear mask's kernel does, whose tiles fit
  // without spills on wgmma targets from head dim 128 (at 64 two CTAs per SM keep 32 keys per step;
  // on mma.sync 64 keys spilled 36 bytes at head dim 128 and 22 KB at 256; bench/NOTES.md, bl2).
  const bool perElement = mask == MaskClass::Generic && !(facts.blockLists && wgmma && headDim > 64);
  const bool gather = facts.auxPerElement && !perElement;
  // (At head dim 256 a gather on every block, without lists, spilled 8 bytes with the overlap.)
  set(ConfigSwitch::Overlap, wgmma && !(gather && !facts.blockLists && headDim > 128));
  if (wgmma && headDim > 64 && headDim <= 128)
    blockN = 128;
  // (The turns are named barriers around wgmma's asynchronous MMAs; mma.sync kernels have none.)
  set(ConfigSwitch::PingPong, wgmma && headDim <= 128);
  set(ConfigSwitch::LazyRescale, wgmma && (headDim > 128 || headDim <= 64));
  // Head dim 64 (128 x 64 tiles) fits two CTAs per SM in 128 registers a thread; ptxas's relocatable
  // mode, which the driver's JIT uses, would take 139 and leave one.
  if (wgmma && headDim <= 64)
    minBlocksPerSM = 2;
  if (perElement)
    blockN = 32;
  // Block lists at head dim 64: the full blocks as head dim 128's, 128 keys per step with the
  // producer warpgroup, one persistent CTA per SM (64 keys on two CTAs per SM spilled 20 bytes;
  // bench/NOTES.md bl3, h3). So does a gather per element at head dim 64 (64 keys on two CTAs per SM
  // spilled 16 bytes under a causal mask, 128 keys with the producer none).
  const bool tilesOf128 = wgmma && headDim <= 64 && ((facts.blockLists && mask == MaskClass::Generic) || gather);
  if (tilesOf128) {
    blockN = 128;
    minBlocksPerSM = 0;
  }
  // A gather per score element (an aux table indexed by kv - q) is laid out where its values meet
  // the scores (tgpu-assign-layouts), so it needs no shared memory of its own, only registers for
  // its indices and values: the dense kernel's tiles, but at head dim 256 without the overlap where
  // it gathers on every block (above); each choice compiles without spills at sm_90a (ptxas -v,
  // test/Dialect/Attn/choose-config-aux-per-element.mlir; bench/NOTES.md h3). On mma.sync above head
  // dim 128, where K and V pass through registers too, 32 keys per step (spills: 2.2 KB against 6.2
  // KB with 64; the dense kernel's 64 spill as much there).
  if (gather && !wgmma && headDim > 128)
    blockN = 32;
  // A paged cache whose pages are smaller than a block of keys: with TMA, at head dims above 64 up to
  // 128, the block is gathered in row pieces, one copy per page (tile.load's row_pieces;
  // bench/NOTES.md d8), so the tiles stay those of a contiguous cache. Elsewhere a block is copied
  // from one page: at most the largest power of two dividing the page size (pieces cost registers:
  // on sm_80 0 -> 152 bytes of spills at head dim 128 and page size 16; on sm_90a at head dims 64
  // and 256 4-48 bytes where the 16-key blocks spilled 0-20, and their speed is not measured).
  if (facts.pageSize > 0 && !keyBlocksSpanPages(target, headDim))
    blockN = std::min<int64_t>(blockN, pagePieceKeys(facts.pageSize));
  // A producer warpgroup issues the K/V copies at head dim 128 (bench/NOTES.md a23); at 256 the
  // consumers' 232 registers spill, at 64 two CTAs share an SM, and with a mask evaluated per
  // element the producer's own 40 registers spill (it computes the document-mask loops' offsets).
  set(ConfigSwitch::Producer, (wgmma && headDim > 64 && headDim <= 128 && !perElement) || tilesOf128);
  // The last block's P V after the loops (bench/NOTES.md a24, a25), where the registers allow: with a
  // producer warpgroup, or without modifiers that read auxiliary tensors (ALiBi's slopes spilled at
  // head dims 64 and 256).
  set(ConfigSwitch::LastPvAfterLoops, has(ConfigSwitch::Overlap) && (has(ConfigSwitch::Producer) || !facts.readsAux));
  // Persistent (bench/NOTES.md a28) where the producer warpgroup can run ahead into the next query
  // block, and at head dim 256 (one CTA per SM as well); not at 64, whose two CTAs per SM already
  // overlap one's epilogue with the other's work (3-4% slower persistent).
  // Packed variable-length sequences: the launch covers the longest sequence's row blocks, and the
  // blocks past a shorter one's end have nothing to do. Beside a producer warpgroup the CTAs take
  // their instances from a shared counter (dynamic_instances, below), the producer skipping those
  // blocks (bench/NOTES.md vl3: 1.03-1.06x one CTA per block at head dim 128 on an H100); otherwise
  // one CTA per block, the empty ones ending at once (a persistent kernel of fixed turns, its pairs
  // of sequences of unequal lengths: 0.83-0.93x, vl1).
  set(ConfigSwitch::Persistent, has(ConfigSwitch::Producer) || (wgmma && headDim > 128 && !facts.varlen));
  // Masks whose later query rows keep more keys: those row blocks start first, the longest first
  // (at head dim 64 too, two CTAs per SM: +0.4% / +1.0% / +1.2% causal at 4k / 8k / 16k, level to
  // 2k; bench/NOTES.md a76).
  set(ConfigSwitch::RowsGrow,
      mask == MaskClass::Causal || mask == MaskClass::CausalBottomRight || mask == MaskClass::PrefixLM);
  // Q's wgmma descriptors in uniform registers (bench/NOTES.md a42): +1-3% at head dim 64, +2-6% at
  // 128 causal, level at 128 without a mask; at 256, whose 16 K steps per S product want 32 uniform
  // registers for them, ptxas juggles them through ordinary registers and the kernel is 1-6% slower.
  set(ConfigSwitch::UniformWarpgroup, wgmma && headDim <= 128);
  // The normalizer as 4 partial sums per row (bench/NOTES.md a44): 8 fewer instructions per step, no
  // cross-lane adds; +3-10% at head dim 256, +0-2% at 64 and at 128 without a mask. Not at 128 with a
  // mask (-1-1.5% causal) nor at 256 with a mask evaluated per element (4 bytes of spills).
  const bool maskedAt128 = headDim > 64 && headDim <= 128 && mask != MaskClass::None;
  const bool perElementAt256 = headDim > 128 && mask == MaskClass::Generic;
  const int64_t partialRowSums = maskedAt128 || perElementAt256 ? 0 : 4;
  // The first step without its P V of zeros (bench/NOTES.md a51): +0-2% at head dim 64; at 128 and
  // 256, whose persistent kernels carry the peeled step in every instance, 1-3% slower below 4k.
  set(ConfigSwitch::PeelFirstStep, has(ConfigSwitch::Overlap) && headDim <= 64);
  // The last wave split between CTAs (stream-K) where every program instance takes the same steps.
  // Not at head dim 256: its split kernel compiles without spills, but ran 1-4% slower from 2k keys,
  // with single instances or pairs (bench/NOTES.md a74). Not with a gather per element (16 bytes of
  // spills at head dim 128).
  set(ConfigSwitch::SplitTail, has(ConfigSwitch::Persistent) && has(ConfigSwitch::Producer) && mask == MaskClass::None &&
                                   !facts.raggedKeys && !gather);
  // A persistent kernel's CTAs take pairs of query blocks per turn (a causal-like mask's heavy and
  // light blocks of one head; bench/NOTES.md a68). A persistent kernel with pairs copies Q first only
  // without a mask (a69); one of single instances prefetches the next instance's first K/V stage
  // without a producer (a70) and keeps Q in registers with one (a73).
  set(ConfigSwitch::PairInstances, true);
  set(ConfigSwitch::OperandsAfterFirstStage,
      has(ConfigSwitch::Persistent) && has(ConfigSwitch::Producer) && mask != MaskClass::None);
  // Packed sequences in a persistent kernel: instances from a shared counter (see Persistent above).
  set(ConfigSwitch::DynamicInstances, facts.varlen && has(ConfigSwitch::Persistent) && has(ConfigSwitch::Producer));
  if (has(ConfigSwitch::DynamicInstances))
    set(ConfigSwitch::PairInstances, false);
  return fitSharedMemory(ctx, target, facts, ConfigAttr::get(ctx, blockM, blockN, numWarps, minBlocksPerSM, partialRowSums, on));
}

int64_t estimateSharedBytes(const Target &target, const AttentionFacts &facts, int64_t blockM, int64_t blockN) {
  // Head dims as the tiles hold them (Q.K and V alike: the larger of the two, padded).
  const int64_t d = facts.headDim, elem = 2, f32 = 4;
  // Layout conversions go through one scratch area, 4 bytes an element: Q's tile into the MMA's
  // operand layout, on mma.sync K's and V's too and the output; a score tile where the modifiers
  // gather per element or evaluate the mask per element. (A gather meeting the scores needs none
  // since tgpu-assign-layouts loads it in their layout; the tile stays in the estimate, a margin
  // the fitted sm_86/sm_89 choices were made with.)
  const bool scoreTile = facts.auxPerElement || facts.maskClass == MaskClass::Generic;
  int64_t scratch = scoreTile ? blockM * blockN * f32 : 0;
  if (!target.hasWgmma)
    scratch = std::max({scratch, blockM * d * f32, blockN * d * f32});
  // wgmma reads Q from shared memory and streams K and V through a ring of at least two stages;
  // mma.sync stages one K or V tile for ldmatrix.
  const int64_t operands = target.hasWgmma ? blockM * d * elem + 2 * blockN * 2 * d * elem : blockN * d * elem;
  return scratch + operands;
}

ConfigAttr fitSharedMemory(mlir::MLIRContext *ctx, const Target &target, const AttentionFacts &facts,
                           ConfigAttr config) {
  // The ladder, each step taken only while the estimate exceeds what a CTA may use: keys per step
  // down to 32, then 64 query rows on four warps (one warpgroup: no ping-pong), then keys down to
  // 16. Head dims above 128 on sm_86 and sm_89 (99 KiB a CTA) take the first two steps: 128 rows
  // converted Q's 128 x 256 tile through 128 KiB of scratch. Their 64 x 32 tiles spill less than
  // 64 x 64 (ptxas: 1872 against 2820 bytes at head dim 256, 860 against 984 at 192) and compile in
  // 3.6 s instead of 12. The last configuration is returned when none fits, and the shared-memory
  // allocator reports the kernel that needs too much.
  int64_t bm = config.getBlockM(), bn = config.getBlockN(), warps = config.getNumWarps();
  ConfigSwitch on = config.getSwitches();
  const int64_t limit = target.maxSharedBytesPerCTA;
  auto fits = [&] { return estimateSharedBytes(target, facts, bm, bn) <= limit; };
  while (!fits() && bn > 32)
    bn /= 2;
  if (!fits() && bm > 64) {
    bm = 64;
    warps = 4;
    on = on & ~ConfigSwitch::PingPong;
  }
  while (!fits() && bn > 16)
    bn /= 2;
  if (bm == config.getBlockM() && bn == config.getBlockN())
    return config;
  return ConfigAttr::get(ctx, bm, bn, warps, config.getMinBlocksPerSM(), config.getPartialRowSums(), on);
}
ConfigAttr applyOverrides(ConfigAttr chosen, MaskClass mask, const ConfigOverrides &o,
                        llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  int64_t bm = chosen.getBlockM(), bn = chosen.getBlockN(), warps = chosen.getNumWarps();
  int64_t minBlocks = chosen.getMinBlocksPerSM(), rowSums = chosen.getPartialRowSums();
  ConfigSwitch on = chosen.getSwitches();
  auto has = [&](ConfigSwitch s) { return bitEnumContainsAll(on, s); };
  auto set = [&](ConfigSwitch s, bool value) { on = value ? on | s : on & ~s; };
  // Switch options: 1 on, 0 off, -1 (the default) keeps the choice.
  auto override = [&](ConfigSwitch s, int option) {
    if (option >= 0)
      set(s, option != 0);
  };
  // A tile configuration given by hand keeps ptxas's register choice.
  if (o.blockM > 0 || o.blockN > 0 || o.numWarps > 0)
    minBlocks = 0;
  bm = o.blockM > 0 ? o.blockM : bm;
  bn = o.blockN > 0 ? o.blockN : bn;
  warps = o.numWarps > 0 ? o.numWarps : warps;
  override(ConfigSwitch::Overlap, o.overlap);
  override(ConfigSwitch::PingPong, o.pingPong);
  override(ConfigSwitch::LazyRescale, o.lazyRescale);
  override(ConfigSwitch::DeferRescale, o.deferRescale);
  override(ConfigSwitch::Producer, o.producer);
  override(ConfigSwitch::LastPvAfterLoops, o.lastPvAfterLoops);
  override(ConfigSwitch::Persistent, o.persistent);
  override(ConfigSwitch::SplitKv, o.splitKv);
  override(ConfigSwitch::PackGqa, o.packGqa);
  override(ConfigSwitch::BlockLists, o.blockLists);
  // Block lists classify what the compiler could not: masks of class generic, one list per block of
  // a head's query rows (not split among instances, not packed across heads).
  set(ConfigSwitch::BlockLists, has(ConfigSwitch::BlockLists) && mask == MaskClass::Generic);
  if (has(ConfigSwitch::BlockLists)) {
    set(ConfigSwitch::SplitKv, false);
    set(ConfigSwitch::PackGqa, false);
  }
  // Split keys need one program instance per part: no persistent schedule.
  if (has(ConfigSwitch::SplitKv))
    set(ConfigSwitch::Persistent, false);
  override(ConfigSwitch::PeelFirstStep, o.peelFirstStep);
  const bool equalInstances = has(ConfigSwitch::Persistent) && mask == MaskClass::None;
  override(ConfigSwitch::SplitTail, o.splitTail);
  if (o.partialRowSums >= 0)
    rowSums = o.partialRowSums;
  // Switches that cannot apply are off.
  const bool overlapping = has(ConfigSwitch::Overlap);
  set(ConfigSwitch::DeferRescale, has(ConfigSwitch::DeferRescale) && overlapping);
  set(ConfigSwitch::LastPvAfterLoops, has(ConfigSwitch::LastPvAfterLoops) && overlapping);
  set(ConfigSwitch::PeelFirstStep, has(ConfigSwitch::PeelFirstStep) && overlapping);
  set(ConfigSwitch::SplitTail, has(ConfigSwitch::SplitTail) && equalInstances);
  set(ConfigSwitch::PairInstances, !equalInstances || o.pairInstances != 0);
  const bool pairs = has(ConfigSwitch::PairInstances), persistentKernel = has(ConfigSwitch::Persistent);
  const bool withProducer = has(ConfigSwitch::Producer);
  set(ConfigSwitch::OperandsAfterFirstStage, !(equalInstances && pairs));
  override(ConfigSwitch::OperandsAfterFirstStage, o.operandsAfterFirstStage);
  set(ConfigSwitch::OperandsAfterFirstStage,
      has(ConfigSwitch::OperandsAfterFirstStage) && persistentKernel && withProducer);
  set(ConfigSwitch::PrefetchNextInstance, !pairs);
  override(ConfigSwitch::PrefetchNextInstance, o.prefetchNextInstance);
  set(ConfigSwitch::PrefetchNextInstance,
      has(ConfigSwitch::PrefetchNextInstance) && persistentKernel && !withProducer);
  set(ConfigSwitch::InvariantAInRegisters, !pairs && withProducer);
  override(ConfigSwitch::InvariantAInRegisters, o.invariantAInRegisters);
  set(ConfigSwitch::InvariantAInRegisters,
      has(ConfigSwitch::InvariantAInRegisters) && persistentKernel && overlapping);
  // Instances from a shared counter: decided last, so that the kernel differs from the one of
  // every G-th instance in its schedule only (its pairs off).
  override(ConfigSwitch::DynamicInstances, o.dynamicInstances);
  set(ConfigSwitch::DynamicInstances, has(ConfigSwitch::DynamicInstances) && persistentKernel && withProducer &&
                                          !has(ConfigSwitch::SplitTail));
  if (has(ConfigSwitch::DynamicInstances))
    set(ConfigSwitch::PairInstances, false);
  return ConfigAttr::getChecked(emitError, chosen.getContext(), bm, bn, warps, minBlocks, rowSums, on);
}
} // namespace flare::attn

using namespace mlir;
using namespace flare;
using namespace flare::attn;

namespace {
struct AttnChooseConfigPass : public flare::attn::impl::AttnChooseConfigBase<AttnChooseConfigPass> {
  using AttnChooseConfigBase::AttnChooseConfigBase;

  void runOnOperation() override {
    std::optional<Target> target = Target::get(arch);
    if (target && maxSharedBytes > 0)
      target->maxSharedBytesPerCTA = maxSharedBytes;
    WalkResult walk = getOperation().walk([&](AttentionOp op) {
      if (op.getConfigAttr())
        return WalkResult::advance();
      if (!target) {
        op.emitOpError() << "attn-choose-config: unknown arch '" << arch << "'";
        return WalkResult::interrupt();
      }
      AttentionFacts facts = AttentionFacts::of(op);
      facts.blockLists = blockLists > 0 && facts.maskClass == MaskClass::Generic;
      op.setMaskClass(facts.maskClass);
      ConfigAttr chosen;
      if (!config.empty())
        chosen = given(op);
      else
        chosen = applyOverrides(chooseAttentionConfig(op.getContext(), *target, facts), facts.maskClass,
                                overrides(), [&] { return op.emitOpError("attn-choose-config: "); });
      if (!chosen)
        return WalkResult::interrupt();
      op.setConfigAttr(chosen);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }

  ConfigOverrides overrides() const {
    ConfigOverrides o;
    o.blockM = blockM, o.blockN = blockN, o.numWarps = numWarps, o.partialRowSums = partialRowSums;
    o.overlap = overlap, o.pingPong = pingPong, o.lazyRescale = lazyRescale, o.deferRescale = deferRescale;
    o.producer = producer, o.lastPvAfterLoops = lastPvAfterLoops, o.persistent = persistent;
    o.peelFirstStep = peelFirstStep, o.splitTail = splitTail, o.pairInstances = pairInstances;
    o.operandsAfterFirstStage = operandsAfterFirstStage, o.prefetchNextInstance = prefetchNextInstance;
    o.invariantAInRegisters = invariantAInRegisters, o.splitKv = splitKv, o.packGqa = packGqa;
    o.blockLists = blockLists, o.dynamicInstances = dynamicInstances;
    return o;
  }

  /// The `config` option: parsed and verified (errors located at the op), then attached as it is.
  ConfigAttr given(AttentionOp op) {
    if (overrides().any()) {
      op.emitOpError("attn-choose-config: a given config cannot be combined with overrides");
      return {};
    }
    std::string error;
    Attribute parsed;
    {
      ScopedDiagnosticHandler collect(op.getContext(), [&](Diagnostic &d) {
        error += (error.empty() ? "" : "; ") + d.str();
        return success();
      });
      parsed = parseAttribute(config, op.getContext());
    }
    auto result = dyn_cast_or_null<ConfigAttr>(parsed);
    if (!result)
      op.emitOpError() << "attn-choose-config: config '" << config << "' is not an #attn.config"
                       << (error.empty() ? "" : ": ") << error;
    return result;
  }

};
} // namespace
