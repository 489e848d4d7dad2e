//===- DotPipelines.h - The pipelined K loops of matmul dots ---*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. A loop marked #tgpu.pipeline<dot_loop> (a matmul's K loop: one
// dot accumulating the product of two blocks loaded in the body) streams both operands through a
// ring of shared-memory stages so that the copies of the next steps overlap this step's MMAs: by TMA
// into swizzled panels behind full/empty mbarriers, thread 0 issuing (with a rolled element-wise
// loop for launches whose maps did not encode), or by cp.async into a ring behind CTA barriers (the
// loop unpipelined where the operands are not 16-byte aligned at run time). The accumulator stays
// wgmma's struct across the loop. KernelLowering.h derives from it; the unpipelined loop is the
// walk's, handed in.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_DOTPIPELINES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_DOTPIPELINES_H

#include "BlockCopies.h"

#include <array>
#include <functional>

namespace flare::tgpu::lowering {

class DotPipelines : public BlockCopies {
protected:
  using BlockCopies::BlockCopies;

  /// Lowers a loop without a pipeline (the walk's generic loop lowering).
  using Unpipelined = std::function<LogicalResult(scf::ForOp)>;

  /// A loop marked #tgpu.pipeline<dot_loop> (tgpu::matchPipelinedDotLoop's `loads`): the operands
  /// stream through a ring of shared-memory stages (TMA, or cp.async), so copies of the next steps
  /// overlap the MMAs of this one.
  LogicalResult lowerPipelinedDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads,
                                      const Unpipelined &unpipelined);

private:
  /// The K loop of a pipelined dot over [lb, ub) by step, carrying the accumulator as wgmma's struct
  /// (its registers are never read while an MMA group is in flight): `body(iv, acc)` emits one
  /// iteration and returns the new accumulator. Returns the loop's final accumulator struct.
  Value accumulatorLoop(scf::ForOp op, Value lb, Value ub, Value step, const std::function<Value(Value, Value)> &body);
  /// The MMAs of one stage of a pipelined dot, committed, not waited for: A (K-major) at byte offset
  /// `base`, B (N-major) `aBytes` after it, both in swizzled panels or core matrices.
  Value stageMmas(tile::DotOp dot, Value base, int64_t aBytes, bool swizzled, Value acc);
  /// The cp.async pipeline: a ring of kPipelineStages slots with CTA barriers (or the loop unpipelined
  /// when the operands are not 16-byte aligned at run time).
  LogicalResult lowerCpAsyncDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads,
                                    const Unpipelined &unpipelined);
  /// The TMA pipeline (both operands read through tensor maps): up to kTmaStages swizzled stages
  /// guarded by full/empty mbarriers, thread 0 issuing the copies; returns the accumulator registers.
  SmallVector<Value> lowerTmaDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads,
                                     ArrayRef<TensorMapRead> reads);
  /// The TMA pipeline's fallback for launches whose maps did not encode (operands that are not 16-byte
  /// aligned): each iteration copies both blocks element by element in a rolled loop into swizzled
  /// panels, then runs the MMAs; slow, correct, and light on registers.
  SmallVector<Value> lowerRolledDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_DOTPIPELINES_H
