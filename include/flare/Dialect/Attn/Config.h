//===- Config.h - The configuration of a generated attention kernel -*- C++ -*-===//
//
// `#attn.config` (dialects/Attn/AttnAttrs.td) is the one form of a generated attention kernel's
// configuration. chooseAttentionConfig is the one place it is chosen; attn-choose-config attaches
// its choice (with the pass's overrides) to each attn.attention, and convert-attn-to-tile follows it.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_DIALECT_ATTN_CONFIG_H
#define FLARE_DIALECT_ATTN_CONFIG_H

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/HeadDim.h"
#include "flare/Target/Target.h"

namespace flare::attn {

/// What the configured choice depends on besides the target.
struct AttentionFacts {
  int64_t headDim = 0; ///< tileHeadDim of the op's Q.K and V head dims
  bool f16 = false;
  MaskClass maskClass = MaskClass::None;
  bool readsAux = false; ///< the modifiers read aux tensors (ALiBi slopes, document ids)
  /// An aux read whose index depends on the query and the key index both (a relative-position bias
  /// table indexed by kv - q): a gather per score element, whose layout change needs a score tile
  /// of shared memory.
  bool auxPerElement = false;
  /// Each sequence has its own key count (kv_lens, cu_seqlens): program instances differ in work.
  bool raggedKeys = false;
  /// Packed variable-length sequences (cu_seqlens): the launch covers the longest sequence's blocks.
  bool varlen = false;
  /// Keys per page of a paged cache; 0: contiguous K and V.
  int64_t pageSize = 0;
  /// The kernel visits block lists (ConfigSwitch::BlockLists, a mask of class generic): only its
  /// partial blocks evaluate the mask per element. Not a fact of the op: the launch's (or
  /// attn-choose-config's block-lists option).
  bool blockLists = false;

  /// The facts of `op`: its mask class is the op's `mask_class`, else attn-classify-mask's analysis.
  static AttentionFacts of(AttentionOp op);
};

/// The configured choice for `facts` on `target` (measured on the H200; bench/NOTES.md).
ConfigAttr chooseAttentionConfig(mlir::MLIRContext *ctx, const Target &target, const AttentionFacts &facts);

/// The dynamic shared memory a forward kernel of `blockM` x `blockN` tiles is estimated to need on
/// `target`: its layout conversions' scratch and its operand tiles (Q and two stages of K and V with
/// wgmma, one K or V tile on mma.sync). The configured choice keeps it within the target's limit.
int64_t estimateSharedBytes(const Target &target, const AttentionFacts &facts, int64_t blockM, int64_t blockN);

/// `config` made to fit `target`'s shared memory by the estimate (chooseAttentionConfig's last step):
/// fewer keys per step (down to 32), then 64 query rows on four warps, then fewer keys again (down to
/// 16). Unchanged when it fits; the narrowest configuration when none does (the allocator then
/// reports the kernel).
ConfigAttr fitSharedMemory(mlir::MLIRContext *ctx, const Target &target, const AttentionFacts &facts,
                           ConfigAttr config);

/// Changes to the configured choice: for tuning and measurement (attn-choose-config's options,
/// flare::AttentionTileConfig) and for the launch-shape decisions of flare::attention (single query
/// blocks per turn, no split of the last round). Sizes: 0 keeps the choice; switches: -1 keeps it,
/// 0 turns it off, 1 on.
struct ConfigOverrides {
  int64_t blockM = 0, blockN = 0, numWarps = 0;
  int64_t partialRowSums = -1; ///< -1 keeps the choice
  int overlap = -1, pingPong = -1, lazyRescale = -1, deferRescale = -1, producer = -1, lastPvAfterLoops = -1,
      persistent = -1, peelFirstStep = -1, splitTail = -1, operandsAfterFirstStage = -1, prefetchNextInstance = -1,
      invariantAInRegisters = -1;
  /// 1: the keys split among program instances (split_kv; turns the persistent schedule off).
  int splitKv = -1;
  /// 1: the query heads of a key/value head packed into the rows of one program instance (pack_gqa).
  int packGqa = -1;
  /// 1: the key blocks visited are read from lists that `<name>_block_mask` writes (block_lists;
  /// masks of class generic only, without split_kv and pack_gqa).
  int blockLists = -1;
  /// 0: one query block per CTA and turn (honoured by a persistent kernel without a mask only); -1
  /// or 1: the choice (pairs).
  int pairInstances = -1;
  /// 1: a persistent kernel with a producer warpgroup takes its query blocks one per turn from a
  /// counter its CTAs share (dynamic_instances; turns pair_instances off); -1 or 0: every G-th.
  int dynamicInstances = -1;

