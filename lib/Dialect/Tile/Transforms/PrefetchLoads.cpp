//===- PrefetchLoads.cpp - Double-buffer loop loads in registers ----------===//
//
// Outline, per scf.for of a tile kernel (innermost loops first):
//   1. Candidates: tile.load ops directly in the body whose operands are computable from the induction
//      variable and loop-invariant values through pure arith ops of the body (the address chain).
//   2. Clone each candidate's chain before the loop with iv := lower bound: the first tiles.
//   3. Add them as iteration arguments; the old loads' results are replaced by those arguments.
//   4. At the top of the body, clone the chains with iv := iv + step and yield the new tiles.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/Tile/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace flare::tile {
#define GEN_PASS_DEF_TILEPREFETCHLOADS
#include "Tile/Passes.h.inc"
} // namespace flare::tile

using namespace mlir;
using namespace flare::tile;

namespace {

/// True when `v` can be recomputed for another iteration: defined outside `loop`, the induction
/// variable, or a pure arith op of the body over such values.
bool isAddressChain(Value v, scf::ForOp loop) {
  if (v == loop.getInductionVar())
    return true;
  if (loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || !isa<arith::ArithDialect>(def->getDialect()) ||
      !isPure(def) || def->getNumRegions() != 0)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) { return isAddressChain(o, loop); });
}

/// Clones `op` and the body ops its operands need (not already in `map`) at the builder's point.
Value cloneChain(OpBuilder &b, Operation *op, IRMapping &map, scf::ForOp loop) {
  for (Value operand : op->getOperands()) {
    if (map.contains(operand) || loop.isDefinedOutsideOfLoop(operand))
      continue;
    cloneChain(b, operand.getDefiningOp(), map, loop);
  }
  return b.clone(*op, map)->getResult(0);
}

void prefetch(scf::ForOp loop, int threads, int maxBytesPerThread) {
  SmallVector<LoadOp> loads;
  int64_t bytes = 0;
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto load = dyn_cast<LoadOp>(op))
      if (llvm::all_of(load->getOperands(), [&](Value v) { return isAddressChain(v, loop); })) {
        auto type = load.getResult().getType();
        int64_t perThread = type.getNumElements() * type.getElementTypeBitWidth() / 8 / threads;
        if (bytes + perThread > maxBytesPerThread)
          break;
        bytes += perThread;
        loads.push_back(load);
      }
  if (loads.empty())
    return;

  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> firsts;
  for (LoadOp load : loads) {
    IRMapping first;
    first.map(loop.getInductionVar(), loop.getLowerBound());
    firsts.push_back(cloneChain(rewriter, load, first, loop));
  }
  Operation *firstBodyOp = &loop.getBody()->front();
  SmallVector<Operation *> created;
  auto yields = [&](OpBuilder &b, Location loc, ArrayRef<BlockArgument>) {
    // The next iteration's tiles, computed at the top of the body so their latency overlaps it.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(firstBodyOp);
    Value next = arith::AddIOp::create(b, loc, firstBodyOp->getBlock()->getArgument(0), loop.getStep());
    SmallVector<Value> values;
    for (LoadOp load : loads) {
      IRMapping map;
      map.map(loop.getInductionVar(), next);
      values.push_back(cloneChain(b, load, map, loop));
    }
    return values;
  };
  FailureOr<LoopLikeOpInterface> replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(rewriter, firsts, /*replaceInitOperandUsesInLoop=*/false, yields);
  if (failed(replaced))
    return;
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  auto args = newLoop.getRegionIterArgs().take_back(loads.size());
  for (auto [load, arg] : llvm::zip(loads, args)) {
    load.getResult().replaceAllUsesWith(arg);
    load.erase();
  }
}

struct PrefetchLoadsPass : public flare::tile::impl::TilePrefetchLoadsBase<PrefetchLoadsPass> {
  using TilePrefetchLoadsBase::TilePrefetchLoadsBase;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernel(func))
        continue;
      SmallVector<scf::ForOp> loops;
      func.walk([&](scf::ForOp loop) { loops.push_back(loop); }); // post-order: innermost first
      for (scf::ForOp loop : loops)
        prefetch(loop, getNumWarps(func) * 32, maxBytesPerThread);
    }
  }
};

} // namespace
