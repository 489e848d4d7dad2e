//===- KernelLowering.cpp - KernelLowering's shared helpers ---------------===//
//
// The larger helpers of KernelLowering.h that every part of the lowering uses: the operand ring of
// the produced operands.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

BarrierRing KernelLowering::operandRing(int64_t barrierAt) {
  return {operandAreaOffset(barrierAt), 1};
}

} // namespace flare::tgpu::lowering
