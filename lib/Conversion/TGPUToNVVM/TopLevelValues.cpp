//===- TopLevelValues.cpp - The kernel's top-level values, lowered where else they are needed ===//
//
// See TopLevelValues.h.
//
//===----------------------------------------------------------------------===//
#include "TopLevelValues.h"

namespace flare::tgpu::lowering {

void TopLevelValues::produceValue(Value v) {
  if (isa<BlockArgument>(v) || scalars.contains(v) || views.count(v))
    return;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    produceValue(operand);
  (void)lowerOp(def); // scalar arithmetic, program ids, pointers and views: nothing that can fail
}

void TopLevelValues::inInstanceScope(Value turn, llvm::function_ref<void()> body) {
  inInstanceScope(instanceAt(turn), body);
}

void TopLevelValues::inInstanceScope(const TileSchedule::Instance &other, llvm::function_ref<void()> body) {
  ScalarScope instanceScope = freshScalarScope();
  swapScalarScope(instanceScope);
  TileSchedule::Instance saved = instance;
  Location savedLoc = loc;
  instance = other;
  body();
  instance = saved;
  loc = savedLoc;
  swapScalarScope(instanceScope);
}

Value TopLevelValues::exitsInstance(Value index) {
  TileSchedule::Instance taken;
  taken.pids = TileSchedule::pidsOf(b, loc, instanceGrid, index);
  Value any;
  inInstanceScope(taken, [&] {
    for (tile::ExitIfOp exit : instanceExits) {
      Value condition = exit.getCondition();
      produceValue(condition);
      Value holds = scalars.lookup(condition);
      any = any ? arith::OrIOp::create(b, loc, any, holds).getResult() : holds;
    }
  });
  return any;
}

TileLoop TopLevelValues::beginTileLoop(bool producer) {
  auto splitSteps = [&] {
    produceValue(splitRange.getSteps());
    return scalars.lookup(splitRange.getSteps());
  };
  auto exits = [&](Value index) { return exitsInstance(index); };
  return openTileLoop(producer, splitSteps,
                      instanceExits.empty() ? llvm::function_ref<Value(Value)>() : llvm::function_ref<Value(Value)>(exits));
}

} // namespace flare::tgpu::lowering
