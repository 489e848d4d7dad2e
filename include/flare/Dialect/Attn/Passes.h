//===- Passes.h - Passes of the attention dialect ---------------*- C++ -*-===//
#ifndef FLARE_DIALECT_ATTN_PASSES_H
#define FLARE_DIALECT_ATTN_PASSES_H

#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir {
namespace arith { class ArithDialect; }
namespace func { class FuncDialect; }
namespace math { class MathDialect; }
namespace scf { class SCFDialect; }
} // namespace mlir

namespace flare::tile {
class TileDialect;
}

namespace flare::attn {
#define GEN_PASS_DECL
#include "Attn/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Attn/Passes.h.inc"

/// Tile sizes of a generated attention kernel: the one configuration point per (arch, head dim,
/// element type, mask class).
struct AttentionConfig {
  int blockM = 128; ///< query rows per program instance
  int blockN = 64;  ///< key/value rows per loop step
  int numWarps = 8; ///< warps per program instance
  /// Software-pipeline the KV loop: iteration j issues S_j = Q K_j^T and then O += P_{j-1} V_{j-1},
  /// so that the softmax of block j overlaps the P V product of block j - 1 (wgmma targets).
  bool overlap = false;
  /// The two warpgroups issue their MMAs in turn (the lowering's ping-pong); recorded on the kernel
  /// as `tile.ping_pong = false` when off.
  bool pingPong = true;
  /// CTAs per SM the kernel's registers must allow (`tile.min_blocks_per_sm`); 0 leaves it to ptxas.
  int minBlocksPerSM = 0;
  /// Lazy online softmax (a row's max moves only when a block raises it by more than 8, log2 units)
  /// and a per-thread branch around the accumulator's rescale, which then multiplies by 1 on almost
  /// every step.
  bool lazyRescale = false;
  /// With overlap: block j's accumulator rescale (acc *= alpha_j) is applied at step j + 1, after
  /// S_{j+1} = Q K_{j+1}^T is issued and before P_j V_j, instead of right after block j's softmax,
  /// where it made the softmax wait for P_{j-1} V_{j-1} (ptxas hoists that wait above the
  /// exponentials to interleave the multiplies with them). alpha_j is carried to the next step.
  /// Off by default: ptxas then serializes every wgmma of the loop (C7518, a wait it inserts on a
  /// divergent path; bench/NOTES.md a16), 20-40% slower at head dims 128 and 256. For experiments.
  bool deferRescale = false;
  /// The mask keeps more keys for later query rows (causal-like): programs differ in work. Program x
  /// then visits query block (programs - 1 - x), so that the longest programs start first and the
  /// shortest end the last wave; a persistent kernel pairs a heavy with a light query block instead.
  bool rowsGrow = false;
  /// The warpgroup index as a warp-uniform value (`tile.uniform_warpgroup`): Q's wgmma descriptors
  /// in uniform registers. Off records `tile.uniform_warpgroup = false` on the kernel.
  bool uniformWarpgroup = true;
  /// The softmax normalizer kept as this many partial sums per row (tile.online_softmax's [M, G]
  /// form), summed once after the loops; 0 keeps one sum per row, completed across lanes every step.
  int partialRowSums = 4;
  /// A producer warpgroup issues the K/V copies (TMA) while the two warpgroups of the tile compute,
  /// with setmaxnreg moving its registers to them (`tile.producer_warpgroup`); one CTA per SM.
  bool producer = false;
  /// With overlap: the last block's P V runs after the loops on a V block loaded before them, instead
  /// of one more loop step whose S product and softmax are thrown away.
  bool lastPvAfterLoops = false;
  /// A persistent kernel (`tile.persistent`): one CTA per SM runs query blocks in turn, so that the
  /// producer warpgroup copies the next block's first K/V blocks during this one's epilogue.
  bool persistent = false;
  /// With overlap: the first step's P V (zero P) is left out by peeling the first loop's first
  /// iteration (`tile.peel_zero_first`) instead of multiplying zeros.
  bool peelFirstStep = false;
  /// In a persistent kernel whose program instances all take the same number of steps (no mask):
  /// the schedule may split the last instances' KV steps between CTAs (stream-K, tile.split_range),
  /// the piece that ends an instance handing its partial softmax state to the one that began it,
  /// so that the grid ends evenly instead of in a part-filled last wave.
  bool splitTail = false;
  /// splitTail as the configuration point chose it, before a `split-tail` pass option overrode it
  /// (recorded as the kernel hint `attention.split_by_default`): where it is false, every value of
  /// that option compiles to the same kernel, which lets a kernel cache answer for all of them.
  bool splitTailByDefault = false;
  /// A persistent kernel's CTAs take pairs of consecutive program instances per turn
  /// (`tile.pair_instances`; a causal-like mask's heavy and light query blocks of one head); off,
  /// one instance per turn, so that all query blocks of a head run at once and fewer heads' K and V
  /// share L2 (bench/NOTES.md a68: +2-5% at 512 keys without a mask, slower from 2k keys). Only a
  /// kernel without a mask (instances of equal work) honours a request to turn it off.
  bool pairInstances = true;
  /// Whether a `pair-instances=0` request changes this kernel (persistent, no mask), recorded as the
  /// kernel hint `attention.can_unpair`: where it is false both requests compile to the same kernel.
  bool canUnpair = false;
  /// A persistent kernel's producer warpgroup copies each query block's Q after the block's first
  /// K/V stage instead of before it (`tile.operands_after_first_stage`). Chosen where instances
  /// start often relative to their work: masked kernels and kernels of single instances (bench/NOTES.md
  /// a69: +1-3.5% causal at every length, +1.7% / +3% at 512 / 1k keys without a mask); the
  /// paired kernel without a mask keeps Q first (1-6% slower from 2k keys with it).
  bool operandsAfterFirstStage = false;
  /// A persistent kernel without a producer warpgroup (head dim 256) issues the next query block's
  /// first K/V copy after this block's loops (`tile.prefetch_next_instance`). Chosen for kernels of
  /// single query blocks (bench/NOTES.md a70: +3.4% / +2.1% at 512 / 1k keys without a mask); the
  /// paired kernels lose 1-5% from 4k keys with it (non-causal) or gain too little (causal).
  bool prefetchNextInstance = false;
  /// A persistent kernel reads Q into wgmma's register fragments once per query block and, with a
  /// producer warpgroup, releases Q's buffer right then (`tile.invariant_a_in_registers`). Chosen
  /// for the producer kernel of single query blocks (head dim 128 without a mask, launches of at
  /// most 1024 keys; bench/NOTES.md a73: +3.4% / +2.7% at 512 / 1k keys); 0.5-1% slower in the
  /// paired kernels and not better with a mask.
  bool invariantAInRegisters = false;
};
/// `readsAux`: the score or mask modifiers read auxiliary tensors (ALiBi slopes, document ids).
AttentionConfig chooseAttentionConfig(const std::string &arch, int64_t headDim, bool f16, const std::string &maskClass,
                                      bool readsAux);
} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_PASSES_H
