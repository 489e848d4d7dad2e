//===- RingStages.cpp - The copies of one stage of a ring ------------------===//
//
// See RingStages.h.
//
//===----------------------------------------------------------------------===//
#include "RingStages.h"

namespace flare::tgpu::lowering {

bool RingStages::planStageCopies(StageCopies &copies, Value useTma) {
  if (!useTma) {
    for (Stream &s : copies.streams) {
      Value ok = cpAsyncAligned(s.load, /*checkLastOffset=*/true);
      copies.aligned = copies.aligned ? arith::AndIOp::create(b, loc, copies.aligned, ok).getResult() : ok;
    }
    return true;
  }
  SmallVector<TensorMapPlan> plans;
  for (Stream &s : copies.streams) {
    std::optional<TensorMapPlan> plan = s.swizzled ? planTensorMap(s.load) : std::nullopt;
    if (!plan)
      return false;
    plans.push_back(std::move(*plan));
  }
  for (const TensorMapPlan &plan : plans)
    copies.tmaReads.push_back(tensorMapFor(plan));
  return true;
}

void RingStages::issueStage(const StreamRing &ring, const StageCopies &copies, Value iv, Value stage,
                                const std::function<void()> &waitEmpty) {
  scf::ForOp loop = copies.loop;
  Value valid = ring.useTma ? Value()
                            : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv,
                                                    scalars.lookup(loop.getUpperBound()))
                                  .getResult();
  issueStage(ring, copies, stage, valid, copies.aligned, [&, iv](size_t idx) {
    DenseMap<Value, Value> memo;
    return loadOffsetsAt(copies.streams[idx].load, loop, iv, memo);
  }, waitEmpty);
}

void RingStages::issueStage(const StreamRing &ring, const StageCopies &copies, Value stage, Value valid,
                                Value aligned, const std::function<SmallVector<Value>(size_t)> &offsetsOf,
                                const std::function<void()> &waitEmpty) {
  Value base = arith::AddIOp::create(b, loc, ring.base, arith::MulIOp::create(b, loc, stage, i32(ring.stageBytes)));
  Value full = ringBarrier(ring.barriers, stage, false);
  if (!ring.useTma) { // cp.async: each thread's arrival on `full` follows its copies
    if (waitEmpty)
      waitEmpty();
    for (auto [idx, s] : llvm::enumerate(copies.streams))
      copyTileAsync(s.load, offsetsOf(idx), valid, arith::AddIOp::create(b, loc, base, i32(s.offset)), s.innerIsK, s.k,
                    aligned, idx + 1 == copies.streams.size() ? full : Value(), s.swizzled);
    return;
  }
  // TMA: thread 0 announces the stage's bytes and issues the copies; when the launch's maps did not
  // encode every thread copies element by element and then arrives.
  ifThen(
      ring.useTma,
      [&] {
        ifThen(isThreadZero(), [&] {
          if (waitEmpty)
            waitEmpty();
          // A persistent kernel whose consumers fill the ring stages an instance's output in its
          // last stage and leaves the TMA store in flight (storeThroughTma): a copy into a used
          // stage waits until the store has read its panels (at once when none is pending). An
          // instance's first copy (stage 0, no `empty` wait) goes ahead of it.
          if (waitEmpty && persistent && !producerMode)
            TmaStoreWaitOp::create(b, loc, 0);
          expectTx(full, i32(ring.tmaBytes));
          for (auto [idx, s] : llvm::enumerate(copies.streams)) {
            SmallVector<Value> offsets = offsetsOf(idx);
            copyBlockTma(copies.tmaReads[idx], offsets, arith::AddIOp::create(b, loc, base, i32(s.offset)),
                        full);
          }
        });
      },
      [&] {
        // Maps not encoded (views that are not 16-byte aligned): element by element in a rolled loop,
        // so that the fallback adds no registers to the kernel; each thread's arrival publishes its
        // stores.
        if (waitEmpty)
          waitEmpty();
        for (auto [idx, s] : llvm::enumerate(copies.streams))
          copyTileRolled(s.load, offsetsOf(idx), arith::AddIOp::create(b, loc, base, i32(s.offset)));
        fenceAsyncProxy(); // the stores, visible to the async proxy before the arrival publishes them
        MBarrierArriveOp::create(b, loc, full);
      });
}

} // namespace flare::tgpu::lowering
