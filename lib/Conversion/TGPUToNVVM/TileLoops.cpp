//===- TileLoops.cpp - A persistent kernel's loop over program instances ---===//
//
// See TileLoops.h: the tile loop (scf.for over a tgpu.tile_schedule's turns, or scf.while over the
// instances a shared counter hands out), the two-slot ring through which the producer's thread 0
// publishes each instance taken, and the hand-over of a split instance's state through the
// workspace.
//
//===----------------------------------------------------------------------===//
#include "TileLoops.h"

namespace flare::tgpu::lowering {

LogicalResult TileLoops::beginPersistent(tile::ScheduleAttr schedule, ArrayRef<tile::ExitIfOp> exits) {
  MLIRContext *ctx = b.getContext();
  // The grid the body's program ids index: hidden parameters right after the kernel's own.
  for (unsigned d = 0; d < kPersistentGridParams; ++d)
    if (!(instanceGrid[d] = params.append(b.getI32Type())))
      return emitError(func.getLoc()) << "internal error: could not add the grid parameters to kernel '"
                                      << func.getName() << "'";
  kernelFunc->setAttr(kPersistentAttrName, b.getUnitAttr());
  func.walk([&](tile::SplitRangeOp op) { splitRange = op; });
  if (splitRange) {
    // The workspace of split instances: a hidden parameter after the grid.
    if (!(splitWorkspace = params.append(LLVM::LLVMPointerType::get(ctx, 1))))
      return emitError(func.getLoc()) << "internal error: could not add the split workspace to kernel '"
                                      << func.getName() << "'";
    Operation *state = nullptr;
    func.walk([&](Operation *op) {
      if (!state && isa<tile::SplitStoreOp, tile::SplitLoadOp>(op))
        state = op;
    });
    if (state) {
      ValueRange tiles = isa<tile::SplitStoreOp>(state) ? ValueRange(state->getOperands()) : state->getResults();
      for (Value t : tiles)
        splitSlotRegs += layoutOf(t).numRegs();
    }
    kernelFunc->setAttr(kSplitSlotBytesAttrName,
                        b.getI32IntegerAttr(static_cast<int32_t>(splitSlotRegs * numWarps * kWarpSize * 4)));
  }
  dynamicInstances = producerMode && schedule.getDynamicInstances() && !splitRange;
  if (!exits.empty() && !dynamicInstances)
    return tile::ExitIfOp(exits.front()).emitOpError(
        "in a persistent kernel needs the producer warpgroup that takes its instances from a shared counter "
        "and skips them, which this kernel does not get (wgmma and TMA, no split range)");
  if (dynamicInstances) {
    // The counters of the instances taken: the workspace of split instances with no slots (G i32
    // that are zero before a launch and after it), of which the first two are used.
    if (!(splitWorkspace = params.append(LLVM::LLVMPointerType::get(ctx, 1))))
      return emitError(func.getLoc()) << "internal error: could not add the instance counters to kernel '"
                                      << func.getName() << "'";
    kernelFunc->setAttr(kSplitSlotBytesAttrName, b.getI32IntegerAttr(0));
  }
  return success();
}

TileLoop TileLoops::openTileLoop(bool producer, llvm::function_ref<Value()> splitSteps,
                                 llvm::function_ref<Value(Value)> exits) {
  TileLoop tiles;
  if (dynamicInstances) {
    // scf.while (turn, carried): before, the turn's instance (taken by the producer's thread 0, read
    // by every thread), the loop goes on while it is one of the grid's; after, the body.
    Type i32Type = b.getI32Type();
    auto loop = scf::WhileOp::create(b, loc, TypeRange{i32Type, i32Type, i32Type}, ValueRange{i32(0), i32(0)});
    Block *before = b.createBlock(&loop.getBefore(), {}, {i32Type, i32Type}, {loc, loc});
    Value turn = before->getArgument(0);
    if (producer)
      ifThen(isThreadZero(), [&] { takeInstance(turn, exits); });
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
    auto split = TileSplitOp::create(b, loc, tileSchedule, splitSteps());
    tileSchedule = split.getSchedule();
    turns = split.getTurns();
  }
  auto loop = scf::ForOp::create(b, loc, i32(0), turns, i32(1), ValueRange{i32(0)});
  enterLoopBody(loop);
  instance = instanceAt(loop.getInductionVar());
  return {loop, loop.getBody(), loop.getInductionVar(), loop.getRegionIterArgs()[0], turns};
}

void TileLoops::yieldTileLoop(const TileLoop &loop, Value carried) {
  if (loop.turns)
    scf::YieldOp::create(b, loc, carried);
  else
    scf::YieldOp::create(b, loc, ValueRange{arith::AddIOp::create(b, loc, loop.turn, i32(1)), carried});
}

BarrierRing TileLoops::instanceRing() {
  if (instanceRingAt < 0) // `full` and `empty` of two stages, then the two slots
    instanceRingAt = areas.operandBarriers.append(BarrierRing::bytesFor(2) + 2 * 4, kMBarrierBytes, loc);
  return {operandAreaOffset(instanceRingAt), 2};
}

Value TileLoops::instanceSlot(const BarrierRing &ring, Value stage) {
  Value slots = arith::AddIOp::create(b, loc, ring.at, i32(BarrierRing::bytesFor(ring.stages)));
  Value slot = arith::AddIOp::create(b, loc, slots, arith::MulIOp::create(b, loc, stage, i32(4)));
  return smemAddress(slot, b.getI8Type());
}

void TileLoops::takeInstance(Value turn, llvm::function_ref<Value(Value)> exits) {
  BarrierRing ring = instanceRing();
  Value stage = arith::AndIOp::create(b, loc, turn, i32(1));
  // The slot's readers of two turns ago are done with it.
  waitReleased(ring, stage, arith::SubIOp::create(b, loc, turn, i32(2)));
  Value index = TileTakeOp::create(b, loc, splitWorkspace, instanceGrid[0], instanceGrid[1], instanceGrid[2], turn);
  if (exits) {
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
      scf::YieldOp::create(b, loc, exits(taken));
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

Value TileLoops::readInstance(Value turn) {
  BarrierRing ring = instanceRing();
  Value stage = arith::AndIOp::create(b, loc, turn, i32(1));
  waitForUse(ring, ringBarrier(ring, stage, /*empty=*/false), turn);
  Value index = LLVM::LoadOp::create(b, loc, b.getI32Type(), instanceSlot(ring, stage));
  // Every lane has read it: lane 0 releases the slot for the warp.
  NVVM::SyncWarpOp::create(b, loc, i32(-1));
  arriveFromLane0(ringBarrier(ring, stage, /*empty=*/true));
  return index;
}

TileSchedule::Instance TileLoops::instanceAt(Value turn) {
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

LogicalResult TileLoops::lowerSplitState(Operation *op, ValueRange tiles, bool store) {
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

} // namespace flare::tgpu::lowering
