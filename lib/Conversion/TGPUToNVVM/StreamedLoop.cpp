//===- StreamedLoop.cpp - wgmma operands streamed into shared memory ahead of use ===//
//
// A loop marked #tgpu.pipeline<streamed> by tgpu-pipeline-loops (its body loads blocks that only feed
// wgmma dot operands, K and V of an attention loop, marked tgpu.streamed) gets those loads replaced
// by asynchronous copies into a ring of S shared-memory stages (3 when they fit, else 2), each
// guarded by a `full` and an `empty` mbarrier:
//
//     prologue:  copy(iteration 0) -> stage 0; arrive on full[0] once the copies land
//     body i:    if i + 1 < n: wait empty[(i+1) % S] for iteration i + 1 - S (when there was one),
//                              copy(iteration i + 1) -> stage (i+1) % S, arrive on its full barrier
//                wait full[i % S]; fence.proxy.async           (every thread's copies have landed)
//                the body, its dots reading stage i % S through descriptors
//                wait for the dots; lane 0 of each warp arrives on empty[i % S]
//
// `full` expects every thread (cp.async.mbarrier.arrive.noinc: the arrival happens when the thread's
// copies complete), `empty` every warp, so no CTA-wide barrier holds the warpgroups together inside
// the loop: with three stages one may run a whole iteration ahead of the other. With two warpgroups
// they also take turns issuing their MMAs (named barriers 1 and 2: one's softmax runs while the
// other's MMAs use the tensor cores), unless the body needs CTA-wide barriers or the kernel opts out.
//
// The copies land in the layout the dot's descriptor reads (128-byte swizzled panels for B operands
// whose rows are a multiple of 64 elements, else the core matrices storeWgmmaOperand writes), so
// the streamed blocks never occupy registers and the dots need no stores, fences or barriers of
// their own. The load offsets of iteration i + 1 are the body's own scalar arithmetic re-emitted for
// that induction value (scalarAt), so loops that visit blocks in a computed order (the partial
// blocks of a masked attention loop) stream too.
//
// A streamed loop that follows another with only pure scalar ops between them, streams blocks of the
// same layout and has bounds and first offsets known before the earlier loop (the partial-block loop
// after the full-block loop of an attention kernel) continues its ring: no CTA barriers or barrier
// set-up of its own, its iterations numbered on from the earlier loop's (ring index first + t), and
// its first copies issued by the earlier loop's last iteration in place of a refill, so that they
// travel while that iteration computes (matchRingContinuation, RingContinuation).
//
// Loop-invariant register operands of the loop's wgmma dots (Q) are stored into shared memory once
// before the loop (storeInvariantOperands) instead of once per iteration, after the ring's first
// copies are issued: the first K/V blocks travel while Q's registers arrive.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

SmallVector<Stream> KernelLowering::streamsOf(scf::ForOp op) {
  SmallVector<Stream> streams;
  if (pipelineOf(op) != PipelineKind::Streamed)
    return streams;
  for (auto load : op.getBody()->getOps<tile::LoadOp>()) {
    if (!isStreamed(load))
      continue;
    // The view is lowered before the loop (a loop checked as the continuation of an earlier loop's
    // ring may come before its views: then it does not continue that ring).
    std::optional<StreamedLoad> match = matchStreamedLoad(load, op);
    if (!match || !views.count(load.getView()))
      continue;
    Stream s;
    static_cast<StreamedLoad &>(s) = *match;
    streams.push_back(s);
  }
  return streams;
}

