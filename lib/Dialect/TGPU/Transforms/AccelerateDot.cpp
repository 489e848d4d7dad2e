//===- AccelerateDot.cpp - Choose the tensor-core instruction of each dot ===//
//
// tgpu-accelerate-dot: every tile.dot of a tile kernel gets `tgpu.mma`, the instruction family it
// runs on. The choice depends on the target and on how the kernel's warps cover the dot's result
// (flare::tgpu::wgmmaFits), nothing else, so it is made once here and the lowering, which builds
// rings, TMA copies and a producer warpgroup around wgmma dots only, reads it instead of deciding
// again in each of its steps.
//
// It also places the descriptors of resident A operands. A wgmma dot whose A is defined outside its
// loop reads the same shared memory on every iteration: its descriptors are loop-invariant, and LICM
// would hoist every K step's 64-bit descriptor out of the loop, two registers each held across it.
// Where one loop holds two or more such dots (the backward's S^T = K Q^T and dP^T = V dO^T, or its dQ
// kernel's Q and dO) that is 32 to 64 registers, which spilled up to 240 bytes: those dots get
// `tgpu.descriptors_at_dot` and the lowering makes their descriptors at the dot (one 64-bit add per K
// step), measured 0-12% faster. With one such dot (the forward's Q, at most 32 registers) hoisting
// measured up to 4% faster, so it stays hoisted (bench/NOTES.md b15).
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/TileDialect.h"
#include "flare/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUACCELERATEDOT
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

namespace {

/// Marks `tgpu.descriptors_at_dot` on the wgmma dots with a resident A of every loop of `func` that
/// holds two or more of them (directly: a nested loop counts for itself).
void placeResidentDescriptors(func::FuncOp func) {
  func.walk([&](scf::ForOp loop) {
    SmallVector<tile::DotOp> resident;
    loop.getBody()->walk([&](tile::DotOp dot) {
      if (runsOnWgmma(dot) && dot->getParentOfType<scf::ForOp>() == loop && loop.isDefinedOutsideOfLoop(dot.getA()))
        resident.push_back(dot);
    });
    if (resident.size() < 2)
      return;
    for (tile::DotOp dot : resident)
      dot->setAttr(TGPUDialect::kDescriptorsAtDotAttrName, UnitAttr::get(dot.getContext()));
  });
}

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
      placeResidentDescriptors(func);
    }
    if (anyError)
      signalPassFailure();
  }
};

} // namespace
