//===- DotPipelines.cpp - The pipelined K loops of matmul dots ------------===//
#include "DotPipelines.h"

namespace flare::tgpu::lowering {

Value DotPipelines::accumulatorLoop(scf::ForOp op, Value lb, Value ub, Value step,
                                      const std::function<Value(Value, Value)> &body) {
  auto loop = scf::ForOp::create(b, loc, lb, ub, step, ValueRange{packAccumulator(flatten(op.getInitArgs()))});
  OpBuilder::InsertionGuard guard(b);
  enterLoopBody(loop);
  scf::YieldOp::create(b, loc, ValueRange{body(loop.getInductionVar(), loop.getRegionIterArgs()[0])});
  return loop.getResult(0);
}

Value DotPipelines::stageMmas(tile::DotOp dot, Value base, int64_t aBytes, bool swizzled, Value acc) {
  auto aType = dot.getA().getType();
  SmemOperand a{base, /*nMajor=*/false, swizzled, descriptorsAtDot(dot)};
  SmemOperand bOp{arith::AddIOp::create(b, loc, base, i32(aBytes)), /*nMajor=*/true, swizzled};
  return emitWgmmaAsync(a, bOp, aType.getDimSize(0), dot.getB().getType().getDimSize(1), aType.getDimSize(1),
                        aType.getElementType(), acc);
}

LogicalResult DotPipelines::lowerPipelinedDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads,
                                                  const Unpipelined &unpipelined) {
  // With tensor maps for both operands (sm_90a, swizzled panels): the TMA pipeline when the runtime
  // encoded them, else a plain loop that copies element by element (a run-time choice). Maps fail to
  // encode only for operands cp.async could not copy either (bases or strides not 16-byte aligned),
  // so a cp.async pipeline would be dead code there; and the fallback's copies are a rolled loop, so
  // that its registers do not count against the TMA path's.
  std::optional<TensorMapPlan> planA = planTensorMap(loads[0]), planB = planTensorMap(loads[1]);
  if (planA && planB && op.getLowerBound().getType().isInteger(32)) {
    std::array<TensorMapRead, 2> reads = {tensorMapFor(*planA), tensorMapFor(*planB)};
    auto ifOp =
        scf::IfOp::create(b, loc, flattenTypes(op.getResultTypes()), tensorMapsUsable(), /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    const int64_t cursor = lazyCursor;
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, lowerTmaDotLoop(op, loads, reads));
    lazyCursor = cursor;
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, lowerRolledDotLoop(op, loads));
    lazyCursor = cursor;
    unflatten(op.getResults(), ifOp.getResults());
    return success();
  }
  return lowerCpAsyncDotLoop(op, loads, unpipelined);
}