SmallVector<Value> KernelLowering::storeInvariantOperands(scf::ForOp op) {
  SmallVector<Value> registered;
  if (!wgmma)
    return registered;
  bool stored = false;
  // The dots of this loop's body, then those of loops nested in it: an operand that none of the
  // enclosing loops changes is stored before the outermost of them, so that its registers are not
  // live across the outer iterations (K and V of the backward, across a GQA group's heads).
  SmallVector<tile::DotOp> dots;
  op.getBody()->walk([&](tile::DotOp dot) {
    if (runsOnWgmma(dot))
      dots.push_back(dot);
  });
  for (tile::DotOp dot : dots) {
    const bool nested = dot->getBlock() != op.getBody();
    const int64_t k = dot.getA().getType().getDimSize(1);
    for (bool isB : {false, true}) {
      Value operand = isB ? dot.getB() : dot.getA();
      Value source = operand;
      if (auto conv = operand.getDefiningOp<ConvertLayoutOp>(); conv && conv->getBlock() == dot->getBlock())
        source = conv.getSrc();
      if (Value converted = wgmmaSources.lookup(source)) // a conversion before the loop, never lowered
        source = converted;
      // The transpose of a block copied by TMA for another dot's A (K of the backward's S^T = K Q^T,
      // read as K^T by dQ^T = K^T dS^T): the same panels, read M-major.
      bool mMajor = false;
      if (auto trans = source.getDefiningOp<tile::TransOp>(); trans && !isB && tmaOperands.count(trans.getSrc())) {
        source = trans.getSrc();
        mMajor = true;
      }
      // Copied by TMA into swizzled panels at its load (loadOperandByTma): wait for it, no store.
      if (auto tma = tmaOperands.find(source); tma != tmaOperands.end() && !isB) {
        if (nested) // waited for by the loop whose body holds the dot
          continue;
        // #tile.schedule<invariant_a_in_registers = true>: read once per instance into the register fragments the
        // dots take A from, by the top-level loops (whose first one's reads precede the others).
        const int64_t m = dot.getA().getType().getDimSize(0), n = dot.getB().getType().getDimSize(1);
        if (!mMajor && invariantAInRegisters && op->getBlock() == &func.getBody().front() && registerAFits(m, k, n)) {
          // Read (and released) once per instance, whichever dots and loops take it.
          if (auto it = registerAOperands.find(source);
              it == registerAOperands.end() || !insertingWithin(it->second.second)) {
            waitForTmaOperand(tma->second);
            registerAOperands[source] = {loadRegisterA(tma->second.base, m, k, n, dot.getA().getType().getElementType()),
                                         b.getInsertionBlock()};
            if (tma->second.produced && tma->second.issue < 0)
              releaseAtRead(source, tma->second);
          }
          continue;
        }
        if (!smemOperands.count(operand)) {
          waitForTmaOperand(tma->second);
          smemOperands[operand] = {tma->second.base, /*nMajor=*/mMajor, /*swizzled=*/true};
          registered.push_back(operand);
        }
        continue;
      }
      if (!op.isDefinedOutsideOfLoop(source) || !regs.count(source) || smemOperands.count(operand))
        continue;
      // Stored before an enclosing point of this one (an earlier loop of the same block): reuse it.
      auto it = storedOperands.find(source);
      if (it == storedOperands.end() || !insertingWithin(it->second.block)) {
        constexpr int64_t kAlign = 128;
        const int64_t offset =
            areas.persistentOperands.append(cast<RankedTensorType>(source.getType()).getNumElements() * 2, kAlign,
                                            source.getLoc());
        Value base = arith::AddIOp::create(b, loc, areas.persistentOperands.base(), i32(offset));
        bool nMajor = storeWgmmaOperand(source, isB, k, base);
        storedOperands[source] = {offset, nMajor, b.getInsertionBlock()};
        it = storedOperands.find(source);
        stored = true;
      }
      smemOperands[operand] = {arith::AddIOp::create(b, loc, areas.persistentOperands.base(), i32(it->second.offset)),
                               it->second.nMajor};
      registered.push_back(operand);
    }
  }
  if (stored) {
    consumersSetUpState = true;
    fenceAsyncProxy();
    barrier();
  }
  return registered;
}

