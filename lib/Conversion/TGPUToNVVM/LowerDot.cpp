//===- LowerDot.cpp - Tensor-core dots: mma.sync, wgmma, the pipelined K loop ===//
//
// tile.dot as mma.sync or wgmma, the cp.async- and TMA-pipelined K loop, and an invariant A operand
// (Q) read once into wgmma's register fragments (registerAFits, loadRegisterA).
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

#include "flare/Layout/SharedLayout.h"

namespace flare::tgpu::lowering {

LogicalResult KernelLowering::lowerDot(tile::DotOp op) {
  if (runsOnWgmma(op))
    return lowerDotWgmma(op);
  auto aType = op.getA().getType();
  Type elem = aType.getElementType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = op.getB().getType().getDimSize(1);
  Value aValue = op.getA(), bValue = op.getB();
  SmallVector<Value> c(regs[op.getC()]);
  emitMmaSync(m, k, n, numWarps, elem, [&](int r) { return dotRegister(aValue, r); },
              [&](int r) { return dotRegister(bValue, r); }, c);
  regs[op.getResult()] = c;
  // The lazy operands' shared memory may be overwritten once every warp has read its fragments.
  int consumed = 0;
  for (Value operand : {aValue, bValue}) {
    auto it = lazyTiles.find(operand);
    if (it == lazyTiles.end())
      continue;
    if (it->second.persistent) {
      it->second.loaded.clear(); // the fragments were loaded in this dot's block only
      continue;
    }
    lazyTiles.erase(it);
    ++consumed;
  }
  if (consumed) {
    barrier();
    pendingLazy -= consumed;
    if (pendingLazy == 0)
      lazyCursor = 0;
  }
  return success();
}

Value KernelLowering::pinAnchor() {
  // The nearest f32 result of a two-operand arithmetic op just above the insertion point (the row
  // sums' last shuffle step in the streamed loops); never an accumulator of a dot still in flight.
  Block *block = b.getInsertionBlock();
  auto it = b.getInsertionPoint();
  for (int seen = 0; it != block->begin() && seen < 16; ++seen) {
    --it;
    if (it->getNumResults() == 1 && it->getNumOperands() == 2 && it->getResult(0).getType().isF32() &&
        isa<arith::ArithDialect>(it->getDialect()))
      return it->getResult(0);
  }
  return Value();
}

void KernelLowering::waitForDots(Value v) {
  if (pendingDots.empty())
    return;
  size_t upTo = pendingDots.size() - 1;
  if (v) {
    auto it = llvm::find_if(pendingDots, [&](const PendingDot &d) { return d.result == v; });
    if (it == pendingDots.end())
      return;
    upTo = it - pendingDots.begin();
  }
  // Groups retire in commit order: leaving the younger ones pending completes this one.
  const int64_t younger = static_cast<int64_t>(pendingDots.size() - 1 - upTo);
  Value anchor = pinLastDotWait && younger == 0 ? pinAnchor() : Value();
  if (anchor) {
    // ptxas schedules wgmma.wait_group as early as its register dependences allow: the wait for the
    // previous block's P V rose to the first row max and the softmax never overlapped that product
    // (bench/NOTES.md a35). Behind a branch on the softmax's last value (never taken: x >= -inf or
    // unordered holds for every float) it stays where it is, after the softmax.
    const char *text = "{\n.reg .pred p;\nsetp.geu.f32 p, $0, 0fFF800000;\n@p bra PINNED;\nmembar.cta;\n"
                       "PINNED:\nwgmma.wait_group.sync.aligned 0;\n}";
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{anchor}, text, "f", /*has_side_effects=*/true,
                              /*is_align_stack=*/false, LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  } else {
    WgmmaWaitOp::create(b, loc, younger);
  }
  for (size_t i = 0; i <= upTo; ++i) {
    const PendingDot &d = pendingDots[i];
    SmallVector<Value> c(layoutOf(d.result).numRegs() - d.tail.size());
    unpackAccumulator(d.acc, c);
    llvm::append_range(c, d.tail);
    regs[d.result] = c;
    // The instance's last product reading an early-released operand (Q) is done in this warp.
    if (auto it = releaseAfterDot.find(d.result); it != releaseAfterDot.end()) {
      const PendingRelease &r = it->second;
      arriveFromLane0(tmaOperands[r.operand].empty, r.cond);
      earlyReleases[r.operand].inLoop[r.loop] = true;
      releaseAfterDot.erase(it);
    }
  }
  pendingDots.erase(pendingDots.begin(), pendingDots.begin() + upTo + 1);
}

bool KernelLowering::isRegisterA(Value aTile, int64_t m, int64_t k, int64_t n) {
  // wgmma's A fragments are mma.sync's: warp w of warpgroup g holds rows 64g + 16w .. + 15 in the
  // m16n8k16 A order, so the mma operand layout with all warps along M is exactly what it reads.
  return regs.count(aTile) && layoutOf(aTile) == LinearLayout::mmaOperandA(m, k, n, numWarps);
}


/// wgmma.mma_async on shared-memory operands: A and B are stored there (see coreMatrixOffset) right
/// before it unless they already are (streamed or loop-invariant operands, smemOperands); A is read
/// from registers when they are in its fragment layout.
LogicalResult KernelLowering::lowerDotWgmma(tile::DotOp op) {
  auto aType = op.getA().getType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = op.getB().getType().getDimSize(1);
  Type elem = aType.getElementType();
  Value aTile = wgmmaSources.lookup(op.getA()), bTile = wgmmaSources.lookup(op.getB());
  if (!aTile)
    aTile = op.getA();
  if (!bTile)
    bTile = op.getB();
  SmemOperand aSmem = smemOperands.lookup(op.getA()), bSmem = smemOperands.lookup(op.getB());
  aSmem.descriptorsAtDot = descriptorsAtDot(op);
  // B copied by TMA at its load (loadOperandByTma): wait for the panels.
  if (auto tma = tmaOperands.find(bTile); !bSmem.base && tma != tmaOperands.end() && tma->second.nMajor) {
    waitForTmaOperand(tma->second);
    bSmem = {tma->second.base, /*nMajor=*/true, /*swizzled=*/true};
  }
  SmallVector<Value> aRegs;
  if (auto it = registerAOperands.find(aTile); !aSmem.base && it != registerAOperands.end())
    aRegs = it->second.first;
  else if (!aSmem.base && isRegisterA(aTile, m, k, n))
    aRegs = regs[aTile];
  const bool storeA = !aSmem.base && aRegs.empty(), storeB = !bSmem.base;
  if (storeA || storeB) {
    // Shared memory for the stored operands (core matrices), above the other ops' scratch (see the
    // lazy tiles).
    constexpr int64_t kAlign = 128;
    int64_t cursor = alignUp(lazyCursor, kAlign);
    if (storeA) {
      aSmem.base = arith::AddIOp::create(b, loc, areas.operands.base(), i32(cursor));
      cursor = alignUp(cursor + m * k * 2, kAlign);
    }
    if (storeB) {
      bSmem.base = arith::AddIOp::create(b, loc, areas.operands.base(), i32(cursor));
      cursor += n * k * 2;
    }
    lazyCursor = cursor;
    growLazy();
    if (storeA)
      storeWgmmaOperand(aTile, /*isB=*/false, k, aSmem.base);
    if (storeB)
      bSmem.nMajor = storeWgmmaOperand(bTile, /*isB=*/true, k, bSmem.base);
    // Generic-proxy stores must be visible to the async proxy that wgmma reads through.
    fenceAsyncProxy();
    barrier();
  }
  SmallVector<Value> c(regs[op.getC()]);
  // Zero padding the dot promises (k_extent, n_extent): no MMAs over it.
  const int64_t kExtent = static_cast<int64_t>(op.getKExtent().value_or(k));
  const int64_t nExtent = static_cast<int64_t>(op.getNExtent().value_or(n));
  const int64_t kIssued = kExtent < k ? kExtent : 0, nIssued = nExtent < n ? nExtent : 0;
  if (!storeA && !storeB) {
    // Nothing to release afterwards: leave the MMAs in flight until the result is used.
    const size_t live = issuedRegisters(c.size(), n, nIssued);
    Value acc = emitWgmmaAsync(aSmem, bSmem, m, n, k, elem, packAccumulator(ArrayRef<Value>(c).take_front(live)),
                               aRegs, kIssued, nIssued);
    pendingDots.push_back({op.getResult(), acc, SmallVector<Value>(ArrayRef<Value>(c).drop_front(live))});
    return success();
  }
  waitForDots(); // the wait below covers every group: bind the pending results first
  emitWgmma(aSmem, bSmem, m, n, k, elem, c, aRegs, kIssued, nIssued);
  regs[op.getResult()] = c;
  // Every warpgroup has read A and B once the barrier passes; the space may be reused.
  barrier();
  if (pendingLazy == 0)
    lazyCursor = 0;
  return success();
}

Value KernelLowering::accumulatorLoop(scf::ForOp op, Value lb, Value ub, Value step,
                                      const std::function<Value(Value, Value)> &body) {
  auto loop = scf::ForOp::create(b, loc, lb, ub, step, ValueRange{packAccumulator(flatten(op.getInitArgs()))});
  OpBuilder::InsertionGuard guard(b);
  enterLoopBody(loop);
  scf::YieldOp::create(b, loc, ValueRange{body(loop.getInductionVar(), loop.getRegionIterArgs()[0])});
  return loop.getResult(0);
}

Value KernelLowering::stageMmas(tile::DotOp dot, Value base, int64_t aBytes, bool swizzled, Value acc) {
  auto aType = dot.getA().getType();
  SmemOperand a{base, /*nMajor=*/false, swizzled, descriptorsAtDot(dot)};
  SmemOperand bOp{arith::AddIOp::create(b, loc, base, i32(aBytes)), /*nMajor=*/true, swizzled};
  return emitWgmmaAsync(a, bOp, aType.getDimSize(0), dot.getB().getType().getDimSize(1), aType.getDimSize(1),
                        aType.getElementType(), acc);
}

LogicalResult KernelLowering::lowerPipelinedDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads) {
  consumersSetUpState = true; // its ring, set up by the kernel's own threads
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
  return lowerCpAsyncDotLoop(op, loads);
}

