//===- RingStages.h - The copies of one stage of a ring -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. A streamed loop's blocks travel through a ring of stages in
// shared memory (LoweringPlans.h: StreamRing, StageCopies). This layer issues one stage's copies,
// whoever issues them: the consumers' own refills (StreamedLoop.cpp), the producer warpgroup's
// loop (ProducerWarpgroup.h) and the next instance's first copies of a persistent kernel
// (PersistentLoop.cpp): by TMA from thread 0 behind the stage's `full` barrier (with the
// element-by-element fallback where the launch's maps did not encode), or by cp.async from every
// thread.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_RINGSTAGES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_RINGSTAGES_H

#include "TopLevelValues.h"

#include <functional>

namespace flare::tgpu::lowering {

class RingStages : public TopLevelValues {
protected:
  using TopLevelValues::TopLevelValues;

  /// TMA reads (with `useTma`) or the cp.async alignment check of `copies.loop`'s streams; false when
  /// its loads cannot be copied the way `useTma` says (a view without a tensor map).
  bool planStageCopies(StageCopies &copies, Value useTma);
  /// The blocks `copies.loop` reads at induction value `iv` into `stage`, after `waitEmpty` (run by
  /// every copying thread: the stage's previous readers are done).
  void issueStage(const StreamRing &ring, const StageCopies &copies, Value iv, Value stage,
                  const std::function<void()> &waitEmpty);
  /// The same with the blocks' offsets given per stream (`offsetsOf`), cp.async's `valid` (zero-fill
  /// when false) and row-alignment check `aligned` given: a refill that copies either this loop's next
  /// blocks or the continuing loop's first from the same views issues them once.
  void issueStage(const StreamRing &ring, const StageCopies &copies, Value stage, Value valid, Value aligned,
                  const std::function<SmallVector<Value>(size_t)> &offsetsOf, const std::function<void()> &waitEmpty);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_RINGSTAGES_H
