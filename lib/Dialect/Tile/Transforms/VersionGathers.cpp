//===- VersionGathers.cpp - Clamped affine gathers read unclamped where in range ===//
//
// tile-version-gathers (see Passes.td): a gather of clamp(x) with x affine and its one elementwise
// use (or, inside a loop, the gather alone) become an scf.if on whether the tile's x lies inside the
// clamp's bounds, the then-branch gathering x itself.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/Tile/AffineTile.h"
#include "flare/Dialect/Tile/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace flare::tile {
#define GEN_PASS_DEF_TILEVERSIONGATHERS
#include "Tile/Passes.h.inc"
} // namespace flare::tile

using namespace mlir;
using namespace flare::tile;

namespace {

/// The one use of `gather` when it is an elementwise op of one tile result later in the same block,
/// with nothing between them that may write memory.
Operation *elementwiseUse(GatherOp gather) {
  if (!gather->hasOneUse())
    return nullptr;
  Operation *use = *gather->getUsers().begin();
  if (use->getBlock() != gather->getBlock() || use->getNumResults() != 1 ||
      !use->hasTrait<OpTrait::Elementwise>() || !isa<RankedTensorType>(use->getResult(0).getType()) ||
      use->getNumRegions() != 0)
    return nullptr;
  for (Operation *op = gather->getNextNode(); op != use; op = op->getNextNode()) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (op->getNumRegions() || (effects ? effects.hasEffect<MemoryEffects::Write>() : !isPure(op)))
      return nullptr;
  }
  return use;
}

/// The clamp's ops, moved into the else-branch when nothing else reads them.
SmallVector<Operation *> clampOps(GatherOp gather, const ClampedAffine &clamped) {
  Operation *outer = gather.getOffsets().getDefiningOp();
  if (clamped.inner->hasOneUse() && outer->hasOneUse() && clamped.inner->getBlock() == gather->getBlock() &&
      outer->getBlock() == gather->getBlock())
    return {clamped.inner, outer};
  return {};
}

/// Moves `op` up its block to just after the last op it needs: the definitions of the values it
/// (or an op in its regions) reads, each moved up first where it is pure, and, unless `op` is pure,
/// any op that may write memory.
void hoist(Operation *op) {
  Block *block = op->getBlock();
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(op->getRegions(), used);
  used.insert(op->getOperands().begin(), op->getOperands().end());
  Operation *after = nullptr;
  auto later = [&](Operation *candidate) {
    if (!after || after->isBeforeInBlock(candidate))
      after = candidate;
  };
  for (Value v : used) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != block)
      continue;
    if (isPure(def) && def->getNumRegions() == 0)
      hoist(def);
    later(def);
  }
  if (!isPure(op))
    for (Operation &other : *block) {
      if (&other == op)
        break;
      auto effects = dyn_cast<MemoryEffectOpInterface>(&other);
      if (other.getNumRegions() || (effects ? effects.hasEffect<MemoryEffects::Write>() : !isPure(&other)))
        later(&other);
    }
  if (after)
    op->moveAfter(after);
  else
    op->moveBefore(&block->front());
}

/// Versions `gather` and `use` (its one elementwise use), or with `use` null the gather alone.
void version(GatherOp gather, Operation *use, const ClampedAffine &clamped) {
  OpBuilder b(use ? use : gather.getOperation());
  Location loc = gather.getLoc();
  Type i64 = b.getI64Type();
  auto [lowest, highest] = emitValueRange(b, loc, clamped.affine, cast<RankedTensorType>(clamped.x.getType()).getShape(),
                                         [](Value s) { return s; });
  auto bound = [&](const UniformBound &bd) {
    return bd.scalar ? arith::ExtSIOp::create(b, loc, i64, bd.scalar).getResult()
                     : arith::ConstantIntOp::create(b, loc, bd.constant, 64).getResult();
  };
  // One statement per op: the order C++ gives to arguments is the compiler's.
  Value aboveLo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lowest, bound(clamped.lo));
  Value belowHi = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, highest, bound(clamped.hi));
  Value inside = arith::AndIOp::create(b, loc, aboveLo, belowHi);

  SmallVector<Operation *> clamp = clampOps(gather, clamped);
  Operation *replaced = use ? use : gather.getOperation();
  auto branch = scf::IfOp::create(b, loc, replaced->getResultTypes(), inside, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    Value unclamped = GatherOp::create(b, loc, gather.getType(), gather.getBase(), clamped.x).getResult();
    IRMapping inRange;
    inRange.map(gather.getResult(), unclamped);
    scf::YieldOp::create(b, loc, use ? b.clone(*use, inRange)->getResult(0) : unclamped);
    b.setInsertionPointToStart(branch.elseBlock());
    for (Operation *op : clamp)
      op->moveBefore(branch.elseBlock(), branch.elseBlock()->end());
    if (!use)
      gather.getResult().replaceAllUsesWith(branch.getResult(0));
    gather->moveBefore(branch.elseBlock(), branch.elseBlock()->end());
    gather.setBoundsCrossing(true);
    b.setInsertionPointToEnd(branch.elseBlock());
    scf::YieldOp::create(b, loc, use ? b.clone(*use)->getResult(0) : Value(gather.getResult()));
  }
  if (use) {
    use->getResult(0).replaceAllUsesWith(branch.getResult(0));
    use->erase();
    return;
  }
  // A gather alone needs nothing of its step's products: it is read first, so that its loads
  // travel during the step's copies and products, and no product is in flight in its branches
  // (in-flight accumulators keep their registers: 64 bytes of spills at head dim 128 otherwise).
  hoist(branch);
}

struct TileVersionGathersPass : public flare::tile::impl::TileVersionGathersBase<TileVersionGathersPass> {
  void runOnOperation() override {
    SmallVector<std::tuple<GatherOp, Operation *, ClampedAffine>> work;
    getOperation().walk([&](func::FuncOp func) {
      // Measured: with the consumer warpgroups taking turns the per-step branch pays (+17-38% for a
      // relative-position bias at head dims 64 and 128); without (head dims 192 and 256) it ranged
      // from +13% to -7% (bench/NOTES.md, "Gathers at affine offsets").
      if (!isKernel(func) || !getSchedule(func).getPingPong())
        return;
      func.walk([&](GatherOp gather) {
        std::optional<ClampedAffine> clamped = matchClampedAffine(gather.getOffsets());
        if (!clamped)
          return;
        // A gather whose values meet the scores through a broadcast (a document mask's key ids) is
        // versioned alone where it runs on every step of a loop whose copies a producer warpgroup
        // issues; the join carries its values. Measured (bench/NOTES.md, "The key ids of a partial
        // step"): +8-20% for document masks with block lists at head dims 64 and 128, where it
        // removes a conversion through shared memory; -13-18% in the kernel without a producer
        // that evaluates the mask on every step, whose ids were read in the scores' layout already.
        Operation *use = elementwiseUse(gather);
        if (use || (isa<scf::ForOp>(gather->getParentOp()) && getSchedule(func).getProducerWarpgroup()))
          work.emplace_back(gather, use, *clamped);
      });
    });
    for (auto &[gather, use, clamped] : work)
      version(gather, use, clamped);
  }
};

} // namespace
