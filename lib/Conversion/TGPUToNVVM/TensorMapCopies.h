//===- TensorMapCopies.h - Tensor maps and TMA copies ----------*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. The kernel's parameters after its own (HiddenParams.h: a
// persistent kernel's grid, the split workspace, the TMA flag and the tensor maps) and what the
// lowering does with the maps: which views a map can describe (tgpu::planTensorMap, where the target
// and the options copy by TMA), the map of a view and this instance's coordinates in it, whether the
// runtime encoded every map of the launch, and the bulk tensor copies of a block into 128-byte
// swizzled panels. The definitions are in TensorMaps.cpp, beside the stores and operands that use
// them; KernelLowering.h derives from it.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TENSORMAPCOPIES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TENSORMAPCOPIES_H

#include "DotOperands.h"
#include "HiddenParams.h"
#include "flare/Dialect/TGPU/TensorMapPlan.h"

#include <optional>

namespace flare::tgpu::lowering {

class TensorMapCopies : public DotOperands {
protected:
  using DotOperands::DotOperands;

  gpu::GPUFuncOp kernelFunc;
  HiddenParams params; // the parameters after the kernel's own: grid, split workspace, TMA flag, maps
  /// tgpu::planTensorMap (flare/Dialect/TGPU/TensorMapPlan.h) where this lowering copies by TMA
  /// (`tma` and a target that has it), else nothing.
  std::optional<TensorMapPlan> planTensorMap(Value view, RankedTensorType block, bool sums = false);
  std::optional<TensorMapPlan> planTensorMap(tile::LoadOp load);
  /// The map of `plan` (one hidden parameter per view and box, shared by every loop that reads it)
  /// and the coordinates of this program instance's view in it.
  TensorMapRead tensorMapFor(const TensorMapPlan &plan);
  /// i1: the runtime encoded every tensor map of this launch (else the kernel copies with cp.async).
  Value tensorMapsUsable();
  /// Copies the block of `read` at (row, col) into 128-byte swizzled panels at byte offset `dstBase`,
  /// one TMA box per 64-column panel, completing `mbarrier`'s transaction count.
  void copyTileTma(const TensorMapRead &read, Value row, Value col, Value dstBase, Value mbarrier);
  /// copyTileTma of a load's block at `offsets` (its row pieces' first rows, then the column): one
  /// copy per piece into the rows of the panels that piece fills.
  void copyBlockTma(const TensorMapRead &read, ArrayRef<Value> offsets, Value dstBase, Value mbarrier);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TENSORMAPCOPIES_H
