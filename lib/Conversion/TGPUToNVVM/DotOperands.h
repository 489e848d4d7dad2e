//===- DotOperands.h - Dot operands that wait in shared memory -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. Where a dot's operands wait when their registers are not in the
// layout its MMAs read: a conversion feeding a dot stores its source's registers to shared memory
// once ("lazy" tiles, in the operands area, or for a loop-invariant operand converted before the
// dot's loop in the persistent-operands area) and the dot loads each fragment just before its mma,
// so that a whole B tile never sits in registers; a conversion feeding only wgmma dots is not lowered
// at all (the dot stores the source straight into its own shared-memory layout). KernelLowering.h
// derives from it.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_DOTOPERANDS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_DOTOPERANDS_H

#include "TileArithmetic.h"

namespace flare::tgpu::lowering {

class DotOperands : public TileArithmetic {
protected:
  using TileArithmetic::TileArithmetic;

  // Dot operands that need shared memory stay there until the dot loads each fragment just before
  // its mma ("lazy" tiles), so that a whole B tile never sits in registers. They live in the
  // operands area (areas.operands), at a per-tile offset: lazyCursor is the end of those in use.
  DenseMap<Value, LazyTile> lazyTiles;
  int64_t lazyCursor = 0;
  void growLazy() { areas.operands.grow(lazyCursor, loc); }
  int pendingLazy = 0;

  /// A conversion whose one use is a dot's A or B operand in its block (or, for mma.sync, a
  /// loop-invariant operand converted before the dot's loop) and that is no register permutation.
  bool isLazyDotOperand(ConvertLayoutOp conv) {
    if (!conv->hasOneUse())
      return false;
    auto dot = dyn_cast<tile::DotOp>(*conv->getUsers().begin());
    if (!dot || dot.getC() == conv.getResult())
      return false;
    // Same block, or (mma.sync only) a loop-invariant operand converted before the dot's loop.
    if (dot->getBlock() != conv->getBlock() &&
        (!isPersistentDotOperand(conv, dot) || runsOnWgmma(dot)))
      return false;
    return !layoutOf(conv.getResult()).registerPermutationFrom(layoutOf(conv.getSrc()));
  }
  /// A conversion whose every use is the A or B operand of a wgmma dot (in this block or a nested one).
  bool feedsOnlyWgmma(ConvertLayoutOp conv) {
    if (!wgmma || conv->use_empty())
      return false;
    return llvm::all_of(conv->getUses(), [&](OpOperand &use) {
      auto dot = dyn_cast<tile::DotOp>(use.getOwner());
      return dot && use.getOperandNumber() < 2 && runsOnWgmma(dot);
    });
  }
  /// A conversion in an enclosing block of its dot: computed once, read on every iteration, so its
  /// shared memory is never reused ("persistent" lazy tiles, in areas.persistentOperands).
  static bool isPersistentDotOperand(ConvertLayoutOp conv, Operation *dot) {
    return dot->getBlock() != conv->getBlock() && conv->getBlock()->findAncestorOpInBlock(*dot);
  }
  /// Stores the conversion's source to its area (see above) behind a barrier: its registers are read
  /// by lazyRegister at the dot.
  void lowerLazyConvert(ConvertLayoutOp conv);
  /// Operands of wgmma dots that reach them through a conversion: the dot stores the conversion's
  /// source registers straight into its shared-memory layout (no register shuffle at all).
  DenseMap<Value, Value> wgmmaSources;
  /// Register `reg` of a lazy tile, loaded from shared memory on its first use in the dot's block.
  Value lazyRegister(Value v, int reg);
  Value dotRegister(Value v, int reg) { return lazyTiles.count(v) ? lazyRegister(v, reg) : regs[v][reg]; }

  // --- wgmma A operands read from registers (LowerDot.cpp) ---
  /// A operand registers that already are in wgmma's register-fragment layout (the accumulator
  /// layout of a preceding dot, as for P in attention): the dot reads A from registers.
  bool isRegisterA(Value aTile, int64_t m, int64_t k, int64_t n);
  /// Whether an [m, k] operand's fragments (LinearLayout::mmaOperandA(m, k, n, numWarps)) can be held
  /// (up to 128 deep: 64 registers a thread at 128 x 128 on two warpgroups) and read from 128-byte
  /// swizzled panels with one base per 16-byte chunk (see loadRegisterA).
  bool registerAFits(int64_t m, int64_t k, int64_t n);
  /// Reads the swizzled panels at `base` (an [m, k] K-major operand, byte offset from smemBase) into
  /// those fragments, in their register order: 32-bit reads from 8 per-thread bases.
  SmallVector<Value> loadRegisterA(Value base, int64_t m, int64_t k, int64_t n, Type elem);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_DOTOPERANDS_H
