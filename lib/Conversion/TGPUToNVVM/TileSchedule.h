//===- TileSchedule.h - Which program instances a persistent CTA runs -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. A persistent kernel (#tile.schedule<persistent = true>) runs the
// program instances of a grid given in hidden parameters on the CTAs the device fits, in a loop of
// turns. The schedule says how many turns a CTA takes and which instance (and, with a split range,
// which piece of it) each turn is:
//
//   chunks       CTA c of G takes chunks c, c + G, c + 2G, ... of two consecutive instances (x
//                fastest), or of one when there are fewer than 2G instances or the kernel asks for
//                single ones (#tile.schedule<pair_instances = false>); an odd total leaves the last
//                chunk one instance short.
//   split range  (tile.split_range, stream-K) single instances: D rounds of whole ones (instance
//                turn * G + c), then the remaining T = N - D G instances' T * S steps cut into G
//                equal ranges, range c being CTA c's (D = N / G - 1 when N > G is no multiple of G,
//                S >= kSplitMinSteps and S G < kSplitMaxStepsTimesCtas, flare::splitsLaunch; else
//                D = N / G and the last N - D G instances run whole). A range's first and last
//                instances may be pieces [lo, hi) of the S steps; a piece that ends an instance
//                (lo > 0) hands its state over through slot c, its CTA's, and the piece that begins
//                it (on CTA c - 1) takes it from there: the piece's slot is c when lo > 0, else c + 1.
//
// The schedule is scalar IR, built where the lowering asks for it: `begin` before the tile loop (per
// CTA: the turns it takes and the values every turn reads), `instance` per turn. The consumers and a
// producer warpgroup build the same sequence. `tgpu-test-tile-schedule` folds it for constant grids
// and checks that every instance (and every step of a split one) is run exactly once.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TILESCHEDULE_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TILESCHEDULE_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>

namespace flare::tgpu::lowering {
using namespace mlir;

struct TileSchedule {
  // --- What the kernel says (set before begin) --------------------------------------------------
  std::array<Value, 3> grid; // i32: the instances' grid (the hidden parameters the program ids index)
  bool pairs = true;         // #tile.schedule<pair_instances = ...>: chunks of two where they fit

  // --- Per CTA (begin) ------------------------------------------------------------------------------
  Value ctas, cta, total, shift; // i32: CTAs of the launch, this one, instances, log2 of the chunk size
  struct {
    Value on;                           // i1: this launch splits (null: no split range)
    Value rounds, first, s0, s1, steps; // i32: D, this CTA's first tail instance, its cut points, S
  } split;

  /// One turn's work: the program ids of its instance and, with a split range, its piece of steps
  /// [lo, hi) and the workspace slot of that piece's hand-over (null without a split range).
  struct Instance {
    std::array<Value, 3> pids;
    Value lo, hi, slot;
  };

  /// Emits the per-CTA values for CTA `cta` of `ctas` (i32) and returns the turns it takes (i32).
  /// `splitSteps`, when given (a split range), emits the steps S of each instance where it is needed.
  Value begin(OpBuilder &b, Location loc, Value ctas, Value cta, llvm::function_ref<Value()> splitSteps = nullptr);
  /// Emits what turn `turn` (i32, 0 <= turn < the turns begin returned) of this CTA runs.
  Instance instance(OpBuilder &b, Location loc, Value turn) const;
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TILESCHEDULE_H
