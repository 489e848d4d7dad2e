//===- PersistentLoop.cpp - the persistent tile loop and split instances ---===//
//
// A persistent kernel (#tile.schedule<persistent = true>) runs the program instances of its grid in a loop on the CTAs
// the device fits, in the order of its TileSchedule (TileSchedule.h: pairs or one per turn); a kernel that
// splits instances (tile.split_range, stream-K) hands a piece's partial softmax state to the CTA that
// began the instance; with
// #tile.schedule<prefetch_next_instance = true> the consumers' ring carries the next instance's first copies
// (crossInstanceRing, issueNextInstanceFirst). See the persistent-kernel section of KernelLowering.h
// and dialects/TGPU/Rationale.md.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

TileLoop KernelLowering::beginTileLoop(bool producer) {
  TileLoop tiles;
  if (dynamicInstances) {
    // scf.while (turn, carried): before, the turn's instance (taken by the producer's thread 0, read
    // by every thread), the loop goes on while it is one of the grid's; after, the body.
    Type i32Type = b.getI32Type();
    auto loop = scf::WhileOp::create(b, loc, TypeRange{i32Type, i32Type, i32Type}, ValueRange{i32(0), i32(0)});
    Block *before = b.createBlock(&loop.getBefore(), {}, {i32Type, i32Type}, {loc, loc});
    Value turn = before->getArgument(0);
    if (producer)
      ifThen(isThreadZero(), [&] { takeInstance(turn); });
    Value index = readInstance(turn);
    Value total = TileSchedule::totalOf(b, loc, instanceGrid);
    scf::ConditionOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, total),
                             ValueRange{turn, before->getArgument(1), index});
    Block *after = b.createBlock(&loop.getAfter(), {}, {i32Type, i32Type, i32Type}, {loc, loc, loc});
    tiles = {loop, after, after->getArgument(0), after->getArgument(1), Value()};
    instance = {};
    instance.pids = TileSchedule::pidsOf(b, loc, instanceGrid, after->getArgument(2));
    return tiles;
  }
  auto schedule = TileScheduleOp::create(b, loc, instanceGrid[0], instanceGrid[1], instanceGrid[2],
                                         tile::getSchedule(func).getPairInstances());
  tileSchedule = schedule.getSchedule();
  Value turns = schedule.getTurns();
  if (splitRange) {
    produceValue(splitRange.getSteps());
    auto split = TileSplitOp::create(b, loc, tileSchedule, scalars.lookup(splitRange.getSteps()));
    tileSchedule = split.getSchedule();
    turns = split.getTurns();
  }
  auto loop = scf::ForOp::create(b, loc, i32(0), turns, i32(1), ValueRange{i32(0)});
  enterLoopBody(loop);
  instance = instanceAt(loop.getInductionVar());
  return {loop, loop.getBody(), loop.getInductionVar(), loop.getRegionIterArgs()[0], turns};
}

void KernelLowering::yieldTileLoop(const TileLoop &loop, Value carried) {
  if (loop.turns)
    scf::YieldOp::create(b, loc, carried);
  else
    scf::YieldOp::create(b, loc, ValueRange{arith::AddIOp::create(b, loc, loop.turn, i32(1)), carried});
}

BarrierRing KernelLowering::instanceRing() {
  if (instanceRingAt < 0) // `full` and `empty` of two stages, then the two slots
    instanceRingAt = areas.operandBarriers.append(BarrierRing::bytesFor(2) + 2 * 4, kMBarrierBytes, loc);
  return {operandAreaOffset(instanceRingAt), 2};
}

Value KernelLowering::instanceSlot(const BarrierRing &ring, Value stage) {
  Value slots = arith::AddIOp::create(b, loc, ring.at, i32(BarrierRing::bytesFor(ring.stages)));
  Value slot = arith::AddIOp::create(b, loc, slots, arith::MulIOp::create(b, loc, stage, i32(4)));
  return smemAddress(slot, b.getI8Type());
}

void KernelLowering::takeInstance(Value turn) {
  BarrierRing ring = instanceRing();
  Value stage = arith::AndIOp::create(b, loc, turn, i32(1));
  // The slot's readers of two turns ago are done with it.
  waitReleased(ring, stage, arith::SubIOp::create(b, loc, turn, i32(2)));
  Value index = TileTakeOp::create(b, loc, splitWorkspace, instanceGrid[0], instanceGrid[1], instanceGrid[2], turn);
  if (!instanceExits.empty()) {
    // Instances with nothing to do are never handed over: while the one taken is one of the grid's
    // and a tile.exit_if holds for it, take the next from the counter.
    Type i32Type = b.getI32Type();
    Value total = TileSchedule::totalOf(b, loc, instanceGrid);
    auto skip = scf::WhileOp::create(b, loc, TypeRange{i32Type}, ValueRange{index});
    {
      OpBuilder::InsertionGuard guard(b);
      Block *before = b.createBlock(&skip.getBefore(), {}, {i32Type}, {loc});
      Value taken = before->getArgument(0);
      Value inGrid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, taken, total);
      // The conditions read the instance's data (a packed sequence's offsets): only for one that exists.
      auto check = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()}, inGrid, /*withElseRegion=*/true);
      b.setInsertionPointToStart(check.thenBlock());
      scf::YieldOp::create(b, loc, exitsInstance(taken));
      b.setInsertionPointToStart(check.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, 0, 1).getResult()});
      b.setInsertionPointAfter(check);
      scf::ConditionOp::create(b, loc, check.getResult(0), ValueRange{taken});
      b.createBlock(&skip.getAfter(), {}, {i32Type}, {loc});
      // Any turn but the first takes from the counter.
      scf::YieldOp::create(b, loc, ValueRange{TileTakeOp::create(b, loc, splitWorkspace, instanceGrid[0],
                                                                 instanceGrid[1], instanceGrid[2], i32(1))
                                                  .getResult()});
    }
    index = skip.getResult(0);
  }
  LLVM::StoreOp::create(b, loc, index, instanceSlot(ring, stage));
  MBarrierArriveOp::create(b, loc, ringBarrier(ring, stage, /*empty=*/false));
}

