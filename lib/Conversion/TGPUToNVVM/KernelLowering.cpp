//===- KernelLowering.cpp - KernelLowering's shared helpers ---------------===//
//
// The larger helpers of KernelLowering.h: a produced operand released as soon as its fragments
// were read.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

void KernelLowering::releaseAtRead(Value operand, TmaOperand &tma) {
  // Every lane of the warp holds its fragments: lane 0 releases the buffer for the producer's copy
  // of the next instance's block, instead of the release after the instance's last product.
  NVVM::SyncWarpOp::create(b, loc, i32(-1));
  arriveFromLane0(tma.empty);
  earlyReleases.erase(operand);
  for (auto &entry : releaseAfter)
    llvm::erase(entry.second, operand);
}

} // namespace flare::tgpu::lowering
