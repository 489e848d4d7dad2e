//===- ProducedOperands.cpp - Operands a persistent kernel copies once per instance ===//
//
// See ProducedOperands.h.
//
//===----------------------------------------------------------------------===//
#include "ProducedOperands.h"

namespace flare::tgpu::lowering {

BarrierRing ProducedOperands::operandRing(int64_t barrierAt) {
  return {operandAreaOffset(barrierAt), 1};
}

void ProducedOperands::produceOperandScalars(const ProducedOperand &o) {
  tile::LoadOp load = o.load;
  produceValue(load.getView());
  for (Value v : load.getOffsets())
    produceValue(v);
  for (Value v : o.plan.outerValues)
    produceValue(v);
}

void ProducedOperands::beginConsumerIssued(const ProducedOperand &o) {
  {
    // Before the tile loop, with the kernel's own thread values.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(tileLoop.op);
    withKernelThreadValues([&] {
      BarrierRing ring = operandRing(o.barrierAt);
      Value isThread0 = isThreadZero();
      ifThen(isThread0, [&] {
        // The barriers also without maps: the warps' releases arrive on `empty` either way.
        initRingBarriers(ring, i32(1), numWarps, /*fence=*/true);
        Value runs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, tileLoop.turns, i32(0));
        ifThen(arith::AndIOp::create(b, loc, runs, tensorMapsUsable()),
               [&] { copyOperandAt(o, coordsForTurn(o, i32(0)), ringBarrier(ring, i32(0), /*empty=*/false)); });
      });
      barrier();
    });
  }
  Value next = arith::AddIOp::create(b, loc, tileLoop.turn, i32(1));
  Value keep = arith::AndIOp::create(
      b, loc, isThreadZero(), arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, tileLoop.turns));
  ifThen(keep, [&] {
    SmallVector<Value> coords = coordsForTurn(o, next);
    for (auto [i, c] : llvm::enumerate(coords))
      LLVM::StoreOp::create(b, loc, c, coordSlot(o, static_cast<int64_t>(i)));
  });
}

Value ProducedOperands::coordSlot(const ProducedOperand &o, int64_t i) {
  return operandAreaPtr(o.coordsAt + 4 * i);
}

SmallVector<Value> ProducedOperands::coordsForTurn(const ProducedOperand &o, Value turn) {
  SmallVector<Value> coords;
  inInstanceScope(turn, [&] {
    produceOperandScalars(o);
    tile::LoadOp load = o.load;
    for (Value offset : load.getOffsets())
      coords.push_back(scalars.lookup(offset));
    llvm::append_range(coords, tensorMapFor(o.plan).outerCoords);
  });
  return coords;
}

void ProducedOperands::copyOperandAt(const ProducedOperand &o, ArrayRef<Value> coords, Value full) {
  TensorMapRead read = tensorMapFor(o.plan);
  const size_t numOffsets = tile::LoadOp(o.load).getOffsets().size(); // each row piece's, then the column
  read.outerCoords.assign(coords.begin() + numOffsets, coords.end());
  expectTx(full, i32(o.bytes));
  copyBlockTma(read, coords.take_front(numOffsets),
               arith::AddIOp::create(b, loc, areas.persistentOperands.base(), i32(o.panelsAt)), full);
}

void ProducedOperands::issueNextInstance(const TmaOperand &operand) {
  const ProducedOperand &o = consumerIssued[operand.issue];
  Value turn = tileLoop.turn;
  Value next = arith::AddIOp::create(b, loc, turn, i32(1));
  Value issue = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, isThreadZero(), operand.useTma),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, tileLoop.turns));
  ifThen(issue, [&] {
    waitForUse(operandRing(o.barrierAt), operand.empty, turn);
    SmallVector<Value> coords;
    const size_t numCoords = tile::LoadOp(o.load).getOffsets().size() + o.plan.outerValues.size();
    for (int64_t i = 0; i < static_cast<int64_t>(numCoords); ++i)
      coords.push_back(LLVM::LoadOp::create(b, loc, b.getI32Type(), coordSlot(o, i)));
    copyOperandAt(o, coords, operand.barrier);
  });
}

} // namespace flare::tgpu::lowering
