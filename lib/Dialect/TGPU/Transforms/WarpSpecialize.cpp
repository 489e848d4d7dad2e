//===- WarpSpecialize.cpp - Choose the loops a producer warpgroup copies for ===//
//
// tgpu-warp-specialize: in a kernel that asks for a producer warpgroup (`#tile.schedule<producer_warpgroup = true> =
// true`, 4 or 8 warps of its own, one CTA per SM), the warpgroup convert-tgpu-to-nvvm adds does
// nothing but issue the TMA copies of streamed loops (ProducerWarpgroup.cpp). It runs apart from the
// consumers, so it must compute each copy from what it can see: the kernel's arguments and program
// ids. The streamed loops (tgpu-pipeline-loops) whose copies it can issue that way get the unit
// attribute `tgpu.producer_issued`: top-level loops whose bounds, views and load offsets derive from
// arguments and program ids, every streamed block of which a tensor map can move (128-byte swizzled
// panels, flare::tgpu::planTensorMap). The consumers copy for the other streamed loops themselves.
// The lowering honours the marks where it copies by TMA (its `tma` option on a target with TMA) and
// leaves the warpgroup out where no loop and no operand needs it. The kernel's `tgpu.warp_roles`
// records the registers each role runs with (a hand-written choice is kept where it fits).
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/Pipelining.h"
#include "flare/Dialect/TGPU/TensorMapPlan.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUWARPSPECIALIZE
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

bool flare::tgpu::asksForProducerWarpgroup(func::FuncOp kernel) {
  // #tile.schedule's verifier holds the producer to 4 or 8 warps and one CTA per SM.
  return tile::getSchedule(kernel).getProducerWarpgroup();
}

WarpRolesAttr flare::tgpu::defaultWarpRoles(MLIRContext *ctx, int numWarps, int64_t producerRegisters) {
  const int64_t consumerThreads = int64_t(numWarps) * 32, producerThreads = 4 * 32;
  const int64_t consumerRegisters =
      std::min<int64_t>(256, (kRegistersPerCTA - producerThreads * producerRegisters) / consumerThreads / 8 * 8);
  return WarpRolesAttr::get(ctx, consumerRegisters, producerRegisters);
}

WarpRolesAttr flare::tgpu::warpRolesOf(func::FuncOp kernel) {
  if (auto roles = kernel->getAttrOfType<WarpRolesAttr>(TGPUDialect::kWarpRolesAttrName))
    return roles;
  const tile::ScheduleAttr schedule = tile::getSchedule(kernel);
  const bool skips = schedule.getPersistent() && schedule.getDynamicInstances() &&
                     !kernel.getBody().front().getOps<tile::ExitIfOp>().empty();
  return defaultWarpRoles(kernel.getContext(), tile::getNumWarps(kernel),
                          skips ? kSkippingProducerRegisters : kProducerRegisters);
}

bool flare::tgpu::producerCanIssueCopies(scf::ForOp loop, func::FuncOp kernel, DenseMap<Value, bool> &memo) {
  if (pipelineOf(loop) != PipelineKind::Streamed || loop->getBlock() != &kernel.getBody().front())
    return false;
  SmallVector<tile::LoadOp> loads;
  for (auto load : loop.getBody()->getOps<tile::LoadOp>()) {
    if (!isStreamed(load))
      continue;
    std::optional<StreamedLoad> stream = matchStreamedLoad(load, loop);
    if (!stream || !stream->swizzled || !planTensorMap(load, kernel))
      return false;
    loads.push_back(load);
  }
  return llvm::all_of(producerInputs(loop, loads),
                      [&](Value v) { return computableFromProgramIds(v, kernel, memo); });
}

namespace {

struct TGPUWarpSpecializePass : public flare::tgpu::impl::TGPUWarpSpecializeBase<TGPUWarpSpecializePass> {
  using TGPUWarpSpecializeBase::TGPUWarpSpecializeBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!tile::isKernel(func) || !asksForProducerWarpgroup(func))
        continue;
      // The two roles' register budgets: a hand-written choice is kept where the CTA's registers
      // hold it.
      WarpRolesAttr roles = warpRolesOf(func);
      const int64_t consumers = tile::getNumWarps(func);
      const int64_t used =
          registersOfRoles(consumers, roles.getConsumerRegisters(), /*producerWarps=*/4, roles.getProducerRegisters());
      if (used > kRegistersPerCTA) {
        func.emitOpError() << "warp roles need " << used << " registers (" << consumers << " consumer warps x "
                           << roles.getConsumerRegisters() << " and 4 producer warps x "
                           << roles.getProducerRegisters() << ", 32 threads each), more than the " << kRegistersPerCTA
                           << " an SM gives one CTA";
        return signalPassFailure();
      }
      func->setAttr(TGPUDialect::kWarpRolesAttrName, roles);
      DenseMap<Value, bool> memo;
      for (auto loop : func.getBody().front().getOps<scf::ForOp>())
        if (producerCanIssueCopies(loop, func, memo))
          loop->setAttr(TGPUDialect::kProducerIssuedAttrName, UnitAttr::get(&getContext()));
    }
  }
};

} // namespace
