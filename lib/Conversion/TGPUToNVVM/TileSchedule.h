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
// convert-tgpu-to-nvvm emits the schedule as ops, `tgpu.tile_schedule` before the tile loop (per CTA:
// the turns it takes and the values every turn reads), `tgpu.tile_split` after it for a split range
// (the stream-K cut points) and `tgpu.tile_instance` per turn (the consumers', a producer
// warpgroup's and the prefetch of the next instance's); the scalar IR here is what
// convert-tgpu-machine-to-nvvm expands them into (expandTileSchedules): `begin`, `beginSplit`,
// `instance`. `tgpu-test-tile-schedule` folds it for constant grids and checks that every instance
// (and every step of a split one) is run exactly once.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TILESCHEDULE_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TILESCHEDULE_H

#include "mlir/IR/Builders.h"

#include <array>

namespace flare::tgpu::lowering {
using namespace mlir;

struct TileSchedule {
  // --- What the kernel says (set before begin) --------------------------------------------------
  std::array<Value, 3> grid; // i32: the instances' grid (the hidden parameters the program ids index)
  bool pairs = true;         // #tile.schedule<pair_instances = ...>: chunks of two where they fit

  // --- Per CTA (begin) ------------------------------------------------------------------------------
  Value ctas, cta, total, shift; // i32: CTAs of the launch, this one, instances, log2 of the chunk size
  Value turns;                   // i32: the turns this CTA takes (set by begin, then by beginSplit)
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
  Value begin(OpBuilder &b, Location loc, Value ctas, Value cta);
  /// After begin, with a split range of `steps` (i32) steps per instance: emits the stream-K cut
  /// points and returns the turns (i32), which replace begin's (those stand where the launch does
  /// not split).
  Value beginSplit(OpBuilder &b, Location loc, Value steps);
  /// Emits what turn `turn` (i32, 0 <= turn < the turns begin returned) of this CTA runs.
  Instance instance(OpBuilder &b, Location loc, Value turn) const;
  /// The number of instances of `grid` (i32).
  static Value totalOf(OpBuilder &b, Location loc, const std::array<Value, 3> &grid);
  /// The program ids of instance `index` (i32) of `grid`, x fastest.
  static std::array<Value, 3> pidsOf(OpBuilder &b, Location loc, const std::array<Value, 3> &grid, Value index);
  /// A schedule of instances taken one by one from a counter (tgpu.tile_take): the index of the
  /// instance this CTA takes at `turn`, and the counters' reset by the last CTA past the end.
  static Value take(OpBuilder &b, Location loc, Value counters, const std::array<Value, 3> &grid, Value turn);
};

/// Expands every tgpu.tile_schedule under `root` into its per-CTA values (at the op, from the
/// launch's grid and block ids), every tgpu.tile_instance into one turn's and every tgpu.tile_take
/// into its counter's arithmetic (convert-tgpu-machine-to-nvvm).
/// Fails, with the error at the op, on an instance of a schedule no tgpu.tile_schedule made.
LogicalResult expandTileSchedules(Operation *root);

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TILESCHEDULE_H
