//===- AllocateSharedMemory.cpp - Place the shared-memory areas of kernels ===//
//
// tgpu-allocate-shared-memory: the lowering sizes each area it uses (`tgpu.shared_area`: scratch of
// reductions and conversions, dot operands, the rings of streamed loops, ...); this pass places them.
// Areas follow one another in program order, each at a multiple of its alignment, so the layout is
// the one a reader computes by hand from `flarec --emit=gpu`. The areas' lifetimes overlap today
// (each is one kernel-long region, reused inside by its owner); placing areas of disjoint lifetimes
// at the same offset is this pass's to do, nobody else's.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/MathExtras.h"

#include <string>

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUALLOCATESHAREDMEMORY
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare::tgpu;

namespace {

struct TGPUAllocateSharedMemoryPass
    : public flare::tgpu::impl::TGPUAllocateSharedMemoryBase<TGPUAllocateSharedMemoryPass> {
  using TGPUAllocateSharedMemoryBase::TGPUAllocateSharedMemoryBase;

  /// Places `func`'s areas; false (with the error emitted) when they do not fit.
  bool allocate(gpu::GPUFuncOp func) {
    SmallVector<SharedAreaOp> areas;
    func.walk<WalkOrder::PreOrder>([&](SharedAreaOp area) { areas.push_back(area); });
    SmallVector<int64_t> offsets;
    int64_t end = 0;
    SharedAreaOp largest;
    for (SharedAreaOp area : areas) {
      const int64_t bytes = area.getBytesAttr().getInt();
      end = static_cast<int64_t>(llvm::alignTo(end, area.getAlignmentAttr().getInt()));
      offsets.push_back(end);
      end += bytes;
      if (!largest || bytes >= largest.getBytesAttr().getInt()) // ties: the later area
        largest = area;
    }
    const int64_t limit = maxSharedBytes.getValue();
    if (end > limit) {
      // Where the bytes go: each area that holds any, with its offset.
      std::string parts;
      for (auto [area, offset] : llvm::zip(areas, offsets))
        if (int64_t bytes = area.getBytesAttr().getInt())
          parts += (parts.empty() ? "" : ", ") + area.getName().str() + " " + std::to_string(bytes) + " at " +
                   std::to_string(offset);
      emitError(largest.getLoc()) << "kernel '" << func.getName() << "' needs " << end << " bytes of shared memory ("
                          << largest.getBytesAttr().getInt() << " for this op), more than the " << limit
                          << " a CTA may use: use smaller tiles or fewer warps (" << parts << ")";
      return false;
    }
    for (auto [area, offset] : llvm::zip(areas, offsets)) {
      OpBuilder b(area);
      area.getOffset().replaceAllUsesWith(arith::ConstantIntOp::create(b, area.getLoc(), offset, 32).getResult());
      area.erase();
    }
    func->setAttr(kSharedBytesAttrName, IntegerAttr::get(IntegerType::get(func.getContext(), 32), end));
    return true;
  }

  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (func.isKernel())
        ok &= allocate(func);
    });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
