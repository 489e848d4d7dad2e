//===- KernelLowering.h - Per-thread lowering of one tile kernel -*- C++ -*-===//
//
// Private to the convert-tgpu-to-nvvm pass: the KernelLowering walk (TGPUToNVVM.cpp), its streamed
// loops (StreamedLoop.cpp) and its tensor-core dots (LowerDot.cpp). See TGPUToNVVM.cpp for the outline;
// the records it keeps are in LoweringPlans.h, the builders and protocol phrases it shares with the
// rest of the lowering in MachineBuilder.h, how it issues tensor-core MMAs in TensorCores.h, the
// values it has lowered (scalars, tiles' registers, views, thread coordinates) in TileRegisters.h,
// the kernel's warps, shared memory, machinery and named barriers in KernelResources.h, reductions,
// element-wise ops and layout conversions register by register in TileArithmetic.h, dot operands
// that wait in shared memory in DotOperands.h, the copies of a view's blocks (TMA,
// cp.async, element by element) and predicated loads in BlockCopies.h, the pipelined K loops of
// matmul dots in DotPipelines.h, a persistent kernel's loop over program instances in TileLoops.h,
// the top-level values it lowers again elsewhere (the producer's branch, another instance) through
// its lowerOp in TopLevelValues.h, the copies of a ring's stage in RingStages.h, the operands a
// persistent kernel copies once per instance in ProducedOperands.h, the producer warpgroup's
// branch in ProducerWarpgroup.h, the waits for dots in flight and the releases after them in
// DotReleases.h, its stores and sums of output blocks in OutputStores.h, and the operands copied
// by TMA once at the kernel's top level in TmaOperands.h.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_KERNELLOWERING_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_KERNELLOWERING_H

#include "LoweringPlans.h"
#include "HiddenParams.h"
#include "SharedAreas.h"
#include "TmaOperands.h"
#include "flare/Compiler/Compiler.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <functional>
#include <optional>

namespace flare::tgpu::lowering {
using namespace mlir;

class KernelLowering : TmaOperands {
public:
  KernelLowering(func::FuncOp func, gpu::GPUModuleOp module, int64_t maxSharedBytes, bool wgmma, bool pingPong,
                 bool tma, bool tmaFallback, bool gridDependencies)
      : TmaOperands(func, maxSharedBytes, wgmma, pingPong, tma, tmaFallback, gridDependencies), module(module) {}

  LogicalResult run();
private:
  gpu::GPUModuleOp module;

  LogicalResult lowerDotWgmma(tile::DotOp op);