SmallVector<Value> DotPipelines::lowerTmaDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads,
                                                   ArrayRef<TensorMapRead> reads) {
  auto dot = cast<tile::DotOp>(*op.getRegionIterArgs()[0].getUsers().begin());
  auto aType = dot.getA().getType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = dot.getB().getType().getDimSize(1);
  constexpr int64_t kAlign = 1024;
  const int64_t aBytes = alignUp(m * k * 2, kAlign), stageBytes = alignUp(aBytes + k * n * 2, kAlign);
  // As many stages as fit beside the rest of the kernel, 3 to kTmaStages.
  const int64_t room = maxSharedBytes - kReservedSharedBytes - areas.scratch.bytes - areas.persistentOperands.bytes -
                       areas.operandBarriers.bytes;
  const int stages = static_cast<int>(std::clamp<int64_t>(room / stageBytes, 3, kTmaStages));
  Value lb = scalars.lookup(op.getLowerBound()), ub = scalars.lookup(op.getUpperBound()),
        step = scalars.lookup(op.getStep());
  // The ring (stages, then a `full` and an `empty` mbarrier per stage) in the lazy area.
  const int64_t ringOffset = alignUp(lazyCursor, kAlign), barriersAt = ringOffset + stages * stageBytes;
  areas.operands.swizzled = true;
  lazyCursor = barriersAt + BarrierRing::bytesFor(stages);
  {
    Location saved = loc;
    loc = dot.getLoc();
    growLazy();
    loc = saved;
  }
  const BarrierRing barriers{arith::AddIOp::create(b, loc, areas.operands.base(), i32(barriersAt)), stages};
  auto barrierAt = [&](Value slot, bool empty) { return ringBarrier(barriers, slot, empty); };
  auto waitPhase = [&](Value barrier, Value use) { waitForUse(barriers, barrier, use); };
  auto slotBase = [&](Value slot) {
    Value inRing = arith::AddIOp::create(b, loc, i32(ringOffset), arith::MulIOp::create(b, loc, slot, i32(stageBytes)));
    return arith::AddIOp::create(b, loc, areas.operands.base(), inRing).getResult();
  };
  Value isThread0 = isThreadZero();
  // `full` completes with thread 0's expect-tx and the stage's bytes; `empty` once every warp is
  // done reading the stage.
  barrier(); // earlier users of this shared memory are done
  ifThen(isThread0, [&] { initRingBarriers(barriers, i32(1), numWarps, /*fence=*/true); });
  barrier();
  // Thread 0: the operand blocks of iteration `iv` into `slot`.
  auto issue = [&](Value iv, Value slot) {
    Value full = barrierAt(slot, false), base = slotBase(slot);
    expectTx(full, i32(m * k * 2 + k * n * 2));
    DenseMap<Value, Value> memo;
    for (int which = 0; which < 2; ++which) {
      SmallVector<Value> offsets = loadOffsetsAt(loads[which], op, iv, memo);
      Value dst = which == 0 ? base : arith::AddIOp::create(b, loc, base, i32(aBytes)).getResult();
      copyTileTma(reads[which], offsets[0], offsets[1], dst, full);
    }
  };
  // Refills lag one iteration behind the releases, so thread 0 rarely waits for the other warps:
  // iterations 0 .. stages - 3 are issued before the loop, iteration i + stages - 2 during iteration i.
  const int ahead = stages - 2;
  ifThen(isThread0, [&] {
    for (int s = 0; s < ahead; ++s) {
      Value iv = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, step, i32(s)));
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub), [&] { issue(iv, i32(s)); });
    }
  });
  Value result = accumulatorLoop(op, lb, ub, step, [&](Value iv, Value accIn) {
    Value i = arith::DivSIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lb), step);
    Value slot = arith::RemUIOp::create(b, loc, i, i32(stages));
    waitPhase(barrierAt(slot, false), i);
    Value acc = stageMmas(dot, slotBase(slot), aBytes, /*swizzled=*/true, accIn);
    // The previous iteration's MMAs are done in this warpgroup: each warp releases its stage.
    WgmmaWaitOp::create(b, loc, 1);
    Value previous = arith::SubIOp::create(b, loc, i, i32(1));
    Value release = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, previous, i32(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, laneId, i32(0)));
    ifThen(release, [&] {
      Value prevSlot = arith::RemUIOp::create(b, loc, arith::AddIOp::create(b, loc, i, i32(stages - 1)), i32(stages));
      MBarrierArriveOp::create(b, loc, barrierAt(prevSlot, true));
    });
    // Thread 0 refills the stage released one iteration ago with iteration i + stages - 2.
    Value target = arith::AddIOp::create(b, loc, i, i32(ahead));
    Value targetIv = arith::AddIOp::create(b, loc, iv, arith::MulIOp::create(b, loc, step, i32(ahead)));
    ifThen(arith::AndIOp::create(b, loc, isThread0,
                                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, targetIv, ub)),
           [&] {
             Value targetSlot = arith::RemUIOp::create(b, loc, target, i32(stages));
             Value previousUse = arith::SubIOp::create(b, loc, target, i32(stages));
             waitReleased(barriers, targetSlot, previousUse);
             issue(targetIv, targetSlot);
           });
    return acc;
  });
  WgmmaWaitOp::create(b, loc, 0);
  SmallVector<Value> c = flatten(op.getInitArgs());
  unpackAccumulator(result, c);
  return c;
}

SmallVector<Value> DotPipelines::lowerRolledDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads) {
  auto dot = cast<tile::DotOp>(*op.getRegionIterArgs()[0].getUsers().begin());
  auto aType = dot.getA().getType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = dot.getB().getType().getDimSize(1);
  constexpr int64_t kAlign = 1024;
  const int64_t aBytes = alignUp(m * k * 2, kAlign), at = alignUp(lazyCursor, kAlign);
  areas.operands.swizzled = true;
  lazyCursor = at + aBytes + k * n * 2;
  growLazy();
  Value base = arith::AddIOp::create(b, loc, areas.operands.base(), i32(at));
  Value result = accumulatorLoop(op, scalars.lookup(op.getLowerBound()), scalars.lookup(op.getUpperBound()),
                                 scalars.lookup(op.getStep()), [&](Value iv, Value accIn) {
    barrier(); // the previous iteration's MMAs are done with the operands
    DenseMap<Value, Value> memo;
    for (int which = 0; which < 2; ++which)
      copyTileRolled(loads[which], loadOffsetsAt(loads[which], op, iv, memo),
                     which == 0 ? base : arith::AddIOp::create(b, loc, base, i32(aBytes)).getResult());
    fenceAsyncProxy();
    barrier();
    Value acc = stageMmas(dot, base, aBytes, /*swizzled=*/true, accIn);
    WgmmaWaitOp::create(b, loc, 0);
    return acc;
  });
  SmallVector<Value> c = flatten(op.getInitArgs());
  unpackAccumulator(result, c);
  return c;
}

