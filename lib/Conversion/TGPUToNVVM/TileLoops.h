//===- TileLoops.h - A persistent kernel's loop over program instances -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. A persistent kernel (#tile.schedule<persistent = true>) runs the
// program instances of a grid given in hidden parameters in a loop on the CTAs the device fits: in
// the order of a tgpu.tile_schedule (chunks of two instances, or one per turn; TileSchedule.h), with
// a tile.split_range in stream-K pieces whose partial state a piece hands to the CTA that began its
// instance through a workspace slot, or with #tile.schedule<dynamic_instances = true> one instance
// at a time from a shared counter, which the producer warpgroup's thread 0 takes and publishes to
// every thread through a two-slot ring in shared memory. This layer owns that loop, the instance it
// runs and the hand-overs; what the body of an instance lowers (and what it copies ahead for the
// next one) is the walk's (KernelLowering); TopLevelValues.h, the layer above, hands in what only
// the walk can lower (the split range's step count, an instance's exit conditions).
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TILELOOPS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TILELOOPS_H

#include "DotPipelines.h"
#include "TileSchedule.h"

#include <array>

namespace flare::tgpu::lowering {

/// A persistent kernel's loop over the instances its CTA runs: an scf.for over turns, or an
/// scf.while over the instances taken from a shared counter (#tile.schedule<dynamic_instances>).
struct TileLoop {
  Operation *op = nullptr;
  Block *body = nullptr;
  Value turn;    // i32: the CTA's turn, from 0
  Value carried; // i32: the ring index carried from one instance to the next
  Value turns;   // i32: the turns of the CTA (null where instances are taken one by one)
  explicit operator bool() const { return op != nullptr; }
};

class TileLoops : public DotPipelines {
protected:
  using DotPipelines::DotPipelines;

  /// The kernel's schedule is persistent: the body runs once per instance of instanceGrid.
  bool persistent = false;
  std::array<Value, 3> instanceGrid; // i32 hidden parameters: the grid the body's program ids index
  Value tileSchedule;                // the !tgpu.tile_schedule of the tile loop being built
  TileSchedule::Instance instance;   // the instance being run: the body's program ids (and piece)
  TileLoop tileLoop;                 // the consumers' loop over instances
  /// The consumers set up shared state of their own per instance (a ring they initialise, operands
  /// they store or copy, lazy dot operands): the instance's last barrier must stay.
  bool consumersSetUpState = false;

  /// The hidden parameters of a persistent kernel (the grid; the workspace of split instances or of
  /// the shared counter) and its facts for the launcher, before its tile loop opens. `exits`: the
  /// kernel's top-level tile.exit_if ops, which only instances taken from the counter can honour.
  LogicalResult beginPersistent(tile::ScheduleAttr schedule, ArrayRef<tile::ExitIfOp> exits);
  /// What `turn` of tileSchedule runs (a tgpu.tile_instance).
  TileSchedule::Instance instanceAt(Value turn);
  /// Opens a loop over this CTA's instances (one i32 iter_arg: the carried ring index, from 0), sets
  /// `instance` and leaves the builder in its body: an scf.for over the turns of its TileSchedule
  /// (`splitSteps` lowers the split range's step count where there is one), or with dynamic
  /// instances an scf.while over the instances the producer warpgroup takes (`producer`: the
  /// producer's loop, whose thread 0 takes them, skipping those for which `exits` holds; null when
  /// the kernel has no exit conditions).
  TileLoop openTileLoop(bool producer, llvm::function_ref<Value()> splitSteps,
                        llvm::function_ref<Value(Value)> exits);
  /// Closes a tile loop with `carried` as the next turn's ring index.
  void yieldTileLoop(const TileLoop &loop, Value carried);

  // --- Instances from a shared counter (#tile.schedule<dynamic_instances = true>) -----------------
  /// The producer's thread 0 takes turn t's instance (the CTA's own index at turn 0, then the next of
  /// the counter at the workspace's first i32, past the grid's first G) and puts it in slot t % 2 of
  /// a two-stage ring in shared memory (its `full` barrier: one arrival; `empty`: every warp of the
  /// CTA, after reading it); every thread reads it from there. The CTA whose producer takes an
  /// instance past the last one as the last of the CTAs (the workspace's second i32 counts them)
  /// sets both counters back to zero for the next launch.
  bool dynamicInstances = false;
  int64_t instanceRingAt = -1; // the ring's offset in the operand barriers' area (barriers, then slots)
  BarrierRing instanceRing();

  // --- Split instances (tile.split_range: stream-K) ------------------------------------------------
  /// With a tile.split_range the tile loop runs single instances, whole ones and then pieces of the
  /// rest (TileSchedule.h); a piece that ends an instance hands its state to the CTA whose range
  /// began it through a slot of the workspace (a hidden parameter: G slots, then G i32 flags).
  tile::SplitRangeOp splitRange;
  Value splitWorkspace;      // !llvm.ptr<1>: split slots, or the shared counter's i32s
  int64_t splitSlotRegs = 0; // f32 registers a consumer thread stores in a slot
  /// tile.split_store / tile.split_load: each consumer thread's registers of `tiles` to or from the
  /// slot (coalesced: register r of every thread, then r + 1), behind or after the slot's flag.
  LogicalResult lowerSplitState(Operation *op, ValueRange tiles, bool store);

private:
  /// The shared address of the instance ring's slot `stage` (after its four barriers).
  Value instanceSlot(const BarrierRing &ring, Value stage);
  /// Thread 0 of the producer: takes the instance of `turn` and publishes it in its slot; instances
  /// for which `exits` holds are skipped: it takes the next.
  void takeInstance(Value turn, llvm::function_ref<Value(Value)> exits);
  /// Every thread: waits for the instance of `turn`, reads it, and releases its slot (per warp).
  Value readInstance(Value turn);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TILELOOPS_H
