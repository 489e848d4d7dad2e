//===- MachineBuilder.h - What the per-thread lowering builds with -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. Every part of the per-thread lowering of a tile kernel builds with
// one builder and location, reads the thread's ids and the shared buffer's base, and speaks the
// machine protocol of the tgpu dialect in the same few phrases: constants, one-thread and predicated
// regions, a ring's barriers and the phases of their waits, the turns of two warpgroups. This is
// that vocabulary, apart from what any one kernel family keeps (KernelLowering.h derives from it):
// a new lowering step takes a MachineBuilder, not the whole walk.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_MACHINEBUILDER_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_MACHINEBUILDER_H

#include "LoweringPlans.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace flare::tgpu::lowering {
using namespace mlir;

class MachineBuilder {
protected:
  explicit MachineBuilder(MLIRContext *context) : b(context) {}

  OpBuilder b;
  Location loc = UnknownLoc::get(b.getContext());
  /// The thread's ids (i32) and the kernel's shared buffer (!llvm.ptr<3>), bound by the lowering of
  /// the kernel's prologue (and anew per instance in a persistent kernel's tile loop).
  Value threadId, laneId, warpId;
  Value smemBase;

  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value i64(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); }
  /// !v for an i1 `v`.
  Value notI1(Value v) { return arith::XOrIOp::create(b, loc, v, arith::ConstantIntOp::create(b, loc, 1, 1)); }
  /// (v & mask) == 0 for an integer `v` of any width: alignment checks of addresses, strides, offsets.
  Value lowBitsClear(Value v, int64_t mask) {
    Value m = arith::ConstantIntOp::create(b, loc, v.getType(), mask);
    Value zero = arith::ConstantIntOp::create(b, loc, v.getType(), 0);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, arith::AndIOp::create(b, loc, v, m), zero);
  }

  /// Row-major index of a coordinate (i32).
  Value linearIndex(ArrayRef<Value> coord, ArrayRef<int64_t> shape) {
    Value idx = i32(0);
    for (size_t d = 0; d < coord.size(); ++d)
      idx = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, idx, i32(shape[d])), coord[d]);
    return idx;
  }

  /// Points the builder at the end of `loop`'s body, without the yield scf.for's builder put there.
  void enterLoopBody(scf::ForOp loop) {
    Block *body = loop.getBody();
    if (!body->empty() && isa<scf::YieldOp>(body->back()))
      body->back().erase();
    b.setInsertionPointToEnd(body);
  }

  /// Makes this thread's generic-proxy shared-memory writes visible to the async proxy (wgmma).
  void fenceAsyncProxy() {
    FenceAsyncSharedOp::create(b, loc);
  }
  /// This thread announces `bytes` more of asynchronous copies (TMA) that complete `barrier`'s phase.
  void expectTx(Value barrier, Value bytes) {
    MBarrierArriveExpectTxOp::create(b, loc, barrier, bytes);
  }
  /// The builder's insertion block is `block` or nested in it (what was emitted into `block` before
  /// dominates the insertion point).
  bool insertingWithin(Block *block) {
    for (Block *at = b.getInsertionBlock(); at; at = at->getParentOp() ? at->getParentOp()->getBlock() : nullptr)
      if (at == block)
        return true;
    return false;
  }
  /// threadId == 0 (i1): the thread that issues a CTA's (or the producer's) one-thread work.
  Value isThreadZero() { return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, threadId, i32(0)); }
  /// `if (cond) { body } [else { elseBody }]` with no results; returns the scf.if.
  scf::IfOp ifThen(Value cond, const std::function<void()> &body, const std::function<void()> &elseBody = {}) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, /*withElseRegion=*/static_cast<bool>(elseBody));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
    if (elseBody) {
      b.setInsertionPointToStart(ifOp.elseBlock());
      elseBody();
    }
    return ifOp;
  }

  /// Lane 0 of each warp (where `cond` holds, when given) arrives on the mbarrier `barrier`.
  void arriveFromLane0(Value barrier, Value cond = Value()) {
    Value lane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, laneId, i32(0));
    ifThen(cond ? arith::AndIOp::create(b, loc, cond, lane0).getResult() : lane0,
           [&] { MBarrierArriveOp::create(b, loc, barrier); });
  }
  /// The MMA turn of two warpgroups (ping-pong, named barrier 1): warpgroup 1 gives warpgroup 0 the
  /// first turn, and warpgroup 0 takes back the last one warpgroup 1 left open.
  scf::IfOp giveFirstTurn() {
    Value isSecond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, warpId, i32(4));
    return ifThen(isSecond, [&] { NamedBarrierArriveOp::create(b, loc, i32(1), i32(2 * 128)); });
  }
  scf::IfOp takeTurnBack() {
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warpId, i32(4));
    return ifThen(isFirst, [&] { NamedBarrierSyncOp::create(b, loc, i32(1), i32(2 * 128)); });
  }

  Value smemAddress(Value index, Type elemType, Value byteOffset = Value()) {
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
    Value base = smemBase;
    if (byteOffset)
      base = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), smemBase, ValueRange{byteOffset});
    return LLVM::GEPOp::create(b, loc, ptrType, elemType, base, ValueRange{index});
  }

  Value ringBarrier(const BarrierRing &ring, Value stage, bool empty) {
    Value r = RingOp::create(b, loc, RingType::get(b.getContext(), ring.stages), smemBase, ring.at);
    return RingBarrierOp::create(b, loc, MBarrierType::get(b.getContext()), r, stage, empty);
  }
  /// Waits for the use-th completion of a barrier of `ring` (the phase parity of use / stages).
  void waitForUse(const BarrierRing &ring, Value barrier, Value use) {
    RingWaitOp::create(b, loc, barrier, use, ring.stages);
  }
  /// Waits until the readers of ring index `use` (when it is >= 0) released `stage` on its `empty`
  /// barrier: the stage may be refilled.
  void waitReleased(const BarrierRing &ring, Value stage, Value use) {
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, use, i32(0)),
           [&] { waitForUse(ring, ringBarrier(ring, stage, true), use); });
  }
  /// Initialises every stage's `full` barrier (expecting `fullCount`) and `empty` barrier (expecting
  /// `emptyCount` warps); with `fence`, visible to the async proxy (TMA) that completes them.
  void initRingBarriers(const BarrierRing &ring, Value fullCount, int emptyCount, bool fence, int fromStage = 0) {
    for (int s = fromStage; s < ring.stages; ++s)
      initStageBarriers(ring, i32(s), fullCount, emptyCount);
    if (fence)
      fenceAsyncProxy();
  }
  /// The `full` and `empty` barriers of one stage (see initRingBarriers).
  void initStageBarriers(const BarrierRing &ring, Value stage, Value fullCount, int emptyCount) {
    MBarrierInitOp::create(b, loc, ringBarrier(ring, stage, false), fullCount);
    MBarrierInitOp::create(b, loc, ringBarrier(ring, stage, true), i32(emptyCount));
  }
  /// Iterations of a loop over [lb, ub) by `step` (0 when ub <= lb).
  Value tripCount(Value lb, Value ub, Value step) {
    Value span = arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, ub, lb), i32(0));
    return arith::DivSIOp::create(b, loc, arith::AddIOp::create(b, loc, span, arith::SubIOp::create(b, loc, step, i32(1))),
                                  step);
  }
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_MACHINEBUILDER_H
