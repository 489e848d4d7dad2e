//===- KernelLowering.cpp - KernelLowering's shared helpers ---------------===//
//
// The larger helpers of KernelLowering.h that every part of the lowering uses: the operand area of
// shared memory, the per-instance scope of a persistent kernel and the operand ring of streamed
// loops.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

void KernelLowering::inInstanceScope(Value turn, llvm::function_ref<void()> body) {
  inInstanceScope(instanceAt(turn), body);
}

void KernelLowering::inInstanceScope(const TileSchedule::Instance &other, llvm::function_ref<void()> body) {
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

BarrierRing KernelLowering::operandRing(int64_t barrierAt) {
  return {operandAreaOffset(barrierAt), 1};
}

} // namespace flare::tgpu::lowering