LogicalResult DotPipelines::lowerCpAsyncDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads,
                                                const Unpipelined &unpipelined) {
  auto dot = cast<tile::DotOp>(*op.getRegionIterArgs()[0].getUsers().begin());
  auto aType = dot.getA().getType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = dot.getB().getType().getDimSize(1);
  // Both operands in 128-byte swizzled panels when their rows are whole panels (A: K a multiple of
  // 64, B: N): the copies then read whole lines of global memory (see copyTileAsync).
  const bool swizzled = k % 64 == 0 && n % 64 == 0;
  const int64_t align = swizzled ? 1024 : 128;
  const int64_t aBytes = alignUp(m * k * 2, align), stageBytes = alignUp(aBytes + k * n * 2, align);
  const int stages = kPipelineStages;
  Value lb = scalars.lookup(op.getLowerBound()), ub = scalars.lookup(op.getUpperBound()),
        step = scalars.lookup(op.getStep());
  if (!lb.getType().isInteger(32))
    return unpipelined(op);

  // cp.async needs 16-byte aligned sources: bases and row strides of both views, and the columns of
  // every copy (loop-invariant offsets, or the induction variable: lower bound and step), multiples
  // of 8 elements. Otherwise the loop runs unpipelined.
  Value ok = arith::AndIOp::create(b, loc, lowBitsClear(lb, 7), lowBitsClear(step, 7));
  for (tile::LoadOp load : loads)
    ok = arith::AndIOp::create(b, loc, ok, cpAsyncAligned(load, load.getOffsets().back() != op.getInductionVar()));
  auto ifOp = scf::IfOp::create(b, loc, flattenTypes(op.getResultTypes()), ok, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.elseBlock());
    if (failed(unpipelined(op)))
      return failure();
    scf::YieldOp::create(b, loc, flatten(op.getResults()));
    b.setInsertionPointToStart(ifOp.thenBlock());

    // The ring: `stages` slots of A (K-major) then B (N-major), above the other ops' scratch.
    int64_t ringOffset = alignUp(lazyCursor, align);
    areas.operands.swizzled |= swizzled;
    lazyCursor = ringOffset + stages * stageBytes;
    {
      Location saved = loc;
      loc = dot.getLoc();
      growLazy();
      loc = saved;
    }
    Value ring = arith::AddIOp::create(b, loc, areas.operands.base(), i32(ringOffset));
    // Copies the tiles of iteration `iv` into slot `slot` (zero bytes when !valid or outside the view).
    auto issue = [&](Value iv, Value slot, Value valid) {
      Value slotBase = arith::AddIOp::create(b, loc, ring, arith::MulIOp::create(b, loc, slot, i32(stageBytes)));
      DenseMap<Value, Value> memo;
      for (int which = 0; which < 2; ++which) {
        tile::LoadOp load = loads[which];
        SmallVector<Value> offsets = loadOffsetsAt(load, op, iv, memo);
        Value operandBase = which == 0 ? slotBase : arith::AddIOp::create(b, loc, slotBase, i32(aBytes)).getResult();
        copyTileAsync(load, offsets, valid, operandBase, /*innerIsK=*/which == 0, k, Value(), Value(), swizzled);
      }
      CpAsyncCommitOp::create(b, loc);
    };
    // Prologue: iterations 0 .. stages - 2 in flight before the loop starts.
    for (int s = 0; s + 1 < stages; ++s) {
      Value iv = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, step, i32(s)));
      issue(iv, i32(s), arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub));
    }
    // Each iteration issues its MMAs and waits only for the previous iteration's.
    Value result = accumulatorLoop(op, lb, ub, step, [&](Value iv, Value accIn) {
      Value i = arith::DivSIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lb), step);
      // Iteration i's copies are the oldest of the stages - 1 groups pending: wait for it alone.
      CpAsyncWaitOp::create(b, loc, stages - 2);
      fenceAsyncProxy();
      barrier();
      Value slotBase = arith::AddIOp::create(
          b, loc, ring, arith::MulIOp::create(b, loc, arith::RemSIOp::create(b, loc, i, i32(stages)), i32(stageBytes)));
      Value acc = stageMmas(dot, slotBase, aBytes, swizzled, accIn);
      // The previous iteration's MMAs are done in every warpgroup: its slot can be refilled, with
      // iteration i + stages - 1.
      WgmmaWaitOp::create(b, loc, 1);
      barrier();
      Value ahead = arith::AddIOp::create(b, loc, iv, arith::MulIOp::create(b, loc, step, i32(stages - 1)));
      issue(ahead, arith::RemSIOp::create(b, loc, arith::AddIOp::create(b, loc, i, i32(stages - 1)), i32(stages)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ahead, ub));
      return acc;
    });
    WgmmaWaitOp::create(b, loc, 0);
    CpAsyncWaitOp::create(b, loc, 0);
    SmallVector<Value> c = flatten(op.getInitArgs());
    unpackAccumulator(result, c);
    scf::YieldOp::create(b, loc, c);
  }
  lazyCursor = 0;
  unflatten(op.getResults(), ifOp.getResults());
  return success();
}

} // namespace flare::tgpu::lowering
