//===- Pipelining.h - Which loops stream their dot operands ----*- C++ -*-===//
//
// The schedule half of software pipelining. tgpu-pipeline-loops decides which scf.for loops of a
// tile kernel copy their wgmma dot operands through rings of shared-memory stages, and which of their
// loads stream; it records that as `#tgpu.pipeline<...>` on the loop and `tgpu.streamed` on the loads.
// convert-tgpu-to-nvvm expands the marked loops into rings; the facts of one streamed load (which
// operand it feeds, along which dimension, how many bytes a stage holds) are derived here for both.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_DIALECT_TGPU_PIPELINING_H
#define FLARE_DIALECT_TGPU_PIPELINING_H

#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"

#include <array>
#include <optional>

namespace flare::tgpu {

/// How one load of a streamed loop feeds the loop's wgmma dots: load -> [tile.trans] ->
/// [tgpu.convert_layout] -> the A or B operand of a dot of the body (never its accumulator).
struct StreamedLoad {
  tile::LoadOp load;
  mlir::Value operand;      // the dot operand the load feeds (its first use)
  bool innerIsK = false;    // the load's last dimension is the dot's K (K-major A or B)
  int64_t k = 0;            // the dot's K
  int64_t bytes = 0;        // one block of the load: what one stage holds of it
  bool swizzled = false;    // copied into 128-byte swizzled panels (B with rows of a multiple of 64)
  mlir::Value twin;         // a second B operand read from the same swizzled panels, or null
  bool twinNMajor = false;  // the twin reads them along N (else along K)
};

/// `v`, a scalar of `loop`'s body, can be computed for any induction value ahead of its iteration:
/// the induction variable, a value defined outside, pure single-result arith ops of the body over
/// such values, or a tile.scalar_load of such a base and offset (tables the kernel never writes).
bool isRecomputableIn(mlir::Value v, mlir::scf::ForOp loop);

/// The facts of `load` (an op of `loop`'s body) as a streamed operand, or nothing when its blocks
/// cannot stream: 2-D blocks of 16-bit elements with rows of a multiple of 8, a view made outside the
/// loop with contiguous rows, zero padding, offsets recomputable ahead of their iteration (the column
/// offset loop-invariant), every use (at most two) a wgmma dot operand of the body, A never transposed,
/// and a second use only as a B operand read from the first's swizzled panels.
std::optional<StreamedLoad> matchStreamedLoad(tile::LoadOp load, mlir::scf::ForOp loop);

/// The two loads of a K loop of one pipelined wgmma dot, `acc = dot(load_a(iv), load_b(iv), acc)`
/// (each load behind an optional layout conversion, nothing else in the body, the accumulator the
/// loop's only iteration argument), or nothing for a loop of another shape.
std::optional<std::array<tile::LoadOp, 2>> matchPipelinedDotLoop(mlir::scf::ForOp loop);

/// Checks the marks in `kernel` (a tile kernel): a dot_loop mark on a loop of that form, a streamed
/// mark on a loop with an i32 induction variable, outside any streamed loop, with loads marked
/// tgpu.streamed, each of which can stream (matchStreamedLoad) in its loop. Each mark that fails is an
/// error at its op.
mlir::LogicalResult verifyPipelineMarks(mlir::Operation *kernel);

/// The values defined outside `loop` that `v`, a recomputable scalar of its body (isRecomputableIn),
/// depends on.
void outsideLeaves(mlir::Value v, mlir::scf::ForOp loop, llvm::SmallVectorImpl<mlir::Value> &leaves);

/// `v` (a scalar or view of `kernel`'s top level) can be computed from the kernel's arguments and
/// program ids alone (top-level scalar arith, program ids, pointers, views, table reads): a producer
/// warpgroup can compute it for itself, and it is the same for every thread of a CTA. `memo` caches
/// answers across calls.
bool computableFromProgramIds(mlir::Value v, mlir::func::FuncOp kernel, llvm::DenseMap<mlir::Value, bool> &memo);

/// Everything a producer computes to issue the copies of `loop`'s streamed `loads`: the loop's bounds,
/// the loads' views and the values defined outside the loop that their offsets derive from.
llvm::SmallVector<mlir::Value> producerInputs(mlir::scf::ForOp loop, llvm::ArrayRef<tile::LoadOp> loads);

/// `loop` is marked `tgpu.producer_issued` (tgpu-warp-specialize).
inline bool producerIssued(mlir::scf::ForOp loop) { return loop->hasAttr(TGPUDialect::kProducerIssuedAttrName); }
/// `kernel` asks for a producer warpgroup it can have: `#tile.schedule<producer_warpgroup = true>`, 4 or 8 warps of
/// its own (one or two consumer warpgroups), one CTA per SM (setmaxnreg shares out one SM's registers).
bool asksForProducerWarpgroup(mlir::func::FuncOp kernel);
/// The registers per thread a producer warpgroup keeps: it only issues copies (24 spills its
/// element-wise fallback).
inline constexpr int64_t kProducerRegisters = 40;
/// The registers per thread of a producer warpgroup that also takes the kernel's instances from a
/// shared counter and skips those a tile.exit_if ends (packed sequences' blocks past their sequence):
/// with kProducerRegisters it spilled 4 bytes at head dim 128 (bench/NOTES.md vl3).
inline constexpr int64_t kSkippingProducerRegisters = 48;
/// The warp roles tgpu-warp-specialize chooses for a kernel of `numWarps` consumer warps: the producer
/// keeps `producerRegisters` and the consumers share out the rest of an SM's registers for one CTA in
/// multiples of 8, at most 256 each.
WarpRolesAttr defaultWarpRoles(mlir::MLIRContext *ctx, int numWarps, int64_t producerRegisters = kProducerRegisters);
/// The warp roles of `kernel` (`tgpu.warp_roles`), or defaultWarpRoles where it has none.
WarpRolesAttr warpRolesOf(mlir::func::FuncOp kernel);
/// A producer warpgroup can issue every copy of `loop` (tgpu-warp-specialize's rule): a top-level loop
/// marked #tgpu.pipeline<streamed> whose streamed blocks a tensor map moves into swizzled panels and
/// whose producerInputs are computableFromProgramIds (`memo` as there).
bool producerCanIssueCopies(mlir::scf::ForOp loop, mlir::func::FuncOp kernel, llvm::DenseMap<mlir::Value, bool> &memo);

/// The `#tgpu.pipeline<...>` of `loop` (PipelineKind::None when it has none).
inline PipelineKind pipelineOf(mlir::scf::ForOp loop) {
  auto mark = loop->getAttrOfType<PipelineKindAttr>(TGPUDialect::kPipelineAttrName);
  return mark ? mark.getValue() : PipelineKind::None;
}
/// `load` is marked `tgpu.streamed`.
inline bool isStreamed(tile::LoadOp load) { return load->hasAttr(TGPUDialect::kStreamedAttrName); }

} // namespace flare::tgpu

#endif // FLARE_DIALECT_TGPU_PIPELINING_H