  // --- the walk -----------------------------------------------------------------------------------
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op) override;
  LogicalResult lowerDot(tile::DotOp op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerForGeneric(scf::ForOp op);

  // --- Streamed and persistent wgmma operands (StreamedLoop.cpp) -----------------------------------
  /// Dot operands already in shared memory (streamed or stored before their loop): the dot reads them
  /// there instead of storing its registers.
  DenseMap<Value, SmemOperand> smemOperands;
  /// #tile.schedule<invariant_a_in_registers = true>: A operands copied by TMA (Q, by the copy's value, which is what
  /// the dots' wgmmaSources lead to) and read into wgmma's register fragments before the loops
  /// (StreamedLoop.cpp), with the block they were read in.
  DenseMap<Value, std::pair<SmallVector<Value>, Block *>> registerAOperands;
  /// The streams of a loop marked #tgpu.pipeline<streamed>: its loads marked tgpu.streamed whose views
  /// are lowered (empty for any other loop).
  SmallVector<Stream> streamsOf(scf::ForOp op);
  /// Dots of `op`'s body whose A operand is carried and enters the loop as zeros (nothing to
  /// multiply in the first iteration) and whose accumulator is carried too.
  llvm::SmallPtrSet<Operation *, 2> dotsWithZeroFirstA(scf::ForOp op);
  /// The ring's set-up and first copies go before `prologueAt` (ahead of the invariant operands'
  /// stores), the loop at the builder's insertion point.
  LogicalResult lowerStreamedLoop(scf::ForOp op, MutableArrayRef<Stream> streams, Operation *prologueAt);
  /// Shared memory that `op`'s body will take once its ring is placed (TMA reduce staging and the
  /// wgmma B operands it stores), so that the ring leaves room for it.
  int64_t bytesStagedByBody(scf::ForOp op);
  /// The streamed loop right after `op` in its block (only pure scalar ops between them) when it can
  /// continue `op`'s ring: its streams fill stages of the same layout and its bounds and first
  /// offsets are known before `op`. Emits its tensor-map reads or alignment check at the builder's
  /// insertion point (before `op`).
  std::optional<StageCopies> matchRingContinuation(scf::ForOp op, const StreamRing &ring,
                                                   ArrayRef<Stream> streams);
  DenseMap<Operation *, RingContinuation> ringContinuations;

  // --- Persistent kernels (#tile.schedule<persistent = true>, TGPUToNVVM.cpp) ---------------------------------------
  /// The body runs in the tile loop of TileLoops.h. The consumers and the producer warpgroup walk
  /// the same sequence. The kernel's first ring (initialised once by the producer) numbers its ring
  /// index on from one instance to the next, so that the producer copies the next instance's first
  /// blocks while the consumers finish this one; everything else the body sets up is set up per
  /// instance.
  // #tile.schedule<prefetch_next_instance = true>: the consumers' ring's first copies of the next instance issued after
  // this instance's loops (crossInstanceRing)
  bool prefetchNextInstance = false;
  // #tile.schedule<invariant_a_in_registers = true>: TMA-copied A operands of the loops' dots (Q) read into register
  // fragments once per instance (registerAOperands), released then where the producer copies them
  bool invariantAInRegisters = false;
  Value tileRingNext;                // ring index after the carried ring's last loop of the instance
  /// A persistent kernel whose consumers fill the ring by TMA: after the instance's last loop thread
  /// 0 issues the next instance's first copies into stage 0, whose barriers it initialises afresh
  /// for them; the next instance initialises the other stages' (StreamedLoop.cpp).
  /// i1 in the instance: this instance's first copies were issued by the one before (null: no such ring).
  Value crossInstanceFirst;
  /// The instance's loops on that ring, in order, with their streams.
  SmallVector<std::pair<scf::ForOp, SmallVector<Stream>>> crossInstanceLoops;
  /// Whether `op`, the instance's first streamed loop, starts such a ring (fills crossInstanceLoops).
  bool crossInstanceRing(scf::ForOp op, ArrayRef<Stream> streams, const StreamRing &ring);
  /// Thread 0 issues the next instance's first copies (those of its first loop that runs) into stage
  /// 0, when there is a next instance, once this instance's last use of the stage (`uses`: the ring
  /// indices this instance used) is released; their bounds and blocks lowered anew for its program ids.
  void issueNextInstanceFirst(const StreamRing &ring, Value uses);
  /// The MMA turns (ping-pong) of the instance's loops: given before the tile loop and taken back
  /// after it instead of around every loop (tagged with kTurnAttrName until endTileLoop).
  static constexpr StringLiteral kTurnAttrName = "flare.turn";
  /// Closes the consumers' tile loop (yielding the ring index) and leaves the builder after it.
  void endTileLoop();

  // --- Stored operands ----------------------------------------------------------------------------
  // (TMA-copied ones: TmaOperands.h; their rings and copies: ProducedOperands.h; the producer
  // warpgroup: ProducerWarpgroup.h; their releases and the waits for dots in flight: DotReleases.h)
  /// Stores the register operands of the loop's wgmma dots that are defined outside the loop (Q of an
  /// attention loop) into shared memory once, before the loop.
  SmallVector<Value> storeInvariantOperands(scf::ForOp op);
  DenseMap<Value, StoredOperand> storedOperands;
  bool inStreamedLoop = false;
  DenseSet<Operation *> streamedOps;    // loads, transposes and conversions a streamed loop replaced
  SmallVector<Operation *> pingPongOps; // the named-barrier turns of the streamed loop being lowered
  LogicalResult lowerIf(scf::IfOp op);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_KERNELLOWERING_H
