//===- PersistentLoop.cpp - what the walk adds to the persistent tile loop ===//
//
// The tile loop itself, its instances and the hand-over of split instances are TileLoops.h's, the
// loop opened with the split range's step count and the instances' exit conditions
// TopLevelValues.h's. Here is what the rest of the walk adds: the instance's end
// (endTileLoop: the last barrier, the MMA turns passed across instances, the TMA stores' wait), and
// with #tile.schedule<prefetch_next_instance = true> the consumers' ring that carries the next
// instance's first copies (crossInstanceRing, issueNextInstanceFirst). See the persistent-kernel
// section of KernelLowering.h and dialects/TGPU/Rationale.md.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

void KernelLowering::endTileLoop() {
  // The next instance overwrites what this one's threads read (operands' panels, a TMA store's
  // staging, a ring's barriers they set up): every consumer is done here. Unless nothing of that is
  // theirs: the producer's rings and operands order themselves, each warpgroup's staging has its own
  // barriers, scratch users start with one; then only launches whose maps did not encode (the
  // consumers copy the operands themselves) need it.
  const bool ownStateOnly = producerMode && perWarpgroupStores && !consumersSetUpState && areas.operands.bytes == 0;
  if (ownStateOnly)
    ifThen(notI1(tensorMapsUsable()), [&] { barrier(); });
  else
    barrier();
  yieldTileLoop(tileLoop, tileRingNext ? tileRingNext : tileLoop.carried);
  b.setInsertionPointAfter(tileLoop.op);
  restoreThreadValues();
  // The MMA turns: when every loop that takes turns sits in the instance's body, warpgroup 1 gives
  // the first turn once before the tile loop and warpgroup 0 takes the last back after it, so that
  // the turn passes on from one instance's last loop to the next one's first (as between a ring's
  // loops), and neither warpgroup waits for the other at an instance's end.
  SmallVector<Operation *> turns;
  bool allInBody = true;
  kernelFunc.walk([&](scf::IfOp ifOp) {
    if (!ifOp->hasAttr(kTurnAttrName))
      return;
    ifOp->removeAttr(kTurnAttrName);
    turns.push_back(ifOp);
    allInBody &= ifOp->getBlock() == tileLoop.body;
  });
  if (allInBody && !turns.empty()) {
    for (Operation *turn : turns)
      turn->erase();
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(tileLoop.op);
      giveFirstTurn();
    }
    takeTurnBack();
  }
  // The last TMA stores must have read their panels before the CTA exits (each warpgroup's first
  // thread issued its own).
  if (tmaStoresInFlight) {
    Value issuer = perWarpgroupStores ? arith::AndIOp::create(b, loc, threadId, i32(127)).getResult() : threadId;
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, issuer, i32(0)),
           [&] { TmaStoreWaitOp::create(b, loc, 0); });
  }
}

bool KernelLowering::crossInstanceRing(scf::ForOp op, ArrayRef<Stream> streams, const StreamRing &ring) {
  if (!prefetchNextInstance)
    return false;
  Block *entry = &func.getBody().front();
  // Kernels with the element-wise fallback keep the ring per instance: its copies would be in every
  // instance's last iteration too (spills at head dim 256).
  if (!persistent || !tileLoop || producerMode || ring.produced || !ring.useTma || tmaFallback || splitRange ||
      op->getBlock() != entry)
    return false;
  // The instance's loops: this one first, each later one continuing its ring (matchRingContinuation
  // must accept it: only pure scalar ops between, streams of the same layout), all with bounds and
  // blocks the program ids determine, so that the next instance's first copies can be computed.
  SmallVector<std::pair<scf::ForOp, SmallVector<Stream>>> chain;
  for (Operation &other : *entry) {
    auto loop = dyn_cast<scf::ForOp>(other);
    if (!loop)
      continue;
    if (chain.empty() && loop != op)
      return false;
    SmallVector<Stream> mine =
        loop == op ? SmallVector<Stream>(streams.begin(), streams.end()) : streamsOf(loop);
    if (mine.size() != streams.size() || pipelineOf(loop) == PipelineKind::DotLoop)
      return false;
    for (auto [x, y] : llvm::zip(mine, streams)) {
      if (x.bytes != y.bytes || x.swizzled != y.swizzled || x.innerIsK != y.innerIsK || x.k != y.k)
        return false;
      x.offset = y.offset;
    }
    if (!llvm::all_of(mine, [&](Stream &s) { return s.swizzled && planTensorMap(s.load); }))
      return false;
    if (!chain.empty()) {
      scf::ForOp previous = chain.back().first;
      for (Operation *at = previous->getNextNode(); at != loop.getOperation(); at = at->getNextNode())
        if (at->getNumRegions() || !isMemoryEffectFree(at) ||
            llvm::any_of(at->getResultTypes(), [](Type t) { return isa<ShapedType>(t); }))
          return false;
      if (!llvm::all_of(producerInputs(loop, mine), [&](Value v) { return definedBefore(v, previous); }))
        return false;
    }
    if (!llvm::all_of(producerInputs(loop, mine), [&](Value v) { return producerCanCompute(v); }))
      return false;
    chain.push_back({loop, std::move(mine)});
  }
  crossInstanceLoops = std::move(chain);
  return true;
}

void KernelLowering::issueNextInstanceFirst(const StreamRing &ring, Value uses) {
  Value nextTurn = arith::AddIOp::create(b, loc, tileLoop.turn, i32(1));
  Value due = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, ring.useTma, isThreadZero()),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, nextTurn, tileLoop.turns));
  // The next instance's bounds and blocks, lowered anew from the kernel's arguments and its program
  // ids (as the producer warpgroup computes them, ProducerWarpgroup.cpp); its first copies are those
  // of its first loop that runs.
  ifThen(due, [&] {
    inInstanceScope(nextTurn, [&] {
      // Stage 0, last used by this instance's ring index (uses - 1) / stages * stages, or by an
      // earlier instance when this one used none.
      const int stages = ring.barriers.stages;
      Value stage = i32(0);
      Value lastRound = arith::DivSIOp::create(b, loc, arith::SubIOp::create(b, loc, uses, i32(1)), i32(stages));
      Value previousUse =
          arith::SelectOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, uses, i32(0)),
                                  arith::MulIOp::create(b, loc, lastRound, i32(stages)), i32(-stages));
      std::function<void(size_t)> issueFrom = [&](size_t j) {
        auto &[loop, streams] = crossInstanceLoops[j];
        for (Value v : producerInputs(loop, streams))
          produceValue(v);
        StageCopies copies;
        copies.loop = loop;
        copies.streams = streams;
        for (const Stream &s : streams)
          if (std::optional<TensorMapPlan> plan = planTensorMap(s.load))
            for (Value v : plan->outerValues)
              produceValue(v);
        (void)planStageCopies(copies, ring.useTma);
        Value lb = scalars.lookup(loop.getLowerBound()), ub = scalars.lookup(loop.getUpperBound());
        std::function<void()> otherwise;
        if (j + 1 < crossInstanceLoops.size())
          otherwise = [&, j] { issueFrom(j + 1); };
        ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub), [&] {
          // Every warp is done with stage 0 (and with its barriers: this instance waits on them no
          // more): fresh barriers for the next instance's first use, visible to the async proxy.
          waitReleased(ring.barriers, stage, previousUse);
          initStageBarriers(ring.barriers, stage, i32(1), numWarps);
          fenceAsyncProxy();
          issueStage(ring, copies, lb, stage, {});
        }, otherwise);
      };
      issueFrom(0);
    });
  });
}

} // namespace flare::tgpu::lowering