SmallVector<Value> KernelLowering::lowerTmaDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads,
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

SmallVector<Value> KernelLowering::lowerRolledDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads) {
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

LogicalResult KernelLowering::lowerCpAsyncDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads) {
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
    return lowerForGeneric(op);

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
    if (failed(lowerForGeneric(op)))
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

/// The fragments' layout (LinearLayout::mmaOperandA) puts a thread's rows and columns in bits of
/// their own: lanes and warps give the row's low 3 bits and the column's bits 1-2, the registers
/// the rest, column bit 0 being the pair of one 32-bit read. In flare::swizzledOffset only the
/// 16-byte chunk (column bits 3-5) is then XOR-ed with the thread's row % 8, and every register's
/// address is one of 8 per-thread bases plus a constant.
bool KernelLowering::registerAFits(int64_t m, int64_t k, int64_t n) {
  constexpr int64_t kMaxDepth = 128;
  if (m % 64 != 0 || k % 64 != 0 || k > kMaxDepth)
    return false;
  LinearLayout layout = LinearLayout::mmaOperandA(m, k, n, numWarps);
  int64_t threadRows = 0, threadCols = 0;
  for (LayoutInput in : {LayoutInput::Lane, LayoutInput::Warp})
    for (const auto &basis : layout.bases(in)) {
      threadRows |= basis[0];
      threadCols |= basis[1];
    }
  if ((threadCols & ~int64_t{6}) != 0 || (threadRows & 7) != 7 || layout.applyInput(LayoutInput::Reg, 1)[1] != 1)
    return false;
  for (int r = 2; r < layout.numRegs(); r += 2) {
    LinearLayout::Coord c = layout.applyInput(LayoutInput::Reg, r);
    if ((c[0] & (threadRows | 7)) != 0 || (c[1] & 7) != 0)
      return false;
  }
  return true;
}

SmallVector<Value> KernelLowering::loadRegisterA(Value base, int64_t m, int64_t k, int64_t n, Type elem) {
  LinearLayout layout = LinearLayout::mmaOperandA(m, k, n, numWarps);
  ArrayRef<Value> t = threadCoord(LinearLayoutAttr::get(b.getContext(), layout)); // this thread's row, column
  // base + row * 128 + col * 2, with the row % 8 in the chunk bits (4-6): the panels start at
  // 1024-byte boundaries (TMA's 128-byte swizzle), so the or and the XOR below are exact.
  Value threadBase = arith::AddIOp::create(b, loc, base, arith::MulIOp::create(b, loc, t[0], i32(128)));
  threadBase = arith::AddIOp::create(b, loc, threadBase, arith::ShLIOp::create(b, loc, t[1], i32(1)));
  threadBase = arith::OrIOp::create(
      b, loc, threadBase, arith::ShLIOp::create(b, loc, arith::AndIOp::create(b, loc, t[0], i32(7)), i32(4)));
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto pairType = VectorType::get({2}, elem);
  DenseMap<int64_t, Value> chunkBases;
  SmallVector<Value> out(layout.numRegs());
  for (int r = 0; r < layout.numRegs(); r += 2) {
    LinearLayout::Coord c = layout.applyInput(LayoutInput::Reg, r);
    const int64_t chunk = (c[1] >> 3) & 7, panel = c[1] >> 6;
    Value &chunkBase = chunkBases[chunk];
    if (!chunkBase)
      chunkBase = chunk ? arith::XOrIOp::create(b, loc, threadBase, i32(chunk << 4)).getResult() : threadBase;
    Value offset = arith::AddIOp::create(b, loc, chunkBase, i32(panel * m * 128 + c[0] * 128));
    Value ptr = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), smemBase, ValueRange{offset});
    Value pair = LLVM::LoadOp::create(b, loc, pairType, ptr, /*alignment=*/4);
    out[r] = LLVM::ExtractElementOp::create(b, loc, pair, i32(0));
    out[r + 1] = LLVM::ExtractElementOp::create(b, loc, pair, i32(1));
  }
  return out;
}

} // namespace flare::tgpu::lowering
