//===- VersionGathers.cpp - Clamped affine gathers read unclamped where in range ===//
//
// tile-version-gathers (see Passes.td): a gather of clamp(x) with x affine and its one elementwise
// use become an scf.if on whether the tile's x lies inside the clamp's bounds, the then-branch
// gathering x itself.
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

void version(GatherOp gather, Operation *use, const ClampedAffine &clamped) {
  OpBuilder b(use);
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
  auto branch = scf::IfOp::create(b, loc, use->getResultTypes(), inside, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    IRMapping inRange;
    inRange.map(gather.getResult(),
                GatherOp::create(b, loc, gather.getType(), gather.getBase(), clamped.x).getResult());
    scf::YieldOp::create(b, loc, b.clone(*use, inRange)->getResult(0));
    b.setInsertionPointToStart(branch.elseBlock());
    for (Operation *op : clamp)
      op->moveBefore(branch.elseBlock(), branch.elseBlock()->end());
    gather->moveBefore(branch.elseBlock(), branch.elseBlock()->end());
    gather.setBoundsCrossing(true);
    b.setInsertionPointToEnd(branch.elseBlock());
    Operation *clampedUse = b.clone(*use);
    scf::YieldOp::create(b, loc, clampedUse->getResult(0));
  }
  use->getResult(0).replaceAllUsesWith(branch.getResult(0));
  use->erase();
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
        if (Operation *use = clamped ? elementwiseUse(gather) : nullptr)
          work.emplace_back(gather, use, *clamped);
      });
    });
    for (auto &[gather, use, clamped] : work)
      version(gather, use, clamped);
  }
};

} // namespace
