//===- GuardLoopSteps.cpp - Loops with a non-positive run-time step end at once ===//
//
// tile-guard-loop-steps (see Passes.td): for every scf.for of a tile kernel whose step is not a
// constant, ub' = (step > 0) ? ub : lb, so that a zero or negative step runs no iteration instead of
// never ending.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/Tile/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace flare::tile {
#define GEN_PASS_DEF_TILEGUARDLOOPSTEPS
#include "Tile/Passes.h.inc"
} // namespace flare::tile

using namespace mlir;

namespace {

struct TileGuardLoopStepsPass : public flare::tile::impl::TileGuardLoopStepsBase<TileGuardLoopStepsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      if (!flare::tile::isKernel(func))
        return;
      func.walk([](scf::ForOp loop) {
        if (getConstantIntValue(loop.getStep()))
          return;
        OpBuilder b(loop);
        Location loc = loop.getLoc();
        Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(loop.getStep().getType()));
        Value positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, loop.getStep(), zero);
        Value end = arith::SelectOp::create(b, loc, positive, loop.getUpperBound(), loop.getLowerBound());
        loop.getUpperBoundMutable().assign(end);
      });
    });
  }
};

} // namespace