int64_t KernelLowering::bytesStagedByBody(scf::ForOp op) {
  // f32 sums added by TMA reduce (reduceThroughTma's staging), where the kernel is one the reduce
  // serves (no producer warpgroup, not persistent), and wgmma B operands the body computes
  // (storeWgmmaOperand's copy): areas the body's lowering sizes only once the ring is placed.
  int64_t bytes = 0;
  if (!producerMode && !persistent && tmaEnabled)
    op.getBody()->walk([&](tile::AtomicAddOp add) {
      auto type = cast<RankedTensorType>(add.getValue().getType());
      if (type.getRank() == 2 && type.getElementType().isF32())
        bytes += type.getNumElements() * 4;
    });
  if (bytes == 0)
    return 0; // (kernels without such sums keep the ring they had)
  op.getBody()->walk([&](tile::DotOp dot) {
    // Through conversions and transposes: a streamed block read along K (Q^T of S^T = K Q^T) is not
    // stored by the body.
    Value bOperand = dot.getB();
    while (isa_and_nonnull<ConvertLayoutOp, tile::TransOp>(bOperand.getDefiningOp()))
      bOperand = bOperand.getDefiningOp()->getOperand(0);
    if (runsOnWgmma(dot) && !bOperand.getDefiningOp<tile::LoadOp>() && !op.isDefinedOutsideOfLoop(bOperand))
      bytes += dot.getB().getType().getNumElements() * 2;
  });
  return bytes;
}

