//===- TmaOperands.cpp - Dot operands copied once by TMA at the kernel's top level ===//
//
// TmaOperands.h. (The tensor maps and copies: TensorMaps.cpp, BlockCopies.h.)
//
//===----------------------------------------------------------------------===//
#include "TmaOperands.h"

namespace flare::tgpu::lowering {

bool TmaOperands::loadOperandByTma(tile::LoadOp op) {
  // At the top level every thread reaches the copy, and the wait before each loop (a CTA barrier).
  if (!wgmma || op->getBlock() != &func.getBody().front() || op->use_empty())
    return false;
  if (auto pad = op.getPaddingAttr())
    if (!isa<FloatAttr>(pad) || !cast<FloatAttr>(pad).getValue().isZero())
      return false;
  // Every use is, directly or through a conversion that only feeds wgmma dots, either the A operand of
  // a dot in a top-level loop (Q: storeInvariantOperands hands those dots the panels) or the B operand
  // of a top-level dot with a loop between the load and the dot (the last V block of an overlapped
  // attention kernel, copied while the loops run: lowerDotWgmma waits for it there). B panels are
  // N-major: the block's rows run along K. A dot in a top-level loop is one in its body or, outside
  // persistent kernels (whose producer copies for top-level loops only), in loops nested in it: K and
  // V of the backward, read inside the GQA group loop.
  auto feedsLoopA = [&](OpOperand &use) {
    auto dot = dyn_cast<tile::DotOp>(use.getOwner());
    if (!dot || use.getOperandNumber() != 0 || !runsOnWgmma(dot))
      return false;
    auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
    while (loop && loop->getBlock() != op->getBlock() && !persistent)
      loop = dyn_cast<scf::ForOp>(loop->getParentOp());
    return loop && loop->getBlock() == op->getBlock();
  };
  auto feedsTopLevelB = [&](OpOperand &use) {
    auto dot = dyn_cast<tile::DotOp>(use.getOwner());
    return dot && use.getOperandNumber() == 1 && runsOnWgmma(dot) && dot->getBlock() == op->getBlock() &&
           op->isBeforeInBlock(dot) && loopAfter(op, dot);
  };
  bool asA = false, asB = false, asTransposedA = false;
  auto feeds = [&](OpOperand &use) {
    if (feedsLoopA(use))
      return asA = true;
    if (feedsTopLevelB(use))
      return asB = true;
    return false;
  };
  // Directly or through a conversion that only feeds wgmma dots.
  auto feedsThroughConversion = [&](OpOperand &use, auto &&what) {
    auto conv = dyn_cast<ConvertLayoutOp>(use.getOwner());
    if (!conv)
      return what(use);
    return feedsOnlyWgmma(conv) && llvm::all_of(conv->getUses(), what);
  };
  for (OpOperand &use : op->getUses()) {
    // A transpose read as the A operand of loops' dots (K^T of the backward's dQ^T = K^T dS^T): the
    // same panels, read M-major (storeInvariantOperands). Not in a persistent kernel, whose release of
    // the panels follows only direct readers.
    if (auto trans = dyn_cast<tile::TransOp>(use.getOwner())) {
      if (persistent || trans->use_empty() ||
          !llvm::all_of(trans->getUses(), [&](OpOperand &u) { return feedsThroughConversion(u, feedsLoopA); }))
        return false;
      asTransposedA = true;
      continue;
    }
    if (!feedsThroughConversion(use, feeds))
      return false;
  }
  // One layout of the panels for all uses; B panels, and an A read M-major, need whole 64-column
  // panels along N (M).
  auto blockType = op.getResult().getType();
  const bool wholePanels = blockType.getDimSize(1) % 64 == 0 && blockType.getDimSize(0) % 8 == 0;
  if ((asA && asB) || (asTransposedA && asB) || ((asB || asTransposedA) && !wholePanels))
    return false;
  std::optional<TensorMapPlan> plan = planTensorMap(op);
  auto view = views.find(op.getView());
  if (!plan || view == views.end() || !view->second.unitInnerStride)
    return false;
  // The panels (a swizzle atom needs a 1024-byte aligned address); the mbarrier in the operand
  // barriers' area.
  constexpr int64_t kSwizzleAlign = 1024;
  const int64_t bytes = op.getResult().getType().getNumElements() * 2;
  const int64_t offset = areas.persistentOperands.append(bytes, kSwizzleAlign, op.getLoc());
  const int64_t barrierOffset = areas.operandBarriers.append(kMBarrierBytes, /*align=*/1, op.getLoc());
  areas.persistentOperands.swizzled = true;
  TmaOperand operand;
  operand.nMajor = asB;
  operand.base = arith::AddIOp::create(b, loc, areas.persistentOperands.base(), i32(offset));
  // A one-stage ring: its `full` barrier completes once per copy (per program instance of a
  // persistent kernel whose producer copies it; once in all otherwise).
  operand.barrier = ringBarrier(operandRing(barrierOffset), i32(0), /*empty=*/false);
  Value base = operand.base, barrierPtr = operand.barrier;
  SmallVector<Value> offsets;
  for (Value o : op.getOffsets())
    offsets.push_back(scalars.lookup(o));
  TensorMapRead read = tensorMapFor(*plan);
  operand.useTma = tensorMapsUsable();
  // In a persistent kernel, when the producer warpgroup can compute the view and offsets: the
  // producer copies the block (the consumers only copy it themselves when the maps did not encode),
  // Q before the instance's loops, the last V block after them, and the consumers release it after
  // the last top-level op that reads it.
  // Without a producer warpgroup the consumers do the same: after the block's last reader, thread 0
  // waits until every warp has released it and copies the next instance's (issueNextInstance), so
  // that Q travels while they finish this one.
  operand.produced = persistent && tileLoop && producerCanCompute(op.getView()) &&
                     llvm::all_of(op.getOffsets(), [&](Value o) { return producerCanCompute(o); });
  if (operand.produced) {
    areas.operandBarriers.append(kMBarrierBytes, /*align=*/1, op.getLoc()); // `empty` after `full`
    ProducedOperand produced{op, offset, barrierOffset, bytes, *plan, /*afterLoops=*/asB};
    if (producerMode) {
      producedOperands.push_back(produced);
    } else {
      produced.coordsAt = areas.operandBarriers.append(
          alignUp(4 * static_cast<int64_t>(op.getOffsets().size() + plan->outerValues.size()), kMBarrierBytes),
          /*align=*/1, op.getLoc());
      operand.issue = static_cast<int>(consumerIssued.size());
      consumerIssued.push_back(produced);
    }
    Operation *lastReader = op;
    for (OpOperand &use : op->getUses()) {
      SmallVector<Operation *> readers; // the dots, directly or through a conversion
      if (isa<ConvertLayoutOp>(use.getOwner()))
        llvm::append_range(readers, use.getOwner()->getUsers());
      else
        readers.push_back(use.getOwner());
      for (Operation *reader : readers)
        if (Operation *at = op->getBlock()->findAncestorOpInBlock(*reader); at && lastReader->isBeforeInBlock(at))
          lastReader = at;
    }
    releaseAfter[lastReader].push_back(op.getResult());
    // Read by dots inside top-level loops whose bounds all exist before the first of them (so each
    // can tell whether a later one runs): released after the instance's last such product.
    if (isa<scf::ForOp>(lastReader)) {
      EarlyRelease early;
      for (Operation &top : *op->getBlock())
        if (auto loop = dyn_cast<scf::ForOp>(&top);
            loop && op->isBeforeInBlock(loop) && !dotsReading(loop, op.getResult()).empty())
          early.loops.push_back(loop);
      auto definedBefore = [&](Value v) {
        Operation *def = v.getDefiningOp();
        return !def || (def->getBlock() == op->getBlock() && def->isBeforeInBlock(early.loops.front()));
      };
      bool boundsKnown = !early.loops.empty() && early.loops.back() == lastReader;
      for (scf::ForOp loop : early.loops)
        boundsKnown = boundsKnown && definedBefore(loop.getLowerBound()) && definedBefore(loop.getUpperBound()) &&
                      definedBefore(loop.getStep());
      if (boundsKnown) {
        early.inLoop.assign(early.loops.size(), false);
        earlyReleases[op.getResult()] = std::move(early);
      }
    }
    operand.empty = ringBarrier(operandRing(barrierOffset), i32(0), /*empty=*/true);
    if (producerMode)
      waitForProducerInit();
    else
      beginConsumerIssued(consumerIssued.back());
    ifThen(notI1(operand.useTma), [&] {
      copyTileRolled(op, offsets, base);
      fenceAsyncProxy();
    });
    tmaOperands[op.getResult()] = operand;
    return true;
  }
  consumersSetUpState = true;
  ifThen(
      operand.useTma,
      [&] {
        ifThen(isThreadZero(), [&] {
          MBarrierInitOp::create(b, loc, barrierPtr, i32(1));
          fenceAsyncProxy(); // the initialised barrier, visible to the async proxy that completes it
          expectTx(barrierPtr, i32(bytes));
          copyBlockTma(read, offsets, base, barrierPtr);
        });
      },
      [&] {
        // Maps not encoded: every thread copies its chunks element by element and fences them for
        // wgmma's async proxy; the CTA barrier of the wait publishes them.
        copyTileRolled(op, offsets, base);
        fenceAsyncProxy();
      });
  tmaOperands[op.getResult()] = operand;
  return true;
}

void TmaOperands::waitForTmaOperand(TmaOperand &operand) {
  if (operand.waited && insertingWithin(operand.waited))
    return;
  if (operand.produced) {
    // This instance's copy (the tile loop's turn k completes `full` for the k-th time), or, without
    // maps, every consumer's own copies published by a barrier.
    ifThen(
        operand.useTma,
        [&] {
          RingWaitOp::create(b, loc, operand.barrier, tileLoop.turn, /*stages=*/1);
        },
        [&] { barrier(); });
    operand.waited = b.getInsertionBlock();
    return;
  }
  // Read inside nested loops (K and V of the backward, read in each step of the GQA group loop's
  // query loop): waited for once, before the outermost of those loops; the copy precedes it (a
  // top-level load). Waited for in each group instead, the dK/dV kernels at head dim 128 spilled
  // 12-48 bytes (bench/NOTES.md b20, b21).
  OpBuilder::InsertionGuard guard(b);
  for (Operation *loop = b.getInsertionBlock()->getParentOp(); isa<scf::ForOp>(loop);
       loop = loop->getParentOp())
    b.setInsertionPoint(loop);
  // The CTA barrier makes thread 0's barrier initialisation (TMA) or every thread's stores (the
  // fallback) visible; then the TMA bytes are waited for (phase 0: the barrier completes once).
  barrier();
  ifThen(operand.useTma,
         [&] { MBarrierWaitOp::create(b, loc, operand.barrier, i32(0)); });
  operand.waited = b.getInsertionBlock();
}

} // namespace flare::tgpu::lowering
