//===- ProducerWarpgroup.h - A warpgroup that only issues copies -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. With `#tile.schedule<producer_warpgroup = true>` the kernel runs
// one more warpgroup than its layouts use, which branches off at the start and issues the copies
// of the streamed loops the walk recorded (producerLoops) and of the produced operands (Q before an
// instance's loops, the last V block after them), as far ahead as the consumers' releases let it
// (ProducerWarpgroup.cpp has the protocol). The walk records; this layer emits the branch at the
// walk's end, lowering what it needs of the kernel's top level again there (TopLevelValues.h),
// issuing the stages through RingStages.h and the operands' copies through ProducedOperands.h.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_PRODUCERWARPGROUP_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_PRODUCERWARPGROUP_H

#include "ProducedOperands.h"

namespace flare::tgpu::lowering {

class ProducerWarpgroup : public ProducedOperands {
protected:
  using ProducedOperands::ProducedOperands;

  // The copies of the streamed loops recorded in producerLoops, emitted at the end of the walk
  // (emitProducer); producerMode (KernelResources.h) says whether the kernel has the warpgroup.
  Operation *producerExit = nullptr; // the producer region's tgpu.warp_exit: its copies go before it
  SmallVector<Operation *> producerOnlyOps; // the tgpu.warp_specialize, removed when unused
  SmallVector<ProducerLoop> producerLoops;
  /// #tile.schedule<operands_after_first_stage = true>: the producer copies an instance's operands
  /// read before its loops after the first stage of its first loop.
  bool operandsAfterFirstStage = false;

  /// computableFromProgramIds (Pipelining.h): the producer can compute `v` (a scalar or view of the
  /// kernel's top level) from the kernel's arguments and program ids alone (so `v` is also the same
  /// for every thread of the CTA).
  bool producerCanCompute(Value v);
  DenseMap<Value, bool> producerComputable;
  /// The producer issues the copies of `loop`: the kernel has one and the loop is marked
  /// tgpu.producer_issued (tgpu-warp-specialize: top-level, bounds and load offsets it can compute,
  /// every block by TMA).
  bool producerCanIssue(scf::ForOp loop);
  /// Everything the producer computes to issue `loop`'s copies: bounds, views, the offsets' leaves.
  static SmallVector<Value> producerInputs(scf::ForOp loop, ArrayRef<Stream> streams);
  /// The kernel's start: the producer's branch and both warpgroups' register budgets.
  void beginProducer();
  /// The producer's copy loops, emitted into its branch; the branch goes away when no loop needs it.
  LogicalResult emitProducer();
  /// The producer's copies of this instance's produced operands (`afterLoops`: the B operands),
  /// each once the consumers released the previous instance's (turn: the tile loop's iteration).
  void issueProducedOperands(bool afterLoops, Value turn, Value isFirstThread);
  /// The consumers wait once for the barriers the producer initialises (named barrier kRingReady):
  /// here, or before the tile loop of a persistent kernel.
  void waitForProducerInit();
  bool producerInitWaited = false;
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_PRODUCERWARPGROUP_H