  bool any() const;
};

/// `configured` (chooseAttentionConfig's choice for an op of mask class `mask`) with `overrides`
/// applied, then normalised: switches that cannot apply beside the others are turned off, so that one
/// kernel has one configuration. Null, after a diagnostic through `emitError`, when the result does
/// not verify (block sizes, warps, partial sums).
ConfigAttr applyOverrides(ConfigAttr configured, MaskClass mask, const ConfigOverrides &overrides,
                          llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The generated kernel's configuration (#attn.config), on the kernel function through the GPU layer:
/// the tile-level passes that make its variants follow it (attn-lazy-rescale, attn-partial-row-sums),
/// and its text is KernelInfo::attentionConfig, what reproduces the kernel
/// (CompileOptions::attentionConfig).
inline constexpr const char *kKernelConfigAttrName = "flare.attention_config";

/// How the backward pass sums dQ over the key blocks (dialects/Attn/Rationale.md, "The backward
/// kernels"): by f32 atomics from the main kernel, or (false) in a dQ kernel of its own that sums in
/// key order, which is deterministic. Atomics only where the target has no wgmma and determinism is
/// not asked for: on the H200 the dQ kernel of its own is 1.2-8x faster (bench/NOTES.md, "Backward
/// pass", b5); on mma.sync targets it is unmeasured and spills at head dim 256.
inline bool backwardSumsDqByAtomics(const Target &target, bool deterministic) {
  return !deterministic && !target.hasWgmma;
}

/// The keys of one row piece of a paged cache's K or V block (tile.load's row_pieces): the largest
/// power of two dividing the page size, so that a piece never crosses a page.
inline int64_t pagePieceKeys(int64_t pageSize) { return pageSize & -pageSize; }

/// Whether a block of keys may span several pages of a paged cache, gathered in row pieces: with TMA
/// at head dims (tileHeadDim) above 64 up to 128, where it was measured (bench/NOTES.md d8); elsewhere
/// attn-choose-config keeps a block within one page (pieces spilled registers there).
inline bool keyBlocksSpanPages(const Target &target, int64_t headDim) {
  return target.hasWgmma && headDim > 64 && headDim <= 128;
}

/// Whether the backward's dK and dV have a main kernel each (`<name>_bwd` and `<name>_bwd_dv`, S
/// recomputed in both): where one warpgroup could not hold both sums of 64 keys beside the transposed
/// step's tiles (head dim above 128) and dQ has a kernel of its own (bench/NOTES.md, b6). Not where a
/// modifier gathers from an aux table per score element (AttentionFacts::auxPerElement): its
/// transposed tiles do not fit the shared memory, and the mma.sync tiles compute dK and dV together.
inline bool backwardSplitsDkDv(const Target &target, int64_t headDim, bool dqByAtomics, bool auxPerElement) {
  return target.hasWgmma && headDim > 128 && !dqByAtomics && !auxPerElement;
}

/// Only a persistent kernel whose program instances all take the same steps (no mask) can split
/// them between CTAs or run them one per turn; a masked one pairs them for balance.
inline bool hasEqualInstances(ConfigAttr config, MaskClass maskClass) {
  return config.has(ConfigSwitch::Persistent) && maskClass == MaskClass::None;
}

} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_CONFIG_H
