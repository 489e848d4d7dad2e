//===- OutputStores.h - A kernel's output blocks stored and summed through TMA -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. The walk's tile.store and tile.atomic_add (lowerStore): a block
// whose view the host can describe goes out through shared memory and TMA (storeThroughTma,
// reduceThroughTma), else every thread writes or adds its registers (BlockCopies::storeDirect).
// The staging of a store may reuse the stages of a streamed loop's ring once its loop is done: the
// rings' shapes are recorded here as the walk places them (noteRing).
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_OUTPUTSTORES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_OUTPUTSTORES_H

#include "DotReleases.h"

namespace flare::tgpu::lowering {

class OutputStores : public DotReleases {
protected:
  using DotReleases::DotReleases;

  /// A tile.store (`atomicAdd` false) or tile.atomic_add of `value` into `view` at `offsetValues`
  /// (not yet lowered).
  LogicalResult lowerStore(Operation *op, Value value, Value view, ValueRange offsetValues, bool atomicAdd);
  /// A streamed loop's ring of `stages` stages of `stageBytes` each (`stagesBytes` in all, without
  /// its barriers), placed at the ring area's base.
  void noteRing(int64_t stageBytes, int stages, int64_t stagesBytes);
  /// The two consumer warpgroups store their own rows of the output (storeThroughTma): nothing at an
  /// instance's end holds one warpgroup for the other.
  bool perWarpgroupStores = false;

private:
  /// A store at the kernel's top level of a block whose view the host can describe (planTensorMap): the
  /// threads write the block into 128-byte swizzled panels in shared memory and thread 0 copies them
  /// out with one TMA store per panel (the hardware leaves out rows past the view; the view's rows
  /// must be a constant number of 16-byte chunks, as columns are clipped by the chunk); launches
  /// whose maps did not encode store directly. Returns false, emitting nothing, when it does not apply.
  bool storeThroughTma(Operation *op, Value value, Value view, ArrayRef<Value> offsets);
  /// A tile.atomic_add of an f32 block whose view the host can describe, on sm_90a: the threads write
  /// the block into swizzled panels of their own and thread 0 adds them by TMA reduce (one copy per
  /// 32-column panel, atomic per element), left in flight until the next one or the kernel's end;
  /// launches whose maps did not encode add element by element. False, emitting nothing, when it
  /// does not apply (a producer warpgroup, a persistent kernel, no room for the panels).
  bool reduceThroughTma(Operation *op, Value value, Value view, ArrayRef<Value> offsets);
  int64_t ringStagesBytes = 0; // the stages of the largest ring (free once its loop is done)
  /// The stage size and count every ring of the kernel shares (0: no ring yet; -1: rings differ),
  /// for an output staged in the last stage (storeThroughTma).
  int64_t ringStageBytes = 0, ringStages = 0;
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_OUTPUTSTORES_H
