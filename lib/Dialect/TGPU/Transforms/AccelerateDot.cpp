//===- AccelerateDot.cpp - Choose the tensor-core instruction of each dot ===//
//
// tgpu-accelerate-dot: every tile.dot of a tile kernel gets `tgpu.mma`, the instruction family it
// runs on. The choice depends on the target and on how the kernel's warps cover the dot's result
// (flare::tgpu::wgmmaFits), nothing else, so it is made once here and the lowering, which builds
// rings, TMA copies and a producer warpgroup around wgmma dots only, reads it instead of deciding
// again in each of its steps.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/TileDialect.h"
#include "flare/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUACCELERATEDOT
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

namespace {

struct TGPUAccelerateDotPass : public flare::tgpu::impl::TGPUAccelerateDotBase<TGPUAccelerateDotPass> {
  using TGPUAccelerateDotBase::TGPUAccelerateDotBase;

  void runOnOperation() override {
    std::optional<Target> target = Target::get(arch);
    if (!target) {
      getOperation().emitError() << "tgpu-accelerate-dot: unknown architecture '" << arch << "'";
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    bool anyError = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!tile::isKernel(func))
        continue;
      int numWarps = tile::getNumWarps(func);
      func.walk([&](tile::DotOp dot) {
        int64_t m = dot.getA().getType().getDimSize(0), n = dot.getB().getType().getDimSize(1);
        if (dot->hasAttr(TGPUDialect::kMmaAttrName)) {
          anyError |= failed(verifyWgmmaMark(dot, m, n, numWarps, target->hasWgmma, arch));
          return;
        }
        bool fits = target->hasWgmma && wgmmaFits(m, n, numWarps);
        dot->setAttr(TGPUDialect::kMmaAttrName,
                     MmaEngineAttr::get(ctx, fits ? MmaEngine::Wgmma : MmaEngine::MmaSync));
      });
    }
    if (anyError)
      signalPassFailure();
  }
};

} // namespace
