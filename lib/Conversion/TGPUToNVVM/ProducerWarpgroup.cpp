//===- ProducerWarpgroup.cpp - A warpgroup that only issues the streamed loops' copies ===//
//
// With `#tile.schedule<producer_warpgroup = true>` the kernel runs one more warpgroup than its layouts use. At
// the start it branches off, gives up registers (setmaxnreg.dec to its tgpu.warp_roles budget) and issues
// the TMA copies of the kernel's streamed loops, stage after stage, as far ahead as the ring's
// `empty` barriers let it; then it exits. The kernel's own warps (the consumers) take its registers
// (setmaxnreg.inc) and only wait for `full`, compute and release `empty`: no thread of theirs stops
// to refill a stage, and the copies of the next blocks are in flight while both consumer
// warpgroups run their MMAs and softmax.
//
//     start:     tgpu.warp_specialize: warps >= numWarps give registers back, run <producer>, exit;
//                the others take the registers and go on
//     consumers: [ring set-up: barrier init by thread 0; CTA barrier]        (once per ring)
//                loop i: wait full[i % S]; body; lane 0 of each warp arrives on empty[i % S]
//     producer:  [CTA barrier]                                               (once per ring)
//                for each loop of the ring, each iteration t (ring index):
//                    wait empty[t % S] for use t - S; expect the stage's bytes on full[t % S];
//                    one TMA copy per panel of each stream
//
// The producer walks the same loops in the same order with the ring index numbered on from one
// loop to the next (a ring continued by a later loop, StreamedLoop.cpp). It recomputes the loops'
// bounds and load offsets from the kernel's arguments and program ids: only the loops tgpu-warp-
// specialize marked tgpu.producer_issued (top-level, scalars it can compute that way, every block by
// TMA) are handed to it; other streamed loops keep their own copies. Launches whose tensor maps did
// not encode copy element by element with all 128 producer threads (each arrives on `full`).
//
// The consumers' CTA barriers become a named barrier over their warps only (KernelResources::barrier):
// the producer is busy in its loop or has exited. The kernel's first ring the producer initialises
// itself, first thing, and announces on named barrier kRingReady (it arrives, the consumers wait
// there before their first use), so that the first K/V copies leave at the kernel's start; a later
// fresh ring (after a loop it could not issue) the consumers initialise, and the producer meets them
// at the CTA barrier after it.
//
// In a persistent kernel (#tile.schedule<persistent = true>) the producer walks the consumers' program instances in
// the same loop (beginTileLoop), the first ring's index carried across them, and it also copies the
// top-level TMA operands (Q before an instance's loops, the last V block after them) through
// one-stage rings whose index is the instance's turn: it waits until the consumers released the
// previous instance's block (they arrive after its last reader), so the next Q travels while they
// finish this instance. With #tile.schedule<dynamic_instances = true> the producer's first thread
// also takes each turn's instance from the counter the CTAs share (tgpu.tile_take) and hands it to
// every thread through a two-slot ring (PersistentLoop.cpp, takeInstance / readInstance).
//
//===----------------------------------------------------------------------===//
#include "ProducerWarpgroup.h"

