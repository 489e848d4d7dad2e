//===- KernelResources.h - What one kernel has to run with -----*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. The resources of the kernel being lowered, as its target and its
// #tile.schedule grant them: its warps (and whether a producer warpgroup runs beside them), the
// shared memory a CTA may use and the areas the lowering places in it, the tensor-core and copy
// machinery the target has (wgmma, TMA and whether launches whose tensor maps do not encode need a
// fallback, grid dependencies), and the CTA's named barriers: which number belongs to whom, and the
// barrier of the kernel's own warps. KernelLowering.h derives from it.
//
// Named barriers (barrier 0 is the CTA's __syncthreads):
//   1, 2  the MMA turns of two consumer warpgroups (ping-pong; MachineBuilder's giveFirstTurn)
//   3     the consumers' own barrier when a producer warpgroup runs (barrier() below)
//   4     the producer's ring barriers are initialised (the consumers wait on it once)
//   5, 6  one consumer warpgroup each (its own staging of stores and reduces)
//   7     the producer warpgroup's own threads
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_KERNELRESOURCES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_KERNELRESOURCES_H

#include "SharedAreas.h"
#include "TileRegisters.h"
#include "flare/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace flare::tgpu::lowering {

class KernelResources : public TileRegisters {
protected:
  KernelResources(func::FuncOp func, int64_t maxSharedBytes, bool wgmma, bool pingPong, bool tma, bool tmaFallback,
                  bool gridDependencies)
      : TileRegisters(func), numWarps(tile::getNumWarps(func)), maxSharedBytes(maxSharedBytes), wgmma(wgmma),
        pingPongEnabled(pingPong), tmaEnabled(tma), tmaFallback(tmaFallback), gridDependencies(gridDependencies) {}

  int numWarps;
  int64_t maxSharedBytes;
  bool wgmma; // some dot is marked #tgpu.mma<wgmma> (tgpu-accelerate-dot): the wgmma machinery is built
  bool pingPongEnabled; // two warpgroups take turns issuing the MMAs of a streamed loop
  bool tmaEnabled;      // the target has TMA and `tma`: views the host can describe are copied by TMA
  bool tmaFallback;     // with TMA: also the element-wise copies of launches whose maps do not encode
  bool gridDependencies; // the target has griddepcontrol: tile.wait_prior_grids and allow_dependent_launch lower
  /// With `#tile.schedule<producer_warpgroup = true>` (and wgmma and TMA): warps numWarps ..
  /// numWarps + 3 branch off at the start of the kernel and issue the copies of the streamed loops
  /// (ProducerWarpgroup.cpp); the kernel's own warps only wait for and release the stages.
  bool producerMode = false;

  SharedAreas areas; // the kernel's shared memory: scratch, operands, rings, ... (SharedAreas.h)

  static constexpr int kConsumerBarrier = 3;  // the consumers, beside a producer warpgroup
  static constexpr int kRingReady = 4;        // the producer's ring barriers are initialised
  static constexpr int kWarpgroupBarrier = 5; // 5 and 6: one consumer warpgroup each
  static constexpr int kProducerBarrier = 7;  // the producer warpgroup's own threads

  /// A barrier of the kernel's own warps: the whole CTA, or with a producer warpgroup named barrier
  /// kConsumerBarrier over the other warps (the producer never reaches it).
  Value barrier() {
    ++barriersEmitted;
    if (producerMode)
      NamedBarrierSyncOp::create(b, loc, i32(kConsumerBarrier), i32(numWarps * kWarpSize));
    else
      gpu::BarrierOp::create(b, loc);
    return Value();
  }
  int barriersEmitted = 0; // CTA-wide barriers so far (a streamed loop's ping-pong needs none in its body)
  /// The TMA operands' mbarriers, 8 bytes each, have an area of their own after the persistent
  /// operands (beside the 1024-byte aligned panels they would cost an alignment gap each).
  /// The offset `bytes` into that area (i32), and the shared pointer to it.
  Value operandAreaOffset(int64_t bytes) {
    return arith::AddIOp::create(b, loc, areas.operandBarriers.base(), i32(bytes));
  }
  Value operandAreaPtr(int64_t bytes) {
    return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), b.getI8Type(), smemBase,
                               ValueRange{operandAreaOffset(bytes)});
  }
  /// Shared scratch of at least `bytes` for the op being lowered.
  void needShared(int64_t bytes) { areas.scratch.grow(bytes, loc); }
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_KERNELRESOURCES_H