Value KernelLowering::exitsInstance(Value index) {
  TileSchedule::Instance taken;
  taken.pids = TileSchedule::pidsOf(b, loc, instanceGrid, index);
  Value any;
  inInstanceScope(taken, [&] {
    for (tile::ExitIfOp exit : instanceExits) {
      Value condition = exit.getCondition();
      produceValue(condition);
      Value holds = scalars.lookup(condition);
      any = any ? arith::OrIOp::create(b, loc, any, holds).getResult() : holds;
    }
  });
  return any;
}

Value KernelLowering::readInstance(Value turn) {
  BarrierRing ring = instanceRing();
  Value stage = arith::AndIOp::create(b, loc, turn, i32(1));
  waitForUse(ring, ringBarrier(ring, stage, /*empty=*/false), turn);
  Value index = LLVM::LoadOp::create(b, loc, b.getI32Type(), instanceSlot(ring, stage));
  // Every lane has read it: lane 0 releases the slot for the warp.
  NVVM::SyncWarpOp::create(b, loc, i32(-1));
  arriveFromLane0(ringBarrier(ring, stage, /*empty=*/true));
  return index;
}

TileSchedule::Instance KernelLowering::instanceAt(Value turn) {
  auto op = TileInstanceOp::create(b, loc, tileSchedule, turn);
  TileSchedule::Instance item;
  item.pids = {op.getX(), op.getY(), op.getZ()};
  if (!op.getPiece().empty()) {
    item.lo = op.getPiece()[0];
    item.hi = op.getPiece()[1];
    item.slot = op.getPiece()[2];
  }
  return item;
}

LogicalResult KernelLowering::lowerSplitState(Operation *op, ValueRange tiles, bool store) {
  if (!splitWorkspace || !tileLoop)
    return op->emitOpError("needs the tile loop of a persistent kernel with a tile.split_range");
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  const int64_t threads = numWarps * kWarpSize;
  Type f32 = b.getF32Type(), i32Type = b.getI32Type();
  // Slots of splitSlotRegs * threads floats, then one i32 flag per CTA.
  Value ctas = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  Value slotFloats = i32(splitSlotRegs * threads);
  Value flagPtr = LLVM::GEPOp::create(
      b, loc, globalPtr, i32Type, splitWorkspace,
      ValueRange{arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, ctas, slotFloats),
                                       instance.slot)});
  Value flag = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), flagPtr);
  Value slot = arith::MulIOp::create(b, loc, instance.slot, slotFloats);
  auto address = [&](int64_t reg) {
    Value index = arith::AddIOp::create(b, loc, slot, arith::AddIOp::create(b, loc, i32(reg * threads), threadId));
    return LLVM::GEPOp::create(b, loc, globalPtr, f32, splitWorkspace,
                               ValueRange{arith::ExtUIOp::create(b, loc, b.getI64Type(), index)})
        .getResult();
  };
  auto asmOp = [&](StringRef text) {
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{flag}, text, "l,~{memory}", /*has_side_effects=*/true,
                              /*is_align_stack=*/false, LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  };
  if (!store) {
    // Thread 0 waits for the other piece's flag (and clears it for the next launch); a lost signal
    // traps after about 2^30 polls instead of hanging.
    ifThen(isThreadZero(), [&] {
      asmOp("{\n.reg .pred p;\n.reg .b32 v, n;\nmov.u32 n, 0;\nWAIT:\nld.acquire.gpu.global.b32 v, [$0];\n"
            "setp.ne.b32 p, v, 0;\n@p bra DONE;\nadd.u32 n, n, 1;\nsetp.lt.u32 p, n, 1073741824;\n@p bra WAIT;\n"
            "trap;\nDONE:\nst.relaxed.gpu.global.b32 [$0], 0;\n}");
    });
    barrier();
  }
  int64_t reg = 0;
  for (Value t : tiles) {
    const int64_t n = layoutOf(t).numRegs();
    SmallVector<Value> values;
    for (int64_t r = 0; r < n; ++r) {
      Value at = address(reg + r);
      if (store)
        LLVM::StoreOp::create(b, loc, regs[t][r], at);
      else
        values.push_back(LLVM::LoadOp::create(b, loc, f32, at));
    }
    if (!store)
      regs[t] = values;
    reg += n;
  }
  if (reg != splitSlotRegs)
    return op->emitOpError() << "carries " << reg << " registers a thread, the kernel's slots " << splitSlotRegs;
  if (store) {
    // Every thread's stores, then one release of them.
    barrier();
    ifThen(isThreadZero(), [&] { asmOp("{\nfence.acq_rel.gpu;\nst.relaxed.gpu.global.b32 [$0], 1;\n}"); });
  }
  return success();
}

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