namespace flare::tgpu::lowering {

bool ProducerWarpgroup::producerCanCompute(Value v) { return computableFromProgramIds(v, func, producerComputable); }

SmallVector<Value> ProducerWarpgroup::producerInputs(scf::ForOp loop, ArrayRef<Stream> streams) {
  SmallVector<tile::LoadOp> loads;
  for (const Stream &s : streams)
    loads.push_back(s.load);
  return tgpu::producerInputs(loop, loads);
}

bool ProducerWarpgroup::producerCanIssue(scf::ForOp loop) { return producerMode && producerIssued(loop); }

void ProducerWarpgroup::beginProducer() {
  // The registers each role runs with (tgpu-warp-specialize's tgpu.warp_roles).
  WarpRolesAttr roles = warpRolesOf(func);
  auto split = WarpSpecializeOp::create(b, loc, warpId, numWarps, roles.getConsumerRegisters(),
                                        /*producer_warps=*/4, roles.getProducerRegisters());
  OpBuilder inRegion = OpBuilder::atBlockEnd(&split.getProducer().emplaceBlock());
  producerExit = WarpExitOp::create(inRegion, loc);
  producerOnlyOps.push_back(split);
}

void ProducerWarpgroup::issueProducedOperands(bool afterLoops, Value turn, Value isFirstThread) {
  for (ProducedOperand &o : producedOperands) {
    if (o.afterLoops != afterLoops)
      continue;
    loc = o.load.getLoc();
    produceOperandScalars(o);
    TensorMapRead read = tensorMapFor(o.plan);
    BarrierRing ring = operandRing(o.barrierAt);
    Value base = arith::AddIOp::create(b, loc, areas.persistentOperands.base(), i32(o.panelsAt));
    ifThen(arith::AndIOp::create(b, loc, isFirstThread, tensorMapsUsable()), [&] {
      waitReleased(ring, i32(0), arith::SubIOp::create(b, loc, turn, i32(1)));
      Value full = ringBarrier(ring, i32(0), /*empty=*/false);
      expectTx(full, i32(o.bytes));
      SmallVector<Value> offsets;
      for (Value offset : tile::LoadOp(o.load).getOffsets())
        offsets.push_back(scalars.lookup(offset));
      copyBlockTma(read, offsets, base, full);
    });
  }
}

LogicalResult ProducerWarpgroup::emitProducer() {
  if (producerLoops.empty() && producedOperands.empty() && !dynamicInstances) {
    // Nothing for it to do: no branch, no register moves; the kernel's own barriers stay named
    // barriers over all of its threads.
    for (Operation *op : llvm::reverse(producerOnlyOps))
      op->erase();
    producerOnlyOps.clear();
    producerMode = false;
    kernelFunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({numWarps * kWarpSize, 1, 1}));
    return success();
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(producerExit);
  loc = func.getLoc();
  // The producer's own scalars and views (its branch does not see the consumers'), its own thread
  // numbering (issueStage's thread 0 and the element-wise copies' 128 threads).
  ScalarScope producerScope = freshScalarScope();
  swapScalarScope(producerScope);
  Value savedThreadId = threadId;
  const int savedWarps = numWarps;
  threadId = arith::SubIOp::create(b, loc, threadId, i32(numWarps * kWarpSize));
  numWarps = 4;

  auto ringOf = [&](const ProducerLoop &p) {
    StreamRing ring = p.ring;
    ring.base = areas.rings.base();
    ring.barriers.at = arith::AddIOp::create(b, loc, ring.base, i32(ring.barriersAt));
    ring.useTma = tensorMapsUsable();
    return ring;
  };
  Value isFirstThread = isThreadZero();
  // The kernel's first ring: its barriers, initialised here (`full`: one expect-tx, or the 128
  // element-wise copiers; `empty`: every consumer warp), announced to the consumers without waiting
  // for them (with the produced operands' barriers in a persistent kernel).
  auto initFirstRing = [&](const ProducerLoop &p) {
    StreamRing ring = ringOf(p);
    Value fullCount = arith::SelectOp::create(b, loc, ring.useTma, i32(1), i32(numWarps * kWarpSize));
    ifThen(isFirstThread, [&] { initRingBarriers(ring.barriers, fullCount, savedWarps, /*fence=*/true); });
    // Without TMA every producer thread arrives on `full` after its element-wise copies: none may
    // before the first thread's init (compute-sanitizer racecheck saw the race). The producer's own
    // named barrier orders them; with TMA only the first thread touches the barriers.
    if (tmaFallback)
      ifThen(notI1(ring.useTma), [&] {
        NamedBarrierSyncOp::create(b, loc, i32(kProducerBarrier), i32(numWarps * kWarpSize));
      });
  };
  auto announce = [&] { NamedBarrierArriveOp::create(b, loc, i32(kRingReady), i32((savedWarps + 4) * kWarpSize)); };
  // A persistent kernel: the first ring and the produced operands' barriers once, then the same walk
  // over program instances as the consumers', the first ring's index carried from one instance to the
  // next. Each instance starts with its produced operands (Q), copied as soon as the consumers have
  // released the previous instance's; with #tile.schedule<operands_after_first_stage = true>, after the first stage of
  // the instance's first loop (or after that loop where it runs no iteration), their coordinates
  // still computed at the instance's start.
  TileLoop tiles;
  Value carriedNext;
  // Not where the kernel carries the element-wise fallback of its copies: their per-instance
  // pointers already fill the producer's registers, and Q's coordinates kept across the first copy
  // spill.
  const bool operandsLate = persistent && operandsAfterFirstStage && !tmaFallback && !producerLoops.empty() &&
                            producerLoops.front().producerInit;
  auto issueOperands = [&] { issueProducedOperands(/*afterLoops=*/false, tiles.turn, isFirstThread); };
  if (persistent) {
    const bool firstRingHere = !producerLoops.empty() && producerLoops.front().producerInit;
    if (firstRingHere)
      initFirstRing(producerLoops.front());
    ifThen(isFirstThread, [&] {
      for (const ProducedOperand &o : producedOperands)
        initRingBarriers(operandRing(o.barrierAt), i32(1), savedWarps, /*fence=*/true);
      // Instances from a shared counter: their slots' `full` (the first thread's arrival) and
      // `empty` barriers (every warp of the CTA).
      if (dynamicInstances)
        initRingBarriers(instanceRing(), i32(1), savedWarps + 4, /*fence=*/false);
    });
    if (dynamicInstances) // the other producer threads wait on those barriers too
      NamedBarrierSyncOp::create(b, loc, i32(kProducerBarrier), i32(numWarps * kWarpSize));
    if (firstRingHere || !producedOperands.empty() || dynamicInstances)
      announce();
    tiles = beginTileLoop(/*producer=*/true);
    if (!operandsLate)
      issueOperands();
    else // their scalars at the instance's top level, where the copies in the loop find them
      for (ProducedOperand &o : producedOperands)
        if (!o.afterLoops)
          produceOperandScalars(o);
  }

  Value next; // ring index of the next copy
  for (ProducerLoop &p : producerLoops) {
    loc = p.loop.getLoc();
    StreamRing ring = ringOf(p);
    if (p.producerInit) {
      if (!persistent) {
        initFirstRing(p);
        announce();
      }
      next = persistent ? tiles.carried : i32(0);
    } else if (p.fresh) {
      gpu::BarrierOp::create(b, loc); // the consumers have initialised the ring's barriers
      next = i32(0);
    }
    for (Value v : producerInputs(p.loop, p.streams))
      produceValue(v);
    StageCopies copies;
    copies.loop = p.loop;
    copies.streams = p.streams;
    if (!planStageCopies(copies, ring.useTma))
      return emitError(loc) << "internal error: the producer warpgroup cannot copy this loop's blocks";
    Value lb = scalars.lookup(p.loop.getLowerBound()), ub = scalars.lookup(p.loop.getUpperBound()),
          step = scalars.lookup(p.loop.getStep());
    Value first = next;
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    {
      OpBuilder::InsertionGuard inLoop(b);
      enterLoopBody(loop);
      Value iv = loop.getInductionVar();
      Value t = arith::AddIOp::create(b, loc, first,
                                      arith::DivSIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lb), step));
      Value stage = arith::RemUIOp::create(b, loc, t, i32(ring.barriers.stages));
      Value previousUse = arith::SubIOp::create(b, loc, t, i32(ring.barriers.stages));
      issueStage(ring, copies, iv, stage, [&] { waitReleased(ring.barriers, stage, previousUse); });
      if (operandsLate && &p == &producerLoops.front())
        ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, iv, lb), issueOperands);
      scf::YieldOp::create(b, loc);
    }
    if (operandsLate && &p == &producerLoops.front()) // the loop ran no iteration
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lb, ub), issueOperands);
    next = arith::AddIOp::create(b, loc, first, tripCount(lb, ub, step));
    if (ring.carried)
      carriedNext = next;
  }
  if (persistent) {
    issueProducedOperands(/*afterLoops=*/true, tiles.turn, isFirstThread);
    yieldTileLoop(tiles, carriedNext ? carriedNext : tiles.carried);
    b.setInsertionPointAfter(tiles.op);
  }

  threadId = savedThreadId;
  numWarps = savedWarps;
  swapScalarScope(producerScope);
  return success();
}

void ProducerWarpgroup::waitForProducerInit() {
  if (producerInitWaited)
    return;
  producerInitWaited = true;
  OpBuilder::InsertionGuard guard(b);
  if (persistent)
    b.setInsertionPoint(tileLoop.op);
  NamedBarrierSyncOp::create(b, loc, i32(kRingReady), i32((numWarps + 4) * kWarpSize));
}

} // namespace flare::tgpu::lowering
