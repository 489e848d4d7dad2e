//===- ProducedOperands.h - Operands a persistent kernel copies once per instance -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. In a persistent kernel the top-level TMA operands of an
// instance (Q before its loops, the last V block after them) sit in panels of their own behind a
// one-stage ring (`full`, `empty`) whose ring index is the instance's turn: the next instance's
// block is copied as soon as every warp has released this one's. The producer warpgroup copies them
// where there is one (ProducerWarpgroup.h: issueProducedOperands); without one the consumers' thread
// 0 does (consumer-issued operands), after the block's last reader, at coordinates it computed at
// the instance's start and kept in shared memory. What the walk records of each (ProducedOperand,
// TmaOperand) is in LoweringPlans.h; this layer lowers their rings, coordinates and copies.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_PRODUCEDOPERANDS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_PRODUCEDOPERANDS_H

#include "RingStages.h"

namespace flare::tgpu::lowering {

class ProducedOperands : public RingStages {
protected:
  using RingStages::RingStages;

  /// The operands the producer warpgroup copies once per instance.
  SmallVector<ProducedOperand, 2> producedOperands;
  /// Produced operands of a persistent kernel without a producer warpgroup: the consumers copy them.
  SmallVector<ProducedOperand, 2> consumerIssued;

  /// A produced operand's `full` / `empty` barriers as a one-stage ring.
  BarrierRing operandRing(int64_t barrierAt);
  /// Lowers what a copy of `o` needs (its view, offsets and the map's outer values) with produceValue.
  void produceOperandScalars(const ProducedOperand &o);
  /// Sets up a consumer-issued operand: before the tile loop its barriers, the first instance's copy
  /// and a CTA barrier; at the instance's start (the builder's insertion point) thread 0 keeps the
  /// next instance's coordinates in shared memory, computed while registers are free.
  void beginConsumerIssued(const ProducedOperand &o);
  /// The TMA coordinates of `o`'s block (row, column, the map's outer dimensions) in the instance the
  /// tile loop runs at `turn`: its scalars lowered anew for that instance's program ids.
  SmallVector<Value> coordsForTurn(const ProducedOperand &o, Value turn);
  /// The copy of `o`'s block at `coords` into its panels, completing `full` (one thread issues it).
  void copyOperandAt(const ProducedOperand &o, ArrayRef<Value> coords, Value full);
  /// Thread 0's slot of the next instance's coordinates: the address of coordinate `i`.
  Value coordSlot(const ProducedOperand &o, int64_t i);
  /// After the last reader of a consumer-issued operand (`operand.issue` indexes consumerIssued):
  /// thread 0 waits until every warp has released this instance's block and copies the next
  /// instance's.
  void issueNextInstance(const TmaOperand &operand);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_PRODUCEDOPERANDS_H