std::optional<StageCopies>
KernelLowering::matchRingContinuation(scf::ForOp op, const StreamRing &ring, ArrayRef<Stream> streams) {
  // Nothing between the loops may touch shared memory (a TMA store's panels reuse the ring's area).
  Operation *next = op->getNextNode();
  for (; next && !isa<scf::ForOp>(next); next = next->getNextNode())
    if (next->getNumRegions() || !isMemoryEffectFree(next) ||
        llvm::any_of(next->getResultTypes(), [](Type t) { return isa<ShapedType>(t); }))
      return std::nullopt;
  auto loop = dyn_cast_or_null<scf::ForOp>(next);
  if (!loop || pipelineOf(loop) != PipelineKind::Streamed)
    return std::nullopt;
  StageCopies copies;
  copies.loop = loop;
  copies.streams = streamsOf(loop);
  if (copies.streams.size() != streams.size())
    return std::nullopt;
  for (auto [mine, theirs] : llvm::zip(streams, copies.streams)) {
    if (mine.bytes != theirs.bytes || mine.swizzled != theirs.swizzled || mine.innerIsK != theirs.innerIsK ||
        mine.k != theirs.k || tile::LoadOp(mine.load).getNumRowPieces() != theirs.load.getNumRowPieces())
      return std::nullopt;
    theirs.offset = mine.offset;
  }
  // Its bounds and the offsets of its first copies are computed inside `op`'s last iteration.
  SmallVector<Value> leaves = {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  for (Stream &s : copies.streams)
    for (Value o : s.load.getOffsets())
      outsideLeaves(o, loop, leaves);
  if (!llvm::all_of(leaves, [&](Value v) { return definedBefore(v, op) && scalars.contains(v); }))
    return std::nullopt;
  if (ring.produced) // the producer warpgroup issues its copies too, reading the views by TMA
    return producerCanIssue(loop) ? std::optional(std::move(copies)) : std::nullopt;
  if (!planStageCopies(copies, ring.useTma))
    return std::nullopt;
  return copies;
}

llvm::SmallPtrSet<Operation *, 2> KernelLowering::dotsWithZeroFirstA(scf::ForOp op) {
  llvm::SmallPtrSet<Operation *, 2> dots;
  if (!tile::getSchedule(func).getPeelZeroFirst())
    return dots;
  auto carriedArg = [&](Value v) -> BlockArgument {
    if (auto conv = v.getDefiningOp<ConvertLayoutOp>(); conv && conv->getBlock() == op.getBody())
      v = conv.getSrc();
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == op.getBody() && arg.getArgNumber() > 0 ? arg : BlockArgument();
  };
  for (Operation &inner : op.getBody()->without_terminator()) {
    auto dot = dyn_cast<tile::DotOp>(inner);
    if (!dot || !runsOnWgmma(dot) || !carriedArg(dot.getC()))
      continue;
    BlockArgument a = carriedArg(dot.getA());
    if (!a)
      continue;
    Value init = op.getInitArgs()[a.getArgNumber() - 1];
    while (auto conv = init.getDefiningOp<ConvertLayoutOp>())
      init = conv.getSrc();
    DenseElementsAttr zeros;
    if (matchPattern(init, m_Constant(&zeros)) && zeros.isSplat())
      if (auto f = dyn_cast<FloatAttr>(zeros.getSplatValue<Attribute>()); f && f.getValue().isZero())
        dots.insert(dot);
  }
  return dots;
}


LogicalResult KernelLowering::lowerStreamedLoop(scf::ForOp op, MutableArrayRef<Stream> streams,
                                                Operation *prologueAt) {
  OpBuilder::InsertPoint loopAt = b.saveInsertionPoint();
  b.setInsertionPoint(prologueAt);
  Value lb = scalars.lookup(op.getLowerBound()), ub = scalars.lookup(op.getUpperBound()),
        step = scalars.lookup(op.getStep());
  StreamRing ring;
  StageCopies copies;
  Value first; // ring index of this loop's first iteration
  int stages;
  Operation *previousHandback = nullptr; // the continued loop's turn hand-back (ping-pong), if any
  auto waitEmptyOf = [&](Value stage, Value use) {
    return [this, &ring, stage, use] { waitReleased(ring.barriers, stage, use); };
  };
  bool continued = false, firstRing = false, crossInstance = false;
  Value noneBefore; // i1: no earlier loop continuing into this one ran an iteration (null: none before)
  if (auto it = ringContinuations.find(op); it != ringContinuations.end()) {
    continued = true;
    // The ring of the loop before: set up, its first copies issued by that loop's last iteration,
    // unless that loop ran no iteration.
    ring = it->second.ring;
    copies = std::move(it->second.copies);
    first = it->second.first;
    Value prevEmpty = it->second.prevEmpty;
    noneBefore = it->second.noneBefore;
    previousHandback = it->second.handback;
    ringContinuations.erase(it);
    for (auto [s, planned] : llvm::zip(streams, copies.streams))
      s.offset = planned.offset;
    stages = ring.barriers.stages;
    if (ring.produced) {
      producerLoops.push_back({op, SmallVector<Stream>(streams.begin(), streams.end()), ring, /*fresh=*/false});
    } else {
      Value due =
          arith::AndIOp::create(b, loc, prevEmpty, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub));
      // Carried across instances: unless the instance before issued them (no earlier loop ran).
      if (crossInstanceFirst) {
        crossInstance = true;
        due = arith::AndIOp::create(b, loc, due,
                                    notI1(arith::AndIOp::create(b, loc, crossInstanceFirst, it->second.noneBefore)));
      }
      ifThen(due, [&] {
        Value stage = arith::RemUIOp::create(b, loc, first, i32(stages));
        issueStage(ring, copies, lb, stage, waitEmptyOf(stage, arith::SubIOp::create(b, loc, first, i32(stages))));
      });
    }
  } else {
    // A swizzle atom (8 rows of 128 bytes) must sit at a 1024-byte aligned address: the hardware
    // swizzles address bits 4-6 with bits 7-9.
    const bool anySwizzled = llvm::any_of(streams, [](const Stream &s) { return s.swizzled; });
    const int64_t kAlign = anySwizzled ? 1024 : 128;
    for (Stream &s : streams) {
      s.offset = ring.stageBytes;
      ring.stageBytes = alignUp(ring.stageBytes + s.bytes, kAlign);
    }
    // Three stages when they fit beside what the kernel already uses and what the body will stage
    // (the two warpgroups may then be a whole iteration apart), else two.
    const int64_t used = areas.beforeRings() + kReservedSharedBytes + bytesStagedByBody(op);
    stages = used + kStreamStages * ring.stageBytes <= maxSharedBytes ? kStreamStages : 2;
    // The ring: `stages` stages, then a `full` and an `empty` mbarrier per stage.
    const int64_t barriersAt = stages * ring.stageBytes, bytes = barriersAt + BarrierRing::bytesFor(stages);
    firstRing = areas.rings.bytes == 0; // no loop before this one used the ring area
    areas.rings.grow(bytes, op.getLoc());
    noteRing(ring.stageBytes, stages, barriersAt);
    ring.base = areas.rings.base();
    ring.barriersAt = barriersAt;
    ring.barriers = {arith::AddIOp::create(b, loc, ring.base, i32(barriersAt)), stages};
    // TMA (TensorMaps.cpp): when every stream lands in swizzled panels and reads a view the host can
    // describe, thread 0 copies each stage with one tensor-map copy per panel and `full` counts the
    // bytes; launches whose maps could not be encoded copy element by element (a run-time choice).
    // (With TMA there is no cp.async path: maps fail to encode only where cp.async would fail too.)
    copies.loop = op;
    copies.streams.assign(streams.begin(), streams.end());
    bool allMapped = llvm::all_of(streams, [&](Stream &s) { return s.swizzled && planTensorMap(s.load); });
    if (allMapped) {
      ring.useTma = tensorMapsUsable();
      for (Stream &s : streams)
        ring.tmaBytes += s.bytes;
    }
    // The producer warpgroup fills the stages of loops marked tgpu.producer_issued (ProducerWarpgroup.cpp).
    ring.produced = ring.useTma && producerCanIssue(op);
    first = i32(0);
  }
  if (!continued && ring.produced && firstRing) {
    // The kernel's first ring, filled by the producer: it initialises the barriers at the kernel's
    // start and starts copying at once; the consumers wait for the initialisation before their
    // first use (named barrier kRingReady, which the producer only arrives at). In a persistent
    // kernel that is before the first instance, and the ring index runs on across instances.
    waitForProducerInit();
    if (persistent) {
      ring.carried = true;
      first = tileLoop.carried;
    }
    ProducerLoop p{op, SmallVector<Stream>(streams.begin(), streams.end()), ring, /*fresh=*/true};
    p.producerInit = true;
    producerLoops.push_back(std::move(p));
  } else if (!continued && firstRing && crossInstanceRing(op, streams, ring)) {
    // A persistent kernel's loops on one ring filled by the consumers through TMA: after the
    // instance's last loop thread 0 issues the next instance's first copies into stage 0
    // (issueNextInstanceFirst), so that they travel during the last P V and the epilogue instead
    // of after them. Every instance numbers the ring from 0 on fresh barriers, as any fresh ring
    // (its loop's code unchanged: NOTES a61, a62): its own first copy and stage 0's barriers only in
    // the CTA's first turn, the other stages' barriers here.
    consumersSetUpState = true;
    crossInstance = true;
    crossInstanceFirst = arith::AndIOp::create(
        b, loc, ring.useTma,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, tileLoop.turn, i32(0)));
    first = i32(0);
    barrier(); // the previous instance is done with the ring
    ifThen(isThreadZero(), [&] {
      ifThen(notI1(crossInstanceFirst), [&] { initStageBarriers(ring.barriers, i32(0), i32(1), numWarps); });
      initRingBarriers(ring.barriers, i32(1), numWarps, /*fence=*/true, /*fromStage=*/1);
    });
    barrier();
    (void)planStageCopies(copies, ring.useTma);
    Value own = arith::AndIOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub),
                                      notI1(crossInstanceFirst));
    ifThen(own, [&] { issueStage(ring, copies, lb, i32(0), {}); });
  } else if (!continued) {
    if (crossInstanceFirst)
      return op.emitOpError("internal error: a loop after one whose ring runs across program instances does not "
                            "continue that ring");
    consumersSetUpState = true;
    // Fresh barriers for this loop: every copying thread's copies (or one thread's expect-tx and the
    // bytes of its TMA copies) complete `full`, every warp's last read of the stage completes `empty`.
    const int64_t numThreads = static_cast<int64_t>(ring.produced ? 4 : numWarps) * kWarpSize;
    Value fullCount = i32(numThreads);
    if (ring.useTma)
      fullCount = arith::SelectOp::create(b, loc, ring.useTma, i32(1), fullCount);
    barrier(); // an earlier loop is done with the ring
    ifThen(isThreadZero(),
           [&] { initRingBarriers(ring.barriers, fullCount, numWarps, /*fence=*/static_cast<bool>(ring.useTma)); });
    if (ring.produced) {
      gpu::BarrierOp::create(b, loc); // the whole CTA: the producer waits here for the barriers
      producerLoops.push_back({op, SmallVector<Stream>(streams.begin(), streams.end()), ring, /*fresh=*/true});
    } else {
      barrier();
      // One run-time check for all copies of the loop (cp.async where the rows are 16-byte aligned),
      // or the loads' tensor-map reads.
      (void)planStageCopies(copies, ring.useTma);
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub),
             [&] { issueStage(ring, copies, lb, i32(0), {}); });
    }
  }
  // The loop after this one may continue the ring: this loop's last iteration then issues its first
  // copies, and it needs no barriers or set-up of its own.
  std::optional<StageCopies> successor = matchRingContinuation(op, ring, streams);
  Value count = successor ? tripCount(lb, ub, step) : Value(); // this loop's iterations
  b.restoreInsertionPoint(loopAt);

  // Ping-pong (see the loop body): warpgroup 0 takes the first turn.
  pingPongOps.clear();
  const int warpgroups = numWarps / 4;
  Operation *firstTurn = nullptr;
  if (pingPongEnabled && warpgroups == 2)
    firstTurn = giveFirstTurn();
  // With #tile.schedule<peel_zero_first = true>: dots whose A operand enters the loop as zeros (an overlapped
  // attention loop's P V: P of the block before the first) multiply nothing in the first iteration,
  // which is peeled off without them, so that the loop's own body keeps no guard (NOTES a30, a51).
  llvm::SmallPtrSet<Operation *, 2> zeroFirst = dotsWithZeroFirstA(op);
  const int barriersBefore = barriersEmitted;
  // One iteration of the body at `iv`, the carried values bound to `carried` (lowered, flattened),
  // the dots of `skipped` left out (each result is its accumulator); the lowered yield.
  auto emitIteration = [&](Value iv, ValueRange carried,
                           const llvm::SmallPtrSetImpl<Operation *> &skipped) -> FailureOr<SmallVector<Value>> {
    scalars.map(op.getInductionVar(), iv);
    unflatten(op.getRegionIterArgs(), carried);
    // i: this iteration's index in the ring's sequence (continued from an earlier loop's).
    Value i = arith::AddIOp::create(b, loc, first,
                                    arith::DivSIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lb), step));
    // Refill, unless the producer warpgroup copies (ProducerWarpgroup.cpp): ring index i + 1 goes to
    // stage (i + 1) % stages, last read by ring index i + 1 - stages; after this loop's last
    // iteration, the first of the loop that continues the ring.
    if (!ring.produced) {
      Value next = arith::AddIOp::create(b, loc, iv, step);
      Value nextStage = arith::RemUIOp::create(b, loc, arith::AddIOp::create(b, loc, i, i32(1)), i32(stages));
      Value previousUse = arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, i, i32(1)), i32(stages));
      Value hasNext = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, ub);
      const bool sameViews =
          successor && llvm::all_of(llvm::zip(copies.streams, successor->streams), [](auto pair) {
            return std::get<0>(pair).load.getView() == std::get<1>(pair).load.getView();
          });
      // The continuing loop's first iteration (when it has one).
      scf::ForOp loop = successor ? successor->loop : scf::ForOp();
      Value lb2 = loop ? scalars.lookup(loop.getLowerBound()) : Value();
      Value successorDue =
          loop ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb2, scalars.lookup(loop.getUpperBound()))
                     .getResult()
               : Value();
      if (sameViews) {
        // One issue for both cases, reading the same views: this loop's next block, else (after its last
        // iteration) the continuing loop's first.
        ifThen(arith::OrIOp::create(b, loc, hasNext, successorDue), [&] {
          Value aligned = copies.aligned ? arith::SelectOp::create(b, loc, hasNext, copies.aligned, successor->aligned).getResult()
                                         : Value();
          Value valid = ring.useTma ? Value() : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
          issueStage(ring, copies, nextStage, valid, aligned, [&](size_t idx) {
            DenseMap<Value, Value> memo, memo2;
            SmallVector<Value> mine = loadOffsetsAt(copies.streams[idx].load, op, next, memo);
            SmallVector<Value> theirs = loadOffsetsAt(successor->streams[idx].load, loop, lb2, memo2);
            SmallVector<Value> offsets;
            for (auto [x, y] : llvm::zip(mine, theirs))
              offsets.push_back(arith::SelectOp::create(b, loc, hasNext, x, y));
            return offsets;
          }, waitEmptyOf(nextStage, previousUse));
        });
      } else {
        std::function<void()> issueSuccessor;
        if (successor)
          issueSuccessor = [&] {
            ifThen(successorDue,
                   [&] { issueStage(ring, *successor, lb2, nextStage, waitEmptyOf(nextStage, previousUse)); });
          };
        ifThen(hasNext, [&] { issueStage(ring, copies, next, nextStage, waitEmptyOf(nextStage, previousUse)); },
               issueSuccessor);
      }
    }
    // This iteration's stage has landed (every thread's copies), visible to wgmma's async proxy.
    Value stage = arith::RemUIOp::create(b, loc, i, i32(stages));
    waitForUse(ring.barriers, ringBarrier(ring.barriers, stage, false), i);
    // cp.async writes through the generic proxy: made visible to wgmma's async proxy here. TMA writes
    // through the async proxy already, and its element-wise fallback fences on the writer's side.
    if (!ring.useTma)
      fenceAsyncProxy();
    Value current =
        arith::AddIOp::create(b, loc, ring.base, arith::MulIOp::create(b, loc, stage, i32(ring.stageBytes)));
    for (Stream &s : streams) {
      Value at = arith::AddIOp::create(b, loc, current, i32(s.offset));
      smemOperands[s.operand] = {at, /*nMajor=*/!s.innerIsK, s.swizzled};
      if (s.twin)
        smemOperands[s.twin] = {at, s.twinNMajor, s.swizzled};
      streamedOps.insert(s.load);
      for (Operation *first : s.load->getUsers())
        for (Operation *user = first; !isa<tile::DotOp>(user); user = *user->getUsers().begin())
          streamedOps.insert(user);
    }
    // Ping-pong: with two warpgroups, each issues its MMAs of the iteration in turn (named barriers
    // 1 and 2), so that one warpgroup's softmax runs while the other's MMAs occupy the tensor cores.
    Operation *firstDot = nullptr, *lastDot = nullptr;
    for (Operation &inner : op.getBody()->without_terminator())
      if (auto dot = dyn_cast<tile::DotOp>(inner); dot && runsOnWgmma(dot)) {
        firstDot = firstDot ? firstDot : dot.getOperation();
        lastDot = dot;
      }
    const bool pingPong = pingPongEnabled && numWarps == 8 && firstDot;
    Value group = warpgroupId();
    inStreamedLoop = true;
    // Without the turn, only the warpgroup's own P V product hides its softmax: its wait is pinned
    // after the softmax (+1-5% at head dim 256; with ping-pong level at 128, -6% at 64: NOTES a35).
    pinLastDotWait = !pingPong;
    prepareEarlyReleases(op, iv);
    for (Operation &inner : op.getBody()->without_terminator()) {
      if (streamedOps.contains(&inner))
        continue;
      if (pingPong && &inner == firstDot) // my turn: named barrier 1 + g
        pingPongOps.push_back(NamedBarrierSyncOp::create(b, loc, arith::AddIOp::create(b, loc, group, i32(1)),
                                                      i32(2 * 128)));
      if (skipped.contains(&inner))
        regs[inner.getResult(0)] = SmallVector<Value>(regs.lookup(cast<tile::DotOp>(inner).getC()));
      else if (failed(lowerOp(&inner)))
        return failure();
      if (pingPong && &inner == lastDot) // the other warpgroup's turn: named barrier 2 - g
        pingPongOps.push_back(NamedBarrierArriveOp::create(b, loc, arith::SubIOp::create(b, loc, i32(2), group),
                                                            i32(2 * 128)));
    }
    inStreamedLoop = false;
    pinLastDotWait = false;
    auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
    // The dots reading the stage are done in this warp (wgmma waits are warpgroup-wide): release it.
    waitForDots();
    releaseAfterDot.clear(); // releases not emitted stay after the loops (EarlyRelease::inLoop)
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, laneId, i32(0)), [&] {
      MBarrierArriveOp::create(b, loc, ringBarrier(ring.barriers, stage, true));
    });
    return flatten(yield.getOperands());
  };
  SmallVector<Value> inits = flatten(op.getInitArgs());
  Value loopLb = lb;
  if (!zeroFirst.empty()) {
    auto peeled = scf::IfOp::create(b, loc, ValueRange(inits).getTypes(),
                                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub),
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&peeled.getThenRegion().front());
      FailureOr<SmallVector<Value>> out = emitIteration(lb, inits, zeroFirst);
      if (failed(out))
        return failure();
      scf::YieldOp::create(b, loc, *out);
      b.setInsertionPointToStart(&peeled.getElseRegion().front());
      scf::YieldOp::create(b, loc, inits);
    }
    inits.assign(peeled.getResults().begin(), peeled.getResults().end());
    loopLb = arith::AddIOp::create(b, loc, lb, step);
  }
  auto newFor = scf::ForOp::create(b, loc, loopLb, ub, step, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    enterLoopBody(newFor);
    FailureOr<SmallVector<Value>> out =
        emitIteration(newFor.getInductionVar(), newFor.getRegionIterArgs(), llvm::SmallPtrSet<Operation *, 1>());
    if (failed(out))
      return failure();
    scf::YieldOp::create(b, loc, *out);
  }
  // Another CTA-wide barrier inside the turn would deadlock: no ping-pong then.
  if (barriersEmitted != barriersBefore) {
    for (Operation *pp : pingPongOps)
      pp->erase();
    pingPongOps.clear();
  }
  Operation *handback = nullptr;
  if (pingPongOps.empty()) {
    if (firstTurn)
      firstTurn->erase();
  } else if (previousHandback) {
    // Continuing a ring whose loop took turns too: no CTA barrier separates the loops, so warpgroup 1
    // could give this loop's first turn before warpgroup 0 took back the earlier loop's, and named
    // barrier 1 would count both of warpgroup 1's arrivals as one completion (a deadlock). The turn
    // passes from the earlier loop to this one instead: neither the hand-back nor the first turn.
    previousHandback->erase();
    firstTurn->erase();
  }
  if (!pingPongOps.empty()) {
    // The turn warpgroup 1 gave before the loop is still open: warpgroup 0 takes it back.
    handback = takeTurnBack();
    // A persistent kernel may pass the turn on from one instance to the next (endTileLoop).
    if (persistent) {
      handback->setAttr(kTurnAttrName, b.getUnitAttr());
      if (firstTurn && !previousHandback)
        firstTurn->setAttr(kTurnAttrName, b.getUnitAttr());
    }
  }
  for (Stream &s : streams) {
    smemOperands.erase(s.operand);
    smemOperands.erase(s.twin);
  }
  unflatten(op.getResults(), newFor.getResults());
  if (ring.carried)
    tileRingNext = arith::AddIOp::create(b, loc, first, tripCount(lb, ub, step));
  if (crossInstance && !successor)
    issueNextInstanceFirst(ring, arith::AddIOp::create(b, loc, first, tripCount(lb, ub, step)));
  if (successor) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologueAt);
    Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count, i32(0));
    Value successorFirst = arith::AddIOp::create(b, loc, first, count);
    Value none = noneBefore ? arith::AndIOp::create(b, loc, noneBefore, empty).getResult() : empty;
    ringContinuations[successor->loop] = {ring, std::move(*successor), successorFirst, empty, handback, none};
  }
  return success();
}

} // namespace flare::tgpu::lowering
