//===- TileArithmetic.h - Reductions, element-wise ops, conversions -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. The arithmetic of tiles, register by register: tile.reduce
// (within each thread's registers, then across lanes by butterfly shuffles, then across warps
// through shared scratch), element-wise arith and math ops on every register of a tile (with the
// lazy rescale's skippable multiplies and paired f32 -> 16-bit conversions), and the scalar op each
// register computes; and conversions between layouts (a register permutation, warp shuffles, or a
// round trip through shared scratch). DotOperands.h derives from it.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TILEARITHMETIC_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TILEARITHMETIC_H

#include "KernelResources.h"

namespace flare::tgpu::lowering {

class TileArithmetic : public KernelResources {
protected:
  using KernelResources::KernelResources;

  LogicalResult lowerReduce(tile::ReduceOp op);
  /// An element-wise op on every register of its tiles (or once on scalars).
  LogicalResult lowerElementwise(Operation *op);
  /// A tile multiplied by a broadcast factor marked tile.skip_unit_factor: each thread multiplies only
  /// when one of its distinct factor values is not exactly 1 (a branch around the multiplies); false,
  /// emitting nothing, when the op is not of that form.
  bool lowerSkippableMul(arith::MulFOp op);
  /// One scalar instance of an element-wise op. Transcendentals use the approximate NVVM
  /// instructions; 16-bit inputs compute in f32.
  FailureOr<Value> emitScalar(Operation *op, ValueRange operands, Type resultType);
  /// `srcRegs` (the registers of `src`) in `dst`'s layout, appended to `out`: a permutation of the
  /// registers, shuffles within each warp, or stores to and loads from shared scratch.
  LogicalResult lowerConvert(Value src, Value dst, ArrayRef<Value> srcRegs, SmallVectorImpl<Value> &out);
  /// A conversion inside each warp: one shuffle per destination register (LinearLayout::warpShuffleFrom).
  void shuffleConvert(const LinearLayout::WarpShuffle &plan, Type elem, ArrayRef<Value> srcRegs,
                      SmallVectorImpl<Value> &out);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TILEARITHMETIC_H
