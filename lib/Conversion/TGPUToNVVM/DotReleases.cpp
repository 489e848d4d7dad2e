//===- DotReleases.cpp - Waits for wgmma dots and the releases after them -===//
//
// DotReleases.h: the releases of produced operands (at their read, after their last reader, after
// the dot of the instance's last iteration that reads them) and the waits for dots in flight.
//
//===----------------------------------------------------------------------===//
#include "DotReleases.h"

namespace flare::tgpu::lowering {

void DotReleases::releaseAtRead(Value operand, TmaOperand &tma) {
  // Every lane of the warp holds its fragments: lane 0 releases the buffer for the producer's copy
  // of the next instance's block, instead of the release after the instance's last product.
  NVVM::SyncWarpOp::create(b, loc, i32(-1));
  arriveFromLane0(tma.empty);
  earlyReleases.erase(operand);
  for (auto &entry : releaseAfter)
    llvm::erase(entry.second, operand);
}

void DotReleases::releaseAfterOp(Operation *op) {
  // Produced operands whose last reader this was: each consumer warp releases them (its dots that
  // read them are done) for the producer's next copy.
  auto it = releaseAfter.find(op);
  if (it == releaseAfter.end())
    return;
  if (auto dot = dyn_cast<tile::DotOp>(op))
    waitForDots(dot.getResult());
  for (Value v : it->second) {
    // Unless a loop released it already: loop j did when it ran and no later loop did.
    Value unreleased;
    if (auto early = earlyReleases.find(v); early != earlyReleases.end())
      for (size_t j = 0; j < early->second.loops.size(); ++j) {
        if (!early->second.inLoop[j])
          continue;
        Value released =
            arith::AndIOp::create(b, loc, loopRuns(early->second.loops[j]), laterLoopsIdle(early->second, j));
        unreleased = unreleased ? arith::AndIOp::create(b, loc, unreleased, notI1(released)).getResult()
                                : notI1(released);
      }
    arriveFromLane0(tmaOperands[v].empty, unreleased);
  }
  for (Value v : it->second)
    if (tmaOperands[v].issue >= 0)
      issueNextInstance(tmaOperands[v]);
}

Value DotReleases::loopRuns(scf::ForOp loop) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, scalars.lookup(loop.getLowerBound()),
                               scalars.lookup(loop.getUpperBound()));
}

Value DotReleases::laterLoopsIdle(const EarlyRelease &early, size_t j) {
  Value idle = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (size_t m = j + 1; m < early.loops.size(); ++m)
    idle = arith::AndIOp::create(b, loc, idle, notI1(loopRuns(early.loops[m])));
  return idle;
}

SmallVector<tile::DotOp> DotReleases::dotsReading(scf::ForOp loop, Value operand) {
  SmallVector<tile::DotOp> dots;
  loop.getBody()->walk([&](tile::DotOp dot) {
    Value a = dot.getA();
    if (auto conv = a.getDefiningOp<ConvertLayoutOp>())
      a = conv.getSrc();
    if (a == operand)
      dots.push_back(dot);
  });
  return dots;
}

void DotReleases::prepareEarlyReleases(scf::ForOp op, Value iv) {
  for (auto &[operand, early] : earlyReleases) {
    auto at = llvm::find(early.loops, op);
    if (at == early.loops.end())
      continue;
    const size_t j = at - early.loops.begin();
    // The instance's last product reading the operand: this loop's last iteration, no later loop runs.
    Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       arith::AddIOp::create(b, loc, iv, scalars.lookup(op.getStep())),
                                       scalars.lookup(op.getUpperBound()));
    Value cond = arith::AndIOp::create(b, loc, last, laterLoopsIdle(early, j));
    for (tile::DotOp dot : dotsReading(op, operand))
      releaseAfterDot[dot.getResult()] = {operand, j, cond};
  }
}

Value DotReleases::pinAnchor() {
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

void DotReleases::waitForDots(Value v) {
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

} // namespace flare::tgpu::lowering
