//===- DotReleases.h - Waits for wgmma dots and the releases after them -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. The consumers' side of the dots in flight and of the operands the
// producer (or the kernel's first thread) copies once per instance: a wgmma dot whose operands need
// no stores is committed and left in flight (pendingDots) until an op reads its result, where one
// `wgmma.wait_group` retires it and every older group (waitForDots); a TMA-copied operand (Q, the
// last V block) is released, so that the next instance's copy may land, right after the last product
// that reads it: after a top-level op (releaseAfter), after the wait for a dot of the instance's last
// loop iteration that runs (earlyReleases, releaseAfterDot), or once its fragments are in registers
// (releaseAtRead). The walk (KernelLowering.h) decides where each release goes; this layer emits
// them (releaseAfterOp after each top-level op).
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_DOTRELEASES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_DOTRELEASES_H

#include "ProducerWarpgroup.h"

namespace flare::tgpu::lowering {

class DotReleases : public ProducerWarpgroup {
protected:
  using ProducerWarpgroup::ProducerWarpgroup;

  /// Operands copied by TMA at their load (TmaOperands.h), by the copy's value.
  DenseMap<Value, TmaOperand> tmaOperands;
  /// Releases a produced operand right after its fragments were read (each warp's lane 0, after the
  /// warp's reads), in place of its release after the instance's last product.
  void releaseAtRead(Value operand, TmaOperand &tma);
  /// Top-level ops after which the consumers release produced operands (their last reader).
  DenseMap<Operation *, SmallVector<Value>> releaseAfter;
  /// After the walk lowered the top-level op `op`: releases the produced operands it was the last
  /// reader of (unless a loop's last iteration did), and has the next instance's copy of them issued.
  void releaseAfterOp(Operation *op);
  DenseMap<Value, EarlyRelease> earlyReleases; // by operand
  DenseMap<Value, PendingRelease> releaseAfterDot;
  /// Sets up releaseAfterDot for the loop `op` being lowered (iteration `iv`).
  void prepareEarlyReleases(scf::ForOp op, Value iv);
  /// True when a loop's iterations run (lb < ub), from the bounds already lowered.
  Value loopRuns(scf::ForOp loop);
  /// True when none of early.loops after the j-th runs.
  Value laterLoopsIdle(const EarlyRelease &early, size_t j);
  /// The dots of `loop` whose A operand is `operand` (directly or through a layout conversion).
  static SmallVector<tile::DotOp> dotsReading(scf::ForOp loop, Value operand);

  SmallVector<PendingDot> pendingDots;
  /// Waits for the pending dots up to and including the one producing `v` (all with a null `v`) and
  /// binds their registers.
  void waitForDots(Value v = Value());
  /// The value a pinned wait (pinLastDotWait) branches on, or null where none is near.
  Value pinAnchor();
  /// The last wait of a streamed loop's body without ping-pong stays after the softmax (waitForDots).
  bool pinLastDotWait = false;
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_DOTRELEASES_H
