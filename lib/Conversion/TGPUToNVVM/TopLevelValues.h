//===- TopLevelValues.h - The kernel's top-level values, lowered where else they are needed -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. The walk (KernelLowering) lowers the kernel's ops where they
// stand. Some of its top-level scalars and views are needed elsewhere too: in the producer
// warpgroup's branch (a loop's bounds and its loads' offsets), for another program instance than
// the one being run (the next instance's first copies, an instance the producer takes from the
// counter and may skip). This layer lowers them there, on demand, through the walk as an interface:
// `lowerOp` is the walk's, which KernelLowering provides. It also opens the tile loop with what
// only the walk can lower (the split range's step count, the instances' exit conditions).
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TOPLEVELVALUES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TOPLEVELVALUES_H

#include "TileLoops.h"

namespace flare::tgpu::lowering {

class TopLevelValues : public TileLoops {
protected:
  using TileLoops::TileLoops;
  virtual ~TopLevelValues() = default;

  /// The walk: lowers `op` at the builder's insertion point (KernelLowering::lowerOp).
  virtual LogicalResult lowerOp(Operation *op) = 0;

  /// Lowers the top-level op defining `v` (and what it depends on) at the builder's insertion point,
  /// unless the current scalar scope already holds it: scalar arithmetic, program ids, pointers and
  /// views, nothing that can fail.
  void produceValue(Value v);
  /// Runs `body` with the top-level scalars and views of the instance this CTA runs at `turn` of its
  /// tile loop, lowered anew from the kernel's arguments and that instance's program ids; the current
  /// instance's scalars, program ids, split piece and location are restored afterwards.
  void inInstanceScope(Value turn, llvm::function_ref<void()> body);
  /// The same for the instance `other` (its program ids: TileSchedule::pidsOf an index).
  void inInstanceScope(const TileSchedule::Instance &other, llvm::function_ref<void()> body);

  /// The kernel's top-level tile.exit_if ops (persistent kernels with dynamic instances: their
  /// conditions are the instances the producer skips).
  SmallVector<tile::ExitIfOp> instanceExits;
  /// Whether a tile.exit_if holds for the grid's instance `index` (< the grid's total): the
  /// conditions lowered anew from the kernel's arguments and that instance's program ids.
  Value exitsInstance(Value index);
  /// TileLoops::openTileLoop with the split range's step count and the instances' exit conditions
  /// (exitsInstance) lowered here.
  TileLoop beginTileLoop(bool producer = false);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TOPLEVELVALUES_H
