//===- TmaOperands.h - Dot operands copied once by TMA at the kernel's top level -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. A top-level tile.load whose block only feeds wgmma dots (Q, the
// A operand of the loops' dots; K^T read M-major; the last V block, B of a dot after the loops) is
// not loaded into registers: thread 0 copies it by TMA into 128-byte swizzled panels behind a
// one-stage mbarrier ring (every thread element by element where the maps did not encode), and the
// dots read the panels through descriptors once waitForTmaOperand made them visible. In a persistent
// kernel it is copied once per instance, by the producer warpgroup or by the consumers' thread 0
// (ProducedOperands.h), and released after its last reader (DotReleases.h), which is decided here.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TMAOPERANDS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TMAOPERANDS_H

#include "OutputStores.h"

namespace flare::tgpu::lowering {

class TmaOperands : public OutputStores {
protected:
  using OutputStores::OutputStores;

  /// True when `op` was lowered as a TMA operand (see TmaOperand, tmaOperands); nothing is emitted
  /// otherwise.
  bool loadOperandByTma(tile::LoadOp op);
  /// Makes a TMA operand's block visible to this thread before its loop, unless a wait in an
  /// enclosing block already did.
  void waitForTmaOperand(TmaOperand &operand);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TMAOPERANDS_H
